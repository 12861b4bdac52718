/* request.c -- what the keeper does with each request of a connected client
 * (ZooKeeper's FinalRequestProcessor): reads are answered from the tree;
 * writes are prepared into a transaction (prep.c), committed, and answered
 * from what applying it produced. Replies are built straight into the
 * connection's output buffer. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "keeper/data/path.h"
#include "base/logging.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t reply_begin(buf_t *b, int32_t xid, int64_t zxid, int32_t err)
{
    size_t start = b->len;
    jute_put_int(b, 0);   /* frame length, patched by reply_finish */
    jute_put_int(b, xid);
    jute_put_long(b, zxid);
    jute_put_int(b, err);
    return start;
}

void reply_finish(buf_t *b, size_t start)
{
    jute_patch_int(b, start, (int32_t)(b->len - start - 4));
}

static void reply_header_only(keeper_t *k, client_conn_t *c, int32_t xid, int32_t err)
{
    size_t start = reply_begin(&c->out, xid, tree_last_zxid(k->tree), err);
    reply_finish(&c->out, start);
    client_queued(c);
}

/* ---- replies to writes ---- */

static void put_multi_header(buf_t *b, int32_t type, int done, int32_t err)
{
    jute_put_int(b, type);
    jute_put_bool(b, done);
    jute_put_int(b, err);
}

/* One op result of a multi (ZooKeeper's MultiResponse). */
static void put_multi_result(buf_t *b, const txn_result_t *r)
{
    switch (r->type) {
    case OP_CREATE:
        put_multi_header(b, OP_CREATE, 0, 0);
        jute_put_string(b, r->path);
        break;
    case OP_CREATE2:
    case OP_CREATE_TTL:
    case OP_CREATE_CONTAINER:
        put_multi_header(b, OP_CREATE2, 0, 0);   /* ZooKeeper reports these as create2 */
        jute_put_string(b, r->path);
        jute_put_stat(b, &r->stat);
        break;
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
        put_multi_header(b, OP_DELETE, 0, 0);
        break;
    case OP_CHECK:
        put_multi_header(b, OP_CHECK, 0, 0);
        break;
    case OP_SET_DATA:
        put_multi_header(b, OP_SET_DATA, 0, 0);
        jute_put_stat(b, &r->stat);
        break;
    default:   /* OP_ERROR */
        put_multi_header(b, OP_ERROR, 0, r->err);
        jute_put_int(b, r->err);
        break;
    }
}

void request_reply_write(client_conn_t *c, int32_t xid, int32_t type, const txn_header_t *hdr, const txn_result_t *r)
{
    buf_t *b = &c->out;
    int32_t err = hdr->type == OP_ERROR ? r->err : (type == OP_MULTI ? ZOK : r->err);
    size_t start = reply_begin(b, xid, hdr->zxid, err);
    if (err == ZOK) {
        switch (type) {
        case OP_CREATE:
            jute_put_string(b, r->path);
            break;
        case OP_CREATE2:
        case OP_CREATE_TTL:
        case OP_CREATE_CONTAINER:
            jute_put_string(b, r->path);
            jute_put_stat(b, &r->stat);
            break;
        case OP_SET_DATA:
        case OP_SET_ACL:
        case OP_CHECK:
            jute_put_stat(b, &r->stat);
            break;
        case OP_RECONFIG: {
            /* ZooKeeper's FinalRequestProcessor: a GetDataResponse with the
             * configuration as it is now (the node's text) and the stat the
             * reconfig txn left on /zookeeper/config. */
            const znode_t *n = tree_lookup(c->keeper->tree, TREE_CONFIG_NODE);
            jute_put_buffer(b, n ? n->data : NULL, n ? n->data_len : -1);
            jute_put_stat(b, &r->stat);
            break;
        }
        case OP_MULTI:
            for (int32_t i = 0; i < r->nsubs; i++)
                put_multi_result(b, &r->subs[i]);
            put_multi_header(b, -1, 1, -1);
            break;
        default:   /* delete, deleteContainer, closeSession: header only */
            break;
        }
    }
    reply_finish(b, start);
    client_queued(c);
}

/* ---- reads ---- */

/* Look up a node for a read: ZNONODE, or ZNOAUTH without perm. */
static int read_node(keeper_t *k, client_conn_t *c, const char *path, int32_t perm, const znode_t **out)
{
    const znode_t *n = path ? tree_lookup(k->tree, path) : NULL;
    *out = n;
    if (!n)
        return ZNONODE;
    return k->cfg.skip_acl ? ZOK : acl_check(n->acl, perm, &c->auth);
}

static void put_children(buf_t *b, const znode_t *n)
{
    jute_put_int(b, n->nchildren);
    for (int32_t i = 0; i < n->nchildren; i++)
        jute_put_string(b, znode_name(n->children[i]));
}

static void put_data(buf_t *b, const znode_t *n)
{
    jute_put_buffer(b, n->data, n->data_len);
    zstat_t st;
    tree_fill_stat(n, &st);
    jute_put_stat(b, &st);
}

/* getData / getChildren as a single read or as an op of multiRead. Puts
 * the response body into b and returns ZOK, or returns the error. */
static int read_data_or_children(keeper_t *k, client_conn_t *c, int32_t type, const char *path, int watch, buf_t *b)
{
    const znode_t *n;
    int err = read_node(k, c, path, PERM_READ, &n);
    if (err != ZOK)
        return err;
    if (watch)
        watch_add(k->watches, type == OP_GET_DATA ? WATCH_TABLE_DATA : WATCH_TABLE_CHILD, path, c,
                  WATCH_MODE_STANDARD);
    if (type == OP_GET_DATA) {
        put_data(b, n);
    } else {
        put_children(b, n);
        if (type == OP_GET_CHILDREN2) {
            zstat_t st;
            tree_fill_stat(n, &st);
            jute_put_stat(b, &st);
        }
    }
    return ZOK;
}

/* The ACL as getACL shows it: digest hashes hidden without ADMIN. */
static void put_acl_for_reader(buf_t *b, const znode_t *n, const auth_set_t *ids)
{
    int admin = acl_check(n->acl, PERM_ADMIN, ids) == ZOK;
    jute_put_int(b, n->acl->count);
    for (int32_t i = 0; i < n->acl->count; i++) {
        const acl_t *a = &n->acl->items[i];
        jute_put_int(b, a->perms);
        jute_put_string(b, a->scheme);
        const char *colon = strchr(a->id, ':');
        if (!admin && strcmp(a->scheme, "digest") == 0 && colon) {
            int32_t user_len = (int32_t)(colon - a->id);
            jute_put_int(b, user_len + 2);
            buf_append(b, a->id, (size_t)user_len);
            buf_append(b, ":x", 2);
        } else {
            jute_put_string(b, a->id);
        }
    }
}

typedef struct {
    buf_t *b;
    const char *prefix;
    size_t prefix_len;
    int32_t count;
} ephemeral_list_t;

static int add_ephemeral(const znode_t *n, void *arg)
{
    ephemeral_list_t *el = arg;
    if (el->prefix_len && strncmp(n->path, el->prefix, el->prefix_len) != 0)
        return 0;
    jute_put_string(el->b, n->path);
    el->count++;
    return 0;
}

static int read_multi(keeper_t *k, client_conn_t *c, jute_in_t *in, buf_t *b)
{
    for (int ops = 0;; ops++) {
        int32_t type = jute_get_int(in);
        int done = jute_get_bool(in);
        (void)jute_get_int(in);
        if (in->error)
            return ZMARSHALLINGERROR;
        if (done)
            break;
        if (type != OP_GET_DATA && type != OP_GET_CHILDREN)
            return ZMARSHALLINGERROR;
        char *path = jute_get_string(in);
        int watch = jute_get_bool(in);
        if (in->error) {
            free(path);
            return ZMARSHALLINGERROR;
        }
        size_t mark = b->len;
        put_multi_header(b, type, 0, 0);
        int err = read_data_or_children(k, c, type, path, watch, b);
        if (err != ZOK) {
            b->len = mark;
            put_multi_header(b, OP_ERROR, 0, err);
            jute_put_int(b, err);
        }
        free(path);
    }
    put_multi_header(b, -1, 1, -1);
    return ZOK;
}

static int read_string_list(jute_in_t *in, char ***out, int *count)
{
    int32_t n = jute_get_vector_count(in, 4);
    *out = NULL;
    *count = 0;
    if (in->error)
        return -1;
    if (n <= 0)
        return 0;
    char **v = calloc((size_t)n, sizeof(char *));
    if (!v)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        v[i] = jute_get_string(in);
        *count = i + 1;
        if (!v[i]) {
            in->error = 1;
            break;
        }
    }
    *out = v;
    return in->error ? -1 : 0;
}

static void free_string_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int handle_set_watches(keeper_t *k, client_conn_t *c, int32_t type, jute_in_t *in)
{
    int64_t relative_zxid = jute_get_long(in);
    char **lists[5] = {0};
    int counts[5] = {0};
    int nlists = type == OP_SET_WATCHES2 ? 5 : 3;
    int err = ZOK;
    for (int i = 0; i < nlists; i++)
        if (read_string_list(in, &lists[i], &counts[i]) < 0)
            err = ZMARSHALLINGERROR;
    if (err == ZOK)
        tree_set_watches(k->tree, relative_zxid, lists[0], counts[0], lists[1], counts[1], lists[2], counts[2],
                         lists[3], counts[3], lists[4], counts[4], c);
    for (int i = 0; i < 5; i++)
        free_string_list(lists[i], counts[i]);
    return err;
}

/* Answer one request that changes nothing; the reply body goes after the
 * header. Pings and unknown types come here too. */
void request_answer_read(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, jute_in_t *in)
{
    if (type == OP_PING) {
        reply_header_only(k, c, xid, ZOK);
        return;
    }
    if (type == OP_CLOSE_SESSION) {
        /* Only a local session's, queued behind its connection's writes
         * (local_sessions.c), comes here. */
        local_session_close(k, c, xid);
        return;
    }
    if (!request_is_read(type)) {
        /* As ZooKeeper's UnimplementedRequestProcessor: answer, then hang up. */
        log_warn("unknown request type %d from %s:%d; closing the connection", type, c->ip, c->port);
        size_t start = reply_begin(&c->out, xid, -1, ZUNIMPLEMENTED);   /* zxid -1, as ZooKeeper */
        reply_finish(&c->out, start);
        client_queued(c);
        client_close_after_flush(c);
        return;
    }
    buf_t body;
    buf_init(&body);
    int err = ZOK;
    char *path = NULL;
    const znode_t *n = NULL;

    switch (type) {
    case OP_EXISTS: {
        path = jute_get_string(in);
        int watch = jute_get_bool(in);
        if (in->error || !path) {
            err = in->error ? ZMARSHALLINGERROR : ZBADARGUMENTS;   /* a NUL in the path */
            break;
        }
        if (watch)   /* ZooKeeper sets it whether or not the node exists */
            watch_add(k->watches, WATCH_TABLE_DATA, path, c, WATCH_MODE_STANDARD);
        n = tree_lookup(k->tree, path);
        if (!n) {
            err = ZNONODE;
            break;
        }
        zstat_t st;
        tree_fill_stat(n, &st);
        jute_put_stat(&body, &st);
        break;
    }
    case OP_GET_DATA:
    case OP_GET_CHILDREN:
    case OP_GET_CHILDREN2: {
        path = jute_get_string(in);
        int watch = jute_get_bool(in);
        err = in->error ? ZMARSHALLINGERROR : read_data_or_children(k, c, type, path, watch, &body);
        break;
    }
    case OP_GET_ALL_CHILDREN_NUMBER:
        path = jute_get_string(in);
        err = in->error ? ZMARSHALLINGERROR : read_node(k, c, path, PERM_READ, &n);
        if (err == ZOK)
            jute_put_int(&body, (int32_t)tree_descendant_count(n));
        break;
    case OP_GET_ACL:
        path = jute_get_string(in);
        err = in->error ? ZMARSHALLINGERROR : read_node(k, c, path, PERM_READ | PERM_ADMIN, &n);
        if (err == ZOK) {
            put_acl_for_reader(&body, n, &c->auth);
            zstat_t st;
            tree_fill_stat(n, &st);
            jute_put_stat(&body, &st);
        }
        break;
    case OP_GET_EPHEMERALS: {
        path = jute_get_string(in);
        if (in->error) {
            err = ZMARSHALLINGERROR;
            break;
        }
        ephemeral_list_t el = {&body, path, 0, 0};
        if (path && strcmp(path, "/") != 0 && path[strspn(path, " \t")] != 0)
            el.prefix_len = strlen(path);
        jute_put_int(&body, 0);   /* count, patched below */
        tree_each_session_ephemeral(k->tree, c->session_id, add_ephemeral, &el);
        jute_patch_int(&body, 0, el.count);
        break;
    }
    case OP_SYNC:
        path = jute_get_string(in);
        if (in->error) {
            err = ZMARSHALLINGERROR;
            break;
        }
        jute_put_string(&body, path);   /* standalone or leading: nothing to wait for */
        break;
    case OP_SET_WATCHES:
    case OP_SET_WATCHES2:
        err = handle_set_watches(k, c, type, in);
        break;
    case OP_ADD_WATCH: {
        path = jute_get_string(in);
        int32_t mode = jute_get_int(in);
        if (in->error || !path || (mode != ADD_WATCH_PERSISTENT && mode != ADD_WATCH_PERSISTENT_RECURSIVE)) {
            err = in->error || !path ? ZMARSHALLINGERROR : ZBADARGUMENTS;
            break;
        }
        watch_mode_t wm = mode == ADD_WATCH_PERSISTENT ? WATCH_MODE_PERSISTENT : WATCH_MODE_PERSISTENT_RECURSIVE;
        watch_add(k->watches, WATCH_TABLE_DATA, path, c, wm);
        watch_add(k->watches, WATCH_TABLE_CHILD, path, c, wm);
        jute_put_int(&body, 0);   /* ErrorResponse(0) */
        break;
    }
    case OP_CHECK_WATCHES:
    case OP_REMOVE_WATCHES: {
        path = jute_get_string(in);
        int32_t wtype = jute_get_int(in);
        if (in->error || !path) {
            err = ZMARSHALLINGERROR;
            break;
        }
        if (wtype < WATCHER_TYPE_CHILDREN || wtype > WATCHER_TYPE_ANY) {
            err = ZBADARGUMENTS;
            break;
        }
        int found = type == OP_CHECK_WATCHES ? watch_contains(k->watches, path, c, wtype)
                                             : watch_remove(k->watches, path, c, wtype);
        err = found ? ZOK : ZNOWATCHER;
        break;
    }
    case OP_MULTI_READ:
        err = read_multi(k, c, in, &body);
        break;
    case OP_WHO_AM_I:
        jute_put_int(&body, c->auth.count);
        for (int i = 0; i < c->auth.count; i++) {
            const auth_id_t *id = &c->auth.items[i];
            jute_put_string(&body, id->scheme);
            const char *colon = strcmp(id->scheme, "digest") == 0 ? strchr(id->id, ':') : NULL;
            if (colon) {
                jute_put_int(&body, (int32_t)(colon - id->id));
                buf_append(&body, id->id, (size_t)(colon - id->id));
            } else {
                jute_put_string(&body, id->id);
            }
        }
        break;
    }
    if (err == ZMARSHALLINGERROR)
        log_warn("malformed request (type %d) from %s:%d", type, c->ip, c->port);
    size_t start = reply_begin(&c->out, xid, tree_last_zxid(k->tree), err);
    if (err == ZOK)
        buf_append(&c->out, body.data, body.len);
    reply_finish(&c->out, start);
    client_queued(c);
    c->last_zxid = tree_last_zxid(k->tree);
    free(path);
    buf_free(&body);
}

/* ---- dispatch ---- */

static void handle_auth(keeper_t *k, client_conn_t *c, int32_t xid, jute_in_t *in)
{
    (void)jute_get_int(in);   /* AuthPacket.type, unused by ZooKeeper */
    char *scheme = jute_get_string(in);
    const uint8_t *auth;
    int32_t auth_len;
    jute_get_buffer(in, &auth, &auth_len);
    char *id = NULL;
    int err = in->error || !scheme ? ZAUTHFAILED : acl_authenticate(scheme, auth, auth_len, &id);
    if (err == ZOK && id && auth_set_add(&c->auth, scheme, id) < 0)
        err = ZAUTHFAILED;   /* too many identities on one connection */
    /* The super user of DigestAuthenticationProvider.superDigest passes every ACL. */
    if (err == ZOK && id && k->cfg.super_digest[0] && strcmp(scheme, "digest") == 0 &&
        strcmp(id, k->cfg.super_digest) == 0 && auth_set_add(&c->auth, "super", "") < 0)
        err = ZAUTHFAILED;
    size_t start = reply_begin(&c->out, xid, 0, err);
    reply_finish(&c->out, start);
    client_queued(c);
    if (err != ZOK) {
        log_warn("authentication failed for scheme %s from %s:%d", scheme ? scheme : "(none)", c->ip, c->port);
        client_close_after_flush(c);
    }
    free(scheme);
    free(id);
}

/* kipper has no SASL server. ZooKeeper without a SASL configuration answers
 * a SASL token with OK and a null token, leaving the connection open; the
 * client's SASL library then fails the handshake itself (AuthFailed). */
static void handle_sasl(client_conn_t *c, int32_t xid, jute_in_t *in)
{
    const uint8_t *token;
    int32_t token_len;
    if (jute_get_buffer(in, &token, &token_len) < 0) {
        client_close(c, "malformed SASL request");
        return;
    }
    log_debug("SASL request from %s:%d: SASL is not configured; answering with no token", c->ip, c->port);
    size_t start = reply_begin(&c->out, xid, 0, ZOK);
    jute_put_buffer(&c->out, NULL, -1);
    reply_finish(&c->out, start);
    client_queued(c);
}

static const char *op_name(int32_t type)
{
    switch (type) {
    case OP_PING: return "PING";
    case OP_CREATE: case OP_CREATE2: case OP_CREATE_TTL: case OP_CREATE_CONTAINER: return "CREA";
    case OP_DELETE: case OP_DELETE_CONTAINER: return "DELE";
    case OP_SET_DATA: return "SETD";
    case OP_SET_ACL: return "SETA";
    case OP_CHECK: return "CHEC";
    case OP_MULTI: return "MULT";
    case OP_MULTI_READ: return "MLTR";
    case OP_EXISTS: return "EXIS";
    case OP_GET_DATA: return "GETD";
    case OP_GET_ACL: return "GETA";
    case OP_GET_CHILDREN: case OP_GET_CHILDREN2: return "GETC";
    case OP_GET_ALL_CHILDREN_NUMBER: return "GETACN";
    case OP_GET_EPHEMERALS: return "GETE";
    case OP_SYNC: return "SYNC";
    case OP_SET_WATCHES: return "SETW";
    case OP_SET_WATCHES2: return "STW2";
    case OP_ADD_WATCH: return "ADDW";
    case OP_CHECK_WATCHES: return "CHKW";
    case OP_REMOVE_WATCHES: return "REMW";
    case OP_WHO_AM_I: return "HOMI";
    case OP_CLOSE_SESSION: return "CLOS";
    case OP_AUTH: return "AUTH";
    default: return "NA";
    }
}

int request_is_write(int32_t type)
{
    switch (type) {
    case OP_CREATE: case OP_CREATE2: case OP_CREATE_TTL: case OP_CREATE_CONTAINER:
    case OP_DELETE: case OP_DELETE_CONTAINER: case OP_SET_DATA: case OP_SET_ACL:
    case OP_CHECK: case OP_MULTI: case OP_RECONFIG: case OP_CLOSE_SESSION:
        return 1;
    default:
        return 0;
    }
}

int request_is_read(int32_t type)
{
    switch (type) {
    case OP_EXISTS: case OP_GET_DATA: case OP_GET_CHILDREN: case OP_GET_CHILDREN2:
    case OP_GET_ALL_CHILDREN_NUMBER: case OP_GET_ACL: case OP_GET_EPHEMERALS: case OP_SYNC:
    case OP_SET_WATCHES: case OP_SET_WATCHES2: case OP_ADD_WATCH: case OP_CHECK_WATCHES:
    case OP_REMOVE_WATCHES: case OP_MULTI_READ: case OP_WHO_AM_I:
        return 1;
    default:
        return 0;
    }
}

void request_queue_behind(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, const uint8_t *frame, size_t len)
{
    pending_t *p = pipeline_new(k, PENDING_READ, c, xid, type);
    pipeline_keep_frame(p, frame, len);
    pipeline_charge(k, p, len);
    if (k->role == ROLE_FOLLOWING) {   /* answered once its connection's forwarded requests are */
        pipeline_follower_queue(k, p);
        return;
    }
    c->in_flight++;   /* counts every queued request of the connection */
    pipeline_submit(k, p);
}

/* One request frame of a connected client. Writes are prepared now, in
 * arrival order, and answered once their transaction is committed; anything
 * else is answered now unless this connection has writes in flight, in which
 * case it waits in the pipeline behind them. */
void request_handle(keeper_t *k, client_conn_t *c, const uint8_t *frame, size_t len)
{
    jute_in_t in;
    jute_in_init(&in, frame, len);
    int32_t xid = jute_get_int(&in);
    int32_t type = jute_get_int(&in);
    if (in.error) {
        client_close(c, "request shorter than its header");
        return;
    }
    if (type != OP_PING && type != OP_AUTH && xid != XID_SET_WATCHES)
        c->last_cxid = xid;
    c->last_op = op_name(type);

    if (type == OP_AUTH) {   /* ZooKeeper answers addAuth at once, outside the pipeline */
        handle_auth(k, c, xid, &in);
        return;
    }
    if (type == OP_SASL) {
        handle_sasl(c, xid, &in);
        return;
    }
    /* Every other request keeps the session alive, as ZooKeeper's
     * submitRequest does; auth and SASL packets do not. */
    if (session_touch(k->sessions, c->session_id, loop_now_ms(k->loop)) < 0) {
        client_close(c, "request on an expired session");
        return;
    }
    if (k->read_only) {
        readonly_request(k, c, xid, type, &in);
        return;
    }
    if (k->cfg.local_sessions_enabled) {
        session_t *s = session_find(k->sessions, c->session_id);
        if (s && s->local && local_session_request(k, c, s, xid, type, frame, len))
            return;
    }
    if (k->role == ROLE_FOLLOWING) {
        follower_touch(k, c->session_id);
        if (request_is_write(type) || type == OP_SYNC) {
            follower_forward(k, c, xid, type, frame + 8, len - 8);
            return;
        }
        if (c->in_flight > 0) {   /* behind this client's own writes */
            request_queue_behind(k, c, xid, type, frame, len);
            return;
        }
        request_answer_read(k, c, xid, type, &in);
        return;
    }
    if (request_is_write(type)) {
        pending_t *p = pipeline_new(k, type == OP_CLOSE_SESSION ? PENDING_CLOSE_SESSION : PENDING_WRITE, c, xid, type);
        if (type == OP_CLOSE_SESSION) {
            prep_close_session(k, c->session_id, &p->hdr, &p->txn);
            p->hdr.cxid = xid;
        } else {
            prep_origin_t origin = {c->session_id, &c->auth, c->who, k->cfg.server_id};
            prep_write(k, &origin, type, xid, &in, &p->hdr, &p->txn);
        }
        c->in_flight++;
        pipeline_charge(k, p, len);
        pipeline_submit(k, p);
        return;
    }
    /* A read waits only behind this connection's own writes, so a client
     * always reads its writes, in order; other clients' writes in flight are
     * not committed yet, so it may not see them anyway. */
    if (c->in_flight > 0) {
        request_queue_behind(k, c, xid, type, frame, len);
        return;
    }
    uint64_t started = loop_now_ms(k->loop);
    request_answer_read(k, c, xid, type, &in);
    keeper_stats_record(k, c, loop_now_ms(k->loop) - started);
}
