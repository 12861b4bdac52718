/* ratelimit.c -- see ratelimit.h. */
#include "ratelimit.h"

void ratelimit_init(ratelimit_t *rl, uint64_t interval_ms, unsigned burst)
{
    rl->interval_ms = interval_ms;
    rl->burst = burst ? burst : 1;
    rl->used = 0;
    rl->window_start_ms = 0;
    rl->suppressed = 0;
}

int ratelimit_allow(ratelimit_t *rl, uint64_t now_ms, uint64_t *suppressed)
{
    /* A new window starts with the first event after the old one ended,
     * so a quiet stretch never leaves a window half used. */
    if (rl->used == 0 || now_ms - rl->window_start_ms >= rl->interval_ms) {
        rl->window_start_ms = now_ms;
        rl->used = 0;
    }
    if (rl->used >= rl->burst) {
        rl->suppressed++;
        return 0;
    }
    rl->used++;
    if (suppressed)
        *suppressed = rl->suppressed;
    rl->suppressed = 0;
    return 1;
}
