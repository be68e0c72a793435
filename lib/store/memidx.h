/* memidx.h - the store's search structure: the library's exact Hamming index
 * (simhash_index) over document numbers, kept in memory, and its saved copy
 * (PATH-index) that lets open map it instead of rebuilding it.
 *
 * This header is the one seam between the store and the index. Thread
 * safety: many readers, one writer (the store's idx_lock around it; the index
 * has its own lock too). */
#ifndef SH_STORE_MEMIDX_H
#define SH_STORE_MEMIDX_H

#include "../common/internal.h"

/* A match: a document number and its distance to the query. */
typedef struct sh_hit {
	uint64_t docno;
	unsigned dist;
} sh_hit;

typedef struct sh_memidx sh_memidx;

/* The stamp saved with the index (a checkpoint): which store and which state
 * of it the index holds. The store keeps the stamp of the checkpoint it may
 * use in its "ckpt" meta record; open uses a saved index only when both are
 * byte for byte equal. */
typedef struct sh_idx_stamp {
	uint64_t uuid;  /* the store's, from its meta record */
	uint64_t nonce; /* random per checkpoint: tells two saves apart */
	uint64_t next;  /* the store's "next": documents numbered below it */
	uint64_t dseq;  /* the store's "dseq": deletions numbered below it */
	uint64_t count; /* documents */
} sh_idx_stamp;

#define SH_STAMP_LEN 48
/* The stamp's 48 bytes: "SHSTIDX2", then the five fields, u64 LE each. */
void sh_idx_stamp_encode(const sh_idx_stamp *s, uint8_t *p);
/* 0 if p (len bytes) is not a stamp. */
int sh_idx_stamp_decode(const uint8_t *p, size_t len, sh_idx_stamp *s);

simhash_err sh_memidx_new(unsigned bits, const char *scheme, sh_memidx **out);
void sh_memidx_free(sh_memidx *m);
/* Adds n fingerprints (w[0], w[1] per document for 128 bits, else w[0])
 * with their document numbers, in one go (one new segment of the index). */
simhash_err sh_memidx_build(sh_memidx *m, const uint64_t *fps, const uint64_t *docnos, size_t n);
/* Adds docno (not present) with fingerprint fp. */
simhash_err sh_memidx_insert(sh_memidx *m, uint64_t docno, const simhash_fp *fp);
/* Removes docno, stored with fingerprint fp; nothing if absent. */
void sh_memidx_delete(sh_memidx *m, uint64_t docno, const simhash_fp *fp);
uint64_t sh_memidx_count(const sh_memidx *m);
/* The largest distance the index answers; queries beyond it scan the store. */
unsigned sh_memidx_max_dist(const sh_memidx *m);
/* Appends to hits (an array of sh_hit, *n of them used) every document
 * within max_dist (<= sh_memidx_max_dist) of fp, sorted by distance then
 * document number. scratch: the caller's, reused across calls. */
simhash_err sh_memidx_query(const sh_memidx *m, const simhash_fp *fp, unsigned max_dist,
			    simhash_matches *scratch, sh_buf *hits, size_t *n);
/* Whether docno is present with exactly fingerprint fp (for verify). */
int sh_memidx_has(const sh_memidx *m, uint64_t docno, const simhash_fp *fp,
		  simhash_matches *scratch);

/* Checks the saved index m was mapped from (a checkpoint) against the body
 * checksum its file records; SIMHASH_OK for an index built in memory. */
simhash_err sh_memidx_verify(const sh_memidx *m, simhash_error *err);
/* Saves the index with its stamp to path (atomically). */
simhash_err sh_memidx_save(const sh_memidx *m, const char *path, const sh_idx_stamp *stamp);
/* Opens a saved index by memory map if it exists, was saved with exactly
 * this stamp and scheme; else *out = NULL (and SIMHASH_OK: the caller rebuilds). */
simhash_err sh_memidx_open(const char *path, unsigned bits, const char *scheme,
			   const sh_idx_stamp *stamp, sh_memidx **out);

/* Appends one hit to hits (*n used), growing it. */
simhash_err sh_hits_push(sh_buf *hits, size_t *n, uint64_t docno, unsigned dist);

#endif
