/* txn.c -- see txn.h.
 *
 * Layouts are zookeeper.jute's (module org.apache.zookeeper.txn):
 *   TxnHeader          long clientId, int cxid, long zxid, long time, int type
 *   CreateTxn          ustring path, buffer data, vector<ACL> acl, boolean ephemeral, int parentCVersion
 *   CreateContainerTxn ustring path, buffer data, vector<ACL> acl, int parentCVersion
 *   CreateTTLTxn       ustring path, buffer data, vector<ACL> acl, int parentCVersion, long ttl
 *   DeleteTxn          ustring path
 *   SetDataTxn         ustring path, buffer data, int version
 *   SetACLTxn          ustring path, vector<ACL> acl, int version
 *   CheckVersionTxn    ustring path, int version
 *   CreateSessionTxn   int timeOut
 *   CloseSessionTxn    vector<ustring> paths2Delete
 *   ErrorTxn           int err
 *   MultiTxn           vector<Txn{int type, buffer data}>, each data holding
 *                      the sub-txn's body record */
#include "txn.h"

#include <stdlib.h>
#include <string.h>

void txn_init(txn_t *t, int32_t type)
{
    memset(t, 0, sizeof(*t));
    t->type = type;
    t->data_len = -1;   /* no data yet is null data */
}

void txn_free(txn_t *t)
{
    free(t->path);
    free(t->data);
    acl_list_free(&t->acl);
    for (int32_t i = 0; i < t->npaths; i++)
        free(t->paths[i]);
    free(t->paths);
    for (int32_t i = 0; i < t->nsubs; i++)
        txn_free(&t->subs[i]);
    free(t->subs);
    txn_init(t, t->type);
}

void txn_result_free(txn_result_t *r)
{
    free(r->path);
    for (int32_t i = 0; i < r->nsubs; i++)
        txn_result_free(&r->subs[i]);
    free(r->subs);
    memset(r, 0, sizeof(*r));
}

int txn_allowed_in_multi(int32_t type)
{
    switch (type) {
    case OP_CREATE:
    case OP_CREATE2:
    case OP_CREATE_CONTAINER:
    case OP_CREATE_TTL:
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
    case OP_SET_DATA:
    case OP_SET_ACL:
    case OP_CHECK:
    case OP_ERROR:
        return 1;
    default:
        return 0;
    }
}

/* ---- writing ---- */

int txn_header_write(buf_t *out, const txn_header_t *hdr)
{
    int rc = 0;
    rc |= jute_put_long(out, hdr->client_id);
    rc |= jute_put_int(out, hdr->cxid);
    rc |= jute_put_long(out, hdr->zxid);
    rc |= jute_put_long(out, hdr->time);
    rc |= jute_put_int(out, hdr->type);
    return rc ? -1 : 0;
}

/* data_len -1 (or a NULL pointer with a positive length) is a null buffer. */
static int put_data(buf_t *out, const txn_t *t)
{
    return jute_put_buffer(out, t->data, t->data_len < 0 ? -1 : t->data_len);
}

static int put_create_head(buf_t *out, const txn_t *t)
{
    int rc = 0;
    rc |= jute_put_string(out, t->path);
    rc |= put_data(out, t);
    rc |= jute_put_acl_list(out, &t->acl);
    return rc;
}

static int put_close_session(buf_t *out, const txn_t *t)
{
    int32_t n = t->npaths > 0 ? t->npaths : 0;
    int rc = jute_put_int(out, n);
    for (int32_t i = 0; i < n; i++)
        rc |= jute_put_string(out, t->paths[i]);
    return rc;
}

static int put_multi(buf_t *out, const txn_t *t)
{
    int32_t n = t->nsubs > 0 ? t->nsubs : 0;
    if (jute_put_int(out, n) < 0)
        return -1;
    buf_t sub;   /* each body is serialized alone, then written as a buffer */
    buf_init(&sub);
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        const txn_t *s = &t->subs[i];
        buf_clear(&sub);
        if (!txn_allowed_in_multi(s->type) || txn_body_write(&sub, s) < 0 || buf_unread(&sub) > INT32_MAX)
            rc = -1;
        else if (jute_put_int(out, s->type) < 0 ||
                 jute_put_buffer(out, buf_read_ptr(&sub), (int32_t)buf_unread(&sub)) < 0)
            rc = -1;
    }
    buf_free(&sub);
    return rc;
}

int txn_body_write(buf_t *out, const txn_t *t)
{
    int rc = 0;
    switch (t->type) {
    case OP_CREATE:
    case OP_CREATE2:
        rc |= put_create_head(out, t);
        rc |= jute_put_bool(out, t->ephemeral);
        rc |= jute_put_int(out, t->parent_cversion);
        break;
    case OP_CREATE_CONTAINER:
        rc |= put_create_head(out, t);
        rc |= jute_put_int(out, t->parent_cversion);
        break;
    case OP_CREATE_TTL:
        rc |= put_create_head(out, t);
        rc |= jute_put_int(out, t->parent_cversion);
        rc |= jute_put_long(out, t->ttl);
        break;
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
        rc |= jute_put_string(out, t->path);
        break;
    case OP_SET_DATA:
    case OP_RECONFIG:   /* ZooKeeper logs reconfig as a SetDataTxn on /zookeeper/config */
        rc |= jute_put_string(out, t->path);
        rc |= put_data(out, t);
        rc |= jute_put_int(out, t->version);
        break;
    case OP_SET_ACL:
        rc |= jute_put_string(out, t->path);
        rc |= jute_put_acl_list(out, &t->acl);
        rc |= jute_put_int(out, t->version);
        break;
    case OP_CHECK:
        rc |= jute_put_string(out, t->path);
        rc |= jute_put_int(out, t->version);
        break;
    case OP_CREATE_SESSION:
        rc |= jute_put_int(out, t->timeout);
        break;
    case OP_CLOSE_SESSION:
        rc |= put_close_session(out, t);
        break;
    case OP_ERROR:
        rc |= jute_put_int(out, t->err);
        break;
    case OP_MULTI:
        rc |= put_multi(out, t);
        break;
    default:
        return -1;
    }
    return rc ? -1 : 0;
}

/* ---- reading ---- */

int txn_header_read(jute_in_t *in, txn_header_t *hdr)
{
    hdr->client_id = jute_get_long(in);
    hdr->cxid = jute_get_int(in);
    hdr->zxid = jute_get_long(in);
    hdr->time = jute_get_long(in);
    hdr->type = jute_get_int(in);
    return in->error ? -1 : 0;
}

/* A path: a ustring that must not be null. */
static void get_path(jute_in_t *in, txn_t *t)
{
    t->path = jute_get_string(in);
    if (!t->path)
        in->error = 1;
}

/* A buffer copied into t->data (NULL with data_len 0 or -1 when empty/null). */
static void get_data(jute_in_t *in, txn_t *t)
{
    const uint8_t *p;
    int32_t n;
    if (jute_get_buffer(in, &p, &n) < 0)
        return;
    t->data_len = n;
    if (n <= 0)
        return;
    t->data = malloc((size_t)n);
    if (!t->data) {
        in->error = 1;
        return;
    }
    memcpy(t->data, p, (size_t)n);
}

static void get_create_head(jute_in_t *in, txn_t *t)
{
    get_path(in, t);
    get_data(in, t);
    if (!in->error)
        jute_get_acl_list(in, &t->acl);
}

static void get_close_session(jute_in_t *in, txn_t *t)
{
    int32_t n = jute_get_vector_count(in, 4);   /* each string has a length */
    if (in->error || n <= 0)
        return;   /* a null vector reads as an empty one */
    t->paths = calloc((size_t)n, sizeof(char *));
    if (!t->paths) {
        in->error = 1;
        return;
    }
    for (int32_t i = 0; i < n && !in->error; i++) {
        t->paths[i] = jute_get_string(in);
        t->npaths = i + 1;
        if (!t->paths[i])
            in->error = 1;
    }
}

static int body_read(jute_in_t *in, int32_t type, txn_t *t, int inside_multi);

/* One Txn{type, buffer}: the buffer must hold exactly one body record. */
static void get_multi_sub(jute_in_t *in, txn_t *sub)
{
    int32_t type = jute_get_int(in);
    const uint8_t *p;
    int32_t n;
    txn_init(sub, type);
    if (jute_get_buffer(in, &p, &n) < 0)
        return;
    if (n < 0 || !txn_allowed_in_multi(type)) {
        in->error = 1;
        return;
    }
    jute_in_t body;
    jute_in_init(&body, p, (size_t)n);
    if (body_read(&body, type, sub, 1) < 0 || jute_remaining(&body) != 0)
        in->error = 1;
}

static void get_multi(jute_in_t *in, txn_t *t)
{
    int32_t n = jute_get_vector_count(in, 8);   /* type + buffer length */
    if (in->error || n <= 0)
        return;
    t->subs = calloc((size_t)n, sizeof(txn_t));
    if (!t->subs) {
        in->error = 1;
        return;
    }
    for (int32_t i = 0; i < n && !in->error; i++) {
        get_multi_sub(in, &t->subs[i]);
        t->nsubs = i + 1;   /* counted even when it failed, so txn_free frees it */
    }
}

static int body_read(jute_in_t *in, int32_t type, txn_t *t, int inside_multi)
{
    txn_init(t, type);
    switch (type) {
    case OP_CREATE:
    case OP_CREATE2:
        get_create_head(in, t);
        t->ephemeral = jute_get_bool(in);
        t->parent_cversion = jute_get_int(in);
        break;
    case OP_CREATE_CONTAINER:
        get_create_head(in, t);
        t->parent_cversion = jute_get_int(in);
        break;
    case OP_CREATE_TTL:
        get_create_head(in, t);
        t->parent_cversion = jute_get_int(in);
        t->ttl = jute_get_long(in);
        break;
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
        get_path(in, t);
        break;
    case OP_SET_DATA:
    case OP_RECONFIG:
        get_path(in, t);
        get_data(in, t);
        t->version = jute_get_int(in);
        break;
    case OP_SET_ACL:
        get_path(in, t);
        if (!in->error)
            jute_get_acl_list(in, &t->acl);
        t->version = jute_get_int(in);
        break;
    case OP_CHECK:
        get_path(in, t);
        t->version = jute_get_int(in);
        break;
    case OP_CREATE_SESSION:
        t->timeout = jute_get_int(in);
        break;
    case OP_CLOSE_SESSION:
        get_close_session(in, t);
        break;
    case OP_ERROR:
        t->err = jute_get_int(in);
        break;
    case OP_MULTI:
        if (inside_multi)
            in->error = 1;
        else
            get_multi(in, t);
        break;
    default:
        in->error = 1;
        break;
    }
    if (in->error) {
        txn_free(t);
        return -1;
    }
    return 0;
}

int txn_body_read(jute_in_t *in, int32_t type, txn_t *t)
{
    return body_read(in, type, t, 0);
}
