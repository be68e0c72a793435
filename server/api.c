/* api.c - routes, errors and the stateless requests of the JSON API:
 * /v1/fingerprint, /v1/compare, /healthz; the parsing shared by the store
 * requests (a text or a fingerprint, k, ids). See api.h for the invariants.
 *
 * Status codes: 400 when the body is not JSON (or not UTF-8), 422 when it is
 * JSON of the wrong shape (a missing field, a wrong type, an unknown field, a
 * value out of range, a fingerprint of another width or scheme), 413 when a
 * body, a text or a batch is over its limit.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"
#include "api_internal.h"

static const char *const route_names[N_ROUTES] = {
	[ROUTE_FINGERPRINT] = "/v1/fingerprint",
	[ROUTE_COMPARE] = "/v1/compare",
	[ROUTE_QUERY] = "/v1/query",
	[ROUTE_DOCS] = "/v1/documents",
	[ROUTE_DOC] = "/v1/documents/{id}",
	[ROUTE_BATCH] = "/v1/documents:batch",
	[ROUTE_STATS] = "/v1/stats",
	[ROUTE_HEALTH] = "/healthz",
	[ROUTE_METRICS] = "/metrics",
	[ROUTE_STATIC] = "static",
	[ROUTE_OTHER] = "other",
};

const char *api_route_name(enum api_route r)
{
	return r < N_ROUTES ? route_names[r] : "other";
}

int api_route_writes(enum api_route r, const char *method)
{
	return r == ROUTE_DOCS || r == ROUTE_BATCH || (r == ROUTE_DOC && !strcmp(method, "DELETE"));
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

void api_reply_free(struct api_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

/* Takes j (a reference) and makes it the body. 500 if it cannot be dumped. */
int api_reply_json(struct api_reply *r, int status, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;

	json_decref(j);
	api_reply_free(r);
	r->type = "application/json";
	r->allow = NULL;
	if (!s) {
		static const char oom[] =
			"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
		r->status = 500;
		r->body = strdup(oom);
		r->len = r->body ? sizeof(oom) - 1 : 0;
		return r->status;
	}
	r->status = status;
	r->body = s;
	r->len = strlen(s);
	return status;
}

/* A message as one line of UTF-8: control characters (a quoted path or key
 * may hold any) become '?', and a character cut by the buffer's end is
 * dropped (json_string refuses invalid UTF-8). */
static json_t *message_json(char *msg)
{
	size_t i, n = strlen(msg);
	json_t *m;

	for (i = 0; i < n; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	for (i = 0; i < 4 && n > 0; i++, n--) {
		if ((m = json_stringn(msg, n)))
			return m;
	}
	return json_string("(message not UTF-8)");
}

int api_error(struct api_reply *r, int status, const char *code, const char *fmt, ...)
{
	char msg[512];
	json_t *m;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m = message_json(msg);
	return api_reply_json(r, status,
			      json_pack("{s:{s:s,s:o}}", "error", "code", code, "message", m));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes %XX escapes of s[0..len) into a fresh string. -1 on a bad escape,
 * invalid UTF-8 or a NUL byte. */
static int pct_decode(const char *s, size_t len, char **out, size_t *out_len)
{
	char *d = malloc(len + 1);
	size_t i, n = 0;
	json_t *check;

	if (!d)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= len)
				goto bad;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				goto bad;
			d[n++] = (char)(hi * 16 + lo);
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

#define DOC_PREFIX "/v1/documents/"

int api_route(const char *method, const char *path, enum api_route *route, char **id,
	      size_t *id_len, struct api_reply *r)
{
	static const struct {
		const char *path;
		enum api_route route;
		const char *allow;
	} table[] = {
		{ "/v1/fingerprint", ROUTE_FINGERPRINT, "POST" },
		{ "/v1/compare", ROUTE_COMPARE, "POST" },
		{ "/v1/query", ROUTE_QUERY, "POST" },
		{ "/v1/documents", ROUTE_DOCS, "POST" },
		{ "/v1/documents:batch", ROUTE_BATCH, "POST" },
		{ "/v1/stats", ROUTE_STATS, "GET, HEAD" },
		{ "/healthz", ROUTE_HEALTH, "GET, HEAD" },
		{ "/metrics", ROUTE_METRICS, "GET, HEAD" },
	};
	int is_get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	size_t i;

	*id = NULL;
	*id_len = 0;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(path, table[i].path))
			continue;
		*route = table[i].route;
		if (!strcmp(table[i].allow, "POST") ? strcmp(method, "POST") : !is_get)
			return method_not_allowed(r, method, table[i].allow);
		return 0;
	}
	if (!strncmp(path, DOC_PREFIX, strlen(DOC_PREFIX)) && path[strlen(DOC_PREFIX)]) {
		const char *raw = path + strlen(DOC_PREFIX);

		*route = ROUTE_DOC;
		if (!is_get && strcmp(method, "DELETE"))
			return method_not_allowed(r, method, "GET, HEAD, DELETE");
		if (pct_decode(raw, strlen(raw), id, id_len))
			return api_error(r, 400, "bad_id",
					 "the id in the path is not percent-encoded UTF-8 "
					 "(or holds a NUL)");
		return 0;
	}
	if (sh_static_find(path)) {
		*route = ROUTE_STATIC;
		if (!is_get)
			return method_not_allowed(r, method, "GET, HEAD");
		return 0;
	}
	*route = ROUTE_OTHER;
	return api_error(r, 404, "not_found", "no such route: %s %s", method, path);
}

/* ---------------------------------------------------------------- parsing */

int api_parse_body(const char *body, size_t len, json_t **out, struct api_reply *r)
{
	json_error_t e;
	json_t *j;

	if (!body || len == 0)
		return api_error(r, 400, "empty_body", "the request needs a JSON object as its body");
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &e);
	if (!j) {
		if (json_error_code(&e) == json_error_invalid_utf8)
			return api_error(r, 400, "invalid_utf8", "the body is not valid UTF-8: %s",
					 e.text);
		return api_error(r, 400, "invalid_json", "the body is not valid JSON: %s at byte %d",
				 e.text, e.position);
	}
	if (!json_is_object(j)) {
		json_decref(j);
		return api_error(r, 422, "not_an_object", "the body must be a JSON object");
	}
	*out = j;
	return 0;
}

/* 422 if obj has a key not in the NULL-terminated list. */
int api_check_keys(json_t *obj, const char *const *keys, struct api_reply *r)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v) {
		for (i = 0; keys[i]; i++)
			if (!strcmp(key, keys[i]))
				break;
		if (!keys[i])
			return api_error(r, 422, "unknown_field", "unknown field \"%s\"", key);
	}
	return 0;
}

/* The string field name of obj: 0 with *s and *len (NULL if absent and
 * optional), or an error status. */
int api_get_string(json_t *obj, const char *name, int required, const char **s, size_t *len,
		   struct api_reply *r)
{
	json_t *v = json_object_get(obj, name);

	*s = NULL;
	*len = 0;
	if (!v) {
		if (required)
			return api_error(r, 422, "missing_field", "field \"%s\" is required", name);
		return 0;
	}
	if (!json_is_string(v))
		return api_error(r, 422, "wrong_type", "field \"%s\" must be a string", name);
	*s = json_string_value(v);
	*len = json_string_length(v);
	return 0;
}

int api_get_text(struct api *api, json_t *obj, const char *name, int required, const char **s,
		 size_t *len, struct api_reply *r)
{
	int st = api_get_string(obj, name, required, s, len, r);

	if (st)
		return st;
	if (*s && *len > api->limits.max_text)
		return api_error(r, 413, "text_too_large",
				 "field \"%s\" holds %zu bytes, over the limit of %zu", name, *len,
				 api->limits.max_text);
	return 0;
}

int api_get_bool(json_t *obj, const char *name, int *out, struct api_reply *r)
{
	json_t *v = json_object_get(obj, name);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return api_error(r, 422, "wrong_type", "field \"%s\" must be true or false", name);
	*out = json_is_true(v);
	return 0;
}

int api_get_uint(json_t *obj, const char *name, unsigned long lo, unsigned long hi,
		 unsigned long dflt, unsigned long *out, struct api_reply *r)
{
	json_t *v = json_object_get(obj, name);
	json_int_t n;

	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return api_error(r, 422, "wrong_type", "field \"%s\" must be an integer", name);
	n = json_integer_value(v);
	if (n < (json_int_t)lo || n > (json_int_t)hi)
		return api_error(r, 422, "out_of_range", "field \"%s\" must be in %lu..%lu", name,
				 lo, hi);
	*out = (unsigned long)n;
	return 0;
}

int api_get_id(struct api *api, json_t *obj, const char **id, size_t *len, struct api_reply *r)
{
	json_t *v = json_object_get(obj, "id");

	if (!v)
		return api_error(r, 422, "missing_field", "field \"id\" is required");
	if (!json_is_string(v))
		return api_error(r, 422, "wrong_type", "field \"id\" must be a string");
	*id = json_string_value(v);
	*len = json_string_length(v);
	if (*len == 0)
		return api_error(r, 422, "bad_id", "an id must not be empty");
	if (*len > api->limits.max_id)
		return api_error(r, 422, "bad_id", "an id holds %zu bytes, over the limit of %zu",
				 *len, api->limits.max_id);
	if (memchr(*id, '\0', *len))
		return api_error(r, 422, "bad_id", "an id must not hold a NUL character");
	return 0;
}

int api_text_fp(struct api *api, simhash_ctx *ctx, const char *text, size_t len, simhash_fp *fp,
		struct api_reply *r)
{
	simhash_err err = simhash_fingerprint(ctx, text, len, fp);

	if (err == SIMHASH_EUTF8)
		return api_error(r, 422, "invalid_utf8", "the text is not valid UTF-8 at byte %zu",
				 simhash_ctx_error_offset(ctx));
	if (err)
		return api_error(r, 500, "internal", "fingerprint: %s", simhash_strerror(err));
	return 0;
}

/* Reads what to look for: "text", or "fingerprint" (with an optional "scheme"
 * that must be the server's). */
int api_get_probe(struct api *api, simhash_ctx *ctx, json_t *obj, simhash_fp *fp,
		  struct api_reply *r)
{
	const char *text, *hex, *scheme;
	size_t len, hex_len, scheme_len;
	int st;

	if ((st = api_get_text(api, obj, "text", 0, &text, &len, r)) ||
	    (st = api_get_string(obj, "fingerprint", 0, &hex, &hex_len, r)) ||
	    (st = api_get_string(obj, "scheme", 0, &scheme, &scheme_len, r)))
		return st;
	if (!text == !hex)
		return api_error(r, 422, "missing_field",
				 "give exactly one of \"text\" and \"fingerprint\"");
	if (text)
		return api_text_fp(api, ctx, text, len, fp, r);
	/* By length: "SCHEME\u0000junk" is not SCHEME. */
	if (scheme && memchr(scheme, '\0', scheme_len))
		return api_error(r, 422, "wrong_scheme", "field \"scheme\" holds a NUL character");
	if (scheme && (scheme_len != strlen(api->scheme) || memcmp(scheme, api->scheme, scheme_len)))
		return api_error(r, 422, "wrong_scheme",
				 "the fingerprint's scheme \"%.100s\" is not the store's \"%s\"",
				 scheme, api->scheme);
	if (simhash_fp_parse(hex, hex_len, fp))
		return api_error(r, 422, "bad_fingerprint",
				 "\"fingerprint\" must be 8, 16 or 32 hex digits");
	if (fp->bits != api->cfg.bits)
		return api_error(r, 422, "wrong_width",
				 "the fingerprint has %u bits; this store's have %u (%u hex digits)",
				 fp->bits, api->cfg.bits, api->cfg.bits / 4);
	return 0;
}

json_t *api_fp_json(const simhash_fp *fp)
{
	char hex[SIMHASH_HEX_MAX];

	simhash_fp_format(fp, hex);
	return json_string(hex);
}

/* ---------------------------------------------------------------- stateless routes */

static int do_fingerprint(struct api *api, simhash_ctx *ctx, json_t *req, struct api_reply *r)
{
	static const char *const keys[] = { "text", NULL };
	const char *text;
	simhash_fp fp;
	size_t len;
	int st;

	if ((st = api_check_keys(req, keys, r)) ||
	    (st = api_get_text(api, req, "text", 1, &text, &len, r)) ||
	    (st = api_text_fp(api, ctx, text, len, &fp, r)))
		return st;
	return api_reply_json(r, 200,
			      json_pack("{s:o,s:i,s:s}", "fingerprint", api_fp_json(&fp), "bits",
					(int)fp.bits, "scheme", api->scheme));
}

static int do_compare(struct api *api, simhash_ctx *ctx, json_t *req, struct api_reply *r)
{
	static const char *const keys[] = { "a", "b", NULL };
	const char *a, *b;
	size_t a_len, b_len;
	simhash_fp fa, fb;
	double cosine = 0, jaccard = 0;
	json_t *out;
	int st;

	if ((st = api_check_keys(req, keys, r)) ||
	    (st = api_get_text(api, req, "a", 1, &a, &a_len, r)) ||
	    (st = api_get_text(api, req, "b", 1, &b, &b_len, r)) ||
	    (st = api_text_fp(api, ctx, a, a_len, &fa, r)) ||
	    (st = api_text_fp(api, ctx, b, b_len, &fb, r)))
		return st;
	out = json_pack("{s:o,s:o,s:i,s:i,s:f,s:s}", "a", api_fp_json(&fa), "b", api_fp_json(&fb),
			"bits", (int)fa.bits, "distance", (int)simhash_hamming(&fa, &fb),
			"similarity", simhash_similarity(&fa, &fb), "scheme", api->scheme);
	/* The Python compatibility mode has no exact measure: null there. */
	if (api->cfg.compat == SIMHASH_COMPAT_NONE &&
	    simhash_text_similarity(ctx, a, a_len, b, b_len, &cosine, &jaccard) == SIMHASH_OK) {
		json_object_set_new(out, "cosine", json_real(cosine));
		json_object_set_new(out, "jaccard", json_real(jaccard));
	} else {
		json_object_set_new(out, "cosine", json_null());
		json_object_set_new(out, "jaccard", json_null());
	}
	return api_reply_json(r, 200, out);
}

/* 200 while the service answers: reads are served when writes fail for
 * lack of space, so "writable" tells that apart. */
static int do_health(struct api *api, struct api_reply *r)
{
	return api_reply_json(r, 200,
			      json_pack("{s:s,s:b,s:b}", "status", "ok", "store", api->store != NULL,
					"writable", api->store != NULL && sh_store_writable(api)));
}

int api_handle(struct api *api, simhash_ctx *ctx, enum api_route route, const char *method,
	       const char *id, size_t id_len, const char *body, size_t len, struct api_reply *r)
{
	json_t *req = NULL;
	int st;

	r->allow = NULL;
	switch (route) {
	case ROUTE_HEALTH:
		return do_health(api, r);
	case ROUTE_STATS:
		return sh_docs_stats(api, r);
	case ROUTE_DOC:
		return sh_docs_doc(api, method, id, id_len, r);
	case ROUTE_METRICS:
	case ROUTE_STATIC:
	case ROUTE_OTHER:
	case N_ROUTES:
		return api_error(r, 404, "not_found", "no such route");
	default:
		break;
	}
	if (body && len > api->limits.max_body)
		return api_error(r, 413, "body_too_large",
				 "the body holds %zu bytes, over the limit of %zu", len,
				 api->limits.max_body);
	if ((st = api_parse_body(body, len, &req, r)))
		return st;
	switch (route) {
	case ROUTE_FINGERPRINT:
		st = do_fingerprint(api, ctx, req, r);
		break;
	case ROUTE_COMPARE:
		st = do_compare(api, ctx, req, r);
		break;
	case ROUTE_QUERY:
		st = sh_docs_query(api, ctx, req, r);
		break;
	case ROUTE_DOCS:
		st = sh_docs_add(api, ctx, req, r);
		break;
	case ROUTE_BATCH:
		st = sh_docs_batch(api, ctx, req, r);
		break;
	default:
		st = api_error(r, 500, "internal", "unhandled route");
		break;
	}
	json_decref(req);
	return st;
}
