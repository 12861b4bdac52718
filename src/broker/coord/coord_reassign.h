/* coord_reassign.h -- partition moves (reassignments) as plans: Kafka's plan
 * file format, checking a plan against the coordinator, starting, following
 * and cancelling its moves under /brokers/partitions_reassigned, and making
 * plans (spreading topics over brokers, draining a broker). With the ZooKeeper
 * C client's synchronous API, for `kipper reassign` and the broker's admin
 * thread. A move's node is the partition's target replica set; the
 * partition's leader carries it out and deletes the node when done
 * (docs/replication.md, Reassignment). */
#ifndef KIPPER_BROKER_COORD_REASSIGN_H
#define KIPPER_BROKER_COORD_REASSIGN_H

#include <stddef.h>
#include <stdint.h>

#include "coord_admin.h"

typedef struct {
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
    int32_t replicas[COORD_MAX_REPLICAS];
    int nreplicas;
} coord_move_t;

typedef struct {
    coord_move_t *moves;   /* malloc'd */
    int n;
} coord_plan_t;

/* Plans of more moves than this are refused (a move is one znode). */
#define COORD_PLAN_MAX_MOVES 100000

/* Kafka's reassignment JSON, {"version":1,"partitions":[{"topic":"t",
 * "partition":0,"replicas":[1,2,3],"log_dirs":["any",...]}]} ("log_dirs"
 * optional, and only "any" is accepted: kipper picks a broker's log dir
 * itself). Refused, with err naming the entry: malformed JSON, an empty or
 * duplicated replica list, a partition named twice. 0 or -1. */
int coord_plan_parse(const char *json, size_t len, coord_plan_t *plan, char *err, size_t errlen);
/* kafka-reassign-partitions.sh's topics file, {"version":1,"topics":
 * [{"topic":"t"},...]}: *names malloc'd (free with coord_admin_names_free).
 * 0, or -1 with err. */
int coord_topics_to_move_parse(const char *json, size_t len, char ***names, int *n, char *err, size_t errlen);
/* The same format, malloc'd and NUL-terminated (NULL out of memory). */
char *coord_plan_format(const coord_plan_t *plan);
void coord_plan_free(coord_plan_t *plan);

/* Against the coordinator: every topic and partition exists and every
 * broker named is registered. 0, or -1 with err naming the first problem.
 * Nothing is written. */
int coord_plan_check(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen);
/* The same, but only the brokers a move adds to its partition (the target's
 * brokers not among its replicas now) must be registered: Kafka's controller
 * checks AlterPartitionReassignments so (kafka-reassign-partitions.sh, as
 * coord_plan_check, every broker named). A partition's own replica may be
 * down: a target keeping it waits for it, and one that is the partition's
 * replicas ends a move in progress. */
int coord_plan_check_added(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen);
/* The plan's partitions as they are assigned now (for a rollback). */
int coord_plan_current(zhandle_t *zh, const coord_plan_t *plan, coord_plan_t *current, char *err, size_t errlen);
/* Starts every move: a move's node is created, or replaced when the partition
 * is already moving (the new target wins). A partition that already has exactly
 * the target (the same list, in order) needs no move: one in progress is
 * cancelled. One node per move, in the plan's order:
 * an error stops there, the moves before it stay started. 0 or -1. */
int coord_plan_execute(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen);
/* Deletes the plan's move nodes still there (their partitions keep the
 * replicas they had). 0 or -1. */
int coord_plan_cancel(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen);

/* A move in progress as Kafka shows it (ListPartitionReassignments,
 * kafka-topics.sh --describe): the replicas are the target followed by the
 * current replicas still to go; adding, the target's brokers not yet
 * replicas; removing, the replicas not in the target. */
typedef struct {
    int32_t replicas[2 * COORD_MAX_REPLICAS], adding[COORD_MAX_REPLICAS], removing[COORD_MAX_REPLICAS];
    int nreplicas, nadding, nremoving;
} coord_move_sets_t;
void coord_move_sets(const int32_t *current, int ncurrent, const int32_t *target, int ntarget,
                     coord_move_sets_t *out);
/* The partition's move node: 1 with its target, 0 when none is in
 * progress, -1 with err. */
int coord_move_read(zhandle_t *zh, const char *topic, int32_t partition, int32_t *target, int *ntarget, char *err,
                    size_t errlen);

typedef enum {
    COORD_MOVE_DONE,          /* no move node; the replicas are the target */
    COORD_MOVE_IN_PROGRESS,   /* the move's node is there */
    COORD_MOVE_NOT_DONE,      /* no move node; the replicas differ (cancelled, or never started) */
} coord_move_status_t;
/* -1 with err when it cannot be read. */
int coord_move_status(zhandle_t *zh, const coord_move_t *m, char *err, size_t errlen);

/* Every partition of topics[0..ntopics) placed anew over brokers (sorted,
 * registered), as a new topic would be (rack-aware when they all have
 * racks), keeping each topic's replication factor. 0 or -1 with err. */
int coord_plan_generate(zhandle_t *zh, char *const *topics, int ntopics, const int32_t *brokers, int nbrokers,
                        coord_plan_t *proposed, char *err, size_t errlen);
/* Every replica on broker moves to another registered broker not already in
 * its partition: the one with the fewest replicas so far, preferring one
 * on a rack the partition does not use yet. The leader role follows the
 * position (a drained preferred replica is replaced in first place). 0 or -1. */
int coord_plan_drain(zhandle_t *zh, int32_t broker, coord_plan_t *proposed, char *err, size_t errlen);

#endif
