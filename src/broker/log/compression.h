/* compression.h -- the records inside a v2 record batch, for every codec
 * Kafka clients use: checking them when a batch is produced, and finding a
 * timestamp among them for ListOffsets.
 *
 * The broker stores batches opaque; only these two questions need the
 * records. Records are decompressed as a stream into a fixed window
 * (COMPRESSION_WINDOW_BYTES) and parsed as they arrive; keys, values and
 * headers are skipped, never held, so a record may be far larger than the
 * window. What a codec itself keeps is bounded by the codec, not by the data:
 *   gzip    RFC 1952 (concatenated members accepted), zlib's 32 KiB window.
 *   snappy  raw snappy (librdkafka) or xerial framing (the Java client:
 *           "\x82SNAPPY\0", version, compatible version, then blocks of
 *           [int32 length][raw snappy]; concatenated streams accepted).
 *           libsnappy decodes whole blocks only, so one decompressed block
 *           is held: 32 KiB for the Java client, but for raw snappy all the
 *           records, which is why the size is checked against the bound
 *           before anything is allocated.
 *   lz4     LZ4 frames (concatenated frames accepted): at most one 4 MiB
 *           block plus 64 KiB of history.
 *   zstd    zstd frames, with or without content size: the window the frame
 *           declares, refused above 2^27 bytes (zstd's default, the limit
 *           Kafka's zstd-jni applies too).
 * Every error writes a reason into err (when err is not NULL), e.g.
 * "gzip: invalid stored block lengths" or "record 3: offset delta 7,
 * expected 3". */
#ifndef KIPPER_BROKER_COMPRESSION_H
#define KIPPER_BROKER_COMPRESSION_H

#include <stddef.h>
#include <stdint.h>

/* Attributes bits 0-2 of a v2 batch; 5-7 are not defined by Kafka. */
typedef enum {
    COMPRESSION_NONE = 0,
    COMPRESSION_GZIP = 1,
    COMPRESSION_SNAPPY = 2,
    COMPRESSION_LZ4 = 3,
    COMPRESSION_ZSTD = 4
} compression_codec_t;

/* Results. The values stay clear of plog_err_t (partition_log.h), since
 * batch_find_timestamp_any also returns PLOG_ERR_NOT_FOUND. Kafka draws the
 * line between its two errors where these do: a batch whose bytes cannot be
 * read (here: the codec's stream) is a CorruptRecordException, records that
 * do not parse or do not match the header are an InvalidRecordException
 * (DefaultRecord.readFrom, DefaultRecordBatch's iterators, LogValidator).
 * COMPRESSION_ERR_CORRUPT -> CORRUPT_MESSAGE (2): the codec's data is damaged,
 * COMPRESSION_ERR_INVALID -> INVALID_RECORD (87): the records inside,
 * COMPRESSION_ERR_UNSUPPORTED -> UNSUPPORTED_COMPRESSION_TYPE (76),
 * COMPRESSION_ERR_TOO_LARGE -> MESSAGE_TOO_LARGE (10): the records
 * decompress beyond the caller's bound, or one record is larger than it
 * allows. */
typedef enum {
    COMPRESSION_OK = 0,
    COMPRESSION_ERR_CORRUPT = -20,
    COMPRESSION_ERR_UNSUPPORTED = -21,
    COMPRESSION_ERR_TOO_LARGE = -22,
    COMPRESSION_ERR_INVALID = -23
} compression_err_t;

#define COMPRESSION_WINDOW_BYTES (64 * 1024)
/* The decompressed bytes batch_find_timestamp_any reads at most before
 * giving up with COMPRESSION_ERR_TOO_LARGE. Stored batches passed
 * batch_validate_records with the broker's (smaller) bound; this only keeps
 * a damaged or unvalidated one from running forever. */
#define COMPRESSION_FIND_MAX_DECOMPRESSED ((size_t)1 << 30)

const char *compression_strerror(int err);

/* What batch_validate_records_within allows. */
typedef struct {
    size_t max_decompressed; /* the records of a compressed batch, decompressed */
    size_t max_record;       /* one record: the value of its length varint */
} batch_limits_t;

/* Validate the records inside one whole v2 batch (batch points at its base
 * offset, size is at least the whole batch) whose header and CRC the caller
 * has already checked, compressed or not. As Kafka's LogValidator, the
 * header must declare at least one record and last_offset_delta must be
 * record_count - 1. The records are decompressed (at most
 * lim->max_decompressed bytes, nor more than record_count records of at
 * most lim->max_record bytes and their 5-byte lengths hold, else
 * COMPRESSION_ERR_TOO_LARGE; an uncompressed batch is its own records and
 * is not held to that bound) and
 * each must parse: varint length (at most lim->max_record, else
 * COMPRESSION_ERR_TOO_LARGE), attributes int8, varlong timestamp delta,
 * varint offset delta, varint key length (-1 null) and key, varint value
 * length (-1 null) and value, varint header count, headers of varint key
 * length (>= 0) and key, varint value length (-1 null) and value, exactly
 * filling the length. Varints are at most 5 bytes, varlongs 10, as Kafka
 * reads them. The offset deltas must run 0, 1, 2, ..., there must be
 * exactly record_count records and nothing after the last
 * (COMPRESSION_ERR_INVALID otherwise), and the codec's own checks (gzip CRC,
 * lz4 and zstd checksums) must pass (COMPRESSION_ERR_CORRUPT). The
 * decompressed bytes read (0 for an uncompressed batch) go to *decompressed
 * when it is not NULL, whatever the result. Returns COMPRESSION_OK or a
 * COMPRESSION_ERR_*. */
int batch_validate_records_within(const uint8_t *batch, size_t size, const batch_limits_t *lim,
                                  size_t *decompressed, char *err, size_t errlen);
/* The same with records of any size, the decompressed bytes not reported. */
int batch_validate_records(const uint8_t *batch, size_t size, size_t max_decompressed,
                           char *err, size_t errlen);

/* ListOffsets by timestamp inside one whole v2 batch, compressed or not: the
 * offset (base offset + offset delta) and timestamp (first timestamp +
 * timestamp delta, or the batch's max timestamp under LogAppendTime) of the
 * first record whose timestamp >= ts. Records after it are not read.
 * Returns COMPRESSION_OK, PLOG_ERR_NOT_FOUND when no record is that late,
 * or a COMPRESSION_ERR_* when the batch cannot be read that far. */
int batch_find_timestamp_any(const uint8_t *batch, size_t size, int64_t ts, int64_t *offset,
                             int64_t *timestamp);

/* Decompress a whole compressed buffer in[0..in_len) of codec (gzip,
 * snappy raw or xerial, lz4 frames, zstd; the same readers and checks as
 * above) into a malloc'd *out of *out_len bytes, at most max_out of them
 * (else COMPRESSION_ERR_TOO_LARGE). For the legacy message sets (magic 0
 * and 1) whose wrapper message holds a compressed message set. Returns
 * COMPRESSION_OK (the caller frees *out) or a COMPRESSION_ERR_* (*out
 * NULL). */
int compression_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out,
                           uint8_t **out, size_t *out_len, char *err, size_t errlen);

#endif
