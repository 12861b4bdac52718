/* buf.c -- see buf.h. */
#include "buf.h"

#include "alloc.h"

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
        alloc_fail(n);
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    b->data = xrealloc(b->data, cap);
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
