/* kernels.h - what the Hamming index shares with the PostgreSQL extension
 * (pg/): the scan kernels with their CPU dispatch (scan.c), and the choice of
 * radii when a query probes disjoint blocks of the fingerprint (radius.c).
 * Prefix sh_ix_, never exported: the extension links libsimhash.a and
 * includes this header beside postgres.h, so it holds plain C types only.
 *
 * Each kernel and each radius rule exists once: lib/index/mih.c probes with
 * them, pg/simhash_scan.c scans its pages and probes its tables with them,
 * pg/simhash_gin.c spreads its radii with them. */
#ifndef SH_IX_KERNELS_H
#define SH_IX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* ---- scan.c: the scan kernels. Each writes the positions i < n (n <= 65536)
 * whose distance to q is <= k to pos, in increasing order, and returns how
 * many; every variant gives exactly the scalar one's output (the tests run
 * each on the same vectors). */

/* Rows: fps holds n fingerprints of `words` words each (1: 64 bits, 2: 128),
 * one after another, as the index stores them. */
typedef size_t (*sh_ix_scan_fn)(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k,
				uint32_t *pos);
/* Columns: word 0 of the n fingerprints in w0, word 1 in w1 (NULL for 64
 * bits), as the extension's data pages store them. */
typedef size_t (*sh_ix_cols_fn)(const uint64_t *w0, const uint64_t *w1, size_t n, const uint64_t *q,
				unsigned k, uint32_t *pos);

/* One variant of the kernels: what it needs of the CPU, and its functions. */
typedef struct sh_ix_kernels {
	const char *name;       /* "scalar", "avx2", "avx512" */
	unsigned cpu;           /* the SH_CPU_* features it needs (sh_cpu_has) */
	sh_ix_scan_fn scan64, scan128;
	sh_ix_cols_fn cols;
} sh_ix_kernels;

/* Every variant compiled in, the portable scalar one first, the fastest
 * last; *n of them. Outside x86 only the scalar one. */
const sh_ix_kernels *sh_ix_kernel_list(size_t *n);
/* 1 if this CPU runs kv. */
int sh_ix_kernel_usable(const sh_ix_kernels *kv);
/* The fastest variant this CPU runs. */
const sh_ix_kernels *sh_ix_kernel_best(void);

/* ---- radius.c: radii for probing disjoint blocks.
 *
 * The pigeonhole rule: give each block t of a fingerprint a radius r_t >= -1
 * (-1: not probed) with sum (r_t + 1) >= k + 1. A fingerprint farther than r_t
 * from the query in every probed block t is at least sum (r_t + 1) >= k + 1
 * away, so every fingerprint within k is within r_t in some block t. */

/* The even split: with k = r m + a (0 <= a < m), radius r for blocks 0..a and
 * r - 1 for the others; UINT_MAX where that is -1 (not probed). */
unsigned sh_ix_radius(unsigned m, unsigned k, unsigned t);

/* The cost of probing block t with radius r (r >= 0); not probing costs 0. */
typedef double (*sh_ix_radius_cost_fn)(void *arg, unsigned t, unsigned r);

/* Spreads the k + 1 units of the rule over n blocks, one at a time, to the
 * block whose next radius adds the least cost; ties go to the first block in
 * the circular order first, first + 1, ... Block t's radius stays <= rmax[t].
 * radius[0..n) gets -1 .. rmax[t]; returns the units placed: k + 1, or fewer
 * when the rmax cannot hold them (then the rule does not hold). */
unsigned sh_ix_radii_greedy(unsigned n, unsigned k, const unsigned *rmax, unsigned first,
			    sh_ix_radius_cost_fn cost, void *arg, int *radius);

/* Values within r of a width-bit value: sum of C(width, i), i <= r. */
double sh_ix_ball(unsigned width, unsigned r);

#endif
