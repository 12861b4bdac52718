/* group_admin.c -- see group_admin.h. */
#define _GNU_SOURCE
#include "group_admin.h"
#include "base/alloc.h"
#include "base/endian.h"
#include "broker/wire/kafka_errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GA_PARTITIONS_MAX 1000000

/* Running out of memory is fatal (base/alloc.h). */
static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

/* An element of an array of strings, pointing at s (which outlives the
 * encode). */
static void set_str_elem(kafka_value_t *v, const char *s)
{
    v->is_null = 0;
    v->n = (uint32_t)strlen(s);
    v->u.s = s;
}

const char *ga_error_text(int16_t error)
{
    static const struct {
        int16_t code;
        const char *text;
    } known[] = {
        {KERR_NONE, "NONE"},
        {KERR_UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR (the broker hit an unexpected error)"},
        {KERR_UNKNOWN_TOPIC_OR_PARTITION, "UNKNOWN_TOPIC_OR_PARTITION (this server does not host this "
                                          "topic-partition)"},
        {KERR_LEADER_NOT_AVAILABLE, "LEADER_NOT_AVAILABLE (there is no leader for this topic-partition)"},
        {KERR_NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER (this server is not the leader for that "
                                      "topic-partition)"},
        {KERR_REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT (the request timed out)"},
        {KERR_OFFSET_METADATA_TOO_LARGE, "OFFSET_METADATA_TOO_LARGE (the metadata field of the offset request "
                                         "was too large)"},
        {KERR_COORDINATOR_LOAD_IN_PROGRESS, "COORDINATOR_LOAD_IN_PROGRESS (the coordinator is loading and hence "
                                            "can't process requests)"},
        {KERR_COORDINATOR_NOT_AVAILABLE, "COORDINATOR_NOT_AVAILABLE (the coordinator is not available)"},
        {KERR_NOT_COORDINATOR, "NOT_COORDINATOR (this is not the correct coordinator)"},
        {KERR_ILLEGAL_GENERATION, "ILLEGAL_GENERATION (the generation id provided in the request is not the "
                                  "current generation)"},
        {KERR_INVALID_GROUP_ID, "INVALID_GROUP_ID (the configured groupId is invalid)"},
        {KERR_UNKNOWN_MEMBER_ID, "UNKNOWN_MEMBER_ID (the coordinator is not aware of this member)"},
        {KERR_REBALANCE_IN_PROGRESS, "REBALANCE_IN_PROGRESS (the group is rebalancing)"},
        {KERR_UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION (the version of API is not supported)"},
        {KERR_NON_EMPTY_GROUP, "NON_EMPTY_GROUP (the group is not empty)"},
        {KERR_GROUP_ID_NOT_FOUND, "GROUP_ID_NOT_FOUND (the group id does not exist)"},
        {KERR_GROUP_SUBSCRIBED_TO_TOPIC, "GROUP_SUBSCRIBED_TO_TOPIC (the consumer group is actively subscribed to "
                                         "the topic)"},
        {KERR_OFFSET_OUT_OF_RANGE, "OFFSET_OUT_OF_RANGE (the requested offset is not within the range of offsets "
                                   "maintained by the server)"},
        {KERR_CORRUPT_MESSAGE, "CORRUPT_MESSAGE (this message has failed its CRC checksum, exceeds the valid size, "
                               "has a null key for a compacted topic, or is otherwise corrupt)"},
        {KERR_MESSAGE_TOO_LARGE, "MESSAGE_TOO_LARGE (the request included a message larger than the max message "
                                 "size the server will accept)"},
        {KERR_INVALID_TOPIC_EXCEPTION, "INVALID_TOPIC_EXCEPTION (the request attempted to perform an operation on "
                                       "an invalid topic)"},
        {KERR_RECORD_LIST_TOO_LARGE, "RECORD_LIST_TOO_LARGE (the request included message batch larger than the "
                                     "configured segment size on the server)"},
        {KERR_NOT_ENOUGH_REPLICAS, "NOT_ENOUGH_REPLICAS (messages are rejected since there are fewer in-sync "
                                   "replicas than required)"},
        {KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, "NOT_ENOUGH_REPLICAS_AFTER_APPEND (messages are written to the log, "
                                                "but to fewer in-sync replicas than required)"},
        {KERR_INVALID_REQUIRED_ACKS, "INVALID_REQUIRED_ACKS (produce request specified an invalid value for "
                                     "required acks)"},
        {KERR_KAFKA_STORAGE_ERROR, "KAFKA_STORAGE_ERROR (disk error when trying to access log file on the disk)"},
        {KERR_FENCED_LEADER_EPOCH, "FENCED_LEADER_EPOCH (the leader epoch in the request is older than the epoch "
                                   "on the broker)"},
        {KERR_INVALID_RECORD, "INVALID_RECORD (this record has failed the validation on broker and hence will be "
                              "rejected)"},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (known[i].code == error)
            return known[i].text;
    return "an error this tool does not know";
}

/* ---- partitions ---- */

int ga_partition_cmp(const void *a, const void *b)
{
    const ga_partition_t *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

static int partition_index(const ga_partitions_t *ps, const char *topic, int32_t partition, int *insert_at)
{
    ga_partition_t key = {.topic = (char *)topic, .partition = partition};
    int lo = 0, hi = ps->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = ga_partition_cmp(&key, &ps->v[mid]);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    *insert_at = lo;
    return -1;
}

ga_partition_t *ga_partitions_find(const ga_partitions_t *ps, const char *topic, int32_t partition)
{
    int at;
    int i = partition_index(ps, topic, partition, &at);
    return i < 0 ? NULL : &ps->v[i];
}

ga_partition_t *ga_partitions_get(ga_partitions_t *ps, const char *topic, int32_t partition)
{
    int at = 0;
    int i = partition_index(ps, topic, partition, &at);
    if (i >= 0)
        return &ps->v[i];
    if (ps->n >= GA_PARTITIONS_MAX)
        return NULL;
    if (ps->n == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 16;
        ga_partition_t *v = realloc(ps->v, sizeof(*v) * (size_t)cap);
        if (!v)
            return NULL;
        ps->v = v;
        ps->cap = cap;
    }
    memmove(&ps->v[at + 1], &ps->v[at], sizeof(*ps->v) * (size_t)(ps->n - at));
    ps->v[at] = (ga_partition_t){.topic = dup_or_empty(topic), .partition = partition, .leader = -1,
                                 .committed = -1, .earliest = -1, .latest = -1, .by_time = -1, .planned = -1};
    ps->n++;
    return &ps->v[at];
}

void ga_partitions_free(ga_partitions_t *ps)
{
    for (int i = 0; i < ps->n; i++)
        free(ps->v[i].topic);
    free(ps->v);
    *ps = (ga_partitions_t){0};
}

/* ---- Metadata ---- */

kafka_value_t *ga_metadata_request(kafka_arena_t *a, const char *const *topics, int ntopics)
{
    kafka_value_t *body = KV_NEW(a, MetadataRequest);
    if (!body)
        return NULL;
    KV_SET_INT(body, MetadataRequest, AllowAutoTopicCreation, 0);
    kafka_value_t *list = KV_GET(body, MetadataRequest, Topics);
    if (!topics) {
        list->is_null = 1;
        return body;
    }
    list = KV_SET_ARRAY(a, body, MetadataRequest, Topics, (uint32_t)ntopics);
    for (int i = 0; list && i < ntopics; i++)
        KV_SET_STR(a, kv_at(list, (uint32_t)i), MetadataRequestTopic, Name, topics[i]);
    return list ? body : NULL;
}

static int asked_for(const char *const *topics, int ntopics, const char *name)
{
    for (int i = 0; topics && i < ntopics; i++)
        if (strcmp(topics[i], name) == 0)
            return 1;
    return !topics;
}

static void note_missing(ga_cluster_t *out, const char *name)
{
    char **m = realloc(out->missing, sizeof(*m) * (size_t)(out->nmissing + 1));
    if (!m)
        return;
    out->missing = m;
    out->missing[out->nmissing++] = dup_or_empty(name);
}

static int metadata_topic(const kafka_value_t *t, ga_cluster_t *out)
{
    const char *name = KV_STR(t, MetadataResponseTopic, Name);
    const kafka_value_t *parts = KV_GET(t, MetadataResponseTopic, Partitions);
    if (!name)
        return 0;
    if (KV_INT(t, MetadataResponseTopic, ErrorCode) == KERR_UNKNOWN_TOPIC_OR_PARTITION || parts->n == 0) {
        note_missing(out, name);
        return 0;
    }
    for (uint32_t i = 0; i < parts->n; i++) {
        const kafka_value_t *p = kv_at(parts, i);
        ga_partition_t *gp = ga_partitions_get(&out->parts, name, (int32_t)KV_INT(p, MetadataResponsePartition,
                                                                                  PartitionIndex));
        if (!gp)
            return -1;
        gp->leader = (int32_t)KV_INT(p, MetadataResponsePartition, LeaderId);
    }
    return 0;
}

int ga_metadata_answer(const kafka_value_t *answer, const char *const *topics, int ntopics, ga_cluster_t *out)
{
    *out = (ga_cluster_t){0};
    const kafka_value_t *brokers = KV_GET(answer, MetadataResponse, Brokers);
    out->brokers = calloc(brokers->n ? brokers->n : 1, sizeof(*out->brokers));
    if (!out->brokers)
        return -1;
    for (uint32_t i = 0; i < brokers->n; i++) {
        const kafka_value_t *b = kv_at(brokers, i);
        out->brokers[out->nbrokers++] = (ga_broker_t){
            .id = (int32_t)KV_INT(b, MetadataResponseBroker, NodeId),
            .host = dup_or_empty(KV_STR(b, MetadataResponseBroker, Host)),
            .port = (int)KV_INT(b, MetadataResponseBroker, Port)};
    }
    const kafka_value_t *ts = KV_GET(answer, MetadataResponse, Topics);
    for (uint32_t i = 0; i < ts->n; i++) {
        const char *name = KV_STR(kv_at(ts, i), MetadataResponseTopic, Name);
        if (name && asked_for(topics, ntopics, name) && metadata_topic(kv_at(ts, i), out) < 0)
            return -1;
    }
    /* Topics the answer left out altogether are missing too. */
    for (int i = 0; topics && i < ntopics; i++) {
        int seen = 0;
        for (uint32_t k = 0; k < ts->n && !seen; k++) {
            const char *name = KV_STR(kv_at(ts, k), MetadataResponseTopic, Name);
            seen = name && strcmp(name, topics[i]) == 0;
        }
        if (!seen)
            note_missing(out, topics[i]);
    }
    return 0;
}

void ga_cluster_free(ga_cluster_t *c)
{
    for (int i = 0; i < c->nbrokers; i++)
        free(c->brokers[i].host);
    free(c->brokers);
    for (int i = 0; i < c->nmissing; i++)
        free(c->missing[i]);
    free(c->missing);
    ga_partitions_free(&c->parts);
    *c = (ga_cluster_t){0};
}

const ga_broker_t *ga_cluster_broker(const ga_cluster_t *c, int32_t id)
{
    for (int i = 0; i < c->nbrokers; i++)
        if (c->brokers[i].id == id)
            return &c->brokers[i];
    return NULL;
}

/* ---- FindCoordinator ---- */

kafka_value_t *ga_find_coordinator_request(kafka_arena_t *a, const char *group)
{
    kafka_value_t *body = KV_NEW(a, FindCoordinatorRequest);
    if (body) {
        KV_SET_STR(a, body, FindCoordinatorRequest, Key, group);
        KV_SET_INT(body, FindCoordinatorRequest, KeyType, 0);
    }
    return body;
}

int16_t ga_find_coordinator_answer(const kafka_value_t *answer, ga_broker_t *out)
{
    int16_t error = (int16_t)KV_INT(answer, FindCoordinatorResponse, ErrorCode);
    if (error)
        return error;
    *out = (ga_broker_t){.id = (int32_t)KV_INT(answer, FindCoordinatorResponse, NodeId),
                         .host = dup_or_empty(KV_STR(answer, FindCoordinatorResponse, Host)),
                         .port = (int)KV_INT(answer, FindCoordinatorResponse, Port)};
    return KERR_NONE;
}

/* ---- ListOffsets ---- */

/* The partitions of which[0..n) that belong to the topic of which[i]: they
 * are next to each other, ps being sorted and which ascending. */
static int topic_run(const ga_partitions_t *ps, const int *which, int n, int i)
{
    int k = i;
    while (k < n && strcmp(ps->v[which[k]].topic, ps->v[which[i]].topic) == 0)
        k++;
    return k - i;
}

static int count_topics(const ga_partitions_t *ps, const int *which, int n)
{
    int topics = 0;
    for (int i = 0; i < n; i += topic_run(ps, which, n, i))
        topics++;
    return topics;
}

kafka_value_t *ga_list_offsets_request(kafka_arena_t *a, const ga_partitions_t *ps, const int *which, int n,
                                       int64_t timestamp)
{
    kafka_value_t *body = KV_NEW(a, ListOffsetsRequest);
    kafka_value_t *topics = body ? KV_SET_ARRAY(a, body, ListOffsetsRequest, Topics,
                                                (uint32_t)count_topics(ps, which, n))
                                 : NULL;
    if (!topics)
        return NULL;
    KV_SET_INT(body, ListOffsetsRequest, ReplicaId, -1);
    for (int i = 0, t = 0; i < n; t++) {
        int run = topic_run(ps, which, n, i);
        kafka_value_t *topic = kv_at(topics, (uint32_t)t);
        KV_SET_STR(a, topic, ListOffsetsTopic, Name, ps->v[which[i]].topic);
        kafka_value_t *parts = KV_SET_ARRAY(a, topic, ListOffsetsTopic, Partitions, (uint32_t)run);
        if (!parts)
            return NULL;
        for (int k = 0; k < run; k++) {
            KV_SET_INT(kv_at(parts, (uint32_t)k), ListOffsetsPartition, PartitionIndex,
                       ps->v[which[i + k]].partition);
            KV_SET_INT(kv_at(parts, (uint32_t)k), ListOffsetsPartition, Timestamp, timestamp);
        }
        i += run;
    }
    return body;
}

void ga_list_offsets_answer(const kafka_value_t *answer, ga_partitions_t *ps, int64_t timestamp)
{
    const kafka_value_t *topics = KV_GET(answer, ListOffsetsResponse, Topics);
    for (uint32_t t = 0; t < topics->n; t++) {
        const char *name = KV_STR(kv_at(topics, t), ListOffsetsTopicResponse, Name);
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), ListOffsetsTopicResponse, Partitions);
        for (uint32_t i = 0; name && i < parts->n; i++) {
            const kafka_value_t *p = kv_at(parts, i);
            ga_partition_t *gp =
                ga_partitions_find(ps, name, (int32_t)KV_INT(p, ListOffsetsPartitionResponse, PartitionIndex));
            if (!gp)
                continue;
            int16_t error = (int16_t)KV_INT(p, ListOffsetsPartitionResponse, ErrorCode);
            int64_t offset = error ? -1 : KV_INT(p, ListOffsetsPartitionResponse, Offset);
            if (error)
                gp->error = error;
            *(timestamp == GA_EARLIEST ? &gp->earliest : timestamp == GA_LATEST ? &gp->latest : &gp->by_time) =
                offset;
        }
    }
}

/* ---- OffsetFetch and OffsetCommit ---- */

kafka_value_t *ga_offset_fetch_request(kafka_arena_t *a, const char *group)
{
    kafka_value_t *body = KV_NEW(a, OffsetFetchRequest);
    if (body) {
        KV_SET_STR(a, body, OffsetFetchRequest, GroupId, group);
        KV_GET(body, OffsetFetchRequest, Topics)->is_null = 1;   /* every committed offset */
    }
    return body;
}

int16_t ga_offset_fetch_answer(const kafka_value_t *answer, ga_partitions_t *ps)
{
    int16_t error = (int16_t)KV_INT(answer, OffsetFetchResponse, ErrorCode);
    if (error)
        return error;
    const kafka_value_t *topics = KV_GET(answer, OffsetFetchResponse, Topics);
    for (uint32_t t = 0; t < topics->n; t++) {
        const char *name = KV_STR(kv_at(topics, t), OffsetFetchResponseTopic, Name);
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), OffsetFetchResponseTopic, Partitions);
        for (uint32_t i = 0; name && i < parts->n; i++) {
            const kafka_value_t *p = kv_at(parts, i);
            int64_t offset = KV_INT(p, OffsetFetchResponsePartition, CommittedOffset);
            if (KV_INT(p, OffsetFetchResponsePartition, ErrorCode) || offset < 0)
                continue;
            ga_partition_t *gp =
                ga_partitions_get(ps, name, (int32_t)KV_INT(p, OffsetFetchResponsePartition, PartitionIndex));
            if (gp)
                gp->committed = offset;
        }
    }
    return KERR_NONE;
}

static int count_committed(const ga_partitions_t *ps, const int64_t *offsets, int *which)
{
    int n = 0;
    for (int i = 0; i < ps->n; i++)
        if (offsets[i] >= 0)
            which[n++] = i;
    return n;
}

kafka_value_t *ga_offset_commit_request(kafka_arena_t *a, const char *group, const ga_partitions_t *ps,
                                        const int64_t *offsets)
{
    int *which = kafka_arena_alloc(a, sizeof(int) * (size_t)(ps->n ? ps->n : 1));
    kafka_value_t *body = which ? KV_NEW(a, OffsetCommitRequest) : NULL;
    if (!body)
        return NULL;
    int n = count_committed(ps, offsets, which);
    KV_SET_STR(a, body, OffsetCommitRequest, GroupId, group);
    KV_SET_INT(body, OffsetCommitRequest, GenerationIdOrMemberEpoch, -1);
    KV_SET_STR(a, body, OffsetCommitRequest, MemberId, "");
    kafka_value_t *topics = KV_SET_ARRAY(a, body, OffsetCommitRequest, Topics, (uint32_t)count_topics(ps, which, n));
    for (int i = 0, t = 0; topics && i < n; t++) {
        int run = topic_run(ps, which, n, i);
        kafka_value_t *topic = kv_at(topics, (uint32_t)t);
        KV_SET_STR(a, topic, OffsetCommitRequestTopic, Name, ps->v[which[i]].topic);
        kafka_value_t *parts = KV_SET_ARRAY(a, topic, OffsetCommitRequestTopic, Partitions, (uint32_t)run);
        if (!parts)
            return NULL;
        for (int k = 0; k < run; k++) {
            kafka_value_t *p = kv_at(parts, (uint32_t)k);
            KV_SET_INT(p, OffsetCommitRequestPartition, PartitionIndex, ps->v[which[i + k]].partition);
            KV_SET_INT(p, OffsetCommitRequestPartition, CommittedOffset, offsets[which[i + k]]);
            KV_SET_STR(a, p, OffsetCommitRequestPartition, CommittedMetadata, "");
        }
        i += run;
    }
    return topics ? body : NULL;
}

int16_t ga_offset_commit_answer(const kafka_value_t *answer, char *where, size_t wherelen)
{
    const kafka_value_t *topics = KV_GET(answer, OffsetCommitResponse, Topics);
    for (uint32_t t = 0; t < topics->n; t++) {
        const char *name = KV_STR(kv_at(topics, t), OffsetCommitResponseTopic, Name);
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), OffsetCommitResponseTopic, Partitions);
        for (uint32_t i = 0; i < parts->n; i++) {
            int16_t error = (int16_t)KV_INT(kv_at(parts, i), OffsetCommitResponsePartition, ErrorCode);
            if (error) {
                snprintf(where, wherelen, "%s-%d", name ? name : "",
                         (int)KV_INT(kv_at(parts, i), OffsetCommitResponsePartition, PartitionIndex));
                return error;
            }
        }
    }
    return KERR_NONE;
}

/* ---- DescribeGroups ---- */

/* A group id as the only element of an array of strings field. */
static kafka_value_t *one_group_request(kafka_arena_t *a, const kafka_struct_t *s, int field, const char *group)
{
    kafka_value_t *body = kv_new_struct(a, s);
    kafka_value_t *ids = body ? kv_set_array_at(a, body, s, field, 1) : NULL;
    if (!ids)
        return NULL;
    set_str_elem(kv_at(ids, 0), group);
    return body;
}

kafka_value_t *ga_describe_groups_request(kafka_arena_t *a, const char *group)
{
    return one_group_request(a, &kafka_struct_DescribeGroupsRequest, DescribeGroupsRequest_Groups, group);
}

/* The consumer protocol's reader: bounded, each length checked. */
typedef struct {
    const uint8_t *p, *end;
} rd_t;

static int rd_int(rd_t *r, int width, int64_t *v)
{
    if (r->end - r->p < width)
        return -1;
    *v = width == 2 ? (int16_t)be16_get(r->p) : (int32_t)be32_get(r->p);
    r->p += width;
    return 0;
}

int ga_parse_assignment(const uint8_t *p, size_t len, ga_partitions_t *ps)
{
    rd_t r = {p, p + len};
    int64_t version, ntopics;
    if (len == 0)
        return 0;   /* no assignment yet */
    if (rd_int(&r, 2, &version) < 0 || version < 0 || rd_int(&r, 4, &ntopics) < 0 || ntopics < 0)
        return -1;
    for (int64_t t = 0; t < ntopics; t++) {
        int64_t namelen, nparts, part;
        if (rd_int(&r, 2, &namelen) < 0 || namelen < 0 || r.end - r.p < namelen)
            return -1;
        char *name = strndup((const char *)r.p, (size_t)namelen);
        r.p += namelen;
        int rc = name && rd_int(&r, 4, &nparts) == 0 && nparts >= 0 ? 0 : -1;
        for (int64_t i = 0; rc == 0 && i < nparts; i++)
            rc = rd_int(&r, 4, &part) == 0 && ga_partitions_get(ps, name, (int32_t)part) ? 0 : -1;
        free(name);
        if (rc < 0)
            return -1;
    }
    return 0;   /* user data and later versions' fields are not read */
}

static void describe_member(const kafka_value_t *m, ga_member_t *out)
{
    *out = (ga_member_t){.member_id = dup_or_empty(KV_STR(m, DescribedGroupMember, MemberId)),
                         .instance_id = KV_STR(m, DescribedGroupMember, GroupInstanceId)
                                            ? dup_or_empty(KV_STR(m, DescribedGroupMember, GroupInstanceId))
                                            : NULL,
                         .client_id = dup_or_empty(KV_STR(m, DescribedGroupMember, ClientId)),
                         .host = dup_or_empty(KV_STR(m, DescribedGroupMember, ClientHost))};
    const kafka_value_t *a = KV_GET(m, DescribedGroupMember, MemberAssignment);
    if (!a->is_null && ga_parse_assignment(a->u.b, a->n, &out->assigned) < 0)
        ga_partitions_free(&out->assigned);   /* not a consumer's: no partitions shown */
}

int ga_describe_groups_answer(const kafka_value_t *answer, ga_group_t *out)
{
    *out = (ga_group_t){0};
    const kafka_value_t *groups = KV_GET(answer, DescribeGroupsResponse, Groups);
    if (groups->n != 1)
        return -1;
    const kafka_value_t *g = kv_at(groups, 0);
    const kafka_value_t *members = KV_GET(g, DescribedGroup, Members);
    out->error = (int16_t)KV_INT(g, DescribedGroup, ErrorCode);
    out->state = dup_or_empty(KV_STR(g, DescribedGroup, GroupState));
    out->protocol_type = dup_or_empty(KV_STR(g, DescribedGroup, ProtocolType));
    out->protocol = dup_or_empty(KV_STR(g, DescribedGroup, ProtocolData));
    out->members = calloc(members->n ? members->n : 1, sizeof(*out->members));
    if (!out->members)
        return -1;
    for (uint32_t i = 0; i < members->n; i++)
        describe_member(kv_at(members, i), &out->members[out->nmembers++]);
    return 0;
}

void ga_group_free(ga_group_t *g)
{
    for (int i = 0; i < g->nmembers; i++) {
        ga_member_t *m = &g->members[i];
        free(m->member_id);
        free(m->instance_id);
        free(m->client_id);
        free(m->host);
        ga_partitions_free(&m->assigned);
    }
    free(g->members);
    free(g->state);
    free(g->protocol_type);
    free(g->protocol);
    *g = (ga_group_t){0};
}

/* ---- ListGroups ---- */

kafka_value_t *ga_list_groups_request(kafka_arena_t *a, const char *const *states, int nstates)
{
    kafka_value_t *body = KV_NEW(a, ListGroupsRequest);
    kafka_value_t *list = body ? KV_SET_ARRAY(a, body, ListGroupsRequest, StatesFilter, (uint32_t)nstates) : NULL;
    for (int i = 0; list && i < nstates; i++)
        set_str_elem(kv_at(list, (uint32_t)i), states[i]);
    return list ? body : NULL;
}

static int listed_cmp(const void *a, const void *b)
{
    return strcmp(((const ga_listed_t *)a)->id, ((const ga_listed_t *)b)->id);
}

int16_t ga_list_groups_answer(const kafka_value_t *answer, ga_listing_t *out)
{
    int16_t error = (int16_t)KV_INT(answer, ListGroupsResponse, ErrorCode);
    const kafka_value_t *groups = KV_GET(answer, ListGroupsResponse, Groups);
    ga_listed_t *v = realloc(out->v, sizeof(*v) * ((size_t)out->n + groups->n + 1));
    if (!v)
        return KERR_UNKNOWN_SERVER_ERROR;
    out->v = v;
    for (uint32_t i = 0; i < groups->n; i++)
        out->v[out->n++] = (ga_listed_t){dup_or_empty(KV_STR(kv_at(groups, i), ListedGroup, GroupId)),
                                         dup_or_empty(KV_STR(kv_at(groups, i), ListedGroup, GroupState))};
    /* Sorted, each id once (brokers answer for the groups they coordinate,
     * but two with different views may both name one). */
    qsort(out->v, (size_t)out->n, sizeof(*out->v), listed_cmp);
    int kept = 0;
    for (int i = 0; i < out->n; i++) {
        if (kept > 0 && strcmp(out->v[kept - 1].id, out->v[i].id) == 0) {
            free(out->v[i].id);
            free(out->v[i].state);
            continue;
        }
        out->v[kept++] = out->v[i];
    }
    out->n = kept;
    return error;
}

void ga_listing_free(ga_listing_t *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].id);
        free(l->v[i].state);
    }
    free(l->v);
    *l = (ga_listing_t){0};
}

/* ---- DeleteGroups ---- */

kafka_value_t *ga_delete_groups_request(kafka_arena_t *a, const char *group)
{
    return one_group_request(a, &kafka_struct_DeleteGroupsRequest, DeleteGroupsRequest_GroupsNames, group);
}

int16_t ga_delete_groups_answer(const kafka_value_t *answer, const char *group)
{
    const kafka_value_t *results = KV_GET(answer, DeleteGroupsResponse, Results);
    for (uint32_t i = 0; i < results->n; i++) {
        const char *id = KV_STR(kv_at(results, i), DeletableGroupResult, GroupId);
        if (id && strcmp(id, group) == 0)
            return (int16_t)KV_INT(kv_at(results, i), DeletableGroupResult, ErrorCode);
    }
    return KERR_UNKNOWN_SERVER_ERROR;   /* the group is not in the answer */
}

/* ---- OffsetDelete ---- */

kafka_value_t *ga_offset_delete_request(kafka_arena_t *a, const char *group, const ga_partitions_t *ps)
{
    int *which = kafka_arena_alloc(a, sizeof(int) * (size_t)(ps->n ? ps->n : 1));
    kafka_value_t *body = which ? KV_NEW(a, OffsetDeleteRequest) : NULL;
    if (!body)
        return NULL;
    for (int i = 0; i < ps->n; i++)
        which[i] = i;
    KV_SET_STR(a, body, OffsetDeleteRequest, GroupId, group);
    kafka_value_t *topics = KV_SET_ARRAY(a, body, OffsetDeleteRequest, Topics,
                                         (uint32_t)count_topics(ps, which, ps->n));
    for (int i = 0, t = 0; topics && i < ps->n; t++) {
        int run = topic_run(ps, which, ps->n, i);
        kafka_value_t *topic = kv_at(topics, (uint32_t)t);
        KV_SET_STR(a, topic, OffsetDeleteRequestTopic, Name, ps->v[i].topic);
        kafka_value_t *parts = KV_SET_ARRAY(a, topic, OffsetDeleteRequestTopic, Partitions, (uint32_t)run);
        if (!parts)
            return NULL;
        for (int k = 0; k < run; k++)
            KV_SET_INT(kv_at(parts, (uint32_t)k), OffsetDeleteRequestPartition, PartitionIndex,
                       ps->v[i + k].partition);
        i += run;
    }
    return topics ? body : NULL;
}

int16_t ga_offset_delete_answer(const kafka_value_t *answer, ga_partitions_t *ps)
{
    int16_t group_error = (int16_t)KV_INT(answer, OffsetDeleteResponse, ErrorCode);
    for (int i = 0; i < ps->n; i++)
        ps->v[i].error = group_error ? group_error : KERR_UNKNOWN_SERVER_ERROR;   /* until answered */
    const kafka_value_t *topics = KV_GET(answer, OffsetDeleteResponse, Topics);
    for (uint32_t t = 0; !group_error && t < topics->n; t++) {
        const char *name = KV_STR(kv_at(topics, t), OffsetDeleteResponseTopic, Name);
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), OffsetDeleteResponseTopic, Partitions);
        for (uint32_t i = 0; name && i < parts->n; i++) {
            const kafka_value_t *p = kv_at(parts, i);
            ga_partition_t *mine =
                ga_partitions_find(ps, name, (int32_t)KV_INT(p, OffsetDeleteResponsePartition, PartitionIndex));
            if (mine)
                mine->error = (int16_t)KV_INT(p, OffsetDeleteResponsePartition, ErrorCode);
        }
    }
    return group_error;
}

/* ---- blocking ---- */

/* Each builds its request in the client's request arena (kafka_client.h),
 * asks, and reads the answer. */

int ga_metadata(kafka_client_t *k, const char *const *topics, int ntopics, ga_cluster_t *out)
{
    const kafka_value_t *ans;
    if (kafka_client_call(k, KAFKA_API_METADATA, GA_METADATA_VERSION,
                          ga_metadata_request(&k->request, topics, ntopics), &ans) < 0)
        return -1;
    if (ga_metadata_answer(ans, topics, ntopics, out) < 0) {
        snprintf(k->err, sizeof(k->err), "out of memory reading the cluster's metadata");
        return -1;
    }
    return 0;
}

int ga_find_coordinator(kafka_client_t *k, const char *group, ga_broker_t *out, int16_t *error)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_FIND_COORDINATOR, GA_FIND_COORDINATOR_VERSION,
                               ga_find_coordinator_request(&k->request, group), &ans);
    *error = rc == 0 ? ga_find_coordinator_answer(ans, out) : KERR_NONE;
    return rc;
}

int ga_list_offsets(kafka_client_t *k, ga_partitions_t *ps, const int *which, int n, int64_t timestamp)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_LIST_OFFSETS, GA_LIST_OFFSETS_VERSION,
                               ga_list_offsets_request(&k->request, ps, which, n, timestamp), &ans);
    if (rc == 0)
        ga_list_offsets_answer(ans, ps, timestamp);
    return rc;
}

int ga_offset_fetch(kafka_client_t *k, const char *group, ga_partitions_t *ps, int16_t *error)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_OFFSET_FETCH, GA_OFFSET_FETCH_VERSION,
                               ga_offset_fetch_request(&k->request, group), &ans);
    *error = rc == 0 ? ga_offset_fetch_answer(ans, ps) : KERR_NONE;
    return rc;
}

int ga_offset_commit(kafka_client_t *k, const char *group, const ga_partitions_t *ps, const int64_t *offsets,
                     int16_t *error, char *where, size_t wherelen)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_OFFSET_COMMIT, GA_OFFSET_COMMIT_VERSION,
                               ga_offset_commit_request(&k->request, group, ps, offsets), &ans);
    *error = rc == 0 ? ga_offset_commit_answer(ans, where, wherelen) : KERR_NONE;
    return rc;
}

int ga_describe_group(kafka_client_t *k, const char *group, ga_group_t *out)
{
    const kafka_value_t *ans;
    if (kafka_client_call(k, KAFKA_API_DESCRIBE_GROUPS, GA_DESCRIBE_GROUPS_VERSION,
                          ga_describe_groups_request(&k->request, group), &ans) < 0)
        return -1;
    if (ga_describe_groups_answer(ans, out) < 0) {
        ga_group_free(out);
        snprintf(k->err, sizeof(k->err), "a DescribeGroups answer without the group from %s:%d", k->host, k->port);
        return -1;
    }
    return 0;
}

int ga_list_groups(kafka_client_t *k, const char *const *states, int nstates, ga_listing_t *out, int16_t *error)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_LIST_GROUPS, GA_LIST_GROUPS_VERSION,
                               ga_list_groups_request(&k->request, states, nstates), &ans);
    *error = rc == 0 ? ga_list_groups_answer(ans, out) : KERR_NONE;
    return rc;
}

int ga_delete_group(kafka_client_t *k, const char *group, int16_t *error)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_DELETE_GROUPS, GA_DELETE_GROUPS_VERSION,
                               ga_delete_groups_request(&k->request, group), &ans);
    *error = rc == 0 ? ga_delete_groups_answer(ans, group) : KERR_NONE;
    return rc;
}

int ga_offset_delete(kafka_client_t *k, const char *group, ga_partitions_t *ps, int16_t *error)
{
    const kafka_value_t *ans;
    int rc = kafka_client_call(k, KAFKA_API_OFFSET_DELETE, GA_OFFSET_DELETE_VERSION,
                               ga_offset_delete_request(&k->request, group, ps), &ans);
    *error = rc == 0 ? ga_offset_delete_answer(ans, ps) : KERR_NONE;
    return rc;
}

int ga_list_offsets_leaders(const ga_cluster_t *c, ga_partitions_t *ps, const int *which, int n, int64_t timestamp,
                            int timeout_ms, const char *client_id)
{
    int *mine = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!mine)
        return -1;
    for (int i = 0; i < c->nbrokers; i++) {
        int count = 0;
        for (int k = 0; k < n; k++)
            if (ps->v[which[k]].leader == c->brokers[i].id)
                mine[count++] = which[k];
        if (count == 0)
            continue;
        kafka_client_t k;
        if (kafka_client_open(&k, c->brokers[i].host, c->brokers[i].port, timeout_ms, client_id) < 0 ||
            ga_list_offsets(&k, ps, mine, count, timestamp) < 0) {
            fprintf(stderr, "Warning: cannot read offsets from broker %d: %s\n", (int)c->brokers[i].id, k.err);
            for (int j = 0; j < count; j++)
                ps->v[mine[j]].error = KERR_LEADER_NOT_AVAILABLE;
        }
        kafka_client_close(&k);
    }
    free(mine);
    return 0;
}
