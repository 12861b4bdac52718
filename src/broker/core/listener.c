/* listener.c -- see listener.h.
 *
 * Limits. max.connections and max.connections.per.ip are Kafka's keys. A
 * connection over either is accepted and closed at once with a log line (at
 * most one every LOG_INTERVAL_MS per reason, counting the others), as
 * Kafka's per-IP quota closes it: the client learns at once, and the backlog
 * never fills with connections we will not serve. Kafka's default for both
 * is unlimited; kipper keeps that for max.connections.per.ip (clients behind
 * one NAT address are many), but not for max.connections: clients holding
 * every descriptor leave the broker unable to open a segment or queue a
 * fetch's file range, so by default they get three quarters of
 * RLIMIT_NOFILE, and the rest stays for the logs (three descriptors per
 * segment), the coordinator, replication links and fetch file ranges. At
 * start the soft limit is raised to the hard one, as Redis and Go do, since
 * Kafka's operators are told to raise it anyway.
 *
 * Descriptor exhaustion. When accept fails with EMFILE or ENFILE anyway (the
 * logs took them), the waiting connections are accepted on a spare
 * descriptor and closed (net_accept_shed), so their clients learn at once
 * and try another broker; if even that fails, the listener pauses as every
 * listener of kipper does (base/accept_backoff.h). Either way the level-
 * triggered loop does not spin, and the log says so once in a while. */
#define _GNU_SOURCE
#include "listener.h"
#include "conn.h"
#include "base/accept_backoff.h"
#include "base/alloc.h"
#include "base/hashmap.h"
#include "base/logging.h"
#include "base/net.h"
#include "base/ratelimit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define LOG_INTERVAL_MS 10000
#define NOFILE_RAISE_MAX (1u << 20)

typedef struct ip_slot {
    hmap_node_t node;
    int count;
    char ip[64];
} ip_slot_t;

struct listener {
    int fd;
    int spare;                 /* held for net_accept_shed */
    int max_conns, max_per_ip;
    hmap_t ips;                /* ip_slot_t by address */
    hmap_key_t key;
    accept_backoff_t ab;       /* watches fd; pauses it when even shedding fails */
    ratelimit_t log_total, log_per_ip, log_fds;
};

/* ---- the descriptor budget ---- */

/* The soft RLIMIT_NOFILE, raised to the hard limit when it can be. */
static long nofile_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 1024;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NOFILE_RAISE_MAX ? NOFILE_RAISE_MAX : rl.rlim_max;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        struct rlimit raised = {want, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl.rlim_cur = want;
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > NOFILE_RAISE_MAX ? (long)NOFILE_RAISE_MAX
                                                                          : (long)rl.rlim_cur;
}

static void settle_limits(broker_t *b, struct listener *l)
{
    long nofile = nofile_limit();
    long derived = nofile / 4 * 3 > 0 ? nofile / 4 * 3 : 1;
    l->max_conns = b->cfg.max_connections > 0 ? b->cfg.max_connections : (int)derived;
    l->max_per_ip = b->cfg.max_connections_per_ip;
    if (b->cfg.max_connections > derived)
        log_warn("max.connections=%d is more than three quarters of the descriptor limit (%ld): clients may take "
                 "the descriptors the logs need", b->cfg.max_connections, nofile);
    log_info("accepting at most %d connections (%s)%s", l->max_conns,
             b->cfg.max_connections > 0 ? "max.connections" : "three quarters of RLIMIT_NOFILE",
             l->max_per_ip < INT32_MAX ? ", fewer per address (max.connections.per.ip)" : "");
}

/* ---- per-address counts ---- */

static int ip_match(const hmap_node_t *n, const void *key)
{
    return strcmp(HMAP_ENTRY(n, ip_slot_t, node)->ip, key) == 0;
}

static ip_slot_t *ip_slot(struct listener *l, const char *ip, int create)
{
    uint64_t h = hmap_hash_bytes(&l->key, ip, strlen(ip));
    hmap_node_t *n = hmap_find(&l->ips, h, ip_match, ip);
    if (n || !create)
        return n ? HMAP_ENTRY(n, ip_slot_t, node) : NULL;
    ip_slot_t *s = xcalloc(1, sizeof(*s));
    snprintf(s->ip, sizeof(s->ip), "%s", ip);
    hmap_insert(&l->ips, &s->node, h);
    return s;
}

void listener_conn_closed(broker_t *b, conn_t *c)
{
    struct listener *l = b->listener;
    ip_slot_t *s = c->ip_slot;
    c->ip_slot = NULL;
    if (!l || !s || --s->count > 0)
        return;
    hmap_remove(&l->ips, &s->node);
    free(s);
}

/* ---- accepting ---- */

/* accept() failed for want of descriptors: the connections waiting are
 * accepted on the spare descriptor and closed. 0 when there was nothing
 * to shed that way (no spare). */
static int shed_waiting(broker_t *b, struct listener *l, int err)
{
    int shed = net_accept_shed(l->fd, &l->spare);
    uint64_t held;
    if (shed > 0 && ratelimit_allow(&l->log_fds, loop_now_ms(b->loop), &held))
        log_warn("cannot accept connections: %s (%d clients connected); closing the connections waiting "
                 "(%llu more times since the last line)", strerror(err), b->n_conns, (unsigned long long)held);
    return shed > 0;
}

/* 0 when the connection may stay; else it is refused with a log line. */
static int refuse_over_limit(broker_t *b, struct listener *l, const char *ip, int port, ip_slot_t **slot)
{
    uint64_t held;
    if (b->n_conns >= l->max_conns) {
        if (ratelimit_allow(&l->log_total, loop_now_ms(b->loop), &held))
            log_info("closing connection from %s:%d: max.connections (%d) reached (%llu more refused since the "
                     "last line)", ip, port, l->max_conns, (unsigned long long)held);
        return -1;
    }
    ip_slot_t *s = ip_slot(l, ip, 0);
    if (s && s->count >= l->max_per_ip) {
        if (ratelimit_allow(&l->log_per_ip, loop_now_ms(b->loop), &held))
            log_info("closing connection from %s:%d: the address has max.connections.per.ip (%d) connections "
                     "already (%llu more refused since the last line)", ip, port, l->max_per_ip,
                     (unsigned long long)held);
        return -1;
    }
    *slot = s ? s : ip_slot(l, ip, 1);
    return 0;
}

static void on_accept(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)events;
    broker_t *b = arg;
    struct listener *l = b->listener;
    for (;;) {
        char ip[64];
        int port = 0;
        int cfd = net_accept(fd, ip, sizeof(ip), &port);
        if (cfd < 0) {
            int e = errno;
            if ((e == EMFILE || e == ENFILE) && shed_waiting(b, l, e))
                return;
            if (accept_backoff_failed(&l->ab, e))
                return;
            continue;   /* that connection failed; others may wait */
        }
        accept_backoff_accepted(&l->ab);
        ip_slot_t *slot = NULL;
        if (refuse_over_limit(b, l, ip, port, &slot) < 0) {
            close(cfd);
            continue;
        }
        slot->count++;
        broker_conn_open(b, cfd, ip, port, slot);
    }
}

/* ---- start and stop ---- */

int listener_open(broker_t *b, char *err, size_t errlen)
{
    struct listener *l = xcalloc(1, sizeof(*l));
    b->listener = l;
    l->spare = -1;
    ratelimit_init(&l->log_total, LOG_INTERVAL_MS, 1);
    ratelimit_init(&l->log_per_ip, LOG_INTERVAL_MS, 1);
    ratelimit_init(&l->log_fds, LOG_INTERVAL_MS, 1);
    hmap_random_key(&l->key);
    const broker_endpoint_t *ep = &b->cfg.listener;
    l->fd = net_listen_tcp(ep->host, ep->port, 511, err, errlen);
    if (l->fd < 0)
        return -1;
    b->port = net_local_port(l->fd);
    settle_limits(b, l);
    l->spare = net_spare_fd();
    if (l->spare < 0) {
        snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int listener_accept_start(broker_t *b, char *err, size_t errlen)
{
    struct listener *l = b->listener;
    char name[64];
    snprintf(name, sizeof(name), "listener port %d", b->port);
    if (accept_backoff_start(&l->ab, b->loop, l->fd, on_accept, b, name) < 0) {
        snprintf(err, errlen, "cannot watch the listener: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void listener_stop_accepting(broker_t *b)
{
    struct listener *l = b->listener;
    if (!l || l->fd < 0)
        return;
    accept_backoff_stop(&l->ab);
    close(l->fd);
    l->fd = -1;
    if (l->spare >= 0)
        close(l->spare);
    l->spare = -1;
}

void listener_close(broker_t *b)
{
    struct listener *l = b->listener;
    if (!l)
        return;
    listener_stop_accepting(b);
    hmap_node_t *n;
    for (hmap_iter_t it = hmap_iter(&l->ips); (n = hmap_next(&it));) {
        hmap_remove(&l->ips, n);
        free(HMAP_ENTRY(n, ip_slot_t, node));
    }
    hmap_destroy(&l->ips);
    free(l);
    b->listener = NULL;
}
