/* plain.h - normalized UTF-16 into normalize.c's output arrays, for the
 * common case of plain characters (plain.c). */
#ifndef SH_PLAIN_H
#define SH_PLAIN_H
#include <stddef.h>
#include <stdint.h>
#include <unicode/utypes.h>

/* The output arrays of a run (bytes, offsets, classes) with their state
 * (bytes and characters written, the last character), and the BMP table of
 * the normalizer (mixed.h's entries). */
typedef struct sh_plain_out {
	uint8_t *o;
	uint32_t *oo;
	uint8_t *oc;
	const uint32_t *bmp;
	size_t len, n_chars;
	uint32_t last;
} sh_plain_out;

/* From src[k] to at most src[len), while they are plain: BMP characters
 * whose table entry is filled, kept, of class word or CJK, with an output
 * below U+10000; appends each as normalize.c's emit() would with no space
 * pending and no repeat rule (the caller's test): its offset, class and
 * UTF-8, and makes it the last. Returns where it stopped. With simd (and
 * sh_plain_have512()), blocks of sixteen characters of one output width (two
 * or three bytes) go sixteen at a time; the output is the same. The caller
 * has made room for four bytes and one character a unit. */
size_t sh_plain_run(sh_plain_out *p, const UChar *src, size_t k, size_t len, int simd);
/* Whether this CPU runs the blocks of sixteen (AVX-512 F, BW, VBMI).
 * Thread safety: safe. */
int sh_plain_have512(void);
#endif
