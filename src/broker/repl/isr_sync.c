/* isr_sync.c -- the leader's side of a partition while it leads (see
 * repl.h): followers' fetch positions into the ISR state machine (isr.h),
 * the HW into the log and through the commitQ, and ISR changes written to
 * the coordinator.
 *
 * Every ISR change is one conditional setData at the ISR node's version
 * (docs/replication.md, "Every ISR change is fenced"): if anyone else wrote
 * it since we read it, we are no longer the leader the coordinator knows, so
 * we stop leading at once. A shrink takes effect only when that write
 * succeeded (isr.h says why). At most one write per partition is in flight. */
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
#include "broker/core/conn.h"

static int min_insync(const broker_t *b, const replica_t *r)
{
    const char *v = topic_config(r->part->topic, "min.insync.replicas");
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : b->cfg.min_insync_replicas;
}

/* The outcome of an acks=all request whose offsets the HW has passed:
 * Kafka checks the ISR again then, as it may have shrunk meanwhile. */
static int16_t commit_outcome(const broker_t *b, const replica_t *r)
{
    return isr_size_for_acks(r->isr) < min_insync(b, r) ? KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND : KERR_NONE;
}

/* The HW moved: into the log (consumers read up to it), through the
 * commitQ, and to consumers waiting for data. */
static void hw_advanced(broker_t *b, replica_t *r)
{
    partition_log_set_high_watermark(r->log, r->isr->hw);
    commitq_advance(&r->commitq, r->isr->hw, commit_outcome(b, r));
    broker_wake_data_waiters(b);
}

static int is_live(void *arg, int32_t id)
{
    return cluster_broker_live(arg, id);
}

/* ---- ISR writes ---- */

typedef struct {
    broker_t *b;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t epoch;
    int32_t isr[ISR_MAX];
    int nisr;
} isr_write_t;

static void format_ids(const int32_t *ids, int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "," : "", (int)ids[i]);
}

static void isr_written(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    isr_write_t *w = arg;
    broker_t *b = w->b;
    partition_t *p = cluster_partition(b, w->topic, w->partition);
    replica_t *r = p ? p->replica : NULL;
    if (!r || !r->isr || r->leader_epoch != w->epoch) {
        free(w);
        return;   /* no longer leading at that epoch: nothing to apply */
    }
    char ids[512];
    format_ids(w->isr, w->nisr, ids, sizeof(ids));
    if (res->rc == ZOK) {
        memcpy(p->isr, w->isr, sizeof(*w->isr) * (size_t)w->nisr);
        p->nisr = w->nisr;
        p->isr_version = res->version;
        log_info("ISR of %s-%d is now [%s]", w->topic, (int)w->partition, ids);
        if (isr_write_done(r->isr, 1))
            hw_advanced(b, r);
    } else if (res->rc == ZBADVERSION || res->rc == ZNONODE) {
        isr_write_done(r->isr, 0);
        repl_fenced(b, r, "its ISR write was fenced: another leader wrote the ISR");
    } else {
        /* Connection trouble: the next check writes again. */
        isr_write_done(r->isr, 0);
        if (res->rc != ZCLOSING)
            log_warn("cannot write the ISR of %s-%d: %s", w->topic, (int)w->partition, zerror(res->rc));
    }
    free(w);
}

static void write_isr(broker_t *b, replica_t *r, const int32_t *isr, int n)
{
    partition_t *p = r->part;
    char path[COORD_TOPIC_NAME_MAX + 64], doc[1024];
    int len = coord_isr_write(doc, sizeof(doc), isr, n, r->leader_epoch);
    if (len < 0 || coord_path_partition_leaf(path, sizeof(path), p->topic->name, p->id, "ISR") < 0) {
        return;
    }
    isr_write_t *w = xmalloc(sizeof(*w));
    *w = (isr_write_t){.b = b, .partition = p->id, .epoch = r->leader_epoch, .nisr = n};
    snprintf(w->topic, sizeof(w->topic), "%s", p->topic->name);
    memcpy(w->isr, isr, sizeof(*isr) * (size_t)n);
    if (coord_set(b->coord, path, doc, len, p->isr_version, isr_written, w) < 0) {
        free(w);
        return;
    }
    isr_write_started(r->isr, isr, n);
}

void repl_check_isr(broker_t *b, replica_t *r)
{
    int32_t next[ISR_MAX];
    int n;
    if (!r->isr || !b->registered)
        return;
    uint64_t now = loop_now_ms(b->loop);
    if (isr_plan(r->isr, now, (uint64_t)b->cfg.replica_lag_time_max_ms, is_live, b, next, &n))
        write_isr(b, r, next, n);
    else
        repl_move_check(b, r);
}

/* ---- the leader's hooks ---- */

int16_t repl_follower_fetched(broker_t *b, replica_t *r, int32_t id, int64_t offset)
{
    if (!r->isr)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    int rc = isr_fetched(r->isr, id, offset, loop_now_ms(b->loop));
    if (rc < 0)
        return KERR_NOT_LEADER_OR_FOLLOWER;   /* not one of its replicas (Kafka says the same) */
    if (rc > 0)
        hw_advanced(b, r);
    /* A fetch can change the plan only by letting its follower join the
     * ISR, ending becomeLeader's wait, or completing a move; members that
     * fall behind leave by the timer (Kafka checks expansion on fetch and
     * shrinking on a schedule too). A member's fetch on a settled
     * partition, the common case, is passed: at 1000 partitions the check
     * for every partition of every follower fetch was 4 % of the loop. */
    if (!r->isr->settled || r->part->reassigning || !isr_contains(r->isr->isr, r->isr->nisr, id))
        repl_check_isr(b, r);
    return KERR_NONE;
}

void repl_leader_appended(broker_t *b, replica_t *r)
{
    if (r->isr && isr_appended(r->isr, partition_log_end_offset(r->log)))
        hw_advanced(b, r);
}

int16_t repl_acks_all_check(broker_t *b, replica_t *r)
{
    if (!r->isr)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    return r->isr->nisr < min_insync(b, r) ? KERR_NOT_ENOUGH_REPLICAS : KERR_NONE;
}

int repl_await_commit(broker_t *b, replica_t *r, commit_waiter_t *w, int64_t offset, commit_done_fn done,
                      void *arg, int16_t *error)
{
    if (!r->isr) {
        *error = KERR_NOT_LEADER_OR_FOLLOWER;
        return 1;
    }
    if (r->isr->hw >= offset) {
        *error = commit_outcome(b, r);
        return 1;
    }
    return commitq_push(&r->commitq, w, offset, done, arg) < 0 ? -1 : 0;
}

/* ---- the periodic check: lagging followers, the becomeLeader wait ---- */

static void on_isr_timer(loop_t *loop, void *arg);

static void each_led(broker_t *b, void (*fn)(broker_t *b, replica_t *r))
{
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->replica->isr)
                fn(b, p->replica);
        }
}

/* Leaderless partitions where we wait for a replica ahead of us in the
 * list to stand (leadership.c): our turn may have come. */
static void deferred_elections(broker_t *b)
{
    uint64_t now = loop_now_ms(b->loop);
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->leader < 0 && p->stand_after_ms && now >= p->stand_after_ms)
                repl_reconcile(b, p);
        }
}

static void on_isr_timer(loop_t *loop, void *arg)
{
    broker_t *b = arg;
    struct repl *rp = b->repl;
    uint64_t now = loop_now_ms(loop);
    rp->isr_timer = loop_timer_add(loop, rp->isr_check_ms, on_isr_timer, b);
    each_led(b, repl_check_isr);
    deferred_elections(b);
    if (b->cfg.auto_leader_rebalance && now >= rp->balance_at) {
        rp->balance_at = now + (uint64_t)b->cfg.leader_imbalance_check_interval_s * 1000;
        repl_balance_check(b);
    }
}

void repl_isr_check_all(broker_t *b)
{
    each_led(b, repl_check_isr);
}

/* Kafka checks for lagging followers every replica.lag.time.max.ms / 2; the
 * becomeLeader wait needs a finer step. */
void repl_isr_timer_start(broker_t *b)
{
    uint64_t lag = (uint64_t)b->cfg.replica_lag_time_max_ms / 2, wait = (uint64_t)b->cfg.leader_election_wait_ms / 4;
    uint64_t step = lag < wait ? lag : wait;
    b->repl->isr_check_ms = step < 50 ? 50 : step > 1000 ? 1000 : step;
    b->repl->isr_timer = loop_timer_add(b->loop, b->repl->isr_check_ms, on_isr_timer, b);
    b->repl->balance_at = loop_now_ms(b->loop) + (uint64_t)b->cfg.leader_imbalance_check_interval_s * 1000;
}
