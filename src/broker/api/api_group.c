/* api_group.c -- the group coordinator's membership APIs: FindCoordinator,
 * JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups,
 * around the state machine of group.c (committed offsets are in
 * group_offsets.c).
 *
 * Placement: there is no __consumer_offsets topic to lead, so a group's
 * coordinator is chosen as Kafka chooses its offsets partition, over the
 * live brokers instead: Utils.abs(groupId.hashCode) % n, n the live brokers
 * sorted by id. Every broker computes the same answer from the same view;
 * one asked about a group it does not coordinate answers NOT_COORDINATOR,
 * and when the view changes, groups that moved are dropped here.
 *
 * Membership is kept in memory only (as Kafka keeps it, minus the log it
 * writes to __consumer_offsets): after a coordinator change or restart
 * members get UNKNOWN_MEMBER_ID and join again; committed offsets are in
 * the coordinator and survive. */
#define _GNU_SOURCE
#include "broker/group/group_service.h"
#include "api_util.h"
#include "broker/coord/coord_data.h"
#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LIST_TIMEOUT_MS 10000
#define GROUP_MEMBERS_CAP 10000   /* group.max.size is clamped to this */

/* ---- the service: timers and wake-ups ---- */

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

void group_service_touched(group_service_t *s, const group_t *g)
{
    if (g)
        arm_tick(s, group_next_deadline(g));
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

void group_service_wake(void *arg, uint64_t conn_id, uint64_t request_id)
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
    };
    s->b = b;
    s->groups = groups_new(&cfg, group_service_wake, s);
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

/* The live broker that coordinates the group, NULL when there is none we
 * could name (not registered ourselves: our view may be stale). */
static const broker_node_t *coordinator_of(const broker_t *b, const char *id, size_t len)
{
    if (!b->registered || b->nbrokers == 0)
        return NULL;
    return &b->brokers[group_coordinator_index(id, len, b->nbrokers)];
}

int16_t group_owner_check(broker_t *b, const char *group_id, size_t len)
{
    const broker_node_t *n = coordinator_of(b, group_id, len);
    if (!n)
        return GERR_COORDINATOR_NOT_AVAILABLE;
    return n->id == b->cfg.broker_id ? GERR_NONE : GERR_NOT_COORDINATOR;
}

int16_t group_id_check(const kafka_value_t *id, int allow_empty)
{
    if (id->is_null || (id->n == 0 && !allow_empty) || id->n > GROUP_ID_MAX || strlen(id->u.s) != id->n)
        return GERR_INVALID_GROUP_ID;
    return GERR_NONE;
}

void group_service_view_changed(broker_t *b)
{
    group_service_t *s = b->gsvc;
    if (!s)
        return;
    for (int i = groups_count(s->groups) - 1; i >= 0; i--) {
        group_t *g = groups_at(s->groups, i);
        if (group_owner_check(b, g->id, g->id_len) != GERR_NONE)
            groups_unload(s->groups, g, GERR_NOT_COORDINATOR);
    }
}

/* ---- FindCoordinator ---- */

typedef struct {
    int16_t error;
    const char *message;
    const broker_node_t *node;
} coordinator_answer_t;

static coordinator_answer_t find_one(broker_t *b, int8_t key_type, const kafka_value_t *key)
{
    coordinator_answer_t a = {0};
    if (key_type == 1) {
        /* No transaction coordinator, as InitProducerId refuses
         * transactional ids: fail fast rather than retry forever. */
        a.error = GERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        a.message = "transactions are not supported by this broker";
    } else if (key_type != 0) {
        a.error = GERR_INVALID_REQUEST;
        a.message = "unknown coordinator key type";
    } else if (!(a.node = coordinator_of(b, key->u.s, key->n))) {
        a.error = GERR_COORDINATOR_NOT_AVAILABLE;
        a.message = "no live broker known yet";
    }
    return a;
}

static void set_node(kafka_arena_t *ra, kafka_value_t *out, const coordinator_answer_t *a)
{
    kv_set_int(out, "ErrorCode", a->error);
    kv_set_str(ra, out, "ErrorMessage", a->message);
    kv_set_int(out, "NodeId", a->node ? a->node->id : -1);
    kv_set_str(ra, out, "Host", a->node ? a->node->ep.host : "");
    kv_set_int(out, "Port", a->node ? a->node->ep.port : -1);
}

req_status_t api_find_coordinator(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    int8_t key_type = (int8_t)kv_int(req->body, "KeyType");
    if (req->api_version < 4) {
        coordinator_answer_t a = find_one(b, key_type, kv_get(req->body, "Key"));
        set_node(ra, resp, &a);
        return api_answer(c, req, resp);
    }
    /* KIP-699: a batch of keys of one type. */
    const kafka_value_t *keys = kv_get(req->body, "CoordinatorKeys");
    kafka_value_t *out = kv_set_array(ra, resp, "Coordinators", keys->n);
    if (!out)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < keys->n; i++) {
        coordinator_answer_t a = find_one(b, key_type, kv_at(keys, i));
        kv_set_str(ra, kv_at(out, i), "Key", kv_at(keys, i)->u.s);
        set_node(ra, kv_at(out, i), &a);
    }
    return api_answer(c, req, resp);
}

/* ---- waiting JoinGroup / SyncGroup ---- */

static void waiter_free(void *w)
{
    group_waiter_release(w);
}

/* Keeps w as the request's state until the group answers it. */
static req_status_t park_request(broker_request_t *req, group_waiter_t *w)
{
    req->state = w;
    req->state_free = waiter_free;
    return REQ_WAIT;
}

/* ---- JoinGroup ---- */

/* The member's protocols from the request, bounded; NULL (error set) when
 * they are too many or too large. */
static group_protocol_t *join_protocols(const kafka_value_t *list, kafka_arena_t *ra, int16_t *error)
{
    uint64_t bytes = 0;
    group_protocol_t *ps = kafka_arena_alloc(ra, sizeof(*ps) * (list->n ? list->n : 1));
    if (!ps || list->n > GROUP_PROTOCOLS_MAX) {
        *error = GERR_INVALID_REQUEST;
        return NULL;
    }
    for (uint32_t i = 0; i < list->n; i++) {
        const kafka_value_t *md = kv_get(kv_at(list, i), "Metadata");
        ps[i].name = (char *)kv_str(kv_at(list, i), "Name");
        ps[i].metadata = (uint8_t *)md->u.b;
        ps[i].len = md->n;
        bytes += md->n;
    }
    if (bytes > GROUP_MEMBER_METADATA_MAX) {
        *error = GERR_INVALID_REQUEST;
        return NULL;
    }
    return ps;
}

/* JoinGroupResponse's version rules for the protocol name: "" before v7,
 * null instead of "" from v7. */
static const char *protocol_name_for(int16_t version, const char *name)
{
    if (version < 7)
        return name ? name : "";
    return name && name[0] ? name : NULL;
}

static req_status_t join_answer(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, const group_waiter_t *w)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    kv_set_int(resp, "ErrorCode", w->error);
    kv_set_int(resp, "GenerationId", w->generation);
    kv_set_str(ra, resp, "ProtocolType", w->protocol_type);
    kv_set_str(ra, resp, "ProtocolName", protocol_name_for(req->api_version, w->protocol_name));
    kv_set_str(ra, resp, "Leader", w->leader ? w->leader : "");
    kv_set_int(resp, "SkipAssignment", w->skip_assignment);
    kv_set_str(ra, resp, "MemberId", w->member_id ? w->member_id : "");
    kafka_value_t *members = kv_set_array(ra, resp, "Members", (uint32_t)w->nmembers);
    if (!members)
        return REQ_CLOSE;
    for (int i = 0; i < w->nmembers; i++) {
        kafka_value_t *m = kv_at(members, (uint32_t)i);
        kv_set_str(ra, m, "MemberId", w->members[i].member_id);
        kv_set_str(ra, m, "GroupInstanceId", w->members[i].instance_id);
        kv_set_bytes(m, "Metadata", w->members[i].metadata ? w->members[i].metadata : (const uint8_t *)"",
                     w->members[i].len);
    }
    return api_answer(c, req, resp);
}

/* An error decided before the group is involved. */
static req_status_t join_refuse(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, int16_t error)
{
    group_waiter_t w = {.error = error, .generation = -1, .member_id = (char *)kv_str(req->body, "MemberId")};
    return join_answer(c, req, ra, &w);
}

static void client_host(const conn_t *c, char *out, size_t n)
{
    /* Kafka prints the client's InetAddress: "/127.0.0.1". */
    snprintf(out, n, "/%s", c->ip);
}

req_status_t api_join_group(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    group_waiter_t *w = req->state;
    if (w)
        return w->done ? join_answer(c, req, ra, w) : REQ_WAIT;
    const kafka_value_t *id = kv_get(req->body, "GroupId");
    int16_t error = group_id_check(id, 0);
    if (!error)
        error = group_owner_check(b, id->u.s, id->n);
    group_protocol_t *ps = error ? NULL : join_protocols(kv_get(req->body, "Protocols"), ra, &error);
    if (error)
        return join_refuse(c, req, ra, error);
    char host[80];
    client_host(c, host, sizeof(host));
    int32_t session = (int32_t)kv_int(req->body, "SessionTimeoutMs");
    const char *instance = kv_str(req->body, "GroupInstanceId");
    group_join_t p = {
        .group_id = id->u.s, .group_id_len = id->n,
        .member_id = kv_str(req->body, "MemberId"),
        .instance_id = instance,
        .require_known_member_id = req->api_version >= 4 && !instance,
        .supports_skip_assignment = req->api_version >= 9,
        .client_id = req->client_id ? req->client_id : "",
        .client_host = host,
        .session_timeout_ms = session,
        /* v0 has no rebalance timeout: the session timeout serves */
        .rebalance_timeout_ms = req->api_version >= 1 ? (int32_t)kv_int(req->body, "RebalanceTimeoutMs") : session,
        .protocol_type = kv_str(req->body, "ProtocolType"),
        .protocols = ps,
        .nprotocols = (int)kv_get(req->body, "Protocols")->n,
    };
    w = group_waiter_new(GROUP_WAIT_JOIN, c->id, req->id);
    group_join(b->gsvc->groups, &p, loop_now_ms(b->loop), w);
    group_service_touched(b->gsvc, groups_find(b->gsvc->groups, id->u.s, id->n));
    if (!w->done)
        return park_request(req, w);
    req_status_t st = join_answer(c, req, ra, w);
    group_waiter_release(w);
    return st;
}

/* ---- SyncGroup ---- */

static req_status_t sync_answer(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, const group_waiter_t *w)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    kv_set_int(resp, "ErrorCode", w->error);
    kv_set_str(ra, resp, "ProtocolType", w->error ? NULL : w->protocol_type);
    kv_set_str(ra, resp, "ProtocolName", w->error ? NULL : w->protocol_name);
    kv_set_bytes(resp, "Assignment", w->assignment ? w->assignment : (const uint8_t *)"",
                 w->error ? 0 : w->assignment_len);
    return api_answer(c, req, resp);
}

static group_assignment_t *sync_assignments(const kafka_value_t *list, kafka_arena_t *ra)
{
    group_assignment_t *as = kafka_arena_alloc(ra, sizeof(*as) * (list->n ? list->n : 1));
    for (uint32_t i = 0; as && i < list->n; i++) {
        const kafka_value_t *a = kv_get(kv_at(list, i), "Assignment");
        as[i].member_id = kv_str(kv_at(list, i), "MemberId");
        as[i].assignment = a->u.b;
        as[i].len = a->n;
    }
    return as;
}

req_status_t api_sync_group(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    group_waiter_t *w = req->state;
    if (w)
        return w->done ? sync_answer(c, req, ra, w) : REQ_WAIT;
    const kafka_value_t *id = kv_get(req->body, "GroupId");
    const char *type = kv_str(req->body, "ProtocolType"), *name = kv_str(req->body, "ProtocolName");
    group_waiter_t refused = {0};
    refused.error = group_id_check(id, 0);
    /* v5 made the protocol type and name mandatory (KIP-559). */
    if (!refused.error && req->api_version >= 5 && (!type || !name))
        refused.error = GERR_INCONSISTENT_GROUP_PROTOCOL;
    if (!refused.error)
        refused.error = group_owner_check(b, id->u.s, id->n);
    if (refused.error)
        return sync_answer(c, req, ra, &refused);
    const kafka_value_t *list = kv_get(req->body, "Assignments");
    group_assignment_t *as = sync_assignments(list, ra);
    if (!as)
        return REQ_CLOSE;
    group_sync_t p = {
        .group_id = id->u.s, .group_id_len = id->n,
        .generation = (int32_t)kv_int(req->body, "GenerationId"),
        .member_id = kv_str(req->body, "MemberId"),
        .instance_id = kv_str(req->body, "GroupInstanceId"),
        .protocol_type = type, .protocol_name = name,
        .assignments = as, .nassignments = (int)list->n,
    };
    w = group_waiter_new(GROUP_WAIT_SYNC, c->id, req->id);
    group_sync(b->gsvc->groups, &p, loop_now_ms(b->loop), w);
    group_service_touched(b->gsvc, groups_find(b->gsvc->groups, id->u.s, id->n));
    if (!w->done)
        return park_request(req, w);
    req_status_t st = sync_answer(c, req, ra, w);
    group_waiter_release(w);
    return st;
}

/* ---- Heartbeat ---- */

req_status_t api_heartbeat(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    const kafka_value_t *id = kv_get(req->body, "GroupId");
    int16_t error = group_id_check(id, 0);
    if (!error)
        error = group_owner_check(b, id->u.s, id->n);
    if (!error) {
        error = group_heartbeat(b->gsvc->groups, id->u.s, id->n, kv_str(req->body, "MemberId"),
                                kv_str(req->body, "GroupInstanceId"), (int32_t)kv_int(req->body, "GenerationId"),
                                loop_now_ms(b->loop));
        group_service_touched(b->gsvc, groups_find(b->gsvc->groups, id->u.s, id->n));
    }
    kv_set_int(resp, "ErrorCode", error);
    return api_answer(c, req, resp);
}

/* ---- LeaveGroup ---- */

/* v0-2 name one member; v3+ a batch (KIP-345), possibly by instance id. */
static group_leaver_t *leavers_of(const broker_request_t *req, kafka_arena_t *ra, int *n)
{
    if (req->api_version < 3) {
        group_leaver_t *one = kafka_arena_alloc(ra, sizeof(*one));
        if (one)
            one->member_id = kv_str(req->body, "MemberId");
        *n = 1;
        return one;
    }
    const kafka_value_t *ms = kv_get(req->body, "Members");
    group_leaver_t *ls = kafka_arena_alloc(ra, sizeof(*ls) * (ms->n ? ms->n : 1));
    for (uint32_t i = 0; ls && i < ms->n; i++) {
        ls[i].member_id = kv_str(kv_at(ms, i), "MemberId");
        ls[i].instance_id = kv_str(kv_at(ms, i), "GroupInstanceId");
    }
    *n = (int)ms->n;
    return ls;
}

req_status_t api_leave_group(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    int n = 0;
    group_leaver_t *ls = leavers_of(req, ra, &n);
    int16_t *errors = kafka_arena_alloc(ra, sizeof(*errors) * (size_t)(n ? n : 1));
    if (!resp || !ls || !errors)
        return REQ_CLOSE;
    const kafka_value_t *id = kv_get(req->body, "GroupId");
    int16_t error = group_id_check(id, 0);
    if (!error)
        error = group_owner_check(b, id->u.s, id->n);
    if (!error) {
        error = group_leave(b->gsvc->groups, id->u.s, id->n, ls, n, errors, loop_now_ms(b->loop));
        group_service_touched(b->gsvc, groups_find(b->gsvc->groups, id->u.s, id->n));
    }
    if (req->api_version < 3) {
        /* One member: its error is the answer's. */
        kv_set_int(resp, "ErrorCode", error ? error : errors[0]);
        return api_answer(c, req, resp);
    }
    kv_set_int(resp, "ErrorCode", error);
    kafka_value_t *out = kv_set_array(ra, resp, "Members", error ? 0u : (uint32_t)n);
    if (!out)
        return REQ_CLOSE;
    for (int i = 0; !error && i < n; i++) {
        kv_set_str(ra, kv_at(out, (uint32_t)i), "MemberId", ls[i].member_id);
        kv_set_str(ra, kv_at(out, (uint32_t)i), "GroupInstanceId", ls[i].instance_id);
        kv_set_int(kv_at(out, (uint32_t)i), "ErrorCode", errors[i]);
    }
    return api_answer(c, req, resp);
}

/* ---- DescribeGroups ---- */

static int describe_member(kafka_arena_t *ra, kafka_value_t *out, const group_t *g, const group_member_t *m)
{
    kv_set_str(ra, out, "MemberId", m->member_id);
    kv_set_str(ra, out, "GroupInstanceId", m->instance_id);
    kv_set_str(ra, out, "ClientId", m->client_id);
    kv_set_str(ra, out, "ClientHost", m->client_host);
    /* Metadata and assignment only once the group is Stable, as Kafka. */
    const group_protocol_t *p = g->state == GROUP_STABLE ? group_member_protocol(m, g->protocol_name) : NULL;
    kv_set_bytes(out, "MemberMetadata", p ? p->metadata : (const uint8_t *)"", p ? p->len : 0);
    int stable = g->state == GROUP_STABLE && m->assignment;
    kv_set_bytes(out, "MemberAssignment", stable ? m->assignment : (const uint8_t *)"",
                 stable ? m->assignment_len : 0);
    return 0;
}

static int describe_group(kafka_arena_t *ra, kafka_value_t *out, const group_t *g)
{
    int exists = g && group_exists(g);
    kv_set_str(ra, out, "GroupState", group_state_name(exists ? g->state : GROUP_DEAD));
    if (!exists)
        return 0;
    kv_set_str(ra, out, "ProtocolType", g->protocol_type ? g->protocol_type : "");
    kv_set_str(ra, out, "ProtocolData", g->state == GROUP_STABLE && g->protocol_name ? g->protocol_name : "");
    kafka_value_t *ms = kv_set_array(ra, out, "Members", (uint32_t)g->nmembers);
    if (!ms)
        return -1;
    for (int i = 0; i < g->nmembers; i++)
        describe_member(ra, kv_at(ms, (uint32_t)i), g, g->members[i]);
    return 0;
}

/* A group this coordinator holds no state for may still have committed
 * offsets (Kafka would have loaded it: Empty, not Dead): read them first.
 * 1 when the request must wait for the read. A request that waited once
 * and whose read failed describes what is known. */
static int describe_needs_read(group_service_t *s, const broker_request_t *req, const conn_t *c, const char *id,
                               size_t len)
{
    group_t *g = groups_find(s->groups, id, len);
    if (!g)
        g = groups_create(s->groups, id, len, loop_now_ms(s->b->loop));
    if (!g || group_exists(g) || g->offsets_state == 2 || req->timed_out || (req->state && g->offsets_state == 0))
        return 0;
    group_add_load_waiter(g, c->id, req->id);
    group_offsets_load(s, g);
    return g->offsets_state != 2;
}

static void no_free(void *arg)
{
    (void)arg;
}

req_status_t api_describe_groups(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    group_service_t *s = b->gsvc;
    const kafka_value_t *ids = kv_get(req->body, "Groups");
    int waiting = 0;
    for (uint32_t i = 0; i < ids->n; i++) {
        const kafka_value_t *id = kv_at(ids, i);
        if (!group_id_check(id, 1) && !group_owner_check(b, id->u.s, id->n))
            waiting |= describe_needs_read(s, req, c, id->u.s, id->n);
    }
    if (waiting) {
        static int waited;   /* the state only marks that the request waited */
        req->state = &waited;
        req->state_free = no_free;
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + LIST_TIMEOUT_MS;
        return REQ_WAIT;
    }
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? kv_set_array(ra, resp, "Groups", ids->n) : NULL;
    if (!out)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < ids->n; i++) {
        const kafka_value_t *id = kv_at(ids, i);
        kafka_value_t *o = kv_at(out, i);
        int16_t error = group_id_check(id, 1);
        if (!error)
            error = group_owner_check(b, id->u.s, id->n);
        kv_set_str(ra, o, "GroupId", id->u.s);
        kv_set_int(o, "ErrorCode", error);
        if (!error && describe_group(ra, o, groups_find(s->groups, id->u.s, id->n)) < 0)
            return REQ_CLOSE;
    }
    return api_answer(c, req, resp);
}

/* ---- ListGroups ---- */

/* The groups named under /consumers (read once per request): groups with
 * committed offsets this coordinator holds no state for are listed too. */
typedef struct {
    group_service_t *s;
    uint64_t conn_id, request_id;
    int done, orphaned;
    int16_t error;
    char **names;
    int nnames;
} list_read_t;

static void list_read_free(list_read_t *lr)
{
    for (int i = 0; i < lr->nnames; i++)
        free(lr->names[i]);
    free(lr->names);
    free(lr);
}

static void list_release(void *arg)
{
    list_read_t *lr = arg;
    if (lr->done)
        list_read_free(lr);
    else
        lr->orphaned = 1;
}

static void consumers_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    list_read_t *lr = arg;
    lr->done = 1;
    if (lr->orphaned) {
        list_read_free(lr);
        return;
    }
    if (res->rc == ZOK) {
        lr->names = calloc((size_t)(res->nchildren ? res->nchildren : 1), sizeof(char *));
        for (int i = 0; lr->names && i < res->nchildren; i++)
            if ((lr->names[lr->nnames] = strdup(res->children[i])))
                lr->nnames++;
    } else if (res->rc != ZNONODE) {
        lr->error = GERR_COORDINATOR_NOT_AVAILABLE;
    }
    group_service_wake(lr->s, lr->conn_id, lr->request_id);
}

static req_status_t list_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    list_read_t *lr = calloc(1, sizeof(*lr));
    if (!lr)
        return REQ_CLOSE;
    *lr = (list_read_t){.s = b->gsvc, .conn_id = c->id, .request_id = req->id};
    if (!b->coord || coord_children(b->coord, "/consumers", 0, consumers_listed, lr) < 0) {
        lr->done = 1;
        lr->error = GERR_COORDINATOR_NOT_AVAILABLE;
    }
    req->state = lr;
    req->state_free = list_release;
    req->deadline_ms = loop_now_ms(b->loop) + LIST_TIMEOUT_MS;
    return lr->done ? REQ_DONE : REQ_WAIT;
}

/* ListGroups v4's state filter and v5's type filter (every group here is a
 * "classic" one), both case-insensitive; empty filters match all. */
static int list_filter_match(const broker_request_t *req, const char *state)
{
    if (req->api_version >= 4) {
        const kafka_value_t *states = kv_get(req->body, "StatesFilter");
        int hit = states->n == 0;
        for (uint32_t i = 0; i < states->n && !hit; i++)
            hit = strcasecmp(kv_at(states, i)->u.s, state) == 0;
        if (!hit)
            return 0;
    }
    if (req->api_version >= 5) {
        const kafka_value_t *types = kv_get(req->body, "TypesFilter");
        int hit = types->n == 0;
        for (uint32_t i = 0; i < types->n && !hit; i++)
            hit = strcasecmp(kv_at(types, i)->u.s, "classic") == 0;
        if (!hit)
            return 0;
    }
    return 1;
}

typedef struct {
    const char *id;
    const char *protocol_type;
    const char *state;
} listed_t;

/* Our groups in memory, then the ones only the coordinator knows of. */
static listed_t *list_collect(broker_t *b, const list_read_t *lr, kafka_arena_t *ra, int *n)
{
    group_service_t *s = b->gsvc;
    int cap = groups_count(s->groups) + lr->nnames;
    listed_t *out = kafka_arena_alloc(ra, sizeof(*out) * (size_t)(cap ? cap : 1));
    char *decoded = kafka_arena_alloc(ra, GROUP_ID_MAX + 1);
    *n = 0;
    if (!out || !decoded)
        return NULL;
    for (int i = 0; i < groups_count(s->groups); i++) {
        const group_t *g = groups_at(s->groups, i);
        if (group_exists(g) && strlen(g->id) == g->id_len)
            out[(*n)++] = (listed_t){g->id, g->protocol_type ? g->protocol_type : "", group_state_name(g->state)};
    }
    for (int i = 0; i < lr->nnames; i++) {
        int len = coord_group_name_decode(lr->names[i], decoded, GROUP_ID_MAX + 1);
        if (len < 0 || strlen(decoded) != (size_t)len || group_owner_check(b, decoded, (size_t)len))
            continue;
        /* Held in memory: listed above if it exists; after a read of its
         * offsets, memory knows best. */
        const group_t *held = groups_find(s->groups, decoded, (size_t)len);
        if (held && (group_exists(held) || held->offsets_state == 2))
            continue;
        char *id = kafka_arena_alloc(ra, (size_t)len + 1);
        if (!id)
            return NULL;
        memcpy(id, decoded, (size_t)len + 1);
        out[(*n)++] = (listed_t){id, "", group_state_name(GROUP_EMPTY)};
    }
    return out;
}

req_status_t api_list_groups(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    if (!req->state && list_start(b, c, req) == REQ_WAIT)
        return REQ_WAIT;
    list_read_t *lr = req->state;
    if (!lr || (!lr->done && !req->timed_out))
        return lr ? REQ_WAIT : REQ_CLOSE;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    int n = 0;
    listed_t *all = resp ? list_collect(b, lr, ra, &n) : NULL;
    if (!all)
        return REQ_CLOSE;
    int16_t error = lr->done ? lr->error : GERR_COORDINATOR_NOT_AVAILABLE;
    /* Not (yet) in our own view of the live brokers: we cannot tell which
     * groups are ours. The client retries. */
    if (!b->registered || !cluster_broker(b, b->cfg.broker_id))
        error = GERR_COORDINATOR_NOT_AVAILABLE;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (list_filter_match(req, all[i].state))
            all[kept++] = all[i];
    kafka_value_t *out = kv_set_array(ra, resp, "Groups", (uint32_t)kept);
    if (!out)
        return REQ_CLOSE;
    kv_set_int(resp, "ErrorCode", error);
    for (int i = 0; i < kept; i++) {
        kafka_value_t *o = kv_at(out, (uint32_t)i);
        kv_set_str(ra, o, "GroupId", all[i].id);
        kv_set_str(ra, o, "ProtocolType", all[i].protocol_type);
        kv_set_str(ra, o, "GroupState", all[i].state);
        kv_set_str(ra, o, "GroupType", "classic");
    }
    return api_answer(c, req, resp);
}
