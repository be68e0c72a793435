/* config.c - defaults and validation of a configuration. Its scheme string
 * (writing and parsing) lives in scheme.c.
 */
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include "../common/internal.h"

void simhash_config_init(simhash_config *cfg)
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

simhash_err simhash_config_check(const simhash_config *cfg)
{
	if (!cfg || cfg->size < offsetof(simhash_config, idf) + sizeof cfg->idf)
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
