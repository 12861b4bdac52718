/* byte_rate.h -- a byte rate held over time: a token bucket that may go
 * into debt. Work that would be limited asks whether it may go on
 * (byte_rate_open), does it, and is charged what it took, even past what
 * the bucket holds (a fetch answer is never cut in the middle of a batch):
 * the debt is paid back before the next one goes. Over any stretch longer
 * than the bucket (a tenth of a second of the rate), the bytes let through
 * stay within the rate. The clock is passed in; nothing here reads it.
 *
 * Ownership: plain struct, the caller's. Not thread-safe. */
#ifndef KIPPER_BASE_BYTE_RATE_H
#define KIPPER_BASE_BYTE_RATE_H

#include <stdint.h>

/* Rates at or above this (Kafka's default is Long.MAX_VALUE) mean unlimited. */
#define BYTE_RATE_NONE ((int64_t)1 << 50)

typedef struct {
    int64_t rate;       /* bytes per second; <= 0 or >= BYTE_RATE_NONE: unlimited */
    int64_t tokens;     /* bytes that may go now; negative: owed */
    uint64_t last_ms;   /* of the last refill */
} byte_rate_t;

/* Starts empty, so the first second carries no burst. */
void byte_rate_init(byte_rate_t *r, int64_t rate, uint64_t now_ms);
/* A new rate from now on (what is owed stays owed). */
void byte_rate_set_rate(byte_rate_t *r, int64_t rate, uint64_t now_ms);
int byte_rate_unlimited(const byte_rate_t *r);
/* 1 when work may go on now. */
int byte_rate_open(byte_rate_t *r, uint64_t now_ms);
/* bytes were let through. */
void byte_rate_charge(byte_rate_t *r, int64_t bytes, uint64_t now_ms);
/* When byte_rate_open will say 1 again (now_ms when it does now). */
uint64_t byte_rate_open_at(byte_rate_t *r, uint64_t now_ms);

#endif
