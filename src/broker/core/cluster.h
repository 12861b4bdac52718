/* cluster.h -- the cluster view (cluster.c): live brokers, topics and their
 * partitions as the coordinator last said. The structs are in
 * broker_impl.h; cluster_sync.c keeps them current. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_CLUSTER_H
#define KIPPER_BROKER_CORE_CLUSTER_H

#include "broker_impl.h"

topic_t *cluster_topic(broker_t *b, const char *name);
topic_t *cluster_topic_by_id(broker_t *b, const uint8_t id[16]);
topic_t *cluster_topic_add(broker_t *b, const char *name);
void cluster_topic_remove(broker_t *b, topic_t *t);
partition_t *cluster_partition(broker_t *b, const char *topic, int32_t partition);
partition_t *topic_partition_add(topic_t *t, int32_t id);
const broker_node_t *cluster_broker(const broker_t *b, int32_t id);
int cluster_broker_live(const broker_t *b, int32_t id);
/* The topic's override of key (values as coord_config.h checks them,
 * booleans in lower case), else NULL: the broker's setting applies. Read it
 * at use: it changes while the broker runs (dynamic_config.h). */
const char *topic_config(const topic_t *t, const char *key);

#endif
