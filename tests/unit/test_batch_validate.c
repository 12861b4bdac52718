/* test_batch_validate.c -- a producer's records checked before a leader
 * appends them (broker/log/batch_validate.h): every refusal with Kafka's
 * error and a message naming the reason, the CRC pass before any
 * decompression, and bombs of every codec stopped by the bounds. Batches
 * and legacy message sets are built here byte by byte, compressed with the
 * codec libraries' own compressors. */
#include "base/endian.h"
#include "broker/core/records_check.h"
#include "broker/log/batch_validate.h"
#include "broker/log/compression.h"
#include "broker/log/record_batch.h"
#include "broker/wire/kafka_errors.h"
#include "suites.h"
#include "unit.h"
#include "test_bytes.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define MIB ((size_t)1 << 20)
#define T0 1700000000000LL

/* ---- Bytes: test_bytes.h ---- */

/* ---- Records and batches ---------------------------------------------------- */

/* Record i: offset delta i, a 3-byte key, vlen bytes of value (0s when
 * zeros, else varied), no headers. */
static void put_record(bytes_t *out, int i, size_t vlen, int zeros)
{
    bytes_t body = {0};
    put_byte(&body, 0);
    put_varint(&body, i);
    put_varint(&body, i);
    put_varint(&body, 3);
    put(&body, "key", 3);
    put_varint(&body, (int64_t)vlen);
    if (zeros)
        put_fill(&body, 0, vlen);
    else
        for (size_t j = 0; j < vlen; j++)
            put_byte(&body, (uint8_t)(j * 13 + (size_t)i));
    put_varint(&body, 0);
    put_varint(out, (int64_t)body.len);
    put(out, body.p, body.len);
    bytes_free(&body);
}

static void put_records(bytes_t *out, int n, size_t vlen, int zeros)
{
    for (int i = 0; i < n; i++)
        put_record(out, i, vlen, zeros);
}

typedef enum { V_NONE, V_GZIP, V_SNAPPY_RAW, V_SNAPPY_XERIAL, V_LZ4, V_ZSTD, V_COUNT } variant_t;
static const char *const variant_names[V_COUNT] = {"none", "gzip", "snappy-raw", "snappy-xerial", "lz4", "zstd"};
static const int variant_codec[V_COUNT] = {0, 1, 2, 2, 3, 4};

static void snappy_raw(bytes_t *out, const uint8_t *in, size_t n)
{
    size_t clen = snappy_max_compressed_length(n);
    reserve(out, clen);
    CHECK_EQ(snappy_compress((const char *)in, n, (char *)out->p + out->len, &clen), SNAPPY_OK);
    out->len += clen;
}

/* The Java client's framing: a 16-byte header, then 32 KiB blocks each as
 * [int32 length][raw snappy]. */
static void snappy_xerial(bytes_t *out, const uint8_t *in, size_t n)
{
    static const uint8_t magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    put(out, magic, sizeof(magic));
    put_be32(out, 1);
    put_be32(out, 1);
    for (size_t at = 0; at < n; at += 32 * 1024) {
        bytes_t block = {0};
        snappy_raw(&block, in + at, n - at < 32 * 1024 ? n - at : 32 * 1024);
        put_be32(out, (uint32_t)block.len);
        put(out, block.p, block.len);
        bytes_free(&block);
    }
}

static void compress_as(variant_t v, bytes_t *out, const uint8_t *in, size_t n)
{
    if (v == V_NONE) {
        put(out, in, n);
    } else if (v == V_GZIP) {
        z_stream z;
        memset(&z, 0, sizeof(z));
        CHECK_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
        size_t bound = deflateBound(&z, (uLong)n);
        reserve(out, bound);
        z.next_in = (Bytef *)(uintptr_t)in;
        z.avail_in = (uInt)n;
        z.next_out = out->p + out->len;
        z.avail_out = (uInt)bound;
        CHECK_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
        out->len += bound - z.avail_out;
        deflateEnd(&z);
    } else if (v == V_SNAPPY_RAW) {
        snappy_raw(out, in, n);
    } else if (v == V_SNAPPY_XERIAL) {
        snappy_xerial(out, in, n);
    } else if (v == V_LZ4) {
        size_t bound = LZ4F_compressFrameBound(n, NULL);
        reserve(out, bound);
        size_t got = LZ4F_compressFrame(out->p + out->len, bound, in, n, NULL);
        CHECK(!LZ4F_isError(got));
        out->len += got;
    } else {
        size_t bound = ZSTD_compressBound(n);
        reserve(out, bound);
        size_t got = ZSTD_compress(out->p + out->len, bound, in, n, 19);
        CHECK(!ZSTD_isError(got));
        out->len += got;
    }
}

static void recrc(uint8_t *batch)
{
    size_t size = (size_t)be32_get(batch + BATCH_OFF_LENGTH) + BATCH_LOG_OVERHEAD;
    be32_put(batch + BATCH_OFF_CRC, record_batch_compute_crc(batch, size));
}

/* A producer's batch (base offset 0, no producer id) of count records in
 * variant v appended to out; returns where it starts. */
static size_t add_batch(bytes_t *out, variant_t v, const bytes_t *records, int32_t count)
{
    size_t at = out->len;
    put_fill(out, 0, BATCH_HEADER_LEN);
    compress_as(v, out, records->p, records->len);
    uint8_t *h = out->p + at;
    be32_put(h + BATCH_OFF_LENGTH, (uint32_t)(out->len - at - BATCH_LOG_OVERHEAD));
    be32_put(h + BATCH_OFF_LEADER_EPOCH, (uint32_t)-1);
    h[BATCH_OFF_MAGIC] = 2;
    h[BATCH_OFF_ATTRIBUTES + 1] = (uint8_t)variant_codec[v];
    be32_put(h + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)(count - 1));
    be64_put(h + BATCH_OFF_FIRST_TIMESTAMP, (uint64_t)T0);
    be64_put(h + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)T0);
    be64_put(h + BATCH_OFF_PRODUCER_ID, (uint64_t)-1);
    h[BATCH_OFF_PRODUCER_EPOCH] = h[BATCH_OFF_PRODUCER_EPOCH + 1] = 0xff;
    be32_put(h + BATCH_OFF_BASE_SEQUENCE, (uint32_t)-1);
    be32_put(h + BATCH_OFF_RECORD_COUNT, (uint32_t)count);
    recrc(h);
    return at;
}

/* ---- Checking ------------------------------------------------------------------- */

static const records_limits_t limits = {
    .max_batch_bytes = 1048588,
    .max_record = 1048588,
    .max_batch_decompressed = 16 * 1048588,
    .max_decompressed = 64 * 1048588,
};

static records_verdict_t verdict;

/* records_validate refused with error and a message holding want (NULL:
 * accepted). */
static int refused(const bytes_t *b, const records_limits_t *lim, int16_t error, const char *want)
{
    records_verdict_release(&verdict);
    records_validate(b->p, b->len, lim, &verdict);
    int why_ok = want ? strstr(verdict.message, want) && verdict.message[0] : !verdict.message[0];
    if (verdict.error != error || !why_ok) {
        fprintf(stderr, "    got %d \"%s\", wanted %d \"%s\"\n", verdict.error, verdict.message, error,
                want ? want : "");
        return 0;
    }
    return 1;
}

static int accepted(const bytes_t *b, const records_limits_t *lim)
{
    return refused(b, lim, KERR_NONE, NULL);
}

/* Refused with error, for some reason given. */
static int refused_with(const bytes_t *b, const records_limits_t *lim, int16_t error)
{
    return refused(b, lim, error, "");
}

/* ---- Tests ------------------------------------------------------------------------ */

static void test_batch_validate_accepts_every_codec(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 10, 50, 0);
    for (int v = 0; v < V_COUNT; v++) {
        b.len = 0;
        add_batch(&b, (variant_t)v, &records, 10);
        if (!accepted(&b, &limits))
            fprintf(stderr, "    %s\n", variant_names[v]);
        CHECK_EQ(verdict.decompressed, v == V_NONE ? 0 : records.len);
        CHECK(verdict.converted == NULL && verdict.batch == -1);
    }
    /* Several batches (Produce v0-v2 may send them) of one partition. */
    b.len = 0;
    add_batch(&b, V_NONE, &records, 10);
    add_batch(&b, V_GZIP, &records, 10);
    add_batch(&b, V_ZSTD, &records, 10);
    CHECK(accepted(&b, &limits));
    CHECK_EQ(verdict.decompressed, 2 * records.len);
    records_verdict_release(&verdict);
    bytes_free(&records);
    bytes_free(&b);
}

/* The two uncompressed batches, stored before: one record declared
 * as 2^31-1 (the log end would jump by 2^31-1), and 200 random bytes
 * declared as 3 records. */
static void test_batch_validate_uncompressed_records(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 1, 10, 0);
    add_batch(&b, V_NONE, &records, 1);
    be32_put(b.p + BATCH_OFF_RECORD_COUNT, INT32_MAX);
    be32_put(b.p + BATCH_OFF_LAST_OFFSET_DELTA, INT32_MAX - 1);
    recrc(b.p);
    CHECK(refused(&b, &limits, KERR_INVALID_RECORD, "batch declares 2147483647 records, the data holds 1"));
    CHECK_EQ(verdict.batch, 0);

    records.len = 0;
    uint32_t x = 12345;
    for (int i = 0; i < 200; i++) {
        x = x * 1103515245u + 12345u;
        put_byte(&records, (uint8_t)(x >> 16));
    }
    b.len = 0;
    add_batch(&b, V_NONE, &records, 3);
    CHECK(refused(&b, &limits, KERR_INVALID_RECORD, "record 0: "));

    /* Offset deltas that do not run 0..n-1, a record cut short. */
    records.len = 0;
    put_record(&records, 0, 5, 0);
    put_record(&records, 2, 5, 0);
    b.len = 0;
    add_batch(&b, V_NONE, &records, 2);
    CHECK(refused(&b, &limits, KERR_INVALID_RECORD, "record 1: offset delta 2, expected 1"));
    records.len -= 3;
    b.len = 0;
    add_batch(&b, V_NONE, &records, 2);
    CHECK(refused(&b, &limits, KERR_INVALID_RECORD, "record 1: the data ends inside it"));
    records_verdict_release(&verdict);
    bytes_free(&records);
    bytes_free(&b);
}

/* Whole batches, magic 2, their CRCs, their size: CORRUPT_MESSAGE or
 * MESSAGE_TOO_LARGE, naming the batch. */
static void test_batch_validate_framing(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 2, 20, 0);
    CHECK(refused(&b, &limits, KERR_CORRUPT_MESSAGE, "no record batches"));
    add_batch(&b, V_NONE, &records, 2);
    size_t second = add_batch(&b, V_NONE, &records, 2);
    b.p[b.len - 1] ^= 1;
    CHECK(refused(&b, &limits, KERR_CORRUPT_MESSAGE, "record batch failed its CRC-32C check"));
    CHECK_EQ(verdict.batch, 1);
    b.p[b.len - 1] ^= 1;
    CHECK(accepted(&b, &limits));
    b.p[second + BATCH_OFF_MAGIC] = 3;
    CHECK(refused(&b, &limits, KERR_CORRUPT_MESSAGE, "unknown record batch magic 3"));
    b.p[second + BATCH_OFF_MAGIC] = 1;
    CHECK(refused(&b, &limits, KERR_INVALID_RECORD, "magic 0/1 mixed with record batches v2"));
    b.p[second + BATCH_OFF_MAGIC] = 2;
    b.len -= 5;
    CHECK(refused(&b, &limits, KERR_CORRUPT_MESSAGE, "bad length"));
    b.len = second;
    records_limits_t small = limits;
    small.max_batch_bytes = (int32_t)b.len - 1;
    CHECK(refused(&b, &small, KERR_MESSAGE_TOO_LARGE, "larger than max.message.bytes"));
    records_verdict_release(&verdict);
    bytes_free(&records);
    bytes_free(&b);
}

/* What LogValidator.validateBatch refuses in a client's batch header. */
static void test_batch_validate_headers(void)
{
    static const struct {
        int attributes;
        int32_t count, last_delta;
        int64_t producer_id;
        int32_t base_sequence;
        int16_t error;
        const char *why;
    } cases[] = {
        {0, 0, -1, -1, -1, KERR_INVALID_RECORD, "batch declares 0 records"},
        {0, 3, 5, -1, -1, KERR_INVALID_RECORD, "last offset delta 5 with 3 records"},
        {0x20, 3, 2, -1, -1, KERR_INVALID_RECORD, "producers may not write control batches"},
        {0x10, 3, 2, 7, 0, KERR_INVALID_RECORD, "transactional batches are not supported"},
        {0, 3, 2, 7, -1, KERR_INVALID_RECORD, "producer id 7 with base sequence -1"},
        {0x08, 3, 2, -1, -1, KERR_INVALID_TIMESTAMP, "LogAppendTime"},
        {0, 3, 2, 7, 0, KERR_NONE, NULL},
    };
    bytes_t records = {0}, b = {0};
    put_records(&records, 3, 20, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        b.len = 0;
        add_batch(&b, V_NONE, &records, 3);
        b.p[BATCH_OFF_ATTRIBUTES + 1] = (uint8_t)cases[i].attributes;
        be32_put(b.p + BATCH_OFF_RECORD_COUNT, (uint32_t)cases[i].count);
        be32_put(b.p + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)cases[i].last_delta);
        be64_put(b.p + BATCH_OFF_PRODUCER_ID, (uint64_t)cases[i].producer_id);
        be32_put(b.p + BATCH_OFF_BASE_SEQUENCE, (uint32_t)cases[i].base_sequence);
        recrc(b.p);
        CHECK(refused(&b, &limits, cases[i].error, cases[i].why));
    }
    records_verdict_release(&verdict);
    bytes_free(&records);
    bytes_free(&b);
}

/* Every batch's CRC and header are checked before anything is
 * decompressed: a bomb ahead of a damaged batch costs nothing. */
static void test_batch_validate_crc_before_decompressing(void)
{
    bytes_t bomb = {0}, good = {0}, b = {0};
    put_records(&bomb, 1, 8 * MIB, 1);
    put_records(&good, 2, 10, 0);
    add_batch(&b, V_GZIP, &bomb, 1);
    add_batch(&b, V_NONE, &good, 2);
    b.p[b.len - 1] ^= 0x40;
    CHECK(refused(&b, &limits, KERR_CORRUPT_MESSAGE, "CRC-32C"));
    CHECK_EQ(verdict.decompressed, 0);
    b.p[b.len - 1] ^= 0x40;
    size_t second = b.len - (good.len + BATCH_HEADER_LEN);
    be32_put(b.p + second + BATCH_OFF_RECORD_COUNT, 0);
    recrc(b.p + second);
    CHECK(refused(&b, &limits, KERR_INVALID_RECORD, "batch declares 0 records"));
    CHECK_EQ(verdict.decompressed, 0);
    records_verdict_release(&verdict);
    bytes_free(&bomb);
    bytes_free(&good);
    bytes_free(&b);
}

/* Bombs in every codec: one record of 8 MiB of zeros is refused once its
 * length is read (one window decompressed), or, in raw snappy, whose one
 * block names its size first, before anything is decoded: one declared
 * record of at most 1 MiB cannot fill it. 4 MiB of small records over a
 * 1 MiB batch bound are refused at the bound. All are MESSAGE_TOO_LARGE. */
static void test_batch_validate_bombs(void)
{
    bytes_t big = {0}, many = {0}, b = {0};
    put_records(&big, 1, 8 * MIB, 1);
    int nsmall = 0;
    while (many.len < 4 * MIB)
        put_record(&many, nsmall++, 0, 1);
    records_limits_t lim = limits;
    lim.max_record = MIB;
    lim.max_batch_decompressed = 16 * MIB;
    lim.max_batch_bytes = 16 * MIB; /* the small records compress only so much */
    for (int v = V_GZIP; v < V_COUNT; v++) {
        b.len = 0;
        add_batch(&b, (variant_t)v, &big, 1);
        CHECK(b.len < MIB / 2);
        if (!refused(&b, &lim, KERR_MESSAGE_TOO_LARGE,
                     v == V_SNAPPY_RAW ? "snappy: records decompress to more than 1048581 bytes" : "record 0 is "))
            fprintf(stderr, "    %s\n", variant_names[v]);
        CHECK(verdict.decompressed <= (v == V_SNAPPY_RAW ? 0 : 64 * 1024));
        b.len = 0;
        add_batch(&b, (variant_t)v, &many, nsmall);
        lim.max_batch_decompressed = MIB;
        if (!refused(&b, &lim, KERR_MESSAGE_TOO_LARGE, "records decompress to more than 1048576 bytes"))
            fprintf(stderr, "    %s\n", variant_names[v]);
        CHECK(verdict.decompressed <= MIB);
        lim.max_batch_decompressed = 16 * MIB;
        CHECK(accepted(&b, &lim));
    }
    records_verdict_release(&verdict);
    bytes_free(&big);
    bytes_free(&many);
    bytes_free(&b);
}

/* The request's budget is shared by its batches: the one that would pass it
 * is refused, naming the budget. */
static void test_batch_validate_request_budget(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 4, 200 * 1024, 1);
    for (int i = 0; i < 3; i++)
        add_batch(&b, V_LZ4, &records, 4);
    records_limits_t lim = limits;
    lim.max_decompressed = 2 * records.len + records.len / 2;
    CHECK(refused(&b, &lim, KERR_MESSAGE_TOO_LARGE, "(what is left of the request's budget)"));
    CHECK_EQ(verdict.batch, 2);
    CHECK(verdict.decompressed <= lim.max_decompressed);
    lim.max_decompressed = 3 * records.len;
    CHECK(accepted(&b, &lim));
    records_verdict_release(&verdict);
    bytes_free(&records);
    bytes_free(&b);
}

static void test_batch_validate_codec_errors(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 3, 100, 0);
    add_batch(&b, V_GZIP, &records, 3);
    b.p[BATCH_HEADER_LEN + 20] ^= 0xff;
    recrc(b.p);
    CHECK(refused(&b, &limits, KERR_CORRUPT_MESSAGE, "record batch 0: gzip: "));
    b.len = 0;
    add_batch(&b, V_NONE, &records, 3);
    b.p[BATCH_OFF_ATTRIBUTES + 1] = 6;
    recrc(b.p);
    CHECK(refused(&b, &limits, KERR_UNSUPPORTED_COMPRESSION_TYPE, "codec 6"));
    records_verdict_release(&verdict);
    bytes_free(&records);
    bytes_free(&b);
}

/* A legacy (magic 1) message: offset, size, CRC-32, magic, attributes,
 * timestamp, key, value. */
static void put_legacy(bytes_t *out, int64_t offset, int codec, const uint8_t *value, size_t vlen)
{
    bytes_t m = {0};
    put_byte(&m, 1);
    put_byte(&m, (uint8_t)codec);
    put_be64(&m, (uint64_t)T0);
    put_be32(&m, (uint32_t)-1);
    put_be32(&m, (uint32_t)vlen);
    put(&m, value, vlen);
    put_be64(out, (uint64_t)offset);
    put_be32(out, (uint32_t)(m.len + 4));
    put_be32(out, (uint32_t)crc32(0, m.p, (uInt)m.len));
    put(out, m.p, m.len);
    bytes_free(&m);
}

/* Legacy message sets become one v2 batch within the same bounds. */
static void test_batch_validate_legacy(void)
{
    bytes_t set = {0}, inner = {0}, wrapped = {0};
    put_legacy(&set, 0, 0, (const uint8_t *)"hello", 5);
    put_legacy(&set, 1, 0, (const uint8_t *)"world", 5);
    CHECK(accepted(&set, &limits));
    CHECK(verdict.converted != NULL && verdict.converted_len > BATCH_HEADER_LEN);
    record_batch_t h;
    CHECK_EQ(record_batch_validate(verdict.converted, verdict.converted_len, &h), PLOG_OK);
    CHECK_EQ(h.record_count, 2);
    set.p[set.len - 1] ^= 1;
    CHECK(refused_with(&set, &limits, KERR_CORRUPT_MESSAGE));
    CHECK(verdict.converted == NULL);
    /* A gzip wrapper around 8 MiB of zeros in one inner message. */
    uint8_t *zeros = calloc(1, 8 * MIB);
    put_legacy(&inner, 0, 0, zeros, 8 * MIB);
    compress_as(V_GZIP, &wrapped, inner.p, inner.len);
    set.len = 0;
    put_legacy(&set, 0, 1, wrapped.p, wrapped.len);
    records_limits_t lim = limits;
    lim.max_batch_decompressed = MIB;
    CHECK(refused_with(&set, &lim, KERR_MESSAGE_TOO_LARGE));
    CHECK(verdict.converted == NULL);
    free(zeros);
    records_verdict_release(&verdict);
    bytes_free(&set);
    bytes_free(&inner);
    bytes_free(&wrapped);
}

/* records_check_try_here: a request of small compressed batches is checked
 * on the loop; one that decompresses past the loop's share (a bomb, or
 * several batches that do together) is left whole for the thread; a
 * refusal that share did not cause stands. */
static void test_records_check_try_here(void)
{
    bytes_t small = {0}, half = {0}, big = {0}, a = {0}, g = {0}, bomb = {0}, junk = {0};
    put_records(&small, 10, 50, 0);
    put_records(&half, 4, 2500, 1);   /* 10 KB: two are past the share together */
    put_records(&big, 1, 8 * MIB, 1);
    add_batch(&a, V_LZ4, &small, 10);
    add_batch(&g, V_GZIP, &small, 10);
    add_batch(&bomb, V_GZIP, &big, 1);
    add_batch(&junk, V_ZSTD, &small, 9);   /* a record more than it declares */

    records_check_t *j = records_check_new(3);
    records_check_add(j, 0, a.p, a.len, &limits, NULL);
    records_check_add(j, 2, g.p, g.len, &limits, NULL);
    CHECK_EQ(records_check_try_here(j), 1);
    CHECK(records_check_finished(j));
    CHECK_EQ(records_check_verdict(j, 0)->error, KERR_NONE);
    CHECK(records_check_verdict(j, 1) == NULL);
    CHECK_EQ(records_check_verdict(j, 2)->error, KERR_NONE);
    records_check_release(j);

    j = records_check_new(2);
    records_check_add(j, 0, a.p, a.len, &limits, NULL);
    records_check_add(j, 1, bomb.p, bomb.len, &limits, NULL);
    CHECK(bomb.len < RECORDS_CHECK_INLINE_BYTES);
    CHECK_EQ(records_check_try_here(j), 0);
    CHECK(!records_check_finished(j));
    CHECK_EQ(records_check_verdict(j, 0)->error, KERR_NONE);   /* nothing of the try kept */
    CHECK_EQ(records_check_verdict(j, 0)->message[0], 0);
    records_check_release(j);

    j = records_check_new(2);
    a.len = g.len = 0;
    add_batch(&a, V_ZSTD, &half, 4);
    add_batch(&g, V_SNAPPY_XERIAL, &half, 4);
    records_check_add(j, 0, a.p, a.len, &limits, NULL);
    CHECK_EQ(records_check_try_here(j), 1);
    records_check_release(j);
    j = records_check_new(2);
    records_check_add(j, 0, a.p, a.len, &limits, NULL);
    records_check_add(j, 1, g.p, g.len, &limits, NULL);
    CHECK_EQ(records_check_try_here(j), 0);
    records_check_release(j);

    j = records_check_new(1);
    records_check_add(j, 0, junk.p, junk.len, &limits, NULL);
    CHECK_EQ(records_check_try_here(j), 1);
    CHECK_EQ(records_check_verdict(j, 0)->error, KERR_INVALID_RECORD);
    records_check_release(j);

    bytes_t many = {0};   /* past RECORDS_CHECK_INLINE_BYTES as sent: not tried */
    while (many.len <= RECORDS_CHECK_INLINE_BYTES)
        add_batch(&many, V_NONE, &small, 10);
    j = records_check_new(1);
    records_check_add(j, 0, many.p, many.len, &limits, NULL);
    CHECK_EQ(records_check_try_here(j), 0);
    records_check_release(j);

    CHECK(records_check_verdict(NULL, 0) == NULL);
    bytes_t *all[] = {&small, &half, &big, &a, &g, &bomb, &junk, &many};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        bytes_free(all[i]);
}

void suite_batch_validate(void)
{
    RUN(test_batch_validate_accepts_every_codec);
    RUN(test_batch_validate_uncompressed_records);
    RUN(test_batch_validate_framing);
    RUN(test_batch_validate_headers);
    RUN(test_batch_validate_crc_before_decompressing);
    RUN(test_batch_validate_bombs);
    RUN(test_batch_validate_request_budget);
    RUN(test_batch_validate_codec_errors);
    RUN(test_batch_validate_legacy);
    RUN(test_records_check_try_here);
}
