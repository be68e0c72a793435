/* mixed.c - the vector body of normalize.c's text that mixes ASCII and
 * three-byte characters (AVX-512 VBMI and VBMI2), apart from the scalar code
 * it must equal (tests/normalize/test_mixed.c checks it against it).
 *
 * Workload: Chinese text as it comes, runs of five to ten Han characters
 * between CJK punctuation, spaces, digits and Latin words; Chinese manual
 * pages, three quarters ASCII (indentation, option names, code) around
 * Chinese sentences. The scalar loops take each character by a branch on its
 * kind, and the kind changes every few characters: the branches are
 * mispredicted at every change, and a text costs what its changes cost. Here
 * a step takes 64 bytes at once (at most 16 of their characters of three
 * bytes, one table gather), whatever their mix, with no branch on any one
 * character: every decision is a bit mask over the step's bytes or, for the
 * space rule, over its characters.
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
 *  3. A step ends at a character's start, so the next one starts at one.
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

/* The index of the lowest set bit of x, 64 if none. */
static inline unsigned ctz64(uint64_t x)
{
	return x ? (unsigned)__builtin_ctzll(x) : 64;
}

/* The bits of x below bit n (n <= 64). */
SH_MIXED512 static inline uint64_t below(uint64_t x, unsigned n)
{
	return _bzhi_u64(x, n);
}

/* The starts of the well-formed three-byte sequences of the 64 bytes x
 * (asc: its ASCII bytes, valid: the bytes before the input's end) before
 * the first byte that is neither ASCII nor part of one; *n gets where that
 * is (64 if none). */
SH_MIXED512 static inline uint64_t three_starts(__m512i x, uint64_t valid, uint64_t asc,
						unsigned *n)
{
	uint64_t l3 = _mm512_cmpeq_epi8_mask(_mm512_and_si512(x, _mm512_set1_epi8((char)0xF0)),
					     _mm512_set1_epi8((char)0xE0)) & valid;
	uint64_t cn = _mm512_cmpeq_epi8_mask(_mm512_and_si512(x, _mm512_set1_epi8((char)0xC0)),
					     _mm512_set1_epi8((char)0x80)) & valid;
	uint64_t ok3 = l3 & (cn >> 1) & (cn >> 2);

	*n = ctz64(~(asc | ok3 | ok3 << 1 | ok3 << 2));
	return below(ok3, *n);
}

/* Each byte of the first 16 of at four times, in order: lane j's bytes. */
static const uint8_t rep4[64] = {
	0,  0,  0,  0,  1,  1,  1,  1,  2,  2,  2,  2,  3,  3,  3,  3,  4,  4,  4,  4,  5,  5,
	5,  5,  6,  6,  6,  6,  7,  7,  7,  7,  8,  8,  8,  8,  9,  9,  9,  9,  10, 10, 10, 10,
	11, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15,
};

/* The kinds of the three-byte characters at the byte offsets at[0 .. 16) of
 * x (lanes: those that exist): *cjk (inert, class CJK, a three-byte output,
 * *out its code point) and *sep (inert, a space or punctuation). */
SH_MIXED512 static inline __attribute__((always_inline)) void
kinds(const sh_mixed_out *m, __m512i x, __m512i at, __mmask16 lanes, __m512i *out,
      __mmask16 *cjk, __mmask16 *sep)
{
	/* each lane's bytes at, at + 1, at + 2 (and a fourth, unused) */
	__m512i bidx = _mm512_add_epi8(_mm512_permutexvar_epi8(_mm512_loadu_si512(rep4), at),
				       _mm512_set1_epi32(0x03020100));
	__m512i y = _mm512_permutexvar_epi8(bidx, x);
	__m512i cp = _mm512_or_si512(
		_mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(y, _mm512_set1_epi32(0x0F)), 12),
				_mm512_and_si512(_mm512_srli_epi32(y, 2), _mm512_set1_epi32(0xFC0))),
		_mm512_and_si512(_mm512_srli_epi32(y, 16), _mm512_set1_epi32(0x3F)));
	/* overlong forms and surrogates are not characters: decode() takes them */
	__mmask16 good = _mm512_mask_cmpge_epu32_mask(lanes, cp, _mm512_set1_epi32(0x800)) &
			 ~_mm512_cmpeq_epi32_mask(_mm512_srli_epi32(cp, 11), _mm512_set1_epi32(0x1B));
	__m512i e = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), good, cp,
						(const void *)m->bmp, 4);
	__m512i flags = _mm512_and_si512(e, _mm512_set1_epi32((int)(SH_LAZY | SH_INERT | SH_KNOWN |
								    SH_DROP)));
	__mmask16 inert = _mm512_mask_cmpeq_epi32_mask(good, flags,
						       _mm512_set1_epi32(SH_INERT | SH_KNOWN));
	__m512i cls = _mm512_and_si512(_mm512_srli_epi32(e, 24), _mm512_set1_epi32(3));
	__m512i o = _mm512_and_si512(e, _mm512_set1_epi32(0x1FFFFF));
	__mmask16 out3 = _mm512_cmpge_epu32_mask(o, _mm512_set1_epi32(0x800)) &
			 _mm512_cmplt_epu32_mask(o, _mm512_set1_epi32(0x10000)) &
			 ~_mm512_cmpeq_epi32_mask(_mm512_srli_epi32(o, 11), _mm512_set1_epi32(0x1B));

	*sep = _mm512_mask_cmpeq_epi32_mask(inert, cls, _mm512_set1_epi32(SH_C_SPACE)) |
	       _mm512_mask_cmpeq_epi32_mask(inert, cls, _mm512_set1_epi32(SH_C_PUNCT));
	*cjk = _mm512_mask_cmpeq_epi32_mask(inert & out3, cls, _mm512_set1_epi32(SH_C_CJK));
	*out = o;
}

/* The UTF-8 of the three-byte code points of the 16 lanes of c, packed:
 * three bytes per lane, 48 in all. */
SH_MIXED512 static inline __m512i utf8_3(__m512i c)
{
	__m512i b = _mm512_or_si512(
		_mm512_or_si512(_mm512_srli_epi32(c, 12),
				_mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(c, 6),
								   _mm512_set1_epi32(0x3F)), 8)),
		_mm512_slli_epi32(_mm512_and_si512(c, _mm512_set1_epi32(0x3F)), 16));

	b = _mm512_or_si512(b, _mm512_set1_epi32(0x8080E0));
	return _mm512_maskz_compress_epi8(0x7777777777777777ull, b);
}

/* The run's state between steps: output bytes and characters so far, a
 * space pending, and whether the last character written is a word
 * character (not CJK; there is one). */
struct state {
	size_t len, nc;
	int pending, last_word;
};

/* The space rule over a step's characters (s: separators, w: word
 * characters, one bit each in order): the separators that are written as a
 * space, the last of each run that has a word character before it (or the
 * state's: last_word) and one after it. *lead gets whether the pending
 * space of the last step is written before the first character. */
static inline uint64_t spaces(uint64_t s, uint64_t w, const struct state *st, int *lead)
{
	/* Bits 2.. are the characters; below them the state: bit 1 a pending
	 * space (a separator) with bit 0 the character written before it, or
	 * bit 1 that character. A run of separators preceded by a word
	 * character carries through the addition to the bit after the run, a
	 * space before the character there if it is a word character. */
	unsigned __int128 S = (unsigned __int128)s << 2 | (st->pending ? 2u : 0);
	unsigned __int128 W = (unsigned __int128)w << 2 |
			      (unsigned __int128)st->last_word << (st->pending ? 0 : 1);
	unsigned __int128 starts = S & ~(S << 1) & (W << 1);
	unsigned __int128 sp = ((S + starts) & ~S & W) >> 1; /* the last separator before each */

	*lead = (int)(sp >> 1 & 1);
	return (uint64_t)(sp >> 2);
}

/* The offsets of the characters that start at the set bits of ost (bits of
 * the step's output bytes, k of them), from len, at oo. Writes 16 at a
 * time, 32 at least: whether a step writes more than 16 characters is a
 * coin toss in Chinese text, a branch mispredicted every other step. */
SH_MIXED512 static inline void put_offsets(uint32_t *oo, uint64_t ost, unsigned k, size_t len)
{
	__m512i pos = _mm512_maskz_compress_epi8(ost, _mm512_loadu_si512(iota64));
	__m512i base = _mm512_set1_epi32((int)len);

	_mm512_storeu_si512((void *)oo, _mm512_add_epi32(
		_mm512_cvtepu8_epi32(_mm512_castsi512_si128(pos)), base));
	_mm512_storeu_si512((void *)(oo + 16), _mm512_add_epi32(
		_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(pos, 1)), base));
	if (k > 32)
		_mm512_storeu_si512((void *)(oo + 32), _mm512_add_epi32(
			_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(pos, 2)), base));
	if (k > 48)
		_mm512_storeu_si512((void *)(oo + 48), _mm512_add_epi32(
			_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(pos, 3)), base));
}

/* What a step writes: its characters are the ASCII bytes asc and the
 * three-byte characters at p3 of x, those of lanes cjk with output code
 * points out, those of lanes sep3 separators (lane j: the j-th bit of p3).
 * Every mask is over the step's bytes. */
struct step {
	__m512i x, out;
	uint64_t asc, p3;
	__mmask16 cjk, sep3;
};

/* Writes the step's output (invariant 1) and moves the state on. */
SH_MIXED512 static inline __attribute__((always_inline)) void
put(const sh_mixed_out *m, const struct step *t, __m512i amap_lo, __m512i amap_hi,
    struct state *st)
{
	__m512i a = _mm512_permutex2var_epi8(amap_lo, t->x, amap_hi), ob, cls;
	uint64_t asep = _mm512_mask_cmpeq_epi8_mask(t->asc, a, _mm512_set1_epi8(' '));
	uint64_t word = t->asc & ~asep, chars = t->asc | t->p3;
	uint64_t cjk = _pdep_u64(t->cjk, t->p3), sep = asep | _pdep_u64(t->sep3, t->p3);
	uint64_t spc, kept, keep;
	size_t len = st->len, nc = st->nc;
	unsigned last = 63u - (unsigned)__builtin_clzll(chars), k;
	int lead;

	spc = _pdep_u64(spaces(_pext_u64(sep, chars), _pext_u64(word, chars), st, &lead), chars);
	if (lead) { /* the pending space, before the first character */
		m->o[len] = ' ';
		m->oo[nc] = (uint32_t)len;
		m->oc[nc] = SH_C_SPACE;
		len++;
		nc++;
	}
	kept = word | cjk | spc; /* the starts of the characters written */
	keep = kept | cjk << 1 | cjk << 2;
	/* each byte's output: a three-byte character's from its lane, an ASCII
	 * byte's from the map, a separator written as a space a space */
	ob = _mm512_maskz_expand_epi8(t->p3 | t->p3 << 1 | t->p3 << 2, utf8_3(t->out));
	ob = _mm512_mask_mov_epi8(ob, t->asc, a);
	ob = _mm512_mask_mov_epi8(ob, spc, _mm512_set1_epi8(' '));
	_mm512_storeu_si512((void *)(m->o + len), _mm512_maskz_compress_epi8(keep, ob));
	k = (unsigned)__builtin_popcountll(kept);
	put_offsets(m->oo + nc, _pext_u64(kept, keep), k, len);
	cls = _mm512_maskz_mov_epi8(cjk, _mm512_set1_epi8(SH_C_CJK));
	cls = _mm512_mask_mov_epi8(cls, spc, _mm512_set1_epi8(SH_C_SPACE));
	_mm512_storeu_si512((void *)(m->oc + nc), _mm512_maskz_compress_epi8(kept, cls));
	st->len = len + (size_t)__builtin_popcountll(keep);
	st->nc = nc + k;
	st->pending = (int)(sep >> last & 1);
	/* the last character written is a word or CJK character (a space has
	 * a word character after it) */
	if (word | cjk)
		st->last_word = (int)(word >> (63 - __builtin_clzll(word | cjk)) & 1);
}

/* Reads the step at i (a character's start, i < stop) into *t; returns its
 * length in bytes, 0 if it takes nothing: 64 ASCII bytes (ascii_run()'s
 * work), or a first character mixed.c does not take (invariant 2). */
SH_MIXED512 static inline __attribute__((always_inline)) unsigned
read_step(const sh_mixed_out *m, const uint8_t *in, size_t i, size_t stop, struct step *t)
{
	uint64_t valid = stop - i >= 64 ? ~0ull : (1ull << (stop - i)) - 1;
	unsigned n, n3;

	t->x = _mm512_maskz_loadu_epi8(valid, (const void *)(in + i));
	t->asc = ~(uint64_t)_mm512_movepi8_mask(t->x) & valid;
	if (t->asc == ~0ull)
		return 0;
	t->p3 = three_starts(t->x, valid, t->asc, &n);
	/* at most 16 three-byte characters: one gather */
	n3 = ctz64(_pdep_u64(1ull << 16, t->p3));
	n = n < n3 ? n : n3;
	t->p3 = below(t->p3, n);
	t->cjk = t->sep3 = 0;
	t->out = _mm512_setzero_si512();
	if (t->p3) {
		__m512i at = _mm512_maskz_compress_epi8(t->p3, _mm512_loadu_si512(iota64));
		__mmask16 lanes = (__mmask16)((1u << __builtin_popcountll(t->p3)) - 1), bad;

		kinds(m, t->x, at, lanes, &t->out, &t->cjk, &t->sep3);
		bad = lanes & (__mmask16) ~(t->cjk | t->sep3);
		if (SH_UNLIKELY(bad)) { /* a character of no kind ends the step */
			n = ctz64(_pdep_u64(1ull << __builtin_ctz(bad), t->p3));
			t->p3 = below(t->p3, n);
		}
	}
	/* an ASCII character last, unless what follows is ASCII (invariant 2) */
	if (n > 0 && (t->asc >> (n - 1) & 1) && (i + n >= stop || in[i + n] >= 0x80))
		n--;
	t->asc = below(t->asc, n);
	return n;
}

SH_MIXED512 size_t sh_mixed_run512(const sh_mixed_out *m, const uint8_t *in, size_t i,
				   size_t stop, size_t *plen, size_t *pnc, int *ppending)
{
	const __m512i amap_lo = _mm512_loadu_si512((const void *)m->amap);
	const __m512i amap_hi = _mm512_loadu_si512((const void *)(m->amap + 64));
	struct state st = { *plen, *pnc, *ppending, *pnc > 0 && m->oc[*pnc - 1] != SH_C_CJK };

	while (i < stop) {
		struct step t;
		unsigned n = read_step(m, in, i, stop, &t);

		if (n == 0)
			break;
		put(m, &t, amap_lo, amap_hi, &st);
		i += n;
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
