/* read.c - the reads: get, query, each and stats. They run in the caller's
 * thread, on their own LMDB read transaction, beside the one writer thread
 * (writer.c) that commits batches.
 *
 * Workload: a service answering queries on many threads while writes are
 * group-committed. Reads never take the queue's lock; a query holds the
 * index's read lock only while it searches the index, then reads the
 * documents it names from its snapshot.
 *
 * Invariants:
 *  1. A result is read through its record's checksum (record.c): a record
 *     that fails is SIMHASH_ECORRUPT naming it, never a value.
 *  2. A query's hits come from the index (or the scan beyond its reach) and
 *     are kept only when the document's record in the read snapshot has
 *     exactly the distance the index gave: a document deleted since the
 *     index was read is left out, one whose record disagrees is an error.
 *  3. Reset read transactions are kept for reuse (at most SH_MAX_READERS / 2
 *     of LMDB's reader slots), guarded by rtxn_mu; close aborts them.
 */
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

/* A read transaction on the latest commit: a kept one renewed, or a new one. */
static int rtxn_get(simhash_store *st, MDB_txn **txn)
{
	MDB_txn *t = NULL;
	int rc;

	pthread_mutex_lock(&st->rtxn_mu);
	if (st->n_rtxn)
		t = st->rtxn[--st->n_rtxn];
	pthread_mutex_unlock(&st->rtxn_mu);
	if (t) {
		if ((rc = mdb_txn_renew(t)) == 0) {
			*txn = t;
			return 0;
		}
		mdb_txn_abort(t);
	}
	return mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn);
}

/* Ends a read transaction from rtxn_get, keeping it for the next read. */
static void rtxn_put(simhash_store *st, MDB_txn *txn)
{
	mdb_txn_reset(txn);
	pthread_mutex_lock(&st->rtxn_mu);
	if (st->n_rtxn == st->cap_rtxn) {
		size_t cap = st->cap_rtxn ? 2 * st->cap_rtxn : 16;
		MDB_txn **p = cap <= SH_MAX_READERS / 2 ? realloc(st->rtxn, cap * sizeof *p) : NULL;

		if (!p) {
			pthread_mutex_unlock(&st->rtxn_mu);
			mdb_txn_abort(txn);
			return;
		}
		st->rtxn = p;
		st->cap_rtxn = cap;
	}
	st->rtxn[st->n_rtxn++] = txn;
	pthread_mutex_unlock(&st->rtxn_mu);
}

static simhash_err store_get(simhash_store *st, const char *id, size_t id_len,
			     simhash_store_results *r)
{
	MDB_val k = { id_len, (void *)id }, v;
	struct sh_doc d;
	simhash_err e = SIMHASH_OK;
	MDB_txn *txn;
	int rc;

	if (!st || !r || !id || !id_len || id_len > SIMHASH_STORE_ID_MAX)
		return SIMHASH_EINVAL;
	sh_results_reset(r);
	if ((rc = rtxn_get(st, &txn)) != 0)
		return sh_mdb_err(st, rc, "get");
	rc = mdb_get(txn, st->dbi_ids, &k, &v);
	if (rc == 0) {
		uint8_t key[8];
		const char *why;
		uint64_t docno;

		if ((e = sh_ids_decode(st, &k, &v, &docno)) != SIMHASH_OK)
			goto out;
		sh_put_be64(key, docno);
		k.mv_size = 8;
		k.mv_data = key;
		rc = mdb_get(txn, st->dbi_docs, &k, &v);
		if (rc == MDB_NOTFOUND) {
			e = sh_doc_bad(st, docno, id, id_len, "the ids record names a missing document");
			goto out;
		}
		if (rc == 0) {
			if ((e = sh_doc_decode(st, &k, &v, &d, &why)) != SIMHASH_OK)
				e = sh_doc_bad(st, docno, id, id_len, why);
			else if (d.id_len != id_len || memcmp(d.id, id, id_len))
				e = sh_doc_bad(st, docno, id, id_len,
					       "the ids record names the document of another id");
			else
				e = sh_results_add(r, &d, 0);
		}
	}
	if (rc && rc != MDB_NOTFOUND)
		e = sh_mdb_err(st, rc, "get");
out:
	rtxn_put(st, txn);
	if (e != SIMHASH_OK)
		sh_results_reset(r);
	sh_results_finish(r);
	return e;
}

static simhash_err store_query(simhash_store *st, const simhash_fp *fp, unsigned max_dist,
			       size_t max_results, simhash_store_results *r)
{
	size_t n = 0;
	simhash_err e;
	MDB_txn *txn;
	sh_hit *h;
	int rc;

	if (!st || !fp || !r)
		return SIMHASH_EINVAL;
	sh_results_reset(r);
	if (fp->bits != st->bits) {
		sh_store_seterr(st, "a %u-bit fingerprint for a store of %u-bit fingerprints",
				fp->bits, st->bits);
		return SIMHASH_ESCHEME;
	}
	if ((rc = rtxn_get(st, &txn)) != 0)
		return sh_mdb_err(st, rc, "query");
	/* under the lock: the writer may swap the index (checkpoint.c) */
	pthread_rwlock_rdlock(&st->idx_lock);
	if (max_dist > sh_memidx_max_dist(st->idx)) {
		pthread_rwlock_unlock(&st->idx_lock);
		e = sh_scan_docs(st, txn, fp, max_dist, &r->hits, &n);
	} else {
		e = sh_memidx_query(st->idx, fp, max_dist, &r->matches, &r->hits, &n);
		pthread_rwlock_unlock(&st->idx_lock);
	}
	if (e != SIMHASH_OK) {
		rtxn_put(st, txn);
		return e;
	}
	h = r->hits.p;
	sh_hits_sort(h, &n, max_results);
	for (size_t i = 0; i < n && e == SIMHASH_OK; i++) {
		uint8_t key[8];
		MDB_val k = { 8, key }, v;
		struct sh_doc d;
		const char *why;

		sh_put_be64(key, h[i].docno);
		rc = mdb_get(txn, st->dbi_docs, &k, &v);
		if (rc == MDB_NOTFOUND)
			continue; /* deleted since the index was read */
		if (rc)
			e = sh_mdb_err(st, rc, "query");
		else if ((e = sh_doc_decode(st, &k, &v, &d, &why)) != SIMHASH_OK)
			e = sh_doc_bad(st, h[i].docno, NULL, 0, why);
		else if (simhash_hamming(&d.fp, fp) != h[i].dist)
			/* the index's copy of the fingerprint is not the record's */
			e = sh_doc_bad(st, h[i].docno, NULL, 0,
				       "the search index disagrees with the docs record "
				       "(delete PATH-index to rebuild it)");
		else
			e = sh_results_add(r, &d, h[i].dist);
	}
	rtxn_put(st, txn);
	if (e != SIMHASH_OK)
		sh_results_reset(r);
	sh_results_finish(r);
	return e;
}

static simhash_err store_each(simhash_store *st, simhash_store_each_fn fn, void *arg)
{
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_val k, v;
	simhash_err e = SIMHASH_OK;
	int rc;

	if (!st || !fn)
		return SIMHASH_EINVAL;
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
		return sh_mdb_err(st, rc, "each");
	if ((rc = mdb_cursor_open(txn, st->dbi_docs, &cur)) != 0) {
		mdb_txn_abort(txn);
		return sh_mdb_err(st, rc, "each");
	}
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		simhash_store_match m;
		struct sh_doc d;
		const char *why;

		if ((e = sh_doc_decode(st, &k, &v, &d, &why)) != SIMHASH_OK) {
			sh_doc_bad(st, k.mv_size == 8 ? sh_get_be64(k.mv_data) : 0, NULL, 0, why);
			break;
		}
		memset(&m, 0, sizeof m);
		m.id = d.id; /* not NUL-terminated in the map: copy */
		{
			char idbuf[SIMHASH_STORE_ID_MAX + 1];
			size_t l = d.id_len < SIMHASH_STORE_ID_MAX ? d.id_len : SIMHASH_STORE_ID_MAX;

			memcpy(idbuf, d.id, l);
			idbuf[l] = 0;
			m.id = idbuf;
			m.id_len = l;
			m.fp = d.fp;
			m.meta = d.meta;
			m.meta_len = d.meta_len;
			m.time = d.time;
			if (fn(&m, arg))
				break;
		}
	}
	if (rc && rc != MDB_NOTFOUND && e == SIMHASH_OK)
		e = sh_mdb_err(st, rc, "each");
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return e;
}

static simhash_err store_stats_get(simhash_store *st, simhash_store_stats *out)
{
	simhash_store_stats s;
	MDB_envinfo info;
	MDB_stat ms;
	MDB_txn *txn;
	int rc;

	if (!st || !out || out->size < offsetof(simhash_store_stats, n_docs) + 8)
		return SIMHASH_EINVAL;
	memset(&s, 0, sizeof s);
	s.size = sizeof s;
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
		return sh_mdb_err(st, rc, "stats");
	rc = mdb_stat(txn, st->dbi_docs, &ms);
	mdb_txn_abort(txn);
	if (rc)
		return sh_mdb_err(st, rc, "stats");
	mdb_env_info(st->env, &info);
	s.n_docs = ms.ms_entries;
	s.bits = st->bits;
	s.format_version = SIMHASH_STORE_FORMAT_VERSION;
	s.file_bytes = (uint64_t)(info.me_last_pgno + 1) * ms.ms_psize;
	pthread_mutex_lock(&st->mu);
	s.n_commits = st->n_commits;
	s.n_checkpoints = st->n_checkpoints;
	s.checkpoint_delta = st->ck_delta;
	memcpy(s.commit_batches, st->batch_hist, sizeof s.commit_batches);
	s.n_committed = st->n_committed;
	s.max_batch = st->max_batch;
	pthread_mutex_unlock(&st->mu);
	s.open_seconds = st->open_seconds;
	s.open_replayed = st->open_replayed;

	memcpy((char *)out + sizeof out->size, (char *)&s + sizeof s.size,
	       (out->size < sizeof s ? out->size : sizeof s) - sizeof s.size);
	return SIMHASH_OK;
}

simhash_err simhash_store_get(simhash_store *st, const char *id, size_t id_len,
			      simhash_store_results *r, simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_get(st, id, id_len, r));
}

simhash_err simhash_store_query(simhash_store *st, const simhash_fp *fp, unsigned max_dist,
				size_t max_results, simhash_store_results *r, simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_query(st, fp, max_dist, max_results, r));
}

simhash_err simhash_store_each(simhash_store *st, simhash_store_each_fn fn, void *arg,
			       simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_each(st, fn, arg));
}

simhash_err simhash_store_stats_get(simhash_store *st, simhash_store_stats *out, simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_stats_get(st, out));
}
