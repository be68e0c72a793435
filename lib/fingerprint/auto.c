/* auto.c - the length-adaptive features of the v2 default (SIMHASH_FEATURES_AUTO).
 *
 * Short texts are fingerprinted by a one-bit MinHash of the set of their
 * character n-grams (scheme token "-cmh1", the default; fingerprint.c's
 * char_minhash(), with sh_mh_*() here), or as v2 was first released
 * (auto_char_votes, "-cen1") by the centered votes of the n-grams (tf, as
 * "char" features) defined below; long ones by a one-bit MinHash of their
 * word 3-shingles, and texts in between by both, by length: character n-grams find the near-duplicates of a
 * title or a message, where one edited word changes most shingles, while on
 * documents they are dominated by the few hundred n-grams every text of a
 * language shares (" th", "the", "ing"), which pulls unrelated fingerprints
 * together; shingles of a long text are mostly its own. docs/quality.md has
 * the measurements behind the thresholds.
 *
 * Definitions (part of the fingerprint contract of the v2 scheme):
 *  - L = characters of the normalized text. The char share is a = 1 for
 *    L <= SH_AUTO_L0, 0 for L >= SH_AUTO_L1, linear in between.
 *  - Words are those of the simple tokenizer (runs of word characters, every
 *    CJK character alone); a word's key is XXH3-64 of its bytes; a shingle's
 *    key is XXH3-64 of the 24 bytes of its three word keys, little-endian,
 *    and is its feature hash at 64 bits (the low half at 32; at 128 bits,
 *    splitmix64's finalizer of the key xor two constants).
 *  - A shingle's weight is 1 + ln tf in 16.16 fixed point, with log2 taken
 *    by linear interpolation between powers of two: integers only.
 *  - Char votes Vc_j = 2 c_j - n (c_j: n-grams with bit j set, n: n-grams),
 *    centered when the n-grams are the default's (n = 3, 2 at a CJK
 *    character; the scheme says "-cen1"): Vc_j - (n_o M_0j + n_k M_1j), where
 *    n_k counts the n-grams starting at a CJK character, n_o the others, and
 *    M (center_table.h, tools/gen_center.c) is the mean vote per n-gram of
 *    each class over the documents of a general corpus. Every text of a
 *    language shares a few hundred n-grams (" th", "the", "的"), which pull
 *    every bit the same way: without centering, unrelated short English texts
 *    agree on far more bits than chance.
 *  - Shingle votes Vs_j = sum of +-w; bit j is 1 iff
 *    a * Vc_j / n + (1 - a) * Vs_j / Ws > 0, computed exactly in 128-bit
 *    integers (M in units of 2^-SH_CENTER_Q), for j >= m only. Uncentered,
 *    with a = 1 this is the "char" fingerprint, bit for bit.
 *  - The first m = floor(bits * (1 - a)) bits (all from L1 on) are the
 *    one-bit MinHash of the distinct shingles (minhash_bits(); "-mh1"): a
 *    MinHash bit differs between two texts with probability about (1 - J) / 2,
 *    J the Jaccard index of their shingle sets, a steeper function of J near
 *    the near-duplicate threshold than SimHash's angle / pi. Texts of L1
 *    characters or more need no shingle votes.
 *
 * Memory: the distinct shingles (16 bytes each, more allocated but never
 * touched) and a table of 4-byte slots at most half full: 24 to 32 bytes per
 * distinct shingle. A text taken in windows (stream.c) is longer than L1, so
 * it needs the MinHash bits alone: its shingles lower the bins' minima as
 * they come (a minimum over the occurrences is the minimum over the set),
 * in 1 KiB whatever its length.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "vote.h"
#include "auto.h"
/* Experiments only: a build with -DSH_EXP_SEED=N takes the table made for its
 * hashes (-DSH_CENTER_TABLE='"path"', by gen_center of the same build). */
#ifdef SH_CENTER_TABLE
#include SH_CENTER_TABLE
#else
#include "center_table.h"
#endif

enum { SH_AUTO_BLOCK = 256 }; /* shingle keys hashed before they are counted */

struct sh_auto {
	struct ent *ent; /* the distinct shingles, in order of first occurrence */
	uint32_t *idx;   /* hash table: 1 + index into ent, 0 empty */
	size_t cap;      /* slots of idx and twice the entries of ent, a power of two, or 0 */
	size_t mask;     /* this text uses slots [0, mask]: a small text a small part */
	size_t used;     /* entries of ent, at most (mask + 1) * load4 / 4 */
	unsigned load4;  /* the most entries per slot, in quarters (2) */
	/* Only the MinHash wanted (a whole text with no votes, or a text taken
	 * in windows): count() lowers the bins' minima instead of counting,
	 * since a minimum over the occurrences is the minimum over the set. */
	uint64_t *mh_mins; /* NULL when counting */
	unsigned mh_shift;
	int windows;             /* sh_auto_begin() until sh_auto_votes() */
	uint64_t win_mins[128];  /* the bins of a text taken in windows */
	sh_intr *intr;     /* the ctx's interrupt hook, polled by scan() */
	int simd;          /* the ctx's choice: vote_avx512.c may run */
};

void sh_auto_set_intr(sh_auto *a, sh_intr *intr)
{
	a->intr = intr;
}

void sh_auto_set_simd(sh_auto *a, int on)
{
	a->simd = on;
}

struct ent {
	uint64_t key;
	uint32_t count;
	uint32_t pad;
};

simhash_err sh_auto_new(sh_auto **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? SIMHASH_OK : SIMHASH_ENOMEM;
}

void sh_auto_free(sh_auto *a)
{
	if (!a)
		return;
	free(a->ent);
	free(a->idx);
	free(a);
}

/* 65536 * (1 + ln tf), log2 interpolated linearly between powers of two. */
static int64_t logtf_q16(uint32_t tf)
{
	unsigned e = 31u - (unsigned)__builtin_clz(tf);
	/* log2(tf) in 16.16: e plus the linear mantissa */
	uint64_t l2 = ((uint64_t)e << 16) + (((uint64_t)(tf - (1u << e)) << 16) >> e);
	return 65536 + (int64_t)((l2 * 45426u) >> 16); /* 45426 = round(65536 ln 2) */
}

/* Empties the slots this text used ([0, mask]): a memset, as long as the
 * table of a text is sized to it (collect()). */
static void unindex(sh_auto *a)
{
	if (a->idx)
		memset(a->idx, 0, (a->mask + 1) * sizeof *a->idx);
}

/* Uses slots [0, slots) from now on (entries kept, re-indexed). */
static simhash_err reslot(sh_auto *a, size_t slots)
{
	unindex(a);
	if (slots > a->cap) {
		/* the slots are rebuilt from ent: the old ones go first, so a
		 * long text never holds both */
		struct ent *ent = realloc(a->ent, (slots / 4 * 3 + 1) * sizeof *ent);
		uint32_t *idx;
		free(a->idx);
		a->idx = NULL;
		a->cap = 0;
		a->mask = 0;
		idx = calloc(slots, sizeof *idx);
		if (ent) {
			a->ent = ent;
			ent[0].key = 0; /* the spare, read by count() */
			ent[0].count = 0;
		}
		if (!idx || !ent) {
			free(idx);
			a->used = 0;
			return SIMHASH_ENOMEM;
		}
		a->idx = idx;
		a->cap = slots;
	}
	a->mask = slots - 1;
	for (size_t e = 1; e <= a->used; e++) {
		size_t j = (size_t)a->ent[e].key & a->mask;
		while (a->idx[j])
			j = (j + 1) & a->mask;
		a->idx[j] = (uint32_t)e;
	}
	return SIMHASH_OK;
}

/* One mixed key of a shingle for its MinHash bin and value (the vector
 * kernel, sh_minhash_keys_avx512(), takes the same constant; the ctx never
 * lets it run with SH_EXP_SEED). */
#define SH_SHINGLE_MH 0x5851f42d4c957f2dull
static inline uint64_t minhash_key(uint64_t key)
{
	return sh_mix64(sh_exp_mix(key, 2) ^ SH_SHINGLE_MH);
}

/* Counts one occurrence of each of keys[0..n). The entries are ent[1..used]
 * and ent[0] a spare, so a slot's entry can be read before knowing whether
 * the slot is empty (0): one branch per probe, and a new key and a known one
 * take the same straight-line code (which of the two is hard to predict).
 * The table is made large enough for all n first, so the loop keeps the
 * table's fields in registers. */
static simhash_err count(sh_auto *a, const uint64_t *keys, size_t n)
{
	uint32_t *idx;
	struct ent *ent;
	size_t mask, used;

	if (a->mh_mins) {
		size_t i = a->simd ? sh_minhash_keys_avx512(a->mh_mins, a->mh_shift, keys, n,
							    SH_SHINGLE_MH)
				   : 0;
		for (; i < n; i++)
			sh_mh_add(a->mh_mins, a->mh_shift, minhash_key(keys[i]));
		return SIMHASH_OK;
	}
	while (4 * (a->used + n) > a->load4 * (a->mask + 1)) {
		simhash_err err = a->used + n >= UINT32_MAX / 2 ? SIMHASH_ENOMEM
								: reslot(a, 2 * (a->mask + 1));
		if (err)
			return err;
	}
	idx = a->idx;
	ent = a->ent;
	mask = a->mask;
	used = a->used;
	for (size_t i = 0; i < n; i++) {
		uint64_t key = keys[i];
		size_t j = (size_t)key & mask;
		uint32_t x, fresh;
		struct ent *e;
		for (;;) {
			x = idx[j];
			if ((x == 0) | (ent[x].key == key))
				break;
			j = (j + 1) & mask;
		}
		fresh = x == 0;
		x = fresh ? (uint32_t)used + 1 : x;
		e = &ent[x];
		e->count = fresh ? 1 : e->count + (e->count != UINT32_MAX);
		e->key = key;
		idx[j] = x;
		used += fresh;
	}
	a->used = used;
	return SIMHASH_OK;
}

/* The key of the shingle of word keys k0 k1 k2: XXH3-64 of their 24 bytes,
 * little-endian. That is XXH3's 17-to-128-byte path (seed 0) with the input's
 * 8-byte words read straight from the keys instead of a buffer: acc = 24 *
 * PRIME64_1 plus mix16B of bytes [0, 16) (k0 k1) with secret [0, 16) and of
 * bytes [8, 24) (k1 k2) with secret [16, 32), avalanched. tests/fingerprint
 * checks it against XXH3_64bits() of the bytes. */
static inline uint64_t shingle_key(uint64_t k0, uint64_t k1, uint64_t k2)
{
	const uint8_t *sec = XXH3_kSecret;
	uint64_t acc = 24 * XXH_PRIME64_1;

	acc += XXH3_mul128_fold64(k0 ^ XXH_readLE64(sec), k1 ^ XXH_readLE64(sec + 8));
	acc += XXH3_mul128_fold64(k1 ^ XXH_readLE64(sec + 16), k2 ^ XXH_readLE64(sec + 24));
	return (uint64_t)XXH3_avalanche(acc);
}

uint64_t sh_auto_shingle_key(const uint64_t k[3])
{
	return shingle_key(k[0], k[1], k[2]);
}

/* A word's key: XXH3-64 of its bytes t->s[b, b + len). XXH3 takes one of
 * three paths for 1 to 16 bytes, and word lengths in a text follow no
 * pattern a branch predictor can learn. The words of more than 8 bytes are
 * few (about one in seven in English) and take XXH3's own dispatch; where the
 * 8 bytes on either side of a shorter word lie inside the text, both short
 * paths are computed (each reads only bytes there) and the one for len kept
 * without a branch (computing the 9-to-16-byte path as well for every word
 * made the English default about 12% slower on an AMD EPYC). Always inlined:
 * with two scans calling it, the compiler made it a call per word. */
static inline __attribute__((always_inline)) uint64_t word_key(const sh_text *t, size_t b,
							       size_t len)
{
	const uint8_t *p = t->s + b;

	if (len <= 8 && b >= 8 && b + 8 <= t->len) {
		uint64_t h1 = XXH3_len_1to3_64b(p, len, XXH3_kSecret, 0);
		uint64_t h2 = XXH3_len_4to8_64b(p, len, XXH3_kSecret, 0);
		uint64_t m1 = (uint64_t)0 - (uint64_t)(len <= 3);
		return (h1 & m1) | (h2 & ~m1);
	}
	return sh_key_inline(p, len);
}

/* The key of the word of characters [i, end). A CJK character is a word of
 * its own, and in the BMP (nearly every one) it is 3 bytes: its key is XXH3's
 * 1-to-3-byte path alone, which is what XXH3-64 of 3 bytes computes. The
 * branch on the class is predictable in Chinese and Japanese text, where
 * word_key()'s three paths would be computed for every character. */
static inline __attribute__((always_inline)) uint64_t cjk_or_word_key(const sh_text *t, size_t i,
								      size_t end)
{
	size_t b = t->off[i], len = t->off[end] - b;

	if (t->cls[i] == SH_C_CJK && len == 3)
		return XXH3_len_1to3_64b(t->s + b, 3, XXH3_kSecret, 0);
	return word_key(t, b, len);
}

/* The first j >= i with cls[j] != SH_C_WORD, or n: eight classes at a time
 * (SH_C_WORD is 0, so a nonzero byte ends the run). */
static inline size_t word_run_end(const uint8_t *cls, size_t i, size_t n)
{
	while (i + 8 <= n) {
		uint64_t w;
		memcpy(&w, cls + i, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		if (w)
			return i + ((unsigned)__builtin_ctzll(w) >> 3);
		i += 8;
	}
	while (i < n && cls[i] == SH_C_WORD)
		i++;
	return i;
}

/* The end of the word that starts at character i, or i if none does
 * (a space or punctuation); *next gets where to look next. */
static inline size_t word_end(const sh_text *t, size_t i, size_t *next)
{
	uint8_t c = t->cls[i];
	size_t j = i + 1;

	if (c == SH_C_WORD) {
		j = word_run_end(t->cls, j, t->n_chars);
	} else if (c != SH_C_CJK) {
		*next = i + 1;
		return i;
	}
	*next = j;
	return j;
}

/* Lowers the bins of the shingles of word keys w[0 .. n + 2) (shingle j of
 * w[j], w[j + 1], w[j + 2]): eight at a time in the vector kernel, the rest
 * one by one. */
static void mh_shingles(sh_auto *a, const uint64_t *w, size_t n)
{
	size_t j = sh_minhash_shingles_avx512(a->mh_mins, a->mh_shift, w, n, SH_SHINGLE_MH);

	for (; j < n; j++)
		sh_mh_add(a->mh_mins, a->mh_shift, minhash_key(shingle_key(w[j], w[j + 1], w[j + 2])));
}

/* The words of a block of scan_mh(): word j's first 8 bytes (its bytes when
 * it has 8 or fewer, zeros above), its length, and its offset in the text;
 * k[2 + j] gets its key, k[0] and k[1] holding the two words before. */
struct mh_block {
	uint64_t v[SH_AUTO_BLOCK], len[SH_AUTO_BLOCK], k[SH_AUTO_BLOCK + 2];
	uint32_t b[SH_AUTO_BLOCK];
	uint32_t longer[SH_AUTO_BLOCK]; /* the words of more than 8 bytes */
	size_t n_longer;
};

/* The keys of the nw words of block w, then the MinHash of the shingles
 * ending at them (from the third word of the text on: m words came before
 * the block); the last two keys move to k[0], k[1] for the next block, and
 * the one before them is returned. */
static uint64_t mh_block_flush(sh_auto *a, const sh_text *t, struct mh_block *w, size_t nw,
			       size_t m)
{
	size_t j = sh_word_keys_avx512(w->v, w->len, nw, w->k + 2), first;
	uint64_t k0;

	for (; j < nw; j++)
		w->k[2 + j] = word_key(t, w->b[j], w->len[j]);
	for (j = 0; j < w->n_longer; j++) {
		uint32_t x = w->longer[j];
		w->k[2 + x] = sh_key_inline(t->s + w->b[x], w->len[x]);
	}
	w->n_longer = 0;
	first = m >= 2 ? 0 : 2 - m < nw ? 2 - m : nw;
	if (first < nw)
		mh_shingles(a, w->k + first, nw - first);
	k0 = w->k[nw - 1];
	w->k[0] = w->k[nw];
	w->k[1] = w->k[nw + 1];
	return k0;
}

/* Records the words of a run of CJK characters from character at (each a
 * word of its own; run: the CJK bits of the 64 characters from at, low bit
 * first) as scan_mh() records a word: as many as the run has, up to `left`
 * characters and `room` words. Returns how many. Chinese text is mostly such
 * runs, and here a word costs no branch on its kind or end. */
static inline size_t cjk_words(const sh_text *t, size_t at, uint64_t run, size_t left,
			       size_t room, struct mh_block *w, size_t nw)
{
	const uint8_t *s = t->s;
	const uint32_t *off = t->off + at;
	size_t n = ~run ? (size_t)__builtin_ctzll(~run) : 64, fast, k;

	n = n < left ? n : left;
	n = n < room ? n : room;
	/* eight bytes read from each word but those near the text's end */
	for (fast = n; fast > 0 && off[fast - 1] + 8 > t->len; fast--)
		;
	for (k = 0; k < fast; k++) {
		uint64_t v;
		memcpy(&v, s + off[k], 8);
		w->v[nw + k] = v;
		w->len[nw + k] = off[k + 1] - off[k]; /* one character: never longer than 8 */
		w->b[nw + k] = off[k];
	}
	for (; k < n; k++) {
		uint64_t v = 0;
		memcpy(&v, s + off[k], off[k + 1] - off[k]);
		w->v[nw + k] = v;
		w->len[nw + k] = off[k + 1] - off[k];
		w->b[nw + k] = off[k];
	}
	return n;
}

/* scan() when only the MinHash is wanted and the vector kernels may run: the
 * loop only finds the words, a block at a time; their keys are made eight
 * per vector (sh_word_keys_avx512(), both short paths of XXH3 per lane, the
 * longer words one by one), and the shingle keys of the block eight at a
 * time too (sh_minhash_shingles_avx512(): three 64 x 64-bit products each),
 * then mixed into the bins. The same bins: a minimum depends on no order. */
static simhash_err scan_mh(sh_auto *a, const sh_text *t, size_t from, size_t to, sh_auto_run *r)
{
	struct mh_block w;
	uint64_t k0 = r->k[0];
	size_t i, last, m = r->m, nw = 0, step = sh_intr_step(a->intr), reported = from;

	w.k[0] = r->k[1];
	w.k[1] = r->k[2];
	w.n_longer = 0;
	/* 64 characters at a time: the words' starts and ends from bit masks
	 * of their classes (a word character after another continues a word; a
	 * CJK character is one), a word reaching past the 64 ended by
	 * word_run_end() and the next 64 taken from its end */
	for (i = from, last = from; i < to;) {
		uint64_t cjk, word = sh_cls_masks_avx512(t->cls + i, t->n_chars - i, &cjk);
		uint64_t starts = (word & ~(word << 1)) | cjk;
		size_t base = i;
		if (to - i < 64)
			starts &= ((uint64_t)1 << (to - i)) - 1;
		i = base + 64;
		while (starts) {
			unsigned p = (unsigned)__builtin_ctzll(starts);
			size_t at = base + p, end, b, len, n;
			uint64_t v = 0, rest = ~(word >> p);
			if (cjk >> p & 1) {
				n = cjk_words(t, at, cjk >> p, to - at, SH_AUTO_BLOCK - nw, &w, nw);
				nw += n;
				last = at + n;
				at += n - 1;
				/* the n starts from p (n <= 64 - p) */
				starts &= n + p < 64 ? ~(uint64_t)0 << (n + p) : 0;
			} else {
				if (rest && p + (unsigned)__builtin_ctzll(rest) < 64)
					end = at + (unsigned)__builtin_ctzll(rest);
				else
					end = i = word_run_end(t->cls, base + 64, t->n_chars);
				last = end;
				b = t->off[at];
				len = t->off[end] - b;
				if (SH_LIKELY(b + 8 <= t->len))
					memcpy(&v, t->s + b, 8);
				else
					memcpy(&v, t->s + b, len < 8 ? len : 8);
				w.v[nw] = v;
				w.len[nw] = len;
				w.longer[w.n_longer] = (uint32_t)nw; /* kept if longer: no branch */
				w.n_longer += len > 8;
				w.b[nw++] = (uint32_t)b;
				starts &= starts - 1;
			}
			if (nw == SH_AUTO_BLOCK) {
				k0 = mh_block_flush(a, t, &w, nw, m);
				m += nw;
				nw = 0;
				/* characters, reported a block of words at a time */
				if (SH_UNLIKELY(at - reported >= step)) {
					if (sh_intr_poll(a->intr, at - reported))
						return SIMHASH_EINTR;
					reported = at;
				}
			}
		}
	}
	/* where the word-by-word loop ends: at `to`, or past it at the end of
	 * a word that started before it */
	i = last > to ? last : to;
	if (nw) {
		k0 = mh_block_flush(a, t, &w, nw, m);
		m += nw;
	}
	if (sh_intr_poll(a->intr, i - reported))
		return SIMHASH_EINTR;
	r->k[0] = k0;
	r->k[1] = w.k[0];
	r->k[2] = w.k[1];
	r->m = m;
	return SIMHASH_OK;
}

/* Counts the shingles ending at the words that start at characters
 * [from, to) of t into a's table; r carries the last word keys and the word
 * count from the words before. */
static simhash_err scan(sh_auto *a, const sh_text *t, size_t from, size_t to, sh_auto_run *r)
{
	uint64_t k0 = r->k[0], k1 = r->k[1], k2 = r->k[2], keys[SH_AUTO_BLOCK];
	size_t i, next, m = r->m, nk = 0, step = sh_intr_step(a->intr), reported = from;
	simhash_err err;

	if (a->mh_mins && a->simd)
		return scan_mh(a, t, from, to, r);
	/* The shingle keys are computed a block at a time, then counted: the
	 * hashing of one block has no dependence on the table, so it runs at
	 * full width instead of waiting on each probe. */
	for (i = from; i < to; i = next) {
		size_t end = word_end(t, i, &next);
		if (end == i)
			continue;
		k0 = k1;
		k1 = k2;
		k2 = cjk_or_word_key(t, i, end);
		if (++m >= 3) {
			keys[nk++] = shingle_key(k0, k1, k2);
			if (nk == SH_AUTO_BLOCK) {
				err = count(a, keys, nk);
				if (err)
					return err;
				nk = 0;
				/* characters, reported a block of words at a time;
				 * what the run carries is dropped with the text */
				if (SH_UNLIKELY(i - reported >= step)) {
					if (sh_intr_poll(a->intr, i - reported))
						return SIMHASH_EINTR;
					reported = i;
				}
			}
		}
	}
	if (nk) {
		err = count(a, keys, nk);
		if (err)
			return err;
	}
	/* the rest of the characters (a window of a stream is one call) */
	if (sh_intr_poll(a->intr, i - reported))
		return SIMHASH_EINTR;
	r->k[0] = k0;
	r->k[1] = k1;
	r->k[2] = k2;
	r->m = m;
	return SIMHASH_OK;
}

void sh_mh_init(uint64_t mins[128], unsigned bits)
{
	for (unsigned j = 0; j < bits; j++)
		mins[j] = UINT64_MAX;
}

/* The bits of a one-permutation MinHash from its bins: an empty bin takes
 * the next nonempty one to its right (circularly) at distance r; its bit is
 * the low bit of mix(min + r * golden). All bins empty: every bit 0.
 * One walk from the right: `next` is the position of the nearest nonempty
 * bin at or after j, counted past the end (+ bits) once it has wrapped. */
void sh_mh_bits(const uint64_t mins[128], unsigned bits, int simd, uint64_t out[2])
{
	uint64_t val[128], o[2] = { 0, 0 };
	unsigned first = 0, next, j;

	out[0] = out[1] = 0;
	while (first < bits && mins[first] == UINT64_MAX)
		first++;
	if (first == bits)
		return;
	next = first + bits;
	for (j = bits; j-- > 0;) {
		unsigned k;
		if (mins[j] != UINT64_MAX)
			next = j;
		k = next >= bits ? next - bits : next;
		val[j] = mins[k] + (uint64_t)(next - j) * 0x9e3779b97f4a7c15ull;
	}
	/* the mixes apart from the walk: no bin waits on another */
	if (simd && sh_mix_bits_avx512(val, bits, out) == bits)
		return;
	for (j = 0; j < bits; j++)
		o[j >> 6] |= (sh_mix64(val[j]) & 1) << (j & 63);
	out[0] = o[0];
	out[1] = o[1];
}

/* One-permutation MinHash of the distinct shingles, one bit per bin: bin j
 * of `bits` bins holds the least mixed key whose top bits are j (sh_mh_bits()
 * fills the empty ones). Two texts' bits agree with probability about
 * (1 + J) / 2, J the Jaccard index of their shingle sets. The shingles are
 * those of the table, or those a text taken in windows put in its bins as
 * they came: the same minima either way. */
static void minhash_bits(const sh_auto *a, unsigned bits, uint64_t out[2])
{
	uint64_t mins[128];
	unsigned shift = sh_mh_shift(bits);

	if (a->windows) {
		/* all bins still empty: no shingle, bits 0 (as below) */
		sh_mh_bits(a->win_mins, bits, a->simd, out);
		return;
	}
	sh_mh_init(mins, bits);
	for (size_t s = 1; s <= a->used; s++)
		sh_mh_add(mins, shift, minhash_key(a->ent[s].key));
	if (a->used == 0) {
		out[0] = out[1] = 0;
		return;
	}
	sh_mh_bits(mins, bits, a->simd, out);
}

/* Empties the table and uses `want` slots (a power of two) to begin with. */
static simhash_err begin(sh_auto *a, size_t want, unsigned load4)
{
	a->windows = 0; /* a windowed text given up half-way ends here */
	a->mh_mins = NULL;
	a->used = 0; /* reslot() empties the slots the last text used */
	a->load4 = load4;
	return reslot(a, want);
}

/* Counts the distinct word 3-shingles of t into a's table. */
static simhash_err collect(sh_auto *a, const sh_text *t, size_t *n_words)
{
	sh_auto_run r = { { 0, 0, 0 }, 0 };
	size_t want = 64;
	simhash_err err;

	/* The table, kept across texts, is emptied of the last text's entries;
	 * this one uses as many slots as it has characters, up to a bound past
	 * which it grows as needed: an English word takes about six characters
	 * with the space after it, so its shingles fill a sixth of the slots
	 * (few collisions); Chinese, every character a word, has about as many
	 * shingles as characters and doubles the table once. A short text stays
	 * in a few cache lines of a table a long text made large. */
	while (want < t->n_chars && want < ((size_t)1 << 22))
		want *= 2;
	err = begin(a, want, 2);
	if (!err)
		err = scan(a, t, 0, t->n_chars, &r);
	*n_words = r.m;
	return err;
}

void sh_auto_begin(sh_auto *a, unsigned bits)
{
	sh_mh_init(a->win_mins, bits);
	a->mh_mins = a->win_mins;
	a->mh_shift = sh_mh_shift(bits);
	a->windows = 1;
}

simhash_err sh_auto_scan(sh_auto *a, const sh_text *t, size_t from, size_t to, sh_auto_run *r)
{
	return scan(a, t, from, to, r);
}

simhash_err sh_auto_shingles(sh_auto *a, unsigned bits, const sh_text *t, int votes,
			     int64_t vs[128], int64_t *ws, uint64_t mh[2])
{
	size_t m;
	simhash_err err;

	if (!votes) {
		/* the bits alone: no table of distinct shingles (the same bits
		 * as sh_auto_votes() gives from one) */
		uint64_t mins[128];
		sh_auto_run r = { { 0, 0, 0 }, 0 };
		a->windows = 0;
		sh_mh_init(mins, bits);
		a->mh_mins = mins;
		a->mh_shift = sh_mh_shift(bits);
		err = scan(a, t, 0, t->n_chars, &r);
		a->mh_mins = NULL;
		memset(vs, 0, 128 * sizeof *vs);
		*ws = 0;
		mh[0] = mh[1] = 0;
		if (err)
			return err;
		if (r.m >= 3) {
			sh_mh_bits(mins, bits, a->simd, mh);
			*ws = 1; /* shingles there, votes not needed */
		}
		return SIMHASH_OK;
	}
	err = collect(a, t, &m);
	if (err)
		return err;
	sh_auto_votes(a, bits, m, votes, vs, ws, mh);
	return SIMHASH_OK;
}

/* The votes of the distinct shingles: integer sums, in any order. */
struct acc {
	sh_vote v[2];
	int64_t *vs;
	int64_t ws;
	unsigned bits;
};

/* Most shingles occur once or twice: those are unit votes of weight
 * logtf_q16(1) or logtf_q16(2), counted bit-sliced (vote.h); the rest add
 * their weight bit by bit. */
static inline void acc_add(struct acc *c, uint64_t key, uint32_t count)
{
	uint64_t h[2];
	int64_t w;

	if (c->bits == 128) {
		h[0] = sh_mix64(sh_exp_mix(key, 2) ^ 0x9e3779b97f4a7c15ull);
		h[1] = sh_mix64(sh_exp_mix(key, 2) ^ 0xc2b2ae3d27d4eb4full);
	} else {
		h[0] = sh_exp_mix(key, 2);
		h[1] = 0;
	}
	if (count <= 2) {
		sh_vote_add(&c->v[count - 1], h[0], h[1]);
		return;
	}
	w = logtf_q16(count);
	for (unsigned j = 0; j < c->bits; j++)
		c->vs[j] += (h[j >> 6] >> (j & 63) & 1) ? w : -w;
	c->ws += w;
}

void sh_auto_votes(sh_auto *a, unsigned bits, size_t m, int votes, int64_t vs[128], int64_t *ws,
		   uint64_t mh[2])
{
	uint64_t ones[128];
	struct acc c;

	assert(!(a->windows && votes)); /* a windowed text kept no table */
	memset(vs, 0, 128 * sizeof *vs);
	*ws = 0;
	mh[0] = mh[1] = 0;
	if (m >= 3)
		minhash_bits(a, bits, mh);
	if (m >= 3 && !votes) {
		*ws = 1; /* shingles there, votes not needed */
	} else if (m >= 3) {
		/* each distinct shingle votes once */
		c.vs = vs;
		c.ws = 0;
		c.bits = bits;
		sh_vote_init(&c.v[0], bits);
		sh_vote_init(&c.v[1], bits);
		for (size_t s = 1; s <= a->used; s++)
			acc_add(&c, a->ent[s].key, a->ent[s].count);
		for (unsigned k = 1; k <= 2; k++) {
			int64_t w = logtf_q16(k);
			uint64_t n_c = sh_vote_counts(&c.v[k - 1], bits, ones);
			for (unsigned j = 0; j < bits; j++)
				vs[j] += w * (2 * (int64_t)ones[j] - (int64_t)n_c);
			c.ws += w * (int64_t)n_c;
		}
		*ws = c.ws;
	}
	a->windows = 0;
	a->mh_mins = NULL;
}

int64_t sh_auto_share(const sh_text *t)
{
	if (t->n_chars <= SH_AUTO_L0)
		return SH_AUTO_SPAN;
	if (t->n_chars >= SH_AUTO_L1)
		return 0;
	return SH_AUTO_L1 - (int64_t)t->n_chars;
}

int sh_auto_centered(const simhash_config *cfg)
{
	return cfg->auto_char_votes && cfg->ngram == 3 && cfg->ngram_cjk == 2;
}

/* The bits j < n of the 64-bit word that holds bits [from, from + 64). */
static inline uint64_t low_bits(unsigned n, unsigned from)
{
	if (n <= from)
		return 0;
	return n - from >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (n - from)) - 1;
}

void sh_auto_combine(unsigned bits, int64_t share, const sh_auto_char *c, const int64_t *vs,
		     int64_t ws, const uint64_t mh[2], simhash_fp *out)
{
	unsigned n_mh;
	const int32_t *m0 = NULL, *m1 = NULL;
	const __int128 one = (__int128)1 << SH_CENTER_Q;

	if (ws == 0)
		share = SH_AUTO_SPAN;
	if (c->centered) {
		m0 = bits == 128 ? sh_center128[0] : sh_center64[0];
		m1 = bits == 128 ? sh_center128[1] : sh_center64[1];
	}
	out->bits = bits;
	out->w[0] = out->w[1] = 0;
	n_mh = (unsigned)((uint64_t)bits * (uint64_t)(SH_AUTO_SPAN - share) / SH_AUTO_SPAN);
	if (c->minhash) {
		/* every bit a MinHash bit, as the loop below takes them: the
		 * first n_mh the shingles', the others the n-grams' */
		for (unsigned h = 0; h < 2; h++) {
			uint64_t m = low_bits(n_mh, 64 * h), width = low_bits(bits, 64 * h);
			out->w[h] = ((mh[h] & m) | (c->mh[h] & ~m)) & width;
		}
		return;
	}
	for (unsigned j = 0; j < bits; j++) {
		__int128 s, vc = 0;
		if (j < n_mh) {
			out->w[j >> 6] |= (mh[j >> 6] >> (j & 63) & 1) << (j & 63);
			continue;
		}
		if (c->minhash) {
			out->w[j >> 6] |= (c->mh[j >> 6] >> (j & 63) & 1) << (j & 63);
			continue;
		}
		if (share > 0) {
			/* the char vote times 2^Q, less the expected vote of its n-grams */
			vc = (2 * (__int128)c->counts[j] - (__int128)c->n) * one;
			if (m0)
				vc -= (__int128)(c->n - c->n_cjk) * m0[j] + (__int128)c->n_cjk * m1[j];
		}
		if (share == SH_AUTO_SPAN)
			s = vc;
		else if (share == 0)
			s = vs[j];
		else
			s = vc * share * ws + (__int128)vs[j] * (SH_AUTO_SPAN - share) *
						      (__int128)c->n * one;
		/* no branch: the sign is a coin toss per bit */
		out->w[j >> 6] |= (uint64_t)(s > 0) << (j & 63);
	}
}
