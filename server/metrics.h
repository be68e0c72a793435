/* metrics.h - counters for GET /metrics (Prometheus text format 0.0.4):
 * requests by route and status, latency histograms by route, and the
 * store's documents and commits (a histogram of the writes each commit
 * carried, and the largest). Updated with atomic adds from any thread; no lock. */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stdint.h>
#include "api.h"

struct api_metrics;

int sh_metrics_new(struct api_metrics **out);
void sh_metrics_free(struct api_metrics *m);

/* One answered request and its time in microseconds. */
void sh_metrics_request(struct api_metrics *m, enum api_route route, int status, uint64_t usec);

/* Connections open now: +1 or -1. */
void sh_metrics_connection(struct api_metrics *m, int delta);

/* The store's figures, from simhash_store_stats_get. */
struct sh_store_figures {
	uint64_t documents;
	uint64_t commits;   /* write transactions, each one fsync */
	uint64_t writes;    /* write requests they made durable */
	uint64_t max_batch; /* most writes in one commit */
	uint64_t batches[SIMHASH_STORE_BATCH_BUCKETS]; /* commits by writes carried */
};

/* The text of /metrics, malloc'd; f NULL (no store) leaves the store's out. */
char *sh_metrics_render(struct api_metrics *m, const struct sh_store_figures *f, size_t *len);

#endif /* SERVER_METRICS_H */
