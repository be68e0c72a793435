/* memidx.h - the store's in-memory Hamming index over document numbers.
 *
 * The store keeps its search structure in memory and rebuilds it at open from
 * the stored fingerprints. This header is the one seam between the store and
 * the index, so that the index behind it can change without touching the
 * store. Thread safety: many readers, one writer (the store's rwlock). */
#ifndef SH_STORE_MEMIDX_H
#define SH_STORE_MEMIDX_H

#include "../common/internal.h"

/* A match: a document number and its distance to the query. */
typedef struct sh_hit {
	uint64_t docno;
	unsigned dist;
} sh_hit;

typedef struct sh_memidx sh_memidx;

simhash_err sh_memidx_new(unsigned bits, sh_memidx **out);
void sh_memidx_free(sh_memidx *m);
/* Adds docno (not present) with fingerprint fp. */
simhash_err sh_memidx_insert(sh_memidx *m, uint64_t docno, const simhash_fp *fp);
/* Removes docno, stored with fingerprint fp; nothing if absent. */
void sh_memidx_delete(sh_memidx *m, uint64_t docno, const simhash_fp *fp);
uint64_t sh_memidx_count(const sh_memidx *m);
/* Appends to hits (an array of sh_hit, *n of them used) every document
 * within max_dist of fp, in no particular order. */
simhash_err sh_memidx_query(const sh_memidx *m, const simhash_fp *fp, unsigned max_dist,
			    sh_buf *hits, size_t *n);
/* Whether docno is present with exactly fingerprint fp (for verify). */
int sh_memidx_has(const sh_memidx *m, uint64_t docno, const simhash_fp *fp);

/* Appends one hit to hits (*n used), growing it. */
simhash_err sh_hits_push(sh_buf *hits, size_t *n, uint64_t docno, unsigned dist);

#endif
