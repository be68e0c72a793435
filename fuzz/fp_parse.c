/* fp_parse.c - fuzz target for simhash_fp_parse and simhash_fp_format.
 *
 * The whole input is one candidate hex string. The target aborts unless:
 *  1. parsing succeeds exactly when the input is 8, 16 or 32 hex digits of
 *     either case (an oracle written here, independent of lib/), and a failed
 *     parse leaves *out untouched;
 *  2. a parsed fingerprint has 4 bits per digit, no bits above its width, and
 *     formats back to the input up to case (the round trip);
 *  3. it is at distance 0 from itself and at distance `popcount` from the
 *     all-zero fingerprint of its width. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simhash.h"

#define FAIL(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "fp_parse: invariant broken at %s:%d: ", __FILE__,    \
			__LINE__);                                                    \
		fprintf(stderr, __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                  \
		abort();                                                              \
	} while (0)

static int is_fingerprint_text(const uint8_t *s, size_t len)
{
	if (len != 8 && len != 16 && len != 32)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit(s[i]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int valid = is_fingerprint_text(data, size);
	simhash_fp fp, untouched, zero = {{0, 0}, 0};
	char hex[SIMHASH_HEX_MAX];
	unsigned ones;
	simhash_err err;
	size_t n;

	memset(&fp, 0x5A, sizeof fp);
	memset(&untouched, 0x5A, sizeof untouched);
	err = simhash_fp_parse((const char *)data, size, &fp);
	if (!valid) {
		if (err != SIMHASH_ECORRUPT)
			FAIL("%zu bytes that are not a fingerprint gave %s", size,
			     simhash_strerror(err));
		if (memcmp(&fp, &untouched, sizeof fp) != 0)
			FAIL("*out written on a failed parse");
		return 0;
	}
	if (err != SIMHASH_OK)
		FAIL("\"%.*s\" rejected: %s", (int)size, (const char *)data, simhash_strerror(err));
	if (fp.bits != size * 4)
		FAIL("%zu digits gave %u bits", size, fp.bits);
	if ((fp.bits == 32 && (fp.w[0] >> 32 || fp.w[1])) || (fp.bits == 64 && fp.w[1]))
		FAIL("bits above the width are set");

	n = simhash_fp_format(&fp, hex);
	if (n != size || strlen(hex) != size)
		FAIL("formatted %zu digits from %zu", n, size);
	for (size_t i = 0; i < size; i++) {
		if (tolower(data[i]) != hex[i])
			FAIL("round trip: \"%.*s\" formatted as \"%s\"", (int)size,
			     (const char *)data, hex);
	}

	if (simhash_hamming(&fp, &fp) != 0 || simhash_similarity(&fp, &fp) != 1.0)
		FAIL("not at distance 0 from itself");
	zero.bits = fp.bits;
	ones = (unsigned)(__builtin_popcountll(fp.w[0]) + __builtin_popcountll(fp.w[1]));
	if (simhash_hamming(&fp, &zero) != ones)
		FAIL("distance to zero %u, popcount %u", simhash_hamming(&fp, &zero), ones);
	zero.bits = fp.bits == 64 ? 32 : 64;
	if (simhash_hamming(&fp, &zero) != SIMHASH_DIST_INVALID ||
	    simhash_similarity(&fp, &zero) != -1.0)
		FAIL("widths %u and %u compared", fp.bits, zero.bits);
	return 0;
}
