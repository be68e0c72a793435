/* textvote.c - the fingerprint of a prepared text: the kernels that turn the
 * features of ctx->text into bits, below both front doors (fingerprint.c for a
 * whole text, stream.c for a text given in pieces).
 *
 * With the default tf weighting and no tf cap every occurrence is a unit vote,
 * counted bit-sliced straight from the normalized text; every other weighting
 * first collects the distinct features (sh_dedup) and votes once per distinct
 * feature with its weight. Both give the same bits for the same weights: a
 * unit vote per occurrence is a vote of weight tf. The v2 default (auto) mixes
 * a MinHash of the char n-grams with the shingles of auto.c by length.
 *
 * The loops here report their features to the caller's interrupt hook in
 * steps, so a long vote stops within a step of the hook's answer. Nothing here
 * calls back into fingerprint.c or stream.c.
 */
#include <string.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "vote.h"
#include "auto.h"
#include "ctx.h"

/* The default path: one unit vote per feature occurrence. */
/* The key of char n-gram i: ng characters, ngc at a CJK character.
 * Mirrors sh_feats_get() for the hot loop; the caller checks the window fits. */
static inline __attribute__((always_inline)) uint64_t ngram_key(const sh_text *t, size_t i,
								unsigned ng, unsigned ngc)
{
	size_t end = i + (t->cls[i] == SH_C_CJK ? ngc : ng);
	return sh_key_inline(t->s + t->off[i], t->off[end] - t->off[i]);
}

/* Whether the eight classes at c are all SH_C_CJK. */
static inline int all_cjk(const uint8_t *c)
{
	uint64_t w;
	memcpy(&w, c, 8);
	return w == 0x0101010101010101ull * SH_C_CJK;
}

/* The end of the windows from `to` down that fit whole in t (n-grams of ng
 * characters, ngc from a CJK character): every window starting before it
 * fits, so the eight-at-a-time loops need no check. */
static inline size_t windows_fit(const sh_text *t, unsigned ng, unsigned ngc, size_t to)
{
	unsigned hi = ng > ngc ? ng : ngc;
	size_t safe = t->n_chars >= hi ? t->n_chars - hi + 1 : 0;

	return safe < to ? safe : to;
}

/* The keys of the eight windows from i, all starting before the text's last
 * full window: a run of one-byte characters (one_byte: the caller's test)
 * or of three-byte CJK bigrams takes a fixed-length hash, any other window
 * ngram_key(). */
static inline __attribute__((always_inline)) void ngram_keys8(const sh_text *t, size_t i, unsigned ng,
							      unsigned ngc, int one_byte, uint64_t h[8])
{
	if (one_byte) {
		/* eight windows of one-byte characters */
		const uint8_t *p = t->s + t->off[i];
		for (unsigned k = 0; k < 8; k++)
			h[k] = sh_key_1to3(p + k, ng);
	} else if (ngc == 2 && t->off[i + 8] - t->off[i] == 24 && t->off[i + 9] - t->off[i + 8] == 3 &&
		   all_cjk(t->cls + i)) {
		/* eight bigrams of nine three-byte characters: a CJK character
		 * has at least three bytes, so eight of them in 24 bytes have
		 * three each; the ninth is checked on its own (27 bytes in all
		 * also fit a four-byte Han character and a two-byte ninth) */
		const uint8_t *p = t->s + t->off[i];
		for (unsigned k = 0; k < 8; k++)
			h[k] = sh_key_4to8(p + 3 * k, 6);
	} else {
		for (unsigned k = 0; k < 8; k++)
			h[k] = ngram_key(t, i + k, ng, ngc);
	}
}

void sh_ngram_votes(simhash_ctx *ctx, const sh_text *t, unsigned ng, unsigned ngc, size_t from,
		    size_t to, sh_vote *v)
{
	const simhash_config *cfg = &ctx->cfg;

	if (cfg->hash == SIMHASH_HASH_XXH3 && cfg->bits <= 64) {
		/* The hot loop: n-grams read in place, XXH3 inlined, eight
		 * hashes at a time into the carry-save adders. Every window
		 * starting before `safe` fits; the rest are checked. */
		size_t safe = windows_fit(t, ng, ngc, to), i = from;
		while (i + 8 <= safe) {
			uint64_t h[8];
			int one_byte = sh_text_one_byte8(t, i, ng);
			if (one_byte && ctx->simd && safe - i >= 64) {
				/* a run of one-byte windows, eight per vector */
				i = sh_votes_ascii_avx512(v, t, i, safe, ng);
				continue;
			}
			ngram_keys8(t, i, ng, ngc, one_byte, h);
			if (SH_EXP_SEED)
				for (unsigned k = 0; k < 8; k++)
					h[k] = sh_exp_mix(h[k], 0);
			sh_lane_add8(&v->lane[0], h, 1);
			v->n += 8;
			i += 8;
		}
		for (; i < to; i++)
			if (i + (t->cls[i] == SH_C_CJK ? ngc : ng) <= t->n_chars)
				sh_vote_add(v, sh_exp_mix(ngram_key(t, i, ng, ngc), 0), 0);
	} else {
		for (size_t i = from; i < to; i++) {
			size_t end = i + (t->cls[i] == SH_C_CJK ? ngc : ng);
			uint64_t h[2];
			if (end > t->n_chars)
				continue;
			sh_hash(cfg->hash, cfg->bits, t->s + t->off[i], t->off[end] - t->off[i], h);
			sh_vote_add(v, sh_exp_mix(h[0], 0), sh_exp_mix(h[1], 1));
		}
	}
}

/* Counts the unit votes of the n features; finishes into *out, or with
 * counts non-NULL fills counts[0..bits) and *n_votes with the number of
 * votes. */
static simhash_err unit_votes(simhash_ctx *ctx, size_t n, simhash_fp *out, uint64_t *counts,
			      uint64_t *n_votes)
{
	const simhash_config *cfg = &ctx->cfg;
	const sh_text *t;
	unsigned ngc, ng = sh_feats_char_ngrams(ctx->feats, &t, &ngc);
	size_t step = sh_intr_step(&ctx->intr), poll_at = step;
	sh_vote v;

	sh_vote_init(&v, cfg->bits);
	if (ng) {
		for (size_t from = 0; from < n; from += step) {
			size_t to = n - from > step ? from + step : n;
			if (from && sh_intr_poll(&ctx->intr, step))
				return SIMHASH_EINTR;
			sh_ngram_votes(ctx, t, ng, ngc, from, to, &v);
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *p;
			size_t len;
			uint64_t h[2];
			if (sh_intr_at(&ctx->intr, i, &poll_at))
				return SIMHASH_EINTR;
			if (!sh_feats_get(ctx->feats, i, &p, &len))
				continue;
			sh_hash(cfg->hash, cfg->bits, p, len, h);
			sh_vote_add(&v, sh_exp_mix(h[0], 0), sh_exp_mix(h[1], 1));
		}
	}
	if (counts)
		*n_votes = sh_vote_counts(&v, cfg->bits, counts);
	else
		sh_vote_finish(&v, cfg->bits, out);
	return SIMHASH_OK;
}

/* The votes of the char n-grams counted from a CJK character, for centering
 * (auto.c): the windows unit_votes() counts, i < n that fit. A text of
 * one-byte characters has none, without a look. */
static uint64_t cjk_votes(const simhash_ctx *ctx, size_t n)
{
	const sh_text *t;
	unsigned ngc, ng = sh_feats_char_ngrams(ctx->feats, &t, &ngc);
	uint64_t k = 0;
	size_t end;

	if (!ng || t->len == t->n_chars || t->n_chars < ngc)
		return 0;
	end = t->n_chars - ngc + 1 < n ? t->n_chars - ngc + 1 : n;
	for (size_t i = 0; i < end; i++)
		k += t->cls[i] == SH_C_CJK;
	return k;
}

/* The MinHash value of a char n-gram of key h (sh_exp_mix()ed). */
static inline uint64_t char_mh_key(uint64_t h)
{
	return sh_mix64(h ^ 0x2545f4914f6cdd1dull);
}

void sh_ngram_minhash(const simhash_ctx *ctx, const sh_text *t, unsigned ng, unsigned ngc,
		      size_t from, size_t to, uint64_t mins[128])
{
	unsigned shift = sh_mh_shift(ctx->cfg.bits);
	size_t safe = windows_fit(t, ng, ngc, to), i = from;

	/* a set: each occurrence only lowers its bin's minimum. As in
	 * sh_ngram_votes(): windows starting before `safe` fit, and a run of
	 * one-byte characters, of three-byte CJK bigrams or (with AVX-512) of
	 * characters of one width takes a fixed-length hash, eight at a time. */
	while (i + 8 <= safe) {
		uint64_t h[8];
		int one_byte = sh_text_one_byte8(t, i, ng);
		if (one_byte && ctx->simd && safe - i >= 64) {
			/* a run of one-byte windows, eight per vector */
			i = sh_minhash_ascii_avx512(mins, shift, t, i, safe, ng);
			continue;
		}
		if (!one_byte && ctx->simd) {
			/* a run of CJK bigrams, or of windows of characters of
			 * one width, eight per vector */
			size_t j = ngc == 2 ? sh_minhash_cjk2_avx512(mins, shift, t, i, safe) : i;
			if (j == i)
				j = sh_minhash_wide_avx512(mins, shift, t, i, safe, ng, ngc);
			if (j > i) {
				i = j;
				continue;
			}
		}
		ngram_keys8(t, i, ng, ngc, one_byte, h);
		for (unsigned k = 0; k < 8; k++)
			sh_mh_add(mins, shift, char_mh_key(sh_exp_mix(h[k], 0)));
		i += 8;
	}
	for (; i < to; i++)
		if (i + (t->cls[i] == SH_C_CJK ? ngc : ng) <= t->n_chars)
			sh_mh_add(mins, shift, char_mh_key(sh_exp_mix(ngram_key(t, i, ng, ngc), 0)));
}

size_t sh_ngram_keys(const simhash_ctx *ctx, const sh_text *t, unsigned ng, unsigned ngc, size_t n,
		     uint64_t *out)
{
	size_t safe = windows_fit(t, ng, ngc, n), i = 0, k = 0;

	/* as in sh_ngram_votes(): windows starting before `safe` fit, eight
	 * at a time; the rest are checked */
	while (i + 8 <= safe) {
		int one_byte = sh_text_one_byte8(t, i, ng);
		if (one_byte && ctx->simd) {
			/* a run of one-byte windows, eight per vector */
			size_t to = sh_keys_ascii_avx512(out + k, t, i, safe, ng);
			k += to - i;
			i = to;
			continue;
		}
		if (!one_byte && ctx->simd) {
			/* a run of CJK bigrams, or of windows of characters of
			 * one width, eight per vector */
			size_t to = ngc == 2 ? sh_keys_cjk2_avx512(out + k, t, i, safe) : i;
			if (to == i)
				to = sh_keys_wide_avx512(out + k, t, i, safe, ng, ngc);
			if (to > i) {
				k += to - i;
				i = to;
				continue;
			}
		}
		ngram_keys8(t, i, ng, ngc, one_byte, out + k);
		k += 8;
		i += 8;
	}
	for (; i < n; i++)
		if (i + (t->cls[i] == SH_C_CJK ? ngc : ng) <= t->n_chars)
			out[k++] = ngram_key(t, i, ng, ngc);
	return k;
}

/* One-bit MinHash of the set of the n char features (auto.h's sh_mh_*): the
 * key of a feature is XXH3-64 of its bytes. A text shorter than an n-gram
 * has one feature, its whole text, and the empty text the empty feature
 * (as for the votes): one bin filled, the others densified from it. */
static simhash_err char_minhash(simhash_ctx *ctx, size_t n, uint64_t out[2])
{
	const sh_text *t;
	unsigned ngc, ng = sh_feats_char_ngrams(ctx->feats, &t, &ngc);
	size_t step = sh_intr_step(&ctx->intr);
	uint64_t mins[128];

	sh_mh_init(mins, ctx->cfg.bits);
	if (ng) {
		for (size_t from = 0; from < n; from += step) {
			size_t to = n - from > step ? from + step : n;
			if (from && sh_intr_poll(&ctx->intr, step))
				return SIMHASH_EINTR;
			sh_ngram_minhash(ctx, t, ng, ngc, from, to, mins);
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *p;
			size_t len;
			if (sh_feats_get(ctx->feats, i, &p, &len))
				sh_mh_add(mins, sh_mh_shift(ctx->cfg.bits),
					  char_mh_key(sh_exp_mix(sh_key_inline(p, len), 0)));
		}
	}
	sh_mh_bits(mins, ctx->cfg.bits, ctx->simd, out);
	return SIMHASH_OK;
}

/* The v2 default: char n-grams and word shingles blended by length (auto.c). */
static simhash_err auto_votes(simhash_ctx *ctx, size_t n, simhash_fp *out)
{
	const simhash_config *cfg = &ctx->cfg;
	int64_t vs[128], ws = 0, share = sh_auto_share(&ctx->text);
	uint64_t counts[128], mh[2] = {0, 0};
	sh_auto_char c = {counts, 0, 0, sh_auto_centered(cfg), !cfg->auto_char_votes, {0, 0}};

	if (share < SH_AUTO_SPAN) {
		/* The shingles' votes count only against char votes: next to the
		 * char MinHash (the default) the bits between take c.mh, so the
		 * shingles' MinHash and whether there are any (ws != 0) are all
		 * sh_auto_combine() reads, and they come without a table. */
		int votes = share > 0 && !c.minhash;
		simhash_err err = sh_auto_shingles(ctx->autov, cfg->bits, &ctx->text, votes, vs, &ws, mh);
		if (err)
			return err;
	}
	if ((share > 0 || ws == 0) && c.minhash) {
		simhash_err err = char_minhash(ctx, n, c.mh);
		if (err)
			return err;
	} else if (share > 0 || ws == 0) {
		simhash_err err = unit_votes(ctx, n, NULL, counts, &c.n);
		if (err)
			return err;
		c.n_cjk = c.centered ? cjk_votes(ctx, n) : 0;
	}
	sh_auto_combine(cfg->bits, share, &c, vs, ws, mh, out);
	return SIMHASH_OK;
}

static simhash_err weighted_votes(simhash_ctx *ctx, size_t n, simhash_fp *out)
{
	const sh_uniq *u;
	size_t n_uniq, poll_at = sh_intr_step(&ctx->intr);
	sh_wvote v;
	simhash_err err = sh_dedup_run(ctx->dedup, ctx->feats, n, &u, &n_uniq);

	if (err)
		return err;
	sh_wvote_init(&v, ctx->cfg.bits);
	for (size_t i = 0; i < n_uniq; i++) {
		const uint8_t *p;
		size_t len;
		uint64_t h[2];
		if (sh_intr_at(&ctx->intr, i, &poll_at))
			return SIMHASH_EINTR;
		(void)sh_feats_get(ctx->feats, u[i].first, &p, &len);
		sh_hash(ctx->cfg.hash, ctx->cfg.bits, p, len, h);
		h[0] = sh_exp_mix(h[0], 0);
		h[1] = sh_exp_mix(h[1], 1);
		sh_wvote_add(&v, h, sh_weight(&ctx->cfg, &u[i]));
	}
	sh_wvote_finish(&v, out);
	return SIMHASH_OK;
}

simhash_err sh_ctx_features(simhash_ctx *ctx, const char *text, size_t len, size_t *n)
{
	sh_text t;
	simhash_err err;

	if (!text && len)
		return SIMHASH_EINVAL;
	err = sh_norm_run(ctx->norm, (const uint8_t *)(text ? text : ""), len, &t,
			  &ctx->bad_offset);
	if (err)
		return err;
	ctx->text = t;
	return sh_feats_prepare(ctx->feats, &ctx->text, n);
}

simhash_err sh_ctx_compat(simhash_ctx *ctx, const char *text, size_t len, simhash_fp *out)
{
	const uint32_t *cps;
	size_t n;
	simhash_err err;

	if (ctx->cfg.utf8 == SIMHASH_UTF8_REJECT) {
		size_t bad = sh_utf8_validate((const uint8_t *)text, len);
		if (bad < len) {
			ctx->bad_offset = bad;
			return SIMHASH_EUTF8;
		}
	}
	err = sh_norm_decode(ctx->norm, (const uint8_t *)text, len, &cps, &n);
	if (err)
		return err;
	return sh_compat_text(ctx->compat, cps, n, ctx->cfg.bits, out);
}

int sh_ctx_unit(const simhash_config *cfg)
{
	/* MD5 costs far more than a table lookup: the weighted path hashes
	 * each distinct feature once and gives the same bits for tf */
	return cfg->weight == SIMHASH_WEIGHT_TF && cfg->tf_cap == 0 &&
	       cfg->hash != SIMHASH_HASH_MD5;
}

simhash_err sh_ctx_votes(simhash_ctx *ctx, size_t n, simhash_fp *out)
{
	if (ctx->cfg.features == SIMHASH_FEATURES_AUTO)
		return auto_votes(ctx, n, out);
	if (sh_ctx_unit(&ctx->cfg))
		return unit_votes(ctx, n, out, NULL, NULL);
	return weighted_votes(ctx, n, out);
}
