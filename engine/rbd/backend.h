/* The librbd backend of the aioq queue core (backend.cc). */
#ifndef CEPHBENCH_RBD_BACKEND_H
#define CEPHBENCH_RBD_BACKEND_H

#include <stdint.h>
#include <sys/types.h>
#include <rados/librados.h>
#include <rbd/librbd.h>

#include "aioq.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cbrbd cbrbd;
/* A queue's state on an image: pass it to the core as cbrbd_issue's ctx. */
typedef struct cbrbdq cbrbdq;

/* Opens the image for reads and writes (registering librbd's watch on it). */
int cbrbd_open(rados_ioctx_t io, const char *name, cbrbd **out);
int cbrbd_size(cbrbd *b, uint64_t *size);
/* Closes the image; every op must have completed. */
int cbrbd_close(cbrbd *b);
/* A queue of slots slots on b; NULL without memory. Free it once the
 * core is freed, before closing b. */
cbrbdq *cbrbd_queue_new(cbrbd *b, int slots);
void cbrbd_queue_free(cbrbdq *q);
/* The aioq_issue_fn, with a cbrbdq as its ctx. */
int cbrbd_issue(void *ctx, aioq_slot *s);
/* Flushes librbd's cache to the OSDs: 0 or -errno. */
int cbrbd_flush(cbrbd *b);
/* Blocking reads and writes: bytes or -errno. */
ssize_t cbrbd_read(cbrbd *b, uint64_t off, size_t len, char *buf);
ssize_t cbrbd_write(cbrbd *b, uint64_t off, size_t len, const char *buf);

#ifdef __cplusplus
}
#endif

#endif
