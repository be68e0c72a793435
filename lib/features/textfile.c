/* textfile.c - reads a whole text file and hands it out line by line.
 *
 * Workload: IDF tables (jieba's idf.txt: 270k lines, 6 MB) and stop-word
 * lists, loaded once per process. Reading the file in one piece and cutting
 * lines in place costs one allocation and no per-line copies, which keeps
 * loading the jieba table in tens of milliseconds.
 *
 * Invariants: data[len] == '\0'; pos <= len; every line returned is
 * NUL-terminated in place (its '\n' or '\r' is overwritten), so callers may use
 * C string functions on the tail of a line, though lines may hold NUL bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "textfile.h"

/* Grows *buf to hold at least need bytes. */
static simhash_err grow(char **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	char *p;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return SIMHASH_ENOMEM;
		n *= 2;
	}
	p = realloc(*buf, n);
	if (!p)
		return SIMHASH_ENOMEM;
	*buf = p;
	*cap = n;
	return SIMHASH_OK;
}

/* Reads fd to its end; the size from fstat is only a hint (pipes, /proc). */
static simhash_err read_all(int fd, char **out, size_t *out_len)
{
	struct stat st;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	simhash_err err;
	ssize_t n;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX - 2)
		cap = (size_t)st.st_size + 2;
	err = grow(&buf, &cap, cap ? cap : 4096);
	if (err)
		return err;
	for (;;) {
		if (len + 1 >= cap && (err = grow(&buf, &cap, len + 2)))
			goto out_free;
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = SIMHASH_EIO;
			goto out_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return SIMHASH_OK;
out_free:
	free(buf);
	return err;
}

simhash_err sh_textfile_read(sh_textfile *tf, const char *path)
{
	simhash_err err;
	int fd;

	memset(tf, 0, sizeof *tf);
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return SIMHASH_EIO;
	err = read_all(fd, &tf->data, &tf->len);
	close(fd);
	if (err)
		return err;
	if (tf->len >= 3 && memcmp(tf->data, "\xef\xbb\xbf", 3) == 0)
		tf->pos = 3;
	return SIMHASH_OK;
}

int sh_textfile_next(sh_textfile *tf, char **line, size_t *len)
{
	char *start = tf->data + tf->pos;
	char *nl;
	size_t n;

	if (tf->pos >= tf->len)
		return 0;
	nl = memchr(start, '\n', tf->len - tf->pos);
	n = nl ? (size_t)(nl - start) : tf->len - tf->pos;
	tf->pos += n + (nl != NULL);
	tf->line++;
	if (n > 0 && start[n - 1] == '\r')
		n--;
	start[n] = '\0';
	*line = start;
	*len = n;
	return 1;
}

size_t sh_textfile_count_lines(const sh_textfile *tf)
{
	const char *p = tf->data + tf->pos, *end = tf->data + tf->len;
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

void sh_textfile_free(sh_textfile *tf)
{
	free(tf->data);
	memset(tf, 0, sizeof *tf);
}
