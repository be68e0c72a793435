/* similarity.c - exact similarity of two texts, to verify what fingerprints
 * suggest: cosine of the weighted feature vectors and Jaccard of the feature
 * sets, under the ctx's normalization and features.
 *
 * Each text's distinct features become (key, weight) pairs sorted by key; one
 * merge walk then gives the dot product, both norms, the intersection and the
 * union. Features are identified by their 64-bit XXH3 key, like everywhere in
 * the library (a collision among a text's features is astronomically rare).
 * A text's keys are distinct, so any sort gives the one order: a short list
 * goes through qsort(), a long one through a radix sort that polls the
 * interrupt hook as it goes (and runs in linear time).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#include "ctx.h"

typedef struct pair {
	uint64_t key;
	double w;
} pair;

static int by_key(const void *a, const void *b)
{
	uint64_t x = ((const pair *)a)->key, y = ((const pair *)b)->key;
	return x < y ? -1 : x > y;
}

/* Sorts p[0..n) by key: least significant byte first, eight stable passes
 * between p and tmp (n pairs), the hook polled every step pairs. */
static simhash_err radix_sort(sh_intr *intr, pair *p, pair *tmp, size_t n)
{
	size_t count[256], poll_at = sh_intr_step(intr), done = 0;
	pair *swap;

	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t sum = 0;
		memset(count, 0, sizeof count);
		for (size_t i = 0; i < n; i++)
			count[p[i].key >> shift & 0xFF]++;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++, done++) {
			if (sh_intr_at(intr, done, &poll_at))
				return SIMHASH_EINTR;
			tmp[count[p[i].key >> shift & 0xFF]++] = p[i];
		}
		swap = p;
		p = tmp;
		tmp = swap;
	}
	/* an even number of passes: the sorted pairs are back in p */
	return SIMHASH_OK;
}

static simhash_err sort_pairs(simhash_ctx *ctx, pair *p, size_t n)
{
	if (n <= sh_intr_step(&ctx->intr) || n < 4096) {
		qsort(p, n, sizeof *p, by_key);
		return SIMHASH_OK;
	}
	if (sh_buf_reserve(&ctx->sort_tmp, n * sizeof *p))
		return SIMHASH_ENOMEM;
	return radix_sort(&ctx->intr, p, ctx->sort_tmp.p, n);
}

/* The sorted (key, weight) pairs of text, written at *buf from index at. */
static simhash_err collect(simhash_ctx *ctx, const char *text, size_t len, sh_buf *buf,
			   size_t at, size_t *n_out)
{
	simhash_config cfg = ctx->cfg;
	const sh_uniq *u;
	size_t n_uniq;
	pair *p;
	simhash_err err = sh_ctx_distinct(ctx, text, len, &u, &n_uniq);

	if (err)
		return err;
	if (sh_buf_reserve(buf, (at + n_uniq + 1) * sizeof(pair)))
		return SIMHASH_ENOMEM;
	p = (pair *)buf->p + at;
	if (cfg.idf)
		cfg.weight = SIMHASH_WEIGHT_TFIDF;
	for (size_t i = 0; i < n_uniq; i++) {
		p[i].key = u[i].key;
		p[i].w = sh_weight(&cfg, &u[i]);
	}
	err = sort_pairs(ctx, p, n_uniq);
	if (!err)
		*n_out = n_uniq;
	return err;
}

static simhash_err similarity(simhash_ctx *ctx, const char *a, size_t a_len, const char *b,
			      size_t b_len, double *cosine, double *jaccard)
{
	size_t na, nb, i = 0, j = 0, inter = 0, poll_at;
	double dot = 0, wa = 0, wb = 0;
	const pair *pa, *pb;
	simhash_err err;

	if (!ctx || (!a && a_len) || (!b && b_len) || ctx->cfg.compat != SIMHASH_COMPAT_NONE)
		return SIMHASH_EINVAL;
	err = collect(ctx, a ? a : "", a_len, &ctx->pairs, 0, &na);
	if (!err)
		err = collect(ctx, b ? b : "", b_len, &ctx->pairs, na, &nb);
	if (err)
		return err;
	pa = ctx->pairs.p;
	pb = pa + na;
	poll_at = sh_intr_step(&ctx->intr);
	while (i < na && j < nb) {
		if (sh_intr_at(&ctx->intr, i + j, &poll_at))
			return SIMHASH_EINTR;
		if (pa[i].key == pb[j].key) {
			dot += pa[i].w * pb[j].w;
			wa += pa[i].w * pa[i].w;
			wb += pb[j].w * pb[j].w;
			inter++, i++, j++;
		} else if (pa[i].key < pb[j].key) {
			wa += pa[i].w * pa[i].w;
			i++;
		} else {
			wb += pb[j].w * pb[j].w;
			j++;
		}
	}
	for (; i < na; i++)
		wa += pa[i].w * pa[i].w;
	for (; j < nb; j++)
		wb += pb[j].w * pb[j].w;
	if (cosine)
		*cosine = (na == 0 && nb == 0) ? 1.0
			  : (wa > 0 && wb > 0)   ? fmin(1.0, dot / (sqrt(wa) * sqrt(wb)))
						 : 0.0;
	if (jaccard)
		*jaccard = (na == 0 && nb == 0) ? 1.0 : (double)inter / (double)(na + nb - inter);
	return SIMHASH_OK;
}

simhash_err simhash_text_similarity(simhash_ctx *ctx, const char *a, size_t a_len, const char *b,
				    size_t b_len, double *cosine, double *jaccard,
				    simhash_error *err)
{
	return sh_ctx_fail(ctx, similarity(ctx, a, a_len, b, b_len, cosine, jaccard), err);
}
