/* api_describe.c -- DescribeCluster (live brokers, cluster id, a controller
 * to send admin requests to) and DescribeConfigs (a topic's configs: its own
 * overrides, else the broker's values; a broker's own settings). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/core/log_dirs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
/* ConfigSource */
#define SOURCE_DYNAMIC_TOPIC 1
#define SOURCE_STATIC_BROKER 4
#define SOURCE_DEFAULT 5
/* ConfigType */
#define TYPE_BOOLEAN 1
#define TYPE_STRING 2
#define TYPE_INT 3
#define TYPE_LONG 5
#define TYPE_LIST 7

req_status_t api_describe_cluster(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    if (req->api_version >= 1 && KV_INT(req->body, DescribeClusterRequest, EndpointType) != 1) {
        /* only broker endpoints exist */
        KV_SET_INT(resp, DescribeClusterResponse, ErrorCode, KERR_UNSUPPORTED_VERSION);
        KV_SET_STR(ra, resp, DescribeClusterResponse, ErrorMessage, "only the broker endpoint type is served");
        return api_answer(c, req, resp);
    }
    KV_SET_STR(ra, resp, DescribeClusterResponse, ClusterId, b->cluster_id);
    KV_SET_INT(resp, DescribeClusterResponse, ControllerId, b->cfg.broker_id);
    kafka_value_t *brokers = KV_SET_ARRAY(ra, resp, DescribeClusterResponse, Brokers, (uint32_t)b->nbrokers);
    if (!brokers)
        return REQ_CLOSE;
    for (int i = 0; i < b->nbrokers; i++) {
        KV_SET_INT(kv_at(brokers, (uint32_t)i), DescribeClusterBroker, BrokerId, b->brokers[i].id);
        KV_SET_STR(ra, kv_at(brokers, (uint32_t)i), DescribeClusterBroker, Host, b->brokers[i].ep.host);
        KV_SET_INT(kv_at(brokers, (uint32_t)i), DescribeClusterBroker, Port, b->brokers[i].ep.port);
    }
    if (KV_INT(req->body, DescribeClusterRequest, IncludeClusterAuthorizedOperations))
        KV_SET_INT(resp, DescribeClusterResponse, ClusterAuthorizedOperations, 0x1FA0);
    return api_answer(c, req, resp);
}

/* One config as the topic (or broker) has it. */
typedef struct {
    const char *name;
    int type;
    char value[64];
    int source;
} config_value_t;

/* The topic-level configs kipper acts on, with the broker's value behind
 * each (Kafka's synonyms). */
static int topic_configs(const broker_t *b, const topic_t *t, config_value_t *out)
{
    partition_log_config_t lc;
    log_dirs_config_for(b, NULL, &lc);
    int n = 0;
    out[n++] = (config_value_t){"cleanup.policy", TYPE_LIST, "delete", SOURCE_DEFAULT};
    out[n] = (config_value_t){"retention.ms", TYPE_LONG, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%" PRId64, lc.retention_ms);
    out[n] = (config_value_t){"retention.bytes", TYPE_LONG, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%" PRId64, lc.retention_bytes);
    out[n] = (config_value_t){"segment.bytes", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%" PRId64, lc.segment_bytes);
    out[n] = (config_value_t){"segment.ms", TYPE_LONG, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%" PRId64, lc.segment_ms);
    out[n] = (config_value_t){"max.message.bytes", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", (int)lc.max_batch_bytes);
    out[n++] = (config_value_t){"message.timestamp.type", TYPE_STRING,
                                "", SOURCE_STATIC_BROKER};
    snprintf(out[n - 1].value, sizeof(out[0].value), "%s", b->cfg.log_append_time ? "LogAppendTime" : "CreateTime");
    out[n] = (config_value_t){"min.insync.replicas", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", b->cfg.min_insync_replicas);
    out[n] = (config_value_t){"unclean.leader.election.enable", TYPE_BOOLEAN, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%s", b->cfg.unclean_leader_election ? "true" : "false");
    out[n++] = (config_value_t){"compression.type", TYPE_STRING, "producer", SOURCE_DEFAULT};
    for (int i = 0; t && i < n; i++) {
        const char *v = topic_config(t, out[i].name);
        if (v) {
            snprintf(out[i].value, sizeof(out[i].value), "%s", v);
            out[i].source = SOURCE_DYNAMIC_TOPIC;
        }
    }
    return n;
}

static int broker_configs(const broker_t *b, config_value_t *out)
{
    int n = 0;
    out[n] = (config_value_t){"broker.id", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", (int)b->cfg.broker_id);
    out[n] = (config_value_t){"num.partitions", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", b->cfg.num_partitions);
    out[n] = (config_value_t){"default.replication.factor", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", b->cfg.default_replication_factor);
    out[n] = (config_value_t){"auto.create.topics.enable", TYPE_BOOLEAN, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%s", b->cfg.auto_create_topics ? "true" : "false");
    out[n] = (config_value_t){"message.max.bytes", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", (int)b->cfg.message_max_bytes);
    out[n] = (config_value_t){"log.retention.ms", TYPE_LONG, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%" PRId64, b->cfg.log_retention_ms);
    out[n] = (config_value_t){"log.segment.bytes", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%" PRId64, b->cfg.log_segment_bytes);
    out[n] = (config_value_t){"min.insync.replicas", TYPE_INT, "", SOURCE_STATIC_BROKER};
    snprintf(out[n++].value, sizeof(out[0].value), "%d", b->cfg.min_insync_replicas);
    return n;
}

static int wanted(const kafka_value_t *keys, const char *name)
{
    if (keys->is_null)
        return 1;
    for (uint32_t i = 0; i < keys->n; i++)
        if (kv_at(keys, i)->u.s && strcmp(kv_at(keys, i)->u.s, name) == 0)
            return 1;
    return 0;
}

static int describe_resource(broker_t *b, const kafka_value_t *in, kafka_value_t *out,
                             kafka_arena_t *ra)
{
    int type = (int)KV_INT(in, DescribeConfigsResource, ResourceType);
    const char *name = KV_STR(in, DescribeConfigsResource, ResourceName);
    KV_SET_INT(out, DescribeConfigsResult, ResourceType, type);
    KV_SET_STR(ra, out, DescribeConfigsResult, ResourceName, name);
    config_value_t vals[16];
    int n = 0;
    char id[16];
    snprintf(id, sizeof(id), "%d", (int)b->cfg.broker_id);
    if (type == RESOURCE_TOPIC) {
        topic_t *t = name ? cluster_topic(b, name) : NULL;
        if (!t || !t->have_doc) {
            KV_SET_INT(out, DescribeConfigsResult, ErrorCode, KERR_UNKNOWN_TOPIC_OR_PARTITION);
            return 0;
        }
        n = topic_configs(b, t, vals);
    } else if (type == RESOURCE_BROKER && name && (!name[0] || strcmp(name, id) == 0)) {
        n = broker_configs(b, vals);
    } else {
        KV_SET_INT(out, DescribeConfigsResult, ErrorCode, KERR_INVALID_REQUEST);
        KV_SET_STR(ra, out, DescribeConfigsResult, ErrorMessage, "only topics and this broker can be described");
        return 0;
    }
    const kafka_value_t *keys = KV_GET(in, DescribeConfigsResource, ConfigurationKeys);
    uint32_t count = 0;
    for (int i = 0; i < n; i++)
        count += (uint32_t)wanted(keys, vals[i].name);
    kafka_value_t *cfgs = KV_SET_ARRAY(ra, out, DescribeConfigsResult, Configs, count);
    if (!cfgs)
        return -1;
    for (int i = 0, k = 0; i < n; i++) {
        if (!wanted(keys, vals[i].name))
            continue;
        kafka_value_t *o = kv_at(cfgs, (uint32_t)k++);
        KV_SET_STR(ra, o, DescribeConfigsResourceResult, Name, vals[i].name);
        KV_SET_STR(ra, o, DescribeConfigsResourceResult, Value, vals[i].value);
        KV_SET_INT(o, DescribeConfigsResourceResult, ReadOnly, type == RESOURCE_BROKER);
        KV_SET_INT(o, DescribeConfigsResourceResult, IsDefault, vals[i].source == SOURCE_DEFAULT);
        KV_SET_INT(o, DescribeConfigsResourceResult, ConfigSource, vals[i].source);
        KV_SET_INT(o, DescribeConfigsResourceResult, ConfigType, vals[i].type);
    }
    return 0;
}

req_status_t api_describe_configs(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const kafka_value_t *res = KV_GET(req->body, DescribeConfigsRequest, Resources);
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? KV_SET_ARRAY(ra, resp, DescribeConfigsResponse, Results, res->n) : NULL;
    if (!out)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < res->n; i++)
        if (describe_resource(b, kv_at(res, i), kv_at(out, i), ra) < 0)
            return REQ_CLOSE;
    return api_answer(c, req, resp);
}
