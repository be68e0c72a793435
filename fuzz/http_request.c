/* http_request.c - fuzz target for the JSON API of `simhash serve`
 * (server/api.c and the routes_*.c it dispatches to) with no server and no
 * store: the request handling functions take a body and give a status and
 * a body.
 *
 * Input: byte 0 picks the route (and for ROUTE_DOC the method), the rest is
 * the body; it is also tried as a request path. The target aborts unless:
 *  1. api_route on any path gives 0 or 400/404/405 with an error answer;
 *  2. every answer's status is one of 200, 400, 404, 405, 413, 422, 503
 *     (never 500: bad input is never an internal error), and its body is a
 *     JSON object; an error's has error.code and a one-line error.message;
 *  3. a 200 from /v1/fingerprint carries the fingerprint that
 *     simhash_fingerprint gives the text as jansson reads it (an oracle), and
 *     a 200 from /v1/compare the Hamming distance of its two fingerprints;
 *  4. document routes, having no store, answer 503 only after the request
 *     passed every check (so the checks themselves are fuzzed);
 *  5. a /v1/documents/{id} path routes to the id that its rest spells with
 *     each %XX read by strtoul (an oracle apart from the server's decoder),
 *     and is refused (400) exactly when an escape is not two hex digits,
 *     spells 00, or the id holds a NUL or is not UTF-8.
 * Every answer is freed: the replays run under ASan's leak checker. */
#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../server/api.h"

#define FAIL(...)                                                                         \
	do {                                                                              \
		fprintf(stderr, "http_request: invariant broken at %s:%d: ", __FILE__,    \
			__LINE__);                                                        \
		fprintf(stderr, __VA_ARGS__);                                             \
		fputc('\n', stderr);                                                      \
		abort();                                                                  \
	} while (0)

static const enum api_route routes[] = { ROUTE_FINGERPRINT, ROUTE_COMPARE, ROUTE_QUERY,
					 ROUTE_DOCS,        ROUTE_BATCH,   ROUTE_DOC,
					 ROUTE_STATS,       ROUTE_HEALTH };

static json_t *check_reply(const struct api_reply *r)
{
	json_t *j, *e;

	switch (r->status) {
	case 200: case 400: case 404: case 405: case 413: case 422: case 503:
		break;
	default:
		FAIL("status %d", r->status);
	}
	j = json_loadb(r->body, r->len, 0, NULL);
	if (!json_is_object(j))
		FAIL("body is not a JSON object: %.*s", (int)r->len, r->body);
	if (r->status != 200) {
		const char *msg;

		e = json_object_get(j, "error");
		msg = json_string_value(json_object_get(e, "message"));
		if (!json_is_string(json_object_get(e, "code")) || !msg || !*msg ||
		    strchr(msg, '\n'))
			FAIL("bad error body: %.*s", (int)r->len, r->body);
	}
	return j;
}

/* Invariant 3, for /v1/fingerprint. */
static void check_fingerprint(simhash_ctx *ctx, const char *body, size_t len, json_t *out)
{
	json_t *req = json_loadb(body, len, JSON_ALLOW_NUL, NULL);
	json_t *text = json_object_get(req, "text");
	char hex[SIMHASH_HEX_MAX];
	simhash_fp fp;

	if (!json_is_string(text))
		FAIL("200 without a text");
	if (simhash_fingerprint(ctx, json_string_value(text), json_string_length(text), &fp, NULL))
		FAIL("200 for a text the library refuses");
	simhash_fp_format(&fp, hex);
	if (strcmp(hex, json_string_value(json_object_get(out, "fingerprint")) ?: ""))
		FAIL("fingerprint %s, expected %s", json_string_value(json_object_get(out, "fingerprint")), hex);
	json_decref(req);
}

static void check_compare(json_t *out)
{
	simhash_fp a, b;
	const char *ha = json_string_value(json_object_get(out, "a"));
	const char *hb = json_string_value(json_object_get(out, "b"));

	if (!ha || !hb || simhash_fp_parse(ha, strlen(ha), &a) || simhash_fp_parse(hb, strlen(hb), &b))
		FAIL("compare without two fingerprints");
	if (json_integer_value(json_object_get(out, "distance")) != (json_int_t)simhash_hamming(&a, &b))
		FAIL("compare distance is not the fingerprints' Hamming distance");
}

/* Invariant 5: the id path's rest should decode to, by another reader;
 * -1 where the server must refuse it. */
static int oracle_id(const char *rest, char *out, size_t *out_len)
{
	size_t i, n = 0, len = strlen(rest);
	char hex[3] = { 0 };
	json_t *utf8;

	for (i = 0; i < len; i++) {
		if (rest[i] != '%') {
			out[n++] = rest[i];
			continue;
		}
		if (i + 2 >= len || !isxdigit((unsigned char)rest[i + 1]) ||
		    !isxdigit((unsigned char)rest[i + 2]))
			return -1;
		hex[0] = rest[i + 1];
		hex[1] = rest[i + 2];
		out[n] = (char)strtoul(hex, NULL, 16);
		if (!out[n++])
			return -1;
		i += 2;
	}
	utf8 = json_stringn(out, n);
	if (!utf8)
		return -1;
	json_decref(utf8);
	*out_len = n;
	return 0;
}

static void check_id_route(const char *path, int st, enum api_route route, const char *id,
			   size_t id_len)
{
	static const char prefix[] = "/v1/documents/";
	char *want;
	size_t want_len = 0;
	int ok;

	if (strncmp(path, prefix, strlen(prefix)) || !path[strlen(prefix)])
		return;
	if (st == 405)
		return; /* the method is checked before the id */
	want = malloc(strlen(path) + 1);
	ok = oracle_id(path + strlen(prefix), want, &want_len) == 0;
	if (ok && (st || route != ROUTE_DOC || id_len != want_len || memcmp(id, want, id_len)))
		FAIL("id path %s: status %d, not the id it spells", path, st);
	if (!ok && st != 400)
		FAIL("id path %s: status %d, expected 400", path, st);
	free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct api api; /* read-only once set up */
	static simhash_ctx *ctx;
	static const char *const methods[] = { "GET", "POST", "DELETE", "PUT", "HEAD" };
	struct api_reply r = { 0 };
	enum api_route route;
	const char *body = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	char *path, *id;
	size_t id_len;
	json_t *out;
	int st;

	if (!ctx) {
		api_limits_init(&api.limits);
		api.limits.max_text = 4096;
		api.limits.max_body = 65536;
		api.limits.max_batch = 8;
		simhash_config_init(&api.cfg);
		simhash_config_scheme(&api.cfg, api.scheme, sizeof(api.scheme));
		if (simhash_ctx_new(&api.cfg, &ctx))
			FAIL("no context");
	}
	if (size == 0)
		return 0;

	/* Invariant 1: the body as a path. */
	path = malloc(len + 1);
	memcpy(path, body, len);
	path[len] = '\0';
	st = api_route(methods[data[0] % 5], path, &route, &id, &id_len, &r);
	if (st && st != 400 && st != 404 && st != 405)
		FAIL("route status %d", st);
	if (st)
		json_decref(check_reply(&r));
	else if (route == ROUTE_DOC && (!id || strlen(id) != id_len))
		FAIL("a document route without its id");
	check_id_route(path, st, route, id, id_len);
	free(id);
	free(path);
	api_reply_free(&r);

	/* Invariants 2 to 4: the body to a route. */
	route = routes[data[0] % (sizeof(routes) / sizeof(routes[0]))];
	st = api_handle(&api, ctx, route, (data[0] & 0x80) ? "DELETE" : "GET", body, len, body,
			len, &r);
	out = check_reply(&r);
	if (st == 200 && route == ROUTE_FINGERPRINT)
		check_fingerprint(ctx, body, len, out);
	if (st == 200 && route == ROUTE_COMPARE)
		check_compare(out);
	if (st == 200 && (route == ROUTE_QUERY || route == ROUTE_DOCS || route == ROUTE_BATCH ||
			  route == ROUTE_DOC))
		FAIL("a document route answered 200 without a store");
	json_decref(out);
	api_reply_free(&r);
	return 0;
}
