/* baseline.c - the in-run baseline of the file speed benchmark: read each FILE
 * whole and XXH3-64 its bytes, with the I/O pattern of `simhash fingerprint`
 * on files (open, read() into one buffer reused across files, close).
 *
 * Usage: baseline FILE...
 * Prints the number of bytes and the XOR of the hashes, so the work cannot be
 * optimized away. speed.sh times it with timeit, exactly as it times simhash:
 * the ratio simhash / baseline says how far fingerprinting is from the cost of
 * merely reading and hashing the text once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <xxhash.h>

int main(int argc, char **argv)
{
	size_t cap = 1 << 20, len;
	char *buf = malloc(cap);
	unsigned long long total = 0;
	XXH64_hash_t acc = 0;
	ssize_t n;
	int i, fd;

	if (!buf)
		return 1;
	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		len = 0;
		for (;;) {
			if (len == cap) {
				cap *= 2;
				buf = realloc(buf, cap);
				if (!buf)
					return 1;
			}
			n = read(fd, buf + len, cap - len);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(fd);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		acc ^= XXH3_64bits(buf, len);
		total += len;
	}
	printf("%llu %016llx\n", total, (unsigned long long)acc);
	free(buf);
	return 0;
}
