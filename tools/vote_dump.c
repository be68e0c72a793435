/* vote_dump.c - experiments only (docs/quality.md, "Candidates measured"): for
 * each JSON Lines document on stdin, one line: id, normalized characters, char
 * n-grams starting at a non-CJK / a CJK character, total shingle weight, then
 * per bit the counts of set bits of each class and the shingle votes, as the
 * default computes them (hashes remixed under -DSH_EXP_SEED=N). tools/vote_eval.py
 * rebuilds fingerprints from these lines and scores variants of the vote.
 * Build: cc -std=gnu11 -O2 -Ilib [-DSH_EXP_SEED=N] tools/vote_dump.c
 *        BUILD/libsimhash.a $(pkg-config --libs icu-uc icu-i18n libxxhash
 *        libcrypto lmdb jansson) -lpthread -lm
 * Usage: vote_dump BITS < SET.jsonl > SET.BITS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "common/internal.h"
#include "fingerprint/ctx.h"
#include "fingerprint/auto.h"

int main(int argc, char **argv)
{
	unsigned bits = (unsigned)atoi(argv[1]);
	simhash_config cfg;
	simhash_ctx *ctx;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	simhash_config_init(&cfg);
	cfg.bits = bits;
	if (simhash_ctx_new(&cfg, &ctx))
		return 1;
	while ((got = getline(&line, &cap, stdin)) > 0) {
		json_error_t e;
		json_t *o = json_loadb(line, (size_t)got, 0, &e);
		const char *id = json_string_value(json_object_get(o, "id"));
		json_t *tx = json_object_get(o, "text");
		const char *text = json_string_value(tx);
		size_t len = json_string_length(tx), n;
		uint64_t cl[128] = {0}, cc[128] = {0}, nl = 0, nc = 0;
		int64_t vs[128] = {0}, ws = 0;
		char idbuf[64];
		if (!id) { snprintf(idbuf, sizeof idbuf, "%lld", (long long)json_integer_value(json_object_get(o, "id"))); id = idbuf; }
		if (sh_ctx_features(ctx, text, len, &n))
			return 2;
		for (size_t i = 0; i < n; i++) {
			const uint8_t *p;
			size_t fl;
			uint64_t h[2];
			if (!sh_feats_get(ctx->feats, i, &p, &fl))
				continue;
			sh_hash(SIMHASH_HASH_XXH3, bits, p, fl, h);
			h[0] = sh_exp_mix(h[0], 0);
			h[1] = sh_exp_mix(h[1], 1);
			int cjk = ctx->text.n_chars > 0 && ctx->text.cls[i] == SH_C_CJK;
			uint64_t *c = cjk ? cc : cl;
			for (unsigned j = 0; j < bits; j++)
				c[j] += h[j >> 6] >> (j & 63) & 1;
			if (cjk) nc++; else nl++;
		}
		{ uint64_t mh[2]; sh_auto_shingles(ctx->autov, bits, &ctx->text, 1, vs, &ws, mh); }
		printf("%s\t%zu\t%llu\t%llu\t%lld", id, ctx->text.n_chars, (unsigned long long)nl,
		       (unsigned long long)nc, (long long)ws);
		for (unsigned j = 0; j < bits; j++) printf("\t%llu", (unsigned long long)cl[j]);
		for (unsigned j = 0; j < bits; j++) printf("\t%llu", (unsigned long long)cc[j]);
		for (unsigned j = 0; j < bits; j++) printf("\t%lld", (long long)vs[j]);
		printf("\n");
		json_decref(o);
	}
	simhash_ctx_free(ctx);
	return 0;
}
