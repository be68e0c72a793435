/* pg_gen.c - rows for bench/pg.sh: N 64-bit fingerprints as COPY text lines
 * "id<TAB>hex<TAB>bigint<TAB>{keys}", each bit 1 with probability P (0.5:
 * uniform; 0.72: biased), of which 10% are planted near-copies of an earlier
 * row with 0..10 bits flipped. keys are the plain-SQL block trick's int4
 * (block number << 16 | 16-bit block value), the baseline of the benchmark.
 *
 * usage: pg_gen N P SEED */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t random_fp(uint64_t *s, double p)
{
	uint64_t v = 0, r = 0, limit = (uint64_t)(p * 65536.0 + 0.5);
	int i;

	if (p == 0.5)
		return splitmix(s);
	for (i = 0; i < 64; i++) {
		if (i % 4 == 0)
			r = splitmix(s);
		v |= (uint64_t)((r & 0xffff) < limit) << i;
		r >>= 16;
	}
	return v;
}

int main(int argc, char **argv)
{
	long n, i;
	double p;
	uint64_t seed, *rows, v;
	int j, flips;

	if (argc != 4) {
		fprintf(stderr, "usage: pg_gen N P SEED\n");
		return 2;
	}
	n = atol(argv[1]);
	p = atof(argv[2]);
	seed = strtoull(argv[3], NULL, 10);
	rows = malloc(sizeof(*rows) * (size_t)(n > 0 ? n : 1));
	if (!rows || n <= 0)
		return 1;
	for (i = 0; i < n; i++) {
		if (i > 10 && splitmix(&seed) % 10 == 0) {
			v = rows[splitmix(&seed) % (uint64_t)i];
			flips = (int)(splitmix(&seed) % 11);
			for (j = 0; j < flips; j++)
				v ^= 1ull << (splitmix(&seed) % 64);
		} else {
			v = random_fp(&seed, p);
		}
		rows[i] = v;
		printf("%ld\t%016" PRIx64 "\t%" PRId64 "\t{%u,%u,%u,%u}\n", i + 1, v, (int64_t)v,
		       (unsigned)(v & 0xffff), (unsigned)(1 << 16 | ((v >> 16) & 0xffff)),
		       (unsigned)(2 << 16 | ((v >> 32) & 0xffff)),
		       (unsigned)(3 << 16 | ((v >> 48) & 0xffff)));
	}
	free(rows);
	return 0;
}
