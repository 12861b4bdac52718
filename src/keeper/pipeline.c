/* pipeline.c -- requests between prep and reply (ZooKeeper's
 * SyncRequestProcessor + FinalRequestProcessor for one server).
 *
 * Every write is prepared on arrival and its transaction handed to the log;
 * the request then waits here, in arrival order, until the log reports its
 * zxid durable. Only then is it applied to the tree and answered, so no
 * client ever sees, or is told of, a change a crash could take back. A read
 * arriving while writes are in flight waits behind them, which keeps every
 * client's replies in the order of its requests. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "../base/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

pending_t *pipeline_new(keeper_t *k, pending_kind_t kind, conn_t *c, int32_t xid, int32_t type)
{
    pending_t *p = calloc(1, sizeof(*p));
    if (!p) {
        log_error("out of memory queueing a request");
        abort();
    }
    p->kind = kind;
    p->conn = c;
    p->xid = xid;
    p->type = type;
    p->has_txn = kind != PENDING_READ;
    p->started_ms = loop_now_ms(k->loop);
    return p;
}

void pipeline_keep_frame(pending_t *p, const uint8_t *frame, size_t len)
{
    p->frame = malloc(len ? len : 1);
    if (!p->frame) {
        log_error("out of memory queueing a request");
        abort();
    }
    memcpy(p->frame, frame, len);
    p->frame_len = len;
}

int pipeline_idle(const keeper_t *k)
{
    return k->pending_head == NULL;
}

void pipeline_submit(keeper_t *k, pending_t *p)
{
    if (p->has_txn) {
        if (txnlog_append(k->log, &p->hdr, &p->txn) < 0) {
            log_error("out of memory appending to the transaction log");
            abort();
        }
        persist_after_append(k);
    }
    if (k->pending_tail)
        k->pending_tail->next = p;
    else
        k->pending_head = p;
    k->pending_tail = p;
    k->npending++;
}

void pipeline_forget_conn(keeper_t *k, conn_t *c)
{
    for (pending_t *p = k->pending_head; p; p = p->next)
        if (p->conn == c)
            p->conn = NULL;
}

void keeper_commit(keeper_t *k, const txn_header_t *hdr, const txn_t *txn, txn_result_t *result)
{
    tree_apply(k->tree, hdr, txn, result);
    if (hdr->type == OP_CREATE_SESSION)
        session_add(k->sessions, hdr->client_id, txn->timeout, loop_now_ms(k->loop));
    else if (hdr->type == OP_CLOSE_SESSION)
        session_remove(k->sessions, hdr->client_id);
    prep_applied(k, hdr->zxid);
}

void keeper_close_session(keeper_t *k, int64_t session_id, const char *why)
{
    log_info("closing session 0x%llx: %s", (unsigned long long)session_id, why);
    pending_t *p = pipeline_new(k, PENDING_SYSTEM, NULL, 0, OP_CLOSE_SESSION);
    prep_close_session(k, session_id, &p->hdr, &p->txn);
    pipeline_submit(k, p);
}

static void free_pending(pending_t *p)
{
    if (p->has_txn)
        txn_free(&p->txn);
    free(p->frame);
    free(p);
}

/* The transaction of p is durable: apply it and answer. */
static void complete(keeper_t *k, pending_t *p)
{
    txn_result_t result;
    int64_t session_id = p->hdr.client_id;
    conn_t *owner = p->hdr.type == OP_CLOSE_SESSION ? keeper_conn_of_session(k, session_id) : NULL;
    keeper_commit(k, &p->hdr, &p->txn, &result);
    conn_t *c = p->conn;
    switch (p->kind) {
    case PENDING_WRITE:
    case PENDING_CLOSE_SESSION:
        if (c && !c->dead) {
            c->last_zxid = p->hdr.zxid;
            request_reply_write(c, p->xid, p->type, &p->hdr, &result);
            keeper_stats_record(k, c, loop_now_ms(k->loop) - p->started_ms);
            if (p->kind == PENDING_CLOSE_SESSION)
                conn_close_after_flush(c);
        }
        break;
    case PENDING_CONNECT:
        if (c && !c->dead)
            keeper_finish_connect(k, c, p->hdr.client_id, p->timeout, 1);
        break;
    case PENDING_SYSTEM:
        if (owner && p->hdr.type == OP_CLOSE_SESSION)
            conn_close(owner, "session expired");
        break;
    case PENDING_READ:
        break;
    }
    txn_result_free(&result);
}

/* The log refused p's transaction: tell whoever asked. */
static void refuse(keeper_t *k, pending_t *p)
{
    conn_t *c = p->conn;
    if (p->hdr.type == OP_CLOSE_SESSION) {
        /* The session lives on; expiry will try again. */
        session_t *s = session_find(k->sessions, p->hdr.client_id);
        if (s)
            s->closing = 0;
    }
    if (!c || c->dead)
        return;
    switch (p->kind) {
    case PENDING_WRITE:
    case PENDING_CLOSE_SESSION: {
        size_t start = reply_begin(&c->out, p->xid, tree_last_zxid(k->tree), ZSYSTEMERROR);
        reply_finish(&c->out, start);
        conn_queued(c);
        break;
    }
    case PENDING_CONNECT:
        keeper_finish_connect(k, c, p->hdr.client_id, p->timeout, 0);
        break;
    default:
        break;
    }
}

static void answer_read(keeper_t *k, pending_t *p)
{
    conn_t *c = p->conn;
    if (!c || c->dead)
        return;
    jute_in_t in;
    jute_in_init(&in, p->frame, p->frame_len);
    in.pos = 8;   /* past xid and type, checked on arrival */
    request_answer_read(k, c, p->xid, p->type, &in);
    keeper_stats_record(k, c, loop_now_ms(k->loop) - p->started_ms);
}

void pipeline_on_durable(void *arg, int64_t durable_zxid, int err, int64_t failed_zxid)
{
    keeper_t *k = arg;
    size_t refused = 0;
    while (k->pending_head) {
        pending_t *p = k->pending_head;
        if (p->has_txn) {
            if (err && p->hdr.zxid >= failed_zxid) {
                refuse(k, p);
                refused++;
            } else if (p->hdr.zxid <= durable_zxid) {
                complete(k, p);
            } else {
                break;   /* not durable yet: it and everything behind it wait */
            }
        } else {
            answer_read(k, p);
        }
        k->pending_head = p->next;
        if (!k->pending_head)
            k->pending_tail = NULL;
        k->npending--;
        free_pending(p);
    }
    if (err) {
        k->log_failures++;
        prep_rollback(k, failed_zxid);
        log_error("transaction log write failed from zxid 0x%llx: %s; refused %zu writes (reads go on)",
                  (unsigned long long)failed_zxid, strerror(err), refused);
    }
}
