/* sketch.c - the per-document work of `simhash dedup`'s default before the
 * join: simhash_near_sketch() of every line of FILE (near_data.py's 300,000
 * short lines), one thread, with the vector paths (the sort of the keys in
 * registers, the keys of one-byte runs eight per vector, and the contexts'
 * own: normalization's) and, as the in-run baseline, without any of them
 * (sh_sketch_set_simd(nd, 0): the portable paths).
 * Both must give the same keys: a checksum of every sketch is compared, and
 * a difference fails the run.
 *
 * Usage: sketch FILE
 * Prints, for each path, the best of five rounds (interleaved) in CPU time,
 * lines per second and MB per second, then the ratio.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "simhash.h"

void sh_sketch_set_simd(simhash_near *nd, int on);

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sketches every line of buf; *sum gets a checksum of the keys and kinds.
 * Returns the number of lines, or -1 if a sketch failed. */
static long sketch_lines(simhash_near *nd, const char *buf, size_t len, uint64_t *sum)
{
	const char *p = buf, *end = buf + len;
	uint64_t h = 0xcbf29ce484222325ull;
	long n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		simhash_sketch sk;
		if (simhash_near_sketch(nd, p, l, &sk) != SIMHASH_OK)
			return -1;
		for (size_t i = 0; i < sk.n_keys; i++)
			h = (h ^ sk.keys[i]) * 0x100000001b3ull;
		h = (h ^ ((uint64_t)sk.kind << 32 | sk.n_keys)) * 0x100000001b3ull;
		n++;
		p += l + 1;
	}
	*sum = h;
	return n;
}

int main(int argc, char **argv)
{
	simhash_near *nd[2] = { NULL, NULL }; /* [0] portable, [1] vector */
	double best[2] = { 1e30, 1e30 };
	uint64_t sum[2] = { 0, 0 };
	long n = 0;
	char *buf;
	size_t len;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: sketch FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (len = (size_t)ftell(f), fseek(f, 0, SEEK_SET))) {
		perror(argv[1]);
		return 1;
	}
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != len) {
		fprintf(stderr, "sketch: %s: cannot read\n", argv[1]);
		return 1;
	}
	fclose(f);
	if (simhash_near_new(&nd[0]) || simhash_near_new(&nd[1])) {
		fprintf(stderr, "sketch: out of memory\n");
		return 1;
	}
	sh_sketch_set_simd(nd[0], 0);
	for (int round = 0; round < 5; round++)
		for (int v = 0; v < 2; v++) {
			double t0 = cpu_now(), t;
			n = sketch_lines(nd[v], buf, len, &sum[v]);
			t = cpu_now() - t0;
			if (n < 0) {
				fprintf(stderr, "sketch: a sketch failed\n");
				return 1;
			}
			if (t < best[v])
				best[v] = t;
		}
	for (int v = 0; v < 2; v++)
		printf("sketch %-8s %7.3f s cpu  %9.0f lines/s  %6.1f MB/s\n",
		       v ? "vector" : "portable", best[v], (double)n / best[v],
		       (double)len / 1e6 / best[v]);
	printf("sketch vector / portable: %.2fx faster, keys %s\n", best[0] / best[1],
	       sum[0] == sum[1] ? "identical" : "DIFFER");
	simhash_near_free(nd[0]);
	simhash_near_free(nd[1]);
	free(buf);
	return sum[0] == sum[1] ? 0 : 1;
}
