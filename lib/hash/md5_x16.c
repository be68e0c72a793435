/* md5_x16.c - sixteen MD5 digests at once, one per 32-bit lane of AVX-512,
 * for messages of at most 55 bytes (one block each): the 4-grams of the
 * compatibility mode, whose hashes are computed in groups of up to sixteen.
 *
 * The scalar sh_md5() (md5.c) is the reference; tests compare both on the same
 * messages, every length 0..55. Lane k computes message k: the blocks are
 * built as 16 words x 16 lanes (word i of every message in one vector), the
 * four state words are vectors, and each of the 64 steps is the scalar step
 * with ternary logic for F, G, H and I.
 */
#include <string.h>
#include "../common/internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_AVX512F __attribute__((target("avx512f")))

static const uint32_t K[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
	0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
	0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
	0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
	0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
	0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
	0xeb86d391,
};

static const unsigned R[4][4] = { { 7, 12, 17, 22 }, { 5, 9, 14, 20 }, { 4, 11, 16, 23 },
				  { 6, 10, 15, 21 } };

/* ternary-logic tables of F = b ? c : d, G = d ? b : c, H = b ^ c ^ d,
 * I = c ^ (b | ~d), with (b, c, d) as the operands (A, B, C) */
#define TL_F 0xca
#define TL_G 0xe4
#define TL_H 0x96
#define TL_I 0x39

int sh_md5_x16_supported(void)
{
	return __builtin_cpu_supports("avx512f");
}

SH_AVX512F void sh_md5_x16(const uint8_t *const msg[16], const size_t len[16],
			   uint8_t out[16][16])
{
	uint32_t words[16][16]; /* words[i][lane] */
	uint8_t block[64];
	__m512i m[16], a, b, c, d, f, st[4];

	for (unsigned l = 0; l < 16; l++) {
		size_t n = len[l];

		memset(block, 0, sizeof block);
		if (n)
			memcpy(block, msg[l], n);
		block[n] = 0x80;
		for (int i = 0; i < 8; i++)
			block[56 + i] = (uint8_t)(((uint64_t)n * 8) >> (8 * i));
		for (unsigned i = 0; i < 16; i++)
			words[i][l] = (uint32_t)block[4 * i] | (uint32_t)block[4 * i + 1] << 8 |
				      (uint32_t)block[4 * i + 2] << 16 |
				      (uint32_t)block[4 * i + 3] << 24;
	}
	for (unsigned i = 0; i < 16; i++)
		m[i] = _mm512_loadu_si512(words[i]);
	st[0] = a = _mm512_set1_epi32(0x67452301);
	st[1] = b = _mm512_set1_epi32((int)0xefcdab89);
	st[2] = c = _mm512_set1_epi32((int)0x98badcfe);
	st[3] = d = _mm512_set1_epi32(0x10325476);
	for (unsigned i = 0; i < 64; i++) {
		unsigned round = i >> 4, g;
		__m512i t;

		switch (round) {
		case 0: f = _mm512_ternarylogic_epi32(b, c, d, TL_F); g = i; break;
		case 1: f = _mm512_ternarylogic_epi32(b, c, d, TL_G); g = (5 * i + 1) & 15; break;
		case 2: f = _mm512_ternarylogic_epi32(b, c, d, TL_H); g = (3 * i + 5) & 15; break;
		default: f = _mm512_ternarylogic_epi32(b, c, d, TL_I); g = (7 * i) & 15; break;
		}
		t = _mm512_add_epi32(_mm512_add_epi32(a, f),
				     _mm512_add_epi32(_mm512_set1_epi32((int)K[i]), m[g]));
		switch (R[round][i & 3]) { /* the rotate count must be a constant */
		case 4: t = _mm512_rol_epi32(t, 4); break;
		case 5: t = _mm512_rol_epi32(t, 5); break;
		case 6: t = _mm512_rol_epi32(t, 6); break;
		case 7: t = _mm512_rol_epi32(t, 7); break;
		case 9: t = _mm512_rol_epi32(t, 9); break;
		case 10: t = _mm512_rol_epi32(t, 10); break;
		case 11: t = _mm512_rol_epi32(t, 11); break;
		case 12: t = _mm512_rol_epi32(t, 12); break;
		case 14: t = _mm512_rol_epi32(t, 14); break;
		case 15: t = _mm512_rol_epi32(t, 15); break;
		case 16: t = _mm512_rol_epi32(t, 16); break;
		case 17: t = _mm512_rol_epi32(t, 17); break;
		case 20: t = _mm512_rol_epi32(t, 20); break;
		case 21: t = _mm512_rol_epi32(t, 21); break;
		case 22: t = _mm512_rol_epi32(t, 22); break;
		default: t = _mm512_rol_epi32(t, 23); break;
		}
		a = d;
		d = c;
		c = b;
		b = _mm512_add_epi32(b, t);
	}
	st[0] = _mm512_add_epi32(st[0], a);
	st[1] = _mm512_add_epi32(st[1], b);
	st[2] = _mm512_add_epi32(st[2], c);
	st[3] = _mm512_add_epi32(st[3], d);
	for (unsigned k = 0; k < 4; k++)
		_mm512_storeu_si512(words[k], st[k]);
	for (unsigned l = 0; l < 16; l++)
		for (unsigned k = 0; k < 4; k++)
			for (unsigned byte = 0; byte < 4; byte++)
				out[l][4 * k + byte] = (uint8_t)(words[k][l] >> (8 * byte));
}

#else

int sh_md5_x16_supported(void)
{
	return 0;
}

void sh_md5_x16(const uint8_t *const msg[16], const size_t len[16], uint8_t out[16][16])
{
	for (unsigned l = 0; l < 16; l++)
		sh_md5(msg[l], len[l], out[l]);
}

#endif
