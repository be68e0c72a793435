/* ascii.c - the vector bodies of normalize.c's runs of ASCII bytes (AVX2,
 * AVX-512 VBMI2), apart from the scalar code they must equal
 * (tests/normalize/test_ascii.c checks them against it). They read only
 * sh_ascii_out, what ascii_run() hands them, and write only its arrays. */
#include <string.h>
#include "../common/internal.h"
#include "ascii.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_HAVE_AVX2 1
#define SH_AVX2 __attribute__((target("avx2,popcnt")))

/* The body of normalize.c's ascii_run(), 32 bytes per step with AVX2: the same mapping as
 * n->amap and n->acls computed with comparisons, the keep rule on bit masks,
 * and the kept bytes packed eight at a time by a shuffle from n->pack. Every
 * kept character is one byte, so offsets are consecutive. Writes up to 8
 * bytes and 8 offsets past the end (room() reserves the slack). */
SH_AVX2 size_t sh_ascii_bulk(const sh_ascii_out *n, const uint8_t *in, size_t i, size_t stop,
			      size_t *plen, size_t *pnc, uint8_t *pprev)
{
	const __m256i sp = _mm256_set1_epi8(' '), c26 = _mm256_set1_epi8(26);
	const __m256i m1 = _mm256_set1_epi8(-1), c10 = _mm256_set1_epi8(10);
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const uint32_t keep_spaces = n->keep_spaces ? ~0u : 0;
	uint8_t *o = n->o, *oc = n->oc;
	uint32_t *oo = n->oo;
	size_t len = *plen, nc = *pnc;
	uint32_t prev_sep = *pprev == ' ';
	uint8_t cb[32] __attribute__((aligned(32))), kb[32] __attribute__((aligned(32)));

	for (; i + 32 <= stop; i += 32) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(in + i));
		__m256i up = _mm256_sub_epi8(x, _mm256_set1_epi8('A'));
		__m256i lo = _mm256_sub_epi8(x, _mm256_set1_epi8('a'));
		__m256i dg = _mm256_sub_epi8(x, _mm256_set1_epi8('0'));
		__m256i is_up = _mm256_and_si256(_mm256_cmpgt_epi8(up, m1), _mm256_cmpgt_epi8(c26, up));
		__m256i is_lo = _mm256_and_si256(_mm256_cmpgt_epi8(lo, m1), _mm256_cmpgt_epi8(c26, lo));
		__m256i is_dg = _mm256_and_si256(_mm256_cmpgt_epi8(dg, m1), _mm256_cmpgt_epi8(c10, dg));
		__m256i alnum = _mm256_or_si256(_mm256_or_si256(is_up, is_lo), is_dg);
		__m256i spacey = _mm256_or_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x21), x),
						 _mm256_cmpeq_epi8(x, _mm256_set1_epi8(0x7F)));
		__m256i sep = n->drop ? _mm256_xor_si256(alnum, m1) : spacey;
		__m256i c = n->fold ? _mm256_add_epi8(x, _mm256_and_si256(is_up, sp)) : x;
		__m256i cls = _mm256_blendv_epi8(_mm256_set1_epi8(SH_C_PUNCT),
						 _mm256_set1_epi8(SH_C_WORD), alnum);
		uint32_t sepm, keepm;

		c = _mm256_blendv_epi8(c, sp, sep);
		cls = _mm256_blendv_epi8(cls, _mm256_set1_epi8(SH_C_SPACE), sep);
		sepm = (uint32_t)_mm256_movemask_epi8(sep);
		keepm = ~sepm | (keep_spaces & ~((sepm << 1) | prev_sep));
		prev_sep = sepm >> 31;
		_mm256_store_si256((__m256i *)cb, c);
		_mm256_store_si256((__m256i *)kb, cls);
		for (unsigned g = 0; g < 4; g++) {
			unsigned m = keepm >> (8 * g) & 0xFF;
			__m128i shuf = _mm_loadl_epi64((const __m128i *)n->pack[m]);
			__m128i vc = _mm_loadl_epi64((const __m128i *)(cb + 8 * g));
			__m128i vk = _mm_loadl_epi64((const __m128i *)(kb + 8 * g));
			_mm_storel_epi64((__m128i *)(o + len), _mm_shuffle_epi8(vc, shuf));
			_mm_storel_epi64((__m128i *)(oc + nc), _mm_shuffle_epi8(vk, shuf));
			_mm256_storeu_si256((__m256i *)(oo + nc),
					    _mm256_add_epi32(_mm256_set1_epi32((int)len), iota));
			len += (size_t)__builtin_popcount(m);
			nc += (size_t)__builtin_popcount(m);
		}
	}
	*plen = len;
	*pnc = nc;
	*pprev = prev_sep ? ' ' : 'x';
	return i;
}

#define SH_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt")))

/* sh_ascii_bulk() 64 bytes per step with AVX-512: the same masks as bit masks,
 * and the kept bytes and classes packed by one compress each (VBMI2) instead
 * of a shuffle per eight bytes. Writes up to 64 bytes and 64 offsets past the
 * end, within what room() reserved for the run: a step starts only with 64
 * input bytes left, and the output never runs ahead of the input. */
SH_AVX512 size_t sh_ascii_bulk512(const sh_ascii_out *n, const uint8_t *in, size_t i,
				   size_t stop, size_t *plen, size_t *pnc, uint8_t *pprev)
{
	const __m512i sp = _mm512_set1_epi8(' ');
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const uint64_t keep_spaces = n->keep_spaces ? ~0ull : 0;
	uint8_t *o = n->o, *oc = n->oc;
	uint32_t *oo = n->oo;
	size_t len = *plen, nc = *pnc;
	uint64_t prev_sep = *pprev == ' ';

	for (; i + 64 <= stop; i += 64) {
		__m512i x = _mm512_loadu_si512((const void *)(in + i));
		/* in is ASCII here: unsigned x - lo < width is lo <= x < lo + width */
		__mmask64 is_up = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(x, _mm512_set1_epi8('A')),
							 _mm512_set1_epi8(26));
		__mmask64 is_lo = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(x, _mm512_set1_epi8('a')),
							 _mm512_set1_epi8(26));
		__mmask64 is_dg = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(x, _mm512_set1_epi8('0')),
							 _mm512_set1_epi8(10));
		__mmask64 alnum = is_up | is_lo | is_dg;
		__mmask64 spacey = _mm512_cmplt_epu8_mask(x, _mm512_set1_epi8(0x21)) |
				   _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(0x7F));
		uint64_t sepm = n->drop ? ~(uint64_t)alnum : (uint64_t)spacey;
		uint64_t keepm = ~sepm | (keep_spaces & ~((sepm << 1) | prev_sep));
		__m512i c = n->fold ? _mm512_mask_add_epi8(x, is_up, x, sp) : x;
		__m512i cls = _mm512_mask_blend_epi8(alnum, _mm512_set1_epi8(SH_C_PUNCT),
						     _mm512_set1_epi8(SH_C_WORD));
		unsigned k = (unsigned)__builtin_popcountll(keepm);

		prev_sep = sepm >> 63;
		c = _mm512_mask_blend_epi8(sepm, c, sp);
		cls = _mm512_mask_blend_epi8(sepm, cls, _mm512_set1_epi8(SH_C_SPACE));
		_mm512_storeu_si512((void *)(o + len), _mm512_maskz_compress_epi8(keepm, c));
		_mm512_storeu_si512((void *)(oc + nc), _mm512_maskz_compress_epi8(keepm, cls));
		for (unsigned g = 0; g < 64; g += 16)
			_mm512_storeu_si512((void *)(oo + nc + g),
					    _mm512_add_epi32(_mm512_set1_epi32((int)(len + g)), iota));
		len += k;
		nc += k;
	}
	*plen = len;
	*pnc = nc;
	*pprev = prev_sep ? ' ' : 'x';
	return i;
}

/* The CPU model is read by a constructor of the compiler's runtime before
 * main, so this only reads it: safe from any thread. */
int sh_ascii_have_avx2(void)
{
	return sh_cpu_has(SH_CPU_AVX2 | SH_CPU_POPCNT);
}

int sh_ascii_have_vbmi2(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512VBMI2 | SH_CPU_POPCNT);
}
#else
#define SH_HAVE_AVX2 0
size_t sh_ascii_bulk(const sh_ascii_out *n, const uint8_t *in, size_t i, size_t stop,
		     size_t *plen, size_t *pnc, uint8_t *pprev)
{
	return i;
}

size_t sh_ascii_bulk512(const sh_ascii_out *n, const uint8_t *in, size_t i, size_t stop,
			size_t *plen, size_t *pnc, uint8_t *pprev)
{
	return i;
}

int sh_ascii_have_avx2(void)
{
	return 0;
}

int sh_ascii_have_vbmi2(void)
{
	return 0;
}
#endif

