/* keeper_txnlog.c -- ZooKeeper transaction log files, as a keeper restores
 * them at start (txnlog_replay) and cuts them on a leader's TRUNC
 * (txnlog_truncate_after).
 *
 * Input: one or more log files back to back; each file after the first
 * starts at another "ZKLG" + version 2 header (at most 8 files). Each is
 * written to a scratch folder as log.<hex>, named after the zxid of its
 * first entry as the writer names them (or the previous name + 1 when it
 * has none), and the folder is replayed into a tree as persist.c does:
 * tree_apply, the sessions' bookkeeping and the DIFF history. Every entry
 * carries an Adler-32 that a mutation almost always breaks, so the files
 * are replayed a second time with each entry's checksum made right, which
 * lets the fuzzer reach the transaction records themselves; then the log is
 * cut after a zxid it holds, as a follower told to TRUNC does, and replayed
 * once more.
 *
 * Oracle: a log cut after zxid z replays to z at most (unless a file holds
 * zxids past the start of a later one, which kipper never writes: see
 * files_overlap). */
#include "fuzz.h"

#include <inttypes.h>
#include <zlib.h>

#include "base/endian.h"
#include "keeper/data/session.h"
#include "keeper/data/tree.h"
#include "keeper/data/txn.h"
#include "keeper/disk/history.h"
#include "keeper/disk/txnlog.h"

#define MAX_FILES 8
#define FILE_HEADER_LEN 16
#define ENTRY_OVERHEAD 13   /* Adler-32 (long), length (int), ..., 'B' */

typedef struct {
    tree_t *tree;
    session_tracker_t *sessions;
    history_t history;
} restore_t;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return fuzz_scratch_dir() ? 0 : -1;
}

/* persist.c's replay_one. */
static int apply(void *arg, const txn_header_t *hdr, const txn_t *txn)
{
    restore_t *r = arg;
    history_add(&r->history, hdr, txn);
    txn_result_t result;
    tree_apply(r->tree, hdr, txn, &result);
    txn_result_free(&result);
    if (hdr->type == OP_CREATE_SESSION)
        session_add(r->sessions, hdr->client_id, txn->timeout, 0);
    else if (hdr->type == OP_CLOSE_SESSION)
        session_remove(r->sessions, hdr->client_id);
    return 0;
}

static int replay(const char *dir, txnlog_replay_result_t *res)
{
    restore_t r;
    r.tree = tree_create(NULL);
    r.sessions = session_tracker_create(0, 2000, 0);
    if (!r.tree || !r.sessions)
        abort();
    history_init(&r.history, 20000, 16u << 20, 0);
    char err[1024];
    int rc = txnlog_replay(dir, 0, apply, &r, res, err, sizeof(err));
    history_free(&r.history);
    session_tracker_destroy(r.sessions);
    tree_destroy(r.tree);
    return rc;
}

/* Where each file starts in the input. */
static size_t split_files(const uint8_t *data, size_t size, size_t *starts)
{
    static const uint8_t magic[8] = {'Z', 'K', 'L', 'G', 0, 0, 0, 2};
    size_t n = 0;
    starts[n++] = 0;
    for (size_t i = 1; i + sizeof(magic) <= size && n < MAX_FILES; i++)
        if (memcmp(data + i, magic, sizeof(magic)) == 0)
            starts[n++] = i;
    return n;
}

/* Each entry's Adler-32 made right, as far as the lengths lead. */
static int fix_checksums(uint8_t *p, size_t len)
{
    int changed = 0;
    size_t off = FILE_HEADER_LEN;
    while (len > off && len - off >= 12) {
        uint32_t n = be32_get(p + off + 8);
        if (n == 0 || (size_t)n + ENTRY_OVERHEAD > len - off)
            break;
        uint64_t sum = adler32(adler32(0L, Z_NULL, 0), p + off + 12, n);
        if (be64_get(p + off) != sum) {
            be64_put(p + off, sum);
            changed = 1;
        }
        off += (size_t)n + ENTRY_OVERHEAD;
    }
    return changed;
}

/* Writes the files; their names (start zxids) go to names. */
static void write_files(const char *dir, const uint8_t *data, size_t size, const size_t *starts, size_t nfiles,
                        int64_t *names)
{
    for (size_t i = 0; i < nfiles; i++) {
        size_t end = i + 1 < nfiles ? starts[i + 1] : size;
        const uint8_t *p = data + starts[i];
        size_t len = end - starts[i];
        uint64_t name = len >= 48 ? be64_get(p + 40) : i ? (uint64_t)names[i - 1] + 1 : 1;
        for (size_t j = 0; j < i; j++)
            if (names[j] == (int64_t)name) {
                name++;
                j = (size_t)-1;   /* check the new name against all again */
            }
        names[i] = (int64_t)name;
        char path[512];
        snprintf(path, sizeof(path), "%s/log.%" PRIx64, dir, name);
        if (fuzz_write_file(path, p, len) < 0)
            abort();
    }
}

/* The largest zxid among a file's well-formed entries (INT64_MIN if none). */
static int64_t last_zxid_in(const uint8_t *p, size_t len)
{
    int64_t last = INT64_MIN;
    for (size_t off = FILE_HEADER_LEN; len > off && len - off >= 12;) {
        uint32_t n = be32_get(p + off + 8);
        if (n < 32 || (size_t)n + ENTRY_OVERHEAD > len - off || p[off + 12 + n] != 'B')
            break;
        int64_t zxid = (int64_t)be64_get(p + off + 24);
        if (zxid > last)
            last = zxid;
        off += (size_t)n + ENTRY_OVERHEAD;
    }
    return last;
}

/* Does a file hold a zxid at or past the start of a later file? kipper
 * never writes such a folder (a file is named after its first zxid and the
 * next one starts after its last); txnlog_truncate_after then cuts only the
 * newest file starting at or below the zxid, trusting older files to end
 * before it (tests/README.md, Fuzzing). */
static int files_overlap(const uint8_t *data, size_t size, const size_t *starts, size_t nfiles, const int64_t *names)
{
    for (size_t i = 0; i < nfiles; i++) {
        int64_t last = last_zxid_in(data + starts[i], (i + 1 < nfiles ? starts[i + 1] : size) - starts[i]);
        for (size_t j = 0; j < nfiles; j++)
            if (names[j] > names[i] && last >= names[j])
                return 1;
    }
    return 0;
}

static void empty_dir(const char *dir)
{
    fs_remove_tree(dir);
    if (mkdir(dir, 0700) < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[512];
    if (fuzz_scratch_file(dir, sizeof(dir), NULL, "version-2") < 0)
        abort();
    size_t starts[MAX_FILES];
    size_t nfiles = split_files(data, size, starts);

    /* As found on disk. Replay cuts a torn tail of the newest file, as a
     * restarting keeper does, and what follows works on what it left. */
    int64_t names[MAX_FILES];
    empty_dir(dir);
    write_files(dir, data, size, starts, nfiles, names);
    txnlog_replay_result_t res;
    int rc = replay(dir, &res);

    /* With every checksum right. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    int changed = 0;
    for (size_t i = 0; i < nfiles; i++)
        changed |= fix_checksums(copy + starts[i], (i + 1 < nfiles ? starts[i + 1] : size) - starts[i]);
    if (changed) {
        empty_dir(dir);
        write_files(dir, copy, size, starts, nfiles, names);
        rc = replay(dir, &res);
    }
    int overlap = files_overlap(copy, size, starts, nfiles, names);
    free(copy);

    /* A leader's TRUNC to just before the last transaction, then restore. */
    if (rc == 0 && res.replayed > 0 && res.last_zxid > INT64_MIN) {
        int64_t cut = res.last_zxid - 1;
        char err[1024];
        if (txnlog_truncate_after(dir, cut, err, sizeof(err)) == 0) {
            txnlog_replay_result_t after;
            if (replay(dir, &after) == 0 && !overlap)
                FUZZ_CHECK(after.last_zxid <= cut, "replay after TRUNC to 0x%" PRIx64 " reached 0x%" PRIx64,
                           (uint64_t)cut, (uint64_t)after.last_zxid);
        }
    }
    empty_dir(dir);
    return 0;
}
