/* store_int.h - the parts of the store shared by its files: the handle, the
 * record layouts and the write requests the writer thread runs.
 *
 * The files and the order in which they call each other: store.c's header.
 *
 * LMDB layout (format version 3; docs/format.md): four named databases in
 * one data file. Every value ends with an 8-byte checksum of its table, key
 * and value (record.c), left out of the layouts below.
 *   "meta"  "magic" -> 8 bytes "SHSTORE\0"; "version" -> u32; "scheme" ->
 *           the scheme string; "config" -> the config record (config.c);
 *           "next" -> u64, the next document number to hand out; "uuid" ->
 *           u64, random at create (stamps the saved index, memidx.h);
 *           "dseq" -> u64, the next deletion number; "ckpt" (optional) ->
 *           the stamp of the saved index that open may use (memidx.h);
 *           "stopwords", "idf" (where the config record says the store
 *           holds them) -> the tables the fingerprints depend on (tables.c).
 *   "docs"  document number (u64 big-endian, so keys sort in insertion
 *           order) -> w0 u64, w1 u64, time i64, id_len u32, meta_len u32, id,
 *           meta. Integers in values are little-endian.
 *   "ids"   id bytes -> document number (u64 big-endian).
 *   "dlog"  deletion number (u64 big-endian) -> document number u64, w0 u64,
 *           w1 u64: every deletion since the saved index's (checkpoint.c).
 * Invariants: ids and docs map one to one; every document number is below
 * "next"; every fingerprint has the store's width (unused bits zero); every
 * deletion number is below "dseq" and names a document no longer stored. */
#ifndef SH_STORE_INT_H
#define SH_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <semaphore.h>
#include "../common/internal.h"
#include "memidx.h"

#define SH_STORE_MAGIC "SHSTORE"   /* 8 bytes with its NUL */
#define SH_DOC_HEAD 32             /* bytes before the id in a docs value */
#define SH_SUM_LEN 8               /* the checksum that ends every value */

/* The tables, as the checksum's seed tells them apart (record.c). */
enum sh_table { SH_T_META = 1, SH_T_DOCS = 2, SH_T_IDS = 3, SH_T_DLOG = 4 };

#define SH_MAX_READERS 1022 /* LMDB's reader slots (store.c); read.c keeps half */

struct sh_wreq;

/* What the writer thread does with a request (writer.c): each operation
 * (writes.c, verify.c, checkpoint.c) defines its own, static const; the
 * writer knows none of them by name. */
struct sh_wop {
	/* Runs the request in the batch's write transaction; an error aborts
	 * the whole batch (writer.c, invariant 2). */
	simhash_err (*run)(simhash_store *st, MDB_txn *txn, struct sh_wreq *q);
	/* NULL, or called once the batch committed, after the index update
	 * (batch.c) and before any acknowledgement. */
	void (*committed)(simhash_store *st, struct sh_wreq *q);
	int is_write; /* counts in the commit statistics (a verify does not) */
	int alone;    /* runs in a batch of its own (writer.c, invariant 4) */
};

/* A write request: the first member of each operation's own request struct
 * (struct put_req in writes.c, ...), which run casts back to; it lives on
 * its caller's stack until sem is posted. */
struct sh_wreq {
	const struct sh_wop *op;
	simhash_err err;
	char msg[SIMHASH_ERROR_MSG_MAX]; /* the writer's message for err */
	sem_t sem; /* posted by the writer once the request is done */
	struct sh_wreq *next;
};

/* A change of the batch being built (batch.c), not yet in the index. */
struct sh_pend {
	uint64_t docno;
	simhash_fp fp;
	int del; /* 1: a deletion of docno (fp: its fingerprint) */
};

struct simhash_store {
	MDB_env *env;
	MDB_dbi dbi_meta, dbi_docs, dbi_ids, dbi_dlog;
	int have_dlog;
	int lock_fd;
	unsigned flags;
	size_t map_bytes; /* LMDB's map; 0: the default (simhash_store_open_mapped) */
	simhash_config cfg; /* its stopwords and idf are own_sw, own_idf */
	simhash_stopwords *own_sw;
	simhash_idf *own_idf;
	char scheme[SIMHASH_SCHEME_MAX];
	unsigned bits;

	sh_memidx *idx; /* guarded by idx_lock; only the writer thread changes it */
	char *path;     /* PATH, for messages */
	char *idx_path; /* PATH-index: the saved index */
	uint64_t uuid;
	int idx_broken; /* an index update failed: never save it */
	pthread_rwlock_t idx_lock;

	/* checkpoints (checkpoint.c): ck is the installed one ("ckpt"), all
	 * zero when none; ck and ck_tried belong to the writer thread */
	sh_idx_stamp ck;
	uint64_t ck_tried;   /* next_docno + next_dseq when one was last started */
	pthread_mutex_t ck_mu; /* held by the checkpoint running (its invariant 3) */
	pthread_cond_t ck_cv; /* signalled (with mu) when ck_running falls */
	int ck_running;      /* a background checkpoint runs; guarded by mu */
	int ck_cancel;       /* atomic: close asks the checkpoint to give up */
	uint64_t n_checkpoints; /* guarded by mu */
	uint64_t ck_delta;      /* sh_ckpt_delta after the last batch; guarded by mu */
	uint64_t open_replayed; /* changes replayed at open; UINT64_MAX: rebuilt */

	pthread_mutex_t mu; /* guards the queue, stop, the counters */
	pthread_cond_t work_cv;
	struct sh_wreq *q_head, *q_tail;
	int stop;
	int writer_started;
	pthread_t writer;
	void (*after_batch)(simhash_store *st); /* sh_writer_start's */
	uint64_t n_commits, n_committed, max_batch;
	uint64_t batch_hist[SIMHASH_STORE_BATCH_BUCKETS];
	double open_seconds;
	size_t open_txnid; /* the snapshot the index was built from */

	/* the writer thread's own; a batch's changes (batch.c) */
	uint64_t next_docno;
	uint64_t next_dseq; /* the next deletion number ("dseq") */
	sh_buf pend; /* struct sh_pend[n_pend] */
	int rebuild_idx; /* the batch deleted a damaged record (batch.c) */
	size_t n_pend;
	sh_buf dels; /* u64 set of docnos deleted in this batch, open addressing */
	size_t dels_cap, n_dels;
	sh_buf hits;              /* check_and_put's scratch (writes.c) */
	simhash_matches matches;

	/* the error detail of the calls in progress (record.c) */
	pthread_mutex_t err_mu;
	struct sh_errslot *slots; /* guarded by err_mu */

	/* reset read transactions kept for reuse (read.c): renewing one skips
	 * the reader table's lock that a new one takes (guarded by rtxn_mu) */
	pthread_mutex_t rtxn_mu;
	MDB_txn **rtxn;
	size_t n_rtxn, cap_rtxn;
};

struct simhash_store_results {
	simhash_store_match *m;
	size_t n, cap;
	sh_buf bytes; /* ids and metas; pointers set by sh_results_finish */
	size_t bytes_len;
	sh_buf hits;  /* scratch of queries */
	simhash_matches matches;
};

static inline void sh_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}
static inline uint64_t sh_get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}
static inline uint64_t sh_get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static inline uint32_t sh_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void sh_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A decoded docs value; id and meta point into LMDB's map. */
struct sh_doc {
	simhash_fp fp;
	int64_t time;
	const char *id;
	size_t id_len;
	const void *meta;
	size_t meta_len;
};

/* ---- The files' functions, from the bottom of the store up. */

/* record.c: error messages, record checksums and codecs.
 *
 * Error detail belongs to a call (simhash.h, convention 2), while the
 * functions that meet a failure deep in the store know only the handle. So
 * a public entry that wants detail registers a slot for its thread
 * (sh_call_begin) and removes it on its way out (sh_call_end, which fills
 * the caller's simhash_error on failure); sh_store_seterr writes into the
 * slot of the thread it runs on, or drops the message when that thread has
 * none (a background checkpoint). The writer thread has a slot of its own
 * for the batch it runs, and hands a failed batch's message to each of its
 * requests (writer.c), whose callers take it into theirs. */
struct sh_errslot {
	pthread_t thread;
	int set;                         /* msg was written during the call */
	char msg[SIMHASH_ERROR_MSG_MAX];
	struct sh_errslot *next;
};
void sh_slot_add(simhash_store *st, struct sh_errslot *slot);
void sh_slot_remove(simhash_store *st, struct sh_errslot *slot);
/* sh_call_begin registers slot when st and err are not NULL; sh_call_end
 * unregisters it and, when rc is an error, fills *err (may be NULL) with rc
 * and the message written meanwhile (else simhash_strerror(rc)). Returns rc. */
void sh_call_begin(simhash_store *st, struct sh_errslot *slot, simhash_error *err);
simhash_err sh_call_end(simhash_store *st, struct sh_errslot *slot, simhash_error *err,
			simhash_err rc);
void sh_store_seterr(simhash_store *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message this thread's call was given so far ("" if none). */
void sh_store_geterr(simhash_store *st, char *buf, size_t cap);
simhash_err sh_mdb_err(simhash_store *st, int rc, const char *what);
/* The checksums (invariants in record.c). sh_rec_ok checks the value v of
 * key k and drops the checksum from v->mv_size; 0 if it fails. sh_rec_put
 * writes body (len bytes) sealed; sh_rec_seal writes the checksum of body
 * at body + len. */
uint64_t sh_rec_sum(enum sh_table t, const void *key, size_t klen, const void *body, size_t len);
void sh_rec_seal(enum sh_table t, const void *key, size_t klen, uint8_t *body, size_t len);
int sh_rec_ok(enum sh_table t, const MDB_val *k, MDB_val *v);
simhash_err sh_rec_put(simhash_store *st, MDB_txn *txn, MDB_dbi dbi, enum sh_table t,
		       const MDB_val *k, const void *body, size_t len, unsigned flags);
const char *sh_table_name(enum sh_table t);
/* A meta record: written sealed; read checked (missing or failing its
 * checksum: SIMHASH_ECORRUPT naming the store and the record). */
simhash_err sh_meta_put(simhash_store *st, MDB_txn *txn, const char *key, const void *v,
			size_t len);
simhash_err sh_meta_get(simhash_store *st, MDB_txn *txn, const char *key, MDB_val *v);
/* Reads a u64 meta record; SIMHASH_ECORRUPT if missing or malformed. */
simhash_err sh_meta_u64(simhash_store *st, MDB_txn *txn, const char *key, uint64_t *v);
/* Checks and decodes the docs record (k, v); SIMHASH_ECORRUPT if it fails
 * its checksum or is malformed, with a static reason in *why. */
simhash_err sh_doc_decode(const simhash_store *st, const MDB_val *k, const MDB_val *v,
			  struct sh_doc *d, const char **why);
/* Sets the message of a docs record that did not decode: the store, the
 * document number and (when known from elsewhere, id_len > 0) the id. */
simhash_err sh_doc_bad(simhash_store *st, uint64_t docno, const char *id, size_t id_len,
		       const char *why);
/* Checks and reads the ids record (k, v): the document number. */
simhash_err sh_ids_decode(simhash_store *st, const MDB_val *k, const MDB_val *v, uint64_t *docno);
/* Whether doc's fingerprint width and lengths are acceptable for st. */
simhash_err sh_doc_check(simhash_store *st, const simhash_store_doc *doc);

/* config.c */
size_t sh_config_encode(const simhash_config *cfg, uint8_t *out, size_t cap);
/* *tables gets SIMHASH_SCHEME_STOPWORDS | SIMHASH_SCHEME_IDF for the tables
 * the store holds; cfg->stopwords and cfg->idf are set to NULL. */
simhash_err sh_config_decode(const uint8_t *p, size_t len, simhash_config *cfg, unsigned *tables);

/* tables.c: the store's stop-word and IDF tables, in the "stopwords" and
 * "idf" meta records. put writes the records of cfg's tables in txn; read
 * rebuilds the tables that `tables` says the store holds, checks them
 * against their records' digests and the scheme's, and gives new tables the
 * caller frees (NULL where the store holds none). */
simhash_err sh_tables_put(simhash_store *st, MDB_txn *txn, const simhash_config *cfg);
simhash_err sh_tables_read(simhash_store *st, MDB_txn *txn, unsigned tables, const char *scheme,
			   simhash_stopwords **sw, simhash_idf **idf);
/* The records themselves, for the functions above and the fuzz target
 * fuzz/store_records.c: *_record writes a table's record into b (grown as
 * needed; *len its length), the same bytes for the same contents;
 * *_record_parse rebuilds the table of a record (its digest unchecked), or
 * gives SIMHASH_ECORRUPT with a static reason in *why (other errors leave
 * it alone). A record that parses writes back byte for byte. */
simhash_err sh_stopwords_record(const simhash_stopwords *sw, sh_buf *b, size_t *len);
simhash_err sh_stopwords_record_parse(const uint8_t *p, size_t len, simhash_stopwords **out,
				      uint64_t *digest, const char **why);
simhash_err sh_idf_record(const simhash_idf *idf, sh_buf *b, size_t *len);
simhash_err sh_idf_record_parse(const uint8_t *p, size_t len, simhash_idf **out, uint64_t *digest,
				const char **why);

/* results.c */
/* Appends a document (dist) to r; sh_results_finish sets its pointers. */
simhash_err sh_results_add(simhash_store_results *r, const struct sh_doc *d, unsigned dist);
void sh_results_finish(simhash_store_results *r);
/* Empties r for the next call that fills it. */
void sh_results_reset(simhash_store_results *r);
/* Sorts hits by (dist, docno) and keeps the first max (0: all). */
void sh_hits_sort(sh_hit *h, size_t *n, size_t max);

/* docscan.c */
/* Calls fn on every record of "docs" under txn, in key order, through one
 * cursor (fn may delete the current record with it), until fn returns an
 * error, which is returned; a cursor error is reported as `what`. */
typedef simhash_err (*sh_doc_fn)(simhash_store *st, MDB_txn *txn, MDB_cursor *cur,
				 MDB_val *k, MDB_val *v, void *arg);
simhash_err sh_docs_walk(simhash_store *st, MDB_txn *txn, const char *what, sh_doc_fn fn,
			 void *arg);
/* Appends every document of txn within max_dist of fp to hits: the scan
 * that answers distances beyond the index's. */
simhash_err sh_scan_docs(simhash_store *st, MDB_txn *txn, const simhash_fp *fp,
			 unsigned max_dist, sh_buf *hits, size_t *n);
/* The fingerprints and numbers of the documents of txn numbered from
 * `from` on, into new arrays (*fps: bits/64 words each, w[0] first). cancel
 * (may be NULL): stop with SIMHASH_EIO once it reads nonzero. */
simhash_err sh_docs_collect(simhash_store *st, MDB_txn *txn, uint64_t from, const int *cancel,
			    uint64_t **fps, uint64_t **docnos, size_t *n);
/* A new index of every document of txn: one pass and one bulk build. */
simhash_err sh_index_rebuild(simhash_store *st, MDB_txn *txn, sh_memidx **out);
/* The live index replaced by sh_index_rebuild()'s, under the index lock. */
simhash_err sh_index_replace(simhash_store *st, MDB_txn *txn);

/* batch.c: the batch the writer thread runs (its invariants there). */
/* Notes docno as added with fp (del 0) or deleted (del 1, fp: the
 * fingerprint it had) by the batch. */
simhash_err sh_batch_note(simhash_store *st, uint64_t docno, const simhash_fp *fp, int del);
/* Whether the batch deleted docno. */
int sh_batch_deleted(const simhash_store *st, uint64_t docno);
/* Appends to hits (*n used) every document the batch added within max_dist
 * of fp, those it deleted again included (sh_batch_deleted tells them). */
simhash_err sh_batch_near(const simhash_store *st, const simhash_fp *fp, unsigned max_dist,
			  sh_buf *hits, size_t *n);
/* Forgets the batch's changes (a new batch, or after one was applied). */
void sh_batch_reset(simhash_store *st);
/* In the batch's transaction: the deletions into "dlog", "next" and "dseq"
 * written when they moved from next0 and the deletion number at the start. */
simhash_err sh_batch_log(simhash_store *st, MDB_txn *txn, uint64_t next0);
/* After the commit: the batch applied to the live index. */
simhash_err sh_batch_apply(simhash_store *st);

/* writer.c: the queue. start runs after_batch in the writer thread once at
 * its start and after each batch's acknowledgement (the checkpoint trigger,
 * sh_ckpt_maybe_start); submit queues q (q->op set) and returns its error
 * once it is durable (writer.c, invariant 3). */
simhash_err sh_writer_start(simhash_store *st, void (*after_batch)(simhash_store *st));
void sh_writer_stop(simhash_store *st);
simhash_err sh_writer_submit(simhash_store *st, struct sh_wreq *req);

/* upgrade.c: rewrites a store of format version 2 as version 3 (every
 * record sealed) in one write transaction of env. */
simhash_err sh_store_upgrade(simhash_store *st);

/* checkpoint.c */
/* Changes (additions and deletions) since the installed checkpoint; the
 * writer thread's fields, read by it and by open. */
static inline uint64_t sh_ckpt_delta(const simhash_store *st)
{
	return (st->next_docno - st->ck.next) + (st->next_dseq - st->ck.dseq);
}
/* The index of txn's state: the saved checkpoint named by "ckpt", mapped,
 * with the changes since replayed; else a full rebuild. *replayed gets how
 * many changes were replayed (UINT64_MAX: rebuilt). Sets st->ck. */
simhash_err sh_ckpt_load(simhash_store *st, MDB_txn *txn, sh_memidx **out, uint64_t *replayed);
/* Whether enough changed for a checkpoint: max(4096, documents / 16). */
int sh_ckpt_due(const simhash_store *st);
/* Writer thread, after a batch (sh_writer_start's after_batch): starts a
 * background checkpoint when enough has changed since the last one. */
void sh_ckpt_maybe_start(simhash_store *st);
/* Removes the temporary files of checkpoints a crash interrupted
 * (PATH-index.XXXXXX.tmp); only the writing handle, holding the store's
 * lock, may. */
void sh_ckpt_remove_temps(const char *path);
/* Stops (cancels) and joins a background checkpoint. */
void sh_ckpt_join(simhash_store *st);
/* Saves st's in-memory index as a checkpoint and installs it (no writer
 * running: create, and the clean close). */
simhash_err sh_ckpt_save_now(simhash_store *st);

#endif
