/* group_offsets.c -- OffsetCommit and OffsetFetch: committed offsets kept
 * in the coordinator, where Kafka's ZooKeeper-era consumers kept them:
 *
 *   /consumers/[group]/offsets/[topic]/[partition]
 *       {"offset":N,"leader_epoch":E,"metadata":"..."}
 *
 * (coord_data.h has the group name encoding; a bare number, as old
 * consumers wrote, is read as well.) The group's coordinator broker is the
 * only writer, so it caches what it wrote or read in the group (group.h's
 * offsets): a commit updates the cache once its write succeeded, as Kafka
 * does once its log append is replicated; a fetch of a group not read yet
 * reads every committed offset of it first (children of .../offsets, then
 * of each topic, then each partition), then answers from memory.
 *
 * Writes are async coordinator calls from the loop: set, and if the node is
 * not there yet, create its parents and itself (then set, if another write
 * created it first). The commit waits (REQ_WAIT) until every write of the
 * request completed, or offsets.commit.timeout.ms. The ZooKeeper session
 * keeps our calls in order, so the cache ends as the coordinator does. */
#define _GNU_SOURCE
#include "group_service.h"
#include "broker/api/api_util.h"
#include "broker/coord/coord_data.h"
#include "base/jstring.h"
#include "base/logging.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_TIMEOUT_MS 10000
#define WRITE_PENDING INT16_MIN   /* a partition's error while its write is out */
#define PATH_MAX_LEN (COORD_GROUP_NAME_MAX + COORD_TOPIC_NAME_MAX + 64)

/* ---- reading a group's offsets ---- */

/* One read of a group, shared by every coordinator call it makes. */
typedef struct {
    group_service_t *s;
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
    group_t *g = groups_find(l->s->groups, l->group_id, l->len);
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
        group_wake_load_waiters(l->s->groups, g);
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

void group_offsets_load(group_service_t *s, group_t *g)
{
    if (g->offsets_state != 0)
        return;
    char path[PATH_MAX_LEN];
    load_t *l = calloc(1, sizeof(*l));
    char *id = l ? malloc(g->id_len + 1) : NULL;
    if (!id || coord_path_group_offsets(path, sizeof(path), g->id, g->id_len) < 0) {
        free(l);
        free(id);
        g->load_failures++;
        group_wake_load_waiters(s->groups, g);
        return;
    }
    memcpy(id, g->id, g->id_len + 1);
    *l = (load_t){.s = s, .group_id = id, .len = g->id_len, .epoch = g->epoch, .outstanding = 1};
    g->offsets_state = 1;
    g->io_refs++;
    load_step_t *root = calloc(1, sizeof(*root));
    if (root)
        root->load = l;
    if (!root || !s->b->coord || coord_children(s->b->coord, path, 0, topics_read, root) < 0) {
        free(root);
        l->failed = 1;
        load_finish_step(l);
    }
}

/* ---- OffsetCommit ---- */

/* One OffsetCommit request's writes. */
typedef struct {
    int nparts;
    int16_t *errors;        /* per partition, in request order */
    int outstanding;
    int orphaned;           /* the request went away first */
    group_service_t *s;
    uint64_t conn_id, request_id;
} commit_t;

/* One partition's write. */
typedef struct {
    commit_t *commit;
    int index;
    group_service_t *s;
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

static void commit_free(commit_t *cm)
{
    free(cm->errors);
    free(cm);
}

static void commit_release(void *arg)
{
    commit_t *cm = arg;
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
        return GERR_NONE;
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONEXPIRED:
    case ZCLOSING:
    case ZINVALIDSTATE:
        return GERR_COORDINATOR_NOT_AVAILABLE;
    default:
        return GERR_UNKNOWN_SERVER_ERROR;
    }
}

static void write_free(write_t *w);

static void write_done(write_t *w, int rc)
{
    group_t *g = groups_find(w->s->groups, w->group_id, w->len);
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
    commit_t *cm = w->commit;
    cm->errors[w->index] = write_error(rc);
    if (--cm->outstanding == 0) {
        if (cm->orphaned)
            commit_free(cm);
        else
            group_service_wake(cm->s, cm->conn_id, cm->request_id);
    }
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
static write_t *write_new(commit_t *cm, int index, const group_t *g, const char *topic, int32_t partition,
                          int64_t offset, int32_t leader_epoch, const char *metadata, int16_t *error)
{
    write_t *w = calloc(1, sizeof(*w));
    if (!w) {
        *error = GERR_UNKNOWN_SERVER_ERROR;
        return NULL;
    }
    *w = (write_t){.commit = cm, .index = index, .s = cm->s, .len = g->id_len, .epoch = g->epoch,
                   .partition = partition, .offset = offset, .leader_epoch = leader_epoch};
    snprintf(w->topic, sizeof(w->topic), "%s", topic);
    w->group_id = malloc(g->id_len + 1);
    w->doc = malloc(COORD_DOC_MAX);
    /* Stored as Java reads strings: invalid UTF-8 becomes U+FFFD. */
    w->metadata = jstring_clean(metadata, strlen(metadata), NULL);
    *error = GERR_UNKNOWN_SERVER_ERROR;
    if (!w->group_id || !w->doc || !w->metadata ||
        coord_path_group_offset(w->path, sizeof(w->path), g->id, g->id_len, topic, partition) < 0) {
        write_free(w);
        return NULL;
    }
    memcpy(w->group_id, g->id, g->id_len + 1);
    w->doclen = coord_offset_write(w->doc, COORD_DOC_MAX, offset, leader_epoch, w->metadata);
    if (w->doclen < 0) {
        *error = GERR_OFFSET_METADATA_TOO_LARGE;   /* larger than a coordinator document may be */
        write_free(w);
        return NULL;
    }
    return w;
}

/* Starts one partition's write: GERR_NONE when it is under way. */
static int16_t write_start(broker_t *b, commit_t *cm, int index, group_t *g, const char *topic, int32_t partition,
                           int64_t offset, int32_t leader_epoch, const char *metadata)
{
    group_offset_t *o = group_offset_get(g, topic, partition);
    if (!o)
        return GERR_INVALID_COMMIT_OFFSET_SIZE;   /* GROUP_OFFSETS_MAX partitions already */
    if (!b->coord)
        return GERR_COORDINATOR_NOT_AVAILABLE;
    int16_t error;
    write_t *w = write_new(cm, index, g, topic, partition, offset, leader_epoch, metadata, &error);
    if (!w)
        return error;
    if (coord_set(b->coord, w->path, w->doc, w->doclen, -1, set_missing, w) < 0) {
        write_free(w);
        return GERR_COORDINATOR_NOT_AVAILABLE;
    }
    o->pending++;
    g->io_refs++;
    cm->outstanding++;
    return GERR_NONE;
}

typedef struct {
    broker_t *b;
    commit_t *cm;
    group_t *g;             /* NULL: every partition gets group_error */
    int16_t group_error;
    int index;
} commit_ctx_t;

/* Per partition: checks, then its write (or its error at once). */
static void commit_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    commit_ctx_t *x = arg;
    int index = x->index++;
    int32_t p = (int32_t)kv_int(in, "PartitionIndex");
    const char *md = kv_str(in, "CommittedMetadata");
    int16_t error = x->group_error;
    partition_t *part = error ? NULL : cluster_partition(x->b, topic, p);
    kv_set_int(out, "PartitionIndex", p);
    if (!error && (!part || !part->have_replicas))
        error = GERR_UNKNOWN_TOPIC_OR_PARTITION;
    else if (!error && md && jstring_utf16_length(md, strlen(md)) > (size_t)x->b->cfg.offset_metadata_max_bytes)
        error = GERR_OFFSET_METADATA_TOO_LARGE;
    else if (!error && (error = write_start(x->b, x->cm, index, x->g, topic, p, kv_int(in, "CommittedOffset"),
                                            (int32_t)kv_int(in, "CommittedLeaderEpoch"), md ? md : "")) == 0)
        error = WRITE_PENDING;
    x->cm->errors[index] = error;
}

/* The group whose cache the commit updates, or the error for all of it.
 * v0 is Kafka's ZooKeeper commit: no membership is checked. */
static int16_t commit_group(broker_t *b, const broker_request_t *req, const kafka_value_t *id, group_t **g)
{
    int16_t error = group_id_check(id, 1);
    if (!error)
        error = group_owner_check(b, id->u.s, id->n);
    if (error)
        return error;
    groups_t *gs = b->gsvc->groups;
    uint64_t now = loop_now_ms(b->loop);
    if (req->api_version == 0) {
        *g = groups_find(gs, id->u.s, id->n);
        if (!*g)
            *g = groups_create(gs, id->u.s, id->n, now);
        return *g ? GERR_NONE : GERR_COORDINATOR_NOT_AVAILABLE;
    }
    error = group_commit_check(gs, id->u.s, id->n, (int32_t)kv_int(req->body, "GenerationIdOrMemberEpoch"),
                               kv_str(req->body, "MemberId"), kv_str(req->body, "GroupInstanceId"), now, g);
    group_service_touched(b->gsvc, *g);
    return error;
}

static int count_partitions(const kafka_value_t *topics)
{
    int n = 0;
    for (uint32_t i = 0; i < topics->n; i++)
        n += (int)kv_get(kv_at(topics, i), "Partitions")->n;
    return n;
}

static const api_tree_t commit_tree = {"Topics", "Name", "Partitions", "Topics", "Name", "Partitions"};

static void fill_error(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    (void)topic;
    commit_ctx_t *x = arg;
    kv_set_int(out, "PartitionIndex", kv_int(in, "PartitionIndex"));
    /* A write still out when the request timed out: the client retries. */
    int16_t e = x->cm->errors[x->index++];
    kv_set_int(out, "ErrorCode", e == WRITE_PENDING ? GERR_COORDINATOR_NOT_AVAILABLE : e);
}

static req_status_t commit_answer(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, commit_t *cm)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    commit_ctx_t x = {.cm = cm};
    if (!resp || api_each_partition(ra, req->body, resp, &commit_tree, fill_error, &x) < 0)
        return REQ_CLOSE;
    return api_answer(c, req, resp);
}

req_status_t api_offset_commit(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    commit_t *cm = req->state;
    if (cm) {
        if (cm->outstanding > 0 && !req->timed_out)
            return REQ_WAIT;
        return commit_answer(c, req, ra, cm);
    }
    const kafka_value_t *topics = kv_get(req->body, "Topics");
    cm = calloc(1, sizeof(*cm));
    int n = count_partitions(topics);
    if (!cm || !(cm->errors = calloc((size_t)(n ? n : 1), sizeof(int16_t)))) {
        free(cm);
        return REQ_CLOSE;
    }
    *cm = (commit_t){.nparts = n, .errors = cm->errors, .s = b->gsvc, .conn_id = c->id, .request_id = req->id};
    commit_ctx_t x = {.b = b, .cm = cm};
    x.group_error = commit_group(b, req, kv_get(req->body, "GroupId"), &x.g);
    /* The answer is built when every write is back; this walk starts them. */
    kafka_value_t *scratch = kv_new_struct(ra, req->api->response);
    if (!scratch || api_each_partition(ra, req->body, scratch, &commit_tree, commit_partition, &x) < 0) {
        commit_release(cm);
        return REQ_CLOSE;
    }
    req->state = cm;
    req->state_free = commit_release;
    if (cm->outstanding > 0) {
        req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)b->cfg.offsets_commit_timeout_ms;
        return REQ_WAIT;
    }
    return commit_answer(c, req, ra, cm);
}

/* ---- OffsetFetch ---- */

/* A fetch that waits for reads of its groups' offsets remembers, per group,
 * how many reads had failed when it started waiting: a new failure is its
 * answer (COORDINATOR_NOT_AVAILABLE), not a reason to read again. */
typedef struct {
    int ngroups;
    int *failures_seen;   /* -1: did not wait for this group */
} fetch_wait_t;

static void fetch_wait_free(void *arg)
{
    fetch_wait_t *fw = arg;
    free(fw->failures_seen);
    free(fw);
}

static fetch_wait_t *fetch_wait_new(int ngroups)
{
    fetch_wait_t *fw = calloc(1, sizeof(*fw));
    int *seen = fw ? malloc(sizeof(int) * (size_t)(ngroups ? ngroups : 1)) : NULL;
    if (!seen) {
        free(fw);
        return NULL;
    }
    for (int i = 0; i < ngroups; i++)
        seen[i] = -1;
    fw->ngroups = ngroups;
    fw->failures_seen = seen;
    return fw;
}

/* The groups of the request: one before v8, a batch from v8 (KIP-709). */
static int fetch_ngroups(const broker_request_t *req)
{
    return req->api_version >= 8 ? (int)kv_get(req->body, "Groups")->n : 1;
}

static const kafka_value_t *fetch_group_id(const broker_request_t *req, int i)
{
    if (req->api_version < 8)
        return kv_get(req->body, "GroupId");
    return kv_get(kv_at(kv_get(req->body, "Groups"), (uint32_t)i), "GroupId");
}

/* NULL: every committed offset of the group (v2+). */
static const kafka_value_t *fetch_group_topics(const broker_request_t *req, int i)
{
    const kafka_value_t *t = req->api_version < 8 ? kv_get(req->body, "Topics")
                                                  : kv_get(kv_at(kv_get(req->body, "Groups"), (uint32_t)i), "Topics");
    return t->is_null ? NULL : t;
}

/* Whether group i can be answered now (1: its offsets are being read and
 * the request waits); *error is the group's error, if any. */
static int fetch_group_waits(broker_t *b, const conn_t *c, const broker_request_t *req, fetch_wait_t *fw, int i,
                             int16_t *error)
{
    const kafka_value_t *id = fetch_group_id(req, i);
    group_service_t *s = b->gsvc;
    *error = group_id_check(id, 1);
    if (!*error)
        *error = group_owner_check(b, id->u.s, id->n);
    if (*error)
        return 0;
    group_t *g = groups_find(s->groups, id->u.s, id->n);
    if (!g)
        g = groups_create(s->groups, id->u.s, id->n, loop_now_ms(b->loop));
    if (!g || (fw && fw->failures_seen[i] >= 0 && g->load_failures != fw->failures_seen[i])) {
        *error = GERR_COORDINATOR_NOT_AVAILABLE;
        return 0;
    }
    if (g->offsets_state == 2)
        return 0;
    if (req->timed_out) {
        *error = GERR_COORDINATOR_LOAD_IN_PROGRESS;
        return 0;
    }
    if (fw && fw->failures_seen[i] < 0)
        fw->failures_seen[i] = g->load_failures;
    int failures = g->load_failures;
    group_add_load_waiter(g, c->id, req->id);
    group_offsets_load(s, g);
    if (g->load_failures != failures) {
        *error = GERR_COORDINATOR_NOT_AVAILABLE;
        return 0;
    }
    return g->offsets_state != 2;
}

typedef struct {
    int16_t version;
    int require_stable;
    int16_t group_error;    /* before v2: each partition carries it */
} fetch_fmt_t;

static void fetch_partition_value(kafka_arena_t *ra, kafka_value_t *out, const fetch_fmt_t *f, const group_t *g,
                                  const char *topic, int32_t p)
{
    const group_offset_t *o = g ? group_offset_find(g, topic, p) : NULL;
    int16_t error = f->group_error;
    kv_set_int(out, "PartitionIndex", p);
    kv_set_int(out, "CommittedOffset", -1);
    kv_set_int(out, "CommittedLeaderEpoch", -1);
    kv_set_str(ra, out, "Metadata", "");
    if (!error && f->require_stable && o && o->pending > 0) {
        error = GERR_UNSTABLE_OFFSET_COMMIT;   /* a commit is being written */
    } else if (!error && o && o->present) {
        kv_set_int(out, "CommittedOffset", o->offset);
        kv_set_int(out, "CommittedLeaderEpoch", o->leader_epoch);
        kv_set_str(ra, out, "Metadata", o->metadata ? o->metadata : "");
    } else if (!error && f->version == 0) {
        /* v0 answered from ZooKeeper: nothing there is an unknown partition. */
        error = GERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    kv_set_int(out, "ErrorCode", error);
}

/* The partitions the request names, in its order. */
static int fetch_named(kafka_arena_t *ra, kafka_value_t *out_topics, const fetch_fmt_t *f, const group_t *g,
                       const kafka_value_t *topics)
{
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        const kafka_value_t *ps = kv_get(t, "PartitionIndexes");
        kafka_value_t *ot = kv_at(out_topics, i);
        kv_set_str(ra, ot, "Name", kv_str(t, "Name"));
        kafka_value_t *ops = kv_set_array(ra, ot, "Partitions", ps->n);
        if (!ops)
            return -1;
        for (uint32_t k = 0; k < ps->n; k++)
            fetch_partition_value(ra, kv_at(ops, k), f, g, kv_str(t, "Name"), (int32_t)kv_at(ps, k)->u.i);
    }
    return 0;
}

static uint32_t count_topics(const group_t *g)
{
    uint32_t n = 0;
    for (int i = 0; i < g->noffsets; i++)
        if (g->offsets[i]->present && (n == 0 || i == 0 || strcmp(g->offsets[i]->topic, g->offsets[i - 1]->topic)))
            n++;
    return n;
}

/* Every committed offset of the group, by topic (the cache is sorted). */
static int fetch_all(kafka_arena_t *ra, kafka_value_t *parent, const fetch_fmt_t *f, const group_t *g)
{
    kafka_value_t *topics = kv_set_array(ra, parent, "Topics", g ? count_topics(g) : 0);
    if (!topics)
        return -1;
    uint32_t t = 0;
    for (int i = 0; g && i < g->noffsets;) {
        if (!g->offsets[i]->present) {
            i++;
            continue;
        }
        const char *topic = g->offsets[i]->topic;
        int end = i, n = 0;
        for (; end < g->noffsets && strcmp(g->offsets[end]->topic, topic) == 0; end++)
            n += g->offsets[end]->present;
        kafka_value_t *ot = kv_at(topics, t++);
        kv_set_str(ra, ot, "Name", topic);
        kafka_value_t *ops = kv_set_array(ra, ot, "Partitions", (uint32_t)n);
        if (!ops)
            return -1;
        for (int k = i, j = 0; k < end; k++)
            if (g->offsets[k]->present)
                fetch_partition_value(ra, kv_at(ops, (uint32_t)j++), f, g, topic, g->offsets[k]->partition);
        i = end;
    }
    return 0;
}

/* One group's topics into parent's "Topics". */
static int fetch_fill(kafka_arena_t *ra, kafka_value_t *parent, fetch_fmt_t *f, const group_t *g,
                      const kafka_value_t *topics, int16_t error)
{
    if (error && f->version >= 2)
        return kv_set_array(ra, parent, "Topics", 0) ? 0 : -1;
    f->group_error = error;
    if (!topics)
        return fetch_all(ra, parent, f, error ? NULL : g);
    kafka_value_t *out = kv_set_array(ra, parent, "Topics", topics->n);
    return out ? fetch_named(ra, out, f, g, topics) : -1;
}

static req_status_t fetch_answer(broker_t *b, conn_t *c, const broker_request_t *req, kafka_arena_t *ra,
                                 const int16_t *errors)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    fetch_fmt_t f = {.version = req->api_version, .require_stable = (int)kv_int(req->body, "RequireStable")};
    int n = fetch_ngroups(req);
    kafka_value_t *groups = req->api_version >= 8 ? kv_set_array(ra, resp, "Groups", (uint32_t)n) : NULL;
    if (req->api_version >= 8 && !groups)
        return REQ_CLOSE;
    for (int i = 0; i < n; i++) {
        const kafka_value_t *id = fetch_group_id(req, i);
        const group_t *g = errors[i] ? NULL : groups_find(b->gsvc->groups, id->u.s, id->n);
        kafka_value_t *parent = groups ? kv_at(groups, (uint32_t)i) : resp;
        if (groups)
            kv_set_str(ra, parent, "GroupId", id->u.s);
        if (req->api_version >= 2)
            kv_set_int(parent, "ErrorCode", errors[i]);
        if (fetch_fill(ra, parent, &f, g, fetch_group_topics(req, i), errors[i]) < 0)
            return REQ_CLOSE;
    }
    return api_answer(c, req, resp);
}

req_status_t api_offset_fetch(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    int n = fetch_ngroups(req);
    int16_t *errors = kafka_arena_alloc(ra, sizeof(int16_t) * (size_t)(n ? n : 1));
    fetch_wait_t *fw = req->state;
    if (!errors || (!fw && !(fw = fetch_wait_new(n))))
        return REQ_CLOSE;
    if (!req->state) {
        req->state = fw;
        req->state_free = fetch_wait_free;
    }
    int waiting = 0;
    for (int i = 0; i < n; i++)
        waiting |= fetch_group_waits(b, c, req, fw, i, &errors[i]);
    if (waiting) {
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + FETCH_TIMEOUT_MS;
        return REQ_WAIT;
    }
    return fetch_answer(b, c, req, ra, errors);
}
