/* test_enomem.c - running out of memory is reported, never papered over:
 * a shingle that cannot be joined gives SIMHASH_ENOMEM, not the hash of its
 * first word. realloc() is replaced here by one that fails on demand for
 * large sizes; everything else goes to the C library's. */
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

#ifndef SANITIZED
/* (ASan has its own allocator: the replacement is left out there.) */
extern void *__libc_realloc(void *p, size_t n);

void *realloc(void *p, size_t n)
{
	if (fail_from && n >= fail_from)
		return NULL;
	return __libc_realloc(p, n);
}
#endif

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
	CHECK(simhash_fingerprint(ctx, small, SIZE, &fp) == SIMHASH_OK);
	fail_from = 64 * 1024; /* the next large allocation: the joined shingle */
	err = simhash_fingerprint(ctx, big, SIZE, &fp);
	fail_from = 0;
	CHECK(err == SIMHASH_ENOMEM);
	/* and with memory back, the same text fingerprints */
	CHECK(simhash_fingerprint(ctx, big, SIZE, &fp) == SIMHASH_OK);
	simhash_ctx_free(ctx);
}

TEST_MAIN("enomem", TEST(test_shingle_join_out_of_memory_is_enomem))
