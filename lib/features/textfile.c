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
#include <stdlib.h>
#include <string.h>
#include "textfile.h"

simhash_err sh_textfile_read(sh_textfile *tf, const char *path, simhash_error *e)
{
	size_t cap = 0;
	simhash_err err;

	memset(tf, 0, sizeof *tf);
	err = simhash_read_file(path, &tf->data, &tf->len, &cap, e);
	if (err) {
		free(tf->data);
		tf->data = NULL;
		tf->len = 0;
		if (err != SIMHASH_ENOMEM && err != SIMHASH_EIO) {
			err = SIMHASH_EIO;
			if (e)
				e->code = err;
		}
		return err;
	}
	tf->data[tf->len] = '\0'; /* simhash_read_file leaves room for it */
	if (tf->len >= 3 && memcmp(tf->data, "\xef\xbb\xbf", 3) == 0)
		tf->pos = 3;
	return SIMHASH_OK;
}

simhash_err sh_textfile_load(sh_textfile *tf, const char *path, const void *out,
			     simhash_error *e)
{
	if (!path || !out)
		return sh_error_code(e, SIMHASH_EINVAL);
	return sh_textfile_read(tf, path, e);
}

simhash_err sh_textfile_fail(simhash_err err, size_t line, const char *what, simhash_error *e)
{
	if (err == SIMHASH_OK || !e)
		return err;
	if (err == SIMHASH_ECORRUPT && line)
		sh_error_set(e, err, "line %zu: %s", line, what);
	else
		sh_error_code(e, err);
	e->line = err == SIMHASH_ECORRUPT ? line : 0;
	return err;
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
