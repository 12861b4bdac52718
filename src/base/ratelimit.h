/* ratelimit.h -- at most one log line per interval for a condition a client
 * can repeat at will (a refused connection, accept() out of descriptors), so
 * the log says what happens without becoming the attack: the first line goes
 * out at once, the ones inside the interval are counted, and the next line
 * says how many were held back. The caller passes the time (loop_now_ms). */
#ifndef KIPPER_BASE_RATELIMIT_H
#define KIPPER_BASE_RATELIMIT_H

#include <stdint.h>

typedef struct {
    uint64_t next_ms;      /* no line before this (0: at once) */
    uint64_t held_back;    /* lines not written since the last one */
} ratelimit_t;

/* 1 if a line may be written at now_ms (the next one then waits interval_ms),
 * with *held_back set to how many were suppressed since the last one; else 0
 * and this one is counted. */
static inline int ratelimit_allow(ratelimit_t *rl, uint64_t now_ms, uint64_t interval_ms, uint64_t *held_back)
{
    if (rl->next_ms && now_ms < rl->next_ms) {
        rl->held_back++;
        return 0;
    }
    *held_back = rl->held_back;
    rl->held_back = 0;
    rl->next_ms = now_ms + interval_ms;
    if (rl->next_ms == 0)
        rl->next_ms = 1;
    return 1;
}

#endif
