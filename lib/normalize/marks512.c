/* marks512.c - AVX-512 twins of the two per-character loops a long
 * combining run spends its characters in: scan.h's marks_run() (the UTF-8
 * of an open segment to UTF-16, while its characters continue the segment)
 * and reorder.c's plain() (UTF-16 with each unit's class, from reorder.c's
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
#define SH_BW __attribute__((target("avx512f,avx512bw")))

int sh_marks_have512(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW);
}

SH_BW size_t sh_marks_utf8_512(const uint32_t *bmp, const uint8_t *in, size_t i, size_t stop,
			       UChar *u, int32_t *pm)
{
	const __m512i ff = _mm512_set1_epi16(0xFF), want = _mm512_set1_epi32((int)SH_KNOWN);
	const __m512i flags = _mm512_set1_epi32((int)(SH_KNOWN | SH_INERT | SH_LAZY));
	int32_t m = *pm;

	for (; i + 64 <= stop; i += 64) {
		/* each 16-bit lane: a lead byte low, a continuation byte high */
		__m512i x = _mm512_loadu_si512(in + i);
		__m512i lead = _mm512_and_si512(x, ff), cont = _mm512_srli_epi16(x, 8), cp, e0, e1;
		if (_mm512_cmplt_epu16_mask(lead, _mm512_set1_epi16(0xC2)) |
		    _mm512_cmpgt_epu16_mask(lead, _mm512_set1_epi16(0xDF)) |
		    _mm512_cmpneq_epi16_mask(_mm512_and_si512(cont, _mm512_set1_epi16(0xC0)),
					     _mm512_set1_epi16(0x80)))
			break;
		cp = _mm512_or_si512(_mm512_slli_epi16(_mm512_and_si512(lead, _mm512_set1_epi16(0x1F)), 6),
				     _mm512_and_si512(cont, _mm512_set1_epi16(0x3F)));
		e0 = _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(cp)),
					    (const void *)bmp, 4);
		e1 = _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(cp, 1)),
					    (const void *)bmp, 4);
		if (_mm512_cmpneq_epi32_mask(_mm512_and_si512(e0, flags), want) |
		    _mm512_cmpneq_epi32_mask(_mm512_and_si512(e1, flags), want))
			break;
		_mm512_storeu_si512(u + m, cp);
		m += 32;
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
