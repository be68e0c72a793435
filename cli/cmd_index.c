/* cmd_index.c - `simhash index build|add|delete`: the exact Hamming index
 * (lib/index/) on the command line. This file holds the id table, the
 * reading of fingerprints that build, add, delete and query take (a named
 * text file for build in parallel blocks, index_read.c), and build, add and
 * delete; the other rooms are listed in index_cmd.h.
 *
 * Fingerprints come in the text form `HEX<TAB>ID` (what `simhash fingerprint`
 * prints). The library keeps uint64 ids; the command maps each distinct ID
 * string to the number of its first appearance and keeps the strings in the
 * index's user section ("names", docs/format.md): the id of a saved index
 * reads back in O(1) from the mapped file, so a query never loads the names.
 * An id is kept byte for byte as read (escapes such as \t stay escaped) and
 * written back the same way.
 *
 * Invariants: every id in the index is < the number of names; an index file
 * is replaced atomically (simhash_index_save) or not at all; output of query
 * is in input order and the same for every -j. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include <sys/mman.h>
#include <sys/stat.h>
#include "config_opts.h"
#include "idesc.h"
#include "index_cmd.h"
#include "progress.h"
#include "reader.h"
#include "util.h"

#define NAMES_MAGIC IDESC_NAMES_MAGIC /* written here, parsed by idesc.c */


/* ---- names: id strings <-> numbers */

struct names {
	struct sbuf bytes;     /* the strings, back to back */
	uint64_t *off;         /* n + 1 offsets into bytes */
	size_t n, cap;
	uint64_t *slot;        /* hash table of id + 1, 0: empty */
	size_t n_slots;
	struct idesc_names ext; /* a saved index's names, read in place */
};

static const char *name_at(const struct names *nm, uint64_t id, size_t *len)
{
	if (id < nm->n) {
		*len = (size_t)(nm->off[id + 1] - nm->off[id]);
		return nm->bytes.p ? nm->bytes.p + nm->off[id] : ""; /* NULL: every id empty */
	}
	if (id < nm->ext.n) {
		const char *s;

		if (idesc_names_get(&nm->ext, id, &s, len) == 0)
			return s;
	}
	*len = 1;
	return "?";
}

/* A slot holds the top 32 bits of its name's hash over id + 1 (0: empty), and
 * a name's first slot is taken from those top bits: the table grows without
 * reading a name again, and a lookup compares names only when 32 bits of
 * hash agree. At most 70% full: linear probing stays short (3.6 slots a
 * miss on average at 60%, mostly within one cache line), and the table of
 * 10 million names is 128 MB, not 256 (fresh pages cost their zeroing). */
#define SLOTS_FULL(n, n_slots) ((n) * 10 > (n_slots) * 7)
#define SLOT_ID(x) ((x) & 0xffffffffu)
#define SLOT_HASH(x) ((x) >> 32)

static size_t slot_home(uint64_t hash32, size_t n_slots)
{
	return (size_t)((hash32 * n_slots) >> 32); /* n_slots <= 2^32 */
}

/* A zeroed table of n slots. Lookups hit it at random, so a large one is
 * asked for huge pages (a TLB miss per lookup otherwise), and written once
 * here: a first read would map the shared zero page, and the first write
 * after it costs a copy and a TLB flush on every processor. */
static uint64_t *slots_alloc(size_t n)
{
	const size_t huge = (size_t)1 << 21;
	size_t len = n * sizeof(uint64_t);
	void *p;

	if (len < 2 * huge)
		return xcalloc(n, sizeof(uint64_t));
	if (posix_memalign(&p, huge, len)) {
		cli_err("out of memory");
		exit(EXIT_FAIL);
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE); /* advice only */
#endif
	memset(p, 0, len);
	return p;
}

static void names_rehash(struct names *nm, size_t n_slots)
{
	uint64_t *old = nm->slot;
	size_t old_n = nm->n_slots;

	nm->slot = slots_alloc(n_slots);
	nm->n_slots = n_slots;
	for (size_t i = 0; i < old_n; i++) {
		size_t h;
		if (!old[i])
			continue;
		h = slot_home(SLOT_HASH(old[i]), n_slots);
		while (nm->slot[h])
			h = h + 1 == n_slots ? 0 : h + 1;
		nm->slot[h] = old[i];
	}
	free(old);
}

/* The id of s (hash: index_name_hash(s)), added if new (add) or UINT64_MAX if absent. */
static uint64_t names_get_hashed(struct names *nm, const char *s, size_t len, uint64_t hash, int add)
{
	size_t h;

	if (nm->n_slots == 0 || SLOTS_FULL(nm->n + 1, nm->n_slots)) {
		if (nm->n_slots >= ((size_t)1 << 32)) {
			cli_err("too many distinct ids");
			exit(EXIT_FAIL);
		}
		names_rehash(nm, nm->n_slots ? nm->n_slots * 2 : 1024);
	}
	h = slot_home(hash, nm->n_slots);
	for (; nm->slot[h]; h = h + 1 == nm->n_slots ? 0 : h + 1) {
		size_t l;
		const char *t;
		if (SLOT_HASH(nm->slot[h]) != hash)
			continue;
		t = name_at(nm, SLOT_ID(nm->slot[h]) - 1, &l);
		if (l == len && memcmp(s, t, len) == 0)
			return SLOT_ID(nm->slot[h]) - 1;
	}
	if (!add)
		return UINT64_MAX;
	if (nm->n + 2 > nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 1024;
		nm->off = realloc(nm->off, nm->cap * sizeof *nm->off);
		if (!nm->off) {
			cli_err("out of memory");
			exit(EXIT_FAIL);
		}
	}
	if (nm->n == 0)
		nm->off[0] = 0;
	if (sbuf_add(&nm->bytes, s, len)) {
		cli_err("out of memory");
		exit(EXIT_FAIL);
	}
	nm->off[nm->n + 1] = nm->bytes.len;
	nm->slot[h] = hash << 32 | ++nm->n;
	return nm->n - 1;
}

/* Where a lookup of hash starts: fetched into the cache ahead of it. */
static void names_prefetch(const struct names *nm, uint64_t hash)
{
	if (nm->n_slots)
		__builtin_prefetch(nm->slot + slot_home(hash, nm->n_slots));
}

/* Builds nm's table for its n names. */
static void names_index(struct names *nm)
{
	size_t n_slots = 1024;

	while (nm->n * 2 > n_slots)
		n_slots *= 2;
	free(nm->slot);
	nm->slot = slots_alloc(n_slots);
	nm->n_slots = n_slots;
	for (size_t i = 0; i < nm->n; i++) {
		size_t len;
		const char *s = name_at(nm, i, &len);
		uint64_t hash = index_name_hash(s, len);
		size_t h = slot_home(hash, n_slots);
		while (nm->slot[h])
			h = h + 1 == n_slots ? 0 : h + 1;
		nm->slot[h] = hash << 32 | (i + 1);
	}
}

/* Makes room in nm's table and offsets for n names in all, so that they
 * never grow (each growth rehashes every name, and at 10 million names the
 * growths cost a third of the numbering's time); the big arrays on huge
 * pages. */
static void names_reserve(struct names *nm, size_t n)
{
	size_t n_slots = nm->n_slots ? nm->n_slots : 1024;

	while (SLOTS_FULL(n + 1, n_slots) && n_slots < ((size_t)1 << 32))
		n_slots *= 2;
	if (n_slots > nm->n_slots)
		names_rehash(nm, n_slots);
	if (n + 2 > nm->cap) { /* the offsets too, at once */
		uint64_t *off = realloc(nm->off, (n + 2) * sizeof *off);
		if (!off) {
			cli_err("out of memory");
			exit(EXIT_FAIL);
		}
		nm->off = off, nm->cap = n + 2;
		cli_hugepage_hint(off, nm->cap * sizeof *off);
	}
}

/* Reads the names of ix into nm: in place for lookups by id (query), or
 * copied for lookups by string (add, delete). */
static int names_load(struct names *nm, const simhash_index *ix, int copy, const char *path)
{
	const void *data;
	size_t len;

	memset(nm, 0, sizeof *nm);
	simhash_index_user(ix, &data, &len);
	if (idesc_names_parse(data, len, &nm->ext) || (copy && idesc_names_check(&nm->ext))) {
		cli_err("%s: damaged id section", path);
		return -1;
	}
	if (copy) {
		for (size_t i = 0; i < nm->ext.n; i++) {
			size_t l = (size_t)(nm->ext.off[i + 1] - nm->ext.off[i]);
			const char *s = nm->ext.bytes + nm->ext.off[i];
			if (nm->n + 2 > nm->cap) {
				nm->cap = nm->cap ? nm->cap * 2 : 1024;
				nm->off = realloc(nm->off, nm->cap * sizeof *nm->off);
			}
			if (!nm->off || sbuf_add(&nm->bytes, s, l)) {
				cli_err("out of memory");
				exit(EXIT_FAIL);
			}
			if (nm->n == 0)
				nm->off[0] = 0;
			nm->off[nm->n + 1] = nm->bytes.len;
			nm->n++;
		}
		nm->ext.n = 0;
		names_index(nm);
	}
	return 0;
}

/* Hands nm's names to ix as its user section: the magic, the count, the
 * n + 1 offsets, the bytes (host byte order, parsed by idesc.c). The section
 * is laid out in nm's offset array, grown in place (a big realloc moves
 * pages, not bytes), so that only the names' bytes go to fresh memory; nm
 * holds no names afterwards. */
static int names_store(struct names *nm, simhash_index *ix)
{
	uint64_t n = nm->n, n_off = nm->n + 1, *blob;
	size_t len = 16 + (size_t)n_off * 8 + nm->bytes.len;
	int ret;

	blob = realloc(nm->off, (len + 7) / 8 * 8);
	if (!blob)
		return -1;
	nm->off = blob;
	if (n == 0)
		blob[0] = 0; /* the one offset of no names */
	memmove(blob + 2, blob, (size_t)n_off * 8);
	memcpy(blob, NAMES_MAGIC, 8);
	blob[1] = n;
	if (nm->bytes.len)
		memcpy(blob + 2 + n_off, nm->bytes.p, nm->bytes.len);
	sbuf_free(&nm->bytes);
	nm->n = nm->cap = 0;
	ret = simhash_index_set_user(ix, blob, len) != SIMHASH_OK ? -1 : 0;
	free(nm->off);
	nm->off = NULL;
	return ret;
}

static void names_free(struct names *nm)
{
	sbuf_free(&nm->bytes);
	free(nm->off);
	free(nm->slot);
}

/* ---- reading the text form */

struct fpvec {
	uint64_t *w;      /* words per fingerprint: bits / 64 */
	uint64_t *id;
	size_t n, cap;
	unsigned bits;    /* 0 until the first fingerprint */
	const char *first_path;
};

static void fpvec_push(struct fpvec *v, const simhash_fp *fp, uint64_t id)
{
	unsigned words = fp->bits / 64;
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 4096;
		v->w = realloc(v->w, v->cap * 2 * sizeof *v->w);
		v->id = realloc(v->id, v->cap * sizeof *v->id);
		if (!v->w || !v->id) {
			cli_err("out of memory");
			exit(EXIT_FAIL);
		}
	}
	memcpy(v->w + v->n * words, fp->w, words * 8);
	v->id[v->n++] = id;
}

/* Room for n fingerprints in all, on huge pages if big. */
static void fpvec_reserve(struct fpvec *v, size_t n)
{
	if (n <= v->cap)
		return;
	v->cap = n;
	v->w = realloc(v->w, v->cap * 2 * sizeof *v->w);
	v->id = realloc(v->id, v->cap * sizeof *v->id);
	if (!v->w || !v->id) {
		cli_err("out of memory");
		exit(EXIT_FAIL);
	}
	cli_hugepage_hint(v->w, v->cap * 2 * sizeof *v->w);
	cli_hugepage_hint(v->id, v->cap * sizeof *v->id);
}

/* Called for each fingerprint line; nonzero stops the read. */
typedef int (*line_fn)(void *arg, const simhash_fp *fp, const char *id, size_t id_len,
		       const char *path, uint64_t line);

/* Reads `HEX<TAB>ID` lines of path ("-": stdin). want_bits: 0 any width the
 * first line sets (then *bits), else that width. Empty lines are skipped. */
int index_read_text(const char *path, unsigned *bits, line_fn fn, void *arg)
{
	struct reader r;
	struct sbuf buf = {0};
	struct chunk c;
	int ret = 0, got;

	if (reader_open(&r, path)) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		return -1;
	}
	while (ret == 0 && (got = reader_next(&r, 1 << 20, 1 << 16, &buf, &c)) > 0) {
		size_t pos = 0, len;
		const char *s;
		uint64_t line = c.first_line;
		for (; ret == 0 && chunk_next_line(&c, &pos, &s, &len); line++) {
			char why_buf[96];
			const char *why;
			simhash_fp fp;
			size_t id_at;
			if (len == 0)
				continue;
			why = index_parse_line(s, len, bits, &fp, &id_at, why_buf, sizeof why_buf);
			if (why) {
				cli_err("%s:%llu: %s", display_name(path), (unsigned long long)line, why);
				ret = -1;
				break;
			}
			ret = fn(arg, &fp, s + id_at, len - id_at, path, line);
		}
	}
	if (ret == 0 && got < 0) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		ret = -1;
	}
	sbuf_free(&buf);
	reader_close(&r);
	return ret;
}

static const unsigned char FPFILE_MAGIC[4] = {0x89, 'S', 'H', 'F'};

/* 1 if path is a binary fingerprint file (by its first bytes). */
static int is_fpfile(const char *path)
{
	unsigned char head[4];
	FILE *f;
	int yes = 0;

	if (!strcmp(path, "-"))
		return 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	yes = fread(head, 1, 4, f) == 4 && memcmp(head, FPFILE_MAGIC, 4) == 0;
	fclose(f);
	return yes;
}

/* Reads a binary fingerprint file (simhash fingerprint --format bin). Its
 * scheme must equal *scheme when both are set; *scheme takes it otherwise. */
static int read_bin(const char *path, unsigned *bits, const char **scheme, char *scheme_buf,
		    line_fn fn, void *arg)
{
	simhash_fpfile *f;
	simhash_error why;
	struct sbuf id = {0};
	simhash_err err = simhash_fpfile_open(path, &f, &why);
	uint64_t n;
	int ret = 0;

	if (err) {
		cli_err("%s: %s", path, why.msg);
		return -1;
	}
	if (simhash_fpfile_bits(f) == 32) {
		cli_err("%s: 32-bit fingerprints cannot be indexed (64 or 128 bits)", path);
		ret = -1;
		goto out;
	}
	if (*bits && simhash_fpfile_bits(f) != *bits) {
		cli_err("%s: %u-bit fingerprints among %u-bit ones", path, simhash_fpfile_bits(f), *bits);
		ret = -1;
		goto out;
	}
	*bits = simhash_fpfile_bits(f);
	if (simhash_fpfile_scheme(f)[0]) {
		if (*scheme && (*scheme)[0] && strcmp(*scheme, simhash_fpfile_scheme(f)) != 0) {
			cli_err("%s: its scheme %s is not the index's %s", path, simhash_fpfile_scheme(f), *scheme);
			ret = -1;
			goto out;
		}
		if (!*scheme || !(*scheme)[0]) {
			snprintf(scheme_buf, SIMHASH_SCHEME_MAX, "%s", simhash_fpfile_scheme(f));
			*scheme = scheme_buf;
		}
	}
	n = simhash_fpfile_count(f);
	for (uint64_t i = 0; i < n && ret == 0; i++) {
		simhash_fp fp;
		const char *s;
		size_t len;
		if (simhash_fpfile_get(f, i, &fp) || simhash_fpfile_id(f, i, &s, &len)) {
			cli_err("%s: damaged record %llu", path, (unsigned long long)i + 1);
			ret = -1;
			break;
		}
		id.len = 0;
		if (idesc_escape(&id, s, len)) {
			cli_err("out of memory");
			ret = -1;
			break;
		}
		ret = fn(arg, &fp, id.p ? id.p : "", id.len, path, i + 1);
	}
out:
	sbuf_free(&id);
	simhash_fpfile_close(f);
	return ret;
}

/* Either form. */
int index_read_any(const char *path, unsigned *bits, const char **scheme, char *scheme_buf,
		    line_fn fn, void *arg)
{
	if (is_fpfile(path))
		return read_bin(path, bits, scheme, scheme_buf, fn, arg);
	return index_read_text(path, bits, fn, arg);
}

/* Lines wait in a batch, their ids copied; the batch's ids are then hashed
 * and looked up in input order (so ids are numbered as line by line), each
 * slot prefetched PREFETCH_AHEAD lines before its lookup so that the id
 * table's cache misses overlap. With threads (index build -j 2 and more),
 * full batches go to one consumer thread through a short queue: the reading
 * thread parses, the consumer hashes and numbers the ids and keeps the
 * fingerprints (the parsing is the larger share: the hashing is the
 * consumer's to balance the two); only the consumer touches the id table
 * and the vector. */
#define COLLECT_BATCH 1024
#define COLLECT_ARENA 65536
#define COLLECT_QUEUE 4
#define PREFETCH_AHEAD 16

struct cbatch {
	struct index_rec pend[COLLECT_BATCH];
	unsigned n;
	size_t expect;  /* lines expected in all, estimated (0: none) */
	size_t arena_len, arena_cap;
	char *arena;
};

struct collect {
	struct fpvec *v;
	struct names *nm;
	int add;          /* new names get ids; else unknown names are skipped */
	struct progress *prog; /* or NULL */
	uint64_t bytes, lines; /* not yet reported to prog */
	uint64_t size_hint;    /* bytes of input in all (0: unknown), for the first
				* batch's estimate of the lines to expect */
	struct cbatch *cur;    /* being filled by the reading thread */
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct cbatch *queue[COLLECT_QUEUE]; /* full, in input order */
	unsigned q_head, q_len;
	struct cbatch *spare[COLLECT_QUEUE + 1];
	unsigned n_spare;
	int done;
};

static struct cbatch *cbatch_new(void)
{
	struct cbatch *b = xcalloc(1, sizeof *b);
	b->arena_cap = COLLECT_ARENA;
	b->arena = xmalloc(b->arena_cap);
	return b;
}

static void cbatch_free(struct cbatch *b)
{
	if (b) {
		free(b->arena);
		free(b);
	}
}

/* Numbers the ids of n lines (ids at base + rec[i].off, hashed) and keeps
 * their fingerprints, in order. */
static void number_recs(struct collect *c, const struct index_rec *rec, size_t n, const char *base)
{
	for (size_t i = 0; i < n; i++) {
		const struct index_rec *p = &rec[i];
		uint64_t id;
		if (i + PREFETCH_AHEAD < n)
			names_prefetch(c->nm, rec[i + PREFETCH_AHEAD].hash);
		id = names_get_hashed(c->nm, base + p->off, p->len, p->hash, c->add);
		if (id != UINT64_MAX)
			fpvec_push(c->v, &p->fp, id);
	}
}

/* Numbers the ids of b's lines and keeps their fingerprints, in order. */
static void cbatch_run(struct collect *c, struct cbatch *b)
{
	if (b->expect) {
		names_reserve(c->nm, b->expect);
		fpvec_reserve(c->v, b->expect);
		b->expect = 0;
	}
	for (unsigned i = 0; i < b->n; i++)
		b->pend[i].hash = index_name_hash(b->arena + b->pend[i].off, b->pend[i].len);
	number_recs(c, b->pend, b->n, b->arena);
	b->n = 0;
	b->arena_len = 0;
}

static void *collect_consumer(void *arg)
{
	struct collect *c = arg;

	for (;;) {
		struct cbatch *b;
		pthread_mutex_lock(&c->mu);
		while (c->q_len == 0 && !c->done)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->q_len == 0) {
			pthread_mutex_unlock(&c->mu);
			return NULL;
		}
		b = c->queue[c->q_head];
		c->q_head = (c->q_head + 1) % COLLECT_QUEUE;
		c->q_len--;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		cbatch_run(c, b);
		pthread_mutex_lock(&c->mu);
		c->spare[c->n_spare++] = b;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
}

/* Sets c up; threaded: a consumer thread (if none can start, it runs inline). */
static void collect_init(struct collect *c, struct fpvec *v, struct names *nm, int add,
			 struct progress *prog, int threaded)
{
	memset(c, 0, sizeof *c);
	c->v = v, c->nm = nm, c->add = add, c->prog = prog;
	c->cur = cbatch_new();
	if (!threaded || !nm)
		return;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	for (unsigned i = 0; i <= COLLECT_QUEUE; i++)
		c->spare[c->n_spare++] = cbatch_new();
	c->threaded = pthread_create(&c->th, NULL, collect_consumer, c) == 0;
	if (!c->threaded) {
		for (unsigned i = 0; i < c->n_spare; i++)
			cbatch_free(c->spare[i]);
		c->n_spare = 0;
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
	}
}

/* Lines to expect in size_hint bytes of input, from the first n_lines lines
 * read (line_bytes bytes), at most one per 18 bytes (the shortest line: 16
 * hex digits, a tab, an empty id, a newline). A guess: the table and vector
 * still grow past it. */
static size_t expect_lines(uint64_t size_hint, uint64_t n_lines, uint64_t line_bytes)
{
	uint64_t n;

	if (!n_lines || !line_bytes)
		return 0;
	n = size_hint / ((line_bytes + n_lines - 1) / n_lines);
	if (n > size_hint / 18)
		n = size_hint / 18;
	return n + n / 32; /* some slack for shorter lines later */
}

/* Lines to expect in all, from the bytes per line of the first batch b. */
static size_t collect_expect(const struct collect *c, const struct cbatch *b)
{
	uint64_t line_bytes = 0;

	for (unsigned i = 0; i < b->n; i++) /* HEX, tab, id, newline */
		line_bytes += b->pend[i].fp.bits / 4 + b->pend[i].len + 2;
	return expect_lines(c->size_hint, b->n, line_bytes);
}

/* Hands the batch being filled on (to the consumer, or runs it here). */
static void collect_hand(struct collect *c)
{
	if (c->size_hint) { /* the first batch carries the estimate */
		c->cur->expect = collect_expect(c, c->cur);
		c->size_hint = 0;
	}
	if (!c->threaded) {
		cbatch_run(c, c->cur);
		return;
	}
	pthread_mutex_lock(&c->mu);
	while (c->q_len == COLLECT_QUEUE)
		pthread_cond_wait(&c->cv, &c->mu);
	c->queue[(c->q_head + c->q_len) % COLLECT_QUEUE] = c->cur;
	c->q_len++;
	pthread_cond_broadcast(&c->cv);
	while (c->n_spare == 0)
		pthread_cond_wait(&c->cv, &c->mu);
	c->cur = c->spare[--c->n_spare];
	pthread_mutex_unlock(&c->mu);
}

/* Every line handed on so far numbered: the next ones may be numbered
 * here, on the reading thread. */
static void collect_drain(struct collect *c)
{
	if (c->cur->n)
		collect_hand(c);
	if (!c->threaded)
		return;
	pthread_mutex_lock(&c->mu);
	while (c->q_len || c->n_spare < COLLECT_QUEUE + 1)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

/* Takes a block of lines from index_read_mapped (index_block_fn) and
 * numbers them here, on the reading thread, in input order. */
static int collect_block(void *arg, const struct index_rec *rec, size_t n, const char *base,
			 size_t bytes)
{
	struct collect *c = arg;

	if (c->size_hint) { /* the first block carries the estimate */
		size_t expect = expect_lines(c->size_hint, n, bytes);
		names_reserve(c->nm, expect);
		fpvec_reserve(c->v, expect);
		c->size_hint = n ? 0 : c->size_hint;
	}
	if (c->prog)
		progress_add(c->prog, bytes, n);
	number_recs(c, rec, n, base);
	return 0;
}

/* Every line in; call it before using c->v (also after a failed read). */
static void collect_finish(struct collect *c)
{
	if (c->cur->n)
		collect_hand(c);
	if (c->threaded) {
		pthread_mutex_lock(&c->mu);
		c->done = 1;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->th, NULL);
		for (unsigned i = 0; i < c->n_spare; i++)
			cbatch_free(c->spare[i]);
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		c->threaded = 0;
	}
	cbatch_free(c->cur);
	c->cur = NULL;
}

static int collect_line(void *arg, const simhash_fp *fp, const char *id, size_t id_len,
			const char *path, uint64_t line)
{
	struct collect *c = arg;
	struct cbatch *b = c->cur;
	struct index_rec *p;
	(void)path, (void)line;
	if (c->prog) { /* the line's bytes: HEX, tab, id, newline */
		c->bytes += fp->bits / 4 + id_len + 2;
		if (++c->lines == 8192) {
			progress_add(c->prog, c->bytes, c->lines);
			c->bytes = c->lines = 0;
		}
	}
	if (!c->nm) {
		fpvec_push(c->v, fp, 0);
		return 0;
	}
	if (b->n == COLLECT_BATCH || b->arena_cap - b->arena_len < id_len) {
		collect_hand(c);
		b = c->cur;
	}
	if (id_len > b->arena_cap) { /* a long id: an arena of its size */
		free(b->arena);
		b->arena = xmalloc(id_len);
		b->arena_cap = id_len;
	}
	p = &b->pend[b->n++];
	p->fp = *fp;
	p->off = (uint32_t)b->arena_len;
	p->len = (uint32_t)id_len;
	memcpy(b->arena + b->arena_len, id, id_len);
	b->arena_len += id_len;
	return 0;
}

static int save_index(simhash_index *ix, const char *path)
{
	simhash_error e;
	simhash_err err = simhash_index_save(ix, path, &e);
	if (err) {
		cli_err("%s: cannot write the index: %s", path,
			err == SIMHASH_EINVAL ? "not a regular file" : strerror(e.os_err ? e.os_err : EIO));
		return -1;
	}
	return 0;
}

/* ---- build, add, delete */

/* Reads one input of build: a regular file of the text form mapped and
 * parsed on n_threads threads (index_read_mapped), any other as before. */
static int build_read(const char *path, unsigned *bits, const char **scheme, char *scheme_buf,
		      unsigned n_threads, struct collect *c)
{
	int ret = 1;

	if (strcmp(path, "-") && !is_fpfile(path)) {
		collect_drain(c);
		ret = index_read_mapped(path, bits, n_threads, collect_block, c);
	}
	if (ret == 1)
		ret = index_read_any(path, bits, scheme, scheme_buf, collect_line, c);
	return ret;
}

/* What build, add and delete hold until they return. */
static void release(simhash_index *ix, struct names *nm, struct fpvec *v)
{
	simhash_index_free(ix);
	names_free(nm);
	free(v->w);
	free(v->id);
}

/* The index is written by simhash_index_build_file, one table at a time:
 * the peak is the fingerprints, ids and names read plus one table, under the
 * size of the file written (the names' lookup table is freed before). */
int index_cmd_build(int argc, char **argv)
{
	struct args a;
	struct fpvec v = {0};
	struct names nm = {0};
	struct progress prog;
	struct collect col;
	simhash_index *ix = NULL;
	char scheme_buf[SIMHASH_SCHEME_MAX];
	unsigned bits = 0;
	int optind, ret;
	simhash_error e;
	simhash_err err;

	ret = index_parse_args("index build", argc, argv, &a, NULL, &optind);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!a.out) {
		cli_err("index build: -o INDEX is required");
		return EXIT_USAGE;
	}
	if (a.scheme && strlen(a.scheme) >= SIMHASH_SCHEME_MAX) {
		cli_err("index build: --scheme is too long (at most %d bytes)", SIMHASH_SCHEME_MAX - 1);
		return EXIT_USAGE;
	}
	if (a.have_k && a.k > SIMHASH_INDEX_MAX_DIST_128) {
		cli_err("index build: -k %lu is out of range (0 to 16 at 64 bits, 0 to 32 at 128)", a.k);
		return EXIT_USAGE;
	}
	progress_init(&prog, optind == argc ? 0 : cli_total_size(argv + optind, (size_t)(argc - optind)));
	collect_init(&col, &v, &nm, 1, &prog, a.jobs > 1);
	col.size_hint = prog.total_bytes; /* 0 when not all inputs are regular files */
	if (optind == argc)
		ret = index_read_text("-", &bits, collect_line, &col);
	for (int i = optind; i < argc && ret == 0; i++)
		ret = build_read(argv[i], &bits, &a.scheme, scheme_buf, (unsigned)a.jobs, &col);
	collect_finish(&col);
	progress_end(&prog);
	if (ret) {
		ret = EXIT_FAIL;
		goto out;
	}
	free(nm.slot); /* no more lookups */
	nm.slot = NULL, nm.n_slots = 0;
	if (bits == 0)
		bits = 64;
	if (!a.have_k)
		a.k = bits == 64 ? 3 : 6;
	if (index_check_k("index build", a.k, bits, 1000)) {
		ret = EXIT_USAGE;
		goto out;
	}
	err = simhash_index_new(bits, (unsigned)a.k, &ix);
	if (!err && a.scheme)
		err = simhash_index_set_scheme(ix, a.scheme);
	if (!err && names_store(&nm, ix))
		err = SIMHASH_ENOMEM;
	names_free(&nm); /* the index holds their copy */
	memset(&nm, 0, sizeof nm);
	if (!err && v.n > UINT32_MAX)
		err = SIMHASH_EINVAL;
	if (err) {
		cli_err("index build: %s", simhash_strerror(err));
		ret = EXIT_FAIL;
		goto out;
	}
	{
		char stage[128];
		snprintf(stage, sizeof stage, "%zu fingerprints read; sorting and writing %s", v.n,
			 a.jobs > 1 ? "the tables in parallel" : "the tables");
		progress_stage(&prog, stage); /* the build has no count to show */
	}
	err = simhash_index_build_file(ix, v.w, v.id, v.n, (unsigned)a.jobs, a.out, &e);
	progress_end(&prog);
	if (err == SIMHASH_ENOMEM) {
		cli_err("index build: %s", simhash_strerror(err));
		ret = EXIT_FAIL;
	} else if (err) {
		cli_err("%s: cannot write the index: %s", a.out,
			err == SIMHASH_EINVAL ? "not a regular file" : strerror(e.os_err ? e.os_err : EIO));
		ret = EXIT_FAIL;
	} else {
		ret = EXIT_OK;
	}
out:
	release(ix, &nm, &v);
	return ret;
}

int index_cmd_change(int argc, char **argv, int add)
{
	const char *cmd = add ? "index add" : "index delete";
	struct args a;
	struct fpvec v = {0};
	struct names nm = {0};
	struct collect col;
	simhash_index *ix;
	char scheme_buf[SIMHASH_SCHEME_MAX];
	const char *scheme;
	unsigned bits;
	int optind, ret;
	simhash_err err = SIMHASH_OK;

	ret = index_parse_args(cmd, argc, argv, &a, NULL, &optind);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (optind == argc) {
		cli_err("%s: expected INDEX [FILE]...", cmd);
		return EXIT_USAGE;
	}
	ix = index_open(argv[optind]);
	if (!ix)
		return EXIT_FAIL;
	bits = simhash_index_bits(ix);
	scheme = simhash_index_scheme(ix);
	if (names_load(&nm, ix, 1, argv[optind])) {
		ret = EXIT_FAIL;
		goto out;
	}
	collect_init(&col, &v, &nm, add, NULL, 0);
	if (optind + 1 == argc)
		ret = index_read_text("-", &bits, collect_line, &col);
	for (int i = optind + 1; i < argc && ret == 0; i++)
		ret = index_read_any(argv[i], &bits, &scheme, scheme_buf, collect_line, &col);
	collect_finish(&col);
	if (ret) {
		ret = EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < v.n && !err; i++) {
		simhash_fp fp = {{v.w[i * (bits / 64)], bits == 128 ? v.w[i * 2 + 1] : 0}, bits};
		err = add ? simhash_index_insert(ix, &fp, v.id[i]) : simhash_index_delete(ix, &fp, v.id[i], NULL);
	}
	if (!err && add && names_store(&nm, ix))
		err = SIMHASH_ENOMEM;
	if (err) {
		cli_err("%s: %s", cmd, simhash_strerror(err));
		ret = EXIT_FAIL;
		goto out;
	}
	ret = save_index(ix, argv[optind]) ? EXIT_FAIL : EXIT_OK;
out:
	release(ix, &nm, &v);
	return ret;
}
