/* reassignments.c -- see reassignments.h. Three levels are watched: the
 * root's children (topics with moves), each such topic's children
 * (partitions being moved) and each move's data. A move that disappears is
 * seen by the data watch (deleted), and by the listings, which clear any
 * partition of the view they no longer name. */
#define _GNU_SOURCE
#include "reassignments.h"
#include "cluster.h"
#include "conn.h"
#include "replica.h"
#include "base/alloc.h"
#include "base/logging.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    broker_t *b;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
} move_read_t;

static move_read_t *new_read(broker_t *b, const char *topic, int32_t partition)
{
    move_read_t *m = xcalloc(1, sizeof(*m));
    m->b = b;
    snprintf(m->topic, sizeof(m->topic), "%s", topic ? topic : "");
    m->partition = partition;
    return m;
}

static int listed(const coord_result_t *res, const char *name)
{
    for (int i = 0; i < res->nchildren; i++)
        if (strcmp(res->children[i], name) == 0)
            return 1;
    return 0;
}

static void set_target(broker_t *b, partition_t *p, const int32_t *target, int n)
{
    char ids[256] = "";
    size_t at = 0;
    for (int i = 0; i < n && at < sizeof(ids); i++)
        at += (size_t)snprintf(ids + at, sizeof(ids) - at, "%s%d", i ? "," : "", (int)target[i]);
    if (p->reassigning && p->ntarget == n && memcmp(p->target, target, sizeof(*target) * (size_t)n) == 0)
        return;
    p->reassigning = 1;
    p->ntarget = n;
    memcpy(p->target, target, sizeof(*target) * (size_t)n);
    log_info("%s-%d is to move to replicas [%s]", p->topic->name, (int)p->id, ids);
    replica_reconcile(b, p);
    broker_wake_data_waiters(b);   /* AlterPartitionReassignments answers wait for the target */
}

static void read_move(broker_t *b, const char *topic, int32_t partition);

static void clear_target(broker_t *b, partition_t *p)
{
    if (!p->reassigning)
        return;
    p->reassigning = 0;
    p->ntarget = 0;
    log_info("%s-%d: no move asked for any more", p->topic->name, (int)p->id);
    replica_reconcile(b, p);
    broker_wake_data_waiters(b);
}

/* ---- a move gone ---- */

static void move_gone_confirmed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    move_read_t *m = arg;
    partition_t *p = cluster_partition(m->b, m->topic, m->partition);
    if (p) {
        p->move_confirming = 0;
        if (res->rc == ZNONODE)
            clear_target(m->b, p);
        else if (res->rc == ZOK)
            read_move(m->b, m->topic, m->partition);   /* a new move was asked for meanwhile */
    }
    free(m);
}

/* The move's node is gone: the move was made (the replicas node now names
 * the target, written in the same multi) or cancelled. Which one, the
 * replicas node says, and its new content may still be on its way: its read
 * was sent when its change was announced, but the deletion can reach us
 * first, in the answer to a listing sent before. Dropping the target now
 * would make a broker the move just added look unassigned, and it would
 * delete the log it has been elected with. So the target is kept until the
 * answer to a request sent now: ZooKeeper answers a session's requests in
 * order, so by then the replicas read has been applied. */
static void move_gone(broker_t *b, partition_t *p)
{
    char path[COORD_TOPIC_NAME_MAX + 64];
    if (!p->reassigning || p->move_confirming)
        return;
    move_read_t *m = new_read(b, p->topic->name, p->id);
    if (coord_path_reassignment(path, sizeof(path), p->topic->name, p->id) < 0 ||
        coord_exists(b->coord, path, 0, move_gone_confirmed, m) < 0) {
        free(m);
        return;
    }
    p->move_confirming = 1;
}

/* ---- one move's data ---- */

static void move_read(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    move_read_t *m = arg;
    partition_t *p = cluster_partition(m->b, m->topic, m->partition);
    char err[256];
    int32_t target[COORD_MAX_REPLICAS];
    int n = 0;
    if (p && res->rc == ZNONODE)
        move_gone(m->b, p);
    else if (p && res->rc == ZOK &&
             coord_replicas_parse(res->data, (size_t)res->len, target, &n, err, sizeof(err)) < 0)
        log_warn("%s/%s/%d: %s; ignored", COORD_REASSIGNMENTS, m->topic, (int)m->partition, err);
    else if (p && res->rc == ZOK && n > 0)
        set_target(m->b, p, target, n);
    free(m);
}

static void read_move(broker_t *b, const char *topic, int32_t partition)
{
    char path[COORD_TOPIC_NAME_MAX + 64];
    move_read_t *m = new_read(b, topic, partition);
    if (coord_path_reassignment(path, sizeof(path), topic, partition) < 0 ||
        coord_get(b->coord, path, 1, move_read, m) < 0)
        free(m);
}

/* ---- a topic's moves ---- */

static void clear_unlisted(broker_t *b, topic_t *t, const coord_result_t *res)
{
    char name[16];
    for (int k = 0; k < t->nparts; k++) {
        if (!t->parts[k] || !t->parts[k]->reassigning)
            continue;
        snprintf(name, sizeof(name), "%d", k);
        if (!res || !listed(res, name))
            move_gone(b, t->parts[k]);
    }
}

static void topic_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    move_read_t *m = arg;
    topic_t *t = cluster_topic(m->b, m->topic);
    if (res->rc == ZOK) {
        for (int i = 0; i < res->nchildren; i++) {
            int32_t id = coord_parse_partition_name(res->children[i]);
            if (id >= 0)
                read_move(m->b, m->topic, id);
        }
    } else if (res->rc != ZNONODE && res->rc != ZCLOSING) {
        log_warn("cannot list the moves of %s: %s", m->topic, zerror(res->rc));
    }
    if (t && (res->rc == ZOK || res->rc == ZNONODE))
        clear_unlisted(m->b, t, res->rc == ZOK ? res : NULL);
    free(m);
}

static void read_topic(broker_t *b, const char *topic, int watch)
{
    char path[COORD_TOPIC_NAME_MAX + 64];
    move_read_t *m = new_read(b, topic, -1);
    if (coord_path_reassignment(path, sizeof(path), topic, -1) < 0 ||
        coord_children(b->coord, path, watch, topic_listed, m) < 0)
        free(m);
}

void reassignments_topic_known(broker_t *b, const char *topic)
{
    /* No watch: a topic without moves leaves none behind (the root's
     * listing sets one when its folder appears). */
    read_topic(b, topic, 0);
}

/* ---- the root ---- */

static void root_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    broker_t *b = arg;
    if (res->rc != ZOK) {
        if (res->rc != ZNONODE && res->rc != ZCLOSING)
            log_warn("cannot list %s: %s", COORD_REASSIGNMENTS, zerror(res->rc));
        return;
    }
    for (int i = 0; i < res->nchildren; i++)
        if (cluster_topic(b, res->children[i]))
            read_topic(b, res->children[i], 1);
    for (int i = 0; i < b->ntopics; i++)
        if (!listed(res, b->topics[i]->name))
            clear_unlisted(b, b->topics[i], NULL);
}

void reassignments_read(broker_t *b)
{
    coord_children(b->coord, COORD_REASSIGNMENTS, 1, root_listed, b);
}

/* ---- watch events ---- */

int reassignments_event(broker_t *b, int type, const char *path)
{
    static const char root[] = COORD_REASSIGNMENTS;
    size_t n = sizeof(root) - 1;
    if (strncmp(path, root, n) != 0 || (path[n] && path[n] != '/'))
        return 0;
    if (!path[n]) {
        reassignments_read(b);
        return 1;
    }
    char topic[COORD_TOPIC_NAME_MAX + 1];
    const char *t = path + n + 1, *slash = strchr(t, '/');
    size_t tlen = slash ? (size_t)(slash - t) : strlen(t);
    if (tlen == 0 || tlen >= sizeof(topic))
        return 1;
    memcpy(topic, t, tlen);
    topic[tlen] = 0;
    if (!slash) {
        if (type == ZOO_CHILD_EVENT)
            read_topic(b, topic, 1);
        return 1;
    }
    int32_t partition = coord_parse_partition_name(slash + 1);
    if (partition >= 0)
        read_move(b, topic, partition);
    return 1;
}
