/* simhash_scan.c - the index access method simhash_scan: every fingerprint of
 * the column stored beside its row's TID, answering fp <@ simhash_ball(q, k)
 * (and so simhash_within(fp, q, k), through the planner support in
 * simhash_gin.c) exactly, fast for every k and any bias of the bits.
 *
 * Workload. A sequential scan of the table calls a function per heap tuple
 * (~300 ms per million rows). This index answers a query one of two ways,
 * chosen per query by estimated cost:
 *  - probing (small k): the build sorts one table per 32-bit block of the
 *    fingerprint, (block key, ordinal) pairs; a query gives block b a radius
 *    r_b with sum(r_b + 1) = k + 1 and looks up every key within r_b of its
 *    own block (66 lookups at k = 3, 64 bits). A row within k is within r_b
 *    in some block (pigeonhole), so it is a candidate; 32-bit keys are
 *    selective even with biased bits, so candidates are few. ~0.1 ms.
 *  - scanning (large k): the fingerprints are stored as columns and popcounted
 *    with SIMD, the next page prefetched: ~1.5 ms per million rows for any k.
 * Rows inserted after the build form a tail that every query scans.
 *
 * The build sorts the tables with tuplesort (in maintenance_work_mem, on disk
 * beyond it); a column of two widths gets no tables, only the scan.
 *
 * simhash_scan.h lays out the pages and numbers the invariants;
 * simhash_scan_pages.c writes them (build, insert, VACUUM). This file reads
 * them: the scan and probe paths, the planner's cost and the handler. The
 * popcount kernels and the radius rule are the library's (lib/index/kernels.h),
 * the same code the library's own index runs.
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include <limits.h>
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/tuplesort.h"

#include "index/kernels.h"
#include "simhash_scan.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64 x = *(const uint64 *)a, y = *(const uint64 *)b;

	return x < y ? -1 : x > y;
}

/* simhash_scan_kernels_agree(n, seed): runs every variant of the library's
 * column kernel (lib/index/kernels.h) that this CPU has on the same n
 * pseudo-random entries (uniform and biased, both widths, every k) and
 * returns the number of (variant, case) results that differ from the
 * portable scalar one: 0. For the regression tests, which declare it
 * themselves. */
PG_FUNCTION_INFO_V1(simhash_scan_kernels_agree);
Datum simhash_scan_kernels_agree(PG_FUNCTION_ARGS)
{
	int32 n = PG_GETARG_INT32(0);
	uint64 x = (uint64)PG_GETARG_INT64(1) | 1;
	uint64 *w0, *w1;
	uint32 *want, *got;
	int32 bad = 0, i;
	unsigned bits, k, biased;
	size_t n_kernels, v, nw, ng;
	const sh_ix_kernels *kv = sh_ix_kernel_list(&n_kernels);

	if (n < 1 || n > 65535)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("n out of range")));
	w0 = palloc(sizeof(uint64) * n);
	w1 = palloc(sizeof(uint64) * n);
	want = palloc(sizeof(uint32) * n);
	got = palloc(sizeof(uint32) * n);
	for (biased = 0; biased < 2; biased++) {
		for (i = 0; i < n; i++) {
			unsigned b;

			w0[i] = w1[i] = 0;
			for (b = 0; b < 128; b++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
				if ((x % 100) < (biased ? 72u : 50u))
					(b < 64 ? w0 : w1)[i] |= 1ull << (b % 64);
			}
		}
		for (bits = 64; bits <= 128; bits += 64)
			for (k = 0; k <= bits; k++) {
				uint64 q[2] = { w0[(k * 7) % n] ^ (k & 1 ? 0 : 1ull << (k % 64)), w1[k % n] };

				nw = kv[0].cols(w0, bits == 128 ? w1 : NULL, (size_t)n, q, k, want);
				for (v = 1; v < n_kernels; v++) {
					if (!sh_ix_kernel_usable(&kv[v]))
						continue;
					ng = kv[v].cols(w0, bits == 128 ? w1 : NULL, (size_t)n, q, k, got);
					bad += ng != nw || memcmp(want, got, sizeof(uint32) * nw) != 0;
				}
			}
	}
	PG_RETURN_INT32(bad);
}

/* ---------------------------------------------------------------- options */

/* The storage parameter max_probes: -1 (the default) lets each query choose
 * between probing the tables and scanning by their estimated costs; 0 always
 * scans; N > 0 probes when a query needs at most N probes. Registered once
 * per backend in _PG_init, as PostgreSQL's own index options are. */
typedef struct scan_reloptions {
	int32 vl_len_;
	int max_probes;
} scan_reloptions;

static relopt_kind scan_relopt_kind;

void _PG_init(void);
void _PG_init(void)
{
	scan_relopt_kind = add_reloption_kind();
	add_int_reloption(scan_relopt_kind, "max_probes",
			  "most table probes a query may make before it scans instead (-1: by cost)",
			  -1, -1, INT_MAX, AccessExclusiveLock);
}

static bytea *scan_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{ "max_probes", RELOPT_TYPE_INT, offsetof(scan_reloptions, max_probes) },
	};

	return (bytea *)build_reloptions(reloptions, validate, scan_relopt_kind,
					 sizeof(scan_reloptions), tab, lengthof(tab));
}

static int max_probes_of(Relation index)
{
	return index->rd_options ? ((scan_reloptions *)index->rd_options)->max_probes : -1;
}

/* ---------------------------------------------------------------- scan */

typedef struct scan_opaque {
	const sh_ix_kernels *kernels; /* the library's best for this CPU */
	/* Every condition of the scan, the smallest k first (it drives the
	 * kernel and the probes; the others are checked on its hits): as many
	 * as the query has, none left out. n_keys is -1 when nothing can match
	 * (a NULL ball, or balls of two widths). */
	int n_keys, max_keys;
	shpg_fp *fp;
	int *k;
	uint32 hit[BLCKSZ / 8];
	/* the probe path */
	uint64 *cand;      /* ordinals of candidates */
	uint64 n_cand, max_cand;
} scan_opaque;

static IndexScanDesc scan_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	scan_opaque *so = palloc0(sizeof *so);

	so->kernels = sh_ix_kernel_best(); /* chosen once per scan */
	scan->opaque = so;
	return scan;
}

/* Sorts the conditions by k (insertion sort: a query has a few), so that the
 * tightest one, the fewest candidates, is the one probed or scanned for. */
static void sort_keys_by_k(scan_opaque *so)
{
	int i, j;

	for (i = 1; i < so->n_keys; i++) {
		shpg_fp fp = so->fp[i];
		int k = so->k[i];

		for (j = i; j > 0 && so->k[j - 1] > k; j--) {
			so->fp[j] = so->fp[j - 1];
			so->k[j] = so->k[j - 1];
		}
		so->fp[j] = fp;
		so->k[j] = k;
	}
}

static void scan_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	scan_opaque *so = (scan_opaque *)scan->opaque;
	int i;

	(void)orderbys, (void)norderbys;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (scan->numberOfKeys > so->max_keys) {
		if (so->fp) {
			pfree(so->fp);
			pfree(so->k);
		}
		so->max_keys = scan->numberOfKeys;
		so->fp = palloc(sizeof(shpg_fp) * so->max_keys);
		so->k = palloc(sizeof(int) * so->max_keys);
	}
	so->n_keys = 0;
	for (i = 0; i < scan->numberOfKeys; i++) {
		ScanKey key = &scan->keyData[i];
		shpg_ball *ball;

		if (key->sk_flags & SK_ISNULL) {
			so->n_keys = -1;
			return;
		}
		ball = (shpg_ball *)PG_DETOAST_DATUM(key->sk_argument);
		shpg_ball_unpack(ball, &so->fp[so->n_keys], &so->k[so->n_keys]);
		shpg_check_k(so->k[so->n_keys]);
		so->n_keys++;
	}
	/* A ball holds fingerprints of its own width only: balls of two widths
	 * have nothing in common. */
	for (i = 1; i < so->n_keys; i++)
		if (so->fp[i].bits != so->fp[0].bits) {
			so->n_keys = -1;
			return;
		}
	sort_keys_by_k(so);
}

/* Whether the entry (words e) is within every key's k. */
static inline bool matches_all(const scan_opaque *so, const uint64 *e, int from)
{
	int j;

	for (j = from; j < so->n_keys; j++) {
		shpg_fp x = { { e[0], so->fp[0].bits == 128 ? e[1] : 0 }, so->fp[0].bits };

		if (shpg_distance(&x, &so->fp[j]) > (unsigned)so->k[j])
			return false;
	}
	return true;
}

/* Adds the entries of one data page that match every key to tbm. */
static int64 scan_page(scan_opaque *so, Page page, TIDBitmap *tbm)
{
	const scan_special *sp = SPECIAL(page);
	unsigned bits = so->fp[0].bits, n_hits, i;
	ItemPointerData found[BLCKSZ / 8];
	const ItemPointerData *t;
	const uint64 *w0, *w1;
	unsigned m = 0;

	/* A page of the other width holds nothing within a ball of this width
	 * (as the operator says of each row): skipped, whoever sees its rows. */
	if (sp->flags != F_DATA || sp->n == 0 || sp->bits != bits)
		return 0;
	w0 = words(page, bits, 0);
	w1 = bits == 128 ? words(page, bits, 1) : NULL;
	t = tids(page, bits);
	n_hits = (unsigned)so->kernels->cols(w0, w1, sp->n, so->fp[0].w, (unsigned)so->k[0], so->hit);
	for (i = 0; i < n_hits; i++) {
		unsigned s = so->hit[i];
		uint64 e[2] = { w0[s], w1 ? w1[s] : 0 };

		if (ItemPointerIsValid(&t[s]) && matches_all(so, e, 1))
			found[m++] = t[s];
	}
	if (m)
		tbm_add_tuples(tbm, found, (int)m, false); /* exact: no recheck (invariant 3) */
	return m;
}

/* Scans the data pages [from, to) with the kernel, the next page prefetched
 * while one is read: a page's first touch (TLB and cache misses) costs more
 * than its popcounts. Without a ring buffer: the index is meant to stay in
 * shared buffers. */
static int64 scan_range(scan_opaque *so, Relation index, BlockNumber from, BlockNumber to,
			TIDBitmap *tbm)
{
	int column_bytes = (int)cap_of(so->fp[0].bits) * (int)so->fp[0].bits / 8;
	BlockNumber blk;
	Buffer next;
	int64 total = 0;

	if (from >= to)
		return 0;
	next = ReadBuffer(index, from);
	for (blk = from; blk < to; blk++) {
		Buffer buf = next;

		next = InvalidBuffer;
		if (blk + 1 < to) {
			const char *p;
			int off;

			next = ReadBuffer(index, blk + 1);
			p = (const char *)BufferGetPage(next);
			for (off = 0; off < column_bytes; off += 64)
				__builtin_prefetch(p + DATA_START + off);
			__builtin_prefetch(SPECIAL(p));
		}
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		total += scan_page(so, BufferGetPage(buf), tbm);
		UnlockReleaseBuffer(buf);
		if ((blk & 63) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return total;
}

/* ------------------------------------------------ the probe path (small k) */

/* The radii of the tables' blocks: the library's even split (kernels.h), a
 * row farther than r_b in every block b is at least k + 1 away (pigeonhole):
 * every row within k is within r_b of the query in some block b. -1: block
 * not probed. */
static void probe_radii(unsigned n_tables, int k, int *radius)
{
	unsigned b;

	for (b = 0; b < n_tables; b++) {
		unsigned r = sh_ix_radius(n_tables, (unsigned)k, b);

		radius[b] = r == UINT_MAX ? -1 : (int)r;
	}
}

/* Values within r of a 32-bit key (none for r = -1). */
static double ball32(int r)
{
	return r < 0 ? 0 : sh_ix_ball(32, (unsigned)r);
}

static double probe_count(unsigned n_tables, int k)
{
	int radius[MAX_TABLES];
	double n = 0;
	unsigned b;

	probe_radii(n_tables, k, radius);
	for (b = 0; b < n_tables; b++)
		n += ball32(radius[b]);
	return n;
}

/* Probing beats scanning the sorted pages while a probe (a table page read)
 * costs less than a sorted data page scanned: a page scan popcounts ~500
 * entries, about three probes' time. */
static bool probe_is_cheaper(const meta_copy *mc, int k, int max_probes)
{
	double n = mc->n_sorted > 0 ? probe_count(mc->n_tables, k) : 0;

	if (mc->n_sorted == 0 || max_probes == 0)
		return false;
	if (max_probes > 0)
		return n <= max_probes;
	return n < 3.0 * (double)(mc->sorted_end - (META_BLK + 1));
}

typedef struct probe_ctx {
	scan_opaque *so;
	Relation index;
	const meta_copy *mc;
	unsigned table;
	const uint32 *dir;
} probe_ctx;

static void cand_add(scan_opaque *so, uint64 ordinal)
{
	if (so->n_cand == so->max_cand) {
		so->max_cand = so->max_cand ? so->max_cand * 2 : 1024;
		so->cand = so->cand ? repalloc_huge(so->cand, so->max_cand * sizeof(uint64))
				    : palloc_extended(so->max_cand * sizeof(uint64), MCXT_ALLOC_HUGE);
	}
	so->cand[so->n_cand++] = ordinal;
}

/* The first of the n sorted entries e whose key is >= v. Keys are spread
 * almost evenly over a page's range (block values of different rows), so an
 * interpolated guess lands a few entries away and a short walk finds the
 * spot: two or three cache lines instead of a binary search's ten. */
static unsigned first_at_least(const uint64 *e, unsigned n, uint32 v)
{
	uint32 lo_key, hi_key;
	unsigned i, steps, a = 0, z = n;

	if (n == 0 || (uint32)(e[0] >> 32) >= v)
		return 0;
	lo_key = (uint32)(e[0] >> 32);
	hi_key = (uint32)(e[n - 1] >> 32);
	if (hi_key < v)
		return n;
	i = (unsigned)((uint64)(v - lo_key) * (n - 1) / ((uint64)(hi_key - lo_key) + 1));
	/* Walk at most 32 entries; keys skewed beyond that: binary search. */
	if ((uint32)(e[i] >> 32) < v) {
		for (steps = 0; i < n && (uint32)(e[i] >> 32) < v && steps < 32; i++, steps++)
			;
		if (i == n || (uint32)(e[i] >> 32) >= v)
			return i;
		a = i;
	} else {
		for (steps = 0; i > 0 && (uint32)(e[i - 1] >> 32) >= v && steps < 32; i--, steps++)
			;
		if (i == 0 || (uint32)(e[i - 1] >> 32) < v)
			return i;
		z = i;
	}
	while (a < z) {
		unsigned mid = a + (z - a) / 2;

		if ((uint32)(e[mid] >> 32) < v)
			a = mid + 1;
		else
			z = mid;
	}
	return a;
}

/* simhash_scan_search_agrees(rounds, seed): first_at_least() against a plain
 * binary search on sorted pages of random keys, even, clustered, with long
 * runs of one key and skewed (most keys in a narrow band), for keys present,
 * absent and out of range; returns the number of disagreements: 0. For the
 * regression tests, which declare it themselves. */
PG_FUNCTION_INFO_V1(simhash_scan_search_agrees);
Datum simhash_scan_search_agrees(PG_FUNCTION_ARGS)
{
	int32 rounds = PG_GETARG_INT32(0), r, bad = 0;
	uint64 x = (uint64)PG_GETARG_INT64(1) | 1, e[1020];

	for (r = 0; r < rounds; r++) {
		unsigned n = (unsigned)(x % 1020) + 1, i, kind = (unsigned)r % 4, t;

		for (i = 0; i < n; i++) {
			uint32 key;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			key = kind == 0 ? (uint32)x
			      : kind == 1 ? (uint32)(x % 64) * 1000u
			      : kind == 2 ? (uint32)(x % 3)
				  : (x % 10 < 9 ? 5000u + (uint32)(x >> 40) % 100 : (uint32)(x >> 20));
			e[i] = (uint64)key << 32 | i;
		}
		qsort(e, n, sizeof(uint64), cmp_u64);
		for (t = 0; t < 64; t++) {
			uint32 v;
			unsigned a = 0, z = n;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v = t % 3 == 0 ? (uint32)(e[x % n] >> 32) : t % 3 == 1 ? (uint32)x
			    : (uint32)(e[x % n] >> 32) + 1;
			while (a < z) {
				unsigned mid = a + (z - a) / 2;

				if ((uint32)(e[mid] >> 32) < v)
					a = mid + 1;
				else
					z = mid;
			}
			bad += first_at_least(e, n, v) != a;
		}
	}
	PG_RETURN_INT32(bad);
}

/* Adds the ordinals of every entry whose block key equals v. */
static void probe_key(probe_ctx *pc, uint32 v)
{
	const meta_copy *mc = pc->mc;
	uint32 lo = 0, hi = mc->table_pages, p;

	CHECK_FOR_INTERRUPTS(); /* a forced max_probes may ask for millions */

	/* First table page whose first key is >= v; the run of v may start on
	 * the page before it. */
	while (lo < hi) {
		uint32 mid = lo + (hi - lo) / 2;

		if (pc->dir[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (p = lo > 0 ? lo - 1 : 0; p < mc->table_pages; p++) {
		Buffer buf;
		const uint64 *e;
		unsigned n, a;
		bool more;

		if (p > 0 && p != (lo > 0 ? lo - 1 : 0) && pc->dir[p] > v)
			break;
		buf = ReadBuffer(pc->index, mc->table_start[pc->table] + p);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		e = (const uint64 *)PageGetContents(BufferGetPage(buf));
		n = SPECIAL(BufferGetPage(buf))->n;
		a = first_at_least(e, n, v);
		for (; a < n && (uint32)(e[a] >> 32) == v; a++)
			cand_add(pc->so, e[a] & 0xffffffffu);
		more = a == n; /* the run may go on in the next page */
		UnlockReleaseBuffer(buf);
		if (!more)
			break;
	}
}

/* Probes every value within `left` more flips of v, flipping bits >= from. */
static void probe_ball(probe_ctx *pc, uint32 v, unsigned from, int left)
{
	unsigned j;

	probe_key(pc, v);
	if (left <= 0)
		return;
	for (j = from; j < 32; j++)
		probe_ball(pc, v ^ (1u << j), j + 1, left - 1);
}

static uint32 *read_dir(Relation index, const meta_copy *mc, unsigned b)
{
	uint32 *dir = palloc(sizeof(uint32) * mc->table_pages);
	uint32 i, done = 0;

	for (i = 0; i < mc->dir_pages; i++) {
		Buffer buf = ReadBuffer(index, mc->dir_start[b] + i);
		unsigned n;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		n = SPECIAL(BufferGetPage(buf))->n;
		memcpy(dir + done, PageGetContents(BufferGetPage(buf)), n * sizeof(uint32));
		done += n;
		UnlockReleaseBuffer(buf);
	}
	Assert(done == mc->table_pages);
	return dir;
}

/* The sorted region through the tables: candidates from every probed block,
 * each read once (sorted ordinals, so page by page) and its exact distance
 * computed. */
static int64 probe_sorted(scan_opaque *so, Relation index, const meta_copy *mc, TIDBitmap *tbm)
{
	unsigned bits = mc->sorted_bits, cap = cap_of(bits), b;
	int radius[MAX_TABLES];
	ItemPointerData *found;
	probe_ctx pc;
	uint64 i, last = PG_UINT64_MAX;
	Buffer buf = InvalidBuffer;
	BlockNumber buf_blk = InvalidBlockNumber;
	int64 m = 0;

	probe_radii(mc->n_tables, so->k[0], radius);
	so->n_cand = 0;
	pc.so = so;
	pc.index = index;
	pc.mc = mc;
	for (b = 0; b < mc->n_tables; b++) {
		uint32 *dir;

		if (radius[b] < 0)
			continue;
		dir = read_dir(index, mc, b);
		pc.table = b;
		pc.dir = dir;
		probe_ball(&pc, block_key(so->fp[0].w, b), 0, radius[b]);
		pfree(dir);
		CHECK_FOR_INTERRUPTS();
	}
	if (so->n_cand == 0)
		return 0;
	qsort(so->cand, so->n_cand, sizeof(uint64), cmp_u64);
	found = palloc(sizeof(ItemPointerData) * cap);
	for (i = 0; i < so->n_cand; i++) {
		uint64 o = so->cand[i];
		BlockNumber blk = (BlockNumber)(META_BLK + 1 + o / cap);
		unsigned slot = (unsigned)(o % cap);
		Page page;
		uint64 e[2];
		const ItemPointerData *t;

		if (o == last)
			continue;
		last = o;
		if (blk != buf_blk) {
			if (m > 0) {
				tbm_add_tuples(tbm, found, (int)m, false);
				m = 0;
			}
			if (BufferIsValid(buf))
				UnlockReleaseBuffer(buf);
			buf = ReadBuffer(index, blk);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			buf_blk = blk;
		}
		page = BufferGetPage(buf);
		if (SPECIAL(page)->flags != F_DATA || slot >= SPECIAL(page)->n)
			continue;
		t = tids(page, bits);
		if (!ItemPointerIsValid(&t[slot]))
			continue; /* removed by VACUUM */
		e[0] = words(page, bits, 0)[slot];
		e[1] = bits == 128 ? words(page, bits, 1)[slot] : 0;
		if (matches_all(so, e, 0))
			found[m++] = t[slot];
	}
	if (m > 0)
		tbm_add_tuples(tbm, found, (int)m, false);
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	pfree(found);
	return (int64)so->n_cand;
}

static int64 scan_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	scan_opaque *so = (scan_opaque *)scan->opaque;
	Relation index = scan->indexRelation;
	BlockNumber n_blocks;
	meta_copy mc;
	int64 total = 0;

	if (so->n_keys <= 0)
		return 0; /* a NULL query (strict operator), or no condition */
	pgstat_count_index_scan(index); /* pg_stat_*_indexes.idx_scan, as btree and GIN count */
	shsc_read_meta(index, &mc);
	n_blocks = RelationGetNumberOfBlocks(index);
	if (mc.n_sorted > 0 && mc.sorted_bits != so->fp[0].bits)
		; /* the sorted region is of the other width: nothing there matches */
	else if (probe_is_cheaper(&mc, so->k[0], max_probes_of(index)))
		total += probe_sorted(so, index, &mc, tbm);
	else
		total += scan_range(so, index, META_BLK + 1, mc.sorted_end, tbm);
	total += scan_range(so, index, Max(mc.tail_start, mc.sorted_end), n_blocks, tbm);
	return total;
}

static void scan_endscan(IndexScanDesc scan)
{
	scan_opaque *so = (scan_opaque *)scan->opaque;

	if (so->fp) {
		pfree(so->fp);
		pfree(so->k);
	}
	pfree(so);
	scan->opaque = NULL;
}

/* ---------------------------------------------------------------- planner */

/* k of the index condition fp <@ ball, if the planner knows it (-1 if not). */
static int clause_k(PlannerInfo *root, IndexPath *path)
{
	ListCell *lc;

	foreach (lc, get_quals_from_indexclauses(path->indexclauses)) {
		Node *clause = (Node *)((RestrictInfo *)lfirst(lc))->clause;
		Node *ball;

		if (!IsA(clause, OpExpr) || list_length(((OpExpr *)clause)->args) != 2)
			continue;
		ball = estimate_expression_value(root, lsecond(((OpExpr *)clause)->args));
		if (IsA(ball, Const) && !((Const *)ball)->constisnull)
			return ((shpg_ball *)PG_DETOAST_DATUM(((Const *)ball)->constvalue))->k;
		if (IsA(ball, FuncExpr) && list_length(((FuncExpr *)ball)->args) == 2) {
			Node *k = estimate_expression_value(root, lsecond(((FuncExpr *)ball)->args));

			if (IsA(k, Const) && !((Const *)k)->constisnull)
				return DatumGetInt32(((Const *)k)->constvalue);
		}
	}
	return -1;
}

/* The cost of a query: scanning reads every data page in order from shared
 * buffers (the next one prefetched) and popcounts every entry (a fraction of
 * an operator call: SIMD, no function call); probing reads about one table
 * page per probe, then the tail is scanned. When k is unknown (a generic
 * plan), a typical near-duplicate radius, 3, as the selectivity estimate
 * assumes: the plan is the same for every k (each execution chooses between
 * probing and scanning), so a generic plan is as good as a custom one and
 * the plan cache may keep it. Calibrated on 1 million
 * rows against gincostestimate's figures for simhash_ops and the measured
 * times of both, so that with both indexes the planner picks the faster. */
static void scan_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			      Cost *startup, Cost *total, Selectivity *selectivity,
			      double *correlation, double *pages)
{
	IndexOptInfo *index = path->indexinfo;
	List *quals = get_quals_from_indexclauses(path->indexclauses);
	double n_pages = Max(index->pages, 1), n_tuples = Max(index->tuples, 0);
	const double page_cost = seq_page_cost * 0.25, entry_cost = cpu_operator_cost * 0.15;
	int k = clause_k(root, path);
	Relation rel;
	meta_copy mc;
	double all, tail, data_pages;
	Cost cost;

	(void)loop_count;
	if (k < 0)
		k = 3;
	rel = index_open(index->indexoid, NoLock);
	shsc_read_meta(rel, &mc);
	/* The tables are read only by probes: a scan reads the data pages. */
	all = (double)RelationGetNumberOfBlocks(rel);
	tail = Max(all - Max(mc.tail_start, mc.sorted_end), 0);
	data_pages = (double)(mc.sorted_end - (META_BLK + 1)) + tail;
	cost = data_pages * page_cost + n_tuples * entry_cost;
	if (probe_is_cheaper(&mc, k, max_probes_of(rel))) {
		double tail_share = data_pages > 0 ? tail / data_pages : 0;

		cost = probe_count(mc.n_tables, k) * page_cost + tail * page_cost +
		       n_tuples * tail_share * entry_cost;
	}
	index_close(rel, NoLock);
	*selectivity = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);
	*startup = cost;
	*total = cost + *selectivity * n_tuples * cpu_index_tuple_cost;
	*correlation = 0;
	*pages = n_pages;
}

/* An operator class of simhash_scan has operator 1 only (fp <@ ball, boolean)
 * and no support functions. */
static bool scan_validate(Oid opclassoid)
{
	HeapTuple tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	CatCList *ops, *procs;
	Oid family;
	bool ok = true;
	int i;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	family = ((Form_pg_opclass)GETSTRUCT(tup))->opcfamily;
	ReleaseSysCache(tup);
	ops = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(family));
	for (i = 0; i < ops->n_members; i++) {
		Form_pg_amop op = (Form_pg_amop)GETSTRUCT(&ops->members[i]->tuple);

		if (op->amopstrategy != 1 || op->amoppurpose != AMOP_SEARCH ||
		    get_op_rettype(op->amopopr) != BOOLOID) {
			ereport(INFO, (errmsg("simhash_scan operator family %u: operator %u with strategy %d is not fp <@ ball",
					      family, op->amopopr, op->amopstrategy)));
			ok = false;
		}
	}
	procs = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(family));
	if (procs->n_members > 0) {
		ereport(INFO, (errmsg("simhash_scan operator family %u has support functions; it needs none",
				      family)));
		ok = false;
	}
	ReleaseSysCacheList(procs);
	ReleaseSysCacheList(ops);
	return ok;
}

PG_FUNCTION_INFO_V1(simhash_scan_handler);
Datum simhash_scan_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	(void)fcinfo;
	am->amstrategies = 1;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = false;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = false;
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL;
	am->amkeytype = InvalidOid;

	am->ambuild = shsc_build;
	am->ambuildempty = shsc_buildempty;
	am->aminsert = shsc_insert;
	am->ambulkdelete = shsc_bulkdelete;
	am->amvacuumcleanup = shsc_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = scan_costestimate;
	am->amoptions = scan_options;
	am->amproperty = NULL;
	am->ambuildphasename = NULL;
	am->amvalidate = scan_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = scan_beginscan;
	am->amrescan = scan_rescan;
	am->amgettuple = NULL;
	am->amgetbitmap = scan_getbitmap;
	am->amendscan = scan_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;
	PG_RETURN_POINTER(am);
}

