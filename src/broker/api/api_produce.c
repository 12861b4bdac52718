/* api_produce.c -- Produce: each partition's record batches go to its
 * leader replica's log as they came (offsets and leader epoch set in
 * place), after the checks replica_append makes. Produce v0-v2 may carry
 * message sets of magic 0/1 instead: replica_append up-converts them to one
 * v2 batch (message_convert.h); v3 and later must carry one v2 batch.
 * acks=0 gets no answer, as in Kafka; acks=1 is answered once appended;
 * acks=all (-1) is refused before the append when the ISR is below
 * min.insync.replicas, and otherwise waits on the partitions' commitQs
 * until the HW has passed what it appended (docs/replication.md). */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/core/replica.h"
#include "broker/log/message_convert.h"
#include "base/logging.h"
#include "base/endian.h"
#include "broker/core/conn.h"
#include "broker/repl/repl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Batches in a records buffer, or -1 if it does not split into whole ones. */
static int count_batches(const uint8_t *p, size_t len)
{
    int n;
    return record_batches_prefix(p, len, &n) == len ? n : -1;
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

/* One partition's answer. */
typedef struct {
    int16_t error;
    const char *message;      /* static, or NULL */
    int32_t err_batch;        /* -1: none */
    int64_t base, append_time, log_start;
} produce_result_t;

/* An acks=all request waiting for its partitions' commitQs: one slot per
 * partition of the request, in request order. The waiters are part of the
 * slots, so queueing allocates nothing more. */
typedef struct produce_wait produce_wait_t;
typedef struct {
    produce_result_t res;
    commit_waiter_t w;
    int waiting;
    produce_wait_t *pw;
} produce_slot_t;

struct produce_wait {
    broker_t *b;
    uint64_t conn_id, request_id;
    int pending;              /* slots still waiting */
    int nslots;
    produce_slot_t slots[];
};

typedef struct {
    broker_t *b;
    int16_t version, acks;
    kafka_arena_t *ra;
    int16_t refuse_all;       /* an error for every partition (bad acks, transactions) */
    int16_t first_error;      /* of any partition */
    produce_wait_t *pw;       /* acks=all: the slots */
    int slot;                 /* the partition being handled, in request order */
    int answering;            /* a woken request: answer from the slots */
} produce_ctx_t;

static void committed(commit_waiter_t *w, int16_t error, void *arg)
{
    produce_slot_t *s = arg;
    (void)w;
    s->res.error = error;
    s->waiting = 0;
    produce_wait_t *pw = s->pw;
    /* Not from here: we may be inside another request's handler. */
    if (--pw->pending == 0)
        broker_wake_later(pw->b, pw->conn_id, pw->request_id);
}

static void produce_wait_free(void *arg)
{
    produce_wait_t *pw = arg;
    for (int i = 0; i < pw->nslots; i++)
        commitq_remove(&pw->slots[i].w);
    free(pw);
}

/* Refused before anything is appended: the request's shape or the ISR. */
static int16_t refuse_before_append(const produce_ctx_t *x, replica_t *r, const kafka_value_t *records,
                                    const char **message)
{
    int nbatches = records->is_null ? 0 : count_batches(records->u.b, records->n);
    /* Message sets of magic 0/1 (Produce v0-v2 from Kafka 0.8-0.10 clients)
     * are up-converted by replica_append; their entries split as batches do. */
    int legacy = nbatches > 0 && message_set_is_legacy(records->u.b, records->n);
    *message = NULL;
    if (nbatches < 0) {
        *message = "records do not split into whole batches";
        return KERR_CORRUPT_MESSAGE;
    }
    if (x->version >= 3 && legacy) {
        *message = "Produce v3 and later must carry record batches v2 (magic 2)";
        return KERR_INVALID_RECORD;
    }
    if (x->version >= 3 && nbatches != 1) {
        *message = "Produce v3 and later must carry exactly one record batch per partition";
        return KERR_INVALID_RECORD;
    }
    if (x->version < 7 && !legacy && uses_zstd(records->u.b, records->n)) {
        *message = "zstd needs Produce v7 or later";
        return KERR_UNSUPPORTED_COMPRESSION_TYPE;
    }
    return x->acks == -1 ? repl_acks_all_check(x->b, r) : KERR_NONE;
}

/* acks=all after the append: answered now if the HW already passed it,
 * else the slot waits on the commitQ. */
static void await_commit(produce_ctx_t *x, replica_t *r, produce_result_t *res, const append_info_t *info)
{
    produce_slot_t *s = &x->pw->slots[x->slot];
    s->pw = x->pw;
    int rc = repl_await_commit(x->b, r, &s->w, info->last_offset + 1, committed, s, &res->error);
    if (rc == 0) {
        s->waiting = 1;
        x->pw->pending++;
    } else if (rc < 0) {
        res->error = KERR_REQUEST_TIMED_OUT;   /* retriable; an idempotent retry is recognised */
        res->message = "too many produce requests waiting for replication on this partition";
    }
}

static void produce_one(produce_ctx_t *x, const char *topic, int32_t index, const kafka_value_t *records,
                        produce_result_t *res)
{
    *res = (produce_result_t){.err_batch = -1, .base = -1, .append_time = -1, .log_start = -1};
    if (x->refuse_all) {
        res->error = x->refuse_all;
        return;
    }
    replica_t *r = api_leader_replica(x->b, topic, index, -1, &res->error);
    if (!r)
        return;
    res->log_start = partition_log_start_offset(r->log);
    res->error = refuse_before_append(x, r, records, &res->message);
    if (res->error || records->is_null || records->n == 0)
        return;
    append_info_t info = {.first_offset = -1, .last_offset = -1};
    /* The frame is our own input buffer: batches are patched in place. */
    uint8_t *p = (uint8_t *)(uintptr_t)records->u.b;
    res->error = replica_append(x->b, r, p, records->n, &res->err_batch, &info, &res->append_time, &res->message);
    if (res->error)
        return;
    res->base = info.first_offset;
    if (x->acks == -1)
        await_commit(x, r, res, &info);
}

static void answer_one(produce_ctx_t *x, const char *topic, int32_t index, kafka_value_t *out,
                       const produce_result_t *res)
{
    KV_SET_INT(out, PartitionProduceResponse, Index, index);
    KV_SET_INT(out, PartitionProduceResponse, BaseOffset, res->base);
    KV_SET_INT(out, PartitionProduceResponse, LogAppendTimeMs, res->append_time);
    KV_SET_INT(out, PartitionProduceResponse, LogStartOffset, res->log_start);
    KV_SET_INT(out, PartitionProduceResponse, ErrorCode, res->error);
    if (res->message)
        KV_SET_STR(x->ra, out, PartitionProduceResponse, ErrorMessage, res->message);
    if (res->error && res->err_batch >= 0) {
        kafka_value_t *re = KV_SET_ARRAY(x->ra, out, PartitionProduceResponse, RecordErrors, 1);
        if (re)
            KV_SET_INT(kv_at(re, 0), BatchIndexAndErrorMessage, BatchIndex, res->err_batch);
    }
    if (res->error && !x->first_error)
        x->first_error = res->error;
    if (res->error && res->error != KERR_NOT_LEADER_OR_FOLLOWER && res->error != KERR_UNKNOWN_TOPIC_OR_PARTITION &&
        !x->answering)
        log_info("produce to %s-%d refused: error %d%s%s", topic, (int)index, res->error,
                 res->message ? ": " : "", res->message ? res->message : "");
}

static void produce_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    produce_ctx_t *x = arg;
    int32_t index = (int32_t)KV_INT(in, PartitionProduceData, Index);
    produce_result_t local, *res = x->pw ? &x->pw->slots[x->slot].res : &local;
    if (!x->answering)
        produce_one(x, topic, index, KV_GET(in, PartitionProduceData, Records), res);
    else if (x->pw->slots[x->slot].waiting)
        res->error = KERR_REQUEST_TIMED_OUT;   /* the request's own timeout passed first */
    answer_one(x, topic, index, out, res);
    x->slot++;
}

static int count_partitions(const kafka_value_t *body)
{
    const kafka_value_t *topics = KV_GET(body, ProduceRequest, TopicData);
    int n = 0;
    for (uint32_t i = 0; i < topics->n; i++)
        n += (int)KV_GET(kv_at(topics, i), TopicProduceData, PartitionData)->n;
    return n;
}

/* acks=all: slots for every partition, owned by the request from here on. */
static produce_wait_t *wait_new(broker_t *b, conn_t *c, broker_request_t *req)
{
    int n = count_partitions(req->body);
    produce_wait_t *pw = calloc(1, sizeof(*pw) + sizeof(produce_slot_t) * (size_t)(n ? n : 1));
    if (!pw)
        return NULL;
    *pw = (produce_wait_t){.b = b, .conn_id = c->id, .request_id = req->id, .nslots = n};
    return pw;
}

req_status_t api_produce(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    static const api_tree_t tree = {
        KV_REF(ProduceRequest, TopicData), KV_REF(TopicProduceData, Name),
        KV_REF(TopicProduceData, PartitionData), KV_REF(ProduceResponse, Responses),
        KV_REF(TopicProduceResponse, Name), KV_REF(TopicProduceResponse, PartitionResponses),
    };
    int16_t acks = (int16_t)KV_INT(req->body, ProduceRequest, Acks);
    produce_ctx_t x = {.b = b, .version = req->api_version, .acks = acks, .ra = ra, .pw = req->state,
                       .answering = req->state != NULL};
    if (acks != 0 && acks != 1 && acks != -1)
        x.refuse_all = KERR_INVALID_REQUIRED_ACKS;
    else if (KV_STR(req->body, ProduceRequest, TransactionalId))
        x.refuse_all = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    if (!x.pw && acks == -1 && !x.refuse_all && !(x.pw = wait_new(b, c, req)))
        return REQ_CLOSE;
    kafka_value_t *resp = kv_new_struct(ra, req->api->response);
    int rc = resp ? api_each_partition(ra, req->body, resp, &tree, produce_partition, &x) : -1;
    if (x.pw && !x.answering && x.pw->pending > 0 && rc == 0) {
        /* The commitQ (docs/replication.md): answered when the HW passes
         * every partition (or the request's timeout does). */
        req->state = x.pw;
        req->state_free = produce_wait_free;
        req->pipelined = 1;   /* the connection's next Produce may be appended meanwhile */
        req->deadline_ms = loop_now_ms(b->loop) + (uint64_t)KV_INT(req->body, ProduceRequest, TimeoutMs);
        return REQ_WAIT;
    }
    if (x.pw && !x.answering)
        produce_wait_free(x.pw);
    if (rc < 0)
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
