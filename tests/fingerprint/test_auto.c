/* test_auto.c - the length-adaptive features of the v2 default, against a
 * reference written from their definition in docs/algorithms.md (plain loops,
 * XXH3 from libxxhash): the first bits taken from a one-bit MinHash of the word
 * 3-shingles in proportion to length, the others from a one-bit MinHash of the
 * set of char 3-grams ("-cmh1", the default); or, as v2 was first released
 * ("-cen1", auto_char_votes), from char 3-gram votes centered by the committed
 * table (every n-gram here starts at a non-CJK character: row 0) blended with
 * word 3-shingle votes with 1 + ln tf in 16.16 fixed point, in 128-bit
 * integers. Texts are lowercase ASCII words and single spaces, which
 * normalization leaves as they are. */
#include <stdint.h>
#include <xxhash.h>
#include "../test.h"
#include "simhash.h"
#include "fingerprint/center_table.h"

void sh_ctx_set_simd(simhash_ctx *ctx, int on);

#define L0 256
#define L1 768

static uint64_t rng_state = 0x7e57a470ull;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int64_t logtf_q16(uint32_t tf)
{
	unsigned e = 0;
	while ((tf >> (e + 1)) != 0)
		e++;
	uint64_t l2 = ((uint64_t)e << 16) + (((uint64_t)(tf - (1u << e)) << 16) >> e);
	return 65536 + (int64_t)((l2 * 45426u) >> 16);
}

/* Bit j of the width-`bits` hash h. */
static int bit(const uint64_t h[2], unsigned j)
{
	return (int)(h[j >> 6] >> (j & 63) & 1);
}

static void char_hash(const char *p, size_t len, unsigned bits, uint64_t h[2])
{
	if (bits == 128) {
		XXH128_hash_t x = XXH3_128bits(p, len);
		h[0] = x.low64;
		h[1] = x.high64;
	} else {
		h[0] = XXH3_64bits(p, len);
		h[1] = 0;
	}
}

/* One-bit MinHash: bin = top bits of the mixed key; an empty bin takes the
 * next nonempty one to its right at distance r, bit = low bit of
 * mix(min + r * golden). */
static void mh_bins(uint64_t mins[128], unsigned bits, uint64_t h)
{
	unsigned b = (unsigned)(h / ((uint64_t)1 << (64 - (bits == 128 ? 7 : bits == 64 ? 6 : 5))));
	if (h < mins[b])
		mins[b] = h;
}

static int mh_bit(const uint64_t mins[128], unsigned bits, unsigned j)
{
	unsigned k = j, r = 0;
	while (mins[k] == UINT64_MAX) {
		k = (k + 1) % bits;
		r++;
	}
	return (int)(mix64(mins[k] + r * 0x9e3779b97f4a7c15ull) & 1);
}

static simhash_fp reference(const char *text, size_t len, unsigned bits, int votes)
{
	uint64_t cmins[128];
	static uint64_t keys[4096], sh[4096];
	static uint32_t cnt[4096];
	size_t n_words = 0, n_sh = 0, start = 0;
	int64_t vc[128] = {0}, vs[128] = {0}, ws = 0, share;
	uint64_t mins[128];
	unsigned n_mh;
	simhash_fp fp = {{0, 0}, bits};

	/* char 3-grams, tf */
	for (size_t i = 0; i + 3 <= len; i++) {
		uint64_t h[2];
		char_hash(text + i, 3, bits, h);
		for (unsigned j = 0; j < bits; j++)
			vc[j] += bit(h, j) ? 1 : -1;
	}
	/* words and distinct shingles */
	for (size_t i = 0; i <= len; i++) {
		if (i < len && text[i] != ' ')
			continue;
		if (i > start)
			keys[n_words++] = XXH3_64bits(text + start, i - start);
		start = i + 1;
	}
	for (size_t w = 2; w < n_words; w++) {
		unsigned char b[24];
		uint64_t k;
		size_t s;
		for (int q = 0; q < 3; q++)
			for (int byte = 0; byte < 8; byte++)
				b[8 * q + byte] = (unsigned char)(keys[w - 2 + (size_t)q] >> (8 * byte));
		k = XXH3_64bits(b, 24);
		for (s = 0; s < n_sh && sh[s] != k; s++)
			;
		if (s == n_sh) {
			sh[n_sh] = k;
			cnt[n_sh++] = 0;
		}
		cnt[s]++;
	}
	for (size_t s = 0; s < n_sh; s++) {
		uint64_t h[2] = {sh[s], 0};
		int64_t w = logtf_q16(cnt[s]);
		if (bits == 128) {
			h[0] = mix64(sh[s] ^ 0x9e3779b97f4a7c15ull);
			h[1] = mix64(sh[s] ^ 0xc2b2ae3d27d4eb4full);
		}
		for (unsigned j = 0; j < bits; j++)
			vs[j] += bit(h, j) ? w : -w;
		ws += w;
	}
	share = len <= L0 ? L1 - L0 : len >= L1 ? 0 : (int64_t)(L1 - len);
	if (ws == 0)
		share = L1 - L0;
	/* one-bit MinHash of the shingles */
	for (unsigned j = 0; j < bits; j++)
		mins[j] = cmins[j] = UINT64_MAX;
	for (size_t q = 0; q < n_sh; q++)
		mh_bins(mins, bits, mix64(sh[q] ^ 0x5851f42d4c957f2dull));
	/* one-bit MinHash of the char 3-gram set; a text shorter than 3 is one
	 * feature, all of it */
	for (size_t i = 0; i + 3 <= len; i++)
		mh_bins(cmins, bits, mix64(XXH3_64bits(text + i, 3) ^ 0x2545f4914f6cdd1dull));
	if (len < 3)
		mh_bins(cmins, bits, mix64(XXH3_64bits(text, len) ^ 0x2545f4914f6cdd1dull));
	n_mh = (unsigned)(bits * (uint64_t)(L1 - L0 - share) / (L1 - L0));
	for (unsigned j = 0; j < n_mh; j++)
		if (mh_bit(mins, bits, j))
			fp.w[j >> 6] |= 1ull << (j & 63);
	for (unsigned j = n_mh; j < bits && !votes; j++)
		if (mh_bit(cmins, bits, j))
			fp.w[j >> 6] |= 1ull << (j & 63);
	for (unsigned j = n_mh; j < bits && votes; j++) {
		const int32_t *m = bits == 128 ? sh_center128[0] : sh_center64[0];
		__int128 c = (__int128)vc[j] * ((__int128)1 << SH_CENTER_Q) -
			     (__int128)(len - 2) * m[j];
		__int128 s = c * share * ws + (__int128)vs[j] * (L1 - L0 - share) *
						  (__int128)(len - 2) * ((__int128)1 << SH_CENTER_Q);
		if (share == L1 - L0)
			s = c;
		if (s > 0)
			fp.w[j >> 6] |= 1ull << (j & 63);
	}
	return fp;
}

static size_t random_text(char *buf, size_t target)
{
	static const char *const vocab[] = {"the", "cat", "sat", "on", "a", "mat", "and", "dog",
					    "ran", "far", "away", "from", "home", "x", "zz", "q1",
					    "of", "in", "to", "it"};
	size_t k = 0;

	while (k < target) {
		const char *w = vocab[rnd() % (rnd() % 2 ? 20 : 6)];
		if (k)
			buf[k++] = ' ';
		memcpy(buf + k, w, strlen(w));
		k += strlen(w);
	}
	buf[k] = 0;
	return k;
}

static simhash_fp fp_of(const char *text, size_t len, unsigned bits, int simd, int votes)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	simhash_fp fp = {{0, 0}, 0};

	simhash_config_init(&cfg);
	cfg.bits = bits;
	cfg.auto_char_votes = votes;
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	if (!ctx)
		return fp;
	sh_ctx_set_simd(ctx, simd);
	CHECK(simhash_fingerprint(ctx, text, len, &fp, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctx);
	return fp;
}

static int same(simhash_fp a, simhash_fp b)
{
	return a.bits == b.bits && a.w[0] == b.w[0] && a.w[1] == b.w[1];
}

static void test_default_features_are_auto(void)
{
	simhash_config cfg;

	simhash_config_init(&cfg);
	CHECK(cfg.features == SIMHASH_FEATURES_AUTO && cfg.ngram == 3 && cfg.ngram_cjk == 2);
}

/* Every length zone (char only, blend, shingles only), every width, both paths. */
static void test_auto_matches_reference(void)
{
	static char buf[4000];
	static const unsigned widths[] = {32, 64, 128};
	static const size_t lens[] = {5, 100, 256, 257, 300, 500, 767, 768, 1500, 3000};

	for (int trial = 0; trial < 180; trial++) {
		unsigned bits = widths[trial % 3];
		int votes = trial >= 90;
		size_t len = random_text(buf, lens[(trial / 3) % 10] - (rnd() % 3 == 0));
		simhash_fp want = reference(buf, len, bits, votes);
		if (bits == 32)
			want.w[0] &= 0xffffffffu;
		for (int simd = 0; simd < 2; simd++) {
			simhash_fp got = fp_of(buf, len, bits, simd, votes);
			if (!same(got, want)) {
				fprintf(stderr, "trial %d: %u bits, %zu chars, simd %d, votes %d: %016llx%016llx != %016llx%016llx\n",
					trial, bits, len, simd, votes, (unsigned long long)got.w[1],
					(unsigned long long)got.w[0], (unsigned long long)want.w[1],
					(unsigned long long)want.w[0]);
				CHECK(0);
			}
		}
	}
}

/* One ctx across texts of every size: its shingle table is reused and
 * emptied between texts, never carried over. */
static void test_reused_ctx_matches_reference(void)
{
	static char buf[4000];
	simhash_config cfg;
	simhash_ctx *ctx = NULL;

	simhash_config_init(&cfg);
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	for (int i = 0; ctx && i < 300; i++) {
		size_t len = random_text(buf, 1 + rnd() % (rnd() % 2 ? 3500 : 900));
		simhash_fp got, want = reference(buf, len, 64, 0);
		CHECK(simhash_fingerprint(ctx, buf, len, &got, NULL) == SIMHASH_OK);
		if (!same(got, want)) {
			fprintf(stderr, "text %d (%zu chars) differs\n", i, len);
			CHECK(0);
			break;
		}
	}
	simhash_ctx_free(ctx);
}

/* Up to L0 characters a fingerprint of the first v2 (auto_char_votes) whose
 * n-grams are not the centering table's (n = 4) is the v1 char fingerprint of
 * the same n-grams: centering is the only difference. */
static void test_short_uncentered_texts_keep_their_char_fingerprint(void)
{
	static char buf[400];
	simhash_config cfg;
	simhash_ctx *a = NULL, *b = NULL;

	simhash_config_init(&cfg);
	cfg.ngram = 4;
	cfg.auto_char_votes = 1;
	CHECK(simhash_ctx_new(&cfg, &a) == SIMHASH_OK);
	cfg.features = SIMHASH_FEATURES_CHAR;
	CHECK(simhash_ctx_new(&cfg, &b) == SIMHASH_OK);
	for (int i = 0; a && b && i < 200; i++) {
		size_t len = random_text(buf, 1 + rnd() % 250);
		simhash_fp x, y;
		CHECK(simhash_fingerprint(a, buf, len, &x, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint(b, buf, len, &y, NULL) == SIMHASH_OK);
		CHECK(same(x, y));
	}
	simhash_ctx_free(a);
	simhash_ctx_free(b);
}

/* Texts with few n-grams or none: the empty text is the one feature "" and a
 * text shorter than an n-gram the one feature of all its bytes (as for the
 * votes); one bin gets a key and every other bin is densified from the
 * nearest nonempty bin to its right, so the bits are a function of that key
 * alone, the same on every path. */
static simhash_fp ref_set(const char *const *feats, unsigned bits)
{
	uint64_t mins[128];
	simhash_fp fp = {{0, 0}, bits};

	for (unsigned j = 0; j < bits; j++)
		mins[j] = UINT64_MAX;
	for (; *feats; feats++)
		mh_bins(mins, bits, mix64(XXH3_64bits(*feats, strlen(*feats)) ^ 0x2545f4914f6cdd1dull));
	for (unsigned j = 0; j < bits; j++)
		if (mh_bit(mins, bits, j))
			fp.w[j >> 6] |= 1ull << (j & 63);
	return fp;
}

static void test_few_ngrams_are_densified(void)
{
	/* a text, then its features */
	static const char *const cases[][4] = {
		{"", "", NULL},
		{"a", "a", NULL},
		{"ab", "ab", NULL},
		{"abc", "abc", NULL},
		{"abcd", "abc", "bcd", NULL},
		{"\xe4\xb8\xad", "\xe4\xb8\xad", NULL},                     /* one Han character */
		{"\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87", NULL}, /* one bigram */
		{"\xf0\xa0\xae\xb7", "\xf0\xa0\xae\xb7", NULL},             /* U+20BB7 */
	};
	static const unsigned widths[] = {32, 64, 128};

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		for (int w = 0; w < 3; w++) {
			simhash_fp want = ref_set(cases[i] + 1, widths[w]);
			if (widths[w] == 32)
				want.w[0] &= 0xffffffffu;
			for (int simd = 0; simd < 2; simd++) {
				simhash_fp got = fp_of(cases[i][0], strlen(cases[i][0]), widths[w], simd, 0);
				if (!same(got, want)) {
					fprintf(stderr, "case %zu, %u bits\n", i, widths[w]);
					CHECK(0);
				}
			}
		}
	/* emoji only: punctuation and symbols are dropped, so it is the empty
	 * text, which is not all zeros */
	CHECK(same(fp_of("\xf0\x9f\x98\x80\xf0\x9f\x8e\x89", 8, 64, 0, 0),
		   fp_of("", 0, 64, 0, 0)));
	CHECK(fp_of("", 0, 64, 0, 0).w[0] != 0);
}

uint64_t sh_auto_shingle_key(const uint64_t k[3]);

/* The shingle key, computed from the three word keys without their bytes, is
 * XXH3-64 of the 24 little-endian bytes: random keys and biased ones (each bit
 * 1 with p = 0.72). */
static void test_shingle_key_is_xxh3_of_bytes(void)
{
	for (int i = 0; i < 20000; i++) {
		uint64_t k[3];
		uint8_t buf[24];
		for (int w = 0; w < 3; w++) {
			k[w] = rnd();
			if (i & 1)
				for (int b = 0; b < 64; b++)
					k[w] = (k[w] & ~(1ull << b)) |
					       (uint64_t)(rnd() % 100 < 72) << b;
			for (int b = 0; b < 8; b++)
				buf[8 * w + b] = (uint8_t)(k[w] >> (8 * b));
		}
		CHECK_EQ_U64(sh_auto_shingle_key(k), (uint64_t)XXH3_64bits(buf, 24));
	}
}

void sh_mh_bits(const uint64_t mins[128], unsigned bits, int simd, uint64_t out[2]);

/* The densified bits, one walk from the right, equal the definition's walk
 * to the next nonempty bin for every pattern of empty bins: none, all but
 * one (first, middle, last), random shares from 0 to all; with the mixes
 * eight at a time (where the CPU has them) and one by one. */
static void test_minhash_densify_matches_definition(void)
{
	static const unsigned widths[] = {32, 64, 128};

	for (int i = 0; i < 3000; i++) {
		unsigned bits = widths[i % 3], keep = (unsigned)(rnd() % 101), only = (unsigned)(rnd() % bits);
		uint64_t mins[128], got[2], want[2] = {0, 0};
		int any = 0;
		for (unsigned j = 0; j < bits; j++) {
			int full = i % 7 == 0 ? 1 : i % 7 == 1 ? j == only : (unsigned)(rnd() % 100) < keep;
			mins[j] = full ? rnd() >> 1 : UINT64_MAX;
			any |= full;
		}
		for (unsigned j = 0; any && j < bits; j++)
			if (mh_bit(mins, bits, j))
				want[j >> 6] |= 1ull << (j & 63);
		for (int simd = 0; simd < 2; simd++) {
			sh_mh_bits(mins, bits, simd, got);
			CHECK_EQ_U64(got[0], want[0]);
			CHECK_EQ_U64(got[1], want[1]);
		}
	}
}

TEST_MAIN("auto",
	  TEST(test_minhash_densify_matches_definition),
	  TEST(test_shingle_key_is_xxh3_of_bytes),
	  TEST(test_default_features_are_auto),
	  TEST(test_auto_matches_reference),
	  TEST(test_few_ngrams_are_densified),
	  TEST(test_reused_ctx_matches_reference),
	  TEST(test_short_uncentered_texts_keep_their_char_fingerprint))
