/* deadline.c - the header deadline: a client has `seconds` to send a whole
 * request head, counted from the moment its connection opened or its
 * previous request finished, however it trickles the bytes.
 *
 * libmicrohttpd's own timeout (--idle-timeout) counts silence only, so a
 * client sending one header line every few seconds keeps its connection
 * for ever, and a thousand of them hold every connection slot
 * (slowloris). libmicrohttpd 0.9.75 has no deadline for the head, and calls
 * us only once the head is complete, so the deadline is kept here:
 *
 *  1. Every connection awaiting a head is in one of two lists, in the
 *     order it was armed: `fresh` (no request yet) and `kept` (kept alive
 *     after a request). All deadlines of a list are "armed + its span", so
 *     each list is also in deadline order: the thread looks only at their
 *     fronts, and arming and disarming are O(1).
 *  2. A late connection is cut by shutdown(2) on its socket: libmicrohttpd
 *     then reads an end of file and closes the connection itself, on its
 *     own thread, as for any client that hangs up. The socket is valid
 *     while the connection is in a list, since libmicrohttpd tells us of
 *     the close (sh_deadline_close) before it closes the socket, and both
 *     sides hold the lock.
 *  3. A kept-alive connection is armed again when its request finishes, so
 *     an idle kept-alive connection is closed after `seconds` too (Apache's
 *     KeepAliveTimeout does the same).
 *  4. Under pressure, while 9/10 of the connection slots are taken, the
 *     span of `fresh` is 1 s: a thousand slow heads would otherwise make
 *     every new client wait up to `seconds` in the listen queue, each slot
 *     they lose being taken again by the next slow head. An honest first
 *     head takes milliseconds. Connections kept alive after a request keep
 *     their `seconds`: a client that was served may stay idle that long.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include "deadline.h"

#define PRESSED_US 1000000u /* the span of `fresh` under pressure (invariant 4) */

struct conn_list {
	struct sh_conn *head, *tail;
};

struct sh_deadline {
	uint64_t span_us;
	unsigned long open, pressure_at; /* connections open; pressed from */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct conn_list lists[2]; /* [0] fresh, [1] kept (invariant 1) */
	uint64_t cut;
	int stopping;
	pthread_t thread;
};

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void unlink_conn(struct sh_deadline *d, struct sh_conn *c)
{
	struct conn_list *l = &d->lists[c->kept];

	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->armed = 0;
}

/* The span of list i now (invariant 4); the lock held. */
static uint64_t span_of(const struct sh_deadline *d, int i)
{
	if (i == 0 && d->open >= d->pressure_at && d->span_us > PRESSED_US)
		return PRESSED_US;
	return d->span_us;
}

/* Cuts every connection past its deadline (invariant 2) and returns the
 * next deadline, 0 if none; the lock held. */
static uint64_t cut_late(struct sh_deadline *d, uint64_t now)
{
	uint64_t next = 0;
	struct sh_conn *c;
	int i;

	for (i = 0; i < 2; i++) {
		uint64_t span = span_of(d, i);

		while ((c = d->lists[i].head) && c->armed_us + span <= now) {
			unlink_conn(d, c);
			shutdown(c->fd, SHUT_RDWR);
			d->cut++;
		}
		if (c && (!next || c->armed_us + span < next))
			next = c->armed_us + span;
	}
	return next;
}

static void *deadline_main(void *arg)
{
	struct sh_deadline *d = arg;
	struct timespec ts;
	uint64_t due;

	pthread_mutex_lock(&d->lock);
	while (!d->stopping) {
		due = cut_late(d, mono_us());
		if (!due) {
			pthread_cond_wait(&d->cond, &d->lock);
			continue;
		}
		ts.tv_sec = (time_t)(due / 1000000u);
		ts.tv_nsec = (long)(due % 1000000u) * 1000;
		pthread_cond_timedwait(&d->cond, &d->lock, &ts);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int sh_deadline_start(struct sh_deadline **out, unsigned seconds, unsigned max_conns)
{
	struct sh_deadline *d;
	pthread_condattr_t attr;

	*out = NULL;
	if (!seconds)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	d->span_us = (uint64_t)seconds * 1000000u;
	d->pressure_at = max_conns - max_conns / 10;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&d->thread, NULL, deadline_main, d)) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

void sh_deadline_stop(struct sh_deadline *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = 1;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* Arms c in list `kept`; the lock held. */
static void arm(struct sh_deadline *d, struct sh_conn *c, int kept)
{
	struct conn_list *l = &d->lists[kept];

	if (c->armed)
		unlink_conn(d, c);
	c->armed_us = mono_us();
	c->armed = 1;
	c->kept = kept;
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	if (l->head == c)
		pthread_cond_signal(&d->cond);
}

void sh_deadline_open(struct sh_deadline *d, struct sh_conn *c)
{
	if (!d || !c)
		return;
	pthread_mutex_lock(&d->lock);
	if (++d->open == d->pressure_at)
		pthread_cond_signal(&d->cond); /* the deadline just shortened */
	arm(d, c, 0);
	pthread_mutex_unlock(&d->lock);
}

void sh_deadline_close(struct sh_deadline *d, struct sh_conn *c)
{
	if (!d || !c)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->armed)
		unlink_conn(d, c);
	d->open--;
	pthread_mutex_unlock(&d->lock);
}

void sh_deadline_arm(struct sh_deadline *d, struct sh_conn *c)
{
	if (!d || !c)
		return;
	pthread_mutex_lock(&d->lock);
	arm(d, c, 1);
	pthread_mutex_unlock(&d->lock);
}

void sh_deadline_disarm(struct sh_deadline *d, struct sh_conn *c)
{
	if (!d || !c)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->armed)
		unlink_conn(d, c);
	pthread_mutex_unlock(&d->lock);
}

uint64_t sh_deadline_cut(struct sh_deadline *d)
{
	uint64_t n;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	n = d->cut;
	pthread_mutex_unlock(&d->lock);
	return n;
}
