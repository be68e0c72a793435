/* reader.h - splits a file or standard input into chunks of whole lines, for
 * the commands that take one document per line (--lines, --jsonl).
 *
 * Memory stays bounded by the chunk size and the longest line: input is read
 * in large blocks, never line by line, and a line of any length is kept whole
 * (the buffer grows to hold it, or the reader reports ENOMEM).
 */
#ifndef CLI_READER_H
#define CLI_READER_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct reader {
	int fd;
	const char *path; /* as given; "-" is standard input */
	char *buf;
	size_t cap;
	size_t start;   /* first byte not yet handed out */
	size_t end;     /* end of the bytes read */
	size_t scan;    /* [start, scan) is scanned: n_found lines end at cut */
	size_t cut;
	size_t n_found;
	int eof;
	int regular;         /* a regular file: reads return all they can */
	uint64_t next_line;  /* number (from 1) of the next line handed out */
	uint64_t bytes_read;
	uint64_t size;       /* of a regular file; 0 if unknown */
};

/* Lines of one chunk. Each ends in '\n' except, if unterminated, the last one,
 * which is the end of the input. */
struct chunk {
	const char *data;
	size_t len;
	size_t n_lines;
	uint64_t first_line;
	int unterminated;
};

/* Opens path ("-": standard input). 0, or -1 with errno set. */
int reader_open(struct reader *r, const char *path);
void reader_close(struct reader *r);

/* Puts the next lines into dst (whose old contents go) and describes them in
 * *c: at least one line, and stops after max_lines lines or once max_bytes are
 * reached. Returns 1, 0 at the end of the input, or -1 with errno set (a read
 * error, or ENOMEM for a line that does not fit in memory). The line being
 * read is then r->next_line + r->n_found. */
int reader_next(struct reader *r, size_t max_bytes, size_t max_lines, struct sbuf *dst,
		struct chunk *c);

/* Steps through the lines of c: start with *pos = 0; each call sets *s and
 * *len to the next line without its '\n' and a '\r' just before it (an
 * unterminated last line keeps a final '\r') and returns 1; 0 after the last. */
int chunk_next_line(const struct chunk *c, size_t *pos, const char **s, size_t *len);

#endif /* CLI_READER_H */
