/* follower.c -- following the leader (ZooKeeper's Follower/Learner and its
 * followLeader; docs/zab.md says why each step is there): connect to the
 * leader's quorum port; agree on the epoch (FOLLOWERINFO -> LEADERINFO ->
 * ACKEPOCH); take the leader's sync (DIFF: proposals and commits; TRUNC: cut
 * the log and reload; SNAP: the whole tree); ACK NEWLEADER once everything
 * is durable; serve clients from UPTODATE on. Then: log each PROPOSAL and
 * ACK it when durable, apply each COMMIT in order and answer the local
 * client it belongs to, forward this keeper's clients' writes and syncs to
 * the leader, revalidate with the leader each session a client reopens here
 * (REVALIDATE), and answer PINGs with the sessions its clients touched. A
 * leader silent for syncLimit ticks sends this keeper back to LOOKING.
 *
 * An observer (peerType=observer; ZooKeeper's Observer) does all of this
 * with three differences: it opens with OBSERVERINFO, it acknowledges no
 * proposal (only NEWLEADER and UPTODATE, as ZooKeeper's Learner does for
 * both kinds), and after UPTODATE the leader sends it no PROPOSAL/COMMIT
 * pairs but one INFORM per committed transaction, which it logs and applies
 * at once. */
#define _GNU_SOURCE
#include "keeper/server/keeper_impl.h"
#include "quorum.h"
#include "keeper/disk/snapshot.h"
#include "base/logging.h"
#include "base/net.h"
#include "base/endian.h"
#include "base/clock.h"
#include "base/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { F_CONNECTING, F_WAIT_LEADERINFO, F_SYNCING, F_ACTIVE } follower_state_t;

struct follower {
    keeper_t *keeper;
    int64_t leader_sid;
    int fd;
    follower_state_t state;
    buf_t in, out;
    int64_t new_epoch;
    pending_t *nc_head, *nc_tail;   /* proposals logged, waiting for COMMIT */
    int64_t newleader_zxid;         /* NEWLEADER to ACK once the log is durable, or 0 */
    int64_t durable;
    uint64_t started_ms, last_heard_ms;
    int in_snapshot;                /* reading the snapshot stream after a SNAP */
    int64_t snap_zxid;
    snap_scan_t snap_scan;
    int64_t *touched;               /* sessions used since the last PING */
    size_t ntouched, touched_cap;
    uint64_t touch_round;           /* this round's number (keeper_t.touch_rounds): the sessions in
                                       touched carry it as their touch_mark */
    /* Every proposal logged and not acknowledged yet, oldest first: each is
     * ACKed once durable, whether or not its COMMIT came first. */
    int64_t *to_ack;
    size_t ack_head, ack_len, ack_cap;
    int32_t sync_mode;              /* QP_DIFF, QP_TRUNC or QP_SNAP: how the leader syncs us */
    int newleader_seen;
    int observer;                   /* this keeper observes: OBSERVERINFO, INFORMs, no ACKs of proposals */
    ensemble_config_t newleader_cfg; /* the config NEWLEADER carried (ZooKeeper 3.8 sends its last seen) */
    int has_newleader_cfg;
    char look_why[160];             /* on_packet returned LOOK_AGAIN: leave the role for this reason */
    int look_mode;                  /* PEER_ELECT or PEER_HAND_OFF (to look_leader) */
    int64_t look_leader;
    loop_timer_t *timer;
    int forwarded;                  /* requests in out since the last flush (follower_before_sleep) */
};

static void follower_on_io(loop_t *loop, int fd, unsigned events, void *arg);
static void read_from_leader(follower_t *f);

/* on_packet's answer when a reconfig takes this keeper out of its role. */
#define LOOK_AGAIN (-2)

static void flush(follower_t *f)
{
    f->forwarded = 0;
    if (f->fd < 0)
        return;
    if (net_write_buffer(f->fd, &f->out) < 0)
        return;   /* the read side sees the failure and goes LOOKING */
    unsigned ev = LOOP_READABLE | (buf_unread(&f->out) ? LOOP_WRITABLE : 0);
    if (f->state == F_CONNECTING)
        ev = LOOP_WRITABLE;
    loop_watch(f->keeper->loop, f->fd, ev, follower_on_io, f);
}

static void send_packet(follower_t *f, int32_t type, int64_t zxid, const void *data, int32_t len,
                        const auth_set_t *auth)
{
    quorum_packet_write(&f->out, type, zxid, data, len, auth);
}

/* ---- forwarding (client side) ---- */

void follower_touch(keeper_t *k, int64_t session_id)
{
    follower_t *f = k->follower;
    if (!f)
        return;
    session_t *s = session_find(k->sessions, session_id);
    if (s && s->local)   /* the leader does not know it (local_sessions.c) */
        return;
    /* Listed already this round? The session's mark says so at once; one
     * not tracked here (yet) is looked for in the list. */
    if (s && s->touch_mark == f->touch_round)
        return;
    for (size_t i = 0; !s && i < f->ntouched; i++)
        if (f->touched[i] == session_id)
            return;
    if (f->ntouched == f->touched_cap) {
        size_t cap = f->touched_cap ? f->touched_cap * 2 : 64;
        int64_t *t = realloc(f->touched, cap * sizeof(*t));
        if (!t)
            return;   /* the session is touched again by its next request */
        f->touched = t;
        f->touched_cap = cap;
    }
    f->touched[f->ntouched++] = session_id;
    if (s)
        s->touch_mark = f->touch_round;
}

static void forward(follower_t *f, int64_t session_id, int32_t cxid, int32_t type, const uint8_t *body, size_t len,
                    const auth_set_t *auth)
{
    buf_t data;
    buf_init(&data);
    jute_put_long(&data, session_id);
    jute_put_int(&data, cxid);
    jute_put_int(&data, type);
    buf_append(&data, body, len);
    send_packet(f, QP_REQUEST, -1, data.data, (int32_t)data.len, auth);
    buf_free(&data);
    f->forwarded = 1;   /* sent with the others of this loop pass, before it sleeps */
}

/* One write for every request forwarded in a pass of the loop, not one
 * each: a read of many clients' requests is forwarded together. */
void follower_before_sleep(keeper_t *k)
{
    follower_t *f = k->follower;
    if (f && f->forwarded)
        flush(f);
}

pending_t *follower_forward(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, const uint8_t *body, size_t len)
{
    follower_t *f = k->follower;
    pending_t *p = pipeline_new(k, PENDING_FORWARDED, c, xid, type);
    p->hdr.client_id = c->session_id;
    if (type == OP_SYNC) {   /* keep the path for the answer */
        jute_in_t in;
        jute_in_init(&in, body, len);
        char *path = jute_get_string(&in);
        p->frame = (uint8_t *)path;
    }
    c->in_flight++;
    pipeline_charge(k, p, len + 8);   /* the whole frame, with xid and type */
    follower_touch(k, c->session_id);
    forward(f, c->session_id, xid, type, body, len, &c->auth);
    pipeline_follower_queue(k, p);
    return p;
}

void follower_forward_create_session(keeper_t *k, int64_t session_id, int32_t timeout)
{
    buf_t body;
    buf_init(&body);
    jute_put_int(&body, timeout);
    forward(k->follower, session_id, 0, OP_CREATE_SESSION, body.data, body.len, NULL);
    buf_free(&body);
}

/* ---- the leader's packets ---- */

static void send_ack(follower_t *f, int64_t zxid)
{
    send_packet(f, QP_ACK, zxid, NULL, -1, NULL);
}

/* A proposal was logged: it is to be acknowledged once durable. */
static void ack_queue_push(follower_t *f, int64_t zxid)
{
    if (f->ack_head > 0 && f->ack_head + f->ack_len == f->ack_cap) {   /* slide the live part down */
        memmove(f->to_ack, f->to_ack + f->ack_head, f->ack_len * sizeof(*f->to_ack));
        f->ack_head = 0;
    }
    if (f->ack_len == f->ack_cap) {
        f->ack_cap = f->ack_cap ? f->ack_cap * 2 : 256;
        f->to_ack = xrealloc(f->to_ack, f->ack_cap * sizeof(*f->to_ack));
    }
    f->to_ack[f->ack_head + f->ack_len++] = zxid;
}

/* ACK, in zxid order, every queued proposal that is durable. As
 * ZooKeeper's follower (SyncRequestProcessor, then SendAckRequestProcessor
 * for each request it flushed) each proposal gets its own ACK even when its
 * COMMIT came first: ZooKeeper's LearnerHandler times the oldest
 * unacknowledged proposal and drops a follower that leaves it unanswered
 * past syncLimit. Before UPTODATE the ACKs wait (UPTODATE sends them). */
static void ack_durable(follower_t *f)
{
    if (f->state != F_ACTIVE)
        return;
    while (f->ack_len && f->to_ack[f->ack_head] <= f->durable) {
        send_ack(f, f->to_ack[f->ack_head]);
        f->ack_head++;
        f->ack_len--;
    }
    if (!f->ack_len)
        f->ack_head = 0;
}

void follower_on_durable(keeper_t *k, int64_t durable_zxid)
{
    follower_t *f = k->follower;
    if (!f)
        return;
    if (durable_zxid > f->durable)
        f->durable = durable_zxid;
    ack_durable(f);
    if (f->newleader_zxid && f->durable >= k->last_logged_zxid) {
        send_ack(f, f->newleader_zxid);
        log_info("synced with leader %" PRId64 " up to 0x%" PRIx64 "; acknowledged NEWLEADER", f->leader_sid,
                 (uint64_t)k->last_logged_zxid);
        f->newleader_zxid = 0;
    }
    flush(f);
}

static int on_proposal(follower_t *f, const quorum_packet_t *p)
{
    keeper_t *k = f->keeper;
    pending_t *q = pipeline_new(k, PENDING_SYSTEM, NULL, 0, 0);
    jute_in_t in;
    jute_in_init(&in, p->data, p->data_len > 0 ? (size_t)p->data_len : 0);
    /* ZooKeeper's leader, syncing us by SNAP, forwards the proposals after
     * what it had committed when it chose the SNAP, but serializes its tree
     * only later (LearnerHandler): the snapshot we loaded may already hold
     * the first of them. Such a proposal is not logged again (the snapshot
     * on disk holds it); it is applied when committed, as a fuzzy snapshot's
     * log is replayed (tree_apply takes what the tree already holds as
     * ZooKeeper's DataTree does), and acknowledged in order like any other. */
    int held = f->sync_mode == QP_SNAP && !f->newleader_seen && p->zxid <= k->last_logged_zxid &&
               (!f->nc_tail || p->zxid > f->nc_tail->hdr.zxid);
    if (txn_header_read(&in, &q->hdr) < 0 || txn_body_read(&in, q->hdr.type, &q->txn) < 0 ||
        q->hdr.zxid != p->zxid || p->zxid <= 0 || (p->zxid <= k->last_logged_zxid && !held)) {
        q->has_txn = 0;
        pipeline_free_entry(q);
        log_warn("bad PROPOSAL 0x%" PRIx64 " from the leader (last logged 0x%" PRIx64 ")", (uint64_t)p->zxid,
                 (uint64_t)k->last_logged_zxid);
        return -1;
    }
    if (!held) {
        if (txnlog_append(k->txnlog, &q->hdr, &q->txn) < 0) {
            log_error("out of memory appending to the transaction log");
            abort();
        }
        k->last_logged_zxid = q->hdr.zxid;
        history_add(&k->history, &q->hdr, &q->txn);
        persist_after_append(k);
    }
    /* ZooKeeper's Follower: a reconfig's config is the last seen one
     * (zoo.cfg.dynamic.next) until its COMMITANDACTIVATE. One that does not
     * parse is logged there. */
    ensemble_config_t next;
    if (q->hdr.type == OP_RECONFIG && keeper_config_from_txn(&q->hdr, &q->txn, &next) == 0 &&
        next.version > k->last_seen.version) {
        k->last_seen = next;
        if (keeper_config_store(k, &next, 0) < 0)
            log_error("cannot write zoo.cfg.dynamic.next");
    }
    if (!f->observer)
        ack_queue_push(f, q->hdr.zxid);
    if (f->nc_tail)
        f->nc_tail->next = q;
    else
        f->nc_head = q;
    f->nc_tail = q;
    return 0;
}

/* A reconfig committed (COMMIT in a sync, COMMITANDACTIVATE or
 * INFORMANDACTIVATE after): its config is active from here. LOOK_AGAIN when
 * this keeper must leave its role; not while syncing: the configs a sync
 * replays are history, and its last one is judged at UPTODATE. */
static int activate(follower_t *f, const ensemble_config_t *next, int64_t designated)
{
    char why[160];
    int mode = peer_activate(f->keeper, next, designated, why, sizeof(why));
    if (!mode || f->state != F_ACTIVE)
        return 0;
    snprintf(f->look_why, sizeof(f->look_why), "%s", why);
    f->look_mode = mode;
    f->look_leader = designated;
    return LOOK_AGAIN;
}

static int on_commit(follower_t *f, int64_t zxid, int64_t designated)
{
    keeper_t *k = f->keeper;
    pending_t *q = f->nc_head;
    if (!q || q->hdr.zxid != zxid) {
        log_warn("COMMIT 0x%" PRIx64 " from the leader does not match the oldest proposal 0x%" PRIx64,
                 (uint64_t)zxid, q ? (uint64_t)q->hdr.zxid : 0);
        return -1;
    }
    f->nc_head = q->next;
    if (!f->nc_head)
        f->nc_tail = NULL;
    /* A SNAP or TRUNC sync applies what the leader commits before NEWLEADER
     * without acknowledging it, as ZooKeeper's Learner.syncWithLeader does
     * (a DIFF's proposals are all acknowledged after UPTODATE). */
    if (!f->newleader_seen && f->sync_mode != QP_DIFF && f->ack_len && f->to_ack[f->ack_head] == zxid) {
        f->ack_head++;
        f->ack_len--;
    }
    ensemble_config_t next;
    int reconfig = q->hdr.type == OP_RECONFIG && keeper_config_from_txn(&q->hdr, &q->txn, &next) == 0;
    txn_result_t result;
    client_conn_t *owner = q->hdr.type == OP_CLOSE_SESSION ? keeper_client_of_session(k, q->hdr.client_id) : NULL;
    keeper_commit(k, &q->hdr, &q->txn, &result);
    pipeline_follower_applied(k, &q->hdr, &result);   /* takes the result */
    if (owner && !owner->dead && !owner->closing)   /* expired by the leader, not closed by its client */
        client_close(owner, "session expired");
    pipeline_free_entry(q);
    return reconfig ? activate(f, &next, designated) : 0;
}

/* INFORM (observers): a committed transaction, whole. Logged like a
 * proposal and applied at once, as ZooKeeper's ObserverZooKeeperServer
 * commits it while its log write goes on. */
static int on_inform(follower_t *f, const quorum_packet_t *p)
{
    if (!f->observer) {
        log_warn("INFORM 0x%" PRIx64 " from leader %" PRId64 ", but this keeper is a follower", (uint64_t)p->zxid,
                 f->leader_sid);
        return -1;
    }
    if (on_proposal(f, p) < 0)
        return -1;
    return on_commit(f, p->zxid, -1);
}

/* INFORMANDACTIVATE (observers): {long designated leader} then the txn as
 * INFORM carries it. */
static int on_inform_and_activate(follower_t *f, const quorum_packet_t *p)
{
    if (!f->observer || p->data_len < 8) {
        log_warn("INFORMANDACTIVATE 0x%" PRIx64 " from leader %" PRId64 " %s", (uint64_t)p->zxid, f->leader_sid,
                 f->observer ? "is too short" : "but this keeper is a follower");
        return -1;
    }
    quorum_packet_t inner = *p;
    inner.data = p->data + 8;
    inner.data_len = p->data_len - 8;
    if (on_proposal(f, &inner) < 0)
        return -1;
    return on_commit(f, p->zxid, (int64_t)be64_get(p->data));
}

/* COMMITANDACTIVATE: {long designated leader}; the commit of a reconfig. */
static int on_commit_and_activate(follower_t *f, const quorum_packet_t *p)
{
    if (p->data_len < 8) {
        log_warn("COMMITANDACTIVATE 0x%" PRIx64 " from leader %" PRId64 " carries no designated leader",
                 (uint64_t)p->zxid, f->leader_sid);
        return -1;
    }
    return on_commit(f, p->zxid, (int64_t)be64_get(p->data));
}

/* Reload the tree and sessions from this keeper's own files (after a TRUNC). */
static int reload_from_disk(keeper_t *k, char *err, size_t errlen)
{
    tree_destroy(k->tree);
    k->tree = NULL;
    session_tracker_destroy(k->sessions);
    k->sessions = session_tracker_create(k->cfg.server_id, k->cfg.tick_time, clock_wall_ms());
    if (!k->sessions) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return persist_recover(k, err, errlen);
}

static int remove_snapshots_after(keeper_t *k, int64_t zxid)
{
    snapshot_file_t *files = NULL;
    size_t count = 0;
    if (snapshot_list(k->snap_dir, &files, &count) < 0)
        return -1;
    for (size_t i = 0; i < count; i++)
        if (files[i].zxid > zxid) {
            char path[700];
            snapshot_file_path(path, sizeof(path), k->snap_dir, &files[i]);
            unlink(path);
        }
    free(files);
    return 0;
}

static int on_trunc(follower_t *f, int64_t zxid)
{
    keeper_t *k = f->keeper;
    char err[700];
    log_info("leader %" PRId64 " says TRUNC to 0x%" PRIx64 " (this keeper logged up to 0x%" PRIx64 ")", f->leader_sid,
             (uint64_t)zxid, (uint64_t)k->last_logged_zxid);
    peer_drop_unapplied(k);
    txnlog_close(k->txnlog);   /* every appended record is written first */
    k->txnlog = NULL;
    if (txnlog_truncate_after(k->txnlog_dir, zxid, err, sizeof(err)) < 0 || remove_snapshots_after(k, zxid) < 0 ||
        reload_from_disk(k, err, sizeof(err)) < 0 || persist_open_log(k, err, sizeof(err)) < 0) {
        log_error("TRUNC failed: %s", err);
        return -1;
    }
    k->last_logged_zxid = tree_last_zxid(k->tree);
    f->durable = k->last_logged_zxid;
    history_truncate_after(&k->history, zxid);
    return 0;
}

static int load_snapshot(follower_t *f, const uint8_t *data, size_t len, int64_t zxid)
{
    keeper_t *k = f->keeper;
    char err[512];
    tree_t *tree;
    snapshot_session_t *sessions;
    size_t n;
    if (snapshot_load_buffer(data, len, k->watches, &tree, &sessions, &n, err, sizeof(err)) < 0) {
        log_error("the leader's snapshot is unusable: %s", err);
        return -1;
    }
    peer_drop_unapplied(k);
    tree_destroy(k->tree);
    k->tree = tree;
    tree_set_last_zxid(tree, zxid);
    session_tracker_destroy(k->sessions);
    k->sessions = session_tracker_create(k->cfg.server_id, k->cfg.tick_time, clock_wall_ms());
    for (size_t i = 0; i < n; i++)
        session_add(k->sessions, sessions[i].id, sessions[i].timeout_ms, loop_now_ms(k->loop));
    free(sessions);
    /* The snapshot must be on disk before any later txn is logged, or a
     * crash would leave a log that does not follow any snapshot. The
     * follower serves no client while syncing, so it writes it here. */
    if (snapshot_write_file(k->snap_dir, zxid, k->tree, NULL, 0, err, sizeof(err)) < 0) {
        log_error("cannot write the leader's snapshot: %s", err);
        return -1;
    }
    txnlog_roll(k->txnlog);
    k->last_logged_zxid = zxid;
    f->durable = zxid;
    history_reset(&k->history, zxid);
    log_info("loaded the leader's snapshot at 0x%" PRIx64 ": %zu znodes, %zu sessions", (uint64_t)zxid,
             tree_node_count(k->tree), n);
    return 0;
}

/* After a SNAP packet the snapshot follows as a bare stream: take it once
 * it is all here. 1 when loaded, 0 for more bytes, -1 on error. */
static int take_snapshot_stream(follower_t *f)
{
    int rc = snap_scan(&f->snap_scan, buf_read_ptr(&f->in), buf_unread(&f->in));
    if (rc <= 0) {
        if (rc < 0)
            log_error("the leader's snapshot stream is malformed at byte %zu", f->snap_scan.pos);
        return rc;
    }
    if (load_snapshot(f, buf_read_ptr(&f->in), f->snap_scan.body_len, f->snap_zxid) < 0)
        return -1;
    buf_consume(&f->in, f->snap_scan.pos);
    f->in_snapshot = 0;
    return 1;
}

/* Answer the leader's PING as ZooKeeper's Learner.ping does: the same
 * zxid and authinfo back, and as data {long session id, int timeout} for
 * each session this keeper's clients touched since the last one. The data
 * is an empty buffer, never null, when none were: ZooKeeper's LearnerHandler
 * reads it as a byte array and drops a follower whose PING has none. */
static void on_ping(follower_t *f, const quorum_packet_t *p)
{
    buf_t data;
    buf_init(&data);
    for (size_t i = 0; i < f->ntouched; i++) {
        session_t *s = session_find(f->keeper->sessions, f->touched[i]);
        jute_put_long(&data, f->touched[i]);
        jute_put_int(&data, s ? s->timeout_ms : 0);
    }
    f->ntouched = 0;
    f->touch_round = ++f->keeper->touch_rounds;
    send_packet(f, QP_PING, p->zxid, data.len ? (const void *)data.data : "", (int32_t)data.len,
                p->auth_null ? NULL : &p->auth);
    buf_free(&data);
}

/* REVALIDATE from the leader: {long session id, boolean valid} for a
 * session follower_revalidate asked about. */
static int on_revalidate(follower_t *f, const quorum_packet_t *p)
{
    keeper_t *k = f->keeper;
    if (p->data_len < 9) {
        log_warn("REVALIDATE from leader %" PRId64 " carries %d bytes, not a session id and an answer; ignored",
                 f->leader_sid, p->data_len);
        return 0;
    }
    int64_t session_id = (int64_t)be64_get(p->data);
    int valid = p->data[8] != 0;
    if (pipeline_follower_revalidated(k, session_id, valid) < 0)
        log_warn("leader %" PRId64 " revalidated session 0x%" PRIx64 ", which no connection here waits for",
                 f->leader_sid, (uint64_t)session_id);
    return 0;
}

void follower_revalidate(keeper_t *k, client_conn_t *c, int64_t session_id, int32_t timeout)
{
    follower_t *f = k->follower;
    log_info("revalidating session 0x%" PRIx64 " of %s:%d with leader %" PRId64, (uint64_t)session_id, c->ip,
             c->port, f->leader_sid);
    pending_t *q = pipeline_new(k, PENDING_REVALIDATE, c, 0, 0);
    q->hdr.client_id = session_id;
    q->timeout = timeout;
    pipeline_follower_queue(k, q);
    uint8_t data[12];
    be64_put(data, (uint64_t)session_id);
    be32_put(data + 8, (uint32_t)timeout);
    send_packet(f, QP_REVALIDATE, -1, data, sizeof(data), NULL);
    flush(f);
}

static int on_packet(follower_t *f, const quorum_packet_t *p)
{
    keeper_t *k = f->keeper;
    f->last_heard_ms = loop_now_ms(k->loop);
    switch (p->type) {
    case QP_LEADERINFO: {
        if (f->state != F_WAIT_LEADERINFO)
            return -1;
        f->new_epoch = zxid_epoch(p->zxid);
        if (f->new_epoch < k->accepted_epoch) {
            log_warn("leader %" PRId64 " proposes epoch %" PRId64 ", older than our accepted %" PRId64,
                     f->leader_sid, f->new_epoch, k->accepted_epoch);
            return -1;
        }
        /* As ZooKeeper's Learner.registerWithLeader: our current epoch when
         * the leader's epoch is new to us, -1 when we had accepted it
         * already (an answer that must not count as accepting it again). */
        int32_t epoch_answer = -1;
        if (f->new_epoch > k->accepted_epoch) {
            epoch_answer = (int32_t)k->current_epoch;
            k->accepted_epoch = f->new_epoch;
            if (quorum_write_epoch(k->snap_dir, k->cfg.data_dir, "acceptedEpoch", f->new_epoch) < 0)
                return -1;
        }
        uint8_t data[4];
        be32_put(data, (uint32_t)epoch_answer);
        send_packet(f, QP_ACKEPOCH, k->last_logged_zxid, data, 4, NULL);
        f->state = F_SYNCING;
        return 0;
    }
    case QP_DIFF:
        f->sync_mode = QP_DIFF;
        log_info("leader %" PRId64 " syncs us with a DIFF", f->leader_sid);
        peer_apply_unapplied(k);
        return 0;
    case QP_TRUNC:
        f->sync_mode = QP_TRUNC;
        return on_trunc(f, p->zxid);
    case QP_SNAP:
        f->sync_mode = QP_SNAP;
        log_info("leader %" PRId64 " syncs us with a SNAP", f->leader_sid);
        f->in_snapshot = 1;
        f->snap_zxid = p->zxid;
        memset(&f->snap_scan, 0, sizeof(f->snap_scan));
        return 0;
    case QP_PROPOSAL:
        return on_proposal(f, p);
    case QP_COMMIT:
        return on_commit(f, p->zxid, -1);
    case QP_COMMITANDACTIVATE:
        return on_commit_and_activate(f, p);
    case QP_INFORM:
        return on_inform(f, p);
    case QP_INFORMANDACTIVATE:
        return on_inform_and_activate(f, p);
    case QP_NEWLEADER:
        if (p->data_len > 1) {
            /* ZooKeeper 3.8's leader sends its last seen config: it is ours
             * too, and active at UPTODATE once committed here. */
            char err[200];
            if (ensemble_config_parse(&f->newleader_cfg, (const char *)p->data, (size_t)p->data_len, err,
                                      sizeof(err)) < 0) {
                log_warn("NEWLEADER from leader %" PRId64 " carries a config that does not parse: %s", f->leader_sid,
                         err);
            } else {
                f->has_newleader_cfg = 1;
                /* Taken also when older: ZooKeeper's setLastSeenQuorumVerifier
                 * complains of a stale one but takes it, so a proposal this
                 * keeper saw and the sync cut away is forgotten. */
                if (f->newleader_cfg.version != k->last_seen.version) {
                    k->last_seen = f->newleader_cfg;
                    if (keeper_config_store(k, &f->newleader_cfg, 0) < 0)
                        log_error("cannot write zoo.cfg.dynamic.next");
                }
            }
        }
        k->current_epoch = zxid_epoch(p->zxid);
        if (quorum_write_epoch(k->snap_dir, k->cfg.data_dir, "currentEpoch", k->current_epoch) < 0)
            return -1;
        f->newleader_zxid = p->zxid;
        f->newleader_seen = 1;
        k->vote.peer_epoch = k->current_epoch;
        election_set_state(k->election, f->observer ? PEER_OBSERVING : PEER_FOLLOWING, &k->vote);
        follower_on_durable(k, f->durable);
        return 0;
    case QP_UPTODATE:
        f->state = F_ACTIVE;
        k->serving = 1;
        log_info("%s leader %" PRId64 " in epoch %" PRId64 "; serving clients",
                 f->observer ? "OBSERVING" : "FOLLOWING", f->leader_sid, k->current_epoch);
        /* As ZooKeeper's Learner.syncWithLeader: an ACK of the new epoch's
         * zxid 0, then one for each proposal logged so far, in order (the
         * rest as each becomes durable). */
        send_ack(f, zxid_make(f->new_epoch, 0));
        ack_durable(f);
        /* ZooKeeper's Learner activates NEWLEADER's config here: one this
         * keeper has committed (its reconfig applied, or a snapshot past
         * it), or the static config the leader versioned with the new epoch
         * (leader.c's establish). A reconfig still pending waits for its
         * COMMITANDACTIVATE. */
        if (f->has_newleader_cfg && f->newleader_cfg.version > k->config.version &&
            (f->newleader_cfg.version <= tree_last_zxid(k->tree) ||
             f->newleader_cfg.version == zxid_make(f->new_epoch, 0)))
            return activate(f, &f->newleader_cfg, -1);
        return 0;
    case QP_PING:
        /* Not while syncing: ZooKeeper's Learner.syncWithLeader ignores the
         * PINGs its leader sends once the sync's packets are queued, and
         * its LearnerHandler drops a learner whose first packet after
         * NEWLEADER is not the ACK of it (ours waits for the disk). */
        if (f->state == F_ACTIVE)
            on_ping(f, p);
        return 0;
    case QP_REVALIDATE:
        return on_revalidate(f, p);
    case QP_SYNC:
        pipeline_follower_synced(k);
        return 0;
    default:
        log_warn("unexpected %s from leader %" PRId64, quorum_packet_name(p->type), f->leader_sid);
        return -1;
    }
}

static void follower_on_io(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)fd;
    follower_t *f = arg;
    keeper_t *k = f->keeper;
    if (f->state == F_CONNECTING) {
        int rc = net_connect_result(f->fd);
        if (rc > 0)
            return;   /* still connecting */
        if (rc < 0) {
            /* The leader may not be listening yet: it decided at the same
             * moment. Try again on the next timer, until initLimit. */
            loop_unwatch(k->loop, f->fd);
            close(f->fd);
            f->fd = -1;
            return;
        }
        f->state = F_WAIT_LEADERINFO;
        buf_t info;
        buf_init(&info);
        jute_put_long(&info, k->cfg.server_id);
        jute_put_int(&info, QUORUM_PROTOCOL_VERSION);
        jute_put_long(&info, k->config.version);   /* configVersion: the active config's, as ZooKeeper's LearnerInfo */
        send_packet(f, f->observer ? QP_OBSERVERINFO : QP_FOLLOWERINFO, zxid_make(k->accepted_epoch, 0), info.data,
                    (int32_t)info.len, NULL);
        buf_free(&info);
        flush(f);
        return;
    }
    if (events & LOOP_WRITABLE)
        flush(f);
    if (!(events & LOOP_READABLE))
        return;
    /* The answers to the txns this read applies go out together at the end. */
    pipeline_follower_hold(k);
    read_from_leader(f);   /* may leave the role, which frees f */
    pipeline_follower_release(k);
}

/* The leader's packets, as many as have come (up to 64 reads). */
static void read_from_leader(follower_t *f)
{
    keeper_t *k = f->keeper;
    for (int rounds = 0; rounds < 64; rounds++) {
        ssize_t n = net_read_into(&f->in, f->fd, 65536);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            peer_look(k, "the leader closed the connection");
            return;
        }
        if (n < 0)
            break;
        for (;;) {
            if (f->in_snapshot) {
                int rc = take_snapshot_stream(f);
                if (rc < 0) {
                    peer_look(k, "could not take the leader's snapshot");
                    return;
                }
                if (rc == 0)
                    break;
            }
            quorum_packet_t p;
            long used = quorum_packet_parse(buf_read_ptr(&f->in), buf_unread(&f->in), &p);
            if (used == 0)
                break;
            int rc = used < 0 ? -1 : on_packet(f, &p);
            if (used > 0)
                auth_set_free(&p.auth);
            if (rc == LOOK_AGAIN) {
                flush(f);   /* the ACKs owed go out first */
                char why[sizeof(f->look_why)];
                snprintf(why, sizeof(why), "%s", f->look_why);
                peer_leave(k, f->look_mode, f->look_leader, why);   /* frees f */
                return;
            }
            if (rc < 0) {
                peer_look(k, used < 0 ? "malformed packet from the leader" : "protocol error with the leader");
                return;
            }
            buf_consume(&f->in, (size_t)used);
        }
    }
    flush(f);
}

static int dial_leader(follower_t *f, int *resolving, char *err, size_t errlen);
static void on_timer(loop_t *loop, void *arg);

/* The timer's next run: half a tick, or RESOLVER_POLL_MS while the leader's
 * host name is looked up. */
static void arm_timer(follower_t *f, int resolving)
{
    keeper_t *k = f->keeper;
    uint64_t half_tick = (uint64_t)(k->cfg.tick_time / 2 > 0 ? k->cfg.tick_time / 2 : 1);
    f->timer = loop_timer_add(k->loop, resolving ? RESOLVER_POLL_MS : half_tick, on_timer, f);
}

static void on_timer(loop_t *loop, void *arg)
{
    follower_t *f = arg;
    keeper_t *k = f->keeper;
    f->timer = NULL;
    uint64_t now = loop_now_ms(loop);
    uint64_t limit = (uint64_t)(f->state == F_ACTIVE ? k->cfg.sync_limit : k->cfg.init_limit) *
                     (uint64_t)k->cfg.tick_time;
    uint64_t since = f->state == F_ACTIVE ? f->last_heard_ms : f->started_ms;
    if (now - since > limit) {
        peer_look(k, f->state == F_ACTIVE ? "the leader went silent" : "could not sync with the leader in time");
        return;
    }
    int resolving = 0;
    if (f->state == F_CONNECTING && f->fd < 0) {
        char err[512];
        dial_leader(f, &resolving, err, sizeof(err));   /* failed: again on the next run */
    }
    arm_timer(f, resolving);
}

/* Dial the leader's quorum port (its host name looked up off the loop,
 * base/resolver.h): 0 when dialling (the connection completes in
 * follower_on_io) or, *resolving, when the name is being looked up; -1 with
 * err. */
static int dial_leader(follower_t *f, int *resolving, char *err, size_t errlen)
{
    keeper_t *k = f->keeper;
    const ensemble_member_t *peer = peer_config(k, f->leader_sid);
    *resolving = 0;
    if (!peer) {
        snprintf(err, errlen, "the leader is in no config known here");
        return -1;
    }
    int connected;
    int fd = resolver_connect(k->resolver, peer->host, peer->quorum_port, &connected, err, errlen);
    *resolving = fd == RESOLVER_CONNECT_PENDING;
    if (fd < 0)
        return *resolving ? 0 : -1;
    f->fd = fd;
    loop_watch(k->loop, fd, LOOP_WRITABLE, follower_on_io, f);
    return 0;
}

int follower_start(keeper_t *k, int64_t leader_sid, char *err, size_t errlen)
{
    const ensemble_member_t *peer = peer_config(k, leader_sid);
    if (!peer) {
        snprintf(err, errlen, "the elected leader %" PRId64 " has no server.N line", leader_sid);
        return -1;
    }
    follower_t *f = calloc(1, sizeof(*f));
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    f->keeper = k;
    f->leader_sid = leader_sid;
    f->touch_round = ++k->touch_rounds;   /* marks left by an earlier follower are not this round's */
    f->observer = k->cfg.peer_type == PEER_TYPE_OBSERVER;   /* the active config's role (peer.c) */
    f->durable = k->last_logged_zxid;
    f->started_ms = f->last_heard_ms = loop_now_ms(k->loop);
    buf_init(&f->in);
    buf_init(&f->out);
    f->fd = -1;
    int resolving;
    if (dial_leader(f, &resolving, err, errlen) < 0) {
        free(f);
        return -1;
    }
    k->follower = f;
    f->state = F_CONNECTING;
    arm_timer(f, resolving);
    election_set_state(k->election, f->observer ? PEER_OBSERVING : PEER_FOLLOWING, &k->vote);
    return 0;
}

void follower_stop(keeper_t *k)
{
    follower_t *f = k->follower;
    if (!f)
        return;
    /* Logged proposals that never got their COMMIT wait for the next
     * leader's sync (DIFF applies them, TRUNC drops them). */
    while (f->nc_head) {
        pending_t *q = f->nc_head;
        f->nc_head = q->next;
        q->next = NULL;
        if (k->unapplied_tail)
            k->unapplied_tail->next = q;
        else
            k->unapplied_head = q;
        k->unapplied_tail = q;
    }
    if (f->timer)
        loop_timer_cancel(k->loop, f->timer);
    if (f->fd >= 0) {
        loop_unwatch(k->loop, f->fd);
        close(f->fd);
    }
    buf_free(&f->in);
    buf_free(&f->out);
    free(f->touched);
    free(f->to_ack);
    free(f);
    k->follower = NULL;
}
