/* writer.c - group commit: one writer thread per handle runs every write.
 *
 * The writer is a plain queue. Callers queue a request (struct sh_wreq, the
 * head of each operation's own request, on their own stack) and wait. The
 * writer takes everything queued, runs each request's own function
 * (req->op->run; writes.c, verify.c, checkpoint.c) in order in ONE LMDB write
 * transaction, logs the batch's deletions and commits (one fsync), applies
 * the batch to the in-memory index (batch.c), and only then marks the
 * requests done and wakes their callers. So a call returns after its write
 * is durable, and at N concurrent writers one fsync serves up to N requests:
 * while a commit syncs, the next batch queues up. The writer knows no
 * operation: a new one brings its own request and run function.
 *
 * Invariants:
 *  1. Only the writer thread changes the index and next_docno; it takes the
 *     index's write lock to change it, and reads it without a lock. During a
 *     batch the batch's changes are noted as batch.c states (its invariants
 *     1 to 3: what a request sees, the deletion log, a damaged record).
 *  2. A batch whose commit fails changes nothing: the index is left as it
 *     was, next_docno and the deletion number go back, and every request of
 *     the batch gets the error.
 *  3. A request is acknowledged only once its commit is durable. The
 *     environment runs with MDB_NOMETASYNC: a commit fdatasyncs its data
 *     pages, then writes its meta page without a sync (a crash before that
 *     page reaches the disk loses only that commit, never the database). The
 *     next commit's fdatasync flushes that meta page too, so the writer
 *     acknowledges a batch after the next commit that wrote, or after an
 *     mdb_env_sync when nothing more is queued: one flush per commit under
 *     load instead of LMDB's two. A committed batch is visible to readers
 *     from its commit, before its acknowledgement.
 *  4. A request whose operation says `alone` (verify) runs in a batch of its
 *     own, so that the index matches the transaction it reads.
 *  5. The messages of the writer thread's failures go to its own error slot
 *     (record.c), emptied before each batch and each sync; a request that
 *     gets an error gets that message with it, before it is acknowledged,
 *     and its caller takes it into the caller's own slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <semaphore.h>
#include "store_int.h"

#define MAX_BATCH 4096 /* requests in one transaction */

/* Gives the requests of batch that failed with err the message of the
 * writer's slot (invariant 5). */
static void tell(struct sh_wreq *batch, simhash_err err, const struct sh_errslot *ws)
{
	for (; batch; batch = batch->next)
		if (err != SIMHASH_OK && batch->err == err)
			snprintf(batch->msg, sizeof batch->msg, "%s", ws->msg);
}

/* Empties the writer's slot before a batch or a sync (invariant 5). */
static void slot_clear(simhash_store *st, struct sh_errslot *ws)
{
	pthread_mutex_lock(&st->err_mu);
	ws->msg[0] = 0;
	ws->set = 0;
	pthread_mutex_unlock(&st->err_mu);
}

/* Runs one batch in one transaction; sets each request's err. Returns the
 * number of writes it committed (operations not is_write, a checkpoint's
 * install or a verify, are not writes); *committed: whether the transaction
 * committed. */
static size_t run_batch(simhash_store *st, struct sh_wreq *batch, int *committed,
			struct sh_errslot *ws)
{
	size_t n_writes = 0;
	uint64_t next0 = st->next_docno, dseq0 = st->next_dseq;
	simhash_err e = SIMHASH_OK;
	struct sh_wreq *q;
	MDB_txn *txn;
	int rc;

	slot_clear(st, ws);
	sh_batch_reset(st);
	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0) {
		e = sh_mdb_err(st, rc, "begin");
		goto out;
	}
	for (q = batch; q && e == SIMHASH_OK; q = q->next)
		e = q->op->run(st, txn, q);
	if (e == SIMHASH_OK)
		e = sh_batch_log(st, txn, next0);
	if (e != SIMHASH_OK) {
		mdb_txn_abort(txn);
	} else if ((rc = mdb_txn_commit(txn)) != 0) {
		e = sh_mdb_err(st, rc, "commit");
	} else {
		*committed = 1;
		e = sh_batch_apply(st);
		sh_batch_reset(st);
		next0 = st->next_docno;
		dseq0 = st->next_dseq;
		for (q = batch; q; q = q->next) {
			n_writes += q->op->is_write;
			if (q->op->committed)
				q->op->committed(st, q);
		}
	}
out:
	st->next_docno = next0; /* invariant 2 */
	st->next_dseq = dseq0;
	for (q = batch; q; q = q->next)
		q->err = e;
	tell(batch, e, ws);
	return n_writes;
}

/* Acknowledges the requests of batch (a list): each caller wakes on its own
 * semaphore (no broadcast: only the callers done wake, and none of them
 * takes the queue's lock). The request may be gone once posted. */
static void ack(struct sh_wreq *batch, simhash_err sync_err, const struct sh_errslot *ws)
{
	while (batch) {
		struct sh_wreq *next = batch->next;

		if (batch->err == SIMHASH_OK && sync_err != SIMHASH_OK) {
			batch->err = sync_err;
			snprintf(batch->msg, sizeof batch->msg, "%s", ws->msg);
		}
		sem_post(&batch->sem);
		batch = next;
	}
}

/* Makes the last commit durable (its meta page, invariant 3). */
static simhash_err sync_env(simhash_store *st, struct sh_errslot *ws)
{
	int rc;

	slot_clear(st, ws);
	rc = mdb_env_sync(st->env, 1);

	return rc ? sh_mdb_err(st, rc, "sync") : SIMHASH_OK;
}

/* The histogram bucket of a commit of n requests (simhash.h). */
static unsigned batch_bucket(size_t n)
{
	unsigned b = 0;

	while (b + 1 < SIMHASH_STORE_BATCH_BUCKETS && ((size_t)1 << b) < n)
		b++;
	return b;
}

static void *writer_main(void *arg)
{
	simhash_store *st = arg;
	struct sh_wreq *unsynced = NULL; /* committed, acknowledged at the next sync */
	struct sh_errslot ws;            /* the writer's messages (invariant 5) */

	sh_slot_add(st, &ws);
	/* the hook (the checkpoint trigger): an open that found no usable
	 * checkpoint takes one now */
	st->after_batch(st);
	pthread_mutex_lock(&st->mu);
	for (;;) {
		struct sh_wreq *batch, *last;
		size_t n = 1, n_writes;
		int committed = 0;
		MDB_envinfo info;
		size_t txn0;

		while (!st->q_head && !st->stop && !unsynced)
			pthread_cond_wait(&st->work_cv, &st->mu);
		if (!st->q_head) {
			pthread_mutex_unlock(&st->mu);
			if (unsynced) { /* nothing queued: sync now (invariant 3) */
				ack(unsynced, sync_env(st, &ws), &ws);
				unsynced = NULL;
			}
			pthread_mutex_lock(&st->mu);
			if (st->stop && !st->q_head)
				break;
			continue;
		}
		batch = last = st->q_head;
		/* an operation that runs alone gets a batch of its own (invariant 4) */
		while (last->next && n < MAX_BATCH && !last->op->alone && !last->next->op->alone) {
			last = last->next;
			n++;
		}
		st->q_head = last->next;
		if (!st->q_head)
			st->q_tail = NULL;
		last->next = NULL;
		pthread_mutex_unlock(&st->mu);

		mdb_env_info(st->env, &info);
		txn0 = info.me_last_txnid;
		n_writes = run_batch(st, batch, &committed, &ws);
		/* count before any acknowledgement: a caller who was answered
		 * reads counters that include its request */
		pthread_mutex_lock(&st->mu);
		/* a commit's batch is the writes it carried: a checkpoint's
		 * install or a verify is none, a failed batch no commit */
		if (committed) {
			st->n_commits++;
			st->n_committed += n_writes;
			st->batch_hist[batch_bucket(n_writes)]++;
			if (n_writes > st->max_batch)
				st->max_batch = n_writes;
		}
		st->ck_delta = sh_ckpt_delta(st);
		pthread_mutex_unlock(&st->mu);
		mdb_env_info(st->env, &info);
		if (unsynced) {
			/* a commit that wrote synced the data file, and with it the
			 * meta page of the commit before; else sync it now */
			ack(unsynced, info.me_last_txnid != txn0 ? SIMHASH_OK : sync_env(st, &ws), &ws);
			unsynced = NULL;
		}
		if (info.me_last_txnid != txn0)
			unsynced = batch;
		else
			ack(batch, SIMHASH_OK, &ws); /* wrote nothing (or failed): nothing to sync */
		st->after_batch(st);

		pthread_mutex_lock(&st->mu);
	}
	pthread_mutex_unlock(&st->mu);
	sh_slot_remove(st, &ws);
	return NULL;
}

simhash_err sh_writer_start(simhash_store *st, void (*after_batch)(simhash_store *st))
{
	int rc;

	/* a commit syncs its data pages and writes its meta page unsynced; the
	 * writer syncs that before it acknowledges (invariant 3) */
	if ((rc = mdb_env_set_flags(st->env, MDB_NOMETASYNC, 1)) != 0)
		return sh_mdb_err(st, rc, "set flags");
	st->after_batch = after_batch;
	if (pthread_create(&st->writer, NULL, writer_main, st) != 0) {
		sh_store_seterr(st, "cannot start the writer thread");
		return SIMHASH_ENOMEM;
	}
	st->writer_started = 1;
	return SIMHASH_OK;
}

void sh_writer_stop(simhash_store *st)
{
	pthread_mutex_lock(&st->mu);
	st->stop = 1;
	pthread_cond_signal(&st->work_cv);
	pthread_mutex_unlock(&st->mu);
	pthread_join(st->writer, NULL);
	st->writer_started = 0;
	mdb_env_set_flags(st->env, MDB_NOMETASYNC, 0);
}

simhash_err sh_writer_submit(simhash_store *st, struct sh_wreq *q)
{
	simhash_err e;

	if (st->flags & SIMHASH_STORE_RDONLY) {
		sh_store_seterr(st, "the store is open read-only");
		return SIMHASH_EINVAL;
	}
	q->next = NULL;
	q->err = SIMHASH_OK;
	q->msg[0] = 0;
	if (sem_init(&q->sem, 0, 0) != 0) {
		sh_store_seterr(st, "cannot make a semaphore");
		return SIMHASH_ENOMEM;
	}
	pthread_mutex_lock(&st->mu);
	if (st->q_tail)
		st->q_tail->next = q;
	else
		st->q_head = q;
	st->q_tail = q;
	pthread_cond_signal(&st->work_cv);
	pthread_mutex_unlock(&st->mu);
	while (sem_wait(&q->sem) != 0)
		; /* EINTR */
	e = q->err;
	sem_destroy(&q->sem);
	if (e != SIMHASH_OK && q->msg[0]) /* into the caller's slot (invariant 5) */
		sh_store_seterr(st, "%s", q->msg);
	return e;
}
