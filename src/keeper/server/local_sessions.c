/* local_sessions.c -- ZooKeeper's local sessions (localSessionsEnabled,
 * ZooKeeper 3.5's ZOOKEEPER-1147): a session that lives on the member its
 * client connected to and nowhere else. Creating and closing one costs no
 * transaction and no quorum round; the member itself touches and expires
 * it (LocalSessionTracker). Its reads and writes work as any session's,
 * except an ephemeral create, which needs a session the whole ensemble
 * knows (the leader removes ephemerals when their session ends): with
 * localSessionsUpgradingEnabled the session is first upgraded to a global
 * one -- a createSession transaction for the same id, ahead of the create
 * (QuorumZooKeeperServer.checkUpgradeSession) -- and without it the create
 * fails as in ZooKeeper: prep answers EPHEMERALONLOCALSESSION for this
 * keeper's own local session and SESSIONEXPIRED for one it does not know
 * (a follower's, forwarded), and a follower answers its client's single
 * create EPHEMERALONLOCALSESSION whatever the leader said. Each takes a
 * zxid, as ZooKeeper's error transactions do.
 *
 * A local session is known only here: reopened on another member it is
 * unknown there (the leader answers a REVALIDATE of it invalid), so the
 * client learns its session expired, as with ZooKeeper; and a member that
 * leaves its role forgets its local sessions with its connections, as
 * ZooKeeper's member replaces its ZooKeeperServer and session tracker.
 * Read-only mode (readonly.c) makes its sessions local the same way.
 *
 * Unlike ZooKeeper 3.8, whose standalone server ignores the two keys, a
 * standalone kipper keeper honours them too
 * (docs/migrating-from-zookeeper.md). */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "base/logging.h"

#include <stdlib.h>

/* ---- creating and ending ---- */

session_t *local_session_open(keeper_t *k, client_conn_t *c, int32_t timeout)
{
    session_t *s = session_add(k->sessions, session_next_id(k->sessions), timeout, loop_now_ms(k->loop));
    if (!s) {
        client_close(c, "out of memory for a local session");
        return NULL;
    }
    s->local = 1;
    keeper_attach_session(c, s, timeout);
    keeper_send_connect_response(c, timeout, s->id, 1);
    log_debug("local session 0x%llx established for %s:%d, timeout %d ms", (unsigned long long)s->id, c->ip,
              c->port, timeout);
    return s;
}

void local_session_close(keeper_t *k, client_conn_t *c, int32_t xid)
{
    size_t start = reply_begin(&c->out, xid, tree_last_zxid(k->tree), ZOK);
    reply_finish(&c->out, start);
    client_queued(c);
    client_close_after_flush(c);
    session_remove(k->sessions, c->session_id);
}

typedef struct {
    int64_t *ids;
    size_t count, cap;
} id_list_t;

static void collect_local(session_t *s, void *arg)
{
    id_list_t *l = arg;
    if (!s->local)
        return;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        int64_t *ids = realloc(l->ids, cap * sizeof(*ids));
        if (!ids)
            return;   /* left for the next sweep, or for the restart */
        l->ids = ids;
        l->cap = cap;
    }
    l->ids[l->count++] = s->id;
}

/* Close each session's connection and forget the session. */
static void drop_sessions(keeper_t *k, id_list_t *l, const char *why)
{
    for (size_t i = 0; i < l->count; i++) {
        client_conn_t *c = keeper_client_of_session(k, l->ids[i]);
        if (c)
            client_close(c, why);
        session_remove(k->sessions, l->ids[i]);
    }
    free(l->ids);
}

void local_sessions_expire(keeper_t *k, uint64_t now_ms)
{
    id_list_t expired = {NULL, 0, 0};
    session_each_expired(k->sessions, now_ms, collect_local, &expired);
    drop_sessions(k, &expired, "local session expired");
}

void local_sessions_forget(keeper_t *k)
{
    id_list_t all = {NULL, 0, 0};
    session_each(k->sessions, collect_local, &all);
    if (all.count)
        log_info("forgetting %zu local sessions", all.count);
    drop_sessions(k, &all, "its local session ends with this keeper's role");
}

static void count_local(session_t *s, void *arg)
{
    *(size_t *)arg += s->local ? 1 : 0;
}

size_t local_sessions_count(keeper_t *k)
{
    size_t n = 0;
    session_each(k->sessions, count_local, &n);
    return n;
}

/* ---- requests ---- */

local_action_t local_session_action(int32_t type, int makes_ephemeral, int upgrading_enabled)
{
    if (type == OP_CLOSE_SESSION)
        return LOCAL_CLOSE;
    if (!makes_ephemeral)
        return LOCAL_AS_USUAL;
    return upgrading_enabled ? LOCAL_UPGRADE : LOCAL_REFUSE_EPHEMERAL;
}

/* The createSession that makes s global goes where this keeper's writes
 * go: to the leader from a follower, to the log and the quorum otherwise.
 * It is queued ahead of the request that needs it, so the quorum knows
 * the session before that request is prepared. */
static void upgrade(keeper_t *k, session_t *s)
{
    log_info("upgrading local session 0x%llx to a global session", (unsigned long long)s->id);
    s->local = 0;
    if (k->role == ROLE_FOLLOWING) {
        /* No connection waits for it: the entry is only there to be
         * matched by the createSession's COMMIT. */
        pending_t *p = pipeline_new(k, PENDING_CONNECT, NULL, 0, OP_CREATE_SESSION);
        p->has_txn = 0;
        p->hdr.client_id = s->id;
        follower_forward_create_session(k, s->id, s->timeout_ms);
        pipeline_follower_queue(k, p);
        return;
    }
    pending_t *p = pipeline_new(k, PENDING_SYSTEM, NULL, 0, OP_CREATE_SESSION);
    prep_create_session(k, s->id, s->timeout_ms, &p->hdr, &p->txn);
    pipeline_submit(k, p);
}

int local_session_request(keeper_t *k, client_conn_t *c, session_t *s, int32_t xid, int32_t type,
                          const uint8_t *frame, size_t len)
{
    int ephemeral = (type == OP_CREATE || type == OP_CREATE2 || type == OP_MULTI) &&
                    prep_makes_ephemeral(type, frame + 8, len - 8);
    switch (local_session_action(type, ephemeral, k->cfg.local_sessions_upgrading)) {
    case LOCAL_CLOSE:
        if (c->in_flight > 0)   /* answered in order, behind this connection's writes */
            request_queue_behind(k, c, xid, type, frame, len);
        else
            local_session_close(k, c, xid);
        return 1;
    case LOCAL_UPGRADE:
        upgrade(k, s);
        return 0;   /* the create itself goes on as any write */
    case LOCAL_REFUSE_EPHEMERAL:
        if (k->role != ROLE_FOLLOWING || type == OP_MULTI)
            return 0;   /* prep refuses it (EPHEMERALONLOCALSESSION here, SESSIONEXPIRED on a leader) */
        /* As ZooKeeper's follower, whose refusal does not stop the request:
         * it still goes to the leader, which fails it (the session is
         * unknown there), and the client is answered the refusal. */
        follower_forward(k, c, xid, type, frame + 8, len - 8)->err_override = ZEPHEMERALONLOCALSESSION;
        return 1;
    case LOCAL_AS_USUAL:
        break;
    }
    return 0;
}
