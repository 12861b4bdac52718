/* persist.c -- the keeper's durable state: restoring it at start (newest
 * valid snapshot, then the log after it), taking snapshots while serving,
 * and purging old files.
 *
 * Snapshots are written by a fork()ed child from its copy-on-write image of
 * the tree: the child sees the tree exactly as of one zxid while the parent
 * goes on serving, so the snapshot is consistent rather than fuzzy, and the
 * event loop never waits for it (Redis's BGSAVE, applied here). The log is
 * rolled at the same moment, so every txn after the snapshot is in the log
 * files that recovery reads. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "keeper/disk/snapshot.h"
#include "base/fsutil.h"
#include "base/logging.h"
#include "base/clock.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A snapshot.*.tmp is what a crash left of a snapshot being written. */
static void remove_stale_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "snapshot.", 9) != 0 || n < 4 || strcmp(e->d_name + n - 4, ".tmp") != 0)
            continue;
        char path[900];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (unlink(path) == 0)
            log_info("removed %s, an unfinished snapshot", path);
    }
    closedir(d);
}

/* Load the newest snapshot that is intact; older ones are the fallback. */
static int load_newest_snapshot(keeper_t *k, int64_t *snap_zxid, char *err, size_t errlen)
{
    snapshot_file_t *files = NULL;
    size_t count = 0;
    if (snapshot_list(k->snap_dir, &files, &count) < 0) {
        snprintf(err, errlen, "cannot list %s: %s", k->snap_dir, strerror(errno));
        return -1;
    }
    *snap_zxid = 0;
    for (size_t i = 0; i < count && !k->tree; i++) {
        char path[700], why[512];
        snapshot_file_path(path, sizeof(path), k->snap_dir, &files[i]);
        snapshot_session_t *sessions = NULL;
        size_t nsessions = 0;
        if (snapshot_load_file(path, k->watches, &k->tree, &sessions, &nsessions, snap_zxid, why, sizeof(why)) < 0) {
            log_warn("snapshot %s is damaged (%s); trying an older one", path, why);
            continue;
        }
        for (size_t j = 0; j < nsessions; j++)
            session_add(k->sessions, sessions[j].id, sessions[j].timeout_ms, loop_now_ms(k->loop));
        free(sessions);
        log_info("loaded snapshot %s: %zu znodes, %zu sessions", path, tree_node_count(k->tree), nsessions);
    }
    if (!k->tree && count > 0)
        log_warn("no intact snapshot in %s; rebuilding from the transaction log alone", k->snap_dir);
    free(files);
    return 0;
}

static int replay_one(void *arg, const txn_header_t *hdr, const txn_t *txn)
{
    keeper_t *k = arg;
    if (k->cfg.npeers > 0)   /* a leader-to-be can DIFF its followers from these */
        history_add(&k->history, hdr, txn);
    txn_result_t result;
    tree_apply(k->tree, hdr, txn, &result);
    txn_result_free(&result);
    if (hdr->type == OP_CREATE_SESSION)
        session_add(k->sessions, hdr->client_id, txn->timeout, loop_now_ms(k->loop));
    else if (hdr->type == OP_CLOSE_SESSION)
        session_remove(k->sessions, hdr->client_id);
    return 0;
}

static int write_initial_snapshot(keeper_t *k, char *err, size_t errlen)
{
    tree_t *empty = tree_create(NULL);
    char why[512];
    int rc = empty ? snapshot_write_file(k->snap_dir, 0, empty, NULL, 0, why, sizeof(why)) : -1;
    if (!empty)
        snprintf(why, sizeof(why), "out of memory");
    tree_destroy(empty);
    if (rc < 0) {
        snprintf(err, errlen, "cannot write %s/snapshot.0: %s", k->snap_dir, why);
        return -1;
    }
    log_info("wrote %s/snapshot.0 (the empty tree), as ZooKeeper does in a new data folder", k->snap_dir);
    return 0;
}

int persist_recover(keeper_t *k, char *err, size_t errlen)
{
    snprintf(k->snap_dir, sizeof(k->snap_dir), "%s/version-2", k->cfg.data_dir);
    snprintf(k->txnlog_dir, sizeof(k->txnlog_dir), "%s/version-2", k->cfg.data_log_dir);
    if (fs_make_dirs(k->snap_dir) < 0 || fs_make_dirs(k->txnlog_dir) < 0) {
        snprintf(err, errlen, "cannot create %s or %s: %s", k->snap_dir, k->txnlog_dir, strerror(errno));
        return -1;
    }
    remove_stale_temporaries(k->snap_dir);
    int64_t snap_zxid;
    if (load_newest_snapshot(k, &snap_zxid, err, errlen) < 0)
        return -1;
    int from_snapshot = k->tree != NULL;
    if (!k->tree && !(k->tree = tree_create(k->watches))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    history_reset(&k->history, snap_zxid);
    txnlog_replay_result_t replayed;
    char why[700];
    if (txnlog_replay(k->txnlog_dir, snap_zxid, replay_one, k, &replayed, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "cannot restore a consistent state: %s", why);
        return -1;
    }
    /* ZooKeeper writes snapshot.0 of the empty tree when it first starts on a
     * dataDir, and will not start on a log without any snapshot ("No snapshot
     * found, but there are log entries"). The same file here keeps a folder
     * kipper started readable by ZooKeeper, so a member can be switched back
     * (docs/migrating-from-zookeeper.md). Valid also beside a log already
     * there: without a snapshot that log was replayed from zxid 1. */
    if (!from_snapshot && write_initial_snapshot(k, err, errlen) < 0)
        return -1;
    /* Sessions get a whole timeout from now: their clients may reconnect,
     * and their ephemerals stay until they really expire. */
    log_info("restored to zxid 0x%" PRIx64 " (snapshot 0x%" PRIx64 " + %zu logged transactions), %zu sessions",
             (uint64_t)tree_last_zxid(k->tree), (uint64_t)snap_zxid, replayed.replayed, session_count(k->sessions));
    return 0;
}

static size_t next_snapshot_threshold(const keeper_t *k)
{
    size_t half = (size_t)k->cfg.snap_count / 2;
    /* ZooKeeper randomises the point so servers of an ensemble do not all
     * snapshot at once. */
    return half + (half ? (size_t)random() % half : 0) + 1;
}

int persist_open_log(keeper_t *k, char *err, size_t errlen)
{
    txnlog_options_t opts = {
        .dir = k->txnlog_dir,
        .force_sync = k->cfg.force_sync,
        .prealloc_bytes = k->cfg.prealloc_bytes,
        .last_zxid = tree_last_zxid(k->tree),
    };
    k->txnlog = txnlog_open(k->loop, &opts, pipeline_on_durable, k, err, errlen);
    if (!k->txnlog)
        return -1;
    srandom((unsigned)(clock_wall_ms() ^ (uint64_t)getpid()));
    k->snapshot_threshold = next_snapshot_threshold(k);
    return 0;
}

typedef struct {
    snapshot_session_t *items;
    size_t count, cap, wanted;
} session_list_t;

/* A local session (local_sessions.c) is never written: it is no part of
 * the ensemble's state, and ends with this keeper's process. */
static void collect_session(session_t *s, void *arg)
{
    session_list_t *l = arg;
    if (s->local)
        return;
    l->wanted++;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        snapshot_session_t *x = realloc(l->items, cap * sizeof(*x));
        if (!x)
            return;   /* the count check in start_snapshot refuses the snapshot */
        l->items = x;
        l->cap = cap;
    }
    l->items[l->count].id = s->id;
    l->items[l->count].timeout_ms = s->timeout_ms;
    l->count++;
}

static void start_snapshot(keeper_t *k)
{
    int64_t zxid = tree_last_zxid(k->tree);
    if (zxid == k->snapshot_zxid)
        return;
    session_list_t sessions = {NULL, 0, 0, 0};
    session_each(k->sessions, collect_session, &sessions);
    if (sessions.count != sessions.wanted) {
        log_error("out of memory listing sessions for a snapshot; skipping it");
        free(sessions.items);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* The child needs nothing of the parent's sockets and files; holding
         * the client port open after a crash of the parent would stop a
         * restarted keeper from listening. stderr stays for its log lines. */
        close_range(3, ~0u, 0);
        char err[512];
        log_set_tag("snapshot");
        int rc = snapshot_write_file(k->snap_dir, zxid, k->tree, sessions.items, sessions.count, err, sizeof(err));
        if (rc < 0)
            log_error("writing the snapshot of 0x%" PRIx64 " failed: %s", (uint64_t)zxid, err);
        _exit(rc < 0 ? 1 : 0);
    }
    free(sessions.items);
    if (pid < 0) {
        log_error("cannot fork to write a snapshot: %s", strerror(errno));
        return;
    }
    k->snapshot_pid = pid;
    k->snapshot_zxid = zxid;
    log_info("writing snapshot of zxid 0x%" PRIx64 " in process %d", (uint64_t)zxid, (int)pid);
}

static void reap_snapshot(keeper_t *k, int block);

void persist_after_append(keeper_t *k)
{
    if (++k->txns_since_snapshot < k->snapshot_threshold)
        return;
    if (k->snapshot_pid)
        reap_snapshot(k, 0);   /* it may have finished since the last tick */
    if (k->snapshot_pid) {
        if (k->txns_since_snapshot == k->snapshot_threshold)
            log_info("a snapshot is still being written; the next one waits for it");
        return;
    }
    k->txns_since_snapshot = 0;
    k->snapshot_threshold = next_snapshot_threshold(k);
    txnlog_roll(k->txnlog);
    start_snapshot(k);
}

static void reap_snapshot(keeper_t *k, int block)
{
    if (!k->snapshot_pid)
        return;
    int status;
    pid_t r = waitpid(k->snapshot_pid, &status, block ? 0 : WNOHANG);
    if (r == 0)
        return;
    if (r == k->snapshot_pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        log_info("snapshot of zxid 0x%" PRIx64 " written", (uint64_t)k->snapshot_zxid);
    else
        log_error("the snapshot of zxid 0x%" PRIx64 " was not written (see the snapshot lines above)",
                  (uint64_t)k->snapshot_zxid);
    k->snapshot_pid = 0;
}

void persist_tick(keeper_t *k)
{
    reap_snapshot(k, 0);
}

void persist_shutdown(keeper_t *k)
{
    reap_snapshot(k, 1);
}

/* autopurge: keep the snapRetainCount newest snapshots and the logs that
 * hold transactions after the oldest of them. */
void persist_purge(keeper_t *k)
{
    snapshot_file_t *files = NULL;
    size_t count = 0;
    if (snapshot_list(k->snap_dir, &files, &count) < 0)
        return;
    size_t keep = (size_t)k->cfg.autopurge_snap_retain_count;
    if (count > keep) {
        for (size_t i = keep; i < count; i++) {
            char path[700];
            snapshot_file_path(path, sizeof(path), k->snap_dir, &files[i]);
            if (unlink(path) == 0)
                log_info("purged %s", path);
        }
        txnlog_purge_before(k->txnlog_dir, files[keep - 1].zxid);
    }
    free(files);
}
