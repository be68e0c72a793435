/* service_store.h - the library's store behind the document routes
 * (service_store.c): writes that answer once durable, reads on the calling
 * thread, the store's errors as answers. Every function but sh_store_open,
 * sh_store_writable, sh_store_count and sh_store_commits needs api->store
 * not NULL. */
#ifndef SERVER_SERVICE_STORE_H
#define SERVER_SERVICE_STORE_H

#include <jansson.h>
#include "api.h"
#include "reply.h"

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

/* The documents within k of fp, at most limit of them, as {"matches": ...}. */
int sh_store_query(struct api *api, const simhash_fp *fp, unsigned k, unsigned limit,
		   struct api_reply *r);
/* Adds one document, checked first if it asks to be: 201 with its object
 * once durable, 409 if the check kept it out. */
int sh_store_add(struct api *api, const struct doc_req *d, struct api_reply *r);
/* Adds a batch: in one commit, or one check-and-put after another if any
 * document asks for a check. 200 with {"results": [...], "added": N}. */
int sh_store_add_batch(struct api *api, const struct doc_req *docs, size_t n,
		       struct api_reply *r);
/* One document by id (404 if none). */
int sh_store_get(struct api *api, const char *id, size_t id_len, struct api_reply *r);
/* Deletes one document by id (404 if none); answers once durable. */
int sh_store_delete(struct api *api, const char *id, size_t id_len, struct api_reply *r);
/* 1 unless there is no store or its last write failed for lack of space. */
int sh_store_writable(struct api *api);
/* Documents in the store, -1 without one. */
long long sh_store_count(struct api *api);
struct sh_store_figures;
/* Fills f's commit figures (not documents): 0, or -1 without a store. */
int sh_store_commits(struct api *api, struct sh_store_figures *f);
/* Adds the store's figures to j (taken) and answers it. */
int sh_store_stats(struct api *api, json_t *j, struct api_reply *r);

#endif /* SERVER_SERVICE_STORE_H */
