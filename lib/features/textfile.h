/* textfile.h - line-by-line reading of the small text files lib/ loads
 * (IDF tables, stop-word lists). Private to lib/features. */
#ifndef SH_TEXTFILE_H
#define SH_TEXTFILE_H

#include <stddef.h>
#include "../common/internal.h"

typedef struct sh_textfile {
	char *data;  /* the whole file, then one NUL */
	size_t len;  /* bytes of the file */
	size_t pos;  /* where the next line starts */
	size_t line; /* 1-based number of the line last returned */
} sh_textfile;

/* Reads the whole file at path. SIMHASH_EIO if it cannot be opened or read
 * (missing, a directory, no permission; e->os_err), SIMHASH_ENOMEM. On
 * success the caller frees with sh_textfile_free(). */
simhash_err sh_textfile_read(sh_textfile *tf, const char *path, simhash_error *e);
/* The start of a table loader (simhash_idf_load, simhash_stopwords_load):
 * path and out checked, the file read; e (may be NULL) filled on failure. */
simhash_err sh_textfile_load(sh_textfile *tf, const char *path, const void *out,
			     simhash_error *e);
/* The end of a table loader: e filled for err, at line (1-based; 0: none)
 * with msg "line N: what" for SIMHASH_ECORRUPT. Returns err. */
simhash_err sh_textfile_fail(simhash_err err, size_t line, const char *what, simhash_error *e);

/* The next line without its '\n' and one '\r' before it, NUL-terminated in
 * place, in *line and *len; a UTF-8 byte order mark opening the file is
 * dropped. Returns 0 after the last line. A final line without '\n' counts;
 * a final '\n' does not start another line. */
int sh_textfile_next(sh_textfile *tf, char **line, size_t *len);

/* Number of lines sh_textfile_next() will return in all (an upper bound used
 * to size tables before loading). */
size_t sh_textfile_count_lines(const sh_textfile *tf);

void sh_textfile_free(sh_textfile *tf);

#endif
