/* auto.h - the length-adaptive features of the v2 default (auto.c). */
#ifndef SH_AUTO_H
#define SH_AUTO_H
#include "../common/internal.h"

/* Up to L0 normalized characters a text is fingerprinted by char n-grams
 * alone, from L1 on by word 3-shingles alone, in between by both. */
#ifndef SH_AUTO_L0
#define SH_AUTO_L0 256
#endif
#ifndef SH_AUTO_L1
#define SH_AUTO_L1 768
#endif
#define SH_AUTO_SPAN ((int64_t)(SH_AUTO_L1 - SH_AUTO_L0))

typedef struct sh_auto sh_auto;
simhash_err sh_auto_new(sh_auto **out);
void sh_auto_free(sh_auto *a);
/* The ctx's interrupt hook: scans stop with SIMHASH_EINTR. */
void sh_auto_set_intr(sh_auto *a, sh_intr *intr);
/* Whether the vector kernels of vote_avx512.c may run (the ctx's choice). */
void sh_auto_set_simd(sh_auto *a, int on);

/* The key of the shingle of word keys k[0..3): XXH3-64 of their 24 bytes,
 * little-endian (for tests: computed without the bytes). */
uint64_t sh_auto_shingle_key(const uint64_t k[3]);

/* Streaming (stream.c): the shingles of a text taken in windows, longer than
 * L1, so only their MinHash is wanted: begin empties its `bits` bins; scan
 * puts the shingles ending at the words that start at characters [from, to)
 * of t (each must end by `to` or at t's end) into them, r carrying the last
 * three word keys and the word count between windows (zeroed before the
 * first); sh_auto_votes() with votes = 0 gives the bits after m words in
 * all. */
typedef struct sh_auto_run {
	uint64_t k[3];
	size_t m;
} sh_auto_run;
void sh_auto_begin(sh_auto *a, unsigned bits);
simhash_err sh_auto_scan(sh_auto *a, const sh_text *t, size_t from, size_t to, sh_auto_run *r);
/* The votes of the distinct shingles counted after m words in all, as
 * sh_auto_shingles() gives them (votes, vs, ws, mh alike). */
void sh_auto_votes(sh_auto *a, unsigned bits, size_t m, int votes, int64_t vs[128], int64_t *ws,
		   uint64_t mh[2]);

/* The char n-grams' share of the vote for text t, times SH_AUTO_SPAN. */
int64_t sh_auto_share(const sh_text *t);

/* The votes of the distinct word 3-shingles of t: vs[0..bits) and their total
 * weight *ws (0 if t has fewer than three words), and their MinHash bits
 * mh (one-permutation MinHash, one bit per bin). With votes = 0 only mh is
 * computed, vs is zero and *ws is 1 if t has shingles (0 if not). */
simhash_err sh_auto_shingles(sh_auto *a, unsigned bits, const sh_text *t, int votes,
			     int64_t vs[128], int64_t *ws, uint64_t mh[2]);

/* Whether cfg's char votes are centered: its n-grams are those the table of
 * center_table.h was derived for (n = 3, 2 at a CJK character). */
int sh_auto_centered(const simhash_config *cfg);

/* The char n-gram votes of a text: counts[j] of its n n-grams have bit j set,
 * n_cjk of them start at a CJK character. */
typedef struct sh_auto_char {
	const uint64_t *counts;
	uint64_t n, n_cjk;
	int centered; /* subtract the mean votes of center_table.h */
	int minhash;  /* take the bits of mh instead of the votes */
	uint64_t mh[2]; /* the one-bit MinHash of the char n-gram set */
} sh_auto_char;

/* One-permutation MinHash, one bit per bin, of `bits` bins (32, 64, 128):
 * init empties the bins, add puts a mixed key h into bin h >> shift, bits
 * gives the bits (empty bins densified from the right; all empty: 0; simd:
 * the mixes eight at a time where the CPU allows, the same bits). */
static inline unsigned sh_mh_shift(unsigned bits)
{
	return bits == 128 ? 57 : bits == 64 ? 58 : 59;
}
static inline void sh_mh_add(uint64_t mins[128], unsigned shift, uint64_t h)
{
	unsigned b = (unsigned)(h >> shift);
	mins[b] = h < mins[b] ? h : mins[b];
}
void sh_mh_init(uint64_t mins[128], unsigned bits);
void sh_mh_bits(const uint64_t mins[128], unsigned bits, int simd, uint64_t out[2]);

/* The fingerprint from the char votes c, the shingle votes and the shingles'
 * MinHash bits mh, with the char share `share` (SH_AUTO_SPAN: char n-grams
 * only; 0: MinHash bits only, c and vs unread): the first
 * bits * (SH_AUTO_SPAN - share) / SH_AUTO_SPAN bits are those of mh, the rest
 * the signs of the blended votes. */
void sh_auto_combine(unsigned bits, int64_t share, const sh_auto_char *c, const int64_t *vs,
		     int64_t ws, const uint64_t mh[2], simhash_fp *out);
#endif
