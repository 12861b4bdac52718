/* election.c -- leaderElection: a live ISR member creates the ephemeral
 * leader node and, in the same multi, rewrites the ISR node at its znode
 * version with the leader epoch bumped and the dead members left out. Only
 * one candidate can win; a deposed leader can never overwrite newer state.
 * A brand-new partition (no ISR node) is started by its first live assigned
 * replica with ISR = the live assigned replicas at epoch 0 -- but only while
 * its log is empty: a replica holding data stands alone, at an epoch past
 * its own. An ISR whose members are all gone waits, unless
 * unclean.leader.election.enable (the topic's own setting first) lets an
 * out-of-sync replica lead. docs/replication.md gives the reasons.
 *
 * The elections planned in one pass of the loop go to the coordinator
 * together, ELECTION_BATCH partitions to a multi: when a broker goes, its
 * partitions become leaderless at once, and a thousand of them then cost
 * ten transactions instead of a thousand. A batch fails whole when one of
 * its elections fails (another candidate won it, or our view of its ISR was
 * old); its elections are then sent again one by one. A won election is
 * taken into our view at once (take_won); a lost one reads the partition
 * again; one refused otherwise (an ACL) is stood for again by the ISR
 * timer. Loop thread only. */
#define _GNU_SOURCE
#include "repl.h"
#include "repl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/logging.h"
#include "broker/core/cluster.h"
#include "broker/core/cluster_sync.h"

/* How long a candidate waits for one ahead of it in the replica list to
 * win an election before it stands itself. */
#define ELECTION_TURN_MS 500
/* Partitions elected in one multi (two operations each). */
#define ELECTION_BATCH 100

struct election {
    struct election *next;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t epoch;
    int32_t isr[COORD_MAX_REPLICAS];
    int nisr;
    int create_isr;        /* no ISR node yet: the multi creates it */
    int32_t isr_version;   /* the ISR node's version the write is fenced on */
};

/* One multi in flight. */
typedef struct {
    broker_t *b;
    int n;
    election_t *e[ELECTION_BATCH];
} election_batch_t;

/* The text of one election's operations, alive until coord_multi copied it. */
typedef struct {
    char isr_path[COORD_TOPIC_NAME_MAX + 64], leader_path[COORD_TOPIC_NAME_MAX + 64];
    char isr_doc[1024], leader_doc[256];
} election_text_t;

/* ---- who stands, with which ISR ---- */

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
    if (first_live_replica(b, p) != b->cfg.broker_id)
        return 0;
    if (partition_log_end_offset(r->log) > partition_log_start_offset(r->log)) {
        /* Our log has data: the others' logs may not be empty either, so
         * nobody else can be assumed in sync. */
        log_warn("%s-%d has no ISR node but this replica holds data: it leads alone", p->topic->name, (int)p->id);
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
    log_warn("%s-%d: no replica of the ISR is alive; %s lets this out-of-sync replica lead, and messages only "
             "the lost replicas had may be lost",
             p->topic->name, (int)p->id,
             p->unclean_asked ? "kipper elect --unclean" : "unclean.leader.election.enable");
    isr[0] = me;
    *nisr = 1;
    return 1;
}

/* ---- sending ---- */

static void send_elections(broker_t *b, election_t **es, int n);

/* Our view takes what the winning multi wrote at once, as a watch would
 * bring it: the replica leads now instead of after a read of both nodes,
 * and nothing in between sees the partition leaderless and stands again.
 * Replies on one coordinator session come in order, so every read answered
 * after this one sees these nodes or newer (and applies what it sees). */
static void take_won(broker_t *b, partition_t *p, const election_t *e)
{
    memcpy(p->isr, e->isr, sizeof(*e->isr) * (size_t)e->nisr);
    p->nisr = e->nisr;
    p->isr_epoch = e->epoch;
    p->isr_version = e->create_isr ? 0 : e->isr_version + 1;
    p->isr_state = 2;
    p->have_leader = 1;
    p->leader = b->cfg.broker_id;
    p->leader_epoch = e->epoch;
    p->leader_owner = b->session_id;
}

/* One election's outcome; e is freed, or sent again alone. */
static void election_result(broker_t *b, election_t *e, int rc, int in_batch)
{
    partition_t *p = cluster_partition(b, e->topic, e->partition);
    if (p && rc != ZOK && rc != ZCLOSING && in_batch) {
        send_elections(b, &e, 1);   /* maybe another's failure: alone now */
        return;
    }
    if (p) {
        p->electing = 0;
        if (rc == ZOK) {
            log_info("elected leader of %s-%d at epoch %d", e->topic, (int)e->partition, (int)e->epoch);
            take_won(b, p, e);
            repl_reconcile(b, p);
        } else if (rc == ZNODEEXISTS || rc == ZBADVERSION) {
            /* Lost (another won, or our view of the ISR was old): read both
             * nodes again. The watches may have brought the news while this
             * election was in flight, when nothing could act on it. */
            cluster_reread_partition(b, p);
        } else if (rc != ZCLOSING) {
            /* Refused for a reason a read would not change (an ACL, say):
             * stood for again by the ISR timer (deferred_elections), at
             * most once per ELECTION_TURN_MS, not at once and forever. */
            log_warn("leader election for %s-%d failed: %s", e->topic, (int)e->partition, zerror(rc));
            p->stand_after_ms = loop_now_ms(b->loop) + ELECTION_TURN_MS;
        }
    }
    free(e);
}

static void elections_done(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    election_batch_t *batch = arg;
    if (batch->n > 1 && res->rc != ZOK && res->rc != ZCLOSING)
        log_info("electing %d partitions from %s-%d on in one multi failed (%s): one by one now", batch->n,
                 batch->e[0]->topic, (int)batch->e[0]->partition, zerror(res->rc));
    for (int i = 0; i < batch->n; i++)
        election_result(batch->b, batch->e[i], res->rc, batch->n > 1);
    free(batch);
}

static int election_ops(const broker_t *b, const election_t *e, election_text_t *t, coord_op_t *ops)
{
    int isr_len = coord_isr_write(t->isr_doc, sizeof(t->isr_doc), e->isr, e->nisr, e->epoch);
    int leader_len = coord_leader_write(t->leader_doc, sizeof(t->leader_doc), b->cfg.broker_id, e->epoch);
    if (isr_len < 0 || leader_len < 0 ||
        coord_path_partition_leaf(t->isr_path, sizeof(t->isr_path), e->topic, e->partition, "ISR") < 0 ||
        coord_path_partition_leaf(t->leader_path, sizeof(t->leader_path), e->topic, e->partition, "leader") < 0)
        return -1;
    ops[0] = (coord_op_t){.type = e->create_isr ? COORD_OP_CREATE : COORD_OP_SET, .path = t->isr_path,
                          .data = t->isr_doc, .len = isr_len, .version = e->isr_version};
    ops[1] = (coord_op_t){.type = COORD_OP_CREATE, .path = t->leader_path, .data = t->leader_doc,
                          .len = leader_len, .flags = ZOO_EPHEMERAL};
    return 0;
}

/* es[0..n) in one multi (n <= ELECTION_BATCH). What cannot be sent is
 * dropped: the partition stands again at its next reconcile. */
static void send_elections(broker_t *b, election_t **es, int n)
{
    election_batch_t *batch = xcalloc(1, sizeof(*batch));
    election_text_t *text = xmalloc(sizeof(*text) * (size_t)n);
    coord_op_t ops[2 * ELECTION_BATCH];
    batch->b = b;
    for (int i = 0; i < n; i++)
        if (election_ops(b, es[i], &text[batch->n], &ops[2 * batch->n]) == 0)
            batch->e[batch->n++] = es[i];
        else
            election_result(b, es[i], ZCLOSING, 0);
    int queued = batch->n > 0 && coord_multi(b->coord, ops, 2 * batch->n, elections_done, batch) == 0;
    free(text);
    if (queued)
        return;
    for (int i = 0; i < batch->n; i++)
        election_result(b, batch->e[i], ZCLOSING, 0);
    free(batch);
}

static void on_election_timer(loop_t *loop, void *arg)
{
    (void)loop;
    broker_t *b = arg;
    struct repl *rp = b->repl;
    rp->election_timer = NULL;
    while (rp->elections) {
        election_t *batch[ELECTION_BATCH];
        int n = 0;
        for (; rp->elections && n < ELECTION_BATCH; n++) {
            batch[n] = rp->elections;
            rp->elections = batch[n]->next;
        }
        send_elections(b, batch, n);
    }
    rp->elections_tail = &rp->elections;
}

void repl_elect(broker_t *b, partition_t *p, replica_t *r)
{
    struct repl *rp = b->repl;
    int32_t isr[COORD_MAX_REPLICAS], epoch;
    int nisr;
    if (!rp || p->electing || b->shutting_down || !election_plan(b, p, r, isr, &nisr, &epoch))
        return;
    election_t *e = xcalloc(1, sizeof(*e));
    *e = (election_t){.partition = p->id, .epoch = epoch, .nisr = nisr, .create_isr = p->isr_state == 1,
                      .isr_version = p->isr_version};
    memcpy(e->isr, isr, sizeof(*isr) * (size_t)nisr);
    snprintf(e->topic, sizeof(e->topic), "%s", p->topic->name);
    *rp->elections_tail = e;
    rp->elections_tail = &e->next;
    p->electing = 1;
    /* Sent once this pass of the loop is over, with the others it plans. */
    if (!rp->election_timer)
        rp->election_timer = loop_timer_add(b->loop, 0, on_election_timer, b);
}

void repl_elections_stop(broker_t *b)
{
    struct repl *rp = b->repl;
    if (rp->election_timer)
        loop_timer_cancel(b->loop, rp->election_timer);
    rp->election_timer = NULL;
    while (rp->elections) {
        election_t *e = rp->elections;
        rp->elections = e->next;
        free(e);
    }
    rp->elections_tail = &rp->elections;
}
