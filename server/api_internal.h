/* api_internal.h - what the files of server/ share besides api.h: the JSON
 * helpers of api.c, the store routes of docs.c and the embedded page of
 * static.c. Each helper that checks input returns 0, or sets an error answer
 * in r and returns its status. */
#ifndef SERVER_API_INTERNAL_H
#define SERVER_API_INTERNAL_H

#include <jansson.h>
#include "api.h"

int api_reply_json(struct api_reply *r, int status, json_t *j);
int api_parse_body(const char *body, size_t len, json_t **out, struct api_reply *r);
int api_check_keys(json_t *obj, const char *const *keys, struct api_reply *r);
int api_get_string(json_t *obj, const char *name, int required, const char **s, size_t *len,
		   struct api_reply *r);
int api_get_text(struct api *api, json_t *obj, const char *name, int required, const char **s,
		 size_t *len, struct api_reply *r);
int api_get_bool(json_t *obj, const char *name, int *out, struct api_reply *r);
int api_get_uint(json_t *obj, const char *name, unsigned long lo, unsigned long hi,
		 unsigned long dflt, unsigned long *out, struct api_reply *r);
int api_get_id(struct api *api, json_t *obj, const char **id, size_t *len, struct api_reply *r);
int api_text_fp(struct api *api, simhash_ctx *ctx, const char *text, size_t len, simhash_fp *fp,
		struct api_reply *r);
int api_get_probe(struct api *api, simhash_ctx *ctx, json_t *obj, simhash_fp *fp,
		  struct api_reply *r);
json_t *api_fp_json(const simhash_fp *fp);

/* docs.c: the routes that read or write the store. */
int sh_docs_query(struct api *api, simhash_ctx *ctx, json_t *req, struct api_reply *r);
int sh_docs_add(struct api *api, simhash_ctx *ctx, json_t *req, struct api_reply *r);
int sh_docs_batch(struct api *api, simhash_ctx *ctx, json_t *req, struct api_reply *r);
int sh_docs_doc(struct api *api, const char *method, const char *id, size_t id_len,
		struct api_reply *r);
int sh_docs_stats(struct api *api, struct api_reply *r);

/* One document of an add or a batch, parsed and checked. */
struct doc_req {
	const char *id; /* borrowed from the request */
	size_t id_len;
	simhash_fp fp;
	char *meta; /* a JSON object's text, or NULL */
	size_t meta_len;
	int check;     /* answer with the near-duplicates found (within k) */
	int if_unique; /* add only when none is found */
	unsigned k;
	unsigned limit; /* near-duplicates to report at most */
};

/* store.c: the store behind the routes (api->store is not NULL). is_batch:
 * answer {"results": [...]} rather than one document's object. */
int sh_store_query(struct api *api, const simhash_fp *fp, unsigned k, unsigned limit,
		   struct api_reply *r);
int sh_store_add(struct api *api, struct doc_req *docs, size_t n, int is_batch,
		 struct api_reply *r);
int sh_store_get(struct api *api, const char *id, size_t id_len, struct api_reply *r);
int sh_store_delete(struct api *api, const char *id, size_t id_len, struct api_reply *r);
/* 1 unless there is no store or its last write failed for lack of space. */
int sh_store_writable(struct api *api);
/* Documents in the store, -1 without one. */
long long sh_store_count(struct api *api);
/* The store's commit counters: 0, or -1 without a store. */
struct sh_store_figures;
/* Fills f's commit figures (not documents); -1 without a store. */
int sh_store_commits(struct api *api, struct sh_store_figures *f);
/* Adds the store's figures to j (taken) and answers it. */
int sh_store_stats(struct api *api, json_t *j, struct api_reply *r);

/* static.c: the web page's files, embedded at build time. */
struct sh_static {
	const char *path; /* "/", "/app.js" */
	const char *type; /* "text/html; charset=utf-8" */
	const unsigned char *data;
	size_t len;
};
const struct sh_static *sh_static_find(const char *path);

#endif /* SERVER_API_INTERNAL_H */
