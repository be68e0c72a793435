/* md5_x16.c - many MD5 digests at once, one per 32-bit lane.
 *
 * sh_md5_short_x32(): thirty-two messages of at most 16 bytes given as the
 * words of their blocks (the 4-grams of the compatibility mode, the hot loop
 * of that mode), with AVX-512 or AVX2; the round constants are md5.c's
 * sh_md5_k.
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


/* ternary-logic tables of F = b ? c : d, G = d ? b : c, H = b ^ c ^ d,
 * I = c ^ (b | ~d), with (b, c, d) as the operands (A, B, C) */
#define TL_F 0xca
#define TL_G 0xe4
#define TL_H 0x96
#define TL_I 0x39

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
/* a = b + rol(a + F(b, c, d) + K[i] + m[g], s) with K = sh_md5_k, and
 * a + K[i] + m[g] off the critical path (a is four steps old); done for two independent groups of
 * lanes (x and y) so that one group's steps fill the other's latency. */
#define STEP(FN, a, b, c, d, g, s, i)                                                            \
	do {                                                                                      \
		a##x = V_ADD(b##x, V_ROL(V_ADD(FN(b##x, c##x, d##x),                              \
					       V_ADD(a##x, V_ADD(V_SET1(sh_md5_k[i]), mx[g]))), s)); \
		a##y = V_ADD(b##y, V_ROL(V_ADD(FN(b##y, c##y, d##y),                              \
					       V_ADD(a##y, V_ADD(V_SET1(sh_md5_k[i]), my[g]))), s)); \
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

int sh_md5_short_simd(void)
{
	if (sh_cpu_has(SH_CPU_AVX512F))
		return 2;
	return sh_cpu_has(SH_CPU_AVX2) ? 1 : 0;
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
