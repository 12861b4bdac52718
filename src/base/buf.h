/* buf.h -- a growable byte buffer with a read cursor.
 * Appends go at len; consumers advance pos; the consumed prefix is reclaimed
 * lazily so a socket's output queue never copies per write. */
#ifndef KIPPER_BASE_BUF_H
#define KIPPER_BASE_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t pos;   /* first unread byte */
    size_t len;   /* end of written bytes */
    size_t cap;
} buf_t;

void buf_init(buf_t *b);
void buf_free(buf_t *b);
/* Make room for n more bytes after len. Running out of memory is fatal
 * (base/alloc.h), so these return 0; the int is kept for callers
 * that chain results. */
int buf_reserve(buf_t *b, size_t n);
int buf_append(buf_t *b, const void *p, size_t n);
static inline size_t buf_unread(const buf_t *b) { return b->len - b->pos; }
static inline uint8_t *buf_read_ptr(const buf_t *b) { return b->data + b->pos; }
/* Mark n unread bytes consumed; compacts when the buffer is drained or mostly consumed. */
void buf_consume(buf_t *b, size_t n);
void buf_clear(buf_t *b);

#endif
