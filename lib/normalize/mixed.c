/* mixed.c - the vector body of normalize.c's text that mixes ASCII and
 * three-byte characters (AVX-512 VBMI and VBMI2), apart from the scalar code
 * it must equal (tests/normalize/test_mixed.c checks it against it).
 *
 * Workload: Chinese text as it comes, runs of five to ten Han characters
 * between CJK punctuation, spaces, digits and Latin words. The scalar loops
 * take each character by a branch on its kind, and the kind changes every few
 * characters: the branches are mispredicted at every change, and a text
 * costs what its changes cost. Here 16 characters go at once, whatever their
 * mix, with no branch on any one of them.
 *
 * Invariants:
 *  1. It writes exactly what emit() writes for the same characters under the
 *     rules it runs with (punctuation dropped, spaces auto, no repeat rule):
 *     a word or CJK character as its output (ASCII folded by the map, a CJK
 *     character as its table entry gives it, t2s included), nothing for a
 *     separator, and one space before a word character iff separators came
 *     between it and the character written before it, which is a word
 *     character too (SH_C_WORD; so never at the start of the text).
 *  2. It takes only characters that do not interact with their neighbours: a
 *     three-byte character whose entry is inert (SH_INERT, filled, not
 *     SH_LAZY, not SH_DROP), or an ASCII character followed by an ASCII one
 *     or by such a character (no character composes with the one before an
 *     ASCII byte). Any other character, and one whose table page is not
 *     filled yet, ends the step: normalize.c takes it.
 *  3. A run of separators writes what one separator writes (a space pending),
 *     so an ASCII separator between two others takes no lane: a step covers
 *     the indentation of a manual page in two lanes instead of one per
 *     byte. The last separator of a run keeps its lane, so invariant 2 still
 *     sees what follows it.
 */
#include <string.h>
#include "../common/internal.h"
#include "mixed.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SH_MIXED512 __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt,bmi2")))

static const uint8_t iota64[64] = {
	0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
	22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
	44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};

/* The inclusive prefix sums of the 16 lanes of v. */
SH_MIXED512 static inline __m512i prefix_sum(__m512i v)
{
	const __m512i z = _mm512_setzero_si512();

	v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 15));
	v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 14));
	v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 12));
	return _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 8));
}

/* The starts of the characters of the 64 bytes x (valid: the bytes before
 * the input's end), up to the first byte that is neither ASCII nor part of a
 * well-formed three-byte sequence; *covered gets where that is. */
SH_MIXED512 static inline uint64_t char_starts(__m512i x, uint64_t valid, unsigned *covered)
{
	uint64_t asc = ~(uint64_t)_mm512_movepi8_mask(x) & valid;
	uint64_t l3 = _mm512_cmpeq_epi8_mask(_mm512_and_si512(x, _mm512_set1_epi8((char)0xF0)),
					     _mm512_set1_epi8((char)0xE0)) & valid;
	uint64_t cn = _mm512_cmpeq_epi8_mask(_mm512_and_si512(x, _mm512_set1_epi8((char)0xC0)),
					     _mm512_set1_epi8((char)0x80)) & valid;
	uint64_t ok3 = l3 & (cn >> 1) & (cn >> 2);
	uint64_t cov = asc | ok3 | ok3 << 1 | ok3 << 2;
	unsigned n = ~cov ? (unsigned)__builtin_ctzll(~cov) : 64;

	*covered = n;
	return (asc | ok3) & (n == 64 ? ~0ull : (1ull << n) - 1);
}

/* The ASCII separators of x (valid: the bytes before the input's end) with
 * an ASCII separator on both sides: they need no lane (invariant 3). The
 * last byte of x is never one, as what follows it is not known. */
SH_MIXED512 static inline uint64_t inner_separators(__m512i x, uint64_t valid, __m512i amap_lo,
						    __m512i amap_hi)
{
	__m512i a = _mm512_permutex2var_epi8(amap_lo, x, amap_hi);
	uint64_t asep = _mm512_cmpeq_epi8_mask(a, _mm512_set1_epi8(' ')) &
			~(uint64_t)_mm512_movepi8_mask(x) & valid;

	return asep & asep << 1 & asep >> 1;
}

/* The lanes' kinds, for the characters at the byte offsets pos (16 lanes,
 * lanes[j] set for those that exist) of x: *word (ASCII kept, *a its output
 * byte), *cjk (*e its entry), *sep (ASCII or three-byte separators), *asc
 * (the ASCII ones). A lane of none of the first three ends the step. */
struct lanes {
	__m512i a, e;
	__mmask16 word, cjk, sep, asc;
};

SH_MIXED512 static inline __attribute__((always_inline)) void kinds(const sh_mixed_out *m, __m512i x, __m512i pos,
				     __mmask16 lanes, __m512i amap_lo, __m512i amap_hi,
				     struct lanes *l)
{
	const __m512i ff = _mm512_set1_epi32(0xFF);
	/* each lane's bytes pos, pos + 1, pos + 2 (an ASCII lane reads past its
	 * end, and near the end of x wraps around: never used) */
	__m512i bidx = _mm512_add_epi32(_mm512_mullo_epi32(pos, _mm512_set1_epi32(0x01010101)),
					_mm512_set1_epi32(0x03020100));
	__m512i y = _mm512_permutexvar_epi8(bidx, x);
	__m512i cp = _mm512_or_si512(
		_mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(y, _mm512_set1_epi32(0x0F)), 12),
				_mm512_and_si512(_mm512_srli_epi32(y, 2), _mm512_set1_epi32(0xFC0))),
		_mm512_and_si512(_mm512_srli_epi32(y, 16), _mm512_set1_epi32(0x3F)));
	__mmask16 asc = _mm512_mask_cmplt_epu32_mask(lanes, _mm512_and_si512(y, ff),
						     _mm512_set1_epi32(0x80));
	__mmask16 three = lanes & (__mmask16)~asc;
	/* overlong forms and surrogates are not characters: decode() takes them */
	__mmask16 good = _mm512_mask_cmpge_epu32_mask(three, cp, _mm512_set1_epi32(0x800)) &
			 ~_mm512_cmpeq_epi32_mask(_mm512_srli_epi32(cp, 11), _mm512_set1_epi32(0x1B));
	__m512i e = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), good, cp,
						(const void *)m->bmp, 4);
	__m512i flags = _mm512_and_si512(e, _mm512_set1_epi32((int)(SH_LAZY | SH_INERT | SH_KNOWN |
								    SH_DROP)));
	__mmask16 inert = _mm512_mask_cmpeq_epi32_mask(good, flags,
						       _mm512_set1_epi32(SH_INERT | SH_KNOWN));
	__m512i cls = _mm512_and_si512(_mm512_srli_epi32(e, 24), _mm512_set1_epi32(3));
	__m512i out = _mm512_and_si512(e, _mm512_set1_epi32(0x1FFFFF));
	__mmask16 out3 = _mm512_cmpge_epu32_mask(out, _mm512_set1_epi32(0x800)) &
			 _mm512_cmplt_epu32_mask(out, _mm512_set1_epi32(0x10000)) &
			 ~_mm512_cmpeq_epi32_mask(_mm512_srli_epi32(out, 11), _mm512_set1_epi32(0x1B));
	__mmask16 sep3 = _mm512_mask_cmpeq_epi32_mask(inert, cls, _mm512_set1_epi32(SH_C_SPACE)) |
			 _mm512_mask_cmpeq_epi32_mask(inert, cls, _mm512_set1_epi32(SH_C_PUNCT));
	/* the ASCII map: byte b0 of a lane picks amap[b0] (b0 < 128) */
	__m512i a = _mm512_and_si512(_mm512_permutex2var_epi8(amap_lo, y, amap_hi), ff);
	__mmask16 asep = _mm512_mask_cmpeq_epi32_mask(asc, a, _mm512_set1_epi32(' '));

	l->cjk = _mm512_mask_cmpeq_epi32_mask(inert & out3, cls, _mm512_set1_epi32(SH_C_CJK));
	l->sep = sep3 | asep;
	l->word = asc & (__mmask16)~asep;
	l->asc = asc;
	l->a = a;
	l->e = out;
}

/* The run's state between steps: output bytes and characters so far, a
 * space pending, and whether the last character written is a word
 * character (not CJK; there is one). */
struct state {
	size_t len, nc;
	int pending, last_word;
};

/* Writes lanes [0, k) of l: the bytes, offsets and classes of the kept
 * characters and of the spaces the rule of invariant 1 puts before a word
 * character (one before lane 0 if a space was pending). */
SH_MIXED512 static inline __attribute__((always_inline)) void put(const sh_mixed_out *m, const struct lanes *l, unsigned k,
				   struct state *st)
{
	__mmask16 km = (__mmask16)((1u << k) - 1), word = l->word & km, cjk = l->cjk & km;
	__mmask16 sep = l->sep & km, spc;
	size_t len = st->len, nc = st->nc;
	/* Bits 2.. are the lanes; below them the state: bit 1 a pending space
	 * (a separator) with bit 0 the character written before it, or bit 1
	 * that character. A run of separators preceded by a word character
	 * carries through the addition to the bit after the run, a space
	 * before the character there if it is a word character. */
	uint32_t s = (uint32_t)sep << 2 | (st->pending ? 2u : 0);
	uint32_t w = (uint32_t)word << 2 | (uint32_t)st->last_word << (st->pending ? 0 : 1);
	uint32_t starts = s & ~(s << 1) & (w << 1);
	uint32_t sp = ((s + starts) & ~s & w) >> 1; /* the last separator before each */
	__m512i c, bytes, n_bytes, cls;
	__mmask16 keep;
	uint64_t bmask;

	if (sp & 2) { /* the pending space, before lane 0 */
		m->o[len] = ' ';
		m->oo[nc] = (uint32_t)len;
		m->oc[nc] = SH_C_SPACE;
		len++;
		nc++;
	}
	spc = (__mmask16)(sp >> 2) & km;
	keep = word | cjk | spc;
	/* a CJK lane's three bytes of UTF-8, a word lane's byte, a space's */
	c = l->e;
	bytes = _mm512_or_si512(
		_mm512_or_si512(_mm512_srli_epi32(c, 12),
				_mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(c, 6),
								   _mm512_set1_epi32(0x3F)), 8)),
		_mm512_slli_epi32(_mm512_and_si512(c, _mm512_set1_epi32(0x3F)), 16));
	bytes = _mm512_or_si512(bytes, _mm512_set1_epi32(0x8080E0));
	bytes = _mm512_mask_mov_epi32(bytes, word, l->a);
	bytes = _mm512_mask_mov_epi32(bytes, spc, _mm512_set1_epi32(' '));
	n_bytes = _mm512_maskz_mov_epi32(word | spc, _mm512_set1_epi32(1));
	n_bytes = _mm512_mask_mov_epi32(n_bytes, cjk, _mm512_set1_epi32(3));
	bmask = _mm512_cmplt_epu8_mask(_mm512_set1_epi32(0x03020100),
				       _mm512_mullo_epi32(n_bytes, _mm512_set1_epi32(0x01010101)));
	_mm512_storeu_si512((void *)(m->o + len), _mm512_maskz_compress_epi8(bmask, bytes));
	/* offsets: where each lane's bytes start */
	c = _mm512_add_epi32(_mm512_sub_epi32(prefix_sum(n_bytes), n_bytes),
			     _mm512_set1_epi32((int)len));
	_mm512_storeu_si512((void *)(m->oo + nc), _mm512_maskz_compress_epi32(keep, c));
	cls = _mm512_maskz_mov_epi32(cjk, _mm512_set1_epi32(SH_C_CJK));
	cls = _mm512_mask_mov_epi32(cls, spc, _mm512_set1_epi32(SH_C_SPACE));
	_mm_storeu_si128((__m128i *)(m->oc + nc),
			 _mm512_cvtepi32_epi8(_mm512_maskz_compress_epi32(keep, cls)));
	st->len = len + (size_t)__builtin_popcountll(bmask);
	st->nc = nc + (size_t)__builtin_popcount(keep);
	st->pending = sep >> (k - 1) & 1;
	/* the last kept lane is a word or CJK character (a space has a word
	 * character after it) */
	if (keep)
		st->last_word = word >> (31 - __builtin_clz(keep)) & 1;
}

/* The offset of character j (j < the count) of a window whose characters
 * start at the set bits of starts: its j-th set bit, from the mask alone. */
SH_MIXED512 static inline unsigned nth(uint64_t starts, unsigned j)
{
	return (unsigned)__builtin_ctzll(_pdep_u64(1ull << j, starts));
}

/* How many lanes of n_lanes (characters at the bits of starts from in + i)
 * may be taken whatever their kinds: all but an ASCII character last when
 * what follows it is not ASCII or not known (invariant 2). */
SH_MIXED512 static inline unsigned takeable(const uint8_t *in, size_t i, size_t stop,
					    uint64_t starts, unsigned n_lanes)
{
	size_t next = i + nth(starts, n_lanes - 1) + 1;

	if (in[next - 1] < 0x80 && (next >= stop || in[next] >= 0x80))
		return n_lanes - 1;
	return n_lanes;
}

/* One window of 64 bytes at i: its characters (they start at the set bits
 * of starts), the first 16 of them as lanes, and their kinds. */
struct window {
	unsigned covered, n, n_lanes;
	__mmask16 lanes;
	uint64_t starts;
	struct lanes l;
};

/* Reads the window at i (i < stop); 0 if it is ascii_run()'s (64 ASCII
 * bytes) or starts with no character mixed.c takes apart. */
SH_MIXED512 static inline __attribute__((always_inline)) int
window(const sh_mixed_out *m, const uint8_t *in, size_t i, size_t stop, __m512i amap_lo,
       __m512i amap_hi, struct window *w)
{
	uint64_t valid = stop - i >= 64 ? ~0ull : (1ull << (stop - i)) - 1;
	__m512i x = _mm512_maskz_loadu_epi8(valid, (const void *)(in + i));
	__m512i at;

	if (valid == ~0ull && !_mm512_movepi8_mask(x))
		return 0;
	w->starts = char_starts(x, valid, &w->covered);
	w->starts &= ~inner_separators(x, valid, amap_lo, amap_hi);
	w->n = (unsigned)__builtin_popcountll(w->starts);
	if (w->n == 0)
		return 0;
	at = _mm512_maskz_compress_epi8(w->starts, _mm512_loadu_si512(iota64));
	w->n_lanes = w->n < 16 ? w->n : 16;
	w->lanes = (__mmask16)((1u << w->n_lanes) - 1);
	kinds(m, x, _mm512_cvtepu8_epi32(_mm512_castsi512_si128(at)), w->lanes, amap_lo, amap_hi,
	      &w->l);
	return 1;
}

SH_MIXED512 size_t sh_mixed_run512(const sh_mixed_out *m, const uint8_t *in, size_t i,
				   size_t stop, size_t *plen, size_t *pnc, int *ppending)
{
	const __m512i amap_lo = _mm512_loadu_si512((const void *)m->amap);
	const __m512i amap_hi = _mm512_loadu_si512((const void *)(m->amap + 64));
	struct state st = { *plen, *pnc, *ppending, *pnc > 0 && m->oc[*pnc - 1] != SH_C_CJK };
	struct window wins[2], *w = &wins[0], *next_w = &wins[1], *swap;
	int more = i < stop && window(m, in, i, stop, amap_lo, amap_hi, w);

	while (more) {
		__mmask16 ok = (w->l.word | w->l.cjk | w->l.sep) & w->lanes;
		/* The step's length does not wait for the table (the gather):
		 * k lanes unless one of them is of no kind, rarely. */
		unsigned k = takeable(in, i, stop, w->starts, w->n_lanes);
		size_t next;

		if (SH_UNLIKELY(ok != w->lanes || k == 0)) {
			/* lane k is of no kind: the lanes before it, then stop */
			k = (unsigned)__builtin_ctz(~(uint32_t)ok);
			if (k > 0)
				k = takeable(in, i, stop, w->starts, k);
			if (k > 0)
				put(m, &w->l, k, &st);
			i += k < w->n ? nth(w->starts, k) : w->covered;
			break;
		}
		/* the next window's table loads go out before this one's stores:
		 * the two overlap */
		next = i + (k < w->n ? nth(w->starts, k) : w->covered);
		more = next < stop && window(m, in, next, stop, amap_lo, amap_hi, next_w);
		put(m, &w->l, k, &st);
		i = next;
		swap = w;
		w = next_w;
		next_w = swap;
	}
	*plen = st.len;
	*pnc = st.nc;
	*ppending = st.pending;
	return i;
}

int sh_mixed_have(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512VBMI |
			  SH_CPU_AVX512VBMI2 | SH_CPU_POPCNT | SH_CPU_BMI2);
}
#else
size_t sh_mixed_run512(const sh_mixed_out *m, const uint8_t *in, size_t i, size_t stop,
		       size_t *plen, size_t *pnc, int *ppending)
{
	return i;
}

int sh_mixed_have(void)
{
	return 0;
}
#endif
