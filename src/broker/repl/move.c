/* move.c -- the leader's part of a partition move (seed 000's reassignment,
 * docs/replication.md "Reassignment"). While /brokers/partitions_reassigned
 * names a target replica set for a partition we lead, the replicas of the
 * target not yet assigned (RAR) bootstrap as followers and fetch from us
 * like any other; we track their progress beside the ISR's. When every
 * replica of the target is in sync, one fenced multi makes the move:
 *   - the ISR becomes the target (at the ISR node's version: only the leader
 *     the coordinator knows can do this),
 *   - the replicas node becomes the target,
 *   - the move's node is deleted,
 *   - and, when we are not in the target, our leader node goes too, so the
 *     new replicas elect one of themselves at once.
 * The replica-change events that follow stop the old replicas and delete
 * their logs. A move cancelled (its node deleted) before that changes
 * nothing: the replicas added for it are no longer assigned and go. */
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

typedef struct {
    broker_t *b;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t epoch;
    int32_t isr_version;      /* the ISR node's version the write was fenced on */
    int leaving;              /* we are not in the target: our leadership ends */
} move_write_t;

static int is_live(void *arg, int32_t id)
{
    return cluster_broker_live(arg, id);
}

/* The move's added replicas: the target minus the assigned ones. */
void repl_move_rar(const partition_t *p, int32_t *rar, int *nrar)
{
    *nrar = 0;
    if (!p->reassigning)
        return;
    for (int i = 0; i < p->ntarget; i++)
        if (!isr_contains(p->replicas, p->nreplicas, p->target[i]))
            rar[(*nrar)++] = p->target[i];
}

static void move_written(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    move_write_t *m = arg;
    broker_t *b = m->b;
    partition_t *p = cluster_partition(b, m->topic, m->partition);
    replica_t *r = p ? p->replica : NULL;
    if (!r || !r->isr || r->leader_epoch != m->epoch) {
        free(m);
        return;
    }
    if (res->rc == ZOK) {
        log_info("%s-%d moved to its new replicas%s", m->topic, (int)m->partition,
                 m->leaving ? "; leadership goes to them" : "");
        /* Our view takes what we wrote now, before the watches bring it back,
         * so nothing in between acts on the old sets (leading on, or standing
         * for election, with replicas that are no longer ours). */
        memcpy(p->replicas, p->target, sizeof(*p->target) * (size_t)p->ntarget);
        p->nreplicas = p->ntarget;
        memcpy(p->isr, p->target, sizeof(*p->target) * (size_t)p->ntarget);
        p->nisr = p->ntarget;
        p->isr_version = m->isr_version + 1;   /* a setData adds exactly one */
        p->reassigning = 0;
        if (m->leaving) {
            isr_write_done(r->isr, 0);
            repl_replica_stopping(b, r);
            p->leader = -1;
            p->isr_state = 0;   /* unknown until read again: no election meanwhile */
        } else {
            isr_write_done(r->isr, 1);
            /* The ISR check works from its own copy of the replica lists:
             * left at the old ones, it would take the removed replica (still
             * fetching until it hears) back and drop the added one. */
            int32_t no_rar[1];
            isr_set_replicas(r->isr, p->replicas, p->nreplicas, no_rar, 0, loop_now_ms(b->loop));
        }
        cluster_reread_partition(b, p);
    } else if (res->rc == ZBADVERSION) {
        isr_write_done(r->isr, 0);
        repl_fenced(b, r, "its move was fenced: another leader wrote the ISR");
    } else {
        /* ZNONODE: the move was cancelled meanwhile; otherwise connection
         * trouble: either way the next check looks again. */
        isr_write_done(r->isr, 0);
        if (res->rc != ZNONODE && res->rc != ZCLOSING)
            log_warn("cannot complete the move of %s-%d: %s", m->topic, (int)m->partition, zerror(res->rc));
    }
    free(m);
}

static void complete_move(broker_t *b, replica_t *r)
{
    partition_t *p = r->part;
    char isr_path[COORD_TOPIC_NAME_MAX + 64], replicas_path[COORD_TOPIC_NAME_MAX + 64];
    char leader_path[COORD_TOPIC_NAME_MAX + 64], move_path[COORD_TOPIC_NAME_MAX + 64];
    char isr_doc[1024], replicas_doc[1024];
    int leaving = !isr_contains(p->target, p->ntarget, b->cfg.broker_id);
    int isr_len = coord_isr_write(isr_doc, sizeof(isr_doc), p->target, p->ntarget, r->leader_epoch);
    int replicas_len = coord_replicas_write(replicas_doc, sizeof(replicas_doc), p->target, p->ntarget);
    if (isr_len < 0 || replicas_len < 0)
        return;
    coord_path_partition_leaf(isr_path, sizeof(isr_path), p->topic->name, p->id, "ISR");
    coord_path_partition_leaf(replicas_path, sizeof(replicas_path), p->topic->name, p->id, "replicas");
    coord_path_partition_leaf(leader_path, sizeof(leader_path), p->topic->name, p->id, "leader");
    coord_path_reassignment(move_path, sizeof(move_path), p->topic->name, p->id);
    coord_op_t ops[4] = {
        {.type = COORD_OP_SET, .path = isr_path, .data = isr_doc, .len = isr_len, .version = p->isr_version},
        {.type = COORD_OP_SET, .path = replicas_path, .data = replicas_doc, .len = replicas_len, .version = -1},
        {.type = COORD_OP_DELETE, .path = move_path, .version = -1},
        {.type = COORD_OP_DELETE, .path = leader_path, .version = -1},
    };
    move_write_t *m = xmalloc(sizeof(*m));
    *m = (move_write_t){.b = b, .partition = p->id, .epoch = r->leader_epoch, .isr_version = p->isr_version,
                        .leaving = leaving};
    snprintf(m->topic, sizeof(m->topic), "%s", p->topic->name);
    if (coord_multi(b->coord, ops, leaving ? 4 : 3, move_written, m) < 0) {
        free(m);
        return;
    }
    isr_write_started(r->isr, p->target, p->ntarget);
}

void repl_move_check(broker_t *b, replica_t *r)
{
    const partition_t *p = r->part;
    if (!p->reassigning || !r->isr || r->isr->changing || !b->registered)
        return;
    uint64_t now = loop_now_ms(b->loop), lag = (uint64_t)b->cfg.replica_lag_time_max_ms;
    for (int i = 0; i < p->ntarget; i++)
        if (!isr_in_sync(r->isr, p->target[i], now, lag, is_live, b))
            return;   /* someone is still catching up (or down: the move waits for it) */
    complete_move(b, r);
}
