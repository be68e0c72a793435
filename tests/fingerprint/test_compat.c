/* test_compat.c - the Python `simhash` 2.1.2 compatibility mode (fingerprint/compat.c).
 *
 * 1. Every vector the real package produced (tests/data/compat/, copied from
 *    the shared compat/ folder; read relative to the repository root).
 * 2. Derived vectors: tables of cases the description pins down (Unicode
 *    lowercasing, Python's \w, windows, weights, float order, 128 bits), with
 *    values computed by a model of the package on Python 3.11 (its own
 *    str.lower() and re; numpy emulated) since numpy is not available here.
 * 3. Property tests against deliberately slow references written from the
 *    description: ICU's u_strToLower() on UTF-16, a sorted list of windows and a
 *    plain bit vote for text; a literal replay of build_by_features() (a byte
 *    batch, a growing list of rows, unpackbits order) for features.
 */
#include <math.h>
#include <stdint.h>
#include <jansson.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include "common/internal.h"
#include "test.h"

#define VECTORS_TEXT "tests/data/compat/python_simhash_vectors.tsv"
#define VECTORS_FEATURES "tests/data/compat/python_simhash_feature_vectors.tsv"

/* ---------------------------------------------------------------- helpers */

static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void fp_hex(const simhash_fp *fp, char *buf)
{
	if (fp->bits == 128)
		sprintf(buf, "%016llx%016llx", (unsigned long long)fp->w[1],
			(unsigned long long)fp->w[0]);
	else
		sprintf(buf, "%016llx", (unsigned long long)fp->w[0]);
}

/* UTF-8 to code points (the vectors are valid UTF-8); caller frees. */
static uint32_t *decode(const char *s, size_t len, size_t *n)
{
	uint32_t *cps = malloc((len + 1) * sizeof *cps);
	size_t i = 0;
	int bad;

	*n = 0;
	while (i < len)
		i += sh_utf8_next((const uint8_t *)s, len, i, &cps[(*n)++], &bad);
	return cps;
}

static simhash_err text_fp(sh_compat *c, const char *s, size_t len, unsigned bits,
			   simhash_fp *out)
{
	size_t n;
	uint32_t *cps = decode(s, len, &n);
	simhash_err err = sh_compat_text(c, cps, n, bits, out);

	free(cps);
	return err;
}

/* A JSON list of "feature" or [feature, weight] into features pointing into
 * the JSON value; 0 on a malformed list. Caller frees *out. */
static int features_from_json(json_t *list, simhash_feature **out, size_t *n)
{
	size_t i;
	json_t *e;

	if (!json_is_array(list))
		return 0;
	*n = json_array_size(list);
	*out = calloc(*n + 1, sizeof **out);
	json_array_foreach(list, i, e) {
		json_t *s = json_is_array(e) ? json_array_get(e, 0) : e;
		json_t *w = json_is_array(e) ? json_array_get(e, 1) : NULL;

		if (!json_is_string(s) || (json_is_array(e) && !json_is_number(w)))
			return 0;
		(*out)[i].data = json_string_value(s);
		(*out)[i].len = json_string_length(s);
		(*out)[i].weight = w ? json_number_value(w) : 1.0;
	}
	return 1;
}

static simhash_err json_features_fp(sh_compat *c, const char *json, unsigned bits,
				    simhash_fp *out)
{
	json_error_t jerr;
	json_t *list = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	simhash_feature *f = NULL;
	simhash_err err = SIMHASH_ECORRUPT;
	size_t n;

	if (list && features_from_json(list, &f, &n))
		err = sh_compat_features(c, f, n, bits, out);
	free(f);
	json_decref(list);
	return err;
}

/* ---------------------------------------------------------------- the package's own vectors */

/* Runs every `JSON<TAB>decimal<TAB>hex` line of path; returns how many passed,
 * *total how many there were. */
static int run_vector_file(const char *path, int is_text, int *total)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL, hex[SIMHASH_HEX_MAX];
	size_t cap = 0;
	int passed = 0;
	sh_compat *c = NULL;

	*total = 0;
	CHECK(fp != NULL);
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	if (!fp || !c)
		goto out;
	while (getline(&line, &cap, fp) > 0) {
		char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		simhash_fp got = { { 0, 0 }, 0 };
		simhash_err err;
		json_error_t jerr;
		json_t *j;

		if (line[0] == '#')
			continue;
		CHECK(tab1 && tab2);
		if (!tab1 || !tab2)
			continue;
		*tab1 = *tab2 = '\0';
		(*total)++;
		tab2[1 + strcspn(tab2 + 1, "\r\n")] = '\0';
		if (is_text) {
			j = json_loads(line, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
			CHECK(json_is_string(j));
			err = json_is_string(j) ? text_fp(c, json_string_value(j),
							 json_string_length(j), 64, &got)
						: SIMHASH_ECORRUPT;
			json_decref(j);
		} else {
			err = json_features_fp(c, line, 64, &got);
		}
		fp_hex(&got, hex);
		if (err == SIMHASH_OK && got.bits == 64 &&
		    got.w[0] == strtoull(tab1 + 1, NULL, 10) && strcmp(hex, tab2 + 1) == 0) {
			passed++;
		} else {
			fprintf(stderr, "%s: %.60s: got %s (err %d), want %s\n", path, line, hex,
				(int)err, tab2 + 1);
			t_cur_failed++;
		}
	}
out:
	free(line);
	if (fp)
		fclose(fp);
	sh_compat_free(c);
	return passed;
}

static void test_all_80_text_vectors_of_the_package(void)
{
	int total, passed = run_vector_file(VECTORS_TEXT, 1, &total);

	CHECK(total == 80);
	CHECK(passed == total);
}

static void test_all_42_feature_vectors_of_the_package(void)
{
	int total, passed = run_vector_file(VECTORS_FEATURES, 0, &total);

	CHECK(total == 42);
	CHECK(passed == total);
}

/* ---------------------------------------------------------------- derived text vectors */

static const struct {
	const char *text;
	const char *want64, *want128;
} text_cases[] = {
	/* U+0130 lowercases to i + U+0307 (full mapping); the mark is then dropped: md5("i") */
	{ "\u0130", "e5caa3387c1a8741", "865c0c0b4ab0e063e5caa3387c1a8741" },
	/* İstanbul: the same value as istanbul */
	{ "\u0130stanbul", "935bc310ddcdb051", "33337b45afb5e5de935bc310ddcdb051" },
	{ "istanbul", "935bc310ddcdb051", "33337b45afb5e5de935bc310ddcdb051" },
	/* ΟΔΟΣ: final sigma, the same as οδος written with ς */
	{ "ΟΔΟΣ", "227333b18249e967", "1eba365d4aae2732227333b18249e967" },
	{ "οδος", "227333b18249e967", "1eba365d4aae2732227333b18249e967" },
	/* οδοσ with a medial sigma differs */
	{ "οδοσ", "e1f3bfb81cb1c418", "44c5dcc09344a5bbe1f3bfb81cb1c418" },
	/* ΣΑΣ ΣΑΣ: σας twice; the space ends a word, then the sigma is initial */
	{ "ΣΑΣ ΣΑΣ", "6941178b9e37db90", "f75b034235dd48da6941178b9e37db90" },
	/* Σ alone: nothing cased before it, so σ */
	{ "Σ", "5cb9bbe1c92165c3", "3122c41ebe889f745cb9bbe1c92165c3" },
	/* ΑΣ'Β: the apostrophe is case-ignorable and Β is cased, so σ */
	{ "ΑΣ'Β", "9d8d757476741a99", "c1c62c4c1666d3229d8d757476741a99" },
	/* ΑΣ + combining acute: only case-ignorables to the end, so ς; the mark is dropped */
	{ "ΑΣ\u0301", "7cc28c035b896db9", "8d928585d0282aa07cc28c035b896db9" },
	/* soft hyphen (Cf) is case-ignorable too: σ before a cased letter, ς at the end */
	{ "ΑΣ\u00adΒ", "9d8d757476741a99", "c1c62c4c1666d3229d8d757476741a99" },
	{ "ΑΣ\u00ad", "7cc28c035b896db9", "8d928585d0282aa07cc28c035b896db9" },
	/* a digit before Σ is not cased: σ */
	{ "1Σ", "01fbba9c8a3d0768", "e35bdf907770958401fbba9c8a3d0768" },
	/* titlecase ǅ is cased: ς */
	{ "ǅΣ", "bd921ff7c782b5af", "3e03f0576380598bbd921ff7c782b5af" },
	/* U+0345 is cased and case-ignorable; ignorable wins, nothing before: σ */
	{ "\u0345Σ", "5cb9bbe1c92165c3", "3122c41ebe889f745cb9bbe1c92165c3" },
	/* AΣ U+0345 b: U+0345 skipped, then cased b: σ */
	{ "AΣ\u0345b", "19112ae44261abbc", "e5f59413ffbab67419112ae44261abbc" },
	/* combining marks vanish with their word boundary: e\u0301te\u0301 is ete */
	{ "e\u0301te\u0301", "fa06c9ee6bd5d1c1", "d52389d3280207c6fa06c9ee6bd5d1c1" },
	{ "ete", "fa06c9ee6bd5d1c1", "d52389d3280207c6fa06c9ee6bd5d1c1" },
	/* ² (No) is kept, + dropped: x²y² */
	{ "x²+y²", "27c6dc99e2438df7", "6b72e6a87e27950d27c6dc99e2438df7" },
	/* ½ (No) and Ⅷ (Nl) kept; Ⅷ lowercases to ⅷ: the same as ⅷ½ */
	{ "½ Ⅷ", "74fc66dfa3448b9e", "53ed7b0433f736a074fc66dfa3448b9e" },
	{ "ⅷ½", "613f741cd04b3348", "9843edd32b22f2c2613f741cd04b3348" },
	/* emoji and flags dropped: the same as abc */
	{ "a😀b🇩🇪c", "d6963f7d28e17f72", "900150983cd24fb0d6963f7d28e17f72" },
	/* 3 code points: one feature, the whole string: md5("abc") */
	{ "abc", "d6963f7d28e17f72", "900150983cd24fb0d6963f7d28e17f72" },
	/* '_' is \w: a_b differs from ab */
	{ "a_b", "4a5967753b43784f", "dbf08e00b01fd58a4a5967753b43784f" },
	{ "ab", "2f40dc2b92f0eba0", "187ef4436122d1cc2f40dc2b92f0eba0" },
	/* empty: one feature, the empty string: md5("") */
	{ "", "e9800998ecf8427e", "d41d8cd98f00b204e9800998ecf8427e" },
	/* only punctuation and spaces: the same as empty */
	{ "!?. ,", "e9800998ecf8427e", "d41d8cd98f00b204e9800998ecf8427e" },
	/* repeated 4-grams: abca, bcab, cabc weigh 3, 3, 3 */
	{ "abcabcabcabc", "a4e3efeb4515ed4d", "85d9e81025d92928a4e3efeb4515ed4d" },
	/* Unicode 15 letters (U+31350 CJK Ext. H, U+11F04 Kawi) are unassigned in Python 3.11: abc */
	{ "a\U00031350b\U00011F04c", "d6963f7d28e17f72", "900150983cd24fb0d6963f7d28e17f72" },
	/* dotless ı is kept as is, I becomes i */
	{ "ıI", "5a37b039c63dbff5", "4ad2d7a9d017e5fc5a37b039c63dbff5" },
	/* capital sharp s U+1E9E lowercases to ß */
	{ "ẞß", "831067ade0a0eca2", "384fdd19bb523d22831067ade0a0eca2" },
	/* Ǆ ǅ ǆ all become ǆ; Dž stays two letters, lowercased */
	{ "ǄǅǆDž", "8c000084104c1022", "011000450432b8048c000084104c1022" },
	/* Cherokee capitals lowercase to U+AB70.. */
	{ "ᎠᎡᎢ", "daa0905cf2d79dd8", "206e8c8099d98637daa0905cf2d79dd8" },
	/* soft hyphen and zero width space (Cf) dropped between CJK and Latin */
	{ "中文\u00ada\u200bb", "ce2960d3df4e65a1", "acffa47fba13c91cce2960d3df4e65a1" },
	/* the classic examples, at 128 bits too */
	{ "the cat sat on the mat", "a70a20c0b82b14d5", "0cb6d101a1692b82a70a20c0b82b14d5" },
	{ "你妈妈喊你回家吃饭哦，回家罗回家罗", "ecd023487442f33b", "d674ee4ed0cb7dd9ecd023487442f33b" },
};

static void test_derived_text_vectors_at_64_and_128_bits(void)
{
	sh_compat *c = NULL;
	char hex[SIMHASH_HEX_MAX];
	simhash_fp fp;

	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	for (size_t i = 0; c && i < sizeof text_cases / sizeof text_cases[0]; i++) {
		CHECK(text_fp(c, text_cases[i].text, strlen(text_cases[i].text), 64, &fp) == SIMHASH_OK);
		fp_hex(&fp, hex);
		CHECK(fp.bits == 64);
		CHECK_STR(hex, text_cases[i].want64);
		CHECK(text_fp(c, text_cases[i].text, strlen(text_cases[i].text), 128, &fp) == SIMHASH_OK);
		fp_hex(&fp, hex);
		CHECK(fp.bits == 128);
		CHECK_STR(hex, text_cases[i].want128);
	}
	sh_compat_free(c);
}

/* aaaa... (100): one 4-gram weighing 97, over the cutoff of 50: its own row;
 * abab... (600): abab 299 times and baba 298 times. */
static void test_heavy_4grams_in_text(void)
{
	char text[601];
	char hex[SIMHASH_HEX_MAX];
	sh_compat *c = NULL;
	simhash_fp fp;

	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	if (!c)
		return;
	memset(text, 'a', 100);
	CHECK(text_fp(c, text, 100, 64, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "d33f80c4663dc5e5"); /* = the package's vector for "aaaaaaaaa" */
	CHECK(text_fp(c, text, 100, 128, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "74b87337454200d4d33f80c4663dc5e5"); /* md5("aaaa") */
	for (int i = 0; i < 600; i++)
		text[i] = "ab"[i & 1];
	CHECK(text_fp(c, text, 600, 64, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "31b0748f409ce846");
	CHECK(text_fp(c, text, 600, 128, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "585adf88cdd3693831b0748f409ce846");
	sh_compat_free(c);
}

/* ---------------------------------------------------------------- derived feature vectors */

static const struct {
	const char *json;
	const char *want64, *want128;
} feature_cases[] = {
	/* float order: (1e16 + -1e16) + 1, the int batch is summed after the float rows;
	 * added in feature order the 1 would be lost */
	{ "[[\"a\", 1e16], [\"b\", 1], [\"c\", -1e16]]", "3ad31de77d7526cd",
	  "94e177bfe2e82ee83ad31de77d7526cd" },
	/* weights 50 (batch) and 51 (own row) around the cutoff, with floats */
	{ "[[\"a\", 0.1], [\"b\", 50], [\"c\", 0.2], [\"d\", -0.3]]", "3ad71c777531578f",
	  "92eb5ffee6ae2fec3ad71c777531578f" },
	{ "[[\"a\", 0.1], [\"b\", 51], [\"c\", 0.2], [\"d\", -0.3]]", "3ad71c777531578f",
	  "92eb5ffee6ae2fec3ad71c777531578f" },
	/* weight 50 is in the batch, summed after both float rows: a row of its own
	 * (cutoff 49) would give 7926eda3afacae1e */
	{ "[[\"c3\", 50], [\"c98\", -1e17], [\"c74\", 50], [\"c81\", 1e17]]", "7976edb3afadae1e",
	  "bc6ef63ab7a0ef8c7976edb3afadae1e" },
	/* a negative int <= 50 joins the batch as b'' (nothing) but counts: all bits 0 > -0.5 */
	{ "[[\"a\", -1]]", "ffffffffffffffff", "ffffffffffffffffffffffffffffffff" },
	{ "[[\"a\", -60], [\"b\", 1]]", "ffffffffffffffff", "ffffffffffffffffffffffffffffffff" },
	/* a negative float votes: -1.5 > -0.75 is false, -0.0 > -0.75 true: ~md5("a") */
	{ "[[\"a\", -1.5]]", "ce3c661d9688d99e", "f33e8a463f0e4957ce3c661d9688d99e" },
	/* weight 0: nothing exceeds 0 */
	{ "[[\"a\", 0]]", "0000000000000000", "00000000000000000000000000000000" },
	/* 2 and 2.0 are the same weight (the contract), both md5("a") */
	{ "[[\"a\", 2]]", "31c399e269772661", "0cc175b9c0f1b6a831c399e269772661" },
	{ "[[\"a\", 2.0]]", "31c399e269772661", "0cc175b9c0f1b6a831c399e269772661" },
	/* two float halves: the same as ["a", "b"] */
	{ "[[\"a\", 0.5], [\"b\", 0.5]]", "30c3186261310601", "00c155b8c0a026a830c3186261310601" },
	/* empty list: 0 */
	{ "[]", "0000000000000000", "00000000000000000000000000000000" },
	/* large int weights at 128 bits (the 64-bit values are the package's vectors) */
	{ "[[\"x\", 1000]]", "f5c8564e155c67a6", "9dd4e461268c8034f5c8564e155c67a6" },
	{ "[[\"x\", 51], [\"y\", 50]]", "f5c8564e155c67a6", "9dd4e461268c8034f5c8564e155c67a6" },
	{ "[[\"p\", 256], [\"q\", 255], [\"r\", 1]]", "0c0d809997a8c038",
	  "03878480031220900c0d809997a8c038" },
	{ "[[\"aaa\", 0], [\"bbb\", 1]]", "10cefb2b06eee5cd", "08f8e0260c64418510cefb2b06eee5cd" },
	{ "[\"aaa\", \"bbb\"]", "00cad12a04a8e008", "00b8e0060c40010000cad12a04a8e008" },
	/* 2^53 is still an int */
	{ "[[\"a\", 9007199254740992], [\"b\", 1], [\"c\", 1]]", "31c399e269772661",
	  "0cc175b9c0f1b6a831c399e269772661" },
	/* 2^53 + 2 is a float: (a + c) + b, the batch last */
	{ "[[\"a\", 9007199254740994.0], [\"b\", 1], [\"c\", -9007199254740994.0]]",
	  "208309c229742040", "0441750940c00088208309c229742040" },
	/* more lists whose value depends on the order of float additions */
	{ "[[\"k47\", -1e16], [\"k16\", 0.001], [\"k16\", -1e16], [\"k46\", 1], [\"k14\", 1], "
	  "[\"k31\", 0.001]]",
	  "52f84c2411175979", "25cd228172a4c8e752f84c2411175979" },
	{ "[[\"k26\", 1], [\"k41\", -1e16], [\"k30\", 1e16]]", "b746508d318057e9",
	  "0c2ba7c9d4e0fe0ab746508d318057e9" },
	{ "[[\"k6\", 3], [\"k2\", 3], [\"k49\", 0.5], [\"k41\", -1e16], [\"k23\", 1e16]]",
	  "00c40ecf03e02648", "414e238a91a43e9000c40ecf03e02648" },
	/* -7e15 is integral and within 2^53, so by the contract an int: it joins the batch
	 * as b'' and votes nothing (a Python float -7e15 would give e7af0de185add950) */
	{ "[[\"k24\", -7e15], [\"k3\", 1e16], [\"k25\", 1], [\"k48\", -7e15], [\"k28\", 1e16]]",
	  "ffbf4dedcfafd955", "ffaf57bf5ddfb96effbf4dedcfafd955" },
	/* the same with -7.5, a float: two float rows, then the batch */
	{ "[[\"k24\", -7.5], [\"k3\", 1e16], [\"k25\", 1], [\"k48\", -7.5], [\"k28\", 1e16]]",
	  "e6820521808dd850", "b529421719c4b160e6820521808dd850" },
	/* -1.0 is the int -1 by the contract: all ones (a Python float -1.0 would give
	 * ce3c661d9688d99e, as -1.5 does) */
	{ "[[\"a\", -1.0]]", "ffffffffffffffff", "ffffffffffffffffffffffffffffffff" },
};

static void test_derived_feature_vectors_at_64_and_128_bits(void)
{
	sh_compat *c = NULL;
	char hex[SIMHASH_HEX_MAX];
	simhash_fp fp;

	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	for (size_t i = 0; c && i < sizeof feature_cases / sizeof feature_cases[0]; i++) {
		for (unsigned bits = 64; bits <= 128; bits += 64) {
			memset(&fp, 0, sizeof fp);
			CHECK(json_features_fp(c, feature_cases[i].json, bits, &fp) == SIMHASH_OK);
			fp_hex(&fp, hex);
			CHECK(fp.bits == bits);
			CHECK_STR(hex, bits == 64 ? feature_cases[i].want64 : feature_cases[i].want128);
		}
	}
	sh_compat_free(c);
}

/* Long lists "f0", "f1", ... cycling through weights of every kind: batches of
 * 200 completed or not, more than 200 rows (sums collapsed), floats among them. */
static const double cycle_weights[] = { 0.1, 7, 51, -0.3, 1, 300, 2.5, 0, 1e16, 1, -1e16, 3 };

static const struct {
	size_t n;
	const char *want64, *want128;
} cycle_cases[] = {
	{ 199, "e6a0368db6b1275b", "f4eecf16bfc1a4d2e6a0368db6b1275b" },
	{ 200, "e6a0368db6b1275b", "f4eecf16bfc1a4d2e6a0368db6b1275b" },
	{ 201, "e6a0368db699255b", "f48ec716b6c186c2e6a0368db699255b" },
	/* here the order of additions decides some bits */
	{ 450, "1a90768ebe305fd9", "e88fc15aafc126c11a90768ebe305fd9" },
	{ 1000, "11b1e78eb038295d", "e187d154bf4022e111b1e78eb038295d" },
};

static void test_long_feature_lists_with_batches_and_collapsed_sums(void)
{
	size_t n_w = sizeof cycle_weights / sizeof cycle_weights[0];
	simhash_feature f[1000];
	char names[1000][8], hex[SIMHASH_HEX_MAX];
	sh_compat *c = NULL;
	simhash_fp fp;

	for (size_t i = 0; i < 1000; i++) {
		snprintf(names[i], sizeof names[i], "f%zu", i);
		f[i].data = names[i];
		f[i].len = strlen(names[i]);
		f[i].weight = cycle_weights[i % n_w];
	}
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	for (size_t i = 0; c && i < sizeof cycle_cases / sizeof cycle_cases[0]; i++) {
		CHECK(sh_compat_features(c, f, cycle_cases[i].n, 64, &fp) == SIMHASH_OK);
		fp_hex(&fp, hex);
		CHECK_STR(hex, cycle_cases[i].want64);
		CHECK(sh_compat_features(c, f, cycle_cases[i].n, 128, &fp) == SIMHASH_OK);
		fp_hex(&fp, hex);
		CHECK_STR(hex, cycle_cases[i].want128);
	}
	sh_compat_free(c);
}

/* Where the batch of 200 closes and where `sums` is collapsed decide roundings:
 * - 250 features b<i> weighing 1, 2, 3, 50 in turn, with "F" and "G" weighing
 *   1e17 at positions 0 and 53: the full batch row lands after both floats (a
 *   batch of 100 would land it between them);
 * - 200 int rows r<i> of 2^53 - 1, 2^53 - 3, 2^52 + 1 in turn, then "F" 0.5: the
 *   200 rows are summed exactly in uint64 first (summing all 201 in float64,
 *   without the collapse, rounds differently);
 * - the same ints with the float as the 200th row. */
static void test_batch_close_and_sums_collapse_positions(void)
{
	static const double batch_w[] = { 1, 2, 3, 50 };
	static const double big_w[] = { 9007199254740991.0, 9007199254740989.0, 4503599627370497.0 };
	simhash_feature f[250];
	char names[250][8], hex[SIMHASH_HEX_MAX]; /* 206 and 250 features */
	sh_compat *c = NULL;
	simhash_fp fp;

	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	if (!c)
		return;
	for (size_t i = 0; i < 250; i++) {
		snprintf(names[i], sizeof names[i], "b%zu", i);
		f[i] = (simhash_feature){ names[i], strlen(names[i]), batch_w[i % 4] };
	}
	f[0] = (simhash_feature){ "F", 1, 1e17 };
	f[53] = (simhash_feature){ "G", 1, 1e17 };
	CHECK(sh_compat_features(c, f, 250, 64, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "869a9c0100ce103e");
	CHECK(sh_compat_features(c, f, 250, 128, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "9246189432252927869a9c0100ce103e");

	for (size_t i = 0; i < 200; i++) {
		snprintf(names[i], sizeof names[i], "r%zu", i);
		f[i] = (simhash_feature){ names[i], strlen(names[i]), big_w[i % 3] };
	}
	f[200] = (simhash_feature){ "F", 1, 0.5 };
	CHECK(sh_compat_features(c, f, 201, 64, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "ac55598d0f0932b5");
	CHECK(sh_compat_features(c, f, 201, 128, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "0c3787217f29c2a4ac55598d0f0932b5");

	/* 199 int rows, "F" 0.5, then r199..r204: the 200 first rows are summed in
	 * float64 (a collapse at 199 rows or fewer would sum the ints exactly) */
	for (size_t i = 0; i < 205; i++) {
		snprintf(names[i], sizeof names[i], "r%zu", i);
		f[i < 199 ? i : i + 1] = (simhash_feature){ names[i], strlen(names[i]), big_w[i % 3] };
	}
	f[199] = (simhash_feature){ "F", 1, 0.5 };
	CHECK(sh_compat_features(c, f, 206, 64, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "ec55598d070932b5");
	CHECK(sh_compat_features(c, f, 206, 128, &fp) == SIMHASH_OK);
	fp_hex(&fp, hex);
	CHECK_STR(hex, "0c3787a17f29c2b5ec55598d070932b5");
	sh_compat_free(c);
}

/* ---------------------------------------------------------------- slow references */

/* Bit j of the big-endian integer made of the last bits/8 bytes of the digest. */
static int digest_bit(const uint8_t dig[16], unsigned j)
{
	return dig[15 - j / 8] >> (j % 8) & 1;
}

struct window {
	uint32_t cp[4];
	size_t len;
};

static int window_cmp(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	for (size_t k = 0; k < 4; k++) {
		if (k == x->len || k == y->len)
			return (x->len > k) - (y->len > k);
		if (x->cp[k] != y->cp[k])
			return x->cp[k] < y->cp[k] ? -1 : 1;
	}
	return 0;
}

static int ref_is_word(UChar32 c)
{
	UVersionInfo age;

	u_charAge(c, age);
	if (age[0] > 14)
		return 0;
	return c == '_' || (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_N_MASK)) != 0;
}

/* Simhash(text, f=bits) the slow way: ICU lowercases the whole UTF-16 string
 * (root locale: full mappings and Final_Sigma), sort the windows, count runs. */
static void ref_text(const uint32_t *cps, size_t n, unsigned bits, simhash_fp *out)
{
	UChar *u16 = malloc((2 * n + 1) * sizeof *u16), *low;
	int32_t len16 = 0, len_low;
	UErrorCode st = U_ZERO_ERROR;
	uint32_t *kept = malloc((2 * n + 1) * sizeof *kept);
	size_t m = 0, n_win, i;
	struct window *win;
	int64_t sums[128] = { 0 };

	for (i = 0; i < n; i++)
		U16_APPEND_UNSAFE(u16, len16, cps[i]);
	len_low = u_strToLower(NULL, 0, u16, len16, "", &st);
	st = U_ZERO_ERROR;
	low = malloc((size_t)(len_low + 1) * sizeof *low);
	u_strToLower(low, len_low + 1, u16, len16, "", &st);
	CHECK(U_SUCCESS(st));
	for (int32_t k = 0; k < len_low;) {
		UChar32 c;

		U16_NEXT(low, k, len_low, c);
		if (ref_is_word(c))
			kept[m++] = (uint32_t)c;
	}
	n_win = m < 4 ? 1 : m - 3;
	win = calloc(n_win, sizeof *win);
	for (i = 0; i < n_win; i++) {
		win[i].len = m < 4 ? m : 4;
		memcpy(win[i].cp, kept + i, win[i].len * sizeof kept[0]);
	}
	qsort(win, n_win, sizeof *win, window_cmp);
	for (i = 0; i < n_win;) {
		size_t run = 1, blen = 0;
		uint8_t buf[16], dig[16];

		while (i + run < n_win && window_cmp(&win[i], &win[i + run]) == 0)
			run++;
		for (size_t k = 0; k < win[i].len; k++)
			blen += sh_utf8_put(buf + blen, win[i].cp[k]);
		sh_md5(buf, blen, dig);
		for (unsigned j = 0; j < bits; j++)
			sums[j] += digest_bit(dig, j) ? (int64_t)run : 0;
		i += run;
	}
	memset(out, 0, sizeof *out);
	out->bits = bits;
	for (unsigned j = 0; j < bits; j++)
		if (2 * sums[j] > (int64_t)n_win)
			out->w[j / 64] |= 1ULL << (j % 64);
	free(win);
	free(low);
	free(kept);
	free(u16);
}

/* build_by_features() replayed literally: rows in unpackbits order (index 0 is
 * the most significant bit), the batch a byte string of digests repeated w
 * times, the list `sums` grown without bound and summed when it holds 200. */
struct ref_row {
	int is_float;
	uint64_t u[128];
	double d[128];
};

static void ref_np_sum(struct ref_row *rows, size_t n, unsigned bits, struct ref_row *res)
{
	int any_float = 0;

	for (size_t r = 0; r < n; r++)
		any_float |= rows[r].is_float;
	memset(res, 0, sizeof *res);
	res->is_float = any_float;
	for (unsigned k = 0; k < bits; k++) {
		for (size_t r = 0; r < n; r++) {
			if (any_float) {
				double x = rows[r].is_float ? rows[r].d[k] : (double)rows[r].u[k];

				res->d[k] = r ? res->d[k] + x : x;
			} else {
				res->u[k] += rows[r].u[k];
			}
		}
	}
}

static void ref_sum_hashes(const uint8_t *batch, size_t len, unsigned bits, struct ref_row *row)
{
	memset(row, 0, sizeof *row);
	for (size_t b = 0; b < len * 8; b++)
		row->u[b % bits] += batch[b / 8] >> (7 - b % 8) & 1;
}

static void ref_features(const simhash_feature *f, size_t n, unsigned bits, simhash_fp *out)
{
	size_t f_bytes = bits / 8, n_rows = 0, cap = 16, batch_n = 0, batch_len = 0;
	struct ref_row *rows = malloc(cap * sizeof *rows), tmp;
	uint8_t *batch = NULL;
	int count_is_float = 0;
	__int128 icount = 0;
	double dcount = 0;

	memset(out, 0, sizeof *out);
	out->bits = bits;
	for (size_t i = 0; i < n; i++) {
		double w = f[i].weight;
		int is_int = w == floor(w) && fabs(w) <= 9007199254740992.0;
		uint8_t dig[16];
		const uint8_t *h = dig + 16 - f_bytes;

		if (is_int && !count_is_float)
			icount += (int64_t)w;
		else if (is_int)
			dcount += w;
		else {
			dcount = (count_is_float ? dcount : (double)icount) + w;
			count_is_float = 1;
		}
		sh_md5(f[i].data, f[i].len, dig);
		if (n_rows + 2 > cap)
			rows = realloc(rows, (cap *= 2) * sizeof *rows);
		if (!is_int || w > 50) {
			struct ref_row *r = &rows[n_rows++];

			r->is_float = !is_int;
			for (unsigned k = 0; k < bits; k++) {
				int bit = h[k / 8] >> (7 - k % 8) & 1;

				r->u[k] = is_int ? (uint64_t)bit * (uint64_t)w : 0;
				r->d[k] = is_int ? 0 : bit * w;
			}
		} else {
			size_t reps = w > 0 ? (size_t)w : 0;

			batch = realloc(batch, batch_len + reps * f_bytes + 1);
			for (size_t k = 0; k < reps; k++, batch_len += f_bytes)
				memcpy(batch + batch_len, h, f_bytes);
			if (++batch_n >= 200) {
				ref_sum_hashes(batch, batch_len, bits, &rows[n_rows++]);
				batch_n = batch_len = 0;
			}
		}
		if (n_rows >= 200) {
			ref_np_sum(rows, n_rows, bits, &tmp);
			rows[0] = tmp;
			n_rows = 1;
		}
	}
	if (batch_n)
		ref_sum_hashes(batch, batch_len, bits, &rows[n_rows++]);
	if (n_rows) {
		double half = count_is_float ? dcount / 2 : (double)icount / 2;

		ref_np_sum(rows, n_rows, bits, &tmp);
		for (unsigned k = 0; k < bits; k++) {
			double x = tmp.is_float ? tmp.d[k] : (double)tmp.u[k];
			unsigned j = bits - 1 - k;

			if (x > half)
				out->w[j / 64] |= 1ULL << (j % 64);
		}
	}
	free(batch);
	free(rows);
}

/* ---------------------------------------------------------------- property tests */

/* Code points that exercise every rule: cases, sigma contexts, marks, numbers,
 * '_', separators, emoji, CJK, Unicode 15 letters. */
static const uint32_t alphabet[] = {
	'a', 'b', 'B', 'Z', '0', '_', ' ', '.', '\'', 0x3A3, 0x3C3, 0x3C2, 0x391, 0x130, 0x131,
	'I', 0x301, 0x345, 0xAD, 0x200B, 0xB2, 0xBD, 0x2167, 0xDF, 0x1E9E, 0x1C5, 0x13A0, 0x1D400,
	0x1F600, 0x4E2D, 0x6587, 0x31350, 0x11F04, 0xFFFD, 0x3000, 0x660,
};

static void random_text(uint32_t *cps, size_t n, size_t n_letters)
{
	for (size_t i = 0; i < n; i++)
		cps[i] = alphabet[rng() % n_letters];
}

static void test_text_matches_slow_reference_on_random_texts(void)
{
	uint64_t seed = 0x5eed0001;
	size_t n_alpha = sizeof alphabet / sizeof alphabet[0];
	uint32_t cps[200];
	sh_compat *c = NULL;
	simhash_fp got, want;
	int bad = 0;

	rng_state = seed;
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	for (int iter = 0; c && iter < 3000 && bad < 5; iter++) {
		size_t n = rng() % (iter % 10 == 0 ? 200 : 12);
		size_t letters = 3 + rng() % (n_alpha - 3);
		unsigned bits = rng() & 1 ? 64 : 128;

		random_text(cps, n, letters);
		CHECK(sh_compat_text(c, cps, n, bits, &got) == SIMHASH_OK);
		ref_text(cps, n, bits, &want);
		if (memcmp(&got.w, &want.w, sizeof got.w) != 0 || got.bits != bits) {
			fprintf(stderr, "seed %llx iteration %d: text of %zu code points differs\n",
				(unsigned long long)seed, iter, n);
			t_cur_failed++;
			bad++;
		}
	}
	sh_compat_free(c);
}

/* Texts around and past the code's internal pass of 512 kept code points
 * (windows spanning two passes), each through every hashing path this CPU has
 * (the memo table without SIMD, AVX2, AVX-512) against the slow reference. */
static void test_long_random_texts_on_every_path(void)
{
	uint64_t seed = 0x5eed0004;
	size_t n_alpha = sizeof alphabet / sizeof alphabet[0];
	size_t cap = 2100;
	uint32_t *cps = malloc(cap * sizeof *cps);
	sh_compat *c = NULL;
	simhash_fp got, want;
	int bad = 0;

	rng_state = seed;
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	for (int iter = 0; c && cps && iter < 60 && bad < 5; iter++) {
		size_t n = 500 + rng() % 1600;
		unsigned bits = rng() & 1 ? 64 : 128;

		random_text(cps, n, iter % 3 ? n_alpha : 6);
		ref_text(cps, n, bits, &want);
		for (int level = 0; level <= 2; level++) {
			sh_compat_set_simd_level(c, level);
			CHECK(sh_compat_text(c, cps, n, bits, &got) == SIMHASH_OK);
			if (memcmp(&got.w, &want.w, sizeof got.w) != 0 || got.bits != bits) {
				fprintf(stderr, "seed %llx iteration %d level %d: text of %zu code "
					"points differs\n", (unsigned long long)seed, iter, level, n);
				t_cur_failed++;
				bad++;
			}
		}
	}
	sh_compat_free(c);
	free(cps);
}

/* Far more distinct 4-grams than cache slots: evictions vote early. Then a
 * short text on the same handle must not see anything of the long one. */
static void test_long_text_matches_reference_and_scratch_is_reused(void)
{
	size_t n = 300000;
	uint32_t *cps = malloc(n * sizeof *cps);
	sh_compat *c = NULL, *fresh = NULL;
	simhash_fp got, want;

	rng_state = 0x5eed0002;
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	CHECK(sh_compat_new(&fresh) == SIMHASH_OK);
	if (!c || !fresh || !cps)
		goto out;
	for (size_t i = 0; i < n; i++)
		cps[i] = 'a' + (uint32_t)(rng() % 26) + (rng() % 7 == 0 ? 0x3B1 - 'a' : 0);
	for (unsigned bits = 64; bits <= 128; bits += 64) {
		CHECK(sh_compat_text(c, cps, n, bits, &got) == SIMHASH_OK);
		ref_text(cps, n, bits, &want);
		CHECK_EQ_U64(got.w[0], want.w[0]);
		CHECK_EQ_U64(got.w[1], want.w[1]);
	}
	CHECK(sh_compat_text(c, cps, 50, 64, &got) == SIMHASH_OK);
	CHECK(sh_compat_text(fresh, cps, 50, 64, &want) == SIMHASH_OK);
	CHECK_EQ_U64(got.w[0], want.w[0]);
	ref_text(cps, 50, 64, &want);
	CHECK_EQ_U64(got.w[0], want.w[0]);
out:
	sh_compat_free(c);
	sh_compat_free(fresh);
	free(cps);
}

static double random_weight(void)
{
	static const double some[] = { 1, 2, 50, 51, 0, -1, -60, 255, 256, 5000, 0.5, -0.25, 1e16,
				       -1e16, 0.1, 3.75, 9007199254740992.0, 7e15 };

	switch (rng() % 4) {
	case 0: return some[rng() % (sizeof some / sizeof some[0])];
	case 1: return (double)(rng() % 60);
	case 2: return (double)(int64_t)(rng() % 2001 - 1000) / 128;
	default: return 1;
	}
}

static void test_features_match_slow_reference_on_random_lists(void)
{
	uint64_t seed = 0x5eed0003;
	static simhash_feature f[1200];
	static char names[1200][12];
	sh_compat *c = NULL;
	simhash_fp got, want;
	int bad = 0;

	rng_state = seed;
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	for (int iter = 0; c && iter < 400 && bad < 5; iter++) {
		size_t n = rng() % (iter % 8 == 0 ? 1200 : 30);
		unsigned bits = rng() & 1 ? 64 : 128;

		for (size_t i = 0; i < n; i++) {
			snprintf(names[i], sizeof names[i], "w%u", (unsigned)(rng() % 5000));
			f[i].data = names[i];
			f[i].len = strlen(names[i]);
			f[i].weight = random_weight();
		}
		CHECK(sh_compat_features(c, f, n, bits, &got) == SIMHASH_OK);
		ref_features(f, n, bits, &want);
		if (memcmp(&got.w, &want.w, sizeof got.w) != 0 || got.bits != bits) {
			fprintf(stderr, "seed %llx iteration %d: %zu features differ\n",
				(unsigned long long)seed, iter, n);
			t_cur_failed++;
			bad++;
		}
	}
	sh_compat_free(c);
}

/* ---------------------------------------------------------------- arguments */

static void test_bad_arguments_are_rejected_and_out_untouched(void)
{
	sh_compat *c = NULL;
	simhash_fp fp = { { 1, 2 }, 7 };
	uint32_t cps[] = { 'a' };
	simhash_feature nan_w = { "a", 1, NAN }, inf_w = { "a", 1, INFINITY },
			null_data = { NULL, 3, 1 }, empty = { NULL, 0, 1 };

	CHECK(sh_compat_new(NULL) == SIMHASH_EINVAL);
	CHECK(sh_compat_new(&c) == SIMHASH_OK);
	if (!c)
		return;
	CHECK(sh_compat_text(c, cps, 1, 32, &fp) == SIMHASH_EINVAL);
	CHECK(sh_compat_text(c, NULL, 1, 64, &fp) == SIMHASH_EINVAL);
	CHECK(sh_compat_features(c, &nan_w, 1, 64, &fp) == SIMHASH_EINVAL);
	CHECK(sh_compat_features(c, &inf_w, 1, 64, &fp) == SIMHASH_EINVAL);
	CHECK(sh_compat_features(c, &null_data, 1, 64, &fp) == SIMHASH_EINVAL);
	CHECK(sh_compat_features(c, NULL, 1, 64, &fp) == SIMHASH_EINVAL);
	CHECK(fp.w[0] == 1 && fp.w[1] == 2 && fp.bits == 7);
	/* an empty feature with no data is fine: md5("") */
	CHECK(sh_compat_features(c, &empty, 1, 64, &fp) == SIMHASH_OK);
	CHECK_EQ_U64(fp.w[0], 0xe9800998ecf8427eULL);
	CHECK(sh_compat_text(c, NULL, 0, 64, &fp) == SIMHASH_OK);
	CHECK_EQ_U64(fp.w[0], 0xe9800998ecf8427eULL);
	sh_compat_free(c);
	sh_compat_free(NULL);
}

TEST_MAIN("fingerprint/compat",
	  TEST(test_all_80_text_vectors_of_the_package),
	  TEST(test_all_42_feature_vectors_of_the_package),
	  TEST(test_derived_text_vectors_at_64_and_128_bits),
	  TEST(test_heavy_4grams_in_text),
	  TEST(test_derived_feature_vectors_at_64_and_128_bits),
	  TEST(test_long_feature_lists_with_batches_and_collapsed_sums),
	  TEST(test_batch_close_and_sums_collapse_positions),
	  TEST(test_text_matches_slow_reference_on_random_texts),
	  TEST(test_long_text_matches_reference_and_scratch_is_reused),
	  TEST(test_long_random_texts_on_every_path),
	  TEST(test_features_match_slow_reference_on_random_lists),
	  TEST(test_bad_arguments_are_rejected_and_out_untouched))
