/* batch_validate.h -- a producer's records for one partition, checked as
 * Kafka's LogValidator checks them before a leader appends anything, so
 * that every batch a leader stores has exactly the records its header
 * declares (its offsets are then the records' offsets, and nothing but
 * records can move the log end).
 *
 * One plain function over (bytes, length, limits), with no broker state: the
 * leader's append path calls it on the loop for small uncompressed records
 * and on a helper thread otherwise (broker/core/records_check.h), and fuzzing
 * calls it directly. It never writes into the records.
 *
 * The checks, in Kafka's order and with Kafka's errors:
 *  1. Every batch's framing and CRC-32C first, before anything is
 *     decompressed, so a damaged request costs a CRC pass and no more:
 *     CORRUPT_MESSAGE (a bad length or magic, a wrong CRC), INVALID_RECORD
 *     for legacy entries after v2 batches, MESSAGE_TOO_LARGE for a batch
 *     above max.message.bytes.
 *  2. Every batch's header as LogValidator.validateBatch checks a client's:
 *     a record count of at least 1 and last offset delta = count - 1,
 *     no control batch, a base sequence when there is a producer id
 *     (INVALID_RECORD); no LogAppendTime from a producer (INVALID_TIMESTAMP,
 *     as validateTimestamp); transactional batches refused (kipper has no
 *     transaction coordinator).
 *  3. Every batch's records (compression.h): decompressed within bounds,
 *     each record's framing, the count and offset deltas 0..n-1
 *     (INVALID_RECORD, as DefaultRecord.readFrom and LogValidator); a codec
 *     whose data is damaged is CORRUPT_MESSAGE, an unknown codec
 *     UNSUPPORTED_COMPRESSION_TYPE, records beyond the bounds
 *     MESSAGE_TOO_LARGE.
 * Legacy message sets (magic 0/1, Produce v0-v2) are up-converted to one v2
 * batch (message_convert.h) within the same bounds, and that batch is what
 * the leader appends. */
#ifndef KIPPER_BROKER_LOG_BATCH_VALIDATE_H
#define KIPPER_BROKER_LOG_BATCH_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t max_batch_bytes;       /* max.message.bytes: one batch as sent */
    size_t max_record;             /* one record's length */
    size_t max_batch_decompressed; /* one compressed batch's records, decompressed */
    size_t max_decompressed;       /* every batch's records together, decompressed */
} records_limits_t;

typedef struct {
    int16_t error;          /* KERR_NONE, or Kafka's error for the partition */
    int32_t batch;          /* the failing batch's index, -1 when none or not known */
    char message[256];      /* why, when error */
    size_t decompressed;    /* bytes decompressed, valid or not (charged to a budget) */
    uint8_t *converted;     /* legacy records: the v2 batch to append instead (malloc'd) */
    size_t converted_len;
} records_verdict_t;

/* Check the records p[0..len) of one partition of a Produce request against
 * lim; out->error says whether the leader may append them. Release out
 * with records_verdict_release. */
void records_validate(const uint8_t *p, size_t len, const records_limits_t *lim,
                      records_verdict_t *out);
void records_verdict_release(records_verdict_t *v);

#endif
