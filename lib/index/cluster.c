/* cluster.c - clusters of near-duplicates: the connected components of the
 * graph whose edges are the pairs of a self-join, by union-find.
 *
 * Invariants: parent[i] <= i for every i (a union links the larger root under
 * the smaller), so every root is the smallest index of its component, which
 * is the representative: the first member in input order. Path halving keeps
 * finds near constant time. Memory: the caller's n-element output array is
 * the parent array; nothing else is allocated.
 */
#include "../common/internal.h"

static uint64_t find(uint64_t *parent, uint64_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

simhash_err simhash_clusters(size_t n, const simhash_pair *pairs, size_t n_pairs,
			     uint64_t *cluster)
{
	size_t i;

	if ((n && !cluster) || (n_pairs && !pairs))
		return SIMHASH_EINVAL;
	for (i = 0; i < n_pairs; i++)
		if (pairs[i].a >= n || pairs[i].b >= n)
			return SIMHASH_EINVAL;
	for (i = 0; i < n; i++)
		cluster[i] = i;
	for (i = 0; i < n_pairs; i++) {
		uint64_t ra = find(cluster, pairs[i].a), rb = find(cluster, pairs[i].b);
		if (ra < rb)
			cluster[rb] = ra;
		else if (rb < ra)
			cluster[ra] = rb;
	}
	for (i = 0; i < n; i++) /* parents come first: one pass flattens all */
		cluster[i] = cluster[cluster[i]];
	return SIMHASH_OK;
}
