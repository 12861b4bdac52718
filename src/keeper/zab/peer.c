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

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough for a follower that was away for a while to come back with a
 * DIFF; one further behind gets a SNAP. (ZooKeeper keeps 500 in memory
 * and reads older ones from its log files.) */
#define HISTORY_MAX_ENTRIES 20000
#define HISTORY_MAX_BYTES (16u << 20)

int peer_quorum_size(const keeper_t *k)
{
    return quorum_majority(quorum_voter_count(k->cfg.peers, k->cfg.npeers));
}

int peer_is_voter(const keeper_t *k, int64_t sid)
{
    const keeper_peer_t *p = peer_config(k, sid);
    return p && !p->observer;
}

const keeper_peer_t *peer_config(const keeper_t *k, int64_t sid)
{
    for (int i = 0; i < k->cfg.npeers; i++)
        if (k->cfg.peers[i].id == sid)
            return &k->cfg.peers[i];
    return NULL;
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
    while (k->clients)
        client_close(k->clients, why);
}

void peer_look(keeper_t *k, const char *why)
{
    log_warn("going back to LOOKING: %s", why);
    if (k->role == ROLE_LEADING)
        leader_stop(k);
    else if (k->role == ROLE_FOLLOWING)
        follower_stop(k);
    k->serving = 0;
    close_clients(k, "this keeper is electing a leader");
    local_sessions_forget(k);   /* as ZooKeeper's new ZooKeeperServer starts with no local sessions */
    pipeline_abandon(k);
    k->role = ROLE_LOOKING;
    election_set_state(k->election, PEER_LOOKING, NULL);
    election_look(k->election, k->last_logged_zxid, k->current_epoch, on_elected, k);
    readonly_on_looking(k);
}

int peer_start(keeper_t *k, char *err, size_t errlen)
{
    k->last_logged_zxid = tree_last_zxid(k->tree);
    if (k->cfg.npeers == 0) {
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
    k->election = election_create(k->loop, &k->cfg, err, errlen);
    if (!k->election)
        return -1;
    k->role = ROLE_LOOKING;
    log_info("server %d of %d: LOOKING (last zxid 0x%" PRIx64 ", epoch %" PRId64 ")", k->cfg.server_id,
             k->cfg.npeers, (uint64_t)k->last_logged_zxid, k->current_epoch);
    election_look(k->election, k->last_logged_zxid, k->current_epoch, on_elected, k);
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
    peer_drop_unapplied(k);
    history_free(&k->history);
}

void peer_init_history(keeper_t *k)
{
    history_init(&k->history, HISTORY_MAX_ENTRIES, HISTORY_MAX_BYTES, 0);
}
