/* leader.c -- leading the ensemble (ZooKeeper's Leader and LearnerHandler):
 * discovery (FOLLOWERINFO -> LEADERINFO -> ACKEPOCH from a quorum fixes the
 * new epoch), synchronization of each follower (DIFF, TRUNC or SNAP, then
 * NEWLEADER; UPTODATE once a quorum acknowledged NEWLEADER), and broadcast
 * (PROPOSAL to every synced follower, COMMIT once a quorum, this keeper's
 * own durable log included, acknowledged it). PINGs every half tick carry
 * back the sessions each follower's clients touched; a follower asks with
 * REVALIDATE whether a session one of its clients reopens is alive; a
 * leader that stops hearing from a quorum goes back to LOOKING.
 *
 * Observers (ZooKeeper's Observer, learner type OBSERVER) open with
 * OBSERVERINFO instead of FOLLOWERINFO and are synced the same way, but are
 * counted in no quorum (epoch, NEWLEADER, commit, liveness), get no
 * PROPOSAL after their sync and, instead of COMMIT, an INFORM carrying each
 * committed transaction whole; their ACKs are ignored. */
#define _GNU_SOURCE
#include "keeper/server/keeper_impl.h"
#include "quorum.h"
#include "keeper/disk/snapshot.h"
#include "base/logging.h"
#include "base/net.h"
#include "base/endian.h"
#include "base/alloc.h"
#include "base/accept_backoff.h"
#include "base/ratelimit.h"
#include "handshake.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef enum {
    LEARNER_NEW,            /* waiting for FOLLOWERINFO */
    LEARNER_EPOCH_SENT,     /* LEADERINFO sent, waiting for ACKEPOCH */
    LEARNER_WAIT_QUORUM,    /* ACKEPOCH in, waiting for a quorum of them */
    LEARNER_SYNCED,         /* sync and NEWLEADER sent, waiting for its ACK */
    LEARNER_ACTIVE,         /* UPTODATE sent: a full member */
} learner_state_t;

typedef struct learner learner_t;
struct learner {
    leader_t *leader;
    int fd;
    char addr[80];
    int64_t sid;              /* 0 until its FOLLOWERINFO is accepted */
    int observer;             /* it sent OBSERVERINFO: INFORMs instead of PROPOSAL and COMMIT */
    int voter;                /* sent FOLLOWERINFO as a participant of the active config when it joined
                                 (the epoch's agreement); the commit counts by config (recompute_commit) */
    learner_state_t state;
    buf_t in, out;
    buf_t held;               /* COMMITs between its NEWLEADER and UPTODATE (send_commit) */
    int owed;                 /* packets in out not written yet: they go before the loop sleeps */
    int64_t accepted_epoch;
    int64_t peer_zxid;
    int64_t acked_zxid;
    int acked_newleader;
    uint64_t last_heard_ms;
    int dead;
    learner_t *next;
};

#define SID_SET_WORDS 4   /* server ids are 1..255 */
typedef struct {
    uint64_t bits[SID_SET_WORDS];
} sid_set_t;

struct leader {
    keeper_t *keeper;
    int listen_fd;
    accept_backoff_t accept;   /* the quorum port's listener, paused when descriptors run out */
    handshake_room_t room;     /* connections without an accepted FOLLOWERINFO yet */
    ratelimit_t stranger_log;  /* lines about them: anyone can open more */
    learner_t *learners;
    int64_t new_epoch;
    int epoch_set;
    sid_set_t info_from, ackepoch_from, newleader_from;
    int64_t max_accepted_epoch;
    int64_t own_epoch, own_zxid;   /* our state when elected: no follower in discovery may be ahead */
    int64_t ahead_sid;             /* one was: we give up leading at the next ping tick */
    int established;
    int64_t own_durable;
    int64_t committed;
    uint64_t started_ms;
    loop_timer_t *ping_timer;
    int64_t reconfig_zxid;         /* a reconfig proposed, not committed (to k->last_seen); 0: none */
    int stop_committing;           /* a reconfig handed leadership on: nothing more commits here */
    int owed;                      /* some learner is owed a write (leader_before_sleep) */
    char look_why[160];            /* leave the role (from look_timer, outside any learner's I/O) */
    int look_mode;                 /* PEER_ELECT or PEER_HAND_OFF (to look_leader) */
    int64_t look_leader;
    loop_timer_t *look_timer;
};

static void sid_add(sid_set_t *s, int64_t sid)
{
    if (sid >= 0 && sid < 64 * SID_SET_WORDS)
        s->bits[sid / 64] |= 1ull << (sid % 64);
}

/* The servers of a set, as a list. */
static int sid_list(const sid_set_t *s, int64_t *out, int cap)
{
    int n = 0;
    for (int64_t sid = 0; sid < 64 * SID_SET_WORDS && n < cap; sid++)
        if (s->bits[sid / 64] >> (sid % 64) & 1)
            out[n++] = sid;
    return n;
}

static int sid_count(const sid_set_t *s)
{
    int n = 0;
    for (int i = 0; i < SID_SET_WORDS; i++)
        for (uint64_t b = s->bits[i]; b; b &= b - 1)
            n++;
    return n;
}

/* Bytes an unnamed connection may send before its FOLLOWERINFO is whole:
 * one is 16 bytes of header, 20 of LearnerInfo and an empty auth list, so
 * this leaves room for a larger LearnerInfo of a later version and nothing
 * else (a packet may otherwise carry 512 MiB). */
#define FOLLOWERINFO_MAX_BYTES 4096

/* A line about a learner: rate-limited while it has not named itself, since
 * anyone can open such connections. */
static void learner_log(leader_t *ld, const learner_t *l, log_level_t level, const char *fmt, ...)
    KIPPER_PRINTF(4, 5);
static void learner_log(leader_t *ld, const learner_t *l, log_level_t level, const char *fmt, ...)
{
    uint64_t missed = 0;
    if (!l->sid && !ratelimit_allow(&ld->stranger_log, loop_now_ms(ld->keeper->loop), &missed))
        return;
    char line[512], more[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (missed)
        snprintf(more, sizeof(more), " (%llu such lines left out)", (unsigned long long)missed);
    log_write(level, "%s%s", line, more);
}

/* ---- sending ---- */

static void learner_on_io(loop_t *loop, int fd, unsigned events, void *arg);

static void learner_flush(learner_t *l)
{
    l->owed = 0;
    if (l->dead)
        return;
    if (net_write_buffer(l->fd, &l->out) < 0) {
        l->dead = 1;   /* reaped by the next tick */
        return;
    }
    unsigned ev = LOOP_READABLE | (buf_unread(&l->out) ? LOOP_WRITABLE : 0);
    loop_watch(l->leader->keeper->loop, l->fd, ev, learner_on_io, l);
}

/* Written with the rest of this pass of the loop's packets, before it
 * sleeps: at 25 000 writes a second, a write per proposal and per commit to
 * each follower was a third of the leader's CPU (most of it waking the
 * follower's side of the socket). Packets that change what the learner
 * does next (SYNC, UPTODATE, a reconfig's activation) still go at once. */
static void learner_owe(learner_t *l)
{
    l->owed = 1;
    l->leader->owed = 1;
}

void leader_before_sleep(keeper_t *k)
{
    leader_t *ld = k->leader;
    if (!ld || !ld->owed)
        return;
    ld->owed = 0;
    for (learner_t *l = ld->learners; l; l = l->next)
        if (l->owed)
            learner_flush(l);
}

static void send_packet(learner_t *l, int32_t type, int64_t zxid, const void *data, int32_t len)
{
    if (l->dead)
        return;
    quorum_packet_write(&l->out, type, zxid, data, len, NULL);
}

static int learner_in_broadcast(const learner_t *l)
{
    return !l->dead && (l->state == LEARNER_SYNCED || l->state == LEARNER_ACTIVE);
}

/* A follower's COMMIT (or COMMITANDACTIVATE). Between its NEWLEADER and its
 * UPTODATE it waits in l->held and follows the UPTODATE: ZooKeeper 3.8.0's
 * Learner.syncWithLeader matches a COMMIT against the first proposal it
 * holds before it looks at anything else, and it let go of them all when it
 * logged them at NEWLEADER, so a COMMIT then finds none and the follower
 * drops out of the ensemble (a NullPointerException; it syncs again). After
 * UPTODATE the same COMMITs meet those proposals in its log queue, in order.
 * A follower that takes longer to acknowledge NEWLEADER than the held
 * commits' bound is dropped, and syncs again. */
#define HELD_COMMITS_MAX_BYTES (16u << 20)

static void send_commit(learner_t *l, int32_t type, int64_t zxid, const void *data, int32_t len)
{
    if (l->state != LEARNER_SYNCED || l->dead) {
        send_packet(l, type, zxid, data, len);
        return;
    }
    if (l->held.len >= HELD_COMMITS_MAX_BYTES) {
        log_warn("server %" PRId64 " has not acknowledged NEWLEADER while %u bytes of commits waited for it; "
                 "dropping it",
                 l->sid, HELD_COMMITS_MAX_BYTES);
        l->dead = 1;   /* reaped by the next tick */
        return;
    }
    quorum_packet_write(&l->held, type, zxid, data, len, NULL);
}

/* UPTODATE: l is a full member from here, and gets the commits it was owed. */
static void send_uptodate(learner_t *l)
{
    send_packet(l, QP_UPTODATE, -1, NULL, -1);
    l->state = LEARNER_ACTIVE;
    if (l->held.len && !l->dead)
        buf_append(&l->out, buf_read_ptr(&l->held), buf_unread(&l->held));
    buf_free(&l->held);
    buf_init(&l->held);
    learner_flush(l);
}

/* ---- commit ---- */

/* Tell every synced learner that e is committed: a follower by COMMIT, an
 * observer (which never saw its PROPOSAL) by INFORM with the transaction.
 * A reconfig's commit is COMMITANDACTIVATE {designated leader} and
 * INFORMANDACTIVATE {designated leader, the txn} (ZooKeeper's
 * Leader.commitAndActivate and informAndActivate). */
static void send_committed(leader_t *ld, const history_entry_t *e, int activate, int64_t designated)
{
    uint8_t *inform = NULL;
    uint8_t lead[8];
    be64_put(lead, (uint64_t)designated);
    if (activate) {
        inform = xmalloc(e->len + 8);
        memcpy(inform, lead, 8);
        memcpy(inform + 8, e->bytes, e->len);
    }
    for (learner_t *l = ld->learners; l; l = l->next) {
        if (!learner_in_broadcast(l))
            continue;
        if (l->observer && activate)
            send_packet(l, QP_INFORMANDACTIVATE, e->zxid, inform, (int32_t)(e->len + 8));
        else if (l->observer)
            send_packet(l, QP_INFORM, e->zxid, e->bytes, (int32_t)e->len);
        else if (activate)
            send_commit(l, QP_COMMITANDACTIVATE, e->zxid, lead, 8);
        else
            send_commit(l, QP_COMMIT, e->zxid, NULL, -1);
    }
    free(inform);
}

static void on_look_timer(loop_t *loop, void *arg)
{
    (void)loop;
    leader_t *ld = arg;
    ld->look_timer = NULL;
    char why[sizeof(ld->look_why)];
    snprintf(why, sizeof(why), "%s", ld->look_why);
    peer_leave(ld->keeper, ld->look_mode, ld->look_leader, why);   /* frees ld */
}

/* Leave the role soon, from a timer: the caller may be inside a learner's I/O. */
static void look_soon(leader_t *ld, const char *why, int mode, int64_t leader)
{
    if (ld->look_timer)
        return;
    ld->look_mode = mode;
    ld->look_leader = leader;
    snprintf(ld->look_why, sizeof(ld->look_why), "%s", why);
    ld->look_timer = loop_timer_add(ld->keeper->loop, 0, on_look_timer, ld);
}

/* Every acknowledgement: this keeper's durable log and each synced
 * participant's (a follower outside the active config included: it may be a
 * voter of the config being proposed). Observers acknowledge nothing. */
static int collect_acks(leader_t *ld, quorum_ack_t *acks, int cap)
{
    int n = 0;
    acks[n++] = (quorum_ack_t){ld->keeper->cfg.server_id, ld->own_durable};
    for (learner_t *l = ld->learners; l && n < cap; l = l->next)
        if (learner_in_broadcast(l) && !l->observer && l->sid)
            acks[n++] = (quorum_ack_t){l->sid, l->acked_zxid};
    return n;
}

/* The reconfig at reconfig_zxid committed: activate its config here. */
static void activate_reconfig(leader_t *ld, const ensemble_config_t *next, int64_t designated)
{
    keeper_t *k = ld->keeper;
    char why[160];
    ld->reconfig_zxid = 0;
    int mode = peer_activate(k, next, designated, why, sizeof(why));
    if (mode)
        look_soon(ld, why, mode, designated);
}

/* The highest zxid a quorum holds durably (with a reconfig pending, a
 * quorum of the current voters and one of the new: quorum.h), committed in
 * order to every synced learner. */
static void recompute_commit(leader_t *ld)
{
    keeper_t *k = ld->keeper;
    if (ld->stop_committing)
        return;
    quorum_ack_t acks[KEEPER_MAX_SERVERS * 2 + 1];
    int n = collect_acks(ld, acks, (int)(sizeof(acks) / sizeof(acks[0])));
    int64_t point = quorum_reconfig_commit_point(&k->config, ld->reconfig_zxid ? &k->last_seen : NULL,
                                                 ld->reconfig_zxid, acks, n);
    if (point <= ld->committed)
        return;
    int64_t designated = -1;
    int activating = ld->reconfig_zxid && point >= ld->reconfig_zxid;
    ensemble_config_t next;
    if (activating) {
        next = k->last_seen;
        designated = quorum_designated_leader(&next, k->cfg.server_id, ld->reconfig_zxid, acks, n);
        if (designated < 0)
            designated = k->cfg.server_id;   /* cannot happen: next's majority acknowledged it */
        if (designated != k->cfg.server_id) {
            /* ZooKeeper's allowedToCommit: what follows waits for the designated leader. */
            point = ld->reconfig_zxid;
            ld->stop_committing = 1;
        }
        log_info("reconfig 0x%" PRIx64 " acknowledged by a quorum of both configs; designated leader %" PRId64,
                 (uint64_t)ld->reconfig_zxid, designated);
    }
    /* Each newly committed proposal, in order, to every synced learner. */
    long i = history_find_before(&k->history, ld->committed + 1);
    for (size_t j = (size_t)(i + 1); j < k->history.count; j++) {
        const history_entry_t *e = history_at(&k->history, j);
        if (e->zxid <= ld->committed)
            continue;
        if (e->zxid > point)
            break;
        send_committed(ld, e, activating && e->zxid == ld->reconfig_zxid, designated);
    }
    ld->committed = point;
    for (learner_t *l = ld->learners; l; l = l->next)
        if (activating)
            learner_flush(l);
        else
            learner_owe(l);
    pipeline_commit_upto(k, point);
    if (activating)
        activate_reconfig(ld, &next, designated);
}

int leader_quorum_synced(keeper_t *k, const ensemble_config_t *next)
{
    leader_t *ld = k->leader;
    if (!ld || !ld->established)
        return 0;
    int64_t sids[KEEPER_MAX_SERVERS * 2 + 1];
    int n = 0;
    sids[n++] = k->cfg.server_id;
    for (learner_t *l = ld->learners; l && n < (int)(sizeof(sids) / sizeof(sids[0])); l = l->next)
        if (!l->dead && l->sid && !l->observer && l->state == LEARNER_ACTIVE)
            sids[n++] = l->sid;
    return quorum_config_has_majority(next, sids, n);
}

void leader_on_durable(keeper_t *k, int64_t durable_zxid)
{
    leader_t *ld = k->leader;
    if (!ld)
        return;
    if (durable_zxid > ld->own_durable)
        ld->own_durable = durable_zxid;
    if (ld->established)
        recompute_commit(ld);
}

/* The txn was just logged and added to the history: send its serialized
 * form from there, so it is encoded once. */
void leader_propose(keeper_t *k, const txn_header_t *hdr)
{
    leader_t *ld = k->leader;
    if (!ld)
        return;
    const history_entry_t *e = history_at(&k->history, k->history.count - 1);
    if (!e || e->zxid != hdr->zxid)
        return;
    if (hdr->type == OP_RECONFIG) {
        /* ZooKeeper's Leader.propose: the proposed config is the last
         * seen one; from here every proposal needs both quorums. */
        ensemble_config_t next;
        if (peer_reconfig_of(e->bytes, e->len, &next) == 1) {
            k->last_seen = next;
            ld->reconfig_zxid = e->zxid;
            if (keeper_config_store(k, &next, 0) < 0)
                log_error("cannot write zoo.cfg.dynamic.next");
            log_info("proposing config version %" PRIx64 ": %d members, %d voters", (uint64_t)next.version, next.n,
                     ensemble_config_voters(&next));
        }
    }
    for (learner_t *l = ld->learners; l; l = l->next)
        if (learner_in_broadcast(l) && !l->observer) {
            send_packet(l, QP_PROPOSAL, e->zxid, e->bytes, (int32_t)e->len);
            learner_owe(l);
        }
}

void leader_answer_sync(keeper_t *k, int64_t learner_sid)
{
    for (learner_t *l = k->leader ? k->leader->learners : NULL; l; l = l->next)
        if (l->sid == learner_sid && !l->dead) {
            send_packet(l, QP_SYNC, 0, NULL, -1);
            learner_flush(l);
            return;
        }
}

/* ---- synchronizing one follower ---- */

typedef struct {
    buf_t *out;
} snap_sink_t;

static int snap_to_buf(void *arg, const void *data, size_t len)
{
    buf_append(((snap_sink_t *)arg)->out, data, len);
    return 0;
}

typedef struct {
    snapshot_session_t *items;
    size_t count, cap;
} session_vec_t;

static void add_session(session_t *s, void *arg)
{
    session_vec_t *v = arg;
    if (s->local)   /* this keeper's alone (local_sessions.c) */
        return;
    if (v->count == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->items = xrealloc(v->items, v->cap * sizeof(*v->items));
    }
    v->items[v->count].id = s->id;
    v->items[v->count].timeout_ms = s->timeout_ms;
    v->count++;
}

static void send_snapshot(learner_t *l)
{
    keeper_t *k = l->leader->keeper;
    session_vec_t sessions = {NULL, 0, 0};
    session_each(k->sessions, add_session, &sessions);
    buf_t body;
    buf_init(&body);
    snap_sink_t sink = {&body};
    /* As ZooKeeper's LearnerHandler: the SNAP packet, then the snapshot
     * stream itself, then the signature string. */
    send_packet(l, QP_SNAP, tree_last_zxid(k->tree), NULL, -1);
    snapshot_serialize(k->tree, sessions.items, sessions.count, snap_to_buf, &sink);
    free(sessions.items);
    buf_append(&l->out, body.data, body.len);
    jute_put_string(&l->out, "BenWasHere");
    buf_free(&body);
}

/* Everything after from (exclusive): committed ones with their COMMIT,
 * the rest as bare PROPOSALs that will be committed in the broadcast. An
 * observer gets only the committed ones (ZooKeeper's Leader.startForwarding
 * sends outstanding proposals to participants only): the rest reach it as
 * INFORMs when they commit. */
static void send_history_after(learner_t *l, long first_index)
{
    keeper_t *k = l->leader->keeper;
    for (size_t j = (size_t)(first_index + 1); j < k->history.count; j++) {
        const history_entry_t *e = history_at(&k->history, j);
        if (l->observer && e->zxid > l->leader->committed)
            break;
        send_packet(l, QP_PROPOSAL, e->zxid, e->bytes, (int32_t)e->len);
        if (e->zxid <= l->leader->committed)
            send_packet(l, QP_COMMIT, e->zxid, NULL, -1);
    }
}

static void sync_learner(learner_t *l)
{
    leader_t *ld = l->leader;
    keeper_t *k = ld->keeper;
    history_t *h = &k->history;
    int64_t peer = l->peer_zxid, last = history_last_zxid(h);
    const char *mode;
    int64_t trunc_to = 0;
    long from;
    if (peer == last) {
        mode = "DIFF";
        from = (long)h->count - 1;
    } else if (peer > last) {
        mode = "TRUNC";
        trunc_to = last;
        from = (long)h->count - 1;
    } else if ((from = history_find(h, peer)) >= 0) {
        mode = "DIFF";   /* as ZooKeeper: only from a zxid the history holds */
    } else if (h->count && peer > history_at(h, 0)->zxid) {
        /* The follower has proposals we never committed: cut them off at
         * the last zxid we share, then send what follows. */
        mode = "TRUNC";
        from = history_find_before(h, peer);
        trunc_to = from >= 0 ? history_at(h, (size_t)from)->zxid : h->base_zxid;
    } else {
        mode = "SNAP";
        from = -2;
    }
    log_info("sync with %s %" PRId64 ": %s (learner at 0x%" PRIx64 ", leader at 0x%" PRIx64
             ", committed 0x%" PRIx64 "%s)",
             l->observer ? "observer" : "follower", l->sid, mode, (uint64_t)peer, (uint64_t)last,
             (uint64_t)ld->committed, trunc_to ? ", truncating" : "");
    if (from == -2) {
        k->syncs_sent[2]++;
        send_snapshot(l);
        /* proposals after the snapshot's zxid: none are applied beyond committed */
        long after = history_find(h, tree_last_zxid(k->tree));
        if (after < 0 && tree_last_zxid(k->tree) != h->base_zxid)
            after = (long)h->count - 1;   /* nothing newer than the tree */
        send_history_after(l, after);
    } else if (!strcmp(mode, "TRUNC")) {
        k->syncs_sent[1]++;
        send_packet(l, QP_TRUNC, trunc_to, NULL, -1);
        send_history_after(l, from);
    } else {
        k->syncs_sent[0]++;
        send_packet(l, QP_DIFF, last, NULL, -1);
        send_history_after(l, from);
    }
    /* As ZooKeeper 3.8's LearnerHandler: NEWLEADER carries the last seen
     * config's text; a learner takes it if newer than its own. */
    char *cfgtext = xmalloc(ENSEMBLE_CONFIG_TEXT_MAX);
    size_t cfglen = ensemble_config_format(&k->last_seen, cfgtext, ENSEMBLE_CONFIG_TEXT_MAX);
    if (cfglen >= ENSEMBLE_CONFIG_TEXT_MAX)
        cfglen = 0;
    send_packet(l, QP_NEWLEADER, zxid_make(ld->new_epoch, 0), cfglen ? cfgtext : NULL, cfglen ? (int32_t)cfglen : -1);
    free(cfgtext);
    l->state = LEARNER_SYNCED;
    l->acked_zxid = peer < last ? peer : last;
    learner_flush(l);
}

/* ---- discovery ---- */

static void touch_session(session_t *s, void *arg)
{
    keeper_t *k = arg;
    session_touch(k->sessions, s->id, loop_now_ms(k->loop));
}

/* Is the txn at zxid, in this keeper's history, a reconfig? */
static int reconfig_logged(keeper_t *k, int64_t zxid)
{
    long i = history_find(&k->history, zxid);
    if (i < 0)
        return 0;
    const history_entry_t *e = history_at(&k->history, (size_t)i);
    ensemble_config_t c;
    return e && peer_reconfig_of(e->bytes, e->len, &c) == 1;
}

static void establish(leader_t *ld)
{
    keeper_t *k = ld->keeper;
    ld->established = 1;
    k->current_epoch = ld->new_epoch;
    if (quorum_write_epoch(k->snap_dir, k->cfg.data_dir, "currentEpoch", k->current_epoch) < 0)
        log_error("cannot write %s/currentEpoch", k->snap_dir);
    k->next_zxid = zxid_make(ld->new_epoch, 1);
    k->serving = 1;
    k->vote.peer_epoch = ld->new_epoch;   /* what we answer late joiners (ZooKeeper's updateElectionVote) */
    election_set_state(k->election, PEER_LEADING, &k->vote);
    for (learner_t *l = ld->learners; l; l = l->next)
        if (l->state == LEARNER_SYNCED && l->acked_newleader)
            send_uptodate(l);
    session_each(k->sessions, touch_session, k);   /* a whole timeout under the new leader */
    log_info("LEADING epoch %" PRId64 " with %d of %d participants; serving clients", ld->new_epoch,
             sid_count(&ld->newleader_from), ensemble_config_voters(&k->config));
    /* A reconfig this leader logged and had not seen committed (its last
     * seen config is newer than the active one; check_last_seen kept only
     * a logged one), or the new epoch's version of a static config:
     * everything it logged is committed now, so is the reconfig (ZooKeeper's
     * Leader.lead activates its last seen config once NEWLEADER is
     * acknowledged by a quorum of both). */
    if (k->last_seen.version > k->config.version) {
        ensemble_config_t next = k->last_seen;
        if (next.version != zxid_make(ld->new_epoch, 0))
            log_info("committing config version %" PRIx64 " left pending by the previous leader",
                     (uint64_t)next.version);
        /* ZooKeeper's getDesignatedLeader over NEWLEADER's acknowledgements. */
        quorum_ack_t acks[64 * SID_SET_WORDS];
        int64_t sids[64 * SID_SET_WORDS];
        int n = sid_list(&ld->newleader_from, sids, (int)(sizeof(sids) / sizeof(sids[0])));
        for (int i = 0; i < n; i++)
            acks[i] = (quorum_ack_t){sids[i], next.version};
        int64_t designated = quorum_designated_leader(&next, k->cfg.server_id, next.version, acks, n);
        activate_reconfig(ld, &next, designated);
    }
}

/* A last seen config newer than the active one that this new leader never
 * logged as a reconfig (a crash between writing zoo.cfg.dynamic.next and
 * the log, a proposal a sync cut away) was never proposed here: dropped
 * before anyone is synced, so NEWLEADER does not carry it. */
static void check_last_seen(leader_t *ld)
{
    keeper_t *k = ld->keeper;
    if (k->last_seen.version <= k->config.version || reconfig_logged(k, k->last_seen.version))
        return;
    log_info("dropping config version %" PRIx64 ", never logged here", (uint64_t)k->last_seen.version);
    k->last_seen = k->config;
}

static void send_leaderinfo(learner_t *l)
{
    uint8_t data[4];
    be32_put(data, QUORUM_PROTOCOL_VERSION);
    send_packet(l, QP_LEADERINFO, zxid_make(l->leader->new_epoch, 0), data, 4);
    l->state = LEARNER_EPOCH_SENT;
    learner_flush(l);
}

/* Has the peer closed this connection (an EOF or a reset waiting to be read)? */
static int learner_gone(const learner_t *l)
{
    char b;
    ssize_t n = recv(l->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Does a live connection already speak for server sid? Without quorum
 * authentication a follower that reconnects and a stranger using its id
 * look the same, so the connection that has proved itself wins and a live
 * follower is never displaced: it stays until it is found dead, by its
 * socket closing (checked here, so a follower that restarted gets in at
 * once) or by silence past syncLimit (initLimit while syncing), when the
 * ping timer drops it. The newcomer is refused meanwhile; a real follower
 * comes back through the election. ZooKeeper's LearnerHandler likewise
 * keeps the old handler until its socket times out (and runs the newcomer
 * beside it, which would let a stranger acknowledge in the follower's name). */
static int sid_taken(leader_t *ld, const learner_t *l, int64_t sid)
{
    for (learner_t *o = ld->learners; o; o = o->next) {
        if (o == l || o->dead || o->sid != sid)
            continue;
        if (learner_gone(o)) {
            o->dead = 1;
            continue;
        }
        learner_log(ld, l, LOG_LEVEL_WARN,
                    "quorum connection from %s names server %" PRId64 ", which is connected from %s and alive; "
                    "refusing it",
                    l->addr, sid, o->addr);
        return 1;
    }
    return 0;
}

/* The server a FOLLOWERINFO (or OBSERVERINFO) names, or 0 when it is
 * refused: a repeat, an unknown server, an epoch with none after it, a live
 * learner's id. */
static int64_t followerinfo_sid(learner_t *l, const quorum_packet_t *p)
{
    leader_t *ld = l->leader;
    keeper_t *k = ld->keeper;
    if (l->sid) {
        log_warn("server %" PRId64 " sent %s again; dropping it", l->sid, quorum_packet_name(p->type));
        return 0;
    }
    jute_in_t in;
    jute_in_init(&in, p->data, p->data_len > 0 ? (size_t)p->data_len : 0);
    int64_t sid = jute_get_long(&in);
    /* A server outside the active config is taken as a learner without a
     * vote, as ZooKeeper's LearnerHandler does: one about to be added syncs
     * first, and the reconfig then counts its acknowledgements (with
     * reconfigEnabled; see below). */
    if (in.error || sid <= 0 || sid >= 64 * SID_SET_WORDS || sid == k->cfg.server_id) {
        learner_log(ld, l, LOG_LEVEL_WARN, "quorum connection from %s: %s names server %" PRId64 ", not a server id",
                    l->addr, quorum_packet_name(p->type), sid);
        return 0;
    }
    if (!peer_config(k, sid) && !k->reconfig_enabled) {
        /* Without reconfigEnabled no server can be added: one outside the
         * config is a stranger (ZooKeeper syncs it all the same). */
        learner_log(ld, l, LOG_LEVEL_WARN, "quorum connection from %s: %s names server %" PRId64
                    ", which is in no config here (reconfigEnabled is off); refusing it",
                    l->addr, quorum_packet_name(p->type), sid);
        return 0;
    }
    /* LearnerInfo {sid, protocol version, config version}: as ZooKeeper's
     * LearnerHandler, a learner whose active config is later than any this
     * leader has seen is ahead of it and is not taken. (Compared with the
     * last seen one, not the active one: a reconfig this leader inherited
     * pending may be active at a learner already; establish commits it.) */
    (void)jute_get_int(&in);
    int64_t config_version = jute_get_long(&in);
    if (!in.error && config_version > k->last_seen.version) {
        learner_log(ld, l, LOG_LEVEL_WARN,
                    "server %" PRId64 " has config version %" PRIx64 ", later than ours (%" PRIx64 "); refusing it",
                    sid, (uint64_t)config_version, (uint64_t)k->last_seen.version);
        return 0;
    }
    if (!quorum_epoch_can_follow(zxid_epoch(p->zxid))) {
        learner_log(ld, l, LOG_LEVEL_WARN,
                    "quorum connection from %s: %s of server %" PRId64 " has accepted epoch %" PRId64
                    ", after which no epoch is left; refusing it",
                    l->addr, quorum_packet_name(p->type), sid, zxid_epoch(p->zxid));
        return 0;
    }
    return sid_taken(ld, l, sid) ? 0 : sid;
}

static void on_followerinfo(learner_t *l, const quorum_packet_t *p)
{
    leader_t *ld = l->leader;
    keeper_t *k = ld->keeper;
    int64_t sid = followerinfo_sid(l, p);
    if (!sid) {
        l->dead = 1;
        return;
    }
    l->sid = sid;
    /* A server configured as an observer counts for nothing even if it
     * says FOLLOWERINFO (ZooKeeper counts only its voting members). */
    l->observer = p->type == QP_OBSERVERINFO;
    l->voter = !l->observer && peer_is_voter(k, sid);
    handshake_leave(&ld->room, l);
    l->accepted_epoch = zxid_epoch(p->zxid);
    l->last_heard_ms = loop_now_ms(k->loop);
    if (l->observer)
        log_info("server %" PRId64 " (%s) joins as an observer", sid, l->addr);
    else if (!peer_config(k, sid))
        log_info("server %" PRId64 " (%s) is not in config version %" PRIx64 "; syncing it as a learner without a vote",
                 sid, l->addr, (uint64_t)k->config.version);
    if (ld->epoch_set) {
        send_leaderinfo(l);
        return;
    }
    /* As ZooKeeper's getEpochToPropose: every learner's accepted epoch
     * raises the new one, only participants make its quorum. */
    if (l->voter)
        sid_add(&ld->info_from, l->sid);
    if (l->accepted_epoch > ld->max_accepted_epoch)
        ld->max_accepted_epoch = l->accepted_epoch;
    if (sid_count(&ld->info_from) < peer_quorum_size(k))
        return;
    ld->new_epoch = ld->max_accepted_epoch + 1;
    ld->epoch_set = 1;
    check_last_seen(ld);
    if (k->reconfig_enabled && k->config.version == 0 && k->last_seen.version == 0) {
        /* As ZooKeeper's Leader.lead with reconfigEnabled: the static
         * config (version 0) becomes the new epoch's first zxid's version,
         * proposed with NEWLEADER and active once it is acknowledged; so
         * the first dynamic file is zoo.cfg.dynamic.<epoch>00000000. */
        k->last_seen = k->config;
        k->last_seen.version = zxid_make(ld->new_epoch, 0);
        if (keeper_config_store(k, &k->last_seen, 0) < 0)
            log_error("cannot write zoo.cfg.dynamic.next");
    }
    k->accepted_epoch = ld->new_epoch;
    if (quorum_write_epoch(k->snap_dir, k->cfg.data_dir, "acceptedEpoch", ld->new_epoch) < 0)
        log_error("cannot write %s/acceptedEpoch", k->snap_dir);
    sid_add(&ld->ackepoch_from, k->cfg.server_id);
    sid_add(&ld->newleader_from, k->cfg.server_id);
    log_info("new epoch %" PRId64 " agreed by %d servers", ld->new_epoch, sid_count(&ld->info_from));
    for (learner_t *o = ld->learners; o; o = o->next)
        if (o->state == LEARNER_NEW && o->sid)
            send_leaderinfo(o);
}

/* ZooKeeper's waitForEpochAck: while the new epoch is being agreed, a
 * follower more recent than this leader (a later current epoch, or the same
 * and a later zxid) means the election went wrong - a forged vote can make
 * anyone win it - and syncing would TRUNC that follower's committed
 * transactions away. The leader gives up instead and the ensemble elects
 * again. Once a quorum has acknowledged the epoch, a late follower ahead of
 * us only holds proposals no quorum took, and is truncated as usual. */
static int follower_ahead(learner_t *l, const quorum_packet_t *p)
{
    leader_t *ld = l->leader;
    if (sid_count(&ld->ackepoch_from) >= peer_quorum_size(ld->keeper) || p->data_len < 4)
        return 0;
    int64_t epoch = (int32_t)be32_get(p->data);   /* the follower's current epoch */
    if (epoch == -1 || !quorum_summary_more_recent(epoch, p->zxid, ld->own_epoch, ld->own_zxid))
        return 0;
    log_error("server %" PRId64 " is ahead of this leader (epoch %" PRId64 ", zxid 0x%" PRIx64 "; ours %" PRId64
              ", 0x%" PRIx64 "); giving up leading",
              l->sid, epoch, (uint64_t)p->zxid, ld->own_epoch, (uint64_t)ld->own_zxid);
    return 1;
}

static void on_ackepoch(learner_t *l, const quorum_packet_t *p)
{
    leader_t *ld = l->leader;
    if (ld->ahead_sid || follower_ahead(l, p)) {
        if (!ld->ahead_sid)
            ld->ahead_sid = l->sid;
        l->dead = 1;   /* nothing more is agreed while we step down */
        return;
    }
    l->peer_zxid = p->zxid;
    /* An epoch of -1 says the follower had accepted this epoch already: it is
     * synced, but does not count as accepting it again (ZooKeeper's
     * Leader.waitForEpochAck). */
    if (p->data_len >= 4 && (int32_t)be32_get(p->data) != -1 && l->voter)
        sid_add(&ld->ackepoch_from, l->sid);
    if (sid_count(&ld->ackepoch_from) < peer_quorum_size(ld->keeper)) {
        l->state = LEARNER_WAIT_QUORUM;
        return;
    }
    for (learner_t *o = ld->learners; o; o = o->next)
        if (o->state == LEARNER_WAIT_QUORUM)
            sync_learner(o);
    sync_learner(l);
}

/* Has NEWLEADER been acknowledged by a quorum: of the active config, and
 * of the last seen one too when it is newer (ZooKeeper's newLeaderProposal
 * carries both verifiers then; establish activates the newer one)? */
static int newleader_quorum(leader_t *ld)
{
    keeper_t *k = ld->keeper;
    int64_t sids[64 * SID_SET_WORDS];
    int n = sid_list(&ld->newleader_from, sids, (int)(sizeof(sids) / sizeof(sids[0])));
    return quorum_config_has_majority(&k->config, sids, n) &&
           (k->last_seen.version <= k->config.version || quorum_config_has_majority(&k->last_seen, sids, n));
}

static void on_ack(learner_t *l, const quorum_packet_t *p)
{
    leader_t *ld = l->leader;
    if (l->state == LEARNER_SYNCED && p->zxid == zxid_make(ld->new_epoch, 0)) {
        l->acked_newleader = 1;
        if (!l->observer)   /* counted by config in newleader_quorum */
            sid_add(&ld->newleader_from, l->sid);
        if (ld->established)
            send_uptodate(l);
        else if (newleader_quorum(ld)) {
            establish(ld);
        }
        return;
    }
    if (l->observer)
        return;   /* an observer's ACK (of UPTODATE) commits nothing */
    if (p->zxid > l->acked_zxid)
        l->acked_zxid = p->zxid;
    if (ld->established)
        recompute_commit(ld);
}

/* PING answer: {long session id, int timeout} for each session its clients used. */
static void on_ping(learner_t *l, const quorum_packet_t *p)
{
    keeper_t *k = l->leader->keeper;
    jute_in_t in;
    jute_in_init(&in, p->data, p->data_len > 0 ? (size_t)p->data_len : 0);
    while (jute_remaining(&in) >= 12) {
        int64_t sid = jute_get_long(&in);
        (void)jute_get_int(&in);
        session_touch(k->sessions, sid, loop_now_ms(k->loop));
    }
}

/* REVALIDATE: {long session id, int timeout}, a session one of the
 * follower's clients reopens there. Answered as ZooKeeper's
 * Leader.revalidateSession does: the same packet back with {long session
 * id, boolean valid}; a valid session is touched and now served through
 * that follower, so a connection of it still open here is stale and closed. */
static void on_revalidate(learner_t *l, const quorum_packet_t *p)
{
    keeper_t *k = l->leader->keeper;
    if (p->data_len < 12) {
        log_warn("server %" PRId64 " sent a REVALIDATE of %d bytes, not a session id and a timeout; dropping it",
                 l->sid, p->data_len);
        l->dead = 1;
        return;
    }
    int64_t session_id = (int64_t)be64_get(p->data);
    /* A local session of this keeper is not the ensemble's: moving, it
     * expires (ZooKeeper's checkIfValidGlobalSession). */
    const session_t *s = session_find(k->sessions, session_id);
    int valid = s && !s->local && session_touch(k->sessions, session_id, loop_now_ms(k->loop)) == 0;
    log_info("server %" PRId64 " revalidates session 0x%" PRIx64 ": %s", l->sid, (uint64_t)session_id,
             valid ? "valid" : "expired or unknown");
    if (valid) {
        session_find(k->sessions, session_id)->served_by = l->sid;   /* writes through others: SESSIONMOVED */
        client_conn_t *here = keeper_client_of_session(k, session_id);
        if (here && !here->dead)
            client_close(here, "its session moved to another server");
    }
    uint8_t data[9];
    be64_put(data, (uint64_t)session_id);
    data[8] = (uint8_t)(valid ? 1 : 0);
    if (l->dead)
        return;
    quorum_packet_write(&l->out, QP_REVALIDATE, p->zxid, data, sizeof(data), p->auth_null ? NULL : &p->auth);
    learner_flush(l);
}

/* REQUEST: {long session id, int cxid, int type, the request record}. */
static void on_request(learner_t *l, const quorum_packet_t *p)
{
    leader_t *ld = l->leader;
    keeper_t *k = ld->keeper;
    jute_in_t in;
    jute_in_init(&in, p->data, p->data_len > 0 ? (size_t)p->data_len : 0);
    int64_t session_id = jute_get_long(&in);
    int32_t cxid = jute_get_int(&in);
    int32_t type = jute_get_int(&in);
    if (in.error || !ld->established) {
        log_warn("dropping a malformed or early REQUEST from server %" PRId64, l->sid);
        return;
    }
    session_touch(k->sessions, session_id, loop_now_ms(k->loop));
    if (type == OP_SYNC) {
        pending_t *q = pipeline_new(k, PENDING_LEARNER_SYNC, NULL, cxid, type);
        q->learner_sid = l->sid;
        if (pipeline_idle(k)) {
            leader_answer_sync(k, l->sid);
            pipeline_free_entry(q);
        } else {
            pipeline_submit(k, q);
        }
        return;
    }
    pending_t *q = pipeline_new(k, PENDING_REMOTE, NULL, cxid, type);
    if (type == OP_CREATE_SESSION) {
        int32_t timeout = jute_get_int(&in);
        prep_create_session(k, session_id, timeout, &q->hdr, &q->txn);
        /* Known from now on, as ZooKeeper's PrepRequestProcessor tracks it:
         * an upgraded local session's ephemeral create comes right behind
         * its createSession (server/local_sessions.c). */
        session_t *s = session_find(k->sessions, session_id);
        if (!s)
            s = session_add(k->sessions, session_id, timeout, loop_now_ms(k->loop));
        if (s)
            s->served_by = l->sid;   /* its client is that member's */
    } else if (type == OP_CLOSE_SESSION) {
        prep_close_session(k, session_id, &q->hdr, &q->txn);
        q->hdr.cxid = cxid;
    } else if (request_is_write(type)) {
        char who[96];
        snprintf(who, sizeof(who), "server %" PRId64 "'s client (session 0x%" PRIx64 ")", l->sid, (uint64_t)session_id);
        prep_origin_t origin = {session_id, &p->auth, who, l->sid};
        prep_write(k, &origin, type, cxid, &in, &q->hdr, &q->txn);
    } else {
        log_warn("server %" PRId64 " forwarded a request of type %d; ignored", l->sid, type);
        q->has_txn = 0;
        pipeline_free_entry(q);
        return;
    }
    pipeline_submit(k, q);
}

static void on_packet(learner_t *l, const quorum_packet_t *p)
{
    l->last_heard_ms = loop_now_ms(l->leader->keeper->loop);
    if (l->state == LEARNER_NEW && p->type != QP_FOLLOWERINFO && p->type != QP_OBSERVERINFO) {
        learner_log(l->leader, l, LOG_LEVEL_WARN, "quorum connection from %s: expected FOLLOWERINFO or OBSERVERINFO, "
                    "got %s", l->addr, quorum_packet_name(p->type));
        l->dead = 1;
        return;
    }
    switch (p->type) {
    case QP_FOLLOWERINFO:
    case QP_OBSERVERINFO: on_followerinfo(l, p); break;
    case QP_ACKEPOCH: on_ackepoch(l, p); break;
    case QP_ACK: on_ack(l, p); break;
    case QP_PING: on_ping(l, p); break;
    case QP_REQUEST: on_request(l, p); break;
    case QP_REVALIDATE: on_revalidate(l, p); break;
    default:
        log_warn("server %" PRId64 " sent %s; dropping it", l->sid, quorum_packet_name(p->type));
        l->dead = 1;
    }
}

/* Take every whole packet in l->in. */
static void learner_parse(learner_t *l)
{
    while (!l->dead) {
        quorum_packet_t p;
        long used = quorum_packet_parse(buf_read_ptr(&l->in), buf_unread(&l->in), &p);
        if (used < 0) {
            learner_log(l->leader, l, LOG_LEVEL_WARN, "malformed packet from server %" PRId64 " (%s); dropping it",
                        l->sid, l->addr);
            l->dead = 1;
            return;
        }
        if (used == 0)
            return;
        on_packet(l, &p);
        auth_set_free(&p.auth);
        buf_consume(&l->in, (size_t)used);
    }
}

/* How much to read now: anything from a follower; from a connection that
 * has not named itself, no more than a FOLLOWERINFO can take (0: it has
 * sent that much without one). */
static size_t learner_read_limit(const learner_t *l)
{
    if (l->sid)
        return 65536;
    size_t held = buf_unread(&l->in);
    return held < FOLLOWERINFO_MAX_BYTES ? FOLLOWERINFO_MAX_BYTES - held : 0;
}

static void learner_read(learner_t *l)
{
    for (int rounds = 0; rounds < 64 && !l->dead; rounds++) {
        size_t limit = learner_read_limit(l);
        if (limit == 0) {
            learner_log(l->leader, l, LOG_LEVEL_WARN,
                        "quorum connection from %s sent %zu bytes without a whole FOLLOWERINFO; dropping it", l->addr,
                        buf_unread(&l->in));
            l->dead = 1;
            return;
        }
        ssize_t n = net_read_into(&l->in, l->fd, limit);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            if (l->sid)
                log_info("server %" PRId64 " (%s) disconnected", l->sid, l->addr);
            l->dead = 1;
            return;
        }
        if (n < 0)
            return;
        learner_parse(l);
    }
}

static void drop_learner(leader_t *ld, learner_t *l);

static void learner_on_io(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)fd;
    learner_t *l = arg;
    if (l->dead)
        return;
    if (events & LOOP_WRITABLE)
        learner_flush(l);
    if (events & LOOP_READABLE)
        learner_read(l);
    /* A stranger let go is freed at once, its descriptor with it, however
     * fast new ones come; a follower's connection waits for the ping timer. */
    if (l->dead && !l->sid)
        drop_learner(l->leader, l);
}

static learner_t *new_learner(leader_t *ld, int fd, const char *ip, int port)
{
    learner_t *l = xcalloc(1, sizeof(*l));
    l->leader = ld;
    l->fd = fd;
    snprintf(l->addr, sizeof(l->addr), "%s:%d", ip, port);
    buf_init(&l->in);
    buf_init(&l->out);
    buf_init(&l->held);
    l->last_heard_ms = loop_now_ms(ld->keeper->loop);
    l->next = ld->learners;
    ld->learners = l;
    return l;
}

static void on_quorum_accept(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)events;
    leader_t *ld = arg;
    for (int i = 0; i < 16; i++) {
        char ip[64];
        int port;
        int cfd = net_accept(fd, ip, sizeof(ip), &port);
        if (cfd < 0) {
            if (accept_backoff_failed(&ld->accept, errno))
                return;   /* none waiting, or out of descriptors: paused */
            continue;
        }
        accept_backoff_accepted(&ld->accept);
        learner_t *victim = handshake_victim(&ld->room, ip);
        if (victim) {   /* the oldest stranger gives way: see handshake.h */
            learner_log(ld, victim, LOG_LEVEL_WARN,
                        "quorum connection from %s has sent no FOLLOWERINFO and a newer one needs its place; "
                        "dropping it",
                        victim->addr);
            drop_learner(ld, victim);
        }
        learner_t *l = new_learner(ld, cfd, ip, port);
        handshake_enter(&ld->room, ip, l);
        loop_watch(loop, cfd, LOOP_READABLE, learner_on_io, l);
        /* A follower sends FOLLOWERINFO once connected: it may be here already. */
        learner_on_io(loop, cfd, LOOP_READABLE, l);
    }
}

/* ---- liveness ---- */

static void free_learner(keeper_t *k, learner_t *l)
{
    handshake_leave(&l->leader->room, l);
    loop_unwatch(k->loop, l->fd);
    close(l->fd);
    buf_free(&l->in);
    buf_free(&l->out);
    buf_free(&l->held);
    free(l);
}

/* Unlink l and free it now (never while the list is being walked). */
static void drop_learner(leader_t *ld, learner_t *l)
{
    for (learner_t **pp = &ld->learners; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    free_learner(ld->keeper, l);
}

/* Drop l if it has been silent past limit (its sync limit), or, not named
 * yet, past the handshake deadline (naming itself takes a round trip). */
static void check_silence(leader_t *ld, learner_t *l, uint64_t now, uint64_t limit)
{
    if (!l->sid)
        limit = handshake_timeout_ms(limit);
    if (l->dead || now - l->last_heard_ms <= limit)
        return;
    if (l->sid)
        log_warn("server %" PRId64 " silent for %" PRIu64 " ms; dropping it", l->sid, now - l->last_heard_ms);
    else
        learner_log(ld, l, LOG_LEVEL_WARN,
                    "quorum connection from %s sent no FOLLOWERINFO in %" PRIu64 " ms; dropping it", l->addr,
                    now - l->last_heard_ms);
    l->dead = 1;
}

static void on_ping_timer(loop_t *loop, void *arg)
{
    leader_t *ld = arg;
    keeper_t *k = ld->keeper;
    ld->ping_timer = NULL;
    if (ld->ahead_sid) {   /* here, not inside that follower's I/O: peer_look frees every learner */
        char why[96];
        snprintf(why, sizeof(why), "server %" PRId64 " is ahead of this leader", ld->ahead_sid);
        peer_look(k, why);
        return;
    }
    uint64_t now = loop_now_ms(loop);
    uint64_t sync_limit_ms = (uint64_t)k->cfg.sync_limit * (uint64_t)k->cfg.tick_time;
    uint64_t init_limit_ms = (uint64_t)k->cfg.init_limit * (uint64_t)k->cfg.tick_time;
    int64_t alive[KEEPER_MAX_SERVERS * 2 + 1];   /* this keeper, then the synced learners */
    int nalive = 0;
    alive[nalive++] = k->cfg.server_id;
    for (learner_t **pp = &ld->learners; *pp;) {
        learner_t *l = *pp;
        check_silence(ld, l, now, l->state == LEARNER_ACTIVE ? sync_limit_ms : init_limit_ms);
        if (l->dead) {
            *pp = l->next;
            free_learner(k, l);
            continue;
        }
        if (l->state == LEARNER_ACTIVE) {
            if (!l->observer && nalive < (int)(sizeof(alive) / sizeof(alive[0])))
                alive[nalive++] = l->sid;
            send_packet(l, QP_PING, k->last_logged_zxid, NULL, -1);   /* the last proposed, as ZooKeeper */
            learner_flush(l);
        }
        pp = &l->next;
    }
    if (!ld->established && now - ld->started_ms > init_limit_ms) {
        peer_look(k, "no quorum of followers joined within initLimit");
        return;
    }
    /* Counted by the active config (ZooKeeper's syncedAckSet.hasAllQuorums:
     * the proposed one too while a reconfig is pending). */
    if (ld->established && (!quorum_config_has_majority(&k->config, alive, nalive) ||
                            (ld->reconfig_zxid && !quorum_config_has_majority(&k->last_seen, alive, nalive)))) {
        peer_look(k, "lost the quorum of followers");
        return;
    }
    ld->ping_timer = loop_timer_add(loop, (uint64_t)(k->cfg.tick_time / 2 > 0 ? k->cfg.tick_time / 2 : 1),
                                    on_ping_timer, ld);
}

void leader_counts(const keeper_t *k, int *learners, int *synced_followers, int *synced_observers)
{
    *learners = *synced_followers = *synced_observers = 0;
    for (const learner_t *l = k->leader ? k->leader->learners : NULL; l; l = l->next) {
        if (l->dead || !l->sid)
            continue;
        (*learners)++;
        if (l->state == LEARNER_ACTIVE)
            (*(l->observer ? synced_observers : synced_followers))++;
    }
}

/* The quorum port on this server's own address, from its member line. The
 * name was looked up off the loop since start-up or since the config that
 * named it became active (peer.c, look_up_own_address); should that
 * lookup still be under way, leading fails now and the next election tries
 * again, as after any failure to bind. The fd, or -1 with err. */
static int listen_quorum_port(keeper_t *k, const ensemble_member_t *me, char *err, size_t errlen)
{
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int found = resolver_lookup(k->resolver, me->host, me->quorum_port, &addr, &addrlen, err, errlen);
    if (found == RESOLVER_PENDING)
        snprintf(err, errlen, "this server's name %s is still being looked up", me->host);
    if (found != RESOLVER_OK)
        return -1;
    int fd = net_listen_addr((struct sockaddr *)&addr, addrlen, 64);
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on %s:%d: %s", me->host, me->quorum_port, strerror(errno));
    return fd;
}

int leader_start(keeper_t *k, char *err, size_t errlen)
{
    const ensemble_member_t *me = peer_config(k, k->cfg.server_id);
    leader_t *ld = calloc(1, sizeof(*ld));
    if (!me || !ld) {
        free(ld);
        snprintf(err, errlen, "no server.%d line for this keeper", k->cfg.server_id);
        return -1;
    }
    ld->keeper = k;
    ld->listen_fd = listen_quorum_port(k, me, err, errlen);
    if (ld->listen_fd < 0) {
        free(ld);
        return -1;
    }
    k->leader = ld;
    /* What this keeper logged but had not applied is its history now:
     * everything it logged is committed once a quorum follows it. */
    peer_apply_unapplied(k);
    ld->committed = k->last_logged_zxid;
    ld->own_durable = k->last_logged_zxid;
    ld->started_ms = loop_now_ms(k->loop);
    ld->max_accepted_epoch = k->accepted_epoch;
    ld->own_epoch = k->current_epoch;
    ld->own_zxid = k->last_logged_zxid;
    handshake_room_init(&ld->room);
    ratelimit_init(&ld->stranger_log, 1000, 5);
    sid_add(&ld->info_from, k->cfg.server_id);
    char name[48];
    snprintf(name, sizeof(name), "quorum port %d", me->quorum_port);
    if (accept_backoff_start(&ld->accept, k->loop, ld->listen_fd, on_quorum_accept, ld, name) < 0)
        log_error("cannot watch the quorum port");   /* followers time out; initLimit sends us LOOKING */
    ld->ping_timer = loop_timer_add(k->loop, (uint64_t)(k->cfg.tick_time / 2 > 0 ? k->cfg.tick_time / 2 : 1),
                                    on_ping_timer, ld);
    election_set_state(k->election, PEER_LEADING, &k->vote);
    log_info("leading: waiting for followers on %s:%d", me->host, me->quorum_port);
    return 0;
}

void leader_stop(keeper_t *k)
{
    leader_t *ld = k->leader;
    if (!ld)
        return;
    while (ld->learners) {
        learner_t *l = ld->learners;
        ld->learners = l->next;
        free_learner(k, l);
    }
    if (ld->ping_timer)
        loop_timer_cancel(k->loop, ld->ping_timer);
    if (ld->look_timer)
        loop_timer_cancel(k->loop, ld->look_timer);
    accept_backoff_stop(&ld->accept);
    close(ld->listen_fd);
    free(ld);
    k->leader = NULL;
}
