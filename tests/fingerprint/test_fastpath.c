/* test_fastpath.c - the hot loop of the default unit votes (block paths for
 * one-byte windows and for three-byte CJK bigrams, the AVX-512 path) against
 * the plain weighted path, on texts mixing every UTF-8 width: a tf cap that
 * never bites (--tf-cap 1000000) must change nothing.
 *
 * Regression: eight CJK characters of which one is four bytes (CJK Extension
 * B, U+20BB7) followed by a one- or two-byte ninth character also span 27
 * bytes, and the bigram block path took them for nine three-byte characters.
 *
 * The char MinHash of runs of characters of one width (vote_avx512.c's wide
 * kernel) against the scalar path, for n-grams of 2 to 8 characters. */
#include <stdint.h>
#include "test.h"
#include "simhash.h"

void sh_ctx_set_simd(simhash_ctx *ctx, int on);

static int same(simhash_fp a, simhash_fp b)
{
	return a.bits == b.bits && a.w[0] == b.w[0] && a.w[1] == b.w[1];
}

/* Appends c to buf at k; returns the new end. */
static size_t put(char *buf, size_t k, const char *c)
{
	size_t n = strlen(c);

	memcpy(buf + k, c, n);
	return k + n;
}

/* A new pair of contexts for cfg in *vec and *sca (those there freed): the
 * vector paths and the scalar ones; 0 if one could not be made. */
static int contexts_new(const simhash_config *cfg, simhash_ctx **vec, simhash_ctx **sca)
{
	simhash_ctx_free(*vec);
	simhash_ctx_free(*sca);
	*vec = *sca = NULL;
	CHECK(simhash_ctx_new(cfg, vec) == SIMHASH_OK);
	CHECK(simhash_ctx_new(cfg, sca) == SIMHASH_OK);
	if (!*vec || !*sca)
		return 0;
	sh_ctx_set_simd(*sca, 0);
	return 1;
}

/* Whether the vector and scalar contexts fingerprint buf[0..len) alike. */
static int paths_agree(simhash_ctx *vec, simhash_ctx *sca, const char *buf, size_t len)
{
	simhash_fp a, b;

	CHECK(simhash_fingerprint(vec, buf, len, &a, NULL) == SIMHASH_OK);
	CHECK(simhash_fingerprint(sca, buf, len, &b, NULL) == SIMHASH_OK);
	return same(a, b);
}

static simhash_fp fp_of(const simhash_config *cfg, int simd, const char *text, size_t len)
{
	simhash_ctx *ctx = NULL;
	simhash_fp fp = { { 0, 0 }, 0 };

	CHECK(simhash_ctx_new(cfg, &ctx) == SIMHASH_OK);
	if (!ctx)
		return fp;
	sh_ctx_set_simd(ctx, simd);
	CHECK(simhash_fingerprint(ctx, text, len, &fp, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctx);
	return fp;
}

/* Characters of every width, Han of three and four bytes weighted up so that
 * runs of eight CJK characters are common. */
static const char *const chars[] = {
	"\xe4\xb8\xad", "\xe6\x96\x87", "\xe6\x95\xb8", "\xe3\x81\x82", /* 中 文 數 あ */
	"\xf0\xa0\xae\xb7", "\xf0\xaa\x9a\x8a", "\xf0\xa1\x88\xbd",     /* 𠮷 𪚊 𡈽 */
	"\xf0\x9f\x98\x80", "\xf0\x9f\x91\x8d",                         /* emoji */
	"a", "b", "Z", "7", " ", ".", "\xc3\xa9", "\xd0\xb6",           /* é ж */
	"\xce\xb1", "\xe2\x82\xac", "\xef\xbc\xa1",                     /* α € Ａ */
};

static size_t random_text(char *buf, size_t n_chars)
{
	size_t k = 0;
	int cjk_heavy = (int)(test_rnd() % 2);

	for (size_t i = 0; i < n_chars; i++) {
		size_t pick = cjk_heavy && test_rnd() % 4 ? test_rnd() % 7 : test_rnd() % (sizeof chars / sizeof *chars);
		k = put(buf, k, chars[pick]);
	}
	buf[k] = 0;
	return k;
}

static int check_paths(simhash_config *cfg, const char *buf, size_t len, uint64_t seed)
{
	simhash_fp fast = fp_of(cfg, 1, buf, len), scalar = fp_of(cfg, 0, buf, len), plain;
	unsigned cap = cfg->tf_cap;

	cfg->tf_cap = 1000000;
	plain = fp_of(cfg, 0, buf, len);
	cfg->tf_cap = cap;
	if (same(fast, plain) && same(scalar, plain))
		return 0;
	fprintf(stderr, "paths differ: seed %llx ngram %u ngram_cjk %u bits %u len %zu\n",
		(unsigned long long)seed, cfg->ngram, cfg->ngram_cjk, cfg->bits, len);
	t_cur_failed++;
	return -1;
}

static void test_extension_b_han_before_a_short_char(void)
{
	/* 𠮷 + seven 3-byte Han + "é": nine characters in 4 + 21 + 2 = 27
	 * bytes, then enough text after it for the block path to run */
	static const char text[] = "\xf0\xa0\xae\xb7\xe4\xb8\xad\xe6\x96\x87\xe6\x95\xb8\xe4\xb8\xad"
				   "\xe6\x96\x87\xe6\x95\xb8\xe4\xb8\xad" "\xc3\xa9" "ab \xe4\xb8\xad\xe6\x96\x87"
				   "\xe6\x95\xb8\xe4\xb8\xad\xe6\x96\x87\xe6\x95\xb8";
	simhash_config cfg;

	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_CHAR; /* the v1 char path, where a tf cap is allowed */
	cfg.features = SIMHASH_FEATURES_CHAR; /* the paths under test, whatever the default */
	cfg.ngram = 3;
	cfg.ngram_cjk = 2;
	check_paths(&cfg, text, sizeof text - 1, 0);
}

static void test_fast_path_equals_plain_path_on_mixed_widths(void)
{
	static char buf[4 * 4000 + 1];
	uint64_t seed = 0xfa57ull;

	for (int trial = 0; trial < 600; trial++) {
		simhash_config cfg;
		size_t len;

		test_rnd_seed(seed + (uint64_t)trial);
		len = random_text(buf, 1 + test_rnd() % (trial % 10 == 0 ? 4000 : 120));
		simhash_config_init(&cfg);
		cfg.features = SIMHASH_FEATURES_CHAR; /* the v1 char path, where a tf cap is allowed */
		cfg.ngram = 1 + (unsigned)(test_rnd() % 4);
		cfg.ngram_cjk = 1 + (unsigned)(test_rnd() % 3);
		cfg.bits = trial % 7 == 0 ? 32 : 64;
		if (trial % 5 == 0)
			cfg.bits = 128;
		if (check_paths(&cfg, buf, len, seed + (uint64_t)trial))
			break;
	}
}

/* The compatibility mode's sixteen-lane MD5 against its scalar MD5, through
 * one context each over many texts (the 4-gram table carries over from text
 * to text and fills up and starts over on the long ones). */
static void test_compat_md5_paths_agree(void)
{
	static char buf[4 * 20000 + 1];
	simhash_ctx *vec = NULL, *sca = NULL;
	simhash_config cfg;
	uint64_t seed = 0xc0a7ull;

	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_CHAR; /* the v1 char path, where a tf cap is allowed */
	cfg.compat = SIMHASH_COMPAT_PYTHON_SIMHASH;
	for (int trial = 0; trial < 200; trial++) {
		size_t len;

		if (trial % 100 == 0) {
			cfg.bits = trial ? 128 : 64;
			if (!contexts_new(&cfg, &vec, &sca))
				break;
		}
		test_rnd_seed(seed + (uint64_t)trial);
		len = random_text(buf, 1 + test_rnd() % (trial % 20 == 0 ? 20000 : 300));
		if (!paths_agree(vec, sca, buf, len)) {
			fprintf(stderr, "compat paths differ: seed %llx len %zu\n",
				(unsigned long long)(seed + (uint64_t)trial), len);
			t_cur_failed++;
			break;
		}
	}
	simhash_ctx_free(vec);
	simhash_ctx_free(sca);
}

/* Mostly three-byte CJK characters, in runs of every length: one character
 * in eight is any of chars[] (four-byte Han, ASCII, spaces...). */
static size_t cjk_run_text(char *buf, size_t n_chars)
{
	size_t k = 0;

	for (size_t i = 0; i < n_chars; i++) {
		uint64_t r = test_rnd();
		k = put(buf, k, r % 8 ? chars[r / 8 % 4] : chars[r / 8 % (sizeof chars / sizeof *chars)]);
	}
	buf[k] = 0;
	return k;
}

/* The default features (auto) with the vector paths on and off, through
 * one context each: the char MinHash of short texts, which hashes runs of
 * CJK bigrams eight per vector, and the word scan of the shingle MinHash of
 * longer ones, which takes a run of CJK characters (each a word) at once.
 * Texts of every length zone, whose runs cross the windows of both and the
 * 256-word blocks of the scan, four-byte Han and text ends included. */
static void test_default_paths_agree_on_cjk_runs(void)
{
	static char buf[4 * 4000 + 1];
	simhash_ctx *vec = NULL, *sca = NULL;
	simhash_config cfg;
	uint64_t seed = 0xc1c1ull;

	for (int trial = 0; trial < 300; trial++) {
		size_t len;

		if (trial % 100 == 0) {
			simhash_config_init(&cfg);
			cfg.bits = trial == 0 ? 64 : trial == 100 ? 128 : 32;
			if (!contexts_new(&cfg, &vec, &sca))
				break;
		}
		test_rnd_seed(seed + (uint64_t)trial);
		len = trial % 2 ? cjk_run_text(buf, 1 + test_rnd() % (trial % 3 == 0 ? 4000 : 300))
				: random_text(buf, 1 + test_rnd() % (trial % 3 == 0 ? 4000 : 900));
		if (!paths_agree(vec, sca, buf, len)) {
			fprintf(stderr, "default paths differ: seed %llx bits %u len %zu\n",
				(unsigned long long)(seed + (uint64_t)trial), cfg.bits, len);
			t_cur_failed++;
			break;
		}
	}
	simhash_ctx_free(vec);
	simhash_ctx_free(sca);
}

/* Runs of characters of one width: 1, 2 (Cyrillic, combining marks), 3
 * (Tibetan marks, Han) and 4 bytes (musical marks, Extension B Han), each
 * run 1 to 200 characters, a space now and then (few words: the char
 * MinHash decides). */
static size_t equal_width_text(char *buf, size_t n_chars, int spaces)
{
	static const char *const widths[][3] = {
		{ "a", "Z", "7" },
		{ "\xd0\xb6", "\xcc\x81", "\xcc\x96" },             /* ж U+0301 U+0316 */
		{ "\xe0\xbd\xb1", "\xe0\xbe\x80", "\xe4\xb8\xad" }, /* U+0F71 U+0F80 中 */
		{ "\xf0\x9d\x85\xa5", "\xf0\x9d\x85\xa7", "\xf0\xa0\xae\xb7" }, /* U+1D165 U+1D167 𠮷 */
	};
	size_t k = 0, i = 0;

	while (i < n_chars) {
		size_t w = test_rnd() % 4, run = 1 + test_rnd() % 200;
		for (size_t j = 0; j < run && i < n_chars; j++, i++) {
			k = put(buf, k, spaces && test_rnd() % 64 == 0 ? " " : widths[w][test_rnd() % 3]);
		}
	}
	buf[k] = 0;
	return k;
}

/* The char MinHash of windows of one width (the AVX-512 kernel for
 * characters of 1 to 4 bytes, 4 to 16 bytes a window) against the scalar
 * path: n-grams of 2 to 8 characters, CJK windows as long or bigrams, every
 * width; runs start and end at every position of the eight-window blocks. */
static void test_default_paths_agree_on_equal_width_runs(void)
{
	static char buf[4 * 3000 + 1];
	uint64_t seed = 0x3e1d7ull;

	for (int trial = 0; trial < 240; trial++) {
		simhash_ctx *vec = NULL, *sca = NULL;
		simhash_config cfg;
		size_t len;

		simhash_config_init(&cfg);
		cfg.bits = trial % 3 == 0 ? 64 : trial % 3 == 1 ? 128 : 32;
		cfg.ngram = 2 + (unsigned)(trial / 3) % 7;
		cfg.ngram_cjk = trial % 4 == 0 ? 0 : trial % 4 == 1 ? cfg.ngram : 2;
		if (contexts_new(&cfg, &vec, &sca)) {
			test_rnd_seed(seed + (uint64_t)trial);
			len = equal_width_text(buf, 1 + test_rnd() % 3000, trial % 5 == 0);
			if (!paths_agree(vec, sca, buf, len)) {
				fprintf(stderr, "equal-width paths differ: seed %llx bits %u ngram %u/%u len %zu\n",
					(unsigned long long)(seed + (uint64_t)trial), cfg.bits, cfg.ngram,
					cfg.ngram_cjk, len);
				t_cur_failed++;
			}
		}
		simhash_ctx_free(vec);
		simhash_ctx_free(sca);
	}
}

TEST_MAIN("fastpath", TEST(test_compat_md5_paths_agree), TEST(test_extension_b_han_before_a_short_char),
	  TEST(test_fast_path_equals_plain_path_on_mixed_widths),
	  TEST(test_default_paths_agree_on_cjk_runs),
	  TEST(test_default_paths_agree_on_equal_width_runs))
