/* near_bands.c - the candidate stage of `simhash dedup`'s default: banded
 * MinHash over the sketches' keys (simhash_near_bands()), and the pairs of
 * sketches that share a band and pass simhash_near_decide()'s exact test
 * (simhash_near_band_join(), simhash_near_band_clusters()).
 *
 * Workload: as near_join.c's: up to millions of short texts of a few dozen
 * keys, many of them repeated or templated, where an exact join at the
 * short threshold (J >= 0.4 shares frequent n-grams widely) grows with the
 * square of the input; here the work is the candidates, far fewer (on
 * 300,000 short lines of the shared corpora, 15 million candidate slots
 * against 21 billion pairs; still more than linear in the input).
 *
 * Candidates (Broder 1997; Indyk and Motwani 1998; the bands of Rajaraman
 * and Ullman, "Mining of Massive Datasets", ch. 3):
 *  1. One-permutation MinHash (Li, Owen and Zhang 2012; near_keys.c): each
 *     key, mixed, falls into one of 72 bins; a bin keeps its least mixed key.
 *     An empty bin takes the first filled bin of its own fixed pseudo-random
 *     order of the others (near_probe.h; the densification of Shrivastava
 *     2017), so the bins of a small set stay nearly independent and two sets
 *     agree in a bin with probability about their Jaccard index J.
 *  2. SIMHASH_NEAR_BANDS bands of 3 bins each; a band's key mixes
 *     the sketch's kind, the band's number and its bins. Two sketches are a
 *     candidate pair when any band key is equal: probability about
 *     1 - (1 - J^3)^24, 0.80 at J = 0.4, 0.997 at J = 0.6 and all but
 *     certain at J = 0.8; on the public sets 98.8 to 99.2 % of the short
 *     pairs the exact join finds are candidates, and 99.7 % of the long
 *     ones (most sit well above the threshold).
 *  3. Every candidate pair is checked exactly (the integer test of
 *     simhash_near_decide(), after summarize() bounds the overlap), once in
 *     pair lists: in the first band whose keys agree (owned()), so a pair
 *     found in several bands is listed once, whatever the order of the
 *     buckets, and the result is a pure function of the sketches (a cluster
 *     job grouping the same band keys finds the same pairs).
 * Buckets are found band by band (the band keys are stored band-major):
 * two bit maps drop most keys held once (shared_keys()), the rest are
 * sorted as (key, member) entries (sh_near_sort_into(): one scatter on the
 * top bits, one insertion pass) and the buckets of one passed over, so a
 * band's entries stay in cache and pairs joined in one band are skipped in
 * the next. Each first member has a summary, one cache line: a bit set of
 * its keys, its sizes and where its keys are, which bounds the overlap of
 * a pair without reading the keys (pair_bound()). A bucket of up to 8
 * members checks its pairs one by one; a larger one lays its members'
 * summaries out by column and checks one member against eight at a time
 * (AVX-512 VPOPCNTDQ where the CPU has it; bucket_large()). The pairs that
 * pass go to a queue that fetches their keys and merges them 16 pairs
 * later (queue_pair()). The band keys and summaries take one pass over the
 * keys, eight at a time with AVX-512 (bands_of(), near_keys.c). None of this changes
 * which pairs are candidates or how they are decided; the tests compare
 * every path with the portable one.
 *
 * Clusters need no pair list: a pair whose sides are already connected is
 * not checked, a small bucket inside one cluster reads no summary, and a
 * large bucket is grouped by component, each member checked against the
 * later groups only and the rest grouped again once enough of them have
 * joined, so a bucket of one cluster costs its size, and 100,000 lines of
 * one template join in about the first member's row.
 *
 * Memory, per first member: its 24 band keys (192 bytes), its summary
 * (64 bytes), one band's entry (16 bytes, twice while sorting) and its
 * union-find slot; two bit maps of at most 256 KiB; and the result. The
 * band keys and summaries sit in huge pages where the system gives them.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"

#define SH_NB_WORDS SH_NEAR_SUMMARY_WORDS /* a bit set of 384 bits: a summary is one line */
#define SH_NB_LOST_MAX 0xffff /* summary.lost at or above: no bound */
#define SH_NB_AHEAD 48 /* entries: how far run_buckets() fetches ahead */
#define SH_NB_QUEUE 16 /* pairs: how far merges trail their keys' fetch */
#define SH_NB_SEEN_MAX 21 /* shared_keys()'s bit maps: at most 256 KiB each */
#define SH_NB_TABLE_MIN 1024 /* first members from which the portable paths make a table */

/* What the filters of a pair read of each side, in one place: its size,
 * kind, bit set and the keys lost to another's bit (summarize()). */
struct summary {
	uint64_t bits[SH_NB_WORDS];
	const uint64_t *keys; /* the sketch's: what a merge reads next */
	uint32_t n_keys; /* < 2^32 (band_join()) */
	uint16_t lost;   /* SH_NB_LOST_MAX: too many to bound */
	uint16_t kind;
} __attribute__((aligned(64)));

/* The summary of a sketch from its bit set (a key sets bit key mod 384):
 * the keys lost to another's bit are those the set does not count. Two
 * sketches share at most popcount(A & B) + min(lost) keys, since shared
 * keys set common bits and at most `lost` of them merge into another's,
 * so a pair below the overlap it needs fails without a merge. */
static void summarize(const simhash_sketch *s, const uint64_t bits[SH_NB_WORDS], size_t set,
		      struct summary *out)
{
	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		out->bits[w] = bits[w];
	out->n_keys = (uint32_t)s->n_keys;
	out->keys = s->keys;
	out->lost = (uint16_t)(s->n_keys - set < SH_NB_LOST_MAX ? s->n_keys - set : SH_NB_LOST_MAX);
	out->kind = (uint16_t)s->kind;
}


/* The band keys of a sketch and its summary, in one pass over its keys. */
static void bands_of(const simhash_sketch *sk, uint64_t out[SIMHASH_NEAR_BANDS], int keys,
		     const sh_near_table *tab, struct summary *sum)
{
	uint64_t bits[SH_NB_WORDS] = { 0 };

	summarize(sk, bits, sh_near_band_keys(sk, out, keys, tab, bits), sum);
}


/* ---- buckets */

struct bandjoin {
	size_t n_reps;
	uint64_t *rep;   /* the first members, ascending */
	uint64_t *bands; /* band k of first member i at k * n_reps + i */
	struct summary *sum; /* per first member: what the filters read */
	uint32_t *uf;    /* clusters only */
	sh_buf out;      /* simhash_near_pair[n_out] */
	size_t n_out;
	/* scratch, made once and reused band after band (fresh pages for each
	 * band were 7 % of the time on 300,000 short lines) */
	sh_near_sort sort;          /* a band's (key, first member) entries */
	uint64_t *col;              /* a large bucket's members, by column (COL_*) */
	uint32_t *hit;              /* the members that pass one's bounds */
	struct member *m;           /* a large bucket's members, in column order */
	uint64_t *key, *key_tmp;    /* clusters: m packed for sort_members() */
	unsigned rb;                /* index_bits() of n_reps */
	size_t n_joins;             /* clusters: joins so far */
	size_t cap;                 /* of col's columns and hit: members, 8 | cap */
	int avx512;                 /* bounds, columns, merges: 0 portable, 1 AVX-512 BW,
				     * 2 VPOPCNTDQ too */
	/* pairs that passed the bounds, merged SH_NB_QUEUE pairs later
	 * (queue_pair()) */
	uint32_t qx[SH_NB_QUEUE], qy[SH_NB_QUEUE];
	unsigned q_head, q_n;
};

/* A member of a large bucket: its component (for clusters, as last found;
 * for pairs, its place) and its first member. */
struct member {
	uint32_t root, i;
};

/* The columns of a large bucket (bucket_columns()): the summary's words,
 * then its size with its kind above it (n_keys | kind << 32: one range test
 * checks both) and its lost keys, one 64-bit lane each. bounds_scalar()
 * and bounds_avx512() read them; the pair_bound() below is their
 * definition. */
enum { COL_SIZE = SH_NB_WORDS, COL_LOST, COL_N };

/* Whether band `band` is the first in which x and y agree. */
static int owned(const struct bandjoin *bj, uint32_t x, uint32_t y, uint32_t band)
{
	for (uint32_t k = 0; k < band; k++)
		if (bj->bands[k * bj->n_reps + x] == bj->bands[k * bj->n_reps + y])
			return 0;
	return 1;
}

#if SH_X86
#include <immintrin.h>

/* The keys two ascending lists of distinct keys share, eight against eight
 * at a time: the block whose last key is the smaller moves on (both when
 * equal), so each pair of blocks whose ranges meet is compared once, each
 * key against the other block turned by 0 to 7 lanes. The scalar merge
 * waits on a load for every step (its next key depends on the last
 * comparison); this waits once per block. Stops, as that merge does, once
 * the keys left cannot bring the count to want (the count is then short
 * and the pair fails). */
__attribute__((target("avx512f"))) static size_t
shared_avx512(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t want)
{
	size_t i = 0, k = 0, shared = 0;

	while (i < na && k < nb && shared + (na - i < nb - k ? na - i : nb - k) >= want) {
		size_t ca = na - i < 8 ? na - i : 8, cb = nb - k < 8 ? nb - k : 8;
		__mmask8 ma = (__mmask8)((1u << ca) - 1), mb = (__mmask8)((1u << cb) - 1), hit;
		__m512i va = _mm512_maskz_loadu_epi64(ma, a + i);
		__m512i vb = _mm512_maskz_loadu_epi64(mb, b + k);
		uint64_t la = a[i + ca - 1], lb = b[k + cb - 1];

		/* lane l of b's block turned by r holds its key (l + r) % 8 */
#define SH_NB_TURN(r)                                                                      \
	hit |= _mm512_mask_cmpeq_epi64_mask(ma & (__mmask8)((mb >> (r) | mb << (8 - (r))) & 0xff), \
					    va, _mm512_alignr_epi64(vb, vb, (r)))
		hit = _mm512_mask_cmpeq_epi64_mask(ma & mb, va, vb);
		SH_NB_TURN(1);
		SH_NB_TURN(2);
		SH_NB_TURN(3);
		SH_NB_TURN(4);
		SH_NB_TURN(5);
		SH_NB_TURN(6);
		SH_NB_TURN(7);
#undef SH_NB_TURN
		shared += (size_t)__builtin_popcount(hit);
		i += la <= lb ? ca : 0;
		k += lb <= la ? cb : 0;
	}
	return shared;
}
#endif

/* The merge of near_pair(), for the few pairs its bounds let through; it
 * stops once the rest cannot reach the overlap J >= T needs. */
static int near_merge(const struct bandjoin *bj, uint32_t x, uint32_t y, uint64_t tenths,
		      double *jac)
{
	const uint64_t *ka = bj->sum[x].keys, *kb = bj->sum[y].keys;
	size_t na = bj->sum[x].n_keys, nb = bj->sum[y].n_keys, i = 0, k = 0, shared = 0, uni;
	uint64_t want = (tenths * (na + nb) + 10 + tenths - 1) / (10 + tenths);

#if SH_X86
	if (bj->avx512)
		shared = shared_avx512(ka, na, kb, nb, want);
	else
#endif
	while (i < na && k < nb && shared + (na - i < nb - k ? na - i : nb - k) >= want) {
		uint64_t ai = ka[i], bk = kb[k];
		shared += ai == bk;
		i += ai <= bk;
		k += bk <= ai;
	}
	uni = na + nb - shared;
	if (!sh_near_accept((simhash_near_kind)bj->sum[x].kind, shared, uni))
		return 0;
	*jac = uni ? (double)shared / (double)uni : 1.0;
	return 1;
}

/* The exact test of simhash_near_decide() on two first members; *jac gets
 * the Jaccard index of a near pair. J >= T needs min / max >= T, and a
 * shared count of at least want = ceil(T (na + nb) / (1 + T)), which the
 * summaries bound from above (tested as ub (1 + T) < T (na + nb), in
 * tenths: no division per pair). Inlined into the two copies of
 * run_buckets(), so the popcounts compile to the instruction where the CPU
 * has it. */
static inline __attribute__((always_inline)) int
pair_bound(const struct summary *sa, const struct summary *sb)
{
	uint64_t tenths, na = sa->n_keys, nb = sb->n_keys, ub;

	if (sa->kind != sb->kind)
		return 0;
	tenths = sh_near_tenths((simhash_near_kind)sa->kind);
	if (10 * (na < nb ? na : nb) < tenths * (na < nb ? nb : na))
		return 0; /* J <= min / max */
	ub = sa->lost < sb->lost ? sa->lost : sb->lost;
	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		ub += (uint64_t)__builtin_popcountll(sa->bits[w] & sb->bits[w]);
	return ub * (10 + tenths) >= tenths * (na + nb) || ub >= SH_NB_LOST_MAX;
}

static void uf_join(uint32_t *p, uint32_t a, uint32_t b)
{
	a = sh_near_find(p, a);
	b = sh_near_find(p, b);
	p[a > b ? a : b] = a > b ? b : a;
}

/* The scratch of a bucket of s members (the largest so far kept). */
static simhash_err bucket_scratch(struct bandjoin *bj, size_t s)
{
	if (s <= bj->cap)
		return SIMHASH_OK;
	free(bj->col);
	free(bj->hit);
	free(bj->m);
	free(bj->key);
	free(bj->key_tmp);
	bj->cap = (s < 64 ? 64 : s + 7) & ~(size_t)7;
	bj->col = aligned_alloc(64, COL_N * bj->cap * sizeof *bj->col);
	bj->hit = malloc(bj->cap * sizeof *bj->hit);
	bj->m = malloc(bj->cap * sizeof *bj->m);
	bj->key = bj->uf ? malloc(bj->cap * sizeof *bj->key) : NULL;
	bj->key_tmp = bj->uf ? malloc(bj->cap * sizeof *bj->key_tmp) : NULL;
	if (bj->col && bj->hit && bj->m && (!bj->uf || (bj->key && bj->key_tmp)))
		return SIMHASH_OK;
	bj->cap = 0;
	return SIMHASH_ENOMEM;
}

/* Starts fetching the keys of first member x, which a merge reads next
 * (up to four lines: most short texts' keys). */
static inline __attribute__((always_inline)) void fetch_keys(const struct bandjoin *bj,
							     uint32_t x)
{
	const uint64_t *k = bj->sum[x].keys;
	size_t n = bj->sum[x].n_keys < 32 ? bj->sum[x].n_keys : 32;

	for (size_t o = 0; o < n; o += 8)
		__builtin_prefetch(k + o);
}

/* The merge of a pair that passed the bounds: for clusters, skipped when a
 * join has connected its sides since it was queued (so the components are
 * those of checking every pair), joined when near; for pairs, listed when
 * near. */
static simhash_err merge_pair(struct bandjoin *bj, uint32_t x, uint32_t y)
{
	uint64_t tenths = sh_near_tenths((simhash_near_kind)bj->sum[x].kind);
	double jac;

	if (bj->uf) {
		if (sh_near_find(bj->uf, x) != sh_near_find(bj->uf, y) &&
		    near_merge(bj, x, y, tenths, &jac)) {
			uf_join(bj->uf, x, y);
			bj->n_joins++;
		}
		return SIMHASH_OK;
	}
	if (near_merge(bj, x, y, tenths, &jac))
		return sh_near_emit(&bj->out, &bj->n_out, bj->rep[x], bj->rep[y], jac);
	return SIMHASH_OK;
}

/* A merge waits on its two key lists, far apart in memory (two thirds of
 * its time): the pair is queued with its keys fetched, and the pair queued
 * SH_NB_QUEUE pairs before it merged now, in the order they came. */
static simhash_err queue_pop(struct bandjoin *bj)
{
	unsigned h = bj->q_head;

	bj->q_head = (h + 1) % SH_NB_QUEUE;
	bj->q_n--;
	return merge_pair(bj, bj->qx[h], bj->qy[h]);
}

static simhash_err queue_pair(struct bandjoin *bj, uint32_t x, uint32_t y)
{
	simhash_err err = bj->q_n == SH_NB_QUEUE ? queue_pop(bj) : SIMHASH_OK;
	unsigned tail;

	fetch_keys(bj, x);
	fetch_keys(bj, y);
	tail = (bj->q_head + bj->q_n++) % SH_NB_QUEUE;
	bj->qx[tail] = x;
	bj->qy[tail] = y;
	return err;
}

static simhash_err queue_flush(struct bandjoin *bj)
{
	simhash_err err = SIMHASH_OK;

	while (bj->q_n && !err)
		err = queue_pop(bj);
	return err;
}

/* A small bucket (at most 8 members). Pairs: every owned pair that passes
 * the bounds (the bounds first: owned() reads the other bands' keys, far
 * away). Clusters: its members' components first (a bucket inside one
 * component, a third of them, is done without reading a summary), then
 * each pair of members not yet connected that passes the bounds. */
static inline __attribute__((always_inline)) simhash_err
bucket_small(struct bandjoin *bj, const sh_near_ent *e, size_t s)
{
	uint32_t r[8];
	size_t a;
	simhash_err err = SIMHASH_OK;

	for (a = 0; a < s; a++)
		r[a] = bj->uf ? sh_near_find(bj->uf, e[a].i) : (uint32_t)a;
	for (a = 1; a < s && r[a] == r[0]; a++)
		;
	if (a == s)
		return SIMHASH_OK;
	for (a = 0; a < s && !err; a++)
		for (size_t b = a + 1; b < s && !err; b++) {
			uint32_t x = e[a].i, y = e[b].i;
			if (r[a] != r[b] && pair_bound(&bj->sum[x], &bj->sum[y]) &&
			    (bj->uf || owned(bj, x, y, e[a].band)))
				err = queue_pair(bj, x, y);
		}
	return err;
}

#if SH_X86
static size_t columns_avx512(const struct summary *sum, const struct member *m, size_t from,
			     size_t s, uint64_t *c, size_t cap);
#endif

/* Members m[from..s) of a large bucket by column, for the bounds. */
static void bucket_columns(struct bandjoin *bj, const struct member *m, size_t from, size_t s)
{
	uint64_t *c = bj->col;
	size_t cap = bj->cap;

#if SH_X86
	if (bj->avx512)
		from = columns_avx512(bj->sum, m, from, s, c, cap);
#endif
	for (size_t i = from; i < s; i++) {
		const struct summary *sm = &bj->sum[m[i].i];
		for (unsigned w = 0; w < SH_NB_WORDS; w++)
			c[w * cap + i] = sm->bits[w];
		c[COL_SIZE * cap + i] = sm->n_keys | (uint64_t)sm->kind << 32;
		c[COL_LOST * cap + i] = sm->lost;
	}
}

/* The range of sizes (n_keys | kind << 32) of the members whose size
 * ratio with a size_a passes: 10 min(na, nb) >= t max(na, nb), for t <=
 * 10, is nb in [ceil(t na / 10), floor(10 na / t)], of a's kind. */
static inline void size_range(uint64_t size_a, uint64_t *lo, uint64_t *hi)
{
	uint64_t n_a = (uint32_t)size_a, kind = size_a >> 32;
	uint64_t tenths = sh_near_tenths((simhash_near_kind)kind);
	uint64_t least = (tenths * n_a + 9) / 10, most = tenths ? 10 * n_a / tenths : UINT32_MAX;

	*lo = kind << 32 | least;
	*hi = kind << 32 | (most < UINT32_MAX ? most : UINT32_MAX);
}

/* The members b in [from, s) of a large bucket whose bounds with a pass,
 * ascending, into hit; returns how many. (They are all of other components
 * than a's: bucket_large() passes from past a's group.) The bounds of
 * pair_bound(), read from the columns, one member after another (the
 * summaries, met at random, made this twice as slow on 300,000 short
 * lines); bounds_avx512() is its vector twin. */
static inline __attribute__((always_inline)) size_t
bounds_scalar(const struct bandjoin *bj, size_t a, size_t from, size_t s)
{
	const uint64_t *c = bj->col;
	size_t cap = bj->cap, n = 0;
	uint64_t size_a = c[COL_SIZE * cap + a], n_a = (uint32_t)size_a, lo, hi, wa[SH_NB_WORDS];
	uint64_t tenths = sh_near_tenths((simhash_near_kind)(size_a >> 32));
	uint64_t lost_a = c[COL_LOST * cap + a];

	size_range(size_a, &lo, &hi);
	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		wa[w] = c[w * cap + a];
	for (size_t b = from; b < s; b++) {
		uint64_t size_b = c[COL_SIZE * cap + b], ub, lost_b = c[COL_LOST * cap + b];
		if (size_b < lo || size_b > hi)
			continue;
		ub = lost_a < lost_b ? lost_a : lost_b;
		for (unsigned w = 0; w < SH_NB_WORDS; w++)
			ub += (uint64_t)__builtin_popcountll(wa[w] & c[w * cap + b]);
		if (ub * (10 + tenths) >= tenths * (n_a + (uint32_t)size_b) || ub >= SH_NB_LOST_MAX)
			bj->hit[n++] = (uint32_t)b;
	}
	return n;
}

#if SH_X86
#include <immintrin.h>
#define SH_NB_512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vpopcntdq")))

/* The bits set in each 64-bit lane of words w[0..n) anded with x's, by
 * AVX-512 BW alone: each nibble's count looked up in a register, the bytes
 * summed over the words (at most 48 each) and then over each lane. */
SH_NB_512 static inline __attribute__((always_inline)) __m512i
popcount_lut(const __m512i *x, const __m512i *w, unsigned n)
{
	const __m512i lut = _mm512_set4_epi32(0x04030302, 0x03020201, 0x03020201, 0x02010100);
	const __m512i low = _mm512_set1_epi8(0x0f);
	__m512i bytes = _mm512_setzero_si512();

#pragma GCC unroll 8
	for (unsigned k = 0; k < n; k++) {
		__m512i v = _mm512_and_si512(x[k], w[k]);
		bytes = _mm512_add_epi8(bytes, _mm512_add_epi8(
			_mm512_shuffle_epi8(lut, _mm512_and_si512(v, low)),
			_mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(v, 4), low))));
	}
	return _mm512_sad_epu8(bytes, _mm512_setzero_si512());
}

/* The same, eight members b at a time (a quarter of the time of 300,000
 * short lines went to large buckets' bounds one pair at a time); the bits
 * counted with VPOPCNTDQ where vpopcnt says, else by popcount_lut() (CPUs
 * with AVX-512 BW but not it: Skylake and Cascade Lake Xeons). Inlined into
 * one function for each, with the words' loops unrolled, so that both
 * members' words stay in registers (through a run-time flag they went to
 * the stack and back for every eight members). */
SH_NB_512 static inline __attribute__((always_inline)) size_t
bounds_avx512(const uint64_t *c, size_t cap, size_t a, size_t from, size_t s, uint32_t *hit,
	      int vpopcnt)
{
	__m512i wa[SH_NB_WORDS], wb[SH_NB_WORDS];
	uint64_t size_a = c[COL_SIZE * cap + a], n_a = (uint32_t)size_a, lo_a, hi_a;
	uint64_t tenths = sh_near_tenths((simhash_near_kind)(size_a >> 32));
	__m512i lo, hi;
	__m512i low32 = _mm512_set1_epi64(UINT32_MAX), na = _mm512_set1_epi64((long long)n_a);
	__m512i la = _mm512_set1_epi64((long long)c[COL_LOST * cap + a]);
	__m512i t = _mm512_set1_epi64((long long)tenths);
	__m512i t10 = _mm512_set1_epi64((long long)(10 + tenths));
	__m512i lmax = _mm512_set1_epi64(SH_NB_LOST_MAX);
	size_t n = 0;

	size_range(size_a, &lo_a, &hi_a);
	lo = _mm512_set1_epi64((long long)lo_a);
	hi = _mm512_set1_epi64((long long)hi_a);
#pragma GCC unroll 8
	for (unsigned w = 0; w < SH_NB_WORDS; w++)
		wa[w] = _mm512_set1_epi64((long long)c[w * cap + a]);
	for (size_t b = from; b < s; b += 8) {
		__mmask8 m = s - b >= 8 ? 0xff : (__mmask8)((1u << (s - b)) - 1);
		__m512i size_b = _mm512_maskz_loadu_epi64(m, c + COL_SIZE * cap + b), nb, ub;
		m = _mm512_mask_cmpge_epu64_mask(m, size_b, lo);
		m = _mm512_mask_cmple_epu64_mask(m, size_b, hi);
		if (!m)
			continue;
		nb = _mm512_and_si512(size_b, low32);
		ub = _mm512_min_epu64(la, _mm512_maskz_loadu_epi64(m, c + COL_LOST * cap + b));
#pragma GCC unroll 8
		for (unsigned w = 0; w < SH_NB_WORDS; w++)
			wb[w] = _mm512_maskz_loadu_epi64(m, c + w * cap + b);
		if (vpopcnt)
#pragma GCC unroll 8
			for (unsigned w = 0; w < SH_NB_WORDS; w++)
				ub = _mm512_add_epi64(ub, _mm512_popcnt_epi64(
					_mm512_and_si512(wa[w], wb[w])));
		else
			ub = _mm512_add_epi64(ub, popcount_lut(wa, wb, SH_NB_WORDS));
		m = _mm512_mask_cmpge_epu64_mask(m, _mm512_mullo_epi64(ub, t10),
						 _mm512_mullo_epi64(_mm512_add_epi64(na, nb), t)) |
		    _mm512_mask_cmpge_epu64_mask(m, ub, lmax);
		for (unsigned k = m; k; k &= k - 1)
			hit[n++] = (uint32_t)(b + (unsigned)__builtin_ctz(k));
	}
	return n;
}

/* bucket_columns() eight members at a time: their summaries' lines as the
 * rows of an 8 x 8 matrix of words, transposed in three rounds of two-source
 * permutes; the last word of a line holds n_keys, lost and kind. Returns
 * where the members left (fewer than eight) start. */
SH_NB_512 static size_t columns_avx512(const struct summary *sum, const struct member *m,
				       size_t from, size_t s, uint64_t *c, size_t cap)
{
	const __m512i even = _mm512_setr_epi64(0, 8, 2, 10, 4, 12, 6, 14);
	const __m512i odd = _mm512_setr_epi64(1, 9, 3, 11, 5, 13, 7, 15);
	const __m512i lo2 = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
	const __m512i hi2 = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
	const __m512i lo4 = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
	const __m512i hi4 = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
	const __m512i low32 = _mm512_set1_epi64(UINT32_MAX), low16 = _mm512_set1_epi64(0xffff);
	size_t i;

	_Static_assert(sizeof(struct summary) == 64 && offsetof(struct summary, n_keys) == 56 &&
			       offsetof(struct summary, lost) == 60 &&
			       offsetof(struct summary, kind) == 62,
		       "a summary is one line, its sizes in the last word");
	for (i = from; i + 8 <= s; i += 8) {
		__m512i r[8], a[8], b[8], col[8];
#pragma GCC unroll 8
		for (unsigned k = 0; k < 8; k++)
			r[k] = _mm512_load_si512((const void *)&sum[m[i + k].i]);
#pragma GCC unroll 8
		for (unsigned k = 0; k < 8; k += 2) { /* words 2j / 2j + 1 of rows k, k + 1 */
			a[k] = _mm512_permutex2var_epi64(r[k], even, r[k + 1]);
			a[k + 1] = _mm512_permutex2var_epi64(r[k], odd, r[k + 1]);
		}
#pragma GCC unroll 8
		for (unsigned k = 0; k < 8; k += 4)
#pragma GCC unroll 8
			for (unsigned j = 0; j < 2; j++) { /* of four rows */
				b[k + j] = _mm512_permutex2var_epi64(a[k + j], lo2, a[k + j + 2]);
				b[k + j + 2] = _mm512_permutex2var_epi64(a[k + j], hi2, a[k + j + 2]);
			}
#pragma GCC unroll 8
		for (unsigned j = 0; j < 4; j++) { /* b[j]: words j, j + 4; of all rows */
			col[j] = _mm512_permutex2var_epi64(b[j], lo4, b[j + 4]);
			col[j + 4] = _mm512_permutex2var_epi64(b[j], hi4, b[j + 4]);
		}
#pragma GCC unroll 8
		for (unsigned w = 0; w < SH_NB_WORDS; w++)
			_mm512_storeu_si512((void *)(c + w * cap + i), col[w]);
		_mm512_storeu_si512((void *)(c + COL_SIZE * cap + i),
				    _mm512_or_si512(_mm512_and_si512(col[7], low32),
						    _mm512_slli_epi64(_mm512_srli_epi64(col[7], 48), 32)));
		_mm512_storeu_si512((void *)(c + COL_LOST * cap + i),
				    _mm512_and_si512(_mm512_srli_epi64(col[7], 32), low16));
	}
	return i;
}

SH_NB_512 static size_t bounds_vpopcnt(const uint64_t *c, size_t cap, size_t a, size_t from,
				       size_t s, uint32_t *hit)
{
	return bounds_avx512(c, cap, a, from, s, hit, 1);
}

SH_NB_512 static size_t bounds_lut(const uint64_t *c, size_t cap, size_t a, size_t from, size_t s,
				   uint32_t *hit)
{
	return bounds_avx512(c, cap, a, from, s, hit, 0);
}

/* bounds_avx512() here: 0 no, 1 with popcount_lut(), 2 with VPOPCNTDQ. */
static int have_avx512(void)
{
	if (!sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512DQ | SH_CPU_AVX512BW))
		return 0;
	return sh_cpu_has(SH_CPU_AVX512VPOPCNTDQ) ? 2 : 1;
}
#else
static int have_avx512(void)
{
	return 0;
}
#endif

/* Inlined into both copies of run_buckets(), so the portable path counts
 * with the popcnt instruction where the CPU has it. */
static inline __attribute__((always_inline)) size_t
bucket_bounds(const struct bandjoin *bj, size_t a, size_t from, size_t s)
{
#if SH_X86
	if (bj->avx512 == 2)
		return bounds_vpopcnt(bj->col, bj->cap, a, from, s, bj->hit);
	if (bj->avx512)
		return bounds_lut(bj->col, bj->cap, a, from, s, bj->hit);
#endif
	return bounds_scalar(bj, a, from, s);
}

/* The bits of the largest first member's index (at least 1). */
static unsigned index_bits(size_t n_reps)
{
	unsigned b = 1;

	while (b < 32 && ((size_t)1 << b) < n_reps)
		b++;
	return b;
}

/* Members m[0..n) by component, then first member, ascending: each packed
 * into one key, the component's bits on top and the first member's below
 * (rb bits each), and sorted as the sketches' keys are (sh_sketch_sort():
 * in registers up to 128 members, else a scatter by the top bits; qsort
 * with a comparison per call was half the time of regrouping). */
static void sort_members(const struct bandjoin *bj, struct member *m, size_t n)
{
	unsigned rb = bj->rb;
	uint64_t *k = bj->key, mask = rb == 32 ? UINT32_MAX : ((uint64_t)1 << rb) - 1;

	for (size_t i = 0; i < n; i++)
		k[i] = (uint64_t)m[i].root << (64 - rb) | (uint64_t)m[i].i << (64 - 2 * rb);
	sh_sketch_sort(k, n, bj->key_tmp, bj->avx512 != 0, 0);
	for (size_t i = 0; i < n; i++)
		m[i] = (struct member){ (uint32_t)(k[i] >> (64 - rb)),
					(uint32_t)(k[i] >> (64 - 2 * rb) & mask) };
}

/* Members m[from..s) with their components found again, grouped by
 * component (clusters); 0 when they are all one component. */
static int regroup(struct bandjoin *bj, struct member *m, size_t from, size_t s)
{
	int one = 1;

	for (size_t i = from; i < s; i++) {
		m[i].root = sh_near_find(bj->uf, m[i].i);
		one &= m[i].root == m[from].root;
	}
	if (one)
		return 0;
	sort_members(bj, m + from, s - from);
	bucket_columns(bj, m, from, s);
	return 1;
}

/* A large bucket (more than 8 members): its members by column, and each
 * member's bounds against the later ones at once; each pair that passes
 * goes to the merges (queue_pair()). Pairs: every pair, each owned one
 * merged. Clusters: the members grouped by component, each checked against
 * the later groups only, so a bucket inside one component costs its size;
 * once the joins since the members were grouped reach an eighth of those
 * left, the rest are grouped again (a bucket of one near-duplicate
 * template joins in its first member's row, and its other rows are
 * empty). */
static inline __attribute__((always_inline)) simhash_err
bucket_large(struct bandjoin *bj, const sh_near_ent *e, size_t s)
{
	struct member *m = bj->m;
	size_t end = 0, joins = bj->n_joins;
	simhash_err err = SIMHASH_OK;

	for (size_t i = 0; i < s; i++)
		m[i] = (struct member){ (uint32_t)i, e[i].i };
	if (bj->uf) {
		if (!regroup(bj, m, 0, s))
			return SIMHASH_OK;
	} else {
		bucket_columns(bj, m, 0, s);
	}
	for (size_t a = 0; a + 1 < s && !err; a++) {
		size_t n_hit;
		if (!bj->uf) {
			end = a + 1;
		} else if (end <= a) { /* a's group ends at end */
			for (end = a + 1; end < s && m[end].root == m[a].root; end++)
				;
			if (end == s)
				break; /* the rest are one component */
		}
		n_hit = bucket_bounds(bj, a, end, s);
		for (size_t h = 0; h < n_hit && !err; h++) {
			uint32_t x = m[a].i, y = m[bj->hit[h]].i;
			if (bj->uf || owned(bj, x, y, e[a].band))
				err = queue_pair(bj, x, y);
		}
		if (bj->uf && n_hit && !err && 8 * (bj->n_joins - joins) > s - a) {
			err = queue_flush(bj);
			if (!regroup(bj, m, a + 1, s))
				break;
			joins = bj->n_joins;
			end = 0;
		}
	}
	return err;
}

/* Whether entry q of e[0..n) (sorted by key) is a bucket of one. */
static inline int held_once(const sh_near_ent *e, size_t n, size_t q)
{
	return (q == 0 || e[q - 1].key != e[q].key) && (q + 1 == n || e[q + 1].key != e[q].key);
}

/* One band's buckets (its entries sorted by key; the buckets of one that
 * shared_keys() let through are passed over), in two copies: with the
 * popcnt instruction and without (a call to libgcc's __popcountdi2 per
 * word, 8 % of the time on 300,000 short lines); the same results. */
static inline __attribute__((always_inline)) simhash_err
run_buckets(struct bandjoin *bj, const sh_near_ent *e, size_t n_e)
{
	size_t r, t, q = 0;
	simhash_err err = SIMHASH_OK;

	for (r = 0; r < n_e && !err; r = t) {
		for (t = r + 1; t < n_e && e[t].key == e[r].key; t++)
			;
		if (t - r == 1)
			continue;
		/* the summaries and union-find slots of the members
		 * SH_NB_AHEAD entries on, fetched now: gathering them waited on
		 * memory for half of this loop's time */
		for (; q < n_e && q < t + SH_NB_AHEAD; q++) {
			if (held_once(e, n_e, q))
				continue;
			__builtin_prefetch(&bj->sum[e[q].i]);
			if (bj->uf)
				__builtin_prefetch(&bj->uf[e[q].i]);
		}
		if (t - r > 8) {
			err = bucket_scratch(bj, t - r);
			if (!err)
				err = bucket_large(bj, e + r, t - r);
		} else {
			err = bucket_small(bj, e + r, t - r);
		}
	}
	return err;
}

SH_TARGET_POPCNT static simhash_err run_buckets_popcnt(struct bandjoin *bj, const sh_near_ent *e,
						       size_t n_e)
{
	return run_buckets(bj, e, n_e);
}

static simhash_err run_buckets_plain(struct bandjoin *bj, const sh_near_ent *e, size_t n_e)
{
	return run_buckets(bj, e, n_e);
}

/* The bits of shared_keys()'s maps: about 8 per first member, 2^6 to
 * 2^SH_NB_SEEN_MAX (so they stay in cache). */
static unsigned seen_bits(size_t n_reps)
{
	unsigned bits = 6;

	while (bits < SH_NB_SEEN_MAX && ((size_t)1 << bits) < 8 * n_reps)
		bits++;
	return bits;
}

/* The entries of band k whose key may be shared, into e; returns how many.
 * Two bit maps over the keys' low bits (seen, seen twice: seen_bits() each)
 * keep every key held twice or more and drop most of the rest, which form
 * buckets of one: about a third of the entries are left to sort (300,000
 * short lines). */
static size_t shared_keys(const struct bandjoin *bj, uint32_t k, uint64_t *seen, sh_near_ent *e)
{
	const uint64_t *col = bj->bands + (size_t)k * bj->n_reps;
	unsigned bits = seen_bits(bj->n_reps);
	uint64_t *twice = seen + ((size_t)1 << (bits - 6)), mask = ((uint64_t)1 << bits) - 1;
	size_t i, n = 0;

	memset(seen, 0, 2 * ((size_t)1 << (bits - 6)) * sizeof *seen);
	for (i = 0; i < bj->n_reps; i++) {
		uint64_t h = col[i] & mask, bit = (uint64_t)1 << (h & 63);
		twice[h >> 6] |= seen[h >> 6] & bit;
		seen[h >> 6] |= bit;
	}
	for (i = 0; i < bj->n_reps; i++) { /* no branch: e has room for all */
		uint64_t h = col[i] & mask;
		e[n] = (sh_near_ent){ col[i], (uint32_t)i, k };
		n += twice[h >> 6] >> (h & 63) & 1;
	}
	return n;
}

static simhash_err band_join_on(int level, const simhash_sketch *docs, size_t n,
				uint64_t *same, uint64_t *cluster, simhash_near_pair **out,
				size_t *n_out);

/* The join at each path level (band_join_on()), as the entry points take it. */
static simhash_err band_join(const simhash_sketch *docs, size_t n, uint64_t *same,
			     uint64_t *cluster, simhash_near_pair **out, size_t *n_out)
{
	return band_join_on(2, docs, n, same, cluster, out, n_out);
}

static simhash_err band_join_1(const simhash_sketch *docs, size_t n, uint64_t *same,
			       uint64_t *cluster, simhash_near_pair **out, size_t *n_out)
{
	return band_join_on(1, docs, n, same, cluster, out, n_out);
}

static simhash_err band_join_0(const simhash_sketch *docs, size_t n, uint64_t *same,
			       uint64_t *cluster, simhash_near_pair **out, size_t *n_out)
{
	return band_join_on(0, docs, n, same, cluster, out, n_out);
}

static sh_near_run_fn join_at(int level)
{
	return level >= 2 ? band_join : level == 1 ? band_join_1 : band_join_0;
}

/* The entry points: the pairs here, the clusters at the end. */
simhash_err simhash_near_band_join(const simhash_sketch *docs, size_t n, uint64_t *same,
				   simhash_near_pair **out, size_t *n_out)
{
	return sh_near_pairs_of(band_join, docs, n, same, out, n_out);
}

simhash_err sh_near_band_join_path(int level, const simhash_sketch *docs, size_t n,
				   uint64_t *same, simhash_near_pair **out, size_t *n_out)
{
	return sh_near_pairs_of(join_at(level), docs, n, same, out, n_out);
}

/* The join; level 2: every vector path the CPU has; 1: the same, but the
 * large buckets' bits counted without VPOPCNTDQ; 0: the portable paths
 * (the tests compare all three). */
static simhash_err band_join_on(int level, const simhash_sketch *docs, size_t n,
				uint64_t *same, uint64_t *cluster, simhash_near_pair **out,
				size_t *n_out)
{
	int have = level ? have_avx512() : 0;
	struct bandjoin bj = { .avx512 = have < level ? have : level };
	sh_near_ent *e = NULL;
	uint64_t *seen = NULL;
	size_t i, n_e;
	int popcnt, keys = sh_near_keys_level();
	sh_near_table *tab = NULL;
	simhash_err err;

	if ((n && (!docs || !same)) || n >= UINT32_MAX / SIMHASH_NEAR_BANDS)
		return SIMHASH_EINVAL;
	/* the band keys' path for the level: 1 stands for AVX-512 without
	 * VBMI (Skylake-SP and Cascade Lake Xeons) */
	keys = level == 0 ? SH_NEAR_KEYS_PORTABLE : level == 1 && keys > SH_NEAR_KEYS_AVX512
		? SH_NEAR_KEYS_AVX512 : keys;
	for (i = 0; i < n; i++)
		if ((docs[i].n_keys && !docs[i].keys) || docs[i].n_keys >= UINT32_MAX ||
		    (docs[i].kind != SIMHASH_NEAR_CHARS && docs[i].kind != SIMHASH_NEAR_SHINGLES))
			return SIMHASH_EINVAL;
	err = sh_near_collapse(docs, n, same);
	if (err)
		return err;
	bj.rep = sh_alloc_big((n ? n : 1) * sizeof *bj.rep);
	if (!bj.rep)
		return SIMHASH_ENOMEM;
	for (i = 0; i < n; i++)
		if (same[i] == i)
			bj.rep[bj.n_reps++] = i;
	bj.rb = index_bits(bj.n_reps);
	n_e = bj.n_reps * SIMHASH_NEAR_BANDS;
	bj.bands = sh_alloc_big(n_e * sizeof *bj.bands);
	e = sh_alloc_big((bj.n_reps ? bj.n_reps : 1) * sizeof *e);
	bj.sum = sh_alloc_big(bj.n_reps * sizeof *bj.sum);
	if (cluster)
		bj.uf = sh_alloc_big((bj.n_reps ? bj.n_reps : 1) * sizeof *bj.uf);
	seen = malloc(2 * ((size_t)1 << (seen_bits(bj.n_reps) - 6)) * sizeof *seen);
	if (!bj.bands || !e || !bj.sum || !seen || (cluster && !bj.uf) ||
	    (keys == SH_NEAR_KEYS_PORTABLE && bj.n_reps >= SH_NB_TABLE_MIN &&
	     sh_near_table_new(&tab)) ||
	    sh_near_sort_init(&bj.sort, bj.n_reps)) {
		err = SIMHASH_ENOMEM;
		goto done;
	}
	for (i = 0; i < bj.n_reps; i++) {
		uint64_t b[SIMHASH_NEAR_BANDS];
		bands_of(&docs[bj.rep[i]], b, keys, tab, &bj.sum[i]);
		for (uint32_t k = 0; k < SIMHASH_NEAR_BANDS; k++)
			bj.bands[k * bj.n_reps + i] = b[k];
		if (bj.uf)
			bj.uf[i] = (uint32_t)i;
	}
	/* band by band: a band's entries fit in cache, and pairs joined in one
	 * band are skipped in the next */
	popcnt = sh_cpu_has(SH_CPU_POPCNT);
	for (uint32_t k = 0; k < SIMHASH_NEAR_BANDS && !err; k++) {
		size_t n_k = shared_keys(&bj, k, seen, e);
		sh_near_ent *sorted = sh_near_sort_into(&bj.sort, e, n_k);
		err = popcnt ? run_buckets_popcnt(&bj, sorted, n_k)
			     : run_buckets_plain(&bj, sorted, n_k);
	}
	if (!err)
		err = queue_flush(&bj);
	if (!err)
		err = sh_near_result(&bj.out, bj.n_out, out, n_out);
	if (!err && cluster)
		err = sh_near_components(bj.rep, bj.n_reps, bj.uf, same, n, cluster);
done:
	sh_buf_free(&bj.out);
	free(e);
	free(seen);
	free(bj.bands);
	free(bj.sum);
	free(bj.rep);
	free(bj.uf);
	sh_near_table_free(tab);
	sh_near_sort_free(&bj.sort);
	free(bj.col);
	free(bj.hit);
	free(bj.m);
	free(bj.key);
	free(bj.key_tmp);
	return err;
}

simhash_err simhash_near_band_clusters(const simhash_sketch *docs, size_t n, uint64_t *cluster)
{
	return sh_near_clusters_of(band_join, docs, n, cluster);
}

simhash_err sh_near_band_clusters_path(int level, const simhash_sketch *docs, size_t n,
				       uint64_t *cluster)
{
	return sh_near_clusters_of(join_at(level), docs, n, cluster);
}
