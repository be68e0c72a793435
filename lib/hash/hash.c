/* hash.c - the feature hash behind one function: sh_hash(algorithm, width),
 * and sh_key(), the 64-bit key of every lookup table in lib/.
 *
 * Width rules (part of the fingerprint contract, see simhash_hash in simhash.h):
 *   XXH3   64: XXH3_64bits, seed 0; 128: XXH3_128bits (out[0] low64, out[1]
 *          high64); 32: the low 32 bits of XXH3_64bits.
 *   FNV1, FNV1A: the variant of exactly the requested width (fnv.c).
 *   MD5    the last 4 or 8 digest bytes, or all 16, read big-endian, so the
 *          128-bit value is the digest as one big-endian number (out[1] holds
 *          digest bytes 0..7, out[0] bytes 8..15), as Python's int(hexdigest, 16).
 * Every result is fixed by the input bytes alone; nothing depends on the
 * platform's byte order. out[1] is 0 below 128 bits.
 */
#include <assert.h>
#include "../common/internal.h"
#include "hash_inline.h"

uint64_t sh_key(const void *data, size_t len)
{
	return sh_key_inline(data, len);
}

uint64_t sh_key_seed(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

static uint64_t load_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static void hash_xxh3(unsigned bits, const void *data, size_t len, uint64_t out[2])
{
	if (bits == 128) {
		XXH128_hash_t h = XXH3_128bits(data, len);

		out[0] = h.low64;
		out[1] = h.high64;
	} else if (bits == 64) {
		out[0] = XXH3_64bits(data, len);
	} else {
		out[0] = (uint32_t)XXH3_64bits(data, len);
	}
}

static void hash_fnv(int alt, unsigned bits, const void *data, size_t len, uint64_t out[2])
{
	if (bits == 128) {
		if (alt)
			sh_fnv1a_128(data, len, out);
		else
			sh_fnv1_128(data, len, out);
	} else if (bits == 64) {
		out[0] = alt ? sh_fnv1a_64(data, len) : sh_fnv1_64(data, len);
	} else {
		out[0] = alt ? sh_fnv1a_32(data, len) : sh_fnv1_32(data, len);
	}
}

static void hash_md5(unsigned bits, const void *data, size_t len, uint64_t out[2])
{
	uint8_t d[16];

	sh_md5(data, len, d);
	out[0] = load_be64(d + 8);
	if (bits == 128)
		out[1] = load_be64(d);
	else if (bits == 32)
		out[0] = (uint32_t)out[0];
}

void sh_hash(simhash_hash h, unsigned bits, const void *data, size_t len, uint64_t out[2])
{
	assert(bits == 32 || bits == 64 || bits == 128);
	out[0] = 0;
	out[1] = 0;
	switch (h) {
	case SIMHASH_HASH_XXH3: hash_xxh3(bits, data, len, out); break;
	case SIMHASH_HASH_FNV1: hash_fnv(0, bits, data, len, out); break;
	case SIMHASH_HASH_FNV1A: hash_fnv(1, bits, data, len, out); break;
	case SIMHASH_HASH_MD5: hash_md5(bits, data, len, out); break;
	default: assert(!"unknown hash"); break;
	}
}
