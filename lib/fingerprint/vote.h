/* vote.h - the bit vote: every feature adds its weight to the counters of the
 * bits set in its hash, and a bit of the fingerprint is 1 iff its counter is
 * more than half the total weight (a tie gives 0).
 *
 * Unit votes (weight 1 per occurrence, the default tf weighting) are counted
 * bit-sliced: 64 counters live in the bits of a few 64-bit words, and eight
 * hashes at a time go through a carry-save adder tree (Harley and Seal's
 * popcount), so a feature costs about six word operations instead of 64
 * additions. The counts are exact integers, so the result is the same on every
 * platform and equals a plain per-bit count (tests compare both).
 *
 * Weighted votes keep one double per bit: counter += hash bit ? w : -w, and a
 * bit is 1 iff its counter is > 0. Features are added in a fixed order (first
 * occurrence), so the floating-point sums never depend on the run.
 */
#ifndef SH_VOTE_H
#define SH_VOTE_H

#include <stddef.h>
#include <string.h>
#include "../common/internal.h"

typedef struct sh_lane {
	uint64_t ones, twos, fours;
	uint64_t plane[48]; /* plane k counts 8 * 2^k */
} sh_lane;

typedef struct sh_vote {
	sh_lane lane[2];
	uint64_t pend[8][2];
	unsigned n_pend;
	unsigned lanes;
	uint64_t n;
	/* Vector votes of vote_avx512.c: plane k counts 2^k in each of eight
	 * lanes; planes [0, vtop) exist. Folded into lane[0] at the finish. */
	unsigned vtop;
	uint64_t vplane[48][8];
} sh_vote;

static inline void sh_vote_init(sh_vote *v, unsigned bits)
{
	memset(v, 0, offsetof(sh_vote, vplane));
	v->lanes = bits > 64 ? 2 : 1;
}

static inline void sh_csa(uint64_t *h, uint64_t *l, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t u = a ^ b;
	*h = (a & b) | (u & c);
	*l = u ^ c;
}

/* Adds eight words d[0], d[stride], ... to the lane's counters. */
static inline void sh_lane_add8(sh_lane *L, const uint64_t *d, size_t stride)
{
	uint64_t twos_a, twos_b, fours_a, fours_b, eights, t;
	unsigned k;

	sh_csa(&twos_a, &L->ones, L->ones, d[0], d[stride]);
	sh_csa(&twos_b, &L->ones, L->ones, d[2 * stride], d[3 * stride]);
	sh_csa(&fours_a, &L->twos, L->twos, twos_a, twos_b);
	sh_csa(&twos_a, &L->ones, L->ones, d[4 * stride], d[5 * stride]);
	sh_csa(&twos_b, &L->ones, L->ones, d[6 * stride], d[7 * stride]);
	sh_csa(&fours_b, &L->twos, L->twos, twos_a, twos_b);
	sh_csa(&eights, &L->fours, L->fours, fours_a, fours_b);
	for (k = 0; eights; k++) {
		t = L->plane[k] & eights;
		L->plane[k] ^= eights;
		eights = t;
	}
}

static inline void sh_vote_add(sh_vote *v, uint64_t lo, uint64_t hi)
{
	v->pend[v->n_pend][0] = lo;
	v->pend[v->n_pend][1] = hi;
	if (++v->n_pend == 8) {
		sh_lane_add8(&v->lane[0], &v->pend[0][0], 2);
		if (v->lanes == 2)
			sh_lane_add8(&v->lane[1], &v->pend[0][1], 2);
		v->n_pend = 0;
		v->n += 8;
	}
}

void sh_vote_finish(sh_vote *v, unsigned bits, simhash_fp *out);
/* Instead of finishing: counts[j] = votes with bit j set, j < bits; returns
 * the number of votes. */
uint64_t sh_vote_counts(sh_vote *v, unsigned bits, uint64_t *counts);

/* vote_avx512.c: whether this CPU runs it; and the unit votes of the
 * one-byte ng-gram windows (ng <= 3) from i on, eight at a time, while a
 * block of eight windows before `safe` is all one-byte characters. Returns
 * the first window not counted. Bits 0..63 only. */
int sh_cpu_has_avx512(void);
size_t sh_votes_ascii_avx512(sh_vote *v, const sh_text *t, size_t i, size_t safe, unsigned ng);
/* Likewise, the keys of those windows into out[0 ..), in window order
 * (textvote.c's sh_ngram_keys()). */
size_t sh_keys_ascii_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe, unsigned ng);
/* Likewise, the one-bit MinHash of those windows (textvote.c's
 * sh_ngram_minhash(), auto.h's bins of `shift`). */
size_t sh_minhash_ascii_avx512(uint64_t mins[128], unsigned shift, const sh_text *t, size_t i,
			       size_t safe, unsigned ng);
/* Likewise for windows of CJK bigrams (ngram_cjk 2), from window i while
 * eight in a row are bigrams of nine three-byte characters (the first eight
 * CJK) and at most to safe; returns where it stopped. */
size_t sh_minhash_cjk2_avx512(uint64_t mins[128], unsigned shift, const sh_text *t, size_t i,
			      size_t safe);
/* And their keys into out[0 ..), in window order (sh_ngram_keys()). */
size_t sh_keys_cjk2_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe);
/* Likewise for windows of ng <= 8 characters of one width w (1 to 4 bytes,
 * 4 <= ng * w <= 16: XXH3's 4-to-8 and 9-to-16-byte paths), from window i
 * while eight in a row are such (none from a CJK character unless ngc ==
 * ng), at most to safe; returns where it stopped. Two-byte marks after a
 * letter, Cyrillic, Greek, Tibetan marks. */
size_t sh_minhash_wide_avx512(uint64_t mins[128], unsigned shift, const sh_text *t, size_t i,
			      size_t safe, unsigned ng, unsigned ngc);
size_t sh_keys_wide_avx512(uint64_t *out, const sh_text *t, size_t i, size_t safe, unsigned ng,
			   unsigned ngc);
/* And of keys already made (auto.c's shingles): each lowers its bin by
 * sh_mix64(key ^ c), eight per vector; returns how many were taken, n
 * rounded down to a multiple of eight. */
size_t sh_minhash_keys_avx512(uint64_t mins[128], unsigned shift, const uint64_t *keys, size_t n,
			      uint64_t c);
/* And of word 3-shingles from their word keys w[0 .. n + 2): shingle j is
 * that of w[j], w[j + 1], w[j + 2], its key auto.c's shingle_key() (XXH3-64
 * of the 24 bytes, the 64x64 -> 128-bit products made of 32-bit ones),
 * lowering its bin as above; returns how many were taken, n rounded down to
 * a multiple of eight. */
size_t sh_minhash_shingles_avx512(uint64_t mins[128], unsigned shift, const uint64_t *w, size_t n,
				  uint64_t c);
/* The word keys of n words of 1 to 8 bytes (XXH3-64 of the bytes: its
 * 1-to-3 and 4-to-8-byte paths, both computed, one kept per lane): word j's
 * bytes are the low len[j] bytes of v[j] (little-endian; the bytes above are
 * ignored), its key goes to out[j]. Returns how many were done, n rounded
 * down to a multiple of eight; lanes of other lengths get no meaningful key. */
size_t sh_word_keys_avx512(const uint64_t *v, const uint64_t *len, size_t n, uint64_t *out);
/* The low bits of sh_mix64() of val[0 .. n) (n a multiple of 8, at most
 * 128): bit j of out[j / 64] is sh_mix64(val[j]) & 1, the others 0.
 * Returns n, or 0 without the instructions (out then untouched). */
size_t sh_mix_bits_avx512(const uint64_t *val, size_t n, uint64_t out[2]);
/* The classes of characters cls[0 .. 64) (of which avail >= 1 exist; the
 * others count as spaces) as bit masks: bit p of the result is set when
 * character p is a word character, of *cjk when it is a CJK character. */
uint64_t sh_cls_masks_avx512(const uint8_t *cls, size_t avail, uint64_t *cjk);

typedef struct sh_wvote {
	double acc[128];
	unsigned bits;
} sh_wvote;

void sh_wvote_init(sh_wvote *v, unsigned bits);
void sh_wvote_add(sh_wvote *v, const uint64_t h[2], double w);
void sh_wvote_finish(const sh_wvote *v, simhash_fp *out);

#endif
