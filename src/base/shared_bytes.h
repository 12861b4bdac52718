/* shared_bytes.h -- one malloc'd block of bytes with a reference count, for
 * two owners on different threads: a large request frame kept by the
 * waiting request (loop thread) and read by the check of its records (the
 * helper thread), so neither needs a copy of it. The last to let go frees
 * it. hold and drop may run on any thread; the bytes themselves are the
 * owners' to share (one writes only once the other is done reading). */
#ifndef KIPPER_BASE_SHARED_BYTES_H
#define KIPPER_BASE_SHARED_BYTES_H

#include <stdint.h>

typedef struct shared_bytes shared_bytes_t;

/* Takes over mem (from malloc; freed with the last reference). One
 * reference, the caller's. */
shared_bytes_t *shared_bytes_adopt(uint8_t *mem);
shared_bytes_t *shared_bytes_hold(shared_bytes_t *s);   /* s, one more reference */
void shared_bytes_drop(shared_bytes_t *s);              /* NULL is ignored */

#endif
