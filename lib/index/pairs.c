/* pairs.c - every pair of fingerprints within Hamming distance k: the
 * self-join of one set and the join of two, exact, on several threads.
 *
 * Workload: millions to hundreds of millions of fingerprints, k small (3 is
 * typical for 64 bits), few pairs; real fingerprints have biased bits (each
 * 1 with p ~ 0.72), so some prefixes are far more common than others.
 *
 * Method (pigeonhole over blocks, Manku et al. 2007, applied recursively):
 * split the bits into b > k blocks. Two fingerprints within k differ in at
 * most k blocks, so they agree on all blocks of at least one choice of b - k
 * blocks. For each such choice (a "table") the set is permuted so the chosen
 * blocks form the top bits (the prefix), sorted by the prefix, and only
 * fingerprints with equal prefixes are compared. b is chosen per level by a
 * cost model: tables * (sort cost * n + n^2 / 2^(prefix bits + 1)).
 *
 * Invariants:
 *  1. Exactness. Within a run of equal prefix all differences lie in the
 *     remaining (free) bits, so a run too big to compare pair by pair is
 *     split the same way over its free bits (a level of its own), with the
 *     same k: the pigeonhole argument holds again. Recursion ends when all
 *     pairs are compared, which always happens for small runs, for runs of
 *     equal fingerprints (no free bits left), at MAX_DEPTH, and for a run
 *     that stays concentrated under a level's first table (its sub-runs
 *     hold over a quarter of the pairs: the level would multiply the work
 *     by its tables instead of dividing it; the run is compared pair by
 *     pair once, before the level reports anything).
 *  2. Each pair once. A pair is reported only by the first table (in the
 *     fixed order of the choices) on whose prefix it agrees, at every level:
 *     at table t the masks of the choices before t are kept (permuted along
 *     with the data), and a pair equal on one of them is skipped. The pair is
 *     thus found in exactly one leaf.
 *  3. Order. Elements enter each table in input order and every sort is
 *     stable, so within a run i < j means idx_i < idx_j: a pair comes out as
 *     (first in input, second). The pairs are then sorted by (a, b), so the
 *     result does not depend on the number of threads.
 *  4. Memory: the input (borrowed) plus one table of 12 bytes (20 at 128
 *     bits) per fingerprint, rebuilt for each choice in turn (tables are
 *     streamed, never held at once), per-thread scratch for the largest
 *     bucket, and the pairs.
 *
 * Threads: the top level of each table is a parallel MSD radix pass (each
 * thread histograms and scatters its share of the input; the first digit is
 * the top d1 bits of the prefix); the buckets are then taken in chunks by
 * whichever thread is free, sorted by the rest of the prefix in cache, and
 * their runs compared or split.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#if SH_X86
#include <immintrin.h>
#endif

#define MAX_BLOCKS 64
#define MAX_TABLES 256
#define MAX_DEPTH 8
/* Fingerprints per thread below which threads cost more than they save:
 * every table costs each thread four barrier waits, which a busy machine can
 * stretch to a scheduler time slice each. */
#define MIN_PER_THREAD 32768
#define SMALL_RUN 48      /* runs up to this size are compared pair by pair */
#define SORT_DIGIT 11     /* bits per LSD pass */
#define TOP_DIGIT_MAX 11 /* buckets of the parallel scatter: few enough for the TLB */
#define BUCKET_CHUNK 64   /* top-level buckets a thread takes at a time */
/* The cost model, in nanoseconds as measured here: one element in one table
 * (a parallel scatter pass, out of cache), in one sub-table (in cache), and
 * one pair compared (8 at a time with AVX-512 VPOPCNTQ). */
#define TOP_SORT_COST 30.0
#define SUB_SORT_COST 10.0
#define CMP_COST(job) ((job)->simd ? 0.15 : 1.0)

struct sh_pair_rec {
	uint32_t a, b, d;
};

struct sh_pairs_out {
	struct sh_pair_rec *p;
	size_t n, cap;
};

static int sh_pairs_out_add(struct sh_pairs_out *o, uint32_t a, uint32_t b, unsigned d)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		struct sh_pair_rec *p = realloc(o->p, cap * sizeof(*p));
		if (!p)
			return -1;
		o->p = p;
		o->cap = cap;
	}
	o->p[o->n].a = a;
	o->p[o->n].b = b;
	o->p[o->n].d = d;
	o->n++;
	return 0;
}

static int sh_pairs_out_append(struct sh_pairs_out *o, const struct sh_pairs_out *from)
{
	if (!from->n)
		return 0;
	if (o->cap - o->n < from->n) {
		size_t cap = o->n + from->n;
		struct sh_pair_rec *p = realloc(o->p, cap * sizeof(*p));
		if (!p)
			return -1;
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->n, from->p, from->n * sizeof(*o->p));
	o->n += from->n;
	return 0;
}

struct sh_pairs_job {
	const uint64_t *a, *b;
	size_t n;   /* elements in all */
	size_t n_a; /* join: elements of a (those of b follow); self-join: 0 */
	unsigned bits, k, n_threads;
	int no_simd; /* tests: the scalar path */
	int force_threads; /* tests: threads however small the set */
	int simd; /* the CPU has AVX-512 VPOPCNTQ (64-bit compares only) */
	int popcnt; /* the CPU has the popcnt instruction */
};

#define SH_AVX512_POPCNT __attribute__((target("avx512f,avx512vpopcntdq,popcnt")))

#define WORD uint64_t
#define WORD_BITS 64
#define SFX(name) name##_64
#define POPCNT(x) ((unsigned)__builtin_popcountll(x))
#include "pairs_impl.h"
#undef WORD
#undef WORD_BITS
#undef SFX
#undef POPCNT

#define WORD unsigned __int128
#define WORD_BITS 128
#define SFX(name) name##_128
#define POPCNT(x) ((unsigned)__builtin_popcountll((uint64_t)(x)) + \
		   (unsigned)__builtin_popcountll((uint64_t)((x) >> 64)))
#include "pairs_impl.h"
#undef WORD
#undef WORD_BITS
#undef SFX
#undef POPCNT

static int by_a_b(const void *x, const void *y)
{
	const struct sh_pair_rec *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/* Below this many pairs, qsort: the radix sort's 512 KiB of counters, made
 * and cleared four times, cost more (a cluster job joins millions of small
 * groups, each a call). */
#define SORT_PAIRS_RADIX 4096

/* Sorts pairs by (a, b): LSD radix on the 64-bit key, 16 bits a pass. */
static int sort_pairs(struct sh_pairs_out *o)
{
	struct sh_pair_rec *tmp, *src = o->p, *dst;
	size_t i, n = o->n, *count;
	unsigned pass;

	if (n < 2)
		return 0;
	if (n < SORT_PAIRS_RADIX) { /* (a, b) are distinct: any sort gives this order */
		qsort(o->p, n, sizeof(*o->p), by_a_b);
		return 0;
	}
	tmp = malloc(n * sizeof(*tmp));
	count = malloc(((size_t)1 << 16) * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -1;
	}
	dst = tmp;
	for (pass = 0; pass < 4; pass++) {
		unsigned sh = (pass & 1) * 16;
		size_t sum = 0, c;
		memset(count, 0, ((size_t)1 << 16) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((pass < 2 ? src[i].b : src[i].a) >> sh) & 0xffff]++;
		for (i = 0; i < ((size_t)1 << 16); i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[((pass < 2 ? src[i].b : src[i].a) >> sh) & 0xffff]++] = src[i];
		{
			struct sh_pair_rec *t = src;
			src = dst;
			dst = t;
		}
	}
	/* four passes: the result is back in o->p */
	free(tmp);
	free(count);
	return 0;
}

static simhash_err run_join(struct sh_pairs_job *job, simhash_pair **out, size_t *n_out)
{
	struct sh_pairs_out res = { 0 };
	simhash_pair *pairs;
	simhash_err err;
	size_t i;

	if (job->n_threads == 0)
		job->n_threads = 1;
	if (job->n_threads > 256)
		job->n_threads = 256;
	if (job->n_threads > 1 && !job->force_threads &&
	    job->n < (size_t)MIN_PER_THREAD * job->n_threads)
		job->n_threads = 1; /* not worth a thread */
	job->popcnt = !job->no_simd && sh_cpu_has(SH_CPU_POPCNT);
	job->simd = job->bits != 128 && job->popcnt &&
		    sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512VPOPCNTDQ);
	err = job->bits == 128 ? join_128(job, &res) : join_64(job, &res);
	if (!err && sort_pairs(&res))
		err = SIMHASH_ENOMEM;
	if (err) {
		free(res.p);
		return err;
	}
	pairs = malloc((res.n ? res.n : 1) * sizeof(*pairs));
	if (!pairs) {
		free(res.p);
		return SIMHASH_ENOMEM;
	}
	for (i = 0; i < res.n; i++) {
		pairs[i].a = res.p[i].a;
		pairs[i].b = job->n_a ? res.p[i].b - job->n_a : res.p[i].b;
		pairs[i].dist = res.p[i].d;
	}
	free(res.p);
	*out = pairs;
	*n_out = res.n;
	return SIMHASH_OK;
}

static int bad_width_or_k(unsigned bits, unsigned max_dist)
{
	return (bits != 32 && bits != 64 && bits != 128) || max_dist > bits / 4;
}

simhash_err simhash_pairs_self(const uint64_t *fps, size_t n, unsigned bits, unsigned max_dist,
			       unsigned n_threads, simhash_pair **out, size_t *n_out)
{
	struct sh_pairs_job job = { .a = fps, .n = n, .bits = bits, .k = max_dist,
				    .n_threads = n_threads };

	if (!out || !n_out || (n && !fps) || bad_width_or_k(bits, max_dist) ||
	    (uint64_t)n >= ((uint64_t)1 << 32))
		return SIMHASH_EINVAL;
	return run_join(&job, out, n_out);
}

simhash_err sh_pairs_self_path(const uint64_t *fps, size_t n, unsigned bits, unsigned max_dist,
			       unsigned n_threads, int simd, simhash_pair **out, size_t *n_out)
{
	struct sh_pairs_job job = { .a = fps, .n = n, .bits = bits, .k = max_dist,
				    .n_threads = n_threads, .no_simd = !simd, .force_threads = 1 };

	if (!out || !n_out || (n && !fps) || bad_width_or_k(bits, max_dist) ||
	    (uint64_t)n >= ((uint64_t)1 << 32))
		return SIMHASH_EINVAL;
	return run_join(&job, out, n_out);
}

simhash_err simhash_pairs_join(const uint64_t *a, size_t n_a, const uint64_t *b, size_t n_b,
			       unsigned bits, unsigned max_dist, unsigned n_threads,
			       simhash_pair **out, size_t *n_out)
{
	struct sh_pairs_job job = { .a = a, .b = b, .n = n_a + n_b, .n_a = n_a, .bits = bits,
				    .k = max_dist, .n_threads = n_threads };

	if (!out || !n_out || (n_a && !a) || (n_b && !b) || bad_width_or_k(bits, max_dist) ||
	    (uint64_t)n_a + n_b >= ((uint64_t)1 << 32))
		return SIMHASH_EINVAL;
	if (!n_a || !n_b) {
		*out = malloc(sizeof(**out));
		*n_out = 0;
		return *out ? SIMHASH_OK : SIMHASH_ENOMEM;
	}
	return run_join(&job, out, n_out);
}

void simhash_pairs_free(simhash_pair *pairs)
{
	free(pairs);
}
