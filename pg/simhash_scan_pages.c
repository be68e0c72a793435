/* simhash_scan_pages.c - the pages of simhash_scan (simhash_scan.h lays them
 * out and states the invariants) and everything that writes them: the build
 * (data pages in heap order, then one sorted table per 32-bit block and its
 * directory), inserts into the tail, and VACUUM. simhash_scan.c reads them.
 *
 * Every change to a page of a built index goes through generic WAL; the
 * build writes its pages unlogged and logs them at the end
 * (log_newpage_range), so the index is crash-safe and replicated. */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "simhash_scan.h"

/* ---------------------------------------------------------------- pages */

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

void shsc_read_meta(Relation index, meta_copy *mc)
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

/* ---------------------------------------------------------------- build */

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

IndexBuildResult *shsc_build(Relation heap, Relation index, IndexInfo *info)
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
void shsc_buildempty(Relation index)
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

bool shsc_insert(Relation index, Datum *values, bool *isnull, ItemPointer tid, Relation heap,
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

IndexBulkDeleteResult *shsc_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
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
	shsc_read_meta(index, &mc);
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

IndexBulkDeleteResult *shsc_vacuumcleanup(IndexVacuumInfo *info,
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
