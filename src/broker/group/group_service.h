/* group_service.h -- the broker's group coordinator around the state
 * machine of group.h: its lifecycle, the timer that runs the groups'
 * deadlines, the queue of requests to wake, placement (which broker
 * coordinates a group) and the checks of a group id. The committed offsets
 * it keeps in the coordinator are group_offsets.h; the request handlers
 * that use both are broker/api/api_group.c and api_group_offsets.c.
 *
 * Ownership: broker.c starts the service before the coordinator link and
 * stops it after, so the link's last callbacks still find the groups;
 * cluster_sync.c reports view changes.
 *
 * Threading: loop thread only. Waiting: a JoinGroup or SyncGroup that
 * cannot be answered yet keeps its group_waiter_t as request state
 * (REQ_WAIT); the state machine reports a finished waiter through a wake
 * callback, which is queued and run from a zero-delay loop timer (never from
 * inside a state-machine call) as broker_wake_request. Requests waiting for
 * coordinator reads or writes are woken the same way. */
#ifndef KIPPER_BROKER_GROUP_SERVICE_H
#define KIPPER_BROKER_GROUP_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "broker/core/broker_impl.h"
#include "group.h"

int group_service_start(broker_t *b);
void group_service_stop(broker_t *b);
/* The live brokers or our registration changed: groups that moved to
 * another coordinator are dropped (their waiting requests get
 * NOT_COORDINATOR; their offsets are read again if they come back). */
void group_service_view_changed(broker_t *b);

/* The groups this broker holds, for the operations of group.h. */
groups_t *group_service_groups(const broker_t *b);
/* After an operation on g: make sure the deadline timer fires in time. */
void group_service_touched(broker_t *b, const group_t *g);
/* Queue a wake-up of a waiting request (run from the loop soon). */
void group_service_wake(broker_t *b, uint64_t conn_id, uint64_t request_id);

/* Placement without a __consumer_offsets topic: the live broker that
 * coordinates the group, Kafka's Utils.abs(groupId.hashCode) % n over the
 * live brokers sorted by id. NULL when there is none we could name (not
 * registered ourselves: our view may be stale). */
const broker_node_t *group_coordinator_node(const broker_t *b, const char *group_id, size_t len);
/* Whether this broker coordinates the group: KERR_NONE, NOT_COORDINATOR, or
 * COORDINATOR_NOT_AVAILABLE (no live broker known, or we are not
 * registered). */
int16_t group_owner_check(const broker_t *b, const char *group_id, size_t len);
/* A group id as the request carries it: INVALID_GROUP_ID when empty (unless
 * allowed, as for offsets and DescribeGroups), longer than GROUP_ID_MAX or
 * with a NUL byte inside; else KERR_NONE. */
int16_t group_id_check(const kafka_value_t *id, int allow_empty);
/* What every group request checks first: group_id_check, then
 * group_owner_check. */
int16_t group_request_check(const broker_t *b, const kafka_value_t *id, int allow_empty);

#endif
