/* admin.h -- the admin service: the `admin` helper thread and the work that
 * writes to the coordinator with the ZooKeeper client's synchronous calls
 * (coord_admin.h, shared with `kipper topics`): creating and deleting
 * topics, adding partitions, auto-creating a topic a client asked for, and
 * claiming the producer-id blocks InitProducerId hands out from.
 *
 * Ownership: broker.c starts the service and stops it before the
 * coordinator link closes, since jobs run with that link's handle. The
 * request handlers (api_admin.c) build a job from a request, submit it and
 * answer from its results; this file runs it and completes it.
 *
 * Threading: every function here is called on the loop thread. A job's
 * items are written on the helper thread only while the job runs there;
 * once it is done (job->done, set on the loop) the loop reads them. A
 * request waiting for its job is woken (broker_wake_request) when it is
 * done; a job nobody waits for frees itself. */
#ifndef KIPPER_BROKER_CORE_ADMIN_H
#define KIPPER_BROKER_CORE_ADMIN_H

#include <stdint.h>

#include "broker_impl.h"
#include "broker/coord/coord_admin.h"

typedef enum {
    ADMIN_CREATE,
    ADMIN_DELETE,
    ADMIN_ADD_PARTITIONS,
    ADMIN_MOVE,               /* a partition's move started or cancelled */
    ADMIN_ELECT_PREFERRED,    /* the items' preferred replicas asked to lead */
    ADMIN_ELECT_UNCLEAN,      /* the items asked to elect outside their ISR */
    ADMIN_ALTER_CONFIGS,      /* AlterConfigs and IncrementalAlterConfigs: one resource per item */
    ADMIN_PRODUCER_IDS,       /* the service's own: the next producer-id block */
    ADMIN_ELECT_DONE,         /* the service's own: an election's node deleted */
} admin_kind_t;

/* One topic (create, delete, add partitions) or one partition (move,
 * elect) of a job. */
typedef struct {
    char *name;                     /* as the client sent it (never cut short) */
    int partitions, rf;             /* -1: the broker's default */
    int32_t *assignment;            /* partitions * rf ids, or NULL; ADMIN_MOVE: the rf target replicas */
    int32_t partition;              /* ADMIN_MOVE, ADMIN_ELECT_*: which */
    int cancel;                     /* ADMIN_MOVE: the move is cancelled, not started */
    coord_config_entry_t *configs;
    int nconfigs;
    /* ADMIN_ALTER_CONFIGS: the resource (name is a topic, a broker id or ""
     * for every broker's default) and what the request does to its configs. */
    coord_entity_t entity;
    coord_config_op_t *ops;
    int nops;
    int replace;                    /* AlterConfigs: the set becomes ops */
    int skip;                       /* refused before reaching the coordinator */
    coord_admin_result_t res;
    uint8_t topic_id[16];
} admin_item_t;

typedef struct admin_job {
    broker_t *b;
    zhandle_t *zh;
    admin_kind_t kind;
    int validate_only;
    admin_item_t *items;
    int nitems;
    uint64_t conn_id, request_id;   /* who is woken; 0: nobody waits */
    int done, orphaned;
    int64_t pid_start, pid_end;     /* ADMIN_PRODUCER_IDS */
    int elect_asked;                /* ADMIN_ELECT_*: our election node was created (deleted when done) */
    const char *elect_path;         /* ADMIN_ELECT_DONE: the node to delete */
} admin_job_t;

/* Starts the helper thread. 0, or -1 with err. */
int admin_start(broker_t *b, char *err, size_t errlen);
/* Finishes the jobs queued (their done callbacks run), then stops. */
void admin_stop(broker_t *b);
/* Jobs submitted and not yet done: they hold the current coordinator
 * handle, so cluster_sync.c waits for none before replacing it. */
int admin_jobs_pending(const broker_t *b);

/* A job of nitems empty items for the request (conn_id, request_id) to be
 * woken when it is done. NULL out of memory. */
admin_job_t *admin_job_new(admin_kind_t kind, int nitems, uint64_t conn_id, uint64_t request_id);
void admin_job_free(admin_job_t *j);
/* state_free of a request waiting for j: a job still on the thread is
 * freed when it is done instead. The election node an ADMIN_ELECT_* job
 * created is deleted then: its waiter has its answer, or has gone. */
void admin_job_release(void *j);
/* Queues j on the helper thread. -1 (j still the caller's) when the queue
 * is full. */
int admin_job_submit(broker_t *b, admin_job_t *j);

/* The item's topic name, copied whole (a name too long for Kafka is refused
 * by coord_admin, not cut short into another topic's name). 0 or -1. */
int admin_item_set_name(admin_item_t *it, const char *name);
/* The item will not reach the coordinator: its result is this error. */
void admin_item_refuse(admin_item_t *it, int16_t error, const char *message);

/* The item's change shows in our view of the cluster (leaders elected for
 * created partitions, a deleted topic gone), or there is none to wait for.
 * As in Kafka, an admin answer waits for it (up to the request's timeout). */
int admin_item_visible(broker_t *b, const admin_job_t *j, const admin_item_t *it);
int admin_job_visible(broker_t *b, const admin_job_t *j);

/* auto.create.topics.enable: create the topic with the broker's defaults,
 * answering nobody. 0 when started. */
int admin_auto_create_topic(broker_t *b, const char *name);

/* The next producer id for an idempotent producer: 0 with *pid set; 1 when
 * the block is used up and a claim of the next one is under way (data
 * waiters are woken when it is back); -1 when there is none (may_claim 0,
 * or a claim cannot start). */
int admin_producer_id(broker_t *b, int may_claim, int64_t *pid);

#endif
