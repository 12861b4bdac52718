/* resolver.c -- see resolver.h. The names kept are a small array searched
 * in full: a broker knows a handful of other brokers. */
#include "resolver.h"

#include "alloc.h"
#include "net.h"
#include "worker.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_MAX 256

typedef struct {
    char host[HOST_MAX];         /* "" when the slot is free */
    int known;                   /* a lookup has answered (ok or failed) */
    int ok;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char err[200];
    uint64_t answered_ms;        /* loop time of the answer */
    uint64_t asked_ms;           /* loop time of the last resolver_lookup */
    int in_flight;
} name_t;

struct resolver {
    loop_t *loop;
    worker_t *thread;
    resolver_fn fn;
    name_t names[RESOLVER_MAX_NAMES];
};

/* One lookup, from the loop to the thread and back. */
typedef struct {
    resolver_t *r;
    char host[HOST_MAX];
    int rc;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char err[200];
} lookup_t;

static int getaddrinfo_lookup(const char *host, struct sockaddr_storage *addr, socklen_t *addrlen, char *err,
                              size_t errlen)
{
    return net_resolve(host, 0, addr, addrlen, err, errlen);
}

resolver_t *resolver_create(loop_t *loop, resolver_fn fn)
{
    resolver_t *r = xcalloc(1, sizeof(*r));
    r->loop = loop;
    r->fn = fn ? fn : getaddrinfo_lookup;
    r->thread = worker_create(loop, "resolver", RESOLVER_MAX_NAMES);
    if (!r->thread) {
        free(r);
        return NULL;
    }
    return r;
}

void resolver_destroy(resolver_t *r)
{
    if (!r)
        return;
    worker_destroy(r->thread);   /* the lookups left run, and their done callbacks */
    free(r);
}

static void set_port(struct sockaddr_storage *addr, int port)
{
    if (addr->ss_family == AF_INET)
        ((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
    else if (addr->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
}

static name_t *find(resolver_t *r, const char *host)
{
    for (int i = 0; i < RESOLVER_MAX_NAMES; i++)
        if (r->names[i].host[0] && strcmp(r->names[i].host, host) == 0)
            return &r->names[i];
    return NULL;
}

/* A slot for host: a free one, else the one asked about longest ago that
 * no lookup is filling; NULL when every one is being filled. */
static name_t *take_slot(resolver_t *r, const char *host)
{
    name_t *pick = NULL;
    for (int i = 0; i < RESOLVER_MAX_NAMES; i++) {
        name_t *n = &r->names[i];
        if (!n->host[0]) {
            pick = n;
            break;
        }
        if (!n->in_flight && (!pick || n->asked_ms < pick->asked_ms))
            pick = n;
    }
    if (pick) {
        memset(pick, 0, sizeof(*pick));
        snprintf(pick->host, sizeof(pick->host), "%s", host);
    }
    return pick;
}

static void lookup_run(void *arg)
{
    lookup_t *q = arg;
    q->rc = q->r->fn(q->host, &q->addr, &q->addrlen, q->err, sizeof(q->err));
}

static void lookup_done(void *arg)
{
    lookup_t *q = arg;
    name_t *n = find(q->r, q->host);
    if (n) {
        n->in_flight = 0;
        n->known = 1;
        n->ok = q->rc == 0;
        n->answered_ms = loop_now_ms(q->r->loop);
        if (n->ok) {
            n->addr = q->addr;
            n->addrlen = q->addrlen;
        } else {
            snprintf(n->err, sizeof(n->err), "%s", q->err);
        }
    }
    free(q);
}

static void start_lookup(resolver_t *r, name_t *n)
{
    lookup_t *q = xcalloc(1, sizeof(*q));
    q->r = r;
    snprintf(q->host, sizeof(q->host), "%s", n->host);
    if (worker_submit(r->thread, lookup_run, lookup_done, q) < 0) {
        free(q);   /* the thread's queue is full: the next ask tries again */
        return;
    }
    n->in_flight = 1;
}

int resolver_lookup(resolver_t *r, const char *host, int port, struct sockaddr_storage *addr, socklen_t *addrlen,
                    char *err, size_t errlen)
{
    if (net_resolve_numeric(host, port, addr, addrlen) == 0)
        return RESOLVER_OK;
    if (strlen(host) >= HOST_MAX || !host[0]) {
        snprintf(err, errlen, "cannot resolve '%.64s': not a host name", host);
        return RESOLVER_FAILED;
    }
    uint64_t now = loop_now_ms(r->loop);
    name_t *n = find(r, host);
    if (!n && !(n = take_slot(r, host))) {
        snprintf(err, errlen, "cannot resolve %s now: %d lookups under way", host, RESOLVER_MAX_NAMES);
        return RESOLVER_FAILED;
    }
    n->asked_ms = now;
    int stale = n->known && now - n->answered_ms >= (n->ok ? RESOLVER_FRESH_MS : RESOLVER_RETRY_MS);
    if (!n->in_flight && (!n->known || stale))
        start_lookup(r, n);
    if (n->known && n->ok) {
        *addr = n->addr;
        *addrlen = n->addrlen;
        set_port(addr, port);
        return RESOLVER_OK;
    }
    if (n->known && !stale) {
        snprintf(err, errlen, "%s", n->err);
        return RESOLVER_FAILED;
    }
    return RESOLVER_PENDING;
}

int resolver_connect(resolver_t *r, const char *host, int port, int *connected, char *err, size_t errlen)
{
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int found = resolver_lookup(r, host, port, &addr, &addrlen, err, errlen);
    if (found != RESOLVER_OK)
        return found == RESOLVER_PENDING ? RESOLVER_CONNECT_PENDING : -1;
    int fd = net_connect_addr((struct sockaddr *)&addr, addrlen, connected);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %.255s:%d: %s", host, port, strerror(errno));
    return fd;
}
