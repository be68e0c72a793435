/* routes_documents.c - the routes on stored documents: /v1/query, /v1/documents,
 * /v1/documents/{id}, /v1/documents:batch and /v1/stats.
 *
 * Each request is parsed and checked whole (every document of a batch) before
 * the store is touched, so a 4xx never leaves a partial write (api.h, 2).
 * Writes go through the store's group commit and return once durable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "request.h"
#include "routes.h"
#include "service_store.h"

#define DEFAULT_K 3
#define DEFAULT_LIMIT 10

static void doc_req_free(struct doc_req *d)
{
	free(d->meta);
	d->meta = NULL;
}

static int no_store(struct api_reply *r)
{
	return api_error(r, 503, "no_store", "this server runs without a store");
}

static int parse_doc(struct api *api, simhash_ctx *ctx, json_t *obj, struct doc_req *d,
		     struct api_reply *r)
{
	static const char *const keys[] = { "id",    "text",      "fingerprint", "scheme", "meta",
					    "check", "if_unique", "k",           "limit",  NULL };
	unsigned long k, limit;
	json_t *meta;
	int st;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(obj))
		return api_error(r, 422, "not_an_object", "a document must be a JSON object");
	if ((st = api_check_keys(obj, keys, r)) || (st = api_get_id(api, obj, &d->id, &d->id_len, r)) ||
	    (st = api_get_probe(api, ctx, obj, &d->fp, r)) ||
	    (st = api_get_bool(obj, "check", &d->check, r)) ||
	    (st = api_get_bool(obj, "if_unique", &d->if_unique, r)) ||
	    (st = api_get_uint(obj, "k", 0, api->cfg.bits, DEFAULT_K, &k, r)) ||
	    (st = api_get_uint(obj, "limit", 1, api->limits.max_limit, DEFAULT_LIMIT, &limit, r)))
		return st;
	d->k = (unsigned)k;
	d->limit = (unsigned)limit;
	meta = json_object_get(obj, "meta");
	if (meta && !json_is_null(meta)) {
		if (!json_is_object(meta))
			return api_error(r, 422, "wrong_type", "field \"meta\" must be an object");
		d->meta = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
		if (!d->meta)
			return api_error(r, 500, "internal", "out of memory");
		d->meta_len = strlen(d->meta);
		if (d->meta_len > api->limits.max_meta) {
			doc_req_free(d);
			return api_error(r, 422, "meta_too_large",
					 "\"meta\" takes %zu bytes as JSON, over the limit of %zu",
					 d->meta_len + 0, api->limits.max_meta);
		}
	}
	return 0;
}

int sh_route_query(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		   struct api_reply *r)
{
	static const char *const keys[] = { "text", "fingerprint", "scheme", "k", "limit", NULL };
	json_t *req = call->body;
	unsigned long k, limit;
	simhash_fp fp;
	int st;

	if ((st = api_check_keys(req, keys, r)) || (st = api_get_probe(api, ctx, req, &fp, r)) ||
	    (st = api_get_uint(req, "k", 0, api->cfg.bits, DEFAULT_K, &k, r)) ||
	    (st = api_get_uint(req, "limit", 1, api->limits.max_limit, DEFAULT_LIMIT, &limit, r)))
		return st;
	if (!api->store)
		return no_store(r);
	return sh_store_query(api, &fp, (unsigned)k, (unsigned)limit, r);
}

int sh_route_add(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		 struct api_reply *r)
{
	struct doc_req d;
	int st;

	if ((st = parse_doc(api, ctx, call->body, &d, r)))
		return st;
	if (!api->store)
		st = no_store(r);
	else
		st = sh_store_add(api, &d, r);
	doc_req_free(&d);
	return st;
}

/* Says which document of a batch an error answer is about: its message
 * prefixed "documents[i]: " and an "index" beside it. */
static void name_document(struct api_reply *r, int st, size_t i)
{
	json_t *j = json_loadb(r->body, r->len, 0, NULL);
	json_t *e = j ? json_object_get(json_object_get(j, "error"), "message") : NULL;
	char msg[600];

	if (!e) {
		json_decref(j);
		return;
	}
	snprintf(msg, sizeof(msg), "documents[%zu]: %s", i, json_string_value(e));
	json_object_set_new(json_object_get(j, "error"), "message", json_string(msg));
	json_object_set_new(json_object_get(j, "error"), "index", json_integer((json_int_t)i));
	api_reply_json(r, st, j);
}

int sh_route_batch(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		   struct api_reply *r)
{
	static const char *const keys[] = { "documents", NULL };
	struct doc_req *docs;
	json_t *arr;
	size_t i, n;
	int st;

	if ((st = api_check_keys(call->body, keys, r)))
		return st;
	arr = json_object_get(call->body, "documents");
	if (!arr)
		return api_error(r, 422, "missing_field", "field \"documents\" is required");
	if (!json_is_array(arr))
		return api_error(r, 422, "wrong_type", "field \"documents\" must be an array");
	n = json_array_size(arr);
	if (n > api->limits.max_batch)
		return api_error(r, 413, "batch_too_large",
				 "the batch holds %zu documents, over the limit of %zu", n,
				 api->limits.max_batch);
	docs = calloc(n ? n : 1, sizeof(*docs));
	if (!docs)
		return api_error(r, 500, "internal", "out of memory");
	for (i = 0; i < n; i++) {
		if ((st = parse_doc(api, ctx, json_array_get(arr, i), &docs[i], r))) {
			name_document(r, st, i);
			goto out;
		}
	}
	st = api->store ? sh_store_add_batch(api, docs, n, r) : no_store(r);
out:
	for (i = 0; i < n; i++)
		doc_req_free(&docs[i]);
	free(docs);
	return st;
}

int sh_route_document(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		      struct api_reply *r)
{
	if (call->id_len > api->limits.max_id)
		return api_error(r, 404, "not_found", "no document has this id (it is too long)");
	if (!api->store)
		return no_store(r);
	if (!strcmp(call->method, "DELETE"))
		return sh_store_delete(api, call->id, call->id_len, r);
	return sh_store_get(api, call->id, call->id_len, r);
}

int sh_route_stats(struct api *api, simhash_ctx *ctx, const struct api_call *call,
		   struct api_reply *r)
{
	json_t *j = json_pack("{s:s,s:i,s:I}", "scheme", api->scheme, "bits", (int)api->cfg.bits,
			      "uptime_seconds", (json_int_t)(time(NULL) - (time_t)api->started));

	if (api->store)
		return sh_store_stats(api, j, r);
	json_object_set_new(j, "store", json_null());
	return api_reply_json(r, 200, j);
}
