/* shared_bytes.c -- see shared_bytes.h. */
#include "shared_bytes.h"
#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>

struct shared_bytes {
    atomic_int refs;
    uint8_t *mem;
};

shared_bytes_t *shared_bytes_adopt(uint8_t *mem)
{
    shared_bytes_t *s = xmalloc(sizeof(*s));
    atomic_init(&s->refs, 1);
    s->mem = mem;
    return s;
}

shared_bytes_t *shared_bytes_hold(shared_bytes_t *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void shared_bytes_drop(shared_bytes_t *s)
{
    /* acq_rel: the other owner's reads of the bytes happen before the free. */
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) {
        free(s->mem);
        free(s);
    }
}
