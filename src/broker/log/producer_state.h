/* producer_state.h -- idempotent producers (KIP-98) on one partition.
 *
 * A batch with a producer id (pid >= 0) carries the producer's epoch and the
 * sequence number of its first record. The partition leader keeps, per pid,
 * the epoch and the last PRODUCER_BATCHES_RETAINED batches appended, so that
 * a batch the producer retries (it never saw the answer) is not written twice
 * but answered with the offsets it got the first time. Pure data: no I/O, no
 * clock; one event loop thread owns it, like the partition_log_t it shadows.
 *
 * Semantics are Kafka 3.x's (ProducerStateManager, ProducerStateEntry,
 * ProducerAppendInfo.checkProducerEpoch/checkSequence, and the duplicate test
 * in UnifiedLog.analyzeAndValidateProducerState), in Kafka's order:
 *   1. same epoch and the same (first seq, last seq) as a retained batch:
 *      DUPLICATE, with that batch's offsets and max timestamp (Kafka answers
 *      success with them, as log append time too, and appends nothing);
 *   2. epoch below the stored one: INVALID_PRODUCER_EPOCH (47);
 *   3. a new epoch must start at sequence 0, unless the stored epoch is -1
 *      (none): else OUT_OF_ORDER_SEQUENCE_NUMBER (45);
 *   4. same epoch: first seq must be last seq + 1, or 0 after INT32_MAX;
 *      any sequence when the epoch is -1; else OUT_OF_ORDER_SEQUENCE_NUMBER.
 * An unknown pid is an entry with epoch -1 and no batches, so it accepts any
 * sequence (KIP-360) but still refuses an epoch below -1, as Kafka does.
 * Update records a batch unchecked (Kafka's REPLICATION origin uses the same
 * path): a different epoch forgets the retained batches first.
 *
 * Produce v3+ allows exactly one batch per partition per request, so the
 * broker makes one check, then one update once the append succeeded. check
 * looks only at stored state: several batches of one producer checked
 * before any is recorded would not see each other.
 *
 * Where this differs from Kafka, on purpose:
 *   - Bounded: at most max_producers pids per partition. Recording a new pid
 *     when full evicts the least recently updated one (Kafka has no bound).
 *     An evicted producer is unknown again: its next batch is accepted with
 *     any sequence, so only its duplicate detection is lost, never its
 *     progress.
 *   - Expiry basis is Kafka's: a pid expires when now - (max timestamp of its
 *     last batch) >= producer.id.expiration.ms. That is a record timestamp
 *     (CreateTime comes from the client), not the time of the update; it
 *     makes a rebuild from the log expire exactly what the live state would.
 *     Kafka keeps producers with an open transaction; there are none here.
 *   - Transactions are not tracked (no current txn offset, coordinator epoch,
 *     KIP-890 verification). Control batches are skipped when rebuilding.
 *   - No snapshot files (Kafka's <offset>.snapshot): the state is rebuilt by
 *     scanning the log's batch headers at open. Kafka keeps a producer whose
 *     batches retention deleted; here it survives until the next restart,
 *     after which it is unknown (accepted with any sequence).
 *
 * Rebuilding: producer_state_clear(), then partition_log_scan_batches(log,
 * partition_log_start_offset(log), producer_state_apply_batch, ps), then
 * producer_state_expire(now). After partition_log_truncate_to() do the same:
 * the entries' retained batches and epochs may come from truncated batches,
 * and only a rescan recovers the state before them (Kafka reloads its last
 * snapshot below the cut and replays from there). Followers apply every
 * batch they replicate with producer_state_apply_batch, so a new leader has
 * the state. */
#ifndef KIPPER_BROKER_PRODUCER_STATE_H
#define KIPPER_BROKER_PRODUCER_STATE_H

#include "record_batch.h"
#include "broker/wire/kafka_errors.h"

#include <stddef.h>
#include <stdint.h>

#define PRODUCER_BATCHES_RETAINED 5 /* Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN */
#define PRODUCER_MAX_PRODUCERS_DEFAULT 100000
#define PRODUCER_ID_EXPIRATION_MS_DEFAULT 86400000LL /* producer.id.expiration.ms */

/* producer_state_check results: append, duplicate, or a negated Kafka error. */
#define PRODUCER_APPEND 0
#define PRODUCER_DUPLICATE 1
#define PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE (-KERR_OUT_OF_ORDER_SEQUENCE_NUMBER)
#define PRODUCER_ERR_INVALID_EPOCH (-KERR_INVALID_PRODUCER_EPOCH)

typedef struct producer_state producer_state_t;

/* The original append of a duplicate batch. */
typedef struct {
    int64_t first_offset, last_offset;
    int64_t max_timestamp;
} producer_dup_t;

/* Last sequence of a batch: base sequence + last offset delta, wrapping past
 * INT32_MAX to 0 (Kafka's DefaultRecordBatch.incrementSequence); -1 stays -1. */
static inline int32_t producer_state_last_seq(int32_t base_seq, int32_t last_offset_delta)
{
    if (base_seq < 0)
        return base_seq;
    int64_t last = (int64_t)base_seq + last_offset_delta;
    return (int32_t)(last > INT32_MAX ? last - INT32_MAX - 1 : last);
}

/* max_producers is clamped to [1, 2^24]. */
producer_state_t *producer_state_create(int max_producers);
void producer_state_free(producer_state_t *ps);

/* Before appending a batch: PRODUCER_APPEND, PRODUCER_DUPLICATE (dup filled)
 * or PRODUCER_ERR_*; dup may be NULL. pid < 0 (non-idempotent) is always
 * PRODUCER_APPEND. */
int producer_state_check(const producer_state_t *ps, int64_t pid, int16_t epoch,
                         int32_t first_seq, int32_t last_seq, producer_dup_t *dup);
/* After a batch was appended at [first_offset, last_offset]; max_timestamp is
 * the batch's (as written). No-op for pid < 0. */
void producer_state_update(producer_state_t *ps, int64_t pid, int16_t epoch, int32_t first_seq,
                           int32_t last_seq, int64_t first_offset, int64_t last_offset,
                           int64_t max_timestamp);
/* producer_state_update from a written batch's header (offsets assigned),
 * skipping batches without a producer id and control batches. Shaped as a
 * partition_log_scan_batches callback: arg is the producer_state_t; returns 0. */
int producer_state_apply_batch(const record_batch_t *batch, void *arg);
/* producer_state_apply_batch for each whole batch in buf[0..len), as just
 * written (a leader's append, or what a follower took from its leader). */
void producer_state_apply_batches(producer_state_t *ps, const uint8_t *buf, size_t len);

/* Forget producers whose last batch's max timestamp is expiration_ms or more
 * before now_ms (a negative expiration_ms counts as 0). Returns how many. */
size_t producer_state_expire(producer_state_t *ps, int64_t now_ms, int64_t expiration_ms);
/* Forget every producer (before a rebuild). */
void producer_state_clear(producer_state_t *ps);
size_t producer_state_count(const producer_state_t *ps);

#endif
