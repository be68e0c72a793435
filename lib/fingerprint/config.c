/* config.c - defaults and validation of a configuration. Its scheme string
 * (writing and parsing) lives in scheme.c.
 */
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include "../common/internal.h"

static void config_defaults(simhash_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->size = sizeof *cfg;
	cfg->bits = 64;
	cfg->compat = SIMHASH_COMPAT_NONE;
	cfg->casefold = 1;
	cfg->html = 0;
	cfg->t2s = 1;
	cfg->space = SIMHASH_SPACE_AUTO;
	cfg->punct = SIMHASH_PUNCT_DROP;
	cfg->max_repeat = 0;
	cfg->utf8 = SIMHASH_UTF8_REPLACE;
	cfg->features = SIMHASH_FEATURES_AUTO;
	cfg->ngram = 3;
	cfg->ngram_cjk = 2;
	cfg->tokenizer = SIMHASH_TOKENIZER_SIMPLE;
	cfg->hash = SIMHASH_HASH_XXH3;
	cfg->weight = SIMHASH_WEIGHT_TF;
	cfg->tf_cap = 0;
	cfg->stopwords = NULL;
	cfg->idf = NULL;
}

/* The caller's struct may be older (smaller) or newer (larger) than ours:
 * write only the bytes both know, and record how many that is. */
void simhash_config_init_sized(simhash_config *cfg, size_t size)
{
	simhash_config d;

	if (!cfg || size < sizeof cfg->size)
		return;
	config_defaults(&d);
	d.size = size < sizeof d ? size : sizeof d;
	memcpy(cfg, &d, d.size);
}

/* The ABI symbol of the first release, whose callers call it directly (the
 * macro came later): their struct is the first release's. */
#undef simhash_config_init
void simhash_config_init(simhash_config *cfg)
{
	simhash_config_init_sized(cfg, SH_CONFIG_V1_SIZE);
}

void sh_config_copy(simhash_config *dst, const simhash_config *src)
{
	size_t n = src->size < sizeof *dst ? src->size : sizeof *dst;

	config_defaults(dst);
	memcpy(dst, src, n);
	dst->size = sizeof *dst;
}

simhash_err simhash_config_check(const simhash_config *cfg)
{
	if (!cfg || cfg->size < SH_CONFIG_V1_SIZE)
		return SIMHASH_EINVAL;
	if (cfg->compat == SIMHASH_COMPAT_PYTHON_SIMHASH)
		return (cfg->bits == 64 || cfg->bits == 128) ? SIMHASH_OK : SIMHASH_EINVAL;
	if (cfg->compat != SIMHASH_COMPAT_NONE)
		return SIMHASH_EINVAL;
	if (cfg->bits != 32 && cfg->bits != 64 && cfg->bits != 128)
		return SIMHASH_EINVAL;
	if ((unsigned)cfg->space > SIMHASH_SPACE_DROP || (unsigned)cfg->punct > SIMHASH_PUNCT_KEEP ||
	    (unsigned)cfg->utf8 > SIMHASH_UTF8_REJECT ||
	    (unsigned)cfg->features > SIMHASH_FEATURES_AUTO ||
	    (unsigned)cfg->tokenizer > SIMHASH_TOKENIZER_ICU ||
	    (unsigned)cfg->hash > SIMHASH_HASH_MD5 || (unsigned)cfg->weight > SIMHASH_WEIGHT_TFIDF)
		return SIMHASH_EINVAL;
	if (cfg->features != SIMHASH_FEATURES_WORD && (cfg->ngram < 1 || cfg->ngram > 64))
		return SIMHASH_EINVAL;
	if ((cfg->features == SIMHASH_FEATURES_CHAR || cfg->features == SIMHASH_FEATURES_AUTO) &&
	    cfg->ngram_cjk > 64)
		return SIMHASH_EINVAL;
	if (cfg->features == SIMHASH_FEATURES_AUTO &&
	    (cfg->hash != SIMHASH_HASH_XXH3 || cfg->weight != SIMHASH_WEIGHT_TF || cfg->tf_cap))
		return SIMHASH_EINVAL;
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF && !cfg->idf)
		return SIMHASH_EINVAL;
	return SIMHASH_OK;
}
