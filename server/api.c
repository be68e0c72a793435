/* api.c - the route table of the JSON API and the two calls over it:
 * api_route (which route a method and path ask for) and api_handle (the
 * route's handler, given the request's body). The top of the JSON side:
 * the handlers live in routes_*.c, the answers they build in reply.c. See
 * api.h for the invariants.
 *
 * Every route is one row of `routes` below: its path, the methods it
 * answers, its handler, the methods that write, and whether it takes a
 * JSON body. The page's files (static.c) and unknown paths have no row.
 */
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "request.h"
#include "routes.h"
#include "static.h"

struct route_def {
	/* The path; a final "{id}" stands for the rest of the path (at least
	 * one byte), a percent-encoded id. Also the route's name in metrics. */
	const char *path;
	/* The methods answered, as a 405's Allow header lists them. */
	const char *methods;
	/* NULL: answered by http.c (/metrics), never by api_handle. */
	api_handler_fn *handler;
	/* The methods that write (need the token, wait for the commit), or NULL. */
	const char *writes;
	/* 1: the body is parsed as a JSON object before the handler runs. */
	int json_body;
};

static const struct route_def routes[N_ROUTES] = {
	[ROUTE_FINGERPRINT] = { "/v1/fingerprint", "POST", sh_route_fingerprint, NULL, 1 },
	[ROUTE_COMPARE] = { "/v1/compare", "POST", sh_route_compare, NULL, 1 },
	[ROUTE_QUERY] = { "/v1/query", "POST", sh_route_query, NULL, 1 },
	[ROUTE_DOCS] = { "/v1/documents", "POST", sh_route_add, "POST", 1 },
	[ROUTE_DOC] = { "/v1/documents/{id}", "GET, HEAD, DELETE", sh_route_document, "DELETE", 0 },
	[ROUTE_BATCH] = { "/v1/documents:batch", "POST", sh_route_batch, "POST", 1 },
	[ROUTE_STATS] = { "/v1/stats", "GET, HEAD", sh_route_stats, NULL, 0 },
	[ROUTE_HEALTH] = { "/healthz", "GET, HEAD", sh_route_health, NULL, 0 },
	[ROUTE_METRICS] = { "/metrics", "GET, HEAD", NULL, NULL, 0 },
};

#define ID_PATTERN "{id}"

const char *api_route_name(enum api_route r)
{
	if ((unsigned)r < N_ROUTES && routes[r].path)
		return routes[r].path;
	return r == ROUTE_STATIC ? "static" : "other";
}

/* 1 if method is one of the comma-separated names of list ("GET, HEAD"). */
static int method_in(const char *method, const char *list)
{
	size_t n = strlen(method), k;

	while (list && *list) {
		k = strcspn(list, ",");
		if (k == n && !strncmp(list, method, n))
			return 1;
		list += k;
		list += strspn(list, ", ");
	}
	return 0;
}

int api_route_writes(enum api_route r, const char *method)
{
	return (unsigned)r < N_ROUTES && method_in(method, routes[r].writes);
}

void api_limits_init(struct api_limits *l)
{
	l->max_body = (size_t)16 << 20;
	l->max_text = (size_t)1 << 20;
	l->max_batch = 1000;
	l->max_id = 1024;
	l->max_meta = 4096;
	l->max_limit = 1000;
}

/* The value of two hex digits, read by the library's own hex reader (either
 * case, nothing but digits): as the low byte of a 32-bit fingerprint. -1
 * if s[0..2) are not two hex digits. */
static int hex_byte(const char *s)
{
	char word[8] = { '0', '0', '0', '0', '0', '0', s[0], s[1] };
	simhash_fp fp;

	if (simhash_fp_parse(word, sizeof(word), &fp))
		return -1;
	return (int)(fp.w[0] & 0xff);
}

/* Decodes %XX escapes of s[0..len) into a fresh string. -1 on a bad escape,
 * invalid UTF-8 or a NUL byte. */
static int pct_decode(const char *s, size_t len, char **out, size_t *out_len)
{
	char *d = malloc(len + 1);
	size_t i, n = 0;
	json_t *check;
	int c;

	if (!d)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] == '%') {
			if (i + 2 >= len || (c = hex_byte(s + i + 1)) <= 0)
				goto bad;
			d[n++] = (char)c;
			i += 2;
		} else if (s[i] == '\0') {
			goto bad;
		} else {
			d[n++] = s[i];
		}
	}
	d[n] = '\0';
	check = json_stringn(d, n); /* validates UTF-8 */
	if (!check)
		goto bad;
	json_decref(check);
	*out = d;
	*out_len = n;
	return 0;
bad:
	free(d);
	return -1;
}

static int method_not_allowed(struct api_reply *r, const char *method, const char *allow)
{
	api_error(r, 405, "method_not_allowed", "%s is not allowed here; allowed: %s", method,
		  allow);
	r->allow = allow;
	return 405;
}

/* 1 if path is the route's: *rest then points at the id of a "{id}" route
 * (else NULL). */
static int path_matches(const char *pattern, const char *path, const char **rest)
{
	size_t n = strlen(pattern), k = strlen(ID_PATTERN);

	*rest = NULL;
	if (n < k || strcmp(pattern + n - k, ID_PATTERN))
		return !strcmp(pattern, path);
	n -= k;
	if (strncmp(path, pattern, n) || !path[n])
		return 0;
	*rest = path + n;
	return 1;
}

int api_route(const char *method, const char *path, enum api_route *route, char **id,
	      size_t *id_len, struct api_reply *r)
{
	const char *raw;
	unsigned i;

	*id = NULL;
	*id_len = 0;
	for (i = 0; i < N_ROUTES; i++) {
		if (!routes[i].path || !path_matches(routes[i].path, path, &raw))
			continue;
		*route = (enum api_route)i;
		if (!method_in(method, routes[i].methods))
			return method_not_allowed(r, method, routes[i].methods);
		if (raw && pct_decode(raw, strlen(raw), id, id_len))
			return api_error(r, 400, "bad_id",
					 "the id in the path is not percent-encoded UTF-8 "
					 "(or holds a NUL)");
		return 0;
	}
	if (sh_static_find(path)) {
		*route = ROUTE_STATIC;
		if (!method_in(method, "GET, HEAD"))
			return method_not_allowed(r, method, "GET, HEAD");
		return 0;
	}
	*route = ROUTE_OTHER;
	return api_error(r, 404, "not_found", "no such route: %s %s", method, path);
}

int api_handle(struct api *api, simhash_ctx *ctx, enum api_route route, const char *method,
	       const char *id, size_t id_len, const char *body, size_t len, struct api_reply *r)
{
	const struct route_def *d = (unsigned)route < N_ROUTES ? &routes[route] : NULL;
	struct api_call call = { .method = method, .id = id, .id_len = id_len };
	int st;

	r->allow = NULL;
	if (!d || !d->handler)
		return api_error(r, 404, "not_found", "no such route");
	if (d->json_body) {
		if (body && len > api->limits.max_body)
			return api_error(r, 413, "body_too_large",
					 "the body holds %zu bytes, over the limit of %zu", len,
					 api->limits.max_body);
		if ((st = api_parse_body(body, len, &call.body, r)))
			return st;
	}
	st = d->handler(api, ctx, &call, r);
	json_decref(call.body);
	return st;
}
