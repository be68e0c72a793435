/* reorder.h - canonical ordering of long combining runs ahead of ICU (reorder.c). */
#ifndef SH_REORDER_H
#define SH_REORDER_H

#include <unicode/unorm2.h>
#include "../common/internal.h"

#define SH_REORDER_CACHE 1024

/* What reordering needs to know of a code point: its class, and of its full
 * decomposition under the normalizer, the non-starters before the first
 * starter (n_lead), whether it holds a starter, and the non-starters after
 * the last one (n_trail). An empty decomposition (a default ignorable) has
 * n_lead 0 and no starter: it neither extends nor ends a run. */
#define SH_REORDER_DEC 4

typedef struct sh_reorder_entry {
	int32_t cp1; /* code point + 1; 0: empty slot */
	uint8_t ccc, decomposes, starter, n_lead, n_trail;
	/* if cached: the decomposition, of up to SH_REORDER_DEC units (dec_len,
	 * 0 for a default ignorable), and each unit's class */
	uint8_t cached, dec_len, dec_cc[SH_REORDER_DEC];
	UChar dec[SH_REORDER_DEC];
} sh_reorder_entry;

/* Scratch space of sh_reorder(), kept by the caller between calls. Zeroed
 * before first use. */
typedef struct sh_reorder_bufs {
	sh_buf u16, ccs, tmp; /* the decomposed text, its units' classes, sort space */
	sh_buf cut, out;      /* a unit with its blocks cut (sh_reorder_emit()), ICU's output */
	/* the caller's buffer that the text given to sh_reorder() may lie in: once
	 * decomposed it is sort space where big enough (never grown), memory
	 * already touched; or NULL */
	sh_buf *spare;
	int simd;    /* the AVX-512 VBMI2 twin of the sort's pass per class may run */
	int simd512; /* marks512.c's twin of the decomposition's copy may run */
	sh_reorder_entry cache[SH_REORDER_CACHE]; /* direct-mapped by code point */
} sh_reorder_bufs;

/* Whether u[0..m) holds a run of characters without a normalization boundary
 * long enough for ICU's reordering to cost more than linear time. */
int sh_reorder_needed(const UNormalizer2 *nf, sh_reorder_bufs *b, const UChar *u, int32_t m);

/* Writes to b->u16 (*out_m units) a text that nf normalizes exactly as u[0..m),
 * fully decomposed, with its long runs of non-starters in canonical order. */
simhash_err sh_reorder(const UNormalizer2 *nf, const UChar *u, int32_t m, sh_reorder_bufs *b,
		       int32_t *out_m);

/* Receives normalized text, units u[0..len), in order. */
typedef simhash_err (*sh_reorder_sink)(void *arg, const UChar *u, int32_t len);

/* nf's normalization of u[0..m), handed to sink in pieces: sh_reorder()'s
 * text, normalized by ICU with the long blocks of marks that cannot compose
 * left out of its input and put back into its output (reorder.c). */
simhash_err sh_reorder_emit(const UNormalizer2 *nf, const UChar *u, int32_t m,
			    sh_reorder_bufs *b, sh_reorder_sink sink, void *arg);

/* Whether this CPU runs the sort's vector pass (AVX-512 VBMI2). */
int sh_reorder_have_vbmi2(void);

void sh_reorder_free(sh_reorder_bufs *b);

#endif
