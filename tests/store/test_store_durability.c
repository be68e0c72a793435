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
		if (a->t % 2 ? simhash_store_check_and_put(a->st, &d, 2, 1, 0, r, &added)
			     : simhash_store_put(a->st, &d))
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

	if (simhash_store_open(path, 0, &st, NULL, 0))
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
		if (simhash_store_get(st, line, strlen(line), r) != SIMHASH_OK ||
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
	char err[SIMHASH_STORE_ERR_MAX];
	size_t n_acked = 0;

	rng_state = SEED;
	snprintf(dir, sizeof dir, "/tmp/test_store_dur.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof path, "%s/s.db", dir);
	simhash_config_init(&cfg);
	CHECK(simhash_store_create(path, &cfg, &st, NULL, 0) == SIMHASH_OK);
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
		if (simhash_store_open(path, 0, &st, err, sizeof err) != SIMHASH_OK)
			fprintf(stderr, "reopen after SIGKILL: %s\n", err);
		CHECK(st != NULL);
		if (!st) {
			close(fds[0]);
			break;
		}
		CHECK(!check_acked(fds[0], got > 0 ? (size_t)got : 0, st, r, &n_acked));
		close(fds[0]);
		CHECK(simhash_store_verify(st, NULL, NULL, &n_problems) == SIMHASH_OK);
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

TEST_MAIN("store_durability", TEST(test_acknowledged_writes_survive_sigkill))
