/* simhash_pg.h - what the extension's files share: the on-disk form of the
 * `simhash` and `simhash_ball` types and their accessors.
 *
 * A `simhash` value is a varlena whose payload is the fingerprint's 8 or 16
 * bytes, most significant first: the same bytes as its bytea cast and its
 * binary send form, so comparison is memcmp and the width is the length.
 * A `simhash_ball` (the right side of the index operator `<@`) is a radius k
 * (int32) followed by such a payload.
 */
#ifndef SIMHASH_PG_H
#define SIMHASH_PG_H

#include "postgres.h"
#include "fmgr.h"
#include "simhash.h"

/* A fingerprint unpacked: w[0] bits 0..63, w[1] bits 64..127, as simhash_fp. */
typedef simhash_fp shpg_fp;

typedef struct shpg_ball {
	int32 vl_len_;
	int32 k;
	uint8 bytes[FLEXIBLE_ARRAY_MEMBER];
} shpg_ball;

/* Unpacks a `simhash` datum (raising an error on a corrupt width). */
void shpg_unpack(const struct varlena *v, shpg_fp *out);
/* A new `simhash` datum for fp (64 or 128 bits). */
struct varlena *shpg_pack(const shpg_fp *fp);
/* Unpacks a `simhash_ball` datum. */
void shpg_ball_unpack(const shpg_ball *b, shpg_fp *fp, int *k);
/* The largest k of a ball or simhash_within, whatever the widths. */
#define SHPG_MAX_K 128
/* Raises an error unless 0 <= k <= SHPG_MAX_K. */
void shpg_check_k(int64 k);
/* Raises an error if a and b differ in width (distance, similarity). */
void shpg_check_widths(const shpg_fp *a, const shpg_fp *b);

static inline unsigned shpg_distance(const shpg_fp *a, const shpg_fp *b)
{
	return (unsigned)(__builtin_popcountll(a->w[0] ^ b->w[0]) +
			  __builtin_popcountll(a->w[1] ^ b->w[1]));
}

#define PG_GETARG_SIMHASH(n, fp) shpg_unpack((struct varlena *)PG_GETARG_VARLENA_PP(n), (fp))

#endif /* SIMHASH_PG_H */
