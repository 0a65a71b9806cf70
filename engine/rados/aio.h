/* A librados aio queue whose completions are timestamped in the callback
 * and handed back in batches, so one Go goroutine keeps a whole queue
 * depth in flight without an OS thread per op. A C interface over C++
 * (aio.cc), for writes without a copy.
 *
 * With staging, the queue also holds spare submitted ops beyond its depth
 * and starts each from the completion callback the moment an op in
 * flight completes: the depth stays full without a round trip through the
 * reaper, which wakes once per batch instead of once per op. */
#ifndef CEPHBENCH_RADOS_AIO_H
#define CEPHBENCH_RADOS_AIO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <rados/librados.h>

#define CBQ_OID_MAX 256

/* cbq_submit's ops */
#define CBQ_READ 0
#define CBQ_WRITE 1
#define CBQ_REMOVE 2

/* The return value of a staged op that never started: the cutoff passed,
 * or staging ended, first. */
#define CBQ_NOT_ISSUED INT_MIN

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cbq cbq;

/* A queue of depth ops in flight and spare more that may wait staged. */
cbq *cbq_new(rados_ioctx_t io, int depth, int spare);
void cbq_free(cbq *q);
int cbq_eventfd(cbq *q);
char *cbq_oid(cbq *q, int slot);
/* Sends rados bench's allocation hint with every write: the object and
 * write sizes, sequential, append-only, immutable. Call before the first
 * submit. */
void cbq_hint(cbq *q, uint64_t object_size, uint64_t write_size);
/* Turns staging on until cutoff_ns (CLOCK_MONOTONIC); a queue without
 * spare slots never stages. */
void cbq_stage(cbq *q, int64_t cutoff_ns);
/* Turns staging off; staged ops come back unissued. */
void cbq_unstage(cbq *q);
/* Returns 0, -errno, or -EBUSY when depth ops are in flight and the
 * queue does not stage. */
int cbq_submit(cbq *q, int slot, int op, char *buf, size_t len, uint64_t off);
/* Hands back up to max finished ops without waiting: slot, bytes or
 * -errno or CBQ_NOT_ISSUED, and start and end times (start 0 when not
 * issued). */
int cbq_reap(cbq *q, int max, int *slots, int *rets, int64_t *start_ns, int64_t *end_ns);
int64_t cbq_now(void);

#ifdef __cplusplus
}
#endif

#endif
