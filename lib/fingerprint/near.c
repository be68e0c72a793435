/* near.c - the per-pair decision of `simhash dedup`'s defaults: a text's
 * sketch (its distinct feature keys, ascending, and its kind) and the exact
 * Jaccard test of two sketches (simhash.h, "near-duplicates by exact
 * similarity").
 *
 * Invariants:
 *  1. A text's kind depends on its input length alone (code points: bytes
 *     that are not UTF-8 continuation bytes), so both sides of a pair are
 *     sketched the same way wherever they are sketched (the command, the
 *     Python module, a cluster job).
 *  2. The keys are those simhash_text_similarity() takes for the same
 *     config (sh_dedup_run() of the prepared features), sorted ascending and
 *     distinct, so the Jaccard of two sketches equals that function's.
 *  3. simhash_near_decide() reads nothing but its two sketches: the decision
 *     is a pure function of the pair, the same in any order of the input.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "ctx.h"

struct simhash_near {
	simhash_ctx *chars;    /* short texts: char 3-grams, 2 at CJK */
	simhash_ctx *shingles; /* long texts: word 3-shingles */
	sh_buf keys;           /* the last sketch's keys */
	int simd;              /* sketch_sort.c's vector path */
};

simhash_err simhash_near_new(simhash_near **out)
{
	simhash_config c, s;
	simhash_near *nd;
	simhash_err err;

	/* sh_near_tenths() holds the thresholds of simhash.h */
	assert(sh_near_tenths(SIMHASH_NEAR_CHARS) == (uint64_t)(SIMHASH_NEAR_T_SHORT * 10 + 0.5) &&
	       sh_near_tenths(SIMHASH_NEAR_SHINGLES) == (uint64_t)(SIMHASH_NEAR_T_LONG * 10 + 0.5));
	if (!out)
		return SIMHASH_EINVAL;
	nd = calloc(1, sizeof *nd);
	if (!nd)
		return SIMHASH_ENOMEM;
	simhash_config_init(&c);
	c.features = SIMHASH_FEATURES_CHAR;
	c.ngram = 3;
	c.ngram_cjk = 2;
	simhash_config_init(&s);
	s.features = SIMHASH_FEATURES_SHINGLE;
	s.ngram = 3;
	s.tokenizer = SIMHASH_TOKENIZER_SIMPLE;
	s.t2s = 0;
	nd->simd = sh_sketch_sort_simd();
	err = simhash_ctx_new(&c, &nd->chars);
	if (!err)
		err = simhash_ctx_new(&s, &nd->shingles);
	if (err) {
		simhash_near_free(nd);
		return err;
	}
	*out = nd;
	return SIMHASH_OK;
}

void sh_sketch_set_simd(simhash_near *nd, int on)
{
	nd->simd = on && sh_sketch_sort_simd();
	sh_ctx_set_simd(nd->chars, on);
	sh_ctx_set_simd(nd->shingles, on);
}

void simhash_near_free(simhash_near *nd)
{
	if (!nd)
		return;
	simhash_ctx_free(nd->chars);
	simhash_ctx_free(nd->shingles);
	sh_buf_free(&nd->keys);
	free(nd);
}

/* The distinct keys of the n features ctx has prepared, ascending, into
 * nd->keys: every feature hashed (XXH3-64 of its bytes, as sh_dedup_run()
 * keys it), then sorted with the repeats dropped, so the same keys as that
 * table's without a table per text. Char n-grams are hashed in place, eight
 * at a time, as the fingerprint's own pass does (sh_ngram_keys()); other
 * features (word shingles; a text shorter than an n-gram, whose one feature
 * is the whole text) one by one; a text without features has none (not
 * the empty feature). */
static simhash_err distinct_keys(simhash_near *nd, simhash_ctx *ctx, size_t n, size_t *n_keys)
{
	const sh_text *t;
	unsigned ngc, ng = sh_feats_char_ngrams(ctx->feats, &t, &ngc);
	size_t m = 0;
	uint64_t *k;

	if (sh_buf_reserve(&nd->keys, 2 * (n + 1) * sizeof *k))
		return SIMHASH_ENOMEM;
	k = (uint64_t *)(void *)nd->keys.p;
	if (ng) {
		m = sh_ngram_keys(ctx, t, ng, ngc, n, k);
	} else if (!sh_feats_none(ctx->feats)) {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *p;
			size_t len;
			if (sh_feats_get(ctx->feats, i, &p, &len))
				k[m++] = sh_key_inline(p, len);
		}
	}
	*n_keys = sh_sketch_sort(k, m, k + m + 1, nd->simd, 1);
	return SIMHASH_OK;
}

/* Whether the len bytes at p hold at most SIMHASH_NEAR_SHORT code points
 * (bytes that are not UTF-8 continuation bytes, 10xxxxxx), counted eight
 * bytes at a time until the count passes it. */
static int short_text(const uint8_t *p, size_t len)
{
	size_t n_cp = 0, i = 0;

	if (len <= SIMHASH_NEAR_SHORT)
		return 1;
	for (; i + 8 <= len; i += 8) {
		uint64_t w, cont;
		memcpy(&w, p + i, 8);
		/* bit 7 of each byte: set and its bit 6 clear */
		cont = w & ~(w << 1) & 0x8080808080808080ull;
		n_cp += 8 - (size_t)(((cont >> 7) * 0x0101010101010101ull) >> 56);
		if (n_cp > SIMHASH_NEAR_SHORT)
			return 0;
	}
	for (; i < len; i++)
		n_cp += (p[i] & 0xc0) != 0x80;
	return n_cp <= SIMHASH_NEAR_SHORT;
}

simhash_err simhash_near_sketch(simhash_near *nd, const char *text, size_t len,
				simhash_sketch *out)
{
	size_t n;
	simhash_ctx *ctx;
	simhash_err err;

	if (!nd || !out || (!text && len))
		return SIMHASH_EINVAL;
	ctx = short_text((const uint8_t *)text, len) ? nd->chars : nd->shingles;
	err = sh_ctx_features(ctx, text ? text : "", len, &n);
	if (!err)
		err = distinct_keys(nd, ctx, n, &out->n_keys);
	if (err)
		return err;
	out->keys = (const uint64_t *)(void *)nd->keys.p;
	out->kind = ctx == nd->chars ? SIMHASH_NEAR_CHARS : SIMHASH_NEAR_SHINGLES;
	return SIMHASH_OK;
}

double simhash_near_similarity(simhash_near_kind kind, double jaccard)
{
	return kind == SIMHASH_NEAR_CHARS ? 1 - (1 - jaccard) / 3 : jaccard;
}

/* The Jaccard threshold of a pair of a kind with union_ distinct keys:
 * the kind's T, and for short texts with more than DIFF / (1 - T) keys in
 * all, 1 - DIFF / union_ (J >= 1 - DIFF / union iff at most DIFF keys are
 * not shared). */
static double near_threshold(simhash_near_kind kind, size_t union_)
{
	double t = kind == SIMHASH_NEAR_CHARS ? SIMHASH_NEAR_T_SHORT : SIMHASH_NEAR_T_LONG;

	if (kind == SIMHASH_NEAR_CHARS && union_ > SIMHASH_NEAR_DIFF_SHORT &&
	    1.0 - (double)SIMHASH_NEAR_DIFF_SHORT / (double)union_ > t)
		t = 1.0 - (double)SIMHASH_NEAR_DIFF_SHORT / (double)union_;
	return t;
}

void simhash_near_decide(const simhash_sketch *a, const simhash_sketch *b,
			 simhash_near_verdict *out)
{
	size_t i = 0, j = 0, shared = 0, union_;

	out->near = 0;
	out->kind = 0;
	out->jaccard = 0;
	out->threshold = 0;
	out->shared = 0;
	out->n_a = a->n_keys;
	out->n_b = b->n_keys;
	if (a->kind != b->kind)
		return;
	while (i < a->n_keys && j < b->n_keys) {
		uint64_t x = a->keys[i], y = b->keys[j];
		shared += x == y;
		i += x <= y;
		j += y <= x;
	}
	out->kind = a->kind;
	out->shared = shared;
	union_ = a->n_keys + b->n_keys - shared;
	out->threshold = near_threshold(a->kind, union_);
	out->jaccard = union_ == 0 ? 1.0 : (double)shared / (double)union_;
	/* in integers: the thresholds are tenths, the budget a count */
	out->near = sh_near_accept(a->kind, shared, union_);
}

simhash_err simhash_near_texts(simhash_near *nd, const char *a, size_t a_len, const char *b,
			       size_t b_len, simhash_near_verdict *out)
{
	simhash_sketch sa, sb;
	uint64_t *copy;
	simhash_err err;

	if (!out)
		return SIMHASH_EINVAL;
	err = simhash_near_sketch(nd, a, a_len, &sa);
	if (err)
		return err;
	copy = malloc((sa.n_keys ? sa.n_keys : 1) * sizeof *copy);
	if (!copy)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; i < sa.n_keys; i++)
		copy[i] = sa.keys[i];
	sa.keys = copy;
	err = simhash_near_sketch(nd, b, b_len, &sb);
	if (!err)
		simhash_near_decide(&sa, &sb, out);
	free(copy);
	return err;
}
