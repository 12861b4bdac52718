/* message_convert.h -- legacy message sets (magic 0 and 1) up-converted to
 * one record batch v2, as Kafka's LogValidator does when a Kafka 0.8-0.10
 * client produces (Produce v0-v2) into a log of format v2.
 *
 * A legacy entry (LegacyRecord.java):
 *   offset int64, size int32 (bytes after it), crc int32 (CRC-32 IEEE of
 *   magic .. end), magic int8, attributes int8 (bits 0-2 codec, bit 3
 *   timestamp type LogAppendTime), [magic 1: timestamp int64],
 *   key bytes (int32 length, -1 null), value bytes (the same).
 * A compressed wrapper (codec != 0) carries in its value the compressed
 * message set of inner entries, of the wrapper's magic and uncompressed
 * (AbstractLegacyRecordBatch.java). Inner offsets (absolute under magic 0,
 * relative under magic 1) are not kept: the output's offset deltas run
 * 0..n-1 and the log assigns the base offset. */
#ifndef KIPPER_BROKER_MESSAGE_CONVERT_H
#define KIPPER_BROKER_MESSAGE_CONVERT_H

#include <stddef.h>
#include <stdint.h>

/* Results, with the Kafka error each stands for. */
typedef enum {
    MSGCONV_OK = 0,
    MSGCONV_ERR_CORRUPT = -1,     /* CORRUPT_MESSAGE (2): bad size, CRC, lengths, codec data */
    MSGCONV_ERR_INVALID = -2,     /* INVALID_RECORD (87): nested compression, magic mismatch,
                                   * a wrapper without inner messages or with a null value,
                                   * a magic-1 wrapper offset below its last inner one */
    MSGCONV_ERR_TOO_LARGE = -3,   /* the output or a decompressed set exceeds max_bytes:
                                   * MESSAGE_TOO_LARGE (10) */
    MSGCONV_ERR_UNSUPPORTED = -4  /* codec 4 (zstd) or above under magic 0/1, as Kafka:
                                   * UNSUPPORTED_COMPRESSION_TYPE (76) */
} msgconv_err_t;

/* Records one conversion makes at most (also bounded by max_bytes: a v2
 * record takes at least 7 bytes). */
#define MSGCONV_MAX_RECORDS (1 << 24)

/* One produce partition's records of magic 0 or 1 (one or more legacy
 * entries, compressed wrappers included) converted into a single
 * uncompressed record batch v2 in *out (malloc'd, *outlen bytes): base
 * offset 0, leader epoch -1, offset deltas 0..n-1, timestamp type
 * CreateTime; each record's timestamp is its own under magic 1 (the
 * wrapper's when a magic-1 wrapper says LogAppendTime), -1 (NO_TIMESTAMP)
 * under magic 0; first timestamp is the first record's, max timestamp the
 * largest; keys and values copied (nulls kept), no headers, producer id
 * -1, epoch -1, base sequence -1, CRC-32C set. Every legacy message's
 * CRC-32 is checked, and its key and value must fill it exactly. Bounded:
 * at most MSGCONV_MAX_RECORDS records, at most max_bytes of output, and
 * each wrapper decompresses to at most 2 * max_bytes. Returns MSGCONV_OK
 * (the caller frees *out), or a MSGCONV_ERR_* with a reason in err (when
 * err is not NULL) and *out NULL. Entries of magic 2 among them are
 * refused (MSGCONV_ERR_INVALID), and so is a magic-1 wrapper whose offset
 * is neither 0 nor at least its last inner offset (AbstractLegacyRecordBatch's
 * check). LZ4 wrappers of magic 0 are accepted
 * whatever their frame header checksum (Kafka 0.8 computed it wrongly and
 * KafkaLZ4BlockInputStream ignores it for magic 0); magic 1 needs the
 * right one. */
int message_set_upconvert(const uint8_t *p, size_t len, size_t max_bytes, uint8_t **out,
                          size_t *outlen, char *err, size_t errlen);

/* 1 when p starts with a legacy entry (magic byte at offset 16 is 0 or 1). */
int message_set_is_legacy(const uint8_t *p, size_t len);

#endif
