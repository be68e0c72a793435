/* test_near_join.c - simhash_near_join() and simhash_near_clusters() against
 * brute force: every pair of random sketches decided by
 * simhash_near_decide(), on sets of many shapes (keys from a small universe
 * so that near pairs are common, exact duplicates, empty sketches, both
 * kinds, sizes across the thresholds' boundaries and the short texts'
 * budget of features not shared; families of variants that fill large
 * buckets about the threshold), seeded; the seed is printed on a failure.
 * simhash_near_decide() itself against a plain reference of the rule, the
 * decision's edge cases, the band keys of both densification paths, and a
 * sketch's keys against the distinct features the table path lists. */
#include <math.h>
#include <stdint.h>
#include "../test.h"
#include "common/internal.h"
#include "simhash.h"

#define MAX_DOCS 120
#define MAX_KEYS 160

static uint64_t keys[MAX_DOCS][MAX_KEYS];
static simhash_sketch sk[MAX_DOCS];

/* n random sketches: keys ascending and distinct from a universe of u;
 * every third one a variant of an earlier one (a few keys swapped), some
 * exact copies. */
static void make_set(size_t n, unsigned u)
{
	for (size_t i = 0; i < n; i++) {
		size_t m = 0;
		int copy = i > 0 && test_rnd() % 8 == 0;
		size_t from = i ? (size_t)(test_rnd() % i) : 0;
		sk[i].kind = test_rnd() % 4 ? SIMHASH_NEAR_CHARS : SIMHASH_NEAR_SHINGLES;
		if (copy) {
			sk[i] = sk[from];
			for (size_t k = 0; k < sk[from].n_keys; k++)
				keys[i][k] = keys[from][k];
			sk[i].keys = keys[i];
			continue;
		}
		if (i > 0 && test_rnd() % 3 == 0) { /* a variant: drop and add a few */
			for (size_t k = 0; k < sk[from].n_keys; k++)
				if (test_rnd() % 6)
					keys[i][m++] = keys[from][k];
			sk[i].kind = sk[from].kind;
		} else {
			size_t want = (size_t)(test_rnd() % MAX_KEYS);
			for (uint64_t v = 0; v < u && m < want; v++)
				if (test_rnd() % u < want)
					keys[i][m++] = v * 0x9e3779b97f4a7c15ull >> 8;
		}
		/* ascending, distinct */
		for (size_t a = 1; a < m; a++)
			for (size_t b = a; b > 0 && keys[i][b - 1] > keys[i][b]; b--) {
				uint64_t t = keys[i][b];
				keys[i][b] = keys[i][b - 1];
				keys[i][b - 1] = t;
			}
		{
			size_t w = 0;
			for (size_t a = 0; a < m; a++)
				if (!w || keys[i][w - 1] != keys[i][a])
					keys[i][w++] = keys[i][a];
			m = w;
		}
		sk[i].keys = keys[i];
		sk[i].n_keys = m;
	}
}

static size_t find(size_t *p, size_t i)
{
	while (p[i] != i)
		i = p[i];
	return i;
}

/* Whether sketches i and j are identical (kind and keys). */
static int same_text(size_t i, size_t j)
{
	return sk[i].kind == sk[j].kind && sk[i].n_keys == sk[j].n_keys &&
	       !memcmp(sk[i].keys, sk[j].keys, sk[i].n_keys * 8);
}

static void test_join_equals_brute_force(void)
{
	static const unsigned universes[] = {8, 20, 80, 400};
	for (int round = 0; round < 400; round++) {
		uint64_t seed = 0x5eed0000ull + (uint64_t)round;
		size_t n = 1 + (size_t)(round * 7 % MAX_DOCS), n_pairs = 0, got = 0;
		uint64_t same[MAX_DOCS], cl[MAX_DOCS];
		size_t parent[MAX_DOCS];
		simhash_near_pair *pairs = NULL;
		int bad = 0;

		test_rnd_seed(seed);
		make_set(n, universes[round % 4]);
		if (simhash_near_join(sk, n, same, &pairs, &n_pairs) != SIMHASH_OK) {
			fprintf(stderr, "seed %llx: join failed\n", (unsigned long long)seed);
			CHECK(0);
			continue;
		}
		for (size_t i = 0; i < n; i++)
			parent[i] = i;
		/* same[]: the first identical sketch */
		for (size_t i = 0; i < n; i++) {
			size_t f = 0;
			while (f < i && !(sk[f].kind == sk[i].kind && sk[f].n_keys == sk[i].n_keys &&
					  !memcmp(sk[f].keys, sk[i].keys, sk[i].n_keys * 8)))
				f++;
			bad |= same[i] != f;
		}
		/* the pairs between first members: exactly the near ones, sorted */
		for (size_t a = 0; a < n; a++)
			for (size_t b = a + 1; b < n; b++) {
				simhash_near_verdict v;
				simhash_near_decide(&sk[a], &sk[b], &v);
				if (v.near) {
					size_t ra = find(parent, a), rb = find(parent, b);
					parent[ra > rb ? ra : rb] = ra > rb ? rb : ra;
				}
				if (same[a] != a || same[b] != b || !v.near)
					continue;
				if (got >= n_pairs || pairs[got].a != a || pairs[got].b != b ||
				    pairs[got].jaccard != v.jaccard)
					bad = 1;
				got++;
			}
		bad |= got != n_pairs;
		CHECK(simhash_near_clusters(sk, n, cl) == SIMHASH_OK);
		for (size_t i = 0; i < n; i++)
			bad |= cl[i] != find(parent, i);
		if (bad) {
			fprintf(stderr, "seed %llx (n %zu): join or clusters differ from brute force\n",
				(unsigned long long)seed, n);
			CHECK(0);
		}
		simhash_near_pairs_free(pairs);
	}
}

/* The paths of other CPUs (sh_near_band_join_path(): the portable ones,
 * and AVX-512 without VPOPCNTDQ) give the pairs and clusters the default
 * path gave. */
static int other_paths_agree(size_t n, const simhash_near_pair *pairs, size_t n_pairs,
			     const uint64_t *cl)
{
	int ok = 1;

	for (int level = 0; level < 2 && ok; level++) {
		uint64_t same[MAX_DOCS], cs[MAX_DOCS];
		simhash_near_pair *sp = NULL;
		size_t n_sp = 0;
		ok = sh_near_band_join_path(level, sk, n, same, &sp, &n_sp) == SIMHASH_OK &&
		     sh_near_band_clusters_path(level, sk, n, cs) == SIMHASH_OK && n_sp == n_pairs;
		for (size_t i = 0; ok && i < n_pairs; i++)
			ok = sp[i].a == pairs[i].a && sp[i].b == pairs[i].b &&
			     sp[i].jaccard == pairs[i].jaccard;
		for (size_t i = 0; ok && i < n; i++)
			ok = cs[i] == cl[i];
		simhash_near_pairs_free(sp);
	}
	return ok;
}

/* simhash_near_band_join() on sk[0..n) against its definition, brute
 * force: the pairs of first members that share a band key
 * (simhash_near_bands()) and that simhash_near_decide() calls near, sorted,
 * each once; the clusters those pairs and the exact duplicates make; the
 * other paths; the same pairs in reverse input order. Adds the near pairs
 * to *exact and those among them sharing a band to *found; 1 if all agree. */
static int band_join_as_defined(size_t n, uint64_t seed, size_t *exact, size_t *found)
{
	static uint64_t bands[MAX_DOCS][SIMHASH_NEAR_BANDS];
	size_t n_pairs = 0, n_rev = 0, got = 0;
	uint64_t same[MAX_DOCS], cl[MAX_DOCS];
	size_t parent[MAX_DOCS];
	simhash_sketch rev[MAX_DOCS];
	simhash_near_pair *pairs = NULL, *rpairs = NULL;
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		simhash_near_bands(&sk[i], bands[i]);
		rev[n - 1 - i] = sk[i];
		parent[i] = i;
	}
	if (simhash_near_band_join(sk, n, same, &pairs, &n_pairs) != SIMHASH_OK) {
		fprintf(stderr, "seed %llx: band join failed\n", (unsigned long long)seed);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = find(parent, same[i]);
		parent[i > r ? i : r] = i > r ? r : i;
	}
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			simhash_near_verdict v;
			int shared = 0;
			if (same[a] != a || same[b] != b)
				continue;
			for (int k = 0; k < SIMHASH_NEAR_BANDS; k++)
				shared |= bands[a][k] == bands[b][k];
			simhash_near_decide(&sk[a], &sk[b], &v);
			*exact += v.near;
			*found += v.near && shared;
			if (!v.near || !shared)
				continue;
			{
				size_t ra = find(parent, a), rb = find(parent, b);
				parent[ra > rb ? ra : rb] = ra > rb ? rb : ra;
			}
			if (got >= n_pairs || pairs[got].a != a || pairs[got].b != b ||
			    pairs[got].jaccard != v.jaccard)
				bad = 1;
			got++;
		}
	bad |= got != n_pairs;
	CHECK(simhash_near_band_clusters(sk, n, cl) == SIMHASH_OK);
	for (size_t i = 0; i < n; i++)
		bad |= cl[i] != find(parent, i);
	bad |= !other_paths_agree(n, pairs, n_pairs, cl);
	/* reversed input: the same pairs between the same texts, as many */
	CHECK(simhash_near_band_join(rev, n, same, &rpairs, &n_rev) == SIMHASH_OK);
	bad |= n_rev != n_pairs;
	for (size_t i = 0; i < n_rev; i++) {
		size_t a = n - 1 - rpairs[i].b, b = n - 1 - rpairs[i].a, k = 0;
		/* the first members differ when copies exist: compare texts */
		while (k < n_pairs && !(same_text(pairs[k].a, a) && same_text(pairs[k].b, b)) &&
		       !(same_text(pairs[k].a, b) && same_text(pairs[k].b, a)))
			k++;
		bad |= k == n_pairs;
	}
	if (bad)
		fprintf(stderr, "seed %llx (n %zu): band join or clusters differ from their "
			"definition\n", (unsigned long long)seed, n);
	simhash_near_pairs_free(pairs);
	simhash_near_pairs_free(rpairs);
	return !bad;
}

/* The band join against its definition on make_set()'s sets, and the
 * candidates holding most of the near pairs. */
static void test_band_join_equals_its_definition(void)
{
	static const unsigned universes[] = {8, 20, 80, 400};
	size_t exact_total = 0, found_total = 0;

	for (int round = 0; round < 400; round++) {
		uint64_t seed = 0xba4d0000ull + (uint64_t)round;
		size_t n = 1 + (size_t)(round * 7 % MAX_DOCS);

		test_rnd_seed(seed);
		make_set(n, universes[round % 4]);
		CHECK(band_join_as_defined(n, seed, &exact_total, &found_total));
	}
	/* the candidates hold most near pairs (random sets: many near J = 0.4) */
	if (found_total < exact_total * 9 / 10) {
		fprintf(stderr, "band join: %zu of %zu near pairs\n", found_total, exact_total);
		CHECK(0);
	}
}

/* Families of variants of a few base sketches of 100 to 160 random keys
 * (each drops up to an eighth of its base's keys and adds a few): every
 * family is a large bucket in most bands, its pairs sit about the
 * threshold, and the bit sets are full enough that the keys lost to another's
 * bit decide many bounds. The band join against its definition. */
static void test_band_join_families(void)
{
	size_t exact_total = 0, found_total = 0;

	for (int round = 0; round < 30; round++) {
		uint64_t seed = 0xfa3100ull + (uint64_t)round, base[MAX_KEYS];
		size_t n = 0;

		test_rnd_seed(seed);
		while (n < MAX_DOCS) {
			size_t nb = 100 + (size_t)(test_rnd() % (MAX_KEYS - 110));
			size_t fam = 10 + (size_t)(test_rnd() % 50);
			simhash_near_kind kind = round % 2 ? SIMHASH_NEAR_SHINGLES : SIMHASH_NEAR_CHARS;
			for (size_t k = 0; k < nb; k++)
				base[k] = test_rnd();
			for (size_t f = 0; f < fam && n < MAX_DOCS; f++, n++) {
				size_t m = 0, drop = 1 + (size_t)(test_rnd() % 8);
				for (size_t k = 0; k < nb; k++)
					if (test_rnd() % 100 >= drop * 100 / 64)
						keys[n][m++] = base[k];
				for (size_t extra = test_rnd() % 4; extra && m < MAX_KEYS; extra--)
					keys[n][m++] = test_rnd();
				/* ascending, distinct */
				for (size_t a = 1; a < m; a++)
					for (size_t b = a; b > 0 && keys[n][b - 1] > keys[n][b]; b--) {
						uint64_t t = keys[n][b];
						keys[n][b] = keys[n][b - 1];
						keys[n][b - 1] = t;
					}
				sk[n] = (simhash_sketch){ keys[n], m, kind };
			}
		}
		CHECK(band_join_as_defined(n, seed, &exact_total, &found_total));
	}
	CHECK(exact_total > 0 && found_total > exact_total * 9 / 10);
}

/* The rule as simhash.h states it, on counts: J = shared / union >= T of
 * the kind, and for short texts at most 64 features not shared. */
static int reference_near(simhash_near_kind kind, size_t shared, size_t union_)
{
	if (union_ == 0)
		return 1;
	if (kind == SIMHASH_NEAR_CHARS)
		return 10 * shared >= 4 * union_ && union_ - shared <= 64;
	return 10 * shared >= 8 * union_;
}

/* simhash_near_decide() against reference_near() on random pairs of sizes
 * up to 400 keys (the budget binds from about 107 keys in all), sharing a
 * random part: the counts, the verdict and the pair's threshold. */
static void test_decide_equals_reference(void)
{
	static uint64_t ka[400], kb[800];
	uint64_t seed = 0xdec1de00ull;

	test_rnd_seed(seed);
	for (int round = 0; round < 20000; round++) {
		size_t na = (size_t)(test_rnd() % 400), nb = 0, shared = 0, i;
		size_t extra = (size_t)(test_rnd() % (round % 2 ? 80 : 400));
		simhash_sketch a = {ka, na, SIMHASH_NEAR_CHARS}, b = {kb, 0, SIMHASH_NEAR_CHARS};
		simhash_near_verdict v;
		int want;

		/* a: the even numbers 2 .. 2 na; b: some of them, then odd ones */
		unsigned keep = (unsigned)(test_rnd() % 11);
		for (i = 0; i < na; i++) {
			ka[i] = 2 * (i + 1);
			if (test_rnd() % 10 < keep) {
				kb[nb++] = ka[i];
				shared++;
			}
		}
		for (i = 0; i < extra; i++)
			kb[nb++] = 2 * (na + i) + 1001;
		b.n_keys = nb;
		if (round % 3 == 0)
			a.kind = b.kind = SIMHASH_NEAR_SHINGLES;
		want = reference_near(a.kind, shared, na + nb - shared);
		simhash_near_decide(&a, &b, &v);
		if (v.near != want || v.shared != shared || v.kind != a.kind ||
		    (v.near && v.jaccard < v.threshold - 1e-12) ||
		    (!v.near && v.jaccard >= v.threshold + 1e-12)) {
			fprintf(stderr, "seed %llx round %d: %zu of %zu+%zu shared, near %d, want %d\n",
				(unsigned long long)seed, round, shared, na, nb, v.near, want);
			CHECK(0);
			return;
		}
		simhash_near_decide(&b, &a, &v); /* symmetric */
		CHECK(v.near == want);
	}
}

static void test_decision_edges(void)
{
	static const uint64_t k1[] = {1, 2, 3, 4, 5}, k2[] = {1, 2, 3, 4, 6}, k3[] = {1, 2};
	simhash_sketch a = {k1, 5, SIMHASH_NEAR_SHINGLES}, b = {k2, 5, SIMHASH_NEAR_SHINGLES};
	simhash_sketch e1 = {NULL, 0, SIMHASH_NEAR_CHARS}, e2 = {NULL, 0, SIMHASH_NEAR_CHARS};
	simhash_sketch c = {k3, 2, SIMHASH_NEAR_CHARS}, d = {k1, 5, SIMHASH_NEAR_CHARS};
	simhash_near_verdict v;

	simhash_near_decide(&a, &b, &v); /* 4 of 6: J 0.667 < 0.8 */
	CHECK(!v.near && v.shared == 4 && v.kind == SIMHASH_NEAR_SHINGLES);
	b.kind = SIMHASH_NEAR_CHARS; /* kinds differ: never near */
	simhash_near_decide(&a, &b, &v);
	CHECK(!v.near && v.kind == 0);
	simhash_near_decide(&e1, &e2, &v); /* two empty sketches: J 1 */
	CHECK(v.near && v.jaccard == 1.0);
	simhash_near_decide(&c, &d, &v); /* 2 of 5: J exactly 0.4, near */
	CHECK(v.near && v.shared == 2);
	CHECK(simhash_near_similarity(SIMHASH_NEAR_CHARS, 0.4) > 0.8 - 1e-12);
	{ /* the short texts' budget: 64 not shared is near, 66 is not (J 0.5 both) */
		static uint64_t x[140], y[140];
		for (uint64_t i = 0; i < 140; i++) {
			x[i] = i + 1;
			y[i] = i + 33;
		}
		simhash_sketch sx = {x, 100, SIMHASH_NEAR_CHARS}, sy = {y, 100, SIMHASH_NEAR_CHARS};
		simhash_near_decide(&sx, &sy, &v); /* 68 of 132 */
		CHECK(v.near && v.shared == 68 && fabs(v.threshold - (1 - 64.0 / 132)) < 1e-12);
		sy.keys = y + 1; /* 34 .. 133: 67 of 133, 66 not shared */
		simhash_near_decide(&sx, &sy, &v);
		CHECK(!v.near && v.shared == 67 && v.jaccard > 0.5);
		sx.kind = sy.kind = SIMHASH_NEAR_SHINGLES; /* no budget, J < 0.8 */
		simhash_near_decide(&sx, &sy, &v);
		CHECK(!v.near && v.threshold == 0.8);
		sx.n_keys = sy.n_keys = 140; /* 1 .. 140 and 34 .. 173: 107 of 173 */
		simhash_near_decide(&sx, &sy, &v);
		CHECK(!v.near);
		sx.kind = sy.kind = SIMHASH_NEAR_CHARS; /* 66 not shared, J 0.62 */
		simhash_near_decide(&sx, &sy, &v);
		CHECK(!v.near && v.jaccard > 0.6);
		sy.keys = y; /* 33 .. 172: 108 of 172, 64 not shared */
		simhash_near_decide(&sx, &sy, &v);
		CHECK(v.near && v.shared == 108);
	}
	CHECK(simhash_near_similarity(SIMHASH_NEAR_SHINGLES, 0.8) == 0.8);
	CHECK(simhash_near_join(NULL, 1, NULL, NULL, NULL) == SIMHASH_EINVAL);
}

static void test_texts(void)
{
	simhash_near *nd = NULL;
	simhash_near_verdict v;
	simhash_sketch s;
	const char *a = "The library will extend its opening hours during the exam period in December.";
	const char *b = "The library will extend its opening hours during the exam period in January.";

	CHECK(simhash_near_new(&nd) == SIMHASH_OK);
	CHECK(simhash_near_texts(nd, a, strlen(a), b, strlen(b), &v) == SIMHASH_OK);
	CHECK(v.near && v.kind == SIMHASH_NEAR_CHARS && v.shared == 60);
	CHECK(simhash_near_sketch(nd, "", 0, &s) == SIMHASH_OK && s.n_keys == 0);
	CHECK(simhash_near_sketch(nd, "\xff\xfe", 2, &s) == SIMHASH_OK); /* invalid UTF-8: U+FFFD */
	CHECK(simhash_near_sketch(nd, NULL, 3, &s) == SIMHASH_EINVAL);
	{ /* a long text's keys (the radix sort): ascending and distinct */
		char text[4000];
		size_t len = 0;
		for (int w = 0; len + 16 < sizeof text; w++)
			len += (size_t)snprintf(text + len, sizeof text - len, "w%d ", w * 7919 % 1000);
		CHECK(simhash_near_sketch(nd, text, len, &s) == SIMHASH_OK);
		CHECK(s.kind == SIMHASH_NEAR_SHINGLES && s.n_keys > 400);
		for (size_t i = 1; i < s.n_keys; i++)
			CHECK(s.keys[i - 1] < s.keys[i]);
	}
	simhash_near_free(nd);
	simhash_near_free(NULL);
}

/* Every path of the band keys and summary bits (the portable one with its
 * walk or its table, AVX-512 F/DQ, AVX-512 VBMI: those the CPU has) gives
 * the portable walk's keys and bit set, on sketches of every size (one key:
 * every bin densified from one, so rows whose first 64 probes miss take the
 * tail walk) and both kinds. */
static void test_band_keys_all_paths(void)
{
	static const unsigned universes[] = {4, 20, 400};
	uint64_t a[SIMHASH_NEAR_BANDS], b[SIMHASH_NEAR_BANDS];
	uint64_t bits_a[SH_NEAR_SUMMARY_WORDS], bits_b[SH_NEAR_SUMMARY_WORDS];
	int top = sh_near_keys_level();
	sh_near_table *tab = NULL;

	CHECK(sh_near_table_new(&tab) == SIMHASH_OK);
	if (!tab)
		return;
	if (top < SH_NEAR_KEYS_VBMI)
		printf("  (paths up to %d of %d here)\n", top, SH_NEAR_KEYS_VBMI);
	for (unsigned round = 0; round < 60; round++) {
		test_rnd_seed(2000 + round);
		make_set(MAX_DOCS, universes[round % 3]);
		for (size_t i = 0; i < MAX_DOCS; i++) {
			simhash_sketch one = sk[i];
			for (size_t m = 0; m <= 3 && m <= sk[i].n_keys; m++) {
				size_t set_a;
				/* the sketch, and its first m keys alone */
				one.n_keys = m == 3 ? sk[i].n_keys : m;
				memset(bits_a, 0, sizeof bits_a);
				set_a = sh_near_band_keys(&one, a, SH_NEAR_KEYS_PORTABLE, NULL, bits_a);
				CHECK(set_a <= one.n_keys && (one.n_keys == 0) == (set_a == 0));
				for (int path = 0; path <= 2 * top + 1; path++) {
					size_t set_b;
					memset(bits_b, 0, sizeof bits_b);
					set_b = sh_near_band_keys(&one, b, path / 2, path % 2 ? tab : NULL,
								  bits_b);
					if (set_b != set_a || memcmp(a, b, sizeof a) ||
					    memcmp(bits_a, bits_b, sizeof bits_a)) {
						printf("  seed %u, sketch %zu of %zu keys: path %d differs\n",
						       2000 + round, i, one.n_keys, path);
						CHECK(0);
						sh_near_table_free(tab);
						return;
					}
				}
			}
		}
	}
	{ /* the public function takes one of them */
		uint64_t k[2] = {5, 9};
		simhash_sketch s = {k, 2, SIMHASH_NEAR_CHARS};
		simhash_near_bands(&s, a);
		sh_near_band_keys(&s, b, SH_NEAR_KEYS_PORTABLE, NULL, NULL);
		CHECK(!memcmp(a, b, sizeof a));
	}
	sh_near_table_free(tab);
}

struct listed {
	uint64_t k[512];
	size_t n;
};

static int list_key(const char *data, size_t len, uint32_t count, void *arg)
{
	struct listed *l = arg;
	(void)count;
	if (l->n < 512)
		l->k[l->n++] = sh_key(data, len);
	return 0;
}

/* A short text's sketch (char n-grams hashed in place) holds exactly the
 * keys of the distinct features simhash_features_each() lists for the same
 * config, ascending: ASCII, Chinese, mixed scripts, repeats, fullwidth
 * forms that normalize to ASCII, texts shorter than an n-gram, a text at
 * the short limit. */
static void test_sketch_keys_are_the_distinct_features(void)
{
	static const char *texts[] = {
		"The library will extend its opening hours during the exam period in December.",
		"图书馆将在十二月考试期间延长开放时间。",
		"Version 2.0 发布 of the 数据 toolkit, version 2.1 发布!",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa abab abab abab",
		"\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3 ＡＢＣ abc ABC", /* fullwidth */
		"ab", "a", "中", "中文", "x中", "caf\xc3\xa9 na\xc3\xafve r\xc3\xa9sum\xc3\xa9",
		"0123456789012345678901234567890123456789012345678901234567890123456789"
		"0123456789012345678901234567890123456789012345678901234567890123456789"
		"012345678901234567890123456789012345", /* 176 characters */
	};
	simhash_config c;
	simhash_ctx *ctx = NULL;
	simhash_near *nd = NULL;
	simhash_sketch s;

	simhash_config_init(&c);
	c.features = SIMHASH_FEATURES_CHAR;
	c.ngram = 3;
	c.ngram_cjk = 2;
	CHECK(simhash_ctx_new(&c, &ctx) == SIMHASH_OK);
	CHECK(simhash_near_new(&nd) == SIMHASH_OK);
	for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
		static struct listed l;
		l.n = 0;
		CHECK(simhash_features_each(ctx, texts[t], strlen(texts[t]), list_key, &l, NULL) == SIMHASH_OK);
		for (size_t a = 1; a < l.n; a++) /* ascending */
			for (size_t b = a; b > 0 && l.k[b - 1] > l.k[b]; b--) {
				uint64_t x = l.k[b];
				l.k[b] = l.k[b - 1];
				l.k[b - 1] = x;
			}
		CHECK(simhash_near_sketch(nd, texts[t], strlen(texts[t]), &s) == SIMHASH_OK);
		CHECK(s.kind == SIMHASH_NEAR_CHARS);
		if (s.n_keys != l.n || memcmp(s.keys, l.k, l.n * sizeof *l.k)) {
			printf("  text %zu: %zu keys, %zu distinct features\n", t, s.n_keys, l.n);
			CHECK(0);
		}
	}
	simhash_near_free(nd);
	simhash_ctx_free(ctx);
}

static int by_key_then_i(const void *a, const void *b)
{
	const sh_near_ent *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* sh_near_sort_into() orders by (key, i) whatever the keys: uniform, sharing
 * their top 40 bits (the insertion pass gives way to qsort), a few values
 * repeated (long runs of one key), and sizes from 0 to 20,000. */
static void test_entry_sort_any_keys(void)
{
	static sh_near_ent e[20000], want[20000];
	static const size_t sizes[] = {0, 1, 7, 300, 20000};

	for (unsigned shape = 0; shape < 3; shape++)
		for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
			size_t n = sizes[z];
			sh_near_sort s = { 0 };
			test_rnd_seed(7000 + 10 * shape + z);
			for (size_t i = 0; i < n; i++) {
				uint64_t r = test_rnd();
				e[i].key = shape == 0 ? r : shape == 1 ? (0xabcdef1234ull << 24) | (r & 0xffffff)
								      : r % 5 * 0x9e3779b97f4a7c15ull;
				e[i].i = (uint32_t)i;
				e[i].band = 0;
				want[i] = e[i];
			}
			qsort(want, n, sizeof *want, by_key_then_i);
			CHECK(sh_near_sort_init(&s, n) == SIMHASH_OK);
			if (memcmp(sh_near_sort_into(&s, e, n), want, n * sizeof *e)) {
				printf("  shape %u, %zu entries: wrong order\n", shape, n);
				CHECK(0);
			}
			sh_near_sort_free(&s);
		}
}

/* A join large enough for the portable path's densification table (more
 * first members than SH_NB_TABLE_MIN in near_bands.c): 24 sets of
 * make_set() side by side, the pairs and clusters of every path equal. */
static void test_large_join_all_paths(void)
{
	enum { SETS = 24, N = SETS * MAX_DOCS };
	simhash_sketch *big = malloc(N * sizeof *big);
	uint64_t *store = malloc((size_t)N * MAX_KEYS * sizeof *store), *c0 = NULL, *cl = NULL;
	simhash_near_pair *p0 = NULL;
	size_t n_p0 = 0;

	CHECK(big && store);
	if (!big || !store)
		goto out;
	test_rnd_seed(77);
	for (size_t r = 0; r < SETS; r++) {
		make_set(MAX_DOCS, r % 2 ? 20 : 400);
		for (size_t i = 0; i < MAX_DOCS; i++) {
			uint64_t *k = store + (r * MAX_DOCS + i) * MAX_KEYS;
			memcpy(k, sk[i].keys, sk[i].n_keys * sizeof *k);
			big[r * MAX_DOCS + i] = (simhash_sketch){ k, sk[i].n_keys, sk[i].kind };
		}
	}
	c0 = malloc(N * sizeof *c0);
	cl = malloc(N * sizeof *cl);
	CHECK(c0 && cl && sh_near_band_clusters_path(2, big, N, c0) == SIMHASH_OK);
	CHECK(simhash_near_band_join(big, N, cl, &p0, &n_p0) == SIMHASH_OK && n_p0 > 0);
	for (int level = 0; level < 2 && c0 && cl; level++) {
		simhash_near_pair *p = NULL;
		size_t n_p = 0, same_pairs = 1;
		CHECK(sh_near_band_clusters_path(level, big, N, cl) == SIMHASH_OK);
		CHECK(!memcmp(c0, cl, N * sizeof *cl));
		CHECK(sh_near_band_join_path(level, big, N, cl, &p, &n_p) == SIMHASH_OK);
		for (size_t i = 0; i < n_p && n_p == n_p0; i++)
			same_pairs &= p[i].a == p0[i].a && p[i].b == p0[i].b &&
				      p[i].jaccard == p0[i].jaccard;
		CHECK(n_p == n_p0 && same_pairs);
		simhash_near_pairs_free(p);
	}
out:
	simhash_near_pairs_free(p0);
	free(c0);
	free(cl);
	free(store);
	free(big);
}

TEST_MAIN("near_join",
	  TEST(test_join_equals_brute_force),
	  TEST(test_band_join_equals_its_definition),
	  TEST(test_band_join_families),
	  TEST(test_decide_equals_reference),
	  TEST(test_decision_edges),
	  TEST(test_texts),
	  TEST(test_band_keys_all_paths),
	  TEST(test_large_join_all_paths),
	  TEST(test_sketch_keys_are_the_distinct_features),
	  TEST(test_entry_sort_any_keys))
