/* reorder.c - long runs of combining marks put into canonical order before ICU
 * normalizes them, so that normalization costs linear time on any input.
 *
 * ICU puts the non-starters (canonical combining class != 0) of a decomposed
 * text into canonical order by insertion: a run of n marks whose classes
 * alternate (U+0301 U+0316 ...) costs n^2 / 2 moves, 220 s for 1 MiB. Here a
 * segment with a run longer than SH_REORDER_RUN characters is first fully
 * decomposed with the normalizer's own mapping (unorm2_getDecomposition), then
 * every run of non-starters longer than that is sorted by class with a
 * counting sort, which is stable; ICU then finds the runs already in order.
 *
 * Why the output is unchanged: ICU's NFKC_Casefold is NFC of the canonical
 * ordering of the concatenated full decompositions of the characters. The
 * rewritten segment is that concatenation with some runs already in canonical
 * order (a stable sort by class is exactly canonical ordering), its characters
 * decompose to themselves, so its canonical ordering, and therefore its NFC,
 * is the same. tests/normalize/test_reorder.c checks this against ICU on the
 * untouched input, and bounds the time per MB on adversarial texts.
 *
 * A run is detected on the segment as given: a character without a
 * normalization boundary before it (unorm2_hasBoundaryBefore) continues the
 * run. That catches marks hidden in compatibility mappings too (U+FF9E maps to
 * U+3099, class 8), since the boundary test uses the same normalizer. */
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>
#include "reorder.h"

/* Runs up to this many characters are left to ICU: n^2 / 2 moves for n = 32
 * cost less than the decomposition would. */
#define SH_REORDER_RUN 32

/* Longest full decomposition under NFKC_Casefold (U+FDFA: 18 characters), with
 * room to spare. */
#define SH_DECOMP_MAX 32

/* Fills the cache entry e with what ICU says of c. */
static __attribute__((noinline)) const sh_reorder_entry *fill(const UNormalizer2 *nf,
							     sh_reorder_entry *e, UChar32 c)
{
	UChar dec[SH_DECOMP_MAX];
	UErrorCode st = U_ZERO_ERROR;
	int32_t len, j = 0;

	memset(e, 0, sizeof *e);
	e->cp1 = c + 1;
	e->ccc = u_getCombiningClass(c);
	len = unorm2_getDecomposition(nf, c, dec, SH_DECOMP_MAX, &st);
	if (U_FAILURE(st) || len < 0) {
		e->starter = e->ccc == 0;
		e->n_lead = e->ccc != 0;
		return e;
	}
	e->decomposes = 1;
	while (j < len) {
		UChar32 x;
		U16_NEXT(dec, j, len, x);
		if (u_getCombiningClass(x) == 0) {
			e->starter = 1;
			e->n_trail = 0;
		} else if (e->starter) {
			e->n_trail++;
		} else {
			e->n_lead++;
		}
	}
	return e;
}

/* The cache entry of c, filled from ICU on a miss (an adversarial text
 * repeats a few marks millions of times, and each ICU lookup goes through the
 * instance getters). */
static inline const sh_reorder_entry *lookup(const UNormalizer2 *nf, sh_reorder_bufs *b,
					     UChar32 c)
{
	sh_reorder_entry *e = &b->cache[(uint32_t)c & (SH_REORDER_CACHE - 1)];

	return SH_LIKELY(e->cp1 == c + 1) ? e : fill(nf, e, c);
}

int sh_reorder_needed(const UNormalizer2 *nf, sh_reorder_bufs *b, const UChar *u, int32_t m)
{
	int32_t k = 0, run = 0;

	while (k < m) {
		const sh_reorder_entry *e;
		UChar32 c;
		U16_NEXT(u, k, m, c);
		/* A character with a boundary before it starts with a starter
		 * and ends in at most a few marks: the run starts again. */
		if (unorm2_hasBoundaryBefore(nf, c)) {
			run = 0;
			continue;
		}
		/* Counted on the decomposition: what ICU reorders. */
		e = lookup(nf, b, c);
		run += e->n_lead;
		if (run > SH_REORDER_RUN)
			return 1;
		if (e->starter)
			run = e->n_trail;
	}
	return 0;
}

/* Sorts the UTF-16 units d[0..n) by their class cc[] (stable), through
 * tmp[0..n). The units of one code point share its class, so they stay
 * together and in order. */
static void sort_run(UChar *d, const uint8_t *cc, UChar *tmp, size_t n)
{
	size_t count[257] = {0};

	for (size_t i = 0; i < n; i++)
		count[cc[i] + 1]++;
	for (int c = 0; c < 256; c++)
		count[c + 1] += count[c];
	for (size_t i = 0; i < n; i++)
		tmp[count[cc[i]]++] = d[i];
	memcpy(d, tmp, n * sizeof *d);
}

/* Makes room for n UTF-16 units and their classes. */
static simhash_err room(sh_reorder_bufs *b, size_t n)
{
	if (sh_buf_reserve_big(&b->u16, n * sizeof(UChar)) || sh_buf_reserve_big(&b->ccs, n))
		return SIMHASH_ENOMEM;
	return SIMHASH_OK;
}

/* Appends c with class ccc at o[*k], cc[*k]. */
static inline void put(UChar *o, uint8_t *cc, size_t *k, UChar32 c, uint8_t ccc)
{
	if (c < 0x10000) {
		cc[*k] = ccc;
		o[(*k)++] = (UChar)c;
		return;
	}
	cc[*k] = cc[*k + 1] = ccc;
	o[(*k)++] = U16_LEAD(c);
	o[(*k)++] = U16_TRAIL(c);
}

/* Decomposes u[0..m) into b->u16, with each unit's class in b->ccs. */
static simhash_err decompose(const UNormalizer2 *nf, const UChar *u, int32_t m, sh_reorder_bufs *b,
			     size_t *n_out)
{
	size_t n = 0;
	int32_t k = 0;

	while (k < m) {
		UChar dec[SH_DECOMP_MAX];
		UErrorCode st = U_ZERO_ERROR;
		const sh_reorder_entry *e;
		int32_t len, j = 0;
		UChar32 c;

		if (SH_UNLIKELY((n + SH_DECOMP_MAX) * sizeof(UChar) > b->u16.cap ||
				n + SH_DECOMP_MAX > b->ccs.cap) &&
		    room(b, n + SH_DECOMP_MAX + (size_t)(m - k)))
			return SIMHASH_ENOMEM;
		U16_NEXT(u, k, m, c);
		e = lookup(nf, b, c);
		if (!e->decomposes) {
			put(b->u16.p, b->ccs.p, &n, c, e->ccc);
			continue;
		}
		len = unorm2_getDecomposition(nf, c, dec, SH_DECOMP_MAX, &st);
		if (U_FAILURE(st) || len < 0)
			return SIMHASH_EDEP;
		while (j < len) {
			UChar32 x;
			U16_NEXT(dec, j, len, x);
			put(b->u16.p, b->ccs.p, &n, x, lookup(nf, b, x)->ccc);
		}
	}
	*n_out = n;
	return SIMHASH_OK;
}

simhash_err sh_reorder(const UNormalizer2 *nf, const UChar *u, int32_t m, sh_reorder_bufs *b,
		       int32_t *out_m)
{
	size_t n, i = 0;
	simhash_err err = decompose(nf, u, m, b, &n);
	const uint8_t *cc = b->ccs.p;
	UChar *d = b->u16.p;

	if (err)
		return err;
	if (n > INT32_MAX)
		return SIMHASH_EINVAL;
	while (i < n) {
		size_t j = i;
		while (j < n && cc[j] != 0)
			j++;
		/* a run of more than SH_REORDER_RUN characters: of that many units
		 * at least (a 4-byte mark is two units) */
		if (j - i > SH_REORDER_RUN) {
			if (sh_buf_reserve_big(&b->tmp, (j - i) * sizeof(UChar)))
				return SIMHASH_ENOMEM;
			sort_run(d + i, cc + i, b->tmp.p, j - i);
		}
		i = j + 1;
	}
	*out_m = (int32_t)n;
	return SIMHASH_OK;
}

void sh_reorder_free(sh_reorder_bufs *b)
{
	sh_buf_free(&b->ccs);
	sh_buf_free(&b->tmp);
	sh_buf_free(&b->u16);
}
