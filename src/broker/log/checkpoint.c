/* checkpoint.c -- Kafka's text checkpoint files, written atomically and read
 * strictly: "0", a count, then exactly that many lines of fields separated
 * by single spaces. Anything else is reported, never guessed at. */
#include "checkpoint.h"
#include "base/fsutil.h"
#include "base/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FIELDS 3

/* Through base's atomic write: readers see the old or the new file. */
static int write_file_atomic(const char *path, const void *data, size_t len)
{
    if (fs_write_atomic(path, data, len) == 0)
        return PLOG_OK;
    return errno == ENAMETOOLONG ? PLOG_ERR_INVALID : PLOG_ERR_IO;
}

static void appendf(buf_t *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

int offset_checkpoint_write(const char *path, const offset_checkpoint_entry_t *e, size_t n)
{
    buf_t b;
    buf_init(&b);
    appendf(&b, "0\n%zu\n", n);
    for (size_t i = 0; i < n; i++)
        appendf(&b, "%s %" PRId32 " %" PRId64 "\n", e[i].topic, e[i].partition, e[i].offset);
    int rc = write_file_atomic(path, b.data, b.len);
    buf_free(&b);
    return rc;
}

int epoch_checkpoint_write(const char *path, const epoch_entry_t *e, size_t n)
{
    buf_t b;
    buf_init(&b);
    appendf(&b, "0\n%zu\n", n);
    for (size_t i = 0; i < n; i++)
        appendf(&b, "%" PRId32 " %" PRId64 "\n", e[i].epoch, e[i].start_offset);
    int rc = write_file_atomic(path, b.data, b.len);
    buf_free(&b);
    return rc;
}

/* ---- Reading ------------------------------------------------------------ */

typedef struct {
    char *data;
    size_t len, pos;
    int lineno;
    char *err;
    size_t errlen;
    const char *path;
} reader_t;

static int fail(reader_t *r, const char *fmt, ...)
{
    if (r->err && r->errlen) {
        char why[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        snprintf(r->err, r->errlen, "%s: line %d: %s", r->path, r->lineno, why);
    }
    return PLOG_ERR_INVALID;
}

/* Load the whole file, bounded, NUL-terminated. */
static int load_file(const char *path, reader_t *r)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? PLOG_ERR_NOT_FOUND : PLOG_ERR_IO;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size > CHECKPOINT_MAX_BYTES) {
        close(fd);
        return fail(r, "unreadable or larger than %d bytes", CHECKPOINT_MAX_BYTES);
    }
    r->data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (r->data && got < (size_t)st.st_size) {
        ssize_t n = read(fd, r->data + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!r->data)
        return PLOG_ERR_IO;
    r->data[got] = '\0';
    r->len = got;
    return PLOG_OK;
}

/* Next line split on single spaces into exactly nfields fields (NUL-terminated
 * in place). A final line without '\n' is accepted. */
static int next_line(reader_t *r, char **fields, int nfields)
{
    r->lineno++;
    if (r->pos >= r->len)
        return fail(r, "unexpected end of file");
    char *line = r->data + r->pos;
    char *nl = memchr(line, '\n', r->len - r->pos);
    size_t n = nl ? (size_t)(nl - line) : r->len - r->pos;
    r->pos += n + (nl ? 1 : 0);
    line[n] = '\0';
    if (strlen(line) != n)
        return fail(r, "NUL byte in line");
    int k = 0;
    for (char *p = line;; k++) {
        char *sp = strchr(p, ' ');
        if (k < nfields)
            fields[k] = p;
        if (!sp)
            break;
        *sp = '\0';
        p = sp + 1;
    }
    if (k + 1 != nfields)
        return fail(r, "expected %d space-separated field(s)", nfields);
    return PLOG_OK;
}

/* Strict decimal integer within [min, max]: optional '-', digits only. */
static int parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
    const char *p = s + (*s == '-');
    if (*p == '\0' || strlen(p) > 19)
        return -1;
    for (const char *c = p; *c; c++)
        if (*c < '0' || *c > '9')
            return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int valid_topic(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > TOPIC_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* Version and count lines; *count bounded by what the file could hold. */
static int read_preamble(reader_t *r, size_t *count)
{
    char *f[1];
    int64_t v;
    if (next_line(r, f, 1) != PLOG_OK)
        return PLOG_ERR_INVALID;
    if (parse_int(f[0], 0, 0, &v) != 0)
        return fail(r, "unsupported version '%s'", f[0]);
    if (next_line(r, f, 1) != PLOG_OK)
        return PLOG_ERR_INVALID;
    if (parse_int(f[0], 0, (int64_t)r->len, &v) != 0)
        return fail(r, "bad entry count '%s'", f[0]);
    *count = (size_t)v;
    return PLOG_OK;
}

/* Nothing but an optional final newline may follow the entries. */
static int check_trailer(reader_t *r)
{
    if (r->pos < r->len) {
        r->lineno++;
        return fail(r, "more lines than the count says");
    }
    return PLOG_OK;
}

/* One entry line, already split into its fields, into entries[i]. */
typedef int (*entry_parser_t)(reader_t *r, char **f, void *entries, size_t i);

/* The frame both checkpoint kinds share: file, preamble, count lines of
 * nfields fields each, nothing after. *out is malloc'd. */
static int read_checkpoint(const char *path, size_t entry_size, int nfields, entry_parser_t parse, void **out,
                           size_t *n, char *err, size_t errlen)
{
    reader_t r = {.err = err, .errlen = errlen, .path = path};
    *out = NULL;
    *n = 0;
    int rc = load_file(path, &r);
    size_t count = 0;
    if (rc == PLOG_OK)
        rc = read_preamble(&r, &count);
    void *e = NULL;
    if (rc == PLOG_OK && count > 0 && !(e = calloc(count, entry_size)))
        rc = PLOG_ERR_IO;
    for (size_t i = 0; rc == PLOG_OK && i < count; i++) {
        char *f[3];
        if ((rc = next_line(&r, f, nfields)) == PLOG_OK)
            rc = parse(&r, f, e, i);
    }
    if (rc == PLOG_OK)
        rc = check_trailer(&r);
    free(r.data);
    if (rc != PLOG_OK) {
        free(e);
        return rc;
    }
    *out = e;
    *n = count;
    return PLOG_OK;
}

static int parse_offset_entry(reader_t *r, char **f, void *entries, size_t i)
{
    offset_checkpoint_entry_t *e = (offset_checkpoint_entry_t *)entries + i;
    int64_t part, off;
    if (!valid_topic(f[0]))
        return fail(r, "bad topic name");
    if (parse_int(f[1], 0, INT32_MAX, &part) != 0)
        return fail(r, "bad partition '%s'", f[1]);
    if (parse_int(f[2], 0, INT64_MAX, &off) != 0)
        return fail(r, "bad offset '%s'", f[2]);
    snprintf(e->topic, sizeof(e->topic), "%s", f[0]);
    e->partition = (int32_t)part;
    e->offset = off;
    return PLOG_OK;
}

int offset_checkpoint_read(const char *path, offset_checkpoint_entry_t **out, size_t *n,
                           char *err, size_t errlen)
{
    void *e;
    int rc = read_checkpoint(path, sizeof(**out), 3, parse_offset_entry, &e, n, err, errlen);
    *out = e;
    return rc;
}

static int parse_epoch_entry(reader_t *r, char **f, void *entries, size_t i)
{
    epoch_entry_t *e = entries;
    int64_t ep, off;
    if (parse_int(f[0], 0, INT32_MAX, &ep) != 0)
        return fail(r, "bad epoch '%s'", f[0]);
    if (parse_int(f[1], 0, INT64_MAX, &off) != 0)
        return fail(r, "bad start offset '%s'", f[1]);
    if (i > 0 && (ep <= e[i - 1].epoch || off < e[i - 1].start_offset))
        return fail(r, "epochs and offsets must increase");
    e[i].epoch = (int32_t)ep;
    e[i].start_offset = off;
    return PLOG_OK;
}

int epoch_checkpoint_read(const char *path, epoch_entry_t **out, size_t *n, char *err,
                          size_t errlen)
{
    void *e;
    int rc = read_checkpoint(path, sizeof(**out), 2, parse_epoch_entry, &e, n, err, errlen);
    *out = e;
    return rc;
}
