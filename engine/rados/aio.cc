//go:build ceph

// C++ because librados's C API copies every write into a buffer of its own
// (a 4 MiB malloc, page faults and memcpy per op on the submitting thread);
// the C++ API takes the caller's memory as it is. Reads offer the caller's
// buffer to the messenger, which then receives into it, warm in the cache,
// instead of into fresh pages that a copy reads again. The interface stays
// C.

#include "aio.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include <rados/librados.hpp>

namespace {

struct slot {
	cbq *q;
	int index;
	int op;
	char *buf;
	size_t len;
	uint64_t off;
	librados::AioCompletion *comp;
	librados::bufferlist bl;
	int64_t start_ns;
	int64_t end_ns;
	int ret;
	char oid[CBQ_OID_MAX];
};

/* A FIFO of slot indices. */
struct fifo {
	int *items;
	int cap;
	int head;
	int count;

	void push(int i) { items[(head + count++) % cap] = i; }
	int pop()
	{
		int i = items[head];
		head = (head + 1) % cap;
		count--;
		return i;
	}
};

} // namespace

struct cbq {
	librados::IoCtx io;
	int depth; /* ops in flight in librados, at most */
	int nslots; /* depth plus the spare ones that may wait staged */
	slot *slots;
	pthread_mutex_t mu;
	int active; /* issued, not completed */
	fifo staged; /* submitted while depth were active, oldest first */
	fifo done; /* completed (or never issued), oldest first */
	bool staging;
	int64_t cutoff_ns; /* a staged op is not issued from this time on */
	int wake_at; /* completions that make it worth waking the reaper */
	/* rados bench's allocation hint for writes; 0: none */
	uint64_t hint_object_size;
	uint64_t hint_write_size;
	/* Written when the reaper should look at done: with staging, once
	 * wake_at ops completed or nothing is left staged; without, on every
	 * completion. The Go reaper waits on it in the runtime's poller, which
	 * holds no thread. */
	int efd;
	bool signalled;
};

extern "C" int64_t cbq_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void cbq_complete(librados::completion_t, void *arg);

/* Starts s's op; called without q->mu held, with s counted active. */
static int issue(cbq *q, slot *s)
{
	s->comp = librados::Rados::aio_create_completion(s, cbq_complete);
	if (!s->comp)
		return -ENOMEM;
	s->bl.clear();
	s->start_ns = cbq_now();
	int r;
	try {
		switch (s->op) {
		case CBQ_WRITE:
			/* A fresh static raw per op: librados caches CRCs per raw,
			 * and the buffer's content changes between ops. */
			s->bl.push_back(ceph::buffer::create_static(s->len, s->buf));
			if (q->hint_object_size) {
				librados::ObjectWriteOperation w;
				w.set_alloc_hint2(q->hint_object_size, q->hint_write_size,
						  librados::ALLOC_HINT_FLAG_SEQUENTIAL_WRITE |
							  librados::ALLOC_HINT_FLAG_SEQUENTIAL_READ |
							  librados::ALLOC_HINT_FLAG_APPEND_ONLY |
							  librados::ALLOC_HINT_FLAG_IMMUTABLE);
				w.write(s->off, s->bl);
				r = q->io.aio_operate(s->oid, s->comp, &w);
			} else {
				r = q->io.aio_write(s->oid, s->comp, s->bl, s->len, s->off);
			}
			break;
		case CBQ_READ:
			/* Offered to the messenger to receive straight into
			 * (librados posts it as the op's rx buffer); otherwise
			 * the reply replaces it. */
			s->bl.push_back(ceph::buffer::create_static(s->len, s->buf));
			r = q->io.aio_read(s->oid, s->comp, &s->bl, s->len, s->off);
			break;
		case CBQ_REMOVE: {
			/* FULL_TRY: a full cluster is when space is wanted back
			 * most, and a plain remove would wait for space. */
			librados::ObjectWriteOperation rm;
			rm.remove();
			r = q->io.aio_operate(s->oid, s->comp, &rm, librados::OPERATION_FULL_TRY);
			break;
		}
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

/* With q->mu held: queues s for the reaper and wakes it if it is time. */
static void finish_locked(cbq *q, slot *s, int ret, int64_t end_ns)
{
	s->ret = ret;
	s->end_ns = end_ns;
	q->done.push(s->index);
	bool wake = !q->staging || q->done.count >= q->wake_at || q->staged.count == 0;
	if (wake && !q->signalled) {
		uint64_t one = 1;
		q->signalled = true;
		/* A full counter only means a wake-up is already pending. */
		(void)!write(q->efd, &one, sizeof(one));
	}
}

/* With q->mu held, and a slot of the depth free: the next staged op that
 * may still start, or NULL; those past the cutoff go to the reaper
 * unissued. */
static slot *next_staged_locked(cbq *q)
{
	while (q->staged.count > 0) {
		slot *s = &q->slots[q->staged.pop()];
		int64_t now = cbq_now();
		if (now < q->cutoff_ns)
			return s;
		finish_locked(q, s, CBQ_NOT_ISSUED, now);
	}
	return NULL;
}

/* Runs on a librados finisher thread: the timestamp is the op's end. A
 * staged op takes the freed place at once, from this thread: the queue
 * stays full without waiting for the reaper to wake. */
static void cbq_complete(librados::completion_t, void *arg)
{
	slot *s = static_cast<slot *>(arg);
	cbq *q = s->q;
	int64_t t = cbq_now();
	int ret = s->comp->get_return_value();

	if (s->op == CBQ_READ && ret >= 0) {
		size_t n = s->bl.length() < s->len ? s->bl.length() : s->len;
		/* Received in place, or into the messenger's own buffers. */
		if (!s->bl.is_provided_buffer(s->buf))
			s->bl.begin().copy(n, s->buf);
		ret = (int)n;
	}
	s->bl.clear();
	/* librados holds its own reference until this callback returns. */
	s->comp->release();
	s->comp = NULL;

	pthread_mutex_lock(&q->mu);
	q->active--;
	slot *next = next_staged_locked(q);
	if (next)
		q->active++;
	finish_locked(q, s, ret, t);
	pthread_mutex_unlock(&q->mu);

	while (next) {
		int r = issue(q, next);
		if (r >= 0)
			return;
		pthread_mutex_lock(&q->mu);
		finish_locked(q, next, r, cbq_now());
		next = next_staged_locked(q);
		if (!next)
			q->active--;
		pthread_mutex_unlock(&q->mu);
	}
}

extern "C" cbq *cbq_new(rados_ioctx_t io, int depth, int spare)
{
	cbq *q = new (std::nothrow) cbq();
	if (!q)
		return NULL;
	int n = depth + spare;
	q->slots = new (std::nothrow) slot[n]();
	q->staged.items = new (std::nothrow) int[n]();
	q->done.items = new (std::nothrow) int[n]();
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!q->slots || !q->staged.items || !q->done.items || q->efd < 0) {
		if (q->efd >= 0)
			close(q->efd);
		delete[] q->slots;
		delete[] q->staged.items;
		delete[] q->done.items;
		delete q;
		return NULL;
	}
	librados::IoCtx::from_rados_ioctx_t(io, q->io);
	q->depth = depth;
	q->nslots = n;
	q->staged.cap = n;
	q->done.cap = n;
	q->wake_at = spare / 2 > 1 ? spare / 2 : 1;
	pthread_mutex_init(&q->mu, NULL);
	for (int i = 0; i < n; i++) {
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
	delete[] q->slots;
	delete[] q->staged.items;
	delete[] q->done.items;
	delete q;
}

extern "C" char *cbq_oid(cbq *q, int slot)
{
	return q->slots[slot].oid;
}

extern "C" void cbq_hint(cbq *q, uint64_t object_size, uint64_t write_size)
{
	q->hint_object_size = object_size;
	q->hint_write_size = write_size;
}

extern "C" void cbq_stage(cbq *q, int64_t cutoff_ns)
{
	pthread_mutex_lock(&q->mu);
	q->staging = q->nslots > q->depth;
	q->cutoff_ns = cutoff_ns;
	pthread_mutex_unlock(&q->mu);
}

extern "C" void cbq_unstage(cbq *q)
{
	pthread_mutex_lock(&q->mu);
	int64_t now = cbq_now();
	while (q->staged.count > 0)
		finish_locked(q, &q->slots[q->staged.pop()], CBQ_NOT_ISSUED, now);
	q->staging = false;
	pthread_mutex_unlock(&q->mu);
}

/* Starts op on the object named in the slot's oid, or stages it when
 * depth ops are in flight. buf must stay valid and unchanged until the
 * slot is reaped: a write sends it without copying. */
extern "C" int cbq_submit(cbq *q, int index, int op, char *buf, size_t len, uint64_t off)
{
	slot *s = &q->slots[index];
	s->op = op;
	s->buf = buf;
	s->len = len;
	s->off = off;
	pthread_mutex_lock(&q->mu);
	if (q->active >= q->depth) {
		int r = -EBUSY;
		if (q->staging) {
			q->staged.push(index);
			r = 0;
		}
		pthread_mutex_unlock(&q->mu);
		return r;
	}
	q->active++;
	pthread_mutex_unlock(&q->mu);

	int r = issue(q, s);
	if (r < 0) {
		pthread_mutex_lock(&q->mu);
		q->active--;
		pthread_mutex_unlock(&q->mu);
	}
	return r;
}

extern "C" int cbq_reap(cbq *q, int max, int *slots, int *rets, int64_t *start_ns, int64_t *end_ns)
{
	pthread_mutex_lock(&q->mu);
	int n = 0;
	while (q->done.count > 0 && n < max) {
		slot *s = &q->slots[q->done.pop()];
		slots[n] = s->index;
		rets[n] = s->ret;
		start_ns[n] = s->ret == CBQ_NOT_ISSUED ? 0 : s->start_ns;
		end_ns[n] = s->end_ns;
		n++;
	}
	q->signalled = false;
	pthread_mutex_unlock(&q->mu);
	return n;
}
