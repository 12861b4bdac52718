/* server.c -- the keeper process: its listening socket, client connections
 * (framing, the connect handshake, backpressure), the session tick and the
 * container sweep. Requests of a connected client go to request.c. */
#define _GNU_SOURCE
#include "keeper/keeper.h"
#include "keeper_impl.h"
#include "base/logging.h"
#include "base/net.h"
#include "base/endian.h"
#include "base/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK 65536
/* A drained buffer larger than this is given back (release_if_drained). */
#define IDLE_BUFFER_KEEP (256u << 10)

static void client_on_io(loop_t *loop, int fd, unsigned events, void *arg);
static void client_process_input(keeper_t *k, client_conn_t *c);

/* ---- backpressure ---- */

/* Is c over an outstanding bound (keeper_config.h), each taken >> shift (0
 * to stop reading, 1 to start again: half-way, so a connection is not
 * paused and resumed on every request)? Requests in the pipeline count
 * until answered, however long the log or the quorum takes; replies until
 * written. A connection with nothing outstanding may always send one more
 * request (at most jute.maxbuffer), so a busy keeper never starves one, and
 * every paused connection has an answer coming that checks again. */
static int over_outstanding_bound(const client_conn_t *c, unsigned shift)
{
    const keeper_t *k = c->keeper;
    const keeper_config_t *cfg = &k->cfg;
    size_t requests = (size_t)c->outstanding + c->unsent_replies;
    size_t bytes = c->outstanding_bytes + buf_unread(&c->out);
    if (requests == 0 && bytes == 0)
        return 0;
    return requests >= ((size_t)cfg->max_outstanding_per_cnxn >> shift) ||
           bytes >= ((size_t)cfg->max_outstanding_bytes_per_cnxn >> shift) ||
           k->outstanding >= ((size_t)cfg->global_outstanding_limit >> shift) ||
           k->outstanding_bytes >= ((size_t)cfg->global_outstanding_bytes >> shift);
}

/* A drained buffer that grew for a large request or reply gives its memory
 * back, so a connection that once sent or read a 1 MiB frame does not keep
 * megabytes while it idles. */
static void release_if_drained(buf_t *b)
{
    if (buf_unread(b) == 0 && b->cap > IDLE_BUFFER_KEEP)
        buf_free(b);
}

/* ---- output ---- */

static void client_update_interest(client_conn_t *c)
{
    if (c->dead)
        return;
    unsigned ev = 0;
    if (!c->read_paused && !c->closing)
        ev |= LOOP_READABLE;
    if (buf_unread(&c->out) > 0)
        ev |= LOOP_WRITABLE;
    if (ev == 0)
        ev = LOOP_READABLE;   /* keep seeing hang-ups */
    loop_watch(c->keeper->loop, c->fd, ev, client_on_io, c);
    c->want_write = (ev & LOOP_WRITABLE) != 0;
}

void client_queued(client_conn_t *c)
{
    if (c->dead)
        return;
    c->unsent_replies++;
    c->stats.packets_sent++;
    c->keeper->stats.packets_sent++;
    if (!c->pending_write) {
        c->pending_write = 1;
        c->next_pending = c->keeper->pending_writes;
        c->keeper->pending_writes = c;
    }
}

/* Write what the socket takes. Returns -1 if the connection was closed. */
static int client_flush(client_conn_t *c)
{
    if (net_write_buffer(c->fd, &c->out) < 0) {
        client_close(c, strerror(errno));
        return -1;
    }
    if (buf_unread(&c->out) == 0) {
        c->unsent_replies = 0;
        release_if_drained(&c->out);
        if (c->closing) {
            client_close(c, NULL);
            return -1;
        }
    }
    int was_paused = c->read_paused;
    if (c->read_paused && !c->closing && !over_outstanding_bound(c, 1)) {
        c->read_paused = 0;
        /* Whole requests may wait in c->in with nothing more to come from
         * the socket: take them now, not on the next read. */
        client_process_input(c->keeper, c);
        if (c->dead)
            return -1;
    }
    if (c->want_write != (buf_unread(&c->out) > 0) || was_paused != c->read_paused)
        client_update_interest(c);
    return 0;
}

void client_close_after_flush(client_conn_t *c)
{
    c->closing = 1;
    if (!c->pending_write) {
        c->pending_write = 1;
        c->next_pending = c->keeper->pending_writes;
        c->keeper->pending_writes = c;
    }
}

static void unlink_client(client_conn_t **head, client_conn_t *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        *head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

void client_close(client_conn_t *c, const char *why)
{
    if (c->dead)
        return;
    keeper_t *k = c->keeper;
    if (why)
        log_info("closing connection from %s:%d (session 0x%llx): %s", c->ip, c->port,
                 (unsigned long long)c->session_id, why);
    loop_unwatch(k->loop, c->fd);
    close(c->fd);
    c->dead = 1;
    watch_remove_watcher(k->watches, c);
    pipeline_forget_client(k, c);
    if (c->session_id) {
        session_t *s = session_find(k->sessions, c->session_id);
        if (s && s->owner == c)
            s->owner = NULL;
    }
    unlink_client(&k->clients, c);
    k->nclients--;
    c->next = k->dead_clients;   /* freed in before_sleep, after every callback */
    k->dead_clients = c;
}

static void free_client(client_conn_t *c)
{
    buf_free(&c->in);
    buf_free(&c->out);
    auth_set_free(&c->auth);
    free(c);
}

static void keeper_before_sleep(loop_t *loop, void *arg)
{
    (void)loop;
    keeper_t *k = arg;
    follower_before_sleep(k);
    leader_before_sleep(k);
    while (k->pending_writes) {
        client_conn_t *c = k->pending_writes;
        k->pending_writes = c->next_pending;
        c->pending_write = 0;
        if (!c->dead)
            client_flush(c);
    }
    while (k->dead_clients) {
        client_conn_t *c = k->dead_clients;
        k->dead_clients = c->next;
        free_client(c);
    }
}

int keeper_owns_sessions(const keeper_t *k)
{
    return k->role == ROLE_STANDALONE || (k->role == ROLE_LEADING && k->serving);
}

client_conn_t *keeper_client_of_session(keeper_t *k, int64_t session_id)
{
    session_t *s = session_find(k->sessions, session_id);
    return s ? s->owner : NULL;
}

void keeper_stats_record(keeper_t *k, client_conn_t *c, uint64_t latency_ms)
{
    keeper_stats_t *all[2] = {&k->stats, &c->stats};
    for (int i = 0; i < 2; i++) {
        keeper_stats_t *s = all[i];
        s->latency_count++;
        s->latency_total_ms += latency_ms;
        if (latency_ms < s->latency_min_ms)
            s->latency_min_ms = latency_ms;
        if (latency_ms > s->latency_max_ms)
            s->latency_max_ms = latency_ms;
    }
    c->last_latency_ms = latency_ms;
    c->last_response_wall_ms = clock_wall_ms();
}

/* ---- the connect handshake ---- */

/* A client that sent the readOnly byte gets one back, saying whether this
 * keeper is read-only; an older client, whose ConnectRequest ends before
 * it, gets the older, shorter answer. */
void keeper_send_connect_response(client_conn_t *c, int32_t timeout, int64_t session_id, int valid)
{
    uint8_t passwd[SESSION_PASSWORD_LEN] = {0};
    if (valid)
        session_password(session_id, passwd);
    size_t start = c->out.len;
    jute_put_int(&c->out, 0);                 /* length, patched below */
    jute_put_int(&c->out, 0);                 /* protocolVersion */
    jute_put_int(&c->out, valid ? timeout : 0);
    jute_put_long(&c->out, valid ? session_id : 0);
    jute_put_buffer(&c->out, passwd, SESSION_PASSWORD_LEN);
    if (c->with_read_only)
        jute_put_bool(&c->out, c->keeper->read_only);
    jute_patch_int(&c->out, start, (int32_t)(c->out.len - start - 4));
    client_queued(c);
}

void keeper_attach_session(client_conn_t *c, session_t *s, int32_t timeout)
{
    client_conn_t *previous = s->owner;
    if (previous && previous != c)
        client_close(previous, "its session reconnected on another connection");
    s->owner = c;
    c->session_id = s->id;
    c->session_timeout = timeout;
    c->connected = 1;
}

static void handle_connect(keeper_t *k, client_conn_t *c, const uint8_t *frame, size_t len)
{
    jute_in_t in;
    jute_in_init(&in, frame, len);
    int32_t protocol_version = jute_get_int(&in);
    int64_t last_zxid_seen = jute_get_long(&in);
    int32_t timeout = jute_get_int(&in);
    int64_t session_id = jute_get_long(&in);
    const uint8_t *passwd;
    int32_t passwd_len;
    jute_get_buffer(&in, &passwd, &passwd_len);
    if (in.error) {
        client_close(c, "malformed ConnectRequest");
        return;
    }
    (void)protocol_version;
    c->with_read_only = jute_remaining(&in) >= 1;
    int allows_read_only = c->with_read_only && jute_get_bool(&in);
    if (k->read_only && !allows_read_only) {   /* ZooKeeper's words, and it hangs up too */
        client_close(c, "Refusing session request for not-read-only client");
        return;
    }
    if (!k->serving && !k->read_only) {   /* electing a leader or syncing: ZooKeeper refuses sessions too */
        client_close(c, "not serving clients until this keeper has a leader");
        return;
    }
    int64_t our_zxid = tree_last_zxid(k->tree);
    if (last_zxid_seen > our_zxid) {
        char why[160];
        snprintf(why, sizeof(why), "client has seen zxid 0x%llx, our last zxid is 0x%llx",
                 (unsigned long long)last_zxid_seen, (unsigned long long)our_zxid);
        client_close(c, why);
        return;
    }
    if (timeout < k->cfg.min_session_timeout)
        timeout = k->cfg.min_session_timeout;
    if (timeout > k->cfg.max_session_timeout)
        timeout = k->cfg.max_session_timeout;
    uint64_t now = loop_now_ms(k->loop);

    uint8_t expected[SESSION_PASSWORD_LEN];
    session_password(session_id, expected);
    int passwd_ok = passwd_len == SESSION_PASSWORD_LEN && memcmp(passwd, expected, SESSION_PASSWORD_LEN) == 0;
    if (k->read_only) {
        readonly_connect(k, c, session_id, passwd_ok, timeout);
        return;
    }
    if (session_id == 0 && k->cfg.local_sessions_enabled) {   /* no transaction: local_sessions.c */
        local_session_open(k, c, timeout);
        return;
    }
    if (session_id == 0 && k->role == ROLE_FOLLOWING) {
        /* The leader creates sessions; this keeper names them (its id is
         * in the top byte) and answers once the leader's commit arrives. */
        int64_t id = session_next_id(k->sessions);
        pending_t *p = pipeline_new(k, PENDING_CONNECT, c, 0, OP_CREATE_SESSION);
        p->has_txn = 0;
        p->hdr.client_id = id;
        p->timeout = timeout;
        c->connecting = 1;
        follower_forward_create_session(k, id, timeout);
        pipeline_follower_queue(k, p);
        return;
    }
    if (session_id == 0) {
        /* The session exists once its createSession txn is durable; until
         * then this connection reads no further requests. */
        int64_t id = session_next_id(k->sessions);
        pending_t *p = pipeline_new(k, PENDING_CONNECT, c, 0, OP_CREATE_SESSION);
        p->timeout = timeout;
        prep_create_session(k, id, timeout, &p->hdr, &p->txn);
        c->connecting = 1;
        pipeline_submit(k, p);
        return;
    }

    session_t *s = session_find(k->sessions, session_id);
    if (passwd_ok && k->role == ROLE_FOLLOWING && !(s && s->local)) {
        /* The leader alone knows whether the session lives, and must learn
         * that this keeper serves it now (ZooKeeper's leader refuses the
         * session's writes through any other member with SESSIONMOVED):
         * ZooKeeper's Learner.validateSession. The answer comes back
         * through keeper_finish_reopen; this connection reads nothing more
         * until then. */
        c->connecting = 1;
        follower_revalidate(k, c, session_id, timeout);
        return;
    }
    /* Standalone, leading, or a local session of this keeper: it knows. */
    int valid = s && !s->closing && passwd_ok;
    if (!valid) {
        log_info("refusing to reopen session 0x%llx for %s:%d: %s", (unsigned long long)session_id, c->ip,
                 c->port, s ? "wrong password" : "expired or unknown");
        keeper_send_connect_response(c, 0, 0, 0);
        client_close_after_flush(c);
        return;
    }
    session_touch(k->sessions, session_id, now);
    follower_touch(k, session_id);
    if (k->role == ROLE_LEADING && !s->local)
        s->served_by = k->cfg.server_id;   /* as a follower's REVALIDATE makes it that follower's (leader.c) */
    keeper_attach_session(c, s, timeout);
    keeper_send_connect_response(c, timeout, session_id, 1);
}

void keeper_finish_connect(keeper_t *k, client_conn_t *c, int64_t session_id, int32_t timeout, int ok)
{
    c->connecting = 0;
    session_t *s = ok ? session_find(k->sessions, session_id) : NULL;
    if (!s) {
        client_close(c, ok ? "its new session vanished" : "cannot create a session: the transaction log refused it");
        return;
    }
    keeper_attach_session(c, s, timeout);
    keeper_send_connect_response(c, timeout, s->id, 1);
    log_debug("session 0x%llx established for %s:%d, timeout %d ms", (unsigned long long)s->id, c->ip, c->port,
              timeout);
    client_process_input(k, c);   /* requests that arrived behind the ConnectRequest */
}

void keeper_finish_reopen(keeper_t *k, client_conn_t *c, int64_t session_id, int32_t timeout, int valid)
{
    c->connecting = 0;
    session_t *s = valid ? session_find(k->sessions, session_id) : NULL;
    if (valid && !s)   /* live on the leader, not applied here yet */
        s = session_add(k->sessions, session_id, timeout, loop_now_ms(k->loop));
    if (!s) {
        log_info("refusing to reopen session 0x%llx for %s:%d: %s", (unsigned long long)session_id, c->ip,
                 c->port, valid ? "out of memory" : "the leader says it is expired or unknown");
        keeper_send_connect_response(c, 0, 0, 0);
        client_close_after_flush(c);
        return;
    }
    session_touch(k->sessions, session_id, loop_now_ms(k->loop));
    follower_touch(k, session_id);
    keeper_attach_session(c, s, timeout);
    keeper_send_connect_response(c, timeout, session_id, 1);
    client_process_input(k, c);   /* requests that arrived behind the ConnectRequest */
}

/* ---- input ---- */

/* Handle every complete frame in c->in. */
static void client_process_input(keeper_t *k, client_conn_t *c)
{
    while (!c->dead && !c->closing && !c->connecting && buf_unread(&c->in) >= 4) {
        if (over_outstanding_bound(c, 0)) {
            c->read_paused = 1;   /* resumed by client_flush once enough is answered and read */
            client_update_interest(c);
            return;
        }
        const uint8_t *p = buf_read_ptr(&c->in);
        if (!c->connected && c->stats.packets_received == 0) {
            buf_t answer;
            buf_init(&answer);
            if (fourlw_run(k, c, p, &answer)) {
                buf_append(&c->out, answer.data, answer.len);
                buf_free(&answer);
                client_queued(c);
                client_close_after_flush(c);
                return;
            }
            buf_free(&answer);
        }
        int32_t len = (int32_t)be32_get(p);
        if (len < 0 || len > k->cfg.jute_maxbuffer) {
            char why[128];
            snprintf(why, sizeof(why), "frame length %d is outside 0..%d (jute.maxbuffer)", len,
                     k->cfg.jute_maxbuffer);
            client_close(c, why);
            return;
        }
        if (buf_unread(&c->in) - 4 < (size_t)len)
            return;   /* wait for the rest */
        c->stats.packets_received++;
        k->stats.packets_received++;
        if (c->connected) {
            request_handle(k, c, p + 4, (size_t)len);
        } else {
            handle_connect(k, c, p + 4, (size_t)len);
        }
        buf_consume(&c->in, 4 + (size_t)len);
    }
}

static void client_read(keeper_t *k, client_conn_t *c)
{
    /* Read at most one frame's worth beyond what is buffered, so a client
     * that floods us is held back by TCP rather than by our memory. */
    size_t limit = (size_t)k->cfg.jute_maxbuffer + 4 + READ_CHUNK;
    while (!c->dead && !c->closing && !c->read_paused && buf_unread(&c->in) < limit) {
        ssize_t n = net_read_into(&c->in, c->fd, READ_CHUNK);
        if (n > 0) {
            client_process_input(k, c);
            if (!c->dead)
                release_if_drained(&c->in);
            continue;
        }
        if (n < 0 && errno == EAGAIN)
            return;
        if (n == 0) {
            if (buf_unread(&c->in) > 0)
                client_close(c, "client closed the connection in the middle of a request");
            else
                client_close(c, c->connected ? NULL : "client closed before connecting");
        } else {
            client_close(c, strerror(errno));
        }
        return;
    }
}

static void client_on_io(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)fd;
    client_conn_t *c = arg;
    keeper_t *k = c->keeper;
    if ((events & LOOP_WRITABLE) && client_flush(c) < 0)
        return;
    if (events & LOOP_READABLE) {
        if (c->read_paused && !c->closing) {
            /* Reading is paused; epoll still reports hang-ups here. */
            char probe;
            ssize_t n = recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n == 0)
                client_close(c, "client closed the connection");
            return;
        }
        if (!c->closing)
            client_read(k, c);
    }
}

/* ---- accepting ---- */

static size_t connections_from(const keeper_t *k, const char *ip)
{
    size_t n = 0;
    for (const client_conn_t *c = k->clients; c; c = c->next)
        if (strcmp(c->ip, ip) == 0)
            n++;
    return n;
}

static void on_accept(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)events;
    keeper_t *k = arg;
    for (int i = 0; i < 64; i++) {
        char ip[64];
        int port;
        int cfd = net_accept(fd, ip, sizeof(ip), &port);
        if (cfd < 0) {
            if (accept_backoff_failed(&k->client_accept, errno))
                return;   /* none waiting, or out of descriptors: paused */
            continue;
        }
        accept_backoff_accepted(&k->client_accept);
        if (k->cfg.max_client_cnxns > 0 && connections_from(k, ip) >= (size_t)k->cfg.max_client_cnxns) {
            uint64_t missed;
            if (ratelimit_allow(&k->refusal_log, loop_now_ms(loop), &missed))
                log_warn("too many connections from %s - max is %d (%llu more refused since the last line)", ip,
                         k->cfg.max_client_cnxns, (unsigned long long)missed);
            close(cfd);
            continue;
        }
        client_conn_t *c = calloc(1, sizeof(*c));
        if (!c) {
            log_error("out of memory accepting a connection from %s", ip);
            close(cfd);
            continue;
        }
        c->keeper = k;
        c->fd = cfd;
        snprintf(c->ip, sizeof(c->ip), "%s", ip);
        c->port = port;
        snprintf(c->who, sizeof(c->who), "%s:%d", ip, port);
        c->established_wall_ms = clock_wall_ms();
        c->last_cxid = -1;
        c->last_zxid = -1;
        c->last_op = "NA";
        c->stats.latency_min_ms = UINT64_MAX;
        auth_set_init(&c->auth);
        auth_set_add(&c->auth, "ip", ip);
        buf_init(&c->in);
        buf_init(&c->out);
        c->next = k->clients;
        if (k->clients)
            k->clients->prev = c;
        k->clients = c;
        k->nclients++;
        if (loop_watch(loop, cfd, LOOP_READABLE, client_on_io, c) < 0)
            client_close(c, "cannot watch the socket");
    }
}

/* ---- periodic work ---- */

static void expire_session(session_t *s, void *arg)
{
    if (!s->local)
        keeper_close_session(arg, s->id, "session expired");
}

static void on_tick(loop_t *loop, void *arg)
{
    keeper_t *k = arg;
    uint64_t now = loop_now_ms(loop);
    local_sessions_expire(k, now);   /* in every role: they are this keeper's alone */
    if (keeper_owns_sessions(k))     /* followers learn of the others' expiry from the leader */
        session_each_expired(k->sessions, now, expire_session, k);
    persist_tick(k);
    k->tick_timer = loop_timer_add(loop, (uint64_t)k->cfg.tick_time, on_tick, k);
}

typedef struct {
    keeper_t *keeper;
    char **paths;
    size_t count, cap, budget;
} container_sweep_t;

static int collect_container(const znode_t *node, void *arg)
{
    container_sweep_t *sw = arg;
    if (sw->count == sw->cap) {
        size_t cap = sw->cap ? sw->cap * 2 : 16;
        char **p = realloc(sw->paths, cap * sizeof(*p));
        if (!p)
            return 1;
        sw->paths = p;
        sw->cap = cap;
    }
    sw->paths[sw->count] = strdup(node->path);
    if (sw->paths[sw->count])
        sw->count++;
    return sw->count >= sw->budget;
}

/* ZooKeeper's ContainerManager: delete empty containers and expired TTL
 * nodes through deleteContainer transactions, at most maxPerMinute a minute. */
static void on_container_sweep(loop_t *loop, void *arg)
{
    keeper_t *k = arg;
    container_sweep_t sw = {k, NULL, 0, 0, 0};
    if (!keeper_owns_sessions(k)) {
        k->container_timer = loop_timer_add(loop, (uint64_t)k->cfg.container_check_interval_ms, on_container_sweep, k);
        return;
    }
    uint64_t budget = (uint64_t)k->cfg.container_max_per_minute * (uint64_t)k->cfg.container_check_interval_ms /
                      60000u;
    sw.budget = budget ? (size_t)budget : 1;
    tree_each_expired_container(k->tree, (int64_t)clock_wall_ms(), collect_container, &sw);
    for (size_t i = 0; i < sw.count; i++) {
        pending_t *p = pipeline_new(k, PENDING_SYSTEM, NULL, 0, OP_DELETE_CONTAINER);
        prep_delete_container(k, sw.paths[i], &p->hdr, &p->txn);
        pipeline_submit(k, p);
        free(sw.paths[i]);
    }
    free(sw.paths);
    k->container_timer = loop_timer_add(loop, (uint64_t)k->cfg.container_check_interval_ms, on_container_sweep, k);
}

/* ---- start and stop ---- */

static void on_watch_event(void *watcher, int32_t event_type, const char *path, void *ctx)
{
    (void)ctx;
    client_conn_t *c = watcher;
    if (c->dead)
        return;
    size_t start = reply_begin(&c->out, XID_NOTIFICATION, -1, ZOK);
    jute_put_int(&c->out, event_type);
    jute_put_int(&c->out, STATE_SYNC_CONNECTED);
    jute_put_string(&c->out, path);
    reply_finish(&c->out, start);
    client_queued(c);
}

static void on_purge(loop_t *loop, void *arg)
{
    keeper_t *k = arg;
    persist_purge(k);
    k->purge_timer = loop_timer_add(loop, (uint64_t)k->cfg.autopurge_purge_interval * 3600u * 1000u, on_purge, k);
}

static void on_shutdown_signal(loop_t *loop, int signo, void *arg)
{
    keeper_t *k = arg;
    log_info("received signal %d, shutting down", signo);
    k->stopping = 1;
    loop_stop(loop);
}

static int ensure_dir(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        snprintf(err, errlen, "%s exists and is not a directory", path);
        return -1;
    }
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int keeper_start(keeper_t *k, char *err, size_t errlen)
{
    if (ensure_dir(k->cfg.data_dir, err, errlen) < 0 || ensure_dir(k->cfg.data_log_dir, err, errlen) < 0)
        return -1;
    k->loop = loop_create();
    if (k->loop)   /* before any thread starts, so SIGINT/SIGTERM come to the loop */
        loop_on_shutdown_signals(k->loop, on_shutdown_signal, k);
    k->watches = watch_manager_create(on_watch_event, k);
    k->sessions = session_tracker_create(k->cfg.server_id, k->cfg.tick_time, clock_wall_ms());
    if (!k->loop || !k->watches || !k->sessions) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    peer_init_history(k);
    if (persist_recover(k, err, errlen) < 0 || persist_open_log(k, err, errlen) < 0)
        return -1;
    k->next_zxid = tree_last_zxid(k->tree) + 1;
    keeper_ensemble_start(k);
    k->stats.latency_min_ms = UINT64_MAX;
    k->started_wall_ms = clock_wall_ms();
    k->listen_fd = net_listen_tcp(k->cfg.client_port_address, k->cfg.client_port, 511, err, errlen);
    if (k->listen_fd < 0)
        return -1;
    if (peer_start(k, err, errlen) < 0)
        return -1;
    k->port = net_local_port(k->listen_fd);
    char name[48];
    snprintf(name, sizeof(name), "client port %d", k->port);
    ratelimit_init(&k->refusal_log, 1000, 5);
    if (accept_backoff_start(&k->client_accept, k->loop, k->listen_fd, on_accept, k, name) < 0) {
        snprintf(err, errlen, "cannot watch the client port");
        return -1;
    }
    loop_set_before_sleep(k->loop, keeper_before_sleep, k);
    k->tick_timer = loop_timer_add(k->loop, (uint64_t)k->cfg.tick_time, on_tick, k);
    k->container_timer =
        loop_timer_add(k->loop, (uint64_t)k->cfg.container_check_interval_ms, on_container_sweep, k);
    if (k->cfg.autopurge_purge_interval > 0)
        k->purge_timer = loop_timer_add(k->loop, 1000, on_purge, k);
    return 0;
}

static void keeper_stop(keeper_t *k)
{
    while (k->clients)
        client_close(k->clients, NULL);
    if (k->loop)
        peer_stop(k);
    if (k->loop)
        keeper_before_sleep(k->loop, k);
    txnlog_close(k->txnlog);   /* what was appended is written and synced first */
    persist_shutdown(k);
    while (k->pending_head) {
        pending_t *p = k->pending_head;
        k->pending_head = p->next;
        if (p->has_txn)
            txn_free(&p->txn);
        free(p->frame);
        free(p);
    }
    pipeline_free_index(k);
    accept_backoff_stop(&k->client_accept);
    if (k->listen_fd > 0)
        close(k->listen_fd);
    changes_destroy(&k->changes);
    tree_destroy(k->tree);
    watch_manager_destroy(k->watches);
    session_tracker_destroy(k->sessions);
    loop_destroy(k->loop);
}

int keeper_main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: kipper keeper zoo.cfg\n");
        return 2;
    }
    keeper_t k;
    memset(&k, 0, sizeof(k));
    k.listen_fd = -1;
    changes_init(&k.changes);
    char err[1024];
    if (keeper_config_load(&k.cfg, argv[1], err, sizeof(err)) < 0) {
        log_error("%s", err);
        return 1;
    }
    char tag[32];
    snprintf(tag, sizeof(tag), "keeper.%d", k.cfg.server_id);
    log_set_tag(tag);
    if (keeper_start(&k, err, sizeof(err)) < 0) {
        log_error("cannot start: %s", err);
        keeper_stop(&k);
        return 1;
    }
    log_info("serving clients on %s:%d (tickTime %d ms, sessions %d..%d ms, data in %s)",
             k.cfg.client_port_address[0] ? k.cfg.client_port_address : "*", k.port, k.cfg.tick_time,
             k.cfg.min_session_timeout, k.cfg.max_session_timeout, k.cfg.data_dir);
    loop_run(k.loop);
    keeper_stop(&k);
    log_info("stopped");
    return k.exit_status;
}
