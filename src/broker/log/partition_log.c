/* partition_log.c -- see partition_log.h. Segments, sparse indexes, the
 * append and read paths, recovery, truncation, retention and flush jobs.
 *
 * Each segment keeps its two indexes in memory as well as on disk: lookups
 * are binary searches over arrays, and the files exist so a restart below
 * the recovery point need not rescan the log. Index entries follow Kafka:
 * an offset index entry names the LAST offset of the batch that starts at
 * its position; a time index entry (T, O) says no record before offset O's
 * batch has a timestamp above T. */
#include "partition_log.h"
#include "compression.h"
#include "base/fsutil.h"
#include "base/crc32c.h"
#include "base/logging.h"
#include "base/endian.h"
#include "base/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IDX_ENTRY 8
#define TIDX_ENTRY 12
#define WINDOW_BYTES (1 << 20) /* read-ahead for scans; larger batches are streamed */
#define MAX_SEGMENTS (1 << 20) /* bound on files we will track in one folder */
#define EPOCH_FILE "leader-epoch-checkpoint"

typedef struct {
    int32_t rel;
    int32_t pos;
} idx_entry_t;

typedef struct {
    int64_t ts;
    int32_t rel;
} tidx_entry_t;

typedef struct {
    int64_t base;
    int log_fd, idx_fd, tidx_fd;
    int64_t size;          /* bytes of valid batches = file size */
    int64_t next_offset;   /* last offset + 1 of the last batch; base if empty */
    int64_t max_ts;        /* largest batch max timestamp, -1 if none */
    int64_t max_ts_offset; /* last offset of the batch that has it */
    int64_t first_ts;      /* first batch's max timestamp: time-roll basis; -1 */
    int64_t created_ms;
    int64_t bytes_since_index;
    idx_entry_t *idx;
    size_t nidx, idx_cap;
    tidx_entry_t *tidx;
    size_t ntidx, tidx_cap;
} segment_t;

struct partition_log {
    char *dir;
    partition_log_config_t cfg;
    segment_t *segs;
    size_t nsegs, segs_cap;
    int64_t log_start, hw, recovery_point;
    epoch_entry_t *epochs;
    size_t nepochs, epochs_cap;
    int epochs_dirty;
    /* Flush jobs begun before a truncation must not advance the recovery point. */
    uint64_t truncations;
};

/* ---- Small helpers -------------------------------------------------------- */

/* Grow *arr (elements of size sz) to hold at least need elements. */
static void grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    *arr = xrealloc(*arr, c * sz);
    *cap = c;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Read up to n bytes at off; returns bytes read (short at EOF) or -1. */
static ssize_t pread_full(int fd, void *p, size_t n, int64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)p + got, n - got, (off_t)(off + (int64_t)got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static void seg_path(char *out, size_t n, const char *dir, int64_t base, const char *ext)
{
    snprintf(out, n, "%s/%020" PRId64 "%s", dir, base, ext);
}

static segment_t *active(partition_log_t *log)
{
    return &log->segs[log->nsegs - 1];
}

static size_t max_idx_entries(const partition_log_t *log)
{
    return (size_t)log->cfg.index_max_bytes / IDX_ENTRY;
}

static size_t max_tidx_entries(const partition_log_t *log)
{
    return (size_t)log->cfg.index_max_bytes / TIDX_ENTRY;
}

void partition_log_config_default(partition_log_config_t *cfg)
{
    cfg->segment_bytes = 1LL << 30;
    cfg->segment_ms = 7LL * 24 * 3600 * 1000;
    cfg->index_interval_bytes = 4096;
    cfg->index_max_bytes = 10 << 20;
    cfg->retention_bytes = -1;
    cfg->retention_ms = 7LL * 24 * 3600 * 1000;
    cfg->max_batch_bytes = 1048588;
}

/* ---- Leader epoch cache --------------------------------------------------- */

static void epochs_assign(partition_log_t *log, int32_t epoch, int64_t start)
{
    if (epoch < 0)
        return;
    if (log->nepochs > 0 && epoch <= log->epochs[log->nepochs - 1].epoch)
        return;
    /* A later epoch cannot start before an earlier one: drop what conflicts. */
    while (log->nepochs > 0 && log->epochs[log->nepochs - 1].start_offset >= start)
        log->nepochs--;
    grow((void **)&log->epochs, &log->epochs_cap, log->nepochs + 1, sizeof(epoch_entry_t));
    log->epochs[log->nepochs++] = (epoch_entry_t){epoch, start};
    log->epochs_dirty = 1;
}

/* Forget epochs that start at or after end (the log was cut there). */
static void epochs_truncate_from_end(partition_log_t *log, int64_t end)
{
    size_t n = log->nepochs;
    while (n > 0 && log->epochs[n - 1].start_offset >= end)
        n--;
    if (n != log->nepochs) {
        log->nepochs = n;
        log->epochs_dirty = 1;
    }
}

/* Offsets below start are gone: keep the epoch covering start, from start. */
static void epochs_truncate_from_start(partition_log_t *log, int64_t start)
{
    size_t keep = 0;
    while (keep + 1 < log->nepochs && log->epochs[keep + 1].start_offset <= start)
        keep++;
    if (log->nepochs == 0 || log->epochs[keep].start_offset > start)
        return;
    if (keep > 0)
        memmove(log->epochs, log->epochs + keep, (log->nepochs - keep) * sizeof(epoch_entry_t));
    log->nepochs -= keep;
    if (keep > 0 || log->epochs[0].start_offset != start)
        log->epochs_dirty = 1;
    log->epochs[0].start_offset = start;
}

int32_t partition_log_latest_epoch(const partition_log_t *log)
{
    return log->nepochs ? log->epochs[log->nepochs - 1].epoch : -1;
}

size_t partition_log_epochs(const partition_log_t *log, const epoch_entry_t **entries)
{
    *entries = log->epochs;
    return log->nepochs;
}

void epoch_cache_end_offset(const epoch_entry_t *e, size_t n, int64_t leo, int32_t epoch, int32_t *epoch_out,
                            int64_t *end_offset)
{
    *epoch_out = -1;
    *end_offset = -1;
    if (epoch < 0 || n == 0)
        return;
    if (epoch == e[n - 1].epoch) {
        *epoch_out = epoch;
        *end_offset = leo;
        return;
    }
    size_t hi = 0; /* first entry with a larger epoch */
    while (hi < n && e[hi].epoch <= epoch)
        hi++;
    if (hi == n)
        return; /* epoch is newer than anything we know */
    *end_offset = e[hi].start_offset;
    *epoch_out = hi == 0 ? epoch : e[hi - 1].epoch;
}

void partition_log_epoch_end_offset(const partition_log_t *log, int32_t epoch,
                                    int32_t *epoch_out, int64_t *end_offset)
{
    epoch_cache_end_offset(log->epochs, log->nepochs, partition_log_end_offset(log), epoch, epoch_out, end_offset);
}

/* Kafka assigns a new leader's epoch at its log end as it takes over, so a
 * follower asking for its own (older) epoch learns where that epoch ended
 * here even before anything is appended in the new one. */
void partition_log_assign_epoch(partition_log_t *log, int32_t epoch)
{
    if (epoch > partition_log_latest_epoch(log))
        epochs_assign(log, epoch, partition_log_end_offset(log));
}

/* ---- Segment files and indexes ------------------------------------------- */

static void segment_free(segment_t *s)
{
    if (s->log_fd >= 0)
        close(s->log_fd);
    if (s->idx_fd >= 0)
        close(s->idx_fd);
    if (s->tidx_fd >= 0)
        close(s->tidx_fd);
    free(s->idx);
    free(s->tidx);
    memset(s, 0, sizeof(*s));
    s->log_fd = s->idx_fd = s->tidx_fd = -1;
}

static void segment_unlink(const partition_log_t *log, int64_t base)
{
    static const char *const exts[] = {".log", ".index", ".timeindex"};
    char p[4200];
    for (size_t i = 0; i < 3; i++) {
        seg_path(p, sizeof(p), log->dir, base, exts[i]);
        if (unlink(p) != 0 && errno != ENOENT)
            log_warn("partition log: cannot delete %s: %s", p, strerror(errno));
    }
}

/* Open (flags adds O_CREAT|O_TRUNC for a new segment) all three files. */
static int segment_open_files(const partition_log_t *log, segment_t *s, int flags)
{
    char p[4200];
    seg_path(p, sizeof(p), log->dir, s->base, ".log");
    s->log_fd = open(p, O_RDWR | O_CLOEXEC | flags, 0644);
    seg_path(p, sizeof(p), log->dir, s->base, ".index");
    s->idx_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | flags, 0644);
    seg_path(p, sizeof(p), log->dir, s->base, ".timeindex");
    s->tidx_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | flags, 0644);
    return s->log_fd >= 0 && s->idx_fd >= 0 && s->tidx_fd >= 0 ? PLOG_OK : PLOG_ERR_IO;
}

static int idx_append(partition_log_t *log, segment_t *s, int32_t rel, int32_t pos)
{
    if (s->nidx >= max_idx_entries(log))
        return PLOG_OK; /* full: lookups fall back to longer scans */
    uint8_t e[IDX_ENTRY];
    be32_put(e, (uint32_t)rel);
    be32_put(e + 4, (uint32_t)pos);
    if (fs_pwrite_all(s->idx_fd, e, sizeof(e), (int64_t)s->nidx * IDX_ENTRY) != 0)
        return PLOG_ERR_IO;
    grow((void **)&s->idx, &s->idx_cap, s->nidx + 1, sizeof(idx_entry_t));
    s->idx[s->nidx++] = (idx_entry_t){rel, pos};
    return PLOG_OK;
}

/* Time entries only ever move forward in time. */
static int tidx_maybe_append(partition_log_t *log, segment_t *s)
{
    if (s->max_ts < 0 || s->ntidx >= max_tidx_entries(log))
        return PLOG_OK;
    if (s->ntidx > 0 && s->tidx[s->ntidx - 1].ts >= s->max_ts)
        return PLOG_OK;
    int32_t rel = (int32_t)(s->max_ts_offset - s->base);
    uint8_t e[TIDX_ENTRY];
    be64_put(e, (uint64_t)s->max_ts);
    be32_put(e + 8, (uint32_t)rel);
    if (fs_pwrite_all(s->tidx_fd, e, sizeof(e), (int64_t)s->ntidx * TIDX_ENTRY) != 0)
        return PLOG_ERR_IO;
    grow((void **)&s->tidx, &s->tidx_cap, s->ntidx + 1, sizeof(tidx_entry_t));
    s->tidx[s->ntidx++] = (tidx_entry_t){s->max_ts, rel};
    return PLOG_OK;
}

/* Account for one batch written at pos: sparse index entries every
 * index_interval_bytes, segment timestamps, next offset. */
static int segment_note_batch(partition_log_t *log, segment_t *s, const record_batch_t *b,
                              int64_t pos)
{
    int64_t last = record_batch_last_offset(b);
    if (s->next_offset == s->base && s->size == 0 && pos == 0)
        s->first_ts = b->max_timestamp;
    if (b->max_timestamp > s->max_ts) {
        s->max_ts = b->max_timestamp;
        s->max_ts_offset = last;
    }
    if (s->bytes_since_index > log->cfg.index_interval_bytes) {
        int rc = idx_append(log, s, (int32_t)(last - s->base), (int32_t)pos);
        if (rc == PLOG_OK)
            rc = tidx_maybe_append(log, s);
        if (rc != PLOG_OK)
            return rc;
        s->bytes_since_index = 0;
    }
    s->bytes_since_index += record_batch_size(b);
    s->next_offset = last + 1;
    return PLOG_OK;
}

static void segment_reset_state(segment_t *s)
{
    s->size = 0;
    s->next_offset = s->base;
    s->max_ts = -1;
    s->max_ts_offset = s->base;
    s->first_ts = -1;
    s->bytes_since_index = 0;
    s->nidx = s->ntidx = 0;
}

/* ---- Scanning a segment file ---------------------------------------------- */

/* A read-ahead window over a file: scans touch each byte once, in order. */
typedef struct {
    int fd;
    int64_t end;
    uint8_t *buf;
    int64_t start;
    size_t len;
    int io_error;
} window_t;

/* Pointer to [pos, pos+n) or NULL (past end, n too big, or read error). */
static const uint8_t *window_at(window_t *w, int64_t pos, size_t n)
{
    if (n > WINDOW_BYTES || pos < 0 || pos > w->end || (int64_t)n > w->end - pos)
        return NULL;
    if (pos >= w->start && pos + (int64_t)n <= w->start + (int64_t)w->len)
        return w->buf + (pos - w->start);
    int64_t want = w->end - pos < WINDOW_BYTES ? w->end - pos : WINDOW_BYTES;
    ssize_t got = pread_full(w->fd, w->buf, (size_t)want, pos);
    if (got < 0) {
        w->io_error = 1;
        return NULL;
    }
    w->start = pos;
    w->len = (size_t)got;
    return (size_t)got >= n ? w->buf : NULL;
}

/* CRC-32C of the batch at pos (size bytes), streaming batches larger than
 * the window. 0 and *ok = 0 on a short read. */
static uint32_t window_batch_crc(window_t *w, int64_t pos, int64_t size, int *ok)
{
    uint32_t crc = 0;
    int64_t at = pos + BATCH_OFF_ATTRIBUTES, end = pos + size;
    while (at < end) {
        size_t n = end - at < WINDOW_BYTES ? (size_t)(end - at) : WINDOW_BYTES;
        const uint8_t *p = window_at(w, at, n);
        if (!p) {
            *ok = 0;
            return 0;
        }
        crc = crc32c(crc, p, n);
        at += (int64_t)n;
    }
    *ok = 1;
    return crc;
}

/* Is the batch at pos well formed for this segment? limit is the base of
 * the next segment (offsets must stay below it). */
static int scan_one(window_t *w, const segment_t *s, int64_t pos, int64_t expect, int64_t limit,
                    int check_crc, record_batch_t *b)
{
    const uint8_t *h = window_at(w, pos, BATCH_HEADER_LEN);
    if (!h || record_batch_parse_header(h, (size_t)(w->end - pos), b) != PLOG_OK)
        return PLOG_ERR_CORRUPT;
    if (b->record_count < 0 || b->last_offset_delta < 0 || b->base_offset < expect ||
        b->base_offset > limit || record_batch_last_offset(b) >= limit ||
        record_batch_last_offset(b) - s->base > INT32_MAX)
        return PLOG_ERR_CORRUPT;
    if (check_crc) {
        int ok;
        uint32_t crc = window_batch_crc(w, pos, record_batch_size(b), &ok);
        if (!ok || crc != b->crc)
            return PLOG_ERR_CORRUPT;
    }
    return PLOG_OK;
}

/* Walk every batch from position 0, rebuilding both indexes and the
 * segment's stats; the file is cut at the first bad batch (*cut gets the
 * bytes removed). assign_epochs re-derives the epoch cache from batches. */
static int segment_scan(partition_log_t *log, segment_t *s, int64_t limit, int check_crc,
                        int assign_epochs, int64_t *cut)
{
    struct stat st;
    if (fstat(s->log_fd, &st) != 0)
        return PLOG_ERR_IO;
    if (ftruncate(s->idx_fd, 0) != 0 || ftruncate(s->tidx_fd, 0) != 0)
        return PLOG_ERR_IO;
    segment_reset_state(s);
    window_t w = {.fd = s->log_fd, .end = st.st_size, .buf = xrealloc(NULL, WINDOW_BYTES)};
    int64_t pos = 0, expect = s->base;
    int rc = PLOG_OK;
    while (pos < st.st_size) {
        record_batch_t b;
        if (scan_one(&w, s, pos, expect, limit, check_crc, &b) != PLOG_OK)
            break;
        if ((rc = segment_note_batch(log, s, &b, pos)) != PLOG_OK)
            break;
        if (assign_epochs)
            epochs_assign(log, b.leader_epoch, b.base_offset);
        expect = record_batch_last_offset(&b) + 1;
        pos += record_batch_size(&b);
        s->size = pos;
    }
    free(w.buf);
    if (rc == PLOG_OK && w.io_error)
        rc = PLOG_ERR_IO;
    if (rc != PLOG_OK)
        return rc;
    *cut = st.st_size - pos;
    if (*cut > 0 && ftruncate(s->log_fd, (off_t)pos) != 0)
        return PLOG_ERR_IO;
    return PLOG_OK;
}

/* ---- Loading index files (trusted below the recovery point) ------------- */

static int load_file_bounded(int fd, size_t entry, size_t max_entries, uint8_t **out, size_t *n)
{
    struct stat st;
    *out = NULL;
    *n = 0;
    if (fstat(fd, &st) != 0)
        return PLOG_ERR_IO;
    if (st.st_size % (off_t)entry != 0 || (size_t)st.st_size / entry > max_entries)
        return PLOG_ERR_CORRUPT;
    if (st.st_size == 0)
        return PLOG_OK;
    *out = xrealloc(NULL, (size_t)st.st_size);
    if (pread_full(fd, *out, (size_t)st.st_size, 0) != st.st_size) {
        free(*out);
        *out = NULL;
        return PLOG_ERR_IO;
    }
    *n = (size_t)st.st_size / entry;
    return PLOG_OK;
}

/* Offset index: offsets and positions strictly increasing, inside the file. */
static int load_offset_index(partition_log_t *log, segment_t *s, int64_t file_size)
{
    uint8_t *raw;
    size_t n;
    int rc = load_file_bounded(s->idx_fd, IDX_ENTRY, max_idx_entries(log), &raw, &n);
    if (rc != PLOG_OK)
        return rc;
    grow((void **)&s->idx, &s->idx_cap, n, sizeof(idx_entry_t));
    for (size_t i = 0; i < n; i++) {
        int32_t rel = (int32_t)be32_get(raw + i * IDX_ENTRY);
        int32_t pos = (int32_t)be32_get(raw + i * IDX_ENTRY + 4);
        if (rel < 0 || pos < 0 || pos >= file_size ||
            (i > 0 && (rel <= s->idx[i - 1].rel || pos <= s->idx[i - 1].pos))) {
            free(raw);
            return PLOG_ERR_CORRUPT;
        }
        s->idx[i] = (idx_entry_t){rel, pos};
    }
    s->nidx = n;
    free(raw);
    return PLOG_OK;
}

/* Time index: timestamps and offsets never decrease. */
static int load_time_index(partition_log_t *log, segment_t *s)
{
    uint8_t *raw;
    size_t n;
    int rc = load_file_bounded(s->tidx_fd, TIDX_ENTRY, max_tidx_entries(log), &raw, &n);
    if (rc != PLOG_OK)
        return rc;
    grow((void **)&s->tidx, &s->tidx_cap, n, sizeof(tidx_entry_t));
    for (size_t i = 0; i < n; i++) {
        int64_t ts = (int64_t)be64_get(raw + i * TIDX_ENTRY);
        int32_t rel = (int32_t)be32_get(raw + i * TIDX_ENTRY + 8);
        if (rel < 0 || (i > 0 && (ts < s->tidx[i - 1].ts || rel < s->tidx[i - 1].rel))) {
            free(raw);
            return PLOG_ERR_CORRUPT;
        }
        s->tidx[i] = (tidx_entry_t){ts, rel};
    }
    s->ntidx = n;
    free(raw);
    return PLOG_OK;
}

/* A segment below the recovery point: trust its indexes, but check they fit
 * the file by walking batch headers from the last index entry to the end
 * (which also yields next_offset). Any mismatch: PLOG_ERR_CORRUPT, and the
 * caller rescans the segment. */
static int segment_load_trusted(partition_log_t *log, segment_t *s, int64_t limit)
{
    struct stat st;
    if (fstat(s->log_fd, &st) != 0)
        return PLOG_ERR_IO;
    segment_reset_state(s);
    int rc = load_offset_index(log, s, st.st_size);
    if (rc == PLOG_OK)
        rc = load_time_index(log, s);
    if (rc != PLOG_OK)
        return rc;
    window_t w = {.fd = s->log_fd, .end = st.st_size, .buf = xrealloc(NULL, WINDOW_BYTES)};
    int64_t pos = s->nidx ? s->idx[s->nidx - 1].pos : 0;
    int64_t expect = s->base;
    record_batch_t b;
    for (int first = 1; rc == PLOG_OK && pos < st.st_size; first = 0) {
        rc = scan_one(&w, s, pos, expect, limit, 0, &b);
        if (rc == PLOG_OK && first && s->nidx &&
            record_batch_last_offset(&b) != s->base + s->idx[s->nidx - 1].rel)
            rc = PLOG_ERR_CORRUPT;
        if (rc != PLOG_OK)
            break;
        if (b.max_timestamp > s->max_ts) {
            s->max_ts = b.max_timestamp;
            s->max_ts_offset = record_batch_last_offset(&b);
        }
        expect = record_batch_last_offset(&b) + 1;
        pos += record_batch_size(&b);
    }
    if (rc == PLOG_OK && st.st_size > 0 && scan_one(&w, s, 0, s->base, limit, 0, &b) == PLOG_OK)
        s->first_ts = b.max_timestamp;
    free(w.buf);
    if (rc != PLOG_OK)
        return rc;
    if (s->ntidx && s->tidx[s->ntidx - 1].ts > s->max_ts) {
        s->max_ts = s->tidx[s->ntidx - 1].ts;
        s->max_ts_offset = s->base + s->tidx[s->ntidx - 1].rel;
    }
    if (s->ntidx && s->base + s->tidx[s->ntidx - 1].rel >= expect)
        return PLOG_ERR_CORRUPT;
    s->size = st.st_size;
    s->next_offset = expect;
    s->bytes_since_index = s->size - (s->nidx ? s->idx[s->nidx - 1].pos : 0);
    return PLOG_OK;
}

/* ---- Opening and recovery -------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* "<20 digits>.log" -> base offset; -1 if the name is anything else. */
static int64_t parse_segment_name(const char *name)
{
    if (strlen(name) != 24 || strcmp(name + 20, ".log") != 0)
        return -1;
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        if (v > (INT64_MAX - (name[i] - '0')) / 10)
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Base offsets of the folder's segments, sorted. Leftover temporary files
 * of interrupted writes are removed; index files are handled per segment. */
static int list_segments(const char *dir, int64_t **bases, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return PLOG_ERR_IO;
    size_t cap = 0;
    *bases = NULL;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int64_t base = parse_segment_name(e->d_name);
        if (base < 0) {
            if (ends_with(e->d_name, ".tmp") || ends_with(e->d_name, ".deleted")) {
                char p[4200];
                snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
                unlink(p);
            }
            continue;
        }
        if (*n >= MAX_SEGMENTS)
            break;
        grow((void **)bases, &cap, *n + 1, sizeof(int64_t));
        (*bases)[(*n)++] = base;
    }
    closedir(d);
    if (*n)
        qsort(*bases, *n, sizeof(int64_t), cmp_i64);
    return PLOG_OK;
}

static segment_t *push_segment(partition_log_t *log, int64_t base, int64_t now_ms)
{
    grow((void **)&log->segs, &log->segs_cap, log->nsegs + 1, sizeof(segment_t));
    segment_t *s = &log->segs[log->nsegs++];
    memset(s, 0, sizeof(*s));
    s->log_fd = s->idx_fd = s->tidx_fd = -1;
    s->base = base;
    s->created_ms = now_ms;
    segment_reset_state(s);
    return s;
}

/* Drop segments [from, nsegs): close and delete their files. */
static void drop_segments_from(partition_log_t *log, size_t from)
{
    while (log->nsegs > from) {
        segment_t *s = active(log);
        int64_t base = s->base;
        segment_free(s);
        segment_unlink(log, base);
        log->nsegs--;
    }
}

/* Load one existing segment. Scanned (CRCs checked) when it may hold data
 * past the recovery point, or when its index files do not fit the log.
 * Returns bytes cut from a bad tail (>= 0) or an error. */
static int64_t load_segment(partition_log_t *log, segment_t *s, int64_t limit, int recover)
{
    int rc = segment_open_files(log, s, 0);
    if (rc != PLOG_OK)
        return rc;
    if (!recover) {
        rc = segment_load_trusted(log, s, limit);
        if (rc == PLOG_OK)
            return 0;
        if (rc != PLOG_ERR_CORRUPT)
            return rc;
        log_warn("partition log %s: index of segment %" PRId64 " does not match, rebuilding",
                 log->dir, s->base);
    }
    int64_t cut = 0;
    rc = segment_scan(log, s, limit, 1, 1, &cut);
    if (rc != PLOG_OK)
        return rc;
    if (cut > 0)
        log_warn("partition log %s: segment %" PRId64 ": cut %" PRId64
                 " bytes of torn or corrupt batches at position %" PRId64,
                 log->dir, s->base, cut, s->size);
    return cut;
}

static int load_segments(partition_log_t *log, const int64_t *bases, size_t n, int clean,
                         int64_t now_ms)
{
    for (size_t i = 0; i < n; i++) {
        int64_t limit = i + 1 < n ? bases[i + 1] : INT64_MAX;
        /* Segment i may hold offsets >= recovery point unless the next one
         * starts at or below it. */
        int recover = !clean && (i + 1 == n || bases[i + 1] > log->recovery_point);
        segment_t *s = push_segment(log, bases[i], now_ms);
        int64_t cut = load_segment(log, s, limit, recover);
        if (cut < 0)
            return (int)cut;
        if (cut > 0 && i + 1 < n) {
            /* Later segments follow a hole: they go. */
            for (size_t j = i + 1; j < n; j++)
                segment_unlink(log, bases[j]);
            log_warn("partition log %s: deleted %zu segment(s) after the damage", log->dir,
                     n - i - 1);
            break;
        }
    }
    return PLOG_OK;
}

static int new_segment(partition_log_t *log, int64_t base, int64_t now_ms)
{
    segment_t *s = push_segment(log, base, now_ms);
    int rc = segment_open_files(log, s, O_CREAT | O_TRUNC);
    if (rc != PLOG_OK) {
        segment_free(s);
        log->nsegs--;
    }
    return rc;
}

static int load_epochs(partition_log_t *log, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", log->dir, EPOCH_FILE);
    epoch_entry_t *e;
    size_t n;
    int rc = epoch_checkpoint_read(path, &e, &n, err, errlen);
    if (rc == PLOG_ERR_NOT_FOUND)
        return PLOG_OK;
    if (rc != PLOG_OK) {
        if (rc == PLOG_ERR_IO)
            set_err(err, errlen, "%s: %s", path, strerror(errno));
        return rc;
    }
    free(log->epochs);
    log->epochs = e;
    log->nepochs = log->epochs_cap = n;
    return PLOG_OK;
}

static int open_log(partition_log_t *log, int clean, int64_t now_ms, char *err, size_t errlen)
{
    if (mkdir(log->dir, 0755) != 0 && errno != EEXIST) {
        set_err(err, errlen, "%s: %s", log->dir, strerror(errno));
        return PLOG_ERR_IO;
    }
    int rc = load_epochs(log, err, errlen);
    if (rc != PLOG_OK)
        return rc;
    int64_t *bases;
    size_t n;
    if ((rc = list_segments(log->dir, &bases, &n)) != PLOG_OK) {
        set_err(err, errlen, "%s: %s", log->dir, strerror(errno));
        return rc;
    }
    /* Epochs past the recovery point are re-derived from the batches. */
    if (!clean)
        epochs_truncate_from_end(log, log->recovery_point);
    rc = load_segments(log, bases, n, clean, now_ms);
    free(bases);
    if (rc == PLOG_OK && log->nsegs == 0)
        rc = new_segment(log, 0, now_ms);
    if (rc != PLOG_OK) {
        set_err(err, errlen, "%s: loading segments: %s (%s)", log->dir, plog_strerror(rc),
                strerror(errno));
        return rc;
    }
    return PLOG_OK;
}

static int config_usable(const partition_log_config_t *cfg)
{
    return cfg->index_interval_bytes >= 0 && cfg->index_max_bytes >= TIDX_ENTRY &&
           cfg->segment_bytes >= BATCH_HEADER_LEN;
}

static void config_take(partition_log_t *log, const partition_log_config_t *cfg)
{
    log->cfg = *cfg;
    if (log->cfg.segment_bytes > INT32_MAX)
        log->cfg.segment_bytes = INT32_MAX; /* index positions are int32 */
}

int partition_log_set_config(partition_log_t *log, const partition_log_config_t *cfg)
{
    if (!config_usable(cfg))
        return PLOG_ERR_INVALID;
    /* A smaller index bound applies to new segments only: the active one's
     * index arrays were sized under the old one and roll when full. */
    config_take(log, cfg);
    return PLOG_OK;
}

int partition_log_open(const char *dir, const partition_log_config_t *cfg,
                       int64_t recovery_point, int clean_shutdown, int64_t now_ms,
                       partition_log_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (strlen(dir) > 4000 || !config_usable(cfg)) {
        set_err(err, errlen, "%s: bad directory name or configuration", dir);
        return PLOG_ERR_INVALID;
    }
    partition_log_t *log = xrealloc(NULL, sizeof(*log));
    memset(log, 0, sizeof(*log));
    log->dir = strdup(dir);
    config_take(log, cfg);
    log->recovery_point = recovery_point < 0 ? 0 : recovery_point;
    int rc = open_log(log, clean_shutdown, now_ms, err, errlen);
    if (rc != PLOG_OK) {
        partition_log_close(log);
        return rc;
    }
    int64_t leo = active(log)->next_offset;
    log->log_start = log->segs[0].base;
    log->hw = log->log_start;
    if (clean_shutdown || log->recovery_point > leo)
        log->recovery_point = leo;
    if (log->recovery_point < log->log_start)
        log->recovery_point = log->log_start;
    epochs_truncate_from_end(log, leo);
    epochs_truncate_from_start(log, log->log_start);
    *out = log;
    return PLOG_OK;
}

void partition_log_close(partition_log_t *log)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->nsegs; i++)
        segment_free(&log->segs[i]);
    free(log->segs);
    free(log->epochs);
    free(log->dir);
    free(log);
}

int64_t partition_log_start_offset(const partition_log_t *log) { return log->log_start; }
int64_t partition_log_end_offset(const partition_log_t *log)
{
    return log->segs[log->nsegs - 1].next_offset;
}
int64_t partition_log_high_watermark(const partition_log_t *log) { return log->hw; }
int64_t partition_log_recovery_point(const partition_log_t *log) { return log->recovery_point; }
size_t partition_log_segment_count(const partition_log_t *log) { return log->nsegs; }
int64_t partition_log_segment_base(const partition_log_t *log, size_t i)
{
    return i < log->nsegs ? log->segs[i].base : -1;
}

int64_t partition_log_size_bytes(const partition_log_t *log)
{
    int64_t total = 0;
    for (size_t i = 0; i < log->nsegs; i++)
        total += log->segs[i].size;
    return total;
}

void partition_log_set_high_watermark(partition_log_t *log, int64_t hw)
{
    int64_t leo = partition_log_end_offset(log);
    log->hw = hw < log->log_start ? log->log_start : hw > leo ? leo : hw;
}

/* ---- Append ------------------------------------------------------------------ */

/* The smallest v2 record: length, attributes, timestamp delta, offset
 * delta, key and value lengths (-1), header count, one byte each. */
#define MIN_RECORD_BYTES 7

/* Whether an uncompressed batch is large enough for the records it
 * declares (a compressed one cannot be told without decompressing it). */
static int room_for_records(const record_batch_t *b)
{
    if (b->attributes & BATCH_ATTR_COMPRESSION_MASK)
        return 1;
    return b->record_count <= (record_batch_size(b) - BATCH_HEADER_LEN) / MIN_RECORD_BYTES;
}

/* Validate every batch in buf before anything is written. Every batch must
 * account for its offsets with records (at least one, the last offset delta
 * count - 1), so a header alone cannot move the log end: the leader's
 * records were checked against their header before they reached us (the
 * leader's append path), and a follower takes the leader's batches as they
 * are. Replicas also need batches that continue the log from LEO without a
 * gap: kipper compacts nothing, so a leader's log has none. */
static int check_batches(partition_log_t *log, const uint8_t *buf, size_t len, int leader,
                         append_info_t *info)
{
    int64_t expect = partition_log_end_offset(log);
    memset(info, 0, sizeof(*info));
    info->first_offset = info->last_offset = info->max_timestamp = -1;
    if (len == 0)
        return PLOG_ERR_CORRUPT;
    for (size_t pos = 0; pos < len;) {
        record_batch_t b;
        int rc = record_batch_validate(buf + pos, len - pos, &b);
        if (rc != PLOG_OK)
            return rc;
        if (leader && record_batch_size(&b) > log->cfg.max_batch_bytes)
            return PLOG_ERR_TOO_LARGE;
        if (b.record_count < 1 || b.last_offset_delta != b.record_count - 1 || !room_for_records(&b))
            return PLOG_ERR_CORRUPT;
        if (!leader && b.base_offset != expect)
            return PLOG_ERR_OUT_OF_RANGE;
        int64_t base = leader ? expect : b.base_offset;
        if (base > INT64_MAX - b.last_offset_delta - 1)
            return PLOG_ERR_CORRUPT;
        if (info->first_offset < 0)
            info->first_offset = base;
        expect = base + b.last_offset_delta + 1;
        info->last_offset = expect - 1;
        if (b.max_timestamp > info->max_timestamp)
            info->max_timestamp = b.max_timestamp;
        info->batch_count++;
        info->record_count += b.record_count;
        pos += (size_t)record_batch_size(&b);
    }
    return PLOG_OK;
}

/* Offsets below start are gone (retention, or a replica's log jumping). */
static void advance_log_start(partition_log_t *log, int64_t start)
{
    if (start <= log->log_start)
        return;
    log->log_start = start;
    if (log->hw < start)
        log->hw = start;
    if (log->recovery_point < start)
        log->recovery_point = start;
    epochs_truncate_from_start(log, start);
}

/* Close the active segment for appends: its time index gets a final entry
 * so a reload knows the segment's largest timestamp (retention uses it). */
static int roll(partition_log_t *log, int64_t base, int64_t now_ms)
{
    segment_t *s = active(log);
    if (s->size == 0 && s->base == base)
        return PLOG_OK;
    int rc = tidx_maybe_append(log, s);
    if (rc != PLOG_OK)
        return rc;
    int64_t empty_base = s->size == 0 ? s->base : -1;
    if ((rc = new_segment(log, base, now_ms)) != PLOG_OK)
        return rc;
    if (empty_base >= 0) {
        /* The old active segment holds nothing: replace it rather than
         * leave an empty segment behind. */
        segment_t *old = &log->segs[log->nsegs - 2];
        segment_free(old);
        segment_unlink(log, empty_base);
        memmove(old, old + 1, sizeof(*old));
        log->nsegs--;
        if (log->nsegs == 1)
            advance_log_start(log, log->segs[0].base);
    }
    log_debug("partition log %s: rolled to segment %" PRId64, log->dir, base);
    return PLOG_OK;
}

static int should_roll(partition_log_t *log, const append_info_t *info, int64_t bytes,
                       int64_t now_ms)
{
    const segment_t *s = &log->segs[log->nsegs - 1];
    if (info->last_offset - s->base > INT32_MAX || info->first_offset < s->base)
        return 1; /* relative offsets must fit an int32 */
    if (s->size == 0)
        return 0;
    if (s->size + bytes > log->cfg.segment_bytes)
        return 1;
    if (s->nidx >= max_idx_entries(log) || s->ntidx >= max_tidx_entries(log))
        return 1;
    if (log->cfg.segment_ms > 0) {
        /* Kafka's basis: the first batch's timestamp when known, else the
         * segment's creation time. */
        int64_t waited = s->first_ts >= 0 && info->max_timestamp >= 0
                             ? info->max_timestamp - s->first_ts
                             : now_ms - s->created_ms;
        if (waited > log->cfg.segment_ms)
            return 1;
    }
    return 0;
}

static int append_checked(partition_log_t *log, uint8_t *buf, size_t len, int leader,
                          int32_t leader_epoch, int64_t now_ms, const append_info_t *info)
{
    if (should_roll(log, info, (int64_t)len, now_ms)) {
        int rc = roll(log, info->first_offset, now_ms);
        if (rc != PLOG_OK)
            return rc;
    }
    segment_t *s = active(log);
    int64_t next = info->first_offset;
    for (size_t pos = 0; leader && pos < len;) {
        record_batch_t b;
        record_batch_parse_header(buf + pos, len - pos, &b);
        record_batch_set_base_offset(buf + pos, next);
        record_batch_set_leader_epoch(buf + pos, leader_epoch);
        next += b.last_offset_delta + 1;
        pos += (size_t)record_batch_size(&b);
    }
    if (fs_pwrite_all(s->log_fd, buf, len, s->size) != 0) {
        int e = errno;
        if (ftruncate(s->log_fd, (off_t)s->size) != 0)
            log_error("partition log %s: cannot undo a partial write: %s", log->dir,
                      strerror(errno));
        errno = e;
        return PLOG_ERR_IO;
    }
    for (size_t pos = 0; pos < len;) {
        record_batch_t b;
        record_batch_parse_header(buf + pos, len - pos, &b);
        int rc = segment_note_batch(log, s, &b, s->size);
        if (rc != PLOG_OK)
            return rc;
        epochs_assign(log, b.leader_epoch, b.base_offset);
        s->size += record_batch_size(&b);
        pos += (size_t)record_batch_size(&b);
    }
    return PLOG_OK;
}

int partition_log_append(partition_log_t *log, uint8_t *buf, size_t len, int32_t leader_epoch,
                         int64_t now_ms, append_info_t *info)
{
    append_info_t tmp;
    info = info ? info : &tmp;
    if (leader_epoch < 0 || leader_epoch < partition_log_latest_epoch(log))
        return PLOG_ERR_INVALID; /* a stale leader must not write */
    int rc = check_batches(log, buf, len, 1, info);
    if (rc != PLOG_OK)
        return rc;
    return append_checked(log, buf, len, 1, leader_epoch, now_ms, info);
}

int partition_log_append_replica(partition_log_t *log, const uint8_t *buf, size_t len,
                                 int64_t now_ms, append_info_t *info)
{
    append_info_t tmp;
    info = info ? info : &tmp;
    int rc = check_batches(log, buf, len, 0, info);
    if (rc != PLOG_OK)
        return rc;
    /* Nothing is patched for a replica; the cast only shares the write path. */
    return append_checked(log, (uint8_t *)(uintptr_t)buf, len, 0, -1, now_ms, info);
}

/* ---- Read --------------------------------------------------------------------- */

/* The last segment whose base <= offset (0 if offset is below them all). */
static size_t find_segment(const partition_log_t *log, int64_t offset)
{
    size_t lo = 0, hi = log->nsegs;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (log->segs[mid].base <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Position of the last index entry whose offset <= offset (0 if none). */
static int64_t index_floor(const segment_t *s, int64_t offset)
{
    size_t lo = 0, hi = s->nidx;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->base + s->idx[mid].rel <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : s->idx[lo - 1].pos;
}

static int read_header_at(const segment_t *s, int64_t pos, record_batch_t *b)
{
    uint8_t h[BATCH_HEADER_LEN];
    if (s->size - pos < BATCH_HEADER_LEN)
        return PLOG_ERR_CORRUPT;
    if (pread_full(s->log_fd, h, sizeof(h), pos) != (ssize_t)sizeof(h))
        return PLOG_ERR_IO;
    if (record_batch_parse_header(h, (size_t)(s->size - pos), b) != PLOG_OK)
        return PLOG_ERR_CORRUPT; /* changed under us since it was validated */
    return PLOG_OK;
}

/* Called for each batch of a header walk with its position in the segment;
 * nonzero stops the walk. */
typedef int (*header_visit_fn)(const segment_t *s, int64_t pos, const record_batch_t *b,
                               void *arg);

/* The one walk over batch headers, from position pos to the end of s: one
 * pread of the 61-byte header per batch (lookups stop after a few batches,
 * and a full scan has no use for the records). Returns what visit returned
 * to stop it, PLOG_OK at the end, or a read error. */
static int walk_headers(const segment_t *s, int64_t pos, header_visit_fn visit, void *arg)
{
    while (pos < s->size) {
        record_batch_t b;
        int rc = read_header_at(s, pos, &b);
        if (rc != PLOG_OK)
            return rc;
        if ((rc = visit(s, pos, &b, arg)) != 0)
            return rc;
        pos += record_batch_size(&b);
    }
    return PLOG_OK;
}

typedef struct {
    int64_t offset;
    int64_t pos;
    record_batch_t *batch;
} seek_t;

static int visit_seek(const segment_t *s, int64_t pos, const record_batch_t *b, void *arg)
{
    seek_t *seek = arg;
    (void)s;
    if (record_batch_last_offset(b) < seek->offset)
        return 0;
    seek->pos = pos;
    *seek->batch = *b;
    return 1;
}

/* Position of the first batch in s whose last offset >= offset, and its
 * header; *pos = s->size when there is none. */
static int position_of(const segment_t *s, int64_t offset, int64_t *pos, record_batch_t *b)
{
    seek_t seek = {.offset = offset, .pos = s->size, .batch = b};
    int rc = walk_headers(s, index_floor(s, offset), visit_seek, &seek);
    if (rc < 0)
        return rc;
    *pos = seek.pos;
    return PLOG_OK;
}

int partition_log_read(partition_log_t *log, int64_t offset, int64_t max_offset,
                       int64_t max_bytes, int min_one, plog_slice_t *out)
{
    memset(out, 0, sizeof(*out));
    out->fd = -1;
    out->first_offset = -1;
    if (offset < log->log_start || offset > partition_log_end_offset(log))
        return PLOG_ERR_OUT_OF_RANGE;
    for (size_t i = find_segment(log, offset); i < log->nsegs && offset < max_offset; i++) {
        const segment_t *s = &log->segs[i];
        int64_t start, end;
        record_batch_t first, last;
        int rc = position_of(s, offset, &start, &first);
        if (rc != PLOG_OK)
            return rc;
        if (start >= s->size)
            continue; /* offset lies past this segment's data: try the next */
        end = s->size;
        if (max_offset < s->next_offset)
            rc = position_of(s, max_offset, &end, &last);
        if (rc != PLOG_OK)
            return rc;
        if (end <= start)
            return PLOG_OK;
        int64_t len = end - start;
        if (len > max_bytes) {
            int64_t first_size = record_batch_size(&first);
            if (first_size > max_bytes)
                len = min_one ? first_size : 0; /* KIP-74: never stall on one big batch */
            else
                len = max_bytes; /* may end inside a batch; clients drop the partial one */
        }
        out->fd = len ? s->log_fd : -1;
        out->position = start;
        out->length = len;
        out->first_offset = first.base_offset;
        return PLOG_OK;
    }
    return PLOG_OK;
}

/* ---- ListOffsets by timestamp ------------------------------------------------------ */

/* Offset from which to scan s for timestamp ts: the time index entry
 * strictly below ts bounds every earlier batch's timestamps. */
static int64_t time_floor_offset(const segment_t *s, int64_t ts)
{
    size_t lo = 0, hi = s->ntidx;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->tidx[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? s->base : s->base + s->tidx[lo - 1].rel;
}

/* The exact record in batch b at pos; the batch's base offset (and max
 * timestamp) when its records cannot be read. */
static int offset_in_batch(const segment_t *s, int64_t pos, const record_batch_t *b, int64_t ts,
                           int64_t *offset, int64_t *timestamp)
{
    *offset = b->base_offset;
    *timestamp = b->max_timestamp;
    if (record_batch_size(b) > (64 << 20))
        return PLOG_OK;
    size_t n = (size_t)record_batch_size(b);
    uint8_t *buf = xrealloc(NULL, n);
    int rc = PLOG_OK;
    if (pread_full(s->log_fd, buf, n, pos) != (ssize_t)n)
        rc = PLOG_ERR_IO;
    else if (batch_find_timestamp_any(buf, n, ts, offset, timestamp) != COMPRESSION_OK) {
        *offset = b->base_offset; /* unreadable records: the batch is the answer */
        *timestamp = b->max_timestamp;
    }
    free(buf);
    return rc;
}

typedef struct {
    int64_t ts;
    int64_t offset, timestamp;
    int result;
} time_search_t;

/* Stops at the first batch with a record as late as ts. */
static int visit_time(const segment_t *s, int64_t pos, const record_batch_t *b, void *arg)
{
    time_search_t *search = arg;
    if (b->max_timestamp < search->ts)
        return 0;
    search->result = offset_in_batch(s, pos, b, search->ts, &search->offset, &search->timestamp);
    return 1;
}

int partition_log_offset_for_time(partition_log_t *log, int64_t ts, int64_t *offset,
                                  int64_t *timestamp)
{
    time_search_t search = {.ts = ts};
    for (size_t i = 0; i < log->nsegs; i++) {
        const segment_t *s = &log->segs[i];
        if (s->max_ts < ts)
            continue;
        int64_t pos;
        record_batch_t b;
        int rc = position_of(s, time_floor_offset(s, ts), &pos, &b);
        if (rc == PLOG_OK)
            rc = walk_headers(s, pos, visit_time, &search);
        if (rc == 1) {
            *offset = search.offset;
            *timestamp = search.timestamp;
            return search.result;
        }
        if (rc != PLOG_OK)
            return rc;
    }
    return PLOG_ERR_NOT_FOUND;
}

/* ---- Scanning batch headers ---------------------------------------------------------- */

typedef struct {
    int64_t from;
    int (*fn)(const record_batch_t *batch, void *arg);
    void *arg;
} header_scan_t;

static int visit_scan(const segment_t *s, int64_t pos, const record_batch_t *b, void *arg)
{
    header_scan_t *scan = arg;
    (void)s;
    (void)pos;
    if (record_batch_last_offset(b) < scan->from)
        return 0; /* before the batch holding from: the index only got us close */
    return scan->fn(b, scan->arg);
}

int partition_log_scan_batches(partition_log_t *log, int64_t from,
                               int (*fn)(const record_batch_t *batch, void *arg), void *arg)
{
    header_scan_t scan = {.from = from < log->log_start ? log->log_start : from, .fn = fn,
                          .arg = arg};
    if (scan.from >= partition_log_end_offset(log))
        return PLOG_OK;
    size_t first = find_segment(log, scan.from);
    for (size_t i = first; i < log->nsegs; i++) {
        const segment_t *s = &log->segs[i];
        int64_t pos = i == first ? index_floor(s, scan.from) : 0;
        int rc = walk_headers(s, pos, visit_scan, &scan);
        if (rc != PLOG_OK)
            return rc;
    }
    return PLOG_OK;
}

/* ---- Truncation and retention ------------------------------------------------------ */

/* Replace the whole log with one empty segment at offset. */
static int truncate_fully(partition_log_t *log, int64_t offset, int64_t now_ms)
{
    drop_segments_from(log, 0);
    int rc = new_segment(log, offset, now_ms);
    if (rc != PLOG_OK)
        return rc;
    log->log_start = log->hw = log->recovery_point = offset;
    log->nepochs = 0;
    log->epochs_dirty = 1;
    return PLOG_OK;
}

int partition_log_truncate_to(partition_log_t *log, int64_t offset)
{
    if (offset < 0)
        return PLOG_ERR_INVALID;
    if (offset >= partition_log_end_offset(log))
        return PLOG_OK;
    log->truncations++;
    if (offset < log->log_start)
        return truncate_fully(log, offset, active(log)->created_ms);
    size_t i = find_segment(log, offset);
    drop_segments_from(log, i + 1);
    segment_t *s = active(log);
    int64_t pos;
    record_batch_t b;
    int rc = position_of(s, offset, &pos, &b);
    if (rc != PLOG_OK)
        return rc;
    /* Cut at the batch holding offset (Kafka too: batches are indivisible),
     * then rebuild this segment's indexes from what is left. Truncation is
     * rare (leader changes), so a rescan without CRCs is fine. */
    if (ftruncate(s->log_fd, (off_t)pos) != 0)
        return PLOG_ERR_IO;
    int64_t cut;
    if ((rc = segment_scan(log, s, INT64_MAX, 0, 0, &cut)) != PLOG_OK)
        return rc;
    int64_t leo = s->next_offset;
    if (log->hw > leo)
        log->hw = leo;
    if (log->recovery_point > leo)
        log->recovery_point = leo;
    epochs_truncate_from_end(log, leo);
    return PLOG_OK;
}

int partition_log_restart_at(partition_log_t *log, int64_t offset, int64_t now_ms)
{
    if (offset < 0)
        return PLOG_ERR_INVALID;
    log->truncations++;
    return truncate_fully(log, offset, now_ms);
}

/* Segment i may go when it is not the active one and the HW has passed it. */
static int deletable(const partition_log_t *log, size_t i)
{
    return i + 1 < log->nsegs && log->segs[i + 1].base <= log->hw;
}

static void delete_oldest(partition_log_t *log, const char *why)
{
    int64_t base = log->segs[0].base;
    segment_free(&log->segs[0]);
    memmove(log->segs, log->segs + 1, (log->nsegs - 1) * sizeof(segment_t));
    log->nsegs--;
    segment_unlink(log, base);
    advance_log_start(log, log->segs[0].base);
    log_info("partition log %s: %s deleted segment %" PRId64, log->dir, why, base);
}

int partition_log_delete_records_before(partition_log_t *log, int64_t offset)
{
    if (offset > partition_log_end_offset(log))
        return PLOG_ERR_OUT_OF_RANGE;
    if (offset <= log->log_start)
        return 0;
    int deleted = 0;
    /* Segment 0 goes when the next one starts at or below offset: all its
     * records are below it. */
    while (log->nsegs > 1 && log->segs[1].base <= offset) {
        delete_oldest(log, "deleting records");
        deleted++;
    }
    advance_log_start(log, offset);
    return deleted;
}

int partition_log_apply_retention(partition_log_t *log, int64_t now_ms)
{
    int deleted = 0;
    /* By time: the segment's newest timestamp, or its creation if it has none. */
    while (log->cfg.retention_ms >= 0 && deletable(log, 0)) {
        const segment_t *s = &log->segs[0];
        int64_t newest = s->max_ts >= 0 ? s->max_ts : s->created_ms;
        if (now_ms - newest <= log->cfg.retention_ms)
            break;
        delete_oldest(log, "retention");
        deleted++;
    }
    /* By size: whole segments while the rest still meets retention.bytes. */
    int64_t total = partition_log_size_bytes(log);
    while (log->cfg.retention_bytes >= 0 && deletable(log, 0) &&
           total - log->segs[0].size >= log->cfg.retention_bytes) {
        total -= log->segs[0].size;
        delete_oldest(log, "retention");
        deleted++;
    }
    return deleted;
}

/* ---- Flush jobs ------------------------------------------------------------------------ */

static void add_fd(plog_flush_t *job, size_t *cap, int fd)
{
    int d = dup(fd);
    if (d < 0) {
        job->result = PLOG_ERR_IO;
        job->saved_errno = errno;
        return;
    }
    grow((void **)&job->fds, cap, job->nfds + 1, sizeof(int));
    job->fds[job->nfds++] = d;
}

int partition_log_flush_begin(partition_log_t *log, plog_flush_t *job)
{
    memset(job, 0, sizeof(*job));
    job->offset = partition_log_end_offset(log);
    job->dir = strdup(log->dir);
    job->generation = log->truncations;
    size_t cap = 0;
    for (size_t i = 0; i < log->nsegs; i++) {
        const segment_t *s = &log->segs[i];
        if (s->next_offset <= log->recovery_point && i + 1 < log->nsegs)
            continue; /* already durable */
        add_fd(job, &cap, s->log_fd);
        add_fd(job, &cap, s->idx_fd);
        add_fd(job, &cap, s->tidx_fd);
    }
    if (log->epochs_dirty) {
        job->write_epochs = 1;
        job->nepochs = log->nepochs;
        job->epochs = xrealloc(NULL, (log->nepochs ? log->nepochs : 1) * sizeof(epoch_entry_t));
        if (log->nepochs)
            memcpy(job->epochs, log->epochs, log->nepochs * sizeof(epoch_entry_t));
        log->epochs_dirty = 0;
    }
    return job->result;
}

/* Runs on a helper thread: touches only what the job captured. */
void partition_log_flush_run(plog_flush_t *job)
{
    for (size_t i = 0; job->result == PLOG_OK && i < job->nfds; i++) {
        if (fdatasync(job->fds[i]) != 0) {
            job->result = PLOG_ERR_IO;
            job->saved_errno = errno;
        }
    }
    if (job->result == PLOG_OK && job->nfds > 0) {
        /* New segment files must survive too: sync their directory entries. */
        if (fs_sync_dir(job->dir) != 0) {
            job->result = PLOG_ERR_IO;
            job->saved_errno = errno;
        }
    }
    if (job->result == PLOG_OK && job->write_epochs) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", job->dir, EPOCH_FILE);
        if (epoch_checkpoint_write(path, job->epochs, job->nepochs) != PLOG_OK) {
            job->result = PLOG_ERR_IO;
            job->saved_errno = errno;
        }
    }
}

void partition_log_flush_release(plog_flush_t *job)
{
    for (size_t i = 0; i < job->nfds; i++)
        close(job->fds[i]);
    free(job->fds);
    free(job->epochs);
    free(job->dir);
    memset(job, 0, sizeof(*job));
}

int partition_log_flush_end(partition_log_t *log, plog_flush_t *job)
{
    int rc = job->result;
    if (rc == PLOG_OK && job->generation == log->truncations) {
        int64_t leo = partition_log_end_offset(log);
        int64_t rp = job->offset < leo ? job->offset : leo;
        if (rp > log->recovery_point)
            log->recovery_point = rp;
    }
    /* A failed or overtaken epoch write is redone by the next job. */
    if (job->write_epochs && (rc != PLOG_OK || job->generation != log->truncations))
        log->epochs_dirty = 1;
    int saved_errno = job->saved_errno;
    partition_log_flush_release(job);
    if (rc != PLOG_OK)
        errno = saved_errno;
    return rc;
}

int partition_log_flush(partition_log_t *log)
{
    plog_flush_t job;
    partition_log_flush_begin(log, &job);
    partition_log_flush_run(&job);
    return partition_log_flush_end(log, &job);
}
