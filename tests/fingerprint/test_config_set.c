/* test_config_set.c - simhash_config_set(): each option name and value sets the
 * field the command line's flag sets, bad values leave the config untouched. */
#include "simhash.h"
#include "test.h"

static void test_enum_number_and_flag_options_set_their_fields(void)
{
	simhash_config c;

	simhash_config_init(&c);
	CHECK(simhash_config_set(&c, "bits", "128") == SIMHASH_OK && c.bits == 128);
	CHECK(simhash_config_set(&c, "bits", "32") == SIMHASH_OK && c.bits == 32);
	CHECK(simhash_config_set(&c, "features", "shingle") == SIMHASH_OK &&
	      c.features == SIMHASH_FEATURES_SHINGLE);
	CHECK(simhash_config_set(&c, "ngram", "5") == SIMHASH_OK && c.ngram == 5);
	CHECK(simhash_config_set(&c, "ngram-cjk", "0") == SIMHASH_OK && c.ngram_cjk == 0);
	CHECK(simhash_config_set(&c, "hash", "md5") == SIMHASH_OK && c.hash == SIMHASH_HASH_MD5);
	CHECK(simhash_config_set(&c, "weight", "logtf") == SIMHASH_OK &&
	      c.weight == SIMHASH_WEIGHT_LOGTF);
	CHECK(simhash_config_set(&c, "tf-cap", "4294967295") == SIMHASH_OK &&
	      c.tf_cap == 4294967295u);
	CHECK(simhash_config_set(&c, "no-t2s", NULL) == SIMHASH_OK && c.t2s == 0);
	CHECK(simhash_config_set(&c, "t2s", NULL) == SIMHASH_OK && c.t2s == 1);
	CHECK(simhash_config_set(&c, "html", NULL) == SIMHASH_OK && c.html == 1);
	CHECK(simhash_config_set(&c, "no-casefold", NULL) == SIMHASH_OK && c.casefold == 0);
	CHECK(simhash_config_set(&c, "space", "drop") == SIMHASH_OK && c.space == SIMHASH_SPACE_DROP);
	CHECK(simhash_config_set(&c, "punct", "keep") == SIMHASH_OK && c.punct == SIMHASH_PUNCT_KEEP);
	CHECK(simhash_config_set(&c, "utf8", "reject") == SIMHASH_OK && c.utf8 == SIMHASH_UTF8_REJECT);
	CHECK(simhash_config_set(&c, "compat", "python-simhash") == SIMHASH_OK &&
	      c.compat == SIMHASH_COMPAT_PYTHON_SIMHASH);
	CHECK(simhash_config_set(&c, "tokenizer", "icu") == SIMHASH_OK &&
	      c.tokenizer == SIMHASH_TOKENIZER_ICU);
	CHECK(simhash_config_set(&c, "max-repeat", "3") == SIMHASH_OK && c.max_repeat == 3);
}

/* The v2 default takes tf, no cap and XXH3: a weight, cap or hash given
 * without features means v1 char n-grams; named features are kept. */
static void test_settle_features_switches_auto_only_when_needed(void)
{
	simhash_config c;

	simhash_config_init(&c);
	simhash_config_settle_features(&c, 0);
	CHECK(c.features == SIMHASH_FEATURES_AUTO && simhash_config_check(&c) == SIMHASH_OK);
	CHECK(simhash_config_set(&c, "weight", "logtf") == SIMHASH_OK);
	CHECK(simhash_config_check(&c) != SIMHASH_OK);
	simhash_config_settle_features(&c, 1);
	CHECK(c.features == SIMHASH_FEATURES_AUTO);
	simhash_config_settle_features(&c, 0);
	CHECK(c.features == SIMHASH_FEATURES_CHAR && simhash_config_check(&c) == SIMHASH_OK);
	simhash_config_init(&c);
	CHECK(simhash_config_set(&c, "tf-cap", "3") == SIMHASH_OK);
	simhash_config_settle_features(&c, 0);
	CHECK(c.features == SIMHASH_FEATURES_CHAR);
	simhash_config_init(&c);
	CHECK(simhash_config_set(&c, "hash", "fnv1a") == SIMHASH_OK);
	simhash_config_settle_features(&c, 0);
	CHECK(c.features == SIMHASH_FEATURES_CHAR);
	simhash_config_init(&c);
	CHECK(simhash_config_set(&c, "features", "word") == SIMHASH_OK &&
	      simhash_config_set(&c, "weight", "binary") == SIMHASH_OK);
	simhash_config_settle_features(&c, 0);
	CHECK(c.features == SIMHASH_FEATURES_WORD);
}

static void test_bad_names_and_values_leave_config_untouched(void)
{
	simhash_config c, d;
	static const char *const bad[][2] = {
		{ "bits", "16" }, { "bits", NULL }, { "ngram", "0" }, { "ngram", "65" },
		{ "ngram", "-1" }, { "ngram", "+3" }, { "ngram", " 3" }, { "ngram", "3x" },
		{ "ngram", "" }, { "tf-cap", "4294967296" }, { "ngram-cjk", "65" },
		{ "hash", "XXH3" }, { "t2s", "1" }, { "stopwords", "f" }, { "idf", "jieba" },
		{ "--bits", "64" }, { "", NULL }, { "nope", NULL },
	};
	size_t i;

	simhash_config_init(&c);
	d = c;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(simhash_config_set(&c, bad[i][0], bad[i][1]) == SIMHASH_EINVAL);
		CHECK(memcmp(&c, &d, sizeof c) == 0);
	}
	CHECK(simhash_config_set(NULL, "bits", "64") == SIMHASH_EINVAL);
	CHECK(simhash_config_set(&c, NULL, "64") == SIMHASH_EINVAL);
	CHECK(simhash_config_option_takes_value("bits") == 1);
	CHECK(simhash_config_option_takes_value("no-html") == 0);
	CHECK(simhash_config_option_takes_value("idf") == -1);
}

/* "char-votes" sets the last field, which a caller's struct from before it
 * does not have: refused there, the struct untouched. */
static void test_char_votes_needs_the_field(void)
{
	simhash_config c, d;
	size_t old = offsetof(simhash_config, auto_char_votes);

	simhash_config_init(&c);
	CHECK(c.auto_char_votes == 0);
	CHECK(simhash_config_set(&c, "char-votes", NULL) == SIMHASH_OK);
	CHECK(c.auto_char_votes == 1);
	CHECK(simhash_config_set(&c, "char-votes", "1") == SIMHASH_EINVAL);
	memset(&c, 0x5a, sizeof c);
	simhash_config_init_sized(&c, old);
	CHECK(c.size == old);
	d = c;
	CHECK(simhash_config_set(&c, "char-votes", NULL) == SIMHASH_EINVAL);
	CHECK(memcmp(&c, &d, sizeof c) == 0);
}

/* Every value name simhash_config_value_name gives is one simhash_config_set
 * takes, and sets the field to its index (bits: 32 << index). */
static void test_value_names_are_what_set_takes(void)
{
	static const char *const enums[] = { "bits", "compat", "features", "tokenizer", "hash",
					     "weight", "space", "punct", "utf8" };
	simhash_config c;

	for (size_t o = 0; o < sizeof enums / sizeof enums[0]; o++) {
		unsigned i = 0;
		const char *name;

		for (; (name = simhash_config_value_name(enums[o], i)) != NULL; i++) {
			unsigned got;

			simhash_config_init(&c);
			CHECK(simhash_config_set(&c, enums[o], name) == SIMHASH_OK);
			switch (o) {
			case 0: got = c.bits == 32u << i ? i : ~0u; break;
			case 1: got = (unsigned)c.compat; break;
			case 2: got = (unsigned)c.features; break;
			case 3: got = (unsigned)c.tokenizer; break;
			case 4: got = (unsigned)c.hash; break;
			case 5: got = (unsigned)c.weight; break;
			case 6: got = (unsigned)c.space; break;
			case 7: got = (unsigned)c.punct; break;
			default: got = (unsigned)c.utf8; break;
			}
			CHECK(got == i);
		}
		CHECK(i >= 2);
	}
	CHECK(strcmp(simhash_config_value_name("features", SIMHASH_FEATURES_WORD), "word") == 0);
	CHECK(strcmp(simhash_config_value_name("bits", 2), "128") == 0);
	CHECK(simhash_config_value_name("bits", 3) == NULL);
	CHECK(simhash_config_value_name("ngram", 0) == NULL);
	CHECK(simhash_config_value_name("no-html", 0) == NULL);
	CHECK(simhash_config_value_name("idf", 0) == NULL);
	CHECK(simhash_config_value_name(NULL, 0) == NULL);
}

TEST_MAIN("config_set",
	  TEST(test_value_names_are_what_set_takes),
	  TEST(test_char_votes_needs_the_field),
	  TEST(test_enum_number_and_flag_options_set_their_fields),
	  TEST(test_bad_names_and_values_leave_config_untouched),
	  TEST(test_settle_features_switches_auto_only_when_needed))
