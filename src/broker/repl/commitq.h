/* commitq.h -- the commitQ (docs/replication.md): the produce requests
 * (acks=all) of one partition waiting for the high watermark to pass what
 * they appended.
 *
 * A waiter is embedded in the request's own state, so queueing allocates
 * nothing; the queue only links them. It is kept in offset order (appends
 * come in offset order; a retried batch already in the log goes in at its
 * original place), so a HW advance completes a prefix. Nothing here blocks or
 * wakes anyone: the done callback records the outcome, and the caller wakes
 * the request later from its loop (never from inside the callback's caller,
 * which may be another request's handler).
 *
 * Bounded: at most max waiters (a request beyond it is refused before the
 * append). In practice each connection has at most one request waiting
 * (Kafka answers a connection's requests in order), so the bound is the
 * number of producer connections. */
#ifndef KIPPER_BROKER_REPL_COMMITQ_H
#define KIPPER_BROKER_REPL_COMMITQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct commitq commitq_t;
typedef struct commit_waiter commit_waiter_t;

/* Called once per waiter when it leaves the queue with its outcome (0, or a
 * Kafka error code). The waiter may be reused or freed from here on. */
typedef void (*commit_done_fn)(commit_waiter_t *w, int16_t error, void *arg);

struct commit_waiter {
    int64_t offset;           /* the HW must reach this: the last appended offset + 1 */
    commit_done_fn done;
    void *arg;
    commitq_t *queue;         /* NULL when not queued */
    commit_waiter_t *prev, *next;
};

struct commitq {
    commit_waiter_t *head, *tail;
    size_t n, max;
};

void commitq_init(commitq_t *q, size_t max);
/* -1 when the queue is full. */
int commitq_push(commitq_t *q, commit_waiter_t *w, int64_t offset, commit_done_fn done, void *arg);
/* The HW reached hw: every waiter at or below it leaves with error (0 when
 * the ISR is big enough, NOT_ENOUGH_REPLICAS_AFTER_APPEND when it shrank
 * below min.insync.replicas meanwhile). */
void commitq_advance(commitq_t *q, int64_t hw, int16_t error);
/* Every waiter leaves with error (leadership lost: NOT_LEADER_OR_FOLLOWER). */
void commitq_fail_all(commitq_t *q, int16_t error);
/* Takes w out without calling done (its request timed out or went away).
 * Safe when w is not queued. */
void commitq_remove(commit_waiter_t *w);
static inline size_t commitq_len(const commitq_t *q) { return q->n; }

#endif
