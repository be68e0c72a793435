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
 *  1. Every connection awaiting a head is in one list, in the order it was
 *     armed. All deadlines are "armed + seconds", so the list is also in
 *     deadline order: the thread looks only at its front, and arming and
 *     disarming are O(1).
 *  2. A late connection is cut by shutdown(2) on its socket: libmicrohttpd
 *     then reads an end of file and closes the connection itself, on its
 *     own thread, as for any client that hangs up. The socket is valid
 *     while the connection is in the list, since libmicrohttpd disarms it
 *     (the close notice) before it closes the socket, and both sides hold
 *     the lock.
 *  3. A kept-alive connection is armed again when its request finishes, so
 *     an idle kept-alive connection is closed after `seconds` too (Apache's
 *     KeepAliveTimeout does the same).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include "deadline.h"

struct sh_deadline {
	uint64_t span_us;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct sh_conn *head, *tail;
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
	if (c->prev)
		c->prev->next = c->next;
	else
		d->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		d->tail = c->prev;
	c->prev = c->next = NULL;
	c->armed = 0;
}

/* Cuts every connection past its deadline (invariant 2); the lock held. */
static void cut_late(struct sh_deadline *d, uint64_t now)
{
	struct sh_conn *c;

	while ((c = d->head) && c->due_us <= now) {
		unlink_conn(d, c);
		shutdown(c->fd, SHUT_RDWR);
		d->cut++;
	}
}

static void *deadline_main(void *arg)
{
	struct sh_deadline *d = arg;
	struct timespec ts;
	uint64_t due;

	pthread_mutex_lock(&d->lock);
	while (!d->stopping) {
		cut_late(d, mono_us());
		if (!d->head) {
			pthread_cond_wait(&d->cond, &d->lock);
			continue;
		}
		due = d->head->due_us;
		ts.tv_sec = (time_t)(due / 1000000u);
		ts.tv_nsec = (long)(due % 1000000u) * 1000;
		pthread_cond_timedwait(&d->cond, &d->lock, &ts);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int sh_deadline_start(struct sh_deadline **out, unsigned seconds)
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

void sh_deadline_arm(struct sh_deadline *d, struct sh_conn *c)
{
	if (!d || !c)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->armed)
		unlink_conn(d, c);
	c->due_us = mono_us() + d->span_us;
	c->armed = 1;
	c->prev = d->tail;
	c->next = NULL;
	if (d->tail)
		d->tail->next = c;
	else
		d->head = c;
	d->tail = c;
	if (d->head == c)
		pthread_cond_signal(&d->cond);
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
