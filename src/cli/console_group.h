/* console_group.h -- `kipper console-consumer --group G`: the tool as one
 * member of consumer group G, as kafka-console-consumer.sh with --group is
 * (the Java consumer with enable.auto.commit): it joins the group at the
 * group's coordinator (JoinGroup, SyncGroup with the "range" protocol,
 * the leader assigning the topic's partitions as Kafka's RangeAssignor
 * does), starts each assigned partition at the group's committed offset
 * (else at the start with --from-beginning, else at the end), heartbeats
 * every 3 s, commits its positions every 5 s and when it stops, joins again
 * when the group rebalances, and leaves the group at the end.
 *
 * Limits: the tool subscribes to its one topic; as leader it assigns only
 * that topic (members subscribed to other topics get none of theirs). A
 * process killed (Ctrl-C) does not leave: the group notices when the session
 * times out (45 s, Kafka's session.timeout.ms), and loses at most the 5 s of
 * positions not yet committed, as a Java consumer killed does.
 *
 * The encodings (subscription, assignment, the range split) are pure and
 * declared here for the unit tests. */
#ifndef KIPPER_CLI_CONSOLE_GROUP_H
#define KIPPER_CLI_CONSOLE_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "kafka_client.h"

#define CG_SESSION_TIMEOUT_MS 45000     /* Kafka 3.x's session.timeout.ms */
#define CG_REBALANCE_TIMEOUT_MS 300000  /* max.poll.interval.ms */
#define CG_HEARTBEAT_MS 3000            /* heartbeat.interval.ms */
#define CG_COMMIT_MS 5000               /* auto.commit.interval.ms */
#define CG_MEMBERS_MAX 10000

typedef struct {
    const char *group, *topic, *client_id;
    kafka_client_t coord;      /* fd -1: not open */
    char *member_id;           /* "" before the first join */
    int32_t generation;
    int32_t *assigned;         /* this member's partitions of topic */
    int nassigned;
    uint64_t next_heartbeat, next_commit;
} console_group_t;

/* ConsumerProtocolSubscription v0 of one topic, appended to out. */
void cg_subscription(buf_t *out, const char *topic);
/* Whether subscription p[0..len) (any version: its topics come first)
 * names topic: 1, 0, or -1 if it does not parse. */
int cg_subscribes(const uint8_t *p, size_t len, const char *topic);
/* RangeAssignor's share of member index i (members sorted by id) of n
 * members over partitions: [*first, *first + *count). */
void cg_range(int i, int n, int32_t partitions, int32_t *first, int32_t *count);
/* ConsumerProtocolAssignment v0 of topic's partitions [first, first +
 * count) (count 0: no topic), appended to out. */
void cg_assignment(buf_t *out, const char *topic, int32_t first, int32_t count);

/* Joins (again): finds the coordinator when not connected, JoinGroup then
 * SyncGroup until a generation is had; g->assigned is this member's
 * partitions of topic, which has `partitions` partitions. 0, or -1 with the
 * reason on stderr. */
int cg_join(console_group_t *g, kafka_client_t *boot, int32_t partitions);
/* The group's committed offset of each assigned partition into
 * committed[i] (-1: none). 0 or -1. */
int cg_committed(console_group_t *g, int64_t *committed);
/* A heartbeat when one is due: 0, 1 when the member must join again (the
 * group rebalances, or the coordinator moved or cannot be reached), -1 out
 * of memory. */
int cg_heartbeat(console_group_t *g);
/* Commits next[i] for assigned[i] (the next offset to read); when due
 * unless force. Failures are warned about on stderr. */
void cg_commit(console_group_t *g, const int64_t *next, int force);
/* Leaves the group and frees g. */
void cg_leave(console_group_t *g);

#endif
