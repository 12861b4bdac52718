/* checkpoint.h -- Kafka's small text files beside the logs: per log dir
 * "replication-offset-checkpoint" (high watermarks) and
 * "recovery-point-offset-checkpoint", one "topic partition offset" line per
 * partition; per partition "leader-epoch-checkpoint" (epoch and its first
 * offset). Written atomically (base/fsutil.h), so meant for a helper thread. */
#ifndef KIPPER_BROKER_LOG_CHECKPOINT_H
#define KIPPER_BROKER_LOG_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "record_batch.h"

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

#endif
