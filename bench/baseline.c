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
#include <xxhash.h>
#include "readall.h"

int main(int argc, char **argv)
{
	size_t cap = 1 << 20, len;
	unsigned char *buf = malloc(cap);
	unsigned long long total = 0;
	XXH64_hash_t acc = 0;
	int i;

	if (!buf)
		return 1;
	for (i = 1; i < argc; i++) {
		if (read_all(argv[i], &buf, &cap, &len))
			return 1;
		acc ^= XXH3_64bits(buf, len);
		total += len;
	}
	printf("%llu %016llx\n", total, (unsigned long long)acc);
	free(buf);
	return 0;
}
