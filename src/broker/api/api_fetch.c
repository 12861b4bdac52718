/* api_fetch.c -- Fetch: record batches straight from the segment files.
 * The response is encoded with each partition's records left out
 * (kafka_ext_records_t); their file ranges follow on the socket with
 * sendfile, so no record byte passes through user space.
 *
 * A fetch that finds fewer than MinBytes waits, up to MaxWaitMs, and runs
 * again whenever an append happens (broker_wake_data_waiters). Consumers
 * read up to the high watermark, replicas (ReplicaId >= 0) up to the log
 * end. Fetch sessions (KIP-227) are not kept: SessionId 0 in the answer
 * tells clients to send full requests.
 *
 * Fetching from followers (KIP-392): a consumer's Fetch v11+ may go to a
 * follower, which serves it up to its own HW; the leader, with
 * replica.selector.class set, answers one from a consumer in another rack
 * with the follower to read from instead (PreferredReadReplica, no records:
 * repl_preferred_read_replica). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "base/logging.h"
#include "broker/repl/repl.h"
#include "broker/core/replica.h"

#include <string.h>

#define MAX_WAIT_CAP_MS 300000

typedef struct {
    kafka_ext_records_t ext;
    int fd;
    int64_t pos;
} fetch_slice_t;

typedef struct {
    int64_t bytes_left;   /* of the request's MaxBytes */
    int64_t found;        /* bytes found so far */
    int first_data;       /* no partition has returned data yet (KIP-74: at least one batch) */
    int any_error;
    int any_redirect;     /* a partition named a preferred read replica: answered at once, as Kafka does */
} fetch_totals_t;

typedef struct {
    broker_t *b;
    const broker_request_t *req;
    kafka_arena_t *ra;
    fetch_totals_t tot;
    int64_t move_bytes;   /* of a move's catch-up traffic, for its throttle (repl.h) */
    int move_held;        /* some of it was held back by the throttle */
} fetch_ctx_t;

/* The slice's file range goes into the response as external records (sent
 * with sendfile after the encoded bytes). */
static void attach_slice(fetch_ctx_t *x, kafka_value_t *out, const plog_slice_t *slice)
{
    fetch_slice_t *fs = kafka_arena_alloc(x->ra, sizeof(*fs));
    if (!fs)
        return;
    fs->ext.len = (uint32_t)slice->length;
    fs->ext.owner = fs;
    fs->fd = slice->fd;
    fs->pos = slice->position;
    KV_SET_EXTERNAL_RECORDS(out, FetchPartitionData, Records, &fs->ext);
    x->tot.found += slice->length;
    x->tot.bytes_left -= slice->length;
    x->tot.first_data = 0;
}

static void fetch_failed(fetch_ctx_t *x, kafka_value_t *out, int16_t error)
{
    KV_SET_INT(out, FetchPartitionData, ErrorCode, error);
    x->tot.any_error = 1;
}

static void fetch_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    fetch_ctx_t *x = arg;
    const broker_request_t *req = x->req;
    int32_t index = (int32_t)KV_INT(in, FetchPartition, Partition);
    int64_t offset = KV_INT(in, FetchPartition, FetchOffset);
    int32_t replica_id = (int32_t)KV_INT(req->body, FetchRequest, ReplicaId);
    int from_consumer_v11 = replica_id < 0 && req->api_version >= 11;   /* may read from a follower */
    int16_t error;
    KV_SET_INT(out, FetchPartitionData, PartitionIndex, index);
    KV_SET_INT(out, FetchPartitionData, HighWatermark, -1);
    KV_SET_INT(out, FetchPartitionData, LastStableOffset, -1);
    KV_SET_INT(out, FetchPartitionData, LogStartOffset, -1);
    KV_SET_BYTES(out, FetchPartitionData, Records, "", 0);
    int32_t epoch = (int32_t)KV_INT(in, FetchPartition, CurrentLeaderEpoch);
    replica_t *r = from_consumer_v11 ? api_readable_replica(x->b, topic, index, epoch, &error)
                                     : api_leader_replica(x->b, topic, index, epoch, &error);
    /* A follower's fetch offset is its log end: the leader's ISR and HW
     * move with it (repl.h). */
    if (!error && replica_id >= 0)
        error = repl_follower_fetched(x->b, r, replica_id, offset);
    if (!error && replica_id >= 0 && req->api_version >= 5)   /* LogStartOffset: v5+ */
        replica_follower_start_seen(x->b, r, replica_id, KV_INT(in, FetchPartition, LogStartOffset));
    if (error) {
        fetch_failed(x, out, error);
        return;
    }
    int64_t hw = partition_log_high_watermark(r->log);
    KV_SET_INT(out, FetchPartitionData, HighWatermark, hw);
    KV_SET_INT(out, FetchPartitionData, LastStableOffset, hw);
    KV_SET_INT(out, FetchPartitionData, LogStartOffset, partition_log_start_offset(r->log));
    int32_t preferred = from_consumer_v11
        ? repl_preferred_read_replica(x->b, r, KV_STR(req->body, FetchRequest, RackId), offset) : -1;
    if (preferred >= 0) {
        KV_SET_INT(out, FetchPartitionData, PreferredReadReplica, preferred);
        KV_SET_INT(out, FetchPartitionData, ErrorCode, KERR_NONE);
        x->tot.any_redirect = 1;
        return;
    }
    int64_t max = KV_INT(in, FetchPartition, PartitionMaxBytes);
    if (max > x->tot.bytes_left)
        max = x->tot.bytes_left;
    plog_slice_t slice = {.length = 0};
    int64_t leo = partition_log_end_offset(r->log);
    int64_t upto = replica_id >= 0 ? leo : hw;   /* followers read to the log end, consumers to the HW */
    int rc = PLOG_OK;
    /* A move's catch-up traffic waits while its throttle is spent: nothing
     * for this partition in this answer. */
    int move = replica_id >= 0 && repl_move_traffic(x->b, r->part, replica_id, REPL_LEADER_SIDE);
    if (move && !repl_throttle_open(x->b, REPL_LEADER_SIDE) && offset < upto) {
        upto = offset;
        x->move_held = 1;
    }
    if (offset < partition_log_start_offset(r->log) || offset > leo)
        rc = PLOG_ERR_OUT_OF_RANGE;   /* the log start goes with the error: a follower starts over there */
    else if (offset < upto)
        rc = partition_log_read(r->log, offset, upto, max, x->tot.first_data && req->api_version >= 3, &slice);
    if (rc != PLOG_OK) {
        fetch_failed(x, out, rc == PLOG_ERR_OUT_OF_RANGE ? KERR_OFFSET_OUT_OF_RANGE : KERR_KAFKA_STORAGE_ERROR);
        return;
    }
    KV_SET_INT(out, FetchPartitionData, ErrorCode, KERR_NONE);
    if (slice.length > 0)
        attach_slice(x, out, &slice);
    if (move)
        x->move_bytes += slice.length;
}

/* Queues the file ranges of every partition that returned data; -1 when
 * one cannot be queued. */
static int queue_slices(conn_t *c, const kafka_value_t *resp)
{
    const kafka_value_t *topics = KV_GET(resp, FetchResponse, Responses);
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *parts = KV_GET(kv_at(topics, i), FetchableTopicResponse, Partitions);
        for (uint32_t k = 0; k < parts->n; k++) {
            const kafka_value_t *rec = KV_GET(kv_at(parts, k), FetchPartitionData, Records);
            if (rec->external && rec->u.ext->encoded) {
                const fetch_slice_t *fs = rec->u.ext->owner;
                if (broker_conn_splice(c, rec->u.ext, fs->fd, fs->pos) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

static int16_t check_session(const kafka_value_t *body, int16_t version)
{
    if (version < 7)
        return KERR_NONE;
    int32_t id = (int32_t)KV_INT(body, FetchRequest, SessionId);
    int32_t epoch = (int32_t)KV_INT(body, FetchRequest, SessionEpoch);
    if (id != 0)
        return KERR_FETCH_SESSION_ID_NOT_FOUND;
    return epoch == 0 || epoch == -1 ? KERR_NONE : KERR_INVALID_FETCH_SESSION_EPOCH;
}

req_status_t api_fetch(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp)
        return REQ_CLOSE;
    int16_t session_error = check_session(req->body, req->api_version);
    if (session_error) {
        KV_SET_INT(resp, FetchResponse, ErrorCode, session_error);
        return api_answer(c, req, resp);
    }
    static const api_tree_t tree = {
        KV_REF(FetchRequest, Topics), KV_REF(FetchTopic, Topic),
        KV_REF(FetchTopic, Partitions), KV_REF(FetchResponse, Responses),
        KV_REF(FetchableTopicResponse, Topic), KV_REF(FetchableTopicResponse, Partitions),
    };
    int64_t max_bytes = KV_INT(req->body, FetchRequest, MaxBytes);
    fetch_ctx_t x = {.b = b, .req = req, .ra = ra, .tot = {.bytes_left = max_bytes > 0 ? max_bytes : 0, .first_data = 1}};
    if (api_each_partition(ra, req->body, resp, &tree, fetch_partition, &x) < 0)
        return REQ_CLOSE;
    int64_t wait = KV_INT(req->body, FetchRequest, MaxWaitMs);
    if (!req->timed_out && !x.tot.any_error && !x.tot.any_redirect && wait > 0 && x.tot.found < KV_INT(req->body, FetchRequest, MinBytes)) {
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)(wait < MAX_WAIT_CAP_MS ? wait : MAX_WAIT_CAP_MS);
        /* What the throttle held back goes as soon as it opens. */
        uint64_t open_at = x.move_held ? repl_throttle_open_at(b, REPL_LEADER_SIDE) : UINT64_MAX;
        if (open_at < req->deadline_ms)
            req->deadline_ms = open_at;
        req->wants_data = 1;
        return REQ_WAIT;
    }
    if (broker_reply(c, req, resp) < 0 || queue_slices(c, resp) < 0)
        return REQ_CLOSE;
    repl_throttle_charge(b, REPL_LEADER_SIDE, x.move_bytes);
    return REQ_DONE;
}
