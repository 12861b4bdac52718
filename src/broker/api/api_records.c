/* api_records.c -- DeleteRecords and DescribeLogDirs.
 *
 * DeleteRecords moves a partition's log start on its leader (whole segments
 * below it go, reads below it are OFFSET_OUT_OF_RANGE), never past the HW
 * (OFFSET_OUT_OF_RANGE, as Kafka). Followers learn the new start from the
 * LogStartOffset of their fetch answers and move theirs
 * (replica_follower_log_start in broker/repl/follow.c); they report theirs in
 * their next fetch. As Kafka's DelayedDeleteRecords, the answer waits, up to
 * TimeoutMs, until the low watermark -- the smallest log start over the
 * leader and its live followers -- has reached the offset, and carries it.
 *
 * DescribeLogDirs: per log dir, each replica's size (its segments' bytes)
 * and lag: for a follower, how far its LEO is behind the HW its leader last
 * told it; 0 for a leader, whose HW is never past its LEO. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "base/logging.h"
#include "broker/core/replica.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#define HIGH_WATERMARK (-1)          /* DeleteRecordsRequest.HIGH_WATERMARK */
#define MAX_WAIT_MS 300000

/* ---- DeleteRecords ---- */

typedef struct {
    int16_t error;
    int done;
    int64_t target;    /* the offset the log start must reach on every replica */
    int64_t low;
} delete_part_t;

typedef struct {
    broker_t *b;
    const broker_request_t *req;
    delete_part_t *parts;
    int first, n, pending;
} delete_ctx_t;

/* The smallest log start over the leader and its live followers (Kafka's
 * lowWatermarkIfLeader); a follower that has not said yet at this epoch
 * holds it at -1. */
static int64_t low_watermark(broker_t *b, const replica_t *r)
{
    const partition_t *p = r->part;
    int64_t low = partition_log_start_offset(r->log);
    for (int i = 0; i < p->nreplicas + (p->reassigning ? p->ntarget : 0); i++) {
        int32_t id = i < p->nreplicas ? p->replicas[i] : p->target[i - p->nreplicas];
        if (id == b->cfg.broker_id || !cluster_broker_live(b, id))
            continue;
        int64_t start = -1;
        for (int k = 0; k < r->nfollower_starts; k++)
            if (r->follower_starts[k].id == id && r->follower_starts[k].epoch == r->leader_epoch)
                start = r->follower_starts[k].log_start;
        if (start < low)
            low = start;
    }
    return low;
}

/* The first run's work: move the leader's log start. */
static void delete_start(broker_t *b, replica_t *r, const char *topic, int32_t index, int64_t offset,
                         delete_part_t *dp)
{
    int64_t hw = partition_log_high_watermark(r->log);
    dp->target = offset == HIGH_WATERMARK ? hw : offset;
    if (dp->target < 0 || dp->target > hw) {
        dp->error = KERR_OFFSET_OUT_OF_RANGE;
        dp->done = 1;
        return;
    }
    int64_t before = partition_log_start_offset(r->log);
    int rc = partition_log_delete_records_before(r->log, dp->target);
    if (rc < 0) {
        dp->error = KERR_KAFKA_STORAGE_ERROR;
        dp->done = 1;
    } else if (dp->target > before) {
        log_info("%s-%d: records before %" PRId64 " deleted (%d segment(s)); the log started at %" PRId64, topic,
                 (int)index, dp->target, rc, before);
    }
    (void)b;
}

static void delete_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    delete_ctx_t *x = arg;
    delete_part_t *dp = &x->parts[x->n++];
    int32_t index = (int32_t)KV_INT(in, DeleteRecordsPartition, PartitionIndex);
    KV_SET_INT(out, DeleteRecordsPartitionResult, PartitionIndex, index);
    if (!dp->done) {
        int16_t error;
        replica_t *r = api_leader_replica(x->b, topic, index, -1, &error);
        if (!r) {
            dp->error = error;
            dp->done = 1;
        } else if (x->first) {
            delete_start(x->b, r, topic, index, KV_INT(in, DeleteRecordsPartition, Offset), dp);
        }
        if (r && !dp->done && (dp->low = low_watermark(x->b, r)) >= dp->target)
            dp->done = 1;
        if (!dp->done && x->req->timed_out) {
            dp->error = KERR_REQUEST_TIMED_OUT;
            dp->done = 1;
        }
    }
    x->pending += !dp->done;
    KV_SET_INT(out, DeleteRecordsPartitionResult, ErrorCode, dp->error);
    KV_SET_INT(out, DeleteRecordsPartitionResult, LowWatermark, dp->done && !dp->error ? dp->low : -1);
}

static uint32_t count_partitions(const kafka_value_t *body)
{
    const kafka_value_t *topics = KV_GET(body, DeleteRecordsRequest, Topics);
    uint32_t n = 0;
    for (uint32_t i = 0; i < topics->n; i++)
        n += KV_GET(kv_at(topics, i), DeleteRecordsTopic, Partitions)->n;
    return n;
}

req_status_t api_delete_records(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const api_tree_t tree = {
        KV_REF(DeleteRecordsRequest, Topics),      KV_REF(DeleteRecordsTopic, Name),
        KV_REF(DeleteRecordsTopic, Partitions),    KV_REF(DeleteRecordsResponse, Topics),
        KV_REF(DeleteRecordsTopicResult, Name),    KV_REF(DeleteRecordsTopicResult, Partitions),
    };
    delete_ctx_t x = {.b = b, .req = req, .first = req->state == NULL};
    if (x.first) {
        /* The counts are the request's, bounded by its decoded size. */
        req->state = calloc(count_partitions(req->body) + 1, sizeof(delete_part_t));
        req->state_free = free;
        if (!req->state)
            return REQ_CLOSE;
    }
    x.parts = req->state;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp || api_each_partition(ra, req->body, resp, &tree, delete_partition, &x) < 0)
        return REQ_CLOSE;
    if (x.pending == 0)
        return api_answer(c, req, resp);
    if (!req->deadline_ms) {
        int64_t wait = KV_INT(req->body, DeleteRecordsRequest, TimeoutMs);
        wait = wait < 0 ? 0 : wait > MAX_WAIT_MS ? MAX_WAIT_MS : wait;
        req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)wait;
    }
    /* Woken when a follower reports a later log start (replica.c). */
    req->wants_data = 1;
    return REQ_WAIT;
}

/* ---- DescribeLogDirs ---- */

static int partition_wanted(const kafka_value_t *topics, const char *topic, int32_t partition)
{
    if (topics->is_null)
        return 1;
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        const char *name = KV_STR(t, DescribableLogDirTopic, Topic);
        if (!name || strcmp(name, topic) != 0)
            continue;
        const kafka_value_t *parts = KV_GET(t, DescribableLogDirTopic, Partitions);
        for (uint32_t k = 0; k < parts->n; k++)
            if (kv_at(parts, k)->u.i == partition)
                return 1;
    }
    return 0;
}

/* Replicas of t in dir d the request asks about; with out, their entries. */
static uint32_t dir_partitions(const broker_t *b, const topic_t *t, int d, const kafka_value_t *want,
                               kafka_value_t *out)
{
    uint32_t n = 0;
    for (int k = 0; k < t->nparts; k++) {
        const replica_t *r = t->parts[k] ? t->parts[k]->replica : NULL;
        if (!r || !r->log || r->log_dir != d || !partition_wanted(want, t->name, k))
            continue;
        if (out) {
            kafka_value_t *o = kv_at(out, n);
            int64_t leo = partition_log_end_offset(r->log);
            int64_t lag = r->role == REPLICA_FOLLOWER && r->leader_hw > leo ? r->leader_hw - leo : 0;
            KV_SET_INT(o, DescribeLogDirsPartition, PartitionIndex, k);
            KV_SET_INT(o, DescribeLogDirsPartition, PartitionSize, partition_log_size_bytes(r->log));
            KV_SET_INT(o, DescribeLogDirsPartition, OffsetLag, lag);
            KV_SET_INT(o, DescribeLogDirsPartition, IsFutureKey, 0);
        }
        n++;
    }
    (void)b;
    return n;
}

static int describe_dir(const broker_t *b, int d, const kafka_value_t *want, kafka_value_t *out, kafka_arena_t *ra)
{
    KV_SET_INT(out, DescribeLogDirsResult, ErrorCode, KERR_NONE);
    KV_SET_STR(ra, out, DescribeLogDirsResult, LogDir, b->log_dirs_abs[d]);
    struct statvfs vfs;
    if (statvfs(b->log_dirs_abs[d], &vfs) == 0) {
        KV_SET_INT(out, DescribeLogDirsResult, TotalBytes, (int64_t)vfs.f_blocks * (int64_t)vfs.f_frsize);
        KV_SET_INT(out, DescribeLogDirsResult, UsableBytes, (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize);
    }
    uint32_t ntopics = 0;
    for (int i = 0; i < b->ntopics; i++)
        ntopics += dir_partitions(b, b->topics[i], d, want, NULL) > 0;
    kafka_value_t *topics = KV_SET_ARRAY(ra, out, DescribeLogDirsResult, Topics, ntopics);
    if (!topics)
        return -1;
    for (int i = 0, k = 0; i < b->ntopics; i++) {
        const topic_t *t = b->topics[i];
        uint32_t n = dir_partitions(b, t, d, want, NULL);
        if (n == 0)
            continue;
        kafka_value_t *o = kv_at(topics, (uint32_t)k++);
        KV_SET_STR(ra, o, DescribeLogDirsTopic, Name, t->name);
        kafka_value_t *parts = KV_SET_ARRAY(ra, o, DescribeLogDirsTopic, Partitions, n);
        if (!parts)
            return -1;
        dir_partitions(b, t, d, want, parts);
    }
    return 0;
}

req_status_t api_describe_log_dirs(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    const kafka_value_t *want = KV_GET(req->body, DescribeLogDirsRequest, Topics);
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    kafka_value_t *dirs = resp ? KV_SET_ARRAY(ra, resp, DescribeLogDirsResponse, Results,
                                              (uint32_t)b->cfg.n_log_dirs)
                               : NULL;
    if (!dirs)
        return REQ_CLOSE;
    for (int d = 0; d < b->cfg.n_log_dirs; d++)
        if (describe_dir(b, d, want, kv_at(dirs, (uint32_t)d), ra) < 0)
            return REQ_CLOSE;
    return api_answer(c, req, resp);
}
