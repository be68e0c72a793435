/* plan.c - chooses an index layout from width, k, n, bit bias and memory.
 *
 * For each split into m chunks (m from bits/64 up to k + 1) the model counts,
 * per query, the bucket look-ups (probes: sum over probed tables of the chunk
 * values within the table's radius) and the fingerprints compared
 * (candidates: the expected number of stored fingerprints in those buckets).
 * With bit i equal to 1 with probability p_i, two random fingerprints agree on
 * bit i with probability c_i = p_i^2 + (1-p_i)^2 and differ with d_i = 1 - c_i,
 * so a bucket at j flipped bits of a chunk holds about n * prod(c) * (d/c)^j
 * of them: biased bits make buckets fuller, and the model picks fewer, wider
 * chunks with radius probing instead. The cost is
 *     probes * PROBE_NS + candidates * CAND_NS      (MIH; a probe costs
 *                                                    PROBE_CACHED_NS when the
 *                                                    directory stays in cache,
 *                                                    PROBE_SEARCH_NS into a
 *                                                    chunk wider than it)
 *     n * SCAN_NS                                    (scan)
 * with constants measured by bench/index (docs/algorithms.md); the cheapest
 * layout within the memory budget wins, the scan when nothing beats it. */
#include <limits.h>
#include <math.h>
#include <string.h>
#include "ix.h"

#define PROBE_NS SH_IX_PROBE_NS
#define PROBE_SEARCH_NS SH_IX_PROBE_SEARCH_NS
#define QUERY_NS SH_IX_QUERY_NS
#define CAND64_NS SH_IX_CAND64_NS
#define CAND128_NS SH_IX_CAND128_NS

static double binom(unsigned n, unsigned j)
{
	double r = 1;
	for (unsigned i = 1; i <= j; i++)
		r = r * (n - j + i) / i;
	return r;
}

static double layout_bytes(unsigned bits, uint64_t n, unsigned n_tables, const unsigned *w)
{
	double bytes = (double)n * 8; /* ids */

	if (n_tables == 0)
		return bytes + (double)n * (bits / 8);
	for (unsigned t = 0; t < n_tables; t++) /* a copy of each fingerprint, its row, a directory */
		bytes += (double)n * (bits / 8 + 4) + 4.0 * (double)((UINT64_C(1) << sh_ix_dir_bits(w[t], n)) + 1);
	return bytes;
}

/* The MIH plan with m chunks for p[bits] (probability of a 1 per bit). */
static void plan_m(unsigned bits, unsigned k, uint64_t n, const double *p, unsigned m,
		   simhash_index_plan *c)
{
	double cand_ns = bits == 64 ? CAND64_NS : CAND128_NS, probe_ns = 0;
	unsigned start = 0;

	memset(c, 0, sizeof *c);
	c->layout = SIMHASH_LAYOUT_MIH;
	c->bits = bits, c->k = k, c->n = n, c->n_chunks = m;
	c->n_tables = m < k + 1 ? m : k + 1;
	for (unsigned t = 0; t < m; t++) {
		unsigned w = bits / m + (t < bits % m);
		double e0 = (double)n, rho = 0;
		for (unsigned b = start; b < start + w; b++) {
			double ci = p[b] * p[b] + (1 - p[b]) * (1 - p[b]);
			e0 *= ci;
			rho += (1 - ci) / (ci > 1e-9 ? ci : 1e-9);
		}
		rho /= w;
		c->chunk_bits[t] = w;
		start += w;
		c->radius[t] = t < c->n_tables ? sh_ix_radius(m, k, t) : UINT_MAX;
		if (c->radius[t] == UINT_MAX)
			continue;
		for (unsigned j = 0; j <= c->radius[t] && j <= w; j++) {
			double pr = binom(w, j);
			c->probes += pr;
			probe_ns += pr * sh_ix_probe_ns(sh_ix_dir_bits(w, n), w);
			c->candidates += pr * e0 * pow(rho, j);
		}
	}
	c->query_ns = QUERY_NS + probe_ns + c->candidates * cand_ns;
	c->scan_ns = sh_ix_scan_ns(bits, n);
	c->memory = (uint64_t)layout_bytes(bits, n, c->n_tables, c->chunk_bits);
	c->bytes_per_fp = n ? (double)c->memory / (double)n : 0;
}

static void plan_scan(unsigned bits, unsigned k, uint64_t n, simhash_index_plan *c)
{
	memset(c, 0, sizeof *c);
	c->layout = SIMHASH_LAYOUT_SCAN;
	c->bits = bits, c->k = k, c->n = n;
	c->candidates = (double)n;
	c->query_ns = c->scan_ns = sh_ix_scan_ns(bits, n);
	c->memory = (uint64_t)layout_bytes(bits, n, 0, NULL);
	c->bytes_per_fp = n ? (double)c->memory / (double)n : 0;
}

/* The cheapest plan within memory (0: no limit). */
static void plan_bits(unsigned bits, unsigned k, uint64_t n, const double *p, uint64_t memory,
		      simhash_index_plan *out)
{
	simhash_index_plan best, c;

	plan_scan(bits, k, n, &best);
	for (unsigned m = bits / 64; m <= sh_ix_max_chunks(bits, k) && n > 0; m++) {
		plan_m(bits, k, n, p, m, &c);
		if (memory && c.memory > memory)
			continue;
		if (c.query_ns < best.query_ns)
			best = c;
	}
	*out = best;
}

double sh_ix_scan_ns(unsigned bits, uint64_t n)
{
	return QUERY_NS + (double)n * (bits == 64 ? SH_IX_SCAN64_NS : SH_IX_SCAN128_NS);
}

unsigned sh_ix_max_chunks(unsigned bits, unsigned k)
{
	unsigned m = k + 1;
	if (m > SIMHASH_PLAN_MAX_TABLES)
		m = SIMHASH_PLAN_MAX_TABLES;
	return m < bits / 64 ? bits / 64 : m;
}

simhash_err simhash_index_plan_make(unsigned bits, unsigned k, uint64_t n, double p_one,
				    uint64_t memory, simhash_index_plan *out)
{
	double p[128];

	simhash_index_plan plan;

	if (!out || (bits != 64 && bits != 128) || !(p_one >= 0 && p_one <= 1) ||
	    k > (bits == 64 ? SIMHASH_INDEX_MAX_DIST_64 : SIMHASH_INDEX_MAX_DIST_128) ||
	    n > UINT32_MAX)
		return SIMHASH_EINVAL;
	for (unsigned b = 0; b < bits; b++)
		p[b] = p_one;
	plan_bits(bits, k, n, p, memory, &plan);
	plan.size = sizeof plan;
	return sh_results_copy(out, &plan, sizeof plan, sizeof plan);
}

simhash_err sh_ix_plan_data(unsigned bits, unsigned k, const uint64_t *fps, size_t n,
			    simhash_layout force, unsigned force_m, simhash_index_plan *out)
{
	unsigned words = bits / 64;
	size_t step = n > 65536 ? n / 65536 : 1, seen = 0;
	uint32_t ones[128] = {0};
	double p[128];

	if (force == SIMHASH_LAYOUT_SCAN) {
		plan_scan(bits, k, n, out);
		return SIMHASH_OK;
	}
	for (size_t i = 0; i < n; i += step, seen++)
		for (unsigned b = 0; b < bits; b++)
			ones[b] += (uint32_t)(fps[i * words + (b >> 6)] >> (b & 63) & 1);
	for (unsigned b = 0; b < bits; b++)
		p[b] = seen ? (double)ones[b] / (double)seen : 0.5;
	if (force == SIMHASH_LAYOUT_MIH && force_m)
		plan_m(bits, k, n, p, force_m, out);
	else
		plan_bits(bits, k, n, p, 0, out);
	return SIMHASH_OK;
}
