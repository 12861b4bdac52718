/* record_batch.h -- Kafka's record batch v2 (magic 2) as it lies on the wire
 * and in a segment file: the header's layout, parsing and checking it, and
 * setting what a leader sets in place. Also the results every part of the
 * log layer (batches, checkpoints, the partition log) returns. All integers
 * are big-endian, as in Kafka. No I/O. */
#ifndef KIPPER_BROKER_LOG_RECORD_BATCH_H
#define KIPPER_BROKER_LOG_RECORD_BATCH_H

#include <stddef.h>
#include <stdint.h>

/* ---- Results ------------------------------------------------------------ */

typedef enum {
    PLOG_OK = 0,
    PLOG_ERR_CORRUPT = -1,      /* a batch is malformed or fails its CRC: CORRUPT_MESSAGE */
    PLOG_ERR_TOO_LARGE = -2,    /* a batch exceeds max_batch_bytes: MESSAGE_TOO_LARGE */
    PLOG_ERR_OUT_OF_RANGE = -3, /* offset outside [log start, LEO]: OFFSET_OUT_OF_RANGE */
    PLOG_ERR_IO = -4,           /* a system call failed (errno kept): KAFKA_STORAGE_ERROR */
    PLOG_ERR_INVALID = -5,      /* bad argument or malformed file */
    PLOG_ERR_NOT_FOUND = -6     /* file does not exist */
} plog_err_t;

const char *plog_strerror(int err);

/* ---- Record batches (magic 2) -------------------------------------------- */

/* Byte offsets of the v2 batch header fields. The CRC-32C covers everything
 * from attributes to the end of the batch, so a leader can set base offset and
 * partition leader epoch in place without recomputing it. */
#define BATCH_OFF_BASE_OFFSET 0
#define BATCH_OFF_LENGTH 8
#define BATCH_OFF_LEADER_EPOCH 12
#define BATCH_OFF_MAGIC 16
#define BATCH_OFF_CRC 17
#define BATCH_OFF_ATTRIBUTES 21
#define BATCH_OFF_LAST_OFFSET_DELTA 23
#define BATCH_OFF_FIRST_TIMESTAMP 27
#define BATCH_OFF_MAX_TIMESTAMP 35
#define BATCH_OFF_PRODUCER_ID 43
#define BATCH_OFF_PRODUCER_EPOCH 51
#define BATCH_OFF_BASE_SEQUENCE 53
#define BATCH_OFF_RECORD_COUNT 57
#define BATCH_HEADER_LEN 61
#define BATCH_LOG_OVERHEAD 12 /* base offset + length: the part batch_length excludes */

#define BATCH_ATTR_COMPRESSION_MASK 0x07 /* 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd */
#define BATCH_ATTR_LOG_APPEND_TIME 0x08
#define BATCH_ATTR_TRANSACTIONAL 0x10
#define BATCH_ATTR_CONTROL 0x20

typedef struct {
    int64_t base_offset;
    int32_t batch_length;   /* bytes after the length field */
    int32_t leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t first_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t record_count;
} record_batch_t;

/* Total size of the batch on disk and on the wire. */
static inline int64_t record_batch_size(const record_batch_t *b)
{
    return (int64_t)b->batch_length + BATCH_LOG_OVERHEAD;
}
static inline int64_t record_batch_last_offset(const record_batch_t *b)
{
    return b->base_offset + b->last_offset_delta;
}

/* Decode the 61-byte header at p (avail bytes readable). Checks magic == 2,
 * that batch_length covers a header, and that the batch fits in avail; does
 * not check the CRC. PLOG_ERR_CORRUPT otherwise. */
int record_batch_parse_header(const uint8_t *p, size_t avail, record_batch_t *out);
/* parse_header plus CRC, record count and offset delta sanity. */
int record_batch_validate(const uint8_t *p, size_t avail, record_batch_t *out);
/* CRC-32C of a whole batch's covered range (attributes .. end). */
uint32_t record_batch_compute_crc(const uint8_t *batch, size_t batch_size);
void record_batch_set_base_offset(uint8_t *batch, int64_t base_offset);
void record_batch_set_leader_epoch(uint8_t *batch, int32_t epoch);
/* The whole batches at the start of p[0..len): their length in bytes, and
 * (count not NULL) how many. Only the length fields are read: a fetch may
 * end in the middle of a batch, a produce must not. */
size_t record_batches_prefix(const uint8_t *p, size_t len, int *count);

#endif
