/* upgrade.c - format version 2 to 3: a checksum sealed onto every record.
 *
 * Version 3 differs from version 2 only in the 8-byte checksum that ends
 * every value (record.c), so the upgrade rewrites each record of the four
 * tables as itself plus its checksum, and the "version" record as 3.
 *
 * Invariants:
 *  1. All of it is one LMDB write transaction: a crash before its commit
 *     leaves the version 2 store as it was (and the next writing open
 *     upgrades it again), after it a complete version 3 store. Nothing is
 *     ever half upgraded.
 *  2. Only a handle open for writing, holding the store's lock, upgrades; a
 *     read-only open refuses a version 2 store (store.c), since it would
 *     read records without checksums.
 *  3. The saved index (PATH-index) stays valid: document numbers, "next",
 *     "dseq" and the "ckpt" stamp keep their values.
 * Workload: once per store, a pass over every record (a few seconds per
 * million documents; LMDB spills the dirty pages of a large transaction). */
#include <stdlib.h>
#include <string.h>
#include "store_int.h"

/* Rewrites every record of dbi with its checksum; version: the meta table,
 * whose "version" record becomes 3. */
static simhash_err seal_table(simhash_store *st, MDB_txn *txn, MDB_dbi dbi, enum sh_table t)
{
	sh_buf key = { NULL, 0 }, val = { NULL, 0 };
	simhash_err e = SIMHASH_OK;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc;

	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
		return sh_mdb_err(st, rc, "upgrade");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		MDB_val nk, nv;
		size_t len = v.mv_size;

		if ((e = sh_buf_reserve(&key, k.mv_size + 1)) != SIMHASH_OK ||
		    (e = sh_buf_reserve(&val, len + SH_SUM_LEN + 4)) != SIMHASH_OK)
			break;
		memcpy(key.p, k.mv_data, k.mv_size);
		memcpy(val.p, v.mv_data, len);
		if (t == SH_T_META && k.mv_size == 7 && !memcmp(k.mv_data, "version", 7)) {
			sh_put_le32(val.p, SIMHASH_STORE_FORMAT_VERSION);
			len = 4;
		}
		sh_rec_seal(t, key.p, k.mv_size, val.p, len);
		nk.mv_size = k.mv_size;
		nk.mv_data = key.p;
		nv.mv_size = len + SH_SUM_LEN;
		nv.mv_data = val.p;
		if ((rc = mdb_cursor_put(cur, &nk, &nv, MDB_CURRENT)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	sh_buf_free(&key);
	sh_buf_free(&val);
	if (e == SIMHASH_OK && rc != MDB_NOTFOUND)
		e = sh_mdb_err(st, rc, "upgrade");
	return e;
}

simhash_err sh_store_upgrade(simhash_store *st)
{
	simhash_err e;
	MDB_txn *txn;
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return sh_mdb_err(st, rc, "upgrade");
	if ((e = seal_table(st, txn, st->dbi_meta, SH_T_META)) != SIMHASH_OK ||
	    (e = seal_table(st, txn, st->dbi_docs, SH_T_DOCS)) != SIMHASH_OK ||
	    (e = seal_table(st, txn, st->dbi_ids, SH_T_IDS)) != SIMHASH_OK ||
	    (st->have_dlog && (e = seal_table(st, txn, st->dbi_dlog, SH_T_DLOG)) != SIMHASH_OK)) {
		mdb_txn_abort(txn);
		return e;
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		return sh_mdb_err(st, rc, "upgrade");
	return SIMHASH_OK;
}
