/* test_bytes.h -- a growable byte string for unit tests that build wire
 * frames by hand (record batches, compressed payloads): appends of raw
 * bytes, big-endian integers and Kafka's zigzag varints. Aborts when out of
 * memory; header-only, shared by the test files that need it. */
#ifndef KIPPER_TESTS_UNIT_TEST_BYTES_H
#define KIPPER_TESTS_UNIT_TEST_BYTES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/endian.h"
#include "base/varint.h"

typedef struct {
    uint8_t *p;
    size_t len, cap;
} bytes_t;

static inline void reserve(bytes_t *b, size_t n)
{
    if (b->cap - b->len >= n)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        abort();
    b->cap = cap;
}

static inline void put(bytes_t *b, const void *src, size_t n)
{
    reserve(b, n);
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
}

static inline void put_byte(bytes_t *b, uint8_t v)
{
    put(b, &v, 1);
}

static inline void put_fill(bytes_t *b, uint8_t v, size_t n)
{
    reserve(b, n);
    memset(b->p + b->len, v, n);
    b->len += n;
}

static inline void put_be32(bytes_t *b, uint32_t v)
{
    uint8_t x[4];
    be32_put(x, v);
    put(b, x, 4);
}

static inline void put_be64(bytes_t *b, uint64_t v)
{
    uint8_t x[8];
    be64_put(x, v);
    put(b, x, 8);
}

static inline void put_varint(bytes_t *b, int64_t v)
{
    uint8_t x[VARLONG_MAX];
    put(b, x, varlong_put(x, v));
}

static inline void bytes_free(bytes_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

#endif
