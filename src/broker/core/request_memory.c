/* request_memory.c -- see request_memory.h.
 *
 * Kafka's SimpleMemoryPool, non-strict: a frame is admitted while the count
 * is below the limit, even when it takes the count past it, so a frame of
 * any size up to socket.request.max.bytes gets through once memory frees;
 * the limit is overshot by at most one frame. A connection refused memory is
 * simply not read (its client's TCP window closes) until an answered request
 * gives memory back; nothing is dropped. */
#include "request_memory.h"
#include "base/logging.h"

#define LOG_INTERVAL_MS 10000

static int pool_full(const broker_t *b)
{
    int64_t max = b->cfg.queued_max_request_bytes;
    return max > 0 && b->queued_bytes >= (uint64_t)max;
}

static void pool_give(broker_t *b, size_t n)
{
    b->queued_bytes -= n;
    if (b->mem_waiters > 0)
        b->mem_freed = 1;
}

void reqmem_init(broker_t *b)
{
    ratelimit_init(&b->mem_log, LOG_INTERVAL_MS, 1);
}

int reqmem_admit_frame(broker_t *b, conn_t *c, size_t size)
{
    if (size <= REQMEM_SMALL || c->mem_reserved)
        return 1;
    if (pool_full(b)) {
        if (!c->mem_wait) {
            c->mem_wait = 1;
            b->mem_waiters++;
            uint64_t held;
            if (ratelimit_allow(&b->mem_log, loop_now_ms(b->loop), &held))
                log_info("queued.max.request.bytes (%lld) reached: a request of %zu bytes from %s:%d waits until "
                         "requests in progress are answered (%d connections waiting; %llu more since the last line)",
                         (long long)b->cfg.queued_max_request_bytes, size, c->ip, c->port, b->mem_waiters,
                         (unsigned long long)held);
        }
        return 0;
    }
    c->mem_reserved = size;
    b->queued_bytes += size;
    return 1;
}

void reqmem_frame_done(broker_t *b, conn_t *c)
{
    if (!c->mem_reserved)
        return;
    pool_give(b, c->mem_reserved);
    c->mem_reserved = 0;
}

void reqmem_hold(broker_t *b, broker_request_t *r, size_t bytes)
{
    r->mem_held = bytes;
    b->queued_bytes += bytes;
}

void reqmem_release(broker_t *b, broker_request_t *r)
{
    if (!r->mem_held)
        return;
    pool_give(b, r->mem_held);
    r->mem_held = 0;
}

void reqmem_conn_closed(broker_t *b, conn_t *c)
{
    reqmem_frame_done(b, c);
    if (c->mem_wait) {
        c->mem_wait = 0;
        b->mem_waiters--;
    }
}

int reqmem_take_freed(broker_t *b)
{
    int freed = b->mem_freed;
    b->mem_freed = 0;
    return freed && b->mem_waiters > 0;
}

int reqmem_retry(broker_t *b, conn_t *c)
{
    if (!c->mem_wait || pool_full(b))
        return 0;
    c->mem_wait = 0;
    b->mem_waiters--;
    return 1;
}
