/* scan.c - brute force: compare the query with every fingerprint of a block.
 *
 * Workload: the whole index when it is small or k is large (the plan picks
 * the scan when it is cheaper than probing tables), and the reference every
 * other layout is tested against. Each kernel writes the positions of a block
 * (at most 65536 fingerprints) whose distance to q is <= k, in increasing
 * order; the AVX2 kernels give exactly the scalar kernels' output (tests run
 * both on the same vectors). AVX2 has no 64-bit popcount: it counts nibbles
 * through a 16-entry table (vpshufb) and sums bytes per lane (vpsadbw).
 * AVX-512 with VPOPCNTQ counts eight lanes in one instruction and reads the
 * block's tail with a masked load, so a short bucket costs one iteration.
 *
 * The kernels come in two shapes (kernels.h): rows, fingerprints one after
 * another as the index stores them, and columns, each word of the
 * fingerprints in its own array as the PostgreSQL extension's pages store
 * them. The table at the bottom is the one place that says which variant a
 * CPU runs: the index and the extension both pick from it. */
#include "ix.h"
#if SH_X86
#include <immintrin.h>
#endif

#define SH_AVX2 __attribute__((target("avx2,popcnt")))
#define SH_AVX512 __attribute__((target("avx512f,avx512vpopcntdq,avx2,popcnt,bmi")))

size_t sh_ix_scan64_scalar(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos)
{
	size_t m = 0;
	uint64_t q0 = q[0];

	for (size_t i = 0; i < n; i++) {
		pos[m] = (uint32_t)i;
		m += simhash_hamming64(fps[i], q0) <= k;
	}
	return m;
}

size_t sh_ix_scan128_scalar(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k, uint32_t *pos)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = simhash_hamming64(fps[2 * i], q[0]) + simhash_hamming64(fps[2 * i + 1], q[1]);
		pos[m] = (uint32_t)i;
		m += d <= k;
	}
	return m;
}

#if SH_X86
/* Per 64-bit lane popcount of v. */
SH_AVX2 static inline __m256i popcnt_lanes(__m256i v)
{
	const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
					     0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
	const __m256i low = _mm256_set1_epi8(0x0f);
	__m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, low));
	__m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
	return _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256());
}

SH_AVX2 size_t sh_ix_scan64_avx2(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k,
				 uint32_t *pos)
{
	const __m256i qv = _mm256_set1_epi64x((long long)q[0]);
	const __m256i kv = _mm256_set1_epi64x((long long)k);
	size_t m = 0, i = 0;

	for (; i + 4 <= n; i += 4) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(fps + i));
		__m256i c = popcnt_lanes(_mm256_xor_si256(x, qv));
		unsigned bad = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(c, kv)));
		unsigned ok = ~bad & 15u;
		while (ok) {
			pos[m++] = (uint32_t)(i + (unsigned)__builtin_ctz(ok));
			ok &= ok - 1;
		}
	}
	for (; i < n; i++) {
		pos[m] = (uint32_t)i;
		m += (unsigned)__builtin_popcountll(fps[i] ^ q[0]) <= k;
	}
	return m;
}

SH_AVX2 size_t sh_ix_scan128_avx2(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k,
				  uint32_t *pos)
{
	const __m256i qv = _mm256_setr_epi64x((long long)q[0], (long long)q[1], (long long)q[0],
					      (long long)q[1]);
	const __m256i kv = _mm256_set1_epi64x((long long)k);
	size_t m = 0, i = 0;

	for (; i + 4 <= n; i += 4) {
		__m256i a = popcnt_lanes(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(fps + 2 * i)), qv));
		__m256i b = popcnt_lanes(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(fps + 2 * i + 4)), qv));
		/* lanes a = (f0.lo, f0.hi, f1.lo, f1.hi): add the halves of each fp */
		__m256i lo = _mm256_unpacklo_epi64(a, b); /* f0.lo f2.lo f1.lo f3.lo */
		__m256i hi = _mm256_unpackhi_epi64(a, b); /* f0.hi f2.hi f1.hi f3.hi */
		__m256i c = _mm256_add_epi64(lo, hi);
		unsigned bad = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(c, kv)));
		/* lane order f0 f2 f1 f3 -> f0 f1 f2 f3 */
		unsigned ok = ~((bad & 1u) | (bad >> 1 & 2u) | (bad << 1 & 4u) | (bad & 8u)) & 15u;
		while (ok) {
			pos[m++] = (uint32_t)(i + (unsigned)__builtin_ctz(ok));
			ok &= ok - 1;
		}
	}
	for (; i < n; i++) {
		unsigned d = simhash_hamming64(fps[2 * i], q[0]) + simhash_hamming64(fps[2 * i + 1], q[1]);
		pos[m] = (uint32_t)i;
		m += d <= k;
	}
	return m;
}

/* Appends to pos the lanes set in ok, offset by i. */
static inline size_t put_lanes(uint32_t *pos, size_t m, size_t i, unsigned ok)
{
	while (ok) {
		pos[m++] = (uint32_t)(i + (unsigned)__builtin_ctz(ok));
		ok &= ok - 1;
	}
	return m;
}

SH_AVX512 size_t sh_ix_scan64_avx512(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k,
				     uint32_t *pos)
{
	const __m512i qv = _mm512_set1_epi64((long long)q[0]);
	const __m512i kv = _mm512_set1_epi64((long long)k);
	size_t m = 0, i = 0;

	for (; i + 16 <= n; i += 16) {
		__m512i a = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(fps + i), qv));
		__m512i b = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(fps + i + 8), qv));
		unsigned ok = (unsigned)_mm512_cmple_epu64_mask(a, kv) |
			      (unsigned)_mm512_cmple_epu64_mask(b, kv) << 8;
		if (ok)
			m = put_lanes(pos, m, i, ok);
	}
	for (; i < n; i += 8) {
		__mmask8 in = n - i >= 8 ? 0xff : (__mmask8)((1u << (n - i)) - 1);
		__m512i a = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_maskz_loadu_epi64(in, fps + i), qv));
		m = put_lanes(pos, m, i, _mm512_mask_cmple_epu64_mask(in, a, kv));
	}
	return m;
}

SH_AVX512 size_t sh_ix_scan128_avx512(const uint64_t *fps, size_t n, const uint64_t *q, unsigned k,
				      uint32_t *pos)
{
	const __m512i qv = _mm512_setr_epi64((long long)q[0], (long long)q[1], (long long)q[0],
					     (long long)q[1], (long long)q[0], (long long)q[1],
					     (long long)q[0], (long long)q[1]);
	const __m512i kv = _mm512_set1_epi64((long long)k);
	/* lanes (f0.lo, f0.hi, ..., f3.hi): the halves of fp j are lanes 2j, 2j+1 */
	const __m512i odd = _mm512_setr_epi64(1, 0, 3, 2, 5, 4, 7, 6);
	size_t m = 0;

	for (size_t i = 0; i < n; i += 4) {
		size_t left = n - i;
		__mmask8 in = left >= 4 ? 0xff : (__mmask8)((1u << (2 * left)) - 1);
		__m512i c = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_maskz_loadu_epi64(in, fps + 2 * i), qv));
		__m512i d = _mm512_add_epi64(c, _mm512_permutexvar_epi64(odd, c));
		/* both lanes of fp j hold its distance: take the even ones */
		unsigned ok = _mm512_mask_cmple_epu64_mask(in, d, kv) & 0x55u;
		ok = (ok & 1u) | (ok >> 1 & 2u) | (ok >> 2 & 4u) | (ok >> 3 & 8u);
		m = put_lanes(pos, m, i, ok);
	}
	return m;
}

#endif /* SH_X86 */

/* Columns: 128 bits as two arrays of words (the extension's data pages). */
static size_t cols_scalar(const uint64_t *w0, const uint64_t *w1, size_t n, const uint64_t *q,
			  unsigned k, uint32_t *pos)
{
	size_t m = 0;

	if (!w1)
		return sh_ix_scan64_scalar(w0, n, q, k, pos);
	for (size_t i = 0; i < n; i++) {
		unsigned d = simhash_hamming64(w0[i], q[0]) + simhash_hamming64(w1[i], q[1]);
		pos[m] = (uint32_t)i;
		m += d <= k;
	}
	return m;
}

#if SH_X86
SH_AVX2 static size_t cols_avx2(const uint64_t *w0, const uint64_t *w1, size_t n, const uint64_t *q,
				unsigned k, uint32_t *pos)
{
	const __m256i q0 = _mm256_set1_epi64x((long long)q[0]), q1 = _mm256_set1_epi64x((long long)q[1]);
	const __m256i kv = _mm256_set1_epi64x((long long)k);
	size_t m = 0, i = 0;

	if (!w1)
		return sh_ix_scan64_avx2(w0, n, q, k, pos);
	for (; i + 4 <= n; i += 4) {
		__m256i a = popcnt_lanes(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(w0 + i)), q0));
		__m256i b = popcnt_lanes(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(w1 + i)), q1));
		__m256i c = _mm256_add_epi64(a, b);
		unsigned bad = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(c, kv)));
		m = put_lanes(pos, m, i, ~bad & 15u);
	}
	for (; i < n; i++) {
		unsigned d = (unsigned)(__builtin_popcountll(w0[i] ^ q[0]) + __builtin_popcountll(w1[i] ^ q[1]));
		pos[m] = (uint32_t)i;
		m += d <= k;
	}
	return m;
}

SH_AVX512 static size_t cols_avx512(const uint64_t *w0, const uint64_t *w1, size_t n,
				    const uint64_t *q, unsigned k, uint32_t *pos)
{
	const __m512i q0 = _mm512_set1_epi64((long long)q[0]), q1 = _mm512_set1_epi64((long long)q[1]);
	const __m512i kv = _mm512_set1_epi64((long long)k);
	size_t m = 0;

	if (!w1)
		return sh_ix_scan64_avx512(w0, n, q, k, pos);
	for (size_t i = 0; i < n; i += 8) {
		__mmask8 in = n - i >= 8 ? 0xff : (__mmask8)((1u << (n - i)) - 1);
		__m512i a = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_maskz_loadu_epi64(in, w0 + i), q0));
		__m512i b = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_maskz_loadu_epi64(in, w1 + i), q1));
		m = put_lanes(pos, m, i, _mm512_mask_cmple_epu64_mask(in, _mm512_add_epi64(a, b), kv));
	}
	return m;
}
#endif /* SH_X86 */

/* The dispatch table: the portable scalar kernels first, the fastest last. */
static const sh_ix_kernels kernels[] = {
	{ "scalar", 0, sh_ix_scan64_scalar, sh_ix_scan128_scalar, cols_scalar },
#if SH_X86
	{ "avx2", SH_CPU_AVX2 | SH_CPU_POPCNT, sh_ix_scan64_avx2, sh_ix_scan128_avx2, cols_avx2 },
	{ "avx512", SH_CPU_AVX512F | SH_CPU_AVX512VPOPCNTDQ | SH_CPU_AVX2 | SH_CPU_POPCNT,
	  sh_ix_scan64_avx512, sh_ix_scan128_avx512, cols_avx512 },
#endif
};

const sh_ix_kernels *sh_ix_kernel_list(size_t *n)
{
	*n = sizeof kernels / sizeof kernels[0];
	return kernels;
}

int sh_ix_kernel_usable(const sh_ix_kernels *kv)
{
	return kv->cpu == 0 || sh_cpu_has(kv->cpu);
}

const sh_ix_kernels *sh_ix_kernel_best(void)
{
	size_t i = sizeof kernels / sizeof kernels[0] - 1;

	while (i > 0 && !sh_ix_kernel_usable(&kernels[i]))
		i--;
	return &kernels[i];
}

int sh_ix_have_popcnt(void)
{
	return sh_cpu_has(SH_CPU_POPCNT);
}

/* Outside x86 no SIMD kernel exists: the scalar ones everywhere. */
sh_ix_scan_fn sh_ix_scan_pick(unsigned words)
{
	const sh_ix_kernels *kv = sh_ix_kernel_best();
	return words == 1 ? kv->scan64 : kv->scan128;
}
