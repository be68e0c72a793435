/* api.h - the JSON API of `simhash serve`, apart from HTTP: a route lookup
 * and one call per request that takes a body and gives a status and a
 * body. http.c carries requests to these and answers back; the fuzz target
 * (fuzz/http_request.c) and the tests call them directly, with no server.
 *
 * The files of server/, from the bottom up (each calls only files listed
 * before it, never back):
 *   reply.c              answers: JSON bodies, error bodies (reply.h)
 *   request.c            a request body's fields (request.h)
 *   service_store.c      the library's store behind the document routes
 *   static.c             the web page's files, compiled in
 *   routes_stateless.c   /v1/fingerprint, /v1/compare, /healthz (routes.h)
 *   routes_documents.c   /v1/query, /v1/documents..., /v1/stats
 *   api.c                the route table, api_route and api_handle
 *   deadline.c, head.c, metrics.c   the HTTP side's guards and counters
 *   http.c               libmicrohttpd: threads, bodies, shutdown
 * tests/server_layers.sh checks this order on the objects (make check). A
 * new route is a handler in a routes_*.c file, a value of enum api_route
 * and a row of api.c's route table.
 *
 * Invariants:
 *  1. Every answer has a status in 200..599 and a body; an error body is
 *     {"error": {"code": "...", "message": "..."}}, code a fixed identifier,
 *     message one human line (reply.h).
 *  2. Bad input (any bytes) is a 4xx and changes nothing stored: a request is
 *     parsed and checked whole before the store is touched.
 *  3. Nothing here keeps state between requests except the store and the
 *     metrics (atomic counters); one api is shared by every thread, each
 *     thread bringing its own simhash_ctx.
 */
#ifndef SERVER_API_H
#define SERVER_API_H

#include <stddef.h>
#include <stdint.h>
#include "simhash.h"
#include "reply.h"

/* The routes; each has its row (path, methods, handler) in api.c's table,
 * and its counters in metrics.c. */
enum api_route {
	ROUTE_FINGERPRINT, /* POST /v1/fingerprint */
	ROUTE_COMPARE,     /* POST /v1/compare */
	ROUTE_QUERY,       /* POST /v1/query */
	ROUTE_DOCS,        /* POST /v1/documents */
	ROUTE_DOC,         /* GET, DELETE /v1/documents/{id} */
	ROUTE_BATCH,       /* POST /v1/documents:batch */
	ROUTE_STATS,       /* GET /v1/stats */
	ROUTE_HEALTH,      /* GET /healthz */
	ROUTE_METRICS,     /* GET /metrics */
	ROUTE_STATIC,      /* GET / and the page's files */
	ROUTE_OTHER,       /* no such route (404) */
	N_ROUTES
};

/* The name of a route in metrics: "/v1/query", "other". */
const char *api_route_name(enum api_route r);

/* 1 if method on the route writes (and so needs the bearer token when one
 * is set, and waits on a writer thread for the store's commit). */
int api_route_writes(enum api_route r, const char *method);

struct api_limits {
	size_t max_body;   /* bytes of a request body (413 above) */
	size_t max_text;   /* bytes of one text (413 above) */
	size_t max_batch;  /* documents in one batch request (413 above) */
	size_t max_id;     /* bytes of one id (422 above) */
	size_t max_meta;   /* bytes of one document's metadata, as JSON (422 above) */
	unsigned max_limit; /* matches one query may return */
};

void api_limits_init(struct api_limits *l);

struct api_metrics;
struct api_store; /* service_store.c: the documents; NULL without a store */

struct api {
	struct api_limits limits;
	simhash_config cfg;               /* the fingerprint config (the store's) */
	char scheme[SIMHASH_SCHEME_MAX];  /* its scheme string */
	struct api_store *store;          /* NULL: document routes answer 503 */
	struct api_metrics *metrics;      /* NULL: no metrics */
	uint64_t started;                 /* unix seconds, for /v1/stats */
};

/* Finds the route of method and path (the raw path, still percent-encoded,
 * without the query string). For ROUTE_DOC, *id and *id_len get the decoded id
 * (malloc'd, free it). Returns 0, or an error status set in r: 404 for no such
 * route, 405 for a route that has no such method, 400 for a path that does
 * not decode to UTF-8. ROUTE_OTHER with status 404 too. */
int api_route(const char *method, const char *path, enum api_route *route, char **id,
	      size_t *id_len, struct api_reply *r);

/* Handles a request to route with its body (NULL and 0 for none). ctx is the
 * calling thread's context, made from api->cfg. Returns r->status. The store
 * routes block until a write is durable. */
int api_handle(struct api *api, simhash_ctx *ctx, enum api_route route, const char *method,
	       const char *id, size_t id_len, const char *body, size_t len, struct api_reply *r);

/* Opens the store at path for api (service_store.c): sets api->store, and
 * api->cfg to the store's configuration. 0, or -1 with a message in err. */
int sh_store_open(struct api *api, const char *path, char *err, size_t err_len);

/* Commits what is pending and closes the store (nothing without one).
 * 0, or -1 with a message in err. */
int sh_store_close(struct api *api, char *err, size_t err_len);

#endif /* SERVER_API_H */
