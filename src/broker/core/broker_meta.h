/* broker_meta.h -- meta.properties in each log dir, as Kafka keeps it: the
 * cluster id and broker id the dir belongs to. */
#ifndef KIPPER_BROKER_BROKER_META_H
#define KIPPER_BROKER_BROKER_META_H

#include <stddef.h>

#include "broker_config.h"

/* Reads meta.properties in every log dir; they must agree with each other,
 * with broker_id and with coord_id (the coordinator's /cluster/id, "" or NULL
 * when unknown). Fills cluster_id (coord_id, else the dirs', else a new random
 * one) and writes meta.properties where missing. 0, or -1 with err. */
int broker_meta_load(const broker_config_t *bc, const char *coord_id, char *cluster_id, size_t idlen, char *err,
                     size_t errlen);

#endif
