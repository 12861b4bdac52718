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

#include "checkpoint.h"
#include "record_batch.h"

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
/* A topic's configs changed on a running broker: segment size and age,
 * retention and the largest batch apply from the next append (or retention
 * round) on. PLOG_ERR_INVALID (nothing changed) for what open refuses. */
int partition_log_set_config(partition_log_t *log, const partition_log_config_t *cfg);

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
/* DeleteRecords, and a follower following its leader's log start: the log
 * starts at offset from now on (reads below it are PLOG_ERR_OUT_OF_RANGE)
 * and every segment wholly below it is deleted; the active segment stays.
 * The caller bounds offset (the leader by its HW). Nothing happens at or
 * below the log start; PLOG_ERR_OUT_OF_RANGE past the LEO. Returns the
 * number of segments deleted (>= 0) or an error. */
int partition_log_delete_records_before(partition_log_t *log, int64_t offset);
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
