/* test_snapshot.c -- snapshot files (ZooKeeper's FileSnap layout): round
 * trips that must give back the tree field by field, and damaged or hostile
 * files that must be refused cleanly (the suite runs under ASan/UBSan, so a
 * crash, an overflow or a leak on any of them fails it).
 *
 * The layout itself was checked by hand against Apache ZooKeeper 3.8.0's
 * own reader (SnapshotFormatter and FileSnap.deserialize, which checks the
 * Adler-32): see the note at the top of src/keeper/disk/snapshot.c. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <snappy-c.h>
#include <zlib.h>

#include "base/buf.h"
#include "base/endian.h"
#include "keeper/data/jute.h"
#include "keeper/disk/snapshot.h"
#include "keeper/data/tree.h"
#include "suites.h"
#include "unit.h"

enum { SESSION_A = 0x1000000000000a01, SESSION_B = 0x1000000000000b02, SESSION_C = 0x7f0000000000c003 };

/* ---- scratch folders and files ---- */

static char *scratch_dir(void)
{
    char *dir = strdup("/tmp/kipper-snapshot-XXXXXX");
    if (!dir || !mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    return dir;
}

static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[512];
    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
}

static int write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static uint8_t *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    *len = p && fread(p, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return p;
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            n++;
    if (d)
        closedir(d);
    return n;
}

/* ---- building trees through txns, as prep would ---- */

static void set_acl_item(acl_t *a, int32_t perms, const char *scheme, const char *id)
{
    a->perms = perms;
    a->scheme = strdup(scheme);
    a->id = strdup(id);
}

static void one_acl(acl_list_t *acl, int32_t perms, const char *scheme, const char *id)
{
    acl->items = calloc(1, sizeof(acl_t));
    acl->count = 1;
    set_acl_item(&acl->items[0], perms, scheme, id);
}

static int apply(tree_t *t, int64_t session, int64_t zxid, int32_t type, txn_t *txn)
{
    txn_header_t h = {session, 1, zxid, 1600000000000 + zxid, type};
    txn_result_t r;
    int err = tree_apply(t, &h, txn, &r);
    txn_result_free(&r);
    txn_free(txn);
    return err;
}

/* A create of any kind. data NULL = null data; acl NULL = world:anyone ALL. */
static int create_node(tree_t *t, int64_t zxid, int32_t type, const char *path, const void *data, int32_t len,
                       int64_t session, int64_t ttl, acl_list_t *acl)
{
    txn_t txn;
    txn_init(&txn, type);
    txn.path = strdup(path);
    txn.data_len = data ? len : -1;
    if (data && len > 0) {
        txn.data = malloc((size_t)len);
        memcpy(txn.data, data, (size_t)len);
    }
    if (acl)
        txn.acl = *acl;
    else
        one_acl(&txn.acl, PERM_ALL, "world", "anyone");
    txn.ephemeral = session != 0 && type != OP_CREATE_CONTAINER && type != OP_CREATE_TTL;
    txn.parent_cversion = -1;   /* one more than the parent's now */
    txn.ttl = ttl;
    return apply(t, session, zxid, type, &txn);
}

static int create_plain(tree_t *t, int64_t zxid, const char *path, const char *data)
{
    return create_node(t, zxid, OP_CREATE, path, data, data ? (int32_t)strlen(data) : -1, 0, 0, NULL);
}

static int set_data(tree_t *t, int64_t zxid, const char *path, const char *data, int32_t version)
{
    txn_t txn;
    txn_init(&txn, OP_SET_DATA);
    txn.path = strdup(path);
    txn.data_len = (int32_t)strlen(data);
    txn.data = txn.data_len ? (uint8_t *)strdup(data) : NULL;
    txn.version = version;
    return apply(t, 0, zxid, OP_SET_DATA, &txn);
}

static int set_acl(tree_t *t, int64_t zxid, const char *path, acl_list_t *acl, int32_t aversion)
{
    txn_t txn;
    txn_init(&txn, OP_SET_ACL);
    txn.path = strdup(path);
    txn.acl = *acl;
    txn.version = aversion;
    return apply(t, 0, zxid, OP_SET_ACL, &txn);
}

static int delete_node(tree_t *t, int64_t zxid, const char *path)
{
    txn_t txn;
    txn_init(&txn, OP_DELETE);
    txn.path = strdup(path);
    return apply(t, 0, zxid, OP_DELETE, &txn);
}

/* Every kind of node: persistent, ephemerals of three sessions, containers
 * (one emptied after having a child), TTL nodes, sequential names with a
 * gap, null/empty/binary/large data, shared and distinct ACLs (an empty
 * one too), a deep path, set data/ACL on nodes and on the root. */
static tree_t *rich_tree(int64_t *zxid_out)
{
    tree_t *t = tree_create(NULL);
    int64_t z = 1;
    int fails = 0;
    fails += create_plain(t, z++, "/app", "hello") != ZOK;
    fails += create_plain(t, z++, "/app/null", NULL) != ZOK;
    fails += create_plain(t, z++, "/app/empty", "") != ZOK;
    fails += create_node(t, z++, OP_CREATE, "/app/binary", "a\0b\0", 4, 0, 0, NULL) != ZOK;
    size_t big_len = 200 * 1024;   /* larger than the writer's buffer */
    uint8_t *big = malloc(big_len);
    for (size_t i = 0; i < big_len; i++)
        big[i] = (uint8_t)(i * 31 + 7);
    fails += create_node(t, z++, OP_CREATE, "/app/big", big, (int32_t)big_len, 0, 0, NULL) != ZOK;
    free(big);
    fails += set_data(t, z++, "/app", "hello again", 1) != ZOK;
    fails += set_data(t, z++, "/app", "hello, third", 2) != ZOK;
    fails += set_data(t, z++, "/", "root data", 1) != ZOK;

    fails += create_plain(t, z++, "/seq", NULL) != ZOK;
    fails += create_plain(t, z++, "/seq/n0000000000", "0") != ZOK;
    fails += create_plain(t, z++, "/seq/n0000000001", "1") != ZOK;
    fails += create_plain(t, z++, "/seq/n0000000002", "2") != ZOK;
    fails += delete_node(t, z++, "/seq/n0000000001") != ZOK;

    fails += create_plain(t, z++, "/eph", NULL) != ZOK;
    fails += create_node(t, z++, OP_CREATE, "/eph/a1", "x", 1, SESSION_A, 0, NULL) != ZOK;
    fails += create_node(t, z++, OP_CREATE, "/eph/a2", NULL, 0, SESSION_A, 0, NULL) != ZOK;
    fails += create_node(t, z++, OP_CREATE, "/eph/b1", "", 0, SESSION_B, 0, NULL) != ZOK;
    fails += create_node(t, z++, OP_CREATE, "/app/c1", "c", 1, SESSION_C, 0, NULL) != ZOK;
    fails += create_node(t, z++, OP_CREATE, "/eph/s0000000004", "s", 1, SESSION_C, 0, NULL) != ZOK;

    fails += create_node(t, z++, OP_CREATE_CONTAINER, "/box", "", 0, SESSION_A, 0, NULL) != ZOK;
    fails += create_plain(t, z++, "/box/item", "i") != ZOK;
    fails += create_node(t, z++, OP_CREATE_CONTAINER, "/emptied", NULL, 0, SESSION_A, 0, NULL) != ZOK;
    fails += create_plain(t, z++, "/emptied/gone", NULL) != ZOK;
    fails += delete_node(t, z++, "/emptied/gone") != ZOK;
    fails += create_node(t, z++, OP_CREATE_TTL, "/ttl1", "t", 1, SESSION_B, 5000, NULL) != ZOK;
    fails += create_node(t, z++, OP_CREATE_TTL, "/ttl2", NULL, 0, 0, 1, NULL) != ZOK;
    fails += create_plain(t, z++, "/ttl2/child", NULL) != ZOK;

    acl_list_t acl;
    one_acl(&acl, PERM_READ | PERM_ADMIN, "digest", "bob:BsdpDhcWm8CpF+3cDbPUqjdYyIE=");
    fails += create_node(t, z++, OP_CREATE, "/secure", "s", 1, 0, 0, &acl) != ZOK;
    one_acl(&acl, PERM_READ | PERM_ADMIN, "digest", "bob:BsdpDhcWm8CpF+3cDbPUqjdYyIE=");
    fails += create_node(t, z++, OP_CREATE, "/secure/too", "s", 1, 0, 0, &acl) != ZOK;   /* shared */
    acl.items = calloc(3, sizeof(acl_t));
    acl.count = 3;
    set_acl_item(&acl.items[0], PERM_READ, "world", "anyone");
    set_acl_item(&acl.items[1], PERM_ALL, "digest", "alice:0Dd0xg4lQ3g4FOcC8kI1ZuCKpYs=");
    set_acl_item(&acl.items[2], PERM_CREATE | PERM_DELETE, "ip", "10.0.0.0/8");
    fails += create_node(t, z++, OP_CREATE, "/multi", NULL, 0, 0, 0, &acl) != ZOK;
    one_acl(&acl, PERM_READ, "ip", "127.0.0.1");
    fails += set_acl(t, z++, "/app/empty", &acl, 1) != ZOK;
    one_acl(&acl, PERM_READ, "ip", "127.0.0.1");
    fails += set_acl(t, z++, "/", &acl, 3) != ZOK;
    acl.items = NULL;
    acl.count = 0;
    fails += create_node(t, z++, OP_CREATE, "/noacl", NULL, 0, 0, 0, &acl) != ZOK;   /* tree allows it */
    fails += create_plain(t, z++, "/\xc3\xbcnicode-\xe2\x9c\x93", "u") != ZOK;

    char deep[1024] = "";
    for (int level = 0; level < 100; level++) {
        strcat(deep, level % 2 ? "/d" : "/e");
        fails += create_plain(t, z++, deep, level % 3 ? "x" : NULL) != ZOK;
    }
    CHECK_EQ(fails, 0);
    *zxid_out = z - 1;
    return t;
}

/* ---- comparing trees field by field ---- */

static int same_stat(const zstat_t *a, const zstat_t *b)
{
    return a->czxid == b->czxid && a->mzxid == b->mzxid && a->ctime == b->ctime && a->mtime == b->mtime &&
           a->version == b->version && a->cversion == b->cversion && a->aversion == b->aversion &&
           a->ephemeral_owner == b->ephemeral_owner && a->data_length == b->data_length &&
           a->num_children == b->num_children && a->pzxid == b->pzxid;
}

/* 1 if node (from one tree) has an equal in other: path, stats, data, ACL,
 * parent and the same set of children. */
static int same_node(const znode_t *n, const tree_t *other)
{
    const znode_t *m = tree_lookup(other, n->path);
    if (!m)
        return 0;
    zstat_t sa, sb, pa, pb;
    tree_fill_stat(n, &sa);
    tree_fill_stat(m, &sb);
    tree_fill_stat_persisted(n, &pa);
    tree_fill_stat_persisted(m, &pb);
    if (!same_stat(&sa, &sb) || !same_stat(&pa, &pb) || strcmp(znode_name(n), znode_name(m)) != 0)
        return 0;
    if (n->data_len != m->data_len || (n->data_len > 0 && memcmp(n->data, m->data, (size_t)n->data_len) != 0))
        return 0;
    if (!acl_list_equal(n->acl, m->acl))
        return 0;
    if ((n->parent == NULL) != (m->parent == NULL) || (n->parent && strcmp(n->parent->path, m->parent->path) != 0))
        return 0;
    if (n->nchildren != m->nchildren)
        return 0;
    for (int32_t i = 0; i < n->nchildren; i++) {
        const znode_t *c = tree_lookup(other, n->children[i]->path);
        if (!c || c->parent != m)
            return 0;
    }
    return 1;
}

typedef struct {
    const tree_t *other;
    int mismatches;
} compare_ctx_t;

static int compare_node(const znode_t *n, void *arg)
{
    compare_ctx_t *ctx = arg;
    if (!same_node(n, ctx->other)) {
        fprintf(stderr, "  node %s differs\n", n->path);
        ctx->mismatches++;
    }
    return 0;
}

typedef struct {
    const char *path;
    int found;
} find_ctx_t;

static int find_path(const znode_t *n, void *arg)
{
    find_ctx_t *f = arg;
    f->found = strcmp(n->path, f->path) == 0;
    return f->found;
}

static int in_session_list(const tree_t *t, int64_t session, const char *path)
{
    find_ctx_t f = {path, 0};
    tree_each_session_ephemeral(t, session, find_path, &f);
    return f.found;
}

typedef struct {
    const tree_t *a, *b;
    int64_t session;
    int mismatches;
} sessions_ctx_t;

static int check_listed_in_b(const znode_t *n, void *arg)
{
    sessions_ctx_t *ctx = arg;
    if (n->ephemeral_owner != ctx->session || !in_session_list(ctx->b, ctx->session, n->path))
        ctx->mismatches++;
    return 0;
}

/* The same ephemerals, as a set, on the session's list in both trees. */
static void compare_session(int64_t session, void *arg)
{
    sessions_ctx_t *ctx = arg;
    if (tree_session_ephemeral_count(ctx->a, session) != tree_session_ephemeral_count(ctx->b, session))
        ctx->mismatches++;
    ctx->session = session;
    tree_each_session_ephemeral(ctx->a, session, check_listed_in_b, ctx);
}

static int expired_count(const znode_t *n, void *arg)
{
    (void)n;
    (*(int *)arg)++;
    return 0;
}

static int expired_sum(const tree_t *t, int64_t now)
{
    int n = 0;
    tree_each_expired_container(t, now, expired_count, &n);
    return n;
}

static void check_same_tree(const tree_t *a, const tree_t *b)
{
    CHECK_EQ(tree_node_count(a), tree_node_count(b));
    CHECK_EQ(tree_ephemeral_count(a), tree_ephemeral_count(b));
    CHECK_EQ(tree_approximate_data_size(a), tree_approximate_data_size(b));
    CHECK_EQ(tree_acl_count(a), tree_acl_count(b));
    compare_ctx_t c1 = {b, 0}, c2 = {a, 0};
    tree_walk(a, compare_node, &c1);
    tree_walk(b, compare_node, &c2);
    CHECK_EQ(c1.mismatches, 0);
    CHECK_EQ(c2.mismatches, 0);
    sessions_ctx_t s1 = {a, b, 0, 0}, s2 = {b, a, 0, 0};
    tree_each_ephemeral_session(a, compare_session, &s1);
    tree_each_ephemeral_session(b, compare_session, &s2);
    CHECK_EQ(s1.mismatches, 0);
    CHECK_EQ(s2.mismatches, 0);
    /* the container/TTL list came back: same candidates now and far ahead */
    CHECK_EQ(expired_sum(a, 1600000000000), expired_sum(b, 1600000000000));
    CHECK_EQ(expired_sum(a, INT64_MAX), expired_sum(b, INT64_MAX));
}

/* ---- round trips ---- */

static const snapshot_session_t rich_sessions[] = {
    {SESSION_A, 30000}, {SESSION_B, 10000}, {SESSION_C, 4000}, {0x2000000000000001, 6000},   /* no ephemerals */
};

static tree_t *load(const char *path, snapshot_session_t **s, size_t *n, int64_t *zxid, char *err, size_t errlen)
{
    tree_t *t = NULL;
    if (snapshot_load_file(path, NULL, &t, s, n, zxid, err, errlen) < 0)
        return NULL;
    return t;
}

/* rich_tree() with rich_sessions written into dir as kipper writes a
 * snapshot: the tree, its zxid and the file's path. */
static tree_t *write_rich_snapshot(const char *dir, int64_t *zxid, char *path, size_t pathlen)
{
    tree_t *t = rich_tree(zxid);
    char err[512] = "";
    size_t nsess = sizeof(rich_sessions) / sizeof(rich_sessions[0]);
    CHECK_EQ(snapshot_write_file(dir, *zxid, t, rich_sessions, nsess, err, sizeof(err)), 0);
    snapshot_path(path, pathlen, dir, *zxid);
    return t;
}

static void test_snapshot_round_trip_every_kind(void)
{
    char *dir = scratch_dir();
    int64_t zxid;
    char err[512] = "", path[512];
    tree_t *t = write_rich_snapshot(dir, &zxid, path, sizeof(path));
    size_t nsess = sizeof(rich_sessions) / sizeof(rich_sessions[0]);
    CHECK_EQ(count_entries(dir), 1);   /* the .tmp file is gone */

    snapshot_session_t *s = NULL;
    size_t n = 0;
    int64_t loaded_zxid = -1;
    tree_t *back = load(path, &s, &n, &loaded_zxid, err, sizeof(err));
    CHECK(back != NULL);
    if (!back) {
        fprintf(stderr, "  %s\n", err);
    } else {
        CHECK_EQ(loaded_zxid, zxid);
        CHECK_EQ(tree_last_zxid(back), zxid);
        check_same_tree(t, back);
        CHECK_EQ(tree_session_ephemeral_count(back, SESSION_A), 2);
        CHECK_EQ(tree_session_ephemeral_count(back, SESSION_C), 2);
        CHECK_EQ(tree_lookup(back, "/app/null")->data_len, -1);
        CHECK_EQ(tree_lookup(back, "/app/empty")->data_len, 0);
        CHECK_EQ(tree_lookup(back, "/noacl")->acl->count, 0);
        CHECK_EQ(tree_lookup(back, "/")->acl->items[0].perms, PERM_READ);
        CHECK(tree_lookup(back, "/secure")->acl->items == tree_lookup(back, "/secure/too")->acl->items);
        CHECK_EQ(n, nsess);
        for (size_t i = 0; s && i < n && i < nsess; i++)
            CHECK(s[i].id == rich_sessions[i].id && s[i].timeout_ms == rich_sessions[i].timeout_ms);

        /* the loaded tree works as a live one: a create and a session close */
        CHECK_EQ(create_plain(back, zxid + 1, "/eph/new", "n"), ZOK);
        txn_t close;
        txn_init(&close, OP_CLOSE_SESSION);
        CHECK_EQ(apply(back, SESSION_A, zxid + 2, OP_CLOSE_SESSION, &close), ZOK);
        CHECK(!tree_lookup(back, "/eph/a1") && !tree_lookup(back, "/eph/a2"));
        CHECK_EQ(tree_ephemeral_count(back), tree_ephemeral_count(t) - 2);
    }
    free(s);
    tree_destroy(back);
    tree_destroy(t);
    remove_dir(dir);
}

/* ZooKeeper's compressed snapshots, as its SnapStream writes them: the plain
 * file's bytes through Java's GZIPOutputStream (one gzip member) or
 * snappy-java's SnappyOutputStream (the xerial header, then 32 KiB of input
 * per [int32 length][raw snappy] block). */
static buf_t gzip_member(const uint8_t *in, size_t len)
{
    buf_t out;
    buf_init(&out);
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return out;
    uLong bound = deflateBound(&z, (uLong)len);
    uint8_t *room = malloc(bound);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = room;
    z.avail_out = (uInt)bound;
    if (room && deflate(&z, Z_FINISH) == Z_STREAM_END)
        buf_append(&out, room, bound - z.avail_out);
    deflateEnd(&z);
    free(room);
    return out;
}

static buf_t xerial_stream(const uint8_t *in, size_t len)
{
    static const uint8_t header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    buf_t out;
    buf_init(&out);
    buf_append(&out, header, sizeof(header));
    char *block = malloc(snappy_max_compressed_length(32 * 1024));
    for (size_t at = 0; block && at < len; at += 32 * 1024) {
        size_t n = len - at < 32 * 1024 ? len - at : 32 * 1024;
        size_t clen = snappy_max_compressed_length(n);
        snappy_compress((const char *)in + at, n, block, &clen);
        jute_put_int(&out, (int32_t)clen);
        buf_append(&out, block, clen);
    }
    free(block);
    return out;
}

/* A snapshot written by kipper, compressed as ZooKeeper would, is found by
 * snapshot_list under its ZooKeeper name and loads as the same tree;
 * damaged ones are refused with the reason, and a stream that
 * decompresses past the bound is cut off there. */
static void test_snapshot_compressed_by_zookeeper(void)
{
    char *dir = scratch_dir();
    int64_t zxid;
    char err[512] = "", path[512];
    tree_t *t = write_rich_snapshot(dir, &zxid, path, sizeof(path));
    size_t nsess = sizeof(rich_sessions) / sizeof(rich_sessions[0]);
    size_t plain_len = 0;
    uint8_t *plain = read_bytes(path, &plain_len);
    CHECK(plain != NULL && plain_len > 0);
    unlink(path);
    buf_t packed[2] = {gzip_member(plain, plain_len), xerial_stream(plain, plain_len)};
    const snapshot_codec_t codecs[2] = {SNAPSHOT_GZIP, SNAPSHOT_SNAPPY};
    for (int i = 0; i < 2; i++) {
        snapshot_file_t f = {zxid, codecs[i]};
        snapshot_file_path(path, sizeof(path), dir, &f);
        CHECK_EQ(write_bytes(path, buf_read_ptr(&packed[i]), buf_unread(&packed[i])), 0);
        snapshot_file_t *files = NULL;
        size_t count = 0;
        CHECK_EQ(snapshot_list(dir, &files, &count), 0);
        CHECK(count == 1 && files[0].zxid == zxid && files[0].codec == codecs[i]);
        free(files);

        snapshot_session_t *s = NULL;
        size_t n = 0;
        int64_t loaded_zxid = -1;
        tree_t *back = load(path, &s, &n, &loaded_zxid, err, sizeof(err));
        CHECK(back != NULL);
        if (back) {
            CHECK_EQ(loaded_zxid, zxid);
            check_same_tree(t, back);
            CHECK_EQ(n, nsess);
        } else {
            fprintf(stderr, "  %s\n", err);
        }
        free(s);
        tree_destroy(back);

        /* Cut short, then one byte changed in the middle: refused, not loaded. */
        size_t len = buf_unread(&packed[i]);
        uint8_t *bytes = (uint8_t *)buf_read_ptr(&packed[i]);
        CHECK_EQ(write_bytes(path, bytes, len - 7), 0);
        CHECK(load(path, &s, &n, &loaded_zxid, err, sizeof(err)) == NULL);
        CHECK(strstr(err, i == 0 ? "gzip: the file ends inside the stream" : "snappy: xerial block of") != NULL);
        bytes[len / 2] ^= 0x55;
        CHECK_EQ(write_bytes(path, bytes, len), 0);
        CHECK(load(path, &s, &n, &loaded_zxid, err, sizeof(err)) == NULL);
        CHECK(strstr(err, i == 0 ? "gzip: " : "snappy: ") != NULL || strstr(err, "checksum") != NULL);
        bytes[len / 2] ^= 0x55;
        unlink(path);

        /* The bound: a stream decompressing to more than max is refused. */
        uint8_t *out = (uint8_t *)1;
        size_t out_len = 0;
        CHECK_EQ(snapshot_decompress(codecs[i], bytes, len, plain_len - 1, &out, &out_len, err, sizeof(err)), -1);
        CHECK(strstr(err, "decompresses to more than") != NULL);
        CHECK_EQ(snapshot_decompress(codecs[i], bytes, len, plain_len, &out, &out_len, err, sizeof(err)), 0);
        CHECK(out_len == plain_len && memcmp(out, plain, plain_len) == 0);
        free(out);
        buf_free(&packed[i]);
    }
    /* An empty block first (a raw snappy block of nothing is one byte, 0),
     * which snappy-java's reader takes: skipped. (Decoding it into the
     * buffer not yet allocated was the fuzzer's finding here, a NULL + 0
     * that clang's UBSan reports and gcc's does not: the corpus's
     * regress-xerial-empty-block replays it.) */
    buf_t snappy = xerial_stream(plain, plain_len), with_empty;
    buf_init(&with_empty);
    buf_append(&with_empty, buf_read_ptr(&snappy), 16);
    static const uint8_t empty_block[5] = {0, 0, 0, 1, 0};
    buf_append(&with_empty, empty_block, sizeof(empty_block));
    buf_append(&with_empty, buf_read_ptr(&snappy) + 16, buf_unread(&snappy) - 16);
    uint8_t *out = NULL;
    size_t out_len = 0;
    CHECK_EQ(snapshot_decompress(SNAPSHOT_SNAPPY, buf_read_ptr(&with_empty), buf_unread(&with_empty), plain_len, &out,
                                 &out_len, err, sizeof(err)), 0);
    CHECK(out_len == plain_len && out && memcmp(out, plain, plain_len) == 0);
    free(out);
    /* Nothing but empty blocks: nothing decompressed, refused as a file
     * too short to be a snapshot (and no buffer ever allocated). */
    snapshot_file_t empty_file = {zxid, SNAPSHOT_SNAPPY};
    snapshot_file_path(path, sizeof(path), dir, &empty_file);
    buf_clear(&with_empty);
    buf_append(&with_empty, buf_read_ptr(&snappy), 16);
    buf_append(&with_empty, empty_block, sizeof(empty_block));
    CHECK_EQ(write_bytes(path, buf_read_ptr(&with_empty), buf_unread(&with_empty)), 0);
    snapshot_session_t *none = NULL;
    size_t nnone = 0;
    int64_t loaded = -1;
    CHECK(load(path, &none, &nnone, &loaded, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "the file ends after 0 bytes") != NULL);
    /* An empty compressed file (never mapped: nothing to read from). */
    CHECK_EQ(write_bytes(path, "", 0), 0);
    CHECK(load(path, &none, &nnone, &loaded, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "the file is empty") != NULL);
    unlink(path);
    /* A block whose length preamble claims more than snappy can expand to
     * is refused before anything of that size is allocated. */
    static const uint8_t claims_4gib[10] = {0, 0, 0, 6, 0xff, 0xff, 0xff, 0xff, 0x0f, 0};
    buf_clear(&with_empty);
    buf_append(&with_empty, buf_read_ptr(&snappy), 16);
    buf_append(&with_empty, claims_4gib, sizeof(claims_4gib));
    CHECK_EQ(snapshot_decompress(SNAPSHOT_SNAPPY, buf_read_ptr(&with_empty), buf_unread(&with_empty),
                                 SNAPSHOT_MAX_DECOMPRESSED, &out, &out_len, err, sizeof(err)), -1);
    CHECK(strstr(err, "a block of 6 bytes claims 4294967295 decompressed") != NULL);
    buf_free(&with_empty);
    buf_free(&snappy);
    free(plain);
    tree_destroy(t);
    remove_dir(dir);
}

static void test_snapshot_round_trip_fresh_tree(void)
{
    char *dir = scratch_dir();
    tree_t *t = tree_create(NULL);
    char err[512] = "", path[512];
    CHECK_EQ(snapshot_write_file(dir, 0, t, NULL, 0, err, sizeof(err)), 0);
    snapshot_path(path, sizeof(path), dir, 0);
    CHECK(strstr(path, "/snapshot.0") != NULL);
    snapshot_session_t *s = (snapshot_session_t *)1;
    size_t n = 99;
    int64_t zxid = -1;
    tree_t *back = load(path, &s, &n, &zxid, err, sizeof(err));
    CHECK(back != NULL);
    if (back) {
        check_same_tree(t, back);
        CHECK_EQ(tree_node_count(back), 4);
        CHECK_EQ(tree_approximate_data_size(back), 44);
        CHECK_EQ(tree_lookup(back, "/zookeeper/config")->aversion, -1);
        CHECK(s == NULL && n == 0 && zxid == 0);
    }
    tree_destroy(back);
    tree_destroy(t);
    remove_dir(dir);
}

/* A tree without even a root serializes, but is refused on load. */
static void test_snapshot_rootless_tree_refused(void)
{
    char *dir = scratch_dir();
    tree_t *t = tree_create_empty(NULL);
    char err[512] = "", path[512];
    CHECK_EQ(snapshot_write_file(dir, 5, t, NULL, 0, err, sizeof(err)), 0);
    snapshot_path(path, sizeof(path), dir, 5);
    snapshot_session_t *s;
    size_t n;
    int64_t zxid;
    CHECK(load(path, &s, &n, &zxid, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "no root") != NULL);
    tree_destroy(t);
    remove_dir(dir);
}

typedef struct {
    buf_t out;
    int fail_after;   /* calls to accept before failing; -1 never */
} memory_sink_t;

static int memory_sink(void *arg, const void *data, size_t len)
{
    memory_sink_t *m = arg;
    if (m->fail_after == 0)
        return -1;
    if (m->fail_after > 0)
        m->fail_after--;
    buf_append(&m->out, data, len);
    return 0;
}

/* snapshot_serialize streams exactly the file's body, and stops on a sink error. */
static void test_snapshot_serialize_matches_file_body(void)
{
    char *dir = scratch_dir();
    int64_t zxid;
    tree_t *t = rich_tree(&zxid);
    char err[512] = "", path[512];
    CHECK_EQ(snapshot_write_file(dir, zxid, t, rich_sessions, 2, err, sizeof(err)), 0);
    snapshot_path(path, sizeof(path), dir, zxid);
    size_t len = 0;
    uint8_t *file = read_bytes(path, &len);
    memory_sink_t m = {{0}, -1};
    buf_init(&m.out);
    CHECK_EQ(snapshot_serialize(t, rich_sessions, 2, memory_sink, &m), 0);
    CHECK(len > 16 + 13 && m.out.len == len - 16 - 13 && memcmp(file + 16, m.out.data, m.out.len) == 0);
    /* the header and the seal around it, as ZooKeeper writes them */
    CHECK(len > 16 && memcmp(file, "ZKSN\0\0\0\2\xff\xff\xff\xff\xff\xff\xff\xff", 16) == 0);
    CHECK(len > 5 && memcmp(file + len - 5, "\0\0\0\1/", 5) == 0);
    uLong sum = adler32(adler32(0L, Z_NULL, 0), file, (uInt)(len - 13));
    CHECK(len > 13 && be64_get(file + len - 13) == (uint64_t)sum);
    buf_free(&m.out);
    free(file);

    memory_sink_t failing = {{0}, 1};
    buf_init(&failing.out);
    CHECK_EQ(snapshot_serialize(t, rich_sessions, 2, memory_sink, &failing), -1);
    buf_free(&failing.out);
    tree_destroy(t);
    remove_dir(dir);
}

static void test_snapshot_write_errors(void)
{
    tree_t *t = tree_create(NULL);
    char err[512] = "";
    CHECK_EQ(snapshot_write_file("/nonexistent/kipper/dir", 1, t, NULL, 0, err, sizeof(err)), -1);
    CHECK(strstr(err, "cannot create /nonexistent/kipper/dir/snapshot.1.tmp") != NULL);
    err[0] = '\0';
    CHECK_EQ(snapshot_write_file("/tmp", -1, t, NULL, 0, err, sizeof(err)), -1);
    CHECK(err[0] != '\0');
    tree_destroy(t);
}

/* Written by a forked child while the parent's tree moves on: the file
 * holds the tree as it was at the fork. */
static void test_snapshot_written_in_forked_child(void)
{
    char *dir = scratch_dir();
    int64_t zxid;
    tree_t *t = rich_tree(&zxid);
    size_t nodes_at_fork = tree_node_count(t);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char err[256];
        _exit(snapshot_write_file(dir, zxid, t, rich_sessions, 3, err, sizeof(err)) == 0 ? 0 : 1);
    }
    CHECK(pid > 0);
    for (int i = 0; i < 200; i++) {
        char p[32];
        snprintf(p, sizeof(p), "/after%d", i);
        CHECK_EQ(create_plain(t, zxid + 1 + i, p, "later"), ZOK);
    }
    int status = -1;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char err[512] = "", path[512];
    snapshot_path(path, sizeof(path), dir, zxid);
    snapshot_session_t *s = NULL;
    size_t n = 0;
    int64_t z;
    tree_t *back = load(path, &s, &n, &z, err, sizeof(err));
    CHECK(back && tree_node_count(back) == nodes_at_fork && !tree_lookup(back, "/after0") && n == 3);
    free(s);
    tree_destroy(back);
    tree_destroy(t);
    remove_dir(dir);
}

/* ---- damaged files ---- */

/* A small but varied snapshot: a session, an ephemeral, two ACLs. */
static uint8_t *small_snapshot(const char *dir, size_t *len)
{
    tree_t *t = tree_create(NULL);
    acl_list_t acl;
    one_acl(&acl, PERM_READ, "digest", "u:p");
    create_node(t, 1, OP_CREATE, "/a", "data", 4, 0, 0, &acl);
    create_node(t, 2, OP_CREATE, "/e", NULL, 0, SESSION_A, 0, NULL);
    snapshot_session_t s = {SESSION_A, 5000};
    char err[512], path[512];
    CHECK_EQ(snapshot_write_file(dir, 2, t, &s, 1, err, sizeof(err)), 0);
    snapshot_path(path, sizeof(path), dir, 2);
    uint8_t *bytes = read_bytes(path, len);
    unlink(path);
    tree_destroy(t);
    return bytes;
}

/* Write bytes as dir/snapshot.2 and load it: 1 if refused cleanly (nothing
 * returned, a message given). */
static int refused(const char *dir, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/snapshot.2", dir);
    if (write_bytes(path, bytes, len) < 0)
        return 0;
    tree_t *t = (tree_t *)1;
    snapshot_session_t *s = (snapshot_session_t *)1;
    size_t n = 99;
    int64_t zxid = 0;
    err[0] = '\0';
    int rc = snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, errlen);
    unlink(path);
    if (rc == 0) {
        free(s);
        tree_destroy(t);
        return 0;
    }
    return t == NULL && s == NULL && n == 0 && err[0] != '\0';
}

static void test_snapshot_truncated_at_every_offset(void)
{
    char *dir = scratch_dir();
    size_t len = 0;
    uint8_t *bytes = small_snapshot(dir, &len);
    CHECK(len > 100);
    char err[512];
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++)
        if (!refused(dir, bytes, cut, err, sizeof(err)))
            accepted++;
    CHECK_EQ(accepted, 0);
    CHECK(!refused(dir, bytes, len, err, sizeof(err)));   /* the whole file loads */
    free(bytes);
    remove_dir(dir);
}

static void test_snapshot_flipped_byte_at_every_position(void)
{
    char *dir = scratch_dir();
    size_t len = 0;
    uint8_t *bytes = small_snapshot(dir, &len);
    char err[512];
    static const uint8_t flips[] = {0x01, 0x80, 0xff};
    int accepted = 0, checksum = 0, structural = 0;
    for (size_t pos = 0; pos < len; pos++) {
        for (size_t f = 0; f < sizeof(flips); f++) {
            bytes[pos] ^= flips[f];
            if (!refused(dir, bytes, len, err, sizeof(err)))
                accepted++;
            else if (strstr(err, "checksum"))
                checksum++;
            else
                structural++;
            bytes[pos] ^= flips[f];
        }
    }
    CHECK_EQ(accepted, 0);
    /* only the header and the final "/" are caught before the checksum */
    CHECK(structural > 0 && structural <= 3 * (16 + 5));
    CHECK(checksum >= 3 * (int)(len - 16 - 5));
    free(bytes);
    remove_dir(dir);
}

/* ---- hostile files with valid checksums: the structure is on its own ---- */

static void put_header(buf_t *b)
{
    jute_put_int(b, 0x5A4B534E);
    jute_put_int(b, 2);
    jute_put_long(b, -1);
}

static void put_world_acl_cache(buf_t *b)   /* id 1 = world:anyone ALL */
{
    jute_put_int(b, 1);
    jute_put_long(b, 1);
    jute_put_int(b, 1);
    jute_put_int(b, PERM_ALL);
    jute_put_string(b, "world");
    jute_put_string(b, "anyone");
}

static void put_node(buf_t *b, const char *path, const char *data, int64_t acl_id, int64_t owner)
{
    jute_put_string(b, path);
    jute_put_buffer(b, data, data ? (int32_t)strlen(data) : -1);
    jute_put_long(b, acl_id);
    for (int i = 0; i < 4; i++)
        jute_put_long(b, 7);   /* czxid mzxid ctime mtime */
    for (int i = 0; i < 3; i++)
        jute_put_int(b, 0);    /* version cversion aversion */
    jute_put_long(b, owner);
    jute_put_long(b, 7);       /* pzxid */
}

static void put_seal(buf_t *b)
{
    uLong sum = adler32(adler32(0L, Z_NULL, 0), b->data, (uInt)b->len);
    jute_put_long(b, (int64_t)sum);
    jute_put_string(b, "/");
}

/* A file that starts with the header and a normal session/ACL prefix. */
static void start_file(buf_t *b)
{
    buf_init(b);
    put_header(b);
    jute_put_int(b, 0);   /* no sessions */
    put_world_acl_cache(b);
}

/* Seal b, load it, and check it is refused with a message holding want. */
static void expect_refused(const char *dir, buf_t *b, const char *want, int line)
{
    char err[512];
    put_seal(b);
    int ok = refused(dir, b->data, b->len, err, sizeof(err)) && strstr(err, want) != NULL;
    if (!ok) {
        char what[700];
        snprintf(what, sizeof(what), "case at line %d refused with \"%s\" (want \"%s\")", line, err, want);
        unit_fail(__FILE__, line, what);
    }
    buf_free(b);
}
#define EXPECT_REFUSED(dir, b, want) expect_refused(dir, b, want, __LINE__)

static void test_snapshot_hostile_counts_and_lengths(void)
{
    char *dir = scratch_dir();
    buf_t b;

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 0x7fffffff);   /* sessions */
    jute_put_long(&b, 0);           /* (long enough to be looked at) */
    jute_put_long(&b, 0);
    EXPECT_REFUSED(dir, &b, "session count 2147483647 cannot fit");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, -1);
    jute_put_long(&b, 0);
    jute_put_long(&b, 0);
    EXPECT_REFUSED(dir, &b, "session count -1 is negative");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 0);
    jute_put_int(&b, 0x7fffffff);   /* ACL cache entries */
    jute_put_long(&b, 0);
    EXPECT_REFUSED(dir, &b, "ACL cache count 2147483647 cannot fit");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 0);
    jute_put_int(&b, 1);
    jute_put_long(&b, 1);
    jute_put_int(&b, 0x7ffffff0);   /* ACLs in one entry */
    EXPECT_REFUSED(dir, &b, "ACL count 2147483632 cannot fit");

    start_file(&b);
    jute_put_int(&b, 0x7fffffff);   /* a path's length */
    EXPECT_REFUSED(dir, &b, "node path needs 2147483647 bytes");

    start_file(&b);
    jute_put_string(&b, "");
    jute_put_int(&b, 0x7ffffff0);   /* the root's data length */
    EXPECT_REFUSED(dir, &b, "node data needs 2147483632 bytes");

    start_file(&b);
    jute_put_string(&b, "");
    jute_put_int(&b, -5);
    EXPECT_REFUSED(dir, &b, "node data has negative length -5");

    start_file(&b);
    jute_put_int(&b, -1);   /* null path */
    EXPECT_REFUSED(dir, &b, "node path is null");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 0);
    jute_put_int(&b, 1);
    jute_put_long(&b, 1);
    jute_put_int(&b, 1);
    jute_put_int(&b, PERM_ALL);
    jute_put_int(&b, -1);   /* null scheme */
    jute_put_string(&b, "anyone");
    EXPECT_REFUSED(dir, &b, "ACL scheme is null");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);   /* the node list never ends */
    EXPECT_REFUSED(dir, &b, "node path needs 4 bytes but only 0 are left");
    remove_dir(dir);
}

static void test_snapshot_hostile_structure(void)
{
    char *dir = scratch_dir();
    buf_t b;

    start_file(&b);
    jute_put_string(&b, "/");   /* no nodes at all */
    EXPECT_REFUSED(dir, &b, "no root");

    start_file(&b);
    put_node(&b, "/a", NULL, 1, 0);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "the first node is \"/a\", not the root");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    put_node(&b, "/a/b", NULL, 1, 0);   /* orphan */
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "node /a/b has no parent /a");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    put_node(&b, "/a", NULL, 1, 0);
    put_node(&b, "/a", "again", 1, 0);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "duplicate node /a");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    put_node(&b, "", NULL, 1, 0);   /* a second root */
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "does not start with '/'");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    put_node(&b, "a", NULL, 1, 0);   /* ZooKeeper would take any slash-less path as the root */
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "does not start with '/'");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    put_node(&b, "/a/", NULL, 1, 0);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "invalid node path");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    jute_put_buffer(&b, "/a\0b", 4);   /* NUL inside a path */
    EXPECT_REFUSED(dir, &b, "NUL");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    put_node(&b, "/e", NULL, 1, SESSION_A);
    put_node(&b, "/e/child", NULL, 1, 0);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "child of an ephemeral");

    start_file(&b);
    put_node(&b, "", NULL, 1, SESSION_A);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "the root has ephemeral owner");

    start_file(&b);
    put_node(&b, "", NULL, 42, 0);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "uses ACL id 42, which the ACL cache does not hold");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 0);
    jute_put_int(&b, 2);
    for (int i = 0; i < 2; i++) {
        jute_put_long(&b, 9);
        jute_put_int(&b, 0);
    }
    EXPECT_REFUSED(dir, &b, "holds id 9 twice");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 0);
    jute_put_int(&b, 1);
    jute_put_long(&b, -1);
    jute_put_int(&b, 0);
    EXPECT_REFUSED(dir, &b, "reserved for OPEN_ACL_UNSAFE");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 2);
    jute_put_long(&b, SESSION_A);
    jute_put_int(&b, 1000);
    jute_put_long(&b, SESSION_A);
    jute_put_int(&b, 2000);
    EXPECT_REFUSED(dir, &b, "is listed twice");

    buf_init(&b);
    put_header(&b);
    jute_put_int(&b, 1);
    jute_put_long(&b, SESSION_A);
    jute_put_int(&b, -3);
    EXPECT_REFUSED(dir, &b, "negative timeout -3");

    start_file(&b);
    put_node(&b, "", NULL, 1, 0);
    jute_put_string(&b, "/");
    jute_put_int(&b, 0);   /* stray bytes before the checksum */
    EXPECT_REFUSED(dir, &b, "4 stray bytes between the end of the nodes and the checksum");

    buf_init(&b);
    jute_put_int(&b, 0x5A4B4C47);   /* "ZKLG": a transaction log */
    jute_put_int(&b, 2);
    jute_put_long(&b, 0);
    jute_put_int(&b, 0);
    put_world_acl_cache(&b);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "at offset 0: magic is 0x5a4b4c47");

    buf_init(&b);
    put_header(&b);
    b.data[7] = 3;
    jute_put_int(&b, 0);
    put_world_acl_cache(&b);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "at offset 4: version is 3, not 2");

    buf_init(&b);
    put_header(&b);
    b.data[15] = 0;
    jute_put_int(&b, 0);
    put_world_acl_cache(&b);
    jute_put_string(&b, "/");
    EXPECT_REFUSED(dir, &b, "at offset 8: dbid is -256, not -1");
    remove_dir(dir);
}

/* A snapshot file as ZooKeeper 3.8 writes it with its digest on (the
 * default): the nodes, a seal, a ZxidDigest, a second seal over everything.
 * digest_version < 2 writes the digest as a hex string. */
static void zookeeper_file(buf_t *b, int digest_version)
{
    start_file(b);
    put_node(b, "", NULL, -1, 0);
    put_node(b, "/zookeeper", NULL, -1, 0);
    put_node(b, "/a", "x", 1, 0);
    jute_put_string(b, "/");
    put_seal(b);
    jute_put_long(b, 0x100000005);   /* ZxidDigest {zxid, version, digest} */
    jute_put_int(b, digest_version);
    if (digest_version >= 2)
        jute_put_long(b, 123456789);
    else
        jute_put_string(b, "75bcd15");
}

static void check_zookeeper_tree(tree_t *t, int64_t zxid, size_t n)
{
    const znode_t *zk = tree_lookup(t, "/zookeeper");
    CHECK(zk && zk->acl->count == 1 && zk->acl->items[0].perms == PERM_ALL);
    CHECK(zk && strcmp(zk->acl->items[0].scheme, "world") == 0 && strcmp(zk->acl->items[0].id, "anyone") == 0);
    CHECK(tree_lookup(t, "/")->acl->items == zk->acl->items);   /* interned */
    CHECK_EQ(tree_acl_count(t), 1);   /* id 1 is the same list */
    CHECK(tree_lookup(t, "/a") != NULL);
    CHECK(zxid == 0x1a2b && tree_last_zxid(t) == 0x1a2b && n == 0);
}

/* ZooKeeper 3.8's own files load as they are (a member migrating from
 * ZooKeeper starts on them): the digest section after the first seal is
 * checked and skipped, ACL id -1 on built-in nodes is OPEN_ACL_UNSAFE. */
static void test_snapshot_zookeeper_extras(void)
{
    char *dir = scratch_dir();
    char err[512], path[512];
    snprintf(path, sizeof(path), "%s/snapshot.1A2B", dir);
    for (int version = 1; version <= 2; version++) {
        buf_t b;
        zookeeper_file(&b, version);
        put_seal(&b);
        CHECK_EQ(write_bytes(path, b.data, b.len), 0);
        tree_t *t = NULL;
        snapshot_session_t *s = NULL;
        size_t n = 1;
        int64_t zxid = 0;
        int rc = snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, sizeof(err));
        if (rc != 0)
            unit_fail(__FILE__, __LINE__, err);
        if (t)
            check_zookeeper_tree(t, zxid, n);
        tree_destroy(t);
        free(s);
        buf_free(&b);
    }

    /* without the digest (what ZooKeeper writes with it off, and we write) */
    buf_t b;
    start_file(&b);
    put_node(&b, "", NULL, -1, 0);
    put_node(&b, "/zookeeper", NULL, -1, 0);
    put_node(&b, "/a", "x", 1, 0);
    jute_put_string(&b, "/");
    put_seal(&b);
    CHECK_EQ(write_bytes(path, b.data, b.len), 0);
    tree_t *t = NULL;
    snapshot_session_t *s = NULL;
    size_t n = 1;
    int64_t zxid = 0;
    CHECK_EQ(snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, sizeof(err)), 0);
    if (t)
        check_zookeeper_tree(t, zxid, n);
    tree_destroy(t);
    buf_free(&b);

    /* a first seal that does not sum the bytes before it */
    zookeeper_file(&b, 2);
    b.data[b.len - 20 - 13 + 7] ^= 1;
    EXPECT_REFUSED(dir, &b, "the checksum they begin with");
    /* no "/" after it */
    zookeeper_file(&b, 2);
    b.data[b.len - 20 - 1] = 'x';
    EXPECT_REFUSED(dir, &b, "not followed by the string \"/\"");
    /* anything after the digest */
    zookeeper_file(&b, 2);
    jute_put_int(&b, 0);
    EXPECT_REFUSED(dir, &b, "4 stray bytes between the digest and the checksum");
    /* a digest cut short */
    zookeeper_file(&b, 2);
    b.len -= 4;
    EXPECT_REFUSED(dir, &b, "the digest needs 8 bytes");
    /* a digest string longer than the file */
    zookeeper_file(&b, 1);
    b.len -= 11;
    jute_put_int(&b, 1000);
    EXPECT_REFUSED(dir, &b, "the digest (a string before digest version 2) needs 1000 bytes");
    remove_dir(dir);
}

/* ---- names ---- */

static void touch(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    write_bytes(path, "", 0);
}

static void test_snapshot_list_and_names(void)
{
    char *dir = scratch_dir();
    char path[512];
    snapshot_path(path, sizeof(path), "/data/version-2", 0x1a2b);
    CHECK_STR(path, "/data/version-2/snapshot.1a2b");
    snapshot_path(path, sizeof(path), "d", INT64_MAX);
    CHECK_STR(path, "d/snapshot.7fffffffffffffff");

    snapshot_file_t *files = (snapshot_file_t *)1;
    size_t count = 99;
    CHECK_EQ(snapshot_list(dir, &files, &count), 0);   /* empty folder */
    CHECK(files == NULL && count == 0);

    static const char *const names[] = {
        "snapshot.1a2b", "snapshot.ff", "snapshot.10", "snapshot.7fffffffffffffff", "snapshot.0", "snapshot.ABC",
        /* ZooKeeper's compressed ones (zookeeper.snapshot.compression.method) */
        "snapshot.12.gz", "snapshot.13.snappy", "snapshot.ff.gz",
        /* not snapshots */
        "snapshot.3.tmp", "snapshot.1a2b.tmp", "snapshot.", "snapshot", "snapshot.zz", "snapshot.-1", "snapshot.+5",
        "snapshot.8000000000000000", "snapshot.10000000000000000", "snapshot..gz", "snapshot.12.gz.tmp",
        "snapshot.12.GZ", "snapshot.12.zst", "snapshot.12.", "log.100", "Snapshot.5", "snapshot. 5", "xsnapshot.5",
        "currentEpoch",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        touch(dir, names[i]);
    CHECK_EQ(snapshot_list(dir, &files, &count), 0);
    static const snapshot_file_t want[] = {
        {INT64_MAX, SNAPSHOT_PLAIN}, {0x1a2b, SNAPSHOT_PLAIN}, {0xabc, SNAPSHOT_PLAIN}, {0xff, SNAPSHOT_PLAIN},
        {0xff, SNAPSHOT_GZIP}, {0x13, SNAPSHOT_SNAPPY}, {0x12, SNAPSHOT_GZIP}, {0x10, SNAPSHOT_PLAIN},
        {0, SNAPSHOT_PLAIN},
    };
    CHECK_EQ(count, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < count && i < sizeof(want) / sizeof(want[0]); i++)
        CHECK(files[i].zxid == want[i].zxid && files[i].codec == want[i].codec);
    snapshot_file_path(path, sizeof(path), "d", &want[5]);
    CHECK_STR(path, "d/snapshot.13.snappy");
    free(files);

    CHECK_EQ(snapshot_list("/nonexistent/kipper", &files, &count), -1);

    /* a file whose name is not a snapshot's is not loaded */
    char err[512];
    tree_t *t;
    snapshot_session_t *s;
    size_t n;
    int64_t zxid;
    snprintf(path, sizeof(path), "%s/snapshot.3.tmp", dir);
    CHECK_EQ(snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, sizeof(err)), -1);
    CHECK(strstr(err, "not a snapshot name") != NULL);
    snprintf(path, sizeof(path), "%s/snapshot.0", dir);   /* empty file */
    CHECK_EQ(snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, sizeof(err)), -1);
    CHECK(strstr(err, "the file ends after 0 bytes") != NULL);
    snprintf(path, sizeof(path), "%s/snapshot.99", dir);   /* missing */
    CHECK_EQ(snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, sizeof(err)), -1);
    CHECK(strstr(err, "cannot open") != NULL);
    snprintf(path, sizeof(path), "%s/snapshot.98", dir);   /* a folder */
    mkdir(path, 0755);
    CHECK_EQ(snapshot_load_file(path, NULL, &t, &s, &n, &zxid, err, sizeof(err)), -1);
    CHECK(strstr(err, "not a regular file") != NULL);
    rmdir(path);
    remove_dir(dir);
}

void suite_snapshot(void)
{
    RUN(test_snapshot_round_trip_every_kind);
    RUN(test_snapshot_compressed_by_zookeeper);
    RUN(test_snapshot_round_trip_fresh_tree);
    RUN(test_snapshot_rootless_tree_refused);
    RUN(test_snapshot_serialize_matches_file_body);
    RUN(test_snapshot_write_errors);
    RUN(test_snapshot_written_in_forked_child);
    RUN(test_snapshot_truncated_at_every_offset);
    RUN(test_snapshot_flipped_byte_at_every_position);
    RUN(test_snapshot_hostile_counts_and_lengths);
    RUN(test_snapshot_hostile_structure);
    RUN(test_snapshot_zookeeper_extras);
    RUN(test_snapshot_list_and_names);
}
