//go:build ceph

// The librados backend of the aioq queue core (internal/io/aioq/aioq.h).
//
// C++ because librados's C API copies every write into a buffer of its own
// (a 4 MiB malloc, page faults and memcpy per op on the submitting thread);
// the C++ API takes the caller's memory as it is. Reads offer the caller's
// buffer to the messenger, which then receives into it, warm in the cache,
// instead of into fresh pages that a copy reads again.

#include "backend.h"

#include <new>

#include "bodies.hpp"

#include <rados/librados.hpp>

namespace {

/* A slot's librados state. */
struct rslot {
	librados::AioCompletion *comp;
	librados::bufferlist bl;
};

} // namespace

struct cbrados {
	explicit cbrados(int n) : slots(new rslot[n]()), bodies(n, false) {}
	~cbrados() { delete[] slots; }

	librados::IoCtx io;
	rslot *slots;
	/* Writes send the caller's memory: librados keeps no reference
	 * past an op's completion. */
	aioq_bodies::Bodies bodies;
	/* rados bench's allocation hint for writes; 0: none */
	uint64_t hint_object_size = 0;
	uint64_t hint_write_size = 0;
};

/* Runs on a librados finisher thread. */
static void complete(librados::completion_t, void *arg)
{
	aioq_slot *s = static_cast<aioq_slot *>(arg);
	cbrados *b = static_cast<cbrados *>(s->q->ctx);
	rslot *r = &b->slots[s->index];
	int ret = r->comp->get_return_value();

	if (s->op == AIOQ_READ && ret >= 0) {
		size_t n = r->bl.length() < s->len ? r->bl.length() : s->len;
		/* Received in place, or into the messenger's own buffers. */
		if (!r->bl.is_provided_buffer(s->buf))
			r->bl.begin().copy(n, s->buf);
		ret = (int)n;
	}
	r->bl.clear();
	/* librados holds its own reference until this callback returns. */
	r->comp->release();
	r->comp = NULL;
	aioq_complete(s, ret);
}

extern "C" int cbrados_issue(void *ctx, aioq_slot *s)
{
	cbrados *b = static_cast<cbrados *>(ctx);
	rslot *r = &b->slots[s->index];
	r->comp = librados::Rados::aio_create_completion(s, complete);
	if (!r->comp)
		return -ENOMEM;
	r->bl.clear();
	int ret;
	try {
		switch (s->op) {
		case AIOQ_WRITE:
			b->bodies.append_write(r->bl, s->buf, s->len);
			if (b->hint_object_size) {
				librados::ObjectWriteOperation w;
				w.set_alloc_hint2(b->hint_object_size, b->hint_write_size,
						  librados::ALLOC_HINT_FLAG_SEQUENTIAL_WRITE |
							  librados::ALLOC_HINT_FLAG_SEQUENTIAL_READ |
							  librados::ALLOC_HINT_FLAG_APPEND_ONLY |
							  librados::ALLOC_HINT_FLAG_IMMUTABLE);
				w.write(s->off, r->bl);
				ret = b->io.aio_operate(s->name, r->comp, &w);
			} else {
				ret = b->io.aio_write(s->name, r->comp, r->bl, s->len, s->off);
			}
			break;
		case AIOQ_READ:
			/* Offered to the messenger to receive straight into
			 * (librados posts it as the op's rx buffer); otherwise
			 * the reply replaces it. */
			b->bodies.read_into(s->buf);
			r->bl.push_back(ceph::buffer::create_static(s->len, s->buf));
			ret = b->io.aio_read(s->name, r->comp, &r->bl, s->len, s->off);
			break;
		case AIOQ_REMOVE: {
			/* FULL_TRY: a full cluster is when space is wanted back
			 * most, and a plain remove would wait for space. */
			librados::ObjectWriteOperation rm;
			rm.remove();
			ret = b->io.aio_operate(s->name, r->comp, &rm, librados::OPERATION_FULL_TRY);
			break;
		}
		default:
			ret = -EINVAL;
		}
	} catch (const std::bad_alloc &) {
		ret = -ENOMEM;
	}
	if (ret < 0) {
		r->bl.clear();
		r->comp->release();
		r->comp = NULL;
	}
	return ret;
}

extern "C" cbrados *cbrados_new(rados_ioctx_t io, int slots)
{
	cbrados *b;
	try {
		b = new cbrados(slots);
	} catch (const std::bad_alloc &) {
		return NULL;
	}
	librados::IoCtx::from_rados_ioctx_t(io, b->io);
	return b;
}

extern "C" void cbrados_free(cbrados *b)
{
	delete b;
}

extern "C" void cbrados_hint(cbrados *b, uint64_t object_size, uint64_t write_size)
{
	b->hint_object_size = object_size;
	b->hint_write_size = write_size;
}
