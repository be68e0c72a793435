/* writes.c - the store's writes: put, put_many, check_and_put, delete and
 * expire. Each is its own request (a struct whose first member is the
 * writer's struct sh_wreq) with its own run function, which the writer
 * thread calls inside the batch's transaction (writer.c); the public
 * function checks its arguments in the caller's thread, submits the request
 * and waits for its acknowledgement.
 *
 * A new write is one more request here: its struct, its run function, its
 * struct sh_wop, its public function. The writer does not change.
 *
 * Invariants:
 *  1. A run function changes the store only through the batch's
 *     transaction and notes every document it adds or deletes in the batch
 *     (sh_batch_note, batch.c), which logs the deletions and updates the index
 *     after the commit.
 *  2. check_and_put sees the store as the transaction holds it: the index
 *     plus the batch's additions, less its deletions (batch.c, invariant 1),
 *     or a scan of the transaction beyond the index's reach.
 *  3. A docs record that fails its checksum is never read for a value: a
 *     write that deletes it (del_damaged) drops it by the id that names it
 *     and has the batch rebuild the index from the records (batch.c,
 *     invariant 3).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "store_int.h"

/* ---- changes inside the transaction, shared by the writes */

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
	return sh_batch_note(st, docno, &fp, 1);
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
	return sh_batch_note(st, docno, &d.fp, 1);
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
	return sh_batch_note(st, docno, &doc->fp, 0);
}

/* ---- put and put_many */

/* simhash_store_put_many: docs[0..n_docs), in order, each replacing the
 * document of its id if there is one. */
struct put_req {
	struct sh_wreq q;
	const simhash_store_doc *docs;
	size_t n_docs;
};

static simhash_err put_run(simhash_store *st, MDB_txn *txn, struct sh_wreq *wq)
{
	const struct put_req *q = (const struct put_req *)wq;
	simhash_err e;

	for (size_t i = 0; i < q->n_docs; i++)
		if ((e = put_one(st, txn, &q->docs[i])) != SIMHASH_OK)
			return e;
	return SIMHASH_OK;
}

static const struct sh_wop put_op = { .run = put_run, .is_write = 1 };

simhash_err simhash_store_put(simhash_store *st, const simhash_store_doc *doc, simhash_error *err)
{
	return simhash_store_put_many(st, doc, 1, err);
}

static simhash_err store_put_many(simhash_store *st, const simhash_store_doc *docs, size_t n)
{
	struct put_req q = { .q.op = &put_op, .docs = docs, .n_docs = n };
	simhash_err e;

	if (!st || (n && !docs))
		return SIMHASH_EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((e = sh_doc_check(st, &docs[i])) != SIMHASH_OK)
			return e;
	return n ? sh_writer_submit(st, &q.q) : SIMHASH_OK;
}

/* ---- check_and_put */

/* simhash_store_check_and_put: doc's near-duplicates into r, then doc added
 * unless if_unique and it has one (added: whether it was). */
struct check_req {
	struct sh_wreq q;
	const simhash_store_doc *doc;
	unsigned max_dist;
	size_t max_results;
	int if_unique;
	simhash_store_results *r;
	int added;
};

/* The near-duplicates of doc as the transaction holds them (invariant 2). */
static simhash_err check_run(simhash_store *st, MDB_txn *txn, struct sh_wreq *wq)
{
	struct check_req *q = (struct check_req *)wq;
	const simhash_store_doc *doc = q->doc;
	size_t n = 0, w = 0;
	uint64_t self;
	simhash_err e;
	sh_hit *h;

	if ((e = find_id(st, txn, doc->id, doc->id_len, &self)) != SIMHASH_OK)
		return e;
	if (q->max_dist > sh_memidx_max_dist(st->idx)) {
		/* the transaction itself holds the batch's changes */
		e = sh_scan_docs(st, txn, &doc->fp, q->max_dist, &st->hits, &n);
	} else {
		e = sh_memidx_query(st->idx, &doc->fp, q->max_dist, &st->matches, &st->hits, &n);
		if (e == SIMHASH_OK)
			e = sh_batch_near(st, &doc->fp, q->max_dist, &st->hits, &n);
	}
	if (e != SIMHASH_OK)
		return e;
	h = st->hits.p;
	for (size_t i = 0; i < n; i++)
		if (h[i].docno != self && !sh_batch_deleted(st, h[i].docno))
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

static const struct sh_wop check_op = { .run = check_run, .is_write = 1 };

static simhash_err store_check_and_put(simhash_store *st, const simhash_store_doc *doc,
				       unsigned max_dist, size_t max_results, int if_unique,
				       simhash_store_results *r, int *added)
{
	struct check_req q = { .q.op = &check_op, .doc = doc, .max_dist = max_dist,
			       .max_results = max_results, .if_unique = if_unique, .r = r };
	simhash_err e;

	if (added)
		*added = 0;
	if (!st || !r)
		return SIMHASH_EINVAL;
	if ((e = sh_doc_check(st, doc)) != SIMHASH_OK)
		return e;
	sh_results_reset(r);
	e = sh_writer_submit(st, &q.q);
	if (e != SIMHASH_OK)
		r->n = 0;
	else if (added)
		*added = q.added;
	return e;
}

/* ---- delete */

/* simhash_store_delete: the document of id, if there is one (deleted:
 * whether there was). */
struct delete_req {
	struct sh_wreq q;
	const char *id;
	size_t id_len;
	int deleted;
};

static simhash_err delete_run(simhash_store *st, MDB_txn *txn, struct sh_wreq *wq)
{
	struct delete_req *q = (struct delete_req *)wq;
	uint64_t docno;
	simhash_err e;

	if ((e = find_id(st, txn, q->id, q->id_len, &docno)) != SIMHASH_OK)
		return e;
	q->deleted = docno != UINT64_MAX;
	return q->deleted ? del_docno(st, txn, docno, q->id, q->id_len, 1) : SIMHASH_OK;
}

static const struct sh_wop delete_op = { .run = delete_run, .is_write = 1 };

static simhash_err store_delete(simhash_store *st, const char *id, size_t id_len, int *deleted)
{
	struct delete_req q = { .q.op = &delete_op, .id = id, .id_len = id_len };
	simhash_err e;

	if (deleted)
		*deleted = 0;
	if (!st || !id || !id_len || id_len > SIMHASH_STORE_ID_MAX)
		return SIMHASH_EINVAL;
	e = sh_writer_submit(st, &q.q);
	if (e == SIMHASH_OK && deleted)
		*deleted = q.deleted;
	return e;
}

/* ---- expire */

/* simhash_store_expire: every document whose time is before `before`
 * (n_deleted: how many). */
struct expire_req {
	struct sh_wreq q;
	int64_t before;
	size_t n_deleted;
};

static simhash_err expire_one(simhash_store *st, MDB_txn *txn, MDB_cursor *cur, MDB_val *k,
			      MDB_val *v, void *arg)
{
	struct expire_req *q = arg;
	struct sh_doc d;
	const char *why;
	MDB_val ik;
	simhash_err e;
	int rc;

	if (sh_doc_decode(st, k, v, &d, &why) != SIMHASH_OK)
		return sh_doc_bad(st, k->mv_size == 8 ? sh_get_be64(k->mv_data) : 0, NULL, 0, why);
	if (d.time >= q->before)
		return SIMHASH_OK;
	ik.mv_size = d.id_len;
	ik.mv_data = (void *)d.id;
	if ((e = sh_batch_note(st, sh_get_be64(k->mv_data), &d.fp, 1)) != SIMHASH_OK)
		return e;
	rc = mdb_del(txn, st->dbi_ids, &ik, NULL);
	if ((rc && rc != MDB_NOTFOUND) || (rc = mdb_cursor_del(cur, 0)) != 0)
		return sh_mdb_err(st, rc, "expire");
	q->n_deleted++;
	return SIMHASH_OK;
}

static simhash_err expire_run(simhash_store *st, MDB_txn *txn, struct sh_wreq *wq)
{
	return sh_docs_walk(st, txn, "expire", expire_one, wq);
}

static const struct sh_wop expire_op = { .run = expire_run, .is_write = 1 };

static simhash_err store_expire(simhash_store *st, int64_t before, size_t *n_deleted)
{
	struct expire_req q = { .q.op = &expire_op, .before = before };
	simhash_err e;

	if (n_deleted)
		*n_deleted = 0;
	if (!st)
		return SIMHASH_EINVAL;
	e = sh_writer_submit(st, &q.q);
	if (e == SIMHASH_OK && n_deleted)
		*n_deleted = q.n_deleted;
	return e;
}

simhash_err simhash_store_put_many(simhash_store *st, const simhash_store_doc *docs, size_t n,
				   simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_put_many(st, docs, n));
}

simhash_err simhash_store_check_and_put(simhash_store *st, const simhash_store_doc *doc,
					unsigned max_dist, size_t max_results, int if_unique,
					simhash_store_results *r, int *added, simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err,
			   store_check_and_put(st, doc, max_dist, max_results, if_unique, r, added));
}

simhash_err simhash_store_delete(simhash_store *st, const char *id, size_t id_len, int *deleted,
				 simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_delete(st, id, id_len, deleted));
}

simhash_err simhash_store_expire(simhash_store *st, int64_t before, size_t *n_deleted,
				 simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_expire(st, before, n_deleted));
}
