/* coord_admin.c -- creating, growing, deleting and describing topics in the
 * coordinator (coord_admin.h), through the ZooKeeper C client's synchronous
 * calls.
 *
 * A topic appears in one zoo_multi (topic node, every partition node and its
 * replicas node), so a broker watching /brokers/topics never sees half of
 * one. Validation follows Kafka's AdminZkClient and ZkAdminManager, with
 * their error codes and messages. */
#define _GNU_SOURCE
#include "coord_admin.h"
#include "coord_admin_impl.h"
#include "coord_config.h"
#include "coord_connect.h"
#include "base/alloc.h"
#include "base/logging.h"
#include "base/loop.h"
#include "base/clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#define SESSION_TIMEOUT_MS 18000   /* Kafka's zookeeper.session.timeout.ms */
#define PATH_MAX_LEN 512           /* every path we build: /brokers/topics/<249>/<p>/<leaf> fits */
/* A multi request must stay under ZooKeeper's default jute.maxbuffer (1 MiB):
 * larger ones are refused by the server and cost the session its connection. */
#define MULTI_LIMIT 1000000
#define DELETE_RETRIES 20          /* re-listings of one node while brokers keep adding children */
#define MAX_TREE_DEPTH 8           /* below /brokers/topics/<t>; ours is 2 deep */

/* ---- results ---- */

static void succeed(coord_admin_result_t *res)
{
    res->error = KERR_NONE;
    res->message[0] = 0;
}

int coord_admin_fail(coord_admin_result_t *res, int16_t error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    res->error = error;
    vsnprintf(res->message, sizeof(res->message), fmt, ap);
    va_end(ap);
    return -1;
}

/* Lost connections and timeouts may succeed when retried; anything else the
 * coordinator says is a server error to the Kafka client. */
static int16_t zk_error_code(int rc)
{
    return rc == ZOPERATIONTIMEOUT || rc == ZCONNECTIONLOSS || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE
               ? KERR_REQUEST_TIMED_OUT
               : KERR_UNKNOWN_SERVER_ERROR;
}

int coord_admin_zk_fail(coord_admin_result_t *res, const char *what, const char *path, int rc)
{
    return coord_admin_fail(res, zk_error_code(rc), "ZooKeeper error on %s %s: %s (%d)", what, path, zerror(rc), rc);
}

static int no_such_topic(coord_admin_result_t *res, const char *topic)
{
    return coord_admin_fail(res, KERR_UNKNOWN_TOPIC_OR_PARTITION, "Topic '%s' does not exist.", topic);
}

/* A name that is not a legal topic can name no topic, and must not become
 * part of a path ("a/b" would reach into another node). */
static int check_topic_name(const char *topic, coord_admin_result_t *res)
{
    char err[256];
    if (coord_topic_name_valid(topic, err, sizeof(err)) < 0)
        return coord_admin_fail(res, KERR_INVALID_TOPIC_EXCEPTION, "%s", err);
    return 0;
}

/* ---- connecting ---- */

static void ignore_session_events(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

/* zookeeper_init, then wait (polling the handle's state, so no callback
 * outlives this frame) until the session is up or deadline passes. */
static zhandle_t *open_session(const char *connect, int64_t deadline, char *err, size_t errlen)
{
    zhandle_t *zh = zookeeper_init(connect, ignore_session_events, SESSION_TIMEOUT_MS, NULL, NULL, 0);
    if (!zh) {
        snprintf(err, errlen, "cannot start a ZooKeeper client for '%s': %s", connect, strerror(errno));
        return NULL;
    }
    /* Resolve the hosts only when reconnecting, not on every poll. */
    zoo_set_servers_resolution_delay(zh, -1);
    for (;;) {
        int state = zoo_state(zh);
        if (state == ZOO_CONNECTED_STATE)
            return zh;
        if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            snprintf(err, errlen, "ZooKeeper at '%s' refused the session", connect);
            break;
        }
        if ((int64_t)clock_mono_ms() >= deadline) {
            snprintf(err, errlen, "no ZooKeeper session with '%s' (timed out)", connect);
            break;
        }
        if (loop_shutdown_pending()) {
            snprintf(err, errlen, "asked to stop while connecting to '%s'", connect);
            break;
        }
        nanosleep(&(struct timespec){0, 5 * 1000000}, NULL);
    }
    zookeeper_close(zh);
    return NULL;
}

/* Creates path and its parents where missing (checking first, so a tool run
 * against an existing cluster writes nothing). */
static int create_path(zhandle_t *zh, const char *path, char *err, size_t errlen)
{
    char prefix[PATH_MAX_LEN];
    size_t len = strlen(path);
    if (len >= sizeof(prefix)) {
        snprintf(err, errlen, "path too long: %.100s...", path);
        return -1;
    }
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        memcpy(prefix, path, i);
        prefix[i] = 0;
        int rc = zoo_exists(zh, prefix, 0, NULL);
        if (rc == ZNONODE)
            rc = zoo_create(zh, prefix, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            snprintf(err, errlen, "cannot create %s in ZooKeeper: %s (%d)", prefix, zerror(rc), rc);
            return -1;
        }
    }
    return 0;
}

zhandle_t *coord_admin_connect(const char *connect, int timeout_ms, char *err, size_t errlen)
{
    char chroot[PATH_MAX_LEN];
    if (coord_parse_connect(connect, chroot, sizeof(chroot), err, errlen) < 0)
        return NULL;
    zoo_set_debug_level(getenv("KIPPER_ZK_DEBUG") ? ZOO_LOG_LEVEL_DEBUG : (ZooLogLevel)0);   /* 0: silent */
    int64_t deadline = (int64_t)clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    if (chroot[0]) {
        /* The C client applies the chroot to every path but will not create
         * it, so do that first in a session without it. */
        char *hosts = strndup(connect, strcspn(connect, "/"));
        zhandle_t *root = hosts ? open_session(hosts, deadline, err, errlen) : NULL;
        free(hosts);
        if (!root)
            return NULL;
        int rc = create_path(root, chroot, err, errlen);
        zookeeper_close(root);
        if (rc < 0)
            return NULL;
    }
    return open_session(connect, deadline, err, errlen);
}

int coord_admin_ensure_paths(zhandle_t *zh, char *err, size_t errlen)
{
    static const char *const paths[] = {"/brokers/ids", "/brokers/topics", "/brokers/partitions_reassigned",
                                        COORD_CONFIG_TOPICS, COORD_CONFIG_BROKERS, COORD_CONFIG_CHANGES};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (create_path(zh, paths[i], err, errlen) < 0)
            return -1;
    return 0;
}

/* ---- reading ---- */

static int compare_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int coord_admin_live_brokers(zhandle_t *zh, int32_t *ids, int max, int *n, char *err, size_t errlen)
{
    struct String_vector kids = {0, NULL};
    *n = 0;
    int rc = zoo_get_children(zh, "/brokers/ids", 0, &kids);
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK) {
        snprintf(err, errlen, "cannot list /brokers/ids in ZooKeeper: %s (%d)", zerror(rc), rc);
        return -1;
    }
    int count = 0, result = 0;
    for (int i = 0; i < kids.count && result == 0; i++) {
        int32_t id = coord_parse_broker_id_name(kids.data[i]);
        if (id < 0)
            continue;   /* not a broker registration; nothing of ours */
        if (count == max) {
            snprintf(err, errlen, "more than %d brokers registered under /brokers/ids", max);
            result = -1;
            break;
        }
        ids[count++] = id;
    }
    deallocate_String_vector(&kids);
    if (result < 0)
        return -1;
    qsort(ids, (size_t)count, sizeof(ids[0]), compare_int32);
    *n = count;
    return 0;
}

int coord_admin_read_doc(zhandle_t *zh, const char *path, char *buf, int *len, int *version,
                         coord_admin_result_t *res)
{
    struct Stat st;
    int n = COORD_DOC_MAX;
    int rc = zoo_get(zh, path, 0, buf, &n, &st);
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK)
        return coord_admin_zk_fail(res, "read", path, rc);
    if (st.dataLength > COORD_DOC_MAX)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR,
                                "%s: document of %d bytes is larger than the limit of %d",
                                path, (int)st.dataLength, COORD_DOC_MAX);
    *len = n < 0 ? 0 : n;   /* -1: the node holds null */
    if (version)
        *version = st.version;
    return 1;
}

static int bad_doc(coord_admin_result_t *res, const char *path, const char *why)
{
    return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "malformed %s in ZooKeeper: %s", path, why);
}

/* The replicas of topic's partition p, which must exist. */
static int read_replicas(zhandle_t *zh, const char *topic, int32_t p, char *buf, int32_t *replicas, int *n,
                         coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN], why[256];
    int len;
    coord_path_partition_leaf(path, sizeof(path), topic, p, "replicas");
    int found = coord_admin_read_doc(zh, path, buf, &len, NULL, res);
    if (found < 0)
        return -1;
    if (!found)
        return bad_doc(res, path, "missing");
    if (coord_replicas_parse(buf, (size_t)len, replicas, n, why, sizeof(why)) < 0)
        return bad_doc(res, path, why);
    return 0;
}

/* The partition numbers under /brokers/topics/<topic>, sorted; children that
 * are not partition numbers are skipped. 0, or -1 with res
 * (UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist). */
static int list_partitions(zhandle_t *zh, const char *topic, int32_t **out, int *n, coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN];
    struct String_vector kids = {0, NULL};
    coord_path_topic(path, sizeof(path), topic);
    int rc = zoo_get_children(zh, path, 0, &kids);
    if (rc == ZNONODE)
        return no_such_topic(res, topic);
    if (rc != ZOK)
        return coord_admin_zk_fail(res, "list", path, rc);
    int32_t *partitions = malloc(sizeof(int32_t) * (size_t)(kids.count > 0 ? kids.count : 1));
    if (!partitions) {
        deallocate_String_vector(&kids);
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory listing %s", path);
    }
    int count = 0;
    for (int i = 0; i < kids.count; i++) {
        int32_t p = coord_parse_partition_name(kids.data[i]);
        if (p >= 0)
            partitions[count++] = p;
    }
    deallocate_String_vector(&kids);
    qsort(partitions, (size_t)count, sizeof(int32_t), compare_int32);
    *out = partitions;
    *n = count;
    return 0;
}

/* ---- multi-ops (a ZooKeeper transaction of creates) ---- */

/* The create ops of one zoo_multi, with the paths and documents they point
 * to in an arena that never moves. wire_bytes estimates the request's size
 * (jute: op header, path, data, the open ACL, flags) to keep it under
 * MULTI_LIMIT. */
typedef struct {
    zoo_op_t *ops;
    int nops, maxops;
    char *arena;
    size_t used;
    size_t wire_bytes;
} multi_t;

static int multi_init(multi_t *t, int maxops)
{
    memset(t, 0, sizeof(*t));
    t->ops = calloc((size_t)maxops, sizeof(zoo_op_t));
    t->arena = malloc(MULTI_LIMIT);
    t->maxops = maxops;
    return t->ops && t->arena ? 0 : -1;
}

static void multi_free(multi_t *t)
{
    free(t->ops);
    free(t->arena);
}

/* -1 when the op would take the multi past MULTI_LIMIT. */
static int multi_add_create(multi_t *t, const char *path, const char *data, size_t datalen)
{
    enum { OP_OVERHEAD = 9 + 4 + 4 + 31 + 4 };   /* header, two lengths, world:anyone ACL, flags */
    size_t pathlen = strlen(path);
    size_t need = pathlen + 1 + datalen;
    if (t->nops == t->maxops || t->used + need > MULTI_LIMIT || t->wire_bytes + OP_OVERHEAD + need > MULTI_LIMIT)
        return -1;
    char *p = t->arena + t->used, *d = p + pathlen + 1;
    memcpy(p, path, pathlen + 1);
    memcpy(d, data, datalen);
    t->used += need;
    t->wire_bytes += OP_OVERHEAD + need;
    zoo_create_op_init(&t->ops[t->nops++], p, d, (int)datalen, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
    return 0;
}

/* Like multi_add_create, a setData of path at version. */
static int multi_add_set(multi_t *t, const char *path, const char *data, size_t datalen, int version)
{
    if (multi_add_create(t, path, data, datalen) < 0)
        return -1;
    zoo_op_t *op = &t->ops[t->nops - 1];
    const char *p = op->create_op.path, *d = op->create_op.data;
    zoo_set_op_init(op, p, d, (int)datalen, version, NULL);
    return 0;
}

/* Adds partitions [first, first + count) of topic: each partition node and
 * its replicas node. */
static int multi_add_partitions(multi_t *t, const char *topic, int32_t first, int count, const int32_t *assignment,
                              int rf)
{
    char path[PATH_MAX_LEN], doc[1024];
    for (int32_t p = first; p < first + count; p++) {
        int len = coord_replicas_write(doc, sizeof(doc), assignment + (size_t)p * (size_t)rf, rf);
        if (len < 0 || coord_path_partition(path, sizeof(path), topic, p) < 0 || multi_add_create(t, path, "", 0) < 0 ||
            coord_path_partition_leaf(path, sizeof(path), topic, p, "replicas") < 0 ||
            multi_add_create(t, path, doc, (size_t)len) < 0)
            return -1;
    }
    return 0;
}

static const char *op_path(const zoo_op_t *op)
{
    return op->type == ZOO_SETDATA_OP ? op->set_op.path : op->create_op.path;
}

/* Runs the multi; on failure *failed is the path of the op that failed. */
static int multi_commit(zhandle_t *zh, multi_t *t, const char **failed)
{
    zoo_op_result_t *results = calloc((size_t)t->nops, sizeof(zoo_op_result_t));
    if (!results)
        return ZSYSTEMERROR;
    int rc = zoo_multi(zh, t->nops, t->ops, results);
    *failed = t->nops ? op_path(&t->ops[0]) : "";
    for (int i = 0; rc != ZOK && i < t->nops; i++) {
        if (results[i].err != ZOK && results[i].err != ZRUNTIMEINCONSISTENCY) {
            *failed = op_path(&t->ops[i]);
            break;
        }
    }
    free(results);
    return rc;
}

/* ---- configs ---- */

/* The topic document's configs, each valid and named once. */
static int fill_configs(const coord_config_entry_t *configs, int nconfigs, coord_topic_t *doc,
                        coord_admin_result_t *res)
{
    char err[256];
    if (nconfigs < 0 || nconfigs > COORD_MAX_TOPIC_CONFIGS)
        return coord_admin_fail(res, KERR_INVALID_CONFIG, "At most %d topic configs, got %d.", COORD_MAX_TOPIC_CONFIGS,
                                nconfigs);
    doc->nconfigs = 0;
    for (int i = 0; i < nconfigs; i++) {
        const coord_config_entry_t *c = &configs[i];
        if (memchr(c->key, 0, sizeof(c->key)) == NULL || memchr(c->value, 0, sizeof(c->value)) == NULL)
            return coord_admin_fail(res, KERR_INVALID_CONFIG, "Topic config %d is not a terminated string.", i);
        if (coord_config_valid(COORD_ENTITY_TOPIC, c->key, c->value, err, sizeof(err)) < 0)
            return coord_admin_fail(res, KERR_INVALID_CONFIG, "%s", err);
        for (int j = 0; j < i; j++)
            if (strcmp(configs[j].key, c->key) == 0)
                return coord_admin_fail(res, KERR_INVALID_CONFIG, "Topic config %s is given more than once.", c->key);
        doc->configs[doc->nconfigs++] = *c;
    }
    if (coord_config_check_set(COORD_ENTITY_TOPIC, doc->configs, doc->nconfigs, err, sizeof(err)) < 0)
        return coord_admin_fail(res, KERR_INVALID_CONFIG, "%s", err);
    return 0;
}

/* One line naming the configs of a new topic that kipper stores but does
 * not act on, so nobody takes them for applied. */
static void note_unacted(const char *topic, const coord_topic_t *doc)
{
    char list[1024] = "";
    for (int i = 0; i < doc->nconfigs; i++)
        coord_config_note_unacted(COORD_ENTITY_TOPIC, doc->configs[i].key, list, sizeof(list));
    if (list[0])
        log_info("topic '%s': %s accepted and stored, not acted on by kipper", topic, list);
}

/* ---- assignments ---- */

static int random_below(int n)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (uint32_t)clock_mono_ms();   /* not a secret: only spreads leaders */
    return (int)(r % (uint32_t)n);
}

/* The live brokers, as a malloc'd sorted array. */
static int32_t *live_brokers(zhandle_t *zh, int *n, coord_admin_result_t *res)
{
    char err[256];
    int32_t *brokers = malloc(sizeof(int32_t) * COORD_ADMIN_MAX_BROKERS);
    if (!brokers) {
        coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return NULL;
    }
    if (coord_admin_live_brokers(zh, brokers, COORD_ADMIN_MAX_BROKERS, n, err, sizeof(err)) < 0) {
        coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "%s", err);
        free(brokers);
        return NULL;
    }
    return brokers;
}

/* Kafka's assignReplicasToBrokers over the live brokers, for partitions
 * [first, first + count) of out. A new topic (first_replica_of_p0 < 0) gets
 * a random start and shift; added partitions continue from partition 0's
 * preferred replica, as Kafka does. */
int coord_admin_broker_racks(zhandle_t *zh, const int32_t *ids, int n, char (*racks)[COORD_RACK_MAX], char *err,
                             size_t errlen)
{
    for (int i = 0; i < n; i++) {
        char path[64], data[COORD_DOC_MAX], why[256];
        int len = sizeof(data);
        coord_broker_t b;
        coord_path_broker(path, sizeof(path), ids[i]);
        int rc = zoo_get(zh, path, 0, data, &len, NULL);
        if (rc != ZOK) {
            snprintf(err, errlen, "cannot read %s: %s", path, zerror(rc));
            return -1;
        }
        if (coord_broker_parse(data, len < 0 ? 0 : (size_t)len, &b, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "%s: %s", path, why);
            return -1;
        }
        snprintf(racks[i], COORD_RACK_MAX, "%s", b.rack);
    }
    return 0;
}

int coord_admin_assign(zhandle_t *zh, const int32_t *brokers, int n, int32_t first, int count, int rf, int start,
                       int shift, int32_t *out, coord_admin_result_t *res)
{
    char err[256];
    char (*racks)[COORD_RACK_MAX] = xcalloc((size_t)(n ? n : 1), sizeof(*racks));
    const char **names = xcalloc((size_t)(n ? n : 1), sizeof(*names));
    int rc = coord_admin_broker_racks(zh, brokers, n, racks, err, sizeof(err)) < 0
                 ? coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "%s", err)
                 : 0;
    int with_rack = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        names[i] = racks[i];
        with_rack += racks[i][0] != 0;
    }
    if (rc == 0 && with_rack > 0 && with_rack < n)
        rc = coord_admin_fail(res, KERR_INVALID_REPLICA_ASSIGNMENT,
                              "Not all brokers have rack information for replica rack aware assignment.");
    else if (rc == 0 && (with_rack ? coord_assign_replicas_racks(brokers, names, n, first, count, rf, start, shift, out,
                                                                   err, sizeof(err))
                                     : coord_assign_replicas(brokers, n, first, count, rf, start, shift, out, err,
                                                             sizeof(err))) < 0)
        rc = coord_admin_fail(res, rf > n ? KERR_INVALID_REPLICATION_FACTOR : KERR_UNKNOWN_SERVER_ERROR, "%s", err);
    free(names);
    free(racks);
    return rc;
}

/* Over the live brokers: rack-aware when every one has a broker.rack (and
 * refused when only some have), as Kafka's AdminUtils places replicas. */
static int assign_automatically(zhandle_t *zh, int32_t first, int count, int rf, int32_t first_replica_of_p0,
                                int32_t *out, coord_admin_result_t *res)
{
    int n;
    int32_t *brokers = live_brokers(zh, &n, res);
    if (!brokers)
        return -1;
    int start = 0, shift = 0;
    if (first_replica_of_p0 < 0 && n > 0) {
        start = random_below(n);
        shift = random_below(n);
    } else if (n > 0) {
        /* AdminZkClient.createNewPartitionsAssignment: the first broker at or
         * after partition 0's preferred replica. */
        while (start < n && brokers[start] < first_replica_of_p0)
            start++;
        start = shift = start < n ? start : 0;
    }
    int rc = coord_admin_assign(zh, brokers, n, first, count, rf, start, shift, out, res);
    free(brokers);
    return rc;
}

static int find_duplicate(const int32_t *ids, int n, int32_t *dup)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (ids[i] == ids[j]) {
                *dup = ids[i];
                return 1;
            }
    return 0;
}

/* An explicit assignment of count partitions (numbered from first) of rf
 * replicas each: broker ids valid and distinct within each partition. */
static int check_assignment(const int32_t *assignment, int32_t first, int count, int rf, coord_admin_result_t *res)
{
    for (int i = 0; i < count; i++) {
        const int32_t *replicas = assignment + (size_t)i * (size_t)rf;
        int32_t dup;
        for (int r = 0; r < rf; r++)
            if (replicas[r] < 0)
                return coord_admin_fail(res, KERR_INVALID_REPLICA_ASSIGNMENT,
                                        "Invalid broker id %d in the replica assignment of partition %d.",
                                        (int)replicas[r], (int)(first + i));
        if (find_duplicate(replicas, rf, &dup))
            return coord_admin_fail(res, KERR_INVALID_REPLICA_ASSIGNMENT,
                                    "Duplicate brokers not allowed in replica assignment: broker %d appears twice for "
                                    "partition id %d.",
                                    (int)dup, (int)(first + i));
    }
    return 0;
}

/* Partition and replica counts within Kafka's rules and kipper's limits. */
static int check_shape(int partitions, int rf, coord_admin_result_t *res)
{
    if (partitions < 1)
        return coord_admin_fail(res, KERR_INVALID_PARTITIONS, "Number of partitions must be larger than 0.");
    if (partitions > COORD_MAX_PARTITIONS)
        return coord_admin_fail(res, KERR_INVALID_PARTITIONS,
                                "Number of partitions %d is larger than kipper's limit of %d.",
                                partitions, COORD_MAX_PARTITIONS);
    if (rf < 1)
        return coord_admin_fail(res, KERR_INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.");
    if (rf > COORD_MAX_REPLICAS)
        return coord_admin_fail(res, KERR_INVALID_REPLICATION_FACTOR,
                                "Replication factor %d is larger than kipper's limit of %d.", rf, COORD_MAX_REPLICAS);
    return 0;
}

/* ---- create ---- */

static int topic_exists(zhandle_t *zh, const char *topic, coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN];
    coord_path_topic(path, sizeof(path), topic);
    int rc = zoo_exists(zh, path, 0, NULL);
    if (rc == ZOK)
        return 1;
    if (rc == ZNONODE)
        return 0;
    return coord_admin_zk_fail(res, "check", path, rc);
}

static int too_big(coord_admin_result_t *res, const char *topic, int partitions)
{
    return coord_admin_fail(res, KERR_INVALID_PARTITIONS,
                            "%d partitions of topic '%s' do not fit in one ZooKeeper transaction (about 1 MB, "
                            "jute.maxbuffer); use fewer partitions.",
                            partitions, topic);
}

/* /config/topics/[topic] in the topic's multi: created, or set at its
 * version when a node is there already (left by a topic of the same name
 * whose deletion stopped short, as Kafka's setOrCreateEntityConfigs
 * overwrites it). 0, or -1 with res. */
static int add_topic_config(zhandle_t *zh, multi_t *t, const char *topic, const coord_topic_t *doc, char *text,
                            coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN];
    struct Stat st;
    int len = coord_entity_config_write(text, COORD_DOC_MAX + 1, doc->configs, doc->nconfigs);
    if (len < 0)
        return coord_admin_fail(res, KERR_INVALID_CONFIG,
                                "The configs of topic '%s' do not fit in one %d-byte document.", topic,
                                COORD_DOC_MAX);
    coord_path_topic_config(path, sizeof(path), topic);
    int rc = zoo_exists(zh, path, 0, &st);
    if (rc != ZOK && rc != ZNONODE)
        return coord_admin_zk_fail(res, "check", path, rc);
    if ((rc == ZOK ? multi_add_set(t, path, text, (size_t)len, st.version)
                   : multi_add_create(t, path, text, (size_t)len)) < 0)
        return coord_admin_fail(res, KERR_INVALID_CONFIG, "The configs of topic '%s' are too large.", topic);
    return 0;
}

/* The whole topic in one transaction; committed unless validate_only. Its
 * configs go to /config/topics/[topic]; the topic document keeps an empty
 * "config" (coord_data.h says why). */
static int write_topic(zhandle_t *zh, const char *topic, const coord_topic_t *doc, const int32_t *assignment,
                       int partitions, int rf, int validate_only, coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN], *text = malloc(COORD_DOC_MAX + 1);
    multi_t t;
    int rc = -1;
    coord_topic_t *bare = calloc(1, sizeof(*bare));   /* about 74 KiB: not for a helper thread's stack */
    if (bare)
        memcpy(bare->topic_id, doc->topic_id, 16);
    int doclen = text && bare ? coord_topic_write(text, COORD_DOC_MAX + 1, bare) : -1;
    free(bare);
    if (multi_init(&t, 2 + 2 * partitions) < 0 || !text || doclen < 0)
        coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    else if (coord_path_topic(path, sizeof(path), topic) < 0 || multi_add_create(&t, path, text, (size_t)doclen) < 0 ||
             multi_add_partitions(&t, topic, 0, partitions, assignment, rf) < 0)
        too_big(res, topic, partitions);
    else if (add_topic_config(zh, &t, topic, doc, text, res) < 0)
        ;   /* res says why */
    else if (validate_only)
        rc = 0;
    else {
        const char *failed;
        int zrc = multi_commit(zh, &t, &failed);
        if (zrc == ZOK)
            rc = 0;
        else if (zrc == ZNODEEXISTS)
            coord_admin_fail(res, KERR_TOPIC_ALREADY_EXISTS, "Topic '%s' already exists.", topic);
        else
            coord_admin_zk_fail(res, "create", failed, zrc);
    }
    multi_free(&t);
    free(text);
    return rc;
}

/* The replicas of every partition of a new topic: the caller's, checked, or
 * Kafka's automatic assignment over the live brokers. */
static int new_topic_assignment(zhandle_t *zh, const int32_t *assignment, int partitions, int rf, int32_t *out,
                                coord_admin_result_t *res)
{
    if (!assignment)
        return assign_automatically(zh, 0, partitions, rf, -1, out, res);
    if (check_assignment(assignment, 0, partitions, rf, res) < 0)
        return -1;
    memcpy(out, assignment, sizeof(int32_t) * (size_t)partitions * (size_t)rf);
    return 0;
}

/* /config/topics, in a cluster an older kipper set up. */
static int config_parent(zhandle_t *zh, int validate_only, coord_admin_result_t *res)
{
    char err[256];
    if (!validate_only && create_path(zh, COORD_CONFIG_TOPICS, err, sizeof(err)) < 0)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "%s", err);
    return 0;
}

int coord_admin_create_topic(zhandle_t *zh, const char *topic, int partitions, int rf, const int32_t *assignment,
                             int default_partitions, int default_rf, const coord_config_entry_t *configs,
                             int nconfigs, int validate_only, uint8_t topic_id_out[16], coord_admin_result_t *res)
{
    succeed(res);
    if (check_topic_name(topic, res) < 0)
        return -1;
    int exists = topic_exists(zh, topic, res);
    if (exists != 0)
        return exists > 0 ? coord_admin_fail(res, KERR_TOPIC_ALREADY_EXISTS, "Topic '%s' already exists.", topic) : -1;
    partitions = partitions == -1 ? default_partitions : partitions;
    rf = rf == -1 ? default_rf : rf;
    if (check_shape(partitions, rf, res) < 0)
        return -1;
    coord_topic_t *doc = malloc(sizeof(*doc));   /* about 74 KiB: not for a helper thread's stack */
    int32_t *replicas = malloc(sizeof(int32_t) * (size_t)partitions * (size_t)rf);
    int rc = -1;
    if (!doc || !replicas) {
        coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    } else if (new_topic_assignment(zh, assignment, partitions, rf, replicas, res) == 0 &&
               fill_configs(configs, nconfigs, doc, res) == 0 && config_parent(zh, validate_only, res) == 0) {
        coord_topic_id_generate(doc->topic_id);
        rc = write_topic(zh, topic, doc, replicas, partitions, rf, validate_only, res);
        if (rc == 0 && !validate_only)
            note_unacted(topic, doc);
    }
    if (rc == 0 && topic_id_out) {
        if (validate_only)
            memset(topic_id_out, 0, 16);   /* Kafka's "no id": nothing was created */
        else
            memcpy(topic_id_out, doc->topic_id, 16);
    }
    free(doc);
    free(replicas);
    return rc;
}

/* ---- add partitions ---- */

/* How many partitions the topic has (numbered 0..n-1, as Kafka requires). */
static int current_partitions(zhandle_t *zh, const char *topic, int *count, coord_admin_result_t *res)
{
    int32_t *partitions;
    int n;
    if (list_partitions(zh, topic, &partitions, &n, res) < 0)
        return -1;
    int contiguous = n > 0 && partitions[n - 1] == n - 1;
    free(partitions);
    if (n == 0)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR,
                                "malformed /brokers/topics/%s in ZooKeeper: no partitions",
                                topic);
    if (!contiguous)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR,
                                "malformed /brokers/topics/%s in ZooKeeper: its %d partitions are not numbered 0..%d",
                                topic, n, n - 1);
    *count = n;
    return 0;
}

/* Kafka's checks of an explicit assignment for new partitions (ZkAdminManager.createPartitions). */
static int check_added_assignment(zhandle_t *zh, const int32_t *assignment, int32_t first, int count,
                                  int assignment_rf, int rf, coord_admin_result_t *res)
{
    if (assignment_rf != rf)
        return coord_admin_fail(res, KERR_INVALID_REPLICA_ASSIGNMENT,
                                "Inconsistent replication factor between partitions, partition 0 has %d while the new "
                                "partitions have %d.",
                                rf, assignment_rf);
    if (check_assignment(assignment, first, count, rf, res) < 0)
        return -1;
    int n;
    int32_t *brokers = live_brokers(zh, &n, res);
    if (!brokers)
        return -1;
    int32_t unknown = -1;
    for (size_t i = 0; i < (size_t)count * (size_t)rf && unknown < 0; i++)
        if (!bsearch(&assignment[i], brokers, (size_t)n, sizeof(int32_t), compare_int32))
            unknown = assignment[i];
    free(brokers);
    if (unknown >= 0)
        return coord_admin_fail(res, KERR_INVALID_REPLICA_ASSIGNMENT, "Unknown broker(s) in replica assignment: %d.",
                                (int)unknown);
    return 0;
}

/* Fills all[current * rf ...] for the added partitions: the caller's
 * assignment, checked, or Kafka's continuation of the topic's pattern. */
static int added_partitions_assignment(zhandle_t *zh, const int32_t *assignment, int assignment_rf, int32_t current,
                                       int added, int rf, int32_t first_replica_of_p0, int32_t *all,
                                       coord_admin_result_t *res)
{
    if (!assignment)
        return assign_automatically(zh, current, added, rf, first_replica_of_p0, all, res);
    if (check_added_assignment(zh, assignment, current, added, assignment_rf, rf, res) < 0)
        return -1;
    memcpy(all + (size_t)current * (size_t)rf, assignment, sizeof(int32_t) * (size_t)added * (size_t)rf);
    return 0;
}

static int write_partitions(zhandle_t *zh, const char *topic, int32_t first, int count, const int32_t *all, int rf,
                            int validate_only, coord_admin_result_t *res)
{
    multi_t t;
    int rc = -1;
    if (multi_init(&t, 2 * count) < 0)
        coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    else if (multi_add_partitions(&t, topic, first, count, all, rf) < 0)
        too_big(res, topic, count);
    else if (validate_only)
        rc = 0;
    else {
        const char *failed;
        int zrc = multi_commit(zh, &t, &failed);
        if (zrc == ZOK)
            rc = 0;
        else if (zrc == ZNONODE)
            no_such_topic(res, topic);   /* deleted meanwhile */
        else if (zrc == ZNODEEXISTS)
            coord_admin_fail(res, KERR_INVALID_PARTITIONS, "Partitions of topic '%s' were added meanwhile; try again.",
                             topic);
        else
            coord_admin_zk_fail(res, "create", failed, zrc);
    }
    multi_free(&t);
    return rc;
}

int coord_admin_add_partitions(zhandle_t *zh, const char *topic, int total_count, const int32_t *assignment,
                               int assignment_rf, int validate_only, coord_admin_result_t *res)
{
    succeed(res);
    int current = 0, rf = 0;
    int32_t p0[COORD_MAX_REPLICAS];
    char *buf = malloc(COORD_DOC_MAX);
    if (!buf)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    int rc = check_topic_name(topic, res) < 0 || current_partitions(zh, topic, &current, res) < 0 ||
                     read_replicas(zh, topic, 0, buf, p0, &rf, res) < 0
                 ? -1
                 : 0;
    free(buf);
    if (rc < 0)
        return -1;
    if (total_count <= current)
        return coord_admin_fail(res, KERR_INVALID_PARTITIONS,
                                "The number of partitions for a topic can only be increased. Topic %s currently has %d "
                                "partitions, %d would not be an increase.",
                                topic, current, total_count);
    if (total_count > COORD_MAX_PARTITIONS)
        return coord_admin_fail(res, KERR_INVALID_PARTITIONS,
                                "Number of partitions %d is larger than kipper's limit of %d.",
                                total_count, COORD_MAX_PARTITIONS);
    int added = total_count - current;
    int32_t *all = malloc(sizeof(int32_t) * (size_t)total_count * (size_t)rf);
    if (!all)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    rc = -1;
    if (added_partitions_assignment(zh, assignment, assignment_rf, current, added, rf, p0[0], all, res) == 0)
        rc = write_partitions(zh, topic, current, added, all, rf, validate_only, res);
    free(all);
    return rc;
}

/* ---- delete ---- */

/* Below this many children a node goes in one multi with its leaf children
 * (a partition node has at most replicas, leader and ISR); above it, its
 * children are deleted one by one first. */
#define MULTI_CHILDREN 16

typedef struct {
    char paths[MULTI_CHILDREN + 1][PATH_MAX_LEN];
    zoo_op_t ops[MULTI_CHILDREN + 1];
    zoo_op_result_t results[MULTI_CHILDREN + 1];
    int nops;
} delete_batch_t;

static int delete_tree(zhandle_t *zh, const char *path, int depth, coord_admin_result_t *res);

/* Queues child for the batch if it is a leaf; deletes its subtree first if
 * not (or if the node has too many children to batch). */
static int prepare_child(zhandle_t *zh, const char *path, const char *name, int batchable, int depth,
                         delete_batch_t *b, coord_admin_result_t *res)
{
    char *child = b->paths[b->nops];
    int n = snprintf(child, PATH_MAX_LEN, "%s/%s", path, name);
    if (n < 0 || n >= PATH_MAX_LEN)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "path too long below %s", path);
    struct Stat st;
    int rc = batchable ? zoo_exists(zh, child, 0, &st) : ZOK;
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK)
        return coord_admin_zk_fail(res, "check", child, rc);
    if (!batchable || st.numChildren > 0)
        return delete_tree(zh, child, depth + 1, res);
    zoo_delete_op_init(&b->ops[b->nops++], child, -1);
    return 0;
}

/* One attempt: 0 when path is gone, 1 to list again (a broker added or
 * removed a child meanwhile), -1 with res. */
static int delete_once(zhandle_t *zh, const char *path, int depth, delete_batch_t *b, coord_admin_result_t *res)
{
    struct String_vector kids = {0, NULL};
    int rc = zoo_get_children(zh, path, 0, &kids);
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK)
        return coord_admin_zk_fail(res, "list", path, rc);
    int batchable = kids.count <= MULTI_CHILDREN, failed = 0;
    b->nops = 0;
    for (int i = 0; i < kids.count && !failed; i++)
        failed = prepare_child(zh, path, kids.data[i], batchable, depth, b, res);
    deallocate_String_vector(&kids);
    if (failed)
        return -1;
    snprintf(b->paths[b->nops], PATH_MAX_LEN, "%s", path);
    zoo_delete_op_init(&b->ops[b->nops], b->paths[b->nops], -1);
    b->nops++;
    rc = zoo_multi(zh, b->nops, b->ops, b->results);
    if (rc == ZOK)
        return 0;
    if (rc == ZNOTEMPTY || rc == ZNONODE)
        return 1;
    return coord_admin_zk_fail(res, "delete", path, rc);
}

/* Deletes path and everything below it. A broker may re-create a leader or
 * ISR node while we work: the leaf children and the node itself go in one
 * multi, so nothing can slip in between them; a child added just before the
 * multi fails it as a whole (NOTEMPTY), and we list again, a bounded number
 * of times. */
static int delete_tree(zhandle_t *zh, const char *path, int depth, coord_admin_result_t *res)
{
    if (depth > MAX_TREE_DEPTH)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "%s is nested deeper than a topic can be", path);
    delete_batch_t *b = malloc(sizeof(*b));
    if (!b)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    int rc = 1;
    for (int attempt = 0; attempt < DELETE_RETRIES && rc == 1; attempt++)
        rc = delete_once(zh, path, depth, b, res);
    free(b);
    if (rc == 1)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR,
                                "%s kept getting new children; gave up after %d attempts",
                                path, DELETE_RETRIES);
    return rc;
}

/* Removing the replicas nodes first tells every broker to stop its replica
 * and delete its log before the rest goes. */
static int delete_replicas_nodes(zhandle_t *zh, const char *topic, coord_admin_result_t *res)
{
    int32_t *partitions;
    int n;
    if (list_partitions(zh, topic, &partitions, &n, res) < 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char path[PATH_MAX_LEN];
        coord_path_partition_leaf(path, sizeof(path), topic, partitions[i], "replicas");
        int zrc = zoo_delete(zh, path, -1);
        if (zrc != ZOK && zrc != ZNONODE)
            rc = coord_admin_zk_fail(res, "delete", path, zrc);
    }
    free(partitions);
    return rc;
}

int coord_admin_delete_topic(zhandle_t *zh, const char *topic, coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN];
    succeed(res);
    if (check_topic_name(topic, res) < 0 || delete_replicas_nodes(zh, topic, res) < 0)
        return -1;
    coord_path_topic(path, sizeof(path), topic);
    if (delete_tree(zh, path, 0, res) < 0)
        return -1;
    /* Its configs last, as Kafka deletes them once the topic is gone. */
    coord_path_topic_config(path, sizeof(path), topic);
    int rc = zoo_delete(zh, path, -1);
    return rc == ZOK || rc == ZNONODE ? 0 : coord_admin_zk_fail(res, "delete", path, rc);
}

/* ---- describe and list ---- */

/* Leader and ISR of one partition; either node may be missing (no leader
 * elected yet, or the partition is offline). */
static int read_leadership(zhandle_t *zh, const char *topic, coord_partition_desc_t *d, char *buf,
                           coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN], why[256];
    int len;
    int32_t leader_epoch = -1;
    d->leader = -1;
    d->leader_epoch = -1;
    d->nisr = 0;
    coord_path_partition_leaf(path, sizeof(path), topic, d->partition, "leader");
    int found = coord_admin_read_doc(zh, path, buf, &len, NULL, res);
    if (found < 0)
        return -1;
    if (found && coord_leader_parse(buf, (size_t)len, &d->leader, &leader_epoch, why, sizeof(why)) < 0)
        return bad_doc(res, path, why);
    d->leader_epoch = leader_epoch;
    coord_path_partition_leaf(path, sizeof(path), topic, d->partition, "ISR");
    found = coord_admin_read_doc(zh, path, buf, &len, NULL, res);
    if (found < 0)
        return -1;
    if (found && coord_isr_parse(buf, (size_t)len, d->isr, &d->nisr, &d->leader_epoch, why, sizeof(why)) < 0)
        return bad_doc(res, path, why);
    return 0;
}

/* The topic document, with the topic's configs from /config/topics/[topic]
 * when that node exists (else the document's own, written by an older
 * kipper). */
static int read_topic_doc(zhandle_t *zh, const char *topic, coord_topic_t *doc, char *buf,
                          coord_admin_result_t *res)
{
    char path[PATH_MAX_LEN], why[256];
    int len;
    coord_path_topic(path, sizeof(path), topic);
    int found = coord_admin_read_doc(zh, path, buf, &len, NULL, res);
    if (found <= 0)
        return found < 0 ? -1 : no_such_topic(res, topic);
    if (coord_topic_parse(buf, (size_t)len, doc, why, sizeof(why)) < 0)
        return bad_doc(res, path, why);
    coord_path_topic_config(path, sizeof(path), topic);
    found = coord_admin_read_doc(zh, path, buf, &len, NULL, res);
    if (found < 0)
        return -1;
    if (found && coord_entity_config_parse(buf, (size_t)len, doc->configs, &doc->nconfigs, why, sizeof(why)) < 0)
        return bad_doc(res, path, why);
    return 0;
}

static int describe_partitions(zhandle_t *zh, const char *topic, coord_topic_desc_t *out, char *buf,
                               coord_admin_result_t *res)
{
    int32_t *partitions;
    int n;
    if (list_partitions(zh, topic, &partitions, &n, res) < 0)
        return -1;
    out->partitions = calloc((size_t)(n > 0 ? n : 1), sizeof(coord_partition_desc_t));
    if (!out->partitions) {
        free(partitions);
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        coord_partition_desc_t *d = &out->partitions[i];
        d->partition = partitions[i];
        rc = read_replicas(zh, topic, d->partition, buf, d->replicas, &d->nreplicas, res) < 0 ||
                     read_leadership(zh, topic, d, buf, res) < 0
                 ? -1
                 : 0;
    }
    free(partitions);
    out->npartitions = n;
    return rc;
}

int coord_admin_describe_topic(zhandle_t *zh, const char *topic, coord_topic_desc_t *out, coord_admin_result_t *res)
{
    succeed(res);
    memset(out, 0, sizeof(*out));
    if (check_topic_name(topic, res) < 0)
        return -1;
    snprintf(out->name, sizeof(out->name), "%s", topic);
    char *buf = malloc(COORD_DOC_MAX);
    if (!buf)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    int rc = read_topic_doc(zh, topic, &out->topic, buf, res) < 0 || describe_partitions(zh, topic, out, buf, res) < 0
                 ? -1
                 : 0;
    free(buf);
    if (rc < 0)
        coord_admin_topic_desc_free(out);
    return rc;
}

void coord_admin_topic_desc_free(coord_topic_desc_t *d)
{
    free(d->partitions);
    d->partitions = NULL;
    d->npartitions = 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int coord_admin_list_topics(zhandle_t *zh, char ***names, int *n, char *err, size_t errlen)
{
    struct String_vector kids = {0, NULL};
    *names = NULL;
    *n = 0;
    int rc = zoo_get_children(zh, "/brokers/topics", 0, &kids);
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK) {
        snprintf(err, errlen, "cannot list /brokers/topics in ZooKeeper: %s (%d)", zerror(rc), rc);
        return -1;
    }
    int total = kids.count, count = 0;
    char **out = calloc((size_t)(total > 0 ? total : 1), sizeof(char *));
    for (int i = 0; out && i < total; i++) {
        if (!(out[count] = strdup(kids.data[i])))
            break;
        count++;
    }
    deallocate_String_vector(&kids);
    if (!out || count < total) {
        coord_admin_names_free(out, count);
        snprintf(err, errlen, "out of memory listing topics");
        return -1;
    }
    qsort(out, (size_t)count, sizeof(char *), compare_names);
    *names = out;
    *n = count;
    return 0;
}

void coord_admin_names_free(char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}
