/* cmd_fingerprint.c - `simhash fingerprint`: one line `HEX<TAB>ID` (or one
 * JSON object) per document, in input order.
 *
 * Documents are whole files (default), lines (--lines) or JSON Lines records
 * (--jsonl), read and fingerprinted on -j threads by the document source
 * (source.h); the workers also format each document's line, and the batches
 * are written in input order, so the output is the same for every -j.
 *
 * Any error stops the run with status 1: standard output then holds the
 * results of exactly the documents before the failing one (whatever -j), and
 * an -o file is not created at all. With --keep-going an error reports the
 * record or file (`FILE:LINE: what`, in input order) and the run goes on;
 * the status is then 1 at the end, and the output holds every good document.
 * Running out of memory still stops the run.
 *
 * Under --weight tfidf the workers also check, until one feature is found in
 * the IDF table, whether the table knows any feature of the input, so that a
 * table made for other features or another language gets a warning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "config_opts.h"
#include "idesc.h"
#include "jsonl.h"
#include "outfile.h"
#include "progress.h"
#include "source.h"
#include "util.h"

#define MAX_JOBS 1024

enum { OPT_LINES, OPT_JSONL, OPT_TEXT_FIELD, OPT_ID_FIELD, OPT_JSON, OPT_JOBS, OPT_OUTPUT,
       OPT_FORMAT, OPT_KEEP_GOING };

static const struct cli_opt opts[] = {
	[OPT_LINES] = { "lines", 0, NULL, "one document per line; id: its line number" },
	[OPT_JSONL] = { "jsonl", 0, NULL, "one JSON object per line, with text and id fields" },
	[OPT_TEXT_FIELD] = { "text-field", 0, "NAME", "the text field of --jsonl (default: text)" },
	[OPT_ID_FIELD] = { "id-field", 0, "NAME", "the id field of --jsonl (default: id)" },
	[OPT_JSON] = { "json", 0, NULL, "print JSON Lines with id, fingerprint and scheme" },
	[OPT_JOBS] = { "jobs", 'j', "N", "use N threads (default: the number of cores)" },
	[OPT_OUTPUT] = { "output", 'o', "FILE", "write to FILE atomically" },
	[OPT_FORMAT] = { "format", 0, "FMT",
			 "text (default), json (as --json) or bin (binary fingerprint file)" },
	[OPT_KEEP_GOING] = { "keep-going", 'k', NULL,
			     "report a bad record or file and go on; exit 1 at the end" },
	{ NULL, 0, NULL, NULL },
};

/* The command's side of a run: options, and the output the batch hook
 * writes. Workers read it; they write only the idf flags. */
struct run {
	enum mode mode;
	int json;
	int bin;   /* --format bin: the batch hook feeds fpw from the text lines */
	simhash_fpfile_writer *fpw;
	int multi; /* several inputs: a line's id is FILE:LINE */
	int keep_going;
	/* --weight tfidf: whether any document had features, and whether the
	 * IDF table knew one of them (set by any worker, read at the end) */
	int idf_check;
	int idf_any_feature;
	int idf_any_known;
	const char *text_field;
	const char *id_field;
	const simhash_config *cfg;
	struct sbuf scheme_tail; /* `,"scheme":"..."}` + newline, for --json */
	struct outfile out;
	struct progress progress;
};

static void help(void)
{
	fputs("usage: simhash fingerprint [OPTION]... [FILE]...\n\n"
	      "Prints `HEX<TAB>ID` for each document: each FILE (id: the path as given) or,\n"
	      "with --lines or --jsonl, each line of the FILEs. With no FILE, or when FILE\n"
	      "is -, reads standard input (id: -). Any error stops the run with status 1,\n"
	      "unless --keep-going: then each bad record or file is reported and skipped.\n",
	      stdout);
	cli_opts_help(stdout, opts, 1);
}

/* The JSON id of a line without an id of its own: its number, or
 * "FILE:LINE" if the run has several inputs. */
static int add_json_line_id(const struct run *run, struct sbuf *out, const char *path,
			    uint64_t line)
{
	if (!run->multi)
		return sbuf_add_u64(out, line);
	/* "path:line": the escaped path without its closing quote, then the rest. */
	if (sbuf_add_json_str(out, path, strlen(path)))
		return -1;
	out->len--;
	if (sbuf_addc(out, ':') || sbuf_add_u64(out, line))
		return -1;
	return sbuf_addc(out, '"');
}

/* The JSON id of d: its record's id (a number as is), its file's path, or
 * its line. */
static int add_json_id(const struct run *run, struct sbuf *out, const struct doc *d)
{
	const struct jsonl_rec *rec = d->rec;

	if (rec && rec->id)
		return rec->id_is_number ? sbuf_add(out, rec->id, rec->id_len)
					 : sbuf_add_json_str(out, rec->id, rec->id_len);
	if (!d->line)
		return sbuf_add_json_str(out, d->path, strlen(d->path));
	return add_json_line_id(run, out, d->path, d->line);
}

/* Appends one document's output line. */
static int add_result(const struct run *run, struct sbuf *out, const struct doc *d)
{
	char hex[SIMHASH_HEX_MAX];
	size_t n = simhash_fp_format(&d->fp, hex);

	if (!run->json) {
		if (sbuf_add(out, hex, n) || sbuf_addc(out, '\t') || src_text_id(out, d, run->multi))
			return -1;
		return sbuf_addc(out, '\n');
	}
	if (sbuf_add(out, "{\"id\":", 6) || add_json_id(run, out, d))
		return -1;
	if (sbuf_add(out, ",\"fingerprint\":\"", 16) || sbuf_add(out, hex, n) ||
	    sbuf_addc(out, '"'))
		return -1;
	return sbuf_add(out, run->scheme_tail.p, run->scheme_tail.len);
}

/* --weight tfidf: checks whether the IDF table knows a feature of text, until
 * one is found in any document. Races are harmless: the flags only go 0 -> 1. */
static void check_idf(struct run *run, simhash_ctx *ctx, const char *text, size_t len)
{
	size_t n_features, n_known;

	if (!run->idf_check || __atomic_load_n(&run->idf_any_known, __ATOMIC_RELAXED))
		return;
	if (simhash_idf_coverage(run->cfg->idf, ctx, text, len, &n_features, &n_known, NULL))
		return;
	if (n_features)
		__atomic_store_n(&run->idf_any_feature, 1, __ATOMIC_RELAXED);
	if (n_known)
		__atomic_store_n(&run->idf_any_known, 1, __ATOMIC_RELAXED);
}

/* The doc hook, on a worker: the document's output line. */
static int take_doc(struct src_batch *b, const struct doc *d, void *arg)
{
	struct run *run = arg;

	if (d->text)
		check_idf(run, d->ctx, d->text, d->text_len);
	if (add_result(run, &b->out, d))
		return src_fail(b, NULL, "out of memory"); /* stops even --keep-going */
	return 0;
}

/* --format bin: adds the batch's `HEX<TAB>ID` lines to the file writer. */
static int add_bin(struct run *run, const struct src_batch *b)
{
	const char *p = b->out.p, *end = p + b->out.len, *tab, *nl;
	simhash_fp fp;
	simhash_err err;

	while (p < end) {
		tab = memchr(p, '\t', (size_t)(end - p));
		nl = memchr(tab, '\n', (size_t)(end - tab));
		err = simhash_fp_parse(p, (size_t)(tab - p), &fp);
		if (!err)
			err = simhash_fpfile_writer_add(run->fpw, &fp, tab + 1,
							(size_t)(nl - tab - 1));
		if (err) {
			progress_end(&run->progress);
			cli_err("fingerprint: %s", simhash_strerror(err));
			return -1;
		}
		p = nl + 1;
	}
	return 0;
}

/* The batch hook, on the main thread: writes the batch's lines. */
static int take_batch(struct src_batch *b, void *arg)
{
	struct run *run = arg;

	if (run->bin)
		return add_bin(run, b);
	return outfile_write(&run->out, b->out.p, b->out.len);
}

static int write_out(const void *data, size_t len, void *arg)
{
	return outfile_write(arg, data, len);
}

/* Runs the documents of paths through the source into run->out. */
static int run_all(struct run *run, struct source *src, char **paths, size_t n_paths,
		   const char *output)
{
	int ret, failed;

	ret = outfile_open(&run->out, output);
	if (ret)
		return ret;
	progress_init_paths(&run->progress, paths, n_paths);
	failed = src_run(src, paths, n_paths, &run->progress) != EXIT_OK;
	if (!failed && run->bin && simhash_fpfile_writer_finish(run->fpw, write_out, &run->out))
		failed = 1; /* outfile_write has said why */
	if (failed) {
		outfile_abort(&run->out);
		return EXIT_FAIL;
	}
	if (run->idf_check && run->idf_any_feature && !run->idf_any_known)
		cli_err("warning: no feature of the input is in the IDF table, so every one "
			"gets its default idf (a table for other features or another language?)");
	ret = outfile_commit(&run->out);
	return ret ? ret : src_had_errors(src) ? EXIT_FAIL : EXIT_OK;
}

/* Renders the end of every --json object: the scheme and the closing brace. */
static int make_scheme_tail(struct run *run, struct sbuf *tail)
{
	char scheme[SIMHASH_SCHEME_MAX];
	simhash_err err = simhash_config_scheme(run->cfg, scheme, sizeof(scheme));

	if (err) {
		cli_err("fingerprint: %s", simhash_strerror(err));
		return EXIT_USAGE;
	}
	if (sbuf_add(tail, ",\"scheme\":", 10) || sbuf_add_json_str(tail, scheme, strlen(scheme)) ||
	    sbuf_add(tail, "}\n", 2)) {
		cli_err("out of memory");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Parses the options into run, cc, *jobs and *output. EXIT_OK, or the status
 * to exit with (-1 for --help, which exits 0). */
static int parse(int argc, char **argv, struct run *run, struct cli_config *cc, unsigned *jobs,
		 const char **output, int *first_arg)
{
	struct cli_parse p;
	unsigned long v;
	int o, ret = EXIT_OK, fields = 0;

	cli_parse_begin(&p, "fingerprint", opts, cc, argc, argv);
	while (ret == EXIT_OK && (o = cli_parse_next(&p)) != CLI_END) {
		switch (o) {
		case CLI_HELP: help(); ret = -1; break;
		case CLI_BAD: ret = EXIT_USAGE; break;
		case OPT_LINES:
		case OPT_JSONL:
			if (run->mode != MODE_FILES &&
			    run->mode != (o == OPT_LINES ? MODE_LINES : MODE_JSONL)) {
				cli_err("fingerprint: --lines and --jsonl exclude each other");
				ret = EXIT_USAGE;
			}
			run->mode = o == OPT_LINES ? MODE_LINES : MODE_JSONL;
			break;
		case OPT_TEXT_FIELD: run->text_field = p.arg; fields = 1; break;
		case OPT_ID_FIELD: run->id_field = p.arg; fields = 1; break;
		case OPT_JSON: run->json = 1; break;
		case OPT_OUTPUT: *output = p.arg; break;
		case OPT_FORMAT:
			if (!strcmp(p.arg, "json")) {
				run->json = 1;
			} else if (!strcmp(p.arg, "bin")) {
				run->bin = 1;
			} else if (strcmp(p.arg, "text")) {
				cli_err("fingerprint: unknown --format '%s' (expected text, json or bin)",
					p.arg);
				ret = EXIT_USAGE;
			}
			break;
		case OPT_KEEP_GOING: run->keep_going = 1; break;
		case OPT_JOBS:
			if (parse_uint(p.arg, 1, MAX_JOBS, &v)) {
				cli_err("fingerprint: invalid --jobs '%s' (expected 1 to %d)", p.arg,
					MAX_JOBS);
				ret = EXIT_USAGE;
			}
			*jobs = (unsigned)v;
			break;
		}
	}
	*first_arg = p.optind;
	cli_parse_end(&p);
	if (ret == EXIT_OK && run->bin && run->json) {
		cli_err("fingerprint: --format bin and --json exclude each other");
		ret = EXIT_USAGE;
	}
	if (ret == EXIT_OK && run->bin && !*output && isatty(STDOUT_FILENO)) {
		cli_err("fingerprint: --format bin writes binary: give -o FILE or redirect");
		ret = EXIT_USAGE;
	}
	if (ret == EXIT_OK && fields && run->mode != MODE_JSONL) {
		cli_err("fingerprint: --text-field and --id-field need --jsonl");
		ret = EXIT_USAGE;
	}
	return ret;
}

/* Sets up --json's scheme tail and --format bin's writer. EXIT_OK, or the
 * status to exit with. */
static int prepare_output(struct run *run)
{
	char scheme[SIMHASH_SCHEME_MAX];
	simhash_err err;

	if (run->json)
		return make_scheme_tail(run, &run->scheme_tail);
	if (!run->bin)
		return EXIT_OK;
	err = simhash_config_scheme(run->cfg, scheme, sizeof(scheme));
	if (!err)
		err = simhash_fpfile_writer_new(run->cfg->bits, scheme, &run->fpw);
	if (err) {
		cli_err("fingerprint: %s", simhash_strerror(err));
		return err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	return EXIT_OK;
}

int cmd_fingerprint(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct run run = { .mode = MODE_FILES, .text_field = "text", .id_field = "id" };
	struct src_opts so = { .cmd = "fingerprint", .doc = take_doc, .batch = take_batch,
			       .arg = &run };
	struct source *src = NULL;
	struct cli_config cc;
	const char *output = NULL;
	unsigned jobs = 0;
	char **paths;
	size_t n_paths;
	simhash_err err;
	int first, ret;

	cli_config_init(&cc);
	ret = parse(argc, argv, &run, &cc, &jobs, &output, &first);
	if (ret)
		goto out_config;
	ret = cli_config_finish(&cc, "fingerprint");
	if (ret)
		goto out_config;
	run.cfg = &cc.cfg;
	paths = first < argc ? argv + first : stdin_only;
	n_paths = first < argc ? (size_t)(argc - first) : 1;
	run.multi = n_paths > 1;
	for (size_t k = 0, n_stdin = 0; k < n_paths; k++)
		if (!strcmp(paths[k], "-") && ++n_stdin == 2) {
			cli_err("fingerprint: standard input (-) given twice");
			ret = EXIT_USAGE;
			goto out_config;
		}
	run.idf_check = cc.cfg.weight == SIMHASH_WEIGHT_TFIDF && cc.cfg.idf && !cc.cfg.compat;
	ret = prepare_output(&run);
	if (ret)
		goto out;
	so.mode = run.mode;
	so.cfg = run.cfg;
	so.whole_files = run.idf_check; /* the check needs the text */
	so.keep_going = run.keep_going;
	so.text_field = run.text_field;
	so.id_field = run.id_field;
	so.jsonl_flags = cc.cfg.utf8 == SIMHASH_UTF8_REPLACE ? JSONL_REPLACE_UTF8 : 0;
	so.n_threads = jobs ? jobs : cli_online_cores(MAX_JOBS);
	err = src_new(&so, &src);
	if (err) {
		cli_err("fingerprint: %s", simhash_strerror(err));
		ret = err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	ret = run_all(&run, src, paths, n_paths, output);
out:
	src_free(src);
	sbuf_free(&run.scheme_tail);
	simhash_fpfile_writer_free(run.fpw);
out_config:
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}
