/* test_stopwords.c - stop-word sets: membership, loading, errors, digest. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "test.h"
#include "common/internal.h"

#define SEED 0x570bull
#define S(s) (s), strlen(s)

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[256];

	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/test_sw.XXXXXX");
		if (!mkdtemp(tmpdir))
			abort();
	}
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		abort();
}

static simhash_stopwords *new_sw(void)
{
	simhash_stopwords *sw = NULL;

	if (simhash_stopwords_new(&sw))
		abort();
	return sw;
}

static void test_add_and_has_compare_bytes(void)
{
	simhash_stopwords *sw = new_sw();

	CHECK(simhash_stopwords_has(sw, S("the")) == 0);
	CHECK(simhash_stopwords_add(sw, S("the")) == SIMHASH_OK);
	CHECK(simhash_stopwords_add(sw, S("\xe7\x9a\x84")) == SIMHASH_OK); /* 的 */
	CHECK(simhash_stopwords_has(sw, S("the")) == 1);
	CHECK(simhash_stopwords_has(sw, S("\xe7\x9a\x84")) == 1);
	CHECK(simhash_stopwords_has(sw, S("The")) == 0); /* add them normalized */
	CHECK(simhash_stopwords_has(sw, "the", 2) == 0);
	CHECK(simhash_stopwords_has(sw, S("then")) == 0);
	CHECK(simhash_stopwords_has(sw, "", 0) == 0);
	CHECK(sh_stopwords_has_key(sw, sh_key("the", 3)) == 1);
	CHECK(sh_stopwords_has_key(sw, sh_key("a", 1)) == 0);
	CHECK(sh_stopwords_has_key(sw, 0) == 0);
	simhash_stopwords_free(sw);
}

static void test_empty_word_and_empty_set(void)
{
	simhash_stopwords *sw = new_sw();

	CHECK(sh_stopwords_has_key(sw, sh_key("x", 1)) == 0); /* no table yet */
	CHECK(simhash_stopwords_add(sw, NULL, 0) == SIMHASH_OK);
	CHECK(simhash_stopwords_has(sw, "", 0) == 1);
	CHECK(simhash_stopwords_has(sw, S("x")) == 0);
	simhash_stopwords_free(sw);
}

static void test_bad_arguments(void)
{
	simhash_stopwords *sw = new_sw();

	CHECK(simhash_stopwords_new(NULL) == SIMHASH_EINVAL);
	CHECK(simhash_stopwords_add(NULL, S("a")) == SIMHASH_EINVAL);
	CHECK(simhash_stopwords_add(sw, NULL, 2) == SIMHASH_EINVAL);
	CHECK(simhash_stopwords_has(NULL, S("a")) == 0);
	CHECK(simhash_stopwords_has(sw, NULL, 2) == 0);
	CHECK(simhash_stopwords_load(NULL, &sw, NULL) == SIMHASH_EINVAL);
	CHECK(simhash_stopwords_load(tmp_path("x"), NULL, NULL) == SIMHASH_EINVAL);
	CHECK_EQ_U64(simhash_stopwords_digest(NULL), 0);
	simhash_stopwords_free(sw);
	simhash_stopwords_free(NULL);
}

/* Enough words to grow the table many times; every word is found, and words
 * never added are not. */
static void test_many_words(void)
{
	enum { N = 20000 };
	simhash_stopwords *sw = new_sw();
	char w[32];
	int missing = 0, extra = 0;

	for (int i = 0; i < N; i++) {
		snprintf(w, sizeof w, "w%d", i * 2);
		simhash_stopwords_add(sw, S(w));
	}
	for (int i = 0; i < N; i++) {
		snprintf(w, sizeof w, "w%d", i * 2);
		missing += !simhash_stopwords_has(sw, S(w));
		snprintf(w, sizeof w, "w%d", i * 2 + 1);
		extra += simhash_stopwords_has(sw, S(w));
	}
	CHECK(missing == 0);
	CHECK(extra == 0);
	simhash_stopwords_free(sw);
}

static void test_load_skips_comments_blanks_and_spaces(void)
{
	static const char text[] =
		"\xef\xbb\xbf# English and Chinese\r\n" /* BOM, comment, CRLF */
		"the\r\n"
		"  a  \n"         /* spaces around */
		"\tan\t\r\n"      /* tabs around */
		"\n"
		"   \n"           /* blank */
		"   # indented comment\n"
		"new york\n"      /* inner space kept */
		"\xe7\x9a\x84\n"  /* 的 */
		"the\n"           /* duplicate */
		"last";           /* no final newline */
	const char *path = tmp_path("sw.txt");
	simhash_stopwords *sw = NULL, *ref = new_sw();
	simhash_error e = { .line = 9 };

	write_file(path, text, sizeof text - 1);
	CHECK(simhash_stopwords_load(path, &sw, &e) == SIMHASH_OK);
	CHECK(e.line == 9); /* the detail is left as it was on success */
	if (!sw)
		goto out;
	CHECK(simhash_stopwords_has(sw, S("the")));
	CHECK(simhash_stopwords_has(sw, S("a")));
	CHECK(simhash_stopwords_has(sw, S("an")));
	CHECK(simhash_stopwords_has(sw, S("new york")));
	CHECK(simhash_stopwords_has(sw, S("\xe7\x9a\x84")));
	CHECK(simhash_stopwords_has(sw, S("last")));
	CHECK(!simhash_stopwords_has(sw, S("  a  ")));
	CHECK(!simhash_stopwords_has(sw, S("the\r")));
	CHECK(!simhash_stopwords_has(sw, S("# English and Chinese")));
	CHECK(!simhash_stopwords_has(sw, S("# indented comment")));
	CHECK(!simhash_stopwords_has(sw, S("")));
	/* exactly these six words: the same digest as adding them by hand */
	simhash_stopwords_add(ref, S("last"));
	simhash_stopwords_add(ref, S("\xe7\x9a\x84"));
	simhash_stopwords_add(ref, S("new york"));
	simhash_stopwords_add(ref, S("an"));
	simhash_stopwords_add(ref, S("a"));
	simhash_stopwords_add(ref, S("the"));
	CHECK_EQ_U64(simhash_stopwords_digest(sw), simhash_stopwords_digest(ref));
out:
	unlink(path);
	simhash_stopwords_free(sw);
	simhash_stopwords_free(ref);
}

static void test_load_errors(void)
{
	static const struct {
		const char *text;
		size_t line;
	} bad[] = {
		{"the\na\n\xff\n", 3},                 /* not UTF-8 */
		{"# ok\n\xe7\x9a\n", 2},               /* truncated sequence */
		{"a\r\nb\r\n\xed\xa0\x80\r\n", 3},     /* a UTF-16 surrogate */
		{"\xc0\xaf\n", 1},                     /* overlong */
	};
	const char *path;
	simhash_stopwords *sw;
	simhash_error e;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		sw = (simhash_stopwords *)&bad;
		memset(&e, 0, sizeof e);
		path = tmp_path("bad.txt");
		write_file(path, bad[i].text, strlen(bad[i].text));
		CHECK(simhash_stopwords_load(path, &sw, &e) == SIMHASH_ECORRUPT);
		CHECK(e.line == bad[i].line);
		CHECK(e.code == SIMHASH_ECORRUPT && e.os_err == 0 && e.msg[0]);
		CHECK(sw == (simhash_stopwords *)&bad);
		unlink(path);
	}
	sw = NULL;
	CHECK(simhash_stopwords_load(tmp_path("missing"), &sw, &e) == SIMHASH_EIO);
	CHECK(e.os_err == ENOENT && e.line == 0);
	CHECK(sw == NULL);
	CHECK(simhash_stopwords_load(tmpdir, &sw, &e) == SIMHASH_EIO);
	CHECK(e.os_err == EISDIR);
	CHECK(sw == NULL);
}

static void test_digest_is_order_independent(void)
{
	enum { N = 500 };
	simhash_stopwords *a = new_sw(), *b = new_sw(), *c = new_sw();
	char w[32];
	uint64_t d;

	for (int i = 0; i < N; i++) {
		snprintf(w, sizeof w, "word%d", i);
		simhash_stopwords_add(a, S(w));
		snprintf(w, sizeof w, "word%d", N - 1 - i);
		simhash_stopwords_add(b, S(w));
		simhash_stopwords_add(b, S(w)); /* duplicates change nothing */
	}
	d = simhash_stopwords_digest(a);
	CHECK_EQ_U64(simhash_stopwords_digest(b), d);
	CHECK(simhash_stopwords_digest(c) != d);
	CHECK_EQ_U64(simhash_stopwords_digest(c), simhash_stopwords_digest(c));
	simhash_stopwords_add(b, S("one more"));
	CHECK(simhash_stopwords_digest(b) != d);
	/* same size, one word different */
	simhash_stopwords_add(c, S("x"));
	simhash_stopwords_free(b);
	b = new_sw();
	simhash_stopwords_add(b, S("y"));
	CHECK(simhash_stopwords_digest(b) != simhash_stopwords_digest(c));
	/* the empty word counts */
	simhash_stopwords_add(b, "", 0);
	simhash_stopwords_free(c);
	c = new_sw();
	simhash_stopwords_add(c, S("y"));
	CHECK(simhash_stopwords_digest(b) != simhash_stopwords_digest(c));
	simhash_stopwords_free(a);
	simhash_stopwords_free(b);
	simhash_stopwords_free(c);
}

static void test_zz_cleanup(void)
{
	CHECK(rmdir(tmpdir) == 0);
}

TEST_MAIN("stopwords",
	  TEST(test_add_and_has_compare_bytes),
	  TEST(test_empty_word_and_empty_set),
	  TEST(test_bad_arguments),
	  TEST(test_many_words),
	  TEST(test_load_skips_comments_blanks_and_spaces),
	  TEST(test_load_errors),
	  TEST(test_digest_is_order_independent),
	  TEST(test_zz_cleanup))
