/* test_pairs.c - the all-pairs join against a brute-force reference: every k
 * at 32, 64 and 128 bits, uniform, biased (p = 0.72) and clustered sets with
 * pairs planted at every distance 0..k+1 and runs of identical fingerprints,
 * one to three threads, self-join and join; then clusters. Seeded PRNG; the
 * seed is printed on failure. */
#include <stdint.h>
#include "simhash.h"
#include "common/internal.h"
#include "test.h"

static uint64_t seed = 20261122, rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A word whose bits are 1 with probability p (0.5: uniform). */
static uint64_t rnd_word(double p)
{
	uint64_t w = 0;

	if (p == 0.5)
		return rnd();
	for (int i = 0; i < 64; i++)
		if ((double)(rnd() >> 11) / 9007199254740992.0 < p)
			w |= 1ull << i;
	return w;
}

/* Flips d distinct random bits among the low `bits` of fp (nw words). */
static void flip(uint64_t *fp, unsigned bits, unsigned d)
{
	uint64_t done[2] = { 0, 0 };

	while (d) {
		unsigned b = (unsigned)(rnd() % bits);
		if (done[b / 64] >> (b % 64) & 1)
			continue;
		done[b / 64] |= 1ull << (b % 64);
		fp[b / 64] ^= 1ull << (b % 64);
		d--;
	}
}

enum dist { UNIFORM, BIASED, CLUSTERED };

/* n fingerprints of `bits`: random under d, with pairs planted at every
 * distance 0..k+1 and, for CLUSTERED, a few big clusters around centers and a
 * run of identical fingerprints. */
static uint64_t *make_set(size_t n, unsigned bits, enum dist d, unsigned k)
{
	unsigned nw = bits == 128 ? 2 : 1;
	uint64_t *fps = calloc(n * nw, sizeof(*fps));
	uint64_t lowmask = bits == 32 ? 0xffffffffull : ~0ull;
	size_t i;

	for (i = 0; i < n; i++) {
		for (unsigned w = 0; w < nw; w++)
			fps[i * nw + w] = rnd_word(d == BIASED ? 0.72 : 0.5);
		fps[i * nw] &= lowmask;
	}
	/* planted pairs: a copy of an earlier one at each distance 0..k+1 */
	for (i = n / 2; i < n; i += 3) {
		size_t src = rnd() % (n / 2);
		memcpy(&fps[i * nw], &fps[src * nw], nw * sizeof(*fps));
		flip(&fps[i * nw], bits, (unsigned)((i / 3) % (k + 2)));
	}
	if (d == CLUSTERED) {
		for (unsigned c = 0; c < 4; c++) {
			size_t center = rnd() % n, m = 150 + rnd() % 200;
			for (size_t j = 0; j < m; j++) {
				size_t at = rnd() % n;
				memcpy(&fps[at * nw], &fps[center * nw], nw * sizeof(*fps));
				flip(&fps[at * nw], bits, (unsigned)(rnd() % (k + 3)));
			}
		}
		/* a run of identical fingerprints */
		for (size_t j = 0; j < 80; j++)
			memcpy(&fps[(rnd() % n) * nw], &fps[0], nw * sizeof(*fps));
	}
	return fps;
}

static unsigned dist(const uint64_t *a, const uint64_t *b, unsigned nw)
{
	unsigned d = 0;
	for (unsigned w = 0; w < nw; w++)
		d += (unsigned)__builtin_popcountll(a[w] ^ b[w]);
	return d;
}

/* The brute-force reference of a self-join (b == NULL) or join, sorted by (a, b). */
static simhash_pair *brute(const uint64_t *a, size_t n_a, const uint64_t *b, size_t n_b,
			   unsigned bits, unsigned k, size_t *n_out)
{
	unsigned nw = bits == 128 ? 2 : 1;
	size_t cap = 1024, n = 0;
	simhash_pair *p = malloc(cap * sizeof(*p));

	for (size_t i = 0; i < n_a; i++)
		for (size_t j = b ? 0 : i + 1; j < (b ? n_b : n_a); j++) {
			unsigned d = dist(&a[i * nw], b ? &b[j * nw] : &a[j * nw], nw);
			if (d > k)
				continue;
			if (n == cap)
				p = realloc(p, (cap *= 2) * sizeof(*p));
			p[n].a = i;
			p[n].b = j;
			p[n++].dist = d;
		}
	*n_out = n;
	return p;
}

static int same(const simhash_pair *x, size_t nx, const simhash_pair *y, size_t ny)
{
	if (nx != ny)
		return 0;
	for (size_t i = 0; i < nx; i++)
		if (x[i].a != y[i].a || x[i].b != y[i].b || x[i].dist != y[i].dist)
			return 0;
	return 1;
}

static void check_self(size_t n, unsigned bits, enum dist d, unsigned k)
{
	uint64_t *fps = make_set(n, bits, d, k);
	simhash_pair *want, *got;
	size_t n_want, n_got;

	want = brute(fps, n, NULL, 0, bits, k, &n_want);
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		got = NULL;
		/* one thread: the scalar compare; three: SIMD where the CPU has it */
		CHECK(sh_pairs_self_path(fps, n, bits, k, threads, threads > 1, &got, &n_got) ==
		      SIMHASH_OK);
		if (!got || !same(want, n_want, got, n_got)) {
			fprintf(stderr, "self-join differs: seed %llu n %zu bits %u dist %d k %u "
				"threads %u: %zu pairs, brute force %zu\n", (unsigned long long)seed,
				n, bits, (int)d, k, threads, got ? n_got : 0, n_want);
			t_cur_failed++;
		}
		simhash_pairs_free(got);
	}
	free(want);
	free(fps);
}

static void test_self_join_equals_brute_force(void)
{
	static const unsigned widths[] = { 32, 64, 128 };

	for (size_t wi = 0; wi < 3; wi++)
		for (unsigned k = 0; k <= widths[wi] / 4; k++)
			for (int d = UNIFORM; d <= CLUSTERED; d++) {
				rng_state = seed + k * 7 + (unsigned)d * 1000 + wi * 100000;
				/* larger sets where the recursion and threads matter */
				check_self(k <= 4 ? 4000 : 1200, widths[wi], (enum dist)d, k);
			}
}

/* Most of the set one fingerprint, the rest one or two bits from it or
 * random: every table of every level keeps the bulk together. The join once
 * recursed into each table's copy of the bulk, a level deeper each time,
 * and ran for hours on 840 such 128-bit fingerprints at k = 3. */
static void test_concentrated_sets(void)
{
	static const unsigned widths[] = { 64, 128 }, ks[] = { 1, 3, 6, 10 };
	const size_t n = 900;

	for (size_t wi = 0; wi < 2; wi++)
		for (size_t ki = 0; ki < 4; ki++) {
			unsigned bits = widths[wi], k = ks[ki], nw = bits / 64;
			uint64_t *fps = malloc(n * nw * sizeof(*fps)), base[2];
			simhash_pair *want, *got = NULL;
			size_t n_want, n_got = 0;

			rng_state = seed + 555 + bits * 31 + k;
			base[0] = rnd();
			base[1] = rnd();
			for (size_t i = 0; i < n; i++) {
				uint64_t r = rnd() % 10;
				memcpy(&fps[i * nw], base, nw * sizeof(*fps));
				if (r >= 7 && r < 9)
					flip(&fps[i * nw], bits, 1 + (unsigned)(r - 7));
				else if (r == 9)
					for (unsigned w = 0; w < nw; w++)
						fps[i * nw + w] = rnd();
			}
			want = brute(fps, n, NULL, 0, bits, k, &n_want);
			CHECK(sh_pairs_self_path(fps, n, bits, k, 2, 1, &got, &n_got) == SIMHASH_OK);
			CHECK(got && same(want, n_want, got, n_got));
			simhash_pairs_free(got);
			free(want);
			free(fps);
		}
}

static void test_join_equals_brute_force(void)
{
	static const unsigned widths[] = { 64, 128 };

	for (size_t wi = 0; wi < 2; wi++)
		for (unsigned k = 0; k <= widths[wi] / 4; k += 3)
			for (int d = UNIFORM; d <= CLUSTERED; d++) {
				unsigned nw = widths[wi] == 128 ? 2 : 1;
				size_t n = 3000, na = 1100;
				uint64_t *fps;
				simhash_pair *want, *got = NULL;
				size_t n_want, n_got;

				rng_state = seed + k + (unsigned)d * 33 + wi * 999;
				fps = make_set(n, widths[wi], (enum dist)d, k);
				want = brute(fps, na, fps + na * nw, n - na, widths[wi], k, &n_want);
				CHECK(simhash_pairs_join(fps, na, fps + na * nw, n - na, widths[wi], k,
							 2, &got, &n_got) == SIMHASH_OK);
				if (!got || !same(want, n_want, got, n_got)) {
					fprintf(stderr, "join differs: seed %llu bits %u dist %d k %u\n",
						(unsigned long long)seed, widths[wi], d, k);
					t_cur_failed++;
				}
				simhash_pairs_free(got);
				free(want);
				free(fps);
			}
}

static void test_limits(void)
{
	uint64_t fp[2] = { 1, 2 };
	simhash_pair *p = NULL;
	size_t n;

	CHECK(simhash_pairs_self(fp, 1, 64, 17, 1, &p, &n) == SIMHASH_EINVAL);
	CHECK(simhash_pairs_self(fp, 1, 128, 33, 1, &p, &n) == SIMHASH_EINVAL);
	CHECK(simhash_pairs_self(fp, 1, 32, 9, 1, &p, &n) == SIMHASH_EINVAL);
	CHECK(simhash_pairs_self(fp, 1, 48, 1, 1, &p, &n) == SIMHASH_EINVAL);
	CHECK(simhash_pairs_self(fp, 0, 64, 3, 1, &p, &n) == SIMHASH_OK && n == 0);
	simhash_pairs_free(p);
	CHECK(simhash_pairs_join(fp, 1, fp, 0, 64, 3, 1, &p, &n) == SIMHASH_OK && n == 0);
	simhash_pairs_free(p);
	/* identical fingerprints are distance-0 pairs */
	fp[1] = fp[0];
	CHECK(simhash_pairs_self(fp, 2, 64, 0, 1, &p, &n) == SIMHASH_OK && n == 1);
	CHECK(p && p[0].a == 0 && p[0].b == 1 && p[0].dist == 0);
	simhash_pairs_free(p);
}

static void test_clusters_are_components_led_by_first_member(void)
{
	/* edges 4-2, 2-7, 0-5, 5-1; 3, 6 alone */
	simhash_pair pairs[] = { { 2, 4, 1 }, { 2, 7, 1 }, { 0, 5, 0 }, { 1, 5, 2 } };
	uint64_t c[8], want[8] = { 0, 0, 2, 3, 2, 0, 6, 2 };

	CHECK(simhash_clusters(8, pairs, 4, c) == SIMHASH_OK);
	for (int i = 0; i < 8; i++)
		CHECK_EQ_U64(c[i], want[i]);
	pairs[0].b = 8;
	CHECK(simhash_clusters(8, pairs, 4, c) == SIMHASH_EINVAL);
}

/* Random graphs: union-find agrees with a label propagation to a fixpoint. */
static void test_clusters_match_label_propagation(void)
{
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + rnd() % 60, m = rnd() % 80, i;
		simhash_pair *p = calloc(m + 1, sizeof(*p));
		uint64_t *c = calloc(n, sizeof(*c)), *l = calloc(n, sizeof(*l));
		int changed = 1;

		for (i = 0; i < m; i++) {
			p[i].a = rnd() % n;
			p[i].b = rnd() % n;
		}
		for (i = 0; i < n; i++)
			l[i] = i;
		while (changed) {
			changed = 0;
			for (i = 0; i < m; i++) {
				uint64_t x = l[p[i].a] < l[p[i].b] ? l[p[i].a] : l[p[i].b];
				if (l[p[i].a] != x || l[p[i].b] != x)
					changed = 1;
				l[p[i].a] = l[p[i].b] = x;
			}
		}
		CHECK(simhash_clusters(n, p, m, c) == SIMHASH_OK);
		for (i = 0; i < n; i++)
			CHECK_EQ_U64(c[i], l[i]);
		free(p);
		free(c);
		free(l);
	}
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		TEST(test_self_join_equals_brute_force),
		TEST(test_join_equals_brute_force),
		TEST(test_concentrated_sets),
		TEST(test_limits),
		TEST(test_clusters_are_components_led_by_first_member),
		TEST(test_clusters_match_label_propagation),
	};
	if (argc > 1)
		seed = strtoull(argv[1], NULL, 10);
	return test_run("pairs", cases, sizeof(cases) / sizeof(cases[0]));
}
