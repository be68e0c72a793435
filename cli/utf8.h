/* utf8.h - UTF-8 validation and repair for the command line tool.
 *
 * The library checks and repairs the texts it fingerprints; the command needs
 * the same rules for the bytes around them: a JSON line must be valid UTF-8
 * before jansson parses it, and JSON output must stay valid UTF-8 even when a
 * path is not. Repair follows Python's bytes.decode('utf-8', 'replace'): each
 * maximal invalid subsequence (Unicode's "maximal subpart") becomes U+FFFD, so
 * repairing first and fingerprinting after gives what the library gives.
 */
#ifndef CLI_UTF8_H
#define CLI_UTF8_H

#include <stddef.h>
#include "util.h"

/* Bytes of the well-formed sequence at s[0] (1..4), or 0 if it is not one;
 * then *bad_len (if not NULL) gets the length of the maximal subpart (>= 1).
 * n >= 1 bytes are available. */
size_t utf8_seq_len(const unsigned char *s, size_t n, size_t *bad_len);

/* Offset of the first byte of the first invalid sequence, or len if none. */
size_t utf8_first_invalid(const char *s, size_t len);

/* Appends s to out with every maximal invalid subsequence replaced by U+FFFD.
 * 0, or -1 if memory runs out. */
int utf8_repair(const char *s, size_t len, struct sbuf *out);

#endif /* CLI_UTF8_H */
