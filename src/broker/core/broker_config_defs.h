/* broker_config_defs.h -- every broker config of Kafka 3.x that a user sets
 * in server.properties (KafkaConfig, with the remote-storage keys and the
 * replication throttles), as data: Kafka's name, type, default and range,
 * how Kafka lets it change (read-only, per broker, cluster-wide), and
 * whether kipper acts on it. Rows are coord_config.h's definitions, so values
 * are checked by coord_config_check with Kafka's messages, as topic configs
 * are. broker_config.c accepts and checks every key of it; DescribeConfigs
 * (api_configs.c) reports every key of it. */
#ifndef KIPPER_BROKER_BROKER_CONFIG_DEFS_H
#define KIPPER_BROKER_BROKER_CONFIG_DEFS_H

#include <stddef.h>

#include "broker/coord/coord_config.h"

/* The definitions, in name order: NULL past the end. */
const coord_config_def_t *broker_config_def_at(size_t i);
/* The definition of name; NULL when Kafka has no such broker config. */
const coord_config_def_t *broker_config_def(const char *name);

#endif
