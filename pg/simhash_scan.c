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
 * Layout. Block 0 is the meta page. Blocks 1 .. sorted_end-1 are the sorted
 * region: the data pages of the build, entry ordinal o in block 1 + o / cap,
 * slot o % cap. Then each table's pages (8-byte (key << 32 | ordinal) sorted,
 * 1020 per page) and its directory (the first key of each table page). From
 * tail_start on, tail data pages. A data page is of one width (64 or 128
 * bits), its entries stored as columns: word 0 of every entry, then word 1
 * (128 bits), then the TIDs, each column `cap` entries long (cap = 582 at 64
 * bits, 370 at 128). Pages keep the standard layout (pd_lower covers the
 * columns), so generic WAL records stay small deltas.
 *
 * Invariants:
 *  1. A data page holds n <= cap(bits) entries in slots 0..n-1. In the sorted
 *     region entries never move (the tables point at them): VACUUM makes a
 *     dead entry's TID invalid. In the tail their order means nothing: VACUUM
 *     moves the last entry into a hole.
 *  2. Every live heap tuple with a non-NULL fingerprint has exactly one
 *     entry with a valid TID; NULLs have none (the operator is strict).
 *  3. Every sorted-region entry is in every table, under its block's key, so
 *     probing finds every row within k there; the tail is always scanned.
 *  4. The distance computed from the index is the exact distance, so a match
 *     needs no recheck on the heap.
 *  5. Every change to a page goes through generic WAL (built pages through
 *     log_newpage_range), so the index is crash-safe and replicated.
 *  6. The meta page's insertion targets and free list name tail pages only,
 *     and are hints: a page taken from them is checked (width, room) first.
 *  7. A scan honours every condition it is given, however many (no cap at
 *     INDEX_MAX_KEYS): the one of smallest k is probed or scanned for, each
 *     hit checked against all the others, since the answer is exact and the
 *     heap does not recheck it (invariant 4).
 *  8. Entries of the other width than the query's are skipped, never an
 *     error: a ball holds fingerprints of its own width only (simhash.c,
 *     invariant 2), so whether their rows are visible does not matter.
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

#include "simhash_pg.h"

#define SCAN_MAGIC 0x53485343 /* "SHSC" */
#define SCAN_VERSION 1
#define META_BLK 0
#define MAX_FREE 1000
#define F_META 1
#define F_DATA 2
#define F_TABLE 3
#define F_DIR 4
#define MAX_TABLES 4 /* 32-bit blocks of a 128-bit fingerprint */

typedef struct scan_special {
	uint16 n;     /* entries on a data or table page, keys on a directory page */
	uint16 bits;  /* 64 or 128 on a data page (0 while empty) */
	uint16 flags; /* F_META, F_DATA, F_TABLE or F_DIR */
	uint16 magic; /* low half of SCAN_MAGIC, for tools */
} scan_special;

typedef struct scan_meta {
	uint32 magic, version;
	BlockNumber insert_blk[2]; /* where inserts of 64 and 128 bits go */
	/* The sorted region (entries ordinals 0..n_sorted-1, dense from block 1)
	 * and its tables; n_sorted = 0 if the build made none. */
	uint32 sorted_bits, n_tables;
	uint64 n_sorted;
	BlockNumber sorted_end;  /* first block after the sorted data pages */
	BlockNumber table_start[MAX_TABLES];
	BlockNumber dir_start[MAX_TABLES];
	uint32 table_pages, dir_pages; /* per table */
	BlockNumber tail_start;  /* data pages from here on are the tail */
	uint32 n_free;
	BlockNumber free[MAX_FREE]; /* tail pages VACUUM left with room */
} scan_meta;

#define SPECIAL(page) ((scan_special *)PageGetSpecialPointer(page))
#define META(page) ((scan_meta *)PageGetContents(page))
#define DATA_START MAXALIGN(SizeOfPageHeaderData)
#define DATA_SPACE (BLCKSZ - DATA_START - MAXALIGN(sizeof(scan_special)))

static inline unsigned cap_of(unsigned bits)
{
	return (unsigned)(DATA_SPACE / (bits / 8 + sizeof(ItemPointerData)));
}

/* Column j of a data page (word j of every entry), and its TIDs. */
static inline uint64 *words(Page page, unsigned bits, unsigned j)
{
	return (uint64 *)(PageGetContents(page) + (Size)j * cap_of(bits) * 8);
}

static inline ItemPointerData *tids(Page page, unsigned bits)
{
	return (ItemPointerData *)(PageGetContents(page) + (Size)cap_of(bits) * bits / 8);
}

static void page_init_data(Page page, unsigned bits)
{
	scan_special *sp;

	PageInit(page, BLCKSZ, sizeof(scan_special));
	sp = SPECIAL(page);
	sp->flags = F_DATA;
	sp->magic = (uint16)SCAN_MAGIC;
	sp->bits = (uint16)bits;
	sp->n = 0;
	((PageHeader)page)->pd_lower = (LocationIndex)(DATA_START + cap_of(bits) *
						       (bits / 8 + sizeof(ItemPointerData)));
}

static void page_init_meta(Page page)
{
	scan_meta *m;
	scan_special *sp;

	PageInit(page, BLCKSZ, sizeof(scan_special));
	sp = SPECIAL(page);
	sp->flags = F_META;
	sp->magic = (uint16)SCAN_MAGIC;
	m = META(page);
	memset(m, 0, sizeof *m);
	m->magic = SCAN_MAGIC;
	m->version = SCAN_VERSION;
	m->insert_blk[0] = m->insert_blk[1] = InvalidBlockNumber;
	m->sorted_end = m->tail_start = META_BLK + 1;
	((PageHeader)page)->pd_lower = (LocationIndex)(DATA_START + sizeof(scan_meta));
}

static void check_meta(Page page, Relation index)
{
	if (SPECIAL(page)->flags != F_META || META(page)->magic != SCAN_MAGIC)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
				errmsg("simhash: index \"%s\" is not a simhash_scan index",
				       RelationGetRelationName(index))));
	if (META(page)->version != SCAN_VERSION)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
				errmsg("simhash: index \"%s\" has version %u, expected %u",
				       RelationGetRelationName(index), META(page)->version, SCAN_VERSION),
				errhint("REINDEX it.")));
}

static inline void page_put(Page page, const shpg_fp *fp, ItemPointer tid)
{
	scan_special *sp = SPECIAL(page);

	if (sp->n == 0 && sp->bits != fp->bits) /* an empty page changes width */
		page_init_data(page, fp->bits);
	sp = SPECIAL(page);
	Assert(sp->n < cap_of(fp->bits));
	words(page, fp->bits, 0)[sp->n] = fp->w[0];
	if (fp->bits == 128)
		words(page, fp->bits, 1)[sp->n] = fp->w[1];
	tids(page, fp->bits)[sp->n] = *tid;
	sp->n++;
}

/* The fingerprint of an index datum (a simhash varlena, perhaps toasted). */
static void datum_fp(Datum d, shpg_fp *fp)
{
	struct varlena *v = pg_detoast_datum_packed((struct varlena *)DatumGetPointer(d));

	shpg_unpack(v, fp);
	if ((Pointer)v != DatumGetPointer(d))
		pfree(v);
}

/* ---------------------------------------------------------------- kernels */

/* Each kernel writes the slots i < n of entries within k of q to hit[] and
 * returns how many; all give the same slots in the same order. */
typedef unsigned (*kernel_fn)(const uint64 *w0, const uint64 *w1, unsigned n, uint64 q0,
			      uint64 q1, unsigned k, uint16 *hit);

static inline unsigned popcount64_portable(uint64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

static unsigned kernel_scalar(const uint64 *w0, const uint64 *w1, unsigned n, uint64 q0,
			      uint64 q1, unsigned k, uint16 *hit)
{
	unsigned i, m = 0;

	for (i = 0; i < n; i++) {
		unsigned d = popcount64_portable(w0[i] ^ q0);

		if (w1)
			d += popcount64_portable(w1[i] ^ q1);
		if (d <= k)
			hit[m++] = (uint16)i;
	}
	return m;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_X86_KERNELS 1
#include <immintrin.h>

__attribute__((target("popcnt"))) static unsigned
kernel_popcnt(const uint64 *w0, const uint64 *w1, unsigned n, uint64 q0, uint64 q1, unsigned k,
	      uint16 *hit)
{
	unsigned i, m = 0;

	if (!w1) {
		for (i = 0; i < n; i++) {
			hit[m] = (uint16)i;
			m += (unsigned)__builtin_popcountll(w0[i] ^ q0) <= k;
		}
		return m;
	}
	for (i = 0; i < n; i++) {
		hit[m] = (uint16)i;
		m += (unsigned)(__builtin_popcountll(w0[i] ^ q0) + __builtin_popcountll(w1[i] ^ q1)) <= k;
	}
	return m;
}

/* Eight entries per step: XOR, VPOPCNTQ, compare, then the slots of the set
 * mask bits; the tail goes through kernel_popcnt. */
__attribute__((target("popcnt,avx512f,avx512vpopcntdq"))) static unsigned
kernel_avx512(const uint64 *w0, const uint64 *w1, unsigned n, uint64 q0, uint64 q1, unsigned k,
	      uint16 *hit)
{
	const __m512i vq0 = _mm512_set1_epi64((long long)q0), vq1 = _mm512_set1_epi64((long long)q1);
	const __m512i vk = _mm512_set1_epi64((long long)k);
	unsigned i, m = 0;

	for (i = 0; i + 8 <= n; i += 8) {
		__m512i d = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(w0 + i), vq0));
		__mmask8 mask;

		if (w1)
			d = _mm512_add_epi64(d, _mm512_popcnt_epi64(
							_mm512_xor_si512(_mm512_loadu_si512(w1 + i), vq1)));
		mask = _mm512_cmple_epu64_mask(d, vk);
		while (mask) {
			hit[m++] = (uint16)(i + (unsigned)__builtin_ctz(mask));
			mask &= (__mmask8)(mask - 1);
		}
	}
	if (i < n) {
		unsigned t = kernel_popcnt(w0 + i, w1 ? w1 + i : NULL, n - i, q0, q1, k, hit + m), j;

		for (j = 0; j < t; j++)
			hit[m + j] = (uint16)(hit[m + j] + i);
		m += t;
	}
	return m;
}
#endif

typedef enum { K_SCALAR, K_POPCNT, K_AVX512, N_KERNELS } kernel_id;

static kernel_fn kernel_get(kernel_id id)
{
#ifdef HAVE_X86_KERNELS
	if (id == K_AVX512)
		return kernel_avx512;
	if (id == K_POPCNT)
		return kernel_popcnt;
#endif
	(void)id;
	return kernel_scalar;
}

static int kernel_supported(kernel_id id)
{
#ifdef HAVE_X86_KERNELS
	__builtin_cpu_init();
	if (id == K_AVX512)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
	if (id == K_POPCNT)
		return __builtin_cpu_supports("popcnt");
#endif
	return id == K_SCALAR;
}

static kernel_fn kernel_best(void)
{
	int id;

	for (id = N_KERNELS - 1; id > K_SCALAR; id--)
		if (kernel_supported((kernel_id)id))
			return kernel_get((kernel_id)id);
	return kernel_scalar;
}

/* simhash_scan_kernels_agree(n, seed): runs every kernel this CPU has on the
 * same n pseudo-random entries (uniform and biased, both widths, every k) and
 * returns the number of (kernel, case) results that differ from the portable
 * one: 0. For the regression tests, which declare it themselves. */
PG_FUNCTION_INFO_V1(simhash_scan_kernels_agree);
Datum simhash_scan_kernels_agree(PG_FUNCTION_ARGS)
{
	int32 n = PG_GETARG_INT32(0);
	uint64 x = (uint64)PG_GETARG_INT64(1) | 1;
	uint64 *w0, *w1;
	uint16 *want, *got;
	int32 bad = 0, i;
	unsigned bits, k, id, biased, nw, ng;

	if (n < 1 || n > 65535)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("n out of range")));
	w0 = palloc(sizeof(uint64) * n);
	w1 = palloc(sizeof(uint64) * n);
	want = palloc(sizeof(uint16) * n);
	got = palloc(sizeof(uint16) * n);
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
				uint64 q0 = w0[(k * 7) % n] ^ (k & 1 ? 0 : 1ull << (k % 64)), q1 = w1[k % n];

				nw = kernel_scalar(w0, bits == 128 ? w1 : NULL, (unsigned)n, q0, q1, k, want);
				for (id = K_SCALAR + 1; id < N_KERNELS; id++) {
					if (!kernel_supported((kernel_id)id))
						continue;
					ng = kernel_get((kernel_id)id)(w0, bits == 128 ? w1 : NULL, (unsigned)n,
								       q0, q1, k, got);
					bad += ng != nw || memcmp(want, got, sizeof(uint16) * nw) != 0;
				}
			}
	}
	PG_RETURN_INT32(bad);
}

/* ---------------------------------------------------------------- build */

/* Block b (32 bits) of a fingerprint: the key of table b. */
static inline uint32 block_key(const uint64 *w, unsigned b)
{
	return (uint32)(w[b / 2] >> (32 * (b % 2)));
}

#define TABLE_CAP ((unsigned)(DATA_SPACE / sizeof(uint64)))
#define DIR_CAP ((unsigned)(DATA_SPACE / sizeof(uint32)))

typedef struct build_state {
	Relation index;
	PGAlignedBlock page[2]; /* the page being filled, per width */
	double n_tuples;
	/* One sort per table of (key, ordinal) pairs (see pair_of), fed as the
	 * rows come; all NULL once the column shows two widths. */
	Tuplesortstate *sort[MAX_TABLES];
	uint64 n_entries; /* entries of the first width: the next ordinal */
	unsigned bits;    /* width of the first entry */
	bool mixed;
} build_state;

/* A (key, ordinal) pair as an int8 whose signed order is the order of
 * (unsigned key, ordinal): the key's top bit flipped. */
static inline Datum pair_of(uint32 key, uint64 ordinal)
{
	return Int64GetDatum((int64)((uint64)(key ^ 0x80000000u) << 32 | ordinal));
}

static inline uint64 pair_stored(Datum d)
{
	uint64 v = (uint64)DatumGetInt64(d);

	return (v ^ 0x8000000000000000ull); /* key << 32 | ordinal */
}

static BlockNumber new_block(Relation index, Buffer *bufp)
{
	Buffer buf;

	LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	UnlockRelationForExtension(index, ExclusiveLock);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	*bufp = buf;
	return BufferGetBlockNumber(buf);
}

/* Appends a page image to the index (WAL-logged at the end of the build). */
static BlockNumber build_flush(Relation index, Page image)
{
	Buffer buf;
	BlockNumber blk = new_block(index, &buf);

	memcpy(BufferGetPage(buf), image, BLCKSZ);
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
	return blk;
}

static void build_keep(build_state *st, const shpg_fp *fp)
{
	unsigned b;

	if (st->bits == 0) {
		/* The sorts share maintenance_work_mem and spill to disk beyond it. */
		int mem = Max(maintenance_work_mem / (int)(fp->bits / 32), 64);

		st->bits = fp->bits;
		for (b = 0; b < fp->bits / 32; b++)
			st->sort[b] = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid,
							    false, mem, NULL, TUPLESORT_NONE);
	}
	if (st->mixed)
		return;
	if (fp->bits != st->bits) {
		st->mixed = true;
		for (b = 0; b < st->bits / 32; b++) {
			tuplesort_end(st->sort[b]);
			st->sort[b] = NULL;
		}
		return;
	}
	for (b = 0; b < st->bits / 32; b++)
		tuplesort_putdatum(st->sort[b], pair_of(block_key(fp->w, b), st->n_entries), false);
	st->n_entries++;
}

static void build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool alive, void *arg)
{
	build_state *st = (build_state *)arg;
	shpg_fp fp;
	Page page;

	(void)alive;
	if (isnull[0])
		return;
	datum_fp(values[0], &fp);
	page = st->page[fp.bits == 128].data;
	if (SPECIAL(page)->n == cap_of(fp.bits)) {
		build_flush(index, page);
		page_init_data(page, fp.bits);
	}
	page_put(page, &fp, tid);
	build_keep(st, &fp);
	st->n_tuples++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64 x = *(const uint64 *)a, y = *(const uint64 *)b;

	return x < y ? -1 : x > y;
}

/* Writes table b: (key << 32 | ordinal) sorted, TABLE_CAP per page, then its
 * directory (the first key of each table page). */
static void build_table(build_state *st, scan_meta *m, unsigned b)
{
	PGAlignedBlock image;
	uint64 *e = (uint64 *)PageGetContents(image.data);
	unsigned n_dir = 0, cnt = 0, i;
	uint32 *dir;
	uint64 o, n = st->n_entries;
	Datum d;
	bool isnull;

	tuplesort_performsort(st->sort[b]);
	dir = palloc_extended(sizeof(uint32) * (n / TABLE_CAP + 1), MCXT_ALLOC_HUGE);
	for (o = 0; o <= n; o++) {
		if (cnt == TABLE_CAP || (o == n && cnt > 0)) {
			BlockNumber blk;

			SPECIAL(image.data)->n = (uint16)cnt;
			((PageHeader)image.data)->pd_lower =
				(LocationIndex)(DATA_START + cnt * sizeof(uint64));
			blk = build_flush(st->index, image.data);
			if (n_dir == 0)
				m->table_start[b] = blk;
			dir[n_dir++] = (uint32)(e[0] >> 32);
			cnt = 0;
		}
		if (o == n)
			break;
		if (cnt == 0) {
			PageInit(image.data, BLCKSZ, sizeof(scan_special));
			SPECIAL(image.data)->flags = F_TABLE;
			SPECIAL(image.data)->magic = (uint16)SCAN_MAGIC;
		}
		if (!tuplesort_getdatum(st->sort[b], true, &d, &isnull, NULL))
			elog(ERROR, "simhash_scan: table %u ended after %llu of %llu entries", b,
			     (unsigned long long)o, (unsigned long long)n);
		e[cnt++] = pair_stored(d);
	}
	tuplesort_end(st->sort[b]);
	st->sort[b] = NULL;
	m->table_pages = n_dir;
	for (i = 0; i < n_dir; i += DIR_CAP) {
		unsigned c = Min(DIR_CAP, n_dir - i);
		BlockNumber blk;

		PageInit(image.data, BLCKSZ, sizeof(scan_special));
		SPECIAL(image.data)->flags = F_DIR;
		SPECIAL(image.data)->magic = (uint16)SCAN_MAGIC;
		SPECIAL(image.data)->n = (uint16)c;
		memcpy(PageGetContents(image.data), dir + i, c * sizeof(uint32));
		((PageHeader)image.data)->pd_lower = (LocationIndex)(DATA_START + c * sizeof(uint32));
		blk = build_flush(st->index, image.data);
		if (i == 0)
			m->dir_start[b] = blk;
	}
	m->dir_pages = (n_dir + DIR_CAP - 1) / DIR_CAP;
	pfree(dir);
}

static IndexBuildResult *scan_build(Relation heap, Relation index, IndexInfo *info)
{
	build_state *st;
	IndexBuildResult *res;
	Buffer metabuf;
	PGAlignedBlock meta;
	scan_meta *m;
	double reltuples;
	BlockNumber end;
	unsigned b;
	int w;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	st = palloc0(sizeof *st);
	st->index = index;
	page_init_meta(meta.data);
	m = META(meta.data);
	build_flush(index, meta.data);
	page_init_data(st->page[0].data, 64);
	page_init_data(st->page[1].data, 128);
	reltuples = table_index_build_scan(heap, index, info, true, true, build_callback, st, NULL);
	if (st->mixed || st->n_entries == 0) {
		/* No tables: every data page is a tail page, the last ones the
		 * insertion targets. */
		for (w = 0; w < 2; w++)
			m->insert_blk[w] = SPECIAL(st->page[w].data)->n
						   ? build_flush(index, st->page[w].data)
						   : InvalidBlockNumber;
		m->tail_start = META_BLK + 1;
		m->sorted_end = META_BLK + 1;
	} else {
		/* One width: its pages hold ordinals 0..n-1 densely from block 1
		 * (the other width's page is empty). Then the tables, then the tail. */
		end = build_flush(index, st->page[st->bits == 128].data) + 1;
		Assert((uint64)(end - 1) * cap_of(st->bits) >= st->n_entries);
		m->sorted_bits = st->bits;
		m->n_tables = st->bits / 32;
		m->n_sorted = st->n_entries;
		m->sorted_end = end;
		for (b = 0; b < m->n_tables; b++)
			build_table(st, m, b);
		m->tail_start = RelationGetNumberOfBlocks(index);
	}
	for (b = 0; b < MAX_TABLES; b++)
		if (st->sort[b])
			tuplesort_end(st->sort[b]);
	metabuf = ReadBuffer(index, META_BLK);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(metabuf), meta.data, BLCKSZ);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);
	res = palloc(sizeof *res);
	res->heap_tuples = reltuples;
	res->index_tuples = st->n_tuples;
	pfree(st);
	return res;
}

/* The init fork of an unlogged index: the meta page alone. */
static void scan_buildempty(Relation index)
{
	PGAlignedBlock meta;

	page_init_meta(meta.data);
	PageSetChecksumInplace(meta.data, META_BLK);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, META_BLK, meta.data, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM, META_BLK, meta.data,
		    true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}

/* ---------------------------------------------------------------- insert */

/* Whether page (locked) can take one more entry of `bits` bits. */
static bool page_takes(Page page, unsigned bits)
{
	scan_special *sp = SPECIAL(page);

	return sp->flags == F_DATA && (sp->n == 0 || sp->bits == bits) && sp->n < cap_of(bits);
}

static bool scan_insert(Relation index, Datum *values, bool *isnull, ItemPointer tid, Relation heap,
			IndexUniqueCheck check_unique, bool unchanged, IndexInfo *info)
{
	GenericXLogState *xs;
	Buffer metabuf, buf = InvalidBuffer;
	Page metapage, page;
	scan_meta *m;
	shpg_fp fp;
	BlockNumber blk;
	uint32 n_free;
	bool meta_changed = false, fresh = false;
	int w;

	(void)heap, (void)check_unique, (void)unchanged, (void)info;
	if (isnull[0])
		return false;
	datum_fp(values[0], &fp);
	w = fp.bits == 128;
	/* The meta page's lock serializes inserts: each is a few stores. */
	metabuf = ReadBuffer(index, META_BLK);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	metapage = BufferGetPage(metabuf);
	check_meta(metapage, index);
	m = META(metapage);
	blk = m->insert_blk[w];
	n_free = m->n_free;
	for (;;) {
		if (blk != InvalidBlockNumber) {
			buf = ReadBuffer(index, blk);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			if (page_takes(BufferGetPage(buf), fp.bits))
				break;
			UnlockReleaseBuffer(buf);
			buf = InvalidBuffer;
		}
		/* The target is full or of the other width: the next free page
		 * (those of the other width are dropped from the list), else a new one. */
		meta_changed = true;
		if (n_free == 0)
			break;
		blk = m->free[--n_free];
	}
	if (buf == InvalidBuffer) {
		blk = new_block(index, &buf);
		fresh = true;
	}
	xs = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(xs, buf, fresh ? GENERIC_XLOG_FULL_IMAGE : 0);
	if (fresh)
		page_init_data(page, fp.bits);
	page_put(page, &fp, tid);
	if (meta_changed) {
		Page mp = GenericXLogRegisterBuffer(xs, metabuf, 0);

		META(mp)->insert_blk[w] = blk;
		META(mp)->n_free = n_free;
	}
	GenericXLogFinish(xs);
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	return false;
}

/* ---------------------------------------------------------------- vacuum */

/* A copy of what scans and VACUUM read from the meta page. */
typedef struct meta_copy {
	uint32 sorted_bits, n_tables, table_pages, dir_pages;
	uint64 n_sorted;
	BlockNumber sorted_end, tail_start;
	BlockNumber table_start[MAX_TABLES], dir_start[MAX_TABLES];
} meta_copy;

static void read_meta(Relation index, meta_copy *mc)
{
	Buffer buf = ReadBuffer(index, META_BLK);
	scan_meta *m;
	unsigned b;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_meta(BufferGetPage(buf), index);
	m = META(BufferGetPage(buf));
	mc->sorted_bits = m->sorted_bits;
	mc->n_tables = m->n_tables;
	mc->table_pages = m->table_pages;
	mc->dir_pages = m->dir_pages;
	mc->n_sorted = m->n_sorted;
	mc->sorted_end = m->sorted_end;
	mc->tail_start = m->tail_start;
	for (b = 0; b < MAX_TABLES; b++) {
		mc->table_start[b] = m->table_start[b];
		mc->dir_start[b] = m->dir_start[b];
	}
	UnlockReleaseBuffer(buf);
}

/* Removes the dead entries of one data page: in the sorted region their TIDs
 * become invalid (the tables point at slots, so nothing moves there); in the
 * tail the last entry fills the hole. Returns the entries left. */
static unsigned vacuum_page(Page page, bool sorted, IndexBulkDeleteCallback callback, void *cb_state,
			    unsigned *removed)
{
	scan_special *sp = SPECIAL(page);
	unsigned bits = sp->bits ? sp->bits : 64, i, live = 0;
	ItemPointerData *t = tids(page, bits);

	for (i = 0; i < sp->n;) {
		if (!ItemPointerIsValid(&t[i])) {
			i++;
			continue;
		}
		if (!callback(&t[i], cb_state)) {
			i++;
			live++;
			continue;
		}
		(*removed)++;
		if (sorted) {
			ItemPointerSetInvalid(&t[i]);
			i++;
			continue;
		}
		sp->n--;
		words(page, bits, 0)[i] = words(page, bits, 0)[sp->n];
		if (bits == 128)
			words(page, bits, 1)[i] = words(page, bits, 1)[sp->n];
		t[i] = t[sp->n];
	}
	return live;
}

static IndexBulkDeleteResult *scan_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					      IndexBulkDeleteCallback callback, void *cb_state)
{
	Relation index = info->index;
	BlockNumber blk, n_blocks = RelationGetNumberOfBlocks(index);
	BlockNumber *room = palloc(sizeof(BlockNumber) * MAX_FREE);
	uint32 n_room = 0;
	GenericXLogState *xs;
	meta_copy mc;
	Buffer buf;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	read_meta(index, &mc);
	for (blk = META_BLK + 1; blk < n_blocks; blk++) {
		Page page;
		scan_special *sp;
		unsigned removed = 0;
		bool sorted = blk < mc.sorted_end;

		if (blk == mc.sorted_end)
			blk = mc.tail_start; /* skip the tables */
		if (blk >= n_blocks)
			break;
		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blk, RBM_NORMAL, info->strategy);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		xs = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(xs, buf, 0);
		sp = SPECIAL(page);
		if (sp->flags != F_DATA) {
			GenericXLogAbort(xs);
			UnlockReleaseBuffer(buf);
			continue;
		}
		stats->num_index_tuples += vacuum_page(page, sorted, callback, cb_state, &removed);
		stats->tuples_removed += removed;
		if (!sorted && sp->n < cap_of(sp->bits ? sp->bits : 64) && n_room < MAX_FREE)
			room[n_room++] = blk;
		if (removed)
			GenericXLogFinish(xs);
		else
			GenericXLogAbort(xs);
		UnlockReleaseBuffer(buf);
	}
	/* Tail pages with room become the free list; they are checked before use. */
	buf = ReadBuffer(index, META_BLK);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	check_meta(BufferGetPage(buf), index);
	xs = GenericXLogStart(index);
	{
		scan_meta *m = META(GenericXLogRegisterBuffer(xs, buf, 0));
		uint32 i, j = 0;

		for (i = 0; i < n_room; i++)
			if (room[i] != m->insert_blk[0] && room[i] != m->insert_blk[1])
				m->free[j++] = room[i];
		m->n_free = j;
	}
	GenericXLogFinish(xs);
	UnlockReleaseBuffer(buf);
	stats->num_pages = n_blocks;
	pfree(room);
	return stats;
}

static IndexBulkDeleteResult *scan_vacuumcleanup(IndexVacuumInfo *info,
						 IndexBulkDeleteResult *stats)
{
	Relation index = info->index;
	BlockNumber blk, n_blocks;

	if (info->analyze_only || stats != NULL)
		return stats;
	/* No deletions: count the live entries for the statistics. */
	stats = palloc0(sizeof(IndexBulkDeleteResult));
	n_blocks = RelationGetNumberOfBlocks(index);
	for (blk = META_BLK + 1; blk < n_blocks; blk++) {
		Buffer buf;
		Page page;

		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blk, RBM_NORMAL, info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (SPECIAL(page)->flags == F_DATA) {
			unsigned i, bits = SPECIAL(page)->bits ? SPECIAL(page)->bits : 64;

			for (i = 0; i < SPECIAL(page)->n; i++)
				stats->num_index_tuples += ItemPointerIsValid(&tids(page, bits)[i]);
		}
		UnlockReleaseBuffer(buf);
	}
	stats->num_pages = n_blocks;
	return stats;
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
	kernel_fn kernel;
	/* Every condition of the scan, the smallest k first (it drives the
	 * kernel and the probes; the others are checked on its hits): as many
	 * as the query has, none left out. n_keys is -1 when nothing can match
	 * (a NULL ball, or balls of two widths). */
	int n_keys, max_keys;
	shpg_fp *fp;
	int *k;
	uint16 hit[BLCKSZ / 8];
	/* the probe path */
	uint64 *cand;      /* ordinals of candidates */
	uint64 n_cand, max_cand;
} scan_opaque;

static IndexScanDesc scan_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	scan_opaque *so = palloc0(sizeof *so);

	so->kernel = kernel_best(); /* chosen once per scan */
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
	n_hits = so->kernel(w0, w1, sp->n, so->fp[0].w[0], so->fp[0].w[1], (unsigned)so->k[0],
			    so->hit);
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

/* The radii of the tables' blocks: sum(r_b + 1) = k + 1, spread evenly, so a
 * row farther than r_b in every block b is at least k + 1 away (pigeonhole):
 * every row within k is within r_b of the query in some block b. */
static void probe_radii(unsigned n_tables, int k, int *radius)
{
	unsigned b;

	for (b = 0; b < n_tables; b++)
		radius[b] = (k + 1) / (int)n_tables + (b < (unsigned)(k + 1) % n_tables) - 1;
}

/* Values within r of a 32-bit key: sum of C(32, i), i <= r. */
static double ball32(int r)
{
	double c = 1, total = r >= 0;
	int i;

	for (i = 1; i <= r && i <= 32; i++) {
		c = c * (32 - i + 1) / i;
		total += c;
	}
	return total;
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
	read_meta(index, &mc);
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
	read_meta(rel, &mc);
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

	am->ambuild = scan_build;
	am->ambuildempty = scan_buildempty;
	am->aminsert = scan_insert;
	am->ambulkdelete = scan_bulkdelete;
	am->amvacuumcleanup = scan_vacuumcleanup;
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
