/* plain.c - normalized UTF-16 into normalize.c's output arrays, the common
 * case: plain characters (plain.h), each written as emit() would with no
 * space pending and no repeat rule. The workload: the marks of a long
 * combining run that reorder.c put back after ICU's output, millions of
 * two- or three-byte characters in a row. The scalar loop is the reference;
 * the AVX-512 loop writes the same bytes, offsets and classes sixteen
 * characters at a time while a block of sixteen is plain and of one output
 * width, and leaves every other character to it (tests/normalize: with the
 * vector paths on and off, against ICU alone). */
#include "../common/internal.h"
#include "mixed.h"
#include "plain.h"

/* The plain test of one table entry e: filled, not dropped, class word (0)
 * or CJK (1). */
#define PLAIN_MASK (SH_KNOWN | SH_DROP | 2u << 24)

/* The scalar loop, from k to at most stop; returns where it stopped. */
static size_t plain_scalar(sh_plain_out *p, const UChar *src, size_t k, size_t stop)
{
	const uint32_t *bmp = p->bmp;
	uint8_t *o = p->o, *oc = p->oc;
	uint32_t *oo = p->oo, last = p->last;
	size_t l = p->len, nc = p->n_chars;

	for (; k < stop; k++) {
		uint32_t e = U16_IS_SURROGATE(src[k]) ? 0 : bmp[src[k]], x = e & 0x1FFFFF;
		if ((e & PLAIN_MASK) != SH_KNOWN || x >= 0x10000)
			break;
		oo[nc] = (uint32_t)l;
		oc[nc++] = (uint8_t)(e >> 24 & 3);
		if (x < 0x80) {
			o[l++] = (uint8_t)x;
		} else if (x < 0x800) {
			o[l] = (uint8_t)(0xC0 | x >> 6);
			o[l + 1] = (uint8_t)(0x80 | (x & 0x3F));
			l += 2;
		} else {
			o[l] = (uint8_t)(0xE0 | x >> 12);
			o[l + 1] = (uint8_t)(0x80 | (x >> 6 & 0x3F));
			o[l + 2] = (uint8_t)(0x80 | (x & 0x3F));
			l += 3;
		}
		last = x;
	}
	p->len = l;
	p->n_chars = nc;
	p->last = last;
	return k;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

int sh_plain_have512(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512VBMI);
}

/* Blocks of sixteen from k while each is plain and of one output width:
 * the entries gathered, the UTF-8 of every lane made at once and packed
 * (two bytes: the low half of each lane; three: a byte permutation), the
 * offsets l + w * lane. Returns where it stopped. */
SH_VBMI static size_t plain512(sh_plain_out *p, const UChar *src, size_t k, size_t len)
{
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i three = _mm512_set_epi8(
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 62, 61, 60, 58, 57, 56, 54, 53, 52,
		50, 49, 48, 46, 45, 44, 42, 41, 40, 38, 37, 36, 34, 33, 32, 30, 29, 28, 26, 25, 24,
		22, 21, 20, 18, 17, 16, 14, 13, 12, 10, 9, 8, 6, 5, 4, 2, 1, 0);
	const __m512i c3f = _mm512_set1_epi32(0x3F), c80 = _mm512_set1_epi32(0x80);
	size_t l = p->len, nc = p->n_chars;

	for (; k + 16 <= len; k += 16) {
		__m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + k)));
		__m512i e, x, b;
		__mmask16 wide;
		unsigned w;

		if (_mm512_cmpeq_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0xF800)),
					    _mm512_set1_epi32(0xD800)))
			break; /* a surrogate */
		e = _mm512_i32gather_epi32(u, (const void *)p->bmp, 4);
		if (_mm512_cmpneq_epi32_mask(_mm512_and_si512(e, _mm512_set1_epi32((int)PLAIN_MASK)),
					     _mm512_set1_epi32((int)SH_KNOWN)))
			break;
		x = _mm512_and_si512(e, _mm512_set1_epi32(0x1FFFFF));
		if (_mm512_cmplt_epu32_mask(x, c80) || _mm512_cmpge_epu32_mask(x, _mm512_set1_epi32(0x10000)))
			break; /* an ASCII output, or beyond the BMP */
		wide = _mm512_cmpge_epu32_mask(x, _mm512_set1_epi32(0x800));
		if (wide == 0) {
			/* 110xxxxx 10xxxxxx */
			b = _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi32(x, 6), _mm512_set1_epi32(0xC0)),
					    _mm512_slli_epi32(_mm512_or_si512(_mm512_and_si512(x, c3f), c80), 8));
			_mm256_storeu_si256((__m256i *)(p->o + l), _mm512_cvtepi32_epi16(b));
			w = 2;
		} else if (wide == 0xFFFF) {
			/* 1110xxxx 10xxxxxx 10xxxxxx */
			b = _mm512_or_si512(
				_mm512_or_si512(_mm512_srli_epi32(x, 12), _mm512_set1_epi32(0xE0)),
				_mm512_or_si512(
					_mm512_slli_epi32(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(x, 6), c3f), c80), 8),
					_mm512_slli_epi32(_mm512_or_si512(_mm512_and_si512(x, c3f), c80), 16)));
			_mm512_mask_storeu_epi8(p->o + l, ((__mmask64)1 << 48) - 1,
						_mm512_permutexvar_epi8(three, b));
			w = 3;
		} else {
			break; /* two widths */
		}
		_mm512_storeu_si512(p->oo + nc, _mm512_add_epi32(_mm512_set1_epi32((int)l),
								 _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)w))));
		_mm_storeu_si128((__m128i *)(p->oc + nc),
				 _mm512_cvtepi32_epi8(_mm512_and_si512(_mm512_srli_epi32(e, 24), _mm512_set1_epi32(3))));
		p->last = (uint32_t)_mm_extract_epi32(_mm512_extracti32x4_epi32(x, 3), 3);
		l += 16 * w;
		nc += 16;
	}
	p->len = l;
	p->n_chars = nc;
	return k;
}
#else
int sh_plain_have512(void)
{
	return 0;
}

static size_t plain512(sh_plain_out *p, const UChar *src, size_t k, size_t len)
{
	SH_UNUSED(p);
	SH_UNUSED(src);
	SH_UNUSED(len);
	return k;
}
#endif

size_t sh_plain_run(sh_plain_out *p, const UChar *src, size_t k, size_t len, int simd)
{
	for (;;) {
		size_t stop, to;
		if (simd && len - k >= 16)
			k = plain512(p, src, k, len);
		/* sixteen by the scalar loop before the vector is tried again */
		stop = len - k > 16 ? k + 16 : len;
		to = plain_scalar(p, src, k, stop);
		if (to < stop || to >= len)
			return to;
		k = to;
	}
}
