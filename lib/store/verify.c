/* verify.c - checks every invariant of a store on one snapshot (see
 * store_int.h for the layout): magic and format version, the stored config
 * gives the stored scheme, records well-formed, ids and document numbers one
 * to one, every document number below "next", every fingerprint of the
 * store's width, and the in-memory index holding exactly the stored documents.
 * Every record is read through its checksum (record.c); each one that fails
 * is reported with the store, its table and key (the id of a document) and,
 * where another copy tells, which part changed.
 *
 * On a handle open for writing, verify is a request to the writer thread
 * that runs alone in its batch (writer.c), where the committed documents and
 * the index agree. A
 * read-only handle's index is a snapshot of its open: when the store has
 * changed since, verify rebuilds it from its own snapshot first. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "store_int.h"

struct vctx {
	simhash_store *st;
	MDB_txn *txn;
	simhash_store_problem_fn fn;
	void *arg;
	uint64_t n;
	simhash_matches matches;
};

__attribute__((format(printf, 2, 3))) static void problem(struct vctx *v, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	v->n++;
	if (v->fn)
		v->fn(buf, v->arg);
}

/* The table records read back as the tables the handle fingerprints with
 * (and their digests match the scheme's, tables.c); cfg then points at the
 * handle's tables, for the scheme check. */
static simhash_err check_tables(struct vctx *v, unsigned tables, MDB_val scheme_rec,
				simhash_config *cfg)
{
	char scheme[SIMHASH_SCHEME_MAX];
	const simhash_config *own = &v->st->cfg;
	simhash_stopwords *sw;
	simhash_idf *idf;
	simhash_err e;
	struct sh_errslot slot; /* its message is the problem's text */

	if (scheme_rec.mv_size >= sizeof scheme)
		return SIMHASH_OK; /* the scheme check reports it */
	memcpy(scheme, scheme_rec.mv_data, scheme_rec.mv_size);
	scheme[scheme_rec.mv_size] = 0;
	sh_slot_add(v->st, &slot);
	e = sh_tables_read(v->st, v->txn, tables, scheme, &sw, &idf);
	sh_slot_remove(v->st, &slot);
	if (e == SIMHASH_ECORRUPT) {
		problem(v, "%s", slot.msg);
		return e;
	}
	if (e != SIMHASH_OK)
		return SIMHASH_OK; /* out of memory: nothing known to be wrong */
	if (simhash_stopwords_digest(sw) != simhash_stopwords_digest(own->stopwords) ||
	    simhash_idf_digest(idf) != simhash_idf_digest(own->idf)) {
		problem(v, "stored tables differ from those the handle opened with");
		e = SIMHASH_ECORRUPT;
	}
	simhash_stopwords_free(sw);
	simhash_idf_free(idf);
	cfg->stopwords = own->stopwords;
	cfg->idf = own->idf;
	return e;
}

/* "ckpt" (the other optional records, the tables, are read by check_tables). */
static void check_optional_meta(struct vctx *v)
{
	MDB_val k = { 4, "ckpt" }, d;

	if (mdb_get(v->txn, v->st->dbi_meta, &k, &d) == 0 && !sh_rec_ok(SH_T_META, &k, &d))
		problem(v, "meta record 'ckpt' fails its checksum");
}

static void check_meta(struct vctx *v, uint64_t *next, uint64_t *dseq)
{
	static const char *const keys[] = { "magic", "version", "scheme", "config", "next", "uuid",
					    "dseq" };
	MDB_val d[7];
	simhash_config cfg;
	char scheme[SIMHASH_SCHEME_MAX];
	unsigned tables = 0;

	*next = UINT64_MAX;
	*dseq = UINT64_MAX;
	for (int i = 0; i < 7; i++) {
		MDB_val k = { strlen(keys[i]), (void *)keys[i] };
		if (mdb_get(v->txn, v->st->dbi_meta, &k, &d[i]) != 0) {
			problem(v, "meta record '%s' missing", keys[i]);
			d[i].mv_size = 0;
			d[i].mv_data = NULL;
		} else if (!sh_rec_ok(SH_T_META, &k, &d[i])) {
			problem(v, "meta record '%s' fails its checksum", keys[i]);
			d[i].mv_size = 0;
			d[i].mv_data = NULL;
		}
	}
	check_optional_meta(v);
	if (d[0].mv_data && (d[0].mv_size != 8 || memcmp(d[0].mv_data, SH_STORE_MAGIC, 8)))
		problem(v, "bad magic number");
	if (d[1].mv_data &&
	    (d[1].mv_size != 4 || sh_get_le32(d[1].mv_data) != SIMHASH_STORE_FORMAT_VERSION))
		problem(v, "format version is not %d", SIMHASH_STORE_FORMAT_VERSION);
	simhash_config_init(&cfg);
	if (d[3].mv_data && sh_config_decode(d[3].mv_data, d[3].mv_size, &cfg, &tables) != SIMHASH_OK)
		problem(v, "malformed config record");
	else if (d[3].mv_data && d[2].mv_data && check_tables(v, tables, d[2], &cfg) != SIMHASH_OK)
		; /* reported */
	else if (d[3].mv_data && d[2].mv_data &&
		 (simhash_config_scheme(&cfg, scheme, sizeof scheme) != SIMHASH_OK ||
		  strlen(scheme) != d[2].mv_size || memcmp(scheme, d[2].mv_data, d[2].mv_size)))
		problem(v, "stored scheme %.*s does not match its config (%s)",
			(int)d[2].mv_size, (const char *)d[2].mv_data, scheme);
	else if (d[2].mv_data && (d[2].mv_size != strlen(v->st->scheme) ||
				  memcmp(d[2].mv_data, v->st->scheme, d[2].mv_size)))
		problem(v, "stored scheme differs from the scheme the handle opened with");
	if (d[4].mv_data && d[4].mv_size != 8)
		problem(v, "malformed next record");
	else if (d[4].mv_data)
		*next = sh_get_le64(d[4].mv_data);
	if (d[5].mv_data && d[5].mv_size != 8)
		problem(v, "malformed uuid record");
	if (d[6].mv_data && d[6].mv_size != 8)
		problem(v, "malformed dseq record");
	else if (d[6].mv_data)
		*dseq = sh_get_le64(d[6].mv_data);
}

/* The deletion log: numbers below "dseq", records well formed, each naming a
 * document no longer stored (numbers are never reused). */
static simhash_err check_dlog(struct vctx *v, uint64_t next, uint64_t dseq)
{
	simhash_store *st = v->st;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	if ((rc = mdb_cursor_open(v->txn, st->dbi_dlog, &cur)) != 0)
		return sh_mdb_err(st, rc, "verify");
	for (rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
		uint8_t key[8];
		MDB_val dk = { 8, key }, dv;
		uint64_t seq, docno;

		if (!sh_rec_ok(SH_T_DLOG, &k, &d)) {
			problem(v, "deletion %llu: dlog record fails its checksum",
				k.mv_size == 8 ? (unsigned long long)sh_get_be64(k.mv_data) : 0ull);
			continue;
		}
		if (k.mv_size != 8 || d.mv_size != 24) {
			problem(v, "malformed dlog record");
			continue;
		}
		seq = sh_get_be64(k.mv_data);
		docno = sh_get_le64(d.mv_data);
		if (seq >= dseq)
			problem(v, "deletion %llu: number not below dseq (%llu)",
				(unsigned long long)seq, (unsigned long long)dseq);
		if (docno >= next)
			problem(v, "deletion %llu: document %llu not below next",
				(unsigned long long)seq, (unsigned long long)docno);
		sh_put_be64(key, docno);
		if (mdb_get(v->txn, st->dbi_docs, &dk, &dv) == 0)
			problem(v, "deletion %llu: document %llu is still stored",
				(unsigned long long)seq, (unsigned long long)docno);
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? SIMHASH_OK : sh_mdb_err(st, rc, "verify");
}

static int width_ok(const simhash_store *st, const simhash_fp *fp)
{
	if (st->bits == 32)
		return fp->w[0] >> 32 == 0 && fp->w[1] == 0;
	return st->bits == 128 || fp->w[1] == 0;
}

/* Which part of a docs record that fails its checksum changed, where
 * another copy tells: the index holds the fingerprint, "ids" the id. */
static void bad_doc(struct vctx *v, uint64_t docno, const MDB_val *d, const char *why)
{
	simhash_store *st = v->st;
	const uint8_t *p = d->mv_data;
	size_t id_len = d->mv_size >= SH_DOC_HEAD ? sh_get_le32(p + 24) : 0;
	const char *part = "";
	MDB_val ik = { id_len, (void *)(p + SH_DOC_HEAD) }, iv;
	uint64_t named;
	int id_ok = 0;

	if (id_len && id_len <= SIMHASH_STORE_ID_MAX && SH_DOC_HEAD + id_len <= d->mv_size &&
	    mdb_get(v->txn, st->dbi_ids, &ik, &iv) == 0 &&
	    sh_ids_decode(st, &ik, &iv, &named) == SIMHASH_OK && named == docno)
		id_ok = 1;
	if (d->mv_size >= SH_DOC_HEAD + SH_SUM_LEN) {
		simhash_fp fp = { { sh_get_le64(p), sh_get_le64(p + 8) }, st->bits };

		if (!sh_memidx_has(st->idx, docno, &fp, &v->matches))
			part = " (the fingerprint differs from the index's copy, or the index "
			       "lacks the document)";
		else if (!id_ok)
			part = " (the id or its length)";
		else
			part = " (the metadata, the time or a length)";
	}
	if (id_ok)
		problem(v, "id %.*s (document %llu): %s%s", (int)id_len,
			(const char *)ik.mv_data, (unsigned long long)docno, why, part);
	else
		problem(v, "document %llu: %s%s", (unsigned long long)docno, why,
			part);
}

static simhash_err check_docs(struct vctx *v, uint64_t next, uint64_t *n_docs)
{
	simhash_store *st = v->st;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	*n_docs = 0;
	if ((rc = mdb_cursor_open(v->txn, st->dbi_docs, &cur)) != 0)
		return sh_mdb_err(st, rc, "verify");
	for (rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
		struct sh_doc doc;
		uint64_t docno;
		MDB_val ik, iv;

		const char *why;

		(*n_docs)++;
		if (k.mv_size != 8) {
			problem(v, "document key of %zu bytes", k.mv_size);
			continue;
		}
		docno = sh_get_be64(k.mv_data);
		if (sh_doc_decode(st, &k, &d, &doc, &why) != SIMHASH_OK) {
			bad_doc(v, docno, &d, why);
			continue;
		}
		if (docno >= next)
			problem(v, "document %llu: number not below next (%llu)",
				(unsigned long long)docno, (unsigned long long)next);
		if (!width_ok(st, &doc.fp))
			problem(v, "id %.*s: fingerprint wider than %u bits", (int)doc.id_len,
				doc.id, st->bits);
		ik.mv_size = doc.id_len;
		ik.mv_data = (void *)doc.id;
		if (!doc.id_len || doc.id_len > SIMHASH_STORE_ID_MAX)
			problem(v, "document %llu: id of %zu bytes", (unsigned long long)docno,
				doc.id_len);
		else if (mdb_get(v->txn, st->dbi_ids, &ik, &iv) != 0)
			problem(v, "id %.*s: in docs, missing from ids", (int)doc.id_len, doc.id);
		else if (!sh_rec_ok(SH_T_IDS, &ik, &iv))
			; /* check_ids reports it */
		else if (iv.mv_size != 8 || sh_get_be64(iv.mv_data) != docno)
			problem(v, "id %.*s: stored twice (ids names another document)",
				(int)doc.id_len, doc.id);
		if (!sh_memidx_has(st->idx, docno, &doc.fp, &v->matches))
			problem(v, "id %.*s: missing from the index", (int)doc.id_len, doc.id);
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? SIMHASH_OK : sh_mdb_err(st, rc, "verify");
}

static simhash_err check_ids(struct vctx *v, uint64_t *n_ids)
{
	simhash_store *st = v->st;
	MDB_cursor *cur;
	MDB_val k, d;
	int rc;

	*n_ids = 0;
	if ((rc = mdb_cursor_open(v->txn, st->dbi_ids, &cur)) != 0)
		return sh_mdb_err(st, rc, "verify");
	for (rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
		MDB_val dk, dv;
		struct sh_doc doc;
		const char *why;

		(*n_ids)++;
		if (!sh_rec_ok(SH_T_IDS, &k, &d)) {
			problem(v, "id %.*s: ids record fails its checksum",
				(int)k.mv_size, (const char *)k.mv_data);
			continue;
		}
		if (d.mv_size != 8) {
			problem(v, "id %.*s: malformed ids record", (int)k.mv_size,
				(const char *)k.mv_data);
			continue;
		}
		dk = d;
		if (mdb_get(v->txn, st->dbi_docs, &dk, &dv) != 0)
			problem(v, "id %.*s: names a missing document", (int)k.mv_size,
				(const char *)k.mv_data);
		else if (sh_doc_decode(st, &dk, &dv, &doc, &why) == SIMHASH_OK &&
			 (doc.id_len != k.mv_size || memcmp(doc.id, k.mv_data, k.mv_size)))
			problem(v, "id %.*s: names the document of another id", (int)k.mv_size,
				(const char *)k.mv_data);
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? SIMHASH_OK : sh_mdb_err(st, rc, "verify");
}

/* Runs the checks in txn; the index must match txn's committed state. */
static simhash_err verify_txn(simhash_store *st, MDB_txn *txn, simhash_store_problem_fn fn,
			  void *arg, uint64_t *n_problems)
{
	struct vctx v = { st, txn, fn, arg, 0, { 0 } };
	uint64_t next, dseq, n_docs, n_ids, n_idx;
	simhash_err e;

	check_meta(&v, &next, &dseq);
	e = check_docs(&v, next, &n_docs);
	simhash_matches_free(&v.matches);
	if (e != SIMHASH_OK || (e = check_ids(&v, &n_ids)) != SIMHASH_OK ||
	    (e = check_dlog(&v, next, dseq)) != SIMHASH_OK)
		return e;
	{
		simhash_error why;

		if (sh_memidx_verify(st->idx, &why) == SIMHASH_ECORRUPT)
			problem(&v, "the saved index %s the index was mapped from: %s "
				"(delete it: the next open rebuilds the index)", st->idx_path, why.msg);
	}
	n_idx = sh_memidx_count(st->idx);
	if (n_ids != n_docs)
		problem(&v, "%llu ids for %llu documents", (unsigned long long)n_ids,
			(unsigned long long)n_docs);
	if (n_idx != n_docs)
		problem(&v, "the index holds %llu documents, the store %llu",
			(unsigned long long)n_idx, (unsigned long long)n_docs);
	*n_problems = v.n;
	return SIMHASH_OK;
}

/* A verify on a handle open for writing: a request to the writer, alone in
 * its batch, where the index matches the transaction. It writes nothing. */
struct verify_req {
	struct sh_wreq q;
	simhash_store_problem_fn fn;
	void *arg;
	uint64_t n_problems;
};

static simhash_err verify_run(simhash_store *st, MDB_txn *txn, struct sh_wreq *wq)
{
	struct verify_req *q = (struct verify_req *)wq;

	return verify_txn(st, txn, q->fn, q->arg, &q->n_problems);
}

static const struct sh_wop verify_op = { .run = verify_run, .alone = 1 };

static simhash_err store_verify(simhash_store *st, simhash_store_problem_fn fn, void *arg,
				uint64_t *n_problems)
{
	struct verify_req q = { .q.op = &verify_op, .fn = fn, .arg = arg };
	simhash_err e;
	MDB_txn *txn;
	int rc;

	if (!st || !n_problems)
		return SIMHASH_EINVAL;
	*n_problems = 0;
	if (!(st->flags & SIMHASH_STORE_RDONLY)) {
		e = sh_writer_submit(st, &q.q);
		*n_problems = q.n_problems;
		return e;
	}
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
		return sh_mdb_err(st, rc, "verify");
	e = SIMHASH_OK;
	if (mdb_txn_id(txn) != st->open_txnid)
		e = sh_index_replace(st, txn); /* a read-only handle, the store changed */
	if (e == SIMHASH_OK)
		e = verify_txn(st, txn, fn, arg, n_problems);
	mdb_txn_abort(txn);
	return e;
}

simhash_err simhash_store_verify(simhash_store *st, simhash_store_problem_fn fn, void *arg,
				 uint64_t *n_problems, simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_verify(st, fn, arg, n_problems));
}
