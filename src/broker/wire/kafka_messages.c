/* kafka_messages.c -- the codec's tables of the messages the broker speaks,
 * built from the field lists of kafka_messages.h: one kafka_field_t row per
 * F(...) row there, in the same order, so a struct's field indices are its
 * enum <Struct>_<Field>. */
#include "kafka_messages.h"

/* The attributes of a row (kafka_messages.h lists them). */
#define ANY KAFKA_VMAX
#define V(a, b) .vmin = (a), .vmax = (b)
#define NUL(a) .nullable = 1, .nmin = (a)   /* nullableVersions "a+" */
#define TAG(t) .tagged = 1, .tag = (t)
#define DEF(x) .def = (x)
#define DNULL .defnull = 1                  /* default null */
#define NOFLEX .noflex = 1
#define ARR(s) .elem = KT_STRUCT, .sub = &kafka_struct_##s
#define ARRP(t) .elem = (t)
#define SUB(s) .sub = &kafka_struct_##s

#define AUTH_OPS_UNKNOWN INT32_MIN   /* "-2147483648": authorized operations not requested */

#define ROW_(S, n, t, ...) {.name = #n, .type = (t), __VA_ARGS__},
#define STRUCT_DEFINE_(S)                                                  \
    static const kafka_field_t S##_fields[] = {KAFKA_FIELDS_##S(ROW_, S)}; \
    const kafka_struct_t kafka_struct_##S = {#S, S##_fields, S##_nfields};
KAFKA_STRUCTS(STRUCT_DEFINE_)

/* ---- the API table ----
 * min..max are the versions this codec implements (Kafka 3.9's full ranges
 * for these messages); the broker chooses what it advertises within them. */

#define API(key, name, lo, hi, flex) \
    {key, #name, lo, hi, flex, &kafka_struct_##name##Request, &kafka_struct_##name##Response}

const kafka_api_t kafka_apis[] = {
    API(KAFKA_API_PRODUCE, Produce, 0, 11, 9),
    API(KAFKA_API_FETCH, Fetch, 0, 17, 12),
    API(KAFKA_API_LIST_OFFSETS, ListOffsets, 0, 10, 6),
    API(KAFKA_API_METADATA, Metadata, 0, 12, 9),
    API(KAFKA_API_API_VERSIONS, ApiVersions, 0, 4, 3),
    API(KAFKA_API_CREATE_TOPICS, CreateTopics, 0, 7, 5),
    API(KAFKA_API_DELETE_TOPICS, DeleteTopics, 0, 6, 4),
    API(KAFKA_API_INIT_PRODUCER_ID, InitProducerId, 0, 5, 2),
    API(KAFKA_API_OFFSET_FOR_LEADER_EPOCH, OffsetForLeaderEpoch, 0, 4, 4),
    API(KAFKA_API_DESCRIBE_CONFIGS, DescribeConfigs, 0, 4, 4),
    API(KAFKA_API_ALTER_CONFIGS, AlterConfigs, 0, 2, 2),
    API(KAFKA_API_INCREMENTAL_ALTER_CONFIGS, IncrementalAlterConfigs, 0, 1, 1),
    API(KAFKA_API_DELETE_RECORDS, DeleteRecords, 0, 2, 2),
    API(KAFKA_API_DESCRIBE_LOG_DIRS, DescribeLogDirs, 0, 4, 2),
    API(KAFKA_API_CREATE_PARTITIONS, CreatePartitions, 0, 3, 2),
    API(KAFKA_API_ELECT_LEADERS, ElectLeaders, 0, 2, 2),
    API(KAFKA_API_ALTER_PARTITION_REASSIGNMENTS, AlterPartitionReassignments, 0, 0, 0),
    API(KAFKA_API_LIST_PARTITION_REASSIGNMENTS, ListPartitionReassignments, 0, 0, 0),
    API(KAFKA_API_DESCRIBE_CLUSTER, DescribeCluster, 0, 1, 0),
    API(KAFKA_API_OFFSET_COMMIT, OffsetCommit, 0, 9, 8),
    API(KAFKA_API_OFFSET_FETCH, OffsetFetch, 0, 9, 6),
    API(KAFKA_API_FIND_COORDINATOR, FindCoordinator, 0, 6, 3),
    API(KAFKA_API_JOIN_GROUP, JoinGroup, 0, 9, 6),
    API(KAFKA_API_HEARTBEAT, Heartbeat, 0, 4, 4),
    API(KAFKA_API_LEAVE_GROUP, LeaveGroup, 0, 5, 4),
    API(KAFKA_API_SYNC_GROUP, SyncGroup, 0, 5, 4),
    API(KAFKA_API_DESCRIBE_GROUPS, DescribeGroups, 0, 5, 5),
    API(KAFKA_API_LIST_GROUPS, ListGroups, 0, 5, 3),
    API(KAFKA_API_DELETE_GROUPS, DeleteGroups, 0, 2, 2),
    /* flex 1: no version is flexible (its flexibleVersions are "none") */
    API(KAFKA_API_OFFSET_DELETE, OffsetDelete, 0, 0, 1),
};
const int kafka_napis = (int)(sizeof(kafka_apis) / sizeof(kafka_apis[0]));
