/* test_message_convert.c -- legacy message sets (magic 0 and 1) up-converted
 * to one v2 batch. Sets are built here as Kafka 0.8-0.10 clients built them:
 * LegacyRecord entries with their CRC-32 (zlib), compressed wrappers whose
 * value is an inner message set compressed with the codec libraries (gzip
 * through deflate, raw and xerial-framed snappy, LZ4 frames with the right
 * and the wrong header checksum). The output is checked with the broker's
 * own v2 readers and parsed record by record. */
#include "broker/log/compression.h"
#include "broker/log/message_convert.h"
#include "broker/log/partition_log.h"
#include "suites.h"
#include "test_bytes.h"
#include "unit.h"
#include "base/endian.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MIB ((size_t)1 << 20)
#define T0 1700000000000LL

/* ---- Legacy messages ----------------------------------------------------------- */

typedef struct {
    const char *key;   /* NULL: null */
    const char *value; /* NULL: null */
    int64_t ts;        /* magic 1 only */
} msg_t;

/* One LegacyRecord entry: offset, size, CRC-32 of magic..end, the body. */
static void put_entry(bytes_t *out, int magic, int attrs, int64_t offset, int64_t ts,
                      const void *key, int32_t klen, const void *value, int32_t vlen)
{
    bytes_t body = {0};
    put_byte(&body, (uint8_t)magic);
    put_byte(&body, (uint8_t)attrs);
    if (magic == 1)
        put_be64(&body, (uint64_t)ts);
    put_be32(&body, (uint32_t)klen);
    if (klen > 0)
        put(&body, key, (size_t)klen);
    put_be32(&body, (uint32_t)vlen);
    if (vlen > 0)
        put(&body, value, (size_t)vlen);
    put_be64(out, (uint64_t)offset);
    put_be32(out, (uint32_t)(body.len + 4));
    put_be32(out, (uint32_t)crc32(0L, body.p, (uInt)body.len));
    put(out, body.p, body.len);
    bytes_free(&body);
}

static int32_t slen(const char *s)
{
    return s ? (int32_t)strlen(s) : -1;
}

/* Plain messages; offsets as the client wrote them (relative under magic 1
 * inside a wrapper, here simply 0..n-1). */
static void put_msgs(bytes_t *out, int magic, const msg_t *m, int n)
{
    for (int i = 0; i < n; i++)
        put_entry(out, magic, 0, i, m[i].ts, m[i].key, slen(m[i].key), m[i].value,
                  slen(m[i].value));
}

/* ---- Compressors ---------------------------------------------------------------- */

enum { C_GZIP, C_SNAPPY_RAW, C_SNAPPY_XERIAL, C_LZ4, C_LZ4_BAD_HC, C_LZ4_SIZE, C_COUNT };
static const char *const cnames[C_COUNT] = {"gzip", "snappy-raw", "snappy-xerial", "lz4",
                                             "lz4-bad-hc", "lz4-content-size"};
static const int ccodec[C_COUNT] = {1, 2, 2, 3, 3, 3};

static void gzip_of(bytes_t *out, const uint8_t *in, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    uint8_t *buf = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort();
    put(out, buf, cap - z.avail_out);
    deflateEnd(&z);
    free(buf);
}

static void snappy_raw_of(bytes_t *out, const uint8_t *in, size_t n)
{
    size_t cap = snappy_max_compressed_length(n);
    char *buf = malloc(cap);
    if (snappy_compress((const char *)in, n, buf, &cap) != SNAPPY_OK)
        abort();
    put(out, buf, cap);
    free(buf);
}

/* xerial's SnappyOutputStream: header, then [int32 length][raw snappy]
 * blocks of at most 32 KiB input each (small blocks here, to have several). */
static void snappy_xerial_of(bytes_t *out, const uint8_t *in, size_t n)
{
    static const uint8_t header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    put(out, header, sizeof(header));
    for (size_t off = 0; off < n;) {
        size_t take = n - off < 40 ? n - off : 40;
        bytes_t blk = {0};
        snappy_raw_of(&blk, in + off, take);
        put_be32(out, (uint32_t)blk.len);
        put(out, blk.p, blk.len);
        bytes_free(&blk);
        off += take;
    }
}

static void lz4_of(bytes_t *out, const uint8_t *in, size_t n, int content_size, int bad_hc)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockMode = LZ4F_blockIndependent; /* as KafkaLZ4BlockOutputStream */
    if (content_size)
        prefs.frameInfo.contentSize = n;
    size_t cap = LZ4F_compressFrameBound(n, &prefs);
    uint8_t *buf = malloc(cap);
    size_t got = LZ4F_compressFrame(buf, cap, in, n, &prefs);
    if (LZ4F_isError(got))
        abort();
    if (bad_hc) {
        size_t hc = (buf[4] & 0x08) ? 14 : 6;
        buf[hc] ^= 0x5a; /* Kafka 0.8 hashed the magic number too: some other byte */
    }
    put(out, buf, got);
    free(buf);
}

static void compress_as(int c, bytes_t *out, const bytes_t *in)
{
    switch (c) {
    case C_GZIP: gzip_of(out, in->p, in->len); break;
    case C_SNAPPY_RAW: snappy_raw_of(out, in->p, in->len); break;
    case C_SNAPPY_XERIAL: snappy_xerial_of(out, in->p, in->len); break;
    case C_LZ4: lz4_of(out, in->p, in->len, 0, 0); break;
    case C_LZ4_BAD_HC: lz4_of(out, in->p, in->len, 0, 1); break;
    default: lz4_of(out, in->p, in->len, 1, 0); break;
    }
}

/* A wrapper message of magic and codec whose value is inner compressed. */
static void put_wrapper(bytes_t *out, int magic, int c, int extra_attrs, int64_t offset,
                        int64_t ts, const bytes_t *inner)
{
    bytes_t z = {0};
    compress_as(c, &z, inner);
    put_entry(out, magic, ccodec[c] | extra_attrs, offset, ts, NULL, -1, z.p, (int32_t)z.len);
    bytes_free(&z);
}

/* ---- The output ------------------------------------------------------------------- */

typedef struct {
    int n;
    int64_t first_ts, max_ts;
    char key[8][64], value[8][64];
    int key_null[8], value_null[8];
    int64_t ts[8];
} parsed_t;

static int64_t get_varint(const uint8_t **p)
{
    uint64_t raw = 0;
    for (int i = 0;; i++) {
        uint8_t b = *(*p)++;
        raw |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            break;
    }
    return (raw & 1) ? -(int64_t)(raw >> 1) - 1 : (int64_t)(raw >> 1);
}

/* Check out as a sound v2 batch (header, CRC-32C, records) and parse it. */
static int parse_out(const uint8_t *out, size_t len, parsed_t *r)
{
    record_batch_t h;
    char why[256] = "";
    memset(r, 0, sizeof(*r));
    if (record_batch_validate(out, len, &h) != PLOG_OK || (size_t)record_batch_size(&h) != len)
        return -1;
    if (h.base_offset != 0 || h.producer_id != -1 || h.producer_epoch != -1 ||
        h.base_sequence != -1 || h.attributes != 0 || h.record_count > 8)
        return -1;
    if (batch_validate_records(out, len, MIB, why, sizeof(why)) != COMPRESSION_OK) {
        fprintf(stderr, "  batch_validate_records: %s\n", why);
        return -1;
    }
    r->n = h.record_count;
    r->first_ts = h.first_timestamp;
    r->max_ts = h.max_timestamp;
    const uint8_t *p = out + BATCH_HEADER_LEN;
    for (int i = 0; i < r->n; i++) {
        get_varint(&p); /* length */
        p++;            /* attributes */
        r->ts[i] = h.first_timestamp + get_varint(&p);
        if (get_varint(&p) != i)
            return -1;
        int64_t k = get_varint(&p);
        r->key_null[i] = k < 0;
        if (k > 63)
            return -1;
        if (k > 0) {
            memcpy(r->key[i], p, (size_t)k);
            p += k;
        }
        int64_t v = get_varint(&p);
        r->value_null[i] = v < 0;
        if (v > 63)
            return -1;
        if (v > 0) {
            memcpy(r->value[i], p, (size_t)v);
            p += v;
        }
        if (get_varint(&p) != 0)
            return -1;
    }
    return p == out + len ? 0 : -1;
}

static char err[256];

static int convert(const bytes_t *in, size_t max, parsed_t *r)
{
    uint8_t *out = NULL;
    size_t outlen = 0;
    err[0] = 0;
    int rc = message_set_upconvert(in->p, in->len, max, &out, &outlen, err, sizeof(err));
    if (rc == MSGCONV_OK) {
        if (!out || parse_out(out, outlen, r) != 0)
            rc = 99;
    } else if (out || outlen || !err[0]) {
        rc = 98;
    }
    free(out);
    return rc;
}

static int fails_with(const bytes_t *in, size_t max, int code, const char *want)
{
    parsed_t r;
    int rc = convert(in, max, &r);
    if (rc != code || (want && !strstr(err, want))) {
        fprintf(stderr, "  expected %d (%s), got %d: %s\n", code, want ? want : "", rc, err);
        return 0;
    }
    return 1;
}

static int matches(const parsed_t *r, int i, const msg_t *m, int64_t ts)
{
    if (r->ts[i] != ts)
        return 0;
    if ((m->key == NULL) != r->key_null[i] || (m->value == NULL) != r->value_null[i])
        return 0;
    if (m->key && strcmp(r->key[i], m->key) != 0)
        return 0;
    return !m->value || strcmp(r->value[i], m->value) == 0;
}

static const msg_t MSGS[4] = {
    {"k0", "v0", T0 + 5},
    {NULL, "no key", T0 + 20},
    {"no value", NULL, T0 + 10},
    {"", "", T0},
};

/* ---- Tests --------------------------------------------------------------------------- */

static void test_message_convert_is_legacy(void)
{
    uint8_t b[17] = {0};
    CHECK(message_set_is_legacy(b, 17));
    b[16] = 1;
    CHECK(message_set_is_legacy(b, 17));
    b[16] = 2;
    CHECK(!message_set_is_legacy(b, 17));
    b[16] = 0;
    CHECK(!message_set_is_legacy(b, 16));
    CHECK(!message_set_is_legacy(NULL, 0));
}

static void test_message_convert_magic0(void)
{
    bytes_t set = {0};
    put_msgs(&set, 0, MSGS, 4);
    parsed_t r;
    CHECK_EQ(convert(&set, MIB, &r), MSGCONV_OK);
    CHECK_EQ(r.n, 4);
    CHECK_EQ(r.first_ts, -1);
    CHECK_EQ(r.max_ts, -1);
    for (int i = 0; i < 4 && i < r.n; i++)
        CHECK(matches(&r, i, &MSGS[i], -1));
    bytes_free(&set);
}

static void test_message_convert_magic1(void)
{
    bytes_t set = {0};
    put_msgs(&set, 1, MSGS, 4);
    parsed_t r;
    CHECK_EQ(convert(&set, MIB, &r), MSGCONV_OK);
    CHECK_EQ(r.n, 4);
    CHECK_EQ(r.first_ts, T0 + 5);
    CHECK_EQ(r.max_ts, T0 + 20);
    for (int i = 0; i < 4 && i < r.n; i++)
        CHECK(matches(&r, i, &MSGS[i], MSGS[i].ts));
    /* One message alone, and a magic 0 one then a magic 1 one. */
    bytes_t one = {0};
    put_msgs(&one, 1, MSGS, 1);
    CHECK_EQ(convert(&one, MIB, &r), MSGCONV_OK);
    CHECK_EQ(r.n, 1);
    CHECK(matches(&r, 0, &MSGS[0], T0 + 5));
    bytes_t mixed = {0};
    put_msgs(&mixed, 0, MSGS, 1);
    put_msgs(&mixed, 1, MSGS + 1, 1);
    CHECK_EQ(convert(&mixed, MIB, &r), MSGCONV_OK);
    CHECK_EQ(r.n, 2);
    CHECK_EQ(r.first_ts, -1);
    CHECK_EQ(r.max_ts, T0 + 20);
    CHECK(matches(&r, 0, &MSGS[0], -1));
    CHECK(matches(&r, 1, &MSGS[1], T0 + 20));
    bytes_free(&set);
    bytes_free(&one);
    bytes_free(&mixed);
}

static void test_message_convert_every_codec(void)
{
    for (int c = 0; c < C_COUNT; c++) {
        for (int magic = 0; magic <= 1; magic++) {
            bytes_t inner = {0}, set = {0};
            put_msgs(&inner, magic, MSGS, 4);
            /* A plain message, the wrapper, another plain one. */
            put_msgs(&set, magic, MSGS + 3, 1);
            put_wrapper(&set, magic, c, 0, 4, T0 + 100, &inner);
            put_msgs(&set, magic, MSGS, 1);
            parsed_t r;
            int rc = convert(&set, MIB, &r);
            if (c == C_LZ4_BAD_HC && magic == 1) {
                /* Only magic 0 frames may carry Kafka 0.8's wrong checksum. */
                CHECK_EQ(rc, MSGCONV_ERR_CORRUPT);
                CHECK(strstr(err, "lz4") != NULL);
            } else {
                if (rc != MSGCONV_OK)
                    fprintf(stderr, "  %s magic %d: %d %s\n", cnames[c], magic, rc, err);
                CHECK_EQ(rc, MSGCONV_OK);
                CHECK_EQ(r.n, 6);
                CHECK(matches(&r, 0, &MSGS[3], magic ? T0 : -1));
                for (int i = 0; i < 4; i++)
                    CHECK(matches(&r, 1 + i, &MSGS[i], magic ? MSGS[i].ts : -1));
                CHECK(matches(&r, 5, &MSGS[0], magic ? T0 + 5 : -1));
                CHECK_EQ(r.max_ts, magic ? T0 + 20 : -1);
            }
            bytes_free(&inner);
            bytes_free(&set);
        }
    }
}

static void test_message_convert_log_append_time_wrapper(void)
{
    /* A magic 1 wrapper stamped LogAppendTime gives its inner messages its
     * own timestamp, as AbstractLegacyRecordBatch does. */
    bytes_t inner = {0}, set = {0};
    put_msgs(&inner, 1, MSGS, 3);
    put_wrapper(&set, 1, C_GZIP, 0x08, 2, T0 + 777, &inner);
    parsed_t r;
    CHECK_EQ(convert(&set, MIB, &r), MSGCONV_OK);
    CHECK_EQ(r.n, 3);
    for (int i = 0; i < 3 && i < r.n; i++)
        CHECK(matches(&r, i, &MSGS[i], T0 + 777));
    bytes_free(&inner);
    bytes_free(&set);
}

static void test_message_convert_crc(void)
{
    bytes_t set = {0};
    put_msgs(&set, 1, MSGS, 2);
    set.p[set.len - 1] ^= 1; /* the last value byte */
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "CRC"));
    set.p[set.len - 1] ^= 1;
    set.p[12] ^= 0x80; /* the first CRC itself */
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "CRC"));
    bytes_free(&set);
    /* An inner message's CRC, inside a wrapper. */
    bytes_t inner = {0};
    put_msgs(&inner, 0, MSGS, 2);
    inner.p[inner.len - 1] ^= 1;
    put_wrapper(&set, 0, C_SNAPPY_XERIAL, 0, 1, 0, &inner);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "CRC"));
    bytes_free(&inner);
    bytes_free(&set);
}

/* Entry boundaries in a set (where a prefix is itself a whole set). */
static int is_boundary(const bytes_t *set, size_t at)
{
    for (size_t off = 0; off < set->len;) {
        if (off == at)
            return 1;
        off += 12 + be32_get(set->p + off + 8);
    }
    return 0;
}

static void test_message_convert_truncations(void)
{
    for (int c = 0; c < C_COUNT; c++) {
        if (c == C_LZ4_BAD_HC)
            continue;
        bytes_t inner = {0}, set = {0};
        put_msgs(&inner, 1, MSGS, 4);
        put_msgs(&set, 1, MSGS, 1);
        put_wrapper(&set, 1, c, 0, 4, T0, &inner);
        put_msgs(&set, 1, MSGS + 1, 1);
        int bad = 0;
        for (size_t n = 0; n < set.len; n++) {
            bytes_t cut = {set.p, n, n};
            parsed_t r;
            int rc = convert(&cut, MIB, &r);
            int ok = n > 0 && is_boundary(&set, n);
            if (ok ? rc != MSGCONV_OK : (rc != MSGCONV_ERR_CORRUPT))
                bad++;
        }
        if (bad)
            fprintf(stderr, "  %s: %d bad truncations\n", cnames[c], bad);
        CHECK_EQ(bad, 0);
        /* Truncated inside the compressed value, with size and CRC fixed up:
         * the codec's data ends early. */
        bytes_t wrapped = {0}, z = {0};
        compress_as(c, &z, &inner);
        put_entry(&wrapped, 1, ccodec[c], 0, T0, NULL, -1, z.p, (int32_t)(z.len - 3));
        CHECK(fails_with(&wrapped, MIB, MSGCONV_ERR_CORRUPT, "compressed message 0"));
        bytes_free(&wrapped);
        bytes_free(&z);
        bytes_free(&inner);
        bytes_free(&set);
    }
}

static void test_message_convert_flipped_bytes(void)
{
    /* Every byte of a set flipped in turn: an answer, never a crash. */
    bytes_t inner = {0}, set = {0};
    put_msgs(&inner, 0, MSGS, 3);
    put_wrapper(&set, 0, C_LZ4, 0, 2, 0, &inner);
    put_msgs(&set, 0, MSGS, 1);
    for (size_t i = 0; i < set.len; i++) {
        set.p[i] ^= 0xff;
        parsed_t r;
        int rc = convert(&set, MIB, &r);
        CHECK(rc == MSGCONV_OK || rc == MSGCONV_ERR_CORRUPT || rc == MSGCONV_ERR_INVALID ||
              rc == MSGCONV_ERR_TOO_LARGE || rc == MSGCONV_ERR_UNSUPPORTED);
        set.p[i] ^= 0xff;
    }
    bytes_free(&inner);
    bytes_free(&set);
}

static void test_message_convert_invalid(void)
{
    bytes_t inner = {0}, middle = {0}, set = {0};
    /* Nested compression. */
    put_msgs(&inner, 1, MSGS, 2);
    put_wrapper(&middle, 1, C_GZIP, 0, 1, T0, &inner);
    put_wrapper(&set, 1, C_SNAPPY_RAW, 0, 0, T0, &middle);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "compressed"));
    bytes_free(&set);
    /* A magic 1 wrapper holding magic 0 messages, and the other way round. */
    bytes_t inner0 = {0};
    put_msgs(&inner0, 0, MSGS, 2);
    put_wrapper(&set, 1, C_GZIP, 0, 1, T0, &inner0);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "magic"));
    bytes_free(&set);
    put_wrapper(&set, 0, C_GZIP, 0, 1, 0, &inner);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "magic"));
    bytes_free(&set);
    /* A wrapper with a null value, and one holding nothing. */
    put_entry(&set, 1, 1, 0, T0, NULL, -1, NULL, -1);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "null"));
    bytes_free(&set);
    bytes_t empty = {0};
    put_wrapper(&set, 1, C_GZIP, 0, 0, T0, &empty);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "no messages"));
    bytes_free(&set);
    /* A magic 1 wrapper's offset is 0 or at least its last inner offset
     * (inner offsets here 0, 1). */
    put_wrapper(&set, 1, C_GZIP, 0, 0, T0, &inner);
    put_wrapper(&set, 1, C_GZIP, 0, 1, T0, &inner);
    put_wrapper(&set, 1, C_GZIP, 0, 7, T0, &inner);
    parsed_t r;
    CHECK_EQ(convert(&set, MIB, &r), MSGCONV_OK);
    CHECK_EQ(r.n, 6);
    put_wrapper(&set, 1, C_GZIP, 0, 0, T0, &inner);
    CHECK_EQ(convert(&set, MIB, &r), MSGCONV_OK);
    bytes_free(&set);
    put_wrapper(&set, 1, C_LZ4, 0, 0, T0, &inner);
    bytes_t low = {0};
    put_entry(&low, 1, 0, 5, T0, NULL, -1, "x", 1);
    put_wrapper(&set, 1, C_GZIP, 0, 4, T0, &low);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "offset 4 is below its last inner offset 5"));
    bytes_free(&low);
    bytes_free(&set);
    /* Magic 0 wrappers carry absolute inner offsets: nothing to check. */
    put_entry(&low, 0, 0, 5, 0, NULL, -1, "x", 1);
    put_wrapper(&set, 0, C_GZIP, 0, 4, 0, &low);
    CHECK_EQ(convert(&set, MIB, &r), MSGCONV_OK);
    bytes_free(&low);
    bytes_free(&set);
    /* zstd (and above) with magic 0/1. */
    put_entry(&set, 1, 4, 0, T0, NULL, -1, "x", 1);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_UNSUPPORTED, "codec 4"));
    bytes_free(&set);
    /* A magic 2 batch after a legacy message. */
    put_msgs(&set, 1, MSGS, 1);
    put_msgs(&set, 1, MSGS, 1);
    set.p[set.len - (set.len / 2) + 16] = 2;
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_INVALID, "magic 2"));
    bytes_free(&set);
    /* Sizes and lengths that lie (CRCs right). */
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "no messages"));
    put_entry(&set, 1, 0, 0, T0, "k", 1, "v", 1);
    be32_put(set.p + 8, 13);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "size 13"));
    bytes_free(&set);
    put_entry(&set, 1, 0, 0, T0, "k", 1, "v", 1);
    be32_put(set.p + 8, 20); /* magic 1 needs 22 */
    set.len = 32;
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "magic 1 message size"));
    bytes_free(&set);
    bytes_free(&inner);
    bytes_free(&inner0);
    bytes_free(&middle);
}

static void test_message_convert_lengths(void)
{
    /* A key length running past the message, then one leaving bytes over:
     * the CRC is made over the lying body, so only the lengths are wrong. */
    bytes_t set = {0}, body = {0};
    put_byte(&body, 0);
    put_byte(&body, 0);
    put_be32(&body, 50);
    put(&body, "kk", 2);
    put_be32(&body, (uint32_t)-1);
    put_be64(&set, 0);
    put_be32(&set, (uint32_t)(body.len + 4));
    put_be32(&set, (uint32_t)crc32(0L, body.p, (uInt)body.len));
    put(&set, body.p, body.len);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "key length 50"));
    bytes_free(&set);
    bytes_free(&body);
    put_byte(&body, 0);
    put_byte(&body, 0);
    put_be32(&body, (uint32_t)-1);
    put_be32(&body, 1);
    put(&body, "vxx", 3);
    put_be64(&set, 0);
    put_be32(&set, (uint32_t)(body.len + 4));
    put_be32(&set, (uint32_t)crc32(0L, body.p, (uInt)body.len));
    put(&set, body.p, body.len);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "2 bytes after its value"));
    bytes_free(&set);
    bytes_free(&body);
    put_byte(&body, 0);
    put_byte(&body, 0);
    put_be32(&body, (uint32_t)-2);
    put_be32(&body, (uint32_t)-1);
    put_be64(&set, 0);
    put_be32(&set, (uint32_t)(body.len + 4));
    put_be32(&set, (uint32_t)crc32(0L, body.p, (uInt)body.len));
    put(&set, body.p, body.len);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_CORRUPT, "key length -2"));
    bytes_free(&set);
    bytes_free(&body);
}

static void test_message_convert_bounds(void)
{
    /* The output bound: 4 small records fit in 200 bytes, not in 100. */
    bytes_t set = {0};
    put_msgs(&set, 1, MSGS, 4);
    parsed_t r;
    CHECK_EQ(convert(&set, 200, &r), MSGCONV_OK);
    CHECK(fails_with(&set, 100, MSGCONV_ERR_TOO_LARGE, "exceeds 100"));
    CHECK(fails_with(&set, 10, MSGCONV_ERR_TOO_LARGE, NULL));
    bytes_free(&set);
    /* A gzip bomb: 4 MiB of zeros in a value, decompression stops at twice
     * the bound. */
    size_t big = 4 * MIB;
    uint8_t *zeros = calloc(1, big);
    bytes_t inner = {0};
    put_entry(&inner, 1, 0, 0, T0, NULL, -1, zeros, (int32_t)big);
    put_wrapper(&set, 1, C_GZIP, 0, 0, T0, &inner);
    CHECK(set.len < 64 * 1024);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_TOO_LARGE, "gzip"));
    bytes_free(&set);
    /* The same through lz4 and raw snappy (whose size comes first). */
    put_wrapper(&set, 1, C_LZ4, 0, 0, T0, &inner);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_TOO_LARGE, "lz4"));
    bytes_free(&set);
    put_wrapper(&set, 1, C_SNAPPY_RAW, 0, 0, T0, &inner);
    CHECK(fails_with(&set, MIB, MSGCONV_ERR_TOO_LARGE, "snappy"));
    bytes_free(&set);
    /* Within the bounds it converts: a 4 MiB value under an 8 MiB bound. */
    put_wrapper(&set, 1, C_GZIP, 0, 0, T0, &inner);
    uint8_t *out = NULL;
    size_t outlen = 0;
    CHECK_EQ(message_set_upconvert(set.p, set.len, 8 * MIB, &out, &outlen, err, sizeof(err)),
             MSGCONV_OK);
    record_batch_t h;
    CHECK(out && record_batch_validate(out, outlen, &h) == PLOG_OK);
    CHECK(outlen > big && outlen < big + 100);
    free(out);
    bytes_free(&set);
    bytes_free(&inner);
    free(zeros);
}

void suite_message_convert(void)
{
    RUN(test_message_convert_is_legacy);
    RUN(test_message_convert_magic0);
    RUN(test_message_convert_magic1);
    RUN(test_message_convert_every_codec);
    RUN(test_message_convert_log_append_time_wrapper);
    RUN(test_message_convert_crc);
    RUN(test_message_convert_truncations);
    RUN(test_message_convert_flipped_bytes);
    RUN(test_message_convert_invalid);
    RUN(test_message_convert_lengths);
    RUN(test_message_convert_bounds);
}
