/* memidx.c - the store's search structure on the library's exact Hamming
 * index (lib/index/), which answers every k up to its max_dist exactly.
 *
 * The index holds 64- or 128-bit fingerprints; a 32-bit store's fingerprints
 * go in as 64-bit ones with the high half zero, which keeps every distance.
 * max_dist is 12 (24 at 128 bits, see index_max); the store answers larger k
 * by scanning its documents.
 *
 * The saved copy (a checkpoint) carries a stamp (store uuid, a nonce, the
 * store's next document and deletion numbers, count) in the index's user
 * bytes; open maps it only when the stamp is exactly the one the store
 * recorded for its checkpoint (checkpoint.c replays what changed since), so
 * a copy of another state is never used: the store rebuilds instead. */
#include <stdlib.h>
#include <string.h>
#include "memidx.h"

#define STAMP_MAGIC "SHSTIDX2"
#define STAMP_LEN SH_STAMP_LEN

struct sh_memidx {
	simhash_index *ix;
	unsigned bits; /* the store's */
};

static simhash_fp widen(const sh_memidx *m, const simhash_fp *fp)
{
	simhash_fp f = *fp;

	if (m->bits == 32)
		f.bits = 64;
	return f;
}

static unsigned index_bits(unsigned bits)
{
	return bits == 128 ? 128 : 64;
}

/* The index's layout is planned for its max_dist: at 16 of 64 bits the plan
 * is a scan of every fingerprint, at 12 multi-index hashing with 4 tables of
 * 16 bits (1M documents: 73 us per query at k 12, radius 0 at k 3). 12 and 24
 * cover the useful range (docs/quality.md reads F1 over k 0..12 and 0..24). */
static unsigned index_max(unsigned bits)
{
	return bits == 128 ? 24 : 12;
}

simhash_err sh_memidx_new(unsigned bits, const char *scheme, sh_memidx **out)
{
	sh_memidx *m = calloc(1, sizeof *m);
	simhash_err e;

	if (!m)
		return SIMHASH_ENOMEM;
	m->bits = bits;
	if ((e = simhash_index_new(index_bits(bits), index_max(bits), &m->ix)) != SIMHASH_OK ||
	    (e = simhash_index_set_scheme(m->ix, scheme)) != SIMHASH_OK) {
		sh_memidx_free(m);
		return e;
	}
	*out = m;
	return SIMHASH_OK;
}

void sh_memidx_free(sh_memidx *m)
{
	if (!m)
		return;
	simhash_index_free(m->ix);
	free(m);
}

simhash_err sh_memidx_build(sh_memidx *m, const uint64_t *fps, const uint64_t *docnos, size_t n)
{
	return n ? simhash_index_build(m->ix, fps, docnos, n, 2) : SIMHASH_OK;
}

simhash_err sh_memidx_insert(sh_memidx *m, uint64_t docno, const simhash_fp *fp)
{
	simhash_fp f = widen(m, fp);

	return simhash_index_insert(m->ix, &f, docno);
}

void sh_memidx_delete(sh_memidx *m, uint64_t docno, const simhash_fp *fp)
{
	simhash_fp f = widen(m, fp);

	simhash_index_delete(m->ix, &f, docno, NULL);
}

uint64_t sh_memidx_count(const sh_memidx *m)
{
	return simhash_index_count(m->ix);
}

unsigned sh_memidx_max_dist(const sh_memidx *m)
{
	return simhash_index_max_dist(m->ix);
}

simhash_err sh_hits_push(sh_buf *hits, size_t *n, uint64_t docno, unsigned dist)
{
	simhash_err e;
	sh_hit *h;

	if ((*n + 1) * sizeof(sh_hit) > hits->cap &&
	    (e = sh_buf_reserve(hits, (*n + 1) * 2 * sizeof(sh_hit))) != SIMHASH_OK)
		return e;
	h = (sh_hit *)hits->p + (*n)++;
	h->docno = docno;
	h->dist = dist;
	return SIMHASH_OK;
}

simhash_err sh_memidx_query(const sh_memidx *m, const simhash_fp *fp, unsigned max_dist,
			    simhash_matches *scratch, sh_buf *hits, size_t *n)
{
	simhash_fp f = widen(m, fp);
	simhash_err e;

	if ((e = simhash_index_query(m->ix, &f, max_dist, scratch)) != SIMHASH_OK)
		return e;
	if ((e = sh_buf_reserve(hits, (*n + scratch->n) * sizeof(sh_hit))) != SIMHASH_OK)
		return e;
	for (size_t i = 0; i < scratch->n; i++) {
		sh_hit *h = (sh_hit *)hits->p + (*n)++;

		h->docno = scratch->v[i].id;
		h->dist = scratch->v[i].dist;
	}
	return SIMHASH_OK;
}

int sh_memidx_has(const sh_memidx *m, uint64_t docno, const simhash_fp *fp,
		  simhash_matches *scratch)
{
	simhash_fp f = widen(m, fp);

	if (simhash_index_query(m->ix, &f, 0, scratch) != SIMHASH_OK)
		return 0;
	for (size_t i = 0; i < scratch->n; i++)
		if (scratch->v[i].id == docno)
			return 1;
	return 0;
}

void sh_idx_stamp_encode(const sh_idx_stamp *s, uint8_t *p)
{
	memcpy(p, STAMP_MAGIC, 8);
	sh_put_le64(p + 8, s->uuid);
	sh_put_le64(p + 16, s->nonce);
	sh_put_le64(p + 24, s->next);
	sh_put_le64(p + 32, s->dseq);
	sh_put_le64(p + 40, s->count);
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int sh_idx_stamp_decode(const uint8_t *p, size_t len, sh_idx_stamp *s)
{
	if (len != STAMP_LEN || memcmp(p, STAMP_MAGIC, 8))
		return 0;
	s->uuid = get_le64(p + 8);
	s->nonce = get_le64(p + 16);
	s->next = get_le64(p + 24);
	s->dseq = get_le64(p + 32);
	s->count = get_le64(p + 40);
	return 1;
}

simhash_err sh_memidx_save(const sh_memidx *m, const char *path, const sh_idx_stamp *stamp)
{
	uint8_t p[STAMP_LEN];
	simhash_err e;

	sh_idx_stamp_encode(stamp, p);
	if ((e = simhash_index_set_user(m->ix, p, sizeof p)) != SIMHASH_OK)
		return e;
	return simhash_index_save(m->ix, path, NULL);
}

simhash_err sh_memidx_open(const char *path, unsigned bits, const char *scheme,
			   const sh_idx_stamp *stamp, sh_memidx **out)
{
	uint8_t want[STAMP_LEN];
	const void *user;
	size_t len;
	sh_memidx *m;

	*out = NULL;
	if (!(m = calloc(1, sizeof *m)))
		return SIMHASH_ENOMEM;
	m->bits = bits;
	if (simhash_index_open(path, &m->ix, NULL) != SIMHASH_OK) {
		free(m); /* missing or unreadable: rebuild */
		return SIMHASH_OK;
	}
	sh_idx_stamp_encode(stamp, want);
	simhash_index_user(m->ix, &user, &len);
	if (len != STAMP_LEN || memcmp(user, want, STAMP_LEN) ||
	    simhash_index_bits(m->ix) != index_bits(bits) ||
	    simhash_index_max_dist(m->ix) != index_max(bits) ||
	    strcmp(simhash_index_scheme(m->ix), scheme) ||
	    simhash_index_count(m->ix) != stamp->count) {
		sh_memidx_free(m);
		return SIMHASH_OK;
	}
	*out = m;
	return SIMHASH_OK;
}

simhash_err sh_memidx_verify(const sh_memidx *m, simhash_error *err)
{
	return simhash_index_verify(m->ix, err);
}
