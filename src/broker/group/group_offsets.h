/* group_offsets.h -- the committed-offsets store of the group service:
 * offsets kept in the coordinator, where Kafka's ZooKeeper-era consumers
 * kept them, and cached in each group (group.h's offsets). The handlers of
 * OffsetCommit, OffsetFetch, DescribeGroups and ListGroups use it.
 *
 * Threading: loop thread only; every coordinator call is async, and the
 * request that waits for it is woken through group_service_wake. */
#ifndef KIPPER_BROKER_GROUP_OFFSETS_H
#define KIPPER_BROKER_GROUP_OFFSETS_H

#include <stdint.h>

#include "broker/core/broker_impl.h"
#include "group.h"

/* Reads every committed offset of g from the coordinator into its cache,
 * once (g->offsets_state tells how far it is), and wakes the request
 * (conn_id, request_id) when the read is over; g->load_failures counts
 * reads that failed. */
void group_offsets_load(broker_t *b, group_t *g, uint64_t conn_id, uint64_t request_id);

/* ---- one request's coordinator writes: an OffsetCommit's partitions, a
 * DeleteGroups' groups, an OffsetDelete's partitions ---- */

#define GROUP_COMMIT_PENDING INT16_MIN   /* an item's error while its write is out */

typedef struct {
    int nparts;
    int16_t *errors;        /* per item (partition, group), in request order */
    int outstanding;        /* writes not back yet */
    int orphaned;           /* the request went away first */
    broker_t *b;
    uint64_t conn_id, request_id;   /* woken when the last write is back */
} group_commit_t;

/* NULL out of memory. */
group_commit_t *group_commit_new(broker_t *b, int nparts, uint64_t conn_id, uint64_t request_id);
/* state_free of the request: a commit with writes out is freed by the last. */
void group_commit_release(void *cm);
/* Starts the write of one partition's offset as the commit's index-th:
 * errors[index] is GROUP_COMMIT_PENDING until the write is back, then its
 * answer, and the cache is updated when it succeeded. Returns KERR_NONE
 * when it is under way, else the partition's error (nothing started). */
int16_t group_commit_write(group_commit_t *cm, int index, group_t *g, const char *topic, int32_t partition,
                           int64_t offset, int32_t leader_epoch, const char *metadata);

/* Starts deleting g's committed offsets (all of /consumers/[group]) as the
 * batch's index-th item, after group_delete_begin made it Dead: errors[index]
 * is GROUP_COMMIT_PENDING until the coordinator is done, then KERR_NONE or
 * COORDINATOR_NOT_AVAILABLE; either way g is unloaded then (a later request
 * reads what is left). KERR_NONE when under way, else the group's error
 * (g unloaded). */
int16_t group_offsets_delete(group_commit_t *cm, int index, group_t *g);

/* Starts removing the committed offset of (topic, partition) of g from the
 * coordinator (OffsetDelete) as the batch's index-th item: errors[index]
 * is GROUP_COMMIT_PENDING until it is back, then KERR_NONE (also when
 * there was none) or COORDINATOR_NOT_AVAILABLE; the cache forgets the
 * offset once it is gone. KERR_NONE when under way, else the error. */
int16_t group_offset_remove(group_commit_t *cm, int index, group_t *g, const char *topic, int32_t partition);

/* ---- the groups the coordinator has offsets of ---- */

/* One read of the children of /consumers (group names, as encoded there). */
typedef struct {
    broker_t *b;
    uint64_t conn_id, request_id;   /* woken when done */
    int done, orphaned;
    int16_t error;          /* COORDINATOR_NOT_AVAILABLE when the read failed */
    char **names;
    int nnames;
} group_names_t;

/* Starts the read; NULL out of memory. done is set at once (with error)
 * when it cannot start. */
group_names_t *group_names_read(broker_t *b, uint64_t conn_id, uint64_t request_id);
/* state_free of the request: a read still out is freed when it is back. */
void group_names_release(void *names);

#endif
