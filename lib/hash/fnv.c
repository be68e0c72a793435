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

/* FNV-1 (a = 0) or FNV-1a (a = 1) of len bytes at width 32 or 64: the
 * product taken modulo 2^64, then kept to the width by mask. Inlined with
 * constant arguments, each caller gets its own loop. */
static inline uint64_t fnv_word(const void *data, size_t len, uint64_t h, uint64_t prime,
				uint64_t mask, int a)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		h = a ? ((h ^ p[i]) * prime) & mask : ((h * prime) & mask) ^ p[i];
	return h;
}

uint32_t sh_fnv1_32(const void *data, size_t len)
{
	return (uint32_t)fnv_word(data, len, FNV32_BASIS, FNV32_PRIME, UINT32_MAX, 0);
}

uint32_t sh_fnv1a_32(const void *data, size_t len)
{
	return (uint32_t)fnv_word(data, len, FNV32_BASIS, FNV32_PRIME, UINT32_MAX, 1);
}

uint64_t sh_fnv1_64(const void *data, size_t len)
{
	return fnv_word(data, len, FNV64_BASIS, FNV64_PRIME, UINT64_MAX, 0);
}

uint64_t sh_fnv1a_64(const void *data, size_t len)
{
	return fnv_word(data, len, FNV64_BASIS, FNV64_PRIME, UINT64_MAX, 1);
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

static inline void fnv128(const void *data, size_t len, uint64_t out[2], int a)
{
	const uint8_t *p = data;
	u128 h = fnv128_basis();

	for (size_t i = 0; i < len; i++)
		h = a ? fnv128_mul(h ^ p[i]) : fnv128_mul(h) ^ p[i];
	fnv128_out(h, out);
}

void sh_fnv1_128(const void *data, size_t len, uint64_t out[2])
{
	fnv128(data, len, out, 0);
}

void sh_fnv1a_128(const void *data, size_t len, uint64_t out[2])
{
	fnv128(data, len, out, 1);
}
