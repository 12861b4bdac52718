/* ratelimit.h -- at most a few lines per interval for a log line that an
 * outsider can trigger at will (failed accepts, refused or evicted
 * connections): the first ones are written at once, the rest are counted
 * and the count is reported by the next line allowed. No clock of its own:
 * the caller passes its loop's time. */
#ifndef KIPPER_BASE_RATELIMIT_H
#define KIPPER_BASE_RATELIMIT_H

#include <stdint.h>

typedef struct {
    uint64_t interval_ms;
    unsigned burst;            /* lines allowed per interval */
    unsigned used;             /* lines written in the current interval */
    uint64_t window_start_ms;
    uint64_t suppressed;       /* events not written since the last line */
} ratelimit_t;

void ratelimit_init(ratelimit_t *rl, uint64_t interval_ms, unsigned burst);

/* An event at now_ms. 1: write its line, and *suppressed (may be NULL) is
 * how many events were not written since the last line (then reset).
 * 0: do not write it; it is counted. */
int ratelimit_allow(ratelimit_t *rl, uint64_t now_ms, uint64_t *suppressed);

#endif
