/* scheme.c - the canonical scheme string of a configuration, and its parser.
 *
 * The scheme string names everything that changes a fingerprint, in a fixed
 * order, and nothing that does not (the UTF-8 policy only decides whether a
 * text is accepted; the tokenizer and stop words do not matter to char
 * n-grams). Fingerprints made under different scheme strings are never to be
 * compared. The version changes when the same options would give other
 * fingerprints: "v1" for char, word and shingle features and the Python
 * compatibility mode; "v2" for the length-adaptive default ("auto"), whose
 * short texts take a one-bit MinHash of their char n-grams ("-cmh1"), or, as
 * first released (auto_char_votes), their char votes, centered by the built-in table of center_table.h where its
 * n-grams are those the table was made for ("-cen1") and whose documents are
 * fingerprinted by one-bit MinHash of their shingles ("-mh1"; auto.c).
 *
 * Invariants:
 *  1. render(cfg) is a function of the fields that change fingerprints only.
 *  2. parse accepts exactly the strings render writes: it parses, renders the
 *     result again and compares, so a string with a leading zero, options out
 *     of order or an unknown part is SIMHASH_ECORRUPT, never a near guess.
 *  3. parse(render(cfg)) renders to render(cfg) again (round trip), for every
 *     valid cfg; IDF and stop-word tables are named by digest only, so the
 *     caller supplies them and parse checks their digests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include "../common/internal.h"
#include "auto.h"

static const char *const hash_names[] = {"xxh3", "fnv1", "fnv1a", "md5", NULL};
static const char *const weight_names[] = {"tf", "binary", "logtf", "tfidf", NULL};
static const char *const space_names[] = {"auto", "collapse", "drop", NULL};
static const char *const punct_names[] = {"drop", "keep", NULL};
static const char *const tok_names[] = {"simple", "icu", NULL};

#define COMPAT_NAME "python-simhash-2.1.2"

/* The tables a scheme names, by digest. */
struct tables {
	unsigned which; /* SIMHASH_SCHEME_IDF | SIMHASH_SCHEME_STOPWORDS */
	uint64_t idf;
	uint64_t stop;
};

/* Whether cfg's features start from char n-grams (ngram, ngram_cjk; no
 * stop words): "char" (v1) and the length-adaptive "auto" (v2). */
static int is_char(const simhash_config *cfg)
{
	return cfg->features == SIMHASH_FEATURES_CHAR || cfg->features == SIMHASH_FEATURES_AUTO;
}

static const char *char_name(const simhash_config *cfg)
{
	return cfg->features == SIMHASH_FEATURES_AUTO ? "auto" : "char";
}

/* Writes the scheme of a checked cfg, naming its tables by the digests in t. */
static simhash_err render(const simhash_config *cfg, const struct tables *t, char *buf, size_t cap)
{
	char feat[32], weight[64], norm[64], stop[32] = "";
	int n;

	if (cfg->compat == SIMHASH_COMPAT_PYTHON_SIMHASH) {
		n = snprintf(buf, cap, "v1/f%u/" COMPAT_NAME, cfg->bits);
		return n > 0 && (size_t)n < cap ? SIMHASH_OK : SIMHASH_EINVAL;
	}
	if (is_char(cfg) && cfg->ngram_cjk && cfg->ngram_cjk != cfg->ngram)
		snprintf(feat, sizeof feat, "%s%u-cjk%u", char_name(cfg), cfg->ngram, cfg->ngram_cjk);
	else if (is_char(cfg))
		snprintf(feat, sizeof feat, "%s%u", char_name(cfg), cfg->ngram);
	else if (cfg->features == SIMHASH_FEATURES_WORD)
		snprintf(feat, sizeof feat, "word-%s", tok_names[cfg->tokenizer]);
	else
		snprintf(feat, sizeof feat, "shingle%u-%s", cfg->ngram, tok_names[cfg->tokenizer]);
	if (cfg->features == SIMHASH_FEATURES_AUTO && !cfg->auto_char_votes)
		strcat(feat, "-cmh1");
	if (cfg->features == SIMHASH_FEATURES_AUTO && sh_auto_centered(cfg))
		strcat(feat, "-cen1");
	if (cfg->features == SIMHASH_FEATURES_AUTO)
		strcat(feat, "-mh1");
	n = snprintf(weight, sizeof weight, "%s", weight_names[cfg->weight]);
	if (cfg->tf_cap && cfg->weight != SIMHASH_WEIGHT_BINARY)
		n += snprintf(weight + n, sizeof weight - (size_t)n, "-cap%u", cfg->tf_cap);
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF)
		snprintf(weight + n, sizeof weight - (size_t)n, "-idf%016llx",
			 (unsigned long long)t->idf);
	snprintf(norm, sizeof norm, "%s%s%s", cfg->casefold ? "nfkc-cf" : "raw",
		 cfg->t2s ? "+t2s" : "", cfg->html ? "+html" : "");
	if (cfg->max_repeat)
		snprintf(norm + strlen(norm), sizeof norm - strlen(norm), "+rep%u", cfg->max_repeat);
	if ((t->which & SIMHASH_SCHEME_STOPWORDS) && !is_char(cfg))
		snprintf(stop, sizeof stop, "/stop%016llx", (unsigned long long)t->stop);
	n = snprintf(buf, cap, "%s/f%u/%s/%s/%s/%s/sp-%s/pu-%s%s",
		     cfg->features == SIMHASH_FEATURES_AUTO ? "v2" : "v1", cfg->bits, feat,
		     hash_names[cfg->hash], weight, norm, space_names[cfg->space],
		     punct_names[cfg->punct], stop);
	return n > 0 && (size_t)n < cap ? SIMHASH_OK : SIMHASH_EINVAL;
}

simhash_err simhash_config_scheme(const simhash_config *cfg, char *buf, size_t cap)
{
	struct tables t = {0, 0, 0};

	if (!buf || simhash_config_check(cfg) != SIMHASH_OK)
		return SIMHASH_EINVAL;
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF) {
		t.which |= SIMHASH_SCHEME_IDF;
		t.idf = simhash_idf_digest(cfg->idf);
	}
	if (cfg->stopwords) {
		t.which |= SIMHASH_SCHEME_STOPWORDS;
		t.stop = simhash_stopwords_digest(cfg->stopwords);
	}
	return render(cfg, &t, buf, cap);
}

/* ---------------------------------------------------------------- parsing */

/* If *s starts with prefix, skips it and returns 1. */
static int eat(const char **s, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(*s, prefix, n))
		return 0;
	*s += n;
	return 1;
}

/* A decimal number of at most 9 digits (leading zeros are caught by the
 * re-rendering). */
static int eat_uint(const char **s, unsigned *out)
{
	unsigned v = 0;
	int n = 0;

	while (**s >= '0' && **s <= '9' && n < 9) {
		v = v * 10 + (unsigned)(**s - '0');
		(*s)++;
		n++;
	}
	*out = v;
	return n > 0 && !(**s >= '0' && **s <= '9');
}

/* Exactly 16 lowercase hex digits. */
static int eat_hex64(const char **s, uint64_t *out)
{
	uint64_t v = 0;

	for (int i = 0; i < 16; i++) {
		char c = (*s)[i];
		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return 0;
	}
	*s += 16;
	*out = v;
	return 1;
}

/* The longest name of names that *s starts with; its index, or -1. */
static int eat_name(const char **s, const char *const *names)
{
	int best = -1;
	size_t best_len = 0;

	for (int i = 0; names[i]; i++) {
		size_t n = strlen(names[i]);
		if (n > best_len && !strncmp(*s, names[i], n)) {
			best = i;
			best_len = n;
		}
	}
	*s += best_len;
	return best;
}

/* "char3-cjk2", "char3", "auto3-cjk2-cmh1-mh1", "auto3-cjk2-cen1-mh1",
 * "auto4-mh1", "word-icu", "shingle3-simple". "-cen1" is checked by the
 * re-rendering: it is there iff auto votes are centered. */
static int parse_features(const char **s, simhash_config *cfg)
{
	int tok, is_auto = eat(s, "auto");

	if (is_auto || eat(s, "char")) {
		cfg->features = is_auto ? SIMHASH_FEATURES_AUTO : SIMHASH_FEATURES_CHAR;
		if (!eat_uint(s, &cfg->ngram))
			return 0;
		cfg->ngram_cjk = cfg->ngram;
		if (eat(s, "-cjk") && !eat_uint(s, &cfg->ngram_cjk))
			return 0;
		if (!is_auto)
			return 1;
		/* "-cmh1": MinHash of the char n-grams; else their votes,
		 * "-cen1" when centered */
		cfg->auto_char_votes = !eat(s, "-cmh1");
		if (cfg->auto_char_votes)
			(void)eat(s, "-cen1");
		return eat(s, "-mh1");
	}
	if (eat(s, "word-"))
		cfg->features = SIMHASH_FEATURES_WORD;
	else if (eat(s, "shingle")) {
		cfg->features = SIMHASH_FEATURES_SHINGLE;
		if (!eat_uint(s, &cfg->ngram) || !eat(s, "-"))
			return 0;
	} else
		return 0;
	tok = eat_name(s, tok_names);
	cfg->tokenizer = (simhash_tokenizer)tok;
	return tok >= 0;
}

/* "tf", "logtf-cap5", "tfidf-idf0123456789abcdef". */
static int parse_weight(const char **s, simhash_config *cfg, struct tables *t)
{
	int w = eat_name(s, weight_names);

	if (w < 0)
		return 0;
	cfg->weight = (simhash_weight)w;
	cfg->tf_cap = 0;
	if (eat(s, "-cap") && !eat_uint(s, &cfg->tf_cap))
		return 0;
	if (cfg->weight == SIMHASH_WEIGHT_TFIDF) {
		if (!eat(s, "-idf") || !eat_hex64(s, &t->idf))
			return 0;
		t->which |= SIMHASH_SCHEME_IDF;
	}
	return 1;
}

/* "nfkc-cf+t2s+html+rep3", "raw". */
static int parse_norm(const char **s, simhash_config *cfg)
{
	if (eat(s, "nfkc-cf"))
		cfg->casefold = 1;
	else if (eat(s, "raw"))
		cfg->casefold = 0;
	else
		return 0;
	cfg->t2s = eat(s, "+t2s");
	cfg->html = eat(s, "+html");
	cfg->max_repeat = 0;
	return !eat(s, "+rep") || eat_uint(s, &cfg->max_repeat);
}

/* The parts after the width, up to the end of the string. */
static int parse_native(const char *s, simhash_config *cfg, struct tables *t)
{
	int sp, pu, h;

	cfg->compat = SIMHASH_COMPAT_NONE;
	if (!parse_features(&s, cfg) || !eat(&s, "/"))
		return 0;
	h = eat_name(&s, hash_names);
	if (h < 0 || !eat(&s, "/"))
		return 0;
	cfg->hash = (simhash_hash)h;
	if (!parse_weight(&s, cfg, t) || !eat(&s, "/") || !parse_norm(&s, cfg) ||
	    !eat(&s, "/sp-"))
		return 0;
	sp = eat_name(&s, space_names);
	if (sp < 0 || !eat(&s, "/pu-"))
		return 0;
	pu = eat_name(&s, punct_names);
	if (pu < 0)
		return 0;
	cfg->space = (simhash_space)sp;
	cfg->punct = (simhash_punct)pu;
	if (eat(&s, "/stop")) {
		if (!eat_hex64(&s, &t->stop))
			return 0;
		t->which |= SIMHASH_SCHEME_STOPWORDS;
	}
	return *s == '\0';
}

/* Parses scheme into cfg and t; SIMHASH_ECORRUPT unless it is canonical. */
static simhash_err parse(const char *scheme, simhash_config *cfg, struct tables *t)
{
	char again[SIMHASH_SCHEME_MAX];
	const char *s = scheme;
	simhash_config chk;
	int ok;

	t->which = 0;
	t->idf = 0;
	t->stop = 0;
	if (strlen(scheme) >= SIMHASH_SCHEME_MAX || !(eat(&s, "v1/f") || eat(&s, "v2/f")) ||
	    !eat_uint(&s, &cfg->bits) || !eat(&s, "/"))
		return SIMHASH_ECORRUPT;
	if (!strcmp(s, COMPAT_NAME)) {
		cfg->compat = SIMHASH_COMPAT_PYTHON_SIMHASH;
		ok = 1;
	} else {
		ok = parse_native(s, cfg, t);
	}
	if (!ok)
		return SIMHASH_ECORRUPT;
	/* Check with stand-ins for the tables, which only need to exist here. */
	chk = *cfg;
	chk.size = sizeof chk;
	chk.idf = (t->which & SIMHASH_SCHEME_IDF) ? (const simhash_idf *)scheme : NULL;
	chk.stopwords = NULL;
	if (simhash_config_check(&chk) != SIMHASH_OK)
		return SIMHASH_ECORRUPT;
	if (render(&chk, t, again, sizeof again) != SIMHASH_OK || strcmp(again, scheme))
		return SIMHASH_ECORRUPT;
	return SIMHASH_OK;
}

simhash_err simhash_config_from_scheme(const char *scheme, simhash_config *cfg)
{
	simhash_config c;
	struct tables t;
	simhash_err err;

	size_t n;

	if (!scheme || !cfg || cfg->size < offsetof(simhash_config, idf) + sizeof cfg->idf)
		return SIMHASH_EINVAL;
	/* Only the caller's fields are read and written (an older caller's
	 * struct may be shorter than ours). */
	n = cfg->size < sizeof c ? cfg->size : sizeof c;
	simhash_config_init(&c);
	memcpy(&c, cfg, n);
	err = parse(scheme, &c, &t);
	if (err)
		return err;
	if (!(t.which & SIMHASH_SCHEME_STOPWORDS) && c.compat == SIMHASH_COMPAT_NONE &&
	    !is_char(&c))
		c.stopwords = NULL;
	if ((t.which & SIMHASH_SCHEME_IDF) &&
	    (!c.idf || simhash_idf_digest(c.idf) != t.idf))
		err = SIMHASH_ESCHEME;
	if ((t.which & SIMHASH_SCHEME_STOPWORDS) &&
	    (!c.stopwords || simhash_stopwords_digest(c.stopwords) != t.stop))
		err = SIMHASH_ESCHEME;
	memcpy(cfg, &c, n);
	return err;
}

simhash_err simhash_scheme_tables(const char *scheme, unsigned *which, uint64_t *idf_digest,
				  uint64_t *stopwords_digest)
{
	simhash_config c;
	struct tables t;
	simhash_err err;

	if (!scheme)
		return SIMHASH_EINVAL;
	simhash_config_init(&c);
	err = parse(scheme, &c, &t);
	if (err)
		return err;
	if (which)
		*which = t.which;
	if (idf_digest)
		*idf_digest = t.idf;
	if (stopwords_digest)
		*stopwords_digest = t.stop;
	return SIMHASH_OK;
}
