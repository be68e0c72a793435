/* simhash_scan.c - the index access method simhash_scan: every fingerprint of
 * the column packed beside its row's TID, read whole by each query with a
 * popcount per entry. It answers fp <@ simhash_ball(q, k) (and so
 * simhash_within(fp, q, k), through the planner support in simhash_gin.c)
 * exactly, in a time that depends on neither k nor the bias of the bits.
 *
 * Workload. A sequential scan of the table calls a function per heap tuple
 * (~300 ms per million rows); this reads 8 or 16 bytes per row from a few
 * pages of shared buffers with a SIMD popcount (~2 ms per million). The GIN
 * operator class is faster for small k (a handful of keys); for larger k, or
 * biased bits, its query keys multiply and this index wins. amcostestimate
 * states that cost (the whole index, every query), so the planner picks the
 * cheaper one when both exist.
 *
 * Layout. Block 0 is the meta page; every other block is a data page of one
 * width (64 or 128 bits), its entries stored as columns: word 0 of every
 * entry, then word 1 (128 bits), then the TIDs, each column `cap` entries
 * long (cap = 582 at 64 bits, 370 at 128). Pages keep the standard layout
 * (pd_lower covers the columns), so generic WAL records stay small deltas.
 *
 * Invariants:
 *  1. A data page holds n <= cap(bits) entries in slots 0..n-1; the order of
 *     entries means nothing (VACUUM moves the last entry into a hole).
 *  2. Every live heap tuple with a non-NULL fingerprint has exactly one
 *     entry; NULLs have none (the operator is strict, so they never match).
 *  3. The distance computed from the index is the exact distance, so a match
 *     needs no recheck on the heap.
 *  4. Every change to a page goes through generic WAL (built pages through
 *     log_newpage_range), so the index is crash-safe and replicated.
 *  5. The meta page's insertion targets and free list are hints: a page
 *     taken from them is checked (width, room) before use.
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "simhash_pg.h"

#define SCAN_MAGIC 0x53485343 /* "SHSC" */
#define SCAN_VERSION 1
#define META_BLK 0
#define MAX_FREE 1000
#define F_META 1
#define F_DATA 2

typedef struct scan_special {
	uint16 n;     /* entries on a data page */
	uint16 bits;  /* 64 or 128 on a data page (0 while empty) */
	uint16 flags; /* F_META or F_DATA */
	uint16 magic; /* low half of SCAN_MAGIC, for tools */
} scan_special;

typedef struct scan_meta {
	uint32 magic, version;
	BlockNumber insert_blk[2]; /* where inserts of 64 and 128 bits go */
	uint32 n_free;
	BlockNumber free[MAX_FREE]; /* pages VACUUM left with room */
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

typedef struct build_state {
	Relation index;
	PGAlignedBlock page[2]; /* the page being filled, per width */
	double n_tuples;
} build_state;

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
	st->n_tuples++;
}

static IndexBuildResult *scan_build(Relation heap, Relation index, IndexInfo *info)
{
	build_state *st;
	IndexBuildResult *res;
	Buffer metabuf;
	scan_meta *m;
	double reltuples;
	BlockNumber blk[2];
	int w;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	st = palloc0(sizeof *st);
	st->index = index;
	page_init_meta(st->page[0].data);
	build_flush(index, st->page[0].data);
	page_init_data(st->page[0].data, 64);
	page_init_data(st->page[1].data, 128);
	reltuples = table_index_build_scan(heap, index, info, true, true, build_callback, st, NULL);
	/* The last pages become the insertion targets. */
	for (w = 0; w < 2; w++)
		blk[w] = SPECIAL(st->page[w].data)->n ? build_flush(index, st->page[w].data)
						       : InvalidBlockNumber;
	metabuf = ReadBuffer(index, META_BLK);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	m = META(BufferGetPage(metabuf));
	m->insert_blk[0] = blk[0];
	m->insert_blk[1] = blk[1];
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

static IndexBulkDeleteResult *scan_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					      IndexBulkDeleteCallback callback, void *cb_state)
{
	Relation index = info->index;
	BlockNumber blk, n_blocks = RelationGetNumberOfBlocks(index);
	BlockNumber *room = palloc(sizeof(BlockNumber) * MAX_FREE);
	uint32 n_room = 0;
	GenericXLogState *xs;
	Buffer buf;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	for (blk = META_BLK + 1; blk < n_blocks; blk++) {
		Page page;
		scan_special *sp;
		unsigned i, bits, removed = 0;

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
		bits = sp->bits ? sp->bits : 64;
		for (i = 0; i < sp->n;) {
			if (!callback(&tids(page, bits)[i], cb_state)) {
				i++;
				continue;
			}
			/* The last entry fills the hole (invariant 1). */
			sp->n--;
			words(page, bits, 0)[i] = words(page, bits, 0)[sp->n];
			if (bits == 128)
				words(page, bits, 1)[i] = words(page, bits, 1)[sp->n];
			tids(page, bits)[i] = tids(page, bits)[sp->n];
			removed++;
		}
		stats->tuples_removed += removed;
		stats->num_index_tuples += sp->n;
		if (sp->n < cap_of(bits) && n_room < MAX_FREE)
			room[n_room++] = blk;
		if (removed)
			GenericXLogFinish(xs);
		else
			GenericXLogAbort(xs);
		UnlockReleaseBuffer(buf);
	}
	/* Pages with room become the free list; they are checked before use. */
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
	/* No deletions: count the entries for the statistics. */
	stats = palloc0(sizeof(IndexBulkDeleteResult));
	n_blocks = RelationGetNumberOfBlocks(index);
	for (blk = META_BLK + 1; blk < n_blocks; blk++) {
		Buffer buf;
		Page page;

		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blk, RBM_NORMAL, info->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (SPECIAL(page)->flags == F_DATA)
			stats->num_index_tuples += SPECIAL(page)->n;
		UnlockReleaseBuffer(buf);
	}
	stats->num_pages = n_blocks;
	return stats;
}

/* ---------------------------------------------------------------- scan */

typedef struct scan_opaque {
	kernel_fn kernel;
	int n_keys;        /* usable keys; -1 if one is NULL (nothing matches) */
	shpg_fp fp[INDEX_MAX_KEYS];
	int k[INDEX_MAX_KEYS];
	uint16 hit[BLCKSZ / 8];
} scan_opaque;

static IndexScanDesc scan_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	scan_opaque *so = palloc0(sizeof *so);

	so->kernel = kernel_best(); /* chosen once per scan */
	scan->opaque = so;
	return scan;
}

static void scan_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	scan_opaque *so = (scan_opaque *)scan->opaque;
	int i;

	(void)orderbys, (void)norderbys;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	so->n_keys = 0;
	for (i = 0; i < scan->numberOfKeys && i < INDEX_MAX_KEYS; i++) {
		ScanKey key = &scan->keyData[i];
		shpg_ball *ball;

		if (key->sk_flags & SK_ISNULL) {
			so->n_keys = -1;
			return;
		}
		ball = (shpg_ball *)PG_DETOAST_DATUM(key->sk_argument);
		shpg_ball_unpack(ball, &so->fp[so->n_keys], &so->k[so->n_keys]);
		shpg_check_k(so->k[so->n_keys], so->fp[so->n_keys].bits);
		if (so->n_keys > 0)
			shpg_check_widths(&so->fp[0], &so->fp[so->n_keys]);
		so->n_keys++;
	}
}

static void width_mismatch(unsigned index_bits, unsigned query_bits)
{
	shpg_fp a = { { 0, 0 }, index_bits }, b = { { 0, 0 }, query_bits };

	shpg_check_widths(&a, &b);
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
	int j;

	if (sp->flags != F_DATA || sp->n == 0)
		return 0;
	if (sp->bits != bits)
		width_mismatch(sp->bits, bits); /* as a sequential scan would */
	w0 = words(page, bits, 0);
	w1 = bits == 128 ? words(page, bits, 1) : NULL;
	t = tids(page, bits);
	n_hits = so->kernel(w0, w1, sp->n, so->fp[0].w[0], so->fp[0].w[1], (unsigned)so->k[0],
			    so->hit);
	for (i = 0; i < n_hits; i++) {
		unsigned s = so->hit[i];
		bool all = true;

		for (j = 1; j < so->n_keys && all; j++) {
			shpg_fp e = { { w0[s], w1 ? w1[s] : 0 }, bits };

			all = shpg_distance(&e, &so->fp[j]) <= (unsigned)so->k[j];
		}
		if (all)
			found[m++] = t[s];
	}
	if (m)
		tbm_add_tuples(tbm, found, (int)m, false); /* exact: no recheck (invariant 3) */
	return m;
}

static int64 scan_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	scan_opaque *so = (scan_opaque *)scan->opaque;
	Relation index = scan->indexRelation;
	BlockNumber blk, n_blocks;
	int64 total = 0;

	if (so->n_keys <= 0)
		return 0; /* a NULL query (strict operator), or no condition */
	n_blocks = RelationGetNumberOfBlocks(index);
	/* Without a ring buffer: the index is meant to stay in shared buffers. */
	for (blk = META_BLK + 1; blk < n_blocks; blk++) {
		Buffer buf = ReadBuffer(index, blk);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		total += scan_page(so, BufferGetPage(buf), tbm);
		UnlockReleaseBuffer(buf);
		if ((blk & 63) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return total;
}

static void scan_endscan(IndexScanDesc scan)
{
	pfree(scan->opaque);
	scan->opaque = NULL;
}

/* ---------------------------------------------------------------- planner */

/* The cost of reading every page and popcounting every entry, whatever k:
 * a page as a sequential page read, an entry as a tenth of an operator call
 * (a SIMD popcount, no function call), the matches as index tuples. */
static void scan_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			      Cost *startup, Cost *total, Selectivity *selectivity,
			      double *correlation, double *pages)
{
	IndexOptInfo *index = path->indexinfo;
	List *quals = get_quals_from_indexclauses(path->indexclauses);
	double n_pages = Max(index->pages, 1), n_tuples = Max(index->tuples, 0);

	(void)loop_count;
	*selectivity = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);
	*startup = n_pages * seq_page_cost + n_tuples * cpu_operator_cost * 0.1;
	*total = *startup + *selectivity * n_tuples * cpu_index_tuple_cost;
	*correlation = 0;
	*pages = n_pages;
}

static bytea *scan_options(Datum reloptions, bool validate)
{
	(void)validate;
	if (DatumGetPointer(reloptions) != NULL)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("simhash: a simhash_scan index takes no storage parameters")));
	return NULL;
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
