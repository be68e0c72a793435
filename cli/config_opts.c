/* config_opts.c - the configuration flags shared by every command, and the
 * option parser that merges them with a command's own options.
 *
 * The table below is the one place a flag is named, documented and mapped to
 * a simhash_config field, so `--help` of every command, the parser and the
 * man page's list agree. Values are checked here, where the message can name
 * the flag; simhash_config_check() stays the last word on combinations.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config_opts.h"
#include "util.h"

enum {
	C_BITS,
	C_COMPAT,
	C_FEATURES,
	C_NGRAM,
	C_NGRAM_CJK,
	C_TOKENIZER,
	C_HASH,
	C_WEIGHT,
	C_TF_CAP,
	C_STOPWORDS,
	C_IDF,
	C_CASEFOLD,
	C_NO_CASEFOLD,
	C_HTML,
	C_NO_HTML,
	C_T2S,
	C_NO_T2S,
	C_SPACE,
	C_PUNCT,
	C_MAX_REPEAT,
	C_UTF8,
	C_CHAR_VOTES,
	C_SCHEME,
	C_COUNT
};

static const struct cli_opt cfg_opts[C_COUNT] = {
	[C_BITS] = { "bits", 0, "32|64|128", "fingerprint width" },
	[C_COMPAT] = { "compat", 0, "python-simhash",
		       "match Python's simhash 2.1.2 (ignores feature flags)" },
	[C_FEATURES] = { "features", 0, "auto|char|word|shingle",
			 "what a feature is (auto: char n-grams, word shingles for long texts)" },
	[C_NGRAM] = { "ngram", 'n', "N", "n of char n-grams and word shingles" },
	[C_NGRAM_CJK] = { "ngram-cjk", 0, "N",
			  "n of char n-grams starting at a CJK character (0: as --ngram)" },
	[C_TOKENIZER] = { "tokenizer", 0, "simple|icu", "how words are found" },
	[C_HASH] = { "hash", 0, "xxh3|fnv1|fnv1a|md5", "feature hash" },
	[C_WEIGHT] = { "weight", 0, "tf|binary|logtf|tfidf", "feature weight (tfidf needs --idf)" },
	[C_TF_CAP] = { "tf-cap", 0, "N", "count a feature at most N times, 0: all" },
	[C_STOPWORDS] = { "stopwords", 0, "FILE", "drop the words listed in FILE, one a line" },
	[C_IDF] = { "idf", 0, "FILE|jieba",
		    "IDF table; 'jieba': python3-jieba's idf.txt" },
	[C_CASEFOLD] = { "casefold", 0, NULL, "NFKC and case folding" },
	[C_NO_CASEFOLD] = { "no-casefold", 0, NULL, "keep case and compatibility forms" },
	[C_HTML] = { "html", 0, NULL, "strip HTML markup, decode entities" },
	[C_NO_HTML] = { "no-html", 0, NULL, "do not strip HTML" },
	[C_T2S] = { "t2s", 0, NULL, "fold traditional Chinese to simplified" },
	[C_NO_T2S] = { "no-t2s", 0, NULL, "keep traditional Chinese" },
	[C_SPACE] = { "space", 0, "auto|collapse|drop", "what runs of white space become" },
	[C_PUNCT] = { "punct", 0, "drop|keep", "drop punctuation, or keep it" },
	[C_MAX_REPEAT] = { "max-repeat", 0, "N", "cut runs of a character to N (0: off)" },
	[C_UTF8] = { "utf8", 0, "replace|reject", "invalid UTF-8: U+FFFD, or fail" },
	[C_CHAR_VOTES] = { "char-votes", 0, NULL,
			   "auto: short texts by centered n-gram votes (v2 as first released)" },
	[C_SCHEME] = { "scheme", 0, "STRING",
		       "the configuration a scheme string names (see `simhash scheme`)" },
};

#define VAL_CMD 256  /* getopt value of the command's option i: VAL_CMD + i */
#define VAL_CFG 1024 /* of configuration option i: VAL_CFG + i */

void cli_config_init(struct cli_config *cc)
{
	memset(cc, 0, sizeof(*cc));
	simhash_config_init(&cc->cfg);
}

void cli_config_free(struct cli_config *cc)
{
	simhash_stopwords_free(cc->stopwords);
	simhash_idf_free(cc->idf);
	cc->stopwords = NULL;
	cc->idf = NULL;
}

static int bad_value(const struct cli_parse *p, int id, const char *arg)
{
	const struct cli_opt *c = &cfg_opts[id];

	if (simhash_config_value_name(c->name, 0))
		cli_err("%s: invalid --%s '%s' (expected %s)", p->cmd, c->name, arg, c->arg);
	else
		cli_err("%s: invalid --%s '%s' (expected a number)", p->cmd, c->name, arg);
	return CLI_BAD;
}

/* Applies configuration option id with argument arg to p->cc: 0 or CLI_BAD.
 * The library maps names and values to fields (simhash_config_set), so the
 * PostgreSQL extension's options string reads them the same way; the files
 * of --stopwords and --idf are loaded by cli_config_finish. */
static int apply(struct cli_parse *p, int id, const char *arg)
{
	p->cc->set |= 1ul << id;
	switch (id) {
	case C_STOPWORDS: p->cc->stopwords_path = arg; return 0;
	case C_IDF: p->cc->idf_path = strcmp(arg, "jieba") ? arg : JIEBA_IDF_PATH; return 0;
	case C_SCHEME: p->cc->scheme = arg; return 0;
	}
	if (simhash_config_set(&p->cc->cfg, cfg_opts[id].name, arg) != SIMHASH_OK)
		return bad_value(p, id, arg);
	return 0;
}

void cli_parse_begin(struct cli_parse *p, const char *cmd, const struct cli_opt *opts,
		     struct cli_config *cc, int argc, char **argv)
{
	struct option *lo;
	size_t n_cmd = 0, n = 0, k = 1, i;

	while (opts && opts[n_cmd].name)
		n_cmd++;
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->opts = opts;
	p->cc = cc;
	p->argc = argc;
	p->argv = argv;
	lo = xcalloc(n_cmd + C_COUNT + 2, sizeof(*lo));
	/* ':' first: a missing argument is told apart from an unknown option. */
	p->shortopts[0] = ':';
	for (i = 0; i < n_cmd + (cc ? C_COUNT : 0); i++) {
		const struct cli_opt *o = i < n_cmd ? &opts[i] : &cfg_opts[i - n_cmd];

		lo[n].name = o->name;
		lo[n].has_arg = o->arg ? required_argument : no_argument;
		lo[n].val = i < n_cmd ? VAL_CMD + (int)i : VAL_CFG + (int)(i - n_cmd);
		n++;
		if (o->short_name && k + 3 < sizeof(p->shortopts)) {
			p->shortopts[k++] = (char)o->short_name;
			if (o->arg)
				p->shortopts[k++] = ':';
		}
	}
	lo[n].name = "help";
	lo[n].val = 'h';
	p->shortopts[k++] = 'h';
	p->shortopts[k] = '\0';
	p->longopts = lo;
	optind = 0; /* glibc: start over, as every command parses its own argv */
	opterr = 0;
}

void cli_parse_end(struct cli_parse *p)
{
	free(p->longopts);
	p->longopts = NULL;
}

/* Maps a short option character to its getopt value. */
static int short_val(const struct cli_parse *p, int c)
{
	int i;

	for (i = 0; p->opts && p->opts[i].name; i++)
		if (p->opts[i].short_name == c)
			return VAL_CMD + i;
	for (i = 0; p->cc && i < C_COUNT; i++)
		if (cfg_opts[i].short_name == c)
			return VAL_CFG + i;
	return -1;
}

int cli_parse_next(struct cli_parse *p)
{
	const char *bad;
	int c;

	for (;;) {
		c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, NULL);
		p->arg = optarg;
		if (c == -1) {
			p->optind = optind;
			return CLI_END;
		}
		bad = p->argv[optind - 1];
		if (c == ':') {
			cli_err("%s: option '%s' needs an argument", p->cmd, bad);
			return CLI_BAD;
		}
		if (c == '?') {
			if (optopt >= VAL_CMD)
				cli_err("%s: option '%s' takes no argument", p->cmd, bad);
			else if (optopt)
				cli_err("%s: unknown option '-%c'", p->cmd, optopt);
			else
				cli_err("%s: unknown option '%s'", p->cmd, bad);
			return CLI_BAD;
		}
		if (c == 'h')
			return CLI_HELP;
		if (c < VAL_CMD)
			c = short_val(p, c);
		if (c >= VAL_CFG) {
			if (apply(p, c - VAL_CFG, optarg))
				return CLI_BAD;
			continue;
		}
		return c - VAL_CMD;
	}
}

/* Checks that path can be opened, to report the system's reason: the library
 * only says SIMHASH_EIO. */
static int can_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		cli_err("%s: %s", path, strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

static int load_error(const char *path, simhash_err err, size_t line, const char *what)
{
	if (err == SIMHASH_ECORRUPT && line && !strcmp(what, "IDF"))
		cli_err("%s:%zu: not a valid IDF line (expected TERM<TAB>IDF, IDF a number >= 0)",
			path, line);
	else if (err == SIMHASH_ECORRUPT && line)
		cli_err("%s:%zu: not a valid %s line", path, line, what);
	else
		cli_err("%s: %s", path, simhash_strerror(err));
	return EXIT_FAIL;
}

/* Replaces the configuration with the one cc->scheme names, keeping the
 * UTF-8 policy and the tables loaded from --idf and --stopwords. */
static int apply_scheme(struct cli_config *cc, const char *cmd)
{
	const unsigned long keep = 1ul << C_UTF8 | 1ul << C_IDF | 1ul << C_STOPWORDS | 1ul << C_SCHEME;
	unsigned which = 0;
	uint64_t idf_d = 0, stop_d = 0;
	simhash_err err;
	int i;

	for (i = 0; i < C_COUNT; i++)
		if ((cc->set & ~keep) & (1ul << i)) {
			cli_err("%s: --scheme cannot be combined with --%s", cmd, cfg_opts[i].name);
			return EXIT_USAGE;
		}
	if (simhash_scheme_tables(cc->scheme, &which, &idf_d, &stop_d) != SIMHASH_OK) {
		cli_err("%s: invalid --scheme '%s' (see `simhash scheme`)", cmd, cc->scheme);
		return EXIT_USAGE;
	}
	if ((which & SIMHASH_SCHEME_IDF) && !cc->idf) {
		cli_err("%s: the scheme needs --idf FILE (an IDF table of digest %016llx)", cmd,
			(unsigned long long)idf_d);
		return EXIT_USAGE;
	}
	if ((which & SIMHASH_SCHEME_STOPWORDS) && !cc->stopwords) {
		cli_err("%s: the scheme needs --stopwords FILE (a list of digest %016llx)", cmd,
			(unsigned long long)stop_d);
		return EXIT_USAGE;
	}
	if ((cc->idf && !(which & SIMHASH_SCHEME_IDF)) ||
	    (cc->stopwords && !(which & SIMHASH_SCHEME_STOPWORDS))) {
		cli_err("%s: the scheme names no %s", cmd,
			cc->idf && !(which & SIMHASH_SCHEME_IDF) ? "IDF table" : "stop word list");
		return EXIT_USAGE;
	}
	err = simhash_config_from_scheme(cc->scheme, &cc->cfg);
	if (err == SIMHASH_ESCHEME) {
		if ((which & SIMHASH_SCHEME_IDF) && simhash_idf_digest(cc->idf) != idf_d)
			cli_err("%s: %s: IDF table of digest %016llx, the scheme needs %016llx", cmd,
				cc->idf_path, (unsigned long long)simhash_idf_digest(cc->idf),
				(unsigned long long)idf_d);
		else
			cli_err("%s: %s: stop word list of digest %016llx, the scheme needs %016llx",
				cmd, cc->stopwords_path,
				(unsigned long long)simhash_stopwords_digest(cc->stopwords),
				(unsigned long long)stop_d);
		return EXIT_FAIL;
	}
	if (err) {
		cli_err("%s: --scheme: %s", cmd, simhash_strerror(err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_config_finish(struct cli_config *cc, const char *cmd)
{
	simhash_config *cfg = &cc->cfg;
	simhash_err err;
	simhash_error e;

	if (cfg->compat == SIMHASH_COMPAT_PYTHON_SIMHASH && cfg->bits == 32) {
		cli_err("%s: --compat python-simhash needs --bits 64 or 128", cmd);
		return EXIT_USAGE;
	}
	if (!cfg->compat && cfg->weight == SIMHASH_WEIGHT_TFIDF && !cc->idf_path) {
		cli_err("%s: --weight tfidf needs --idf FILE (or --idf jieba)", cmd);
		return EXIT_USAGE;
	}
	if (cc->stopwords_path) {
		if (!can_open(cc->stopwords_path))
			return EXIT_FAIL;
		err = simhash_stopwords_load(cc->stopwords_path, &cc->stopwords, &e);
		if (err)
			return load_error(cc->stopwords_path, err, (size_t)e.line, "stop word");
		cfg->stopwords = cc->stopwords;
	}
	if (cc->idf_path) {
		if (!can_open(cc->idf_path))
			return EXIT_FAIL;
		err = simhash_idf_load(cc->idf_path, &cc->idf, &e);
		if (err)
			return load_error(cc->idf_path, err, (size_t)e.line, "IDF");
		cfg->idf = cc->idf;
	}
	/* --weight, --tf-cap or --hash alone mean the char n-grams of scheme v1 */
	simhash_config_settle_features(cfg, !!(cc->set & 1ul << C_FEATURES));
	if (cc->scheme) {
		int ret = apply_scheme(cc, cmd);
		if (ret != EXIT_OK)
			return ret;
	}
	/* Checked last, once every option (a scheme string too) has set the
	 * weight: an IDF table would change nothing, so say so, never ignore it. */
	if (cc->idf_path && (cfg->compat || cfg->weight != SIMHASH_WEIGHT_TFIDF)) {
		cli_err("%s: --idf is used only with --weight tfidf%s", cmd,
			cfg->compat ? " (and not under --compat)" : "");
		return EXIT_USAGE;
	}
	if (simhash_config_check(cfg) != SIMHASH_OK) {
		cli_err("%s: these options do not make a valid configuration", cmd);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* The name of value v of enum option id, or "?" for one the library does
 * not name. */
static const char *name_of(int id, unsigned v)
{
	const char *name = simhash_config_value_name(cfg_opts[id].name, v);

	return name ? name : "?";
}

/* Marks the flag of an on/off pair that is the default: "--no-html (default:
 * on)" read as if stripping were on. */
static const char THE_DEFAULT[] = "";

/* The default of configuration option id, or NULL if it has none worth showing. */
static const char *default_of(int id, const simhash_config *d, char *buf, size_t cap)
{
	switch (id) {
	case C_BITS: snprintf(buf, cap, "%u", d->bits); return buf;
	case C_FEATURES: return name_of(C_FEATURES, d->features);
	case C_NGRAM: snprintf(buf, cap, "%u", d->ngram); return buf;
	case C_NGRAM_CJK: snprintf(buf, cap, "%u", d->ngram_cjk); return buf;
	case C_TOKENIZER: return name_of(C_TOKENIZER, d->tokenizer);
	case C_HASH: return name_of(C_HASH, d->hash);
	case C_WEIGHT: return name_of(C_WEIGHT, d->weight);
	case C_TF_CAP: snprintf(buf, cap, "%u", d->tf_cap); return buf;
	case C_CASEFOLD: return d->casefold ? THE_DEFAULT : NULL;
	case C_NO_CASEFOLD: return d->casefold ? NULL : THE_DEFAULT;
	case C_HTML: return d->html ? THE_DEFAULT : NULL;
	case C_NO_HTML: return d->html ? NULL : THE_DEFAULT;
	case C_T2S: return d->t2s ? THE_DEFAULT : NULL;
	case C_NO_T2S: return d->t2s ? NULL : THE_DEFAULT;
	case C_SPACE: return name_of(C_SPACE, d->space);
	case C_PUNCT: return name_of(C_PUNCT, d->punct);
	case C_MAX_REPEAT: snprintf(buf, cap, "%u", d->max_repeat); return buf;
	case C_UTF8: return name_of(C_UTF8, d->utf8);
	}
	return NULL;
}

static void help_line(FILE *f, const struct cli_opt *o, const char *dflt)
{
	char left[64];

	if (o->short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	if (strlen(left) > 24)
		fprintf(f, "  %s\n  %-24s  ", left, "");
	else
		fprintf(f, "  %-24s  ", left);
	fputs(o->help, f);
	if (dflt == THE_DEFAULT)
		fputs(" (the default)", f);
	else if (dflt)
		fprintf(f, " (default: %s)", dflt);
	fputc('\n', f);
}

void cli_opts_help(FILE *f, const struct cli_opt *opts, int config)
{
	simhash_config d;
	char buf[32];
	int i;

	fputs("\nOptions:\n", f);
	for (i = 0; opts && opts[i].name; i++)
		help_line(f, &opts[i], NULL);
	help_line(f, &(struct cli_opt){ "help", 'h', NULL, "show this help" }, NULL);
	if (!config)
		return;
	simhash_config_init(&d);
	fputs("\nFingerprint configuration (see `simhash scheme`):\n", f);
	for (i = 0; i < C_COUNT; i++)
		help_line(f, &cfg_opts[i], default_of(i, &d, buf, sizeof(buf)));
}
