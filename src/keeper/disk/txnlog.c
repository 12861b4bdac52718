/* txnlog.c -- see txnlog.h. The loop thread serializes records into
 * chunks; one writer thread writes, preallocates, rolls files and
 * fdatasyncs; results come back through an eventfd watched by the loop. */
#define _GNU_SOURCE
#include "txnlog.h"
#include "base/buf.h"
#include "base/fsutil.h"
#include "base/logging.h"
#include "base/endian.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define TXNLOG_MAGIC 0x5a4b4c47   /* "ZKLG" */
#define TXNLOG_VERSION 2
#define TXNLOG_HEADER_LEN 16
#define ENTRY_EOR 0x42            /* 'B' ends every entry */
#define MAX_ENTRY_LEN (256 << 20) /* no txn is larger than the largest request */

/* Records appended between two writer rounds, destined for one file. */
typedef struct chunk {
    buf_t bytes;
    int64_t first_zxid, last_zxid;
    size_t count;
    int new_file;   /* start a new log file with this chunk */
    struct chunk *next;
} chunk_t;

struct txnlog {
    loop_t *loop;
    char dir[512];
    int force_sync;
    int64_t prealloc;
    txnlog_done_fn done;
    void *done_arg;
    int event_fd;
    pthread_t thread;
    int thread_started;

    /* Shared between the loop and the writer, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk_t *queue_head, *queue_tail;
    int stopping;
    int failed;             /* the writer hit an error; it drops what it takes until the loop resets */
    int64_t durable_zxid;   /* reported */
    int fail_err;
    int64_t fail_zxid;
    int have_report;

    /* Loop thread only. */
    int roll_pending;
    size_t pending;         /* appended, not yet reported durable or failed */
    int64_t last_appended;

    /* Writer thread only. */
    int fd;
    int64_t file_end;       /* where the next record goes */
    int64_t file_alloc;     /* the file's size, preallocation included */
    int64_t file_zeroed;    /* blocks before this are written: records, or zeros ahead of them */
};

/* ---- names ---- */

static void file_path_of(char *out, size_t outlen, const char *dir, int64_t zxid)
{
    snprintf(out, outlen, "%s/log.%" PRIx64, dir, (uint64_t)zxid);
}

/* Parse "log.<hex>"; 0 on success. */
static int parse_log_name(const char *name, int64_t *zxid)
{
    if (strncmp(name, "log.", 4) != 0 || name[4] == 0)
        return -1;
    uint64_t v = 0;
    const char *p = name + 4;
    for (int n = 0; *p; p++, n++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0 || n >= 16)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    *zxid = (int64_t)v;
    return 0;
}

static int cmp_zxid(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The start zxids of dir's log files, oldest first. */
static int list_logs(const char *dir, int64_t **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int64_t z;
        if (parse_log_name(e->d_name, &z) < 0)
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *x = realloc(*out, cap * sizeof(*x));
            if (!x) {
                closedir(d);
                free(*out);
                *out = NULL;
                return -1;
            }
            *out = x;
        }
        (*out)[(*count)++] = z;
    }
    closedir(d);
    if (*count > 1)
        qsort(*out, *count, sizeof(**out), cmp_zxid);
    return 0;
}

/* ---- serializing (loop thread) ---- */

/* Append {long adler32, int len, entry, 'B'} for one txn to b. */
static void serialize_entry(buf_t *b, const txn_header_t *hdr, const txn_t *txn)
{
    size_t start = b->len;
    buf_reserve(b, 12);
    b->len += 12;   /* checksum and length, filled below */
    txn_header_write(b, hdr);
    txn_body_write(b, txn);
    size_t entry_len = b->len - start - 12;
    uLong sum = adler32(adler32(0L, Z_NULL, 0), b->data + start + 12, (uInt)entry_len);
    be64_put(b->data + start, (uint64_t)sum);
    be32_put(b->data + start + 8, (uint32_t)entry_len);
    uint8_t eor = ENTRY_EOR;
    buf_append(b, &eor, 1);
}

int txnlog_append(txnlog_t *log, const txn_header_t *hdr, const txn_t *txn)
{
    pthread_mutex_lock(&log->mu);
    chunk_t *chunk = log->queue_tail;
    if (!chunk || log->roll_pending) {
        chunk = calloc(1, sizeof(*chunk));
        if (!chunk) {
            pthread_mutex_unlock(&log->mu);
            return -1;
        }
        buf_init(&chunk->bytes);
        chunk->first_zxid = hdr->zxid;
        chunk->new_file = log->roll_pending;
        log->roll_pending = 0;
        if (log->queue_tail)
            log->queue_tail->next = chunk;
        else
            log->queue_head = chunk;
        log->queue_tail = chunk;
    }
    serialize_entry(&chunk->bytes, hdr, txn);
    chunk->last_zxid = hdr->zxid;
    chunk->count++;
    pthread_cond_signal(&log->cv);
    pthread_mutex_unlock(&log->mu);
    log->pending++;
    log->last_appended = hdr->zxid;
    return 0;
}

void txnlog_roll(txnlog_t *log)
{
    log->roll_pending = 1;
}

size_t txnlog_pending(const txnlog_t *log)
{
    return log->pending;
}

/* ---- writing (writer thread) ---- */

/* Reserve the file ahead of the records, in prealloc steps, so an fdatasync
 * after an append need not grow the file. fallocate reserves the blocks
 * without writing them (no pause at a roll); where the filesystem cannot,
 * the space is zero-filled instead. */
static int preallocate(txnlog_t *log, int64_t need_end)
{
    if (log->prealloc <= 0 || need_end <= log->file_alloc)
        return 0;
    int64_t new_alloc = log->file_alloc;
    while (new_alloc < need_end)
        new_alloc += log->prealloc;
    if (fallocate(log->fd, 0, (off_t)log->file_alloc, (off_t)(new_alloc - log->file_alloc)) == 0) {
        log->file_alloc = new_alloc;
        return 0;
    }
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    static const uint8_t zeros[65536];
    for (int64_t off = log->file_alloc; off < new_alloc;) {
        size_t n = (size_t)(new_alloc - off < (int64_t)sizeof(zeros) ? new_alloc - off : (int64_t)sizeof(zeros));
        if (fs_pwrite_all(log->fd, zeros, n, off) < 0) {
            int saved = errno;
            if (ftruncate(log->fd, (off_t)log->file_alloc) < 0) { /* best effort: keep the old size */
            }
            errno = saved;
            return -1;
        }
        off += (int64_t)n;
    }
    log->file_alloc = log->file_zeroed = new_alloc;
    return 0;
}

/* Write zeros over the reserved blocks just ahead of the records. On ext4
 * (and XFS) fallocate's blocks are "unwritten": the first write into one
 * changes the file's extent map, and the fdatasync after it must commit
 * that change to the journal as well as flush the data. Blocks written
 * once, with zeros, are plain overwrites after that: an fdatasync flushes
 * the data only. Zeroing a step ahead makes one journal commit per step
 * instead of one per fdatasync: measured on ext4 under virtio, an append
 * of 6 400 bytes and its fdatasync took a third less time on average
 * (bench/README.md, the keeper's section). The price is the log's bytes
 * written twice: nothing measurable for small transactions, about what it
 * saves for appends of 64 KiB and more. Best effort: a disk too full for
 * the zeros still takes the records. */
static void zero_ahead(txnlog_t *log, int64_t records_end)
{
    if (log->prealloc <= 0 || records_end + TXNLOG_ZERO_AHEAD <= log->file_zeroed)
        return;
    static const uint8_t zeros[65536];
    int64_t from = log->file_zeroed > records_end ? log->file_zeroed : records_end;
    int64_t to = records_end + 2 * TXNLOG_ZERO_AHEAD;   /* a step of at least TXNLOG_ZERO_AHEAD */
    for (int64_t off = from; off < to;) {
        size_t n = (size_t)(to - off < (int64_t)sizeof(zeros) ? to - off : (int64_t)sizeof(zeros));
        if (fs_pwrite_all(log->fd, zeros, n, off) < 0) {
            log_debug("zeroing ahead in %s/log.* failed (%s); writing without", log->dir, strerror(errno));
            to = off;
            break;
        }
        off += (int64_t)n;
    }
    if (to > log->file_zeroed)
        log->file_zeroed = to;
    if (to > log->file_alloc)
        log->file_alloc = to;
}

static int sync_file(txnlog_t *log, int fd)
{
    return log->force_sync ? fdatasync(fd) : 0;
}

/* A finished file gives back the blocks reserved past its records: a hole
 * keeps its size (the tail still reads as zeros, as ZooKeeper's sparsely
 * padded files do) without holding a whole preallocation step of disk per
 * file kept. Best effort: a filesystem that cannot punch keeps them. */
static void release_preallocation(txnlog_t *log)
{
    if (log->file_alloc <= log->file_end)
        return;
    if (fallocate(log->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)log->file_end,
                  (off_t)(log->file_alloc - log->file_end)) < 0 && errno != EOPNOTSUPP && errno != ENOSYS)
        log_debug("cannot release the preallocated tail of %s/log.*: %s", log->dir, strerror(errno));
}

/* Close the current file (synced) and start log.<first_zxid>. */
static int start_file(txnlog_t *log, int64_t first_zxid)
{
    if (log->fd >= 0) {
        if (sync_file(log, log->fd) < 0)
            return -1;
        release_preallocation(log);
        close(log->fd);
        log->fd = -1;
    }
    char path[600];
    file_path_of(path, sizeof(path), log->dir, first_zxid);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    uint8_t header[TXNLOG_HEADER_LEN];
    be32_put(header, TXNLOG_MAGIC);
    be32_put(header + 4, TXNLOG_VERSION);
    be64_put(header + 8, 0);   /* dbid */
    log->fd = fd;
    log->file_end = 0;
    log->file_alloc = 0;
    if (fs_pwrite_all(fd, header, sizeof(header), 0) < 0 || sync_file(log, fd) < 0 ||
        (log->force_sync && fs_sync_dir(log->dir) < 0)) {
        int saved = errno;
        close(fd);
        log->fd = -1;
        unlink(path);
        errno = saved;
        return -1;
    }
    log->file_end = log->file_alloc = log->file_zeroed = TXNLOG_HEADER_LEN;
    log_info("new transaction log file %s", path);
    return 0;
}

/* Write one chunk. On failure what may have landed is zeroed and the file
 * cut back to its preallocated size, so the bytes never read as records. */
static int write_chunk(txnlog_t *log, chunk_t *chunk)
{
    if ((chunk->new_file || log->fd < 0) && start_file(log, chunk->first_zxid) < 0)
        return -1;
    int64_t start = log->file_end;
    int64_t end = start + (int64_t)chunk->bytes.len;
    /* A disk too full for a whole preallocation step may still hold the
     * records: then write them without preallocating. */
    if (preallocate(log, end + 1) < 0)
        log_debug("preallocating %s/log.* failed (%s); writing without", log->dir, strerror(errno));
    zero_ahead(log, end);
    if (fs_pwrite_all(log->fd, chunk->bytes.data, chunk->bytes.len, start) == 0) {
        log->file_end = end;
        if (end > log->file_alloc)
            log->file_alloc = end;
        return 0;
    }
    int saved = errno;
    static const uint8_t zeros[4096];
    for (int64_t off = start; off < end && off < log->file_alloc; off += (int64_t)sizeof(zeros)) {
        size_t n = (size_t)(end - off < (int64_t)sizeof(zeros) ? end - off : (int64_t)sizeof(zeros));
        if (fs_pwrite_all(log->fd, zeros, n, off) < 0)
            break;
    }
    if (ftruncate(log->fd, (off_t)(log->file_alloc > start ? log->file_alloc : start)) == 0)
        sync_file(log, log->fd);
    errno = saved;
    return -1;
}

static void free_chunks(chunk_t *chunk)
{
    while (chunk) {
        chunk_t *next = chunk->next;
        buf_free(&chunk->bytes);
        free(chunk);
        chunk = next;
    }
}

static void report(txnlog_t *log, int64_t durable, int err, int64_t fail_zxid)
{
    pthread_mutex_lock(&log->mu);
    if (durable > log->durable_zxid)
        log->durable_zxid = durable;
    if (err && !log->fail_err) {
        log->fail_err = err;
        log->fail_zxid = fail_zxid;
        log->failed = 1;
    }
    log->have_report = 1;
    pthread_mutex_unlock(&log->mu);
    uint64_t one = 1;
    ssize_t w = write(log->event_fd, &one, sizeof(one));
    (void)w;
}

static void *writer_main(void *arg)
{
    txnlog_t *log = arg;
    for (;;) {
        pthread_mutex_lock(&log->mu);
        while (!log->queue_head && !log->stopping)
            pthread_cond_wait(&log->cv, &log->mu);
        chunk_t *batch = log->queue_head;
        int drop = log->failed;
        log->queue_head = log->queue_tail = NULL;
        int stopping = log->stopping;
        pthread_mutex_unlock(&log->mu);
        if (!batch && stopping)
            break;
        if (drop) {   /* prepared before the loop learned of a failure: already failed */
            free_chunks(batch);
            continue;
        }
        int64_t durable = -1;
        int err = 0;
        int64_t fail_zxid = 0;
        for (chunk_t *chunk = batch; chunk; chunk = chunk->next) {
            if (write_chunk(log, chunk) < 0) {
                err = errno ? errno : EIO;
                fail_zxid = chunk->first_zxid;
                break;
            }
            durable = chunk->last_zxid;
        }
        if (durable >= 0 && log->fd >= 0 && sync_file(log, log->fd) < 0) {
            /* After a failed fdatasync nothing written since the last good
             * one can be trusted: report it all as failed. */
            err = errno ? errno : EIO;
            fail_zxid = batch->first_zxid;
            durable = -1;
        }
        free_chunks(batch);
        report(log, durable, err, fail_zxid);
    }
    if (log->fd >= 0) {
        sync_file(log, log->fd);
        close(log->fd);
        log->fd = -1;
    }
    return NULL;
}

/* ---- results (loop thread) ---- */

static void on_writer_event(loop_t *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)events;
    txnlog_t *log = arg;
    uint64_t n;
    ssize_t r = read(fd, &n, sizeof(n));
    (void)r;
    pthread_mutex_lock(&log->mu);
    int64_t durable = log->durable_zxid;
    int err = log->fail_err;
    int64_t fail_zxid = log->fail_zxid;
    if (err) {
        /* Everything still queued was prepared on top of the failed txns. */
        free_chunks(log->queue_head);
        log->queue_head = log->queue_tail = NULL;
        log->fail_err = 0;
        log->failed = 0;
        log->roll_pending = 1;   /* start clean in a new file at the retried zxid */
    }
    log->have_report = 0;
    pthread_mutex_unlock(&log->mu);
    if (err) {
        log->pending = 0;
        log->last_appended = fail_zxid - 1;
    } else if (durable >= 0) {
        log->pending = log->last_appended > durable ? (size_t)(log->last_appended - durable) : 0;
    }
    log->done(log->done_arg, durable, err, fail_zxid);
}

/* ---- open / close ---- */

txnlog_t *txnlog_open(loop_t *loop, const txnlog_options_t *opts, txnlog_done_fn done, void *arg, char *err,
                      size_t errlen)
{
    if (strlen(opts->dir) >= 512 || fs_make_dirs(opts->dir) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", opts->dir, strerror(errno));
        return NULL;
    }
    txnlog_t *log = calloc(1, sizeof(*log));
    if (!log) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    log->loop = loop;
    snprintf(log->dir, sizeof(log->dir), "%s", opts->dir);
    log->force_sync = opts->force_sync;
    log->prealloc = opts->prealloc_bytes;
    log->done = done;
    log->done_arg = arg;
    log->fd = -1;
    log->durable_zxid = opts->last_zxid;
    log->last_appended = opts->last_zxid;
    log->roll_pending = 1;   /* after a restart, appends start a fresh file */
    pthread_mutex_init(&log->mu, NULL);
    pthread_cond_init(&log->cv, NULL);
    log->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    /* The writer thread must never take a signal meant for the loop (a
     * SIGTERM delivered to it would kill the process without a shutdown):
     * it starts with every signal blocked. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int started = log->event_fd >= 0 && loop_watch(loop, log->event_fd, LOOP_READABLE, on_writer_event, log) == 0 &&
                  pthread_create(&log->thread, NULL, writer_main, log) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!started) {
        snprintf(err, errlen, "cannot start the log writer: %s", strerror(errno));
        txnlog_close(log);
        return NULL;
    }
    log->thread_started = 1;
    return log;
}

void txnlog_close(txnlog_t *log)
{
    if (!log)
        return;
    if (log->thread_started) {
        pthread_mutex_lock(&log->mu);
        log->stopping = 1;
        pthread_cond_signal(&log->cv);
        pthread_mutex_unlock(&log->mu);
        pthread_join(log->thread, NULL);
    }
    if (log->event_fd >= 0) {
        loop_unwatch(log->loop, log->event_fd);
        close(log->event_fd);
    }
    free_chunks(log->queue_head);
    pthread_mutex_destroy(&log->mu);
    pthread_cond_destroy(&log->cv);
    free(log);
}

/* ---- reading ---- */

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Is next a legal successor of prev? Within an epoch zxids are
 * consecutive; a new epoch (high 32 bits) starts its counter at 1. */
static int zxid_follows(int64_t prev, int64_t next)
{
    if (next == prev + 1)
        return 1;
    return (next >> 32) > (prev >> 32) && (next & 0xffffffffLL) == 1;
}

typedef struct {
    const char *dir;
    int64_t after_zxid;
    txnlog_replay_fn fn;
    void *arg;
    txnlog_replay_result_t *result;
    char *err;
    size_t errlen;
} replay_ctx_t;

/* Parse one entry at p (len bytes left). Returns its total size, 0 at a
 * clean end (zeros or nothing), -1 for a torn or corrupt entry. */
static int64_t parse_entry(const uint8_t *p, size_t left, txn_header_t *hdr, txn_t *txn)
{
    if (left < 12)
        return all_zero(p, left) ? 0 : -1;
    uint64_t sum = be64_get(p);
    uint32_t len = be32_get(p + 8);
    if (len == 0 && sum == 0)
        return all_zero(p, left > 4096 ? 4096 : left) ? 0 : -1;
    if (len > MAX_ENTRY_LEN || (size_t)len + 13 > left)
        return -1;
    if (p[12 + len] != ENTRY_EOR)
        return -1;
    uLong want = adler32(adler32(0L, Z_NULL, 0), p + 12, len);
    if ((uint64_t)want != sum)
        return -1;
    jute_in_t in;
    jute_in_init(&in, p + 12, len);
    if (txn_header_read(&in, hdr) < 0 || txn_body_read(&in, hdr->type, txn) < 0)
        return -1;
    return 13 + (int64_t)len;
}

/* Replay one file. next_start is the first zxid of the following file (or
 * -1 for the newest). Returns 0, or -1 with err set. */
static int replay_file(replay_ctx_t *ctx, int64_t start_zxid, int64_t next_start)
{
    int newest = next_start < 0;
    char path[600];
    file_path_of(path, sizeof(path), ctx->dir, start_zxid);
    int fd = open(path, newest ? O_RDWR | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(ctx->err, ctx->errlen, "cannot read %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (size && map == MAP_FAILED) {
        snprintf(ctx->err, ctx->errlen, "cannot map %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    int rc = 0;
    size_t off = 0;
    if (size < TXNLOG_HEADER_LEN || be32_get(map) != TXNLOG_MAGIC || be32_get(map + 4) != TXNLOG_VERSION) {
        if (newest && (size < TXNLOG_HEADER_LEN || all_zero(map, size))) {
            /* created but never written before a crash: nothing was durable in it */
            log_warn("%s has no complete header; removing it", path);
            unlink(path);
            goto out;
        }
        snprintf(ctx->err, ctx->errlen, "%s is not a transaction log (bad header)", path);
        rc = -1;
        goto out;
    }
    off = TXNLOG_HEADER_LEN;
    while (off < size) {
        txn_header_t hdr;
        txn_t txn;
        txn_init(&txn, 0);
        int64_t n = parse_entry(map + off, size - off, &hdr, &txn);
        if (n == 0)
            break;
        if (n < 0) {
            txn_free(&txn);
            if (!newest) {
                /* A write that failed (disk full) before the log moved to a
                 * new file leaves junk here; harmless if the next file
                 * carries on from the last good record. */
                if (zxid_follows(ctx->result->last_zxid, next_start) || next_start <= ctx->result->last_zxid + 1) {
                    log_warn("%s: ignoring %zu bytes after offset %zu; the next log file continues at 0x%" PRIx64,
                             path, size - off, off, (uint64_t)next_start);
                    break;
                }
                snprintf(ctx->err, ctx->errlen,
                         "%s: corrupt record at offset %zu and the next log file starts at 0x%" PRIx64
                         ": transactions are missing, cannot restore a consistent state",
                         path, off, (uint64_t)next_start);
                rc = -1;
                goto out;
            }
            int64_t dropped = (int64_t)(size - off);
            if (ftruncate(fd, (off_t)off) < 0 || fdatasync(fd) < 0) {
                snprintf(ctx->err, ctx->errlen, "%s: cannot truncate the torn tail at offset %zu: %s", path, off,
                         strerror(errno));
                rc = -1;
                goto out;
            }
            log_warn("%s: torn or corrupt record at offset %zu; truncated %" PRId64 " bytes after the last valid "
                     "transaction 0x%" PRIx64,
                     path, off, dropped, (uint64_t)ctx->result->last_zxid);
            ctx->result->truncated_bytes += dropped;
            break;
        }
        off += (size_t)n;
        if (hdr.zxid > ctx->after_zxid) {
            if (!zxid_follows(ctx->result->last_zxid, hdr.zxid)) {
                snprintf(ctx->err, ctx->errlen,
                         "%s: transaction 0x%" PRIx64 " follows 0x%" PRIx64 ": the log has a gap, cannot restore a "
                         "consistent state",
                         path, (uint64_t)hdr.zxid, (uint64_t)ctx->result->last_zxid);
                txn_free(&txn);
                rc = -1;
                goto out;
            }
            int stop = ctx->fn(ctx->arg, &hdr, &txn);
            ctx->result->last_zxid = hdr.zxid;
            ctx->result->replayed++;
            if (stop) {
                txn_free(&txn);
                goto out;
            }
        }
        txn_free(&txn);
    }
out:
    if (map && map != MAP_FAILED)
        munmap(map, size);
    close(fd);
    return rc;
}

int txnlog_replay(const char *dir, int64_t after_zxid, txnlog_replay_fn fn, void *arg,
                  txnlog_replay_result_t *result, char *err, size_t errlen)
{
    memset(result, 0, sizeof(*result));
    result->last_zxid = after_zxid;
    int64_t *starts;
    size_t count;
    if (list_logs(dir, &starts, &count) < 0) {
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
        return -1;
    }
    /* Start from the newest file that begins at or before after_zxid + 1. */
    size_t first = 0;
    for (size_t i = 0; i < count; i++)
        if (starts[i] <= after_zxid + 1)
            first = i;
    replay_ctx_t ctx = {dir, after_zxid, fn, arg, result, err, errlen};
    int rc = 0;
    for (size_t i = first; i < count && rc == 0; i++)
        rc = replay_file(&ctx, starts[i], i + 1 < count ? starts[i + 1] : -1);
    free(starts);
    return rc;
}

int txnlog_purge_before(const char *dir, int64_t zxid)
{
    int64_t *starts;
    size_t count;
    if (list_logs(dir, &starts, &count) < 0)
        return -1;
    /* Keep the newest file starting at or before zxid + 1 (it may hold
     * zxid + 1 onwards) and everything after it. */
    size_t keep_from = 0;
    for (size_t i = 0; i < count; i++)
        if (starts[i] <= zxid + 1)
            keep_from = i;
    int removed = 0;
    for (size_t i = 0; i < keep_from; i++) {
        char path[600];
        file_path_of(path, sizeof(path), dir, starts[i]);
        if (unlink(path) == 0) {
            removed++;
            log_info("purged %s", path);
        }
    }
    free(starts);
    return removed;
}

/* ---- truncation, for a follower told to TRUNC ---- */

/* Offset just past the last record at or below zxid in one file. */
static int64_t end_of_records_upto(const char *path, int64_t zxid, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (size && map == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s: %s", path, strerror(errno));
        return -1;
    }
    size_t off = TXNLOG_HEADER_LEN, keep = TXNLOG_HEADER_LEN;
    while (off < size) {
        txn_header_t hdr;
        txn_t txn;
        txn_init(&txn, 0);
        int64_t n = parse_entry(map + off, size - off, &hdr, &txn);
        txn_free(&txn);
        if (n <= 0 || hdr.zxid > zxid)
            break;
        off += (size_t)n;
        keep = off;
    }
    if (map && map != MAP_FAILED)
        munmap(map, size);
    return (int64_t)keep;
}

int txnlog_truncate_after(const char *dir, int64_t zxid, char *err, size_t errlen)
{
    int64_t *starts;
    size_t count;
    if (list_logs(dir, &starts, &count) < 0) {
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (size_t i = count; i-- > 0 && rc == 0;) {
        char path[600];
        file_path_of(path, sizeof(path), dir, starts[i]);
        if (starts[i] > zxid) {
            if (unlink(path) < 0 && errno != ENOENT) {
                snprintf(err, errlen, "cannot remove %s: %s", path, strerror(errno));
                rc = -1;
            }
            continue;
        }
        int64_t keep = end_of_records_upto(path, zxid, err, errlen);
        int fd = keep < 0 ? -1 : open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)keep) < 0 || fdatasync(fd) < 0) {
            if (keep >= 0)
                snprintf(err, errlen, "cannot truncate %s: %s", path, strerror(errno));
            rc = -1;
        }
        if (fd >= 0)
            close(fd);
        break;   /* older files hold only earlier zxids */
    }
    free(starts);
    if (rc == 0)
        fs_sync_dir(dir);
    return rc;
}
