/* test_tree.c -- the data tree and txn apply, against ZooKeeper 3.8's DataTree.
 *
 * Expected stats come from DataTree.java/DataNode.java and were checked
 * against a running Apache ZooKeeper 3.8.0 (fresh "/" shows cversion -1,
 * "/zookeeper" -2, "/zookeeper/config" aversion -1 and ACL world:anyone READ;
 * create /a "xyz" then /a/b, /a/c, delete /a/b leaves /a at cversion 3 and
 * the next sequential child suffix at 2; zk_approximate_data_size 44 -> 49). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keeper/data/path.h"
#include "keeper/data/tree.h"
#include "keeper/data/watch.h"
#include "suites.h"
#include "unit.h"

/* ---- helpers: build and apply txns the way prep does ---- */

enum { SESSION_A = 0x100, SESSION_B = 0x200, SESSION_C = 0x300 };

static txn_header_t header(int64_t session, int64_t zxid, int64_t time, int32_t type)
{
    txn_header_t h = {session, 1, zxid, time, type};
    return h;
}

static void world_acl(acl_list_t *acl, int32_t perms)
{
    acl->items = calloc(1, sizeof(acl_t));
    acl->count = 1;
    acl->items[0] = (acl_t){perms, strdup("world"), strdup("anyone")};
}

/* The stored cversion of path's parent + 1, as prep computes it. */
static int32_t next_parent_cversion(const tree_t *t, const char *path)
{
    size_t len = path_parent_len(path);
    char *parent = strndup(path, len ? len : 1);
    const znode_t *p = tree_lookup(t, parent);
    free(parent);
    return p ? p->cversion + 1 : 0;
}

/* A create of any kind; ttl is used by OP_CREATE_TTL only. */
static void make_create(txn_t *txn, const tree_t *t, int32_t type, const char *path, const char *data, int ephemeral,
                        int64_t ttl)
{
    txn_init(txn, type);
    txn->path = strdup(path);
    if (data) {
        txn->data_len = (int32_t)strlen(data);
        txn->data = txn->data_len ? (uint8_t *)strdup(data) : NULL;
    }
    world_acl(&txn->acl, PERM_ALL);
    txn->ephemeral = ephemeral;
    txn->parent_cversion = next_parent_cversion(t, path);
    txn->ttl = ttl;
}

static int create_full(tree_t *t, int32_t type, int64_t session, int64_t zxid, int64_t time, const char *path,
                       const char *data, int ephemeral, int64_t ttl, txn_result_t *r)
{
    txn_t txn;
    make_create(&txn, t, type, path, data, ephemeral, ttl);
    txn_header_t h = header(session, zxid, time, type);
    int err = tree_apply(t, &h, &txn, r);
    txn_free(&txn);
    return err;
}

static int create(tree_t *t, int64_t zxid, const char *path, const char *data)
{
    txn_result_t r;
    int err = create_full(t, OP_CREATE, 0, zxid, 1000, path, data, 0, 0, &r);
    txn_result_free(&r);
    return err;
}

static int create_ephemeral(tree_t *t, int64_t session, int64_t zxid, const char *path)
{
    txn_result_t r;
    int err = create_full(t, OP_CREATE, session, zxid, 1000, path, "", 1, 0, &r);
    txn_result_free(&r);
    return err;
}

static int simple(tree_t *t, int32_t type, int64_t session, int64_t zxid, int64_t time, const char *path,
                  const char *data, int32_t version, txn_result_t *out)
{
    txn_t txn;
    txn_init(&txn, type);
    txn.path = path ? strdup(path) : NULL;
    if (data) {
        txn.data_len = (int32_t)strlen(data);
        txn.data = txn.data_len ? (uint8_t *)strdup(data) : NULL;
    }
    txn.version = version;
    if (type == OP_SET_ACL)
        world_acl(&txn.acl, PERM_READ | PERM_WRITE);
    txn_header_t h = header(session, zxid, time, type);
    txn_result_t r;
    int err = tree_apply(t, &h, &txn, out ? out : &r);
    if (!out)
        txn_result_free(&r);
    txn_free(&txn);
    return err;
}

static int delete(tree_t *t, int64_t zxid, const char *path)
{
    return simple(t, OP_DELETE, 0, zxid, 0, path, NULL, 0, NULL);
}

static int close_session(tree_t *t, int64_t session, int64_t zxid, const char *const *paths, int npaths)
{
    txn_t txn;
    txn_init(&txn, OP_CLOSE_SESSION);
    if (npaths > 0) {
        txn.paths = calloc((size_t)npaths, sizeof(char *));
        for (int i = 0; i < npaths; i++)
            txn.paths[i] = strdup(paths[i]);
        txn.npaths = npaths;
    }
    txn_header_t h = header(session, zxid, 0, OP_CLOSE_SESSION);
    txn_result_t r;
    int err = tree_apply(t, &h, &txn, &r);
    txn_result_free(&r);
    txn_free(&txn);
    return err;
}

static zstat_t stat_of(const tree_t *t, const char *path)
{
    zstat_t st;
    memset(&st, 0x5a, sizeof(st));
    const znode_t *n = tree_lookup(t, path);
    if (n)
        tree_fill_stat(n, &st);
    return st;
}

/* ---- the initial tree ---- */

static void test_tree_initial_nodes(void)
{
    tree_t *t = tree_create(NULL);
    zstat_t st = stat_of(t, "/");
    CHECK(st.czxid == 0 && st.mzxid == 0 && st.pzxid == 0 && st.ctime == 0 && st.mtime == 0);
    CHECK(st.version == 0 && st.aversion == 0 && st.ephemeral_owner == 0 && st.data_length == 0);
    CHECK_EQ(st.cversion, -1);
    CHECK_EQ(st.num_children, 1);
    st = stat_of(t, "/zookeeper");
    CHECK_EQ(st.cversion, -2);
    CHECK_EQ(st.num_children, 2);
    CHECK_EQ(st.aversion, 0);
    st = stat_of(t, "/zookeeper/quota");
    CHECK(st.cversion == 0 && st.num_children == 0 && st.aversion == 0 && st.czxid == 0);
    st = stat_of(t, "/zookeeper/config");
    CHECK(st.cversion == 0 && st.aversion == -1 && st.version == 0 && st.data_length == 0);

    const znode_t *config = tree_lookup(t, "/zookeeper/config");
    CHECK(config && config->acl->count == 1 && config->acl->items[0].perms == PERM_READ);
    CHECK_STR(config->acl->items[0].scheme, "world");
    CHECK_STR(config->acl->items[0].id, "anyone");
    const znode_t *root = tree_lookup(t, "/");
    CHECK(root && root->acl->count == 1 && root->acl->items[0].perms == PERM_ALL);
    CHECK_STR(znode_name(root), "");
    CHECK(root->parent == NULL);
    CHECK(tree_lookup(t, "") == root);
    CHECK_STR(znode_name(tree_lookup(t, "/zookeeper/quota")), "quota");
    CHECK(tree_lookup(t, "/nope") == NULL);
    CHECK(tree_lookup(t, "/zookeeper/") == NULL);
    CHECK(tree_lookup(t, NULL) == NULL);

    CHECK_EQ(tree_node_count(t), 4);
    CHECK_EQ(tree_approximate_data_size(t), 44);
    CHECK_EQ(tree_ephemeral_count(t), 0);
    CHECK_EQ(tree_last_zxid(t), 0);
    CHECK_EQ(tree_descendant_count(root), 3);
    tree_destroy(t);
    tree_destroy(NULL);
}

/* ---- create, delete, setData, setACL ---- */

static void test_tree_create_stats(void)
{
    tree_t *t = tree_create(NULL);
    txn_result_t r;
    CHECK_EQ(create_full(t, OP_CREATE, SESSION_A, 2, 1000, "/a", "xyz", 0, 0, &r), ZOK);
    CHECK(r.type == OP_CREATE && r.err == ZOK && !r.has_stat && r.nsubs == 0);
    CHECK_STR(r.path, "/a");
    txn_result_free(&r);
    zstat_t st = stat_of(t, "/a");
    CHECK(st.czxid == 2 && st.mzxid == 2 && st.pzxid == 2 && st.ctime == 1000 && st.mtime == 1000);
    CHECK(st.version == 0 && st.cversion == 0 && st.aversion == 0 && st.ephemeral_owner == 0);
    CHECK(st.data_length == 3 && st.num_children == 0);
    const znode_t *a = tree_lookup(t, "/a");
    CHECK(a->data_len == 3 && memcmp(a->data, "xyz", 3) == 0);
    CHECK_STR(znode_name(a), "a");
    CHECK(a->parent == tree_lookup(t, "/"));
    st = stat_of(t, "/");
    CHECK(st.cversion == 0 && st.pzxid == 2 && st.num_children == 2 && st.mzxid == 0);
    CHECK_EQ(tree_node_count(t), 5);
    CHECK_EQ(tree_approximate_data_size(t), 49);

    /* create2 replies with the new node's stat */
    CHECK_EQ(create_full(t, OP_CREATE2, SESSION_A, 3, 1100, "/a/b", NULL, 0, 0, &r), ZOK);
    CHECK(r.has_stat && r.stat.czxid == 3 && r.stat.ctime == 1100 && r.stat.data_length == 0);
    CHECK_STR(r.path, "/a/b");
    txn_result_free(&r);
    CHECK_EQ(tree_lookup(t, "/a/b")->data_len, -1);   /* created with null data */
    CHECK_EQ(create(t, 4, "/a/c", ""), ZOK);
    CHECK_EQ(tree_lookup(t, "/a/c")->data_len, 0);
    st = stat_of(t, "/a");
    CHECK(st.cversion == 2 && st.pzxid == 4 && st.num_children == 2 && st.mzxid == 2);
    CHECK_EQ(tree_lookup(t, "/a")->cversion, 2);
    CHECK_EQ(tree_approximate_data_size(t), 49 + 4 + 4);

    /* failures change nothing */
    CHECK_EQ(create(t, 5, "/a", "again"), ZNODEEXISTS);
    CHECK_EQ(create(t, 5, "/x/y", ""), ZNONODE);
    CHECK_EQ(create(t, 5, "/", ""), ZNODEEXISTS);
    CHECK_EQ(create(t, 5, "/a/", ""), ZBADARGUMENTS);
    CHECK_EQ(create(t, 5, "/a/./b", ""), ZBADARGUMENTS);
    CHECK_EQ(create(t, 5, "a", ""), ZBADARGUMENTS);
    CHECK_EQ(tree_node_count(t), 7);
    st = stat_of(t, "/a");
    CHECK(st.cversion == 2 && st.pzxid == 4);
    tree_destroy(t);
}

static void test_tree_delete_stats(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/a", "xyz");
    create(t, 3, "/a/b", "");
    create(t, 4, "/a/c", "");
    CHECK_EQ(delete(t, 5, "/a/b"), ZOK);
    zstat_t st = stat_of(t, "/a");
    /* exactly what ZooKeeper 3.8 reports after this sequence */
    CHECK(st.cversion == 3 && st.pzxid == 5 && st.num_children == 1 && st.mzxid == 2);
    CHECK_EQ(tree_lookup(t, "/a")->cversion, 2);   /* the next sequential suffix */
    CHECK(tree_lookup(t, "/a/b") == NULL);
    CHECK_EQ(tree_node_count(t), 6);
    CHECK_EQ(tree_approximate_data_size(t), 49 + 4);

    CHECK_EQ(delete(t, 6, "/a"), ZNOTEMPTY);
    CHECK(tree_lookup(t, "/a") != NULL);
    CHECK_EQ(stat_of(t, "/").pzxid, 2);
    /* a missing child still moves the parent's pzxid (never backwards) */
    CHECK_EQ(delete(t, 9, "/a/zz"), ZNONODE);
    CHECK_EQ(stat_of(t, "/a").pzxid, 9);
    CHECK_EQ(delete(t, 7, "/a/zz"), ZNONODE);
    CHECK_EQ(stat_of(t, "/a").pzxid, 9);
    CHECK_EQ(delete(t, 10, "/q/r"), ZNONODE);
    CHECK_EQ(delete(t, 10, "/"), ZBADARGUMENTS);
    CHECK_EQ(delete(t, 10, "a"), ZBADARGUMENTS);

    CHECK_EQ(delete(t, 11, "/a/c"), ZOK);
    CHECK_EQ(delete(t, 12, "/a"), ZOK);
    st = stat_of(t, "/");
    CHECK(st.pzxid == 12 && st.num_children == 1 && st.cversion == 1);
    CHECK_EQ(tree_node_count(t), 4);
    CHECK_EQ(tree_approximate_data_size(t), 44);
    tree_destroy(t);
}

static void test_tree_set_data_and_acl(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/a", "xyz");
    txn_result_t r;
    CHECK_EQ(simple(t, OP_SET_DATA, SESSION_A, 6, 2000, "/a", "1234567", 1, &r), ZOK);
    CHECK(r.has_stat && r.stat.version == 1 && r.stat.mzxid == 6 && r.stat.mtime == 2000 && r.stat.czxid == 2 &&
          r.stat.ctime == 1000 && r.stat.data_length == 7 && r.stat.pzxid == 2);
    CHECK_STR(r.path, "/a");
    txn_result_free(&r);
    const znode_t *a = tree_lookup(t, "/a");
    CHECK(a->data_len == 7 && memcmp(a->data, "1234567", 7) == 0);
    CHECK_EQ(tree_approximate_data_size(t), 44 + 2 + 7);
    CHECK_EQ(simple(t, OP_SET_DATA, 0, 7, 2100, "/a", NULL, 2, NULL), ZOK);
    CHECK_EQ(a->data_len, -1);
    CHECK(a->data == NULL && stat_of(t, "/a").data_length == 0 && stat_of(t, "/a").version == 2);
    CHECK_EQ(tree_approximate_data_size(t), 44 + 2);
    CHECK_EQ(simple(t, OP_SET_DATA, 0, 8, 2100, "/nope", "x", 1, NULL), ZNONODE);

    CHECK_EQ(simple(t, OP_SET_ACL, 0, 9, 3000, "/a", NULL, 1, &r), ZOK);
    CHECK(r.has_stat && r.stat.aversion == 1 && r.stat.mzxid == 7 && r.stat.version == 2);
    txn_result_free(&r);
    CHECK(a->acl->count == 1 && a->acl->items[0].perms == (PERM_READ | PERM_WRITE));
    CHECK_EQ(stat_of(t, "/a").mtime, 2100);   /* setACL touches only aversion */
    CHECK_EQ(simple(t, OP_SET_ACL, 0, 10, 3000, "/nope", NULL, 1, NULL), ZNONODE);
    CHECK_EQ(tree_last_zxid(t), 10);
    tree_destroy(t);
}

/* A node's data starts in the node's own allocation (tree.c, node_new): a
 * setData no longer than it is written in place, a longer one moves it out,
 * and every sequence leaves the right bytes (and frees nothing twice: the
 * unit tests run under AddressSanitizer). */
static void test_tree_set_data_in_place_and_beyond(void)
{
    tree_t *t = tree_create(NULL);
    CHECK_EQ(create(t, 2, "/b", "abcdef"), ZOK);
    const znode_t *b = tree_lookup(t, "/b");
    const uint8_t *inline_data = b->data;
    static const struct {
        const char *data;   /* NULL: null data */
        int in_place;
    } sets[] = {{"xyz", 1}, {"uvw", 1}, {"", 0}, {"abcdefgh", 0}, {"12", 0}, {NULL, 0}, {"q", 0}};
    int64_t size_without_data = tree_approximate_data_size(t) - 6;
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        CHECK_EQ(simple(t, OP_SET_DATA, 0, 3 + (int64_t)i, 2000, "/b", sets[i].data, (int32_t)i + 1, NULL), ZOK);
        int32_t len = sets[i].data ? (int32_t)strlen(sets[i].data) : -1;
        CHECK_EQ(b->data_len, len);
        if (len > 0)
            CHECK(memcmp(b->data, sets[i].data, (size_t)len) == 0);
        else
            CHECK(b->data == NULL);
        CHECK_EQ(b->data == inline_data, sets[i].in_place);
        CHECK_EQ(tree_approximate_data_size(t), size_without_data + (len > 0 ? len : 0));
    }
    CHECK_EQ(delete(t, 20, "/b"), ZOK);
    tree_destroy(t);
}

static void test_tree_sequential_parent_cversion(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/q", NULL);
    char path[64];
    for (int i = 0; i < 3; i++) {
        /* prep names a sequential child after the stored cversion */
        snprintf(path, sizeof(path), "/q/n-%010d", tree_lookup(t, "/q")->cversion);
        CHECK_EQ(create(t, 3 + i, path, ""), ZOK);
    }
    CHECK(tree_lookup(t, "/q/n-0000000000") && tree_lookup(t, "/q/n-0000000002"));
    delete(t, 6, "/q/n-0000000001");
    snprintf(path, sizeof(path), "/q/n-%010d", tree_lookup(t, "/q")->cversion);
    CHECK_STR(path, "/q/n-0000000003");
    CHECK_EQ(stat_of(t, "/q").cversion, 4);
    zstat_t persisted;
    tree_fill_stat_persisted(tree_lookup(t, "/q"), &persisted);
    CHECK_EQ(persisted.cversion, 3);

    /* parent_cversion -1: the tree takes the stored cversion + 1 */
    txn_t txn;
    make_create(&txn, t, OP_CREATE, "/q/auto", "", 0, 0);
    txn.parent_cversion = -1;
    txn_header_t h = header(0, 7, 0, OP_CREATE);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZOK);
    txn_result_free(&r);
    txn_free(&txn);
    CHECK_EQ(tree_lookup(t, "/q")->cversion, 4);
    CHECK_EQ(stat_of(t, "/q").pzxid, 7);

    /* a replayed create with an older parent_cversion leaves the parent alone */
    make_create(&txn, t, OP_CREATE, "/q/old", "", 0, 0);
    txn.parent_cversion = 2;
    h = header(0, 8, 0, OP_CREATE);
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZOK);
    txn_result_free(&r);
    txn_free(&txn);
    CHECK_EQ(tree_lookup(t, "/q")->cversion, 4);
    CHECK_EQ(stat_of(t, "/q").pzxid, 7);
    tree_destroy(t);
}

static void test_tree_replayed_create_of_existing_node(void)
{
    /* ZooKeeper's processTxn: a plain create hitting NODEEXISTS still moves
     * the parent's cversion and pzxid (fuzzy snapshot replay). */
    tree_t *t = tree_create(NULL);
    create(t, 2, "/p", NULL);
    create(t, 3, "/p/c", NULL);
    txn_t txn;
    make_create(&txn, t, OP_CREATE, "/p/c", "", 0, 0);
    txn.parent_cversion = 5;
    txn_header_t h = header(0, 9, 0, OP_CREATE);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZNODEEXISTS);
    txn_result_free(&r);
    CHECK(tree_lookup(t, "/p")->cversion == 5 && tree_lookup(t, "/p")->pzxid == 9);
    /* not for create2 */
    txn.parent_cversion = 7;
    h = header(0, 10, 0, OP_CREATE2);
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZNODEEXISTS);
    txn_result_free(&r);
    CHECK_EQ(tree_lookup(t, "/p")->cversion, 5);
    txn_free(&txn);
    CHECK_EQ(tree_last_zxid(t), 10);
    tree_destroy(t);
}

/* Equal ACLs share one copy; each node's view stays valid as others go. */
static void test_tree_acls_are_shared(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/a", "");
    create(t, 3, "/b", "");
    const znode_t *a = tree_lookup(t, "/a"), *b = tree_lookup(t, "/b");
    CHECK(a->acl->items == b->acl->items && a->acl->count == 1);
    CHECK(a->acl->items != tree_lookup(t, "/zookeeper/config")->acl->items);   /* READ differs from ALL */
    CHECK(a->acl->items == tree_lookup(t, "/")->acl->items);
    CHECK_EQ(simple(t, OP_SET_ACL, 0, 4, 0, "/a", NULL, 1, NULL), ZOK);
    CHECK(a->acl->items != b->acl->items && a->acl->items[0].perms == (PERM_READ | PERM_WRITE));
    CHECK(b->acl->items[0].perms == PERM_ALL);
    delete(t, 5, "/b");
    CHECK_EQ(tree_lookup(t, "/")->acl->items[0].perms, PERM_ALL);
    CHECK_STR(tree_lookup(t, "/")->acl->items[0].id, "anyone");

    /* an empty ACL, and one with a NULL string (refused) */
    txn_t txn;
    make_create(&txn, t, OP_CREATE, "/open", "", 0, 0);
    acl_list_free(&txn.acl);
    txn_header_t h = header(0, 6, 0, OP_CREATE);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZOK);
    txn_result_free(&r);
    CHECK(tree_lookup(t, "/open")->acl->count == 0);
    txn_free(&txn);
    make_create(&txn, t, OP_CREATE, "/bad", "", 0, 0);
    free(txn.acl.items[0].id);
    txn.acl.items[0].id = NULL;
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZBADARGUMENTS);
    txn_result_free(&r);
    txn_free(&txn);

    /* many distinct ACLs (the cache grows), freed with the tree */
    char path[32], id[32];
    for (int i = 0; i < 200; i++) {
        snprintf(path, sizeof(path), "/acl%d", i);
        snprintf(id, sizeof(id), "user%d:x", i);
        make_create(&txn, t, OP_CREATE, path, "", 0, 0);
        free(txn.acl.items[0].scheme);
        free(txn.acl.items[0].id);
        txn.acl.items[0].scheme = strdup("digest");
        txn.acl.items[0].id = strdup(id);
        h = header(0, 10 + i, 0, OP_CREATE);
        CHECK_EQ(tree_apply(t, &h, &txn, &r), ZOK);
        txn_result_free(&r);
        txn_free(&txn);
    }
    CHECK_STR(tree_lookup(t, "/acl123")->acl->items[0].id, "user123:x");
    for (int i = 0; i < 200; i += 2) {
        snprintf(path, sizeof(path), "/acl%d", i);
        delete(t, 300 + i, path);
    }
    CHECK_STR(tree_lookup(t, "/acl199")->acl->items[0].id, "user199:x");
    tree_destroy(t);
}

/* ---- ephemerals and sessions ---- */

static int collect_paths(const znode_t *node, void *arg)
{
    char *out = arg;
    strcat(out, node->path);
    strcat(out, " ");
    return 0;
}

static void count_session(int64_t session_id, void *arg)
{
    (void)session_id;
    (*(int *)arg)++;
}

static void test_tree_ephemerals_per_session(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/e", NULL);
    CHECK_EQ(create_ephemeral(t, SESSION_A, 3, "/e/1"), ZOK);
    CHECK_EQ(create_ephemeral(t, SESSION_A, 4, "/e/2"), ZOK);
    CHECK_EQ(create_ephemeral(t, SESSION_A, 5, "/e/3"), ZOK);
    CHECK_EQ(create_ephemeral(t, SESSION_B, 6, "/e/4"), ZOK);
    CHECK_EQ(stat_of(t, "/e/1").ephemeral_owner, SESSION_A);
    CHECK_EQ(stat_of(t, "/e/4").ephemeral_owner, SESSION_B);
    CHECK_EQ(tree_ephemeral_count(t), 4);
    CHECK_EQ(tree_session_ephemeral_count(t, SESSION_A), 3);
    CHECK_EQ(tree_session_ephemeral_count(t, SESSION_B), 1);
    CHECK_EQ(tree_session_ephemeral_count(t, SESSION_C), 0);
    char list[256] = "";
    tree_each_session_ephemeral(t, SESSION_A, collect_paths, list);
    CHECK_STR(list, "/e/3 /e/2 /e/1 ");   /* newest first */
    int sessions = 0;
    tree_each_ephemeral_session(t, count_session, &sessions);
    CHECK_EQ(sessions, 2);

    /* ephemerals cannot have children */
    CHECK_EQ(create(t, 7, "/e/1/child", ""), ZNOCHILDRENFOREPHEMERALS);

    CHECK_EQ(delete(t, 8, "/e/2"), ZOK);
    CHECK_EQ(tree_session_ephemeral_count(t, SESSION_A), 2);
    list[0] = 0;
    tree_each_session_ephemeral(t, SESSION_A, collect_paths, list);
    CHECK_STR(list, "/e/3 /e/1 ");

    /* closeSession: the txn lists /e/1 only; /e/3 goes too (the session's own list) */
    const char *paths[] = {"/e/1"};
    CHECK_EQ(close_session(t, SESSION_A, 9, paths, 1), ZOK);
    CHECK(tree_lookup(t, "/e/1") == NULL && tree_lookup(t, "/e/3") == NULL);
    CHECK(tree_lookup(t, "/e/4") != NULL);
    CHECK_EQ(tree_session_ephemeral_count(t, SESSION_A), 0);
    CHECK_EQ(tree_ephemeral_count(t), 1);
    sessions = 0;
    tree_each_ephemeral_session(t, count_session, &sessions);
    CHECK_EQ(sessions, 1);
    zstat_t st = stat_of(t, "/e");
    CHECK(st.pzxid == 9 && st.num_children == 1 && st.cversion == 4 * 2 - 1);
    CHECK_EQ(tree_last_zxid(t), 9);

    /* ZooKeeper deletes whatever paths the txn lists, even another session's;
     * missing ones are ignored */
    const char *others[] = {"/e/4", "/e/missing", "/", ""};
    CHECK_EQ(close_session(t, SESSION_C, 10, others, 4), ZOK);
    CHECK(tree_lookup(t, "/e/4") == NULL);
    CHECK_EQ(tree_ephemeral_count(t), 0);
    CHECK_EQ(tree_session_ephemeral_count(t, SESSION_B), 0);

    /* a closeSession without a body falls back to the session's list */
    create_ephemeral(t, SESSION_B, 11, "/e/5");
    txn_header_t h = header(SESSION_B, 12, 0, OP_CLOSE_SESSION);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, NULL, &r), ZOK);
    txn_result_free(&r);
    CHECK(tree_lookup(t, "/e/5") == NULL);
    CHECK_EQ(tree_ephemeral_count(t), 0);
    /* createSession changes nothing */
    h = header(SESSION_C, 13, 0, OP_CREATE_SESSION);
    txn_t cs;
    txn_init(&cs, OP_CREATE_SESSION);
    cs.timeout = 30000;
    CHECK_EQ(tree_apply(t, &h, &cs, &r), ZOK);
    CHECK_EQ(r.type, OP_CREATE_SESSION);
    txn_result_free(&r);
    CHECK_EQ(tree_node_count(t), 5);
    CHECK_EQ(tree_last_zxid(t), 13);
    tree_destroy(t);
}

/* ---- multi ---- */

static txn_t *multi_sub(txn_t *multi, int i, int32_t type, const char *path)
{
    txn_t *s = &multi->subs[i];
    txn_init(s, type);
    if (path)
        s->path = strdup(path);
    return s;
}

static void test_tree_multi_success(void)
{
    tree_t *t = tree_create(NULL);
    txn_t m;
    txn_init(&m, OP_MULTI);
    m.subs = calloc(5, sizeof(txn_t));
    m.nsubs = 5;
    make_create(&m.subs[0], t, OP_CREATE, "/m", "v0", 0, 0);
    txn_t *s = multi_sub(&m, 1, OP_SET_DATA, "/m");
    s->data = (uint8_t *)strdup("v1");
    s->data_len = 2;
    s->version = 1;
    multi_sub(&m, 2, OP_CHECK, "/m")->version = 1;
    make_create(&m.subs[3], t, OP_CREATE2, "/m/x", "", 0, 0);
    m.subs[3].parent_cversion = 1;
    multi_sub(&m, 4, OP_DELETE, "/m/x");
    txn_header_t h = header(SESSION_A, 20, 5000, OP_MULTI);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, &m, &r), ZOK);
    CHECK(r.type == OP_MULTI && r.err == ZOK && r.nsubs == 5);
    CHECK(r.subs[0].type == OP_CREATE && r.subs[0].err == ZOK && !r.subs[0].has_stat);
    CHECK_STR(r.subs[0].path, "/m");
    CHECK(r.subs[1].type == OP_SET_DATA && r.subs[1].has_stat && r.subs[1].stat.version == 1 &&
          r.subs[1].stat.mzxid == 20);
    CHECK(r.subs[2].type == OP_CHECK && r.subs[2].err == ZOK);
    CHECK(r.subs[3].type == OP_CREATE2 && r.subs[3].has_stat && r.subs[3].stat.czxid == 20);
    CHECK(r.subs[4].type == OP_DELETE && r.subs[4].err == ZOK);
    txn_result_free(&r);
    const znode_t *n = tree_lookup(t, "/m");
    CHECK(n && n->data_len == 2 && memcmp(n->data, "v1", 2) == 0 && n->czxid == 20 && n->version == 1);
    CHECK(tree_lookup(t, "/m/x") == NULL);
    CHECK_EQ(stat_of(t, "/m").cversion, 2);
    CHECK_EQ(tree_last_zxid(t), 20);
    txn_free(&m);

    /* an empty multi is fine */
    txn_init(&m, OP_MULTI);
    h = header(SESSION_A, 21, 5000, OP_MULTI);
    CHECK_EQ(tree_apply(t, &h, &m, &r), ZOK);
    CHECK(r.nsubs == 0 && r.subs == NULL);
    txn_result_free(&r);
    tree_destroy(t);
}

/* A failed multi as ZooKeeper's prep writes it: the ops before the failure
 * keep their types, the failing op and every later one are ErrorTxns. */
static void test_tree_multi_failure_results(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/exists", "");
    txn_t m;
    txn_init(&m, OP_MULTI);
    m.subs = calloc(4, sizeof(txn_t));
    m.nsubs = 4;
    make_create(&m.subs[0], t, OP_CREATE, "/ok", "", 0, 0);
    multi_sub(&m, 1, OP_ERROR, NULL)->err = ZNODEEXISTS;
    multi_sub(&m, 2, OP_ERROR, NULL)->err = ZRUNTIMEINCONSISTENCY;
    multi_sub(&m, 3, OP_ERROR, NULL)->err = ZRUNTIMEINCONSISTENCY;
    txn_header_t h = header(SESSION_A, 30, 5000, OP_MULTI);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, &m, &r), ZNODEEXISTS);
    CHECK(r.type == OP_MULTI && r.err == ZNODEEXISTS && r.nsubs == 4);
    static const int32_t want[] = {ZOK, ZNODEEXISTS, ZRUNTIMEINCONSISTENCY, ZRUNTIMEINCONSISTENCY};
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(r.subs[i].type, OP_ERROR);
        CHECK_EQ(r.subs[i].err, want[i]);
        CHECK(!r.subs[i].has_stat && r.subs[i].path == NULL);
    }
    txn_result_free(&r);
    CHECK(tree_lookup(t, "/ok") == NULL);
    CHECK_EQ(stat_of(t, "/").cversion, 0);   /* as after the create of /exists */
    CHECK_EQ(tree_last_zxid(t), 30);
    txn_free(&m);

    /* real ops after an ErrorTxn (not what prep writes, but ZooKeeper's rule
     * covers it): reported as RUNTIMEINCONSISTENCY and not applied */
    txn_init(&m, OP_MULTI);
    m.subs = calloc(2, sizeof(txn_t));
    m.nsubs = 2;
    multi_sub(&m, 0, OP_ERROR, NULL)->err = ZBADVERSION;
    multi_sub(&m, 1, OP_DELETE, "/exists");
    h = header(SESSION_A, 31, 5000, OP_MULTI);
    CHECK_EQ(tree_apply(t, &h, &m, &r), ZBADVERSION);
    CHECK(r.subs[0].err == ZBADVERSION && r.subs[1].err == ZRUNTIMEINCONSISTENCY && r.subs[1].type == OP_ERROR);
    txn_result_free(&r);
    CHECK(tree_lookup(t, "/exists") != NULL);
    txn_free(&m);
    tree_destroy(t);
}

static void test_tree_multi_rejects_nesting(void)
{
    tree_t *t = tree_create(NULL);
    static const int32_t bad[] = {OP_MULTI, OP_CREATE_SESSION, OP_CLOSE_SESSION, OP_GET_DATA};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        txn_t m;
        txn_init(&m, OP_MULTI);
        m.subs = calloc(2, sizeof(txn_t));
        m.nsubs = 2;
        make_create(&m.subs[0], t, OP_CREATE, "/n", "", 0, 0);
        txn_init(&m.subs[1], bad[i]);
        txn_header_t h = header(SESSION_A, 40, 0, OP_MULTI);
        txn_result_t r;
        CHECK_EQ(tree_apply(t, &h, &m, &r), ZBADARGUMENTS);
        CHECK(r.nsubs == 0);
        txn_result_free(&r);
        txn_free(&m);
        CHECK(tree_lookup(t, "/n") == NULL);
    }
    tree_destroy(t);
}

/* ---- containers and TTL nodes ---- */

static int stop_at_first(const znode_t *node, void *arg)
{
    (void)node;
    (*(int *)arg)++;
    return 1;
}

static void test_tree_containers_and_ttl(void)
{
    tree_t *t = tree_create(NULL);
    txn_result_t r;
    CHECK_EQ(create_full(t, OP_CREATE_CONTAINER, SESSION_A, 2, 1000, "/c", "", 0, 0, &r), ZOK);
    CHECK(r.has_stat && r.stat.ephemeral_owner == 0);   /* clients see 0 */
    txn_result_free(&r);
    const znode_t *c = tree_lookup(t, "/c");
    CHECK_EQ(c->ephemeral_owner, EPHEMERAL_OWNER_CONTAINER);
    zstat_t persisted;
    tree_fill_stat_persisted(c, &persisted);
    CHECK_EQ(persisted.ephemeral_owner, EPHEMERAL_OWNER_CONTAINER);
    CHECK_EQ(tree_ephemeral_count(t), 0);

    CHECK_EQ(create_full(t, OP_CREATE_TTL, SESSION_A, 3, 1000, "/t", "", 0, 500, &r), ZOK);
    CHECK(r.has_stat && r.stat.ephemeral_owner == 0);
    txn_result_free(&r);
    const znode_t *ttl = tree_lookup(t, "/t");
    CHECK_EQ(ttl->ephemeral_owner, (int64_t)((uint64_t)EPHEMERAL_OWNER_TTL_MASK | 500));
    CHECK_EQ(tree_ttl_of(ttl->ephemeral_owner), 500);
    CHECK_EQ(tree_ttl_of(EPHEMERAL_OWNER_CONTAINER), -1);
    CHECK_EQ(tree_ttl_of(0), -1);
    CHECK_EQ(tree_ttl_of(SESSION_A), -1);
    CHECK_EQ(tree_ttl_of((int64_t)0xFF00010000000005ULL), -1);   /* another extended type */
    CHECK_EQ(tree_ttl_of((int64_t)((uint64_t)EPHEMERAL_OWNER_TTL_MASK | TTL_MAX_MS)), TTL_MAX_MS);
    CHECK_EQ(create_full(t, OP_CREATE_TTL, 0, 4, 1000, "/t0", "", 0, 0, &r), ZBADARGUMENTS);
    txn_result_free(&r);
    CHECK_EQ(create_full(t, OP_CREATE_TTL, 0, 4, 1000, "/t0", "", 0, TTL_MAX_MS + 1, &r), ZBADARGUMENTS);
    txn_result_free(&r);
    CHECK(tree_lookup(t, "/t0") == NULL);

    char list[256] = "";
    /* a container that never had a child is spared; the TTL has not expired */
    tree_each_expired_container(t, 1500, collect_paths, list);
    CHECK_STR(list, "");
    create(t, 5, "/c/x", "");
    create(t, 6, "/t/x", "");
    list[0] = 0;
    tree_each_expired_container(t, 100000, collect_paths, list);
    CHECK_STR(list, "");   /* both have children */
    delete(t, 7, "/c/x");
    delete(t, 8, "/t/x");
    list[0] = 0;
    tree_each_expired_container(t, 1500, collect_paths, list);
    CHECK_STR(list, "/c ");   /* elapsed 500 is not more than ttl 500 */
    list[0] = 0;
    tree_each_expired_container(t, 1501, collect_paths, list);
    CHECK_STR(list, "/t /c ");
    list[0] = 0;
    tree_each_expired_container(t, 900, collect_paths, list);   /* clock behind mtime */
    CHECK_STR(list, "/c ");
    int calls = 0;
    tree_each_expired_container(t, 1501, stop_at_first, &calls);
    CHECK_EQ(calls, 1);

    /* setData refreshes a TTL node's mtime */
    simple(t, OP_SET_DATA, 0, 9, 2000, "/t", "x", 1, NULL);
    list[0] = 0;
    tree_each_expired_container(t, 2400, collect_paths, list);
    CHECK_STR(list, "/c ");

    /* deleteContainer removes it from the candidates */
    CHECK_EQ(simple(t, OP_DELETE_CONTAINER, 0, 10, 0, "/c", NULL, 0, NULL), ZOK);
    list[0] = 0;
    tree_each_expired_container(t, 10000, collect_paths, list);
    CHECK_STR(list, "/t ");
    CHECK_EQ(delete(t, 11, "/t"), ZOK);
    list[0] = 0;
    tree_each_expired_container(t, 10000, collect_paths, list);
    CHECK_STR(list, "");
    tree_destroy(t);
}

/* ---- counts ---- */

static void test_tree_descendant_count(void)
{
    tree_t *t = tree_create(NULL);
    create(t, 2, "/d", NULL);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/d")), 0);
    const char *paths[] = {"/d/a", "/d/b", "/d/c", "/d/a/1", "/d/a/2", "/d/a/2/x", "/d/c/1", "/e"};
    for (int i = 0; i < 8; i++)
        CHECK_EQ(create(t, 3 + i, paths[i], ""), ZOK);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/d")), 7);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/d/a")), 3);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/d/a/2/x")), 0);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/")), (int64_t)tree_node_count(t) - 1);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/zookeeper")), 2);
    tree_destroy(t);
}

static void test_tree_data_size_counts_utf16(void)
{
    tree_t *t = tree_create(NULL);
    /* "/\xc3\xa4" is 2 UTF-16 units; its data is 2 bytes */
    CHECK_EQ(create(t, 2, "/\xc3\xa4", "\xc3\xa9"), ZOK);
    CHECK_EQ(tree_approximate_data_size(t), 44 + 2 + 2);
    CHECK_EQ(create(t, 3, "/\xe2\x82\xac/x", "abc"), ZNONODE);
    CHECK_EQ(create(t, 3, "/\xe2\x82\xac", "abc"), ZOK);
    CHECK_EQ(tree_approximate_data_size(t), 44 + 4 + 2 + 3);
    tree_destroy(t);
}

static void test_tree_many_nodes(void)
{
    enum { PARENTS = 100, CHILDREN = 1000 };
    tree_t *t = tree_create(NULL);
    char path[64];
    int64_t zxid = 1;
    int errors = 0;
    for (int p = 0; p < PARENTS; p++) {
        snprintf(path, sizeof(path), "/p%03d", p);
        errors += create(t, ++zxid, path, "") != ZOK;
        for (int c = 0; c < CHILDREN; c++) {
            snprintf(path, sizeof(path), "/p%03d/c%06d", p, c);
            errors += create(t, ++zxid, path, "d") != ZOK;
        }
    }
    CHECK_EQ(errors, 0);
    CHECK_EQ(tree_node_count(t), 4 + PARENTS * (CHILDREN + 1));
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/")), PARENTS * (CHILDREN + 1) + 3);
    int missing = 0;
    for (int p = 0; p < PARENTS; p++) {
        for (int c = 0; c < CHILDREN; c += 7) {
            snprintf(path, sizeof(path), "/p%03d/c%06d", p, c);
            const znode_t *n = tree_lookup(t, path);
            missing += !n || n->parent->children[n->index_in_parent] != n;
        }
    }
    CHECK_EQ(missing, 0);
    /* delete in an order that exercises swap-removal from the middle */
    for (int p = 0; p < PARENTS; p++) {
        for (int c = 0; c < CHILDREN; c++) {
            int k = (c * 389) % CHILDREN;   /* 389 is prime to 1000: a permutation */
            snprintf(path, sizeof(path), "/p%03d/c%06d", p, k);
            errors += delete(t, ++zxid, path) != ZOK;
        }
        snprintf(path, sizeof(path), "/p%03d", p);
        const znode_t *parent = tree_lookup(t, path);
        errors += parent->nchildren != 0 || parent->children != NULL;
        errors += delete(t, ++zxid, path) != ZOK;
    }
    CHECK_EQ(errors, 0);
    CHECK_EQ(tree_node_count(t), 4);
    CHECK_EQ(tree_approximate_data_size(t), 44);
    CHECK_EQ(tree_last_zxid(t), zxid);
    tree_destroy(t);
}

/* Nothing walks the tree recursively: a deep chain is created, counted and
 * destroyed without using the stack per level. */
static void test_tree_deep_chain(void)
{
    enum { DEPTH = 10000 };
    tree_t *t = tree_create(NULL);
    char *path = malloc(2 * DEPTH + 1);
    size_t len = 0;
    int errors = 0;
    for (int i = 0; i < DEPTH; i++) {
        path[len++] = '/';
        path[len++] = 'd';
        path[len] = 0;
        errors += create(t, 2 + i, path, "") != ZOK;
    }
    CHECK_EQ(errors, 0);
    CHECK_EQ(tree_descendant_count(tree_lookup(t, "/d")), DEPTH - 1);
    CHECK_EQ(tree_lookup(t, path)->nchildren, 0);
    free(path);
    tree_destroy(t);
}

static void test_tree_apply_edge_cases(void)
{
    tree_t *t = tree_create(NULL);
    txn_t txn;
    txn_init(&txn, OP_CREATE);   /* no path */
    txn_header_t h = header(0, 5, 0, OP_CREATE);
    txn_result_t r;
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZBADARGUMENTS);
    txn_result_free(&r);
    CHECK_EQ(tree_apply(t, &h, NULL, &r), ZBADARGUMENTS);
    txn_result_free(&r);
    /* an ErrorTxn reports its error; unknown types are ignored as in ZooKeeper */
    txn_init(&txn, OP_ERROR);
    txn.err = ZBADVERSION;
    h = header(0, 6, 0, OP_ERROR);
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZBADVERSION);
    CHECK(r.type == OP_ERROR && r.err == ZBADVERSION);
    txn_result_free(&r);
    h = header(0, 7, 0, 4242);
    CHECK_EQ(tree_apply(t, &h, &txn, &r), ZOK);
    txn_result_free(&r);
    /* check changes nothing, even for a missing node */
    CHECK_EQ(simple(t, OP_CHECK, 0, 8, 0, "/missing", NULL, 3, &r), ZOK);
    CHECK_STR(r.path, "/missing");
    txn_result_free(&r);
    CHECK_EQ(tree_last_zxid(t), 8);
    CHECK_EQ(tree_node_count(t), 4);
    tree_destroy(t);
}

/* ---- watches, through the real watch manager ---- */

typedef struct {
    char log[2048];
    int count;
} events_t;

static void record_event(void *watcher, int32_t type, const char *path, void *ctx)
{
    events_t *e = ctx;
    char line[128];
    snprintf(line, sizeof(line), "%s:%d:%s ", (const char *)watcher, type, path);
    if (strlen(e->log) + strlen(line) < sizeof(e->log))
        strcat(e->log, line);
    e->count++;
}

static void test_tree_fires_watches(void)
{
    events_t ev = {{0}, 0};
    watch_manager_t *wm = watch_manager_create(record_event, &ev);
    tree_t *t = tree_create(wm);
    char w1[] = "w1", w2[] = "w2";
    watch_add(wm, WATCH_TABLE_DATA, "/w", w1, WATCH_MODE_STANDARD);   /* exists("/w") */
    watch_add(wm, WATCH_TABLE_CHILD, "/", w2, WATCH_MODE_STANDARD);   /* getChildren("/") */
    create(t, 2, "/w", "");
    CHECK_STR(ev.log, "w1:1:/w w2:4:/ ");

    ev.log[0] = 0;
    watch_add(wm, WATCH_TABLE_DATA, "/w", w1, WATCH_MODE_STANDARD);
    simple(t, OP_SET_DATA, 0, 3, 0, "/w", "x", 1, NULL);
    simple(t, OP_SET_ACL, 0, 4, 0, "/w", NULL, 1, NULL);   /* setACL fires nothing */
    CHECK_STR(ev.log, "w1:3:/w ");

    ev.log[0] = 0;
    watch_add(wm, WATCH_TABLE_DATA, "/w", w1, WATCH_MODE_STANDARD);
    watch_add(wm, WATCH_TABLE_CHILD, "/", w2, WATCH_MODE_STANDARD);
    delete(t, 5, "/w");
    CHECK_STR(ev.log, "w1:2:/w w2:4:/ ");

    /* session close fires for each ephemeral */
    ev.log[0] = 0;
    create_ephemeral(t, SESSION_A, 6, "/eph");
    watch_add(wm, WATCH_TABLE_DATA, "/eph", w1, WATCH_MODE_STANDARD);
    close_session(t, SESSION_A, 7, NULL, 0);
    CHECK_STR(ev.log, "w1:2:/eph ");

    /* a failed multi fires nothing */
    ev.log[0] = 0;
    watch_add(wm, WATCH_TABLE_DATA, "/ok", w1, WATCH_MODE_STANDARD);
    txn_t m;
    txn_init(&m, OP_MULTI);
    m.subs = calloc(2, sizeof(txn_t));
    m.nsubs = 2;
    make_create(&m.subs[0], t, OP_CREATE, "/ok", "", 0, 0);
    multi_sub(&m, 1, OP_ERROR, NULL)->err = ZNODEEXISTS;
    txn_header_t h = header(SESSION_A, 8, 0, OP_MULTI);
    txn_result_t r;
    tree_apply(t, &h, &m, &r);
    txn_result_free(&r);
    txn_free(&m);
    CHECK_EQ(ev.log[0], 0);
    tree_destroy(t);
    watch_manager_destroy(wm);
}

static void test_tree_set_watches(void)
{
    events_t ev = {{0}, 0};
    watch_manager_t *wm = watch_manager_create(record_event, &ev);
    tree_t *t = tree_create(wm);
    char w[] = "w";
    create(t, 2, "/old", "");     /* unchanged since zxid 5 */
    create(t, 3, "/kids", "");
    create(t, 6, "/new", "");     /* changed after zxid 5 */
    create(t, 7, "/kids/k", "");  /* /kids pzxid 7 */

    char *data[] = {"/old", "/new", "/gone"};
    char *exist[] = {"/new", "/absent"};
    char *child[] = {"/old", "/kids", "/gone"};
    char *persistent[] = {"/p"};
    char *recursive[] = {"/r"};
    tree_set_watches(t, 5, data, 3, exist, 2, child, 3, persistent, 1, recursive, 1, w);
    CHECK_STR(ev.log, "w:3:/new w:2:/gone w:1:/new w:4:/kids w:2:/gone ");

    /* what was registered fires later */
    ev.log[0] = 0;
    simple(t, OP_SET_DATA, 0, 8, 0, "/old", "x", 1, NULL);   /* data watch on /old */
    create(t, 9, "/absent", "");                             /* exists watch */
    create(t, 10, "/old/c", "");                             /* child watch on /old */
    CHECK_STR(ev.log, "w:3:/old w:1:/absent w:4:/old ");

    ev.log[0] = 0;
    create(t, 11, "/p", "");
    simple(t, OP_SET_DATA, 0, 12, 0, "/p", "x", 1, NULL);
    simple(t, OP_SET_DATA, 0, 13, 0, "/p", "y", 2, NULL);   /* persistent: again */
    create(t, 14, "/r", "");
    create(t, 15, "/r/deep", "");                           /* recursive: below too */
    CHECK_STR(ev.log, "w:1:/p w:3:/p w:3:/p w:1:/r w:1:/r/deep ");

    /* no watch manager: setWatches does nothing */
    tree_t *plain = tree_create(NULL);
    tree_set_watches(plain, 0, data, 3, exist, 2, child, 3, persistent, 1, recursive, 1, w);
    tree_destroy(plain);
    tree_destroy(t);
    watch_manager_destroy(wm);
}

void suite_tree(void)
{
    RUN(test_tree_initial_nodes);
    RUN(test_tree_create_stats);
    RUN(test_tree_delete_stats);
    RUN(test_tree_set_data_and_acl);
    RUN(test_tree_set_data_in_place_and_beyond);
    RUN(test_tree_sequential_parent_cversion);
    RUN(test_tree_replayed_create_of_existing_node);
    RUN(test_tree_acls_are_shared);
    RUN(test_tree_ephemerals_per_session);
    RUN(test_tree_multi_success);
    RUN(test_tree_multi_failure_results);
    RUN(test_tree_multi_rejects_nesting);
    RUN(test_tree_containers_and_ttl);
    RUN(test_tree_descendant_count);
    RUN(test_tree_data_size_counts_utf16);
    RUN(test_tree_many_nodes);
    RUN(test_tree_deep_chain);
    RUN(test_tree_apply_edge_cases);
    RUN(test_tree_fires_watches);
    RUN(test_tree_set_watches);
}
