/* store.c - the store handle: create, open (the index mapped from its last
 * checkpoint, checkpoint.c, or rebuilt from the stored fingerprints), close,
 * and the reads (get, query, each, stats), which run in
 * the caller's thread on their own LMDB read transaction.
 *
 * Workload: a service answering queries on many threads while one writer
 * thread commits batches (writer.c). Reads never take the queue's lock; a
 * query holds the index's read lock only while it scans the index.
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
#define MAX_READERS 1022




void simhash_store_errmsg(simhash_store *st, char *buf, size_t cap)
{
	if (!buf || !cap)
		return;
	if (!st) {
		buf[0] = 0;
		return;
	}
	pthread_mutex_lock(&st->err_mu);
	snprintf(buf, cap, "%s", st->err);
	pthread_mutex_unlock(&st->err_mu);
}

const char *simhash_store_scheme(const simhash_store *st)
{
	return st->scheme;
}

unsigned simhash_store_bits(const simhash_store *st)
{
	return st->bits;
}

simhash_err simhash_store_config(const simhash_store *st, simhash_config *cfg)
{
	size_t size;

	if (!st || !cfg || cfg->size < offsetof(simhash_config, idf) + sizeof cfg->idf)
		return SIMHASH_EINVAL;
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
	mdb_env_set_maxreaders(st->env, MAX_READERS);
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

static void copy_err(const simhash_store *st, char *err, size_t cap)
{
	if (err && cap)
		snprintf(err, cap, "%s", st->err);
}

simhash_err simhash_store_create(const char *path, const simhash_config *cfg,
				 simhash_store **out, char *err, size_t err_cap)
{
	simhash_store *st;
	simhash_err e;

	if (out)
		*out = NULL;
	if (err && err_cap)
		err[0] = 0;
	if (!path || !cfg || !out || simhash_config_check(cfg) != SIMHASH_OK)
		return SIMHASH_EINVAL;
	if (!(st = store_alloc()))
		return SIMHASH_ENOMEM;
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
	    (e = sh_ckpt_save_now(st)) != SIMHASH_OK || (e = sh_writer_start(st)) != SIMHASH_OK)
		goto out_close;
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
	copy_err(st, err, err_cap);
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
		char msg[SIMHASH_STORE_ERR_MAX];

		snprintf(msg, sizeof msg, "%s", st->err);
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

/* Rebuilds the index from every stored fingerprint (invariant 2): one pass
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

/* Replaces the live index by one rebuilt from txn; readers see the old one
 * or the new one, never a mix. */
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

simhash_err simhash_store_open(const char *path, unsigned flags, simhash_store **out, char *err,
			       size_t err_cap)
{
	return simhash_store_open_mapped(path, flags, 0, out, err, err_cap);
}

simhash_err simhash_store_open_mapped(const char *path, unsigned flags, size_t map_bytes,
				      simhash_store **out, char *err, size_t err_cap)
{
	double t0 = now_seconds();
	simhash_store *st;
	struct stat sb;
	simhash_err e;
	MDB_txn *txn;
	int rc;

	if (out)
		*out = NULL;
	if (err && err_cap)
		err[0] = 0;
	if (!path || !out || (flags & ~(unsigned)SIMHASH_STORE_RDONLY))
		return SIMHASH_EINVAL;
	if (!(st = store_alloc()))
		return SIMHASH_ENOMEM;
	st->flags = flags;
	st->map_bytes = map_bytes;
	if ((e = set_idx_path(st, path)) != SIMHASH_OK)
		goto out_close;
	if (stat(path, &sb) != 0) {
		char eb[128];
		sh_store_seterr(st, "%s: %s", path, sh_errno_text(errno, eb, sizeof eb));
		e = SIMHASH_EIO;
		goto out_close;
	}
	if (!S_ISREG(sb.st_mode)) {
		sh_store_seterr(st, "%s: not a simhash store (not a regular file)", path);
		e = SIMHASH_ECORRUPT;
		goto out_close;
	}
	if (!(flags & SIMHASH_STORE_RDONLY)) {
		if ((e = lock_file(st, path, 0)) != SIMHASH_OK)
			goto out_close;
		sh_ckpt_remove_temps(path); /* a save a crash cut short */
	}
	if ((e = env_open(st, path, 0)) != SIMHASH_OK)
		goto out_close;
	if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0) {
		e = sh_mdb_err(st, rc, path);
		goto out_close;
	}
	/* a version 2 store is upgraded by a writing open, refused by a
	 * read-only one (it would read records without checksums) */
	e = check_version(st, txn, path);
	if (e == SIMHASH_EVERSION && !(flags & SIMHASH_STORE_RDONLY)) {
		mdb_txn_abort(txn);
		if ((e = sh_store_upgrade(st)) != SIMHASH_OK)
			goto out_close;
		if ((rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn)) != 0) {
			e = sh_mdb_err(st, rc, path);
			goto out_close;
		}
	} else if (e == SIMHASH_EVERSION) {
		sh_store_seterr(st, "%s: store format version 2, this library reads 3: run "
				"'simhash store upgrade %s' to upgrade it", path, path);
		e = SIMHASH_ECORRUPT;
	}
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
	if (!(flags & SIMHASH_STORE_RDONLY) && (e = sh_writer_start(st)) != SIMHASH_OK)
		goto out_close;
	st->open_seconds = now_seconds() - t0;
	*out = st;
	return SIMHASH_OK;
out_close:
	copy_err(st, err, err_cap);
	simhash_store_close(st);
	return e;
}

/* ---- records and results */


simhash_err simhash_store_results_new(simhash_store_results **out)
{
	if (!out)
		return SIMHASH_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out ? SIMHASH_OK : SIMHASH_ENOMEM;
}

void simhash_store_results_free(simhash_store_results *r)
{
	if (!r)
		return;
	free(r->m);
	sh_buf_free(&r->bytes);
	sh_buf_free(&r->hits);
	simhash_matches_free(&r->matches);
	free(r);
}

size_t simhash_store_results_count(const simhash_store_results *r)
{
	return r ? r->n : 0;
}

const simhash_store_match *simhash_store_results_get(const simhash_store_results *r, size_t i)
{
	return r && i < r->n ? &r->m[i] : NULL;
}

simhash_err sh_results_add(simhash_store_results *r, const struct sh_doc *d, unsigned dist)
{
	size_t need = r->bytes_len + d->id_len + 1 + d->meta_len;
	simhash_store_match *m;
	simhash_err e;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		simhash_store_match *p = realloc(r->m, cap * sizeof *p);

		if (!p)
			return SIMHASH_ENOMEM;
		r->m = p;
		r->cap = cap;
	}
	if ((e = sh_buf_reserve(&r->bytes, need)) != SIMHASH_OK)
		return e;
	m = &r->m[r->n++];
	/* offsets for now: the buffer may still move */
	m->id = (const char *)(uintptr_t)r->bytes_len;
	m->id_len = d->id_len;
	memcpy((char *)r->bytes.p + r->bytes_len, d->id, d->id_len);
	((char *)r->bytes.p)[r->bytes_len + d->id_len] = 0;
	r->bytes_len += d->id_len + 1;
	m->meta = (const void *)(uintptr_t)r->bytes_len;
	m->meta_len = d->meta_len;
	if (d->meta_len)
		memcpy((char *)r->bytes.p + r->bytes_len, d->meta, d->meta_len);
	r->bytes_len += d->meta_len;
	m->fp = d->fp;
	m->dist = dist;
	m->time = d->time;
	return SIMHASH_OK;
}

void sh_results_finish(simhash_store_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		r->m[i].id = (const char *)r->bytes.p + (uintptr_t)r->m[i].id;
		r->m[i].meta = (const char *)r->bytes.p + (uintptr_t)r->m[i].meta;
	}
}

static void results_reset(simhash_store_results *r)
{
	r->n = 0;
	r->bytes_len = 0;
}

static int cmp_hit(const void *a, const void *b)
{
	const sh_hit *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->docno < y->docno ? -1 : x->docno > y->docno;
}

void sh_hits_sort(sh_hit *h, size_t *n, size_t max)
{
	if (*n > 1)
		qsort(h, *n, sizeof *h, cmp_hit);
	if (max && *n > max)
		*n = max;
}

simhash_err sh_scan_docs(simhash_store *st, MDB_txn *txn, const simhash_fp *fp,
			 unsigned max_dist, sh_buf *hits, size_t *n)
{
	MDB_cursor *cur;
	MDB_val k, v;
	simhash_err e = SIMHASH_OK;
	int rc;

	if ((rc = mdb_cursor_open(txn, st->dbi_docs, &cur)) != 0)
		return sh_mdb_err(st, rc, "scan");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && e == SIMHASH_OK;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		simhash_fp f = { { 0, 0 }, st->bits };
		unsigned d;

		if (!sh_rec_ok(SH_T_DOCS, &k, &v) || k.mv_size != 8 || v.mv_size < SH_DOC_HEAD)
			continue; /* verify reports it; never a changed value */
		f.w[0] = sh_get_le64(v.mv_data);
		f.w[1] = sh_get_le64((const uint8_t *)v.mv_data + 8);
		d = simhash_hamming(&f, fp);
		if (d <= max_dist)
			e = sh_hits_push(hits, n, sh_get_be64(k.mv_data), d);
	}
	mdb_cursor_close(cur);
	if (e == SIMHASH_OK && rc && rc != MDB_NOTFOUND)
		e = sh_mdb_err(st, rc, "scan");
	return e;
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

/* ---- reads */

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
		MDB_txn **p = cap <= MAX_READERS / 2 ? realloc(st->rtxn, cap * sizeof *p) : NULL;

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

simhash_err simhash_store_get(simhash_store *st, const char *id, size_t id_len,
			      simhash_store_results *r)
{
	MDB_val k = { id_len, (void *)id }, v;
	struct sh_doc d;
	simhash_err e = SIMHASH_OK;
	MDB_txn *txn;
	int rc;

	if (!st || !r || !id || !id_len || id_len > SIMHASH_STORE_ID_MAX)
		return SIMHASH_EINVAL;
	results_reset(r);
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
		results_reset(r);
	sh_results_finish(r);
	return e;
}

simhash_err simhash_store_query(simhash_store *st, const simhash_fp *fp, unsigned max_dist,
				size_t max_results, simhash_store_results *r)
{
	size_t n = 0;
	simhash_err e;
	MDB_txn *txn;
	sh_hit *h;
	int rc;

	if (!st || !fp || !r)
		return SIMHASH_EINVAL;
	results_reset(r);
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
		results_reset(r);
	sh_results_finish(r);
	return e;
}

simhash_err simhash_store_each(simhash_store *st, simhash_store_each_fn fn, void *arg)
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

simhash_err simhash_store_stats_get(simhash_store *st, simhash_store_stats *out)
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
