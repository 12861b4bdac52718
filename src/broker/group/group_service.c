/* group_service.c -- the group coordinator's service (see group_service.h):
 * start and stop, the deadline timer, the wake queue, placement.
 *
 * Placement: there is no __consumer_offsets topic to lead, so a group's
 * coordinator is chosen over the live brokers by rendezvous hashing
 * (group.h), which moves only the groups of a broker that left or came
 * back. Every broker computes the same answer from the same view; one
 * asked about a group it does not coordinate answers NOT_COORDINATOR, and
 * when the view changes, groups that moved are dropped here.
 *
 * Membership is kept in memory only (as Kafka keeps it, minus the log it
 * writes to __consumer_offsets): after a coordinator change or restart
 * members get UNKNOWN_MEMBER_ID and join again; committed offsets are in
 * the coordinator and survive. */
#define _GNU_SOURCE
#include "group_service.h"
#include "broker/core/conn.h"
#include "base/alloc.h"
#include "base/logging.h"

#include <stdlib.h>
#include <string.h>

#define GROUP_MEMBERS_CAP 10000   /* group.max.size is clamped to this */

struct group_service {
    broker_t *b;
    groups_t *groups;
    loop_timer_t *tick_timer;
    uint64_t tick_at;             /* when tick_timer fires, 0 if not armed */
    group_wake_t *wakes;          /* requests to wake from wake_timer */
    int nwakes, wakes_cap;
    loop_timer_t *wake_timer;
};

/* ---- timers and wake-ups ---- */

static void on_tick(loop_t *loop, void *arg);

static void arm_tick(group_service_t *s, uint64_t at)
{
    if (!at || (s->tick_at && s->tick_at <= at))
        return;
    if (s->tick_timer)
        loop_timer_cancel(s->b->loop, s->tick_timer);
    uint64_t now = loop_now_ms(s->b->loop);
    s->tick_timer = loop_timer_add(s->b->loop, at > now ? at - now : 0, on_tick, s);
    s->tick_at = at;
}

static void on_tick(loop_t *loop, void *arg)
{
    group_service_t *s = arg;
    s->tick_timer = NULL;
    s->tick_at = 0;
    groups_tick(s->groups, loop_now_ms(loop));
    arm_tick(s, groups_next_deadline(s->groups));
}

void group_service_touched(broker_t *b, const group_t *g)
{
    if (g)
        arm_tick(b->gsvc, group_next_deadline(g));
}

static void on_wake_timer(loop_t *loop, void *arg)
{
    (void)loop;
    group_service_t *s = arg;
    s->wake_timer = NULL;
    group_wake_t *ws = s->wakes;
    int n = s->nwakes;
    s->wakes = NULL;
    s->nwakes = s->wakes_cap = 0;
    /* Handlers run here may queue more: they go to a fresh list. */
    for (int i = 0; i < n; i++)
        broker_wake_request(s->b, ws[i].conn_id, ws[i].request_id);
    free(ws);
}

/* The state machine's wake callback (group_wake_fn). */
static void queue_wake(void *arg, uint64_t conn_id, uint64_t request_id)
{
    group_service_t *s = arg;
    if (s->nwakes == s->wakes_cap) {
        int cap = s->wakes_cap ? s->wakes_cap * 2 : 16;
        s->wakes = xrealloc(s->wakes, sizeof(*s->wakes) * (size_t)cap);
        s->wakes_cap = cap;
    }
    s->wakes[s->nwakes++] = (group_wake_t){conn_id, request_id};
    if (!s->wake_timer)
        s->wake_timer = loop_timer_add(s->b->loop, 0, on_wake_timer, s);
}

void group_service_wake(broker_t *b, uint64_t conn_id, uint64_t request_id)
{
    queue_wake(b->gsvc, conn_id, request_id);
}

groups_t *group_service_groups(const broker_t *b)
{
    return b->gsvc->groups;
}

/* ---- start and stop ---- */

int group_service_start(broker_t *b)
{
    group_service_t *s = calloc(1, sizeof(*s));
    if (!s)
        return -1;
    const broker_config_t *bc = &b->cfg;
    group_config_t cfg = {
        .min_session_timeout_ms = bc->group_min_session_timeout_ms,
        .max_session_timeout_ms = bc->group_max_session_timeout_ms,
        .initial_rebalance_delay_ms = bc->group_initial_rebalance_delay_ms,
        .max_size = bc->group_max_size < GROUP_MEMBERS_CAP ? bc->group_max_size : GROUP_MEMBERS_CAP,
        .max_groups = GROUPS_MAX,
        .max_memory = (uint64_t)bc->group_max_memory_bytes,
    };
    s->b = b;
    s->groups = groups_new(&cfg, queue_wake, s);
    b->gsvc = s;
    return 0;
}

void group_service_stop(broker_t *b)
{
    group_service_t *s = b->gsvc;
    if (!s)
        return;
    groups_free(s->groups);
    if (s->tick_timer)
        loop_timer_cancel(b->loop, s->tick_timer);
    if (s->wake_timer)
        loop_timer_cancel(b->loop, s->wake_timer);
    free(s->wakes);
    free(s);
    b->gsvc = NULL;
}

/* ---- placement ---- */

const broker_node_t *group_coordinator_node(const broker_t *b, const char *group_id, size_t len)
{
    if (!b->registered || b->nbrokers == 0)
        return NULL;
    uint32_t h = group_placement_hash(group_id, len);
    const broker_node_t *best = &b->brokers[0];
    uint64_t best_score = group_placement_score(h, best->id);
    for (int i = 1; i < b->nbrokers; i++) {   /* sorted by id: a tie keeps the lower */
        uint64_t score = group_placement_score(h, b->brokers[i].id);
        if (score > best_score) {
            best = &b->brokers[i];
            best_score = score;
        }
    }
    return best;
}

int16_t group_owner_check(const broker_t *b, const char *group_id, size_t len)
{
    const broker_node_t *n = group_coordinator_node(b, group_id, len);
    if (!n)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    return n->id == b->cfg.broker_id ? KERR_NONE : KERR_NOT_COORDINATOR;
}

int16_t group_id_check(const kafka_value_t *id, int allow_empty)
{
    if (id->is_null || (id->n == 0 && !allow_empty) || id->n > GROUP_ID_MAX || strlen(id->u.s) != id->n)
        return KERR_INVALID_GROUP_ID;
    return KERR_NONE;
}

int16_t group_request_check(const broker_t *b, const kafka_value_t *id, int allow_empty)
{
    int16_t error = group_id_check(id, allow_empty);
    return error ? error : group_owner_check(b, id->u.s, id->n);
}

void group_service_view_changed(broker_t *b)
{
    group_service_t *s = b->gsvc;
    if (!s)
        return;
    for (int i = groups_count(s->groups) - 1; i >= 0; i--) {
        group_t *g = groups_at(s->groups, i);
        if (group_owner_check(b, g->id, g->id_len) != KERR_NONE)
            groups_unload(s->groups, g, KERR_NOT_COORDINATOR);
    }
}
