/* replica.h -- this broker's replicas of the partitions assigned to it
 * (replica.c): opening their logs, stopping, and the leader's append. Their
 * roles are broker/repl's (repl.h). Loop thread only. */
#ifndef KIPPER_BROKER_CORE_REPLICA_H
#define KIPPER_BROKER_CORE_REPLICA_H

#include "broker_impl.h"
#include "broker/log/batch_validate.h"

void replica_reconcile(broker_t *b, partition_t *p);   /* after any change of p's coordinator state */
void replica_stop(broker_t *b, partition_t *p, int delete_log);
void replica_free(replica_t *r);
/* The topic's configs or the broker's changed: the log's config and the
 * LogAppendTime flag follow (dynamic_config.c). */
void replica_apply_config(broker_t *b, replica_t *r);
/* Leading r: follower id's fetch said its log starts at log_start
 * (DeleteRecords waits for every live follower's to pass its offset). */
void replica_follower_start_seen(broker_t *b, replica_t *r, int32_t id, int64_t log_start);
/* What a producer's records for topic t are held to (records_validate). */
void replica_records_limits(const broker_t *b, const topic_t *t, records_limits_t *lim);
/* Leader append of one produce request's records for r, which
 * records_validate has checked into v (its refusal is returned as it is; a
 * legacy message set's up-converted batch is appended instead): info has
 * their offsets (a retried batch's original ones). *message may point into
 * v, so v outlives the answer. */
int16_t replica_append(broker_t *b, replica_t *r, uint8_t *records, size_t len, const records_verdict_t *v,
                       int32_t *err_batch, append_info_t *info, int64_t *append_time, const char **message);

#endif
