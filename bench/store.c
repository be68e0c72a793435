/* store.c - `make bench` figures of the store (bench/store.sh runs it):
 *
 *   store open N PATH          make a store of N documents (random 64-bit
 *                              fingerprints, 12-byte ids, no metadata), take
 *                              a checkpoint and close it, then time: open with the index
 *                              mapped; open after a crash (a child process
 *                              makes n/16 - 1 changes, just below the
 *                              checkpoint threshold, and is SIGKILLed); open
 *                              with no usable checkpoint (PATH-index removed)
 *   store cap PATH T SECONDS   durable check-and-put (k 3) of short texts,
 *                              fingerprinted per thread, from T threads and,
 *                              as the baseline, from 1 (no group commit)
 *   store query PATH T SECONDS queries by fingerprint (k 3) from T threads;
 *                              baseline: the bare index on the same data
 *   store sum PATH N           the cost of the records' checksums (format
 *                              version 3): N gets by id on PATH (made by
 *                              open), and N puts of documents with 200
 *                              bytes of metadata in batches of 1,000 to a
 *                              new store, against the XXH3 passes of the
 *                              same bytes the checksums cost, in the same run
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "simhash.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void die(const char *what, simhash_store *st, simhash_err e)
{
	(void)st; /* the detail of a failed call is the call's: the code says enough here */
	fprintf(stderr, "store bench: %s: %s\n", what, simhash_strerror(e));
	exit(1);
}

static simhash_store *open_rw(const char *path)
{
	simhash_error err;
	simhash_store *st;
	simhash_err e = simhash_store_open(path, 0, &st, &err);

	if (e) {
		fprintf(stderr, "store bench: %s\n", err.msg);
		exit(1);
	}
	return st;
}

static long peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/* Adds documents first..first+n-1 in batches of 50000. */
static void add_range(simhash_store *st, uint64_t first, uint64_t n)
{
	enum { BATCH = 50000 };
	simhash_store_doc *docs = calloc(BATCH, sizeof *docs);
	char (*ids)[16] = calloc(BATCH, 16);
	simhash_err e;

	for (uint64_t i = first; i < first + n; i += BATCH) {
		size_t m = first + n - i < BATCH ? (size_t)(first + n - i) : BATCH;

		for (size_t j = 0; j < m; j++) {
			snprintf(ids[j], 16, "d%011llu", (unsigned long long)(i + j));
			docs[j] = (simhash_store_doc){ ids[j], 12, { { mix(i + j), 0 }, 64 }, NULL, 0, 0 };
		}
		if ((e = simhash_store_put_many(st, docs, m, NULL)))
			die("put", st, e);
	}
	free(docs);
	free(ids);
}

/* The crash: a child opens the store, deletes n_del of the first documents
 * and adds n_add new ones (each acknowledged, durable), then is killed with
 * SIGKILL: no close, so no checkpoint of those changes. */
static void crash_after_changes(const char *path, uint64_t n, uint64_t n_del, uint64_t n_add)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		simhash_store *st = open_rw(path);

		for (uint64_t i = 0; i < n_del; i++) {
			char id[32];
			simhash_err e;

			snprintf(id, sizeof id, "d%011llu", (unsigned long long)(i * 7));
			if ((e = simhash_store_delete(st, id, 12, NULL, NULL)))
				die("delete", st, e);
		}
		add_range(st, n, n_add);
		raise(SIGKILL);
	}
	waitpid(pid, &status, 0);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
		fprintf(stderr, "store bench: the crashing child failed\n");
		exit(1);
	}
}

static void time_open(const char *path, const char *what)
{
	simhash_store_stats s = { .size = sizeof s };
	struct rusage r0, r1;
	simhash_store *st;
	double t0, t1, cpu;

	getrusage(RUSAGE_SELF, &r0);
	t0 = now();
	st = open_rw(path);
	t1 = now();
	getrusage(RUSAGE_SELF, &r1);
	cpu = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e-6 +
	      (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6;
	simhash_store_stats_get(st, &s, NULL);
	printf("store open: %s: %.3f s (cpu %.3f s) for %llu documents, ", what, t1 - t0, cpu,
	       (unsigned long long)s.n_docs);
	if (s.open_replayed == UINT64_MAX)
		printf("index rebuilt from every document\n");
	else
		printf("checkpoint mapped, %llu changes replayed\n", (unsigned long long)s.open_replayed);
	fflush(stdout);
	t0 = now();
	simhash_store_close(st);
	if (now() - t0 > 0.5) {
		printf("store open: close (index saved) %.2f s\n", now() - t0);
		fflush(stdout);
	}
}

static int bench_open(uint64_t n, const char *path)
{
	uint64_t n_del = n / 10000, n_add = n / 16 - n_del - 1;
	simhash_config cfg;
	simhash_store *st;
	char idx[4096];
	double t0, t1;
	simhash_err e;

	simhash_config_init(&cfg);
	if ((e = simhash_store_create(path, &cfg, &st, NULL)))
		die("create", NULL, e);
	t0 = now();
	add_range(st, 0, n);
	t1 = now();
	printf("store open: generated %llu documents in %.1f s (%.0f docs/s, batches of 50000, "
	       "checkpoints in the background)\n",
	       (unsigned long long)n, t1 - t0, n / (t1 - t0));
	t0 = now();
	if ((e = simhash_store_checkpoint(st, NULL)))
		die("checkpoint", st, e);
	printf("store open: checkpoint %.2f s\n", now() - t0);
	t0 = now();
	simhash_store_close(st);
	printf("store open: close %.2f s\n", now() - t0);
	fflush(stdout);
	time_open(path, "after a clean close");
	printf("store open: method of the crash: a child process opens the store, deletes %llu "
	       "and adds %llu documents (n/16 - 1 changes, the most a checkpoint lets pass), "
	       "each acknowledged, then is killed with SIGKILL (no close)\n",
	       (unsigned long long)n_del, (unsigned long long)n_add);
	fflush(stdout);
	crash_after_changes(path, n, n_del, n_add);
	time_open(path, "after a crash (SIGKILL)");
	snprintf(idx, sizeof idx, "%s-index", path);
	unlink(idx);
	time_open(path, "with no usable checkpoint (PATH-index removed)");
	printf("store open: peak RSS %ld MB\n", peak_rss_mb());
	return 0;
}

struct cap_arg {
	simhash_store *st;
	int t;
	volatile int *stop;
	uint64_t n, dups;
};

static void *cap_thread(void *p)
{
	struct cap_arg *a = p;
	simhash_store_results *r;
	simhash_config cfg;
	simhash_ctx *ctx;
	simhash_err e;

	simhash_config_init(&cfg);
	simhash_store_config(a->st, &cfg, NULL);
	if (simhash_ctx_new(&cfg, &ctx) || simhash_store_results_new(&r))
		exit(1);
	while (!*a->stop) {
		char text[160], id[32];
		simhash_store_doc d = { id, 0, { { 0, 0 }, 0 }, NULL, 0, 0 };
		uint64_t x = mix(((uint64_t)a->t << 40) + a->n);
		int added, len;

		/* a short text, about a tweet: 100-odd bytes */
		len = snprintf(text, sizeof text,
			       "breaking: item %llx reported near station %llu, details follow "
			       "at %llu; more updates later today",
			       (unsigned long long)x, (unsigned long long)(x >> 40),
			       (unsigned long long)(x & 0xffff));
		d.id_len = (size_t)snprintf(id, sizeof id, "c%d-%llu", a->t, (unsigned long long)a->n);
		simhash_fingerprint(ctx, text, (size_t)len, &d.fp, NULL);
		if ((e = simhash_store_check_and_put(a->st, &d, 3, 10, 0, r, &added, NULL)))
			die("check_and_put", a->st, e);
		a->dups += simhash_store_results_count(r) > 0;
		a->n++;
	}
	simhash_store_results_free(r);
	simhash_ctx_free(ctx);
	return NULL;
}

static double run_cap(simhash_store *st, int threads, double seconds, uint64_t *commits)
{
	struct cap_arg *a = calloc((size_t)threads, sizeof *a);
	pthread_t *th = calloc((size_t)threads, sizeof *th);
	simhash_store_stats s0 = { .size = sizeof s0 }, s1 = { .size = sizeof s1 };
	volatile int stop = 0;
	uint64_t n = 0;
	double t0, t1;

	simhash_store_stats_get(st, &s0, NULL);
	t0 = now();
	for (int t = 0; t < threads; t++) {
		a[t] = (struct cap_arg){ st, t + threads * 1000, &stop, 0, 0 };
		pthread_create(&th[t], NULL, cap_thread, &a[t]);
	}
	usleep((useconds_t)(seconds * 1e6));
	stop = 1;
	for (int t = 0; t < threads; t++) {
		pthread_join(th[t], NULL);
		n += a[t].n;
	}
	t1 = now();
	simhash_store_stats_get(st, &s1, NULL);
	*commits = s1.n_commits - s0.n_commits;
	free(a);
	free(th);
	return n / (t1 - t0);
}

static int bench_cap(const char *path, int threads, double seconds)
{
	simhash_store *st = open_rw(path);
	simhash_store_stats s = { .size = sizeof s };
	uint64_t c1, cn;
	double base, rate;

	simhash_store_stats_get(st, &s, NULL);
	base = run_cap(st, 1, seconds, &c1);
	rate = run_cap(st, threads, seconds, &cn);
	printf("store check-and-put (durable, k 3, short texts, %llu stored): "
	       "%d threads %.0f docs/s (%.1f per fsync), 1 thread %.0f docs/s: ratio %.1f\n",
	       (unsigned long long)s.n_docs, threads, rate, rate * seconds / (cn ? cn : 1), base,
	       rate / base);
	simhash_store_close(st);
	return 0;
}

struct q_arg {
	simhash_store *st;
	simhash_index *ix;
	int t;
	volatile int *stop;
	uint64_t n, hits;
};

static void *q_thread(void *p)
{
	struct q_arg *a = p;
	simhash_store_results *r;
	simhash_matches m = { 0 };

	simhash_store_results_new(&r);
	while (!*a->stop) {
		/* a stored fingerprint (document i of bench_open) with 2 bits flipped */
		uint64_t i = mix(a->n * 7 + (uint64_t)a->t) % 1000000;
		simhash_fp fp = { { mix(i) ^ 0x11, 0 }, 64 };

		if (a->ix) {
			simhash_index_query(a->ix, &fp, 3, &m);
			a->hits += m.n;
		} else {
			simhash_store_query(a->st, &fp, 3, 0, r, NULL);
			a->hits += simhash_store_results_count(r);
		}
		a->n++;
	}
	simhash_matches_free(&m);
	simhash_store_results_free(r);
	return NULL;
}

static double run_q(simhash_store *st, simhash_index *ix, int threads, double seconds,
		    uint64_t *hits)
{
	struct q_arg a[64];
	pthread_t th[64];
	volatile int stop = 0;
	uint64_t n = 0;
	double t0 = now(), t1;

	*hits = 0;
	for (int t = 0; t < threads; t++) {
		a[t] = (struct q_arg){ st, ix, t, &stop, 0, 0 };
		pthread_create(&th[t], NULL, q_thread, &a[t]);
	}
	usleep((useconds_t)(seconds * 1e6));
	stop = 1;
	for (int t = 0; t < threads; t++) {
		pthread_join(th[t], NULL);
		n += a[t].n;
		*hits += a[t].hits;
	}
	t1 = now();
	return n / (t1 - t0);
}

static int bench_query(const char *path, int threads, double seconds)
{
	simhash_store *st = open_rw(path);
	simhash_store_stats s = { .size = sizeof s };
	uint64_t n, *fps, *ids, h1, h2;
	simhash_index *ix;
	double base, rate;

	simhash_store_stats_get(st, &s, NULL);
	n = s.n_docs < 1000000 ? s.n_docs : 1000000;
	fps = malloc(n * 8);
	ids = malloc(n * 8);
	for (uint64_t i = 0; i < n; i++) {
		fps[i] = mix(i);
		ids[i] = i;
	}
	simhash_index_new(64, 12, &ix); /* as the store's */
	simhash_index_build(ix, fps, ids, n, 2);
	base = run_q(NULL, ix, threads, seconds, &h1);
	rate = run_q(st, NULL, threads, seconds, &h2);
	printf("store query by fingerprint (k 3, %llu stored, %d threads): %.0f queries/s "
	       "(%.2f matches each); bare index %.0f queries/s: ratio %.2f\n",
	       (unsigned long long)s.n_docs, threads, rate, rate > 0 ? (double)h2 / (rate * seconds) : 0,
	       base, rate / base);
	simhash_index_free(ix);
	free(fps);
	free(ids);
	simhash_store_close(st);
	return 0;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

/* What a checksum of a record costs: XXH3 of the key, then of the value
 * seeded with it (lib/store/record.c). */
static uint64_t rec_sum(const void *key, size_t klen, const void *val, size_t len, uint64_t t)
{
	return XXH3_64bits_withSeed(val, len, XXH3_64bits_withSeed(key, klen, 0x5348524543534d31ull ^ t));
}

/* The checksums a get (ids record, docs record) or a put (the same two,
 * written) of a document with id_len and meta_len bytes computes. */
static uint64_t doc_sums(const char *id, size_t id_len, const uint8_t *rec, size_t meta_len)
{
	return rec_sum(id, id_len, rec, 8, 3) ^ rec_sum(rec, 8, rec, 32 + id_len + meta_len, 2);
}

static int bench_sum(const char *path, uint64_t n)
{
	simhash_store_results *r;
	simhash_store *st;
	simhash_config cfg;
	simhash_store_doc *docs = calloc(1000, sizeof *docs);
	char (*ids)[24] = calloc(1000, 24), meta[201], tmp[4096];
	simhash_error err;
	char fixed_id[24] = "d00000000000";
	static uint8_t rec[32 + 16 + 201];
	uint64_t acc = 0, n_docs;
	double c0, get_cpu, sum_cpu, put_cpu, put_wall;
	simhash_store_stats s = { .size = sizeof s };
	simhash_err e;

	if ((e = simhash_store_open(path, SIMHASH_STORE_RDONLY, &st, &err))) {
		fprintf(stderr, "store bench: %s\n", err.msg);
		return 1;
	}
	simhash_store_stats_get(st, &s, NULL);
	n_docs = s.n_docs ? s.n_docs : 1;
	simhash_store_results_new(&r);
	c0 = cpu_seconds();
	for (uint64_t i = 0; i < n; i++) {
		char id[24];

		snprintf(id, sizeof id, "d%011llu", (unsigned long long)(mix(i) % n_docs));
		if ((e = simhash_store_get(st, id, 12, r, NULL)))
			die("get", st, e);
		acc += simhash_store_results_count(r);
	}
	get_cpu = cpu_seconds() - c0;
	c0 = cpu_seconds();
	for (uint64_t i = 0; i < n; i++) {
		fixed_id[11] = (char)('0' + i % 10);
		rec[0] = (uint8_t)i;
		acc += doc_sums(fixed_id, 12, rec, 0);
	}
	sum_cpu = cpu_seconds() - c0;
	simhash_store_results_free(r);
	simhash_store_close(st);
	printf("store checksums: get by id: %.0f gets/s of CPU; the 2 checksums of a get alone: "
	       "%.0f ns of %.0f ns per get (%.1f%%) [%llu]\n", n / get_cpu, sum_cpu / n * 1e9,
	       get_cpu / n * 1e9, 100 * sum_cpu / get_cpu, (unsigned long long)(acc & 1));

	snprintf(tmp, sizeof tmp, "%s.sum", path);
	simhash_config_init(&cfg);
	if ((e = simhash_store_create(tmp, &cfg, &st, &err))) {
		fprintf(stderr, "store bench: %s\n", err.msg);
		return 1;
	}
	for (int j = 0; j < 200; j++)
		meta[j] = "0123456789abcdef"[mix((uint64_t)j) & 15];
	meta[200] = 0;
	c0 = cpu_seconds();
	put_wall = now();
	for (uint64_t i = 0; i < n; i += 1000) {
		size_t m = n - i < 1000 ? (size_t)(n - i) : 1000;

		for (size_t j = 0; j < m; j++) {
			snprintf(ids[j], 24, "p%011llu", (unsigned long long)(i + j));
			docs[j] = (simhash_store_doc){ ids[j], 12, { { mix(i + j), 0 }, 64 }, meta, 200, 0 };
		}
		if ((e = simhash_store_put_many(st, docs, m, NULL)))
			die("put", st, e);
	}
	put_cpu = cpu_seconds() - c0;
	put_wall = now() - put_wall;
	simhash_store_close(st);
	c0 = cpu_seconds();
	for (uint64_t i = 0; i < n; i++) {
		fixed_id[11] = (char)('0' + i % 10);
		rec[0] = (uint8_t)i;
		acc += doc_sums(fixed_id, 12, rec, 200);
	}
	sum_cpu = cpu_seconds() - c0;
	printf("store checksums: put (200-byte metadata, batches of 1,000): %.0f puts/s of CPU "
	       "(%.0f/s wall); the 2 checksums of a put alone: %.0f ns of %.0f ns per put (%.1f%%) [%llu]\n",
	       n / put_cpu, n / put_wall, sum_cpu / n * 1e9, put_cpu / n * 1e9,
	       100 * sum_cpu / put_cpu, (unsigned long long)(acc & 1));
	free(docs);
	free(ids);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "open"))
		return bench_open(strtoull(argv[2], NULL, 10), argv[3]);
	if (argc == 5 && !strcmp(argv[1], "cap"))
		return bench_cap(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "sum"))
		return bench_sum(argv[2], strtoull(argv[3], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "query"))
		return bench_query(argv[2], atoi(argv[3]) > 64 ? 64 : atoi(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: store open N PATH | cap PATH THREADS SECONDS | query PATH THREADS SECONDS | sum PATH N\n");
	return 2;
}
