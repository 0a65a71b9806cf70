/* A librados aio queue whose completions are timestamped in the callback
 * and handed back in batches, so one Go goroutine keeps a whole queue
 * depth in flight without an OS thread per op. A C interface over C++
 * (aio.cc), for writes without a copy. */
#ifndef CEPHBENCH_RADOS_AIO_H
#define CEPHBENCH_RADOS_AIO_H

#include <stddef.h>
#include <stdint.h>
#include <rados/librados.h>

#define CBQ_OID_MAX 256

/* cbq_submit's ops */
#define CBQ_READ 0
#define CBQ_WRITE 1
#define CBQ_REMOVE 2

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cbq cbq;

cbq *cbq_new(rados_ioctx_t io, int depth);
void cbq_free(cbq *q);
int cbq_eventfd(cbq *q);
char *cbq_oid(cbq *q, int slot);
int cbq_submit(cbq *q, int slot, int op, char *buf, size_t len, uint64_t off);
int cbq_reap(cbq *q, int max, int *slots, int *rets, int64_t *end_ns);
int64_t cbq_now(void);

#ifdef __cplusplus
}
#endif

#endif
