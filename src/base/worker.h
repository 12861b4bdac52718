/* worker.h -- one helper thread for slow work (fsync, blocking coordinator
 * calls) so the event loop never waits on it.
 *
 * A job runs on the worker thread, then its done callback runs on the loop
 * thread. Jobs run one at a time, in the order submitted. The queue is
 * bounded: a full queue refuses the job and the caller decides (retry on
 * the next tick, or fail the request). */
#ifndef KIPPER_BASE_WORKER_H
#define KIPPER_BASE_WORKER_H

#include "loop.h"

typedef struct worker worker_t;
typedef void (*worker_fn)(void *arg);

worker_t *worker_create(loop_t *loop, const char *name, int max_queued);
/* Runs the jobs still queued (and their done callbacks), then joins. */
void worker_destroy(worker_t *w);
/* 0, or -1 when the queue is full or memory is short. run may be NULL (done
 * only, after everything before it). */
int worker_submit(worker_t *w, worker_fn run, worker_fn done, void *arg);
int worker_queued(const worker_t *w);   /* loop thread: jobs not yet done */

#endif
