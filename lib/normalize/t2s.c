/* t2s.c - traditional -> simplified Chinese, one character at a time.
 *
 * OpenCC converts phrase by phrase at about 10 MB/s; a fingerprint needs the
 * same answer for the same character wherever it stands, and much more speed.
 * The table (about 4,100 characters) is generated at build time by
 * tools/gen_t2s.c from OpenCC's own t2s configuration: each ideograph
 * converted alone. A lookup is a bitmap test, then a binary search for the
 * few characters that map. Characters OpenCC changes only inside phrases keep
 * their form.
 */
#include <assert.h>
#include <stdlib.h>
#include "../common/internal.h"
#include "t2s_table.h"

#define N_PAIRS (sizeof sh_t2s_pairs / sizeof sh_t2s_pairs[0])

struct sh_t2s {
	uint64_t bitmap[0x30000 / 64]; /* code points below U+30000 that map */
};

simhash_err sh_t2s_new(sh_t2s **out)
{
	sh_t2s *t = calloc(1, sizeof *t);

	if (!t)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; i < N_PAIRS; i++) {
		uint32_t c = sh_t2s_pairs[i][0];
		/* the generator writes them sorted; lookups rely on it */
		assert(i == 0 || sh_t2s_pairs[i - 1][0] < c);
		t->bitmap[c >> 6] |= 1ull << (c & 63);
	}
	*out = t;
	return SIMHASH_OK;
}

void sh_t2s_free(sh_t2s *t)
{
	free(t);
}

uint32_t sh_t2s_map(const sh_t2s *t, uint32_t cp)
{
	size_t lo = 0, hi = N_PAIRS;

	if (cp >= 0x30000 || !(t->bitmap[cp >> 6] >> (cp & 63) & 1))
		return cp;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sh_t2s_pairs[mid][0] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sh_t2s_pairs[lo][1];
}
