/* pool.h - runs jobs on worker threads and hands them back in the order they
 * were submitted, so output never depends on the number of threads.
 *
 * The main thread submits jobs (at most `depth` unreturned at a time) and
 * takes them back, oldest first, with pool_next_done(). Worker i passes i to
 * the job function, which selects per-thread state such as a simhash_ctx.
 * With one thread there are no threads: pool_submit() runs the job at once.
 * With n, n - 1 threads are started and the caller is worker n - 1: while
 * pool_next_done() waits, it runs queued jobs.
 */
#ifndef CLI_POOL_H
#define CLI_POOL_H

#include <stddef.h>

typedef void (*pool_fn)(void *job, unsigned worker, void *arg);

struct pool;

/* 0, or -1 with errno set. */
int pool_new(unsigned n_threads, size_t depth, pool_fn fn, void *arg, struct pool **out);

/* Queues a job; there must be fewer than depth jobs not yet returned. */
void pool_submit(struct pool *p, void *job);

/* Waits for the oldest job not yet returned and returns it; NULL if none. */
void *pool_next_done(struct pool *p);

/* Jobs submitted and not yet returned. */
size_t pool_pending(const struct pool *p);

/* Waits for the queued jobs to finish, then ends the threads. Accepts NULL. */
void pool_free(struct pool *p);

#endif /* CLI_POOL_H */
