/* test_store_errors.c - the store's error detail (simhash.h, conventions 2
 * to 4): each failed call fills its own caller's simhash_error, threads that
 * share a handle never get each other's messages, a successful call leaves
 * the detail as it was, and the stats, a struct that grows, are read and
 * written only as far as the caller's size says. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "test.h"
#include "simhash.h"

#define STORE_PATH_PREFIX "test_store_errors"
#include "store_path.h"

static simhash_store *create64(const char *name)
{
	simhash_config cfg;
	simhash_store *st = NULL;
	simhash_error e;

	simhash_config_init(&cfg);
	cfg.bits = 64;
	fresh_path(name);
	if (simhash_store_create(path, &cfg, &st, &e) != SIMHASH_OK)
		fprintf(stderr, "create %s: %s\n", path, e.msg);
	return st;
}

/* One thread's loop on a 64-bit store: batches of N_DOCS documents whose
 * last has `bits` (32 or 128), each refused with its own width in its own
 * message (the check of the batch before it keeps the call in the store a
 * while, so the threads' calls overlap); with bits 64, successful puts,
 * which must leave their detail alone. */
#define N_DOCS 2000

struct worker {
	simhash_store *st;
	unsigned bits;
	int rounds;
	int wrong; /* calls whose detail was not their own */
};

static void *work(void *arg)
{
	struct worker *w = arg;
	simhash_store_doc *d = calloc(N_DOCS, sizeof *d);
	char want[64];

	if (!d) {
		w->wrong = w->rounds;
		return NULL;
	}
	for (int i = 0; i < N_DOCS; i++) {
		simhash_store_doc x = { "same", 4, { { (uint64_t)i, 0 }, 64 }, NULL, 0, 0 };
		d[i] = x;
	}
	d[N_DOCS - 1].fp.bits = w->bits;
	snprintf(want, sizeof want, "a %u-bit fingerprint", w->bits);
	for (int i = 0; i < w->rounds; i++) {
		simhash_error e;
		simhash_err rc;

		memset(&e, 0, sizeof e);
		strcpy(e.msg, "untouched");
		rc = simhash_store_put_many(w->st, d, w->bits == 64 ? 1 : N_DOCS, &e);
		if (w->bits == 64 ? rc != SIMHASH_OK || strcmp(e.msg, "untouched")
				  : rc != SIMHASH_ESCHEME || e.code != rc || !strstr(e.msg, want))
			w->wrong++;
	}
	free(d);
	return NULL;
}

static void test_threads_get_their_own_detail(void)
{
	simhash_store *st = create64("threads");
	struct worker w[3] = { { st, 32, 3000, 0 }, { st, 128, 3000, 0 }, { st, 64, 100, 0 } };
	pthread_t th[3];

	if (!st)
		return;
	for (int i = 0; i < 3; i++)
		CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++) {
		if (w[i].wrong)
			fprintf(stderr, "%u-bit thread: %d calls with a wrong detail\n", w[i].bits,
				w[i].wrong);
		CHECK(w[i].wrong == 0);
	}
	simhash_store_close(st);
}

static void test_failures_fill_the_detail(void)
{
	simhash_store *st = create64("detail"), *st2 = NULL;
	simhash_store_doc d = { "x", 1, { { 1, 0 }, 128 }, NULL, 0, 0 };
	simhash_error e;

	if (!st)
		return;
	/* a width mismatch: SIMHASH_ESCHEME from every store call */
	memset(&e, 0xff, sizeof e);
	CHECK(simhash_store_put(st, &d, &e) == SIMHASH_ESCHEME);
	CHECK(e.code == SIMHASH_ESCHEME && e.os_err == 0 && e.line == 0 && e.offset == 0);
	CHECK_STR(e.msg, "a 128-bit fingerprint for a store of 64-bit fingerprints");
	CHECK(simhash_store_put(st, &d, NULL) == SIMHASH_ESCHEME); /* NULL: no detail */
	/* a second writer: the message names the store and the lock */
	CHECK(simhash_store_open(path, 0, &st2, &e) == SIMHASH_EIO);
	CHECK(st2 == NULL && e.code == SIMHASH_EIO && strstr(e.msg, path) && strstr(e.msg, "locked"));
	/* a bad argument without a message of its own gets the code's text */
	CHECK(simhash_store_put(NULL, &d, &e) == SIMHASH_EINVAL);
	CHECK(e.code == SIMHASH_EINVAL);
	CHECK_STR(e.msg, simhash_strerror(SIMHASH_EINVAL));
	simhash_store_close(st);
	fresh_path("missing");
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st2, &e) == SIMHASH_EIO);
	CHECK(e.code == SIMHASH_EIO && strstr(e.msg, "no such file"));
}

/* A struct that grows: an older caller's smaller struct is written only as
 * far as its size; a newer caller's bytes past the library's are left. */
static void test_stats_follow_the_callers_size(void)
{
	simhash_store *st = create64("stats");
	struct {
		simhash_store_stats s;
		unsigned char tail[16];
	} big;
	simhash_store_stats small;
	size_t old = offsetof(simhash_store_stats, file_bytes);

	if (!st)
		return;
	memset(&big, 0xab, sizeof big);
	big.s.size = sizeof big;
	CHECK(simhash_store_stats_get(st, &big.s, NULL) == SIMHASH_OK);
	CHECK(big.s.size == sizeof big && big.s.bits == 64 && big.s.n_docs == 0);
	CHECK(big.tail[0] == 0xab && big.tail[15] == 0xab);
	memset(&small, 0xab, sizeof small);
	small.size = old;
	CHECK(simhash_store_stats_get(st, &small, NULL) == SIMHASH_OK);
	CHECK(small.bits == 64 && small.format_version == SIMHASH_STORE_FORMAT_VERSION);
	CHECK(small.file_bytes == 0xababababababababull); /* past its size: untouched */
	small.size = sizeof small.size;
	CHECK(simhash_store_stats_get(st, &small, NULL) == SIMHASH_EINVAL);
	simhash_store_stats_init(&small);
	CHECK(small.size == sizeof small && small.n_docs == 0);
	simhash_store_close(st);
	cleanup();
}

TEST_MAIN("store_errors", TEST(test_threads_get_their_own_detail),
	  TEST(test_failures_fill_the_detail), TEST(test_stats_follow_the_callers_size))
