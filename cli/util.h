/* util.h - small helpers shared by the commands: the one-line error message,
 * growable byte buffers, strict number parsing, whole-file reads, and the
 * core count, clock and input size the commands' -j, timings and progress
 * lines take.
 *
 * Nothing here exits except xmalloc() and friends, which the main thread uses
 * for small setup allocations; worker threads use the sbuf functions, which
 * report failure instead, so an out-of-memory error ends up as a message from
 * the main thread like every other error.
 */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* The name standard input has in messages; its id in output is "-". */
#define STDIN_NAME "<stdin>"

/* Prints "simhash: <message>\n" on stderr, as one write. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "simhash: <message>" and exit 1 if memory runs out. Main thread only. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);

/* A growable byte buffer; p is not NUL-terminated unless asked for. */
struct sbuf {
	char *p;
	size_t len;
	size_t cap;
};

/* Makes room for extra more bytes: 0, or -1 if memory runs out. */
int sbuf_grow(struct sbuf *b, size_t extra);

static inline int sbuf_add(struct sbuf *b, const void *data, size_t n)
{
	if (n == 0)
		return 0; /* b->p may still be NULL */
	if (b->cap - b->len < n && sbuf_grow(b, n))
		return -1;
	__builtin_memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

static inline int sbuf_addc(struct sbuf *b, char c)
{
	if (b->len == b->cap && sbuf_grow(b, 1))
		return -1;
	b->p[b->len++] = c;
	return 0;
}

int sbuf_adds(struct sbuf *b, const char *s);
int sbuf_add_u64(struct sbuf *b, uint64_t v);
/* Appends s as a JSON string literal, quotes included. Invalid UTF-8 becomes
 * U+FFFD so the output is always valid JSON. */
int sbuf_add_json_str(struct sbuf *b, const char *s, size_t len);
void sbuf_free(struct sbuf *b);

/* Parses a whole decimal string into *out if it lies in [min, max]; -1 if not. */
int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* Reads everything from fd (after what b already holds). 0, or -1 with errno
 * set. A regular file's size is used to read it in one go. */
int read_fd_all(int fd, struct sbuf *b);

/* Reads the file at path, or standard input for "-", into b (replacing its
 * contents). 0, or -1 with errno set. */
int read_path_all(const char *path, struct sbuf *b);

/* The number of online processors, in [1, max]: the default of -j. */
unsigned cli_online_cores(unsigned max);

/* Seconds on the monotonic clock, for durations. */
double cli_now(void);

/* The total size of the inputs paths[0..n) if all are regular files (a
 * progress line's 100 %); 0 if one is standard input ("-") or another
 * stream, whose size is unknown. */
uint64_t cli_total_size(char *const *paths, size_t n);

/* Reads up to n bytes of fd into buf, at offset off (pread) or, with off
 * negative, where the file stands (read): fewer only at the end of the
 * file. The count, or -1 with errno set. */
long cli_read_full(int fd, void *buf, size_t n, int64_t off);

/* Asks for transparent huge pages over the 2 MB-aligned interior of a big
 * buffer (8 MB or more): far fewer page faults when it is first written.
 * Only a hint. */
void cli_hugepage_hint(void *p, size_t len);
/* p (len bytes in use, from cli_grow_big() or malloc; NULL: none) grown to
 * hold size bytes: from 1 MiB on, in a new block on 2 MiB boundaries that
 * the system may back with huge pages (a copy, where realloc() of a block on
 * the heap copies too, into pages faulted one at a time); below, realloc().
 * NULL if memory ran out, p then untouched. Free with free(). */
void *cli_grow_big(void *p, size_t len, size_t size);

/* The path for messages: "<stdin>" for "-". */
static inline const char *display_name(const char *path)
{
	return (path[0] == '-' && path[1] == '\0') ? STDIN_NAME : path;
}

#endif /* CLI_UTIL_H */
