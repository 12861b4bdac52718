/* api_admin.c -- CreateTopics, DeleteTopics, CreatePartitions,
 * AlterConfigs, IncrementalAlterConfigs and InitProducerId: each request
 * becomes a job of the admin service
 * (broker/core/admin.h), which writes to the coordinator on its helper
 * thread; the request waits and is answered from the job's results. As in
 * Kafka, an admin answer waits (up to the request's timeout) until the
 * change is visible: leaders elected for new partitions, deleted topics
 * gone. Only parsing, checks a request can fail before reaching the
 * coordinator, and the answers are here. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_admin_job.h"
#include "api_util.h"

#include <stdlib.h>
#include <string.h>

/* ---- waiting for the job ---- */

req_status_t api_admin_wait_for_job(broker_t *b, broker_request_t *req, admin_job_t *j, int64_t timeout_ms)
{
    if (admin_job_submit(b, j) < 0) {
        admin_job_free(j);
        return REQ_CLOSE;
    }
    req->state = j;
    req->state_free = admin_job_release;
    if (timeout_ms > 0)
        req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)timeout_ms;
    return REQ_WAIT;
}

int api_admin_job_ready(broker_t *b, broker_request_t *req)
{
    admin_job_t *j = req->state;
    if (!j->done)
        return 0;
    if (req->timed_out || admin_job_visible(b, j))
        return 1;
    req->wants_data = 1;
    return 0;
}

int16_t api_admin_item_error(broker_t *b, const broker_request_t *req, const admin_job_t *j, const admin_item_t *it,
                             const char **message)
{
    *message = it->res.error || it->skip ? it->res.message : NULL;
    if (it->res.error || it->skip)
        return it->res.error;
    if (req->timed_out && !admin_item_visible(b, j, it)) {
        *message = "the change was made; timed out waiting for it to take effect";
        return KERR_REQUEST_TIMED_OUT;
    }
    return KERR_NONE;
}

/* ---- the shape every admin request has ---- */

typedef req_status_t (*admin_start_fn)(broker_t *b, conn_t *c, broker_request_t *req);
/* Fills one element of the answer's results for one item; -1 out of arena. */
typedef int (*admin_answer_fn)(broker_t *b, const broker_request_t *req, const admin_job_t *j,
                               const admin_item_t *it, kafka_value_t *out, kafka_arena_t *ra);

/* First run: start the job. Later runs: wait until it is done and visible,
 * then answer with one result per item in the array `results`. */
static req_status_t admin_request(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra,
                                  admin_start_fn start, kv_ref_t results, admin_answer_fn answer)
{
    if (!req->state)
        return start(b, c, req);
    if (!api_admin_job_ready(b, req))
        return REQ_WAIT;
    const admin_job_t *j = req->state;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? KV_REF_SET_ARRAY(ra, resp, results, (uint32_t)j->nitems) : NULL;
    if (!out)
        return REQ_CLOSE;
    for (int i = 0; i < j->nitems; i++)
        if (answer(b, req, j, &j->items[i], kv_at(out, (uint32_t)i), ra) < 0)
            return REQ_CLOSE;
    return api_answer(c, req, resp);
}

/* ---- CreateTopics ---- */

static int copy_assignments(admin_item_t *it, const kafka_value_t *as)
{
    if (as->n == 0)
        return 0;
    int rf = (int)KV_GET(kv_at(as, 0), CreatableReplicaAssignment, BrokerIds)->n;
    if (it->partitions != -1 || it->rf != -1) {
        admin_item_refuse(it, KERR_INVALID_REQUEST, "give either partitions and replication factor or assignments");
        return -1;
    }
    it->partitions = (int)as->n;
    it->rf = rf;
    it->assignment = calloc((size_t)as->n * (size_t)(rf ? rf : 1), sizeof(int32_t));
    if (!it->assignment || rf < 1 || as->n > COORD_MAX_PARTITIONS || rf > COORD_MAX_REPLICAS) {
        admin_item_refuse(it, KERR_INVALID_REPLICA_ASSIGNMENT, "bad replica assignment");
        return -1;
    }
    for (uint32_t p = 0; p < as->n; p++) {
        const kafka_value_t *a = kv_at(as, p);
        const kafka_value_t *ids = KV_GET(a, CreatableReplicaAssignment, BrokerIds);
        int32_t index = (int32_t)KV_INT(a, CreatableReplicaAssignment, PartitionIndex);
        if (index < 0 || (uint32_t)index >= as->n || (int)ids->n != rf) {
            admin_item_refuse(it, KERR_INVALID_REPLICA_ASSIGNMENT,
                              "partitions must be numbered 0..n-1, each with the same number of replicas");
            return -1;
        }
        for (int r = 0; r < rf; r++)
            it->assignment[index * rf + r] = (int32_t)kv_at(ids, (uint32_t)r)->u.i;
    }
    return 0;
}

static void copy_configs(admin_item_t *it, const kafka_value_t *cs)
{
    if (cs->n > COORD_MAX_TOPIC_CONFIGS) {
        admin_item_refuse(it, KERR_INVALID_CONFIG, "too many configs");
        return;
    }
    it->configs = calloc(cs->n ? cs->n : 1, sizeof(*it->configs));
    if (!it->configs) {
        admin_item_refuse(it, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < cs->n; i++) {
        const char *k = KV_STR(kv_at(cs, i), CreatableTopicConfig, Name);
        const char *v = KV_STR(kv_at(cs, i), CreatableTopicConfig, Value);
        if (!k || !v || strlen(k) >= sizeof(it->configs[0].key) || strlen(v) >= sizeof(it->configs[0].value)) {
            admin_item_refuse(it, KERR_INVALID_CONFIG, "config names and values must be given and short");
            return;
        }
        snprintf(it->configs[i].key, sizeof(it->configs[i].key), "%s", k);
        snprintf(it->configs[i].value, sizeof(it->configs[i].value), "%s", v);
    }
    it->nconfigs = (int)cs->n;
}

static int duplicate_name(const admin_job_t *j, int i)
{
    for (int k = 0; k < j->nitems; k++)
        if (k != i && strcmp(j->items[k].name, j->items[i].name) == 0)
            return 1;
    return 0;
}

/* A job with one item per topic of the request, each named (the topic's
 * field `name`), and a topic named twice refused (Kafka's INVALID_REQUEST).
 * NULL out of memory. */
static admin_job_t *job_for_topics(admin_kind_t kind, const kafka_value_t *topics, kv_ref_t name,
                                   const broker_request_t *req, conn_t *c)
{
    admin_job_t *j = admin_job_new(kind, (int)topics->n, c->id, req->id);
    for (uint32_t i = 0; j && i < topics->n; i++)
        if (admin_item_set_name(&j->items[i], KV_REF_STR(kv_at(topics, i), name)) < 0) {
            admin_job_free(j);
            return NULL;
        }
    for (int i = 0; j && i < j->nitems; i++)
        if (duplicate_name(j, i))
            admin_item_refuse(&j->items[i], KERR_INVALID_REQUEST,
                              "the topic is named more than once in the request");
    return j;
}

static req_status_t create_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    const kafka_value_t *topics = KV_GET(req->body, CreateTopicsRequest, Topics);
    static const kv_ref_t name = KV_REF(CreatableTopic, Name);
    admin_job_t *j = job_for_topics(ADMIN_CREATE, topics, name, req, c);
    if (!j)
        return REQ_CLOSE;
    j->validate_only = req->api_version >= 1 && KV_INT(req->body, CreateTopicsRequest, validateOnly);
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        admin_item_t *it = &j->items[i];
        it->partitions = (int)KV_INT(t, CreatableTopic, NumPartitions);
        it->rf = (int)KV_INT(t, CreatableTopic, ReplicationFactor);
        if (!it->skip && copy_assignments(it, KV_GET(t, CreatableTopic, Assignments)) == 0)
            copy_configs(it, KV_GET(t, CreatableTopic, Configs));
    }
    return api_admin_wait_for_job(b, req, j, KV_INT(req->body, CreateTopicsRequest, timeoutMs));
}

static int create_answer_topic(broker_t *b, const broker_request_t *req, const admin_job_t *j, const admin_item_t *it,
                               kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = api_admin_item_error(b, req, j, it, &message);
    KV_SET_STR(ra, out, CreatableTopicResult, Name, it->name);
    KV_SET_INT(out, CreatableTopicResult, ErrorCode, error);
    KV_SET_STR(ra, out, CreatableTopicResult, ErrorMessage, message);
    if (error && error != KERR_REQUEST_TIMED_OUT)
        return 0;
    memcpy(KV_UUID(out, CreatableTopicResult, TopicId), it->topic_id, 16);
    KV_SET_INT(out, CreatableTopicResult, NumPartitions, it->partitions > 0 ? it->partitions : b->cfg.num_partitions);
    KV_SET_INT(out, CreatableTopicResult, ReplicationFactor, it->rf > 0 ? it->rf : b->cfg.default_replication_factor);
    kafka_value_t *cfgs = KV_SET_ARRAY(ra, out, CreatableTopicResult, Configs, (uint32_t)it->nconfigs);
    if (!cfgs)
        return -1;
    for (int i = 0; i < it->nconfigs; i++) {
        KV_SET_STR(ra, kv_at(cfgs, (uint32_t)i), CreatableTopicConfigs, Name, it->configs[i].key);
        KV_SET_STR(ra, kv_at(cfgs, (uint32_t)i), CreatableTopicConfigs, Value, it->configs[i].value);
        KV_SET_INT(kv_at(cfgs, (uint32_t)i), CreatableTopicConfigs, ConfigSource, 1);   /* DYNAMIC_TOPIC_CONFIG */
    }
    return 0;
}

req_status_t api_create_topics(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const kv_ref_t results = KV_REF(CreateTopicsResponse, Topics);
    return admin_request(b, c, req, ra, create_start, results, create_answer_topic);
}

/* ---- DeleteTopics ---- */

static req_status_t delete_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    int by_state = req->api_version >= 6;
    const kafka_value_t *list = by_state ? KV_GET(req->body, DeleteTopicsRequest, Topics)
                                         : KV_GET(req->body, DeleteTopicsRequest, TopicNames);
    admin_job_t *j = admin_job_new(ADMIN_DELETE, (int)list->n, c->id, req->id);
    if (!j)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < list->n; i++) {
        admin_item_t *it = &j->items[i];
        const char *name = by_state ? KV_STR(kv_at(list, i), DeleteTopicState, Name) : kv_at(list, i)->u.s;
        if (!name) {
            topic_t *t = cluster_topic_by_id(b, KV_UUID(kv_at(list, i), DeleteTopicState, TopicId));
            memcpy(it->topic_id, KV_UUID(kv_at(list, i), DeleteTopicState, TopicId), 16);
            if (!t) {
                admin_item_refuse(it, KERR_UNKNOWN_TOPIC_ID, "no topic has this id");
                continue;
            }
            name = t->name;
        }
        if (admin_item_set_name(it, name) < 0) {
            admin_job_free(j);
            return REQ_CLOSE;
        }
    }
    return api_admin_wait_for_job(b, req, j, KV_INT(req->body, DeleteTopicsRequest, TimeoutMs));
}

static int delete_answer_topic(broker_t *b, const broker_request_t *req, const admin_job_t *j,
                               const admin_item_t *it, kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = api_admin_item_error(b, req, j, it, &message);
    const char *name = it->name && it->name[0] ? it->name : (req->api_version >= 6 ? NULL : "");
    KV_SET_STR(ra, out, DeletableTopicResult, Name, name);
    memcpy(KV_UUID(out, DeletableTopicResult, TopicId), it->topic_id, 16);
    KV_SET_INT(out, DeletableTopicResult, ErrorCode, error);
    KV_SET_STR(ra, out, DeletableTopicResult, ErrorMessage, message);
    return 0;
}

req_status_t api_delete_topics(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const kv_ref_t results = KV_REF(DeleteTopicsResponse, Responses);
    return admin_request(b, c, req, ra, delete_start, results, delete_answer_topic);
}

/* ---- CreatePartitions ---- */

static void copy_new_assignment(admin_item_t *it, const kafka_value_t *as, int existing)
{
    if (as->is_null)
        return;
    int rf = as->n ? (int)KV_GET(kv_at(as, 0), CreatePartitionsAssignment, BrokerIds)->n : 0;
    it->rf = rf;
    it->assignment = calloc((size_t)as->n * (size_t)(rf ? rf : 1) + 1, sizeof(int32_t));
    if (!it->assignment || rf < 1 || rf > COORD_MAX_REPLICAS || (int)as->n != it->partitions - existing) {
        admin_item_refuse(it, KERR_INVALID_REPLICA_ASSIGNMENT,
                          "the assignment must give replicas for exactly the new partitions");
        return;
    }
    for (uint32_t p = 0; p < as->n; p++) {
        const kafka_value_t *ids = KV_GET(kv_at(as, p), CreatePartitionsAssignment, BrokerIds);
        if ((int)ids->n != rf) {
            admin_item_refuse(it, KERR_INVALID_REPLICA_ASSIGNMENT,
                              "every new partition needs the same number of replicas");
            return;
        }
        for (int r = 0; r < rf; r++)
            it->assignment[p * (uint32_t)rf + (uint32_t)r] = (int32_t)kv_at(ids, (uint32_t)r)->u.i;
    }
}

static req_status_t partitions_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    const kafka_value_t *topics = KV_GET(req->body, CreatePartitionsRequest, Topics);
    static const kv_ref_t name = KV_REF(CreatePartitionsTopic, Name);
    admin_job_t *j = job_for_topics(ADMIN_ADD_PARTITIONS, topics, name, req, c);
    if (!j)
        return REQ_CLOSE;
    j->validate_only = (int)KV_INT(req->body, CreatePartitionsRequest, ValidateOnly);
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        admin_item_t *it = &j->items[i];
        it->partitions = (int)KV_INT(t, CreatePartitionsTopic, Count);
        topic_t *known = cluster_topic(b, it->name);
        if (!it->skip)
            copy_new_assignment(it, KV_GET(t, CreatePartitionsTopic, Assignments), known ? known->nparts : 0);
    }
    return api_admin_wait_for_job(b, req, j, KV_INT(req->body, CreatePartitionsRequest, TimeoutMs));
}

static int partitions_answer_topic(broker_t *b, const broker_request_t *req, const admin_job_t *j,
                                   const admin_item_t *it, kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = api_admin_item_error(b, req, j, it, &message);
    KV_SET_STR(ra, out, CreatePartitionsTopicResult, Name, it->name);
    KV_SET_INT(out, CreatePartitionsTopicResult, ErrorCode, error);
    KV_SET_STR(ra, out, CreatePartitionsTopicResult, ErrorMessage, message);
    return 0;
}

req_status_t api_create_partitions(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const kv_ref_t results = KV_REF(CreatePartitionsResponse, Results);
    return admin_request(b, c, req, ra, partitions_start, results, partitions_answer_topic);
}

/* ---- AlterConfigs and IncrementalAlterConfigs ---- */

#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4

/* Kafka's names of ConfigResource.Type, for its message. */
static const char *resource_type_name(int type)
{
    switch (type) {
    case 0: return "UNKNOWN";
    case 1: return "ANY";
    case 2: return "TOPIC";
    case 3: return "GROUP";
    case 4: return "BROKER";
    case 8: return "BROKER_LOGGER";
    case 16: return "CLIENT_METRICS";
    default: return "UNKNOWN";
    }
}

/* The fields of the two requests' configs (Incremental's carry an operation). */
typedef struct {
    kv_ref_t resources, type, name, configs, config_name, config_value, validate_only;
    int incremental;
} alter_shape_t;

static const alter_shape_t ALTER_SHAPE = {
    KV_REF(AlterConfigsRequest, Resources), KV_REF(AlterConfigsResource, ResourceType),
    KV_REF(AlterConfigsResource, ResourceName), KV_REF(AlterConfigsResource, Configs),
    KV_REF(AlterableConfig, Name), KV_REF(AlterableConfig, Value), KV_REF(AlterConfigsRequest, ValidateOnly), 0,
};
static const alter_shape_t INCREMENTAL_SHAPE = {
    KV_REF(IncrementalAlterConfigsRequest, Resources), KV_REF(IncrementalAlterConfigsResource, ResourceType),
    KV_REF(IncrementalAlterConfigsResource, ResourceName), KV_REF(IncrementalAlterConfigsResource, Configs),
    KV_REF(IncrementalAlterableConfig, Name), KV_REF(IncrementalAlterableConfig, Value),
    KV_REF(IncrementalAlterConfigsRequest, ValidateOnly), 1,
};

/* One resource's configs into the item's operations; refused when there
 * are too many or a name or value is too long for the coordinator's
 * documents. */
static void copy_config_ops(admin_item_t *it, const kafka_value_t *cs, const alter_shape_t *sh)
{
    if (cs->n > COORD_MAX_TOPIC_CONFIGS) {
        admin_item_refuse(it, KERR_INVALID_REQUEST, "too many configs in one resource (at most 64)");
        return;
    }
    it->ops = calloc(cs->n ? cs->n : 1, sizeof(*it->ops));
    if (!it->ops) {
        admin_item_refuse(it, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < cs->n; i++) {
        const kafka_value_t *c = kv_at(cs, i);
        coord_config_op_t *op = &it->ops[i];
        const char *k = KV_REF_STR(c, sh->config_name), *v = KV_REF_STR(c, sh->config_value);
        if (!k || strlen(k) >= sizeof(op->key) || (v && strlen(v) >= sizeof(op->value))) {
            admin_item_refuse(it, KERR_INVALID_CONFIG, "config names and values must be given and short");
            return;
        }
        snprintf(op->key, sizeof(op->key), "%s", k);
        snprintf(op->value, sizeof(op->value), "%s", v ? v : "");
        op->null_value = v == NULL;
        op->op = sh->incremental ? (int)KV_INT(c, IncrementalAlterableConfig, ConfigOperation) : COORD_CFG_SET;
    }
    it->nops = (int)cs->n;
}

/* The resource types there are configs of: topics, brokers. A broker
 * resource may name any broker id, not only this one (Kafka's ZooKeeper
 * mode refuses another id): any broker writes the coordinator, as for
 * topics, and clients that send every AlterConfigs to the controller
 * (KafkaJS), which each kipper broker says it is, can change any broker's. */
static void alter_item(admin_item_t *it, const kafka_value_t *r, const alter_shape_t *sh)
{
    int type = (int)KV_REF_INT(r, sh->type);
    char message[160];
    if (type != RESOURCE_TOPIC && type != RESOURCE_BROKER) {
        snprintf(message, sizeof(message), "%s is only supported for topics and brokers, but resource type is %s",
                 sh->incremental ? "IncrementalAlterConfigs" : "AlterConfigs", resource_type_name(type));
        admin_item_refuse(it, KERR_INVALID_REQUEST, message);
        return;
    }
    it->entity = type == RESOURCE_TOPIC ? COORD_ENTITY_TOPIC : COORD_ENTITY_BROKER;
    it->replace = !sh->incremental;
    copy_config_ops(it, KV_REF_GET(r, sh->configs), sh);
}

static req_status_t alter_start(broker_t *b, conn_t *c, broker_request_t *req, const alter_shape_t *sh)
{
    const kafka_value_t *resources = KV_REF_GET(req->body, sh->resources);
    admin_job_t *j = admin_job_new(ADMIN_ALTER_CONFIGS, (int)resources->n, c->id, req->id);
    if (!j)
        return REQ_CLOSE;
    j->validate_only = (int)KV_REF_INT(req->body, sh->validate_only);
    for (uint32_t i = 0; i < resources->n; i++) {
        const kafka_value_t *r = kv_at(resources, i);
        if (admin_item_set_name(&j->items[i], KV_REF_STR(r, sh->name)) < 0) {
            admin_job_free(j);
            return REQ_CLOSE;
        }
        alter_item(&j->items[i], r, sh);
    }
    /* The requests carry no timeout: Kafka's default.api.timeout.ms. */
    return api_admin_wait_for_job(b, req, j, 60000);
}

static req_status_t alter_configs_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    return alter_start(b, c, req, &ALTER_SHAPE);
}

static req_status_t incremental_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    return alter_start(b, c, req, &INCREMENTAL_SHAPE);
}

static int alter_answer(broker_t *b, const broker_request_t *req, const admin_job_t *j, const admin_item_t *it,
                        kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = api_admin_item_error(b, req, j, it, &message);
    const alter_shape_t *sh = req->api_key == KAFKA_API_ALTER_CONFIGS ? &ALTER_SHAPE : &INCREMENTAL_SHAPE;
    const kafka_value_t *r = kv_at(KV_REF_GET(req->body, sh->resources), (uint32_t)(it - j->items));
    KV_SET_INT(out, AlterConfigsResourceResponse, ErrorCode, error);
    KV_SET_STR(ra, out, AlterConfigsResourceResponse, ErrorMessage, message);
    KV_SET_INT(out, AlterConfigsResourceResponse, ResourceType, KV_REF_INT(r, sh->type));
    KV_SET_STR(ra, out, AlterConfigsResourceResponse, ResourceName, it->name);
    return 0;
}

req_status_t api_alter_configs(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const kv_ref_t results = KV_REF(AlterConfigsResponse, Responses);
    return admin_request(b, c, req, ra, alter_configs_start, results, alter_answer);
}

req_status_t api_incremental_alter_configs(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const kv_ref_t results = KV_REF(IncrementalAlterConfigsResponse, Responses);
    return admin_request(b, c, req, ra, incremental_start, results, alter_answer);
}

/* ---- InitProducerId ---- */

req_status_t api_init_producer_id(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    if (KV_STR(req->body, InitProducerIdRequest, TransactionalId)) {
        /* No transaction coordinator: transactions are refused plainly. */
        KV_SET_INT(resp, InitProducerIdResponse, ErrorCode, KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        return api_answer(c, req, resp);
    }
    int64_t pid;
    int rc = admin_producer_id(b, !req->timed_out, &pid);
    if (rc < 0) {
        KV_SET_INT(resp, InitProducerIdResponse, ErrorCode, KERR_COORDINATOR_NOT_AVAILABLE);   /* retriable */
        return api_answer(c, req, resp);
    }
    if (rc > 0) {
        /* The next block is being claimed; its arrival wakes data waiters. */
        req->wants_data = 1;
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + 10000;
        return REQ_WAIT;
    }
    /* An idempotent producer gets a fresh id at epoch 0 every time, as
     * Kafka gives one without a transactional id. */
    KV_SET_INT(resp, InitProducerIdResponse, ProducerId, pid);
    KV_SET_INT(resp, InitProducerIdResponse, ProducerEpoch, 0);
    return api_answer(c, req, resp);
}
