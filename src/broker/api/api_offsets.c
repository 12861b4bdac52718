/* api_offsets.c -- ListOffsets (earliest, latest, or by timestamp) and
 * OffsetForLeaderEpoch (KIP-101: the end offset of a leader epoch, which
 * clients and followers use to find where logs diverge). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"

#define LATEST_TIMESTAMP (-1)
#define EARLIEST_TIMESTAMP (-2)

/* The epoch of the leader that wrote offset (the last epoch starting at or
 * before it), -1 if unknown. */
static int32_t epoch_of_offset(const partition_log_t *log, int64_t offset)
{
    const epoch_entry_t *e;
    size_t n = partition_log_epochs(log, &e);
    int32_t epoch = -1;
    for (size_t i = 0; i < n && e[i].start_offset <= offset; i++)
        epoch = e[i].epoch;
    return epoch;
}

typedef struct {
    broker_t *b;
    const broker_request_t *req;
    kafka_arena_t *ra;
} offsets_ctx_t;

static void list_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    offsets_ctx_t *x = arg;
    broker_t *b = x->b;
    const broker_request_t *req = x->req;
    kafka_arena_t *ra = x->ra;
    int32_t index = (int32_t)KV_INT(in, ListOffsetsPartition, PartitionIndex);
    int64_t ts = KV_INT(in, ListOffsetsPartition, Timestamp);
    int16_t error;
    KV_SET_INT(out, ListOffsetsPartitionResponse, PartitionIndex, index);
    int32_t leader_epoch = (int32_t)KV_INT(in, ListOffsetsPartition, CurrentLeaderEpoch);
    replica_t *r = api_leader_replica(b, topic, index, leader_epoch, &error);
    KV_SET_INT(out, ListOffsetsPartitionResponse, ErrorCode, error);
    if (error)
        return;
    int64_t offset = -1, found_ts = -1;
    if (ts == LATEST_TIMESTAMP) {
        /* Consumers see up to the HW; there are no transactions, so the
         * last stable offset is the HW too. */
        offset = partition_log_high_watermark(r->log);
    } else if (ts == EARLIEST_TIMESTAMP) {
        offset = partition_log_start_offset(r->log);
    } else if (ts < 0) {
        /* a special value we do not know */
        KV_SET_INT(out, ListOffsetsPartitionResponse, ErrorCode, KERR_UNSUPPORTED_VERSION);
        return;
    } else if (partition_log_offset_for_time(r->log, ts, &offset, &found_ts) != PLOG_OK ||
               offset >= partition_log_high_watermark(r->log)) {
        offset = found_ts = -1;
    }
    KV_SET_INT(out, ListOffsetsPartitionResponse, Offset, offset);
    KV_SET_INT(out, ListOffsetsPartitionResponse, Timestamp, found_ts);
    if (offset >= 0)
        KV_SET_INT(out, ListOffsetsPartitionResponse, LeaderEpoch,
                   ts == LATEST_TIMESTAMP ? r->leader_epoch : epoch_of_offset(r->log, offset));
    if (req->api_version == 0) {
        int n = offset >= 0 ? 1 : 0;
        kafka_value_t *old = KV_SET_ARRAY(ra, out, ListOffsetsPartitionResponse, OldStyleOffsets, (uint32_t)n);
        if (old && n)
            kv_at(old, 0)->u.i = offset;
    }
}

req_status_t api_list_offsets(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const api_tree_t tree = {
        KV_REF(ListOffsetsRequest, Topics), KV_REF(ListOffsetsTopic, Name),
        KV_REF(ListOffsetsTopic, Partitions), KV_REF(ListOffsetsResponse, Topics),
        KV_REF(ListOffsetsTopicResponse, Name), KV_REF(ListOffsetsTopicResponse, Partitions),
    };
    offsets_ctx_t x = {b, req, ra};
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp || api_each_partition(ra, req->body, resp, &tree, list_partition, &x) < 0)
        return REQ_CLOSE;
    return api_answer(c, req, resp);
}

static void epoch_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    broker_t *b = ((offsets_ctx_t *)arg)->b;
    int32_t index = (int32_t)KV_INT(in, OffsetForLeaderPartition, Partition);
    int16_t error;
    KV_SET_INT(out, OffsetForLeaderEpochEndOffset, Partition, index);
    int32_t leader_epoch = (int32_t)KV_INT(in, OffsetForLeaderPartition, CurrentLeaderEpoch);
    replica_t *r = api_leader_replica(b, topic, index, leader_epoch, &error);
    KV_SET_INT(out, OffsetForLeaderEpochEndOffset, ErrorCode, error);
    if (error)
        return;
    int32_t epoch;
    int64_t end;
    partition_log_epoch_end_offset(r->log, (int32_t)KV_INT(in, OffsetForLeaderPartition, LeaderEpoch), &epoch, &end);
    KV_SET_INT(out, OffsetForLeaderEpochEndOffset, LeaderEpoch, epoch);
    KV_SET_INT(out, OffsetForLeaderEpochEndOffset, EndOffset, end);
}

req_status_t api_offset_for_leader_epoch(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const api_tree_t tree = {
        KV_REF(OffsetForLeaderEpochRequest, Topics), KV_REF(OffsetForLeaderTopic, Topic),
        KV_REF(OffsetForLeaderTopic, Partitions), KV_REF(OffsetForLeaderEpochResponse, Topics),
        KV_REF(OffsetForLeaderTopicResult, Topic), KV_REF(OffsetForLeaderTopicResult, Partitions),
    };
    offsets_ctx_t x = {b, req, ra};
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp || api_each_partition(ra, req->body, resp, &tree, epoch_partition, &x) < 0)
        return REQ_CLOSE;
    return api_answer(c, req, resp);
}
