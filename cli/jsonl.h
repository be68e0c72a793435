/* jsonl.h - one JSON Lines record: parse a line with jansson and take out its
 * text and id fields. Lines themselves come from reader.h.
 *
 * jsonl_extract() is pure (no I/O, no globals), so the fuzzer calls it on
 * arbitrary bytes: fuzz/jsonl.c.
 */
#ifndef CLI_JSONL_H
#define CLI_JSONL_H

#include <stddef.h>
#include "util.h"

struct json_t;

/* A record; text and id point into root (or id_buf), valid until the next
 * jsonl_extract() or jsonl_rec_free() on it. */
struct jsonl_rec {
	struct json_t *root;
	const char *text;
	size_t text_len;
	const char *id;    /* NULL: no id field, or null */
	size_t id_len;
	int id_is_number;  /* id holds a JSON number's digits (e.g. "42", "-1.5") */
	char id_buf[32];
	struct sbuf fixed; /* scratch: the line with invalid UTF-8 repaired */
};

/* Flags of jsonl_extract(). */
#define JSONL_REPLACE_UTF8 1u /* invalid UTF-8 becomes U+FFFD; else it is an error */

/* Results of jsonl_extract(). */
#define JSONL_OK 0
#define JSONL_BLANK 1 /* the line is empty or white space only: no record */
#define JSONL_ERROR (-1)

void jsonl_rec_init(struct jsonl_rec *rec);

/* Parses len bytes of line (without its '\n'; NUL bytes allowed) as one JSON
 * object and fills *out from its fields text_field (a string, required) and
 * id_field (a string or number, optional). On JSONL_ERROR, err (errcap bytes)
 * gets a lowercase message without file or line, such as
 * `invalid JSON: '[' or '{' expected near 'x'`, `missing field "text"` or
 * `invalid UTF-8 at byte 17` (an offset into the line, from 0). out must have
 * been initialized; what it held before is released. Thread safety: safe, one
 * rec per thread. */
int jsonl_extract(const char *line, size_t len, const char *text_field, const char *id_field,
		  unsigned flags, struct jsonl_rec *out, char *err, size_t errcap);

/* Releases the parsed record but keeps scratch memory for the next one. */
void jsonl_rec_clear(struct jsonl_rec *rec);

/* Releases everything. */
void jsonl_rec_free(struct jsonl_rec *rec);

#endif /* CLI_JSONL_H */
