/* near_keys.c - the band keys of a sketch (simhash_near_bands()), steps 1
 * and 2 of near_bands.c's candidates: one-permutation MinHash of the keys
 * into SIMHASH_NEAR_BANDS * 3 bins, empty bins densified by their probe
 * rows (near_probe.h), and one mix per band of its three bins; and in the
 * same pass over the keys the bit set of near_bands.c's summaries
 * (sh_near_band_keys()). Three paths, which the tests compare: portable
 * (a join looks the densification up in a table it makes once); AVX-512 F,
 * DQ and BW (keys' mixes and band mixes eight at a time, an empty bin's
 * probes 32 at a time: Skylake-SP Xeons on); and with VBMI, 64 probes at a
 * time. On 300,000 short lines, the band keys and bit sets take 0.24 s
 * portable by the walk, 0.14 s by the table, 0.07 s and 0.06 s.
 */
#include <stdint.h>
#include <stdlib.h>
#include "../common/internal.h"
#include "near_probe.h"

#define SH_NB_ROWS 3
#define SH_NB_WORDS SH_NEAR_SUMMARY_WORDS
#define SH_NB_BINS (SIMHASH_NEAR_BANDS * SH_NB_ROWS)
#define SH_NB_SEED 0x5be0cd19137e2179ull
#define SH_NB_SPARSE 12 /* filled bins at most: densify() takes the least place */
#define SH_NB_GROUPS 9 /* bytes of the 72 filled flags */

/* A key's bit in a summary's bit set (near_bands.c's summarize()): its low
 * 32 bits scaled to the 384 bits (one multiply, also in a vector lane). Any
 * map of keys to bits gives valid bounds; this one is uniform. */
static inline void set_key_bit(uint64_t bits[SH_NB_WORDS], uint64_t key)
{
	unsigned b = (unsigned)((key & 0xffffffffu) * (SH_NB_WORDS * 64) >> 32);

	bits[b >> 6] |= 1ull << (b & 63);
}

/* How many bits of a bit set are set (inlined, it counts with the popcnt
 * instruction in bins_512()). */
static inline size_t bits_set(const uint64_t bits[SH_NB_WORDS])
{
	size_t set = 0;

	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		set += (size_t)__builtin_popcountll(bits[w]);
	return set;
}

/* Where bin f stands in bin i's probe row: t = (f - a) c mod 72, 72 for 0
 * (near_probe.h: each row is a progression mod 72). */
static inline unsigned probe_place(unsigned i, unsigned f)
{
	unsigned t = (f + SH_NB_BINS - sh_nb_probe_a[i]) * sh_nb_probe_c[i] % SH_NB_BINS;

	return t ? t : SH_NB_BINS;
}

/* The portable densification of a join (densify_table()): for bin i, byte
 * g of the filled flags (bins 8 g to 8 g + 7) and its value v, the least
 * place in row i of the bins v has filled, 0xff for none. 166 KB, made once
 * per join. */
struct sh_near_table {
	uint8_t place[SH_NB_BINS][SH_NB_GROUPS][256];
};

simhash_err sh_near_table_new(sh_near_table **out)
{
	sh_near_table *t = malloc(sizeof *t);

	if (!t)
		return SIMHASH_ENOMEM;
	for (unsigned i = 0; i < SH_NB_BINS; i++)
		for (unsigned g = 0; g < SH_NB_GROUPS; g++) {
			uint8_t *p = t->place[i][g];
			p[0] = 0xff;
			for (unsigned v = 1; v < 256; v++) {
				unsigned pl = probe_place(i, 8 * g + (unsigned)__builtin_ctz(v));
				p[v] = (uint8_t)(pl < p[v & (v - 1)] ? pl : p[v & (v - 1)]);
			}
		}
	*out = t;
	return SIMHASH_OK;
}

void sh_near_table_free(sh_near_table *t)
{
	free(t);
}

static inline unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/* densify() by the table: an empty bin's first filled bin is the least of
 * nine lookups, one per byte of the filled flags, with no branch per probe
 * (the walk mispredicts about one probe in two). */
static void densify_table(const sh_near_table *tab, const uint64_t filled[2],
			  const uint64_t *mins, uint64_t *val)
{
	uint8_t byte[SH_NB_GROUPS];
	uint64_t empty[2] = { ~filled[0], ~filled[1] & ((1ull << (SH_NB_BINS - 64)) - 1) };

	for (unsigned g = 0; g < 8; g++)
		byte[g] = (uint8_t)(filled[0] >> (8 * g));
	byte[8] = (uint8_t)filled[1];
	for (unsigned i = 0; i < SH_NB_BINS; i++)
		val[i] = mins[i];
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t m = empty[w]; m; m &= m - 1) {
			unsigned i = 64 * w + (unsigned)__builtin_ctzll(m), t;
			const uint8_t (*p)[256] = tab->place[i];
			/* a tree of minima: the nine loads are independent */
			unsigned a = min_u(p[0][byte[0]], p[1][byte[1]]);
			unsigned b = min_u(p[2][byte[2]], p[3][byte[3]]);
			unsigned c = min_u(p[4][byte[4]], p[5][byte[5]]);
			unsigned d = min_u(p[6][byte[6]], p[7][byte[7]]);
			t = min_u(min_u(min_u(a, b), min_u(c, d)), p[8][byte[8]]);
			val[i] = mins[sh_nb_probe[i][t - 1]] + i * 0x9e3779b97f4a7c15ull;
		}
}

/* Densification, the portable path: an empty bin walks its probe row to
 * the first filled bin. With few filled bins the walk is long and each
 * step a branch mispredicted about half the time, so the first is found
 * instead as the filled bin of least place in the row, its place by
 * arithmetic (near_probe.h: each row is a progression mod 72). */
static void densify(const uint64_t filled[2], const uint64_t *mins, uint64_t *val)
{
	unsigned f[SH_NB_SPARSE], n_f = 0;

	if (__builtin_popcountll(filled[0]) + __builtin_popcountll(filled[1]) <= SH_NB_SPARSE) {
		for (unsigned w = 0; w < 2; w++)
			for (uint64_t m = filled[w]; m; m &= m - 1)
				f[n_f++] = 64 * w + (unsigned)__builtin_ctzll(m);
		for (unsigned i = 0; i < SH_NB_BINS; i++) {
			unsigned best = SH_NB_BINS + 1, src = i;
			if (filled[i >> 6] >> (i & 63) & 1) {
				val[i] = mins[i];
				continue;
			}
			for (unsigned k = 0; k < n_f; k++) {
				unsigned t = probe_place(i, f[k]);
				src = t < best ? f[k] : src;
				best = t < best ? t : best;
			}
			val[i] = mins[src] + i * 0x9e3779b97f4a7c15ull;
		}
		return;
	}
	for (unsigned i = 0; i < SH_NB_BINS; i++) {
		const unsigned char *p = sh_nb_probe[i];
		unsigned src = i;
		while (!(filled[src >> 6] >> (src & 63) & 1))
			src = *p++;
		val[i] = src == i ? mins[i] : mins[src] + i * 0x9e3779b97f4a7c15ull;
	}
}

#if SH_X86
#include <immintrin.h>
#define SH_NB_VBMI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vbmi,bmi,popcnt")))
#define SH_NB_512 __attribute__((target("avx512f,avx512dq,bmi,popcnt")))
#define SH_NB_BW __attribute__((target("avx512f,avx512bw,avx2,bmi,popcnt")))

/* The same with AVX-512 VBMI: the filled flags of an empty bin's first 64
 * probes gathered in one permute, the first filled found by a bit scan, so
 * no branch per probe (a walk of a few steps each mispredicted most of the
 * time: 60 % of this function's time on 300,000 short lines). A row's last
 * 8 probes are walked only when none of its first 64 is filled (8 filled
 * bins or fewer). */
SH_NB_VBMI static void densify_vbmi(const uint64_t filled[2], const uint64_t *mins,
				    uint64_t *val)
{
	__m512i lo = _mm512_movm_epi8(filled[0]), hi = _mm512_movm_epi8(filled[1]);
	uint64_t empty[2] = { ~filled[0], ~filled[1] & ((1ull << (SH_NB_BINS - 64)) - 1) };

	for (unsigned i = 0; i < SH_NB_BINS; i++)
		val[i] = mins[i];
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t m = empty[w]; m; m &= m - 1) {
			unsigned i = 64 * w + (unsigned)__builtin_ctzll(m), src, t;
			const unsigned char *p = sh_nb_probe[i];
			__m512i idx = _mm512_loadu_si512((const void *)p);
			uint64_t hit = _mm512_test_epi8_mask(_mm512_permutex2var_epi8(lo, idx, hi),
							     _mm512_set1_epi8(-1));
			if (SH_LIKELY(hit)) {
				src = p[__builtin_ctzll(hit)];
			} else {
				for (t = 64; !(filled[p[t] >> 6] >> (p[t] & 63) & 1); t++)
					;
				src = p[t];
			}
			val[i] = mins[src] + i * 0x9e3779b97f4a7c15ull;
		}
}

/* The same with AVX-512 BW alone (Skylake-SP and Cascade Lake Xeons): the
 * filled flags in 16-bit lanes, an empty bin's probes looked up 32 at a
 * time by word permutes (bins 0 to 63 from two registers, 64 to 71 from a
 * third). */
SH_NB_BW static void densify_bw(const uint64_t filled[2], const uint64_t *mins, uint64_t *val)
{
	const __m512i f0 = _mm512_movm_epi16((__mmask32)filled[0]);
	const __m512i f1 = _mm512_movm_epi16((__mmask32)(filled[0] >> 32));
	const __m512i f2 = _mm512_movm_epi16((__mmask32)filled[1]);
	const __m512i ones = _mm512_set1_epi16(-1), b64 = _mm512_set1_epi16(64);
	uint64_t empty[2] = { ~filled[0], ~filled[1] & ((1ull << (SH_NB_BINS - 64)) - 1) };

	for (unsigned i = 0; i < SH_NB_BINS; i++)
		val[i] = mins[i];
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t m = empty[w]; m; m &= m - 1) {
			unsigned i = 64 * w + (unsigned)__builtin_ctzll(m), src = i;
			const unsigned char *p = sh_nb_probe[i];
			for (unsigned o = 0; o < SH_NB_BINS; o += 32) {
				/* a row is 72 bytes: its last 8 alone, not the next row's */
				const void *at = p + o;
				__m256i raw = o + 32 <= SH_NB_BINS
					? _mm256_loadu_si256((const __m256i *)at)
					: _mm256_zextsi128_si256(_mm_loadl_epi64((const __m128i *)at));
				__m512i idx = _mm512_cvtepu8_epi16(raw);
				__m512i f = _mm512_mask_blend_epi16(_mm512_cmpge_epu16_mask(idx, b64),
								    _mm512_permutex2var_epi16(f0, idx, f1),
								    _mm512_permutexvar_epi16(idx, f2));
				/* past a row's end the lanes look at bin 0; a real
				 * probe before them holds the first filled bin, as
				 * every row lists every bin */
				uint32_t hit = _mm512_test_epi16_mask(f, ones);
				if (hit) {
					src = p[o + (unsigned)__builtin_ctz(hit)];
					break;
				}
			}
			val[i] = mins[src] + i * 0x9e3779b97f4a7c15ull;
		}
}

/* splitmix64's finalizer (sh_mix64()) on eight lanes. */
SH_NB_512 static inline __m512i mix64_x8(__m512i z)
{
	z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
			       _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull));
	z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
			       _mm512_set1_epi64((long long)0x94d049bb133111ebull));
	return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* bins_scalar() with the keys' mixes and bins taken eight at a time; the
 * filled flags and the bit set gathered in registers, a lane per key, and
 * or-ed together at the end (the minima stay one key at a time: two keys
 * may share a bin). */
SH_NB_512 static size_t bins_512(const simhash_sketch *sk, uint64_t *mins, uint64_t filled[2],
				 uint64_t *bits)
{
	const __m512i seed = _mm512_set1_epi64((long long)SH_NB_SEED);
	const __m512i gold = _mm512_set1_epi64((long long)0x9e3779b97f4a7c15ull);
	const __m512i n_bins = _mm512_set1_epi64(SH_NB_BINS);
	const __m512i n_bits = _mm512_set1_epi64(SH_NB_WORDS * 64);
	const __m512i one = _mm512_set1_epi64(1), low6 = _mm512_set1_epi64(63);
	__m512i f0 = _mm512_setzero_si512(), f1 = _mm512_setzero_si512();
	__m512i acc[SH_NB_WORDS];
	uint64_t hv[8] __attribute__((aligned(64))), bv[8] __attribute__((aligned(64)));

#pragma GCC unroll 8 /* here and below: acc[] stays in registers */
	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		acc[w] = _mm512_setzero_si512();
	for (unsigned j = 0; j < SH_NB_BINS; j += 8)
		_mm512_storeu_si512((void *)(mins + j), _mm512_set1_epi64(-1));
	for (size_t i = 0; i < sk->n_keys; i += 8) {
		unsigned cnt = sk->n_keys - i < 8 ? (unsigned)(sk->n_keys - i) : 8;
		__mmask8 m = (__mmask8)((1u << cnt) - 1), lo;
		__m512i k = _mm512_maskz_loadu_epi64(m, sk->keys + i);
		__m512i h = _mm512_mullo_epi64(_mm512_xor_si512(k, seed), gold), bin;
		if (SH_EXP_SEED) /* sh_exp_mix(h, 7) */
			h = mix64_x8(_mm512_xor_si512(h, _mm512_set1_epi64((long long)(
				(uint64_t)SH_EXP_SEED * 0x9e3779b97f4a7c15ull + 7))));
		bin = _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(h, 32), n_bins), 32);
		_mm512_store_si512((void *)hv, h);
		_mm512_store_si512((void *)bv, bin);
		lo = _mm512_mask_cmplt_epu64_mask(m, bin, _mm512_set1_epi64(64));
		f0 = _mm512_mask_or_epi64(f0, lo, f0, _mm512_sllv_epi64(one, bin));
		f1 = _mm512_mask_or_epi64(f1, m & (__mmask8)~lo, f1,
					  _mm512_sllv_epi64(one, _mm512_and_si512(bin, low6)));
		if (bits) { /* set_key_bit() of each */
			__m512i b = _mm512_srli_epi64(_mm512_mul_epu32(k, n_bits), 32);
			__m512i word = _mm512_srli_epi64(b, 6);
			__m512i bit = _mm512_sllv_epi64(one, _mm512_and_si512(b, low6));
#pragma GCC unroll 8
			for (unsigned w = 0; w < SH_NB_WORDS; w++)
				acc[w] = _mm512_mask_or_epi64(acc[w], _mm512_mask_cmpeq_epu64_mask(
					m, word, _mm512_set1_epi64(w)), acc[w], bit);
		}
		for (unsigned j = 0; j < cnt; j++) {
			unsigned b = (unsigned)bv[j];
			mins[b] = hv[j] < mins[b] ? hv[j] : mins[b];
		}
	}
	filled[0] |= (uint64_t)_mm512_reduce_or_epi64(f0);
	filled[1] |= (uint64_t)_mm512_reduce_or_epi64(f1);
	if (!bits)
		return 0;
#pragma GCC unroll 8
	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		bits[w] |= (uint64_t)_mm512_reduce_or_epi64(acc[w]);
	return bits_set(bits);
}

/* The band keys of densified bins val (band_keys_scalar()), eight bands
 * at a time: a band's three bins picked from three registers. */
SH_NB_512 static void band_keys_512(uint64_t kind, const uint64_t *val,
				    uint64_t out[SIMHASH_NEAR_BANDS])
{
	const __m512i r0 = _mm512_setr_epi64(0, 3, 6, 9, 12, 15, 2, 5);
	const __m512i r1 = _mm512_setr_epi64(1, 4, 7, 10, 13, 0, 3, 6);
	const __m512i r2 = _mm512_setr_epi64(2, 5, 8, 11, 14, 1, 4, 7);
	const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);

	for (unsigned g = 0; g < SIMHASH_NEAR_BANDS; g += 8) {
		const uint64_t *v = val + g * SH_NB_ROWS;
		__m512i a = _mm512_loadu_si512((const void *)v);
		__m512i b = _mm512_loadu_si512((const void *)(v + 8));
		__m512i c = _mm512_loadu_si512((const void *)(v + 16));
		__m512i v0 = _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(a, r0, b), 0xc0,
							   r0, c);
		__m512i v1 = _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(a, r1, b), 0xe0,
							   r1, c);
		__m512i v2 = _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(a, r2, b), 0xe0,
							   r2, c);
		__m512i band = _mm512_add_epi64(lane, _mm512_set1_epi64(g));
		__m512i x = _mm512_xor_si512(_mm512_or_si512(_mm512_set1_epi64((long long)(kind << 40)),
							     _mm512_slli_epi64(band, 32)),
					     _mm512_set1_epi64((long long)SH_NB_SEED));
		x = _mm512_xor_si512(_mm512_xor_si512(x, v0),
				     _mm512_xor_si512(_mm512_rol_epi64(v1, 21), _mm512_rol_epi64(v2, 42)));
		_mm512_storeu_si512((void *)(out + g), mix64_x8(x));
	}
}

int sh_near_keys_level(void)
{
	if (sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512DQ | SH_CPU_AVX512VBMI |
		       SH_CPU_POPCNT))
		return SH_NEAR_KEYS_VBMI;
	if (sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512DQ | SH_CPU_POPCNT))
		return SH_NEAR_KEYS_AVX512;
	return SH_NEAR_KEYS_PORTABLE;
}
#else
int sh_near_keys_level(void)
{
	return SH_NEAR_KEYS_PORTABLE;
}
#endif

/* The bins' minima and filled flags of a sketch's keys, and with bits its
 * bit set, in one pass over them; returns how many bits are set. */
static size_t bins_scalar(const simhash_sketch *sk, uint64_t *mins, uint64_t filled[2],
			  uint64_t *bits)
{
	for (size_t i = 0; i < SH_NB_BINS; i++)
		mins[i] = UINT64_MAX;
	for (size_t i = 0; i < sk->n_keys; i++) {
		uint64_t h = sh_exp_mix((sk->keys[i] ^ SH_NB_SEED) * 0x9e3779b97f4a7c15ull, 7);
		unsigned bin = (unsigned)(((h >> 32) * SH_NB_BINS) >> 32);
		mins[bin] = h < mins[bin] ? h : mins[bin];
		filled[bin >> 6] |= 1ull << (bin & 63);
		if (bits)
			set_key_bit(bits, sk->keys[i]);
	}
	return bits ? bits_set(bits) : 0;
}

static void band_keys_scalar(uint64_t kind, const uint64_t *val, uint64_t out[SIMHASH_NEAR_BANDS])
{
	for (uint64_t i = 0; i < SIMHASH_NEAR_BANDS; i++) {
		const uint64_t *v = val + i * SH_NB_ROWS;
		/* the bins are mixed keys already: one mix of their rotations */
		out[i] = sh_mix64((kind << 40 | i << 32) ^ SH_NB_SEED ^ v[0] ^
				  (v[1] << 21 | v[1] >> 43) ^ (v[2] << 42 | v[2] >> 22));
	}
}

size_t sh_near_band_keys(const simhash_sketch *sk, uint64_t out[SIMHASH_NEAR_BANDS], int level,
			 const sh_near_table *tab, uint64_t bits[SH_NEAR_SUMMARY_WORDS])
{
	uint64_t mins[SH_NB_BINS], val[SH_NB_BINS];
	uint64_t filled[2] = { 0, 0 };
	size_t set;

#if SH_X86
	if (level >= SH_NEAR_KEYS_AVX512)
		set = bins_512(sk, mins, filled, bits);
	else
#endif
		set = bins_scalar(sk, mins, filled, bits);
	if (!sk->n_keys) {
		for (uint64_t i = 0; i < SIMHASH_NEAR_BANDS; i++)
			out[i] = sh_mix64(((uint64_t)sk->kind << 32 | i) ^ SH_NB_SEED);
		return set;
	}
#if SH_X86
	if (level == SH_NEAR_KEYS_VBMI)
		densify_vbmi(filled, mins, val);
	else if (level == SH_NEAR_KEYS_AVX512)
		densify_bw(filled, mins, val);
	else
#endif
	if (tab)
		densify_table(tab, filled, mins, val);
	else
		densify(filled, mins, val);
#if SH_X86
	if (level >= SH_NEAR_KEYS_AVX512) {
		band_keys_512((uint64_t)sk->kind, val, out);
		return set;
	}
#endif
	band_keys_scalar((uint64_t)sk->kind, val, out);
	return set;
}

void simhash_near_bands(const simhash_sketch *sk, uint64_t out[SIMHASH_NEAR_BANDS])
{
	sh_near_band_keys(sk, out, sh_near_keys_level(), NULL, NULL);
}
