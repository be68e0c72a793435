/* md5.c - MD5 (RFC 1321), our own: the feature hash of the Python `simhash`
 * compatibility mode and of --hash md5; never used for security.
 *
 * Why not OpenSSL: EVP_Digest() sets up and frees a digest context, behind
 * read-write locks, on every call: about 1.2 us per short feature, which made
 * the compatibility mode run at ~5 MB/s. Features are short (a 4-gram is at
 * most 16 bytes), so almost every call is one 64-byte block; the block is
 * built on the stack and compressed with the plain 64-step function, about
 * 0.1 us. Tests check the RFC 1321 suite and compare with OpenSSL's EVP on
 * random inputs of every length up to several blocks.
 *
 * Byte order: the message is read as little-endian 32-bit words and the
 * digest written little-endian, whatever the platform (RFC 1321, 3.4-3.5).
 */
#include <string.h>
#include "../common/internal.h"

const uint32_t sh_md5_k[64] = {
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

static inline uint32_t rotl(uint32_t x, unsigned c)
{
	return (x << c) | (x >> (32 - c));
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define STEP(f, a, b, c, d, k, s, i) \
	a = b + rotl(a + (f) + sh_md5_k[i] + m[k], s)

static void compress(uint32_t st[4], const uint8_t *block)
{
	uint32_t m[16], a = st[0], b = st[1], c = st[2], d = st[3];

	for (int i = 0; i < 16; i++)
		m[i] = le32(block + 4 * i);
	for (int i = 0; i < 16; i += 4) {
		STEP(d ^ (b & (c ^ d)), a, b, c, d, i, 7, i);
		STEP(c ^ (a & (b ^ c)), d, a, b, c, i + 1, 12, i + 1);
		STEP(b ^ (d & (a ^ b)), c, d, a, b, i + 2, 17, i + 2);
		STEP(a ^ (c & (d ^ a)), b, c, d, a, i + 3, 22, i + 3);
	}
	for (int i = 16; i < 32; i += 4) {
		STEP(c ^ (d & (b ^ c)), a, b, c, d, (5 * i + 1) & 15, 5, i);
		STEP(b ^ (c & (a ^ b)), d, a, b, c, (5 * i + 6) & 15, 9, i + 1);
		STEP(a ^ (b & (d ^ a)), c, d, a, b, (5 * i + 11) & 15, 14, i + 2);
		STEP(d ^ (a & (c ^ d)), b, c, d, a, (5 * i + 16) & 15, 20, i + 3);
	}
	for (int i = 32; i < 48; i += 4) {
		STEP(b ^ c ^ d, a, b, c, d, (3 * i + 5) & 15, 4, i);
		STEP(a ^ b ^ c, d, a, b, c, (3 * i + 8) & 15, 11, i + 1);
		STEP(d ^ a ^ b, c, d, a, b, (3 * i + 11) & 15, 16, i + 2);
		STEP(c ^ d ^ a, b, c, d, a, (3 * i + 14) & 15, 23, i + 3);
	}
	for (int i = 48; i < 64; i += 4) {
		STEP(c ^ (b | ~d), a, b, c, d, (7 * i) & 15, 6, i);
		STEP(b ^ (a | ~c), d, a, b, c, (7 * i + 7) & 15, 10, i + 1);
		STEP(a ^ (d | ~b), c, d, a, b, (7 * i + 14) & 15, 15, i + 2);
		STEP(d ^ (c | ~a), b, c, d, a, (7 * i + 21) & 15, 21, i + 3);
	}
	st[0] += a;
	st[1] += b;
	st[2] += c;
	st[3] += d;
}

void sh_md5(const void *data, size_t len, uint8_t out[16])
{
	uint32_t st[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
	const uint8_t *p = data;
	uint8_t block[128];
	uint64_t bits = (uint64_t)len * 8;
	size_t rest, tail;

	for (rest = len; rest >= 64; rest -= 64, p += 64)
		compress(st, p);
	/* the last bytes, 0x80, zeros, and the bit length: one or two blocks */
	tail = rest < 56 ? 64 : 128;
	if (rest)
		memcpy(block, p, rest);
	block[rest] = 0x80;
	memset(block + rest + 1, 0, tail - rest - 1 - 8);
	for (int i = 0; i < 8; i++)
		block[tail - 8 + i] = (uint8_t)(bits >> (8 * i));
	compress(st, block);
	if (tail == 128)
		compress(st, block + 64);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (uint8_t)(st[i] >> (8 * k));
}
