/* fpinput.c - fingerprint sets from the text form or a binary file (see
 * fpinput.h).
 *
 * Text: the main thread takes BLOCK bytes at a time (whole lines) from the
 * file's mapping, or reads them from a stream (the tail of a cut line moves
 * to the next block), splits the block into one slice per thread at line
 * ends, and the threads parse their slices into their own arrays, which are
 * then appended in order; so the result, and which error is reported (the
 * first in the input), does not depend on the number of threads. The width
 * comes from the first line; every other line must agree.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fpinput.h"

#define BLOCK ((size_t)32 << 20)
#define MAX_SLICES 64

/* 0..15 for a hex digit (either case), 0x80 for anything else. */
static const uint8_t hexv[256] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

struct slice {
	const char *p;
	size_t len;
	uint64_t file_off; /* of p, for ids kept as offsets */
	unsigned bits, nw, digits;
	int ids_in_file;
	uint64_t *words;
	size_t n, cap;
	uint64_t *off; /* where each id starts, in the input */
	/* the first bad line: its number within the slice (from 1) and why */
	size_t err_line;
	char err[160];
	int oom;
};

static int slice_grow(struct slice *s)
{
	size_t cap = s->cap ? s->cap * 2 : 4096;
	uint64_t *w = realloc(s->words, cap * s->nw * sizeof(*w));
	uint64_t *o;

	if (!w)
		return -1;
	s->words = w;
	o = realloc(s->off, cap * sizeof(*o));
	if (!o)
		return -1;
	s->off = o;
	s->cap = cap;
	return 0;
}

/* Says why a line that is not `HEX<TAB>ID` of the slice's width is wrong. */
static void explain(struct slice *s, const char *line, size_t len)
{
	const char *tab = memchr(line, '\t', len);
	size_t digits = tab ? (size_t)(tab - line) : len, i;

	for (i = 0; i < digits && !(hexv[(uint8_t)line[i]] & 0x80); i++)
		;
	if (len == 0)
		snprintf(s->err, sizeof(s->err), "empty line (expected HEX<TAB>ID)");
	else if (!tab)
		snprintf(s->err, sizeof(s->err), "malformed line (expected HEX<TAB>ID)");
	else if (i == digits && (digits == 8 || digits == 16 || digits == 32))
		snprintf(s->err, sizeof(s->err),
			 "a %zu-bit fingerprint among %u-bit ones (widths cannot be mixed)",
			 digits * 4, s->bits);
	else
		snprintf(s->err, sizeof(s->err),
			 "malformed fingerprint (expected 8, 16 or 32 hex digits, then a tab)");
}

static void parse_slice(struct slice *s)
{
	const char *p = s->p, *end = s->p + s->len, *nl, *q;

	size_t line = 0;
	unsigned d = s->digits, j;

	while (p < end) {
		uint64_t w0 = 0, w1 = 0;
		uint8_t acc = 0;

		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) <= d || p[d] != '\t')
			goto bad;
		if (d == 32) {
			for (j = 0; j < 16; j++) {
				uint8_t h = hexv[(uint8_t)p[j]];
				acc |= h;
				w1 = w1 << 4 | (h & 15);
			}
			q = p + 16;
		} else {
			q = p;
		}
		for (j = 0; j < (d == 8 ? 8u : 16u); j++) {
			uint8_t h = hexv[(uint8_t)q[j]];
			acc |= h;
			w0 = w0 << 4 | (h & 15);
		}
		if (acc & 0x80)
			goto bad;
		if (s->n == s->cap && slice_grow(s)) {
			s->oom = 1;
			return;
		}
		s->words[s->n * s->nw] = w0;
		if (s->nw == 2)
			s->words[s->n * 2 + 1] = w1;
		s->off[s->n] = s->file_off + (uint64_t)(p + d + 1 - s->p);
		s->n++;
		p = nl + 1;
		continue;
bad:
		s->err_line = line;
		explain(s, p, (size_t)(nl - p) - ((nl > p && nl[-1] == '\r') ? 1 : 0));
		return;
	}
}

static void *parse_thread(void *arg)
{
	parse_slice(arg);
	return NULL;
}

/* Appends a parsed slice to in. 0 or -1 (out of memory). */
static int append(struct fpinput *in, struct slice *s, size_t *cap)
{
	unsigned nw = s->nw;

	if (!s->n)
		return 0; /* its arrays may be NULL */
	if (in->n + s->n > *cap) {
		size_t c = *cap ? *cap : 4096;
		uint64_t *w, *o;
		while (c < in->n + s->n)
			c *= 2;
		w = realloc(in->words, c * nw * sizeof(*w));
		if (!w)
			return -1;
		in->words = w;
		o = realloc(in->off, c * sizeof(*o));
		if (!o)
			return -1;
		in->off = o;
		*cap = c;
	}
	memcpy(in->words + in->n * nw, s->words, s->n * nw * sizeof(*s->words));
	memcpy(in->off + in->n, s->off, s->n * sizeof(*s->off));
	in->n += s->n;
	return 0;
}

/* Whether the input starts with bytes no text has (so it was meant to be a
 * binary file): a control character other than tab and line breaks, or the
 * first byte of our magic. */
static int looks_binary(const char *p, size_t len)
{
	size_t i;

	if (len && (uint8_t)p[0] == 0x89)
		return 1;
	for (i = 0; i < len && i < 8; i++)
		if ((uint8_t)p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return 1;
	return 0;
}

/* Width of the first line of buf (len bytes): 0 if it is not `HEX<TAB>`. */
static unsigned first_width(const char *buf, size_t len)
{
	const char *tab = memchr(buf, '\t', len < 40 ? len : 40);
	size_t d = tab ? (size_t)(tab - buf) : 0;

	return d == 8 || d == 16 || d == 32 ? (unsigned)d * 4 : 0;
}

/* Parses one block of whole lines (line numbers from first_line) into in. */
static int parse_block(struct fpinput *in, struct slice *sl, const char *buf, size_t len,
		       uint64_t file_off, uint64_t first_line, unsigned n_threads, size_t *cap)
{
	pthread_t th[MAX_SLICES];
	int started[MAX_SLICES];
	unsigned t, n_sl = n_threads < MAX_SLICES ? n_threads : MAX_SLICES;
	size_t at = 0, cut;
	int ret = EXIT_OK;

	if (len < ((size_t)1 << 20))
		n_sl = 1;
	for (t = 0; t < n_sl; t++) {
		cut = t + 1 == n_sl ? len : len / n_sl * (t + 1);
		if (cut < at)
			cut = at;
		while (cut < len && cut > 0 && buf[cut - 1] != '\n')
			cut++;
		sl[t].p = buf + at;
		sl[t].len = cut - at;
		sl[t].n = 0;
		sl[t].file_off = file_off + at;
		sl[t].bits = in->bits;
		sl[t].nw = in->bits == 128 ? 2 : 1;
		sl[t].digits = in->bits / 4;
		sl[t].ids_in_file = in->ids_in_file;
		at = cut;
	}
	for (t = 1; t < n_sl; t++)
		started[t] = !pthread_create(&th[t], NULL, parse_thread, &sl[t]);
	parse_slice(&sl[0]);
	for (t = 1; t < n_sl; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			parse_slice(&sl[t]);
	}
	for (t = 0; t < n_sl && ret == EXIT_OK; t++) {
		if (sl[t].oom || append(in, &sl[t], cap)) {
			cli_err("out of memory reading %s", display_name(in->path));
			ret = EXIT_FAIL;
		} else if (sl[t].err_line) {
			cli_err("%s:%llu: %s", display_name(in->path),
				(unsigned long long)(first_line + sl[t].err_line - 1), sl[t].err);
			ret = EXIT_FAIL;
		}
		first_line += sl[t].n; /* all its lines, as it had no error */
	}
	return ret;
}

/* Sets in->bits from the first line of the input's first bytes (len > 0).
 * EXIT_OK, or EXIT_FAIL after saying why the first line is no fingerprint. */
static int first_line(struct fpinput *in, const char *p, size_t len)
{
	struct slice s = { .bits = 64 };
	const char *nl;

	in->bits = first_width(p, len);
	if (in->bits)
		return EXIT_OK;
	nl = memchr(p, '\n', len);
	explain(&s, p, nl ? (size_t)(nl - p) : len);
	if (looks_binary(p, len))
		cli_err("%s: not a simhash fingerprint file (bad magic) nor the "
			"text form HEX<TAB>ID", display_name(in->path));
	else
		cli_err("%s:1: %s", display_name(in->path), s.err);
	return EXIT_FAIL;
}

/* Sizes the arrays once, from the fingerprints of the first block_len bytes
 * of a file_size-byte input: one allocation, no copies as they grow. */
static void size_arrays(struct fpinput *in, size_t block_len, uint64_t file_size, size_t *cap)
{
	size_t nw = in->bits == 128 ? 2 : 1;
	size_t want = (size_t)((double)in->n * file_size / (double)block_len * 1.02) + 1024;
	uint64_t *w = realloc(in->words, want * nw * 8);
	uint64_t *o = w ? realloc(in->off, want * 8) : NULL;

	if (w)
		in->words = w;
	cli_hugepage_hint(in->words, want * nw * 8);
	if (o) {
		cli_hugepage_hint(o, want * 8);
		in->off = o;
		*cap = want;
	}
}

static void slices_free(struct slice *sl)
{
	for (unsigned t = 0; sl && t < MAX_SLICES; t++) {
		free(sl[t].words);
		free(sl[t].off);
	}
	free(sl);
}

/* Reads text input from a stream (standard input, a pipe) by read(). In
 * memory (ids_in_file 0) the whole input stays in in->arena, where the ids
 * are found later; otherwise a window of BLOCK bytes moves over the input. */
static int read_text(struct fpinput *in, int fd, const char *head, size_t head_len,
		     unsigned n_threads, uint64_t file_size)
{
	struct slice *sl = calloc(MAX_SLICES, sizeof(*sl));
	struct sbuf win = { 0 }, *b = in->ids_in_file ? &win : &in->arena;
	size_t cap = 0, done = 0, cut;
	uint64_t file_off = 0;
	ssize_t r;
	int eof = 0, ret = EXIT_OK, sized = 0;

	if (!sl || sbuf_add(b, head, head_len))
		goto oom;
	while (!eof && ret == EXIT_OK) {
		if (b->cap - b->len < BLOCK / 2) {
			if (sbuf_grow(b, BLOCK))
				goto oom;
			cli_hugepage_hint(b->p, b->cap);
		}
		r = (ssize_t)cli_read_full(fd, b->p + b->len, b->cap - b->len, -1);
		if (r < 0) {
			cli_err("%s: %s", display_name(in->path), strerror(errno));
			ret = EXIT_FAIL;
			break;
		}
		eof = r == 0;
		b->len += (size_t)r;
		if (!in->bits && b->len > done && first_line(in, b->p, b->len))
			ret = EXIT_FAIL;
		cut = b->len;
		if (!eof)
			while (cut > done && b->p[cut - 1] != '\n')
				cut--;
		if (cut > done && ret == EXIT_OK) {
			/* every line before is a fingerprint, or parsing stopped */
			ret = parse_block(in, sl, b->p + done, cut - done, file_off, in->n + 1,
					  n_threads, &cap);
			if (!sized && file_size && ret == EXIT_OK)
				size_arrays(in, cut - done, file_size, &cap);
			sized = 1;
		}
		file_off += cut - done;
		if (in->ids_in_file) {
			memmove(b->p, b->p + cut, b->len - cut);
			b->len -= cut;
			done = 0;
		} else {
			done = cut;
		}
	}
	slices_free(sl);
	sbuf_free(&win);
	in->fps = in->words;
	in->text = in->arena.p;
	in->text_len = in->arena.len;
	return ret;
oom:
	slices_free(sl);
	sbuf_free(&win);
	cli_err("out of memory reading %s", display_name(in->path));
	return EXIT_FAIL;
}

/* Gives back the pages of the mapping below byte `to` (whole pages only):
 * they were parsed and their ids will be fetched by offset. */
static void map_release(struct fpinput *in, size_t to)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	to -= to % page;
	if (to > in->map_released)
		(void)madvise((char *)in->map + in->map_released, to - in->map_released,
			      MADV_DONTNEED); /* only a hint: the pages read back the same */
	if (to > in->map_released)
		in->map_released = to;
}

/* Reads a regular file of len > 0 bytes from a read-only mapping: the lines
 * are parsed where they lie, with no copy of the text and no fresh pages for
 * it. In memory (ids_in_file 0) the mapping stays for the ids; otherwise the
 * pages parsed are given back as the parse moves on, and unmapped at the end.
 * -2 if the file cannot be mapped (the caller reads it instead). */
static int read_mapped(struct fpinput *in, int fd, size_t len, unsigned n_threads)
{
	struct slice *sl;
	size_t cap = 0, done = 0, cut;
	const char *p, *nl;
	int ret;

	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -2;
	(void)madvise((void *)p, len, MADV_SEQUENTIAL); /* advice only */
	in->map = (void *)p;
	in->map_len = len;
	sl = calloc(MAX_SLICES, sizeof(*sl));
	if (!sl) {
		cli_err("out of memory reading %s", display_name(in->path));
		return EXIT_FAIL;
	}
	ret = first_line(in, p, len);
	while (done < len && ret == EXIT_OK) {
		cut = len - done > BLOCK ? done + BLOCK : len;
		nl = cut < len ? memchr(p + cut - 1, '\n', len - (cut - 1)) : NULL;
		if (cut < len)
			cut = nl ? (size_t)(nl - p) + 1 : len; /* whole lines */
		ret = parse_block(in, sl, p + done, cut - done, done, in->n + 1, n_threads, &cap);
		if (!done && ret == EXIT_OK)
			size_arrays(in, cut, len, &cap);
		if (in->ids_in_file)
			map_release(in, cut);
		done = cut;
	}
	slices_free(sl);
	in->fps = in->words;
	if (in->ids_in_file) {
		munmap(in->map, in->map_len);
		in->map = NULL;
	} else {
		in->text = p;
		in->text_len = len;
	}
	return ret;
}

static const uint8_t fp_magic[8] = { 0x89, 'S', 'H', 'F', '\r', '\n', 0x1a, '\n' };

static int read_binary(struct fpinput *in)
{
	simhash_error why;
	simhash_err err = simhash_fpfile_open(in->path, &in->file, &why);

	if (err) {
		cli_err("%s: %s", in->path, err == SIMHASH_EIO ? strerror(why.os_err) : why.msg);
		return EXIT_FAIL;
	}
	in->bits = simhash_fpfile_bits(in->file);
	in->n = (size_t)simhash_fpfile_count(in->file);
	snprintf(in->scheme, sizeof(in->scheme), "%s", simhash_fpfile_scheme(in->file));
	in->fps = simhash_fpfile_words(in->file);
	if (!in->fps && in->n) { /* a big-endian host: copy */
		unsigned nw = in->bits == 128 ? 2 : 1;
		simhash_fp fp;
		in->words = malloc(in->n * nw * sizeof(*in->words));
		if (!in->words) {
			cli_err("out of memory reading %s", in->path);
			return EXIT_FAIL;
		}
		for (size_t i = 0; i < in->n; i++) {
			simhash_fpfile_get(in->file, i, &fp);
			memcpy(in->words + i * nw, fp.w, nw * sizeof(uint64_t));
		}
		in->fps = in->words;
	}
	return EXIT_OK;
}

int fpinput_read(struct fpinput *in, const char *path, unsigned n_threads)
{
	char head[8];
	struct stat st;
	ssize_t got;
	int fd, ret;

	memset(in, 0, sizeof(*in));
	in->path = path;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		cli_err("%s: %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	got = (ssize_t)cli_read_full(fd, head, sizeof(head), -1);
	if (got < 0) {
		cli_err("%s: %s", display_name(path), strerror(errno));
		ret = EXIT_FAIL;
	} else if (got == 8 && !memcmp(head, fp_magic, 8) && fd != STDIN_FILENO) {
		ret = read_binary(in);
	} else if (got == 8 && !memcmp(head, fp_magic, 8)) {
		cli_err("%s: a binary fingerprint file must be named, not piped", STDIN_NAME);
		ret = EXIT_FAIL;
	} else {
		int reg = !fstat(fd, &st) && S_ISREG(st.st_mode);
		in->ids_in_file = fd != STDIN_FILENO && reg &&
				  (uint64_t)st.st_size > FPINPUT_IDS_IN_MEMORY;
		ret = -2;
		if (fd != STDIN_FILENO && reg && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX)
			ret = read_mapped(in, fd, (size_t)st.st_size, n_threads);
		if (ret == -2)
			ret = read_text(in, fd, head, (size_t)got, n_threads,
					reg ? (uint64_t)st.st_size : 0);
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int fpinput_fetch(struct fpinput *in, const uint64_t *idx, size_t n)
{
	size_t i, j, m;
	char *win = NULL;
	uint64_t win_off = 0;
	size_t win_len = 0, win_cap = (size_t)1 << 20;
	int fd, ret = EXIT_OK;

	if (!in->ids_in_file)
		return EXIT_OK;
	free(in->want);
	free(in->want_off);
	sbuf_free(&in->fetched_arena);
	in->want = malloc((n ? n : 1) * sizeof(*in->want));
	if (!in->want)
		goto oom;
	memcpy(in->want, idx, n * sizeof(*idx));
	qsort(in->want, n, sizeof(*in->want), cmp_u64);
	for (i = m = 0; i < n; i++)
		if (!m || in->want[m - 1] != in->want[i])
			in->want[m++] = in->want[i];
	in->n_want = m;
	in->want_off = malloc((m + 1) * sizeof(*in->want_off));
	win = malloc(win_cap);
	if (!in->want_off || !win)
		goto oom;
	fd = open(in->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_err("%s: %s", in->path, strerror(errno));
		free(win);
		return EXIT_FAIL;
	}
	/* ids in rising file order: read windows forward, never a byte twice */
	for (j = 0; j < m && ret == EXIT_OK; j++) {
		uint64_t at = in->off[in->want[j]];
		const char *p, *nl;

		for (;;) {
			if (at >= win_off && at < win_off + win_len) {
				p = win + (at - win_off);
				nl = memchr(p, '\n', win_len - (size_t)(at - win_off));
				if (nl || win_len < win_cap)
					break; /* the id ends here, or at the end of the file */
				if (at == win_off) { /* an id longer than the window */
					char *w = realloc(win, win_cap * 2);
					if (!w)
						goto oom_fd;
					win = w;
					win_cap *= 2;
				}
			}
			ssize_t r = pread(fd, win, win_cap, (off_t)at);
			if (r < 0) {
				cli_err("%s: %s", in->path, strerror(errno));
				ret = EXIT_FAIL;
				break;
			}
			win_off = at;
			win_len = (size_t)r;
			if (!r)
				break;
		}
		if (ret)
			break;
		p = win + (at - win_off);
		nl = memchr(p, '\n', win_len - (size_t)(at - win_off));
		{
			size_t len = nl ? (size_t)(nl - p) : win_len - (size_t)(at - win_off);
			if (len && p[len - 1] == '\r')
				len--;
			in->want_off[j] = in->fetched_arena.len;
			if (sbuf_add(&in->fetched_arena, p, len))
				goto oom_fd;
		}
	}
	in->want_off[m] = in->fetched_arena.len;
	close(fd);
	free(win);
	return ret;
oom_fd:
	close(fd);
oom:
	free(win);
	cli_err("out of memory reading ids of %s", display_name(in->path));
	return EXIT_FAIL;
}

void fpinput_id(const struct fpinput *in, uint64_t i, const char **id, size_t *len)
{
	if (in->file) {
		if (simhash_fpfile_id(in->file, i, id, len)) {
			*id = "";
			*len = 0;
		}
	} else if (!in->ids_in_file) {
		const char *p = in->text + in->off[i];
		const char *nl = memchr(p, '\n', in->text_len - (size_t)in->off[i]);
		size_t n = nl ? (size_t)(nl - p) : in->text_len - (size_t)in->off[i];
		if (n && p[n - 1] == '\r')
			n--;
		*id = p;
		*len = n;
	} else {
		size_t lo = 0, hi = in->n_want;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (in->want[mid] < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < in->n_want && in->want[lo] == i) {
			*id = in->fetched_arena.p ? in->fetched_arena.p + in->want_off[lo] : "";
			*len = (size_t)(in->want_off[lo + 1] - in->want_off[lo]);
		} else {
			*id = "";
			*len = 0;
		}
	}
}

void fpinput_free(struct fpinput *in)
{
	simhash_fpfile_close(in->file);
	free(in->words);
	free(in->off);
	sbuf_free(&in->arena);
	if (in->map)
		munmap(in->map, in->map_len);
	free(in->want);
	free(in->want_off);
	sbuf_free(&in->fetched_arena);
	memset(in, 0, sizeof(*in));
}
