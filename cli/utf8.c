/* utf8.c - UTF-8 validation and repair by the rules of Unicode's table 3-7
 * (well-formed byte sequences) and its "maximal subpart" practice, which is
 * what Python's 'replace' error handler implements.
 *
 * Invariant: utf8_repair() output is always well-formed, and equals the input
 * when the input is; the scan is ASCII-first because nearly all input is.
 */
#include <string.h>
#include "utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t n, size_t *bad_len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		if (bad_len)
			*bad_len = 1;
		return 0;
	}
	/* Only the second byte has a narrowed range; the rest are 80..BF. */
	for (i = 1; i < need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			if (bad_len)
				*bad_len = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need;
}

/* Skips ASCII eight bytes at a time; returns the offset of the first non-ASCII byte. */
static size_t skip_ascii(const unsigned char *s, size_t i, size_t len)
{
	uint64_t w;

	while (i + 8 <= len) {
		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ull)
			break;
		i += 8;
	}
	while (i < len && s[i] < 0x80)
		i++;
	return i;
}

size_t utf8_first_invalid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;

	for (;;) {
		i = skip_ascii(s, i, len);
		if (i == len)
			return len;
		n = utf8_seq_len(s + i, len - i, NULL);
		if (!n)
			return i;
		i += n;
	}
}

int utf8_repair(const char *str, size_t len, struct sbuf *out)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, done = 0, n, bad;

	for (;;) {
		i = skip_ascii(s, i, len);
		if (i == len)
			break;
		n = utf8_seq_len(s + i, len - i, &bad);
		if (n) {
			i += n;
			continue;
		}
		if (sbuf_add(out, s + done, i - done) || sbuf_add(out, "\xef\xbf\xbd", 3))
			return -1;
		i += bad;
		done = i;
	}
	return sbuf_add(out, s + done, len - done);
}
