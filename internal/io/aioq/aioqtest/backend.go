// Package aioqtest is a fake backend for the aioq queue core: the ops it is
// asked to start wait until the test completes them, the way a library's
// callback thread would, so tests drive staging and batching step by step.
package aioqtest

/*
#cgo CFLAGS: -I${SRCDIR}/..
#include <string.h>
#include "aioq.h"

typedef struct {
	pthread_mutex_t mu;
	aioq_slot **started; // FIFO of ops started and not completed
	int cap, head, count;
	int max_active;
} fake;

static int fake_issue(void *ctx, aioq_slot *s)
{
	fake *f = (fake *)ctx;
	pthread_mutex_lock(&f->mu);
	f->started[(f->head + f->count++) % f->cap] = s;
	if (f->count > f->max_active)
		f->max_active = f->count;
	pthread_mutex_unlock(&f->mu);
	return 0;
}

static void *fake_issue_fn(void) { return (void *)fake_issue; }

static fake *fake_new(int cap)
{
	fake *f = (fake *)calloc(1, sizeof(*f));
	f->started = (aioq_slot **)calloc(cap, sizeof(aioq_slot *));
	f->cap = cap;
	pthread_mutex_init(&f->mu, NULL);
	return f;
}

static void fake_free(fake *f)
{
	pthread_mutex_destroy(&f->mu);
	free(f->started);
	free(f);
}

static int fake_active(fake *f, int *max_active)
{
	pthread_mutex_lock(&f->mu);
	int n = f->count;
	*max_active = f->max_active;
	pthread_mutex_unlock(&f->mu);
	return n;
}

// Completes the n oldest started ops with ret (its length if ret is -1):
// a read fills that much of its buffer with fill.
static int fake_complete(fake *f, int n, unsigned char fill, int ret)
{
	int done = 0;
	for (; done < n; done++) {
		pthread_mutex_lock(&f->mu);
		if (f->count == 0) {
			pthread_mutex_unlock(&f->mu);
			break;
		}
		aioq_slot *s = f->started[f->head];
		f->head = (f->head + 1) % f->cap;
		f->count--;
		pthread_mutex_unlock(&f->mu);
		int r = ret == -1 ? (int)s->len : ret;
		if (s->op == AIOQ_READ && r > 0)
			memset(s->buf, fill, (size_t)r < s->len ? (size_t)r : s->len);
		aioq_complete(s, r);
	}
	return done;
}
*/
import "C"

import "unsafe"

// Backend is the fake backend. Its methods are safe for concurrent use.
type Backend struct{ f *C.fake }

// New returns a backend for a queue of up to slots slots.
func New(slots int) *Backend { return &Backend{C.fake_new(C.int(slots))} }

// Issue is the backend's aioq_issue_fn, for aioq.New.
func (b *Backend) Issue() unsafe.Pointer { return C.fake_issue_fn() }

// Ctx is the backend's context, for aioq.New.
func (b *Backend) Ctx() unsafe.Pointer { return unsafe.Pointer(b.f) }

// Active counts the ops started and not completed, and the most there
// ever were at once.
func (b *Backend) Active() (now, most int) {
	var m C.int
	n := C.fake_active(b.f, &m)
	return int(n), int(m)
}

// Complete completes up to n of the oldest started ops, as their library
// callback would, each with its length: reads get fill in every byte. It
// returns how many it completed.
func (b *Backend) Complete(n int, fill byte) int {
	return int(C.fake_complete(b.f, C.int(n), C.uchar(fill), -1))
}

// CompleteWith completes up to n of the oldest started ops with ret,
// bytes (a read gets that many of fill) or -errno.
func (b *Backend) CompleteWith(n int, fill byte, ret int) int {
	return int(C.fake_complete(b.f, C.int(n), C.uchar(fill), C.int(ret)))
}

// Free frees the backend, after its queue.
func (b *Backend) Free() { C.fake_free(b.f) }
