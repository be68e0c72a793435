/* deadline.h - the header deadline of `simhash serve` (deadline.c): a
 * connection has a bounded time to send a whole request head. */
#ifndef SERVER_DEADLINE_H
#define SERVER_DEADLINE_H

#include <stdint.h>

struct sh_deadline;

/* One connection, as the deadline sees it (the socket context). */
struct sh_conn {
	int fd;
	uint64_t armed_us;           /* since when a head is awaited (armed) */
	int armed;
	int kept;                    /* armed after a request (kept alive) */
	struct sh_conn *prev, *next; /* in the armed list, oldest first */
};

/* Starts the thread that cuts connections whose head is late: after
 * `seconds`; a connection that has sent no request yet after 1 s while at
 * least 9/10 of max_conns connections are open. seconds 0: no deadline (every call below then does nothing). 0, or
 * -1. */
int sh_deadline_start(struct sh_deadline **out, unsigned seconds, unsigned max_conns);
/* Stops the thread; call after the last connection is gone. NULL is fine. */
void sh_deadline_stop(struct sh_deadline *d);

/* A connection opened: counts it and arms it. */
void sh_deadline_open(struct sh_deadline *d, struct sh_conn *c);
/* A connection closes: disarms it and counts it out. */
void sh_deadline_close(struct sh_deadline *d, struct sh_conn *c);
/* A head is awaited on c from now on (its previous request finished). */
void sh_deadline_arm(struct sh_deadline *d, struct sh_conn *c);
/* The head arrived. */
void sh_deadline_disarm(struct sh_deadline *d, struct sh_conn *c);

/* Connections cut so far (for the tests and the metrics). */
uint64_t sh_deadline_cut(struct sh_deadline *d);

#endif /* SERVER_DEADLINE_H */
