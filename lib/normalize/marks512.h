/* marks512.h - AVX-512 twins of the two per-character loops a long
 * combining run spends its characters in (marks512.c). */
#ifndef SH_MARKS512_H
#define SH_MARKS512_H
#include <stddef.h>
#include <stdint.h>
#include <unicode/utypes.h>
#include "reorder.h"

/* scan.h's marks_run() in blocks: from in[i], while the 64 bytes before
 * stop are 32 two-byte characters or the 48 are 16 three-byte ones, whose
 * entries in bmp are filled and neither inert nor lazy, appends them to
 * u[*pm ..). Returns where it stopped. Without the instructions: returns i. */
size_t sh_marks_utf8_512(const uint32_t *bmp, const uint8_t *in, size_t i, size_t stop, UChar *u,
			 int32_t *pm);
/* reorder.c's plain(), 16 units at a time: from u[*pk], while 16 units
 * before end are BMP characters that the cache holds as decomposing to
 * themselves, copies them to d[n ..) and their classes to cc[n ..); returns
 * the units written in all, *pk where it stopped. Without the instructions:
 * returns n. */
size_t sh_marks_plain512(const sh_reorder_entry *cache, const UChar *u, int32_t *pk, int32_t end,
			 UChar *d, uint8_t *cc, size_t n);
/* Whether this CPU runs them (AVX-512 F, BW and VBMI). Thread safety: safe. */
int sh_marks_have512(void);
#endif
