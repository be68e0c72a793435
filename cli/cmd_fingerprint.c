/* cmd_fingerprint.c - `simhash fingerprint`: one line `HEX<TAB>ID` (or one
 * JSON object) per document, in input order.
 *
 * Documents are whole files (default), lines (--lines) or JSON Lines records
 * (--jsonl). The main thread cuts the input into batches - a few files, or
 * about 64 KB of whole lines - and the pool (pool.h) fingerprints them on -j
 * threads, each with its own simhash_ctx, parsing JSON there too. Batches come
 * back in submission order and are written as they do, so the output is the
 * same for every -j, and memory stays bounded by the number of batches in
 * flight (2 per thread, plus 2) and the longest line.
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
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "commands.h"
#include "config_opts.h"
#include "idesc.h"
#include "jsonl.h"
#include "outfile.h"
#include "pool.h"
#include "progress.h"
#include "reader.h"
#include "util.h"

#define FILES_PER_BATCH 16
#define BATCH_BYTES ((size_t)64 << 10)
#define BATCH_LINES 4096
#define BIG_FILE ((size_t)64 << 20)
#define MAX_JOBS 1024
#define ERR_MAX 512

enum mode { MODE_FILES, MODE_LINES, MODE_JSONL };

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

/* Shared by the workers: read-only while they run, except that worker i
 * owns workers[i]. */
struct run {
	enum mode mode;
	int json;
	int bin;   /* --format bin: the main thread feeds fpw from the text lines */
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
	unsigned jsonl_flags;
	const simhash_config *cfg;
	struct sbuf scheme_tail; /* `,"scheme":"..."}` + newline, for --json */
	struct worker *workers;
};

/* One per thread. */
struct worker {
	struct run *run;
	simhash_ctx *ctx; /* made by the worker on first use (worker 0: up front) */
	struct sbuf file;
	struct jsonl_rec rec;
};

struct batch {
	const char *path;       /* the input the lines come from */
	char **files;           /* MODE_FILES: the paths */
	size_t n_files;
	struct sbuf in;         /* otherwise: whole lines, described by chunk */
	struct chunk chunk;
	struct sbuf out;
	uint64_t n_docs;
	uint64_t n_bytes;
	int keep_going;
	int failed;        /* stop: err holds why */
	char err[ERR_MAX]; /* the message, without "simhash: " */
	struct sbuf errs;  /* --keep-going: the messages, one per line, in order */
};

/* The main thread's side of a run. */
struct state {
	struct run *run;
	struct pool *pool;
	struct batch *batches;
	struct batch **free;
	size_t n_free;
	struct outfile out;
	struct progress progress;
	int failed;     /* the run stopped */
	int had_errors; /* --keep-going: some input was skipped */
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

/* Appends an id to the text output, escaped (idesc.h). */
static int add_text_id(struct sbuf *out, const char *id, size_t len)
{
	return idesc_escape(out, id, len);
}

/* The id of a line without an id of its own: its number, after FILE: if the
 * run has several inputs. */
static int add_line_id(const struct run *run, struct sbuf *out, const char *path, uint64_t line)
{
	if (!run->multi)
		return sbuf_add_u64(out, line);
	if (run->json) {
		/* "path:line": the escaped path without its closing quote, then the rest. */
		if (sbuf_add_json_str(out, path, strlen(path)))
			return -1;
		out->len--;
	} else if (add_text_id(out, path, strlen(path))) {
		return -1;
	}
	if (sbuf_addc(out, ':') || sbuf_add_u64(out, line))
		return -1;
	return run->json ? sbuf_addc(out, '"') : 0;
}

/* Appends one document's output line. id NULL: use the line number. */
static int add_result(const struct run *run, struct sbuf *out, const simhash_fp *fp,
		      const char *id, size_t id_len, int id_is_number, const char *path,
		      uint64_t line)
{
	char hex[SIMHASH_HEX_MAX];
	size_t n = simhash_fp_format(fp, hex);

	if (!run->json) {
		if (sbuf_add(out, hex, n) || sbuf_addc(out, '\t'))
			return -1;
		if (id ? add_text_id(out, id, id_len) : add_line_id(run, out, path, line))
			return -1;
		return sbuf_addc(out, '\n');
	}
	if (sbuf_add(out, "{\"id\":", 6))
		return -1;
	if (!id) {
		if (add_line_id(run, out, path, line))
			return -1;
	} else if (id_is_number ? sbuf_add(out, id, id_len) : sbuf_add_json_str(out, id, id_len)) {
		return -1;
	}
	if (sbuf_add(out, ",\"fingerprint\":\"", 16) || sbuf_add(out, hex, n) ||
	    sbuf_addc(out, '"'))
		return -1;
	return sbuf_add(out, run->scheme_tail.p, run->scheme_tail.len);
}

/* Records the batch's error, prefixed with "FILE: " or, if line is not 0,
 * "FILE:LINE: "; returns -1 so callers can `return fail(...)`. */
static int fail(struct batch *b, const char *path, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct batch *b, const char *path, uint64_t line, const char *fmt, ...)
{
	char msg[ERR_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!path)
		snprintf(b->err, sizeof(b->err), "%s", msg);
	else if (line)
		snprintf(b->err, sizeof(b->err), "%s:%llu: %s", display_name(path),
			 (unsigned long long)line, msg);
	else
		snprintf(b->err, sizeof(b->err), "%s: %s", display_name(path), msg);
	if (!b->keep_going || !path || sbuf_adds(&b->errs, b->err) || sbuf_addc(&b->errs, '\n'))
		b->failed = 1; /* no --keep-going, out of memory, or no input to skip */
	return -1;
}

/* After an error: whether the batch stops (else the bad input is skipped). */
static int stops(const struct batch *b)
{
	return b->failed;
}

/* --weight tfidf: checks whether the IDF table knows a feature of text, until
 * one is found in any document. Races are harmless: the flags only go 0 -> 1. */
static void check_idf(struct worker *w, const char *text, size_t len)
{
	struct run *run = w->run;
	size_t n_features, n_known;

	if (!run->idf_check || __atomic_load_n(&run->idf_any_known, __ATOMIC_RELAXED))
		return;
	if (simhash_idf_coverage(run->cfg->idf, w->ctx, text, len, &n_features, &n_known))
		return;
	if (n_features)
		__atomic_store_n(&run->idf_any_feature, 1, __ATOMIC_RELAXED);
	if (n_known)
		__atomic_store_n(&run->idf_any_known, 1, __ATOMIC_RELAXED);
}

/* Fingerprints one text, document `line` of path (0: the whole file). */
static int fingerprint(struct worker *w, struct batch *b, const char *text, size_t len,
		       simhash_fp *fp, const char *path, uint64_t line)
{
	simhash_err err = simhash_fingerprint(w->ctx, text, len, fp);

	if (err == SIMHASH_EUTF8)
		return fail(b, path, line, "invalid UTF-8 at byte %zu",
			    simhash_ctx_error_offset(w->ctx));
	if (err)
		return fail(b, path, line, "%s", simhash_strerror(err));
	check_idf(w, text, len);
	b->n_docs++;
	return 0;
}

static int out_of_memory(struct batch *b)
{
	return fail(b, NULL, 0, "out of memory"); /* no path: stops even --keep-going */
}

/* Fingerprints the file at path (-: standard input) read a slice at a time.
 * 0 done, -1 failed and skipped (--keep-going), 1 failed and the batch stops. */
static int fingerprint_file(struct worker *w, struct batch *b, const char *path, simhash_fp *fp)
{
	int is_stdin = path[0] == '-' && path[1] == '\0', fd, os_err = 0;
	uint64_t n_bytes = 0;
	simhash_err err;

	do
		fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		fail(b, path, 0, "%s", strerror(errno));
		return stops(b) ? 1 : -1;
	}
	err = simhash_fingerprint_fd(w->ctx, fd, fp, &n_bytes, &os_err);
	if (!is_stdin)
		close(fd);
	b->n_bytes += n_bytes;
	if (err == SIMHASH_EIO)
		fail(b, path, 0, "%s", strerror(os_err));
	else if (err == SIMHASH_EUTF8)
		fail(b, path, 0, "invalid UTF-8 at byte %zu", simhash_ctx_error_offset(w->ctx));
	else if (err)
		fail(b, path, 0, "%s", simhash_strerror(err));
	if (err)
		return stops(b) ? 1 : -1;
	b->n_docs++;
	return 0;
}

static void do_files(const struct run *run, struct worker *w, struct batch *b)
{
	const char *path;
	simhash_fp fp;
	size_t i;

	for (i = 0; i < b->n_files; i++) {
		path = b->files[i];
		if (!run->idf_check) {
			/* read a slice at a time: a file of any size in bounded memory */
			int r = fingerprint_file(w, b, path, &fp);
			if (r > 0)
				return;
			if (r < 0)
				continue;
		} else if (read_path_all(path, &w->file)) {
			fail(b, path, 0, "%s", strerror(errno));
			if (stops(b))
				return;
			continue;
		} else {
			b->n_bytes += w->file.len;
			if (fingerprint(w, b, w->file.p, w->file.len, &fp, path, 0)) {
				if (stops(b))
					return;
				continue;
			}
		}
		if (add_result(run, &b->out, &fp, path, strlen(path), 0, path, 0)) {
			out_of_memory(b);
			return;
		}
		if (w->file.cap > BIG_FILE)
			sbuf_free(&w->file); /* do not keep a huge buffer per thread */
	}
}

/* Handles one line (without its line break) of --lines or --jsonl input. */
static int do_line(const struct run *run, struct worker *w, struct batch *b, const char *s,
		   size_t len, uint64_t line)
{
	struct jsonl_rec *rec = &w->rec;
	char err[ERR_MAX / 2];
	simhash_fp fp;
	int ret;

	if (run->mode == MODE_LINES) {
		if (fingerprint(w, b, s, len, &fp, b->path, line))
			return -1;
		if (add_result(run, &b->out, &fp, NULL, 0, 0, b->path, line))
			return out_of_memory(b);
		return 0;
	}
	ret = jsonl_extract(s, len, run->text_field, run->id_field, run->jsonl_flags, rec, err,
			    sizeof(err));
	if (ret == JSONL_BLANK)
		return 0;
	if (ret == JSONL_ERROR)
		return fail(b, b->path, line, "%s", err);
	if (fingerprint(w, b, rec->text, rec->text_len, &fp, b->path, line))
		return -1;
	if (add_result(run, &b->out, &fp, rec->id, rec->id_len, rec->id_is_number, b->path, line))
		return out_of_memory(b);
	return 0;
}

static void do_lines(const struct run *run, struct worker *w, struct batch *b)
{
	uint64_t line = b->chunk.first_line;
	size_t pos = 0, len;
	const char *s;

	b->n_bytes = b->chunk.len;
	while (chunk_next_line(&b->chunk, &pos, &s, &len))
		if (do_line(run, w, b, s, len, line++) && stops(b))
			return;
}

static void work(void *job, unsigned index, void *arg)
{
	const struct run *run = arg;
	struct worker *w = &run->workers[index];
	struct batch *b = job;
	simhash_err err;

	if (!w->ctx) {
		err = simhash_ctx_new(run->cfg, &w->ctx);
		if (err) {
			fail(b, NULL, 0, "%s", simhash_strerror(err));
			return;
		}
	}
	if (run->mode == MODE_FILES)
		do_files(run, w, b);
	else
		do_lines(run, w, b);
}

/* --format bin: adds the batch's `HEX<TAB>ID` lines to the file writer. */
static int add_bin(struct state *st, struct batch *b)
{
	const char *p = b->out.p, *end = p + b->out.len, *tab, *nl;
	simhash_fp fp;
	simhash_err err;

	while (p < end) {
		tab = memchr(p, '\t', (size_t)(end - p));
		nl = memchr(tab, '\n', (size_t)(end - tab));
		err = simhash_fp_parse(p, (size_t)(tab - p), &fp);
		if (!err)
			err = simhash_fpfile_writer_add(st->run->fpw, &fp, tab + 1,
							(size_t)(nl - tab - 1));
		if (err) {
			progress_end(&st->progress);
			cli_err("fingerprint: %s", simhash_strerror(err));
			st->failed = 1;
			return -1;
		}
		p = nl + 1;
	}
	return 0;
}

static int write_out(const void *data, size_t len, void *arg)
{
	return outfile_write(arg, data, len);
}

/* Takes back a finished batch: writes its output, or reports its error. */
static void finish(struct state *st, struct batch *b)
{
	if (st->failed)
		return;
	if (st->run->bin) {
		if (add_bin(st, b))
			return;
	/* A failed batch still holds the results of the documents before the
	 * failing one: writing them makes the output independent of -j. */
	} else if (outfile_write(&st->out, b->out.p, b->out.len)) {
		st->failed = 1;
		return;
	}
	if (b->errs.len) {
		size_t start = 0;

		progress_end(&st->progress);
		for (size_t i = 0; i < b->errs.len; i++) {
			if (b->errs.p[i] != '\n')
				continue;
			cli_err("%.*s", (int)(i - start), b->errs.p + start);
			start = i + 1;
		}
		st->had_errors = 1;
	}
	if (b->failed) {
		progress_end(&st->progress);
		cli_err("%s", b->err);
		st->failed = 1;
		return;
	}
	progress_add(&st->progress, b->n_bytes, b->n_docs);
}

/* A batch to fill: a free one, or the oldest in flight once finished. */
static struct batch *get_batch(struct state *st)
{
	struct batch *b;

	if (st->n_free) {
		b = st->free[--st->n_free];
	} else {
		b = pool_next_done(st->pool);
		finish(st, b);
	}
	b->out.len = 0;
	b->errs.len = 0;
	b->n_docs = 0;
	b->n_bytes = 0;
	b->failed = 0;
	b->keep_going = st->run->keep_going;
	if (b->in.cap > BIG_FILE)
		sbuf_free(&b->in); /* it held a huge line: give the memory back */
	return b;
}

/* Finishes every batch in flight, in order. */
static void drain(struct state *st)
{
	struct batch *b;

	while ((b = pool_next_done(st->pool)))
		finish(st, b);
}

/* Reports an error of the main thread, after those of earlier batches. */
static void fail_here(struct state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_here(struct state *st, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	drain(st);
	if (!st->failed) {
		progress_end(&st->progress);
		cli_err("%s", msg);
	}
	if (st->run->keep_going)
		st->had_errors = 1; /* the caller goes on with the next input */
	else
		st->failed = 1;
}

static void run_files(struct state *st, char **paths, size_t n_paths)
{
	struct batch *b;
	size_t i = 0;

	while (i < n_paths && !st->failed) {
		b = get_batch(st);
		if (st->failed)
			break;
		b->files = paths + i;
		b->n_files = n_paths - i < FILES_PER_BATCH ? n_paths - i : FILES_PER_BATCH;
		i += b->n_files;
		pool_submit(st->pool, b);
	}
}

static void run_lines(struct state *st, const char *path)
{
	struct reader r;
	struct batch *b;
	int ret;

	if (reader_open(&r, path)) {
		fail_here(st, "%s: %s", display_name(path), strerror(errno));
		return;
	}
	while (!st->failed) {
		b = get_batch(st);
		if (st->failed)
			break;
		ret = reader_next(&r, BATCH_BYTES, BATCH_LINES, &b->in, &b->chunk);
		if (ret <= 0) {
			st->free[st->n_free++] = b;
			if (ret < 0 && errno == ENOMEM)
				fail_here(st, "%s:%llu: line too long to hold in memory",
					  display_name(path),
					  (unsigned long long)(r.next_line + r.n_found));
			else if (ret < 0)
				fail_here(st, "%s: %s", display_name(path), strerror(errno));
			break;
		}
		b->path = path;
		pool_submit(st->pool, b);
	}
	reader_close(&r);
}

/* Total size of the regular files among paths, for the progress line. */
static uint64_t total_size(char **paths, size_t n)
{
	struct stat s;
	uint64_t total = 0;
	size_t i;

	if (!isatty(STDERR_FILENO))
		return 0;
	for (i = 0; i < n; i++) {
		if (strcmp(paths[i], "-") && stat(paths[i], &s) == 0 && S_ISREG(s.st_mode))
			total += (uint64_t)s.st_size;
		else
			return 0; /* a stream: the total is unknown */
	}
	return total;
}

/* Runs the documents of paths through n_threads workers into st->out. */
static int run_all(struct state *st, unsigned n_threads, char **paths, size_t n_paths,
		   const char *output)
{
	size_t depth = 2 * (size_t)n_threads + 2, i;
	int ret;

	ret = outfile_open(&st->out, output);
	if (ret)
		return ret;
	if (pool_new(n_threads, depth, work, st->run, &st->pool)) {
		cli_err("fingerprint: cannot start threads: %s", strerror(errno));
		outfile_abort(&st->out);
		return EXIT_FAIL;
	}
	st->batches = xcalloc(depth, sizeof(*st->batches));
	st->free = xcalloc(depth, sizeof(*st->free));
	for (i = 0; i < depth; i++)
		st->free[st->n_free++] = &st->batches[depth - 1 - i];
	progress_init(&st->progress, total_size(paths, n_paths));
	if (st->run->mode == MODE_FILES)
		run_files(st, paths, n_paths);
	for (i = 0; st->run->mode != MODE_FILES && i < n_paths && !st->failed; i++)
		run_lines(st, paths[i]);
	drain(st);
	pool_free(st->pool);
	progress_end(&st->progress);
	for (i = 0; i < depth; i++) {
		sbuf_free(&st->batches[i].in);
		sbuf_free(&st->batches[i].out);
		sbuf_free(&st->batches[i].errs);
	}
	free(st->batches);
	free(st->free);
	if (!st->failed && st->run->bin &&
	    simhash_fpfile_writer_finish(st->run->fpw, write_out, &st->out))
		st->failed = 1; /* outfile_write has said why */
	if (st->failed) {
		outfile_abort(&st->out);
		return EXIT_FAIL;
	}
	if (st->run->idf_check && st->run->idf_any_feature && !st->run->idf_any_known)
		cli_err("warning: no feature of the input is in the IDF table, so every one "
			"gets its default idf (a table for other features or another language?)");
	ret = outfile_commit(&st->out);
	return ret ? ret : st->had_errors ? EXIT_FAIL : EXIT_OK;
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

static unsigned online_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : (unsigned)n;
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

int cmd_fingerprint(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct run run = { .mode = MODE_FILES, .text_field = "text", .id_field = "id" };
	struct state st = { .run = &run };
	struct cli_config cc;
	const char *output = NULL;
	unsigned jobs = 0, i;
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
	run.jsonl_flags = cc.cfg.utf8 == SIMHASH_UTF8_REPLACE ? JSONL_REPLACE_UTF8 : 0;
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
	if (!jobs)
		jobs = online_cores();
	if (run.json) {
		ret = make_scheme_tail(&run, &run.scheme_tail);
		if (ret)
			goto out_config;
	}
	if (run.bin) {
		char scheme[SIMHASH_SCHEME_MAX];

		err = simhash_config_scheme(run.cfg, scheme, sizeof(scheme));
		if (!err)
			err = simhash_fpfile_writer_new(run.cfg->bits, scheme, &run.fpw);
		if (err) {
			cli_err("fingerprint: %s", simhash_strerror(err));
			ret = err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
			goto out_config;
		}
	}
	run.workers = xcalloc(jobs, sizeof(*run.workers));
	for (i = 0; i < jobs; i++) {
		run.workers[i].run = &run;
		jsonl_rec_init(&run.workers[i].rec);
	}
	/* Worker 0's context is made here, so a configuration the library
	 * refuses is reported before any input is read. */
	err = simhash_ctx_new(run.cfg, &run.workers[0].ctx);
	if (err) {
		cli_err("fingerprint: %s", simhash_strerror(err));
		ret = err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out_workers;
	}
	ret = run_all(&st, jobs, paths, n_paths, output);

out_workers:
	for (i = 0; i < jobs; i++) {
		simhash_ctx_free(run.workers[i].ctx);
		sbuf_free(&run.workers[i].file);
		jsonl_rec_free(&run.workers[i].rec);
	}
	free(run.workers);
	sbuf_free(&run.scheme_tail);
	simhash_fpfile_writer_free(run.fpw);
out_config:
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}
