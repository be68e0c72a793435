/* test_idf.c - IDF tables: values and the median default, save/load round
 * trips, both file formats, errors with line numbers, atomic save, digest. */
#define _GNU_SOURCE
#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "test.h"
#include "common/internal.h"

#define SEED 0x1df5eedull
#define JIEBA_IDF "/usr/lib/python3/dist-packages/jieba/analyse/idf.txt"

static uint64_t rng_state;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/test_idf.XXXXXX");
		if (!mkdtemp(tmpdir))
			abort();
	}
	snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
	return buf[k];
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		abort();
}

static char *read_text(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static size_t count_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return (size_t)-1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static int same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static simhash_idf *table_of(const char *const *terms, const double *values, size_t n)
{
	simhash_idf *idf = NULL;

	if (simhash_idf_new(&idf))
		abort();
	for (size_t i = 0; i < n; i++)
		if (simhash_idf_set(idf, terms[i], strlen(terms[i]), values[i]))
			abort();
	return idf;
}

#define S(s) (s), strlen(s)

/* ---------------------------------------------------------------- values */

static void test_set_get_size(void)
{
	static const char *const t[] = {"apple", "banana", "\xe5\x8a\xb3\xe5\x8a\xa8", "a b"};
	static const double v[] = {2.5, 7.25, 13.9, 0.5};
	simhash_idf *idf = table_of(t, v, 4);

	CHECK(simhash_idf_size(idf) == 4);
	CHECK(simhash_idf_get(idf, S("apple")) == 2.5);
	CHECK(simhash_idf_get(idf, S("banana")) == 7.25);
	CHECK(simhash_idf_get(idf, S("\xe5\x8a\xb3\xe5\x8a\xa8")) == 13.9);
	CHECK(simhash_idf_get(idf, S("a b")) == 0.5);
	/* the internal lookup by key gives the same answers */
	CHECK(sh_idf_get_key(idf, sh_key("banana", 6)) == 7.25);
	/* a replaced value leaves one entry */
	CHECK(simhash_idf_set(idf, S("apple"), 3.0) == SIMHASH_OK);
	CHECK(simhash_idf_size(idf) == 4);
	CHECK(simhash_idf_get(idf, S("apple")) == 3.0);
	/* terms are bytes: a prefix is another term */
	CHECK(simhash_idf_get(idf, "apple", 4) != 3.0);
	simhash_idf_free(idf);
}

static void test_bad_arguments(void)
{
	simhash_idf *idf = NULL;

	CHECK(simhash_idf_new(NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_new(&idf) == SIMHASH_OK);
	CHECK(simhash_idf_set(idf, S("x"), NAN) == SIMHASH_EINVAL);
	CHECK(simhash_idf_set(idf, S("x"), INFINITY) == SIMHASH_EINVAL);
	CHECK(simhash_idf_set(idf, S("x"), -INFINITY) == SIMHASH_EINVAL);
	CHECK(simhash_idf_set(idf, NULL, 3, 1.0) == SIMHASH_EINVAL);
	CHECK(simhash_idf_set(NULL, S("x"), 1.0) == SIMHASH_EINVAL);
	CHECK(simhash_idf_size(idf) == 0);
	CHECK(simhash_idf_size(NULL) == 0);
	CHECK(simhash_idf_finish(NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_save(NULL, tmp_path("x"), NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_save(idf, NULL, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_load(NULL, &idf, NULL) == SIMHASH_EINVAL);
	simhash_idf_free(idf);
	simhash_idf_free(NULL);
}

static void test_empty_term_is_a_term(void)
{
	static const char *const t[] = {"", "x"};
	static const double v[] = {4.0, 9.0};
	simhash_idf *idf = table_of(t, v, 2);

	CHECK(simhash_idf_size(idf) == 2);
	CHECK(simhash_idf_get(idf, "", 0) == 4.0);
	CHECK(simhash_idf_get(idf, NULL, 0) == 4.0);
	simhash_idf_free(idf);
}

/* ---------------------------------------------------------------- the median */

static void test_unknown_term_gets_upper_median(void)
{
	static const char *const t[] = {"e", "a", "d", "b", "c"};
	static const double v[] = {5.0, 1.0, 4.0, 2.0, 3.0};
	simhash_idf *idf = NULL;

	/* an empty table answers 1.0 (tf-idf reduces to tf) */
	CHECK(simhash_idf_new(&idf) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("nothing")) == 1.0);
	simhash_idf_free(idf);

	idf = table_of(t, v, 5); /* sorted 1 2 3 4 5: [5 // 2] = 3 */
	CHECK(simhash_idf_get(idf, S("zzz")) == 3.0);
	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("zzz")) == 3.0);
	simhash_idf_free(idf);

	idf = table_of(t, v, 4); /* sorted 1 2 4 5: [4 // 2] = 4, jieba's pick */
	CHECK(simhash_idf_get(idf, S("zzz")) == 4.0);
	simhash_idf_free(idf);

	idf = table_of(t, v, 1); /* one value */
	CHECK(simhash_idf_get(idf, S("zzz")) == 5.0);
	simhash_idf_free(idf);
}

static void test_median_follows_set_without_finish(void)
{
	static const char *const t[] = {"a", "b", "c"};
	static const double v[] = {1.0, 2.0, 3.0};
	simhash_idf *idf = table_of(t, v, 3);

	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("?")) == 2.0);
	/* no finish() after these: the answer must still be right */
	CHECK(simhash_idf_set(idf, S("d"), 10.0) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("?")) == 3.0); /* 1 2 3 10 -> 3 */
	CHECK(simhash_idf_set(idf, S("c"), 0.5) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("?")) == 2.0); /* 0.5 1 2 10 -> 2 */
	/* a negative idf would invert every bit's vote: refused */
	CHECK(simhash_idf_set(idf, S("c"), -1.0) == SIMHASH_EINVAL);
	CHECK(simhash_idf_get(idf, S("c")) == 0.5);
	CHECK(sh_idf_get_key(idf, sh_key("?", 1)) == 2.0);
	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("?")) == 2.0);
	simhash_idf_free(idf);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Values (never negative: set() refuses them) with duplicates, zeros,
 * subnormals and huge numbers:
 * the median must be sorted[n / 2] of a plain qsort. */
static double random_value(void)
{
	static const double special[] = {0.0, 1.0, 0.5, 5e-324, 4e-324, 1e308, 1.7e308, 2.5};
	uint64_t r = rng();

	if (r % 4 == 0)
		return special[(r >> 8) % 8];
	/* a 53-bit integer over 2^53, times 10^-4..10^4 */
	return fabs((double)((int64_t)r >> 11) / 9007199254740992.0) * pow(10.0, (double)((r >> 3) % 9) - 4);
}

static void test_median_matches_sort_reference(void)
{
	double vals[300];
	char term[32];
	int bad = 0;

	rng_state = SEED;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + rng() % 300;
		simhash_idf *idf = NULL;

		if (simhash_idf_new(&idf))
			abort();
		for (size_t i = 0; i < n; i++) {
			vals[i] = random_value();
			snprintf(term, sizeof term, "t%zu", i);
			simhash_idf_set(idf, S(term), vals[i]);
		}
		qsort(vals, n, sizeof vals[0], cmp_double);
		bad += simhash_idf_get(idf, S("absent")) != vals[n / 2]; /* stale path */
		simhash_idf_finish(idf);
		bad += simhash_idf_get(idf, S("absent")) != vals[n / 2]; /* cached */
		simhash_idf_free(idf);
	}
	if (bad)
		fprintf(stderr, "seed %#llx: %d wrong medians\n", (unsigned long long)SEED, bad);
	CHECK(bad == 0);
}

/* ---------------------------------------------------------------- building */

static simhash_ctx *word_ctx(simhash_utf8 utf8)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;

	simhash_config_init(&cfg);
	cfg.features = SIMHASH_FEATURES_WORD;
	cfg.utf8 = utf8;
	if (simhash_ctx_new(&cfg, &ctx))
		abort();
	return ctx;
}

/* Three documents: apple in 2, banana in 2, cherry in 1 (features are case
 * folded words); idf = ln((1 + N) / (1 + df)) + 1. */
static void test_add_document_then_finish(void)
{
	simhash_ctx *ctx = word_ctx(SIMHASH_UTF8_REPLACE);
	simhash_idf *idf = NULL;
	const double two_of_three = log(4.0 / 3.0) + 1.0, one_of_three = log(4.0 / 2.0) + 1.0;

	simhash_idf_new(&idf);
	CHECK(simhash_idf_add_document(idf, ctx, S("Apple banana apple"), NULL) == SIMHASH_OK);
	CHECK(simhash_idf_add_document(idf, ctx, S("banana, CHERRY!"), NULL) == SIMHASH_OK);
	CHECK(simhash_idf_add_document(idf, ctx, S("apple"), NULL) == SIMHASH_OK);
	/* counted, not yet valued: the table still reads as empty */
	CHECK(simhash_idf_size(idf) == 0);
	CHECK(simhash_idf_get(idf, S("apple")) == 1.0);
	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_size(idf) == 3);
	CHECK(simhash_idf_get(idf, S("apple")) == two_of_three);
	CHECK(simhash_idf_get(idf, S("banana")) == two_of_three);
	CHECK(simhash_idf_get(idf, S("cherry")) == one_of_three);
	CHECK(simhash_idf_get(idf, S("Apple")) == two_of_three); /* unknown: the median */
	CHECK(simhash_idf_get(idf, S("durian")) == two_of_three);
	simhash_idf_free(idf);
	simhash_ctx_free(ctx);
}

/* Values set by hand survive finish(); more documents after a finish() count
 * on top of the earlier ones. */
static void test_set_values_survive_finish(void)
{
	simhash_ctx *ctx = word_ctx(SIMHASH_UTF8_REPLACE);
	simhash_idf *idf = NULL;

	simhash_idf_new(&idf);
	CHECK(simhash_idf_add_document(idf, ctx, S("a b"), NULL) == SIMHASH_OK);
	CHECK(simhash_idf_set(idf, S("a"), 9.0) == SIMHASH_OK);
	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_get(idf, S("a")) == 9.0);
	CHECK(simhash_idf_get(idf, S("b")) == log(2.0 / 2.0) + 1.0);
	CHECK(simhash_idf_add_document(idf, ctx, S("c"), NULL) == SIMHASH_OK);
	CHECK(simhash_idf_add_document(idf, ctx, S("c a"), NULL) == SIMHASH_OK);
	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_size(idf) == 3);
	CHECK(simhash_idf_get(idf, S("a")) == 9.0);
	CHECK(simhash_idf_get(idf, S("b")) == log(4.0 / 2.0) + 1.0);
	CHECK(simhash_idf_get(idf, S("c")) == log(4.0 / 3.0) + 1.0);
	simhash_idf_free(idf);
	simhash_ctx_free(ctx);
}

/* A document the ctx rejects counts for nothing: neither N nor any of its
 * features. (Today features_each() validates before its first callback; idf.c
 * also collects a document's features before counting any, so a failure
 * mid-document could not leave half a document counted either.) */
static void test_rejected_document_counts_nothing(void)
{
	simhash_ctx *ctx = word_ctx(SIMHASH_UTF8_REJECT);
	simhash_idf *idf = NULL;

	simhash_idf_new(&idf);
	CHECK(simhash_idf_add_document(idf, ctx, S("x y"), NULL) == SIMHASH_OK);
	CHECK(simhash_idf_add_document(idf, ctx, S("x y z \xff w"), NULL) == SIMHASH_EUTF8);
	CHECK(simhash_idf_add_document(idf, NULL, S("x"), NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_add_document(idf, ctx, NULL, 3, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_add_document(NULL, ctx, S("x"), NULL) == SIMHASH_EINVAL);
	CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
	CHECK(simhash_idf_size(idf) == 2); /* x and y; no z, no w */
	CHECK(simhash_idf_get(idf, S("x")) == 1.0); /* ln(2/2) + 1: N is still 1 */
	simhash_idf_free(idf);
	simhash_ctx_free(ctx);
}

/* ---------------------------------------------------------------- digest */

static void test_digest_independent_of_insertion_order(void)
{
	enum { N = 1000 };
	static char terms[N][16];
	static double vals[N];
	size_t order[N];
	simhash_idf *a = NULL, *b = NULL;
	uint64_t d;

	rng_state = SEED + 1;
	for (size_t i = 0; i < N; i++) {
		snprintf(terms[i], sizeof terms[i], "w%zu", i);
		vals[i] = random_value();
		order[i] = i;
	}
	for (size_t i = N - 1; i > 0; i--) { /* Fisher-Yates */
		size_t j = rng() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	simhash_idf_new(&a);
	simhash_idf_new(&b);
	for (size_t i = 0; i < N; i++) {
		simhash_idf_set(a, S(terms[i]), vals[i]);
		simhash_idf_set(b, S(terms[order[i]]), vals[order[i]]);
	}
	d = simhash_idf_digest(a);
	CHECK_EQ_U64(simhash_idf_digest(b), d);
	/* one value one ulp off */
	simhash_idf_set(b, S(terms[17]), nextafter(vals[17], INFINITY));
	CHECK(simhash_idf_digest(b) != d);
	simhash_idf_set(b, S(terms[17]), vals[17]);
	CHECK_EQ_U64(simhash_idf_digest(b), d);
	/* swapping two values between terms */
	simhash_idf_set(b, S(terms[1]), vals[2]);
	simhash_idf_set(b, S(terms[2]), vals[1]);
	CHECK(vals[1] == vals[2] || simhash_idf_digest(b) != d);
	simhash_idf_set(b, S(terms[1]), vals[1]);
	simhash_idf_set(b, S(terms[2]), vals[2]);
	/* one more term */
	simhash_idf_set(b, S("extra"), 1.0);
	CHECK(simhash_idf_digest(b) != d);
	simhash_idf_free(a);
	simhash_idf_free(b);
}

static void test_digest_of_empty_tables_and_null(void)
{
	simhash_idf *a = NULL, *b = NULL;

	simhash_idf_new(&a);
	simhash_idf_new(&b);
	CHECK_EQ_U64(simhash_idf_digest(a), simhash_idf_digest(b));
	simhash_idf_set(b, "", 0, 1.0);
	CHECK(simhash_idf_digest(a) != simhash_idf_digest(b));
	CHECK_EQ_U64(simhash_idf_digest(NULL), 0);
	simhash_idf_free(a);
	simhash_idf_free(b);
}

/* ---------------------------------------------------------------- save and load */

static void test_save_writes_sorted_exact_lines(void)
{
	static const char *const t[] = {"zeta", "alpha", "a b", "\xe4\xb8\xad", "", "alphabet"};
	static const double v[] = {0.1, 2.0, 3.5, 1e-300, 7.0, 1.0 / 3.0};
	simhash_idf *idf = table_of(t, v, 6);
	const char *path = tmp_path("sorted.idf");
	struct stat st;

	CHECK(simhash_idf_save(idf, path, NULL) == SIMHASH_OK);
	CHECK_STR(read_text(path), "\t7\n"
				   "a b\t3.5\n"
				   "alpha\t2\n"
				   "alphabet\t0.33333333333333331\n"
				   "zeta\t0.10000000000000001\n"
				   "\xe4\xb8\xad\t1e-300\n");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	/* nothing but the file itself is left in the directory */
	CHECK(count_dir_entries(tmpdir) == 1);
	unlink(path);
	simhash_idf_free(idf);
}

static void test_save_load_round_trip_is_exact(void)
{
	enum { N = 2000 };
	const char *path = tmp_path("round.idf");
	simhash_idf *a = NULL, *b = NULL;
	char term[64];
	simhash_error e = { .line = 99 };
	int bad = 0;

	rng_state = SEED + 2;
	simhash_idf_new(&a);
	for (int i = 0; i < N; i++) {
		/* spaces inside terms, CJK bytes, a trailing space, a '\r' inside */
		snprintf(term, sizeof term, "%s%d%s", i % 3 ? "t " : "\xe8\xaf\x8d", i,
			 i % 7 ? "" : (i % 2 ? " " : "\rx"));
		simhash_idf_set(a, S(term), random_value());
	}
	simhash_idf_set(a, "", 0, 0.25);
	simhash_idf_set(a, "nul\0byte", 8, 0.75);
	CHECK(simhash_idf_save(a, path, NULL) == SIMHASH_OK);
	CHECK(simhash_idf_load(path, &b, &e) == SIMHASH_OK);
	CHECK(e.line == 99); /* the detail is left as it was on success */
	CHECK(b != NULL);
	if (!b)
		goto out;
	CHECK(simhash_idf_size(b) == simhash_idf_size(a));
	CHECK_EQ_U64(simhash_idf_digest(b), simhash_idf_digest(a));
	rng_state = SEED + 2;
	for (int i = 0; i < N; i++) {
		snprintf(term, sizeof term, "%s%d%s", i % 3 ? "t " : "\xe8\xaf\x8d", i,
			 i % 7 ? "" : (i % 2 ? " " : "\rx"));
		bad += !same_bits(simhash_idf_get(b, S(term)), random_value());
	}
	CHECK(bad == 0);
	CHECK(simhash_idf_get(b, "nul\0byte", 8) == 0.75);
	CHECK(simhash_idf_get(b, "", 0) == 0.25);
	CHECK(same_bits(simhash_idf_get(b, S("absent")), simhash_idf_get(a, S("absent"))));
out:
	unlink(path);
	simhash_idf_free(a);
	simhash_idf_free(b);
}

static void test_save_skips_terms_that_cannot_round_trip(void)
{
	static const char *const t[] = {"tab\there", "new\nline", "#hash", "ok", ("\xef\xbb\xbf" "bom"),
					"in#side"};
	static const double v[] = {1, 2, 3, 4, 5, 6};
	simhash_idf *idf = table_of(t, v, 6), *back = NULL;
	const char *path = tmp_path("skip.idf");

	CHECK(simhash_idf_save(idf, path, NULL) == SIMHASH_OK);
	CHECK_STR(read_text(path), "in#side\t6\nok\t4\n");
	CHECK(simhash_idf_load(path, &back, NULL) == SIMHASH_OK);
	CHECK(simhash_idf_size(back) == 2);
	unlink(path);
	simhash_idf_free(idf);
	simhash_idf_free(back);
}

static void test_load_jieba_and_tab_formats(void)
{
	static const char text[] =
		"\xef\xbb\xbf# an IDF table in both formats\r\n"
		"\xe5\x8a\xb3\xe5\x8a\xa8\xe9\x98\xb2\xe6\x8a\xa4 13.900677652\n" /* jieba */
		"\n"
		"new york 7.5\r\n"      /* jieba: split at the last space */
		"   \t \r\n"             /* blank */
		"a b\t2.5\r\n"           /* tab, term with a space */
		"x\t  1e-3\n"            /* spaces before the number */
		"  lead 4\n"             /* the term keeps its leading spaces */
		"dup 1\n"
		"dup 2\n"                /* a later line replaces */
		"#not a term 5\n"
		"last\t0x1p-2";          /* no final newline; C99 hex float */
	const char *path = tmp_path("both.idf");
	simhash_idf *idf = NULL;
	simhash_error e = { .line = 77 };

	write_file(path, text, sizeof text - 1);
	CHECK(simhash_idf_load(path, &idf, &e) == SIMHASH_OK);
	CHECK(e.line == 77);
	if (!idf)
		return;
	CHECK(simhash_idf_size(idf) == 7);
	CHECK(simhash_idf_get(idf, S("\xe5\x8a\xb3\xe5\x8a\xa8\xe9\x98\xb2\xe6\x8a\xa4")) ==
	      13.900677652);
	CHECK(simhash_idf_get(idf, S("new york")) == 7.5);
	CHECK(simhash_idf_get(idf, S("a b")) == 2.5);
	CHECK(simhash_idf_get(idf, S("x")) == 1e-3);
	CHECK(simhash_idf_get(idf, S("  lead")) == 4.0);
	CHECK(simhash_idf_get(idf, S("dup")) == 2.0);
	CHECK(simhash_idf_get(idf, S("last")) == 0.25);
	/* sorted: 0.001 0.25 2 2.5 4 7.5 13.9 -> [3] = 2.5 */
	CHECK(simhash_idf_get(idf, S("#not a term")) == 2.5);
	CHECK(simhash_idf_get(idf, S("new")) == 2.5);
	unlink(path);
	simhash_idf_free(idf);
}

static void test_load_errors_give_the_line(void)
{
	static const struct {
		const char *text;
		size_t line;
	} bad[] = {
		{"a 1\nb 2\n# c\n\nnoseparator\nf 3\n", 5},
		{"a 1\nb abc\n", 2},
		{"a 1\r\nb 2\r\nc inf\r\n", 3},
		{"a nan\n", 1},
		{"a 1.5x\n", 1},
		{"a 1.5 \n", 1},  /* split at the last space: empty number */
		{"a\t\n", 1},
		{"a\t1\tb\n", 1},   /* split at the last tab: "b" */
		{"a 1e999\n", 1},   /* overflows to inf */
		{"a 1\nb 0x\n", 2},
		{"\xef\xbb\xbf" "bad\n", 1}, /* the BOM does not shift line numbers */
		{"a 1\nb\t-2.5\n", 2},  /* negative: would invert every bit */
		{"a 1\nb 2\nc -1e-300\n", 3},
	};
	const char *path = tmp_path("bad.idf");

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		simhash_idf *idf = (simhash_idf *)&bad; /* must stay untouched */
		simhash_error e = { 0 };

		write_file(path, bad[i].text, strlen(bad[i].text));
		CHECK(simhash_idf_load(path, &idf, &e) == SIMHASH_ECORRUPT);
		if (e.line != bad[i].line)
			fprintf(stderr, "case %zu: line %llu, expected %zu\n", i,
				(unsigned long long)e.line, bad[i].line);
		CHECK(e.line == bad[i].line);
		CHECK(e.code == SIMHASH_ECORRUPT && e.os_err == 0 && e.msg[0]);
		CHECK(idf == (simhash_idf *)&bad);
		CHECK(simhash_idf_load(path, &idf, NULL) == SIMHASH_ECORRUPT);
	}
	unlink(path);
}

static void test_load_missing_or_unreadable_is_eio(void)
{
	simhash_idf *idf = NULL;
	simhash_error e = { .line = 5 };

	CHECK(simhash_idf_load(tmp_path("does-not-exist"), &idf, &e) == SIMHASH_EIO);
	CHECK(e.code == SIMHASH_EIO && e.os_err == ENOENT && e.line == 0);
	CHECK(idf == NULL);
	CHECK(simhash_idf_load(tmpdir, &idf, &e) == SIMHASH_EIO); /* a directory */
	CHECK(e.os_err == EISDIR);
	CHECK(idf == NULL);
}

static void test_load_empty_file(void)
{
	const char *path = tmp_path("empty.idf");
	simhash_idf *idf = NULL;

	write_file(path, "", 0);
	CHECK(simhash_idf_load(path, &idf, NULL) == SIMHASH_OK);
	CHECK(simhash_idf_size(idf) == 0);
	CHECK(simhash_idf_get(idf, S("x")) == 1.0);
	unlink(path);
	simhash_idf_free(idf);
}

static void test_save_into_missing_dir_fails_and_leaves_nothing(void)
{
	static const char *const t[] = {"a"};
	static const double v[] = {1.0};
	simhash_idf *idf = table_of(t, v, 1);
	char path[300];
	struct stat st;
	simhash_error e;

	snprintf(path, sizeof path, "%s/no-such-dir/out.idf", tmpdir);
	CHECK(simhash_idf_save(idf, path, &e) == SIMHASH_EIO);
	CHECK(e.code == SIMHASH_EIO && e.os_err == ENOENT);
	CHECK(stat(tmp_path("no-such-dir"), &st) != 0);
	CHECK(count_dir_entries(tmpdir) == 0);
	simhash_idf_free(idf);
}

static void test_save_replaces_atomically_and_cleans_up_on_error(void)
{
	static const char *const t[] = {"new"};
	static const double v[] = {2.0};
	simhash_idf *idf = table_of(t, v, 1);
	const char *path = tmp_path("old.idf");
	const char *dir = tmp_path("a-dir");

	write_file(path, "old 1\nold2 3\n", 13);
	CHECK(simhash_idf_save(idf, path, NULL) == SIMHASH_OK);
	CHECK_STR(read_text(path), "new\t2\n");
	CHECK(count_dir_entries(tmpdir) == 1);
	/* rename onto a non-empty directory fails: the temp file must go */
	CHECK(mkdir(dir, 0755) == 0);
	write_file(tmp_path("a-dir/keep"), "x", 1);
	CHECK(simhash_idf_save(idf, dir, NULL) == SIMHASH_EIO);
	CHECK(count_dir_entries(tmpdir) == 2); /* old.idf and a-dir */
	unlink(tmp_path("a-dir/keep"));
	rmdir(dir);
	unlink(path);
	simhash_idf_free(idf);
}

/* Numbers in files: short decimals take a fast path, the rest strtod; both
 * must give exactly strtod's double. Random digits, '+' signs, points and
 * exponents around the fast path's limits (2^53, 10^22). */
static void random_number_text(char *buf, size_t cap)
{
	static const char *const exps[] = {"", "e0", "e22", "e-22", "e23", "E-23", "e+5", "e-300"};
	char digits[24];
	uint64_t r = rng();
	size_t n = 1 + rng() % 20, point = rng() % (n + 1);

	for (size_t i = 0; i < n; i++)
		digits[i] = (char)('0' + rng() % 10);
	digits[n] = '\0';
	/* no '-': load() refuses negative values (test_load_errors_give_the_line) */
	snprintf(buf, cap, "%s%.*s%s%s%s", r & 2 ? "+" : "", (int)point, digits,
		 point < n || (r & 4) ? "." : "", digits + point, exps[(r >> 3) % 8]);
}

static void test_loaded_numbers_equal_strtod(void)
{
	enum { N = 5000 };
	static char text[N * 48];
	const char *path = tmp_path("numbers.idf");
	simhash_idf *idf = NULL;
	size_t off = 0;
	int bad = 0;

	rng_state = SEED + 3;
	for (int i = 0; i < N; i++) {
		char num[40];

		random_number_text(num, sizeof num);
		off += (size_t)snprintf(text + off, sizeof text - off, "t%d %s\n", i, num);
	}
	write_file(path, text, off);
	CHECK(simhash_idf_load(path, &idf, NULL) == SIMHASH_OK);
	rng_state = SEED + 3;
	for (int i = 0; i < N && idf; i++) {
		char num[40], term[16];
		double want;

		random_number_text(num, sizeof num);
		want = strtod(num, NULL);
		snprintf(term, sizeof term, "t%d", i);
		if (!same_bits(simhash_idf_get(idf, S(term)), want) && bad++ < 5)
			fprintf(stderr, "%s: %.17g, strtod %.17g\n", num,
				simhash_idf_get(idf, S(term)), want);
	}
	if (bad)
		fprintf(stderr, "seed %#llx: %d numbers differ\n", (unsigned long long)SEED + 3, bad);
	CHECK(bad == 0);
	unlink(path);
	simhash_idf_free(idf);
}

/* In a locale with a decimal comma, files still use '.', both for short
 * numbers (fast path) and 17-digit ones (strtod). Skipped, and said so, when
 * the system has no such locale (try LOCPATH with a localedef'd de_DE). */
static void test_files_ignore_the_process_locale(void)
{
	static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "ru_RU.UTF-8"};
	static const char *const t[] = {"a", "b"};
	static const double v[] = {2.5, 0.1};
	simhash_idf *idf = table_of(t, v, 2), *back = NULL;
	const char *path = tmp_path("locale.idf");
	const char *got = NULL;

	for (size_t i = 0; i < 4 && !got; i++)
		if (setlocale(LC_NUMERIC, names[i]) && strcmp(localeconv()->decimal_point, ","))
			setlocale(LC_NUMERIC, "C");
		else if (setlocale(LC_NUMERIC, NULL) && !strcmp(localeconv()->decimal_point, ","))
			got = names[i];
	if (!got) {
		printf("test_files_ignore_the_process_locale: no decimal-comma locale, skipped\n");
		simhash_idf_free(idf);
		return;
	}
	CHECK(simhash_idf_save(idf, path, NULL) == SIMHASH_OK);
	CHECK_STR(read_text(path), "a\t2.5\nb\t0.10000000000000001\n");
	CHECK(simhash_idf_load(path, &back, NULL) == SIMHASH_OK);
	CHECK(simhash_idf_get(back, S("a")) == 2.5);
	CHECK(simhash_idf_get(back, S("b")) == 0.1);
	setlocale(LC_NUMERIC, "C");
	unlink(path);
	simhash_idf_free(idf);
	simhash_idf_free(back);
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* jieba's own table (Debian python3-jieba): 270132 lines, all terms distinct;
 * Python's sorted(values)[n // 2] is 11.9547675029. Skipped without the file.
 * The load time is printed, not checked: speed belongs to `make bench`. */
static void test_load_jieba_idf_txt_fast(void)
{
	simhash_idf *idf = NULL;
	double best = 1e9;

	if (access(JIEBA_IDF, R_OK) != 0) {
		printf("test_load_jieba_idf_txt_fast: %s missing, skipped\n", JIEBA_IDF);
		return;
	}
	for (int i = 0; i < 3; i++) {
		double t0 = cpu_seconds(), secs;

		simhash_idf_free(idf);
		idf = NULL;
		CHECK(simhash_idf_load(JIEBA_IDF, &idf, NULL) == SIMHASH_OK);
		secs = cpu_seconds() - t0;
		best = secs < best ? secs : best;
	}
	printf("loading jieba's idf.txt: %.3f s of CPU (best of 3)\n", best);
	CHECK(simhash_idf_size(idf) == 270132);
	CHECK(simhash_idf_get(idf, S("\xe5\x8a\xb3\xe5\x8a\xa8\xe9\x98\xb2\xe6\x8a\xa4")) ==
	      13.900677652); /* 劳动防护, line 1 */
	CHECK(simhash_idf_get(idf, S("\xe5\xb2\x97\xe4\xb8\x8a")) == 11.5027823792); /* 岗上 */
	CHECK(simhash_idf_get(idf, S("not-a-chinese-word")) == 11.9547675029);
	simhash_idf_free(idf);
}

static void cleanup(void)
{
	if (tmpdir[0])
		rmdir(tmpdir);
}

static void test_zz_tmpdir_is_empty(void)
{
	CHECK(count_dir_entries(tmpdir) == 0);
	cleanup();
}

TEST_MAIN("idf",
	  TEST(test_set_get_size),
	  TEST(test_bad_arguments),
	  TEST(test_empty_term_is_a_term),
	  TEST(test_unknown_term_gets_upper_median),
	  TEST(test_median_follows_set_without_finish),
	  TEST(test_median_matches_sort_reference),
	  TEST(test_add_document_then_finish),
	  TEST(test_set_values_survive_finish),
	  TEST(test_rejected_document_counts_nothing),
	  TEST(test_digest_independent_of_insertion_order),
	  TEST(test_digest_of_empty_tables_and_null),
	  TEST(test_save_writes_sorted_exact_lines),
	  TEST(test_save_load_round_trip_is_exact),
	  TEST(test_save_skips_terms_that_cannot_round_trip),
	  TEST(test_load_jieba_and_tab_formats),
	  TEST(test_load_errors_give_the_line),
	  TEST(test_load_missing_or_unreadable_is_eio),
	  TEST(test_load_empty_file),
	  TEST(test_save_into_missing_dir_fails_and_leaves_nothing),
	  TEST(test_save_replaces_atomically_and_cleans_up_on_error),
	  TEST(test_loaded_numbers_equal_strtod),
	  TEST(test_files_ignore_the_process_locale),
	  TEST(test_load_jieba_idf_txt_fast),
	  TEST(test_zz_tmpdir_is_empty))
