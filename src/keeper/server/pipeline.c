/* pipeline.c -- requests between prep and reply (ZooKeeper's
 * SyncRequestProcessor + FinalRequestProcessor, and on a follower its
 * CommitProcessor).
 *
 * Every write is prepared on arrival and its transaction handed to the log;
 * the request then waits here, in arrival order, until its zxid is
 * committed: durable in this keeper's log when standalone, durable on a
 * quorum when leading (leader.c tells us). Only then is it applied to the
 * tree and answered, so no client ever sees, or is told of, a change a crash
 * could take back. A read arriving while its own connection has writes in
 * flight is queued behind them (request.c), which keeps every client's
 * replies in the order of its requests. On a follower the entries are
 * requests forwarded to the leader, answered once the leader's COMMIT is
 * applied here, each connection's in its order (docs/zab.md). */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "base/logging.h"
#include "base/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

pending_t *pipeline_new(keeper_t *k, pending_kind_t kind, client_conn_t *c, int32_t xid, int32_t type)
{
    pending_t *p = xcalloc(1, sizeof(*p));
    p->kind = kind;
    p->client = c;
    p->xid = xid;
    p->type = type;
    p->has_txn = kind != PENDING_READ && kind != PENDING_FORWARDED && kind != PENDING_LEARNER_SYNC &&
                 kind != PENDING_REVALIDATE;
    p->started_ms = loop_now_ms(k->loop);
    return p;
}

void pipeline_keep_frame(pending_t *p, const uint8_t *frame, size_t len)
{
    p->frame = xmalloc(len);
    memcpy(p->frame, frame, len);
    p->frame_len = len;
}

void pipeline_charge(keeper_t *k, pending_t *p, size_t frame_len)
{
    /* The entry itself counts too, so that many tiny requests add up. */
    p->charge = frame_len + sizeof(*p);
    k->outstanding++;
    k->outstanding_bytes += p->charge;
    if (p->client) {
        p->client->outstanding++;
        p->client->outstanding_bytes += p->charge;
    }
}

/* p leaves the pipeline: it no longer counts against the bounds. The
 * keeper's count covers requests of closed connections too, since their
 * transactions are held here until committed. */
static void discharge(keeper_t *k, pending_t *p)
{
    if (!p->charge)
        return;
    k->outstanding--;
    k->outstanding_bytes -= p->charge;
    client_conn_t *c = p->client;
    if (c && !c->dead) {
        c->outstanding--;
        c->outstanding_bytes -= p->charge;
        /* The client waited for us: a connection paused by the bounds
         * cannot deliver its pings, so each answer keeps its session alive
         * (as its request did when it arrived). */
        if (c->session_id) {
            session_touch(k->sessions, c->session_id, loop_now_ms(k->loop));
            follower_touch(k, c->session_id);
        }
    }
    p->charge = 0;
}

int pipeline_idle(const keeper_t *k)
{
    return k->pending_head == NULL;
}

void pipeline_submit(keeper_t *k, pending_t *p)
{
    if (p->has_txn) {
        if (txnlog_append(k->txnlog, &p->hdr, &p->txn) < 0) {
            log_error("out of memory appending to the transaction log");
            abort();
        }
        k->last_logged_zxid = p->hdr.zxid;
        if (k->role != ROLE_STANDALONE)
            history_add(&k->history, &p->hdr, &p->txn);
        if (k->role == ROLE_LEADING)
            leader_propose(k, &p->hdr);
        persist_after_append(k);
    }
    if (k->pending_tail)
        k->pending_tail->next = p;
    else
        k->pending_head = p;
    k->pending_tail = p;
    k->npending++;
}

void pipeline_forget_client(keeper_t *k, client_conn_t *c)
{
    for (pending_t *p = k->pending_head; p; p = p->next)
        if (p->client == c)
            p->client = NULL;
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
    if (p->has_result)
        txn_result_free(&p->result);
    free(p->frame);
    free(p);
}

/* The transaction of p is durable: apply it and answer. */
static void complete(keeper_t *k, pending_t *p)
{
    txn_result_t result;
    int64_t session_id = p->hdr.client_id;
    client_conn_t *owner = p->hdr.type == OP_CLOSE_SESSION ? keeper_client_of_session(k, session_id) : NULL;
    keeper_commit(k, &p->hdr, &p->txn, &result);
    client_conn_t *c = p->client;
    switch (p->kind) {
    case PENDING_WRITE:
    case PENDING_CLOSE_SESSION:
        if (c && !c->dead) {
            c->last_zxid = p->hdr.zxid;
            request_reply_write(c, p->xid, p->type, &p->hdr, &result);
            keeper_stats_record(k, c, loop_now_ms(k->loop) - p->started_ms);
            if (p->kind == PENDING_CLOSE_SESSION)
                client_close_after_flush(c);
        }
        break;
    case PENDING_CONNECT:
        if (c && !c->dead)
            keeper_finish_connect(k, c, p->hdr.client_id, p->timeout, 1);
        break;
    case PENDING_SYSTEM:
    case PENDING_REMOTE:
        if (owner && p->hdr.type == OP_CLOSE_SESSION)
            client_close(owner, p->kind == PENDING_SYSTEM ? "session expired" : "session closed");
        break;
    default:
        break;
    }
    txn_result_free(&result);
}

/* The log refused p's transaction: tell whoever asked. */
static void refuse(keeper_t *k, pending_t *p)
{
    client_conn_t *c = p->client;
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
        client_queued(c);
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
    client_conn_t *c = p->client;
    if (!c || c->dead)
        return;
    jute_in_t in;
    jute_in_init(&in, p->frame, p->frame_len);
    in.pos = 8;   /* past xid and type, checked on arrival */
    request_answer_read(k, c, p->xid, p->type, &in);
    keeper_stats_record(k, c, loop_now_ms(k->loop) - p->started_ms);
}

/* p leaves the pipeline: its connection has one request less queued. */
static void release(pending_t *p)
{
    if (p->client && p->client->in_flight)
        p->client->in_flight--;
}

/* The head of the pipeline has been answered: remove and free it. */
static void drop_head(keeper_t *k)
{
    pending_t *p = k->pending_head;
    release(p);
    discharge(k, p);
    k->pending_head = p->next;
    if (!k->pending_head)
        k->pending_tail = NULL;
    k->npending--;
    free_pending(p);
}

/* Answer or apply, in order, everything up to zxid (committed: durable
 * here when standalone, acknowledged by a quorum when leading). */
void pipeline_commit_upto(keeper_t *k, int64_t zxid)
{
    while (k->pending_head) {
        pending_t *p = k->pending_head;
        if (p->has_txn) {
            if (p->hdr.zxid > zxid)
                break;   /* not committed yet: it and everything behind it wait */
            complete(k, p);
        } else if (p->kind == PENDING_LEARNER_SYNC) {
            leader_answer_sync(k, p->learner_sid);
        } else {
            answer_read(k, p);
        }
        drop_head(k);
    }
}

static void refuse_all(keeper_t *k, int err, int64_t failed_zxid)
{
    size_t refused = 0;
    while (k->pending_head) {
        pending_t *p = k->pending_head;
        if (p->has_txn) {
            refuse(k, p);
            refused++;
        } else if (p->kind == PENDING_READ) {
            answer_read(k, p);
        }
        drop_head(k);
    }
    k->txnlog_failures++;
    prep_rollback(k, failed_zxid);
    k->last_logged_zxid = failed_zxid - 1;
    history_truncate_after(&k->history, failed_zxid - 1);
    log_error("transaction log write failed from zxid 0x%llx: %s; refused %zu writes (reads go on)",
              (unsigned long long)failed_zxid, strerror(err), refused);
}

void pipeline_on_durable(void *arg, int64_t durable_zxid, int err, int64_t failed_zxid)
{
    keeper_t *k = arg;
    switch (k->role) {
    case ROLE_STANDALONE:
        pipeline_commit_upto(k, err ? failed_zxid - 1 : durable_zxid);
        if (err)
            refuse_all(k, err, failed_zxid);
        return;
    case ROLE_LEADING:
        if (!err) {
            leader_on_durable(k, durable_zxid);
            return;
        }
        break;
    case ROLE_FOLLOWING:
        if (!err) {
            follower_on_durable(k, durable_zxid);
            return;
        }
        break;
    case ROLE_LOOKING:
        if (!err)
            return;
        break;
    }
    /* In an ensemble a keeper that cannot log cannot vouch for anything,
     * and its tree may already hold committed txns its log lost: going
     * back to LOOKING would rejoin at once with that tree, fail again on
     * the same disk, and so on without pause (and a DIFF from the log's
     * last zxid would apply txns the tree has twice). It stops instead;
     * the others go on without it, and a restart once the disk is healthy
     * recovers from what the disk holds and rejoins. */
    refuse_all(k, err, failed_zxid);
    log_error("the transaction log failed in an ensemble: stopping this member (restart it once the disk is "
              "healthy; it recovers from its files and rejoins)");
    k->exit_status = 1;
    k->stopping = 1;
    loop_stop(k->loop);
}

/* ---- the follower: requests answered by the leader ---- */

/* Send what can go, in each connection's order: an entry is answered once
 * every earlier entry of its connection has been. */
static void follower_flush(keeper_t *k)
{
    uint64_t walk = ++k->reply_walks;
    pending_t **pp = &k->pending_head, *prev = NULL;
    while (*pp) {
        pending_t *p = *pp;
        client_conn_t *c = p->client;
        int ready = p->kind == PENDING_READ || p->done;
        if (c && !c->dead && c->walk_mark == walk)
            ready = 0;   /* an earlier entry of this connection still waits */
        if (!ready) {
            if (c)
                c->walk_mark = walk;
            prev = p;
            pp = &p->next;
            continue;
        }
        if (c && !c->dead) {
            if (p->kind == PENDING_READ) {
                answer_read(k, p);
            } else if (p->kind == PENDING_CONNECT) {
                keeper_finish_connect(k, c, p->hdr.client_id, p->timeout, p->has_result && p->result.err == ZOK);
            } else if (p->kind == PENDING_REVALIDATE) {
                keeper_finish_reopen(k, c, p->hdr.client_id, p->timeout, p->valid);
            } else {
                if (p->err_override) {
                    size_t start = reply_begin(&c->out, p->xid, p->hdr.zxid, p->err_override);
                    reply_finish(&c->out, start);
                    client_queued(c);
                } else if (p->has_result)
                    request_reply_write(c, p->xid, p->type, &p->hdr, &p->result);
                else {   /* a sync */
                    size_t start = reply_begin(&c->out, p->xid, tree_last_zxid(k->tree), ZOK);
                    jute_put_string(&c->out, p->frame ? (const char *)p->frame : "/");
                    reply_finish(&c->out, start);
                    client_queued(c);
                }
                keeper_stats_record(k, c, loop_now_ms(k->loop) - p->started_ms);
                if (p->type == OP_CLOSE_SESSION)
                    client_close_after_flush(c);
            }
            if (p->kind != PENDING_READ && c->in_flight)
                c->in_flight--;
        }
        discharge(k, p);
        *pp = p->next;
        if (k->pending_tail == p)
            k->pending_tail = prev;
        k->npending--;
        free_pending(p);
    }
}

/* ---- the follower's entries waiting for a commit, by session ----
 *
 * A commit is matched to the entry it answers by its session and cxid (a
 * createSession by its session alone). Each session's entries are kept in
 * a queue of their own, in the pipeline's order, so that matching looks at
 * that session's entries only: a scan of the whole pipeline per commit
 * cost O(requests in flight), and most commits in an ensemble are other
 * members' clients', which match nothing here. */

typedef struct {
    hmap_node_t node;
    int64_t session_id;
    pending_t *head, *tail;
} session_queue_t;

/* Everything forwarded but a sync (answered by SYNC, not a commit), and
 * createSessions (PENDING_CONNECT, of type OP_CREATE_SESSION). */
static int awaits_commit(const pending_t *p)
{
    return p->kind != PENDING_READ && p->kind != PENDING_REVALIDATE && p->type != OP_SYNC;
}

static int session_queue_is(const hmap_node_t *node, const void *key)
{
    return HMAP_ENTRY(node, session_queue_t, node)->session_id == *(const int64_t *)key;
}

static session_queue_t *session_queue_of(const keeper_t *k, int64_t session_id)
{
    hmap_node_t *n = hmap_find(&k->awaiting_commit, hmap_hash_u64((uint64_t)session_id), session_queue_is, &session_id);
    return n ? HMAP_ENTRY(n, session_queue_t, node) : NULL;
}

static void await_commit(keeper_t *k, pending_t *p)
{
    session_queue_t *q = session_queue_of(k, p->hdr.client_id);
    if (!q) {
        q = xcalloc(1, sizeof(*q));
        q->session_id = p->hdr.client_id;
        hmap_insert(&k->awaiting_commit, &q->node, hmap_hash_u64((uint64_t)q->session_id));
    }
    p->session_next = NULL;
    if (q->tail)
        q->tail->session_next = p;
    else
        q->head = p;
    q->tail = p;
}

/* The entry of hdr's session that hdr answers, taken out of its queue; NULL
 * when none here waits for it. */
static pending_t *take_awaiting(keeper_t *k, const txn_header_t *hdr)
{
    session_queue_t *q = session_queue_of(k, hdr->client_id);
    if (!q)
        return NULL;
    pending_t *prev = NULL;
    for (pending_t *p = q->head; p; prev = p, p = p->session_next) {
        int match = p->kind == PENDING_CONNECT ? hdr->type == OP_CREATE_SESSION : p->xid == hdr->cxid;
        if (!match)
            continue;
        if (prev)
            prev->session_next = p->session_next;
        else
            q->head = p->session_next;
        if (q->tail == p)
            q->tail = prev;
        if (!q->head) {
            hmap_remove(&k->awaiting_commit, &q->node);
            free(q);
        }
        return p;
    }
    return NULL;
}

void pipeline_free_index(keeper_t *k)
{
    hmap_iter_t it = hmap_iter(&k->awaiting_commit);
    hmap_node_t *n;
    while ((n = hmap_next(&it)) != NULL) {
        hmap_remove(&k->awaiting_commit, n);
        free(HMAP_ENTRY(n, session_queue_t, node));
    }
    hmap_destroy(&k->awaiting_commit);
}

void pipeline_follower_applied(keeper_t *k, const txn_header_t *hdr, const txn_result_t *result)
{
    pending_t *p = take_awaiting(k, hdr);
    if (p) {
        p->done = 1;
        p->hdr = *hdr;         /* its zxid goes in the reply header, as ZooKeeper's */
        p->has_result = 1;
        p->result = *result;   /* the entry owns the result now */
        /* A closeSession is answered before its connection is closed. */
        if (k->replies_held && hdr->type != OP_CLOSE_SESSION)
            k->replies_owed = 1;
        else
            follower_flush(k);
        return;
    }
    txn_result_t copy = *result;
    txn_result_free(&copy);   /* nobody here asked for it */
}

/* A pass over the pipeline costs one step per request in it, so a pass per
 * applied txn made a read of many COMMITs quadratic: a fifth of a
 * follower's CPU with 960 requests in flight. */
void pipeline_follower_hold(keeper_t *k)
{
    k->replies_held++;
}

void pipeline_follower_send_owed(keeper_t *k)
{
    if (!k->replies_owed)
        return;
    k->replies_owed = 0;
    follower_flush(k);
}

void pipeline_follower_release(keeper_t *k)
{
    if (k->replies_held > 0 && --k->replies_held == 0)
        pipeline_follower_send_owed(k);
}

void pipeline_follower_synced(keeper_t *k)
{
    for (pending_t *p = k->pending_head; p; p = p->next)
        if (p->kind == PENDING_FORWARDED && p->type == OP_SYNC && !p->done) {
            p->done = 1;
            break;
        }
    follower_flush(k);
}

int pipeline_follower_revalidated(keeper_t *k, int64_t session_id, int valid)
{
    for (pending_t *p = k->pending_head; p; p = p->next)
        if (p->kind == PENDING_REVALIDATE && !p->done && p->hdr.client_id == session_id) {
            p->done = 1;
            p->valid = valid;
            follower_flush(k);
            return 0;
        }
    return -1;
}

void pipeline_follower_queue(keeper_t *k, pending_t *p)
{
    if (k->pending_tail)
        k->pending_tail->next = p;
    else
        k->pending_head = p;
    k->pending_tail = p;
    k->npending++;
    if (awaits_commit(p))
        await_commit(k, p);
    if (p->kind == PENDING_READ)
        follower_flush(k);
}

void pipeline_abandon(keeper_t *k)
{
    while (k->pending_head) {
        pending_t *p = k->pending_head;
        k->pending_head = p->next;
        k->npending--;
        discharge(k, p);
        if (p->has_txn) {   /* logged, maybe proposed, never applied */
            p->next = NULL;
            p->kind = PENDING_SYSTEM;
            p->client = NULL;
            if (k->unapplied_tail)
                k->unapplied_tail->next = p;
            else
                k->unapplied_head = p;
            k->unapplied_tail = p;
            continue;
        }
        free_pending(p);
    }
    k->pending_tail = NULL;
    pipeline_free_index(k);
    changes_drop_newest(&k->changes, 0);
}

void pipeline_free_entry(pending_t *p)
{
    free_pending(p);
}
