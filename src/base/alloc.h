/* alloc.h -- allocation that cannot fail, and the policy behind it.
 *
 * The policy, for every kipper process (as Redis's zmalloc): running out of
 * memory is fatal. xmalloc and friends log the size asked for and abort(), so
 * a caller never holds a half-built reply, record or table, and the process
 * restarts clean (the keeper and the broker recover from their disks).
 *
 * That is only sound because every size that reaches an allocation is bounded
 * before it: by configuration (jute.maxbuffer, socket.request.max.bytes,
 * message.max.bytes, group.max.size, ...), by the protocol, or by a budget.
 * So the rules for callers are:
 *  - Bound first. A size taken from the network or a file is checked against
 *    its limit before it is allocated; going over the limit is an error the
 *    caller answers (a Kafka or ZooKeeper error code, a refused file), never
 *    an abort. Budgets (the Kafka decode arena, decode limits) are such
 *    limits: exhausting one is not running out of memory.
 *  - Code that already degrades gracefully when malloc returns NULL on such a
 *    path (the keeper answering ZSYSTEMERROR, a table keeping its old bucket
 *    array) keeps doing so with plain malloc; these are for the rest.
 * A size of 0 asks for 1 byte, so NULL always means failure. */
#ifndef KIPPER_BASE_ALLOC_H
#define KIPPER_BASE_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);   /* n * size overflowing is out of memory too */
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Log that want bytes could not be had, then abort(). For callers whose
 * own arithmetic finds a size no allocator could satisfy. */
_Noreturn void alloc_fail(size_t want);

#endif
