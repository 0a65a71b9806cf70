//go:build ceph

// The librbd backend of the aioq queue core (internal/io/aioq/aioq.h): one
// image handle, shared by every queue of a session (librbd's aio calls are
// thread-safe), and its blocking calls for the synchronous path.
//
// C++ because librbd's C API copies every write into a buffer of its own
// while the image's cache is on (by default): a 4 MiB allocation, page
// faults and a copy per op. The C++ API takes a buffer list, so writes
// send their header and a body copied once (bodies.hpp), as rbd bench
// sends one buffer for every write.

#include "backend.h"

#include <new>

#include <rbd/librbd.hpp>

#include "bodies.hpp"

struct cbrbd {
	librbd::Image image;
};

namespace {

/* A slot's librbd state: a read's data, until its completion copies it
 * into the slot's buffer. */
struct rbdslot {
	ceph::bufferlist bl;
};

} // namespace

struct cbrbdq {
	cbrbdq(cbrbd *img, int n) : img(img), slots(new rbdslot[n]), bodies(n, true) {}
	~cbrbdq() { delete[] slots; }

	cbrbd *img;
	rbdslot *slots;
	/* librbd's cache keeps what it is given past the op. */
	aioq_bodies::Bodies bodies;
};

/* Runs on a librbd callback thread. */
static void complete(librbd::completion_t c, void *arg)
{
	auto *comp = static_cast<librbd::RBD::AioCompletion *>(c);
	aioq_slot *s = static_cast<aioq_slot *>(arg);
	cbrbdq *q = static_cast<cbrbdq *>(s->q->ctx);
	rbdslot *r = &q->slots[s->index];
	ssize_t ret = comp->get_return_value();
	comp->release();
	if (s->op == AIOQ_READ && ret >= 0) {
		size_t n = r->bl.length() < s->len ? r->bl.length() : s->len;
		r->bl.begin().copy(n, s->buf);
		ret = (ssize_t)n;
	}
	/* librbd reports a write's success as 0: the core wants bytes. */
	if (s->op == AIOQ_WRITE && ret == 0)
		ret = (ssize_t)s->len;
	if (s->op == AIOQ_READ)
		r->bl.clear();
	aioq_complete(s, (int)ret);
}

extern "C" int cbrbd_issue(void *ctx, aioq_slot *s)
{
	cbrbdq *q = static_cast<cbrbdq *>(ctx);
	rbdslot *r = &q->slots[s->index];
	auto *c = new (std::nothrow) librbd::RBD::AioCompletion(s, complete);
	if (!c)
		return -ENOMEM;
	/* Once an op is started, its completion may run (and the slot be
	 * reused) before the call returns: nothing of the slot is touched
	 * after it. */
	int ret;
	try {
		switch (s->op) {
		case AIOQ_WRITE: {
			/* librbd copies the list (not the data) before it returns */
			ceph::bufferlist bl;
			q->bodies.append_write(bl, s->buf, s->len);
			ret = q->img->image.aio_write2(s->off, s->len, bl, c, 0);
			break;
		}
		case AIOQ_READ:
			q->bodies.read_into(s->buf);
			r->bl.clear();
			ret = q->img->image.aio_read2(s->off, s->len, r->bl, c, 0);
			break;
		default:
			ret = -EINVAL;
		}
	} catch (const std::bad_alloc &) {
		ret = -ENOMEM;
	}
	if (ret < 0)
		c->release();
	return ret < 0 ? ret : 0;
}

extern "C" cbrbdq *cbrbd_queue_new(cbrbd *b, int slots)
{
	try {
		return new cbrbdq(b, slots);
	} catch (const std::bad_alloc &) {
		return NULL;
	}
}

extern "C" void cbrbd_queue_free(cbrbdq *q)
{
	delete q;
}

extern "C" int cbrbd_open(rados_ioctx_t io, const char *name, cbrbd **out)
{
	cbrbd *b = new (std::nothrow) cbrbd();
	if (!b)
		return -ENOMEM;
	librados::IoCtx ioctx;
	librados::IoCtx::from_rados_ioctx_t(io, ioctx);
	librbd::RBD rbd;
	int r = rbd.open(ioctx, b->image, name);
	if (r < 0) {
		delete b;
		return r;
	}
	*out = b;
	return 0;
}

extern "C" int cbrbd_size(cbrbd *b, uint64_t *size)
{
	return b->image.size(size);
}

extern "C" int cbrbd_close(cbrbd *b)
{
	int r = b->image.close();
	delete b;
	return r;
}

extern "C" int cbrbd_flush(cbrbd *b)
{
	return b->image.flush();
}

extern "C" ssize_t cbrbd_read(cbrbd *b, uint64_t off, size_t len, char *buf)
{
	ceph::bufferlist bl;
	ssize_t r;
	try {
		r = b->image.read(off, len, bl);
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
	if (r > 0)
		bl.begin().copy(r < (ssize_t)len ? r : len, buf);
	return r;
}

extern "C" ssize_t cbrbd_write(cbrbd *b, uint64_t off, size_t len, const char *buf)
{
	try {
		ceph::bufferlist bl;
		bl.append(buf, len);
		return b->image.write(off, len, bl);
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
}
