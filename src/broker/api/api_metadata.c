/* api_metadata.c -- Metadata: the live brokers, and for each topic asked
 * for (or all) its partitions' leader, replicas (every one of a move under
 * way) and ISR as the coordinator says. A topic that does not exist is
 * created when auto.create.topics.enable and the request allow it; the
 * answer then says LEADER_NOT_AVAILABLE until a leader is elected, as
 * Kafka's does. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/coord/coord_reassign.h"
#include "broker/core/admin.h"
#include "base/logging.h"

#include <stdlib.h>
#include <string.h>

/* Kafka's bit field of the operations allowed on the cluster resource
 * (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
 * IDEMPOTENT_WRITE); with no authorizer every supported one is allowed. */
#define CLUSTER_AUTHORIZED_OPS 0x1FA0

static int is_zero_uuid(const uint8_t *u)
{
    static const uint8_t zero[16];
    return memcmp(u, zero, 16) == 0;
}

static int metadata_partition(broker_t *b, kafka_arena_t *ra, kafka_value_t *out, const partition_t *p)
{
    /* During a move (KIP-455) every replica of it, the target's first and
     * then those being removed, as ListPartitionReassignments lists them. */
    coord_move_sets_t move;
    const int32_t *replicas = p->replicas;
    int nreplicas = p->nreplicas;
    if (p->reassigning && p->ntarget > 0) {
        coord_move_sets(p->replicas, p->nreplicas, p->target, p->ntarget, &move);
        replicas = move.replicas;
        nreplicas = move.nreplicas;
    }
    int32_t offline[2 * COORD_MAX_REPLICAS];
    int noffline = 0;
    for (int i = 0; i < nreplicas; i++)
        if (!cluster_broker_live(b, replicas[i]))
            offline[noffline++] = replicas[i];
    int leader_live = p->leader >= 0 && cluster_broker_live(b, p->leader);
    KV_SET_INT(out, MetadataResponsePartition, ErrorCode, leader_live ? KERR_NONE : KERR_LEADER_NOT_AVAILABLE);
    KV_SET_INT(out, MetadataResponsePartition, PartitionIndex, p->id);
    KV_SET_INT(out, MetadataResponsePartition, LeaderId, leader_live ? p->leader : -1);
    KV_SET_INT(out, MetadataResponsePartition, LeaderEpoch, p->leader_epoch >= 0 ? p->leader_epoch : p->isr_epoch);
    if (API_SET_INT32_ARRAY(ra, out, MetadataResponsePartition, ReplicaNodes, replicas, nreplicas) < 0 ||
        API_SET_INT32_ARRAY(ra, out, MetadataResponsePartition, IsrNodes, p->isr, p->nisr) < 0 ||
        API_SET_INT32_ARRAY(ra, out, MetadataResponsePartition, OfflineReplicas, offline, noffline) < 0)
        return -1;
    return 0;
}

static int metadata_topic_found(broker_t *b, kafka_arena_t *ra, kafka_value_t *out, const topic_t *t)
{
    int n = 0, listed = 0;
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i]) {
            listed++;
            n += t->parts[i]->have_replicas;
        }
    /* While some listed partition's replicas are still being read (a broker
     * just started, partitions just added), the topic says
     * LEADER_NOT_AVAILABLE: clients keep the partition count they know
     * then, where a short list without an error would tell them partitions
     * went away (librdkafka fails the messages queued for those). */
    KV_SET_INT(out, MetadataResponseTopic, ErrorCode, n && n == listed ? KERR_NONE : KERR_LEADER_NOT_AVAILABLE);
    KV_SET_STR(ra, out, MetadataResponseTopic, Name, t->name);
    memcpy(KV_UUID(out, MetadataResponseTopic, TopicId), t->doc.topic_id, 16);
    kafka_value_t *parts = KV_SET_ARRAY(ra, out, MetadataResponseTopic, Partitions, (uint32_t)n);
    if (!parts)
        return -1;
    uint32_t k = 0;
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i] && t->parts[i]->have_replicas && metadata_partition(b, ra, kv_at(parts, k++), t->parts[i]) < 0)
            return -1;
    return 0;
}

/* A topic asked for by name (or by id when name is NULL, v10+). */
static int metadata_topic(broker_t *b, kafka_arena_t *ra, kafka_value_t *out, int16_t version, const char *name,
                          const uint8_t *id, int may_create)
{
    /* Topic ids in requests are honoured from v12 on; Kafka rejects them
     * (and null names) in v10 and v11. */
    if (version < 12 && (!name || (id && !is_zero_uuid(id)))) {
        KV_SET_INT(out, MetadataResponseTopic, ErrorCode, KERR_INVALID_REQUEST);
        KV_SET_STR(ra, out, MetadataResponseTopic, Name, name ? name : "");
        return 0;
    }
    topic_t *t = name ? cluster_topic(b, name) : cluster_topic_by_id(b, id);
    if (t && t->have_doc)
        return metadata_topic_found(b, ra, out, t);
    int16_t error = name ? KERR_UNKNOWN_TOPIC_OR_PARTITION : KERR_UNKNOWN_TOPIC_ID;
    char why[256];
    if (name && coord_topic_name_valid(name, why, sizeof(why)) < 0)
        error = KERR_INVALID_TOPIC_EXCEPTION;
    else if (name && may_create && admin_auto_create_topic(b, name) == 0)
        error = KERR_LEADER_NOT_AVAILABLE;
    KV_SET_INT(out, MetadataResponseTopic, ErrorCode, error);
    KV_SET_STR(ra, out, MetadataResponseTopic, Name, name ? name : version >= 12 ? NULL : "");
    if (id)
        memcpy(KV_UUID(out, MetadataResponseTopic, TopicId), id, 16);
    return 0;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_id(const void *x, const void *y)
{
    return memcmp(*(const uint8_t *const *)x, *(const uint8_t *const *)y, 16);
}

/* Sorts what p holds and keeps one of each: the count kept. */
static uint32_t sort_unique(const void **p, uint32_t n, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(p, n, sizeof(*p), cmp);
    uint32_t unique = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || cmp(&p[i], &p[i - 1]) != 0)
            p[unique++] = p[i];
    return unique;
}

/* The requested topics, each name and each id once (Kafka reads both into
 * sets): a topic named a thousand times is answered once, not with a
 * thousand copies of its partitions. */
static int metadata_requested(broker_t *b, kafka_arena_t *ra, kafka_value_t *resp, const kafka_value_t *req_topics,
                              int16_t version, int may_create)
{
    uint32_t n = req_topics->n, nn = 0, ni = 0, out = 0;
    const void **names = n ? kafka_arena_alloc(ra, n * sizeof(*names)) : NULL;
    const void **ids = n ? kafka_arena_alloc(ra, n * sizeof(*ids)) : NULL;
    if (n && (!names || !ids))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const kafka_value_t *t = kv_at(req_topics, i);
        if (KV_STR(t, MetadataRequestTopic, Name))
            names[nn++] = KV_STR(t, MetadataRequestTopic, Name);
        else
            ids[ni++] = KV_UUID(t, MetadataRequestTopic, TopicId);
    }
    nn = sort_unique(names, nn, cmp_str);
    ni = sort_unique(ids, ni, cmp_id);
    kafka_value_t *topics = KV_SET_ARRAY(ra, resp, MetadataResponse, Topics, nn + ni);
    if (!topics)
        return -1;
    for (uint32_t i = 0; i < nn; i++)
        if (metadata_topic(b, ra, kv_at(topics, out++), version, names[i], NULL, may_create) < 0)
            return -1;
    for (uint32_t i = 0; i < ni; i++)
        if (metadata_topic(b, ra, kv_at(topics, out++), version, NULL, ids[i], 0) < 0)
            return -1;
    return 0;
}

static int metadata_all(broker_t *b, kafka_arena_t *ra, kafka_value_t *resp)
{
    int n = 0;
    for (int i = 0; i < b->ntopics; i++)
        n += b->topics[i]->have_doc;
    kafka_value_t *topics = KV_SET_ARRAY(ra, resp, MetadataResponse, Topics, (uint32_t)n);
    if (!topics)
        return -1;
    uint32_t k = 0;
    for (int i = 0; i < b->ntopics; i++)
        if (b->topics[i]->have_doc && metadata_topic_found(b, ra, kv_at(topics, k++), b->topics[i]) < 0)
            return -1;
    return 0;
}

static int metadata_brokers(broker_t *b, kafka_arena_t *ra, kafka_value_t *r)
{
    /* Until our own registration is seen, list ourselves so clients always
     * have somewhere to go. */
    int self_listed = cluster_broker(b, b->cfg.broker_id) != NULL;
    kafka_value_t *brokers = KV_SET_ARRAY(ra, r, MetadataResponse, Brokers, (uint32_t)(b->nbrokers + !self_listed));
    if (!brokers)
        return -1;
    uint32_t k = 0;
    for (int i = 0; i < b->nbrokers; i++, k++) {
        KV_SET_INT(kv_at(brokers, k), MetadataResponseBroker, NodeId, b->brokers[i].id);
        KV_SET_STR(ra, kv_at(brokers, k), MetadataResponseBroker, Host, b->brokers[i].ep.host);
        KV_SET_INT(kv_at(brokers, k), MetadataResponseBroker, Port, b->brokers[i].ep.port);
        if (b->brokers[i].ep.rack[0])   /* else null, as Kafka answers for a broker without broker.rack */
            KV_SET_STR(ra, kv_at(brokers, k), MetadataResponseBroker, Rack, b->brokers[i].ep.rack);
    }
    if (!self_listed) {
        KV_SET_INT(kv_at(brokers, k), MetadataResponseBroker, NodeId, b->cfg.broker_id);
        KV_SET_STR(ra, kv_at(brokers, k), MetadataResponseBroker, Host, b->adv_host);
        KV_SET_INT(kv_at(brokers, k), MetadataResponseBroker, Port, b->adv_port);
        if (b->cfg.broker_rack[0])
            KV_SET_STR(ra, kv_at(brokers, k), MetadataResponseBroker, Rack, b->cfg.broker_rack);
    }
    return 0;
}

req_status_t api_metadata(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    int16_t v = req->api_version;
    kafka_value_t *r = kv_new_struct(ra, req->api->response);
    if (!r || metadata_brokers(b, ra, r) < 0)
        return REQ_CLOSE;
    KV_SET_STR(ra, r, MetadataResponse, ClusterId, b->cluster_id);
    /* There is no controller: any broker serves admin requests by writing
     * to the coordinator, so each names itself. */
    KV_SET_INT(r, MetadataResponse, ControllerId, b->cfg.broker_id);
    if (v >= 8 && v <= 10 && KV_INT(req->body, MetadataRequest, IncludeClusterAuthorizedOperations))
        KV_SET_INT(r, MetadataResponse, ClusterAuthorizedOperations, CLUSTER_AUTHORIZED_OPS);
    /* v0: an empty list means every topic; v1+: null does. */
    const kafka_value_t *topics = KV_GET(req->body, MetadataRequest, Topics);
    int all = topics->is_null || (v == 0 && topics->n == 0);
    /* v0-v3 always create (when the broker allows), v4+ say so. */
    int may_create = b->cfg.auto_create_topics && (v < 4 || KV_INT(req->body, MetadataRequest, AllowAutoTopicCreation));
    int rc = all ? metadata_all(b, ra, r) : metadata_requested(b, ra, r, topics, v, may_create);
    if (rc < 0)
        return REQ_CLOSE;
    return broker_reply(c, req, r) < 0 ? REQ_CLOSE : REQ_DONE;
}
