/* http.c - the HTTP side of `simhash serve` on libmicrohttpd.
 *
 * Threads: libmicrohttpd runs a pool of `threads` I/O threads, each with its
 * own epoll loop; reads (fingerprint, compare, query, get, stats) are answered
 * on them directly, as they never block. A write must wait for the store's
 * group commit (an fsync shared by every write in the batch), so its
 * connection is suspended and the request handed to one of `writers` threads
 * that blocks until it is durable and then resumes the connection: many
 * writes in flight from many clients is what lets one commit carry many.
 *
 * Invariants:
 *  1. Each thread that fingerprints has its own simhash_ctx (a thread-local
 *     made on first use, freed at thread exit).
 *  2. A request's body is bounded by max_body: a larger Content-Length gets
 *     413 before any byte of the body is read; a chunked body is counted and
 *     dropped once over the limit, then answered 413. All bodies held at once
 *     stay under a budget of 16 x max_body (`buffered`, counting the memory
 *     held, which stays within 25% of the bytes received and never passes
 *     the declared length). Each body may take its share, max_body / 16, out
 *     of the whole budget; beyond its share a body grows only while a
 *     quarter of the budget stays free. So clients that declare large
 *     bodies and stall half way hold three quarters at most, and every body
 *     up to its share still finds room. With 16 MiB bodies: 16 clients
 *     stalled at 8 MiB hold at most 160 of the 256 MiB, and a full 16 MiB
 *     body from another client still fits; more stalled clients fill the
 *     three quarters, and the last quarter still serves every body up to
 *     1 MiB. A body that finds no room is dropped as it arrives and answered
 *     503, with its connection closed.
 *  3. `in_flight` counts requests from their first callback to their
 *     completion notice; shutdown quiesces the listening socket, answers
 *     503 to requests that start after it, and waits for in_flight to reach
 *     0 (up to shutdown_timeout), and for `suspended` to reach 0 whatever
 *     the time: libmicrohttpd must not stop with a suspended connection.
 *  4. Every request head is checked (head.c) before it is routed or
 *     authenticated: framing headers, NUL bytes, Host; a head that fails is
 *     answered and its connection closed.
 *  5. A request head must arrive within header_timeout of the connection's
 *     start or of its previous request's end, 1 s while 9/10 of the
 *     connection slots are taken (deadline.c), so slow heads cannot hold
 *     the connection slots.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "api.h"
#include "deadline.h"
#include "head.h"
#include "http.h"
#include "metrics.h"
#include "service_store.h"
#include "static.h"

/* One request, from its first callback to its completion notice. */
struct req {
	struct server *srv;
	struct MHD_Connection *conn;
	enum api_route route;
	const char *method;
	char *id;
	size_t id_len;
	char *body;
	size_t len, cap;
	uint64_t start_us;
	int over_limit;  /* the body passed max_body: drop the rest, answer 413 */
	int over_budget; /* no room for the body (invariant 2): drop it, answer 503 */
	int close;       /* close the connection after the answer */
	size_t declared; /* the Content-Length, 0 if none */
	int queued;      /* handed to a writer; reply set when done */
	int done;
	int status;      /* the status answered, for metrics */
	struct api_reply reply;
	struct req *next; /* in the writers' queue */
};

struct server {
	struct api *api;
	const struct sh_serve_opts *opts;
	struct MHD_Daemon *daemon;
	pthread_key_t ctx_key;
	long in_flight;
	long suspended;   /* requests handed to writers and not yet resumed */
	size_t buffered;  /* bytes of request bodies held, all requests together */
	int draining;     /* shutting down: new requests get 503 */
	struct sh_hosts hosts;          /* the Host allow-list (head.c) */
	struct sh_deadline *deadline;   /* the header deadline (deadline.c) */
	/* The writers' queue. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct req *head, *tail;
	int stopping;
	pthread_t *writers;
	unsigned n_writers;
};

void sh_serve_opts_init(struct sh_serve_opts *o)
{
	o->listen = "127.0.0.1:8080";
	o->threads = 2;
	o->writers = 64;
	o->max_connections = 1000;
	o->idle_timeout = 30;
	o->request_timeout = 60;
	o->shutdown_timeout = 30;
	o->header_timeout = 10;
	o->token = NULL;
	o->no_token = 0;
	o->allow_hosts = NULL;
	o->n_allow_hosts = 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void ctx_destroy(void *ctx)
{
	simhash_ctx_free(ctx);
}

/* This thread's context (invariant 1); NULL if it cannot be made. */
static simhash_ctx *thread_ctx(struct server *srv)
{
	simhash_ctx *ctx = pthread_getspecific(srv->ctx_key);

	if (!ctx && simhash_ctx_new(&srv->api->cfg, &ctx) == SIMHASH_OK)
		pthread_setspecific(srv->ctx_key, ctx);
	return ctx;
}

static enum MHD_Result send_reply(struct req *rq)
{
	struct api_reply *r = &rq->reply;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		return MHD_NO;
	r->body = NULL; /* the response owns it now */
	r->len = 0;
	MHD_add_response_header(resp, "Content-Type", r->type ? r->type : "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (r->allow)
		MHD_add_response_header(resp, "Allow", r->allow);
	if (r->status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	if (rq->over_budget)
		MHD_add_response_header(resp, "Retry-After", "1");
	if (rq->close || r->status == 413 || r->status == 408 || r->status == 503)
		MHD_add_response_header(resp, "Connection", "close");
	rq->status = r->status;
	ret = MHD_queue_response(rq->conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_static(struct req *rq, const struct sh_static *f)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", f->type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* The page loads nothing from elsewhere and runs no inline script. */
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
	rq->status = 200;
	ret = MHD_queue_response(rq->conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_metrics(struct req *rq)
{
	struct api_reply *r = &rq->reply;
	struct sh_store_figures f;
	long long docs = sh_store_count(rq->srv->api);
	size_t len = 0;
	char *text;

	f.documents = docs < 0 ? 0 : (uint64_t)docs;
	if (docs < 0 || sh_store_commits(rq->srv->api, &f))
		docs = -1;
	text = sh_metrics_render(rq->srv->api->metrics, docs < 0 ? NULL : &f, &len);

	if (!text) {
		api_error(r, 500, "internal", "out of memory");
		return send_reply(rq);
	}
	api_reply_free(r);
	r->status = 200;
	r->body = text;
	r->len = len;
	r->type = "text/plain; version=0.0.4; charset=utf-8";
	return send_reply(rq);
}

/* 1 if the request carries the bearer token (constant time in its length).
 * The header's length is libmicrohttpd's, and a NUL inside it was refused
 * before (head.c), so "TOKEN\0junk" is not TOKEN. */
static int authorized(struct server *srv, struct MHD_Connection *c)
{
	const char *h = NULL, *tok = srv->opts->token;
	size_t i, h_len = 0, n = strlen(tok);
	unsigned char diff = 0;

	if (MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, "Authorization",
					  strlen("Authorization"), &h, &h_len) != MHD_YES ||
	    !h || h_len < 7 || strncasecmp(h, "Bearer ", 7))
		return 0;
	h += 7;
	if (h_len - 7 != n || memchr(h, '\0', n))
		return 0;
	for (i = 0; i < n; i++)
		diff |= (unsigned char)(h[i] ^ tok[i]);
	return diff == 0;
}

static int is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	return !strncasecmp(ct, "application/json", n) &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Checks made on the first callback, before the body: an error status set
 * in rq->reply, or 0. */
static int check_headers(struct req *rq, const char *method, const char *url,
			 const char *version)
{
	struct server *srv = rq->srv;
	struct MHD_Connection *c = rq->conn;
	const char *cl;
	int st;

	if ((st = sh_head_check(c, &srv->hosts, method, url, version, &rq->reply))) {
		rq->close = 1;
		return st;
	}
	if ((st = api_route(method, url, &rq->route, &rq->id, &rq->id_len, &rq->reply)))
		return st;
	if (srv->opts->token && api_route_writes(rq->route, method) && !authorized(srv, c))
		return api_error(&rq->reply, 401, "unauthorized",
				 "this route needs the header 'Authorization: Bearer TOKEN'");
	if (strcmp(method, "POST"))
		return 0;
	if (!is_json_type(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")))
		return api_error(&rq->reply, 415, "unsupported_media_type",
				 "the body must be sent as Content-Type: application/json");
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	if (cl && strtoull(cl, NULL, 10) > srv->api->limits.max_body)
		return api_error(&rq->reply, 413, "body_too_large",
				 "the body holds %s bytes, over the limit of %zu", cl,
				 srv->api->limits.max_body);
	if (cl)
		rq->declared = (size_t)strtoull(cl, NULL, 10);
	return 0;
}

/* The body budget (invariant 2): BUDGET_BODIES bodies of the largest
 * size, a share of 1/SHARE_DIV of that size per body, and a quarter of the
 * budget kept free of anything beyond the shares. */
#define BUDGET_BODIES 16
#define SHARE_DIV 16

/* Drops the body held so far and whatever of it still comes. */
static void drop_body(struct req *rq)
{
	__atomic_fetch_sub(&rq->srv->buffered, rq->cap, __ATOMIC_RELAXED);
	free(rq->body);
	rq->body = NULL;
	rq->len = rq->cap = 0;
	rq->over_budget = 1;
}

/* The capacity to hold n more bytes: grown by a quarter at a time, never
 * past the declared length nor max_body, so that what the budget counts
 * stays within 25% of what was received. */
static size_t next_cap(const struct req *rq, size_t n, size_t max)
{
	size_t cap = rq->cap ? rq->cap : 4096;

	while (cap - rq->len < n)
		cap += cap / 4;
	if (rq->declared && cap > rq->declared)
		cap = rq->declared > rq->len + n ? rq->declared : rq->len + n;
	return cap > max ? max : cap;
}

/* Adds n bytes to the body; -1 to close the connection (out of memory). */
static int add_body(struct req *rq, const char *data, size_t n)
{
	struct server *srv = rq->srv;
	size_t max = srv->api->limits.max_body;
	size_t budget = max * BUDGET_BODIES, share = max / SHARE_DIV;

	if (rq->over_limit || rq->over_budget)
		return 0;
	if (rq->len + n > max) {
		rq->over_limit = 1;
		return 0;
	}
	if (rq->cap - rq->len < n) {
		size_t cap = next_cap(rq, n, max), grow = cap - rq->cap, held;
		char *p;

		held = __atomic_add_fetch(&srv->buffered, grow, __ATOMIC_RELAXED);
		if (held > budget || (cap > share && held > budget - budget / 4)) {
			__atomic_fetch_sub(&srv->buffered, grow, __ATOMIC_RELAXED);
			drop_body(rq);
			return 0;
		}
		p = realloc(rq->body, cap);
		if (!p) {
			__atomic_fetch_sub(&srv->buffered, grow, __ATOMIC_RELAXED);
			return -1;
		}
		rq->body = p;
		rq->cap = cap;
	}
	memcpy(rq->body + rq->len, data, n);
	rq->len += n;
	return 0;
}

static void handle(struct req *rq)
{
	simhash_ctx *ctx = thread_ctx(rq->srv);

	if (!ctx) {
		api_error(&rq->reply, 500, "internal", "cannot make a fingerprint context");
		return;
	}
	api_handle(rq->srv->api, ctx, rq->route, rq->method, rq->id, rq->id_len, rq->body,
		   rq->len, &rq->reply);
}

static void *writer_main(void *arg)
{
	struct server *srv = arg;
	struct req *rq;

	for (;;) {
		pthread_mutex_lock(&srv->lock);
		while (!srv->head && !srv->stopping)
			pthread_cond_wait(&srv->cond, &srv->lock);
		rq = srv->head;
		if (!rq) {
			pthread_mutex_unlock(&srv->lock);
			return NULL;
		}
		srv->head = rq->next;
		if (!srv->head)
			srv->tail = NULL;
		pthread_mutex_unlock(&srv->lock);
		handle(rq);
		__atomic_store_n(&rq->done, 1, __ATOMIC_RELEASE);
		MHD_resume_connection(rq->conn);
		__atomic_fetch_sub(&srv->suspended, 1, __ATOMIC_RELEASE);
	}
}

static void enqueue(struct server *srv, struct req *rq)
{
	rq->queued = 1;
	rq->next = NULL;
	__atomic_fetch_add(&srv->suspended, 1, __ATOMIC_RELAXED);
	MHD_suspend_connection(rq->conn);
	pthread_mutex_lock(&srv->lock);
	if (srv->tail)
		srv->tail->next = rq;
	else
		srv->head = rq;
	srv->tail = rq;
	pthread_cond_signal(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
}

/* The connection's deadline record (invariant 5), or NULL. */
static struct sh_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct server *srv = cls;
	struct req *rq = *con_cls;
	int st;

	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		rq->srv = srv;
		rq->conn = c;
		rq->method = method;
		rq->route = ROUTE_OTHER;
		rq->start_us = now_us();
		*con_cls = rq;
		__atomic_fetch_add(&srv->in_flight, 1, __ATOMIC_RELAXED);
		sh_deadline_disarm(srv->deadline, conn_of(c)); /* the head is in */
		if (__atomic_load_n(&srv->draining, __ATOMIC_ACQUIRE)) {
			api_error(&rq->reply, 503, "shutting_down", "the server is shutting down");
			return send_reply(rq);
		}
		st = check_headers(rq, method, url, version);
		if (st)
			return send_reply(rq);
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (srv->opts->request_timeout &&
		    now_us() - rq->start_us > srv->opts->request_timeout * 1000000ull)
			return MHD_NO; /* too slow a client: close */
		if (add_body(rq, upload_data, *upload_data_size))
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rq->queued) {
		if (!__atomic_load_n(&rq->done, __ATOMIC_ACQUIRE))
			return MHD_YES;
		return send_reply(rq);
	}
	if (rq->over_limit) {
		api_error(&rq->reply, 413, "body_too_large", "the body is over the limit of %zu bytes",
			  srv->api->limits.max_body);
		return send_reply(rq);
	}
	if (rq->over_budget) {
		api_error(&rq->reply, 503, "server_busy",
			  "the server holds too many request bodies at once; try again");
		return send_reply(rq);
	}
	if (rq->route == ROUTE_STATIC)
		return send_static(rq, sh_static_find(url));
	if (rq->route == ROUTE_METRICS)
		return send_metrics(rq);
	if (api_route_writes(rq->route, method) && srv->n_writers) {
		enqueue(srv, rq);
		return MHD_YES;
	}
	handle(rq);
	return send_reply(rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct server *srv = cls;
	struct req *rq = *con_cls;

	if (!rq)
		return;
	sh_metrics_request(srv->api->metrics, rq->route,
			   toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? rq->status : 0,
			   now_us() - rq->start_us);
	api_reply_free(&rq->reply);
	free(rq->id);
	free(rq->body);
	__atomic_fetch_sub(&srv->buffered, rq->cap, __ATOMIC_RELAXED);
	free(rq);
	*con_cls = NULL;
	/* The next request's head is awaited from now (deadline.c, 3). */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		sh_deadline_arm(srv->deadline, conn_of(c));
	__atomic_fetch_sub(&srv->in_flight, 1, __ATOMIC_RELEASE);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct server *srv = cls;
	struct sh_conn *sc = *socket_context;

	sh_metrics_connection(srv->api->metrics, toe == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1);
	if (!srv->deadline)
		return;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		sc = calloc(1, sizeof(*sc));
		if (!sc || !info) {
			free(sc);
			return; /* no deadline for this one; --idle-timeout still holds */
		}
		sc->fd = info->connect_fd;
		*socket_context = sc;
		sh_deadline_open(srv->deadline, sc);
	} else if (sc) {
		sh_deadline_close(srv->deadline, sc);
		free(sc);
		*socket_context = NULL;
	}
}

/* MHD's own unescaping would turn %00 into an end of string: keep the path
 * as sent and let api_route decode it. */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	return strlen(s);
}

/* Parses "HOST:PORT" or "[V6]:PORT" into addr. */
static int parse_listen(const char *listen, struct sockaddr_storage *addr, int *v6,
			char host[256], char *err, size_t err_len)
{
	const char *colon = strrchr(listen, ':');
	struct addrinfo hints, *res;
	size_t hl;
	int rc;

	if (!colon || colon == listen || !colon[1]) {
		snprintf(err, err_len, "--listen: expected HOST:PORT, got '%s'", listen);
		return -1;
	}
	hl = (size_t)(colon - listen);
	if (listen[0] == '[' && hl >= 2 && listen[hl - 1] == ']') {
		listen++;
		hl -= 2;
	}
	if (hl >= 256) {
		snprintf(err, err_len, "--listen: host too long");
		return -1;
	}
	memcpy(host, listen, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
	rc = getaddrinfo(host, colon + 1, &hints, &res);
	if (rc) {
		snprintf(err, err_len, "--listen: %s: %s", listen, gai_strerror(rc));
		return -1;
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*v6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	return 0;
}

void sh_serve_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int start_writers(struct server *srv)
{
	unsigned i;

	srv->writers = calloc(srv->opts->writers ? srv->opts->writers : 1, sizeof(pthread_t));
	if (!srv->writers)
		return -1;
	for (i = 0; i < srv->opts->writers; i++) {
		if (pthread_create(&srv->writers[i], NULL, writer_main, srv))
			break;
		srv->n_writers++;
	}
	return srv->n_writers == srv->opts->writers ? 0 : -1;
}

static void stop_writers(struct server *srv)
{
	unsigned i;

	pthread_mutex_lock(&srv->lock);
	srv->stopping = 1;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	for (i = 0; i < srv->n_writers; i++)
		pthread_join(srv->writers[i], NULL);
	free(srv->writers);
}

/* The address as a Host names it (IPv6 without brackets; head.c adds
 * them), and whether it is loopback or a wildcard. */
static void address_kind(const struct sockaddr_storage *a, char numeric[INET6_ADDRSTRLEN],
			 int *loopback, int *wildcard, unsigned *port)
{
	static const unsigned char v4_mapped_lo[13] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127 };

	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)a;

		inet_ntop(AF_INET6, &s6->sin6_addr, numeric, INET6_ADDRSTRLEN);
		*loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
			    !memcmp(s6->sin6_addr.s6_addr, v4_mapped_lo, sizeof(v4_mapped_lo));
		*wildcard = IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
		*port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)a;
		uint32_t ip = ntohl(s4->sin_addr.s_addr);

		inet_ntop(AF_INET, &s4->sin_addr, numeric, INET6_ADDRSTRLEN);
		*loopback = (ip >> 24) == 127;
		*wildcard = ip == 0;
		*port = ntohs(s4->sin_port);
	}
}

/* What guards the door before the daemon starts: the token rule (writes
 * from other machines need a token unless no_token says otherwise), the
 * Host allow-list and the header deadline. 0, or -1 with err. */
static int setup_guards(struct server *srv, const char *host, const struct sockaddr_storage *addr,
			int v6, char *err, size_t err_len)
{
	const struct sh_serve_opts *o = srv->opts;
	char numeric[INET6_ADDRSTRLEN];
	int loopback, wildcard;
	unsigned port;

	address_kind(addr, numeric, &loopback, &wildcard, &port);
	if (!loopback && !o->token && !o->no_token) {
		snprintf(err, err_len,
			 "%s is not a loopback address: give --token-file FILE so that writes "
			 "need a token, or --no-token to allow writes from anyone who can connect",
			 o->listen);
		return -1;
	}
	if (sh_hosts_init(&srv->hosts, host, numeric, v6, wildcard, port, o->allow_hosts,
			  o->n_allow_hosts)) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	if (sh_deadline_start(&srv->deadline, o->header_timeout, o->max_connections)) {
		sh_hosts_free(&srv->hosts);
		snprintf(err, err_len, "cannot start the header deadline thread");
		return -1;
	}
	return 0;
}

/* Waits for SIGTERM or SIGINT, then for the requests in flight (invariant 3).
 * Returns the listening socket, which quiescing handed back to us. */
static MHD_socket wait_for_shutdown(struct server *srv)
{
	MHD_socket listen_fd;
	uint64_t deadline;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigwait(&set, &sig);
	listen_fd = MHD_quiesce_daemon(srv->daemon);
	/* Connections already open may still send requests: those get 503. */
	__atomic_store_n(&srv->draining, 1, __ATOMIC_RELEASE);
	deadline = now_us() + srv->opts->shutdown_timeout * 1000000ull;
	while (__atomic_load_n(&srv->in_flight, __ATOMIC_ACQUIRE) > 0 && now_us() < deadline)
		usleep(10000);
	/* libmicrohttpd must not stop with a connection suspended, and a writer
	 * must not resume one after: writes always end (the store answers). */
	while (__atomic_load_n(&srv->suspended, __ATOMIC_ACQUIRE) > 0)
		usleep(10000);
	return listen_fd;
}

int sh_serve_run(struct api *api, const struct sh_serve_opts *o, char *err, size_t err_len)
{
	struct server srv;
	struct sockaddr_storage addr;
	const union MHD_DaemonInfo *info;
	unsigned flags;
	char host[INET6_ADDRSTRLEN], listen_host[256];
	MHD_socket listen_fd;
	int v6 = 0, ret = -1;

	memset(&srv, 0, sizeof(srv));
	srv.api = api;
	srv.opts = o;
	if (parse_listen(o->listen, &addr, &v6, listen_host, err, err_len) ||
	    setup_guards(&srv, listen_host, &addr, v6, err, err_len))
		return -1;
	if (pthread_key_create(&srv.ctx_key, ctx_destroy)) {
		snprintf(err, err_len, "cannot make a thread key");
		goto out_guards;
	}
	pthread_mutex_init(&srv.lock, NULL);
	pthread_cond_init(&srv.cond, NULL);
	if (start_writers(&srv)) {
		snprintf(err, err_len, "cannot start %u writer threads", o->writers);
		goto out_writers;
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
		MHD_USE_ITC | (v6 ? MHD_USE_IPv6 : 0);
	srv.daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, &srv, MHD_OPTION_SOCK_ADDR, &addr,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(o->threads ? o->threads : 1),
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)o->max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)o->idle_timeout,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, &srv, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, &srv, MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, &srv,
		MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024, MHD_OPTION_END);
	if (!srv.daemon) {
		snprintf(err, err_len, "cannot listen on %s: %s", o->listen,
			 errno ? strerror(errno) : "libmicrohttpd failed to start");
		goto out_writers;
	}
	info = MHD_get_daemon_info(srv.daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (info)
		sh_hosts_set_port(&srv.hosts, info->port);
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof(host));
	printf(v6 ? "listening on http://[%s]:%u\n" : "listening on http://%s:%u\n", host,
	       info ? (unsigned)info->port : 0);
	fflush(stdout);
	listen_fd = wait_for_shutdown(&srv);
	MHD_stop_daemon(srv.daemon);
	if (listen_fd != MHD_INVALID_SOCKET)
		close(listen_fd);
	ret = 0;
out_writers:
	stop_writers(&srv);
	pthread_cond_destroy(&srv.cond);
	pthread_mutex_destroy(&srv.lock);
	pthread_key_delete(srv.ctx_key);
out_guards:
	sh_deadline_stop(srv.deadline);
	sh_hosts_free(&srv.hosts);
	return ret;
}
