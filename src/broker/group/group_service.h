/* group_service.h -- what api_group.c (membership APIs, placement, timers)
 * and group_offsets.c (committed offsets in the coordinator) share: the
 * broker's group coordinator around the state machine of group.h.
 *
 * Waiting: a JoinGroup or SyncGroup that cannot be answered yet keeps its
 * group_waiter_t as request state (REQ_WAIT); the state machine reports a
 * finished waiter through a wake callback, which is queued and run from a
 * zero-delay loop timer (never from inside a state-machine call) as
 * broker_wake_request. Requests waiting for coordinator reads or writes are
 * woken the same way. One loop timer runs the groups' deadlines. */
#ifndef KIPPER_BROKER_GROUP_SERVICE_H
#define KIPPER_BROKER_GROUP_SERVICE_H

#include "broker/core/broker_impl.h"
#include "group.h"

struct group_service {
    broker_t *b;
    groups_t *groups;
    loop_timer_t *tick_timer;
    uint64_t tick_at;             /* when tick_timer fires, 0 if not armed */
    group_wake_t *wakes;          /* requests to wake from wake_timer */
    int nwakes, wakes_cap;
    loop_timer_t *wake_timer;
};

/* broker.c starts the service before the coordinator link and stops it
 * after (the link's last callbacks still find the groups). */
int group_service_start(broker_t *b);
void group_service_stop(broker_t *b);
/* The live brokers or our registration changed: groups that moved to
 * another coordinator are dropped (their waiting requests get
 * NOT_COORDINATOR; their offsets are read again if they come back). */
void group_service_view_changed(broker_t *b);

/* Whether this broker coordinates the group: GERR_NONE, NOT_COORDINATOR, or
 * COORDINATOR_NOT_AVAILABLE (no live broker known, or we are not
 * registered). */
int16_t group_owner_check(broker_t *b, const char *group_id, size_t len);
/* A group id as the request carries it: INVALID_GROUP_ID when empty (unless
 * allowed, as for offsets and DescribeGroups), longer than GROUP_ID_MAX or
 * with a NUL byte inside; else GERR_NONE. */
int16_t group_id_check(const kafka_value_t *id, int allow_empty);
/* After an operation on g: make sure the deadline timer fires in time. */
void group_service_touched(group_service_t *s, const group_t *g);
/* Queue a wake-up of a waiting request (run from the loop soon). */
void group_service_wake(void *arg, uint64_t conn_id, uint64_t request_id);

/* group_offsets.c: read every committed offset of g from the coordinator
 * (once; g->offsets_state tells how far it is), waking g's load waiters. */
void group_offsets_load(group_service_t *s, group_t *g);

#endif
