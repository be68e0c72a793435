/* hash_inline.h - sh_key() as a static inline, for the hot loops of lib/.
 *
 * sh_key() (XXH3 64-bit, seed 0) is computed once per feature occurrence by
 * the dedup, IDF and stop-word lookups. An out-of-line call into hash.c costs
 * a call and stops the compiler from specialising XXH3 for short inputs, so
 * code in hot loops includes this header and calls sh_key_inline(); it returns
 * exactly what sh_key() returns (both are XXH3_64bits, tests/hash checks it).
 *
 * Including it pulls in xxhash.h with XXH_INLINE_ALL: every XXH symbol becomes
 * static to the including file, so nothing is exported or duplicated at link.
 */
#ifndef SH_HASH_INLINE_H
#define SH_HASH_INLINE_H

#include <stddef.h>
#include <stdint.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

static inline __attribute__((always_inline)) uint64_t sh_key_inline(const void *data, size_t len)
{
	/* Features are mostly a few bytes long: take XXH3's own short-input
	 * path directly (XXH3_64bits() dispatches to exactly this for len <=
	 * 16), so it inlines into the loop instead of a call per feature. */
	if (len <= 16)
		return (uint64_t)XXH3_len_0to16_64b((const xxh_u8 *)data, len, XXH3_kSecret, 0);
	return (uint64_t)XXH3_64bits(data, len);
}

/* XXH3_64bits(data, len) for 1 <= len <= 3, without the length dispatch:
 * XXH3's own short-input function, called directly. */
static inline __attribute__((always_inline)) uint64_t sh_key_1to3(const uint8_t *data, size_t len)
{
	return (uint64_t)XXH3_len_1to3_64b(data, len, XXH3_kSecret, 0);
}

/* XXH3_64bits(data, len) for 4 <= len <= 8, likewise. */
static inline __attribute__((always_inline)) uint64_t sh_key_4to8(const uint8_t *data, size_t len)
{
	return (uint64_t)XXH3_len_4to8_64b(data, len, XXH3_kSecret, 0);
}

#endif
