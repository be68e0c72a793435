/* batch.c - the changes of the batch the writer thread runs (writer.c): the
 * documents each request adds and deletes inside the batch's transaction,
 * the deletion log they leave, and the index update after the commit.
 *
 * Workload: thousands of requests per batch under load (one per concurrent
 * writer), each a few records; a batch's index update is one bulk build of
 * its additions, not one insertion per document.
 *
 * Invariants:
 *  1. During a batch, pend lists the batch's index changes in order (adds and
 *     deletions, sh_batch_note), and dels holds every document number deleted
 *     in the batch, so a check in the batch sees index + added - deleted:
 *     exactly what the transaction holds (writes.c, check_and_put).
 *  2. Every deletion of a batch (delete, replace, expire) is appended to
 *     "dlog" under the next deletion number in the batch's transaction, and
 *     "dseq" follows (sh_batch_log), so an open after a crash replays exactly
 *     the deletions since its checkpoint (checkpoint.c).
 *  3. A batch that deleted a record failing its checksum (writes.c,
 *     del_damaged, which sets rebuild_idx) rebuilds the live index after its
 *     commit from the records (docscan.c): nothing of that record is trusted.
 *  4. Only the writer thread calls these; it alone changes the index, under
 *     the index's write lock (writer.c, invariant 1).
 */
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

/* ---- the set of document numbers deleted in the batch (invariant 1) */

static simhash_err dels_add(simhash_store *st, uint64_t docno)
{
	uint64_t *t;
	simhash_err e;

	if ((st->n_dels + 1) * 10 > st->dels_cap * 7) {
		size_t cap = st->dels_cap ? st->dels_cap * 2 : 1024;
		uint64_t *old = st->dels.p;
		size_t old_cap = st->dels_cap;
		sh_buf nb = { NULL, 0 };

		if ((e = sh_buf_reserve(&nb, cap * 8)) != SIMHASH_OK)
			return e;
		memset(nb.p, 0, cap * 8);
		t = nb.p;
		for (size_t i = 0; i < old_cap; i++) {
			if (!old[i])
				continue;
			size_t j = sh_mix64(old[i]) & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = old[i];
		}
		sh_buf_free(&st->dels);
		st->dels = nb;
		st->dels_cap = cap;
	}
	t = st->dels.p;
	size_t j = sh_mix64(docno + 1) & (st->dels_cap - 1);
	while (t[j] && t[j] != docno + 1)
		j = (j + 1) & (st->dels_cap - 1);
	if (!t[j]) {
		t[j] = docno + 1;
		st->n_dels++;
	}
	return SIMHASH_OK;
}

int sh_batch_deleted(const simhash_store *st, uint64_t docno)
{
	const uint64_t *t = st->dels.p;

	if (!st->n_dels)
		return 0;
	size_t j = sh_mix64(docno + 1) & (st->dels_cap - 1);
	while (t[j]) {
		if (t[j] == docno + 1)
			return 1;
		j = (j + 1) & (st->dels_cap - 1);
	}
	return 0;
}

simhash_err sh_batch_note(simhash_store *st, uint64_t docno, const simhash_fp *fp, int del)
{
	struct sh_pend *p;
	simhash_err e;

	if ((e = sh_buf_reserve(&st->pend, (st->n_pend + 1) * sizeof *p)) != SIMHASH_OK)
		return e;
	p = (struct sh_pend *)st->pend.p + st->n_pend++;
	p->docno = docno;
	p->fp = *fp;
	p->del = del;
	return del ? dels_add(st, docno) : SIMHASH_OK;
}

simhash_err sh_batch_near(const simhash_store *st, const simhash_fp *fp, unsigned max_dist,
			  sh_buf *hits, size_t *n)
{
	const struct sh_pend *p = st->pend.p;
	simhash_err e;

	for (size_t i = 0; i < st->n_pend; i++) {
		unsigned d = simhash_hamming(&p[i].fp, fp);

		if (!p[i].del && d <= max_dist &&
		    (e = sh_hits_push(hits, n, p[i].docno, d)) != SIMHASH_OK)
			return e;
	}
	return SIMHASH_OK;
}

void sh_batch_reset(simhash_store *st)
{
	st->n_pend = 0;
	st->rebuild_idx = 0;
	if (st->n_dels)
		memset(st->dels.p, 0, st->dels_cap * 8);
	st->n_dels = 0;
}

/* The live index rebuilt from the last commit, after a batch deleted a
 * record that failed its checksum (writes.c, del_damaged; invariant 3):
 * the index may hold that document under a fingerprint no record gives any
 * more. */
static simhash_err rebuild_live(simhash_store *st)
{
	simhash_err e;
	MDB_txn *r;
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &r)) != 0)
		return sh_mdb_err(st, rc, "rebuild");
	e = sh_index_replace(st, r);
	mdb_txn_abort(r);
	return e;
}

/* Applies the committed batch to the index (invariant 4): the additions in
 * one bulk build (one new segment, not one per document), then the
 * deletions (document numbers are never reused, so a deletion in the batch
 * always follows its addition). An update that fails (out of memory) leaves
 * the index short of documents: the handle then refuses to save it. */
simhash_err sh_batch_apply(simhash_store *st)
{
	const struct sh_pend *p = st->pend.p;
	size_t words = st->bits == 128 ? 2 : 1, n_add = 0;
	simhash_err e = SIMHASH_OK;
	uint64_t *fps, *docnos;

	for (size_t i = 0; i < st->n_pend; i++)
		n_add += !p[i].del;
	fps = malloc((n_add ? n_add : 1) * words * sizeof *fps);
	docnos = malloc((n_add ? n_add : 1) * sizeof *docnos);
	pthread_rwlock_wrlock(&st->idx_lock);
	if (!fps || !docnos) {
		e = SIMHASH_ENOMEM;
	} else {
		size_t j = 0;

		for (size_t i = 0; i < st->n_pend; i++) {
			if (p[i].del)
				continue;
			docnos[j] = p[i].docno;
			fps[j * words] = p[i].fp.w[0];
			if (words == 2)
				fps[j * 2 + 1] = p[i].fp.w[1];
			j++;
		}
		e = sh_memidx_build(st->idx, fps, docnos, n_add);
	}
	for (size_t i = 0; i < st->n_pend; i++)
		if (p[i].del)
			sh_memidx_delete(st->idx, p[i].docno, &p[i].fp);
	pthread_rwlock_unlock(&st->idx_lock);
	free(fps);
	free(docnos);
	if (e == SIMHASH_OK && st->rebuild_idx)
		e = rebuild_live(st);
	if (e != SIMHASH_OK) {
		st->idx_broken = 1;
		sh_store_seterr(st, "out of memory updating the index: reopen the store");
	}
	return e;
}

/* Appends the batch's deletions to "dlog" and writes "next" and "dseq"
 * when they moved (invariant 2). */
simhash_err sh_batch_log(simhash_store *st, MDB_txn *txn, uint64_t next0)
{
	const struct sh_pend *p = st->pend.p;
	uint64_t dseq0 = st->next_dseq;
	uint8_t key[8], rec[24];
	MDB_val k = { 8, key };
	simhash_err e;

	for (size_t i = 0; i < st->n_pend; i++) {
		if (!p[i].del)
			continue;
		sh_put_be64(key, st->next_dseq);
		sh_put_le64(rec, p[i].docno);
		sh_put_le64(rec + 8, p[i].fp.w[0]);
		sh_put_le64(rec + 16, st->bits == 128 ? p[i].fp.w[1] : 0);
		if ((e = sh_rec_put(st, txn, st->dbi_dlog, SH_T_DLOG, &k, rec, 24, MDB_APPEND)) !=
		    SIMHASH_OK)
			return e;
		st->next_dseq++;
	}
	if (st->next_dseq != dseq0) {
		sh_put_le64(key, st->next_dseq);
		if ((e = sh_meta_put(st, txn, "dseq", key, 8)) != SIMHASH_OK)
			return e;
	}
	if (st->next_docno != next0) {
		sh_put_le64(key, st->next_docno);
		if ((e = sh_meta_put(st, txn, "next", key, 8)) != SIMHASH_OK)
			return e;
	}
	return SIMHASH_OK;
}
