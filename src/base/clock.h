/* clock.h -- the two clocks kipper reads.
 *
 * Monotonic time measures intervals (timeouts, deadlines, session expiry):
 * it never jumps when the wall clock is set. Wall time is what goes into
 * data other programs read (znode ctime/mtime, Kafka timestamps, file
 * names). An event loop caches the monotonic reading once per iteration
 * (loop_now_ms); these read the clock itself. */
#ifndef KIPPER_BASE_CLOCK_H
#define KIPPER_BASE_CLOCK_H

#include <stdint.h>

/* Milliseconds of CLOCK_MONOTONIC (since an arbitrary start). */
uint64_t clock_mono_ms(void);
/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
uint64_t clock_wall_ms(void);

#endif
