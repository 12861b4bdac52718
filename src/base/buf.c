/* buf.c -- see buf.h. */
#include "buf.h"

#include "logging.h"

#include <stdlib.h>
#include <string.h>

void buf_init(buf_t *b)
{
    memset(b, 0, sizeof(*b));
}

void buf_free(buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* Out of memory is fatal, as in Redis: a half-built reply or record is worse
 * than a clean crash, and every size that reaches a buffer is bounded first. */
static void out_of_memory(size_t want)
{
    log_error("out of memory allocating %zu bytes for a buffer", want);
    abort();
}

int buf_reserve(buf_t *b, size_t n)
{
    if (b->cap - b->len >= n)
        return 0;
    if (b->pos > 0) {   /* reclaim the consumed prefix before growing */
        memmove(b->data, b->data + b->pos, b->len - b->pos);
        b->len -= b->pos;
        b->pos = 0;
        if (b->cap - b->len >= n)
            return 0;
    }
    if (n > SIZE_MAX / 2 - b->len)
        out_of_memory(n);
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d)
        out_of_memory(cap);
    b->data = d;
    b->cap = cap;
    return 0;
}

int buf_append(buf_t *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void buf_consume(buf_t *b, size_t n)
{
    b->pos += n;
    if (b->pos >= b->len) {
        b->pos = b->len = 0;
    } else if (b->pos > 65536 && b->pos * 2 > b->len) {
        memmove(b->data, b->data + b->pos, b->len - b->pos);
        b->len -= b->pos;
        b->pos = 0;
    }
}

void buf_clear(buf_t *b)
{
    b->pos = b->len = 0;
}
