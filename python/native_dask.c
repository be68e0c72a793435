/* native_dask.c - the cluster job's kernels in simhash._native (built by
 * build_ffi.py in one unit with native.c; a client of simhash.h only).
 *
 * simhash.dask shuffles numpy arrays between these calls; none of them
 * keeps state or touches Python objects, so a worker thread runs them with
 * the GIL released.
 *
 * The block plan: a fingerprint of `bits` bits is cut into n_blocks = k + 1
 * blocks, block j being bits [j bits / n_blocks, (j + 1) bits / n_blocks).
 * Two fingerprints within distance k differ in at most k blocks, so they
 * agree on at least one (pigeonhole); table j groups the fingerprints by
 * block j, and the exact engine compares each group. A pair is reported
 * only by the first table whose block the two share, which both fingerprints
 * decide alone: so every pair within k is reported exactly once, with no
 * global distinct.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "simhash.h"

typedef unsigned __int128 shpy_u128;

static inline shpy_u128 block_of(const uint64_t *w, unsigned nw, unsigned bits, unsigned n_blocks,
				 unsigned j)
{
	unsigned lo = j * bits / n_blocks, hi = (j + 1) * bits / n_blocks, width = hi - lo;
	shpy_u128 v = nw == 2 ? ((shpy_u128)w[1] << 64 | w[0]) : w[0];

	v >>= lo;
	if (width < 128)
		v &= ((shpy_u128)1 << width) - 1;
	return v;
}

/* Block `table` of n fingerprints (nw words each) as two words per value. */
void shpy_block_keys(const uint64_t *fps, size_t n, unsigned bits, unsigned n_blocks,
		     unsigned table, uint64_t *key_lo, uint64_t *key_hi)
{
	unsigned nw = bits == 128 ? 2 : 1;
	size_t i;

	for (i = 0; i < n; i++) {
		shpy_u128 v = block_of(fps + i * nw, nw, bits, n_blocks, table);

		key_lo[i] = (uint64_t)v;
		key_hi[i] = (uint64_t)(v >> 64);
	}
}

/* ---- routing one partition's records of a table to the buckets
 *
 * What simhash.dask.route() did in numpy, in two passes and no temporaries
 * (the numpy version made a dozen arrays of the partition's size, a fifth of
 * the job's CPU at 100 million fingerprints, most of it page faults): the
 * bucket of a record is splitmix(lo ^ splitmix(hi ^ table)) % n_buckets of
 * its block's value (lo, hi), the same function as route()'s split keys use,
 * so every partition sends a key to one bucket. Records whose key is one of
 * the heavy keys (sorted by hi, then lo) are not routed here: their places
 * are listed, in order, for route()'s sub-block meetings. */

static inline uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static int heavy_has(const uint64_t *h_lo, const uint64_t *h_hi, size_t n_heavy, uint64_t lo,
		     uint64_t hi)
{
	size_t a = 0, b = n_heavy;

	while (a < b) { /* the first at or after (hi, lo) */
		size_t m = a + (b - a) / 2;
		if (h_hi[m] < hi || (h_hi[m] == hi && h_lo[m] < lo))
			a = m + 1;
		else
			b = m;
	}
	return a < n_heavy && h_hi[a] == hi && h_lo[a] == lo;
}

/* The bucket of fingerprint w for table `table`; UINT32_MAX for a heavy key. */
static inline uint32_t route_bucket(const uint64_t *w, unsigned nw, unsigned bits,
				    unsigned n_blocks, unsigned table, uint64_t n_buckets,
				    const uint64_t *h_lo, const uint64_t *h_hi, size_t n_heavy)
{
	shpy_u128 v = block_of(w, nw, bits, n_blocks, table);
	uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);

	if (n_heavy && heavy_has(h_lo, h_hi, n_heavy, lo, hi))
		return UINT32_MAX;
	return (uint32_t)(splitmix64(lo ^ splitmix64(hi ^ (uint64_t)table)) % n_buckets);
}

/* Pass 1: counts[b] gets the records of bucket b, *n_heavy_recs those of
 * heavy keys. -1 if n_buckets is 0 or above 2^32 - 1. */
int shpy_route_count(const uint64_t *fps, size_t n, unsigned bits, unsigned n_blocks,
		     unsigned table, uint64_t n_buckets, const uint64_t *h_lo, const uint64_t *h_hi,
		     size_t n_heavy, uint64_t *counts, size_t *n_heavy_recs)
{
	unsigned nw = bits == 128 ? 2 : 1;
	size_t heavy = 0;

	if (!n_buckets || n_buckets >= UINT32_MAX)
		return -1;
	memset(counts, 0, n_buckets * sizeof *counts);
	for (size_t i = 0; i < n; i++) {
		uint32_t b = route_bucket(fps + i * nw, nw, bits, n_blocks, table, n_buckets, h_lo,
					  h_hi, n_heavy);
		if (b == UINT32_MAX)
			heavy++;
		else
			counts[b]++;
	}
	*n_heavy_recs = heavy;
	return 0;
}

/* Pass 2: record i (global id base + i) appended to piece b's fingerprints
 * (nw words each) and ids, in input order; heavy_recs gets the places of the
 * heavy keys' records. The pieces hold what pass 1 counted. */
void shpy_route_scatter(const uint64_t *fps, size_t n, unsigned bits, unsigned n_blocks,
			unsigned table, uint64_t n_buckets, const uint64_t *h_lo,
			const uint64_t *h_hi, size_t n_heavy, uint64_t base, uint64_t **piece_fps,
			uint64_t **piece_gids, uint64_t *at, uint64_t *heavy_recs)
{
	unsigned nw = bits == 128 ? 2 : 1;
	size_t heavy = 0;

	memset(at, 0, n_buckets * sizeof *at);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *w = fps + i * nw;
		uint32_t b = route_bucket(w, nw, bits, n_blocks, table, n_buckets, h_lo, h_hi,
					  n_heavy);
		uint64_t j;
		if (b == UINT32_MAX) {
			heavy_recs[heavy++] = i;
			continue;
		}
		j = at[b]++;
		piece_fps[b][j * nw] = w[0];
		if (nw == 2)
			piece_fps[b][j * nw + 1] = w[1];
		piece_gids[b][j] = base + i;
	}
}

struct brec {
	shpy_u128 key;
	uint64_t cell;
	uint32_t idx;
	uint8_t side;
};

static int brec_cmp(const void *x, const void *y)
{
	const struct brec *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->cell != b->cell)
		return a->cell < b->cell ? -1 : 1;
	if (a->side != b->side)
		return a->side < b->side ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct pout {
	uint64_t *a, *b;
	uint32_t *d;
	size_t n, cap;
};

static int pout_add(struct pout *o, uint64_t a, uint64_t b, uint32_t d)
{
	if (o->n == o->cap) {
		size_t c = o->cap ? 2 * o->cap : 1024;
		uint64_t *na = realloc(o->a, c * sizeof(*na)), *nb;
		uint32_t *nd;

		if (!na)
			return -1;
		o->a = na;
		nb = realloc(o->b, c * sizeof(*nb));
		if (!nb)
			return -1;
		o->b = nb;
		nd = realloc(o->d, c * sizeof(*nd));
		if (!nd)
			return -1;
		o->d = nd;
		o->cap = c;
	}
	o->a[o->n] = a < b ? a : b;
	o->b[o->n] = a < b ? b : a;
	o->d[o->n++] = d;
	return 0;
}

/* 1 if fingerprints x and y share a block of a table before `table`. */
static int earlier_table(const uint64_t *x, const uint64_t *y, unsigned nw, unsigned bits,
			 unsigned n_blocks, unsigned table)
{
	unsigned t;

	for (t = 0; t < table; t++)
		if (block_of(x, nw, bits, n_blocks, t) == block_of(y, nw, bits, n_blocks, t))
			return 1;
	return 0;
}

/* 1 if fingerprints x and y share block `table` and none before it. */
static int first_table(const uint64_t *x, const uint64_t *y, unsigned nw, unsigned bits,
		       unsigned n_blocks, unsigned table)
{
	return !earlier_table(x, y, nw, bits, n_blocks, table) &&
	       block_of(x, nw, bits, n_blocks, table) == block_of(y, nw, bits, n_blocks, table);
}

/* Compares one group: recs[0..m) share key and cell. A cell with its low bit
 * set is the meeting of two sub-blocks of a split key: side 0 against side 1;
 * any other group is compared within itself. */
static int block_group(const struct brec *recs, size_t m, const uint64_t *fps,
		       const uint64_t *gids, unsigned bits, unsigned n_blocks, unsigned table,
		       unsigned max_dist, uint64_t *buf, uint32_t *map, struct pout *o)
{
	unsigned nw = bits == 128 ? 2 : 1;
	simhash_pair *p = NULL;
	size_t n_p = 0, i, n_left = m;
	int err;

	for (i = 0; i < m; i++) {
		memcpy(buf + i * nw, fps + (size_t)recs[i].idx * nw, nw * sizeof(*buf));
		map[i] = recs[i].idx;
		if (recs[i].side && n_left == m)
			n_left = i;
	}
	if (recs[0].cell & 1) {
		if (n_left == 0 || n_left == m)
			return 0;
		err = simhash_pairs_join(buf, n_left, buf + n_left * nw, m - n_left, bits,
					 max_dist, 1, &p, &n_p);
	} else {
		err = simhash_pairs_self(buf, m, bits, max_dist, 1, &p, &n_p);
	}
	if (err)
		return err;
	for (i = 0; i < n_p; i++) {
		uint32_t x = map[p[i].a], y = map[(recs[0].cell & 1) ? n_left + p[i].b : p[i].b];

		if (earlier_table(fps + (size_t)x * nw, fps + (size_t)y * nw, nw, bits, n_blocks,
				  table))
			continue;
		if (pout_add(o, gids[x], gids[y], p[i].dist)) {
			simhash_pairs_free(p);
			return SIMHASH_ENOMEM;
		}
	}
	simhash_pairs_free(p);
	return SIMHASH_OK;
}

/* Brute force within a small group (members idx[0..m) of fps): cheaper than
 * a call into the engine below a few dozen members. */
static int small_group(const uint64_t *fps, const uint64_t *gids, const uint32_t *idx, size_t m,
		       unsigned bits, unsigned n_blocks, unsigned table, unsigned max_dist,
		       struct pout *o)
{
	unsigned nw = bits == 128 ? 2 : 1;
	size_t i, j;

	for (i = 0; i < m; i++) {
		const uint64_t *x = fps + (size_t)idx[i] * nw;

		for (j = i + 1; j < m; j++) {
			const uint64_t *y = fps + (size_t)idx[j] * nw;
			unsigned d = (unsigned)__builtin_popcountll(x[0] ^ y[0]);

			if (nw == 2)
				d += (unsigned)__builtin_popcountll(x[1] ^ y[1]);
			if (d <= max_dist && first_table(x, y, nw, bits, n_blocks, table) &&
			    pout_add(o, gids[idx[i]], gids[idx[j]], d))
				return SIMHASH_ENOMEM;
		}
	}
	return SIMHASH_OK;
}

/* One larger group through the engine: members idx[0..m) gathered into buf. */
static int engine_group(const uint64_t *fps, const uint64_t *gids, const uint32_t *idx, size_t m,
			unsigned bits, unsigned n_blocks, unsigned table, unsigned max_dist,
			uint64_t *buf, struct pout *o)
{
	unsigned nw = bits == 128 ? 2 : 1;
	simhash_pair *p = NULL;
	size_t n_p = 0, i;
	int err;

	for (i = 0; i < m; i++)
		memcpy(buf + i * nw, fps + (size_t)idx[i] * nw, nw * sizeof(*buf));
	err = simhash_pairs_self(buf, m, bits, max_dist, 1, &p, &n_p);
	for (i = 0; !err && i < n_p; i++) {
		uint32_t x = idx[p[i].a], y = idx[p[i].b];

		if (first_table(fps + (size_t)x * nw, fps + (size_t)y * nw, nw, bits, n_blocks,
				table) &&
		    pout_add(o, gids[x], gids[y], p[i].dist))
			err = SIMHASH_ENOMEM;
	}
	simhash_pairs_free(p);
	return err;
}

#define SMALL_GROUP 48      /* brute force below this many members */
#define COUNT_SORT_BITS 20  /* blocks this narrow are grouped by a counting sort */

/* The pairs among the n records of whole keys, grouped by a counting sort of
 * their (narrow) block: small groups by brute force, larger ones through the
 * engine. -1 if the block is too wide for a counting sort. */
static int grouped_pairs(const uint64_t *fps, const uint64_t *gids, size_t n, unsigned bits,
			 unsigned n_blocks, unsigned table, unsigned max_dist, struct pout *o)
{
	unsigned nw = bits == 128 ? 2 : 1;
	unsigned width = (table + 1) * bits / n_blocks - table * bits / n_blocks;
	size_t n_keys, i, s, e;
	uint32_t *start = NULL, *idx = NULL, *key = NULL, *map = NULL;
	uint64_t *buf = NULL;
	int err = SIMHASH_ENOMEM;

	if (width > COUNT_SORT_BITS)
		return -1;
	n_keys = (size_t)1 << width;
	start = calloc(n_keys + 1, sizeof(*start));
	idx = malloc((n ? n : 1) * sizeof(*idx));
	key = malloc((n ? n : 1) * sizeof(*key));
	if (!start || !idx || !key)
		goto out;
	for (i = 0; i < n; i++) {
		key[i] = (uint32_t)block_of(fps + i * nw, nw, bits, n_blocks, table);
		start[key[i] + 1]++;
	}
	for (i = 0; i < n_keys; i++)
		start[i + 1] += start[i];
	for (i = 0; i < n; i++)
		idx[start[key[i]]++] = (uint32_t)i;
	/* start[k] is now the end of key k's run */
	err = SIMHASH_OK;
	for (i = 0, s = 0; i < n_keys && !err; i++, s = e) {
		e = start[i];
		if (e - s < 2)
			continue;
		if (e - s < SMALL_GROUP) {
			err = small_group(fps, gids, idx + s, e - s, bits, n_blocks, table,
					  max_dist, o);
			continue;
		}
		if (!buf) {
			buf = malloc(n * nw * sizeof(*buf));
			map = malloc(n * sizeof(*map));
			if (!buf || !map) {
				err = SIMHASH_ENOMEM;
				break;
			}
		}
		err = engine_group(fps, gids, idx + s, e - s, bits, n_blocks, table, max_dist,
				   buf, o);
	}
out:
	free(start);
	free(idx);
	free(key);
	free(buf);
	free(map);
	return err;
}

/* The pairs among the n records of whole keys, through the engine at once. */
static int plain_pairs(const uint64_t *fps, const uint64_t *gids, size_t n, unsigned bits,
		       unsigned n_blocks, unsigned table, unsigned max_dist, struct pout *o)
{
	unsigned nw = bits == 128 ? 2 : 1;
	simhash_pair *p = NULL;
	size_t n_p = 0, i;
	int err = simhash_pairs_self(fps, n, bits, max_dist, 1, &p, &n_p);

	for (i = 0; !err && i < n_p; i++) {
		const uint64_t *x = fps + p[i].a * nw, *y = fps + p[i].b * nw;

		if (first_table(x, y, nw, bits, n_blocks, table) &&
		    pout_add(o, gids[p[i].a], gids[p[i].b], p[i].dist))
			err = SIMHASH_ENOMEM;
	}
	simhash_pairs_free(p);
	return err;
}

/* The pairs of one bucket of table `table`: n records (fingerprint, global
 * id, cell, side; the records of whole keys, cell 0, first), grouped by their block and cell; every pair within
 * max_dist whose first shared block is `table` goes out once as (smaller
 * id, larger id, distance). Free the three arrays with shpy_free(). */
int shpy_block_pairs(const uint64_t *fps, const uint64_t *gids, const uint64_t *cells,
		     const uint8_t *sides, size_t n, unsigned bits, unsigned n_blocks,
		     unsigned table, unsigned max_dist, uint64_t **out_a, uint64_t **out_b,
		     uint32_t **out_d, size_t *n_out)
{
	unsigned nw = bits == 128 ? 2 : 1;
	struct brec *recs = NULL;
	struct pout o = { 0 };
	uint64_t *buf = NULL;
	uint32_t *map = NULL;
	size_t i, s, n_plain, n_split;
	int err = SIMHASH_ENOMEM;

	*out_a = *out_b = NULL;
	*out_d = NULL;
	*n_out = 0;
	if (n >= UINT32_MAX || table >= n_blocks || (bits != 32 && bits != 64 && bits != 128))
		return SIMHASH_EINVAL;
	/* The records of whole keys (the first n_plain; cell 0) go through the
	 * engine at once: a bucket holds every fingerprint of each of its keys,
	 * so the pairs whose first shared block is this table's are all among
	 * its pairs, the others (keys that met by hashing) are left out. Many
	 * small groups would cost a call each. */
	for (n_plain = 0; n_plain < n && !(cells && cells[n_plain]); n_plain++)
		;
	err = SIMHASH_OK;
	if (n_plain >= 2) {
		err = grouped_pairs(fps, gids, n_plain, bits, n_blocks, table, max_dist, &o);
		if (err < 0)
			err = plain_pairs(fps, gids, n_plain, bits, n_blocks, table, max_dist, &o);
	}
	if (err)
		goto out;
	err = SIMHASH_ENOMEM;
	recs = malloc((n ? n : 1) * sizeof(*recs));
	buf = malloc((n ? n : 1) * nw * sizeof(*buf));
	map = malloc((n ? n : 1) * sizeof(*map));
	if (!recs || !buf || !map)
		goto out;
	n_split = 0;
	for (i = n_plain; i < n; i++) {
		struct brec *r = &recs[n_split++];

		r->key = block_of(fps + i * nw, nw, bits, n_blocks, table);
		r->cell = cells[i];
		r->side = sides[i];
		r->idx = (uint32_t)i;
	}
	qsort(recs, n_split, sizeof(*recs), brec_cmp);
	err = SIMHASH_OK;
	n = n_split;
	for (s = 0; s < n && !err; s = i) {
		for (i = s + 1; i < n && recs[i].key == recs[s].key && recs[i].cell == recs[s].cell;
		     i++)
			;
		if (i - s >= 2)
			err = block_group(recs + s, i - s, fps, gids, bits, n_blocks, table,
					  max_dist, buf, map, &o);
	}
out:
	free(recs);
	free(buf);
	free(map);
	if (err) {
		free(o.a);
		free(o.b);
		free(o.d);
		return err;
	}
	*out_a = o.a;
	*out_b = o.b;
	*out_d = o.d;
	*n_out = o.n;
	return SIMHASH_OK;
}

/* Parses the text form `HEX<TAB>ID` of buf[0..len) (whole lines, the last
 * one with or without '\n'), HEX being `digits` hex digits: words gets
 * digits / 16 words per line (1 for 8 digits), ids[2 i], ids[2 i + 1] the
 * bounds of line i's id (a '\r' before the '\n' left out). cap is the room
 * in lines. Returns the number of lines, or minus the (1-based) number of
 * the first line that is not of that form. */
long shpy_parse_fps(const char *buf, size_t len, unsigned digits, uint64_t *words, uint64_t *ids,
		    size_t cap)
{
	const char *p = buf, *end = buf + len, *nl;
	unsigned nw = digits == 32 ? 2 : 1;
	size_t n = 0;

	while (p < end) {
		simhash_fp fp;
		size_t id_end;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (n == cap || (size_t)(nl - p) <= digits || p[digits] != '\t' ||
		    simhash_fp_parse(p, digits, &fp) != SIMHASH_OK)
			return -(long)(n + 1);
		words[n * nw] = fp.w[0];
		if (nw == 2)
			words[n * nw + 1] = fp.w[1];
		id_end = (size_t)(nl - buf);
		if (nl > p + digits + 1 && nl[-1] == '\r')
			id_end--;
		ids[2 * n] = (uint64_t)(p + digits + 1 - buf);
		ids[2 * n + 1] = id_end;
		n++;
		p = nl + 1;
	}
	return (long)n;
}

/* The ids of some lines of the text form in buf[0..len), already parsed
 * once (shpy_parse_fps()): want[0..n_want) ascending line numbers from 0;
 * ids[2 j], ids[2 j + 1] get line want[j]'s id bounds as shpy_parse_fps()
 * gives them. Only line breaks are looked for, no fingerprint parsed.
 * Returns 0, or -1 if buf has fewer lines or a wanted line is too short. */
int shpy_line_ids(const char *buf, size_t len, unsigned digits, const uint64_t *want,
		  size_t n_want, uint64_t *ids)
{
	const char *p = buf, *end = buf + len, *nl;
	uint64_t line = 0;

	for (size_t j = 0; j < n_want; j++) {
		for (; line < want[j]; line++) {
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				return -1;
			p = nl + 1;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) <= digits)
			return -1;
		ids[2 * j] = (uint64_t)(p + digits + 1 - buf);
		ids[2 * j + 1] = (uint64_t)(nl - buf) - (nl > p + digits + 1 && nl[-1] == '\r');
	}
	return 0;
}
