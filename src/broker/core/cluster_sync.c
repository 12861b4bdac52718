/* cluster_sync.c -- keeps the cluster view current from the coordinator, with
 * the watches of docs/replication.md: children of /brokers/ids (live
 * brokers), children of /brokers/topics (new topics), children of each topic
 * (new partitions), and each partition's replicas (replica-change), leader
 * (leader-change) and ISR.
 * Watches are one-shot: every read that sets one is repeated when it fires.
 *
 * Start-up is blocking, as Kafka's is: the cluster id is read (or created)
 * before anything else, so log dirs of another cluster are refused. After
 * that everything is asynchronous on the loop. */
#define _GNU_SOURCE
#include "admin.h"
#include "broker_meta.h"
#include "cluster.h"
#include "cluster_sync.h"
#include "conn.h"
#include "dynamic_config.h"
#include "elections.h"
#include "reassignments.h"
#include "replica.h"
#include "broker/group/group_service.h"
#include "broker/coord/coord_admin.h"
#include "base/logging.h"
#include "base/clock.h"
#include "broker/repl/repl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void read_brokers(broker_t *b);
static void read_topics(broker_t *b);
static void register_broker(broker_t *b);
static void reconcile_all(broker_t *b);
static void reread_known(broker_t *b);

/* ---- start-up: cluster id ---- */

/* /cluster/id, created with a new id on the first start of a cluster. */
static int fetch_cluster_id(zhandle_t *zh, char *id, size_t idlen, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        char data[COORD_DOC_MAX];
        int len = sizeof(data);
        int rc = zoo_get(zh, "/cluster/id", 0, data, &len, NULL);
        if (rc == ZOK)
            return coord_cluster_id_parse(data, len < 0 ? 0 : (size_t)len, id, idlen, err, errlen);
        if (rc != ZNONODE) {
            snprintf(err, errlen, "cannot read /cluster/id: %s", zerror(rc));
            return -1;
        }
        uint8_t raw[16];
        char fresh[23], doc[256];
        coord_topic_id_generate(raw);
        coord_topic_id_format(raw, fresh);
        int n = coord_cluster_id_write(doc, sizeof(doc), fresh);
        rc = zoo_create(zh, "/cluster", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            snprintf(err, errlen, "cannot create /cluster: %s", zerror(rc));
            return -1;
        }
        rc = zoo_create(zh, "/cluster/id", doc, n, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
        if (rc == ZOK) {
            log_info("created cluster id %s in the coordinator", fresh);
            snprintf(id, idlen, "%s", fresh);
            return 0;
        }
        if (rc != ZNODEEXISTS) {
            snprintf(err, errlen, "cannot create /cluster/id: %s", zerror(rc));
            return -1;
        }
        /* Another broker won the race: read its id. */
    }
    snprintf(err, errlen, "cannot settle /cluster/id");
    return -1;
}

static int setup_coordinator(broker_t *b, char *err, size_t errlen)
{
    zhandle_t *zh = coord_admin_connect(b->cfg.zk_connect, b->cfg.zk_connection_timeout_ms, err, errlen);
    if (!zh)
        return -1;
    char zk_id[64];
    int rc = coord_admin_ensure_paths(zh, err, errlen);
    if (rc == 0)
        rc = fetch_cluster_id(zh, zk_id, sizeof(zk_id), err, errlen);
    zookeeper_close(zh);
    if (rc < 0)
        return -1;
    return broker_meta_load(&b->cfg, zk_id, b->cluster_id, sizeof(b->cluster_id), err, errlen);
}

/* ---- session ---- */

static void on_event(coord_t *co, int type, int state, const char *path, void *arg);

static void reconnect(loop_t *loop, void *arg)
{
    (void)loop;
    broker_t *b = arg;
    char err[512];
    b->reconnect_timer = NULL;
    /* Admin jobs use the old session's handle: let them finish first. */
    if (admin_jobs_pending(b) > 0) {
        b->reconnect_timer = loop_timer_add(b->loop, 100, reconnect, b);
        return;
    }
    coord_close(b->coord);
    b->coord = coord_open(b->loop, b->cfg.zk_connect, b->cfg.zk_session_timeout_ms, on_event, b, err, sizeof(err));
    if (!b->coord) {
        log_error("coordinator: %s; retrying in 1 s", err);
        b->reconnect_timer = loop_timer_add(b->loop, 1000, reconnect, b);
    }
}

static void on_session(broker_t *b, int state)
{
    if (state == ZOO_CONNECTED_STATE) {
        int64_t sid = coord_session_id(b->coord);
        repl_lease_link_back(b);
        if (sid == b->session_id)
            return;   /* reconnected within the session: watches were restored */
        b->session_id = sid;
        log_info("coordinator session 0x%" PRIx64 " established", (uint64_t)sid);
        register_broker(b);
        read_brokers(b);
        read_topics(b);
        /* After an expiry the old session's watches are gone: read again
         * what we already knew, setting new ones. */
        reread_known(b);
        reassignments_read(b);
        elections_read(b);
        dynamic_config_read_all(b);
    } else if (state == ZOO_EXPIRED_SESSION_STATE) {
        log_warn("coordinator session 0x%" PRIx64 " expired: no longer leading anything; reconnecting",
                 (uint64_t)b->session_id);
        b->registered = 0;
        b->session_id = 0;
        repl_lease_link_back(b);
        repl_stop_leading_all(b, "coordinator session expired");
        group_service_view_changed(b);
        /* Not from inside the coordinator's own callback. */
        if (!b->reconnect_timer)
            b->reconnect_timer = loop_timer_add(b->loop, 0, reconnect, b);
    } else if (state == ZOO_CONNECTING_STATE) {
        log_warn("coordinator connection lost; reconnecting within the session");
        if (b->session_id)
            repl_lease_link_lost(b, coord_session_timeout_ms(b->coord));
    } else if (state == ZOO_AUTH_FAILED_STATE) {
        log_error("coordinator authentication failed");
    }
}

/* ---- registration: /brokers/ids/[id] ---- */

static void registration_checked(coord_t *co, const coord_result_t *res, void *arg)
{
    broker_t *b = arg;
    if (res->rc == ZOK && res->ephemeral_owner == coord_session_id(co)) {
        b->registered = 1;
        group_service_view_changed(b);
        reconcile_all(b);
        return;
    }
    if (res->rc == ZNONODE) {
        register_broker(b);
        return;
    }
    if (res->rc == ZOK)
        log_warn("broker id %d is registered by another session (0x%" PRIx64 "); waiting for it to go",
                 (int)b->cfg.broker_id, (uint64_t)res->ephemeral_owner);
}

static void registered(coord_t *co, const coord_result_t *res, void *arg)
{
    broker_t *b = arg;
    char path[64];
    coord_path_broker(path, sizeof(path), b->cfg.broker_id);
    if (res->rc == ZOK) {
        b->registered = 1;
        log_info("registered as %s (%s:%d)", path, b->adv_host, b->adv_port);
        group_service_view_changed(b);
        read_brokers(b);
        /* Replicas waited for this before standing for leader. */
        reconcile_all(b);
    } else if (res->rc == ZNODEEXISTS) {
        /* Ours from a moment ago, or a previous process's session that has
         * not expired yet: the exists watch tells us when it goes. */
        coord_exists(co, path, 1, registration_checked, b);
    } else if (res->rc != ZCLOSING) {
        log_error("cannot register %s: %s", path, zerror(res->rc));
    }
}

static void register_broker(broker_t *b)
{
    char path[64], doc[1024];
    if (b->shutting_down)
        return;   /* controlled shutdown deregistered us on purpose */
    coord_path_broker(path, sizeof(path), b->cfg.broker_id);
    int n = coord_broker_write(doc, sizeof(doc), b->adv_host, b->adv_port, b->cfg.broker_rack, (int64_t)clock_wall_ms());
    if (n < 0 || coord_create(b->coord, path, doc, n, ZOO_EPHEMERAL, registered, b) < 0)
        log_error("cannot register %s", path);
}

/* ---- live brokers ---- */

typedef struct {
    broker_t *b;
    int32_t id;
} broker_read_t;

static int cmp_broker(const void *x, const void *y)
{
    int32_t a = ((const broker_node_t *)x)->id, c = ((const broker_node_t *)y)->id;
    return a < c ? -1 : a > c;
}

static void reconcile_all(broker_t *b)
{
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++)
            if (b->topics[i]->parts[k])
                replica_reconcile(b, b->topics[i]->parts[k]);
}

static void broker_data_read(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    broker_read_t *br = arg;
    broker_t *b = br->b;
    char err[256];
    coord_broker_t ep;
    if (res->rc == ZOK && coord_broker_parse(res->data, (size_t)res->len, &ep, err, sizeof(err)) < 0)
        log_warn("/brokers/ids/%d: %s; ignoring that broker", (int)br->id, err);
    else if (res->rc == ZOK && !cluster_broker(b, br->id)) {
        broker_node_t *grown = realloc(b->brokers, sizeof(*grown) * (size_t)(b->nbrokers + 1));
        if (grown) {
            b->brokers = grown;
            b->brokers[b->nbrokers].id = br->id;
            b->brokers[b->nbrokers].ep = ep;
            b->nbrokers++;
            qsort(b->brokers, (size_t)b->nbrokers, sizeof(*b->brokers), cmp_broker);
            log_info("broker %d is live at %s:%d", (int)br->id, ep.host, (int)ep.port);
            group_service_view_changed(b);   /* groups may move to it */
            repl_brokers_changed(b, br->id);
            reconcile_all(b);
        }
    }
    free(br);
}

static int has_child(const coord_result_t *res, int32_t id)
{
    for (int i = 0; i < res->nchildren; i++)
        if (coord_parse_broker_id_name(res->children[i]) == id)
            return 1;
    return 0;
}

static void brokers_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    broker_t *b = arg;
    if (res->rc != ZOK) {
        if (res->rc != ZCLOSING)
            log_warn("cannot list /brokers/ids: %s", zerror(res->rc));
        return;
    }
    int removed = 0;
    int32_t gone_id = -1;
    for (int i = 0; i < b->nbrokers;) {
        if (has_child(res, b->brokers[i].id)) {
            i++;
            continue;
        }
        log_info("broker %d is gone", (int)b->brokers[i].id);
        gone_id = b->brokers[i].id;
        memmove(&b->brokers[i], &b->brokers[i + 1], sizeof(*b->brokers) * (size_t)(b->nbrokers - i - 1));
        b->nbrokers--;
        removed = 1;
    }
    for (int i = 0; i < res->nchildren; i++) {
        int32_t id = coord_parse_broker_id_name(res->children[i]);
        if (id < 0 || cluster_broker(b, id))
            continue;
        broker_read_t *br = malloc(sizeof(*br));
        char path[64];
        coord_path_broker(path, sizeof(path), id);
        if (br) {
            *br = (broker_read_t){b, id};
            /* Watched: a broker that restarts deletes and re-creates its
             * node, maybe between two of our listings; the event tells us. */
            if (coord_get(co, path, 1, broker_data_read, br) < 0)
                free(br);
        }
    }
    if (b->registered && !has_child(res, b->cfg.broker_id)) {
        log_warn("our registration is gone from the coordinator; registering again");
        b->registered = 0;
        register_broker(b);
        removed = 1;
    }
    if (removed) {
        group_service_view_changed(b);   /* groups may move here */
        repl_brokers_changed(b, gone_id);   /* the ISRs we lead drop the dead at once */
        reconcile_all(b);
    }
}

static void read_brokers(broker_t *b)
{
    coord_children(b->coord, "/brokers/ids", 1, brokers_listed, b);
}

/* ---- topics and partitions ---- */

typedef struct {
    broker_t *b;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    char leaf[16];
} leaf_read_t;

static leaf_read_t *new_leaf_read(broker_t *b, const char *topic, int32_t partition, const char *leaf)
{
    leaf_read_t *lr = calloc(1, sizeof(*lr));
    if (!lr) {
        log_error("out of memory reading %s", topic);
        return NULL;
    }
    lr->b = b;
    snprintf(lr->topic, sizeof(lr->topic), "%s", topic);
    lr->partition = partition;
    snprintf(lr->leaf, sizeof(lr->leaf), "%s", leaf ? leaf : "");
    return lr;
}

static void read_leaf(broker_t *b, const char *topic, int32_t partition, const char *leaf);

/* Applies one leaf's content (or absence) to the partition. */
static void apply_leaf(partition_t *p, const char *leaf, const coord_result_t *res, const char *path)
{
    char err[256];
    int present = res->rc == ZOK;
    if (strcmp(leaf, "replicas") == 0) {
        p->have_replicas = present &&
                           coord_replicas_parse(res->data, (size_t)res->len, p->replicas, &p->nreplicas, err,
                                                sizeof(err)) == 0;
        if (present && !p->have_replicas)
            log_warn("%s: %s", path, err);
        if (!p->have_replicas)
            p->nreplicas = 0;
    } else if (strcmp(leaf, "leader") == 0) {
        p->have_leader = 1;
        p->leader = -1;
        p->leader_epoch = -1;
        p->leader_owner = 0;
        if (present && coord_leader_parse(res->data, (size_t)res->len, &p->leader, &p->leader_epoch, err,
                                          sizeof(err)) < 0) {
            log_warn("%s: %s", path, err);
            p->leader = p->leader_epoch = -1;
        } else if (present) {
            p->leader_owner = res->ephemeral_owner;
        }
    } else {
        p->nisr = 0;
        p->isr_state = present ? 2 : 1;
        p->isr_version = present ? res->version : -1;
        if (present && coord_isr_parse(res->data, (size_t)res->len, p->isr, &p->nisr, &p->isr_epoch, err,
                                       sizeof(err)) < 0) {
            log_warn("%s: %s", path, err);
            p->nisr = 0;
        }
    }
}

static void leaf_exists(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    leaf_read_t *lr = arg;
    /* Created between our get and this exists: read it now. */
    if (res->rc == ZOK)
        read_leaf(lr->b, lr->topic, lr->partition, lr->leaf);
    free(lr);
}

static void leaf_read(coord_t *co, const coord_result_t *res, void *arg)
{
    leaf_read_t *lr = arg;
    broker_t *b = lr->b;
    partition_t *p = cluster_partition(b, lr->topic, lr->partition);
    char path[COORD_TOPIC_NAME_MAX + 64];
    coord_path_partition_leaf(path, sizeof(path), lr->topic, lr->partition, lr->leaf);
    if (!p || (res->rc != ZOK && res->rc != ZNONODE)) {
        if (res->rc != ZCLOSING && res->rc != ZOK && res->rc != ZNONODE)
            log_warn("cannot read %s: %s", path, zerror(res->rc));
        free(lr);
        return;
    }
    apply_leaf(p, lr->leaf, res, path);
    /* getData leaves no watch on a missing node; exists does. */
    if (res->rc == ZNONODE && coord_exists(co, path, 1, leaf_exists, lr) == 0)
        lr = NULL;
    free(lr);
    replica_reconcile(b, p);
    broker_wake_data_waiters(b);   /* admin answers wait for leaders */
}

static void read_leaf(broker_t *b, const char *topic, int32_t partition, const char *leaf)
{
    char path[COORD_TOPIC_NAME_MAX + 64];
    leaf_read_t *lr = new_leaf_read(b, topic, partition, leaf);
    if (!lr)
        return;
    if (coord_path_partition_leaf(path, sizeof(path), topic, partition, leaf) < 0 ||
        coord_get(b->coord, path, 1, leaf_read, lr) < 0)
        free(lr);
}

static void partitions_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    leaf_read_t *lr = arg;
    topic_t *t = cluster_topic(lr->b, lr->topic);
    if (t && res->rc == ZOK) {
        int added = 0;
        for (int i = 0; i < res->nchildren; i++) {
            int32_t id = coord_parse_partition_name(res->children[i]);
            if (id < 0 || (id < t->nparts && t->parts[id]))
                continue;
            if (!topic_partition_add(t, id))
                continue;
            read_leaf(lr->b, t->name, id, "replicas");
            read_leaf(lr->b, t->name, id, "ISR");
            read_leaf(lr->b, t->name, id, "leader");
            added++;
        }
        if (added)
            reassignments_topic_known(lr->b, t->name);   /* a move may name them */
    } else if (res->rc != ZOK && res->rc != ZNONODE && res->rc != ZCLOSING) {
        log_warn("cannot list partitions of %s: %s", lr->topic, zerror(res->rc));
    }
    free(lr);
}

static void read_partitions(broker_t *b, const char *topic)
{
    char path[COORD_TOPIC_NAME_MAX + 32];
    leaf_read_t *lr = new_leaf_read(b, topic, -1, NULL);
    if (!lr)
        return;
    if (coord_path_topic(path, sizeof(path), topic) < 0 || coord_children(b->coord, path, 1, partitions_listed, lr) < 0)
        free(lr);
}

static void topic_doc_read(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    leaf_read_t *lr = arg;
    topic_t *t = cluster_topic(lr->b, lr->topic);
    char err[256];
    if (t && res->rc == ZOK) {
        coord_topic_t doc;
        if (coord_topic_parse(res->data, (size_t)res->len, &doc, err, sizeof(err)) < 0) {
            log_warn("/brokers/topics/%s: %s", t->name, err);
        } else {
            t->doc = doc;
            t->have_doc = 1;
            dynamic_config_topic_doc_changed(lr->b, t);
        }
    }
    free(lr);
}

static void read_topic_doc(broker_t *b, const char *topic)
{
    char path[COORD_TOPIC_NAME_MAX + 32];
    leaf_read_t *lr = new_leaf_read(b, topic, -1, NULL);
    if (!lr)
        return;
    if (coord_path_topic(path, sizeof(path), topic) < 0 || coord_get(b->coord, path, 1, topic_doc_read, lr) < 0)
        free(lr);
}

static int listed(const coord_result_t *res, const char *name)
{
    for (int i = 0; i < res->nchildren; i++)
        if (strcmp(res->children[i], name) == 0)
            return 1;
    return 0;
}

static void topic_gone(broker_t *b, topic_t *t)
{
    log_info("topic %s was deleted", t->name);
    for (int k = 0; k < t->nparts; k++)
        if (t->parts[k] && t->parts[k]->replica)
            replica_stop(b, t->parts[k], 1);
    cluster_topic_remove(b, t);
}

static void topics_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    broker_t *b = arg;
    if (res->rc != ZOK) {
        if (res->rc != ZCLOSING)
            log_warn("cannot list /brokers/topics: %s", zerror(res->rc));
        return;
    }
    for (int i = b->ntopics - 1; i >= 0; i--)
        if (!listed(res, b->topics[i]->name))
            topic_gone(b, b->topics[i]);
    char err[256];
    for (int i = 0; i < res->nchildren; i++) {
        const char *name = res->children[i];
        if (cluster_topic(b, name))
            continue;
        if (coord_topic_name_valid(name, err, sizeof(err)) < 0) {
            log_warn("/brokers/topics/%s: %s; ignored", name, err);
            continue;
        }
        topic_t *t = cluster_topic_add(b, name);
        read_topic_doc(b, name);
        /* Before the partitions: the replicas open with the topic's configs. */
        dynamic_config_read_topic(b, t);
        read_partitions(b, name);
    }
    broker_wake_data_waiters(b);   /* DeleteTopics answers wait for topics to go */
}

static void read_topics(broker_t *b)
{
    coord_children(b->coord, "/brokers/topics", 1, topics_listed, b);
}

static void reread_known(broker_t *b)
{
    for (int i = 0; i < b->ntopics; i++) {
        topic_t *t = b->topics[i];
        read_topic_doc(b, t->name);
        read_partitions(b, t->name);
        for (int k = 0; k < t->nparts; k++) {
            if (!t->parts[k])
                continue;
            read_leaf(b, t->name, k, "replicas");
            read_leaf(b, t->name, k, "ISR");
            read_leaf(b, t->name, k, "leader");
        }
    }
}

/* ---- watch events ---- */

/* "/brokers/topics/T[/P[/leaf]]" into its parts; the number of parts. */
static int split_topic_path(const char *path, char *topic, size_t tlen, int32_t *partition, char *leaf,
                            size_t llen)
{
    static const char prefix[] = "/brokers/topics/";
    if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    const char *t = path + sizeof(prefix) - 1, *slash = strchr(t, '/');
    size_t n = slash ? (size_t)(slash - t) : strlen(t);
    if (n == 0 || n >= tlen)
        return 0;
    memcpy(topic, t, n);
    topic[n] = 0;
    if (!slash)
        return 1;
    char part[16];
    const char *p = slash + 1, *slash2 = strchr(p, '/');
    size_t pn = slash2 ? (size_t)(slash2 - p) : strlen(p);
    if (pn == 0 || pn >= sizeof(part))
        return 1;
    memcpy(part, p, pn);
    part[pn] = 0;
    *partition = coord_parse_partition_name(part);
    if (*partition < 0 || !slash2 || strlen(slash2 + 1) >= llen)
        return *partition < 0 ? 1 : 2;
    snprintf(leaf, llen, "%s", slash2 + 1);
    return 3;
}

/* /brokers/ids/[id] of another broker was deleted or changed: that
 * incarnation is gone (a restarted broker is a new one, which must catch up
 * before it is in sync again); the listing brings back whoever is there. */
static void broker_node_event(broker_t *b, int32_t id)
{
    for (int i = 0; i < b->nbrokers; i++) {
        if (b->brokers[i].id != id)
            continue;
        log_info("broker %d's registration changed", (int)id);
        memmove(&b->brokers[i], &b->brokers[i + 1], sizeof(*b->brokers) * (size_t)(b->nbrokers - i - 1));
        b->nbrokers--;
        group_service_view_changed(b);
        repl_brokers_changed(b, id);
        reconcile_all(b);
        break;
    }
    read_brokers(b);
}

static void on_node_event(broker_t *b, int type, const char *path)
{
    static const char ids_prefix[] = "/brokers/ids/";
    char topic[COORD_TOPIC_NAME_MAX + 1], leaf[16], own[64];
    int32_t partition = -1;
    coord_path_broker(own, sizeof(own), b->cfg.broker_id);
    if (reassignments_event(b, type, path) || elections_event(b, type, path) || dynamic_config_event(b, type, path))
        return;
    if (strcmp(path, "/brokers/ids") == 0) {
        read_brokers(b);
    } else if (strcmp(path, own) == 0) {
        if (type == ZOO_DELETED_EVENT && !b->registered)
            register_broker(b);
    } else if (strncmp(path, ids_prefix, sizeof(ids_prefix) - 1) == 0) {
        int32_t id = coord_parse_broker_id_name(path + sizeof(ids_prefix) - 1);
        if (id >= 0)
            broker_node_event(b, id);
    } else if (strcmp(path, "/brokers/topics") == 0) {
        read_topics(b);
    } else {
        int parts = split_topic_path(path, topic, sizeof(topic), &partition, leaf, sizeof(leaf));
        if (parts == 1 && type == ZOO_CHILD_EVENT)
            read_partitions(b, topic);
        else if (parts == 1 && type == ZOO_CHANGED_EVENT)
            read_topic_doc(b, topic);
        else if (parts == 3 && cluster_partition(b, topic, partition))
            read_leaf(b, topic, partition, leaf);
    }
}

static void on_event(coord_t *co, int type, int state, const char *path, void *arg)
{
    (void)co;
    broker_t *b = arg;
    if (type == ZOO_SESSION_EVENT)
        on_session(b, state);
    else if (type != ZOO_NOTWATCHING_EVENT)
        on_node_event(b, type, path);
}

/* ---- asked for by replication ---- */

void cluster_reread_partition(broker_t *b, partition_t *p)
{
    read_leaf(b, p->topic->name, p->id, "ISR");
    read_leaf(b, p->topic->name, p->id, "leader");
}

static void deregistered(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    (void)arg;
    if (res->rc != ZOK && res->rc != ZNONODE && res->rc != ZCLOSING)
        log_warn("cannot delete our registration: %s", zerror(res->rc));
}

void cluster_deregister(broker_t *b)
{
    char path[64];
    coord_path_broker(path, sizeof(path), b->cfg.broker_id);
    b->registered = 0;
    if (coord_delete(b->coord, path, -1, deregistered, b) < 0)
        log_warn("cannot delete our registration %s", path);
    else
        log_info("deregistered %s", path);
}

/* ---- start and stop ---- */

int cluster_start(broker_t *b, char *err, size_t errlen)
{
    if (setup_coordinator(b, err, errlen) < 0)
        return -1;
    b->coord = coord_open(b->loop, b->cfg.zk_connect, b->cfg.zk_session_timeout_ms, on_event, b, err, errlen);
    return b->coord ? 0 : -1;
}

void cluster_stop(broker_t *b)
{
    if (b->reconnect_timer)
        loop_timer_cancel(b->loop, b->reconnect_timer);
    b->reconnect_timer = NULL;
    coord_close(b->coord);
    b->coord = NULL;
    while (b->ntopics > 0)
        cluster_topic_remove(b, b->topics[b->ntopics - 1]);
    free(b->topics);
    b->topics = NULL;
    free(b->brokers);
    b->brokers = NULL;
    b->nbrokers = 0;
}
