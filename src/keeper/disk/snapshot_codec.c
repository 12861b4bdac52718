/* snapshot_codec.c -- see snapshot_codec.h. */
#include "snapshot_codec.h"
#include "base/xerial.h"

#include <limits.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int snapshot_codec_of_suffix(const char *suffix)
{
    if (suffix[0] == '\0')
        return SNAPSHOT_PLAIN;
    if (strcmp(suffix, ".gz") == 0)
        return SNAPSHOT_GZIP;
    if (strcmp(suffix, ".snappy") == 0)
        return SNAPSHOT_SNAPPY;
    return -1;
}

const char *snapshot_codec_suffix(snapshot_codec_t c)
{
    return c == SNAPSHOT_GZIP ? ".gz" : c == SNAPSHOT_SNAPPY ? ".snappy" : "";
}

/* The output buffer, grown by doubling; its bytes never exceed max (but
 * for gunzip's one byte past it). */
typedef struct {
    uint8_t *data;
    size_t len, cap, max;
} out_buf_t;

#define GROW_STEP (64 * 1024)

static int too_large(const out_buf_t *o, char *err, size_t errlen)
{
    snprintf(err, errlen, "decompresses to more than %zu bytes", o->max);
    return -1;
}

/* Room for at least want more bytes, the buffer at most limit bytes. 0, or
 * -1 with err. */
static int reserve(out_buf_t *o, size_t want, size_t limit, char *err, size_t errlen)
{
    if (want > limit - o->len)
        return too_large(o, err, errlen);
    if (o->cap - o->len >= want)
        return 0;
    size_t cap = o->cap ? o->cap : GROW_STEP;
    while (cap - o->len < want)
        cap = cap > limit / 2 ? limit : cap * 2;
    uint8_t *grown = realloc(o->data, cap);
    if (!grown) {
        snprintf(err, errlen, "out of memory for %zu decompressed bytes", cap);
        return -1;
    }
    o->data = grown;
    o->cap = cap;
    return 0;
}

/* Java's GZIPOutputStream writes one gzip member; more are read as
 * GZIPInputStream reads them, one after the other. */
static int gunzip(const uint8_t *in, size_t len, out_buf_t *o, char *err, size_t errlen)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 15 + 16) != Z_OK) {
        snprintf(err, errlen, "gzip: zlib could not start (out of memory)");
        return -1;
    }
    size_t at = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END || at < len) {
        if (rc == Z_STREAM_END)
            inflateReset(&z);   /* another member follows */
        /* Room for up to one byte past max: a stream that fills it goes on
         * past the bound. */
        size_t want = o->max - o->len < GROW_STEP ? o->max - o->len + 1 : GROW_STEP;
        if (reserve(o, want, o->max + 1, err, errlen) < 0)
            break;
        size_t in_chunk = len - at > UINT_MAX ? UINT_MAX : len - at;
        size_t out_chunk = o->cap - o->len > UINT_MAX ? UINT_MAX : o->cap - o->len;
        z.next_in = (Bytef *)(uintptr_t)(in + at);   /* zlib never writes through next_in */
        z.avail_in = (uInt)in_chunk;
        z.next_out = o->data + o->len;
        z.avail_out = (uInt)out_chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        at += in_chunk - z.avail_in;
        o->len += out_chunk - z.avail_out;
        if (o->len > o->max) {
            too_large(o, err, errlen);
            break;
        }
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            snprintf(err, errlen, "gzip: %s", z.msg ? z.msg : "corrupt stream");
            break;
        }
        if (rc == Z_BUF_ERROR && at == len) {
            snprintf(err, errlen, "gzip: the file ends inside the stream (truncated)");
            break;
        }
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END && at == len && o->len <= o->max ? 0 : -1;
}

/* A raw snappy block cannot decode to more than this many times its own
 * length: its densest element, a copy with a 2-byte offset, is 3 bytes
 * for 64 (and the length preamble takes a byte more). A block claiming
 * more is corrupt, and is refused before its claim is allocated. */
#define SNAPPY_MAX_EXPANSION 22

static int unsnappy(const uint8_t *in, size_t len, out_buf_t *o, char *err, size_t errlen)
{
    size_t pos = 0;
    const uint8_t *block;
    size_t block_len;
    char why[96];
    int got;
    while ((got = xerial_next_block(in, len, &pos, &block, &block_len, why, sizeof(why))) > 0) {
        size_t size;
        if (snappy_uncompressed_length((const char *)block, block_len, &size) != SNAPPY_OK) {
            snprintf(err, errlen, "snappy: bad length preamble in the block ending at byte %zu", pos);
            return -1;
        }
        if (size / SNAPPY_MAX_EXPANSION > block_len) {
            snprintf(err, errlen, "snappy: a block of %zu bytes claims %zu decompressed", block_len, size);
            return -1;
        }
        if (size == 0) {   /* nothing to write (o->data may still be NULL) */
            if (snappy_validate_compressed_buffer((const char *)block, block_len) != SNAPPY_OK) {
                snprintf(err, errlen, "snappy: corrupt block ending at byte %zu", pos);
                return -1;
            }
            continue;
        }
        if (reserve(o, size, o->max, err, errlen) < 0)
            return -1;
        size_t produced = size;
        if (snappy_uncompress((const char *)block, block_len, (char *)o->data + o->len, &produced) != SNAPPY_OK ||
            produced != size) {
            snprintf(err, errlen, "snappy: corrupt block ending at byte %zu", pos);
            return -1;
        }
        o->len += size;
    }
    if (got < 0) {
        snprintf(err, errlen, "snappy: %s", why);
        return -1;
    }
    return 0;
}

int snapshot_decompress(snapshot_codec_t c, const uint8_t *in, size_t len, size_t max, uint8_t **out,
                        size_t *out_len, char *err, size_t errlen)
{
    out_buf_t o = {.max = max};
    int rc;
    if (len == 0) {   /* an empty file (not even mapped: in may be NULL) */
        snprintf(err, errlen, "the file is empty");
        return -1;
    }
    if (c == SNAPSHOT_GZIP)
        rc = gunzip(in, len, &o, err, errlen);
    else if (c == SNAPSHOT_SNAPPY)
        rc = unsnappy(in, len, &o, err, errlen);
    else {
        snprintf(err, errlen, "not a compressed snapshot");
        rc = -1;
    }
    if (rc < 0) {
        free(o.data);
        return -1;
    }
    *out = o.data;
    *out_len = o.len;
    return 0;
}
