/* aioq: the queue core shared by cephbench's asynchronous Ceph engines
 * (librados, librbd). A backend starts ops (its issue function) and
 * reports each completion from its library's callback (aioq_complete);
 * the core keeps at most depth ops in flight, timestamps starts and
 * completions, hands completions to a Go reaper in batches through a ring,
 * and wakes the reaper through an eventfd it waits on in the Go runtime's
 * poller, so that no OS thread blocks per op or per queue.
 *
 * With staging, the queue also holds spare submitted ops beyond its depth
 * and starts each from the completion callback the moment an op in
 * flight completes: the depth stays full without a round trip through
 * the reaper, which wakes once per batch instead of once per op.
 *
 * Header-only (static functions): every cgo package and backend source
 * that includes it gets its own copy, and no symbol is shared between
 * packages. Usable from C and C++. */
#ifndef CEPHBENCH_AIOQ_H
#define CEPHBENCH_AIOQ_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define AIOQ_NAME_MAX 256

/* ops */
#define AIOQ_READ 0
#define AIOQ_WRITE 1
#define AIOQ_REMOVE 2

/* The ret of a staged op that never started: the cutoff passed, or
 * staging ended, first. */
#define AIOQ_NOT_ISSUED INT_MIN

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aioq aioq;

typedef struct aioq_slot {
	aioq *q;
	int index;
	int op;
	char *buf;
	size_t len;
	uint64_t off;
	int64_t start_ns;
	int64_t end_ns;
	int ret; /* bytes or -errno, or AIOQ_NOT_ISSUED */
	char name[AIOQ_NAME_MAX]; /* the object's, for object stores */
} aioq_slot;

/* Starts s's op on the backend ctx and returns 0, or -errno if it could
 * not start. Once started, the backend calls aioq_complete(s, ...) exactly
 * once. It is called without the queue's lock, from the submitting thread
 * or from a completion callback. */
typedef int (*aioq_issue_fn)(void *ctx, aioq_slot *s);

typedef struct {
	int *items;
	int cap;
	int head;
	int count;
} aioq_fifo;

struct aioq {
	aioq_issue_fn issue;
	void *ctx;
	int depth; /* ops in flight in the backend, at most */
	int nslots; /* depth plus the spare ones that may wait staged */
	aioq_slot *slots;
	pthread_mutex_t mu;
	int active; /* issued, not completed */
	aioq_fifo staged; /* submitted while depth were active, oldest first */
	aioq_fifo done; /* completed (or never issued), oldest first */
	int staging;
	int64_t cutoff_ns; /* a staged op is not issued from this time on */
	int wake_at; /* completions that make it worth waking the reaper */
	/* Written when the reaper should look at done: with staging, once
	 * wake_at ops completed or nothing is left staged; without, on every
	 * completion. */
	int efd;
	int signalled;
};

static inline int64_t aioq_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void aioq_fifo_push(aioq_fifo *f, int i)
{
	f->items[(f->head + f->count++) % f->cap] = i;
}

static inline int aioq_fifo_pop(aioq_fifo *f)
{
	int i = f->items[f->head];
	f->head = (f->head + 1) % f->cap;
	f->count--;
	return i;
}

/* With q->mu held: queues s for the reaper and wakes it if it is time. */
static inline void aioq_finish_locked(aioq *q, aioq_slot *s, int ret, int64_t end_ns)
{
	s->ret = ret;
	s->end_ns = end_ns;
	aioq_fifo_push(&q->done, s->index);
	int wake = !q->staging || q->done.count >= q->wake_at || q->staged.count == 0;
	if (wake && !q->signalled) {
		uint64_t one = 1;
		q->signalled = 1;
		/* A full counter only means a wake-up is already pending. */
		(void)!write(q->efd, &one, sizeof(one));
	}
}

/* With q->mu held, and a place of the depth free: the next staged op that
 * may still start, or NULL; those past the cutoff go to the reaper
 * unissued. */
static inline aioq_slot *aioq_next_staged_locked(aioq *q)
{
	while (q->staged.count > 0) {
		aioq_slot *s = &q->slots[aioq_fifo_pop(&q->staged)];
		int64_t now = aioq_now();
		if (now < q->cutoff_ns)
			return s;
		aioq_finish_locked(q, s, AIOQ_NOT_ISSUED, now);
	}
	return NULL;
}

static inline int aioq_issue(aioq *q, aioq_slot *s)
{
	s->start_ns = aioq_now();
	return q->issue(q->ctx, s);
}

/* Reports the end of s's op: bytes or -errno. Called by the backend from
 * its completion callback; a staged op takes the freed place at once,
 * from this thread. */
static inline void aioq_complete(aioq_slot *s, int ret)
{
	aioq *q = s->q;
	int64_t t = aioq_now();

	pthread_mutex_lock(&q->mu);
	q->active--;
	aioq_slot *next = aioq_next_staged_locked(q);
	if (next)
		q->active++;
	aioq_finish_locked(q, s, ret, t);
	pthread_mutex_unlock(&q->mu);

	while (next) {
		int r = aioq_issue(q, next);
		if (r >= 0)
			return;
		pthread_mutex_lock(&q->mu);
		aioq_finish_locked(q, next, r, aioq_now());
		next = aioq_next_staged_locked(q);
		if (!next)
			q->active--;
		pthread_mutex_unlock(&q->mu);
	}
}

static inline void aioq_free(aioq *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->mu);
	free(q->slots);
	free(q->staged.items);
	free(q->done.items);
	free(q);
}

/* A queue of depth ops in flight and spare more that may wait staged, on
 * the backend's issue function and ctx; NULL without memory or an
 * eventfd. The caller owns (and closes) the eventfd. */
static inline aioq *aioq_new(int depth, int spare, aioq_issue_fn issue, void *ctx)
{
	aioq *q = (aioq *)calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	int n = depth + spare;
	q->slots = (aioq_slot *)calloc(n, sizeof(*q->slots));
	q->staged.items = (int *)calloc(n, sizeof(int));
	q->done.items = (int *)calloc(n, sizeof(int));
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&q->mu, NULL);
	if (!q->slots || !q->staged.items || !q->done.items || q->efd < 0) {
		if (q->efd >= 0)
			close(q->efd);
		aioq_free(q);
		return NULL;
	}
	q->issue = issue;
	q->ctx = ctx;
	q->depth = depth;
	q->nslots = n;
	q->staged.cap = n;
	q->done.cap = n;
	q->wake_at = spare / 2 > 1 ? spare / 2 : 1;
	for (int i = 0; i < n; i++) {
		q->slots[i].q = q;
		q->slots[i].index = i;
	}
	return q;
}

static inline int aioq_eventfd(aioq *q)
{
	return q->efd;
}

static inline char *aioq_name(aioq *q, int slot)
{
	return q->slots[slot].name;
}

/* Turns staging on until cutoff_ns (CLOCK_MONOTONIC); a queue without
 * spare slots never stages. */
static inline void aioq_stage(aioq *q, int64_t cutoff_ns)
{
	pthread_mutex_lock(&q->mu);
	q->staging = q->nslots > q->depth;
	q->cutoff_ns = cutoff_ns;
	pthread_mutex_unlock(&q->mu);
}

/* Turns staging off; staged ops come back unissued. */
static inline void aioq_unstage(aioq *q)
{
	pthread_mutex_lock(&q->mu);
	int64_t now = aioq_now();
	while (q->staged.count > 0)
		aioq_finish_locked(q, &q->slots[aioq_fifo_pop(&q->staged)], AIOQ_NOT_ISSUED, now);
	q->staging = 0;
	pthread_mutex_unlock(&q->mu);
}

/* Starts op on the slot (its name set by the caller for object stores),
 * or stages it when depth ops are in flight. buf must stay valid, and for
 * a write unchanged, until the slot is reaped. Returns 0, -errno, or
 * -EBUSY when depth ops are in flight and the queue does not stage. */
static inline int aioq_submit(aioq *q, int index, int op, char *buf, size_t len, uint64_t off)
{
	aioq_slot *s = &q->slots[index];
	s->op = op;
	s->buf = buf;
	s->len = len;
	s->off = off;
	pthread_mutex_lock(&q->mu);
	if (q->active >= q->depth) {
		int r = -EBUSY;
		if (q->staging) {
			aioq_fifo_push(&q->staged, index);
			r = 0;
		}
		pthread_mutex_unlock(&q->mu);
		return r;
	}
	q->active++;
	pthread_mutex_unlock(&q->mu);

	int r = aioq_issue(q, s);
	if (r < 0) {
		pthread_mutex_lock(&q->mu);
		q->active--;
		pthread_mutex_unlock(&q->mu);
	}
	return r;
}

/* Hands back up to max finished ops without waiting: slot, ret, and start
 * and end times (start 0 when not issued). */
static inline int aioq_reap(aioq *q, int max, int *slots, int *rets, int64_t *start_ns, int64_t *end_ns)
{
	pthread_mutex_lock(&q->mu);
	int n = 0;
	while (q->done.count > 0 && n < max) {
		aioq_slot *s = &q->slots[aioq_fifo_pop(&q->done)];
		slots[n] = s->index;
		rets[n] = s->ret;
		start_ns[n] = s->ret == AIOQ_NOT_ISSUED ? 0 : s->start_ns;
		end_ns[n] = s->end_ns;
		n++;
	}
	q->signalled = 0;
	pthread_mutex_unlock(&q->mu);
	return n;
}

#ifdef __cplusplus
}
#endif

#endif
