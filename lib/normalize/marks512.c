/* marks512.c - AVX-512 twins of the two per-character loops a long
 * combining run spends its characters in: scan.h's marks_run() (the UTF-8
 * of an open segment to UTF-16, while its characters continue the segment)
 * (two- and three-byte characters) and reorder.c's plain() (UTF-16 with each
 * unit's class, from reorder.c's
 * cache). Each takes whole blocks while every character of the block is the
 * common case, and leaves any other to its scalar twin, which stays the
 * reference: the same units and classes come out
 * (tests/normalize/test_reorder.c runs the normalizer with the vector paths
 * on and off against ICU alone). */
#include <stddef.h>
#include "../common/internal.h"
#include "mixed.h"
#include "marks512.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_BW __attribute__((target("avx512f,avx512bw,avx512vbmi")))

int sh_marks_have512(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512VBMI);
}

/* Whether the sixteen code points cp (32-bit lanes) continue an open
 * segment: entries filled, neither inert nor lazy (a surrogate's is 0). */
SH_BW static inline int continue16(const uint32_t *bmp, __m512i cp)
{
	const __m512i flags = _mm512_set1_epi32((int)(SH_KNOWN | SH_INERT | SH_LAZY));
	__m512i e = _mm512_i32gather_epi32(cp, (const void *)bmp, 4);

	return !_mm512_cmpneq_epi32_mask(_mm512_and_si512(e, flags), _mm512_set1_epi32((int)SH_KNOWN));
}

/* The 32 two-byte characters of in[0..64) into *cp (16-bit lanes), or 0. */
SH_BW static inline int two_byte32(const uint8_t *in, __m512i *cp)
{
	/* each 16-bit lane: a lead byte low, a continuation byte high */
	__m512i x = _mm512_loadu_si512(in);
	__m512i lead = _mm512_and_si512(x, _mm512_set1_epi16(0xFF)), cont = _mm512_srli_epi16(x, 8);

	if (_mm512_cmplt_epu16_mask(lead, _mm512_set1_epi16(0xC2)) |
	    _mm512_cmpgt_epu16_mask(lead, _mm512_set1_epi16(0xDF)) |
	    _mm512_cmpneq_epi16_mask(_mm512_and_si512(cont, _mm512_set1_epi16(0xC0)),
				     _mm512_set1_epi16(0x80)))
		return 0;
	*cp = _mm512_or_si512(_mm512_slli_epi16(_mm512_and_si512(lead, _mm512_set1_epi16(0x1F)), 6),
			      _mm512_and_si512(cont, _mm512_set1_epi16(0x3F)));
	return 1;
}

/* The 16 three-byte characters of in[0..48) into *cp (32-bit lanes), or 0
 * (an overlong form below U+0800 included). */
SH_BW static inline int three_byte16(const uint8_t *in, __m512i *cp)
{
	/* lane q: bytes 3q, 3q + 1, 3q + 2 of the 48, low first */
	const __m512i pick = _mm512_set_epi8(
		47, 47, 46, 45, 44, 44, 43, 42, 41, 41, 40, 39, 38, 38, 37, 36, 35, 35, 34, 33, 32,
		32, 31, 30, 29, 29, 28, 27, 26, 26, 25, 24, 23, 23, 22, 21, 20, 20, 19, 18, 17, 17,
		16, 15, 14, 14, 13, 12, 11, 11, 10, 9, 8, 8, 7, 6, 5, 5, 4, 3, 2, 2, 1, 0);
	__m512i t = _mm512_permutexvar_epi8(pick, _mm512_maskz_loadu_epi8(((__mmask64)1 << 48) - 1, in));
	__m512i c;

	t = _mm512_and_si512(t, _mm512_set1_epi32(0xFFFFFF));
	if (_mm512_cmpneq_epi32_mask(_mm512_and_si512(t, _mm512_set1_epi32(0xC0C0F0)),
				     _mm512_set1_epi32(0x8080E0)))
		return 0;
	c = _mm512_or_si512(
		_mm512_slli_epi32(_mm512_and_si512(t, _mm512_set1_epi32(0x0F)), 12),
		_mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(t, 8), _mm512_set1_epi32(0x3F)), 6),
				_mm512_and_si512(_mm512_srli_epi32(t, 16), _mm512_set1_epi32(0x3F))));
	if (_mm512_cmplt_epu32_mask(c, _mm512_set1_epi32(0x800)))
		return 0;
	*cp = c;
	return 1;
}

SH_BW size_t sh_marks_utf8_512(const uint32_t *bmp, const uint8_t *in, size_t i, size_t stop,
			       UChar *u, int32_t *pm)
{
	int32_t m = *pm;

	for (;;) {
		__m512i cp;
		if (i + 64 <= stop && two_byte32(in + i, &cp) &&
		    continue16(bmp, _mm512_cvtepu16_epi32(_mm512_castsi512_si256(cp))) &&
		    continue16(bmp, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(cp, 1)))) {
			_mm512_storeu_si512(u + m, cp);
			m += 32;
			i += 64;
		} else if (i + 48 <= stop && three_byte16(in + i, &cp) && continue16(bmp, cp)) {
			_mm256_storeu_si256((__m256i *)(u + m), _mm512_cvtepi32_epi16(cp));
			m += 16;
			i += 48;
		} else {
			break;
		}
	}
	*pm = m;
	return i;
}

SH_BW size_t sh_marks_plain512(const sh_reorder_entry *cache, const UChar *u, int32_t *pk,
			       int32_t end, UChar *d, uint8_t *cc, size_t n)
{
	const char *base = (const char *)cache;
	const __m512i size = _mm512_set1_epi32((int)sizeof *cache);
	int32_t k = *pk;

	for (; k + 16 <= end; k += 16) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(u + k));
		__m512i c = _mm512_cvtepu16_epi32(v), at, cp1, fl;
		if (_mm512_cmpeq_epi32_mask(_mm512_and_si512(c, _mm512_set1_epi32(0xF800)),
					    _mm512_set1_epi32(0xD800)))
			break; /* a surrogate */
		at = _mm512_mullo_epi32(_mm512_and_si512(c, _mm512_set1_epi32(SH_REORDER_CACHE - 1)), size);
		cp1 = _mm512_i32gather_epi32(at, (const void *)(base + offsetof(sh_reorder_entry, cp1)), 1);
		/* ccc, then decomposes, in the low bytes of the word at ccc */
		fl = _mm512_i32gather_epi32(at, (const void *)(base + offsetof(sh_reorder_entry, ccc)), 1);
		if (_mm512_cmpneq_epi32_mask(cp1, _mm512_add_epi32(c, _mm512_set1_epi32(1))) |
		    _mm512_test_epi32_mask(fl, _mm512_set1_epi32(0xFF00)))
			break;
		_mm256_storeu_si256((__m256i *)(d + n), v);
		_mm_storeu_si128((__m128i *)(cc + n), _mm512_cvtepi32_epi8(fl));
		n += 16;
	}
	*pk = k;
	return n;
}
#else
int sh_marks_have512(void)
{
	return 0;
}

size_t sh_marks_utf8_512(const uint32_t *bmp, const uint8_t *in, size_t i, size_t stop, UChar *u,
			 int32_t *pm)
{
	SH_UNUSED(bmp);
	SH_UNUSED(in);
	SH_UNUSED(stop);
	SH_UNUSED(u);
	SH_UNUSED(pm);
	return i;
}

size_t sh_marks_plain512(const sh_reorder_entry *cache, const UChar *u, int32_t *pk, int32_t end,
			 UChar *d, uint8_t *cc, size_t n)
{
	SH_UNUSED(cache);
	SH_UNUSED(u);
	SH_UNUSED(pk);
	SH_UNUSED(end);
	SH_UNUSED(d);
	SH_UNUSED(cc);
	return n;
}
#endif
