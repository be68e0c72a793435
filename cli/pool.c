/* pool.c - an ordered job queue on a fixed set of threads (see pool.h).
 *
 * The queue is a ring of `depth` slots. Invariants, under the mutex:
 *   head <= take <= tail, tail - head <= depth;
 *   slots [head, take) are running or done, [take, tail) wait for a worker;
 *   pool_next_done() returns slot head once its done flag is set.
 * Jobs are coarse (a batch of documents), so one mutex is no bottleneck.
 *
 * With n threads there are n - 1 worker threads: the caller's thread is
 * worker n - 1, and runs queued jobs while it waits for the oldest. So -j 2
 * keeps two threads on two cores, instead of two workers and a main thread
 * that wakes between them once per job (each wake-up an interrupt to the
 * other core, and in a virtual machine an exit to the hypervisor).
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "pool.h"

struct slot {
	void *job;
	int done;
};

struct worker {
	struct pool *pool;
	unsigned index;
	pthread_t thread;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was queued, or stop was set */
	pthread_cond_t done; /* a job finished */
	struct slot *ring;
	size_t depth, head, take, tail;
	int stop;
	pool_fn fn;
	void *arg;
	unsigned n_threads, n_started; /* worker threads: n_threads - 1 */
	struct worker *workers;
};

static void *worker_main(void *w_)
{
	struct worker *w = w_;
	struct pool *p = w->pool;
	struct slot *s;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->take == p->tail && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->take == p->tail)
			break;
		s = &p->ring[p->take++ % p->depth];
		pthread_mutex_unlock(&p->lock);
		p->fn(s->job, w->index, p->arg);
		pthread_mutex_lock(&p->lock);
		s->done = 1;
		pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pool_new(unsigned n_threads, size_t depth, pool_fn fn, void *arg, struct pool **out)
{
	struct pool *p;
	unsigned i;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	p->ring = calloc(depth, sizeof(*p->ring));
	p->workers = calloc(n_threads, sizeof(*p->workers));
	if (!p->ring || !p->workers)
		goto out_free;
	p->depth = depth;
	p->fn = fn;
	p->arg = arg;
	p->n_threads = n_threads;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (i = 0; n_threads > 1 && i < n_threads - 1; i++) {
		p->workers[i].pool = p;
		p->workers[i].index = i;
		err = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
		if (err) {
			pool_free(p);
			errno = err;
			return -1;
		}
		p->n_started++;
	}
	*out = p;
	return 0;

out_free:
	free(p->workers);
	free(p->ring);
	free(p);
	errno = ENOMEM;
	return -1;
}

void pool_submit(struct pool *p, void *job)
{
	struct slot *s;

	pthread_mutex_lock(&p->lock);
	assert(p->tail - p->head < p->depth);
	s = &p->ring[p->tail % p->depth];
	s->job = job;
	s->done = 0;
	p->tail++;
	if (!p->n_started) {
		/* No threads: run it now, on the caller's thread, as worker 0. */
		p->take++;
		pthread_mutex_unlock(&p->lock);
		p->fn(job, 0, p->arg);
		s->done = 1;
		return;
	}
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void *pool_next_done(struct pool *p)
{
	struct slot *s;
	void *job = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->head < p->tail) {
		s = &p->ring[p->head % p->depth];
		while (!s->done) {
			struct slot *mine;

			if (p->take == p->tail) {
				pthread_cond_wait(&p->done, &p->lock);
				continue;
			}
			/* A queued job: run it here rather than wait. */
			mine = &p->ring[p->take++ % p->depth];
			pthread_mutex_unlock(&p->lock);
			p->fn(mine->job, p->n_threads - 1, p->arg);
			pthread_mutex_lock(&p->lock);
			mine->done = 1;
		}
		job = s->job;
		p->head++;
	}
	pthread_mutex_unlock(&p->lock);
	return job;
}

size_t pool_pending(const struct pool *p)
{
	return p->tail - p->head;
}

void pool_free(struct pool *p)
{
	unsigned i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->n_started; i++)
		pthread_join(p->workers[i].thread, NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->workers);
	free(p->ring);
	free(p);
}
