/* test_compression.c -- the records inside v2 batches, through every codec.
 * Batches are built here as clients build them: records encoded by hand,
 * compressed with the codec libraries' own compressors (gzip through
 * deflate, raw snappy as librdkafka sends it, xerial-framed snappy as the
 * Java client sends it, LZ4 frames, zstd frames with and without a content
 * size), then the v2 header and its CRC-32C. */
#include "broker/log/compression.h"
#include "broker/log/partition_log.h"
#include "suites.h"
#include "unit.h"
#include "test_bytes.h"
#include "base/endian.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define T0 1700000000000LL
#define BASE 1000
#define MIB ((size_t)1 << 20)

/* ---- Growable bytes: test_bytes.h ---- */

/* ---- Records ------------------------------------------------------------------ */

typedef struct {
    int64_t ts_delta;
    int32_t offset_delta;
    int64_t key_len;   /* -1: null */
    int64_t value_len; /* -1: null */
    int nheaders;      /* "h<i>" -> "v" for even i, null for odd */
} rec_t;

/* One record as a producer writes it: varint length, then the body. */
static void put_record(bytes_t *out, const rec_t *r)
{
    bytes_t body = {0};
    put_byte(&body, 0); /* attributes */
    put_varint(&body, r->ts_delta);
    put_varint(&body, r->offset_delta);
    put_varint(&body, r->key_len);
    if (r->key_len > 0)
        put_fill(&body, 'k', (size_t)r->key_len);
    put_varint(&body, r->value_len);
    for (int64_t i = 0; i < r->value_len; i++) /* not all alike, so codecs work */
        put_byte(&body, (uint8_t)(i * 7 + i / 251));
    put_varint(&body, r->nheaders);
    for (int i = 0; i < r->nheaders; i++) {
        char key[16];
        int klen = snprintf(key, sizeof(key), "h%d", i);
        put_varint(&body, klen);
        put(&body, key, (size_t)klen);
        put_varint(&body, i % 2 ? -1 : 1);
        if (i % 2 == 0)
            put_byte(&body, 'v');
    }
    put_varint(out, (int64_t)body.len);
    put(out, body.p, body.len);
    bytes_free(&body);
}

/* n ordinary records: record i stamped 10 * i, keyed, vlen bytes of value,
 * i % 3 headers. */
static void put_records(bytes_t *out, int n, int64_t vlen)
{
    for (int i = 0; i < n; i++) {
        rec_t r = {.ts_delta = 10 * i, .offset_delta = i, .key_len = 4 + i % 5,
                   .value_len = vlen, .nheaders = i % 3};
        put_record(out, &r);
    }
}

/* ---- Compressing, as each client does ---------------------------------------- */

typedef enum {
    V_NONE,
    V_GZIP,
    V_SNAPPY_RAW,    /* librdkafka */
    V_SNAPPY_XERIAL, /* the Java client */
    V_LZ4,
    V_ZSTD,          /* one-shot: content size in the frame header */
    V_ZSTD_STREAM,   /* streamed: no content size, as zstd-jni writes */
    V_COUNT
} variant_t;

static const char *const variant_names[V_COUNT] = {
    "none", "gzip", "snappy-raw", "snappy-xerial", "lz4", "zstd", "zstd-stream"};

static const int variant_codec[V_COUNT] = {
    COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_SNAPPY,
    COMPRESSION_LZ4, COMPRESSION_ZSTD, COMPRESSION_ZSTD};

static void gzip_member(bytes_t *out, const uint8_t *in, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    CHECK_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t bound = deflateBound(&z, (uLong)n);
    reserve(out, bound);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = out->p + out->len;
    z.avail_out = (uInt)bound;
    CHECK_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out->len += bound - z.avail_out;
    deflateEnd(&z);
}

static void snappy_raw(bytes_t *out, const uint8_t *in, size_t n)
{
    size_t clen = snappy_max_compressed_length(n);
    reserve(out, clen);
    CHECK_EQ(snappy_compress((const char *)in, n, (char *)out->p + out->len, &clen), SNAPPY_OK);
    out->len += clen;
}

/* xerial's SnappyOutputStream: a 16-byte header, then each block of input
 * (32 KiB in the Java client; smaller here so short inputs have several)
 * as [int32 compressed length][raw snappy]. */
static size_t xerial_block_size = 1000;

static void snappy_xerial(bytes_t *out, const uint8_t *in, size_t n)
{
    static const uint8_t magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    put(out, magic, sizeof(magic));
    put_be32(out, 1); /* version */
    put_be32(out, 1); /* compatible version */
    for (size_t at = 0; at < n; at += xerial_block_size) {
        size_t len = n - at < xerial_block_size ? n - at : xerial_block_size;
        bytes_t block = {0};
        snappy_raw(&block, in + at, len);
        put_be32(out, (uint32_t)block.len);
        put(out, block.p, block.len);
        bytes_free(&block);
    }
}

static void lz4_frame(bytes_t *out, const uint8_t *in, size_t n)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    size_t bound = LZ4F_compressFrameBound(n, &prefs);
    reserve(out, bound);
    size_t got = LZ4F_compressFrame(out->p + out->len, bound, in, n, &prefs);
    CHECK(!LZ4F_isError(got));
    out->len += got;
}

static void zstd_oneshot(bytes_t *out, const uint8_t *in, size_t n)
{
    size_t bound = ZSTD_compressBound(n);
    reserve(out, bound);
    size_t got = ZSTD_compress(out->p + out->len, bound, in, n, 3);
    CHECK(!ZSTD_isError(got));
    out->len += got;
}

/* Fed in pieces with the content size left out of the header, as a stream
 * of unknown length is written; with a checksum. */
static void zstd_stream(bytes_t *out, const uint8_t *in, size_t n)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t start = out->len;
    ZSTD_inBuffer ib = {in, n, 0};
    for (;;) {
        reserve(out, 4096);
        ZSTD_outBuffer ob = {out->p + out->len, out->cap - out->len, 0};
        size_t piece_end = ib.pos + 777 < n ? ib.pos + 777 : n;
        ZSTD_inBuffer piece = {in, piece_end, ib.pos};
        int last = piece_end == n;
        size_t left = ZSTD_compressStream2(c, &ob, &piece, last ? ZSTD_e_end : ZSTD_e_continue);
        CHECK(!ZSTD_isError(left));
        ib.pos = piece.pos;
        out->len += ob.pos;
        if (last && left == 0)
            break;
    }
    ZSTD_freeCCtx(c);
    CHECK(ZSTD_getFrameContentSize(out->p + start, out->len - start) == ZSTD_CONTENTSIZE_UNKNOWN);
}

static void compress_as(variant_t v, bytes_t *out, const uint8_t *in, size_t n)
{
    switch (v) {
    case V_NONE: put(out, in, n); break;
    case V_GZIP: gzip_member(out, in, n); break;
    case V_SNAPPY_RAW: snappy_raw(out, in, n); break;
    case V_SNAPPY_XERIAL: snappy_xerial(out, in, n); break;
    case V_LZ4: lz4_frame(out, in, n); break;
    case V_ZSTD: zstd_oneshot(out, in, n); break;
    case V_ZSTD_STREAM: zstd_stream(out, in, n); break;
    default: CHECK(0);
    }
}

/* ---- Batches ------------------------------------------------------------------- */

static void recrc(bytes_t *b)
{
    be32_put(b->p + BATCH_OFF_CRC, record_batch_compute_crc(b->p, b->len));
}

static void set_counts(bytes_t *b, int32_t count, int32_t last_offset_delta)
{
    be32_put(b->p + BATCH_OFF_RECORD_COUNT, (uint32_t)count);
    be32_put(b->p + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)last_offset_delta);
    recrc(b);
}

/* A producer's batch around an already compressed payload: base offset
 * BASE (as if the leader assigned it), first timestamp T0. */
static void wrap_batch(bytes_t *out, int codec, const uint8_t *payload, size_t n, int32_t count,
                       int64_t max_ts_delta)
{
    out->len = 0;
    put_fill(out, 0, BATCH_HEADER_LEN);
    put(out, payload, n);
    uint8_t *h = out->p;
    be64_put(h + BATCH_OFF_BASE_OFFSET, BASE);
    be32_put(h + BATCH_OFF_LENGTH, (uint32_t)(out->len - BATCH_LOG_OVERHEAD));
    be32_put(h + BATCH_OFF_LEADER_EPOCH, 5);
    h[BATCH_OFF_MAGIC] = 2;
    h[BATCH_OFF_ATTRIBUTES + 1] = (uint8_t)codec;
    be64_put(h + BATCH_OFF_FIRST_TIMESTAMP, (uint64_t)T0);
    be64_put(h + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)(T0 + max_ts_delta));
    be64_put(h + BATCH_OFF_PRODUCER_ID, (uint64_t)-1);
    h[BATCH_OFF_PRODUCER_EPOCH] = h[BATCH_OFF_PRODUCER_EPOCH + 1] = 0xff;
    be32_put(h + BATCH_OFF_BASE_SEQUENCE, (uint32_t)-1);
    set_counts(out, count, count - 1);
}

/* Records compressed as variant v and wrapped in a batch. */
static void make_batch(bytes_t *out, variant_t v, const bytes_t *records, int32_t count,
                       int64_t max_ts_delta)
{
    bytes_t payload = {0};
    compress_as(v, &payload, records->p, records->len);
    wrap_batch(out, variant_codec[v], payload.p, payload.len, count, max_ts_delta);
    bytes_free(&payload);
}

static char err[256];

static int validate(const bytes_t *b, size_t max)
{
    err[0] = 0;
    return batch_validate_records(b->p, b->len, max, err, sizeof(err));
}

/* validate() failed with code and a reason containing want. */
static int fails_with(const bytes_t *b, size_t max, int code, const char *want)
{
    int rc = validate(b, max);
    if (rc != code || !strstr(err, want)) {
        fprintf(stderr, "    got %d \"%s\", wanted %d \"%s\"\n", rc, err, code, want);
        return 0;
    }
    return 1;
}

static int find(const bytes_t *b, int64_t ts, int64_t *off, int64_t *rts)
{
    *off = *rts = -7;
    return batch_find_timestamp_any(b->p, b->len, ts, off, rts);
}

/* ---- Tests --------------------------------------------------------------------- */

static void test_compression_every_codec(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 20, 100);
    for (int v = 0; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &records, 20, 190);
        record_batch_t h;
        CHECK_EQ(record_batch_validate(b.p, b.len, &h), PLOG_OK);
        CHECK_EQ(h.attributes & BATCH_ATTR_COMPRESSION_MASK, variant_codec[v]);
        if (validate(&b, MIB) != COMPRESSION_OK)
            fprintf(stderr, "    %s: %s\n", variant_names[v], err);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
        CHECK_STR(err, "");
        int64_t off, ts;
        CHECK_EQ(find(&b, T0 - 5, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE && ts == T0);
        CHECK_EQ(find(&b, T0 + 55, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 6 && ts == T0 + 60);
        CHECK_EQ(find(&b, T0 + 190, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 19 && ts == T0 + 190);
        CHECK_EQ(find(&b, T0 + 191, &off, &ts), PLOG_ERR_NOT_FOUND);
        /* LogAppendTime: every record carries the batch's max timestamp. */
        b.p[BATCH_OFF_ATTRIBUTES + 1] |= BATCH_ATTR_LOG_APPEND_TIME;
        be64_put(b.p + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)(T0 + 1000));
        recrc(&b);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
        CHECK_EQ(find(&b, T0 + 500, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE && ts == T0 + 1000);
        CHECK_EQ(find(&b, T0 + 1001, &off, &ts), PLOG_ERR_NOT_FOUND);
    }
    bytes_free(&records);
    bytes_free(&b);
}

/* Null and empty keys and values, headers with null values, no headers,
 * timestamps out of order, a record of nothing but nulls. */
static void test_compression_record_shapes(void)
{
    static const rec_t shapes[] = {
        {.ts_delta = 5, .offset_delta = 0, .key_len = -1, .value_len = -1, .nheaders = 0},
        {.ts_delta = 50, .offset_delta = 1, .key_len = 0, .value_len = 0, .nheaders = 3},
        {.ts_delta = 10, .offset_delta = 2, .key_len = 3, .value_len = -1, .nheaders = 1},
        {.ts_delta = 70, .offset_delta = 3, .key_len = -1, .value_len = 0, .nheaders = 40},
        {.ts_delta = -3, .offset_delta = 4, .key_len = 0, .value_len = 300, .nheaders = 2},
    };
    bytes_t records = {0}, b = {0};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        put_record(&records, &shapes[i]);
    for (int v = 0; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &records, 5, 70);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
        int64_t off, ts;
        CHECK_EQ(find(&b, T0 + 20, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 1 && ts == T0 + 50);
        CHECK_EQ(find(&b, T0 + 60, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 3 && ts == T0 + 70);
        CHECK_EQ(find(&b, T0 - 3, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE && ts == T0 + 5);
        CHECK_EQ(find(&b, T0 + 71, &off, &ts), PLOG_ERR_NOT_FOUND);
    }
    bytes_free(&records);
    bytes_free(&b);
}

/* A record much larger than the 64 KiB window (a 200 KiB key and a 1 MiB
 * value) between small ones, in every codec. */
static void test_compression_large_record(void)
{
    bytes_t records = {0}, b = {0};
    rec_t small = {.ts_delta = 0, .offset_delta = 0, .key_len = 1, .value_len = 10};
    rec_t large = {.ts_delta = 1, .offset_delta = 1, .key_len = 200 * 1024,
                   .value_len = (int64_t)MIB + 17, .nheaders = 5};
    put_record(&records, &small);
    put_record(&records, &large);
    small.ts_delta = 2;
    small.offset_delta = 2;
    put_record(&records, &small);
    CHECK(records.len > MIB + 200 * 1024);
    xerial_block_size = 32 * 1024; /* as the Java client */
    for (int v = 0; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &records, 3, 2);
        if (validate(&b, 4 * MIB) != COMPRESSION_OK)
            fprintf(stderr, "    %s: %s\n", variant_names[v], err);
        CHECK_EQ(validate(&b, 4 * MIB), COMPRESSION_OK);
        /* The bound is on all of it, exactly. */
        CHECK_EQ(validate(&b, records.len), COMPRESSION_OK);
        if (v != V_NONE)
            CHECK(fails_with(&b, records.len - 1, COMPRESSION_ERR_TOO_LARGE, "more than"));
        int64_t off, ts;
        CHECK_EQ(find(&b, T0 + 2, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 2 && ts == T0 + 2);
    }
    xerial_block_size = 1000;
    bytes_free(&records);
    bytes_free(&b);
}

/* Every strict prefix of the compressed payload is rejected: as CORRUPT
 * where the codec's framing says the stream ends early, as INVALID where it
 * ends cleanly with records missing (uncompressed, or xerial snappy cut
 * between blocks); finding a timestamp never crashes on one. */
static void test_compression_truncations(void)
{
    bytes_t records = {0}, payload = {0}, b = {0};
    put_records(&records, 6, 40);
    for (int v = 0; v < V_COUNT; v++) {
        payload.len = 0;
        compress_as((variant_t)v, &payload, records.p, records.len);
        int bad = 0;
        for (size_t cut = 0; cut < payload.len; cut++) {
            wrap_batch(&b, variant_codec[v], payload.p, cut, 6, 50);
            int rc = validate(&b, MIB);
            int clean_end = v == V_NONE || v == V_SNAPPY_XERIAL;
            if (rc != COMPRESSION_ERR_CORRUPT && !(clean_end && rc == COMPRESSION_ERR_INVALID)) {
                if (!bad++)
                    fprintf(stderr, "    %s cut at %zu of %zu: \"%s\"\n", variant_names[v], cut,
                            payload.len, err);
            }
            int64_t off, ts;
            rc = find(&b, T0 + 1000, &off, &ts);
            CHECK(rc == COMPRESSION_ERR_CORRUPT || rc == COMPRESSION_ERR_INVALID || rc == PLOG_ERR_NOT_FOUND);
        }
        CHECK_EQ(bad, 0);
        wrap_batch(&b, variant_codec[v], payload.p, payload.len, 6, 50);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
    }
    bytes_free(&records);
    bytes_free(&payload);
    bytes_free(&b);
}

/* Flipped bits anywhere in the payload: an answer, never a crash (the unit
 * build runs under ASan and UBSan). Codecs with checksums catch most. */
static void test_compression_flipped_bytes(void)
{
    static const uint8_t masks[] = {0x01, 0x10, 0x80, 0xff};
    bytes_t records = {0}, payload = {0}, b = {0};
    put_records(&records, 6, 40);
    for (int v = 0; v < V_COUNT; v++) {
        payload.len = 0;
        compress_as((variant_t)v, &payload, records.p, records.len);
        int rejected = 0, tries = 0;
        for (size_t at = 0; at < payload.len; at++)
            for (size_t m = 0; m < sizeof(masks); m++) {
                payload.p[at] ^= masks[m];
                wrap_batch(&b, variant_codec[v], payload.p, payload.len, 6, 50);
                int rc = validate(&b, MIB);
                CHECK(rc == COMPRESSION_OK || rc == COMPRESSION_ERR_CORRUPT ||
                      rc == COMPRESSION_ERR_INVALID || rc == COMPRESSION_ERR_TOO_LARGE);
                CHECK(rc == COMPRESSION_OK || err[0] != 0);
                rejected += rc != COMPRESSION_OK;
                tries++;
                int64_t off, ts;
                rc = find(&b, T0 + 25, &off, &ts);
                CHECK(rc == COMPRESSION_OK || rc == PLOG_ERR_NOT_FOUND || rc == COMPRESSION_ERR_CORRUPT ||
                      rc == COMPRESSION_ERR_INVALID || rc == COMPRESSION_ERR_TOO_LARGE);
                payload.p[at] ^= masks[m];
            }
        /* Checksummed: gzip, lz4 (content checksum), streamed zstd. */
        if (v == V_GZIP || v == V_LZ4 || v == V_ZSTD_STREAM)
            CHECK(rejected > tries * 9 / 10);
    }
    bytes_free(&records);
    bytes_free(&payload);
    bytes_free(&b);
}

/* The header's count and last offset delta against the records. */
static void test_compression_counts(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 5, 30);
    for (int v = 0; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &records, 5, 40);
        set_counts(&b, 6, 5);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID,
                         "batch declares 6 records, the data holds 5"));
        set_counts(&b, 4, 3);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID,
                         "data continues after the 4 records the batch declares"));
        set_counts(&b, 5, 6);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID, "last offset delta 6 with 5 records"));
        set_counts(&b, 0, -1);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID, "batch declares 0 records"));
        set_counts(&b, 5, 4);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
    }
    bytes_free(&records);
    bytes_free(&b);
}

/* Offset deltas that skip or repeat, and bytes after the last record. */
static void test_compression_deltas_and_trailing(void)
{
    static const int32_t skipping[] = {0, 1, 3, 4, 5};
    static const int32_t repeating[] = {0, 0, 1, 2, 3};
    bytes_t skip = {0}, repeat = {0}, trailing = {0}, b = {0};
    for (int i = 0; i < 5; i++) {
        rec_t r = {.ts_delta = i, .offset_delta = skipping[i], .key_len = 2, .value_len = 9};
        put_record(&skip, &r);
        r.offset_delta = repeating[i];
        put_record(&repeat, &r);
    }
    put_records(&trailing, 5, 20);
    put_fill(&trailing, 0, 3);
    for (int v = 0; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &skip, 5, 4);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID, "record 2: offset delta 3, expected 2"));
        make_batch(&b, (variant_t)v, &repeat, 5, 4);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID, "record 1: offset delta 0, expected 1"));
        make_batch(&b, (variant_t)v, &trailing, 5, 40);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID, "data continues after the 5 records"));
        int64_t off, ts; /* finding stops at the answer, so it does not mind */
        CHECK_EQ(find(&b, T0 + 10, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 1 && ts == T0 + 10);
    }
    bytes_free(&skip);
    bytes_free(&repeat);
    bytes_free(&trailing);
    bytes_free(&b);
}

/* One hand-made record (its body, length prefix added) that must fail with
 * the given reason, uncompressed and through a codec. */
static void check_bad_record(const bytes_t *body, int64_t declared_len, const char *want)
{
    bytes_t records = {0}, b = {0};
    put_varint(&records, declared_len);
    put(&records, body->p, body->len);
    static const variant_t variants[] = {V_NONE, V_GZIP, V_ZSTD_STREAM};
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        make_batch(&b, variants[i], &records, 1, 0);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID, want));
        int64_t off, ts;
        CHECK_EQ(find(&b, T0, &off, &ts), COMPRESSION_ERR_INVALID);
    }
    bytes_free(&records);
    bytes_free(&b);
}

/* The start of a record body: attributes, timestamp and offset deltas. */
static void record_start(bytes_t *body)
{
    body->len = 0;
    put_byte(body, 0);
    put_varint(body, 0);
    put_varint(body, 0);
}

static void test_compression_malformed_records(void)
{
    bytes_t body = {0};
    record_start(&body);
    put_varint(&body, -2); /* key length */
    check_bad_record(&body, (int64_t)body.len, "record 0: key length -2");

    record_start(&body);
    put_varint(&body, -1);
    put_varint(&body, 50); /* value longer than the record */
    put_fill(&body, 'x', 10);
    check_bad_record(&body, (int64_t)body.len, "record 0: value of 50 bytes, only 10 left");

    record_start(&body);
    put_varint(&body, -1);
    put_varint(&body, -1);
    put_varint(&body, 1);
    put_varint(&body, -1); /* a header key cannot be null */
    put_varint(&body, -1);
    check_bad_record(&body, (int64_t)body.len, "record 0: header key length -1");

    record_start(&body);
    put_varint(&body, -1);
    put_varint(&body, -1);
    put_varint(&body, -1); /* header count */
    check_bad_record(&body, (int64_t)body.len, "record 0: -1 headers");

    record_start(&body);
    put_varint(&body, -1);
    put_varint(&body, -1);
    put_varint(&body, 1000); /* headers the record has no room for */
    put_fill(&body, 0, 20);
    check_bad_record(&body, (int64_t)body.len, "record 0: 1000 headers in 20 bytes");

    record_start(&body);
    put_varint(&body, -1);
    put_varint(&body, 50); /* the record's length covers it, the data does not */
    put_fill(&body, 'x', 10);
    check_bad_record(&body, (int64_t)body.len + 40, "record 0: the data ends inside it");

    record_start(&body);
    put_varint(&body, -1);
    put_varint(&body, -1);
    put_varint(&body, 0);
    put_byte(&body, 0);
    check_bad_record(&body, (int64_t)body.len, "record 0: 1 bytes left after its fields");
    check_bad_record(&body, (int64_t)body.len - 2, "record 0: its fields run past its length");
    check_bad_record(&body, -5, "record 0: length -5");

    body.len = 0;
    put_byte(&body, 0);
    put_varint(&body, 0);
    put_fill(&body, 0x80, 5); /* an offset delta varint of six bytes */
    put_byte(&body, 0);
    put_fill(&body, 0, 3);
    check_bad_record(&body, (int64_t)body.len, "record 0: offset delta varint longer than 5 bytes");

    body.len = 0;
    put_byte(&body, 0);
    put_fill(&body, 0xff, 10); /* a timestamp varlong of eleven bytes */
    put_byte(&body, 0);
    put_fill(&body, 0, 4);
    check_bad_record(&body, (int64_t)body.len, "record 0: timestamp delta varint longer than 10");

    /* The longest legal encodings are fine, high bits dropped as Java does. */
    bytes_t records = {0}, b = {0};
    put_varint(&records, 19);
    put_byte(&records, 0);
    put_fill(&records, 0xff, 9);
    put_byte(&records, 0x7f); /* timestamp delta: ten bytes */
    put_fill(&records, 0x80, 4);
    put_byte(&records, 0x70); /* offset delta 0 in five bytes, high bits dropped */
    put_varint(&records, -1); /* key */
    put_varint(&records, -1); /* value */
    put_varint(&records, 0);  /* headers */
    CHECK(records.len == 20);
    make_batch(&b, V_NONE, &records, 1, 0);
    CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
    bytes_free(&records);
    bytes_free(&b);
    bytes_free(&body);
}

static void test_compression_unsupported_codec(void)
{
    bytes_t records = {0}, b = {0};
    put_records(&records, 2, 5);
    for (int codec = 5; codec <= 7; codec++) {
        make_batch(&b, V_NONE, &records, 2, 10);
        b.p[BATCH_OFF_ATTRIBUTES + 1] = (uint8_t)codec;
        recrc(&b);
        char want[64];
        snprintf(want, sizeof(want), "codec %d", codec);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_UNSUPPORTED, want));
        int64_t off, ts;
        CHECK_EQ(find(&b, T0, &off, &ts), COMPRESSION_ERR_UNSUPPORTED);
    }
    /* A malformed header is corrupt, whatever the codec. */
    CHECK_EQ(batch_validate_records(b.p, BATCH_HEADER_LEN - 1, MIB, err, sizeof(err)),
             COMPRESSION_ERR_CORRUPT);
    CHECK_EQ(batch_validate_records(b.p, b.len - 1, MIB, NULL, 0), COMPRESSION_ERR_CORRUPT);
    bytes_free(&records);
    bytes_free(&b);
}

/* 16 MiB of zeros in one record compresses to little; a 1 MiB bound stops
 * it (raw snappy before anything is allocated, the streaming codecs within
 * a window of the bound). */
static void test_compression_bomb(void)
{
    static const char *const prefix[] = {"", "gzip: ", "snappy: ", "lz4: ", "zstd: "};
    const int64_t value_len = (int64_t)(16 * MIB);
    bytes_t body = {0}, records = {0}, b = {0};
    put_byte(&body, 0);
    put_varint(&body, 0);     /* timestamp delta */
    put_varint(&body, 0);     /* offset delta */
    put_varint(&body, -1);    /* key */
    put_varint(&body, value_len);
    put_fill(&body, 0, (size_t)value_len);
    put_varint(&body, 0);     /* headers */
    put_varint(&records, (int64_t)body.len);
    put(&records, body.p, body.len);
    xerial_block_size = 32 * 1024;
    for (int v = V_GZIP; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &records, 1, 0);
        CHECK(b.len < MIB);
        CHECK(fails_with(&b, MIB, COMPRESSION_ERR_TOO_LARGE, "more than 1048576 bytes"));
        CHECK(strncmp(err, prefix[variant_codec[v]], strlen(prefix[variant_codec[v]])) == 0);
        CHECK_EQ(validate(&b, 32 * MIB), COMPRESSION_OK);
    }
    xerial_block_size = 1000;
    bytes_free(&body);
    bytes_free(&records);
    bytes_free(&b);
}

/* A record longer than the caller allows is refused as soon as its length
 * is read: the streaming codecs have decompressed one window of it then, and
 * the decompressed bytes are reported (none for an uncompressed batch, nor
 * for raw snappy, whose one block names a size that one record of the limit
 * cannot fill, and is refused before it is decoded). */
static void test_compression_record_limit(void)
{
    const int64_t value_len = (int64_t)(4 * MIB);
    bytes_t body = {0}, records = {0}, b = {0};
    put_byte(&body, 0);
    put_varint(&body, 0);
    put_varint(&body, 0);
    put_varint(&body, -1);
    put_varint(&body, value_len);
    put_fill(&body, 0, (size_t)value_len);
    put_varint(&body, 0);
    put_varint(&records, (int64_t)body.len);
    put(&records, body.p, body.len);
    xerial_block_size = 32 * 1024;
    for (int v = 0; v < V_COUNT; v++) {
        make_batch(&b, (variant_t)v, &records, 1, 0);
        batch_limits_t lim = {.max_decompressed = 8 * MIB, .max_record = MIB};
        size_t used = 7;
        err[0] = 0;
        int rc = batch_validate_records_within(b.p, b.len, &lim, &used, err, sizeof(err));
        CHECK_EQ(rc, COMPRESSION_ERR_TOO_LARGE);
        if (v == V_SNAPPY_RAW) /* one block, its size first: more than one record of 1 MiB holds */
            CHECK(strstr(err, "snappy: records decompress to more than 1048581 bytes"));
        else
            CHECK(strstr(err, "record 0 is ") && strstr(err, "bytes, more than 1048576"));
        if (v == V_NONE || v == V_SNAPPY_RAW)
            CHECK_EQ(used, 0);
        else
            CHECK(used > 0 && used <= COMPRESSION_WINDOW_BYTES);
        lim.max_record = body.len;
        CHECK_EQ(batch_validate_records_within(b.p, b.len, &lim, &used, err, sizeof(err)), COMPRESSION_OK);
        CHECK_EQ(used, v == V_NONE ? 0 : records.len);
    }
    xerial_block_size = 1000;
    bytes_free(&body);
    bytes_free(&records);
    bytes_free(&b);
}

/* Several gzip members, lz4 frames, zstd frames or xerial streams back to
 * back read as one. */
static void test_compression_concatenated(void)
{
    bytes_t records = {0}, payload = {0}, b = {0};
    put_records(&records, 8, 50);
    size_t half = 0;
    /* Split between records 3 and 4: skip four length-prefixed records. */
    for (int i = 0; i < 4; i++) {
        uint64_t len = 0;
        int shift = 0;
        uint8_t byte;
        do {
            byte = records.p[half++];
            len |= (uint64_t)(byte & 0x7f) << shift;
            shift += 7;
        } while (byte & 0x80);
        half += (size_t)(len >> 1);
    }
    static const variant_t variants[] = {V_GZIP, V_SNAPPY_XERIAL, V_LZ4, V_ZSTD, V_ZSTD_STREAM};
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        payload.len = 0;
        compress_as(variants[i], &payload, records.p, half);
        compress_as(variants[i], &payload, records.p + half, records.len - half);
        wrap_batch(&b, variant_codec[variants[i]], payload.p, payload.len, 8, 70);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_OK);
        int64_t off, ts;
        CHECK_EQ(find(&b, T0 + 65, &off, &ts), COMPRESSION_OK);
        CHECK(off == BASE + 7 && ts == T0 + 70);
        /* Garbage after the last one is not another member or frame. */
        put_fill(&payload, 0x55, 9);
        wrap_batch(&b, variant_codec[variants[i]], payload.p, payload.len, 8, 70);
        CHECK_EQ(validate(&b, MIB), COMPRESSION_ERR_CORRUPT);
    }
    bytes_free(&records);
    bytes_free(&payload);
    bytes_free(&b);
}

/* Codec-level damage is reported with the codec's name and reason. */
static void test_compression_codec_errors(void)
{
    bytes_t records = {0}, payload = {0}, b = {0};
    put_records(&records, 3, 20);

    compress_as(V_GZIP, &payload, records.p, records.len);
    payload.p[payload.len - 2] ^= 1; /* the trailer's length */
    wrap_batch(&b, COMPRESSION_GZIP, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "gzip: incorrect length check"));
    wrap_batch(&b, COMPRESSION_GZIP, payload.p, payload.len - 3, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "gzip: the stream ends early"));
    payload.p[0] = 0; /* not a gzip header */
    wrap_batch(&b, COMPRESSION_GZIP, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "gzip: incorrect header check"));

    payload.len = 0;
    compress_as(V_SNAPPY_XERIAL, &payload, records.p, records.len);
    put_fill(&payload, 0, 2);
    wrap_batch(&b, COMPRESSION_SNAPPY, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "snappy: 2 stray bytes"));
    payload.len -= 2;
    be32_put(payload.p + 8, 0); /* xerial version 0 */
    wrap_batch(&b, COMPRESSION_SNAPPY, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "snappy: xerial version 0"));
    be32_put(payload.p + 8, 1);
    be32_put(payload.p + 16, 100000); /* a block longer than what is left */
    wrap_batch(&b, COMPRESSION_SNAPPY, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "snappy: xerial block of 100000 bytes"));

    payload.len = 0;
    compress_as(V_SNAPPY_RAW, &payload, records.p, records.len);
    wrap_batch(&b, COMPRESSION_SNAPPY, payload.p, payload.len - 1, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "snappy: corrupt block"));
    put_fill(&payload, 0xff, 1);
    wrap_batch(&b, COMPRESSION_SNAPPY, payload.p + payload.len - 1, 1, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "snappy: bad length preamble"));

    payload.len = 0;
    compress_as(V_LZ4, &payload, records.p, records.len);
    wrap_batch(&b, COMPRESSION_LZ4, payload.p, 0, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "lz4: the frame ends early"));
    payload.p[payload.len - 1] ^= 1; /* the content checksum */
    wrap_batch(&b, COMPRESSION_LZ4, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "lz4: "));

    payload.len = 0;
    compress_as(V_ZSTD_STREAM, &payload, records.p, records.len);
    payload.p[payload.len - 1] ^= 1; /* the checksum */
    wrap_batch(&b, COMPRESSION_ZSTD, payload.p, payload.len, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "zstd: "));
    wrap_batch(&b, COMPRESSION_ZSTD, payload.p, 0, 3, 20);
    CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "zstd: the frame ends early"));

    bytes_free(&records);
    bytes_free(&payload);
    bytes_free(&b);
}

/* LZ4 frames as other writers make them: linked blocks, block checksums,
 * a content size, the largest block size; records larger than a block. */
static void test_compression_lz4_frame_options(void)
{
    bytes_t records = {0}, payload = {0}, b = {0};
    put_records(&records, 3, 300 * 1024);
    for (int option = 0; option < 4; option++) {
        LZ4F_preferences_t prefs;
        memset(&prefs, 0, sizeof(prefs));
        prefs.frameInfo.blockSizeID = option & 1 ? LZ4F_max4MB : LZ4F_max64KB;
        prefs.frameInfo.blockMode = option & 2 ? LZ4F_blockLinked : LZ4F_blockIndependent;
        prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
        prefs.frameInfo.contentSize = option == 3 ? records.len : 0;
        size_t bound = LZ4F_compressFrameBound(records.len, &prefs);
        payload.len = 0;
        reserve(&payload, bound);
        size_t got = LZ4F_compressFrame(payload.p, bound, records.p, records.len, &prefs);
        CHECK(!LZ4F_isError(got));
        if (LZ4F_isError(got))
            break;
        payload.len = got;
        wrap_batch(&b, COMPRESSION_LZ4, payload.p, payload.len, 3, 20);
        CHECK_EQ(validate(&b, 4 * MIB), COMPRESSION_OK);
        payload.p[payload.len / 2] ^= 0x40; /* caught by the block checksum */
        wrap_batch(&b, COMPRESSION_LZ4, payload.p, payload.len, 3, 20);
        CHECK(fails_with(&b, 4 * MIB, COMPRESSION_ERR_CORRUPT, "lz4: "));
    }
    bytes_free(&records);
    bytes_free(&payload);
    bytes_free(&b);
}

/* A zstd frame declaring a window beyond 2^27 bytes is refused before any
 * window is allocated; 2^27 itself is read. Hand-made frames: magic, a
 * descriptor without content size, the window byte, one empty last block. */
static void test_compression_zstd_window_limit(void)
{
    bytes_t b = {0};
    for (int window_log = 26; window_log <= 30; window_log++) {
        uint8_t frame[] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, (uint8_t)((window_log - 10) << 3),
                           0x01, 0x00, 0x00};
        wrap_batch(&b, COMPRESSION_ZSTD, frame, sizeof(frame), 1, 0);
        if (window_log <= 27)
            CHECK(fails_with(&b, MIB, COMPRESSION_ERR_INVALID,
                             "batch declares 1 records, the data holds 0"));
        else
            CHECK(fails_with(&b, MIB, COMPRESSION_ERR_CORRUPT, "zstd: "));
    }
    bytes_free(&b);
}

void suite_compression(void)
{
    RUN(test_compression_every_codec);
    RUN(test_compression_record_shapes);
    RUN(test_compression_large_record);
    RUN(test_compression_truncations);
    RUN(test_compression_flipped_bytes);
    RUN(test_compression_counts);
    RUN(test_compression_deltas_and_trailing);
    RUN(test_compression_malformed_records);
    RUN(test_compression_unsupported_codec);
    RUN(test_compression_bomb);
    RUN(test_compression_record_limit);
    RUN(test_compression_concatenated);
    RUN(test_compression_codec_errors);
    RUN(test_compression_lz4_frame_options);
    RUN(test_compression_zstd_window_limit);
}
