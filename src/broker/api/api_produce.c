/* api_produce.c -- Produce: each partition's record batches go to its
 * leader replica's log as they came (offsets and leader epoch set in
 * place), once records_validate (broker/log/batch_validate.h) has checked
 * them as Kafka's LogValidator does. Produce v0-v2 may carry message sets of
 * magic 0/1 instead, up-converted to one v2 batch (message_convert.h); v3
 * and later must carry one v2 batch. acks=0 gets no answer, as in Kafka;
 * acks=1 is answered once appended; acks=all (-1) is refused before the
 * append when the ISR is below min.insync.replicas, and otherwise waits on
 * the partitions' commitQs until the HW has passed what it appended
 * (docs/replication.md).
 *
 * Small uncompressed records are checked on the loop at once, and small
 * compressed ones too when they decompress to a few kilobytes. A request
 * with more (many records, or compressed ones that decompress to more) is
 * checked on the helper thread first (broker/core/records_check.h): it
 * waits, holding its connection's later frames, and appends in request
 * order once every partition's verdict is in. So one request runs in up
 * to three phases: checking, appending, and (acks=all) answering once
 * replicated. */
#define _GNU_SOURCE
#include "broker/core/broker_impl.h"
#include "api_handlers.h"
#include "api_util.h"
#include "broker/core/records_check.h"
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
    const char *message;      /* static, this result's why, or NULL */
    int32_t err_batch;        /* -1: none */
    int64_t base, append_time, log_start;
    char why[256];            /* a message of this partition's own */
} produce_result_t;

/* A request that waits (for its records' check, or acks=all for its
 * partitions' commitQs): one slot per partition of the request, in request
 * order. The waiters are part of the slots, so queueing allocates nothing
 * more. */
typedef struct produce_wait produce_wait_t;
typedef struct {
    produce_result_t res;
    commit_waiter_t w;
    int waiting;              /* on a commitQ */
    int refused;              /* res was settled before the check */
    produce_wait_t *pw;
} produce_slot_t;

struct produce_wait {
    broker_t *b;
    uint64_t conn_id, request_id;
    int checking;             /* the records are checked before anything is appended */
    records_check_t *check;   /* ... on the loop or the helper thread; NULL while waiting for room */
    int pending;              /* slots still waiting on a commitQ */
    int nslots;
    produce_slot_t slots[];
};

/* What a run of the handler does with each partition. */
typedef enum {
    PRODUCE_NOW,      /* check on the loop, append, answer (or wait for the commitQ) */
    PRODUCE_SETTLE,   /* refuse what can be refused, hand the rest to the check */
    PRODUCE_APPEND,   /* the check is done: append with its verdicts */
    PRODUCE_ANSWER    /* appended, replicated or timed out: answer from the slots */
} produce_mode_t;

typedef struct {
    broker_t *b;
    conn_t *conn;
    int16_t version, acks;
    kafka_arena_t *ra;
    int16_t refuse_all;       /* an error for every partition (bad acks, transactions) */
    int16_t first_error;      /* of any partition */
    produce_wait_t *pw;       /* the slots, when the request may wait */
    records_check_t *check;   /* PRODUCE_SETTLE: the job being filled */
    shared_bytes_t *frame_mem;   /* ... from the request's frame (broker_request_t) */
    int added;                /* ... with this many partitions' records */
    produce_mode_t mode;
    int slot;                 /* the partition being handled, in request order */
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
    records_check_release(pw->check);
    free(pw);
}

/* Refused before anything is appended: the request's shape or the ISR. */
static int16_t refuse_before_append(const produce_ctx_t *x, replica_t *r, const kafka_value_t *records,
                                    const char **message)
{
    int nbatches = records->is_null ? 0 : count_batches(records->u.b, records->n);
    /* Message sets of magic 0/1 (Produce v0-v2 from Kafka 0.8-0.10 clients)
     * are up-converted by records_validate; their entries split as batches do. */
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

/* The replica that may take these records now, or NULL with res saying why
 * not (or nothing to append). */
static replica_t *ready_to_append(produce_ctx_t *x, const char *topic, int32_t index, const kafka_value_t *records,
                                  produce_result_t *res)
{
    *res = (produce_result_t){.err_batch = -1, .base = -1, .append_time = -1, .log_start = -1};
    if (x->refuse_all) {
        res->error = x->refuse_all;
        return NULL;
    }
    replica_t *r = api_leader_replica(x->b, topic, index, -1, &res->error);
    if (!r)
        return NULL;
    res->log_start = partition_log_start_offset(r->log);
    res->error = refuse_before_append(x, r, records, &res->message);
    return res->error || records->is_null || records->n == 0 ? NULL : r;
}

/* Check (unless v has the verdict already) and append one partition's
 * records. */
static void produce_one(produce_ctx_t *x, const char *topic, int32_t index, const kafka_value_t *records,
                        produce_result_t *res, const records_verdict_t *v)
{
    replica_t *r = ready_to_append(x, topic, index, records, res);
    if (!r)
        return;
    /* The frame is our own input buffer: batches are patched in place. */
    uint8_t *p = (uint8_t *)(uintptr_t)records->u.b;
    records_verdict_t local;
    if (!v) {
        records_limits_t lim;
        replica_records_limits(x->b, r->part->topic, &lim);
        records_validate(p, records->n, &lim, &local);
        v = &local;
    }
    append_info_t info = {.first_offset = -1, .last_offset = -1};
    const char *message;
    res->error = replica_append(x->b, r, p, records->n, v, &res->err_batch, &info, &res->append_time, &message);
    if (message) {
        snprintf(res->why, sizeof(res->why), "%s", message);
        res->message = res->why;
    }
    if (v == &local)
        records_verdict_release(&local);
    if (res->error)
        return;
    res->base = info.first_offset;
    if (x->acks == -1)
        await_commit(x, r, res, &info);
}

/* Before the check: a partition that would be refused is settled now (and
 * stays refused, whatever changes meanwhile); the others' records go to
 * the check. */
static void settle_one(produce_ctx_t *x, const char *topic, const kafka_value_t *in)
{
    produce_slot_t *s = &x->pw->slots[x->slot];
    const kafka_value_t *records = KV_GET(in, PartitionProduceData, Records);
    replica_t *r = ready_to_append(x, topic, (int32_t)KV_INT(in, PartitionProduceData, Index), records, &s->res);
    s->refused = s->res.error != KERR_NONE;
    if (!r)
        return;
    records_limits_t lim;
    replica_records_limits(x->b, r->part->topic, &lim);
    records_check_add(x->check, x->slot, records->u.b, records->n, &lim, x->frame_mem);
    x->added++;
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
    uint64_t held;
    if (res->error && res->error != KERR_NOT_LEADER_OR_FOLLOWER && res->error != KERR_UNKNOWN_TOPIC_OR_PARTITION &&
        x->mode != PRODUCE_ANSWER && ratelimit_allow(&x->b->refused_produce_log, loop_now_ms(x->b->loop), &held))
        log_info("produce to %s-%d refused: error %d%s%s (%llu more refused since the last line)", topic, (int)index,
                 res->error, res->message ? ": " : "", res->message ? res->message : "", (unsigned long long)held);
}

static void produce_partition(void *arg, const char *topic, const kafka_value_t *in, kafka_value_t *out)
{
    produce_ctx_t *x = arg;
    int32_t index = (int32_t)KV_INT(in, PartitionProduceData, Index);
    const kafka_value_t *records = KV_GET(in, PartitionProduceData, Records);
    produce_slot_t *s = x->pw ? &x->pw->slots[x->slot] : NULL;
    produce_result_t local, *res = s ? &s->res : &local;
    switch (x->mode) {
    case PRODUCE_NOW:
        produce_one(x, topic, index, records, res, NULL);
        break;
    case PRODUCE_APPEND:
        if (!s->refused)
            produce_one(x, topic, index, records, res, records_check_verdict(x->pw->check, x->slot));
        break;
    default:
        if (s->waiting)
            res->error = KERR_REQUEST_TIMED_OUT;   /* the request's own timeout passed first */
        break;
    }
    answer_one(x, topic, index, out, res);
    x->slot++;
}

/* Every partition of the request in order, without building an answer. */
static void each_partition(produce_ctx_t *x, const kafka_value_t *body,
                           void (*fn)(produce_ctx_t *, const char *, const kafka_value_t *))
{
    const kafka_value_t *topics = KV_GET(body, ProduceRequest, TopicData);
    x->slot = 0;
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        const kafka_value_t *parts = KV_GET(t, TopicProduceData, PartitionData);
        for (uint32_t k = 0; k < parts->n; k++, x->slot++)
            fn(x, KV_STR(t, TopicProduceData, Name), kv_at(parts, k));
    }
}

static int count_partitions(const kafka_value_t *body)
{
    const kafka_value_t *topics = KV_GET(body, ProduceRequest, TopicData);
    int n = 0;
    for (uint32_t i = 0; i < topics->n; i++)
        n += (int)KV_GET(kv_at(topics, i), TopicProduceData, PartitionData)->n;
    return n;
}

/* Whether the request's records are checked on the helper thread: any of
 * them compressed, or more than the loop walks at once. */
static int wants_check(const kafka_value_t *body)
{
    const kafka_value_t *topics = KV_GET(body, ProduceRequest, TopicData);
    size_t total = 0;
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *parts = KV_GET(kv_at(topics, i), TopicProduceData, PartitionData);
        for (uint32_t k = 0; k < parts->n; k++) {
            const kafka_value_t *rec = KV_GET(kv_at(parts, k), PartitionProduceData, Records);
            if (rec->is_null)
                continue;
            total += rec->n;
            if (total > RECORDS_CHECK_INLINE_BYTES || records_check_wanted(rec->u.b, rec->n))
                return 1;
        }
    }
    return 0;
}

/* Slots for every partition, owned by the request from here on. */
static produce_wait_t *wait_new(broker_t *b, conn_t *c, broker_request_t *req)
{
    int n = count_partitions(req->body);
    produce_wait_t *pw = calloc(1, sizeof(*pw) + sizeof(produce_slot_t) * (size_t)(n ? n : 1));
    if (!pw)
        return NULL;
    *pw = (produce_wait_t){.b = b, .conn_id = c->id, .request_id = req->id, .nslots = n};
    return pw;
}

/* Settle the partitions and check the rest: first on the loop when
 * try_here (records_check_try_here), else, or when that cannot, on the
 * helper thread. REQ_WAIT until the thread is done (or there is room for
 * it), or REQ_DONE when nothing is left to check and the append can run
 * now. */
static req_status_t submit_check(produce_ctx_t *x, broker_request_t *req, int try_here)
{
    produce_wait_t *pw = x->pw;
    x->mode = PRODUCE_SETTLE;
    x->check = records_check_new(pw->nslots);
    x->frame_mem = req->frame_mem;
    x->added = 0;
    each_partition(x, req->body, settle_one);
    if (!x->added) {
        records_check_release(x->check);
        return REQ_DONE;
    }
    uint64_t now = loop_now_ms(x->b->loop);
    if (try_here && now >= x->conn->check_here_after_ms) {
        if (records_check_try_here(x->check)) {
            pw->check = x->check;
            return REQ_DONE;
        }
        x->conn->check_here_after_ms = now + RECORDS_CHECK_HERE_PAUSE_MS;
    }
    int rc = records_check_submit(x->b, x->check, pw->conn_id, pw->request_id);
    if (rc < 0)
        return REQ_CLOSE;
    pw->check = rc > 0 ? x->check : NULL;
    return REQ_WAIT;
}

/* The first run: straight to the append, or first the check. */
static req_status_t first_run(produce_ctx_t *x, conn_t *c, broker_request_t *req)
{
    int check = !x->refuse_all && wants_check(req->body);
    x->mode = PRODUCE_NOW;
    if (!check && x->acks != -1)
        return REQ_DONE;
    if (!(x->pw = wait_new(x->b, c, req)))
        return REQ_CLOSE;
    req->state = x->pw;
    req->state_free = produce_wait_free;
    if (x->acks == -1)
        req->deadline_ms = loop_now_ms(x->b->loop) + (uint64_t)KV_INT(req->body, ProduceRequest, TimeoutMs);
    if (!check)
        return REQ_DONE;
    x->pw->checking = 1;
    req_status_t st = submit_check(x, req, 1);
    if (st == REQ_DONE)
        x->mode = PRODUCE_APPEND;
    return st;
}

/* A later run while checking: REQ_DONE once the verdicts are in. */
static req_status_t check_run(produce_ctx_t *x, broker_request_t *req)
{
    if (!x->pw->check) {
        /* Woken because the helper thread has room again. */
        req_status_t st = submit_check(x, req, 0);   /* tried on the loop when it first ran */
        if (st != REQ_DONE)
            return st;
    } else if (!records_check_finished(x->pw->check)) {
        return REQ_WAIT;   /* the request's timeout: it counts once appended */
    }
    x->mode = PRODUCE_APPEND;
    return REQ_DONE;
}

/* After the append: REQ_WAIT while acks=all partitions wait for their
 * commitQs and the request's timeout has not passed; REQ_DONE to answer,
 * from the slots (PRODUCE_ANSWER) when the timeout passed while the records
 * were checked. */
static req_status_t after_append(produce_ctx_t *x, broker_request_t *req)
{
    produce_wait_t *pw = x->pw;
    if (pw && x->mode == PRODUCE_APPEND) {
        pw->checking = 0;
        records_check_release(pw->check);   /* the verdicts' messages were copied */
        pw->check = NULL;
    }
    if (!pw || pw->pending == 0)
        return REQ_DONE;
    if (!req->timed_out) {
        /* The commitQ (docs/replication.md): answered when the HW passes
         * every partition (or the request's timeout does). */
        req->pipelined = 1;   /* the connection's next Produce may be appended meanwhile */
        return REQ_WAIT;
    }
    x->mode = PRODUCE_ANSWER;
    return REQ_DONE;
}

/* The answer, one partition at a time (which does the mode's work). */
static int walk(produce_ctx_t *x, broker_request_t *req, kafka_value_t **resp)
{
    static const api_tree_t tree = {
        KV_REF(ProduceRequest, TopicData), KV_REF(TopicProduceData, Name),
        KV_REF(TopicProduceData, PartitionData), KV_REF(ProduceResponse, Responses),
        KV_REF(TopicProduceResponse, Name), KV_REF(TopicProduceResponse, PartitionResponses),
    };
    x->slot = 0;
    *resp = kv_new_struct(x->ra, req->api->response);
    return *resp ? api_each_partition(x->ra, req->body, *resp, &tree, produce_partition, x) : -1;
}

req_status_t api_produce(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    int16_t acks = (int16_t)KV_INT(req->body, ProduceRequest, Acks);
    produce_ctx_t x = {.b = b, .conn = c, .version = req->api_version, .acks = acks, .ra = ra, .pw = req->state,
                       .mode = PRODUCE_ANSWER};
    if (acks != 0 && acks != 1 && acks != -1)
        x.refuse_all = KERR_INVALID_REQUIRED_ACKS;
    else if (KV_STR(req->body, ProduceRequest, TransactionalId))
        x.refuse_all = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    req_status_t st = !x.pw ? first_run(&x, c, req) : x.pw->checking ? check_run(&x, req) : REQ_DONE;
    if (st != REQ_DONE)
        return st;
    kafka_value_t *resp;
    int rc = walk(&x, req, &resp);
    if (rc == 0 && x.mode != PRODUCE_ANSWER) {
        if (after_append(&x, req) == REQ_WAIT)
            return REQ_WAIT;
        if (x.mode == PRODUCE_ANSWER)
            rc = walk(&x, req, &resp);
    }
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
