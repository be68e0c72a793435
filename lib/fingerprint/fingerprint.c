/* fingerprint.c - the context and the fingerprint of a text or of features.
 *
 * Pipeline: normalize (normalize.c) -> features (features.c) -> bit vote
 * (textvote.c, on vote.h). A text of SH_STREAM_MIN bytes or more goes to
 * stream.c, which uses the same kernels in bounded memory.
 *
 * The caller's interrupt hook (ctx->intr) is lent to every part that loops
 * over a text.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"
#include "vote.h"
#include "auto.h"
#include "ctx.h"

simhash_err simhash_ctx_new(const simhash_config *cfg, simhash_ctx **out)
{
	simhash_ctx *ctx;
	simhash_err err;

	if (!out || simhash_config_check(cfg) != SIMHASH_OK)
		return SIMHASH_EINVAL;
	ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return SIMHASH_ENOMEM;
	sh_config_copy(&ctx->cfg, cfg);
	cfg = &ctx->cfg;
	ctx->simd = sh_cpu_has_avx512() && !SH_EXP_SEED;
	err = sh_norm_new(cfg, &ctx->norm);
	if (!err) {
		/* auto features are char n-grams plus shingles (auto.c) */
		simhash_config fcfg = *cfg;
		if (fcfg.features == SIMHASH_FEATURES_AUTO)
			fcfg.features = SIMHASH_FEATURES_CHAR;
		err = sh_feats_new(&fcfg, &ctx->feats);
	}
	if (!err && cfg->features == SIMHASH_FEATURES_AUTO)
		err = sh_auto_new(&ctx->autov);
	if (!err)
		err = sh_dedup_new(&ctx->dedup);
	if (!err && cfg->compat == SIMHASH_COMPAT_PYTHON_SIMHASH)
		err = sh_compat_new(&ctx->compat);
	if (err) {
		simhash_ctx_free(ctx);
		return err;
	}
	sh_ctx_set_intr_every(ctx, 0, 0);
	sh_norm_set_intr(ctx->norm, &ctx->intr);
	sh_feats_set_intr(ctx->feats, &ctx->intr);
	sh_dedup_set_intr(ctx->dedup, &ctx->intr);
	if (ctx->compat)
		sh_compat_set_intr(ctx->compat, &ctx->intr);
	if (ctx->autov) {
		sh_auto_set_intr(ctx->autov, &ctx->intr);
		sh_auto_set_simd(ctx->autov, ctx->simd);
	}
	*out = ctx;
	return SIMHASH_OK;
}

void simhash_ctx_free(simhash_ctx *ctx)
{
	if (!ctx)
		return;
	sh_norm_free(ctx->norm);
	sh_feats_free(ctx->feats);
	sh_dedup_free(ctx->dedup);
	sh_compat_free(ctx->compat);
	sh_auto_free(ctx->autov);
	sh_buf_free(&ctx->pairs);
	sh_buf_free(&ctx->sort_tmp);
	sh_stream_free(ctx->stream);
	free(ctx);
}

const simhash_config *simhash_ctx_config(const simhash_ctx *ctx)
{
	return &ctx->cfg;
}

void sh_ctx_set_simd(simhash_ctx *ctx, int on)
{
	ctx->simd = on && sh_cpu_has_avx512() && !SH_EXP_SEED;
	if (ctx->autov)
		sh_auto_set_simd(ctx->autov, ctx->simd);
	sh_norm_set_simd(ctx->norm, on);
	sh_compat_set_simd(ctx->compat, on);
}

simhash_err simhash_ctx_set_interrupt(simhash_ctx *ctx, simhash_interrupt_fn fn, void *arg)
{
	if (!ctx)
		return SIMHASH_EINVAL;
	ctx->intr.fn = fn;
	ctx->intr.arg = arg;
	ctx->intr.due = ctx->intr.every;
	return SIMHASH_OK;
}

void sh_ctx_set_intr_every(simhash_ctx *ctx, size_t every, size_t step)
{
	ctx->intr.every = every ? every : SH_INTR_EVERY;
	ctx->intr.step = step ? step : SH_INTR_STEP;
	ctx->intr.due = ctx->intr.every;
}


simhash_err sh_ctx_distinct(simhash_ctx *ctx, const char *text, size_t len, const sh_uniq **u,
			    size_t *n_uniq)
{
	size_t n;
	simhash_err err = sh_ctx_features(ctx, text, len, &n);

	if (!err)
		err = sh_dedup_run(ctx->dedup, ctx->feats, n, u, n_uniq);
	if (err)
		return err;
	/* A text without features has none here (not the empty feature). */
	if (sh_feats_none(ctx->feats))
		*n_uniq = 0;
	return SIMHASH_OK;
}

static simhash_err fingerprint_text(simhash_ctx *ctx, const char *text, size_t len,
				    simhash_fp *out)
{
	const simhash_config *cfg;
	simhash_fp fp;
	simhash_err err;
	size_t n;

	if (!ctx || !out || (!text && len))
		return SIMHASH_EINVAL;
	if (!text)
		text = "";
	cfg = &ctx->cfg;
	if (cfg->compat == SIMHASH_COMPAT_PYTHON_SIMHASH) {
		err = sh_ctx_compat(ctx, text, len, &fp);
		if (!err)
			*out = fp;
		return err;
	}
	if (len >= SH_STREAM_MIN && sh_stream_fits(ctx))
		return sh_stream_whole(ctx, text, len, out);
	err = sh_ctx_features(ctx, text, len, &n);
	if (!err)
		err = sh_ctx_votes(ctx, n, &fp);
	if (!err)
		*out = fp;
	return err;
}

simhash_err simhash_fingerprint(simhash_ctx *ctx, const char *text, size_t len, simhash_fp *out,
				simhash_error *err)
{
	return sh_ctx_fail(ctx, fingerprint_text(ctx, text, len, out), err);
}

simhash_err simhash_fingerprint_features(simhash_ctx *ctx, const simhash_feature *features,
					 size_t n, simhash_fp *out)
{
	sh_wvote v;
	simhash_fp fp;
	size_t poll_at;

	if (!ctx || !out || (!features && n))
		return SIMHASH_EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((!features[i].data && features[i].len) || !isfinite(features[i].weight))
			return SIMHASH_EINVAL;
	if (ctx->cfg.compat == SIMHASH_COMPAT_PYTHON_SIMHASH) {
		simhash_err err = sh_compat_features(ctx->compat, features, n, ctx->cfg.bits, &fp);
		if (!err)
			*out = fp;
		return err;
	}
	poll_at = sh_intr_step(&ctx->intr);
	sh_wvote_init(&v, ctx->cfg.bits);
	for (size_t i = 0; i < n; i++) {
		uint64_t h[2];
		if (sh_intr_at(&ctx->intr, i, &poll_at))
			return SIMHASH_EINTR;
		sh_hash(ctx->cfg.hash, ctx->cfg.bits, features[i].data ? features[i].data : "",
			features[i].len, h);
		sh_wvote_add(&v, h, features[i].weight);
	}
	sh_wvote_finish(&v, out);
	return SIMHASH_OK;
}

simhash_err sh_ctx_features_each(simhash_ctx *ctx, const char *text, size_t len,
				 simhash_feature_fn fn, void *arg)
{
	const sh_uniq *u;
	size_t n, n_uniq, poll_at;
	simhash_err err;

	if (!ctx || !fn || (!text && len))
		return SIMHASH_EINVAL;
	if (ctx->cfg.compat != SIMHASH_COMPAT_NONE)
		return SIMHASH_EINVAL;
	err = sh_ctx_features(ctx, text, len, &n);
	if (!err)
		err = sh_dedup_run(ctx->dedup, ctx->feats, n, &u, &n_uniq);
	if (err)
		return err;
	poll_at = sh_intr_step(&ctx->intr);
	for (size_t i = 0; i < n_uniq; i++) {
		const uint8_t *p;
		size_t flen;
		if (sh_intr_at(&ctx->intr, i, &poll_at))
			return SIMHASH_EINTR;
		(void)sh_feats_get(ctx->feats, u[i].first, &p, &flen);
		if (fn((const char *)p, flen, u[i].count, arg))
			break;
	}
	return SIMHASH_OK;
}

simhash_err simhash_features_each(simhash_ctx *ctx, const char *text, size_t len,
				  simhash_feature_fn fn, void *arg, simhash_error *err)
{
	return sh_ctx_fail(ctx, sh_ctx_features_each(ctx, text, len, fn, arg), err);
}
