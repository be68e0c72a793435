/* idesc.h - the codec of ids: the escape of the text form `HEX<TAB>ID`, and
 * the names section in which `simhash index` keeps the id strings of an index
 * file (docs/format.md, "The CLI's id section").
 *
 * Every id a command writes in the text form is escaped here: `fingerprint`'s
 * ids (files, lines, records; the document source's src_text_id), and the
 * ids `index` and `pairs` take from a binary fingerprint file. Readers of the
 * text form (`pairs`, `index`, `dedup --against`) keep an id byte for byte as
 * read, escapes included, and print it back the same way, so they need no
 * unescaping; idesc_unescape() and idesc_parse_line() are for a caller that
 * wants the raw bytes back.
 *
 * The escape is JSON's, applied only where needed: `\` becomes `\\`, tab `\t`,
 * line feed `\n`, carriage return `\r`, and every other C0 control (U+0000 to
 * U+001F), DEL (U+007F) and C1 control (U+0080 to U+009F, as UTF-8) becomes
 * `\u00XX` with lowercase hex. Everything else - other UTF-8, and bytes that
 * are not UTF-8 at all (a path may hold them) - is copied as is. So an id
 * without a backslash or a control character reads the same escaped or not,
 * and a line never holds a raw tab after HEX nor a raw line break.
 *
 * Unescaping accepts all of JSON's escapes (`\"`, `\/`, `\b`, `\f` and
 * `\uXXXX` with surrogate pairs as well), so a reader takes a JSON string's
 * body too; any other backslash sequence is an error.
 */
#ifndef CLI_IDESC_H
#define CLI_IDESC_H

#include <stddef.h>
#include <stdint.h>
#include "simhash.h"
#include "util.h"

/* Appends id (len bytes) to out, escaped. 0, or -1 if memory runs out. */
int idesc_escape(struct sbuf *out, const char *id, size_t len);

/* Appends the unescaped form of s (len bytes) to out. 0; -1 if memory runs
 * out (errno ENOMEM); -2 for a bad escape, its offset in s in *bad. */
int idesc_unescape(const char *s, size_t len, struct sbuf *out, size_t *bad);

/* Parses one line of the text form (without its line break; a final '\r' is
 * not removed): `HEX<TAB>ID`, HEX of 8, 16 or 32 hex digits. The unescaped
 * id replaces out_id's contents. 0, or -1 with a message (lowercase, no
 * period, like "expected HEX<TAB>ID") in err; "out of memory" if it runs
 * out. */
int idesc_parse_line(const char *line, size_t len, simhash_fp *fp, struct sbuf *out_id,
		     char *err, size_t err_size);

/* The names section: magic "SHNAMES1", the count n (u64), n + 1 offsets
 * (u64, rising, the first 0) into the bytes that follow, then the names back
 * to back. Its integers are in the writing machine's native byte order (they
 * are copied from memory as they are) and read back the same way, unlike the
 * index file's own header, which is little-endian byte by byte: so the
 * section is little-endian on the machines simhash builds for (x86-64,
 * aarch64), and one written on a big-endian machine would not read on a
 * little-endian one. docs/format.md states this. Read in place: off and
 * bytes point into the index's mapping. */
#define IDESC_NAMES_MAGIC "SHNAMES1"

struct idesc_names {
	uint64_t n;
	const uint64_t *off; /* n + 1 */
	const char *bytes;
	size_t bytes_len;
};

/* Parses the section of len bytes at data (8-byte aligned, as the index's
 * user section is): 0, or -1 if it is damaged (bad magic, a count or a last
 * offset past its end, a first offset not 0). len 0 is no names (n = 0).
 * Each name's offsets are checked when it is taken (idesc_names_get), or all
 * at once by idesc_names_check. */
int idesc_names_parse(const void *data, size_t len, struct idesc_names *out);

/* 0 if every offset rises, -1 if not: O(n). */
int idesc_names_check(const struct idesc_names *nm);

/* Name id of nm: 0 and its bytes, or -1 if id is out of range or its
 * offsets are damaged. */
int idesc_names_get(const struct idesc_names *nm, uint64_t id, const char **s, size_t *len);

#endif /* CLI_IDESC_H */
