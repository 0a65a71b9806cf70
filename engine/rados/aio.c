//go:build ceph

#include "aio.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	cbq *q;
	int index;
	rados_completion_t comp;
	int64_t end_ns;
	int ret;
	char oid[CBQ_OID_MAX];
} cbq_slot;

struct cbq {
	rados_ioctx_t io;
	int depth;
	pthread_mutex_t mu;
	/* completed slots, oldest first */
	int *ring;
	int head;
	int count;
	cbq_slot *slots;
	/* Signalled when the ring goes from empty to not empty, so a Go
	 * goroutine can wait in the runtime's poller instead of blocking a
	 * thread in a C call. */
	int efd;
};

int64_t cbq_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Runs on a librados finisher thread: the timestamp is the op's end. */
static void cbq_complete(rados_completion_t c, void *arg)
{
	cbq_slot *s = arg;
	cbq *q = s->q;
	int64_t t = cbq_now();
	int ret = rados_aio_get_return_value(c);

	pthread_mutex_lock(&q->mu);
	s->end_ns = t;
	s->ret = ret;
	q->ring[(q->head + q->count) % q->depth] = s->index;
	q->count++;
	if (q->count == 1 && q->efd >= 0) {
		uint64_t one = 1;
		/* A full counter only means a wake-up is already pending. */
		(void)!write(q->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&q->mu);
}

cbq *cbq_new(rados_ioctx_t io, int depth)
{
	cbq *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->ring = calloc(depth, sizeof(*q->ring));
	q->slots = calloc(depth, sizeof(*q->slots));
	if (!q->ring || !q->slots) {
		free(q->ring);
		free(q->slots);
		free(q);
		return NULL;
	}
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0) {
		free(q->ring);
		free(q->slots);
		free(q);
		return NULL;
	}
	q->io = io;
	q->depth = depth;
	pthread_mutex_init(&q->mu, NULL);
	for (int i = 0; i < depth; i++) {
		q->slots[i].q = q;
		q->slots[i].index = i;
	}
	return q;
}

int cbq_eventfd(cbq *q)
{
	return q->efd;
}

/* Frees the queue; the caller owns (and closes) the eventfd. */
void cbq_free(cbq *q)
{
	pthread_mutex_destroy(&q->mu);
	free(q->ring);
	free(q->slots);
	free(q);
}

char *cbq_oid(cbq *q, int slot)
{
	return q->slots[slot].oid;
}

/* Starts a read or write of the object named in the slot's oid. buf must
 * stay valid until the slot is reaped. */
int cbq_submit(cbq *q, int slot, int write, char *buf, size_t len, uint64_t off)
{
	cbq_slot *s = &q->slots[slot];
	int r = rados_aio_create_completion2(s, cbq_complete, &s->comp);
	if (r < 0)
		return r;
	if (write)
		r = rados_aio_write(q->io, s->oid, s->comp, buf, len, off);
	else
		r = rados_aio_read(q->io, s->oid, s->comp, buf, len, off);
	if (r < 0) {
		rados_aio_release(s->comp);
		s->comp = NULL;
	}
	return r;
}

/* Hands back up to max completed ops without waiting: slot, return value
 * (bytes or -errno) and end time. The eventfd says when to look again. */
int cbq_reap(cbq *q, int max, int *slots, int *rets, int64_t *end_ns)
{
	pthread_mutex_lock(&q->mu);
	int n = 0;
	while (q->count > 0 && n < max) {
		int i = q->ring[q->head];
		q->head = (q->head + 1) % q->depth;
		q->count--;
		slots[n] = i;
		rets[n] = q->slots[i].ret;
		end_ns[n] = q->slots[i].end_ns;
		n++;
	}
	pthread_mutex_unlock(&q->mu);

	for (int k = 0; k < n; k++) {
		cbq_slot *s = &q->slots[slots[k]];
		rados_aio_release(s->comp);
		s->comp = NULL;
	}
	return n;
}
