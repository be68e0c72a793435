/* config_set.c - one configuration option, given by name and value as text.
 *
 * The command line's flags (--bits 128, --no-t2s, ...) and the PostgreSQL
 * extension's options string name the same settings; this is the one place
 * that maps such a name and value to a simhash_config field, so both give the
 * same configuration for the same words. Files (--stopwords, --idf) are not
 * options here: their callers load them and set cfg->stopwords and cfg->idf.
 */
#include <limits.h>
#include <string.h>
#include "../common/internal.h"

enum kind { K_ENUM, K_UINT, K_FLAG };

enum field {
	F_BITS, F_COMPAT, F_FEATURES, F_NGRAM, F_NGRAM_CJK, F_TOKENIZER, F_HASH, F_WEIGHT,
	F_TF_CAP, F_CASEFOLD, F_NO_CASEFOLD, F_HTML, F_NO_HTML, F_T2S, F_NO_T2S, F_SPACE,
	F_PUNCT, F_MAX_REPEAT, F_UTF8, F_CHAR_VOTES
};

static const char *const bits_names[] = { "32", "64", "128", NULL };
static const char *const compat_names[] = { "none", "python-simhash", NULL };
static const char *const features_names[] = { "char", "word", "shingle", "auto", NULL };
static const char *const tokenizer_names[] = { "simple", "icu", NULL };
static const char *const hash_names[] = { "xxh3", "fnv1", "fnv1a", "md5", NULL };
static const char *const weight_names[] = { "tf", "binary", "logtf", "tfidf", NULL };
static const char *const space_names[] = { "auto", "collapse", "drop", NULL };
static const char *const punct_names[] = { "drop", "keep", NULL };
static const char *const utf8_names[] = { "replace", "reject", NULL };

static const struct {
	const char *name;
	enum field field;
	enum kind kind;
	const char *const *names; /* K_ENUM: values, in the enum's order */
	unsigned lo, hi;          /* K_UINT: range */
} options[] = {
	{ "bits", F_BITS, K_ENUM, bits_names, 0, 0 },
	{ "compat", F_COMPAT, K_ENUM, compat_names, 0, 0 },
	{ "features", F_FEATURES, K_ENUM, features_names, 0, 0 },
	{ "ngram", F_NGRAM, K_UINT, NULL, 1, 64 },
	{ "ngram-cjk", F_NGRAM_CJK, K_UINT, NULL, 0, 64 },
	{ "tokenizer", F_TOKENIZER, K_ENUM, tokenizer_names, 0, 0 },
	{ "hash", F_HASH, K_ENUM, hash_names, 0, 0 },
	{ "weight", F_WEIGHT, K_ENUM, weight_names, 0, 0 },
	{ "tf-cap", F_TF_CAP, K_UINT, NULL, 0, UINT_MAX },
	{ "casefold", F_CASEFOLD, K_FLAG, NULL, 0, 0 },
	{ "no-casefold", F_NO_CASEFOLD, K_FLAG, NULL, 0, 0 },
	{ "html", F_HTML, K_FLAG, NULL, 0, 0 },
	{ "no-html", F_NO_HTML, K_FLAG, NULL, 0, 0 },
	{ "t2s", F_T2S, K_FLAG, NULL, 0, 0 },
	{ "no-t2s", F_NO_T2S, K_FLAG, NULL, 0, 0 },
	{ "space", F_SPACE, K_ENUM, space_names, 0, 0 },
	{ "punct", F_PUNCT, K_ENUM, punct_names, 0, 0 },
	{ "max-repeat", F_MAX_REPEAT, K_UINT, NULL, 0, UINT_MAX },
	{ "utf8", F_UTF8, K_ENUM, utf8_names, 0, 0 },
	{ "char-votes", F_CHAR_VOTES, K_FLAG, NULL, 0, 0 },
};

/* Decimal digits only (no sign, no space), within [lo, hi]: 0 and *out, or -1. */
static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	unsigned long long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT_MAX)
			return -1;
	}
	if (v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int lookup(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

static void set_field(simhash_config *cfg, enum field f, int e, unsigned v)
{
	switch (f) {
	case F_BITS: cfg->bits = 32u << e; break;
	case F_COMPAT: cfg->compat = (simhash_compat)e; break;
	case F_FEATURES: cfg->features = (simhash_features)e; break;
	case F_NGRAM: cfg->ngram = v; break;
	case F_NGRAM_CJK: cfg->ngram_cjk = v; break;
	case F_TOKENIZER: cfg->tokenizer = (simhash_tokenizer)e; break;
	case F_HASH: cfg->hash = (simhash_hash)e; break;
	case F_WEIGHT: cfg->weight = (simhash_weight)e; break;
	case F_TF_CAP: cfg->tf_cap = v; break;
	case F_CASEFOLD: cfg->casefold = 1; break;
	case F_NO_CASEFOLD: cfg->casefold = 0; break;
	case F_HTML: cfg->html = 1; break;
	case F_NO_HTML: cfg->html = 0; break;
	case F_T2S: cfg->t2s = 1; break;
	case F_NO_T2S: cfg->t2s = 0; break;
	case F_SPACE: cfg->space = (simhash_space)e; break;
	case F_PUNCT: cfg->punct = (simhash_punct)e; break;
	case F_MAX_REPEAT: cfg->max_repeat = v; break;
	case F_UTF8: cfg->utf8 = (simhash_utf8)e; break;
	case F_CHAR_VOTES: cfg->auto_char_votes = 1; break;
	}
}

simhash_err simhash_config_set(simhash_config *cfg, const char *name, const char *value)
{
	size_t i;
	unsigned v = 0;
	int e = 0;

	if (!cfg || !name || cfg->size < offsetof(simhash_config, idf) + sizeof cfg->idf)
		return SIMHASH_EINVAL;
	for (i = 0; i < sizeof options / sizeof options[0]; i++)
		if (!strcmp(options[i].name, name))
			break;
	if (i == sizeof options / sizeof options[0])
		return SIMHASH_EINVAL;
	switch (options[i].kind) {
	case K_FLAG:
		if (value)
			return SIMHASH_EINVAL;
		break;
	case K_ENUM:
		if (!value || (e = lookup(options[i].names, value)) < 0)
			return SIMHASH_EINVAL;
		break;
	case K_UINT:
		if (!value || parse_uint(value, options[i].lo, options[i].hi, &v))
			return SIMHASH_EINVAL;
		break;
	}
	/* a field a caller's older struct does not have */
	if (options[i].field == F_CHAR_VOTES &&
	    cfg->size < offsetof(simhash_config, auto_char_votes) + sizeof cfg->auto_char_votes)
		return SIMHASH_EINVAL;
	set_field(cfg, options[i].field, e, v);
	return SIMHASH_OK;
}

int simhash_config_option_takes_value(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof options / sizeof options[0]; i++)
		if (!strcmp(options[i].name, name))
			return options[i].kind != K_FLAG;
	return -1;
}

const char *simhash_config_value_name(const char *name, unsigned i)
{
	for (size_t o = 0; name && o < sizeof options / sizeof options[0]; o++) {
		if (strcmp(options[o].name, name))
			continue;
		if (options[o].kind != K_ENUM)
			return NULL;
		for (unsigned j = 0; options[o].names[j]; j++)
			if (j == i)
				return options[o].names[j];
		return NULL;
	}
	return NULL;
}

void simhash_config_settle_features(simhash_config *cfg, int features_named)
{
	if (!cfg || features_named || cfg->features != SIMHASH_FEATURES_AUTO)
		return;
	if (cfg->weight != SIMHASH_WEIGHT_TF || cfg->tf_cap || cfg->hash != SIMHASH_HASH_XXH3)
		cfg->features = SIMHASH_FEATURES_CHAR;
}
