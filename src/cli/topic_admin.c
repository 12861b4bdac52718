/* topic_admin.c -- see topic_admin.h. */
#define _GNU_SOURCE
#include "topic_admin.h"
#include "broker/wire/kafka_errors.h"
#include "group_admin.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Running out of memory is fatal (base/alloc.h). */
static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

/* The message Kafka's admin client gives an error the broker sent without
 * one: its exception's default text. */
static const char *default_message(int16_t error)
{
    switch (error) {
    case KERR_UNKNOWN_TOPIC_OR_PARTITION: return "This server does not host this topic-partition.";
    case KERR_TOPIC_ALREADY_EXISTS: return "Topic with this name already exists.";
    case KERR_INVALID_PARTITIONS: return "Number of partitions is below 1.";
    case KERR_INVALID_REPLICATION_FACTOR:
        return "Replication factor is below 1 or larger than the number of available brokers.";
    case KERR_INVALID_REPLICA_ASSIGNMENT: return "Replica assignment is invalid.";
    case KERR_INVALID_CONFIG: return "Configuration is invalid.";
    case KERR_INVALID_TOPIC_EXCEPTION: return "The request attempted to perform an operation on an invalid topic.";
    default: return ga_error_text(error);
    }
}

static void set_result(ta_result_t *res, int16_t error, const char *message)
{
    res->error = error;
    snprintf(res->message, sizeof(res->message), "%s",
             error == KERR_NONE ? "" : message && *message ? message : default_message(error));
}

/* arr (NULL: out of arena) = v[0..n). The array, or NULL. */
static kafka_value_t *fill_int32(kafka_value_t *arr, const int32_t *v, int n)
{
    for (int i = 0; arr && i < n; i++)
        kv_at(arr, (uint32_t)i)->u.i = v[i];
    return arr;
}

static int32_t *copy_int32(const kafka_value_t *arr, int *n)
{
    int32_t *v = xcalloc(arr->n, sizeof(int32_t));
    for (uint32_t i = 0; i < arr->n; i++)
        v[i] = (int32_t)kv_at(arr, i)->u.i;
    *n = (int)arr->n;
    return v;
}

/* ---- Metadata ---- */

void ta_metadata_free(ta_metadata_t *m)
{
    for (int t = 0; t < m->ntopics; t++) {
        for (int p = 0; p < m->topics[t].nparts; p++) {
            free(m->topics[t].parts[p].replicas);
            free(m->topics[t].parts[p].isr);
            free(m->topics[t].parts[p].all);
            free(m->topics[t].parts[p].adding);
            free(m->topics[t].parts[p].removing);
        }
        free(m->topics[t].parts);
        free(m->topics[t].name);
    }
    free(m->topics);
    free(m->brokers);
    *m = (ta_metadata_t){0};
}

static int topic_cmp(const void *a, const void *b)
{
    return strcmp(((const ta_topic_t *)a)->name, ((const ta_topic_t *)b)->name);
}

static int partition_cmp(const void *a, const void *b)
{
    int32_t x = ((const ta_partition_t *)a)->partition, y = ((const ta_partition_t *)b)->partition;
    return (x > y) - (x < y);
}

const ta_topic_t *ta_metadata_topic(const ta_metadata_t *m, const char *name)
{
    ta_topic_t key = {.name = (char *)name};
    return m->ntopics ? bsearch(&key, m->topics, (size_t)m->ntopics, sizeof(key), topic_cmp) : NULL;
}

int ta_broker_live(const ta_metadata_t *m, int32_t id)
{
    for (int i = 0; i < m->nbrokers; i++)
        if (m->brokers[i] == id)
            return 1;
    return 0;
}

kafka_value_t *ta_metadata_request(kafka_arena_t *a)
{
    kafka_value_t *body = KV_NEW(a, MetadataRequest);
    if (body) {
        KV_SET_INT(body, MetadataRequest, AllowAutoTopicCreation, 0);
        KV_GET(body, MetadataRequest, Topics)->is_null = 1;   /* every topic */
    }
    return body;
}

static void metadata_topic(const kafka_value_t *t, ta_topic_t *out)
{
    const kafka_value_t *parts = KV_GET(t, MetadataResponseTopic, Partitions);
    out->name = dup_or_empty(KV_STR(t, MetadataResponseTopic, Name));
    memcpy(out->id, KV_UUID(t, MetadataResponseTopic, TopicId), sizeof(out->id));
    out->internal = KV_INT(t, MetadataResponseTopic, IsInternal) != 0;
    out->parts = xcalloc(parts->n, sizeof(*out->parts));
    for (uint32_t i = 0; i < parts->n; i++) {
        const kafka_value_t *p = kv_at(parts, i);
        ta_partition_t *tp = &out->parts[out->nparts++];
        tp->partition = (int32_t)KV_INT(p, MetadataResponsePartition, PartitionIndex);
        tp->leader = (int32_t)KV_INT(p, MetadataResponsePartition, LeaderId);
        tp->replicas = copy_int32(KV_GET(p, MetadataResponsePartition, ReplicaNodes), &tp->nreplicas);
        tp->isr = copy_int32(KV_GET(p, MetadataResponsePartition, IsrNodes), &tp->nisr);
    }
    qsort(out->parts, (size_t)out->nparts, sizeof(*out->parts), partition_cmp);
}

int ta_metadata_answer(const kafka_value_t *answer, ta_metadata_t *out)
{
    *out = (ta_metadata_t){0};
    const kafka_value_t *brokers = KV_GET(answer, MetadataResponse, Brokers);
    const kafka_value_t *ts = KV_GET(answer, MetadataResponse, Topics);
    out->brokers = xcalloc(brokers->n, sizeof(int32_t));
    for (uint32_t i = 0; i < brokers->n; i++)
        out->brokers[out->nbrokers++] = (int32_t)KV_INT(kv_at(brokers, i), MetadataResponseBroker, NodeId);
    out->topics = xcalloc(ts->n, sizeof(*out->topics));
    for (uint32_t i = 0; i < ts->n; i++) {
        const kafka_value_t *t = kv_at(ts, i);
        /* A topic being created or deleted can answer with an error: the
         * admin client leaves such a topic out of its listing too. */
        if (KV_STR(t, MetadataResponseTopic, Name) && KV_INT(t, MetadataResponseTopic, ErrorCode) == KERR_NONE)
            metadata_topic(t, &out->topics[out->ntopics++]);
    }
    qsort(out->topics, (size_t)out->ntopics, sizeof(*out->topics), topic_cmp);
    return 0;
}

/* ---- ListPartitionReassignments ---- */

kafka_value_t *ta_list_reassignments_request(kafka_arena_t *a)
{
    kafka_value_t *body = KV_NEW(a, ListPartitionReassignmentsRequest);
    if (body) {
        KV_SET_INT(body, ListPartitionReassignmentsRequest, TimeoutMs, TA_TIMEOUT_MS);
        KV_GET(body, ListPartitionReassignmentsRequest, Topics)->is_null = 1;   /* every move */
    }
    return body;
}

static ta_partition_t *find_partition(const ta_topic_t *t, int32_t partition)
{
    ta_partition_t key = {.partition = partition};
    return t && t->nparts ? bsearch(&key, t->parts, (size_t)t->nparts, sizeof(key), partition_cmp) : NULL;
}

static void note_move(ta_partition_t *p, const kafka_value_t *move)
{
    if (p->moving)
        return;   /* the answer named it twice: the first stands */
    p->moving = 1;
    p->all = copy_int32(KV_GET(move, OngoingPartitionReassignment, Replicas), &p->nall);
    p->adding = copy_int32(KV_GET(move, OngoingPartitionReassignment, AddingReplicas), &p->nadding);
    p->removing = copy_int32(KV_GET(move, OngoingPartitionReassignment, RemovingReplicas), &p->nremoving);
}

void ta_list_reassignments_answer(const kafka_value_t *answer, ta_metadata_t *m, ta_result_t *res)
{
    set_result(res, (int16_t)KV_INT(answer, ListPartitionReassignmentsResponse, ErrorCode),
               KV_STR(answer, ListPartitionReassignmentsResponse, ErrorMessage));
    const kafka_value_t *ts = KV_GET(answer, ListPartitionReassignmentsResponse, Topics);
    for (uint32_t i = 0; res->error == KERR_NONE && i < ts->n; i++) {
        const char *name = KV_STR(kv_at(ts, i), OngoingTopicReassignment, Name);
        const ta_topic_t *t = name ? ta_metadata_topic(m, name) : NULL;
        const kafka_value_t *ps = KV_GET(kv_at(ts, i), OngoingTopicReassignment, Partitions);
        for (uint32_t k = 0; t && k < ps->n; k++) {
            ta_partition_t *p = find_partition(
                t, (int32_t)KV_INT(kv_at(ps, k), OngoingPartitionReassignment, PartitionIndex));
            if (p)
                note_move(p, kv_at(ps, k));
        }
    }
}

static int listed(const int32_t *ids, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* A move that ended between the Metadata and the ListPartitionReassignments
 * answers is over: the partition's replicas are already the target (every
 * replica of the move but those removed). */
static int move_under_way(const ta_partition_t *p)
{
    if (!p->moving)
        return 0;
    int target = 0;
    for (int i = 0; i < p->nall; i++) {
        if (listed(p->removing, p->nremoving, p->all[i]))
            continue;
        target++;
        if (!listed(p->replicas, p->nreplicas, p->all[i]))
            return 1;
    }
    return target != p->nreplicas;
}

/* As kafka-topics.sh: while the partition's replicas still include one
 * being added or removed, the replicas of the move less those being added
 * (the factor it had before the move), else its replica count. */
int ta_replication_factor(const ta_partition_t *p)
{
    int n;
    const int32_t *replicas = ta_shown_replicas(p, &n);
    for (int i = 0; p->moving && i < n; i++)
        if (listed(p->adding, p->nadding, replicas[i]) || listed(p->removing, p->nremoving, replicas[i]))
            return p->nall - p->nadding;
    return n;
}

const int32_t *ta_shown_replicas(const ta_partition_t *p, int *n)
{
    int moving = move_under_way(p);
    *n = moving ? p->nall : p->nreplicas;
    return moving ? p->all : p->replicas;
}

/* ---- CreateTopics ---- */

static int set_assignment(kafka_arena_t *a, kafka_value_t *topic, const ta_new_topic_t *t)
{
    kafka_value_t *as = KV_SET_ARRAY(a, topic, CreatableTopic, Assignments, (uint32_t)t->nassigned);
    for (int p = 0; as && p < t->nassigned; p++) {
        kafka_value_t *one = kv_at(as, (uint32_t)p);
        KV_SET_INT(one, CreatableReplicaAssignment, PartitionIndex, p);
        if (!fill_int32(KV_SET_ARRAY(a, one, CreatableReplicaAssignment, BrokerIds, (uint32_t)t->assigned_rf),
                        t->assignment + (size_t)p * (size_t)t->assigned_rf, t->assigned_rf))
            return -1;
    }
    return as ? 0 : -1;
}

kafka_value_t *ta_create_topic_request(kafka_arena_t *a, const ta_new_topic_t *t)
{
    kafka_value_t *body = KV_NEW(a, CreateTopicsRequest);
    kafka_value_t *topics = body ? KV_SET_ARRAY(a, body, CreateTopicsRequest, Topics, 1) : NULL;
    if (!topics)
        return NULL;
    KV_SET_INT(body, CreateTopicsRequest, timeoutMs, TA_TIMEOUT_MS);
    kafka_value_t *topic = kv_at(topics, 0);
    KV_SET_STR(a, topic, CreatableTopic, Name, t->name);
    KV_SET_INT(topic, CreatableTopic, NumPartitions, t->assignment ? -1 : t->partitions);
    KV_SET_INT(topic, CreatableTopic, ReplicationFactor, t->assignment ? -1 : t->rf);
    if (t->assignment && set_assignment(a, topic, t) < 0)
        return NULL;
    kafka_value_t *cs = KV_SET_ARRAY(a, topic, CreatableTopic, Configs, (uint32_t)t->nconfigs);
    for (int i = 0; cs && i < t->nconfigs; i++) {
        KV_SET_STR(a, kv_at(cs, (uint32_t)i), CreatableTopicConfig, Name, t->configs[i].name);
        KV_SET_STR(a, kv_at(cs, (uint32_t)i), CreatableTopicConfig, Value, t->configs[i].value);
    }
    return cs ? body : NULL;
}

void ta_create_topic_answer(const kafka_value_t *answer, const char *name, ta_result_t *res)
{
    const kafka_value_t *ts = KV_GET(answer, CreateTopicsResponse, Topics);
    for (uint32_t i = 0; i < ts->n; i++) {
        const kafka_value_t *t = kv_at(ts, i);
        const char *got = KV_STR(t, CreatableTopicResult, Name);
        if (got && strcmp(got, name) == 0) {
            set_result(res, (int16_t)KV_INT(t, CreatableTopicResult, ErrorCode),
                       KV_STR(t, CreatableTopicResult, ErrorMessage));
            return;
        }
    }
    set_result(res, KERR_UNKNOWN_SERVER_ERROR, "The broker's CreateTopics answer left the topic out.");
}

/* ---- DeleteTopics ---- */

kafka_value_t *ta_delete_topics_request(kafka_arena_t *a, char *const *names, int n)
{
    kafka_value_t *body = KV_NEW(a, DeleteTopicsRequest);
    kafka_value_t *list = body ? KV_SET_ARRAY(a, body, DeleteTopicsRequest, TopicNames, (uint32_t)n) : NULL;
    if (!list)
        return NULL;
    KV_SET_INT(body, DeleteTopicsRequest, TimeoutMs, TA_TIMEOUT_MS);
    for (int i = 0; i < n; i++) {
        /* The strings outlive the encode: they are the caller's. */
        kafka_value_t *v = kv_at(list, (uint32_t)i);
        v->is_null = 0;
        v->n = (uint32_t)strlen(names[i]);
        v->u.s = names[i];
    }
    return body;
}

void ta_delete_topics_answer(const kafka_value_t *answer, ta_result_t *res)
{
    const kafka_value_t *rs = KV_GET(answer, DeleteTopicsResponse, Responses);
    set_result(res, KERR_NONE, NULL);
    for (uint32_t i = 0; i < rs->n; i++) {
        const kafka_value_t *r = kv_at(rs, i);
        int16_t error = (int16_t)KV_INT(r, DeletableTopicResult, ErrorCode);
        if (error != KERR_NONE) {
            set_result(res, error, KV_STR(r, DeletableTopicResult, ErrorMessage));
            return;
        }
    }
}

/* ---- CreatePartitions ---- */

kafka_value_t *ta_create_partitions_request(kafka_arena_t *a, const char *name, int count,
                                            const int32_t *assignment, int nnew, int rf)
{
    kafka_value_t *body = KV_NEW(a, CreatePartitionsRequest);
    kafka_value_t *topics = body ? KV_SET_ARRAY(a, body, CreatePartitionsRequest, Topics, 1) : NULL;
    if (!topics)
        return NULL;
    KV_SET_INT(body, CreatePartitionsRequest, TimeoutMs, TA_TIMEOUT_MS);
    kafka_value_t *t = kv_at(topics, 0);
    KV_SET_STR(a, t, CreatePartitionsTopic, Name, name);
    KV_SET_INT(t, CreatePartitionsTopic, Count, count);
    if (!assignment) {
        KV_GET(t, CreatePartitionsTopic, Assignments)->is_null = 1;
        return body;
    }
    kafka_value_t *as = KV_SET_ARRAY(a, t, CreatePartitionsTopic, Assignments, (uint32_t)nnew);
    for (int p = 0; as && p < nnew; p++)
        if (!fill_int32(KV_SET_ARRAY(a, kv_at(as, (uint32_t)p), CreatePartitionsAssignment, BrokerIds, (uint32_t)rf),
                        assignment + (size_t)p * (size_t)rf, rf))
            return NULL;
    return as ? body : NULL;
}

void ta_create_partitions_answer(const kafka_value_t *answer, const char *name, ta_result_t *res)
{
    const kafka_value_t *rs = KV_GET(answer, CreatePartitionsResponse, Results);
    for (uint32_t i = 0; i < rs->n; i++) {
        const kafka_value_t *r = kv_at(rs, i);
        const char *got = KV_STR(r, CreatePartitionsTopicResult, Name);
        if (got && strcmp(got, name) == 0) {
            set_result(res, (int16_t)KV_INT(r, CreatePartitionsTopicResult, ErrorCode),
                       KV_STR(r, CreatePartitionsTopicResult, ErrorMessage));
            return;
        }
    }
    set_result(res, KERR_UNKNOWN_SERVER_ERROR, "The broker's CreatePartitions answer left the topic out.");
}

/* ---- DescribeConfigs ---- */

void ta_configs_free(ta_configs_t *c)
{
    for (int i = 0; i < c->n; i++) {
        for (int s = 0; s < c->v[i].nsynonyms; s++) {
            free(c->v[i].synonyms[s].name);
            free(c->v[i].synonyms[s].value);
        }
        free(c->v[i].synonyms);
        free(c->v[i].name);
        free(c->v[i].value);
    }
    free(c->v);
    *c = (ta_configs_t){0};
}

static int config_cmp(const void *a, const void *b)
{
    return strcmp(((const ta_config_t *)a)->name, ((const ta_config_t *)b)->name);
}

const ta_config_t *ta_configs_find(const ta_configs_t *c, const char *name)
{
    ta_config_t key = {.name = (char *)name};
    return c->n ? bsearch(&key, c->v, (size_t)c->n, sizeof(key), config_cmp) : NULL;
}

const char *ta_source_name(int8_t source)
{
    static const char *const names[] = {"UNKNOWN", "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG",
                                        "DYNAMIC_DEFAULT_BROKER_CONFIG", "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG",
                                        "DYNAMIC_BROKER_LOGGER_CONFIG"};
    return source >= 0 && source < (int8_t)(sizeof(names) / sizeof(names[0])) ? names[source] : "UNKNOWN";
}

kafka_value_t *ta_describe_configs_request(kafka_arena_t *a, int8_t type, const char *name)
{
    kafka_value_t *body = KV_NEW(a, DescribeConfigsRequest);
    kafka_value_t *rs = body ? KV_SET_ARRAY(a, body, DescribeConfigsRequest, Resources, 1) : NULL;
    if (!rs)
        return NULL;
    KV_SET_INT(body, DescribeConfigsRequest, IncludeSynonyms, 1);
    KV_SET_INT(kv_at(rs, 0), DescribeConfigsResource, ResourceType, type);
    KV_SET_STR(a, kv_at(rs, 0), DescribeConfigsResource, ResourceName, name);
    KV_GET(kv_at(rs, 0), DescribeConfigsResource, ConfigurationKeys)->is_null = 1;   /* every one */
    return body;
}

static char *dup_nullable(const char *s)
{
    return s ? dup_or_empty(s) : NULL;
}

static void read_config(const kafka_value_t *c, ta_config_t *out)
{
    const kafka_value_t *syns = KV_GET(c, DescribeConfigsResourceResult, Synonyms);
    out->name = dup_or_empty(KV_STR(c, DescribeConfigsResourceResult, Name));
    out->value = dup_nullable(KV_STR(c, DescribeConfigsResourceResult, Value));
    out->source = (int8_t)KV_INT(c, DescribeConfigsResourceResult, ConfigSource);
    out->sensitive = KV_INT(c, DescribeConfigsResourceResult, IsSensitive) != 0;
    out->synonyms = xcalloc(syns->n, sizeof(*out->synonyms));
    for (uint32_t s = 0; s < syns->n; s++) {
        const kafka_value_t *y = kv_at(syns, s);
        out->synonyms[out->nsynonyms++] = (ta_synonym_t){
            .name = dup_or_empty(KV_STR(y, DescribeConfigsSynonym, Name)),
            .value = dup_nullable(KV_STR(y, DescribeConfigsSynonym, Value)),
            .source = (int8_t)KV_INT(y, DescribeConfigsSynonym, Source)};
    }
}

int ta_describe_configs_answer(const kafka_value_t *answer, ta_configs_t *out, ta_result_t *res)
{
    *out = (ta_configs_t){0};
    const kafka_value_t *rs = KV_GET(answer, DescribeConfigsResponse, Results);
    if (rs->n != 1) {
        set_result(res, KERR_UNKNOWN_SERVER_ERROR, "The broker's DescribeConfigs answer is not about one resource.");
        return 0;
    }
    const kafka_value_t *r = kv_at(rs, 0);
    set_result(res, (int16_t)KV_INT(r, DescribeConfigsResult, ErrorCode), KV_STR(r, DescribeConfigsResult, ErrorMessage));
    if (res->error != KERR_NONE)
        return 0;
    const kafka_value_t *cs = KV_GET(r, DescribeConfigsResult, Configs);
    out->v = xcalloc(cs->n, sizeof(*out->v));
    for (uint32_t i = 0; i < cs->n; i++)
        if (KV_STR(kv_at(cs, i), DescribeConfigsResourceResult, Name))
            read_config(kv_at(cs, i), &out->v[out->n++]);
    qsort(out->v, (size_t)out->n, sizeof(*out->v), config_cmp);
    return 0;
}

/* ---- IncrementalAlterConfigs ---- */

kafka_value_t *ta_alter_configs_request(kafka_arena_t *a, int8_t type, const char *name, const ta_alter_op_t *ops,
                                        int n)
{
    kafka_value_t *body = KV_NEW(a, IncrementalAlterConfigsRequest);
    kafka_value_t *rs = body ? KV_SET_ARRAY(a, body, IncrementalAlterConfigsRequest, Resources, 1) : NULL;
    if (!rs)
        return NULL;
    kafka_value_t *r = kv_at(rs, 0);
    KV_SET_INT(r, IncrementalAlterConfigsResource, ResourceType, type);
    KV_SET_STR(a, r, IncrementalAlterConfigsResource, ResourceName, name);
    kafka_value_t *cs = KV_SET_ARRAY(a, r, IncrementalAlterConfigsResource, Configs, (uint32_t)n);
    for (int i = 0; cs && i < n; i++) {
        kafka_value_t *c = kv_at(cs, (uint32_t)i);
        KV_SET_STR(a, c, IncrementalAlterableConfig, Name, ops[i].name);
        KV_SET_INT(c, IncrementalAlterableConfig, ConfigOperation, ops[i].op);
        KV_SET_STR(a, c, IncrementalAlterableConfig, Value, ops[i].op == TA_OP_DELETE ? NULL : ops[i].value);
    }
    return cs ? body : NULL;
}

void ta_alter_configs_answer(const kafka_value_t *answer, ta_result_t *res)
{
    const kafka_value_t *rs = KV_GET(answer, IncrementalAlterConfigsResponse, Responses);
    if (rs->n != 1) {
        set_result(res, KERR_UNKNOWN_SERVER_ERROR, "The broker's answer is not about one resource.");
        return;
    }
    set_result(res, (int16_t)KV_INT(kv_at(rs, 0), AlterConfigsResourceResponse, ErrorCode),
               KV_STR(kv_at(rs, 0), AlterConfigsResourceResponse, ErrorMessage));
}

/* ---- blocking ---- */

int ta_metadata(kafka_client_t *k, ta_metadata_t *out)
{
    const kafka_value_t *answer;
    if (kafka_client_call(k, KAFKA_API_METADATA, TA_METADATA_VERSION, ta_metadata_request(&k->request), &answer) < 0)
        return -1;
    return ta_metadata_answer(answer, out);
}

int ta_list_reassignments(kafka_client_t *k, ta_metadata_t *m, ta_result_t *res)
{
    const kafka_value_t *answer;
    if (kafka_client_call(k, KAFKA_API_LIST_PARTITION_REASSIGNMENTS, TA_LIST_REASSIGNMENTS_VERSION,
                          ta_list_reassignments_request(&k->request), &answer) < 0)
        return -1;
    ta_list_reassignments_answer(answer, m, res);
    return 0;
}

int ta_create_topic(kafka_client_t *k, const ta_new_topic_t *t, ta_result_t *res)
{
    const kafka_value_t *answer;
    if (kafka_client_call(k, KAFKA_API_CREATE_TOPICS, TA_CREATE_TOPICS_VERSION, ta_create_topic_request(&k->request, t),
                          &answer) < 0)
        return -1;
    ta_create_topic_answer(answer, t->name, res);
    return 0;
}

int ta_delete_topics(kafka_client_t *k, char *const *names, int n, ta_result_t *res)
{
    const kafka_value_t *answer;
    if (kafka_client_call(k, KAFKA_API_DELETE_TOPICS, TA_DELETE_TOPICS_VERSION,
                          ta_delete_topics_request(&k->request, names, n), &answer) < 0)
        return -1;
    ta_delete_topics_answer(answer, res);
    return 0;
}

int ta_create_partitions(kafka_client_t *k, const char *name, int count, const int32_t *assignment, int nnew,
                         int rf, ta_result_t *res)
{
    const kafka_value_t *answer;
    if (kafka_client_call(k, KAFKA_API_CREATE_PARTITIONS, TA_CREATE_PARTITIONS_VERSION,
                          ta_create_partitions_request(&k->request, name, count, assignment, nnew, rf), &answer) < 0)
        return -1;
    ta_create_partitions_answer(answer, name, res);
    return 0;
}

int ta_describe_configs(kafka_client_t *k, int8_t type, const char *name, ta_configs_t *out, ta_result_t *res)
{
    const kafka_value_t *answer;
    *out = (ta_configs_t){0};
    if (kafka_client_call(k, KAFKA_API_DESCRIBE_CONFIGS, TA_DESCRIBE_CONFIGS_VERSION,
                          ta_describe_configs_request(&k->request, type, name), &answer) < 0)
        return -1;
    return ta_describe_configs_answer(answer, out, res);
}

int ta_alter_configs(kafka_client_t *k, int8_t type, const char *name, const ta_alter_op_t *ops, int n,
                     ta_result_t *res)
{
    const kafka_value_t *answer;
    if (kafka_client_call(k, KAFKA_API_INCREMENTAL_ALTER_CONFIGS, TA_INCREMENTAL_ALTER_CONFIGS_VERSION,
                          ta_alter_configs_request(&k->request, type, name, ops, n), &answer) < 0)
        return -1;
    ta_alter_configs_answer(answer, res);
    return 0;
}
