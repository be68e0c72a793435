/* test_enomem.c - running out of memory is reported, never papered over:
 * a shingle that cannot be joined gives SIMHASH_ENOMEM, not the hash of its
 * first word; a text streamed in windows (simhash_fingerprint_begin) whose
 * k-th allocation fails, for every k, gives an error or the right bits, and
 * the ctx works afterwards. realloc(), malloc() and calloc() are replaced here
 * by ones that fail on demand (large sizes, or the k-th call); everything
 * else goes to the C library's. */
#include <stdint.h>
#include "test.h"
#include "simhash.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#endif

static size_t fail_from; /* 0: never fail; else fail sizes >= fail_from */
static long fail_at;      /* 0: never fail; else fail the fail_at-th call */
static long n_calls;      /* calls since counting began */

/* Whether this call fails (counting calls while fail_at is armed or -1). */
static int fails(size_t n)
{
	if (fail_from && n >= fail_from)
		return 1;
	if (fail_at)
		return ++n_calls == fail_at;
	return 0;
}

#ifndef SANITIZED
/* (ASan has its own allocator: the replacement is left out there.) */
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);

void *realloc(void *p, size_t n)
{
	return fails(n) ? NULL : __libc_realloc(p, n);
}

void *malloc(size_t n)
{
	return fails(n) ? NULL : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	return fails(k * n) ? NULL : __libc_calloc(k, n);
}
#endif

simhash_err sh_ctx_set_stream(simhash_ctx *ctx, size_t slice, size_t min_chars);

static void test_shingle_join_out_of_memory_is_enomem(void)
{
	enum { SIZE = 600000, WORD = 150000 };
	static char small[SIZE + 1], big[SIZE + 1];
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	simhash_fp fp;
	simhash_err err;

#ifdef SANITIZED
	printf("under ASan: skipped (realloc cannot be replaced)\n");
	return;
#endif
	/* the same size twice: many short words, then three huge words with
	 * punctuation between them (so the shingle is copied, not read in place) */
	for (size_t i = 0; i < SIZE; i++)
		small[i] = i % 4 == 3 ? ' ' : (char)('a' + i % 3);
	memset(big, ' ', SIZE);
	for (int w = 0; w < 3; w++)
		memset(big + (size_t)w * (WORD + 10), 'a' + w, WORD);
	big[WORD] = ',';
	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_SHINGLE;
	cfg.ngram = 3;
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	if (!ctx)
		return;
	CHECK(simhash_fingerprint(ctx, small, SIZE, &fp, NULL) == SIMHASH_OK);
	fail_from = 64 * 1024; /* the next large allocation: the joined shingle */
	err = simhash_fingerprint(ctx, big, SIZE, &fp, NULL);
	fail_from = 0;
	CHECK(err == SIMHASH_ENOMEM);
	/* and with memory back, the same text fingerprints */
	CHECK(simhash_fingerprint(ctx, big, SIZE, &fp, NULL) == SIMHASH_OK);
	simhash_ctx_free(ctx);
}

/* The streamed fingerprint of text under cfg, with allocation k failing. */
static simhash_err streamed(const simhash_config *cfg, const char *text, size_t len, long k,
			    simhash_fp *fp)
{
	simhash_ctx *ctx = NULL;
	simhash_err err;

	if (simhash_ctx_new(cfg, &ctx) != SIMHASH_OK ||
	    sh_ctx_set_stream(ctx, 7, 1) != SIMHASH_OK) {
		simhash_ctx_free(ctx);
		return SIMHASH_EIO;
	}
	n_calls = 0;
	fail_at = k;
	err = simhash_fingerprint_begin(ctx);
	for (size_t i = 0; !err && i < len; i += 100)
		err = simhash_fingerprint_update(ctx, text + i, len - i < 100 ? len - i : 100, NULL);
	if (err)
		(void)simhash_fingerprint_final(ctx, fp, NULL);
	else
		err = simhash_fingerprint_final(ctx, fp, NULL);
	fail_at = 0;
	if (err) {
		/* the ctx goes on with memory back */
		simhash_fp again;
		simhash_err e2 = simhash_fingerprint_begin(ctx);
		if (!e2)
			e2 = simhash_fingerprint_update(ctx, text, len, NULL);
		if (!e2)
			e2 = simhash_fingerprint_final(ctx, &again, NULL);
		CHECK(e2 == SIMHASH_OK);
	}
	simhash_ctx_free(ctx);
	return err;
}

static void test_streamed_text_out_of_memory_is_an_error_never_wrong_bits(void)
{
	enum { SIZE = 12000 };
	static char text[SIZE];
	static const int modes[][2] = {
		{ SIMHASH_FEATURES_AUTO, SIMHASH_WEIGHT_TF },
		{ SIMHASH_FEATURES_CHAR, SIMHASH_WEIGHT_LOGTF },
		{ SIMHASH_FEATURES_SHINGLE, SIMHASH_WEIGHT_TF },
	};
	static const char *const words[] = { "alpha ", "beta, ", "\xe4\xb8\xad\xe6\x96\x87",
					     "gamma\xcc\x81 ", "\xf0\xa0\xae\xb7 " };

#ifdef SANITIZED
	printf("under ASan: skipped (the allocator cannot be replaced)\n");
	return;
#endif
	for (size_t k = 0, i = 0; k + 12 < SIZE; i++) {
		const char *w = words[(i * 7 + i / 5) % 5];
		memcpy(text + k, w, strlen(w));
		k += strlen(w);
	}
	for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
		simhash_config cfg;
		simhash_fp want, got;
		long total, failed = 0;
		simhash_config_init(&cfg);
		cfg.features = (simhash_features)modes[m][0];
		cfg.weight = (simhash_weight)modes[m][1];
		CHECK(streamed(&cfg, text, SIZE - 12, 0, &want) == SIMHASH_OK);
		/* count the calls of a clean run, then fail each in turn */
		fail_at = -1;
		CHECK(streamed(&cfg, text, SIZE - 12, -1, &got) == SIMHASH_OK);
		total = n_calls;
		CHECK(total > 3);
		for (long k = 1; k <= total; k++) {
			simhash_err err = streamed(&cfg, text, SIZE - 12, k, &got);
			if (err) {
				CHECK(err == SIMHASH_ENOMEM || err == SIMHASH_EDEP);
				failed++;
			} else {
				CHECK(got.w[0] == want.w[0] && got.w[1] == want.w[1]);
			}
		}
		CHECK(failed > 0); /* the failures were seen */
	}
}

TEST_MAIN("enomem", TEST(test_shingle_join_out_of_memory_is_enomem),
	  TEST(test_streamed_text_out_of_memory_is_an_error_never_wrong_bits))
