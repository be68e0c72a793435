/* vote_avx512.c - the unit votes, and the char MinHash, of runs of one-byte
 * 1-to-3-grams, eight windows per vector, on CPUs with AVX-512 (F, DQ, BW).
 *
 * The scalar loop in fingerprint.c is the reference; this gives the same
 * counts, so the same fingerprints (tests run both on the same texts). Lane k
 * of every vector holds window i + k: its XXH3 (the 1-3 byte path of
 * XXH3_64bits, computed for eight lanes: the three bytes, the length, the
 * secret's bitflip and XXH64's avalanche with 64-bit multiplies) and its
 * vote, counted bit-sliced per lane in vote planes (plane k counts 2^k) that
 * sh_vote_finish() folds into the scalar counters. Eight vectors at a time go
 * through a carry-save adder tree, where ternary logic does a full adder in
 * two instructions.
 *
 * The MinHash kernels of the v2 default run here too, each the twin of a
 * scalar loop that tests run beside it: the char MinHash of CJK bigrams and
 * of windows of equal-width characters (combining marks, Cyrillic, Greek:
 * textvote.c), the word and shingle keys of auto.c's scan, and the low
 * bits of the densified bins (auto.c's sh_mh_bits()).
 */
#include "vote.h"
#include "auto.h"
#include "../hash/hash_inline.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw")))

/* The CPU model is read by a constructor of the compiler's runtime before
 * main, so this only reads it: safe from any thread. */
int sh_cpu_has_avx512(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512DQ | SH_CPU_AVX512BW);
}

/* Makes planes [0, k] exist (zeroed when new). */
static void planes_upto(sh_vote *v, unsigned k)
{
	while (v->vtop <= k)
		memset(v->vplane[v->vtop++], 0, sizeof v->vplane[0]);
}

/* Adds the eight lane words x at plane k, carrying upwards. */
SH_AVX512 static void ripple(sh_vote *v, __m512i x, unsigned k)
{
	for (;; k++) {
		__m512i p, c;
		planes_upto(v, k);
		p = _mm512_loadu_si512(v->vplane[k]);
		c = _mm512_and_si512(p, x);
		_mm512_storeu_si512(v->vplane[k], _mm512_xor_si512(p, x));
		x = c;
		if (!_mm512_test_epi64_mask(x, x))
			return;
	}
}

/* Full adder of three vectors: *h gets the carries, the return the sums. */
SH_AVX512 static inline __m512i csa(__m512i *h, __m512i a, __m512i b, __m512i c)
{
	*h = _mm512_ternarylogic_epi64(a, b, c, 0xE8); /* majority */
	return _mm512_ternarylogic_epi64(a, b, c, 0x96); /* a ^ b ^ c */
}

/* XXH3_64bits of the eight windows p[k .. k+ng), 1 <= ng <= 3. XXH3 of 1
 * to 3 bytes: combined ^ bitflip, where the length sits in combined's
 * second byte; both are the same for every window of a run (the constants
 * leave the callers' loops once inlined). */
SH_AVX512 static inline __attribute__((always_inline)) __m512i hash8(const uint8_t *p, unsigned ng)
{
	const uint64_t bitflip = (uint64_t)(XXH_readLE32(XXH3_kSecret) ^
					    XXH_readLE32(XXH3_kSecret + 4));
	const __m512i key = _mm512_set1_epi64((long long)(bitflip ^ ((uint64_t)ng << 8)));
	const __m512i p2 = _mm512_set1_epi64((long long)XXH_PRIME64_2);
	const __m512i p3 = _mm512_set1_epi64((long long)XXH_PRIME64_3);
	__m512i c1 = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)p));
	__m512i c2 = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(p + (ng >> 1))));
	__m512i c3 = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(p + ng - 1)));
	__m512i h = _mm512_or_si512(_mm512_slli_epi64(c1, 16), _mm512_slli_epi64(c2, 24));

	h = _mm512_ternarylogic_epi64(h, c3, key, 0x56); /* (h | c3) ^ key */
	h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 33));
	h = _mm512_mullo_epi64(h, p2);
	h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 29));
	h = _mm512_mullo_epi64(h, p3);
	return _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
}

SH_AVX512 size_t sh_votes_ascii_avx512(sh_vote *v, const sh_text *t, size_t i, size_t safe,
				       unsigned ng)
{
	__m512i ones, twos, fours, d[8];
	unsigned nd = 0;

	planes_upto(v, 2);
	ones = _mm512_loadu_si512(v->vplane[0]);
	twos = _mm512_loadu_si512(v->vplane[1]);
	fours = _mm512_loadu_si512(v->vplane[2]);
	while (i + 8 <= safe && sh_text_one_byte8(t, i, ng)) {
		d[nd++] = hash8(t->s + t->off[i], ng);
		i += 8;
		v->n += 8;
		if (nd == 8) {
			__m512i twos_a, twos_b, fours_a, fours_b, eights;
			ones = csa(&twos_a, ones, d[0], d[1]);
			ones = csa(&twos_b, ones, d[2], d[3]);
			twos = csa(&fours_a, twos, twos_a, twos_b);
			ones = csa(&twos_a, ones, d[4], d[5]);
			ones = csa(&twos_b, ones, d[6], d[7]);
			twos = csa(&fours_b, twos, twos_a, twos_b);
			fours = csa(&eights, fours, fours_a, fours_b);
			ripple(v, eights, 3);
			nd = 0;
		}
	}
	_mm512_storeu_si512(v->vplane[0], ones);
	_mm512_storeu_si512(v->vplane[1], twos);
	_mm512_storeu_si512(v->vplane[2], fours);
	for (unsigned k = 0; k < nd; k++)
		ripple(v, d[k], 0);
	return i;
}

/* textvote.c's sh_ngram_keys() is the reference: each window's XXH3 as
 * above, stored in window order (a near sketch's keys before their sort). */
SH_AVX512 size_t sh_keys_ascii_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe,
				      unsigned ng)
{
	size_t from = i;

	while (i + 8 <= safe && sh_text_one_byte8(t, i, ng)) {
		_mm512_storeu_si512(out + (i - from), hash8(t->s + t->off[i], ng));
		i += 8;
	}
	return i;
}

/* The MinHash step of eight keys: each xor c through splitmix64's
 * finalizer (char_mh_key(), auto.c's mixes), then the bins' minima lowered
 * one value at a time, in order (a minimum depends on no order). Minima
 * only go down, so a value not below its bin's minimum as read before the
 * step lowers nothing: once the bins have filled (MH_WARM steps), most
 * steps end at the compare, without a store and load per value through the
 * same few bins (a text that repeats a few n-grams hits one bin again and
 * again). */
/* Steps of a kernel call before mh_add8() compares before it stores: while
 * the bins are filling, most steps lower some bin, and plain stores cost
 * less than a compare that fails (short documents never leave it). */
#define MH_WARM 64

/* The state of mh_add8() in one kernel call: the steps taken (to MH_WARM),
 * and the bins' minima of a 64-bit fingerprint (64 bins, shift 58) held in
 * eight registers, so that the eight minima a step compares against come
 * from four two-table permutes and three blends instead of a gather (other
 * widths gather). The registers are loaded again after any bin goes down. */
typedef struct mh_regs {
	__m512i m[8];
	int on;
	unsigned steps;
} mh_regs;

SH_AVX512 static inline __attribute__((always_inline)) void mh_load(mh_regs *r,
								    const uint64_t mins[128])
{
	if (r->on)
		for (int k = 0; k < 8; k++)
			r->m[k] = _mm512_loadu_si512(mins + 8 * k);
}

/* The registers are loaded once warm (mh_add8()). */
SH_AVX512 static inline __attribute__((always_inline)) void mh_regs_init(mh_regs *r,
									 unsigned shift)
{
	r->on = shift == 58;
	r->steps = 0;
}

/* mins[bin] in each lane. */
SH_AVX512 static inline __attribute__((always_inline)) __m512i
mh_cur(const mh_regs *r, const uint64_t mins[128], __m512i bin)
{
	__mmask8 b4, b5;
	__m512i lo, hi;

	if (!r->on)
		return _mm512_i64gather_epi64(bin, (const void *)mins, 8);
	/* the low four bits pick one of sixteen in each pair of registers,
	 * bits 4 and 5 the pair */
	b4 = _mm512_test_epi64_mask(bin, _mm512_set1_epi64(16));
	b5 = _mm512_test_epi64_mask(bin, _mm512_set1_epi64(32));
	lo = _mm512_mask_blend_epi64(b4, _mm512_permutex2var_epi64(r->m[0], bin, r->m[1]),
				     _mm512_permutex2var_epi64(r->m[2], bin, r->m[3]));
	hi = _mm512_mask_blend_epi64(b4, _mm512_permutex2var_epi64(r->m[4], bin, r->m[5]),
				     _mm512_permutex2var_epi64(r->m[6], bin, r->m[7]));
	return _mm512_mask_blend_epi64(b5, lo, hi);
}

SH_AVX512 static inline __attribute__((always_inline)) void
mh_add8(uint64_t mins[128], unsigned shift, __m512i h, uint64_t c, mh_regs *r)
{
	const __m512i m1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull);
	const __m512i m2 = _mm512_set1_epi64((long long)0x94d049bb133111ebull);
	__m512i bin, cur;
	__mmask8 lower;
	uint64_t z[8];

	h = _mm512_xor_si512(h, _mm512_set1_epi64((long long)c));
	h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 30)), m1);
	h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 27)), m2);
	h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 31));
	if (r->steps < MH_WARM) {
		_mm512_storeu_si512(z, h);
		for (unsigned k = 0; k < 8; k++)
			sh_mh_add(mins, shift, z[k]);
		if (++r->steps == MH_WARM)
			mh_load(r, mins);
		return;
	}
	bin = _mm512_srl_epi64(h, _mm_cvtsi32_si128((int)shift));
	cur = mh_cur(r, mins, bin);
	lower = _mm512_cmplt_epu64_mask(h, cur);
	if (!lower)
		return;
	_mm512_storeu_si512(z, h);
	for (unsigned k = 0; k < 8; k++)
		if (lower >> k & 1)
			sh_mh_add(mins, shift, z[k]);
	mh_load(r, mins);
}

/* textvote.c's sh_ngram_minhash() is the reference: each window's XXH3 as
 * above, mixed as its char_mh_key() does (splitmix64's finalizer of the hash
 * xor a constant), eight lanes at a time; the bins' minima are then lowered
 * one value at a time, in window order (a minimum depends on no order). */
SH_AVX512 size_t sh_minhash_ascii_avx512(uint64_t mins[128], unsigned shift, const sh_text *t,
					 size_t i, size_t safe, unsigned ng)
{
	mh_regs r;

	mh_regs_init(&r, shift);
	while (i + 8 <= safe && sh_text_one_byte8(t, i, ng)) {
		mh_add8(mins, shift, hash8(t->s + t->off[i], ng), 0x2545f4914f6cdd1dull, &r);
		i += 8;
	}
	return i;
}

/* Whether the eight windows from i are bigrams of nine three-byte
 * characters, the first eight CJK (textvote.c's ngram_keys8() test), with
 * 34 bytes of text from the first (the loads below read that far). */
static inline int cjk_bigrams8(const sh_text *t, size_t i)
{
	uint64_t c;

	memcpy(&c, t->cls + i, 8);
	return c == 0x0101010101010101ull * SH_C_CJK && t->off[i + 8] - t->off[i] == 24 &&
	       t->off[i + 9] - t->off[i + 8] == 3 && t->off[i] + 34 <= t->len;
}

/* The XXH3 of eight CJK bigram windows from window i (cjk_bigrams8()):
 * window k of eight is the six bytes from 3k, its XXH3 the 4-to-8-byte path
 * (input1 the first four bytes, input2 the last four, rrmxmx with length
 * 6). Each 128-bit lane holds the sixteen bytes its two windows read, one
 * shuffle puts every window's input64 (input2 low, input1 high) in its
 * 64-bit lane. */
SH_AVX512 static inline __m512i cjk2_hash8(const uint8_t *p)
{
	const __m512i bf48 = _mm512_set1_epi64(
		(long long)(XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)));
	const __m512i pick = _mm512_broadcast_i32x4(
		_mm_setr_epi8(2, 3, 4, 5, 0, 1, 2, 3, 5, 6, 7, 8, 3, 4, 5, 6));
	const __m512i rm = _mm512_set1_epi64((long long)0x9FB21C651E98DF25ull);
	const __m512i six = _mm512_set1_epi64(6);
	__m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p)), h;

	x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + 6)), 1);
	x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + 12)), 2);
	x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + 18)), 3);
	h = _mm512_xor_si512(_mm512_shuffle_epi8(x, pick), bf48);
	/* XXH3_rrmxmx(keyed, 6) */
	h = _mm512_ternarylogic_epi64(h, _mm512_rol_epi64(h, 49), _mm512_rol_epi64(h, 24), 0x96);
	h = _mm512_mullo_epi64(h, rm);
	h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64(h, 35), six));
	h = _mm512_mullo_epi64(h, rm);
	return _mm512_xor_si512(h, _mm512_srli_epi64(h, 28));
}

/* As sh_minhash_ascii_avx512(), for runs of CJK bigrams (cjk2_hash8()). */
SH_AVX512 size_t sh_minhash_cjk2_avx512(uint64_t mins[128], unsigned shift, const sh_text *t,
					size_t i, size_t safe)
{
	mh_regs r;

	if (i + 8 > safe || !cjk_bigrams8(t, i))
		return i;
	mh_regs_init(&r, shift);
	for (; i + 8 <= safe && cjk_bigrams8(t, i); i += 8) /* char_mh_key() */
		mh_add8(mins, shift, cjk2_hash8(t->s + t->off[i]), 0x2545f4914f6cdd1dull, &r);
	return i;
}

/* As sh_keys_ascii_avx512(), for runs of CJK bigrams (cjk2_hash8()). */
SH_AVX512 size_t sh_keys_cjk2_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe)
{
	size_t from = i;

	for (; i + 8 <= safe && cjk_bigrams8(t, i); i += 8)
		_mm512_storeu_si512(out + (i - from), cjk2_hash8(t->s + t->off[i]));
	return i;
}

/* XXH3_mul128_fold64(a, b) in each lane: the low and the high half of the
 * 128-bit product, xored. The product is assembled from the four 32 x 32-bit
 * ones: lo + (m1 + m2) << 32 + hi << 64, the middle column's carry (t fits
 * in 34 bits) going into the high half. */
SH_AVX512 static inline __m512i mul128_fold8(__m512i a, __m512i b)
{
	const __m512i m32 = _mm512_set1_epi64(0xffffffffll);
	__m512i ah = _mm512_srli_epi64(a, 32), bh = _mm512_srli_epi64(b, 32);
	__m512i lo = _mm512_mul_epu32(a, b), hi = _mm512_mul_epu32(ah, bh);
	__m512i m1 = _mm512_mul_epu32(ah, b), m2 = _mm512_mul_epu32(a, bh);
	__m512i t = _mm512_add_epi64(_mm512_add_epi64(_mm512_srli_epi64(lo, 32),
						      _mm512_and_si512(m1, m32)),
				     _mm512_and_si512(m2, m32));
	__m512i low = _mm512_or_si512(_mm512_and_si512(lo, m32), _mm512_slli_epi64(t, 32));
	__m512i high = _mm512_add_epi64(_mm512_add_epi64(hi, _mm512_srli_epi64(m1, 32)),
					_mm512_add_epi64(_mm512_srli_epi64(m2, 32),
							 _mm512_srli_epi64(t, 32)));
	return _mm512_xor_si512(low, high);
}

/* Whether the eight windows from i are ng characters of w bytes each: the
 * 7 + ng characters from i all of w bytes, and none of the eight first a CJK
 * character unless CJK windows are as long (ngc == ng). ng <= 8: the
 * offsets fit one vector of sixteen. */
SH_AVX512 static inline int wide8(const sh_text *t, size_t i, unsigned ng, unsigned ngc,
				  unsigned w)
{
	const __mmask16 m = (__mmask16)((1u << (7 + ng)) - 1);
	__m512i a = _mm512_maskz_loadu_epi32(m, t->off + i);
	__m512i b = _mm512_maskz_loadu_epi32(m, t->off + i + 1);
	uint64_t c;

	if (_mm512_mask_cmpneq_epi32_mask(m, _mm512_sub_epi32(b, a), _mm512_set1_epi32((int)w)))
		return 0;
	if (ngc == ng)
		return 1;
	memcpy(&c, t->cls + i, 8);
	c ^= 0x0101010101010101ull * SH_C_CJK; /* a zero byte: a CJK character */
	return !((c - 0x0101010101010101ull) & ~c & 0x8080808080808080ull);
}

/* The inputs XXH3 reads of the eight windows of len bytes from p, p + w,
 * ..., p + 7w (4 <= len <= 16), one window per 64-bit lane: for its
 * 4-to-8-byte path the last four bytes low and the first four high (*a), for
 * its 9-to-16-byte path the first eight bytes (*a), the same byte-swapped
 * (*b) and the last eight (*c). Where two windows fit sixteen bytes (w + len
 * <= 16) and the eight span sixteen at least, 128-bit lane j loads the
 * sixteen bytes from base_j (wide_base()) that hold windows 2j and 2j + 1,
 * and shuffles them (the controls of wide_ctl_of()); else each input is
 * gathered. No read leaves the eight windows. */
typedef struct wide_ctl {
	__m512i a, b, c;
	unsigned base[4];
	int shuffle;
} wide_ctl;

/* The first byte lane j loads: windows 2j and 2j + 1 start at 2jw and end by
 * 2jw + w + len, the eight at 7w + len (span); a lane that would read past
 * them starts early instead. */
static inline unsigned wide_base(unsigned j, unsigned w, unsigned span)
{
	return 2 * j * w + 16 <= span ? 2 * j * w : span - 16;
}

/* The shuffles of wide_load() for windows of len bytes w apart. */
SH_AVX512 static wide_ctl wide_ctl_of(unsigned w, unsigned len)
{
	uint8_t a[64], b[64], c[64];
	unsigned span = 7 * w + len;
	wide_ctl k;

	k.shuffle = w + len <= 16 && span >= 16;
	for (unsigned j = 0; j < 4; j++)
		k.base[j] = k.shuffle ? wide_base(j, w, span) : 0;
	for (unsigned j = 0; j < 64; j++) {
		/* window 2 (j / 16) + (j / 8 % 2) starts o bytes into its lane */
		unsigned o = 2 * (j / 16) * w - k.base[j / 16] + (j & 8 ? w : 0), x = j & 7;
		if (len <= 8)
			a[j] = (uint8_t)(x < 4 ? o + len - 4 + x : o + x - 4);
		else
			a[j] = (uint8_t)(o + x);
		b[j] = (uint8_t)(o + 7 - x);
		c[j] = (uint8_t)(o + len - 8 + x);
	}
	k.a = _mm512_loadu_si512(a);
	k.b = _mm512_loadu_si512(b);
	k.c = _mm512_loadu_si512(c);
	return k;
}

SH_AVX512 static inline void wide_load(const uint8_t *p, unsigned w, unsigned len,
				       const wide_ctl *k, __m512i *a, __m512i *b, __m512i *c)
{
	const __m512i idx = _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
					       _mm512_set1_epi64(w));
	const __m512i swap = _mm512_broadcast_i32x4(
		_mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8));

	if (k->shuffle) {
		__m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p + k->base[0])));
		x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + k->base[1])), 1);
		x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + k->base[2])), 2);
		x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(p + k->base[3])), 3);
		*a = _mm512_shuffle_epi8(x, k->a);
		*b = _mm512_shuffle_epi8(x, k->b);
		*c = _mm512_shuffle_epi8(x, k->c);
		return;
	}
	if (len <= 8) {
		__m512i in1 = _mm512_cvtepu32_epi64(_mm512_i64gather_epi32(idx, p, 1));
		__m512i in2 = _mm512_cvtepu32_epi64(_mm512_i64gather_epi32(idx, p + len - 4, 1));
		*a = _mm512_add_epi64(in2, _mm512_slli_epi64(in1, 32));
		return;
	}
	*a = _mm512_i64gather_epi64(idx, p, 1);
	*b = _mm512_shuffle_epi8(*a, swap);
	*c = _mm512_i64gather_epi64(idx, p + len - 8, 1);
}

/* XXH3_64bits of the eight windows of wide_load(): its 4-to-8-byte path
 * (rrmxmx) or its 9-to-16-byte one (the first and last eight bytes, their
 * 128-bit product folded, avalanche). */
SH_AVX512 static inline __m512i wide_hash8(const uint8_t *p, unsigned w, unsigned len,
					   const wide_ctl *k)
{
	const __m512i l = _mm512_set1_epi64(len);
	__m512i a, b, c, h;

	wide_load(p, w, len, k, &a, &b, &c);
	if (len <= 8) {
		const __m512i bf = _mm512_set1_epi64(
			(long long)(XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)));
		const __m512i rm = _mm512_set1_epi64((long long)0x9FB21C651E98DF25ull);

		h = _mm512_xor_si512(a, bf);
		/* XXH3_rrmxmx(keyed, len) */
		h = _mm512_ternarylogic_epi64(h, _mm512_rol_epi64(h, 49), _mm512_rol_epi64(h, 24), 0x96);
		h = _mm512_mullo_epi64(h, rm);
		h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64(h, 35), l));
		h = _mm512_mullo_epi64(h, rm);
		return _mm512_xor_si512(h, _mm512_srli_epi64(h, 28));
	} else {
		const uint64_t f1 = XXH_readLE64(XXH3_kSecret + 24) ^ XXH_readLE64(XXH3_kSecret + 32);
		const __m512i bf1 = _mm512_set1_epi64((long long)f1);
		const __m512i bf1s = _mm512_set1_epi64((long long)XXH_swap64(f1));
		const __m512i bf2 = _mm512_set1_epi64(
			(long long)(XXH_readLE64(XXH3_kSecret + 40) ^ XXH_readLE64(XXH3_kSecret + 48)));
		const __m512i pa = _mm512_set1_epi64((long long)0x165667919E3779F9ull);
		__m512i lo = _mm512_xor_si512(a, bf1), hi = _mm512_xor_si512(c, bf2);

		/* swap64(input_lo) is the swapped bytes xor the swapped bitflip */
		h = _mm512_add_epi64(_mm512_add_epi64(l, _mm512_xor_si512(b, bf1s)),
				     _mm512_add_epi64(hi, mul128_fold8(lo, hi)));
		/* XXH3_avalanche() */
		h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 37)), pa);
		return _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
	}
}

/* The width of the characters of the windows from i, if the wide kernels
 * take them (4 to 16 bytes a window, ng <= 8), else 0. */
static inline unsigned wide_width(const sh_text *t, size_t i, size_t safe, unsigned ng)
{
	unsigned w;

	if (ng > 8 || i + 8 > safe)
		return 0;
	w = t->off[i + 1] - t->off[i];
	return w >= 1 && w <= 4 && ng * w >= 4 && ng * w <= 16 ? w : 0;
}

SH_AVX512 size_t sh_minhash_wide_avx512(uint64_t mins[128], unsigned shift, const sh_text *t,
					size_t i, size_t safe, unsigned ng, unsigned ngc)
{
	unsigned w = wide_width(t, i, safe, ng);
	wide_ctl k;
	mh_regs r;

	if (!w || !wide8(t, i, ng, ngc, w))
		return i;
	k = wide_ctl_of(w, ng * w);
	mh_regs_init(&r, shift);
	for (; i + 8 <= safe && wide8(t, i, ng, ngc, w); i += 8) /* char_mh_key() */
		mh_add8(mins, shift, wide_hash8(t->s + t->off[i], w, ng * w, &k),
			0x2545f4914f6cdd1dull, &r);
	return i;
}

SH_AVX512 size_t sh_keys_wide_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe,
				     unsigned ng, unsigned ngc)
{
	unsigned w = wide_width(t, i, safe, ng);
	size_t from = i;
	wide_ctl k;

	if (!w || !wide8(t, i, ng, ngc, w))
		return i;
	k = wide_ctl_of(w, ng * w);
	for (; i + 8 <= safe && wide8(t, i, ng, ngc, w); i += 8)
		_mm512_storeu_si512(out + (i - from), wide_hash8(t->s + t->off[i], w, ng * w, &k));
	return i;
}

SH_AVX512 size_t sh_minhash_keys_avx512(uint64_t mins[128], unsigned shift, const uint64_t *keys,
					size_t n, uint64_t c)
{
	size_t i = 0;
	mh_regs r;

	mh_regs_init(&r, shift);
	for (; i + 8 <= n; i += 8)
		mh_add8(mins, shift, _mm512_loadu_si512(keys + i), c, &r);
	return i;
}

SH_AVX512 size_t sh_minhash_shingles_avx512(uint64_t mins[128], unsigned shift, const uint64_t *w,
					    size_t n, uint64_t c)
{
	const uint8_t *sec = XXH3_kSecret;
	const __m512i s0 = _mm512_set1_epi64((long long)XXH_readLE64(sec));
	const __m512i s1 = _mm512_set1_epi64((long long)XXH_readLE64(sec + 8));
	const __m512i s2 = _mm512_set1_epi64((long long)XXH_readLE64(sec + 16));
	const __m512i s3 = _mm512_set1_epi64((long long)XXH_readLE64(sec + 24));
	const __m512i acc0 = _mm512_set1_epi64((long long)(24 * XXH_PRIME64_1));
	const __m512i pa = _mm512_set1_epi64((long long)0x165667919E3779F9ull);
	size_t j = 0;
	mh_regs r;

	mh_regs_init(&r, shift);
	for (; j + 8 <= n; j += 8) {
		__m512i k0 = _mm512_loadu_si512(w + j), k1 = _mm512_loadu_si512(w + j + 1);
		__m512i k2 = _mm512_loadu_si512(w + j + 2);
		__m512i h = _mm512_add_epi64(
			acc0, _mm512_add_epi64(mul128_fold8(_mm512_xor_si512(k0, s0),
							     _mm512_xor_si512(k1, s1)),
					       mul128_fold8(_mm512_xor_si512(k1, s2),
							     _mm512_xor_si512(k2, s3))));
		/* XXH3_avalanche() */
		h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 37)), pa);
		h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
		mh_add8(mins, shift, h, c, &r); /* as sh_minhash_keys_avx512() */
	}
	return j;
}

SH_AVX512 size_t sh_word_keys_avx512(const uint64_t *v, const uint64_t *len, size_t n,
				     uint64_t *out)
{
	const __m512i bf13 = _mm512_set1_epi64(
		(long long)(uint64_t)(XXH_readLE32(XXH3_kSecret) ^ XXH_readLE32(XXH3_kSecret + 4)));
	const __m512i bf48 = _mm512_set1_epi64(
		(long long)(XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)));
	const __m512i p2 = _mm512_set1_epi64((long long)XXH_PRIME64_2);
	const __m512i p3 = _mm512_set1_epi64((long long)XXH_PRIME64_3);
	const __m512i rm = _mm512_set1_epi64((long long)0x9FB21C651E98DF25ull);
	const __m512i b8 = _mm512_set1_epi64(0xff), b32 = _mm512_set1_epi64(0xffffffffll);
	const __m512i one = _mm512_set1_epi64(1), four = _mm512_set1_epi64(4);
	size_t j = 0;

	for (; j + 8 <= n; j += 8) {
		__m512i x = _mm512_loadu_si512(v + j), l = _mm512_loadu_si512(len + j);
		/* 1 to 3 bytes: c1 = byte 0, c2 = byte len / 2, c3 = byte len - 1 */
		__m512i c1 = _mm512_and_si512(x, b8);
		__m512i c2 = _mm512_and_si512(
			_mm512_srlv_epi64(x, _mm512_slli_epi64(_mm512_srli_epi64(l, 1), 3)), b8);
		__m512i c3 = _mm512_and_si512(
			_mm512_srlv_epi64(x, _mm512_slli_epi64(_mm512_sub_epi64(l, one), 3)), b8);
		__m512i h = _mm512_or_si512(
			_mm512_or_si512(_mm512_slli_epi64(c1, 16), _mm512_slli_epi64(c2, 24)),
			_mm512_or_si512(c3, _mm512_slli_epi64(l, 8)));
		/* 4 to 8 bytes: input1 = bytes 0..3, input2 = bytes len - 4 .. len - 1 */
		__m512i in2 = _mm512_and_si512(
			_mm512_srlv_epi64(x, _mm512_slli_epi64(_mm512_sub_epi64(l, four), 3)), b32);
		__m512i g = _mm512_xor_si512(
			_mm512_add_epi64(in2, _mm512_slli_epi64(_mm512_and_si512(x, b32), 32)), bf48);

		/* XXH64_avalanche(combined ^ bitflip) */
		h = _mm512_xor_si512(h, bf13);
		h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 33)), p2);
		h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 29)), p3);
		h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
		/* XXH3_rrmxmx(keyed, len) */
		g = _mm512_ternarylogic_epi64(g, _mm512_rol_epi64(g, 49), _mm512_rol_epi64(g, 24),
					      0x96);
		g = _mm512_mullo_epi64(g, rm);
		g = _mm512_xor_si512(g, _mm512_add_epi64(_mm512_srli_epi64(g, 35), l));
		g = _mm512_mullo_epi64(g, rm);
		g = _mm512_xor_si512(g, _mm512_srli_epi64(g, 28));
		_mm512_storeu_si512(out + j,
				    _mm512_mask_blend_epi64(_mm512_cmple_epu64_mask(l, _mm512_set1_epi64(3)),
							    g, h));
	}
	return j;
}

SH_AVX512 size_t sh_mix_bits_avx512(const uint64_t *val, size_t n, uint64_t out[2])
{
	const __m512i m1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull);
	const __m512i m2 = _mm512_set1_epi64((long long)0x94d049bb133111ebull);
	uint64_t o[2] = { 0, 0 };

	for (size_t j = 0; j < n; j += 8) {
		__m512i h = _mm512_loadu_si512(val + j);
		h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 30)), m1);
		h = _mm512_mullo_epi64(_mm512_xor_si512(h, _mm512_srli_epi64(h, 27)), m2);
		h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 31));
		/* the low bit of each lane, moved to the sign for the mask */
		o[j >> 6] |= (uint64_t)_mm512_movepi64_mask(_mm512_slli_epi64(h, 63)) << (j & 63);
	}
	out[0] = o[0];
	out[1] = o[1];
	return n;
}

SH_AVX512 uint64_t sh_cls_masks_avx512(const uint8_t *cls, size_t avail, uint64_t *cjk)
{
	__mmask64 lm = avail >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << avail) - 1;
	__m512i x = _mm512_mask_loadu_epi8(_mm512_set1_epi8(SH_C_SPACE), lm, cls);

	*cjk = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(SH_C_CJK));
	return _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(SH_C_WORD));
}

#else

uint64_t sh_cls_masks_avx512(const uint8_t *cls, size_t avail, uint64_t *cjk)
{
	SH_UNUSED(cls);
	SH_UNUSED(avail);
	*cjk = 0;
	return 0;
}

size_t sh_mix_bits_avx512(const uint64_t *val, size_t n, uint64_t out[2])
{
	SH_UNUSED(val);
	SH_UNUSED(n);
	SH_UNUSED(out);
	return 0;
}

size_t sh_word_keys_avx512(const uint64_t *v, const uint64_t *len, size_t n, uint64_t *out)
{
	SH_UNUSED(v);
	SH_UNUSED(len);
	SH_UNUSED(n);
	SH_UNUSED(out);
	return 0;
}

int sh_cpu_has_avx512(void)
{
	return 0;
}

size_t sh_votes_ascii_avx512(sh_vote *v, const sh_text *t, size_t i, size_t safe, unsigned ng)
{
	SH_UNUSED(v);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	SH_UNUSED(ng);
	return i;
}

size_t sh_keys_ascii_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe, unsigned ng)
{
	SH_UNUSED(out);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	SH_UNUSED(ng);
	return i;
}

size_t sh_minhash_ascii_avx512(uint64_t mins[128], unsigned shift, const sh_text *t, size_t i,
			       size_t safe, unsigned ng)
{
	SH_UNUSED(mins);
	SH_UNUSED(shift);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	SH_UNUSED(ng);
	return i;
}

size_t sh_minhash_cjk2_avx512(uint64_t mins[128], unsigned shift, const sh_text *t, size_t i,
			      size_t safe)
{
	SH_UNUSED(mins);
	SH_UNUSED(shift);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	return i;
}

size_t sh_keys_cjk2_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe)
{
	SH_UNUSED(out);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	return i;
}

size_t sh_minhash_wide_avx512(uint64_t mins[128], unsigned shift, const sh_text *t, size_t i,
			      size_t safe, unsigned ng, unsigned ngc)
{
	SH_UNUSED(mins);
	SH_UNUSED(shift);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	SH_UNUSED(ng);
	SH_UNUSED(ngc);
	return i;
}

size_t sh_keys_wide_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe, unsigned ng,
			   unsigned ngc)
{
	SH_UNUSED(out);
	SH_UNUSED(t);
	SH_UNUSED(safe);
	SH_UNUSED(ng);
	SH_UNUSED(ngc);
	return i;
}

size_t sh_minhash_keys_avx512(uint64_t mins[128], unsigned shift, const uint64_t *keys, size_t n,
			      uint64_t c)
{
	SH_UNUSED(mins);
	SH_UNUSED(shift);
	SH_UNUSED(keys);
	SH_UNUSED(n);
	SH_UNUSED(c);
	return 0;
}

size_t sh_minhash_shingles_avx512(uint64_t mins[128], unsigned shift, const uint64_t *w, size_t n,
				  uint64_t c)
{
	SH_UNUSED(mins);
	SH_UNUSED(shift);
	SH_UNUSED(w);
	SH_UNUSED(n);
	SH_UNUSED(c);
	return 0;
}

#endif
