/* peer.c -- this keeper's role in its ensemble (ZooKeeper's QuorumPeer):
 * STANDALONE without server.N lines; otherwise LOOKING until the election
 * decides, then LEADING or FOLLOWING (OBSERVING for an observer, which
 * learns from the leader through follower.c) until the quorum is lost, and LOOKING
 * again. Clients are served only while FOLLOWING or LEADING is established
 * (or standalone), and with readonlymode.enabled read-only while LOOKING
 * after a grace period (server/readonly.c); leaving a role closes every
 * client connection, as ZooKeeper does, and the clients reconnect with
 * their sessions. */
#define _GNU_SOURCE
#include "keeper/server/keeper_impl.h"
#include "quorum.h"
#include "base/logging.h"
#include "base/net.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough for a follower that was away for a while to come back with a
 * DIFF; one further behind gets a SNAP. (ZooKeeper keeps 500 in memory
 * and reads older ones from its log files.) */
#define HISTORY_MAX_ENTRIES 20000
#define HISTORY_MAX_BYTES (16u << 20)

/* Who votes is the active configuration's business (k->config: the static
 * server.N lines, or the last committed reconfig). */
int peer_quorum_size(const keeper_t *k)
{
    return quorum_majority(ensemble_config_voters(&k->config));
}

int peer_is_voter(const keeper_t *k, int64_t sid)
{
    return quorum_config_is_voter(&k->config, sid);
}

const ensemble_member_t *peer_config(const keeper_t *k, int64_t sid)
{
    if (sid <= 0 || sid > INT32_MAX)
        return NULL;
    const ensemble_member_t *m = ensemble_config_find(&k->config, (int)sid);
    return m ? m : ensemble_config_find(&k->last_seen, (int)sid);   /* a leader being added */
}

/* What this server is in the active configuration: the role fourlw and
 * follower.c read (cfg.peer_type). A server outside it learns as a
 * non-voting follower. */
static void update_peer_type(keeper_t *k)
{
    const ensemble_member_t *me = ensemble_config_find(&k->config, k->cfg.server_id);
    if (me)
        k->cfg.peer_type = me->observer ? PEER_TYPE_OBSERVER : PEER_TYPE_PARTICIPANT;
}

static void close_clients(keeper_t *k, const char *why);
static void on_elected(void *arg, peer_state_t state, const vote_t *vote);

/* Start looking this server's own name up (base/resolver.h), so that it is
 * known, without a wait on the loop, when this server comes to lead and
 * binds its quorum port there (leader.c). */
static void look_up_own_address(keeper_t *k)
{
    const ensemble_member_t *me = ensemble_config_find(&k->config, k->cfg.server_id);
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char err[300];
    if (me && k->resolver)
        (void)resolver_lookup(k->resolver, me->host, me->quorum_port, &addr, &addrlen, err, sizeof(err));
}

int peer_activate(keeper_t *k, const ensemble_config_t *next, int64_t designated, char *why, size_t whylen)
{
    if (next->version <= k->config.version)
        return 0;   /* activated already (a COMMIT after the sync's NEWLEADER carried it) */
    static_assert(sizeof(ensemble_config_t) < 64 * 1024, "ensemble_config_t lives on the stack here");
    ensemble_config_t prev = k->config;
    k->config = *next;
    if (k->last_seen.version < next->version)
        k->last_seen = *next;
    /* Its file, zoo.cfg, and /zookeeper/config when no txn set it (the
     * epoch's version of a static config, a sync), as ZooKeeper's
     * processReconfig (membership_files.c). */
    if (keeper_config_store(k, next, 1) < 0)
        log_error("cannot write the dynamic config file of version %" PRIx64, (uint64_t)next->version);
    if (k->election)
        election_set_config(k->election, next);
    update_peer_type(k);
    look_up_own_address(k);
    const ensemble_member_t *me = ensemble_config_find(next, k->cfg.server_id);
    log_info("config version %" PRIx64 " is active: %d members, %d voters; this server is %s", (uint64_t)next->version,
             next->n, ensemble_config_voters(next),
             !me ? "not a member" : me->observer ? "an observer" : "a participant");
    char role = k->role == ROLE_LEADING ? 'L' : k->role == ROLE_FOLLOWING ? 'F' : '-';
    int64_t current = k->role == ROLE_LEADING ? k->cfg.server_id : k->vote.leader;
    int action = quorum_reconfig_action(role, k->cfg.server_id, current, &prev, next, designated);
    if (action == QUORUM_HAND_OFF)
        snprintf(why, whylen, "config version %" PRIx64 " designates server %" PRId64 " to lead",
                 (uint64_t)next->version, designated);
    else if (action == QUORUM_ELECT && role == 'L')
        snprintf(why, whylen, "config version %" PRIx64 " %s", (uint64_t)next->version,
                 !me ? "removes this leader" : "leaves this leader no vote");
    else if (action == QUORUM_ELECT && me && ensemble_config_find(&prev, k->cfg.server_id) &&
             ensemble_config_find(&prev, k->cfg.server_id)->observer != me->observer)
        snprintf(why, whylen, "config version %" PRIx64 " makes this server %s", (uint64_t)next->version,
                 me->observer ? "an observer" : "a participant");
    else if (action == QUORUM_ELECT)
        snprintf(why, whylen, "config version %" PRIx64 " leaves leader %" PRId64 " no vote", (uint64_t)next->version,
                 current);
    return action == QUORUM_HAND_OFF ? PEER_HAND_OFF : action == QUORUM_ELECT ? PEER_ELECT : 0;
}

/* Stop leading or following and serving: clients are told why (their
 * replies made so far go out first) and local sessions are forgotten, as
 * ZooKeeper's new ZooKeeperServer starts with none. */
static void leave_role(keeper_t *k, const char *why_clients)
{
    pipeline_follower_send_owed(k);
    if (k->role == ROLE_LEADING)
        leader_stop(k);
    else if (k->role == ROLE_FOLLOWING)
        follower_stop(k);
    k->serving = 0;
    close_clients(k, why_clients);
    local_sessions_forget(k);
    pipeline_abandon(k);
}

void peer_hand_off(keeper_t *k, int64_t leader, const char *why)
{
    log_warn("leaving the role: %s", why);
    leave_role(k, "this keeper changes its leader after a reconfig");
    vote_t v = k->vote;
    v.leader = leader;
    v.zxid = k->last_logged_zxid;
    peer_state_t state = leader == k->cfg.server_id                 ? PEER_LEADING
                         : k->cfg.peer_type == PEER_TYPE_OBSERVER ? PEER_OBSERVING
                                                                   : PEER_FOLLOWING;
    on_elected(k, state, &v);   /* its own election's outcome; initLimit sends it LOOKING if that fails */
}

void peer_leave(keeper_t *k, int mode, int64_t leader, const char *why)
{
    if (mode == PEER_HAND_OFF)
        peer_hand_off(k, leader, why);
    else
        peer_look(k, why);
}

int peer_reconfig_of(const uint8_t *bytes, size_t len, ensemble_config_t *out)
{
    jute_in_t in;
    jute_in_init(&in, bytes, len);
    txn_header_t hdr;
    if (txn_header_read(&in, &hdr) < 0 || hdr.type != OP_RECONFIG)
        return 0;
    txn_t txn;
    txn_init(&txn, hdr.type);
    int rc = -1;
    char err[200] = "not a SetDataTxn";
    if (txn_body_read(&in, hdr.type, &txn) == 0 && txn.data && txn.data_len >= 0 &&
        ensemble_config_parse(out, (const char *)txn.data, (size_t)txn.data_len, err, sizeof(err)) == 0) {
        /* Its text names its version (the reconfig's zxid); it is that zxid in any case. */
        out->version = hdr.zxid;
        rc = 1;
    }
    if (rc < 0)
        log_warn("the reconfig txn 0x%" PRIx64 " carries no usable config: %s", (uint64_t)hdr.zxid, err);
    txn_free(&txn);
    return rc;
}

/* The election took a newer config from a notification while LOOKING. */
static void on_election_config(void *arg, const ensemble_config_t *c)
{
    keeper_t *k = arg;
    if (c->version <= k->config.version)
        return;
    k->config = *c;
    if (k->last_seen.version < c->version)
        k->last_seen = *c;
    if (keeper_config_store(k, c, 1) < 0)
        log_error("cannot write the dynamic config file of version %" PRIx64, (uint64_t)c->version);
    update_peer_type(k);
}

void peer_apply_unapplied(keeper_t *k)
{
    while (k->unapplied_head) {
        pending_t *p = k->unapplied_head;
        k->unapplied_head = p->next;
        if (p->hdr.zxid > tree_last_zxid(k->tree)) {
            txn_result_t result;
            keeper_commit(k, &p->hdr, &p->txn, &result);
            txn_result_free(&result);
        }
        pipeline_free_entry(p);
    }
    k->unapplied_tail = NULL;
}

void peer_drop_unapplied(keeper_t *k)
{
    while (k->unapplied_head) {
        pending_t *p = k->unapplied_head;
        k->unapplied_head = p->next;
        pipeline_free_entry(p);
    }
    k->unapplied_tail = NULL;
}

static void on_elected(void *arg, peer_state_t state, const vote_t *vote)
{
    keeper_t *k = arg;
    char err[512];
    int rc;
    readonly_stop(k);   /* a quorum again: read-only clients go elsewhere first */
    k->vote = *vote;
    if (state == PEER_LEADING) {
        log_info("elected: LEADING (epoch %" PRId64 ", zxid 0x%" PRIx64 ")", vote->peer_epoch, (uint64_t)vote->zxid);
        k->role = ROLE_LEADING;
        rc = leader_start(k, err, sizeof(err));
    } else {
        log_info("elected: %s server %" PRId64, state == PEER_OBSERVING ? "OBSERVING" : "FOLLOWING", vote->leader);
        k->role = ROLE_FOLLOWING;   /* an observer learns from the leader as a follower does (follower.c) */
        rc = follower_start(k, vote->leader, err, sizeof(err));
    }
    if (rc < 0)
        peer_look(k, err);
}

static void close_clients(keeper_t *k, const char *why)
{
    while (k->clients) {
        /* Replies already made go out first, as far as the socket takes
         * them without waiting: the client that asked for a reconfig that
         * sends this keeper LOOKING gets its answer, as from ZooKeeper. */
        client_conn_t *c = k->clients;
        if (buf_unread(&c->out))
            (void)net_write_buffer(c->fd, &c->out);
        client_close(c, why);
    }
}

/* A round with this server's last zxid and epoch; a reconfig it logged and
 * has not seen committed counts in the vote (election.h). */
static void start_round(keeper_t *k)
{
    election_set_next_config(k->election, &k->last_seen);
    election_look(k->election, k->last_logged_zxid, k->current_epoch, on_elected, k);
}

void peer_look(keeper_t *k, const char *why)
{
    log_warn("going back to LOOKING: %s", why);
    leave_role(k, "this keeper is electing a leader");
    k->role = ROLE_LOOKING;
    election_set_state(k->election, PEER_LOOKING, NULL);
    start_round(k);
    readonly_on_looking(k);
}

int peer_start(keeper_t *k, char *err, size_t errlen)
{
    /* k->config and k->last_seen were set by keeper_ensemble_start (membership_files.c). */
    k->last_logged_zxid = tree_last_zxid(k->tree);
    if (k->config.n == 0) {
        k->role = ROLE_STANDALONE;
        k->serving = 1;
        return 0;
    }
    int64_t log_epoch = zxid_epoch(k->last_logged_zxid);
    /* In dataDir/version-2, where ZooKeeper keeps them (quorum.h). */
    k->current_epoch = quorum_read_epoch(k->snap_dir, k->cfg.data_dir, "currentEpoch", log_epoch);
    if (k->current_epoch >= 0 && k->current_epoch < log_epoch) {
        /* As ZooKeeper's QuorumPeer does: a crash between writing the new
         * currentEpoch and renaming it into place leaves it in the .tmp. */
        int64_t tmp = quorum_read_epoch(k->snap_dir, NULL, "currentEpoch.tmp", -1);
        if (tmp >= log_epoch) {
            log_info("%s/currentEpoch.tmp found: current epoch %" PRId64, k->snap_dir, tmp);
            k->current_epoch = tmp;
            if (quorum_write_epoch(k->snap_dir, k->cfg.data_dir, "currentEpoch", tmp) < 0) {
                snprintf(err, errlen, "cannot write %s/currentEpoch", k->snap_dir);
                return -1;
            }
        }
    }
    k->accepted_epoch = quorum_read_epoch(k->snap_dir, k->cfg.data_dir, "acceptedEpoch", k->current_epoch);
    if (k->current_epoch < 0 || k->accepted_epoch < 0) {
        snprintf(err, errlen, "%s/currentEpoch or acceptedEpoch is not a number", k->snap_dir);
        return -1;
    }
    if (k->current_epoch < log_epoch) {
        snprintf(err, errlen, "currentEpoch %" PRId64 " is older than the log's last zxid 0x%" PRIx64,
                 k->current_epoch, (uint64_t)k->last_logged_zxid);
        return -1;
    }
    update_peer_type(k);
    if (!(k->resolver = resolver_create(k->loop, NULL))) {
        snprintf(err, errlen, "cannot start the thread that looks up host names");
        return -1;
    }
    look_up_own_address(k);
    k->election = election_create(k->loop, k->resolver, &k->cfg, &k->config, on_election_config, k, err, errlen);
    if (!k->election)
        return -1;
    k->role = ROLE_LOOKING;
    log_info("server %d of %d (config version %" PRIx64 "): LOOKING (last zxid 0x%" PRIx64 ", epoch %" PRId64 ")", k->cfg.server_id,
             k->config.n, (uint64_t)k->config.version, (uint64_t)k->last_logged_zxid, k->current_epoch);
    start_round(k);
    readonly_on_looking(k);
    return 0;
}

void peer_stop(keeper_t *k)
{
    readonly_stop(k);
    if (k->role == ROLE_LEADING)
        leader_stop(k);
    else if (k->role == ROLE_FOLLOWING)
        follower_stop(k);
    election_destroy(k->election);
    k->election = NULL;
    resolver_destroy(k->resolver);
    k->resolver = NULL;
    peer_drop_unapplied(k);
    history_free(&k->history);
}

void peer_init_history(keeper_t *k)
{
    history_init(&k->history, HISTORY_MAX_ENTRIES, HISTORY_MAX_BYTES, 0);
}
