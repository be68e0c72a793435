/* ctx.h - the inside of simhash_ctx, shared by fingerprint.c and similarity.c. */
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
	int simd;          /* use vote_avx512.c */
};

/* For tests: turns the vector path off (0) or back on where the CPU has it. */
void sh_ctx_set_simd(simhash_ctx *ctx, int on);

/* Normalizes text and prepares its features; *n gets their number. */
simhash_err sh_ctx_features(simhash_ctx *ctx, const char *text, size_t len, size_t *n);
#endif
