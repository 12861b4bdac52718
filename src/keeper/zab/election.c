/* election.c -- ZooKeeper 3.8's fast leader election on the keeper's event
 * loop. See election.h.
 *
 * Two layers, as in ZooKeeper:
 *
 *  - Connections (QuorumCnxManager). One TCP connection per peer. Whoever
 *    dials first sends an InitialMessage naming itself; the connection is
 *    kept only if the dialler has the larger server id. A smaller dialler
 *    hangs up right after its InitialMessage, and the larger side, on
 *    seeing it, drops whatever it had to that peer and dials back. Each
 *    peer has a send queue of one notification (a newer one replaces an
 *    unsent older one, so nobody is told a stale vote) and remembers the
 *    last notification sent, which is sent again on a new connection.
 *
 *  - The election (FastLeaderElection). Notifications that arrive while we
 *    are LOOKING go to an inbox that a round consumes in order: the
 *    proposal follows the best vote of the newest round; a quorum of
 *    votes equal to ours starts the finalize wait, which a better vote
 *    interrupts; FOLLOWING/LEADING notifications let a late server join an
 *    established leader once a quorum names it and the leader itself says
 *    LEADING. When we are not LOOKING, a LOOKING peer is answered with our
 *    current vote. Our own notifications reach us through the inbox too,
 *    so our vote counts exactly as ZooKeeper's loopback does.
 *
 *  - Observers (`:observer` server lines) do not vote, as in ZooKeeper
 *    3.8: votes go only to participants and only theirs are counted. An
 *    observer that is LOOKING sends its (empty) vote to the participants,
 *    which answer any LOOKING notification of a non-voter with their state
 *    and current vote without counting it (FastLeaderElection's
 *    WorkerReceiver); the observer joins the leader that a quorum of them
 *    reports FOLLOWING or LEADING and the leader itself confirms. An
 *    observer answers nobody: no participant reads what it says.
 *
 * Nothing here blocks: connects are non-blocking with a deadline, reads
 * and writes go through bounded buffers, and the decision is handed to the
 * caller from a zero-delay timer so a callback never runs inside our own
 * I/O handling (the caller may destroy us from it). */
#define _GNU_SOURCE
#include "election.h"
#include "keeper/data/jute.h"
#include "base/logging.h"
#include "base/net.h"
#include "base/endian.h"
#include "base/alloc.h"
#include "base/accept_backoff.h"
#include "base/ratelimit.h"
#include "base/resolver.h"
#include "handshake.h"
#include "quorum.h"
#include "ensemble_config.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* QuorumCnxManager's constants. */
#define PROTOCOL_VERSION_V1 (-65536LL)   /* what 3.5+ sends without multiAddress */
#define PROTOCOL_VERSION_V2 (-65535LL)   /* 3.6+ with multiAddress.enabled */
#define INITIAL_ADDRESS_MAX 2048         /* maxBuffer: longest address text */
#define CONNECT_TIMEOUT_MS 5000          /* cnxTO */

/* FastLeaderElection's constants. */
#define NOTIFICATION_VERSION 2
#define FINALIZE_WAIT_MS 200
#define MIN_NOTIFICATION_INTERVAL_MS FINALIZE_WAIT_MS
#define MAX_NOTIFICATION_INTERVAL_MS 60000
#define INBOX_CAPACITY 100               /* RECV_CAPACITY; the oldest is dropped when full */

/* Ours. */
#define DIAL_BACKOFF_MIN_MS 100
#define DIAL_BACKOFF_MAX_MS 5000
#define READ_CHUNK 16384
#define ACCEPTS_PER_WAKEUP 16

typedef struct el_conn el_conn_t;

/* A peer of the voting view (one server.N line). */
typedef struct {
    election_t *el;
    int64_t id;
    char host[256];
    int quorum_port, election_port;
    int nonvoter;             /* does not vote in the active configuration (an observer, or not
                                 in it): unless it is a next_voter, its votes are not counted and
                                 ours not sent to it */
    int next_voter;           /* votes in the pending configuration (takes_part) */
    int observer;             /* its role is observer: OBSERVING once it follows */
    int member;               /* in the active configuration; else known only by its connection */
    int dialable;             /* a member line gave its address: we may dial it (a stranger that
                                 dialled us we may not) */
    el_conn_t *conn;          /* the connection in use, at most one */
    el_conn_t *dial;          /* our outgoing attempt, while it lasts */
    int has_pending;          /* the send queue: capacity one, newest wins */
    election_notification_t pending;
    int has_last_sent;        /* sent again on a new connection (ZooKeeper's lastMessageSent) */
    election_notification_t last_sent;
    uint64_t next_dial_ms;    /* backoff: no new dial before this */
    uint64_t backoff_ms;
    loop_timer_t *redial_timer;
    int outage_logged;        /* said once that it is unreachable */
} el_peer_t;

typedef enum { CONN_DIALING, CONN_HANDSHAKE, CONN_OPEN } conn_stage_t;

struct el_conn {
    election_t *el;
    el_conn_t *prev, *next;
    int fd;
    conn_stage_t stage;
    el_peer_t *peer;          /* NULL until an accepted connection names its sender */
    int drop_after_flush;     /* we dialled a larger id: say who we are, then hang up */
    buf_t in, out;
    loop_timer_t *deadline;   /* connect or InitialMessage deadline */
    char remote[320];         /* for log lines */
};

/* A vote as one server reported it (ZooKeeper's Vote with state and version). */
typedef struct {
    int present;
    vote_t vote;
    peer_state_t state;
    int32_t version;
} ballot_t;

typedef struct {
    int64_t sid;
    election_notification_t n;
} received_t;

struct election {
    loop_t *loop;
    resolver_t *resolver;     /* members' host names, looked up when dialled (the keeper's) */
    int64_t my_id;
    el_peer_t peers[KEEPER_MAX_SERVERS];
    int npeers;
    int voters;               /* peers that are not observers */
    ensemble_config_t next;   /* the pending configuration: a reconfig this server has logged
                                 and not seen committed (ZooKeeper's last seen verifier) */
    int has_next;             /* next is newer than the active one: a vote needs both quorums */
    int next_voters;          /* its voters (peers with next_voter) */
    el_peer_t *self;
    char config_text[ENSEMBLE_CONFIG_TEXT_MAX];   /* our voting view, sent in every notification */
    size_t config_len;
    int64_t config_version;              /* its version (the reconfig's zxid; 0: static) */
    election_config_fn on_config;        /* a LOOKING notification carried a newer config */
    void *on_config_arg;
    loop_timer_t *restart_timer;         /* the round restarts after adopting one */
    int accept_strangers;                /* reconfigEnabled: servers outside the config are answered */
    char my_address[300];                /* "host:port" of our InitialMessage */
    int listen_fd;
    accept_backoff_t accept;             /* the listener, paused when descriptors run out */
    el_conn_t *conns;                    /* every connection, any stage */
    handshake_room_t room;               /* accepted connections that have not named themselves */
    uint64_t handshake_timeout_ms;
    ratelimit_t stranger_log;            /* lines about them: anyone can make more */

    peer_state_t state;
    vote_t current;           /* our answer to LOOKING peers outside a round */
    int in_round, finalizing, draining;
    int64_t logical_clock;
    vote_t proposal;          /* leader, zxid, peer_epoch (election_epoch unused) */
    int64_t init_zxid, init_epoch;
    ballot_t recvset[KEEPER_MAX_SERVERS];        /* votes of this round, by peer index */
    ballot_t outofelection[KEEPER_MAX_SERVERS];  /* FOLLOWING/LEADING reports, any round */
    uint64_t not_timeout_ms;
    uint64_t round_started_ms;
    loop_timer_t *notify_timer, *finalize_timer, *done_timer;
    received_t inbox[INBOX_CAPACITY];
    int inbox_head, inbox_len;
    election_done_fn done;
    void *done_arg;
    peer_state_t decided_state;
    vote_t decided_vote;
};

static void conn_on_io(loop_t *loop, int fd, unsigned events, void *arg);
static void peer_maybe_dial(el_peer_t *p);
static el_peer_t *peer_slot(election_t *el, int64_t id, int evict);
static void peer_dial_failed(el_peer_t *p, const char *why);
static void on_notification(election_t *el, el_peer_t *from, const election_notification_t *n);

/* ==== wire format ==== */

void election_encode_notification(buf_t *out, const election_notification_t *n, const char *config,
                                  size_t config_len)
{
    jute_put_int(out, (int32_t)n->state);
    jute_put_long(out, n->vote.leader);
    jute_put_long(out, n->vote.zxid);
    jute_put_long(out, n->vote.election_epoch);
    jute_put_long(out, n->vote.peer_epoch);
    jute_put_int(out, NOTIFICATION_VERSION);
    jute_put_buffer(out, config, (int32_t)config_len);
}

/* The layouts ZooKeeper 3.8 reads: 28 bytes (no peer epoch: it is the
 * zxid's), 40 bytes (no version), and version >= 2 with a config. A
 * message of another length is read the same way, with anything after the
 * fields ignored, so a truncated one fails where ZooKeeper would underflow. */
int election_decode_notification(const uint8_t *msg, size_t len, election_notification_t *n,
                                 const char **why)
{
    if (len < 28) {
        *why = "notification shorter than 28 bytes";
        return -1;
    }
    jute_in_t in;
    jute_in_init(&in, msg, len);
    int32_t state = jute_get_int(&in);
    n->vote.leader = jute_get_long(&in);
    n->vote.zxid = jute_get_long(&in);
    n->vote.election_epoch = jute_get_long(&in);
    n->version = 0;
    n->config = NULL;
    n->config_len = 0;
    if (len == 28) {
        n->vote.peer_epoch = n->vote.zxid >> 32;   /* ZxidUtils.getEpochFromZxid */
    } else {
        n->vote.peer_epoch = jute_get_long(&in);
        if (len != 40)
            n->version = jute_get_int(&in);
        if (!in.error && n->version > 1) {
            int32_t config_len = jute_get_int(&in);
            if (!in.error && (config_len < 0 || (size_t)config_len > len)) {
                *why = "notification with a bad config length";
                return -1;
            }
            if (!in.error && jute_remaining(&in) < (size_t)config_len)
                in.error = 1;
            if (!in.error) {
                n->config = msg + in.pos;
                n->config_len = config_len;
            }
        }
    }
    if (in.error) {
        *why = "truncated notification";
        return -1;
    }
    if (state < PEER_LOOKING || state > PEER_OBSERVING) {
        *why = "notification with an unknown server state";
        return -1;
    }
    n->state = (peer_state_t)state;
    return 0;
}

/* One "host:port" or "[v6]:port" of an InitialMessage. We dial peers at the
 * address of their server.N line, so this is only checked, as ZooKeeper
 * does, to refuse garbage. */
static int address_ok(const char *s, size_t len)
{
    const char *colon;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close || close == s + 1 || (size_t)(close - s) + 1 >= len || close[1] != ':')
            return 0;
        colon = close + 1;
    } else {
        colon = memchr(s, ':', len);
        if (!colon || colon == s || memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)))
            return 0;
    }
    size_t digits = len - (size_t)(colon + 1 - s);
    if (digits == 0 || digits > 5)
        return 0;
    long port = 0;
    for (size_t i = 0; i < digits; i++) {
        char ch = colon[1 + i];
        if (ch < '0' || ch > '9')
            return 0;
        port = port * 10 + (ch - '0');
    }
    return port <= 65535;
}

static int addresses_ok(const uint8_t *text, size_t len)
{
    const char *s = (const char *)text, *end = s + len;
    int any = 0;
    while (s < end) {
        const char *bar = memchr(s, '|', (size_t)(end - s));
        const char *stop = bar ? bar : end;
        if (stop > s) {   /* Java's split drops empty trailing parts */
            if (!address_ok(s, (size_t)(stop - s)))
                return 0;
            any = 1;
        }
        s = bar ? bar + 1 : end;
    }
    return any;
}

int election_parse_initial_message(const uint8_t *p, size_t len, int64_t *sid, size_t *consumed,
                                   const char **why)
{
    if (len < 8)
        return 0;
    int64_t version = (int64_t)be64_get(p);
    if (version >= 0) {   /* a server before 3.5 sends just its id */
        *sid = version;
        *consumed = 8;
        return 1;
    }
    if (version != PROTOCOL_VERSION_V1 && version != PROTOCOL_VERSION_V2) {
        *why = "unrecognized protocol version in the initial message";
        return -1;
    }
    if (len < 20)
        return 0;
    int32_t addr_len = (int32_t)be32_get(p + 16);
    if (addr_len <= 0 || addr_len > INITIAL_ADDRESS_MAX) {
        *why = "unreasonable address length in the initial message";
        return -1;
    }
    if (len < 20 + (size_t)addr_len)
        return 0;
    if (!addresses_ok(p + 20, (size_t)addr_len)) {
        *why = "badly formed address in the initial message";
        return -1;
    }
    *sid = (int64_t)be64_get(p + 8);
    *consumed = 20 + (size_t)addr_len;
    return 1;
}

static void put_initial_message(buf_t *out, const election_t *el)
{
    jute_put_long(out, PROTOCOL_VERSION_V1);
    jute_put_long(out, el->my_id);
    jute_put_buffer(out, el->my_address, (int32_t)strlen(el->my_address));
}

static void put_framed_notification(buf_t *out, const election_t *el, const election_notification_t *n)
{
    jute_put_int(out, (int32_t)(44 + el->config_len));
    election_encode_notification(out, n, el->config_text, el->config_len);
}

/* ==== small helpers ==== */

const char *election_state_name(peer_state_t state)
{
    switch (state) {
    case PEER_LOOKING: return "LOOKING";
    case PEER_FOLLOWING: return "FOLLOWING";
    case PEER_LEADING: return "LEADING";
    case PEER_OBSERVING: return "OBSERVING";
    }
    return "?";
}

peer_state_t election_state(const election_t *el)
{
    return el->state;
}

int64_t election_logical_clock(const election_t *el)
{
    return el->logical_clock;
}

static el_peer_t *find_peer(election_t *el, int64_t id)
{
    for (int i = 0; i < el->npeers; i++)
        if (el->peers[i].id == id)
            return &el->peers[i];
    return NULL;
}

static void cancel_timer(loop_t *loop, loop_timer_t **t)
{
    if (*t) {
        loop_timer_cancel(loop, *t);
        *t = NULL;
    }
}

/* ==== connections ==== */

static el_conn_t *conn_new(election_t *el, int fd, conn_stage_t stage, el_peer_t *peer)
{
    el_conn_t *c = xcalloc(1, sizeof(*c));
    c->el = el;
    c->fd = fd;
    c->stage = stage;
    c->peer = peer;
    buf_init(&c->in);
    buf_init(&c->out);
    c->next = el->conns;
    if (el->conns)
        el->conns->prev = c;
    el->conns = c;
    return c;
}

static void conn_update_watch(el_conn_t *c)
{
    unsigned ev = LOOP_READABLE;
    if (c->stage == CONN_DIALING)
        ev = LOOP_WRITABLE;
    else if (buf_unread(&c->out) > 0 || (c->peer && c->peer->conn == c && c->peer->has_pending))
        ev |= LOOP_WRITABLE;
    loop_watch(c->el->loop, c->fd, ev, conn_on_io, c);
}

/* Release a connection, leaving the peer without it. No redial: see conn_close. */
static void conn_free(el_conn_t *c)
{
    election_t *el = c->el;
    if (c->prev)
        c->prev->next = c->next;
    else
        el->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->stage == CONN_HANDSHAKE)
        handshake_leave(&el->room, c);
    if (c->peer && c->peer->conn == c)
        c->peer->conn = NULL;
    if (c->peer && c->peer->dial == c)
        c->peer->dial = NULL;
    cancel_timer(el->loop, &c->deadline);
    loop_unwatch(el->loop, c->fd);
    close(c->fd);
    buf_free(&c->in);
    buf_free(&c->out);
    free(c);
}

/* Close with a log line (why NULL: quietly) and, if the peer is left without
 * a link while it has something to send, dial it again after the backoff.
 * Lines about a connection that never named a peer are rate-limited: a
 * stranger can open as many as it likes. */
static void conn_close(el_conn_t *c, log_level_t level, const char *why)
{
    el_peer_t *p = c->peer;
    int was_link = p && (p->conn == c || p->dial == c);
    uint64_t missed = 0;
    if (why && (p || ratelimit_allow(&c->el->stranger_log, loop_now_ms(c->el->loop), &missed))) {
        char more[64] = "";
        if (missed)
            snprintf(more, sizeof(more), " (%llu such lines left out)", (unsigned long long)missed);
        log_write(level, "election %lld: closing connection %s: %s%s", (long long)c->el->my_id, c->remote, why,
                  more);
    }
    conn_free(c);
    if (was_link)
        peer_maybe_dial(p);
}

static void on_conn_deadline(loop_t *loop, void *arg)
{
    (void)loop;
    el_conn_t *c = arg;
    c->deadline = NULL;
    if (c->stage == CONN_DIALING) {
        peer_dial_failed(c->peer, "connect timed out");
        conn_close(c, LOG_LEVEL_DEBUG, NULL);
    } else
        conn_close(c, LOG_LEVEL_WARN, "no initial message in time");
}

/* A new connection for p (accepted from a larger id, or ours to a smaller
 * one): it replaces the old one, and the last notification is sent again in
 * case the old connection lost it. */
static void peer_adopt_conn(el_peer_t *p, el_conn_t *c)
{
    election_t *el = p->el;
    el_conn_t *old = p->conn;
    p->conn = c;
    if (p->dial == c)
        p->dial = NULL;
    if (old)
        conn_close(old, LOG_LEVEL_INFO, "replaced by a newer connection");
    if (p->dial && p->dial->stage == CONN_DIALING)   /* a dial to a larger id has become pointless */
        conn_close(p->dial, LOG_LEVEL_DEBUG, NULL);
    cancel_timer(el->loop, &p->redial_timer);
    /* Not at once after a link drops: a stale InitialMessage of ours that
     * reaches a larger peer makes it drop this link and dial back, and
     * dialling again at once could keep that going. */
    p->backoff_ms = DIAL_BACKOFF_MIN_MS;
    p->next_dial_ms = loop_now_ms(el->loop) + DIAL_BACKOFF_MIN_MS;
    p->outage_logged = 0;
    if (!p->has_pending && p->has_last_sent) {
        p->pending = p->last_sent;
        p->has_pending = 1;
    }
    log_info("election %lld: connected to server %lld (%s)", (long long)el->my_id, (long long)p->id, c->remote);
    conn_update_watch(c);
}

static void peer_dial_failed(el_peer_t *p, const char *why)
{
    election_t *el = p->el;
    if (!p->outage_logged)
        log_info("election %lld: cannot reach server %lld at %s:%d: %s; retrying with backoff", (long long)el->my_id,
                 (long long)p->id, p->host, p->election_port, why);
    else
        log_debug("election %lld: cannot reach server %lld: %s", (long long)el->my_id, (long long)p->id, why);
    p->outage_logged = 1;
}

/* The TCP connection is up: say who we are. To a larger id that is all we
 * do (it drops our connection and dials back, ZooKeeper's rule); to a
 * smaller id this is the connection. So is it when we are outside our own
 * configuration (removed, or about to be added): the peer has no line to
 * dial us back at, and keeps the connection (conn_accept_peer). */
static void conn_connected(el_conn_t *c)
{
    el_peer_t *p = c->peer;
    cancel_timer(c->el->loop, &c->deadline);
    c->stage = CONN_OPEN;
    put_initial_message(&c->out, c->el);
    if (p->id > c->el->my_id && c->el->self->member) {
        c->drop_after_flush = 1;
        conn_update_watch(c);
    } else {
        peer_adopt_conn(p, c);
    }
}

static void conn_finish_connect(el_conn_t *c)
{
    int rc = net_connect_result(c->fd);
    if (rc > 0)
        return;   /* a stale wake-up: still connecting */
    if (rc < 0) {
        peer_dial_failed(c->peer, strerror(errno));
        conn_close(c, LOG_LEVEL_DEBUG, NULL);
        return;
    }
    conn_connected(c);
}

/* The member's host name is looked up off the loop (base/resolver.h) and
 * dialled once known; while the lookup runs, p is dialled again shortly,
 * which is not a failed attempt and does not lengthen its backoff. A name
 * that does not resolve is a failed attempt: ZooKeeper too keeps trying a
 * member whose name is not in DNS yet. */
static void peer_dial(el_peer_t *p)
{
    election_t *el = p->el;
    uint64_t now = loop_now_ms(el->loop);
    char err[320];
    int connected;
    int fd = resolver_connect(el->resolver, p->host, p->election_port, &connected, err, sizeof(err));
    if (fd == RESOLVER_CONNECT_PENDING) {
        p->next_dial_ms = now + RESOLVER_POLL_MS;
        peer_maybe_dial(p);
        return;
    }
    p->next_dial_ms = now + p->backoff_ms;
    p->backoff_ms = p->backoff_ms * 2 > DIAL_BACKOFF_MAX_MS ? DIAL_BACKOFF_MAX_MS : p->backoff_ms * 2;
    if (fd < 0) {
        peer_dial_failed(p, err);
        peer_maybe_dial(p);
        return;
    }
    el_conn_t *c = conn_new(el, fd, CONN_DIALING, p);
    snprintf(c->remote, sizeof(c->remote), "to server %lld at %s:%d", (long long)p->id, p->host, p->election_port);
    p->dial = c;
    c->deadline = loop_timer_add(el->loop, CONNECT_TIMEOUT_MS, on_conn_deadline, c);
    if (connected)
        conn_connected(c);
    else
        conn_update_watch(c);
}

static void on_redial(loop_t *loop, void *arg)
{
    (void)loop;
    el_peer_t *p = arg;
    p->redial_timer = NULL;
    peer_maybe_dial(p);
}

/* Dial p if it has something to send and no link, once the backoff allows. */
static void peer_maybe_dial(el_peer_t *p)
{
    election_t *el = p->el;
    if (p == el->self || p->conn || p->dial || !p->has_pending || !p->dialable)
        return;
    uint64_t now = loop_now_ms(el->loop);
    if (now >= p->next_dial_ms)
        peer_dial(p);
    else if (!p->redial_timer)
        p->redial_timer = loop_timer_add(el->loop, p->next_dial_ms - now, on_redial, p);
}

/* Queue n for p: it replaces an unsent older notification. */
static void peer_send(el_peer_t *p, const election_notification_t *n)
{
    p->pending = *n;
    p->has_pending = 1;
    if (p->conn)
        conn_update_watch(p->conn);
    else
        peer_maybe_dial(p);
}

/* Write what the socket takes; an open connection takes the peer's queued
 * notification once the previous one is out. -1 if the connection closed. */
static int conn_flush(el_conn_t *c)
{
    for (;;) {
        if (buf_unread(&c->out) == 0) {
            if (c->drop_after_flush) {
                conn_close(c, LOG_LEVEL_DEBUG, NULL);
                return -1;
            }
            el_peer_t *p = c->peer;
            if (!p || p->conn != c || !p->has_pending)
                break;
            p->last_sent = p->pending;
            p->has_last_sent = 1;
            p->has_pending = 0;
            put_framed_notification(&c->out, c->el, &p->last_sent);
        }
        if (net_write_buffer(c->fd, &c->out) < 0) {
            conn_close(c, LOG_LEVEL_INFO, strerror(errno));
            return -1;
        }
        if (buf_unread(&c->out) > 0)
            break;   /* the socket is full */
    }
    conn_update_watch(c);
    return 0;
}

/* The sender of an accepted connection has named itself. ZooKeeper's rule:
 * the connection is kept if the sender's id is larger; from a smaller id we
 * drop it, and the link we had (the peer would not dial if it still had
 * it), and dial the peer ourselves. 1 if c is now open, -1 if closed. */
static int conn_accept_peer(el_conn_t *c, int64_t sid)
{
    election_t *el = c->el;
    /* A server outside our configuration (one about to be added, or one
     * removed that runs on) keeps its connection whatever its id, so that
     * it learns whom we follow: we have no address to dial it back at.
     * ZooKeeper dials back the address its InitialMessage claims; we dial
     * only members' lines, so that a stranger cannot make us dial anywhere.
     * Only with reconfigEnabled: without it no server can be added or
     * removed, and strangers are refused as before. */
    el_peer_t *p = find_peer(el, sid);
    if (!p && el->accept_strangers && sid >= 1 && sid <= ENSEMBLE_MAX_SERVER_ID)
        p = peer_slot(el, sid, 0);
    char why[96];
    if (!p || p == el->self) {
        snprintf(why, sizeof(why), "server id %lld is %s", (long long)sid,
                 p ? "our own" : "not in our configuration");
        conn_close(c, LOG_LEVEL_WARN, why);
        return -1;
    }
    cancel_timer(el->loop, &c->deadline);
    handshake_leave(&el->room, c);
    if (sid < el->my_id && p->dialable) {
        log_debug("election %lld: server %lld dialled us; dialling it back", (long long)el->my_id, (long long)sid);
        conn_free(c);
        if (p->conn)
            conn_close(p->conn, LOG_LEVEL_INFO, "the peer dialled again");
        if (!p->conn && !p->dial && p->dialable)
            peer_dial(p);
        return -1;
    }
    c->stage = CONN_OPEN;
    c->peer = p;
    size_t used = strlen(c->remote);
    snprintf(c->remote + used, sizeof(c->remote) - used, " (server %lld)", (long long)sid);
    peer_adopt_conn(p, c);
    return 1;
}

/* Read the InitialMessage: 1 when done (c is open), 0 for more bytes, -1 closed. */
static int conn_read_initial(el_conn_t *c)
{
    int64_t sid;
    size_t used;
    const char *why = NULL;
    int rc = election_parse_initial_message(buf_read_ptr(&c->in), buf_unread(&c->in), &sid, &used, &why);
    if (rc == 0)
        return 0;
    if (rc < 0) {
        conn_close(c, LOG_LEVEL_WARN, why);
        return -1;
    }
    buf_consume(&c->in, used);
    return conn_accept_peer(c, sid);
}

static void conn_read_messages(el_conn_t *c)
{
    while (buf_unread(&c->in) >= 4) {
        int32_t len = (int32_t)be32_get(buf_read_ptr(&c->in));
        if (len <= 0 || len > ELECTION_MAX_MESSAGE) {
            char why[64];
            snprintf(why, sizeof(why), "invalid message length %d", len);
            conn_close(c, LOG_LEVEL_WARN, why);
            return;
        }
        if (buf_unread(&c->in) < 4 + (size_t)len)
            return;
        election_notification_t n;
        const char *why = NULL;
        if (election_decode_notification(buf_read_ptr(&c->in) + 4, (size_t)len, &n, &why) < 0) {
            conn_close(c, LOG_LEVEL_WARN, why);
            return;
        }
        buf_consume(&c->in, 4 + (size_t)len);
        on_notification(c->el, c->peer, &n);   /* never closes c */
    }
}

static void conn_read(el_conn_t *c)
{
    ssize_t n = net_read_into(&c->in, c->fd, READ_CHUNK);
    if (n == 0) {
        conn_close(c, c->drop_after_flush ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO, "closed by the peer");
        return;
    }
    if (n < 0) {
        if (errno != EAGAIN)
            conn_close(c, LOG_LEVEL_INFO, strerror(errno));
        return;
    }
    if (c->drop_after_flush) {   /* a connection we are about to drop has nothing to say */
        buf_clear(&c->in);
        return;
    }
    if (c->stage == CONN_HANDSHAKE && conn_read_initial(c) <= 0)
        return;
    conn_read_messages(c);
}

static void conn_on_io(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)fd;
    el_conn_t *c = arg;
    if (c->stage == CONN_DIALING) {
        conn_finish_connect(c);
        return;
    }
    if ((events & LOOP_WRITABLE) && conn_flush(c) < 0)
        return;
    if (events & LOOP_READABLE)
        conn_read(c);
}

static void on_accept(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)events;
    election_t *el = arg;
    for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
        char ip[64];
        int port = 0;
        int cfd = net_accept(fd, ip, sizeof(ip), &port);
        if (cfd < 0) {
            if (accept_backoff_failed(&el->accept, errno))
                return;   /* none waiting, or out of descriptors: paused */
            continue;
        }
        accept_backoff_accepted(&el->accept);
        el_conn_t *victim = handshake_victim(&el->room, ip);
        if (victim)   /* the oldest stranger gives way: see handshake.h */
            conn_close(victim, LOG_LEVEL_WARN, "a newer connection needs its place (still unnamed)");
        el_conn_t *c = conn_new(el, cfd, CONN_HANDSHAKE, NULL);
        snprintf(c->remote, sizeof(c->remote), "from %s:%d", ip, port);
        if (handshake_enter(&el->room, ip, c) < 0) {   /* cannot happen once the victim left */
            conn_free(c);
            continue;
        }
        c->deadline = loop_timer_add(el->loop, el->handshake_timeout_ms, on_conn_deadline, c);
        conn_update_watch(c);
        /* A peer sends its InitialMessage as soon as it is connected, so it
         * is often here already: take it now, and the connection leaves the
         * room before anyone else arrives. (c may be closed after this.) */
        conn_read(c);
    }
}

/* ==== the election ==== */

/* ZooKeeper's totalOrderPredicate (every server has weight 1 in QuorumMaj). */
int election_vote_beats(int64_t id, int64_t zxid, int64_t epoch, int64_t cur_id, int64_t cur_zxid,
                        int64_t cur_epoch)
{
    if (epoch != cur_epoch)
        return epoch > cur_epoch;
    if (zxid != cur_zxid)
        return zxid > cur_zxid;
    return id > cur_id;
}

/* ZooKeeper's Vote.equals: in an election everything counts; outside one
 * only the leader and its epoch (zxids and rounds drift after the
 * election), and only the leader between servers of the old format. */
static int ballot_equals(const ballot_t *a, const ballot_t *b)
{
    if (a->state == PEER_LOOKING || b->state == PEER_LOOKING)
        return a->vote.leader == b->vote.leader && a->vote.zxid == b->vote.zxid &&
               a->vote.election_epoch == b->vote.election_epoch && a->vote.peer_epoch == b->vote.peer_epoch;
    if ((a->version > 0) != (b->version > 0))
        return a->vote.leader == b->vote.leader;
    return a->vote.leader == b->vote.leader && a->vote.peer_epoch == b->vote.peer_epoch;
}

/* ZooKeeper's validVoter: a voter of the active configuration or of the
 * pending one. Its notifications count and it is sent ours. */
static int takes_part(const el_peer_t *p)
{
    return !p->nonvoter || p->next_voter;
}

/* QuorumMaj: more than half of the voters hold this vote (an observer's
 * ballot is never recorded, and would not count). With a reconfig pending,
 * more than half of its voters too (ZooKeeper's getVoteTracker adds the
 * last seen verifier): it may have been committed with both quorums and
 * proposals after it with the new one alone, so a leader elected by the
 * old voters alone could lack them and truncate them away. */
static int has_quorum(const election_t *el, const ballot_t *set, const ballot_t *target)
{
    int acks = 0, next_acks = 0;
    for (int i = 0; i < el->npeers; i++) {
        if (!set[i].present || !ballot_equals(&set[i], target))
            continue;
        acks += !el->peers[i].nonvoter;
        next_acks += el->peers[i].next_voter;
    }
    return acks >= quorum_majority(el->voters) && (!el->has_next || next_acks >= quorum_majority(el->next_voters));
}

/* ZooKeeper's checkLeader: a quorum is not enough to follow someone else;
 * the leader itself must have said LEADING, or we would keep electing a
 * crashed one. For ourselves, the round must be the current one. */
static int leader_confirmed(election_t *el, const ballot_t *set, int64_t leader, int64_t election_epoch)
{
    if (leader != el->my_id) {
        el_peer_t *p = find_peer(el, leader);
        const ballot_t *b = p ? &set[p - el->peers] : NULL;
        return b && b->present && b->state == PEER_LEADING;
    }
    return el->logical_clock == election_epoch;
}

static void inbox_push(election_t *el, int64_t sid, const election_notification_t *n)
{
    if (el->inbox_len == INBOX_CAPACITY) {   /* full: drop the oldest, as CircularBlockingQueue does */
        el->inbox_head = (el->inbox_head + 1) % INBOX_CAPACITY;
        el->inbox_len--;
    }
    received_t *r = &el->inbox[(el->inbox_head + el->inbox_len) % INBOX_CAPACITY];
    r->sid = sid;
    r->n = *n;
    r->n.config = NULL;   /* it pointed into the read buffer */
    r->n.config_len = 0;
    el->inbox_len++;
}

static received_t inbox_pop(election_t *el)
{
    received_t r = el->inbox[el->inbox_head];
    el->inbox_head = (el->inbox_head + 1) % INBOX_CAPACITY;
    el->inbox_len--;
    return r;
}

static election_notification_t our_proposal(const election_t *el)
{
    election_notification_t n = {PEER_LOOKING,
                                 {el->proposal.leader, el->proposal.zxid, el->logical_clock, el->proposal.peer_epoch},
                                 NOTIFICATION_VERSION, NULL, 0};
    return n;
}

/* Tell every voter, ourselves included (through the inbox) unless we
 * observe, our proposal. */
static void send_notifications(election_t *el)
{
    election_notification_t n = our_proposal(el);
    log_debug("election %lld: sending notifications: leader %lld, zxid 0x%llx, round 0x%llx, peer epoch 0x%llx",
              (long long)el->my_id, (long long)n.vote.leader, (unsigned long long)n.vote.zxid,
              (unsigned long long)n.vote.election_epoch, (unsigned long long)n.vote.peer_epoch);
    for (int i = 0; i < el->npeers; i++) {
        if (!takes_part(&el->peers[i]))
            continue;
        if (&el->peers[i] == el->self)
            inbox_push(el, el->my_id, &n);
        else
            peer_send(&el->peers[i], &n);
    }
}

static void on_deliver_decision(loop_t *loop, void *arg)
{
    (void)loop;
    election_t *el = arg;
    el->done_timer = NULL;
    election_done_fn fn = el->done;
    void *fn_arg = el->done_arg;
    peer_state_t state = el->decided_state;
    vote_t vote = el->decided_vote;
    el->done = NULL;
    if (fn)
        fn(fn_arg, state, &vote);   /* may destroy el: nothing after this */
}

static void end_round(election_t *el)
{
    el->in_round = 0;
    el->finalizing = 0;
    el->inbox_len = 0;   /* leaveInstance: what was queued belonged to this round */
    cancel_timer(el->loop, &el->notify_timer);
    cancel_timer(el->loop, &el->finalize_timer);
}

static void decide(election_t *el, const vote_t *vote)
{
    el->state = vote->leader == el->my_id ? PEER_LEADING : el->self->observer && el->self->member ? PEER_OBSERVING
                                                                                             : PEER_FOLLOWING;
    el->current = *vote;
    end_round(el);
    log_info("election %lld: %s - leader %lld, zxid 0x%llx, peer epoch 0x%llx, round 0x%llx; election took %llu ms",
             (long long)el->my_id, election_state_name(el->state), (long long)vote->leader,
             (unsigned long long)vote->zxid, (unsigned long long)vote->peer_epoch,
             (unsigned long long)vote->election_epoch,
             (unsigned long long)(loop_now_ms(el->loop) - el->round_started_ms));
    el->decided_state = el->state;
    el->decided_vote = *vote;
    if (el->done && !el->done_timer)
        el->done_timer = loop_timer_add(el->loop, 0, on_deliver_decision, el);
}

static void on_finalize_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    election_t *el = arg;
    el->finalize_timer = NULL;
    vote_t v = {el->proposal.leader, el->proposal.zxid, el->logical_clock, el->proposal.peer_epoch};
    decide(el, &v);
}

static void arm_finalize_timer(election_t *el)
{
    cancel_timer(el->loop, &el->finalize_timer);
    el->finalize_timer = loop_timer_add(el->loop, FINALIZE_WAIT_MS, on_finalize_timeout, el);
}

static ballot_t looking_ballot(const vote_t *v)
{
    ballot_t b = {1, *v, PEER_LOOKING, 0};
    return b;
}

/* Our own candidacy (ZooKeeper's getInitId and friends): ourselves with
 * our log, or nobody (Long.MIN_VALUE) when we do not vote in the active
 * configuration: an observer, or a voter of the pending one only. */
static vote_t own_candidacy(const election_t *el)
{
    if (el->self->nonvoter)
        return (vote_t){INT64_MIN, INT64_MIN, -1, INT64_MIN};
    return (vote_t){el->my_id, el->init_zxid, -1, el->init_epoch};
}

/* A LOOKING notification in a round: follow the newest round and the best vote. */
static void process_looking(election_t *el, el_peer_t *from, const election_notification_t *n)
{
    /* An observer takes no part in a round: the LOOKING notifications it
     * gets are participants' answers with their last decision, not their
     * proposals, and it waits for a quorum of them to report a leader. */
    if (!takes_part(el->self) || el->init_zxid == -1 || n->vote.zxid == -1)
        return;
    const vote_t *v = &n->vote;
    if (v->election_epoch > el->logical_clock) {
        el->logical_clock = v->election_epoch;
        memset(el->recvset, 0, sizeof(el->recvset));
        vote_t own = own_candidacy(el);
        el->proposal = election_vote_beats(v->leader, v->zxid, v->peer_epoch, own.leader, own.zxid, own.peer_epoch)
                           ? *v
                           : own;
        send_notifications(el);
    } else if (v->election_epoch < el->logical_clock) {
        return;
    } else if (election_vote_beats(v->leader, v->zxid, v->peer_epoch, el->proposal.leader, el->proposal.zxid,
                                   el->proposal.peer_epoch)) {
        el->proposal = *v;
        send_notifications(el);
    }
    el->recvset[from - el->peers] = looking_ballot(v);
    vote_t ours = {el->proposal.leader, el->proposal.zxid, el->logical_clock, el->proposal.peer_epoch};
    ballot_t target = looking_ballot(&ours);
    if (has_quorum(el, el->recvset, &target)) {
        /* Wait finalizeWait for a better vote before deciding. */
        el->finalizing = 1;
        cancel_timer(el->loop, &el->notify_timer);
        arm_finalize_timer(el);
    }
}

/* A FOLLOWING or LEADING notification (ZooKeeper's receivedFollowingNotification):
 * join that leader if a quorum of this round names it, or, for a late
 * server, a quorum of servers already out of the election does. */
static void process_out_of_election(election_t *el, el_peer_t *from, const election_notification_t *n)
{
    int i = (int)(from - el->peers);
    ballot_t target = {1, n->vote, n->state, n->version};
    if (n->vote.election_epoch == el->logical_clock) {
        el->recvset[i] = (ballot_t){1, n->vote, n->state, 0};
        if (has_quorum(el, el->recvset, &target) &&
            leader_confirmed(el, el->recvset, n->vote.leader, n->vote.election_epoch)) {
            decide(el, &n->vote);
            return;
        }
    }
    el->outofelection[i] = target;
    if (has_quorum(el, el->outofelection, &target) &&
        leader_confirmed(el, el->outofelection, n->vote.leader, n->vote.election_epoch)) {
        el->logical_clock = n->vote.election_epoch;
        decide(el, &n->vote);
    }
}

static void process_notification(election_t *el, const received_t *r)
{
    const election_notification_t *n = &r->n;
    el_peer_t *from = find_peer(el, r->sid);
    el_peer_t *leader = find_peer(el, n->vote.leader);
    if (!from || !takes_part(from) || !leader || !takes_part(leader)) {
        log_warn("election %lld: ignoring a notification from %lld for %lld: not a voter", (long long)el->my_id,
                 (long long)r->sid, (long long)n->vote.leader);
        return;
    }
    switch (n->state) {
    case PEER_LOOKING:
        process_looking(el, from, n);
        break;
    case PEER_FOLLOWING:
    case PEER_LEADING:
        process_out_of_election(el, from, n);
        break;
    case PEER_OBSERVING:
        break;   /* observers do not vote */
    }
}

/* In the finalize wait only a better vote matters: it resumes the election;
 * anything else is dropped and the wait starts over, as in ZooKeeper. */
static void finalize_consider(election_t *el, const received_t *r)
{
    const vote_t *v = &r->n.vote;
    if (election_vote_beats(v->leader, v->zxid, v->peer_epoch, el->proposal.leader, el->proposal.zxid,
                            el->proposal.peer_epoch)) {
        el->finalizing = 0;
        cancel_timer(el->loop, &el->finalize_timer);
        process_notification(el, r);
    } else {
        arm_finalize_timer(el);
    }
}

static void on_notify_timeout(loop_t *loop, void *arg);

static void arm_notify_timer(election_t *el)
{
    cancel_timer(el->loop, &el->notify_timer);
    if (el->in_round && !el->finalizing)
        el->notify_timer = loop_timer_add(el->loop, el->not_timeout_ms, on_notify_timeout, el);
}

/* Process the inbox in order while the round lasts. Our own notifications
 * land in the inbox while we process, so this loops rather than recurses. */
static void inbox_drain(election_t *el)
{
    if (el->draining)
        return;
    el->draining = 1;
    while (el->in_round && el->inbox_len > 0) {
        received_t r = inbox_pop(el);
        if (el->finalizing)
            finalize_consider(el, &r);
        else
            process_notification(el, &r);
    }
    el->draining = 0;
    arm_notify_timer(el);   /* the notification timeout counts from the last one taken */
}

/* ZooKeeper's haveDelivered: some peer's queue is empty. */
static int have_delivered(const election_t *el)
{
    for (int i = 0; i < el->npeers; i++)
        if (&el->peers[i] != el->self && takes_part(&el->peers[i]) && !el->peers[i].has_pending)
            return 1;
    return 0;
}

/* ZooKeeper's connectAll: reach every peer we have spoken to, sending the
 * last notification again on the new connection. */
static void connect_all(election_t *el)
{
    for (int i = 0; i < el->npeers; i++) {
        el_peer_t *p = &el->peers[i];
        if (p == el->self || !takes_part(p) || p->conn || p->dial || !p->dialable)
            continue;
        if (!p->has_pending && p->has_last_sent) {
            p->pending = p->last_sent;
            p->has_pending = 1;
        }
        peer_maybe_dial(p);
    }
}

/* Nothing arrived for not_timeout_ms: send our vote again (or reconnect)
 * and back off, 200 ms doubling to 60 s. */
static void on_notify_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    election_t *el = arg;
    el->notify_timer = NULL;
    if (have_delivered(el))
        send_notifications(el);
    else
        connect_all(el);
    el->not_timeout_ms = el->not_timeout_ms * 2 > MAX_NOTIFICATION_INTERVAL_MS ? MAX_NOTIFICATION_INTERVAL_MS
                                                                              : el->not_timeout_ms * 2;
    log_info("election %lld: notification time out: %llu ms", (long long)el->my_id,
             (unsigned long long)el->not_timeout_ms);
    inbox_drain(el);
}

/* Between a participant and an observer (either way round). A participant
 * answers an observer that is looking with its state and current vote, in
 * its current round, and counts nothing it says; ZooKeeper answers whatever
 * a non-voter sends, but an answer to an answer would echo for as long as
 * the participant looks. An observer queues what participants say for its
 * own round and answers nothing, and ignores other observers. */
static void on_non_voter_notification(election_t *el, el_peer_t *from, const election_notification_t *n)
{
    if (takes_part(el->self)) {
        if (n->state == PEER_LOOKING) {
            vote_t v = el->current;
            v.election_epoch = el->logical_clock;
            election_notification_t ours = {el->state, v, NOTIFICATION_VERSION, NULL, 0};
            peer_send(from, &ours);
        }
        return;
    }
    if (!takes_part(from) || el->state != PEER_LOOKING)
        return;
    inbox_push(el, from->id, n);
    if (el->in_round)
        inbox_drain(el);
}

static void on_restart(loop_t *loop, void *arg)
{
    (void)loop;
    election_t *el = arg;
    el->restart_timer = NULL;
    /* ZooKeeper starts a new FastLeaderElection, whose round counts from
     * zero again: the members' round is where ours must meet theirs (a
     * server that proposes nobody cannot pull them on to its own). */
    el->logical_clock = 0;
    if (el->in_round)
        election_look(el, el->init_zxid, el->init_epoch, el->done, el->done_arg);
}

/* ZooKeeper's WorkerReceiver: a LOOKING server that hears of a config newer
 * than its own takes it (QuorumPeer.processReconfig) and starts its round
 * over with the new voters. 1 when it did: the notification is dropped. A
 * config that does not parse is ignored, as ZooKeeper logs and goes on. */
static int maybe_adopt_config(election_t *el, el_peer_t *from, const election_notification_t *n)
{
    /* Only from a member of our config: ZooKeeper takes it from anyone, but
     * then any stranger on the election port could rewrite the membership
     * (a server about to be added hears it from members it knows). */
    if (!n->config || n->config_len <= 0 || el->state != PEER_LOOKING || !from->member)
        return 0;
    /* Cheap test first: every notification carries the config, almost
     * always the one we have. */
    if ((size_t)n->config_len == el->config_len && !memcmp(n->config, el->config_text, el->config_len))
        return 0;
    static_assert(sizeof(ensemble_config_t) < 64 * 1024, "ensemble_config_t lives on the stack here");
    ensemble_config_t c;
    char err[200];
    if (ensemble_config_parse(&c, (const char *)n->config, (size_t)n->config_len, err, sizeof(err)) < 0) {
        log_warn("election %lld: server %lld sent a config that does not parse (%s); ignored", (long long)el->my_id,
                 (long long)from->id, err);
        return 0;
    }
    if (c.version <= el->config_version)
        return 0;
    if (c.n == 0 || ensemble_config_voters(&c) == 0)
        return 0;   /* nobody could be elected with it */
    log_info("election %lld: server %lld has config version %llx, ours is %llx: taking it and restarting the round",
             (long long)el->my_id, (long long)from->id, (unsigned long long)c.version,
             (unsigned long long)el->config_version);
    election_set_config(el, &c);
    if (el->on_config)
        el->on_config(el->on_config_arg, &c);
    if (el->in_round && !el->restart_timer)
        el->restart_timer = loop_timer_add(el->loop, 0, on_restart, el);
    return 1;
}

/* ZooKeeper's WorkerReceiver: what a peer's notification does right away. */
static void on_notification(election_t *el, el_peer_t *from, const election_notification_t *n)
{
    if (maybe_adopt_config(el, from, n))
        return;
    log_debug("election %lld: notification from %lld: state %s, leader %lld, zxid 0x%llx, round 0x%llx, "
              "peer epoch 0x%llx, version 0x%x; we are %s",
              (long long)el->my_id, (long long)from->id, election_state_name(n->state), (long long)n->vote.leader,
              (unsigned long long)n->vote.zxid, (unsigned long long)n->vote.election_epoch,
              (unsigned long long)n->vote.peer_epoch, (unsigned)n->version, election_state_name(el->state));
    if (!takes_part(from) || !takes_part(el->self)) {
        on_non_voter_notification(el, from, n);
        return;
    }
    if (el->state == PEER_LOOKING) {
        inbox_push(el, from->id, n);
        if (n->state == PEER_LOOKING && n->vote.election_epoch < el->logical_clock) {
            election_notification_t ours = our_proposal(el);   /* it lags a round: catch it up */
            peer_send(from, &ours);
        }
        if (el->in_round)
            inbox_drain(el);
    } else if (n->state == PEER_LOOKING) {
        /* Past the election: tell the looking peer whom we follow, or that we lead. */
        election_notification_t ours = {el->state, el->current, NOTIFICATION_VERSION, NULL, 0};
        peer_send(from, &ours);
    }
}

/* ==== the interface ==== */

/* A slot for server id: its own, a free one, or NULL when all are taken. A
 * slot of a server known only by a connection it made (no address) is free
 * again once that connection is gone; a member's slot stays as long as the
 * election (ballots are kept by slot). */
static el_peer_t *peer_slot(election_t *el, int64_t id, int evict)
{
    el_peer_t *p = find_peer(el, id);
    if (p)
        return p;
    for (int i = 0; i < el->npeers; i++) {
        el_peer_t *q = &el->peers[i];
        if (!q->member && !q->dialable && !q->conn && !q->dial && q != el->self) {
            p = q;
            break;
        }
    }
    if (!p && el->npeers < KEEPER_MAX_SERVERS)
        p = &el->peers[el->npeers++];
    /* A member comes before a server known only by its connection: anyone
     * may open those, and must not keep a member out. */
    for (int i = 0; !p && evict && i < el->npeers; i++) {
        el_peer_t *q = &el->peers[i];
        if (!q->member && !q->dialable && q != el->self) {
            if (q->conn)
                conn_free(q->conn);
            if (q->dial)
                conn_free(q->dial);
            p = q;
        }
    }
    if (!p)
        return NULL;
    cancel_timer(el->loop, &p->redial_timer);
    memset(p, 0, sizeof(*p));
    p->el = el;
    p->id = id;
    p->nonvoter = 1;
    p->backoff_ms = DIAL_BACKOFF_MIN_MS;
    return p;
}

/* A member line gives p its address (kept when unchanged, so that a
 * connection in use stays). */
static void take_address(el_peer_t *p, const ensemble_member_t *m)
{
    int moved = strcmp(p->host, m->host) != 0 || p->election_port != m->election_port;
    p->quorum_port = m->quorum_port;
    if (moved || !p->dialable) {
        snprintf(p->host, sizeof(p->host), "%s", m->host);
        p->election_port = m->election_port;
        p->dialable = 1;
    }
}

/* Mark the pending configuration's voters (none once it is not newer than
 * the active one). One that is not a member of the active configuration,
 * a server being added, is dialled at its line's address. */
static int apply_next_config(election_t *el, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < el->npeers; i++)
        el->peers[i].next_voter = 0;
    el->next_voters = 0;
    if (el->has_next && el->next.version <= el->config_version)
        el->has_next = 0;
    for (int i = 0; el->has_next && i < el->next.n; i++) {
        const ensemble_member_t *m = &el->next.members[i];
        if (m->observer)
            continue;
        el_peer_t *p = peer_slot(el, m->id, 1);
        if (!p) {
            snprintf(err, errlen, "no room for server.%d (at most %d servers)", m->id, KEEPER_MAX_SERVERS);
            rc = -1;
            continue;
        }
        if (!p->member)
            take_address(p, m);
        p->next_voter = 1;
        el->next_voters++;
    }
    return rc;
}

/* Bring the peers in line with configuration c (QuorumCnxManager's views
 * follow the committed configuration): members are added and resolved,
 * servers that left it stay as non-voters with their connections (a removed
 * server still hears whom we follow), roles change. The config text sent
 * in every notification is c in QuorumMaj.toString()'s bytes, with its
 * version: a peer acts on a config newer than its own. Host names are
 * looked up when a member is dialled (peer_dial), not here. -1 with err
 * when there is no room for a member (the rest applies). */
static int apply_config(election_t *el, const ensemble_config_t *c, char *err, size_t errlen)
{
    int rc = 0;
    for (int i = 0; i < el->npeers; i++)
        el->peers[i].member = 0;
    for (int i = 0; i < c->n; i++) {
        const ensemble_member_t *m = &c->members[i];
        el_peer_t *p = peer_slot(el, m->id, 1);
        if (!p) {
            snprintf(err, errlen, "no room for server.%d (at most %d servers)", m->id, KEEPER_MAX_SERVERS);
            rc = -1;
            continue;
        }
        p->member = 1;
        p->observer = m->observer;
        take_address(p, m);
    }
    el->voters = 0;
    for (int i = 0; i < el->npeers; i++) {
        el_peer_t *p = &el->peers[i];
        p->nonvoter = !p->member || p->observer;
        el->voters += !p->nonvoter;
    }
    size_t len = ensemble_config_format(c, el->config_text, sizeof(el->config_text));
    el->config_len = len < sizeof(el->config_text) ? len : sizeof(el->config_text) - 1;
    el->config_version = c->version;
    if (apply_next_config(el, err, errlen) < 0)
        rc = -1;
    return rc;
}

void election_set_config(election_t *el, const ensemble_config_t *c)
{
    char err[300];
    if (apply_config(el, c, err, sizeof(err)) < 0)
        log_warn("election %lld: configuration version %llx: %s", (long long)el->my_id,
                 (unsigned long long)c->version, err);
    log_info("election %lld: configuration version %llx: %d members, %d voters%s", (long long)el->my_id,
             (unsigned long long)c->version, c->n, el->voters,
             el->self->member ? "" : "; this server is not one of them");
}

void election_set_next_config(election_t *el, const ensemble_config_t *next)
{
    int had = el->has_next;
    int64_t had_version = el->next.version;
    el->has_next = next && next->version > el->config_version;
    if (el->has_next)
        el->next = *next;
    char err[300];
    if (apply_next_config(el, err, sizeof(err)) < 0)
        log_warn("election %lld: pending configuration version %llx: %s", (long long)el->my_id,
                 (unsigned long long)el->next.version, err);
    if (el->has_next && (!had || had_version != el->next.version))
        log_info("election %lld: configuration version %llx pending (%d voters): a vote needs a quorum of it too",
                 (long long)el->my_id, (unsigned long long)el->next.version, el->next_voters);
}

int64_t election_config_version(const election_t *el)
{
    return el->config_version;
}

election_t *election_create(loop_t *loop, resolver_t *resolver, const keeper_config_t *cfg,
                            const ensemble_config_t *ens, election_config_fn on_config, void *arg, char *err,
                            size_t errlen)
{
    election_t *el = calloc(1, sizeof(*el));
    if (!el) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    el->loop = loop;
    el->resolver = resolver;
    el->my_id = cfg->server_id;
    el->listen_fd = -1;
    el->on_config = on_config;
    el->on_config_arg = arg;
    el->accept_strangers = cfg->reconfig_enabled;
    if (apply_config(el, ens, err, errlen) < 0) {
        free(el);
        return NULL;
    }
    el->self = find_peer(el, el->my_id);
    if (!el->self) {
        snprintf(err, errlen, "server id %lld has no server.N line", (long long)el->my_id);
        free(el);
        return NULL;
    }
    snprintf(el->my_address, sizeof(el->my_address), strchr(el->self->host, ':') ? "[%s]:%d" : "%s:%d",
             el->self->host, el->self->election_port);
    /* ZooKeeper waits tickTime x syncLimit for an InitialMessage; a peer
     * sends it at once, so a stranger saying nothing is let go sooner. */
    el->handshake_timeout_ms = handshake_timeout_ms(cfg->tick_time > 0 && cfg->sync_limit > 0
                                                        ? (uint64_t)cfg->tick_time * (uint64_t)cfg->sync_limit
                                                        : CONNECT_TIMEOUT_MS);
    handshake_room_init(&el->room);
    ratelimit_init(&el->stranger_log, 1000, 5);
    el->listen_fd = net_listen_tcp(el->self->host, el->self->election_port, 64, err, errlen);
    char name[64];
    snprintf(name, sizeof(name), "election %lld: election port %d", (long long)el->my_id, el->self->election_port);
    if (el->listen_fd < 0 || accept_backoff_start(&el->accept, loop, el->listen_fd, on_accept, el, name) < 0) {
        if (el->listen_fd >= 0) {
            snprintf(err, errlen, "cannot watch the election port");
            close(el->listen_fd);
        }
        free(el);
        return NULL;
    }
    el->state = PEER_LOOKING;
    el->proposal = (vote_t){-1, -1, -1, -1};
    el->current = (vote_t){el->my_id, -1, 0, -1};
    log_info("election %lld: listening on %s:%d, %d voters%s", (long long)el->my_id, el->self->host,
             el->self->election_port, el->voters,
             el->self->observer ? "; this server observes" : el->self->nonvoter ? "; this server does not vote" : "");
    return el;
}

void election_destroy(election_t *el)
{
    if (!el)
        return;
    while (el->conns)
        conn_free(el->conns);
    for (int i = 0; i < el->npeers; i++)
        cancel_timer(el->loop, &el->peers[i].redial_timer);
    cancel_timer(el->loop, &el->notify_timer);
    cancel_timer(el->loop, &el->finalize_timer);
    cancel_timer(el->loop, &el->done_timer);
    cancel_timer(el->loop, &el->restart_timer);
    if (el->listen_fd >= 0) {
        accept_backoff_stop(&el->accept);
        close(el->listen_fd);
    }
    free(el);
}

/* The round after r. Any voter may move our round to any value (a LOOKING
 * notification of a later round is adopted as it is, in ZooKeeper too), so
 * r may be INT64_MAX. ZooKeeper's round is an AtomicLong, whose increment
 * wraps to Long.MIN_VALUE; we wrap the same way, without C's undefined
 * signed overflow, so a mixed ensemble still agrees on the round. */
static int64_t next_round(int64_t r)
{
    return r == INT64_MAX ? INT64_MIN : r + 1;
}

void election_look(election_t *el, int64_t last_zxid, int64_t current_epoch, election_done_fn done, void *arg)
{
    cancel_timer(el->loop, &el->done_timer);
    cancel_timer(el->loop, &el->notify_timer);
    cancel_timer(el->loop, &el->finalize_timer);
    el->done = done;
    el->done_arg = arg;
    el->state = PEER_LOOKING;
    el->in_round = 1;
    el->finalizing = 0;
    el->logical_clock = next_round(el->logical_clock);
    el->init_zxid = last_zxid;
    el->init_epoch = current_epoch;
    el->proposal = own_candidacy(el);
    memset(el->recvset, 0, sizeof(el->recvset));
    memset(el->outofelection, 0, sizeof(el->outofelection));
    el->not_timeout_ms = MIN_NOTIFICATION_INTERVAL_MS;
    el->round_started_ms = loop_now_ms(el->loop);
    log_info("election %lld: new election, round 0x%llx, proposed zxid 0x%llx, epoch 0x%llx", (long long)el->my_id,
             (unsigned long long)el->logical_clock, (unsigned long long)last_zxid,
             (unsigned long long)current_epoch);
    send_notifications(el);
    inbox_drain(el);   /* what queued up while we were LOOKING, then our own vote */
}

void election_set_state(election_t *el, peer_state_t state, const vote_t *vote)
{
    if (state == PEER_LOOKING) {
        if (!el->in_round)
            el->state = PEER_LOOKING;   /* notifications now queue for the next election_look */
        return;
    }
    if (el->in_round) {
        log_info("election %lld: round 0x%llx abandoned: now %s", (long long)el->my_id,
                 (unsigned long long)el->logical_clock, election_state_name(state));
        end_round(el);
    }
    el->state = state;
    el->current = *vote;
}
