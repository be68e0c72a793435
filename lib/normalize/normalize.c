/* normalize.c - UTF-8 text -> normalized characters with classes.
 *
 * Steps, in order: optional HTML cleaning; UTF-8 decoding (each maximal invalid
 * subsequence becomes U+FFFD, or the text is rejected); Unicode NFKC_Casefold
 * (NFKC + full case folding, ICU's "nfkc_cf"); optional traditional ->
 * simplified Chinese folding per character; classification into word
 * characters, CJK characters (Han, Hiragana, Katakana: each a word of its own),
 * punctuation/symbols and spaces; space and punctuation handling; optional
 * cutting of long runs of one character.
 *
 * Workload: mostly-ASCII English at hundreds of MB/s, so ASCII bytes take a
 * table-driven path with no ICU call. A run of non-ASCII bytes goes through ICU
 * in one call, together with the ASCII character just before it, because a
 * combining mark composes with the character it follows (e + U+0301 -> é). No
 * character composes with the one before an ASCII byte, so ASCII bytes never
 * need ICU. Text that mixes ASCII with three-byte characters (Chinese, with
 * its punctuation, digits and Latin words) goes 64 bytes at a time through
 * mixed.c where the CPU allows. The output is identical to
 * normalizing the whole text at once. A segment with a long combining run
 * goes through reorder.c instead of one ICU call (linear time on any
 * input); the millions of marks such a text can hold take the block paths
 * of marks512.c (collected, decomposed) and plain.c (emitted).
 *
 * Invariants of the output (sh_text): no space at either end, never two
 * spaces in a row, off[] strictly increasing, off[n_chars] == len.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf16.h>
#include "../common/internal.h"
#include "ascii.h"
#include "mixed.h"
#include "plain.h"
#include "reorder.h"
#include "scan.h"

#define NORM_SLICE ((size_t)1 << 20)

struct sh_norm {
	simhash_config cfg;
	const UNormalizer2 *nfkc_cf; /* owned by ICU, not to be closed */
	sh_t2s *t2s;
	sh_buf html;  /* HTML-cleaned input */
	sh_buf u16in, u16out;
	sh_buf s, off, cls; /* the output arrays */
	sh_buf cps;   /* decoded code points, for the compat mode */
	sh_reorder_bufs reorder; /* a segment with long combining runs, reordered */
	uint32_t *bmp;     /* BMP code point -> SH_INERT | class << 24 | output */
	uint64_t bmp_built[4]; /* pages of 256 entries of bmp filled (bmp_get()) */
	uint16_t *han;     /* U+4E00..U+9FFF -> output of a plain Han character, or 0 */
	uint8_t amap[128]; /* ASCII byte -> output byte (' ' for a separator) */
	uint8_t pack[256][8]; /* sh_ascii_bulk(): mask -> shuffle packing its bytes */
	int simd;          /* sh_ascii_bulk() may run (ascii.c) */
	int simd512;       /* sh_ascii_bulk512() may run */
	int mixed;         /* sh_mixed_run512() may run: the CPU and the rules fit */
	int plain512;      /* sh_plain_run()'s blocks of sixteen may run */
	size_t slice;      /* bytes of a non-ASCII run handled at once */
	int no_reorder;    /* tests only: leave long combining runs to ICU */
	int no_mapped;     /* tests only: leave SH_LAZY characters to ICU */
	sh_intr *intr;     /* the ctx's interrupt hook, or NULL */
	uint8_t acls[128]; /* output byte -> class */
	/* state of one run */
	uint8_t *o;
	uint32_t *oo;
	uint8_t *oc;
	size_t len, n_chars;
	int pending_space;
	uint32_t last_cp;
	unsigned repeat;
	int32_t m;   /* UTF-16 units of a segment not yet normalized */
	int stream;  /* sh_norm_begin(): a segment may stay open across feeds */
	size_t fed;  /* bytes fed since sh_norm_begin() */
};

/* ASCII classes: letters and digits are word characters, the C0 controls and
 * whitespace are spaces, the rest punctuation. */
static const uint8_t ascii_class[128] = {
#define S SH_C_SPACE
#define P SH_C_PUNCT
#define W SH_C_WORD
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, /* 0x00 */
	S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, /* 0x10 */
	S, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, /* 0x20  !"#$%&'()*+,-./ */
	W, W, W, W, W, W, W, W, W, W, P, P, P, P, P, P, /* 0x30 0-9 :;<=>? */
	P, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, /* 0x40 @A-O */
	W, W, W, W, W, W, W, W, W, W, W, P, P, P, P, P, /* 0x50 P-Z [\]^_ */
	P, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, /* 0x60 `a-o */
	W, W, W, W, W, W, W, W, W, W, W, P, P, P, P, S, /* 0x70 p-z {|}~ DEL */
#undef S
#undef P
#undef W
};

static uint32_t fold_ascii(uint32_t c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static simhash_err alloc_bmp(sh_norm *n);

simhash_err sh_norm_new(const simhash_config *cfg, sh_norm **out)
{
	UErrorCode st = U_ZERO_ERROR;
	sh_norm *n = calloc(1, sizeof *n);
	simhash_err err;

	if (!n)
		return SIMHASH_ENOMEM;
	n->cfg = *cfg;
	for (int c = 0; c < 128; c++) {
		int cls = ascii_class[c];
		n->amap[c] = cls == SH_C_SPACE || (cls == SH_C_PUNCT && cfg->punct == SIMHASH_PUNCT_DROP)
				     ? ' '
				     : (uint8_t)(cfg->casefold ? fold_ascii((uint32_t)c) : (uint32_t)c);
		n->acls[c] = c == ' ' ? SH_C_SPACE : (uint8_t)cls;
	}
	for (int m = 0; m < 256; m++) {
		int k = 0;
		for (int b = 0; b < 8; b++)
			if (m >> b & 1)
				n->pack[m][k++] = (uint8_t)b;
		while (k < 8)
			n->pack[m][k++] = 0x80;
	}
	sh_norm_set_simd(n, 1);
	n->slice = NORM_SLICE;
	n->nfkc_cf = unorm2_getNFKCCasefoldInstance(&st);
	if (U_FAILURE(st)) {
		err = SIMHASH_EDEP;
		goto out_free;
	}
	if (cfg->t2s && cfg->compat == SIMHASH_COMPAT_NONE) {
		err = sh_t2s_new(&n->t2s);
		if (err)
			goto out_free;
	}
	if (cfg->compat == SIMHASH_COMPAT_NONE) {
		err = alloc_bmp(n);
		n->reorder.spare = &n->u16in;
		if (err)
			goto out_free;
	}
	*out = n;
	return SIMHASH_OK;
out_free:
	sh_norm_free(n);
	return err;
}

void sh_norm_free(sh_norm *n)
{
	if (!n)
		return;
	sh_t2s_free(n->t2s);
	free(n->bmp);
	free(n->han);
	sh_buf_free(&n->html);
	sh_buf_free(&n->u16in);
	sh_buf_free(&n->u16out);
	sh_buf_free(&n->s);
	sh_buf_free(&n->off);
	sh_buf_free(&n->cls);
	sh_buf_free(&n->cps);
	sh_reorder_free(&n->reorder);
	free(n);
}

/* The entries of n->bmp (SH_INERT, SH_LAZY, ...) are defined in mixed.h. */

/* The block of CJK Unified Ideographs, nearly every character of Chinese
 * text, has a second table of 2-byte entries: the output of a character whose
 * entry is inert, of class CJK and 3 bytes of UTF-8 out, else 0 (a page not
 * filled yet, or another entry: bmp_get() then). It holds what n->bmp holds
 * for them in half the cache lines (42 KB instead of 84 KB), where the
 * lookup of the Chinese loop waited on the cache. */
#define SH_HAN_FIRST 0x4E00u
#define SH_HAN_N (0xA000u - SH_HAN_FIRST)

/* n->bmp holds, for every BMP code point, its class and output (after t2s),
 * and whether it is inert; the class serves the characters ICU outputs too.
 * Filling all of it takes about 1 ms of ICU calls per context, most of a
 * short run's start-up, while a text touches few of its 256 pages (English
 * one or two, Chinese the CJK block): so a page is filled the first time one
 * of its entries is read (bmp_get()). A filled entry is never 0 (SH_KNOWN)
 * but for the surrogates, so 0 is "maybe not filled yet": one predictable
 * branch per lookup. The zeros are written up front (sh_zalloc_written()):
 * left to calloc(), each page filled later cost an interrupt to the other
 * CPU once two threads ran (64 per Chinese context; half a millisecond of
 * `fingerprint -j 2` on the 4,982 English files, a virtual machine), where
 * writing the 300 KB of zeros at once costs tens of microseconds. */
static simhash_err alloc_bmp(sh_norm *n)
{
	n->bmp = sh_zalloc_written(0x10000 * sizeof *n->bmp);
	n->han = sh_zalloc_written(SH_HAN_N * sizeof *n->han);
	return n->bmp && n->han ? SIMHASH_OK : SIMHASH_ENOMEM;
}

/* Fills page `page` of n->bmp (code points page * 256 and the 255 after). */
static void fill_bmp_page(sh_norm *n, uint32_t page)
{
	uint32_t *t = n->bmp;

	for (uint32_t c = page << 8; c < (page + 1) << 8; c++) {
		uint32_t inert;
		int cls;
		t[c] = 0;
		if (c >= 0xD800 && c <= 0xDFFF)
			continue;
		inert = !n->cfg.casefold || unorm2_isInert(n->nfkc_cf, (UChar32)c) ? SH_INERT : 0;
		if (!inert && unorm2_hasBoundaryBefore(n->nfkc_cf, (UChar32)c) &&
		    unorm2_hasBoundaryAfter(n->nfkc_cf, (UChar32)c))
			inert = SH_LAZY;
		cls = c < 0x80 ? ascii_class[c] : sh_norm_classify(c);
		if (cls < 0) {
			t[c] = SH_KNOWN | (inert & SH_INERT) | SH_DROP;
			continue;
		}
		t[c] = SH_KNOWN | inert | (uint32_t)cls << 24 |
		       (cls == SH_C_CJK && n->t2s ? sh_t2s_map(n->t2s, c) : c);
		if (c - SH_HAN_FIRST < SH_HAN_N && inert == SH_INERT && cls == SH_C_CJK) {
			uint32_t o = t[c] & 0x1FFFFF;
			if (o >= 0x800 && o < 0x10000 && (o < 0xD800 || o > 0xDFFF))
				n->han[c - SH_HAN_FIRST] = (uint16_t)o;
		}
	}
	n->bmp_built[page >> 6] |= 1ull << (page & 63);
}

/* The entry of n->bmp for c < 0x10000, its page filled first if need be. */
static inline uint32_t bmp_get(sh_norm *n, uint32_t c)
{
	uint32_t e = n->bmp[c];

	if (SH_UNLIKELY(e == 0) && !(n->bmp_built[c >> 14] >> (c >> 8 & 63) & 1)) {
		fill_bmp_page(n, c >> 8);
		e = n->bmp[c];
	}
	return e;
}


/* The entry of n->bmp for cp, a SH_LAZY character met in a text: ICU
 * normalizes it alone (the boundaries on both sides make that its mapping in
 * any context). A mapping to a single BMP character becomes an inert entry
 * with that character's class and output (as emit_u16() would give them);
 * any other (to several characters: 759 of the 2768 such characters of the
 * BMP in ICU 72) stays ICU's, in segments as before. The entry is stored, so
 * ICU is asked once per character and context. */
static uint32_t resolve(sh_norm *n, uint32_t cp)
{
	UErrorCode st = U_ZERO_ERROR;
	UChar src = (UChar)cp, dst[4];
	uint32_t e = n->bmp[cp] & ~SH_LAZY; /* filled: cp was looked up */
	int32_t k;

	if (n->no_mapped)
		return e;
	k = unorm2_normalize(n->nfkc_cf, &src, 1, dst, 4, &st);
	if (U_SUCCESS(st) && k == 1 && !U16_IS_SURROGATE(dst[0]) &&
	    (bmp_get(n, dst[0]) & SH_KNOWN))
		e = (n->bmp[dst[0]] & (SH_DROP | 3u << 24 | 0x1FFFFF)) | SH_KNOWN | SH_INERT;
	n->bmp[cp] = e;
	return e;
}

/* Appends one normalized character of class cls, applying the space,
 * punctuation and repeat rules. The output arrays have room (reserved by the
 * caller for the worst case). */
static void emit(sh_norm *n, uint32_t c, int cls)
{
	const simhash_config *cfg = &n->cfg;

	if (cls == SH_C_SPACE || (cls == SH_C_PUNCT && cfg->punct == SIMHASH_PUNCT_DROP)) {
		n->pending_space = 1;
		n->last_cp = 0;
		return;
	}
	if (cfg->max_repeat) {
		if (c == n->last_cp && !n->pending_space) {
			if (++n->repeat > cfg->max_repeat)
				return;
		} else {
			n->repeat = 1;
		}
	}
	n->last_cp = c;
	if (n->pending_space) {
		n->pending_space = 0;
		if (n->n_chars > 0) {
			int space = cfg->space == SIMHASH_SPACE_COLLAPSE ||
				    (cfg->space == SIMHASH_SPACE_AUTO && cls != SH_C_CJK &&
				     n->oc[n->n_chars - 1] != SH_C_CJK);
			if (space) {
				n->oo[n->n_chars] = (uint32_t)n->len;
				n->oc[n->n_chars++] = SH_C_SPACE;
				n->o[n->len++] = ' ';
			}
		}
	}
	n->oo[n->n_chars] = (uint32_t)n->len;
	n->oc[n->n_chars++] = (uint8_t)cls;
	if (c < 0x80)
		n->o[n->len++] = (uint8_t)c;
	else
		n->len += sh_utf8_put(n->o + n->len, c);
}

/* emit() of a table entry e of n->bmp. The common case of Chinese text, a
 * 3-byte CJK character with no space pending and no repeat rule, is written
 * here inline: emit() would do exactly this (nothing to decide for the space
 * and repeat rules), through a call per character. */
static inline void emit_inert(sh_norm *n, uint32_t e)
{
	uint32_t c = e & 0x1FFFFF;
	int cls = (int)(e >> 24 & 3);

	if (cls == SH_C_CJK && !n->pending_space && !n->cfg.max_repeat && c >= 0x800 &&
	    c < 0x10000 && (c < 0xD800 || c > 0xDFFF)) {
		uint8_t *o = n->o + n->len;
		n->last_cp = c;
		n->oo[n->n_chars] = (uint32_t)n->len;
		n->oc[n->n_chars++] = SH_C_CJK;
		o[0] = (uint8_t)(0xE0 | c >> 12);
		o[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
		o[2] = (uint8_t)(0x80 | (c & 0x3F));
		n->len += 3;
		return;
	}
	emit(n, c, cls);
}

/* Makes room for `chars` more characters and `bytes` more bytes of output.
 * Offsets are 32-bit: a normalized text is limited to 4 GiB. */
static inline simhash_err room(sh_norm *n, size_t chars, size_t bytes)
{
	int fail;

	if (SH_LIKELY(n->len + bytes <= n->s.cap &&
		      (n->n_chars + chars + 1) * sizeof(uint32_t) <= n->off.cap &&
		      n->n_chars + chars + 1 <= n->cls.cap && n->len + bytes < UINT32_MAX))
		return SIMHASH_OK;
	if (bytes > UINT32_MAX - 1 - n->len)
		return SIMHASH_EINVAL;
	fail = sh_buf_reserve_big(&n->s, n->len + bytes, n->len) ||
	       sh_buf_reserve_big(&n->off, (n->n_chars + chars + 1) * sizeof(uint32_t),
				  n->n_chars * sizeof(uint32_t)) ||
	       sh_buf_reserve_big(&n->cls, n->n_chars + chars + 1, n->n_chars);
	/* a buffer may have moved even when a later one failed */
	n->o = n->s.p;
	n->oo = n->off.p;
	n->oc = n->cls.p;
	return fail ? SIMHASH_ENOMEM : SIMHASH_OK;
}

/* emit() of c of class cls; the common case of a word or CJK character
 * with no space pending and no repeat rule written here, as emit() would
 * (nothing to decide for the space and repeat rules), without a call. */
static inline void emit_char(sh_norm *n, uint32_t c, int cls)
{
	if ((cls == SH_C_WORD || cls == SH_C_CJK) && !n->pending_space && !n->cfg.max_repeat) {
		n->last_cp = c;
		n->oo[n->n_chars] = (uint32_t)n->len;
		n->oc[n->n_chars++] = (uint8_t)cls;
		if (c < 0x80)
			n->o[n->len++] = (uint8_t)c;
		else if (c < 0x800) {
			n->o[n->len] = (uint8_t)(0xC0 | c >> 6);
			n->o[n->len + 1] = (uint8_t)(0x80 | (c & 0x3F));
			n->len += 2;
		} else {
			n->len += sh_utf8_put(n->o + n->len, c);
		}
		return;
	}
	emit(n, c, cls);
}

/* The common case of emit_units(), plain characters (plain.c), with no
 * space pending and no repeat rule (the caller's test), the output's state
 * handed over and back. Returns where it stopped. */
static int32_t emit_plain(sh_norm *n, const UChar *src, int32_t k, int32_t len)
{
	sh_plain_out p = { n->o, n->oo, n->oc, n->bmp, n->len, n->n_chars, n->last_cp };

	k = (int32_t)sh_plain_run(&p, src, (size_t)k, (size_t)len, n->plain512);
	n->len = p.len;
	n->n_chars = p.n_chars;
	n->last_cp = p.last;
	return k;
}

/* Emits the normalized UTF-16 units src[0..len) (the sink of
 * sh_reorder_emit()). */
static simhash_err emit_units(void *arg, const UChar *src, int32_t len)
{
	sh_norm *n = arg;
	int32_t k = 0;
	/* Each unit gives at most one character and a space before it. */
	simhash_err err = room(n, 2 * (size_t)len, 4 * (size_t)len);

	if (err)
		return err;
	while (k < len) {
		UChar32 c;
		int cls;
		if (n->bmp && !n->pending_space && !n->cfg.max_repeat) {
			k = emit_plain(n, src, k, len);
			if (k >= len)
				break;
		}
		U16_NEXT(src, k, len, c);
		if (c < 0x10000 && n->bmp && (bmp_get(n, (uint32_t)c) & SH_KNOWN)) {
			uint32_t e = n->bmp[c];
			if (!(e & SH_DROP))
				emit_char(n, e & 0x1FFFFF, (int)(e >> 24 & 3));
			continue;
		}
		if (c < 0x80) {
			emit(n, n->cfg.casefold ? fold_ascii((uint32_t)c) : (uint32_t)c,
			     ascii_class[c]);
			continue;
		}
		cls = sh_norm_classify((uint32_t)c);
		if (cls < 0)
			continue;
		if (cls == SH_C_CJK && n->t2s)
			c = (UChar32)sh_t2s_map(n->t2s, (uint32_t)c);
		emit(n, (uint32_t)c, cls);
	}
	return SIMHASH_OK;
}

/* Normalizes the UTF-16 units u[0..m) and emits the characters. */
static simhash_err emit_u16(sh_norm *n, const UChar *u, int32_t m)
{
	UErrorCode st = U_ZERO_ERROR;
	int32_t len;

	if (!n->cfg.casefold)
		return emit_units(n, u, m);
	/* Long combining runs would cost ICU quadratic time (reorder.c). */
	if (m > 32 && !n->no_reorder && sh_reorder_needed(n->nfkc_cf, &n->reorder, u, m)) {
		/* room for about what the segment gives at once, rather than
		 * growing (and copying) as its pieces come: untouched room costs
		 * no memory (sh_buf_reserve_big()); a segment near the 4 GiB
		 * limit of a text only as its pieces need */
		simhash_err err = (size_t)m < UINT32_MAX / 16 ? room(n, 3 * (size_t)m, 6 * (size_t)m)
							      : SIMHASH_OK;
		return err ? err : sh_reorder_emit(n->nfkc_cf, u, m, &n->reorder, emit_units, n);
	}
	if (sh_buf_reserve_big(&n->u16out, (size_t)m * 3 * sizeof(UChar) + 64, 0))
		return SIMHASH_ENOMEM;
	len = unorm2_normalize(n->nfkc_cf, u, m, n->u16out.p,
			       (int32_t)(n->u16out.cap / sizeof(UChar)), &st);
	if (st == U_BUFFER_OVERFLOW_ERROR) {
		st = U_ZERO_ERROR;
		if (sh_buf_reserve_big(&n->u16out, (size_t)len * sizeof(UChar) + 64, 0))
			return SIMHASH_ENOMEM;
		len = unorm2_normalize(n->nfkc_cf, u, m, n->u16out.p,
				       (int32_t)(n->u16out.cap / sizeof(UChar)), &st);
	}
	if (U_FAILURE(st))
		return SIMHASH_EDEP;
	return emit_units(n, n->u16out.p, len);
}

/* The common case, a run of ASCII bytes: each maps through a table to one
 * output byte (folded letter, digit, kept punctuation, or space), and a space
 * is kept only after a non-space, without a branch per byte. It gives what
 * emit() would: a space is written eagerly and taken back at the end of the
 * run if nothing followed it (it becomes pending_space again). */
static void ascii_run(sh_norm *n, const uint8_t *in, size_t i, size_t stop)
{
	uint8_t *o = n->o;
	uint32_t *oo = n->oo;
	uint8_t *oc = n->oc;
	size_t len = n->len, nc = n->n_chars;
	const size_t keep_spaces = n->cfg.space != SIMHASH_SPACE_DROP;
	uint8_t prev = 'x';
	int last_cjk = nc > 0 && oc[nc - 1] == SH_C_CJK;

	if (nc == 0 || (n->cfg.space == SIMHASH_SPACE_AUTO && last_cjk))
		prev = ' ';
	else if (n->pending_space)
		prev = keep_spaces ? 'x' : ' ';
	if (n->pending_space && prev != ' ') {
		o[len] = ' ';
		oo[nc] = (uint32_t)len++;
		oc[nc++] = SH_C_SPACE;
		prev = ' ';
	}
	if ((n->simd512 && stop - i >= 64) || (n->simd && stop - i >= 32)) {
		const sh_ascii_out a = { o, oo, oc, (const uint8_t (*)[8])n->pack,
					 n->cfg.punct == SIMHASH_PUNCT_DROP, n->cfg.casefold,
					 n->cfg.space != SIMHASH_SPACE_DROP };
		if (n->simd512 && stop - i >= 64)
			i = sh_ascii_bulk512(&a, in, i, stop, &len, &nc, &prev);
		if (n->simd && stop - i >= 32)
			i = sh_ascii_bulk(&a, in, i, stop, &len, &nc, &prev);
	}
	for (; i < stop; i++) {
		uint8_t c = n->amap[in[i]];
		size_t keep = (c != ' ') | (keep_spaces & (prev != ' '));
		o[len] = c;
		oo[nc] = (uint32_t)len;
		oc[nc] = n->acls[c];
		len += keep;
		nc += keep;
		prev = c;
	}
	n->pending_space = prev == ' ';
	if (nc > 0 && oc[nc - 1] == SH_C_SPACE) {
		len--;
		nc--;
	}
	n->len = len;
	n->n_chars = nc;
	n->last_cp = prev;
}

/* The common case of Chinese text: a run of plain Han characters (3 bytes
 * each, an entry in n->han), no segment open, no space pending and no repeat
 * rule. Each is emitted as emit_inert() would, with the output's state in
 * registers instead of the normalizer's fields. Returns where the run ends
 * (at stop at most); the caller has made room for it. */
static size_t han_run(sh_norm *n, const uint8_t *in, size_t i, size_t stop)
{
	const uint16_t *han = n->han;
	uint8_t *o = n->o, *oc = n->oc;
	uint32_t *oo = n->oo, last = n->last_cp;
	size_t len = n->len, nc = n->n_chars;

	while (i + 3 <= stop) {
		uint32_t b0 = in[i], b1 = in[i + 1], b2 = in[i + 2], cp, c;
		if ((b0 & 0xF0) != 0xE0 || (b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80)
			break;
		cp = (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F);
		if (cp - SH_HAN_FIRST >= SH_HAN_N || !(c = han[cp - SH_HAN_FIRST]))
			break;
		o[len] = (uint8_t)(0xE0 | c >> 12);
		o[len + 1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
		o[len + 2] = (uint8_t)(0x80 | (c & 0x3F));
		oo[nc] = (uint32_t)len;
		oc[nc++] = SH_C_CJK;
		len += 3;
		last = c;
		i += 3;
	}
	n->len = len;
	n->n_chars = nc;
	n->last_cp = last;
	return i;
}

/* Normalizes and emits the UTF-16 segment collected so far, if any. */
static simhash_err flush(sh_norm *n, int32_t *m)
{
	simhash_err err = SIMHASH_OK;
	if (*m) {
		err = emit_u16(n, n->u16in.p, *m);
		*m = 0;
	}
	return err;
}

/* Handles in[i..j): an optional ASCII character followed by a run of
 * non-ASCII bytes. A BMP character that is normalization-inert (unchanged by
 * NFKC_Casefold, and never combining with a neighbour) is emitted straight
 * from the table; the others are collected into segments that ICU normalizes,
 * and an inert character ends a segment, since nothing composes across it.
 * The run goes in slices of n->slice bytes (1 MiB), so buffers stay bounded,
 * a run of any length works and no ICU call takes more than a slice (an
 * interrupt waits for no more); a segment still open at the end of a slice
 * is normalized there if the next character starts a new normalization unit
 * (ICU's hasBoundaryBefore), else it goes on into the next slice. */
static simhash_err non_ascii_run(sh_norm *n, const uint8_t *in, size_t len, size_t *pi)
{
	size_t i = *pi, j, end;
	UChar *u;
	int32_t m = n->m;
	simhash_err err;
	size_t step = sh_intr_step(n->intr), reported = i;

	j = non_ascii_end(in, i, len);
	while (i < j) {
		end = slice_end(in, i, j, n->slice);
		/* UTF-16 needs at most one unit per input byte. */
		if ((size_t)m + (end - i) > INT32_MAX / 4)
			return SIMHASH_EINVAL; /* one segment that never ends: pathological */
		if (sh_buf_reserve_big(&n->u16in, ((size_t)m + end - i + 1) * sizeof(UChar),
				       (size_t)m * sizeof(UChar)))
			return SIMHASH_ENOMEM;
		/* An input byte gives at most one character and a space before it, and
		 * at most 4 output bytes: an invalid byte becomes U+FFFD (3 bytes). */
		err = room(n, 2 * (end - i), 4 * (end - i));
		if (err)
			return err;
		u = n->u16in.p;
		while (i < end) {
			/* a step of the slice at a time: one poll each, none per character */
			size_t stop = end - i > step ? i + step : end;

			if (i != reported) {
				/* the run state is dropped: the next run starts afresh */
				if (sh_intr_poll(n->intr, i - reported))
					return SIMHASH_EINTR;
				reported = i;
			}
			while (i < stop) {
				uint32_t cp, e;
				if (!m && !n->pending_space && !n->cfg.max_repeat) {
					i = han_run(n, in, i, stop);
					if (i >= stop)
						break;
				}
				if (m && n->bmp) {
					i = marks_run(n->bmp, in, i, stop, u, &m, n->simd512);
					if (i >= stop)
						break;
				}
				i += decode(in, j, i, &cp);
				if (cp - SH_HAN_FIRST < SH_HAN_N && n->han[cp - SH_HAN_FIRST])
					e = SH_KNOWN | SH_INERT | (uint32_t)SH_C_CJK << 24 |
					    n->han[cp - SH_HAN_FIRST];
				else
					e = cp < 0x10000 ? bmp_get(n, cp) : 0;
				if (SH_UNLIKELY(e & SH_LAZY))
					e = resolve(n, cp);
				if (e & SH_INERT) {
					if (m) {
						/* The segment may have expanded (U+FDFA is 18
						 * characters): make room for the rest again. */
						err = flush(n, &m);
						if (!err)
							err = room(n, 2 * (end - i) + 2, 4 * (end - i) + 2);
						if (err)
							return err;
					}
					if (!(e & SH_DROP))
						emit_inert(n, e);
					continue;
				}
				if (cp >= 0x10000) {
					u[m++] = U16_LEAD(cp);
					u[m++] = U16_TRAIL(cp);
				} else {
					u[m++] = (UChar)cp;
				}
			}
		}
		if (m && i < j) {
			uint32_t next;

			(void)decode(in, j, i, &next);
			if (!n->cfg.casefold || unorm2_hasBoundaryBefore(n->nfkc_cf, (UChar32)next)) {
				err = flush(n, &m);
				if (err)
					return err;
			}
		}
	}
	/* every byte counts, however short the runs */
	if (sh_intr_poll(n->intr, j - reported))
		return SIMHASH_EINTR;
	*pi = j;
	/* A run that reaches the end of a fed piece may go on in the next one:
	 * its open segment waits there (sh_norm_feed, sh_norm_end). */
	n->m = m;
	if (n->stream && j == len)
		return SIMHASH_OK;
	return flush(n, &n->m);
}

void sh_norm_set_intr(sh_norm *n, sh_intr *intr)
{
	n->intr = intr;
}

void sh_norm_set_slice(sh_norm *n, size_t bytes)
{
	n->slice = bytes ? bytes : NORM_SLICE;
}

void sh_norm_set_reorder(sh_norm *n, int on)
{
	n->no_reorder = !on;
}

void sh_norm_set_mapped(sh_norm *n, int on)
{
	n->no_mapped = !on;
}

/* Resets the state of one run: the output is empty. */
static simhash_err start(sh_norm *n, int stream)
{
	n->len = n->n_chars = 0;
	n->pending_space = 0;
	n->last_cp = 0;
	n->repeat = 0;
	n->m = 0;
	n->stream = stream;
	n->fed = 0;
	return room(n, 1, 1);
}

/* sh_mixed_run512() from *pi to at most to, with room for what it writes. */
static simhash_err mixed_run(sh_norm *n, const uint8_t *in, size_t *pi, size_t to)
{
	size_t i = *pi;
	/* a byte gives at most a byte and a character, and a pending space one
	 * more; + 64: the slack of the vector stores */
	simhash_err err = room(n, to - i + 65, to - i + 65);
	sh_mixed_out m = { n->o, n->oo, n->oc, n->bmp, n->amap };

	if (err)
		return err;
	*pi = sh_mixed_run512(&m, in, i, to, &n->len, &n->n_chars, &n->pending_space);
	return sh_intr_poll(n->intr, *pi - i) ? SIMHASH_EINTR : SIMHASH_OK;
}

/* Normalizes in[0..len) after what the run has had so far. */
static simhash_err run(sh_norm *n, const uint8_t *in, size_t len)
{
	simhash_err err = SIMHASH_OK;
	size_t i = 0;

	while (!err && i < len) {
		/* A block of ASCII bytes, each giving at most two characters (a
		 * space and itself), up to the byte before a non-ASCII one: that
		 * byte goes with the non-ASCII run, since a combining mark may
		 * compose with it. */
		size_t end = len - i > 65536 ? i + 65536 : len;
		size_t stop = sh_utf8_ascii_end(in, i, end);
		if (stop < len && stop > i)
			stop--;
		if (n->mixed && !n->m && stop < len && stop - i < 64) {
			/* a few ASCII bytes at most before non-ASCII ones */
			size_t to = len - i > sh_intr_step(n->intr) ? i + sh_intr_step(n->intr) : len;
			size_t from = i;
			err = mixed_run(n, in, &i, to);
			if (err || i > from)
				continue; /* the bytes before i are done: look again */
		}
		/* + 16: slack for the eight-byte stores of sh_ascii_bulk() */
		err = room(n, 2 * (stop - i) + 16, 2 * (stop - i) + 16);
		if (err)
			break;
		if (stop > i) {
			if (sh_intr_poll(n->intr, stop - i))
				return SIMHASH_EINTR;
			if (n->cfg.max_repeat) {
				for (; i < stop; i++)
					emit(n, n->amap[in[i]], n->acls[n->amap[in[i]]]);
			} else {
				ascii_run(n, in, i, stop);
				i = stop;
			}
			continue;
		}
		err = non_ascii_run(n, in, len, &i);
	}
	return err;
}

static void view(sh_norm *n, sh_text *out)
{
	n->oo[n->n_chars] = (uint32_t)n->len;
	out->s = n->o;
	out->len = n->len;
	out->off = n->oo;
	out->cls = n->oc;
	out->n_chars = n->n_chars;
}

simhash_err sh_norm_run(sh_norm *n, const uint8_t *in, size_t len, sh_text *out,
			size_t *bad_offset)
{
	simhash_err err;

	if (n->cfg.utf8 == SIMHASH_UTF8_REJECT) {
		size_t bad = sh_utf8_validate(in, len);
		if (bad < len) {
			*bad_offset = bad;
			return SIMHASH_EUTF8;
		}
	}
	if (n->cfg.html) {
		size_t hlen;
		err = sh_html_strip(&n->html, in, len, &hlen, n->intr);
		if (err)
			return err;
		in = n->html.p;
		len = hlen;
	}
	err = start(n, 0);
	if (!err)
		err = run(n, in, len);
	if (err)
		return err;
	view(n, out);
	return SIMHASH_OK;
}

/* ---- streaming: the same output, fed in pieces and taken in windows */

size_t sh_norm_cut(const uint8_t *in, size_t len)
{
	for (size_t p = len; p-- > 1;) {
		uint8_t a = in[p - 1], b = in[p];
		if (b < 0x80 || (a >= 0x80 && b >= 0xC0))
			return p; /* an ASCII byte; a lead byte inside a run */
		/* A continuation byte after three others: the sequence before
		 * it (at most four bytes) has ended. */
		if (a >= 0x80 && b < 0xC0 && p >= 3 && (a & 0xC0) == 0x80 &&
		    (in[p - 2] & 0xC0) == 0x80 && (in[p - 3] & 0xC0) == 0x80)
			return p;
	}
	return 0;
}

simhash_err sh_norm_begin(sh_norm *n)
{
	return n->cfg.html ? SIMHASH_EINVAL : start(n, 1);
}

simhash_err sh_norm_feed(sh_norm *n, const uint8_t *in, size_t len, size_t *bad_offset)
{
	simhash_err err;

	assert(n->stream);
	if (n->cfg.utf8 == SIMHASH_UTF8_REJECT) {
		size_t bad = sh_utf8_validate(in, len);
		if (bad < len) {
			*bad_offset = n->fed + bad;
			return SIMHASH_EUTF8;
		}
	}
	/* an ASCII byte ends the run the last piece ended in */
	if (n->m && len && in[0] < 0x80) {
		err = flush(n, &n->m);
		if (err)
			return err;
	}
	n->fed += len;
	return run(n, in, len);
}

void sh_norm_view(sh_norm *n, sh_text *out)
{
	view(n, out);
}

simhash_err sh_norm_end(sh_norm *n, sh_text *out)
{
	simhash_err err = flush(n, &n->m);

	if (err)
		return err;
	view(n, out);
	return SIMHASH_OK;
}

void sh_norm_consume(sh_norm *n, size_t k)
{
	size_t b;

	assert(k < n->n_chars);
	if (k == 0)
		return;
	b = n->oo[k];
	memmove(n->o, n->o + b, n->len - b);
	for (size_t i = k; i < n->n_chars; i++)
		n->oo[i - k] = n->oo[i] - (uint32_t)b;
	memmove(n->oc, n->oc + k, n->n_chars - k);
	n->n_chars -= k;
	n->len -= b;
}

void sh_norm_set_simd(sh_norm *n, int on)
{
	n->simd = on && sh_ascii_have_avx2();
	n->simd512 = on && sh_ascii_have_vbmi2();
	n->reorder.simd = on && sh_reorder_have_vbmi2();
	n->plain512 = on && sh_plain_have512();
	n->reorder.simd512 = on && sh_marks_have512();
	/* the rules mixed.c writes by (its invariant 1), and a table */
	n->mixed = on && sh_mixed_have() && n->cfg.punct == SIMHASH_PUNCT_DROP &&
		   n->cfg.space == SIMHASH_SPACE_AUTO && !n->cfg.max_repeat &&
		   n->cfg.compat == SIMHASH_COMPAT_NONE;
}

simhash_err sh_norm_decode(sh_norm *n, const uint8_t *in, size_t len, const uint32_t **cps,
			   size_t *n_cps)
{
	size_t i = 0, k = 0, step = sh_intr_step(n->intr), end;
	uint32_t *o;

	if (sh_buf_reserve(&n->cps, (len + 1) * sizeof(uint32_t)))
		return SIMHASH_ENOMEM;
	o = n->cps.p;
	while (i < len) {
		/* a step at a time: one poll each, no test per byte in the loop */
		end = len - i > step ? i + step : len;
		if (i && sh_intr_poll(n->intr, step))
			return SIMHASH_EINTR;
		while (i < end) {
			int bad;
			if (in[i] < 0x80) {
				o[k++] = in[i++];
				continue;
			}
			i += sh_utf8_next(in, len, i, &o[k++], &bad);
		}
	}
	*cps = o;
	*n_cps = k;
	return SIMHASH_OK;
}
