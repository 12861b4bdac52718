/* broker.c -- `kipper broker server.properties`: one event loop that owns the
 * listener and every client connection, frames Kafka requests (a 4-byte size,
 * bounded by socket.request.max.bytes) and hands each to the dispatch
 * (broker/api/broker_api.c). It keeps a request that must wait, wakes it
 * again, and writes answers with the file ranges of a Fetch sent by
 * sendfile. It starts and stops the services in order, and a first SIGTERM
 * starts a controlled shutdown (broker/repl/shutdown.c).
 *
 * A connection that sends something we cannot or will not answer is closed
 * with a log line saying why, as Kafka's SocketServer does; nothing a client
 * sends can stop the broker from serving the others. */
#define _GNU_SOURCE
#include "broker/broker.h"
#include "broker_config.h"
#include "broker_impl.h"
#include "admin.h"
#include "cluster_sync.h"
#include "conn.h"
#include "listener.h"
#include "request_memory.h"
#include "dynamic_config.h"
#include "log_dirs.h"
#include "records_check.h"
#include "broker/api/api.h"
#include "broker/group/group_service.h"
#include "base/alloc.h"
#include "base/logging.h"
#include "broker/repl/repl.h"
#include "base/loop.h"
#include "base/net.h"
#include "base/endian.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536
/* Reads of READ_CHUNK per wake-up of a connection, so that one sending
 * large frames without pause leaves the loop to the others between them. */
#define READ_ROUNDS 1
/* Frames from this size on are taken out of the input, not copied, when
 * their request waits (take_frame). */
#define TAKE_FRAME_MIN ((size_t)64 << 10)
/* A connection with this much unsent output is not read until it drains, so
 * a client that only writes cannot grow our memory without bound. */
#define OUT_HIGH_WATER (4u << 20)
/* File ranges queued behind a connection's output before we stop reading
 * it. Each holds a descriptor (a dup of its segment's), and descriptors are
 * shared by every client and the logs: a client that fetches and never
 * reads must not hold thousands. One Fetch answer may still queue more (a
 * range per partition with data); nothing more is read until they drain. */
#define MAX_SPLICES 64
/* Input read ahead while a request waits. */
#define PENDING_READ_MAX (1u << 20)
/* Produce requests of one connection in flight at once while acks=all ones
 * wait for replication, and the bytes their frames may hold meanwhile.
 * librdkafka keeps up to 5 in flight with idempotence and up to a million
 * without: small requests (linger.ms=0) need many in flight for latency,
 * large ones few; the byte bound keeps either within a few MiB. */
#define PIPELINE_MAX 64
#define PIPELINE_BYTES (8u << 20)

/* What a request holds beyond its held answer: its state, decode and frame. */
static void request_strip(broker_request_t *r)
{
    if (r->state && r->state_free)
        r->state_free(r->state);
    r->state = NULL;
    kafka_arena_free(&r->arena);
    if (r->frame_mem)
        shared_bytes_drop(r->frame_mem);
    else
        free(r->frame);
    r->frame = NULL;
    r->frame_mem = NULL;
    if (r->conn)
        reqmem_release(r->conn->broker, r);
}

static void request_free(broker_request_t *r)
{
    if (!r)
        return;
    request_strip(r);
    buf_free(&r->held);
    free(r);
}

static void splices_free(conn_t *c)
{
    while (c->splices) {
        splice_t *s = c->splices;
        c->splices = s->next;
        close(s->fd);
        free(s);
    }
    c->splices_tail = NULL;
    c->nsplices = 0;
}

/* broker_t.waiting_conns: the open connections with requests waiting. A
 * connection leaves it when its last waiting request is answered
 * (drain_answered) or when it is closed. A pass over the list may keep its
 * next element across the requests it runs on one connection: a handler
 * never answers nor closes another connection there and then (wake-ups are
 * queued, see broker_wake_later). */
static void wait_list_join(broker_t *b, conn_t *c)
{
    if (c->in_wait_list || c->closed)
        return;
    c->in_wait_list = 1;
    c->wait_prev = NULL;
    c->wait_next = b->waiting_conns;
    if (b->waiting_conns)
        b->waiting_conns->wait_prev = c;
    b->waiting_conns = c;
}

static void wait_list_leave(broker_t *b, conn_t *c)
{
    if (!c->in_wait_list)
        return;
    if (c->wait_prev)
        c->wait_prev->wait_next = c->wait_next;
    else
        b->waiting_conns = c->wait_next;
    if (c->wait_next)
        c->wait_next->wait_prev = c->wait_prev;
    c->in_wait_list = 0;
    c->wait_next = c->wait_prev = NULL;
}

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
    wait_list_leave(b, c);
    while (c->waiting) {
        broker_request_t *r = c->waiting;
        c->waiting = r->next;
        if (r->timer)
            loop_timer_cancel(b->loop, r->timer);
        request_free(r);
    }
    c->waiting_tail = NULL;
    c->nwaiting = 0;
    c->waiting_bytes = 0;
    splices_free(c);
    listener_conn_closed(b, c);
    reqmem_conn_closed(b, c);
    /* Freed in the before-sleep hook, so no callback later in this batch
     * can see freed memory. */
    c->closed_next = b->closed_conns;
    b->closed_conns = c;
    b->n_conns--;
}

static void queue_waiting(conn_t *c, broker_request_t *r)
{
    c->waiting_bytes += r->frame_len;
    r->next = NULL;
    r->conn = c;
    r->queued = 1;
    if (c->waiting_tail)
        c->waiting_tail->next = r;
    else
        c->waiting = r;
    c->waiting_tail = r;
    c->nwaiting++;
    wait_list_join(c->broker, c);
}

/* Where r's answer goes: the output, unless requests ahead of it still
 * wait; then it is held (in r itself when r waits, else in a placeholder
 * queued behind them) until they are answered. */
static buf_t *answer_buffer(conn_t *c, const broker_request_t *r)
{
    if (!c->waiting || c->waiting == r)
        return &c->out;
    broker_request_t *q = (broker_request_t *)(uintptr_t)r;
    if (!r->queued) {
        q = xcalloc(1, sizeof(*q));
        q->id = r->id;
        q->api = r->api;
        queue_waiting(c, q);
    }
    q->answered = 1;
    return &q->held;
}

int broker_reply(conn_t *c, const broker_request_t *r, const kafka_value_t *body)
{
    if (!body || kafka_response_encode(answer_buffer(c, r), r->api, r->api_version, r->correlation_id, body) !=
                     KAFKA_OK) {
        log_error("cannot encode %s v%d response for %s:%d", r->api->name, r->api_version, c->ip, c->port);
        return -1;
    }
    return 0;
}

/* The answered requests at the head of the queue leave it, their held
 * answers going out in order. */
static void drain_answered(conn_t *c)
{
    while (c->waiting && c->waiting->answered) {
        broker_request_t *r = c->waiting;
        c->waiting = r->next;
        if (!c->waiting) {
            c->waiting_tail = NULL;
            wait_list_leave(c->broker, c);
        }
        c->nwaiting--;
        c->waiting_bytes -= r->frame_len;
        if (buf_unread(&r->held))
            buf_append(&c->out, buf_read_ptr(&r->held), buf_unread(&r->held));
        request_free(r);
    }
}

int broker_conn_splice(conn_t *c, const kafka_ext_records_t *ext, int fd, int64_t pos)
{
    /* The dup keeps the segment's file open while the range waits to be
     * sent, even if retention deletes the segment meanwhile. It fails when
     * the process is out of descriptors: the caller answers REQ_CLOSE and
     * its caller closes the connection once the request is done with (the
     * response is already framed, so this connection cannot go on). Closing
     * it here would free the request under the handler's feet. */
    int dfd = dup(fd);
    if (dfd < 0) {
        log_warn("cannot queue file data of a fetch for %s:%d: %s", c->ip, c->port, strerror(errno));
        return -1;
    }
    splice_t *s = xcalloc(1, sizeof(*s));
    s->at = c->out_sent + ext->out_offset;
    s->fd = dfd;
    s->pos = pos;
    s->left = ext->len;
    if (c->splices_tail)
        c->splices_tail->next = s;
    else
        c->splices = s;
    c->splices_tail = s;
    c->nsplices++;
    return 0;
}

/* Readable unless output is backed up; writable while output is pending. */
static void conn_rewatch(broker_t *b, conn_t *c);

static int conn_has_output(const conn_t *c)
{
    return buf_unread(&c->out) > 0 || c->splices;
}

/* Memory up to the next splice, then the splice's file range, in order,
 * until the socket is full. 0, or -1 on a socket error. The memory in front
 * of a splice (a fetch answer's header) goes with MSG_MORE, so that it
 * leaves in one segment with the file data that sendfile pushes after it:
 * the client wakes once per answer, not once for the header and again for
 * the records (a fetch round trip on loopback is a quarter faster). */
static int conn_write_some(conn_t *c)
{
    for (;;) {
        splice_t *s = c->splices;
        if (s && s->at == c->out_sent) {
            off_t pos = (off_t)s->pos;
            ssize_t n = sendfile(c->fd, s->fd, &pos, (size_t)s->left);
            s->pos = pos;
            if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -1;
            if (n == 0) {
                errno = EIO;   /* the file is shorter than the log said */
                return -1;
            }
            s->left -= n;
            if (s->left > 0)
                continue;
            c->splices = s->next;
            if (!c->splices)
                c->splices_tail = NULL;
            c->nsplices--;
            close(s->fd);
            free(s);
            continue;
        }
        size_t want = buf_unread(&c->out);
        int flags = MSG_NOSIGNAL;
        if (s && s->at - c->out_sent <= want) {
            want = (size_t)(s->at - c->out_sent);
            flags |= MSG_MORE;
        }
        if (want == 0)
            return 0;
        ssize_t n = send(c->fd, buf_read_ptr(&c->out), want, flags);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        buf_consume(&c->out, (size_t)n);
        c->out_sent += (uint64_t)n;
    }
}

static void conn_flush(broker_t *b, conn_t *c)
{
    if (c->closed || !conn_has_output(c))
        return;
    if (conn_write_some(c) < 0) {
        broker_conn_close(b, c, strerror(errno));
        return;
    }
    conn_rewatch(b, c);
}

/* An idle connection holds no buffers: thousands of them cost little
 * more than their structs. A buffer is freed only when empty, so nothing
 * positioned in it (a splice's offset) is lost. */
static void conn_trim(conn_t *c)
{
    if (buf_unread(&c->in) == 0 && c->in.data)
        buf_free(&c->in);
    if (buf_unread(&c->out) == 0 && c->out.data)
        buf_free(&c->out);
}

static int conn_backed_up(const conn_t *c)
{
    return buf_unread(&c->out) >= OUT_HIGH_WATER || c->nsplices >= MAX_SPLICES;
}

/* Whether the frame at p (4-byte size, then the header) may be taken now:
 * always when nothing waits; while only pipelined requests wait, another
 * Produce up to PIPELINE_MAX (librdkafka's idempotent producer keeps 5 in
 * flight, all appended in order; their answers go out in order). */
static int may_take_frame(const conn_t *c, const uint8_t *p, size_t avail)
{
    if (!c->waiting)
        return 1;
    if (c->nwaiting >= PIPELINE_MAX || avail < 6 || be16_get(p + 4) != KAFKA_API_PRODUCE ||
        c->waiting_bytes + be32_get(p) > PIPELINE_BYTES)
        return 0;
    for (const broker_request_t *r = c->waiting; r; r = r->next)
        if (!r->answered && !r->pipelined)
            return 0;
    return 1;
}

/* The whole frame of n bytes after the size at c->in's read position,
 * taken out of c->in with the memory it is in (c->in goes on in a new
 * buffer with what followed it): a large request that waits, and the check
 * of its records, then share the bytes where they were read instead of
 * copying them on the loop (broker_request_detach, records_check.h). */
static shared_bytes_t *take_frame(conn_t *c, size_t n)
{
    size_t rest_at = c->in.pos + 4 + n;
    buf_t rest;
    buf_init(&rest);
    if (c->in.len > rest_at)
        buf_append(&rest, c->in.data + rest_at, c->in.len - rest_at);
    shared_bytes_t *mem = shared_bytes_adopt(c->in.data);
    c->in = rest;
    return mem;
}

/* Answers every whole frame in c->in; -1 when the connection was closed. */
static int conn_process(broker_t *b, conn_t *c)
{
    while (!c->closed && buf_unread(&c->in) >= 4 && !conn_backed_up(c) &&
           may_take_frame(c, buf_read_ptr(&c->in), buf_unread(&c->in))) {
        uint8_t *p = buf_read_ptr(&c->in);
        int32_t size = (int32_t)be32_get(p);
        if (size < 0 || size > b->cfg.socket_request_max_bytes) {
            char why[160];
            snprintf(why, sizeof(why), "request size %d is outside 0..%d (socket.request.max.bytes)", size,
                     b->cfg.socket_request_max_bytes);
            broker_conn_close(b, c, why);
            return -1;
        }
        if (buf_unread(&c->in) < 4 + (size_t)size) {
            /* Room for the whole frame, once request memory allows. */
            if (reqmem_admit_frame(b, c, (size_t)size))
                buf_reserve(&c->in, 4 + (size_t)size - buf_unread(&c->in));
            return 0;
        }
        /* Taken when what follows it in c->in (moved to a new buffer) is
         * smaller than the copy of it that is saved. */
        size_t after = buf_unread(&c->in) - 4 - (size_t)size;
        shared_bytes_t *mem = (size_t)size >= TAKE_FRAME_MIN && after <= (size_t)size ? take_frame(c, (size_t)size)
                                                                                      : NULL;
        int rc = broker_handle_frame(b, c, p + 4, (size_t)size, mem);
        shared_bytes_drop(mem);   /* a detached request holds its own reference */
        if (rc < 0)
            return -1;
        if (!mem)
            buf_consume(&c->in, 4 + (size_t)size);
        reqmem_frame_done(b, c);
    }
    return c->closed ? -1 : 0;
}

/* ---- waiting requests ---- */

static void on_request_timeout(loop_t *loop, void *arg);

static void request_finish(broker_t *b, conn_t *c, broker_request_t *r, req_status_t st)
{
    /* A handler that closed the connection itself (an acks=0 produce that
     * failed) freed r with it. */
    if (c->closed)
        return;
    if (st == REQ_WAIT) {
        /* Waiting again, but now pipelined (a Produce whose records were
         * checked off the loop has appended and waits for replication):
         * the Produce frames held behind it may go on. */
        if (r->pipelined) {
            conn_process(b, c);
            conn_flush(b, c);
            if (!c->closed)
                conn_rewatch(b, c);
        }
        return;
    }
    if (r->timer)
        loop_timer_cancel(b->loop, r->timer);
    r->timer = NULL;
    if (st == REQ_CLOSE) {
        char why[128];
        snprintf(why, sizeof(why), "cannot answer %s v%d", r->api->name, r->api_version);
        broker_conn_close(b, c, why);
        return;
    }
    /* Answered: it leaves the queue with those answered behind it, or (with
     * requests still waiting ahead) keeps only its held answer. */
    r->answered = 1;
    request_strip(r);
    drain_answered(c);
    /* Frames that arrived meanwhile are next. */
    conn_process(b, c);
    conn_flush(b, c);
    if (!c->closed) {
        conn_trim(c);
        conn_rewatch(b, c);
    }
}

static void on_request_timeout(loop_t *loop, void *arg);

/* The timer of a waiting request, at its deadline (which a handler may have
 * brought forward when it ran again). */
static void arm_deadline(broker_t *b, broker_request_t *r)
{
    if (!r->deadline_ms || (r->timer && r->timer_at == r->deadline_ms))
        return;
    if (r->timer)
        loop_timer_cancel(b->loop, r->timer);
    uint64_t now = loop_now_ms(b->loop);
    r->timer = loop_timer_add(b->loop, r->deadline_ms > now ? r->deadline_ms - now : 0, on_request_timeout, r);
    r->timer_at = r->deadline_ms;
}

static void request_run(broker_t *b, conn_t *c, broker_request_t *r)
{
    kafka_arena_t ra;
    api_response_arena_init(&ra);
    req_status_t st = broker_dispatch(b, c, r, &ra);
    kafka_arena_free(&ra);
    if (st == REQ_WAIT && !r->timed_out)
        arm_deadline(b, r);
    request_finish(b, c, r, st);
}

static void on_request_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    broker_request_t *r = arg;
    conn_t *c = r->conn;
    r->timer = NULL;
    if (c->closed || r->answered)
        return;
    r->timed_out = 1;
    request_run(c->broker, c, r);
}

/* The frame kept for d, decoded again into d's own arena, so the request no
 * longer points into the connection's input: a large frame's memory is
 * shared (it was taken out of the input already), a small one copied. */
static int keep_frame(broker_request_t *d, const broker_request_t *r, const uint8_t *p, size_t n)
{
    if (r->frame_mem) {
        d->frame_mem = shared_bytes_hold(r->frame_mem);
        d->frame = (uint8_t *)(uintptr_t)p;
    } else {
        d->frame = xmalloc(n ? n : 1);
        memcpy(d->frame, p, n);
    }
    d->frame_len = n;
    kafka_arena_init(&d->arena, kafka_decode_budget(n));
    kafka_request_t req;
    if (kafka_request_decode(d->frame, n, &d->arena, &req) != KAFKA_OK)
        return -1;
    d->body = req.body;
    d->client_id = req.client_id;
    return 0;
}

/* The handler asked to wait: keep a private copy of the request (only
 * its header when the handler's state is all it needs: a parked JoinGroup
 * need not hold its member's megabyte of metadata twice). */
int broker_request_detach(broker_t *b, conn_t *c, const broker_request_t *r, const uint8_t *p, size_t n)
{
    broker_request_t *d = xcalloc(1, sizeof(*d));
    *d = *r;
    d->frame = NULL;
    d->frame_mem = NULL;
    d->body = NULL;
    d->client_id = NULL;
    kafka_arena_init(&d->arena, 0);
    if (!r->state_only && keep_frame(d, r, p, n) < 0) {
        d->state = NULL;   /* still the caller's to free */
        request_free(d);
        return -1;
    }
    buf_init(&d->held);
    queue_waiting(c, d);
    reqmem_hold(b, d, d->frame ? n + d->arena.used : 0);
    d->timer = NULL;
    arm_deadline(b, d);
    return 0;
}

struct wake {
    uint64_t conn_id, request_id;
};

void broker_wake_later(broker_t *b, uint64_t conn_id, uint64_t request_id)
{
    if (b->nwakes == b->wakes_cap) {
        b->wakes_cap = b->wakes_cap ? b->wakes_cap * 2 : 64;
        b->wakes = xrealloc(b->wakes, b->wakes_cap * sizeof(*b->wakes));
    }
    b->wakes[b->nwakes++] = (struct wake){conn_id, request_id};
}

/* The wake-ups queued by this iteration's callbacks, in order; those they
 * queue in turn run in the next pass. */
static void run_wakes(broker_t *b)
{
    while (b->nwakes > 0) {
        struct wake *batch = b->wakes;
        size_t n = b->nwakes;
        b->wakes = NULL;
        b->nwakes = b->wakes_cap = 0;
        for (size_t i = 0; i < n; i++)
            broker_wake_request(b, batch[i].conn_id, batch[i].request_id);
        free(batch);
    }
}

void broker_wake_request(broker_t *b, uint64_t conn_id, uint64_t request_id)
{
    for (conn_t *c = b->waiting_conns; c; c = c->wait_next) {
        if (c->id != conn_id)
            continue;
        for (broker_request_t *r = c->waiting; r; r = r->next)
            if (r->id == request_id && !r->answered) {
                request_run(b, c, r);
                return;
            }
        return;
    }
}

/* Fetches waiting for data run again from the before-sleep hook, once per
 * loop iteration however many appends there were. */
void broker_wake_data_waiters(broker_t *b)
{
    b->data_arrived = 1;
}

static void run_data_waiters(broker_t *b)
{
    b->data_arrived = 0;
    for (conn_t *c = b->waiting_conns, *next; c; c = next) {
        next = c->wait_next;
        /* At most one per connection waits for data: such a request is
         * never pipelined, so nothing after it was taken. */
        for (broker_request_t *r = c->waiting; r; r = r->next)
            if (r->wants_data && !r->answered) {
                request_run(b, c, r);
                break;
            }
    }
}

static void conn_read(broker_t *b, conn_t *c)
{
    for (int rounds = 0; rounds < READ_ROUNDS && !c->closed; rounds++) {
        ssize_t n = net_read_into(&c->in, c->fd, READ_CHUNK);
        if (n > 0) {
            if (conn_process(b, c) < 0 || conn_backed_up(c) || c->mem_wait)
                return;
            continue;
        }
        if (n < 0 && errno == EAGAIN)
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
        if (!c->closed && !conn_backed_up(c))
            conn_process(b, c);
    }
    if (!c->closed && (events & LOOP_READABLE))
        conn_read(b, c);
    if (!c->closed)
        conn_flush(b, c);
    if (!c->closed) {
        conn_trim(c);
        conn_rewatch(b, c);
    }
}

static void conn_rewatch(broker_t *b, conn_t *c)
{
    unsigned ev = 0;
    /* A waiting request holds the connection's later frames back (Kafka
     * answers one request per connection at a time), but we keep reading so
     * a hang-up is noticed; conn_read stops at the buffer's bound. */
    if (!conn_backed_up(c) && !c->mem_wait && (!c->waiting || buf_unread(&c->in) < PENDING_READ_MAX))
        ev |= LOOP_READABLE;
    if (conn_has_output(c))
        ev |= LOOP_WRITABLE;
    if (loop_watch(b->loop, c->fd, ev, on_conn, c) < 0)
        broker_conn_close(b, c, "cannot watch the socket");
}

void broker_conn_open(broker_t *b, int fd, const char *ip, int port, struct ip_slot *slot)
{
    conn_t *c = xcalloc(1, sizeof(*c));
    c->ip_slot = slot;
    c->fd = fd;
    c->id = ++b->next_conn_id;
    c->broker = b;
    c->port = port;
    snprintf(c->ip, sizeof(c->ip), "%s", ip);
    buf_init(&c->in);
    buf_init(&c->out);
    c->next = b->conns;
    if (b->conns)
        b->conns->prev = c;
    b->conns = c;
    b->n_conns++;
    log_debug("connection from %s:%d", ip, port);
    if (loop_watch(b->loop, fd, LOOP_READABLE, on_conn, c) < 0)
        broker_conn_close(b, c, "cannot watch the socket");
}

/* Request memory was given back: connections that waited for it read on,
 * as long as it lasts. */
static void run_mem_waiters(broker_t *b)
{
    for (conn_t *c = b->conns; c; c = c->next) {
        if (c->closed || !reqmem_retry(b, c))
            continue;
        if (conn_process(b, c) < 0)
            continue;
        conn_flush(b, c);
        if (!c->closed)
            conn_rewatch(b, c);
    }
}

/* The connections closed during this loop iteration, out of every list. */
static void free_closed_conns(broker_t *b)
{
    while (b->closed_conns) {
        conn_t *c = b->closed_conns;
        b->closed_conns = c->closed_next;
        if (c->prev)
            c->prev->next = c->next;
        else
            b->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        splices_free(c);
        buf_free(&c->in);
        buf_free(&c->out);
        free(c);
    }
}

/* ---- the last answers of a controlled stop ----
 *
 * Once leadership is handed over, clients still have requests on their way
 * or read and not yet answered: a producer's backlog, and the Metadata
 * request it sent on learning that this broker no longer leads, which
 * carries the new leaders. Closing at once would drop them, and the client
 * would learn the new leaders only at its next metadata refresh. So the
 * listener closes first, and each connection is closed at its first moment
 * with nothing owed, for at most DRAIN_MS. */

#define DRAIN_MS 500

/* Nothing read and not answered, nothing unsent, and nothing waiting but
 * long-polled fetches (no data comes to a stopping broker). */
static int conn_owes_nothing(const conn_t *c)
{
    if (buf_unread(&c->in) > 0 || conn_has_output(c))
        return 0;
    for (const broker_request_t *r = c->waiting; r; r = r->next)
        if (!r->wants_data)
            return 0;
    int unread = 0;
    return ioctl(c->fd, FIONREAD, &unread) == 0 && unread == 0;
}

static void drain_timeout(loop_t *loop, void *arg)
{
    broker_t *b = arg;
    b->drain_timer = NULL;
    loop_stop(loop);
}

/* From the before-sleep hook while draining. */
static void drain_step(broker_t *b)
{
    int open = 0;
    for (conn_t *c = b->conns; c; c = c->next) {
        if (c->closed)
            continue;
        if (conn_owes_nothing(c))
            broker_conn_close(b, c, NULL);
        else
            open++;
    }
    if (open == 0)
        loop_stop(b->loop);
}

/* Runs fetches woken by appends, flushes output they queued, lets in
 * connections that waited for request memory, closes those that owe nothing
 * once a controlled stop is draining, and frees connections closed during
 * this iteration. */
static void before_sleep(loop_t *loop, void *arg)
{
    (void)loop;
    broker_t *b = arg;
    run_wakes(b);
    if (b->data_arrived)
        run_data_waiters(b);
    if (reqmem_take_freed(b))
        run_mem_waiters(b);
    if (b->draining)
        drain_step(b);
    free_closed_conns(b);
}

static void shutdown_done(broker_t *b)
{
    listener_stop_accepting(b);
    b->draining = 1;
    b->drain_timer = loop_timer_add(b->loop, DRAIN_MS, drain_timeout, b);
}

void broker_stop_on_fault(broker_t *b)
{
    b->exit_status = 1;
    if (b->shutting_down)
        return;   /* already on its way out */
    if (!b->repl) {
        loop_stop(b->loop);
        return;
    }
    repl_controlled_shutdown(b, shutdown_done);
}

/* The first signal starts a controlled shutdown (leadership handed over,
 * the ISRs left); a second one stops at once. */
static void on_signal(loop_t *loop, int signo, void *arg)
{
    broker_t *b = arg;
    const char *name = signo == SIGINT ? "SIGINT" : "SIGTERM";
    if (b->shutting_down || !b->repl) {
        log_info("%s received again, stopping now", name);
        loop_stop(loop);
        return;
    }
    log_info("%s received, shutting down", name);
    repl_controlled_shutdown(b, shutdown_done);
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
    /* Signals are blocked (in loop_on_shutdown_signals) before any helper
     * thread exists, so every thread inherits the mask and only the loop's
     * signalfd sees SIGINT/SIGTERM. */
    reqmem_init(b);
    ratelimit_init(&b->refused_produce_log, 1000, 5);
    b->loop = loop_create();
    if (!b->loop || loop_on_shutdown_signals(b->loop, on_signal, b) < 0) {
        snprintf(err, errlen, "cannot create the event loop: %s", strerror(errno));
        return -1;
    }
    loop_set_before_sleep(b->loop, before_sleep, b);
    if (listener_open(b, err, errlen) < 0)
        return -1;
    resolve_advertised(b);
    /* The coordinator first (cluster id, then meta.properties), then the
     * log dirs; replicas open as the coordinator's state arrives. */
    if (repl_start(b) < 0) {
        snprintf(err, errlen, "out of memory starting replication");
        return -1;
    }
    if (group_service_start(b) < 0) {
        snprintf(err, errlen, "out of memory starting the group coordinator");
        return -1;
    }
    if (dynamic_config_start(b) < 0) {
        snprintf(err, errlen, "out of memory starting the dynamic configs");
        return -1;
    }
    if (records_check_start(b) < 0) {
        snprintf(err, errlen, "cannot start the thread that checks produced records");
        return -1;
    }
    if (!(b->resolver = resolver_create(b->loop, NULL))) {
        snprintf(err, errlen, "cannot start the thread that looks up host names");
        return -1;
    }
    if (cluster_start(b, err, errlen) < 0 || log_dirs_start(b, err, errlen) < 0 || admin_start(b, err, errlen) < 0)
        return -1;
    return listener_accept_start(b, err, errlen);
}

static void broker_stop(broker_t *b)
{
    b->stopping = 1;
    if (b->drain_timer)
        loop_timer_cancel(b->loop, b->drain_timer);
    b->drain_timer = NULL;
    for (conn_t *c = b->conns; c; c = c->next)
        broker_conn_close(b, c, NULL);
    if (b->loop)
        before_sleep(b->loop, b);
    /* Every request is gone with its connection: the checks left are skipped. */
    records_check_stop(b);
    listener_close(b);
    /* No more fetching or ISR checks: the replicas are freed next. */
    repl_stop(b);
    resolver_destroy(b->resolver);
    b->resolver = NULL;
    /* Logs flushed and marked clean first; then the session goes, and with
     * it our leader nodes, so other replicas can take over. */
    log_dirs_stop(b);
    /* Admin jobs run with the coordinator link's handle: they finish
     * before it closes. */
    admin_stop(b);
    cluster_stop(b);
    /* After the coordinator link: its last callbacks still find the groups
     * and the dynamic configs. */
    group_service_stop(b);
    dynamic_config_stop(b);
    free(b->wakes);
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
    char err[1024];
    if (broker_config_load(&b.cfg, argv[1], err, sizeof(err)) < 0) {
        log_error("%s", err);
        return 1;
    }
    char tag[32];
    snprintf(tag, sizeof(tag), "broker.%d", (int)b.cfg.broker_id);
    log_set_tag(tag);
    if (broker_start(&b, err, sizeof(err)) < 0) {
        /* Stopped before it served anything: that is a clean stop. */
        int asked = loop_shutdown_pending();
        if (asked)
            log_info("stopped during start-up (%s)", err);
        else
            log_error("cannot start: %s", err);
        broker_stop(&b);
        return asked ? 0 : 1;
    }
    log_info("serving Kafka clients on %s:%d, advertised as %s:%d (cluster %s, log dirs from %s)",
             b.cfg.listener.host[0] ? b.cfg.listener.host : "*", b.port, b.adv_host, b.adv_port, b.cluster_id,
             b.cfg.log_dirs[0]);
    loop_run(b.loop);
    broker_stop(&b);
    log_info("stopped");
    return b.exit_status;
}
