/* accept_backoff.h -- what a listening socket does when accept() fails.
 *
 * With a level-triggered loop a listener whose accept() fails for want of
 * descriptors (EMFILE, ENFILE) or kernel memory (ENOBUFS, ENOMEM) is
 * reported readable again at once: the process spins and logs a line per
 * try. Instead, as nginx does, it stops watching the listener for a pause
 * (10 ms, doubling while the failures last, at most 500 ms) and logs at
 * most a line a second with the count of failures in between. Waiting
 * clients stay in the kernel's backlog and are served once descriptors
 * are free again; nothing is accepted only to be closed.
 *
 * Used by every listener of a process: the owner starts it in place of
 * loop_watch, reports each failed accept and each success, and stops it
 * before closing the socket. */
#ifndef KIPPER_BASE_ACCEPT_BACKOFF_H
#define KIPPER_BASE_ACCEPT_BACKOFF_H

#include <stdint.h>

#include "loop.h"
#include "ratelimit.h"

#define ACCEPT_BACKOFF_MIN_MS 10
#define ACCEPT_BACKOFF_MAX_MS 500

typedef struct {
    loop_t *loop;
    int fd;                   /* the listening socket */
    loop_io_fn on_accept;     /* its handler, watched for LOOP_READABLE */
    void *arg;
    char name[64];            /* what the log calls it: "client port 2181" */
    loop_timer_t *timer;      /* set while paused */
    uint64_t pause_ms;        /* the next pause */
    ratelimit_t log;
} accept_backoff_t;

/* Watch fd for connections with on_accept(loop, fd, events, arg). 0, or
 * -1 if the loop refuses the socket. */
int accept_backoff_start(accept_backoff_t *ab, loop_t *loop, int fd, loop_io_fn on_accept, void *arg,
                         const char *name);

/* An accept() on the listener failed with err. 1: stop accepting for now
 * (nothing waits, or the listener is paused); 0: only that connection
 * failed (EINTR, ECONNABORTED, a network error): try the next one. */
int accept_backoff_failed(accept_backoff_t *ab, int err);

/* An accept() succeeded: the next pause starts short again. */
void accept_backoff_accepted(accept_backoff_t *ab);

/* Is the listener paused now? */
int accept_backoff_paused(const accept_backoff_t *ab);

/* Stop watching and cancel a pause (before the socket is closed). */
void accept_backoff_stop(accept_backoff_t *ab);

#endif
