/* resolver.h -- host names turned into addresses off the event loop, for
 * the connections a server's loop opens itself (a broker's replica fetcher
 * to its leaders). getaddrinfo may wait seconds on a slow DNS server; the
 * loop must not.
 *
 * A numeric address is answered at once. A name is looked up on the
 * resolver's helper thread and kept: resolver_lookup answers from what is
 * kept, or starts a lookup and says RESOLVER_PENDING, and the caller asks
 * again on its next attempt (its retry timer). An answer is used for
 * RESOLVER_FRESH_MS; after that it is still used while a new lookup runs,
 * so a name that moves is followed without a stall. A failed lookup is
 * answered as failed for RESOLVER_RETRY_MS before it is tried again, so a
 * caller retrying quickly does not flood the DNS server. At most
 * RESOLVER_MAX_NAMES names are kept (the one asked about longest ago goes
 * first). Loop thread only, except the lookups themselves. */
#ifndef KIPPER_BASE_RESOLVER_H
#define KIPPER_BASE_RESOLVER_H

#include <stddef.h>
#include <sys/socket.h>

#include "loop.h"

#define RESOLVER_FRESH_MS 60000
#define RESOLVER_RETRY_MS 1000
#define RESOLVER_MAX_NAMES 64
/* How soon a caller told RESOLVER_PENDING should ask again. */
#define RESOLVER_POLL_MS 20

enum { RESOLVER_FAILED = -1, RESOLVER_OK = 0, RESOLVER_PENDING = 1 };

typedef struct resolver resolver_t;

/* The lookup a resolver runs on its thread: 0 with the host's first address
 * (any port), or -1 with err. Tests pass their own; NULL is getaddrinfo
 * (net_resolve). */
typedef int (*resolver_fn)(const char *host, struct sockaddr_storage *addr, socklen_t *addrlen, char *err,
                           size_t errlen);

resolver_t *resolver_create(loop_t *loop, resolver_fn fn);   /* NULL if its thread cannot start */
/* Waits for a lookup under way (a thread cannot be cancelled in getaddrinfo). */
void resolver_destroy(resolver_t *r);

/* host:port as an address: RESOLVER_OK with *addr, RESOLVER_PENDING (a
 * lookup is under way: ask again later), or RESOLVER_FAILED with err. */
int resolver_lookup(resolver_t *r, const char *host, int port, struct sockaddr_storage *addr, socklen_t *addrlen,
                    char *err, size_t errlen);

/* resolver_lookup, then net_connect_addr (net.h): the connecting descriptor
 * (*connected as there), RESOLVER_CONNECT_PENDING while the name is looked
 * up (dial again later), or -1 with err. net_connect_tcp without the wait. */
#define RESOLVER_CONNECT_PENDING (-2)
int resolver_connect(resolver_t *r, const char *host, int port, int *connected, char *err, size_t errlen);

#endif
