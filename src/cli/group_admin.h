/* group_admin.h -- what `kipper consumer-groups` asks brokers, as Kafka's
 * admin client asks it (kafka-consumer-groups.sh): the cluster (Metadata),
 * a group's coordinator (FindCoordinator), its members (DescribeGroups), its
 * committed offsets (OffsetFetch, and OffsetCommit with no generation, as a
 * tool outside the group commits), the partitions' offsets (ListOffsets),
 * the groups of each broker (ListGroups), DeleteGroups and OffsetDelete.
 *
 * Each request is built and each answer read by a pure function
 * (ga_*_request, ga_*_answer) over the broker's codec values, so the unit
 * tests drive them without a socket; the blocking calls (ga_* taking a
 * kafka_client_t) send them over kafka_client.h, under its deadline, on the
 * caller's thread.
 *
 * Results are plain C structs whose strings the struct owns (malloc'd, freed
 * by the matching *_free). Sizes come from answers the codec has bounded
 * (kafka_client.h's KAFKA_CLIENT_ANSWER_MAX); a member's assignment is read
 * within its own bytes. */
#ifndef KIPPER_CLI_GROUP_ADMIN_H
#define KIPPER_CLI_GROUP_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_client.h"

/* The versions asked: every Kafka broker since 2.1 answers them (ListGroups
 * v4, for its state filter, since 2.6), and kipper advertises them. */
#define GA_METADATA_VERSION 4
#define GA_FIND_COORDINATOR_VERSION 1
#define GA_LIST_OFFSETS_VERSION 1
#define GA_OFFSET_FETCH_VERSION 3
#define GA_OFFSET_COMMIT_VERSION 2
#define GA_DESCRIBE_GROUPS_VERSION 4
#define GA_LIST_GROUPS_VERSION 4
#define GA_DELETE_GROUPS_VERSION 1
#define GA_OFFSET_DELETE_VERSION 0   /* its only version (Kafka 2.4+) */

#define GA_EARLIEST (-2)   /* ListOffsets' timestamps: the log start, the log end */
#define GA_LATEST (-1)

typedef struct {
    int32_t id;
    char *host;
    int port;
} ga_broker_t;

/* One partition, with what the tool learns of it; -1 where unknown. */
typedef struct {
    char *topic;
    int32_t partition;
    int32_t leader;
    int64_t committed;       /* the group's offset, -1: none */
    int64_t earliest, latest, by_time;
    int64_t planned;         /* the offset a reset plan (--from-file) asks for */
    int16_t error;           /* of the last request about it that failed */
} ga_partition_t;

typedef struct {
    ga_partition_t *v;
    int n, cap;
} ga_partitions_t;

/* Sorted by topic, then partition; each once. */
int ga_partition_cmp(const void *a, const void *b);
/* The entry for (topic, partition), added (fields -1) when absent; NULL past
 * a million partitions. Keeps the list sorted. */
ga_partition_t *ga_partitions_get(ga_partitions_t *ps, const char *topic, int32_t partition);
ga_partition_t *ga_partitions_find(const ga_partitions_t *ps, const char *topic, int32_t partition);
void ga_partitions_free(ga_partitions_t *ps);

typedef struct {
    ga_broker_t *brokers;
    int nbrokers;
    ga_partitions_t parts;   /* every partition of the topics asked for */
    char **missing;          /* topics asked for that the cluster does not have */
    int nmissing;
} ga_cluster_t;

void ga_cluster_free(ga_cluster_t *c);
const ga_broker_t *ga_cluster_broker(const ga_cluster_t *c, int32_t id);

typedef struct {
    char *member_id, *instance_id, *client_id, *host;
    ga_partitions_t assigned;   /* from the consumer protocol's assignment */
} ga_member_t;

typedef struct {
    int16_t error;
    char *state, *protocol_type, *protocol;
    ga_member_t *members;
    int nmembers;
} ga_group_t;

void ga_group_free(ga_group_t *g);

typedef struct {
    char *id, *state;
} ga_listed_t;

typedef struct {
    ga_listed_t *v;
    int n;
} ga_listing_t;

void ga_listing_free(ga_listing_t *l);

/* "GROUP_ID_NOT_FOUND (the group id does not exist)": Kafka's name of an
 * error code, and what it means, for the messages of the tool. */
const char *ga_error_text(int16_t error);

/* ---- pure: requests built, answers read ---- */

/* topics NULL: every topic. */
kafka_value_t *ga_metadata_request(kafka_arena_t *a, const char *const *topics, int ntopics);
int ga_metadata_answer(const kafka_value_t *answer, const char *const *topics, int ntopics, ga_cluster_t *out);

kafka_value_t *ga_find_coordinator_request(kafka_arena_t *a, const char *group);
/* KERR_NONE with *out (host malloc'd), or the answer's error. */
int16_t ga_find_coordinator_answer(const kafka_value_t *answer, ga_broker_t *out);

/* Asks for the offset at `timestamp` (GA_EARLIEST, GA_LATEST or a time) of
 * parts[i] for each i in which[0..n). */
kafka_value_t *ga_list_offsets_request(kafka_arena_t *a, const ga_partitions_t *ps, const int *which, int n,
                                       int64_t timestamp);
/* Stores each answered offset in the field `timestamp` names (earliest,
 * latest or by_time); a partition's error in its error. */
void ga_list_offsets_answer(const kafka_value_t *answer, ga_partitions_t *ps, int64_t timestamp);

kafka_value_t *ga_offset_fetch_request(kafka_arena_t *a, const char *group);
/* Every committed offset into ps (added as needed). The group's error. */
int16_t ga_offset_fetch_answer(const kafka_value_t *answer, ga_partitions_t *ps);

/* Commits offsets[i] for parts[i] of every i with offsets[i] >= 0, with no
 * generation and no member id, as a tool outside the group. */
kafka_value_t *ga_offset_commit_request(kafka_arena_t *a, const char *group, const ga_partitions_t *ps,
                                        const int64_t *offsets);
/* The first partition's error (KERR_NONE when all took); *where names it. */
int16_t ga_offset_commit_answer(const kafka_value_t *answer, char *where, size_t wherelen);

kafka_value_t *ga_describe_groups_request(kafka_arena_t *a, const char *group);
int ga_describe_groups_answer(const kafka_value_t *answer, ga_group_t *out);
/* A consumer protocol assignment (ConsumerProtocolAssignment: version,
 * then topics and their partitions) into ps. 0, or -1 if it does not parse
 * within len bytes. */
int ga_parse_assignment(const uint8_t *p, size_t len, ga_partitions_t *ps);

/* states: a filter (empty: every group). */
kafka_value_t *ga_list_groups_request(kafka_arena_t *a, const char *const *states, int nstates);
/* The broker's groups added to out (each id once). The broker's error. */
int16_t ga_list_groups_answer(const kafka_value_t *answer, ga_listing_t *out);

kafka_value_t *ga_delete_groups_request(kafka_arena_t *a, const char *group);
int16_t ga_delete_groups_answer(const kafka_value_t *answer, const char *group);

/* Deletes the committed offsets of every partition of ps. */
kafka_value_t *ga_offset_delete_request(kafka_arena_t *a, const char *group, const ga_partitions_t *ps);
/* Each partition's error into its error field (the group's error, when
 * there is one, into all of them). The group's error. */
int16_t ga_offset_delete_answer(const kafka_value_t *answer, ga_partitions_t *ps);

/* ---- blocking: over one client ---- */

/* Each: 0, or -1 with k->err (a request-level failure); Kafka errors in the
 * answers are returned through the out values as above. */
int ga_metadata(kafka_client_t *k, const char *const *topics, int ntopics, ga_cluster_t *out);
int ga_find_coordinator(kafka_client_t *k, const char *group, ga_broker_t *out, int16_t *error);
int ga_list_offsets(kafka_client_t *k, ga_partitions_t *ps, const int *which, int n, int64_t timestamp);
/* ga_list_offsets for parts[which[0..n)] of the cluster c, asked of each
 * partition's leader over a connection of its own (client_id, timeout_ms);
 * a leader that cannot be asked is warned about on stderr and its
 * partitions get LEADER_NOT_AVAILABLE. 0, or -1 out of memory. */
int ga_list_offsets_leaders(const ga_cluster_t *c, ga_partitions_t *ps, const int *which, int n, int64_t timestamp,
                            int timeout_ms, const char *client_id);
int ga_offset_fetch(kafka_client_t *k, const char *group, ga_partitions_t *ps, int16_t *error);
int ga_offset_commit(kafka_client_t *k, const char *group, const ga_partitions_t *ps, const int64_t *offsets,
                     int16_t *error, char *where, size_t wherelen);
int ga_describe_group(kafka_client_t *k, const char *group, ga_group_t *out);
int ga_list_groups(kafka_client_t *k, const char *const *states, int nstates, ga_listing_t *out, int16_t *error);
int ga_delete_group(kafka_client_t *k, const char *group, int16_t *error);
int ga_offset_delete(kafka_client_t *k, const char *group, ga_partitions_t *ps, int16_t *error);

#endif
