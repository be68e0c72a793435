/* test_radius.c - the radius rules of lib/index/radius.c, which the index
 * (mih_query.c, plan.c) and the PostgreSQL extension (simhash_scan,
 * simhash_gin) all use: the even split and the greedy split keep the
 * pigeonhole rule (sum (r_t + 1) = k + 1, each r_t within its bounds), the
 * even split equals its closed form, and the greedy split gives every unit
 * to the block whose next radius costs least (checked against a reference
 * that tries every block). Seeded PRNG; the seed is printed on failure. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "test.h"
#include "../../lib/index/kernels.h"

#define SEED 0x7ad105ull

/* The even split for every m (blocks) and k: sum (r_t + 1) = k + 1, radii
 * differ by at most one, the larger ones first; and it equals
 * (k + 1) / m + (t < (k + 1) % m) - 1, the extension's former formula. */
static void test_even_split_keeps_the_rule(void)
{
	for (unsigned m = 1; m <= 33; m++)
		for (unsigned k = 0; k <= 128; k++) {
			unsigned units = 0;
			int prev = INT_MAX;
			for (unsigned t = 0; t < m; t++) {
				unsigned r = sh_ix_radius(m, k, t);
				int ri = r == UINT_MAX ? -1 : (int)r;
				int closed = (int)((k + 1) / m) + (t < (k + 1) % m) - 1;
				CHECK(ri == closed);
				CHECK(ri <= prev && (prev == INT_MAX || prev - ri <= 1));
				prev = ri;
				units += (unsigned)(ri + 1);
			}
			CHECK(units == k + 1);
		}
}

typedef struct table_cost {
	double c[8][40]; /* c[t][r]: a cost per radius, increasing in r */
} table_cost;

static double cost_of(void *arg, unsigned t, unsigned r)
{
	return ((const table_cost *)arg)->c[t][r];
}

/* The greedy split against a reference written out here: at each unit, the
 * block (in circular order from `first`, the first on a tie) whose next
 * radius adds least; also that the rule holds and rmax is kept, and that a
 * split the rmax cannot hold says so. */
static void test_greedy_split_takes_the_cheapest_step(void)
{
	table_cost tc;
	unsigned rmax[8];
	int r[8], want[8];

	for (int round = 0; round < 2000; round++) {
		unsigned n = 1 + (unsigned)(test_rnd() % 8), k = (unsigned)(test_rnd() % 40);
		unsigned first = (unsigned)(test_rnd() % n), cap = 0, placed;
		for (unsigned t = 0; t < n; t++) {
			double c = 0;
			rmax[t] = (unsigned)(test_rnd() % 39);
			cap += rmax[t] + 1;
			for (unsigned j = 0; j < 40; j++) {
				/* small integers: ties are common and must go by order */
				c += (double)(test_rnd() % (round % 2 ? 4 : 1000));
				tc.c[t][j] = c;
			}
		}
		placed = sh_ix_radii_greedy(n, k, rmax, first, cost_of, &tc, r);
		for (unsigned t = 0; t < n; t++)
			want[t] = -1;
		for (unsigned u = 0; u < k + 1; u++) {
			unsigned best = UINT_MAX;
			double best_step = 0;
			for (unsigned i = 0; i < n; i++) {
				unsigned t = (first + i) % n;
				if (want[t] + 1 > (int)rmax[t])
					continue;
				double step = tc.c[t][want[t] + 1] - (want[t] < 0 ? 0 : tc.c[t][want[t]]);
				if (best == UINT_MAX || step < best_step)
					best = t, best_step = step;
			}
			if (best == UINT_MAX)
				break;
			want[best]++;
		}
		unsigned units = 0;
		for (unsigned t = 0; t < n; t++) {
			CHECK(r[t] == want[t]);
			CHECK(r[t] >= -1 && r[t] <= (int)rmax[t]);
			units += (unsigned)(r[t] + 1);
		}
		CHECK(units == placed);
		CHECK(placed == (k + 1 < cap ? k + 1 : cap));
		if (t_cur_failed) {
			fprintf(stderr, "seed %#llx round %d n %u k %u first %u\n",
				(unsigned long long)SEED, round, n, k, first);
			return;
		}
	}
}

/* sh_ix_ball counts the values within r of a width-bit value. */
static void test_ball_counts_values(void)
{
	for (unsigned w = 1; w <= 12; w++)
		for (unsigned r = 0; r <= 14; r++) {
			unsigned count = 0;
			for (unsigned v = 0; v < (1u << w); v++)
				count += (unsigned)__builtin_popcount(v) <= r;
			CHECK(sh_ix_ball(w, r) == (double)count);
		}
	CHECK(sh_ix_ball(32, 3) == 1.0 + 32 + 496 + 4960);
}

int main(void)
{
	static const struct test_case cases[] = {
		TEST(test_even_split_keeps_the_rule),
		TEST(test_greedy_split_takes_the_cheapest_step),
		TEST(test_ball_counts_values),
	};
	test_rnd_seed(SEED);
	return test_run("radius", cases, sizeof cases / sizeof cases[0]);
}
