/* preferred.c -- leadership back to the preferred replica (the first of
 * the replica list), as seed 000's checkLoadBalancing and Kafka's
 * preferred-replica election do. It is asked for through the coordinator
 * (kipper elect --preferred, ElectLeaders: /admin/preferred_replica_election)
 * or found by the periodic balance check (auto.leader.rebalance.enable).
 *
 * The leader steps down: one multi checks the ISR node's version (only the
 * leader the coordinator knows can step down, and nothing changed under
 * it) and deletes its leader node; the ISR stays as it is, so the old
 * leader remains in sync as a follower. The preferred replica, live and in
 * the ISR, stands first (candidates stand in replica-list order), so it
 * wins; nothing acknowledged is lost, since every ISR member has it. */
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
} step_down_t;

int repl_preferred_possible(const broker_t *b, const partition_t *p)
{
    if (!p->have_replicas || p->nreplicas == 0 || p->leader < 0)
        return 0;
    int32_t preferred = p->replicas[0];
    return preferred != p->leader && isr_contains(p->isr, p->nisr, preferred) &&
           (preferred == b->cfg.broker_id || cluster_broker_live(b, preferred));
}

static void stepped_down(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    step_down_t *s = arg;
    if (res->rc == ZOK)
        log_info("%s-%d: stepped down for its preferred replica", s->topic, (int)s->partition);
    else if (res->rc != ZCLOSING)
        log_info("%s-%d: did not step down (%s)", s->topic, (int)s->partition, zerror(res->rc));
    partition_t *p = cluster_partition(s->b, s->topic, s->partition);
    if (p)
        cluster_reread_partition(s->b, p);
    free(s);
}

static void step_down(broker_t *b, replica_t *r)
{
    partition_t *p = r->part;
    char isr_path[COORD_TOPIC_NAME_MAX + 64], leader_path[COORD_TOPIC_NAME_MAX + 64];
    coord_path_partition_leaf(isr_path, sizeof(isr_path), p->topic->name, p->id, "ISR");
    coord_path_partition_leaf(leader_path, sizeof(leader_path), p->topic->name, p->id, "leader");
    coord_op_t ops[2] = {
        {.type = COORD_OP_CHECK, .path = isr_path, .version = p->isr_version},
        {.type = COORD_OP_DELETE, .path = leader_path, .version = -1},
    };
    step_down_t *s = xmalloc(sizeof(*s));
    *s = (step_down_t){.b = b, .partition = p->id};
    snprintf(s->topic, sizeof(s->topic), "%s", p->topic->name);
    if (coord_multi(b->coord, ops, 2, stepped_down, s) < 0) {
        free(s);
        return;
    }
    /* No longer leading from here: waiting requests go to the new leader. */
    repl_replica_stopping(b, r);
}

void repl_preferred_asked(broker_t *b, partition_t *p)
{
    replica_t *r = p->replica;
    if (r && r->role == REPLICA_LEADER && r->isr && !r->isr->changing && p->leader == b->cfg.broker_id &&
        repl_preferred_possible(b, p))
        step_down(b, r);
}

/* Kafka's rule: a broker is imbalanced when more than
 * leader.imbalance.per.broker.percentage of the partitions it is preferred
 * for are led by others; then those of them whose preferred replica can
 * lead are handed back. Each leader does its own share. */
static int imbalanced(const broker_t *b, int32_t preferred)
{
    int mine = 0, elsewhere = 0;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            const partition_t *p = b->topics[i]->parts[k];
            if (!p || !p->have_replicas || p->nreplicas == 0 || p->replicas[0] != preferred)
                continue;
            mine++;
            elsewhere += p->leader != preferred;
        }
    return mine > 0 && elsewhere * 100 > mine * b->cfg.leader_imbalance_per_broker_percentage;
}

void repl_balance_check(broker_t *b)
{
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->replica->role == REPLICA_LEADER && repl_preferred_possible(b, p) &&
                imbalanced(b, p->replicas[0]))
                repl_preferred_asked(b, p);
        }
}
