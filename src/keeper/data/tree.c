/* tree.c -- see tree.h.
 *
 * Three indexes over the same znodes:
 *  - path -> znode: a base/hashmap table keyed with SipHash-1-3 under a
 *    per-tree random key, so client-chosen paths cannot be crafted to
 *    collide;
 *  - the tree itself: parent pointers and a per-node children array, with
 *    swap-removal through index_in_parent;
 *  - per-session ephemeral lists (doubly linked through session_next/prev,
 *    heads in a table keyed by session id). Container and TTL
 *    nodes never belong to a session, so the same links chain them on one
 *    list for tree_each_expired_container.
 * ACLs are interned, as ZooKeeper's ReferenceCountedACLCache does: nodes
 * with equal ACLs share one reference-counted copy (a znode's acl is a view
 * of it), since almost every node carries one of a handful of ACLs. Each
 * copy has an id, as the cache's longs, by which a snapshot names it.
 * A snapshot is read back through tree_restore_node, which builds the same
 * indexes from nodes given parents first.
 * Nothing here recurses over the tree: a path of 1 MiB is 500k levels deep.
 *
 * ZooKeeper details this file reproduces (DataTree.java, 3.8):
 *  - znode.cversion is ZooKeeper's persisted cversion: it counts child
 *    creates only (a delete changes just the parent's pzxid). Clients see
 *    2 * cversion - numChildren (DataNode.copyStat), which also rises by one
 *    per delete; "/" and "/zookeeper" therefore show -1 and -2 when fresh.
 *  - Clients see ephemeralOwner 0 for container and TTL nodes.
 *  - approximateDataSize counts paths in UTF-16 units plus data bytes; its
 *    root alias "" adds the root's data once more, which is 0 since the
 *    root starts empty and ZooKeeper only adjusts the "/" entry afterwards. */
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "base/hashmap.h"
#include "base/jstring.h"

typedef struct acl_entry {
    hmap_node_t node;   /* in tree.acls, under acl_hash */
    acl_list_t acl;     /* the copy every node with this ACL points at */
    int64_t id;         /* stable while the entry lives: snapshots name ACLs by it */
    size_t refs;
} acl_entry_t;

typedef struct session_eph {
    hmap_node_t node;   /* in tree.sessions, by session id */
    int64_t session_id;
    znode_t *head;      /* newest first */
    size_t count;
} session_eph_t;

struct tree {
    watch_manager_t *wm;   /* not owned; may be NULL */
    znode_t *root;

    hmap_t paths;          /* path -> znode (znode.path_node); every real znode, root included */
    hmap_key_t path_key;   /* for path_hash */

    hmap_t sessions;       /* session id -> its ephemerals */
    size_t ephemeral_count;

    znode_t *special_head;   /* container and TTL nodes */

    hmap_t acls;           /* interned ACLs */
    int64_t last_acl_id;   /* ZooKeeper's aclIndex: ids start at 1 */

    int64_t last_zxid;
    int64_t data_size;
};

enum { INITIAL_BUCKETS = 64, INITIAL_SESSION_BUCKETS = 16, INITIAL_ACL_BUCKETS = 16, MIN_CHILDREN_CAP = 4 };

/* ---- hashing ---- */

static uint64_t path_hash(const tree_t *tree, const char *path, size_t len)
{
    return hmap_hash_bytes(&tree->path_key, path, len);
}

/* ---- small helpers ---- */

static int32_t add_wrapping(int32_t a, int32_t b)   /* Java int arithmetic */
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* ZooKeeper's getNodeSize: path length plus data length. */
static int64_t node_size(const znode_t *n)
{
    return (int64_t)jstring_utf16_length(n->path, strlen(n->path)) + (n->data_len > 0 ? n->data_len : 0);
}

typedef enum { OWNER_NONE, OWNER_SESSION, OWNER_CONTAINER, OWNER_TTL } owner_kind_t;

static owner_kind_t owner_kind(int64_t owner)
{
    if (owner == 0)
        return OWNER_NONE;
    if (owner == EPHEMERAL_OWNER_CONTAINER)
        return OWNER_CONTAINER;
    if (tree_ttl_of(owner) >= 0)
        return OWNER_TTL;
    return OWNER_SESSION;
}

int64_t tree_ttl_of(int64_t ephemeral_owner)
{
    /* EphemeralType: high byte 0xFF marks an extended type, the next two
     * bytes say which (0 = TTL), the low 40 bits carry the value. */
    const uint64_t extended = (uint64_t)EPHEMERAL_OWNER_TTL_MASK;
    const uint64_t feature_bits = 0x00FFFF0000000000ULL;
    uint64_t u = (uint64_t)ephemeral_owner;
    if ((u & extended) != extended || (u & feature_bits) != 0)
        return -1;
    return (int64_t)(u & (uint64_t)TTL_MAX_MS);
}

/* ---- znodes ---- */

/* data_len as stored: -1 (null) when the txn has no bytes for a positive length. */
static int32_t stored_data_len(const uint8_t *data, int32_t len)
{
    if (len > 0 && !data)
        return -1;
    return len < 0 ? -1 : len;
}

/* The path and the data a node is created with live in the same allocation
 * as the node: one allocation per znode rather than two, which is a tenth
 * of a small node's memory. A later setData no longer than the data in
 * place is written there (set_data); a longer one gets an allocation of
 * its own. */
static znode_t *node_new(const char *path, size_t len, const uint8_t *data, int32_t data_len)
{
    int32_t stored = stored_data_len(data, data_len);
    size_t bytes = stored > 0 ? (size_t)stored : 0;
    znode_t *n = calloc(1, sizeof(*n) + len + 1 + bytes);
    if (!n)
        return NULL;
    n->path = (char *)(n + 1);
    memcpy(n->path, path, len);
    n->path[len] = '\0';
    n->name_off = (uint32_t)(path_basename(n->path) - n->path);
    n->data_len = stored;
    if (bytes) {
        n->data = (uint8_t *)n->path + len + 1;
        memcpy(n->data, data, bytes);
    }
    return n;
}

/* Are n's data bytes in its own allocation (node_new)? */
static int node_data_inline(const znode_t *n)
{
    return n->data && n->data == (const uint8_t *)n->path + strlen(n->path) + 1;
}

/* The node's ACL is the ACL cache's; release it first (acl_release). */
static void node_free(znode_t *n)
{
    if (!node_data_inline(n))
        free(n->data);
    free(n->children);
    free(n);
}

/* A malloc'd copy of len bytes, or NULL for len <= 0; *ok = 0 if out of memory. */
static uint8_t *copy_data(const uint8_t *data, int32_t len, int *ok)
{
    *ok = 1;
    if (len <= 0 || !data)
        return NULL;
    uint8_t *p = malloc((size_t)len);
    if (!p) {
        *ok = 0;
        return NULL;
    }
    memcpy(p, data, (size_t)len);
    return p;
}

/* ---- path hash table ---- */

typedef struct {
    const char *path;
    size_t len;
} path_key_t;

static int path_matches(const hmap_node_t *hn, const void *key)
{
    const znode_t *n = HMAP_ENTRY(hn, znode_t, path_node);
    const path_key_t *k = key;
    /* strncmp stops at n->path's end, so n->path[len] is in bounds when equal */
    return strncmp(n->path, k->path, k->len) == 0 && n->path[k->len] == '\0';
}

static znode_t *lookup_hashed(const tree_t *tree, const char *path, size_t len, uint64_t hash)
{
    path_key_t k = {path, len};
    hmap_node_t *hn = hmap_find(&tree->paths, hash, path_matches, &k);
    return hn ? HMAP_ENTRY(hn, znode_t, path_node) : NULL;
}

static znode_t *lookup_len(const tree_t *tree, const char *path, size_t len)
{
    return lookup_hashed(tree, path, len, path_hash(tree, path, len));
}

/* ---- the ACL cache ---- */

static uint64_t acl_hash(const tree_t *tree, const acl_list_t *acl)
{
    uint64_t h = (uint64_t)acl->count;
    for (int32_t i = 0; i < acl->count; i++) {
        const acl_t *a = &acl->items[i];
        h = hmap_hash_u64(h ^ (uint64_t)(uint32_t)a->perms);
        h = hmap_hash_u64(h ^ hmap_hash_bytes(&tree->path_key, a->scheme, strlen(a->scheme)));
        h = hmap_hash_u64(h ^ hmap_hash_bytes(&tree->path_key, a->id, strlen(a->id)));
    }
    return h;
}

static int acl_content_matches(const hmap_node_t *hn, const void *acl)
{
    return acl_list_equal(&HMAP_ENTRY(hn, acl_entry_t, node)->acl, acl);
}

/* Only well-formed lists are interned (jute never yields NULL strings, but
 * a txn built in memory might). */
static int acl_list_valid(const acl_list_t *acl)
{
    if (acl->count > 0 && !acl->items)
        return 0;
    for (int32_t i = 0; i < acl->count; i++)
        if (!acl->items[i].scheme || !acl->items[i].id)
            return 0;
    return 1;
}

/* Point *out at the shared copy of acl, making one if needed. 0 or -1 (memory).
 * An empty ACL is interned like any other (as ZooKeeper's cache does), so
 * every node's ACL has an id a snapshot can name. */
static int acl_acquire(tree_t *tree, const acl_list_t *acl, const acl_list_t **out)
{
    *out = NULL;
    uint64_t h = acl_hash(tree, acl);
    hmap_node_t *hn = hmap_find(&tree->acls, h, acl_content_matches, acl);
    acl_entry_t *e = hn ? HMAP_ENTRY(hn, acl_entry_t, node) : NULL;
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e || acl_list_copy(&e->acl, acl) < 0) {
            free(e);
            return -1;
        }
        e->id = ++tree->last_acl_id;
        hmap_insert(&tree->acls, &e->node, h);
    }
    e->refs++;
    *out = &e->acl;
    return 0;
}

/* The entry a node's ACL pointer points into. */
static acl_entry_t *acl_entry_of(const acl_list_t *acl)
{
    return HMAP_ENTRY(acl, acl_entry_t, acl);
}

/* Drop one node's use of a shared ACL (one it acquired); the last user frees it. */
static void acl_release(tree_t *tree, const acl_list_t **acl)
{
    if (!*acl)
        return;
    acl_entry_t *e = acl_entry_of(*acl);
    if (--e->refs == 0) {
        hmap_remove(&tree->acls, &e->node);
        acl_list_free(&e->acl);
        free(e);
    }
    *acl = NULL;
}

/* ---- children ---- */

static int children_reserve(znode_t *parent)
{
    if (parent->nchildren < parent->children_cap)
        return 0;
    if (parent->children_cap > INT32_MAX / 2)
        return -1;
    int32_t cap = parent->children_cap ? parent->children_cap * 2 : MIN_CHILDREN_CAP;
    znode_t **c = realloc(parent->children, (size_t)cap * sizeof(znode_t *));
    if (!c)
        return -1;
    parent->children = c;
    parent->children_cap = cap;
    return 0;
}

static void children_add(znode_t *parent, znode_t *child)   /* after children_reserve */
{
    child->parent = parent;
    child->index_in_parent = parent->nchildren;
    parent->children[parent->nchildren++] = child;
}

static void children_remove(znode_t *parent, znode_t *child)
{
    int32_t i = child->index_in_parent;
    znode_t *last = parent->children[--parent->nchildren];
    parent->children[i] = last;
    last->index_in_parent = i;
    child->parent = NULL;
    /* give memory back after mass deletes; shrinking realloc failing is harmless */
    if (parent->nchildren == 0) {
        free(parent->children);
        parent->children = NULL;
        parent->children_cap = 0;
    } else if (parent->children_cap > MIN_CHILDREN_CAP && parent->nchildren <= parent->children_cap / 4) {
        int32_t cap = parent->children_cap / 2;
        znode_t **c = realloc(parent->children, (size_t)cap * sizeof(znode_t *));
        if (c) {
            parent->children = c;
            parent->children_cap = cap;
        }
    }
}

/* ---- session ephemeral lists and the container/TTL list ---- */

static int ephemerals_match(const hmap_node_t *hn, const void *session_id)
{
    return HMAP_ENTRY(hn, session_eph_t, node)->session_id == *(const int64_t *)session_id;
}

static session_eph_t *ephemerals_of(const tree_t *tree, int64_t session_id)
{
    uint64_t hash = hmap_hash_u64((uint64_t)session_id);
    hmap_node_t *hn = hmap_find(&tree->sessions, hash, ephemerals_match, &session_id);
    return hn ? HMAP_ENTRY(hn, session_eph_t, node) : NULL;
}

static session_eph_t *ephemerals_get_or_add(tree_t *tree, int64_t session_id)
{
    session_eph_t *e = ephemerals_of(tree, session_id);
    if (e)
        return e;
    e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->session_id = session_id;
    hmap_insert(&tree->sessions, &e->node, hmap_hash_u64((uint64_t)session_id));
    return e;
}

static void ephemerals_drop(tree_t *tree, session_eph_t *e)
{
    hmap_remove(&tree->sessions, &e->node);
    free(e);
}

static void list_push(znode_t **head, znode_t *n)
{
    n->session_prev = NULL;
    n->session_next = *head;
    if (*head)
        (*head)->session_prev = n;
    *head = n;
}

/* Unlink n if it is on the list; returns 1 if it was. */
static int list_unlink(znode_t **head, znode_t *n)
{
    if (*head != n && !n->session_prev)
        return 0;
    if (n->session_prev)
        n->session_prev->session_next = n->session_next;
    else
        *head = n->session_next;
    if (n->session_next)
        n->session_next->session_prev = n->session_prev;
    n->session_next = n->session_prev = NULL;
    return 1;
}

static void ephemeral_link(tree_t *tree, session_eph_t *e, znode_t *n)
{
    list_push(&e->head, n);
    e->count++;
    tree->ephemeral_count++;
}

static void ephemeral_unlink(tree_t *tree, znode_t *n)
{
    session_eph_t *e = ephemerals_of(tree, n->ephemeral_owner);
    if (!e || !list_unlink(&e->head, n))
        return;
    e->count--;
    tree->ephemeral_count--;
    if (e->count == 0)
        ephemerals_drop(tree, e);
}

/* Take n off whichever owner list it is on. */
static void owner_unlink(tree_t *tree, znode_t *n)
{
    switch (owner_kind(n->ephemeral_owner)) {
    case OWNER_SESSION:
        ephemeral_unlink(tree, n);
        break;
    case OWNER_CONTAINER:
    case OWNER_TTL:
        list_unlink(&tree->special_head, n);
        break;
    case OWNER_NONE:
        break;
    }
}

/* ---- creation and destruction ---- */

static int acl_single(acl_list_t *acl, int32_t perms, const char *scheme, const char *id)
{
    acl->items = calloc(1, sizeof(acl_t));
    if (!acl->items)
        return -1;
    acl->count = 1;
    acl->items[0].perms = perms;
    acl->items[0].scheme = strdup(scheme);
    acl->items[0].id = strdup(id);
    return acl->items[0].scheme && acl->items[0].id ? 0 : -1;
}

/* One of ZooKeeper's built-in nodes: empty data, all-zero stat, world:anyone. */
static znode_t *add_system_node(tree_t *tree, znode_t *parent, const char *path, int32_t perms)
{
    znode_t *n = node_new(path, strlen(path), NULL, 0);
    if (!n)
        return NULL;
    acl_list_t acl = {NULL, 0};
    int rc = acl_single(&acl, perms, "world", "anyone");
    if (rc == 0)
        rc = acl_acquire(tree, &acl, &n->acl);
    acl_list_free(&acl);
    if (rc == 0 && parent && children_reserve(parent) < 0) {
        acl_release(tree, &n->acl);
        rc = -1;
    }
    if (rc < 0) {
        node_free(n);
        return NULL;
    }
    if (parent)
        children_add(parent, n);
    hmap_insert(&tree->paths, &n->path_node, path_hash(tree, n->path, strlen(n->path)));
    tree->data_size += node_size(n);
    return n;
}

tree_t *tree_create_empty(watch_manager_t *wm)
{
    tree_t *tree = calloc(1, sizeof(*tree));
    if (!tree)
        return NULL;
    tree->wm = wm;
    /* The key only has to be unknown to clients; it never changes what the
     * tree does, only where nodes sit in the table. */
    hmap_random_key(&tree->path_key);
    hmap_init(&tree->paths, INITIAL_BUCKETS);
    hmap_init(&tree->sessions, INITIAL_SESSION_BUCKETS);
    hmap_init(&tree->acls, INITIAL_ACL_BUCKETS);
    return tree;
}

tree_t *tree_create(watch_manager_t *wm)
{
    tree_t *tree = tree_create_empty(wm);
    if (!tree)
        return NULL;
    znode_t *root = add_system_node(tree, NULL, "/", PERM_ALL);
    znode_t *proc = root ? add_system_node(tree, root, "/zookeeper", PERM_ALL) : NULL;
    znode_t *quota = proc ? add_system_node(tree, proc, "/zookeeper/quota", PERM_ALL) : NULL;
    /* Reconfig node is read-only to the world (ZOOKEEPER-2014); ZooKeeper
     * sets that ACL with setACL(..., -1), which leaves aversion -1. */
    znode_t *config = quota ? add_system_node(tree, proc, TREE_CONFIG_NODE, PERM_READ) : NULL;
    if (!config) {
        tree_destroy(tree);
        return NULL;
    }
    config->aversion = -1;
    tree->root = root;
    return tree;
}

void tree_destroy(tree_t *tree)
{
    if (!tree)
        return;
    hmap_iter_t it = hmap_iter(&tree->paths);
    for (hmap_node_t *hn; (hn = hmap_next(&it));)
        node_free(HMAP_ENTRY(hn, znode_t, path_node));
    hmap_destroy(&tree->paths);
    it = hmap_iter(&tree->sessions);
    for (hmap_node_t *hn; (hn = hmap_next(&it));)
        free(HMAP_ENTRY(hn, session_eph_t, node));
    hmap_destroy(&tree->sessions);
    it = hmap_iter(&tree->acls);
    for (hmap_node_t *hn; (hn = hmap_next(&it));) {
        acl_entry_t *e = HMAP_ENTRY(hn, acl_entry_t, node);
        acl_list_free(&e->acl);
        free(e);
    }
    hmap_destroy(&tree->acls);
    free(tree);
}

/* ---- reading ---- */

const znode_t *tree_lookup(const tree_t *tree, const char *path)
{
    if (!path)
        return NULL;
    if (!path[0])   /* ZooKeeper's node map aliases "" to the root */
        return tree->root;
    return lookup_len(tree, path, strlen(path));
}

void tree_fill_stat(const znode_t *node, zstat_t *out)
{
    owner_kind_t kind = owner_kind(node->ephemeral_owner);
    out->czxid = node->czxid;
    out->mzxid = node->mzxid;
    out->ctime = node->ctime;
    out->mtime = node->mtime;
    out->version = node->version;
    /* creates counted twice, minus the children still present: every
     * create and every delete of a child counts once (DataNode.copyStat) */
    out->cversion = add_wrapping(add_wrapping(node->cversion, node->cversion), -node->nchildren);
    out->aversion = node->aversion;
    out->ephemeral_owner = kind == OWNER_SESSION ? node->ephemeral_owner : 0;
    out->data_length = node->data_len > 0 ? node->data_len : 0;
    out->num_children = node->nchildren;
    out->pzxid = node->pzxid;
}

void tree_fill_stat_persisted(const znode_t *node, zstat_t *out)
{
    tree_fill_stat(node, out);
    out->cversion = node->cversion;
    out->ephemeral_owner = node->ephemeral_owner;
}

int64_t tree_last_zxid(const tree_t *tree)
{
    return tree->last_zxid;
}

size_t tree_node_count(const tree_t *tree)
{
    return hmap_count(&tree->paths);
}

size_t tree_ephemeral_count(const tree_t *tree)
{
    return tree->ephemeral_count;
}

int64_t tree_approximate_data_size(const tree_t *tree)
{
    return tree->data_size;
}

void tree_each_session_ephemeral(const tree_t *tree, int64_t session_id,
                                 int (*fn)(const znode_t *node, void *arg), void *arg)
{
    const session_eph_t *e = ephemerals_of(tree, session_id);
    for (const znode_t *n = e ? e->head : NULL; n; n = n->session_next)
        if (fn(n, arg))
            return;
}

size_t tree_session_ephemeral_count(const tree_t *tree, int64_t session_id)
{
    const session_eph_t *e = ephemerals_of(tree, session_id);
    return e ? e->count : 0;
}

void tree_each_ephemeral_session(const tree_t *tree, void (*fn)(int64_t session_id, void *arg), void *arg)
{
    hmap_iter_t it = hmap_iter(&tree->sessions);
    for (hmap_node_t *hn; (hn = hmap_next(&it));)
        fn(HMAP_ENTRY(hn, session_eph_t, node)->session_id, arg);
}

/* Pre-order walk of node's subtree without a stack: down through the first
 * child, across through index_in_parent, up through parent. */
int64_t tree_descendant_count(const znode_t *node)
{
    int64_t count = 0;
    const znode_t *n = node;
    for (;;) {
        if (n->nchildren > 0) {
            n = n->children[0];
            count++;
            continue;
        }
        while (n != node && n->index_in_parent + 1 >= n->parent->nchildren)
            n = n->parent;
        if (n == node)
            return count;
        n = n->parent->children[n->index_in_parent + 1];
        count++;
    }
}

void tree_each_expired_container(const tree_t *tree, int64_t now_ms,
                                 int (*fn)(const znode_t *node, void *arg), void *arg)
{
    for (const znode_t *n = tree->special_head; n; n = n->session_next) {
        if (n->nchildren > 0)
            continue;
        int candidate;
        if (n->ephemeral_owner == EPHEMERAL_OWNER_CONTAINER) {
            /* cversion > 0: spare containers that never had a child yet */
            candidate = n->cversion > 0;
        } else {
            int64_t ttl = tree_ttl_of(n->ephemeral_owner);
            candidate = ttl > 0 && now_ms >= n->mtime && (uint64_t)now_ms - (uint64_t)n->mtime > (uint64_t)ttl;
        }
        if (candidate && fn(n, arg))
            return;
    }
}

/* ---- applying transactions ---- */

static void fire_created(tree_t *tree, const char *path)
{
    if (tree->wm)
        watch_fire_created(tree->wm, path);
}

static void fire_deleted(tree_t *tree, const char *path)
{
    if (tree->wm)
        watch_fire_deleted(tree->wm, path);
}

static void fire_data_changed(tree_t *tree, const char *path)
{
    if (tree->wm)
        watch_fire_data_changed(tree->wm, path);
}

/* The parent's cversion/pzxid update of a create: -1 means "one more than
 * now"; a lower value (a replayed create) leaves the parent alone. */
static void set_cversion_pzxid(znode_t *parent, int32_t parent_cversion, int64_t zxid)
{
    if (parent_cversion == -1)
        parent_cversion = add_wrapping(parent->cversion, 1);
    if (parent_cversion > parent->cversion) {
        parent->cversion = parent_cversion;
        parent->pzxid = zxid;
    }
}

/* Everything a new znode needs, allocated before the tree is touched so an
 * out-of-memory failure leaves it unchanged. */
static znode_t *prepare_node(tree_t *tree, znode_t *parent, const txn_t *txn, int64_t owner, session_eph_t **session)
{
    znode_t *n = node_new(txn->path, strlen(txn->path), txn->data, txn->data_len);
    if (!n)
        return NULL;
    if (children_reserve(parent) < 0 || acl_acquire(tree, &txn->acl, &n->acl) < 0) {
        node_free(n);
        return NULL;
    }
    *session = NULL;
    if (owner_kind(owner) == OWNER_SESSION && !(*session = ephemerals_get_or_add(tree, owner))) {
        acl_release(tree, &n->acl);
        node_free(n);
        return NULL;
    }
    return n;
}

static int create_node(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, int64_t owner, txn_result_t *r)
{
    const char *path = txn->path;
    if (strcmp(path, "/") == 0)
        return ZNODEEXISTS;
    if (path_validate(path, 0) < 0)
        return ZBADARGUMENTS;
    znode_t *parent = lookup_len(tree, path, path_parent_len(path));
    if (!parent)
        return ZNONODE;
    size_t len = strlen(path);
    uint64_t hash = path_hash(tree, path, len);
    if (lookup_hashed(tree, path, len, hash))
        return ZNODEEXISTS;
    if (owner_kind(parent->ephemeral_owner) == OWNER_SESSION)
        return ZNOCHILDRENFOREPHEMERALS;   /* prep's rule, kept so ephemerals stay leaves */
    if (!acl_list_valid(&txn->acl))
        return ZBADARGUMENTS;

    session_eph_t *session;
    znode_t *n = prepare_node(tree, parent, txn, owner, &session);
    if (!n)
        return ZSYSTEMERROR;

    set_cversion_pzxid(parent, txn->parent_cversion, hdr->zxid);
    n->czxid = n->mzxid = n->pzxid = hdr->zxid;
    n->ctime = n->mtime = hdr->time;
    n->ephemeral_owner = owner;
    children_add(parent, n);
    hmap_insert(&tree->paths, &n->path_node, hash);
    tree->data_size += node_size(n);
    if (session)
        ephemeral_link(tree, session, n);
    else if (owner_kind(owner) != OWNER_NONE)
        list_push(&tree->special_head, n);

    if (hdr->type != OP_CREATE) {   /* create2, createTTL, createContainer reply with a stat */
        tree_fill_stat(n, &r->stat);
        r->has_stat = 1;
    }
    fire_created(tree, n->path);
    return ZOK;
}

static int delete_node(tree_t *tree, const char *path, int64_t zxid)
{
    if (path[0] != '/' || path[1] == '\0')
        return ZBADARGUMENTS;
    znode_t *parent = lookup_len(tree, path, path_parent_len(path));
    if (!parent)
        return ZNONODE;
    znode_t *n = lookup_len(tree, path, strlen(path));
    if (n && n->nchildren > 0)
        return ZNOTEMPTY;   /* ZooKeeper would orphan the children; prep never asks */
    /* ZooKeeper moves pzxid even when the child is already gone (a fuzzy
     * snapshot may hold the delete), but never backwards. */
    if (zxid > parent->pzxid)
        parent->pzxid = zxid;
    if (!n)
        return ZNONODE;

    children_remove(parent, n);
    hmap_remove(&tree->paths, &n->path_node);
    tree->data_size -= node_size(n);
    owner_unlink(tree, n);
    fire_deleted(tree, n->path);
    acl_release(tree, &n->acl);
    node_free(n);
    return ZOK;
}

static int set_data(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *r)
{
    znode_t *n = lookup_len(tree, txn->path, strlen(txn->path));
    if (!n)
        return ZNONODE;
    int32_t stored = stored_data_len(txn->data, txn->data_len);
    int in_node = node_data_inline(n);
    if (in_node && stored > 0 && stored <= n->data_len) {
        memcpy(n->data, txn->data, (size_t)stored);   /* fits where the data was */
    } else {
        int ok;
        uint8_t *data = copy_data(txn->data, txn->data_len, &ok);
        if (!ok)
            return ZSYSTEMERROR;
        if (!in_node)
            free(n->data);
        n->data = data;
    }
    tree->data_size -= node_size(n);
    n->data_len = stored;
    tree->data_size += node_size(n);
    n->mtime = hdr->time;
    n->mzxid = hdr->zxid;
    n->version = txn->version;   /* prep already computed the new version */
    tree_fill_stat(n, &r->stat);
    r->has_stat = 1;
    fire_data_changed(tree, n->path);
    return ZOK;
}

static int set_acl(tree_t *tree, const txn_t *txn, txn_result_t *r)
{
    znode_t *n = lookup_len(tree, txn->path, strlen(txn->path));
    if (!n)
        return ZNONODE;
    const acl_list_t *acl;
    if (!acl_list_valid(&txn->acl))
        return ZBADARGUMENTS;
    if (acl_acquire(tree, &txn->acl, &acl) < 0)
        return ZSYSTEMERROR;
    acl_release(tree, &n->acl);
    n->acl = acl;
    n->aversion = txn->version;
    tree_fill_stat(n, &r->stat);
    r->has_stat = 1;
    return ZOK;
}

/* ZooKeeper's killSession: delete the paths the txn lists (whoever owns
 * them), then whatever else the session still owns; missing nodes are
 * ignored. */
static void kill_session(tree_t *tree, int64_t session_id, int64_t zxid, const txn_t *txn)
{
    for (int32_t i = 0; i < txn->npaths; i++)
        if (txn->paths[i])
            delete_node(tree, txn->paths[i], zxid);
    if (session_id == 0 || owner_kind(session_id) != OWNER_SESSION)
        return;
    session_eph_t *e;
    while ((e = ephemerals_of(tree, session_id)) != NULL) {
        znode_t *n = e->head;
        if (!n) {   /* cannot happen: empty entries are dropped */
            ephemerals_drop(tree, e);
            break;
        }
        /* an ephemeral cannot have children, so this deletes it; if it
         * ever did not, forgetting it still guarantees progress */
        if (delete_node(tree, n->path, zxid) != ZOK)
            ephemeral_unlink(tree, n);
    }
}

static int apply_one(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *r, int in_multi);

/* A failed multi is logged with the failing op (and every op after it) as
 * ErrorTxns; ZooKeeper applies the ops before the failure as ErrorTxn(0)
 * and reports the ones after it as RUNTIMEINCONSISTENCY, so nothing of a
 * failed multi touches the tree. */
static int apply_multi(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *r)
{
    int32_t nsubs = txn->nsubs > 0 ? txn->nsubs : 0;
    int failed = 0;
    for (int32_t i = 0; i < nsubs; i++) {
        if (!txn_allowed_in_multi(txn->subs[i].type))
            return ZBADARGUMENTS;   /* checked before anything is applied */
        if (txn->subs[i].type == OP_ERROR)
            failed = 1;
    }
    if (nsubs > 0) {
        r->subs = calloc((size_t)nsubs, sizeof(txn_result_t));
        if (!r->subs)
            return ZSYSTEMERROR;
        r->nsubs = nsubs;
    }
    int err = ZOK, post_failed = 0;
    for (int32_t i = 0; i < nsubs; i++) {
        const txn_t *sub = &txn->subs[i];
        txn_header_t sub_hdr = *hdr;
        sub_hdr.type = sub->type;
        if (sub->type == OP_ERROR)
            post_failed = 1;
        if (failed && sub->type != OP_ERROR) {
            txn_t as_error;
            txn_init(&as_error, OP_ERROR);
            as_error.err = post_failed ? ZRUNTIMEINCONSISTENCY : ZOK;
            sub_hdr.type = OP_ERROR;
            apply_one(tree, &sub_hdr, &as_error, &r->subs[i], 1);
        } else {
            apply_one(tree, &sub_hdr, sub, &r->subs[i], 1);
        }
        if (r->subs[i].err != ZOK && err == ZOK)
            err = r->subs[i].err;
    }
    return err;
}

static int has_path(int32_t type)
{
    switch (type) {
    case OP_CREATE:
    case OP_CREATE2:
    case OP_CREATE_TTL:
    case OP_CREATE_CONTAINER:
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
    case OP_SET_DATA:
    case OP_RECONFIG:
    case OP_SET_ACL:
    case OP_CHECK:
        return 1;
    default:
        return 0;
    }
}

static int apply_create(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *r)
{
    int64_t owner;
    switch (hdr->type) {
    case OP_CREATE_TTL:
        if (txn->ttl <= 0 || txn->ttl > TTL_MAX_MS)
            return ZBADARGUMENTS;
        owner = (int64_t)((uint64_t)EPHEMERAL_OWNER_TTL_MASK | (uint64_t)txn->ttl);
        break;
    case OP_CREATE_CONTAINER:
        owner = EPHEMERAL_OWNER_CONTAINER;
        break;
    default:
        owner = txn->ephemeral ? hdr->client_id : 0;
        break;
    }
    int err = create_node(tree, hdr, txn, owner, r);
    /* Replaying a create whose node a fuzzy snapshot already holds: still
     * move the parent's cversion/pzxid forward (plain create only, as in
     * ZooKeeper's processTxn). */
    if (err == ZNODEEXISTS && hdr->type == OP_CREATE && strcmp(txn->path, "/") != 0) {
        znode_t *parent = lookup_len(tree, txn->path, path_parent_len(txn->path));
        if (parent)
            set_cversion_pzxid(parent, txn->parent_cversion, hdr->zxid);
        else
            err = ZNONODE;
    }
    return err;
}

static int apply_one(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *r, int in_multi)
{
    memset(r, 0, sizeof(*r));
    r->type = hdr->type;
    if (has_path(hdr->type)) {
        if (!txn->path || txn->path[0] != '/')
            return r->err = ZBADARGUMENTS;
        if (!(r->path = strdup(txn->path)))
            return r->err = ZSYSTEMERROR;
    }
    int err = ZOK;
    switch (hdr->type) {
    case OP_CREATE:
    case OP_CREATE2:
    case OP_CREATE_TTL:
    case OP_CREATE_CONTAINER:
        err = apply_create(tree, hdr, txn, r);
        break;
    case OP_DELETE:
    case OP_DELETE_CONTAINER:
        err = delete_node(tree, txn->path, hdr->zxid);
        break;
    case OP_SET_DATA:
    case OP_RECONFIG:
        err = set_data(tree, hdr, txn, r);
        break;
    case OP_SET_ACL:
        err = set_acl(tree, txn, r);
        break;
    case OP_CLOSE_SESSION:
        kill_session(tree, hdr->client_id, hdr->zxid, txn);
        break;
    case OP_ERROR:
        err = txn->err;
        break;
    case OP_MULTI:
        err = in_multi ? ZBADARGUMENTS : apply_multi(tree, hdr, txn, r);
        break;
    case OP_CHECK:            /* prep did the check; nothing to apply */
    case OP_CREATE_SESSION:   /* sessions live in the session tracker */
    default:                  /* ZooKeeper ignores txn types it does not apply */
        break;
    }
    return r->err = err;
}

int tree_apply(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *result)
{
    txn_t empty;   /* stands in for a missing body (e.g. closeSession without paths) */
    if (!txn) {
        txn_init(&empty, hdr->type);
        txn = &empty;
    }
    int err = apply_one(tree, hdr, txn, result, 0);
    /* set after the whole txn (a multi included) is applied, as ZooKeeper does */
    if (hdr->zxid > tree->last_zxid)
        tree->last_zxid = hdr->zxid;
    return err;
}

/* ---- setWatches ---- */

void tree_set_watches(tree_t *tree, int64_t relative_zxid,
                      char *const *data_paths, int ndata,
                      char *const *exist_paths, int nexist,
                      char *const *child_paths, int nchild,
                      char *const *persistent_paths, int npersistent,
                      char *const *recursive_paths, int nrecursive,
                      void *watcher)
{
    watch_manager_t *wm = tree->wm;
    if (!wm)
        return;
    for (int i = 0; i < ndata; i++) {
        const znode_t *n = tree_lookup(tree, data_paths[i]);
        if (!n)
            watch_notify_one(wm, watcher, EVENT_NODE_DELETED, data_paths[i]);
        else if (n->mzxid > relative_zxid)
            watch_notify_one(wm, watcher, EVENT_NODE_DATA_CHANGED, data_paths[i]);
        else
            watch_add(wm, WATCH_TABLE_DATA, data_paths[i], watcher, WATCH_MODE_STANDARD);
    }
    for (int i = 0; i < nexist; i++) {
        if (tree_lookup(tree, exist_paths[i]))
            watch_notify_one(wm, watcher, EVENT_NODE_CREATED, exist_paths[i]);
        else
            watch_add(wm, WATCH_TABLE_DATA, exist_paths[i], watcher, WATCH_MODE_STANDARD);
    }
    for (int i = 0; i < nchild; i++) {
        const znode_t *n = tree_lookup(tree, child_paths[i]);
        if (!n)
            watch_notify_one(wm, watcher, EVENT_NODE_DELETED, child_paths[i]);
        else if (n->pzxid > relative_zxid)
            watch_notify_one(wm, watcher, EVENT_NODE_CHILDREN_CHANGED, child_paths[i]);
        else
            watch_add(wm, WATCH_TABLE_CHILD, child_paths[i], watcher, WATCH_MODE_STANDARD);
    }
    for (int i = 0; i < npersistent; i++) {
        watch_add(wm, WATCH_TABLE_CHILD, persistent_paths[i], watcher, WATCH_MODE_PERSISTENT);
        watch_add(wm, WATCH_TABLE_DATA, persistent_paths[i], watcher, WATCH_MODE_PERSISTENT);
    }
    for (int i = 0; i < nrecursive; i++) {
        watch_add(wm, WATCH_TABLE_CHILD, recursive_paths[i], watcher, WATCH_MODE_PERSISTENT_RECURSIVE);
        watch_add(wm, WATCH_TABLE_DATA, recursive_paths[i], watcher, WATCH_MODE_PERSISTENT_RECURSIVE);
    }
}

/* ---- snapshots: walking, ACL ids, restoring ---- */

/* Pre-order, like tree_descendant_count, so a parent is always seen before
 * its children (the order a snapshot needs to be read back). */
int tree_walk(const tree_t *tree, int (*fn)(const znode_t *node, void *arg), void *arg)
{
    const znode_t *root = tree->root, *n = root;
    if (!root)
        return 0;
    for (;;) {
        int rc = fn(n, arg);
        if (rc)
            return rc;
        if (n->nchildren > 0) {
            n = n->children[0];
            continue;
        }
        while (n != root && n->index_in_parent + 1 >= n->parent->nchildren)
            n = n->parent;
        if (n == root)
            return 0;
        n = n->parent->children[n->index_in_parent + 1];
    }
}

size_t tree_acl_count(const tree_t *tree)
{
    return hmap_count(&tree->acls);
}

int tree_each_acl(const tree_t *tree, int (*fn)(int64_t id, const acl_list_t *acl, void *arg), void *arg)
{
    hmap_iter_t it = hmap_iter(&tree->acls);
    for (hmap_node_t *hn; (hn = hmap_next(&it));) {
        const acl_entry_t *e = HMAP_ENTRY(hn, acl_entry_t, node);
        int rc = fn(e->id, &e->acl, arg);
        if (rc)
            return rc;
    }
    return 0;
}

int64_t tree_acl_id(const tree_t *tree, const znode_t *node)
{
    (void)tree;
    return node->acl ? acl_entry_of(node->acl)->id : -1;   /* every node in a tree has one */
}

void tree_set_last_zxid(tree_t *tree, int64_t zxid)
{
    tree->last_zxid = zxid;
}

/* Where a restored node goes: *parent (NULL for the root) and its path's
 * *hash, or -1 with why not. */
static int restore_place(const tree_t *tree, const znode_t *n, znode_t **parent, uint64_t *hash, char *err,
                         size_t errlen)
{
    size_t len = strlen(n->path);
    *parent = NULL;
    *hash = path_hash(tree, n->path, len);
    if (lookup_hashed(tree, n->path, len, *hash)) {
        snprintf(err, errlen, "duplicate node %s", n->path);
        return -1;
    }
    if (strcmp(n->path, "/") == 0) {
        if (n->ephemeral_owner != 0) {
            snprintf(err, errlen, "the root has ephemeral owner 0x%llx", (unsigned long long)n->ephemeral_owner);
            return -1;
        }
        return 0;
    }
    if (path_validate(n->path, 0) < 0) {
        snprintf(err, errlen, "invalid node path \"%s\"", n->path);
        return -1;
    }
    size_t plen = path_parent_len(n->path);
    *parent = lookup_len(tree, n->path, plen);
    if (!*parent) {
        snprintf(err, errlen, "node %s has no parent %.*s before it", n->path, (int)plen, n->path);
        return -1;
    }
    if (owner_kind((*parent)->ephemeral_owner) == OWNER_SESSION) {
        snprintf(err, errlen, "node %s is a child of an ephemeral node", n->path);
        return -1;
    }
    return 0;
}

/* The allocations a restored node needs, made before the tree is touched. */
static int restore_prepare(tree_t *tree, znode_t *n, znode_t *parent, const acl_list_t *acl, session_eph_t **session)
{
    if (parent && children_reserve(parent) < 0)
        return -1;
    if (!acl_list_valid(acl) || acl_acquire(tree, acl, &n->acl) < 0)
        return -1;
    *session = NULL;
    if (owner_kind(n->ephemeral_owner) == OWNER_SESSION &&
        !(*session = ephemerals_get_or_add(tree, n->ephemeral_owner))) {
        acl_release(tree, &n->acl);
        return -1;
    }
    return 0;
}

static void restore_stat(znode_t *n, const zstat_t *st, int32_t data_len)
{
    n->czxid = st->czxid;
    n->mzxid = st->mzxid;
    n->ctime = st->ctime;
    n->mtime = st->mtime;
    n->version = st->version;
    n->cversion = st->cversion;
    n->aversion = st->aversion;
    n->ephemeral_owner = st->ephemeral_owner;
    n->pzxid = st->pzxid;
    n->data_len = data_len < 0 ? -1 : data_len;
}

int tree_restore_node(tree_t *tree, const char *path, size_t path_len, const uint8_t *data, int32_t data_len,
                      const acl_list_t *acl, const zstat_t *stat, char *err, size_t errlen)
{
    if (path_len == 0 || memchr(path, '\0', path_len)) {
        snprintf(err, errlen, "a node path is empty or holds a NUL byte");
        return -1;
    }
    if (data_len < -1 || (data_len > 0 && !data)) {
        snprintf(err, errlen, "bad data length %d", (int)data_len);
        return -1;
    }
    znode_t *n = node_new(path, path_len, data, data_len), *parent;
    if (!n) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    restore_stat(n, stat, data_len);
    session_eph_t *session;
    uint64_t hash;
    if (restore_place(tree, n, &parent, &hash, err, errlen) < 0) {
        node_free(n);
        return -1;
    }
    if (restore_prepare(tree, n, parent, acl, &session) < 0) {
        snprintf(err, errlen, "out of memory (or an ACL with a null string) restoring %s", n->path);
        node_free(n);
        return -1;
    }
    if (parent)
        children_add(parent, n);
    else
        tree->root = n;
    hmap_insert(&tree->paths, &n->path_node, hash);
    tree->data_size += node_size(n);
    if (session)
        ephemeral_link(tree, session, n);
    else if (parent && owner_kind(n->ephemeral_owner) != OWNER_NONE)
        list_push(&tree->special_head, n);
    return 0;
}

/* Each node was checked as it came (parent first, no duplicates), and the
 * counts, children arrays and owner lists were built from it; what is
 * left to check is that there was a tree at all. */
int tree_restore_finish(const tree_t *tree, char *err, size_t errlen)
{
    if (!tree->root) {
        snprintf(err, errlen, "the snapshot has no root node");
        return -1;
    }
    return 0;
}
