/* index_read.c - the text form `HEX<TAB>ID` of a regular file, read for
 * `simhash index build` on several threads, and the rule for one line that
 * every reader of the text form in `simhash index` follows (index_parse_line).
 *
 * Workload: tens of millions to billions of lines of 16 or 32 hex digits and
 * a short id, one file already in the page cache; reading used to be the
 * longest step of a build. The file is mapped read-only and never copied.
 * Its bytes are cut into blocks of equal size; a block holds the lines that
 * start in it (the first line starts after the first '\n' at or after the
 * block's first byte - 1, so every line belongs to exactly one block, a line
 * longer than a block included). Blocks are parsed on the pool's threads
 * (pool.h) into records (fingerprint, where the id is, the hash of the id)
 * and handed back to the caller in input order.
 *
 * Invariants:
 *  1. The caller sees the records in input order whatever the number of
 *     threads, so ids are numbered as when read line by line.
 *  2. Blocks are taken back in order, and a block reports its first bad line
 *     only: the first bad line of the input is the one reported, with its
 *     number (the lines of the blocks before it, empty lines included, plus
 *     its place in its block) and the message index_read_text gives.
 *  3. The width is the first non-empty line's when the caller has none yet,
 *     found before the parse: every block checks every line against it, as a
 *     line-by-line read would.
 *  4. Memory: the mapping, whose pages are given back once their block is
 *     taken (the caller keeps what it needs of them), plus the records of the
 *     blocks in flight (at most DEPTH(n_threads) blocks).
 * A mapped file must not be truncated while it is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "index_cmd.h"
#include "pool.h"
#include "util.h"

/* Bytes per block: at most BLOCK_MAX (the records of a block stay in the
 * cache's reach), at least BLOCK_MIN, and otherwise about 8 blocks a thread,
 * so that a small file is still shared out. */
#define BLOCK_MAX ((size_t)4 << 20)
#define BLOCK_MIN ((size_t)64 << 10)
#define DEPTH(n_threads) (2 * (size_t)(n_threads) + 2)

uint64_t index_name_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then a fold of its top bits */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (h ^ (h >> 29)) >> 32;
}

const char *index_parse_line(const char *s, size_t len, unsigned *bits, simhash_fp *fp,
			     size_t *id_at, char *buf, size_t buf_len)
{
	const char *tab = memchr(s, '\t', len);

	if (!tab || simhash_fp_parse(s, (size_t)(tab - s), fp) != SIMHASH_OK || fp->bits == 32) {
		if (!tab)
			return "expected HEX<TAB>ID";
		if (tab - s == 8 && simhash_fp_parse(s, 8, fp) == SIMHASH_OK)
			return "32-bit fingerprints cannot be indexed (64 or 128 bits)";
		return "invalid fingerprint (16 or 32 hex digits expected)";
	}
	if (*bits == 0)
		*bits = fp->bits;
	if (fp->bits != *bits) {
		snprintf(buf, buf_len, "a %u-bit fingerprint among %u-bit ones", fp->bits, *bits);
		return buf;
	}
	*id_at = (size_t)(tab + 1 - s);
	return NULL;
}

/* 16 hex digits (either case) at s into *v: 1, or 0 if one is no hex digit. */
static int hex16(const char *s, uint64_t *v)
{
	uint64_t acc = 0;
	unsigned ok = 1;

	for (int i = 0; i < 16; i++) {
		unsigned c = (unsigned char)s[i];
		ok &= (c - '0' < 10u) | ((c | 0x20) - 'a' < 6u);
		acc = acc << 4 | ((c & 15) + 9 * (c >> 6 & 1));
	}
	*v = acc;
	return (int)ok;
}

/* What the threads share: the text and its width (0 if its first non-empty
 * line is bad: the first block then reports that line). */
struct text {
	const char *p;
	size_t len, block;
	unsigned bits;
};

/* One block: its raw range, then what its parse found. */
struct block {
	size_t from, to;
	const char *base;      /* its first line; records' ids are at base + off */
	size_t bytes;          /* of its lines */
	struct index_rec *rec;
	size_t n, cap;
	uint64_t n_lines;      /* empty ones included */
	uint64_t err_line;     /* 0, or its first bad line, from 1 */
	char why[96];
	const char *err;       /* why the line is bad */
	int oom;
};

/* Where the first line starting at or after byte at begins (len: none). */
static size_t line_start(const struct text *t, size_t at)
{
	const char *nl;

	if (at == 0 || at >= t->len)
		return at == 0 ? 0 : t->len;
	nl = memchr(t->p + at - 1, '\n', t->len - (at - 1));
	return nl ? (size_t)(nl - t->p) + 1 : t->len;
}

/* Adds line q (len > 0 bytes, no line end) to b: 0, or -1 if it is bad or
 * memory ran out (b says which). */
static int block_line(struct block *b, const struct text *t, const char *q, size_t len)
{
	unsigned d = t->bits / 4, bits = t->bits;
	struct index_rec *r;
	simhash_fp fp = { { 0, 0 }, t->bits };
	size_t id_at = d + 1;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		struct index_rec *p = realloc(b->rec, cap * sizeof(*p));
		if (!p) {
			b->oom = 1;
			return -1;
		}
		b->rec = p, b->cap = cap;
	}
	/* the common line, checked here; anything else by the one rule */
	if (!(d && len > d && q[d] == '\t' &&
	      (d == 16 ? hex16(q, &fp.w[0]) : hex16(q, &fp.w[1]) && hex16(q + 16, &fp.w[0])))) {
		b->err = index_parse_line(q, len, &bits, &fp, &id_at, b->why, sizeof(b->why));
		if (b->err) {
			b->err_line = b->n_lines;
			return -1;
		}
	}
	r = &b->rec[b->n++];
	r->fp = fp;
	r->off = (uint32_t)(q + id_at - b->base);
	r->len = (uint32_t)(len - id_at);
	r->hash = index_name_hash(q + id_at, len - id_at);
	return 0;
}

/* Parses the lines that start in b's range (pool_fn). */
static void block_parse(void *job, unsigned worker, void *arg)
{
	struct block *b = job;
	const struct text *t = arg;
	size_t s = line_start(t, b->from), e = line_start(t, b->to);
	const char *q = t->p + s, *end = t->p + e, *nl, *next;
	size_t len;

	(void)worker;
	b->base = q;
	b->bytes = e > s ? e - s : 0;
	b->n = 0, b->n_lines = 0, b->err_line = 0, b->oom = 0;
	for (; q < end; q = next) {
		nl = memchr(q, '\n', (size_t)(end - q));
		next = nl ? nl + 1 : end; /* no '\n': the file's unterminated last line */
		len = (size_t)((nl ? nl : end) - q);
		if (nl && len && q[len - 1] == '\r')
			len--;
		b->n_lines++;
		if (len && block_line(b, t, q, len))
			return;
	}
}

/* The width of the first non-empty line that is a fingerprint of the width
 * *bits or sets it (0: it is bad, or there is none). */
static void first_width(const struct text *t, unsigned *bits)
{
	const char *q = t->p, *end = t->p + t->len, *nl;
	char why[96];
	simhash_fp fp;
	size_t len, id_at;

	for (; q < end && *bits == 0; q = nl ? nl + 1 : end) {
		nl = memchr(q, '\n', (size_t)(end - q));
		len = (size_t)((nl ? nl : end) - q);
		if (nl && len && q[len - 1] == '\r')
			len--;
		if (len) {
			unsigned w = 0;
			if (!index_parse_line(q, len, &w, &fp, &id_at, why, sizeof(why)))
				*bits = w;
			return;
		}
	}
}

/* Takes the blocks back in order and hands them to fn. 0, or -1 after the
 * message. */
static int take_blocks(struct pool *pool, const struct text *t, const char *path,
		       size_t n_blocks, size_t next, index_block_fn fn, void *arg)
{
	struct block *b;
	uint64_t line = 1;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), released = 0, upto;
	int ret = 0;

	while ((b = pool_next_done(pool))) {
		if (ret == 0 && b->oom) {
			cli_err("out of memory reading %s", path);
			ret = -1;
		} else if (ret == 0 && b->err_line) {
			cli_err("%s:%llu: %s", path, (unsigned long long)(line + b->err_line - 1), b->err);
			ret = -1;
		} else if (ret == 0) {
			ret = fn(arg, b->rec, b->n, b->base, b->bytes);
			line += b->n_lines;
			upto = (size_t)(b->base + b->bytes - t->p) / page * page;
			if (upto > released) /* taken: its pages can go (advice only) */
				(void)madvise((char *)t->p + released, upto - released, MADV_DONTNEED);
			released = upto > released ? upto : released;
		}
		if (ret == 0 && next < n_blocks) {
			b->from = next * t->block;
			b->to = ++next * t->block;
			pool_submit(pool, b);
		}
	}
	return ret;
}

int index_read_mapped(const char *path, unsigned *bits, unsigned n_threads, index_block_fn fn,
		      void *arg)
{
	struct text t;
	struct stat st;
	struct pool *pool = NULL;
	struct block *blocks;
	size_t depth = DEPTH(n_threads), n_blocks, i;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;
	void *map;

	if (fd < 0)
		return 1; /* index_read_text says why */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return 1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 1;
	(void)madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL); /* advice only */
	t.p = map, t.len = (size_t)st.st_size;
	first_width(&t, bits);
	t.bits = *bits;
	t.block = t.len / (8 * (size_t)n_threads);
	t.block = t.block < BLOCK_MIN ? BLOCK_MIN : t.block > BLOCK_MAX ? BLOCK_MAX : t.block;
	n_blocks = (t.len + t.block - 1) / t.block;
	blocks = calloc(depth, sizeof(*blocks));
	if (!blocks || pool_new(n_threads, depth, block_parse, &t, &pool)) {
		cli_err("%s: %s", path, blocks ? strerror(errno) : "out of memory");
		ret = -1;
		goto out;
	}
	for (i = 0; i < depth && i < n_blocks; i++) {
		blocks[i].from = i * t.block;
		blocks[i].to = (i + 1) * t.block;
		pool_submit(pool, &blocks[i]);
	}
	ret = take_blocks(pool, &t, path, n_blocks, i, fn, arg);
out:
	pool_free(pool);
	for (i = 0; blocks && i < depth; i++)
		free(blocks[i].rec);
	free(blocks);
	munmap(map, t.len);
	return ret;
}
