/* group.c -- see group.h. The rules are Kafka's (core's GroupCoordinator and
 * GroupMetadata, the classic protocol), restated for one thread and a clock
 * passed in: Kafka's purgatories become deadlines on members and groups,
 * its callbacks become parked waiters.
 *
 * Memory: everything here is bounded before it is allocated (group.max.size,
 * GROUPS_MAX, GROUP_OFFSETS_MAX, the request sizes, and the bytes of every
 * member and pending member id together: max_memory), so running out of
 * memory is fatal (base/alloc.h). */
#define _GNU_SOURCE
#include "group.h"
#include "base/alloc.h"
#include "base/hashmap.h"
#include "base/jstring.h"
#include "base/logging.h"
#include "base/ratelimit.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct groups {
    group_config_t cfg;
    group_wake_fn wake;
    void *wake_arg;
    group_t **groups;     /* sorted by id (bytes, then length) */
    int n, cap;
    uint64_t next_epoch;
    uint64_t mem_used;    /* members and pending members, as max_memory counts them */
    ratelimit_t mem_log;
};

static void settle(groups_t *gs, group_t *g, uint64_t now);

/* Deadlines use 0 for "none": a clock reading of 0 counts as 1. */
static uint64_t clock_at(uint64_t now)
{
    return now ? now : 1;
}

/* ---- memory and strings ---- */

static char *dup_str(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* Members' protocol metadata and assignments are shared, not copied, with
 * the answers that carry them (the leader's JoinGroup carries everyone's
 * metadata, each SyncGroup its member's assignment): a reference-counted
 * copy of the bytes, which the pointer handed around points into. */
typedef struct {
    uint32_t refs;
    max_align_t data[];
} shared_t;

static shared_t *shared_of(const uint8_t *p)
{
    return (shared_t *)(void *)((char *)(uintptr_t)p - offsetof(shared_t, data));
}

static uint8_t *shared_copy(const uint8_t *p, uint32_t len)
{
    shared_t *b = xmalloc(sizeof(*b) + (len ? len : 1));
    b->refs = 1;
    if (len)
        memcpy(b->data, p, len);
    return (uint8_t *)b->data;
}

static uint8_t *shared_ref(uint8_t *p)
{
    if (p)
        shared_of(p)->refs++;
    return p;
}

static void shared_unref(uint8_t *p)
{
    if (p && --shared_of(p)->refs == 0)
        free(shared_of(p));
}

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* ---- what members cost (max_memory) ---- */

static size_t str_cost(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static size_t protocols_cost(const group_protocol_t *ps, int n)
{
    size_t c = 0;
    for (int i = 0; i < n; i++)
        c += sizeof(*ps) + str_cost(ps[i].name) + ps[i].len;
    return c;
}

static size_t member_cost(const group_member_t *m)
{
    return sizeof(*m) + str_cost(m->member_id) + str_cost(m->instance_id) + str_cost(m->client_id) +
           str_cost(m->client_host) + str_cost(m->protocol_type) + protocols_cost(m->protocols, m->nprotocols) +
           m->assignment_len;
}

/* After any change to m: the count follows. */
static void member_account(groups_t *gs, group_member_t *m)
{
    size_t c = member_cost(m);
    gs->mem_used = gs->mem_used - m->cost + c;
    m->cost = c;
}

static size_t pending_cost(const char *member_id)
{
    return sizeof(group_pending_t) + str_cost(member_id);
}

/* What a new member joining with p will cost: its id is a prefix and a
 * UUID (new_member_id) unless it has one. */
static size_t join_cost(const group_join_t *p)
{
    const char *prefix = p->instance_id ? p->instance_id : (p->client_id ? p->client_id : "");
    size_t id = p->member_id[0] ? strlen(p->member_id) + 1 : strlen(prefix) + 38;
    return sizeof(group_member_t) + id + str_cost(p->instance_id) + str_cost(p->client_id ? p->client_id : "") +
           str_cost(p->client_host ? p->client_host : "") + str_cost(p->protocol_type) +
           protocols_cost(p->protocols, p->nprotocols);
}

static int memory_allows(const groups_t *gs, size_t have, size_t want)
{
    return !gs->cfg.max_memory || want <= have || gs->mem_used + (want - have) <= gs->cfg.max_memory;
}

const char *group_state_name(group_state_t s)
{
    switch (s) {
    case GROUP_EMPTY: return "Empty";
    case GROUP_PREPARING_REBALANCE: return "PreparingRebalance";
    case GROUP_COMPLETING_REBALANCE: return "CompletingRebalance";
    case GROUP_STABLE: return "Stable";
    case GROUP_DEAD: return "Dead";
    }
    return "Dead";
}

/* ---- placement ---- */

uint32_t group_placement_hash(const char *group_id, size_t len)
{
    return (uint32_t)jstring_hash(group_id, len);
}

uint64_t group_placement_score(uint32_t group_hash, int32_t broker_id)
{
    return hmap_hash_u64((uint64_t)group_hash << 32 | (uint32_t)broker_id);
}

/* ---- waiters ---- */

group_waiter_t *group_waiter_new(group_wait_kind_t kind, uint64_t conn_id, uint64_t request_id)
{
    group_waiter_t *w = xcalloc(1, sizeof(*w));
    w->kind = kind;
    w->conn_id = conn_id;
    w->request_id = request_id;
    w->generation = -1;
    return w;
}

static void unpark(group_waiter_t *w)
{
    group_member_t *m = w->parked_on;
    if (!m)
        return;
    if (m->join_waiter == w)
        m->join_waiter = NULL;
    if (m->sync_waiter == w)
        m->sync_waiter = NULL;
    w->parked_on = NULL;
}

void group_waiter_release(group_waiter_t *w)
{
    if (!w)
        return;
    unpark(w);
    free(w->member_id);
    free(w->protocol_type);
    free(w->protocol_name);
    free(w->leader);
    for (int i = 0; i < w->nmembers; i++) {
        free(w->members[i].member_id);
        free(w->members[i].instance_id);
        shared_unref(w->members[i].metadata);
    }
    free(w->members);
    shared_unref(w->assignment);
    free(w);
}

static void park(group_member_t *m, group_waiter_t *w)
{
    unpark(w);
    w->parked_on = m;
    if (w->kind == GROUP_WAIT_JOIN)
        m->join_waiter = w;
    else
        m->sync_waiter = w;
}

/* Marks w answered and wakes its request (a no-op for the request being
 * handled right now: it reads w->done itself). */
static void finish(groups_t *gs, group_waiter_t *w)
{
    unpark(w);
    w->done = 1;
    if (gs->wake)
        gs->wake(gs->wake_arg, w->conn_id, w->request_id);
}

/* An error answer to a JoinGroup (Kafka's JoinGroupResult(memberId, error)). */
static void join_error(groups_t *gs, group_waiter_t *w, const char *member_id, int16_t error)
{
    w->error = error;
    free(w->member_id);
    w->member_id = dup_str(member_id);
    w->generation = -1;
    finish(gs, w);
}

static void sync_error(groups_t *gs, group_waiter_t *w, int16_t error)
{
    w->error = error;
    finish(gs, w);
}

/* ---- members ---- */

static void free_protocols(group_protocol_t *ps, int n)
{
    for (int i = 0; i < n; i++) {
        free(ps[i].name);
        shared_unref(ps[i].metadata);
    }
    free(ps);
}

static group_protocol_t *copy_protocols(const group_protocol_t *ps, int n)
{
    group_protocol_t *c = xcalloc((size_t)(n ? n : 1), sizeof(*c));
    for (int i = 0; i < n; i++) {
        c[i].name = dup_str(ps[i].name);
        c[i].metadata = shared_copy(ps[i].metadata, ps[i].len);
        c[i].len = ps[i].len;
    }
    return c;
}

static int member_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, (*(group_member_t *const *)elem)->member_id);
}

static int member_index(const group_t *g, const char *member_id, int *insert_at)
{
    int lo = 0, hi = g->nmembers;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = member_cmp(member_id, &g->members[mid]);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (insert_at)
        *insert_at = lo;
    return -1;
}

group_member_t *group_member_find(const group_t *g, const char *member_id)
{
    int i = member_id ? member_index(g, member_id, NULL) : -1;
    return i < 0 ? NULL : g->members[i];
}

static group_member_t *static_member_find(const group_t *g, const char *instance_id)
{
    for (int i = 0; i < g->nmembers; i++)
        if (same_str(g->members[i]->instance_id, instance_id))
            return g->members[i];
    return NULL;
}

int group_is_leader(const group_t *g, const char *member_id)
{
    return g->leader && member_id && strcmp(g->leader, member_id) == 0;
}

const group_protocol_t *group_member_protocol(const group_member_t *m, const char *name)
{
    for (int i = 0; m && name && i < m->nprotocols; i++)
        if (strcmp(m->protocols[i].name, name) == 0)
            return &m->protocols[i];
    return NULL;
}

static void member_free(groups_t *gs, group_member_t *m, int16_t error)
{
    /* Nobody is left hanging: a request still parked here is answered. */
    if (m->join_waiter)
        join_error(gs, m->join_waiter, "", error);
    if (m->sync_waiter)
        sync_error(gs, m->sync_waiter, error);
    free(m->member_id);
    free(m->instance_id);
    free(m->client_id);
    free(m->client_host);
    free(m->protocol_type);
    free_protocols(m->protocols, m->nprotocols);
    shared_unref(m->assignment);
    gs->mem_used -= m->cost;
    free(m);
}

static void members_insert(group_t *g, group_member_t *m)
{
    int at = 0;
    member_index(g, m->member_id, &at);
    g->members = xrealloc(g->members, sizeof(*g->members) * (size_t)(g->nmembers + 1));
    memmove(&g->members[at + 1], &g->members[at], sizeof(*g->members) * (size_t)(g->nmembers - at));
    g->members[at] = m;
    g->nmembers++;
}

static void members_take(group_t *g, group_member_t *m)
{
    int i = member_index(g, m->member_id, NULL);
    if (i < 0)
        return;
    memmove(&g->members[i], &g->members[i + 1], sizeof(*g->members) * (size_t)(g->nmembers - i - 1));
    g->nmembers--;
}

static void set_awaiting_join(group_t *g, group_member_t *m, int on)
{
    if (on && !m->awaiting_join)
        g->nawaiting_join++;
    if (!on && m->awaiting_join)
        g->nawaiting_join--;
    m->awaiting_join = on;
}

static void schedule_heartbeat(group_member_t *m, uint64_t now, int64_t timeout_ms)
{
    m->heartbeat_deadline = now + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    if (m->heartbeat_deadline == 0)
        m->heartbeat_deadline = 1;
}

static int member_matches(const group_member_t *m, const group_protocol_t *ps, int n)
{
    if (m->nprotocols != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(m->protocols[i].name, ps[i].name) != 0 || m->protocols[i].len != ps[i].len ||
            (ps[i].len && memcmp(m->protocols[i].metadata, ps[i].metadata, ps[i].len) != 0))
            return 0;
    return 1;
}

/* "clientId-<uuid>" (or "instanceId-<uuid>"), as Kafka's generateMemberId. */
static char *new_member_id(const char *prefix)
{
    uint8_t r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        log_error("groups: getrandom failed");
        abort();
    }
    r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);   /* version 4 */
    r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);   /* IETF variant */
    char *id = xmalloc(strlen(prefix) + 38);
    int n = sprintf(id, "%s-", prefix);
    for (int i = 0; i < 16; i++) {
        n += sprintf(id + n, "%02x", r[i]);
        if (i == 3 || i == 5 || i == 7 || i == 9)
            id[n++] = '-';
    }
    id[n] = 0;
    return id;
}

/* ---- pending members (KIP-394) ---- */

static int pending_index(const group_t *g, const char *member_id)
{
    for (int i = 0; i < g->npending; i++)
        if (strcmp(g->pending[i].member_id, member_id) == 0)
            return i;
    return -1;
}

static void pending_remove_at(groups_t *gs, group_t *g, int i)
{
    gs->mem_used -= pending_cost(g->pending[i].member_id);
    free(g->pending[i].member_id);
    g->pending[i] = g->pending[g->npending - 1];
    g->npending--;
}

static void pending_remove(groups_t *gs, group_t *g, const char *member_id)
{
    int i = pending_index(g, member_id);
    if (i >= 0)
        pending_remove_at(gs, g, i);
}

static void pending_add(groups_t *gs, group_t *g, const char *member_id, uint64_t deadline)
{
    gs->mem_used += pending_cost(member_id);
    g->pending = xrealloc(g->pending, sizeof(*g->pending) * (size_t)(g->npending + 1));
    g->pending[g->npending].member_id = dup_str(member_id);
    g->pending[g->npending].deadline = deadline;
    g->npending++;
}

/* ---- group membership (GroupMetadata) ---- */

static int count_supporting(const group_t *g, const char *protocol)
{
    int n = 0;
    for (int i = 0; i < g->nmembers; i++)
        n += group_member_protocol(g->members[i], protocol) != NULL;
    return n;
}

/* A new or changed member's protocols fit the group: the group's protocol
 * type, and at least one protocol every member supports. */
static int supports_protocols(const group_t *g, const char *type, const group_protocol_t *ps, int n)
{
    if (g->state == GROUP_EMPTY)
        return type && type[0] && n > 0;
    if (!same_str(g->protocol_type, type))
        return 0;
    for (int i = 0; i < n; i++)
        if (count_supporting(g, ps[i].name) == g->nmembers)
            return 1;
    return 0;
}

/* Kafka's selectProtocol: of the protocols every member supports, each
 * member votes for the one it prefers most; most votes wins. Ties go to the
 * protocol voted for first (members in id order), so every run agrees. */
static const char *select_protocol(const group_t *g)
{
    const char *best = NULL;
    int best_votes = 0;
    for (int i = 0; i < g->nmembers; i++) {
        const group_member_t *m = g->members[i];
        const char *vote = NULL;
        for (int k = 0; k < m->nprotocols && !vote; k++)
            if (count_supporting(g, m->protocols[k].name) == g->nmembers)
                vote = m->protocols[k].name;
        if (!vote || (best && strcmp(vote, best) == 0))
            continue;
        int votes = 0;
        for (int j = 0; j < g->nmembers; j++) {
            const group_member_t *o = g->members[j];
            for (int k = 0; k < o->nprotocols; k++)
                if (count_supporting(g, o->protocols[k].name) == g->nmembers) {
                    votes += strcmp(o->protocols[k].name, vote) == 0;
                    break;
                }
        }
        if (votes > best_votes) {
            best = vote;
            best_votes = votes;
        }
    }
    return best;
}

static int32_t group_rebalance_timeout(const group_t *g)
{
    int32_t t = 0;
    for (int i = 0; i < g->nmembers; i++)
        if (g->members[i]->rebalance_timeout_ms > t)
            t = g->members[i]->rebalance_timeout_ms;
    return t;
}

static void set_leader(group_t *g, const char *member_id)
{
    free(g->leader);
    g->leader = dup_str(member_id);
}

/* GroupMetadata.add: the member joins with its JoinGroup parked (w). */
static void group_add(groups_t *gs, group_t *g, group_member_t *m, group_waiter_t *w)
{
    if (g->nmembers == 0) {
        free(g->protocol_type);
        g->protocol_type = dup_str(m->protocol_type);
    }
    if (!g->leader)
        set_leader(g, m->member_id);
    members_insert(g, m);
    if (w) {
        park(m, w);
        set_awaiting_join(g, m, 1);
    }
    pending_remove(gs, g, m->member_id);
}

/* GroupMetadata.remove (no answers, no rebalance: callers decide). */
static void group_remove(groups_t *gs, group_t *g, group_member_t *m, int16_t error)
{
    members_take(g, m);
    set_awaiting_join(g, m, 0);
    if (group_is_leader(g, m->member_id))
        set_leader(g, g->nmembers ? g->members[0]->member_id : NULL);
    member_free(gs, m, error);
}

static void state_to(group_t *g, group_state_t s)
{
    g->state = s;
}

/* ---- answers ---- */

static void fill_members(group_waiter_t *w, const group_t *g)
{
    w->members = xcalloc((size_t)(g->nmembers ? g->nmembers : 1), sizeof(*w->members));
    for (int i = 0; i < g->nmembers; i++) {
        const group_member_t *m = g->members[i];
        const group_protocol_t *p = group_member_protocol(m, g->protocol_name);
        w->members[i].member_id = dup_str(m->member_id);
        w->members[i].instance_id = dup_str(m->instance_id);
        w->members[i].metadata = p ? shared_ref(p->metadata) : NULL;
        w->members[i].len = p ? p->len : 0;
    }
    w->nmembers = g->nmembers;
}

/* A successful JoinGroup answer for the current generation. */
static void join_answer(groups_t *gs, group_t *g, group_waiter_t *w, const char *member_id, int with_members,
                        const char *leader, int skip_assignment)
{
    w->error = KERR_NONE;
    free(w->member_id);
    w->member_id = dup_str(member_id);
    w->generation = g->generation;
    w->protocol_type = dup_str(g->protocol_type);
    w->protocol_name = dup_str(g->protocol_name);
    w->leader = dup_str(leader ? leader : "");
    w->skip_assignment = skip_assignment;
    if (with_members)
        fill_members(w, g);
    finish(gs, w);
}

/* Kafka's maybeInvokeJoinCallback: the member stops awaiting; its request,
 * if still there, gets the answer. */
static void answer_member_join(groups_t *gs, group_t *g, group_member_t *m, int with_members,
                               const char *leader, int skip_assignment)
{
    if (!m->awaiting_join)
        return;
    set_awaiting_join(g, m, 0);
    if (m->join_waiter)
        join_answer(gs, g, m->join_waiter, m->member_id, with_members, leader, skip_assignment);
}

static void answer_member_join_error(groups_t *gs, group_t *g, group_member_t *m, const char *member_id,
                                     int16_t error)
{
    if (!m->awaiting_join)
        return;
    set_awaiting_join(g, m, 0);
    if (m->join_waiter)
        join_error(gs, m->join_waiter, member_id, error);
}

/* Kafka's maybeInvokeSyncCallback; 1 if the member was awaiting. */
static int answer_member_sync(groups_t *gs, group_t *g, group_member_t *m, int16_t error)
{
    if (!m->awaiting_sync)
        return 0;
    m->awaiting_sync = 0;
    group_waiter_t *w = m->sync_waiter;
    if (w) {
        w->error = error;
        if (!error) {
            w->protocol_type = dup_str(g->protocol_type);
            w->protocol_name = dup_str(g->protocol_name);
            w->assignment = shared_ref(m->assignment);
            w->assignment_len = m->assignment_len;
        }
        finish(gs, w);
    }
    return 1;
}

/* propagateAssignment: every member awaiting sync gets its assignment (or
 * the error), and a fresh session deadline. */
static void propagate_assignment(groups_t *gs, group_t *g, int16_t error, uint64_t now)
{
    for (int i = 0; i < g->nmembers; i++) {
        group_member_t *m = g->members[i];
        if (answer_member_sync(gs, g, m, error))
            schedule_heartbeat(m, now, m->session_timeout_ms);
    }
}

static void set_assignment(groups_t *gs, group_member_t *m, const uint8_t *a, uint32_t len)
{
    shared_unref(m->assignment);
    m->assignment = len ? shared_copy(a, len) : NULL;
    m->assignment_len = len;
    member_account(gs, m);
}

/* ---- rebalancing (GroupCoordinator) ---- */

static void clear_pending_sync(group_t *g)
{
    for (int i = 0; i < g->nmembers; i++)
        g->members[i]->pending_sync = 0;
    g->sync_deadline = 0;
}

static int can_rebalance(const group_t *g)
{
    return g->state == GROUP_STABLE || g->state == GROUP_COMPLETING_REBALANCE || g->state == GROUP_EMPTY;
}

static void prepare_rebalance(groups_t *gs, group_t *g, uint64_t now, const char *reason)
{
    if (g->state == GROUP_COMPLETING_REBALANCE) {
        /* Members waiting for the old generation's assignment rejoin. */
        for (int i = 0; i < g->nmembers; i++)
            set_assignment(gs, g->members[i], NULL, 0);
        propagate_assignment(gs, g, KERR_REBALANCE_IN_PROGRESS, now);
    }
    clear_pending_sync(g);
    int32_t timeout = group_rebalance_timeout(g);
    if (g->state == GROUP_EMPTY) {
        /* InitialDelayedJoin: give the other members of a starting group
         * time to arrive, so the first generation is not a group of one. */
        int32_t delay = gs->cfg.initial_rebalance_delay_ms;
        g->initial_join = 1;
        g->initial_delay_ms = delay;
        g->initial_remaining_ms = timeout - delay > 0 ? timeout - delay : 0;
        g->new_member_added = 0;
        g->join_deadline = now + (uint64_t)(delay > 0 ? delay : 0);
    } else {
        g->initial_join = 0;
        g->join_deadline = now + (uint64_t)(timeout > 0 ? timeout : 0);
    }
    if (g->join_deadline == 0)
        g->join_deadline = 1;
    log_info("preparing to rebalance group %s in state %s with old generation %d (reason: %s)", g->id,
             group_state_name(g->state), (int)g->generation, reason);
    state_to(g, GROUP_PREPARING_REBALANCE);
}

static void maybe_prepare_rebalance(groups_t *gs, group_t *g, uint64_t now, const char *reason)
{
    if (can_rebalance(g))
        prepare_rebalance(gs, g, now, reason);
}

/* Kafka's maybeElectNewJoinedLeader. */
static int elect_joined_leader(group_t *g)
{
    group_member_t *leader = group_member_find(g, g->leader);
    if (!leader)
        return 0;
    if (leader->awaiting_join)
        return 1;
    for (int i = 0; i < g->nmembers; i++)
        if (g->members[i]->awaiting_join) {
            log_info("group %s: leader %s did not rejoin in time; %s leads now", g->id, leader->member_id,
                     g->members[i]->member_id);
            set_leader(g, g->members[i]->member_id);
            return 1;
        }
    return 0;
}

static void init_next_generation(group_t *g)
{
    g->generation++;
    free(g->protocol_name);
    g->protocol_name = g->nmembers ? dup_str(select_protocol(g)) : NULL;
    state_to(g, g->nmembers ? GROUP_COMPLETING_REBALANCE : GROUP_EMPTY);
    clear_pending_sync(g);
}

/* Kafka's onCompleteJoin: dynamic members that did not rejoin are dropped,
 * the next generation starts, every joined member gets its answer (the
 * leader with everyone's metadata) and owes a SyncGroup. */
static void complete_join(groups_t *gs, group_t *g, uint64_t now)
{
    for (int i = g->nmembers - 1; i >= 0; i--) {
        group_member_t *m = g->members[i];
        if (!m->awaiting_join && !m->instance_id) {
            log_info("group %s: removing member %s, which did not rejoin", g->id, m->member_id);
            group_remove(gs, g, m, KERR_UNKNOWN_MEMBER_ID);
        }
    }
    g->join_deadline = 0;
    g->initial_join = 0;
    if (!elect_joined_leader(g) && g->nmembers > 0) {
        /* Only static members that did not rejoin are left: wait for them
         * (or for their sessions to end) another rebalance timeout. */
        int32_t timeout = group_rebalance_timeout(g);
        g->join_deadline = now + (uint64_t)(timeout > 0 ? timeout : 0) + 1;
        return;
    }
    init_next_generation(g);
    if (g->state == GROUP_EMPTY) {
        log_info("group %s with generation %d is now empty", g->id, (int)g->generation);
        return;
    }
    log_info("stabilized group %s generation %d with %d members (protocol %s)", g->id, (int)g->generation,
             g->nmembers, g->protocol_name ? g->protocol_name : "");
    for (int i = 0; i < g->nmembers; i++) {
        group_member_t *m = g->members[i];
        answer_member_join(gs, g, m, group_is_leader(g, m->member_id), g->leader, 0);
        schedule_heartbeat(m, now, m->session_timeout_ms);
        m->is_new = 0;
        m->pending_sync = 1;
    }
    int32_t timeout = group_rebalance_timeout(g);
    g->sync_deadline = now + (uint64_t)(timeout > 0 ? timeout : 0) + 1;
}

/* DelayedJoin.tryComplete: every known member has rejoined and no pending
 * member is still to come. InitialDelayedJoin never completes early. */
static void try_complete_join(groups_t *gs, group_t *g, uint64_t now)
{
    if (g->state == GROUP_PREPARING_REBALANCE && !g->initial_join && g->nawaiting_join == g->nmembers &&
        g->npending == 0)
        complete_join(gs, g, now);
}

/* InitialDelayedJoin.onComplete: while new members keep arriving, wait
 * another delay, up to the rebalance timeout. */
static void initial_join_expired(groups_t *gs, group_t *g, uint64_t now)
{
    if (g->new_member_added && g->initial_remaining_ms != 0) {
        int32_t configured = gs->cfg.initial_rebalance_delay_ms;
        int32_t delay = configured < g->initial_remaining_ms ? configured : g->initial_remaining_ms;
        int32_t remaining = g->initial_remaining_ms - g->initial_delay_ms;
        g->new_member_added = 0;
        g->initial_delay_ms = delay;
        g->initial_remaining_ms = remaining > 0 ? remaining : 0;
        g->join_deadline = now + (uint64_t)(delay > 0 ? delay : 0) + (delay > 0 ? 0 : 1);
        return;
    }
    complete_join(gs, g, now);
}

/* removeMemberAndUpdateGroup. */
static void remove_member_and_update(groups_t *gs, group_t *g, group_member_t *m, uint64_t now, const char *reason)
{
    answer_member_join_error(gs, g, m, "", KERR_UNKNOWN_MEMBER_ID);
    group_remove(gs, g, m, KERR_UNKNOWN_MEMBER_ID);
    if (g->state == GROUP_STABLE || g->state == GROUP_COMPLETING_REBALANCE)
        maybe_prepare_rebalance(gs, g, now, reason);
    else if (g->state == GROUP_PREPARING_REBALANCE)
        try_complete_join(gs, g, now);
}

/* onExpirePendingSync: members that owe a SyncGroup past the rebalance
 * timeout are dropped, and the group rebalances without them. */
static void sync_expired(groups_t *gs, group_t *g, uint64_t now)
{
    g->sync_deadline = 0;
    if (g->state != GROUP_COMPLETING_REBALANCE && g->state != GROUP_STABLE)
        return;
    int dropped = 0;
    for (int i = g->nmembers - 1; i >= 0; i--)
        if (g->members[i]->pending_sync) {
            log_info("group %s: removing member %s, which did not send SyncGroup in time", g->id,
                     g->members[i]->member_id);
            group_remove(gs, g, g->members[i], KERR_UNKNOWN_MEMBER_ID);
            dropped = 1;
        }
    if (dropped)
        prepare_rebalance(gs, g, now, "members did not sync in time");
}

static int owes_sync(const group_t *g)
{
    for (int i = 0; i < g->nmembers; i++)
        if (g->members[i]->pending_sync)
            return 1;
    return 0;
}

/* Everything due at `now` for one group, then whatever that made possible. */
static void settle(groups_t *gs, group_t *g, uint64_t now)
{
    for (int i = g->npending - 1; i >= 0; i--)
        if (g->pending[i].deadline <= now) {
            log_info("group %s: pending member %s expired", g->id, g->pending[i].member_id);
            pending_remove_at(gs, g, i);
            try_complete_join(gs, g, now);
        }
    /* A removal can rebalance and drop other members, so look again from
     * the start after each one. */
    for (int i = 0; i < g->nmembers;) {
        group_member_t *m = g->members[i];
        if (!m->heartbeat_deadline || m->heartbeat_deadline > now) {
            i++;
            continue;
        }
        m->heartbeat_deadline = 0;
        /* Members waiting on a rebalance count as alive (hasSatisfiedHeartbeat);
         * new members do not, so a join that never completes times out. */
        if (!m->is_new && (m->awaiting_join || m->awaiting_sync)) {
            i++;
            continue;
        }
        log_info("member %s in group %s has failed (session timeout), removing it", m->member_id, g->id);
        remove_member_and_update(gs, g, m, now, "member's session expired");
        i = 0;
    }
    if (g->state == GROUP_PREPARING_REBALANCE && g->join_deadline && g->join_deadline <= now) {
        if (g->initial_join)
            initial_join_expired(gs, g, now);
        else
            complete_join(gs, g, now);
    }
    if (g->sync_deadline && (g->state == GROUP_COMPLETING_REBALANCE || g->state == GROUP_STABLE) && !owes_sync(g))
        g->sync_deadline = 0;
    if (g->sync_deadline && g->sync_deadline <= now)
        sync_expired(gs, g, now);
}

/* ---- the group table ---- */

static int id_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen < blen ? -1 : alen > blen);
}

static int group_index(const groups_t *gs, const char *id, size_t len, int *insert_at)
{
    int lo = 0, hi = gs->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = id_cmp(id, len, gs->groups[mid]->id, gs->groups[mid]->id_len);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (insert_at)
        *insert_at = lo;
    return -1;
}

groups_t *groups_new(const group_config_t *cfg, group_wake_fn wake, void *arg)
{
    groups_t *gs = xcalloc(1, sizeof(*gs));
    gs->cfg = *cfg;
    gs->wake = wake;
    gs->wake_arg = arg;
    gs->next_epoch = 1;
    ratelimit_init(&gs->mem_log, 10000, 1);
    return gs;
}

const group_config_t *groups_config(const groups_t *gs)
{
    return &gs->cfg;
}

uint64_t groups_memory(const groups_t *gs)
{
    return gs->mem_used;
}

int groups_count(const groups_t *gs)
{
    return gs->n;
}

group_t *groups_at(const groups_t *gs, int i)
{
    return i >= 0 && i < gs->n ? gs->groups[i] : NULL;
}

group_t *groups_find(const groups_t *gs, const char *id, size_t len)
{
    int i = group_index(gs, id, len, NULL);
    return i < 0 ? NULL : gs->groups[i];
}

static int group_idle(const group_t *g)
{
    return g->state == GROUP_EMPTY && g->nmembers == 0 && g->npending == 0 && g->io_refs == 0 &&
           g->offsets_state != 1 && g->nload_waiters == 0;
}

static void group_free(groups_t *gs, group_t *g, int16_t error)
{
    while (g->nmembers > 0) {
        group_member_t *m = g->members[g->nmembers - 1];
        g->nmembers--;
        member_free(gs, m, error);
    }
    free(g->members);
    for (int i = 0; i < g->npending; i++) {
        gs->mem_used -= pending_cost(g->pending[i].member_id);
        free(g->pending[i].member_id);
    }
    free(g->pending);
    for (int i = 0; i < g->noffsets; i++) {
        free(g->offsets[i]->topic);
        free(g->offsets[i]->metadata);
        free(g->offsets[i]);
    }
    free(g->offsets);
    group_wake_load_waiters(gs, g);
    free(g->load_waiters);
    free(g->id);
    free(g->protocol_type);
    free(g->protocol_name);
    free(g->leader);
    free(g);
}

static void groups_take(groups_t *gs, group_t *g)
{
    int i = group_index(gs, g->id, g->id_len, NULL);
    if (i < 0)
        return;
    memmove(&gs->groups[i], &gs->groups[i + 1], sizeof(*gs->groups) * (size_t)(gs->n - i - 1));
    gs->n--;
}

/* Room for one more group: an idle one (its offsets are in the
 * coordinator, and read again when asked for) leaves memory. */
static int make_room(groups_t *gs)
{
    if (gs->n < gs->cfg.max_groups)
        return 0;
    for (int i = 0; i < gs->n; i++)
        if (group_idle(gs->groups[i])) {
            group_t *g = gs->groups[i];
            groups_take(gs, g);
            group_free(gs, g, KERR_NOT_COORDINATOR);
            return 0;
        }
    return -1;
}

group_t *groups_create(groups_t *gs, const char *id, size_t len, uint64_t now)
{
    (void)now;
    int at = 0;
    if (group_index(gs, id, len, &at) >= 0 || make_room(gs) < 0) {
        if (gs->n >= gs->cfg.max_groups)
            log_warn("cannot hold group %.*s: %d groups with members already (the most this broker keeps)",
                     (int)(len > 200 ? 200 : len), id, gs->n);
        return NULL;
    }
    group_index(gs, id, len, &at);
    if (gs->n == gs->cap) {
        gs->cap = gs->cap ? gs->cap * 2 : 16;
        gs->groups = xrealloc(gs->groups, sizeof(*gs->groups) * (size_t)gs->cap);
    }
    group_t *g = xcalloc(1, sizeof(*g));
    g->id = xmalloc(len + 1);
    memcpy(g->id, id, len);
    g->id[len] = 0;
    g->id_len = len;
    g->epoch = gs->next_epoch++;
    g->state = GROUP_EMPTY;
    memmove(&gs->groups[at + 1], &gs->groups[at], sizeof(*gs->groups) * (size_t)(gs->n - at));
    gs->groups[at] = g;
    gs->n++;
    return g;
}

void groups_unload(groups_t *gs, group_t *g, int16_t error)
{
    log_info("unloading group %s (generation %d, %d members)", g->id, (int)g->generation, g->nmembers);
    groups_take(gs, g);
    group_free(gs, g, error);
}

void groups_free(groups_t *gs)
{
    if (!gs)
        return;
    while (gs->n > 0) {
        group_t *g = gs->groups[gs->n - 1];
        gs->n--;
        group_free(gs, g, KERR_COORDINATOR_NOT_AVAILABLE);
    }
    free(gs->groups);
    free(gs);
}

void groups_tick(groups_t *gs, uint64_t now)
{
    now = clock_at(now);
    for (int i = 0; i < gs->n; i++)
        settle(gs, gs->groups[i], now);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
    return !a ? b : (!b ? a : (a < b ? a : b));
}

uint64_t group_next_deadline(const group_t *g)
{
    uint64_t at = g->sync_deadline;
    if (g->state == GROUP_PREPARING_REBALANCE)
        at = earliest(at, g->join_deadline);
    for (int k = 0; k < g->npending; k++)
        at = earliest(at, g->pending[k].deadline);
    for (int k = 0; k < g->nmembers; k++)
        at = earliest(at, g->members[k]->heartbeat_deadline);
    return at;
}

uint64_t groups_next_deadline(const groups_t *gs)
{
    uint64_t at = 0;
    for (int i = 0; i < gs->n; i++)
        at = earliest(at, group_next_deadline(gs->groups[i]));
    return at;
}

int group_exists(const group_t *g)
{
    if (g->state != GROUP_EMPTY || g->nmembers || g->npending || g->generation > 0 || g->protocol_type)
        return 1;
    for (int i = 0; i < g->noffsets; i++)
        if (g->offsets[i]->present)
            return 1;
    return 0;
}

/* ---- JoinGroup ---- */

/* acceptJoiningMember: group.max.size counts awaiting members while
 * preparing (those not rejoining are dropped anyway), else all members. */
static int accept_joining_member(const groups_t *gs, const group_t *g, const char *member_id)
{
    const group_member_t *m = group_member_find(g, member_id);
    switch (g->state) {
    case GROUP_EMPTY:
    case GROUP_DEAD:
        return 1;
    case GROUP_PREPARING_REBALANCE:
        return (m && m->awaiting_join) || g->nawaiting_join < gs->cfg.max_size;
    default:
        return m != NULL || g->nmembers < gs->cfg.max_size;
    }
}

/* The member joining with p still fits max_memory (a member already there
 * only by what its new protocols add). */
static int join_fits(groups_t *gs, const group_t *g, const group_join_t *p, uint64_t now)
{
    const group_member_t *m = p->member_id[0] ? group_member_find(g, p->member_id) : NULL;
    size_t have = m ? protocols_cost(m->protocols, m->nprotocols) : 0;
    size_t want = m ? protocols_cost(p->protocols, p->nprotocols) : join_cost(p);
    if (memory_allows(gs, have, want))
        return 1;
    uint64_t held;
    if (ratelimit_allow(&gs->mem_log, now, &held))
        log_warn("group %s: a member joining with %zu bytes does not fit group.max.memory.bytes (%llu of %llu "
                 "bytes held): GROUP_MAX_SIZE_REACHED (%llu more since the last line)", g->id, want,
                 (unsigned long long)gs->mem_used, (unsigned long long)gs->cfg.max_memory,
                 (unsigned long long)held);
    return 0;
}

static group_member_t *member_new(const group_join_t *p, const char *member_id)
{
    group_member_t *m = xcalloc(1, sizeof(*m));
    m->member_id = dup_str(member_id);
    m->instance_id = dup_str(p->instance_id);
    m->client_id = dup_str(p->client_id ? p->client_id : "");
    m->client_host = dup_str(p->client_host ? p->client_host : "");
    m->session_timeout_ms = p->session_timeout_ms;
    m->rebalance_timeout_ms = p->rebalance_timeout_ms;
    m->protocol_type = dup_str(p->protocol_type);
    m->protocols = copy_protocols(p->protocols, p->nprotocols);
    m->nprotocols = p->nprotocols;
    return m;
}

static void add_member_and_rebalance(groups_t *gs, group_t *g, const group_join_t *p, const char *member_id,
                                     group_waiter_t *w, uint64_t now)
{
    group_member_t *m = member_new(p, member_id);
    member_account(gs, m);
    m->is_new = 1;
    /* More members arriving during the initial delay extend it. */
    if (g->state == GROUP_PREPARING_REBALANCE && g->generation == 0)
        g->new_member_added = 1;
    group_add(gs, g, m, w);
    /* A new member cannot heartbeat until it has its id: its join times out
     * on its own instead (a client that gave up would linger otherwise). */
    schedule_heartbeat(m, now, GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS);
    maybe_prepare_rebalance(gs, g, now, "adding a new member");
}

/* updateMember: new protocols and timeouts, and the JoinGroup parks here.
 * A JoinGroup already parked for this member (from another connection) is
 * superseded. */
static void update_member(groups_t *gs, group_t *g, group_member_t *m, const group_join_t *p, group_waiter_t *w)
{
    if (m->join_waiter && m->join_waiter != w)
        join_error(gs, m->join_waiter, m->member_id, KERR_REBALANCE_IN_PROGRESS);
    free_protocols(m->protocols, m->nprotocols);
    m->protocols = copy_protocols(p->protocols, p->nprotocols);
    m->nprotocols = p->nprotocols;
    member_account(gs, m);
    m->rebalance_timeout_ms = p->rebalance_timeout_ms;
    m->session_timeout_ms = p->session_timeout_ms;
    park(m, w);
    set_awaiting_join(g, m, 1);
}

static void update_member_and_rebalance(groups_t *gs, group_t *g, group_member_t *m, const group_join_t *p,
                                        group_waiter_t *w, uint64_t now, const char *reason)
{
    update_member(gs, g, m, p, w);
    maybe_prepare_rebalance(gs, g, now, reason);
}

/* replaceStaticMember: the instance id now belongs to new_id; whoever held
 * it before is fenced. */
static group_member_t *replace_static_member(groups_t *gs, group_t *g, group_member_t *m, const char *new_id)
{
    if (m->join_waiter)
        join_error(gs, m->join_waiter, m->member_id, KERR_FENCED_INSTANCE_ID);
    set_awaiting_join(g, m, 0);
    if (m->sync_waiter)
        sync_error(gs, m->sync_waiter, KERR_FENCED_INSTANCE_ID);
    m->awaiting_sync = 0;
    int was_leader = group_is_leader(g, m->member_id);
    members_take(g, m);
    free(m->member_id);
    m->member_id = dup_str(new_id);
    member_account(gs, m);
    members_insert(g, m);
    if (was_leader)
        set_leader(g, new_id);
    return m;
}

/* updateStaticMemberAndRebalance: a known static member came back with a
 * new member id. In a Stable group whose protocol would not change it takes
 * over its old assignment without a rebalance. */
static void update_static_member(groups_t *gs, group_t *g, group_member_t *old, const char *new_id,
                                 const group_join_t *p, group_waiter_t *w, uint64_t now)
{
    char *old_leader = dup_str(g->leader);
    group_member_t *m = replace_static_member(gs, g, old, new_id);
    schedule_heartbeat(m, now, m->session_timeout_ms);
    update_member(gs, g, m, p, w);
    switch (g->state) {
    case GROUP_STABLE:
        if (same_str(select_protocol(g), g->protocol_name)) {
            /* v9+: the leader learns it leads, but must not assign again
             * (the group is stable); older versions are told the old leader
             * id, so a returning leader does not think it leads. */
            int leads = group_is_leader(g, new_id);
            if (p->supports_skip_assignment)
                answer_member_join(gs, g, m, leads, g->leader, leads);
            else
                answer_member_join(gs, g, m, 0, old_leader, 0);
        } else {
            maybe_prepare_rebalance(gs, g, now, "a static member rejoined with other protocols");
        }
        break;
    case GROUP_COMPLETING_REBALANCE:
        /* The leader may be assigning to the old member id. */
        prepare_rebalance(gs, g, now, "a static member rejoined during the sync");
        break;
    default:
        break;
    }
    free(old_leader);
}

static void new_member_join(groups_t *gs, group_t *g, const group_join_t *p, group_waiter_t *w, uint64_t now)
{
    if (g->state == GROUP_DEAD) {
        join_error(gs, w, "", KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (!supports_protocols(g, p->protocol_type, p->protocols, p->nprotocols)) {
        join_error(gs, w, "", KERR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    char *id = new_member_id(p->instance_id ? p->instance_id : (p->client_id ? p->client_id : ""));
    if (p->instance_id) {
        group_member_t *known = static_member_find(g, p->instance_id);
        if (known)
            update_static_member(gs, g, known, id, p, w, now);
        else
            add_member_and_rebalance(gs, g, p, id, w, now);
    } else if (p->require_known_member_id) {
        /* KIP-394: the member learns its id first and joins with it, so a
         * client that times out and retries does not leave ghosts. */
        if (g->npending >= gs->cfg.max_size) {
            join_error(gs, w, "", KERR_GROUP_MAX_SIZE_REACHED);
        } else {
            pending_add(gs, g, id, now + (uint64_t)p->session_timeout_ms);
            join_error(gs, w, id, KERR_MEMBER_ID_REQUIRED);
        }
    } else {
        add_member_and_rebalance(gs, g, p, id, w, now);
    }
    free(id);
}

/* validateCurrentMember: a static member's instance id must map to the
 * member id it gives (else it was replaced: fenced). */
static int16_t validate_member(const group_t *g, const char *member_id, const char *instance_id)
{
    if (instance_id) {
        const group_member_t *m = group_member_find(g, member_id);
        if (m && same_str(m->instance_id, instance_id))
            return KERR_NONE;
        return static_member_find(g, instance_id) ? KERR_FENCED_INSTANCE_ID : KERR_UNKNOWN_MEMBER_ID;
    }
    return group_member_find(g, member_id) ? KERR_NONE : KERR_UNKNOWN_MEMBER_ID;
}

static void current_member_join(groups_t *gs, group_t *g, const group_join_t *p, group_waiter_t *w, uint64_t now)
{
    if (g->state == GROUP_DEAD) {
        join_error(gs, w, p->member_id, KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (!supports_protocols(g, p->protocol_type, p->protocols, p->nprotocols)) {
        join_error(gs, w, p->member_id, KERR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    if (pending_index(g, p->member_id) >= 0) {
        /* A pending member is dynamic by construction. */
        if (p->instance_id)
            join_error(gs, w, p->member_id, KERR_UNKNOWN_SERVER_ERROR);
        else
            add_member_and_rebalance(gs, g, p, p->member_id, w, now);
        return;
    }
    int16_t error = validate_member(g, p->member_id, p->instance_id);
    if (error) {
        join_error(gs, w, p->member_id, error);
        return;
    }
    group_member_t *m = group_member_find(g, p->member_id);
    int same = member_matches(m, p->protocols, p->nprotocols);
    switch (g->state) {
    case GROUP_PREPARING_REBALANCE:
        update_member_and_rebalance(gs, g, m, p, w, now, "member rejoining");
        break;
    case GROUP_COMPLETING_REBALANCE:
        /* The same metadata again (its answer was lost): the generation's
         * answer again; different metadata: rebalance. */
        if (same)
            join_answer(gs, g, w, m->member_id, group_is_leader(g, m->member_id), g->leader, 0);
        else
            update_member_and_rebalance(gs, g, m, p, w, now, "member changed its metadata");
        break;
    case GROUP_STABLE:
        /* The leader's JoinGroup always rebalances: it is how a client asks
         * for a new assignment when topics change. */
        if (group_is_leader(g, m->member_id) || !same)
            update_member_and_rebalance(gs, g, m, p, w, now,
                                        same ? "leader rejoining" : "member changed its metadata");
        else
            join_answer(gs, g, w, m->member_id, 0, g->leader, 0);
        break;
    default:
        join_error(gs, w, p->member_id, KERR_UNKNOWN_MEMBER_ID);
        break;
    }
}

void group_join(groups_t *gs, const group_join_t *p, uint64_t now, group_waiter_t *w)
{
    now = clock_at(now);
    const group_config_t *cfg = &gs->cfg;
    if (p->session_timeout_ms < cfg->min_session_timeout_ms || p->session_timeout_ms > cfg->max_session_timeout_ms) {
        join_error(gs, w, p->member_id, KERR_INVALID_SESSION_TIMEOUT);
        return;
    }
    int unknown = p->member_id[0] == 0;
    group_t *g = groups_find(gs, p->group_id, p->group_id_len);
    if (g)
        settle(gs, g, now);
    if (!g && !unknown) {
        join_error(gs, w, p->member_id, KERR_UNKNOWN_MEMBER_ID);
        return;
    }
    if (!g && !(g = groups_create(gs, p->group_id, p->group_id_len, now))) {
        join_error(gs, w, p->member_id, KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (!accept_joining_member(gs, g, p->member_id) || !join_fits(gs, g, p, now)) {
        group_member_t *m = group_member_find(g, p->member_id);
        if (m)
            group_remove(gs, g, m, KERR_GROUP_MAX_SIZE_REACHED);
        join_error(gs, w, "", KERR_GROUP_MAX_SIZE_REACHED);
    } else if (unknown) {
        new_member_join(gs, g, p, w, now);
    } else {
        current_member_join(gs, g, p, w, now);
    }
    try_complete_join(gs, g, now);
    settle(gs, g, now);
}

/* ---- SyncGroup ---- */

static int16_t validate_sync(const group_t *g, const group_sync_t *p)
{
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    int16_t error = validate_member(g, p->member_id, p->instance_id);
    if (error)
        return error;
    if (p->generation != g->generation)
        return KERR_ILLEGAL_GENERATION;
    if (p->protocol_type && !same_str(p->protocol_type, g->protocol_type))
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    if (p->protocol_name && !same_str(p->protocol_name, g->protocol_name))
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    return KERR_NONE;
}

/* The leader's assignment: every member gets its part (members it left
 * out get an empty one), and the group is Stable. */
static void apply_assignment(groups_t *gs, group_t *g, const group_sync_t *p, uint64_t now)
{
    log_info("assignment received from leader %s for group %s generation %d (%d members)", p->member_id, g->id,
             (int)g->generation, g->nmembers);
    for (int i = 0; i < g->nmembers; i++)
        set_assignment(gs, g->members[i], NULL, 0);
    for (int i = 0; i < p->nassignments; i++) {
        group_member_t *m = group_member_find(g, p->assignments[i].member_id);
        if (m)
            set_assignment(gs, m, p->assignments[i].assignment, p->assignments[i].len);
    }
    propagate_assignment(gs, g, KERR_NONE, now);
    state_to(g, GROUP_STABLE);
}

/* The leader's assignment can be kept: each part within
 * GROUP_ASSIGNMENT_MAX, all of them within max_memory. */
static int assignment_fits(const groups_t *gs, const group_t *g, const group_sync_t *p)
{
    size_t have = 0, want = 0;
    for (int i = 0; i < g->nmembers; i++)
        have += g->members[i]->assignment_len;
    for (int i = 0; i < p->nassignments; i++) {
        if (p->assignments[i].len > GROUP_ASSIGNMENT_MAX)
            return 0;
        if (group_member_find(g, p->assignments[i].member_id))
            want += p->assignments[i].len;
    }
    return memory_allows(gs, have, want);
}

/* Kafka's answer when a group is too large to store (doSyncGroup after a
 * failed storeGroup): no assignment is kept, every member waiting for one
 * gets UNKNOWN_SERVER_ERROR, and the group rebalances. */
static void assignment_refused(groups_t *gs, group_t *g, const group_sync_t *p, uint64_t now)
{
    log_warn("group %s: the assignment of leader %s cannot be kept (a member's part over %u bytes, or "
             "group.max.memory.bytes reached, %llu of %llu bytes held)", g->id, p->member_id,
             (unsigned)GROUP_ASSIGNMENT_MAX, (unsigned long long)gs->mem_used,
             (unsigned long long)gs->cfg.max_memory);
    for (int i = 0; i < g->nmembers; i++)
        set_assignment(gs, g->members[i], NULL, 0);
    propagate_assignment(gs, g, KERR_UNKNOWN_SERVER_ERROR, now);
    prepare_rebalance(gs, g, now, "the leader's assignment could not be kept");
}

void group_sync(groups_t *gs, const group_sync_t *p, uint64_t now, group_waiter_t *w)
{
    now = clock_at(now);
    group_t *g = groups_find(gs, p->group_id, p->group_id_len);
    if (g)
        settle(gs, g, now);
    int16_t error = g ? validate_sync(g, p) : KERR_UNKNOWN_MEMBER_ID;
    if (error) {
        sync_error(gs, w, error);
        return;
    }
    group_member_t *m = group_member_find(g, p->member_id);
    switch (g->state) {
    case GROUP_EMPTY:
        sync_error(gs, w, KERR_UNKNOWN_MEMBER_ID);
        break;
    case GROUP_PREPARING_REBALANCE:
        sync_error(gs, w, KERR_REBALANCE_IN_PROGRESS);
        break;
    case GROUP_COMPLETING_REBALANCE:
        if (m->sync_waiter && m->sync_waiter != w)
            sync_error(gs, m->sync_waiter, KERR_REBALANCE_IN_PROGRESS);
        park(m, w);
        m->awaiting_sync = 1;
        m->pending_sync = 0;
        if (group_is_leader(g, m->member_id) && assignment_fits(gs, g, p))
            apply_assignment(gs, g, p, now);
        else if (group_is_leader(g, m->member_id))
            assignment_refused(gs, g, p, now);
        break;
    case GROUP_STABLE:
        m->pending_sync = 0;
        w->protocol_type = dup_str(g->protocol_type);
        w->protocol_name = dup_str(g->protocol_name);
        w->assignment = shared_ref(m->assignment);
        w->assignment_len = m->assignment_len;
        w->error = KERR_NONE;
        finish(gs, w);
        schedule_heartbeat(m, now, m->session_timeout_ms);
        break;
    default:
        sync_error(gs, w, KERR_COORDINATOR_NOT_AVAILABLE);
        break;
    }
    settle(gs, g, now);
}

/* ---- Heartbeat ---- */

int16_t group_heartbeat(groups_t *gs, const char *group_id, size_t len, const char *member_id,
                        const char *instance_id, int32_t generation, uint64_t now)
{
    now = clock_at(now);
    group_t *g = groups_find(gs, group_id, len);
    if (!g)
        return KERR_UNKNOWN_MEMBER_ID;
    settle(gs, g, now);
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    int16_t error = validate_member(g, member_id, instance_id);
    if (error)
        return error;
    if (generation != g->generation)
        return KERR_ILLEGAL_GENERATION;
    if (g->state == GROUP_EMPTY)
        return KERR_UNKNOWN_MEMBER_ID;
    group_member_t *m = group_member_find(g, member_id);
    schedule_heartbeat(m, now, m->session_timeout_ms);
    return g->state == GROUP_PREPARING_REBALANCE ? KERR_REBALANCE_IN_PROGRESS : KERR_NONE;
}

/* ---- LeaveGroup ---- */

static int16_t leave_one(groups_t *gs, group_t *g, const group_leaver_t *l, uint64_t now)
{
    group_member_t *m = NULL;
    if (l->member_id[0] == 0) {
        /* Removal of a static member by its instance id (the admin client). */
        m = l->instance_id ? static_member_find(g, l->instance_id) : NULL;
        if (!m)
            return KERR_UNKNOWN_MEMBER_ID;
    } else if (pending_index(g, l->member_id) >= 0) {
        pending_remove(gs, g, l->member_id);
        if (g->state == GROUP_PREPARING_REBALANCE)
            try_complete_join(gs, g, now);
        return KERR_NONE;
    } else {
        int16_t error = validate_member(g, l->member_id, l->instance_id);
        if (error)
            return error;
        m = group_member_find(g, l->member_id);
    }
    log_info("member %s has left group %s through LeaveGroup", m->member_id, g->id);
    remove_member_and_update(gs, g, m, now, "member left");
    return KERR_NONE;
}

int16_t group_leave(groups_t *gs, const char *group_id, size_t len, const group_leaver_t *leavers, int n,
                    int16_t *errors, uint64_t now)
{
    now = clock_at(now);
    group_t *g = groups_find(gs, group_id, len);
    if (g)
        settle(gs, g, now);
    if (g && g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    for (int i = 0; i < n; i++)
        errors[i] = g ? leave_one(gs, g, &leavers[i], now) : KERR_UNKNOWN_MEMBER_ID;
    if (g)
        settle(gs, g, now);
    return KERR_NONE;
}

/* ---- OffsetCommit's membership check ---- */

static int16_t validate_commit(const group_t *g, int32_t generation, const char *member_id, const char *instance_id)
{
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    /* No generation to an empty group: a consumer that assigns partitions
     * itself, or an admin tool. */
    if (generation < 0 && g->state == GROUP_EMPTY)
        return KERR_NONE;
    if (generation >= 0 || member_id[0] || instance_id) {
        int16_t error = validate_member(g, member_id, instance_id);
        if (error)
            return error;
        return generation != g->generation ? KERR_ILLEGAL_GENERATION : KERR_NONE;
    }
    /* Only members commit for a group that has them. */
    return KERR_UNKNOWN_MEMBER_ID;
}

int16_t group_commit_check(groups_t *gs, const char *group_id, size_t len, int32_t generation,
                           const char *member_id, const char *instance_id, uint64_t now, group_t **out)
{
    now = clock_at(now);
    *out = NULL;
    group_t *g = groups_find(gs, group_id, len);
    if (!g) {
        if (generation >= 0)
            return KERR_ILLEGAL_GENERATION;   /* a generation of a group we do not hold */
        if (!(g = groups_create(gs, group_id, len, now)))
            return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    settle(gs, g, now);
    int16_t error = validate_commit(g, generation, member_id, instance_id);
    if (error)
        return error;
    switch (g->state) {
    case GROUP_EMPTY:
        break;
    case GROUP_STABLE:
    case GROUP_PREPARING_REBALANCE: {
        /* A commit is a sign of life, as a heartbeat is. */
        group_member_t *m = group_member_find(g, member_id);
        if (m)
            schedule_heartbeat(m, now, m->session_timeout_ms);
        break;
    }
    case GROUP_COMPLETING_REBALANCE:
        return KERR_REBALANCE_IN_PROGRESS;
    default:
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    *out = g;
    return KERR_NONE;
}

/* ---- DeleteGroups ---- */

int16_t group_delete_begin(groups_t *gs, group_t *g, uint64_t now)
{
    settle(gs, g, clock_at(now));
    if (g->state == GROUP_DEAD || !group_exists(g))
        return KERR_GROUP_ID_NOT_FOUND;
    if (g->state != GROUP_EMPTY)
        return KERR_NON_EMPTY_GROUP;
    while (g->npending > 0)
        pending_remove_at(gs, g, g->npending - 1);
    state_to(g, GROUP_DEAD);
    log_info("group %s is being deleted", g->id);
    return KERR_NONE;
}

/* ---- offsets cache ---- */

static int offset_cmp(const char *topic, int32_t partition, const group_offset_t *o)
{
    int c = strcmp(topic, o->topic);
    return c ? c : (partition < o->partition ? -1 : partition > o->partition);
}

static int offset_index(const group_t *g, const char *topic, int32_t partition, int *insert_at)
{
    int lo = 0, hi = g->noffsets;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = offset_cmp(topic, partition, g->offsets[mid]);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (insert_at)
        *insert_at = lo;
    return -1;
}

group_offset_t *group_offset_find(const group_t *g, const char *topic, int32_t partition)
{
    int i = offset_index(g, topic, partition, NULL);
    return i < 0 ? NULL : g->offsets[i];
}

group_offset_t *group_offset_get(group_t *g, const char *topic, int32_t partition)
{
    int at = 0;
    int i = offset_index(g, topic, partition, &at);
    if (i >= 0)
        return g->offsets[i];
    if (g->noffsets >= GROUP_OFFSETS_MAX)
        return NULL;
    group_offset_t *o = xcalloc(1, sizeof(*o));
    o->topic = dup_str(topic);
    o->partition = partition;
    o->offset = -1;
    o->leader_epoch = -1;
    g->offsets = xrealloc(g->offsets, sizeof(*g->offsets) * (size_t)(g->noffsets + 1));
    memmove(&g->offsets[at + 1], &g->offsets[at], sizeof(*g->offsets) * (size_t)(g->noffsets - at));
    g->offsets[at] = o;
    g->noffsets++;
    return o;
}

void group_offset_store(group_offset_t *o, int64_t offset, int32_t leader_epoch, const char *metadata)
{
    o->present = 1;
    o->offset = offset;
    o->leader_epoch = leader_epoch;
    free(o->metadata);
    o->metadata = dup_str(metadata ? metadata : "");
}

void group_offset_forget(group_offset_t *o)
{
    o->present = 0;
    o->offset = -1;
    o->leader_epoch = -1;
    free(o->metadata);
    o->metadata = NULL;
}

int group_add_load_waiter(group_t *g, uint64_t conn_id, uint64_t request_id)
{
    for (int i = 0; i < g->nload_waiters; i++)
        if (g->load_waiters[i].conn_id == conn_id && g->load_waiters[i].request_id == request_id)
            return 0;
    g->load_waiters = xrealloc(g->load_waiters, sizeof(*g->load_waiters) * (size_t)(g->nload_waiters + 1));
    g->load_waiters[g->nload_waiters++] = (group_wake_t){conn_id, request_id};
    return 0;
}

void group_wake_load_waiters(groups_t *gs, group_t *g)
{
    int n = g->nload_waiters;
    group_wake_t *ws = g->load_waiters;
    g->load_waiters = NULL;
    g->nload_waiters = 0;
    for (int i = 0; i < n; i++)
        if (gs->wake)
            gs->wake(gs->wake_arg, ws[i].conn_id, ws[i].request_id);
    free(ws);
}
