/* batch.h -- the record batch checks the broker harnesses share
 * (record_batch.c, codec_*.c): one v2 batch's records validated as a
 * leader validates a produced batch, and searched by timestamp as
 * ListOffsets searches a stored one. */
#ifndef KIPPER_FUZZ_BATCH_H
#define KIPPER_FUZZ_BATCH_H

#include "fuzz.h"

#include "base/endian.h"
#include "broker/log/compression.h"
#include "broker/log/record_batch.h"

/* replica.c's bound on a batch's decompressed records: message.max.bytes
 * (Kafka's default, 1048588) * 64 + 1 MiB. */
#define FUZZ_MESSAGE_MAX_BYTES 1048588
#define FUZZ_MAX_DECOMPRESSED ((size_t)FUZZ_MESSAGE_MAX_BYTES * 64 + (1u << 20))

/* The base offset a leader gives a batch it stores (any value >= 0). */
#define FUZZ_STORED_BASE_OFFSET 1000

/* batch[0..size) is one whole batch whose header parsed. Validate its
 * records; if they pass, store it (base offset set, as the leader does) and
 * search it by timestamp. A batch that validated holds records at offset
 * deltas 0..n-1, so the earliest timestamp finds its first record. Returns
 * batch_validate_records's result. */
static inline int fuzz_validate_and_search(uint8_t *batch, size_t size)
{
    char err[256];
    int rc = batch_validate_records(batch, size, FUZZ_MAX_DECOMPRESSED, err, sizeof(err));
    int64_t offset = -1, ts = 0;
    if (rc != COMPRESSION_OK) {
        /* A follower stores what its leader sent with no more than a CRC
         * check, so ListOffsets may still search it: it must fail cleanly. */
        (void)batch_find_timestamp_any(batch, size, INT64_MIN, &offset, &ts);
        return rc;
    }
    record_batch_set_base_offset(batch, FUZZ_STORED_BASE_OFFSET);
    int found = batch_find_timestamp_any(batch, size, INT64_MIN, &offset, &ts);
    FUZZ_CHECK(found == COMPRESSION_OK && offset == FUZZ_STORED_BASE_OFFSET,
               "a batch that validated is not found from its first record (%d, offset %lld): %s", found,
               (long long)offset, compression_strerror(found));
    int64_t later = ts == INT64_MAX ? ts : ts + 1;
    found = batch_find_timestamp_any(batch, size, later, &offset, &ts);
    FUZZ_CHECK(found == COMPRESSION_OK || found == PLOG_ERR_NOT_FOUND,
               "searching a batch that validated failed (%d): %s", found, compression_strerror(found));
    if (found == COMPRESSION_OK)
        FUZZ_CHECK(ts >= later && offset >= FUZZ_STORED_BASE_OFFSET,
                   "a search for %lld found timestamp %lld at offset %lld", (long long)later, (long long)ts,
                   (long long)offset);
    return rc;
}

#endif
