/* scan.h - the byte scans of normalize.c's input: where a run of non-ASCII
 * bytes ends (a run of ASCII: sh_utf8_ascii_end()), where a slice may end, a
 * code point decoded, and the characters that continue an open segment.
 * Pure functions of the bytes (and of the normalizer's table, for
 * marks_run()). */
#ifndef SH_NORM_SCAN_H
#define SH_NORM_SCAN_H

#include <string.h>
#include <unicode/utf16.h>
#include "../common/internal.h"
#include "mixed.h"
#include "marks512.h"

/* Decodes the code point at in[i] (i < j): valid 2- and 3-byte sequences,
 * the bulk of accented, Cyrillic and CJK text, inline; the rest through
 * sh_utf8_next(). */
static inline size_t decode(const uint8_t *in, size_t j, size_t i, uint32_t *cp)
{
	int bad;
	if (in[i] >= 0xC2 && in[i] < 0xE0 && i + 1 < j && (in[i + 1] & 0xC0) == 0x80) {
		*cp = (uint32_t)(in[i] & 0x1F) << 6 | (in[i + 1] & 0x3F);
		return 2;
	}
	if ((in[i] & 0xF0) == 0xE0 && i + 2 < j && (in[i + 1] & 0xC0) == 0x80 &&
	    (in[i + 2] & 0xC0) == 0x80) {
		uint32_t c = (uint32_t)(in[i] & 0x0F) << 12 | (uint32_t)(in[i + 1] & 0x3F) << 6 |
			     (in[i + 2] & 0x3F);
		if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) {
			*cp = c;
			return 3;
		}
	}
	return sh_utf8_next(in, j, i, cp, &bad);
}

/* The common case of an open segment's characters: two- and three-byte ones
 * whose entry is filled and neither inert nor lazy (combining marks after a
 * letter), appended to u[*pm ..) as the general step of non_ascii_run()
 * would, while they last before stop. Returns where it stopped. */
static inline size_t marks_run(const uint32_t *bmp, const uint8_t *in, size_t i, size_t stop, UChar *u,
			int32_t *pm, int simd)
{
	int32_t m = *pm;

	/* with simd, blocks of 32 by marks512.c's twin while it takes them */
	if (simd)
		i = sh_marks_utf8_512(bmp, in, i, stop, u, &m);
	while (i + 2 <= stop) {
		uint32_t b0 = in[i], b1 = in[i + 1], cp, e;
		size_t w = 2;
		if ((b1 & 0xC0) != 0x80)
			break;
		if (b0 >= 0xC2 && b0 < 0xE0) {
			cp = (b0 & 0x1F) << 6 | (b1 & 0x3F);
		} else if ((b0 & 0xF0) == 0xE0 && i + 3 <= stop && (in[i + 2] & 0xC0) == 0x80) {
			/* a surrogate's entry is 0, and an overlong form below
			 * 0x800 is left to decode() */
			cp = (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (in[i + 2] & 0x3F);
			if (cp < 0x800)
				break;
			w = 3;
		} else {
			break;
		}
		e = bmp[cp];
		if ((e & (SH_KNOWN | SH_INERT | SH_LAZY)) != SH_KNOWN)
			break;
		u[m++] = (UChar)cp;
		i += w;
	}
	*pm = m;
	return i;
}

/* The end of the run of bytes >= 0x80 from i (in[i] is one): the first
 * ASCII byte after it, or len. Eight bytes at a time. */
static inline size_t non_ascii_end(const uint8_t *in, size_t i, size_t len)
{
	for (i++; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, in + i, 8);
		w = ~w & 0x8080808080808080ull;
		if (w) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			w = __builtin_bswap64(w);
#endif
			return i + ((unsigned)__builtin_ctzll(w) >> 3);
		}
	}
	while (i < len && in[i] >= 0x80)
		i++;
	return i;
}

/* Where a slice of a non-ASCII run may end: at most `slice` bytes after i,
 * moved back over at most three continuation bytes, so that no well-formed
 * sequence straddles it (what straddles then is invalid byte by byte). */
static inline size_t slice_end(const uint8_t *in, size_t i, size_t j, size_t slice)
{
	size_t end = j - i > slice ? i + slice : j;

	for (int k = 0; k < 3 && end < j && end > i + 1 && (in[end] & 0xC0) == 0x80; k++)
		end--;
	return end;
}

#endif
