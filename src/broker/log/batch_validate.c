/* batch_validate.c -- see batch_validate.h. Three passes over the batches,
 * cheapest first, so that nothing is decompressed unless every batch of the
 * partition is whole, carries its CRC and has a header a producer may send:
 * a request refused for any of those costs no decompression at all. */
#include "batch_validate.h"

#include "base/logging.h"   /* KIPPER_PRINTF */
#include "broker/wire/kafka_errors.h"
#include "compression.h"
#include "message_convert.h"
#include "record_batch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void refuse(records_verdict_t *v, int16_t error, int32_t batch, const char *fmt, ...)
    KIPPER_PRINTF(4, 5);

static void refuse(records_verdict_t *v, int16_t error, int32_t batch, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->message, sizeof(v->message), fmt, ap);
    va_end(ap);
    v->error = error;
    v->batch = batch;
}

static int16_t kafka_error_of(int compression_rc)
{
    switch (compression_rc) {
    case COMPRESSION_ERR_INVALID: return KERR_INVALID_RECORD;
    case COMPRESSION_ERR_TOO_LARGE: return KERR_MESSAGE_TOO_LARGE;
    case COMPRESSION_ERR_UNSUPPORTED: return KERR_UNSUPPORTED_COMPRESSION_TYPE;
    default: return KERR_CORRUPT_MESSAGE;
    }
}

/* Pass 1, one batch at p (avail bytes from there to the end): whole, of
 * magic 2, its CRC right, within max.message.bytes. 0 or -1 (refused). */
static int check_framing(const uint8_t *p, size_t avail, int32_t i, const records_limits_t *lim,
                         record_batch_t *h, records_verdict_t *v)
{
    if (avail > BATCH_OFF_MAGIC && p[BATCH_OFF_MAGIC] != 2) {
        /* Kafka refuses a request whose batches' magics differ. */
        if (p[BATCH_OFF_MAGIC] < 2)
            refuse(v, KERR_INVALID_RECORD, i, "message sets of magic 0/1 mixed with record batches v2");
        else
            refuse(v, KERR_CORRUPT_MESSAGE, i, "unknown record batch magic %d", p[BATCH_OFF_MAGIC]);
        return -1;
    }
    if (record_batch_parse_header(p, avail, h) != PLOG_OK) {
        refuse(v, KERR_CORRUPT_MESSAGE, i, "record batch is corrupt (bad length or magic)");
        return -1;
    }
    size_t size = (size_t)record_batch_size(h);
    if (record_batch_compute_crc(p, size) != h->crc) {
        refuse(v, KERR_CORRUPT_MESSAGE, i, "record batch failed its CRC-32C check");
        return -1;
    }
    if (size > (size_t)lim->max_batch_bytes) {
        refuse(v, KERR_MESSAGE_TOO_LARGE, i, "record batch of %zu bytes is larger than max.message.bytes (%d)",
               size, (int)lim->max_batch_bytes);
        return -1;
    }
    return 0;
}

/* Pass 2, one header, as LogValidator.validateBatch checks a client's (and
 * validateTimestamp the timestamp type). 0 or -1 (refused). */
static int check_header(const record_batch_t *h, int32_t i, records_verdict_t *v)
{
    if (h->attributes & BATCH_ATTR_CONTROL)
        refuse(v, KERR_INVALID_RECORD, i, "producers may not write control batches");
    else if (h->attributes & BATCH_ATTR_TRANSACTIONAL)
        refuse(v, KERR_INVALID_RECORD, i, "transactional batches are not supported");
    else if (h->record_count < 1)
        refuse(v, KERR_INVALID_RECORD, i, "batch declares %d records", (int)h->record_count);
    else if (h->last_offset_delta != h->record_count - 1)
        /* The count and the offsets must agree, or the header alone would
         * decide how far the log end moves. */
        refuse(v, KERR_INVALID_RECORD, i, "last offset delta %d with %d records", (int)h->last_offset_delta,
               (int)h->record_count);
    else if (h->producer_id != -1 && h->base_sequence < 0)
        refuse(v, KERR_INVALID_RECORD, i, "producer id %lld with base sequence %d", (long long)h->producer_id,
               (int)h->base_sequence);
    else if (h->attributes & BATCH_ATTR_LOG_APPEND_TIME)
        refuse(v, KERR_INVALID_TIMESTAMP, i, "producers may not set the timestamp type to LogAppendTime");
    else
        return 0;
    return -1;
}

/* Pass 3, one batch's records, charged to the partition's budget. */
static int check_records(const uint8_t *p, size_t size, int32_t i, const records_limits_t *lim,
                         records_verdict_t *v)
{
    size_t left = lim->max_decompressed - v->decompressed;
    batch_limits_t bl = {.max_decompressed = lim->max_batch_decompressed, .max_record = lim->max_record};
    const char *which = "";
    if (left < bl.max_decompressed) {
        bl.max_decompressed = left;
        which = " (what is left of the request's budget)";
    }
    char why[200];
    size_t used = 0;
    int rc = batch_validate_records_within(p, size, &bl, &used, why, sizeof(why));
    v->decompressed += used;
    if (rc == COMPRESSION_OK)
        return 0;
    refuse(v, kafka_error_of(rc), i, "record batch %d: %s%s", (int)i, why,
           rc == COMPRESSION_ERR_TOO_LARGE ? which : "");
    return -1;
}

/* The passes over whole v2 batches. */
static void validate_batches(const uint8_t *p, size_t len, const records_limits_t *lim, records_verdict_t *v)
{
    record_batch_t h;
    int32_t i = 0;
    for (size_t off = 0; off < len; off += (size_t)record_batch_size(&h), i++)
        if (check_framing(p + off, len - off, i, lim, &h, v) < 0)
            return;
    i = 0;
    for (size_t off = 0; off < len; off += (size_t)record_batch_size(&h), i++) {
        record_batch_parse_header(p + off, len - off, &h);
        if (check_header(&h, i, v) < 0)
            return;
    }
    i = 0;
    for (size_t off = 0; off < len; off += (size_t)record_batch_size(&h), i++) {
        record_batch_parse_header(p + off, len - off, &h);
        if (check_records(p + off, (size_t)record_batch_size(&h), i, lim, v) < 0)
            return;
    }
}

/* Magic 0/1 entries become one v2 batch, built here within the bounds, so
 * it needs no record pass of its own. */
static void upconvert(const uint8_t *p, size_t len, const records_limits_t *lim, records_verdict_t *v)
{
    size_t max = lim->max_batch_decompressed < lim->max_decompressed ? lim->max_batch_decompressed
                                                                    : lim->max_decompressed;
    char why[200];
    int rc = message_set_upconvert(p, len, max, &v->converted, &v->converted_len, why, sizeof(why));
    v->decompressed = v->converted_len;
    switch (rc) {
    case MSGCONV_OK: return;
    case MSGCONV_ERR_INVALID: refuse(v, KERR_INVALID_RECORD, -1, "%s", why); return;
    case MSGCONV_ERR_TOO_LARGE: refuse(v, KERR_MESSAGE_TOO_LARGE, -1, "%s", why); return;
    case MSGCONV_ERR_UNSUPPORTED: refuse(v, KERR_UNSUPPORTED_COMPRESSION_TYPE, -1, "%s", why); return;
    default: refuse(v, KERR_CORRUPT_MESSAGE, -1, "%s", why); return;
    }
}

void records_validate(const uint8_t *p, size_t len, const records_limits_t *lim, records_verdict_t *out)
{
    memset(out, 0, sizeof(*out));
    out->batch = -1;
    if (len == 0)
        refuse(out, KERR_CORRUPT_MESSAGE, -1, "no record batches");
    else if (message_set_is_legacy(p, len))
        upconvert(p, len, lim, out);
    else
        validate_batches(p, len, lim, out);
}

void records_verdict_release(records_verdict_t *v)
{
    free(v->converted);
    v->converted = NULL;
    v->converted_len = 0;
}
