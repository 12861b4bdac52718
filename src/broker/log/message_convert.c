/* message_convert.c -- legacy message sets (magic 0/1) into one v2 batch.
 *
 * The entries are walked once; each plain message becomes a v2 record
 * appended to the output at once, each compressed wrapper is decompressed
 * (compression.h) and its inner set walked the same way, one level deep. */
#include "message_convert.h"

#include "base/endian.h"
#include "base/alloc.h"
#include "base/logging.h"   /* KIPPER_PRINTF */
#include "base/varint.h"
#include "compression.h"
#include "record_batch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* LegacyRecord's layout, from the start of an entry. */
#define LEG_OFF_SIZE 8
#define LEG_OFF_CRC 12
#define LEG_OFF_MAGIC 16
#define LEG_OFF_ATTRIBUTES 17
#define LEG_OFF_TIMESTAMP 18
#define LEG_LOG_OVERHEAD 12
/* size's least: crc, magic, attributes, [timestamp], two lengths. */
#define LEG_MIN_SIZE_V0 14
#define LEG_MIN_SIZE_V1 22
#define LEG_ATTR_CODEC 0x07
#define LEG_ATTR_LOG_APPEND_TIME 0x08

#define NO_TIMESTAMP (-1)

typedef struct {
    uint8_t *out; /* the batch being built: header first, records after */
    size_t len, cap;
    size_t max_bytes;
    int32_t count;
    int64_t first_ts, max_ts;
    int64_t last_inner_offset; /* of the wrapper being walked */
    char *err;
    size_t errlen;
} conv_t;

/* One legacy message, parsed. */
typedef struct {
    int64_t offset;
    int magic;
    int attributes;
    int64_t timestamp;
    const uint8_t *key, *value; /* NULL: null */
    int32_t key_len, value_len; /* -1: null */
} legacy_msg_t;

static int fail(conv_t *c, int code, const char *fmt, ...) KIPPER_PRINTF(3, 4);

static int fail(conv_t *c, int code, const char *fmt, ...)
{
    if (c->err && c->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int message_set_is_legacy(const uint8_t *p, size_t len)
{
    return len > LEG_OFF_MAGIC && (p[LEG_OFF_MAGIC] == 0 || p[LEG_OFF_MAGIC] == 1);
}

/* ---- The output batch ------------------------------------------------------ */

/* Append m as the next v2 record. */
static int emit(conv_t *c, const legacy_msg_t *m)
{
    if (c->count >= MSGCONV_MAX_RECORDS)
        return fail(c, MSGCONV_ERR_TOO_LARGE, "more than %d messages", MSGCONV_MAX_RECORDS);
    if (c->count == 0) {
        c->first_ts = c->max_ts = m->timestamp;
    } else if (m->timestamp > c->max_ts) {
        c->max_ts = m->timestamp;
    }
    /* Deltas wrap as Java's long arithmetic does. */
    int64_t ts_delta = (int64_t)((uint64_t)m->timestamp - (uint64_t)c->first_ts);
    size_t key = m->key_len > 0 ? (size_t)m->key_len : 0;
    size_t value = m->value_len > 0 ? (size_t)m->value_len : 0;
    size_t body = 1 + varlong_size(ts_delta) + varlong_size(c->count) + varlong_size(m->key_len) +
                  key + varlong_size(m->value_len) + value + 1;
    size_t total = varlong_size((int64_t)body) + body;
    if (body > INT32_MAX || total > c->max_bytes || c->len > c->max_bytes - total)
        return fail(c, MSGCONV_ERR_TOO_LARGE, "the converted batch exceeds %zu bytes",
                    c->max_bytes);
    if (total > c->cap - c->len) {
        size_t cap = c->cap;
        while (cap - c->len < total)
            cap = cap > c->max_bytes / 2 ? c->len + total : cap * 2;
        c->out = xrealloc(c->out, cap);
        c->cap = cap;
    }
    uint8_t *p = c->out + c->len;
    p += varlong_put(p, (int64_t)body);
    *p++ = 0; /* attributes */
    p += varlong_put(p, ts_delta);
    p += varlong_put(p, c->count);
    p += varlong_put(p, m->key_len);
    if (key)
        memcpy(p, m->key, key);
    p += key;
    p += varlong_put(p, m->value_len);
    if (value)
        memcpy(p, m->value, value);
    p += value;
    *p++ = 0; /* no headers */
    c->len = (size_t)(p - c->out);
    c->count++;
    return MSGCONV_OK;
}

static void finish(conv_t *c)
{
    uint8_t *b = c->out;
    be64_put(b + BATCH_OFF_BASE_OFFSET, 0);
    be32_put(b + BATCH_OFF_LENGTH, (uint32_t)(c->len - BATCH_LOG_OVERHEAD));
    be32_put(b + BATCH_OFF_LEADER_EPOCH, (uint32_t)-1);
    b[BATCH_OFF_MAGIC] = 2;
    b[BATCH_OFF_ATTRIBUTES] = 0;
    b[BATCH_OFF_ATTRIBUTES + 1] = 0;
    be32_put(b + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)(c->count - 1));
    be64_put(b + BATCH_OFF_FIRST_TIMESTAMP, (uint64_t)c->first_ts);
    be64_put(b + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)c->max_ts);
    be64_put(b + BATCH_OFF_PRODUCER_ID, (uint64_t)(int64_t)-1);
    b[BATCH_OFF_PRODUCER_EPOCH] = 0xff;
    b[BATCH_OFF_PRODUCER_EPOCH + 1] = 0xff;
    be32_put(b + BATCH_OFF_BASE_SEQUENCE, (uint32_t)-1);
    be32_put(b + BATCH_OFF_RECORD_COUNT, (uint32_t)c->count);
    be32_put(b + BATCH_OFF_CRC, record_batch_compute_crc(b, c->len));
}

/* ---- Legacy entries -------------------------------------------------------- */

/* A bytes field (int32 length, -1 null) at *pos of the message body. */
static int read_bytes(conv_t *c, const uint8_t *body, size_t size, size_t *pos, const char *what,
                      const uint8_t **data, int32_t *len)
{
    if (size - *pos < 4)
        return fail(c, MSGCONV_ERR_CORRUPT, "message %d: no room for its %s length",
                    (int)c->count, what);
    int32_t n = (int32_t)be32_get(body + *pos);
    *pos += 4;
    if (n < -1 || (n > 0 && (size_t)n > size - *pos))
        return fail(c, MSGCONV_ERR_CORRUPT, "message %d: %s length %d, %zu bytes left",
                    (int)c->count, what, (int)n, size - *pos);
    *len = n;
    *data = n >= 0 ? body + *pos : NULL;
    if (n > 0)
        *pos += (size_t)n;
    return MSGCONV_OK;
}

/* The entry at p (avail bytes there): its fields into m, its total size
 * into *entry_size. Checks the size, the CRC-32 and the exact fit of key
 * and value. */
static int parse_entry(conv_t *c, const uint8_t *p, size_t avail, legacy_msg_t *m,
                       size_t *entry_size)
{
    if (avail < LEG_LOG_OVERHEAD)
        return fail(c, MSGCONV_ERR_CORRUPT, "%zu stray bytes where a message should start", avail);
    int32_t size = (int32_t)be32_get(p + LEG_OFF_SIZE);
    if (size < LEG_MIN_SIZE_V0)
        return fail(c, MSGCONV_ERR_CORRUPT, "message size %d is below the least (%d)", (int)size,
                    LEG_MIN_SIZE_V0);
    if ((size_t)size > avail - LEG_LOG_OVERHEAD)
        return fail(c, MSGCONV_ERR_CORRUPT, "message of %d bytes, only %zu left", (int)size,
                    avail - LEG_LOG_OVERHEAD);
    m->offset = (int64_t)be64_get(p);
    m->magic = p[LEG_OFF_MAGIC];
    if (m->magic > 1)
        return fail(c, m->magic == 2 ? MSGCONV_ERR_INVALID : MSGCONV_ERR_CORRUPT,
                    "message magic %d among legacy messages", m->magic);
    if (m->magic == 1 && size < LEG_MIN_SIZE_V1)
        return fail(c, MSGCONV_ERR_CORRUPT, "magic 1 message size %d is below the least (%d)",
                    (int)size, LEG_MIN_SIZE_V1);
    const uint8_t *covered = p + LEG_OFF_MAGIC;
    size_t covered_len = (size_t)size - 4;
    uint32_t want = be32_get(p + LEG_OFF_CRC);
    uint32_t got = (uint32_t)crc32(0L, covered, (uInt)covered_len);
    if (got != want)
        return fail(c, MSGCONV_ERR_CORRUPT, "message CRC-32 %08x, computed %08x", (unsigned)want,
                    (unsigned)got);
    m->attributes = p[LEG_OFF_ATTRIBUTES];
    size_t pos = 2; /* within covered: after magic and attributes */
    m->timestamp = NO_TIMESTAMP;
    if (m->magic == 1) {
        m->timestamp = (int64_t)be64_get(covered + pos);
        pos += 8;
    }
    int rc;
    if ((rc = read_bytes(c, covered, covered_len, &pos, "key", &m->key, &m->key_len)) != 0 ||
        (rc = read_bytes(c, covered, covered_len, &pos, "value", &m->value, &m->value_len)) != 0)
        return rc;
    if (pos != covered_len)
        return fail(c, MSGCONV_ERR_CORRUPT, "message %d: %zu bytes after its value", (int)c->count,
                    covered_len - pos);
    *entry_size = LEG_LOG_OVERHEAD + (size_t)size;
    return MSGCONV_OK;
}

/* ---- LZ4 frames of magic 0 ------------------------------------------------- */

#define XXH_P1 2654435761U
#define XXH_P2 2246822519U
#define XXH_P3 3266489917U
#define XXH_P4 668265263U
#define XXH_P5 374761393U

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t xxh32_round(uint32_t acc, uint32_t in)
{
    return rotl32(acc + in * XXH_P2, 13) * XXH_P1;
}

/* XXH32 (seed 0), which the LZ4 frame header checksum is the second byte of. */
static uint32_t xxh32(const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len;
    uint32_t h;
    if (len >= 16) {
        uint32_t v1 = XXH_P1 + XXH_P2, v2 = XXH_P2, v3 = 0, v4 = 0u - XXH_P1;
        for (; end - p >= 16; p += 16) {
            v1 = xxh32_round(v1, get_le32(p));
            v2 = xxh32_round(v2, get_le32(p + 4));
            v3 = xxh32_round(v3, get_le32(p + 8));
            v4 = xxh32_round(v4, get_le32(p + 12));
        }
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = XXH_P5;
    }
    h += (uint32_t)len;
    for (; end - p >= 4; p += 4)
        h = rotl32(h + get_le32(p) * XXH_P3, 17) * XXH_P4;
    for (; p < end; p++)
        h = rotl32(h + *p * XXH_P5, 11) * XXH_P1;
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    h ^= h >> 16;
    return h;
}

/* Kafka 0.8 wrote the first frame's header checksum over the magic number
 * too, and KafkaLZ4BlockInputStream skips the check for magic 0: set the
 * right checksum in a copy so liblz4 reads it. NULL when the frame is too
 * short to have a header (liblz4 then reports it). */
static uint8_t *lz4_fix_header(const uint8_t *in, size_t n)
{
    static const uint8_t magic[4] = {0x04, 0x22, 0x4d, 0x18};
    if (n < 7 || memcmp(in, magic, 4) != 0)
        return NULL;
    size_t hc = (in[4] & 0x08) ? 14 : 6; /* FLG, BD, [content size] */
    if (n <= hc)
        return NULL;
    uint8_t *copy = xmalloc(n);
    memcpy(copy, in, n);
    copy[hc] = (uint8_t)(xxh32(copy + 4, hc - 4) >> 8);
    return copy;
}

/* ---- The walk --------------------------------------------------------------- */

static int walk(conv_t *c, const uint8_t *p, size_t len, const legacy_msg_t *wrapper);

static int unwrap(conv_t *c, const legacy_msg_t *w)
{
    int codec = w->attributes & LEG_ATTR_CODEC;
    if (codec > COMPRESSION_LZ4)
        return fail(c, MSGCONV_ERR_UNSUPPORTED,
                    "compression codec %d is not supported with message format %d", codec,
                    w->magic);
    if (w->value_len < 0)
        return fail(c, MSGCONV_ERR_INVALID, "compressed message %d has a null value",
                    (int)c->count);
    const uint8_t *in = w->value;
    uint8_t *fixed = NULL;
    if (codec == COMPRESSION_LZ4 && w->magic == 0)
        fixed = lz4_fix_header(in, (size_t)w->value_len);
    if (fixed)
        in = fixed;
    uint8_t *inner = NULL;
    size_t inner_len = 0;
    size_t limit = c->max_bytes > SIZE_MAX / 2 ? SIZE_MAX : c->max_bytes * 2;
    char why[200];
    int rc = compression_decompress(codec, in, (size_t)w->value_len, limit, &inner, &inner_len,
                                    why, sizeof(why));
    free(fixed);
    if (rc != COMPRESSION_OK)
        return fail(c, rc == COMPRESSION_ERR_TOO_LARGE ? MSGCONV_ERR_TOO_LARGE : MSGCONV_ERR_CORRUPT,
                    "compressed message %d: %s", (int)c->count, why);
    if (inner_len == 0)
        rc = fail(c, MSGCONV_ERR_INVALID, "compressed message %d holds no messages", (int)c->count);
    else
        rc = walk(c, inner, inner_len, w);
    free(inner);
    /* Inner offsets of magic 1 are relative to the wrapper's, its last
     * inner message's absolute offset (0 from some librdkafka versions). */
    if (rc == MSGCONV_OK && w->magic == 1 && w->offset != 0 && w->offset < c->last_inner_offset)
        rc = fail(c, MSGCONV_ERR_INVALID,
                  "compressed message offset %lld is below its last inner offset %lld",
                  (long long)w->offset, (long long)c->last_inner_offset);
    return rc;
}

/* The entries p[0..len): top level when wrapper is NULL, else the inner set
 * of that wrapper. */
static int walk(conv_t *c, const uint8_t *p, size_t len, const legacy_msg_t *wrapper)
{
    for (size_t off = 0; off < len;) {
        legacy_msg_t m;
        size_t size = 0;
        int rc = parse_entry(c, p + off, len - off, &m, &size);
        if (rc != MSGCONV_OK)
            return rc;
        off += size;
        int codec = m.attributes & LEG_ATTR_CODEC;
        if (wrapper) {
            if (codec != 0)
                return fail(c, MSGCONV_ERR_INVALID,
                            "a compressed message holds another compressed message");
            if (m.magic != wrapper->magic)
                return fail(c, MSGCONV_ERR_INVALID,
                            "a compressed message of magic %d holds one of magic %d",
                            wrapper->magic, m.magic);
            if (wrapper->magic == 1 && (wrapper->attributes & LEG_ATTR_LOG_APPEND_TIME))
                m.timestamp = wrapper->timestamp;
            c->last_inner_offset = m.offset;
        } else if (codec != 0) {
            if ((rc = unwrap(c, &m)) != MSGCONV_OK)
                return rc;
            continue;
        }
        if ((rc = emit(c, &m)) != MSGCONV_OK)
            return rc;
    }
    return MSGCONV_OK;
}

int message_set_upconvert(const uint8_t *p, size_t len, size_t max_bytes, uint8_t **out,
                          size_t *outlen, char *err, size_t errlen)
{
    conv_t c = {.max_bytes = max_bytes, .err = err, .errlen = errlen};
    *out = NULL;
    *outlen = 0;
    if (len == 0)
        return fail(&c, MSGCONV_ERR_CORRUPT, "no messages");
    if (max_bytes < BATCH_HEADER_LEN)
        return fail(&c, MSGCONV_ERR_TOO_LARGE, "no room for a batch in %zu bytes", max_bytes);
    c.cap = BATCH_HEADER_LEN + 256;
    if (c.cap > max_bytes)
        c.cap = max_bytes;
    c.out = xmalloc(c.cap);
    c.len = BATCH_HEADER_LEN;
    int rc = walk(&c, p, len, NULL);
    if (rc == MSGCONV_OK && c.count == 0)
        rc = fail(&c, MSGCONV_ERR_CORRUPT, "no messages");
    if (rc != MSGCONV_OK) {
        free(c.out);
        return rc;
    }
    finish(&c);
    *out = c.out;
    *outlen = c.len;
    return MSGCONV_OK;
}
