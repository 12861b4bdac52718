/* api_partition_admin.c -- ElectLeaders, AlterPartitionReassignments and
 * ListPartitionReassignments: the admin client's ways to move partitions
 * and to choose their leaders (what kafka-reassign-partitions.sh and
 * kafka-leader-election.sh send). A move or an election is asked for in
 * the coordinator by the admin service (broker/core/admin.h), exactly as
 * `kipper reassign` and `kipper elect` ask, and the answer waits until this
 * broker's cluster view shows it: the move's target known (not the move
 * made: that may take hours), the new leader elected. Listing reads the
 * view, which every broker keeps of every move. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_admin_job.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/coord/coord_elect.h"
#include "broker/coord/coord_reassign.h"

#include <stdlib.h>
#include <string.h>

enum { ELECTION_PREFERRED = 0, ELECTION_UNCLEAN = 1 };   /* ElectLeadersRequest.ElectionType */

/* ---- a job of one item per partition ---- */

static int item_order(const void *x, const void *y)
{
    const admin_item_t *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

/* Sorted by topic and partition, so that a topic's items are together (one
 * entry of the answer) and a partition named twice is found next to itself. */
static void sort_items(admin_job_t *j)
{
    qsort(j->items, (size_t)j->nitems, sizeof(*j->items), item_order);
}

static int same_partition(const admin_item_t *a, const admin_item_t *b)
{
    return a->partition == b->partition && strcmp(a->name, b->name) == 0;
}

static int set_item(admin_item_t *it, const char *topic, int32_t partition)
{
    it->partition = partition;
    return admin_item_set_name(it, topic);
}

/* The response's topics and their partitions' results: the fields, per API. */
typedef struct {
    kv_ref_t topics, topic_name, partitions;   /* response -> topic -> partitions */
    kv_ref_t index, error, message;            /* a partition's result */
} result_fields_t;

/* One entry per run of items of the same topic. 0, or -1 out of arena. */
static int answer_items(broker_t *b, const broker_request_t *req, const admin_job_t *j, kafka_value_t *resp,
                        const result_fields_t *f, kafka_arena_t *ra)
{
    uint32_t ntopics = 0;
    for (int i = 0; i < j->nitems; i++)
        ntopics += i == 0 || strcmp(j->items[i].name, j->items[i - 1].name) != 0;
    kafka_value_t *topics = KV_REF_SET_ARRAY(ra, resp, f->topics, ntopics);
    if (!topics)
        return -1;
    for (int i = 0, t = 0; i < j->nitems; t++) {
        int end = i + 1;
        while (end < j->nitems && strcmp(j->items[end].name, j->items[i].name) == 0)
            end++;
        kafka_value_t *topic = kv_at(topics, (uint32_t)t);
        KV_REF_SET_STR(ra, topic, f->topic_name, j->items[i].name);
        kafka_value_t *parts = KV_REF_SET_ARRAY(ra, topic, f->partitions, (uint32_t)(end - i));
        if (!parts)
            return -1;
        for (int k = i; k < end; k++) {
            const char *message;
            kafka_value_t *out = kv_at(parts, (uint32_t)(k - i));
            KV_REF_SET_INT(out, f->index, j->items[k].partition);
            KV_REF_SET_INT(out, f->error, api_admin_item_error(b, req, j, &j->items[k], &message));
            KV_REF_SET_STR(ra, out, f->message, message);
        }
        i = end;
    }
    return 0;
}

typedef req_status_t (*job_start_fn)(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra);

/* The life of a request answered by an admin job: started (start parses it
 * and submits the job, or answers it at once), then woken until the job's
 * changes show in the view, then answered with a result per partition. */
static req_status_t run_job_request(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra,
                                    job_start_fn start, const result_fields_t *fields)
{
    if (!req->state)
        return start(b, c, req, ra);
    if (!api_admin_job_ready(b, req))
        return REQ_WAIT;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp || answer_items(b, req, req->state, resp, fields, ra) < 0)
        return REQ_CLOSE;
    return api_answer(c, req, resp);
}

/* A request refused as a whole: an empty answer with error. */
static req_status_t answer_refused(conn_t *c, broker_request_t *req, kafka_arena_t *ra, kv_ref_t error, int16_t code)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    KV_REF_SET_INT(resp, error, code);
    return api_answer(c, req, resp);
}

static int64_t request_timeout(int64_t timeout_ms)
{
    return timeout_ms > 0 ? timeout_ms : 1;   /* 0: answer once the coordinator has it */
}

static int in_list(const int32_t *v, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (v[i] == id)
            return 1;
    return 0;
}

/* ---- ElectLeaders ---- */

/* Refuses an election that cannot or need not happen, as the view shows it. */
static void check_election(broker_t *b, admin_item_t *it, int type)
{
    const partition_t *p = cluster_partition(b, it->name, it->partition);
    if (!p || !p->have_replicas || p->nreplicas == 0) {
        admin_item_refuse(it, KERR_UNKNOWN_TOPIC_OR_PARTITION, "no such partition");
        return;
    }
    if (type == ELECTION_PREFERRED) {
        int32_t preferred = p->replicas[0];
        if (p->leader == preferred)
            admin_item_refuse(it, KERR_ELECTION_NOT_NEEDED, "the preferred replica leads already");
        else if (!in_list(p->isr, p->nisr, preferred) || !cluster_broker_live(b, preferred))
            admin_item_refuse(it, KERR_PREFERRED_LEADER_NOT_AVAILABLE, "the preferred replica is not live and in sync");
        return;
    }
    int live = 0;
    for (int i = 0; i < p->nreplicas; i++)
        live += cluster_broker_live(b, p->replicas[i]);
    if (p->leader >= 0)
        admin_item_refuse(it, KERR_ELECTION_NOT_NEEDED, "the partition has a leader");
    else if (!live)
        admin_item_refuse(it, KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE, "no replica of the partition is live");
}

/* TopicPartitions null: every partition whose election is needed. */
static admin_job_t *election_of_all(broker_t *b, admin_kind_t kind, int type, const conn_t *c,
                                    const broker_request_t *req)
{
    int n = 0;
    for (int t = 0; t < b->ntopics; t++)
        n += b->topics[t]->nparts;
    admin_job_t *j = admin_job_new(kind, n, c->id, req->id);
    if (!j)
        return NULL;
    j->nitems = 0;
    for (int t = 0; t < b->ntopics; t++)
        for (int k = 0; k < b->topics[t]->nparts; k++) {
            admin_item_t *it = &j->items[j->nitems];
            if (!b->topics[t]->parts[k] || set_item(it, b->topics[t]->name, k) < 0)
                continue;
            check_election(b, it, type);
            if (it->skip && it->res.error == KERR_ELECTION_NOT_NEEDED) {
                free(it->name);
                memset(it, 0, sizeof(*it));
                continue;
            }
            j->nitems++;
        }
    return j;
}

static admin_job_t *election_of(broker_t *b, admin_kind_t kind, int type, const kafka_value_t *tps, const conn_t *c,
                                const broker_request_t *req)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < tps->n; t++)
        n += KV_GET(kv_at(tps, t), ElectLeadersTopicPartitions, Partitions)->n;
    admin_job_t *j = admin_job_new(kind, (int)n, c->id, req->id);
    for (uint32_t t = 0, i = 0; j && t < tps->n; t++) {
        const kafka_value_t *tp = kv_at(tps, t);
        const char *topic = KV_STR(tp, ElectLeadersTopicPartitions, Topic);
        const kafka_value_t *parts = KV_GET(tp, ElectLeadersTopicPartitions, Partitions);
        for (uint32_t k = 0; k < parts->n; k++, i++)
            if (set_item(&j->items[i], topic, (int32_t)kv_at(parts, k)->u.i) < 0) {
                admin_job_free(j);
                return NULL;
            }
    }
    if (!j)
        return NULL;
    /* Kafka takes the partitions as a set: one named twice is one election. */
    sort_items(j);
    int kept = 0;
    for (int i = 0; i < j->nitems; i++) {
        if (kept > 0 && same_partition(&j->items[kept - 1], &j->items[i])) {
            free(j->items[i].name);
            continue;
        }
        j->items[kept++] = j->items[i];
    }
    j->nitems = kept;
    for (int i = 0; i < j->nitems; i++)
        check_election(b, &j->items[i], type);
    return j;
}

static req_status_t elect_start(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const kv_ref_t error = KV_REF(ElectLeadersResponse, ErrorCode);
    int type = (int)KV_INT(req->body, ElectLeadersRequest, ElectionType);
    const kafka_value_t *tps = KV_GET(req->body, ElectLeadersRequest, TopicPartitions);
    if (type != ELECTION_PREFERRED && type != ELECTION_UNCLEAN)
        return answer_refused(c, req, ra, error, KERR_INVALID_REQUEST);
    uint32_t named = 0;
    for (uint32_t t = 0; !tps->is_null && t < tps->n; t++)
        named += KV_GET(kv_at(tps, t), ElectLeadersTopicPartitions, Partitions)->n;
    if (named > COORD_ELECT_MAX_PARTITIONS)
        return answer_refused(c, req, ra, error, KERR_INVALID_REQUEST);
    admin_kind_t kind = type == ELECTION_UNCLEAN ? ADMIN_ELECT_UNCLEAN : ADMIN_ELECT_PREFERRED;
    admin_job_t *j = tps->is_null ? election_of_all(b, kind, type, c, req) : election_of(b, kind, type, tps, c, req);
    if (!j)
        return REQ_CLOSE;
    return api_admin_wait_for_job(b, req, j, request_timeout(KV_INT(req->body, ElectLeadersRequest, TimeoutMs)));
}

req_status_t api_elect_leaders(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const result_fields_t fields = {
        KV_REF(ElectLeadersResponse, ReplicaElectionResults), KV_REF(ReplicaElectionResult, Topic),
        KV_REF(ReplicaElectionResult, PartitionResult),       KV_REF(ElectLeadersPartitionResult, PartitionId),
        KV_REF(ElectLeadersPartitionResult, ErrorCode),       KV_REF(ElectLeadersPartitionResult, ErrorMessage),
    };
    return run_job_request(b, c, req, ra, elect_start, &fields);
}

/* ---- AlterPartitionReassignments ---- */

/* The item's target (Replicas; null: cancel) copied and checked against
 * the view; the coordinator checks again when the move is written. As in
 * Kafka's controller, only the brokers the target adds (not replicas of the
 * partition now) must be live: a replica that is down may be kept, so that
 * sending the partition's own replicas reverts a move waiting for it. */
static void set_target(broker_t *b, admin_item_t *it, const kafka_value_t *replicas)
{
    const partition_t *p = cluster_partition(b, it->name, it->partition);
    it->cancel = replicas->is_null;
    it->rf = it->cancel ? 0 : (int)replicas->n;
    it->assignment = calloc((size_t)it->rf + 1, sizeof(int32_t));
    if (!it->assignment) {
        admin_item_refuse(it, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
        return;
    }
    if (!p || !p->have_replicas) {
        admin_item_refuse(it, KERR_UNKNOWN_TOPIC_OR_PARTITION, "no such partition");
        return;
    }
    if (it->cancel) {
        if (!p->reassigning)
            admin_item_refuse(it, KERR_NO_REASSIGNMENT_IN_PROGRESS, "the partition is not being moved");
        return;
    }
    if (it->rf < 1 || it->rf > COORD_MAX_REPLICAS) {
        admin_item_refuse(it, KERR_INVALID_REPLICA_ASSIGNMENT, "the target must name 1 to 16 brokers");
        return;
    }
    for (int r = 0; r < it->rf; r++) {
        int32_t id = (int32_t)kv_at(replicas, (uint32_t)r)->u.i;
        int added = !in_list(p->replicas, p->nreplicas, id);
        if (in_list(it->assignment, r, id) || (added && !cluster_broker_live(b, id))) {
            admin_item_refuse(it, KERR_INVALID_REPLICA_ASSIGNMENT,
                              "the target names a broker twice, or adds one that is not registered");
            return;
        }
        it->assignment[r] = id;
    }
}

static req_status_t move_start(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const kafka_value_t *topics = KV_GET(req->body, AlterPartitionReassignmentsRequest, Topics);
    uint32_t n = 0;
    for (uint32_t t = 0; t < topics->n; t++)
        n += KV_GET(kv_at(topics, t), ReassignableTopic, Partitions)->n;
    if (n > COORD_PLAN_MAX_MOVES) {
        static const kv_ref_t error = KV_REF(AlterPartitionReassignmentsResponse, ErrorCode);
        return answer_refused(c, req, ra, error, KERR_INVALID_REQUEST);
    }
    admin_job_t *j = admin_job_new(ADMIN_MOVE, (int)n, c->id, req->id);
    for (uint32_t t = 0, i = 0; j && t < topics->n; t++) {
        const kafka_value_t *topic = kv_at(topics, t);
        const kafka_value_t *parts = KV_GET(topic, ReassignableTopic, Partitions);
        for (uint32_t k = 0; k < parts->n; k++, i++) {
            const kafka_value_t *part = kv_at(parts, k);
            int32_t index = (int32_t)KV_INT(part, ReassignablePartition, PartitionIndex);
            if (set_item(&j->items[i], KV_STR(topic, ReassignableTopic, Name), index) < 0) {
                admin_job_free(j);
                return REQ_CLOSE;
            }
            set_target(b, &j->items[i], KV_GET(part, ReassignablePartition, Replicas));
        }
    }
    if (!j)
        return REQ_CLOSE;
    sort_items(j);
    for (int i = 1; i < j->nitems; i++)
        if (same_partition(&j->items[i - 1], &j->items[i])) {
            admin_item_refuse(&j->items[i - 1], KERR_INVALID_REQUEST, "the partition is named more than once");
            admin_item_refuse(&j->items[i], KERR_INVALID_REQUEST, "the partition is named more than once");
        }
    int64_t timeout = KV_INT(req->body, AlterPartitionReassignmentsRequest, TimeoutMs);
    return api_admin_wait_for_job(b, req, j, request_timeout(timeout));
}

req_status_t api_alter_partition_reassignments(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const result_fields_t fields = {
        KV_REF(AlterPartitionReassignmentsResponse, Responses), KV_REF(ReassignableTopicResponse, Name),
        KV_REF(ReassignableTopicResponse, Partitions),          KV_REF(ReassignablePartitionResponse, PartitionIndex),
        KV_REF(ReassignablePartitionResponse, ErrorCode),       KV_REF(ReassignablePartitionResponse, ErrorMessage),
    };
    return run_job_request(b, c, req, ra, move_start, &fields);
}

/* ---- ListPartitionReassignments ---- */

static int describe_move(kafka_arena_t *ra, kafka_value_t *out, const partition_t *p)
{
    coord_move_sets_t m;
    coord_move_sets(p->replicas, p->nreplicas, p->target, p->ntarget, &m);
    KV_SET_INT(out, OngoingPartitionReassignment, PartitionIndex, p->id);
    if (API_SET_INT32_ARRAY(ra, out, OngoingPartitionReassignment, Replicas, m.replicas, m.nreplicas) < 0 ||
        API_SET_INT32_ARRAY(ra, out, OngoingPartitionReassignment, AddingReplicas, m.adding, m.nadding) < 0 ||
        API_SET_INT32_ARRAY(ra, out, OngoingPartitionReassignment, RemovingReplicas, m.removing, m.nremoving) < 0)
        return -1;
    return 0;
}

/* The partitions moving among those asked about (all when asked is null):
 * *out malloc'd, grouped by topic. -1 out of memory. */
static int moving_partitions(broker_t *b, const kafka_value_t *asked, const partition_t ***out, int *n)
{
    size_t cap = 0;
    for (int t = 0; asked->is_null && t < b->ntopics; t++)
        cap += (size_t)b->topics[t]->nparts;
    for (uint32_t t = 0; !asked->is_null && t < asked->n; t++)
        cap += KV_GET(kv_at(asked, t), ListPartitionReassignmentsTopics, PartitionIndexes)->n;
    *out = malloc((cap + 1) * sizeof(**out));
    *n = 0;
    if (!*out)
        return -1;
    for (int t = 0; asked->is_null && t < b->ntopics; t++)
        for (int k = 0; k < b->topics[t]->nparts; k++)
            if (b->topics[t]->parts[k] && b->topics[t]->parts[k]->reassigning)
                (*out)[(*n)++] = b->topics[t]->parts[k];
    for (uint32_t t = 0; !asked->is_null && t < asked->n; t++) {
        const kafka_value_t *topic = kv_at(asked, t);
        const char *name = KV_STR(topic, ListPartitionReassignmentsTopics, Name);
        const kafka_value_t *ids = KV_GET(topic, ListPartitionReassignmentsTopics, PartitionIndexes);
        for (uint32_t k = 0; name && k < ids->n; k++) {
            const partition_t *p = cluster_partition(b, name, (int32_t)kv_at(ids, k)->u.i);
            if (p && p->reassigning)
                (*out)[(*n)++] = p;
        }
    }
    return 0;
}

req_status_t api_list_partition_reassignments(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const partition_t **moving;
    int n;
    if (moving_partitions(b, KV_GET(req->body, ListPartitionReassignmentsRequest, Topics), &moving, &n) < 0)
        return REQ_CLOSE;
    uint32_t ntopics = 0;
    for (int i = 0; i < n; i++)
        ntopics += i == 0 || moving[i]->topic != moving[i - 1]->topic;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *topics = resp ? KV_SET_ARRAY(ra, resp, ListPartitionReassignmentsResponse, Topics, ntopics) : NULL;
    int ok = topics != NULL;
    for (int i = 0, t = 0; ok && i < n; t++) {
        int end = i + 1;
        while (end < n && moving[end]->topic == moving[i]->topic)
            end++;
        kafka_value_t *topic = kv_at(topics, (uint32_t)t);
        KV_SET_STR(ra, topic, OngoingTopicReassignment, Name, moving[i]->topic->name);
        kafka_value_t *parts = KV_SET_ARRAY(ra, topic, OngoingTopicReassignment, Partitions, (uint32_t)(end - i));
        ok = parts != NULL;
        for (int k = i; ok && k < end; k++)
            ok = describe_move(ra, kv_at(parts, (uint32_t)(k - i)), moving[k]) == 0;
        i = end;
    }
    free(moving);
    return ok ? api_answer(c, req, resp) : REQ_CLOSE;
}
