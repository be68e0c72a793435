/* mixed.h - the vector body of normalize.c's runs of ASCII and three-byte
 * characters (mixed.c), and the entries of normalize.c's BMP table that it
 * reads. */
#ifndef SH_MIXED_H
#define SH_MIXED_H
#include <stddef.h>
#include <stdint.h>

/* Entries of normalize.c's n->bmp: class << 24 | output code point, and: */
#define SH_INERT (1u << 30) /* NFKC_Casefold leaves it and its neighbours alone */
#define SH_DROP (1u << 29)  /* a format character: vanishes */
#define SH_KNOWN (1u << 28) /* class and output are set (every code point but surrogates) */
/* Not inert, but with a normalization boundary on both sides: NFKC_Casefold
 * maps it alone, whatever its neighbours (U+FF0C FULLWIDTH COMMA -> ','), so
 * once ICU has given its mapping (normalize.c's resolve()), a mapping of one
 * BMP character or none is kept and the character is then treated as inert. */
#define SH_LAZY (1u << 31)

/* What the body reads and writes: the output arrays of the run (bytes,
 * offsets, classes), the BMP table and the ASCII map (byte -> output byte,
 * ' ' for a separator) of the normalizer. */
typedef struct sh_mixed_out {
	uint8_t *o;
	uint32_t *oo;
	uint8_t *oc;
	const uint32_t *bmp;
	const uint8_t *amap;
} sh_mixed_out;

/* From byte i (a character's start) to at most stop, 64 bytes per step
 * while they are ASCII or three-byte characters with inert entries of class
 * CJK (a three-byte output) or space or punctuation: appends what emit()
 * would under the default rules (punctuation dropped, spaces auto, no repeat
 * rule), with *plen, *pnc and *ppending (a space pending) as the run's state.
 * Stops before any other character, before an ASCII character followed by
 * one (it may compose with it), and at 64 ASCII bytes in a row (ascii_run()'s
 * work); returns where it stopped. Writes up to 64 bytes, 64 offsets and 64
 * classes past the end of the output (room for them is the caller's). Without
 * the instructions: returns i. */
size_t sh_mixed_run512(const sh_mixed_out *m, const uint8_t *in, size_t i, size_t stop,
		       size_t *plen, size_t *pnc, int *ppending);
/* Whether this CPU runs it. Thread safety: safe. */
int sh_mixed_have(void);
#endif
