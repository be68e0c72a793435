/* ascii.h - the vector bodies of normalize.c's ASCII runs (ascii.c). */
#ifndef SH_ASCII_H
#define SH_ASCII_H
#include <stddef.h>
#include <stdint.h>

/* What the bodies read and write: the output arrays of the run (bytes,
 * offsets, classes), the packing shuffles (mask -> the positions of its set
 * bits, then 0x80), and the config's rules. */
typedef struct sh_ascii_out {
	uint8_t *o;
	uint32_t *oo;
	uint8_t *oc;
	const uint8_t (*pack)[8];
	int drop;        /* punctuation becomes a separator */
	int fold;        /* ASCII letters fold to lower case */
	int keep_spaces; /* a separator after a non-separator is kept */
} sh_ascii_out;

/* From character i to at most stop (all ASCII), 32 (AVX2) or 64 (AVX-512)
 * bytes per step while a whole step fits: appends the kept bytes at *plen
 * and *pnc, carries the last byte in *pprev (' ' after a separator) and
 * returns where it stopped. Without the instructions: returns i. */
size_t sh_ascii_bulk(const sh_ascii_out *n, const uint8_t *in, size_t i, size_t stop,
		     size_t *plen, size_t *pnc, uint8_t *pprev);
size_t sh_ascii_bulk512(const sh_ascii_out *n, const uint8_t *in, size_t i, size_t stop,
			size_t *plen, size_t *pnc, uint8_t *pprev);
/* Whether this CPU runs them. Thread safety: safe. */
int sh_ascii_have_avx2(void);
int sh_ascii_have_vbmi2(void);
#endif
