/* record.c - the bottom of the store: the checksum every record carries
 * (format version 3), the codecs of the records read through it (meta,
 * docs, ids) and the handle's error message. It calls nothing else of the
 * store; everything else calls it.
 *
 * LMDB keeps no checksums: a bit flipped on the disk or in the page cache
 * comes back as a changed value. So every value of every table ends with 8
 * bytes, u64 little-endian: XXH3-64 of the value's bytes before them, seeded
 * with XXH3-64 of the key seeded with the table's tag. The checksum thus
 * covers the key, the value and the table: a record changed in place, moved
 * to another key or copied into another table all fail. The fields stay as
 * they were before the checksum (a fingerprint as its 8 or 16 bytes, the
 * metadata as its JSON text), the checksum beside them.
 *
 * Invariants:
 *  1. Every reader of a record checks its checksum before it uses a byte of
 *     it (sh_rec_ok); a record that fails is SIMHASH_ECORRUPT with the store,
 *     the record and, for documents, the id named, never a value.
 *  2. Every writer seals what it writes (sh_rec_put, sh_rec_seal) in the
 *     transaction that writes it.
 * Workload: one XXH3 pass over each record read or written, tens to
 * thousands of bytes; bench/store.sh measures it against format version 2's
 * rates in the same run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

/* ---- the calls' error messages (store_int.h) */

void sh_slot_add(simhash_store *st, struct sh_errslot *slot)
{
	slot->thread = pthread_self();
	slot->set = 0;
	slot->msg[0] = 0;
	pthread_mutex_lock(&st->err_mu);
	slot->next = st->slots;
	st->slots = slot;
	pthread_mutex_unlock(&st->err_mu);
}

void sh_slot_remove(simhash_store *st, struct sh_errslot *slot)
{
	struct sh_errslot **p;

	pthread_mutex_lock(&st->err_mu);
	for (p = &st->slots; *p; p = &(*p)->next)
		if (*p == slot) {
			*p = slot->next;
			break;
		}
	pthread_mutex_unlock(&st->err_mu);
}

void sh_call_begin(simhash_store *st, struct sh_errslot *slot, simhash_error *err)
{
	slot->next = NULL;
	slot->thread = 0;
	if (st && err)
		sh_slot_add(st, slot);
}

simhash_err sh_call_end(simhash_store *st, struct sh_errslot *slot, simhash_error *err,
			simhash_err rc)
{
	if (!st || !err)
		return rc == SIMHASH_OK ? rc : sh_error_code(err, rc);
	sh_slot_remove(st, slot);
	if (rc == SIMHASH_OK)
		return rc;
	if (slot->set && slot->msg[0])
		return sh_error_set(err, rc, "%s", slot->msg);
	return sh_error_code(err, rc);
}

/* The slot of the calling thread, with err_mu held; NULL if none. */
static struct sh_errslot *my_slot(simhash_store *st)
{
	pthread_t self = pthread_self();

	for (struct sh_errslot *s = st->slots; s; s = s->next)
		if (pthread_equal(s->thread, self))
			return s;
	return NULL;
}

void sh_store_seterr(simhash_store *st, const char *fmt, ...)
{
	struct sh_errslot *s;
	va_list ap;

	pthread_mutex_lock(&st->err_mu);
	if ((s = my_slot(st)) != NULL) {
		va_start(ap, fmt);
		vsnprintf(s->msg, sizeof s->msg, fmt, ap);
		va_end(ap);
		s->set = 1;
	}
	pthread_mutex_unlock(&st->err_mu);
}

void sh_store_geterr(simhash_store *st, char *buf, size_t cap)
{
	struct sh_errslot *s;

	pthread_mutex_lock(&st->err_mu);
	s = my_slot(st);
	snprintf(buf, cap, "%s", s ? s->msg : "");
	pthread_mutex_unlock(&st->err_mu);
}

simhash_err sh_mdb_err(simhash_store *st, int rc, const char *what)
{
	char eb[160];

	if (rc > 0)
		sh_errno_text(rc, eb, sizeof eb);
	else
		snprintf(eb, sizeof eb, "%s", mdb_strerror(rc));
	sh_store_seterr(st, "%s: %s", what, eb);
	if (rc == MDB_CORRUPTED || rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
	    rc == MDB_PAGE_NOTFOUND || rc == MDB_BAD_VALSIZE)
		return SIMHASH_ECORRUPT;
	if (rc == ENOMEM)
		return SIMHASH_ENOMEM;
	if (rc == ENOSPC || rc == EDQUOT || rc == EFBIG || rc == MDB_MAP_FULL)
		return SIMHASH_ENOSPC;
	return SIMHASH_EIO;
}

/* ---- checksums */

#define TAG_SEED 0x5348524543534d31ull /* "SHRECSM1" */

uint64_t sh_rec_sum(enum sh_table t, const void *key, size_t klen, const void *body, size_t len)
{
	return sh_key_seed(body, len, sh_key_seed(key, klen, TAG_SEED ^ (uint64_t)t));
}

void sh_rec_seal(enum sh_table t, const void *key, size_t klen, uint8_t *body, size_t len)
{
	sh_put_le64(body + len, sh_rec_sum(t, key, klen, body, len));
}

int sh_rec_ok(enum sh_table t, const MDB_val *k, MDB_val *v)
{
	const uint8_t *p = v->mv_data;

	if (v->mv_size < SH_SUM_LEN)
		return 0;
	if (sh_get_le64(p + v->mv_size - SH_SUM_LEN) !=
	    sh_rec_sum(t, k->mv_data, k->mv_size, p, v->mv_size - SH_SUM_LEN))
		return 0;
	v->mv_size -= SH_SUM_LEN;
	return 1;
}

simhash_err sh_rec_put(simhash_store *st, MDB_txn *txn, MDB_dbi dbi, enum sh_table t,
		       const MDB_val *k, const void *body, size_t len, unsigned flags)
{
	MDB_val key = *k, v = { len + SH_SUM_LEN, NULL };
	int rc;

	if ((rc = mdb_put(txn, dbi, &key, &v, flags | MDB_RESERVE)) != 0)
		return sh_mdb_err(st, rc, "write");
	if (len)
		memcpy(v.mv_data, body, len);
	sh_rec_seal(t, k->mv_data, k->mv_size, v.mv_data, len);
	return SIMHASH_OK;
}

const char *sh_table_name(enum sh_table t)
{
	switch (t) {
	case SH_T_META: return "meta";
	case SH_T_DOCS: return "docs";
	case SH_T_IDS: return "ids";
	case SH_T_DLOG: return "dlog";
	}
	return "?";
}

simhash_err sh_meta_put(simhash_store *st, MDB_txn *txn, const char *key, const void *v,
			size_t len)
{
	MDB_val k = { strlen(key), (void *)key };

	return sh_rec_put(st, txn, st->dbi_meta, SH_T_META, &k, v, len, 0);
}

simhash_err sh_meta_get(simhash_store *st, MDB_txn *txn, const char *key, MDB_val *v)
{
	MDB_val k = { strlen(key), (void *)key };
	int rc = mdb_get(txn, st->dbi_meta, &k, v);

	if (rc == MDB_NOTFOUND) {
		sh_store_seterr(st, "%s: meta record '%s' missing", st->path, key);
		return SIMHASH_ECORRUPT;
	}
	if (rc)
		return sh_mdb_err(st, rc, "read meta");
	if (!sh_rec_ok(SH_T_META, &k, v)) {
		sh_store_seterr(st, "%s: meta record '%s' fails its checksum", st->path, key);
		return SIMHASH_ECORRUPT;
	}
	return SIMHASH_OK;
}

simhash_err sh_meta_u64(simhash_store *st, MDB_txn *txn, const char *key, uint64_t *out)
{
	simhash_err e;
	MDB_val v;

	if ((e = sh_meta_get(st, txn, key, &v)) != SIMHASH_OK)
		return e;
	if (v.mv_size != 8) {
		sh_store_seterr(st, "malformed %s record", key);
		return SIMHASH_ECORRUPT;
	}
	*out = sh_get_le64(v.mv_data);
	return SIMHASH_OK;
}

/* ---- documents and ids */

simhash_err sh_doc_decode(const simhash_store *st, const MDB_val *k, const MDB_val *val,
			  struct sh_doc *d, const char **why)
{
	MDB_val body = *val, *v = &body;
	const uint8_t *p = v->mv_data;
	uint32_t id_len, meta_len;

	*why = "docs record fails its checksum";
	if (!sh_rec_ok(SH_T_DOCS, k, v))
		return SIMHASH_ECORRUPT;
	*why = "malformed docs record";
	if (v->mv_size < SH_DOC_HEAD || k->mv_size != 8)
		return SIMHASH_ECORRUPT;
	id_len = sh_get_le32(p + 24);
	meta_len = sh_get_le32(p + 28);
	if ((uint64_t)SH_DOC_HEAD + id_len + meta_len != v->mv_size)
		return SIMHASH_ECORRUPT;
	d->fp.w[0] = sh_get_le64(p);
	d->fp.w[1] = sh_get_le64(p + 8);
	d->fp.bits = st->bits;
	d->time = (int64_t)sh_get_le64(p + 16);
	d->id = (const char *)p + SH_DOC_HEAD;
	d->id_len = id_len;
	d->meta = p + SH_DOC_HEAD + id_len;
	d->meta_len = meta_len;
	return SIMHASH_OK;
}

simhash_err sh_doc_bad(simhash_store *st, uint64_t docno, const char *id, size_t id_len,
		       const char *why)
{
	if (id_len)
		sh_store_seterr(st, "%s: id %.*s (document %llu): %s", st->path, (int)id_len, id,
				(unsigned long long)docno, why);
	else
		sh_store_seterr(st, "%s: document %llu: %s", st->path, (unsigned long long)docno,
				why);
	return SIMHASH_ECORRUPT;
}

simhash_err sh_ids_decode(simhash_store *st, const MDB_val *k, const MDB_val *val, uint64_t *docno)
{
	MDB_val v = *val;

	if (!sh_rec_ok(SH_T_IDS, k, &v) || v.mv_size != 8) {
		sh_store_seterr(st, "%s: id %.*s: ids record %s", st->path, (int)k->mv_size,
				(const char *)k->mv_data,
				v.mv_size == val->mv_size ? "fails its checksum" : "malformed");
		return SIMHASH_ECORRUPT;
	}
	*docno = sh_get_be64(v.mv_data);
	return SIMHASH_OK;
}

simhash_err sh_doc_check(simhash_store *st, const simhash_store_doc *doc)
{
	if (!doc || !doc->id || !doc->id_len || doc->id_len > SIMHASH_STORE_ID_MAX ||
	    doc->meta_len > SIMHASH_STORE_META_MAX || (doc->meta_len && !doc->meta)) {
		sh_store_seterr(st, "id must be 1 to %d bytes, metadata at most %d",
				SIMHASH_STORE_ID_MAX, SIMHASH_STORE_META_MAX);
		return SIMHASH_EINVAL;
	}
	if (doc->fp.bits != st->bits) {
		sh_store_seterr(st, "a %u-bit fingerprint for a store of %u-bit fingerprints",
				doc->fp.bits, st->bits);
		return SIMHASH_ESCHEME;
	}
	return SIMHASH_OK;
}
