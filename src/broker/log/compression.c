/* compression.c -- the records inside a v2 batch, read through any codec.
 *
 * Two layers. A record stream hands out the decompressed records in chunks:
 * each codec has a refill function that decodes the next piece of its input
 * into a fixed window (or, for snappy, one block), counting what it hands
 * out against the caller's bound. A record reader on top parses records
 * byte by byte from those chunks and skips keys, values and headers, so no
 * record is ever held whole. */
#include "compression.h"

#include "base/logging.h"
#include "base/endian.h"
#include "base/alloc.h"
#include "base/xerial.h"
#include "record_batch.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

const char *compression_strerror(int err)
{
    switch (err) {
    case COMPRESSION_OK: return "ok";
    case COMPRESSION_ERR_CORRUPT: return "corrupt records";
    case COMPRESSION_ERR_UNSUPPORTED: return "unsupported compression type";
    case COMPRESSION_ERR_TOO_LARGE: return "records decompress beyond the bound";
    case COMPRESSION_ERR_INVALID: return "invalid records";
    default: return plog_strerror(err);
    }
}

static const char *codec_name(int codec)
{
    static const char *const names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    return codec >= 0 && codec <= COMPRESSION_ZSTD ? names[codec] : "unknown";
}

/* ---- The record stream ---------------------------------------------------- */

/* zstd's own default: frames asking for a larger window are refused. */
#define ZSTD_WINDOW_LOG_MAX 27

typedef struct record_stream record_stream_t;

struct record_stream {
    /* The decompressed bytes not parsed yet: chunk[pos..len). */
    const uint8_t *chunk;
    size_t pos, len;
    int ended;          /* the codec has no more bytes and its checks passed */
    size_t delivered;   /* decompressed bytes handed out so far */
    size_t limit;       /* ... and at most this many */

    int codec;
    int (*refill)(record_stream_t *s);
    const uint8_t *in;  /* the compressed records */
    size_t in_len, in_pos;
    int frame_open;     /* inside a gzip member / lz4 or zstd frame not ended yet */

    uint8_t *window;    /* COMPRESSION_WINDOW_BYTES, for the streaming codecs */
    uint8_t *block;     /* snappy: one decompressed block */
    size_t block_cap;
    z_stream gz;
    int gz_live;
    LZ4F_dctx *lz4;
    ZSTD_DCtx *zstd;

    char *err;
    size_t errlen;
};

static int fail(record_stream_t *s, int code, const char *fmt, ...) KIPPER_PRINTF(3, 4);

/* Write the reason into the caller's err (if any) and return code. */
static int fail(record_stream_t *s, int code, const char *fmt, ...)
{
    if (s->err && s->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err, s->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Hand the parser n fresh bytes at p, within the bound. */
static int deliver(record_stream_t *s, const uint8_t *p, size_t n)
{
    if (n > s->limit - s->delivered)
        return fail(s, COMPRESSION_ERR_TOO_LARGE, "%s: records decompress to more than %zu bytes",
                    codec_name(s->codec), s->limit);
    s->delivered += n;
    s->chunk = p;
    s->pos = 0;
    s->len = n;
    return COMPRESSION_OK;
}

/* Uncompressed: the records are the batch's own bytes, handed out at once. */
static int plain_refill(record_stream_t *s)
{
    s->ended = 1;
    s->in_pos = s->in_len;
    return deliver(s, s->in, s->in_len);
}

/* gzip: inflate into the window until something comes out or the input
 * ends between members. zlib checks each member's CRC-32 and length. */
static int gzip_refill(record_stream_t *s)
{
    z_stream *z = &s->gz;
    z->next_out = s->window;
    z->avail_out = COMPRESSION_WINDOW_BYTES;
    while (z->avail_out == COMPRESSION_WINDOW_BYTES) {
        if (!s->frame_open) {
            if (z->avail_in == 0) {
                s->ended = 1;
                return COMPRESSION_OK;
            }
            inflateReset(z); /* another member follows */
            s->frame_open = 1;
        }
        int rc = inflate(z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END)
            s->frame_open = 0;
        else if (rc == Z_BUF_ERROR && z->avail_in == 0)
            return fail(s, COMPRESSION_ERR_CORRUPT, "gzip: the stream ends early");
        else if (rc != Z_OK)
            return fail(s, COMPRESSION_ERR_CORRUPT, "gzip: %s", z->msg ? z->msg : zError(rc));
    }
    return deliver(s, s->window, COMPRESSION_WINDOW_BYTES - z->avail_out);
}

/* lz4: LZ4F_decompress returns 0 once a frame (and its checksums) ended;
 * more input then starts another frame. */
static int lz4_refill(record_stream_t *s)
{
    size_t produced = 0;
    while (produced == 0) {
        size_t in_left = s->in_len - s->in_pos;
        if (in_left == 0 && !s->frame_open) {
            s->ended = 1;
            return COMPRESSION_OK;
        }
        size_t consumed = in_left;
        produced = COMPRESSION_WINDOW_BYTES;
        size_t hint = LZ4F_decompress(s->lz4, s->window, &produced, s->in + s->in_pos, &consumed,
                                      NULL);
        if (LZ4F_isError(hint))
            return fail(s, COMPRESSION_ERR_CORRUPT, "lz4: %s", LZ4F_getErrorName(hint));
        s->in_pos += consumed;
        s->frame_open = hint != 0;
        if (consumed == 0 && produced == 0) /* no input left to make progress with */
            return fail(s, COMPRESSION_ERR_CORRUPT, "lz4: the frame ends early");
    }
    return deliver(s, s->window, produced);
}

/* zstd: ZSTD_decompressStream returns 0 once a frame ended and all of it was
 * flushed; it runs on across concatenated and skippable frames. */
static int zstd_refill(record_stream_t *s)
{
    ZSTD_outBuffer out = {s->window, COMPRESSION_WINDOW_BYTES, 0};
    while (out.pos == 0) {
        if (s->in_pos == s->in_len && !s->frame_open) {
            s->ended = 1;
            return COMPRESSION_OK;
        }
        ZSTD_inBuffer in = {s->in, s->in_len, s->in_pos};
        size_t ret = ZSTD_decompressStream(s->zstd, &out, &in);
        if (ZSTD_isError(ret))
            return fail(s, COMPRESSION_ERR_CORRUPT, "zstd: %s", ZSTD_getErrorName(ret));
        size_t consumed = in.pos - s->in_pos;
        s->in_pos = in.pos;
        s->frame_open = ret != 0;
        if (consumed == 0 && out.pos == 0)
            return fail(s, COMPRESSION_ERR_CORRUPT, "zstd: the frame ends early");
    }
    return deliver(s, s->window, out.pos);
}

/* One raw snappy block into s->block. Its decompressed size comes first, so
 * the bound is checked before anything is allocated. */
static int snappy_block(record_stream_t *s, const uint8_t *p, size_t n)
{
    size_t size;
    if (snappy_uncompressed_length((const char *)p, n, &size) != SNAPPY_OK)
        return fail(s, COMPRESSION_ERR_CORRUPT, "snappy: bad length preamble");
    if (size > s->limit - s->delivered)
        return fail(s, COMPRESSION_ERR_TOO_LARGE,
                    "snappy: records decompress to more than %zu bytes", s->limit);
    if (size > s->block_cap) {
        s->block = xrealloc(s->block, size);
        s->block_cap = size;
    }
    size_t out = size;
    if (snappy_uncompress((const char *)p, n, (char *)s->block, &out) != SNAPPY_OK || out != size)
        return fail(s, COMPRESSION_ERR_CORRUPT, "snappy: corrupt block");
    return deliver(s, s->block, size);
}

/* librdkafka sends the records as one raw snappy block. */
static int snappy_raw_refill(record_stream_t *s)
{
    s->ended = 1;
    s->in_pos = s->in_len;
    return snappy_block(s, s->in, s->in_len);
}

/* The Java client's xerial framing (base/xerial.h), one block per refill. */
static int snappy_xerial_refill(record_stream_t *s)
{
    const uint8_t *block;
    size_t len;
    char why[96];
    int got = xerial_next_block(s->in, s->in_len, &s->in_pos, &block, &len, why, sizeof(why));
    if (got < 0)
        return fail(s, COMPRESSION_ERR_CORRUPT, "snappy: %s", why);
    if (got == 0) {
        s->ended = 1;
        return COMPRESSION_OK;
    }
    return snappy_block(s, block, len);
}

static int open_snappy(record_stream_t *s)
{
    s->in_pos = 0;   /* xerial_next_block checks the header there */
    s->refill = xerial_is_stream(s->in, s->in_len) ? snappy_xerial_refill : snappy_raw_refill;
    return COMPRESSION_OK;
}

static int open_gzip(record_stream_t *s)
{
    /* windowBits 15 + 16: a gzip wrapper, nothing else. */
    if (inflateInit2(&s->gz, 15 + 16) != Z_OK) {
        log_error("compression: zlib could not start (out of memory)");
        abort();
    }
    s->gz_live = 1;
    s->gz.next_in = (Bytef *)(uintptr_t)s->in; /* zlib never writes through next_in */
    s->gz.avail_in = (uInt)s->in_len; /* < 2^31: batch_length is an int32 */
    s->refill = gzip_refill;
    return COMPRESSION_OK;
}

static int open_lz4(record_stream_t *s)
{
    if (LZ4F_isError(LZ4F_createDecompressionContext(&s->lz4, LZ4F_VERSION))) {
        log_error("compression: lz4 could not start (out of memory)");
        abort();
    }
    s->refill = lz4_refill;
    return COMPRESSION_OK;
}

static int open_zstd(record_stream_t *s)
{
    s->zstd = ZSTD_createDCtx();
    if (!s->zstd) {
        log_error("compression: zstd could not start (out of memory)");
        abort();
    }
    ZSTD_DCtx_setParameter(s->zstd, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
    s->refill = zstd_refill;
    return COMPRESSION_OK;
}

static void stream_close(record_stream_t *s)
{
    if (s->gz_live)
        inflateEnd(&s->gz);
    LZ4F_freeDecompressionContext(s->lz4);
    ZSTD_freeDCtx(s->zstd);
    free(s->window);
    free(s->block);
    memset(s, 0, sizeof(*s));
}

/* Ready s to read the records in[0..in_len) compressed with codec. */
static int stream_open(record_stream_t *s, int codec, const uint8_t *in, size_t in_len,
                       size_t limit, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->codec = codec;
    s->in = in;
    s->in_len = in_len;
    s->limit = limit;
    s->err = err;
    s->errlen = errlen;
    s->frame_open = 1; /* the first member or frame must be there */
    switch (codec) {
    case COMPRESSION_NONE:
        s->limit = SIZE_MAX;
        s->refill = plain_refill;
        return COMPRESSION_OK;
    case COMPRESSION_SNAPPY:
        return open_snappy(s);
    default:
        break;
    }
    s->window = xmalloc(COMPRESSION_WINDOW_BYTES);
    switch (codec) {
    case COMPRESSION_GZIP: return open_gzip(s);
    case COMPRESSION_LZ4: return open_lz4(s);
    case COMPRESSION_ZSTD: return open_zstd(s);
    default:
        return fail(s, COMPRESSION_ERR_UNSUPPORTED, "compression codec %d is not one Kafka defines",
                    codec);
    }
}

/* Make a byte available: 1 if there is one, 0 at the end of the records
 * (the codec's end checks passed), or an error. */
static int stream_fill(record_stream_t *s)
{
    while (s->pos == s->len) {
        if (s->ended)
            return 0;
        int rc = s->refill(s);
        if (rc != COMPRESSION_OK)
            return rc;
    }
    return 1;
}

/* ---- The record reader ---------------------------------------------------- */

typedef struct {
    record_stream_t *s;
    int32_t index;  /* the record being read, for error text */
    int64_t left;   /* bytes of it not read yet */
    size_t max_record; /* a record's length at most */
} record_reader_t;

typedef struct {
    int64_t timestamp_delta;
    int32_t offset_delta;
} record_head_t;

/* The next byte of the current record. */
static int record_byte(record_reader_t *r, uint8_t *out)
{
    if (r->left == 0)
        return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: its fields run past its length",
                    (int)r->index);
    int rc = stream_fill(r->s);
    if (rc == 0)
        return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: the data ends inside it",
                    (int)r->index);
    if (rc < 0)
        return rc;
    *out = r->s->chunk[r->s->pos++];
    r->left--;
    return COMPRESSION_OK;
}

/* Skip n bytes of the current record (the caller checked n <= left). */
static int record_skip(record_reader_t *r, int64_t n)
{
    r->left -= n;
    while (n > 0) {
        int rc = stream_fill(r->s);
        if (rc == 0)
            return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: the data ends inside it",
                        (int)r->index);
        if (rc < 0)
            return rc;
        size_t avail = r->s->len - r->s->pos;
        size_t take = (uint64_t)n < avail ? (size_t)n : avail;
        r->s->pos += take;
        n -= (int64_t)take;
    }
    return COMPRESSION_OK;
}

/* Kafka's zigzag varint: at most 5 bytes for an int32, 10 for a varlong
 * (int64). As Java's ByteUtils, bits beyond the type's width in the last
 * byte are dropped, and a longer encoding is an error. */
static int read_zigzag(record_reader_t *r, int max_bytes, const char *what, int64_t *out)
{
    uint64_t raw = 0;
    for (int i = 0; i < max_bytes; i++) {
        uint8_t byte;
        int rc = record_byte(r, &byte);
        if (rc != COMPRESSION_OK)
            return rc;
        raw |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (byte & 0x80)
            continue;
        if (max_bytes == 5)
            raw = (uint32_t)raw;
        /* Decoded without signed overflow: odd values are negative. */
        *out = (raw & 1) ? -(int64_t)(raw >> 1) - 1 : (int64_t)(raw >> 1);
        return COMPRESSION_OK;
    }
    return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: %s varint longer than %d bytes",
                (int)r->index, what, max_bytes);
}

/* A varint length and that many bytes, skipped. -1 is null where allowed. */
static int skip_sized(record_reader_t *r, const char *what, int nullable)
{
    int64_t n = 0;
    int rc = read_zigzag(r, 5, what, &n);
    if (rc != COMPRESSION_OK)
        return rc;
    if (n < (nullable ? -1 : 0))
        return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: %s length %lld", (int)r->index,
                    what, (long long)n);
    if (n > r->left)
        return fail(r->s, COMPRESSION_ERR_INVALID,
                    "record %d: %s of %lld bytes, only %lld left in the record", (int)r->index,
                    what, (long long)n, (long long)r->left);
    return n > 0 ? record_skip(r, n) : COMPRESSION_OK;
}

/* Everything after the record's timestamp and offset deltas. */
static int skip_record_body(record_reader_t *r)
{
    int64_t nheaders = 0;
    int rc;
    if ((rc = skip_sized(r, "key", 1)) != COMPRESSION_OK ||
        (rc = skip_sized(r, "value", 1)) != COMPRESSION_OK ||
        (rc = read_zigzag(r, 5, "header count", &nheaders)) != COMPRESSION_OK)
        return rc;
    /* A header takes at least two bytes (two one-byte lengths). */
    if (nheaders < 0 || nheaders > r->left / 2)
        return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: %lld headers in %lld bytes",
                    (int)r->index, (long long)nheaders, (long long)r->left);
    for (int64_t i = 0; i < nheaders; i++)
        if ((rc = skip_sized(r, "header key", 0)) != COMPRESSION_OK ||
            (rc = skip_sized(r, "header value", 1)) != COMPRESSION_OK)
            return rc;
    if (r->left != 0)
        return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: %lld bytes left after its fields",
                    (int)r->index, (long long)r->left);
    return COMPRESSION_OK;
}

/* Record r->index, of the `declared` the batch holds. */
static int read_record(record_reader_t *r, int32_t declared, record_head_t *head)
{
    int rc = stream_fill(r->s);
    if (rc == 0)
        return fail(r->s, COMPRESSION_ERR_INVALID, "batch declares %d records, the data holds %d",
                    (int)declared, (int)r->index);
    if (rc < 0)
        return rc;
    int64_t len = 0, offset_delta = 0;
    uint8_t attributes = 0;
    r->left = 5; /* just the length varint for now */
    if ((rc = read_zigzag(r, 5, "length", &len)) != COMPRESSION_OK)
        return rc;
    if (len < 0)
        return fail(r->s, COMPRESSION_ERR_INVALID, "record %d: length %lld", (int)r->index,
                    (long long)len);
    /* Refused before its body is decompressed, so a bomb of one huge record
     * costs one window (raw snappy's single block is decoded whole first,
     * within the batch's bound). */
    if ((uint64_t)len > r->max_record)
        return fail(r->s, COMPRESSION_ERR_TOO_LARGE, "record %d is %lld bytes, more than %zu",
                    (int)r->index, (long long)len, r->max_record);
    r->left = len;
    if ((rc = record_byte(r, &attributes)) != COMPRESSION_OK ||
        (rc = read_zigzag(r, 10, "timestamp delta", &head->timestamp_delta)) != COMPRESSION_OK ||
        (rc = read_zigzag(r, 5, "offset delta", &offset_delta)) != COMPRESSION_OK)
        return rc;
    head->offset_delta = (int32_t)offset_delta; /* a 5-byte varint is an int32 */
    return skip_record_body(r);
}

/* After the last declared record the records must end, which also runs the
 * codec's end-of-stream checks (gzip trailer, lz4 and zstd checksums). */
static int expect_end(record_stream_t *s, int32_t declared)
{
    int rc = stream_fill(s);
    if (rc > 0)
        return fail(s, COMPRESSION_ERR_INVALID,
                    "data continues after the %d records the batch declares", (int)declared);
    return rc;
}

/* ---- The two questions ---------------------------------------------------- */

/* A varint of an int32 takes at most 5 bytes. */
#define RECORD_LENGTH_VARINT_MAX 5

/* What the records a batch declares can decompress to: record_count
 * records of at most max_record bytes, each after its length. Tighter than
 * the batch's bound for a batch of few records, so that a codec that names
 * its output size first (a raw snappy block, decoded whole) is refused
 * before it is decoded: one record declared, eight megabytes of zeros. */
static size_t declared_records_bound(const record_batch_t *b, size_t max_record)
{
    if (b->record_count < 1 || max_record > SIZE_MAX - RECORD_LENGTH_VARINT_MAX)
        return SIZE_MAX;   /* refused by what follows, or not bounded */
    size_t each = max_record + RECORD_LENGTH_VARINT_MAX;
    if ((size_t)b->record_count > SIZE_MAX / each)
        return SIZE_MAX;
    return (size_t)b->record_count * each;
}

/* Ready s to read the records of the v2 batch at batch: at most limit
 * decompressed bytes, and no more than its records of at most max_record
 * bytes can hold. */
static int open_batch(const uint8_t *batch, size_t size, size_t limit, size_t max_record, record_batch_t *b,
                      record_stream_t *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->err = err;
    s->errlen = errlen;
    if (record_batch_parse_header(batch, size, b) != PLOG_OK)
        return fail(s, COMPRESSION_ERR_CORRUPT, "malformed batch header");
    int codec = b->attributes & BATCH_ATTR_COMPRESSION_MASK;
    if (codec > COMPRESSION_ZSTD)
        return fail(s, COMPRESSION_ERR_UNSUPPORTED, "compression codec %d is not one Kafka defines",
                    codec);
    size_t declared = declared_records_bound(b, max_record);
    if (declared < limit)
        limit = declared;
    return stream_open(s, codec, batch + BATCH_HEADER_LEN,
                       (size_t)record_batch_size(b) - BATCH_HEADER_LEN, limit, err, errlen);
}

static int validate_records(record_stream_t *s, const record_batch_t *b, size_t max_record)
{
    if (b->record_count < 1)
        return fail(s, COMPRESSION_ERR_INVALID, "batch declares %d records", (int)b->record_count);
    if (b->last_offset_delta != b->record_count - 1)
        return fail(s, COMPRESSION_ERR_INVALID, "last offset delta %d with %d records",
                    (int)b->last_offset_delta, (int)b->record_count);
    record_reader_t r = {.s = s, .max_record = max_record};
    for (r.index = 0; r.index < b->record_count; r.index++) {
        record_head_t head;
        int rc = read_record(&r, b->record_count, &head);
        if (rc != COMPRESSION_OK)
            return rc;
        if (head.offset_delta != r.index)
            return fail(s, COMPRESSION_ERR_INVALID, "record %d: offset delta %d, expected %d",
                        (int)r.index, (int)head.offset_delta, (int)r.index);
    }
    return expect_end(s, b->record_count);
}

int batch_validate_records_within(const uint8_t *batch, size_t size, const batch_limits_t *lim,
                                  size_t *decompressed, char *err, size_t errlen)
{
    record_batch_t b;
    record_stream_t s;
    int rc = open_batch(batch, size, lim->max_decompressed, lim->max_record, &b, &s, err, errlen);
    if (rc == COMPRESSION_OK)
        rc = validate_records(&s, &b, lim->max_record);
    if (decompressed)
        *decompressed = s.codec == COMPRESSION_NONE ? 0 : s.delivered;
    stream_close(&s);
    return rc;
}

int batch_validate_records(const uint8_t *batch, size_t size, size_t max_decompressed,
                           char *err, size_t errlen)
{
    batch_limits_t lim = {.max_decompressed = max_decompressed, .max_record = SIZE_MAX};
    return batch_validate_records_within(batch, size, &lim, NULL, err, errlen);
}

static int find_in_records(record_stream_t *s, const record_batch_t *b, int64_t ts,
                           int64_t *offset, int64_t *timestamp)
{
    record_reader_t r = {.s = s, .max_record = SIZE_MAX};
    for (r.index = 0; r.index < b->record_count; r.index++) {
        record_head_t head;
        int rc = read_record(&r, b->record_count, &head);
        if (rc != COMPRESSION_OK)
            return rc;
        if (head.offset_delta < 0 || head.offset_delta > b->last_offset_delta ||
            b->base_offset < 0 || b->base_offset > INT64_MAX - head.offset_delta)
            return fail(s, COMPRESSION_ERR_INVALID, "record %d: offset delta %d", (int)r.index,
                        (int)head.offset_delta);
        /* Under LogAppendTime every record carries the batch's max timestamp;
         * deltas wrap as Java's long arithmetic does. */
        uint64_t create_time = (uint64_t)b->first_timestamp + (uint64_t)head.timestamp_delta;
        int64_t rts = (b->attributes & BATCH_ATTR_LOG_APPEND_TIME) ? b->max_timestamp
                                                                    : (int64_t)create_time;
        if (rts >= ts) {
            *offset = b->base_offset + head.offset_delta;
            *timestamp = rts;
            return COMPRESSION_OK;
        }
    }
    return PLOG_ERR_NOT_FOUND;
}

int batch_find_timestamp_any(const uint8_t *batch, size_t size, int64_t ts, int64_t *offset,
                             int64_t *timestamp)
{
    record_batch_t b;
    record_stream_t s;
    int rc = open_batch(batch, size, COMPRESSION_FIND_MAX_DECOMPRESSED, SIZE_MAX, &b, &s, NULL, 0);
    if (rc == COMPRESSION_OK)
        rc = find_in_records(&s, &b, ts, offset, timestamp);
    stream_close(&s);
    return rc;
}

int compression_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out,
                           uint8_t **out, size_t *out_len, char *err, size_t errlen)
{
    record_stream_t s;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    *out = NULL;
    *out_len = 0;
    if (codec == COMPRESSION_NONE || codec > COMPRESSION_ZSTD || codec < 0) {
        memset(&s, 0, sizeof(s));
        s.err = err;
        s.errlen = errlen;
        return fail(&s, COMPRESSION_ERR_UNSUPPORTED, "compression codec %d cannot be decompressed",
                    codec);
    }
    int rc = stream_open(&s, codec, in, in_len, max_out, err, errlen);
    while (rc == COMPRESSION_OK) {
        rc = stream_fill(&s);
        if (rc <= 0)
            break;
        size_t n = s.len - s.pos;
        if (n > cap - len) {
            /* delivered <= max_out, so this stays within the bound */
            size_t want = cap ? cap : 4096;
            while (want - len < n)
                want *= 2;
            if (want > max_out)
                want = max_out > len + n ? max_out : len + n;
            buf = xrealloc(buf, want);
            cap = want;
        }
        memcpy(buf + len, s.chunk + s.pos, n);
        len += n;
        s.pos = s.len;
        rc = COMPRESSION_OK;
    }
    stream_close(&s);
    if (rc != COMPRESSION_OK) {
        free(buf);
        return rc;
    }
    *out = buf ? buf : xmalloc(1);
    *out_len = len;
    return COMPRESSION_OK;
}
