/* record.c - the checksum every store record carries (format version 3), and
 * the meta records read and written through it.
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
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

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
