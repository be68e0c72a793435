/* stream.c - the fingerprint of a text given in pieces, in bounded memory:
 * simhash_fingerprint_begin(), _update(), _final(), and simhash_fingerprint()
 * of a long text.
 *
 * Workload: documents of any size (a 100 MB file, a 1 GB log) read a piece at
 * a time. Memory must grow with the distinct features only, never with the
 * text: the input goes to the normalizer in slices (1 MiB), cut where
 * normalization does not look across (sh_norm_cut()); the normalized output is
 * taken in windows, its features counted or voted, and the window consumed
 * but for what a feature still to come needs: the last n - 1 characters of
 * char n-grams, the word still being read, the last n - 1 words of
 * shingles.
 *
 * Invariants:
 *  1. The bits equal simhash_fingerprint() of the whole text, for every text
 *     and config (tests/fingerprint/test_stream.c compares them with windows
 *     of a few bytes). Unit votes are integer counts, in any order; weighted
 *     votes are added in order of first occurrence, as sh_dedup_run() gives
 *     them; the v2 default's shingle votes are integer sums.
 *  2. Windows are consumed only once the text has min_chars characters
 *     (64 Ki, at least past what the v2 blend and one n-gram need): a
 *     shorter text is fingerprinted whole by the one-shot path, so every
 *     decision that needs the whole text (the char share of the blend; a text
 *     with no n-gram window that fits) is the one-shot's. Past min_chars only
 *     the number of words can still change the mode (fewer than n words: one
 *     feature of them all; none: the empty feature), and the carried words
 *     then hold them all.
 *  3. Configs that need the whole text keep it (HTML cleaning, the ICU
 *     tokenizer's words, the Python compatibility mode): sh_stream_fits() is
 *     0 and the pieces are gathered, then fingerprinted at once.
 *
 * Memory: a slice of input, a window (about 6 bytes per normalized character
 * of a slice), and the table of distinct features: the v2 default's shingle
 * table (auto.c), or here 16 bytes per distinct feature plus 4-byte slots at
 * most half full (and 16 bytes more where the feature hash is not its key).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../common/internal.h"
#include "../hash/hash_inline.h"
#include "vote.h"
#include "auto.h"
#include "ctx.h"

#define STREAM_SLICE ((size_t)1 << 20)
#define STREAM_MIN_CHARS ((size_t)1 << 16)

struct went {
	uint64_t key;
	uint32_t count;
	uint32_t pad;
};

/* A word of the window: characters [c0, c1). */
struct wspan {
	size_t c0, c1;
};

struct sh_stream {
	int on;          /* between begin and final */
	int whole;       /* gather the whole input (invariant 3) */
	int drain;       /* windows are consumed */
	simhash_err err; /* the first error, kept until final */
	sh_buf in;       /* input not yet normalized */
	size_t in_len;
	size_t slice, min_chars;
	size_t peak;     /* the most characters a window of this text had */
	/* what the features need, in characters of the current window */
	size_t cpos;     /* the next char n-gram position */
	size_t wpos;     /* where the next word may start */
	int chars_on;    /* char n-grams are counted */
	unsigned ng, ngc, hi;
	sh_vote v;       /* unit votes */
	/* v2 default */
	sh_auto_run ar;
	uint64_t n_cjk;  /* char n-grams counted from a CJK character */
	uint64_t mins[128]; /* auto: the MinHash bins of the char n-grams */
	/* word features: the last ng - 1 words (shingles) and the count */
	struct wspan carry[64];
	unsigned n_carry;
	size_t n_words;
	sh_buf joined;
	/* distinct features of weighted configs, in order of first occurrence */
	struct went *ent;
	uint64_t (*hash)[2]; /* their hashes where the key is not the hash */
	uint32_t *idx;   /* 1 + index into ent, 0 empty */
	size_t used, ent_cap, mask;
};

void sh_stream_free(struct sh_stream *st)
{
	if (!st)
		return;
	sh_buf_free(&st->in);
	sh_buf_free(&st->joined);
	free(st->ent);
	free(st->hash);
	free(st->idx);
	free(st);
}

static simhash_err get_stream(simhash_ctx *ctx, struct sh_stream **out)
{
	if (!ctx->stream) {
		ctx->stream = calloc(1, sizeof *ctx->stream);
		if (!ctx->stream)
			return SIMHASH_ENOMEM;
	}
	*out = ctx->stream;
	return SIMHASH_OK;
}

simhash_err sh_ctx_set_stream(simhash_ctx *ctx, size_t slice, size_t min_chars)
{
	struct sh_stream *st;
	simhash_err err = get_stream(ctx, &st);

	if (err)
		return err;
	st->slice = slice;
	st->min_chars = min_chars;
	return SIMHASH_OK;
}

size_t sh_ctx_stream_peak(const simhash_ctx *ctx)
{
	return ctx->stream ? ctx->stream->peak : 0;
}

int sh_stream_fits(const simhash_ctx *ctx)
{
	const simhash_config *cfg = &ctx->cfg;

	if (cfg->compat != SIMHASH_COMPAT_NONE || cfg->html)
		return 0;
	return cfg->features == SIMHASH_FEATURES_CHAR || cfg->features == SIMHASH_FEATURES_AUTO ||
	       cfg->tokenizer == SIMHASH_TOKENIZER_SIMPLE;
}

/* Whether the feature hash at this width is the key itself (or its low half). */
static int hash_is_key(const simhash_config *cfg)
{
	return cfg->hash == SIMHASH_HASH_XXH3 && cfg->bits <= 64;
}

/* ---- the table of distinct features (weighted configs) */

static simhash_err table_grow(struct sh_stream *st, int with_hash)
{
	size_t slots = st->mask ? 2 * (st->mask + 1) : 1024;
	uint32_t *idx;

	if (st->used + 1 > st->ent_cap) {
		size_t cap = st->ent_cap ? 2 * st->ent_cap : 512;
		struct went *ent = realloc(st->ent, cap * sizeof *ent);
		if (!ent)
			return SIMHASH_ENOMEM;
		st->ent = ent;
		if (with_hash) {
			uint64_t(*h)[2] = realloc(st->hash, cap * sizeof *h);
			if (!h)
				return SIMHASH_ENOMEM;
			st->hash = h;
		}
		st->ent_cap = cap;
	}
	if (2 * (st->used + 1) <= (st->mask ? st->mask + 1 : 0))
		return SIMHASH_OK;
	/* the slots are rebuilt from ent: the old ones go first, so the text
	 * never holds both */
	free(st->idx);
	st->idx = NULL;
	st->mask = 0;
	idx = calloc(slots, sizeof *idx);
	if (!idx)
		return SIMHASH_ENOMEM;
	for (size_t e = 0; e < st->used; e++) {
		size_t j = (size_t)st->ent[e].key & (slots - 1);
		while (idx[j])
			j = (j + 1) & (slots - 1);
		idx[j] = (uint32_t)(e + 1);
	}
	st->idx = idx;
	st->mask = slots - 1;
	return SIMHASH_OK;
}

/* Counts one occurrence of the feature p[0..len). */
static simhash_err table_add(simhash_ctx *ctx, struct sh_stream *st, const uint8_t *p, size_t len)
{
	uint64_t key = sh_key_inline(p, len);
	int with_hash = !hash_is_key(&ctx->cfg);
	size_t j;
	struct went *e;

	if (st->used + 1 > st->ent_cap || 2 * (st->used + 1) > (st->mask ? st->mask + 1 : 0)) {
		simhash_err err = st->used >= UINT32_MAX - 1 ? SIMHASH_ENOMEM
							     : table_grow(st, with_hash);
		if (err)
			return err;
	}
	for (j = (size_t)key & st->mask; st->idx[j]; j = (j + 1) & st->mask) {
		e = &st->ent[st->idx[j] - 1];
		if (e->key == key) {
			e->count += e->count != UINT32_MAX;
			return SIMHASH_OK;
		}
	}
	e = &st->ent[st->used];
	e->key = key;
	e->count = 1;
	e->pad = 0;
	if (with_hash)
		sh_hash(ctx->cfg.hash, ctx->cfg.bits, p, len, st->hash[st->used]);
	st->idx[j] = (uint32_t)++st->used;
	return SIMHASH_OK;
}

/* One occurrence of a feature: a unit vote, or a count in the table. */
static simhash_err feature(simhash_ctx *ctx, struct sh_stream *st, const uint8_t *p, size_t len)
{
	uint64_t h[2];

	if (!sh_ctx_unit(&ctx->cfg))
		return table_add(ctx, st, p, len);
	sh_hash(ctx->cfg.hash, ctx->cfg.bits, p, len, h);
	sh_vote_add(&st->v, sh_exp_mix(h[0], 0), sh_exp_mix(h[1], 1));
	return SIMHASH_OK;
}

/* The weighted vote of the table, as weighted_votes() in fingerprint.c. */
static void table_vote(simhash_ctx *ctx, struct sh_stream *st, simhash_fp *out)
{
	sh_wvote v;

	sh_wvote_init(&v, ctx->cfg.bits);
	for (size_t e = 0; e < st->used; e++) {
		sh_uniq u = { st->ent[e].key, st->ent[e].count, 0 };
		uint64_t h[2] = { st->ent[e].key, 0 };
		if (st->hash) {
			h[0] = st->hash[e][0];
			h[1] = st->hash[e][1];
		} else if (ctx->cfg.bits == 32) {
			h[0] = (uint32_t)h[0];
		}
		h[0] = sh_exp_mix(h[0], 0);
		h[1] = sh_exp_mix(h[1], 1);
		sh_wvote_add(&v, h, sh_weight(&ctx->cfg, &u));
	}
	sh_wvote_finish(&v, out);
}

/* ---- the features of a window */

/* The first character of the run of word characters that ends the window,
 * or n_chars: a word that may go on in the next window. The run is looked
 * for back to `from` only (a word still open there started at `from`), so a
 * word longer than many windows costs no rescans. */
static size_t open_word(const sh_text *t, size_t from)
{
	size_t i = t->n_chars;

	while (i > from && t->cls[i - 1] == SH_C_WORD)
		i--;
	return i;
}

/* Char n-grams at positions [cpos, to). */
static simhash_err char_features(simhash_ctx *ctx, struct sh_stream *st, const sh_text *t,
				 size_t to)
{
	if (ctx->cfg.features == SIMHASH_FEATURES_AUTO && !ctx->cfg.auto_char_votes) {
		/* needed only if the text has fewer than three words */
		sh_ngram_minhash(ctx, t, st->ng, st->ngc, st->cpos, to, st->mins);
	} else if (sh_ctx_unit(&ctx->cfg) || ctx->cfg.features == SIMHASH_FEATURES_AUTO) {
		sh_ngram_votes(ctx, t, st->ng, st->ngc, st->cpos, to, &st->v);
		/* for centering: the n-grams from a CJK character that fit, as
		 * cjk_votes() in fingerprint.c counts them */
		if (ctx->cfg.features == SIMHASH_FEATURES_AUTO && t->len != t->n_chars)
			for (size_t i = st->cpos; i < to; i++)
				st->n_cjk += t->cls[i] == SH_C_CJK && i + st->ngc <= t->n_chars;
	} else {
		for (size_t i = st->cpos; i < to; i++) {
			size_t end = i + (t->cls[i] == SH_C_CJK ? st->ngc : st->ng);
			simhash_err err;
			if (end > t->n_chars)
				continue;
			err = table_add(ctx, st, t->s + t->off[i], t->off[end] - t->off[i]);
			if (err)
				return err;
		}
	}
	st->cpos = to;
	return SIMHASH_OK;
}

/* Words w[0..k) joined by single spaces, in place when the text has them so
 * (as join() in features.c). */
static simhash_err join(struct sh_stream *st, const sh_text *t, const struct wspan *w, size_t k,
			const uint8_t **p, size_t *len)
{
	size_t j, total = 0;
	uint8_t *o;

	for (j = 1; j < k; j++)
		if (t->off[w[j].c0] != t->off[w[j - 1].c1] + 1 || t->s[t->off[w[j].c0] - 1] != ' ')
			break;
	if (j == k) {
		*p = t->s + t->off[w[0].c0];
		*len = t->off[w[k - 1].c1] - t->off[w[0].c0];
		return SIMHASH_OK;
	}
	for (j = 0; j < k; j++)
		total += t->off[w[j].c1] - t->off[w[j].c0] + 1;
	if (sh_buf_reserve(&st->joined, total))
		return SIMHASH_ENOMEM; /* honest: never hash a part of a shingle */
	o = st->joined.p;
	for (j = 0; j < k; j++) {
		size_t wl = t->off[w[j].c1] - t->off[w[j].c0];
		memcpy(o, t->s + t->off[w[j].c0], wl);
		o += wl;
		if (j + 1 < k)
			*o++ = ' ';
	}
	*p = st->joined.p;
	*len = total - 1;
	return SIMHASH_OK;
}

/* One word (characters [c0, c1)) of the word and shingle features. */
static simhash_err word(simhash_ctx *ctx, struct sh_stream *st, const sh_text *t, size_t c0,
			size_t c1)
{
	const simhash_config *cfg = &ctx->cfg;
	const uint8_t *p = t->s + t->off[c0];
	size_t len = t->off[c1] - t->off[c0];

	if (cfg->stopwords && sh_stopwords_has_key(cfg->stopwords, sh_key_inline(p, len)))
		return SIMHASH_OK;
	st->n_words++;
	if (cfg->features == SIMHASH_FEATURES_WORD)
		return feature(ctx, st, p, len);
	if (st->n_carry == st->ng) {
		memmove(st->carry, st->carry + 1, (st->ng - 1) * sizeof *st->carry);
		st->n_carry--;
	}
	st->carry[st->n_carry].c0 = c0;
	st->carry[st->n_carry].c1 = c1;
	st->n_carry++;
	if (st->n_carry < st->ng)
		return SIMHASH_OK;
	if (join(st, t, st->carry, st->ng, &p, &len))
		return SIMHASH_ENOMEM;
	return feature(ctx, st, p, len);
}

/* The simple tokenizer's words that start at characters [wpos, to). */
static simhash_err word_features(simhash_ctx *ctx, struct sh_stream *st, const sh_text *t,
				 size_t to)
{
	size_t i, j;

	for (j = st->wpos; sh_next_word(t, j, to, &i, &j);) {
		simhash_err err = word(ctx, st, t, i, j);
		if (err)
			return err;
	}
	st->wpos = to;
	return SIMHASH_OK;
}

/* The features of the window t, all of them (final) or those complete; then
 * consumes what no feature to come needs. */
static simhash_err window(simhash_ctx *ctx, struct sh_stream *st, const sh_text *t, int final)
{
	const simhash_config *cfg = &ctx->cfg;
	size_t n = t->n_chars, keep;
	size_t wto = final || cfg->features == SIMHASH_FEATURES_CHAR ? n : open_word(t, st->wpos);
	simhash_err err = SIMHASH_OK;

	if (st->chars_on) {
		size_t to = final ? n : (n >= st->hi ? n - st->hi + 1 : 0);
		if (to > st->cpos)
			err = char_features(ctx, st, t, to);
	}
	if (n > st->peak)
		st->peak = n;
	if (!err && wto > st->wpos) {
		if (cfg->features == SIMHASH_FEATURES_AUTO) {
			err = sh_auto_scan(ctx->autov, t, st->wpos, wto, &st->ar);
			st->wpos = wto;
			/* past three words the char votes can no longer count */
			st->chars_on = st->ar.m < 3;
		} else if (cfg->features != SIMHASH_FEATURES_CHAR) {
			err = word_features(ctx, st, t, wto);
		}
	}
	if (wto > st->wpos)
		st->wpos = wto; /* char features: no word to wait for */
	if (err || final)
		return err;
	keep = st->wpos;
	if (st->chars_on && st->cpos < keep)
		keep = st->cpos;
	if (st->n_carry && st->carry[0].c0 < keep)
		keep = st->carry[0].c0;
	if (keep >= n)
		keep = n - 1; /* the normalizer looks back at the last character */
	sh_norm_consume(ctx->norm, keep);
	st->cpos -= st->cpos > keep ? keep : st->cpos;
	st->wpos -= keep;
	for (unsigned k = 0; k < st->n_carry; k++) {
		st->carry[k].c0 -= keep;
		st->carry[k].c1 -= keep;
	}
	return SIMHASH_OK;
}

/* Starts consuming windows (invariant 2). */
static simhash_err start_drain(simhash_ctx *ctx, struct sh_stream *st)
{
	const simhash_config *cfg = &ctx->cfg;
	simhash_err err = SIMHASH_OK;

	st->drain = 1;
	st->ng = cfg->ngram;
	st->ngc = cfg->ngram_cjk ? cfg->ngram_cjk : cfg->ngram;
	st->hi = st->ng > st->ngc ? st->ng : st->ngc;
	st->cpos = st->wpos = 0;
	st->n_carry = 0;
	st->n_words = 0;
	st->used = 0;
	if (st->idx)
		memset(st->idx, 0, (st->mask + 1) * sizeof *st->idx);
	st->chars_on = cfg->features == SIMHASH_FEATURES_CHAR ||
		       cfg->features == SIMHASH_FEATURES_AUTO;
	memset(&st->ar, 0, sizeof st->ar);
	st->n_cjk = 0;
	sh_mh_init(st->mins, cfg->bits);
	sh_vote_init(&st->v, cfg->bits);
	if (cfg->features == SIMHASH_FEATURES_AUTO)
		sh_auto_begin(ctx->autov, cfg->bits);
	return err;
}

/* Normalizes in[0..len) (ending at a cut, or the last piece) and takes the
 * window if the text is long enough. */
static simhash_err feed(simhash_ctx *ctx, struct sh_stream *st, const uint8_t *in, size_t len)
{
	simhash_err err = sh_norm_feed(ctx->norm, in, len, &ctx->bad_offset);
	sh_text t;

	if (err)
		return err;
	sh_norm_view(ctx->norm, &t);
	if (!st->drain) {
		size_t min = st->min_chars ? st->min_chars : STREAM_MIN_CHARS;
		if (min < SH_AUTO_L1 + 1)
			min = SH_AUTO_L1 + 1;
		if (t.n_chars < min)
			return SIMHASH_OK;
		err = start_drain(ctx, st);
		if (err)
			return err;
	}
	err = window(ctx, st, &t, 0);
	/* the features of the window's characters (the normalizer reported
	 * its bytes) */
	if (!err && sh_intr_poll(&ctx->intr, t.n_chars))
		err = SIMHASH_EINTR;
	return err;
}

/* Normalizes what of the gathered input ends at a cut. */
static simhash_err feed_cut(simhash_ctx *ctx, struct sh_stream *st)
{
	size_t p = sh_norm_cut(st->in.p, st->in_len);
	simhash_err err;

	if (p == 0)
		return SIMHASH_OK;
	err = feed(ctx, st, st->in.p, p);
	memmove(st->in.p, (uint8_t *)st->in.p + p, st->in_len - p);
	st->in_len -= p;
	return err;
}

static simhash_err gather(struct sh_stream *st, const char *text, size_t len)
{
	if (len > SIZE_MAX - st->in_len || sh_buf_reserve(&st->in, st->in_len + len))
		return SIMHASH_ENOMEM;
	memcpy((uint8_t *)st->in.p + st->in_len, text, len);
	st->in_len += len;
	return SIMHASH_OK;
}

simhash_err simhash_fingerprint_begin(simhash_ctx *ctx)
{
	struct sh_stream *st;
	simhash_err err;

	if (!ctx)
		return SIMHASH_EINVAL;
	err = get_stream(ctx, &st);
	if (err)
		return err;
	st->on = 1;
	st->whole = !sh_stream_fits(ctx);
	st->drain = 0;
	st->in_len = 0;
	st->peak = 0;
	st->err = st->whole ? SIMHASH_OK : sh_norm_begin(ctx->norm);
	return st->err;
}

static simhash_err stream_update(simhash_ctx *ctx, const char *text, size_t len)
{
	struct sh_stream *st = ctx ? ctx->stream : NULL;
	size_t slice;

	if (!st || !st->on || (!text && len))
		return SIMHASH_EINVAL;
	if (st->err)
		return st->err;
	if (st->whole) {
		st->err = gather(st, text, len);
		return st->err;
	}
	slice = st->slice ? st->slice : STREAM_SLICE;
	while (len && !st->err) {
		size_t take = st->in_len < slice ? slice - st->in_len : 1;
		if (take > len)
			take = len;
		st->err = gather(st, text, take);
		text += take;
		len -= take;
		if (!st->err && st->in_len >= slice)
			st->err = feed_cut(ctx, st);
	}
	return st->err;
}

/* The fingerprint once the whole text went through window(). */
static simhash_err finish(simhash_ctx *ctx, struct sh_stream *st, simhash_fp *out)
{
	const simhash_config *cfg = &ctx->cfg;
	simhash_err err = SIMHASH_OK;

	if (cfg->features == SIMHASH_FEATURES_AUTO) {
		/* past min_chars > SH_AUTO_L1: the shingles' MinHash bits
		 * alone, unless fewer than three words (then char n-grams
		 * alone, every one counted) */
		int64_t vs[128];
		int64_t ws;
		uint64_t counts[128], mh[2];
		sh_auto_char c = { counts, 0, 0, sh_auto_centered(cfg), !cfg->auto_char_votes,
				   { 0, 0 } };
		sh_auto_votes(ctx->autov, cfg->bits, st->ar.m, 0, vs, &ws, mh);
		if (ws == 0 && c.minhash) {
			sh_mh_bits(st->mins, cfg->bits, ctx->simd, c.mh);
		} else if (ws == 0) {
			c.n = sh_vote_counts(&st->v, cfg->bits, counts);
			c.n_cjk = c.centered ? st->n_cjk : 0;
		}
		sh_auto_combine(cfg->bits, 0, &c, vs, ws, mh, out);
		return SIMHASH_OK;
	}
	if (cfg->features == SIMHASH_FEATURES_SHINGLE && st->n_words < st->ng) {
		/* fewer words than a shingle: one feature, them all (the
		 * carry holds them), or the empty feature */
		const uint8_t *p = (const uint8_t *)"";
		size_t len = 0;
		sh_text t;
		sh_norm_view(ctx->norm, &t);
		if (st->n_words)
			err = join(st, &t, st->carry, st->n_words, &p, &len);
		if (!err)
			err = feature(ctx, st, p, len);
	} else if (cfg->features == SIMHASH_FEATURES_WORD && st->n_words == 0) {
		err = feature(ctx, st, (const uint8_t *)"", 0);
	}
	if (err)
		return err;
	if (sh_ctx_unit(cfg))
		sh_vote_finish(&st->v, cfg->bits, out);
	else
		table_vote(ctx, st, out);
	return SIMHASH_OK;
}

static simhash_err stream_final(simhash_ctx *ctx, simhash_fp *out)
{
	struct sh_stream *st = ctx ? ctx->stream : NULL;
	simhash_err err;
	simhash_fp fp;
	sh_text t;
	size_t n;

	if (!st || !st->on || !out)
		return SIMHASH_EINVAL;
	st->on = 0;
	err = st->err;
	if (!err && st->whole) {
		err = ctx->cfg.compat == SIMHASH_COMPAT_PYTHON_SIMHASH
			      ? sh_ctx_compat(ctx, st->in.p, st->in_len, &fp)
			      : sh_ctx_features(ctx, st->in.p, st->in_len, &n);
		if (!err && ctx->cfg.compat == SIMHASH_COMPAT_NONE)
			err = sh_ctx_votes(ctx, n, &fp);
		goto out;
	}
	if (!err && st->in_len)
		err = feed(ctx, st, st->in.p, st->in_len);
	st->in_len = 0;
	if (!err)
		err = sh_norm_end(ctx->norm, &t);
	if (err)
		goto out;
	if (!st->drain) {
		/* a short text: the one-shot path on its normalized form */
		ctx->text = t;
		err = sh_feats_prepare(ctx->feats, &ctx->text, &n);
		if (!err)
			err = sh_ctx_votes(ctx, n, &fp);
		goto out;
	}
	err = window(ctx, st, &t, 1);
	if (!err)
		err = finish(ctx, st, &fp);
out:
	st->in_len = 0;
	if (st->in.cap > 2 * (st->slice ? st->slice : STREAM_SLICE))
		sh_buf_free(&st->in); /* do not keep a whole text's buffer */
	if (!err)
		*out = fp;
	return err;
}

simhash_err sh_stream_whole(simhash_ctx *ctx, const char *text, size_t len, simhash_fp *out)
{
	simhash_err err = simhash_fingerprint_begin(ctx);

	if (!err)
		err = stream_update(ctx, text, len);
	if (err) {
		if (ctx->stream)
			ctx->stream->on = 0;
		return err;
	}
	return stream_final(ctx, out);
}

simhash_err simhash_fingerprint_update(simhash_ctx *ctx, const char *text, size_t len,
				       simhash_error *err)
{
	return sh_ctx_fail(ctx, stream_update(ctx, text, len), err);
}

simhash_err simhash_fingerprint_final(simhash_ctx *ctx, simhash_fp *out, simhash_error *err)
{
	return sh_ctx_fail(ctx, stream_final(ctx, out), err);
}

simhash_err simhash_fingerprint_fd(simhash_ctx *ctx, int fd, simhash_fp *out, uint64_t *n_bytes,
				   simhash_error *e)
{
	struct sh_stream *st;
	simhash_err err;
	uint64_t total = 0;
	size_t slice;
	int os_err = 0;

	if (!ctx || fd < 0 || !out)
		return sh_error_code(e, SIMHASH_EINVAL);
	err = simhash_fingerprint_begin(ctx);
	if (err)
		return sh_error_code(e, err);
	st = ctx->stream;
	slice = st->slice ? st->slice : STREAM_SLICE;
	/* read straight into the input buffer: no copy */
	while (!st->err) {
		size_t want = st->whole && st->in_len > slice ? st->in_len : slice;
		ssize_t n;
		if (sh_buf_reserve(&st->in, st->in_len + want)) {
			st->err = SIMHASH_ENOMEM;
			break;
		}
		n = read(fd, (uint8_t *)st->in.p + st->in_len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			os_err = errno;
			st->err = SIMHASH_EIO;
			break;
		}
		if (n == 0)
			break;
		st->in_len += (size_t)n;
		total += (uint64_t)n;
		if (!st->whole && st->in_len >= slice)
			st->err = feed_cut(ctx, st);
	}
	if (n_bytes)
		*n_bytes = total;
	err = stream_final(ctx, out);
	if (err == SIMHASH_EIO && os_err)
		return sh_error_os(e, os_err);
	return sh_ctx_fail(ctx, err, e);
}
