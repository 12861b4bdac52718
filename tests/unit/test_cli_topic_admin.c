/* test_cli_topic_admin.c -- the pure parts of `kipper topics` and `kipper
 * configs` with --bootstrap-server (src/cli/topic_admin.c): each request
 * read back by the broker's codec, and answers made with it read (sorted,
 * topics in error left out, Kafka's default message where the broker gave
 * none). The tools against a real broker are
 * tests/integration/test_bootstrap_tools.py. */
#include "suites.h"
#include "unit.h"

#include "base/buf.h"
#include "broker/wire/kafka_errors.h"
#include "broker/wire/kafka_messages.h"
#include "cli/topic_admin.h"

#include <stdlib.h>
#include <string.h>

static kafka_value_t *as_broker_reads(const kafka_value_t *body, int16_t key, int16_t version, buf_t *b,
                                      kafka_arena_t *d)
{
    buf_init(b);
    kafka_request_t r;
    CHECK(body != NULL);
    CHECK_EQ(kafka_request_encode(b, kafka_api_find(key), version, 7, "ta", body), KAFKA_OK);
    kafka_arena_init(d, kafka_decode_budget(b->len));
    CHECK_EQ(kafka_request_decode(b->data + 4, b->len - 4, d, &r), KAFKA_OK);
    CHECK(r.api_key == key && r.api_version == version);
    return r.body;
}

static void done(kafka_arena_t *d, buf_t *b)
{
    kafka_arena_free(d);
    buf_free(b);
}

static void test_ta_topic_requests(void)
{
    kafka_arena_t a, d;
    buf_t b;
    kafka_arena_init(&a, 0);
    const int32_t assignment[] = {1, 2, 2, 3};
    const ta_kv_t cfg[] = {{"retention.ms", "1000"}};
    ta_new_topic_t nt = {.name = "t", .partitions = -1, .rf = -1, .assignment = assignment, .nassigned = 2,
                         .assigned_rf = 2, .configs = cfg, .nconfigs = 1};
    kafka_value_t *r = as_broker_reads(ta_create_topic_request(&a, &nt), KAFKA_API_CREATE_TOPICS,
                                       TA_CREATE_TOPICS_VERSION, &b, &d);
    const kafka_value_t *t = kv_at(KV_GET(r, CreateTopicsRequest, Topics), 0);
    CHECK_STR(KV_STR(t, CreatableTopic, Name), "t");
    CHECK(KV_INT(t, CreatableTopic, NumPartitions) == -1 && KV_INT(t, CreatableTopic, ReplicationFactor) == -1);
    const kafka_value_t *as = KV_GET(t, CreatableTopic, Assignments);
    CHECK(as->n == 2 && KV_INT(kv_at(as, 1), CreatableReplicaAssignment, PartitionIndex) == 1);
    CHECK(kv_at(KV_GET(kv_at(as, 1), CreatableReplicaAssignment, BrokerIds), 1)->u.i == 3);
    CHECK_STR(KV_STR(kv_at(KV_GET(t, CreatableTopic, Configs), 0), CreatableTopicConfig, Value), "1000");
    done(&d, &b);

    nt = (ta_new_topic_t){.name = "u", .partitions = 3, .rf = 1};
    r = as_broker_reads(ta_create_topic_request(&a, &nt), KAFKA_API_CREATE_TOPICS, TA_CREATE_TOPICS_VERSION, &b, &d);
    t = kv_at(KV_GET(r, CreateTopicsRequest, Topics), 0);
    CHECK(KV_INT(t, CreatableTopic, NumPartitions) == 3 && KV_GET(t, CreatableTopic, Assignments)->n == 0);
    done(&d, &b);

    char *names[] = {"x", "y"};
    r = as_broker_reads(ta_delete_topics_request(&a, names, 2), KAFKA_API_DELETE_TOPICS, TA_DELETE_TOPICS_VERSION,
                        &b, &d);
    CHECK(KV_GET(r, DeleteTopicsRequest, TopicNames)->n == 2);
    CHECK_STR(kv_at(KV_GET(r, DeleteTopicsRequest, TopicNames), 1)->u.s, "y");
    done(&d, &b);

    r = as_broker_reads(ta_create_partitions_request(&a, "t", 4, assignment + 2, 1, 2), KAFKA_API_CREATE_PARTITIONS,
                        TA_CREATE_PARTITIONS_VERSION, &b, &d);
    t = kv_at(KV_GET(r, CreatePartitionsRequest, Topics), 0);
    CHECK(KV_INT(t, CreatePartitionsTopic, Count) == 4 && KV_GET(t, CreatePartitionsTopic, Assignments)->n == 1);
    CHECK(kv_at(KV_GET(kv_at(KV_GET(t, CreatePartitionsTopic, Assignments), 0), CreatePartitionsAssignment, BrokerIds),
                0)->u.i == 2);
    done(&d, &b);
    r = as_broker_reads(ta_create_partitions_request(&a, "t", 4, NULL, 0, 0), KAFKA_API_CREATE_PARTITIONS,
                        TA_CREATE_PARTITIONS_VERSION, &b, &d);
    CHECK(KV_GET(kv_at(KV_GET(r, CreatePartitionsRequest, Topics), 0), CreatePartitionsTopic, Assignments)->is_null);
    done(&d, &b);

    r = as_broker_reads(ta_metadata_request(&a), KAFKA_API_METADATA, TA_METADATA_VERSION, &b, &d);
    CHECK(KV_GET(r, MetadataRequest, Topics)->is_null && KV_INT(r, MetadataRequest, AllowAutoTopicCreation) == 0);
    done(&d, &b);
    kafka_arena_free(&a);
}

static void test_ta_config_requests(void)
{
    kafka_arena_t a, d;
    buf_t b;
    kafka_arena_init(&a, 0);
    kafka_value_t *r = as_broker_reads(ta_describe_configs_request(&a, TA_RESOURCE_BROKER, ""),
                                       KAFKA_API_DESCRIBE_CONFIGS, TA_DESCRIBE_CONFIGS_VERSION, &b, &d);
    const kafka_value_t *res = kv_at(KV_GET(r, DescribeConfigsRequest, Resources), 0);
    CHECK(KV_INT(r, DescribeConfigsRequest, IncludeSynonyms) == 1);
    CHECK(KV_INT(res, DescribeConfigsResource, ResourceType) == TA_RESOURCE_BROKER);
    CHECK_STR(KV_STR(res, DescribeConfigsResource, ResourceName), "");
    CHECK(KV_GET(res, DescribeConfigsResource, ConfigurationKeys)->is_null);
    done(&d, &b);

    const ta_alter_op_t ops[] = {{"a", "1", TA_OP_SET}, {"b", NULL, TA_OP_DELETE}};
    r = as_broker_reads(ta_alter_configs_request(&a, TA_RESOURCE_TOPIC, "t", ops, 2),
                        KAFKA_API_INCREMENTAL_ALTER_CONFIGS, TA_INCREMENTAL_ALTER_CONFIGS_VERSION, &b, &d);
    const kafka_value_t *cs = KV_GET(kv_at(KV_GET(r, IncrementalAlterConfigsRequest, Resources), 0),
                                     IncrementalAlterConfigsResource, Configs);
    CHECK(cs->n == 2 && KV_INT(kv_at(cs, 1), IncrementalAlterableConfig, ConfigOperation) == TA_OP_DELETE);
    CHECK(KV_STR(kv_at(cs, 1), IncrementalAlterableConfig, Value) == NULL);
    CHECK_STR(KV_STR(kv_at(cs, 0), IncrementalAlterableConfig, Value), "1");
    done(&d, &b);
    kafka_arena_free(&a);
}

static void add_partition(kafka_arena_t *a, kafka_value_t *p, int32_t index, int32_t leader)
{
    KV_SET_INT(p, MetadataResponsePartition, PartitionIndex, index);
    KV_SET_INT(p, MetadataResponsePartition, LeaderId, leader);
    kafka_value_t *rs = KV_SET_ARRAY(a, p, MetadataResponsePartition, ReplicaNodes, 2);
    kv_at(rs, 0)->u.i = 1;
    kv_at(rs, 1)->u.i = 2;
    kv_at(KV_SET_ARRAY(a, p, MetadataResponsePartition, IsrNodes, 1), 0)->u.i = 1;
}

static void test_ta_metadata_answer(void)
{
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *ans = KV_NEW(&a, MetadataResponse);
    KV_SET_INT(kv_at(KV_SET_ARRAY(&a, ans, MetadataResponse, Brokers, 1), 0), MetadataResponseBroker, NodeId, 3);
    kafka_value_t *ts = KV_SET_ARRAY(&a, ans, MetadataResponse, Topics, 3);
    KV_SET_STR(&a, kv_at(ts, 0), MetadataResponseTopic, Name, "zeta");
    KV_SET_STR(&a, kv_at(ts, 1), MetadataResponseTopic, Name, "alpha");
    KV_SET_INT(kv_at(ts, 1), MetadataResponseTopic, IsInternal, 1);
    KV_SET_STR(&a, kv_at(ts, 2), MetadataResponseTopic, Name, "broken");
    KV_SET_INT(kv_at(ts, 2), MetadataResponseTopic, ErrorCode, KERR_LEADER_NOT_AVAILABLE);
    kafka_value_t *ps = KV_SET_ARRAY(&a, kv_at(ts, 0), MetadataResponseTopic, Partitions, 2);
    add_partition(&a, kv_at(ps, 0), 1, -1);
    add_partition(&a, kv_at(ps, 1), 0, 3);
    ta_metadata_t m;
    CHECK_EQ(ta_metadata_answer(ans, &m), 0);
    CHECK(m.nbrokers == 1 && ta_broker_live(&m, 3) && !ta_broker_live(&m, 1));
    CHECK(m.ntopics == 2 && strcmp(m.topics[0].name, "alpha") == 0 && m.topics[0].internal);
    const ta_topic_t *z = ta_metadata_topic(&m, "zeta");
    CHECK(z && z->nparts == 2 && z->parts[0].partition == 0 && z->parts[0].leader == 3 && z->parts[1].leader == -1);
    CHECK(z->parts[0].nreplicas == 2 && z->parts[0].replicas[1] == 2 && z->parts[0].nisr == 1);
    CHECK(ta_metadata_topic(&m, "broken") == NULL);
    ta_metadata_free(&m);
    kafka_arena_free(&a);
}

static void set_ids(kafka_arena_t *a, kafka_value_t *move, int which, const int32_t *ids, int n)
{
    kafka_value_t *arr = which == 0   ? KV_SET_ARRAY(a, move, OngoingPartitionReassignment, Replicas, (uint32_t)n)
                         : which == 1 ? KV_SET_ARRAY(a, move, OngoingPartitionReassignment, AddingReplicas, (uint32_t)n)
                                      : KV_SET_ARRAY(a, move, OngoingPartitionReassignment, RemovingReplicas,
                                                     (uint32_t)n);
    for (int i = 0; i < n; i++)
        kv_at(arr, (uint32_t)i)->u.i = ids[i];
}

/* A move of t-0 from [1, 2] to [2, 3]: its replicas, the replication factor
 * shown while it is under way (Kafka's Metadata listing every replica of the
 * move, or only the old ones as kipper's does), and once it is over. */
static void test_ta_reassignments(void)
{
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    ta_partition_t parts[2] = {{.partition = 0}, {.partition = 1}};
    int32_t old[] = {1, 2}, all[] = {2, 3, 1}, adding[] = {3}, removing[] = {1}, target[] = {3, 2};
    ta_topic_t topic = {.name = "t", .parts = parts, .nparts = 2};
    ta_metadata_t m = {.topics = &topic, .ntopics = 1};
    kafka_value_t *ans = KV_NEW(&a, ListPartitionReassignmentsResponse);
    kafka_value_t *ts = KV_SET_ARRAY(&a, ans, ListPartitionReassignmentsResponse, Topics, 2);
    KV_SET_STR(&a, kv_at(ts, 0), OngoingTopicReassignment, Name, "gone");   /* not in m: left out */
    KV_SET_STR(&a, kv_at(ts, 1), OngoingTopicReassignment, Name, "t");
    kafka_value_t *move = kv_at(KV_SET_ARRAY(&a, kv_at(ts, 1), OngoingTopicReassignment, Partitions, 1), 0);
    set_ids(&a, move, 0, all, 3);
    set_ids(&a, move, 1, adding, 1);
    set_ids(&a, move, 2, removing, 1);
    ta_result_t res;
    ta_list_reassignments_answer(ans, &m, &res);
    CHECK(res.error == KERR_NONE && parts[0].moving && !parts[1].moving);
    CHECK(parts[0].nadding == 1 && parts[0].adding[0] == 3 && parts[0].nremoving == 1 && parts[0].removing[0] == 1);
    int n;
    for (int metadata = 0; metadata < 3; metadata++) {
        /* Metadata's replicas: every one of the move, the old ones, the target. */
        parts[0].replicas = metadata == 0 ? all : metadata == 1 ? old : target;
        parts[0].nreplicas = metadata == 0 ? 3 : 2;
        const int32_t *shown = ta_shown_replicas(&parts[0], &n);
        CHECK_EQ(ta_replication_factor(&parts[0]), 2);
        if (metadata < 2)
            CHECK(n == 3 && shown == parts[0].all);
        else
            CHECK(n == 2 && shown == target);
    }
    free(parts[0].all);
    free(parts[0].adding);
    free(parts[0].removing);
    KV_SET_INT(ans, ListPartitionReassignmentsResponse, ErrorCode, KERR_UNSUPPORTED_VERSION);
    ta_list_reassignments_answer(ans, &m, &res);
    CHECK(res.error == KERR_UNSUPPORTED_VERSION);
    kafka_arena_free(&a);
}

static void test_ta_other_answers(void)
{
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    ta_result_t res;
    kafka_value_t *ans = KV_NEW(&a, CreateTopicsResponse);
    kafka_value_t *t = kv_at(KV_SET_ARRAY(&a, ans, CreateTopicsResponse, Topics, 1), 0);
    KV_SET_STR(&a, t, CreatableTopicResult, Name, "t");
    KV_SET_INT(t, CreatableTopicResult, ErrorCode, KERR_TOPIC_ALREADY_EXISTS);
    ta_create_topic_answer(ans, "t", &res);
    CHECK(res.error == KERR_TOPIC_ALREADY_EXISTS);
    CHECK_STR(res.message, "Topic with this name already exists.");
    KV_SET_STR(&a, t, CreatableTopicResult, ErrorMessage, "Topic 't' already exists.");
    ta_create_topic_answer(ans, "t", &res);
    CHECK_STR(res.message, "Topic 't' already exists.");
    ta_create_topic_answer(ans, "other", &res);
    CHECK(res.error == KERR_UNKNOWN_SERVER_ERROR);

    ans = KV_NEW(&a, DescribeConfigsResponse);
    kafka_value_t *r = kv_at(KV_SET_ARRAY(&a, ans, DescribeConfigsResponse, Results, 1), 0);
    kafka_value_t *cs = KV_SET_ARRAY(&a, r, DescribeConfigsResult, Configs, 2);
    KV_SET_STR(&a, kv_at(cs, 0), DescribeConfigsResourceResult, Name, "segment.ms");
    KV_SET_STR(&a, kv_at(cs, 0), DescribeConfigsResourceResult, Value, "5");
    KV_SET_INT(kv_at(cs, 0), DescribeConfigsResourceResult, ConfigSource, TA_SOURCE_DYNAMIC_TOPIC);
    kafka_value_t *syn = kv_at(KV_SET_ARRAY(&a, kv_at(cs, 0), DescribeConfigsResourceResult, Synonyms, 1), 0);
    KV_SET_STR(&a, syn, DescribeConfigsSynonym, Name, "log.roll.ms");
    KV_SET_STR(&a, syn, DescribeConfigsSynonym, Value, NULL);
    KV_SET_INT(syn, DescribeConfigsSynonym, Source, TA_SOURCE_DEFAULT);
    KV_SET_STR(&a, kv_at(cs, 1), DescribeConfigsResourceResult, Name, "a.secret");
    KV_SET_STR(&a, kv_at(cs, 1), DescribeConfigsResourceResult, Value, NULL);
    KV_SET_INT(kv_at(cs, 1), DescribeConfigsResourceResult, IsSensitive, 1);
    ta_configs_t c;
    CHECK_EQ(ta_describe_configs_answer(ans, &c, &res), 0);
    CHECK(res.error == KERR_NONE && c.n == 2 && strcmp(c.v[0].name, "a.secret") == 0 && c.v[0].sensitive);
    CHECK(c.v[0].value == NULL);
    const ta_config_t *e = ta_configs_find(&c, "segment.ms");
    CHECK(e && e->nsynonyms == 1 && e->synonyms[0].value == NULL);
    CHECK_STR(ta_source_name(e->synonyms[0].source), "DEFAULT_CONFIG");
    CHECK_STR(ta_source_name(99), "UNKNOWN");
    ta_configs_free(&c);
    KV_SET_INT(r, DescribeConfigsResult, ErrorCode, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ(ta_describe_configs_answer(ans, &c, &res), 0);
    CHECK(res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION && c.n == 0);
    CHECK_STR(res.message, "This server does not host this topic-partition.");

    ans = KV_NEW(&a, DeleteTopicsResponse);
    kafka_value_t *rs = KV_SET_ARRAY(&a, ans, DeleteTopicsResponse, Responses, 2);
    KV_SET_INT(kv_at(rs, 1), DeletableTopicResult, ErrorCode, KERR_INVALID_REQUEST);
    KV_SET_STR(&a, kv_at(rs, 1), DeletableTopicResult, ErrorMessage, "no");
    ta_delete_topics_answer(ans, &res);
    CHECK(res.error == KERR_INVALID_REQUEST);
    CHECK_STR(res.message, "no");
    kafka_arena_free(&a);
}

void suite_cli_topic_admin(void)
{
    RUN(test_ta_topic_requests);
    RUN(test_ta_config_requests);
    RUN(test_ta_metadata_answer);
    RUN(test_ta_reassignments);
    RUN(test_ta_other_answers);
}
