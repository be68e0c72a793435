/* test_interrupt.c - the interrupt hook (simhash_ctx_set_interrupt()).
 *
 * For every long path (the v1 char n-grams, the v2 default, weighted votes,
 * the ICU and simple tokenizers, shingles with MD5, HTML cleaning, the
 * repeat rule, the Python compatibility mode with and without its SIMD MD5,
 * streaming, the library's own streaming of a long text, text similarity,
 * caller features, simhash_features_each and IDF counting) on a text of some
 * 60 KB mixing English, Chinese, combining marks, markup and invalid bytes:
 *  1. a hook that never fires changes nothing: the fingerprint is a fresh
 *     ctx's without a hook, and the hook was asked at least once per 1 Ki
 *     units of work (the interval is made tiny here: 1 Ki units instead of
 *     256 Ki, loops reporting every 256);
 *  2. for each N below the number P of polls of the whole call, a hook that
 *     fires at poll N stops the call with SIMHASH_EINTR, is not asked again
 *     by that call (nothing went on after it), and leaves the output as it
 *     was; the same ctx then fingerprints another text exactly as a fresh ctx
 *     does. Under `make asan` nothing it allocated leaks.
 */
#include <stdint.h>
#include "test.h"
#include "simhash.h"

void sh_ctx_set_intr_every(simhash_ctx *ctx, size_t every, size_t step);
void sh_ctx_set_simd(simhash_ctx *ctx, int on);
simhash_err sh_ctx_set_stream(simhash_ctx *ctx, size_t slice, size_t min_chars);

#define STEP 1024

/* The hook's state: it answers "stop" at its fire_at-th call (0: the first),
 * never when fire_at is SIZE_MAX, and counts the calls after it fired. */
struct hook {
	size_t calls, fire_at, after;
	int fired;
};

static int hook_fn(void *arg)
{
	struct hook *h = arg;

	if (h->fired) {
		h->after++;
		return 0;
	}
	if (h->calls++ == h->fire_at) {
		h->fired = 1;
		return 1;
	}
	return 0;
}

static const char *const pieces[] = {
	"the ", "council ", "approved ", "bicycle ", "lanes ", "on ", "Tuesday, ", "42 ",
	"r\xc3\xa9sum\xc3\xa9 ", "e\xcc\x81\xcc\xa3 ", /* e + acute + dot below */
	"\xe4\xbb\x8a\xe5\xa4\xa9\xe5\xa4\xa9\xe6\xb0\x94", /* jintian tianqi */
	"\xe5\xbe\x88\xe5\xa5\xbd\xef\xbc\x8c",             /* hen hao, fullwidth comma */
	"\xe9\x80\x99\xe6\x98\xaf ",                        /* traditional zhe shi */
	"<b>", "</p>\n", "<!-- note -->", "&amp; ", "&#x4e2d;", "<script>x=1</script>",
	"\xef\xbc\xa1\xef\xbc\xa2 ", "Stra\303\237e ", "\xce\xa3\xce\xbf\xcf\x86 ",
	"\xf0\x9f\x98\x80 ", "\xff ", "aaaaaaa ", "\n",
};

/* A text of about len bytes of random pieces, with the words numbered now
 * and then so that shingles and n-grams are mostly distinct. */
static size_t make_text(char *buf, size_t len, uint64_t seed)
{
	size_t k = 0, np = sizeof pieces / sizeof *pieces;

	test_rnd_seed(seed);
	while (k + 40 < len) {
		const char *p = pieces[test_rnd() % np];
		size_t l = strlen(p);
		memcpy(buf + k, p, l);
		k += l;
		if (test_rnd() % 4 == 0)
			k += (size_t)snprintf(buf + k, len - k, "w%u ", (unsigned)(test_rnd() % 100000));
	}
	buf[k] = '\0';
	return k;
}

enum kind { FP, STREAM, SIMILARITY, FEATURES, EACH, IDF };

struct path {
	const char *name;
	const char *opts; /* name=value pairs for simhash_config_set, ';'-separated */
	enum kind kind;
	int no_simd;
};

static const struct path paths[] = {
	{ "v1 char n-grams", "features=char", FP, 0 },
	{ "v2 default", "", FP, 0 },
	{ "v2 default, scalar", "", FP, 1 },
	{ "weighted char n-grams", "features=char;weight=logtf", FP, 0 },
	{ "ICU words", "features=word;tokenizer=icu", FP, 0 },
	{ "md5 shingles", "features=shingle;hash=md5;ngram=2", FP, 0 },
	{ "html", "html", FP, 0 },
	{ "max repeat, 128 bits", "max-repeat=2;bits=128", FP, 0 },
	{ "compat", "compat=python-simhash", FP, 0 },
	{ "compat scalar", "compat=python-simhash;bits=128", FP, 1 },
	{ "stream v2 default", "", STREAM, 0 },
	{ "stream char", "features=char", STREAM, 0 },
	{ "stream binary words", "features=word;weight=binary", STREAM, 0 },
	{ "stream compat", "compat=python-simhash", STREAM, 0 },
	{ "similarity shingles", "features=shingle", SIMILARITY, 0 },
	{ "similarity char", "features=char;ngram=4", SIMILARITY, 0 },
	{ "caller features", "features=char", FEATURES, 0 },
	{ "caller features, compat", "compat=python-simhash", FEATURES, 0 },
	{ "features_each", "features=word", EACH, 0 },
	{ "idf documents", "features=shingle", IDF, 0 },
};

static simhash_ctx *new_ctx(const struct path *p)
{
	simhash_config cfg;
	simhash_ctx *ctx = NULL;
	char opts[128], *save = NULL;

	simhash_config_init(&cfg);
	snprintf(opts, sizeof opts, "%s", p->opts);
	for (char *tok = strtok_r(opts, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq++ = '\0';
		CHECK(simhash_config_set(&cfg, tok, eq) == SIMHASH_OK);
	}
	simhash_config_settle_features(&cfg, strstr(p->opts, "features") != NULL);
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	if (ctx && p->no_simd)
		sh_ctx_set_simd(ctx, 0);
	if (ctx && p->kind == STREAM)
		CHECK(sh_ctx_set_stream(ctx, 4096, 1024) == SIMHASH_OK);
	return ctx;
}

/* Caller features: every word of text with its length as its weight. */
static size_t split_features(const char *text, size_t len, simhash_feature *f, size_t cap)
{
	size_t n = 0, i = 0;

	while (i < len && n < cap) {
		size_t j = i;
		while (j < len && text[j] != ' ')
			j++;
		f[n].data = text + i;
		f[n].len = j - i;
		f[n].weight = (double)(j - i) + 0.5 * (n % 3);
		n++;
		i = j + 1;
	}
	return n;
}

static int count_each(const char *data, size_t len, uint32_t count, void *arg)
{
	(void)data;
	*(uint64_t *)arg += len * 31 + count;
	return 0;
}

/* What one call of path p gives for text: a fingerprint (a, b: cosine and
 * Jaccard bits for similarity, the feature digest for each, the table's
 * size for idf); the text's second half is the other text of similarity. */
struct result {
	simhash_fp fp;
	double cosine, jaccard;
	uint64_t each;
	size_t idf_size;
};

static simhash_err run(simhash_ctx *ctx, const struct path *p, const char *text, size_t len,
		       struct result *r, simhash_feature *feats, size_t feats_cap)
{
	simhash_err err, end_err;
	simhash_idf *idf = NULL;
	size_t n;

	switch (p->kind) {
	case FP:
		return simhash_fingerprint(ctx, text, len, &r->fp, NULL);
	case STREAM:
		err = simhash_fingerprint_begin(ctx);
		/* pieces of 3000 bytes: interrupted within one, or in final */
		for (size_t off = 0; off < len && !err; off += 3000)
			err = simhash_fingerprint_update(ctx, text + off, len - off < 3000 ? len - off : 3000, NULL);
		end_err = simhash_fingerprint_final(ctx, &r->fp, NULL);
		CHECK(!err || end_err == err); /* the first error again */
		return end_err;
	case SIMILARITY:
		return simhash_text_similarity(ctx, text, len / 2, text + len / 2, len - len / 2,
					       &r->cosine, &r->jaccard, NULL);
	case FEATURES:
		n = split_features(text, len, feats, feats_cap);
		return simhash_fingerprint_features(ctx, feats, n, &r->fp);
	case EACH:
		r->each = 0;
		return simhash_features_each(ctx, text, len, count_each, &r->each, NULL);
	case IDF:
		/* an interrupted document counts nothing */
		CHECK(simhash_idf_new(&idf) == SIMHASH_OK);
		err = simhash_idf_add_document(idf, ctx, text, len, NULL);
		CHECK(simhash_idf_finish(idf) == SIMHASH_OK);
		r->idf_size = simhash_idf_size(idf);
		simhash_idf_free(idf);
		return err;
	}
	return SIMHASH_EINVAL;
}

static int same(const struct result *a, const struct result *b)
{
	return a->fp.bits == b->fp.bits && a->fp.w[0] == b->fp.w[0] && a->fp.w[1] == b->fp.w[1] &&
	       memcmp(&a->cosine, &b->cosine, sizeof a->cosine) == 0 &&
	       memcmp(&a->jaccard, &b->jaccard, sizeof a->jaccard) == 0 && a->each == b->each &&
	       a->idf_size == b->idf_size;
}

static const struct result sentinel = { { { 0xdeadbeefu, 0xfeedu }, 77 }, -3.0, -4.0, 0, 0 };

static size_t check_path(const struct path *p, const char *t1, size_t len1, const char *t2,
			 size_t len2, simhash_feature *feats, size_t feats_cap)
{
	simhash_ctx *fresh = new_ctx(p), *ctx = new_ctx(p);
	struct result want1 = sentinel, want2 = sentinel, got;
	struct hook h = { 0, SIZE_MAX, 0, 0 };
	size_t polls = 0, stride, min;

	if (!fresh || !ctx)
		goto out;
	CHECK(run(fresh, p, t1, len1, &want1, feats, feats_cap) == SIMHASH_OK);
	CHECK(run(fresh, p, t2, len2, &want2, feats, feats_cap) == SIMHASH_OK);
	CHECK(p->kind == IDF ? want1.idf_size > 0 : !same(&want1, &sentinel));

	/* 1. never fires: the same result, after many polls */
	sh_ctx_set_intr_every(ctx, STEP, STEP / 4);
	CHECK(simhash_ctx_set_interrupt(ctx, hook_fn, &h) == SIMHASH_OK);
	got = sentinel;
	CHECK(run(ctx, p, t1, len1, &got, feats, feats_cap) == SIMHASH_OK);
	CHECK(same(&got, &want1));
	polls = h.calls;
	/* a poll every STEP units: bytes, characters, or (caller features)
	 * words of some nine bytes; most paths go over the text more than once.
	 * A report asks the hook at most once: streams report a 4 KiB slice at
	 * a time. */
	min = p->kind == STREAM ? len1 / 4096 : len1 / STEP / (p->kind == FEATURES ? 9 : 1);
	if (polls < min || getenv("TEST_VERBOSE"))
		fprintf(stderr, "%s: %zu polls for %zu bytes\n", p->name, polls, len1);
	CHECK(polls >= min);

	/* 2. fires at poll N: stopped there, then the ctx is as good as new
	 * (at most about 40 values of N per path, the first and last included) */
	stride = polls / 40 + 1;
	for (size_t n = 0; n < polls;
	     n = n + stride < polls || n == polls - 1 ? n + stride : polls - 1) {
		simhash_err err;
		h = (struct hook){ 0, n, 0, 0 };
		CHECK(simhash_ctx_set_interrupt(ctx, hook_fn, &h) == SIMHASH_OK);
		got = sentinel;
		err = run(ctx, p, t1, len1, &got, feats, feats_cap);
		if (err != SIMHASH_EINTR || h.after != 0)
			fprintf(stderr, "%s: fired at poll %zu of %zu: %s, asked %zu times after\n",
				p->name, n, polls, simhash_strerror(err), h.after);
		CHECK(err == SIMHASH_EINTR);
		CHECK(h.fired && h.after == 0);
		if (p->kind != EACH)
			CHECK(same(&got, &sentinel));
		got = sentinel;
		CHECK(run(ctx, p, t2, len2, &got, feats, feats_cap) == SIMHASH_OK);
		CHECK(same(&got, &want2));
	}
	/* the hook removed: as without one */
	CHECK(simhash_ctx_set_interrupt(ctx, NULL, NULL) == SIMHASH_OK);
	got = sentinel;
	CHECK(run(ctx, p, t1, len1, &got, feats, feats_cap) == SIMHASH_OK);
	CHECK(same(&got, &want1));
out:
	simhash_ctx_free(fresh);
	simhash_ctx_free(ctx);
	return polls;
}

static void test_every_path_stops_at_every_poll_and_recovers(void)
{
	enum { LEN1 = 60000, LEN2 = 9000, FEATS = 20000 };
	char *t1 = malloc(LEN1 + 64), *t2 = malloc(LEN2 + 64);
	simhash_feature *feats = malloc(FEATS * sizeof *feats);
	size_t len1 = make_text(t1, LEN1, 1), len2 = make_text(t2, LEN2, 2);

	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
		check_path(&paths[i], t1, len1, t2, len2, feats, FEATS);
	free(t1);
	free(t2);
	free(feats);
}

/* A text long enough for simhash_fingerprint() to stream it itself (8 MiB),
 * with the default poll interval: stopped at the third poll, about 768 KiB
 * in; then a short text as a fresh ctx gives it. */
static void test_long_text_with_default_intervals(void)
{
	size_t len = (size_t)9 << 20, len2;
	char *t = malloc(len + 64), t2[2048];
	simhash_config cfg;
	simhash_ctx *ctx = NULL, *fresh = NULL;
	struct hook h = { 0, 2, 0, 0 };
	simhash_fp fp = sentinel.fp, want, got;

	for (size_t k = 0; k < len; k += 64)
		snprintf(t + k, 65, "%-63u\n", (unsigned)(k * 2654435761u));
	len2 = make_text(t2, sizeof t2 - 64, 3);
	simhash_config_init(&cfg);
	CHECK(simhash_ctx_new(&cfg, &ctx) == SIMHASH_OK);
	CHECK(simhash_ctx_new(&cfg, &fresh) == SIMHASH_OK);
	CHECK(simhash_ctx_set_interrupt(ctx, hook_fn, &h) == SIMHASH_OK);
	CHECK(simhash_fingerprint(ctx, t, len, &fp, NULL) == SIMHASH_EINTR);
	CHECK(h.calls == 3 && h.after == 0);
	CHECK(fp.w[0] == sentinel.fp.w[0] && fp.bits == sentinel.fp.bits);
	CHECK(simhash_fingerprint(fresh, t2, len2, &want, NULL) == SIMHASH_OK);
	CHECK(simhash_fingerprint(ctx, t2, len2, &got, NULL) == SIMHASH_OK);
	CHECK(got.w[0] == want.w[0] && got.w[1] == want.w[1] && got.bits == want.bits);
	simhash_ctx_free(ctx);
	simhash_ctx_free(fresh);
	free(t);
}

static void test_errors(void)
{
	CHECK(simhash_ctx_set_interrupt(NULL, hook_fn, NULL) == SIMHASH_EINVAL);
	CHECK(strcmp(simhash_strerror(SIMHASH_EINTR), "interrupted") == 0);
	CHECK(SIMHASH_EINTR == 10); /* appended: released values never change */
}

TEST_MAIN("fingerprint/interrupt", TEST(test_every_path_stops_at_every_poll_and_recovers),
	  TEST(test_long_text_with_default_intervals), TEST(test_errors))
