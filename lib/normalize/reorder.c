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
 * Less work for ICU (sh_reorder_emit()): in a sorted run after a starter L
 * (ccc 0), a mark C is blocked from L (UAX #15, D115) exactly when a mark
 * still there between them has C's class, since no class between exceeds
 * C's. So in each block of marks of one class only a leading stretch can
 * compose with L, and once one mark of the block stays, every later one of
 * the block stays where it is and changes no decision for the others (a
 * later mark of a higher class is not blocked by a lower one; a starter
 * after the run is blocked by the mark that stays). Where L and the run form
 * a normalization unit of their own (boundaries before L and after the run),
 * ICU gets L with the first SH_REORDER_KEEP marks of each block only, and
 * the rest of a block is put back after the block's last mark in ICU's
 * output. That a mark of each cut block is in the output, after L's
 * composite and in class order, is checked; otherwise ICU gets the whole
 * unit. tests/normalize/test_reorder.c compares the normalizer's output with
 * ICU's on the untouched text, long blocks included.
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
#include "marks512.h"

/* Runs up to this many characters are left to ICU: n^2 / 2 moves for n = 32
 * cost less than the decomposition would. */
#define SH_REORDER_RUN 32

/* Longest full decomposition under NFKC_Casefold (U+FDFA: 18 characters), with
 * room to spare. */
#define SH_DECOMP_MAX 32

/* The marks of a block ICU sees in a unit of sh_reorder_emit(): more than
 * the marks that compose with one starter (a primary composite decomposes
 * to at most four characters), so that one of the block stays. */
#define SH_REORDER_KEEP 8

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
	if (len <= SH_REORDER_DEC) {
		e->cached = 1;
		e->dec_len = (uint8_t)len;
	}
	while (j < len) {
		UChar32 x;
		int32_t at = j;
		U16_NEXT(dec, j, len, x);
		for (; at < j && len <= SH_REORDER_DEC; at++) {
			e->dec[at] = dec[at];
			e->dec_cc[at] = u_getCombiningClass(x);
		}
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

/* The units d[i] of d[0..n) with cc[i] == c, in order, to out[0 ..); how
 * many. Branch-free; out has 32 units of slack past n (the vector twin
 * stores 32 at a time). */
static size_t filter(const UChar *d, const uint8_t *cc, size_t n, uint8_t c, UChar *out)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		out[at] = d[i];
		at += cc[i] == c;
	}
	return at;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
/* filter() 64 units at a time: the classes compared, the units of the class
 * compressed together (AVX-512 VBMI2). */
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt"))) static size_t
filter_vbmi2(const UChar *d, const uint8_t *cc, size_t n, uint8_t c, UChar *out)
{
	const __m512i cv = _mm512_set1_epi8((char)c);
	size_t i = 0, at = 0;

	for (; i + 64 <= n; i += 64) {
		__mmask64 k = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(cc + i), cv);
		__m512i lo = _mm512_loadu_si512(d + i), hi = _mm512_loadu_si512(d + i + 32);
		_mm512_storeu_si512(out + at, _mm512_maskz_compress_epi16((__mmask32)k, lo));
		at += (size_t)__builtin_popcount((uint32_t)k);
		_mm512_storeu_si512(out + at, _mm512_maskz_compress_epi16((__mmask32)(k >> 32), hi));
		at += (size_t)__builtin_popcount((uint32_t)(k >> 32));
	}
	return at + filter(d + i, cc + i, n - i, c, out + at);
}

int sh_reorder_have_vbmi2(void)
{
	return sh_cpu_has(SH_CPU_AVX512F | SH_CPU_AVX512BW | SH_CPU_AVX512VBMI2 | SH_CPU_POPCNT);
}
#else
static size_t filter_vbmi2(const UChar *d, const uint8_t *cc, size_t n, uint8_t c, UChar *out)
{
	return filter(d, cc, n, c, out);
}

int sh_reorder_have_vbmi2(void)
{
	return 0;
}
#endif

/* Sorts the UTF-16 units d[0..n) by their class cc[] (stable), through
 * tmp[0..n + 32) (slack for filter()), and the classes with them. The units of one code point share
 * its class, so they stay together and in order. An adversarial run has few
 * classes, each counted millions of times: four tables of counts, and for
 * up to four classes a branch-free pass per class instead of the scatter
 * (whose next store waits on the count it just raised). */
static void sort_run(UChar *d, uint8_t *cc, UChar *tmp, size_t n, int simd)
{
	size_t count[257] = {0}, part[4][256] = {{0}}, i = 0, at = 0;
	int n_classes = 0, classes[4];

	for (; i + 4 <= n; i += 4) {
		part[0][cc[i]]++;
		part[1][cc[i + 1]]++;
		part[2][cc[i + 2]]++;
		part[3][cc[i + 3]]++;
	}
	for (; i < n; i++)
		part[0][cc[i]]++;
	for (int c = 0; c < 256; c++) {
		count[c + 1] = count[c] + part[0][c] + part[1][c] + part[2][c] + part[3][c];
		if (count[c + 1] > count[c] && n_classes++ < 4)
			classes[n_classes - 1] = c;
	}
	if (n_classes <= 4) {
		for (int k = 0; k < n_classes; k++) {
			uint8_t c = (uint8_t)classes[k];
			at += simd ? filter_vbmi2(d, cc, n, c, tmp + at) : filter(d, cc, n, c, tmp + at);
			count[c] = at;
		}
	} else {
		for (i = 0; i < n; i++)
			tmp[count[cc[i]]++] = d[i];
	}
	memcpy(d, tmp, n * sizeof *d);
	/* count[c] now ends class c's units */
	for (int c = 0; c < 256; c++) {
		size_t start = c ? count[c - 1] : 0;
		memset(cc + start, c, count[c] - start);
	}
}

/* The end of the run of non-starters from i: the first unit of cc[i..n)
 * of class 0, or n (memchr() looks at many bytes a step). */
static inline size_t run_end(const uint8_t *cc, size_t i, size_t n)
{
	const uint8_t *z = i < n ? memchr(cc + i, 0, n - i) : NULL;

	return z ? (size_t)(z - cc) : n;
}

/* The end of the block of class c from f: the first unit of cc[f..j) of
 * another class, or j; eight classes a step. */
static inline size_t block_end(const uint8_t *cc, size_t f, size_t j, uint8_t c)
{
	const uint64_t all = 0x0101010101010101ull * c;

	for (;;) {
		uint64_t w;
		if (f + 8 > j)
			break;
		memcpy(&w, cc + f, 8);
		if (w != all)
			break;
		f += 8;
	}
	while (f < j && cc[f] == c)
		f++;
	return f;
}

/* Makes room for n UTF-16 units and their classes, keeping the first
 * `used`. */
static simhash_err room(sh_reorder_bufs *b, size_t n, size_t used)
{
	if (sh_buf_reserve_big(&b->u16, n * sizeof(UChar), used * sizeof(UChar)) ||
	    sh_buf_reserve_big(&b->ccs, n, used))
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

/* The common case of decompose(): BMP characters of the cache that decompose
 * to themselves or have their decomposition cached, copied with their
 * classes while they last and there is room; the output's state in
 * registers. Returns the units written in all. */
static inline size_t plain(sh_reorder_bufs *b, const UChar *u, int32_t *pk, int32_t m, size_t n)
{
	const sh_reorder_entry *cache = b->cache;
	UChar *d = b->u16.p;
	uint8_t *cc = b->ccs.p;
	size_t cap = b->u16.cap / sizeof(UChar) < b->ccs.cap ? b->u16.cap / sizeof(UChar) : b->ccs.cap;
	size_t fit = (cap - n) / SH_REORDER_DEC; /* characters surely room for */
	int32_t k = *pk, end = (size_t)(m - k) < fit ? m : k + (int32_t)fit;

	/* blocks of sixteen by the vector twin while it takes them, then here */
	if (b->simd512)
		n = sh_marks_plain512(cache, u, &k, end, d, cc, n);
	for (; k < end; k++) {
		UChar c = u[k];
		const sh_reorder_entry *e = &cache[c & (SH_REORDER_CACHE - 1)];
		if (U16_IS_SURROGATE(c) || e->cp1 != c + 1)
			break;
		if (!e->decomposes) {
			d[n] = c;
			cc[n++] = e->ccc;
			continue;
		}
		if (!e->cached)
			break;
		for (int t = 0; t < e->dec_len; t++, n++) {
			d[n] = e->dec[t];
			cc[n] = e->dec_cc[t];
		}
	}
	*pk = k;
	return n;
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
		    room(b, n + SH_DECOMP_MAX + SH_REORDER_DEC * (size_t)(m - k), n))
			return SIMHASH_ENOMEM;
		n = plain(b, u, &k, m, n);
		if (k >= m)
			break;
		U16_NEXT(u, k, m, c);
		e = lookup(nf, b, c);
		if (!e->decomposes) {
			put(b->u16.p, b->ccs.p, &n, c, e->ccc);
			continue;
		}
		if (e->cached) {
			/* a short decomposition, from the cache */
			UChar *d = b->u16.p;
			uint8_t *cc = b->ccs.p;
			for (int t = 0; t < e->dec_len; t++, n++) {
				d[n] = e->dec[t];
				cc[n] = e->dec_cc[t];
			}
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
	uint8_t *cc = b->ccs.p;
	UChar *d = b->u16.p;

	if (err)
		return err;
	if (n > INT32_MAX)
		return SIMHASH_EINVAL;
	while (i < n) {
		size_t j = i;
		j = run_end(cc, i, n);
		/* a run of more than SH_REORDER_RUN characters: of that many units
		 * at least (a 4-byte mark is two units) */
		if (j - i > SH_REORDER_RUN) {
			UChar *tmp = b->spare && b->spare->cap >= (j - i + 32) * sizeof(UChar)
					     ? b->spare->p : NULL;
			if (!tmp && sh_buf_reserve_big(&b->tmp, (j - i + 32) * sizeof(UChar), 0))
				return SIMHASH_ENOMEM;
			sort_run(d + i, cc + i, tmp ? tmp : b->tmp.p, j - i, b->simd);
		}
		i = j + 1;
	}
	*out_m = (int32_t)n;
	return SIMHASH_OK;
}

/* ICU's NFKC_Casefold of u[0..m) into b->out, *len units. */
static simhash_err icu(const UNormalizer2 *nf, sh_reorder_bufs *b, const UChar *u, int32_t m,
		       int32_t *len)
{
	UErrorCode st = U_ZERO_ERROR;

	if (sh_buf_reserve_big(&b->out, (size_t)m * 3 * sizeof(UChar) + 64, 0))
		return SIMHASH_ENOMEM;
	*len = unorm2_normalize(nf, u, m, b->out.p, (int32_t)(b->out.cap / sizeof(UChar)), &st);
	if (st == U_BUFFER_OVERFLOW_ERROR) {
		st = U_ZERO_ERROR;
		if (sh_buf_reserve_big(&b->out, (size_t)*len * sizeof(UChar) + 64, 0))
			return SIMHASH_ENOMEM;
		*len = unorm2_normalize(nf, u, m, b->out.p, (int32_t)(b->out.cap / sizeof(UChar)),
					&st);
	}
	return U_FAILURE(st) ? SIMHASH_EDEP : SIMHASH_OK;
}

/* ICU's NFKC_Casefold of u[0..m), handed to sink. */
static simhash_err normalize(const UNormalizer2 *nf, sh_reorder_bufs *b, const UChar *u,
			     size_t m, sh_reorder_sink sink, void *arg)
{
	int32_t len;
	simhash_err err;

	if (!m)
		return SIMHASH_OK;
	err = icu(nf, b, u, (int32_t)m, &len);
	return err ? err : sink(arg, b->out.p, len);
}

/* A block of a cut run: its class and the units [from, to) of b->u16 that
 * ICU did not get. */
struct cut {
	uint32_t from, to;
	uint8_t ccc;
};

/* Copies the starter d[ls..i) and the sorted run d[i..j) into b->cut, each
 * block of one class cut to SH_REORDER_KEEP code points; the rest of each
 * cut block goes to cuts[]. Returns the units written, or -1 (no memory). */
static int32_t cut_run(sh_reorder_bufs *b, size_t ls, size_t i, size_t j, struct cut *cuts,
		       int *n_cuts)
{
	const UChar *d = b->u16.p;
	const uint8_t *cc = b->ccs.p;
	UChar *r;
	size_t k = 0;

	if (sh_buf_reserve(&b->cut, (i - ls + 256 * 2 * SH_REORDER_KEEP) * sizeof(UChar)))
		return -1;
	r = b->cut.p;
	for (size_t x = ls; x < i; x++)
		r[k++] = d[x];
	*n_cuts = 0;
	while (i < j) {
		uint8_t c = cc[i];
		size_t e = i, f;
		/* the first SH_REORDER_KEEP code points of the block (a pair's
		 * units share their class) */
		for (int kept = 0; e < j && cc[e] == c && kept < SH_REORDER_KEEP; kept++) {
			r[k++] = d[e++];
			if (U16_IS_LEAD(d[e - 1]) && e < j && U16_IS_TRAIL(d[e]))
				r[k++] = d[e++];
		}
		f = block_end(cc, e, j, c);
		if (f > e)
			cuts[(*n_cuts)++] = (struct cut){ (uint32_t)e, (uint32_t)f, c };
		i = f;
	}
	return (int32_t)k;
}

/* Where each cut block's rest goes in ICU's output o[0..len) of the cut
 * unit (with a starter first if `starter`): at[c] past the last mark of
 * class c. 0 if the output is not the starter's composite and then marks in
 * class order, or a cut block has no mark left in it. */
static int place(const UChar *o, int32_t len, int starter, const struct cut *cuts, int n_cuts,
		 int32_t at[256])
{
	int32_t q = 0;
	int prev = 1;
	UChar32 x;

	for (int c = 0; c < 256; c++)
		at[c] = -1;
	if (starter && q < len) {
		U16_NEXT(o, q, len, x);
		if (u_getCombiningClass(x) != 0)
			return 0;
	}
	while (q < len) {
		int c;
		U16_NEXT(o, q, len, x);
		c = u_getCombiningClass(x);
		if (c < prev)
			return 0; /* a starter, or out of class order */
		prev = c;
		at[c] = q;
	}
	for (int k = 0; k < n_cuts; k++)
		if (at[cuts[k].ccc] < 0)
			return 0;
	return 1;
}

/* The normalization unit of the starter d[ls..i) (none if ls == i) and the
 * sorted run d[i..j), handed to sink: ICU's output of the cut unit with each
 * cut block's rest put back, or if place() finds it otherwise, ICU's output
 * of the whole unit. */
static simhash_err unit(const UNormalizer2 *nf, sh_reorder_bufs *b, size_t ls, size_t i,
			size_t j, sh_reorder_sink sink, void *arg)
{
	const UChar *d = b->u16.p;
	struct cut cuts[256];
	int32_t at[256], len, from = 0, k;
	int n_cuts;
	simhash_err err;

	k = cut_run(b, ls, i, j, cuts, &n_cuts);
	if (k < 0)
		return SIMHASH_ENOMEM;
	if (!n_cuts)
		return normalize(nf, b, d + ls, j - ls, sink, arg);
	err = icu(nf, b, b->cut.p, k, &len);
	if (err)
		return err;
	if (!place(b->out.p, len, ls < i, cuts, n_cuts, at))
		return normalize(nf, b, d + ls, j - ls, sink, arg);
	for (int c = 0; c < n_cuts && !err; c++) {
		const UChar *o = b->out.p;
		int32_t to = at[cuts[c].ccc];
		err = sink(arg, o + from, to - from);
		if (!err)
			err = sink(arg, d + cuts[c].from, (int32_t)(cuts[c].to - cuts[c].from));
		from = to;
	}
	return err ? err : sink(arg, (const UChar *)b->out.p + from, len - from);
}

/* Whether d[ls..j) of d[0..n) is a normalization unit of its own: a
 * boundary before it (or the segment's start) and after it (or the end). */
static int alone(const UNormalizer2 *nf, const UChar *d, size_t n, size_t ls, size_t j)
{
	UChar32 c;

	if (ls > 0) {
		U16_GET(d, 0, ls, n, c);
		if (!unorm2_hasBoundaryBefore(nf, c))
			return 0;
	}
	if (j < n) {
		U16_GET(d, 0, j, n, c);
		if (!unorm2_hasBoundaryBefore(nf, c))
			return 0;
	}
	return 1;
}

simhash_err sh_reorder_emit(const UNormalizer2 *nf, const UChar *u, int32_t m,
			    sh_reorder_bufs *b, sh_reorder_sink sink, void *arg)
{
	int32_t n32;
	simhash_err err = sh_reorder(nf, u, m, b, &n32);
	size_t n, pos = 0, i = 0;
	const UChar *d = b->u16.p;
	const uint8_t *cc = b->ccs.p;

	if (err)
		return err;
	n = (size_t)n32;
	while (i < n) {
		size_t j = i, ls;
		j = run_end(cc, i, n);
		/* the starter before the run, one or two units */
		ls = i == 0 ? 0 : i >= 2 && U16_IS_TRAIL(d[i - 1]) && U16_IS_LEAD(d[i - 2]) ? i - 2 : i - 1;
		if (j - i > SH_REORDER_RUN && ls >= pos && alone(nf, d, n, ls, j)) {
			err = normalize(nf, b, d + pos, ls - pos, sink, arg);
			if (!err)
				err = unit(nf, b, ls, i, j, sink, arg);
			if (err)
				return err;
			pos = j;
		}
		i = j + 1;
	}
	return normalize(nf, b, d + pos, n - pos, sink, arg);
}

void sh_reorder_free(sh_reorder_bufs *b)
{
	sh_buf_free(&b->out);
	sh_buf_free(&b->cut);
	sh_buf_free(&b->ccs);
	sh_buf_free(&b->tmp);
	sh_buf_free(&b->u16);
}
