/* log_dirs.h -- the broker's log dirs (log_dirs.c): placement of partitions,
 * checkpoints, the clean-shutdown marker, and the background flush and
 * retention. log_dirs.c owns the `flusher` helper thread: it creates it in
 * log_dirs_start and stops it in log_dirs_stop; others only submit to it. */
#ifndef KIPPER_BROKER_CORE_LOG_DIRS_H
#define KIPPER_BROKER_CORE_LOG_DIRS_H

#include <stddef.h>

#include "broker_impl.h"

int log_dirs_start(broker_t *b, char *err, size_t errlen);
void log_dirs_stop(broker_t *b);      /* flush everything, checkpoints, clean-shutdown marker */
/* The log dir holding folder name ("topic-partition") found at start, which
 * is then forgotten (the caller deletes it); -1 if there was none. */
int log_dirs_take_placed(broker_t *b, const char *name);
int log_dirs_pick(broker_t *b, const char *topic, int32_t partition);
int64_t log_dirs_recovery_point(broker_t *b, const char *topic, int32_t partition);
int64_t log_dirs_high_watermark(broker_t *b, const char *topic, int32_t partition);
/* log-start-offset-checkpoint: where the partition's log started at the last
 * checkpoint (0 when not there). */
int64_t log_dirs_log_start(broker_t *b, const char *topic, int32_t partition);
void log_dirs_config_for(const broker_t *b, const topic_t *t, partition_log_config_t *cfg);
/* A write or an fsync failed in log dir `dir` (what: the operation and
 * file, for the log line). Its files can no longer be trusted to hold what
 * the broker was told they hold (after a failed fsync the kernel may have
 * dropped the pages), so, as Kafka does once no log dir is left, the broker
 * stops: its partitions go to their in-sync replicas, and the dir is never
 * marked clean, so the next start recovers its logs. */
void log_dirs_failed(broker_t *b, int dir, const char *what);
/* A replica is going: a flush job in flight for it must not touch it. */
void log_dirs_forget(broker_t *b, replica_t *r);

#endif
