/* group_offsets.c -- the committed-offsets store (see group_offsets.h):
 *
 *   /consumers/[group]/offsets/[topic]/[partition]
 *       {"offset":N,"leader_epoch":E,"metadata":"..."}
 *
 * (coord_data.h has the group name encoding; a bare number, as old
 * consumers wrote, is read as well.) The group's coordinator broker is the
 * only writer, so it caches what it wrote or read in the group (group.h's
 * offsets): a commit updates the cache once its write succeeded, as Kafka
 * does once its log append is replicated; a group not read yet is read
 * whole (children of .../offsets, then of each topic, then each partition)
 * before it is answered from memory.
 *
 * Writes are async coordinator calls from the loop: set, and if the node is
 * not there yet, create its parents and itself (then set, if another write
 * created it first). The ZooKeeper session keeps our calls in order, so the
 * cache ends as the coordinator does. */
#define _GNU_SOURCE
#include "group_offsets.h"
#include "group_service.h"
#include "broker/coord/coord_data.h"
#include "base/jstring.h"
#include "base/logging.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN (COORD_GROUP_NAME_MAX + COORD_TOPIC_NAME_MAX + 64)

/* ---- reading a group's offsets ---- */

/* One read of a group, shared by every coordinator call it makes. */
typedef struct {
    broker_t *b;
    char *group_id;
    size_t len;
    uint64_t epoch;         /* of the group it reads for */
    int outstanding;        /* calls in flight */
    int failed;
} load_t;

typedef struct {
    load_t *load;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
} load_step_t;

static group_t *load_group(const load_t *l)
{
    group_t *g = groups_find(group_service_groups(l->b), l->group_id, l->len);
    return g && g->epoch == l->epoch ? g : NULL;
}

static void load_finish_step(load_t *l)
{
    if (--l->outstanding > 0)
        return;
    group_t *g = load_group(l);
    if (g) {
        g->io_refs--;
        g->offsets_state = l->failed ? 0 : 2;
        if (l->failed) {
            g->load_failures++;
            log_warn("cannot read the committed offsets of group %s from the coordinator", g->id);
        }
        group_wake_load_waiters(group_service_groups(l->b), g);
    }
    free(l->group_id);
    free(l);
}

static void load_note(load_t *l, int rc)
{
    if (rc != ZOK && rc != ZNONODE)
        l->failed = 1;
}

static load_step_t *load_step(load_t *l, const char *topic, int32_t partition)
{
    load_step_t *st = calloc(1, sizeof(*st));
    if (!st) {
        l->failed = 1;
        return NULL;
    }
    st->load = l;
    snprintf(st->topic, sizeof(st->topic), "%s", topic ? topic : "");
    st->partition = partition;
    l->outstanding++;
    return st;
}

static void offset_read(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    load_step_t *st = arg;
    load_t *l = st->load;
    load_note(l, res->rc);
    group_t *g = res->rc == ZOK ? load_group(l) : NULL;
    char *md = g ? malloc(COORD_DOC_MAX) : NULL;
    int64_t offset;
    int32_t epoch;
    char err[256];
    if (md && coord_offset_parse(res->data, (size_t)(res->len > 0 ? res->len : 0), &offset, &epoch, md,
                                 COORD_DOC_MAX, err, sizeof(err)) < 0) {
        log_warn("group %s: committed offset of %s-%d unreadable (%s); ignored", g->id, st->topic,
                 (int)st->partition, err);
    } else if (md) {
        group_offset_t *o = group_offset_get(g, st->topic, st->partition);
        if (o)
            group_offset_store(o, offset, epoch, md);
    }
    free(md);
    free(st);
    load_finish_step(l);
}

static void partitions_read(coord_t *co, const coord_result_t *res, void *arg)
{
    load_step_t *st = arg;
    load_t *l = st->load;
    load_note(l, res->rc);
    char path[PATH_MAX_LEN];
    for (int i = 0; res->rc == ZOK && i < res->nchildren; i++) {
        int32_t p = coord_parse_partition_name(res->children[i]);
        load_step_t *next = p < 0 ? NULL : load_step(l, st->topic, p);
        if (!next)
            continue;
        if (coord_path_group_offset(path, sizeof(path), l->group_id, l->len, st->topic, p) < 0 ||
            coord_get(co, path, 0, offset_read, next) < 0) {
            l->failed = 1;
            l->outstanding--;
            free(next);
        }
    }
    free(st);
    load_finish_step(l);
}

static void topics_read(coord_t *co, const coord_result_t *res, void *arg)
{
    load_step_t *st = arg;
    load_t *l = st->load;
    load_note(l, res->rc);
    char path[PATH_MAX_LEN], err[256];
    for (int i = 0; res->rc == ZOK && i < res->nchildren; i++) {
        const char *topic = res->children[i];
        load_step_t *next = coord_topic_name_valid(topic, err, sizeof(err)) < 0 ? NULL : load_step(l, topic, -1);
        if (!next)
            continue;
        if (coord_path_group_topic(path, sizeof(path), l->group_id, l->len, topic) < 0 ||
            coord_children(co, path, 0, partitions_read, next) < 0) {
            l->failed = 1;
            l->outstanding--;
            free(next);
        }
    }
    free(st);
    load_finish_step(l);
}

void group_offsets_load(broker_t *b, group_t *g, uint64_t conn_id, uint64_t request_id)
{
    group_add_load_waiter(g, conn_id, request_id);
    if (g->offsets_state != 0)
        return;
    char path[PATH_MAX_LEN];
    load_t *l = calloc(1, sizeof(*l));
    char *id = l ? malloc(g->id_len + 1) : NULL;
    if (!id || coord_path_group_offsets(path, sizeof(path), g->id, g->id_len) < 0) {
        free(l);
        free(id);
        g->load_failures++;
        group_wake_load_waiters(group_service_groups(b), g);
        return;
    }
    memcpy(id, g->id, g->id_len + 1);
    *l = (load_t){.b = b, .group_id = id, .len = g->id_len, .epoch = g->epoch, .outstanding = 1};
    g->offsets_state = 1;
    g->io_refs++;
    load_step_t *root = calloc(1, sizeof(*root));
    if (root)
        root->load = l;
    if (!root || !b->coord || coord_children(b->coord, path, 0, topics_read, root) < 0) {
        free(root);
        l->failed = 1;
        load_finish_step(l);
    }
}

/* ---- OffsetCommit's writes ---- */

/* One partition's write. */
typedef struct {
    group_commit_t *commit;
    int index;
    broker_t *b;
    char *group_id;
    size_t len;
    uint64_t epoch;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;
    char path[PATH_MAX_LEN];
    char *doc;
    int doclen;
} write_t;

static void commit_free(group_commit_t *cm)
{
    free(cm->errors);
    free(cm);
}

group_commit_t *group_commit_new(broker_t *b, int nparts, uint64_t conn_id, uint64_t request_id)
{
    group_commit_t *cm = calloc(1, sizeof(*cm));
    int16_t *errors = cm ? calloc((size_t)(nparts ? nparts : 1), sizeof(int16_t)) : NULL;
    if (!errors) {
        free(cm);
        return NULL;
    }
    *cm = (group_commit_t){.nparts = nparts, .errors = errors, .b = b, .conn_id = conn_id,
                           .request_id = request_id};
    return cm;
}

void group_commit_release(void *arg)
{
    group_commit_t *cm = arg;
    if (cm->outstanding == 0)
        commit_free(cm);
    else
        cm->orphaned = 1;
}

/* The answer of a write as Kafka's coordinator would give it: trouble
 * reaching the coordinator is COORDINATOR_NOT_AVAILABLE, which makes the
 * client find the coordinator again and retry. */
static int16_t write_error(int rc)
{
    switch (rc) {
    case ZOK:
        return KERR_NONE;
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONEXPIRED:
    case ZCLOSING:
    case ZINVALIDSTATE:
        return KERR_COORDINATOR_NOT_AVAILABLE;
    default:
        return KERR_UNKNOWN_SERVER_ERROR;
    }
}

static void write_free(write_t *w);

/* One item of the batch is back: the request is woken after the last. */
static void batch_item_done(group_commit_t *cm, int index, int16_t error)
{
    cm->errors[index] = error;
    if (--cm->outstanding == 0) {
        if (cm->orphaned)
            commit_free(cm);
        else
            group_service_wake(cm->b, cm->conn_id, cm->request_id);
    }
}

static void write_done(write_t *w, int rc)
{
    group_t *g = groups_find(group_service_groups(w->b), w->group_id, w->len);
    if (g && g->epoch == w->epoch) {
        group_offset_t *o = group_offset_find(g, w->topic, w->partition);
        if (o) {
            o->pending--;
            if (rc == ZOK)
                group_offset_store(o, w->offset, w->leader_epoch, w->metadata);
        }
        g->io_refs--;
    }
    if (rc != ZOK && rc != ZCLOSING)
        log_warn("cannot store the offset of group %s for %s-%d: %s", w->group_id, w->topic, (int)w->partition,
                 zerror(rc));
    batch_item_done(w->commit, w->index, write_error(rc));
    write_free(w);
}

static void written(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    write_done(arg, res->rc);
}

static void ignore_result(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    (void)res;
    (void)arg;
}

static void created(coord_t *co, const coord_result_t *res, void *arg)
{
    write_t *w = arg;
    /* Another write made the node in the meantime: overwrite it. */
    if (res->rc == ZNODEEXISTS && coord_set(co, w->path, w->doc, w->doclen, -1, written, w) == 0)
        return;
    write_done(w, res->rc == ZNODEEXISTS ? ZSYSTEMERROR : res->rc);
}

/* The first commit of a group (or topic): its parents first. The session
 * runs our calls in order, so they exist before the node's create. */
static void set_missing(coord_t *co, const coord_result_t *res, void *arg)
{
    write_t *w = arg;
    if (res->rc != ZNONODE) {
        write_done(w, res->rc);
        return;
    }
    char path[PATH_MAX_LEN];
    coord_create(co, "/consumers", NULL, -1, 0, ignore_result, NULL);
    if (coord_path_group(path, sizeof(path), w->group_id, w->len) >= 0)
        coord_create(co, path, NULL, -1, 0, ignore_result, NULL);
    if (coord_path_group_offsets(path, sizeof(path), w->group_id, w->len) >= 0)
        coord_create(co, path, NULL, -1, 0, ignore_result, NULL);
    if (coord_path_group_topic(path, sizeof(path), w->group_id, w->len, w->topic) >= 0)
        coord_create(co, path, NULL, -1, 0, ignore_result, NULL);
    if (coord_create(co, w->path, w->doc, w->doclen, 0, created, w) < 0)
        write_done(w, ZSYSTEMERROR);
}

static void write_free(write_t *w)
{
    free(w->group_id);
    free(w->metadata);
    free(w->doc);
    free(w);
}

/* The write of one partition's offset, ready to send; NULL with *error. */
static write_t *write_new(group_commit_t *cm, int index, const group_t *g, const char *topic, int32_t partition,
                          int64_t offset, int32_t leader_epoch, const char *metadata, int16_t *error)
{
    write_t *w = calloc(1, sizeof(*w));
    if (!w) {
        *error = KERR_UNKNOWN_SERVER_ERROR;
        return NULL;
    }
    *w = (write_t){.commit = cm, .index = index, .b = cm->b, .len = g->id_len, .epoch = g->epoch,
                   .partition = partition, .offset = offset, .leader_epoch = leader_epoch};
    snprintf(w->topic, sizeof(w->topic), "%s", topic);
    w->group_id = malloc(g->id_len + 1);
    w->doc = malloc(COORD_DOC_MAX);
    /* Stored as Java reads strings: invalid UTF-8 becomes U+FFFD. */
    w->metadata = jstring_clean(metadata, strlen(metadata), NULL);
    *error = KERR_UNKNOWN_SERVER_ERROR;
    if (!w->group_id || !w->doc || !w->metadata ||
        coord_path_group_offset(w->path, sizeof(w->path), g->id, g->id_len, topic, partition) < 0) {
        write_free(w);
        return NULL;
    }
    memcpy(w->group_id, g->id, g->id_len + 1);
    w->doclen = coord_offset_write(w->doc, COORD_DOC_MAX, offset, leader_epoch, w->metadata);
    if (w->doclen < 0) {
        *error = KERR_OFFSET_METADATA_TOO_LARGE;   /* larger than a coordinator document may be */
        write_free(w);
        return NULL;
    }
    return w;
}

/* A batch item's coordinator call is under way: the batch waits for it and
 * the group is held (io_refs) until it returns. */
static int16_t item_started(group_commit_t *cm, int index, group_t *g)
{
    g->io_refs++;
    cm->outstanding++;
    cm->errors[index] = GROUP_COMMIT_PENDING;
    return KERR_NONE;
}

int16_t group_commit_write(group_commit_t *cm, int index, group_t *g, const char *topic, int32_t partition,
                           int64_t offset, int32_t leader_epoch, const char *metadata)
{
    broker_t *b = cm->b;
    group_offset_t *o = group_offset_get(g, topic, partition);
    if (!o)
        return KERR_INVALID_COMMIT_OFFSET_SIZE;   /* GROUP_OFFSETS_MAX partitions already */
    if (!b->coord)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    int16_t error;
    write_t *w = write_new(cm, index, g, topic, partition, offset, leader_epoch, metadata, &error);
    if (!w)
        return error;
    if (coord_set(b->coord, w->path, w->doc, w->doclen, -1, set_missing, w) < 0) {
        write_free(w);
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    o->pending++;
    return item_started(cm, index, g);
}

/* ---- a batch item's coordinator call on a group's nodes ---- */

/* The batch slot the call answers, and the group it was started for, by id
 * and epoch: the group may be unloaded, or loaded again, meanwhile. */
typedef struct {
    group_commit_t *batch;
    int index;
    char *group_id;
    size_t len;
    uint64_t epoch;
} group_call_t;

/* 0 with c filled (the group's id copied), -1 out of memory. */
static int group_call_init(group_call_t *c, group_commit_t *cm, int index, const group_t *g)
{
    char *id = malloc(g->id_len + 1);
    if (!id)
        return -1;
    memcpy(id, g->id, g->id_len + 1);
    *c = (group_call_t){.batch = cm, .index = index, .group_id = id, .len = g->id_len, .epoch = g->epoch};
    return 0;
}

/* The call is answered: the group it was started for, if still loaded,
 * with the call's hold on it released; NULL when that group is gone. */
static group_t *group_call_returned(group_call_t *c)
{
    group_t *g = groups_find(group_service_groups(c->batch->b), c->group_id, c->len);
    if (!g || g->epoch != c->epoch)
        return NULL;
    g->io_refs--;
    return g;
}

/* The slot gets its error (from the coordinator's rc); c's id is freed. */
static void group_call_done(group_call_t *c, int rc)
{
    batch_item_done(c->batch, c->index, write_error(rc));
    free(c->group_id);
    c->group_id = NULL;
}

/* ---- DeleteGroups: a group's offsets deleted ---- */

static void group_deleted(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    group_call_t *d = arg;
    group_t *g = group_call_returned(d);
    if (g)
        groups_unload(group_service_groups(d->batch->b), g, KERR_COORDINATOR_NOT_AVAILABLE);
    if (res->rc != ZOK && res->rc != ZCLOSING)
        log_warn("cannot delete the committed offsets of group %s: %s", d->group_id, zerror(res->rc));
    group_call_done(d, res->rc);
    free(d);
}

int16_t group_offsets_delete(group_commit_t *cm, int index, group_t *g)
{
    broker_t *b = cm->b;
    char path[PATH_MAX_LEN];
    group_call_t *d = calloc(1, sizeof(*d));
    int started = d && b->coord && coord_path_group(path, sizeof(path), g->id, g->id_len) >= 0 &&
                  group_call_init(d, cm, index, g) == 0;
    if (started && coord_delete_tree(b->coord, path, group_deleted, d) < 0) {
        free(d->group_id);
        started = 0;
    }
    if (!started) {
        free(d);
        groups_unload(group_service_groups(b), g, KERR_COORDINATOR_NOT_AVAILABLE);
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    return item_started(cm, index, g);
}

/* ---- OffsetDelete: one partition's offset removed ---- */

typedef struct {
    group_call_t call;
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
} offset_remove_t;

/* After a partition's offset is gone: its topic's node, the offsets node
 * and the group's node go too when nothing is left in them (ZNOTEMPTY
 * otherwise, ignored), so that a group whose last offset was deleted is
 * not listed again after a restart -- Kafka drops an Empty group with no
 * offsets. A commit that creates them again runs its creates back to back
 * on the same session, so it never finds a parent missing halfway. */
static void prune_parents(coord_t *co, const offset_remove_t *r)
{
    char path[PATH_MAX_LEN];
    const group_call_t *c = &r->call;
    if (coord_path_group_topic(path, sizeof(path), c->group_id, c->len, r->topic) >= 0)
        coord_delete(co, path, -1, ignore_result, NULL);
    if (coord_path_group_offsets(path, sizeof(path), c->group_id, c->len) >= 0)
        coord_delete(co, path, -1, ignore_result, NULL);
    if (coord_path_group(path, sizeof(path), c->group_id, c->len) >= 0)
        coord_delete(co, path, -1, ignore_result, NULL);
}

static void offset_removed(coord_t *co, const coord_result_t *res, void *arg)
{
    offset_remove_t *r = arg;
    /* Nothing there is as good as removed: it stays absent after a restart. */
    int rc = res->rc == ZNONODE ? ZOK : res->rc;
    if (rc == ZOK)
        prune_parents(co, r);
    group_t *g = group_call_returned(&r->call);
    group_offset_t *o = g && rc == ZOK ? group_offset_find(g, r->topic, r->partition) : NULL;
    if (o)
        group_offset_forget(o);
    if (rc != ZOK && rc != ZCLOSING)
        log_warn("cannot delete the offset of group %s for %s-%d: %s", r->call.group_id, r->topic,
                 (int)r->partition, zerror(rc));
    group_call_done(&r->call, rc);
    free(r);
}

int16_t group_offset_remove(group_commit_t *cm, int index, group_t *g, const char *topic, int32_t partition)
{
    broker_t *b = cm->b;
    char path[PATH_MAX_LEN];
    offset_remove_t *r = calloc(1, sizeof(*r));
    int started = r && b->coord &&
                  coord_path_group_offset(path, sizeof(path), g->id, g->id_len, topic, partition) >= 0 &&
                  group_call_init(&r->call, cm, index, g) == 0;
    if (started) {
        snprintf(r->topic, sizeof(r->topic), "%s", topic);
        r->partition = partition;
        if (coord_delete(b->coord, path, -1, offset_removed, r) < 0) {
            free(r->call.group_id);
            started = 0;
        }
    }
    if (!started) {
        free(r);
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    return item_started(cm, index, g);
}

/* ---- the groups named under /consumers ---- */

static void names_free(group_names_t *gn)
{
    for (int i = 0; i < gn->nnames; i++)
        free(gn->names[i]);
    free(gn->names);
    free(gn);
}

void group_names_release(void *arg)
{
    group_names_t *gn = arg;
    if (gn->done)
        names_free(gn);
    else
        gn->orphaned = 1;
}

static void consumers_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    group_names_t *gn = arg;
    gn->done = 1;
    if (gn->orphaned) {
        names_free(gn);
        return;
    }
    if (res->rc == ZOK) {
        gn->names = calloc((size_t)(res->nchildren ? res->nchildren : 1), sizeof(char *));
        for (int i = 0; gn->names && i < res->nchildren; i++)
            if ((gn->names[gn->nnames] = strdup(res->children[i])))
                gn->nnames++;
    } else if (res->rc != ZNONODE) {
        gn->error = KERR_COORDINATOR_NOT_AVAILABLE;
    }
    group_service_wake(gn->b, gn->conn_id, gn->request_id);
}

group_names_t *group_names_read(broker_t *b, uint64_t conn_id, uint64_t request_id)
{
    group_names_t *gn = calloc(1, sizeof(*gn));
    if (!gn)
        return NULL;
    *gn = (group_names_t){.b = b, .conn_id = conn_id, .request_id = request_id};
    if (!b->coord || coord_children(b->coord, "/consumers", 0, consumers_listed, gn) < 0) {
        gn->done = 1;
        gn->error = KERR_COORDINATOR_NOT_AVAILABLE;
    }
    return gn;
}
