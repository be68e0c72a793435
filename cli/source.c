/* source.c - the document source (see source.h).
 *
 * Invariants:
 *  1. Batches reach the batch hook in the order they were cut from the input,
 *     and a batch holds its documents in input order: the pool returns jobs
 *     oldest first (pool.h), and only the main thread cuts and takes them.
 *  2. A batch that fails holds exactly the documents before the failing one,
 *     so the hooks see the same documents for every -j; once one batch
 *     fails, later ones (already running) are taken back but not handed on.
 *  3. Messages go out on the main thread only, in input order: a worker
 *     records its batch's errors, the main thread prints them when it takes
 *     the batch, after those of every earlier batch.
 *  4. The tee hook sees every piece of input before its documents are
 *     submitted, in input order, so a spool it writes holds each record at
 *     the rec_off its document reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "idesc.h"
#include "jsonl.h"
#include "pool.h"
#include "progress.h"
#include "reader.h"
#include "source.h"

#define FILES_PER_BATCH 16
#define FILES_MAX_BATCH 1024
#define BATCH_BYTES ((size_t)64 << 10)
#define BATCH_LINES 4096
#define BIG_FILE ((size_t)64 << 20)
#define ERR_MAX 512

/* One worker's state, on cache lines of its own (its record is written at
 * every document), as is each batch. */
struct worker {
	simhash_ctx *ctx; /* made by the worker on first use (worker 0: up front) */
	struct sbuf file;
	struct jsonl_rec rec;
} __attribute__((aligned(64)));

/* A batch's input and error state, behind struct src_batch. */
struct src_private {
	struct src_batch pub;
	const char *path;  /* the input the lines come from */
	uint32_t input;    /* its index among the paths; MODE_FILES: the first file's */
	char *const *files; /* MODE_FILES: the paths */
	size_t n_files;
	struct sbuf in;    /* otherwise: whole lines, described by chunk */
	struct chunk chunk;
	uint64_t base_off; /* the input offset of chunk.data */
	int keep_going;
	int failed;        /* stop: err holds why */
	char err[ERR_MAX]; /* the message, without "simhash: " */
	struct sbuf errs;  /* keep_going: the messages, one per line, in order */
} __attribute__((aligned(64)));

struct source {
	struct src_opts o;
	struct worker *workers;
	struct pool *pool;
	struct src_private *batches;
	struct src_private **free;
	size_t n_free, depth;
	struct progress *progress;
	int failed;     /* the run stopped */
	int had_errors; /* keep_going: some input was skipped */
};

int src_fail(struct src_batch *pub, const struct doc *d, const char *fmt, ...)
{
	struct src_private *b = pub->priv;
	char msg[ERR_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!d)
		snprintf(b->err, sizeof(b->err), "%s", msg);
	else if (d->line)
		snprintf(b->err, sizeof(b->err), "%s:%llu: %s", display_name(d->path),
			 (unsigned long long)d->line, msg);
	else
		snprintf(b->err, sizeof(b->err), "%s: %s", display_name(d->path), msg);
	if (!b->keep_going || !d || sbuf_adds(&b->errs, b->err) || sbuf_addc(&b->errs, '\n'))
		b->failed = 1; /* no keep_going, out of memory, or no input to skip */
	return -1;
}

int src_text_id(struct sbuf *out, const struct doc *d, int multi)
{
	const struct jsonl_rec *rec = d->rec;

	if (rec && rec->id)
		return idesc_escape(out, rec->id, rec->id_len);
	if (!d->line)
		return idesc_escape(out, d->path, strlen(d->path));
	if (multi && (idesc_escape(out, d->path, strlen(d->path)) || sbuf_addc(out, ':')))
		return -1;
	return sbuf_add_u64(out, d->line);
}

int src_raw_id(struct sbuf *out, const struct doc *d, int multi, int shown)
{
	if (d->rec && d->rec->id)
		return sbuf_add(out, d->rec->id, d->rec->id_len);
	if (!d->line)
		return sbuf_adds(out, d->path);
	if (multi && (sbuf_adds(out, shown ? display_name(d->path) : d->path) ||
		      sbuf_addc(out, ':')))
		return -1;
	return sbuf_add_u64(out, d->line);
}

/* ---- the workers */

/* Fingerprints d's text (or its file, as a stream) and hands it on; -1 if it
 * failed (recorded). */
static int take_doc(const struct source *s, struct src_private *b, struct doc *d, int fd)
{
	int fingerprint = !s->o.raw && !s->o.no_fingerprint;
	simhash_err err = SIMHASH_OK;
	uint64_t n_bytes = 0;
	simhash_error e;

	if (fingerprint && d->text)
		err = simhash_fingerprint(d->ctx, d->text, d->text_len, &d->fp, &e);
	else if (fingerprint) {
		err = simhash_fingerprint_fd(d->ctx, fd, &d->fp, &n_bytes, &e);
		b->pub.n_bytes += n_bytes;
		d->rec_len = n_bytes;
	}
	if (err == SIMHASH_EIO)
		return src_fail(&b->pub, d, "%s", strerror(e.os_err));
	if (err == SIMHASH_EUTF8)
		return src_fail(&b->pub, d, "invalid UTF-8 at byte %zu", (size_t)e.offset);
	if (err)
		return src_fail(&b->pub, d, "%s", simhash_strerror(err));
	b->pub.n_docs++;
	return s->o.doc(&b->pub, d, s->o.doc_arg ? s->o.doc_arg : s->o.arg);
}

/* A file given to a stream reader: standard input or the path opened. */
static int open_input(const char *path)
{
	int fd;

	if (path[0] == '-' && path[1] == '\0')
		return STDIN_FILENO;
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

/* One file: streamed into the fingerprint, or read whole. 0 done, -1 failed
 * (recorded). */
static int do_file(const struct source *s, struct worker *w, struct src_private *b,
		   struct doc *d)
{
	int fd, ret;

	if (s->o.whole_files || s->o.raw || s->o.no_fingerprint) {
		if (read_path_all(d->path, &w->file))
			return src_fail(&b->pub, d, "%s", strerror(errno));
		b->pub.n_bytes += w->file.len;
		d->text = w->file.p ? w->file.p : "";
		d->text_len = d->rec_len = w->file.len;
		ret = take_doc(s, b, d, -1);
		if (w->file.cap > BIG_FILE)
			sbuf_free(&w->file); /* do not keep a huge buffer per thread */
		return ret;
	}
	fd = open_input(d->path);
	if (fd < 0)
		return src_fail(&b->pub, d, "%s", strerror(errno));
	ret = take_doc(s, b, d, fd);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

static void do_files(const struct source *s, struct worker *w, struct src_private *b,
		     struct doc *d)
{
	for (size_t i = 0; i < b->n_files; i++) {
		d->path = b->files[i];
		d->input = b->input + (uint32_t)i;
		d->text = NULL;
		if (do_file(s, w, b, d) && b->failed)
			return;
	}
}

/* One line (without its line break) of MODE_LINES or MODE_JSONL input. */
static int do_line(const struct source *s, struct worker *w, struct src_private *b,
		   struct doc *d)
{
	char err[ERR_MAX / 2];
	int ret;

	if (s->o.mode == MODE_LINES || s->o.raw)
		return take_doc(s, b, d, -1);
	ret = jsonl_extract(d->text, d->text_len, s->o.text_field, s->o.id_field,
			    s->o.jsonl_flags, &w->rec, err, sizeof(err));
	if (ret == JSONL_BLANK)
		return 0;
	if (ret == JSONL_ERROR)
		return src_fail(&b->pub, d, "%s", err);
	d->rec = &w->rec;
	d->text = w->rec.text;
	d->text_len = w->rec.text_len;
	return take_doc(s, b, d, -1);
}

static void do_lines(const struct source *s, struct worker *w, struct src_private *b,
		     struct doc *d)
{
	size_t pos = 0, start = 0, len;
	const char *line;

	b->pub.n_bytes = b->chunk.len;
	d->path = b->path;
	d->input = b->input;
	d->line = b->chunk.first_line;
	for (; chunk_next_line(&b->chunk, &pos, &line, &len); start = pos, d->line++) {
		d->text = line;
		d->text_len = len;
		d->rec = NULL;
		d->rec_off = b->base_off + start;
		d->rec_len = pos - start;
		if (do_line(s, w, b, d) && b->failed)
			return;
	}
}

static void work(void *job, unsigned index, void *arg)
{
	const struct source *s = arg;
	struct worker *w = &s->workers[index];
	struct src_private *b = job;
	struct doc d = { .worker = index };
	simhash_err err;

	if (!w->ctx) {
		err = simhash_ctx_new(s->o.cfg, &w->ctx);
		if (err) {
			src_fail(&b->pub, NULL, "%s", simhash_strerror(err));
			return;
		}
	}
	d.ctx = w->ctx;
	if (s->o.mode == MODE_FILES)
		do_files(s, w, b, &d);
	else
		do_lines(s, w, b, &d);
}

/* ---- the main thread */

/* Takes back a finished batch: hands it on, or reports its error. */
static void finish(struct source *s, struct src_private *b)
{
	if (s->failed)
		return;
	/* A failed batch still holds the documents before the failing one:
	 * handing them on makes the result independent of -j. */
	if (s->o.batch(&b->pub, s->o.arg)) {
		s->failed = 1;
		return;
	}
	if (b->errs.len) {
		size_t start = 0;

		progress_end(s->progress);
		for (size_t i = 0; i < b->errs.len; i++) {
			if (b->errs.p[i] != '\n')
				continue;
			cli_err("%.*s", (int)(i - start), b->errs.p + start);
			start = i + 1;
		}
		s->had_errors = 1;
	}
	if (b->failed) {
		progress_end(s->progress);
		cli_err("%s", b->err);
		s->failed = 1;
		return;
	}
	progress_add(s->progress, b->pub.n_bytes, b->pub.n_docs);
}

/* A batch to fill: a free one, or the oldest in flight once finished. */
static struct src_private *get_batch(struct source *s)
{
	struct src_private *b;

	if (s->n_free) {
		b = s->free[--s->n_free];
	} else {
		b = pool_next_done(s->pool);
		finish(s, b);
	}
	b->pub.out.len = 0;
	b->pub.n_docs = 0;
	b->pub.n_bytes = 0;
	b->errs.len = 0;
	b->failed = 0;
	b->keep_going = s->o.keep_going;
	if (b->in.cap > BIG_FILE)
		sbuf_free(&b->in); /* it held a huge line: give the memory back */
	return b;
}

/* Finishes every batch in flight, in order. */
static void drain(struct source *s)
{
	struct src_private *b;

	while ((b = pool_next_done(s->pool)))
		finish(s, b);
}

/* Reports an error of the main thread, after those of earlier batches. */
static void fail_here(struct source *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_here(struct source *s, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	drain(s);
	if (!s->failed) {
		progress_end(s->progress);
		cli_err("%s", msg);
	}
	if (s->o.keep_going)
		s->had_errors = 1; /* the caller goes on with the next input */
	else
		s->failed = 1;
}

/* How many of the `left` files the next batch takes: an eighth of what is
 * left per thread, between FILES_PER_BATCH and FILES_MAX_BATCH, so that the
 * first batches are large (few hand-overs between threads: each wakes one,
 * which costs tens of microseconds in a virtual machine) and the last ones
 * small (the threads finish together). */
static size_t files_in_batch(size_t left, unsigned n_threads)
{
	size_t n = left / (4 * (size_t)n_threads);

	n = n < FILES_PER_BATCH ? FILES_PER_BATCH : n > FILES_MAX_BATCH ? FILES_MAX_BATCH : n;
	return left < n ? left : n;
}

static void run_files(struct source *s, char *const *paths, size_t n_paths)
{
	struct src_private *b;
	size_t i = 0;

	while (i < n_paths && !s->failed) {
		b = get_batch(s);
		if (s->failed)
			break;
		b->files = paths + i;
		b->input = (uint32_t)i;
		b->n_files = files_in_batch(n_paths - i, s->o.n_threads);
		i += b->n_files;
		pool_submit(s->pool, b);
	}
}

static void run_lines(struct source *s, const char *path, uint32_t input)
{
	char err[ERR_MAX];
	struct reader r;
	struct src_private *b;
	uint64_t off = 0;
	int ret;

	if (reader_open(&r, path)) {
		fail_here(s, "%s: %s", display_name(path), strerror(errno));
		return;
	}
	while (!s->failed) {
		b = get_batch(s);
		if (s->failed)
			break;
		ret = reader_next(&r, BATCH_BYTES, BATCH_LINES, &b->in, &b->chunk);
		if (ret <= 0) {
			s->free[s->n_free++] = b;
			if (ret < 0 && errno == ENOMEM)
				fail_here(s, "%s:%llu: line too long to hold in memory",
					  display_name(path),
					  (unsigned long long)(r.next_line + r.n_found));
			else if (ret < 0)
				fail_here(s, "%s: %s", display_name(path), strerror(errno));
			break;
		}
		if (s->o.tee && s->o.tee(input, b->chunk.data, b->chunk.len, s->o.arg, err,
					 sizeof(err))) {
			s->free[s->n_free++] = b;
			fail_here(s, "%s", err);
			s->failed = 1; /* even keep_going: the tee's copy has a gap */
			break;
		}
		b->path = path;
		b->input = input;
		b->base_off = off;
		off += b->chunk.len;
		pool_submit(s->pool, b);
	}
	reader_close(&r);
}

simhash_err src_new(const struct src_opts *o, struct source **out)
{
	struct source *s = calloc(1, sizeof(*s));
	unsigned n = o->n_threads ? o->n_threads : 1;
	simhash_err err = SIMHASH_ENOMEM;

	if (!s)
		return SIMHASH_ENOMEM;
	s->o = *o;
	s->o.n_threads = n;
	s->depth = 2 * (size_t)n + 2;
	s->workers = aligned_alloc(64, n * sizeof(*s->workers));
	s->batches = aligned_alloc(64, s->depth * sizeof(*s->batches));
	s->free = calloc(s->depth, sizeof(*s->free));
	if (s->workers)
		memset(s->workers, 0, n * sizeof(*s->workers));
	if (s->batches)
		memset(s->batches, 0, s->depth * sizeof(*s->batches));
	if (!s->workers || !s->batches || !s->free)
		goto out_free;
	for (unsigned i = 0; i < n; i++)
		jsonl_rec_init(&s->workers[i].rec);
	for (size_t i = 0; i < s->depth; i++) {
		s->batches[i].pub.priv = &s->batches[i];
		s->free[s->n_free++] = &s->batches[s->depth - 1 - i];
	}
	err = simhash_ctx_new(o->cfg, &s->workers[0].ctx);
	if (err)
		goto out_free;
	*out = s;
	return SIMHASH_OK;

out_free:
	src_free(s);
	return err;
}

int src_run(struct source *s, char *const *paths, size_t n_paths, struct progress *p)
{
	struct progress quiet = { 0 }; /* never drawn: not a terminal */

	if (!p)
		p = &quiet;
	s->progress = p;
	if (pool_new(s->o.n_threads, s->depth, work, s, &s->pool)) {
		cli_err("%s: cannot start threads: %s", s->o.cmd, strerror(errno));
		return EXIT_FAIL;
	}
	if (s->o.mode == MODE_FILES)
		run_files(s, paths, n_paths);
	for (size_t i = 0; s->o.mode != MODE_FILES && i < n_paths && !s->failed; i++)
		run_lines(s, paths[i], (uint32_t)i);
	drain(s);
	pool_free(s->pool);
	s->pool = NULL;
	progress_end(p);
	return s->failed ? EXIT_FAIL : EXIT_OK;
}

int src_had_errors(const struct source *s)
{
	return s->had_errors;
}

void src_free(struct source *s)
{
	if (!s)
		return;
	for (unsigned i = 0; s->workers && i < s->o.n_threads; i++) {
		simhash_ctx_free(s->workers[i].ctx);
		sbuf_free(&s->workers[i].file);
		jsonl_rec_free(&s->workers[i].rec);
	}
	for (size_t i = 0; s->batches && i < s->depth; i++) {
		sbuf_free(&s->batches[i].in);
		sbuf_free(&s->batches[i].pub.out);
		sbuf_free(&s->batches[i].errs);
	}
	free(s->workers);
	free(s->batches);
	free(s->free);
	free(s);
}
