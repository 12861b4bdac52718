/* commitq.c -- see commitq.h. */
#include "commitq.h"

void commitq_init(commitq_t *q, size_t max)
{
    q->head = q->tail = NULL;
    q->n = 0;
    q->max = max;
}

int commitq_push(commitq_t *q, commit_waiter_t *w, int64_t offset, commit_done_fn done, void *arg)
{
    if (q->n >= q->max)
        return -1;
    w->offset = offset;
    w->done = done;
    w->arg = arg;
    w->queue = q;
    /* After the last waiter that needs no more than w: the tail, except for
     * an idempotent producer's retry of a batch already in the log, which
     * waits for its original (lower) offsets. */
    commit_waiter_t *after = q->tail;
    while (after && after->offset > offset)
        after = after->prev;
    w->prev = after;
    w->next = after ? after->next : q->head;
    if (w->next)
        w->next->prev = w;
    else
        q->tail = w;
    if (after)
        after->next = w;
    else
        q->head = w;
    q->n++;
    return 0;
}

void commitq_remove(commit_waiter_t *w)
{
    commitq_t *q = w->queue;
    if (!q)
        return;
    if (w->prev)
        w->prev->next = w->next;
    else
        q->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        q->tail = w->prev;
    q->n--;
    w->queue = NULL;
    w->prev = w->next = NULL;
}

/* Unlinked before done runs, so done may free or requeue it. */
static void finish(commit_waiter_t *w, int16_t error)
{
    commitq_remove(w);
    w->done(w, error, w->arg);
}

void commitq_advance(commitq_t *q, int64_t hw, int16_t error)
{
    while (q->head && q->head->offset <= hw)
        finish(q->head, error);
}

void commitq_fail_all(commitq_t *q, int16_t error)
{
    while (q->head)
        finish(q->head, error);
}
