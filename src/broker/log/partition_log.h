/* partition_log.h -- one partition's log in Kafka's own on-disk layout.
 *
 * A partition is a folder "topic-partition/" of segments. Segment files are
 * named by the segment's base offset in 20 digits:
 *   00000000000000000000.log        record batches exactly as on the wire
 *   00000000000000000000.index      sparse (relative offset int32, position int32)
 *   00000000000000000000.timeindex  sparse (timestamp int64, relative offset int32)
 * plus "leader-epoch-checkpoint" (epoch -> first offset of that epoch).
 * Per log dir, "replication-offset-checkpoint" (high watermarks) and
 * "recovery-point-offset-checkpoint" hold one "topic partition offset" line
 * per partition. All integers on disk are big-endian, as in Kafka.
 *
 * Threading: a partition_log_t belongs to one event loop thread. Nothing here
 * fsyncs on that thread except the checkpoint writers (meant for a helper
 * thread too); durability is a flush job: flush_begin (loop thread) captures
 * what to sync, flush_run (any thread) syncs it, flush_end (loop thread)
 * advances the recovery point. */
#ifndef KIPPER_BROKER_PARTITION_LOG_H
#define KIPPER_BROKER_PARTITION_LOG_H

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

/* ---- Checkpoint files ---------------------------------------------------- */

/* Kafka's text checkpoints: "0\n", "<count>\n", then count lines. Writers
 * write "<file>.tmp", fsync, rename, fsync the directory. Readers load at
 * most CHECKPOINT_MAX_BYTES and reject anything that is not exactly this
 * shape (PLOG_ERR_INVALID, with a reason in err when given). A missing file
 * is PLOG_ERR_NOT_FOUND. */
#define CHECKPOINT_MAX_BYTES (64 << 20)
#define TOPIC_NAME_MAX 249

typedef struct {
    char topic[TOPIC_NAME_MAX + 1];
    int32_t partition;
    int64_t offset;
} offset_checkpoint_entry_t;

typedef struct {
    int32_t epoch;
    int64_t start_offset;
} epoch_entry_t;

int offset_checkpoint_write(const char *path, const offset_checkpoint_entry_t *e, size_t n);
/* *out is malloc'd (free it); *n entries. */
int offset_checkpoint_read(const char *path, offset_checkpoint_entry_t **out, size_t *n,
                           char *err, size_t errlen);
int epoch_checkpoint_write(const char *path, const epoch_entry_t *e, size_t n);
int epoch_checkpoint_read(const char *path, epoch_entry_t **out, size_t *n, char *err,
                          size_t errlen);

/* ---- Partition log ------------------------------------------------------- */

typedef struct {
    int64_t segment_bytes;        /* log.segment.bytes (1 GiB); capped at INT32_MAX */
    int64_t segment_ms;           /* log.roll.ms (7 days); <= 0: never by time */
    int32_t index_interval_bytes; /* log.index.interval.bytes (4096) */
    int32_t index_max_bytes;      /* log.index.size.max.bytes (10 MiB): roll when full */
    int64_t retention_bytes;      /* log.retention.bytes; < 0: unlimited */
    int64_t retention_ms;         /* log.retention.ms (7 days); < 0: unlimited */
    int32_t max_batch_bytes;      /* message.max.bytes (1048588) */
} partition_log_config_t;

void partition_log_config_default(partition_log_config_t *cfg);

typedef struct partition_log partition_log_t;

/* Open (creating if needed) the partition folder dir. Segments from the one
 * holding recovery_point onwards are scanned: CRCs checked, indexes rebuilt,
 * a torn or corrupt tail truncated and later segments deleted. With
 * clean_shutdown, nothing is scanned but damaged index files are still
 * rebuilt. err gets a reason on failure. */
int partition_log_open(const char *dir, const partition_log_config_t *cfg,
                       int64_t recovery_point, int clean_shutdown, int64_t now_ms,
                       partition_log_t **out, char *err, size_t errlen);
void partition_log_close(partition_log_t *log);

int64_t partition_log_start_offset(const partition_log_t *log);
int64_t partition_log_end_offset(const partition_log_t *log);   /* LEO */
int64_t partition_log_high_watermark(const partition_log_t *log);
int64_t partition_log_recovery_point(const partition_log_t *log);
int64_t partition_log_size_bytes(const partition_log_t *log);
size_t partition_log_segment_count(const partition_log_t *log);
int64_t partition_log_segment_base(const partition_log_t *log, size_t i);
/* Clamped to [log start, LEO]. The caller owns HW semantics (ISR). */
void partition_log_set_high_watermark(partition_log_t *log, int64_t hw);

typedef struct {
    int64_t first_offset;
    int64_t last_offset;
    int64_t max_timestamp;       /* largest batch max timestamp, -1 if none */
    int32_t batch_count;
    int64_t record_count;
} append_info_t;

/* Leader append: buf holds whole v2 batches back to back (a Produce
 * request's records). Each is validated (CRC included), then given
 * consecutive offsets from LEO and leader_epoch, in place. All or nothing:
 * one bad batch rejects the buffer. Written with write(2), no fsync. */
int partition_log_append(partition_log_t *log, uint8_t *buf, size_t len, int32_t leader_epoch,
                         int64_t now_ms, append_info_t *info);
/* Follower append: offsets and epochs already set by the leader; the first
 * batch must start at LEO and offsets must increase. */
int partition_log_append_replica(partition_log_t *log, const uint8_t *buf, size_t len,
                                 int64_t now_ms, append_info_t *info);

/* A byte range of one segment file, ready for sendfile(fd, &position, length).
 * fd belongs to the log and stays valid until the log next truncates,
 * deletes segments or closes; dup() it to hold it longer. Kafka clients
 * accept a partial batch at the end of a fetch. */
typedef struct {
    int fd;
    int64_t position;
    int64_t length;        /* 0: nothing to send */
    int64_t first_offset;  /* base offset of the first batch in the range */
} plog_slice_t;

/* Fetch from offset, up to (not including) the batch holding max_offset
 * (pass the HW for consumers, LEO for followers), at most max_bytes unless
 * min_one and the first batch alone is larger (KIP-74). */
int partition_log_read(partition_log_t *log, int64_t offset, int64_t max_offset,
                       int64_t max_bytes, int min_one, plog_slice_t *out);
/* ListOffsets by timestamp: the first offset whose record timestamp >= ts
 * (and its timestamp), found inside compressed batches too.
 * PLOG_ERR_NOT_FOUND when no record is that late. */
int partition_log_offset_for_time(partition_log_t *log, int64_t ts, int64_t *offset,
                                  int64_t *timestamp);
/* Calls fn for every batch header from the batch holding offset `from` (log
 * start if lower) up to LEO, in order; stops early when fn returns nonzero
 * (and returns that). Reads only the 61-byte headers (pread), so it costs one
 * read per batch. Returns PLOG_OK when every batch was seen (nothing is seen
 * when from >= LEO), or a PLOG_ERR_* when a header cannot be read: let fn
 * stop with a positive value so the two cannot be confused. fn must not
 * change the log. For rebuilding state kept per batch (producer_state.h). */
int partition_log_scan_batches(partition_log_t *log, int64_t from,
                               int (*fn)(const record_batch_t *batch, void *arg), void *arg);

/* Remove every offset >= offset (replica divergence). No-op if >= LEO;
 * offset < log start truncates everything and restarts the log at offset. */
int partition_log_truncate_to(partition_log_t *log, int64_t offset);
/* Remove everything and start the log over at offset (a follower whose
 * leader's log start has moved past its log end). */
int partition_log_restart_at(partition_log_t *log, int64_t offset, int64_t now_ms);
/* Delete whole old segments past retention.ms / retention.bytes, never the
 * active one and never data at or above the HW. Returns the number deleted
 * (>= 0) or an error. */
int partition_log_apply_retention(partition_log_t *log, int64_t now_ms);

/* Leader epochs (KIP-101). */
int32_t partition_log_latest_epoch(const partition_log_t *log); /* -1 if none */
/* OffsetForLeaderEpoch: the largest epoch <= epoch and the end offset of it
 * (start of the next epoch, or LEO for the latest). -1/-1 if unknown. */
void partition_log_epoch_end_offset(const partition_log_t *log, int32_t epoch,
                                    int32_t *epoch_out, int64_t *end_offset);
size_t partition_log_epochs(const partition_log_t *log, const epoch_entry_t **entries);
/* The same answer for any epoch cache e[0..n) of a log ending at leo: the
 * largest epoch <= epoch and where it ends; for an epoch older than all, that
 * epoch and the first one's start; -1/-1 for a newer epoch or an empty cache
 * (Kafka's LeaderEpochFileCache.endOffsetFor). */
void epoch_cache_end_offset(const epoch_entry_t *e, size_t n, int64_t leo, int32_t epoch, int32_t *epoch_out,
                            int64_t *end_offset);
/* becomeLeader: epoch starts at the log end (if newer than the latest). */
void partition_log_assign_epoch(partition_log_t *log, int32_t epoch);

/* Flush job. begin captures (dup'd) descriptors of every segment with data
 * past the recovery point and a copy of the epoch cache; run fdatasyncs them
 * and writes leader-epoch-checkpoint (safe on a helper thread: it touches no
 * log state); end advances the recovery point and releases the job. */
typedef struct {
    int *fds;
    size_t nfds;
    char *dir;
    epoch_entry_t *epochs;
    size_t nepochs;
    int write_epochs;
    int64_t offset;   /* recovery point once synced */
    uint64_t generation; /* truncations seen at begin */
    int result;
    int saved_errno;
} plog_flush_t;

int partition_log_flush_begin(partition_log_t *log, plog_flush_t *job);
void partition_log_flush_run(plog_flush_t *job);
int partition_log_flush_end(partition_log_t *log, plog_flush_t *job);
/* Releases a job whose log is gone (closed or deleted) without ending it. */
void partition_log_flush_release(plog_flush_t *job);
/* All three in a row: for shutdown and tests. */
int partition_log_flush(partition_log_t *log);

#endif
