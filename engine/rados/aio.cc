//go:build ceph

// C++ because librados's C API copies every write into a buffer of its own
// (a 4 MiB malloc, page faults and memcpy per op on the submitting thread);
// the C++ API takes the caller's memory as it is. The interface stays C.

#include "aio.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <new>
#include <string>

#include <rados/librados.hpp>

namespace {

struct slot {
	cbq *q;
	int index;
	bool read;
	char *buf; /* a read's destination */
	size_t len;
	librados::AioCompletion *comp;
	librados::bufferlist bl;
	int64_t end_ns;
	int ret;
	char oid[CBQ_OID_MAX];
};

} // namespace

struct cbq {
	librados::IoCtx io;
	int depth;
	pthread_mutex_t mu;
	/* completed slots, oldest first */
	int *ring;
	int head;
	int count;
	slot *slots;
	/* Signalled when the ring goes from empty to not empty, so a Go
	 * goroutine can wait in the runtime's poller instead of blocking a
	 * thread in a C call. */
	int efd;
};

extern "C" int64_t cbq_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Runs on a librados finisher thread: the timestamp is the op's end. */
static void cbq_complete(librados::completion_t, void *arg)
{
	slot *s = static_cast<slot *>(arg);
	cbq *q = s->q;
	int64_t t = cbq_now();
	int ret = s->comp->get_return_value();

	if (s->read && ret > 0) {
		/* The messenger's buffers, not ours: one copy, as the C API
		 * makes for every read. */
		size_t n = s->bl.length() < s->len ? s->bl.length() : s->len;
		s->bl.begin().copy(n, s->buf);
		ret = (int)n;
	}
	s->bl.clear();

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

extern "C" cbq *cbq_new(rados_ioctx_t io, int depth)
{
	cbq *q = new (std::nothrow) cbq();
	if (!q)
		return NULL;
	q->ring = new (std::nothrow) int[depth]();
	q->slots = new (std::nothrow) slot[depth]();
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!q->ring || !q->slots || q->efd < 0) {
		if (q->efd >= 0)
			close(q->efd);
		delete[] q->ring;
		delete[] q->slots;
		delete q;
		return NULL;
	}
	librados::IoCtx::from_rados_ioctx_t(io, q->io);
	q->depth = depth;
	pthread_mutex_init(&q->mu, NULL);
	for (int i = 0; i < depth; i++) {
		q->slots[i].q = q;
		q->slots[i].index = i;
	}
	return q;
}

extern "C" int cbq_eventfd(cbq *q)
{
	return q->efd;
}

/* Frees the queue; the caller owns (and closes) the eventfd. */
extern "C" void cbq_free(cbq *q)
{
	pthread_mutex_destroy(&q->mu);
	delete[] q->ring;
	delete[] q->slots;
	delete q;
}

extern "C" char *cbq_oid(cbq *q, int slot)
{
	return q->slots[slot].oid;
}

/* Starts a CBQ_READ, CBQ_WRITE or CBQ_REMOVE of the object named in the
 * slot's oid. buf must stay valid and unchanged until the slot is reaped:
 * a write sends it without copying. */
extern "C" int cbq_submit(cbq *q, int index, int op, char *buf, size_t len, uint64_t off)
{
	slot *s = &q->slots[index];
	s->comp = librados::Rados::aio_create_completion(s, cbq_complete);
	if (!s->comp)
		return -ENOMEM;
	s->read = op == CBQ_READ;
	s->buf = buf;
	s->len = len;
	s->bl.clear();
	int r;
	try {
		switch (op) {
		case CBQ_WRITE:
			/* A fresh static raw per op: librados caches CRCs per raw,
			 * and the buffer's content changes between ops. */
			s->bl.push_back(ceph::buffer::create_static(len, buf));
			r = q->io.aio_write(s->oid, s->comp, s->bl, len, off);
			break;
		case CBQ_READ:
			r = q->io.aio_read(s->oid, s->comp, &s->bl, len, off);
			break;
		case CBQ_REMOVE:
			r = q->io.aio_remove(s->oid, s->comp);
			break;
		default:
			r = -EINVAL;
		}
	} catch (const std::bad_alloc &) {
		r = -ENOMEM;
	}
	if (r < 0) {
		s->bl.clear();
		s->comp->release();
		s->comp = NULL;
	}
	return r;
}

/* Hands back up to max completed ops without waiting: slot, return value
 * (bytes or -errno) and end time. The eventfd says when to look again. */
extern "C" int cbq_reap(cbq *q, int max, int *slots, int *rets, int64_t *end_ns)
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
		slot *s = &q->slots[slots[k]];
		s->comp->release();
		s->comp = NULL;
	}
	return n;
}
