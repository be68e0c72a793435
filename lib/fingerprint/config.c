/* config.c - defaults, validation and the canonical scheme string.
 *
 * The scheme string names everything that changes a fingerprint, in a fixed
 * order, and nothing that does not (the UTF-8 policy only decides whether a
 * text is accepted; the tokenizer and stop words do not matter to char
 * n-grams). Fingerprints made under different scheme strings are never to be
 * compared. "v1" changes when the same scheme would give other fingerprints.
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
	cfg->features = SIMHASH_FEATURES_CHAR;
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
	    (unsigned)cfg->features > SIMHASH_FEATURES_SHINGLE ||
	    (unsigned)cfg->tokenizer > SIMHASH_TOKENIZER_ICU ||
	    (unsigned)cfg->hash > SIMHASH_HASH_MD5 || (unsigned)cfg->weight > SIMHASH_WEIGHT_TFIDF)
		return SIMHASH_EINVAL;
	if (cfg->features != SIMHASH_FEATURES_WORD && (cfg->ngram < 1 || cfg->ngram > 64))
		return SIMHASH_EINVAL;
	if (cfg->features == SIMHASH_FEATURES_CHAR && cfg->ngram_cjk > 64)
		return SIMHASH_EINVAL;
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF && !cfg->idf)
		return SIMHASH_EINVAL;
	return SIMHASH_OK;
}

static const char *const hash_names[] = {"xxh3", "fnv1", "fnv1a", "md5"};
static const char *const weight_names[] = {"tf", "binary", "logtf", "tfidf"};
static const char *const space_names[] = {"auto", "collapse", "drop"};
static const char *const punct_names[] = {"drop", "keep"};
static const char *const tok_names[] = {"simple", "icu"};

simhash_err simhash_config_scheme(const simhash_config *cfg, char *buf, size_t cap)
{
	char feat[32], weight[64], norm[64], stop[32] = "";
	int n;

	if (!buf || simhash_config_check(cfg) != SIMHASH_OK)
		return SIMHASH_EINVAL;
	if (cfg->compat == SIMHASH_COMPAT_PYTHON_SIMHASH) {
		n = snprintf(buf, cap, "v1/f%u/python-simhash-2.1.2", cfg->bits);
		return n > 0 && (size_t)n < cap ? SIMHASH_OK : SIMHASH_EINVAL;
	}
	if (cfg->features == SIMHASH_FEATURES_CHAR && cfg->ngram_cjk && cfg->ngram_cjk != cfg->ngram)
		snprintf(feat, sizeof feat, "char%u-cjk%u", cfg->ngram, cfg->ngram_cjk);
	else if (cfg->features == SIMHASH_FEATURES_CHAR)
		snprintf(feat, sizeof feat, "char%u", cfg->ngram);
	else if (cfg->features == SIMHASH_FEATURES_WORD)
		snprintf(feat, sizeof feat, "word-%s", tok_names[cfg->tokenizer]);
	else
		snprintf(feat, sizeof feat, "shingle%u-%s", cfg->ngram, tok_names[cfg->tokenizer]);
	n = snprintf(weight, sizeof weight, "%s", weight_names[cfg->weight]);
	if (cfg->tf_cap && cfg->weight != SIMHASH_WEIGHT_BINARY)
		n += snprintf(weight + n, sizeof weight - (size_t)n, "-cap%u", cfg->tf_cap);
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF)
		snprintf(weight + n, sizeof weight - (size_t)n, "-idf%016llx",
			 (unsigned long long)simhash_idf_digest(cfg->idf));
	snprintf(norm, sizeof norm, "%s%s%s", cfg->casefold ? "nfkc-cf" : "raw",
		 cfg->t2s ? "+t2s" : "", cfg->html ? "+html" : "");
	if (cfg->max_repeat)
		snprintf(norm + strlen(norm), sizeof norm - strlen(norm), "+rep%u", cfg->max_repeat);
	if (cfg->stopwords && cfg->features != SIMHASH_FEATURES_CHAR)
		snprintf(stop, sizeof stop, "/stop%016llx",
			 (unsigned long long)simhash_stopwords_digest(cfg->stopwords));
	n = snprintf(buf, cap, "v1/f%u/%s/%s/%s/%s/sp-%s/pu-%s%s", cfg->bits, feat,
		     hash_names[cfg->hash], weight, norm, space_names[cfg->space],
		     punct_names[cfg->punct], stop);
	return n > 0 && (size_t)n < cap ? SIMHASH_OK : SIMHASH_EINVAL;
}
