/* simhash_scan.h - the pages of the index access method simhash_scan, shared
 * by simhash_scan_pages.c (the layout's helpers and everything that writes
 * pages: build, insert, VACUUM) and simhash_scan.c (everything that reads
 * them: scans, probes, the planner's cost, the handler).
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
#ifndef SIMHASH_SCAN_H
#define SIMHASH_SCAN_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

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

/* Block b (32 bits) of a fingerprint: the key of table b. */
static inline uint32 block_key(const uint64 *w, unsigned b)
{
	return (uint32)(w[b / 2] >> (32 * (b % 2)));
}

/* A copy of what scans and VACUUM read from the meta page. */
typedef struct meta_copy {
	uint32 sorted_bits, n_tables, table_pages, dir_pages;
	uint64 n_sorted;
	BlockNumber sorted_end, tail_start;
	BlockNumber table_start[MAX_TABLES], dir_start[MAX_TABLES];
} meta_copy;

/* simhash_scan_pages.c: reads the meta page (checked) into mc. */
void shsc_read_meta(Relation index, meta_copy *mc);

/* simhash_scan_pages.c: the access method's writers. */
IndexBuildResult *shsc_build(Relation heap, Relation index, IndexInfo *info);
void shsc_buildempty(Relation index);
bool shsc_insert(Relation index, Datum *values, bool *isnull, ItemPointer tid, Relation heap,
		 IndexUniqueCheck check_unique, bool unchanged, IndexInfo *info);
IndexBulkDeleteResult *shsc_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				       IndexBulkDeleteCallback callback, void *cb_state);
IndexBulkDeleteResult *shsc_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);

#endif /* SIMHASH_SCAN_H */
