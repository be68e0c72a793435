/* radius.c - how a query spreads its distance k over disjoint blocks of the
 * fingerprint, for every index that probes blocks: the MIH tables (mih.c,
 * mih_query.c, plan.c, file.c), and the extension's simhash_scan tables and
 * GIN keys (pg/).
 *
 * Invariant: every set of radii given out here keeps the pigeonhole rule of
 * kernels.h, sum (r_t + 1) >= k + 1 over the blocks, so a probe of each block
 * t within r_t of the query's block finds every fingerprint within k. The
 * even split gives exactly k + 1; the greedy split says how many units it
 * placed, and its caller falls back to the even split when that is short.
 *
 * Workload: once per query and segment (or per GIN query), a few dozen cost
 * evaluations; nothing here allocates. */
#include <assert.h>
#include <limits.h>
#include "kernels.h"

#define MAX_BLOCKS 64

unsigned sh_ix_radius(unsigned m, unsigned k, unsigned t)
{
	unsigned r = k / m, a = k % m;
	if (t <= a)
		return r;
	return r ? r - 1 : UINT_MAX;
}

unsigned sh_ix_radii_greedy(unsigned n, unsigned k, const unsigned *rmax, unsigned first,
			    sh_ix_radius_cost_fn cost, void *arg, int *radius)
{
	double cur[MAX_BLOCKS]; /* the cost of each block's radius so far */
	unsigned have = 0;

	assert(n > 0 && n <= MAX_BLOCKS);
	for (unsigned t = 0; t < n; t++)
		radius[t] = -1, cur[t] = 0;
	while (have < k + 1) {
		unsigned best = UINT_MAX;
		double best_step = 0, best_cost = 0;
		for (unsigned i = 0; i < n; i++) {
			unsigned t = (first + i) % n, r = (unsigned)(radius[t] + 1);
			double c, step;
			if (r > rmax[t])
				continue;
			c = cost(arg, t, r);
			step = c - cur[t];
			if (best == UINT_MAX || step < best_step)
				best = t, best_step = step, best_cost = c;
		}
		if (best == UINT_MAX)
			break;
		radius[best]++;
		cur[best] = best_cost;
		have++;
	}
	return have;
}

double sh_ix_ball(unsigned width, unsigned r)
{
	double c = 1, total = 1;

	for (unsigned i = 1; i <= r && i <= width; i++) {
		c = c * (width - i + 1) / i;
		total += c;
	}
	return total;
}
