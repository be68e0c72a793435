/* test_hash.c - known-answer tests for lib/hash: FNV-1/FNV-1a (32, 64, 128),
 * MD5 (RFC 1321 suite) and XXH3 (64 and 128), plus the width rules of
 * sh_hash() and sh_key() == sh_key_inline(). */
#include <stdint.h>
#include <openssl/evp.h>
#include "test.h"
#include "common/internal.h"
#include "hash/hash_inline.h"

/* ---- FNV */

struct fnv_vec {
	const char *s;
	uint32_t fnv1_32, fnv1a_32;
	uint64_t fnv1_64, fnv1a_64;
	uint64_t fnv1_128_hi, fnv1_128_lo, fnv1a_128_hi, fnv1a_128_lo;
};

/* 32 and 64-bit values are from the FNV test suite (isthe.com/chongo/tech/comp/fnv);
 * the 128-bit ones were computed with Python integers and are re-derived below
 * by limb_fnv128(), which shares no code with fnv.c. */
static const struct fnv_vec fnv_vecs[] = {
	/* empty: every variant returns its offset basis */
	{"", 0x811c9dc5u, 0x811c9dc5u, 0xcbf29ce484222325ull, 0xcbf29ce484222325ull,
	 0x6c62272e07bb0142ull, 0x62b821756295c58dull, 0x6c62272e07bb0142ull, 0x62b821756295c58dull},
	/* one byte: FNV-1 and FNV-1a differ already */
	{"a", 0x050c5d7eu, 0xe40c292cu, 0xaf63bd4c8601b7beull, 0xaf63dc4c8601ec8cull,
	 0xd228cb69101a8cafull, 0x78912b704e4a141eull, 0xd228cb696f1a8cafull, 0x78912b704e4a8964ull},
	/* several bytes */
	{"foobar", 0x31f0b262u, 0xbf9cf968u, 0x340d8765a4dda9c2ull, 0x85944171f73967e8ull,
	 0x7896bfea9c3c64bfull, 0x6dc58353d2c293aaull, 0x343e1662793c64bfull, 0x6f0d3597ba446f18ull},
	/* the suite's own sentence, with a newline */
	{"chongo was here!\n", 0xdd002f35u, 0xd49930d5u, 0xe0aca20b624e4235ull, 0x46810940eff5f915ull,
	 0x40ab469af9cf0fe5ull, 0x7236785215beee65ull, 0xd09f538fec03781aull, 0x034e1e32bab19a75ull},
};

#define N_FNV (sizeof fnv_vecs / sizeof fnv_vecs[0])

static void test_fnv32_and_fnv64_match_published_vectors(void)
{
	for (size_t i = 0; i < N_FNV; i++) {
		const struct fnv_vec *v = &fnv_vecs[i];
		size_t n = strlen(v->s);

		CHECK_EQ_U64(sh_fnv1_32(v->s, n), v->fnv1_32);
		CHECK_EQ_U64(sh_fnv1a_32(v->s, n), v->fnv1a_32);
		CHECK_EQ_U64(sh_fnv1_64(v->s, n), v->fnv1_64);
		CHECK_EQ_U64(sh_fnv1a_64(v->s, n), v->fnv1a_64);
	}
}

static void test_fnv128_matches_vectors(void)
{
	uint64_t o[2];

	for (size_t i = 0; i < N_FNV; i++) {
		const struct fnv_vec *v = &fnv_vecs[i];
		size_t n = strlen(v->s);

		sh_fnv1_128(v->s, n, o);
		CHECK_EQ_U64(o[1], v->fnv1_128_hi);
		CHECK_EQ_U64(o[0], v->fnv1_128_lo);
		sh_fnv1a_128(v->s, n, o);
		CHECK_EQ_U64(o[1], v->fnv1a_128_hi);
		CHECK_EQ_U64(o[0], v->fnv1a_128_lo);
	}
}

/* FNV-128 by schoolbook multiplication on four 32-bit limbs (x[0] least
 * significant), the way the FNV reference code does it without __int128. */
static void limb_mul128(uint32_t x[4])
{
	static const uint32_t prime[4] = {0x0000013b, 0x00000000, 0x01000000, 0x00000000};
	uint32_t r[4] = {0};

	for (int i = 0; i < 4; i++) {
		uint64_t carry = 0;

		for (int j = 0; i + j < 4; j++) {
			/* at most (2^32-1)^2 + 2 (2^32-1) = 2^64 - 1: no overflow */
			uint64_t t = (uint64_t)x[i] * prime[j] + r[i + j] + carry;

			r[i + j] = (uint32_t)t;
			carry = t >> 32;
		}
	}
	memcpy(x, r, sizeof r);
}

static void limb_fnv128(int alt, const uint8_t *p, size_t n, uint64_t out[2])
{
	uint32_t x[4] = {0x6295c58d, 0x62b82175, 0x07bb0142, 0x6c62272e};

	for (size_t i = 0; i < n; i++) {
		if (alt)
			x[0] ^= p[i];
		limb_mul128(x);
		if (!alt)
			x[0] ^= p[i];
	}
	out[0] = ((uint64_t)x[1] << 32) | x[0];
	out[1] = ((uint64_t)x[3] << 32) | x[2];
}

static uint32_t lcg_state;
static uint8_t lcg_byte(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return (uint8_t)(lcg_state >> 24);
}

static void lcg_fill(uint8_t *buf, size_t n)
{
	lcg_state = 0x9E3779B9u;
	for (size_t i = 0; i < n; i++)
		buf[i] = lcg_byte();
}

static void test_fnv128_agrees_with_limb_reference(void)
{
	uint8_t buf[300];
	uint64_t a[2], b[2];

	lcg_fill(buf, sizeof buf);
	for (size_t n = 0; n <= sizeof buf; n += 7) {
		sh_fnv1_128(buf, n, a);
		limb_fnv128(0, buf, n, b);
		CHECK_EQ_U64(a[0], b[0]);
		CHECK_EQ_U64(a[1], b[1]);
		sh_fnv1a_128(buf, n, a);
		limb_fnv128(1, buf, n, b);
		CHECK_EQ_U64(a[0], b[0]);
		CHECK_EQ_U64(a[1], b[1]);
	}
	/* and the reference itself on a published value: FNV-1a-128("a") */
	limb_fnv128(1, (const uint8_t *)"a", 1, b);
	CHECK_EQ_U64(b[1], 0xd228cb696f1a8cafull);
	CHECK_EQ_U64(b[0], 0x78912b704e4a8964ull);
}

static void test_sh_hash_fnv_widths(void)
{
	uint64_t o[2];

	sh_hash(SIMHASH_HASH_FNV1A, 32, "foobar", 6, o);
	CHECK_EQ_U64(o[0], 0xbf9cf968u);
	CHECK_EQ_U64(o[1], 0);
	sh_hash(SIMHASH_HASH_FNV1, 32, "foobar", 6, o);
	CHECK_EQ_U64(o[0], 0x31f0b262u);
	sh_hash(SIMHASH_HASH_FNV1A, 64, "foobar", 6, o);
	CHECK_EQ_U64(o[0], 0x85944171f73967e8ull);
	CHECK_EQ_U64(o[1], 0);
	sh_hash(SIMHASH_HASH_FNV1, 64, "foobar", 6, o);
	CHECK_EQ_U64(o[0], 0x340d8765a4dda9c2ull);
	sh_hash(SIMHASH_HASH_FNV1A, 128, "a", 1, o);
	CHECK_EQ_U64(o[1], 0xd228cb696f1a8cafull);
	CHECK_EQ_U64(o[0], 0x78912b704e4a8964ull);
	sh_hash(SIMHASH_HASH_FNV1, 128, "a", 1, o);
	CHECK_EQ_U64(o[1], 0xd228cb69101a8cafull);
	CHECK_EQ_U64(o[0], 0x78912b704e4a141eull);
}

/* ---- MD5 */

struct md5_vec {
	const char *s;
	const char *hex;
};

/* RFC 1321, appendix A.5: the complete test suite. */
static const struct md5_vec md5_vecs[] = {
	{"", "d41d8cd98f00b204e9800998ecf8427e"},
	{"a", "0cc175b9c0f1b6a831c399e269772661"},
	{"abc", "900150983cd24fb0d6963f7d28e17f72"},
	{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
	{"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
	{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	 "d174ab98d277d9f5a5611c2c9f419d9f"},
	{"1234567890123456789012345678901234567890"
	 "1234567890123456789012345678901234567890",
	 "57edf4a22be3c955ac49da2e2107b67a"},
};

static void hex16(const uint8_t d[16], char out[33])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[32] = '\0';
}

static void test_md5_rfc1321_suite(void)
{
	uint8_t d[16];
	char hex[33];

	for (size_t i = 0; i < sizeof md5_vecs / sizeof md5_vecs[0]; i++) {
		sh_md5(md5_vecs[i].s, strlen(md5_vecs[i].s), d);
		hex16(d, hex);
		CHECK_STR(hex, md5_vecs[i].hex);
	}
}

/* Our MD5 against OpenSSL's, an independent implementation, on random bytes
 * of every length from 0 to 300 (one, two and several blocks, and every
 * padding boundary around 55, 56, 63 and 64 bytes). */
static void test_md5_equals_openssl_on_random_inputs(void)
{
	uint64_t seed = 0x3d5, x = seed;
	uint8_t buf[300], ours[16], ref[16];
	unsigned n = 0;

	for (size_t len = 0; len <= sizeof buf; len++) {
		for (int round = 0; round < 4; round++) {
			for (size_t i = 0; i < len; i++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				buf[i] = (uint8_t)(x >> 56);
			}
			sh_md5(buf, len, ours);
			if (!EVP_Digest(buf, len, ref, &n, EVP_md5(), NULL) || n != 16) {
				printf("no MD5 in OpenSSL: skipped\n");
				return;
			}
			if (memcmp(ours, ref, 16)) {
				fprintf(stderr, "md5 differs: seed %llx len %zu round %d\n",
					(unsigned long long)seed, len, round);
				t_cur_failed++;
				return;
			}
		}
	}
}

/* The prepared-words kernel at every level this CPU has (AVX-512, AVX2,
 * scalar) against sh_md5(): every length 0..16 in every lane of 32, random bytes
 * (so 4-byte UTF-8 and invalid sequences alike), lanes of mixed lengths. */
static void test_md5_short_x32_every_level_equals_scalar(void)
{
	uint8_t data[32][20], ref[32];
	uint32_t w[5][32], bitlen[32], st[4][32];
	uint64_t x = 0x5161;
	int top = sh_md5_short_simd();

	for (int level = 0; level <= top; level++) {
		for (int round = 0; round < 300; round++) {
			for (unsigned l = 0; l < 32; l++) {
				size_t n;

				x = x * 6364136223846793005ull + 1442695040888963407ull;
				n = round < 17 ? (size_t)round : (size_t)(x >> 33) % 17;
				memset(data[l], 0, sizeof data[l]);
				for (size_t i = 0; i < n; i++) {
					x = x * 6364136223846793005ull + 1442695040888963407ull;
					data[l][i] = (uint8_t)(x >> 56);
				}
				data[l][n] = 0x80;
				for (unsigned i = 0; i < 5; i++)
					w[i][l] = (uint32_t)data[l][4 * i] |
						  (uint32_t)data[l][4 * i + 1] << 8 |
						  (uint32_t)data[l][4 * i + 2] << 16 |
						  (uint32_t)data[l][4 * i + 3] << 24;
				bitlen[l] = (uint32_t)n * 8;
			}
			sh_md5_short_x32(level, (const uint32_t(*)[32])w, bitlen, st);
			for (unsigned l = 0; l < 32; l++) {
				sh_md5(data[l], bitlen[l] / 8, ref);
				for (unsigned k = 0; k < 16; k++) {
					if ((uint8_t)(st[k / 4][l] >> (8 * (k % 4))) == ref[k])
						continue;
					fprintf(stderr, "md5 short level %d lane %u len %u round %d "
						"differs\n", level, l, bitlen[l] / 8, round);
					t_cur_failed++;
					return;
				}
			}
		}
	}
}

/* md5("abc") = 90015098 3cd24fb0 d6963f7d 28e17f72 */
static void test_md5_widths_take_last_bytes_big_endian(void)
{
	uint64_t o[2];

	sh_hash(SIMHASH_HASH_MD5, 128, "abc", 3, o);
	CHECK_EQ_U64(o[1], 0x900150983cd24fb0ull);
	CHECK_EQ_U64(o[0], 0xd6963f7d28e17f72ull);
	sh_hash(SIMHASH_HASH_MD5, 64, "abc", 3, o);
	CHECK_EQ_U64(o[0], 0xd6963f7d28e17f72ull);
	CHECK_EQ_U64(o[1], 0);
	sh_hash(SIMHASH_HASH_MD5, 32, "abc", 3, o);
	CHECK_EQ_U64(o[0], 0x28e17f72u);
	CHECK_EQ_U64(o[1], 0);
	/* md5("") = d41d8cd9 8f00b204 e9800998 ecf8427e */
	sh_hash(SIMHASH_HASH_MD5, 128, "", 0, o);
	CHECK_EQ_U64(o[1], 0xd41d8cd98f00b204ull);
	CHECK_EQ_U64(o[0], 0xe9800998ecf8427eull);
	sh_hash(SIMHASH_HASH_MD5, 32, "", 0, o);
	CHECK_EQ_U64(o[0], 0xecf8427eu);
}

/* ---- XXH3 */

struct xxh3_vec {
	size_t len;
	uint64_t h64;
	uint64_t h128_hi, h128_lo;
};

/* Input: the first len bytes of lcg_fill(). Expected values from xxhsum 0.8.1
 * (`xxhsum -H3` for XXH3_64, `xxhsum -H2` for XXH128, which prints high64
 * then low64). The lengths reach every XXH3 code path. */
static const struct xxh3_vec xxh3_vecs[] = {
	{0, 0x2d06800538d394c2ull, 0x99aa06d3014798d8ull, 0x6001c324468d497full},    /* empty */
	{1, 0x575a0b1c44d8843full, 0x4b2212e31ac97fd4ull, 0x575a0b1c44d8843full},    /* 1..3 */
	{3, 0xe0a733b49e46ea4aull, 0x7cf1e1cba0a7165dull, 0xe0a733b49e46ea4aull},    /* 1..3, top */
	{4, 0x9e341fa4cf50a453ull, 0xf22ee9e70b6ce1a8ull, 0xe248bda0ba0a9e2cull},    /* 4..8 */
	{8, 0x5e11c3115bce8bf7ull, 0x7e15b9a6bad4660dull, 0x760e304f75a9c71eull},    /* 4..8, top */
	{9, 0x3b2febbb10d71e2full, 0x3bda3d1c1f7a3e08ull, 0x36a05ae541fc78c5ull},    /* 9..16 */
	{16, 0x80a68f330ed4c5a6ull, 0x31324cc6e423995dull, 0xed39b3f8b98b2dc0ull},   /* 9..16, top */
	{17, 0xd612049994dc062cull, 0xf6b9e5f65c1ce0deull, 0x6866aaf3b0743731ull},   /* 17..128 */
	{128, 0x3e59aa7e987be9a1ull, 0x444a736d6043ff12ull, 0xe06fd64babaaf922ull},  /* 17..128, top */
	{129, 0x092e2dff46489fe5ull, 0x3b8a92c3ab78c11eull, 0x41853ce41f678ec4ull},  /* 129..240 */
	{240, 0x3b65c9ab76686f4bull, 0xb08c4c3307f8be70ull, 0xa88d73f1c72c5feeull},  /* 129..240, top */
	{241, 0x3861d7cb7fcd0254ull, 0x61f9067643783e52ull, 0x3861d7cb7fcd0254ull},  /* long: one stripe */
	{1000, 0x59b065f189ba6698ull, 0xfb9bc4c542db9d97ull, 0x59b065f189ba6698ull}, /* long: several stripes and a tail */
};

static void test_xxh3_matches_xxhsum(void)
{
	uint8_t buf[1000];
	uint64_t o[2];

	lcg_fill(buf, sizeof buf);
	for (size_t i = 0; i < sizeof xxh3_vecs / sizeof xxh3_vecs[0]; i++) {
		const struct xxh3_vec *v = &xxh3_vecs[i];

		sh_hash(SIMHASH_HASH_XXH3, 64, buf, v->len, o);
		CHECK_EQ_U64(o[0], v->h64);
		CHECK_EQ_U64(o[1], 0);
		sh_hash(SIMHASH_HASH_XXH3, 32, buf, v->len, o);
		CHECK_EQ_U64(o[0], v->h64 & 0xffffffffu);
		CHECK_EQ_U64(o[1], 0);
		sh_hash(SIMHASH_HASH_XXH3, 128, buf, v->len, o);
		CHECK_EQ_U64(o[1], v->h128_hi);
		CHECK_EQ_U64(o[0], v->h128_lo);
		CHECK_EQ_U64(sh_key(buf, v->len), v->h64);
		CHECK_EQ_U64(sh_key_inline(buf, v->len), v->h64);
	}
}

static void test_xxh3_of_abc(void)
{
	uint64_t o[2];

	/* `printf abc | xxhsum -H3` and `-H2` */
	sh_hash(SIMHASH_HASH_XXH3, 64, "abc", 3, o);
	CHECK_EQ_U64(o[0], 0x78af5f94892f3950ull);
	sh_hash(SIMHASH_HASH_XXH3, 128, "abc", 3, o);
	CHECK_EQ_U64(o[1], 0x06b05ab6733a6185ull);
	CHECK_EQ_U64(o[0], 0x78af5f94892f3950ull);
}

TEST_MAIN("hash",
	  TEST(test_fnv32_and_fnv64_match_published_vectors),
	  TEST(test_fnv128_matches_vectors),
	  TEST(test_fnv128_agrees_with_limb_reference),
	  TEST(test_sh_hash_fnv_widths),
	  TEST(test_md5_rfc1321_suite), TEST(test_md5_equals_openssl_on_random_inputs),
	  TEST(test_md5_short_x32_every_level_equals_scalar),
	  TEST(test_md5_widths_take_last_bytes_big_endian),
	  TEST(test_xxh3_matches_xxhsum),
	  TEST(test_xxh3_of_abc))
