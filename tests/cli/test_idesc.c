/* test_idesc.c - ids of the text form (cli/idesc.c): the escape table, the
 * round trip on random ids (controls, backslashes, 4-byte characters, emoji,
 * invalid bytes), JSON's other escapes on input, and whole-line parsing. */
#include <stdint.h>
#include "idesc.h"
#include "test.h"

static char *esc(const char *s, size_t len)
{
	static char buf[512];
	struct sbuf b = { 0 };

	CHECK(idesc_escape(&b, s, len) == 0);
	snprintf(buf, sizeof(buf), "%.*s", (int)b.len, b.p ? b.p : "");
	sbuf_free(&b);
	return buf;
}

static void test_escape_table(void)
{
	CHECK_STR(esc("plain id", 8), "plain id");
	CHECK_STR(esc("a\\b", 3), "a\\\\b");
	CHECK_STR(esc("a\tb\nc\rd", 7), "a\\tb\\nc\\rd");
	CHECK_STR(esc("\0\x1b[31m", 6), "\\u0000\\u001b[31m");
	CHECK_STR(esc("\x7f", 1), "\\u007f");
	CHECK_STR(esc("x\xc2\x9b" "y", 4), "x\\u009by"); /* C1 CSI */
	CHECK_STR(esc("\xc2\xa0\xe4\xb8\xad", 5), "\xc2\xa0\xe4\xb8\xad"); /* NBSP, 中 */
	CHECK_STR(esc("\xff\xc2", 2), "\xff\xc2"); /* invalid bytes stay */
	CHECK_STR(esc("\"quoted\"", 8), "\"quoted\"");
}

static char *unesc(const char *s, int *ret, size_t *bad)
{
	static char buf[512];
	struct sbuf b = { 0 };

	*ret = idesc_unescape(s, strlen(s), &b, bad);
	snprintf(buf, sizeof(buf), "%.*s", (int)b.len, b.p ? b.p : "");
	sbuf_free(&b);
	return buf;
}

static void test_unescape_takes_json_escapes(void)
{
	int ret;
	size_t bad = 0;

	CHECK_STR(unesc("a\\\\b\\t\\n\\r\\u001b", &ret, &bad), "a\\b\t\n\r\x1b");
	CHECK(ret == 0);
	CHECK_STR(unesc("\\\"\\/\\b\\f", &ret, &bad), "\"/\b\f");
	CHECK(ret == 0);
	CHECK_STR(unesc("\\u4e2d\\ud842\\udfb7", &ret, &bad), "\xe4\xb8\xad\xf0\xa0\xae\xb7");
	CHECK(ret == 0);
}

static void test_unescape_refuses_bad_escapes(void)
{
	static const struct {
		const char *s;
		size_t bad;
	} cases[] = {
		{ "abc\\", 3 },          /* a backslash at the end */
		{ "a\\x", 1 },           /* unknown escape */
		{ "\\u12", 0 },          /* short \u */
		{ "ab\\u12g4", 2 },      /* not hex */
		{ "\\ud842x", 0 },       /* high surrogate alone */
		{ "\\udfb7", 0 },        /* low surrogate alone */
		{ "\\ud842\\u0041", 0 }, /* high surrogate, then not a low one */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int ret;
		size_t bad = 999;
		unesc(cases[i].s, &ret, &bad);
		CHECK(ret == -2);
		CHECK_EQ_U64(bad, cases[i].bad);
	}
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Appends one random piece: ASCII, a control, a backslash, 2-4 byte
 * characters, an emoji, a C1 control or a stray byte. */
static size_t piece(char *p)
{
	static const char *const pieces[] = {
		"a", "Z", " ", "\\", "\t", "\n", "\r", "\x01", "\x1b", "\x7f", "\\u0041",
		"\xc3\xa9", "\xc2\x85", "\xc2\x9f", "\xc2\xa0", "\xe4\xb8\xad", "\xf0\xa0\xae\xb7",
		"\xf0\x9f\x98\x80", "\xff", "\xc2", "\xed\xa0\x80",
	};
	const char *s = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
	size_t n = strlen(s);

	if (s[0] == '\0')
		n = 1;
	memcpy(p, s, n);
	return n;
}

static void test_round_trip_on_random_ids(void)
{
	uint64_t seed = 0x5eed1de5c0ffeeull;
	struct sbuf e = { 0 }, u = { 0 };
	char id[256];

	rng_state = seed;
	for (int round = 0; round < 20000; round++) {
		size_t len = 0, n = rnd() % 24, bad;
		for (size_t k = 0; k < n; k++)
			len += piece(id + len);
		if (rnd() % 8 == 0 && len)
			id[rnd() % len] = '\0';
		e.len = u.len = 0;
		CHECK(idesc_escape(&e, id, len) == 0);
		/* no raw control, tab or line break survives */
		for (size_t k = 0; k < e.len; k++)
			CHECK((unsigned char)e.p[k] >= 0x20 && e.p[k] != 0x7f);
		CHECK(idesc_unescape(e.p ? e.p : "", e.len, &u, &bad) == 0);
		if (u.len != len || (len && memcmp(u.p, id, len))) {
			fprintf(stderr, "round trip differs: seed %llx round %d\n",
				(unsigned long long)seed, round);
			t_cur_failed++;
			break;
		}
	}
	sbuf_free(&e);
	sbuf_free(&u);
}

static void test_parse_line(void)
{
	struct sbuf id = { 0 };
	simhash_fp fp;
	char err[128];
	const char *l = "00000000000000ff\ta\\tb\\u0000c";

	CHECK(idesc_parse_line(l, strlen(l), &fp, &id, err, sizeof(err)) == 0);
	CHECK_EQ_U64(fp.w[0], 0xff);
	CHECK_EQ_U64(fp.bits, 64);
	CHECK(id.len == 5 && memcmp(id.p, "a\tb\0c", 5) == 0);
	l = "0000000000000ff\tx";
	CHECK(idesc_parse_line(l, strlen(l), &fp, &id, err, sizeof(err)) == -1);
	CHECK_STR(err, "invalid fingerprint '0000000000000ff' (expected 8, 16 or 32 hex digits)");
	l = "deadbeef no tab";
	CHECK(idesc_parse_line(l, strlen(l), &fp, &id, err, sizeof(err)) == -1);
	CHECK_STR(err, "expected HEX<TAB>ID");
	l = "deadbeef\tbad\\q";
	CHECK(idesc_parse_line(l, strlen(l), &fp, &id, err, sizeof(err)) == -1);
	CHECK_STR(err, "invalid escape in id at byte 12");
	l = "DEADBEEF\t";
	CHECK(idesc_parse_line(l, strlen(l), &fp, &id, err, sizeof(err)) == 0);
	CHECK(fp.bits == 32 && fp.w[0] == 0xdeadbeef && id.len == 0);
	sbuf_free(&id);
}

/* A names section of "ab", "", "cde": magic, count, 4 offsets, 5 bytes. */
static size_t make_names(uint64_t *buf)
{
	uint64_t n = 3, off[4] = { 0, 2, 2, 5 };

	memcpy(buf, IDESC_NAMES_MAGIC, 8);
	memcpy(buf + 1, &n, 8);
	memcpy(buf + 2, off, sizeof off);
	memcpy(buf + 6, "abcde", 5);
	return 6 * 8 + 5;
}

static void test_names_section_reads_each_name(void)
{
	uint64_t buf[8];
	size_t len = make_names(buf), l = 0;
	struct idesc_names nm;
	const char *s;

	CHECK(idesc_names_parse(buf, len, &nm) == 0);
	CHECK_EQ_U64(nm.n, 3);
	CHECK(idesc_names_check(&nm) == 0);
	CHECK(idesc_names_get(&nm, 0, &s, &l) == 0 && l == 2 && !memcmp(s, "ab", 2));
	CHECK(idesc_names_get(&nm, 1, &s, &l) == 0 && l == 0);
	CHECK(idesc_names_get(&nm, 2, &s, &l) == 0 && l == 3 && !memcmp(s, "cde", 3));
	CHECK(idesc_names_get(&nm, 3, &s, &l) == -1);
	CHECK(idesc_names_parse(buf, 0, &nm) == 0 && nm.n == 0); /* no section: no names */
}

static void test_damaged_names_section_is_refused(void)
{
	uint64_t buf[8], big = 1000, bad_off = 1;
	size_t len = make_names(buf);
	struct idesc_names nm;
	const char *s;
	size_t l;

	CHECK(idesc_names_parse(buf, len - 1, &nm) == -1);  /* the last name cut */
	CHECK(idesc_names_parse(buf, 15, &nm) == -1);       /* shorter than the header */
	memcpy(buf + 1, &big, 8);
	CHECK(idesc_names_parse(buf, len, &nm) == -1);      /* a count past the end */
	len = make_names(buf);
	memcpy(buf + 2, &bad_off, 8);
	CHECK(idesc_names_parse(buf, len, &nm) == -1);      /* first offset not 0 */
	len = make_names(buf);
	buf[3] = 4;                                          /* offsets 0, 4, 2, 5: falls */
	CHECK(idesc_names_parse(buf, len, &nm) == 0);
	CHECK(idesc_names_check(&nm) == -1);
	CHECK(idesc_names_get(&nm, 1, &s, &l) == -1);
	CHECK(idesc_names_get(&nm, 0, &s, &l) == 0 && l == 4);
	memcpy(buf, "SHNAMES2", 8);
	CHECK(idesc_names_parse(buf, len, &nm) == -1);
}

TEST_MAIN("idesc", TEST(test_escape_table), TEST(test_unescape_takes_json_escapes),
	  TEST(test_unescape_refuses_bad_escapes), TEST(test_round_trip_on_random_ids),
	  TEST(test_parse_line), TEST(test_names_section_reads_each_name),
	  TEST(test_damaged_names_section_is_refused))
