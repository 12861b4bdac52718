/* console_records.c -- see console_records.h. The record layout is the one
 * src/broker/log/compression.h describes (batch_validate_records_within). */
#define _GNU_SOURCE
#include "console_records.h"
#include "base/endian.h"
#include "base/varint.h"
#include "broker/log/compression.h"
#include "broker/log/record_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ---- */

static void append_varlong(buf_t *out, int64_t v)
{
    uint8_t tmp[VARLONG_MAX];
    buf_append(out, tmp, varlong_put(tmp, v));
}

static void append_bytes(buf_t *out, const char *p, size_t len)
{
    append_varlong(out, p ? (int64_t)len : -1);
    if (p)
        buf_append(out, p, len);
}

void cr_header_append(buf_t *out, const char *key, size_t key_len, const char *value, size_t value_len)
{
    append_bytes(out, key, key_len);
    append_bytes(out, value, value_len);
}

/* One record: its body first, then its length in front of it. */
static void append_record(buf_t *out, buf_t *body, const cr_input_t *r, int delta)
{
    buf_clear(body);
    uint8_t zero = 0;
    buf_append(body, &zero, 1);   /* attributes */
    append_varlong(body, 0);      /* timestamp delta */
    append_varlong(body, delta);  /* offset delta */
    append_bytes(body, r->key, r->key_len);
    append_bytes(body, r->value, r->value_len);
    append_varlong(body, r->header_count);
    if (r->header_count)
        buf_append(body, r->headers, r->headers_len);
    append_varlong(out, (int64_t)buf_unread(body));
    buf_append(out, buf_read_ptr(body), buf_unread(body));
}

void cr_batch_build(buf_t *out, const cr_input_t *recs, int n, int64_t now)
{
    size_t start = out->len;
    uint8_t h[BATCH_HEADER_LEN] = {0};
    buf_append(out, h, sizeof(h));
    buf_t body;
    buf_init(&body);
    for (int i = 0; i < n; i++)
        append_record(out, &body, &recs[i], i);
    buf_free(&body);
    uint8_t *b = out->data + start;
    size_t size = out->len - start;
    be32_put(b + BATCH_OFF_LENGTH, (uint32_t)(size - BATCH_LOG_OVERHEAD));
    be32_put(b + BATCH_OFF_LEADER_EPOCH, UINT32_MAX);
    b[BATCH_OFF_MAGIC] = 2;
    be32_put(b + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)(n - 1));
    be64_put(b + BATCH_OFF_FIRST_TIMESTAMP, (uint64_t)now);
    be64_put(b + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)now);
    be64_put(b + BATCH_OFF_PRODUCER_ID, UINT64_MAX);
    be16_put(b + BATCH_OFF_PRODUCER_EPOCH, UINT16_MAX);
    be32_put(b + BATCH_OFF_BASE_SEQUENCE, UINT32_MAX);
    be32_put(b + BATCH_OFF_RECORD_COUNT, (uint32_t)n);
    be32_put(b + BATCH_OFF_CRC, record_batch_compute_crc(b, size));
}

/* ---- reading ---- */

typedef struct {
    const uint8_t *p, *end;
} cursor_t;

/* A zigzag varlong of at most max_bytes (5 for a varint, 10 for a
 * varlong, as Kafka reads them). 0 or -1. */
static int get_var(cursor_t *c, int max_bytes, int64_t *v)
{
    uint64_t z = 0;
    for (int i = 0; i < max_bytes && c->p < c->end; i++) {
        uint8_t byte = *c->p++;
        z |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
            return 0;
        }
    }
    return -1;
}

/* A varint length (-1 null when may_be_null) and that many bytes. */
static int get_bytes(cursor_t *c, int may_be_null, const uint8_t **p, int32_t *len)
{
    int64_t n;
    if (get_var(c, 5, &n) < 0 || n < (may_be_null ? -1 : 0) || n > c->end - c->p)
        return -1;
    *len = (int32_t)n;
    *p = n < 0 ? NULL : c->p;
    c->p += n < 0 ? 0 : n;
    return 0;
}

int cr_header_next(const cr_record_t *r, size_t *pos, cr_header_t *h)
{
    cursor_t c = {r->headers + *pos, r->headers + r->headers_len};
    if (c.p >= c.end || get_bytes(&c, 0, &h->key, &h->key_len) < 0 ||
        get_bytes(&c, 1, &h->value, &h->value_len) < 0)
        return 0;
    *pos = (size_t)(c.p - r->headers);
    return 1;
}

/* One record's fields after its length, within c (exactly its bytes). */
static int read_record(cursor_t *c, const record_batch_t *b, cr_record_t *r)
{
    int64_t ts_delta, off_delta, count;
    c->p++;   /* attributes: none defined */
    if (get_var(c, 10, &ts_delta) < 0 || get_var(c, 5, &off_delta) < 0 ||
        get_bytes(c, 1, &r->key, &r->key_len) < 0 || get_bytes(c, 1, &r->value, &r->value_len) < 0 ||
        get_var(c, 5, &count) < 0 || count < 0 || count > c->end - c->p)
        return -1;
    r->offset = b->base_offset + off_delta;
    r->log_append_time = (b->attributes & BATCH_ATTR_LOG_APPEND_TIME) != 0;
    r->timestamp = r->log_append_time ? b->max_timestamp : b->first_timestamp + ts_delta;
    r->headers = c->p;
    r->header_count = (int32_t)count;
    for (int64_t i = 0; i < count; i++) {
        const uint8_t *k, *v;
        int32_t kl, vl;
        if (get_bytes(c, 0, &k, &kl) < 0 || get_bytes(c, 1, &v, &vl) < 0)
            return -1;
    }
    r->headers_len = (size_t)(c->p - r->headers);
    return c->p == c->end ? 0 : -1;
}

static int corrupt(char *err, size_t errlen, const char *what, int64_t offset)
{
    snprintf(err, errlen, "%s (the batch at offset %lld)", what, (long long)offset);
    return CR_ERR_CORRUPT;
}

/* The records of one batch, records[0..len) (decompressed when it was). */
static int read_records(const record_batch_t *b, const uint8_t *records, size_t len, int64_t from, cr_record_fn fn,
                        void *ctx, char *err, size_t errlen)
{
    cursor_t c = {records, records + len};
    for (int32_t i = 0; i < b->record_count; i++) {
        int64_t rlen;
        if (get_var(&c, 5, &rlen) < 0 || rlen < 1 || rlen > c.end - c.p)
            return corrupt(err, errlen, "a record's length runs past its batch", b->base_offset);
        cursor_t one = {c.p, c.p + rlen};
        c.p += rlen;
        cr_record_t r;
        if (read_record(&one, b, &r) < 0)
            return corrupt(err, errlen, "a record does not parse", b->base_offset);
        int rc = r.offset >= from ? fn(ctx, &r) : 0;
        if (rc)
            return rc;
    }
    return c.p == c.end ? CR_OK : corrupt(err, errlen, "bytes after the batch's last record", b->base_offset);
}

/* One whole, checked batch at p. */
static int read_batch(const uint8_t *p, const record_batch_t *b, int64_t from, cr_record_fn fn, void *ctx,
                      char *err, size_t errlen)
{
    const uint8_t *records = p + BATCH_HEADER_LEN;
    size_t len = (size_t)record_batch_size(b) - BATCH_HEADER_LEN;
    int codec = b->attributes & BATCH_ATTR_COMPRESSION_MASK;
    if ((b->attributes & BATCH_ATTR_CONTROL) || record_batch_last_offset(b) < from)
        return CR_OK;
    if (codec == COMPRESSION_NONE)
        return read_records(b, records, len, from, fn, ctx, err, errlen);
    uint8_t *plain = NULL;
    size_t plain_len = 0;
    char why[200] = "";
    int rc = compression_decompress(codec, records, len, CR_DECOMPRESSED_MAX, &plain, &plain_len, why, sizeof(why));
    if (rc != COMPRESSION_OK)
        return corrupt(err, errlen, why[0] ? why : compression_strerror(rc), b->base_offset);
    rc = read_records(b, plain, plain_len, from, fn, ctx, err, errlen);
    free(plain);
    return rc;
}

int cr_batches_read(const uint8_t *p, size_t len, int64_t from_offset, cr_record_fn fn, void *ctx,
                    int64_t *next, char *err, size_t errlen)
{
    size_t whole = record_batches_prefix(p, len, NULL);
    *next = from_offset;
    for (size_t at = 0; at < whole;) {
        record_batch_t b;
        if (record_batch_validate(p + at, whole - at, &b) != PLOG_OK)
            return corrupt(err, errlen, "a batch fails its CRC or header checks", (int64_t)be64_get(p + at));
        int rc = read_batch(p + at, &b, from_offset, fn, ctx, err, errlen);
        if (rc)
            return rc;
        at += (size_t)record_batch_size(&b);
        if (record_batch_last_offset(&b) + 1 > *next)
            *next = record_batch_last_offset(&b) + 1;
    }
    return CR_OK;
}
