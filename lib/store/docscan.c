/* docscan.c - the passes over "docs" that the rest of the store builds on: the
 * scan that answers distances beyond the index's, the collection of every
 * fingerprint (or those numbered from a point on) for a bulk build, and the
 * rebuild of the index from the records.
 *
 * Workload: a full pass reads every document's 16 fingerprint bytes and its
 * checksum, about 1 us per document on an idle core; a rebuild is one such
 * pass and one bulk build. Open falls back to it when no checkpoint fits
 * (checkpoint.c), verify on a read-only handle whose store changed, and a
 * batch that deleted a damaged record (batch.c).
 *
 * Invariants:
 *  1. A docs record that fails its checksum is skipped by every pass here,
 *     never read: it stays out of the index and out of scanned answers (a get
 *     of it refuses it, verify reports it, the other documents serve).
 *  2. sh_index_replace swaps the live index under the index's write lock:
 *     readers see the old one or the new one, never a mix.
 */
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

simhash_err sh_docs_collect(simhash_store *st, MDB_txn *txn, uint64_t from, const int *cancel,
			    uint64_t **fps_out, uint64_t **docnos_out, size_t *n_out)
{
	size_t words = st->bits == 128 ? 2 : 1, n = 0, cap;
	uint64_t *fps, *docnos;
	uint8_t key[8];
	MDB_cursor *cur;
	MDB_val k = { 8, key }, v;
	MDB_stat ms;
	simhash_err e = SIMHASH_OK;
	int rc;

	*fps_out = *docnos_out = NULL;
	*n_out = 0;
	if ((rc = mdb_stat(txn, st->dbi_docs, &ms)) != 0)
		return sh_mdb_err(st, rc, "read docs");
	/* every document when from is 0; a replay's few otherwise, grown */
	cap = from ? 1024 : ms.ms_entries + 1;
	fps = malloc(cap * words * sizeof *fps);
	docnos = malloc(cap * sizeof *docnos);
	if (!fps || !docnos) {
		e = SIMHASH_ENOMEM;
		goto out;
	}
	if ((rc = mdb_cursor_open(txn, st->dbi_docs, &cur)) != 0) {
		e = sh_mdb_err(st, rc, "read docs");
		goto out;
	}
	sh_put_be64(key, from);
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		/* a record that fails stays out of the index: a get of it
		 * refuses it, verify reports it, the other documents serve */
		if (!sh_rec_ok(SH_T_DOCS, &k, &v) || k.mv_size != 8 || v.mv_size < SH_DOC_HEAD)
			continue;
		if (n == cap) {
			uint64_t *f2 = realloc(fps, 2 * cap * words * sizeof *fps);
			uint64_t *d2 = f2 ? realloc(docnos, 2 * cap * sizeof *docnos) : NULL;

			if (f2)
				fps = f2;
			if (!d2) {
				e = SIMHASH_ENOMEM;
				break;
			}
			docnos = d2;
			cap *= 2;
		}
		if (cancel && !(n & 65535) && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
			sh_store_seterr(st, "checkpoint cancelled");
			e = SIMHASH_EIO;
			break;
		}
		docnos[n] = sh_get_be64(k.mv_data);
		fps[n * words] = sh_get_le64(v.mv_data);
		if (words == 2)
			fps[n * 2 + 1] = sh_get_le64((const uint8_t *)v.mv_data + 8);
		n++;
	}
	mdb_cursor_close(cur);
	if (e == SIMHASH_OK && rc != 0 && rc != MDB_NOTFOUND)
		e = sh_mdb_err(st, rc, "read docs");
out:
	if (e != SIMHASH_OK) {
		free(fps);
		free(docnos);
		return e;
	}
	*fps_out = fps;
	*docnos_out = docnos;
	*n_out = n;
	return SIMHASH_OK;
}

/* Rebuilds the index from every stored fingerprint (store.c, invariant 2): one pass
 * over "docs" into arrays, then one bulk build. */
simhash_err sh_index_rebuild(simhash_store *st, MDB_txn *txn, sh_memidx **out)
{
	uint64_t *fps, *docnos;
	sh_memidx *m = NULL;
	simhash_err e;
	size_t n;

	*out = NULL;
	if ((e = sh_docs_collect(st, txn, 0, NULL, &fps, &docnos, &n)) != SIMHASH_OK)
		return e;
	if ((e = sh_memidx_new(st->bits, st->scheme, &m)) == SIMHASH_OK)
		e = sh_memidx_build(m, fps, docnos, n);
	free(fps);
	free(docnos);
	if (e == SIMHASH_OK)
		*out = m;
	else
		sh_memidx_free(m);
	return e;
}

/* Replaces the live index by one rebuilt from txn (invariant 2). */
simhash_err sh_index_replace(simhash_store *st, MDB_txn *txn)
{
	sh_memidx *m, *old;
	simhash_err e = sh_index_rebuild(st, txn, &m);

	if (e != SIMHASH_OK)
		return e;
	pthread_rwlock_wrlock(&st->idx_lock);
	old = st->idx;
	st->idx = m;
	pthread_rwlock_unlock(&st->idx_lock);
	sh_memidx_free(old);
	return SIMHASH_OK;
}

simhash_err sh_docs_walk(simhash_store *st, MDB_txn *txn, const char *what, sh_doc_fn fn,
			 void *arg)
{
	MDB_cursor *cur;
	MDB_val k, v;
	simhash_err e = SIMHASH_OK;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->dbi_docs, &cur)) != 0)
		return sh_mdb_err(st, rc, what);
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && e == SIMHASH_OK;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		e = fn(st, txn, cur, &k, &v, arg);
	if (e == SIMHASH_OK && rc && rc != MDB_NOTFOUND)
		e = sh_mdb_err(st, rc, what);
	mdb_cursor_close(cur);
	return e;
}

struct scan_arg {
	const simhash_fp *fp;
	unsigned max_dist;
	sh_buf *hits;
	size_t *n;
};

static simhash_err scan_one(simhash_store *st, MDB_txn *txn, MDB_cursor *cur, MDB_val *k,
			    MDB_val *v, void *arg)
{
	struct scan_arg *a = arg;
	simhash_fp f = { { 0, 0 }, st->bits };
	unsigned d;

	(void)txn;
	(void)cur;
	if (!sh_rec_ok(SH_T_DOCS, k, v) || k->mv_size != 8 || v->mv_size < SH_DOC_HEAD)
		return SIMHASH_OK; /* verify reports it; never a changed value */
	f.w[0] = sh_get_le64(v->mv_data);
	f.w[1] = sh_get_le64((const uint8_t *)v->mv_data + 8);
	d = simhash_hamming(&f, a->fp);
	return d <= a->max_dist ? sh_hits_push(a->hits, a->n, sh_get_be64(k->mv_data), d)
				: SIMHASH_OK;
}

simhash_err sh_scan_docs(simhash_store *st, MDB_txn *txn, const simhash_fp *fp,
			 unsigned max_dist, sh_buf *hits, size_t *n)
{
	struct scan_arg a = { fp, max_dist, hits, n };

	return sh_docs_walk(st, txn, "scan", scan_one, &a);
}
