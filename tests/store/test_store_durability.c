/* test_store_durability.c - acknowledged writes survive SIGKILL.
 *
 * Each cycle forks a child that opens the store and adds documents from
 * several threads (plain puts and check-and-puts), writing each id to a pipe
 * once the call has returned, that is once the store acknowledged it. The
 * parent kills the child with SIGKILL after a random delay, then reopens the
 * store: every acknowledged id must be there with its fingerprint, and verify
 * must find nothing wrong. Cycles run on one store, so each recovery starts
 * from the previous crash. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "test.h"
#include "simhash.h"

#define CYCLES 24
#define THREADS 4
#define SEED 0xd0ab1e5eedull

static char dir[64], path[128];
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The fingerprint of an id: a function of it, so the parent can check. */
static simhash_fp fp_of(const char *id)
{
	uint64_t h = 1469598103934665603ull;

	for (; *id; id++)
		h = (h ^ (uint8_t)*id) * 1099511628211ull;
	return (simhash_fp){ { h, 0 }, 64 };
}

struct child_arg {
	simhash_store *st;
	int cycle, t, fd;
};

static void *child_thread(void *p)
{
	struct child_arg *a = p;
	simhash_store_results *r;

	if (simhash_store_results_new(&r))
		_exit(3);
	for (int i = 0;; i++) {
		char id[64], line[72];
		simhash_store_doc d;
		int added = 1, n;

		snprintf(id, sizeof id, "c%d-t%d-%d", a->cycle, a->t, i);
		d = (simhash_store_doc){ id, strlen(id), fp_of(id), "{}", 2, 0 };
		if (a->t % 2 ? simhash_store_check_and_put(a->st, &d, 2, 1, 0, r, &added, NULL)
			     : simhash_store_put(a->st, &d, NULL))
			_exit(4);
		n = snprintf(line, sizeof line, "%s\n", id);
		if (added && write(a->fd, line, (size_t)n) != n)
			_exit(5);
	}
	return NULL;
}

static void child(int cycle, int fd)
{
	struct child_arg a[THREADS];
	pthread_t th[THREADS];
	simhash_store *st;

	if (simhash_store_open(path, 0, &st, NULL))
		_exit(2);
	for (int t = 0; t < THREADS; t++) {
		a[t] = (struct child_arg){ st, cycle, t, fd };
		pthread_create(&th[t], NULL, child_thread, &a[t]);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	_exit(0);
}

static char buf[1 << 20];

/* Reads every acknowledged id the child wrote after the len bytes already
 * in buf, until it is gone, and checks each is stored. */
static int check_acked(int fd, size_t len, simhash_store *st, simhash_store_results *r,
		       size_t *n_acked)
{
	ssize_t got;
	int bad = 0;

	while ((got = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)got;
	buf[len] = 0;
	for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		const simhash_store_match *m;

		*nl = 0;
		if (simhash_store_get(st, line, strlen(line), r, NULL) != SIMHASH_OK ||
		    !(m = simhash_store_results_get(r, 0)) || m->fp.w[0] != fp_of(line).w[0]) {
			fprintf(stderr, "acknowledged id %s missing after SIGKILL (seed %llx)\n",
				line, (unsigned long long)SEED);
			bad = 1;
		}
		(*n_acked)++;
	}
	return bad;
}

static void test_acknowledged_writes_survive_sigkill(void)
{
	simhash_config cfg;
	simhash_store *st;
	simhash_store_results *r;
	simhash_error err;
	size_t n_acked = 0;

	rng_state = SEED;
	snprintf(dir, sizeof dir, "/tmp/test_store_dur.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof path, "%s/s.db", dir);
	simhash_config_init(&cfg);
	CHECK(simhash_store_create(path, &cfg, &st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	for (int cycle = 0; cycle < CYCLES; cycle++) {
		int fds[2], status;
		uint64_t n_problems = 1;
		pid_t pid;
		struct timespec delay = { 0, (long)(rnd() % 40) * 1000000L };
		struct pollfd pfd;
		ssize_t got = 0;

		CHECK(pipe(fds) == 0);
		pid = fork();
		if (pid == 0) {
			close(fds[0]);
			child(cycle, fds[1]);
		}
		close(fds[1]);
		/* kill it in the middle of the writes: after the first
		 * acknowledgement (or 5 s), then 0 to 40 ms later */
		pfd.fd = fds[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 5000) == 1)
			got = read(fds[0], buf, sizeof buf / 2);
		nanosleep(&delay, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		st = NULL;
		if (simhash_store_open(path, 0, &st, &err) != SIMHASH_OK)
			fprintf(stderr, "reopen after SIGKILL: %s\n", err.msg);
		CHECK(st != NULL);
		if (!st) {
			close(fds[0]);
			break;
		}
		CHECK(!check_acked(fds[0], got > 0 ? (size_t)got : 0, st, r, &n_acked));
		close(fds[0]);
		CHECK(simhash_store_verify(st, NULL, NULL, &n_problems, NULL) == SIMHASH_OK);
		CHECK_EQ_U64(n_problems, 0);
		/* a clean close: it saves the index, which the next child's writes
		 * make stale, so the next open must notice and rebuild */
		simhash_store_close(st);
	}
	printf("%d cycles, %zu acknowledged documents checked\n", CYCLES, n_acked);
	CHECK(n_acked >= CYCLES); /* each cycle killed a writer at work */
	simhash_store_results_free(r);
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
}

/* ---- crash after a checkpoint: the open maps it and replays the rest */

static int wait_checkpoints(simhash_store *st, uint64_t n)
{
	for (int i = 0; i < 2000; i++) {
		simhash_store_stats s = { .size = sizeof s };

		if (simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK && s.n_checkpoints >= n)
			return 1;
		usleep(10000);
	}
	return 0;
}

static simhash_fp fp_new(const char *id)
{
	simhash_fp f = fp_of(id);

	f.w[0] ^= 0xf0f0f0f0f0f0f0f0ull; /* a replacement's fingerprint */
	return f;
}

enum { N_A = 5000, N_B = 300 };

/* The child: 5000 documents (the first 500 dated 1970) start a checkpoint in
 * the background; once it is installed, deletions, replacements, additions
 * and an expiry follow, then SIGKILL with no close. */
static void ckpt_child(int fd)
{
	static simhash_store_doc docs[N_A];
	static char ids[N_A][16];
	simhash_store *st;
	size_t n_exp = 0;
	uint64_t n_problems = 1;

	if (simhash_store_open(path, 0, &st, NULL))
		_exit(2);
	for (int i = 0; i < N_A; i++) {
		snprintf(ids[i], sizeof ids[i], "a%d", i);
		docs[i] = (simhash_store_doc){ ids[i], strlen(ids[i]), fp_of(ids[i]), NULL, 0,
					       i < 500 ? 1000 : 0 };
	}
	if (simhash_store_put_many(st, docs, N_A, NULL) || !wait_checkpoints(st, 1))
		_exit(3);
	for (int i = 0; i < 100; i++)
		if (simhash_store_delete(st, ids[i], strlen(ids[i]), NULL, NULL))
			_exit(4);
	for (int i = 100; i < 150; i++) {
		simhash_store_doc d = { ids[i], strlen(ids[i]), fp_new(ids[i]), NULL, 0, 0 };
		if (simhash_store_put(st, &d, NULL))
			_exit(5);
	}
	for (int i = 0; i < N_B; i++) {
		char id[16];
		simhash_store_doc d = { id, 0, { { 0, 0 }, 64 }, NULL, 0, 0 };

		d.id_len = (size_t)snprintf(id, sizeof id, "b%d", i);
		d.fp = fp_of(id);
		if (simhash_store_put(st, &d, NULL))
			_exit(6);
	}
	if (simhash_store_expire(st, 2000, &n_exp, NULL) || n_exp != 350)
		_exit(7);
	/* the live index, swapped for the checkpoint's, is still exact */
	if (simhash_store_verify(st, NULL, NULL, &n_problems, NULL) || n_problems)
		_exit(9);
	if (write(fd, "ok\n", 3) != 3)
		_exit(8);
	raise(SIGKILL);
}

/* Whether id is stored with fp and found by a query at distance 0. */
static int present(simhash_store *st, simhash_store_results *r, const char *id, simhash_fp fp)
{
	const simhash_store_match *m;
	int found = 0;

	if (simhash_store_get(st, id, strlen(id), r, NULL) || !(m = simhash_store_results_get(r, 0)) ||
	    m->fp.w[0] != fp.w[0])
		return 0;
	if (simhash_store_query(st, &fp, 0, 0, r, NULL))
		return 0;
	for (size_t i = 0; i < simhash_store_results_count(r); i++)
		found |= !strcmp(simhash_store_results_get(r, i)->id, id);
	return found;
}

/* Whether no query at distance 0 of fp finds id. */
static int unfound(simhash_store *st, simhash_store_results *r, const char *id, simhash_fp fp)
{
	if (simhash_store_query(st, &fp, 0, 0, r, NULL))
		return 0;
	for (size_t i = 0; i < simhash_store_results_count(r); i++)
		if (!strcmp(simhash_store_results_get(r, i)->id, id))
			return 0;
	return 1;
}

/* Whether id is gone: no get, and no query at distance 0 of fp finds it. */
static int absent(simhash_store *st, simhash_store_results *r, const char *id, simhash_fp fp)
{
	if (simhash_store_get(st, id, strlen(id), r, NULL) || simhash_store_results_count(r))
		return 0;
	return unfound(st, r, id, fp);
}

static int check_after_replay(simhash_store *st, simhash_store_results *r)
{
	int bad = 0;
	char id[16];

	for (int i = 0; i < N_A; i++) {
		snprintf(id, sizeof id, "a%d", i);
		if (i < 100 || i >= 150 ? (i < 500 ? !absent(st, r, id, fp_of(id))
						   : !present(st, r, id, fp_of(id)))
					: !present(st, r, id, fp_new(id)) || !unfound(st, r, id, fp_of(id))) {
			fprintf(stderr, "after the replay: %s wrong\n", id);
			bad++;
		}
	}
	for (int i = 0; i < N_B; i++) {
		snprintf(id, sizeof id, "b%d", i);
		if (!present(st, r, id, fp_of(id))) {
			fprintf(stderr, "after the replay: %s missing\n", id);
			bad++;
		}
	}
	return bad;
}

static void test_crash_after_checkpoint_replays_the_changes(void)
{
	simhash_store_stats s = { .size = sizeof s };
	simhash_store_results *r;
	simhash_config cfg;
	simhash_store *st;
	uint64_t n_problems = 1;
	int fds[2], status;
	char ok[4] = "";
	pid_t pid;

	snprintf(dir, sizeof dir, "/tmp/test_store_ckpt.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof path, "%s/s.db", dir);
	simhash_config_init(&cfg);
	CHECK(simhash_store_create(path, &cfg, &st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(simhash_store_results_new(&r) == SIMHASH_OK);
	CHECK(pipe(fds) == 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		ckpt_child(fds[1]);
	}
	close(fds[1]);
	waitpid(pid, &status, 0);
	CHECK(read(fds[0], ok, 3) == 3 && !strcmp(ok, "ok\n"));
	if (WIFEXITED(status))
		fprintf(stderr, "the checkpoint child exited %d\n", WEXITSTATUS(status));
	close(fds[0]);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		goto out;
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	/* mapped and replayed: 100 deletions, 50 replacements (a deletion and
	 * an addition each), 300 additions, 350 expired */
	CHECK_EQ_U64(s.open_replayed, 100 + 2 * 50 + 300 + 350);
	CHECK_EQ_U64(s.n_docs, N_A - 100 - 350 + N_B);
	CHECK_EQ_U64(check_after_replay(st, r), 0);
	CHECK(simhash_store_verify(st, NULL, NULL, &n_problems, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n_problems, 0);
	/* a clean close with no checkpoint due saves none: the next open
	 * replays the same changes, and after a checkpoint none */
	simhash_store_close(st);
	CHECK(simhash_store_open(path, 0, &st, NULL) == SIMHASH_OK);
	if (!st)
		goto out;
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.open_replayed, 100 + 2 * 50 + 300 + 350);
	CHECK(simhash_store_checkpoint(st, NULL) == SIMHASH_OK);
	simhash_store_close(st);
	CHECK(simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, NULL) == SIMHASH_OK);
	if (!st)
		goto out;
	CHECK(simhash_store_stats_get(st, &s, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(s.open_replayed, 0);
	CHECK_EQ_U64(check_after_replay(st, r), 0);
	n_problems = 1;
	CHECK(simhash_store_verify(st, NULL, NULL, &n_problems, NULL) == SIMHASH_OK);
	CHECK_EQ_U64(n_problems, 0);
	simhash_store_close(st);
out:
	simhash_store_results_free(r);
	{
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
}

TEST_MAIN("store_durability", TEST(test_acknowledged_writes_survive_sigkill),
	  TEST(test_crash_after_checkpoint_replays_the_changes))
