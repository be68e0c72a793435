/* test_scheme.c - scheme strings: known values, the parser's round trip over
 * random configurations, rejection of every non-canonical string, and the
 * check of IDF and stop-word tables by digest. */
#include <stdint.h>
#include "../test.h"
#include "simhash.h"

static uint64_t rng_state;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static simhash_idf *idf_table;
static simhash_stopwords *stop_table;

/* A random valid configuration (tables from the globals). */
static void random_config(simhash_config *cfg)
{
	static const unsigned widths[] = {32, 64, 128};

	simhash_config_init(cfg);
	cfg->bits = widths[rng() % 3];
	if (rng() % 10 == 0) {
		cfg->compat = SIMHASH_COMPAT_PYTHON_SIMHASH;
		cfg->bits = rng() % 2 ? 64 : 128;
		return;
	}
	cfg->casefold = (int)(rng() % 2);
	cfg->html = (int)(rng() % 2);
	cfg->t2s = (int)(rng() % 2);
	cfg->space = (simhash_space)(rng() % 3);
	cfg->punct = (simhash_punct)(rng() % 2);
	cfg->max_repeat = rng() % 3 ? 0 : (unsigned)(rng() % 1000);
	cfg->utf8 = (simhash_utf8)(rng() % 2);
	cfg->features = (simhash_features)(rng() % 3);
	cfg->ngram = 1 + (unsigned)(rng() % 64);
	cfg->ngram_cjk = (unsigned)(rng() % 65);
	cfg->tokenizer = (simhash_tokenizer)(rng() % 2);
	cfg->hash = (simhash_hash)(rng() % 4);
	cfg->weight = (simhash_weight)(rng() % 4);
	cfg->tf_cap = rng() % 2 ? 0 : (unsigned)(rng() % 100000);
	if (rng() % 2)
		cfg->stopwords = stop_table;
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF)
		cfg->idf = idf_table;
}

static void test_default_scheme_parses_to_the_default(void)
{
	simhash_config cfg, def;
	char s[SIMHASH_SCHEME_MAX], s2[SIMHASH_SCHEME_MAX];

	simhash_config_init(&def);
	CHECK(simhash_config_scheme(&def, s, sizeof s) == SIMHASH_OK);
	simhash_config_init(&cfg);
	cfg.bits = 128;
	cfg.features = SIMHASH_FEATURES_WORD;
	CHECK(simhash_config_from_scheme(s, &cfg) == SIMHASH_OK);
	CHECK(simhash_config_scheme(&cfg, s2, sizeof s2) == SIMHASH_OK);
	CHECK_STR(s2, s);
	CHECK(cfg.bits == def.bits && cfg.features == def.features && cfg.ngram == def.ngram);
}

static void test_v1_strings_parse_to_their_options(void)
{
	simhash_config cfg;

	simhash_config_init(&cfg);
	CHECK(simhash_config_from_scheme("v1/f128/shingle3-icu/md5/logtf-cap7/raw+html+rep2/"
					 "sp-drop/pu-keep",
					 &cfg) == SIMHASH_OK);
	CHECK(cfg.bits == 128 && cfg.features == SIMHASH_FEATURES_SHINGLE && cfg.ngram == 3);
	CHECK(cfg.tokenizer == SIMHASH_TOKENIZER_ICU && cfg.hash == SIMHASH_HASH_MD5);
	CHECK(cfg.weight == SIMHASH_WEIGHT_LOGTF && cfg.tf_cap == 7);
	CHECK(!cfg.casefold && !cfg.t2s && cfg.html && cfg.max_repeat == 2);
	CHECK(cfg.space == SIMHASH_SPACE_DROP && cfg.punct == SIMHASH_PUNCT_KEEP);
	CHECK(simhash_config_from_scheme("v1/f32/char5-cjk1/fnv1a/binary/nfkc-cf/sp-collapse/pu-drop",
					 &cfg) == SIMHASH_OK);
	CHECK(cfg.bits == 32 && cfg.features == SIMHASH_FEATURES_CHAR && cfg.ngram == 5 &&
	      cfg.ngram_cjk == 1 && cfg.hash == SIMHASH_HASH_FNV1A &&
	      cfg.weight == SIMHASH_WEIGHT_BINARY && cfg.casefold && !cfg.t2s && !cfg.html &&
	      cfg.max_repeat == 0);
	CHECK(simhash_config_from_scheme("v1/f128/python-simhash-2.1.2", &cfg) == SIMHASH_OK);
	CHECK(cfg.compat == SIMHASH_COMPAT_PYTHON_SIMHASH && cfg.bits == 128);
}

static void test_round_trip_over_random_configs(void)
{
	uint64_t seed = 0x5c4e3e00ull;

	rng_state = seed;
	for (int i = 0; i < 20000; i++) {
		simhash_config cfg, back;
		char s[SIMHASH_SCHEME_MAX], s2[SIMHASH_SCHEME_MAX];
		simhash_err err;

		random_config(&cfg);
		if (simhash_config_scheme(&cfg, s, sizeof s) != SIMHASH_OK) {
			fprintf(stderr, "seed %llx: config %d has no scheme\n",
				(unsigned long long)seed, i);
			CHECK(0);
			return;
		}
		simhash_config_init(&back);
		back.idf = idf_table;
		back.stopwords = stop_table;
		back.utf8 = cfg.utf8;
		err = simhash_config_from_scheme(s, &back);
		if (err != SIMHASH_OK || simhash_config_scheme(&back, s2, sizeof s2) ||
		    strcmp(s, s2)) {
			fprintf(stderr, "seed %llx: %s does not round-trip (%d, %s)\n",
				(unsigned long long)seed, s, (int)err, err ? "" : s2);
			CHECK(0);
			return;
		}
	}
}

/* Every mutation of a valid string that is not itself what render writes is refused. */
static void test_non_canonical_strings_are_corrupt(void)
{
	static const char *const bad[] = {
		"", "v1", "v1/", "v1/f64", "v1/f64/", "v2/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f63/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f064/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char03-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk3/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk0/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char0/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char65/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh4/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tf-cap0/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/binary-cap3/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tfidf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tfidf-idf0123/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+html+t2s/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s+rep0/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc/sp-auto/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop/",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop ",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-autox/pu-drop",
		"v1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop/stop0123456789abcdef",
		"v1/f64/word-simple/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop/stop0123456789ABCDEF",
		"v1/f64/word-simple/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop/stop0123456789abcde",
		"v1/f64/word3-simple/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/shingle3/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f32/python-simhash-2.1.2",
		"v1/f64/python-simhash-2.1.2/",
		"V1/f64/char3-cjk2/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
		"v1/f64/char99999999999/xxh3/tf/nfkc-cf+t2s/sp-auto/pu-drop",
	};
	simhash_config cfg, before;

	simhash_config_init(&cfg);
	cfg.bits = 128;
	before = cfg;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		simhash_err err = simhash_config_from_scheme(bad[i], &cfg);
		if (err != SIMHASH_ECORRUPT)
			fprintf(stderr, "accepted: '%s' (%d)\n", bad[i], (int)err);
		CHECK(err == SIMHASH_ECORRUPT);
		CHECK(memcmp(&cfg, &before, sizeof cfg) == 0);
		CHECK(simhash_scheme_tables(bad[i], NULL, NULL, NULL) == SIMHASH_ECORRUPT);
	}
	CHECK(simhash_config_from_scheme(NULL, &cfg) == SIMHASH_EINVAL);
	CHECK(simhash_config_from_scheme("v1/f64/python-simhash-2.1.2", NULL) == SIMHASH_EINVAL);
}

/* Random byte edits of valid strings: accepted only if they render back identically. */
static void test_random_mutations_parse_only_when_canonical(void)
{
	uint64_t seed = 0xbadc0ffeull;

	rng_state = seed;
	for (int i = 0; i < 20000; i++) {
		simhash_config cfg, back;
		char s[SIMHASH_SCHEME_MAX], s2[SIMHASH_SCHEME_MAX];
		size_t len, pos;

		random_config(&cfg);
		if (simhash_config_scheme(&cfg, s, sizeof s))
			continue;
		len = strlen(s);
		pos = rng() % len;
		s[pos] = "0123456789abcdefv/-+xyz"[rng() % 23];
		simhash_config_init(&back);
		back.idf = idf_table;
		back.stopwords = stop_table;
		if (simhash_config_from_scheme(s, &back) == SIMHASH_OK) {
			CHECK(simhash_config_scheme(&back, s2, sizeof s2) == SIMHASH_OK);
			if (strcmp(s, s2)) {
				fprintf(stderr, "seed %llx: '%s' parsed as '%s'\n",
					(unsigned long long)seed, s, s2);
				CHECK(0);
				return;
			}
		}
	}
}

static void test_tables_are_named_by_digest(void)
{
	simhash_config cfg;
	simhash_idf *other;
	char s[SIMHASH_SCHEME_MAX];
	unsigned which = 99;
	uint64_t idf_d = 1, stop_d = 1;

	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_SHINGLE;
	cfg.weight = SIMHASH_WEIGHT_TFIDF;
	cfg.idf = idf_table;
	cfg.stopwords = stop_table;
	CHECK(simhash_config_scheme(&cfg, s, sizeof s) == SIMHASH_OK);
	CHECK(simhash_scheme_tables(s, &which, &idf_d, &stop_d) == SIMHASH_OK);
	CHECK(which == (SIMHASH_SCHEME_IDF | SIMHASH_SCHEME_STOPWORDS));
	CHECK_EQ_U64(idf_d, simhash_idf_digest(idf_table));
	CHECK_EQ_U64(stop_d, simhash_stopwords_digest(stop_table));

	/* missing tables: every other field filled, ESCHEME */
	simhash_config_init(&cfg);
	CHECK(simhash_config_from_scheme(s, &cfg) == SIMHASH_ESCHEME);
	CHECK(cfg.features == SIMHASH_FEATURES_SHINGLE && cfg.weight == SIMHASH_WEIGHT_TFIDF);

	/* a table with another digest */
	CHECK(simhash_idf_new(&other) == SIMHASH_OK);
	CHECK(simhash_idf_set(other, "x", 1, 2.0) == SIMHASH_OK);
	simhash_config_init(&cfg);
	cfg.idf = other;
	cfg.stopwords = stop_table;
	CHECK(simhash_config_from_scheme(s, &cfg) == SIMHASH_ESCHEME);
	cfg.idf = idf_table;
	CHECK(simhash_config_from_scheme(s, &cfg) == SIMHASH_OK);
	simhash_idf_free(other);

	/* a stop-word list the scheme does not name is dropped for words */
	simhash_config_init(&cfg);
	cfg.stopwords = stop_table;
	CHECK(simhash_config_from_scheme("v1/f64/word-simple/xxh3/tf/nfkc-cf/sp-auto/pu-drop",
					 &cfg) == SIMHASH_OK);
	CHECK(cfg.stopwords == NULL);
	CHECK(simhash_scheme_tables("v1/f64/word-simple/xxh3/tf/nfkc-cf/sp-auto/pu-drop", &which,
				    &idf_d, &stop_d) == SIMHASH_OK);
	CHECK(which == 0 && idf_d == 0 && stop_d == 0);
}

/* A caller built against an older, shorter config: nothing past its size is written. */
static void test_parse_writes_only_the_callers_size(void)
{
	unsigned char raw[sizeof(simhash_config) + 16];
	simhash_config *cfg = (simhash_config *)(void *)raw;
	size_t old = offsetof(simhash_config, idf) + sizeof(cfg->idf);

	memset(raw, 0xa5, sizeof raw);
	simhash_config_init(cfg);
	memset(raw + sizeof(simhash_config), 0xa5, 16);
	cfg->size = old;
	CHECK(simhash_config_from_scheme("v1/f32/char4/xxh3/tf/nfkc-cf/sp-auto/pu-drop", cfg) ==
	      SIMHASH_OK);
	CHECK(cfg->bits == 32 && cfg->ngram == 4);
	for (size_t i = old; i < sizeof raw; i++)
		if (raw[i] != 0xa5 && i >= sizeof(simhash_config)) {
			CHECK(0);
			break;
		}
}

static void setup(void)
{
	simhash_idf_new(&idf_table);
	simhash_idf_set(idf_table, "abc", 3, 1.5);
	simhash_idf_set(idf_table, "de", 2, 3.25);
	simhash_stopwords_new(&stop_table);
	simhash_stopwords_add(stop_table, "the", 3);
	simhash_stopwords_add(stop_table, "of", 2);
}

static void test_setup(void) { setup(); CHECK(idf_table && stop_table); }

TEST_MAIN("scheme",
	  TEST(test_setup),
	  TEST(test_default_scheme_parses_to_the_default),
	  TEST(test_v1_strings_parse_to_their_options),
	  TEST(test_round_trip_over_random_configs),
	  TEST(test_non_canonical_strings_are_corrupt),
	  TEST(test_random_mutations_parse_only_when_canonical),
	  TEST(test_tables_are_named_by_digest),
	  TEST(test_parse_writes_only_the_callers_size))
