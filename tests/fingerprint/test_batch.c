/* test_batch.c - simhash_fingerprint_batch() against simhash_fingerprint()
 * one text at a time: the same bits for 1 to 4 contexts, the lowest failing
 * text reported whatever the schedule, and bad arguments refused. */
#include "simhash.h"
#include "test.h"

#define N_TEXTS 300
#define MAX_CTX 4

/* Texts of every length from 0 to a few hundred bytes, mixed scripts. */
static void make_texts(char bufs[][256], const char **texts, size_t *lens, size_t n)
{
	static const char *words[] = { "near", "duplicate", "text", "héllo", "数据", "指纹",
				       "the", "quick", "fox", "." };

	for (size_t i = 0; i < n; i++) {
		size_t len = 0, n_words = (size_t)(test_rnd() % 40);

		for (size_t w = 0; w < n_words; w++) {
			const char *s = words[test_rnd() % (sizeof words / sizeof *words)];
			size_t l = strlen(s);

			if (len + l + 1 > 255)
				break;
			memcpy(bufs[i] + len, s, l);
			len += l;
			bufs[i][len++] = ' ';
		}
		texts[i] = bufs[i];
		lens[i] = len;
	}
}

static simhash_config reject_config(void)
{
	simhash_config cfg;

	simhash_config_init(&cfg);
	cfg.utf8 = SIMHASH_UTF8_REJECT;
	return cfg;
}

static void test_batch_equals_one_by_one_for_any_number_of_contexts(void)
{
	static char bufs[N_TEXTS][256];
	const char *texts[N_TEXTS];
	size_t lens[N_TEXTS];
	simhash_fp want[N_TEXTS], got[N_TEXTS];
	simhash_ctx *ctxs[MAX_CTX] = { 0 };
	simhash_config cfg;

	test_rnd_seed(20);
	make_texts(bufs, texts, lens, N_TEXTS);
	simhash_config_init(&cfg);
	for (unsigned t = 0; t < MAX_CTX; t++)
		CHECK(simhash_ctx_new(&cfg, &ctxs[t]) == SIMHASH_OK);
	for (size_t i = 0; i < N_TEXTS; i++)
		CHECK(simhash_fingerprint(ctxs[0], texts[i], lens[i], &want[i], NULL) == SIMHASH_OK);
	for (unsigned n_ctxs = 1; n_ctxs <= MAX_CTX; n_ctxs++) {
		memset(got, 0, sizeof got);
		CHECK(simhash_fingerprint_batch(ctxs, n_ctxs, texts, lens, N_TEXTS, got, NULL) ==
		      SIMHASH_OK);
		for (size_t i = 0; i < N_TEXTS; i++) {
			CHECK_EQ_U64(got[i].w[0], want[i].w[0]);
			CHECK_EQ_U64(got[i].bits, want[i].bits);
		}
	}
	CHECK(simhash_fingerprint_batch(ctxs, 2, texts, lens, 0, NULL, NULL) == SIMHASH_OK);
	for (unsigned t = 0; t < MAX_CTX; t++)
		simhash_ctx_free(ctxs[t]);
}

static void test_lowest_failing_text_and_its_offset_are_reported(void)
{
	static char bufs[N_TEXTS][256];
	const char *texts[N_TEXTS];
	size_t lens[N_TEXTS];
	simhash_error e;
	simhash_fp got[N_TEXTS];
	simhash_ctx *ctxs[MAX_CTX] = { 0 };
	simhash_config cfg = reject_config();

	test_rnd_seed(21);
	make_texts(bufs, texts, lens, N_TEXTS);
	/* invalid UTF-8 in texts 137 (at byte 3) and 250 (at byte 0) */
	memcpy(bufs[137], "abc\xff", 4);
	lens[137] = 4;
	memcpy(bufs[250], "\xc3", 1);
	lens[250] = 1;
	for (unsigned t = 0; t < MAX_CTX; t++)
		CHECK(simhash_ctx_new(&cfg, &ctxs[t]) == SIMHASH_OK);
	for (unsigned n_ctxs = 1; n_ctxs <= MAX_CTX; n_ctxs++) {
		memset(&e, 0, sizeof e);
		CHECK(simhash_fingerprint_batch(ctxs, n_ctxs, texts, lens, N_TEXTS, got, &e) ==
		      SIMHASH_EUTF8);
		CHECK_EQ_U64(e.index, 137);
		CHECK_EQ_U64(e.offset, 3);
		CHECK(e.code == SIMHASH_EUTF8);
	}
	for (unsigned t = 0; t < MAX_CTX; t++)
		simhash_ctx_free(ctxs[t]);
}

static void test_bad_arguments_are_einval(void)
{
	const char *text = "a";
	size_t len = 1;
	simhash_fp fp;
	simhash_ctx *ctxs[2] = { 0 };
	simhash_config cfg;

	simhash_config_init(&cfg);
	CHECK(simhash_ctx_new(&cfg, &ctxs[0]) == SIMHASH_OK);
	CHECK(simhash_fingerprint_batch(NULL, 1, &text, &len, 1, &fp, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_batch(ctxs, 0, &text, &len, 1, &fp, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_batch(ctxs, 2, &text, &len, 1, &fp, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_batch(ctxs, 1, NULL, &len, 1, &fp, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_fingerprint_batch(ctxs, 1, &text, &len, 1, &fp, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctxs[0]);
}

TEST_MAIN("test_batch", TEST(test_batch_equals_one_by_one_for_any_number_of_contexts),
	  TEST(test_lowest_failing_text_and_its_offset_are_reported),
	  TEST(test_bad_arguments_are_einval))
