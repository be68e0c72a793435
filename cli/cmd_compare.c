/* cmd_compare.c - `simhash compare A B`: how far apart two texts, two files or
 * two fingerprints are.
 *
 * Fingerprints give the Hamming distance and the similarity 1 - distance /
 * width. Texts and files are fingerprinted with the configuration flags and
 * also get the exact cosine and Jaccard similarity of their features
 * (simhash_text_similarity), which is what the fingerprint estimates; under
 * --compat python-simhash the library has no such measure, so texts get the
 * fingerprint figures only.
 * Without --fp, --files or --text the command never guesses silently: two
 * arguments that are both hex fingerprints of the same width are compared as
 * fingerprints; if either one merely looks like a fingerprint (looks_like_fp:
 * a near miss such as a mistyped digit or a digit too many or too few, or a
 * fingerprint next to one of another width) it is a usage error asking for
 * --fp or --text; anything else is compared as texts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "config_opts.h"
#include "util.h"

enum { OPT_FILES, OPT_FP, OPT_TEXT, OPT_JSON };

static const struct cli_opt opts[] = {
	[OPT_FILES] = { "files", 'f', NULL, "A and B are files (- is standard input)" },
	[OPT_FP] = { "fp", 0, NULL, "A and B are hex fingerprints" },
	[OPT_TEXT] = { "text", 't', NULL, "A and B are texts, even if they look like hex" },
	[OPT_JSON] = { "json", 0, NULL, "print one JSON object" },
	{ NULL, 0, NULL, NULL },
};

enum kind { KIND_AUTO, KIND_TEXT, KIND_FILES, KIND_FP };

struct result {
	unsigned distance;
	double similarity;
	int texts; /* cosine and jaccard are set */
	double cosine;
	double jaccard;
};

static void help(void)
{
	fputs("usage: simhash compare [OPTION]... A B\n\n"
	      "Prints the Hamming distance and similarity of two fingerprints, or of the\n"
	      "fingerprints of two texts (or files) together with the exact cosine and\n"
	      "Jaccard similarity of their features. Two arguments that are both hex\n"
	      "fingerprints of one width (8, 16 or 32 digits) are compared as fingerprints.\n"
	      "If one only looks like a fingerprint (7 to 9, 15 to 17 or 31 to 33 characters\n"
	      "without spaces, all hex digits but one at most), or the widths differ, say\n"
	      "--fp or --text: compare never guesses.\n",
	      stdout);
	cli_opts_help(stdout, opts, 1);
}

static int both_fingerprints(const char *a, const char *b, simhash_fp *fa, simhash_fp *fb)
{
	return simhash_fp_parse(a, strlen(a), fa) == SIMHASH_OK &&
	       simhash_fp_parse(b, strlen(b), fb) == SIMHASH_OK;
}

/* Whether s is one edit from a fingerprint: 7-9, 15-17 or 31-33 characters,
 * no whitespace, at most one that is not a hex digit. */
static int looks_like_fp(const char *s)
{
	size_t len = strlen(s), non_hex = 0;

	if (!((len >= 7 && len <= 9) || (len >= 15 && len <= 17) || (len >= 31 && len <= 33)))
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
			return 0;
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			non_hex++;
	}
	return non_hex <= 1;
}

/* Decides what two arguments without --fp, --text or --files are; EXIT_USAGE
 * after saying why if that would be a guess. */
static int auto_kind(const char *a, const char *b, enum kind *kind)
{
	simhash_fp fa, fb;

	if (both_fingerprints(a, b, &fa, &fb) && fa.bits == fb.bits) {
		*kind = KIND_FP;
		return EXIT_OK;
	}
	if (!looks_like_fp(a) && !looks_like_fp(b)) {
		*kind = KIND_TEXT;
		return EXIT_OK;
	}
	if (both_fingerprints(a, b, &fa, &fb))
		cli_err("compare: fingerprints of different widths (%u and %u bits); "
			"use --text to compare them as texts", fa.bits, fb.bits);
	else
		cli_err("compare: '%s' looks like a fingerprint but is not one of 8, 16 or "
			"32 hex digits; use --fp or --text to say which you mean",
			simhash_fp_parse(a, strlen(a), &fa) == SIMHASH_OK ? b
			: looks_like_fp(a) ? a : b);
	return EXIT_USAGE;
}

static int compare_fps(const char *a, const char *b, struct result *r)
{
	simhash_fp fa, fb;

	if (simhash_fp_parse(a, strlen(a), &fa) != SIMHASH_OK) {
		cli_err("compare: not a fingerprint of 8, 16 or 32 hex digits: '%s'", a);
		return EXIT_FAIL;
	}
	if (simhash_fp_parse(b, strlen(b), &fb) != SIMHASH_OK) {
		cli_err("compare: not a fingerprint of 8, 16 or 32 hex digits: '%s'", b);
		return EXIT_FAIL;
	}
	r->distance = simhash_hamming(&fa, &fb);
	if (r->distance == SIMHASH_DIST_INVALID) {
		cli_err("compare: fingerprints of different widths (%u and %u bits)", fa.bits, fb.bits);
		return EXIT_FAIL;
	}
	r->similarity = simhash_similarity(&fa, &fb);
	return EXIT_OK;
}

static int text_error(const simhash_error *e, const char *what)
{
	if (e->code == SIMHASH_EUTF8)
		cli_err("%s: invalid UTF-8 at byte %llu", what, (unsigned long long)e->offset);
	else
		cli_err("%s: %s", what, simhash_strerror(e->code));
	return EXIT_FAIL;
}

/* Compares texts a and b; wa and wb name them in messages. */
static int compare_texts(const simhash_config *cfg, const struct sbuf *a, const struct sbuf *b,
			 const char *wa, const char *wb, struct result *r)
{
	simhash_fp fa, fb;
	simhash_ctx *ctx;
	simhash_error e;
	simhash_err err;
	int ret = EXIT_FAIL;

	err = simhash_ctx_new(cfg, &ctx);
	if (err) {
		cli_err("compare: %s", simhash_strerror(err));
		return err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	err = simhash_fingerprint(ctx, a->p, a->len, &fa, &e);
	if (err) {
		ret = text_error(&e, wa);
		goto out_ctx;
	}
	err = simhash_fingerprint(ctx, b->p, b->len, &fb, &e);
	if (err) {
		ret = text_error(&e, wb);
		goto out_ctx;
	}
	/* The library defines no exact similarity for the Python compatibility
	 * mode (its features are not the configured ones): fingerprints only. */
	if (cfg->compat == SIMHASH_COMPAT_NONE) {
		err = simhash_text_similarity(ctx, a->p, a->len, b->p, b->len, &r->cosine,
					      &r->jaccard, &e);
		if (err) {
			ret = text_error(&e, "compare");
			goto out_ctx;
		}
		r->texts = 1;
	}
	r->distance = simhash_hamming(&fa, &fb);
	r->similarity = simhash_similarity(&fa, &fb);
	ret = EXIT_OK;
out_ctx:
	simhash_ctx_free(ctx);
	return ret;
}

static int load(const char *arg, int is_file, struct sbuf *buf)
{
	if (!is_file) {
		/* Borrowed, never freed or grown: cap 0 keeps sbuf_free() away. */
		buf->p = (char *)arg;
		buf->len = strlen(arg);
		return EXIT_OK;
	}
	if (read_path_all(arg, buf)) {
		cli_err("%s: %s", display_name(arg), strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static void print(const struct result *r, int json)
{
	if (json) {
		printf("{\"distance\":%u,\"similarity\":%.6g", r->distance, r->similarity);
		if (r->texts)
			printf(",\"cosine\":%.6g,\"jaccard\":%.6g", r->cosine, r->jaccard);
		fputs("}\n", stdout);
		return;
	}
	printf("distance\t%u\nsimilarity\t%.6g\n", r->distance, r->similarity);
	if (r->texts)
		printf("cosine\t%.6g\njaccard\t%.6g\n", r->cosine, r->jaccard);
}

static int parse(int argc, char **argv, struct cli_config *cc, enum kind *kind, int *json,
		 int *first)
{
	struct cli_parse p;
	int o, ret = EXIT_OK, n_kinds = 0;

	cli_parse_begin(&p, "compare", opts, cc, argc, argv);
	while (ret == EXIT_OK && (o = cli_parse_next(&p)) != CLI_END) {
		switch (o) {
		case CLI_HELP: help(); ret = -1; break;
		case CLI_BAD: ret = EXIT_USAGE; break;
		case OPT_FILES: *kind = KIND_FILES; n_kinds++; break;
		case OPT_FP: *kind = KIND_FP; n_kinds++; break;
		case OPT_TEXT: *kind = KIND_TEXT; n_kinds++; break;
		case OPT_JSON: *json = 1; break;
		}
	}
	*first = p.optind;
	cli_parse_end(&p);
	if (ret == EXIT_OK && n_kinds > 1) {
		cli_err("compare: --files, --fp and --text exclude each other");
		ret = EXIT_USAGE;
	}
	if (ret == EXIT_OK && argc - *first != 2) {
		cli_err("compare: expected 2 arguments, got %d", argc - *first);
		ret = EXIT_USAGE;
	}
	return ret;
}

int cmd_compare(int argc, char **argv)
{
	struct sbuf a = { 0 }, b = { 0 };
	struct result r = { 0 };
	struct cli_config cc;
	enum kind kind = KIND_AUTO;
	int json = 0, first, ret;

	cli_config_init(&cc);
	ret = parse(argc, argv, &cc, &kind, &json, &first);
	if (ret)
		goto out;
	if (kind == KIND_AUTO) {
		ret = auto_kind(argv[first], argv[first + 1], &kind);
		if (ret)
			goto out;
	}
	if (kind == KIND_FILES && !strcmp(argv[first], "-") && !strcmp(argv[first + 1], "-")) {
		cli_err("compare: standard input (-) given twice");
		ret = EXIT_USAGE;
		goto out;
	}
	if (kind == KIND_FP) {
		ret = compare_fps(argv[first], argv[first + 1], &r);
		goto out_print;
	}
	ret = cli_config_finish(&cc, "compare");
	if (ret)
		goto out;
	ret = load(argv[first], kind == KIND_FILES, &a);
	if (!ret)
		ret = load(argv[first + 1], kind == KIND_FILES, &b);
	if (!ret)
		ret = compare_texts(&cc.cfg, &a, &b,
				    kind == KIND_FILES ? display_name(argv[first]) : "compare: A",
				    kind == KIND_FILES ? display_name(argv[first + 1]) : "compare: B",
				    &r);
out_print:
	if (!ret)
		print(&r, json);
out:
	if (a.cap)
		sbuf_free(&a);
	if (b.cap)
		sbuf_free(&b);
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}
