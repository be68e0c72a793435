/* reader.c - whole-line chunks from a byte stream (see reader.h).
 *
 * Workload: from many short lines (JSON records of a few KB) to a single line
 * of a gigabyte. Reads are 1 MB blocks into one buffer; chunks are copied out
 * of it, so the buffer is reused, except that a chunk of more than SWAP_MIN
 * bytes (a huge line) trades buffers with the destination instead of being
 * copied, so a line is held in memory once, not twice.
 *
 * Invariants: start <= cut <= scan <= end <= cap; [start, cut) holds n_found
 * complete lines; [cut, scan) holds no '\n', so no byte is scanned twice and a
 * huge line arriving through a pipe in 64 KB pieces costs linear time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "reader.h"

#define BLOCK ((size_t)1 << 20)     /* read size and minimum buffer */
#define READ_MIN ((size_t)64 << 10) /* read at least this much at once */
#define SWAP_MIN ((size_t)4 << 20)

int reader_open(struct reader *r, const char *path)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->next_line = 1;
	if (!strcmp(path, "-")) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0)
			return -1;
	}
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r->regular = 1;
		r->size = (uint64_t)st.st_size;
	}
	return 0;
}

void reader_close(struct reader *r)
{
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	r->fd = -1;
	free(r->buf);
	r->buf = NULL;
}

/* Reads more input, moving the unconsumed bytes to the front or growing the
 * buffer first if needed. Returns the bytes read (0 at the end), or -1. */
static ssize_t fill(struct reader *r)
{
	size_t keep = r->end - r->start, cap;
	char *p;
	ssize_t n;

	if (r->cap - r->end < READ_MIN && r->start > 0) {
		memmove(r->buf, r->buf + r->start, keep);
		r->end -= r->start;
		r->scan -= r->start;
		r->cut -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < READ_MIN) {
		cap = r->cap ? r->cap : BLOCK;
		while (cap - r->end < READ_MIN) {
			if (cap > SIZE_MAX / 2) {
				errno = ENOMEM;
				return -1;
			}
			cap *= 2;
		}
		p = realloc(r->buf, cap);
		if (!p) {
			errno = ENOMEM;
			return -1;
		}
		r->buf = p;
		r->cap = cap;
	}
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		r->end += (size_t)n;
		r->bytes_read += (uint64_t)n;
	}
	return n;
}

/* Hands out [start, end) as a chunk, by trading buffers with dst if large. */
static int emit(struct reader *r, size_t end, struct sbuf *dst, struct chunk *c)
{
	size_t len = end - r->start, tail = r->end - end, cap;
	char *old;

	c->len = len;
	c->n_lines = r->n_found + (end > r->cut);
	c->unterminated = end > r->cut;
	c->first_line = r->next_line;
	if (len >= SWAP_MIN) {
		old = r->buf;
		cap = r->cap;
		r->buf = dst->p;
		r->cap = dst->cap;
		dst->p = old;
		dst->cap = cap;
		dst->len = end;
		c->data = old + r->start;
		if (r->cap < BLOCK || r->cap < tail) {
			cap = tail > BLOCK ? tail : BLOCK;
			old = realloc(r->buf, cap);
			if (!old) {
				errno = ENOMEM;
				return -1;
			}
			r->buf = old;
			r->cap = cap;
		}
		memcpy(r->buf, dst->p + end, tail);
		r->scan -= end;
		r->start = 0;
		r->end = tail;
	} else {
		dst->len = 0;
		if (sbuf_add(dst, r->buf + r->start, len)) {
			errno = ENOMEM;
			return -1;
		}
		c->data = dst->p;
		r->start = end;
	}
	r->cut = r->start;
	if (r->scan < r->cut)
		r->scan = r->cut;
	r->next_line += c->n_lines;
	r->n_found = 0;
	return 1;
}

int reader_next(struct reader *r, size_t max_bytes, size_t max_lines, struct sbuf *dst,
		struct chunk *c)
{
	const char *nl;
	int short_read = 0;
	ssize_t n;

	for (;;) {
		while (r->n_found < max_lines && r->cut - r->start < max_bytes) {
			nl = r->scan < r->end ? memchr(r->buf + r->scan, '\n', r->end - r->scan) : NULL;
			if (!nl) {
				r->scan = r->end;
				break;
			}
			r->cut = r->scan = (size_t)(nl - r->buf) + 1;
			r->n_found++;
		}
		/* A pipe delivers what it has: hand that out rather than wait for
		 * more, so a slow producer sees its output promptly. */
		if (r->n_found && (r->n_found == max_lines || r->cut - r->start >= max_bytes || short_read))
			return emit(r, r->cut, dst, c);
		if (r->eof) {
			if (r->end == r->start)
				return 0;
			return emit(r, r->end, dst, c);
		}
		n = fill(r);
		if (n < 0)
			return -1;
		if (n == 0)
			r->eof = 1;
		else if (!r->regular)
			short_read = 1;
	}
}

int chunk_next_line(const struct chunk *c, size_t *pos, const char **s, size_t *len)
{
	const char *p = c->data + *pos, *nl;
	size_t n;

	if (*pos >= c->len)
		return 0;
	nl = memchr(p, '\n', c->len - *pos);
	if (!nl) {
		*s = p;
		*len = c->len - *pos;
		*pos = c->len;
		return 1;
	}
	n = (size_t)(nl - p);
	*pos += n + 1;
	if (n && p[n - 1] == '\r')
		n--;
	*s = p;
	*len = n;
	return 1;
}
