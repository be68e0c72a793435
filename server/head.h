/* head.h - checks on a request head made before the request is routed:
 * the framing headers, NUL bytes, and the Host allow-list (head.c). */
#ifndef SERVER_HEAD_H
#define SERVER_HEAD_H

#include <microhttpd.h>
#include <stddef.h>
#include "reply.h"

/* The Host values a server answers: each entry as NAME or NAME:PORT. */
struct sh_hosts {
	char **names;
	size_t n;
	unsigned port; /* the port listened on (atomic: known only once bound) */
	int any;      /* an entry "*": every Host is accepted */
};

/* Fills h with the defaults (localhost, the listen address as given and as
 * a numeric address, IPv6 in brackets; 127.0.0.1 and [::1] too on a
 * wildcard address) and the extra names. port may be 0 until the socket
 * is bound: set it then with sh_hosts_set_port. 0, or -1 (out of memory). */
int sh_hosts_init(struct sh_hosts *h, const char *listen_host, const char *numeric, int v6,
		  int wildcard, unsigned port, const char *const *extra, size_t n_extra);
void sh_hosts_set_port(struct sh_hosts *h, unsigned port);
void sh_hosts_free(struct sh_hosts *h);

/* 1 if the Host value host[0..len) names this server. */
int sh_hosts_allowed(const struct sh_hosts *h, const char *host, size_t len);

/* Checks the head of the request on c (method, url and version as the
 * access handler got them): one Host, allowed; at most one Content-Length
 * and not with a Transfer-Encoding; no Transfer-Encoding but "chunked"; no
 * whitespace in a header name, no folded line, no NUL byte anywhere. 0, or
 * an error status set in r (the connection must then be closed). */
int sh_head_check(struct MHD_Connection *c, const struct sh_hosts *hosts, const char *method,
		  const char *url, const char *version, struct api_reply *r);

#endif /* SERVER_HEAD_H */
