/* utf8.h - UTF-8 checks and repair for the command, by the library's own
 * rules (simhash_utf8_*): a JSON line must be valid UTF-8 before jansson
 * parses it, and JSON output must stay valid UTF-8 even when a path is not.
 * Repair follows Python's bytes.decode('utf-8', 'replace'), so repairing
 * first and fingerprinting after gives what the library gives.
 */
#ifndef CLI_UTF8_H
#define CLI_UTF8_H

#include <stddef.h>
#include "simhash.h"
#include "util.h"

/* Offset of the first byte of the first invalid sequence, or len if none. */
static inline size_t utf8_first_invalid(const char *s, size_t len)
{
	return simhash_utf8_validate(s, len);
}

/* Appends s to out with every maximal invalid subsequence replaced by U+FFFD.
 * 0, or -1 if memory runs out. */
static inline int utf8_repair(const char *s, size_t len, struct sbuf *out)
{
	if (len > (SIZE_MAX - out->len) / 3 || sbuf_grow(out, 3 * len + 1))
		return -1;
	out->len += simhash_utf8_repair(s ? s : "", len, out->p + out->len);
	return 0;
}

#endif /* CLI_UTF8_H */
