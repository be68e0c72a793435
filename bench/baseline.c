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

static uint64_t xxh3(const unsigned char *s, size_t len)
{
	return XXH3_64bits(s, len);
}

int main(int argc, char **argv)
{
	return each_file(argc, argv, xxh3);
}
