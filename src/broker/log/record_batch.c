/* record_batch.c -- v2 record batch headers: parse, validate, patch in place.
 * Records are never decompressed here; only uncompressed batches are walked
 * record by record (for ListOffsets by timestamp). */
#include "record_batch.h"
#include "base/crc32c.h"
#include "base/endian.h"

#include <string.h>

const char *plog_strerror(int err)
{
    switch (err) {
    case PLOG_OK: return "ok";
    case PLOG_ERR_CORRUPT: return "corrupt record batch";
    case PLOG_ERR_TOO_LARGE: return "record batch too large";
    case PLOG_ERR_OUT_OF_RANGE: return "offset out of range";
    case PLOG_ERR_IO: return "i/o error";
    case PLOG_ERR_INVALID: return "invalid argument or malformed file";
    case PLOG_ERR_NOT_FOUND: return "not found";
    default: return "unknown error";
    }
}

int record_batch_parse_header(const uint8_t *p, size_t avail, record_batch_t *b)
{
    if (avail < BATCH_HEADER_LEN)
        return PLOG_ERR_CORRUPT;
    b->base_offset = (int64_t)be64_get(p + BATCH_OFF_BASE_OFFSET);
    b->batch_length = (int32_t)be32_get(p + BATCH_OFF_LENGTH);
    b->leader_epoch = (int32_t)be32_get(p + BATCH_OFF_LEADER_EPOCH);
    b->magic = (int8_t)p[BATCH_OFF_MAGIC];
    b->crc = be32_get(p + BATCH_OFF_CRC);
    b->attributes = (int16_t)be16_get(p + BATCH_OFF_ATTRIBUTES);
    b->last_offset_delta = (int32_t)be32_get(p + BATCH_OFF_LAST_OFFSET_DELTA);
    b->first_timestamp = (int64_t)be64_get(p + BATCH_OFF_FIRST_TIMESTAMP);
    b->max_timestamp = (int64_t)be64_get(p + BATCH_OFF_MAX_TIMESTAMP);
    b->producer_id = (int64_t)be64_get(p + BATCH_OFF_PRODUCER_ID);
    b->producer_epoch = (int16_t)be16_get(p + BATCH_OFF_PRODUCER_EPOCH);
    b->base_sequence = (int32_t)be32_get(p + BATCH_OFF_BASE_SEQUENCE);
    b->record_count = (int32_t)be32_get(p + BATCH_OFF_RECORD_COUNT);
    if (b->magic != 2)
        return PLOG_ERR_CORRUPT;
    if (b->batch_length < BATCH_HEADER_LEN - BATCH_LOG_OVERHEAD)
        return PLOG_ERR_CORRUPT;
    if ((uint64_t)record_batch_size(b) > avail)
        return PLOG_ERR_CORRUPT;
    return PLOG_OK;
}

uint32_t record_batch_compute_crc(const uint8_t *batch, size_t batch_size)
{
    if (batch_size < BATCH_HEADER_LEN)
        return 0;
    return crc32c(0, batch + BATCH_OFF_ATTRIBUTES, batch_size - BATCH_OFF_ATTRIBUTES);
}

int record_batch_validate(const uint8_t *p, size_t avail, record_batch_t *b)
{
    int rc = record_batch_parse_header(p, avail, b);
    if (rc != PLOG_OK)
        return rc;
    if (record_batch_compute_crc(p, (size_t)record_batch_size(b)) != b->crc)
        return PLOG_ERR_CORRUPT;
    /* Negative counts or deltas would make offsets run backwards. A count of
     * zero is legal on disk (compaction can empty a batch) but then the
     * delta still names the batch's last offset. */
    if (b->record_count < 0 || b->last_offset_delta < 0)
        return PLOG_ERR_CORRUPT;
    if (b->base_offset < 0 || b->base_offset > INT64_MAX - b->last_offset_delta)
        return PLOG_ERR_CORRUPT;
    return PLOG_OK;
}

void record_batch_set_base_offset(uint8_t *batch, int64_t base_offset)
{
    be64_put(batch + BATCH_OFF_BASE_OFFSET, (uint64_t)base_offset);
}

void record_batch_set_leader_epoch(uint8_t *batch, int32_t epoch)
{
    be32_put(batch + BATCH_OFF_LEADER_EPOCH, (uint32_t)epoch);
}

size_t record_batches_prefix(const uint8_t *p, size_t len, int *count)
{
    size_t off = 0;
    int n = 0;
    while (len - off >= BATCH_LOG_OVERHEAD) {
        int32_t blen = (int32_t)be32_get(p + off + BATCH_OFF_LENGTH);
        if (blen < 0 || (size_t)blen > len - off - BATCH_LOG_OVERHEAD)
            break;
        off += (size_t)blen + BATCH_LOG_OVERHEAD;
        n++;
    }
    if (count)
        *count = n;
    return off;
}
