/* http.h - `simhash serve`'s HTTP side on libmicrohttpd: carries requests to
 * api.h, serves the web page and /metrics, and shuts down gracefully. */
#ifndef SERVER_HTTP_H
#define SERVER_HTTP_H

#include <stddef.h>
#include "api.h"

struct sh_serve_opts {
	const char *listen;        /* "HOST:PORT"; port 0 picks a free one */
	unsigned threads;          /* libmicrohttpd's I/O threads */
	unsigned writers;          /* threads that wait for durable writes */
	unsigned max_connections;
	unsigned idle_timeout;     /* seconds a connection may stay silent */
	unsigned request_timeout;  /* seconds a request may take to arrive */
	unsigned header_timeout;   /* seconds a request head may take (0: no limit) */
	unsigned shutdown_timeout; /* seconds to finish requests in flight at exit */
	const char *token;         /* NULL: writes need no bearer token */
	int no_token;              /* no token on purpose: allowed on any address */
	const char *const *allow_hosts; /* Host names accepted besides the defaults */
	size_t n_allow_hosts;
};

void sh_serve_opts_init(struct sh_serve_opts *o);

/* Serves until SIGTERM or SIGINT, then stops accepting, finishes the
 * requests in flight and returns 0; -1 with a message in err if the server
 * cannot start, or would listen on an address other than loopback with
 * neither a token nor no_token. The caller must have blocked SIGTERM,
 * SIGINT and SIGPIPE in every thread (sh_serve_block_signals) before
 * starting any. Prints one line "listening on http://HOST:PORT" on standard
 * output once ready. */
int sh_serve_run(struct api *api, const struct sh_serve_opts *o, char *err, size_t err_len);

void sh_serve_block_signals(void);

#endif /* SERVER_HTTP_H */
