/* api_admin.c -- CreateTopics, DeleteTopics, CreatePartitions, topic
 * auto-creation, and the producer-id blocks behind InitProducerId: work that
 * writes to the coordinator. It runs on the `admin` helper thread with the
 * ZooKeeper client's synchronous calls (coord_admin.h, shared with `kipper
 * topics`), and comes back as a wake-up of the waiting request. As in Kafka,
 * an admin answer waits (up to the request's timeout) until the change is
 * visible: leaders elected for new partitions, deleted topics gone. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/coord/coord_admin.h"
#include "base/logging.h"

#include <stdlib.h>
#include <string.h>

#define PRODUCER_ID_BLOCK 1000

typedef enum { ADMIN_CREATE, ADMIN_DELETE, ADMIN_ADD_PARTITIONS, ADMIN_PRODUCER_IDS } admin_kind_t;

typedef struct {
    char *name;                     /* as the client sent it (never cut short) */
    int partitions, rf;
    int32_t *assignment;            /* partitions * rf ids, or NULL */
    coord_config_entry_t *configs;
    int nconfigs;
    int skip;                       /* refused before reaching the coordinator */
    coord_admin_result_t res;
    uint8_t topic_id[16];
} admin_item_t;

typedef struct {
    broker_t *b;
    zhandle_t *zh;
    admin_kind_t kind;
    int validate_only;
    admin_item_t *items;
    int nitems;
    uint64_t conn_id, request_id;   /* 0: nobody waits */
    int done, orphaned;
    int64_t pid_start, pid_end;     /* ADMIN_PRODUCER_IDS */
} admin_job_t;

static void job_free(admin_job_t *j)
{
    for (int i = 0; i < j->nitems; i++) {
        free(j->items[i].name);
        free(j->items[i].assignment);
        free(j->items[i].configs);
    }
    free(j->items);
    free(j);
}

/* state_free of a waiting request: a job still on the thread is freed by
 * its done callback instead. */
static void job_release(void *arg)
{
    admin_job_t *j = arg;
    if (j->done)
        job_free(j);
    else
        j->orphaned = 1;
}

/* ---- the helper thread ---- */

/* Kafka's /latest_producer_id_block: the next block after the last one
 * handed out, claimed with a conditional write. */
static void claim_producer_ids(admin_job_t *j)
{
    char data[COORD_DOC_MAX], err[256], doc[512];
    for (int attempt = 0; attempt < 10; attempt++) {
        int len = sizeof(data);
        struct Stat st;
        int rc = zoo_get(j->zh, "/latest_producer_id_block", 0, data, &len, &st);
        int64_t start = 0, end = -1;
        if (rc == ZOK && coord_producer_block_parse(data, len < 0 ? 0 : (size_t)len, &start, &end, err,
                                                    sizeof(err)) < 0) {
            log_error("/latest_producer_id_block: %s", err);
            return;
        }
        if (rc != ZOK && rc != ZNONODE) {
            log_warn("cannot read /latest_producer_id_block: %s", zerror(rc));
            return;
        }
        int n = coord_producer_block_write(doc, sizeof(doc), j->b->cfg.broker_id, end + 1, end + PRODUCER_ID_BLOCK);
        rc = rc == ZNONODE ? zoo_create(j->zh, "/latest_producer_id_block", doc, n, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0)
                           : zoo_set(j->zh, "/latest_producer_id_block", doc, n, st.version);
        if (rc == ZOK) {
            j->pid_start = end + 1;
            j->pid_end = end + PRODUCER_ID_BLOCK + 1;
            return;
        }
        if (rc != ZBADVERSION && rc != ZNODEEXISTS) {
            log_warn("cannot claim producer ids: %s", zerror(rc));
            return;
        }
    }
}

static void job_run(void *arg)
{
    admin_job_t *j = arg;
    const broker_config_t *cfg = &j->b->cfg;
    if (j->kind == ADMIN_PRODUCER_IDS) {
        claim_producer_ids(j);
        return;
    }
    for (int i = 0; i < j->nitems; i++) {
        admin_item_t *it = &j->items[i];
        if (it->skip)
            continue;
        if (j->kind == ADMIN_CREATE)
            coord_admin_create_topic(j->zh, it->name, it->partitions, it->rf, it->assignment, cfg->num_partitions,
                                     cfg->default_replication_factor, it->configs, it->nconfigs, j->validate_only,
                                     it->topic_id, &it->res);
        else if (j->kind == ADMIN_DELETE)
            coord_admin_delete_topic(j->zh, it->name, &it->res);
        else
            coord_admin_add_partitions(j->zh, it->name, it->partitions, it->assignment, it->rf, j->validate_only,
                                       &it->res);
    }
}

static void job_done(void *arg)
{
    admin_job_t *j = arg;
    j->done = 1;
    broker_t *b = j->b;
    if (j->kind == ADMIN_PRODUCER_IDS) {
        b->pid_fetching = 0;
        if (j->pid_end > j->pid_start) {
            b->pid_next = j->pid_start;
            b->pid_end = j->pid_end;
        }
        broker_wake_data_waiters(b);   /* InitProducerId requests wait as data waiters */
        job_free(j);
        return;
    }
    for (int i = 0; i < j->nitems; i++)
        if (j->items[i].res.error && !j->conn_id)
            log_warn("auto-creating topic %s: %s", j->items[i].name, j->items[i].res.message);
    if (j->orphaned || !j->conn_id)
        job_free(j);
    else
        broker_wake_request(b, j->conn_id, j->request_id);
}

static int job_submit(broker_t *b, admin_job_t *j)
{
    j->b = b;
    j->zh = coord_handle(b->coord);
    return worker_submit(b->admin, job_run, job_done, j);
}

/* The item's topic name, copied whole (a name too long for Kafka is refused
 * by coord_admin, not cut short into another topic's name). */
static int set_name(admin_item_t *it, const char *name)
{
    free(it->name);
    it->name = strdup(name ? name : "");
    return it->name ? 0 : -1;
}

static admin_job_t *job_new(admin_kind_t kind, int nitems, const broker_request_t *req, conn_t *c)
{
    admin_job_t *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->kind = kind;
    j->items = calloc((size_t)(nitems ? nitems : 1), sizeof(*j->items));
    if (!j->items) {
        free(j);
        return NULL;
    }
    j->nitems = nitems;
    if (req) {
        j->conn_id = c->id;
        j->request_id = req->id;
    }
    return j;
}

/* Starts the job for a request that will wait for it. */
static req_status_t wait_for_job(broker_t *b, broker_request_t *req, admin_job_t *j, int64_t timeout_ms)
{
    if (job_submit(b, j) < 0) {
        job_free(j);
        return REQ_CLOSE;
    }
    req->state = j;
    req->state_free = job_release;
    if (timeout_ms > 0)
        req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)timeout_ms;
    return REQ_WAIT;
}

int admin_auto_create_topic(broker_t *b, const char *name)
{
    admin_job_t *j = job_new(ADMIN_CREATE, 1, NULL, NULL);
    if (!j)
        return -1;
    j->items[0].partitions = j->items[0].rf = -1;
    if (set_name(&j->items[0], name) < 0 || job_submit(b, j) < 0) {
        job_free(j);
        return -1;
    }
    log_info("auto-creating topic %s", name);
    return 0;
}

void admin_stop(broker_t *b)
{
    worker_destroy(b->admin);   /* finishes what is queued */
    b->admin = NULL;
}

/* ---- visibility: what the answer waits for ---- */

static int topic_led(broker_t *b, const char *name, int partitions)
{
    topic_t *t = cluster_topic(b, name);
    if (!t || !t->have_doc || t->nparts < partitions)
        return 0;
    for (int i = 0; i < partitions; i++)
        if (!t->parts[i] || t->parts[i]->leader < 0)
            return 0;
    return 1;
}

/* The item's change is visible in our view of the cluster (or there is
 * none to wait for). */
static int item_visible(broker_t *b, const admin_job_t *j, const admin_item_t *it)
{
    if (it->skip || it->res.error || j->validate_only)
        return 1;
    if (j->kind == ADMIN_DELETE)
        return cluster_topic(b, it->name) == NULL;
    int partitions = it->partitions > 0 ? it->partitions : b->cfg.num_partitions;
    return topic_led(b, it->name, partitions);
}

static int job_visible(broker_t *b, const admin_job_t *j)
{
    for (int i = 0; i < j->nitems; i++)
        if (!item_visible(b, j, &j->items[i]))
            return 0;
    return 1;
}

/* 1 when the answer can be built now; 0 after arranging to wait. */
static int job_ready(broker_t *b, broker_request_t *req)
{
    admin_job_t *j = req->state;
    if (!j->done)
        return 0;
    if (req->timed_out || job_visible(b, j))
        return 1;
    req->wants_data = 1;
    return 0;
}

static int16_t item_error(broker_t *b, const broker_request_t *req, const admin_job_t *j, const admin_item_t *it,
                          const char **message)
{
    *message = it->res.error || it->skip ? it->res.message : NULL;
    if (it->res.error || it->skip)
        return it->res.error;
    if (req->timed_out && !item_visible(b, j, it)) {
        *message = "the change was made; timed out waiting for it to take effect";
        return KERR_REQUEST_TIMED_OUT;
    }
    return KERR_NONE;
}

static void refuse_item(admin_item_t *it, int16_t error, const char *message)
{
    it->skip = 1;
    it->res.error = error;
    snprintf(it->res.message, sizeof(it->res.message), "%s", message);
}

/* ---- the shape every admin request has ---- */

typedef req_status_t (*admin_start_fn)(broker_t *b, conn_t *c, broker_request_t *req);
/* Fills one element of the answer's results for one item; -1 out of arena. */
typedef int (*admin_answer_fn)(broker_t *b, const broker_request_t *req, const admin_job_t *j,
                               const admin_item_t *it, kafka_value_t *out, kafka_arena_t *ra);

/* First run: start the job. Later runs: wait until it is done and visible,
 * then answer with one result per item in the named array. */
static req_status_t admin_request(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra,
                                  admin_start_fn start, const char *results, admin_answer_fn answer)
{
    if (!req->state)
        return start(b, c, req);
    if (!job_ready(b, req))
        return REQ_WAIT;
    const admin_job_t *j = req->state;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *out = resp ? kv_set_array(ra, resp, results, (uint32_t)j->nitems) : NULL;
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
    int rf = (int)kv_get(kv_at(as, 0), "BrokerIds")->n;
    if (it->partitions != -1 || it->rf != -1) {
        refuse_item(it, KERR_INVALID_REQUEST, "give either partitions and replication factor or assignments");
        return -1;
    }
    it->partitions = (int)as->n;
    it->rf = rf;
    it->assignment = calloc((size_t)as->n * (size_t)(rf ? rf : 1), sizeof(int32_t));
    if (!it->assignment || rf < 1 || as->n > COORD_MAX_PARTITIONS || rf > COORD_MAX_REPLICAS) {
        refuse_item(it, 39, "bad replica assignment");
        return -1;
    }
    for (uint32_t p = 0; p < as->n; p++) {
        const kafka_value_t *a = kv_at(as, p);
        const kafka_value_t *ids = kv_get(a, "BrokerIds");
        int32_t index = (int32_t)kv_int(a, "PartitionIndex");
        if (index < 0 || (uint32_t)index >= as->n || (int)ids->n != rf) {
            refuse_item(it, 39, "partitions must be numbered 0..n-1, each with the same number of replicas");
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
        refuse_item(it, 40, "too many configs");
        return;
    }
    it->configs = calloc(cs->n ? cs->n : 1, sizeof(*it->configs));
    if (!it->configs) {
        refuse_item(it, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < cs->n; i++) {
        const char *k = kv_str(kv_at(cs, i), "Name"), *v = kv_str(kv_at(cs, i), "Value");
        if (!k || !v || strlen(k) >= sizeof(it->configs[0].key) || strlen(v) >= sizeof(it->configs[0].value)) {
            refuse_item(it, 40, "config names and values must be given and short");
            return;
        }
        snprintf(it->configs[i].key, sizeof(it->configs[i].key), "%s", k);
        snprintf(it->configs[i].value, sizeof(it->configs[i].value), "%s", v);
    }
    it->nconfigs = (int)cs->n;
}

static int duplicate_name(const kafka_value_t *topics, uint32_t i)
{
    for (uint32_t k = 0; k < topics->n; k++)
        if (k != i && strcmp(kv_str(kv_at(topics, k), "Name"), kv_str(kv_at(topics, i), "Name")) == 0)
            return 1;
    return 0;
}

/* A job with one item per topic of the request, each named, and a topic
 * named twice refused (Kafka's INVALID_REQUEST). NULL out of memory. */
static admin_job_t *job_for_topics(admin_kind_t kind, const kafka_value_t *topics, const broker_request_t *req,
                                   conn_t *c)
{
    admin_job_t *j = job_new(kind, (int)topics->n, req, c);
    for (uint32_t i = 0; j && i < topics->n; i++) {
        admin_item_t *it = &j->items[i];
        if (set_name(it, kv_str(kv_at(topics, i), "Name")) < 0) {
            job_free(j);
            return NULL;
        }
        if (duplicate_name(topics, i))
            refuse_item(it, KERR_INVALID_REQUEST, "the topic is named more than once in the request");
    }
    return j;
}

static req_status_t create_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    const kafka_value_t *topics = kv_get(req->body, "Topics");
    admin_job_t *j = job_for_topics(ADMIN_CREATE, topics, req, c);
    if (!j)
        return REQ_CLOSE;
    j->validate_only = req->api_version >= 1 && kv_int(req->body, "validateOnly");
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        admin_item_t *it = &j->items[i];
        it->partitions = (int)kv_int(t, "NumPartitions");
        it->rf = (int)kv_int(t, "ReplicationFactor");
        if (!it->skip && copy_assignments(it, kv_get(t, "Assignments")) == 0)
            copy_configs(it, kv_get(t, "Configs"));
    }
    return wait_for_job(b, req, j, kv_int(req->body, "timeoutMs"));
}

static int create_answer_topic(broker_t *b, const broker_request_t *req, const admin_job_t *j, const admin_item_t *it,
                               kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = item_error(b, req, j, it, &message);
    kv_set_str(ra, out, "Name", it->name);
    kv_set_int(out, "ErrorCode", error);
    kv_set_str(ra, out, "ErrorMessage", message);
    if (error && error != KERR_REQUEST_TIMED_OUT)
        return 0;
    memcpy(kv_get(out, "TopicId")->u.uuid, it->topic_id, 16);
    kv_set_int(out, "NumPartitions", it->partitions > 0 ? it->partitions : b->cfg.num_partitions);
    kv_set_int(out, "ReplicationFactor", it->rf > 0 ? it->rf : b->cfg.default_replication_factor);
    kafka_value_t *cfgs = kv_set_array(ra, out, "Configs", (uint32_t)it->nconfigs);
    if (!cfgs)
        return -1;
    for (int i = 0; i < it->nconfigs; i++) {
        kv_set_str(ra, kv_at(cfgs, (uint32_t)i), "Name", it->configs[i].key);
        kv_set_str(ra, kv_at(cfgs, (uint32_t)i), "Value", it->configs[i].value);
        kv_set_int(kv_at(cfgs, (uint32_t)i), "ConfigSource", 1);   /* DYNAMIC_TOPIC_CONFIG */
    }
    return 0;
}

req_status_t api_create_topics(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    return admin_request(b, c, req, ra, create_start, "Topics", create_answer_topic);
}

/* ---- DeleteTopics ---- */

static req_status_t delete_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    int by_state = req->api_version >= 6;
    const kafka_value_t *list = kv_get(req->body, by_state ? "Topics" : "TopicNames");
    admin_job_t *j = job_new(ADMIN_DELETE, (int)list->n, req, c);
    if (!j)
        return REQ_CLOSE;
    for (uint32_t i = 0; i < list->n; i++) {
        admin_item_t *it = &j->items[i];
        const char *name = by_state ? kv_str(kv_at(list, i), "Name") : kv_at(list, i)->u.s;
        if (!name) {
            topic_t *t = cluster_topic_by_id(b, kv_get(kv_at(list, i), "TopicId")->u.uuid);
            memcpy(it->topic_id, kv_get(kv_at(list, i), "TopicId")->u.uuid, 16);
            if (!t) {
                refuse_item(it, KERR_UNKNOWN_TOPIC_ID, "no topic has this id");
                continue;
            }
            name = t->name;
        }
        if (set_name(it, name) < 0) {
            job_free(j);
            return REQ_CLOSE;
        }
    }
    return wait_for_job(b, req, j, kv_int(req->body, "TimeoutMs"));
}

static int delete_answer_topic(broker_t *b, const broker_request_t *req, const admin_job_t *j,
                               const admin_item_t *it, kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = item_error(b, req, j, it, &message);
    kv_set_str(ra, out, "Name", it->name && it->name[0] ? it->name : (req->api_version >= 6 ? NULL : ""));
    memcpy(kv_get(out, "TopicId")->u.uuid, it->topic_id, 16);
    kv_set_int(out, "ErrorCode", error);
    kv_set_str(ra, out, "ErrorMessage", message);
    return 0;
}

req_status_t api_delete_topics(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    return admin_request(b, c, req, ra, delete_start, "Responses", delete_answer_topic);
}

/* ---- CreatePartitions ---- */

static void copy_new_assignment(admin_item_t *it, const kafka_value_t *as, int existing)
{
    if (as->is_null)
        return;
    int rf = as->n ? (int)kv_get(kv_at(as, 0), "BrokerIds")->n : 0;
    it->rf = rf;
    it->assignment = calloc((size_t)as->n * (size_t)(rf ? rf : 1) + 1, sizeof(int32_t));
    if (!it->assignment || rf < 1 || rf > COORD_MAX_REPLICAS || (int)as->n != it->partitions - existing) {
        refuse_item(it, 39, "the assignment must give replicas for exactly the new partitions");
        return;
    }
    for (uint32_t p = 0; p < as->n; p++) {
        const kafka_value_t *ids = kv_get(kv_at(as, p), "BrokerIds");
        if ((int)ids->n != rf) {
            refuse_item(it, 39, "every new partition needs the same number of replicas");
            return;
        }
        for (int r = 0; r < rf; r++)
            it->assignment[p * (uint32_t)rf + (uint32_t)r] = (int32_t)kv_at(ids, (uint32_t)r)->u.i;
    }
}

static req_status_t partitions_start(broker_t *b, conn_t *c, broker_request_t *req)
{
    const kafka_value_t *topics = kv_get(req->body, "Topics");
    admin_job_t *j = job_for_topics(ADMIN_ADD_PARTITIONS, topics, req, c);
    if (!j)
        return REQ_CLOSE;
    j->validate_only = (int)kv_int(req->body, "ValidateOnly");
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        admin_item_t *it = &j->items[i];
        it->partitions = (int)kv_int(t, "Count");
        topic_t *known = cluster_topic(b, it->name);
        if (!it->skip)
            copy_new_assignment(it, kv_get(t, "Assignments"), known ? known->nparts : 0);
    }
    return wait_for_job(b, req, j, kv_int(req->body, "TimeoutMs"));
}

static int partitions_answer_topic(broker_t *b, const broker_request_t *req, const admin_job_t *j,
                                   const admin_item_t *it, kafka_value_t *out, kafka_arena_t *ra)
{
    const char *message;
    int16_t error = item_error(b, req, j, it, &message);
    kv_set_str(ra, out, "Name", it->name);
    kv_set_int(out, "ErrorCode", error);
    kv_set_str(ra, out, "ErrorMessage", message);
    return 0;
}

req_status_t api_create_partitions(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    return admin_request(b, c, req, ra, partitions_start, "Results", partitions_answer_topic);
}

/* ---- InitProducerId ---- */

static int claim_more_producer_ids(broker_t *b)
{
    if (b->pid_fetching)
        return 0;
    admin_job_t *j = job_new(ADMIN_PRODUCER_IDS, 0, NULL, NULL);
    if (!j || job_submit(b, j) < 0) {
        if (j)
            job_free(j);
        return -1;
    }
    b->pid_fetching = 1;
    return 0;
}

req_status_t api_init_producer_id(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    if (kv_str(req->body, "TransactionalId")) {
        /* No transaction coordinator: transactions are refused plainly. */
        kv_set_int(resp, "ErrorCode", KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        return api_answer(c, req, resp);
    }
    if (b->pid_next >= b->pid_end) {
        if (req->timed_out || claim_more_producer_ids(b) < 0) {
            kv_set_int(resp, "ErrorCode", 15);   /* COORDINATOR_NOT_AVAILABLE: retriable */
            return api_answer(c, req, resp);
        }
        req->wants_data = 1;
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + 10000;
        return REQ_WAIT;
    }
    /* An idempotent producer gets a fresh id at epoch 0 every time, as
     * Kafka gives one without a transactional id. */
    kv_set_int(resp, "ProducerId", b->pid_next++);
    kv_set_int(resp, "ProducerEpoch", 0);
    return api_answer(c, req, resp);
}
