/* batch.c - simhash_fingerprint_batch(): many texts on the caller's contexts,
 * one thread per context, for callers that hold a whole batch in memory (the
 * Python module's fingerprint lists and arrays).
 *
 * Workload: thousands to millions of short texts (a tweet, a title) per call,
 * so the texts are handed out in runs of BATCH_RUN through one atomic counter
 * rather than one by one, and a thread that is slow on a long text holds back
 * no other.
 *
 * Invariants:
 *  1. out[i] is what simhash_fingerprint() gives text i on any of the
 *     contexts (they share one config), so results do not depend on the
 *     number of contexts nor on which thread took which run.
 *  2. On failure the error returned is that of the lowest-numbered failing
 *     text, whatever the schedule: a thread stops handing out runs once a text
 *     fails, but every run already taken is finished, so every text before
 *     the failing one has been tried.
 *  3. The calling thread works as context 0; with one context no thread is
 *     made, and a thread that cannot be started leaves its share to the
 *     others.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "../common/internal.h"
#include "ctx.h"

#define BATCH_RUN 16 /* texts a thread takes at a time */

struct batch {
	simhash_ctx *const *ctxs;
	const char *const *texts;
	const size_t *lens;
	size_t n;
	simhash_fp *out;
	size_t next;            /* first text not handed out (atomic) */
	pthread_mutex_t lock;   /* guards the three below */
	size_t err_index;       /* lowest failing text; n if none */
	simhash_err err;
	size_t err_offset;
};

struct worker {
	struct batch *b;
	simhash_ctx *ctx;
	pthread_t thread;
};

static void batch_fail(struct batch *b, size_t i, simhash_err err, size_t offset)
{
	pthread_mutex_lock(&b->lock);
	if (i < b->err_index) {
		b->err_index = i;
		b->err = err;
		b->err_offset = offset;
	}
	pthread_mutex_unlock(&b->lock);
	/* later texts need not be done: hand out no more runs */
	__atomic_store_n(&b->next, b->n, __ATOMIC_RELAXED);
}

static void *batch_work(void *w_)
{
	struct worker *w = w_;
	struct batch *b = w->b;
	simhash_err err;
	size_t i, end;

	for (;;) {
		i = __atomic_fetch_add(&b->next, BATCH_RUN, __ATOMIC_RELAXED);
		if (i >= b->n)
			break;
		end = b->n - i < BATCH_RUN ? b->n : i + BATCH_RUN;
		for (; i < end; i++) {
			err = simhash_fingerprint(w->ctx, b->texts[i], b->lens[i], &b->out[i], NULL);
			if (err) {
				batch_fail(b, i, err, w->ctx->bad_offset);
				break;
			}
		}
	}
	return NULL;
}

simhash_err simhash_fingerprint_batch(simhash_ctx *const *ctxs, unsigned n_ctxs,
				      const char *const *texts, const size_t *lens, size_t n,
				      simhash_fp *out, simhash_error *e)
{
	struct batch b = { .ctxs = ctxs, .texts = texts, .lens = lens, .n = n, .out = out };
	struct worker *w;
	unsigned t, n_threads;

	if (!ctxs || !n_ctxs || (n && (!texts || !lens || !out)))
		return sh_error_code(e, SIMHASH_EINVAL);
	for (t = 0; t < n_ctxs; t++)
		if (!ctxs[t])
			return sh_error_code(e, SIMHASH_EINVAL);
	/* more threads than runs would only wait */
	n_threads = (size_t)n_ctxs > (n + BATCH_RUN - 1) / BATCH_RUN
			    ? (unsigned)((n + BATCH_RUN - 1) / BATCH_RUN)
			    : n_ctxs;
	if (n_threads < 1)
		n_threads = 1;
	w = calloc(n_threads, sizeof(*w));
	if (!w)
		return sh_error_code(e, SIMHASH_ENOMEM);
	b.err_index = n;
	pthread_mutex_init(&b.lock, NULL);
	for (t = 0; t < n_threads; t++) {
		w[t].b = &b;
		w[t].ctx = ctxs[t];
	}
	for (t = 1; t < n_threads; t++)
		if (pthread_create(&w[t].thread, NULL, batch_work, &w[t]))
			break;
	n_threads = t; /* the threads started, and the caller's */
	batch_work(&w[0]);
	for (t = 1; t < n_threads; t++)
		pthread_join(w[t].thread, NULL);
	pthread_mutex_destroy(&b.lock);
	free(w);
	if (b.err_index == n)
		return SIMHASH_OK;
	if (!e)
		return b.err;
	if (b.err == SIMHASH_EUTF8) {
		sh_error_set(e, b.err, "text %zu: invalid UTF-8 at byte %zu", b.err_index,
			     b.err_offset);
		e->offset = b.err_offset;
	} else {
		sh_error_set(e, b.err, "text %zu: %s", b.err_index, simhash_strerror(b.err));
	}
	e->index = b.err_index;
	return b.err;
}
