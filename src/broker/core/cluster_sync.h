/* cluster_sync.h -- keeping the cluster view current from the coordinator
 * (cluster_sync.c). broker.c starts it (blocking set-up, then async on the
 * loop) and stops it, which closes the coordinator link. */
#ifndef KIPPER_BROKER_CORE_CLUSTER_SYNC_H
#define KIPPER_BROKER_CORE_CLUSTER_SYNC_H

#include <stddef.h>

#include "broker_impl.h"

int cluster_start(broker_t *b, char *err, size_t errlen);
void cluster_stop(broker_t *b);
/* Read p's leader and ISR nodes again (our view may be stale: a write of
 * ours was fenced, a leader said we are behind). */
void cluster_reread_partition(broker_t *b, partition_t *p);
/* Read p's replicas node again (a move ended; reassignments.c); its answer
 * clears p->replicas_rereading and reconciles. */
void cluster_reread_replicas(broker_t *b, partition_t *p);
/* Controlled shutdown: delete our registration (not re-created while
 * b->shutting_down), so leaders drop us from their ISRs at once. */
void cluster_deregister(broker_t *b);

#endif
