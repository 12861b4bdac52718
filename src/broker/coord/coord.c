/* coord.c -- see coord.h. Completions arrive on the C client's completion
 * thread: each copies what it needs into its request and posts it to the
 * loop; nothing else is shared between the threads. */
#define _GNU_SOURCE
#include "coord.h"
#include "base/logging.h"
#include "base/mailbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct coord {
    loop_t *loop;
    zhandle_t *zh;
    mailbox_t *mailbox;
    coord_event_cb on_event;
    void *arg;
    int closed;             /* zh is gone: what is still delivered may not call it */
};

typedef struct {
    mailbox_msg_t msg;      /* first: the mailbox links these */
    int is_event;
} coord_msg_t;

typedef struct {
    coord_msg_t m;
    int type, state;
    char path[];
} coord_event_t;

typedef struct {
    coord_msg_t m;
    coord_t *co;
    coord_cb cb;
    void *arg;
    coord_result_t res;
    char *data;                      /* copy of the node data */
    /* multi: the ops, and the paths and data they point to (two strings
     * per op), must stay valid until the completion */
    int nops;
    zoo_op_t *ops;
    zoo_op_result_t *results;
    char **strings;
} coord_req_t;

static void free_req(coord_req_t *r)
{
    free(r->data);
    for (int i = 0; i < r->res.nchildren; i++)
        free(r->res.children[i]);
    free(r->res.children);
    if (r->strings)
        for (int i = 0; i < 2 * r->nops; i++)
            free(r->strings[i]);
    free(r->strings);
    free(r->ops);
    free(r->results);
    free(r);
}

static void on_message(mailbox_t *mb, mailbox_msg_t *msg, void *arg)
{
    (void)mb;
    coord_t *co = arg;
    coord_msg_t *m = (coord_msg_t *)msg;
    if (m->is_event) {
        coord_event_t *e = (coord_event_t *)m;
        if (!co->closed)   /* a watch firing as we close asks for nothing any more */
            co->on_event(co, e->type, e->state, e->path, co->arg);
        free(e);
        return;
    }
    coord_req_t *r = (coord_req_t *)m;
    r->res.data = r->data;
    if (r->cb)
        r->cb(co, &r->res, r->arg);
    free_req(r);
}

/* ---- completion thread side ---- */

static void post_result(coord_req_t *r, int rc)
{
    r->res.rc = rc;
    mailbox_post(r->co->mailbox, &r->m.msg);
}

static void copy_stat(coord_req_t *r, const struct Stat *st)
{
    if (st) {
        r->res.version = st->version;
        r->res.ephemeral_owner = st->ephemeralOwner;
    }
}

static void on_data(int rc, const char *value, int len, const struct Stat *st, const void *data)
{
    coord_req_t *r = (coord_req_t *)data;
    if (rc == ZOK && value && len > 0) {
        r->data = malloc((size_t)len);
        if (r->data) {
            memcpy(r->data, value, (size_t)len);
            r->res.len = len;
        } else {
            rc = ZSYSTEMERROR;
        }
    }
    copy_stat(r, st);
    post_result(r, rc);
}

static void on_stat(int rc, const struct Stat *st, const void *data)
{
    coord_req_t *r = (coord_req_t *)data;
    copy_stat(r, st);
    post_result(r, rc);
}

static void on_strings(int rc, const struct String_vector *sv, const void *data)
{
    coord_req_t *r = (coord_req_t *)data;
    if (rc == ZOK && sv && sv->count > 0) {
        r->res.children = calloc((size_t)sv->count, sizeof(char *));
        for (int i = 0; r->res.children && i < sv->count; i++) {
            r->res.children[i] = strdup(sv->data[i]);
            if (!r->res.children[i]) {
                rc = ZSYSTEMERROR;
                break;
            }
            r->res.nchildren++;
        }
        if (!r->res.children)
            rc = ZSYSTEMERROR;
    }
    post_result(r, rc);
}

static void on_string(int rc, const char *value, const void *data)
{
    (void)value;
    post_result((coord_req_t *)data, rc);
}

static void on_void(int rc, const void *data)
{
    post_result((coord_req_t *)data, rc);
}

static void on_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    coord_t *co = ctx;
    size_t n = path ? strlen(path) : 0;
    coord_event_t *e = malloc(sizeof(*e) + n + 1);
    if (!e) {
        log_error("coordinator: out of memory for a watch event on %s", path ? path : "");
        return;
    }
    memset(e, 0, sizeof(*e));
    e->m.is_event = 1;
    e->type = type;
    e->state = state;
    memcpy(e->path, path ? path : "", n + 1);
    mailbox_post(co->mailbox, &e->m.msg);
}

/* ---- loop thread side ---- */

coord_t *coord_open(loop_t *loop, const char *connect, int session_timeout_ms, coord_event_cb on_event,
                    void *arg, char *err, size_t errlen)
{
    coord_t *co = calloc(1, sizeof(*co));
    if (!co) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    co->loop = loop;
    co->on_event = on_event;
    co->arg = arg;
    co->mailbox = mailbox_create(loop, on_message, co);
    if (!co->mailbox) {
        snprintf(err, errlen, "cannot create a mailbox: %s", strerror(errno));
        free(co);
        return NULL;
    }
    if (!getenv("KIPPER_ZK_DEBUG"))
        zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    co->zh = zookeeper_init(connect, on_watch, session_timeout_ms, NULL, co, 0);
    if (!co->zh) {
        snprintf(err, errlen, "cannot start a coordinator session to %s: %s", connect, strerror(errno));
        mailbox_destroy(co->mailbox);
        free(co);
        return NULL;
    }
    /* Without this the client re-resolves every host name on each poll. */
    zoo_set_servers_resolution_delay(co->zh, -1);
    return co;
}

void coord_close(coord_t *co)
{
    if (!co)
        return;
    zookeeper_close(co->zh);
    co->zh = NULL;
    co->closed = 1;
    mailbox_destroy(co->mailbox);   /* pending callbacks run now, with rc ZCLOSING */
    free(co);
}

int64_t coord_session_id(const coord_t *co)
{
    const clientid_t *id = co->zh ? zoo_client_id(co->zh) : NULL;
    return id ? id->client_id : 0;
}

int coord_session_timeout_ms(const coord_t *co)
{
    return co->zh ? zoo_recv_timeout(co->zh) : 0;
}

zhandle_t *coord_handle(coord_t *co)
{
    return co->zh;
}

static coord_req_t *new_req(coord_t *co, coord_cb cb, void *arg)
{
    if (co->closed)
        return NULL;   /* a callback run by coord_close asking for more */
    coord_req_t *r = calloc(1, sizeof(*r));
    if (!r) {
        log_error("coordinator: out of memory for a request");
        return NULL;
    }
    r->co = co;
    r->cb = cb;
    r->arg = arg;
    return r;
}

/* The client refused to queue the request (closing, bad arguments). */
static int queued(coord_req_t *r, int rc, const char *what, const char *path)
{
    if (rc == ZOK)
        return 0;
    log_warn("coordinator: cannot send %s %s: %s", what, path, zerror(rc));
    free_req(r);
    return -1;
}

int coord_get(coord_t *co, const char *path, int watch, coord_cb cb, void *arg)
{
    coord_req_t *r = new_req(co, cb, arg);
    return r ? queued(r, zoo_aget(co->zh, path, watch, on_data, r), "get", path) : -1;
}

int coord_exists(coord_t *co, const char *path, int watch, coord_cb cb, void *arg)
{
    coord_req_t *r = new_req(co, cb, arg);
    return r ? queued(r, zoo_aexists(co->zh, path, watch, on_stat, r), "exists", path) : -1;
}

int coord_children(coord_t *co, const char *path, int watch, coord_cb cb, void *arg)
{
    coord_req_t *r = new_req(co, cb, arg);
    return r ? queued(r, zoo_aget_children(co->zh, path, watch, on_strings, r), "get children", path) : -1;
}

int coord_create(coord_t *co, const char *path, const char *data, int len, int flags, coord_cb cb, void *arg)
{
    coord_req_t *r = new_req(co, cb, arg);
    return r ? queued(r, zoo_acreate(co->zh, path, data, len, &ZOO_OPEN_ACL_UNSAFE, flags, on_string, r), "create",
                      path)
             : -1;
}

int coord_set(coord_t *co, const char *path, const char *data, int len, int version, coord_cb cb, void *arg)
{
    coord_req_t *r = new_req(co, cb, arg);
    return r ? queued(r, zoo_aset(co->zh, path, data, len, version, on_stat, r), "set", path) : -1;
}

int coord_delete(coord_t *co, const char *path, int version, coord_cb cb, void *arg)
{
    coord_req_t *r = new_req(co, cb, arg);
    return r ? queued(r, zoo_adelete(co->zh, path, version, on_void, r), "delete", path) : -1;
}

/* ---- deleting a subtree ---- */

#define DELETE_TREE_RELISTS 3   /* times a node that gained children is listed again */

/* One node of a subtree being deleted; the root's parent is NULL. */
typedef struct tree_node {
    struct tree_node *parent;
    char *path;
    int children_left;   /* subtrees still being deleted */
    int rc;              /* the first error of a subtree */
    int relists;
    coord_cb cb;         /* the root's */
    void *arg;
} tree_node_t;

static int tree_list(coord_t *co, tree_node_t *n);

static void tree_node_free(tree_node_t *n)
{
    if (n)
        free(n->path);
    free(n);
}

static void tree_finish(coord_t *co, tree_node_t *n, int rc);

static void tree_node_deleted(coord_t *co, const coord_result_t *res, void *arg)
{
    tree_node_t *n = arg;
    if (res->rc == ZNOTEMPTY && n->relists < DELETE_TREE_RELISTS) {
        n->relists++;
        if (tree_list(co, n) == 0)
            return;
    }
    tree_finish(co, n, res->rc == ZNONODE ? ZOK : res->rc);
}

/* Every child is gone (or failed): the node itself, or its error upwards. */
static void tree_children_done(coord_t *co, tree_node_t *n)
{
    if (n->rc != ZOK || coord_delete(co, n->path, -1, tree_node_deleted, n) < 0)
        tree_finish(co, n, n->rc != ZOK ? n->rc : ZSYSTEMERROR);
}

static void tree_finish(coord_t *co, tree_node_t *n, int rc)
{
    tree_node_t *parent = n->parent;
    if (!parent) {
        coord_result_t res = {.rc = rc};
        n->cb(co, &res, n->arg);
    }
    tree_node_free(n);
    if (!parent)
        return;
    if (rc != ZOK && parent->rc == ZOK)
        parent->rc = rc;
    if (--parent->children_left == 0)
        tree_children_done(co, parent);
}

static tree_node_t *tree_node_new(tree_node_t *parent, const char *path, const char *child)
{
    tree_node_t *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    int len = child ? asprintf(&n->path, "%s/%s", strcmp(path, "/") ? path : "", child)
                    : asprintf(&n->path, "%s", path);
    if (len < 0) {
        free(n);
        return NULL;
    }
    n->parent = parent;
    n->rc = ZOK;
    return n;
}

static void tree_listed(coord_t *co, const coord_result_t *res, void *arg)
{
    tree_node_t *n = arg;
    if (res->rc != ZOK) {
        tree_finish(co, n, res->rc == ZNONODE ? ZOK : res->rc);
        return;
    }
    if (res->nchildren == 0) {
        tree_children_done(co, n);
        return;
    }
    /* Counted whole first, so no child finishing early completes the node. */
    n->children_left = res->nchildren;
    for (int i = 0; i < res->nchildren; i++) {
        tree_node_t *child = tree_node_new(n, n->path, res->children[i]);
        if (!child || tree_list(co, child) < 0) {
            tree_node_free(child);
            if (n->rc == ZOK)
                n->rc = ZSYSTEMERROR;
            if (--n->children_left == 0)
                tree_children_done(co, n);
        }
    }
}

static int tree_list(coord_t *co, tree_node_t *n)
{
    return coord_children(co, n->path, 0, tree_listed, n);
}

int coord_delete_tree(coord_t *co, const char *path, coord_cb cb, void *arg)
{
    tree_node_t *root = tree_node_new(NULL, path, NULL);
    if (!root)
        return -1;
    root->cb = cb;
    root->arg = arg;
    if (tree_list(co, root) < 0) {
        tree_node_free(root);
        return -1;
    }
    return 0;
}

/* Copies one op's strings into r so the caller's may go. */
static int prepare_op(coord_req_t *r, int i, const coord_op_t *op)
{
    char *path = strdup(op->path), *data = NULL;
    r->strings[2 * i] = path;
    if (op->data && op->len > 0) {
        data = malloc((size_t)op->len);
        if (data)
            memcpy(data, op->data, (size_t)op->len);
        r->strings[2 * i + 1] = data;
    }
    if (!path || (op->data && op->len > 0 && !data))
        return -1;
    switch (op->type) {
    case COORD_OP_CREATE:
        zoo_create_op_init(&r->ops[i], path, data, op->len, &ZOO_OPEN_ACL_UNSAFE, op->flags, NULL, 0);
        break;
    case COORD_OP_SET:
        zoo_set_op_init(&r->ops[i], path, data, op->len, op->version, NULL);
        break;
    case COORD_OP_DELETE:
        zoo_delete_op_init(&r->ops[i], path, op->version);
        break;
    case COORD_OP_CHECK:
        zoo_check_op_init(&r->ops[i], path, op->version);
        break;
    }
    return 0;
}

int coord_multi(coord_t *co, const coord_op_t *ops, int n, coord_cb cb, void *arg)
{
    if (n < 1 || n > COORD_MULTI_MAX)
        return -1;
    coord_req_t *r = new_req(co, cb, arg);
    if (!r)
        return -1;
    r->nops = n;
    r->ops = calloc((size_t)n, sizeof(*r->ops));
    r->results = calloc((size_t)n, sizeof(*r->results));
    r->strings = calloc(2 * (size_t)n, sizeof(*r->strings));
    int ok = r->ops && r->results && r->strings;
    for (int i = 0; ok && i < n; i++)
        ok = prepare_op(r, i, &ops[i]) == 0;
    if (!ok) {
        log_error("coordinator: out of memory for a multi of %d operations", n);
        free_req(r);
        return -1;
    }
    return queued(r, zoo_amulti(co->zh, n, r->ops, r->results, on_void, r), "multi", ops[0].path);
}
