/* reassignments.h -- the partition moves asked for in the coordinator,
 * /brokers/partitions_reassigned/[topic]/[partition] = {"replicas":[...]},
 * kept in the cluster view as each partition's target replica set
 * (partition_t.target) while the node exists. The leader carries a move out
 * (broker/repl); every broker starts or stops its replicas by it. Loop
 * thread only. */
#ifndef KIPPER_BROKER_CORE_REASSIGNMENTS_H
#define KIPPER_BROKER_CORE_REASSIGNMENTS_H

#include "broker_impl.h"

/* Lists every move (with watches): at each new coordinator session. */
void reassignments_read(broker_t *b);
/* Partitions of topic became known: its moves are read again, as a move
 * may name a partition the view did not have yet. */
void reassignments_topic_known(broker_t *b, const char *topic);
/* A watch fired on path: 1 when it was one of ours (and is handled). */
int reassignments_event(broker_t *b, int type, const char *path);

#endif
