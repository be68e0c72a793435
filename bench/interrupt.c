/* interrupt.c - what the interrupt hook (simhash_ctx_set_interrupt) costs and
 * how soon it stops a call, for bench/interrupt.sh.
 *
 * Usage: interrupt OPTIONS FILE...
 * OPTIONS: name=value pairs of simhash_config_set(), ';'-separated ("" for
 * the defaults). The files are read into memory first (no I/O is timed).
 *
 *  1. Cost: every file fingerprinted by one ctx without a hook and with a
 *     hook that never fires (asked at the default interval), alternately,
 *     RUNS (5) times each; prints the best CPU time of each and their ratio.
 *     The fingerprints must agree (else exit 1).
 *  2. Latency: the files joined into one text, fingerprinted whole twice
 *     (the second call's time counts: the first warms caches and tables);
 *     then nine times with a thread raising the hook's flag at 10%, 20%,
 *     ... 90% of the whole call's time, and the CPU
 *     time the call still took after the flag was raised (the calling
 *     thread's clock, read by the other thread at that moment): prints the
 *     median and the maximum, in ms, and how many of the calls stopped.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "simhash.h"
#include "readall.h"

static volatile int flag;
static clockid_t caller_clock;
static double flag_cpu, flag_after;

static double seconds(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int hook(void *arg)
{
	(void)arg;
	return flag;
}

static void *raise_flag(void *arg)
{
	(void)arg;
	usleep((useconds_t)(flag_after * 1e6));
	flag_cpu = seconds(caller_clock);
	flag = 1;
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static simhash_ctx *new_ctx(const char *opts, int with_hook)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	char *s = strdup(opts), *save = NULL;

	simhash_config_init(&cfg);
	for (char *tok = strtok_r(s, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq++ = '\0';
		if (simhash_config_set(&cfg, tok, eq)) {
			fprintf(stderr, "interrupt: bad option %s\n", tok);
			exit(2);
		}
	}
	simhash_config_settle_features(&cfg, strstr(opts, "features") != NULL);
	free(s);
	if (simhash_ctx_new(&cfg, &ctx) ||
	    (with_hook && simhash_ctx_set_interrupt(ctx, hook, NULL))) {
		fprintf(stderr, "interrupt: no ctx for '%s'\n", opts);
		exit(2);
	}
	return ctx;
}

/* CPU seconds to fingerprint every text; *digest gets the XOR of the bits. */
static double all_texts(simhash_ctx *ctx, unsigned char **texts, size_t *lens, int n,
			uint64_t *digest)
{
	double t0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	simhash_fp fp;

	*digest = 0;
	for (int i = 0; i < n; i++) {
		if (simhash_fingerprint(ctx, (const char *)texts[i], lens[i], &fp, NULL)) {
			fprintf(stderr, "interrupt: fingerprint failed\n");
			exit(1);
		}
		*digest ^= fp.w[0] * (uint64_t)(i + 1) ^ fp.w[1];
	}
	return seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
}

int main(int argc, char **argv)
{
	int n = argc - 2, runs = getenv("RUNS") ? atoi(getenv("RUNS")) : 5, stopped = 0;
	unsigned char **texts = calloc((size_t)(n > 0 ? n : 1), sizeof *texts);
	size_t *lens = calloc((size_t)(n > 0 ? n : 1), sizeof *lens), total = 0, cap;
	double best_plain = 1e9, best_hook = 1e9, whole, end, late[9];
	simhash_ctx *hooked;
	uint64_t d1, d2;
	char *joined;
	simhash_fp fp;

	(void)each_file; /* readall.h's loop, for the other baselines */
	if (argc < 3) {
		fprintf(stderr, "usage: interrupt OPTIONS FILE...\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		cap = 1 << 16;
		texts[i] = malloc(cap);
		if (!texts[i] || read_all(argv[i + 2], &texts[i], &cap, &lens[i]))
			return 1;
		total += lens[i];
	}
	hooked = new_ctx(argv[1], 1);
	/* one ctx, its hook set and removed in turn: two ctxs measured each
	 * other's cache traffic (up to 5% apart either way) */
	for (int r = 0; r < runs; r++) {
		double a, b;
		simhash_ctx_set_interrupt(hooked, NULL, NULL);
		a = all_texts(hooked, texts, lens, n, &d1);
		simhash_ctx_set_interrupt(hooked, hook, NULL);
		b = all_texts(hooked, texts, lens, n, &d2);
		if (d1 != d2) {
			fprintf(stderr, "interrupt: the hook changed a fingerprint\n");
			return 1;
		}
		best_plain = a < best_plain ? a : best_plain;
		best_hook = b < best_hook ? b : best_hook;
	}

	joined = malloc(total + (size_t)n);
	total = 0;
	for (int i = 0; i < n; i++) {
		memcpy(joined + total, texts[i], lens[i]);
		total += lens[i];
		if (i + 1 < n)
			joined[total++] = '\n';
	}
	pthread_getcpuclockid(pthread_self(), &caller_clock);
	/* the second of two whole calls: the first warms caches and tables */
	flag = 0;
	for (int k = 0; k < 2; k++) {
		whole = seconds(CLOCK_MONOTONIC);
		simhash_fingerprint(hooked, joined, total, &fp, NULL);
		whole = seconds(CLOCK_MONOTONIC) - whole;
	}
	for (int p = 0; p < 9; p++) {
		pthread_t th;
		simhash_err err;
		flag = 0;
		flag_after = whole * (p + 1) / 10;
		pthread_create(&th, NULL, raise_flag, NULL);
		err = simhash_fingerprint(hooked, joined, total, &fp, NULL);
		end = seconds(caller_clock);
		pthread_join(th, NULL);
		/* a call that ended before the flag had nothing to wait for */
		if (err == SIMHASH_EINTR)
			late[stopped++] = (end - flag_cpu) * 1e3;
	}
	qsort(late, (size_t)stopped, sizeof *late, cmp_double);
	/* plain hooked ratio bytes whole_ms stopped median_ms max_ms */
	printf("%.4f %.4f %.4f %zu %.0f %d %.1f %.1f\n", best_plain, best_hook,
	       best_hook / best_plain, total, whole * 1e3, stopped,
	       stopped ? late[stopped / 2] : 0.0, stopped ? late[stopped - 1] : 0.0);
	simhash_ctx_free(hooked);
	for (int i = 0; i < n; i++)
		free(texts[i]);
	free(texts);
	free(lens);
	free(joined);
	return 0;
}
