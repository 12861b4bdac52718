/* api_configs.c -- DescribeConfigs: a topic's configs, this broker's, or the
 * dynamic defaults every broker shares (resource name ""), each with where
 * its value comes from and, when asked (IncludeSynonyms), every setting
 * behind it in priority order, as Kafka's ConfigHelper reports them:
 * DYNAMIC_TOPIC_CONFIG (/config/topics), DYNAMIC_BROKER_CONFIG
 * (/config/brokers/[id]), DYNAMIC_DEFAULT_BROKER_CONFIG
 * (/config/brokers/<default>), STATIC_BROKER_CONFIG (server.properties) and
 * DEFAULT_CONFIG (Kafka's default). AlterConfigs and IncrementalAlterConfigs
 * are api_admin.c's (they are admin jobs). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "base/alloc.h"
#include "broker/coord/coord_config.h"
#include "broker/core/broker_config_defs.h"
#include "broker/core/dynamic_config.h"
#include "broker/core/log_dirs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
/* ConfigSource; the levels are tried in this order. */
enum { SRC_TOPIC = 1, SRC_DYNAMIC_BROKER = 2, SRC_DYNAMIC_DEFAULT = 3, SRC_STATIC = 4, SRC_DEFAULT = 5 };
#define SYNONYMS_MAX 16
#define ENTRIES_MAX 320   /* every broker config of broker_config_defs.c */

typedef struct {
    const char *name, *value;   /* both outlive the handler's run */
    int source;
} synonym_t;

/* One config of the answer. */
typedef struct {
    const char *name;
    char value[1024];
    int value_null;
    int type;                   /* COORD_CFG_* */
    int read_only;
    int sensitive;              /* a password: no value, here or in the synonyms */
    synonym_t syn[SYNONYMS_MAX];
    int nsyn;
} entry_t;

/* ---- where each setting comes from ---- */

/* name's value at one broker level; at the last, Kafka's default, which
 * the table has for every broker config behind a topic config (a NULL
 * default is none, as Kafka leaves it out). */
static const char *level_value(const broker_t *b, int source, const char *name)
{
    const coord_config_def_t *d;
    switch (source) {
    case SRC_DYNAMIC_BROKER: return dynamic_config_value(b, DYNAMIC_BROKER, name);
    case SRC_DYNAMIC_DEFAULT: return dynamic_config_value(b, DYNAMIC_DEFAULT, name);
    case SRC_STATIC: return broker_config_static_value(&b->cfg, name);
    default:
        d = broker_config_def(name);
        return d ? d->dflt : NULL;
    }
}

/* Kafka's configSynonyms: every name of the setting at each level, highest
 * level first, from the first entry that carries the setting's own name
 * (names[0]) on. levels: bits of the sources looked at. */
static void broker_synonyms(const broker_t *b, const char *const *names, unsigned levels, entry_t *e)
{
    int start = e->nsyn;
    for (int src = SRC_DYNAMIC_BROKER; src <= SRC_DEFAULT; src++) {
        for (int k = 0; (levels & (1u << src)) && k < COORD_SYNONYMS_MAX && names[k]; k++) {
            const char *v = level_value(b, src, names[k]);
            if (v && e->nsyn < SYNONYMS_MAX)
                e->syn[e->nsyn++] = (synonym_t){names[k], v, src};
        }
    }
    int drop = start;
    while (drop < e->nsyn && strcmp(e->syn[drop].name, names[0]) != 0)
        drop++;
    memmove(&e->syn[start], &e->syn[drop], sizeof(e->syn[0]) * (size_t)(e->nsyn - drop));
    e->nsyn -= drop - start;
}

#define ALL_BROKER_LEVELS ((1u << SRC_DYNAMIC_BROKER) | (1u << SRC_DYNAMIC_DEFAULT) | (1u << SRC_STATIC) | (1u << SRC_DEFAULT))

/* ---- topics ---- */

/* What the topic's setting is without an override: the broker's, as its
 * replicas' logs have it now. */
static void broker_side_value(const broker_t *b, const coord_config_def_t *d, char *out, size_t n)
{
    partition_log_config_t lc;
    log_dirs_config_for(b, NULL, &lc);
    const char *name = d->name;
    if (strcmp(name, "retention.ms") == 0)
        snprintf(out, n, "%" PRId64, lc.retention_ms);
    else if (strcmp(name, "retention.bytes") == 0)
        snprintf(out, n, "%" PRId64, lc.retention_bytes);
    else if (strcmp(name, "segment.bytes") == 0)
        snprintf(out, n, "%" PRId64, lc.segment_bytes);
    else if (strcmp(name, "segment.ms") == 0)
        snprintf(out, n, "%" PRId64, lc.segment_ms);
    else if (strcmp(name, "max.message.bytes") == 0)
        snprintf(out, n, "%d", (int)lc.max_batch_bytes);
    else if (strcmp(name, "min.insync.replicas") == 0)
        snprintf(out, n, "%d", b->cfg.min_insync_replicas);
    else if (strcmp(name, "unclean.leader.election.enable") == 0)
        snprintf(out, n, "%s", b->cfg.unclean_leader_election ? "true" : "false");
    else if (strcmp(name, "message.timestamp.type") == 0)
        snprintf(out, n, "%s", b->cfg.log_append_time ? "LogAppendTime" : "CreateTime");
    else
        snprintf(out, n, "%s", d->dflt ? d->dflt : "");
}

static int topic_entries(const broker_t *b, const topic_t *t, entry_t *out)
{
    const coord_config_def_t *d;
    int n = 0;
    for (size_t i = 0; (d = coord_config_def_at(COORD_ENTITY_TOPIC, i)) != NULL && n < ENTRIES_MAX; i++) {
        entry_t *e = &out[n++];
        e->name = d->name;
        e->type = d->type;
        const char *v = topic_config(t, d->name);
        if (v) {
            snprintf(e->value, sizeof(e->value), "%s", v);
            e->syn[e->nsyn++] = (synonym_t){d->name, v, SRC_TOPIC};
        }
        if (d->synonyms[0])
            broker_synonyms(b, d->synonyms, ALL_BROKER_LEVELS, e);
        /* Without an override a config kipper acts on has the value the
         * broker applies; any other the broker setting's, as Kafka has it. */
        if (!v && (d->acted_on || e->nsyn == 0))
            broker_side_value(b, d, e->value, sizeof(e->value));
        else if (!v)
            snprintf(e->value, sizeof(e->value), "%s", e->syn[0].value);
    }
    return n;
}

/* ---- brokers ---- */

/* The keys whose default is kipper's own (docs/configuration.md): what is in force,
 * reported as the default. 0 for every other key. */
static int own_default(const broker_t *b, const char *name, char *out, size_t n)
{
    if (strcmp(name, "log.flush.interval.ms") == 0)
        snprintf(out, n, "%" PRId64, b->cfg.log_flush_interval_ms);
    else if (strcmp(name, "queued.max.request.bytes") == 0)
        snprintf(out, n, "%" PRId64, b->cfg.queued_max_request_bytes);
    else
        return 0;
    return 1;
}

/* Every broker config of Kafka (broker_config_defs.c): where kipper applies
 * it on a running broker (coord_config.h's broker table) from every level,
 * otherwise from server.properties or Kafka's default; a password is
 * reported set or not, never with its value. */
static int broker_entries(const broker_t *b, entry_t *out)
{
    const coord_config_def_t *d;
    int n = 0;
    for (size_t i = 0; (d = broker_config_def_at(i)) != NULL && n < ENTRIES_MAX; i++) {
        entry_t *e = &out[n++];
        e->name = d->name;
        e->type = d->type;
        e->read_only = d->update_mode == COORD_MODE_READ_ONLY;
        e->sensitive = d->type == COORD_CFG_PASSWORD;
        const char *self[] = {d->name, NULL};
        unsigned levels = coord_config_def(COORD_ENTITY_BROKER, d->name)
                              ? ALL_BROKER_LEVELS
                              : (1u << SRC_STATIC) | (1u << SRC_DEFAULT);
        broker_synonyms(b, d->synonyms[0] ? d->synonyms : self, levels, e);
        int defaulted = e->nsyn == 0 || e->syn[0].source == SRC_DEFAULT;
        if (defaulted && own_default(b, d->name, e->value, sizeof(e->value))) {
            e->nsyn = 0;
            e->syn[e->nsyn++] = (synonym_t){d->name, e->value, SRC_DEFAULT};
            continue;
        }
        e->value_null = e->nsyn == 0 || e->sensitive;
        snprintf(e->value, sizeof(e->value), "%s", e->value_null ? "" : e->syn[0].value);
    }
    return n;
}

/* The dynamic defaults every broker shares (resource name ""): only the
 * configs set there, each with its lower-priority names set there too. */
static int default_entries(const broker_t *b, entry_t *out)
{
    const coord_config_def_t *d;
    unsigned levels = 1u << SRC_DYNAMIC_DEFAULT;
    int n = 0;
    for (size_t i = 0; (d = coord_config_def_at(COORD_ENTITY_BROKER, i)) != NULL && n < ENTRIES_MAX; i++) {
        entry_t *e = &out[n];
        memset(e, 0, sizeof(*e));
        e->name = d->name;
        e->type = d->type;
        broker_synonyms(b, d->synonyms, levels, e);
        if (e->nsyn == 0 || e->syn[0].source != SRC_DYNAMIC_DEFAULT)
            continue;
        snprintf(e->value, sizeof(e->value), "%s", e->syn[0].value);
        n++;
    }
    return n;
}

/* ---- the answer ---- */

static int wanted(const kafka_value_t *keys, const char *name)
{
    if (keys->is_null)
        return 1;
    for (uint32_t i = 0; i < keys->n; i++)
        if (kv_at(keys, i)->u.s && strcmp(kv_at(keys, i)->u.s, name) == 0)
            return 1;
    return 0;
}

static int put_entry(const broker_request_t *req, const entry_t *e, kafka_value_t *o, kafka_arena_t *ra)
{
    int source = e->nsyn ? e->syn[0].source : SRC_DEFAULT;
    int with_synonyms = req->api_version >= 1 && KV_INT(req->body, DescribeConfigsRequest, IncludeSynonyms);
    KV_SET_STR(ra, o, DescribeConfigsResourceResult, Name, e->name);
    KV_SET_STR(ra, o, DescribeConfigsResourceResult, Value, e->value_null ? NULL : e->value);
    KV_SET_INT(o, DescribeConfigsResourceResult, ReadOnly, e->read_only);
    KV_SET_INT(o, DescribeConfigsResourceResult, IsSensitive, e->sensitive);
    KV_SET_INT(o, DescribeConfigsResourceResult, IsDefault, source == SRC_DEFAULT);
    KV_SET_INT(o, DescribeConfigsResourceResult, ConfigSource, source);
    KV_SET_INT(o, DescribeConfigsResourceResult, ConfigType, e->type);
    KV_SET_STR(ra, o, DescribeConfigsResourceResult, Documentation, NULL);
    kafka_value_t *syn = KV_SET_ARRAY(ra, o, DescribeConfigsResourceResult, Synonyms,
                                      with_synonyms ? (uint32_t)e->nsyn : 0u);
    if (!syn)
        return -1;
    for (int i = 0; with_synonyms && i < e->nsyn; i++) {
        kafka_value_t *s = kv_at(syn, (uint32_t)i);
        KV_SET_STR(ra, s, DescribeConfigsSynonym, Name, e->syn[i].name);
        KV_SET_STR(ra, s, DescribeConfigsSynonym, Value, e->sensitive ? NULL : e->syn[i].value);
        KV_SET_INT(s, DescribeConfigsSynonym, Source, e->syn[i].source);
    }
    return 0;
}

static int refuse(kafka_value_t *out, kafka_arena_t *ra, int16_t error, const char *message)
{
    KV_SET_INT(out, DescribeConfigsResult, ErrorCode, error);
    KV_SET_STR(ra, out, DescribeConfigsResult, ErrorMessage, message);
    return 0;
}

/* The entries of one resource; -1 with the resource refused. */
static int resource_entries(broker_t *b, int type, const char *name, entry_t *vals, kafka_value_t *out,
                            kafka_arena_t *ra)
{
    char id[16], message[300];
    snprintf(id, sizeof(id), "%d", (int)b->cfg.broker_id);
    if (type == RESOURCE_TOPIC) {
        topic_t *t = name ? cluster_topic(b, name) : NULL;
        if (!t || !t->have_doc) {
            snprintf(message, sizeof(message), "The topic '%.249s' does not exist.", name ? name : "");
            return refuse(out, ra, KERR_UNKNOWN_TOPIC_OR_PARTITION, message), -1;
        }
        return topic_entries(b, t, vals);
    }
    if (type == RESOURCE_BROKER && name && !name[0])
        return default_entries(b, vals);
    if (type == RESOURCE_BROKER && name && strcmp(name, id) == 0)
        return broker_entries(b, vals);
    if (type == RESOURCE_BROKER)
        snprintf(message, sizeof(message), "Unexpected broker id, expected %s or empty string, but received %.200s", id,
                 name ? name : "null");
    else
        snprintf(message, sizeof(message), "Only topics and brokers have configs here, not resource type %d", type);
    return refuse(out, ra, KERR_INVALID_REQUEST, message), -1;
}

static int describe_resource(broker_t *b, const broker_request_t *req, const kafka_value_t *in, kafka_value_t *out,
                             kafka_arena_t *ra, entry_t *vals)
{
    int type = (int)KV_INT(in, DescribeConfigsResource, ResourceType);
    const char *name = KV_STR(in, DescribeConfigsResource, ResourceName);
    KV_SET_INT(out, DescribeConfigsResult, ResourceType, type);
    KV_SET_STR(ra, out, DescribeConfigsResult, ResourceName, name);
    memset(vals, 0, sizeof(*vals) * ENTRIES_MAX);
    int n = resource_entries(b, type, name, vals, out, ra);
    if (n < 0)
        return 0;
    const kafka_value_t *keys = KV_GET(in, DescribeConfigsResource, ConfigurationKeys);
    uint32_t count = 0;
    for (int i = 0; i < n; i++)
        count += (uint32_t)wanted(keys, vals[i].name);
    kafka_value_t *cfgs = KV_SET_ARRAY(ra, out, DescribeConfigsResult, Configs, count);
    if (!cfgs)
        return -1;
    for (int i = 0, k = 0; i < n; i++)
        if (wanted(keys, vals[i].name) && put_entry(req, &vals[i], kv_at(cfgs, (uint32_t)k++), ra) < 0)
            return -1;
    return 0;
}

req_status_t api_describe_configs(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const kafka_value_t *res = KV_GET(req->body, DescribeConfigsRequest, Resources);
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? KV_SET_ARRAY(ra, resp, DescribeConfigsResponse, Results, res->n) : NULL;
    if (!out)
        return REQ_CLOSE;
    entry_t *vals = xcalloc(ENTRIES_MAX, sizeof(*vals));
    int rc = 0;
    for (uint32_t i = 0; i < res->n && rc == 0; i++)
        rc = describe_resource(b, req, kv_at(res, i), kv_at(out, i), ra, vals);
    free(vals);
    return rc < 0 ? REQ_CLOSE : api_answer(c, req, resp);
}
