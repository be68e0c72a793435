/* readall.h - the file reading of the in-run baselines (baseline.c,
 * counter.c): the I/O pattern of `simhash fingerprint` on files (open,
 * read() into one buffer reused across files and grown by doubling, close),
 * and their one main loop (each_file). */
#ifndef BENCH_READALL_H
#define BENCH_READALL_H

#include <fcntl.h>
#include <stdint.h>
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

/* Reads each file of argv[1..argc) and hashes it whole with fn; prints the
 * total bytes and the XOR of the hashes (so no work is optimised away).
 * Returns the exit status. */
static int each_file(int argc, char **argv, uint64_t (*fn)(const unsigned char *, size_t))
{
	size_t cap = 1 << 20, len;
	unsigned char *buf = malloc(cap);
	unsigned long long total = 0;
	uint64_t acc = 0;

	if (!buf)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (read_all(argv[i], &buf, &cap, &len)) {
			free(buf);
			return 1;
		}
		acc ^= fn(buf, len);
		total += len;
	}
	printf("%llu %016llx\n", total, (unsigned long long)acc);
	free(buf);
	return 0;
}

#endif
