/* shutdown.c -- controlled shutdown (Kafka's controlled.shutdown.enable):
 * before a broker stopped with SIGTERM closes its coordinator session, it
 *  1. hands over every partition it leads that has another live ISR member:
 *     for each, the ISR is rewritten without this broker (at the node's
 *     version, so only the leader the coordinator knows can do it) and our
 *     leader node deleted, a hundred partitions to a multi; the remaining
 *     members elect one of themselves at once;
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
/* Partitions handed over in one multi at a controlled shutdown: a thousand
 * partitions cost the coordinator ten transactions instead of a thousand.
 * One fenced ISR write that fails fails its multi; its partitions are then
 * handed over one by one. */
#define HANDOVER_BATCH 100

typedef struct {
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
} part_name_t;

/* One multi in flight: the partitions it hands over. */
typedef struct {
    broker_t *b;
    int n;
    part_name_t parts[HANDOVER_BATCH];
} handover_t;

/* The text of one partition's two operations, alive until coord_multi has
 * copied it. */
typedef struct {
    char isr_path[COORD_TOPIC_NAME_MAX + 64], leader_path[COORD_TOPIC_NAME_MAX + 64], doc[1024];
} handover_text_t;

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

static int queue_handover(broker_t *b, partition_t *const *ps, int n);

static void handed_over(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    handover_t *h = arg;
    broker_t *b = h->b;
    /* A batch that failed may hold a single partition at fault: the others
     * go one by one. Alone, ZNONODE means the topic is being deleted:
     * nothing to hand over. */
    int failed = res->rc != ZOK && res->rc != ZCLOSING;
    int retry_alone = failed && h->n > 1;
    if (retry_alone)
        log_info("handing over %d partitions from %s-%d on in one multi failed (%s): one by one now", h->n,
                 h->parts[0].topic, (int)h->parts[0].partition, zerror(res->rc));
    if (failed && h->n == 1 && res->rc != ZNONODE)
        log_warn("cannot hand over %s-%d: %s", h->parts[0].topic, (int)h->parts[0].partition, zerror(res->rc));
    for (int i = 0; i < h->n; i++) {
        partition_t *p = cluster_partition(b, h->parts[i].topic, h->parts[i].partition);
        if (p && retry_alone)
            queue_handover(b, &p, 1);
        else if (p)
            cluster_reread_partition(b, p);
        if (b->repl && b->repl->handovers > 0)
            b->repl->handovers--;
    }
    free(h);
}

/* The ISR without us (fenced by its version) and our leader node gone:
 * two operations into ops, their text into t. -1 when it cannot be said. */
static int handover_ops(const broker_t *b, const partition_t *p, handover_text_t *t, coord_op_t *ops)
{
    int32_t isr[COORD_MAX_REPLICAS];
    int n = 0;
    for (int i = 0; i < p->nisr; i++)
        if (p->isr[i] != b->cfg.broker_id)
            isr[n++] = p->isr[i];
    int len = coord_isr_write(t->doc, sizeof(t->doc), isr, n, p->isr_epoch);
    if (len < 0 ||
        coord_path_partition_leaf(t->isr_path, sizeof(t->isr_path), p->topic->name, p->id, "ISR") < 0 ||
        coord_path_partition_leaf(t->leader_path, sizeof(t->leader_path), p->topic->name, p->id, "leader") < 0)
        return -1;
    ops[0] = (coord_op_t){.type = COORD_OP_SET, .path = t->isr_path, .data = t->doc, .len = len,
                          .version = p->isr_version};
    ops[1] = (coord_op_t){.type = COORD_OP_DELETE, .path = t->leader_path, .version = -1};
    return 0;
}

/* One multi handing over ps[0..n) (n <= HANDOVER_BATCH); the replicas
 * stop leading at once. The number of partitions queued. */
static int queue_handover(broker_t *b, partition_t *const *ps, int n)
{
    handover_t *h = xcalloc(1, sizeof(*h));
    handover_text_t *text = xmalloc(sizeof(*text) * (size_t)n);
    coord_op_t ops[2 * HANDOVER_BATCH];
    partition_t *taken[HANDOVER_BATCH];
    h->b = b;
    for (int i = 0; i < n; i++) {
        if (handover_ops(b, ps[i], &text[h->n], &ops[2 * h->n]) < 0)
            continue;
        snprintf(h->parts[h->n].topic, sizeof(h->parts[h->n].topic), "%s", ps[i]->topic->name);
        h->parts[h->n].partition = ps[i]->id;
        taken[h->n++] = ps[i];
    }
    int queued = h->n > 0 && coord_multi(b->coord, ops, 2 * h->n, handed_over, h) == 0 ? h->n : 0;
    free(text);
    if (!queued) {
        free(h);
        return 0;
    }
    for (int i = 0; i < queued; i++) {
        if (b->repl->shutdown_done)
            b->repl->handovers++;
        if (taken[i]->replica)
            repl_replica_stopping(b, taken[i]->replica);   /* neither leading nor following from here on */
    }
    return queued;
}

void repl_hand_over(broker_t *b, replica_t *r)
{
    queue_handover(b, &r->part, 1);
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
    int led = 0, n = 0;
    partition_t *batch[HANDOVER_BATCH];
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (!p || !p->replica || p->replica->role != REPLICA_LEADER || !has_other_live_member(b, p))
                continue;
            batch[n++] = p;
            if (n == HANDOVER_BATCH) {
                led += queue_handover(b, batch, n);
                n = 0;
            }
        }
    if (n > 0)
        led += queue_handover(b, batch, n);
    log_info("controlled shutdown: handing over %d partition(s), leaving the ISRs of the others", led);
    cluster_deregister(b);
    on_poll(b->loop, b);
}
