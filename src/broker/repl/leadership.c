/* leadership.c -- a replica's role (leaderElection, becomeLeader,
 * becomeFollower, onLeaderChange), with the fixes docs/replication.md gives.
 *
 * Election: a live ISR member creates the ephemeral leader node and, in the
 * same multi, rewrites the ISR node at its znode version with the leader
 * epoch bumped and the dead members left out. Only one candidate can win;
 * a deposed leader can never overwrite newer state. A brand-new partition
 * (no ISR node) is started by its first live assigned replica with ISR = the
 * live assigned replicas at epoch 0 -- but only while its log is empty: a
 * replica holding data stands alone, at an epoch past its own. An ISR whose
 * members are all gone waits, unless unclean.leader.election.enable (the
 * topic's own setting first) lets an out-of-sync replica lead.
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
/* How long a candidate waits for one ahead of it in the replica list to
 * win an election before it stands itself. */
#define ELECTION_TURN_MS 500

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

/* ---- election ---- */

typedef struct {
    broker_t *b;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t epoch;
} election_t;

static void election_done(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    election_t *e = arg;
    partition_t *p = cluster_partition(e->b, e->topic, e->partition);
    if (p) {
        p->electing = 0;
        if (res->rc == ZOK)
            log_info("elected leader of %s-%d at epoch %d", e->topic, (int)e->partition, (int)e->epoch);
        else if (res->rc != ZNODEEXISTS && res->rc != ZBADVERSION && res->rc != ZCLOSING)
            log_warn("leader election for %s-%d failed: %s", e->topic, (int)e->partition, zerror(res->rc));
        /* Either way the leader and ISR watches bring the outcome. */
    }
    free(e);
}

static int live_or_me(const broker_t *b, int32_t id)
{
    return id == b->cfg.broker_id || cluster_broker_live(b, id);
}

static int first_live_replica(const broker_t *b, const partition_t *p)
{
    for (int i = 0; i < p->nreplicas; i++)
        if (live_or_me(b, p->replicas[i]))
            return p->replicas[i];
    return -1;
}

static int any_live(const broker_t *b, const int32_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        if (cluster_broker_live(b, ids[i]))
            return 1;
    return 0;
}

static int unclean_allowed(const broker_t *b, const topic_t *t)
{
    const char *v = topic_config(t, "unclean.leader.election.enable");
    return v ? strcmp(v, "true") == 0 : b->cfg.unclean_leader_election;
}

/* A partition without an ISR node: the first live replica starts it. */
static int plan_first_isr(broker_t *b, partition_t *p, replica_t *r, int32_t *isr, int *nisr, int32_t *epoch)
{
    char name[300];
    if (first_live_replica(b, p) != b->cfg.broker_id)
        return 0;
    if (partition_log_end_offset(r->log) > partition_log_start_offset(r->log)) {
        /* Our log has data: the others' logs may not be empty either, so
         * nobody else can be assumed in sync. */
        log_warn("%s has no ISR node but this replica holds data: it leads alone", pname(p, name, sizeof(name)));
        isr[0] = b->cfg.broker_id;
        *nisr = 1;
        *epoch = partition_log_latest_epoch(r->log) + 1;
        return 1;
    }
    *nisr = 0;
    for (int i = 0; i < p->nreplicas; i++)
        if (live_or_me(b, p->replicas[i]))
            isr[(*nisr)++] = p->replicas[i];
    *epoch = 0;
    return 1;
}

/* Whether a live candidate comes before us in the replica list (the
 * preferred replica first): it stands first. We stand too once
 * ELECTION_TURN_MS have passed without a leader (it may not have heard). */
static int someone_first(broker_t *b, partition_t *p, const int32_t *candidates, int n)
{
    int32_t me = b->cfg.broker_id;
    for (int i = 0; i < p->nreplicas && p->replicas[i] != me; i++) {
        if (!isr_contains(candidates, n, p->replicas[i]) || !cluster_broker_live(b, p->replicas[i]))
            continue;
        uint64_t now = loop_now_ms(b->loop);
        if (!p->stand_after_ms)
            p->stand_after_ms = now + ELECTION_TURN_MS;
        return now < p->stand_after_ms;
    }
    return 0;
}

/* The ISR the winner writes and its epoch; 0 when this broker should not
 * stand now. Candidates stand in replica-list order, so the preferred
 * replica leads whenever it can (Kafka's controller picks the same). */
static int election_plan(broker_t *b, partition_t *p, replica_t *r, int32_t *isr, int *nisr, int32_t *epoch)
{
    int32_t me = b->cfg.broker_id;
    char name[300];
    if (p->isr_state == 1)
        return plan_first_isr(b, p, r, isr, nisr, epoch);
    *epoch = p->isr_epoch + 1;
    if (isr_contains(p->isr, p->nisr, me)) {
        if (someone_first(b, p, p->isr, p->nisr))
            return 0;
        /* The members still alive stay; the new leader's wait settles the rest. */
        *nisr = 0;
        isr[(*nisr)++] = me;
        for (int i = 0; i < p->nisr; i++)
            if (p->isr[i] != me && cluster_broker_live(b, p->isr[i]))
                isr[(*nisr)++] = p->isr[i];
        return 1;
    }
    if (any_live(b, p->isr, p->nisr) || !(unclean_allowed(b, p->topic) || p->unclean_asked) ||
        someone_first(b, p, p->replicas, p->nreplicas))
        return 0;
    log_warn("%s: no replica of the ISR is alive; %s lets this out-of-sync replica lead, and messages only the "
             "lost replicas had may be lost",
             pname(p, name, sizeof(name)),
             p->unclean_asked ? "kipper elect --unclean" : "unclean.leader.election.enable");
    isr[0] = me;
    *nisr = 1;
    return 1;
}

static void elect(broker_t *b, partition_t *p, replica_t *r)
{
    int32_t isr[COORD_MAX_REPLICAS], epoch;
    int nisr;
    if (p->electing || b->shutting_down || !election_plan(b, p, r, isr, &nisr, &epoch))
        return;
    char isr_path[COORD_TOPIC_NAME_MAX + 64], leader_path[COORD_TOPIC_NAME_MAX + 64];
    char isr_doc[1024], leader_doc[256];
    coord_path_partition_leaf(isr_path, sizeof(isr_path), p->topic->name, p->id, "ISR");
    coord_path_partition_leaf(leader_path, sizeof(leader_path), p->topic->name, p->id, "leader");
    int isr_len = coord_isr_write(isr_doc, sizeof(isr_doc), isr, nisr, epoch);
    int leader_len = coord_leader_write(leader_doc, sizeof(leader_doc), b->cfg.broker_id, epoch);
    if (isr_len < 0 || leader_len < 0)
        return;
    election_t *e = xmalloc(sizeof(*e));
    *e = (election_t){.b = b, .partition = p->id, .epoch = epoch};
    snprintf(e->topic, sizeof(e->topic), "%s", p->topic->name);
    int create_isr = p->isr_state == 1;
    coord_op_t ops[2] = {
        {.type = create_isr ? COORD_OP_CREATE : COORD_OP_SET, .path = isr_path, .data = isr_doc, .len = isr_len,
         .version = p->isr_version},
        {.type = COORD_OP_CREATE, .path = leader_path, .data = leader_doc, .len = leader_len,
         .flags = ZOO_EPHEMERAL},
    };
    if (coord_multi(b->coord, ops, 2, election_done, e) < 0) {
        free(e);
        return;
    }
    p->electing = 1;
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
        elect(b, p, r);
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
    if (b->repl->lease_timer)
        loop_timer_cancel(b->loop, b->repl->lease_timer);
    fetcher_destroy(b->repl->fetcher);
    free(b->repl);
    b->repl = NULL;
}
