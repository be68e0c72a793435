/* results.c - the results handle (simhash_store_results) that get, query and
 * check_and_put fill, and the order results come in.
 *
 * Bottom of the store beside record.c: it knows the handle's layout and
 * nothing of LMDB or the writer; reads (read.c) and writes (writes.c) fill
 * it. A result's id and metadata are copied out of LMDB's map into the
 * handle's own buffer, so they stay valid after the read transaction ends:
 * until the next call that fills the same handle (simhash.h).
 *
 * Invariants:
 *  1. While a handle is being filled, each match's id and meta hold offsets
 *     into bytes (the buffer may still move); sh_results_finish turns them
 *     into pointers once, at the end. A handle is read only after it.
 *  2. Results come sorted by (distance, document number): the same order
 *     for the index and the scan, so a query's answer does not depend on
 *     which of the two answered it.
 */
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

simhash_err simhash_store_results_new(simhash_store_results **out)
{
	if (!out)
		return SIMHASH_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out ? SIMHASH_OK : SIMHASH_ENOMEM;
}

void simhash_store_results_free(simhash_store_results *r)
{
	if (!r)
		return;
	free(r->m);
	sh_buf_free(&r->bytes);
	sh_buf_free(&r->hits);
	simhash_matches_free(&r->matches);
	free(r);
}

size_t simhash_store_results_count(const simhash_store_results *r)
{
	return r ? r->n : 0;
}

const simhash_store_match *simhash_store_results_get(const simhash_store_results *r, size_t i)
{
	return r && i < r->n ? &r->m[i] : NULL;
}

simhash_err sh_results_add(simhash_store_results *r, const struct sh_doc *d, unsigned dist)
{
	size_t need = r->bytes_len + d->id_len + 1 + d->meta_len;
	simhash_store_match *m;
	simhash_err e;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		simhash_store_match *p = realloc(r->m, cap * sizeof *p);

		if (!p)
			return SIMHASH_ENOMEM;
		r->m = p;
		r->cap = cap;
	}
	if ((e = sh_buf_reserve(&r->bytes, need)) != SIMHASH_OK)
		return e;
	m = &r->m[r->n++];
	/* offsets for now: the buffer may still move */
	m->id = (const char *)(uintptr_t)r->bytes_len;
	m->id_len = d->id_len;
	memcpy((char *)r->bytes.p + r->bytes_len, d->id, d->id_len);
	((char *)r->bytes.p)[r->bytes_len + d->id_len] = 0;
	r->bytes_len += d->id_len + 1;
	m->meta = (const void *)(uintptr_t)r->bytes_len;
	m->meta_len = d->meta_len;
	if (d->meta_len)
		memcpy((char *)r->bytes.p + r->bytes_len, d->meta, d->meta_len);
	r->bytes_len += d->meta_len;
	m->fp = d->fp;
	m->dist = dist;
	m->time = d->time;
	return SIMHASH_OK;
}

void sh_results_finish(simhash_store_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		r->m[i].id = (const char *)r->bytes.p + (uintptr_t)r->m[i].id;
		r->m[i].meta = (const char *)r->bytes.p + (uintptr_t)r->m[i].meta;
	}
}

void sh_results_reset(simhash_store_results *r)
{
	r->n = 0;
	r->bytes_len = 0;
}

static int cmp_hit(const void *a, const void *b)
{
	const sh_hit *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->docno < y->docno ? -1 : x->docno > y->docno;
}

void sh_hits_sort(sh_hit *h, size_t *n, size_t max)
{
	if (*n > 1)
		qsort(h, *n, sizeof *h, cmp_hit);
	if (max && *n > max)
		*n = max;
}
