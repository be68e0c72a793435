/* cmd_idf.c - `simhash idf build CORPUS... -o FILE`: an IDF table of the
 * features the configuration flags define, for --weight tfidf.
 *
 * A corpus holds one document per line (empty lines are skipped: they would
 * only add to the document count), or one JSON record per line (--jsonl).
 * Counting is one thread: an IDF table takes one writer. The library writes
 * the table atomically.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "config_opts.h"
#include "jsonl.h"
#include "reader.h"
#include "util.h"

#define CHUNK_BYTES ((size_t)1 << 20)
#define CHUNK_LINES 65536

enum { OPT_JSONL, OPT_TEXT_FIELD, OPT_OUTPUT, OPT_KEEP_GOING };

static const struct cli_opt opts[] = {
	[OPT_JSONL] = { "jsonl", 0, NULL, "each line is a JSON object with a text field" },
	[OPT_TEXT_FIELD] = { "text-field", 0, "NAME", "the text field of --jsonl (default: text)" },
	[OPT_OUTPUT] = { "output", 'o', "FILE", "write the table to FILE (term<TAB>idf lines)" },
	[OPT_KEEP_GOING] = { "keep-going", 'k', NULL,
			     "report a bad record or file and go on; exit 1 at the end" },
	{ NULL, 0, NULL, NULL },
};

struct build {
	simhash_ctx *ctx;
	simhash_idf *idf;
	int jsonl;
	const char *text_field;
	unsigned jsonl_flags;
	struct jsonl_rec rec;
	uint64_t n_docs;
	int keep_going;
	int had_errors; /* --keep-going: some input was skipped */
};

/* After a reported error: -1 to stop, or 0 to skip the input (--keep-going). */
static int skip(struct build *bd)
{
	if (!bd->keep_going)
		return -1;
	bd->had_errors = 1;
	return 0;
}

static void help(void)
{
	fputs("usage: simhash idf build [OPTION]... -o FILE [CORPUS]...\n\n"
	      "Counts in how many documents of the CORPUS files (standard input if none, or\n"
	      "-) each feature occurs, and writes idf = ln((1 + N) / (1 + df)) + 1 per\n"
	      "feature. A document is a non-empty line, or with --jsonl a record's text.\n"
	      "The configuration flags decide what a feature is: use the same ones with\n"
	      "--weight tfidf --idf FILE. Any error stops the run with status 1, unless\n"
	      "--keep-going: then each bad record or file is reported and skipped.\n",
	      stdout);
	cli_opts_help(stdout, opts, 1);
}

static int add_text(struct build *bd, const char *text, size_t len, const char *path,
		    uint64_t line)
{
	simhash_error e;
	simhash_err err = simhash_idf_add_document(bd->idf, bd->ctx, text, len, &e);

	if (err == SIMHASH_EUTF8) {
		cli_err("%s:%llu: invalid UTF-8 at byte %llu", display_name(path),
			(unsigned long long)line, (unsigned long long)e.offset);
		return skip(bd);
	}
	if (err) {
		cli_err("%s:%llu: %s", display_name(path), (unsigned long long)line,
			simhash_strerror(err));
		return -1;
	}
	bd->n_docs++;
	return 0;
}

static int add_line(struct build *bd, const char *s, size_t len, const char *path, uint64_t line)
{
	char err[256];
	int ret;

	if (!bd->jsonl)
		return len ? add_text(bd, s, len, path, line) : 0;
	ret = jsonl_extract(s, len, bd->text_field, "id", bd->jsonl_flags, &bd->rec, err,
			    sizeof(err));
	if (ret == JSONL_BLANK)
		return 0;
	if (ret == JSONL_ERROR) {
		cli_err("%s:%llu: %s", display_name(path), (unsigned long long)line, err);
		return skip(bd);
	}
	return add_text(bd, bd->rec.text, bd->rec.text_len, path, line);
}

static int add_corpus(struct build *bd, const char *path)
{
	struct sbuf buf = { 0 };
	struct reader r;
	struct chunk c;
	uint64_t line;
	size_t pos, len;
	const char *s;
	int ret;

	if (reader_open(&r, path)) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		return skip(bd);
	}
	while ((ret = reader_next(&r, CHUNK_BYTES, CHUNK_LINES, &buf, &c)) > 0) {
		line = c.first_line;
		pos = 0;
		while (chunk_next_line(&c, &pos, &s, &len))
			if (add_line(bd, s, len, path, line++))
				goto out_close;
	}
	if (ret < 0 && errno == ENOMEM)
		cli_err("%s:%llu: line too long to hold in memory", display_name(path),
			(unsigned long long)(r.next_line + r.n_found));
	else if (ret < 0 && (cli_err("%s: %s", display_name(path), strerror(errno)), 1))
		ret = skip(bd); /* an unreadable file: the next one */
out_close:
	reader_close(&r);
	sbuf_free(&buf);
	return ret;
}

static int parse(int argc, char **argv, struct cli_config *cc, struct build *bd,
		 const char **output, int *first)
{
	struct cli_parse p;
	int o, ret = EXIT_OK;

	cli_parse_begin(&p, "idf build", opts, cc, argc, argv);
	while (ret == EXIT_OK && (o = cli_parse_next(&p)) != CLI_END) {
		switch (o) {
		case CLI_HELP: help(); ret = -1; break;
		case CLI_BAD: ret = EXIT_USAGE; break;
		case OPT_JSONL: bd->jsonl = 1; break;
		case OPT_TEXT_FIELD: bd->text_field = p.arg; break;
		case OPT_OUTPUT: *output = p.arg; break;
		case OPT_KEEP_GOING: bd->keep_going = 1; break;
		}
	}
	*first = p.optind;
	cli_parse_end(&p);
	if (ret == EXIT_OK && !*output) {
		cli_err("idf build: -o FILE is required");
		ret = EXIT_USAGE;
	}
	return ret;
}

static int build(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct build bd = { .text_field = "text" };
	struct cli_config cc;
	const char *output = NULL;
	simhash_err err;
	char **paths;
	int first, ret, i, n;

	cli_config_init(&cc);
	jsonl_rec_init(&bd.rec);
	ret = parse(argc, argv, &cc, &bd, &output, &first);
	if (ret)
		goto out;
	ret = cli_config_finish(&cc, "idf build");
	if (ret)
		goto out;
	bd.jsonl_flags = cc.cfg.utf8 == SIMHASH_UTF8_REPLACE ? JSONL_REPLACE_UTF8 : 0;
	ret = EXIT_FAIL;
	err = simhash_ctx_new(&cc.cfg, &bd.ctx);
	if (!err)
		err = simhash_idf_new(&bd.idf);
	if (err) {
		cli_err("idf build: %s", simhash_strerror(err));
		ret = err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	paths = first < argc ? argv + first : stdin_only;
	n = first < argc ? argc - first : 1;
	for (int k = 0, n_stdin = 0; k < n; k++)
		if (!strcmp(paths[k], "-") && ++n_stdin == 2) {
			cli_err("idf build: standard input (-) given twice");
			ret = EXIT_USAGE;
			goto out;
		}
	for (i = 0; i < n; i++)
		if (add_corpus(&bd, paths[i]))
			goto out;
	err = simhash_idf_finish(bd.idf);
	if (!err)
		err = simhash_idf_save(bd.idf, output, NULL);
	if (err) {
		cli_err("%s: %s", output, simhash_strerror(err));
		goto out;
	}
	ret = bd.had_errors ? EXIT_FAIL : EXIT_OK;
out:
	simhash_idf_free(bd.idf);
	simhash_ctx_free(bd.ctx);
	jsonl_rec_free(&bd.rec);
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}

int cmd_idf(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "build"))
		return build(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs("usage: simhash idf build [OPTION]... -o FILE [CORPUS]...\n\n"
		      "Run 'simhash idf build --help' for the options.\n",
		      stdout);
		return EXIT_OK;
	}
	if (argc < 2)
		cli_err("idf: expected a subcommand: build");
	else
		cli_err("idf: unknown subcommand '%s' (expected build)", argv[1]);
	return EXIT_USAGE;
}
