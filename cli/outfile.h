/* outfile.h - where a command writes its output: standard output, or a file
 * that appears whole or not at all.
 *
 * A named file is a simhash_outfile (simhash.h): a temporary file in the same
 * directory, fsync'ed and renamed over the target by outfile_commit(), or a
 * character device or FIFO written in place. Until the commit,
 * any exit - an error, exit(), SIGINT, SIGTERM, SIGHUP - removes the temporary
 * file, so a failed run never leaves partial output behind.
 */
#ifndef CLI_OUTFILE_H
#define CLI_OUTFILE_H

#include <stddef.h>
#include "simhash.h"

struct outfile {
	int fd;                /* standard output's, or -1 */
	const char *path;      /* NULL: standard output */
	simhash_outfile *file; /* a named file, until committed or aborted */
};

/* Opens path, or standard output for NULL or "-". EXIT_OK, or EXIT_FAIL after
 * printing why. */
int outfile_open(struct outfile *o, const char *path);

/* Writes all n bytes. 0, or -1 after printing why. */
int outfile_write(struct outfile *o, const void *data, size_t n);

/* Makes the output final: flushes to disk and renames into place. EXIT_OK, or
 * EXIT_FAIL after printing why (and removing the temporary file). */
int outfile_commit(struct outfile *o);

/* Throws the output away (removes the temporary file). Accepts a closed o. */
void outfile_abort(struct outfile *o);

#endif /* CLI_OUTFILE_H */
