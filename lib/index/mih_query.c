/* mih_query.c - the query side of multi-index hashing (mih.c builds the
 * tables; its header proves why every match within k is found and reported
 * once).
 *
 * A query over a segment: choose the radii and the probing order of the
 * tables (assign_radii: the even split of radius.c while k < 2m, else the
 * greedy split of radius.c over a cost model of the measured bit bias), then
 * enumerate every chunk value within each table's radius through a
 * three-stage prefetch pipeline (directory slot, bucket, read), scanning
 * each bucket with the CPU's best kernel (scan.c) and keeping a fingerprint
 * only if it lies in its table's ball and in no ball probed before. A
 * segment without tables is scanned whole.
 *
 * Workload: millions of fingerprints, queries with a few hundred candidates;
 * the probe loop allocates nothing (its state is one struct on the stack). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "ix.h"

#define HITS 256
#define SCAN_BLOCK 1024
/* The probe pipeline: a value's directory slot is prefetched when it is
 * enumerated, read DIR_AHEAD values later (its bucket's first BUCKET_LINES
 * cache lines prefetched then), and the bucket read BUCKET_AHEAD values
 * after that; so the misses of many lookups overlap, and of all tables. */
#define DIR_AHEAD 16
#define BUCKET_AHEAD 16
#define BUCKET_LINES 4
#define RING 64

/* The state of one query over one segment. */
typedef struct probe {
	const sh_ix_seg *s;
	unsigned words, k;
	const uint64_t *q;
	unsigned radius[SIMHASH_PLAN_MAX_TABLES]; /* per table; UINT_MAX: not probed */
	unsigned lbits[SIMHASH_PLAN_MAX_TABLES];  /* low chunk bits read as one range */
	unsigned order[SIMHASH_PLAN_MAX_TABLES];  /* tables in probing order */
	unsigned rank[SIMHASH_PLAN_MAX_TABLES];   /* position of each table in order */
	/* per table: directory slot of a probe value (v << lsh >> rsh), slots a
	 * range spans, 1 if a binary search finishes a slot */
	unsigned lsh[SIMHASH_PLAN_MAX_TABLES], rsh[SIMHASH_PLAN_MAX_TABLES];
	uint64_t span[SIMHASH_PLAN_MAX_TABLES];
	unsigned search[SIMHASH_PLAN_MAX_TABLES];
	simhash_matches *out;
	simhash_err err;
	size_t head;             /* values enumerated so far; ring[i % RING] */
	uint64_t v[RING];
	unsigned char vt[RING];  /* their tables */
	uint32_t lo[RING], hi[RING];
	size_t nh;               /* hits batched: entry, table, distance, row */
	uint32_t h_i[HITS];
	unsigned char h_t[HITS], h_d[HITS];
	uint32_t h_row[HITS];
	sh_ix_scan_fn scan;      /* the bucket kernel (scan.c) */
	uint32_t pos[SCAN_BLOCK];
} probe;

/* 1 if a table probed before position cur of the order finds x (given x ^ q). */
static inline __attribute__((always_inline)) int found_before(const probe *p, const uint64_t *xq,
							      unsigned cur)
{
	for (unsigned o = 0; o < cur; o++) {
		unsigned t = p->order[o];
		const sh_ix_table *tb = &p->s->tab[t];
		unsigned d = (unsigned)__builtin_popcountll(xq[0] & tb->mask[0]);
		if (p->words == 2)
			d += (unsigned)__builtin_popcountll(xq[1] & tb->mask[1]);
		if (p->radius[t] != UINT_MAX && d <= p->radius[t])
			return 1;
	}
	return 0;
}

/* Entries of table tb whose chunk equals v, given its directory slot's range. */
static void narrow(const sh_ix_seg *s, const sh_ix_table *tb, unsigned words, uint64_t v, size_t *lo,
		   size_t *hi)
{
	size_t l = *lo, h = *hi;
#define CHUNK_AT(i) sh_ix_chunk(tb->fps + (i) * words, tb->start, tb->width)
	while (l < h) { /* first entry >= v */
		size_t mid = l + (h - l) / 2;
		if (CHUNK_AT(mid) < v)
			l = mid + 1;
		else
			h = mid;
	}
	*lo = l;
	h = *hi;
	while (l < h) { /* first entry > v */
		size_t mid = l + (h - l) / 2;
		if (CHUNK_AT(mid) <= v)
			l = mid + 1;
		else
			h = mid;
	}
	*hi = l;
#undef CHUNK_AT
}

/* Reports the batched hits: rows are read (prefetched when queued), then
 * ids and dead bits, prefetched a pass before. */
static inline __attribute__((always_inline)) void drain_hits(probe *p)
{
	const sh_ix_seg *s = p->s;
	size_t n = s->n;

	for (size_t h = 0; h < p->nh; h++) {
		uint32_t row = p->s->tab[p->h_t[h]].rows[p->h_i[h]];
		p->h_row[h] = row;
		if (row < n) {
			__builtin_prefetch(s->ids + row);
			if (s->dead)
				__builtin_prefetch(s->dead + (row >> 6));
		}
	}
	for (size_t h = 0; h < p->nh; h++) {
		uint32_t row = p->h_row[h];
		if (row >= n || sh_ix_is_dead(s, row))
			continue;
		if (sh_ix_matches_push(p->out, s->ids[row], p->h_d[h]))
			p->err = SIMHASH_ENOMEM;
	}
	p->nh = 0;
}

/* Stage 1 of ring entry e: prefetch its directory slot. */
static inline __attribute__((always_inline)) void stage_dir(probe *p, size_t e)
{
	unsigned t = p->vt[e];
	__builtin_prefetch(p->s->tab[t].dir + (p->v[e] << p->lsh[t] >> p->rsh[t]));
}

/* Stage 2: read the slot's range, prefetch the bucket's first lines. */
static inline __attribute__((always_inline)) void stage_slot(probe *p, size_t e)
{
	const sh_ix_seg *s = p->s;
	unsigned t = p->vt[e];
	const sh_ix_table *tb = &s->tab[t];
	uint64_t d = p->v[e] << p->lsh[t] >> p->rsh[t];
	size_t a = tb->dir[d], b = tb->dir[d + p->span[t]], step = p->words == 1 ? 8 : 4;

	if (b > s->n)
		b = s->n;
	if (a > b)
		a = b;
	if (p->search[t])
		narrow(s, tb, p->words, p->v[e], &a, &b);
	p->lo[e] = (uint32_t)a, p->hi[e] = (uint32_t)b;
	for (size_t i = a; i < b && i < a + BUCKET_LINES * step; i += step)
		__builtin_prefetch(tb->fps + i * p->words);
}

/* Stage 3: read the bucket or range: keep the fingerprints within k of q
 * that lie in its table's ball and in no ball probed before it. */
static inline __attribute__((always_inline)) void stage_read(probe *p, size_t e)
{
	unsigned t = p->vt[e];
	const sh_ix_table *tb = &p->s->tab[t];
	unsigned words = p->words, lb = p->lbits[t], rad = p->radius[t], cur = p->rank[t];
	size_t lo = p->lo[e], hi = p->hi[e];

	for (size_t base = lo; base < hi; base += SCAN_BLOCK) {
		size_t len = hi - base < SCAN_BLOCK ? hi - base : SCAN_BLOCK;
		size_t m = p->scan(tb->fps + base * words, len, p->q, p->k, p->pos);
		for (size_t c = 0; c < m; c++) {
			size_t i = base + p->pos[c];
			uint64_t x[2];
			x[0] = tb->fps[i * words] ^ p->q[0];
			x[1] = words == 2 ? tb->fps[i * words + 1] ^ p->q[1] : 0;
			if (lb && (unsigned)(__builtin_popcountll(x[0] & tb->mask[0]) +
					      __builtin_popcountll(x[1] & tb->mask[1])) > rad)
				continue; /* outside the ball: another table's */
			if (cur && found_before(p, x, cur))
				continue;
			if (p->nh == HITS)
				drain_hits(p);
			__builtin_prefetch(tb->rows + i);
			p->h_i[p->nh] = (uint32_t)i;
			p->h_t[p->nh] = (unsigned char)t;
			p->h_d[p->nh] = (unsigned char)(__builtin_popcountll(x[0]) + __builtin_popcountll(x[1]));
			p->nh++;
		}
	}
}

/* Enumerates probe value v of table t into the pipeline. */
static inline __attribute__((always_inline)) void push_value(probe *p, uint64_t v, unsigned t)
{
	size_t h = p->head++, e = h % RING;

	p->v[e] = v;
	p->vt[e] = (unsigned char)t;
	stage_dir(p, e);
	if (h >= DIR_AHEAD)
		stage_slot(p, (h - DIR_AHEAD) % RING);
	if (h >= DIR_AHEAD + BUCKET_AHEAD)
		stage_read(p, (h - DIR_AHEAD - BUCKET_AHEAD) % RING);
}

/* Runs the values still in the pipeline through its last stages. */
static inline __attribute__((always_inline)) void drain_values(probe *p)
{
	size_t h = p->head, from2 = h > DIR_AHEAD ? h - DIR_AHEAD : 0;
	size_t from3 = h > DIR_AHEAD + BUCKET_AHEAD ? h - DIR_AHEAD - BUCKET_AHEAD : 0;

	for (size_t i = from2; i < h; i++)
		stage_slot(p, i % RING);
	for (size_t i = from3; i < h; i++)
		stage_read(p, i % RING);
	p->head = 0;
}

/* Enumerates every value within radius r of v (width bits) for table t:
 * flip masks of j bits in increasing order (Gosper's hack), j = 0..r. */
static inline __attribute__((always_inline)) void probe_table(probe *p, unsigned t, uint64_t v,
							      unsigned width, unsigned r)
{
	typedef unsigned __int128 u128;
	u128 limit = (u128)1 << width;

	push_value(p, v, t);
	for (unsigned j = 1; j <= r && j <= width; j++) {
		u128 m = ((u128)1 << j) - 1;
		while (m < limit) {
			u128 c, rr;
			push_value(p, v ^ (uint64_t)m, t);
			c = m & -m;
			rr = m + c;
			m = (((rr ^ m) >> 2) >> ((uint64_t)c ? __builtin_ctzll((uint64_t)c)
							     : 64 + __builtin_ctzll((uint64_t)(c >> 64)))) | rr;
		}
	}
}

static inline __attribute__((always_inline)) void probe_all(probe *p)
{
	const sh_ix_seg *s = p->s;

	p->head = p->nh = 0;
	for (unsigned o = 0; o < s->n_tables; o++) {
		unsigned t = p->order[o], w = s->tab[t].width, db = s->tab[t].dir_bits, lb = p->lbits[t];
		p->rank[t] = o;
		if (lb) { /* values are the top w - lb bits, at most db of them */
			p->lsh[t] = db - (w - lb), p->rsh[t] = 0;
			p->span[t] = (uint64_t)1 << p->lsh[t];
			p->search[t] = 0;
		} else {
			p->lsh[t] = 0, p->rsh[t] = w - db;
			p->span[t] = 1;
			p->search[t] = w > db;
		}
	}
	for (unsigned o = 0; o < s->n_tables && !p->err; o++) {
		unsigned t = p->order[o];
		const sh_ix_table *tb = &s->tab[t];
		if (p->radius[t] == UINT_MAX)
			continue;
		probe_table(p, t, sh_ix_chunk(p->q, tb->start, tb->width) >> p->lbits[t],
			    tb->width - p->lbits[t], p->radius[t]);
	}
	drain_values(p);
	drain_hits(p);
}

/* The same code twice: with the popcnt instruction and without. */
SH_TARGET_POPCNT static void probe_all_popcnt(probe *p)
{
	probe_all(p);
}

static void probe_all_plain(probe *p)
{
	probe_all(p);
}

static simhash_err scan_seg(const sh_ix_seg *s, unsigned words, const uint64_t *q, unsigned k,
			    simhash_matches *out)
{
	sh_ix_scan_fn scan = sh_ix_scan_pick(words);
	uint32_t pos[4096];

	for (size_t base = 0; base < s->n; base += 4096) {
		size_t len = s->n - base < 4096 ? s->n - base : 4096;
		size_t m = scan(s->fps + base * words, len, q, k, pos);
		for (size_t j = 0; j < m; j++) {
			size_t row = base + pos[j];
			const uint64_t *f = s->fps + row * words;
			unsigned d = simhash_hamming64(f[0], q[0]);
			if (words == 2)
				d += simhash_hamming64(f[1], q[1]);
			if (!sh_ix_is_dead(s, row) && sh_ix_matches_push(out, s->ids[row], d))
				return SIMHASH_ENOMEM;
		}
	}
	return SIMHASH_OK;
}

/* Radii and probing order for this query. The pigeonhole argument of the
 * header holds for any radii r_t (-1: table not probed) over any of the
 * disjoint chunks with sum (r_t + 1) >= k + 1: a fingerprint whose chunk t
 * differs in more than r_t bits for every probed t is at least that far away.
 * So the radii are chosen per query, greedily, one unit of r_t + 1 at a time
 * to the table where it costs least.
 *
 * A table may also read its ball as ranges: with the low L bits of the chunk
 * left free, each of the C(w - L, <= r) values of the top bits is one
 * contiguous range of the table (a directory lookup, then a sequential scan)
 * instead of up to 2^L buckets; fingerprints in the range but outside the
 * ball are dropped, so each table still reports exactly its ball.
 *
 * The cost of radius r with L free bits is the lookups times the table's
 * lookup cost (sh_ix_probe_ns: less when its directory stays in cache) plus
 * the fingerprints read times CAND_NS, expected from the bit probabilities
 * measured on the segment (sh_ix_seg_bias): n P(q's top bits) e_j(f) at j
 * flips, e_j the elementary symmetric polynomial of the odds f_b of flipping
 * bit b of q. On biased data chunks near the popular value are expensive to
 * widen and light ones cheap. Tables are probed in index order, which
 * found_before() follows. */
#define MAX_FREE_BITS 12
enum { RMAX = SIMHASH_INDEX_MAX_DIST_128 + 1 };

/* cost[j] (j = 0..rm + 1): the least cost of radius j - 1 on table tb (cost[0] = 0,
 * not probed), lb[j] its free low bits. */
static void table_costs(const sh_ix_seg *s, const sh_ix_table *tb, uint64_t v, unsigned rm,
			double *cost, unsigned *lb)
{
	unsigned w = tb->width;
	double e[RMAX + 1], base = (double)s->n, probe_ns = sh_ix_probe_ns(tb->dir_bits, w);
	double entry_ns = s->plan.bits == 128 ? SH_IX_CAND128_NS : SH_IX_CAND64_NS;

	for (unsigned j = 0; j <= rm; j++)
		e[j] = j == 0, cost[j + 1] = -1, lb[j + 1] = 0;
	cost[0] = 0, lb[0] = 0;
	/* top bits first: after h of them, e and base describe H = h */
	for (unsigned h = 1; h <= w; h++) {
		unsigned i = w - h, b = tb->start + i, bit = (unsigned)(v >> i & 1);
		unsigned L = w - h;
		double f = s->odds[b][bit], lookups = 0, entries = 0;

		base *= s->pr[b][bit];
		for (unsigned j = rm; j > 0; j--)
			e[j] += e[j - 1] * f;
		/* ranges pay off only for wide balls; a few widths keep this cheap */
		if (L && (rm < 4 || h > tb->dir_bits || L > MAX_FREE_BITS || L % 4))
			continue;
		double c = 1;
		for (unsigned j = 0; j <= rm && j <= h; j++) {
			double shell = base * e[j];
			if (j == 0 && L == 0 && tb->dir_bits == w) /* the centre bucket, counted */
				shell = (double)(tb->dir[v + 1] - tb->dir[v]);
			lookups += c;
			entries += shell;
			double total = lookups * (L ? sh_ix_probe_ns(tb->dir_bits, tb->dir_bits) : probe_ns) +
				       entries * entry_ns;
			if (cost[j + 1] < 0 || total < cost[j + 1])
				cost[j + 1] = total, lb[j + 1] = L;
			c = c * (h - j) / (j + 1);
		}
	}
}

/* The fixed split of the header, with the a + 1 tables whose bucket of q's
 * own chunk is smallest taking radius r: cheaper to decide than the model
 * below, and as good when r <= 1 (measured: uniform k = 3 lost a third of
 * its speed to the model's arithmetic). */
static void assign_fixed(probe *p, const sh_ix_seg *s, unsigned k)
{
	unsigned m = s->plan.n_chunks, nt = s->n_tables, r = k / m, a = k % m;
	size_t weight[SIMHASH_PLAN_MAX_TABLES];

	for (unsigned t = 0; t < nt; t++) {
		p->order[t] = t;
		p->radius[t] = sh_ix_radius(m, k, t);
		p->lbits[t] = 0;
	}
	if (nt != m || r == 0 || a + 1 == m)
		return;
	for (unsigned t = 0; t < nt; t++) {
		const sh_ix_table *tb = &s->tab[t];
		uint64_t d = sh_ix_chunk(p->q, tb->start, tb->width) >> (tb->width - tb->dir_bits);
		weight[t] = (tb->dir[d + 1] - tb->dir[d]) * (size_t)tb->width;
	}
	for (unsigned i = 1; i < nt; i++) {
		unsigned t = p->order[i], j = i;
		for (; j > 0 && weight[p->order[j - 1]] > weight[t]; j--)
			p->order[j] = p->order[j - 1];
		p->order[j] = t;
	}
	for (unsigned o = 0; o < nt; o++)
		p->radius[p->order[o]] = o <= a ? r : r - 1;
}

/* The cost tables of every table of a query: cost[t][r + 1] of radius r. */
typedef struct costs {
	double cost[SIMHASH_PLAN_MAX_TABLES][RMAX + 2];
	unsigned lb[SIMHASH_PLAN_MAX_TABLES][RMAX + 2];
} costs;

static double cost_of(void *arg, unsigned t, unsigned r)
{
	return ((const costs *)arg)->cost[t][r + 1];
}

static void assign_radii(probe *p, const sh_ix_seg *s, unsigned k)
{
	unsigned nt = s->n_tables, rmax[SIMHASH_PLAN_MAX_TABLES];
	int r[SIMHASH_PLAN_MAX_TABLES];
	costs c;

	if (k < 2 * s->plan.n_chunks) {
		assign_fixed(p, s, k);
		return;
	}
	for (unsigned t = 0; t < nt; t++) {
		const sh_ix_table *tb = &s->tab[t];
		p->order[t] = t;
		rmax[t] = k < tb->width ? k : tb->width;
		table_costs(s, tb, sh_ix_chunk(p->q, tb->start, tb->width), rmax[t], c.cost[t], c.lb[t]);
	}
	if (sh_ix_radii_greedy(nt, k, rmax, 0, cost_of, &c, r) < k + 1) {
		/* cannot happen (k <= bits / 4); defensive: the fixed split */
		for (unsigned t = 0; t < nt; t++)
			p->radius[t] = sh_ix_radius(s->plan.n_chunks, k, t), p->lbits[t] = 0;
		return;
	}
	for (unsigned t = 0; t < nt; t++) {
		p->radius[t] = r[t] < 0 ? UINT_MAX : (unsigned)r[t];
		p->lbits[t] = r[t] < 0 ? 0 : c.lb[t][r[t] + 1];
	}
}

simhash_err sh_ix_seg_query(const sh_ix_seg *s, unsigned words, const uint64_t *q, unsigned k,
			    simhash_matches *out)
{
	probe pr, *p = &pr;

	if (s->n == 0)
		return SIMHASH_OK;
	if (s->n_tables == 0)
		return scan_seg(s, words, q, k, out);
	p->s = s, p->words = words, p->k = k, p->q = q, p->out = out, p->err = SIMHASH_OK;
	p->scan = sh_ix_scan_pick(words);
	assign_radii(p, s, k);
	if (sh_ix_have_popcnt())
		probe_all_popcnt(p);
	else
		probe_all_plain(p);
	return p->err;
}

size_t sh_ix_seg_find(const sh_ix_seg *s, unsigned words, const uint64_t *fp, uint64_t id)
{
	if (s->n_tables == 0) {
		size_t l = 0, h = s->n;
		while (l < h) { /* first row >= (fp, id) */
			size_t mid = l + (h - l) / 2;
			const uint64_t *f = s->fps + mid * words;
			int less;
			if (words == 2 && f[1] != fp[1])
				less = f[1] < fp[1];
			else if (f[0] != fp[0])
				less = f[0] < fp[0];
			else
				less = s->ids[mid] < id;
			if (less)
				l = mid + 1;
			else
				h = mid;
		}
		if (l < s->n && memcmp(s->fps + l * words, fp, words * 8) == 0 && s->ids[l] == id)
			return l;
		return SIZE_MAX;
	}
	/* the bucket of fp's chunk 0 in table 0 */
	const sh_ix_table *tb = &s->tab[0];
	uint64_t v = sh_ix_chunk(fp, tb->start, tb->width), d = v >> (tb->width - tb->dir_bits);
	size_t lo = tb->dir[d], hi = tb->dir[d + 1];
	if (hi > s->n)
		hi = s->n;
	if (lo > hi)
		lo = hi;
	if (tb->dir_bits < tb->width)
		narrow(s, tb, words, v, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		size_t row = tb->rows[i];
		if (row < s->n && memcmp(tb->fps + i * words, fp, words * 8) == 0 && s->ids[row] == id)
			return row;
	}
	return SIZE_MAX;
}

