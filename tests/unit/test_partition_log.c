/* test_partition_log.c -- the partition log: v2 batch headers, append and
 * read, indexes, rolling, recovery from torn and corrupt tails, damaged
 * indexes, checkpoints, retention, truncation, leader epochs. Batches are
 * built here byte by byte with their CRC-32C, as a producer would. */
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/varint.h"
#include "broker/log/compression.h"
#include "broker/log/partition_log.h"
#include "suites.h"
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define T0 1700000000000LL

static char root[256], pdir[300];

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[600];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void setup(void)
{
    snprintf(root, sizeof(root), "/tmp/kipper-plog-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    snprintf(pdir, sizeof(pdir), "%s/events-0", root);
}

static void teardown(void)
{
    remove_tree(root);
}

/* ---- Building batches ------------------------------------------------------ */

/* One uncompressed v2 batch of nrec records (key "k<i>", value of vlen
 * bytes tagged by seed, one header), record i stamped ts0 + i. Returns its
 * size. Producer-style: base offset 0, leader epoch -1, no producer id. */
static size_t make_batch(uint8_t *out, int nrec, int64_t ts0, size_t vlen, int seed)
{
    uint8_t *p = out + BATCH_HEADER_LEN;
    for (int i = 0; i < nrec; i++) {
        uint8_t rec[4096];
        size_t n = 0;
        char key[16];
        int klen = snprintf(key, sizeof(key), "k%d", i);
        rec[n++] = 0; /* attributes */
        n += varlong_put(rec + n, i); /* timestamp delta */
        n += varlong_put(rec + n, i); /* offset delta */
        n += varlong_put(rec + n, klen);
        memcpy(rec + n, key, (size_t)klen);
        n += (size_t)klen;
        n += varlong_put(rec + n, (int64_t)vlen);
        for (size_t j = 0; j < vlen; j++)
            rec[n++] = (uint8_t)(seed + i + (int)j);
        n += varlong_put(rec + n, 1); /* one header: "h" -> null */
        n += varlong_put(rec + n, 1);
        rec[n++] = 'h';
        n += varlong_put(rec + n, -1);
        p += varlong_put(p, (int64_t)n);
        memcpy(p, rec, n);
        p += n;
    }
    size_t size = (size_t)(p - out);
    memset(out, 0, BATCH_HEADER_LEN);
    be32_put(out + BATCH_OFF_LENGTH, (uint32_t)(size - BATCH_LOG_OVERHEAD));
    be32_put(out + BATCH_OFF_LEADER_EPOCH, (uint32_t)-1);
    out[BATCH_OFF_MAGIC] = 2;
    be32_put(out + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)(nrec - 1));
    be64_put(out + BATCH_OFF_FIRST_TIMESTAMP, (uint64_t)ts0);
    be64_put(out + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)(ts0 + nrec - 1));
    be64_put(out + BATCH_OFF_PRODUCER_ID, (uint64_t)-1);
    out[BATCH_OFF_PRODUCER_EPOCH] = 0xff;
    out[BATCH_OFF_PRODUCER_EPOCH + 1] = 0xff;
    be32_put(out + BATCH_OFF_BASE_SEQUENCE, (uint32_t)-1);
    be32_put(out + BATCH_OFF_RECORD_COUNT, (uint32_t)nrec);
    be32_put(out + BATCH_OFF_CRC,
                  crc32c(0, out + BATCH_OFF_ATTRIBUTES, size - BATCH_OFF_ATTRIBUTES));
    return size;
}

/* Everything appended so far, as it should be on disk. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
    int64_t *pos;   /* byte position in data of batch k */
    int64_t *base;  /* its base offset */
    size_t n, ncap;
} shadow_t;

static void shadow_add(shadow_t *sh, const uint8_t *b, size_t n, int64_t base)
{
    if (sh->len + n > sh->cap) {
        sh->cap = (sh->len + n) * 2;
        sh->data = realloc(sh->data, sh->cap);
    }
    if (sh->n + 1 > sh->ncap) {
        sh->ncap = sh->ncap ? sh->ncap * 2 : 64;
        sh->pos = realloc(sh->pos, sh->ncap * sizeof(int64_t));
        sh->base = realloc(sh->base, sh->ncap * sizeof(int64_t));
    }
    sh->pos[sh->n] = (int64_t)sh->len;
    sh->base[sh->n++] = base;
    memcpy(sh->data + sh->len, b, n);
    sh->len += n;
}

/* Forget batches from k on. */
static void shadow_cut(shadow_t *sh, size_t k)
{
    if (k < sh->n) {
        sh->len = (size_t)sh->pos[k];
        sh->n = k;
    }
}

static void shadow_free(shadow_t *sh)
{
    free(sh->data);
    free(sh->pos);
    free(sh->base);
    memset(sh, 0, sizeof(*sh));
}

static void small_config(partition_log_config_t *cfg)
{
    partition_log_config_default(cfg);
    cfg->segment_bytes = 16 * 1024;
    cfg->index_interval_bytes = 512;
}

static partition_log_t *open_log(const partition_log_config_t *cfg, int64_t rp, int clean)
{
    partition_log_t *log = NULL;
    char err[512] = "";
    int rc = partition_log_open(pdir, cfg, rp, clean, T0, &log, err, sizeof(err));
    if (rc != PLOG_OK)
        fprintf(stderr, "  open: %s\n", err);
    CHECK_EQ(rc, PLOG_OK);
    return log;
}

/* Append n batches of 1..4 records; record the patched bytes in sh. */
static void append_many(partition_log_t *log, shadow_t *sh, int n, int32_t epoch, int seed)
{
    for (int i = 0; i < n; i++) {
        uint8_t b[8192];
        int nrec = 1 + (i + seed) % 4;
        size_t len = make_batch(b, nrec, T0 + (int64_t)sh->n * 10, (size_t)(20 + (i * 7) % 90),
                                seed + i);
        append_info_t info;
        int64_t leo = partition_log_end_offset(log);
        CHECK_EQ(partition_log_append(log, b, len, epoch, T0, &info), PLOG_OK);
        CHECK_EQ(info.first_offset, leo);
        CHECK_EQ(info.last_offset, leo + nrec - 1);
        CHECK_EQ(partition_log_end_offset(log), leo + nrec);
        shadow_add(sh, b, len, leo);
    }
}

/* Index in sh of the batch holding offset. */
static size_t shadow_find(const shadow_t *sh, int64_t offset)
{
    size_t k = 0;
    while (k + 1 < sh->n && sh->base[k + 1] <= offset)
        k++;
    return k;
}

/* Fetch the log from its start to LEO in reads of at most max_bytes, each
 * continuing after the last whole batch received; the bytes must equal sh. */
static void check_read_all(partition_log_t *log, const shadow_t *sh, int64_t max_bytes)
{
    int64_t leo = partition_log_end_offset(log);
    int64_t off = partition_log_start_offset(log);
    int rounds = 0;
    while (off < leo && rounds++ < 100000) {
        plog_slice_t sl;
        size_t k = shadow_find(sh, off);
        CHECK_EQ(partition_log_read(log, off, leo, max_bytes, 1, &sl), PLOG_OK);
        CHECK(sl.length > 0);
        CHECK_EQ(sl.first_offset, sh->base[k]);
        if (sl.length <= 0 || sh->pos[k] + sl.length > (int64_t)sh->len) {
            CHECK(0);
            return;
        }
        uint8_t *got = malloc((size_t)sl.length);
        CHECK_EQ(pread(sl.fd, got, (size_t)sl.length, sl.position), sl.length);
        CHECK(memcmp(got, sh->data + sh->pos[k], (size_t)sl.length) == 0);
        free(got);
        /* Resume at the first batch not wholly received. */
        int64_t end = sh->pos[k] + sl.length;
        size_t j = k;
        while (j < sh->n && (j + 1 < sh->n ? sh->pos[j + 1] : (int64_t)sh->len) <= end)
            j++;
        CHECK(j > k);
        if (j == k)
            return;
        off = j < sh->n ? sh->base[j] : leo;
    }
    CHECK_EQ(off, leo);
}

static int64_t file_size(const char *name)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/%s", pdir, name);
    struct stat st;
    return stat(p, &st) == 0 ? (int64_t)st.st_size : -1;
}

static void seg_file(char *out, size_t n, int64_t base, const char *ext)
{
    snprintf(out, n, "%s/%020lld%s", pdir, (long long)base, ext);
}

static void truncate_file(const char *path, int64_t size)
{
    CHECK_EQ(truncate(path, (off_t)size), 0);
}

static void flip_byte(const char *path, int64_t pos)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t c;
    CHECK_EQ(pread(fd, &c, 1, pos), 1);
    c ^= 0x5a;
    CHECK_EQ(pwrite(fd, &c, 1, pos), 1);
    close(fd);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* ---- Batch headers ------------------------------------------------------------ */

static void test_partition_log_batch_header(void)
{
    uint8_t b[8192];
    size_t n = make_batch(b, 3, T0, 10, 1);
    record_batch_t h;
    CHECK_EQ(record_batch_validate(b, n, &h), PLOG_OK);
    CHECK_EQ(h.magic, 2);
    CHECK_EQ(h.record_count, 3);
    CHECK_EQ(h.last_offset_delta, 2);
    CHECK_EQ(h.first_timestamp, T0);
    CHECK_EQ(h.max_timestamp, T0 + 2);
    CHECK_EQ(h.producer_id, -1);
    CHECK_EQ(h.producer_epoch, -1);
    CHECK_EQ(h.base_sequence, -1);
    CHECK_EQ(record_batch_size(&h), (int64_t)n);
    /* Base offset and leader epoch are outside the CRC. */
    record_batch_set_base_offset(b, 123456789012LL);
    record_batch_set_leader_epoch(b, 7);
    CHECK_EQ(record_batch_validate(b, n, &h), PLOG_OK);
    CHECK_EQ(h.base_offset, 123456789012LL);
    CHECK_EQ(h.leader_epoch, 7);
    /* Every covered byte is covered. */
    for (size_t i = BATCH_OFF_ATTRIBUTES; i < n; i++) {
        b[i] ^= 1;
        CHECK_EQ(record_batch_validate(b, n, &h), PLOG_ERR_CORRUPT);
        b[i] ^= 1;
    }
    /* Short buffers, bad magic, lengths out of bounds. */
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(record_batch_parse_header(b, i, &h), PLOG_ERR_CORRUPT);
    b[BATCH_OFF_MAGIC] = 1;
    CHECK_EQ(record_batch_parse_header(b, n, &h), PLOG_ERR_CORRUPT);
    b[BATCH_OFF_MAGIC] = 2;
    be32_put(b + BATCH_OFF_LENGTH, 10);
    CHECK_EQ(record_batch_parse_header(b, n, &h), PLOG_ERR_CORRUPT);
    be32_put(b + BATCH_OFF_LENGTH, 0x7fffffff);
    CHECK_EQ(record_batch_parse_header(b, n, &h), PLOG_ERR_CORRUPT);
    be32_put(b + BATCH_OFF_LENGTH, 0xffffffff);
    CHECK_EQ(record_batch_parse_header(b, n, &h), PLOG_ERR_CORRUPT);
    /* Records are walked for timestamps. */
    n = make_batch(b, 5, T0, 4, 2);
    record_batch_set_base_offset(b, 100);
    int64_t off, ts;
    CHECK_EQ(batch_find_timestamp_any(b, n, T0 + 3, &off, &ts), COMPRESSION_OK);
    CHECK_EQ(off, 103);
    CHECK_EQ(ts, T0 + 3);
    CHECK_EQ(batch_find_timestamp_any(b, n, T0 + 5, &off, &ts), PLOG_ERR_NOT_FOUND);
    CHECK(batch_find_timestamp_any(b, n - 1, T0, &off, &ts) < 0);
}

/* ---- Append and read ------------------------------------------------------------ */

static void test_partition_log_append_read(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    CHECK_EQ(partition_log_end_offset(log), 0);
    append_many(log, &sh, 600, 0, 0);
    partition_log_set_high_watermark(log, partition_log_end_offset(log));
    CHECK(partition_log_segment_count(log) > 3);
    CHECK_EQ(partition_log_size_bytes(log), (int64_t)sh.len);
    check_read_all(log, &sh, 1 << 20);
    check_read_all(log, &sh, 1000);
    check_read_all(log, &sh, 1); /* one batch per fetch, by KIP-74 */
    /* Every offset finds the batch that holds it. */
    int64_t leo = partition_log_end_offset(log);
    for (int64_t off = 0; off < leo; off++) {
        plog_slice_t sl;
        CHECK_EQ(partition_log_read(log, off, leo, 1 << 20, 1, &sl), PLOG_OK);
        CHECK_EQ(sl.first_offset, sh.base[shadow_find(&sh, off)]);
    }
    /* Segments roll by size and the files exist, named by base offset. */
    for (size_t i = 0; i < partition_log_segment_count(log); i++) {
        char p[600];
        struct stat st;
        seg_file(p, sizeof(p), partition_log_segment_base(log, i), ".log");
        CHECK(stat(p, &st) == 0 && st.st_size <= cfg.segment_bytes);
        seg_file(p, sizeof(p), partition_log_segment_base(log, i), ".index");
        CHECK(stat(p, &st) == 0 && st.st_size > 0 && st.st_size % 8 == 0);
        seg_file(p, sizeof(p), partition_log_segment_base(log, i), ".timeindex");
        CHECK(stat(p, &st) == 0 && st.st_size > 0 && st.st_size % 12 == 0);
    }
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

static void test_partition_log_read_bounds(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 20, 0, 1);
    int64_t leo = partition_log_end_offset(log);
    plog_slice_t sl;
    CHECK_EQ(partition_log_read(log, leo + 1, leo, 1000, 1, &sl), PLOG_ERR_OUT_OF_RANGE);
    CHECK_EQ(partition_log_read(log, -1, leo, 1000, 1, &sl), PLOG_ERR_OUT_OF_RANGE);
    CHECK_EQ(partition_log_read(log, leo, leo, 1000, 1, &sl), PLOG_OK);
    CHECK_EQ(sl.length, 0);
    /* The HW bounds what consumers see: up to the batch holding it. */
    int64_t hw = sh.base[5] + 1;
    CHECK_EQ(partition_log_read(log, 0, hw, 1 << 20, 1, &sl), PLOG_OK);
    CHECK_EQ(sl.position, 0);
    CHECK_EQ(sl.length, sh.pos[5]);
    CHECK_EQ(partition_log_read(log, sh.base[5], hw, 1 << 20, 1, &sl), PLOG_OK);
    CHECK_EQ(sl.length, 0);
    /* A first batch bigger than max_bytes: whole with min_one, else nothing. */
    int64_t first = sh.pos[1];
    CHECK_EQ(partition_log_read(log, 0, leo, first - 1, 1, &sl), PLOG_OK);
    CHECK_EQ(sl.length, first);
    CHECK_EQ(partition_log_read(log, 0, leo, first - 1, 0, &sl), PLOG_OK);
    CHECK_EQ(sl.length, 0);
    /* Otherwise max_bytes exactly, even inside a batch. */
    CHECK_EQ(partition_log_read(log, 0, leo, first + 3, 0, &sl), PLOG_OK);
    CHECK_EQ(sl.length, first + 3);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

static void test_partition_log_append_rejects(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    cfg.max_batch_bytes = 2000;
    partition_log_t *log = open_log(&cfg, 0, 0);
    uint8_t buf[16384];
    size_t a = make_batch(buf, 2, T0, 10, 1);
    size_t b = make_batch(buf + a, 2, T0, 10, 2);
    /* One bad batch rejects the whole buffer and writes nothing. */
    buf[a + 70] ^= 1;
    CHECK_EQ(partition_log_append(log, buf, a + b, 0, T0, NULL), PLOG_ERR_CORRUPT);
    CHECK_EQ(partition_log_end_offset(log), 0);
    CHECK_EQ(partition_log_size_bytes(log), 0);
    buf[a + 70] ^= 1;
    /* Trailing garbage, a partial batch, nothing at all. */
    CHECK_EQ(partition_log_append(log, buf, a + b - 1, 0, T0, NULL), PLOG_ERR_CORRUPT);
    CHECK_EQ(partition_log_append(log, buf, a + 5, 0, T0, NULL), PLOG_ERR_CORRUPT);
    CHECK_EQ(partition_log_append(log, buf, 0, 0, T0, NULL), PLOG_ERR_CORRUPT);
    size_t big = make_batch(buf, 30, T0, 100, 3);
    CHECK_EQ(partition_log_append(log, buf, big, 0, T0, NULL), PLOG_ERR_TOO_LARGE);
    /* Two batches at once get consecutive offsets and the epoch. */
    a = make_batch(buf, 2, T0, 10, 1);
    b = make_batch(buf + a, 3, T0, 10, 2);
    append_info_t info;
    CHECK_EQ(partition_log_append(log, buf, a + b, 4, T0, &info), PLOG_OK);
    CHECK_EQ(info.first_offset, 0);
    CHECK_EQ(info.last_offset, 4);
    CHECK_EQ(info.batch_count, 2);
    CHECK_EQ(info.record_count, 5);
    record_batch_t h;
    CHECK_EQ(record_batch_validate(buf + a, b, &h), PLOG_OK);
    CHECK_EQ(h.base_offset, 2);
    CHECK_EQ(h.leader_epoch, 4);
    /* A stale leader epoch is refused. */
    a = make_batch(buf, 1, T0, 10, 1);
    CHECK_EQ(partition_log_append(log, buf, a, 3, T0, NULL), PLOG_ERR_INVALID);
    partition_log_close(log);
    teardown();
}

/* ---- Rolling by time ------------------------------------------------------------------ */

static void test_partition_log_roll_by_time(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    cfg.segment_ms = 1000;
    partition_log_t *log = open_log(&cfg, 0, 0);
    uint8_t b[4096];
    size_t n = make_batch(b, 1, T0, 10, 1);
    CHECK_EQ(partition_log_append(log, b, n, 0, T0, NULL), PLOG_OK);
    n = make_batch(b, 1, T0 + 500, 10, 1);
    CHECK_EQ(partition_log_append(log, b, n, 0, T0, NULL), PLOG_OK);
    CHECK_EQ(partition_log_segment_count(log), 1);
    n = make_batch(b, 1, T0 + 1500, 10, 1);
    CHECK_EQ(partition_log_append(log, b, n, 0, T0, NULL), PLOG_OK);
    CHECK_EQ(partition_log_segment_count(log), 2);
    CHECK_EQ(partition_log_segment_base(log, 1), 2);
    partition_log_close(log);
    teardown();
}

/* ---- Recovery ------------------------------------------------------------------------ */

static void test_partition_log_restart(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 300, 2, 5);
    int64_t leo = partition_log_end_offset(log);
    size_t nseg = partition_log_segment_count(log);
    CHECK_EQ(partition_log_flush(log), PLOG_OK);
    CHECK_EQ(partition_log_recovery_point(log), leo);
    partition_log_close(log);
    /* Unclean, from offset 0: everything scanned and kept. */
    log = open_log(&cfg, 0, 0);
    CHECK_EQ(partition_log_end_offset(log), leo);
    CHECK_EQ(partition_log_segment_count(log), nseg);
    CHECK_EQ(partition_log_latest_epoch(log), 2);
    check_read_all(log, &sh, 3000);
    partition_log_close(log);
    /* Clean: nothing scanned, indexes trusted. */
    log = open_log(&cfg, leo, 1);
    CHECK_EQ(partition_log_end_offset(log), leo);
    check_read_all(log, &sh, 3000);
    /* Appends continue where they stopped. */
    append_many(log, &sh, 10, 2, 9);
    int64_t leo2 = partition_log_end_offset(log);
    int64_t base1 = partition_log_segment_base(log, 1);
    partition_log_close(log);
    /* Missing and garbage index files are rebuilt, even on a clean start. */
    char p[600];
    seg_file(p, sizeof(p), 0, ".index");
    unlink(p);
    seg_file(p, sizeof(p), base1, ".index");
    write_text(p, "garbage!");
    seg_file(p, sizeof(p), 0, ".timeindex");
    write_text(p, "0123456789ab0123456789ab");
    log = open_log(&cfg, leo2, 1);
    CHECK_EQ(partition_log_end_offset(log), leo2);
    CHECK(file_size("00000000000000000000.index") > 0);
    check_read_all(log, &sh, 3000);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

/* Cut the last batch at every byte: recovery keeps exactly the ones before. */
static void test_partition_log_torn_tail(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    cfg.segment_bytes = 1 << 20;
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 50, 1, 0);
    partition_log_close(log);
    char p[600];
    seg_file(p, sizeof(p), 0, ".log");
    int64_t last = sh.pos[sh.n - 1];
    int64_t prev_leo = sh.base[sh.n - 1];
    uint8_t *copy = malloc(sh.len);
    memcpy(copy, sh.data, sh.len);
    for (int64_t cut = last; cut < (int64_t)sh.len; cut++) {
        truncate_file(p, cut);
        log = open_log(&cfg, 0, 0);
        CHECK_EQ(partition_log_end_offset(log), prev_leo);
        CHECK_EQ(file_size("00000000000000000000.log"), last);
        partition_log_close(log);
        /* Restore the full file for the next round. */
        int fd = open(p, O_WRONLY);
        CHECK_EQ(pwrite(fd, copy, sh.len, 0), (ssize_t)sh.len);
        close(fd);
    }
    /* After a real cut, the log takes appends again and reads back right. */
    truncate_file(p, last + 7);
    log = open_log(&cfg, 0, 0);
    shadow_cut(&sh, sh.n - 1);
    append_many(log, &sh, 5, 1, 3);
    check_read_all(log, &sh, 1 << 20);
    partition_log_close(log);
    free(copy);
    shadow_free(&sh);
    teardown();
}

/* A flipped byte fails the CRC: the log ends just before that batch and
 * later segments are deleted. */
static void test_partition_log_corrupt_batch(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 300, 1, 0);
    size_t nseg = partition_log_segment_count(log);
    CHECK(nseg >= 4);
    int64_t seg1 = partition_log_segment_base(log, 1);
    int64_t seg2 = partition_log_segment_base(log, 2);
    partition_log_close(log);
    /* The third batch of segment 1. */
    size_t k = shadow_find(&sh, seg1) + 2;
    size_t k0 = shadow_find(&sh, seg1);
    char p[600];
    seg_file(p, sizeof(p), seg1, ".log");
    flip_byte(p, sh.pos[k] - sh.pos[k0] + 40);
    /* Recovery point in segment 1: segment 0 is trusted, 1.. are scanned. */
    log = open_log(&cfg, seg1 + 1, 0);
    CHECK_EQ(partition_log_end_offset(log), sh.base[k]);
    CHECK_EQ(partition_log_segment_count(log), 2);
    seg_file(p, sizeof(p), seg2, ".log");
    CHECK(access(p, F_OK) != 0);
    shadow_cut(&sh, k);
    check_read_all(log, &sh, 5000);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

/* Random bytes in every file: open never crashes, and whatever it keeps
 * reads back. */
static void test_partition_log_hostile_files(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    unsigned seed = 12345;
    for (int round = 0; round < 40; round++) {
        partition_log_t *log = open_log(&cfg, 0, 0);
        shadow_t sh = {0};
        append_many(log, &sh, 40, 1, round);
        partition_log_close(log);
        static const char *const exts[] = {".log", ".index", ".timeindex"};
        char p[600];
        seg_file(p, sizeof(p), 0, exts[round % 3]);
        int fd = open(p, O_RDWR);
        for (int i = 0; i < 1 + round % 5; i++) {
            seed = seed * 1103515245u + 12345u;
            uint8_t junk[16];
            for (size_t j = 0; j < sizeof(junk); j++)
                junk[j] = (uint8_t)(seed >> (j % 24));
            int64_t at = (int64_t)(seed % (unsigned)(file_size("00000000000000000000.log") + 1));
            CHECK_EQ(pwrite(fd, junk, sizeof(junk), at), (ssize_t)sizeof(junk));
        }
        close(fd);
        partition_log_t *l2 = NULL;
        char err[256];
        int rc = partition_log_open(pdir, &cfg, 0, round % 2, T0, &l2, err, sizeof(err));
        CHECK(rc == PLOG_OK);
        if (rc == PLOG_OK) {
            int64_t leo = partition_log_end_offset(l2);
            CHECK(leo <= sh.base[sh.n - 1] + 4);
            for (int64_t off = 0; off < leo; off += 7) {
                plog_slice_t sl;
                int r = partition_log_read(l2, off, leo, 4096, 1, &sl);
                CHECK(r == PLOG_OK || r == PLOG_ERR_CORRUPT);
            }
            partition_log_close(l2);
        }
        shadow_free(&sh);
        remove_tree(pdir);
    }
    teardown();
}

/* ---- Checkpoint files ----------------------------------------------------------------- */

static void expect_bad_offsets(const char *path, const char *text)
{
    write_text(path, text);
    offset_checkpoint_entry_t *e = NULL;
    size_t n = 99;
    char err[256] = "";
    CHECK_EQ(offset_checkpoint_read(path, &e, &n, err, sizeof(err)), PLOG_ERR_INVALID);
    CHECK(e == NULL && n == 0);
    CHECK(strstr(err, "line") != NULL);
}

static void expect_bad_epochs(const char *path, const char *text)
{
    write_text(path, text);
    epoch_entry_t *e = NULL;
    size_t n = 99;
    char err[256] = "";
    CHECK_EQ(epoch_checkpoint_read(path, &e, &n, err, sizeof(err)), PLOG_ERR_INVALID);
    CHECK(e == NULL && n == 0);
    CHECK(err[0] != '\0');
}

static void test_partition_log_checkpoints(void)
{
    setup();
    char path[600];
    snprintf(path, sizeof(path), "%s/replication-offset-checkpoint", root);
    offset_checkpoint_entry_t in[3] = {{"events", 0, 42}, {"a.b_c-D", 17, 0},
                                       {"x", 2147483647, 9223372036854775807LL}};
    CHECK_EQ(offset_checkpoint_write(path, in, 3), PLOG_OK);
    offset_checkpoint_entry_t *out;
    size_t n;
    CHECK_EQ(offset_checkpoint_read(path, &out, &n, NULL, 0), PLOG_OK);
    CHECK_EQ(n, 3);
    for (size_t i = 0; i < 3 && i < n; i++) {
        CHECK_STR(out[i].topic, in[i].topic);
        CHECK_EQ(out[i].partition, in[i].partition);
        CHECK_EQ(out[i].offset, in[i].offset);
    }
    free(out);
    /* Kafka's exact text. */
    FILE *f = fopen(path, "r");
    char text[256] = "";
    CHECK(f && fread(text, 1, sizeof(text) - 1, f) > 0);
    if (f)
        fclose(f);
    CHECK_STR(text, "0\n3\nevents 0 42\na.b_c-D 17 0\nx 2147483647 9223372036854775807\n");
    CHECK_EQ(offset_checkpoint_write(path, NULL, 0), PLOG_OK);
    CHECK_EQ(offset_checkpoint_read(path, &out, &n, NULL, 0), PLOG_OK);
    CHECK_EQ(n, 0);
    free(out);
    char missing[600];
    snprintf(missing, sizeof(missing), "%s/nope", root);
    CHECK_EQ(offset_checkpoint_read(missing, &out, &n, NULL, 0), PLOG_ERR_NOT_FOUND);
    /* Malformed: each rejected. */
    expect_bad_offsets(path, "");
    expect_bad_offsets(path, "1\n0\n");
    expect_bad_offsets(path, "0\n");
    expect_bad_offsets(path, "0\n2\nt 0 1\n");
    expect_bad_offsets(path, "0\n1\nt 0 1\nt 1 2\n");
    expect_bad_offsets(path, "0\n1\nt 0\n");
    expect_bad_offsets(path, "0\n1\nt  0 1\n");
    expect_bad_offsets(path, "0\n1\nt 0 1 2\n");
    expect_bad_offsets(path, "0\n1\nt -1 1\n");
    expect_bad_offsets(path, "0\n1\nt 0 -5\n");
    expect_bad_offsets(path, "0\n1\nt 0 1x\n");
    expect_bad_offsets(path, "0\n1\nt 0 99999999999999999999\n");
    expect_bad_offsets(path, "0\n1\nt/x 0 1\n");
    expect_bad_offsets(path, "0\n-1\n");
    expect_bad_offsets(path, "0\n999999999\nt 0 1\n");
    expect_bad_offsets(path, " 0\n0\n");
    /* Leader epochs. */
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", root);
    epoch_entry_t ein[3] = {{0, 0}, {3, 100}, {4, 100}};
    CHECK_EQ(epoch_checkpoint_write(path, ein, 3), PLOG_OK);
    epoch_entry_t *eout;
    CHECK_EQ(epoch_checkpoint_read(path, &eout, &n, NULL, 0), PLOG_OK);
    CHECK_EQ(n, 3);
    for (size_t i = 0; i < 3 && i < n; i++)
        CHECK(eout[i].epoch == ein[i].epoch && eout[i].start_offset == ein[i].start_offset);
    free(eout);
    expect_bad_epochs(path, "0\n1\n1 2 3\n");
    expect_bad_epochs(path, "0\n2\n3 10\n2 20\n");
    expect_bad_epochs(path, "0\n2\n3 10\n4 5\n");
    expect_bad_epochs(path, "0\n1\n-1 0\n");
    expect_bad_epochs(path, "0\n1\n1 0\n\n");
    write_text(path, "0\n1\n1 0"); /* no final newline: accepted */
    CHECK_EQ(epoch_checkpoint_read(path, &eout, &n, NULL, 0), PLOG_OK);
    free(eout);
    teardown();
}

/* A broken leader-epoch-checkpoint stops the open with a reason. */
static void test_partition_log_bad_epoch_file(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    CHECK_EQ(mkdir(root, 0755) == 0 || errno == EEXIST, 1);
    CHECK_EQ(mkdir(pdir, 0755), 0);
    char path[600];
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", pdir);
    write_text(path, "0\n1\nbanana\n");
    partition_log_t *log = NULL;
    char err[512] = "";
    CHECK_EQ(partition_log_open(pdir, &cfg, 0, 0, T0, &log, err, sizeof(err)), PLOG_ERR_INVALID);
    CHECK(log == NULL);
    CHECK(strstr(err, "leader-epoch-checkpoint") != NULL);
    teardown();
}

/* ---- Retention, truncation, epochs, time lookups ---------------------------------------- */

static void test_partition_log_retention(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    cfg.retention_ms = 60000;
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 300, 0, 0);
    size_t nseg = partition_log_segment_count(log);
    int64_t leo = partition_log_end_offset(log);
    /* Nothing goes before the HW passes it. */
    CHECK_EQ(partition_log_apply_retention(log, T0 + 3600000), 0);
    partition_log_set_high_watermark(log, partition_log_segment_base(log, 2));
    CHECK_EQ(partition_log_apply_retention(log, T0 + 3600000), 2);
    CHECK_EQ(partition_log_start_offset(log), partition_log_segment_base(log, 0));
    plog_slice_t sl;
    CHECK_EQ(partition_log_read(log, 0, leo, 100, 1, &sl), PLOG_ERR_OUT_OF_RANGE);
    partition_log_set_high_watermark(log, leo);
    CHECK_EQ(partition_log_apply_retention(log, T0 + 3600000), (int)nseg - 3);
    CHECK_EQ(partition_log_segment_count(log), 1); /* the active one stays */
    char p[600];
    seg_file(p, sizeof(p), 0, ".log");
    CHECK(access(p, F_OK) != 0);
    check_read_all(log, &sh, 1 << 20);
    /* Not yet old enough: kept. */
    partition_log_close(log);
    remove_tree(pdir);
    shadow_free(&sh);
    log = open_log(&cfg, 0, 0);
    append_many(log, &sh, 300, 0, 0);
    partition_log_set_high_watermark(log, partition_log_end_offset(log));
    CHECK_EQ(partition_log_apply_retention(log, T0), 0);
    /* By size: keep whole segments while the rest stays >= retention.bytes. */
    cfg.retention_ms = -1;
    cfg.retention_bytes = 40000;
    partition_log_close(log);
    log = open_log(&cfg, 0, 0);
    partition_log_set_high_watermark(log, partition_log_end_offset(log));
    int deleted = partition_log_apply_retention(log, T0);
    CHECK(deleted > 0);
    CHECK(partition_log_size_bytes(log) >= 40000);
    CHECK(partition_log_size_bytes(log) - 16 * 1024 < 40000);
    check_read_all(log, &sh, 1 << 20);
    /* Reopened, the log starts where retention left it. */
    int64_t start = partition_log_start_offset(log);
    partition_log_close(log);
    log = open_log(&cfg, 0, 0);
    CHECK_EQ(partition_log_start_offset(log), start);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

/* DeleteRecords: the log start moves inside a segment, whole segments
 * below it go, reads below it are out of range, appends go on. */
static void test_partition_log_delete_records(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 300, 0, 0);
    size_t nseg = partition_log_segment_count(log);
    int64_t leo = partition_log_end_offset(log);
    CHECK(nseg > 4);
    partition_log_set_high_watermark(log, leo);
    int64_t base2 = partition_log_segment_base(log, 2), cut = base2 + 3;
    CHECK_EQ(partition_log_delete_records_before(log, cut), 2);
    CHECK_EQ(partition_log_start_offset(log), cut);
    CHECK_EQ(partition_log_segment_base(log, 0), base2);
    CHECK_EQ(partition_log_segment_count(log), nseg - 2);
    char p[600];
    seg_file(p, sizeof(p), 0, ".log");
    CHECK(access(p, F_OK) != 0);
    plog_slice_t sl;
    CHECK_EQ(partition_log_read(log, cut - 1, leo, 100, 1, &sl), PLOG_ERR_OUT_OF_RANGE);
    CHECK_EQ(partition_log_read(log, cut, leo, 1 << 20, 1, &sl), PLOG_OK);
    CHECK(sl.length > 0 && sl.first_offset <= cut);
    /* At or below the start: nothing; past the LEO: refused. */
    CHECK_EQ(partition_log_delete_records_before(log, cut), 0);
    CHECK_EQ(partition_log_delete_records_before(log, 1), 0);
    CHECK_EQ(partition_log_start_offset(log), cut);
    CHECK_EQ(partition_log_delete_records_before(log, leo + 1), PLOG_ERR_OUT_OF_RANGE);
    /* Everything: the active segment stays, empty of readable records. */
    int older = (int)partition_log_segment_count(log) - 1;
    CHECK_EQ(partition_log_delete_records_before(log, leo), older);
    CHECK_EQ(partition_log_segment_count(log), 1);
    CHECK_EQ(partition_log_start_offset(log), leo);
    CHECK_EQ(partition_log_read(log, leo, leo, 100, 1, &sl), PLOG_OK);
    CHECK_EQ(sl.length, 0);
    shadow_t more = {0};
    append_many(log, &more, 3, 0, 7);
    CHECK_EQ(partition_log_end_offset(log) > leo, 1);
    partition_log_close(log);
    shadow_free(&sh);
    shadow_free(&more);
    teardown();
}

/* Configs changed on an open log apply to the next append: a smaller
 * segment size rolls sooner; an unusable one is refused. */
static void test_partition_log_set_config(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    cfg.segment_bytes = 1 << 20;
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 100, 0, 0);
    CHECK_EQ(partition_log_segment_count(log), 1);
    partition_log_config_t bad = cfg;
    bad.segment_bytes = 10;
    CHECK_EQ(partition_log_set_config(log, &bad), PLOG_ERR_INVALID);
    cfg.segment_bytes = 4096;
    cfg.max_batch_bytes = 100;
    CHECK_EQ(partition_log_set_config(log, &cfg), PLOG_OK);
    uint8_t b[8192];
    size_t len = make_batch(b, 2, T0, 200, 1);
    CHECK_EQ(partition_log_append(log, b, len, 0, T0, NULL), PLOG_ERR_TOO_LARGE);
    cfg.max_batch_bytes = 1 << 20;
    CHECK_EQ(partition_log_set_config(log, &cfg), PLOG_OK);
    append_many(log, &sh, 100, 0, 3);
    CHECK(partition_log_segment_count(log) > 2);
    check_read_all(log, &sh, 1 << 20);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

static void test_partition_log_truncate_to(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 100, 1, 0);
    append_many(log, &sh, 100, 2, 1);
    append_many(log, &sh, 100, 5, 2);
    partition_log_set_high_watermark(log, partition_log_end_offset(log));
    CHECK_EQ(partition_log_flush(log), PLOG_OK);
    /* Mid-batch: the whole batch goes. */
    size_t k = 150;
    int64_t target = sh.base[k] + (sh.base[k + 1] - sh.base[k] > 1 ? 1 : 0);
    CHECK_EQ(partition_log_truncate_to(log, target), PLOG_OK);
    CHECK_EQ(partition_log_end_offset(log), sh.base[k]);
    CHECK_EQ(partition_log_high_watermark(log), sh.base[k]);
    CHECK(partition_log_recovery_point(log) <= sh.base[k]);
    CHECK_EQ(partition_log_latest_epoch(log), 2);
    shadow_cut(&sh, k);
    check_read_all(log, &sh, 7000);
    /* Appends continue, with a new epoch. */
    append_many(log, &sh, 50, 6, 4);
    check_read_all(log, &sh, 7000);
    int32_t ep;
    int64_t end;
    partition_log_epoch_end_offset(log, 2, &ep, &end);
    CHECK_EQ(ep, 2);
    CHECK_EQ(end, sh.base[k]);
    /* Reopen: the same log. */
    int64_t leo = partition_log_end_offset(log);
    CHECK_EQ(partition_log_flush(log), PLOG_OK);
    partition_log_close(log);
    log = open_log(&cfg, 0, 0);
    CHECK_EQ(partition_log_end_offset(log), leo);
    check_read_all(log, &sh, 7000);
    CHECK_EQ(partition_log_latest_epoch(log), 6);
    /* Past the end: nothing happens; to 0: empty. */
    CHECK_EQ(partition_log_truncate_to(log, leo + 10), PLOG_OK);
    CHECK_EQ(partition_log_end_offset(log), leo);
    CHECK_EQ(partition_log_truncate_to(log, 0), PLOG_OK);
    CHECK_EQ(partition_log_end_offset(log), 0);
    CHECK_EQ(partition_log_segment_count(log), 1);
    CHECK_EQ(partition_log_latest_epoch(log), -1);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

static void test_partition_log_epochs(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    append_many(log, &sh, 4, 1, 0);   /* epoch 1 from 0 */
    int64_t e3 = partition_log_end_offset(log);
    append_many(log, &sh, 4, 3, 0);   /* epoch 3 */
    int64_t e7 = partition_log_end_offset(log);
    append_many(log, &sh, 4, 7, 0);   /* epoch 7 */
    int64_t leo = partition_log_end_offset(log);
    int32_t ep;
    int64_t end;
    partition_log_epoch_end_offset(log, 7, &ep, &end);
    CHECK(ep == 7 && end == leo);
    partition_log_epoch_end_offset(log, 3, &ep, &end);
    CHECK(ep == 3 && end == e7);
    partition_log_epoch_end_offset(log, 5, &ep, &end); /* unknown: the one below */
    CHECK(ep == 3 && end == e7);
    partition_log_epoch_end_offset(log, 1, &ep, &end);
    CHECK(ep == 1 && end == e3);
    partition_log_epoch_end_offset(log, 0, &ep, &end);
    CHECK(ep == 0 && end == 0);
    partition_log_epoch_end_offset(log, 9, &ep, &end);
    CHECK(ep == -1 && end == -1);
    /* The checkpoint file is written by the flush job. */
    plog_flush_t job;
    CHECK_EQ(partition_log_flush_begin(log, &job), PLOG_OK);
    CHECK(job.write_epochs);
    partition_log_flush_run(&job);
    CHECK_EQ(partition_log_flush_end(log, &job), PLOG_OK);
    CHECK_EQ(partition_log_recovery_point(log), leo);
    char path[600];
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", pdir);
    epoch_entry_t *e;
    size_t n;
    CHECK_EQ(epoch_checkpoint_read(path, &e, &n, NULL, 0), PLOG_OK);
    CHECK(n == 3 && e[1].epoch == 3 && e[1].start_offset == e3);
    free(e);
    /* A replica takes the leader's batches as they are. */
    uint8_t b[4096];
    size_t len = make_batch(b, 3, T0, 10, 1);
    record_batch_set_base_offset(b, leo);
    record_batch_set_leader_epoch(b, 9);
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_OK);
    CHECK_EQ(partition_log_end_offset(log), leo + 3);
    CHECK_EQ(partition_log_latest_epoch(log), 9);
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_ERR_OUT_OF_RANGE);
    /* Unflushed epochs come back from the batches after a crash. */
    partition_log_close(log);
    log = open_log(&cfg, leo, 0);
    CHECK_EQ(partition_log_latest_epoch(log), 9);
    partition_log_epoch_end_offset(log, 7, &ep, &end);
    CHECK(ep == 7 && end == leo);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

/* A follower takes the leader's batches as they are, but only batches that
 * continue its log and whose offsets are their records: a header claiming
 * 2^31-1 offsets for one record, or starting past the log end, would make
 * the log end jump. */
static void test_partition_log_replica_cannot_jump(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    uint8_t b[4096];
    size_t len = make_batch(b, 3, T0, 10, 1);
    record_batch_set_leader_epoch(b, 4);
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_OK);
    CHECK_EQ(partition_log_end_offset(log), 3);
    len = make_batch(b, 1, T0, 10, 2);
    record_batch_set_base_offset(b, 3);
    record_batch_set_leader_epoch(b, 4);
    be32_put(b + BATCH_OFF_LAST_OFFSET_DELTA, INT32_MAX - 1);
    be32_put(b + BATCH_OFF_CRC, record_batch_compute_crc(b, len));
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_ERR_CORRUPT);
    CHECK_EQ(partition_log_end_offset(log), 3);
    /* Count and delta agree, but an uncompressed batch of 77 bytes cannot
     * hold 2^31-1 records (each takes at least 7 bytes). */
    be32_put(b + BATCH_OFF_RECORD_COUNT, INT32_MAX);
    be32_put(b + BATCH_OFF_CRC, record_batch_compute_crc(b, len));
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_ERR_CORRUPT);
    CHECK_EQ(partition_log_end_offset(log), 3);
    /* A gap: the batch starts past the log end. */
    len = make_batch(b, 2, T0, 10, 3);
    record_batch_set_base_offset(b, 10);
    record_batch_set_leader_epoch(b, 4);
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_ERR_OUT_OF_RANGE);
    CHECK_EQ(partition_log_end_offset(log), 3);
    record_batch_set_base_offset(b, 3);
    CHECK_EQ(partition_log_append_replica(log, b, len, T0, NULL), PLOG_OK);
    CHECK_EQ(partition_log_end_offset(log), 5);
    /* The leader's append holds its batches to the same. */
    len = make_batch(b, 1, T0, 10, 4);
    be32_put(b + BATCH_OFF_RECORD_COUNT, INT32_MAX);
    be32_put(b + BATCH_OFF_LAST_OFFSET_DELTA, INT32_MAX - 1);
    be32_put(b + BATCH_OFF_CRC, record_batch_compute_crc(b, len));
    CHECK_EQ(partition_log_append(log, b, len, 5, T0, NULL), PLOG_ERR_CORRUPT);
    CHECK_EQ(partition_log_end_offset(log), 5);
    partition_log_close(log);
    teardown();
}

static void test_partition_log_offset_for_time(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    /* Batch k: records stamped T0 + 10k + i. */
    append_many(log, &sh, 400, 0, 0);
    CHECK(partition_log_segment_count(log) > 2);
    for (size_t k = 0; k < sh.n; k += 13) {
        int64_t off, ts;
        CHECK_EQ(partition_log_offset_for_time(log, T0 + 10 * (int64_t)k, &off, &ts), PLOG_OK);
        CHECK_EQ(off, sh.base[k]);
        CHECK_EQ(ts, T0 + 10 * (int64_t)k);
        int64_t nrec = (k + 1 < sh.n ? sh.base[k + 1] : partition_log_end_offset(log)) - sh.base[k];
        if (nrec > 1) {
            int64_t t1 = T0 + 10 * (int64_t)k + 1;
            CHECK_EQ(partition_log_offset_for_time(log, t1, &off, &ts), PLOG_OK);
            CHECK_EQ(off, sh.base[k] + 1);
        }
        /* Between batches: the next batch's first record. */
        CHECK_EQ(partition_log_offset_for_time(log, T0 + 10 * (int64_t)k + 5, &off, &ts), PLOG_OK);
        CHECK_EQ(off, k + 1 < sh.n ? sh.base[k + 1] : -1);
    }
    int64_t off, ts;
    CHECK_EQ(partition_log_offset_for_time(log, 0, &off, &ts), PLOG_OK);
    CHECK_EQ(off, 0);
    CHECK_EQ(partition_log_offset_for_time(log, T0 + 100000, &off, &ts), PLOG_ERR_NOT_FOUND);
    /* Same after a clean restart (time indexes from disk). */
    int64_t leo = partition_log_end_offset(log);
    partition_log_close(log);
    log = open_log(&cfg, leo, 1);
    CHECK_EQ(partition_log_offset_for_time(log, T0 + 10 * 200, &off, &ts), PLOG_OK);
    CHECK_EQ(off, sh.base[200]);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

/* ---- Scanning batch headers ------------------------------------------------------------ */

typedef struct {
    const shadow_t *sh;
    size_t next;   /* index in sh of the batch expected next */
    size_t seen;
    size_t stop_after; /* 0: never stop */
    int mismatches;
} scan_probe_t;

/* Field by field: the struct has padding. */
static int same_header(const record_batch_t *a, const record_batch_t *b)
{
    return a->base_offset == b->base_offset && a->batch_length == b->batch_length &&
           a->leader_epoch == b->leader_epoch && a->magic == b->magic && a->crc == b->crc &&
           a->attributes == b->attributes && a->last_offset_delta == b->last_offset_delta &&
           a->first_timestamp == b->first_timestamp && a->max_timestamp == b->max_timestamp &&
           a->producer_id == b->producer_id && a->producer_epoch == b->producer_epoch &&
           a->base_sequence == b->base_sequence && a->record_count == b->record_count;
}

/* Each header must be the next batch of the shadow. */
static int scan_visit(const record_batch_t *b, void *arg)
{
    scan_probe_t *p = arg;
    record_batch_t want;
    if (p->next >= p->sh->n ||
        record_batch_parse_header(p->sh->data + p->sh->pos[p->next],
                                  p->sh->len - (size_t)p->sh->pos[p->next], &want) != PLOG_OK ||
        !same_header(&want, b))
        p->mismatches++;
    p->next++;
    p->seen++;
    return p->stop_after && p->seen == p->stop_after ? 7 : 0;
}

/* Scan from offset: every batch from the one holding it (or the log start)
 * to the end, in order. */
static void check_scan_from(partition_log_t *log, const shadow_t *sh, int64_t from)
{
    int64_t start = from < partition_log_start_offset(log) ? partition_log_start_offset(log) : from;
    size_t first = start >= partition_log_end_offset(log) ? sh->n : shadow_find(sh, start);
    scan_probe_t p = {.sh = sh, .next = first};
    CHECK_EQ(partition_log_scan_batches(log, from, scan_visit, &p), PLOG_OK);
    CHECK_EQ(p.mismatches, 0);
    CHECK_EQ(p.next, sh->n);
}

static void test_partition_log_scan_batches(void)
{
    setup();
    partition_log_config_t cfg;
    small_config(&cfg);
    partition_log_t *log = open_log(&cfg, 0, 0);
    shadow_t sh = {0};
    scan_probe_t p = {.sh = &sh};
    CHECK_EQ(partition_log_scan_batches(log, 0, scan_visit, &p), PLOG_OK);
    CHECK_EQ(p.seen, 0); /* empty log */
    append_many(log, &sh, 400, 3, 2);
    CHECK(partition_log_segment_count(log) > 3);
    int64_t leo = partition_log_end_offset(log);
    /* From every offset of a stretch crossing a segment boundary, and from
     * the first and last batch of each segment. */
    int64_t seg1 = partition_log_segment_base(log, 1);
    for (int64_t off = seg1 - 12; off <= seg1 + 12; off++)
        check_scan_from(log, &sh, off);
    for (size_t i = 0; i < partition_log_segment_count(log); i++) {
        int64_t base = partition_log_segment_base(log, i);
        check_scan_from(log, &sh, base);
        check_scan_from(log, &sh, base - 1);
    }
    check_scan_from(log, &sh, -5);
    check_scan_from(log, &sh, leo - 1);
    check_scan_from(log, &sh, leo);     /* nothing */
    check_scan_from(log, &sh, leo + 9); /* nothing */
    /* Early stop: fn's value comes back and nothing more is visited. */
    p = (scan_probe_t){.sh = &sh, .next = shadow_find(&sh, 100), .stop_after = 5};
    CHECK_EQ(partition_log_scan_batches(log, 100, scan_visit, &p), 7);
    CHECK_EQ(p.seen, 5);
    CHECK_EQ(p.mismatches, 0);
    p = (scan_probe_t){.sh = &sh, .next = 0, .stop_after = sh.n};
    CHECK_EQ(partition_log_scan_batches(log, 0, scan_visit, &p), 7); /* stops on the last */
    CHECK_EQ(p.seen, sh.n);
    /* Below a log start moved by retention: from the log start. */
    partition_log_set_high_watermark(log, leo);
    cfg.retention_bytes = 30000;
    partition_log_close(log);
    log = open_log(&cfg, leo, 1); /* clean: indexes come from disk */
    check_scan_from(log, &sh, 0);
    check_scan_from(log, &sh, seg1 + 3);
    partition_log_set_high_watermark(log, leo);
    CHECK(partition_log_apply_retention(log, T0) > 0);
    CHECK(partition_log_start_offset(log) > 0);
    check_scan_from(log, &sh, 0);
    check_scan_from(log, &sh, partition_log_start_offset(log) + 1);
    /* After a truncation the scan ends at the new LEO. */
    int64_t cut = sh.base[sh.n - 30];
    CHECK_EQ(partition_log_truncate_to(log, cut), PLOG_OK);
    shadow_cut(&sh, sh.n - 30);
    check_scan_from(log, &sh, 0);
    check_scan_from(log, &sh, cut - 1);
    partition_log_close(log);
    shadow_free(&sh);
    teardown();
}

void suite_partition_log(void)
{
    RUN(test_partition_log_batch_header);
    RUN(test_partition_log_append_read);
    RUN(test_partition_log_read_bounds);
    RUN(test_partition_log_append_rejects);
    RUN(test_partition_log_roll_by_time);
    RUN(test_partition_log_restart);
    RUN(test_partition_log_torn_tail);
    RUN(test_partition_log_corrupt_batch);
    RUN(test_partition_log_hostile_files);
    RUN(test_partition_log_checkpoints);
    RUN(test_partition_log_bad_epoch_file);
    RUN(test_partition_log_replica_cannot_jump);
    RUN(test_partition_log_retention);
    RUN(test_partition_log_delete_records);
    RUN(test_partition_log_set_config);
    RUN(test_partition_log_truncate_to);
    RUN(test_partition_log_epochs);
    RUN(test_partition_log_offset_for_time);
    RUN(test_partition_log_scan_batches);
}
