/* prep.c -- requests to transactions (ZooKeeper's PrepRequestProcessor).
 *
 * Every write is checked here, in ZooKeeper's order of checks so that a
 * request with several faults gets the same error code, against the tree as
 * it will be once the changes already prepared are applied (the change
 * records). The result is a transaction with every choice made (final
 * sequential name, versions, time, zxid), so applying it is deterministic.
 * A failed request still becomes a transaction, an error one, and takes a
 * zxid, as in ZooKeeper. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "keeper/data/path.h"
#include "base/logging.h"
#include "base/clock.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Requests the keeper makes itself (the container sweep) carry no identity. */
static const auth_set_t no_identities = {NULL, 0};

static const auth_set_t *identities_of(const prep_origin_t *o)
{
    return o && o->auth ? o->auth : &no_identities;
}

/* ZooKeeper's ACL checks, unless skipACL=yes turned them all off. */
static int check_acl(const keeper_t *k, const acl_list_t *acl, int32_t perm, const auth_set_t *ids)
{
    return k->cfg.skip_acl ? ZOK : acl_check(acl, perm, ids);
}

/* ---- the view prep validates against ---- */

typedef struct {
    zstat_t stat;
    int32_t child_count;
    const acl_list_t *acl;   /* valid until its change record or node goes */
} node_view_t;

/* ZOK with *out filled, or ZNONODE. */
static int view_node(keeper_t *k, const char *path, node_view_t *out)
{
    change_record_t *cr = changes_latest(&k->changes, path);
    if (cr) {
        if (!cr->exists)
            return ZNONODE;
        out->stat = cr->stat;
        out->child_count = cr->child_count;
        out->acl = &cr->acl;
        return ZOK;
    }
    const znode_t *n = tree_lookup(k->tree, path);
    if (!n)
        return ZNONODE;
    tree_fill_stat_persisted(n, &out->stat);   /* raw cversion and owner, as ZooKeeper's prep sees them */
    out->child_count = n->nchildren;
    out->acl = n->acl;
    return ZOK;
}

static void add_change(keeper_t *k, const char *path, int64_t zxid, const node_view_t *view)
{
    if (view)
        changes_add(&k->changes, path, zxid, 1, &view->stat, view->child_count, view->acl);
    else
        changes_add(&k->changes, path, zxid, 0, NULL, 0, NULL);
}

void prep_applied(keeper_t *k, int64_t zxid)
{
    changes_applied(&k->changes, zxid);
}

void prep_rollback(keeper_t *k, int64_t zxid)
{
    changes_drop_from_zxid(&k->changes, zxid);
    k->next_zxid = zxid;
}

/* ---- parsed write requests ---- */

typedef struct {
    int32_t type;
    char *path;
    const uint8_t *data;
    int32_t data_len;
    acl_list_t acl;
    int32_t flags;
    int64_t ttl;
    int32_t version;
} write_request_t;

static void write_request_free(write_request_t *r)
{
    free(r->path);
    r->path = NULL;
    acl_list_free(&r->acl);
}

/* Decode the record of one write op. 0, or -1 if malformed. */
static int parse_write(jute_in_t *in, int32_t type, write_request_t *r)
{
    memset(r, 0, sizeof(*r));
    r->type = type;
    r->ttl = -1;
    r->path = jute_get_string(in);
    switch (type) {
    case OP_CREATE:
    case OP_CREATE2:
    case OP_CREATE_CONTAINER:
    case OP_CREATE_TTL:
        jute_get_buffer(in, &r->data, &r->data_len);
        jute_get_acl_list(in, &r->acl);
        r->flags = jute_get_int(in);
        if (type == OP_CREATE_TTL)
            r->ttl = jute_get_long(in);
        break;
    case OP_DELETE:
    case OP_CHECK:
        r->version = jute_get_int(in);
        break;
    case OP_SET_DATA:
        jute_get_buffer(in, &r->data, &r->data_len);
        r->version = jute_get_int(in);
        break;
    case OP_SET_ACL:
        jute_get_acl_list(in, &r->acl);
        r->version = jute_get_int(in);
        break;
    default:
        in->error = 1;
    }
    if (in->error || (!r->path && !in->nul_in_string)) {
        write_request_free(r);
        return -1;
    }
    return 0;   /* path NULL: it held a NUL byte, which prep answers with BADARGUMENTS */
}

/* ---- preparing one op ---- */

static int check_version(int32_t current, int32_t expected)
{
    return expected == -1 || expected == current ? ZOK : ZBADVERSION;
}

static int is_special_path(const char *path)
{
    return !strcmp(path, "/") || !strcmp(path, "/zookeeper") || !strcmp(path, "/zookeeper/quota") ||
           !strcmp(path, TREE_CONFIG_NODE);
}

/* A node whose ephemeral owner is a session (not a container or TTL node). */
static int is_session_ephemeral(int64_t owner)
{
    return owner != 0 && owner != EPHEMERAL_OWNER_CONTAINER && tree_ttl_of(owner) < 0;
}

static char *parent_of(const char *path)
{
    size_t len = path_parent_len(path);
    return strndup(path, len ? len : 1);
}

/* An ephemeral node needs a session the whole ensemble knows, since the
 * leader removes it when that session ends (ZooKeeper's
 * validateCreateRequest): a local session of this keeper that was not
 * upgraded (localSessionsUpgradingEnabled off) gets EPHEMERALONLOCALSESSION,
 * a session unknown here (another member's local one) SESSIONEXPIRED. */
static int check_global_session(const keeper_t *k, int64_t session_id)
{
    const session_t *s = session_find(k->sessions, session_id);
    if (s && s->local)
        return ZEPHEMERALONLOCALSESSION;
    return s && !s->closing ? ZOK : ZSESSIONEXPIRED;
}

static int prep_create(keeper_t *k, const prep_origin_t *c, const txn_header_t *hdr, write_request_t *r, txn_t *txn)
{
    int32_t mode = r->flags;
    if (mode < CREATE_PERSISTENT || mode > CREATE_PERSISTENT_SEQUENTIAL_WITH_TTL)
        return ZBADARGUMENTS;
    int ttl_mode = mode == CREATE_PERSISTENT_WITH_TTL || mode == CREATE_PERSISTENT_SEQUENTIAL_WITH_TTL;
    int sequential = mode == CREATE_PERSISTENT_SEQUENTIAL || mode == CREATE_EPHEMERAL_SEQUENTIAL ||
                     mode == CREATE_PERSISTENT_SEQUENTIAL_WITH_TTL;
    int ephemeral = mode == CREATE_EPHEMERAL || mode == CREATE_EPHEMERAL_SEQUENTIAL;
    if (ttl_mode && !k->cfg.extended_types_enabled)
        return ZUNIMPLEMENTED;   /* ZooKeeper's answer while extendedTypesEnabled is off */
    if (ttl_mode ? (r->ttl <= 0 || r->ttl > TTL_MAX_MS) : r->ttl >= 0)
        return ZBADARGUMENTS;
    if (ephemeral) {
        int global = check_global_session(k, c->session_id);
        if (global != ZOK)
            return global;
    }
    if (!strchr(r->path, '/'))
        return ZBADARGUMENTS;
    acl_list_t acl;
    int err = acl_fixup(&r->acl, identities_of(c), &acl);
    if (err != ZOK)
        return err;
    char *parent_path = parent_of(r->path);
    char *path = NULL;
    node_view_t parent;
    err = view_node(k, parent_path, &parent);
    if (err == ZOK)
        err = check_acl(k, parent.acl, PERM_CREATE, identities_of(c));
    if (err == ZOK) {
        if (sequential) {
            if (asprintf(&path, "%s%010d", r->path, parent.stat.cversion) < 0)
                path = NULL;
        } else {
            path = strdup(r->path);
        }
        if (!path || path_validate(path, 0) < 0)
            err = ZBADARGUMENTS;
    }
    node_view_t existing;
    if (err == ZOK && view_node(k, path, &existing) == ZOK)
        err = ZNODEEXISTS;
    if (err == ZOK && is_session_ephemeral(parent.stat.ephemeral_owner))
        err = ZNOCHILDRENFOREPHEMERALS;
    if (err != ZOK) {
        acl_list_free(&acl);
        free(parent_path);
        free(path);
        return err;
    }

    int32_t type = r->type;
    if (type == OP_CREATE && ttl_mode)
        type = OP_CREATE_TTL;
    txn_init(txn, type);
    txn->path = path;
    txn->data_len = r->data_len;
    if (r->data_len > 0) {
        txn->data = malloc((size_t)r->data_len);
        memcpy(txn->data, r->data, (size_t)r->data_len);
    }
    txn->acl = acl;
    txn->ephemeral = ephemeral && type != OP_CREATE_CONTAINER && type != OP_CREATE_TTL;
    txn->parent_cversion = parent.stat.cversion + 1;
    txn->ttl = r->ttl;

    /* Record what the tree will look like: the parent gains a child ... */
    parent.stat.cversion++;
    parent.stat.pzxid = hdr->zxid;
    parent.child_count++;
    add_change(k, parent_path, hdr->zxid, &parent);
    /* ... and the node exists with a fresh stat. */
    node_view_t node = {0};
    node.stat.czxid = node.stat.mzxid = node.stat.pzxid = hdr->zxid;
    node.stat.ctime = node.stat.mtime = hdr->time;
    if (type == OP_CREATE_CONTAINER)
        node.stat.ephemeral_owner = EPHEMERAL_OWNER_CONTAINER;
    else if (type == OP_CREATE_TTL)
        node.stat.ephemeral_owner = EPHEMERAL_OWNER_TTL_MASK | r->ttl;
    else if (txn->ephemeral)
        node.stat.ephemeral_owner = hdr->client_id;
    node.acl = &txn->acl;
    add_change(k, path, hdr->zxid, &node);
    free(parent_path);
    return ZOK;
}

static int prep_delete(keeper_t *k, const prep_origin_t *c, const txn_header_t *hdr, write_request_t *r, txn_t *txn)
{
    if (!strchr(r->path, '/') || is_special_path(r->path))
        return ZBADARGUMENTS;
    char *parent_path = parent_of(r->path);
    node_view_t parent, node;
    int err = view_node(k, parent_path, &parent);
    if (err == ZOK && r->type == OP_DELETE)
        err = check_acl(k, parent.acl, PERM_DELETE, identities_of(c));
    if (err == ZOK)
        err = view_node(k, r->path, &node);
    if (err == ZOK && r->type == OP_DELETE)
        err = check_version(node.stat.version, r->version);
    if (err == ZOK && node.child_count > 0)
        err = ZNOTEMPTY;
    if (err == ZOK && r->type == OP_DELETE_CONTAINER && !(node.stat.ephemeral_owner == EPHEMERAL_OWNER_CONTAINER ||
                                                           tree_ttl_of(node.stat.ephemeral_owner) >= 0))
        err = ZBADVERSION;   /* ZooKeeper's answer for a non-container here */
    if (err != ZOK) {
        free(parent_path);
        return err;
    }
    txn_init(txn, r->type);
    txn->path = strdup(r->path);
    parent.child_count--;
    parent.stat.pzxid = hdr->zxid;
    add_change(k, parent_path, hdr->zxid, &parent);
    add_change(k, r->path, hdr->zxid, NULL);
    free(parent_path);
    return ZOK;
}

static int prep_set_data(keeper_t *k, const prep_origin_t *c, const txn_header_t *hdr, write_request_t *r, txn_t *txn)
{
    if (path_validate(r->path, 0) < 0)
        return ZBADARGUMENTS;
    node_view_t node;
    int err = view_node(k, r->path, &node);
    if (err == ZOK)
        err = check_acl(k, node.acl, PERM_WRITE, identities_of(c));
    if (err == ZOK)
        err = check_version(node.stat.version, r->version);
    if (err != ZOK)
        return err;
    txn_init(txn, OP_SET_DATA);
    txn->path = strdup(r->path);
    txn->data_len = r->data_len;
    if (r->data_len > 0) {
        txn->data = malloc((size_t)r->data_len);
        memcpy(txn->data, r->data, (size_t)r->data_len);
    }
    txn->version = node.stat.version + 1;
    node.stat.version++;
    node.stat.mtime = hdr->time;
    node.stat.mzxid = hdr->zxid;
    node.stat.data_length = r->data_len > 0 ? r->data_len : 0;
    add_change(k, r->path, hdr->zxid, &node);
    return ZOK;
}

static int prep_set_acl(keeper_t *k, const prep_origin_t *c, const txn_header_t *hdr, write_request_t *r, txn_t *txn)
{
    if (path_validate(r->path, 0) < 0)
        return ZBADARGUMENTS;
    acl_list_t acl;
    int err = acl_fixup(&r->acl, identities_of(c), &acl);
    if (err != ZOK)
        return err;
    node_view_t node;
    err = view_node(k, r->path, &node);
    if (err == ZOK)
        err = check_acl(k, node.acl, PERM_ADMIN, identities_of(c));
    if (err == ZOK)
        err = check_version(node.stat.aversion, r->version);
    if (err != ZOK) {
        acl_list_free(&acl);
        return err;
    }
    txn_init(txn, OP_SET_ACL);
    txn->path = strdup(r->path);
    txn->acl = acl;
    txn->version = node.stat.aversion + 1;
    node.stat.aversion++;
    node.acl = &txn->acl;
    add_change(k, r->path, hdr->zxid, &node);
    return ZOK;
}

static int prep_check(keeper_t *k, const prep_origin_t *c, write_request_t *r, txn_t *txn)
{
    if (path_validate(r->path, 0) < 0)
        return ZBADARGUMENTS;
    node_view_t node;
    int err = view_node(k, r->path, &node);
    if (err == ZOK)
        err = check_acl(k, node.acl, PERM_READ, identities_of(c));
    if (err == ZOK)
        err = check_version(node.stat.version, r->version);
    if (err != ZOK)
        return err;
    txn_init(txn, OP_CHECK);
    txn->path = strdup(r->path);
    txn->version = node.stat.version + 1;
    return ZOK;
}

static int prep_op(keeper_t *k, const prep_origin_t *c, const txn_header_t *hdr, write_request_t *r, txn_t *txn)
{
    if (!r->path)
        return ZBADARGUMENTS;
    switch (r->type) {
    case OP_CREATE:
    case OP_CREATE2:
    case OP_CREATE_CONTAINER:
    case OP_CREATE_TTL:
        return prep_create(k, c, hdr, r, txn);
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
        return prep_delete(k, c, hdr, r, txn);
    case OP_SET_DATA:
        return prep_set_data(k, c, hdr, r, txn);
    case OP_SET_ACL:
        return prep_set_acl(k, c, hdr, r, txn);
    case OP_CHECK:
        return prep_check(k, c, r, txn);
    default:
        return ZMARSHALLINGERROR;
    }
}

/* ---- multi ---- */

#define MULTI_MAX_OPS 65536

static int is_multi_write_op(int32_t type)
{
    return type == OP_CREATE || type == OP_CREATE2 || type == OP_CREATE_CONTAINER || type == OP_CREATE_TTL ||
           type == OP_DELETE || type == OP_SET_DATA || type == OP_CHECK;
}

/* Inside a multi ZooKeeper rebuilds each create op from its flags
 * (Op.create), so create2 becomes create, and the mode alone decides
 * between create, createContainer and createTTL. */
static int32_t multi_create_type(int32_t type, int32_t flags)
{
    if (type != OP_CREATE && type != OP_CREATE2 && type != OP_CREATE_CONTAINER && type != OP_CREATE_TTL)
        return type;
    if (flags == CREATE_PERSISTENT_WITH_TTL || flags == CREATE_PERSISTENT_SEQUENTIAL_WITH_TTL)
        return OP_CREATE_TTL;
    return flags == CREATE_CONTAINER ? OP_CREATE_CONTAINER : OP_CREATE;
}

/* Decode every op first, as ZooKeeper's MultiOperationRecord does: a
 * malformed multi fails as a whole. Returns the op count or -1. */
static int parse_multi(jute_in_t *in, write_request_t **out)
{
    write_request_t *ops = NULL;
    int n = 0, cap = 0;
    for (;;) {
        int32_t type = jute_get_int(in);
        int done = jute_get_bool(in);
        (void)jute_get_int(in);
        if (in->error)
            break;
        if (done) {
            *out = ops;
            return n;
        }
        if (!is_multi_write_op(type) || n >= MULTI_MAX_OPS) {
            in->error = 1;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            write_request_t *x = realloc(ops, (size_t)cap * sizeof(*x));
            if (!x) {
                in->error = 1;
                break;
            }
            ops = x;
        }
        if (parse_write(in, type, &ops[n]) < 0)
            break;
        ops[n].type = multi_create_type(type, ops[n].flags);
        n++;
    }
    for (int i = 0; i < n; i++)
        write_request_free(&ops[i]);
    free(ops);
    return -1;
}

/* Every op shares the multi's zxid. After the first failure the remaining
 * ops are not tried: the failed op keeps its error, later ones get
 * RUNTIMEINCONSISTENCY, earlier ones are rewritten when applied. */
static void prep_multi(keeper_t *k, const prep_origin_t *c, txn_header_t *hdr, write_request_t *ops, int n, txn_t *txn)
{
    txn_init(txn, OP_MULTI);
    txn->subs = xcalloc((size_t)(n > 0 ? n : 1), sizeof(txn_t));
    size_t mark = k->changes.count;
    int failed = 0;
    for (int i = 0; i < n; i++) {
        txn_t *sub = &txn->subs[i];
        int err = failed ? ZRUNTIMEINCONSISTENCY : prep_op(k, c, hdr, &ops[i], sub);
        if (err != ZOK) {
            if (!failed) {
                failed = 1;
                changes_drop_newest(&k->changes, mark);   /* roll back this multi's records */
            }
            txn_free(sub);
            txn_init(sub, OP_ERROR);
            sub->err = err;
        }
        txn->nsubs = i + 1;
    }
    if (failed) {
        /* ZooKeeper stores a failed multi with every op as an error txn:
         * the ones that had succeeded become ErrorTxn(0). */
        for (int i = 0; i < n; i++) {
            if (txn->subs[i].type != OP_ERROR) {
                txn_free(&txn->subs[i]);
                txn_init(&txn->subs[i], OP_ERROR);
                txn->subs[i].err = ZOK;
            }
        }
    }
}

/* ---- entry points ---- */

static void begin_txn(keeper_t *k, int64_t session_id, int32_t cxid, int32_t type, txn_header_t *hdr)
{
    hdr->client_id = session_id;
    hdr->cxid = cxid;
    hdr->zxid = k->next_zxid++;
    hdr->time = (int64_t)clock_wall_ms();
    hdr->type = type;
}

static void make_error(txn_header_t *hdr, txn_t *txn, int err)
{
    hdr->type = OP_ERROR;
    txn_init(txn, OP_ERROR);
    txn->err = err;
}

static int is_ephemeral_create(const write_request_t *r)
{
    return (r->type == OP_CREATE || r->type == OP_CREATE2) &&
           (r->flags == CREATE_EPHEMERAL || r->flags == CREATE_EPHEMERAL_SEQUENTIAL);
}

int prep_makes_ephemeral(int32_t type, const uint8_t *body, size_t len)
{
    jute_in_t in;
    jute_in_init(&in, body, len);
    write_request_t one, *ops = NULL;
    int n = 0, found = 0;
    if (type == OP_CREATE || type == OP_CREATE2) {
        if (parse_write(&in, type, &one) < 0)
            return 0;
        ops = &one;
        n = 1;
    } else if (type == OP_MULTI) {
        n = parse_multi(&in, &ops);
    }
    for (int i = 0; i < n; i++) {
        found |= is_ephemeral_create(&ops[i]);
        write_request_free(&ops[i]);
    }
    if (ops != &one)
        free(ops);
    return found;
}

/* ZooKeeper's checkSession: ZSESSIONEXPIRED for a session that is not
 * alive; on a leader, ZSESSIONMOVED for a write from a member other than
 * the one whose client the session is.
 *
 * An unknown session may be a local session of the member that forwarded
 * the write (localSessionsEnabled): ZooKeeper's
 * LeaderSessionTracker.checkSession lets those through unless the id
 * carries this keeper's own server id, whose local sessions it knows.
 *
 * The session moves when another member revalidates it (its client
 * reconnected there, leader.c); a write still sent on the old connection,
 * in flight when the client moved, must not be applied after the client's
 * newer writes through the new member (ZOOKEEPER-710). A session whose
 * member is not known yet (created or restored before this leader led)
 * belongs to the first that writes. */
static int check_session(keeper_t *k, const prep_origin_t *c)
{
    session_t *s = session_find(k->sessions, c->session_id);
    if (!s)
        return k->cfg.local_sessions_enabled && session_server_id(c->session_id) != k->cfg.server_id
                   ? ZOK : ZSESSIONEXPIRED;
    if (s->closing)
        return ZSESSIONEXPIRED;
    if (k->role != ROLE_LEADING || s->local)
        return ZOK;
    if (s->served_by == 0)
        s->served_by = c->server_id;
    return s->served_by == c->server_id ? ZOK : ZSESSIONMOVED;
}

/* A reconfig (ZooKeeper 3.8's PrepRequestProcessor, case reconfig), its
 * checks in ZooKeeper's order so a request with several faults gets the same
 * code: the record; reconfigEnabled; the session; standalone; a reconfig
 * still pending; curConfigId against the last proposed version; the new
 * membership's strings and its voters (ensemble_config.c; at least 2 with
 * standaloneEnabled, ZooKeeper's default); a quorum of it
 * connected and synced to this leader; WRITE on /zookeeper/config (checked
 * last, as there). The txn is ZooKeeper's: type reconfig, a SetDataTxn of
 * /zookeeper/config with the new configuration's text and version -1. */
static int prep_reconfig(keeper_t *k, const prep_origin_t *c, const txn_header_t *hdr, jute_in_t *in, txn_t *txn)
{
    char *joining = jute_get_string(in);
    char *leaving = jute_get_string(in);
    char *new_members = jute_get_string(in);
    int64_t cur_config_id = jute_get_long(in);
    ensemble_config_t *next = NULL;
    char *text = NULL;
    int err = ZOK;
    if (in->error || in->nul_in_string) {
        log_warn("malformed reconfig request from %s", c->who);
        err = ZMARSHALLINGERROR;
    } else if (!k->reconfig_enabled) {
        log_warn("reconfig requested by %s, but reconfigEnabled is off", c->who);
        err = ZRECONFIGDISABLED;
    } else if ((err = check_session(k, c)) != ZOK) {
        /* ZSESSIONEXPIRED or ZSESSIONMOVED */
    } else if (k->role != ROLE_LEADING || k->config.n == 0) {
        err = ZUNIMPLEMENTED;   /* standalone: ZooKeeper does not reconfigure one server */
    } else if (k->last_seen.version != k->config.version) {
        err = ZRECONFIGINPROGRESS;
    } else if (cur_config_id != -1 && cur_config_id != k->last_seen.version) {
        log_info("reconfig from %s: from version %llx, but the last seen version is %llx", c->who,
                 (unsigned long long)cur_config_id, (unsigned long long)k->last_seen.version);
        err = ZBADVERSION;
    }
    char why[300] = "";
    if (err == ZOK && !(next = malloc(sizeof(*next))))
        err = ZSYSTEMERROR;
    if (err == ZOK) {
        /* newMembers given: the non-incremental form, whatever else is set. */
        err = new_members ? ensemble_config_nonincremental(new_members, next, why, sizeof(why))
                          : ensemble_config_incremental(&k->last_seen, joining, leaving, next, why, sizeof(why));
        if (err == ZOK && k->cfg.standalone_enabled && ensemble_config_voters(next) < 2) {
            snprintf(why, sizeof(why), "Reconfig failed - new configuration must include at least 2 followers");
            err = ZBADARGUMENTS;
        }
        if (err != ZOK)
            log_info("reconfig from %s refused (%d): %s", c->who, err, why);
    }
    if (err == ZOK) {
        next->version = hdr->zxid;
        if (!leader_quorum_synced(k, next)) {
            log_warn("reconfig from %s: there must be a connected and synced quorum in the new configuration",
                     c->who);
            err = ZNEWCONFIGNOQUORUM;
        }
    }
    node_view_t node;
    if (err == ZOK)
        err = view_node(k, TREE_CONFIG_NODE, &node);
    if (err == ZOK)
        err = check_acl(k, node.acl, PERM_WRITE, identities_of(c));
    /* kipper's own bound (keeper_config.c: session ids carry the server id in
     * their top byte): a member it could not restart with is refused rather
     * than written into every member's dynamic file. Checked after all of
     * ZooKeeper's checks, so a request ZooKeeper refuses gets ZooKeeper's
     * answer (kazoo's test_no_super_auth joins server.999 without the right). */
    for (int i = 0; err == ZOK && i < next->n; i++)
        if (next->members[i].id < 1 || next->members[i].id > ENSEMBLE_MAX_SERVER_ID) {
            log_info("reconfig from %s refused: server.%d: kipper takes server ids from 1 to 255", c->who,
                     next->members[i].id);
            err = ZBADARGUMENTS;
        }
    if (err == ZOK && !(text = malloc(ENSEMBLE_CONFIG_TEXT_MAX)))
        err = ZSYSTEMERROR;
    if (err == ZOK) {
        size_t len = ensemble_config_format(next, text, ENSEMBLE_CONFIG_TEXT_MAX);
        txn_init(txn, OP_RECONFIG);
        txn->path = strdup(TREE_CONFIG_NODE);
        txn->data = (uint8_t *)text;
        txn->data_len = (int32_t)len;
        txn->version = -1;
        text = NULL;
        node.stat.version = -1;
        node.stat.mtime = hdr->time;
        node.stat.mzxid = hdr->zxid;
        node.stat.data_length = (int32_t)len;
        add_change(k, TREE_CONFIG_NODE, hdr->zxid, &node);
        /* Proposed: a second reconfig is refused until this one is active. */
        k->last_seen = *next;
        log_info("reconfig from %s: proposing configuration %llx with %d members (%d voters)", c->who,
                 (unsigned long long)next->version, next->n, ensemble_config_voters(next));
    }
    free(text);
    free(next);
    free(joining);
    free(leaving);
    free(new_members);
    return err;
}

void prep_write(keeper_t *k, const prep_origin_t *c, int32_t type, int32_t cxid, jute_in_t *in, txn_header_t *hdr,
                txn_t *txn)
{
    begin_txn(k, c->session_id, cxid, type, hdr);
    if (type == OP_RECONFIG) {   /* its own order of checks, the session's among them */
        int err = prep_reconfig(k, c, hdr, in, txn);
        if (err != ZOK)
            make_error(hdr, txn, err);
        return;
    }
    int session_err = check_session(k, c);
    if (session_err != ZOK) {
        make_error(hdr, txn, session_err);
        return;
    }
    if (type == OP_MULTI) {
        write_request_t *ops = NULL;
        int n = parse_multi(in, &ops);
        if (n < 0) {
            log_warn("malformed multi request from %s", c->who);
            make_error(hdr, txn, ZMARSHALLINGERROR);
            return;
        }
        prep_multi(k, c, hdr, ops, n, txn);
        for (int i = 0; i < n; i++)
            write_request_free(&ops[i]);
        free(ops);
        return;
    }
    write_request_t r;
    int err;
    if (type == OP_DELETE_CONTAINER) {
        /* The whole request body is the path, as ZooKeeper reads it. */
        memset(&r, 0, sizeof(r));
        r.type = type;
        r.path = strndup((const char *)in->data + in->pos, in->len - in->pos);
        err = r.path && strlen(r.path) == in->len - in->pos ? ZOK : ZBADARGUMENTS;
    } else {
        err = parse_write(in, type, &r) < 0 ? ZMARSHALLINGERROR : ZOK;
        if (err != ZOK)
            log_warn("malformed request (type %d) from %s", type, c->who);
    }
    if (err == ZOK)
        err = prep_op(k, c, hdr, &r, txn);
    if (err != ZOK)
        make_error(hdr, txn, err);
    write_request_free(&r);
}

void prep_create_session(keeper_t *k, int64_t session_id, int32_t timeout, txn_header_t *hdr, txn_t *txn)
{
    begin_txn(k, session_id, 0, OP_CREATE_SESSION, hdr);
    txn_init(txn, OP_CREATE_SESSION);
    txn->timeout = timeout;
}

typedef struct {
    char **paths;
    int32_t count, cap;
} path_list_t;

static void path_list_add(path_list_t *pl, const char *path)
{
    for (int32_t i = 0; i < pl->count; i++)
        if (strcmp(pl->paths[i], path) == 0)
            return;
    if (pl->count == pl->cap) {
        pl->cap = pl->cap ? pl->cap * 2 : 8;
        pl->paths = xrealloc(pl->paths, (size_t)pl->cap * sizeof(char *));
    }
    pl->paths[pl->count++] = strdup(path);
}

static int collect_ephemeral(const znode_t *n, void *arg)
{
    path_list_add(arg, n->path);
    return 0;
}

void prep_close_session(keeper_t *k, int64_t session_id, txn_header_t *hdr, txn_t *txn)
{
    begin_txn(k, session_id, 0, OP_CLOSE_SESSION, hdr);
    txn_init(txn, OP_CLOSE_SESSION);
    path_list_t pl = {NULL, 0, 0};
    tree_each_session_ephemeral(k->tree, session_id, collect_ephemeral, &pl);
    /* Ephemerals prepared but not applied yet count too; pending deletes don't. */
    for (const change_record_t *cr = k->changes.oldest; cr; cr = cr->newer) {
        if (cr->exists && cr->stat.ephemeral_owner == session_id)
            path_list_add(&pl, cr->path);
    }
    int32_t kept = 0;
    for (int32_t i = 0; i < pl.count; i++) {
        change_record_t *cr = changes_latest(&k->changes, pl.paths[i]);
        if (cr && !cr->exists) {
            free(pl.paths[i]);
            continue;
        }
        pl.paths[kept++] = pl.paths[i];
    }
    for (int32_t i = 0; i < kept; i++)
        add_change(k, pl.paths[i], hdr->zxid, NULL);
    txn->paths = pl.paths;
    txn->npaths = kept;
    session_t *s = session_find(k->sessions, session_id);
    if (s)
        s->closing = 1;
}

void prep_delete_container(keeper_t *k, const char *path, txn_header_t *hdr, txn_t *txn)
{
    begin_txn(k, 0, 0, OP_DELETE_CONTAINER, hdr);
    write_request_t r;
    memset(&r, 0, sizeof(r));
    r.type = OP_DELETE_CONTAINER;
    r.path = strdup(path);
    int err = r.path ? prep_delete(k, NULL, hdr, &r, txn) : ZBADARGUMENTS;
    if (err != ZOK)
        make_error(hdr, txn, err);
    free(r.path);
}
