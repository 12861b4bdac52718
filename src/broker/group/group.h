/* group.h -- the classic group membership protocol (Kafka's GroupCoordinator,
 * GroupMetadata and MemberMetadata), as a state machine with no I/O: the
 * caller passes the time in, and is told through a callback when a parked
 * JoinGroup or SyncGroup has its answer. group_service.c runs it on the
 * broker's loop (timers, wake-ups, placement), group_offsets.c keeps
 * committed offsets in the coordinator, broker/api/api_group*.c speak the
 * wire.
 *
 * A group moves through Kafka's states:
 *
 *   Empty ──join──▶ PreparingRebalance ──all known members rejoined, or the
 *     ▲                  ▲    │            rebalance timeout──▶ CompletingRebalance
 *     │                  │    └──no member left──▶ Empty            │
 *     │                  └──join/leave/expiry/metadata change───────┤
 *     │                                                             │ leader's SyncGroup
 *     └─────────────────────────(members gone)◀────── Stable ◀──────┘
 *
 * Dead is what a group the coordinator does not hold is described as, and
 * the state of an Empty group DeleteGroups is deleting.
 *
 * JoinGroup and SyncGroup may have to wait for other members: the request's
 * group_waiter_t is parked on its member and filled in (done, wake callback)
 * when the rebalance completes or the leader's assignment arrives. A waiter
 * whose request went away is released: the member stays "awaiting" (as in
 * Kafka, the answer is dropped), nobody is woken.
 *
 * Deadlines (session timeouts, the rebalance timeout, the initial rebalance
 * delay, the pending-sync timeout, KIP-394's pending members) are loop-clock
 * milliseconds; every operation first settles what is due, and
 * groups_tick() does it for all groups. */
#ifndef KIPPER_BROKER_GROUP_H
#define KIPPER_BROKER_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "broker/wire/kafka_errors.h"

#define GROUP_ID_MAX 1024                /* bytes; longer ids are INVALID_GROUP_ID */
#define GROUPS_MAX 10000                 /* groups held in memory */
#define GROUP_OFFSETS_MAX 100000         /* committed partitions cached per group */
#define GROUP_PROTOCOLS_MAX 64           /* protocols a member may offer */
#define GROUP_MEMBER_METADATA_MAX (1u << 20)   /* bytes of protocol metadata per member */
/* Bytes of one member's assignment (SyncGroup). Kafka bounds them only by
 * the request size, but stores a whole group's assignments as one record of
 * at most message.max.bytes (1 MiB by default) in __consumer_offsets and
 * fails the SyncGroup past it (UNKNOWN_SERVER_ERROR): no member of a group
 * Kafka can hold has more. */
#define GROUP_ASSIGNMENT_MAX (1u << 20)
#define GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS 300000  /* Kafka's NewMemberJoinTimeoutMs */

typedef enum {
    GROUP_EMPTY,
    GROUP_PREPARING_REBALANCE,
    GROUP_COMPLETING_REBALANCE,
    GROUP_STABLE,
    GROUP_DEAD,
} group_state_t;

/* "Empty", "PreparingRebalance", ... as Kafka names them (DescribeGroups). */
const char *group_state_name(group_state_t s);

typedef struct {
    int32_t min_session_timeout_ms;      /* group.min.session.timeout.ms */
    int32_t max_session_timeout_ms;      /* group.max.session.timeout.ms */
    int32_t initial_rebalance_delay_ms;  /* group.initial.rebalance.delay.ms */
    int32_t max_size;                    /* group.max.size: members per group */
    int32_t max_groups;                  /* groups held in memory */
    /* group.max.memory.bytes: members (their ids, protocol metadata and
     * assignments, and a struct's worth each) and pending member ids of
     * every group together; 0 is unbounded. */
    uint64_t max_memory;
} group_config_t;

/* ---- answers to parked requests ---- */

typedef struct {
    char *member_id;
    char *instance_id;        /* NULL: dynamic member */
    uint8_t *metadata;        /* shared with the member (NULL when none): read only */
    uint32_t len;
} group_member_info_t;

typedef enum { GROUP_WAIT_JOIN, GROUP_WAIT_SYNC } group_wait_kind_t;

typedef struct group_member group_member_t;
typedef struct group_waiter {
    group_wait_kind_t kind;
    uint64_t conn_id, request_id;   /* who is woken */
    int done;
    /* the answer, owned by the waiter */
    int16_t error;
    char *member_id;
    int32_t generation;
    char *protocol_type, *protocol_name;   /* NULL: none */
    char *leader;
    int skip_assignment;
    group_member_info_t *members;          /* JoinGroup: for the leader */
    int nmembers;
    uint8_t *assignment;                   /* SyncGroup; shared with the member, read only */
    uint32_t assignment_len;
    group_member_t *parked_on;             /* while parked */
} group_waiter_t;

group_waiter_t *group_waiter_new(group_wait_kind_t kind, uint64_t conn_id, uint64_t request_id);
/* The request is answered or gone: unpark if parked, and free. */
void group_waiter_release(group_waiter_t *w);

/* ---- groups and members ---- */

typedef struct {
    char *name;
    uint8_t *metadata;
    uint32_t len;
} group_protocol_t;

struct group_member {
    char *member_id;
    char *instance_id;          /* group.instance.id of a static member, else NULL */
    char *client_id, *client_host;
    int32_t session_timeout_ms, rebalance_timeout_ms;
    char *protocol_type;
    group_protocol_t *protocols;  /* by the member's preference */
    int nprotocols;
    uint8_t *assignment;
    uint32_t assignment_len;
    int awaiting_join;          /* Kafka's awaitingJoinCallback != null */
    int awaiting_sync;
    group_waiter_t *join_waiter, *sync_waiter;   /* NULL when the request went away */
    int is_new;                 /* joined, not yet through a rebalance */
    int pending_sync;           /* owes a SyncGroup this generation */
    uint64_t heartbeat_deadline;  /* 0: none scheduled */
    size_t cost;                /* bytes counted against max_memory */
};

typedef struct {
    char *member_id;
    uint64_t deadline;
} group_pending_t;

/* A committed offset as cached by the coordinator (group_offsets.c). */
typedef struct {
    char *topic;
    int32_t partition;
    int present;                /* committed (else: known to be absent) */
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;
    int pending;                /* commits in flight */
} group_offset_t;

typedef struct {
    uint64_t conn_id, request_id;
} group_wake_t;

typedef struct group {
    char *id;
    size_t id_len;
    uint64_t epoch;             /* this incarnation, for async callbacks */
    group_state_t state;
    int32_t generation;
    char *protocol_type;        /* of the first member; NULL for offsets-only groups */
    char *protocol_name;        /* selected; NULL when none */
    char *leader;               /* member id, NULL when none */
    group_member_t **members;   /* sorted by member id */
    int nmembers;
    int nawaiting_join;
    group_pending_t *pending;   /* KIP-394: ids handed out, not yet joined; sorted */
    int npending;
    /* PreparingRebalance: Kafka's DelayedJoin / InitialDelayedJoin */
    uint64_t join_deadline;
    int initial_join;
    int32_t initial_delay_ms, initial_remaining_ms;
    int new_member_added;
    /* CompletingRebalance/Stable: DelayedSync */
    uint64_t sync_deadline;
    /* committed offsets (group_offsets.c): sorted by topic, partition */
    group_offset_t **offsets;
    int noffsets;
    int offsets_state;          /* 0 not read, 1 reading, 2 read */
    int load_failures;          /* times a read of the group's offsets failed */
    group_wake_t *load_waiters; /* requests waiting for the read */
    int nload_waiters;
    int io_refs;                /* coordinator operations in flight for the group */
} group_t;

typedef struct groups groups_t;
typedef void (*group_wake_fn)(void *arg, uint64_t conn_id, uint64_t request_id);

groups_t *groups_new(const group_config_t *cfg, group_wake_fn wake, void *arg);
/* Resolves parked waiters with COORDINATOR_NOT_AVAILABLE and frees all. */
void groups_free(groups_t *gs);
const group_config_t *groups_config(const groups_t *gs);
/* Bytes of members and pending members held, as max_memory counts them. */
uint64_t groups_memory(const groups_t *gs);
int groups_count(const groups_t *gs);
group_t *groups_at(const groups_t *gs, int i);          /* sorted by id */
group_t *groups_find(const groups_t *gs, const char *id, size_t len);
/* A new Empty group; an idle one is dropped from memory to make room when
 * at max_groups. NULL when there is no room. */
group_t *groups_create(groups_t *gs, const char *id, size_t len, uint64_t now);
/* The coordinator no longer holds g (it moved, or the broker stops):
 * parked requests get `error`, load waiters are woken, g is freed. */
void groups_unload(groups_t *gs, group_t *g, int16_t error);
/* Settles every deadline due at `now`. */
void groups_tick(groups_t *gs, uint64_t now);
/* The earliest deadline of any group (of g), 0 if none. */
uint64_t groups_next_deadline(const groups_t *gs);
uint64_t group_next_deadline(const group_t *g);
/* The group is more than a name: it has or had members, or committed
 * offsets (else DescribeGroups calls it Dead and ListGroups leaves it out). */
int group_exists(const group_t *g);

group_member_t *group_member_find(const group_t *g, const char *member_id);
int group_is_leader(const group_t *g, const char *member_id);
/* The protocol metadata a member sent for protocol `name`, NULL if none. */
const group_protocol_t *group_member_protocol(const group_member_t *m, const char *name);

/* ---- the operations ---- */

typedef struct {
    const char *group_id;
    size_t group_id_len;
    const char *member_id;         /* "" for a new member */
    const char *instance_id;       /* NULL: dynamic */
    int require_known_member_id;   /* JoinGroup v4+ of a dynamic member (KIP-394) */
    int supports_skip_assignment;  /* JoinGroup v9+ */
    const char *client_id, *client_host;
    int32_t session_timeout_ms, rebalance_timeout_ms;
    const char *protocol_type;
    const group_protocol_t *protocols;   /* borrowed; copied when kept */
    int nprotocols;
} group_join_t;

/* JoinGroup: w is answered now (w->done) or parked until the rebalance
 * completes. A join past group.max.size, or one whose member would take the
 * groups past max_memory, is GROUP_MAX_SIZE_REACHED (and a member already
 * there is removed, as Kafka removes one past group.max.size). */
void group_join(groups_t *gs, const group_join_t *p, uint64_t now, group_waiter_t *w);

typedef struct {
    const char *member_id;
    const uint8_t *assignment;
    uint32_t len;
} group_assignment_t;

typedef struct {
    const char *group_id;
    size_t group_id_len;
    int32_t generation;
    const char *member_id, *instance_id;
    const char *protocol_type, *protocol_name;   /* NULL: not given (before v5) */
    const group_assignment_t *assignments;       /* the leader's */
    int nassignments;
} group_sync_t;

/* SyncGroup: answered now, or parked until the leader's assignment. A
 * leader's assignment with a member's part over GROUP_ASSIGNMENT_MAX, or
 * taking the groups past max_memory, cannot be kept: as Kafka when a group
 * is too large to store, every member waiting for it gets
 * UNKNOWN_SERVER_ERROR and the group rebalances. */
void group_sync(groups_t *gs, const group_sync_t *p, uint64_t now, group_waiter_t *w);

int16_t group_heartbeat(groups_t *gs, const char *group_id, size_t len, const char *member_id,
                        const char *instance_id, int32_t generation, uint64_t now);

typedef struct {
    const char *member_id;       /* "" with an instance id: remove that static member */
    const char *instance_id;
} group_leaver_t;

/* LeaveGroup (v3's batch form; older versions are a batch of one): the
 * group-level error, and one error per leaver in errors[]. */
int16_t group_leave(groups_t *gs, const char *group_id, size_t len, const group_leaver_t *leavers, int n,
                    int16_t *errors, uint64_t now);

/* OffsetCommit's membership check (Kafka's validateOffsetCommit and the
 * state rules of doCommitOffsets); a commit without a generation to a group
 * the coordinator does not hold creates it, Empty ("simple" consumers). On
 * success *out is the group whose offsets the commit updates. */
int16_t group_commit_check(groups_t *gs, const char *group_id, size_t len, int32_t generation,
                           const char *member_id, const char *instance_id, uint64_t now, group_t **out);

/* DeleteGroups' check of one group (Kafka's GroupCoordinator.handleDeleteGroups):
 * only a group without members can go. GROUP_ID_NOT_FOUND when the group does
 * not exist (or is already being deleted: Dead), NON_EMPTY_GROUP while it has
 * members or is rebalancing; else KERR_NONE and the group is Dead (its
 * pending member ids dropped), so joins and commits get
 * COORDINATOR_NOT_AVAILABLE until the caller has deleted its offsets and
 * unloaded it (groups_unload). */
int16_t group_delete_begin(groups_t *gs, group_t *g, uint64_t now);

/* Whether the members of an active "consumer" group subscribe to topic, as
 * Kafka's GroupMetadata.isSubscribedToTopic decides it for OffsetDelete:
 * from each member's metadata of the selected protocol (a
 * ConsumerProtocolSubscription). No protocol selected yet, or a member's
 * metadata that does not parse, and no topic counts as subscribed (Kafka's
 * subscribedTopics is None then). group_subscription.c. */
int group_subscribes_to(const group_t *g, const char *topic);
/* One ConsumerProtocolSubscription (version, then an array of topic
 * strings; never flexible): 1 if it names topic, 0 if not, -1 if it does
 * not parse within len bytes. */
int group_subscription_names(const uint8_t *p, uint32_t len, const char *topic);

/* ---- committed offsets cache ---- */

group_offset_t *group_offset_find(const group_t *g, const char *topic, int32_t partition);
/* Finds or adds (absent) the entry; NULL past GROUP_OFFSETS_MAX. */
group_offset_t *group_offset_get(group_t *g, const char *topic, int32_t partition);
void group_offset_store(group_offset_t *o, int64_t offset, int32_t leader_epoch, const char *metadata);
/* The offset is no longer committed (OffsetDelete removed it). */
void group_offset_forget(group_offset_t *o);
/* Adds a request to wake when the group's offsets are read. 0 or -1. */
int group_add_load_waiter(group_t *g, uint64_t conn_id, uint64_t request_id);
void group_wake_load_waiters(groups_t *gs, group_t *g);

/* ---- placement ---- */

/* Rendezvous (highest random weight) hashing: a group is coordinated by
 * the live broker whose score for it is highest, ties to the lower id.
 * When a broker leaves or comes back, only the groups it scores highest
 * on move -- with a plain hash modulo the number of brokers, nearly every
 * group would, and each move costs its members a rejoin (membership is not
 * handed over) and its clients a round of NOT_COORDINATOR while the
 * brokers' views differ. The group id is hashed as Java hashes a String
 * (base/jstring.h), once per lookup. */
uint32_t group_placement_hash(const char *group_id, size_t len);
uint64_t group_placement_score(uint32_t group_hash, int32_t broker_id);

#endif
