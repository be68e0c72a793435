/* test_stream.c - a text given in pieces and normalized in windows has the
 * fingerprint of the whole text (simhash_fingerprint_begin/update/final and
 * the long-text path of simhash_fingerprint()). The windows are made tiny
 * (slices of 1 to 64 bytes, consumed from the 769th character on), so words,
 * n-grams, shingles, UTF-8 sequences and normalization segments straddle
 * their ends all the time; random texts mix ASCII words, combining marks,
 * CJK, 4-byte Han characters, emoji, Cyrillic, expanding compatibility
 * characters, invalid bytes and long words, under every feature mode, weight,
 * hash and width. The reference is the one-shot path on the whole text. */
#include <stdint.h>
#include "test.h"
#include "simhash.h"

simhash_err sh_ctx_set_stream(simhash_ctx *ctx, size_t slice, size_t min_chars);
size_t sh_ctx_stream_peak(const simhash_ctx *ctx);

static const char *const pieces[] = {
	"the", "of", "and", "ing", "a", "Zebra", "42", " ", " ", " ", "  ", "\n", ", ", ".",
	"-", "'", "e\xcc\x81",                  /* e + combining acute */
	"\xcc\xa3",                             /* combining dot below */
	"\xe4\xb8\xad", "\xe6\x96\x87", "\xe7\x9a\x84", "\xe5\x9c\x8b", /* CJK, traditional */
	"\xf0\xa0\xae\xb7",                     /* U+20BB7, a 4-byte Han character */
	"\xf0\x9f\x98\x80", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", /* emoji, skin tone */
	"\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0", /* Moskva */
	"\xef\xb7\xba",                         /* U+FDFA: 18 characters */
	"\xef\xbc\xa1", "\xc3\x9f", "\xce\xa3", /* fullwidth A, sharp s, Sigma */
	"\xe3\x81\x82\xe3\x82\xa2",             /* Hiragana, Katakana */
	"\xe2\x80\x8d", "\xe3\x80\x80",         /* zero width joiner, ideographic space */
	"\xff", "\xe4\xb8", "\x80",             /* invalid bytes */
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* a long word */
};

/* Pieces without a word character: texts of them and a word or two have
 * fewer words than a shingle, or the v2 default's three. */
static const char *const no_words[] = {
	" ", "\n", ", ", ".", "-", "'", "\xe2\x80\x8d", "\xe3\x80\x80", "\xff",
	"\xf0\x9f\x98\x80", "!!", "\xe2\x80\x94", /* em dash */
};

/* A random text of about n pieces; a third of the texts are mostly one kind,
 * a tenth have at most two words. */
static size_t random_text(char *buf, size_t cap, size_t n)
{
	size_t k = 0, np = sizeof pieces / sizeof *pieces, bias = test_rnd() % 3 ? np : test_rnd() % np;

	if (test_rnd() % 10 == 0) {
		size_t nw = sizeof no_words / sizeof *no_words, words = test_rnd() % 3;
		for (size_t i = 0; i < n && k + 70 < cap; i++) {
			const char *p = no_words[test_rnd() % nw];
			if (words && test_rnd() % (n / words + 1) == 0) {
				p = pieces[test_rnd() % 6];
				words--;
			}
			memcpy(buf + k, p, strlen(p));
			k += strlen(p);
		}
		return k;
	}

	for (size_t i = 0; i < n; i++) {
		const char *p = pieces[bias < np && test_rnd() % 2 ? bias : test_rnd() % np];
		size_t len = strlen(p);
		if (k + len > cap)
			break;
		memcpy(buf + k, p, len);
		k += len;
	}
	return k;
}

/* A random config: every feature mode, weight, hash, width and text option. */
static void random_config(simhash_config *cfg, const simhash_stopwords *sw)
{
	static const unsigned widths[] = { 32, 64, 128 };

	simhash_config_init(cfg);
	cfg->bits = widths[test_rnd() % 3];
	switch (test_rnd() % 6) {
	case 0:
	case 1:
		break; /* the v2 default */
	case 2:
		cfg->features = SIMHASH_FEATURES_CHAR;
		break;
	case 3:
		cfg->features = SIMHASH_FEATURES_WORD;
		break;
	default:
		cfg->features = SIMHASH_FEATURES_SHINGLE;
		break;
	}
	cfg->ngram = 1 + (unsigned)(test_rnd() % 5);
	cfg->ngram_cjk = (unsigned)(test_rnd() % 4);
	if (cfg->features != SIMHASH_FEATURES_AUTO) {
		cfg->weight = (simhash_weight)(test_rnd() % 3); /* tf, binary, logtf */
		cfg->hash = (simhash_hash)(test_rnd() % 4);
		cfg->tf_cap = test_rnd() % 4 == 0 ? 2 : 0;
		if (test_rnd() % 4 == 0)
			cfg->stopwords = sw;
	}
	cfg->casefold = test_rnd() % 5 != 0;
	cfg->t2s = test_rnd() % 3 != 0;
	cfg->space = (simhash_space)(test_rnd() % 3);
	cfg->punct = (simhash_punct)(test_rnd() % 2);
	cfg->max_repeat = test_rnd() % 4 == 0 ? 3 : 0;
	cfg->utf8 = test_rnd() % 5 == 0 ? SIMHASH_UTF8_REJECT : SIMHASH_UTF8_REPLACE;
}

static void test_pieces_and_windows_give_the_whole_texts_fingerprint(void)
{
	static char buf[24000];
	uint64_t seed = 0x5712ea;
	simhash_stopwords *sw = NULL;
	int streamed = 0;

	CHECK(simhash_stopwords_new(&sw) == SIMHASH_OK);
	if (!sw)
		return;
	CHECK(simhash_stopwords_add(sw, "the", 3) == SIMHASH_OK);
	CHECK(simhash_stopwords_add(sw, "of", 2) == SIMHASH_OK);
	for (int trial = 0; trial < 1000; trial++) {
		simhash_config cfg;
		simhash_ctx *one = NULL, *str = NULL;
		simhash_fp a = { { 0, 0 }, 0 }, b = { { 1, 1 }, 1 };
		simhash_err ea, eb;
		simhash_error da = { 0 }, db = { 0 };
		size_t len, i = 0;

		test_rnd_seed(seed + (uint64_t)trial);
		random_config(&cfg, sw);
		len = random_text(buf, sizeof buf, (size_t)(test_rnd() % 4 ? 200 + test_rnd() % 3000 : test_rnd() % 200));
		CHECK(simhash_ctx_new(&cfg, &one) == SIMHASH_OK);
		CHECK(simhash_ctx_new(&cfg, &str) == SIMHASH_OK);
		if (!one || !str)
			break;
		CHECK(sh_ctx_set_stream(str, 1 + test_rnd() % 64, 1) == SIMHASH_OK);
		ea = simhash_fingerprint(one, buf, len, &a, &da);
		eb = simhash_fingerprint_begin(str);
		while (!eb && i < len) {
			size_t k = test_rnd() % 100;
			if (k > len - i)
				k = len - i;
			eb = simhash_fingerprint_update(str, buf + i, k, &db);
			i += k;
		}
		if (!eb)
			eb = simhash_fingerprint_final(str, &b, &db);
		else
			CHECK(simhash_fingerprint_final(str, &b, &db) == eb);
		streamed += sh_ctx_stream_peak(str) > 0;
		if (ea != eb || (!ea && (a.w[0] != b.w[0] || a.w[1] != b.w[1] || a.bits != b.bits)) ||
		    (ea == SIMHASH_EUTF8 &&
		     (da.offset != db.offset || da.code != db.code))) {
			fprintf(stderr,
				"stream differs: seed %llx trial %d len %zu features %d bits %u: "
				"%d %016llx%016llx, streamed %d %016llx%016llx\n",
				(unsigned long long)seed, trial, len, (int)cfg.features, cfg.bits,
				(int)ea, (unsigned long long)a.w[1], (unsigned long long)a.w[0],
				(int)eb, (unsigned long long)b.w[1], (unsigned long long)b.w[0]);
			t_cur_failed++;
		}
		/* the ctx goes on: the next text is whole again */
		CHECK(simhash_fingerprint(str, "a b c d", 7, &b, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint(one, "a b c d", 7, &a, NULL) == SIMHASH_OK);
		CHECK(a.w[0] == b.w[0] && a.w[1] == b.w[1]);
		simhash_ctx_free(one);
		simhash_ctx_free(str);
	}
	CHECK(streamed > 350); /* most texts really were taken in windows */
	simhash_stopwords_free(sw);
}

/* simhash_fingerprint() of a text over 8 MiB streams it: same bits as the
 * same text given in small pieces with the one-shot path forced by a window
 * larger than the text (min_chars). */
static void test_long_text_streams_with_the_same_bits(void)
{
	enum { LEN = 9 << 20 };
	char *big = malloc(LEN);
	simhash_config cfg;
	int modes[] = { SIMHASH_FEATURES_AUTO, SIMHASH_FEATURES_CHAR, SIMHASH_FEATURES_SHINGLE };

	if (!big)
		return;
	test_rnd_seed(0xb16);
	for (size_t k = 0; k < LEN;) {
		const char *p = pieces[test_rnd() % 20];
		size_t len = strlen(p);
		if (k + len > LEN)
			len = LEN - k;
		memcpy(big + k, p, len);
		k += len;
	}
	for (int m = 0; m < 3; m++) {
		simhash_ctx *a = NULL, *b = NULL;
		simhash_fp fa, fb;
		simhash_config_init(&cfg);
		cfg.features = (simhash_features)modes[m];
		if (m == 1)
			cfg.weight = SIMHASH_WEIGHT_LOGTF;
		CHECK(simhash_ctx_new(&cfg, &a) == SIMHASH_OK);
		CHECK(simhash_ctx_new(&cfg, &b) == SIMHASH_OK);
		if (!a || !b)
			break;
		CHECK(sh_ctx_set_stream(b, LEN, (size_t)LEN * 4) == SIMHASH_OK);
		CHECK(simhash_fingerprint(a, big, LEN, &fa, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint_begin(b) == SIMHASH_OK);
		CHECK(simhash_fingerprint_update(b, big, LEN, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint_final(b, &fb, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(fa.w[0], fb.w[0]);
		simhash_ctx_free(a);
		simhash_ctx_free(b);
	}
	free(big);
}

/* Windows stay small however long the text: a 300 KB text in slices of at
 * most 64 bytes never has a window of more than the 769 characters taken
 * before the first is consumed, a slice's characters and a word or two. */
static void test_windows_stay_bounded(void)
{
	enum { LEN = 300000 };
	static char text[LEN];
	static const int modes[][2] = {
		{ SIMHASH_FEATURES_AUTO, SIMHASH_WEIGHT_TF },
		{ SIMHASH_FEATURES_CHAR, SIMHASH_WEIGHT_TF },
		{ SIMHASH_FEATURES_CHAR, SIMHASH_WEIGHT_LOGTF },
		{ SIMHASH_FEATURES_SHINGLE, SIMHASH_WEIGHT_TF },
		{ SIMHASH_FEATURES_WORD, SIMHASH_WEIGHT_BINARY },
	};
	size_t k = 0;

	test_rnd_seed(0xb0b);
	while (k + 70 < LEN) {
		const char *p = pieces[test_rnd() % 30];
		memcpy(text + k, p, strlen(p));
		k += strlen(p);
		text[k++] = ' ';
	}
	for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
		simhash_config cfg;
		simhash_ctx *a = NULL, *b = NULL;
		simhash_fp fa, fb;
		simhash_config_init(&cfg);
		cfg.features = (simhash_features)modes[m][0];
		cfg.weight = (simhash_weight)modes[m][1];
		cfg.ngram = 3;
		CHECK(simhash_ctx_new(&cfg, &a) == SIMHASH_OK);
		CHECK(simhash_ctx_new(&cfg, &b) == SIMHASH_OK);
		if (!a || !b)
			break;
		CHECK(sh_ctx_set_stream(b, 1 + m * 15, 1) == SIMHASH_OK);
		CHECK(simhash_fingerprint(a, text, k, &fa, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint_begin(b) == SIMHASH_OK);
		CHECK(simhash_fingerprint_update(b, text, k, NULL) == SIMHASH_OK);
		CHECK(simhash_fingerprint_final(b, &fb, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(fa.w[0], fb.w[0]);
		CHECK(sh_ctx_stream_peak(b) > 0);
		if (sh_ctx_stream_peak(b) > 769 + 64 * 19 + 300) {
			fprintf(stderr, "mode %zu: a window of %zu characters\n", m,
				sh_ctx_stream_peak(b));
			t_cur_failed++;
		}
		simhash_ctx_free(a);
		simhash_ctx_free(b);
	}
}

static void test_update_without_begin_is_einval(void)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	simhash_fp fp;

	simhash_config_init(&cfg);
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	CHECK(simhash_fingerprint_update(ctx, "a", 1, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_final(ctx, &fp, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_begin(NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_begin(ctx) == SIMHASH_OK);
	CHECK(simhash_fingerprint_update(ctx, NULL, 1, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_final(ctx, &fp, NULL) == SIMHASH_OK);
	CHECK(simhash_fingerprint_final(ctx, &fp, NULL) == SIMHASH_EINVAL);
	simhash_ctx_free(ctx);
}

int main(void)
{
	static const struct test_case tests[] = {
		TEST(test_pieces_and_windows_give_the_whole_texts_fingerprint),
		TEST(test_long_text_streams_with_the_same_bits),
		TEST(test_windows_stay_bounded),
		TEST(test_update_without_begin_is_einval),
	};
	return test_run("test_stream", tests, sizeof tests / sizeof *tests);
}
