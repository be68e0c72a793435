/* gen_fps.c - random fingerprints in the text form, for the pairs benchmarks.
 *
 * Usage: gen_fps N P SEED > fps.tsv
 * N lines `HEX<TAB>ID` of 64-bit fingerprints whose bits are 1 with
 * probability P (0.5: uniform; 0.72: like real English fingerprints); one line
 * in 100 is a near-duplicate of an earlier line (0 to 4 bits flipped). Ids are
 * "d" and the line number. Deterministic for a given SEED.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state;

static uint64_t rnd(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* 64 bits each 1 with probability p, from 16-bit thresholds. */
static uint64_t biased(double p)
{
	uint64_t w = 0, r = 0;
	unsigned thr = (unsigned)(p * 65536.0);

	if (p == 0.5)
		return rnd();
	for (int i = 0; i < 64; i++) {
		if (i % 4 == 0)
			r = rnd();
		if ((unsigned)(r & 0xffff) < thr)
			w |= 1ull << i;
		r >>= 16;
	}
	return w;
}

int main(int argc, char **argv)
{
	static const char hex[] = "0123456789abcdef";
	uint64_t n, i, *recent;
	double p;
	char line[64];

	if (argc != 4) {
		fprintf(stderr, "usage: gen_fps N P SEED\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	p = atof(argv[2]);
	state = strtoull(argv[3], NULL, 10);
	recent = calloc(4096, sizeof(*recent));
	for (i = 0; i < n; i++) {
		uint64_t v;
		int len, j;

		if (i > 4096 && rnd() % 100 == 0) {
			v = recent[rnd() % 4096];
			for (unsigned f = (unsigned)(rnd() % 5); f; f--)
				v ^= 1ull << (rnd() % 64);
		} else {
			v = biased(p);
		}
		recent[i % 4096] = v;
		for (j = 0; j < 16; j++)
			line[j] = hex[v >> (60 - 4 * j) & 15];
		len = 16 + snprintf(line + 16, sizeof(line) - 16, "\td%llu\n", (unsigned long long)i + 1);
		fwrite(line, 1, (size_t)len, stdout);
	}
	free(recent);
	return 0;
}
