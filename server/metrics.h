/* metrics.h - counters for GET /metrics (Prometheus text format 0.0.4):
 * requests by route and status, latency histograms by route, commit batch
 * sizes. Updated with atomic adds from any thread; no lock. */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stdint.h>
#include "api.h"

struct api_metrics;

int sh_metrics_new(struct api_metrics **out);
void sh_metrics_free(struct api_metrics *m);

/* One answered request and its time in microseconds. */
void sh_metrics_request(struct api_metrics *m, enum api_route route, int status, uint64_t usec);

/* One commit of the store that made n writes durable. */
void sh_metrics_commit(struct api_metrics *m, uint64_t n);

/* Connections open now: +1 or -1. */
void sh_metrics_connection(struct api_metrics *m, int delta);

/* The text of /metrics, malloc'd; documents < 0 leaves that gauge out. */
char *sh_metrics_render(struct api_metrics *m, long long documents, size_t *len);

#endif /* SERVER_METRICS_H */
