/* head.c - what a request head must be before `simhash serve` reads it.
 *
 * libmicrohttpd 0.9.75 parses the head into C strings and, left alone,
 * takes the first of two Content-Length headers, reads a chunked body when
 * Content-Length comes with Transfer-Encoding, keeps a header name with a
 * space in it as another header, and cuts every string at a NUL byte. Each
 * of these lets a proxy in front and this server see two different
 * requests in one stream (request smuggling), or lets "TOKEN\0junk" pass for
 * "TOKEN". So the head is checked once, on the first callback, before
 * anything routes or authenticates on it:
 *
 *  1. Exactly one Host, and one this server answers to (the allow-list):
 *     a web page cannot reach the API by rebinding its own name to our
 *     address (DNS rebinding), as the browser still sends its name.
 *  2. At most one Content-Length; none with a Transfer-Encoding; a
 *     Transfer-Encoding (once) only as "chunked" (RFC 9112, 6.1 and 6.3).
 *     At most one Authorization, so that no two parts of a chain can
 *     check different ones.
 *  3. Header names are tokens: no space or tab before the colon, and no
 *     line folded onto the previous one (RFC 9112, 5.1 and 5.2).
 *  4. No NUL byte in the request line or a header. libmicrohttpd keeps the
 *     head in one block, from the method to the empty line
 *     (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes), and points the method,
 *     url, version, each header's name and value and each query argument
 *     into it, writing a NUL only over the one separator that ends each of
 *     those strings (a space, a colon, '?', '&', '=', a line end's CR or
 *     LF), over the LF of a value's or the version's CRLF, and over the
 *     empty line's CR LF at the block's end. So every byte of the block
 *     outside those strings must be a space, a tab, or a NUL at one of those
 *     places: any other byte is text after a NUL the client sent, that
 *     libmicrohttpd cut off, and any other NUL is one the client sent. A
 *     folded line fails this too, as its continuation is copied elsewhere.
 *     (One corner passes: a NUL at the very end of the last header when the
 *     lines end in a bare LF; it cuts off nothing but itself.)
 * A request that fails any of these is answered (400, 421 or 501) and its
 * connection closed: what follows in the stream cannot be trusted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "head.h"

/* ---------------------------------------------------------------- the Host allow-list */

static int add_name(struct sh_hosts *h, const char *name, size_t len)
{
	char **p = realloc(h->names, (h->n + 1) * sizeof(*p));

	if (!p)
		return -1;
	h->names = p;
	if (!(p[h->n] = strndup(name, len)))
		return -1;
	h->n++;
	return 0;
}

/* Adds an address as a Host names it: an IPv6 literal in brackets. */
static int add_addr(struct sh_hosts *h, const char *addr, int v6)
{
	char buf[300];
	size_t n = strlen(addr);

	if (!v6 || addr[0] == '[')
		return add_name(h, addr, n);
	if (n + 3 > sizeof(buf))
		return -1;
	buf[0] = '[';
	memcpy(buf + 1, addr, n);
	buf[n + 1] = ']';
	return add_name(h, buf, n + 2);
}

int sh_hosts_init(struct sh_hosts *h, const char *listen_host, const char *numeric, int v6,
		  int wildcard, unsigned port, const char *const *extra, size_t n_extra)
{
	size_t i;
	int bad = 0;

	memset(h, 0, sizeof(*h));
	h->port = port;
	bad |= add_name(h, "localhost", strlen("localhost"));
	if (wildcard) {
		bad |= add_name(h, "127.0.0.1", strlen("127.0.0.1"));
		bad |= add_name(h, "[::1]", strlen("[::1]"));
	} else {
		bad |= add_addr(h, listen_host, v6 && strchr(listen_host, ':'));
		bad |= add_addr(h, numeric, v6);
	}
	for (i = 0; i < n_extra; i++) {
		if (!strcmp(extra[i], "*"))
			h->any = 1;
		else
			bad |= add_name(h, extra[i], strlen(extra[i]));
	}
	if (bad) {
		sh_hosts_free(h);
		return -1;
	}
	return 0;
}

void sh_hosts_set_port(struct sh_hosts *h, unsigned port)
{
	__atomic_store_n(&h->port, port, __ATOMIC_RELEASE);
}

void sh_hosts_free(struct sh_hosts *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	h->names = NULL;
	h->n = 0;
}

/* A Host matches an entry written the same (case aside, as names are), or
 * the entry followed by ":" and the port we listen on. */
int sh_hosts_allowed(const struct sh_hosts *h, const char *host, size_t len)
{
	unsigned port = __atomic_load_n(&h->port, __ATOMIC_ACQUIRE);
	char digits[12];
	size_t i, plen = (size_t)snprintf(digits, sizeof(digits), "%u", port);

	if (h->any)
		return 1;
	for (i = 0; i < h->n; i++) {
		size_t n = strlen(h->names[i]);

		if (len < n || strncasecmp(host, h->names[i], n))
			continue;
		if (len == n)
			return 1;
		if (len == n + 1 + plen && host[n] == ':' && !memcmp(host + n + 1, digits, plen))
			return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- the head */

/* What one pass over the headers finds. */
struct head_scan {
	const char *block; /* the head as libmicrohttpd keeps it (invariant 4) */
	size_t size;
	unsigned char *covered; /* per byte of block: IN_STRING, NUL_OK */
	unsigned n_host, n_length, n_te, n_auth;
	const char *host;
	size_t host_len;
	int te_not_chunked;
	int bad_name;
};

#define IN_STRING 1 /* inside a string libmicrohttpd gave us */
#define NUL_OK 2    /* a separator it may have overwritten with a NUL */

/* Marks a string of the head, and the separators after it: one, or two
 * for a line that may end in CR LF (invariant 4). */
static void cover(struct head_scan *s, const char *p, size_t len, int line_end)
{
	size_t at, i;

	if (!s->covered || !p || p < s->block || p + len > s->block + s->size)
		return;
	at = (size_t)(p - s->block);
	memset(s->covered + at, IN_STRING, len);
	for (i = at + len; i < s->size && i <= at + len + (line_end ? 1 : 0); i++)
		s->covered[i] |= NUL_OK;
}

static int is_token_char(unsigned char ch)
{
	return ch > 0x20 && ch < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", ch);
}

static int name_is(const char *key, size_t len, const char *name)
{
	return len == strlen(name) && !strncasecmp(key, name, len);
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	struct head_scan *s = cls;
	size_t i;

	cover(s, key, key_size, 0);
	cover(s, value, value_size, kind == MHD_HEADER_KIND);
	if (kind != MHD_HEADER_KIND)
		return MHD_YES;
	for (i = 0; i < key_size; i++)
		if (!is_token_char((unsigned char)key[i]))
			s->bad_name = 1;
	if (key_size == 0)
		s->bad_name = 1;
	if (name_is(key, key_size, "Host")) {
		s->n_host++;
		s->host = value;
		s->host_len = value_size;
	} else if (name_is(key, key_size, "Authorization")) {
		s->n_auth++;
	} else if (name_is(key, key_size, "Content-Length")) {
		s->n_length++;
	} else if (name_is(key, key_size, "Transfer-Encoding")) {
		s->n_te++;
		if (!name_is(value, value_size, "chunked"))
			s->te_not_chunked = 1;
	}
	return MHD_YES;
}

/* 1 if a byte of the head outside every string is neither a blank nor a
 * NUL where libmicrohttpd writes one (invariant 4). */
static int dropped_text(const struct head_scan *s)
{
	size_t i;

	for (i = 0; i < s->size; i++) {
		char ch = s->block[i];

		if (s->covered[i] & IN_STRING || ch == ' ' || ch == '\t')
			continue;
		if (ch != '\0' || !(s->covered[i] & NUL_OK || i + 2 >= s->size))
			return 1;
	}
	return 0;
}

int sh_head_check(struct MHD_Connection *c, const struct sh_hosts *hosts, const char *method,
		  const char *url, const char *version, struct api_reply *r)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	struct head_scan s;
	int nul;

	memset(&s, 0, sizeof(s));
	/* Only when the strings lie where invariant 4 says. */
	if (info && url >= method && url < method + info->header_size) {
		s.block = method;
		s.size = info->header_size;
		s.covered = calloc(s.size ? s.size : 1, 1);
		if (!s.covered)
			return api_error(r, 503, "server_busy", "out of memory");
	}
	cover(&s, method, strlen(method), 0);
	cover(&s, url, strlen(url), 0);
	cover(&s, version, strlen(version), 1);
	MHD_get_connection_values_n(c, MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND, scan_header, &s);
	nul = s.covered && dropped_text(&s);
	free(s.covered);
	if (nul)
		return api_error(r, 400, "bad_request",
				 "the request line or a header holds a NUL byte, or a header line "
				 "is folded");
	if (s.bad_name)
		return api_error(r, 400, "bad_request",
				 "a header name holds a space or another character not allowed");
	if (s.n_length > 1)
		return api_error(r, 400, "bad_request",
				 "the request has %u Content-Length headers; one at most",
				 s.n_length);
	if (s.n_length && s.n_te)
		return api_error(r, 400, "bad_request",
				 "the request has both Content-Length and Transfer-Encoding");
	if (s.n_te > 1 || s.te_not_chunked)
		return api_error(r, 501, "not_implemented",
				 "the only Transfer-Encoding understood is a single \"chunked\"");
	if (s.n_auth > 1)
		return api_error(r, 400, "bad_request", "the request has %u Authorization headers",
				 s.n_auth);
	if (s.n_host != 1)
		return api_error(r, 400, "bad_host", "the request needs one Host header, it has %u",
				 s.n_host);
	if (!sh_hosts_allowed(hosts, s.host, s.host_len))
		return api_error(r, 421, "unknown_host",
				 "this server does not answer to Host \"%.100s\" (see --allow-host)",
				 s.host);
	return 0;
}
