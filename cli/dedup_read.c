/* dedup_read.c - the documents of `simhash dedup`: read, fingerprinted (or by
 * default sketched) on every core, and kept in input order; their records
 * re-read by offset for --verify and keep/drop.
 *
 * Documents are whole files (default), lines (--lines) or JSON Lines records
 * (--jsonl), as for `simhash fingerprint`, with all its fingerprint options.
 * The main thread cuts the input into batches, the pool (pool.h) fingerprints
 * them, and batches come back in order: so document i is the i-th of the
 * input whatever -j. Memory per document: its fingerprint (or its sketch's
 * keys), its id, the input it came from and its record's byte offset and
 * length; never the texts. Verification and keep/drop re-read records by
 * offset; standard input is spooled to an unlinked temporary file for that.
 *
 * This is the one place dedup reads its input: the rest of the command sees
 * the documents (struct dedup_docs), the inputs' handles and
 * dedup_read_record().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dedup.h"
#include "jsonl.h"
#include "pool.h"
#include "progress.h"
#include "reader.h"
#include "util.h"

#define BATCH_BYTES ((size_t)64 << 10)
#define BATCH_LINES 4096
#define FILES_PER_BATCH 16

/* One fingerprinting thread's own state, made on its first batch. */
struct dedup_worker {
	simhash_ctx *ctx;
	simhash_near *near;
	int near_mode;
	struct sbuf file;
	struct jsonl_rec rec;
};

/* A job of the pool: up to FILES_PER_BATCH files, or a chunk of whole lines
 * of one input; what its documents gave, and the first error. */
struct batch {
	const char *path;
	uint32_t src;
	char **files;
	size_t n_files;
	uint32_t first_file;
	int mode_files;
	struct sbuf in;
	struct chunk chunk;
	uint64_t base_off; /* input offset of chunk.data */
	/* results */
	size_t n;
	struct sbuf fps, offs, lens, ids, id_lens, keys, kinfo;
	uint64_t n_bytes;
	int failed;
	char err[DEDUP_ERR_MAX];
};

static int fail(struct batch *b, const char *path, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct batch *b, const char *path, uint64_t line, const char *fmt, ...)
{
	char msg[DEDUP_ERR_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(b->err, sizeof(b->err), "%s:%llu: %s", display_name(path),
			 (unsigned long long)line, msg);
	else
		snprintf(b->err, sizeof(b->err), "%s: %s", display_name(path), msg);
	b->failed = 1;
	return -1;
}

/* Records one document of the batch. */
static int add_doc(struct batch *b, const simhash_fp *fp, unsigned nw, uint64_t off,
		   uint64_t len, const char *id, size_t id_len)
{
	uint64_t l = id_len;

	if (sbuf_add(&b->fps, fp->w, nw * sizeof(uint64_t)) || sbuf_add(&b->offs, &off, 8) ||
	    sbuf_add(&b->lens, &len, 8) || sbuf_add(&b->ids, id, id_len) ||
	    sbuf_add(&b->id_lens, &l, 8))
		return fail(b, b->path, 0, "out of memory");
	b->n++;
	return 0;
}

/* The document's fingerprint, or by default its sketch (into the batch;
 * *fp is then zero). */
static int fingerprint(struct dedup_worker *w, struct batch *b, const char *text, size_t len,
		       simhash_fp *fp, const char *path, uint64_t line)
{
	simhash_sketch sk;
	simhash_error e;
	simhash_err err;

	if (w->near_mode) {
		memset(fp, 0, sizeof(*fp));
		err = simhash_near_sketch(w->near, text, len, &sk);
		if (!err) {
			uint64_t info = (uint64_t)sk.kind << 56 | sk.n_keys;
			if (sbuf_add(&b->keys, sk.keys, sk.n_keys * sizeof(uint64_t)) ||
			    sbuf_add(&b->kinfo, &info, 8))
				return fail(b, path, line, "out of memory");
		}
	} else {
		err = simhash_fingerprint(w->ctx, text, len, fp, &e);
	}

	if (err == SIMHASH_EUTF8)
		return fail(b, path, line, "invalid UTF-8 at byte %zu", (size_t)e.offset);
	if (err)
		return fail(b, path, line, "%s", simhash_strerror(err));
	return 0;
}

static void do_files(const struct dedup_run *run, struct dedup_worker *w, struct batch *b)
{
	unsigned nw = run->cfg->bits == 128 ? 2 : 1;
	simhash_fp fp;
	size_t i;

	for (i = 0; i < b->n_files; i++) {
		const char *path = b->files[i];
		if (read_path_all(path, &w->file)) {
			fail(b, path, 0, "%s", strerror(errno));
			return;
		}
		b->n_bytes += w->file.len;
		if (fingerprint(w, b, w->file.p, w->file.len, &fp, path, 0) ||
		    add_doc(b, &fp, nw, 0, w->file.len, path, strlen(path)))
			return;
	}
}

static void do_lines(const struct dedup_run *run, struct dedup_worker *w, struct batch *b)
{
	unsigned nw = run->cfg->bits == 128 ? 2 : 1;
	uint64_t line = b->chunk.first_line;
	size_t pos = 0, len, start;
	const char *s;
	char err[DEDUP_ERR_MAX / 2], num[48];
	simhash_fp fp;
	int ret;

	b->n_bytes = b->chunk.len;
	for (start = 0; chunk_next_line(&b->chunk, &pos, &s, &len); start = pos, line++) {
		const char *id = num;
		size_t id_len;

		if (run->mode == MODE_LINES) {
			if (fingerprint(w, b, s, len, &fp, b->path, line))
				return;
		} else {
			ret = jsonl_extract(s, len, run->text_field, run->id_field,
					    run->jsonl_flags, &w->rec, err, sizeof(err));
			if (ret == JSONL_BLANK)
				continue;
			if (ret == JSONL_ERROR) {
				fail(b, b->path, line, "%s", err);
				return;
			}
			if (fingerprint(w, b, w->rec.text, w->rec.text_len, &fp, b->path, line))
				return;
		}
		if (run->mode == MODE_JSONL && w->rec.id) {
			id = w->rec.id;
			id_len = w->rec.id_len;
		} else if (run->multi) {
			id_len = (size_t)snprintf(num, sizeof(num), "%s:%llu", "", (unsigned long long)line);
			/* "FILE:LINE": the path is added by the main thread's id arena */
			id = NULL;
		} else {
			id_len = (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)line);
		}
		if (!id) {
			struct sbuf t = { 0 };
			if (sbuf_adds(&t, display_name(b->path)) || sbuf_addc(&t, ':') ||
			    sbuf_add_u64(&t, line) ||
			    add_doc(b, &fp, nw, b->base_off + start, pos - start, t.p, t.len)) {
				sbuf_free(&t);
				fail(b, b->path, 0, "out of memory");
				return;
			}
			sbuf_free(&t);
			continue;
		}
		if (add_doc(b, &fp, nw, b->base_off + start, pos - start, id, id_len))
			return;
	}
}

static void work(void *job, unsigned index, void *arg)
{
	const struct dedup_run *run = arg;
	struct dedup_worker *w = &run->workers[index];
	struct batch *b = job;
	simhash_err err;

	if (!w->ctx) {
		err = simhash_ctx_new(run->cfg, &w->ctx);
		if (err) {
			fail(b, b->path ? b->path : "-", 0, "%s", simhash_strerror(err));
			return;
		}
	}
	w->near_mode = run->near;
	if (run->near && !w->near) {
		err = simhash_near_new(&w->near);
		if (err) {
			fail(b, b->path ? b->path : "-", 0, "%s", simhash_strerror(err));
			return;
		}
	}
	if (run->mode == MODE_FILES)
		do_files(run, w, b);
	else
		do_lines(run, w, b);
}

static int docs_take(struct dedup_docs *d, struct batch *b)
{
	const uint64_t *lens = (const uint64_t *)(void *)b->id_lens.p;
	size_t i;
	uint64_t at = 0;

	if (d->n + b->n > d->cap) {
		size_t c = d->cap ? d->cap * 2 : 4096;
		while (c < d->n + b->n)
			c *= 2;
		d->fps = realloc(d->fps, c * d->nw * 8);
		d->rec_off = realloc(d->rec_off, c * 8);
		d->rec_len = realloc(d->rec_len, c * 8);
		d->src = realloc(d->src, c * 4);
		d->id_off = realloc(d->id_off, (c + 1) * 8);
		d->kinfo = realloc(d->kinfo, c * 8);
		if (!d->fps || !d->rec_off || !d->rec_len || !d->src || !d->id_off || !d->kinfo)
			return -1;
		d->cap = c;
	}
	if (b->n) {
		memcpy(d->fps + d->n * d->nw, b->fps.p, b->n * d->nw * 8);
		memcpy(d->rec_off + d->n, b->offs.p, b->n * 8);
		memcpy(d->rec_len + d->n, b->lens.p, b->n * 8);
		if (b->kinfo.len)
			memcpy(d->kinfo + d->n, b->kinfo.p, b->n * 8);
	}
	if (sbuf_add(&d->keys, b->keys.p, b->keys.len))
		return -1;
	for (i = 0; i < b->n; i++) {
		d->src[d->n + i] = b->mode_files ? b->first_file + (uint32_t)i : b->src;
		d->id_off[d->n + i] = d->ids.len + at;
		at += lens[i];
	}
	if (sbuf_add(&d->ids, b->ids.p, b->ids.len))
		return -1;
	d->n += b->n;
	d->id_off[d->n] = d->ids.len;
	return 0;
}

/* The main thread's side of the pool: batches free or in flight, and the
 * documents taken back so far. */
struct state {
	struct dedup_run *run;
	struct pool *pool;
	struct batch *batches, **free;
	size_t n_free;
	struct dedup_docs *docs;
	struct progress progress;
	int failed;
};

static void finish(struct state *st, struct batch *b)
{
	if (st->failed)
		return;
	if (b->failed) {
		progress_end(&st->progress);
		cli_err("%s", b->err);
		st->failed = 1;
		return;
	}
	if (docs_take(st->docs, b)) {
		cli_err("out of memory");
		st->failed = 1;
		return;
	}
	progress_add(&st->progress, b->n_bytes, b->n);
}

static struct batch *get_batch(struct state *st)
{
	struct batch *b;

	if (st->n_free) {
		b = st->free[--st->n_free];
	} else {
		b = pool_next_done(st->pool);
		finish(st, b);
	}
	b->n = 0;
	b->fps.len = b->offs.len = b->lens.len = b->ids.len = b->id_lens.len = 0;
	b->keys.len = b->kinfo.len = 0;
	b->n_bytes = 0;
	b->failed = 0;
	return b;
}

static void drain(struct state *st)
{
	struct batch *b;

	while ((b = pool_next_done(st->pool)))
		finish(st, b);
}

static void run_lines(struct state *st, struct dedup_input *in, uint32_t src)
{
	struct reader r;
	struct batch *b;
	uint64_t off = 0;
	int ret;

	if (reader_open(&r, in->path)) {
		drain(st);
		if (!st->failed)
			cli_err("%s: %s", display_name(in->path), strerror(errno));
		st->failed = 1;
		return;
	}
	while (!st->failed) {
		b = get_batch(st);
		if (st->failed)
			break;
		ret = reader_next(&r, BATCH_BYTES, BATCH_LINES, &b->in, &b->chunk);
		if (ret <= 0) {
			st->free[st->n_free++] = b;
			if (ret < 0) {
				drain(st);
				if (!st->failed)
					cli_err("%s: %s", display_name(in->path), strerror(errno));
				st->failed = 1;
			}
			break;
		}
		if (in->spool && fwrite(b->chunk.data, 1, b->chunk.len, in->spool) != b->chunk.len) {
			drain(st);
			cli_err("cannot spool standard input: %s", strerror(errno));
			st->failed = 1;
			break;
		}
		b->path = in->path;
		b->src = src;
		b->mode_files = 0;
		b->base_off = off;
		off += b->chunk.len;
		pool_submit(st->pool, b);
	}
	reader_close(&r);
}

static void run_files(struct state *st, char **paths, size_t n)
{
	struct batch *b;
	size_t i = 0;

	while (i < n && !st->failed) {
		b = get_batch(st);
		if (st->failed)
			break;
		b->files = paths + i;
		b->n_files = n - i < FILES_PER_BATCH ? n - i : FILES_PER_BATCH;
		b->first_file = (uint32_t)i;
		b->mode_files = 1;
		b->path = paths[i];
		i += b->n_files;
		pool_submit(st->pool, b);
	}
}

int dedup_fingerprint_all(struct dedup_run *run, unsigned jobs, struct dedup_input *ins,
			  char **paths, size_t n_paths, struct dedup_docs *docs)
{
	struct state st = { .run = run, .docs = docs };
	size_t depth = 2 * (size_t)jobs + 2, i;

	if (pool_new(jobs, depth, work, run, &st.pool)) {
		cli_err("dedup: cannot start threads: %s", strerror(errno));
		return EXIT_FAIL;
	}
	st.batches = xcalloc(depth, sizeof(*st.batches));
	st.free = xcalloc(depth, sizeof(*st.free));
	for (i = 0; i < depth; i++)
		st.free[st.n_free++] = &st.batches[depth - 1 - i];
	progress_init(&st.progress, 0);
	if (run->mode == MODE_FILES)
		run_files(&st, paths, n_paths);
	for (i = 0; run->mode != MODE_FILES && i < n_paths && !st.failed; i++)
		run_lines(&st, &ins[i], (uint32_t)i);
	drain(&st);
	pool_free(st.pool);
	progress_end(&st.progress);
	for (i = 0; i < depth; i++) {
		struct batch *b = &st.batches[i];
		sbuf_free(&b->in);
		sbuf_free(&b->fps);
		sbuf_free(&b->offs);
		sbuf_free(&b->lens);
		sbuf_free(&b->ids);
		sbuf_free(&b->id_lens);
		sbuf_free(&b->keys);
		sbuf_free(&b->kinfo);
	}
	free(st.batches);
	free(st.free);
	return st.failed ? EXIT_FAIL : EXIT_OK;
}

void dedup_docs_free(struct dedup_docs *d)
{
	free(d->fps);
	free(d->id_off);
	sbuf_free(&d->ids);
	free(d->rec_off);
	free(d->rec_len);
	free(d->src);
	free(d->kinfo);
	sbuf_free(&d->keys);
}

int dedup_workers_new(struct dedup_run *run, unsigned n)
{
	simhash_err err;
	unsigned i;

	run->workers = xcalloc(n, sizeof(*run->workers));
	run->n_workers = n;
	for (i = 0; i < n; i++)
		jsonl_rec_init(&run->workers[i].rec);
	err = simhash_ctx_new(run->cfg, &run->workers[0].ctx);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		return err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	return EXIT_OK;
}

void dedup_workers_free(struct dedup_run *run)
{
	unsigned i;

	for (i = 0; run->workers && i < run->n_workers; i++) {
		simhash_ctx_free(run->workers[i].ctx);
		simhash_near_free(run->workers[i].near);
		sbuf_free(&run->workers[i].file);
		jsonl_rec_free(&run->workers[i].rec);
	}
	free(run->workers);
	run->workers = NULL;
	run->n_workers = 0;
}

int dedup_read_record(const struct dedup_input *ins, const struct dedup_docs *d, size_t i,
		      struct sbuf *out)
{
	const struct dedup_input *in = &ins[d->src[i]];
	size_t len = (size_t)d->rec_len[i];
	long got;

	if (in->fd < 0)
		return read_path_all(in->path, out);
	out->len = 0;
	if (sbuf_grow(out, len + 1))
		return -1;
	got = cli_read_full(in->fd, out->p, len, (int64_t)d->rec_off[i]);
	if (got < 0)
		return -1;
	if ((size_t)got < len) {
		errno = EIO; /* the input shrank since it was read */
		return -1;
	}
	out->len = len;
	return 0;
}

int dedup_open_inputs(struct dedup_input *ins, char **paths, size_t n, enum mode mode)
{
	struct stat s;
	size_t i;

	for (i = 0; i < n; i++) { /* what dedup_close_inputs() may see if one fails */
		ins[i].fd = -1;
		ins[i].spool = NULL;
	}
	for (i = 0; i < n; i++) {
		ins[i].path = paths[i];
		if (mode == MODE_FILES)
			continue;
		if (strcmp(paths[i], "-") && stat(paths[i], &s) == 0 && S_ISREG(s.st_mode)) {
			ins[i].fd = open(paths[i], O_RDONLY | O_CLOEXEC);
			if (ins[i].fd < 0) {
				cli_err("%s: %s", paths[i], strerror(errno));
				return EXIT_FAIL;
			}
			continue;
		}
		ins[i].spool = tmpfile();
		if (!ins[i].spool) {
			cli_err("cannot spool %s: %s", display_name(paths[i]), strerror(errno));
			return EXIT_FAIL;
		}
		ins[i].fd = fileno(ins[i].spool);
	}
	return EXIT_OK;
}

int dedup_flush_inputs(struct dedup_input *ins, size_t n)
{
	int ret = EXIT_OK;
	size_t i;

	for (i = 0; i < n; i++)
		if (ins[i].spool && fflush(ins[i].spool)) {
			cli_err("cannot spool standard input: %s", strerror(errno));
			ret = EXIT_FAIL;
		}
	return ret;
}

void dedup_close_inputs(struct dedup_input *ins, size_t n)
{
	size_t i;

	for (i = 0; ins && i < n; i++) {
		if (ins[i].spool)
			fclose(ins[i].spool);
		else if (ins[i].fd >= 0)
			close(ins[i].fd);
	}
}

#define RECORD_WINDOW ((size_t)1 << 20)

int dedup_records_get(struct dedup_records *w, const struct dedup_input *ins,
		      const struct dedup_docs *d, size_t i, const char **p, size_t *len)
{
	const struct dedup_input *in = &ins[d->src[i]];
	uint64_t off = d->rec_off[i];
	size_t want = (size_t)d->rec_len[i];

	if (in->fd < 0 || want > RECORD_WINDOW) { /* a path, or a record larger than the window */
		w->valid = 0;
		if (dedup_read_record(ins, d, i, &w->win))
			return -1;
		*p = w->win.p;
		*len = w->win.len;
		return 0;
	}
	if (!w->valid || w->src != d->src[i] || off < w->off || off + want > w->off + w->win.len) {
		long got;
		w->valid = 0;
		if (sbuf_grow(&w->win, RECORD_WINDOW))
			return -1;
		got = cli_read_full(in->fd, w->win.p, RECORD_WINDOW, (int64_t)off);
		if (got < 0)
			return -1;
		if ((size_t)got < want) {
			errno = EIO; /* the input shrank since it was read */
			return -1;
		}
		w->win.len = (size_t)got;
		w->off = off;
		w->src = d->src[i];
		w->valid = 1;
	}
	*p = w->win.p + (off - w->off);
	*len = want;
	return 0;
}
