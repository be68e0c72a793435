/* near_join.c - every near-duplicate pair of a set of sketches, exactly
 * (simhash_near_join(); the decision is simhash_near_decide(), near.c).
 *
 * Workload: `simhash dedup` with no -k: up to millions of short texts of a
 * few dozen keys each (lines, titles, messages) with many exact repeats
 * (boilerplate), or thousands of long documents of thousands of keys; few
 * pairs per text. Exact duplicates are collapsed first, so a line repeated
 * 100,000 times costs 100,000 hashes, not 5 billion comparisons.
 *
 * Prefix filtering (Chaudhuri et al. 2006; Bayardo et al. 2007, "all-pairs"):
 *  1. Every distinct key of the first members gets a rank: ascending
 *     document frequency (ties in table order), so rare keys come first.
 *     Each sketch becomes its ranks, ascending (one counting pass by rank,
 *     so no per-sketch sort).
 *  2. Sketches are visited by (kind, number of keys, index). When x is
 *     visited, every y visited before it has |y| <= |x| (same kind).
 *  3. Let x and y, y visited first (|y| <= |x|), share the set S with
 *     J >= T, and w be the lowest shared rank. Every rank of x before w is
 *     unshared and S lies at or after w, so w is among x's first
 *     |x| - |S| + 1 ranks, and among y's first |y| - |S| + 1. Now
 *     |S| >= T |x or y| >= T |x|, and |S| >= T (|x| + |y|) / (1 + T) >=
 *     2T / (1 + T) |y|. So w is in x's probing prefix, its first
 *     |x| - ceil(T |x|) + 1 ranks, and in y's indexing prefix, its first
 *     |y| - ceil(2T / (1 + T) |y|) + 1: x looks up its probing prefix in the
 *     inverted lists of the indexing prefixes of the sketches visited before
 *     it, and meets every y it forms a near pair with (the all-pairs
 *     algorithm of Bayardo et al. 2007). J <= |y| / |x|, so a y with
 *     |y| < T |x| is dropped unverified, as is one the positional filter
 *     rules out (probe()).
 *  4. A met y is verified at most once per x (stamp[y] = x), by merging the two rank
 *     lists; ranks and keys correspond one to one, so the shared count is
 *     that of simhash_near_decide(), and so is the test (sh_near_accept():
 *     J >= T, which the filters above assume, and the short texts' budget).
 * The order of step 1's ties changes only the work, never the pairs.
 *
 * Memory: 8 bytes per key of the first members (their ranks, and the
 * inverted lists of ranks and prefixes), a table of 16 bytes per distinct
 * key at most half full, 4 words per sketch, and the result.
 */
#include <stdlib.h>
#include <string.h>
#include "../common/internal.h"


struct slot {
	uint64_t key;
	uint32_t df;   /* first members holding the key; 0: empty slot */
	uint32_t rank;
};

struct table {
	struct slot *s;
	size_t mask, used;
};

static struct slot *find(struct table *t, uint64_t key)
{
	size_t j = (size_t)sh_mix64(key) & t->mask;

	while (t->s[j].df && t->s[j].key != key)
		j = (j + 1) & t->mask;
	return &t->s[j];
}

static simhash_err grow(struct table *t)
{
	struct table n = { NULL, t->mask ? 2 * t->mask + 1 : 4095, t->used };

	n.s = calloc(n.mask + 1, sizeof *n.s);
	if (!n.s)
		return SIMHASH_ENOMEM;
	for (size_t i = 0; t->s && i <= t->mask; i++)
		if (t->s[i].df)
			*find(&n, t->s[i].key) = t->s[i];
	free(t->s);
	*t = n;
	return SIMHASH_OK;
}

static simhash_err count_key(struct table *t, uint64_t key)
{
	struct slot *s;

	if (2 * (t->used + 1) > t->mask + 1) {
		simhash_err err = grow(t);
		if (err)
			return err;
	}
	s = find(t, key);
	if (!s->df) {
		s->key = key;
		t->used++;
	}
	s->df++;
	return SIMHASH_OK;
}

/* ---- (key, index) entries sorted by key */

static int by_key_i(const void *a, const void *b)
{
	const sh_near_ent *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Stable scatter of from[0..n) into to[] by the top `bits` key bits
 * (start: 2^bits + 1 counters). */
static void scatter(const sh_near_ent *from, sh_near_ent *to, size_t n, unsigned bits,
		    uint32_t *start)
{
	size_t digits = (size_t)1 << bits;

	memset(start, 0, (digits + 1) * sizeof *start);
	for (size_t i = 0; i < n; i++)
		start[(from[i].key >> (64 - bits)) + 1]++;
	for (size_t d = 1; d <= digits; d++)
		start[d] += start[d - 1];
	for (size_t i = 0; i < n; i++)
		to[start[from[i].key >> (64 - bits)]++] = from[i];
}

/* One insertion pass over e[0..n), which the scatter left in order of the
 * keys' top bits, so an entry moves only within its digit (a few places:
 * the keys are uniform). Stable: i stays ascending within a key. 0 once the
 * moves pass 8 n + 1024 (many keys sharing their top bits, by chance or by
 * design): the caller then sorts by qsort on (key, i), the same order in
 * n log n. */
static int insert_pass(sh_near_ent *e, size_t n)
{
	size_t moved = 0, budget = 8 * n + 1024;

	for (size_t a = 1; a < n; a++) {
		sh_near_ent v = e[a];
		size_t b = a;
		while (b > 0 && e[b - 1].key > v.key) {
			e[b] = e[b - 1];
			b--;
		}
		e[b] = v;
		moved += a - b;
		if (moved > budget)
			return 0;
	}
	return 1;
}

/* The scratch for up to n entries: the scatter takes about n / 2 digits,
 * at most 2^16, so its counters stay in cache. */
static unsigned sort_bits(size_t n, unsigned most)
{
	unsigned bits = 8;

	while (bits < most && ((size_t)1 << bits) < n / 2)
		bits++;
	return bits;
}

simhash_err sh_near_sort_init(sh_near_sort *s, size_t n)
{
	s->bits = sort_bits(n, 16);
	s->tmp = sh_alloc_big((n ? n : 1) * sizeof *s->tmp);
	s->start = malloc((((size_t)1 << s->bits) + 1) * sizeof *s->start);
	if (s->tmp && s->start)
		return SIMHASH_OK;
	sh_near_sort_free(s);
	return SIMHASH_ENOMEM;
}

void sh_near_sort_free(sh_near_sort *s)
{
	free(s->tmp);
	free(s->start);
	memset(s, 0, sizeof *s);
}

/* The entries sorted by key, ascending i within a key: a stable scatter on
 * the top bits (about n / 2 digits: the counters of a short run are
 * cleared and summed in full) into the scratch, then one insertion pass
 * there (or qsort, see insert_pass()). */
sh_near_ent *sh_near_sort_into(sh_near_sort *s, sh_near_ent *e, size_t n)
{
	scatter(e, s->tmp, n, sort_bits(n, s->bits), s->start);
	if (!insert_pass(s->tmp, n))
		qsort(s->tmp, n, sizeof *s->tmp, by_key_i);
	return s->tmp;
}

/* ---- exact duplicates */

#define SH_COLLAPSE_AHEAD 16 /* entries: how far sh_near_collapse() fetches ahead */

static int same_sketch(const simhash_sketch *a, const simhash_sketch *b)
{
	return a->kind == b->kind && a->n_keys == b->n_keys &&
	       (a->n_keys == 0 || !memcmp(a->keys, b->keys, a->n_keys * sizeof *a->keys));
}

/* same[i]: the first sketch identical to i. Sorted by (hash, index), each
 * run of one hash is compared member by member with its distinct firsts. */
simhash_err sh_near_collapse(const simhash_sketch *d, size_t n, uint64_t *same)
{
	sh_near_ent *h;
	sh_near_sort sort = { 0 };
	size_t i, r, j, m;

	if (n > UINT32_MAX)
		return SIMHASH_EINVAL;
	h = sh_alloc_big((n ? n : 1) * sizeof *h);
	if (!h || sh_near_sort_init(&sort, n)) {
		free(h);
		return SIMHASH_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		h[i].key = sh_key(d[i].keys, d[i].n_keys * sizeof *d[i].keys) ^ (uint64_t)d[i].kind;
		h[i].i = (uint32_t)i;
	}
	for (i = 0; i < n; i++)
		same[i] = i;
	/* sorted by (hash, index), in the sort's scratch; the runs of one hash,
	 * which hold every repeat, back into h: only their members are met
	 * again, in hash order, at random */
	{
		const sh_near_ent *sorted = sh_near_sort_into(&sort, h, n);
		for (r = 0, m = 0; r < n; r = j) {
			for (j = r + 1; j < n && sorted[j].key == sorted[r].key; j++)
				;
			if (j - r > 1) {
				memcpy(h + m, sorted + r, (j - r) * sizeof *h);
				m += j - r;
			}
		}
	}
	sh_near_sort_free(&sort);
	for (r = 0; r < m; r = j) {
		for (j = r; j < m && h[j].key == h[r].key; j++) {
			size_t k;
			/* same[] and the sketches fetched ahead, and the keys of
			 * the next ones once their sketches are in */
			if (j + SH_COLLAPSE_AHEAD < m) {
				__builtin_prefetch(&same[h[j + SH_COLLAPSE_AHEAD].i], 1);
				__builtin_prefetch(&d[h[j + SH_COLLAPSE_AHEAD].i]);
			}
			if (j + SH_COLLAPSE_AHEAD / 2 < m)
				__builtin_prefetch(d[h[j + SH_COLLAPSE_AHEAD / 2].i].keys);
			for (k = r; k < j; k++)
				if (same[h[k].i] == h[k].i && same_sketch(&d[h[k].i], &d[h[j].i])) {
					same[h[j].i] = h[k].i;
					break;
				}
		}
	}
	free(h);
	return SIMHASH_OK;
}

/* ---- the join over the first members */

struct join {
	const simhash_sketch *d;
	size_t n_reps;
	uint64_t *rep;      /* the first members, in visit order (step 2) */
	size_t *roff;       /* n_reps + 1 offsets into ranks */
	uint32_t *ranks;    /* each member's ranks, ascending */
	size_t *poff;       /* n_ranks + 1 offsets into post */
	uint32_t *post;     /* per rank: visit positions whose prefix holds it, ascending */
	uint32_t *ppos;     /* beside post: the rank's position in that sketch */
	uint32_t *stamp;    /* per visit position: 1 + the last x that met it */
	uint32_t *seen;     /* per visit position: shared prefix ranks met, or UINT32_MAX: pruned */
	uint32_t *cand;     /* the positions met by the current x */
	uint32_t n_single;  /* ranks [0, n_single) are held by one member only */
	uint32_t *uf;       /* components only: union-find over visit positions */
	sh_buf out; /* simhash_near_pair[n_out] */
	size_t n_out;
};

struct visit {
	uint64_t kind, n_keys, i;
};

static int by_visit(const void *a, const void *b)
{
	const struct visit *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->n_keys != y->n_keys)
		return x->n_keys < y->n_keys ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The first members in visit order (step 2) into j->rep. */
static simhash_err visit_order(struct join *j, const uint64_t *same, size_t n)
{
	struct visit *v = malloc((n ? n : 1) * sizeof *v);
	size_t i;

	j->rep = malloc((n ? n : 1) * sizeof *j->rep);
	if (!v || !j->rep) {
		free(v);
		return SIMHASH_ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (same[i] == i) {
			v[j->n_reps].kind = (uint64_t)j->d[i].kind;
			v[j->n_reps].n_keys = j->d[i].n_keys;
			v[j->n_reps++].i = i;
		}
	qsort(v, j->n_reps, sizeof *v, by_visit);
	for (i = 0; i < j->n_reps; i++)
		j->rep[i] = v[i].i;
	free(v);
	return SIMHASH_OK;
}

/* The probing prefix: |x| - ceil(T |x|) + 1 ranks. */
static size_t prefix_len(const simhash_sketch *s)
{
	uint64_t n = s->n_keys, need = (sh_near_tenths(s->kind) * n + 9) / 10;

	return n ? (size_t)(n - need + 1) : 0;
}

/* The indexing prefix: |y| - ceil(2T / (1 + T) |y|) + 1 ranks. */
static size_t index_len(const simhash_sketch *s)
{
	uint64_t n = s->n_keys, t = sh_near_tenths(s->kind);
	uint64_t need = (2 * t * n + 10 + t - 1) / (10 + t);

	return n ? (size_t)(n - need + 1) : 0;
}

/* The first rank of member i held by another member too: its ranks below
 * n_single can meet no one, so prefixes skip them. */
static size_t first_shared(const struct join *j, size_t i)
{
	size_t k = 0, n = j->roff[i + 1] - j->roff[i];

	while (k < n && j->ranks[j->roff[i] + k] < j->n_single)
		k++;
	return k;
}

/* Ranks (step 1): every key of the first members counted, then numbered by
 * ascending count with a counting sort; each member's ranks come out
 * ascending by walking the ranks in order. */
static simhash_err rank_all(struct join *j, struct table *t)
{
	size_t n_tok = 0, i, k, n_ranks, *start = NULL, *fill = NULL;
	uint64_t *by_rank = NULL, max_df = 0;
	uint32_t *first = NULL;
	simhash_err err = SIMHASH_OK;

	for (i = 0; i < j->n_reps && !err; i++) {
		const simhash_sketch *s = &j->d[j->rep[i]];
		for (k = 0; k < s->n_keys && !err; k++)
			err = count_key(t, s->keys[k]);
		n_tok += s->n_keys;
	}
	if (err)
		return err;
	n_ranks = t->used;
	j->n_single = 0;
	for (i = 0; i <= t->mask; i++)
		j->n_single += t->s[i].df == 1;
	for (i = 0; i <= t->mask; i++)
		if (t->s[i].df > max_df)
			max_df = t->s[i].df;
	start = calloc(max_df + 2, sizeof *start);
	j->roff = malloc((j->n_reps + 1) * sizeof *j->roff);
	j->ranks = malloc((n_tok ? n_tok : 1) * sizeof *j->ranks);
	by_rank = malloc((n_tok ? n_tok : 1) * sizeof *by_rank);
	first = malloc((n_ranks + 1) * sizeof *first);
	fill = malloc((j->n_reps + 1) * sizeof *fill);
	if (!start || !j->roff || !j->ranks || !by_rank || !first || !fill) {
		err = SIMHASH_ENOMEM;
		goto out;
	}
	for (i = 0; i <= t->mask; i++) /* counting sort of the keys by df */
		if (t->s[i].df)
			start[t->s[i].df + 1]++;
	for (i = 1; i <= max_df + 1; i++)
		start[i] += start[i - 1];
	for (i = 0; i <= t->mask; i++)
		if (t->s[i].df)
			t->s[i].rank = (uint32_t)start[t->s[i].df]++;
	/* first[r]: where rank r's holders start in by_rank (df in rank order) */
	for (i = 0; i <= t->mask; i++)
		if (t->s[i].df)
			first[t->s[i].rank + 1] = t->s[i].df;
	first[0] = 0;
	for (i = 1; i <= n_ranks; i++)
		first[i] += first[i - 1];
	for (i = 0; i < j->n_reps; i++) {
		const simhash_sketch *s = &j->d[j->rep[i]];
		for (k = 0; k < s->n_keys; k++)
			by_rank[first[find(t, s->keys[k])->rank]++] = i;
	}
	j->roff[0] = 0;
	for (i = 0; i < j->n_reps; i++) {
		j->roff[i + 1] = j->roff[i] + j->d[j->rep[i]].n_keys;
		fill[i] = j->roff[i];
	}
	/* first[r] now ends rank r's holders; walk ranks ascending */
	for (size_t r = 0, at = 0; r < n_ranks; r++)
		for (; at < first[r]; at++)
			j->ranks[fill[by_rank[at]]++] = (uint32_t)r;
	j->poff = calloc(n_ranks + 2, sizeof *j->poff);
	if (!j->poff) {
		err = SIMHASH_ENOMEM;
		goto out;
	}
	/* the inverted lists of the prefixes, by visit position ascending */
	for (i = 0; i < j->n_reps; i++)
		for (k = first_shared(j, i); k < index_len(&j->d[j->rep[i]]); k++)
			j->poff[j->ranks[j->roff[i] + k] + 2]++;
	for (i = 2; i <= n_ranks + 1; i++)
		j->poff[i] += j->poff[i - 1];
	j->post = malloc((j->poff[n_ranks + 1] ? j->poff[n_ranks + 1] : 1) * sizeof *j->post);
	j->ppos = malloc((j->poff[n_ranks + 1] ? j->poff[n_ranks + 1] : 1) * sizeof *j->ppos);
	if (!j->post || !j->ppos) {
		err = SIMHASH_ENOMEM;
		goto out;
	}
	for (i = 0; i < j->n_reps; i++)
		for (k = first_shared(j, i); k < index_len(&j->d[j->rep[i]]); k++) {
			size_t at = j->poff[j->ranks[j->roff[i] + k] + 1]++;
			j->post[at] = (uint32_t)i;
			j->ppos[at] = (uint32_t)k;
		}
out:
	free(start);
	free(by_rank);
	free(first);
	free(fill);
	return err;
}

simhash_err sh_near_emit(sh_buf *out, size_t *n_out, uint64_t a, uint64_t b, double jac)
{
	simhash_near_pair *p;

	if (sh_buf_reserve(out, (*n_out + 1) * sizeof *p))
		return SIMHASH_ENOMEM;
	p = (simhash_near_pair *)out->p + *n_out;
	p->a = a < b ? a : b;
	p->b = a < b ? b : a;
	p->jaccard = jac;
	++*n_out;
	return SIMHASH_OK;
}

/* The overlap a pair of sizes nx, ny needs: ceil(T (nx + ny) / (1 + T)),
 * in tenths: J >= T iff overlap >= T (nx + ny - overlap). */
static uint64_t need(uint64_t tenths, uint64_t nx, uint64_t ny)
{
	return (tenths * (nx + ny) + 10 + tenths - 1) / (10 + tenths);
}

/* Verifies x (visit position px) against y (py < px): merge of ranks. */
static simhash_err verify(struct join *j, size_t px, size_t py)
{
	const uint32_t *a = j->ranks + j->roff[px], *b = j->ranks + j->roff[py];
	size_t na = j->roff[px + 1] - j->roff[px], nb = j->roff[py + 1] - j->roff[py];
	size_t i = 0, k = 0, shared = 0, uni;
	uint64_t tenths = sh_near_tenths(j->d[j->rep[px]].kind), want = need(tenths, na, nb);

	/* stop once the rest cannot reach the overlap J >= T needs */
	while (i < na && k < nb && shared + (na - i < nb - k ? na - i : nb - k) >= want) {
		uint32_t ai = a[i], bk = b[k];
		shared += ai == bk;
		i += ai <= bk;
		k += bk <= ai;
	}
	uni = na + nb - shared;
	if (!sh_near_accept(j->d[j->rep[px]].kind, shared, uni))
		return SIMHASH_OK;
	if (j->uf) {
		uint32_t rx = sh_near_find(j->uf, (uint32_t)px), ry = sh_near_find(j->uf, (uint32_t)py);
		j->uf[rx > ry ? rx : ry] = rx > ry ? ry : rx;
		return SIMHASH_OK;
	}
	return sh_near_emit(&j->out, &j->n_out, j->rep[px], j->rep[py],
			    (double)shared / (double)uni);
}

/* Meets the y sharing a prefix rank with x, with the positional filter of
 * PPJoin (Xiao et al. 2008): met at x's i-th and y's k-th rank after s shared
 * ones, the pair shares at most s + 1 + min(|x| - i - 1, |y| - k - 1), since
 * both lists ascend; below the overlap J >= T needs, y is pruned for this x.
 * The survivors are verified in full. */
static simhash_err probe(struct join *j, size_t px)
{
	const simhash_sketch *x = &j->d[j->rep[px]];
	uint64_t tenths = sh_near_tenths(x->kind), nx = x->n_keys;
	size_t n_cand = 0, i, c;
	simhash_err err = SIMHASH_OK;

	for (i = first_shared(j, px); i < prefix_len(x); i++) {
		uint32_t r = j->ranks[j->roff[px] + i];
		for (size_t q = j->poff[r]; q < j->poff[r + 1]; q++) {
			size_t py = j->post[q];
			uint64_t ny, ub;
			const simhash_sketch *y;
			if (py >= px)
				break;
			y = &j->d[j->rep[py]];
			ny = y->n_keys;
			if (j->stamp[py] != px + 1) {
				j->stamp[py] = (uint32_t)(px + 1);
				if (y->kind != x->kind || 10 * ny < tenths * nx) {
					j->seen[py] = UINT32_MAX;
					continue;
				}
				j->seen[py] = 0;
				j->cand[n_cand++] = (uint32_t)py;
			}
			if (j->seen[py] == UINT32_MAX)
				continue;
			ub = j->seen[py] + 1 +
			     (nx - i - 1 < ny - j->ppos[q] - 1 ? nx - i - 1 : ny - j->ppos[q] - 1);
			if (ub < need(tenths, nx, ny))
				j->seen[py] = UINT32_MAX;
			else
				j->seen[py]++;
		}
	}
	for (c = 0; c < n_cand && !err; c++)
		if (j->seen[j->cand[c]] != UINT32_MAX)
		{
			/* components only: a pair already connected adds nothing */
			if (j->uf && sh_near_find(j->uf, (uint32_t)px) == sh_near_find(j->uf, j->cand[c]))
				continue;
			err = verify(j, px, j->cand[c]);
		}
	return err;
}

static int by_pair(const void *a, const void *b)
{
	const simhash_near_pair *x = a, *y = b;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

simhash_err sh_near_components(const uint64_t *rep, size_t n_reps, uint32_t *uf,
			       const uint64_t *same, size_t n, uint64_t *cluster)
{
	uint32_t *inv = sh_alloc_big((n ? n : 1) * sizeof *inv);
	uint64_t *low = sh_alloc_big((n_reps + 1) * sizeof *low);
	size_t i;

	if (!inv || !low) {
		free(inv);
		free(low);
		return SIMHASH_ENOMEM;
	}
	for (i = 0; i < n_reps; i++) {
		inv[rep[i]] = (uint32_t)i;
		low[i] = UINT64_MAX;
	}
	for (i = 0; i < n_reps; i++) {
		uint32_t r = sh_near_find(uf, (uint32_t)i);
		if (rep[i] < low[r])
			low[r] = rep[i];
	}
	for (i = 0; i < n; i++)
		cluster[i] = low[sh_near_find(uf, inv[same[i]])];
	free(inv);
	free(low);
	return SIMHASH_OK;
}

simhash_err sh_near_result(sh_buf *buf, size_t n_buf, simhash_near_pair **out, size_t *n_out)
{
	if (n_buf)
		qsort(buf->p, n_buf, sizeof(simhash_near_pair), by_pair);
	if (out) {
		*out = buf->p;
		*n_out = n_buf;
		buf->p = NULL;
	}
	sh_buf_free(buf);
	return SIMHASH_OK;
}

simhash_err sh_near_pairs_of(sh_near_run_fn run, const simhash_sketch *docs, size_t n,
			     uint64_t *same, simhash_near_pair **out, size_t *n_out)
{
	if (!out || !n_out)
		return SIMHASH_EINVAL;
	*out = NULL;
	*n_out = 0;
	return run(docs, n, same, NULL, out, n_out);
}

simhash_err sh_near_clusters_of(sh_near_run_fn run, const simhash_sketch *docs, size_t n,
				uint64_t *cluster)
{
	uint64_t *same;
	simhash_err err;

	if (n && !cluster)
		return SIMHASH_EINVAL;
	same = sh_alloc_big((n ? n : 1) * sizeof *same);
	if (!same)
		return SIMHASH_ENOMEM;
	err = run(docs, n, same, cluster, NULL, NULL);
	free(same);
	return err;
}

/* The join; with cluster, components instead of pairs (cluster[i]: the
 * first member of i's component, as simhash_clusters() gives). */
static simhash_err run_join(const simhash_sketch *docs, size_t n, uint64_t *same,
			    uint64_t *cluster, simhash_near_pair **out, size_t *n_out)
{
	struct join j = { .d = docs };
	struct table t = { NULL, 0, 0 };
	simhash_err err;
	size_t i;

	if ((n && (!docs || !same)) || n >= UINT32_MAX)
		return SIMHASH_EINVAL;
	for (i = 0; i < n; i++)
		if ((docs[i].n_keys && !docs[i].keys) ||
		    (docs[i].kind != SIMHASH_NEAR_CHARS && docs[i].kind != SIMHASH_NEAR_SHINGLES))
			return SIMHASH_EINVAL;
	err = sh_near_collapse(docs, n, same);
	if (!err)
		err = visit_order(&j, same, n);
	if (!err)
		err = rank_all(&j, &t);
	if (!err) {
		j.stamp = calloc(j.n_reps + 1, sizeof *j.stamp);
		j.seen = calloc(j.n_reps + 1, sizeof *j.seen);
		j.cand = calloc(j.n_reps + 1, sizeof *j.cand);
		if (cluster)
			j.uf = malloc((j.n_reps + 1) * sizeof *j.uf);
		if (!j.stamp || !j.seen || !j.cand || (cluster && !j.uf))
			err = SIMHASH_ENOMEM;
	}
	for (i = 0; j.uf && i < j.n_reps; i++)
		j.uf[i] = (uint32_t)i;
	for (i = 0; i < j.n_reps && !err; i++)
		err = probe(&j, i);
	if (!err)
		err = sh_near_result(&j.out, j.n_out, out, n_out);
	sh_buf_free(&j.out);
	if (!err && cluster)
		err = sh_near_components(j.rep, j.n_reps, j.uf, same, n, cluster);
	free(t.s);
	free(j.rep);
	free(j.roff);
	free(j.ranks);
	free(j.poff);
	free(j.post);
	free(j.stamp);
	free(j.seen);
	free(j.cand);
	free(j.ppos);
	free(j.uf);
	return err;
}

simhash_err simhash_near_join(const simhash_sketch *docs, size_t n, uint64_t *same,
			      simhash_near_pair **out, size_t *n_out)
{
	return sh_near_pairs_of(run_join, docs, n, same, out, n_out);
}

simhash_err simhash_near_clusters(const simhash_sketch *docs, size_t n, uint64_t *cluster)
{
	return sh_near_clusters_of(run_join, docs, n, cluster);
}

void simhash_near_pairs_free(simhash_near_pair *pairs)
{
	free(pairs);
}
