/* dedup_out.c - the outputs of `simhash dedup` that both decisions write:
 * pairs (-k), clusters as JSON Lines, and the records to keep or to drop.
 *
 * Invariants: every output is in input order (pairs by their first document,
 * then their second; clusters by their first member; records as read), so it
 * is the same bytes for every -j; ids are written as read; keep and drop
 * write each record byte for byte, line break included, re-read from its
 * input (dedup_read_record()). Output goes out in 1 MiB pieces through an
 * outfile (outfile.h), whole or not at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dedup.h"
#include "util.h"

int dedup_flush_out(struct outfile *out, struct sbuf *b, int force)
{
	if (b->len && (force || b->len >= ((size_t)1 << 20))) {
		if (outfile_write(out, b->p, b->len))
			return -1;
		b->len = 0;
	}
	return 0;
}

int dedup_add_id(struct sbuf *b, const struct dedup_docs *d, size_t i)
{
	return sbuf_add(b, d->ids.p + d->id_off[i], (size_t)(d->id_off[i + 1] - d->id_off[i]));
}

static unsigned doc_dist(const struct dedup_docs *d, size_t i, size_t j)
{
	unsigned n = 0, w;

	for (w = 0; w < d->nw; w++)
		n += (unsigned)__builtin_popcountll(d->fps[i * d->nw + w] ^ d->fps[j * d->nw + w]);
	return n;
}

int dedup_member_dist(struct sbuf *b, const struct dedup_docs *d, const void *arg, size_t first,
		      size_t m)
{
	return sbuf_adds(b, ",\"dist\":") || sbuf_add_u64(b, doc_dist(d, first, m));
}

int dedup_write_pairs(struct outfile *out, const struct dedup_docs *d,
		      const simhash_pair *pairs, size_t n, const double *sims)
{
	struct sbuf b = { 0 };
	char num[32];
	size_t i;
	int ret = EXIT_OK;

	for (i = 0; i < n && ret == EXIT_OK; i++) {
		if (dedup_add_id(&b, d, (size_t)pairs[i].a) || sbuf_addc(&b, '\t') ||
		    dedup_add_id(&b, d, (size_t)pairs[i].b) || sbuf_addc(&b, '\t') ||
		    sbuf_add_u64(&b, pairs[i].dist))
			ret = EXIT_FAIL;
		if (sims) {
			int m = snprintf(num, sizeof(num), "\t%.6f", sims[i]);
			if (sbuf_add(&b, num, (size_t)m))
				ret = EXIT_FAIL;
		}
		if (sbuf_addc(&b, '\n') || dedup_flush_out(out, &b, 0))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && dedup_flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	sbuf_free(&b);
	return ret;
}

/* JSON Lines, one per cluster of two or more, in order of its first member:
 * {"cluster":N,"size":S,"members":[{"id":...,"dist":D},...]}; member(arg)
 * writes each member's field after its id ("dist" with -k, "sim" by
 * default). */
int dedup_write_clusters(struct outfile *out, const struct dedup_docs *d, const uint64_t *cl,
			 dedup_member_fn *member, const void *arg, size_t *n_clusters)
{
	size_t n = d->n, i, *start = xcalloc(n + 1, sizeof(*start)), *order, *fill;
	struct sbuf b = { 0 };
	int ret = EXIT_OK;

	for (i = 0; i < n; i++)
		start[cl[i] + 1]++;
	for (i = 0; i < n; i++)
		start[i + 1] += start[i];
	order = xmalloc((n ? n : 1) * sizeof(*order));
	fill = xmalloc((n ? n : 1) * sizeof(*fill));
	memcpy(fill, start, n * sizeof(*fill));
	for (i = 0; i < n; i++)
		order[fill[cl[i]]++] = i;
	*n_clusters = 0;
	for (i = 0; i < n && ret == EXIT_OK; i++) {
		size_t size = start[i + 1] - start[i], j;
		if (cl[i] != i || size < 2)
			continue;
		++*n_clusters;
		if (sbuf_adds(&b, "{\"cluster\":") || sbuf_add_u64(&b, *n_clusters) ||
		    sbuf_adds(&b, ",\"size\":") || sbuf_add_u64(&b, size) ||
		    sbuf_adds(&b, ",\"members\":["))
			ret = EXIT_FAIL;
		for (j = start[i]; j < start[i + 1] && ret == EXIT_OK; j++) {
			size_t m = order[j];
			if ((j > start[i] && sbuf_addc(&b, ',')) || sbuf_adds(&b, "{\"id\":") ||
			    sbuf_add_json_str(&b, d->ids.p + d->id_off[m],
					      (size_t)(d->id_off[m + 1] - d->id_off[m])) ||
			    member(&b, d, arg, i, m) || sbuf_addc(&b, '}'))
				ret = EXIT_FAIL;
		}
		if (ret == EXIT_OK && (sbuf_adds(&b, "]}\n") || dedup_flush_out(out, &b, 0)))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && dedup_flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	sbuf_free(&b);
	free(start);
	free(order);
	free(fill);
	return ret;
}

/* Appends document i to b as `keep` and `drop` write it: its record byte for
 * byte as read (rec is scratch space), or in files mode its path and a
 * newline. Returns EXIT_OK or EXIT_FAIL (a read error is reported). */
int dedup_add_record(struct sbuf *b, const struct dedup_run *run, const struct dedup_input *ins,
		     const struct dedup_docs *d, size_t i, struct dedup_records *rec)
{
	const char *p;
	size_t len;

	if (run->mode == MODE_FILES)
		return dedup_add_id(b, d, i) || sbuf_addc(b, '\n') ? EXIT_FAIL : EXIT_OK;
	if (dedup_records_get(rec, ins, d, i, &p, &len)) {
		cli_err("%s: %s", display_name(ins[d->src[i]].path), strerror(errno));
		return EXIT_FAIL;
	}
	return sbuf_add(b, p, len) ? EXIT_FAIL : EXIT_OK;
}

/* The records to keep (the first of each cluster, and every single one) or
 * to drop (the others), byte for byte, in input order; files mode: paths. */
int dedup_write_records(struct outfile *out, const struct dedup_run *run,
			const struct dedup_input *ins, const struct dedup_docs *d,
			const uint64_t *cl, int keep)
{
	struct dedup_records rec = { 0 };
	struct sbuf b = { 0 };
	size_t i;
	int ret = EXIT_OK;

	for (i = 0; i < d->n && ret == EXIT_OK; i++) {
		if ((cl[i] == i) != keep)
			continue;
		ret = dedup_add_record(&b, run, ins, d, i, &rec);
		if (ret == EXIT_OK && dedup_flush_out(out, &b, 0))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && dedup_flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	sbuf_free(&rec.win);
	sbuf_free(&b);
	return ret;
}

size_t dedup_count_clusters(const uint64_t *cl, size_t n)
{
	char *has = xcalloc(n ? n : 1, 1);
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (cl[i] != i && !has[cl[i]]) {
			has[cl[i]] = 1;
			c++;
		}
	free(has);
	return c;
}

