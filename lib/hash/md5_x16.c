/* md5_x16.c - many MD5 digests at once, one per 32-bit lane.
 *
 * sh_md5_x16(): sixteen messages of at most 55 bytes (one block each) with
 * AVX-512, from byte strings. sh_md5_short_x32(): thirty-two messages of at
 * most 16 bytes given as the words of their blocks (the 4-grams of the
 * compatibility mode, the hot loop of that mode), with AVX-512 or AVX2.
 *
 * The scalar sh_md5() (md5.c) is the reference; tests compare both on the same
 * messages, every length. Lane k computes message k: the blocks are built as
 * 16 words x 16 lanes (word i of every message in one vector), the four state
 * words are vectors, and each of the 64 steps is the scalar step (with
 * ternary logic for F, G, H and I under AVX-512).
 */
#include <string.h>
#include "../common/internal.h"

/* The reference for the prepared-words form: each lane through sh_md5(). */
static void md5_short_x32_scalar(const uint32_t w[5][32], const uint32_t bitlen[32],
				 uint32_t st[4][32])
{
	uint8_t msg[20], dig[16];

	for (unsigned l = 0; l < 32; l++) {
		for (unsigned i = 0; i < 5; i++)
			for (unsigned byte = 0; byte < 4; byte++)
				msg[4 * i + byte] = (uint8_t)(w[i][l] >> (8 * byte));
		sh_md5(msg, bitlen[l] / 8, dig);
		for (unsigned k = 0; k < 4; k++)
			st[k][l] = (uint32_t)dig[4 * k] | (uint32_t)dig[4 * k + 1] << 8 |
				   (uint32_t)dig[4 * k + 2] << 16 | (uint32_t)dig[4 * k + 3] << 24;
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_AVX512F __attribute__((target("avx512f")))
#define SH_AVX2 __attribute__((target("avx2")))

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


/* ---------------------------------------------------------------- short messages, prepared words
 *
 * The compatibility mode hashes 4-grams of at most 16 bytes: with the padding
 * byte, only words 0..4 of the block can be non-zero, and word 14 holds the
 * length in bits. The caller writes those words lane by lane (no per-lane
 * block, memset or copy), the steps whose message word is zero skip its
 * addition (the compiler folds the zero), and the state comes out as words.
 * Thirty-two lanes per call, two independent groups interleaved to hide the
 * steps' latency. Every kernel computes the same bytes as sh_md5() on the same message.
 */
/* a = b + rol(a + F(b, c, d) + K[i] + m[g], s), with a + K[i] + m[g] off the
 * critical path (a is four steps old); done for two independent groups of
 * lanes (x and y) so that one group's steps fill the other's latency. */
#define STEP(FN, a, b, c, d, g, s, i)                                                            \
	do {                                                                                      \
		a##x = V_ADD(b##x, V_ROL(V_ADD(FN(b##x, c##x, d##x),                              \
					       V_ADD(a##x, V_ADD(V_SET1(K[i]), mx[g]))), s)); \
		a##y = V_ADD(b##y, V_ROL(V_ADD(FN(b##y, c##y, d##y),                              \
					       V_ADD(a##y, V_ADD(V_SET1(K[i]), my[g]))), s)); \
	} while (0)

#define MD5_STEPS \
	STEP(F, a, b, c, d, 0, 7, 0); \
	STEP(F, d, a, b, c, 1, 12, 1); \
	STEP(F, c, d, a, b, 2, 17, 2); \
	STEP(F, b, c, d, a, 3, 22, 3); \
	STEP(F, a, b, c, d, 4, 7, 4); \
	STEP(F, d, a, b, c, 5, 12, 5); \
	STEP(F, c, d, a, b, 6, 17, 6); \
	STEP(F, b, c, d, a, 7, 22, 7); \
	STEP(F, a, b, c, d, 8, 7, 8); \
	STEP(F, d, a, b, c, 9, 12, 9); \
	STEP(F, c, d, a, b, 10, 17, 10); \
	STEP(F, b, c, d, a, 11, 22, 11); \
	STEP(F, a, b, c, d, 12, 7, 12); \
	STEP(F, d, a, b, c, 13, 12, 13); \
	STEP(F, c, d, a, b, 14, 17, 14); \
	STEP(F, b, c, d, a, 15, 22, 15); \
	STEP(G, a, b, c, d, 1, 5, 16); \
	STEP(G, d, a, b, c, 6, 9, 17); \
	STEP(G, c, d, a, b, 11, 14, 18); \
	STEP(G, b, c, d, a, 0, 20, 19); \
	STEP(G, a, b, c, d, 5, 5, 20); \
	STEP(G, d, a, b, c, 10, 9, 21); \
	STEP(G, c, d, a, b, 15, 14, 22); \
	STEP(G, b, c, d, a, 4, 20, 23); \
	STEP(G, a, b, c, d, 9, 5, 24); \
	STEP(G, d, a, b, c, 14, 9, 25); \
	STEP(G, c, d, a, b, 3, 14, 26); \
	STEP(G, b, c, d, a, 8, 20, 27); \
	STEP(G, a, b, c, d, 13, 5, 28); \
	STEP(G, d, a, b, c, 2, 9, 29); \
	STEP(G, c, d, a, b, 7, 14, 30); \
	STEP(G, b, c, d, a, 12, 20, 31); \
	STEP(H, a, b, c, d, 5, 4, 32); \
	STEP(H, d, a, b, c, 8, 11, 33); \
	STEP(H, c, d, a, b, 11, 16, 34); \
	STEP(H, b, c, d, a, 14, 23, 35); \
	STEP(H, a, b, c, d, 1, 4, 36); \
	STEP(H, d, a, b, c, 4, 11, 37); \
	STEP(H, c, d, a, b, 7, 16, 38); \
	STEP(H, b, c, d, a, 10, 23, 39); \
	STEP(H, a, b, c, d, 13, 4, 40); \
	STEP(H, d, a, b, c, 0, 11, 41); \
	STEP(H, c, d, a, b, 3, 16, 42); \
	STEP(H, b, c, d, a, 6, 23, 43); \
	STEP(H, a, b, c, d, 9, 4, 44); \
	STEP(H, d, a, b, c, 12, 11, 45); \
	STEP(H, c, d, a, b, 15, 16, 46); \
	STEP(H, b, c, d, a, 2, 23, 47); \
	STEP(I, a, b, c, d, 0, 6, 48); \
	STEP(I, d, a, b, c, 7, 10, 49); \
	STEP(I, c, d, a, b, 14, 15, 50); \
	STEP(I, b, c, d, a, 5, 21, 51); \
	STEP(I, a, b, c, d, 12, 6, 52); \
	STEP(I, d, a, b, c, 3, 10, 53); \
	STEP(I, c, d, a, b, 10, 15, 54); \
	STEP(I, b, c, d, a, 1, 21, 55); \
	STEP(I, a, b, c, d, 8, 6, 56); \
	STEP(I, d, a, b, c, 15, 10, 57); \
	STEP(I, c, d, a, b, 6, 15, 58); \
	STEP(I, b, c, d, a, 13, 21, 59); \
	STEP(I, a, b, c, d, 4, 6, 60); \
	STEP(I, d, a, b, c, 11, 10, 61); \
	STEP(I, c, d, a, b, 2, 15, 62); \
	STEP(I, b, c, d, a, 9, 21, 63);

#define V_ADD(x, y) _mm512_add_epi32(x, y)
#define V_SET1(k) _mm512_set1_epi32((int)(k))
#define V_ROL(x, s) _mm512_rol_epi32(x, s)
#define F(b, c, d) _mm512_ternarylogic_epi32(b, c, d, TL_F)
#define G(b, c, d) _mm512_ternarylogic_epi32(b, c, d, TL_G)
#define H(b, c, d) _mm512_ternarylogic_epi32(b, c, d, TL_H)
#define I(b, c, d) _mm512_ternarylogic_epi32(b, c, d, TL_I)

/* Lanes 0..15 and 16..31. */
SH_AVX512F static void md5_short_x32_avx512(const uint32_t w[5][32], const uint32_t bitlen[32],
					    uint32_t st[4][32])
{
	__m512i mx[16], my[16], ax, bx, cx, dx, ay, by, cy, dy;

	for (unsigned i = 0; i < 16; i++)
		mx[i] = my[i] = _mm512_setzero_si512();
	for (unsigned i = 0; i < 5; i++) {
		mx[i] = _mm512_loadu_si512(w[i]);
		my[i] = _mm512_loadu_si512(w[i] + 16);
	}
	mx[14] = _mm512_loadu_si512(bitlen);
	my[14] = _mm512_loadu_si512(bitlen + 16);
	ax = ay = V_SET1(0x67452301);
	bx = by = V_SET1(0xefcdab89);
	cx = cy = V_SET1(0x98badcfe);
	dx = dy = V_SET1(0x10325476);
	MD5_STEPS
	_mm512_storeu_si512(st[0], V_ADD(ax, V_SET1(0x67452301)));
	_mm512_storeu_si512(st[1], V_ADD(bx, V_SET1(0xefcdab89)));
	_mm512_storeu_si512(st[2], V_ADD(cx, V_SET1(0x98badcfe)));
	_mm512_storeu_si512(st[3], V_ADD(dx, V_SET1(0x10325476)));
	_mm512_storeu_si512(st[0] + 16, V_ADD(ay, V_SET1(0x67452301)));
	_mm512_storeu_si512(st[1] + 16, V_ADD(by, V_SET1(0xefcdab89)));
	_mm512_storeu_si512(st[2] + 16, V_ADD(cy, V_SET1(0x98badcfe)));
	_mm512_storeu_si512(st[3] + 16, V_ADD(dy, V_SET1(0x10325476)));
}

#undef V_ADD
#undef V_SET1
#undef V_ROL
#undef F
#undef G
#undef H
#undef I

#define V_ADD(x, y) _mm256_add_epi32(x, y)
#define V_SET1(k) _mm256_set1_epi32((int)(k))
#define V_ROL(x, s) _mm256_or_si256(_mm256_slli_epi32(x, s), _mm256_srli_epi32(x, 32 - (s)))
#define F(b, c, d) _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d)))
#define G(b, c, d) _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c)))
#define H(b, c, d) _mm256_xor_si256(_mm256_xor_si256(b, c), d)
#define I(b, c, d) \
	_mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, _mm256_set1_epi32(-1))))

/* Lanes off..off+7 and off+8..off+15. */
SH_AVX2 static void md5_short_x16_avx2(const uint32_t w[5][32], const uint32_t bitlen[32],
				       uint32_t st[4][32], unsigned off)
{
	__m256i mx[16], my[16], ax, bx, cx, dx, ay, by, cy, dy;

	for (unsigned i = 0; i < 16; i++)
		mx[i] = my[i] = _mm256_setzero_si256();
	for (unsigned i = 0; i < 5; i++) {
		mx[i] = _mm256_loadu_si256((const __m256i *)(w[i] + off));
		my[i] = _mm256_loadu_si256((const __m256i *)(w[i] + off + 8));
	}
	mx[14] = _mm256_loadu_si256((const __m256i *)(bitlen + off));
	my[14] = _mm256_loadu_si256((const __m256i *)(bitlen + off + 8));
	ax = ay = V_SET1(0x67452301);
	bx = by = V_SET1(0xefcdab89);
	cx = cy = V_SET1(0x98badcfe);
	dx = dy = V_SET1(0x10325476);
	MD5_STEPS
	_mm256_storeu_si256((__m256i *)(st[0] + off), V_ADD(ax, V_SET1(0x67452301)));
	_mm256_storeu_si256((__m256i *)(st[1] + off), V_ADD(bx, V_SET1(0xefcdab89)));
	_mm256_storeu_si256((__m256i *)(st[2] + off), V_ADD(cx, V_SET1(0x98badcfe)));
	_mm256_storeu_si256((__m256i *)(st[3] + off), V_ADD(dx, V_SET1(0x10325476)));
	_mm256_storeu_si256((__m256i *)(st[0] + off + 8), V_ADD(ay, V_SET1(0x67452301)));
	_mm256_storeu_si256((__m256i *)(st[1] + off + 8), V_ADD(by, V_SET1(0xefcdab89)));
	_mm256_storeu_si256((__m256i *)(st[2] + off + 8), V_ADD(cy, V_SET1(0x98badcfe)));
	_mm256_storeu_si256((__m256i *)(st[3] + off + 8), V_ADD(dy, V_SET1(0x10325476)));
}

#undef V_ADD
#undef V_SET1
#undef V_ROL
#undef F
#undef G
#undef H
#undef I

int sh_md5_short_simd(void)
{
	if (__builtin_cpu_supports("avx512f"))
		return 2;
	return __builtin_cpu_supports("avx2") ? 1 : 0;
}

void sh_md5_short_x32(int level, const uint32_t w[5][32], const uint32_t bitlen[32],
		      uint32_t st[4][32])
{
	if (level >= 2) {
		md5_short_x32_avx512(w, bitlen, st);
	} else if (level == 1) {
		md5_short_x16_avx2(w, bitlen, st, 0);
		md5_short_x16_avx2(w, bitlen, st, 16);
	} else {
		md5_short_x32_scalar(w, bitlen, st);
	}
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

int sh_md5_short_simd(void)
{
	return 0;
}

void sh_md5_short_x32(int level, const uint32_t w[5][32], const uint32_t bitlen[32],
		      uint32_t st[4][32])
{
	(void)level;
	md5_short_x32_scalar(w, bitlen, st);
}

#endif
