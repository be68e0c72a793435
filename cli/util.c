/* util.c - messages, growable buffers, number parsing and whole-file reads
 * shared by the commands (see util.h for who may call what). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "simhash.h"
#include "util.h"

void cli_err(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	/* One buffer, one write: worker threads never print, but a message must
	 * not interleave with a progress bar redrawn on the same terminal. */
	memcpy(line, "simhash: ", 9);
	va_start(ap, fmt);
	n = vsnprintf(line + 9, sizeof(line) - 10, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	n += 9;
	if ((size_t)n > sizeof(line) - 1)
		n = sizeof(line) - 1;
	line[n++] = '\n';
	fflush(stdout);
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nowhere left to report it */
	}
}

static void out_of_memory(void)
{
	cli_err("out of memory");
	exit(EXIT_FAIL);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		out_of_memory();
	return p;
}

int sbuf_grow(struct sbuf *b, size_t extra)
{
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (extra > SIZE_MAX - b->len)
		return -1;
	if (b->cap - b->len >= extra)
		return 0; /* a realloc() to the same size copies under ASan */
	while (cap - b->len < extra) {
		if (cap > SIZE_MAX / 2) {
			cap = b->len + extra;
			break;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

int sbuf_adds(struct sbuf *b, const char *s)
{
	return sbuf_add(b, s, strlen(s));
}

int sbuf_add_u64(struct sbuf *b, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return sbuf_add(b, tmp + sizeof(tmp) - n, n);
}

int sbuf_add_json_str(struct sbuf *b, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, done = 0, n, bad;
	char esc[6];
	unsigned char c;

	if (sbuf_addc(b, '"'))
		return -1;
	while (i < len) {
		c = s[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			n = simhash_utf8_seq((const char *)s + i, len - i, &bad);
			if (n) {
				i += n;
				continue;
			}
		}
		if (sbuf_add(b, s + done, i - done))
			return -1;
		if (c >= 0x80) {
			if (sbuf_add(b, "\xef\xbf\xbd", 3))
				return -1;
			i += bad;
		} else {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
			if (c == '"' || c == '\\') {
				esc[1] = (char)c;
				n = 2;
			} else if (c == '\n' || c == '\t' || c == '\r') {
				esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
				n = 2;
			}
			if (sbuf_add(b, esc, n))
				return -1;
			i++;
		}
		done = i;
	}
	if (sbuf_add(b, s + done, len - done))
		return -1;
	return sbuf_addc(b, '"');
}

void sbuf_free(struct sbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void cli_hugepage_hint(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	uintptr_t a = ((uintptr_t)p + ((1u << 21) - 1)) & ~(uintptr_t)((1u << 21) - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)((1u << 21) - 1);

	if (len >= (8u << 20) && e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

void *cli_grow_big(void *p, size_t len, size_t size)
{
	size_t huge = (size_t)2 << 20;
	void *q;

	if (size < huge / 2)
		return realloc(p, size);
	if (size > SIZE_MAX - huge)
		return NULL;
	size = (size + huge - 1) & ~(huge - 1);
	q = aligned_alloc(huge, size);
	if (!q)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(q, size, MADV_HUGEPAGE); /* advice only */
#endif
	if (p && len)
		memcpy(q, p, len);
	free(p);
	return q;
}

int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int read_fd_all(int fd, struct sbuf *b)
{
	simhash_error e;

	if (simhash_read_fd(fd, &b->p, &b->len, &b->cap, &e)) {
		errno = e.os_err;
		return -1;
	}
	return 0;
}

int read_path_all(const char *path, struct sbuf *b)
{
	simhash_error e;

	b->len = 0;
	if (path[0] == '-' && path[1] == '\0')
		return read_fd_all(STDIN_FILENO, b);
	if (simhash_read_file(path, &b->p, &b->len, &b->cap, &e)) {
		errno = e.os_err;
		return -1;
	}
	return 0;
}

unsigned cli_online_cores(unsigned max)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (unsigned long)n > max ? max : (unsigned)n;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long cli_read_full(int fd, void *buf, size_t n, int64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = off < 0 ? read(fd, (char *)buf + got, n - got)
				    : pread(fd, (char *)buf + got, n - got, (off_t)(off + (int64_t)got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (long)got;
}

uint64_t cli_total_size(char *const *paths, size_t n)
{
	uint64_t total = 0;
	struct stat st;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(paths[i], "-") || stat(paths[i], &st) || !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}
