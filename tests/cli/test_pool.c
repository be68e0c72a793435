/* test_pool.c - the ordered job queue (cli/pool.c): every job runs once, on
 * a worker index below n, and comes back in the order it was submitted,
 * whatever the jobs' lengths; with n threads the caller's thread is worker
 * n - 1 and runs jobs while it waits, the other n - 1 run on threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "pool.h"
#include "test.h"

#define MAX_WORKERS 8

struct job {
	unsigned seq;
	unsigned worker;   /* who ran it */
	pthread_t thread;  /* on which thread */
	atomic_int runs;
	unsigned spin_us;  /* how long it takes */
	int wait_caller;   /* on a worker thread: until the caller has run a job */
};

struct shared {
	atomic_int per_worker[MAX_WORKERS];
	pthread_t caller;
	atomic_int caller_ran;
};

static void sleep_us(unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

static void run_job(void *job_, unsigned worker, void *arg)
{
	struct job *j = job_;
	struct shared *sh = arg;

	j->worker = worker;
	j->thread = pthread_self();
	atomic_fetch_add(&j->runs, 1);
	if (worker < MAX_WORKERS)
		atomic_fetch_add(&sh->per_worker[worker], 1);
	if (pthread_equal(j->thread, sh->caller))
		atomic_store(&sh->caller_ran, 1);
	else if (j->wait_caller) /* at most 10 s: a pool that never lets it fails below */
		for (unsigned t = 0; t < 10000 && !atomic_load(&sh->caller_ran); t++)
			sleep_us(1000);
	if (j->spin_us)
		sleep_us(j->spin_us);
}

/* Submits n_jobs jobs through a pool of n_threads with `depth` slots, taking
 * the oldest back whenever the ring is full, as source.c does; checks the
 * order, the single run of each job and the workers' indices. */
static void check_pool(unsigned n_threads, size_t depth, unsigned n_jobs, uint64_t seed)
{
	struct job *jobs = calloc(n_jobs, sizeof *jobs);
	struct shared sh = { .caller = pthread_self() };
	struct pool *p = NULL;
	unsigned next = 0, submitted = 0, on_caller = 0;
	pthread_t self = pthread_self();
	struct job *j;

	test_rnd_seed(seed);
	CHECK(jobs != NULL);
	if (!jobs)
		return;
	CHECK(pool_new(n_threads, depth, run_job, &sh, &p) == 0);
	if (!p) {
		free(jobs);
		return;
	}
	for (unsigned i = 0; i < n_jobs; i++) {
		jobs[i].seq = i;
		/* mostly short, some long, so that later jobs finish first */
		jobs[i].spin_us = test_rnd() % 8 == 0 ? 2000 : (unsigned)(test_rnd() % 50);
	}
	while (submitted < n_jobs) {
		if (pool_pending(p) == depth) {
			j = pool_next_done(p);
			CHECK(j == &jobs[next]);
			next++;
		}
		pool_submit(p, &jobs[submitted++]);
	}
	while ((j = pool_next_done(p))) {
		CHECK(j == &jobs[next]);
		next++;
	}
	CHECK_EQ_U64(next, n_jobs);
	CHECK_EQ_U64(pool_pending(p), 0);
	pool_free(p);
	for (unsigned i = 0; i < n_jobs; i++) {
		CHECK_EQ_U64(atomic_load(&jobs[i].runs), 1);
		CHECK(jobs[i].worker < n_threads);
		if (pthread_equal(jobs[i].thread, self)) {
			/* the caller's thread runs as the last worker, and only as it */
			CHECK_EQ_U64(jobs[i].worker, n_threads - 1);
			on_caller++;
		} else {
			CHECK(n_threads > 1 && jobs[i].worker < n_threads - 1);
		}
	}
	if (n_threads == 1)
		CHECK_EQ_U64(on_caller, n_jobs);
	free(jobs);
}

static void test_one_thread_runs_jobs_in_place(void)
{
	check_pool(1, 4, 50, 1);
}

static void test_order_kept_whatever_the_lengths(void)
{
	check_pool(2, 6, 200, 2);
	check_pool(3, 8, 200, 3);
	check_pool(4, 2, 100, 4);
	check_pool(8, 18, 300, 5);
}

/* While it waits for the oldest job, the caller runs the queued ones: the
 * first job, on a worker thread, lasts until the caller has run one. */
static void test_caller_runs_jobs_while_it_waits(void)
{
	struct job jobs[6] = { 0 };
	struct shared sh = { .caller = pthread_self() };
	struct pool *p = NULL;
	struct job *j;
	unsigned k = 0, on_caller = 0;

	CHECK(pool_new(2, 6, run_job, &sh, &p) == 0);
	if (!p)
		return;
	jobs[0].wait_caller = 1;
	for (unsigned i = 0; i < 6; i++)
		pool_submit(p, &jobs[i]);
	while ((j = pool_next_done(p))) {
		CHECK(j == &jobs[k]);
		k++;
	}
	pool_free(p);
	CHECK_EQ_U64(k, 6);
	for (unsigned i = 0; i < 6; i++)
		on_caller += pthread_equal(jobs[i].thread, pthread_self()) != 0;
	CHECK(on_caller >= 1);
	CHECK(atomic_load(&sh.per_worker[1]) >= 1);
	CHECK_EQ_U64(atomic_load(&sh.per_worker[0]) + atomic_load(&sh.per_worker[1]), 6);
}

static void test_free_waits_for_queued_jobs(void)
{
	struct job jobs[5] = { 0 };
	struct shared sh = { 0 };
	struct pool *p = NULL;

	CHECK(pool_new(3, 5, run_job, &sh, &p) == 0);
	if (!p)
		return;
	for (unsigned i = 0; i < 5; i++) {
		jobs[i].spin_us = 1000;
		pool_submit(p, &jobs[i]);
	}
	pool_free(p); /* none taken back: the threads still run them all */
	for (unsigned i = 0; i < 5; i++)
		CHECK_EQ_U64(atomic_load(&jobs[i].runs), 1);
}

TEST_MAIN("cli/pool", TEST(test_one_thread_runs_jobs_in_place),
	  TEST(test_order_kept_whatever_the_lengths), TEST(test_caller_runs_jobs_while_it_waits),
	  TEST(test_free_waits_for_queued_jobs))
