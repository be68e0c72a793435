/* request.c - the fields of a request's JSON body: the parsing every route
 * that takes a body shares (a text or a fingerprint, k, ids, flags). Above
 * reply.c, below the routes.
 *
 * Status codes: 400 when the body is not JSON (or not UTF-8), 422 when it is
 * JSON of the wrong shape (a missing field, a wrong type, an unknown field, a
 * value out of range, a fingerprint of another width or scheme), 413 when a
 * text is over its limit. Nothing here touches the store (api.h, 2).
 */
#include <string.h>
#include "request.h"

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
	simhash_error e;
	simhash_err err = simhash_fingerprint(ctx, text, len, fp, &e);

	if (err == SIMHASH_EUTF8)
		return api_error(r, 422, "invalid_utf8", "the text is not valid UTF-8 at byte %llu",
				 (unsigned long long)e.offset);
	if (err)
		return api_error(r, 500, "internal", "fingerprint: %s", simhash_strerror(err));
	return 0;
}

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
