/* leadership.c -- a replica's role (becomeLeader, becomeFollower,
 * onLeaderChange), with the fixes docs/replication.md gives; the election
 * itself is election.c's.
 *
 * becomeLeader assigns its epoch at its log end (so followers truncate
 * against it at once), starts the ISR state (isr.h) and the commitQ.
 * becomeFollower hands the replica to the fetcher, which truncates by epoch
 * first. Losing leadership fails every waiting acks=all request with
 * NOT_LEADER_OR_FOLLOWER. */
#define _GNU_SOURCE
#include "repl.h"
#include "repl_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/logging.h"
#include "broker/core/cluster.h"
#include "broker/core/cluster_sync.h"

/* Produce requests waiting on one partition's commitQ: far more than one per
 * producer connection ever needs. */
#define COMMITQ_MAX 100000

/* NULL once replication stopped (broker stopping): nothing follows then. */
static fetcher_t *fetcher_of(const broker_t *b)
{
    return b->repl ? b->repl->fetcher : NULL;
}

static const char *pname(const partition_t *p, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%d", p->topic->name, (int)p->id);
    return buf;
}

/* ---- leaving a role ---- */

static void stop_leading(broker_t *b, replica_t *r)
{
    (void)b;
    if (!r->isr)
        return;
    commitq_fail_all(&r->commitq, KERR_NOT_LEADER_OR_FOLLOWER);
    isr_free(r->isr);
    free(r->isr);
    r->isr = NULL;
}

static void become_none(broker_t *b, replica_t *r)
{
    stop_leading(b, r);
    fetcher_unfollow(fetcher_of(b), r);
    r->role = REPLICA_NONE;
}

void repl_fenced(broker_t *b, replica_t *r, const char *why)
{
    char name[300];
    log_warn("no longer leading %s: %s", pname(r->part, name, sizeof(name)), why);
    become_none(b, r);
    cluster_reread_partition(b, r->part);
}

void repl_stop_leading_all(broker_t *b, const char *why)
{
    char name[300];
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->replica->role == REPLICA_LEADER) {
                stop_leading(b, p->replica);
                p->replica->role = REPLICA_NONE;
                log_warn("no longer leading %s: %s", pname(p, name, sizeof(name)), why);
            }
        }
}

void repl_replica_stopping(broker_t *b, replica_t *r)
{
    become_none(b, r);
}

/* ---- taking a role ---- */

/* Leading already: the assigned replicas or a move's target may have
 * changed (onReplicaChange, onPartitionReassigned); the followers that stay
 * keep their progress, the ISR check drops the rest. */
static void replica_sets_changed(broker_t *b, replica_t *r)
{
    const partition_t *p = r->part;
    int32_t rar[COORD_MAX_REPLICAS];
    int nrar;
    repl_move_rar(p, rar, &nrar);
    if (r->isr->nar == p->nreplicas && memcmp(r->isr->ar, p->replicas, sizeof(*p->replicas) * (size_t)p->nreplicas) == 0 &&
        r->isr->nrar == nrar && memcmp(r->isr->rar, rar, sizeof(*rar) * (size_t)nrar) == 0)
        return;
    isr_set_replicas(r->isr, p->replicas, p->nreplicas, rar, nrar, loop_now_ms(b->loop));
    repl_check_isr(b, r);
}

static void become_leader(broker_t *b, replica_t *r, int32_t epoch)
{
    partition_t *p = r->part;
    char name[300];
    if (r->role == REPLICA_LEADER && r->leader_epoch == epoch && r->isr) {
        replica_sets_changed(b, r);
        return;
    }
    fetcher_unfollow(fetcher_of(b), r);
    stop_leading(b, r);
    partition_log_assign_epoch(r->log, epoch);
    r->isr = xcalloc(1, sizeof(*r->isr));
    isr_init(r->isr, b->cfg.broker_id, epoch, p->replicas, p->nreplicas, p->isr, p->nisr,
             partition_log_end_offset(r->log), partition_log_high_watermark(r->log), loop_now_ms(b->loop),
             (uint64_t)b->cfg.leader_election_wait_ms);
    commitq_init(&r->commitq, COMMITQ_MAX);
    int32_t rar[COORD_MAX_REPLICAS];
    int nrar;
    repl_move_rar(p, rar, &nrar);
    if (nrar > 0)
        isr_set_replicas(r->isr, p->replicas, p->nreplicas, rar, nrar, loop_now_ms(b->loop));
    r->role = REPLICA_LEADER;
    r->leader_epoch = epoch;
    log_info("leading %s at epoch %d (ISR size %d, log end %" PRId64 ", HW %" PRId64 ")",
             pname(p, name, sizeof(name)), (int)epoch, p->nisr, partition_log_end_offset(r->log), r->isr->hw);
    repl_leader_appended(b, r);   /* an ISR of this replica alone: the HW is the log end */
    repl_check_isr(b, r);
}

static void become_follower(broker_t *b, replica_t *r, int32_t leader, int32_t epoch)
{
    char name[300];
    if (r->role == REPLICA_FOLLOWER && r->leader_epoch == epoch && r->fetch)
        return;
    stop_leading(b, r);
    r->role = REPLICA_FOLLOWER;
    r->leader_epoch = epoch;
    log_info("following broker %d for %s at epoch %d", (int)leader, pname(r->part, name, sizeof(name)), (int)epoch);
    fetcher_follow(fetcher_of(b), r, leader, epoch);
}

/* ---- onLeaderChange / onReplicaChange ---- */

void repl_reconcile(broker_t *b, partition_t *p)
{
    int32_t me = b->cfg.broker_id;
    replica_t *r = p->replica;
    if (!r || !b->registered || !p->have_leader || p->isr_state == 0 || !r->log)
        return;
    if (p->leader < 0) {
        if (r->role != REPLICA_NONE)
            become_none(b, r);
        repl_elect(b, p, r);
        return;
    }
    p->stand_after_ms = 0;   /* a leader is there: the next election starts afresh */
    if (p->leader == me) {
        /* Ours only when our own session holds the node (a previous
         * session's node is waited out), and only once the ISR node of the
         * same election has been read. */
        if (p->leader_owner == b->session_id && p->isr_state == 2 && p->isr_epoch == p->leader_epoch)
            become_leader(b, r, p->leader_epoch);
        else if (r->role != REPLICA_NONE)
            become_none(b, r);
    } else {
        become_follower(b, r, p->leader, p->leader_epoch);
    }
}

void repl_brokers_changed(broker_t *b, int32_t id)
{
    repl_isr_check_all(b);
    if (id >= 0)
        fetcher_broker_changed(fetcher_of(b), id);
}

/* ---- start and stop ---- */

int repl_start(broker_t *b)
{
    b->repl = xcalloc(1, sizeof(*b->repl));
    b->repl->fetcher = fetcher_create(b);
    b->repl->elections_tail = &b->repl->elections;
    repl_throttle_start(b);
    repl_isr_timer_start(b);
    return 0;
}

void repl_stop(broker_t *b)
{
    if (!b->repl)
        return;
    if (b->repl->isr_timer)
        loop_timer_cancel(b->loop, b->repl->isr_timer);
    if (b->repl->shutdown_timer)
        loop_timer_cancel(b->loop, b->repl->shutdown_timer);
    repl_elections_stop(b);
    if (b->repl->lease_timer)
        loop_timer_cancel(b->loop, b->repl->lease_timer);
    fetcher_destroy(b->repl->fetcher);
    free(b->repl);
    b->repl = NULL;
}
