/* clock.c -- see clock.h. */
#include "clock.h"

#include <time.h>

static uint64_t to_ms(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000u + (uint64_t)ts->tv_nsec / 1000000u;
}

uint64_t clock_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return to_ms(&ts);
}

uint64_t clock_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return to_ms(&ts);
}
