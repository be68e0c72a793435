/* deadline.h - the header deadline of `simhash serve` (deadline.c): a
 * connection has a bounded time to send a whole request head. */
#ifndef SERVER_DEADLINE_H
#define SERVER_DEADLINE_H

#include <stdint.h>

struct sh_deadline;

/* One connection, as the deadline sees it (the socket context). */
struct sh_conn {
	int fd;
	uint64_t due_us;             /* when its head must be in (armed) */
	int armed;
	struct sh_conn *prev, *next; /* in the armed list, oldest first */
};

/* Starts the thread that cuts connections whose head is late. seconds 0:
 * no deadline (every call below then does nothing). 0, or -1. */
int sh_deadline_start(struct sh_deadline **out, unsigned seconds);
/* Stops the thread; call after the last connection is gone. NULL is fine. */
void sh_deadline_stop(struct sh_deadline *d);

/* A head is awaited on c from now on (a connection opened, or its previous
 * request finished). */
void sh_deadline_arm(struct sh_deadline *d, struct sh_conn *c);
/* The head arrived, or the connection closes. */
void sh_deadline_disarm(struct sh_deadline *d, struct sh_conn *c);

/* Connections cut so far (for the tests and the metrics). */
uint64_t sh_deadline_cut(struct sh_deadline *d);

#endif /* SERVER_DEADLINE_H */
