/* ix.h - internals of the Hamming index shared by index.c, mih.c, scan.c,
 * mih_query.c, plan.c and file.c (prefix sh_ix_), never exported; what the
 * PostgreSQL extension shares too is in kernels.h.
 *
 * An index is a list of immutable segments plus the lock and metadata:
 *  1. a segment holds n unique (fp, id) rows: ids[] in (fp, id) order, and
 *     either the fingerprints in the same order (scan layout, fps != NULL) or
 *     chunk tables (MIH layout) whose copies of the fingerprints stand in;
 *  2. a pair is live in at most one segment; deletes set a bit in the
 *     segment's dead bitmap (allocated on the first delete);
 *  3. inserts go to a new one-row segment; segments are merged while the
 *     newest is at least half the size of the one before (sizes fall
 *     geometrically, so a query visits O(log n) segments and each row is
 *     rebuilt O(log n) times);
 *  4. a segment of an opened file points into the mapping, which lives as
 *     long as the index. */
#ifndef SH_IX_H
#define SH_IX_H

#include <pthread.h>
#include "../common/internal.h"
#include "kernels.h"

#define SH_IX_FORMAT_VERSION 2u /* 2: the body checksum (file.c) */

typedef struct sh_ix_table {
	unsigned start, width;   /* chunk bits [start, start + width) of the fingerprint */
	unsigned dir_bits;       /* directory on the chunk's top dir_bits bits */
	const uint32_t *dir;     /* 2^dir_bits + 1 offsets into fps and rows */
	const uint64_t *fps;     /* n fingerprints (words each) sorted by chunk, then row */
	const uint32_t *rows;    /* their rows (index into ids) */
	uint64_t mask[2];        /* the chunk's bits */
} sh_ix_table;

typedef struct sh_ix_seg {
	size_t n;                /* rows, dead ones included */
	size_t n_dead;
	const uint64_t *ids;     /* n */
	const uint64_t *fps;     /* n * words, or NULL when tables exist */
	uint64_t *dead;          /* bitmap of n bits, or NULL */
	simhash_index_plan plan;
	double pr[128][2];       /* P(bit b == v), measured on a sample (sh_ix_seg_bias) */
	double odds[128][2];     /* pr[b][!v] / pr[b][v]: the odds of flipping bit b from v */
	unsigned n_tables;
	sh_ix_table tab[SIMHASH_PLAN_MAX_TABLES];
	void *own[2 + 3 * SIMHASH_PLAN_MAX_TABLES]; /* heap blocks to free */
	int mapped;
} sh_ix_seg;

struct simhash_index {
	unsigned bits, words, max_dist;
	char scheme[SIMHASH_SCHEME_MAX];
	void *user;
	size_t user_len;
	const void *user_ext;    /* user bytes in the mapping (user == NULL) */
	size_t n_seg, cap_seg;
	sh_ix_seg **seg;         /* oldest (largest) first */
	size_t count;            /* live pairs */
	int force;               /* -1: automatic layout, else a simhash_layout */
	unsigned force_m;        /* chunks when force is SIMHASH_LAYOUT_MIH, 0: automatic */
	void *map;
	size_t map_len;
	unsigned file_version;   /* of the mapped file; 0: not from a file */
	uint64_t body_off;       /* where the body starts in the mapping */
	uint64_t body_sum;       /* its XXH3-64 as the header states (version >= 2) */
	pthread_rwlock_t lock;
};

static inline int sh_ix_is_dead(const sh_ix_seg *s, size_t row)
{
	return s->dead && (s->dead[row >> 6] >> (row & 63) & 1);
}

/* Chunk [start, start + width) of fp (words 1 or 2), width 1..64. */
static inline uint64_t sh_ix_chunk(const uint64_t *fp, unsigned start, unsigned width)
{
	uint64_t v;
	if (start >= 64) {
		v = fp[1] >> (start - 64);
	} else {
		v = fp[0] >> start;
		if (start && start + width > 64)
			v |= fp[1] << (64 - start);
	}
	return width == 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

/* ---- scan.c (the kernels and their dispatch table: kernels.h) */
size_t sh_ix_scan64_scalar(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos);
size_t sh_ix_scan64_avx2(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos);
size_t sh_ix_scan128_scalar(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos);
size_t sh_ix_scan128_avx2(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos);
size_t sh_ix_scan64_avx512(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos);
size_t sh_ix_scan128_avx512(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos);
/* The best kernel's scan of rows of `words` words. */
sh_ix_scan_fn sh_ix_scan_pick(unsigned words);
int sh_ix_have_popcnt(void);

/* ---- mih.c */
/* malloc (calloc when zero) for the large arrays queries read at random:
 * blocks of 4 MB and more are 2 MB aligned and asked for huge pages
 * (MADV_HUGEPAGE), since a TLB miss per bucket costs as much as the bucket
 * (page walks are dearer still under a hypervisor). Freed with free(). */
void *sh_ix_alloc_big(size_t len, int zero);
/* Builds seg's tables for plan from seg->fps (rows in (fp, id) order). */
/* Directory bits for a chunk of width bits over n entries. */
unsigned sh_ix_dir_bits(unsigned width, uint64_t n);
/* Fills tb's chunk, directory width, filter start and mask. */
void sh_ix_table_geometry(sh_ix_table *tb, unsigned bits, unsigned start, unsigned width,
			  uint64_t n);
/* Sets s->plan, s->n_tables and each table's geometry (no tables built). */
void sh_ix_seg_geometry(sh_ix_seg *s, unsigned bits, const simhash_index_plan *plan);
/* Fills tb's directory, fingerprints and rows from s->fps (geometry set) on
 * `threads` threads; the same bytes for any number. The directory is
 * allocated, and so are fps and rows unless given (n rows each). sfps and
 * srows (n rows each, or NULL): scratch for a scatter in two levels, which
 * keeps the writes of a wide directory in cache; the same bytes either way. */
simhash_err sh_ix_table_fill(const sh_ix_seg *s, unsigned words, sh_ix_table *tb, unsigned threads,
			     uint64_t *fps, uint32_t *rows, uint64_t *sfps, uint32_t *srows);
simhash_err sh_ix_tables_build(sh_ix_seg *s, unsigned bits, const simhash_index_plan *plan,
			       unsigned threads);
/* Entry i of s in storage order (rows, or table 0): its fingerprint and row. */
void sh_ix_seg_entry(const sh_ix_seg *s, unsigned words, size_t i, uint64_t *fp, size_t *row);
void sh_ix_seg_free(sh_ix_seg *s);
/* Measures s->pr on at most 4096 entries spread over s (few pages of a mapping). */
void sh_ix_seg_bias(sh_ix_seg *s, unsigned bits);
/* Sorts n rows (fps words each, ids) by (fp, id) in place and removes
 * duplicate pairs; returns the new n. 64 bits sort on `threads` threads. */
size_t sh_ix_sort_unique(uint64_t *fps, uint64_t *ids, size_t n, unsigned words, unsigned threads);
/* The same with scratch of n * 16 bytes from the caller (NULL: its own). */
size_t sh_ix_sort_unique_buf(uint64_t *fps, uint64_t *ids, size_t n, unsigned words, unsigned threads,
			     void *buf);
simhash_err sh_ix_matches_push(simhash_matches *m, uint64_t id, unsigned dist);

/* ---- mih_query.c */
/* Appends the live matches of s within k of q to out (unsorted). */
simhash_err sh_ix_seg_query(const sh_ix_seg *s, unsigned words, const uint64_t *q, unsigned k,
			    simhash_matches *out);
/* Row of (fp, id) in s, live or dead, or SIZE_MAX. */
size_t sh_ix_seg_find(const sh_ix_seg *s, unsigned words, const uint64_t *fp, uint64_t id);

/* ---- plan.c: the cost model's constants (ns), shared with mih.c; fitted on
 * bench/index_query at 10 million fingerprints (uniform and p = 0.72, k = 3,
 * 6, 10, m = 3, 4, 5) with the probe pipeline of mih.c */
#define SH_IX_PROBE_NS 65.0        /* a directory slot out of cache, then its bucket */
#define SH_IX_PROBE_CACHED_NS 20.0 /* the same when the directory stays in cache: */
#define SH_IX_DIR_CACHED_BITS 18   /* at most 2^18 slots (1 MB) */
#define SH_IX_PROBE_SEARCH_NS 200.0 /* a binary search within the slot (chunks wider than it) */
#define SH_IX_QUERY_NS 60.0
#define SH_IX_CAND64_NS 0.6        /* a fingerprint read in a bucket */
#define SH_IX_CAND128_NS 1.0
#define SH_IX_SCAN64_NS 0.25       /* a fingerprint scanned: AVX-512 VPOPCNTQ, or AVX2 */
#define SH_IX_SCAN128_NS 0.45

/* Cost of a lookup in a table whose directory has dir_bits bits, width w. */
static inline double sh_ix_probe_ns(unsigned dir_bits, unsigned width)
{
	if (dir_bits < width)
		return SH_IX_PROBE_SEARCH_NS;
	return dir_bits <= SH_IX_DIR_CACHED_BITS ? SH_IX_PROBE_CACHED_NS : SH_IX_PROBE_NS;
}

/* The plan for the rows of fps (words each): the bias is measured per bit. */
simhash_err sh_ix_plan_data(unsigned bits, unsigned k, const uint64_t *fps, size_t n,
			    simhash_layout force, unsigned force_m, simhash_index_plan *out);
/* Largest useful number of chunks at width bits and max_dist k. */
unsigned sh_ix_max_chunks(unsigned bits, unsigned k);
/* The model's cost of a query that scans n fingerprints of `bits` bits. */
double sh_ix_scan_ns(unsigned bits, uint64_t n);

#endif
