/* broker.c -- `kipper broker server.properties`: one event loop that owns the
 * listener and every client connection, frames Kafka requests (a 4-byte size,
 * bounded by socket.request.max.bytes), decodes them with the table-driven
 * codec and answers ApiVersions and Metadata.
 *
 * A connection that sends something we cannot or will not answer is closed
 * with a log line saying why, as Kafka's SocketServer does; nothing a client
 * sends can stop the broker from serving the others. */
#define _GNU_SOURCE
#include "broker.h"
#include "broker_config.h"
#include "broker_impl.h"
#include "../base/log.h"
#include "../base/loop.h"
#include "../base/net.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536
/* A connection with this much unsent output is not read until it drains, so
 * a client that only writes cannot grow our memory without bound. */
#define OUT_HIGH_WATER (4u << 20)

void broker_conn_close(broker_t *b, conn_t *c, const char *why)
{
    if (c->closed)
        return;
    if (why)
        log_info("closing connection from %s:%d: %s", c->ip, c->port, why);
    else
        log_debug("connection from %s:%d closed", c->ip, c->port);
    loop_unwatch(b->loop, c->fd);
    close(c->fd);
    c->closed = 1;
    /* Freed in the before-sleep hook, so no callback later in this batch
     * can see freed memory. */
    b->n_conns--;
}

/* Readable unless output is backed up; writable while output is pending. */
static void conn_rewatch(broker_t *b, conn_t *c);

static void conn_flush(broker_t *b, conn_t *c)
{
    if (c->closed || buf_unread(&c->out) == 0)
        return;
    if (net_write_buffer(c->fd, &c->out) < 0) {
        broker_conn_close(b, c, strerror(errno));
        return;
    }
    conn_rewatch(b, c);
}

/* Answers every whole frame in c->in; -1 when the connection was closed. */
static int conn_process(broker_t *b, conn_t *c)
{
    while (!c->closed && buf_unread(&c->in) >= 4 && buf_unread(&c->out) < OUT_HIGH_WATER) {
        const uint8_t *p = buf_read_ptr(&c->in);
        int32_t size = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
        if (size < 0 || size > b->cfg.socket_request_max_bytes) {
            char why[160];
            snprintf(why, sizeof(why), "request size %d is outside 0..%d (socket.request.max.bytes)", size,
                     b->cfg.socket_request_max_bytes);
            broker_conn_close(b, c, why);
            return -1;
        }
        if (buf_unread(&c->in) < 4 + (size_t)size) {
            buf_reserve(&c->in, 4 + (size_t)size - buf_unread(&c->in));
            return 0;
        }
        if (broker_handle_frame(b, c, p + 4, (size_t)size) < 0)
            return -1;
        buf_consume(&c->in, 4 + (size_t)size);
    }
    return c->closed ? -1 : 0;
}

static void conn_read(broker_t *b, conn_t *c)
{
    for (int rounds = 0; rounds < 16 && !c->closed; rounds++) {
        buf_reserve(&c->in, READ_CHUNK);
        ssize_t n = recv(c->fd, c->in.data + c->in.len, READ_CHUNK, 0);
        if (n > 0) {
            c->in.len += (size_t)n;
            if (conn_process(b, c) < 0 || buf_unread(&c->out) >= OUT_HIGH_WATER)
                return;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n == 0 && buf_unread(&c->in) > 0)
            broker_conn_close(b, c, "peer closed in the middle of a request");
        else
            broker_conn_close(b, c, n == 0 ? NULL : strerror(errno));
        return;
    }
}

static void on_conn(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)fd;
    conn_t *c = arg;
    broker_t *b = c->broker;
    if (events & LOOP_WRITABLE) {
        conn_flush(b, c);
        /* Output drained below the mark: frames held back can go now. */
        if (!c->closed && buf_unread(&c->out) < OUT_HIGH_WATER)
            conn_process(b, c);
    }
    if (!c->closed && (events & LOOP_READABLE))
        conn_read(b, c);
    if (!c->closed)
        conn_flush(b, c);
    if (!c->closed)
        conn_rewatch(b, c);
}

static void conn_rewatch(broker_t *b, conn_t *c)
{
    unsigned ev = 0;
    if (buf_unread(&c->out) < OUT_HIGH_WATER)
        ev |= LOOP_READABLE;
    if (buf_unread(&c->out) > 0)
        ev |= LOOP_WRITABLE;
    if (loop_watch(b->loop, c->fd, ev, on_conn, c) < 0)
        broker_conn_close(b, c, "cannot watch the socket");
}

static void on_accept(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)events;
    broker_t *b = arg;
    for (;;) {
        char ip[64];
        int port = 0;
        int cfd = net_accept(fd, ip, sizeof(ip), &port);
        if (cfd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                log_warn("accept: %s", strerror(errno));
            return;
        }
        conn_t *c = calloc(1, sizeof(*c));
        if (!c) {
            log_error("out of memory accepting a connection from %s:%d", ip, port);
            close(cfd);
            continue;
        }
        c->fd = cfd;
        c->broker = b;
        c->port = port;
        snprintf(c->ip, sizeof(c->ip), "%s", ip);
        buf_init(&c->in);
        buf_init(&c->out);
        c->next = b->conns;
        b->conns = c;
        b->n_conns++;
        log_debug("connection from %s:%d", ip, port);
        if (loop_watch(b->loop, cfd, LOOP_READABLE, on_conn, c) < 0)
            broker_conn_close(b, c, "cannot watch the socket");
    }
}

/* Frees connections closed during this iteration. */
static void before_sleep(loop_t *loop, void *arg)
{
    (void)loop;
    broker_t *b = arg;
    for (conn_t **pp = &b->conns; *pp;) {
        conn_t *c = *pp;
        if (!c->closed) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        buf_free(&c->in);
        buf_free(&c->out);
        free(c);
    }
}

static void on_signal(loop_t *loop, int signo, void *arg)
{
    (void)arg;
    log_info("%s received, shutting down", signo == SIGINT ? "SIGINT" : "SIGTERM");
    loop_stop(loop);
}

/* The host clients are told to connect to: advertised.listeners, else the
 * listener's host, else (listening on every address) this machine's name,
 * as Kafka does. Port 0 in the listener means the port we were given. */
static void resolve_advertised(broker_t *b)
{
    const broker_endpoint_t *a = &b->cfg.advertised;
    snprintf(b->adv_host, sizeof(b->adv_host), "%s", a->host);
    b->adv_port = a->port ? a->port : b->port;
    if (!b->adv_host[0] && gethostname(b->adv_host, sizeof(b->adv_host) - 1) < 0)
        snprintf(b->adv_host, sizeof(b->adv_host), "localhost");
}

static int broker_start(broker_t *b, char *err, size_t errlen)
{
    if (broker_meta_load(&b->cfg, b->cluster_id, sizeof(b->cluster_id), err, errlen) < 0)
        return -1;
    /* Signals are blocked (in loop_on_shutdown_signals) before any helper
     * thread exists, so every thread inherits the mask and only the loop's
     * signalfd sees SIGINT/SIGTERM. */
    b->loop = loop_create();
    if (!b->loop || loop_on_shutdown_signals(b->loop, on_signal, b) < 0) {
        snprintf(err, errlen, "cannot create the event loop: %s", strerror(errno));
        return -1;
    }
    loop_set_before_sleep(b->loop, before_sleep, b);
    const broker_endpoint_t *l = &b->cfg.listener;
    b->listen_fd = net_listen_tcp(l->host, l->port, 511, err, errlen);
    if (b->listen_fd < 0)
        return -1;
    b->port = net_local_port(b->listen_fd);
    resolve_advertised(b);
    /* The coordinator link goes here (next step): connect to
     * zookeeper.connect with the ZooKeeper C client, take the cluster id from
     * /cluster/id, register the ephemeral /brokers/ids/[broker.id] with the
     * advertised endpoint, and watch /brokers/topics. */
    log_info("coordinator %s (chroot '%s'): not connected yet, this broker serves metadata on its own",
             b->cfg.zk_connect, b->cfg.zk_chroot);
    if (loop_watch(b->loop, b->listen_fd, LOOP_READABLE, on_accept, b) < 0) {
        snprintf(err, errlen, "cannot watch the listener: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void broker_stop(broker_t *b)
{
    for (conn_t *c = b->conns; c; c = c->next)
        broker_conn_close(b, c, NULL);
    if (b->loop)
        before_sleep(b->loop, b);
    if (b->listen_fd >= 0)
        close(b->listen_fd);
    if (b->loop)
        loop_destroy(b->loop);
}

int broker_main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: kipper broker server.properties\n");
        return 2;
    }
    broker_t b;
    memset(&b, 0, sizeof(b));
    b.listen_fd = -1;
    char err[1024];
    if (broker_config_load(&b.cfg, argv[1], err, sizeof(err)) < 0) {
        log_error("%s", err);
        return 1;
    }
    char tag[32];
    snprintf(tag, sizeof(tag), "broker.%d", (int)b.cfg.broker_id);
    log_set_tag(tag);
    if (broker_start(&b, err, sizeof(err)) < 0) {
        log_error("cannot start: %s", err);
        broker_stop(&b);
        return 1;
    }
    log_info("serving Kafka clients on %s:%d, advertised as %s:%d (cluster %s, log dirs from %s)",
             b.cfg.listener.host[0] ? b.cfg.listener.host : "*", b.port, b.adv_host, b.adv_port, b.cluster_id,
             b.cfg.log_dirs[0]);
    loop_run(b.loop);
    broker_stop(&b);
    log_info("stopped");
    return 0;
}
