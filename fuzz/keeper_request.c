/* keeper_request.c -- a connected ZooKeeper client's request frames, as a
 * standalone keeper decodes and serves them.
 *
 * Input: what a client sends after its ConnectRequest, frames of
 * [int32 length][xid][type][request record], each bounded by jute.maxbuffer
 * (the keeper's default, 0xfffff) as server.c bounds them. A keeper with a
 * fresh tree (/, /zookeeper, its quota and config nodes) and one session
 * serves them in order, as request.c does for a standalone keeper, except
 * that a write's transaction does not go to a log: it is prepared
 * (prep_write, ZooKeeper's PrepRequestProcessor), written and read back as
 * the transaction log would hold it, committed (keeper_commit: the tree, the
 * sessions, the change records) and answered (request_reply_write) at once.
 * Reads, auth, SASL, watches and unknown types go through request_handle
 * unchanged. Replies are dropped after each frame, as a client reading them
 * would leave the output empty.
 *
 * Oracle beyond the sanitizers: a prepared transaction must serialize, parse
 * back and serialize again to the same bytes, or the keeper would log what
 * it cannot restore. */
#include "fuzz.h"

#include "base/buf.h"
#include "base/clock.h"
#include "base/endian.h"
#include "base/loop.h"
#include "keeper/data/acl.h"
#include "keeper/data/jute.h"
#include "keeper/data/session.h"
#include "keeper/data/tree.h"
#include "keeper/data/txn.h"
#include "keeper/data/watch.h"
#include "keeper/server/keeper_impl.h"

#define JUTE_MAXBUFFER 0xfffff   /* jute.maxbuffer's default (keeper_config.c) */

static loop_t *fuzz_loop;        /* for its clock only: nothing is ever watched */
static char super_digest[256];   /* superDigest for "super:fuzz", so addAuth can become super */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    fuzz_loop = loop_create();
    if (!fuzz_loop)
        abort();
    char *id = acl_digest_identity("super:fuzz", 10);
    if (!id)
        abort();
    snprintf(super_digest, sizeof(super_digest), "%s", id);
    free(id);
    return 0;
}

/* Watch events would be written to the client; nobody reads them here. */
static void drop_event(void *watcher, int32_t event_type, const char *path, void *ctx)
{
    (void)watcher;
    (void)event_type;
    (void)path;
    (void)ctx;
}

static void serialize(buf_t *b, const txn_header_t *hdr, const txn_t *txn)
{
    FUZZ_CHECK(txn_header_write(b, hdr) == 0 && txn_body_write(b, txn) == 0, "cannot serialize a txn");
}

/* What the log would hold for this txn reads back as the same txn. */
static void check_log_form(const txn_header_t *hdr, const txn_t *txn)
{
    buf_t first, second;
    buf_init(&first);
    buf_init(&second);
    serialize(&first, hdr, txn);
    jute_in_t in;
    jute_in_init(&in, first.data, first.len);
    txn_header_t back_hdr;
    txn_t back;
    FUZZ_CHECK(txn_header_read(&in, &back_hdr) == 0, "a prepared txn header (type %d) does not parse", hdr->type);
    FUZZ_CHECK(txn_body_read(&in, back_hdr.type, &back) == 0, "a prepared txn body (type %d) does not parse",
               hdr->type);
    FUZZ_CHECK(jute_remaining(&in) == 0, "%zu bytes left after a prepared txn (type %d)", jute_remaining(&in),
               hdr->type);
    serialize(&second, &back_hdr, &back);
    FUZZ_CHECK(first.len == second.len && memcmp(first.data, second.data, first.len) == 0,
               "a prepared txn (type %d) reads back different", hdr->type);
    txn_free(&back);
    buf_free(&first);
    buf_free(&second);
}

/* A write, standalone, with the log taken out of the way. */
static void serve_write(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, const uint8_t *body, size_t len)
{
    txn_header_t hdr;
    txn_t txn;
    if (type == OP_CLOSE_SESSION) {
        prep_close_session(k, c->session_id, &hdr, &txn);
        hdr.cxid = xid;
    } else {
        jute_in_t in;
        jute_in_init(&in, body, len);
        prep_origin_t origin = {c->session_id, &c->auth, "fuzz"};
        prep_write(k, &origin, type, xid, &in, &hdr, &txn);
    }
    check_log_form(&hdr, &txn);
    txn_result_t result;
    keeper_commit(k, &hdr, &txn, &result);
    c->last_zxid = hdr.zxid;
    request_reply_write(c, xid, type, &hdr, &result);
    txn_result_free(&result);
    txn_free(&txn);
    if (type == OP_CLOSE_SESSION)
        client_close_after_flush(c);
}

static void free_conn(client_conn_t *c)
{
    buf_free(&c->in);
    buf_free(&c->out);
    auth_set_free(&c->auth);
    free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    keeper_t *k = calloc(1, sizeof(*k));
    client_conn_t *c = calloc(1, sizeof(*c));
    if (!k || !c)
        abort();
    k->loop = fuzz_loop;
    k->cfg.tick_time = 2000;
    k->cfg.jute_maxbuffer = JUTE_MAXBUFFER;
    k->cfg.max_outstanding_per_cnxn = 1000;
    k->cfg.extended_types_enabled = 1;
    snprintf(k->cfg.super_digest, sizeof(k->cfg.super_digest), "%s", super_digest);
    k->role = ROLE_STANDALONE;
    k->serving = 1;
    k->listen_fd = -1;
    k->stats.latency_min_ms = UINT64_MAX;
    k->watches = watch_manager_create(drop_event, k);
    k->sessions = session_tracker_create(0, k->cfg.tick_time, clock_wall_ms());
    k->tree = k->watches ? tree_create(k->watches) : NULL;
    if (!k->watches || !k->sessions || !k->tree)
        abort();
    k->next_zxid = tree_last_zxid(k->tree) + 1;

    /* One connected client with a live session, as after its ConnectRequest. */
    c->keeper = k;
    c->fd = -1;
    snprintf(c->ip, sizeof(c->ip), "127.0.0.1");
    c->port = 40000;
    buf_init(&c->in);
    buf_init(&c->out);
    auth_set_init(&c->auth);
    auth_set_add(&c->auth, "ip", c->ip);
    c->connected = 1;
    c->session_id = session_next_id(k->sessions);
    c->session_timeout = 30000;
    c->last_zxid = -1;
    c->stats.latency_min_ms = UINT64_MAX;
    session_t *s = session_add(k->sessions, c->session_id, c->session_timeout, loop_now_ms(k->loop));
    if (!s)
        abort();
    s->owner = c;
    k->clients = c;
    k->nclients = 1;

    size_t off = 0;
    while (!c->dead && !c->closing && size - off >= 4) {
        int32_t len = (int32_t)be32_get(data + off);
        if (len < 0 || len > k->cfg.jute_maxbuffer || (size_t)len > size - off - 4)
            break;   /* the keeper closes the connection, or waits for the rest */
        const uint8_t *frame = data + off + 4;
        off += 4 + (size_t)len;
        c->stats.packets_received++;
        if (len >= 8 && request_is_write((int32_t)be32_get(frame + 4)))
            serve_write(k, c, (int32_t)be32_get(frame), (int32_t)be32_get(frame + 4), frame + 8, (size_t)len - 8);
        else
            request_handle(k, c, frame, (size_t)len);
        buf_clear(&c->out);   /* the client read its replies */
        c->unsent_replies = 0;
    }

    /* Tear down what keeper_stop would, without a log or sockets. */
    if (!c->dead)
        client_close(c, NULL);
    while (k->dead_clients) {
        client_conn_t *d = k->dead_clients;
        k->dead_clients = d->next;
        free_conn(d);
    }
    changes_destroy(&k->changes);
    tree_destroy(k->tree);
    watch_manager_destroy(k->watches);
    session_tracker_destroy(k->sessions);
    free(k);
    return 0;
}
