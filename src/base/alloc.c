/* alloc.c -- see alloc.h. */
#include "alloc.h"

#include "logging.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void alloc_fail(size_t want)
{
    log_error("out of memory allocating %zu bytes", want);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        alloc_fail(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        alloc_fail(SIZE_MAX);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        alloc_fail(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        alloc_fail(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}
