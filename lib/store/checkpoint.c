/* checkpoint.c - saved copies of the index (checkpoints) and the open that
 * maps the last one and replays only what changed since.
 *
 * Workload: a store of millions of documents that must reopen in seconds
 * after a crash, when no clean close saved its index. A full rebuild reads
 * every document and bulk-builds the index: about 1 us per document on an
 * idle core, 10 s and more for 10 million. So the store saves its index
 * while it runs, and open maps the last save and applies the changes since:
 *  - additions: documents numbered from the checkpoint's "next" on (numbers
 *    are handed out in commit order and never reused), read from "docs";
 *  - deletions (delete, replace, expire): each one appends its document
 *    number and fingerprint to "dlog" under a deletion number, in the
 *    transaction that deletes; those numbered from the checkpoint's "dseq" on
 *    are replayed.
 *
 * A checkpoint is taken in the background when the changes since the last
 * one reach max(CKPT_MIN, documents / CKPT_FRACTION): a thread reads one LMDB
 * snapshot (its "next", "dseq" and documents), builds an index of it, saves
 * it to PATH-index (temp file, fsync, rename) stamped with a fresh nonce,
 * then asks the writer thread to install it: one transaction records the
 * stamp in "ckpt" and drops the deletions below its "dseq" from "dlog". The
 * writer then also swaps its live index for the saved one, mapped, with the
 * changes made since the snapshot replayed (as an open would): the live
 * index, grown batch by batch into many segments, becomes one mapped segment
 * and a small one again (faster queries, less memory). A clean close saves
 * the live index when a checkpoint is due, and create saves the first one
 * (of the empty store), so every open finds one.
 *
 * Invariants:
 *  1. Open uses PATH-index only when its stamp equals "ckpt" byte for byte
 *     (same store uuid, same nonce, next, dseq, count), so a file of another
 *     state, another store or an older save is never used; and after the
 *     replay the index must hold exactly as many documents as "docs", else
 *     open rebuilds it in full.
 *  2. "dlog" holds every deletion numbered from "ckpt"'s dseq on: entries are
 *     dropped only in the transaction that installs a checkpoint covering
 *     them. The file is renamed into place before "ckpt" names it: a crash
 *     in between leaves a "ckpt" that matches no file, which costs one full
 *     rebuild, never a wrong index.
 *  3. One checkpoint runs at a time (ck_mu). The writer starts a background
 *     one (a detached thread; sh_ckpt_maybe_start, the hook the writer runs
 *     after each batch) under mu unless close has set ck_cancel; close
 *     sets it and waits for ck_running to fall before it stops the writer,
 *     which installs checkpoints.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <time.h>
#include "store_int.h"

#define CKPT_MIN 4096     /* changes: below this a replay costs nothing */
#define CKPT_FRACTION 16  /* a replay of count/16: a sixteenth of a build */

static uint64_t nonce_new(const simhash_store *st)
{
	uint64_t v;

	if (getrandom(&v, sizeof v, 0) != sizeof v)
		v = sh_mix64((uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)st ^ st->next_docno);
	return v ? v : 1;
}

/* Reads the "ckpt" record: 1 and *s if there is a well-formed one. */
static int ckpt_read(simhash_store *st, MDB_txn *txn, sh_idx_stamp *s)
{
	MDB_val k = { 4, "ckpt" }, v;

	if (mdb_get(txn, st->dbi_meta, &k, &v) != 0 || !sh_rec_ok(SH_T_META, &k, &v))
		return 0; /* verify reports a record that fails its checksum */
	return sh_idx_stamp_decode(v.mv_data, v.mv_size, s) && s->uuid == st->uuid;
}

/* Applies the deletions numbered from ck->dseq on to m. */
static simhash_err replay_deletions(simhash_store *st, MDB_txn *txn, const sh_idx_stamp *ck,
				    sh_memidx *m, uint64_t *n)
{
	uint8_t key[8];
	MDB_val k = { 8, key }, v;
	MDB_cursor *cur;
	int rc;

	sh_put_be64(key, ck->dseq);
	if ((rc = mdb_cursor_open(txn, st->dbi_dlog, &cur)) != 0)
		return sh_mdb_err(st, rc, "read dlog");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *p = v.mv_data;
		simhash_fp fp = { { 0, 0 }, st->bits };

		if (!sh_rec_ok(SH_T_DLOG, &k, &v) || k.mv_size != 8 || v.mv_size != 24) {
			mdb_cursor_close(cur);
			sh_store_seterr(st, "%s: dlog record fails its checksum or is malformed",
					st->path);
			return SIMHASH_ECORRUPT;
		}
		fp.w[0] = sh_get_le64(p + 8);
		fp.w[1] = sh_get_le64(p + 16);
		sh_memidx_delete(m, sh_get_le64(p), &fp);
		(*n)++;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? SIMHASH_OK : sh_mdb_err(st, rc, "read dlog");
}

/* The checkpoint of "ckpt" with the changes since applied, or NULL. */
static simhash_err replay(simhash_store *st, MDB_txn *txn, const sh_idx_stamp *ck,
			  uint64_t n_docs, sh_memidx **out, uint64_t *replayed)
{
	uint64_t *fps = NULL, *docnos = NULL;
	sh_memidx *m;
	size_t n_add = 0;
	simhash_err e;

	*out = NULL;
	if ((e = sh_memidx_open(st->idx_path, st->bits, st->scheme, ck, &m)) != SIMHASH_OK || !m)
		return e;
	*replayed = 0;
	e = replay_deletions(st, txn, ck, m, replayed);
	if (e == SIMHASH_OK)
		e = sh_docs_collect(st, txn, ck->next, NULL, &fps, &docnos, &n_add);
	if (e == SIMHASH_OK)
		e = sh_memidx_build(m, fps, docnos, n_add);
	free(fps);
	free(docnos);
	*replayed += n_add;
	if (e == SIMHASH_OK && sh_memidx_count(m) == n_docs) {
		*out = m;
		return SIMHASH_OK;
	}
	sh_memidx_free(m);
	/* a malformed dlog record or a count that does not add up: rebuild in
	 * full from "docs" (verify reports the record) */
	return e == SIMHASH_ENOMEM ? e : SIMHASH_OK;
}

simhash_err sh_ckpt_load(simhash_store *st, MDB_txn *txn, sh_memidx **out, uint64_t *replayed)
{
	sh_idx_stamp ck;
	MDB_stat ms;
	simhash_err e;
	int rc;

	*out = NULL;
	*replayed = UINT64_MAX;
	memset(&st->ck, 0, sizeof st->ck);
	if ((rc = mdb_stat(txn, st->dbi_docs, &ms)) != 0)
		return sh_mdb_err(st, rc, "read docs");
	if (ckpt_read(st, txn, &ck) && ck.next <= st->next_docno && ck.dseq <= st->next_dseq) {
		if ((e = replay(st, txn, &ck, ms.ms_entries, out, replayed)) != SIMHASH_OK)
			return e;
		if (*out) {
			st->ck = ck;
			return SIMHASH_OK;
		}
		*replayed = UINT64_MAX;
	}
	return sh_index_rebuild(st, txn, out);
}

/* Writer thread, inside a batch: replaces the live index by the checkpoint
 * of stamp with the changes since replayed, read on a snapshot of the last
 * commit, the state the live index holds before this batch is applied. On
 * any failure the live index stays. */
static void swap_index(simhash_store *st, const sh_idx_stamp *stamp)
{
	uint64_t replayed;
	sh_memidx *m = NULL, *old;
	MDB_stat ms;
	MDB_txn *r;

	if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &r) != 0)
		return;
	if (mdb_stat(r, st->dbi_docs, &ms) == 0 && ms.ms_entries == sh_memidx_count(st->idx))
		replay(st, r, stamp, ms.ms_entries, &m, &replayed);
	mdb_txn_abort(r);
	if (!m)
		return;
	pthread_rwlock_wrlock(&st->idx_lock);
	old = st->idx;
	st->idx = m;
	pthread_rwlock_unlock(&st->idx_lock);
	sh_memidx_free(old);
}

/* In the writer's transaction (or save_now's, no writer running): records
 * stamp as the checkpoint ("ckpt") and drops the deletions it covers from
 * "dlog" (invariant 2), then swaps the live index for the saved one. */
static simhash_err install(simhash_store *st, MDB_txn *txn, const sh_idx_stamp *stamp)
{
	uint8_t rec[SH_STAMP_LEN];
	MDB_val k, v;
	MDB_cursor *cur;
	simhash_err e;
	int rc;

	sh_idx_stamp_encode(stamp, rec);
	if ((e = sh_meta_put(st, txn, "ckpt", rec, sizeof rec)) != SIMHASH_OK)
		return e;
	if ((rc = mdb_cursor_open(txn, st->dbi_dlog, &cur)) != 0)
		return sh_mdb_err(st, rc, "checkpoint");
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST)) == 0) {
		if (k.mv_size == 8 && sh_get_be64(k.mv_data) >= stamp->dseq)
			break;
		if ((rc = mdb_cursor_del(cur, 0)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (rc && rc != MDB_NOTFOUND)
		return sh_mdb_err(st, rc, "checkpoint");
	if (st->writer_started && !st->idx_broken)
		swap_index(st, stamp);
	return SIMHASH_OK;
}

/* The install of a checkpoint saved in the background: a request to the
 * writer (the one writer), run in a batch like a write, though it adds or
 * deletes no document (not is_write: the commit statistics leave it out). */
struct install_req {
	struct sh_wreq q;
	const sh_idx_stamp *stamp;
};

static simhash_err install_run(simhash_store *st, MDB_txn *txn, struct sh_wreq *wq)
{
	return install(st, txn, ((const struct install_req *)wq)->stamp);
}

/* Once its transaction committed, the stamp is the installed checkpoint. */
static void install_committed(simhash_store *st, struct sh_wreq *wq)
{
	st->ck = *((const struct install_req *)wq)->stamp;
	pthread_mutex_lock(&st->mu);
	st->n_checkpoints++;
	pthread_mutex_unlock(&st->mu);
}

static const struct sh_wop install_op = { .run = install_run, .committed = install_committed };

static simhash_err install_via_writer(simhash_store *st, const sh_idx_stamp *stamp)
{
	struct install_req q = { .q.op = &install_op, .stamp = stamp };

	return sh_writer_submit(st, &q.q);
}

/* One checkpoint of the latest committed state: snapshot, build, save,
 * install. cancel: close wants it to stop. Runs under ck_mu (invariant 3). */
static simhash_err ckpt_run(simhash_store *st, const int *cancel)
{
	uint64_t *fps = NULL, *docnos = NULL;
	sh_idx_stamp stamp;
	sh_memidx *m = NULL;
	MDB_txn *txn;
	size_t n = 0;
	simhash_err e;
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
		return sh_mdb_err(st, rc, "checkpoint");
	stamp.uuid = st->uuid;
	stamp.nonce = nonce_new(st);
	if ((e = sh_meta_u64(st, txn, "next", &stamp.next)) == SIMHASH_OK &&
	    (e = sh_meta_u64(st, txn, "dseq", &stamp.dseq)) == SIMHASH_OK)
		e = sh_docs_collect(st, txn, 0, cancel, &fps, &docnos, &n);
	mdb_txn_abort(txn); /* free the snapshot's pages for reuse early */
	stamp.count = n;
	if (e == SIMHASH_OK && (e = sh_memidx_new(st->bits, st->scheme, &m)) == SIMHASH_OK)
		e = sh_memidx_build(m, fps, docnos, n);
	free(fps);
	free(docnos);
	if (e == SIMHASH_OK && cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED))
		e = SIMHASH_EIO;
	if (e == SIMHASH_OK)
		e = sh_memidx_save(m, st->idx_path, &stamp);
	sh_memidx_free(m);
	if (e == SIMHASH_OK)
		e = install_via_writer(st, &stamp);
	return e;
}

static void *ckpt_main(void *arg)
{
	simhash_store *st = arg;

	pthread_mutex_lock(&st->ck_mu);
	ckpt_run(st, &st->ck_cancel); /* a failure costs only a longer replay */
	pthread_mutex_unlock(&st->ck_mu);
	pthread_mutex_lock(&st->mu);
	st->ck_running = 0;
	pthread_cond_broadcast(&st->ck_cv);
	pthread_mutex_unlock(&st->mu); /* st may be gone from here on */
	return NULL;
}

/* Changes after which a checkpoint is due: max(CKPT_MIN, count / 16). */
static uint64_t due_after(const simhash_store *st)
{
	uint64_t count = sh_memidx_count(st->idx);

	return count / CKPT_FRACTION > CKPT_MIN ? count / CKPT_FRACTION : CKPT_MIN;
}

int sh_ckpt_due(const simhash_store *st)
{
	return st->idx && !st->idx_broken && sh_ckpt_delta(st) >= due_after(st);
}

void sh_ckpt_maybe_start(simhash_store *st)
{
	uint64_t total = st->next_docno + st->next_dseq;
	pthread_attr_t attr;
	pthread_t th;

	/* due since the last one installed, and since the last one tried: a
	 * failed one is retried only after as many changes again */
	if (!sh_ckpt_due(st) || total - st->ck_tried < due_after(st))
		return;
	/* under mu: close sets ck_cancel under it, then waits for ck_running */
	pthread_mutex_lock(&st->mu);
	if (!st->ck_running && !st->stop && !st->ck_cancel) {
		st->ck_tried = total;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &attr, ckpt_main, st) == 0)
			st->ck_running = 1;
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&st->mu);
}

void sh_ckpt_join(simhash_store *st)
{
	pthread_mutex_lock(&st->mu);
	__atomic_store_n(&st->ck_cancel, 1, __ATOMIC_RELAXED);
	while (st->ck_running)
		pthread_cond_wait(&st->ck_cv, &st->mu);
	pthread_mutex_unlock(&st->mu);
}

simhash_err sh_ckpt_save_now(simhash_store *st)
{
	sh_idx_stamp stamp;
	simhash_err e;
	MDB_txn *txn;
	int rc;

	if (!st->idx || st->idx_broken || !st->idx_path)
		return SIMHASH_OK;
	stamp.uuid = st->uuid;
	stamp.nonce = nonce_new(st);
	stamp.next = st->next_docno;
	stamp.dseq = st->next_dseq;
	stamp.count = sh_memidx_count(st->idx);
	if ((e = sh_memidx_save(st->idx, st->idx_path, &stamp)) != SIMHASH_OK)
		return e;
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return sh_mdb_err(st, rc, "checkpoint");
	if ((e = install(st, txn, &stamp)) != SIMHASH_OK) {
		mdb_txn_abort(txn);
		return e;
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		return sh_mdb_err(st, rc, "checkpoint");
	st->ck = stamp;
	return SIMHASH_OK;
}

/* Whether name is NAME-index.XXXXXX.tmp (six hex digits): a checkpoint's
 * temporary file, as the library's atomic writer names it. */
static int is_ckpt_temp(const char *name, const char *base, size_t base_len)
{
	const char *p = name + base_len + sizeof "-index." - 1;

	if (strncmp(name, base, base_len) || strncmp(name + base_len, "-index.", 7) ||
	    strlen(p) != 6 + 4 || strcmp(p + 6, ".tmp"))
		return 0;
	for (int i = 0; i < 6; i++)
		if (!strchr("0123456789abcdef", p[i]))
			return 0;
	return 1;
}

void sh_ckpt_remove_temps(const char *path)
{
	char *d = strdup(path), *b = strdup(path), *dir, *base, full[4096];
	struct dirent *de;
	DIR *dh;

	if (!d || !b)
		goto out;
	dir = dirname(d);
	base = basename(b);
	if (!(dh = opendir(dir)))
		goto out;
	while ((de = readdir(dh)))
		if (is_ckpt_temp(de->d_name, base, strlen(base)) &&
		    (size_t)snprintf(full, sizeof full, "%s/%s", dir, de->d_name) < sizeof full)
			unlink(full);
	closedir(dh);
out:
	free(d);
	free(b);
}

static simhash_err store_checkpoint(simhash_store *st)
{
	simhash_err e;

	if (!st)
		return SIMHASH_EINVAL;
	if (st->flags & SIMHASH_STORE_RDONLY) {
		sh_store_seterr(st, "the store is open read-only");
		return SIMHASH_EINVAL;
	}
	pthread_mutex_lock(&st->ck_mu);
	e = ckpt_run(st, NULL);
	pthread_mutex_unlock(&st->ck_mu);
	return e;
}

simhash_err simhash_store_checkpoint(simhash_store *st, simhash_error *err)
{
	struct sh_errslot slot;

	sh_call_begin(st, &slot, err);
	return sh_call_end(st, &slot, err, store_checkpoint(st));
}
