/* test_jsonl.c - JSON Lines records (cli/jsonl.c), the UTF-8 repair they
 * rely on (cli/utf8.c, checked against Python's decode(errors='replace')), and
 * the JSON string escaping of the --json output (cli/util.c). */
#include "jsonl.h"
#include "test.h"
#include "utf8.h"

struct got {
	int ret;
	char text[256];
	char id[64];
	int has_id, id_is_number;
	char err[256];
};

static struct got extract(const char *line, const char *text_field, const char *id_field,
			  unsigned flags)
{
	struct jsonl_rec rec;
	struct got g;

	memset(&g, 0, sizeof(g));
	jsonl_rec_init(&rec);
	g.ret = jsonl_extract(line, strlen(line), text_field, id_field, flags, &rec, g.err,
			      sizeof(g.err));
	if (g.ret == JSONL_OK) {
		snprintf(g.text, sizeof(g.text), "%.*s", (int)rec.text_len, rec.text);
		g.has_id = rec.id != NULL;
		g.id_is_number = rec.id_is_number;
		if (rec.id)
			snprintf(g.id, sizeof(g.id), "%.*s", (int)rec.id_len, rec.id);
	}
	jsonl_rec_free(&rec);
	return g;
}

static void test_number_id_is_its_digits(void)
{
	struct got g = extract("{\"id\": 42, \"text\": \"hello\"}", "text", "id", 0);

	CHECK(g.ret == JSONL_OK);
	CHECK_STR(g.text, "hello");
	CHECK_STR(g.id, "42");
	CHECK(g.id_is_number);
	g = extract("{\"id\": -7, \"text\": \"\"}", "text", "id", 0);
	CHECK_STR(g.id, "-7");
	g = extract("{\"id\": 2.5, \"text\": \"\"}", "text", "id", 0);
	CHECK_STR(g.id, "2.5");
	g = extract("{\"id\": 1e3, \"text\": \"\"}", "text", "id", 0);
	CHECK_STR(g.id, "1000");
	g = extract("{\"id\": 0.1, \"text\": \"\"}", "text", "id", 0);
	CHECK_STR(g.id, "0.1");
}

static void test_string_id_is_as_is(void)
{
	struct got g = extract("{\"text\": \"x\", \"id\": \"doc \\\"7\\\"\"}", "text", "id", 0);

	CHECK(g.ret == JSONL_OK);
	CHECK_STR(g.id, "doc \"7\"");
	CHECK(!g.id_is_number);
}

static void test_missing_or_null_id_is_absent(void)
{
	struct got g = extract("{\"text\": \"x\"}", "text", "id", 0);

	CHECK(g.ret == JSONL_OK && !g.has_id);
	g = extract("{\"text\": \"x\", \"id\": null}", "text", "id", 0);
	CHECK(g.ret == JSONL_OK && !g.has_id);
}

static void test_huge_integer_elsewhere_does_not_lose_the_record(void)
{
	struct got g = extract("{\"n\": 123456789012345678901234567890, \"text\": \"x\", \"id\": 5}",
			       "text", "id", 0);

	CHECK(g.ret == JSONL_OK);
	CHECK_STR(g.text, "x");
	CHECK_STR(g.id, "5");
}

static void test_custom_fields(void)
{
	struct got g = extract("{\"body\": \"b\", \"key\": \"k\", \"text\": 1}", "body", "key", 0);

	CHECK(g.ret == JSONL_OK);
	CHECK_STR(g.text, "b");
	CHECK_STR(g.id, "k");
}

static void test_blank_lines_are_not_records(void)
{
	CHECK(extract("", "text", "id", 0).ret == JSONL_BLANK);
	CHECK(extract(" \t\r", "text", "id", 0).ret == JSONL_BLANK);
}

static void test_errors_say_what_is_wrong(void)
{
	struct got g = extract("{\"id\": 1}", "text", "id", 0);

	CHECK(g.ret == JSONL_ERROR);
	CHECK_STR(g.err, "missing field \"text\"");
	g = extract("{\"text\": [1]}", "text", "id", 0);
	CHECK_STR(g.err, "field \"text\" is not a string");
	g = extract("{\"text\": \"a\", \"id\": true}", "text", "id", 0);
	CHECK_STR(g.err, "field \"id\" is not a string or a number");
	g = extract("[1, 2]", "text", "id", 0);
	CHECK_STR(g.err, "expected a JSON object");
	g = extract("{\"text\": \"a\"", "text", "id", 0);
	CHECK(g.ret == JSONL_ERROR);
	CHECK(!strncmp(g.err, "invalid JSON: ", 14) && strlen(g.err) > 14);
	/* jansson quotes the input near the error: control bytes must not
	 * break the one-line message. */
	g = extract("{\"text\": \"a\x01\"}", "text", "id", 0);
	CHECK(g.ret == JSONL_ERROR && !strchr(g.err, '\x01'));
}

static void test_nul_escape_is_part_of_the_text(void)
{
	struct jsonl_rec rec;
	char err[128];
	const char *line = "{\"text\": \"a\\u0000b\"}";

	jsonl_rec_init(&rec);
	CHECK(jsonl_extract(line, strlen(line), "text", "id", 0, &rec, err, sizeof(err)) == JSONL_OK);
	CHECK(rec.text_len == 3 && !memcmp(rec.text, "a\0b", 3));
	jsonl_rec_free(&rec);
}

static void test_invalid_utf8_rejected_with_line_offset(void)
{
	struct got g = extract("{\"text\": \"caf\xe9\"}", "text", "id", 0);

	CHECK(g.ret == JSONL_ERROR);
	CHECK_STR(g.err, "invalid UTF-8 at byte 13");
}

static void test_invalid_utf8_replaced_like_escape_fffd(void)
{
	struct got a = extract("{\"text\": \"caf\xe9 \xed\xa0\x80!\"}", "text", "id", JSONL_REPLACE_UTF8);

	CHECK(a.ret == JSONL_OK);
	CHECK_STR(a.text, "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!");
}

/* Python: bytes.decode('utf-8', 'replace'), one U+FFFD per maximal subpart. */
static void test_repair_matches_python(void)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ "plain", "plain" },
		{ "a\xf0\x9f\x98" "b", "a\xef\xbf\xbd" "b" },               /* truncated 4-byte */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },                 /* overlong */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "x\xe2\x82", "x\xef\xbf\xbd" },                           /* cut at the end */
		{ "\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf0\x90\x80" "A", "\xef\xbf\xbd" "A" },
		{ "\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xe4\xbd\xa0\xe5\xa5\xbd", "\xe4\xbd\xa0\xe5\xa5\xbd" }, /* valid CJK */
	};
	struct sbuf b = { 0 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		b.len = 0;
		CHECK(utf8_repair(v[i].in, strlen(v[i].in), &b) == 0);
		CHECK(sbuf_addc(&b, '\0') == 0);
		CHECK_STR(b.p, v[i].out);
		CHECK_EQ_U64(utf8_first_invalid(v[i].out, strlen(v[i].out)), strlen(v[i].out));
	}
	CHECK_EQ_U64(utf8_first_invalid("ab\xc3", 3), 2);
	sbuf_free(&b);
}

static void test_json_strings_are_escaped_and_valid_utf8(void)
{
	struct sbuf b = { 0 };

	CHECK(sbuf_add_json_str(&b, "a\"b\\c\td\ne\x01\xff", 11) == 0);
	CHECK(sbuf_addc(&b, '\0') == 0);
	CHECK_STR(b.p, "\"a\\\"b\\\\c\\td\\ne\\u0001\xef\xbf\xbd\"");
	sbuf_free(&b);
}

static void test_sbuf_add_u64(void)
{
	struct sbuf b = { 0 };

	CHECK(sbuf_add_u64(&b, 0) == 0 && sbuf_addc(&b, ' ') == 0);
	CHECK(sbuf_add_u64(&b, 18446744073709551615ull) == 0 && sbuf_addc(&b, '\0') == 0);
	CHECK_STR(b.p, "0 18446744073709551615");
	sbuf_free(&b);
}

TEST_MAIN("cli/jsonl", TEST(test_number_id_is_its_digits), TEST(test_string_id_is_as_is),
	  TEST(test_missing_or_null_id_is_absent),
	  TEST(test_huge_integer_elsewhere_does_not_lose_the_record), TEST(test_custom_fields),
	  TEST(test_blank_lines_are_not_records), TEST(test_errors_say_what_is_wrong),
	  TEST(test_nul_escape_is_part_of_the_text),
	  TEST(test_invalid_utf8_rejected_with_line_offset),
	  TEST(test_invalid_utf8_replaced_like_escape_fffd), TEST(test_repair_matches_python),
	  TEST(test_json_strings_are_escaped_and_valid_utf8), TEST(test_sbuf_add_u64))
