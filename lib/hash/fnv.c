/* fnv.c - FNV-1 and FNV-1a at 32, 64 and 128 bits.
 *
 * Parameters are the published ones (Fowler, Noll, Vo; draft-eastlake-fnv):
 *   32:  prime 0x01000193, offset basis 0x811c9dc5
 *   64:  prime 0x00000100000001b3, offset basis 0xcbf29ce484222325
 *   128: prime 2^88 + 2^8 + 0x3b, offset basis 0x6c62272e07bb014262b821756295c58d
 * FNV-1 multiplies then xors each byte; FNV-1a xors then multiplies.
 * Arithmetic is modulo 2^width, so the results do not depend on the platform.
 * The 128-bit multiply uses the prime's shape: h * (2^88 + 0x13b) is
 * (h << 88) + h * 0x13b, two cheap operations instead of a full product.
 */
#include "../common/internal.h"

#define FNV32_PRIME 0x01000193u
#define FNV32_BASIS 0x811c9dc5u
#define FNV64_PRIME 0x00000100000001b3ull
#define FNV64_BASIS 0xcbf29ce484222325ull
#define FNV128_PRIME_LOW 0x13bu /* the prime less its 2^88 term */
#define FNV128_BASIS_HI 0x6c62272e07bb0142ull
#define FNV128_BASIS_LO 0x62b821756295c58dull

typedef unsigned __int128 u128;

uint32_t sh_fnv1_32(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t h = FNV32_BASIS;

	for (size_t i = 0; i < len; i++)
		h = (h * FNV32_PRIME) ^ p[i];
	return h;
}

uint32_t sh_fnv1a_32(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t h = FNV32_BASIS;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV32_PRIME;
	return h;
}

uint64_t sh_fnv1_64(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = FNV64_BASIS;

	for (size_t i = 0; i < len; i++)
		h = (h * FNV64_PRIME) ^ p[i];
	return h;
}

uint64_t sh_fnv1a_64(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = FNV64_BASIS;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV64_PRIME;
	return h;
}

static inline u128 fnv128_mul(u128 h)
{
	return (h << 88) + h * FNV128_PRIME_LOW;
}

static inline u128 fnv128_basis(void)
{
	return ((u128)FNV128_BASIS_HI << 64) | FNV128_BASIS_LO;
}

static inline void fnv128_out(u128 h, uint64_t out[2])
{
	out[0] = (uint64_t)h;
	out[1] = (uint64_t)(h >> 64);
}

void sh_fnv1_128(const void *data, size_t len, uint64_t out[2])
{
	const uint8_t *p = data;
	u128 h = fnv128_basis();

	for (size_t i = 0; i < len; i++)
		h = fnv128_mul(h) ^ p[i];
	fnv128_out(h, out);
}

void sh_fnv1a_128(const void *data, size_t len, uint64_t out[2])
{
	const uint8_t *p = data;
	u128 h = fnv128_basis();

	for (size_t i = 0; i < len; i++)
		h = fnv128_mul(h ^ p[i]);
	fnv128_out(h, out);
}
