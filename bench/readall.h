/* readall.h - the file reading of the in-run baselines (baseline.c,
 * counter.c): the I/O pattern of `simhash fingerprint` on files (open,
 * read() into one buffer reused across files and grown by doubling, close). */
#ifndef BENCH_READALL_H
#define BENCH_READALL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Reads path whole into *buf (capacity *cap, grown as needed); sets *len.
 * Returns 0, or -1 after printing why. */
static int read_all(const char *path, unsigned char **buf, size_t *cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	if (fd < 0) {
		perror(path);
		return -1;
	}
	*len = 0;
	for (;;) {
		if (*len == *cap) {
			unsigned char *nb = realloc(*buf, *cap * 2);

			if (!nb) {
				close(fd);
				fprintf(stderr, "%s: out of memory\n", path);
				return -1;
			}
			*buf = nb;
			*cap *= 2;
		}
		n = read(fd, *buf + *len, *cap - *len);
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		perror(path);
		return -1;
	}
	return 0;
}

#endif
