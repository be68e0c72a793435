/* jsonl.c - fuzz target for jsonl_extract(), the JSON Lines record reader of
 * the command line tool, and the UTF-8 repair it relies on.
 *
 * The whole input is one line (NUL bytes included). The target aborts unless:
 *  1. the result is JSONL_OK, JSONL_BLANK or JSONL_ERROR; an error comes with
 *     a one-line, non-empty message; a record has a text, and every text and
 *     string id is valid UTF-8;
 *  2. a valid UTF-8 line gives the same result and the same fields with and
 *     without JSONL_REPLACE_UTF8, and the same text as jansson itself (an
 *     oracle: json_loadb and json_object_get);
 *  3. an invalid UTF-8 line is rejected without the flag, with the offset of
 *     the first bad byte, and with the flag gives what the repaired line gives;
 *  4. utf8_repair() output is valid UTF-8 and repairing it again changes nothing.
 * Every record is released: the replays run under ASan's leak checker. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "utf8.h"

#define FAIL(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "jsonl: invariant broken at %s:%d: ", __FILE__,       \
			__LINE__);                                                    \
		fprintf(stderr, __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                  \
		abort();                                                              \
	} while (0)

struct outcome {
	int ret;
	struct jsonl_rec rec;
	char err[256];
};

static void extract(const char *s, size_t len, const char *text_field, const char *id_field,
		    unsigned flags, struct outcome *o)
{
	memset(o->err, 0, sizeof(o->err));
	o->ret = jsonl_extract(s, len, text_field, id_field, flags, &o->rec, o->err,
			       sizeof(o->err));
	if (o->ret != JSONL_OK && o->ret != JSONL_BLANK && o->ret != JSONL_ERROR)
		FAIL("result %d", o->ret);
	if (o->ret == JSONL_ERROR && (!o->err[0] || strchr(o->err, '\n')))
		FAIL("error message \"%s\"", o->err);
	if (o->ret != JSONL_OK)
		return;
	if (!o->rec.text)
		FAIL("a record without text");
	if (utf8_first_invalid(o->rec.text, o->rec.text_len) != o->rec.text_len)
		FAIL("text is not valid UTF-8");
	if (o->rec.id && !o->rec.id_is_number &&
	    utf8_first_invalid(o->rec.id, o->rec.id_len) != o->rec.id_len)
		FAIL("id is not valid UTF-8");
	if (o->rec.id && o->rec.id_is_number && !o->rec.id_len)
		FAIL("an empty number id");
}

static int same_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	if (!a || !b)
		return a == b;
	return alen == blen && !memcmp(a, b, alen);
}

static void check_same(const struct outcome *a, const struct outcome *b, const char *what)
{
	if (a->ret != b->ret)
		FAIL("%s: results %d and %d", what, a->ret, b->ret);
	if (a->ret == JSONL_ERROR && strcmp(a->err, b->err))
		FAIL("%s: errors \"%s\" and \"%s\"", what, a->err, b->err);
	if (a->ret != JSONL_OK)
		return;
	if (!same_bytes(a->rec.text, a->rec.text_len, b->rec.text, b->rec.text_len))
		FAIL("%s: texts differ", what);
	if (!same_bytes(a->rec.id, a->rec.id_len, b->rec.id, b->rec.id_len) ||
	    a->rec.id_is_number != b->rec.id_is_number)
		FAIL("%s: ids differ", what);
}

/* Whatever jansson itself says the text field of a valid line is. */
static void check_oracle(const char *s, size_t len, const char *field, const struct outcome *o)
{
	json_error_t jerr;
	json_t *root, *text;

	root = json_loadb(s, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	text = root && json_is_object(root) ? json_object_get(root, field) : NULL;
	if (text && json_is_string(text) && o->ret == JSONL_OK &&
	    !same_bytes(o->rec.text, o->rec.text_len, json_string_value(text),
			json_string_length(text)))
		FAIL("text differs from jansson's");
	if (root && !json_is_object(root) && o->ret != JSONL_ERROR && o->ret != JSONL_BLANK)
		FAIL("accepted a JSON value that is not an object");
	json_decref(root);
}

static void check_repair(const char *s, size_t len, struct sbuf *fixed)
{
	struct sbuf again = { 0 };

	fixed->len = 0;
	if (utf8_repair(s, len, fixed))
		FAIL("utf8_repair: out of memory");
	if (utf8_first_invalid(fixed->p ? fixed->p : "", fixed->len) != fixed->len)
		FAIL("utf8_repair output is not valid UTF-8");
	if (utf8_repair(fixed->p ? fixed->p : "", fixed->len, &again))
		FAIL("utf8_repair: out of memory");
	if (!same_bytes(fixed->p ? fixed->p : "", fixed->len, again.p ? again.p : "", again.len))
		FAIL("utf8_repair is not idempotent");
	sbuf_free(&again);
}

static void run(const char *s, size_t len, const char *text_field, const char *id_field)
{
	struct outcome strict, lenient, repaired;
	struct sbuf fixed = { 0 };
	size_t bad = utf8_first_invalid(s, len);
	char expect[64];

	jsonl_rec_init(&strict.rec);
	jsonl_rec_init(&lenient.rec);
	jsonl_rec_init(&repaired.rec);
	extract(s, len, text_field, id_field, 0, &strict);
	extract(s, len, text_field, id_field, JSONL_REPLACE_UTF8, &lenient);
	if (bad == len) {
		check_same(&strict, &lenient, "valid UTF-8, with and without the flag");
		check_oracle(s, len, text_field, &lenient);
	} else {
		snprintf(expect, sizeof(expect), "invalid UTF-8 at byte %zu", bad);
		if (strict.ret != JSONL_BLANK && (strict.ret != JSONL_ERROR || strcmp(strict.err, expect)))
			FAIL("invalid UTF-8 at %zu: got %d \"%s\"", bad, strict.ret, strict.err);
		check_repair(s, len, &fixed);
		extract(fixed.p, fixed.len, text_field, id_field, 0, &repaired);
		if (lenient.ret != JSONL_BLANK)
			check_same(&lenient, &repaired, "replaced vs repaired first");
	}
	jsonl_rec_free(&strict.rec);
	jsonl_rec_free(&lenient.rec);
	jsonl_rec_free(&repaired.rec);
	sbuf_free(&fixed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = size ? (const char *)data : "";

	run(s, size, "text", "id");
	/* Other fields: ids of every JSON type, a text field named like the id. */
	run(s, size, "t", "text");
	return 0;
}
