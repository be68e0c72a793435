/* idesc.h - ids in the text form `HEX<TAB>ID`: escaping on output, unescaping
 * on input, and one parser for a whole line. Every command that writes or
 * reads the text form goes through here, so they all agree.
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

#endif /* CLI_IDESC_H */
