/* utf8.c - UTF-8 decoding with the "maximal subpart" replacement rule.
 *
 * An ill-formed sequence is replaced by one U+FFFD per maximal subpart: the
 * longest prefix of a well-formed sequence (Unicode 15, section 3.9, table 3-7),
 * or one byte if none. This is what Python's bytes.decode('utf-8', 'replace')
 * does, so the compatibility mode sees the same code points as the package. */
#include <string.h>
#include "internal.h"

size_t sh_utf8_next(const uint8_t *s, size_t len, size_t i, uint32_t *cp, int *bad)
{
	uint8_t b0 = s[i];
	uint8_t lo = 0x80, hi = 0xBF;
	size_t need, k;
	uint32_t c;

	*bad = 0;
	if (b0 < 0x80) {
		*cp = b0;
		return 1;
	}
	if (b0 >= 0xC2 && b0 <= 0xDF) {
		need = 1;
		c = b0 & 0x1F;
	} else if (b0 >= 0xE0 && b0 <= 0xEF) {
		need = 2;
		c = b0 & 0x0F;
		if (b0 == 0xE0)
			lo = 0xA0;
		else if (b0 == 0xED)
			hi = 0x9F;
	} else if (b0 >= 0xF0 && b0 <= 0xF4) {
		need = 3;
		c = b0 & 0x07;
		if (b0 == 0xF0)
			lo = 0x90;
		else if (b0 == 0xF4)
			hi = 0x8F;
	} else {
		goto invalid_one;
	}
	for (k = 1; k <= need; k++) {
		uint8_t b;
		if (i + k >= len)
			goto invalid_k;
		b = s[i + k];
		if (b < lo || b > hi)
			goto invalid_k;
		lo = 0x80;
		hi = 0xBF;
		c = (c << 6) | (b & 0x3F);
	}
	*cp = c;
	return need + 1;
invalid_k:
	*cp = 0xFFFD;
	*bad = 1;
	return k;
invalid_one:
	*cp = 0xFFFD;
	*bad = 1;
	return 1;
}

size_t sh_utf8_put(uint8_t *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xC0 | (cp >> 6));
		out[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xE0 | (cp >> 12));
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | (cp >> 18));
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

size_t sh_utf8_ascii_end(const uint8_t *s, size_t i, size_t len)
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

size_t sh_utf8_validate(const uint8_t *s, size_t len)
{
	size_t i = 0;

	for (;;) {
		uint32_t cp;
		int bad;
		size_t n;

		i = sh_utf8_ascii_end(s, i, len);
		if (i == len)
			return len;
		n = sh_utf8_next(s, len, i, &cp, &bad);
		if (bad)
			return i;
		i += n;
	}
}

size_t simhash_utf8_validate(const char *s, size_t len)
{
	if (!s)
		return 0;
	return sh_utf8_validate((const uint8_t *)s, len);
}

size_t simhash_utf8_seq(const char *s, size_t len, size_t *bad_len)
{
	uint32_t cp;
	int bad;
	size_t n;

	if (!s || !len) {
		if (bad_len)
			*bad_len = 0;
		return 0;
	}
	n = sh_utf8_next((const uint8_t *)s, len, 0, &cp, &bad);
	if (!bad)
		return n;
	if (bad_len)
		*bad_len = n;
	return 0;
}

size_t simhash_utf8_repair(const char *str, size_t len, char *out)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0, done = 0, o = 0, n;
	uint32_t cp;
	int bad;

	if (!str || !out)
		return 0;
	for (;;) {
		i = sh_utf8_ascii_end(s, i, len);
		if (i == len)
			break;
		n = sh_utf8_next(s, len, i, &cp, &bad);
		if (!bad) {
			i += n;
			continue;
		}
		memcpy(out + o, s + done, i - done);
		o += i - done;
		memcpy(out + o, "\xef\xbf\xbd", 3);
		o += 3;
		i += n;
		done = i;
	}
	memcpy(out + o, s + done, len - done);
	return o + len - done;
}
