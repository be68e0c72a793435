/* native.c - the C side of the Python module simhash._native (built by cffi
 * in API mode, see build_ffi.py), a client of simhash.h only.
 *
 * cffi releases the GIL around every call into this file, so a long text is
 * fingerprinted while other Python threads run. These helpers exist to keep
 * the per-call cost low (one call per text, results in a caller's buffer) and
 * to hand a batch of texts to simhash_fingerprint_batch(), which runs it on
 * threads, each with its own simhash_ctx.
 *
 * Invariants: nothing here keeps state between calls; every buffer handed
 * back to Python is freed by shpy_free().
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "simhash.h"

/* Fingerprints one text: out[0] bits 0..63, out[1] bits 64..127; on
 * SIMHASH_EUTF8, out[2] the byte offset of the first invalid sequence. */
int shpy_fingerprint(simhash_ctx *ctx, const char *text, size_t len, uint64_t *out)
{
	simhash_error e;
	simhash_fp fp;
	simhash_err err = simhash_fingerprint(ctx, text, len, &fp, &e);

	if (err) {
		if (err == SIMHASH_EUTF8)
			out[2] = e.offset;
		return err;
	}
	out[0] = fp.w[0];
	out[1] = fp.w[1];
	return SIMHASH_OK;
}

/* Fingerprints n features: feature i is blob[ends[i-1] .. ends[i]) (ends[-1]
 * being 0) with weights[i]. */
int shpy_features(simhash_ctx *ctx, const char *blob, const size_t *ends, const double *weights,
		  size_t n, uint64_t *out)
{
	simhash_feature *fs = NULL;
	simhash_fp fp;
	simhash_err err;
	size_t i, start = 0;

	if (n) {
		fs = malloc(n * sizeof(*fs));
		if (!fs)
			return SIMHASH_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		fs[i].data = blob + start;
		fs[i].len = ends[i] - start;
		fs[i].weight = weights[i];
		start = ends[i];
	}
	err = simhash_fingerprint_features(ctx, fs, n, &fp);
	free(fs);
	if (err)
		return err;
	out[0] = fp.w[0];
	out[1] = fp.w[1];
	return SIMHASH_OK;
}

/* ---------------------------------------------------------------- batches on threads */

/* Texts handed to simhash_fingerprint_batch() per call: bounds the pointer,
 * length and result arrays built here (40 bytes a text) whatever the batch. */
#define SLICE 65536

/* Fingerprints n texts (text i is blob[ends[i-1] .. ends[i])) with the
 * library's batch call on n_ctxs contexts into out[2 i], out[2 i + 1], a
 * slice at a time, in order. On failure returns the error of the lowest
 * failing text, its index in *err_index and, for SIMHASH_EUTF8, the byte
 * offset in *err_offset. */
static int run_batch(simhash_ctx *const *ctxs, unsigned n_ctxs, const char *blob,
		     const size_t *ends, size_t n, uint64_t *out, size_t *err_index,
		     size_t *err_offset)
{
	size_t cap = n < SLICE ? n : SLICE, first, m, i;
	simhash_error e;
	const char **texts = malloc((cap ? cap : 1) * sizeof(*texts));
	size_t *lens = malloc((cap ? cap : 1) * sizeof(*lens));
	simhash_fp *fps = malloc((cap ? cap : 1) * sizeof(*fps));
	simhash_err err = SIMHASH_OK;

	if (!texts || !lens || !fps) {
		err = SIMHASH_ENOMEM;
		*err_index = 0;
		*err_offset = 0;
		goto out;
	}
	for (first = 0; first < n && !err; first += m) {
		m = n - first < cap ? n - first : cap;
		for (i = 0; i < m; i++) {
			size_t start = first + i ? ends[first + i - 1] : 0;

			texts[i] = blob + start;
			lens[i] = ends[first + i] - start;
		}
		err = simhash_fingerprint_batch(ctxs, n_ctxs, texts, lens, m, fps, &e);
		if (err) {
			/* e.index is 0 for an error of the call itself */
			*err_index = first + (size_t)e.index;
			*err_offset = (size_t)e.offset;
			break;
		}
		for (i = 0; i < m; i++) {
			out[2 * (first + i)] = fps[i].w[0];
			out[2 * (first + i) + 1] = fps[i].w[1];
		}
	}
out:
	free(texts);
	free(lens);
	free(fps);
	return err;
}

int shpy_fingerprints(const simhash_config *cfg, const char *blob, const size_t *ends, size_t n,
		      unsigned n_threads, uint64_t *out, size_t *err_index, size_t *err_offset)
{
	simhash_ctx **ctxs;
	unsigned t;
	int err = SIMHASH_OK;

	if (n_threads < 1)
		n_threads = 1;
	if ((size_t)n_threads > (n + 15) / 16) /* the library takes 16 texts at a time */
		n_threads = n ? (unsigned)((n + 15) / 16) : 1;
	ctxs = calloc(n_threads, sizeof(*ctxs));
	if (!ctxs)
		err = SIMHASH_ENOMEM;
	for (t = 0; !err && t < n_threads; t++)
		err = simhash_ctx_new(cfg, &ctxs[t]);
	if (err) {
		*err_index = 0;
		*err_offset = 0;
	} else {
		err = run_batch(ctxs, n_threads, blob, ends, n, out, err_index, err_offset);
	}
	for (t = 0; ctxs && t < n_threads; t++)
		simhash_ctx_free(ctxs[t]);
	free(ctxs);
	return err;
}

/* The same with the caller's contexts, ctxs[0 .. n_threads): a context keeps
 * caches between texts (the python-simhash mode's 4-gram hashes), so contexts
 * that live from batch to batch make later batches faster. */
int shpy_fingerprints_ctx(simhash_ctx **ctxs, unsigned n_threads, const char *blob,
			  const size_t *ends, size_t n, uint64_t *out, size_t *err_index,
			  size_t *err_offset)
{
	return run_batch(ctxs, n_threads < 1 ? 1 : n_threads, blob, ends, n, out, err_index,
			 err_offset);
}

/* ---------------------------------------------------------------- the features of a text */

struct feats {
	char *blob;
	size_t len, cap;
	uint32_t *counts;
	size_t *ends;
	size_t n, n_cap;
	int failed;
};

static int feats_add(const char *data, size_t len, uint32_t count, void *arg)
{
	struct feats *f = arg;

	if (f->len + len + 1 > f->cap) {
		size_t cap = f->cap ? f->cap : 256;
		char *p;

		while (cap < f->len + len + 1)
			cap *= 2;
		p = realloc(f->blob, cap);
		if (!p)
			goto fail;
		f->blob = p;
		f->cap = cap;
	}
	if (f->n == f->n_cap) {
		size_t cap = f->n_cap ? 2 * f->n_cap : 64;
		uint32_t *p = realloc(f->counts, cap * sizeof(*p));
		size_t *e;

		if (!p)
			goto fail;
		f->counts = p;
		e = realloc(f->ends, cap * sizeof(*e));
		if (!e)
			goto fail;
		f->ends = e;
		f->n_cap = cap;
	}
	memcpy(f->blob + f->len, data, len);
	f->len += len;
	f->ends[f->n] = f->len;
	f->counts[f->n++] = count;
	return 0;
fail:
	f->failed = 1;
	return 1;
}

/* The distinct features of a text: feature i is (*blob)[ends[i-1] .. ends[i]),
 * occurring (*counts)[i] times. Free the three arrays with shpy_free(). */
int shpy_features_list(simhash_ctx *ctx, const char *text, size_t len, char **blob,
		       size_t **ends, uint32_t **counts, size_t *n)
{
	struct feats f = { 0 };
	int err = simhash_features_each(ctx, text, len, feats_add, &f, NULL);

	if (!err && f.failed)
		err = SIMHASH_ENOMEM;
	if (err) {
		free(f.blob);
		free(f.counts);
		free(f.ends);
		return err;
	}
	*blob = f.blob;
	*ends = f.ends;
	*counts = f.counts;
	*n = f.n;
	return SIMHASH_OK;
}

void shpy_free(void *p)
{
	free(p);
}

/* ---------------------------------------------------------------- the index, values as words */

static simhash_fp fp_of(const simhash_index *ix, uint64_t lo, uint64_t hi)
{
	simhash_fp fp = { { lo, hi }, simhash_index_bits(ix) };

	if (fp.bits == 64)
		fp.w[1] = 0;
	return fp;
}

int shpy_index_insert(simhash_index *ix, uint64_t lo, uint64_t hi, uint64_t id)
{
	simhash_fp fp = fp_of(ix, lo, hi);

	return simhash_index_insert(ix, &fp, id);
}

int shpy_index_delete(simhash_index *ix, uint64_t lo, uint64_t hi, uint64_t id, int *found)
{
	simhash_fp fp = fp_of(ix, lo, hi);

	return simhash_index_delete(ix, &fp, id, found);
}

int shpy_index_query(const simhash_index *ix, uint64_t lo, uint64_t hi, unsigned k,
		     simhash_matches *m)
{
	simhash_fp fp = fp_of(ix, lo, hi);

	return simhash_index_query(ix, &fp, k, m);
}

/* The same, returning the number of matches, or minus the error. */
long shpy_index_query_n(const simhash_index *ix, uint64_t lo, uint64_t hi, unsigned k,
			simhash_matches *m)
{
	simhash_fp fp = fp_of(ix, lo, hi);
	int err = simhash_index_query(ix, &fp, k, m);

	return err ? -(long)err : (long)m->n;
}

/* The same, also copying the first cap ids into ids[] (cheaper for Python to
 * read than the match structs). */
long shpy_index_query_ids(const simhash_index *ix, uint64_t lo, uint64_t hi, unsigned k,
			  simhash_matches *m, uint64_t *ids, size_t cap)
{
	simhash_fp fp = fp_of(ix, lo, hi);
	int err = simhash_index_query(ix, &fp, k, m);
	size_t i;

	if (err)
		return -(long)err;
	for (i = 0; i < m->n && i < cap; i++)
		ids[i] = m->v[i].id;
	return (long)m->n;
}

/* A growable log of 64-bit values (SimhashIndex remembers what it was asked
 * for its bucket_size()). Queries run without the GIL, from any thread: a
 * mutex guards it. */
typedef struct shpy_log {
	pthread_mutex_t mu;
	uint64_t *v;
	size_t n;
	size_t cap;
} shpy_log;

shpy_log *shpy_log_new(void)
{
	shpy_log *log = calloc(1, sizeof(*log));

	if (log)
		pthread_mutex_init(&log->mu, NULL);
	return log;
}

void shpy_log_free(shpy_log *log)
{
	if (!log)
		return;
	pthread_mutex_destroy(&log->mu);
	free(log->v);
	free(log);
}

/* Hands the logged values over (*values, free with shpy_free) and empties
 * the log; returns their number. */
size_t shpy_log_take(shpy_log *log, uint64_t **values)
{
	size_t n;

	pthread_mutex_lock(&log->mu);
	*values = log->v;
	n = log->n;
	log->v = NULL;
	log->n = log->cap = 0;
	pthread_mutex_unlock(&log->mu);
	return n;
}

static void log_add(shpy_log *log, uint64_t v)
{
	pthread_mutex_lock(&log->mu);
	if (log->n == log->cap) {
		size_t c = log->cap ? 2 * log->cap : 1024;
		uint64_t *p = realloc(log->v, c * sizeof(*p));

		if (p) {
			log->v = p;
			log->cap = c;
		}
	}
	/* without memory the value is not logged: it only serves bucket_size() */
	if (log->n < log->cap)
		log->v[log->n++] = v;
	pthread_mutex_unlock(&log->mu);
}

/* shpy_index_query_ids() of a 64-bit value, also appended to log. */
long shpy_index_query_log(const simhash_index *ix, uint64_t v, unsigned k, simhash_matches *m,
			  uint64_t *ids, size_t cap, shpy_log *log)
{
	log_add(log, v);
	return shpy_index_query_ids(ix, v, 0, k, m, ids, cap);
}

/* n queries (bits/64 words each in qs) on threads; the answers flattened:
 * query i's matches are (*ids)[ends[i-1] .. ends[i]) with their distances.
 * Free the three arrays with shpy_free(). */
int shpy_index_query_batch(const simhash_index *ix, const uint64_t *qs, size_t n, unsigned k,
			   unsigned threads, uint64_t **ids, unsigned **dists, size_t **ends)
{
	unsigned words = simhash_index_bits(ix) / 64;
	simhash_matches *outs = calloc(n ? n : 1, sizeof(*outs));
	simhash_fp *fps = malloc((n ? n : 1) * sizeof(*fps));
	size_t i, j, total = 0, pos = 0;
	int err = SIMHASH_ENOMEM;

	*ids = NULL;
	*dists = NULL;
	*ends = NULL;
	if (!outs || !fps)
		goto out;
	for (i = 0; i < n; i++) {
		fps[i].w[0] = qs[i * words];
		fps[i].w[1] = words == 2 ? qs[i * words + 1] : 0;
		fps[i].bits = words * 64;
	}
	err = simhash_index_query_batch(ix, fps, n, k, threads, outs);
	if (err)
		goto out;
	for (i = 0; i < n; i++)
		total += outs[i].n;
	*ids = malloc((total ? total : 1) * sizeof(**ids));
	*dists = malloc((total ? total : 1) * sizeof(**dists));
	*ends = malloc((n ? n : 1) * sizeof(**ends));
	if (!*ids || !*dists || !*ends) {
		err = SIMHASH_ENOMEM;
		free(*ids);
		free(*dists);
		free(*ends);
		*ids = NULL;
		*dists = NULL;
		*ends = NULL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < outs[i].n; j++, pos++) {
			(*ids)[pos] = outs[i].v[j].id;
			(*dists)[pos] = outs[i].v[j].dist;
		}
		(*ends)[i] = pos;
	}
out:
	if (outs)
		for (i = 0; i < n; i++)
			simhash_matches_free(&outs[i]);
	free(outs);
	free(fps);
	return err;
}

/* ---------------------------------------------------------------- the index, arrays in and out */

/* simhash_index_build with ids start, start + 1, ... (the default ids of
 * Index.build), so that Python makes no array of them. */
int shpy_index_build_seq(simhash_index *ix, const uint64_t *fps, size_t n, uint64_t start,
			 unsigned threads)
{
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	int err;

	if (!ids)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; i < n; i++)
		ids[i] = start + i;
	err = simhash_index_build(ix, fps, ids, n, threads);
	free(ids);
	return err;
}

/* The answers of queries [from, to), appended to growing arrays; offsets[i]
 * is where query i's answers start, relative to this part. */
struct qpart {
	const simhash_index *ix;
	const uint64_t *qs;
	size_t from, to;
	unsigned k, words;
	uint64_t *offsets;   /* the caller's, from + 1 .. to written */
	uint64_t *ids;
	uint8_t *dists;
	size_t n, cap;
	int err;
};

static void *qpart_run(void *arg)
{
	struct qpart *p = arg;
	simhash_matches m = { 0 };
	simhash_fp fp = { { 0, 0 }, p->words * 64 };

	for (size_t i = p->from; i < p->to && !p->err; i++) {
		fp.w[0] = p->qs[i * p->words];
		fp.w[1] = p->words == 2 ? p->qs[i * 2 + 1] : 0;
		p->err = simhash_index_query(p->ix, &fp, p->k, &m);
		if (p->err)
			break;
		if (p->n + m.n > p->cap) {
			size_t cap = p->cap ? p->cap : 1024;
			uint64_t *ids;
			uint8_t *dists;
			while (cap < p->n + m.n)
				cap *= 2;
			ids = realloc(p->ids, cap * sizeof(*ids));
			if (ids)
				p->ids = ids;
			dists = realloc(p->dists, cap);
			if (dists)
				p->dists = dists;
			if (!ids || !dists) {
				p->err = SIMHASH_ENOMEM;
				break;
			}
			p->cap = cap;
		}
		for (size_t j = 0; j < m.n; j++) {
			p->ids[p->n + j] = m.v[j].id;
			p->dists[p->n + j] = (uint8_t)m.v[j].dist;
		}
		p->n += m.n;
		p->offsets[i + 1] = p->n;
	}
	simhash_matches_free(&m);
	return NULL;
}

/* n queries (bits/64 words each in qs), answered CSR style: offsets (n + 1,
 * the caller's) and *ids, *dists (total = offsets[n] each, malloc'd here,
 * freed with shpy_free()); query i's answers are [offsets[i], offsets[i+1]),
 * nearest first, then by id. threads (>= 1) split the queries into
 * contiguous parts, so the answer does not depend on their number. */
int shpy_index_query_arrays(const simhash_index *ix, const uint64_t *qs, size_t n, unsigned k,
			    unsigned threads, uint64_t *offsets, uint64_t **ids, uint8_t **dists)
{
	struct qpart part[64];
	pthread_t tid[64];
	int started[64] = { 0 };
	unsigned words = simhash_index_bits(ix) / 64, t;
	size_t total = 0;
	int err = SIMHASH_OK;

	*ids = NULL;
	*dists = NULL;
	if (threads < 1)
		threads = 1;
	if (threads > 64)
		threads = 64;
	if (threads > 1 && n / threads < 256) /* small batches: one thread */
		threads = n / 256 ? (unsigned)(n / 256) : 1;
	for (t = 0; t < threads; t++) {
		part[t] = (struct qpart){ ix, qs, n * t / threads, n * (t + 1) / threads, k, words,
					  offsets, NULL, NULL, 0, 0, SIMHASH_OK };
		if (t > 0 && pthread_create(&tid[t], NULL, qpart_run, &part[t]) == 0)
			started[t] = 1;
	}
	qpart_run(&part[0]);
	for (t = 1; t < threads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			qpart_run(&part[t]);
	}
	for (t = 0; t < threads; t++) {
		if (part[t].err && !err)
			err = part[t].err;
		total += part[t].n;
	}
	offsets[0] = 0;
	if (!err) {
		*ids = malloc((total ? total : 1) * sizeof(**ids));
		*dists = malloc(total ? total : 1);
		if (!*ids || !*dists)
			err = SIMHASH_ENOMEM;
	}
	/* the parts one after another; their offsets made absolute */
	for (t = 0, total = 0; t < threads && !err; t++) {
		struct qpart *p = &part[t];
		if (p->n) {
			memcpy(*ids + total, p->ids, p->n * sizeof(**ids));
			memcpy(*dists + total, p->dists, p->n);
		}
		for (size_t i = p->from; i < p->to; i++)
			offsets[i + 1] += total;
		total += p->n;
	}
	for (t = 0; t < threads; t++) {
		free(part[t].ids);
		free(part[t].dists);
	}
	if (err) {
		free(*ids);
		free(*dists);
		*ids = NULL;
		*dists = NULL;
	}
	return err;
}
