//go:build ceph

/* The librbd backend of the aioq queue core (internal/io/aioq/aioq.h): one
 * image handle, shared by every queue of a session (librbd's aio calls are
 * thread-safe), and its blocking calls for the synchronous path. */

#include "backend.h"

#include <stdlib.h>

struct cbrbd {
	rbd_image_t image;
};

/* Runs on a librbd callback thread. */
static void complete(rbd_completion_t c, void *arg)
{
	aioq_slot *s = (aioq_slot *)arg;
	ssize_t ret = rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	/* librbd reports a write's success as 0: the core wants bytes. */
	if (s->op == AIOQ_WRITE && ret == 0)
		ret = (ssize_t)s->len;
	aioq_complete(s, (int)ret);
}

int cbrbd_issue(void *ctx, aioq_slot *s)
{
	cbrbd *b = (cbrbd *)ctx;
	rbd_completion_t c;
	int r = rbd_aio_create_completion(s, complete, &c);
	if (r < 0)
		return r;
	switch (s->op) {
	case AIOQ_WRITE:
		r = rbd_aio_write(b->image, s->off, s->len, s->buf, c);
		break;
	case AIOQ_READ:
		r = rbd_aio_read(b->image, s->off, s->len, s->buf, c);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0) {
		rbd_aio_release(c);
		return r;
	}
	return 0;
}

int cbrbd_open(rados_ioctx_t io, const char *name, cbrbd **out)
{
	cbrbd *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	int r = rbd_open(io, name, &b->image, NULL);
	if (r < 0) {
		free(b);
		return r;
	}
	*out = b;
	return 0;
}

int cbrbd_size(cbrbd *b, uint64_t *size)
{
	return rbd_get_size(b->image, size);
}

int cbrbd_close(cbrbd *b)
{
	int r = rbd_close(b->image);
	free(b);
	return r;
}

int cbrbd_flush(cbrbd *b)
{
	return rbd_flush(b->image);
}

ssize_t cbrbd_read(cbrbd *b, uint64_t off, size_t len, char *buf)
{
	return rbd_read(b->image, off, len, buf);
}

ssize_t cbrbd_write(cbrbd *b, uint64_t off, size_t len, const char *buf)
{
	return rbd_write(b->image, off, len, buf);
}
