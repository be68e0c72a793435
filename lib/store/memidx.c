/* memidx.c - the store's in-memory index: a stand-in exact scan.
 *
 * Fingerprints sit in arrays indexed by document number (w0[docno], and
 * w1[docno] for 128 bits) with a bitmap of the live ones; a query checks
 * every live document. Document numbers are dense (the store hands them out
 * in order and never reuses one), so the arrays cost 8 or 16 bytes per number
 * ever handed out plus one bit.
 *
 * Invariants:
 *  1. docno < cap for every live docno; live[docno / 64] bit docno % 64 is set
 *     iff docno is present, and then w0/w1 hold its fingerprint.
 *  2. count is the number of set bits.
 */
#include <stdlib.h>
#include <string.h>
#include "memidx.h"

struct sh_memidx {
	unsigned bits;
	uint64_t *w0, *w1;
	uint64_t *live;
	uint64_t cap; /* document numbers with room; a multiple of 64 */
	uint64_t count;
};

simhash_err sh_memidx_new(unsigned bits, sh_memidx **out)
{
	sh_memidx *m = calloc(1, sizeof *m);

	if (!m)
		return SIMHASH_ENOMEM;
	m->bits = bits;
	*out = m;
	return SIMHASH_OK;
}

void sh_memidx_free(sh_memidx *m)
{
	if (!m)
		return;
	free(m->w0);
	free(m->w1);
	free(m->live);
	free(m);
}

static simhash_err grow(sh_memidx *m, uint64_t docno)
{
	uint64_t cap = m->cap ? m->cap : 1024, *p;

	while (cap <= docno)
		cap *= 2;
	p = realloc(m->w0, cap * sizeof *p);
	if (!p)
		return SIMHASH_ENOMEM;
	m->w0 = p;
	if (m->bits == 128) {
		p = realloc(m->w1, cap * sizeof *p);
		if (!p)
			return SIMHASH_ENOMEM;
		m->w1 = p;
	}
	p = realloc(m->live, cap / 64 * sizeof *p);
	if (!p)
		return SIMHASH_ENOMEM;
	memset(p + m->cap / 64, 0, (cap - m->cap) / 64 * sizeof *p);
	m->live = p;
	m->cap = cap;
	return SIMHASH_OK;
}

simhash_err sh_memidx_insert(sh_memidx *m, uint64_t docno, const simhash_fp *fp)
{
	simhash_err e;

	if (docno >= m->cap && (e = grow(m, docno)) != SIMHASH_OK)
		return e;
	m->w0[docno] = fp->w[0];
	if (m->w1)
		m->w1[docno] = fp->w[1];
	if (!(m->live[docno / 64] & (1ull << (docno % 64))))
		m->count++;
	m->live[docno / 64] |= 1ull << (docno % 64);
	return SIMHASH_OK;
}

void sh_memidx_delete(sh_memidx *m, uint64_t docno, const simhash_fp *fp)
{
	SH_UNUSED(fp);
	if (docno >= m->cap || !(m->live[docno / 64] & (1ull << (docno % 64))))
		return;
	m->live[docno / 64] &= ~(1ull << (docno % 64));
	m->count--;
}

uint64_t sh_memidx_count(const sh_memidx *m)
{
	return m->count;
}

int sh_memidx_has(const sh_memidx *m, uint64_t docno, const simhash_fp *fp)
{
	if (docno >= m->cap || !(m->live[docno / 64] & (1ull << (docno % 64))))
		return 0;
	return m->w0[docno] == fp->w[0] && (!m->w1 || m->w1[docno] == fp->w[1]);
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
			    sh_buf *hits, size_t *n)
{
	uint64_t q0 = fp->w[0], q1 = fp->w[1];
	simhash_err e;

	for (uint64_t b = 0; b < m->cap / 64; b++) {
		uint64_t live = m->live[b];

		while (live) {
			uint64_t d = b * 64 + (uint64_t)__builtin_ctzll(live);
			unsigned dist = simhash_hamming64(m->w0[d], q0);

			live &= live - 1;
			if (m->w1)
				dist += simhash_hamming64(m->w1[d], q1);
			if (dist <= max_dist && (e = sh_hits_push(hits, n, d, dist)) != SIMHASH_OK)
				return e;
		}
	}
	return SIMHASH_OK;
}
