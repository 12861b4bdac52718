/* rate_limit.c -- see rate_limit.h. */
#include "rate_limit.h"

/* The bucket holds a tenth of a second of the rate: enough for the grain of
 * the work limited (a fetch answer), little enough that the rate holds over
 * short stretches. Debt is capped at ten seconds of the rate, so a rate
 * lowered while much is owed does not stall for longer. */
#define BUCKET_MS 100
#define DEBT_MS 10000

int rate_limit_unlimited(const rate_limit_t *r)
{
    return r->rate <= 0 || r->rate >= RATE_LIMIT_NONE;
}

static void refill(rate_limit_t *r, uint64_t now_ms)
{
    if (now_ms <= r->last_ms)
        return;
    uint64_t elapsed = now_ms - r->last_ms;
    r->last_ms = now_ms;
    if (rate_limit_unlimited(r))
        return;
    int64_t cap = r->rate / (1000 / BUCKET_MS);
    /* rate < 2^50 and elapsed capped: no overflow. */
    int64_t ms = elapsed > (uint64_t)DEBT_MS + BUCKET_MS ? DEBT_MS + BUCKET_MS : (int64_t)elapsed;
    r->tokens += r->rate * ms / 1000;
    if (r->tokens > cap)
        r->tokens = cap;
}

void rate_limit_init(rate_limit_t *r, int64_t rate, uint64_t now_ms)
{
    r->rate = rate;
    r->tokens = 0;
    r->last_ms = now_ms;
}

void rate_limit_set_rate(rate_limit_t *r, int64_t rate, uint64_t now_ms)
{
    refill(r, now_ms);
    r->rate = rate;
    if (rate_limit_unlimited(r))
        r->tokens = 0;
}

int rate_limit_open(rate_limit_t *r, uint64_t now_ms)
{
    refill(r, now_ms);
    return rate_limit_unlimited(r) || r->tokens > 0;
}

void rate_limit_charge(rate_limit_t *r, int64_t bytes, uint64_t now_ms)
{
    refill(r, now_ms);
    if (rate_limit_unlimited(r) || bytes <= 0)
        return;
    int64_t floor = -(r->rate / 1000) * DEBT_MS;
    r->tokens = bytes > r->tokens - floor ? floor : r->tokens - bytes;
}

uint64_t rate_limit_open_at(rate_limit_t *r, uint64_t now_ms)
{
    if (rate_limit_open(r, now_ms))
        return now_ms;
    /* tokens <= 0: the time to earn -tokens + 1 bytes, rounded up. */
    int64_t owed = 1 - r->tokens;
    return now_ms + (uint64_t)((owed * 1000 + r->rate - 1) / r->rate);
}
