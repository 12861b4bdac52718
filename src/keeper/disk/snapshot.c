/* snapshot.c -- see snapshot.h.
 *
 * Writing streams: the tree is walked once and encoded through a small
 * buffer straight to the sink, so a snapshot never exists whole in memory.
 * snapshot_write_file only uses malloc, write(2), fsync(2), rename(2) and
 * snprintf, none of which need a lock another thread of the parent could
 * have held at fork() (glibc's malloc is reset in the child), so a forked
 * child can write the parent's tree as it was at the fork.
 *
 * Reading maps the file and checks its frame first (size, header, the "/"
 * at the end, the Adler-32), then decodes the body against the mapped bytes:
 * every count and length is checked against what is left before the
 * checksum, so nothing is allocated beyond a small multiple of the file's
 * size, however hostile it is.
 *
 * ZooKeeper details (3.8: FileSnap, SnapStream, SerializeUtils, DataTree,
 * ReferenceCountedACLCache, DataNode):
 *  - The Adler-32 is that of a CheckedOutputStream under the whole archive,
 *    so it covers the file header too: every byte before the checksum.
 *  - The root is written with the path "" (its children as "/a", ...), and
 *    the string "/" ends the node list; "/" can never name a node.
 *  - ZooKeeper's own "/", "/zookeeper", ... carry ACL id -1, its
 *    OPEN_ACL_UNSAFE, which is not in the ACL cache; we read -1 that way.
 *  - With zookeeper.digest.enabled (the default in 3.8) ZooKeeper appends,
 *    after the checksum and "/", a ZxidDigest {long zxid, int digestVersion,
 *    long digest (a hex string when digestVersion < 2)} and a second
 *    checksum (of every byte before it) and "/". We write no digest, and
 *    ZooKeeper reads such files (it treats the EOF where the digest would be
 *    as an older snapshot). We read ZooKeeper's files with their digest
 *    section (a node migrating from ZooKeeper starts on them,
 *    docs/migrating-from-zookeeper.md): both seals are checked, the digest
 *    is skipped (ZooKeeper compares it only to find its own bugs), and any
 *    other byte after the nodes is refused.
 * Checked against Apache ZooKeeper 3.8: its SnapshotFormatter and
 * FileSnap.deserialize (which verifies the Adler-32) read our files, and
 * ours reads the files it writes (tests/integration/test_keeper_migration.py). */
#define _GNU_SOURCE   /* sync_file_range */
#include "snapshot.h"
#include "snapshot_codec.h"
#include "base/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/logging.h"
#include "base/endian.h"

enum {
    SNAP_MAGIC = 0x5A4B534E,   /* "ZKSN" */
    SNAP_VERSION = 2,
    SNAP_HEADER_LEN = 16,   /* FileHeader {int magic, int version, long dbid} */
    SNAP_SEAL_LEN = 13,     /* long checksum, then the string "/" (int 1, '/') */
    /* header, no sessions, no ACLs, the "/" ending the nodes, the seal */
    SNAP_MIN_LEN = SNAP_HEADER_LEN + 4 + 4 + 5 + SNAP_SEAL_LEN,
    STAT_PERSISTED_LEN = 6 * 8 + 3 * 4,
    SESSION_LEN = 12,    /* long id, int timeout */
    ACL_ENTRY_MIN_LEN = 12,   /* long id, int count */
    ACL_MIN_LEN = 12,    /* int perms, two string lengths */
    EMIT_BUF_LEN = 64 * 1024,
    SNAP_PATH_MAX = 4096,
};
#define SNAP_DBID ((int64_t)-1)
#define OPEN_ACL_UNSAFE_ID ((int64_t)-1)
static const char SNAP_PREFIX[] = "snapshot.";

/* ---- Adler-32 ---- */

/* zlib's adler32 takes a uInt length; feed larger ranges in slices. */
static uLong adler32_range(uLong adler, const uint8_t *p, size_t n)
{
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        adler = adler32(adler, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return adler;
}

/* ---- file names ---- */

void snapshot_path(char *out, size_t outlen, const char *dir, int64_t zxid)
{
    snprintf(out, outlen, "%s/%s%" PRIx64, dir, SNAP_PREFIX, (uint64_t)zxid);
}

void snapshot_file_path(char *out, size_t outlen, const char *dir, const snapshot_file_t *f)
{
    snprintf(out, outlen, "%s/%s%" PRIx64 "%s", dir, SNAP_PREFIX, (uint64_t)f->zxid, snapshot_codec_suffix(f->codec));
}

/* "snapshot.<hex>", then nothing or a compressed stream's suffix (".gz",
 * ".snappy": snapshot_codec.h). ZooKeeper writes the zxid lowercase and
 * unpadded; Long.parseLong also takes uppercase and leading zeros, so do
 * we. The zxid must fit a non-negative long. 0 or -1. */
static int parse_snapshot_name(const char *name, snapshot_file_t *f)
{
    size_t plen = sizeof(SNAP_PREFIX) - 1;
    if (strncmp(name, SNAP_PREFIX, plen) != 0 || name[plen] == '\0')
        return -1;
    uint64_t v = 0;
    for (const char *p = name + plen; *p; p++) {
        int digit;
        if (*p >= '0' && *p <= '9')
            digit = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            digit = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            digit = *p - 'A' + 10;
        else if (*p == '.' && p > name + plen)
            break;
        else
            return -1;
        if (v > (uint64_t)INT64_MAX >> 4)
            return -1;
        v = v << 4 | (uint64_t)digit;
    }
    int codec = snapshot_codec_of_suffix(name + plen + strspn(name + plen, "0123456789abcdefABCDEF"));
    if (v > (uint64_t)INT64_MAX || codec < 0)
        return -1;   /* ".tmp", junk */
    f->zxid = (int64_t)v;
    f->codec = (snapshot_codec_t)codec;
    return 0;
}

/* Newest first; of two with one zxid, the plain one (kipper's own) first. */
static int compare_newest_first(const void *a, const void *b)
{
    const snapshot_file_t *x = a, *y = b;
    if (x->zxid != y->zxid)
        return (x->zxid < y->zxid) - (x->zxid > y->zxid);
    return (x->codec > y->codec) - (x->codec < y->codec);
}

int snapshot_list(const char *dir, snapshot_file_t **files, size_t *count)
{
    *files = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    snapshot_file_t *list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
        snapshot_file_t f;
        if (parse_snapshot_name(de->d_name, &f) < 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            snapshot_file_t *grown = realloc(list, ncap * sizeof(*list));
            if (!grown) {
                free(list);
                closedir(d);
                errno = ENOMEM;
                return -1;
            }
            list = grown;
            cap = ncap;
        }
        list[n++] = f;
    }
    int saved = errno;
    closedir(d);
    if (saved) {
        free(list);
        errno = saved;
        return -1;
    }
    if (n > 1)
        qsort(list, n, sizeof(*list), compare_newest_first);
    *files = list;
    *count = n;
    return 0;
}

/* ---- serializing ---- */

/* Jute encoding into a fixed buffer that is handed to the sink when full;
 * big data buffers go to the sink directly. The first failure latches. */
typedef struct {
    snapshot_sink_fn sink;
    void *arg;
    uint8_t *buf;
    size_t len;
    int failed;
} emitter_t;

static void emit_flush(emitter_t *e)
{
    if (!e->failed && e->len > 0 && e->sink(e->arg, e->buf, e->len) < 0)
        e->failed = 1;
    e->len = 0;
}

static void emit_bytes(emitter_t *e, const void *p, size_t n)
{
    if (e->failed || n == 0)
        return;
    if (n > EMIT_BUF_LEN - e->len)
        emit_flush(e);
    if (n >= EMIT_BUF_LEN) {
        if (!e->failed && e->sink(e->arg, p, n) < 0)
            e->failed = 1;
        return;
    }
    memcpy(e->buf + e->len, p, n);
    e->len += n;
}

static void emit_int(emitter_t *e, int32_t v)
{
    uint8_t p[4];
    be32_put(p, (uint32_t)v);
    emit_bytes(e, p, sizeof(p));
}

static void emit_long(emitter_t *e, int64_t v)
{
    uint8_t p[8];
    be64_put(p, (uint64_t)v);
    emit_bytes(e, p, sizeof(p));
}

static void emit_buffer(emitter_t *e, const void *data, int32_t len)   /* len -1 = null */
{
    emit_int(e, len < 0 ? -1 : len);
    if (len > 0)
        emit_bytes(e, data, (size_t)len);
}

static void emit_string(emitter_t *e, const char *s)
{
    size_t n = strlen(s);
    if (n > INT32_MAX) {
        e->failed = 1;
        return;
    }
    emit_buffer(e, s, (int32_t)n);
}

static void emit_sessions(emitter_t *e, const snapshot_session_t *sessions, size_t n)
{
    emit_int(e, (int32_t)n);
    for (size_t i = 0; i < n; i++) {
        emit_long(e, sessions[i].id);
        emit_int(e, sessions[i].timeout_ms);
    }
}

/* One entry of ZooKeeper's ACL cache: {long id, vector<ACL>}. */
static int emit_acl_entry(int64_t id, const acl_list_t *acl, void *arg)
{
    emitter_t *e = arg;
    emit_long(e, id);
    emit_int(e, acl->count);
    for (int32_t i = 0; i < acl->count; i++) {
        emit_int(e, acl->items[i].perms);
        emit_string(e, acl->items[i].scheme);
        emit_string(e, acl->items[i].id);
    }
    return e->failed;
}

typedef struct {
    emitter_t *e;
    const tree_t *tree;
} node_emit_ctx_t;

/* {string path, DataNode {buffer data, long acl id, StatPersisted}} */
static int emit_node(const znode_t *n, void *arg)
{
    node_emit_ctx_t *ctx = arg;
    emitter_t *e = ctx->e;
    zstat_t st;
    tree_fill_stat_persisted(n, &st);
    int64_t acl_id = tree_acl_id(ctx->tree, n);
    if (acl_id < 0)   /* never: every ACL is interned; -1 would read back as OPEN_ACL_UNSAFE */
        e->failed = 1;
    emit_string(e, n->parent ? n->path : "");   /* the root is "" in a snapshot */
    emit_buffer(e, n->data, n->data_len);
    emit_long(e, acl_id);
    emit_long(e, st.czxid);
    emit_long(e, st.mzxid);
    emit_long(e, st.ctime);
    emit_long(e, st.mtime);
    emit_int(e, st.version);
    emit_int(e, st.cversion);
    emit_int(e, st.aversion);
    emit_long(e, st.ephemeral_owner);
    emit_long(e, st.pzxid);
    return e->failed;
}

int snapshot_serialize(const tree_t *tree, const snapshot_session_t *sessions, size_t nsessions,
                       snapshot_sink_fn sink, void *arg)
{
    size_t nacls = tree_acl_count(tree);
    if (nsessions > INT32_MAX || nacls > INT32_MAX)
        return -1;
    emitter_t e = {sink, arg, malloc(EMIT_BUF_LEN), 0, 0};
    if (!e.buf)
        return -1;
    emit_sessions(&e, sessions, nsessions);
    emit_int(&e, (int32_t)nacls);
    tree_each_acl(tree, emit_acl_entry, &e);
    node_emit_ctx_t ctx = {&e, tree};
    tree_walk(tree, emit_node, &ctx);
    emit_string(&e, "/");   /* end of the nodes */
    emit_flush(&e);
    free(e.buf);
    return e.failed ? -1 : 0;
}

/* ---- writing a file ---- */

typedef struct {
    int fd;
    uLong adler;       /* of every byte written so far */
    int err;           /* errno of a failed write */
    uint64_t written;  /* bytes so far */
    uint64_t flushed;  /* bytes whose writeback has been started */
} file_sink_t;

/* Start writeback every few MiB while writing, so the final fsync has little
 * left to do: one large fsync at the end floods the disk queue and stalls the
 * transaction log's fdatasync in the parent (seen on ext4). */
#define SNAPSHOT_WRITEBACK_STEP (8u << 20)

static int file_sink(void *arg, const void *data, size_t len)
{
    file_sink_t *f = arg;
    f->adler = adler32_range(f->adler, data, len);
    if (fs_write_all(f->fd, data, len) < 0) {
        f->err = errno;
        return -1;
    }
    f->written += len;
    if (f->written - f->flushed >= SNAPSHOT_WRITEBACK_STEP) {
        /* a hint: errors surface at the fsync that makes the file durable */
        (void)sync_file_range(f->fd, (off_t)f->flushed, (off_t)(f->written - f->flushed), SYNC_FILE_RANGE_WRITE);
        f->flushed = f->written;
    }
    return 0;
}

/* Header, body, seal; 0 or -1 (f->err says why unless memory ran out). */
static int write_contents(file_sink_t *f, const tree_t *tree, const snapshot_session_t *sessions, size_t nsessions)
{
    uint8_t header[SNAP_HEADER_LEN];
    be32_put(header, SNAP_MAGIC);
    be32_put(header + 4, SNAP_VERSION);
    be64_put(header + 8, (uint64_t)SNAP_DBID);
    if (file_sink(f, header, sizeof(header)) < 0 || snapshot_serialize(tree, sessions, nsessions, file_sink, f) < 0)
        return -1;
    uint8_t seal[SNAP_SEAL_LEN];
    be64_put(seal, (uint64_t)f->adler);
    be32_put(seal + 8, 1);
    seal[12] = '/';
    /* ZooKeeper (digest enabled) would go on here: ZxidDigest and a second seal. */
    return file_sink(f, seal, sizeof(seal));
}


int snapshot_write_file(const char *dir, int64_t zxid, const tree_t *tree, const snapshot_session_t *sessions,
                        size_t nsessions, char *err, size_t errlen)
{
    char final_path[SNAP_PATH_MAX], tmp_path[SNAP_PATH_MAX];
    int n1 = snprintf(final_path, sizeof(final_path), "%s/%s%" PRIx64, dir, SNAP_PREFIX, (uint64_t)zxid);
    int n2 = snprintf(tmp_path, sizeof(tmp_path), "%s.tmp", final_path);
    if (zxid < 0 || n1 < 0 || n2 < 0 || (size_t)n2 >= sizeof(tmp_path)) {
        snprintf(err, errlen, "cannot name a snapshot of zxid %" PRId64 " in %s", zxid, dir);
        return -1;
    }
    file_sink_t f = {open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), adler32(0L, Z_NULL, 0), 0, 0, 0};
    if (f.fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp_path, strerror(errno));
        return -1;
    }
    const char *step = NULL;
    int saved = 0;
    if (write_contents(&f, tree, sessions, nsessions) < 0) {
        step = "write";
        saved = f.err;   /* 0: out of memory */
    } else if (fsync(f.fd) < 0) {
        step = "fsync";
        saved = errno;
    }
    if (close(f.fd) < 0 && !step) {
        step = "close";
        saved = errno;
    }
    if (!step) {
        int placed = fs_rename_durable(tmp_path, final_path);
        if (placed == 0)
            return 0;
        if (placed == -2) {
            snprintf(err, errlen, "wrote %s but cannot fsync %s: %s", final_path, dir, strerror(errno));
            return -1;
        }
        step = "rename";
        saved = errno;
    }
    unlink(tmp_path);
    snprintf(err, errlen, "cannot write %s (%s): %s", final_path, step, saved ? strerror(saved) : "out of memory");
    return -1;
}

/* ---- reading ---- */

typedef struct {
    jute_in_t in;       /* over the whole file up to the checksum; pos is a file offset */
    const char *file;   /* for messages */
    int whole_file;     /* in.data is the whole file: ZooKeeper's digest section may follow the nodes */
    char *err;
    size_t errlen;
} reader_t;

static int refuse(reader_t *r, size_t offset, const char *fmt, ...) KIPPER_PRINTF(3, 4);

/* Always -1: "<file>: at offset N: <what>". */
static int refuse(reader_t *r, size_t offset, const char *fmt, ...)
{
    int n = snprintf(r->err, r->errlen, "%s: at offset %zu: ", r->file, offset);
    if (n >= 0 && (size_t)n < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* At least n more bytes before the checksum, or -1 saying what was cut. */
static int need(reader_t *r, size_t n, const char *what)
{
    size_t left = jute_remaining(&r->in);
    if (left >= n)
        return 0;
    return refuse(r, r->in.pos, "%s needs %zu bytes but only %zu are left before the checksum", what, n, left);
}

/* An int count of elements of at least min_size bytes each: 0 <= count,
 * and all of them fit in what is left (so it can size an allocation). */
static int read_count(reader_t *r, size_t min_size, const char *what, int32_t *count)
{
    size_t at = r->in.pos;
    if (need(r, 4, what) < 0)
        return -1;
    *count = jute_get_int(&r->in);
    size_t left = jute_remaining(&r->in);
    if (*count < 0)
        return refuse(r, at, "%s %" PRId32 " is negative", what, *count);
    if ((size_t)*count > left / min_size)
        return refuse(r, at, "%s %" PRId32 " cannot fit in the %zu bytes left", what, *count, left);
    return 0;
}

/* A jute buffer/string as a view into the file; *len -1 for null. */
static int read_bytes(reader_t *r, const char *what, const uint8_t **p, int32_t *len)
{
    size_t at = r->in.pos;
    if (need(r, 4, what) < 0)
        return -1;
    *len = jute_get_int(&r->in);
    *p = NULL;
    if (*len == -1)
        return 0;
    if (*len < 0)
        return refuse(r, at, "%s has negative length %" PRId32, what, *len);
    if (need(r, (size_t)*len, what) < 0)
        return -1;
    *p = r->in.data + r->in.pos;
    r->in.pos += (size_t)*len;
    return 0;
}

/* A non-null string without NUL bytes, copied (malloc). */
static char *read_cstring(reader_t *r, const char *what)
{
    size_t at = r->in.pos;
    const uint8_t *p;
    int32_t len;
    if (read_bytes(r, what, &p, &len) < 0)
        return NULL;
    if (len < 0 || memchr(p, 0, (size_t)len)) {
        refuse(r, at, "%s is %s", what, len < 0 ? "null" : "holding a NUL byte");
        return NULL;
    }
    char *s = malloc((size_t)len + 1);
    if (!s) {
        refuse(r, at, "out of memory");
        return NULL;
    }
    memcpy(s, p, (size_t)len);
    s[len] = '\0';
    return s;
}

/* Size, header, the "/" at the end and the checksum; then point the reader
 * at the body. */
static int check_frame(reader_t *r, const uint8_t *p, size_t size)
{
    jute_in_init(&r->in, p, 0);
    if (size < SNAP_MIN_LEN)
        return refuse(r, size, "the file ends after %zu bytes; the smallest snapshot has %d", size, SNAP_MIN_LEN);
    if (be32_get(p) != SNAP_MAGIC)
        return refuse(r, 0, "magic is 0x%08" PRIx32 ", not 0x%08x (\"ZKSN\")", be32_get(p), SNAP_MAGIC);
    if (be32_get(p + 4) != SNAP_VERSION)
        return refuse(r, 4, "version is %" PRId32 ", not %d", (int32_t)be32_get(p + 4), SNAP_VERSION);
    if ((int64_t)be64_get(p + 8) != SNAP_DBID)
        return refuse(r, 8, "dbid is %" PRId64 ", not -1", (int64_t)be64_get(p + 8));
    if (be32_get(p + size - 5) != 1 || p[size - 1] != '/')
        return refuse(r, size - 5, "the file does not end with the string \"/\": truncated, or not a snapshot");
    uint64_t stored = be64_get(p + size - SNAP_SEAL_LEN);
    uLong computed = adler32_range(adler32(0L, Z_NULL, 0), p, size - SNAP_SEAL_LEN);
    if (stored != (uint64_t)computed)
        return refuse(r, size - SNAP_SEAL_LEN, "checksum is 0x%" PRIx64 " but the %zu bytes before it sum to 0x%lx",
                      stored, size - SNAP_SEAL_LEN, (unsigned long)computed);
    jute_in_init(&r->in, p, size - SNAP_SEAL_LEN);
    r->in.pos = SNAP_HEADER_LEN;
    return 0;
}

static int compare_ids(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A session twice would make the session tracker's restore ambiguous. */
static int check_unique_sessions(reader_t *r, size_t at, const snapshot_session_t *s, size_t n)
{
    if (n < 2)
        return 0;
    int64_t *ids = malloc(n * sizeof(*ids));
    if (!ids)
        return refuse(r, at, "out of memory");
    for (size_t i = 0; i < n; i++)
        ids[i] = s[i].id;
    qsort(ids, n, sizeof(*ids), compare_ids);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (ids[i] == ids[i - 1])
            rc = refuse(r, at, "session 0x%" PRIx64 " is listed twice", (uint64_t)ids[i]);
    free(ids);
    return rc;
}

static int read_sessions(reader_t *r, snapshot_session_t **out, size_t *nout)
{
    size_t at = r->in.pos;
    int32_t n;
    if (read_count(r, SESSION_LEN, "session count", &n) < 0)
        return -1;
    snapshot_session_t *s = n ? malloc((size_t)n * sizeof(*s)) : NULL;
    if (n && !s)
        return refuse(r, at, "out of memory for %" PRId32 " sessions", n);
    for (int32_t i = 0; i < n; i++) {
        size_t sat = r->in.pos;
        s[i].id = jute_get_long(&r->in);   /* read_count made sure all of them are there */
        s[i].timeout_ms = jute_get_int(&r->in);
        if (s[i].timeout_ms < 0) {
            refuse(r, sat, "session 0x%" PRIx64 " has negative timeout %" PRId32, (uint64_t)s[i].id,
                   s[i].timeout_ms);
            free(s);
            return -1;
        }
    }
    if (check_unique_sessions(r, at, s, (size_t)n) < 0) {
        free(s);
        return -1;
    }
    *out = s;
    *nout = (size_t)n;
    return 0;
}

/* ---- the ACL cache as read ---- */

typedef struct {
    int64_t id;
    acl_list_t acl;
} acl_map_entry_t;

typedef struct {
    acl_map_entry_t *items;   /* sorted by id once read */
    size_t count;
} acl_map_t;

static void acl_map_free(acl_map_t *m)
{
    for (size_t i = 0; i < m->count; i++)
        acl_list_free(&m->items[i].acl);
    free(m->items);
    m->items = NULL;
    m->count = 0;
}

static int read_acl_list(reader_t *r, acl_list_t *out)
{
    int32_t n;
    out->items = NULL;
    out->count = 0;
    if (read_count(r, ACL_MIN_LEN, "ACL count", &n) < 0)
        return -1;
    if (n == 0)
        return 0;
    if (!(out->items = calloc((size_t)n, sizeof(acl_t))))
        return refuse(r, r->in.pos, "out of memory");
    for (int32_t i = 0; i < n; i++) {
        acl_t *a = &out->items[i];
        out->count = i + 1;
        if (need(r, 4, "ACL perms") < 0)
            return -1;
        a->perms = jute_get_int(&r->in);
        if (!(a->scheme = read_cstring(r, "ACL scheme")) || !(a->id = read_cstring(r, "ACL id")))
            return -1;
    }
    return 0;
}

static int compare_acl_entries(const void *a, const void *b)
{
    return compare_ids(&((const acl_map_entry_t *)a)->id, &((const acl_map_entry_t *)b)->id);
}

/* ZooKeeper's ReferenceCountedACLCache.serialize: {int count, {long id, vector<ACL>}...}. */
static int read_acl_map(reader_t *r, acl_map_t *m)
{
    size_t at = r->in.pos;
    int32_t n;
    m->items = NULL;
    m->count = 0;
    if (read_count(r, ACL_ENTRY_MIN_LEN, "ACL cache count", &n) < 0)
        return -1;
    if (n > 0 && !(m->items = calloc((size_t)n, sizeof(*m->items))))
        return refuse(r, at, "out of memory for %" PRId32 " ACLs", n);
    for (int32_t i = 0; i < n; i++) {
        acl_map_entry_t *e = &m->items[i];
        size_t eat = r->in.pos;
        m->count = (size_t)i + 1;
        e->id = jute_get_long(&r->in);   /* read_count made sure 8 bytes are there */
        if (read_acl_list(r, &e->acl) < 0)
            return -1;   /* the caller frees m */
        if (e->id == OPEN_ACL_UNSAFE_ID)
            return refuse(r, eat, "the ACL cache uses id -1, which is reserved for OPEN_ACL_UNSAFE");
    }
    if (m->count > 1)
        qsort(m->items, m->count, sizeof(*m->items), compare_acl_entries);
    for (size_t i = 1; i < m->count; i++)
        if (m->items[i].id == m->items[i - 1].id)
            return refuse(r, at, "the ACL cache holds id %" PRId64 " twice", m->items[i].id);
    return 0;
}

static const acl_list_t *acl_map_find(const acl_map_t *m, int64_t id, const acl_list_t *open_acl)
{
    if (id == OPEN_ACL_UNSAFE_ID)
        return open_acl;
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->items[mid].id == id)
            return &m->items[mid].acl;
        if (m->items[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- nodes ---- */

typedef struct {
    const uint8_t *path;   /* a view into the file */
    int32_t path_len;
    const uint8_t *data;
    int32_t data_len;
    int64_t acl_id;
    zstat_t stat;
} node_record_t;

/* The DataNode after a path: {buffer data, long acl, StatPersisted}. */
static int read_node_body(reader_t *r, node_record_t *rec)
{
    if (read_bytes(r, "node data", &rec->data, &rec->data_len) < 0 || need(r, 8 + STAT_PERSISTED_LEN, "node stat") < 0)
        return -1;
    rec->acl_id = jute_get_long(&r->in);
    jute_get_stat_persisted(&r->in, &rec->stat);
    return 0;
}

/* Nodes up to the "/" that ends them, into tree. */
static int read_nodes(reader_t *r, const acl_map_t *acls, tree_t *tree)
{
    char world[] = "world", anyone[] = "anyone";   /* OPEN_ACL_UNSAFE, for id -1 */
    acl_t open_item = {PERM_ALL, world, anyone};
    acl_list_t open_acl = {&open_item, 1};
    char why[512];
    for (size_t count = 0;; count++) {
        size_t at = r->in.pos;
        node_record_t rec;
        if (read_bytes(r, "node path", &rec.path, &rec.path_len) < 0)
            return -1;
        if (rec.path_len == 1 && rec.path[0] == '/')
            return 0;
        if (rec.path_len < 0)
            return refuse(r, at, "node path is null");
        if (memchr(rec.path, 0, (size_t)rec.path_len))
            return refuse(r, at, "node path holds a NUL byte");
        if (count == 0 && rec.path_len != 0)
            return refuse(r, at, "the first node is \"%.*s\", not the root (\"\")", (int)rec.path_len, rec.path);
        if (count > 0 && (rec.path_len == 0 || rec.path[0] != '/'))
            return refuse(r, at, "node path \"%.*s\" does not start with '/'", (int)rec.path_len, rec.path);
        if (read_node_body(r, &rec) < 0)
            return -1;
        const acl_list_t *acl = acl_map_find(acls, rec.acl_id, &open_acl);
        if (!acl)
            return refuse(r, at, "node \"%.*s\" uses ACL id %" PRId64 ", which the ACL cache does not hold",
                          (int)rec.path_len, rec.path, rec.acl_id);
        const char *path = count == 0 ? "/" : (const char *)rec.path;
        size_t path_len = count == 0 ? 1 : (size_t)rec.path_len;
        if (tree_restore_node(tree, path, path_len, rec.data, rec.data_len, acl, &rec.stat, why, sizeof(why)) < 0)
            return refuse(r, at, "%s", why);
    }
}

/* What ZooKeeper 3.8 writes after the nodes of a snapshot file with its
 * digest on: the first seal (the Adler-32 of every byte before it, then "/"),
 * then a ZxidDigest; check_frame has checked the second seal after it. */
static int read_digest_section(reader_t *r)
{
    size_t at = r->in.pos, left = jute_remaining(&r->in);
    if (left < SNAP_SEAL_LEN + 12)
        return refuse(r, at, "%zu stray bytes between the end of the nodes and the checksum", left);
    uint64_t stored = be64_get(r->in.data + at);
    uLong computed = adler32_range(adler32(0L, Z_NULL, 0), r->in.data, at);
    if (stored != (uint64_t)computed)
        return refuse(r, at, "%zu bytes after the nodes, and the checksum they begin with is 0x%" PRIx64
                      " but the %zu bytes before it sum to 0x%lx", left, stored, at, (unsigned long)computed);
    if (be32_get(r->in.data + at + 8) != 1 || r->in.data[at + 12] != '/')
        return refuse(r, at + 8, "the checksum after the nodes is not followed by the string \"/\"");
    r->in.pos += SNAP_SEAL_LEN;
    (void)jute_get_long(&r->in);   /* the zxid the digest was taken at */
    int32_t version = jute_get_int(&r->in);
    if (version >= 2) {
        if (need(r, 8, "the digest") < 0)
            return -1;
        (void)jute_get_long(&r->in);
    } else {
        const uint8_t *p;
        int32_t len;
        if (read_bytes(r, "the digest (a string before digest version 2)", &p, &len) < 0)
            return -1;
    }
    if (jute_remaining(&r->in) > 0)
        return refuse(r, r->in.pos, "%zu stray bytes between the digest and the checksum", jute_remaining(&r->in));
    return 0;
}

/* The ACL cache, the nodes, and nothing after them but the checksum (or, in
 * a file, ZooKeeper's digest section). */
static int read_tree(reader_t *r, watch_manager_t *wm, tree_t **out)
{
    acl_map_t acls;
    int rc = read_acl_map(r, &acls);
    tree_t *tree = NULL;
    if (rc == 0 && !(tree = tree_create_empty(wm)))
        rc = refuse(r, r->in.pos, "out of memory");
    if (rc == 0)
        rc = read_nodes(r, &acls, tree);
    if (rc == 0 && jute_remaining(&r->in) > 0)
        rc = r->whole_file ? read_digest_section(r)
                           : refuse(r, r->in.pos, "%zu stray bytes between the end of the nodes and the checksum",
                                    jute_remaining(&r->in));
    char why[256];
    if (rc == 0 && tree_restore_finish(tree, why, sizeof(why)) < 0)
        rc = refuse(r, r->in.pos, "%s", why);
    acl_map_free(&acls);
    if (rc < 0) {
        tree_destroy(tree);
        return -1;
    }
    *out = tree;
    return 0;
}

typedef struct {
    const uint8_t *data;
    size_t size;
} mapped_file_t;

/* The whole file, read-only. The mapping is ours alone: snapshots are not
 * changed once renamed into place, so nothing can shrink it under us. */
static int map_file(const char *path, mapped_file_t *m, char *err, size_t errlen)
{
    m->data = NULL;
    m->size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if ((uint64_t)st.st_size > SIZE_MAX)
        why = "too big to map";
    if (!why && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            why = strerror(errno);
        } else {
            m->data = p;
            m->size = (size_t)st.st_size;
        }
    }
    close(fd);
    if (why) {
        snprintf(err, errlen, "cannot read %s: %s", path, why);
        return -1;
    }
    return 0;
}

static void unmap_file(mapped_file_t *m)
{
    if (m->data)
        munmap((void *)m->data, m->size);
}

int snapshot_load_file(const char *path, watch_manager_t *wm, tree_t **tree_out, snapshot_session_t **sessions,
                       size_t *nsessions, int64_t *zxid, char *err, size_t errlen)
{
    *tree_out = NULL;
    *sessions = NULL;
    *nsessions = 0;
    const char *slash = strrchr(path, '/');
    snapshot_file_t name;
    if (parse_snapshot_name(slash ? slash + 1 : path, &name) < 0) {
        snprintf(err, errlen, "%s: not a snapshot name (snapshot.<zxid in hex>, then .gz, .snappy or nothing)", path);
        return -1;
    }
    int64_t name_zxid = name.zxid;
    mapped_file_t m;
    if (map_file(path, &m, err, errlen) < 0)
        return -1;
    const uint8_t *data = m.data;
    size_t size = m.size;
    uint8_t *decompressed = NULL;
    if (name.codec != SNAPSHOT_PLAIN) {
        char why[256];
        int bad = snapshot_decompress(name.codec, m.data, m.size, SNAPSHOT_MAX_DECOMPRESSED, &decompressed, &size,
                                      why, sizeof(why));
        unmap_file(&m);
        m.data = NULL;   /* unmapped: not again below (decompressed may be NULL, for nothing) */
        m.size = 0;
        if (bad) {
            snprintf(err, errlen, "%s: %s", path, why);
            return -1;
        }
        data = decompressed;
    }
    reader_t r = {.file = path, .err = err, .errlen = errlen, .whole_file = 1};
    snapshot_session_t *s = NULL;
    size_t ns = 0;
    tree_t *tree = NULL;
    int rc = check_frame(&r, data, size);
    if (rc == 0)
        rc = read_sessions(&r, &s, &ns);
    if (rc == 0)
        rc = read_tree(&r, wm, &tree);
    free(decompressed);
    unmap_file(&m);
    if (rc < 0) {
        free(s);
        return -1;
    }
    tree_set_last_zxid(tree, name_zxid);
    *tree_out = tree;
    *sessions = s;
    *nsessions = ns;
    *zxid = name_zxid;
    return 0;
}

int snapshot_load_buffer(const uint8_t *data, size_t len, watch_manager_t *wm, tree_t **tree_out,
                         snapshot_session_t **sessions, size_t *nsessions, char *err, size_t errlen)
{
    *tree_out = NULL;
    *sessions = NULL;
    *nsessions = 0;
    reader_t r = {.file = "snapshot from the leader", .err = err, .errlen = errlen};
    jute_in_init(&r.in, data, len);
    snapshot_session_t *s = NULL;
    size_t ns = 0;
    tree_t *tree = NULL;
    int rc = read_sessions(&r, &s, &ns);
    if (rc == 0)
        rc = read_tree(&r, wm, &tree);
    if (rc < 0) {
        free(s);
        return -1;
    }
    *tree_out = tree;
    *sessions = s;
    *nsessions = ns;
    return 0;
}
