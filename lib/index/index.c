/* index.c - the public face of the Hamming index: segments, set semantics,
 * locking, single and batch queries.
 *
 * Invariants (see ix.h for the segment list):
 *  1. every (fp, id) pair is live in at most one segment: insert and build
 *     look it up in every segment first, and a dead copy is revived in place;
 *  2. count is the number of live pairs;
 *  3. readers take ix->lock shared and never write to the index; writers take
 *     it exclusively, so a query sees either all or none of a write. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ix.h"

#define RDLOCK(ix) pthread_rwlock_rdlock((pthread_rwlock_t *)&(ix)->lock)
#define WRLOCK(ix) pthread_rwlock_wrlock((pthread_rwlock_t *)&(ix)->lock)
#define UNLOCK(ix) pthread_rwlock_unlock((pthread_rwlock_t *)&(ix)->lock)

void simhash_matches_free(simhash_matches *m)
{
	if (!m)
		return;
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

simhash_err simhash_index_new(unsigned bits, unsigned max_dist, simhash_index **out)
{
	simhash_index *ix;

	if (!out || (bits != 64 && bits != 128) ||
	    max_dist > (bits == 64 ? SIMHASH_INDEX_MAX_DIST_64 : SIMHASH_INDEX_MAX_DIST_128))
		return SIMHASH_EINVAL;
	ix = calloc(1, sizeof *ix);
	if (!ix)
		return SIMHASH_ENOMEM;
	ix->bits = bits;
	ix->words = bits / 64;
	ix->max_dist = max_dist;
	ix->force = -1;
	if (pthread_rwlock_init(&ix->lock, NULL)) {
		free(ix);
		return SIMHASH_ENOMEM;
	}
	*out = ix;
	return SIMHASH_OK;
}

void simhash_index_free(simhash_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n_seg; i++)
		sh_ix_seg_free(ix->seg[i]);
	free(ix->seg);
	free(ix->user);
	if (ix->map)
		munmap(ix->map, ix->map_len);
	pthread_rwlock_destroy(&ix->lock);
	free(ix);
}

simhash_err simhash_index_set_scheme(simhash_index *ix, const char *scheme)
{
	size_t len;

	if (!ix || !scheme)
		return SIMHASH_EINVAL;
	len = strlen(scheme);
	if (len >= SIMHASH_SCHEME_MAX)
		return SIMHASH_EINVAL;
	WRLOCK(ix);
	memcpy(ix->scheme, scheme, len + 1);
	UNLOCK(ix);
	return SIMHASH_OK;
}

const char *simhash_index_scheme(const simhash_index *ix)
{
	return ix ? ix->scheme : "";
}

simhash_err simhash_index_set_user(simhash_index *ix, const void *data, size_t len)
{
	void *copy = NULL;

	if (!ix || (len && !data))
		return SIMHASH_EINVAL;
	if (len) {
		copy = malloc(len);
		if (!copy)
			return SIMHASH_ENOMEM;
		memcpy(copy, data, len);
	}
	WRLOCK(ix);
	free(ix->user);
	ix->user = copy;
	ix->user_ext = NULL;
	ix->user_len = len;
	UNLOCK(ix);
	return SIMHASH_OK;
}

void simhash_index_user(const simhash_index *ix, const void **data, size_t *len)
{
	*data = ix->user ? ix->user : ix->user_ext;
	*len = ix->user_len;
}

simhash_err simhash_index_set_layout(simhash_index *ix, int layout, unsigned n_chunks)
{
	if (!ix || layout < -1 || layout > SIMHASH_LAYOUT_MIH ||
	    (n_chunks && (layout != SIMHASH_LAYOUT_MIH || n_chunks < ix->bits / 64 ||
			  n_chunks > sh_ix_max_chunks(ix->bits, ix->max_dist))))
		return SIMHASH_EINVAL;
	WRLOCK(ix);
	ix->force = layout;
	ix->force_m = n_chunks;
	UNLOCK(ix);
	return SIMHASH_OK;
}

size_t simhash_index_count(const simhash_index *ix)
{
	size_t n;
	if (!ix)
		return 0;
	RDLOCK(ix);
	n = ix->count;
	UNLOCK(ix);
	return n;
}

unsigned simhash_index_bits(const simhash_index *ix)
{
	return ix ? ix->bits : 0;
}

unsigned simhash_index_max_dist(const simhash_index *ix)
{
	return ix ? ix->max_dist : 0;
}

/* ---- segments */

/* A segment of the n sorted unique rows (fps, ids: heap blocks it takes). */
static simhash_err seg_make(const simhash_index *ix, uint64_t *fps, uint64_t *ids, size_t n,
			    unsigned threads, sh_ix_seg **out)
{
	sh_ix_seg *s = calloc(1, sizeof *s);
	simhash_index_plan plan;
	simhash_err err;

	if (!s) {
		free(fps), free(ids);
		return SIMHASH_ENOMEM;
	}
	s->n = n;
	s->fps = fps, s->ids = ids;
	s->own[0] = fps, s->own[1] = ids;
	err = sh_ix_plan_data(ix->bits, ix->max_dist, fps, n, (simhash_layout)ix->force, ix->force_m, &plan);
	if (!err)
		err = sh_ix_tables_build(s, ix->bits, &plan, threads);
	if (err) {
		sh_ix_seg_free(s);
		return err;
	}
	*out = s;
	return SIMHASH_OK;
}

static size_t seg_live(const sh_ix_seg *s)
{
	return s->n - s->n_dead;
}

/* Copies the live rows of segs [from, to) into new arrays. */
static simhash_err gather(const simhash_index *ix, size_t from, size_t to, uint64_t **fps_out,
			  uint64_t **ids_out, size_t *n_out)
{
	unsigned w = ix->words;
	size_t n = 0, j = 0;
	uint64_t *fps, *ids;

	for (size_t i = from; i < to; i++)
		n += seg_live(ix->seg[i]);
	/* one spare row: an entry is copied before its dead bit is seen */
	fps = sh_ix_alloc_big((n + 1) * w * 8, 0);
	ids = sh_ix_alloc_big((n + 1) * 8, 0);
	if (!fps || !ids) {
		free(fps), free(ids);
		return SIMHASH_ENOMEM;
	}
	for (size_t i = from; i < to; i++) {
		const sh_ix_seg *s = ix->seg[i];
		for (size_t e = 0; e < s->n; e++) {
			uint64_t fp[2];
			size_t row;
			/* into fp first: a dead entry must not be written at fps + j * w,
			 * which is past the end once every live one is in */
			sh_ix_seg_entry(s, w, e, fp, &row);
			if (sh_ix_is_dead(s, row))
				continue;
			memcpy(fps + j * w, fp, w * 8);
			ids[j++] = s->ids[row];
		}
	}
	*fps_out = fps, *ids_out = ids, *n_out = j;
	return SIMHASH_OK;
}

/* Replaces segments [from, n_seg) by one. */
static simhash_err merge_tail(simhash_index *ix, size_t from, unsigned threads)
{
	uint64_t *fps, *ids;
	size_t n;
	sh_ix_seg *s;
	simhash_err err = gather(ix, from, ix->n_seg, &fps, &ids, &n);

	if (err)
		return err;
	n = sh_ix_sort_unique(fps, ids, n, ix->words, threads);
	if (n == SIZE_MAX) {
		free(fps), free(ids);
		return SIMHASH_ENOMEM;
	}
	err = seg_make(ix, fps, ids, n, threads, &s);
	if (err)
		return err;
	for (size_t i = from; i < ix->n_seg; i++)
		sh_ix_seg_free(ix->seg[i]);
	ix->seg[from] = s;
	ix->n_seg = from + 1;
	return SIMHASH_OK;
}

/* Keeps segment sizes falling geometrically (ix.h, invariant 3): merges the
 * newest segment into the one before while it is at least half its size. */
static simhash_err rebalance(simhash_index *ix, unsigned threads)
{
	while (ix->n_seg >= 2 &&
	       seg_live(ix->seg[ix->n_seg - 1]) * 2 >= seg_live(ix->seg[ix->n_seg - 2])) {
		simhash_err err = merge_tail(ix, ix->n_seg - 2, threads);
		if (err)
			return err;
	}
	return SIMHASH_OK;
}

static simhash_err push_seg(simhash_index *ix, sh_ix_seg *s)
{
	if (ix->n_seg == ix->cap_seg) {
		size_t cap = ix->cap_seg ? ix->cap_seg * 2 : 8;
		sh_ix_seg **v = realloc(ix->seg, cap * sizeof *v);
		if (!v)
			return SIMHASH_ENOMEM;
		ix->seg = v;
		ix->cap_seg = cap;
	}
	ix->seg[ix->n_seg++] = s;
	return SIMHASH_OK;
}

/* Finds (fp, id): *seg_i and *row, live or dead; 0 if absent. */
static int locate(const simhash_index *ix, const uint64_t *fp, uint64_t id, size_t *seg_i,
		  size_t *row)
{
	for (size_t i = ix->n_seg; i-- > 0;) {
		size_t r = sh_ix_seg_find(ix->seg[i], ix->words, fp, id);
		if (r != SIZE_MAX) {
			*seg_i = i, *row = r;
			return 1;
		}
	}
	return 0;
}

static void set_dead(sh_ix_seg *s, size_t row, int dead)
{
	uint64_t bit = UINT64_C(1) << (row & 63);
	if (dead) {
		s->dead[row >> 6] |= bit;
		s->n_dead++;
	} else {
		s->dead[row >> 6] &= ~bit;
		s->n_dead--;
	}
}

/* Adds (fp, id) if absent, reviving a dead copy; *added = 1 if it was absent. */
static simhash_err add_one(simhash_index *ix, const uint64_t *fp, uint64_t id, int *added)
{
	size_t si, row;
	uint64_t *f, *i;
	sh_ix_seg *s;
	simhash_err err;

	*added = 0;
	if (locate(ix, fp, id, &si, &row)) {
		if (!sh_ix_is_dead(ix->seg[si], row))
			return SIMHASH_OK;
		set_dead(ix->seg[si], row, 0);
		ix->count++;
		*added = 1;
		return SIMHASH_OK;
	}
	f = malloc(ix->words * 8);
	i = malloc(8);
	if (!f || !i) {
		free(f), free(i);
		return SIMHASH_ENOMEM;
	}
	memcpy(f, fp, ix->words * 8);
	*i = id;
	err = seg_make(ix, f, i, 1, 1, &s);
	if (err)
		return err;
	err = push_seg(ix, s);
	if (err) {
		sh_ix_seg_free(s);
		return err;
	}
	ix->count++;
	*added = 1;
	return rebalance(ix, 1);
}

simhash_err simhash_index_insert(simhash_index *ix, const simhash_fp *fp, uint64_t id)
{
	simhash_err err;
	int added;

	if (!ix || !fp)
		return SIMHASH_EINVAL;
	if (fp->bits != ix->bits)
		return SIMHASH_ESCHEME;
	WRLOCK(ix);
	err = add_one(ix, fp->w, id, &added);
	UNLOCK(ix);
	return err;
}

simhash_err simhash_index_delete(simhash_index *ix, const simhash_fp *fp, uint64_t id, int *found)
{
	size_t si, row;
	simhash_err err = SIMHASH_OK;
	int hit = 0;

	if (found)
		*found = 0;
	if (!ix || !fp)
		return SIMHASH_EINVAL;
	if (fp->bits != ix->bits)
		return SIMHASH_ESCHEME;
	WRLOCK(ix);
	if (locate(ix, fp->w, id, &si, &row) && !sh_ix_is_dead(ix->seg[si], row)) {
		sh_ix_seg *s = ix->seg[si];
		if (!s->dead) {
			s->dead = calloc((s->n + 63) / 64, 8);
			if (!s->dead) {
				err = SIMHASH_ENOMEM;
				goto out_unlock;
			}
		}
		set_dead(s, row, 1);
		ix->count--;
		hit = 1;
		if (s->n_dead * 2 > s->n) /* compact: merge it with what follows */
			err = merge_tail(ix, si, 1);
	}
out_unlock:
	UNLOCK(ix);
	if (found)
		*found = hit;
	return err;
}

simhash_err simhash_index_build(simhash_index *ix, const uint64_t *fps, const uint64_t *ids, size_t n,
				unsigned threads)
{
	uint64_t *f = NULL, *i = NULL;
	size_t m = 0;
	sh_ix_seg *s;
	simhash_err err = SIMHASH_OK;

	if (!ix || (n && (!fps || !ids)) || n > UINT32_MAX)
		return SIMHASH_EINVAL;
	if (n == 0)
		return SIMHASH_OK;
	f = sh_ix_alloc_big(n * ix->words * 8, 0);
	i = sh_ix_alloc_big(n * 8, 0);
	if (!f || !i) {
		free(f), free(i);
		return SIMHASH_ENOMEM;
	}
	memcpy(f, fps, n * ix->words * 8);
	memcpy(i, ids, n * 8);
	n = sh_ix_sort_unique(f, i, n, ix->words, threads);
	if (n == SIZE_MAX) {
		free(f), free(i);
		return SIMHASH_ENOMEM;
	}
	WRLOCK(ix);
	/* drop pairs already present, reviving dead ones */
	for (size_t r = 0; r < n; r++) {
		size_t si, row;
		if (ix->n_seg && locate(ix, f + r * ix->words, i[r], &si, &row)) {
			if (sh_ix_is_dead(ix->seg[si], row)) {
				set_dead(ix->seg[si], row, 0);
				ix->count++;
			}
			continue;
		}
		if (m != r) {
			memcpy(f + m * ix->words, f + r * ix->words, ix->words * 8);
			i[m] = i[r];
		}
		m++;
	}
	if (m == 0) {
		free(f), free(i);
		goto out_unlock;
	}
	err = seg_make(ix, f, i, m, threads, &s);
	if (err)
		goto out_unlock;
	err = push_seg(ix, s);
	if (err) {
		sh_ix_seg_free(s);
		goto out_unlock;
	}
	ix->count += m;
	err = rebalance(ix, threads);
out_unlock:
	UNLOCK(ix);
	return err;
}

/* ---- queries */

static int cmp_match(const void *x, const void *y)
{
	const simhash_match *a = x, *b = y;
	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static simhash_err query_locked(const simhash_index *ix, const simhash_fp *q, unsigned k,
				simhash_matches *out)
{
	out->n = 0;
	for (size_t i = 0; i < ix->n_seg; i++) {
		simhash_err err = sh_ix_seg_query(ix->seg[i], ix->words, q->w, k, out);
		if (err)
			return err;
	}
	if (out->n > 32) {
		qsort(out->v, out->n, sizeof *out->v, cmp_match);
	} else {
		/* most answers are short: insertion sort, no calls */
		for (size_t i = 1; i < out->n; i++) {
			simhash_match m = out->v[i];
			size_t j = i;
			for (; j > 0 && cmp_match(&out->v[j - 1], &m) > 0; j--)
				out->v[j] = out->v[j - 1];
			out->v[j] = m;
		}
	}
	return SIMHASH_OK;
}

simhash_err simhash_index_query(const simhash_index *ix, const simhash_fp *q, unsigned k,
				simhash_matches *out)
{
	simhash_err err;

	if (!ix || !q || !out || k > ix->max_dist)
		return SIMHASH_EINVAL;
	if (q->bits != ix->bits)
		return SIMHASH_ESCHEME;
	RDLOCK(ix);
	err = query_locked(ix, q, k, out);
	UNLOCK(ix);
	return err;
}

typedef struct batch {
	const simhash_index *ix;
	const simhash_fp *qs;
	simhash_matches *outs;
	size_t n;
	unsigned k;
	size_t next; /* atomic */
	simhash_err err;
} batch;

static void *batch_worker(void *arg)
{
	batch *b = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&b->next, 64, __ATOMIC_RELAXED);
		if (i >= b->n)
			break;
		for (size_t j = i; j < b->n && j < i + 64; j++) {
			simhash_err err = query_locked(b->ix, &b->qs[j], b->k, &b->outs[j]);
			if (err)
				__atomic_store_n(&b->err, err, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

simhash_err simhash_index_query_batch(const simhash_index *ix, const simhash_fp *qs, size_t n,
				      unsigned k, unsigned threads, simhash_matches *outs)
{
	batch b = {ix, qs, outs, n, k, 0, SIMHASH_OK};
	pthread_t th[64];
	unsigned started = 0;

	if (!ix || (n && (!qs || !outs)) || k > ix->max_dist)
		return SIMHASH_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (qs[i].bits != ix->bits)
			return SIMHASH_ESCHEME;
	if (threads == 0)
		threads = 1;
	if (threads > 64)
		threads = 64;
	RDLOCK(ix);
	for (unsigned t = 1; t < threads && (size_t)t * 64 < n; t++)
		if (pthread_create(&th[started], NULL, batch_worker, &b) == 0)
			started++;
	batch_worker(&b);
	for (unsigned t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	UNLOCK(ix);
	return b.err;
}

simhash_err simhash_index_get_stats(const simhash_index *ix, simhash_index_stats *st)
{
	simhash_index_stats s;
	const sh_ix_seg *big = NULL;

	if (!ix || !st)
		return SIMHASH_EINVAL;
	memset(&s, 0, sizeof s);
	s.size = sizeof s;
	RDLOCK(ix);
	s.count = ix->count;
	s.segments = (unsigned)ix->n_seg;
	for (size_t i = 0; i < ix->n_seg; i++) {
		const sh_ix_seg *g = ix->seg[i];
		s.dead += g->n_dead;
		s.memory += g->plan.memory + (g->dead ? (g->n + 63) / 64 * 8 : 0);
		if (!big || g->n > big->n)
			big = g;
	}
	if (big)
		s.mapped = big->mapped;
	UNLOCK(ix);
	return sh_results_copy(st, &s, sizeof s, sizeof s);
}

simhash_err simhash_index_get_plan(const simhash_index *ix, simhash_index_plan *plan)
{
	simhash_index_plan p;
	const sh_ix_seg *big = NULL;

	if (!ix || !plan)
		return SIMHASH_EINVAL;
	RDLOCK(ix);
	for (size_t i = 0; i < ix->n_seg; i++)
		if (!big || ix->seg[i]->n > big->n)
			big = ix->seg[i];
	if (big)
		p = big->plan;
	UNLOCK(ix);
	if (!big) {
		p.size = sizeof p;
		simhash_index_plan_make(ix->bits, ix->max_dist, 0, 0.5, 0, &p);
	}
	return sh_results_copy(plan, &p, sizeof p, sizeof p);
}

/* ---- used by file.c */
simhash_err sh_ix_compact_copy(const simhash_index *ix, sh_ix_seg **out);
simhash_err sh_ix_compact_copy(const simhash_index *ix, sh_ix_seg **out)
{
	uint64_t *fps, *ids;
	size_t n;
	simhash_err err = gather(ix, 0, ix->n_seg, &fps, &ids, &n);

	if (err)
		return err;
	n = sh_ix_sort_unique(fps, ids, n, ix->words, 2);
	if (n == SIZE_MAX) {
		free(fps), free(ids);
		return SIMHASH_ENOMEM;
	}
	return seg_make(ix, fps, ids, n, 2, out);
}
