/* loop.h -- the one event loop of a kipper process.
 *
 * Level-triggered epoll for sockets, a binary heap of one-shot timers and a
 * signalfd for SIGINT/SIGTERM. Everything a process owns is reached from the
 * callbacks of its single loop; nothing here is thread-safe (helper threads
 * hand work back through a mailbox, mailbox.h). */
#ifndef KIPPER_BASE_LOOP_H
#define KIPPER_BASE_LOOP_H

#include <stdint.h>

typedef struct loop loop_t;
typedef struct loop_timer loop_timer_t;

enum { LOOP_READABLE = 1u, LOOP_WRITABLE = 2u };

typedef void (*loop_io_fn)(loop_t *loop, int fd, unsigned events, void *arg);
typedef void (*loop_timer_fn)(loop_t *loop, void *arg);
typedef void (*loop_signal_fn)(loop_t *loop, int signo, void *arg);

loop_t *loop_create(void);
void loop_destroy(loop_t *loop);

/* Start or change watching fd for the given LOOP_* events. 0 on success. */
int loop_watch(loop_t *loop, int fd, unsigned events, loop_io_fn fn, void *arg);
/* Stop watching fd (before it is closed). Safe inside any callback. */
void loop_unwatch(loop_t *loop, int fd);

/* One-shot timer after delay_ms. The handle belongs to the loop: it is freed
 * after the callback returns or when cancelled, so drop your copy then. */
loop_timer_t *loop_timer_add(loop_t *loop, uint64_t delay_ms, loop_timer_fn fn, void *arg);
void loop_timer_cancel(loop_t *loop, loop_timer_t *timer);

/* Deliver SIGINT and SIGTERM to fn from the loop instead of killing the process. */
int loop_on_shutdown_signals(loop_t *loop, loop_signal_fn fn, void *arg);
/* A SIGINT or SIGTERM arrived and waits for the loop (they are blocked once
 * loop_on_shutdown_signals ran): start-up code that must block before the
 * loop runs checks this to give up promptly. */
int loop_shutdown_pending(void);

/* Called once per iteration after events and timers, before waiting again:
 * the place to flush output that callbacks queued (as Redis's beforeSleep). */
void loop_set_before_sleep(loop_t *loop, void (*fn)(loop_t *loop, void *arg), void *arg);

/* Monotonic milliseconds (clock_mono_ms), read once per loop iteration so
 * every callback of one iteration sees the same time. Wall time: clock.h. */
uint64_t loop_now_ms(loop_t *loop);

void loop_run(loop_t *loop);   /* until loop_stop() */
void loop_stop(loop_t *loop);

#endif
