/* test_fp.c - fingerprint hex format and parse, Hamming distance, similarity. */
#include <inttypes.h>
#include "test.h"
#include "simhash.h"

#define SEED 0x5eed1234abcdull

static uint64_t rng_state;
static uint64_t splitmix64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static simhash_fp fp_make(unsigned bits, uint64_t lo, uint64_t hi)
{
	simhash_fp fp = {{lo, hi}, bits};

	if (bits == 32)
		fp.w[0] &= 0xffffffffu;
	if (bits < 128)
		fp.w[1] = 0;
	return fp;
}

/* The expected text, built with printf rather than fp.c's digit loop. */
static void ref_hex(const simhash_fp *fp, char *buf)
{
	if (fp->bits == 32)
		snprintf(buf, SIMHASH_HEX_MAX, "%08" PRIx64, fp->w[0]);
	else if (fp->bits == 64)
		snprintf(buf, SIMHASH_HEX_MAX, "%016" PRIx64, fp->w[0]);
	else
		snprintf(buf, SIMHASH_HEX_MAX, "%016" PRIx64 "%016" PRIx64, fp->w[1], fp->w[0]);
}

static int round_trip_ok(const simhash_fp *fp)
{
	char buf[SIMHASH_HEX_MAX], ref[SIMHASH_HEX_MAX];
	simhash_fp back;
	size_t n = simhash_fp_format(fp, buf);

	ref_hex(fp, ref);
	if (n != fp->bits / 4 || strcmp(buf, ref) != 0)
		return 0;
	if (simhash_fp_parse(buf, n, &back) != SIMHASH_OK)
		return 0;
	return back.bits == fp->bits && back.w[0] == fp->w[0] && back.w[1] == fp->w[1];
}

static void test_round_trip_random_and_edges(void)
{
	static const unsigned widths[] = {32, 64, 128};
	int bad = 0;

	rng_state = SEED;
	for (int w = 0; w < 3; w++) {
		simhash_fp zero = fp_make(widths[w], 0, 0);
		simhash_fp ones = fp_make(widths[w], ~0ull, ~0ull);

		CHECK(round_trip_ok(&zero));
		CHECK(round_trip_ok(&ones));
		for (int i = 0; i < 1000; i++) {
			uint64_t lo = splitmix64(), hi = splitmix64();
			simhash_fp fp = fp_make(widths[w], lo, hi);

			bad += !round_trip_ok(&fp);
		}
	}
	if (bad)
		fprintf(stderr, "seed %#llx: %d random round trips failed\n",
			(unsigned long long)SEED, bad);
	CHECK(bad == 0);
}

static void test_format_known_values(void)
{
	char buf[SIMHASH_HEX_MAX];
	simhash_fp a = fp_make(32, 0xdeadbeefu, 0);
	simhash_fp b = fp_make(64, 0x0123456789abcdefull, 0);
	simhash_fp c = fp_make(128, 0xfedcba9876543210ull, 0x0f1e2d3c4b5a6978ull);
	simhash_fp bad = fp_make(64, 1, 0);

	CHECK(simhash_fp_format(&a, buf) == 8);
	CHECK_STR(buf, "deadbeef");
	CHECK(simhash_fp_format(&b, buf) == 16);
	CHECK_STR(buf, "0123456789abcdef");
	CHECK(simhash_fp_format(&c, buf) == 32);
	CHECK_STR(buf, "0f1e2d3c4b5a6978fedcba9876543210");
	bad.bits = 48;
	CHECK(simhash_fp_format(&bad, buf) == 0);
}

static void test_parse_accepts_upper_case(void)
{
	simhash_fp fp;

	CHECK(simhash_fp_parse("DEADBEEF", 8, &fp) == SIMHASH_OK);
	CHECK(fp.bits == 32);
	CHECK_EQ_U64(fp.w[0], 0xdeadbeefu);
	CHECK_EQ_U64(fp.w[1], 0);
	CHECK(simhash_fp_parse("0123456789ABCDEF", 16, &fp) == SIMHASH_OK);
	CHECK(fp.bits == 64);
	CHECK_EQ_U64(fp.w[0], 0x0123456789abcdefull);
	CHECK(simhash_fp_parse("0F1E2D3C4B5A6978FEDCBA9876543210", 32, &fp) == SIMHASH_OK);
	CHECK(fp.bits == 128);
	CHECK_EQ_U64(fp.w[1], 0x0f1e2d3c4b5a6978ull);
	CHECK_EQ_U64(fp.w[0], 0xfedcba9876543210ull);
	CHECK(simhash_fp_parse("aBcDeF01", 8, &fp) == SIMHASH_OK);
	CHECK_EQ_U64(fp.w[0], 0xabcdef01u);
}

static void test_parse_uses_exactly_len_bytes(void)
{
	simhash_fp fp;

	/* the 9th byte is not looked at: len says 8 */
	CHECK(simhash_fp_parse("12345678zz", 8, &fp) == SIMHASH_OK);
	CHECK(fp.bits == 32);
	CHECK_EQ_U64(fp.w[0], 0x12345678u);
	/* an embedded NUL within len is a bad digit, not an end */
	CHECK(simhash_fp_parse("1234\0" "678", 8, &fp) == SIMHASH_ECORRUPT);
}

static void test_parse_rejects_and_leaves_out_untouched(void)
{
	static const struct {
		const char *s;
		const char *why;
	} bad[] = {
		{"", "empty"},
		{"1234567", "7 digits"},
		{"123456789abcdef", "15 digits"},
		{"123456789abcdef01", "17 digits"},
		{"123456789abcdef0123456789abcdef", "31 digits"},
		{"123456789abcdef0123456789abcdef01", "33 digits"},
		{"1234567g", "'g'"},
		{"123456789abcdefg", "'g' last of 16"},
		{"g23456789abcdef0123456789abcdef0", "'g' first of 32"},
		{"0123456789abcdef0123456789abcdeG", "'G' last of 32"},
		{" 1234567", "leading space"},
		{"1234567 ", "trailing space"},
		{"0x123456", "0x prefix"},
		{"0x123456789abcde", "0x prefix, 16"},
		{"-1234567", "sign"},
		{"1234:678", "':' just after '9'"},
		{"1234@678", "'@' just before 'A'"},
		{"1234`678", "'`' just before 'a'"},
	};
	simhash_fp fp = {{0x1111, 0x2222}, 77};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		simhash_err e = simhash_fp_parse(bad[i].s, strlen(bad[i].s), &fp);

		if (e != SIMHASH_ECORRUPT)
			fprintf(stderr, "accepted: %s\n", bad[i].why);
		CHECK(e == SIMHASH_ECORRUPT);
	}
	CHECK_EQ_U64(fp.w[0], 0x1111);
	CHECK_EQ_U64(fp.w[1], 0x2222);
	CHECK(fp.bits == 77);
	CHECK(simhash_fp_parse("12345678", 8, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fp_parse(NULL, 8, &fp) == SIMHASH_EINVAL);
}

/* Every byte value at every position of a 16-digit form: accepted exactly
 * when it is a hex digit (either case), with the digit's value; against
 * strtoull as the reference (fp.c decodes without branches). */
static void test_parse_every_byte_at_every_position(void)
{
	for (unsigned pos = 0; pos < 16; pos++) {
		for (unsigned c = 0; c < 256; c++) {
			char hex[17] = "0123456789abcdef";
			simhash_fp f = {{7, 7}, 99};
			int is_hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
			simhash_err err;
			hex[pos] = (char)c;
			err = simhash_fp_parse(hex, 16, &f);
			CHECK(err == (is_hex ? SIMHASH_OK : SIMHASH_ECORRUPT));
			if (is_hex)
				CHECK(f.bits == 64 && f.w[0] == strtoull(hex, NULL, 16));
			else
				CHECK(f.bits == 99 && f.w[0] == 7);
		}
	}
}

static void test_hamming_known_values(void)
{
	simhash_fp a32 = fp_make(32, 0, 0), b32 = fp_make(32, 0xffffffffu, 0);
	simhash_fp a64 = fp_make(64, 0, 0), b64 = fp_make(64, 0xf0f0000000000001ull, 0);
	simhash_fp a128 = fp_make(128, 1, 0), b128 = fp_make(128, 0, 0x8000000000000003ull);

	CHECK(simhash_hamming(&a32, &b32) == 32);
	CHECK(simhash_hamming(&a32, &a32) == 0);
	CHECK(simhash_hamming(&a64, &b64) == 9);
	CHECK(simhash_hamming(&a128, &b128) == 4);
	b128.w[0] = ~0ull;
	b128.w[1] = ~0ull;
	a128.w[0] = 0;
	CHECK(simhash_hamming(&a128, &b128) == 128);
	CHECK(simhash_similarity(&a32, &b32) == 0.0);
	CHECK(simhash_similarity(&a32, &a32) == 1.0);
	CHECK(simhash_similarity(&a64, &b64) == 1.0 - 9.0 / 64.0);
	CHECK(simhash_similarity(&a128, &b128) == 0.0);
}

static void test_hamming_matches_bit_loop_on_random_values(void)
{
	int bad = 0;

	rng_state = SEED + 1;
	for (int i = 0; i < 1000; i++) {
		simhash_fp a = fp_make(128, splitmix64(), splitmix64());
		simhash_fp b = fp_make(128, splitmix64(), splitmix64());
		unsigned ref = 0;

		for (int k = 0; k < 128; k++)
			ref += ((a.w[k / 64] ^ b.w[k / 64]) >> (k % 64)) & 1;
		bad += simhash_hamming(&a, &b) != ref;
	}
	if (bad)
		fprintf(stderr, "seed %#llx: %d distances wrong\n", (unsigned long long)SEED + 1, bad);
	CHECK(bad == 0);
}

static void test_hamming_ignores_bits_above_width(void)
{
	simhash_fp a = fp_make(32, 0x0f, 0), b = fp_make(32, 0x0e, 0);

	a.w[0] |= 0xffff000000000000ull; /* stray bits a sloppy caller left */
	b.w[1] = 0x1234;
	CHECK(simhash_hamming(&a, &b) == 1);
	a = fp_make(64, 5, 0);
	b = fp_make(64, 5, 0xff);
	CHECK(simhash_hamming(&a, &b) == 0);
}

static void test_width_mismatch_and_bad_width_are_invalid(void)
{
	simhash_fp a = fp_make(64, 0, 0), b = fp_make(128, 0, 0);
	simhash_fp c = fp_make(64, 0, 0), d = fp_make(64, 0, 0);

	CHECK(simhash_hamming(&a, &b) == SIMHASH_DIST_INVALID);
	CHECK(simhash_similarity(&a, &b) == -1.0);
	c.bits = 16;
	d.bits = 16;
	CHECK(simhash_hamming(&c, &d) == SIMHASH_DIST_INVALID);
	CHECK(simhash_similarity(&c, &d) == -1.0);
	c.bits = 0;
	d.bits = 0;
	CHECK(simhash_hamming(&c, &d) == SIMHASH_DIST_INVALID);
	CHECK(simhash_hamming(&a, NULL) == SIMHASH_DIST_INVALID);
	CHECK(simhash_similarity(NULL, &a) == -1.0);
}

TEST_MAIN("fp",
	  TEST(test_round_trip_random_and_edges),
	  TEST(test_format_known_values),
	  TEST(test_parse_accepts_upper_case),
	  TEST(test_parse_uses_exactly_len_bytes),
	  TEST(test_parse_rejects_and_leaves_out_untouched),
	  TEST(test_parse_every_byte_at_every_position),
	  TEST(test_hamming_known_values),
	  TEST(test_hamming_matches_bit_loop_on_random_values),
	  TEST(test_hamming_ignores_bits_above_width),
	  TEST(test_width_mismatch_and_bad_width_are_invalid))
