/* writer.c - group commit: one writer thread per handle runs every write.
 *
 * Callers queue a request (on their own stack) and wait. The writer takes
 * everything queued, runs it in order in ONE LMDB write transaction, commits
 * (one fsync), applies the batch to the in-memory index, and only then marks
 * the requests done and wakes their callers. So a call returns after its
 * write is durable, and at N concurrent writers one fsync serves up to N
 * requests: while a commit syncs, the next batch queues up.
 *
 * Invariants:
 *  1. Only the writer thread changes the index and next_docno; it takes the
 *     index's write lock to change it, and reads it without a lock.
 *  2. During a batch, pend lists the batch's index changes in order (adds and
 *     deletions), and dels holds every document number deleted in the batch,
 *     so a check in the batch sees index + added - deleted: exactly what the
 *     transaction holds.
 *  3. A batch whose commit fails changes nothing: the index is left as it
 *     was and every request of the batch gets the error.
 *  4. A request is acknowledged only once its commit is durable. The
 *     environment runs with MDB_NOMETASYNC: a commit fdatasyncs its data
 *     pages, then writes its meta page without a sync (a crash before that
 *     page reaches the disk loses only that commit, never the database). The
 *     next commit's fdatasync flushes that meta page too, so the writer
 *     acknowledges a batch after the next commit that wrote, or after an
 *     mdb_env_sync when nothing more is queued: one flush per commit under
 *     load instead of LMDB's two. A committed batch is visible to readers
 *     from its commit, before its acknowledgement.
 *  5. Every deletion of a batch (delete, replace, expire) is appended to
 *     "dlog" under the next deletion number in the batch's transaction, and
 *     "dseq" follows, so an open after a crash replays exactly the deletions
 *     since its checkpoint (checkpoint.c).
 *  6. A batch that deletes a record failing its checksum (by its id: a
 *     delete or a replacing put) rebuilds the live index after its commit,
 *     from the records (del_damaged): nothing of that record is trusted.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <semaphore.h>
#include "store_int.h"

#define MAX_BATCH 4096 /* requests in one transaction */

/* ---- the set of document numbers deleted in the batch (invariant 2) */

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

static int dels_has(const simhash_store *st, uint64_t docno)
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

static simhash_err pend_push(simhash_store *st, uint64_t docno, const simhash_fp *fp, int del)
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

static void batch_reset(simhash_store *st)
{
	st->n_pend = 0;
	st->rebuild_idx = 0;
	if (st->n_dels)
		memset(st->dels.p, 0, st->dels_cap * 8);
	st->n_dels = 0;
}

/* ---- operations inside the transaction */

/* A docs record that fails its checksum, deleted by the id that names it
 * (delete, or a put replacing it): the record and that id go. Its
 * fingerprint cannot be trusted, so the batch rebuilds the index after its
 * commit (rebuild_idx), and the deletion log gets the bytes as they are: a
 * replay that cannot match them finds the counts differ and rebuilds too
 * (checkpoint.c, invariant 1). Nothing of the record is ever returned. */
static simhash_err del_damaged(simhash_store *st, MDB_txn *txn, MDB_val *k, const MDB_val *v,
			       uint64_t docno, const char *id, size_t id_len)
{
	simhash_fp fp = { { 0, 0 }, st->bits };
	MDB_val ik = { id_len, (void *)id };
	int rc;

	if (v->mv_size >= 16) {
		fp.w[0] = sh_get_le64(v->mv_data);
		fp.w[1] = st->bits == 128 ? sh_get_le64((const uint8_t *)v->mv_data + 8) : 0;
	}
	if (id_len && (rc = mdb_del(txn, st->dbi_ids, &ik, NULL)) != 0 && rc != MDB_NOTFOUND)
		return sh_mdb_err(st, rc, "delete");
	if ((rc = mdb_del(txn, st->dbi_docs, k, NULL)) != 0)
		return sh_mdb_err(st, rc, "delete");
	st->rebuild_idx = 1;
	return pend_push(st, docno, &fp, 1);
}

/* Deletes document docno, which id names (its docs record and, if del_id,
 * its ids entry). */
static simhash_err del_docno(simhash_store *st, MDB_txn *txn, uint64_t docno, const char *id,
			     size_t id_len, int del_id)
{
	uint8_t key[8];
	MDB_val k = { 8, key }, v;
	struct sh_doc d;
	const char *why;
	int rc;

	sh_put_be64(key, docno);
	if ((rc = mdb_get(txn, st->dbi_docs, &k, &v)) != 0)
		return rc == MDB_NOTFOUND ? SIMHASH_OK : sh_mdb_err(st, rc, "delete");
	if (sh_doc_decode(st, &k, &v, &d, &why) != SIMHASH_OK)
		return del_damaged(st, txn, &k, &v, docno, id, del_id ? id_len : 0);
	if (del_id) {
		MDB_val ik = { d.id_len, (void *)d.id };
		rc = mdb_del(txn, st->dbi_ids, &ik, NULL);
		if (rc && rc != MDB_NOTFOUND)
			return sh_mdb_err(st, rc, "delete");
	}
	if ((rc = mdb_del(txn, st->dbi_docs, &k, NULL)) != 0)
		return sh_mdb_err(st, rc, "delete");
	return pend_push(st, docno, &d.fp, 1);
}

/* The document number of id in the transaction, or UINT64_MAX. */
static simhash_err find_id(simhash_store *st, MDB_txn *txn, const char *id, size_t len,
			   uint64_t *docno)
{
	MDB_val k = { len, (void *)id }, v;
	int rc = mdb_get(txn, st->dbi_ids, &k, &v);

	*docno = UINT64_MAX;
	if (rc == MDB_NOTFOUND)
		return SIMHASH_OK;
	if (rc)
		return sh_mdb_err(st, rc, "read ids");
	return sh_ids_decode(st, &k, &v, docno);
}

static simhash_err put_one(simhash_store *st, MDB_txn *txn, const simhash_store_doc *doc)
{
	size_t len = SH_DOC_HEAD + doc->id_len + doc->meta_len;
	uint8_t key[8], *p;
	MDB_val k = { 8, key }, v = { len + SH_SUM_LEN, NULL }, ik = { doc->id_len, (void *)doc->id };
	uint64_t old, docno = st->next_docno;
	simhash_err e;
	int rc;

	if ((e = find_id(st, txn, doc->id, doc->id_len, &old)) != SIMHASH_OK)
		return e;
	if (old != UINT64_MAX &&
	    (e = del_docno(st, txn, old, doc->id, doc->id_len, 0)) != SIMHASH_OK)
		return e;
	sh_put_be64(key, docno);
	if ((rc = mdb_put(txn, st->dbi_docs, &k, &v, MDB_APPEND | MDB_RESERVE)) != 0)
		return sh_mdb_err(st, rc, "put");
	p = v.mv_data;
	sh_put_le64(p, doc->fp.w[0]);
	sh_put_le64(p + 8, st->bits == 128 ? doc->fp.w[1] : 0);
	sh_put_le64(p + 16, (uint64_t)(doc->time ? doc->time : (int64_t)time(NULL)));
	sh_put_le32(p + 24, (uint32_t)doc->id_len);
	sh_put_le32(p + 28, (uint32_t)doc->meta_len);
	memcpy(p + SH_DOC_HEAD, doc->id, doc->id_len);
	if (doc->meta_len)
		memcpy(p + SH_DOC_HEAD + doc->id_len, doc->meta, doc->meta_len);
	sh_rec_seal(SH_T_DOCS, key, 8, p, len);
	if ((e = sh_rec_put(st, txn, st->dbi_ids, SH_T_IDS, &ik, key, 8, 0)) != SIMHASH_OK)
		return e;
	st->next_docno++;
	return pend_push(st, docno, &doc->fp, 0);
}

/* The near-duplicates of doc as the transaction holds them (invariant 2). */
static simhash_err check(simhash_store *st, MDB_txn *txn, struct sh_wreq *q)
{
	const simhash_store_doc *doc = q->docs;
	const struct sh_pend *p = st->pend.p;
	size_t n = 0, w = 0;
	uint64_t self;
	simhash_err e;
	sh_hit *h;

	if ((e = find_id(st, txn, doc->id, doc->id_len, &self)) != SIMHASH_OK)
		return e;
	if (q->max_dist > sh_memidx_max_dist(st->idx)) {
		/* the transaction itself holds the batch's changes */
		if ((e = sh_scan_docs(st, txn, &doc->fp, q->max_dist, &st->hits, &n)) != SIMHASH_OK)
			return e;
		goto filter;
	}
	if ((e = sh_memidx_query(st->idx, &doc->fp, q->max_dist, &st->matches, &st->hits, &n)) !=
	    SIMHASH_OK)
		return e;
	for (size_t i = 0; i < st->n_pend; i++) {
		unsigned d = simhash_hamming(&p[i].fp, &doc->fp);

		if (!p[i].del && d <= q->max_dist &&
		    (e = sh_hits_push(&st->hits, &n, p[i].docno, d)) != SIMHASH_OK)
			return e;
	}
filter:
	h = st->hits.p;
	for (size_t i = 0; i < n; i++)
		if (h[i].docno != self && !dels_has(st, h[i].docno))
			h[w++] = h[i];
	sh_hits_sort(h, &w, q->max_results);
	for (size_t i = 0; i < w; i++) {
		uint8_t key[8];
		MDB_val k = { 8, key }, v;
		struct sh_doc d;
		const char *why;
		int rc;

		sh_put_be64(key, h[i].docno);
		if ((rc = mdb_get(txn, st->dbi_docs, &k, &v)) != 0)
			return sh_mdb_err(st, rc, "check");
		if (sh_doc_decode(st, &k, &v, &d, &why) != SIMHASH_OK)
			return sh_doc_bad(st, h[i].docno, NULL, 0, why);
		if ((e = sh_results_add(q->r, &d, h[i].dist)) != SIMHASH_OK)
			return e;
	}
	sh_results_finish(q->r);
	q->added = !(q->if_unique && w > 0);
	return q->added ? put_one(st, txn, doc) : SIMHASH_OK;
}

static simhash_err expire(simhash_store *st, MDB_txn *txn, struct sh_wreq *q)
{
	MDB_cursor *cur;
	MDB_val k, v;
	simhash_err e = SIMHASH_OK;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->dbi_docs, &cur)) != 0)
		return sh_mdb_err(st, rc, "expire");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		struct sh_doc d;
		const char *why;
		MDB_val ik;

		if (sh_doc_decode(st, &k, &v, &d, &why) != SIMHASH_OK) {
			e = sh_doc_bad(st, k.mv_size == 8 ? sh_get_be64(k.mv_data) : 0, NULL, 0, why);
			break;
		}
		if (d.time >= q->before)
			continue;
		ik.mv_size = d.id_len;
		ik.mv_data = (void *)d.id;
		if ((e = pend_push(st, sh_get_be64(k.mv_data), &d.fp, 1)) != SIMHASH_OK)
			break;
		rc = mdb_del(txn, st->dbi_ids, &ik, NULL);
		if ((rc && rc != MDB_NOTFOUND) || (rc = mdb_cursor_del(cur, 0)) != 0) {
			e = sh_mdb_err(st, rc, "expire");
			break;
		}
		q->n_deleted++;
	}
	if (e == SIMHASH_OK && rc && rc != MDB_NOTFOUND)
		e = sh_mdb_err(st, rc, "expire");
	mdb_cursor_close(cur);
	return e;
}

static simhash_err run_one(simhash_store *st, MDB_txn *txn, struct sh_wreq *q)
{
	uint64_t docno;
	simhash_err e;

	switch (q->op) {
	case SH_W_PUT:
		for (size_t i = 0; i < q->n_docs; i++)
			if ((e = put_one(st, txn, &q->docs[i])) != SIMHASH_OK)
				return e;
		return SIMHASH_OK;
	case SH_W_CHECK_PUT:
		return check(st, txn, q);
	case SH_W_DELETE:
		if ((e = find_id(st, txn, q->id, q->id_len, &docno)) != SIMHASH_OK)
			return e;
		q->deleted = docno != UINT64_MAX;
		return q->deleted ? del_docno(st, txn, docno, q->id, q->id_len, 1) : SIMHASH_OK;
	case SH_W_EXPIRE:
		return expire(st, txn, q);
	case SH_W_VERIFY: /* alone in its batch: the index matches txn */
		return sh_verify_txn(st, txn, q->vfn, q->varg, &q->n_problems);
	case SH_W_CKPT:
		return sh_ckpt_install(st, txn, q->stamp);
	}
	return SIMHASH_EINVAL;
}

/* The live index rebuilt from the last commit, after a batch deleted a
 * record that failed its checksum (del_damaged): the index may hold that
 * document under a fingerprint no record gives any more. */
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

/* Applies the committed batch to the index (invariant 1): the additions in
 * one bulk build (one new segment, not one per document), then the
 * deletions (document numbers are never reused, so a deletion in the batch
 * always follows its addition). An update that fails (out of memory) leaves
 * the index short of documents: the handle then refuses to save it. */
static simhash_err apply(simhash_store *st)
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
 * when they moved (invariant 5). */
static simhash_err log_batch(simhash_store *st, MDB_txn *txn, uint64_t next0)
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

/* Runs one batch in one transaction; sets each request's err. Returns the
 * number of writes it committed (checkpoints and verifies are not writes);
 * *committed: whether the transaction committed. */
static size_t run_batch(simhash_store *st, struct sh_wreq *batch, int *committed)
{
	size_t n_writes = 0;
	uint64_t next0 = st->next_docno, dseq0 = st->next_dseq;
	simhash_err e = SIMHASH_OK;
	struct sh_wreq *q;
	MDB_txn *txn;
	int rc;

	batch_reset(st);
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0) {
		e = sh_mdb_err(st, rc, "begin");
		goto out;
	}
	for (q = batch; q && e == SIMHASH_OK; q = q->next)
		e = run_one(st, txn, q);
	if (e == SIMHASH_OK)
		e = log_batch(st, txn, next0);
	if (e != SIMHASH_OK) {
		mdb_txn_abort(txn);
	} else if ((rc = mdb_txn_commit(txn)) != 0) {
		e = sh_mdb_err(st, rc, "commit");
	} else {
		*committed = 1;
		e = apply(st);
		batch_reset(st);
		next0 = st->next_docno;
		dseq0 = st->next_dseq;
		for (q = batch; q; q = q->next) {
			n_writes += q->op != SH_W_CKPT && q->op != SH_W_VERIFY;
			if (q->op != SH_W_CKPT)
				continue;
			st->ck = *q->stamp;
			pthread_mutex_lock(&st->mu);
			st->n_checkpoints++;
			pthread_mutex_unlock(&st->mu);
		}
	}
out:
	st->next_docno = next0; /* invariant 3 */
	st->next_dseq = dseq0;
	for (q = batch; q; q = q->next)
		q->err = e;
	return n_writes;
}

/* Acknowledges the requests of batch (a list): each caller wakes on its own
 * semaphore (no broadcast: only the callers done wake, and none of them
 * takes the queue's lock). The request may be gone once posted. */
static void ack(struct sh_wreq *batch, simhash_err sync_err)
{
	while (batch) {
		struct sh_wreq *next = batch->next;

		if (batch->err == SIMHASH_OK)
			batch->err = sync_err;
		sem_post(&batch->sem);
		batch = next;
	}
}

/* Makes the last commit durable (its meta page, invariant 4). */
static simhash_err sync_env(simhash_store *st)
{
	int rc = mdb_env_sync(st->env, 1);

	return rc ? sh_mdb_err(st, rc, "sync") : SIMHASH_OK;
}

/* The histogram bucket of a commit of n requests (simhash.h). */
static unsigned batch_bucket(size_t n)
{
	unsigned b = 0;

	while (b + 1 < SIMHASH_STORE_BATCH_BUCKETS && ((size_t)1 << b) < n)
		b++;
	return b;
}

static void *writer_main(void *arg)
{
	simhash_store *st = arg;
	struct sh_wreq *unsynced = NULL; /* committed, acknowledged at the next sync */

	/* an open that found no usable checkpoint takes one now */
	sh_ckpt_maybe_start(st);
	pthread_mutex_lock(&st->mu);
	for (;;) {
		struct sh_wreq *batch, *last;
		size_t n = 1, n_writes;
		int committed = 0;
		MDB_envinfo info;
		size_t txn0;

		while (!st->q_head && !st->stop && !unsynced)
			pthread_cond_wait(&st->work_cv, &st->mu);
		if (!st->q_head) {
			pthread_mutex_unlock(&st->mu);
			if (unsynced) { /* nothing queued: sync now (invariant 4) */
				ack(unsynced, sync_env(st));
				unsynced = NULL;
			}
			pthread_mutex_lock(&st->mu);
			if (st->stop && !st->q_head)
				break;
			continue;
		}
		batch = last = st->q_head;
		/* a verify runs alone: the index then matches the transaction */
		while (last->next && n < MAX_BATCH && last->op != SH_W_VERIFY &&
		       last->next->op != SH_W_VERIFY) {
			last = last->next;
			n++;
		}
		st->q_head = last->next;
		if (!st->q_head)
			st->q_tail = NULL;
		last->next = NULL;
		pthread_mutex_unlock(&st->mu);

		mdb_env_info(st->env, &info);
		txn0 = info.me_last_txnid;
		n_writes = run_batch(st, batch, &committed);
		/* count before any acknowledgement: a caller who was answered
		 * reads counters that include its request */
		pthread_mutex_lock(&st->mu);
		/* a commit's batch is the writes it carried: a checkpoint's
		 * install or a verify is none, a failed batch no commit */
		if (committed) {
			st->n_commits++;
			st->n_committed += n_writes;
			st->batch_hist[batch_bucket(n_writes)]++;
			if (n_writes > st->max_batch)
				st->max_batch = n_writes;
		}
		st->ck_delta = sh_ckpt_delta(st);
		pthread_mutex_unlock(&st->mu);
		mdb_env_info(st->env, &info);
		if (unsynced) {
			/* a commit that wrote synced the data file, and with it the
			 * meta page of the commit before; else sync it now */
			ack(unsynced, info.me_last_txnid != txn0 ? SIMHASH_OK : sync_env(st));
			unsynced = NULL;
		}
		if (info.me_last_txnid != txn0)
			unsynced = batch;
		else
			ack(batch, SIMHASH_OK); /* wrote nothing (or failed): nothing to sync */
		sh_ckpt_maybe_start(st);

		pthread_mutex_lock(&st->mu);
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

simhash_err sh_writer_start(simhash_store *st)
{
	int rc;

	/* a commit syncs its data pages and writes its meta page unsynced; the
	 * writer syncs that before it acknowledges (invariant 4) */
	if ((rc = mdb_env_set_flags(st->env, MDB_NOMETASYNC, 1)) != 0)
		return sh_mdb_err(st, rc, "set flags");
	if (pthread_create(&st->writer, NULL, writer_main, st) != 0) {
		sh_store_seterr(st, "cannot start the writer thread");
		return SIMHASH_ENOMEM;
	}
	st->writer_started = 1;
	return SIMHASH_OK;
}

void sh_writer_stop(simhash_store *st)
{
	pthread_mutex_lock(&st->mu);
	st->stop = 1;
	pthread_cond_signal(&st->work_cv);
	pthread_mutex_unlock(&st->mu);
	pthread_join(st->writer, NULL);
	st->writer_started = 0;
	mdb_env_set_flags(st->env, MDB_NOMETASYNC, 0);
}

simhash_err sh_writer_submit(simhash_store *st, struct sh_wreq *q)
{
	simhash_err e;

	if (st->flags & SIMHASH_STORE_RDONLY) {
		sh_store_seterr(st, "the store is open read-only");
		return SIMHASH_EINVAL;
	}
	q->next = NULL;
	q->err = SIMHASH_OK;
	if (sem_init(&q->sem, 0, 0) != 0) {
		sh_store_seterr(st, "cannot make a semaphore");
		return SIMHASH_ENOMEM;
	}
	pthread_mutex_lock(&st->mu);
	if (st->q_tail)
		st->q_tail->next = q;
	else
		st->q_head = q;
	st->q_tail = q;
	pthread_cond_signal(&st->work_cv);
	pthread_mutex_unlock(&st->mu);
	while (sem_wait(&q->sem) != 0)
		; /* EINTR */
	e = q->err;
	sem_destroy(&q->sem);
	return e;
}

/* ---- the public writes */

simhash_err simhash_store_put(simhash_store *st, const simhash_store_doc *doc)
{
	return simhash_store_put_many(st, doc, 1);
}

simhash_err simhash_store_put_many(simhash_store *st, const simhash_store_doc *docs, size_t n)
{
	struct sh_wreq q = { .op = SH_W_PUT, .docs = docs, .n_docs = n };
	simhash_err e;

	if (!st || (n && !docs))
		return SIMHASH_EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((e = sh_doc_check(st, &docs[i])) != SIMHASH_OK)
			return e;
	return n ? sh_writer_submit(st, &q) : SIMHASH_OK;
}

simhash_err simhash_store_check_and_put(simhash_store *st, const simhash_store_doc *doc,
					unsigned max_dist, size_t max_results, int if_unique,
					simhash_store_results *r, int *added)
{
	struct sh_wreq q = { .op = SH_W_CHECK_PUT, .docs = doc, .n_docs = 1,
			     .max_dist = max_dist, .max_results = max_results,
			     .if_unique = if_unique, .r = r };
	simhash_err e;

	if (added)
		*added = 0;
	if (!st || !r)
		return SIMHASH_EINVAL;
	if ((e = sh_doc_check(st, doc)) != SIMHASH_OK)
		return e;
	r->n = 0;
	r->bytes_len = 0;
	e = sh_writer_submit(st, &q);
	if (e != SIMHASH_OK)
		r->n = 0;
	else if (added)
		*added = q.added;
	return e;
}

simhash_err simhash_store_delete(simhash_store *st, const char *id, size_t id_len, int *deleted)
{
	struct sh_wreq q = { .op = SH_W_DELETE, .id = id, .id_len = id_len };
	simhash_err e;

	if (deleted)
		*deleted = 0;
	if (!st || !id || !id_len || id_len > SIMHASH_STORE_ID_MAX)
		return SIMHASH_EINVAL;
	e = sh_writer_submit(st, &q);
	if (e == SIMHASH_OK && deleted)
		*deleted = q.deleted;
	return e;
}

simhash_err simhash_store_expire(simhash_store *st, int64_t before, size_t *n_deleted)
{
	struct sh_wreq q = { .op = SH_W_EXPIRE, .before = before };
	simhash_err e;

	if (n_deleted)
		*n_deleted = 0;
	if (!st)
		return SIMHASH_EINVAL;
	e = sh_writer_submit(st, &q);
	if (e == SIMHASH_OK && n_deleted)
		*n_deleted = q.n_deleted;
	return e;
}
