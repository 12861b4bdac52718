/* keeper_snapshot.c -- ZooKeeper snapshot files, as a keeper restores them
 * at start (snapshot_load_file), and the same stream without header and
 * seal, as a follower loads a leader's SNAP (snapshot_load_buffer).
 *
 * Input: one snapshot file. It is loaded four ways: as it is, from a file
 * named snapshot.<zxid> in a scratch folder; as ZooKeeper's compressed
 * snapshot.<zxid>.gz and snapshot.<zxid>.snappy (a gzip or xerial stream,
 * snapshot_codec.h: what an input of libFuzzer's sizes decompresses to is
 * bounded by the codecs themselves, gzip's 1032:1 and snappy's 22:1,
 * which snapshot_codec.c enforces before it allocates); again with its Adler-32 made
 * right (a mutation almost always breaks it, and the reader refuses the
 * file before it reads a session), so the fuzzer reaches the sessions, the
 * ACL cache and the nodes; and its body (what lies between the 16-byte
 * header and the 13-byte seal) as a SNAP stream.
 *
 * Oracle: whatever loads must serialize (snapshot_serialize, what a leader
 * sends and the snapshot writer stores) and load back from that stream as
 * the same sessions and the same znodes in the same order, each with the
 * same data, persisted stat and ACL. */
#include "fuzz.h"

#include <zlib.h>

#include "base/buf.h"
#include "base/endian.h"
#include "keeper/data/proto.h"
#include "keeper/data/tree.h"
#include "keeper/disk/snapshot.h"
#include "keeper/disk/snapshot_codec.h"

#define HEADER_LEN 16   /* FileHeader {int magic, int version, long dbid} */
#define SEAL_LEN 13     /* long Adler-32, then the string "/" */
/* A SNAP or a file is bounded by the quorum's largest packet
 * (QUORUM_MAX_DATA, 512 MiB); libFuzzer's inputs stay far below it. */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return fuzz_scratch_dir() ? 0 : -1;
}

static int to_buf(void *arg, const void *data, size_t len)
{
    return buf_append(arg, data, len);
}

typedef struct {
    const znode_t **v;
    size_t n, cap;
} nodes_t;

static int collect(const znode_t *node, void *arg)
{
    nodes_t *ns = arg;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 64;
        ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
        if (!ns->v)
            abort();
    }
    ns->v[ns->n++] = node;
    return 0;
}

static int same_node(const znode_t *a, const znode_t *b)
{
    zstat_t x, y;
    tree_fill_stat_persisted(a, &x);
    tree_fill_stat_persisted(b, &y);
    return strcmp(a->path, b->path) == 0 && a->data_len == b->data_len &&
           (a->data_len <= 0 || memcmp(a->data, b->data, (size_t)a->data_len) == 0) && x.czxid == y.czxid &&
           x.mzxid == y.mzxid && x.ctime == y.ctime && x.mtime == y.mtime && x.version == y.version &&
           x.cversion == y.cversion && x.aversion == y.aversion && x.ephemeral_owner == y.ephemeral_owner &&
           x.pzxid == y.pzxid && acl_list_equal(a->acl, b->acl);
}

/* A loaded tree goes out and comes back the same: every node, in the same
 * order, with its data, stat and ACL (the ACL cache's order and ids may
 * differ: they follow a hash table's order, as ZooKeeper's do). */
static void check_round_trip(tree_t *tree, const snapshot_session_t *sessions, size_t nsessions)
{
    buf_t first;
    buf_init(&first);
    FUZZ_CHECK(snapshot_serialize(tree, sessions, nsessions, to_buf, &first) == 0, "a loaded tree does not serialize");
    tree_t *back = NULL;
    snapshot_session_t *back_sessions = NULL;
    size_t back_n = 0;
    char err[1024];
    int rc = snapshot_load_buffer(first.data, first.len, NULL, &back, &back_sessions, &back_n, err, sizeof(err));
    FUZZ_CHECK(rc == 0, "a loaded tree, serialized, does not load: %s", err);
    FUZZ_CHECK(back_n == nsessions, "%zu sessions came back as %zu", nsessions, back_n);
    for (size_t i = 0; i < nsessions; i++)
        FUZZ_CHECK(sessions[i].id == back_sessions[i].id && sessions[i].timeout_ms == back_sessions[i].timeout_ms,
                   "session %zu came back different", i);
    nodes_t was = {0}, now = {0};
    tree_walk(tree, collect, &was);
    tree_walk(back, collect, &now);
    FUZZ_CHECK(was.n == now.n, "%zu znodes came back as %zu", was.n, now.n);
    for (size_t i = 0; i < was.n; i++)
        FUZZ_CHECK(same_node(was.v[i], now.v[i]), "znode %zu (%s) came back as %s, or different", i, was.v[i]->path,
                   now.v[i]->path);
    free(was.v);
    free(now.v);
    tree_destroy(back);
    free(back_sessions);
    buf_free(&first);
}

static void load_file(const char *path, const uint8_t *data, size_t size)
{
    if (fuzz_write_file(path, data, size) < 0)
        abort();
    tree_t *tree = NULL;
    snapshot_session_t *sessions = NULL;
    size_t n = 0;
    int64_t zxid;
    char err[1024];
    if (snapshot_load_file(path, NULL, &tree, &sessions, &n, &zxid, err, sizeof(err)) == 0) {
        check_round_trip(tree, sessions, n);
        tree_destroy(tree);
        free(sessions);
    }
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512];
    if (fuzz_scratch_file(path, sizeof(path), NULL, "snapshot.1a") < 0)
        abort();
    load_file(path, data, size);
    static const char *const compressed[] = {"snapshot.1a.gz", "snapshot.1a.snappy"};
    for (size_t i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++) {
        char named[512];
        if (fuzz_scratch_file(named, sizeof(named), NULL, compressed[i]) < 0)
            abort();
        load_file(named, data, size);
    }
    if (size < HEADER_LEN + SEAL_LEN)
        return 0;

    /* Sealed right: the "/" at the end and the checksum of everything before it. */
    uint8_t *copy = malloc(size);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    be32_put(copy + size - 5, 1);
    copy[size - 1] = '/';
    be64_put(copy + size - SEAL_LEN, adler32(adler32(0L, Z_NULL, 0), copy, (uInt)(size - SEAL_LEN)));
    if (memcmp(copy, data, size) != 0)
        load_file(path, copy, size);
    free(copy);

    /* The body as a leader's SNAP. */
    tree_t *tree = NULL;
    snapshot_session_t *sessions = NULL;
    size_t n = 0;
    char err[1024];
    if (snapshot_load_buffer(data + HEADER_LEN, size - HEADER_LEN - SEAL_LEN, NULL, &tree, &sessions, &n, err,
                             sizeof(err)) == 0) {
        check_round_trip(tree, sessions, n);
        tree_destroy(tree);
        free(sessions);
    }
    return 0;
}
