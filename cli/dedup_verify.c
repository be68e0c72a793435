/* dedup_verify.c - `simhash dedup --verify`: keeps the candidate pairs of -k
 * whose exact similarity (Jaccard or cosine of --verify-features) reaches the
 * threshold.
 *
 * Workload: every candidate pair of -k, each needing both texts. Texts are
 * not kept in memory: each is re-read by its record's offset
 * (dedup_read_record()). Pairs come sorted by their first document, so a
 * thread reads that one once per run of pairs.
 * Threads take contiguous shares of the list and write only their own slots
 * of sims, so the result is the same, in the same order, for every -j.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dedup.h"
#include "jsonl.h"
#include "util.h"

/* One verifying thread: pairs [lo, hi) of the (a-sorted) list. */
struct vjob {
	const struct dedup_run *run;
	const struct dedup_input *ins;
	const struct dedup_docs *d;
	const simhash_config *vcfg;
	enum verify how;
	const simhash_pair *pairs;
	size_t lo, hi;
	double *sims;    /* per pair; < 0: below the threshold or not verified */
	double threshold;
	int failed;
	char err[DEDUP_ERR_MAX];
};

/* The text of document i: the file, the line, or the record's text field.
 * 0, or -1 with the message in err. */
static int load_text(struct vjob *j, size_t i, struct sbuf *buf, struct jsonl_rec *rec,
		     const char **text, size_t *len)
{
	const struct dedup_docs *d = j->d;
	const char *path = display_name(j->ins[d->src[i]].path);
	char err[DEDUP_ERR_MAX / 2];
	size_t n;

	if (dedup_read_record(j->ins, d, i, buf)) {
		snprintf(j->err, sizeof(j->err), "%s: %s", path, strerror(errno));
		return -1;
	}
	n = buf->len;
	if (j->run->mode != MODE_FILES && n && buf->p[n - 1] == '\n')
		n--;
	if (j->run->mode != MODE_FILES && n && buf->p[n - 1] == '\r')
		n--;
	if (j->run->mode != MODE_JSONL) {
		*text = buf->p;
		*len = n;
		return 0;
	}
	if (jsonl_extract(buf->p, n, j->run->text_field, j->run->id_field, j->run->jsonl_flags,
			  rec, err, sizeof(err)) != JSONL_OK) {
		snprintf(j->err, sizeof(j->err), "%s: record changed since it was read: %s", path,
			 err);
		return -1;
	}
	*text = rec->text;
	*len = rec->text_len;
	return 0;
}

static void *verify_thread(void *arg)
{
	struct vjob *j = arg;
	struct sbuf ba = { 0 }, bb = { 0 };
	struct jsonl_rec ra, rb;
	const char *ta = NULL, *tb;
	size_t la = 0, lb, i;
	uint64_t cur = UINT64_MAX;
	simhash_ctx *ctx = NULL;
	simhash_err err;

	jsonl_rec_init(&ra);
	jsonl_rec_init(&rb);
	err = simhash_ctx_new(j->vcfg, &ctx);
	if (err) {
		snprintf(j->err, sizeof(j->err), "dedup: verify: %s", simhash_strerror(err));
		j->failed = 1;
	}
	for (i = j->lo; i < j->hi && !j->failed; i++) {
		double cos = 0, jac = 0, sim;

		if (j->pairs[i].a != cur) { /* pairs come sorted by a: read it once */
			cur = j->pairs[i].a;
			if (load_text(j, (size_t)cur, &ba, &ra, &ta, &la)) {
				j->failed = 1;
				break;
			}
		}
		if (load_text(j, (size_t)j->pairs[i].b, &bb, &rb, &tb, &lb)) {
			j->failed = 1;
			break;
		}
		err = simhash_text_similarity(ctx, ta, la, tb, lb, &cos, &jac, NULL);
		if (err) {
			snprintf(j->err, sizeof(j->err), "dedup: verify: %s", simhash_strerror(err));
			j->failed = 1;
			break;
		}
		sim = j->how == VERIFY_JACCARD ? jac : cos;
		j->sims[i] = sim >= j->threshold ? sim : -1;
	}
	simhash_ctx_free(ctx);
	sbuf_free(&ba);
	sbuf_free(&bb);
	jsonl_rec_free(&ra);
	jsonl_rec_free(&rb);
	return NULL;
}

/* Keeps the pairs whose exact similarity is at least threshold, verified on
 * n_threads threads (each a contiguous share of the pairs; the result is in
 * the same order whatever their number); sims gets the similarity of each
 * kept pair. */
int dedup_verify(const struct dedup_run *run, const struct dedup_input *ins,
		 const struct dedup_docs *d, const simhash_config *vcfg, enum verify how,
		 double threshold, unsigned n_threads, simhash_pair *pairs, size_t *n_pairs,
		 double **sims)
{
	size_t n = *n_pairs, i, kept = 0;
	struct vjob *jobs;
	pthread_t *th;
	int *started, ret = EXIT_OK;
	unsigned t;

	if (n_threads > 64)
		n_threads = 64;
	if (n < 64)
		n_threads = 1;
	*sims = xmalloc((n ? n : 1) * sizeof(**sims));
	jobs = xcalloc(n_threads, sizeof(*jobs));
	th = xcalloc(n_threads, sizeof(*th));
	started = xcalloc(n_threads, sizeof(*started));
	for (t = 0; t < n_threads; t++) {
		struct vjob *j = &jobs[t];
		j->run = run;
		j->ins = ins;
		j->d = d;
		j->vcfg = vcfg;
		j->how = how;
		j->pairs = pairs;
		j->lo = n * t / n_threads;
		j->hi = n * (t + 1) / n_threads;
		j->sims = *sims;
		j->threshold = threshold;
		if (t > 0)
			started[t] = !pthread_create(&th[t], NULL, verify_thread, j);
	}
	verify_thread(&jobs[0]);
	for (t = 1; t < n_threads; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			verify_thread(&jobs[t]);
	}
	for (t = 0; t < n_threads && ret == EXIT_OK; t++)
		if (jobs[t].failed) {
			cli_err("%s", jobs[t].err);
			ret = EXIT_FAIL;
		}
	for (i = 0; i < n && ret == EXIT_OK; i++)
		if ((*sims)[i] >= 0) {
			pairs[kept] = pairs[i];
			(*sims)[kept++] = (*sims)[i];
		}
	*n_pairs = kept;
	free(jobs);
	free(th);
	free(started);
	return ret;
}

