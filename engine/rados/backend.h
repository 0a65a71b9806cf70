/* The librados backend of the aioq queue core (aio.cc). */
#ifndef CEPHBENCH_RADOS_BACKEND_H
#define CEPHBENCH_RADOS_BACKEND_H

#include <stdint.h>
#include <rados/librados.h>

#include "aioq.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cbrados cbrados;

/* A backend on io (whose pool context it shares) for a queue of slots
 * slots; NULL without memory. */
cbrados *cbrados_new(rados_ioctx_t io, int slots);
void cbrados_free(cbrados *b);
/* Sends rados bench's allocation hint with every write: the object and
 * write sizes, sequential, append-only, immutable. Call before the first
 * submit. */
void cbrados_hint(cbrados *b, uint64_t object_size, uint64_t write_size);
/* The aioq_issue_fn. */
int cbrados_issue(void *ctx, aioq_slot *s);

#ifdef __cplusplus
}
#endif

#endif
