/* request_memory.h -- queued.max.request.bytes, Kafka's memory pool for
 * requests: the bytes of large frames being read and of requests kept while
 * they wait are counted, and once the count reaches the limit no further
 * large frame is read (its connection waits, unread) until some are
 * answered. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_REQUEST_MEMORY_H
#define KIPPER_BROKER_CORE_REQUEST_MEMORY_H

#include <stddef.h>

#include "broker_impl.h"

/* A frame of size bytes has begun to arrive on c: 1 if it may be read now
 * (it is counted until reqmem_frame_done), 0 if c must wait. Frames up to
 * REQMEM_SMALL are not counted: a connection's input buffer holds that
 * much anyway, and small requests (heartbeats, fetches, metadata) keep
 * flowing while large ones wait. */
#define REQMEM_SMALL 65536
/* At start, before any connection. */
void reqmem_init(broker_t *b);
int reqmem_admit_frame(broker_t *b, conn_t *c, size_t size);
/* c's counted frame was handled (or c closed). */
void reqmem_frame_done(broker_t *b, conn_t *c);
/* A request kept while it waits holds bytes (its frame copy and decode)
 * until reqmem_release. Always granted: its frame was read already. */
void reqmem_hold(broker_t *b, broker_request_t *r, size_t bytes);
void reqmem_release(broker_t *b, broker_request_t *r);
/* c is closed: whatever it held or waited for is given up. */
void reqmem_conn_closed(broker_t *b, conn_t *c);
/* Memory was given back while connections wait: 1 once (the caller then
 * retries the waiting connections with reqmem_retry). */
int reqmem_take_freed(broker_t *b);
/* Whether c waits for memory and may try again now; clears its wait. */
int reqmem_retry(broker_t *b, conn_t *c);

#endif
