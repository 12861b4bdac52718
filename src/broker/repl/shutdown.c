/* shutdown.c -- controlled shutdown (Kafka's controlled.shutdown.enable):
 * before a broker stopped with SIGTERM closes its coordinator session, it
 *  1. hands over every partition it leads that has another live ISR member:
 *     one multi rewrites the ISR without this broker (at the node's version,
 *     so only the leader the coordinator knows can do it) and deletes our
 *     leader node; the remaining members elect one of themselves at once;
 *  2. deletes its registration, so the leaders of the partitions it follows
 *     drop it from their ISRs now instead of after replica.lag.time.max.ms;
 *  3. waits until no ISR it knows of still names it, or until
 *     controlled.shutdown.timeout.ms (a partition it alone holds stays
 *     offline until it returns; nothing else can be done for it).
 * Producers see NOT_LEADER_OR_FOLLOWER for what was waiting, refresh their
 * metadata and retry at the new leader: a rolling restart loses nothing and
 * costs a short pause. */
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

#define POLL_MS 20

typedef struct {
    broker_t *b;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
} handover_t;

static void finish(broker_t *b, const char *how)
{
    struct repl *rp = b->repl;
    void (*done)(broker_t *) = rp->shutdown_done;
    if (!done)
        return;
    rp->shutdown_done = NULL;
    if (rp->shutdown_timer)
        loop_timer_cancel(b->loop, rp->shutdown_timer);
    rp->shutdown_timer = NULL;
    log_info("controlled shutdown: %s", how);
    done(b);
}

/* Partitions we follow whose leader, as far as we know, has not dropped us
 * from the ISR yet. (Those we lead were handed over, or have nobody to hand
 * over to; those whose leader is gone have nobody to drop us.) */
static int still_in_isrs(const broker_t *b)
{
    int32_t me = b->cfg.broker_id;
    int n = 0;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            const partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && isr_contains(p->isr, p->nisr, me) && p->leader >= 0 && p->leader != me &&
                cluster_broker_live(b, p->leader))
                n++;
        }
    return n;
}

static void on_poll(loop_t *loop, void *arg)
{
    broker_t *b = arg;
    struct repl *rp = b->repl;
    rp->shutdown_timer = NULL;
    if (loop_now_ms(loop) >= rp->shutdown_deadline) {
        finish(b, "timed out; stopping anyway");
        return;
    }
    if (rp->handovers == 0 && still_in_isrs(b) == 0) {
        finish(b, "every partition handed over");
        return;
    }
    rp->shutdown_timer = loop_timer_add(loop, POLL_MS, on_poll, b);
}

static void handed_over(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    handover_t *h = arg;
    broker_t *b = h->b;
    /* ZNONODE: the topic is being deleted, nothing to hand over. */
    if (res->rc != ZOK && res->rc != ZCLOSING && res->rc != ZNONODE)
        log_warn("cannot hand over %s-%d: %s", h->topic, (int)h->partition, zerror(res->rc));
    partition_t *p = cluster_partition(b, h->topic, h->partition);
    if (p)
        cluster_reread_partition(b, p);
    if (b->repl && b->repl->handovers > 0)
        b->repl->handovers--;
    free(h);
}

/* One multi: the ISR without us (fenced by its version), our leader node
 * gone. Our role ends at once; waiting requests are told to go elsewhere. */
void repl_hand_over(broker_t *b, replica_t *r)
{
    partition_t *p = r->part;
    int32_t isr[COORD_MAX_REPLICAS];
    int n = 0;
    for (int i = 0; i < p->nisr; i++)
        if (p->isr[i] != b->cfg.broker_id)
            isr[n++] = p->isr[i];
    char isr_path[COORD_TOPIC_NAME_MAX + 64], leader_path[COORD_TOPIC_NAME_MAX + 64], doc[1024];
    int len = coord_isr_write(doc, sizeof(doc), isr, n, p->isr_epoch);
    coord_path_partition_leaf(isr_path, sizeof(isr_path), p->topic->name, p->id, "ISR");
    coord_path_partition_leaf(leader_path, sizeof(leader_path), p->topic->name, p->id, "leader");
    if (len < 0)
        return;
    handover_t *h = xmalloc(sizeof(*h));
    *h = (handover_t){.b = b, .partition = p->id};
    snprintf(h->topic, sizeof(h->topic), "%s", p->topic->name);
    coord_op_t ops[2] = {
        {.type = COORD_OP_SET, .path = isr_path, .data = doc, .len = len, .version = p->isr_version},
        {.type = COORD_OP_DELETE, .path = leader_path, .version = -1},
    };
    if (coord_multi(b->coord, ops, 2, handed_over, h) < 0) {
        free(h);
        return;
    }
    if (b->repl->shutdown_done)
        b->repl->handovers++;
    repl_replica_stopping(b, r);   /* neither leading nor following from here on */
}

static int has_other_live_member(const broker_t *b, const partition_t *p)
{
    for (int i = 0; i < p->nisr; i++)
        if (p->isr[i] != b->cfg.broker_id && cluster_broker_live(b, p->isr[i]))
            return 1;
    return 0;
}

void repl_controlled_shutdown(broker_t *b, void (*done)(broker_t *b))
{
    struct repl *rp = b->repl;
    b->shutting_down = 1;   /* no more elections of our own */
    if (!b->cfg.controlled_shutdown || !b->registered || !rp) {
        done(b);
        return;
    }
    rp->shutdown_done = done;
    rp->shutdown_deadline = loop_now_ms(b->loop) + (uint64_t)b->cfg.controlled_shutdown_timeout_ms;
    int led = 0;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->replica->role == REPLICA_LEADER && has_other_live_member(b, p)) {
                repl_hand_over(b, p->replica);
                led++;
            }
        }
    log_info("controlled shutdown: handing over %d partition(s), leaving the ISRs of the others", led);
    cluster_deregister(b);
    on_poll(b->loop, b);
}
