/* cmd_dedup.c - `simhash dedup`: fingerprint a corpus on every core, find its
 * near-duplicates (all pairs within -k), optionally verify each candidate
 * pair by the exact similarity of the texts, and write pairs, clusters, or
 * the records to keep or to drop.
 *
 * Documents are whole files (default), lines (--lines) or JSON Lines records
 * (--jsonl), as for `simhash fingerprint`, with all its fingerprint options.
 * The main thread cuts the input into batches, the pool (pool.h) fingerprints
 * them, and batches come back in order: so document i is the i-th of the
 * input whatever -j. Memory per document: its fingerprint, its id, the input
 * it came from and its record's byte offset and length; never the texts.
 * Verification and keep/drop re-read records by offset; standard input is
 * spooled to an unlinked temporary file for that.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "commands.h"
#include "config_opts.h"
#include "jsonl.h"
#include "outfile.h"
#include "pool.h"
#include "progress.h"
#include "reader.h"
#include "util.h"

#define BATCH_BYTES ((size_t)64 << 10)
#define BATCH_LINES 4096
#define FILES_PER_BATCH 16
#define MAX_JOBS 1024
#define ERR_MAX 512
/* Defaults of -k, from docs/quality.md (natural set, the default features of
 * scheme v2): without --verify the best F1 (k = 5); with it, a k whose
 * candidates hold nearly all the pairs with Jaccard >= 0.8 (k = 13: 99.3 %;
 * k = 9 is the first over 95 %) at a few thousand verifications, with room
 * for other data. 128 bits: the same scaled. */
#define DEFAULT_K 5
#define DEFAULT_K_VERIFY 13

enum mode { MODE_FILES, MODE_LINES, MODE_JSONL };
enum output { OUT_PAIRS, OUT_CLUSTERS, OUT_KEEP, OUT_DROP };
enum verify { VERIFY_NONE, VERIFY_JACCARD, VERIFY_COSINE };

enum { OPT_LINES, OPT_JSONL, OPT_TEXT_FIELD, OPT_ID_FIELD, OPT_JOBS, OPT_K, OPT_OUTPUT_MODE,
       OPT_OUT, OPT_VERIFY, OPT_VERIFY_FEATURES, OPT_QUIET, OPT_AGAINST, OPT_NEAR,
       OPT_EXPLAIN, OPT_EXHAUSTIVE };

static const struct cli_opt opts[] = {
	[OPT_LINES] = { "lines", 0, NULL, "one document per line; id: its line number" },
	[OPT_JSONL] = { "jsonl", 0, NULL, "one JSON object per line, with text and id fields" },
	[OPT_TEXT_FIELD] = { "text-field", 0, "NAME", "the text field of --jsonl (default: text)" },
	[OPT_ID_FIELD] = { "id-field", 0, "NAME", "the id field of --jsonl (default: id)" },
	[OPT_JOBS] = { "jobs", 'j', "N", "use N threads (default: the number of cores)" },
	[OPT_K] = { "max-dist", 'k', "K",
		    "largest Hamming distance of a candidate pair (default 5; 13 with --verify)" },
	[OPT_OUTPUT_MODE] = { "output", 0, "WHAT",
			      "pairs (default), clusters (JSON Lines), keep or drop (records)" },
	[OPT_OUT] = { "out", 'o', "FILE", "write to FILE atomically" },
	[OPT_VERIFY] = { "verify", 0, "SIM:T",
			 "keep pairs whose exact similarity is >= T: jaccard:T or cosine:T" },
	[OPT_VERIFY_FEATURES] = { "verify-features", 0, "F",
				  "features verified: shingle3 (default: word 3-shingles), word, "
				  "char3 (or any charN, shingleN)" },
	[OPT_QUIET] = { "quiet", 'q', NULL, "no summary line on standard error" },
	[OPT_AGAINST] = { "against", 0, "INDEX",
			  "find each document's near-duplicates in INDEX (simhash index build) "
			  "instead: pairs ID<TAB>INDEX_ID<TAB>DIST, keep/drop the documents "
			  "without/with one" },
	[OPT_NEAR] = { "near", 0, NULL,
		       "the default decision, by the exact similarity of the texts (see "
		       "below), stated: an error with -k, --verify or --against" },
	[OPT_EXPLAIN] = { "explain", 0, NULL,
			  "add why each pair is kept (features, shared, Jaccard, threshold); "
			  "not with -k" },
	[OPT_EXHAUSTIVE] = { "exhaustive", 0, NULL,
			     "every pair the decision accepts, by an exact join instead of "
			     "banded MinHash candidates (slow on large sets of short texts); "
			     "not with -k" },
	{ NULL, 0, NULL, NULL },
};

/* Per document, in input order. */
struct docs {
	size_t n, cap;
	unsigned nw;
	uint64_t *fps;
	uint64_t *rec_off; /* record's first byte in its input */
	uint64_t *rec_len; /* with its line break */
	uint32_t *src;     /* index of its input */
	uint64_t *id_off;  /* n + 1 offsets into ids */
	struct sbuf ids;
	/* the default (no -k, no --verify): each document's sketch, its keys in
	 * one arena; kinfo[i] = kind << 56 | number of keys */
	uint64_t *kinfo;
	struct sbuf keys;
};

struct run {
	enum mode mode;
	int multi;
	const char *text_field, *id_field;
	unsigned jsonl_flags;
	const simhash_config *cfg;
	struct worker *workers;
	int near; /* sketch documents for simhash_near_join() instead */
};

struct worker {
	simhash_ctx *ctx;
	simhash_near *near;
	int near_mode;
	struct sbuf file;
	struct jsonl_rec rec;
};

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
	char err[ERR_MAX];
};

static void help(void)
{
	fputs("usage: simhash dedup [OPTION]... [FILE]...\n\n"
	      "Finds the near-duplicate documents among the FILEs (each a document, or with\n"
	      "--lines or --jsonl, each line) and writes, as --output says: `pairs`\n"
	      "(ID_A<TAB>ID_B<TAB>DIST<TAB>SIM; no SIM with -k alone), `clusters`\n"
	      "(JSON Lines: cluster, size and members with their similarity, or with -k\n"
	      "their distance, to the first member), `keep`\n"
	      "(the records of the first document of each cluster and of every other\n"
	      "document, byte for byte, in input order) or `drop` (the others).\n"
	      "A summary goes to standard error.\n\n"
	      "By default two documents are near-duplicates when their exact similarity\n"
	      "SIM reaches 0.8: the Jaccard index of the word 3-shingles of long texts,\n"
	      "and for texts of at most 176 characters 1 - (1 - J) / 3, J that of their\n"
	      "character 3-grams (2-grams in Chinese and Japanese); DIST is\n"
	      "round(100 (1 - SIM)). Candidate pairs come from banded MinHash (far\n"
	      "fewer than all pairs); each is checked exactly, and 99 % of the pairs\n"
	      "are found on the public sets (docs/quality.md); --exhaustive finds every\n"
	      "one, in time that grows faster than the input on large sets of short texts.\n"
	      "With -k, --verify, --against or a fingerprint option, pairs of\n"
	      "fingerprints within Hamming distance K are found instead (and with\n"
	      "--verify, kept when their exact similarity SIM reaches T).\n",
	      stdout);
	cli_opts_help(stdout, opts, 1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(struct batch *b, const char *path, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct batch *b, const char *path, uint64_t line, const char *fmt, ...)
{
	char msg[ERR_MAX / 2];
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
static int fingerprint(struct worker *w, struct batch *b, const char *text, size_t len,
		       simhash_fp *fp, const char *path, uint64_t line)
{
	simhash_sketch sk;
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
		err = simhash_fingerprint(w->ctx, text, len, fp);
	}

	if (err == SIMHASH_EUTF8)
		return fail(b, path, line, "invalid UTF-8 at byte %zu",
			    simhash_ctx_error_offset(w->ctx));
	if (err)
		return fail(b, path, line, "%s", simhash_strerror(err));
	return 0;
}

static void do_files(const struct run *run, struct worker *w, struct batch *b)
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

static void do_lines(const struct run *run, struct worker *w, struct batch *b)
{
	unsigned nw = run->cfg->bits == 128 ? 2 : 1;
	uint64_t line = b->chunk.first_line;
	size_t pos = 0, len, start;
	const char *s;
	char err[ERR_MAX / 2], num[48];
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
	const struct run *run = arg;
	struct worker *w = &run->workers[index];
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

static int docs_take(struct docs *d, struct batch *b)
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

/* One input: where its records are re-read from. */
struct input {
	const char *path;
	int fd;    /* regular file or the spool of standard input; -1: files mode */
	FILE *spool;
};

struct state {
	struct run *run;
	struct pool *pool;
	struct batch *batches, **free;
	size_t n_free;
	struct docs *docs;
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

static void run_lines(struct state *st, struct input *in, uint32_t src)
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

static int fingerprint_all(struct run *run, unsigned jobs, struct input *ins, char **paths,
			   size_t n_paths, struct docs *docs)
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

/* Reads document i's record (with its line break) into out. */
static int read_record(const struct input *ins, const struct docs *d, size_t i, struct sbuf *out)
{
	const struct input *in = &ins[d->src[i]];
	size_t len = (size_t)d->rec_len[i], got = 0;
	ssize_t r;

	if (in->fd < 0)
		return read_path_all(in->path, out);
	out->len = 0;
	if (sbuf_grow(out, len + 1))
		return -1;
	while (got < len) {
		r = pread(in->fd, out->p + got, len - got, (off_t)(d->rec_off[i] + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		got += (size_t)r;
	}
	out->len = len;
	return 0;
}

/* One verifying thread: pairs [lo, hi) of the (a-sorted) list. */
struct vjob {
	const struct run *run;
	const struct input *ins;
	const struct docs *d;
	const simhash_config *vcfg;
	enum verify how;
	const simhash_pair *pairs;
	size_t lo, hi;
	double *sims;    /* per pair; < 0: below the threshold or not verified */
	double threshold;
	int failed;
	char err[ERR_MAX];
};

/* The text of document i: the file, the line, or the record's text field.
 * 0, or -1 with the message in err. */
static int load_text(struct vjob *j, size_t i, struct sbuf *buf, struct jsonl_rec *rec,
		     const char **text, size_t *len)
{
	const struct docs *d = j->d;
	const char *path = display_name(j->ins[d->src[i]].path);
	char err[ERR_MAX / 2];
	size_t n;

	if (read_record(j->ins, d, i, buf)) {
		snprintf(j->err, sizeof(j->err), "%s: %s", path, strerror(errno));
		return -1;
	}
	n = buf->len;
	if (j->run->mode != MODE_FILES && n && buf->p[n - 1] == '\n')
		n--;
	if (j->run->mode != MODE_FILES && n && buf->p[n - 1] == '\r')
		n--;
	if (j->run->mode != MODE_JSONL) {
		*text = buf->p;
		*len = n;
		return 0;
	}
	if (jsonl_extract(buf->p, n, j->run->text_field, j->run->id_field, j->run->jsonl_flags,
			  rec, err, sizeof(err)) != JSONL_OK) {
		snprintf(j->err, sizeof(j->err), "%s: record changed since it was read: %s", path,
			 err);
		return -1;
	}
	*text = rec->text;
	*len = rec->text_len;
	return 0;
}

static void *verify_thread(void *arg)
{
	struct vjob *j = arg;
	struct sbuf ba = { 0 }, bb = { 0 };
	struct jsonl_rec ra, rb;
	const char *ta = NULL, *tb;
	size_t la = 0, lb, i;
	uint64_t cur = UINT64_MAX;
	simhash_ctx *ctx = NULL;
	simhash_err err;

	jsonl_rec_init(&ra);
	jsonl_rec_init(&rb);
	err = simhash_ctx_new(j->vcfg, &ctx);
	if (err) {
		snprintf(j->err, sizeof(j->err), "dedup: verify: %s", simhash_strerror(err));
		j->failed = 1;
	}
	for (i = j->lo; i < j->hi && !j->failed; i++) {
		double cos = 0, jac = 0, sim;

		if (j->pairs[i].a != cur) { /* pairs come sorted by a: read it once */
			cur = j->pairs[i].a;
			if (load_text(j, (size_t)cur, &ba, &ra, &ta, &la)) {
				j->failed = 1;
				break;
			}
		}
		if (load_text(j, (size_t)j->pairs[i].b, &bb, &rb, &tb, &lb)) {
			j->failed = 1;
			break;
		}
		err = simhash_text_similarity(ctx, ta, la, tb, lb, &cos, &jac);
		if (err) {
			snprintf(j->err, sizeof(j->err), "dedup: verify: %s", simhash_strerror(err));
			j->failed = 1;
			break;
		}
		sim = j->how == VERIFY_JACCARD ? jac : cos;
		j->sims[i] = sim >= j->threshold ? sim : -1;
	}
	simhash_ctx_free(ctx);
	sbuf_free(&ba);
	sbuf_free(&bb);
	jsonl_rec_free(&ra);
	jsonl_rec_free(&rb);
	return NULL;
}

/* Keeps the pairs whose exact similarity is at least threshold, verified on
 * n_threads threads (each a contiguous share of the pairs; the result is in
 * the same order whatever their number); sims gets the similarity of each
 * kept pair. */
static int verify(const struct run *run, const struct input *ins, const struct docs *d,
		  const simhash_config *vcfg, enum verify how, double threshold,
		  unsigned n_threads, simhash_pair *pairs, size_t *n_pairs, double **sims)
{
	size_t n = *n_pairs, i, kept = 0;
	struct vjob *jobs;
	pthread_t *th;
	int *started, ret = EXIT_OK;
	unsigned t;

	if (n_threads > 64)
		n_threads = 64;
	if (n < 64)
		n_threads = 1;
	*sims = xmalloc((n ? n : 1) * sizeof(**sims));
	jobs = xcalloc(n_threads, sizeof(*jobs));
	th = xcalloc(n_threads, sizeof(*th));
	started = xcalloc(n_threads, sizeof(*started));
	for (t = 0; t < n_threads; t++) {
		struct vjob *j = &jobs[t];
		j->run = run;
		j->ins = ins;
		j->d = d;
		j->vcfg = vcfg;
		j->how = how;
		j->pairs = pairs;
		j->lo = n * t / n_threads;
		j->hi = n * (t + 1) / n_threads;
		j->sims = *sims;
		j->threshold = threshold;
		if (t > 0)
			started[t] = !pthread_create(&th[t], NULL, verify_thread, j);
	}
	verify_thread(&jobs[0]);
	for (t = 1; t < n_threads; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			verify_thread(&jobs[t]);
	}
	for (t = 0; t < n_threads && ret == EXIT_OK; t++)
		if (jobs[t].failed) {
			cli_err("%s", jobs[t].err);
			ret = EXIT_FAIL;
		}
	for (i = 0; i < n && ret == EXIT_OK; i++)
		if ((*sims)[i] >= 0) {
			pairs[kept] = pairs[i];
			(*sims)[kept++] = (*sims)[i];
		}
	*n_pairs = kept;
	free(jobs);
	free(th);
	free(started);
	return ret;
}

static int flush_out(struct outfile *out, struct sbuf *b, int force)
{
	if (b->len && (force || b->len >= ((size_t)1 << 20))) {
		if (outfile_write(out, b->p, b->len))
			return -1;
		b->len = 0;
	}
	return 0;
}

static int add_id(struct sbuf *b, const struct docs *d, size_t i)
{
	return sbuf_add(b, d->ids.p + d->id_off[i], (size_t)(d->id_off[i + 1] - d->id_off[i]));
}

static unsigned doc_dist(const struct docs *d, size_t i, size_t j)
{
	unsigned n = 0, w;

	for (w = 0; w < d->nw; w++)
		n += (unsigned)__builtin_popcountll(d->fps[i * d->nw + w] ^ d->fps[j * d->nw + w]);
	return n;
}

static int write_pairs(struct outfile *out, const struct docs *d, const simhash_pair *pairs,
		       size_t n, const double *sims)
{
	struct sbuf b = { 0 };
	char num[32];
	size_t i;
	int ret = EXIT_OK;

	for (i = 0; i < n && ret == EXIT_OK; i++) {
		if (add_id(&b, d, (size_t)pairs[i].a) || sbuf_addc(&b, '\t') ||
		    add_id(&b, d, (size_t)pairs[i].b) || sbuf_addc(&b, '\t') ||
		    sbuf_add_u64(&b, pairs[i].dist))
			ret = EXIT_FAIL;
		if (sims) {
			int m = snprintf(num, sizeof(num), "\t%.6f", sims[i]);
			if (sbuf_add(&b, num, (size_t)m))
				ret = EXIT_FAIL;
		}
		if (sbuf_addc(&b, '\n') || flush_out(out, &b, 0))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	sbuf_free(&b);
	return ret;
}

struct near;
static int member_sim(struct sbuf *b, const struct docs *d, const struct near *nr, size_t first,
		      size_t m);

/* JSON Lines, one per cluster of two or more, in order of its first member:
 * {"cluster":N,"size":S,"members":[{"id":...,"dist":D},...]}; by default
 * (nr) "sim" instead of "dist": the member's similarity to the first. */
static int write_clusters(struct outfile *out, const struct docs *d, const uint64_t *cl,
			  const struct near *nr, size_t *n_clusters)
{
	size_t n = d->n, i, *start = xcalloc(n + 1, sizeof(*start)), *order, *fill;
	struct sbuf b = { 0 };
	int ret = EXIT_OK;

	for (i = 0; i < n; i++)
		start[cl[i] + 1]++;
	for (i = 0; i < n; i++)
		start[i + 1] += start[i];
	order = xmalloc((n ? n : 1) * sizeof(*order));
	fill = xmalloc((n ? n : 1) * sizeof(*fill));
	memcpy(fill, start, n * sizeof(*fill));
	for (i = 0; i < n; i++)
		order[fill[cl[i]]++] = i;
	*n_clusters = 0;
	for (i = 0; i < n && ret == EXIT_OK; i++) {
		size_t size = start[i + 1] - start[i], j;
		if (cl[i] != i || size < 2)
			continue;
		++*n_clusters;
		if (sbuf_adds(&b, "{\"cluster\":") || sbuf_add_u64(&b, *n_clusters) ||
		    sbuf_adds(&b, ",\"size\":") || sbuf_add_u64(&b, size) ||
		    sbuf_adds(&b, ",\"members\":["))
			ret = EXIT_FAIL;
		for (j = start[i]; j < start[i + 1] && ret == EXIT_OK; j++) {
			size_t m = order[j];
			if ((j > start[i] && sbuf_addc(&b, ',')) || sbuf_adds(&b, "{\"id\":") ||
			    sbuf_add_json_str(&b, d->ids.p + d->id_off[m],
					      (size_t)(d->id_off[m + 1] - d->id_off[m])) ||
			    member_sim(&b, d, nr, i, m) || sbuf_addc(&b, '}'))
				ret = EXIT_FAIL;
		}
		if (ret == EXIT_OK && (sbuf_adds(&b, "]}\n") || flush_out(out, &b, 0)))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	sbuf_free(&b);
	free(start);
	free(order);
	free(fill);
	return ret;
}

/* Appends document i to b as `keep` and `drop` write it: its record byte for
 * byte as read (rec is scratch space), or in files mode its path and a
 * newline. Returns EXIT_OK or EXIT_FAIL (a read error is reported). */
static int add_record(struct sbuf *b, const struct run *run, const struct input *ins,
		      const struct docs *d, size_t i, struct sbuf *rec)
{
	if (run->mode == MODE_FILES)
		return add_id(b, d, i) || sbuf_addc(b, '\n') ? EXIT_FAIL : EXIT_OK;
	if (read_record(ins, d, i, rec)) {
		cli_err("%s: %s", display_name(ins[d->src[i]].path), strerror(errno));
		return EXIT_FAIL;
	}
	return sbuf_add(b, rec->p, rec->len) ? EXIT_FAIL : EXIT_OK;
}

/* The records to keep (the first of each cluster, and every single one) or
 * to drop (the others), byte for byte, in input order; files mode: paths. */
static int write_records(struct outfile *out, const struct run *run, const struct input *ins,
			 const struct docs *d, const uint64_t *cl, int keep)
{
	struct sbuf rec = { 0 }, b = { 0 };
	size_t i;
	int ret = EXIT_OK;

	for (i = 0; i < d->n && ret == EXIT_OK; i++) {
		if ((cl[i] == i) != keep)
			continue;
		ret = add_record(&b, run, ins, d, i, &rec);
		if (ret == EXIT_OK && flush_out(out, &b, 0))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	sbuf_free(&rec);
	sbuf_free(&b);
	return ret;
}

/* ---- the default: exact similarity of sketches (simhash_near_join) */

/* The outcome of the join over every document: exact-duplicate groups
 * (members of each first member, ascending) and the near pairs between the
 * first members, both ways (adjacency lists). */
struct near {
	int exhaustive; /* simhash_near_join() instead of the band join */
	simhash_sketch *sk;
	uint64_t *same;
	simhash_near_pair *pairs;
	size_t n_pairs;
	size_t *gstart, *gmem; /* group of first member f: gmem[gstart[f] .. gstart[f + 1]) */
	size_t *astart;        /* pairs of first member f: adj[astart[f] .. astart[f + 1]) */
	struct adj { uint64_t other; double jaccard; } *adj;
};

static void near_free(struct near *nr)
{
	free(nr->sk);
	free(nr->same);
	simhash_near_pairs_free(nr->pairs);
	free(nr->gstart);
	free(nr->gmem);
	free(nr->astart);
	free(nr->adj);
}

static simhash_near_kind doc_kind(const struct docs *d, size_t i)
{
	return (simhash_near_kind)(d->kinfo[i] >> 56);
}

static void near_sketches(const struct docs *d, struct near *nr)
{
	const uint64_t *keys = (const uint64_t *)(void *)d->keys.p;
	size_t n = d->n, i, at = 0;

	nr->sk = xcalloc(n ? n : 1, sizeof(*nr->sk));
	for (i = 0; i < n; i++) {
		nr->sk[i].keys = keys + at;
		nr->sk[i].n_keys = (size_t)(d->kinfo[i] & (((uint64_t)1 << 56) - 1));
		nr->sk[i].kind = doc_kind(d, i);
		at += nr->sk[i].n_keys;
	}
}

static int near_join(const struct docs *d, struct near *nr)
{
	size_t n = d->n, i, *fill;
	simhash_err err;

	nr->same = xcalloc(n ? n : 1, sizeof(*nr->same));
	err = nr->exhaustive ? simhash_near_join(nr->sk, n, nr->same, &nr->pairs, &nr->n_pairs)
			     : simhash_near_band_join(nr->sk, n, nr->same, &nr->pairs, &nr->n_pairs);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		return EXIT_FAIL;
	}
	nr->gstart = xcalloc(n + 2, sizeof(*nr->gstart));
	nr->gmem = xmalloc((n ? n : 1) * sizeof(*nr->gmem));
	for (i = 0; i < n; i++)
		nr->gstart[nr->same[i] + 2]++;
	for (i = 2; i < n + 2; i++)
		nr->gstart[i] += nr->gstart[i - 1];
	for (i = 0; i < n; i++)
		nr->gmem[nr->gstart[nr->same[i] + 1]++] = i;
	nr->astart = xcalloc(n + 2, sizeof(*nr->astart));
	nr->adj = xmalloc((2 * nr->n_pairs + 1) * sizeof(*nr->adj));
	for (i = 0; i < nr->n_pairs; i++) {
		nr->astart[nr->pairs[i].a + 1]++;
		nr->astart[nr->pairs[i].b + 1]++;
	}
	for (i = 1; i < n + 1; i++)
		nr->astart[i] += nr->astart[i - 1];
	fill = xmalloc((n + 1) * sizeof(*fill));
	memcpy(fill, nr->astart, (n + 1) * sizeof(*fill));
	for (i = 0; i < nr->n_pairs; i++) {
		const simhash_near_pair *p = &nr->pairs[i];
		nr->adj[fill[p->a]++] = (struct adj){ p->b, p->jaccard };
		nr->adj[fill[p->b]++] = (struct adj){ p->a, p->jaccard };
	}
	free(fill);
	return EXIT_OK;
}

/* Pairs in all: within each group, and group by group for each near pair. */
static size_t near_count(const struct docs *d, const struct near *nr)
{
	size_t total = 0, i;

	for (i = 0; i < d->n; i++) {
		size_t g = nr->gstart[i + 1] - nr->gstart[i];
		if (nr->same[i] == i)
			total += g * (g - 1) / 2;
	}
	for (i = 0; i < nr->n_pairs; i++) {
		const simhash_near_pair *p = &nr->pairs[i];
		total += (nr->gstart[p->a + 1] - nr->gstart[p->a]) *
			 (nr->gstart[p->b + 1] - nr->gstart[p->b]);
	}
	return total;
}

struct partner {
	uint64_t b;
	double jaccard;
};

static int by_partner(const void *x, const void *y)
{
	uint64_t a = ((const struct partner *)x)->b, b = ((const struct partner *)y)->b;
	return a < b ? -1 : a > b;
}

/* One pair line: ID_A, ID_B, DIST = round(100 (1 - SIM)), SIM, and with
 * --explain why: the kind's features, shared of all, Jaccard and threshold. */
static int near_line(struct sbuf *b, const struct docs *d, const struct near *nr, size_t x,
		     size_t y, double jaccard, int explain)
{
	simhash_near_kind kind = doc_kind(d, x);
	double sim = simhash_near_similarity(kind, jaccard);
	char num[160];
	int m;

	if (add_id(b, d, x) || sbuf_addc(b, '\t') || add_id(b, d, y) || sbuf_addc(b, '\t'))
		return -1;
	m = snprintf(num, sizeof(num), "%u\t%.6f", (unsigned)(100 * (1 - sim) + 0.5), sim);
	if (sbuf_add(b, num, (size_t)m))
		return -1;
	if (explain) {
		simhash_near_verdict v;
		simhash_near_decide(&nr->sk[x], &nr->sk[y], &v);
		m = snprintf(num, sizeof(num), "\t%s: %zu of %zu shared, jaccard %.6f >= %.1f%s",
			     kind == SIMHASH_NEAR_CHARS ? "short, char n-grams" : "long, word 3-shingles",
			     v.shared, v.n_a + v.n_b - v.shared, v.jaccard, v.threshold,
			     nr->same[x] == nr->same[y] ? ", exact duplicate" : "");
		if (sbuf_add(b, num, (size_t)m))
			return -1;
	}
	return sbuf_addc(b, '\n');
}

/* Every pair a < b, in input order of a then b: b in a's own group, or in
 * the group of a first member paired with a's. */
static int near_pairs_out(struct outfile *out, const struct docs *d, const struct near *nr,
			  int explain)
{
	struct partner *p = NULL;
	size_t cap = 0, a, k, q;
	struct sbuf b = { 0 };
	int ret = EXIT_OK;

	for (a = 0; a < d->n && ret == EXIT_OK; a++) {
		size_t g = nr->same[a], n = 0;
		for (k = nr->astart[g]; k <= nr->astart[g + 1]; k++) {
			uint64_t grp = k < nr->astart[g + 1] ? nr->adj[k].other : g;
			double jac = k < nr->astart[g + 1] ? nr->adj[k].jaccard : 1.0;
			for (q = nr->gstart[grp]; q < nr->gstart[grp + 1]; q++) {
				if (nr->gmem[q] <= a)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 64;
					p = realloc(p, cap * sizeof(*p));
					if (!p) {
						cli_err("out of memory");
						sbuf_free(&b);
						return EXIT_FAIL;
					}
				}
				p[n++] = (struct partner){ nr->gmem[q], jac };
			}
		}
		if (n > 1)
			qsort(p, n, sizeof(*p), by_partner);
		for (k = 0; k < n && ret == EXIT_OK; k++)
			if (near_line(&b, d, nr, a, (size_t)p[k].b, p[k].jaccard, explain) ||
			    flush_out(out, &b, 0))
				ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && flush_out(out, &b, 1))
		ret = EXIT_FAIL;
	free(p);
	sbuf_free(&b);
	return ret;
}

/* A cluster member's "dist" (Hamming distance to the first member) or by
 * default its "sim" (simhash_near_similarity() to the first member). */
static int member_sim(struct sbuf *b, const struct docs *d, const struct near *nr, size_t first,
		      size_t m)
{
	simhash_near_verdict v;
	char num[32];
	int len;

	if (!nr)
		return sbuf_adds(b, ",\"dist\":") || sbuf_add_u64(b, doc_dist(d, first, m));
	simhash_near_decide(&nr->sk[first], &nr->sk[m], &v);
	len = snprintf(num, sizeof(num), ",\"sim\":%.6f",
		       v.kind ? simhash_near_similarity(v.kind, v.jaccard) : 0.0);
	return sbuf_add(b, num, (size_t)len);
}

/* Clusters: the near pairs of the first members, and each member to its
 * first; linear in the documents and the pairs of first members. */
static int near_clusters(const struct docs *d, const struct near *nr, uint64_t *cl)
{
	size_t n_e = nr->n_pairs, i;
	simhash_pair *e;
	int ret = EXIT_OK;

	for (i = 0; i < d->n; i++)
		n_e += nr->same[i] != i;
	e = xmalloc((n_e ? n_e : 1) * sizeof(*e));
	n_e = 0;
	for (i = 0; i < nr->n_pairs; i++)
		e[n_e++] = (simhash_pair){ nr->pairs[i].a, nr->pairs[i].b, 0 };
	for (i = 0; i < d->n; i++)
		if (nr->same[i] != i)
			e[n_e++] = (simhash_pair){ nr->same[i], i, 0 };
	if (simhash_clusters(d->n, e, n_e, cl)) {
		cli_err("dedup: clusters: invalid pairs");
		ret = EXIT_FAIL;
	}
	free(e);
	return ret;
}

static unsigned online_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : (unsigned)n;
}

/* --verify-features: shingleN, word or charN into cfg. */
static int parse_vfeatures(const char *s, simhash_config *cfg)
{
	unsigned long n = 3;

	if (!strcmp(s, "word")) {
		cfg->features = SIMHASH_FEATURES_WORD;
		return 0;
	}
	if (!strncmp(s, "shingle", 7)) {
		cfg->features = SIMHASH_FEATURES_SHINGLE;
		s += 7;
	} else if (!strncmp(s, "char", 4)) {
		cfg->features = SIMHASH_FEATURES_CHAR;
		s += 4;
	} else {
		return -1;
	}
	if (*s && parse_uint(s, 1, 64, &n))
		return -1;
	cfg->ngram = (unsigned)n;
	cfg->ngram_cjk = 0;
	return 0;
}

struct opts {
	unsigned jobs;
	long k;
	enum output output;
	enum verify verify;
	double threshold;
	const char *out;
	const char *vfeatures;
	const char *against;
	int quiet;
	int near;
	int explain;
	int exhaustive;
};

static int parse(int argc, char **argv, struct run *run, struct cli_config *cc, struct opts *o,
		 int *first)
{
	struct cli_parse p;
	unsigned long v;
	int c, ret = EXIT_OK;

	cli_parse_begin(&p, "dedup", opts, cc, argc, argv);
	while (ret == EXIT_OK && (c = cli_parse_next(&p)) != CLI_END) {
		switch (c) {
		case CLI_HELP: help(); ret = -1; break;
		case CLI_BAD: ret = EXIT_USAGE; break;
		case OPT_LINES: run->mode = MODE_LINES; break;
		case OPT_JSONL: run->mode = MODE_JSONL; break;
		case OPT_TEXT_FIELD: run->text_field = p.arg; break;
		case OPT_ID_FIELD: run->id_field = p.arg; break;
		case OPT_OUT: o->out = p.arg; break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_VERIFY_FEATURES: o->vfeatures = p.arg; break;
		case OPT_AGAINST: o->against = p.arg; break;
		case OPT_EXPLAIN: o->explain = 1; break;
		case OPT_NEAR: o->near = 1; break;
		case OPT_EXHAUSTIVE: o->exhaustive = 1; break;
		case OPT_JOBS:
			if (parse_uint(p.arg, 1, MAX_JOBS, &v)) {
				cli_err("dedup: invalid --jobs '%s' (expected 1 to %d)", p.arg, MAX_JOBS);
				ret = EXIT_USAGE;
			}
			o->jobs = (unsigned)v;
			break;
		case OPT_K:
			if (parse_uint(p.arg, 0, 32, &v)) {
				cli_err("dedup: invalid -k '%s' (expected 0 to 16 for 64-bit, 0 to 32 "
					"for 128-bit, 0 to 8 for 32-bit fingerprints)", p.arg);
				ret = EXIT_USAGE;
			}
			o->k = (long)v;
			break;
		case OPT_OUTPUT_MODE:
			if (!strcmp(p.arg, "pairs"))
				o->output = OUT_PAIRS;
			else if (!strcmp(p.arg, "clusters"))
				o->output = OUT_CLUSTERS;
			else if (!strcmp(p.arg, "keep"))
				o->output = OUT_KEEP;
			else if (!strcmp(p.arg, "drop"))
				o->output = OUT_DROP;
			else {
				cli_err("dedup: unknown --output '%s' (expected pairs, clusters, keep "
					"or drop)", p.arg);
				ret = EXIT_USAGE;
			}
			break;
		case OPT_VERIFY: {
			const char *colon = strchr(p.arg, ':');
			char *end = NULL;
			if (colon && !strncmp(p.arg, "jaccard:", 8))
				o->verify = VERIFY_JACCARD;
			else if (colon && !strncmp(p.arg, "cosine:", 7))
				o->verify = VERIFY_COSINE;
			if (colon)
				o->threshold = strtod(colon + 1, &end);
			if (!o->verify || !end || *end || end == colon + 1 || !(o->threshold >= 0) ||
			    o->threshold > 1) {
				cli_err("dedup: invalid --verify '%s' (expected jaccard:T or cosine:T, "
					"T from 0 to 1)", p.arg);
				ret = EXIT_USAGE;
			}
			break;
		}
		}
	}
	*first = p.optind;
	cli_parse_end(&p);
	return ret;
}

/* The id strings of an index built by `simhash index` (its user section,
 * "names": magic, count, count + 1 offsets, bytes; docs/format.md). */
#define NAMES_MAGIC "SHNAMES1"

static void index_name(const simhash_index *ix, uint64_t id, struct sbuf *out)
{
	const void *data;
	size_t len;
	uint64_t n, a, b;
	const char *p;

	simhash_index_user(ix, &data, &len);
	p = data;
	if (len >= 16 && !memcmp(p, NAMES_MAGIC, 8)) {
		memcpy(&n, p + 8, 8);
		if (id < n && n <= (len - 16) / 8 - 1) {
			memcpy(&a, p + 16 + 8 * id, 8);
			memcpy(&b, p + 16 + 8 * (id + 1), 8);
			if (a <= b && 16 + 8 * (n + 1) + b <= len) {
				sbuf_add(out, p + 16 + 8 * (n + 1) + a, (size_t)(b - a));
				return;
			}
		}
	}
	sbuf_add_u64(out, id); /* an index without names: its numeric ids */
}

/* --against: each document's matches in the index. Pairs mode prints them;
 * keep/drop mark the documents with a match in cl (cl[i] = 0 for "has one"). */
static int against_index(const char *path, const struct docs *d, unsigned k,
			 const simhash_config *cfg, struct outfile *out, enum output mode,
			 size_t *n_pairs, const struct input *ins, const struct run *run)
{
	char why[256] = "", scheme[SIMHASH_SCHEME_MAX];
	simhash_index *ix = NULL;
	simhash_matches m = { 0 };
	struct sbuf b = { 0 }, rec = { 0 };
	simhash_err err;
	size_t i, j;
	int ret = EXIT_OK;

	err = simhash_index_open_ex(path, &ix, why, sizeof(why));
	if (err) {
		cli_err("%s: %s", path, why[0] ? why : simhash_strerror(err));
		return EXIT_FAIL;
	}
	simhash_config_scheme(cfg, scheme, sizeof(scheme));
	if (!simhash_index_scheme(ix) || !simhash_index_scheme(ix)[0]) {
		cli_err("%s: the index records no scheme (build it with --scheme), so its "
			"fingerprints cannot be compared with texts", path);
		ret = EXIT_FAIL;
		goto done;
	}
	if (strcmp(simhash_index_scheme(ix), scheme)) {
		cli_err("%s: the index has scheme %s, these options give %s", path,
			simhash_index_scheme(ix), scheme);
		ret = EXIT_FAIL;
		goto done;
	}
	if (simhash_index_bits(ix) != cfg->bits || k > simhash_index_max_dist(ix)) {
		cli_err("%s: -k %u is out of range for this index (0 to %u)", path, k,
			simhash_index_max_dist(ix));
		ret = EXIT_USAGE;
		goto done;
	}
	*n_pairs = 0;
	for (i = 0; i < d->n && ret == EXIT_OK; i++) {
		simhash_fp fp = { { d->fps[i * d->nw], d->nw == 2 ? d->fps[i * d->nw + 1] : 0 },
				  cfg->bits };
		err = simhash_index_query(ix, &fp, k, &m);
		if (err) {
			cli_err("%s: %s", path, simhash_strerror(err));
			ret = EXIT_FAIL;
			break;
		}
		*n_pairs += m.n;
		if (mode == OUT_PAIRS) {
			for (j = 0; j < m.n; j++) {
				add_id(&b, d, i);
				sbuf_addc(&b, '\t');
				index_name(ix, m.v[j].id, &b);
				sbuf_addc(&b, '\t');
				sbuf_add_u64(&b, m.v[j].dist);
				if (sbuf_addc(&b, '\n'))
					ret = EXIT_FAIL;
			}
		} else if ((m.n == 0) == (mode == OUT_KEEP)) {
			ret = add_record(&b, run, ins, d, i, &rec);
		}
		if (ret == EXIT_OK && flush_out(out, &b, 0))
			ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK && flush_out(out, &b, 1))
		ret = EXIT_FAIL;
done:
	sbuf_free(&b);
	sbuf_free(&rec);
	simhash_matches_free(&m);
	simhash_index_free(ix);
	return ret;
}

/* Opens what verification and keep/drop re-read: each regular file, or a
 * spool for standard input (and any other stream). */
static int open_inputs(struct input *ins, char **paths, size_t n, enum mode mode)
{
	struct stat s;
	size_t i;

	for (i = 0; i < n; i++) {
		ins[i].path = paths[i];
		ins[i].fd = -1;
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

static size_t count_clusters(const uint64_t *cl, size_t n)
{
	char *has = xcalloc(n ? n : 1, 1);
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (cl[i] != i && !has[cl[i]]) {
			has[cl[i]] = 1;
			c++;
		}
	free(has);
	return c;
}

/* The default: join the sketches, write what --output says. */
static int near_run(const struct opts *o, const struct run *run, const struct input *ins,
		    const struct docs *d, double t0)
{
	struct near nr = { .exhaustive = o->exhaustive };
	struct outfile out;
	uint64_t *cl = NULL;
	size_t n_clusters = 0, n_pairs = 0;
	simhash_err err;
	int ret = EXIT_OK;

	near_sketches(d, &nr);
	cl = xmalloc((d->n ? d->n : 1) * sizeof(*cl));
	if (o->output == OUT_PAIRS) {
		/* every pair is listed, so every pair is verified */
		ret = near_join(d, &nr);
		if (ret == EXIT_OK)
			ret = near_clusters(d, &nr, cl);
		if (ret == EXIT_OK)
			n_pairs = near_count(d, &nr);
	} else {
		err = nr.exhaustive ? simhash_near_clusters(nr.sk, d->n, cl)
				    : simhash_near_band_clusters(nr.sk, d->n, cl);
		if (err) {
			cli_err("dedup: %s", simhash_strerror(err));
			ret = EXIT_FAIL;
		}
	}
	if (ret)
		goto done;
	ret = outfile_open(&out, o->out);
	if (ret)
		goto done;
	if (o->output == OUT_PAIRS)
		ret = near_pairs_out(&out, d, &nr, o->explain);
	else if (o->output == OUT_CLUSTERS)
		ret = write_clusters(&out, d, cl, &nr, &n_clusters);
	else
		ret = write_records(&out, run, ins, d, cl, o->output == OUT_KEEP);
	if (ret) {
		outfile_abort(&out);
		goto done;
	}
	ret = outfile_commit(&out);
	if (o->output != OUT_CLUSTERS)
		n_clusters = count_clusters(cl, d->n);
	if (ret == EXIT_OK && !o->quiet && o->output == OUT_PAIRS)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu pairs, %zu clusters, %.2f s\n",
			d->n, n_pairs, n_clusters, now() - t0);
	else if (ret == EXIT_OK && !o->quiet)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu clusters, %.2f s\n", d->n,
			n_clusters, now() - t0);
done:
	free(cl);
	near_free(&nr);
	return ret;
}

int cmd_dedup(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct run run = { .mode = MODE_FILES, .text_field = "text", .id_field = "id" };
	struct opts o = { .k = -1 };
	struct cli_config cc;
	struct docs docs = { 0 };
	struct input *ins = NULL;
	struct outfile out;
	simhash_pair *pairs = NULL;
	size_t n_pairs = 0, n_clusters = 0, n_paths, i;
	uint64_t *cl = NULL;
	double *sims = NULL, t0 = now();
	simhash_ctx *vctx = NULL;
	simhash_config vcfg;
	char **paths;
	int first, ret;
	unsigned bits;
	simhash_err err;

	cli_config_init(&cc);
	ret = parse(argc, argv, &run, &cc, &o, &first);
	if (ret)
		goto out_config;
	ret = cli_config_finish(&cc, "dedup");
	if (ret)
		goto out_config;
	run.cfg = &cc.cfg;
	bits = cc.cfg.bits;
	run.jsonl_flags = cc.cfg.utf8 == SIMHASH_UTF8_REPLACE ? JSONL_REPLACE_UTF8 : 0;
	/* the default: the exact decision per pair, unless a fingerprint
	 * option (-k, --verify, --against or a configuration flag) asks for
	 * fingerprints */
	run.near = o.near || (o.k < 0 && !o.verify && !o.against && !cc.set && !cc.scheme);
	if (o.exhaustive && !run.near) {
		cli_err("dedup: --exhaustive is for the default decision (without -k, --verify, "
			"--against or fingerprint options)");
		ret = EXIT_USAGE;
		goto out_config;
	}
	if (o.near && (o.k >= 0 || o.verify || o.against)) {
		cli_err("dedup: --near decides by exact similarity: without -k, --verify or --against");
		ret = EXIT_USAGE;
		goto out_config;
	}
	if (o.explain && !run.near) {
		cli_err("dedup: --explain is for the default decision (without -k, --verify, "
			"--against or fingerprint options)");
		ret = EXIT_USAGE;
		goto out_config;
	}
	if (o.k < 0)
		o.k = (o.verify ? DEFAULT_K_VERIFY : DEFAULT_K) * (bits == 128 ? 2 : 1) /
		      (bits == 32 ? 2 : 1);
	if (o.k > bits / 4) {
		cli_err("dedup: -k %ld is out of range for %u-bit fingerprints (0 to %u)", o.k, bits,
			bits / 4);
		ret = EXIT_USAGE;
		goto out_config;
	}
	if (o.against && (o.verify || o.output == OUT_CLUSTERS)) {
		cli_err("dedup: --against writes pairs, keep or drop, without --verify");
		ret = EXIT_USAGE;
		goto out_config;
	}
	if (o.vfeatures && !o.verify) {
		cli_err("dedup: --verify-features needs --verify");
		ret = EXIT_USAGE;
		goto out_config;
	}
	if (o.verify) {
		simhash_config vc;
		simhash_config_init(&vc);
		vc.features = SIMHASH_FEATURES_SHINGLE;
		vc.ngram = 3;
		vc.tokenizer = SIMHASH_TOKENIZER_SIMPLE;
		vc.t2s = 0;
		vc.weight = SIMHASH_WEIGHT_TF;
		if (o.vfeatures && parse_vfeatures(o.vfeatures, &vc)) {
			cli_err("dedup: invalid --verify-features '%s' (expected shingleN, word or "
				"charN)", o.vfeatures);
			ret = EXIT_USAGE;
			goto out_config;
		}
		err = simhash_ctx_new(&vc, &vctx); /* checks the config up front */
		if (err) {
			cli_err("dedup: verify: %s", simhash_strerror(err));
			ret = EXIT_FAIL;
			goto out_config;
		}
		vcfg = vc;
	}
	paths = first < argc ? argv + first : stdin_only;
	n_paths = first < argc ? (size_t)(argc - first) : 1;
	run.multi = n_paths > 1;
	if (!o.jobs)
		o.jobs = online_cores();
	docs.nw = bits == 128 ? 2 : 1;
	ins = xcalloc(n_paths, sizeof(*ins));
	ret = open_inputs(ins, paths, n_paths, run.mode);
	if (ret)
		goto out;
	run.workers = xcalloc(o.jobs, sizeof(*run.workers));
	for (i = 0; i < o.jobs; i++)
		jsonl_rec_init(&run.workers[i].rec);
	err = simhash_ctx_new(run.cfg, &run.workers[0].ctx);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		ret = err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	ret = fingerprint_all(&run, o.jobs, ins, paths, n_paths, &docs);
	for (i = 0; i < n_paths; i++)
		if (ins[i].spool && fflush(ins[i].spool)) {
			cli_err("cannot spool standard input: %s", strerror(errno));
			ret = EXIT_FAIL;
		}
	if (ret)
		goto out;
	if (o.against) {
		ret = outfile_open(&out, o.out);
		if (ret)
			goto out;
		ret = against_index(o.against, &docs, (unsigned)o.k, run.cfg, &out, o.output,
				    &n_pairs, ins, &run);
		if (ret)
			outfile_abort(&out);
		else
			ret = outfile_commit(&out);
		if (ret == EXIT_OK && !o.quiet)
			fprintf(stderr, "simhash: dedup: %zu documents, %zu pairs with %s, %.2f s\n",
				docs.n, n_pairs, o.against, now() - t0);
		goto out;
	}
	if (run.near) {
		ret = near_run(&o, &run, ins, &docs, t0);
		goto out;
	}
	err = simhash_pairs_self(docs.fps, docs.n, bits, (unsigned)o.k, o.jobs, &pairs, &n_pairs);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		ret = EXIT_FAIL;
		goto out;
	}
	if (o.verify) {
		ret = verify(&run, ins, &docs, &vcfg, o.verify, o.threshold, o.jobs, pairs,
			     &n_pairs, &sims);
		if (ret)
			goto out;
	}
	cl = xmalloc((docs.n ? docs.n : 1) * sizeof(*cl));
	if (simhash_clusters(docs.n, pairs, n_pairs, cl)) {
		cli_err("dedup: clusters: invalid pairs");
		ret = EXIT_FAIL;
		goto out;
	}
	ret = outfile_open(&out, o.out);
	if (ret)
		goto out;
	if (o.output == OUT_PAIRS)
		ret = write_pairs(&out, &docs, pairs, n_pairs, sims);
	else if (o.output == OUT_CLUSTERS)
		ret = write_clusters(&out, &docs, cl, NULL, &n_clusters);
	else
		ret = write_records(&out, &run, ins, &docs, cl, o.output == OUT_KEEP);
	if (ret) {
		outfile_abort(&out);
		goto out;
	}
	ret = outfile_commit(&out);
	if (o.output != OUT_CLUSTERS) {
		/* clusters of two or more: roots with a member other than themselves */
		char *has = xcalloc(docs.n ? docs.n : 1, 1);
		for (i = 0; i < docs.n; i++)
			if (cl[i] != i && !has[cl[i]]) {
				has[cl[i]] = 1;
				n_clusters++;
			}
		free(has);
	}
	if (ret == EXIT_OK && !o.quiet)
		fprintf(stderr, "simhash: dedup: %zu documents, %zu pairs, %zu clusters, %.2f s\n",
			docs.n, n_pairs, n_clusters, now() - t0);
out:
	if (run.workers)
		for (i = 0; i < o.jobs; i++) {
			simhash_ctx_free(run.workers[i].ctx);
			simhash_near_free(run.workers[i].near);
			sbuf_free(&run.workers[i].file);
			jsonl_rec_free(&run.workers[i].rec);
		}
	free(run.workers);
	for (i = 0; ins && i < n_paths; i++) {
		if (ins[i].spool)
			fclose(ins[i].spool);
		else if (ins[i].fd >= 0)
			close(ins[i].fd);
	}
	free(ins);
	simhash_pairs_free(pairs);
	free(sims);
	free(cl);
	free(docs.fps);
	free(docs.rec_off);
	free(docs.rec_len);
	free(docs.src);
	free(docs.id_off);
	free(docs.kinfo);
	sbuf_free(&docs.keys);
	sbuf_free(&docs.ids);
	simhash_ctx_free(vctx);
out_config:
	cli_config_free(&cc);
	return ret < 0 ? EXIT_OK : ret;
}
