/* dedup_near.c - the default decision of `simhash dedup`: two documents are
 * near-duplicates when the exact similarity of their texts reaches the
 * threshold (simhash_near_decide(), docs/quality.md).
 *
 * Each document was sketched as it was read (dedup_read.c): the kind of its
 * features (character n-grams of a short text, word 3-shingles of a long one)
 * and their keys. The sketches are joined by simhash_near_band_join() (banded
 * MinHash candidates, each checked exactly) or with --exhaustive by
 * simhash_near_join() (every pair the threshold admits). Either gives the
 * groups of exact duplicates and the near pairs between their first members;
 * the pairs output expands them into every pair, in input order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dedup.h"
#include "util.h"

/* The outcome of the join over every document: exact-duplicate groups
 * (members of each first member, ascending) and the near pairs between the
 * first members, both ways (adjacency lists). */
struct near {
	int exhaustive; /* simhash_near_join() instead of the band join */
	const simhash_sketch *sk; /* the documents' (struct dedup_docs) */
	uint64_t *same;
	simhash_near_pair *pairs;
	size_t n_pairs;
	size_t *gstart, *gmem; /* group of first member f: gmem[gstart[f] .. gstart[f + 1]) */
	size_t *astart;        /* pairs of first member f: adj[astart[f] .. astart[f + 1]) */
	struct adj { uint64_t other; double jaccard; } *adj;
};

static void near_free(struct near *nr)
{
	free(nr->same);
	simhash_near_pairs_free(nr->pairs);
	free(nr->gstart);
	free(nr->gmem);
	free(nr->astart);
	free(nr->adj);
}

static simhash_near_kind doc_kind(const struct dedup_docs *d, size_t i)
{
	return d->sk[i].kind;
}

static int near_join(const struct dedup_docs *d, struct near *nr)
{
	size_t n = d->n, i, *fill;
	simhash_err err;

	nr->same = xcalloc(n ? n : 1, sizeof(*nr->same));
	err = nr->exhaustive ? simhash_near_join(nr->sk, n, nr->same, &nr->pairs, &nr->n_pairs)
			     : simhash_near_band_join(nr->sk, n, nr->same, &nr->pairs, &nr->n_pairs);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		return EXIT_FAIL;
	}
	nr->gstart = xcalloc(n + 2, sizeof(*nr->gstart));
	nr->gmem = xmalloc((n ? n : 1) * sizeof(*nr->gmem));
	for (i = 0; i < n; i++)
		nr->gstart[nr->same[i] + 2]++;
	for (i = 2; i < n + 2; i++)
		nr->gstart[i] += nr->gstart[i - 1];
	for (i = 0; i < n; i++)
		nr->gmem[nr->gstart[nr->same[i] + 1]++] = i;
	nr->astart = xcalloc(n + 2, sizeof(*nr->astart));
	nr->adj = xmalloc((2 * nr->n_pairs + 1) * sizeof(*nr->adj));
	for (i = 0; i < nr->n_pairs; i++) {
		nr->astart[nr->pairs[i].a + 1]++;
		nr->astart[nr->pairs[i].b + 1]++;
	}
	for (i = 1; i < n + 1; i++)
		nr->astart[i] += nr->astart[i - 1];
	fill = xmalloc((n + 1) * sizeof(*fill));
	memcpy(fill, nr->astart, (n + 1) * sizeof(*fill));
	for (i = 0; i < nr->n_pairs; i++) {
		const simhash_near_pair *p = &nr->pairs[i];
		nr->adj[fill[p->a]++] = (struct adj){ p->b, p->jaccard };
		nr->adj[fill[p->b]++] = (struct adj){ p->a, p->jaccard };
	}
	free(fill);
	return EXIT_OK;
}

/* Pairs in all: within each group, and group by group for each near pair. */
static size_t near_count(const struct dedup_docs *d, const struct near *nr)
{
	size_t total = 0, i;

	for (i = 0; i < d->n; i++) {
		size_t g = nr->gstart[i + 1] - nr->gstart[i];
		if (nr->same[i] == i)
			total += g * (g - 1) / 2;
	}
	for (i = 0; i < nr->n_pairs; i++) {
		const simhash_near_pair *p = &nr->pairs[i];
		total += (nr->gstart[p->a + 1] - nr->gstart[p->a]) *
			 (nr->gstart[p->b + 1] - nr->gstart[p->b]);
	}
	return total;
}

struct partner {
	uint64_t b;
	double jaccard;
};

static int by_partner(const void *x, const void *y)
{
	uint64_t a = ((const struct partner *)x)->b, b = ((const struct partner *)y)->b;
	return a < b ? -1 : a > b;
}

/* One pair line: ID_A, ID_B, DIST = round(100 (1 - SIM)), SIM, and with
 * --explain why: the kind's features, shared of all, Jaccard and the kind's
 * threshold, and for short texts the features not shared and their budget. */
static int near_line(struct sbuf *b, const struct dedup_docs *d, const struct near *nr,
		     size_t x, size_t y, double jaccard, int explain)
{
	simhash_near_kind kind = doc_kind(d, x);
	double sim = simhash_near_similarity(kind, jaccard);
	char num[200];
	int m;

	if (dedup_add_id(b, d, x) || sbuf_addc(b, '\t') || dedup_add_id(b, d, y) ||
	    sbuf_addc(b, '\t'))
		return -1;
	m = snprintf(num, sizeof(num), "%u\t%.6f", (unsigned)(100 * (1 - sim) + 0.5), sim);
	if (sbuf_add(b, num, (size_t)m))
		return -1;
	if (explain) {
		simhash_near_verdict v;
		simhash_near_decide(&nr->sk[x], &nr->sk[y], &v);
		size_t all = v.n_a + v.n_b - v.shared;
		if (kind == SIMHASH_NEAR_CHARS)
			m = snprintf(num, sizeof(num),
				     "\tshort, char n-grams: %zu of %zu shared, jaccard %.6f >= %.1f, "
				     "%zu not shared <= %d%s", v.shared, all, v.jaccard,
				     SIMHASH_NEAR_T_SHORT, all - v.shared, SIMHASH_NEAR_DIFF_SHORT,
				     nr->same[x] == nr->same[y] ? ", exact duplicate" : "");
		else
			m = snprintf(num, sizeof(num),
				     "\tlong, word 3-shingles: %zu of %zu shared, jaccard %.6f >= %.1f%s",
				     v.shared, all, v.jaccard, SIMHASH_NEAR_T_LONG,
				     nr->same[x] == nr->same[y] ? ", exact duplicate" : "");
		if (sbuf_add(b, num, (size_t)m))
			return -1;
	}
	return sbuf_addc(b, '\n');
}

/* Every pair a < b, in input order of a then b: b in a's own group, or in
 * the group of a first member paired with a's. */
static int near_pairs_out(struct outfile *out, const struct dedup_docs *d,
			  const struct near *nr, int explain)
{
	struct partner *p = NULL;
	size_t cap = 0, a, k, q;
	struct sbuf b = { 0 };
	int ret = EXIT_OK;

	for (a = 0; a < d->n && ret == EXIT_OK; a++) {
		size_t g = nr->same[a], n = 0;
		for (k = nr->astart[g]; k <= nr->astart[g + 1]; k++) {
			uint64_t grp = k < nr->astart[g + 1] ? nr->adj[k].other : g;
			double jac = k < nr->astart[g + 1] ? nr->adj[k].jaccard : 1.0;
			for (q = nr->gstart[grp]; q < nr->gstart[grp + 1]; q++) {
				if (nr->gmem[q] <= a)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 64;
					p = realloc(p, cap * sizeof(*p));
					if (!p) {
						cli_err("out of memory");
						sbuf_free(&b);
						return EXIT_FAIL;
					}
				}
				p[n++] = (struct partner){ nr->gmem[q], jac };
			}
		}
		if (n > 1)
			qsort(p, n, sizeof(*p), by_partner);
		for (k = 0; k < n && ret == EXIT_OK; k++)
			if (near_line(&b, d, nr, a, (size_t)p[k].b, p[k].jaccard, explain) ||
			    dedup_flush_out(out, &b, 0))
				ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && dedup_flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	free(p);
	sbuf_free(&b);
	return ret;
}

/* A cluster member's "sim": simhash_near_similarity() to the first member. */
static int near_member_sim(struct sbuf *b, const struct dedup_docs *d, const void *arg,
			   size_t first, size_t m)
{
	const struct near *nr = arg;
	simhash_near_verdict v;
	char num[32];
	int len;

	simhash_near_decide(&nr->sk[first], &nr->sk[m], &v);
	len = snprintf(num, sizeof(num), ",\"sim\":%.6f",
		       v.kind ? simhash_near_similarity(v.kind, v.jaccard) : 0.0);
	return sbuf_add(b, num, (size_t)len);
}

/* Clusters: the near pairs of the first members, and each member to its
 * first; linear in the documents and the pairs of first members. */
static int near_clusters(const struct dedup_docs *d, const struct near *nr, uint64_t *cl)
{
	size_t n_e = nr->n_pairs, i;
	simhash_pair *e;
	int ret = EXIT_OK;

	for (i = 0; i < d->n; i++)
		n_e += nr->same[i] != i;
	e = xmalloc((n_e ? n_e : 1) * sizeof(*e));
	n_e = 0;
	for (i = 0; i < nr->n_pairs; i++)
		e[n_e++] = (simhash_pair){ nr->pairs[i].a, nr->pairs[i].b, 0 };
	for (i = 0; i < d->n; i++)
		if (nr->same[i] != i)
			e[n_e++] = (simhash_pair){ nr->same[i], i, 0 };
	if (simhash_clusters(d->n, e, n_e, cl)) {
		cli_err("dedup: clusters: invalid pairs");
		ret = EXIT_FAIL;
	}
	free(e);
	return ret;
}

/* The default: join the sketches, write what --output says. */
int dedup_near_run(const struct dedup_opts *o, const struct dedup_run *run,
		   const struct dedup_input *ins, const struct dedup_docs *d, size_t *n_pairs,
		   size_t *n_clusters)
{
	struct near nr = { .exhaustive = o->exhaustive, .sk = d->sk };
	struct outfile out;
	uint64_t *cl = NULL;
	simhash_err err;
	int ret = EXIT_OK;

	*n_pairs = *n_clusters = 0;

	cl = cli_grow_big(NULL, 0, (d->n ? d->n : 1) * sizeof(*cl));
	if (!cl) {
		cli_err("out of memory");
		return EXIT_FAIL;
	}
	if (o->output == OUT_PAIRS) {
		/* every pair is listed, so every pair is verified */
		ret = near_join(d, &nr);
		if (ret == EXIT_OK)
			ret = near_clusters(d, &nr, cl);
		if (ret == EXIT_OK)
			*n_pairs = near_count(d, &nr);
	} else {
		err = nr.exhaustive ? simhash_near_clusters(nr.sk, d->n, cl)
				    : simhash_near_band_clusters(nr.sk, d->n, cl);
		if (err) {
			cli_err("dedup: %s", simhash_strerror(err));
			ret = EXIT_FAIL;
		}
	}
	if (ret)
		goto done;
	ret = outfile_open(&out, o->out);
	if (ret)
		goto done;
	if (o->output == OUT_PAIRS)
		ret = near_pairs_out(&out, d, &nr, o->explain);
	else if (o->output == OUT_CLUSTERS)
		ret = dedup_write_clusters(&out, d, cl, near_member_sim, &nr, n_clusters);
	else
		ret = dedup_write_records(&out, run, ins, d, cl, o->output == OUT_KEEP);
	if (ret) {
		outfile_abort(&out);
		goto done;
	}
	ret = outfile_commit(&out);
	if (o->output != OUT_CLUSTERS)
		*n_clusters = dedup_count_clusters(cl, d->n);
done:
	free(cl);
	near_free(&nr);
	return ret;
}

