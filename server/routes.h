/* routes.h - the handlers of the JSON API's routes, one function per route:
 * routes_stateless.c (no store needed) and routes_documents.c (the store's).
 * api.c's route table names each with its path and methods; a handler is
 * called only with a method the table allows, and for a route that takes a
 * JSON body, only once the body has parsed as a JSON object.
 *
 * Each returns r->status, with r set to its answer.
 */
#ifndef SERVER_ROUTES_H
#define SERVER_ROUTES_H

#include <jansson.h>
#include "api.h"
#include "reply.h"

/* One request as a handler sees it. */
struct api_call {
	const char *method;
	const char *id; /* /v1/documents/{id}: the id, percent-decoded; else NULL */
	size_t id_len;
	json_t *body;   /* the body of a route that takes one; else NULL */
};

/* ctx is the calling thread's context, made from api->cfg. */
typedef int api_handler_fn(struct api *api, simhash_ctx *ctx, const struct api_call *call,
			   struct api_reply *r);

/* routes_stateless.c */
api_handler_fn sh_route_fingerprint; /* POST /v1/fingerprint */
api_handler_fn sh_route_compare;     /* POST /v1/compare */
api_handler_fn sh_route_health;      /* GET /healthz */

/* routes_documents.c */
api_handler_fn sh_route_query;    /* POST /v1/query */
api_handler_fn sh_route_add;      /* POST /v1/documents */
api_handler_fn sh_route_batch;    /* POST /v1/documents:batch */
api_handler_fn sh_route_document; /* GET, DELETE /v1/documents/{id} */
api_handler_fn sh_route_stats;    /* GET /v1/stats */

#endif /* SERVER_ROUTES_H */
