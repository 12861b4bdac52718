/* broker_impl.h -- what the broker's files share. Not an interface for other
 * parts: they use broker.h.
 *
 * Ownership: one event loop owns everything below. The broker_t holds the
 * connections, the cluster view (what the coordinator says: brokers, topics,
 * partitions), and for each partition this broker is assigned a replica_t
 * (its log and, when leading, the leader's state). Slow work runs on two
 * helper threads: `flusher` (fsync, checkpoints) and `admin` (blocking
 * coordinator calls of topic administration). */
#ifndef KIPPER_BROKER_BROKER_IMPL_H
#define KIPPER_BROKER_BROKER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/loop.h"
#include "base/worker.h"
#include "broker_config.h"
#include "broker/coord/coord.h"
#include "broker/coord/coord_data.h"
#include "broker/wire/kafka_codec.h"
#include "broker/log/partition_log.h"
#include "broker/log/producer_state.h"

typedef struct broker broker_t;
typedef struct conn conn_t;
typedef struct topic topic_t;
typedef struct partition partition_t;
typedef struct replica replica_t;
typedef struct group_service group_service_t;

/* Kafka error codes the broker answers with. */
enum {
    KERR_NONE = 0,
    KERR_UNKNOWN_SERVER_ERROR = -1,
    KERR_OFFSET_OUT_OF_RANGE = 1,
    KERR_CORRUPT_MESSAGE = 2,
    KERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
    KERR_LEADER_NOT_AVAILABLE = 5,
    KERR_NOT_LEADER_OR_FOLLOWER = 6,
    KERR_REQUEST_TIMED_OUT = 7,
    KERR_MESSAGE_TOO_LARGE = 10,
    KERR_INVALID_TOPIC_EXCEPTION = 17,
    KERR_RECORD_LIST_TOO_LARGE = 18,
    KERR_NOT_ENOUGH_REPLICAS = 19,
    KERR_INVALID_REQUIRED_ACKS = 21,
    KERR_INVALID_TIMESTAMP = 32,
    KERR_UNSUPPORTED_VERSION = 35,
    KERR_INVALID_REQUEST = 42,
    KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT = 43,
    KERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
    KERR_INVALID_PRODUCER_EPOCH = 47,
    KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53,
    KERR_KAFKA_STORAGE_ERROR = 56,
    KERR_UNKNOWN_PRODUCER_ID = 59,
    KERR_FENCED_LEADER_EPOCH = 74,
    KERR_UNKNOWN_LEADER_EPOCH = 75,
    KERR_UNSUPPORTED_COMPRESSION_TYPE = 76,
    KERR_INVALID_RECORD = 87,
    KERR_UNKNOWN_TOPIC_ID = 100,
};

/* ---- requests and connections ---- */

typedef enum { REQ_DONE, REQ_WAIT, REQ_CLOSE } req_status_t;

/* One request being answered. Usually decoded in place from the
 * connection's input and answered at once; a handler that must wait (a
 * fetch for data, an admin call) returns REQ_WAIT and the request is
 * detached: its frame copied, decoded again, and kept in conn->pending
 * until woken or timed out, when the handler runs again. state belongs to
 * the handler (built from copies, never pointers into the frame). */
typedef struct broker_request {
    uint64_t id;
    int16_t api_key, api_version;
    int32_t correlation_id;
    const char *client_id;    /* from the header; NULL when null */
    const kafka_api_t *api;
    kafka_value_t *body;
    kafka_arena_t arena;      /* the decode, when detached */
    uint8_t *frame;           /* owned copy, when detached */
    uint64_t deadline_ms;     /* loop time at which a waiting request runs with timed_out */
    loop_timer_t *timer;
    int timed_out;
    int wants_data;           /* woken whenever any partition gets new data */
    void *state;
    void (*state_free)(void *state);
} broker_request_t;

typedef struct splice {
    struct splice *next;
    uint64_t at;              /* output stream position (memory bytes sent before it) */
    int fd;                   /* dup'd segment file */
    int64_t pos, left;
} splice_t;

struct conn {
    uint64_t id;
    int fd;
    int port;
    char ip[64];
    int closed;               /* freed in the before-sleep hook */
    buf_t in, out;
    uint64_t out_sent;        /* memory bytes of out sent so far */
    splice_t *splices, *splices_tail;
    int nsplices;
    broker_request_t *pending;   /* a request waiting; no more frames until it is answered */
    broker_t *broker;
    conn_t *next;
};

/* ---- cluster view (cluster.c) ---- */

typedef struct {
    int32_t id;
    coord_broker_t ep;
} broker_node_t;

struct partition {
    topic_t *topic;
    int32_t id;
    int32_t replicas[COORD_MAX_REPLICAS];   /* AR, preferred first */
    int nreplicas;
    int have_replicas;
    int32_t leader;           /* -1: no leader node */
    int32_t leader_epoch;     /* of the leader node, -1 if none */
    int64_t leader_owner;     /* session that holds the leader node */
    int have_leader;          /* leader node read at least once */
    int32_t isr[COORD_MAX_REPLICAS];
    int nisr;
    int32_t isr_epoch;
    int32_t isr_version;      /* znode version: the fence for ISR writes */
    int isr_state;            /* 0 not read yet, 1 absent, 2 present */
    int electing;             /* a leader election is in flight */
    replica_t *replica;       /* this broker's replica, when assigned */
};

struct topic {
    char name[COORD_TOPIC_NAME_MAX + 1];
    coord_topic_t doc;        /* id and configs */
    int have_doc;
    partition_t **parts;      /* by partition id; NULL until known */
    int nparts;
};

/* ---- local replicas (replica.c) ---- */

typedef enum { REPLICA_NONE, REPLICA_LEADER, REPLICA_FOLLOWER } replica_role_t;

struct replica {
    partition_t *part;
    int log_dir;              /* index into cfg.log_dirs */
    char dir[BROKER_PATH_MAX + COORD_TOPIC_NAME_MAX + 16];
    partition_log_t *log;     /* NULL when the log could not be opened (storage error) */
    replica_role_t role;
    int32_t leader_epoch;     /* epoch we lead or follow at */
    /* The leader's view (seed 000): AR is part->replicas; ISR is part->isr;
     * CUR = AR - ISR; RAR = replicas being reassigned (next issue). */
    producer_state_t *producers;
    int flushing;             /* a flush job is on the flusher thread */
    int log_append_time;      /* message.timestamp.type=LogAppendTime */
};

/* ---- the broker ---- */

typedef struct {
    char name[COORD_TOPIC_NAME_MAX + 16];   /* "topic-partition" folder found at start */
    int dir;
} placed_t;
typedef struct flush_job flush_job_t;

struct broker {
    broker_config_t cfg;
    loop_t *loop;
    int listen_fd;
    int port;                 /* the port really bound */
    char adv_host[BROKER_HOST_MAX];
    int adv_port;
    char cluster_id[64];
    conn_t *conns;
    int n_conns;
    uint64_t next_conn_id, next_request_id;
    int data_arrived;         /* an append happened: run data waiters before sleeping */
    int stopping;             /* shutting down: no new replicas */

    /* coordinator link and cluster view */
    coord_t *coord;
    int registered;           /* /brokers/ids/[id] is ours in this session */
    int64_t session_id;       /* the coordinator session we set up for, 0 none */
    broker_node_t *brokers;   /* live brokers, sorted by id */
    int nbrokers;
    topic_t **topics;         /* sorted by name */
    int ntopics;
    loop_timer_t *reconnect_timer;

    /* storage */
    int clean_shutdown[BROKER_MAX_LOG_DIRS];   /* the marker was there at start */
    offset_checkpoint_entry_t *recovery_points, *high_watermarks;
    size_t nrecovery_points, nhigh_watermarks;
    placed_t *placed;
    size_t nplaced;
    flush_job_t **flushes;    /* flush jobs on the flusher thread */
    size_t nflushes;
    worker_t *flusher;
    worker_t *admin;
    loop_timer_t *flush_timer, *retention_timer;

    /* producer ids: the block this broker hands out from */
    int64_t pid_next, pid_end;
    int pid_fetching;

    group_service_t *gsvc;    /* the group coordinator (api_group.c) */
};

/* broker.c */
void broker_conn_close(broker_t *b, conn_t *c, const char *why);
/* Appends an encoded response to c->out; with ext records, their file
 * ranges are queued to follow at the right places. -1 if it cannot be built. */
int broker_reply(conn_t *c, const broker_request_t *r, const kafka_value_t *body);
/* Queue file bytes at ext->out_offset of the response just encoded. */
void broker_conn_splice(conn_t *c, const kafka_ext_records_t *ext, int fd, int64_t pos);
/* Run a waiting request's handler again (data arrived, or its async work
 * finished). Safe to call for any connection id; a gone one is ignored. */
void broker_wake_request(broker_t *b, uint64_t conn_id, uint64_t request_id);
/* Wake every request waiting for data (after an append). */
void broker_wake_data_waiters(broker_t *b);
/* From broker_handle_frame: keep a private copy of a request that waits. */
int broker_request_detach(broker_t *b, conn_t *c, const broker_request_t *r, const uint8_t *p, size_t n);

/* broker_api.c */
int broker_handle_frame(broker_t *b, conn_t *c, uint8_t *p, size_t n);
req_status_t broker_dispatch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);

/* handlers (api_*.c); each answers with broker_reply or waits */
req_status_t api_metadata(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_produce(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_fetch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_list_offsets(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_offset_for_leader_epoch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_create_topics(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_delete_topics(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_create_partitions(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_describe_configs(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_describe_cluster(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_init_producer_id(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_find_coordinator(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_join_group(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_sync_group(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_heartbeat(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_leave_group(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_describe_groups(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_list_groups(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_offset_commit(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
req_status_t api_offset_fetch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);

/* api_group.c: the group coordinator */
int group_service_start(broker_t *b);
void group_service_stop(broker_t *b);
/* The live brokers or our registration changed: groups that moved to
 * another coordinator are dropped (their waiting requests get
 * NOT_COORDINATOR; their offsets are read again if they come back). */
void group_service_view_changed(broker_t *b);

/* cluster.c: the view */
topic_t *cluster_topic(broker_t *b, const char *name);
topic_t *cluster_topic_by_id(broker_t *b, const uint8_t id[16]);
topic_t *cluster_topic_add(broker_t *b, const char *name);
void cluster_topic_remove(broker_t *b, topic_t *t);
partition_t *cluster_partition(broker_t *b, const char *topic, int32_t partition);
partition_t *topic_partition_add(topic_t *t, int32_t id);
const broker_node_t *cluster_broker(const broker_t *b, int32_t id);
int cluster_broker_live(const broker_t *b, int32_t id);
/* Topic config value (topic override, else NULL). */
const char *topic_config(const topic_t *t, const char *key);

/* cluster_sync.c: keeping the view current */
int cluster_start(broker_t *b, char *err, size_t errlen);   /* blocking set-up, then async */
void cluster_stop(broker_t *b);

/* replica.c */
void replica_reconcile(broker_t *b, partition_t *p);   /* after any change of p's coordinator state */
void replica_stop(broker_t *b, partition_t *p, int delete_log);
void replica_free(replica_t *r);
void replicas_stop_leading(broker_t *b, const char *why);
/* Leader append of one produce request's records for p. */
int16_t replica_append(broker_t *b, replica_t *r, uint8_t *records, size_t len, int32_t *err_batch,
                       int64_t *base_offset, int64_t *append_time, const char **message);

/* log_dirs.c */
int log_dirs_start(broker_t *b, char *err, size_t errlen);
void log_dirs_stop(broker_t *b);      /* flush everything, checkpoints, clean-shutdown marker */
int log_dirs_pick(broker_t *b, const char *topic, int32_t partition);
int64_t log_dirs_recovery_point(broker_t *b, const char *topic, int32_t partition);
int64_t log_dirs_high_watermark(broker_t *b, const char *topic, int32_t partition);
void log_dirs_config_for(const broker_t *b, const topic_t *t, partition_log_config_t *cfg);
/* A replica is going: a flush job in flight for it must not touch it. */
void log_dirs_forget(broker_t *b, replica_t *r);

#endif
