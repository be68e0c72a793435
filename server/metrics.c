/* metrics.c - the counters behind GET /metrics. Every counter is a uint64_t
 * updated with a relaxed atomic add; a scrape reads each one atomically, so
 * a histogram's buckets may be off by the requests that land during the
 * scrape, as in every Prometheus client. Buckets are cumulative on output
 * only: each request adds to one bucket. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"

static const int statuses[] = { 200, 201, 204, 400, 401, 404, 405, 408,
				409, 413, 415, 422, 500, 503, 507, 0 /* other */ };
#define N_STATUS (sizeof(statuses) / sizeof(statuses[0]))

/* Latency bucket bounds in microseconds (upper, inclusive). */
static const uint64_t lat_us[] = { 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
				   100000, 250000, 1000000 };
#define N_LAT (sizeof(lat_us) / sizeof(lat_us[0]))

struct api_metrics {
	uint64_t requests[N_ROUTES][N_STATUS];
	uint64_t lat[N_ROUTES][N_LAT + 1];
	uint64_t lat_sum_us[N_ROUTES];
	int64_t connections;
};

#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GET(p) __atomic_load_n((p), __ATOMIC_RELAXED)

int sh_metrics_new(struct api_metrics **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -1;
}

void sh_metrics_free(struct api_metrics *m)
{
	free(m);
}

void sh_metrics_request(struct api_metrics *m, enum api_route route, int status, uint64_t usec)
{
	size_t s, b;

	if (!m || route >= N_ROUTES)
		return;
	for (s = 0; s < N_STATUS - 1 && statuses[s] != status; s++)
		;
	for (b = 0; b < N_LAT && usec > lat_us[b]; b++)
		;
	ADD(&m->requests[route][s], 1);
	ADD(&m->lat[route][b], 1);
	ADD(&m->lat_sum_us[route], usec);
}

void sh_metrics_connection(struct api_metrics *m, int delta)
{
	if (m)
		ADD(&m->connections, delta);
}

struct out {
	char *p;
	size_t len, cap;
	int failed;
};

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->failed = 1;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		char *p = realloc(o->p, o->cap * 2 + (size_t)n);
		if (!p) {
			o->failed = 1;
			return;
		}
		o->p = p;
		o->cap = o->cap * 2 + (size_t)n;
	}
}

static void render_requests(struct api_metrics *m, struct out *o)
{
	size_t r, s, b;

	outf(o, "# HELP simhash_http_requests_total Requests answered, by route and status.\n"
		"# TYPE simhash_http_requests_total counter\n");
	for (r = 0; r < N_ROUTES; r++)
		for (s = 0; s < N_STATUS; s++) {
			uint64_t v = GET(&m->requests[r][s]);

			if (!v)
				continue;
			if (statuses[s])
				outf(o, "simhash_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
				     api_route_name(r), statuses[s], (unsigned long long)v);
			else
				outf(o, "simhash_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
				     api_route_name(r), (unsigned long long)v);
		}
	outf(o, "# HELP simhash_http_request_duration_seconds Time from a request's first byte "
		"to its answer, by route.\n"
		"# TYPE simhash_http_request_duration_seconds histogram\n");
	for (r = 0; r < N_ROUTES; r++) {
		uint64_t cum = 0;

		for (b = 0; b <= N_LAT; b++)
			cum += GET(&m->lat[r][b]);
		if (!cum)
			continue;
		cum = 0;
		for (b = 0; b <= N_LAT; b++) {
			cum += GET(&m->lat[r][b]);
			if (b < N_LAT)
				outf(o,
				     "simhash_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
				     api_route_name(r), lat_us[b] / 1e6, (unsigned long long)cum);
			else
				outf(o,
				     "simhash_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
				     api_route_name(r), (unsigned long long)cum);
		}
		outf(o, "simhash_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n",
		     api_route_name(r), GET(&m->lat_sum_us[r]) / 1e6);
		outf(o, "simhash_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
		     api_route_name(r), (unsigned long long)cum);
	}
}

/* The writes each commit carried, as a Prometheus histogram (cumulative
 * buckets le 1, 2, 4, ... 4096; its sum is the writes, its count the
 * commits). */
static void render_batches(const struct sh_store_figures *f, struct out *o)
{
	uint64_t cum = 0;

	outf(o, "# HELP simhash_store_commit_batch_size Writes made durable by one commit.\n"
		"# TYPE simhash_store_commit_batch_size histogram\n");
	for (unsigned b = 0; b < SIMHASH_STORE_BATCH_BUCKETS; b++) {
		cum += f->batches[b];
		outf(o, "simhash_store_commit_batch_size_bucket{le=\"%u\"} %llu\n", 1u << b,
		     (unsigned long long)cum);
	}
	outf(o, "simhash_store_commit_batch_size_bucket{le=\"+Inf\"} %llu\n"
		"simhash_store_commit_batch_size_sum %llu\n"
		"simhash_store_commit_batch_size_count %llu\n",
	     (unsigned long long)f->commits, (unsigned long long)f->writes,
	     (unsigned long long)f->commits);
}

static void render_store(const struct sh_store_figures *f, struct out *o)
{
	outf(o, "# HELP simhash_store_documents Documents in the store.\n"
		"# TYPE simhash_store_documents gauge\n"
		"simhash_store_documents %llu\n"
		"# HELP simhash_store_commits_total Write transactions committed (one fsync each).\n"
		"# TYPE simhash_store_commits_total counter\n"
		"simhash_store_commits_total %llu\n"
		"# HELP simhash_store_committed_writes_total Writes made durable (over commits: the mean commit batch).\n"
		"# TYPE simhash_store_committed_writes_total counter\n"
		"simhash_store_committed_writes_total %llu\n"
		"# HELP simhash_store_commit_batch_max Most writes one commit carried.\n"
		"# TYPE simhash_store_commit_batch_max gauge\n"
		"simhash_store_commit_batch_max %llu\n",
	     (unsigned long long)f->documents, (unsigned long long)f->commits,
	     (unsigned long long)f->writes, (unsigned long long)f->max_batch);
	render_batches(f, o);
}

char *sh_metrics_render(struct api_metrics *m, const struct sh_store_figures *f, size_t *len)
{
	struct out o = { malloc(8192), 0, 8192, 0 };

	if (!o.p)
		return NULL;
	render_requests(m, &o);
	outf(&o, "# HELP simhash_http_connections Connections open now.\n"
		 "# TYPE simhash_http_connections gauge\n"
		 "simhash_http_connections %lld\n",
	     (long long)GET(&m->connections));
	if (f)
		render_store(f, &o);
	if (o.failed) {
		free(o.p);
		return NULL;
	}
	*len = o.len;
	return o.p;
}
