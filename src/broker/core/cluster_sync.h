/* cluster_sync.h -- keeping the cluster view current from the coordinator
 * (cluster_sync.c). broker.c starts it (blocking set-up, then async on the
 * loop) and stops it, which closes the coordinator link. */
#ifndef KIPPER_BROKER_CORE_CLUSTER_SYNC_H
#define KIPPER_BROKER_CORE_CLUSTER_SYNC_H

#include <stddef.h>

#include "broker_impl.h"

int cluster_start(broker_t *b, char *err, size_t errlen);
void cluster_stop(broker_t *b);

#endif
