/* coord_admin.h -- topic administration in the coordinator (the nodes of
 * coord_data.h), with the ZooKeeper C client's synchronous API.
 *
 * Used by `kipper topics` and by the broker (CreateTopics, CreatePartitions,
 * DeleteTopics), which calls these on a helper thread with its own connected
 * handle. Paths are relative to the handle's chroot. Every function is
 * bounded; a malformed document in the coordinator is an error naming its
 * path, never a crash. */
#ifndef KIPPER_BROKER_COORD_ADMIN_H
#define KIPPER_BROKER_COORD_ADMIN_H

#include <stddef.h>
#include <stdint.h>

/* The synchronous calls are declared only for the multi-threaded client
 * (libzookeeper_mt), which is the one we link. */
#ifndef THREADED
#define THREADED
#endif
#include <zookeeper/zookeeper.h>

#include "coord_config.h"
#include "coord_data.h"
#include "broker/wire/kafka_errors.h"

/* error is a Kafka error code (kafka_errors.h): NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION,
 * TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT,
 * INVALID_CONFIG, or REQUEST_TIMED_OUT / UNKNOWN_SERVER_ERROR for coordinator failures (message says
 * which ZooKeeper error). Kafka's own messages where it has them,
 * e.g. "Replication factor: 3 larger than available brokers: 1." */
typedef struct {
    int16_t error;
    char message[256];
} coord_admin_result_t;


/* Blocking connect for tools: zookeeper_init on hosts+chroot (the connect string as in server.properties),
 * creating the chroot node (and parents) first if missing, waiting up to timeout_ms for a connected session.
 * Sets zoo_set_servers_resolution_delay(zh, -1) and silences the C client's stderr logging unless
 * KIPPER_ZK_DEBUG is set. NULL with err on failure. */
zhandle_t *coord_admin_connect(const char *connect, int timeout_ms, char *err, size_t errlen);

/* Creates /brokers, /brokers/ids, /brokers/topics, /brokers/partitions_reassigned and /config/topics,
 * /config/brokers, /config/changes if missing. 0 or -1 with err. */
int coord_admin_ensure_paths(zhandle_t *zh, char *err, size_t errlen);

#define COORD_ADMIN_MAX_BROKERS 10000   /* live brokers considered (assignments, describe) */

/* Live broker ids (children of /brokers/ids), sorted. *n = count (at most max; more is an error).
 * No /brokers/ids yet means no brokers. 0 or -1. */
int coord_admin_live_brokers(zhandle_t *zh, int32_t *ids, int max, int *n, char *err, size_t errlen);

/* Each broker's broker.rack from its registration ("" when none): racks[i]
 * for ids[i]. 0 or -1 with err (a broker not registered is an error). */
int coord_admin_broker_racks(zhandle_t *zh, const int32_t *ids, int n, char (*racks)[COORD_RACK_MAX], char *err,
                             size_t errlen);
/* Kafka's replica placement over brokers[0..n) (sorted, registered):
 * rack-aware (coord_assign_replicas_racks) when every one has a rack,
 * rack-unaware when none has, INVALID_REPLICA_ASSIGNMENT when only some
 * have. Fills out as coord_assign_replicas. 0, or -1 with res. */
int coord_admin_assign(zhandle_t *zh, const int32_t *brokers, int n, int32_t first, int count, int rf, int start,
                       int shift, int32_t *out, coord_admin_result_t *res);

/* Validate then (unless validate_only) create the topic: one zoo_multi creating /brokers/topics/[t] (topic doc
 * with a new topic id and the configs), every /brokers/topics/[t]/[p] and its replicas node, so brokers never
 * see half a topic. assignment: NULL = automatic over the live brokers (random start and shift), else
 * partitions*rf ids (explicit --replica-assignment / CreateTopics Assignments: ids must be distinct within a
 * partition, same count for every partition, brokers need not be live). partitions/rf of -1 mean the
 * defaults passed in default_partitions/default_rf. configs are checked with coord_config_valid; they go to
 * /config/topics/[t] in the same multi (set if a stale node is there), as Kafka writes them.
 * topic_id_out (may be NULL) gets the new id (all zeros with validate_only). The whole transaction must fit
 * ZooKeeper's default request limit (jute.maxbuffer, 1 MiB), else INVALID_PARTITIONS. 0, or -1 with res. */
int coord_admin_create_topic(zhandle_t *zh, const char *topic, int partitions, int rf, const int32_t *assignment,
                             int default_partitions, int default_rf, const coord_config_entry_t *configs,
                             int nconfigs, int validate_only, uint8_t topic_id_out[16], coord_admin_result_t *res);

/* Add partitions up to total_count (INVALID_PARTITIONS if not larger than now), continuing the assignment
 * pattern with the existing topic's replication factor (read from partition 0's replicas) as Kafka's
 * AdminZkClient.addPartitions does, or the explicit assignment: (total_count - current count) partitions of
 * assignment_rf ids each, for the new partitions only; assignment_rf must equal the topic's replication
 * factor (INVALID_REPLICA_ASSIGNMENT otherwise) and every id must be a live broker, as in Kafka.
 * assignment_rf is ignored when assignment is NULL. One zoo_multi. 0, or -1 with res. */
int coord_admin_add_partitions(zhandle_t *zh, const char *topic, int total_count, const int32_t *assignment,
                               int assignment_rf, int validate_only, coord_admin_result_t *res);

/* Delete: first each partition's replicas node (brokers watching it stop the replica and delete its log),
 * then the whole subtree depth-first, each node in one zoo_multi with its leaf children (so a broker
 * re-creating leader/ISR cannot slip a child in between); a NOTEMPTY/NONODE race is retried a bounded number
 * of times (20 per node) by re-listing. UNKNOWN_TOPIC_OR_PARTITION if absent. 0, or -1 with res. */
int coord_admin_delete_topic(zhandle_t *zh, const char *topic, coord_admin_result_t *res);

typedef struct {
    int32_t partition;
    int32_t replicas[COORD_MAX_REPLICAS];
    int nreplicas;
    int32_t leader;        /* -1 when no leader node */
    int32_t leader_epoch;  /* from ISR (or leader) node, -1 if none */
    int32_t isr[COORD_MAX_REPLICAS];
    int nisr;              /* 0 when no ISR node */
} coord_partition_desc_t;

typedef struct {
    char name[COORD_TOPIC_NAME_MAX + 1];
    coord_topic_t topic;                 /* id and configs */
    coord_partition_desc_t *partitions;  /* malloc'd, sorted by partition; free with coord_admin_topic_desc_free */
    int npartitions;
} coord_topic_desc_t;

/* 0, or -1 with res (UNKNOWN_TOPIC_OR_PARTITION if absent); out needs freeing only on success. */
int coord_admin_describe_topic(zhandle_t *zh, const char *topic, coord_topic_desc_t *out, coord_admin_result_t *res);
void coord_admin_topic_desc_free(coord_topic_desc_t *d);

/* ---- configs (coord_config_admin.c): /config/topics, /config/brokers, /config/changes ---- */

/* name is a topic, or for brokers an id or COORD_CONFIG_DEFAULT; anything
 * else is INVALID_REQUEST ("Broker id must be an integer, but it is: X"). */
int coord_admin_check_entity(coord_entity_t type, const char *name, coord_admin_result_t *res);

/* The entity's configs as the coordinator holds them, into entries (room for
 * COORD_MAX_TOPIC_CONFIGS): a topic's from /config/topics/[topic] or, for a
 * topic an older kipper created (no such node), from its document's "config"
 * (*legacy = 1; may be NULL); a broker's from /config/brokers/[name] (none
 * when absent). UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist.
 * 0, or -1 with res. */
int coord_admin_read_configs(zhandle_t *zh, coord_entity_t type, const char *name, coord_config_entry_t *entries,
                             int *n, int *legacy, coord_admin_result_t *res);

/* AlterConfigs (replace: the set becomes ops) or IncrementalAlterConfigs:
 * the entity's configs are read, changed by ops (coord_config_apply, with
 * its errors) and, unless validate_only, written in one multi with a change
 * notification (/config/changes/config_change_, sequential), fenced by the
 * versions read and retried (a bounded number of times) when another writer
 * came in between. A topic still in the old layout moves: its node is
 * created and its document's "config" emptied in the same multi (read old,
 * write new). Notifications older than 15 minutes (Kafka's
 * changeExpirationMs) are deleted after a write. 0, or -1 with res. */
int coord_admin_alter_configs(zhandle_t *zh, coord_entity_t type, const char *name, const coord_config_op_t *ops,
                              int nops, int replace, int validate_only, coord_admin_result_t *res);

/* Topic names, sorted; *names malloc'd array of malloc'd strings (free with coord_admin_names_free).
 * No /brokers/topics yet means no topics. 0 or -1 with err. */
int coord_admin_list_topics(zhandle_t *zh, char ***names, int *n, char *err, size_t errlen);
void coord_admin_names_free(char **names, int n);

#endif
