/* store.c - the store handle's lifecycle: create, open (the index mapped
 * from its last checkpoint, checkpoint.c, or rebuilt from the stored
 * fingerprints, docscan.c), close, and what the handle tells of itself (its
 * scheme, width and config).
 *
 * The store's files, each calling only files listed below it:
 *   store.c       create, open, close (this file)
 *   read.c        get, query, each, stats: in the caller's thread
 *   writes.c      put, put_many, check_and_put, delete, expire: each its own
 *                 request to the writer, with its own run function
 *   verify.c      verify: on a writing handle a request that runs alone
 *   checkpoint.c  saved copies of the index; the open that replays since one
 *   upgrade.c     format version 2 to 3
 *   writer.c      the queue: one thread, one transaction per batch, the
 *                 acknowledgement rule; runs each request's own function
 *   batch.c       a batch's changes: what a check sees, the deletion log,
 *                 the index update after the commit
 *   docscan.c     passes over "docs": the scan beyond the index, the rebuild
 *   results.c     the results handle and the order of results
 *   tables.c      the stop-word and IDF records
 *   config.c      the config record
 *   memidx.c      the in-memory index and its saved copy (memidx.h)
 *   record.c      checksums, the records' codecs, the error message
 * (the writer runs the checkpoint trigger through the hook sh_writer_start
 * is given, so it calls nothing above it). The layout of the records and the
 * handle are in store_int.h.
 *
 * Invariants:
 *  1. A handle opened for writing holds an exclusive flock() on the data file
 *     for its whole life, so at most one process writes a store (LMDB's own
 *     lock file keeps readers of other processes safe alongside).
 *  2. After open, the index holds exactly the documents of "docs"; the writer
 *     thread applies each committed batch to it before acknowledging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "store_int.h"

#define MAP_SIZE ((size_t)1 << (sizeof(size_t) >= 8 ? 40 : 30))

const char *simhash_store_scheme(const simhash_store *st)
{
	return st->scheme;
}

unsigned simhash_store_bits(const simhash_store *st)
{
	return st->bits;
}

simhash_err simhash_store_config(const simhash_store *st, simhash_config *cfg, simhash_error *err)
{
	size_t size;

	if (!st || !cfg || cfg->size < offsetof(simhash_config, idf) + sizeof cfg->idf)
		return sh_error_code(err, SIMHASH_EINVAL);
	size = cfg->size < sizeof *cfg ? cfg->size : sizeof *cfg;
	memcpy((char *)cfg + sizeof cfg->size, (const char *)&st->cfg + sizeof cfg->size,
	       size - sizeof cfg->size);
	return SIMHASH_OK;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static simhash_store *store_alloc(void)
{
	simhash_store *st = calloc(1, sizeof *st);
	pthread_rwlockattr_t ra;

	if (!st)
		return NULL;
	st->lock_fd = -1;
	pthread_mutex_init(&st->mu, NULL);
	pthread_mutex_init(&st->err_mu, NULL);
	pthread_mutex_init(&st->rtxn_mu, NULL);
	pthread_mutex_init(&st->ck_mu, NULL);
	pthread_cond_init(&st->work_cv, NULL);
	pthread_cond_init(&st->ck_cv, NULL);
	/* Queries come all the time: prefer the writer, or it would starve. */
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&st->idx_lock, &ra);
	pthread_rwlockattr_destroy(&ra);
	return st;
}

static simhash_err set_idx_path(simhash_store *st, const char *path)
{
	size_t len = strlen(path);

	if (!(st->path = strdup(path)) || !(st->idx_path = malloc(len + sizeof "-index")))
		return SIMHASH_ENOMEM;
	memcpy(st->idx_path, path, len);
	memcpy(st->idx_path + len, "-index", sizeof "-index");
	return SIMHASH_OK;
}

void simhash_store_close(simhash_store *st)
{
	if (!st)
		return;
	sh_ckpt_join(st); /* before the writer stops: it installs checkpoints */
	if (st->writer_started) {
		sh_writer_stop(st);
		/* a clean close saves the index when a checkpoint is due; else
		 * the next open replays the few changes since the last one (a
		 * save is a full build of the index: seconds at millions) */
		if (sh_ckpt_due(st))
			sh_ckpt_save_now(st);
	}
	for (size_t i = 0; i < st->n_rtxn; i++)
		mdb_txn_abort(st->rtxn[i]);
	free(st->rtxn);
	if (st->env)
		mdb_env_close(st->env);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	sh_memidx_free(st->idx);
	simhash_stopwords_free(st->own_sw);
	simhash_idf_free(st->own_idf);
	free(st->idx_path);
	free(st->path);
	simhash_matches_free(&st->matches);
	sh_buf_free(&st->pend);
	sh_buf_free(&st->dels);
	sh_buf_free(&st->hits);
	pthread_rwlock_destroy(&st->idx_lock);
	pthread_cond_destroy(&st->work_cv);
	pthread_cond_destroy(&st->ck_cv);
	pthread_mutex_destroy(&st->mu);
	pthread_mutex_destroy(&st->err_mu);
	pthread_mutex_destroy(&st->rtxn_mu);
	pthread_mutex_destroy(&st->ck_mu);
	free(st);
}

/* Opens the LMDB environment of path and its three databases. */
static simhash_err env_open(simhash_store *st, const char *path, int create)
{
	unsigned flags = MDB_NOSUBDIR | MDB_NOTLS;
	unsigned dflags = create ? MDB_CREATE : 0;
	MDB_txn *txn;
	int rc;

	if (st->flags & SIMHASH_STORE_RDONLY)
		flags |= MDB_RDONLY;
	if ((rc = mdb_env_create(&st->env)) != 0)
		return sh_mdb_err(st, rc, path);
	mdb_env_set_maxdbs(st->env, 8);
	mdb_env_set_maxreaders(st->env, SH_MAX_READERS);
	mdb_env_set_mapsize(st->env, st->map_bytes ? st->map_bytes : MAP_SIZE);
	if ((rc = mdb_env_open(st->env, path, flags, 0644)) != 0) {
		if (rc != MDB_INVALID)
			return sh_mdb_err(st, rc, path);
		sh_store_seterr(st, "%s: not a simhash store (not an LMDB file)", path);
		return SIMHASH_ECORRUPT;
	}
	if (!(flags & MDB_RDONLY))
		mdb_reader_check(st->env, NULL); /* slots of killed readers */
	if ((rc = mdb_txn_begin(st->env, NULL, create ? 0 : MDB_RDONLY, &txn)) != 0)
		return sh_mdb_err(st, rc, path);
	if ((rc = mdb_dbi_open(txn, "meta", dflags, &st->dbi_meta)) != 0 ||
	    (rc = mdb_dbi_open(txn, "docs", dflags, &st->dbi_docs)) != 0 ||
	    (rc = mdb_dbi_open(txn, "ids", dflags, &st->dbi_ids)) != 0) {
		mdb_txn_abort(txn);
		if (rc == MDB_NOTFOUND) {
			sh_store_seterr(st, "%s: not a simhash store", path);
			return SIMHASH_ECORRUPT;
		}
		return sh_mdb_err(st, rc, path);
	}
	/* a store of format version 1 has none: read_meta tells its version */
	rc = mdb_dbi_open(txn, "dlog", dflags, &st->dbi_dlog);
	if (rc && rc != MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return sh_mdb_err(st, rc, path);
	}
	st->have_dlog = rc == 0;
	if ((rc = mdb_txn_commit(txn)) != 0)
		return sh_mdb_err(st, rc, path);
	return SIMHASH_OK;
}

/* Takes the one-writer lock on the data file (invariant 1). */
static simhash_err lock_file(simhash_store *st, const char *path, int create)
{
	int fl = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
	char eb[128];

	st->lock_fd = open(path, fl, 0644);
	if (st->lock_fd < 0) {
		sh_store_seterr(st, "%s: %s", path,
				create && errno == EEXIST ? "already exists" : sh_errno_text(errno, eb, sizeof eb));
		return SIMHASH_EIO;
	}
	if (flock(st->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		sh_store_seterr(st, "%s: store is locked by another process", path);
		return SIMHASH_EIO;
	}
	return SIMHASH_OK;
}

static simhash_err write_meta(simhash_store *st)
{
	uint8_t ver[4], cfgrec[128], next[8], uuid[8], dseq[8];
	size_t cfglen = sh_config_encode(&st->cfg, cfgrec, sizeof cfgrec);
	simhash_err e;
	MDB_txn *txn;
	int rc;

	sh_put_le32(ver, SIMHASH_STORE_FORMAT_VERSION);
	sh_put_le64(next, 0);
	sh_put_le64(dseq, 0);
	if (getrandom(&st->uuid, sizeof st->uuid, 0) != sizeof st->uuid)
		st->uuid = sh_mix64((uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)st);
	sh_put_le64(uuid, st->uuid);
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return sh_mdb_err(st, rc, "create");
	if ((e = sh_meta_put(st, txn, "magic", SH_STORE_MAGIC, 8)) != SIMHASH_OK ||
	    (e = sh_meta_put(st, txn, "version", ver, 4)) != SIMHASH_OK ||
	    (e = sh_meta_put(st, txn, "scheme", st->scheme, strlen(st->scheme))) != SIMHASH_OK ||
	    (e = sh_meta_put(st, txn, "config", cfgrec, cfglen)) != SIMHASH_OK ||
	    (e = sh_meta_put(st, txn, "next", next, 8)) != SIMHASH_OK ||
	    (e = sh_meta_put(st, txn, "uuid", uuid, 8)) != SIMHASH_OK ||
	    (e = sh_meta_put(st, txn, "dseq", dseq, 8)) != SIMHASH_OK ||
	    (e = sh_tables_put(st, txn, &st->cfg)) != SIMHASH_OK) {
		mdb_txn_abort(txn);
		return e;
	}
	if ((rc = mdb_txn_commit(txn)) != 0)
		return sh_mdb_err(st, rc, "create");
	return SIMHASH_OK;
}

/* After create: the store's config points at tables read back from its own
 * records (the caller's are borrowed only for the create), so that what
 * simhash_store_config() gives is what every later open gives. */
static simhash_err own_tables(simhash_store *st)
{
	unsigned tables = (st->cfg.stopwords ? SIMHASH_SCHEME_STOPWORDS : 0) |
			  (st->cfg.idf ? SIMHASH_SCHEME_IDF : 0);
	simhash_err e;
	MDB_txn *txn;
	int rc;

	if (!tables)
		return SIMHASH_OK;
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0)
		return sh_mdb_err(st, rc, "create");
	e = sh_tables_read(st, txn, tables, st->scheme, &st->own_sw, &st->own_idf);
	mdb_txn_abort(txn);
	st->cfg.stopwords = st->own_sw;
	st->cfg.idf = st->own_idf;
	return e;
}

simhash_err simhash_store_create(const char *path, const simhash_config *cfg,
				 simhash_store **out, simhash_error *err)
{
	struct sh_errslot slot;
	simhash_store *st;
	simhash_err e;

	if (out)
		*out = NULL;
	if (!path || !cfg || !out || simhash_config_check(cfg) != SIMHASH_OK)
		return sh_error_code(err, SIMHASH_EINVAL);
	if (!(st = store_alloc()))
		return sh_error_code(err, SIMHASH_ENOMEM);
	sh_call_begin(st, &slot, err);
	simhash_config_init(&st->cfg);
	memcpy(&st->cfg, cfg, cfg->size < sizeof st->cfg ? cfg->size : sizeof st->cfg);
	st->cfg.size = sizeof st->cfg;
	st->bits = cfg->bits;
	if ((e = simhash_config_scheme(&st->cfg, st->scheme, sizeof st->scheme)) != SIMHASH_OK)
		goto out_close;
	if ((e = set_idx_path(st, path)) != SIMHASH_OK || (e = lock_file(st, path, 1)) != SIMHASH_OK)
		goto out_close;
	if ((e = env_open(st, path, 1)) != SIMHASH_OK || (e = write_meta(st)) != SIMHASH_OK ||
	    (e = own_tables(st)) != SIMHASH_OK)
		goto out_unlink;
	/* the first checkpoint, of the empty store: every open from now on
	 * maps one and replays (it replaces a file of an older store) */
	if ((e = sh_memidx_new(st->bits, st->scheme, &st->idx)) != SIMHASH_OK ||
	    (e = sh_ckpt_save_now(st)) != SIMHASH_OK ||
	    (e = sh_writer_start(st, sh_ckpt_maybe_start)) != SIMHASH_OK)
		goto out_close;
	sh_call_end(st, &slot, err, SIMHASH_OK);
	*out = st;
	return SIMHASH_OK;
out_unlink:
	unlink(path);
	{
		char lock[4096];
		snprintf(lock, sizeof lock, "%s-lock", path);
		unlink(lock);
	}
out_close:
	sh_call_end(st, &slot, err, e);
	simhash_store_close(st);
	return e;
}

/* The format version, read before anything that depends on it: a version 2
 * record is 4 bytes without a checksum, a version 3 one carries it. Gives
 * SIMHASH_EVERSION for a version 2 store (upgradable), SIMHASH_ECORRUPT
 * naming the version for any other. */
static simhash_err check_version(simhash_store *st, MDB_txn *txn, const char *path)
{
	MDB_val k = { 7, "version" }, v;
	unsigned ver = 0;
	int rc = mdb_get(txn, st->dbi_meta, &k, &v), sealed = 0;

	if (rc == MDB_NOTFOUND) {
		sh_store_seterr(st, "%s: not a simhash store (no version record)", path);
		return SIMHASH_ECORRUPT;
	}
	if (rc)
		return sh_mdb_err(st, rc, path);
	if (v.mv_size == 4)
		ver = sh_get_le32(v.mv_data);
	else if ((sealed = v.mv_size == 4 + SH_SUM_LEN && sh_rec_ok(SH_T_META, &k, &v)))
		ver = sh_get_le32(v.mv_data);
	else {
		sh_store_seterr(st, "%s: meta record 'version' fails its checksum", path);
		return SIMHASH_ECORRUPT;
	}
	if (ver == 2 && !sealed)
		return SIMHASH_EVERSION;
	if (ver != SIMHASH_STORE_FORMAT_VERSION || !sealed) {
		sh_store_seterr(st, "%s: store format version %u, this library reads %u", path, ver,
				SIMHASH_STORE_FORMAT_VERSION);
		return SIMHASH_ECORRUPT;
	}
	return SIMHASH_OK;
}

/* Reads and checks the meta records: magic, version, config, scheme. */
static simhash_err read_meta(simhash_store *st, MDB_txn *txn, const char *path)
{
	char scheme[SIMHASH_SCHEME_MAX];
	unsigned tables;
	simhash_err e;
	MDB_val v;

	if ((e = sh_meta_get(st, txn, "magic", &v)) != SIMHASH_OK)
		return e;
	if (v.mv_size != 8 || memcmp(v.mv_data, SH_STORE_MAGIC, 8)) {
		sh_store_seterr(st, "%s: not a simhash store (bad magic)", path);
		return SIMHASH_ECORRUPT;
	}
	if ((e = sh_meta_get(st, txn, "version", &v)) != SIMHASH_OK)
		return e;
	if (v.mv_size != 4 || sh_get_le32(v.mv_data) != SIMHASH_STORE_FORMAT_VERSION) {
		sh_store_seterr(st, "%s: malformed version record", path);
		return SIMHASH_ECORRUPT;
	}
	if ((e = sh_meta_get(st, txn, "config", &v)) != SIMHASH_OK)
		return e;
	simhash_config_init(&st->cfg);
	if (sh_config_decode(v.mv_data, v.mv_size, &st->cfg, &tables) != SIMHASH_OK) {
		sh_store_seterr(st, "%s: malformed config record", path);
		return SIMHASH_ECORRUPT;
	}
	st->bits = st->cfg.bits;
	if ((e = sh_meta_get(st, txn, "scheme", &v)) != SIMHASH_OK)
		return e;
	if (v.mv_size >= sizeof st->scheme) {
		sh_store_seterr(st, "%s: malformed scheme record", path);
		return SIMHASH_ECORRUPT;
	}
	memcpy(st->scheme, v.mv_data, v.mv_size);
	st->scheme[v.mv_size] = 0;
	/* a store of version 2 from before the tables has none (tables == 0) */
	if ((e = sh_tables_read(st, txn, tables, st->scheme, &st->own_sw, &st->own_idf)) !=
	    SIMHASH_OK) {
		char msg[SIMHASH_ERROR_MSG_MAX];

		sh_store_geterr(st, msg, sizeof msg);
		if (strncmp(msg, path, strlen(path)) != 0) /* record.c's name it */
			sh_store_seterr(st, "%s: %s", path, msg);
		return e;
	}
	st->cfg.stopwords = st->own_sw;
	st->cfg.idf = st->own_idf;
	if (simhash_config_scheme(&st->cfg, scheme, sizeof scheme) != SIMHASH_OK ||
	    strcmp(scheme, st->scheme)) {
		sh_store_seterr(st, "%s: store scheme %s, its config gives %s with this library",
				path, st->scheme, scheme);
		return SIMHASH_ESCHEME;
	}
	if ((e = sh_meta_get(st, txn, "next", &v)) != SIMHASH_OK)
		return e;
	if (v.mv_size != 8) {
		sh_store_seterr(st, "%s: malformed next record", path);
		return SIMHASH_ECORRUPT;
	}
	st->next_docno = sh_get_le64(v.mv_data);
	if ((e = sh_meta_get(st, txn, "uuid", &v)) != SIMHASH_OK)
		return e;
	if (v.mv_size != 8) {
		sh_store_seterr(st, "%s: malformed uuid record", path);
		return SIMHASH_ECORRUPT;
	}
	st->uuid = sh_get_le64(v.mv_data);
	return sh_meta_u64(st, txn, "dseq", &st->next_dseq);
}

simhash_err simhash_store_open(const char *path, unsigned flags, simhash_store **out,
			       simhash_error *err)
{
	return simhash_store_open_mapped(path, flags, 0, out, err);
}

/* The data file of a store: a regular file, locked when the handle writes
 * (invariant 1), its LMDB environment opened. */
static simhash_err open_file(simhash_store *st, const char *path)
{
	struct stat sb;
	simhash_err e;

	if (stat(path, &sb) != 0) {
		char eb[128];
		sh_store_seterr(st, "%s: %s", path, sh_errno_text(errno, eb, sizeof eb));
		return SIMHASH_EIO;
	}
	if (!S_ISREG(sb.st_mode)) {
		sh_store_seterr(st, "%s: not a simhash store (not a regular file)", path);
		return SIMHASH_ECORRUPT;
	}
	if (!(st->flags & SIMHASH_STORE_RDONLY)) {
		if ((e = lock_file(st, path, 0)) != SIMHASH_OK)
			return e;
		sh_ckpt_remove_temps(path); /* a save a crash cut short */
	}
	return env_open(st, path, 0);
}

/* A read transaction in *txn on a store of this library's format version:
 * a version 2 store is upgraded by a writing open, refused by a read-only
 * one (it would read records without checksums). *txn is NULL when none
 * could be begun; else the caller aborts it, whatever the error. */
static simhash_err open_current(simhash_store *st, const char *path, MDB_txn **txn)
{
	simhash_err e;
	int rc;

	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn)) != 0) {
		*txn = NULL;
		return sh_mdb_err(st, rc, path);
	}
	if ((e = check_version(st, *txn, path)) != SIMHASH_EVERSION)
		return e;
	if (st->flags & SIMHASH_STORE_RDONLY) {
		sh_store_seterr(st, "%s: store format version 2, this library reads 3: run "
				"'simhash store upgrade %s' to upgrade it", path, path);
		return SIMHASH_ECORRUPT;
	}
	mdb_txn_abort(*txn);
	*txn = NULL;
	if ((e = sh_store_upgrade(st)) != SIMHASH_OK)
		return e;
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn)) != 0) {
		*txn = NULL;
		return sh_mdb_err(st, rc, path);
	}
	return SIMHASH_OK;
}

simhash_err simhash_store_open_mapped(const char *path, unsigned flags, size_t map_bytes,
				      simhash_store **out, simhash_error *err)
{
	double t0 = now_seconds();
	struct sh_errslot slot;
	simhash_store *st;
	simhash_err e;
	MDB_txn *txn;

	if (out)
		*out = NULL;
	if (!path || !out || (flags & ~(unsigned)SIMHASH_STORE_RDONLY))
		return sh_error_code(err, SIMHASH_EINVAL);
	if (!(st = store_alloc()))
		return sh_error_code(err, SIMHASH_ENOMEM);
	sh_call_begin(st, &slot, err);
	st->flags = flags;
	st->map_bytes = map_bytes;
	if ((e = set_idx_path(st, path)) != SIMHASH_OK || (e = open_file(st, path)) != SIMHASH_OK)
		goto out_close;
	e = open_current(st, path, &txn);
	if (!txn)
		goto out_close;
	st->open_txnid = mdb_txn_id(txn);
	if (e == SIMHASH_OK)
		e = read_meta(st, txn, path);
	if (e == SIMHASH_OK && !st->have_dlog) {
		sh_store_seterr(st, "%s: not a simhash store (no dlog database)", path);
		e = SIMHASH_ECORRUPT;
	}
	if (e == SIMHASH_OK)
		e = sh_ckpt_load(st, txn, &st->idx, &st->open_replayed);
	st->ck_tried = st->ck.next + st->ck.dseq;
	st->ck_delta = sh_ckpt_delta(st);
	mdb_txn_abort(txn);
	if (e != SIMHASH_OK)
		goto out_close;
	if (!(flags & SIMHASH_STORE_RDONLY) &&
	    (e = sh_writer_start(st, sh_ckpt_maybe_start)) != SIMHASH_OK)
		goto out_close;
	st->open_seconds = now_seconds() - t0;
	sh_call_end(st, &slot, err, SIMHASH_OK);
	*out = st;
	return SIMHASH_OK;
out_close:
	sh_call_end(st, &slot, err, e);
	simhash_store_close(st);
	return e;
}
