/* dedup_read.c - the documents of `simhash dedup`: read through the document
 * source (source.h), fingerprinted (or by default sketched) on every core,
 * and kept in input order; their records re-read by offset for --verify and
 * keep/drop.
 *
 * Documents are whole files (default), lines (--lines) or JSON Lines records
 * (--jsonl), as for `simhash fingerprint`, with all its fingerprint options.
 * The source hands each document to a worker's doc hook here, which packs
 * what dedup keeps of it (struct packed, its id and its sketch's keys) into
 * the batch; batches come back in input order to the batch hook, which
 * appends them to struct dedup_docs: so document i is the i-th of the input
 * whatever -j. Memory per document: its fingerprint (or its sketch's keys),
 * its id, the input it came from and its record's byte offset and length;
 * never the texts. Verification and keep/drop re-read records by offset; a
 * stream (standard input, a pipe) is spooled as it is read, by the source's
 * tee hook, to an unlinked temporary file for that.
 *
 * This is the one place dedup reads its input: the rest of the command sees
 * the documents (struct dedup_docs), the inputs' handles and
 * dedup_read_record().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dedup.h"
#include "jsonl.h"
#include "progress.h"
#include "source.h"
#include "util.h"

/* A worker's sketch keys, copied once from its simhash_near into blocks
 * that live until dedup_docs_free(): 8 MiB each, with the huge-page hint, so
 * that 300,000 short lines (9 million keys, 72 MB) take a few dozen faults
 * instead of 18,000; a sketch of more than a quarter of a block gets a block
 * of its own. Only its worker touches an arena during the run; the main
 * thread takes the blocks into struct dedup_docs after it. */
#define KEY_BLOCK ((size_t)8 << 20)

struct key_arena {
	uint64_t *at;   /* the free room of the current block */
	size_t left;    /* keys */
	void **blocks;
	size_t n, cap;
};

/* What one worker writes for each document, on cache lines of its own: two
 * workers' arenas in one line sent it between the cores at every document
 * (a tenth of the reading of 300,000 short lines). */
struct worker {
	simhash_near *near; /* made on its first document */
	struct key_arena arena;
} __attribute__((aligned(64)));

/* The hooks' state: what the workers sketch with, and where the main thread
 * puts the documents. */
struct reading {
	const struct dedup_run *run;
	struct dedup_input *ins;
	struct dedup_docs *docs;
	struct worker *w; /* one per worker */
	struct progress progress;
};

/* One document in a batch's out buffer, followed by id_len bytes of its id. */
struct packed {
	uint64_t fp[2];
	uint64_t rec_off; /* the record's first byte in its input */
	uint64_t rec_len; /* with its line break */
	uint64_t id_len;
	uint64_t input;   /* its index among the paths */
	simhash_sketch sk; /* sketched: its keys in the worker's arena */
};

/* ---- the workers */

/* Room for n keys that stay put; NULL if memory runs out. */
static uint64_t *arena_take(struct key_arena *a, size_t n)
{
	size_t size = n > KEY_BLOCK / sizeof(uint64_t) / 4 ? n * sizeof(uint64_t) : KEY_BLOCK;
	uint64_t *p;

	if (n <= a->left) {
		p = a->at;
		a->at += n;
		a->left -= n;
		return p;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		void **b = realloc(a->blocks, cap * sizeof(*b));
		if (!b)
			return NULL;
		a->blocks = b;
		a->cap = cap;
	}
	/* a block on 2 MiB boundaries: all of it can be huge pages */
	p = size == KEY_BLOCK ? cli_grow_big(NULL, 0, size) : malloc(size);
	if (!p)
		return NULL;
	a->blocks[a->n++] = p;
	if (size == KEY_BLOCK) {
		a->at = p + n;
		a->left = KEY_BLOCK / sizeof(uint64_t) - n;
	}
	return p;
}

/* d's sketch, with the worker's simhash_near; -1 if it failed (recorded). */
static int sketch(struct reading *rd, struct src_batch *b, const struct doc *d,
		  simhash_sketch *sk)
{
	simhash_near **near = &rd->w[d->worker].near;
	simhash_err err;

	if (!*near) {
		err = simhash_near_new(near);
		if (err) /* "PATH: why", and stop */
			return src_fail(b, NULL, "%s: %s", display_name(d->path),
					simhash_strerror(err));
	}
	err = simhash_near_sketch(*near, d->text, d->text_len, sk);
	if (err) /* out of memory: a sketch takes any bytes */
		return src_fail(b, d, "%s", simhash_strerror(err));
	return 0;
}

/* The doc hook: packs what dedup keeps of d into the batch. */
static int take_doc(struct src_batch *b, const struct doc *d, void *arg)
{
	struct reading *rd = arg;
	struct packed h = { .rec_off = d->rec_off, .rec_len = d->rec_len, .input = d->input };
	size_t start = b->out.len, id_at = start + sizeof(h);

	if (rd->run->near) {
		simhash_sketch sk;
		uint64_t *keys = NULL;
		if (sketch(rd, b, d, &sk))
			return -1;
		if (sk.n_keys) {
			keys = arena_take(&rd->w[d->worker].arena, sk.n_keys);
			if (!keys)
				return src_fail(b, d, "out of memory");
			memcpy(keys, sk.keys, sk.n_keys * sizeof(*keys));
		}
		h.sk = (simhash_sketch){ .keys = keys, .n_keys = sk.n_keys, .kind = sk.kind };
	} else {
		h.fp[0] = d->fp.w[0];
		h.fp[1] = d->fp.w[1];
	}
	if (sbuf_grow(&b->out, sizeof(h)))
		return src_fail(b, d, "out of memory");
	b->out.len = id_at;
	if (!rd->run->no_ids && src_raw_id(&b->out, d, rd->run->multi, 1)) {
		b->out.len = start; /* the batch hook never sees half a document */
		return src_fail(b, d, "out of memory");
	}
	h.id_len = (uint64_t)(b->out.len - id_at);
	memcpy(b->out.p + start, &h, sizeof(h));
	return 0;
}

/* ---- the main thread */

/* The array at *pp (a pointer of any type; len bytes in use) grown to size
 * bytes; -1 if memory ran out (*pp then as it was). */
static int grow(void *pp, size_t len, size_t size)
{
	void *p, *q;

	memcpy(&p, pp, sizeof(p));
	q = cli_grow_big(p, len, size);
	if (!q)
		return -1;
	memcpy(pp, &q, sizeof(q));
	return 0;
}

/* Room for n documents in all (and their sketches if near). */
static int docs_reserve(struct dedup_docs *d, size_t n, int near)
{
	size_t c = d->cap ? d->cap : 4096;

	if (n <= d->cap)
		return 0;
	while (c < n)
		c *= 2;
	if ((!near && grow(&d->fps, d->n * d->nw * 8, c * d->nw * 8)) ||
	    grow(&d->rec_off, d->n * 8, c * 8) || grow(&d->rec_len, d->n * 8, c * 8) ||
	    grow(&d->src, d->n * 4, c * 4) || grow(&d->id_off, (d->n + 1) * 8, (c + 1) * 8) ||
	    (near && grow(&d->sk, d->n * sizeof(*d->sk), c * sizeof(*d->sk))))
		return -1;
	d->cap = c;
	return 0;
}

/* Appends one packed document (at p) to d; the bytes it took, or 0 if
 * memory ran out. */
static size_t docs_add(struct dedup_docs *d, const char *p)
{
	struct packed h;
	size_t n = d->n;

	memcpy(&h, p, sizeof(h));
	if (!d->n)
		d->id_off[0] = 0;
	if (sbuf_add(&d->ids, p + sizeof(h), h.id_len))
		return 0;
	if (d->fps)
		memcpy(d->fps + n * d->nw, h.fp, d->nw * 8);
	d->rec_off[n] = h.rec_off;
	d->rec_len[n] = h.rec_len;
	d->src[n] = (uint32_t)h.input;
	if (d->sk)
		d->sk[n] = h.sk;
	d->id_off[n + 1] = d->ids.len;
	d->n++;
	return sizeof(h) + h.id_len;
}

/* The batch hook: the batch's documents, in order, into rd->docs. */
static int take_batch(struct src_batch *b, void *arg)
{
	struct reading *rd = arg;
	size_t at = 0, took;

	if (docs_reserve(rd->docs, rd->docs->n + b->n_docs, rd->run->near))
		goto out_of_memory;
	for (; at < b->out.len; at += took) {
		took = docs_add(rd->docs, b->out.p + at);
		if (!took)
			goto out_of_memory;
	}
	return 0;

out_of_memory:
	progress_end(&rd->progress);
	cli_err("out of memory");
	return -1;
}

/* The tee hook: copies a stream's input to its spool as it is read. */
static int spool(uint32_t input, const char *data, size_t len, void *arg, char *err,
		 size_t err_size)
{
	struct reading *rd = arg;
	FILE *f = rd->ins[input].spool;

	if (f && fwrite(data, 1, len, f) != len) {
		snprintf(err, err_size, "cannot spool standard input: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* After the run: the workers' key blocks into d, which frees them. 0, or -1
 * if memory ran out (the blocks are then freed, and d holds none). */
static int take_arenas(struct dedup_docs *d, const struct worker *wk, unsigned n)
{
	size_t total = 0, i;
	void **b;
	unsigned w;

	for (w = 0; w < n; w++)
		total += wk[w].arena.n;
	b = realloc(d->key_blocks, (d->n_key_blocks + total + 1) * sizeof(*b));
	for (w = 0; w < n; w++) {
		const struct key_arena *a = &wk[w].arena;
		for (i = 0; i < a->n; i++) {
			if (b)
				b[d->n_key_blocks++] = a->blocks[i];
			else
				free(a->blocks[i]);
		}
		free(a->blocks);
	}
	if (!b)
		return -1;
	d->key_blocks = b;
	return 0;
}

int dedup_read_all(const struct dedup_run *run, unsigned jobs, struct dedup_input *ins,
		   char **paths, size_t n_paths, struct dedup_docs *docs)
{
	struct reading rd = { .run = run, .ins = ins, .docs = docs };
	struct src_opts so = {
		.cmd = "dedup", .mode = run->mode, .cfg = run->cfg,
		.whole_files = 1, .no_fingerprint = run->near,
		.text_field = run->text_field, .id_field = run->id_field,
		.jsonl_flags = run->jsonl_flags, .n_threads = jobs,
		.doc = take_doc, .batch = take_batch, .tee = spool, .arg = &rd,
	};
	struct source *src = NULL;
	simhash_err err;
	int ret;

	err = src_new(&so, &src);
	if (err) {
		cli_err("dedup: %s", simhash_strerror(err));
		return err == SIMHASH_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	rd.w = aligned_alloc(64, jobs * sizeof(*rd.w));
	if (!rd.w) {
		src_free(src);
		cli_err("out of memory");
		return EXIT_FAIL;
	}
	memset(rd.w, 0, jobs * sizeof(*rd.w));
	progress_init(&rd.progress, 0);
	ret = src_run(src, paths, n_paths, &rd.progress);
	for (unsigned i = 0; i < jobs; i++)
		simhash_near_free(rd.w[i].near);
	if (take_arenas(docs, rd.w, jobs) && ret == EXIT_OK) {
		cli_err("out of memory");
		ret = EXIT_FAIL;
	}
	free(rd.w);
	src_free(src);
	return ret;
}

void dedup_docs_free(struct dedup_docs *d)
{
	free(d->fps);
	free(d->id_off);
	sbuf_free(&d->ids);
	free(d->rec_off);
	free(d->rec_len);
	free(d->src);
	free(d->sk);
	for (size_t i = 0; i < d->n_key_blocks; i++)
		free(d->key_blocks[i]);
	free(d->key_blocks);
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
