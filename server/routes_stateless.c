/* routes_stateless.c - the routes that need no store: /v1/fingerprint,
 * /v1/compare and /healthz. They answer the same whether or not the server
 * has a store (but for /healthz's "store" and "writable"), and change
 * nothing.
 */
#include "request.h"
#include "routes.h"
#include "service_store.h"

int sh_route_fingerprint(struct api *api, simhash_ctx *ctx, const struct api_call *call,
			 struct api_reply *r)
{
	static const char *const keys[] = { "text", NULL };
	const char *text;
	simhash_fp fp;
	size_t len;
	int st;

	if ((st = api_check_keys(call->body, keys, r)) ||
	    (st = api_get_text(api, call->body, "text", 1, &text, &len, r)) ||
	    (st = api_text_fp(api, ctx, text, len, &fp, r)))
		return st;
	return api_reply_json(r, 200,
			      json_pack("{s:o,s:i,s:s}", "fingerprint", api_fp_json(&fp), "bits",
					(int)fp.bits, "scheme", api->scheme));
}

int sh_route_compare(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		     struct api_reply *r)
{
	static const char *const keys[] = { "a", "b", NULL };
	const char *a, *b;
	size_t a_len, b_len;
	simhash_fp fa, fb;
	double cosine = 0, jaccard = 0;
	json_t *out;
	int st;

	if ((st = api_check_keys(call->body, keys, r)) ||
	    (st = api_get_text(api, call->body, "a", 1, &a, &a_len, r)) ||
	    (st = api_get_text(api, call->body, "b", 1, &b, &b_len, r)) ||
	    (st = api_text_fp(api, ctx, a, a_len, &fa, r)) ||
	    (st = api_text_fp(api, ctx, b, b_len, &fb, r)))
		return st;
	out = json_pack("{s:o,s:o,s:i,s:i,s:f,s:s}", "a", api_fp_json(&fa), "b", api_fp_json(&fb),
			"bits", (int)fa.bits, "distance", (int)simhash_hamming(&fa, &fb),
			"similarity", simhash_similarity(&fa, &fb), "scheme", api->scheme);
	/* The Python compatibility mode has no exact measure: null there. */
	if (api->cfg.compat == SIMHASH_COMPAT_NONE &&
	    simhash_text_similarity(ctx, a, a_len, b, b_len, &cosine, &jaccard, NULL) == SIMHASH_OK) {
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
int sh_route_health(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		    struct api_reply *r)
{
	return api_reply_json(r, 200,
			      json_pack("{s:s,s:b,s:b}", "status", "ok", "store", api->store != NULL,
					"writable", api->store != NULL && sh_store_writable(api)));
}
