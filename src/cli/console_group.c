/* console_group.c -- see console_group.h. */
#define _GNU_SOURCE
#include "console_group.h"
#include "console.h"
#include "base/clock.h"
#include "base/endian.h"
#include "broker/wire/kafka_errors.h"

#include <stdlib.h>
#include <string.h>

#define JOIN_VERSION 3        /* no MEMBER_ID_REQUIRED round (v4+) needed; every broker since 0.11 */
#define SYNC_VERSION 2
#define HEARTBEAT_VERSION 2
#define LEAVE_VERSION 2
#define PROTOCOL "range"
#define COORD_TIMEOUT_MS (CG_SESSION_TIMEOUT_MS + 15000)   /* a JoinGroup waits for the others */
#define JOIN_ATTEMPTS 20

/* ---- the consumer protocol's encodings ---- */

static void put_i16(buf_t *out, int16_t v)
{
    uint8_t b[2];
    be16_put(b, (uint16_t)v);
    buf_append(out, b, 2);
}

static void put_i32(buf_t *out, int32_t v)
{
    uint8_t b[4];
    be32_put(b, (uint32_t)v);
    buf_append(out, b, 4);
}

static void put_str(buf_t *out, const char *s)
{
    put_i16(out, (int16_t)strlen(s));
    buf_append(out, s, strlen(s));
}

void cg_subscription(buf_t *out, const char *topic)
{
    put_i16(out, 0);      /* version */
    put_i32(out, 1);      /* topics */
    put_str(out, topic);
    put_i32(out, -1);     /* user data: null */
}

int cg_subscribes(const uint8_t *p, size_t len, const char *topic)
{
    if (len < 6)
        return -1;
    int32_t n = (int32_t)be32_get(p + 2);
    size_t at = 6, tlen = strlen(topic);
    if (n < 0 || (size_t)n > (len - at) / 2)
        return -1;
    int found = 0;
    for (int32_t i = 0; i < n; i++) {
        if (len - at < 2)
            return -1;
        int16_t sl = (int16_t)be16_get(p + at);
        at += 2;
        if (sl < 0 || (size_t)sl > len - at)
            return -1;
        found |= (size_t)sl == tlen && memcmp(p + at, topic, tlen) == 0;
        at += (size_t)sl;
    }
    return found;
}

void cg_range(int i, int n, int32_t partitions, int32_t *first, int32_t *count)
{
    int32_t each = partitions / n, extra = partitions % n;
    *first = each * i + (i < extra ? i : extra);
    *count = each + (i < extra ? 1 : 0);
}

void cg_assignment(buf_t *out, const char *topic, int32_t first, int32_t count)
{
    put_i16(out, 0);
    put_i32(out, count ? 1 : 0);
    if (count) {
        put_str(out, topic);
        put_i32(out, count);
        for (int32_t k = 0; k < count; k++)
            put_i32(out, first + k);
    }
    put_i32(out, -1);
}

/* ---- the coordinator ---- */

static int find_coordinator(console_group_t *g, kafka_client_t *boot)
{
    uint64_t deadline = clock_mono_ms() + CONSOLE_TIMEOUT_MS;
    ga_broker_t node = {0};
    for (;;) {
        int16_t error = KERR_NONE;
        if (ga_find_coordinator(boot, g->group, &node, &error) < 0) {
            fprintf(stderr, "Error: cannot find the coordinator of group '%s': %s\n", g->group, boot->err);
            return -1;
        }
        if (!error)
            break;
        if ((error != KERR_COORDINATOR_NOT_AVAILABLE && error != KERR_NOT_COORDINATOR &&
             error != KERR_COORDINATOR_LOAD_IN_PROGRESS) ||
            clock_mono_ms() >= deadline) {
            fprintf(stderr, "Error: cannot find the coordinator of group '%s': %s\n", g->group, ga_error_text(error));
            return -1;
        }
        console_sleep_ms(200);
    }
    int rc = kafka_client_open(&g->coord, node.host, node.port, COORD_TIMEOUT_MS, g->client_id);
    if (rc < 0) {
        fprintf(stderr, "Error: cannot reach the coordinator of group '%s': %s\n", g->group, g->coord.err);
        kafka_client_close(&g->coord);
    }
    free(node.host);
    return rc;
}

/* The errors after which the coordinator is looked for again. */
static int coordinator_moved(int16_t error)
{
    return error == KERR_NOT_COORDINATOR || error == KERR_COORDINATOR_NOT_AVAILABLE ||
           error == KERR_COORDINATOR_LOAD_IN_PROGRESS;
}

static int set_member(console_group_t *g, const char *id)
{
    char *copy = strdup(id ? id : "");
    if (!copy)
        return -1;
    free(g->member_id);
    g->member_id = copy;
    return 0;
}

/* ---- joining ---- */

static kafka_value_t *join_request(kafka_arena_t *a, const console_group_t *g, const buf_t *subscription)
{
    kafka_value_t *body = KV_NEW(a, JoinGroupRequest);
    kafka_value_t *protos = body ? KV_SET_ARRAY(a, body, JoinGroupRequest, Protocols, 1) : NULL;
    if (!protos)
        return NULL;
    KV_SET_STR(a, body, JoinGroupRequest, GroupId, g->group);
    KV_SET_INT(body, JoinGroupRequest, SessionTimeoutMs, CG_SESSION_TIMEOUT_MS);
    KV_SET_INT(body, JoinGroupRequest, RebalanceTimeoutMs, CG_REBALANCE_TIMEOUT_MS);
    KV_SET_STR(a, body, JoinGroupRequest, MemberId, g->member_id);
    KV_SET_STR(a, body, JoinGroupRequest, ProtocolType, "consumer");
    KV_SET_STR(a, kv_at(protos, 0), JoinGroupRequestProtocol, Name, PROTOCOL);
    KV_SET_BYTES(kv_at(protos, 0), JoinGroupRequestProtocol, Metadata, subscription->data,
                 (uint32_t)subscription->len);
    return body;
}

typedef struct {
    const char *id;
    int subscribed;
} member_t;

static int member_cmp(const void *a, const void *b)
{
    return strcmp(((const member_t *)a)->id, ((const member_t *)b)->id);
}

/* bytes copied into the request's arena (a request's values point at
 * their bytes until it is sent). */
static const void *arena_copy(kafka_arena_t *a, const buf_t *b)
{
    void *p = kafka_arena_alloc(a, b->len ? b->len : 1);
    if (p && b->len)
        memcpy(p, b->data, b->len);
    return p;
}

/* As the leader: every member's assignment into the SyncGroup body. */
static int leader_assignments(kafka_arena_t *a, const console_group_t *g, const kafka_value_t *members,
                              kafka_value_t *sync, int32_t partitions)
{
    uint32_t n = members->n;
    if (n > CG_MEMBERS_MAX)
        return -1;
    member_t *m = calloc(n ? n : 1, sizeof(*m));
    kafka_value_t *arr = m ? KV_SET_ARRAY(a, sync, SyncGroupRequest, Assignments, n) : NULL;
    int subscribed = 0, rc = arr ? 0 : -1;
    for (uint32_t i = 0; arr && i < n; i++) {
        const kafka_value_t *mv = kv_at(members, i);
        const kafka_value_t *meta = KV_GET(mv, JoinGroupResponseMember, Metadata);
        const char *id = KV_STR(mv, JoinGroupResponseMember, MemberId);
        m[i] = (member_t){id ? id : "", !meta->is_null && cg_subscribes(meta->u.b, meta->n, g->topic) == 1};
        subscribed += m[i].subscribed;
    }
    if (arr)
        qsort(m, n, sizeof(*m), member_cmp);
    buf_t enc;
    buf_init(&enc);
    for (uint32_t i = 0, k = 0; rc == 0 && i < n; i++) {
        int32_t first = 0, count = 0;
        if (m[i].subscribed)
            cg_range((int)k++, subscribed, partitions, &first, &count);
        buf_clear(&enc);
        cg_assignment(&enc, g->topic, first, count);
        const void *bytes = arena_copy(a, &enc);
        kafka_value_t *av = kv_at(arr, i);
        KV_SET_STR(a, av, SyncGroupRequestAssignment, MemberId, m[i].id);
        KV_SET_BYTES(av, SyncGroupRequestAssignment, Assignment, bytes, (uint32_t)enc.len);
        rc = bytes ? 0 : -1;
    }
    buf_free(&enc);
    free(m);
    return rc;
}

/* This member's partitions of topic from its assignment. 0 or -1. */
static int take_assignment(console_group_t *g, const kafka_value_t *assignment)
{
    ga_partitions_t ps = {0};
    g->nassigned = 0;
    if (assignment->is_null || assignment->n == 0)
        return 0;   /* nothing assigned */
    if (ga_parse_assignment(assignment->u.b, assignment->n, &ps) < 0) {
        ga_partitions_free(&ps);
        fprintf(stderr, "Error: the assignment of group '%s' does not parse\n", g->group);
        return -1;
    }
    int32_t *v = realloc(g->assigned, sizeof(*v) * (size_t)(ps.n ? ps.n : 1));
    for (int i = 0; v && i < ps.n; i++)
        if (strcmp(ps.v[i].topic, g->topic) == 0)
            v[g->nassigned++] = ps.v[i].partition;
    if (v)
        g->assigned = v;
    ga_partitions_free(&ps);
    return v ? 0 : -1;
}

/* One SyncGroup of the generation joined. The group's error, or -1. */
static int sync_group(console_group_t *g, const kafka_value_t *joined, int32_t partitions)
{
    kafka_arena_t *a = &g->coord.request;
    kafka_value_t *body = KV_NEW(a, SyncGroupRequest);
    if (!body)
        return -1;
    KV_SET_STR(a, body, SyncGroupRequest, GroupId, g->group);
    KV_SET_INT(body, SyncGroupRequest, GenerationId, g->generation);
    KV_SET_STR(a, body, SyncGroupRequest, MemberId, g->member_id);
    const char *leader = KV_STR(joined, JoinGroupResponse, Leader);
    int is_leader = leader && strcmp(leader, g->member_id) == 0;
    if (is_leader &&
        leader_assignments(a, g, KV_GET(joined, JoinGroupResponse, Members), body, partitions) < 0)
        return -1;
    if (!is_leader && !KV_SET_ARRAY(a, body, SyncGroupRequest, Assignments, 0))
        return -1;
    const kafka_value_t *ans;
    if (kafka_client_call(&g->coord, KAFKA_API_SYNC_GROUP, SYNC_VERSION, body, &ans) < 0)
        return -1;
    int16_t error = (int16_t)KV_INT(ans, SyncGroupResponse, ErrorCode);
    if (error)
        return error;
    return take_assignment(g, KV_GET(ans, SyncGroupResponse, Assignment)) < 0 ? -1 : 0;
}

/* One JoinGroup and, when it gives a generation, its SyncGroup. 0 joined,
 * a Kafka error to try again after, -1 failed. */
static int join_once(console_group_t *g, int32_t partitions)
{
    buf_t sub;
    buf_init(&sub);
    cg_subscription(&sub, g->topic);
    const kafka_value_t *ans;
    int rc = kafka_client_call(&g->coord, KAFKA_API_JOIN_GROUP, JOIN_VERSION, join_request(&g->coord.request, g, &sub),
                               &ans);
    buf_free(&sub);
    if (rc < 0)
        return -1;
    int16_t error = (int16_t)KV_INT(ans, JoinGroupResponse, ErrorCode);
    const char *member = KV_STR(ans, JoinGroupResponse, MemberId);
    if (error == KERR_MEMBER_ID_REQUIRED || (!error && member && *member))
        if (set_member(g, member) < 0)
            return -1;
    if (error == KERR_UNKNOWN_MEMBER_ID && set_member(g, "") < 0)
        return -1;
    if (error)
        return error;
    g->generation = (int32_t)KV_INT(ans, JoinGroupResponse, GenerationId);
    return sync_group(g, ans, partitions);
}

int cg_join(console_group_t *g, kafka_client_t *boot, int32_t partitions)
{
    if (!g->member_id && set_member(g, "") < 0)
        return -1;
    for (int attempt = 0; attempt < JOIN_ATTEMPTS; attempt++) {
        if (g->coord.fd < 0 && find_coordinator(g, boot) < 0)
            return -1;
        int rc = join_once(g, partitions);
        if (rc == 0) {
            g->next_heartbeat = clock_mono_ms() + CG_HEARTBEAT_MS;
            g->next_commit = clock_mono_ms() + CG_COMMIT_MS;
            return 0;
        }
        if (rc < 0) {
            fprintf(stderr, "Warning: group '%s': %s\n", g->group,
                    g->coord.err[0] ? g->coord.err : "the coordinator's answer was refused");
            kafka_client_close(&g->coord);
        } else if (coordinator_moved((int16_t)rc)) {
            kafka_client_close(&g->coord);
        } else if (rc != KERR_MEMBER_ID_REQUIRED && rc != KERR_REBALANCE_IN_PROGRESS &&
                   rc != KERR_UNKNOWN_MEMBER_ID && rc != KERR_ILLEGAL_GENERATION) {
            fprintf(stderr, "Error: cannot join group '%s': %s\n", g->group, ga_error_text((int16_t)rc));
            return -1;
        }
        console_sleep_ms(rc == KERR_MEMBER_ID_REQUIRED ? 0 : 200);
    }
    fprintf(stderr, "Error: cannot join group '%s' after %d attempts\n", g->group, JOIN_ATTEMPTS);
    return -1;
}

/* ---- members' work ---- */

int cg_committed(console_group_t *g, int64_t *committed)
{
    ga_partitions_t ps = {0};
    int16_t error = KERR_NONE;
    int rc = ga_offset_fetch(&g->coord, g->group, &ps, &error);
    for (int i = 0; i < g->nassigned; i++) {
        const ga_partition_t *p = rc == 0 ? ga_partitions_find(&ps, g->topic, g->assigned[i]) : NULL;
        committed[i] = p ? p->committed : -1;
    }
    ga_partitions_free(&ps);
    if (rc < 0 || error) {
        fprintf(stderr, "Error: cannot read the offsets of group '%s': %s\n", g->group,
                rc < 0 ? g->coord.err : ga_error_text(error));
        return -1;
    }
    return 0;
}

int cg_heartbeat(console_group_t *g)
{
    if (clock_mono_ms() < g->next_heartbeat)
        return 0;
    if (g->coord.fd < 0)
        return 1;   /* joining again finds the coordinator again */
    kafka_arena_t *a = &g->coord.request;
    kafka_value_t *body = KV_NEW(a, HeartbeatRequest);
    if (!body)
        return -1;
    KV_SET_STR(a, body, HeartbeatRequest, GroupId, g->group);
    KV_SET_INT(body, HeartbeatRequest, GenerationId, g->generation);
    KV_SET_STR(a, body, HeartbeatRequest, MemberId, g->member_id);
    const kafka_value_t *ans;
    if (kafka_client_call(&g->coord, KAFKA_API_HEARTBEAT, HEARTBEAT_VERSION, body, &ans) < 0) {
        kafka_client_close(&g->coord);
        return 1;
    }
    g->next_heartbeat = clock_mono_ms() + CG_HEARTBEAT_MS;
    int16_t error = (int16_t)KV_INT(ans, HeartbeatResponse, ErrorCode);
    if (coordinator_moved(error))
        kafka_client_close(&g->coord);
    return error ? 1 : 0;
}

void cg_commit(console_group_t *g, const int64_t *next, int force)
{
    if ((!force && clock_mono_ms() < g->next_commit) || g->nassigned == 0 || g->coord.fd < 0)
        return;
    g->next_commit = clock_mono_ms() + CG_COMMIT_MS;
    ga_partitions_t ps = {0};
    int64_t *offsets = calloc((size_t)g->nassigned, sizeof(*offsets));
    for (int i = 0; offsets && i < g->nassigned; i++)
        if (!ga_partitions_get(&ps, g->topic, g->assigned[i]))
            break;
    for (int i = 0; offsets && ps.n == g->nassigned && i < g->nassigned; i++)
        offsets[ga_partitions_find(&ps, g->topic, g->assigned[i]) - ps.v] = next[i];
    kafka_arena_t *a = &g->coord.request;
    kafka_value_t *body = offsets && ps.n == g->nassigned ? ga_offset_commit_request(a, g->group, &ps, offsets) : NULL;
    const kafka_value_t *ans;
    char where[300] = "";
    int16_t error = KERR_NONE;
    if (body) {
        KV_SET_INT(body, OffsetCommitRequest, GenerationIdOrMemberEpoch, g->generation);
        KV_SET_STR(a, body, OffsetCommitRequest, MemberId, g->member_id);
    }
    if (!body || kafka_client_call(&g->coord, KAFKA_API_OFFSET_COMMIT, GA_OFFSET_COMMIT_VERSION, body, &ans) < 0)
        fprintf(stderr, "Warning: cannot commit the offsets of group '%s': %s\n", g->group,
                body ? g->coord.err : "out of memory");
    else if ((error = ga_offset_commit_answer(ans, where, sizeof(where))) != KERR_NONE)
        fprintf(stderr, "Warning: cannot commit the offsets of group '%s' (%s): %s\n", g->group, where,
                ga_error_text(error));
    free(offsets);
    ga_partitions_free(&ps);
}

void cg_leave(console_group_t *g)
{
    kafka_arena_t *a = &g->coord.request;
    kafka_value_t *body = g->coord.fd >= 0 && g->member_id && *g->member_id ? KV_NEW(a, LeaveGroupRequest) : NULL;
    const kafka_value_t *ans;
    if (body) {
        KV_SET_STR(a, body, LeaveGroupRequest, GroupId, g->group);
        KV_SET_STR(a, body, LeaveGroupRequest, MemberId, g->member_id);
        (void)kafka_client_call(&g->coord, KAFKA_API_LEAVE_GROUP, LEAVE_VERSION, body, &ans);   /* best effort */
    }
    kafka_client_close(&g->coord);
    free(g->member_id);
    free(g->assigned);
    g->member_id = NULL;
    g->assigned = NULL;
    g->nassigned = 0;
}
