/* ctx.h - the inside of simhash_ctx, shared by the files of lib/fingerprint. */
#ifndef SH_CTX_H
#define SH_CTX_H
#include "../common/internal.h"

struct simhash_ctx {
	simhash_config cfg;
	sh_norm *norm;
	sh_feats *feats;
	sh_dedup *dedup;
	sh_compat *compat;
	struct sh_auto *autov; /* SIMHASH_FEATURES_AUTO: the shingle table */
	sh_text text;      /* the last normalized text */
	size_t bad_offset; /* of the last SIMHASH_EUTF8 */
	sh_buf pairs;      /* similarity: (key, weight) of the first text */
	sh_buf sort_tmp;   /* similarity: the radix sort's other half */
	int simd;          /* use vote_avx512.c */
	struct sh_stream *stream; /* simhash_fingerprint_begin() .. _final() */
	sh_intr intr;      /* the caller's hook; norm, feats, dedup, compat, autov point here */
};

/* For tests: the hook is called every `every` units of work (0: 256 Ki),
 * and loops report at least every `step` units (0: 16 Ki); tests make both
 * tiny so that a short text passes many polls. Restarts the count. */
void sh_ctx_set_intr_every(simhash_ctx *ctx, size_t every, size_t step);

/* For tests: turns the vector path off (0) or back on where the CPU has it. */
void sh_ctx_set_simd(simhash_ctx *ctx, int on);

/* Fills err (may be NULL) for code, a call's result on ctx (may be NULL):
 * SIMHASH_EUTF8 with the offset of the last invalid sequence (simhash.h,
 * convention 2). Returns code. Inline: every file of the module ends its
 * public calls with it, and none may call another for it (no circles). */
static inline simhash_err sh_ctx_fail(const simhash_ctx *ctx, simhash_err code,
				      simhash_error *err)
{
	if (code == SIMHASH_OK || !err)
		return code;
	if (code == SIMHASH_EUTF8 && ctx) {
		sh_error_set(err, code, "invalid UTF-8 at byte %zu", ctx->bad_offset);
		err->offset = ctx->bad_offset;
		return code;
	}
	return sh_error_code(err, code);
}
/* simhash_features_each() without the error detail. */
simhash_err sh_ctx_features_each(simhash_ctx *ctx, const char *text, size_t len,
				 simhash_feature_fn fn, void *arg);

/* Normalizes text and prepares its features; *n gets their number. */
simhash_err sh_ctx_features(simhash_ctx *ctx, const char *text, size_t len, size_t *n);
/* The distinct features of text (sh_dedup_run() of sh_ctx_features()), none
 * for a text that has no feature. */
simhash_err sh_ctx_distinct(simhash_ctx *ctx, const char *text, size_t len, const sh_uniq **u,
			    size_t *n_uniq);
/* The fingerprint of the features prepared by sh_ctx_features() (or by
 * sh_feats_prepare() on ctx->text), n of them. */
simhash_err sh_ctx_votes(simhash_ctx *ctx, size_t n, simhash_fp *out);
/* Whether cfg votes once per occurrence (tf, no cap, a fast hash) instead of
 * once per distinct feature with its weight. */
int sh_ctx_unit(const simhash_config *cfg);
/* The Python compatibility mode's fingerprint of a text. */
simhash_err sh_ctx_compat(simhash_ctx *ctx, const char *text, size_t len, simhash_fp *out);

struct sh_vote;
/* Adds the unit votes of the char n-grams (ng characters, ngc at a CJK one)
 * starting at characters [from, to) of t to v; windows that run past t's end
 * are no features. */
void sh_ngram_votes(simhash_ctx *ctx, const sh_text *t, unsigned ng, unsigned ngc, size_t from,
		    size_t to, struct sh_vote *v);
/* The keys (XXH3-64 of the bytes, as sh_dedup_run() takes them) of the char
 * n-grams starting at characters [0, n) of t, in order, repeats included,
 * into out (room for n); returns how many: windows that run past t's end
 * are no features. Runs of one-byte windows go eight per vector where
 * ctx->simd says so. */
size_t sh_ngram_keys(const simhash_ctx *ctx, const sh_text *t, unsigned ng, unsigned ngc, size_t n,
		     uint64_t *out);
/* For tests: turns a simhash_near's vector paths (the sort, its contexts'
 * kernels) off (0) or back on where the CPU has them. */
void sh_sketch_set_simd(simhash_near *nd, int on);
/* Puts the char n-grams at positions [from, to) of t into the MinHash bins
 * mins (auto.h's sh_mh_*): the key of an n-gram is XXH3-64 of its bytes. */
void sh_ngram_minhash(const simhash_ctx *ctx, const sh_text *t, unsigned ng, unsigned ngc,
		      size_t from, size_t to, uint64_t mins[128]);

/* stream.c: texts given in pieces. From SH_STREAM_MIN bytes on,
 * simhash_fingerprint() streams a text whose config allows it
 * (sh_stream_fits()): the same bits in memory bounded by the distinct
 * features and a window. */
#define SH_STREAM_MIN ((size_t)8 << 20)
int sh_stream_fits(const simhash_ctx *ctx);
simhash_err sh_stream_whole(simhash_ctx *ctx, const char *text, size_t len, simhash_fp *out);
void sh_stream_free(struct sh_stream *st);
/* For tests: input bytes normalized at once (0: the default, 1 MiB) and the
 * characters a text needs before its windows are consumed (0: the default). */
simhash_err sh_ctx_set_stream(simhash_ctx *ctx, size_t slice, size_t min_chars);
/* For tests: the most characters a window of the last streamed text had (0:
 * it was never consumed in windows). */
size_t sh_ctx_stream_peak(const simhash_ctx *ctx);
#endif
