/* replica.h -- this broker's replicas of the partitions assigned to it
 * (replica.c): opening their logs, leader election, becoming leader or
 * follower, stopping, and the leader's append. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_REPLICA_H
#define KIPPER_BROKER_CORE_REPLICA_H

#include "broker_impl.h"

void replica_reconcile(broker_t *b, partition_t *p);   /* after any change of p's coordinator state */
void replica_stop(broker_t *b, partition_t *p, int delete_log);
void replica_free(replica_t *r);
void replicas_stop_leading(broker_t *b, const char *why);
/* Leader append of one produce request's records for p. */
int16_t replica_append(broker_t *b, replica_t *r, uint8_t *records, size_t len, int32_t *err_batch,
                       int64_t *base_offset, int64_t *append_time, const char **message);

#endif
