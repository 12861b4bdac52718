/* admin.c -- the admin service (see admin.h): the helper thread, the jobs'
 * run and completion, producer-id blocks and topic auto-creation. */
#define _GNU_SOURCE
#include "admin.h"
#include "cluster.h"
#include "conn.h"
#include "base/logging.h"
#include "base/worker.h"
#include "broker/coord/coord_elect.h"
#include "broker/coord/coord_reassign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ADMIN_QUEUE_MAX 256
#define PRODUCER_ID_BLOCK 1000
/* An election of the same kind already asked for (by `kipper elect` or
 * another request) is waited out this long, in these steps, on the helper
 * thread. */
#define ELECT_BUSY_WAIT_MS 5000
#define ELECT_BUSY_STEP_MS 100

struct admin {
    worker_t *worker;
    int64_t pid_next, pid_end;   /* the producer-id block handed out from */
    int pid_claiming;            /* a claim of the next block is on the thread */
};

int admin_start(broker_t *b, char *err, size_t errlen)
{
    admin_t *a = calloc(1, sizeof(*a));
    if (a)
        a->worker = worker_create(b->loop, "admin", ADMIN_QUEUE_MAX);
    if (!a || !a->worker) {
        free(a);
        snprintf(err, errlen, "cannot start the admin thread");
        return -1;
    }
    b->admin = a;
    return 0;
}

void admin_stop(broker_t *b)
{
    if (!b->admin)
        return;
    worker_destroy(b->admin->worker);   /* finishes what is queued */
    free(b->admin);
    b->admin = NULL;
}

int admin_jobs_pending(const broker_t *b)
{
    return b->admin ? worker_queued(b->admin->worker) : 0;
}

/* ---- jobs ---- */

admin_job_t *admin_job_new(admin_kind_t kind, int nitems, uint64_t conn_id, uint64_t request_id)
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
    j->conn_id = conn_id;
    j->request_id = request_id;
    return j;
}

void admin_job_free(admin_job_t *j)
{
    for (int i = 0; i < j->nitems; i++) {
        free(j->items[i].name);
        free(j->items[i].assignment);
        free(j->items[i].configs);
        free(j->items[i].ops);
    }
    free(j->items);
    free(j);
}

static int is_election(admin_kind_t kind)
{
    return kind == ADMIN_ELECT_PREFERRED || kind == ADMIN_ELECT_UNCLEAN;
}

static const char *election_path(admin_kind_t kind)
{
    return kind == ADMIN_ELECT_UNCLEAN ? COORD_UNCLEAN_ELECTION : COORD_PREFERRED_ELECTION;
}

/* The election node j created goes: the tool that asks deletes it
 * (broker/coord/coord_elect.h). */
static void delete_election_node(admin_job_t *j)
{
    if (!j->elect_asked)
        return;
    admin_job_t *del = admin_job_new(ADMIN_ELECT_DONE, 0, 0, 0);
    if (del)
        del->elect_path = election_path(j->kind);
    if (!del || admin_job_submit(j->b, del) < 0) {
        log_error("cannot queue the deletion of %s: delete it by hand", election_path(j->kind));
        if (del)
            admin_job_free(del);
    }
}

void admin_job_release(void *arg)
{
    admin_job_t *j = arg;
    if (!j->done) {
        j->orphaned = 1;
        return;
    }
    delete_election_node(j);
    admin_job_free(j);
}

int admin_item_set_name(admin_item_t *it, const char *name)
{
    free(it->name);
    it->name = strdup(name ? name : "");
    return it->name ? 0 : -1;
}

void admin_item_refuse(admin_item_t *it, int16_t error, const char *message)
{
    it->skip = 1;
    it->res.error = error;
    snprintf(it->res.message, sizeof(it->res.message), "%s", message);
}

/* ---- on the helper thread ---- */

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

static void item_failed(admin_item_t *it, int16_t error, const char *message)
{
    it->res.error = error;
    snprintf(it->res.message, sizeof(it->res.message), "%s", message);
}

/* AlterPartitionReassignments' partition: its move node written, or deleted.
 * Checked as Kafka's controller checks it, not as `kipper reassign --execute`
 * checks a plan: only the brokers the target adds must be registered. A
 * partition's own replica that is down may stay in the target -- the way an
 * admin client without Kafka's cancel (a null target; KafkaJS cannot send
 * one) reverts a move waiting for such a replica is to send the replicas
 * the partition has, which Kafka accepts. */
static void move_partition(admin_job_t *j, admin_item_t *it)
{
    coord_move_t m = {.partition = it->partition, .nreplicas = it->rf};
    coord_plan_t plan = {.moves = &m, .n = 1};
    char err[sizeof(it->res.message)];
    snprintf(m.topic, sizeof(m.topic), "%s", it->name);
    memcpy(m.replicas, it->assignment, sizeof(*m.replicas) * (size_t)it->rf);
    if (it->cancel) {
        if (coord_plan_cancel(j->zh, &plan, err, sizeof(err)) < 0)
            item_failed(it, KERR_UNKNOWN_SERVER_ERROR, err);
    } else if (coord_plan_check_added(j->zh, &plan, err, sizeof(err)) < 0) {
        item_failed(it, KERR_INVALID_REPLICA_ASSIGNMENT, err);
    } else if (coord_plan_execute(j->zh, &plan, err, sizeof(err)) < 0) {
        item_failed(it, KERR_UNKNOWN_SERVER_ERROR, err);
    }
}

/* ElectLeaders: one election node naming every item not refused. Another
 * election of the kind in progress is waited out a while. */
static void ask_elections(admin_job_t *j)
{
    coord_tp_t *tps = calloc((size_t)j->nitems + 1, sizeof(*tps));
    int n = 0, rc = -1;
    char err[sizeof(j->items[0].res.message)] = "out of memory";
    for (int i = 0; tps && i < j->nitems; i++)
        if (!j->items[i].skip) {
            snprintf(tps[n].topic, sizeof(tps[n].topic), "%s", j->items[i].name);
            tps[n++].partition = j->items[i].partition;
        }
    if (tps && n == 0)
        rc = 0;
    for (int waited = 0; tps && n > 0; waited += ELECT_BUSY_STEP_MS) {
        rc = coord_elect_request(j->zh, election_path(j->kind), tps, n, err, sizeof(err));
        if (rc != 1 || waited >= ELECT_BUSY_WAIT_MS)
            break;
        nanosleep(&(struct timespec){0, ELECT_BUSY_STEP_MS * 1000000L}, NULL);
    }
    free(tps);
    j->elect_asked = n > 0 && rc == 0;
    for (int i = 0; rc != 0 && i < j->nitems; i++)
        if (!j->items[i].skip)
            item_failed(&j->items[i], rc == 1 ? KERR_REQUEST_TIMED_OUT : KERR_UNKNOWN_SERVER_ERROR, err);
}

static void delete_election(admin_job_t *j)
{
    char err[256];
    if (coord_elect_done(j->zh, j->elect_path, err, sizeof(err)) < 0)
        log_error("%s; delete it by hand", err);
}

static void topic_item_run(admin_job_t *j, admin_item_t *it)
{
    const broker_config_t *cfg = &j->b->cfg;
    if (j->kind == ADMIN_CREATE)
        coord_admin_create_topic(j->zh, it->name, it->partitions, it->rf, it->assignment, cfg->num_partitions,
                                 cfg->default_replication_factor, it->configs, it->nconfigs, j->validate_only,
                                 it->topic_id, &it->res);
    else if (j->kind == ADMIN_DELETE)
        coord_admin_delete_topic(j->zh, it->name, &it->res);
    else if (j->kind == ADMIN_ADD_PARTITIONS)
        coord_admin_add_partitions(j->zh, it->name, it->partitions, it->assignment, it->rf, j->validate_only,
                                   &it->res);
    else if (j->kind == ADMIN_ALTER_CONFIGS)
        coord_admin_alter_configs(j->zh, it->entity,
                                  it->entity == COORD_ENTITY_BROKER && !it->name[0] ? COORD_CONFIG_DEFAULT : it->name,
                                  it->ops, it->nops, it->replace, j->validate_only, &it->res);
    else
        move_partition(j, it);
}

static void job_run(void *arg)
{
    admin_job_t *j = arg;
    if (j->kind == ADMIN_PRODUCER_IDS) {
        claim_producer_ids(j);
        return;
    }
    if (j->kind == ADMIN_ELECT_DONE) {
        delete_election(j);
        return;
    }
    if (is_election(j->kind)) {
        ask_elections(j);
        return;
    }
    for (int i = 0; i < j->nitems; i++)
        if (!j->items[i].skip)
            topic_item_run(j, &j->items[i]);
}

/* ---- back on the loop ---- */

static void producer_ids_done(admin_job_t *j)
{
    admin_t *a = j->b->admin;
    a->pid_claiming = 0;
    if (j->pid_end > j->pid_start) {
        a->pid_next = j->pid_start;
        a->pid_end = j->pid_end;
    }
    broker_wake_data_waiters(j->b);   /* InitProducerId requests wait as data waiters */
    admin_job_free(j);
}

static void job_done(void *arg)
{
    admin_job_t *j = arg;
    j->done = 1;
    if (j->kind == ADMIN_PRODUCER_IDS) {
        producer_ids_done(j);
        return;
    }
    for (int i = 0; i < j->nitems; i++)
        if (j->items[i].res.error && !j->conn_id)
            log_warn("auto-creating topic %s: %s", j->items[i].name, j->items[i].res.message);
    if (j->orphaned)
        delete_election_node(j);
    if (j->orphaned || !j->conn_id)
        admin_job_free(j);
    else
        broker_wake_request(j->b, j->conn_id, j->request_id);
}

int admin_job_submit(broker_t *b, admin_job_t *j)
{
    j->b = b;
    j->zh = coord_handle(b->coord);
    return worker_submit(b->admin->worker, job_run, job_done, j);
}

/* ---- what an answer waits for ---- */

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

static int same_list(const int32_t *a, int na, const int32_t *b, int nb)
{
    return na == nb && memcmp(a, b, sizeof(*a) * (size_t)na) == 0;
}

/* A move started shows as the partition's target (or, already made, as its
 * replicas); a move cancelled, as no target. */
static int move_visible(const partition_t *p, const admin_item_t *it)
{
    if (it->cancel)
        return !p->reassigning;
    if (p->reassigning)
        return same_list(p->target, p->ntarget, it->assignment, it->rf);
    return same_list(p->replicas, p->nreplicas, it->assignment, it->rf);
}

/* An election asked for shows as a leader: the preferred replica, or any. */
static int election_visible(const partition_t *p, admin_kind_t kind)
{
    if (kind == ADMIN_ELECT_UNCLEAN)
        return p->leader >= 0;
    return p->nreplicas > 0 && p->leader == p->replicas[0];
}

int admin_item_visible(broker_t *b, const admin_job_t *j, const admin_item_t *it)
{
    /* A config change is answered once written, as Kafka answers it: every
     * broker applies it when its watch fires. */
    if (it->skip || it->res.error || j->validate_only || j->kind == ADMIN_ALTER_CONFIGS)
        return 1;
    if (j->kind == ADMIN_MOVE || is_election(j->kind)) {
        const partition_t *p = cluster_partition(b, it->name, it->partition);
        return !p || (j->kind == ADMIN_MOVE ? move_visible(p, it) : election_visible(p, j->kind));
    }
    if (j->kind == ADMIN_DELETE)
        return cluster_topic(b, it->name) == NULL;
    int partitions = it->partitions > 0 ? it->partitions : b->cfg.num_partitions;
    return topic_led(b, it->name, partitions);
}

int admin_job_visible(broker_t *b, const admin_job_t *j)
{
    for (int i = 0; i < j->nitems; i++)
        if (!admin_item_visible(b, j, &j->items[i]))
            return 0;
    return 1;
}

/* ---- work the service starts itself ---- */

int admin_auto_create_topic(broker_t *b, const char *name)
{
    admin_job_t *j = admin_job_new(ADMIN_CREATE, 1, 0, 0);
    if (!j)
        return -1;
    j->items[0].partitions = j->items[0].rf = -1;
    if (admin_item_set_name(&j->items[0], name) < 0 || admin_job_submit(b, j) < 0) {
        admin_job_free(j);
        return -1;
    }
    log_info("auto-creating topic %s", name);
    return 0;
}

static int claim_more_producer_ids(broker_t *b)
{
    if (b->admin->pid_claiming)
        return 0;
    admin_job_t *j = admin_job_new(ADMIN_PRODUCER_IDS, 0, 0, 0);
    if (!j || admin_job_submit(b, j) < 0) {
        if (j)
            admin_job_free(j);
        return -1;
    }
    b->admin->pid_claiming = 1;
    return 0;
}

int admin_producer_id(broker_t *b, int may_claim, int64_t *pid)
{
    admin_t *a = b->admin;
    if (a->pid_next < a->pid_end) {
        *pid = a->pid_next++;
        return 0;
    }
    if (!may_claim || claim_more_producer_ids(b) < 0)
        return -1;
    return 1;
}
