/* vote.c - turning the vote counters into fingerprint bits (see vote.h). */
#include "vote.h"

static uint64_t lane_bits(const sh_lane *L, const uint64_t (*pend)[2], unsigned n_pend,
			  unsigned col, uint64_t n)
{
	uint64_t out = 0;
	unsigned top = 48;

	while (top > 0 && L->plane[top - 1] == 0)
		top--;
	for (unsigned j = 0; j < 64; j++) {
		uint64_t c = (L->ones >> j & 1) + 2 * (L->twos >> j & 1) + 4 * (L->fours >> j & 1);
		for (unsigned k = 0; k < top; k++)
			c += (uint64_t)(L->plane[k] >> j & 1) << (k + 3);
		for (unsigned p = 0; p < n_pend; p++)
			c += pend[p][col] >> j & 1;
		/* strictly more than half of the n votes */
		if (2 * c > n)
			out |= 1ull << j;
	}
	return out;
}

/* Adds the word x at level k of the lane's counters (ones, twos, fours,
 * then plane[k - 3]), carrying upwards. */
static void lane_add_level(sh_lane *L, uint64_t x, unsigned k)
{
	while (x) {
		uint64_t *p = k == 0 ? &L->ones : k == 1 ? &L->twos : k == 2 ? &L->fours
									    : &L->plane[k - 3];
		uint64_t c = *p & x;
		*p ^= x;
		x = c;
		k++;
	}
}

/* Folds the vector planes of vote_avx512.c into lane 0. */
static void fold_vplanes(sh_vote *v)
{
	for (unsigned k = 0; k < v->vtop; k++)
		for (unsigned lane = 0; lane < 8; lane++)
			lane_add_level(&v->lane[0], v->vplane[k][lane], k);
	v->vtop = 0;
}

static uint64_t lane_count(const sh_lane *L, const uint64_t (*pend)[2], unsigned n_pend,
			   unsigned col, unsigned j, unsigned top)
{
	uint64_t c = (L->ones >> j & 1) + 2 * (L->twos >> j & 1) + 4 * (L->fours >> j & 1);

	for (unsigned k = 0; k < top; k++)
		c += (uint64_t)(L->plane[k] >> j & 1) << (k + 3);
	for (unsigned p = 0; p < n_pend; p++)
		c += pend[p][col] >> j & 1;
	return c;
}

uint64_t sh_vote_counts(sh_vote *v, unsigned bits, uint64_t *counts)
{
	unsigned top[2] = {48, 48};

	fold_vplanes(v);
	for (unsigned l = 0; l < 2; l++)
		while (top[l] > 0 && v->lane[l].plane[top[l] - 1] == 0)
			top[l]--;
	for (unsigned j = 0; j < bits; j++)
		counts[j] = lane_count(&v->lane[j >> 6], (const uint64_t(*)[2])v->pend, v->n_pend,
				       j >> 6, j & 63, top[j >> 6]);
	return v->n + v->n_pend;
}

void sh_vote_finish(sh_vote *v, unsigned bits, simhash_fp *out)
{
	uint64_t n = v->n + v->n_pend;

	fold_vplanes(v);

	out->bits = bits;
	out->w[0] = lane_bits(&v->lane[0], (const uint64_t(*)[2])v->pend, v->n_pend, 0, n);
	out->w[1] = v->lanes == 2
			    ? lane_bits(&v->lane[1], (const uint64_t(*)[2])v->pend, v->n_pend, 1, n)
			    : 0;
	if (bits == 32)
		out->w[0] &= 0xffffffffu;
}

void sh_wvote_init(sh_wvote *v, unsigned bits)
{
	memset(v, 0, sizeof *v);
	v->bits = bits;
}

void sh_wvote_add(sh_wvote *v, const uint64_t h[2], double w)
{
	for (unsigned j = 0; j < v->bits; j++)
		v->acc[j] += (h[j >> 6] >> (j & 63) & 1) ? w : -w;
}

void sh_wvote_finish(const sh_wvote *v, simhash_fp *out)
{
	out->bits = v->bits;
	out->w[0] = out->w[1] = 0;
	for (unsigned j = 0; j < v->bits; j++)
		if (v->acc[j] > 0)
			out->w[j >> 6] |= 1ull << (j & 63);
}
