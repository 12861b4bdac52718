/* api_produce.c -- Produce: each partition's record batches go to its
 * leader replica's log as they came (offsets and leader epoch set in
 * place), after the checks replica_append makes. Produce v0-v2 may carry
 * message sets of magic 0/1 instead: replica_append up-converts them to one
 * v2 batch (message_convert.h); v3 and later must carry one v2 batch. acks=0 gets no answer, as
 * in Kafka; acks=1 and acks=-1 are answered once appended (with this
 * broker as the ISR's only member the HW is the log end at once; waiting
 * for followers, seed 000's commitQ, comes with replication). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/core/replica.h"
#include "broker/log/message_convert.h"
#include "base/logging.h"
#include "base/endian.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Batches in a records buffer, or -1 if it does not split into whole ones. */
static int count_batches(const uint8_t *p, size_t len)
{
    int n = 0;
    for (size_t off = 0; off < len; n++) {
        if (len - off < BATCH_LOG_OVERHEAD)
            return -1;
        int32_t blen = (int32_t)be32_get(p + off + BATCH_OFF_LENGTH);
        if (blen < 0 || (size_t)blen > len - off - BATCH_LOG_OVERHEAD)
            return -1;
        off += (size_t)blen + BATCH_LOG_OVERHEAD;
    }
    return n;
}

/* Kafka refuses zstd in Produce below v7 (clients that old cannot read it). */
static int uses_zstd(const uint8_t *p, size_t len)
{
    for (size_t off = 0; off + BATCH_HEADER_LEN <= len;) {
        if ((p[off + BATCH_OFF_ATTRIBUTES + 1] & BATCH_ATTR_COMPRESSION_MASK) == 4)
            return 1;
        off += (size_t)be32_get(p + off + BATCH_OFF_LENGTH) + BATCH_LOG_OVERHEAD;
    }
    return 0;
}

static int min_insync(const broker_t *b, const topic_t *t)
{
    const char *v = topic_config(t, "min.insync.replicas");
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : b->cfg.min_insync_replicas;
}

typedef struct {
    broker_t *b;
    int16_t version, acks;
    kafka_arena_t *ra;
    int16_t refuse_all;   /* an error for every partition (bad acks, transactions) */
    int16_t first_error;  /* of any partition */
} produce_ctx_t;

static void produce_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    produce_ctx_t *x = arg;
    broker_t *b = x->b;
    int16_t version = x->version, acks = x->acks;
    kafka_arena_t *ra = x->ra;
    int32_t index = (int32_t)KV_INT(in, PartitionProduceData, Index);
    const kafka_value_t *records = KV_GET(in, PartitionProduceData, Records);
    int16_t error;
    const char *message = NULL;
    KV_SET_INT(out, PartitionProduceResponse, Index, index);
    KV_SET_INT(out, PartitionProduceResponse, BaseOffset, -1);
    if (x->refuse_all) {
        KV_SET_INT(out, PartitionProduceResponse, ErrorCode, x->refuse_all);
        return;
    }
    replica_t *r = api_leader_replica(b, topic, index, -1, &error);
    int nbatches = records->is_null ? 0 : count_batches(records->u.b, records->n);
    int32_t err_batch = -1;
    /* Message sets of magic 0/1 (Produce v0-v2 from Kafka 0.8-0.10 clients)
     * are up-converted by replica_append; their entries split as batches do. */
    int legacy = nbatches > 0 && message_set_is_legacy(records->u.b, records->n);
    if (r && nbatches < 0) {
        error = KERR_CORRUPT_MESSAGE;
        message = "records do not split into whole batches";
    } else if (r && version >= 3 && legacy) {
        error = KERR_INVALID_RECORD;
        message = "Produce v3 and later must carry record batches v2 (magic 2)";
    } else if (r && version >= 3 && nbatches != 1) {
        error = KERR_INVALID_RECORD;
        message = "Produce v3 and later must carry exactly one record batch per partition";
    } else if (r && version < 7 && !legacy && uses_zstd(records->u.b, records->n)) {
        error = KERR_UNSUPPORTED_COMPRESSION_TYPE;
        message = "zstd needs Produce v7 or later";
    } else if (r && acks == -1 && r->part->nisr < min_insync(b, r->part->topic)) {
        error = KERR_NOT_ENOUGH_REPLICAS;
    } else if (r && acks == -1 && r->part->nisr > 1) {
        /* acks=all promises every ISR member has the data; followers do not
         * fetch yet (replication is the next step), so do not pretend. */
        error = KERR_NOT_ENOUGH_REPLICAS;
        message = "followers do not replicate yet: acks=all needs an ISR of this broker alone";
    } else if (r && nbatches > 0) {
        int64_t base = -1, append_time = -1;
        /* The frame is our own input buffer: batches are patched in place. */
        uint8_t *p = (uint8_t *)(uintptr_t)records->u.b;
        error = replica_append(b, r, p, records->n, &err_batch, &base, &append_time, &message);
        KV_SET_INT(out, PartitionProduceResponse, BaseOffset, base);
        KV_SET_INT(out, PartitionProduceResponse, LogAppendTimeMs, append_time);
    }
    if (r)
        KV_SET_INT(out, PartitionProduceResponse, LogStartOffset, partition_log_start_offset(r->log));
    KV_SET_INT(out, PartitionProduceResponse, ErrorCode, error);
    if (error && !x->first_error)
        x->first_error = error;
    if (message)
        KV_SET_STR(ra, out, PartitionProduceResponse, ErrorMessage, message);
    if (error && err_batch >= 0) {
        kafka_value_t *re = KV_SET_ARRAY(ra, out, PartitionProduceResponse, RecordErrors, 1);
        if (re)
            KV_SET_INT(kv_at(re, 0), BatchIndexAndErrorMessage, BatchIndex, err_batch);
    }
    if (error && error != KERR_NOT_LEADER_OR_FOLLOWER && error != KERR_UNKNOWN_TOPIC_OR_PARTITION)
        log_info("produce to %s-%d refused: error %d%s%s", topic, (int)index, error, message ? ": " : "",
                 message ? message : "");
}

req_status_t api_produce(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const api_tree_t tree = {
        KV_REF(ProduceRequest, TopicData), KV_REF(TopicProduceData, Name),
        KV_REF(TopicProduceData, PartitionData), KV_REF(ProduceResponse, Responses),
        KV_REF(TopicProduceResponse, Name), KV_REF(TopicProduceResponse, PartitionResponses),
    };
    int16_t acks = (int16_t)KV_INT(req->body, ProduceRequest, Acks);
    produce_ctx_t x = {.b = b, .version = req->api_version, .acks = acks, .ra = ra};
    if (acks != 0 && acks != 1 && acks != -1)
        x.refuse_all = KERR_INVALID_REQUIRED_ACKS;
    else if (KV_STR(req->body, ProduceRequest, TransactionalId))
        x.refuse_all = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    if (!resp || api_each_partition(ra, req->body, resp, &tree, produce_partition, &x) < 0)
        return REQ_CLOSE;
    if (acks == 0 && !x.refuse_all) {
        /* The client waits for nothing. Kafka closes the connection when an
         * acks=0 produce failed, so the client refreshes its metadata. */
        if (x.first_error) {
            char why[96];
            snprintf(why, sizeof(why), "an acks=0 produce failed with error %d", x.first_error);
            broker_conn_close(b, c, why);
        }
        return REQ_DONE;
    }
    return api_answer(c, req, resp);
}
