/* byte_rate.c -- see byte_rate.h. */
#include "byte_rate.h"

/* The bucket holds a tenth of a second of the rate: enough for the grain of
 * the work limited (a fetch answer), little enough that the rate holds over
 * short stretches. Debt is capped at ten seconds of the rate, so a rate
 * lowered while much is owed does not stall for longer. */
#define BUCKET_MS 100
#define DEBT_MS 10000

int byte_rate_unlimited(const byte_rate_t *r)
{
    return r->rate <= 0 || r->rate >= BYTE_RATE_NONE;
}

static void refill(byte_rate_t *r, uint64_t now_ms)
{
    if (now_ms <= r->last_ms)
        return;
    uint64_t elapsed = now_ms - r->last_ms;
    r->last_ms = now_ms;
    if (byte_rate_unlimited(r))
        return;
    int64_t cap = r->rate / (1000 / BUCKET_MS);
    /* rate < 2^50 and elapsed capped: no overflow. */
    int64_t ms = elapsed > (uint64_t)DEBT_MS + BUCKET_MS ? DEBT_MS + BUCKET_MS : (int64_t)elapsed;
    r->tokens += r->rate * ms / 1000;
    if (r->tokens > cap)
        r->tokens = cap;
}

void byte_rate_init(byte_rate_t *r, int64_t rate, uint64_t now_ms)
{
    r->rate = rate;
    r->tokens = 0;
    r->last_ms = now_ms;
}

void byte_rate_set_rate(byte_rate_t *r, int64_t rate, uint64_t now_ms)
{
    refill(r, now_ms);
    r->rate = rate;
    if (byte_rate_unlimited(r))
        r->tokens = 0;
}

int byte_rate_open(byte_rate_t *r, uint64_t now_ms)
{
    refill(r, now_ms);
    return byte_rate_unlimited(r) || r->tokens > 0;
}

void byte_rate_charge(byte_rate_t *r, int64_t bytes, uint64_t now_ms)
{
    refill(r, now_ms);
    if (byte_rate_unlimited(r) || bytes <= 0)
        return;
    int64_t floor = -(r->rate / 1000) * DEBT_MS;
    r->tokens = bytes > r->tokens - floor ? floor : r->tokens - bytes;
}

uint64_t byte_rate_open_at(byte_rate_t *r, uint64_t now_ms)
{
    if (byte_rate_open(r, now_ms))
        return now_ms;
    /* tokens <= 0: the time to earn -tokens + 1 bytes, rounded up. */
    int64_t owed = 1 - r->tokens;
    return now_ms + (uint64_t)((owed * 1000 + r->rate - 1) / r->rate);
}
