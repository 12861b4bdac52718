/* api_group_offsets.c -- OffsetCommit, OffsetFetch and OffsetDelete, over
 * the group service's committed-offsets store (broker/group/group_offsets.h).
 *
 * A commit checks the group (membership, as Kafka's validateOffsetCommit;
 * none for v0, Kafka's ZooKeeper commit) and each partition, starts one
 * coordinator write per partition and waits (REQ_WAIT) until every write is
 * back, or offsets.commit.timeout.ms. A fetch of a group whose offsets were
 * not read yet waits for the read, then answers from the cache; null topics
 * ask for every committed offset; RequireStable gets UNSTABLE_OFFSET_COMMIT
 * while a commit is in flight. OffsetDelete reads the group's offsets
 * like a fetch, then removes each partition's from the coordinator and
 * waits for the removals like a commit. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/group/group_offsets.h"
#include "broker/group/group_service.h"
#include "base/jstring.h"

#include <stdlib.h>
#include <string.h>

#define FETCH_TIMEOUT_MS 10000

/* ---- OffsetCommit ---- */

typedef struct {
    broker_t *b;
    group_commit_t *cm;
    group_t *g;             /* NULL: every partition gets group_error */
    int16_t group_error;
    int index;
} commit_ctx_t;

/* Per partition: checks, then its write (or its error at once). */
static void commit_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    commit_ctx_t *x = arg;
    int index = x->index++;
    int32_t p = (int32_t)KV_INT(in, OffsetCommitRequestPartition, PartitionIndex);
    const char *md = KV_STR(in, OffsetCommitRequestPartition, CommittedMetadata);
    int16_t error = x->group_error;
    partition_t *part = error ? NULL : cluster_partition(x->b, topic, p);
    KV_SET_INT(out, OffsetCommitResponsePartition, PartitionIndex, p);
    if (!error && (!part || !part->have_replicas))
        error = KERR_UNKNOWN_TOPIC_OR_PARTITION;
    else if (!error && md && jstring_utf16_length(md, strlen(md)) > (size_t)x->b->cfg.offset_metadata_max_bytes)
        error = KERR_OFFSET_METADATA_TOO_LARGE;
    else if (!error)
        error = group_commit_write(x->cm, index, x->g, topic, p,
                                   KV_INT(in, OffsetCommitRequestPartition, CommittedOffset),
                                   (int32_t)KV_INT(in, OffsetCommitRequestPartition, CommittedLeaderEpoch),
                                   md ? md : "");
    if (error)
        x->cm->errors[index] = error;
}

/* The group whose cache the commit updates, or the error for all of it.
 * v0 is Kafka's ZooKeeper commit: no membership is checked. */
static int16_t commit_group(broker_t *b, const broker_request_t *req, const kafka_value_t *id, group_t **g)
{
    int16_t error = group_request_check(b, id, 1);
    if (error)
        return error;
    groups_t *gs = group_service_groups(b);
    uint64_t now = loop_now_ms(b->loop);
    if (req->api_version == 0) {
        *g = groups_find(gs, id->u.s, id->n);
        if (!*g)
            *g = groups_create(gs, id->u.s, id->n, now);
        /* Dead: DeleteGroups is deleting it (group_commit_check says the same). */
        return *g && (*g)->state != GROUP_DEAD ? KERR_NONE : KERR_COORDINATOR_NOT_AVAILABLE;
    }
    error = group_commit_check(gs, id->u.s, id->n,
                               (int32_t)KV_INT(req->body, OffsetCommitRequest, GenerationIdOrMemberEpoch),
                               KV_STR(req->body, OffsetCommitRequest, MemberId),
                               KV_STR(req->body, OffsetCommitRequest, GroupInstanceId), now, g);
    group_service_touched(b, *g);
    return error;
}

static int count_partitions(const kafka_value_t *topics)
{
    int n = 0;
    for (uint32_t i = 0; i < topics->n; i++)
        n += (int)KV_GET(kv_at(topics, i), OffsetCommitRequestTopic, Partitions)->n;
    return n;
}

static const api_tree_t commit_tree = {
    KV_REF(OffsetCommitRequest, Topics), KV_REF(OffsetCommitRequestTopic, Name),
    KV_REF(OffsetCommitRequestTopic, Partitions), KV_REF(OffsetCommitResponse, Topics),
    KV_REF(OffsetCommitResponseTopic, Name), KV_REF(OffsetCommitResponseTopic, Partitions),
};

static void fill_error(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    (void)topic;
    commit_ctx_t *x = arg;
    int32_t p = (int32_t)KV_INT(in, OffsetCommitRequestPartition, PartitionIndex);
    KV_SET_INT(out, OffsetCommitResponsePartition, PartitionIndex, p);
    /* A write still out when the request timed out: the client retries. */
    int16_t e = x->cm->errors[x->index++];
    KV_SET_INT(out, OffsetCommitResponsePartition, ErrorCode,
               e == GROUP_COMMIT_PENDING ? KERR_COORDINATOR_NOT_AVAILABLE : e);
}

static req_status_t commit_answer(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, group_commit_t *cm)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    commit_ctx_t x = {.cm = cm};
    if (!resp || api_each_partition(ra, req->body, resp, &commit_tree, fill_error, &x) < 0)
        return REQ_CLOSE;
    return api_answer(c, req, resp);
}

req_status_t api_offset_commit(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    group_commit_t *cm = req->state;
    if (cm) {
        if (cm->outstanding > 0 && !req->timed_out)
            return REQ_WAIT;
        return commit_answer(c, req, ra, cm);
    }
    const kafka_value_t *topics = KV_GET(req->body, OffsetCommitRequest, Topics);
    cm = group_commit_new(b, count_partitions(topics), c->id, req->id);
    if (!cm)
        return REQ_CLOSE;
    commit_ctx_t x = {.b = b, .cm = cm};
    x.group_error = commit_group(b, req, KV_GET(req->body, OffsetCommitRequest, GroupId), &x.g);
    /* The answer is built when every write is back; this walk starts them. */
    kafka_value_t *scratch = kv_new_struct(ra, req->api->response);
    if (!scratch || api_each_partition(ra, req->body, scratch, &commit_tree, commit_partition, &x) < 0) {
        group_commit_release(cm);
        return REQ_CLOSE;
    }
    req->state = cm;
    req->state_free = group_commit_release;
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
    return req->api_version >= 8 ? (int)KV_GET(req->body, OffsetFetchRequest, Groups)->n : 1;
}

static const kafka_value_t *fetch_group(const broker_request_t *req, int i)
{
    return kv_at(KV_GET(req->body, OffsetFetchRequest, Groups), (uint32_t)i);
}

static const kafka_value_t *fetch_group_id(const broker_request_t *req, int i)
{
    if (req->api_version < 8)
        return KV_GET(req->body, OffsetFetchRequest, GroupId);
    return KV_GET(fetch_group(req, i), OffsetFetchRequestGroup, GroupId);
}

/* NULL: every committed offset of the group (v2+). */
static const kafka_value_t *fetch_group_topics(const broker_request_t *req, int i)
{
    const kafka_value_t *t = req->api_version < 8 ? KV_GET(req->body, OffsetFetchRequest, Topics)
                                                  : KV_GET(fetch_group(req, i), OffsetFetchRequestGroup, Topics);
    return t->is_null ? NULL : t;
}

/* Whether group i can be answered now (1: its offsets are being read and
 * the request waits); *error is the group's error, if any. */
static int fetch_group_waits(broker_t *b, const conn_t *c, const broker_request_t *req, fetch_wait_t *fw, int i,
                             int16_t *error)
{
    const kafka_value_t *id = fetch_group_id(req, i);
    groups_t *gs = group_service_groups(b);
    *error = group_request_check(b, id, 1);
    if (*error)
        return 0;
    group_t *g = groups_find(gs, id->u.s, id->n);
    if (!g)
        g = groups_create(gs, id->u.s, id->n, loop_now_ms(b->loop));
    if (!g || (fw && fw->failures_seen[i] >= 0 && g->load_failures != fw->failures_seen[i])) {
        *error = KERR_COORDINATOR_NOT_AVAILABLE;
        return 0;
    }
    if (g->offsets_state == 2)
        return 0;
    if (req->timed_out) {
        *error = KERR_COORDINATOR_LOAD_IN_PROGRESS;
        return 0;
    }
    if (fw && fw->failures_seen[i] < 0)
        fw->failures_seen[i] = g->load_failures;
    int failures = g->load_failures;
    group_offsets_load(b, g, c->id, req->id);
    if (g->load_failures != failures) {
        *error = KERR_COORDINATOR_NOT_AVAILABLE;
        return 0;
    }
    return g->offsets_state != 2;
}

/* The answer's two shapes: up to v7 one group, its topics at the top of the
 * request and the response; from v8 a batch of groups, each with its
 * topics. The two use structs of other names with the same fields, so one
 * macro names both. */
typedef struct {
    kv_ref_t req_topic_name, req_topic_partitions;   /* a topic of the request */
    kv_ref_t topics;                                 /* the group's answer: its topics */
    kv_ref_t topic_name, topic_partitions;
    kv_ref_t partition, offset, leader_epoch, metadata, error;   /* a partition's answer */
} fetch_shape_t;

#define FETCH_SHAPE(ReqTopic, Answer, Topic, Partition)                                      \
    {                                                                                        \
        KV_REF(ReqTopic, Name), KV_REF(ReqTopic, PartitionIndexes), KV_REF(Answer, Topics),  \
        KV_REF(Topic, Name), KV_REF(Topic, Partitions), KV_REF(Partition, PartitionIndex),   \
        KV_REF(Partition, CommittedOffset), KV_REF(Partition, CommittedLeaderEpoch),         \
        KV_REF(Partition, Metadata), KV_REF(Partition, ErrorCode),                           \
    }
static const fetch_shape_t fetch_shape_v0 = FETCH_SHAPE(OffsetFetchRequestTopic, OffsetFetchResponse,
                                                        OffsetFetchResponseTopic, OffsetFetchResponsePartition);
static const fetch_shape_t fetch_shape_v8 = FETCH_SHAPE(OffsetFetchRequestTopics, OffsetFetchResponseGroup,
                                                        OffsetFetchResponseTopics, OffsetFetchResponsePartitions);

typedef struct {
    const fetch_shape_t *shape;
    int16_t version;
    int require_stable;
    int16_t group_error;    /* before v2: each partition carries it */
} fetch_fmt_t;

static void fetch_partition_value(kafka_arena_t *ra, kafka_value_t *out, const fetch_fmt_t *f, const group_t *g,
                                  const char *topic, int32_t p)
{
    const fetch_shape_t *sh = f->shape;
    const group_offset_t *o = g ? group_offset_find(g, topic, p) : NULL;
    int16_t error = f->group_error;
    const char *md = "";
    KV_REF_SET_INT(out, sh->partition, p);
    KV_REF_SET_INT(out, sh->offset, -1);
    KV_REF_SET_INT(out, sh->leader_epoch, -1);
    if (!error && f->require_stable && o && o->pending > 0) {
        error = KERR_UNSTABLE_OFFSET_COMMIT;   /* a commit is being written */
    } else if (!error && o && o->present) {
        KV_REF_SET_INT(out, sh->offset, o->offset);
        KV_REF_SET_INT(out, sh->leader_epoch, o->leader_epoch);
        md = o->metadata ? o->metadata : "";
    } else if (!error && f->version == 0) {
        /* v0 answered from ZooKeeper: nothing there is an unknown partition. */
        error = KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    KV_REF_SET_STR(ra, out, sh->metadata, md);
    KV_REF_SET_INT(out, sh->error, error);
}

/* The partitions the request names, in its order. */
static int fetch_named(kafka_arena_t *ra, kafka_value_t *out_topics, const fetch_fmt_t *f, const group_t *g,
                       const kafka_value_t *topics)
{
    const fetch_shape_t *sh = f->shape;
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        const kafka_value_t *ps = KV_REF_GET(t, sh->req_topic_partitions);
        const char *name = KV_REF_STR(t, sh->req_topic_name);
        kafka_value_t *ot = kv_at(out_topics, i);
        KV_REF_SET_STR(ra, ot, sh->topic_name, name);
        kafka_value_t *ops = KV_REF_SET_ARRAY(ra, ot, sh->topic_partitions, ps->n);
        if (!ops)
            return -1;
        for (uint32_t k = 0; k < ps->n; k++)
            fetch_partition_value(ra, kv_at(ops, k), f, g, name, (int32_t)kv_at(ps, k)->u.i);
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
    const fetch_shape_t *sh = f->shape;
    kafka_value_t *topics = KV_REF_SET_ARRAY(ra, parent, sh->topics, g ? count_topics(g) : 0);
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
        KV_REF_SET_STR(ra, ot, sh->topic_name, topic);
        kafka_value_t *ops = KV_REF_SET_ARRAY(ra, ot, sh->topic_partitions, (uint32_t)n);
        if (!ops)
            return -1;
        for (int k = i, j = 0; k < end; k++)
            if (g->offsets[k]->present)
                fetch_partition_value(ra, kv_at(ops, (uint32_t)j++), f, g, topic, g->offsets[k]->partition);
        i = end;
    }
    return 0;
}

/* One group's topics into its answer (parent: the response, or a group). */
static int fetch_fill(kafka_arena_t *ra, kafka_value_t *parent, fetch_fmt_t *f, const group_t *g,
                      const kafka_value_t *topics, int16_t error)
{
    if (error && f->version >= 2)
        return KV_REF_SET_ARRAY(ra, parent, f->shape->topics, 0) ? 0 : -1;
    f->group_error = error;
    if (!topics)
        return fetch_all(ra, parent, f, error ? NULL : g);
    kafka_value_t *out = KV_REF_SET_ARRAY(ra, parent, f->shape->topics, topics->n);
    return out ? fetch_named(ra, out, f, g, topics) : -1;
}

static req_status_t fetch_answer(broker_t *b, conn_t *c, const broker_request_t *req, kafka_arena_t *ra,
                                 const int16_t *errors)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    int batch = req->api_version >= 8;
    fetch_fmt_t f = {.shape = batch ? &fetch_shape_v8 : &fetch_shape_v0, .version = req->api_version,
                     .require_stable = (int)KV_INT(req->body, OffsetFetchRequest, RequireStable)};
    int n = fetch_ngroups(req);
    kafka_value_t *groups = batch ? KV_SET_ARRAY(ra, resp, OffsetFetchResponse, Groups, (uint32_t)n) : NULL;
    if (batch && !groups)
        return REQ_CLOSE;
    for (int i = 0; i < n; i++) {
        const kafka_value_t *id = fetch_group_id(req, i);
        const group_t *g = errors[i] ? NULL : groups_find(group_service_groups(b), id->u.s, id->n);
        kafka_value_t *parent = batch ? kv_at(groups, (uint32_t)i) : resp;
        if (batch) {
            KV_SET_STR(ra, parent, OffsetFetchResponseGroup, GroupId, id->u.s);
            KV_SET_INT(parent, OffsetFetchResponseGroup, ErrorCode, errors[i]);
        } else if (req->api_version >= 2) {
            KV_SET_INT(parent, OffsetFetchResponse, ErrorCode, errors[i]);
        }
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

/* ---- OffsetDelete ---- */

/* As Kafka's GroupCoordinator.handleDeleteOffsets: a group error answers
 * the whole request (no topics); otherwise each partition is deleted or
 * gets its error. The group's offsets are read first, as for a fetch, so
 * that whether it exists is known and the cache stays what the coordinator
 * holds. */
typedef struct {
    int waited;             /* a read of the group's offsets was asked for */
    int failures_seen;      /* g->load_failures then */
    int16_t group_error;
    group_commit_t *cm;     /* the deletions, once started */
} offset_delete_t;

typedef struct {
    broker_t *b;
    group_t *g;
    group_commit_t *cm;
    int index;
} delete_ctx_t;

static void offset_delete_free(void *arg)
{
    offset_delete_t *d = arg;
    if (d->cm)
        group_commit_release(d->cm);
    free(d);
}

static const api_tree_t delete_tree = {
    KV_REF(OffsetDeleteRequest, Topics), KV_REF(OffsetDeleteRequestTopic, Name),
    KV_REF(OffsetDeleteRequestTopic, Partitions), KV_REF(OffsetDeleteResponse, Topics),
    KV_REF(OffsetDeleteResponseTopic, Name), KV_REF(OffsetDeleteResponseTopic, Partitions),
};

/* 1 while the request waits for the group's offsets to be read. */
static int delete_needs_read(broker_t *b, const conn_t *c, const broker_request_t *req, offset_delete_t *d,
                             group_t *g)
{
    if (g->offsets_state == 2)
        return 0;
    if (req->timed_out) {
        d->group_error = KERR_COORDINATOR_LOAD_IN_PROGRESS;
        return 0;
    }
    if (!d->waited) {
        d->waited = 1;
        d->failures_seen = g->load_failures;
    } else if (g->load_failures != d->failures_seen) {
        d->group_error = KERR_COORDINATOR_NOT_AVAILABLE;
        return 0;
    }
    group_offsets_load(b, g, c->id, req->id);
    if (g->load_failures != d->failures_seen) {
        d->group_error = KERR_COORDINATOR_NOT_AVAILABLE;
        return 0;
    }
    return g->offsets_state != 2;
}

/* The group's own error: unknown (or being deleted) groups, and groups
 * with members that are not consumer groups, whose subscriptions cannot be
 * told. */
static int16_t delete_group_error(const group_t *g)
{
    if (!group_exists(g) || g->state == GROUP_DEAD)
        return KERR_GROUP_ID_NOT_FOUND;
    if (g->state == GROUP_EMPTY || (g->protocol_type && strcmp(g->protocol_type, "consumer") == 0))
        return KERR_NONE;
    return KERR_NON_EMPTY_GROUP;
}

static void delete_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    (void)out;
    delete_ctx_t *x = arg;
    int index = x->index++;
    int32_t p = (int32_t)KV_INT(in, OffsetDeleteRequestPartition, PartitionIndex);
    const partition_t *part = cluster_partition(x->b, topic, p);
    int16_t error;
    if (!part || !part->have_replicas)
        error = KERR_UNKNOWN_TOPIC_OR_PARTITION;   /* KafkaApis keeps these from the coordinator */
    else if (group_subscribes_to(x->g, topic))
        error = KERR_GROUP_SUBSCRIBED_TO_TOPIC;
    else
        error = group_offset_remove(x->cm, index, x->g, topic, p);
    if (error)
        x->cm->errors[index] = error;
}

static void delete_fill(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    (void)topic;
    delete_ctx_t *x = arg;
    int16_t e = x->cm->errors[x->index++];
    KV_SET_INT(out, OffsetDeleteResponsePartition, PartitionIndex,
               KV_INT(in, OffsetDeleteRequestPartition, PartitionIndex));
    /* A deletion still out at the deadline: the client asks again. */
    KV_SET_INT(out, OffsetDeleteResponsePartition, ErrorCode,
               e == GROUP_COMMIT_PENDING ? KERR_COORDINATOR_NOT_AVAILABLE : e);
}

static req_status_t delete_answer(conn_t *c, const broker_request_t *req, kafka_arena_t *ra, offset_delete_t *d)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    KV_SET_INT(resp, OffsetDeleteResponse, ErrorCode, d->group_error);
    delete_ctx_t x = {.cm = d->cm};
    if (d->group_error || !d->cm)
        return KV_SET_ARRAY(ra, resp, OffsetDeleteResponse, Topics, 0) ? api_answer(c, req, resp) : REQ_CLOSE;
    if (api_each_partition(ra, req->body, resp, &delete_tree, delete_fill, &x) < 0)
        return REQ_CLOSE;
    return api_answer(c, req, resp);
}

/* The deletions of every partition the request names. */
static int delete_start(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra, offset_delete_t *d,
                        group_t *g)
{
    const kafka_value_t *topics = KV_GET(req->body, OffsetDeleteRequest, Topics);
    int n = 0;
    for (uint32_t i = 0; i < topics->n; i++)
        n += (int)KV_GET(kv_at(topics, i), OffsetDeleteRequestTopic, Partitions)->n;
    d->cm = group_commit_new(b, n, c->id, req->id);
    kafka_value_t *scratch = d->cm ? kv_new_struct(ra, req->api->response) : NULL;
    delete_ctx_t x = {.b = b, .g = g, .cm = d->cm};
    return scratch ? api_each_partition(ra, req->body, scratch, &delete_tree, delete_partition, &x) : -1;
}

req_status_t api_offset_delete(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    offset_delete_t *d = req->state;
    if (!d) {
        if (!(d = calloc(1, sizeof(*d))))
            return REQ_CLOSE;
        req->state = d;
        req->state_free = offset_delete_free;
    }
    if (d->cm)
        return d->cm->outstanding > 0 && !req->timed_out ? REQ_WAIT : delete_answer(c, req, ra, d);
    const kafka_value_t *id = KV_GET(req->body, OffsetDeleteRequest, GroupId);
    /* Unlike offsets' other requests, OffsetDelete wants a non-empty id. */
    d->group_error = group_request_check(b, id, 0);
    groups_t *gs = group_service_groups(b);
    group_t *g = d->group_error ? NULL : groups_find(gs, id->u.s, id->n);
    if (!d->group_error && !g && !(g = groups_create(gs, id->u.s, id->n, loop_now_ms(b->loop))))
        d->group_error = KERR_COORDINATOR_NOT_AVAILABLE;
    if (!d->group_error && delete_needs_read(b, c, req, d, g)) {
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + FETCH_TIMEOUT_MS;
        return REQ_WAIT;
    }
    if (!d->group_error)
        d->group_error = delete_group_error(g);
    if (d->group_error)
        return delete_answer(c, req, ra, d);
    if (delete_start(b, c, req, ra, d, g) < 0)
        return REQ_CLOSE;
    if (d->cm->outstanding == 0)
        return delete_answer(c, req, ra, d);
    req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)b->cfg.offsets_commit_timeout_ms;
    return REQ_WAIT;
}
