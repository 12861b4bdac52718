/* broker_config.h -- server.properties with Kafka's property names and
 * defaults. */
#ifndef KIPPER_BROKER_BROKER_CONFIG_H
#define KIPPER_BROKER_BROKER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"

#define BROKER_MAX_LOG_DIRS 16
#define BROKER_PATH_MAX 1024
#define BROKER_HOST_MAX 256
#define BROKER_STATICS_MAX 320            /* every key of broker_config_defs.c */
#define BROKER_STATIC_TEXT_MAX (32 * 1024) /* their values together */

typedef struct {
    char host[BROKER_HOST_MAX];   /* "" = every address */
    int port;                     /* 0 = any free port */
} broker_endpoint_t;

typedef struct {
    int32_t broker_id;
    char broker_rack[256];        /* broker.rack: "" for none (replicas are then placed rack-unaware) */
    broker_endpoint_t listener;
    broker_endpoint_t advertised;
    int advertised_set;           /* advertised.listeners given (else = listeners) */
    char log_dirs[BROKER_MAX_LOG_DIRS][BROKER_PATH_MAX];
    int n_log_dirs;
    char zk_connect[1024];        /* as given: host:port[,host:port...][/chroot] */
    char zk_chroot[BROKER_PATH_MAX];   /* "" when none */
    int num_partitions;
    int default_replication_factor;
    int min_insync_replicas;
    int64_t log_segment_bytes;
    int64_t log_retention_ms;     /* -1 = forever */
    int64_t log_retention_bytes;  /* -1 = unbounded */
    int auto_create_topics;
    int32_t socket_request_max_bytes;
    int32_t max_connections;      /* 0: not set (three quarters of RLIMIT_NOFILE, listener.c) */
    int32_t max_connections_per_ip;
    int64_t queued_max_request_bytes;  /* -1: unbounded */
    int unclean_leader_election;  /* unclean.leader.election.enable */
    int rack_aware_reads;         /* replica.selector.class is Kafka's RackAwareReplicaSelector (KIP-392) */
    int64_t replica_lag_time_max_ms; /* KeepInSyncTime */
    int32_t replica_fetch_wait_max_ms;        /* a follower's fetch long-polls this long */
    int32_t replica_socket_timeout_ms;        /* a fetch link without progress this long reconnects */
    int32_t replica_fetch_min_bytes;
    int32_t replica_fetch_max_bytes;          /* per partition */
    int32_t replica_fetch_response_max_bytes; /* per fetch */
    int32_t replica_fetch_backoff_ms;         /* after a partition's fetch error */
    int32_t leader_election_wait_ms;          /* LeaderElectionWaitTime (kipper's key) */
    int controlled_shutdown;                  /* controlled.shutdown.enable */
    int auto_leader_rebalance;                /* auto.leader.rebalance.enable */
    int32_t leader_imbalance_check_interval_s;   /* leader.imbalance.check.interval.seconds */
    int32_t leader_imbalance_per_broker_percentage;
    int32_t controlled_shutdown_timeout_ms;   /* kipper's key */
    int64_t leader_replication_throttled_rate;   /* bytes/s of a move's catch-up traffic a leader sends */
    int64_t follower_replication_throttled_rate; /* ... and a follower asks for (repl/throttle.c) */
    int zk_session_timeout_ms;    /* zookeeper.session.timeout.ms */
    int zk_connection_timeout_ms; /* zookeeper.connection.timeout.ms (start-up) */
    int64_t log_roll_ms;          /* log.roll.ms / log.roll.hours */
    int64_t log_retention_check_ms; /* log.retention.check.interval.ms */
    int64_t log_flush_interval_ms;  /* log.flush.interval.ms: background fsync period */
    int32_t message_max_bytes;    /* message.max.bytes */
    int32_t log_index_interval_bytes;
    int32_t log_index_max_bytes;
    int log_append_time;          /* log.message.timestamp.type=LogAppendTime */
    int64_t producer_id_expiration_ms;
    /* the group coordinator */
    int32_t group_min_session_timeout_ms;    /* group.min.session.timeout.ms */
    int32_t group_max_session_timeout_ms;    /* group.max.session.timeout.ms */
    int32_t group_initial_rebalance_delay_ms;/* group.initial.rebalance.delay.ms */
    int32_t group_max_size;                  /* group.max.size */
    int64_t group_max_memory_bytes;          /* group.max.memory.bytes (kipper's key) */
    int32_t offset_metadata_max_bytes;       /* offset.metadata.max.bytes */
    int32_t offsets_commit_timeout_ms;       /* offsets.commit.timeout.ms */
    /* server.properties' own text of every Kafka broker key it sets
     * (broker_config_defs.h; a password's text is not kept, only that it is
     * set): DescribeConfigs reports them as STATIC_BROKER_CONFIG, and a
     * dynamic value of one name of a setting is weighed against them as
     * Kafka merges its properties. */
    struct {
        const char *name;         /* the definition's, static storage */
        uint32_t at;              /* the value's offset in static_text */
    } statics[BROKER_STATICS_MAX];
    int nstatics;
    char static_text[BROKER_STATIC_TEXT_MAX];
    uint32_t static_used;
} broker_config_t;

/* server.properties' text of a Kafka broker key (broker_config_defs.h; ""
 * for a password); NULL when the file does not set it. */
const char *broker_config_static_value(const broker_config_t *bc, const char *name);

/* Read server.properties from cfg (already loaded or parsed). Every Kafka
 * broker key is checked with Kafka's type and range; those kipper does not
 * act on are named together in one info line; unknown keys are warned
 * about. 0, or -1 with err naming the key, the value and what is allowed. */
int broker_config_read(config_t *cfg, broker_config_t *bc, char *err, size_t errlen);
/* config_load + broker_config_read. */
int broker_config_load(broker_config_t *bc, const char *path, char *err, size_t errlen);

/* "PLAINTEXT://host:port" (host may be empty or [v6]). 0 or -1 with err. */
int broker_parse_listener(const char *key, const char *v, broker_endpoint_t *ep, char *err, size_t errlen);

#endif
