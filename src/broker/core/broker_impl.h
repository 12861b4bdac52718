/* broker_impl.h -- the structs the broker's files share: the process
 * (broker_t), connections and requests, the cluster view (topics,
 * partitions) and local replicas. Not an interface for other parts: they
 * use broker.h. The functions on these live in each file's own header
 * (conn.h for broker.c, cluster.h, cluster_sync.h, replica.h, log_dirs.h,
 * admin.h, broker/api/api.h for the dispatch, broker/repl/repl.h for
 * replication).
 *
 * Ownership: one event loop owns everything below. The broker_t holds the
 * connections, the cluster view (what the coordinator says: brokers, topics,
 * partitions), and for each partition this broker is assigned a replica_t
 * (its log and, when leading, the leader's state). Slow work runs on three
 * helper threads: `flusher` (fsync, checkpoints; owned by log_dirs.c),
 * `admin` (blocking coordinator calls of topic administration; owned by the
 * admin service, admin.c) and `records-check` (produced records decompressed
 * and validated; records_check.c). */
#ifndef KIPPER_BROKER_BROKER_IMPL_H
#define KIPPER_BROKER_BROKER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/loop.h"
#include "base/ratelimit.h"
#include "base/resolver.h"
#include "base/shared_bytes.h"
#include "base/worker.h"
#include "broker_config.h"
#include "broker/coord/coord.h"
#include "broker/coord/coord_data.h"
#include "broker/wire/kafka_codec.h"
#include "broker/wire/kafka_errors.h"
#include "broker/log/partition_log.h"
#include "broker/log/producer_state.h"
#include "broker/repl/commitq.h"
#include "broker/repl/isr.h"

typedef struct broker broker_t;
typedef struct conn conn_t;
typedef struct topic topic_t;
typedef struct partition partition_t;
typedef struct replica replica_t;
typedef struct group_service group_service_t;
typedef struct admin admin_t;

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
    size_t frame_len;
    /* A large frame is taken whole out of its connection's input instead of
     * copied: its memory, which frame points into. Borrowed while the frame
     * is handled, held once detached; shared with the check of its records
     * (records_check.h), so a request of a megabyte is never copied. */
    shared_bytes_t *frame_mem;
    uint64_t deadline_ms;     /* loop time at which a waiting request runs with timed_out */
    loop_timer_t *timer;
    uint64_t timer_at;        /* the deadline the timer is armed for */
    int timed_out;
    int wants_data;           /* woken whenever any partition gets new data */
    int pipelined;            /* set by a handler that waits: later Produce frames may go on meanwhile */
    int state_only;           /* set by a handler that waits: its state holds all it needs again, so the
                               * request is kept without its frame and decode (body NULL then) */
    void *state;
    void (*state_free)(void *state);
    /* While waiting (detached): its connection's queue, in arrival order.
     * Answered before the requests ahead of it, its response is held here
     * until they are answered too (responses go out in request order). */
    struct broker_request *next;
    struct conn *conn;
    int queued, answered;
    buf_t held;
    size_t mem_held;          /* counted in queued.max.request.bytes (request_memory.c) */
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
    /* Requests waiting, in arrival order. A waiting request holds every
     * later frame back (Kafka answers a connection's requests one at a
     * time), except that while only pipelined Produce requests wait (acks=all
     * for replication), further Produce frames are taken, up to
     * PIPELINE_MAX in all, and answered in order. */
    broker_request_t *waiting, *waiting_tail;
    int nwaiting;
    size_t waiting_bytes;     /* of their frames' copies */
    broker_t *broker;
    struct ip_slot *ip_slot;  /* its address's count (listener.c) */
    size_t mem_reserved;      /* its large frame being read, counted (request_memory.c) */
    int mem_wait;             /* not read until request memory frees */
    /* Loop time before which its Produce records go straight to the
     * records-check thread, not tried on the loop first (api_produce.c). */
    uint64_t check_here_after_ms;
    conn_t *next, *prev;      /* broker_t.conns */
    /* broker_t.waiting_conns: joined when a request first waits; left when
     * the last one is answered, or when closed (broker.c). */
    conn_t *wait_next, *wait_prev;
    int in_wait_list;
    conn_t *closed_next;      /* broker_t.closed_conns, once closed */
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
    uint64_t stand_after_ms;  /* a replica ahead of us in AR should stand first: our turn after this (0: none) */
    int unclean_asked;        /* named in /admin/unclean_leader_election (kipper elect --unclean) */
    /* A move asked for in /brokers/partitions_reassigned: the replica set to
     * end with (docs/replication.md, Reassignment). */
    int32_t target[COORD_MAX_REPLICAS];
    int ntarget;
    int reassigning;
    int move_confirming;      /* the move's node is gone: the target stays until that is confirmed (reassignments.c) */
    replica_t *replica;       /* this broker's replica, when assigned */
};

typedef enum { TOPIC_CONFIG_UNREAD, TOPIC_CONFIG_ABSENT, TOPIC_CONFIG_PRESENT } topic_config_state_t;

struct topic {
    char name[COORD_TOPIC_NAME_MAX + 1];
    coord_topic_t doc;        /* id, and the configs an older kipper kept here */
    int have_doc;
    /* /config/topics/[topic] (dynamic_config.c): its overrides when PRESENT;
     * ABSENT, the document's apply (a topic an older kipper created). No
     * replica opens while UNREAD, so none starts with the wrong configs. */
    topic_config_state_t config_state;
    coord_config_entry_t *overrides;   /* malloc'd, booleans in lower case */
    int noverrides;
    partition_t **parts;      /* by partition id; NULL until known */
    int nparts;
};

/* ---- local replicas (replica.c) ---- */

typedef enum { REPLICA_NONE, REPLICA_LEADER, REPLICA_FOLLOWER } replica_role_t;
typedef struct fetch_part fetch_part_t;

struct replica {
    partition_t *part;
    int log_dir;              /* index into cfg.log_dirs */
    char dir[BROKER_PATH_MAX + COORD_TOPIC_NAME_MAX + 16];
    partition_log_t *log;     /* NULL when the log could not be opened (storage error) */
    replica_role_t role;
    int32_t leader_epoch;     /* epoch we lead or follow at */
    /* Leading: AR, ISR, CUR, RAR, the followers' LEOs and the HW (repl/isr.h),
     * and the acks=all requests waiting for the HW (repl/commitq.h). */
    isr_t *isr;
    commitq_t commitq;
    /* Following: the fetcher's entry (repl/fetcher.c). */
    fetch_part_t *fetch;
    producer_state_t *producers;
    int flushing;             /* a flush job is on the flusher thread */
    int log_append_time;      /* message.timestamp.type=LogAppendTime */
    int64_t leader_hw;        /* following: the leader's HW in its last fetch answer, -1 none (DescribeLogDirs) */
    /* Leading: each follower's log start offset from its fetches at our
     * leader epoch, for DeleteRecords' low watermark (api_records.c). */
    struct {
        int32_t id, epoch;
        int64_t log_start;
    } follower_starts[COORD_MAX_REPLICAS];
    int nfollower_starts;
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
    struct listener *listener;   /* listener.c's */
    int port;                 /* the port really bound */
    char adv_host[BROKER_HOST_MAX];
    int adv_port;
    char cluster_id[64];
    conn_t *conns;
    int n_conns;
    /* The connections with requests waiting, so that waking one or every
     * data waiter is no pass over idle connections; and those closed this
     * loop iteration, freed before it sleeps (broker.c). */
    conn_t *waiting_conns;
    conn_t *closed_conns;
    uint64_t next_conn_id, next_request_id;
    int data_arrived;         /* an append happened: run data waiters before sleeping */
    /* queued.max.request.bytes (request_memory.c) */
    uint64_t queued_bytes;    /* large frames being read, and requests kept while they wait */
    int mem_waiters;          /* connections not read until memory frees */
    int mem_freed;            /* memory was given back while some wait */
    ratelimit_t mem_log;
    ratelimit_t refused_produce_log;   /* a client may send refused records without pause (api_produce.c) */
    int stopping;             /* shutting down: no new replicas */
    int shutting_down;        /* controlled shutdown: stand for no election */
    int draining;             /* handed over: connections close once they owe nothing (broker.c) */
    loop_timer_t *drain_timer;

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
    int dir_failed[BROKER_MAX_LOG_DIRS];       /* a write or fsync failed in it: never marked clean */
    int exit_status;          /* broker_main's: 1 once a log dir failed */
    offset_checkpoint_entry_t *recovery_points, *high_watermarks, *log_starts;
    size_t nrecovery_points, nhigh_watermarks, nlog_starts;
    char log_dirs_abs[BROKER_MAX_LOG_DIRS][BROKER_PATH_MAX];   /* as DescribeLogDirs names them */
    placed_t *placed;
    size_t nplaced;
    flush_job_t **flushes;    /* flush jobs on the flusher thread */
    size_t nflushes;
    worker_t *flusher;        /* log_dirs.c's */
    loop_timer_t *flush_timer, *retention_timer;

    admin_t *admin;           /* the admin service (admin.c) */
    struct dynamic_config *dyn;   /* dynamic broker configs (dynamic_config.c) */

    struct records_check_service *rcheck;   /* produced records checked off the loop (records_check.c) */
    resolver_t *resolver;                    /* the replica fetcher's host names, looked up off the loop */

    group_service_t *gsvc;    /* the group coordinator (broker/group/group_service.c) */

    struct repl *repl;        /* replication: the fetcher, ISR checks (broker/repl) */
    struct wake *wakes;       /* requests to run again from the before-sleep hook */
    size_t nwakes, wakes_cap;
};

#endif
