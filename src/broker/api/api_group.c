/* api_group.c -- the group coordinator's membership APIs: FindCoordinator,
 * JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups,
 * DeleteGroups.
 * They read the request, run the operation on the group service's groups
 * (broker/group/group_service.h, the state machine of group.h) and answer;
 * placement, timers and wake-ups are the service's, committed offsets its
 * store's (group_offsets.h). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/coord/coord_data.h"
#include "broker/group/group_offsets.h"
#include "broker/group/group_service.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LIST_TIMEOUT_MS 10000
/* Bytes of member metadata and assignments in one DescribeGroups answer
 * (the mark at which a connection's output holds back its reading): past
 * it, further groups are answered COORDINATOR_LOAD_IN_PROGRESS, which
 * clients retry by asking again for those groups alone. The first group
 * described is always whole, so any group can be described. */
#define DESCRIBE_BYTES_MAX (4u << 20)

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
        a.error = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        a.message = "transactions are not supported by this broker";
    } else if (key_type != 0) {
        a.error = KERR_INVALID_REQUEST;
        a.message = "unknown coordinator key type";
    } else if (!(a.node = group_coordinator_node(b, key->u.s, key->n))) {
        a.error = KERR_COORDINATOR_NOT_AVAILABLE;
        a.message = "no live broker known yet";
    }
    return a;
}

/* Where an answer goes: the top of the response before v4, each of its
 * Coordinators from v4 (KIP-699). */
typedef struct {
    kv_ref_t error, message, node_id, host, port;
} node_fields_t;

#define NODE_FIELDS(S) \
    {KV_REF(S, ErrorCode), KV_REF(S, ErrorMessage), KV_REF(S, NodeId), KV_REF(S, Host), KV_REF(S, Port)}
static const node_fields_t node_fields_v0 = NODE_FIELDS(FindCoordinatorResponse);
static const node_fields_t node_fields_v4 = NODE_FIELDS(Coordinator);

static void set_node(kafka_arena_t *ra, kafka_value_t *out, const node_fields_t *f, const coordinator_answer_t *a)
{
    KV_REF_SET_INT(out, f->error, a->error);
    KV_REF_SET_STR(ra, out, f->message, a->message);
    KV_REF_SET_INT(out, f->node_id, a->node ? a->node->id : -1);
    KV_REF_SET_STR(ra, out, f->host, a->node ? a->node->ep.host : "");
    KV_REF_SET_INT(out, f->port, a->node ? a->node->ep.port : -1);
}

req_status_t api_find_coordinator(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    int8_t key_type = (int8_t)KV_INT(req->body, FindCoordinatorRequest, KeyType);
    if (req->api_version < 4) {
        coordinator_answer_t a = find_one(b, key_type, KV_GET(req->body, FindCoordinatorRequest, Key));
        set_node(ra, resp, &node_fields_v0, &a);
        return api_answer(c, req, resp);
    }
    /* KIP-699: a batch of keys of one type. */
    const kafka_value_t *keys = KV_GET(req->body, FindCoordinatorRequest, CoordinatorKeys);
    kafka_value_t *out = KV_SET_ARRAY(ra, resp, FindCoordinatorResponse, Coordinators, keys->n);
    if (!out)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < keys->n; i++) {
        coordinator_answer_t a = find_one(b, key_type, kv_at(keys, i));
        KV_SET_STR(ra, kv_at(out, i), Coordinator, Key, kv_at(keys, i)->u.s);
        set_node(ra, kv_at(out, i), &node_fields_v4, &a);
    }
    return api_answer(c, req, resp);
}

/* ---- waiting JoinGroup / SyncGroup ---- */

static void waiter_free(void *w)
{
    group_waiter_release(w);
}

/* Keeps w as the request's state until the group answers it; the answer
 * is built from w alone, so the request's body is not kept. */
static req_status_t park_request(broker_request_t *req, group_waiter_t *w)
{
    req->state = w;
    req->state_free = waiter_free;
    req->state_only = 1;
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
        *error = KERR_INVALID_REQUEST;
        return NULL;
    }
    for (uint32_t i = 0; i < list->n; i++) {
        const kafka_value_t *md = KV_GET(kv_at(list, i), JoinGroupRequestProtocol, Metadata);
        ps[i].name = (char *)KV_STR(kv_at(list, i), JoinGroupRequestProtocol, Name);
        ps[i].metadata = (uint8_t *)md->u.b;
        ps[i].len = md->n;
        bytes += md->n;
    }
    if (bytes > GROUP_MEMBER_METADATA_MAX) {
        *error = KERR_INVALID_REQUEST;
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
    KV_SET_INT(resp, JoinGroupResponse, ErrorCode, w->error);
    KV_SET_INT(resp, JoinGroupResponse, GenerationId, w->generation);
    KV_SET_STR(ra, resp, JoinGroupResponse, ProtocolType, w->protocol_type);
    KV_SET_STR(ra, resp, JoinGroupResponse, ProtocolName, protocol_name_for(req->api_version, w->protocol_name));
    KV_SET_STR(ra, resp, JoinGroupResponse, Leader, w->leader ? w->leader : "");
    KV_SET_INT(resp, JoinGroupResponse, SkipAssignment, w->skip_assignment);
    KV_SET_STR(ra, resp, JoinGroupResponse, MemberId, w->member_id ? w->member_id : "");
    kafka_value_t *members = KV_SET_ARRAY(ra, resp, JoinGroupResponse, Members, (uint32_t)w->nmembers);
    if (!members)
        return REQ_CLOSE;
    for (int i = 0; i < w->nmembers; i++) {
        kafka_value_t *m = kv_at(members, (uint32_t)i);
        KV_SET_STR(ra, m, JoinGroupResponseMember, MemberId, w->members[i].member_id);
        KV_SET_STR(ra, m, JoinGroupResponseMember, GroupInstanceId, w->members[i].instance_id);
        const uint8_t *md = w->members[i].metadata ? w->members[i].metadata : (const uint8_t *)"";
        KV_SET_BYTES(m, JoinGroupResponseMember, Metadata, md, w->members[i].len);
    }
    return api_answer(c, req, resp);
}

/* An error decided before the group is involved. */
static req_status_t join_refuse(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, int16_t error)
{
    group_waiter_t w = {.error = error, .generation = -1,
                        .member_id = (char *)KV_STR(req->body, JoinGroupRequest, MemberId)};
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
    const kafka_value_t *id = KV_GET(req->body, JoinGroupRequest, GroupId);
    int16_t error = group_request_check(b, id, 0);
    group_protocol_t *ps = error ? NULL : join_protocols(KV_GET(req->body, JoinGroupRequest, Protocols), ra, &error);
    if (error)
        return join_refuse(c, req, ra, error);
    char host[80];
    client_host(c, host, sizeof(host));
    int32_t session = (int32_t)KV_INT(req->body, JoinGroupRequest, SessionTimeoutMs);
    const char *instance = KV_STR(req->body, JoinGroupRequest, GroupInstanceId);
    group_join_t p = {
        .group_id = id->u.s, .group_id_len = id->n,
        .member_id = KV_STR(req->body, JoinGroupRequest, MemberId),
        .instance_id = instance,
        .require_known_member_id = req->api_version >= 4 && !instance,
        .supports_skip_assignment = req->api_version >= 9,
        .client_id = req->client_id ? req->client_id : "",
        .client_host = host,
        .session_timeout_ms = session,
        /* v0 has no rebalance timeout: the session timeout serves */
        .rebalance_timeout_ms =
            req->api_version >= 1 ? (int32_t)KV_INT(req->body, JoinGroupRequest, RebalanceTimeoutMs) : session,
        .protocol_type = KV_STR(req->body, JoinGroupRequest, ProtocolType),
        .protocols = ps,
        .nprotocols = (int)KV_GET(req->body, JoinGroupRequest, Protocols)->n,
    };
    w = group_waiter_new(GROUP_WAIT_JOIN, c->id, req->id);
    group_join(group_service_groups(b), &p, loop_now_ms(b->loop), w);
    group_service_touched(b, groups_find(group_service_groups(b), id->u.s, id->n));
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
    KV_SET_INT(resp, SyncGroupResponse, ErrorCode, w->error);
    KV_SET_STR(ra, resp, SyncGroupResponse, ProtocolType, w->error ? NULL : w->protocol_type);
    KV_SET_STR(ra, resp, SyncGroupResponse, ProtocolName, w->error ? NULL : w->protocol_name);
    KV_SET_BYTES(resp, SyncGroupResponse, Assignment, w->assignment ? w->assignment : (const uint8_t *)"",
                 w->error ? 0 : w->assignment_len);
    return api_answer(c, req, resp);
}

static group_assignment_t *sync_assignments(const kafka_value_t *list, kafka_arena_t *ra)
{
    group_assignment_t *as = kafka_arena_alloc(ra, sizeof(*as) * (list->n ? list->n : 1));
    for (uint32_t i = 0; as && i < list->n; i++) {
        const kafka_value_t *a = KV_GET(kv_at(list, i), SyncGroupRequestAssignment, Assignment);
        as[i].member_id = KV_STR(kv_at(list, i), SyncGroupRequestAssignment, MemberId);
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
    const kafka_value_t *id = KV_GET(req->body, SyncGroupRequest, GroupId);
    const char *type = KV_STR(req->body, SyncGroupRequest, ProtocolType);
    const char *name = KV_STR(req->body, SyncGroupRequest, ProtocolName);
    group_waiter_t refused = {0};
    refused.error = group_id_check(id, 0);
    /* v5 made the protocol type and name mandatory (KIP-559). */
    if (!refused.error && req->api_version >= 5 && (!type || !name))
        refused.error = KERR_INCONSISTENT_GROUP_PROTOCOL;
    if (!refused.error)
        refused.error = group_owner_check(b, id->u.s, id->n);
    if (refused.error)
        return sync_answer(c, req, ra, &refused);
    const kafka_value_t *list = KV_GET(req->body, SyncGroupRequest, Assignments);
    group_assignment_t *as = sync_assignments(list, ra);
    if (!as)
        return REQ_CLOSE;
    group_sync_t p = {
        .group_id = id->u.s, .group_id_len = id->n,
        .generation = (int32_t)KV_INT(req->body, SyncGroupRequest, GenerationId),
        .member_id = KV_STR(req->body, SyncGroupRequest, MemberId),
        .instance_id = KV_STR(req->body, SyncGroupRequest, GroupInstanceId),
        .protocol_type = type, .protocol_name = name,
        .assignments = as, .nassignments = (int)list->n,
    };
    w = group_waiter_new(GROUP_WAIT_SYNC, c->id, req->id);
    group_sync(group_service_groups(b), &p, loop_now_ms(b->loop), w);
    group_service_touched(b, groups_find(group_service_groups(b), id->u.s, id->n));
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
    const kafka_value_t *id = KV_GET(req->body, HeartbeatRequest, GroupId);
    int16_t error = group_request_check(b, id, 0);
    if (!error) {
        error = group_heartbeat(group_service_groups(b), id->u.s, id->n, KV_STR(req->body, HeartbeatRequest, MemberId),
                                KV_STR(req->body, HeartbeatRequest, GroupInstanceId),
                                (int32_t)KV_INT(req->body, HeartbeatRequest, GenerationId), loop_now_ms(b->loop));
        group_service_touched(b, groups_find(group_service_groups(b), id->u.s, id->n));
    }
    KV_SET_INT(resp, HeartbeatResponse, ErrorCode, error);
    return api_answer(c, req, resp);
}

/* ---- LeaveGroup ---- */

/* v0-2 name one member; v3+ a batch (KIP-345), possibly by instance id. */
static group_leaver_t *leavers_of(const broker_request_t *req, kafka_arena_t *ra, int *n)
{
    if (req->api_version < 3) {
        group_leaver_t *one = kafka_arena_alloc(ra, sizeof(*one));
        if (one)
            one->member_id = KV_STR(req->body, LeaveGroupRequest, MemberId);
        *n = 1;
        return one;
    }
    const kafka_value_t *ms = KV_GET(req->body, LeaveGroupRequest, Members);
    group_leaver_t *ls = kafka_arena_alloc(ra, sizeof(*ls) * (ms->n ? ms->n : 1));
    for (uint32_t i = 0; ls && i < ms->n; i++) {
        ls[i].member_id = KV_STR(kv_at(ms, i), MemberIdentity, MemberId);
        ls[i].instance_id = KV_STR(kv_at(ms, i), MemberIdentity, GroupInstanceId);
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
    const kafka_value_t *id = KV_GET(req->body, LeaveGroupRequest, GroupId);
    int16_t error = group_request_check(b, id, 0);
    if (!error) {
        error = group_leave(group_service_groups(b), id->u.s, id->n, ls, n, errors, loop_now_ms(b->loop));
        group_service_touched(b, groups_find(group_service_groups(b), id->u.s, id->n));
    }
    if (req->api_version < 3) {
        /* One member: its error is the answer's. */
        KV_SET_INT(resp, LeaveGroupResponse, ErrorCode, error ? error : errors[0]);
        return api_answer(c, req, resp);
    }
    KV_SET_INT(resp, LeaveGroupResponse, ErrorCode, error);
    kafka_value_t *out = KV_SET_ARRAY(ra, resp, LeaveGroupResponse, Members, error ? 0u : (uint32_t)n);
    if (!out)
        return REQ_CLOSE;
    for (int i = 0; !error && i < n; i++) {
        KV_SET_STR(ra, kv_at(out, (uint32_t)i), MemberResponse, MemberId, ls[i].member_id);
        KV_SET_STR(ra, kv_at(out, (uint32_t)i), MemberResponse, GroupInstanceId, ls[i].instance_id);
        KV_SET_INT(kv_at(out, (uint32_t)i), MemberResponse, ErrorCode, errors[i]);
    }
    return api_answer(c, req, resp);
}

/* ---- DescribeGroups ---- */

/* What a group's description carries of its members' bytes. */
static size_t describe_bytes(const group_t *g)
{
    size_t n = 0;
    for (int i = 0; g && i < g->nmembers; i++) {
        const group_member_t *m = g->members[i];
        const group_protocol_t *p = g->state == GROUP_STABLE ? group_member_protocol(m, g->protocol_name) : NULL;
        n += (p ? p->len : 0) + m->assignment_len + strlen(m->member_id) + strlen(m->client_id) +
             strlen(m->client_host) + (m->instance_id ? strlen(m->instance_id) : 0);
    }
    return n;
}

static int describe_member(kafka_arena_t *ra, kafka_value_t *out, const group_t *g, const group_member_t *m)
{
    KV_SET_STR(ra, out, DescribedGroupMember, MemberId, m->member_id);
    KV_SET_STR(ra, out, DescribedGroupMember, GroupInstanceId, m->instance_id);
    KV_SET_STR(ra, out, DescribedGroupMember, ClientId, m->client_id);
    KV_SET_STR(ra, out, DescribedGroupMember, ClientHost, m->client_host);
    /* Metadata and assignment only once the group is Stable, as Kafka. */
    const group_protocol_t *p = g->state == GROUP_STABLE ? group_member_protocol(m, g->protocol_name) : NULL;
    KV_SET_BYTES(out, DescribedGroupMember, MemberMetadata, p ? p->metadata : (const uint8_t *)"", p ? p->len : 0);
    int stable = g->state == GROUP_STABLE && m->assignment;
    KV_SET_BYTES(out, DescribedGroupMember, MemberAssignment, stable ? m->assignment : (const uint8_t *)"",
                 stable ? m->assignment_len : 0);
    return 0;
}

static int describe_group(kafka_arena_t *ra, kafka_value_t *out, const group_t *g)
{
    int exists = g && group_exists(g);
    KV_SET_STR(ra, out, DescribedGroup, GroupState, group_state_name(exists ? g->state : GROUP_DEAD));
    if (!exists)
        return 0;
    KV_SET_STR(ra, out, DescribedGroup, ProtocolType, g->protocol_type ? g->protocol_type : "");
    const char *data = g->state == GROUP_STABLE && g->protocol_name ? g->protocol_name : "";
    KV_SET_STR(ra, out, DescribedGroup, ProtocolData, data);
    kafka_value_t *ms = KV_SET_ARRAY(ra, out, DescribedGroup, Members, (uint32_t)g->nmembers);
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
static int describe_needs_read(broker_t *b, const broker_request_t *req, const conn_t *c, const char *id, size_t len)
{
    groups_t *gs = group_service_groups(b);
    group_t *g = groups_find(gs, id, len);
    if (!g)
        g = groups_create(gs, id, len, loop_now_ms(b->loop));
    if (!g || group_exists(g) || g->offsets_state == 2 || req->timed_out || (req->state && g->offsets_state == 0))
        return 0;
    group_offsets_load(b, g, c->id, req->id);
    return g->offsets_state != 2;
}

static void no_free(void *arg)
{
    (void)arg;
}

/* The state of a request that waits for groups' offsets to be read: it
 * only marks that the request waited. */
static int reads_waited;

/* Starts the reads the groups named ids[distinct[0..n)] need (those this
 * broker coordinates); 1 when the request must wait for them. */
static int groups_need_read(broker_t *b, const broker_request_t *req, const conn_t *c, const kafka_value_t *ids,
                            const uint32_t *distinct, uint32_t n)
{
    int waiting = 0;
    for (uint32_t i = 0; i < n; i++) {
        const kafka_value_t *id = kv_at(ids, distinct[i]);
        if (!group_request_check(b, id, 1))
            waiting |= describe_needs_read(b, req, c, id->u.s, id->n);
    }
    return waiting;
}

static req_status_t wait_for_reads(broker_t *b, broker_request_t *req)
{
    req->state = &reads_waited;
    req->state_free = no_free;
    if (!req->deadline_ms)
        req->deadline_ms = loop_now_ms(b->loop) + LIST_TIMEOUT_MS;
    return REQ_WAIT;
}

typedef struct {
    const char *s;
    uint32_t n, at;
} id_ref_t;

static int id_ref_cmp(const void *x, const void *y)
{
    const id_ref_t *a = x, *b = y;
    int c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);
    if (c == 0 && a->n != b->n)
        c = a->n < b->n ? -1 : 1;
    return c ? c : (a->at < b->at ? -1 : 1);
}

/* The requested ids, each once, in the order first asked: a group is
 * described once however often it is named (each repeat would otherwise
 * copy all its members' metadata into the answer). NULL out of arena. */
static uint32_t *distinct_ids(const kafka_value_t *ids, kafka_arena_t *ra, uint32_t *n)
{
    id_ref_t *refs = kafka_arena_alloc(ra, sizeof(*refs) * (ids->n ? ids->n : 1));
    uint8_t *first = kafka_arena_alloc(ra, ids->n ? ids->n : 1);
    uint32_t *out = kafka_arena_alloc(ra, sizeof(*out) * (ids->n ? ids->n : 1));
    if (!refs || !first || !out)
        return NULL;
    for (uint32_t i = 0; i < ids->n; i++) {
        const kafka_value_t *id = kv_at(ids, i);
        refs[i] = (id_ref_t){id->is_null ? "" : id->u.s, id->is_null ? 0 : id->n, i};
    }
    qsort(refs, ids->n, sizeof(*refs), id_ref_cmp);
    for (uint32_t i = 0; i < ids->n; i++)
        first[refs[i].at] = i == 0 || refs[i].n != refs[i - 1].n || memcmp(refs[i].s, refs[i - 1].s, refs[i].n) != 0;
    *n = 0;
    for (uint32_t i = 0; i < ids->n; i++)
        if (first[i])
            out[(*n)++] = i;
    return out;
}

/* One group's entry of the answer; *budget is what is left of
 * DESCRIBE_BYTES_MAX, and the first group described (*described 0) is
 * whole whatever its size. -1 out of arena. */
static int describe_one(broker_t *b, kafka_arena_t *ra, kafka_value_t *o, const kafka_value_t *id, size_t *budget,
                        int *described)
{
    int16_t error = group_request_check(b, id, 1);
    const group_t *g = error ? NULL : groups_find(group_service_groups(b), id->u.s, id->n);
    size_t bytes = describe_bytes(g);
    if (!error && *described && bytes > *budget)
        error = KERR_COORDINATOR_LOAD_IN_PROGRESS;
    KV_SET_STR(ra, o, DescribedGroup, GroupId, id->is_null ? "" : id->u.s);
    KV_SET_INT(o, DescribedGroup, ErrorCode, error);
    if (error)
        return 0;
    *budget = bytes < *budget ? *budget - bytes : 0;
    *described = 1;
    return describe_group(ra, o, g);
}

req_status_t api_describe_groups(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const kafka_value_t *ids = KV_GET(req->body, DescribeGroupsRequest, Groups);
    uint32_t n = 0;
    uint32_t *distinct = distinct_ids(ids, ra, &n);
    if (!distinct)
        return REQ_CLOSE;
    if (groups_need_read(b, req, c, ids, distinct, n))
        return wait_for_reads(b, req);
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? KV_SET_ARRAY(ra, resp, DescribeGroupsResponse, Groups, n) : NULL;
    if (!out)
        return REQ_CLOSE;
    size_t budget = DESCRIBE_BYTES_MAX;
    int described = 0;
    for (uint32_t i = 0; i < n; i++)
        if (describe_one(b, ra, kv_at(out, i), kv_at(ids, distinct[i]), &budget, &described) < 0)
            return REQ_CLOSE;
    return api_answer(c, req, resp);
}

/* ---- ListGroups ---- */

/* The groups named under /consumers are read once per request: groups with
 * committed offsets this coordinator holds no state for are listed too. */
static req_status_t list_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    group_names_t *gn = group_names_read(b, c->id, req->id);
    if (!gn)
        return REQ_CLOSE;
    req->state = gn;
    req->state_free = group_names_release;
    req->deadline_ms = loop_now_ms(b->loop) + LIST_TIMEOUT_MS;
    return gn->done ? REQ_DONE : REQ_WAIT;
}

/* ListGroups v4's state filter and v5's type filter (every group here is a
 * "classic" one), both case-insensitive; empty filters match all. */
static int list_filter_match(const broker_request_t *req, const char *state)
{
    if (req->api_version >= 4) {
        const kafka_value_t *states = KV_GET(req->body, ListGroupsRequest, StatesFilter);
        int hit = states->n == 0;
        for (uint32_t i = 0; i < states->n && !hit; i++)
            hit = strcasecmp(kv_at(states, i)->u.s, state) == 0;
        if (!hit)
            return 0;
    }
    if (req->api_version >= 5) {
        const kafka_value_t *types = KV_GET(req->body, ListGroupsRequest, TypesFilter);
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
static listed_t *list_collect(broker_t *b, const group_names_t *gn, kafka_arena_t *ra, int *n)
{
    groups_t *gs = group_service_groups(b);
    int cap = groups_count(gs) + gn->nnames;
    listed_t *out = kafka_arena_alloc(ra, sizeof(*out) * (size_t)(cap ? cap : 1));
    char *decoded = kafka_arena_alloc(ra, GROUP_ID_MAX + 1);
    *n = 0;
    if (!out || !decoded)
        return NULL;
    for (int i = 0; i < groups_count(gs); i++) {
        const group_t *g = groups_at(gs, i);
        if (group_exists(g) && strlen(g->id) == g->id_len)
            out[(*n)++] = (listed_t){g->id, g->protocol_type ? g->protocol_type : "", group_state_name(g->state)};
    }
    for (int i = 0; i < gn->nnames; i++) {
        int len = coord_group_name_decode(gn->names[i], decoded, GROUP_ID_MAX + 1);
        if (len < 0 || strlen(decoded) != (size_t)len || group_owner_check(b, decoded, (size_t)len))
            continue;
        /* Held in memory: listed above if it exists; after a read of its
         * offsets, memory knows best. */
        const group_t *held = groups_find(gs, decoded, (size_t)len);
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
    group_names_t *gn = req->state;
    if (!gn || (!gn->done && !req->timed_out))
        return gn ? REQ_WAIT : REQ_CLOSE;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    int n = 0;
    listed_t *all = resp ? list_collect(b, gn, ra, &n) : NULL;
    if (!all)
        return REQ_CLOSE;
    int16_t error = gn->done ? gn->error : KERR_COORDINATOR_NOT_AVAILABLE;
    /* Not (yet) in our own view of the live brokers: we cannot tell which
     * groups are ours. The client retries. */
    if (!b->registered || !cluster_broker(b, b->cfg.broker_id))
        error = KERR_COORDINATOR_NOT_AVAILABLE;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (list_filter_match(req, all[i].state))
            all[kept++] = all[i];
    kafka_value_t *out = KV_SET_ARRAY(ra, resp, ListGroupsResponse, Groups, (uint32_t)kept);
    if (!out)
        return REQ_CLOSE;
    KV_SET_INT(resp, ListGroupsResponse, ErrorCode, error);
    for (int i = 0; i < kept; i++) {
        kafka_value_t *o = kv_at(out, (uint32_t)i);
        KV_SET_STR(ra, o, ListedGroup, GroupId, all[i].id);
        KV_SET_STR(ra, o, ListedGroup, ProtocolType, all[i].protocol_type);
        KV_SET_STR(ra, o, ListedGroup, GroupState, all[i].state);
        KV_SET_STR(ra, o, ListedGroup, GroupType, "classic");
    }
    return api_answer(c, req, resp);
}

/* ---- DeleteGroups ---- */

/* One group's deletion as Kafka's GroupCoordinator.handleDeleteGroups
 * decides it: its error, or KERR_NONE with the group Dead and its offsets
 * being deleted as the batch's index-th item. Run once every group's
 * offsets were read (or the read failed: then whether it exists is not
 * known, and the client is told to retry). */
static int16_t delete_one(broker_t *b, group_commit_t *cm, int index, const kafka_value_t *id)
{
    int16_t error = group_request_check(b, id, 1);
    if (error)
        return error;
    groups_t *gs = group_service_groups(b);
    group_t *g = groups_find(gs, id->u.s, id->n);
    if (!g || (!group_exists(g) && g->offsets_state != 2))
        return KERR_COORDINATOR_NOT_AVAILABLE;
    error = group_delete_begin(gs, g, loop_now_ms(b->loop));
    return error ? error : group_offsets_delete(cm, index, g);
}

static req_status_t delete_start(broker_t *b, conn_t *c, broker_request_t *req, const kafka_value_t *ids,
                                 const uint32_t *distinct, uint32_t n)
{
    group_commit_t *cm = group_commit_new(b, (int)n, c->id, req->id);
    if (!cm)
        return REQ_CLOSE;
    req->state = cm;
    req->state_free = group_commit_release;
    for (uint32_t i = 0; i < n; i++) {
        int16_t error = delete_one(b, cm, (int)i, kv_at(ids, distinct[i]));
        if (error)
            cm->errors[i] = error;
    }
    if (cm->outstanding == 0)
        return REQ_DONE;
    req->deadline_ms = loop_now_ms(b->loop) + LIST_TIMEOUT_MS;
    return REQ_WAIT;
}

req_status_t api_delete_groups(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const kafka_value_t *ids = KV_GET(req->body, DeleteGroupsRequest, GroupsNames);
    uint32_t n = 0;
    uint32_t *distinct = distinct_ids(ids, ra, &n);
    if (!distinct)
        return REQ_CLOSE;
    if (!req->state || req->state == &reads_waited) {
        if (groups_need_read(b, req, c, ids, distinct, n))
            return wait_for_reads(b, req);
        req_status_t st = delete_start(b, c, req, ids, distinct, n);
        if (st != REQ_DONE)
            return st;
    }
    group_commit_t *cm = req->state;
    if (cm->outstanding > 0 && !req->timed_out)
        return REQ_WAIT;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? KV_SET_ARRAY(ra, resp, DeleteGroupsResponse, Results, n) : NULL;
    if (!out)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < n; i++) {
        const kafka_value_t *id = kv_at(ids, distinct[i]);
        int16_t error = cm->errors[i];
        KV_SET_STR(ra, kv_at(out, i), DeletableGroupResult, GroupId, id->is_null ? "" : id->u.s);
        /* A deletion still out at the deadline: the client asks again. */
        KV_SET_INT(kv_at(out, i), DeletableGroupResult, ErrorCode,
                   error == GROUP_COMMIT_PENDING ? KERR_COORDINATOR_NOT_AVAILABLE : error);
    }
    return api_answer(c, req, resp);
}
