/* sketch_sort.c - the sort of a near sketch's keys (near.c): n 64-bit keys
 * ascending, repeats dropped (a text's features are hashed with their
 * repeats) or, if asked, kept.
 *
 * Workload: one sort per text. Short texts, the bulk of `simhash dedup` on
 * lines, have 10 to 170 keys (300,000 lines cut from the shared corpora: 30
 * on average, 97 % of them at most 80); long texts have thousands.
 *
 * Two paths, the same keys (tests/fingerprint/test_near_sketch.c runs both
 * on random and crafted sets of 0 to 300 keys, and larger up to 40,000):
 *  - scalar, any n: insertion for a few; up to 32 Ki keys one stable scatter
 *    by the top bits and one insertion pass (the keys are hashes, so a key
 *    moves only within its digit, which holds about two); a pass that moves
 *    more than 8 n keys (keys sharing their top bits) gives way to an LSD
 *    radix sort by bytes, as do more than 32 Ki keys.
 *  - AVX-512 F, 6 to 128 keys: a bitonic sorting network in registers. The
 *    keys fill R = 1, 2, 4, 8 or 16 vectors of eight, padded with
 *    UINT64_MAX (which sorts last, so the first n after the sort are the
 *    keys); each merge stage of size s compares key i with key i ^ (s - 1)
 *    (blocks of s / 2 sorted, the second one mirrored), then i with i ^ j
 *    for j = s / 4 .. 1, the smaller to the lower index. Distances of eight
 *    or more pair whole vectors; shorter ones a vector with a permutation
 *    of itself. With four or eight vectors the first runs come cheaper:
 *    each lane is sorted across the vectors by a plain sorting network
 *    (whole vectors compared: eight keys per comparator), then rows and
 *    columns are exchanged, so that each vector holds sorted runs.
 *    Repeats are dropped on the way out: a key is kept when it differs
 *    from the one before it (vector compress).
 *  - AVX-512 F, 129 to 32 Ki keys (long texts): one scatter by the top
 *    bits into buckets of about 32 to 64 keys, each sorted as above.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "../common/internal.h"
#include "ctx.h"

/* ---- scalar */

/* Insertion sort of k[0..n); 0 (k then partly sorted) once the keys moved
 * pass `budget`. */
static int insertion(uint64_t *k, size_t n, size_t budget)
{
	size_t moved = 0;

	for (size_t i = 1; i < n; i++) {
		uint64_t v = k[i];
		size_t j = i;
		while (j > 0 && k[j - 1] > v) {
			k[j] = k[j - 1];
			j--;
		}
		k[j] = v;
		moved += i - j;
		if (moved > budget)
			return 0;
	}
	return 1;
}

/* LSD radix sort of k[0..n) by bytes, tmp holding n; eight passes leave the
 * keys back in k. */
static void radix(uint64_t *k, size_t n, uint64_t *tmp)
{
	uint64_t *from = k, *to = tmp;

	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[(from[i] >> shift & 0xff) + 1]++;
		for (unsigned b = 1; b <= 256; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++)
			to[count[from[i] >> shift & 0xff]++] = from[i];
		uint64_t *t = from;
		from = to;
		to = t;
	}
}

/* k[0..n) into tmp in order of their top `bits` bits, stable; count (room
 * for 2^bits + 1) ends holding where digit d ends at count[d]. */
static void scatter_top(const uint64_t *k, size_t n, unsigned bits, size_t *count, uint64_t *tmp)
{
	memset(count, 0, (((size_t)1 << bits) + 1) * sizeof *count);
	for (size_t i = 0; i < n; i++)
		count[(k[i] >> (64 - bits)) + 1]++;
	for (size_t d = 1; d <= ((size_t)1 << bits); d++)
		count[d] += count[d - 1];
	for (size_t i = 0; i < n; i++)
		tmp[count[k[i] >> (64 - bits)]++] = k[i];
}

/* Sorts n keys (tmp holds n) as the header says: about n / 2 digits of the
 * top bits, at most 4096. */
static void sort_scalar(uint64_t *k, size_t n, uint64_t *tmp)
{
	if (n <= 16) {
		insertion(k, n, SIZE_MAX);
		return;
	}
	if (n <= 32768) {
		size_t count[4097];
		int done;
		unsigned bits = 4;
		while (bits < 12 && ((size_t)1 << bits) < n / 2)
			bits++;
		scatter_top(k, n, bits, count, tmp);
		done = insertion(tmp, n, 8 * n);
		memcpy(k, tmp, n * sizeof *k);
		if (done)
			return;
	}
	radix(k, n, tmp);
}

/* Drops the repeats of the sorted k[0..n); how many stay. */
static size_t distinct_sorted(uint64_t *k, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (!m || k[i] != k[m - 1])
			k[m++] = k[i];
	return m;
}

/* ---- AVX-512 */

#if SH_X86
#include <immintrin.h>
#define SH_AVX512F __attribute__((target("avx512f")))
#define SH_INLINE __attribute__((target("avx512f"), always_inline)) static inline

/* The networks below pass their vectors by pointer to named locals, never
 * in an array, so that once inlined they stay in registers. */

/* The lanes of v compared with those of p = v permuted: lanes in hi_lanes
 * take the larger key of the two, the others the smaller. */
SH_INLINE __m512i exchange(__m512i v, __m512i p, __mmask8 hi_lanes)
{
	return _mm512_mask_blend_epi64(hi_lanes, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
}

/* Merge stage 8 inside a vector: its two halves sorted, the whole. */
SH_INLINE __m512i stage8(__m512i v)
{
	const __m512i rev = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);

	v = exchange(v, _mm512_permutexvar_epi64(rev, v), 0xf0);                 /* l ^ 7 */
	v = exchange(v, _mm512_permutex_epi64(v, 0x4e), 0xcc);                   /* l ^ 2 */
	return exchange(v, _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0x4e), 0xaa); /* l ^ 1 */
}

/* A vector's eight lanes sorted: merge stages 2, 4 and 8 inside it. */
SH_INLINE __m512i sort1(__m512i v)
{
	v = exchange(v, _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0x4e), 0xaa);    /* l ^ 1 */
	v = exchange(v, _mm512_permutex_epi64(v, 0x1b), 0xcc);                   /* l ^ 3 */
	v = exchange(v, _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0x4e), 0xaa);    /* l ^ 1 */
	return stage8(v);
}

/* The last steps of every stage, within a vector: lane l with lane l ^ j,
 * j = 4, 2, 1. */
SH_INLINE void clean1(__m512i *v)
{
	*v = exchange(*v, _mm512_shuffle_i64x2(*v, *v, 0x4e), 0xf0);
	*v = exchange(*v, _mm512_permutex_epi64(*v, 0x4e), 0xcc);
	*v = exchange(*v, _mm512_shuffle_epi32(*v, (_MM_PERM_ENUM)0x4e), 0xaa);
}

/* Whole vectors: *a gets the smaller of each lane, *b the larger. */
SH_INLINE void cx(__m512i *a, __m512i *b)
{
	__m512i lo = _mm512_min_epu64(*a, *b);

	*b = _mm512_max_epu64(*a, *b);
	*a = lo;
}

/* The mirror step across two vectors: lane l of *a with lane 7 - l of *b,
 * the smaller to *a. */
SH_INLINE void mx(__m512i *a, __m512i *b)
{
	const __m512i rev = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
	__m512i y = _mm512_permutexvar_epi64(rev, *b);

	*b = _mm512_permutexvar_epi64(rev, _mm512_max_epu64(*a, y));
	*a = _mm512_min_epu64(*a, y);
}

/* The steps of distance 8 r / 2 .. 1 over r vectors (a bitonic sequence
 * into order). */
SH_INLINE void clean2(__m512i *a, __m512i *b)
{
	cx(a, b);
	clean1(a);
	clean1(b);
}

SH_INLINE void clean4(__m512i *a, __m512i *b, __m512i *c, __m512i *d)
{
	cx(a, c);
	cx(b, d);
	clean2(a, b);
	clean2(c, d);
}

/* Sorting r vectors: two sorted halves, mirrored into one bitonic
 * sequence per half, then cleaned. */
SH_INLINE void sort2(__m512i *a, __m512i *b)
{
	*a = sort1(*a);
	*b = sort1(*b);
	mx(a, b);
	clean1(a);
	clean1(b);
}

/* Four vectors sorted: each lane across them (the five comparators for
 * four), so that with the rows and columns of each half exchanged each
 * vector holds two sorted runs of four; merged inside it, then the merge
 * stages of 2 and 4 vectors. */
SH_INLINE void sort4(__m512i *a, __m512i *b, __m512i *c, __m512i *d)
{
	__m512i a0, a1, a2, a3;

	cx(a, b);
	cx(c, d);
	cx(a, c);
	cx(b, d);
	cx(b, c);
	a0 = _mm512_unpacklo_epi64(*a, *b);
	a1 = _mm512_unpackhi_epi64(*a, *b);
	a2 = _mm512_unpacklo_epi64(*c, *d);
	a3 = _mm512_unpackhi_epi64(*c, *d);
	*a = stage8(_mm512_mask_permutex_epi64(a0, 0xcc, a2, 0x44));
	*c = stage8(_mm512_mask_permutex_epi64(a2, 0x33, a0, 0xee));
	*b = stage8(_mm512_mask_permutex_epi64(a1, 0xcc, a3, 0x44));
	*d = stage8(_mm512_mask_permutex_epi64(a3, 0x33, a1, 0xee));
	mx(a, b);
	mx(c, d);
	clean1(a);
	clean1(b);
	clean1(c);
	clean1(d);
	mx(a, d);
	mx(b, c);
	clean2(a, b);
	clean2(c, d);
}

/* Rows and columns of the 8 x 8 keys exchanged: the three bits of a lane
 * swapped, one at a time, with the three of its vector. */
SH_INLINE void transpose8(__m512i *v0, __m512i *v1, __m512i *v2, __m512i *v3, __m512i *v4,
			  __m512i *v5, __m512i *v6, __m512i *v7)
{
	__m512i a0 = _mm512_unpacklo_epi64(*v0, *v1), a1 = _mm512_unpackhi_epi64(*v0, *v1);
	__m512i a2 = _mm512_unpacklo_epi64(*v2, *v3), a3 = _mm512_unpackhi_epi64(*v2, *v3);
	__m512i a4 = _mm512_unpacklo_epi64(*v4, *v5), a5 = _mm512_unpackhi_epi64(*v4, *v5);
	__m512i a6 = _mm512_unpacklo_epi64(*v6, *v7), a7 = _mm512_unpackhi_epi64(*v6, *v7);
	__m512i b0 = _mm512_mask_permutex_epi64(a0, 0xcc, a2, 0x44);
	__m512i b2 = _mm512_mask_permutex_epi64(a2, 0x33, a0, 0xee);
	__m512i b1 = _mm512_mask_permutex_epi64(a1, 0xcc, a3, 0x44);
	__m512i b3 = _mm512_mask_permutex_epi64(a3, 0x33, a1, 0xee);
	__m512i b4 = _mm512_mask_permutex_epi64(a4, 0xcc, a6, 0x44);
	__m512i b6 = _mm512_mask_permutex_epi64(a6, 0x33, a4, 0xee);
	__m512i b5 = _mm512_mask_permutex_epi64(a5, 0xcc, a7, 0x44);
	__m512i b7 = _mm512_mask_permutex_epi64(a7, 0x33, a5, 0xee);

	*v0 = _mm512_shuffle_i64x2(b0, b4, 0x44);
	*v4 = _mm512_shuffle_i64x2(b0, b4, 0xee);
	*v1 = _mm512_shuffle_i64x2(b1, b5, 0x44);
	*v5 = _mm512_shuffle_i64x2(b1, b5, 0xee);
	*v2 = _mm512_shuffle_i64x2(b2, b6, 0x44);
	*v6 = _mm512_shuffle_i64x2(b2, b6, 0xee);
	*v3 = _mm512_shuffle_i64x2(b3, b7, 0x44);
	*v7 = _mm512_shuffle_i64x2(b3, b7, 0xee);
}

/* Eight vectors sorted: first each lane across them (the 19 comparators of
 * the best network for eight, Knuth 5.3.4), so that, transposed, each
 * vector holds a sorted run; then the merge stages of 2, 4 and 8 vectors. */
SH_INLINE void sort8(__m512i *v0, __m512i *v1, __m512i *v2, __m512i *v3, __m512i *v4,
		     __m512i *v5, __m512i *v6, __m512i *v7)
{
	cx(v0, v2);
	cx(v1, v3);
	cx(v4, v6);
	cx(v5, v7);
	cx(v0, v4);
	cx(v1, v5);
	cx(v2, v6);
	cx(v3, v7);
	cx(v0, v1);
	cx(v2, v3);
	cx(v4, v5);
	cx(v6, v7);
	cx(v2, v4);
	cx(v3, v5);
	cx(v1, v4);
	cx(v3, v6);
	cx(v1, v2);
	cx(v3, v4);
	cx(v5, v6);
	transpose8(v0, v1, v2, v3, v4, v5, v6, v7);
	mx(v0, v1);
	mx(v2, v3);
	mx(v4, v5);
	mx(v6, v7);
	clean1(v0);
	clean1(v1);
	clean1(v2);
	clean1(v3);
	clean1(v4);
	clean1(v5);
	clean1(v6);
	clean1(v7);
	mx(v0, v3);
	mx(v1, v2);
	mx(v4, v7);
	mx(v5, v6);
	clean2(v0, v1);
	clean2(v2, v3);
	clean2(v4, v5);
	clean2(v6, v7);
	mx(v0, v7);
	mx(v1, v6);
	mx(v2, v5);
	mx(v3, v4);
	clean4(v0, v1, v2, v3);
	clean4(v4, v5, v6, v7);
}

/* Vector i of the keys: lanes past n are UINT64_MAX. */
SH_INLINE __m512i load(const uint64_t *k, size_t n, unsigned i)
{
	size_t left = n > 8 * i ? n - 8 * i : 0;
	__mmask8 m = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);

	return _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), m, k + 8 * i);
}

/* Stores the keys of sorted vector i (before: vector i - 1) at k + *m,
 * without the repeats of the key before each if distinct. */
SH_INLINE void store(uint64_t *k, size_t *m, size_t n, unsigned i, __m512i v, __m512i before,
		     int distinct)
{
	size_t left = n > 8 * i ? n - 8 * i : 0;
	__mmask8 keep = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);

	if (!keep)
		return;
	if (distinct) {
		/* lane 0 against lane 7 of the vector before (key 0: kept) */
		__m512i prev = _mm512_alignr_epi64(v, before, 7);
		keep &= _mm512_cmpneq_epu64_mask(v, prev) | (i ? 0 : 1);
		v = _mm512_maskz_compress_epi64(keep, v);
	}
	_mm512_mask_storeu_epi64(k + *m, (__mmask8)((1u << __builtin_popcount(keep)) - 1), v);
	*m += (size_t)__builtin_popcount(keep);
}

#define LOAD4(a, b, c, d) \
	__m512i v##a = load(k, n, a), v##b = load(k, n, b), v##c = load(k, n, c), v##d = load(k, n, d)
#define STORE4(a, b, c, d, before) \
	store(k, &m, n, a, v##a, before, distinct); \
	store(k, &m, n, b, v##b, v##a, distinct); \
	store(k, &m, n, c, v##c, v##b, distinct); \
	store(k, &m, n, d, v##d, v##c, distinct)

/* Sorts 6 <= n <= 128 keys in registers; how many stay. */
SH_AVX512F static size_t sort_avx512(uint64_t *k, size_t n, int distinct)
{
	size_t m = 0;

	assert(n >= 6 && n <= 128);
	if (n <= 8) {
		__m512i v0 = sort1(load(k, n, 0));
		store(k, &m, n, 0, v0, v0, distinct);
	} else if (n <= 16) {
		__m512i v0 = load(k, n, 0), v1 = load(k, n, 1);
		sort2(&v0, &v1);
		store(k, &m, n, 0, v0, v0, distinct);
		store(k, &m, n, 1, v1, v0, distinct);
	} else if (n <= 32) {
		LOAD4(0, 1, 2, 3);
		sort4(&v0, &v1, &v2, &v3);
		STORE4(0, 1, 2, 3, v0);
	} else if (n <= 64) {
		LOAD4(0, 1, 2, 3);
		LOAD4(4, 5, 6, 7);
		sort8(&v0, &v1, &v2, &v3, &v4, &v5, &v6, &v7);
		STORE4(0, 1, 2, 3, v0);
		STORE4(4, 5, 6, 7, v3);
	} else {
		LOAD4(0, 1, 2, 3);
		LOAD4(4, 5, 6, 7);
		LOAD4(8, 9, 10, 11);
		LOAD4(12, 13, 14, 15);
		sort8(&v0, &v1, &v2, &v3, &v4, &v5, &v6, &v7);
		sort8(&v8, &v9, &v10, &v11, &v12, &v13, &v14, &v15);
		mx(&v0, &v15);
		mx(&v1, &v14);
		mx(&v2, &v13);
		mx(&v3, &v12);
		mx(&v4, &v11);
		mx(&v5, &v10);
		mx(&v6, &v9);
		mx(&v7, &v8);
		cx(&v0, &v4);
		cx(&v1, &v5);
		cx(&v2, &v6);
		cx(&v3, &v7);
		clean4(&v0, &v1, &v2, &v3);
		clean4(&v4, &v5, &v6, &v7);
		cx(&v8, &v12);
		cx(&v9, &v13);
		cx(&v10, &v14);
		cx(&v11, &v15);
		clean4(&v8, &v9, &v10, &v11);
		clean4(&v12, &v13, &v14, &v15);
		STORE4(0, 1, 2, 3, v0);
		STORE4(4, 5, 6, 7, v3);
		STORE4(8, 9, 10, 11, v7);
		STORE4(12, 13, 14, 15, v11);
	}
	return m;
}

/* 129 to 32 Ki keys: one stable scatter by the top bits into buckets of
 * about 32 to 64 keys (tmp), each sorted in registers (or, more than 128
 * keys sharing their top bits, by the scalar sorts, with k as their room),
 * without repeats if distinct (buckets share no key), and copied back;
 * how many keys stay. */
SH_AVX512F static size_t sort_buckets(uint64_t *k, size_t n, uint64_t *tmp, int distinct)
{
	size_t count[513], m = 0;
	unsigned bits = 1;

	assert(n > 128 && n <= 32768);
	while (((size_t)64 << bits) < n)
		bits++;
	scatter_top(k, n, bits, count, tmp);
	/* count[d] is now the end of bucket d, the start of bucket d + 1 */
	for (size_t d = 0, start = 0; d < ((size_t)1 << bits); start = count[d++]) {
		uint64_t *b = tmp + start;
		size_t size = count[d] - start;
		if (size >= 6 && size <= 128) {
			size = sort_avx512(b, size, distinct);
		} else {
			if (size > 128)
				sort_scalar(b, size, k + m); /* k from m on is free */
			else
				insertion(b, size, SIZE_MAX);
			if (distinct)
				size = distinct_sorted(b, size);
		}
		memcpy(k + m, b, size * sizeof *k);
		m += size;
	}
	return m;
}
#endif

/* ---- the entry point */

size_t sh_sketch_sort(uint64_t *k, size_t n, uint64_t *tmp, int simd, int distinct)
{
#if SH_X86
	if (simd && n >= 6 && n <= 128) /* fewer: insertion is quicker */
		return sort_avx512(k, n, distinct);
	if (simd && n > 128 && n <= 32768)
		return sort_buckets(k, n, tmp, distinct);
#else
	(void)simd;
#endif
	sort_scalar(k, n, tmp);
	return distinct ? distinct_sorted(k, n) : n;
}

int sh_sketch_sort_simd(void)
{
	return sh_cpu_has(SH_CPU_AVX512F);
}
