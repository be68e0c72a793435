/* idesc.c - the codec of ids: the text form's escape and the names section
 * of an index file (see idesc.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "idesc.h"

static const char hex_digits[] = "0123456789abcdef";

/* Whether byte c must be escaped on its own (ASCII) */
static int needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '\\';
}

static int add_escape(struct sbuf *out, unsigned cp)
{
	char e[6] = { '\\', 'u', '0', '0', hex_digits[(cp >> 4) & 15], hex_digits[cp & 15] };

	switch (cp) {
	case '\\': return sbuf_add(out, "\\\\", 2);
	case '\t': return sbuf_add(out, "\\t", 2);
	case '\n': return sbuf_add(out, "\\n", 2);
	case '\r': return sbuf_add(out, "\\r", 2);
	default: return sbuf_add(out, e, 6);
	}
}

int idesc_escape(struct sbuf *out, const char *id, size_t len)
{
	const unsigned char *s = (const unsigned char *)id;
	size_t i = 0, done = 0;
	unsigned cp;

	while (i < len) {
		if (needs_escape(s[i])) {
			cp = s[i];
		} else if (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) {
			cp = s[i + 1]; /* a C1 control, U+0080..U+009F */
		} else {
			i++;
			continue;
		}
		if (sbuf_add(out, s + done, i - done) || add_escape(out, cp))
			return -1;
		i += cp >= 0x80 ? 2 : 1;
		done = i;
	}
	return sbuf_add(out, s + done, len - done);
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static int add_utf8(struct sbuf *out, unsigned cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return sbuf_add(out, b, n);
}

/* Decodes the \uXXXX (and a following low surrogate's) at s[i]; returns the
 * bytes used, or 0 if malformed. */
static size_t unescape_u(const char *s, size_t len, size_t i, unsigned *cp)
{
	unsigned lo;

	if (len - i < 6 || hex4(s + i + 2, cp))
		return 0;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return 0; /* a lone low surrogate */
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 6;
	if (len - i < 12 || s[i + 6] != '\\' || s[i + 7] != 'u' || hex4(s + i + 8, &lo) ||
	    lo < 0xdc00 || lo > 0xdfff)
		return 0;
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 12;
}

int idesc_unescape(const char *s, size_t len, struct sbuf *out, size_t *bad)
{
	const char *bs;
	size_t i = 0, used;
	unsigned cp;
	char c;

	while (i < len) {
		bs = memchr(s + i, '\\', len - i);
		if (!bs)
			break;
		if (sbuf_add(out, s + i, (size_t)(bs - s) - i))
			goto nomem;
		i = (size_t)(bs - s);
		c = i + 1 < len ? s[i + 1] : 0;
		used = 2;
		switch (c) {
		case '\\': case '"': case '/': cp = (unsigned char)c; break;
		case 't': cp = '\t'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'u':
			used = unescape_u(s, len, i, &cp);
			if (used)
				break;
			/* fall through */
		default:
			*bad = i;
			return -2;
		}
		if (add_utf8(out, cp))
			goto nomem;
		i += used;
	}
	if (sbuf_add(out, s + i, len - i))
		goto nomem;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

int idesc_parse_line(const char *line, size_t len, simhash_fp *fp, struct sbuf *out_id,
		     char *err, size_t err_size)
{
	const char *tab = memchr(line, '\t', len);
	size_t n_hex, bad;
	int ret;

	out_id->len = 0;
	if (!tab) {
		snprintf(err, err_size, "expected HEX<TAB>ID");
		return -1;
	}
	n_hex = (size_t)(tab - line);
	if ((n_hex != 8 && n_hex != 16 && n_hex != 32) || simhash_fp_parse(line, n_hex, fp)) {
		snprintf(err, err_size, "invalid fingerprint '%.*s' (expected 8, 16 or 32 hex digits)",
			 n_hex > 40 ? 40 : (int)n_hex, line);
		return -1;
	}
	ret = idesc_unescape(tab + 1, len - n_hex - 1, out_id, &bad);
	if (ret == -1) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	if (ret == -2) {
		snprintf(err, err_size, "invalid escape in id at byte %zu", n_hex + 1 + bad);
		return -1;
	}
	return 0;
}

int idesc_names_parse(const void *data, size_t len, struct idesc_names *out)
{
	const char *p = data;
	uint64_t n;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return 0;
	if (len < 16 || memcmp(p, IDESC_NAMES_MAGIC, 8) != 0)
		return -1;
	memcpy(&n, p + 8, 8);
	if (n > (len - 16) / 8 - 1)
		return -1;
	out->off = (const uint64_t *)(const void *)(p + 16);
	out->bytes = (const char *)(out->off + n + 1);
	out->bytes_len = len - 16 - 8 * (size_t)(n + 1);
	if (out->off[0] != 0 || out->off[n] > out->bytes_len)
		return -1;
	out->n = n;
	return 0;
}

int idesc_names_check(const struct idesc_names *nm)
{
	for (uint64_t i = 0; i < nm->n; i++)
		if (nm->off[i] > nm->off[i + 1])
			return -1;
	return 0;
}

int idesc_names_get(const struct idesc_names *nm, uint64_t id, const char **s, size_t *len)
{
	if (id >= nm->n || nm->off[id] > nm->off[id + 1] || nm->off[id + 1] > nm->bytes_len)
		return -1;
	*s = nm->bytes + nm->off[id];
	*len = (size_t)(nm->off[id + 1] - nm->off[id]);
	return 0;
}
