/* jsonl.c - the fields of one JSON Lines record (see jsonl.h).
 *
 * The fast path is one json_loadb() and two lookups. Everything unusual is
 * handled only after a parse fails, so it costs nothing on good input:
 *   - invalid UTF-8 (which jansson refuses): found with utf8_first_invalid(),
 *     then either reported or repaired (U+FFFD per maximal subpart, as the
 *     library does for texts) and parsed again;
 *   - an integer too large for json_int_t anywhere in the record: parsed again
 *     with integers as doubles, so one huge number does not lose the record.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonl.h"
#include "utf8.h"

void jsonl_rec_init(struct jsonl_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
}

void jsonl_rec_clear(struct jsonl_rec *rec)
{
	json_decref(rec->root);
	rec->root = NULL;
	rec->text = NULL;
	rec->text_len = 0;
	rec->id = NULL;
	rec->id_len = 0;
	rec->id_is_number = 0;
}

void jsonl_rec_free(struct jsonl_rec *rec)
{
	jsonl_rec_clear(rec);
	sbuf_free(&rec->fixed);
}

static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* Writes a double as the shortest of %.15g..%.17g that reads back exactly. */
static void format_real(double v, char *buf, size_t cap)
{
	int prec;

	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, cap, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, cap, "%.17g", v);
}

static int set_id(struct jsonl_rec *out, json_t *id, const char *id_field, char *err,
		  size_t errcap)
{
	if (!id || json_is_null(id))
		return JSONL_OK;
	if (json_is_string(id)) {
		out->id = json_string_value(id);
		out->id_len = json_string_length(id);
		return JSONL_OK;
	}
	if (json_is_integer(id)) {
		snprintf(out->id_buf, sizeof(out->id_buf), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(id));
	} else if (json_is_real(id)) {
		format_real(json_real_value(id), out->id_buf, sizeof(out->id_buf));
	} else {
		snprintf(err, errcap, "field \"%s\" is not a string or a number", id_field);
		return JSONL_ERROR;
	}
	out->id = out->id_buf;
	out->id_len = strlen(out->id_buf);
	out->id_is_number = 1;
	return JSONL_OK;
}

/* Parses, retrying once with integers as doubles if one overflows. */
static json_t *parse(const char *s, size_t len, json_error_t *jerr)
{
	const size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
	json_t *root;

	root = json_loadb(s, len, flags, jerr);
	if (!root && json_error_code(jerr) == json_error_numeric_overflow)
		root = json_loadb(s, len, flags | JSON_DECODE_INT_AS_REAL, jerr);
	return root;
}

/* jansson quotes the input near an error: keep the message on one line. */
static void json_error(char *err, size_t errcap, const json_error_t *jerr)
{
	char *p;

	snprintf(err, errcap, "invalid JSON: %s", jerr->text);
	for (p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

/* After a failed parse: repairs invalid UTF-8 and parses again, or says why not. */
static json_t *parse_repaired(struct jsonl_rec *out, const char *line, size_t len,
			      unsigned flags, json_error_t *jerr, char *err, size_t errcap)
{
	size_t bad = utf8_first_invalid(line, len);
	json_t *root;

	if (bad == len) {
		json_error(err, errcap, jerr);
		return NULL;
	}
	if (!(flags & JSONL_REPLACE_UTF8)) {
		snprintf(err, errcap, "invalid UTF-8 at byte %zu", bad);
		return NULL;
	}
	out->fixed.len = 0;
	if (utf8_repair(line, len, &out->fixed)) {
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	root = parse(out->fixed.p, out->fixed.len, jerr);
	if (!root)
		json_error(err, errcap, jerr);
	return root;
}

int jsonl_extract(const char *line, size_t len, const char *text_field, const char *id_field,
		  unsigned flags, struct jsonl_rec *out, char *err, size_t errcap)
{
	json_error_t jerr;
	json_t *root, *text;

	jsonl_rec_clear(out);
	if (is_blank(line, len))
		return JSONL_BLANK;
	root = parse(line, len, &jerr);
	if (!root) {
		root = parse_repaired(out, line, len, flags, &jerr, err, errcap);
		if (!root)
			return JSONL_ERROR;
	}
	out->root = root;
	if (!json_is_object(root)) {
		snprintf(err, errcap, "expected a JSON object");
		goto out_clear;
	}
	text = json_object_get(root, text_field);
	if (!text) {
		snprintf(err, errcap, "missing field \"%s\"", text_field);
		goto out_clear;
	}
	if (!json_is_string(text)) {
		snprintf(err, errcap, "field \"%s\" is not a string", text_field);
		goto out_clear;
	}
	out->text = json_string_value(text);
	out->text_len = json_string_length(text);
	if (set_id(out, json_object_get(root, id_field), id_field, err, errcap))
		goto out_clear;
	return JSONL_OK;

out_clear:
	jsonl_rec_clear(out);
	return JSONL_ERROR;
}
