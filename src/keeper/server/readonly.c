/* readonly.c -- ZooKeeper's read-only mode (readonlymode.enabled): what its
 * QuorumPeer does in LOOKING with a ReadOnlyZooKeeperServer. A member that
 * has looked for a leader longer than a grace period (it is cut off from a
 * quorum) serves the clients that allow read-only from the tree as it was
 * last applied: reads and watches work, every write and sync is answered
 * NOTREADONLY (ReadOnlyRequestProcessor), and the ConnectResponse says
 * readOnly=true so the client polls the other members with `isro` and moves
 * once one answers `rw`. Sessions made here are local (local_sessions.c):
 * in memory only, never logged, expired here. Joining a
 * quorum ends the mode: every connection closes and the local sessions are
 * forgotten (ReadOnlyZooKeeperServer.shutdownComponents closes all
 * connections too), so the clients reconnect to a read-write keeper.
 *
 * Differences from ZooKeeper 3.8, on purpose (docs/migrating-from-zookeeper.md):
 * new sessions are local whether or not localSessionsEnabled is set (3.8
 * answers a non-local createSession with NOTREADONLY in place of a
 * ConnectResponse, which no client can read), and a session of the ensemble
 * this keeper knows may reconnect read-only (3.8 closes such a connection
 * since ZOOKEEPER-3863; 3.4 to 3.6 accepted it). Such a session is only
 * touched here: this keeper has no authority to expire it or change it. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "base/logging.h"

/* ---- entering and leaving ---- */

uint64_t readonly_grace_ms(int tick_ms)
{
    return tick_ms > 2000 ? (uint64_t)tick_ms : 2000u;
}

static void on_grace_over(loop_t *loop, void *arg)
{
    (void)loop;
    keeper_t *k = arg;
    k->read_only_timer = NULL;
    if (k->role != ROLE_LOOKING || k->read_only)
        return;
    k->read_only = 1;
    log_warn("no quorum for %llu ms: serving read-only clients from zxid 0x%llx (readonlymode.enabled)",
             (unsigned long long)readonly_grace_ms(k->cfg.tick_time), (unsigned long long)tree_last_zxid(k->tree));
}

void readonly_on_looking(keeper_t *k)
{
    if (!k->cfg.read_only_mode_enabled || k->read_only || k->read_only_timer)
        return;
    k->read_only_timer = loop_timer_add(k->loop, readonly_grace_ms(k->cfg.tick_time), on_grace_over, k);
}

void readonly_stop(keeper_t *k)
{
    if (k->read_only_timer)
        loop_timer_cancel(k->loop, k->read_only_timer);
    k->read_only_timer = NULL;
    if (!k->read_only)
        return;
    k->read_only = 0;
    log_info("leaving read-only mode: closing its %zu connections", k->nclients);
    while (k->clients)
        client_close(k->clients, "this keeper leaves read-only mode");
    local_sessions_forget(k);
}

/* ---- sessions ---- */

void readonly_connect(keeper_t *k, client_conn_t *c, int64_t session_id, int passwd_ok, int32_t timeout)
{
    uint64_t now = loop_now_ms(k->loop);
    if (session_id == 0) {
        local_session_open(k, c, timeout);
        return;
    }
    session_t *s = session_find(k->sessions, session_id);
    if (!passwd_ok || (s && s->closing)) {
        keeper_send_connect_response(c, 0, 0, 0);
        client_close_after_flush(c);
        return;
    }
    if (!s) {
        /* It may live in a quorum this keeper is cut off from: hang up, so
         * the client tries another member and keeps its session. */
        client_close(c, "read-only: session unknown here, it may live on the quorum");
        return;
    }
    session_touch(k->sessions, session_id, now);
    keeper_attach_session(c, s, timeout);
    keeper_send_connect_response(c, timeout, session_id, 1);
}

/* ---- requests ---- */

int readonly_refuses(int32_t type, int local_session)
{
    if (type == OP_CLOSE_SESSION)
        return !local_session;
    return type == OP_SYNC || request_is_write(type);
}

static void reply_header(keeper_t *k, client_conn_t *c, int32_t xid, int32_t err)
{
    size_t start = reply_begin(&c->out, xid, tree_last_zxid(k->tree), err);
    reply_finish(&c->out, start);
    client_queued(c);
}

void readonly_request(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, jute_in_t *in)
{
    session_t *s = session_find(k->sessions, c->session_id);
    int local = s && s->local;
    if (readonly_refuses(type, local)) {
        reply_header(k, c, xid, ZNOTREADONLY);
        return;
    }
    if (type == OP_CLOSE_SESSION) {   /* a local session ends here and now */
        local_session_close(k, c, xid);
        return;
    }
    uint64_t started = loop_now_ms(k->loop);
    request_answer_read(k, c, xid, type, in);
    keeper_stats_record(k, c, loop_now_ms(k->loop) - started);
}
