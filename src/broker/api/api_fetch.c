/* api_fetch.c -- Fetch: record batches straight from the segment files.
 * The response is encoded with each partition's records left out
 * (kafka_ext_records_t); their file ranges follow on the socket with
 * sendfile, so no record byte passes through user space.
 *
 * A fetch that finds fewer than MinBytes waits, up to MaxWaitMs, and runs
 * again whenever an append happens (broker_wake_data_waiters). Consumers
 * read up to the high watermark, replicas (ReplicaId >= 0) up to the log
 * end. Fetch sessions (KIP-227) are not kept: SessionId 0 in the answer
 * tells clients to send full requests. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_util.h"
#include "base/logging.h"

#include <string.h>

#define KERR_FETCH_SESSION_ID_NOT_FOUND 70
#define KERR_INVALID_FETCH_SESSION_EPOCH 71
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
} fetch_totals_t;

typedef struct {
    broker_t *b;
    const broker_request_t *req;
    kafka_arena_t *ra;
    fetch_totals_t tot;
} fetch_ctx_t;

static void fetch_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    fetch_ctx_t *x = arg;
    broker_t *b = x->b;
    const broker_request_t *req = x->req;
    kafka_arena_t *ra = x->ra;
    fetch_totals_t *tot = &x->tot;
    int32_t index = (int32_t)kv_int(in, "Partition");
    int64_t offset = kv_int(in, "FetchOffset");
    int replica_fetch = kv_int(req->body, "ReplicaId") >= 0;
    int16_t error;
    kv_set_int(out, "PartitionIndex", index);
    kv_set_int(out, "HighWatermark", -1);
    kv_set_int(out, "LastStableOffset", -1);
    kv_set_int(out, "LogStartOffset", -1);
    kv_set_bytes(out, "Records", "", 0);
    replica_t *r = api_leader_replica(b, topic, index, (int32_t)kv_int(in, "CurrentLeaderEpoch"), &error);
    if (error) {
        kv_set_int(out, "ErrorCode", error);
        tot->any_error = 1;
        return;
    }
    int64_t hw = partition_log_high_watermark(r->log);
    kv_set_int(out, "HighWatermark", hw);
    kv_set_int(out, "LastStableOffset", hw);
    kv_set_int(out, "LogStartOffset", partition_log_start_offset(r->log));
    int64_t max = kv_int(in, "PartitionMaxBytes");
    if (max > tot->bytes_left)
        max = tot->bytes_left;
    plog_slice_t slice = {.length = 0};
    int64_t leo = partition_log_end_offset(r->log);
    int64_t upto = replica_fetch ? leo : hw;
    int rc = PLOG_OK;
    if (offset < partition_log_start_offset(r->log) || offset > leo)
        rc = PLOG_ERR_OUT_OF_RANGE;
    else if (offset < upto)
        rc = partition_log_read(r->log, offset, upto, max, tot->first_data && req->api_version >= 3, &slice);
    if (rc != PLOG_OK) {
        kv_set_int(out, "ErrorCode", rc == PLOG_ERR_OUT_OF_RANGE ? KERR_OFFSET_OUT_OF_RANGE : KERR_KAFKA_STORAGE_ERROR);
        tot->any_error = 1;
        return;
    }
    kv_set_int(out, "ErrorCode", KERR_NONE);
    if (slice.length <= 0)
        return;
    fetch_slice_t *fs = kafka_arena_alloc(ra, sizeof(*fs));
    if (!fs)
        return;
    fs->ext.len = (uint32_t)slice.length;
    fs->ext.owner = fs;
    fs->fd = slice.fd;
    fs->pos = slice.position;
    kv_set_external_records(out, "Records", &fs->ext);
    tot->found += slice.length;
    tot->bytes_left -= slice.length;
    tot->first_data = 0;
}

/* Queues the file ranges of every partition that returned data. */
static void queue_slices(conn_t *c, const kafka_value_t *resp)
{
    const kafka_value_t *topics = kv_get(resp, "Responses");
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *parts = kv_get(kv_at(topics, i), "Partitions");
        for (uint32_t k = 0; k < parts->n; k++) {
            const kafka_value_t *rec = kv_get(kv_at(parts, k), "Records");
            if (rec->external && rec->u.ext->encoded) {
                const fetch_slice_t *fs = rec->u.ext->owner;
                broker_conn_splice(c, rec->u.ext, fs->fd, fs->pos);
            }
        }
    }
}

static int16_t check_session(const kafka_value_t *body, int16_t version)
{
    if (version < 7)
        return KERR_NONE;
    int32_t id = (int32_t)kv_int(body, "SessionId"), epoch = (int32_t)kv_int(body, "SessionEpoch");
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
        kv_set_int(resp, "ErrorCode", session_error);
        return api_answer(c, req, resp);
    }
    static const api_tree_t tree = {"Topics", "Topic", "Partitions", "Responses", "Topic", "Partitions"};
    int64_t max_bytes = kv_int(req->body, "MaxBytes");
    fetch_ctx_t x = {.b = b, .req = req, .ra = ra, .tot = {.bytes_left = max_bytes > 0 ? max_bytes : 0, .first_data = 1}};
    if (api_each_partition(ra, req->body, resp, &tree, fetch_partition, &x) < 0)
        return REQ_CLOSE;
    int64_t wait = kv_int(req->body, "MaxWaitMs");
    if (!req->timed_out && !x.tot.any_error && wait > 0 && x.tot.found < kv_int(req->body, "MinBytes")) {
        if (!req->deadline_ms)
            req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)(wait < MAX_WAIT_CAP_MS ? wait : MAX_WAIT_CAP_MS);
        req->wants_data = 1;
        return REQ_WAIT;
    }
    if (broker_reply(c, req, resp) < 0)
        return REQ_CLOSE;
    queue_slices(c, resp);
    return REQ_DONE;
}
