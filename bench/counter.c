/* counter.c - the counter yardstick of the file speed benchmark: the
 * hash-and-accumulate step of SimHash alone, done the plain way, on the same
 * bytes and with the same I/O pattern as `simhash fingerprint` on files.
 *
 * For every byte position of a file it hashes the 3 bytes there with
 * XXH3-64 and adds +1 or -1 to each of 64 counters by the hash's bits (as
 * bit counts, 8 at a time through a table, the usual way); the signs of the
 * counters are the file's fingerprint. No normalization, no
 * segmentation, no weights: what is left of fingerprinting once the text
 * work is taken away. The engine's ratio to it says how close the whole
 * pipeline comes to its own inner loop done naively.
 *
 * Usage: counter FILE...
 * Prints the number of bytes and the XOR of the fingerprints, so the work
 * cannot be optimized away.
 */
#include <stdint.h>
#define XXH_INLINE_ALL /* xxHash's documented header-only mode: the hash inlines */
#include <xxhash.h>
#include "readall.h"

/* spread[x]: byte i of the result is bit i of x, so adding spread[byte]
 * counts 8 bits at once in 8 byte lanes (flushed before a lane can wrap). */
static uint64_t spread[256];

static void spread_init(void)
{
	for (int x = 0; x < 256; x++)
		for (int i = 0; i < 8; i++)
			if (x >> i & 1)
				spread[x] |= 1ull << (8 * i);
}

static uint64_t fingerprint(const unsigned char *s, size_t len)
{
	uint32_t ones[64] = { 0 };
	uint64_t lanes[8] = { 0 }, fp = 0;
	size_t n = len >= 3 ? len - 2 : 0, pending = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t h = XXH3_64bits(s + i, 3);

		for (int j = 0; j < 8; j++)
			lanes[j] += spread[h >> (8 * j) & 0xff];
		if (++pending == 255 || i + 1 == n) {
			for (int j = 0; j < 8; j++) {
				for (int b = 0; b < 8; b++)
					ones[8 * j + b] += lanes[j] >> (8 * b) & 0xff;
				lanes[j] = 0;
			}
			pending = 0;
		}
	}
	/* counter b is ones - (n - ones): positive when more than half are 1 */
	for (int b = 0; b < 64; b++)
		if (2 * (uint64_t)ones[b] > n)
			fp |= 1ull << b;
	return fp;
}

int main(int argc, char **argv)
{
	spread_init();
	return each_file(argc, argv, fingerprint);
}
