/* test_near_sketch.c - a near sketch (near.c) and the sort of its keys
 * (sketch_sort.c).
 *
 * The sort: both paths (the AVX-512 network where the CPU has it, and the
 * scalar sorts) against qsort() and a plain pass that drops repeats, with
 * and without dropping them, on every size from 0 to 300 keys: random keys,
 * keys from a small pool (many repeats), all equal, already sorted,
 * reversed, the extremes 0 and UINT64_MAX among them, and keys sharing
 * their top bits (the scalar scatter's fallback). Then simhash_near_sketch()
 * with the vector paths off and on (the sort, and the keys of runs of
 * one-byte characters, and of characters of one width): the same keys for
 * texts of every length around the vector sizes, ASCII, mixed and Cyrillic,
 * Greek and combining marks. The kind: short iff at most
 * SIMHASH_NEAR_SHORT bytes are not UTF-8 continuation bytes, against a byte
 * by byte count, on valid and invalid UTF-8 around the boundary. A long
 * text's keys: its distinct word 3-shingles as simhash_features_each()
 * lists them, hashed and sorted (repeats, one long word, no word). Seeded;
 * a failure prints its seed and case. */
#include <stdint.h>
#include <xxhash.h>
#include "../test.h"
#include "simhash.h"

size_t sh_sketch_sort(uint64_t *k, size_t n, uint64_t *tmp, int simd, int distinct);
int sh_sketch_sort_simd(void);
void sh_sketch_set_simd(simhash_near *nd, int on);

#define MAX_N 300
#define SEED 0x5ce7c4ull

enum shape { RANDOM, POOL, EQUAL, SORTED, REVERSED, EXTREMES, TOP_BITS, N_SHAPES };

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* n keys of the shape into k. */
static void make_keys(uint64_t *k, size_t n, enum shape shape)
{
	uint64_t pool[5];

	for (size_t i = 0; i < 5; i++)
		pool[i] = test_rnd();
	for (size_t i = 0; i < n; i++) {
		switch (shape) {
		case RANDOM: k[i] = test_rnd(); break;
		case POOL: k[i] = pool[test_rnd() % 5]; break;
		case EQUAL: k[i] = pool[0]; break;
		case SORTED: k[i] = (uint64_t)i * (UINT64_MAX / n); break;
		case REVERSED: k[i] = UINT64_MAX - (uint64_t)i * 3; break;
		case EXTREMES: {
			uint64_t r = test_rnd();
			k[i] = r % 3 == 0 ? 0 : r % 3 == 1 ? UINT64_MAX : r;
			break;
		}
		case TOP_BITS: k[i] = 0xabcd000000000000ull | (test_rnd() & 0xffff); break;
		default: k[i] = 0;
		}
	}
}

/* The sorted keys of k[0..n), repeats dropped if distinct; how many. */
static size_t reference(uint64_t *k, size_t n, int distinct)
{
	size_t m = 0;

	qsort(k, n, sizeof *k, by_u64);
	if (!distinct)
		return n;
	for (size_t i = 0; i < n; i++)
		if (!m || k[i] != k[m - 1])
			k[m++] = k[i];
	return m;
}

static void test_both_paths_sort_like_qsort(void)
{
	static uint64_t in[MAX_N], want[MAX_N], got[2 * MAX_N + 2];
	unsigned failed = 0;

	test_rnd_seed(SEED);
	for (size_t n = 0; n <= MAX_N; n++)
		for (int shape = 0; shape < N_SHAPES; shape++)
			for (int distinct = 0; distinct < 2; distinct++)
				for (int simd = 0; simd < 2; simd++) {
					size_t m_want, m_got;
					make_keys(in, n, (enum shape)shape);
					memcpy(want, in, n * sizeof *in);
					m_want = reference(want, n, distinct);
					memcpy(got, in, n * sizeof *in);
					/* the tail past the keys must stay as it is */
					got[n] = 0x7a11;
					m_got = sh_sketch_sort(got, n, got + n + 1, simd, distinct);
					if (m_got != m_want || got[n] != 0x7a11 ||
					    memcmp(got, want, m_want * sizeof *got)) {
						if (failed++ < 5)
							fprintf(stderr, "seed %llx: n %zu shape %d distinct %d "
								"simd %d: %zu keys, want %zu\n",
								(unsigned long long)SEED, n, shape, distinct,
								simd, m_got, m_want);
					}
				}
	CHECK(failed == 0);
}

/* The same for larger sets: the buckets sorted in registers (129 to 32 Ki
 * keys; more than 128 sharing their top bits, as TOP_BITS makes, by the
 * scalar sorts) and the radix sort beyond. */
static void test_both_paths_sort_large_sets_like_qsort(void)
{
	static const size_t sizes[] = { 129, 130, 257, 1000, 4095, 32768, 32769, 40000 };
	enum { BIG = 40000 };
	uint64_t *in = malloc(BIG * sizeof *in), *want = malloc(BIG * sizeof *want);
	uint64_t *got = malloc((2 * BIG + 2) * sizeof *got);
	unsigned failed = 0;

	CHECK(in && want && got);
	if (!in || !want || !got)
		goto out;
	test_rnd_seed(SEED + 4);
	for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
		for (int shape = 0; shape < N_SHAPES; shape++)
			for (int distinct = 0; distinct < 2; distinct++)
				for (int simd = 0; simd < 2; simd++) {
					size_t n = sizes[z], m_want, m_got;
					make_keys(in, n, (enum shape)shape);
					memcpy(want, in, n * sizeof *in);
					m_want = reference(want, n, distinct);
					memcpy(got, in, n * sizeof *in);
					m_got = sh_sketch_sort(got, n, got + n + 1, simd, distinct);
					if ((m_got != m_want || memcmp(got, want, m_want * sizeof *got)) &&
					    failed++ < 5)
						fprintf(stderr, "seed %llx: n %zu shape %d distinct %d "
							"simd %d: %zu keys, want %zu\n",
							(unsigned long long)SEED + 4, n, shape, distinct, simd,
							m_got, m_want);
				}
	CHECK(failed == 0);
out:
	free(in);
	free(want);
	free(got);
}

static void test_the_vector_path_is_there_where_the_cpu_has_it(void)
{
#if defined(__x86_64__)
	CHECK(sh_sketch_sort_simd() == !!__builtin_cpu_supports("avx512f"));
#else
	CHECK(sh_sketch_sort_simd() == 0);
#endif
}

/* A text of about n bytes drawn from a few words, so that char n-grams
 * repeat: ASCII only (ascii 1: runs of one-byte windows, the vector keys),
 * mixed with CJK (0: runs of nine and more: the vector bigram keys) and
 * punctuation, or two-byte characters (2: the vector keys of one width). */
static size_t make_text(char *buf, size_t n, int ascii)
{
	static const char *const bits[] = { "the ", "Exam ", "in ", "December ", "ab", "x",
					    "一月", "，", "季", "期末考试期间图书馆" };
	/* runs of two-byte characters: the vector keys of equal widths */
	static const char *const wide[] = { "жизнь", "дом ", "αβγ", "e\xcc\x81\xcc\x96\xcc\x81", "ъ" };
	size_t len = 0, n_bits = ascii == 1 ? 6 : sizeof bits / sizeof bits[0];

	while (len < n) {
		const char *w = ascii == 2 ? wide[test_rnd() % 5] : bits[test_rnd() % n_bits];
		size_t l = strlen(w);
		if (len + l > n)
			break;
		memcpy(buf + len, w, l);
		len += l;
	}
	return len;
}

static void test_near_sketch_keys_same_with_the_vector_paths_off(void)
{
	static char text[4096];
	simhash_near *on = NULL, *off = NULL;

	CHECK(simhash_near_new(&on) == SIMHASH_OK && simhash_near_new(&off) == SIMHASH_OK);
	if (!on || !off)
		goto out;
	sh_sketch_set_simd(off, 0);
	test_rnd_seed(SEED + 1);
	for (size_t n = 0; n < 2100; n++) {
		size_t len = make_text(text, n / 3, (int)(n % 3));
		simhash_sketch a, b;
		CHECK(simhash_near_sketch(on, text, len, &a) == SIMHASH_OK);
		CHECK(simhash_near_sketch(off, text, len, &b) == SIMHASH_OK);
		CHECK_EQ_U64(a.n_keys, b.n_keys);
		CHECK_EQ_U64(a.kind, b.kind);
		if (a.n_keys == b.n_keys && memcmp(a.keys, b.keys, a.n_keys * sizeof *a.keys)) {
			fprintf(stderr, "seed %llx: text of %zu bytes: keys differ\n",
				(unsigned long long)SEED + 1, len);
			CHECK(0);
		}
		for (size_t i = 1; i < a.n_keys; i++)
			if (a.keys[i - 1] >= a.keys[i]) {
				CHECK(a.keys[i - 1] < a.keys[i]);
				break;
			}
	}
out:
	simhash_near_free(on);
	simhash_near_free(off);
}

/* n bytes: ASCII, continuation bytes, lead bytes of 2, 3 and 4 byte
 * sequences and 0xff, in proportions of the seed's choice. */
static void make_bytes(uint8_t *buf, size_t n)
{
	static const uint8_t palette[] = { 'a', ' ', 0x80, 0xbf, 0xa5, 0xc3, 0xe4, 0xf0, 0xff };
	unsigned cont = (unsigned)(test_rnd() % 90);

	for (size_t i = 0; i < n; i++) {
		if (test_rnd() % 100 < cont)
			buf[i] = palette[2 + test_rnd() % 3];
		else
			buf[i] = palette[test_rnd() % sizeof palette];
	}
}

static void test_kind_follows_the_code_point_count(void)
{
	static uint8_t text[1200];
	simhash_near *nd = NULL;
	unsigned failed = 0;

	CHECK(simhash_near_new(&nd) == SIMHASH_OK);
	if (!nd)
		return;
	test_rnd_seed(SEED + 2);
	for (unsigned round = 0; round < 3000; round++) {
		size_t len = round < 1200 ? round : (size_t)(test_rnd() % 1200), n_cp = 0;
		simhash_sketch sk;
		simhash_near_kind want;
		make_bytes(text, len);
		for (size_t i = 0; i < len; i++)
			n_cp += (text[i] & 0xc0) != 0x80;
		want = n_cp <= SIMHASH_NEAR_SHORT ? SIMHASH_NEAR_CHARS : SIMHASH_NEAR_SHINGLES;
		CHECK(simhash_near_sketch(nd, (const char *)text, len, &sk) == SIMHASH_OK);
		if (sk.kind != want && failed++ < 5)
			fprintf(stderr, "seed %llx: round %u: %zu bytes, %zu code points: kind %d\n",
				(unsigned long long)SEED + 2, round, len, n_cp, (int)sk.kind);
	}
	/* exactly at the boundary: 176 code points of 1 to 4 bytes, then one more */
	for (unsigned w = 1; w <= 4; w++) {
		static const char *const cp[] = { "", "a", "\xc3\xa9", "\xe4\xb8\x80",
						  "\xf0\x9f\x98\x80" };
		size_t len = 0;
		simhash_sketch sk;
		for (unsigned i = 0; i < SIMHASH_NEAR_SHORT; i++, len += w)
			memcpy(text + len, cp[w], w);
		CHECK(simhash_near_sketch(nd, (const char *)text, len, &sk) == SIMHASH_OK);
		CHECK(sk.kind == SIMHASH_NEAR_CHARS);
		memcpy(text + len, cp[w], w);
		CHECK(simhash_near_sketch(nd, (const char *)text, len + w, &sk) == SIMHASH_OK);
		CHECK(sk.kind == SIMHASH_NEAR_SHINGLES);
	}
	CHECK(failed == 0);
	simhash_near_free(nd);
}

/* The distinct features simhash_features_each() lists, as keys. */
struct listed {
	uint64_t k[4096];
	size_t n;
	int empty; /* the empty feature was listed */
};

static int list_key(const char *data, size_t len, uint32_t count, void *arg)
{
	struct listed *l = arg;

	(void)count;
	l->empty |= len == 0;
	if (l->n < 4096)
		l->k[l->n++] = XXH3_64bits(data, len);
	return 0;
}

static void test_long_text_keys_are_its_distinct_shingles(void)
{
	static const char *const words[] = { "the", "exam", "period", "in", "December", "is",
					     "long", "ab", "x", "caf\xc3\xa9", "一月", "2.0" };
	static char text[8192];
	static struct listed l;
	simhash_config c;
	simhash_ctx *ctx = NULL;
	simhash_near *nd = NULL;
	unsigned failed = 0;

	/* near.c's config for long texts */
	simhash_config_init(&c);
	c.features = SIMHASH_FEATURES_SHINGLE;
	c.ngram = 3;
	c.tokenizer = SIMHASH_TOKENIZER_SIMPLE;
	c.t2s = 0;
	CHECK(simhash_ctx_new(&c, &ctx) == SIMHASH_OK);
	CHECK(simhash_near_new(&nd) == SIMHASH_OK);
	if (!ctx || !nd)
		goto out;
	test_rnd_seed(SEED + 3);
	for (unsigned round = 0; round < 300; round++) {
		size_t len = 0, want = 0, target = 180 + (size_t)(test_rnd() % 6000);
		/* few distinct words: shingles repeat; every tenth text one long
		 * word (fewer words than a shingle) or no word at all */
		unsigned n_words = 2 + (unsigned)(test_rnd() % 11);
		simhash_sketch sk;
		while (len < target) {
			const char *w = round % 10 == 1 ? "y" : round % 10 == 2 ? " ,. " :
					words[test_rnd() % n_words];
			size_t wl = strlen(w);
			memcpy(text + len, w, wl);
			len += wl;
			if (round % 10 != 1)
				text[len++] = ' ';
		}
		l.n = 0;
		l.empty = 0;
		CHECK(simhash_features_each(ctx, text, len, list_key, &l, NULL) == SIMHASH_OK);
		qsort(l.k, l.n, sizeof *l.k, by_u64);
		for (size_t i = 0; i < l.n; i++)
			if (!want || l.k[i] != l.k[want - 1])
				l.k[want++] = l.k[i];
		if (l.n == 1 && l.empty)
			want = 0; /* a text without features: none, not the empty one */
		CHECK(simhash_near_sketch(nd, text, len, &sk) == SIMHASH_OK);
		if (sk.kind != SIMHASH_NEAR_SHINGLES || sk.n_keys != want ||
		    memcmp(sk.keys, l.k, want * sizeof *l.k)) {
			if (failed++ < 5)
				fprintf(stderr, "seed %llx: round %u: %zu bytes: kind %d, %zu keys, "
					"want %zu\n", (unsigned long long)SEED + 3, round, len,
					(int)sk.kind, sk.n_keys, want);
		}
	}
	CHECK(failed == 0);
out:
	simhash_near_free(nd);
	simhash_ctx_free(ctx);
}

TEST_MAIN("near_sketch", TEST(test_both_paths_sort_like_qsort),
	  TEST(test_both_paths_sort_large_sets_like_qsort),
	  TEST(test_the_vector_path_is_there_where_the_cpu_has_it),
	  TEST(test_near_sketch_keys_same_with_the_vector_paths_off),
	  TEST(test_kind_follows_the_code_point_count),
	  TEST(test_long_text_keys_are_its_distinct_shingles))
