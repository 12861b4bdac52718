/* kafka_messages.c -- the request and response bodies of the APIs the broker
 * speaks, transcribed from Apache Kafka's message definitions
 * (clients/src/main/resources/common/message/<Name>.json).  Each row is one field:
 * name, type, the versions it exists in, and where relevant the versions in
 * which it may be null, its tag, its default.  Fields are listed in wire
 * order; tagged fields in ascending tag order.  Structs come before their
 * users because C wants them declared first. */
#include "kafka_codec.h"

#define ANY KAFKA_VMAX
#define V(a, b) .vmin = (a), .vmax = (b)
#define NUL(a) .nullable = 1, .nmin = (a)   /* nullableVersions "a+" */
#define TAG(t) .tagged = 1, .tag = (t)
#define DEF(x) .def = (x)
#define DNULL .defnull = 1                  /* default null */
#define ARR(s) .elem = KT_STRUCT, .sub = &(s)
#define ARRP(t) .elem = (t)
#define SUB(s) .sub = &(s)
#define F(n, t, ...) {.name = (n), .type = (t), __VA_ARGS__}
#define STRUCT(id, ...)                                        \
    static const kafka_field_t id##_fields[] = {__VA_ARGS__}; \
    static const kafka_struct_t id = {#id, id##_fields, (int)(sizeof(id##_fields) / sizeof(id##_fields[0]))}

#define AUTH_OPS_UNKNOWN INT32_MIN   /* "-2147483648": authorized operations not requested */

/* ---- headers (RequestHeader.json, ResponseHeader.json) ---- */

static const kafka_field_t request_header_fields[] = {
    F("RequestApiKey", KT_INT16, V(0, ANY)),
    F("RequestApiVersion", KT_INT16, V(0, ANY)),
    F("CorrelationId", KT_INT32, V(0, ANY)),
    /* Always a classic int16-length string, so that an old broker can read
     * the header of any ApiVersions request. */
    F("ClientId", KT_STRING, V(1, ANY), NUL(1), .noflex = 1),
};
const kafka_struct_t kafka_request_header = {"RequestHeader", request_header_fields, 4};

static const kafka_field_t response_header_fields[] = {
    F("CorrelationId", KT_INT32, V(0, ANY)),
};
const kafka_struct_t kafka_response_header = {"ResponseHeader", response_header_fields, 1};

/* ---- ApiVersions (key 18) ---- */

STRUCT(ApiVersionsRequest,
    F("ClientSoftwareName", KT_STRING, V(3, ANY)),
    F("ClientSoftwareVersion", KT_STRING, V(3, ANY)));

STRUCT(ApiVersion,
    F("ApiKey", KT_INT16, V(0, ANY)),
    F("MinVersion", KT_INT16, V(0, ANY)),
    F("MaxVersion", KT_INT16, V(0, ANY)));
STRUCT(SupportedFeatureKey,
    F("Name", KT_STRING, V(3, ANY)),
    F("MinVersion", KT_INT16, V(3, ANY)),
    F("MaxVersion", KT_INT16, V(3, ANY)));
STRUCT(FinalizedFeatureKey,
    F("Name", KT_STRING, V(3, ANY)),
    F("MaxVersionLevel", KT_INT16, V(3, ANY)),
    F("MinVersionLevel", KT_INT16, V(3, ANY)));
STRUCT(ApiVersionsResponse,
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ApiKeys", KT_ARRAY, ARR(ApiVersion), V(0, ANY)),
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("SupportedFeatures", KT_ARRAY, ARR(SupportedFeatureKey), V(3, ANY), TAG(0)),
    F("FinalizedFeaturesEpoch", KT_INT64, V(3, ANY), TAG(1), DEF(-1)),
    F("FinalizedFeatures", KT_ARRAY, ARR(FinalizedFeatureKey), V(3, ANY), TAG(2)),
    F("ZkMigrationReady", KT_BOOL, V(3, ANY), TAG(3)));

/* ---- Metadata (key 3) ---- */

STRUCT(MetadataRequestTopic,
    F("TopicId", KT_UUID, V(10, ANY)),
    F("Name", KT_STRING, V(0, ANY), NUL(10)));
STRUCT(MetadataRequest,
    /* v0: an empty array means all topics; v1+: null does. */
    F("Topics", KT_ARRAY, ARR(MetadataRequestTopic), V(0, ANY), NUL(1)),
    F("AllowAutoTopicCreation", KT_BOOL, V(4, ANY), DEF(1)),
    F("IncludeClusterAuthorizedOperations", KT_BOOL, V(8, 10)),
    F("IncludeTopicAuthorizedOperations", KT_BOOL, V(8, ANY)));

STRUCT(MetadataResponseBroker,
    F("NodeId", KT_INT32, V(0, ANY)),
    F("Host", KT_STRING, V(0, ANY)),
    F("Port", KT_INT32, V(0, ANY)),
    F("Rack", KT_STRING, V(1, ANY), NUL(1), DNULL));
STRUCT(MetadataResponsePartition,
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("LeaderId", KT_INT32, V(0, ANY)),
    F("LeaderEpoch", KT_INT32, V(7, ANY), DEF(-1)),
    F("ReplicaNodes", KT_ARRAY, ARRP(KT_INT32), V(0, ANY)),
    F("IsrNodes", KT_ARRAY, ARRP(KT_INT32), V(0, ANY)),
    F("OfflineReplicas", KT_ARRAY, ARRP(KT_INT32), V(5, ANY)));
STRUCT(MetadataResponseTopic,
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("Name", KT_STRING, V(0, ANY), NUL(12)),
    F("TopicId", KT_UUID, V(10, ANY)),
    F("IsInternal", KT_BOOL, V(1, ANY)),
    F("Partitions", KT_ARRAY, ARR(MetadataResponsePartition), V(0, ANY)),
    F("TopicAuthorizedOperations", KT_INT32, V(8, ANY), DEF(AUTH_OPS_UNKNOWN)));
STRUCT(MetadataResponse,
    F("ThrottleTimeMs", KT_INT32, V(3, ANY)),
    F("Brokers", KT_ARRAY, ARR(MetadataResponseBroker), V(0, ANY)),
    F("ClusterId", KT_STRING, V(2, ANY), NUL(2), DNULL),
    F("ControllerId", KT_INT32, V(1, ANY), DEF(-1)),
    F("Topics", KT_ARRAY, ARR(MetadataResponseTopic), V(0, ANY)),
    F("ClusterAuthorizedOperations", KT_INT32, V(8, 10), DEF(AUTH_OPS_UNKNOWN)));

/* ---- Produce (key 0) ---- */

STRUCT(PartitionProduceData,
    F("Index", KT_INT32, V(0, ANY)),
    F("Records", KT_RECORDS, V(0, ANY), NUL(0)));
STRUCT(TopicProduceData,
    F("Name", KT_STRING, V(0, ANY)),
    F("PartitionData", KT_ARRAY, ARR(PartitionProduceData), V(0, ANY)));
STRUCT(ProduceRequest,
    F("TransactionalId", KT_STRING, V(3, ANY), NUL(3), DNULL),
    F("Acks", KT_INT16, V(0, ANY)),
    F("TimeoutMs", KT_INT32, V(0, ANY)),
    F("TopicData", KT_ARRAY, ARR(TopicProduceData), V(0, ANY)));

STRUCT(BatchIndexAndErrorMessage,
    F("BatchIndex", KT_INT32, V(8, ANY)),
    F("BatchIndexErrorMessage", KT_STRING, V(8, ANY), NUL(8), DNULL));
STRUCT(ProduceLeaderIdAndEpoch,
    F("LeaderId", KT_INT32, V(10, ANY), DEF(-1)),
    F("LeaderEpoch", KT_INT32, V(10, ANY), DEF(-1)));
STRUCT(PartitionProduceResponse,
    F("Index", KT_INT32, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("BaseOffset", KT_INT64, V(0, ANY)),
    F("LogAppendTimeMs", KT_INT64, V(2, ANY), DEF(-1)),
    F("LogStartOffset", KT_INT64, V(5, ANY), DEF(-1)),
    F("RecordErrors", KT_ARRAY, ARR(BatchIndexAndErrorMessage), V(8, ANY)),
    F("ErrorMessage", KT_STRING, V(8, ANY), NUL(8), DNULL),
    F("CurrentLeader", KT_STRUCT, SUB(ProduceLeaderIdAndEpoch), V(10, ANY), TAG(0)));
STRUCT(TopicProduceResponse,
    F("Name", KT_STRING, V(0, ANY)),
    F("PartitionResponses", KT_ARRAY, ARR(PartitionProduceResponse), V(0, ANY)));
STRUCT(ProduceNodeEndpoint,
    F("NodeId", KT_INT32, V(10, ANY)),
    F("Host", KT_STRING, V(10, ANY)),
    F("Port", KT_INT32, V(10, ANY)),
    F("Rack", KT_STRING, V(10, ANY), NUL(10), DNULL));
STRUCT(ProduceResponse,
    F("Responses", KT_ARRAY, ARR(TopicProduceResponse), V(0, ANY)),
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("NodeEndpoints", KT_ARRAY, ARR(ProduceNodeEndpoint), V(10, ANY), TAG(0)));

/* ---- Fetch (key 1) ---- */

STRUCT(ReplicaState,
    F("ReplicaId", KT_INT32, V(15, ANY), DEF(-1)),
    F("ReplicaEpoch", KT_INT64, V(15, ANY), DEF(-1)));
STRUCT(FetchPartition,
    F("Partition", KT_INT32, V(0, ANY)),
    F("CurrentLeaderEpoch", KT_INT32, V(9, ANY), DEF(-1)),
    F("FetchOffset", KT_INT64, V(0, ANY)),
    F("LastFetchedEpoch", KT_INT32, V(12, ANY), DEF(-1)),
    F("LogStartOffset", KT_INT64, V(5, ANY), DEF(-1)),
    F("PartitionMaxBytes", KT_INT32, V(0, ANY)),
    F("ReplicaDirectoryId", KT_UUID, V(17, ANY), TAG(0)));
STRUCT(FetchTopic,
    F("Topic", KT_STRING, V(0, 12)),
    F("TopicId", KT_UUID, V(13, ANY)),
    F("Partitions", KT_ARRAY, ARR(FetchPartition), V(0, ANY)));
STRUCT(ForgottenTopic,
    F("Topic", KT_STRING, V(7, 12)),
    F("TopicId", KT_UUID, V(13, ANY)),
    F("Partitions", KT_ARRAY, ARRP(KT_INT32), V(7, ANY)));
STRUCT(FetchRequest,
    F("ClusterId", KT_STRING, V(12, ANY), NUL(12), TAG(0), DNULL),
    F("ReplicaId", KT_INT32, V(0, 14), DEF(-1)),
    F("ReplicaState", KT_STRUCT, SUB(ReplicaState), V(15, ANY), TAG(1)),
    F("MaxWaitMs", KT_INT32, V(0, ANY)),
    F("MinBytes", KT_INT32, V(0, ANY)),
    F("MaxBytes", KT_INT32, V(3, ANY), DEF(0x7fffffff)),
    F("IsolationLevel", KT_INT8, V(4, ANY)),
    F("SessionId", KT_INT32, V(7, ANY)),
    F("SessionEpoch", KT_INT32, V(7, ANY), DEF(-1)),
    F("Topics", KT_ARRAY, ARR(FetchTopic), V(0, ANY)),
    F("ForgottenTopicsData", KT_ARRAY, ARR(ForgottenTopic), V(7, ANY)),
    F("RackId", KT_STRING, V(11, ANY)));

STRUCT(EpochEndOffset,
    F("Epoch", KT_INT32, V(12, ANY), DEF(-1)),
    F("EndOffset", KT_INT64, V(12, ANY), DEF(-1)));
STRUCT(FetchLeaderIdAndEpoch,
    F("LeaderId", KT_INT32, V(12, ANY), DEF(-1)),
    F("LeaderEpoch", KT_INT32, V(12, ANY), DEF(-1)));
STRUCT(SnapshotId,
    F("EndOffset", KT_INT64, V(0, ANY), DEF(-1)),
    F("Epoch", KT_INT32, V(0, ANY), DEF(-1)));
STRUCT(AbortedTransaction,
    F("ProducerId", KT_INT64, V(4, ANY)),
    F("FirstOffset", KT_INT64, V(4, ANY)));
STRUCT(FetchPartitionData,
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("HighWatermark", KT_INT64, V(0, ANY)),
    F("LastStableOffset", KT_INT64, V(4, ANY), DEF(-1)),
    F("LogStartOffset", KT_INT64, V(5, ANY), DEF(-1)),
    F("DivergingEpoch", KT_STRUCT, SUB(EpochEndOffset), V(12, ANY), TAG(0)),
    F("CurrentLeader", KT_STRUCT, SUB(FetchLeaderIdAndEpoch), V(12, ANY), TAG(1)),
    F("SnapshotId", KT_STRUCT, SUB(SnapshotId), V(12, ANY), TAG(2)),
    F("AbortedTransactions", KT_ARRAY, ARR(AbortedTransaction), V(4, ANY), NUL(4)),
    F("PreferredReadReplica", KT_INT32, V(11, ANY), DEF(-1)),
    F("Records", KT_RECORDS, V(0, ANY), NUL(0)));
STRUCT(FetchableTopicResponse,
    F("Topic", KT_STRING, V(0, 12)),
    F("TopicId", KT_UUID, V(13, ANY)),
    F("Partitions", KT_ARRAY, ARR(FetchPartitionData), V(0, ANY)));
STRUCT(FetchNodeEndpoint,
    F("NodeId", KT_INT32, V(16, ANY)),
    F("Host", KT_STRING, V(16, ANY)),
    F("Port", KT_INT32, V(16, ANY)),
    F("Rack", KT_STRING, V(16, ANY), NUL(16), DNULL));
STRUCT(FetchResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("ErrorCode", KT_INT16, V(7, ANY)),
    F("SessionId", KT_INT32, V(7, ANY)),
    F("Responses", KT_ARRAY, ARR(FetchableTopicResponse), V(0, ANY)),
    F("NodeEndpoints", KT_ARRAY, ARR(FetchNodeEndpoint), V(16, ANY), TAG(0)));

/* ---- ListOffsets (key 2) ---- */

STRUCT(ListOffsetsPartition,
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("CurrentLeaderEpoch", KT_INT32, V(4, ANY), DEF(-1)),
    F("Timestamp", KT_INT64, V(0, ANY)),
    F("MaxNumOffsets", KT_INT32, V(0, 0), DEF(1)));
STRUCT(ListOffsetsTopic,
    F("Name", KT_STRING, V(0, ANY)),
    F("Partitions", KT_ARRAY, ARR(ListOffsetsPartition), V(0, ANY)));
STRUCT(ListOffsetsRequest,
    F("ReplicaId", KT_INT32, V(0, ANY)),
    F("IsolationLevel", KT_INT8, V(2, ANY)),
    F("Topics", KT_ARRAY, ARR(ListOffsetsTopic), V(0, ANY)),
    F("TimeoutMs", KT_INT32, V(10, ANY)));

STRUCT(ListOffsetsPartitionResponse,
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("OldStyleOffsets", KT_ARRAY, ARRP(KT_INT64), V(0, 0)),
    F("Timestamp", KT_INT64, V(1, ANY), DEF(-1)),
    F("Offset", KT_INT64, V(1, ANY), DEF(-1)),
    F("LeaderEpoch", KT_INT32, V(4, ANY), DEF(-1)));
STRUCT(ListOffsetsTopicResponse,
    F("Name", KT_STRING, V(0, ANY)),
    F("Partitions", KT_ARRAY, ARR(ListOffsetsPartitionResponse), V(0, ANY)));
STRUCT(ListOffsetsResponse,
    F("ThrottleTimeMs", KT_INT32, V(2, ANY)),
    F("Topics", KT_ARRAY, ARR(ListOffsetsTopicResponse), V(0, ANY)));

/* ---- CreateTopics (key 19) ---- */

STRUCT(CreatableReplicaAssignment,
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("BrokerIds", KT_ARRAY, ARRP(KT_INT32), V(0, ANY)));
STRUCT(CreatableTopicConfig,
    F("Name", KT_STRING, V(0, ANY)),
    F("Value", KT_STRING, V(0, ANY), NUL(0)));
STRUCT(CreatableTopic,
    F("Name", KT_STRING, V(0, ANY)),
    F("NumPartitions", KT_INT32, V(0, ANY)),
    F("ReplicationFactor", KT_INT16, V(0, ANY)),
    F("Assignments", KT_ARRAY, ARR(CreatableReplicaAssignment), V(0, ANY)),
    F("Configs", KT_ARRAY, ARR(CreatableTopicConfig), V(0, ANY)));
STRUCT(CreateTopicsRequest,
    F("Topics", KT_ARRAY, ARR(CreatableTopic), V(0, ANY)),
    F("timeoutMs", KT_INT32, V(0, ANY), DEF(60000)),
    F("validateOnly", KT_BOOL, V(1, ANY)));

STRUCT(CreatableTopicConfigs,
    F("Name", KT_STRING, V(5, ANY)),
    F("Value", KT_STRING, V(5, ANY), NUL(5)),
    F("ReadOnly", KT_BOOL, V(5, ANY)),
    F("ConfigSource", KT_INT8, V(5, ANY), DEF(-1)),
    F("IsSensitive", KT_BOOL, V(5, ANY)));
STRUCT(CreatableTopicResult,
    F("Name", KT_STRING, V(0, ANY)),
    F("TopicId", KT_UUID, V(7, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ErrorMessage", KT_STRING, V(1, ANY), NUL(0)),
    F("TopicConfigErrorCode", KT_INT16, V(5, ANY), TAG(0)),
    F("NumPartitions", KT_INT32, V(5, ANY), DEF(-1)),
    F("ReplicationFactor", KT_INT16, V(5, ANY), DEF(-1)),
    F("Configs", KT_ARRAY, ARR(CreatableTopicConfigs), V(5, ANY), NUL(5)));
STRUCT(CreateTopicsResponse,
    F("ThrottleTimeMs", KT_INT32, V(2, ANY)),
    F("Topics", KT_ARRAY, ARR(CreatableTopicResult), V(0, ANY)));

/* ---- DeleteTopics (key 20) ---- */

STRUCT(DeleteTopicState,
    F("Name", KT_STRING, V(6, ANY), NUL(6), DNULL),
    F("TopicId", KT_UUID, V(6, ANY)));
STRUCT(DeleteTopicsRequest,
    F("Topics", KT_ARRAY, ARR(DeleteTopicState), V(6, ANY)),
    F("TopicNames", KT_ARRAY, ARRP(KT_STRING), V(0, 5)),
    F("TimeoutMs", KT_INT32, V(0, ANY)));

STRUCT(DeletableTopicResult,
    F("Name", KT_STRING, V(0, ANY), NUL(6)),
    F("TopicId", KT_UUID, V(6, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ErrorMessage", KT_STRING, V(5, ANY), NUL(5), DNULL));
STRUCT(DeleteTopicsResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("Responses", KT_ARRAY, ARR(DeletableTopicResult), V(0, ANY)));

/* ---- CreatePartitions (key 37) ---- */

STRUCT(CreatePartitionsAssignment,
    F("BrokerIds", KT_ARRAY, ARRP(KT_INT32), V(0, ANY)));
STRUCT(CreatePartitionsTopic,
    F("Name", KT_STRING, V(0, ANY)),
    F("Count", KT_INT32, V(0, ANY)),
    F("Assignments", KT_ARRAY, ARR(CreatePartitionsAssignment), V(0, ANY), NUL(0)));
STRUCT(CreatePartitionsRequest,
    F("Topics", KT_ARRAY, ARR(CreatePartitionsTopic), V(0, ANY)),
    F("TimeoutMs", KT_INT32, V(0, ANY)),
    F("ValidateOnly", KT_BOOL, V(0, ANY)));

STRUCT(CreatePartitionsTopicResult,
    F("Name", KT_STRING, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ErrorMessage", KT_STRING, V(0, ANY), NUL(0), DNULL));
STRUCT(CreatePartitionsResponse,
    F("ThrottleTimeMs", KT_INT32, V(0, ANY)),
    F("Results", KT_ARRAY, ARR(CreatePartitionsTopicResult), V(0, ANY)));

/* ---- DescribeConfigs (key 32) ---- */

STRUCT(DescribeConfigsResource,
    F("ResourceType", KT_INT8, V(0, ANY)),
    F("ResourceName", KT_STRING, V(0, ANY)),
    F("ConfigurationKeys", KT_ARRAY, ARRP(KT_STRING), V(0, ANY), NUL(0)));
STRUCT(DescribeConfigsRequest,
    F("Resources", KT_ARRAY, ARR(DescribeConfigsResource), V(0, ANY)),
    F("IncludeSynonyms", KT_BOOL, V(1, ANY)),
    F("IncludeDocumentation", KT_BOOL, V(3, ANY)));

STRUCT(DescribeConfigsSynonym,
    F("Name", KT_STRING, V(1, ANY)),
    F("Value", KT_STRING, V(1, ANY), NUL(0)),
    F("Source", KT_INT8, V(1, ANY)));
STRUCT(DescribeConfigsResourceResult,
    F("Name", KT_STRING, V(0, ANY)),
    F("Value", KT_STRING, V(0, ANY), NUL(0)),
    F("ReadOnly", KT_BOOL, V(0, ANY)),
    F("IsDefault", KT_BOOL, V(0, 0)),
    F("ConfigSource", KT_INT8, V(1, ANY), DEF(-1)),
    F("IsSensitive", KT_BOOL, V(0, ANY)),
    F("Synonyms", KT_ARRAY, ARR(DescribeConfigsSynonym), V(1, ANY)),
    F("ConfigType", KT_INT8, V(3, ANY)),
    F("Documentation", KT_STRING, V(3, ANY), NUL(0)));
STRUCT(DescribeConfigsResult,
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ErrorMessage", KT_STRING, V(0, ANY), NUL(0)),
    F("ResourceType", KT_INT8, V(0, ANY)),
    F("ResourceName", KT_STRING, V(0, ANY)),
    F("Configs", KT_ARRAY, ARR(DescribeConfigsResourceResult), V(0, ANY)));
STRUCT(DescribeConfigsResponse,
    F("ThrottleTimeMs", KT_INT32, V(0, ANY)),
    F("Results", KT_ARRAY, ARR(DescribeConfigsResult), V(0, ANY)));

/* ---- DescribeCluster (key 60; flexible from v0) ---- */

STRUCT(DescribeClusterRequest,
    F("IncludeClusterAuthorizedOperations", KT_BOOL, V(0, ANY)),
    F("EndpointType", KT_INT8, V(1, ANY), DEF(1)));

STRUCT(DescribeClusterBroker,
    F("BrokerId", KT_INT32, V(0, ANY)),
    F("Host", KT_STRING, V(0, ANY)),
    F("Port", KT_INT32, V(0, ANY)),
    F("Rack", KT_STRING, V(0, ANY), NUL(0), DNULL));
STRUCT(DescribeClusterResponse,
    F("ThrottleTimeMs", KT_INT32, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ErrorMessage", KT_STRING, V(0, ANY), NUL(0), DNULL),
    F("EndpointType", KT_INT8, V(1, ANY), DEF(1)),
    F("ClusterId", KT_STRING, V(0, ANY)),
    F("ControllerId", KT_INT32, V(0, ANY), DEF(-1)),
    F("Brokers", KT_ARRAY, ARR(DescribeClusterBroker), V(0, ANY)),
    F("ClusterAuthorizedOperations", KT_INT32, V(0, ANY), DEF(AUTH_OPS_UNKNOWN)));

/* ---- InitProducerId (key 22) ---- */

STRUCT(InitProducerIdRequest,
    F("TransactionalId", KT_STRING, V(0, ANY), NUL(0)),
    F("TransactionTimeoutMs", KT_INT32, V(0, ANY)),
    F("ProducerId", KT_INT64, V(3, ANY), DEF(-1)),
    F("ProducerEpoch", KT_INT16, V(3, ANY), DEF(-1)));
STRUCT(InitProducerIdResponse,
    F("ThrottleTimeMs", KT_INT32, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ProducerId", KT_INT64, V(0, ANY), DEF(-1)),
    F("ProducerEpoch", KT_INT16, V(0, ANY)));

/* ---- OffsetForLeaderEpoch (key 23) ---- */

STRUCT(OffsetForLeaderPartition,
    F("Partition", KT_INT32, V(0, ANY)),
    F("CurrentLeaderEpoch", KT_INT32, V(2, ANY), DEF(-1)),
    F("LeaderEpoch", KT_INT32, V(0, ANY)));
STRUCT(OffsetForLeaderTopic,
    F("Topic", KT_STRING, V(0, ANY)),
    F("Partitions", KT_ARRAY, ARR(OffsetForLeaderPartition), V(0, ANY)));
STRUCT(OffsetForLeaderEpochRequest,
    /* -2: a consumer (debug id); -1 would be an ordinary consumer in v3+. */
    F("ReplicaId", KT_INT32, V(3, ANY), DEF(-2)),
    F("Topics", KT_ARRAY, ARR(OffsetForLeaderTopic), V(0, ANY)));

STRUCT(OffsetForLeaderEpochEndOffset,
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("Partition", KT_INT32, V(0, ANY)),
    F("LeaderEpoch", KT_INT32, V(1, ANY), DEF(-1)),
    F("EndOffset", KT_INT64, V(0, ANY), DEF(-1)));
STRUCT(OffsetForLeaderTopicResult,
    F("Topic", KT_STRING, V(0, ANY)),
    F("Partitions", KT_ARRAY, ARR(OffsetForLeaderEpochEndOffset), V(0, ANY)));
STRUCT(OffsetForLeaderEpochResponse,
    F("ThrottleTimeMs", KT_INT32, V(2, ANY)),
    F("Topics", KT_ARRAY, ARR(OffsetForLeaderTopicResult), V(0, ANY)));

/* ---- FindCoordinator (key 10) ---- */

STRUCT(FindCoordinatorRequest,
    F("Key", KT_STRING, V(0, 3)),
    F("KeyType", KT_INT8, V(1, ANY)),
    F("CoordinatorKeys", KT_ARRAY, ARRP(KT_STRING), V(4, ANY)));

STRUCT(Coordinator,
    F("Key", KT_STRING, V(4, ANY)),
    F("NodeId", KT_INT32, V(4, ANY)),
    F("Host", KT_STRING, V(4, ANY)),
    F("Port", KT_INT32, V(4, ANY)),
    F("ErrorCode", KT_INT16, V(4, ANY)),
    F("ErrorMessage", KT_STRING, V(4, ANY), NUL(4)));
STRUCT(FindCoordinatorResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("ErrorCode", KT_INT16, V(0, 3)),
    F("ErrorMessage", KT_STRING, V(1, 3), NUL(1)),
    F("NodeId", KT_INT32, V(0, 3)),
    F("Host", KT_STRING, V(0, 3)),
    F("Port", KT_INT32, V(0, 3)),
    F("Coordinators", KT_ARRAY, ARR(Coordinator), V(4, ANY)));

/* ---- JoinGroup (key 11) ---- */

STRUCT(JoinGroupRequestProtocol,
    F("Name", KT_STRING, V(0, ANY)),
    F("Metadata", KT_BYTES, V(0, ANY)));
STRUCT(JoinGroupRequest,
    F("GroupId", KT_STRING, V(0, ANY)),
    F("SessionTimeoutMs", KT_INT32, V(0, ANY)),
    /* absent in v0, where the session timeout is used instead */
    F("RebalanceTimeoutMs", KT_INT32, V(1, ANY), DEF(-1)),
    F("MemberId", KT_STRING, V(0, ANY)),
    F("GroupInstanceId", KT_STRING, V(5, ANY), NUL(5), DNULL),
    F("ProtocolType", KT_STRING, V(0, ANY)),
    F("Protocols", KT_ARRAY, ARR(JoinGroupRequestProtocol), V(0, ANY)),
    F("Reason", KT_STRING, V(8, ANY), NUL(8), DNULL));

STRUCT(JoinGroupResponseMember,
    F("MemberId", KT_STRING, V(0, ANY)),
    F("GroupInstanceId", KT_STRING, V(5, ANY), NUL(5), DNULL),
    F("Metadata", KT_BYTES, V(0, ANY)));
STRUCT(JoinGroupResponse,
    F("ThrottleTimeMs", KT_INT32, V(2, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("GenerationId", KT_INT32, V(0, ANY), DEF(-1)),
    F("ProtocolType", KT_STRING, V(7, ANY), NUL(7), DNULL),
    F("ProtocolName", KT_STRING, V(0, ANY), NUL(7)),
    F("Leader", KT_STRING, V(0, ANY)),
    F("SkipAssignment", KT_BOOL, V(9, ANY)),
    F("MemberId", KT_STRING, V(0, ANY)),
    F("Members", KT_ARRAY, ARR(JoinGroupResponseMember), V(0, ANY)));

/* ---- Heartbeat (key 12) ---- */

STRUCT(HeartbeatRequest,
    F("GroupId", KT_STRING, V(0, ANY)),
    F("GenerationId", KT_INT32, V(0, ANY)),
    F("MemberId", KT_STRING, V(0, ANY)),
    F("GroupInstanceId", KT_STRING, V(3, ANY), NUL(3), DNULL));
STRUCT(HeartbeatResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)));

/* ---- LeaveGroup (key 13) ---- */

STRUCT(MemberIdentity,
    F("MemberId", KT_STRING, V(3, ANY)),
    F("GroupInstanceId", KT_STRING, V(3, ANY), NUL(3), DNULL),
    F("Reason", KT_STRING, V(5, ANY), NUL(5), DNULL));
STRUCT(LeaveGroupRequest,
    F("GroupId", KT_STRING, V(0, ANY)),
    F("MemberId", KT_STRING, V(0, 2)),
    F("Members", KT_ARRAY, ARR(MemberIdentity), V(3, ANY)));

STRUCT(MemberResponse,
    F("MemberId", KT_STRING, V(3, ANY)),
    F("GroupInstanceId", KT_STRING, V(3, ANY), NUL(3)),
    F("ErrorCode", KT_INT16, V(3, ANY)));
STRUCT(LeaveGroupResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("Members", KT_ARRAY, ARR(MemberResponse), V(3, ANY)));

/* ---- SyncGroup (key 14) ---- */

STRUCT(SyncGroupRequestAssignment,
    F("MemberId", KT_STRING, V(0, ANY)),
    F("Assignment", KT_BYTES, V(0, ANY)));
STRUCT(SyncGroupRequest,
    F("GroupId", KT_STRING, V(0, ANY)),
    F("GenerationId", KT_INT32, V(0, ANY)),
    F("MemberId", KT_STRING, V(0, ANY)),
    F("GroupInstanceId", KT_STRING, V(3, ANY), NUL(3), DNULL),
    F("ProtocolType", KT_STRING, V(5, ANY), NUL(5), DNULL),
    F("ProtocolName", KT_STRING, V(5, ANY), NUL(5), DNULL),
    F("Assignments", KT_ARRAY, ARR(SyncGroupRequestAssignment), V(0, ANY)));
STRUCT(SyncGroupResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("ProtocolType", KT_STRING, V(5, ANY), NUL(5), DNULL),
    F("ProtocolName", KT_STRING, V(5, ANY), NUL(5), DNULL),
    F("Assignment", KT_BYTES, V(0, ANY)));

/* ---- OffsetCommit (key 8) ---- */

STRUCT(OffsetCommitRequestPartition,
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("CommittedOffset", KT_INT64, V(0, ANY)),
    F("CommittedLeaderEpoch", KT_INT32, V(6, ANY), DEF(-1)),
    F("CommitTimestamp", KT_INT64, V(1, 1), DEF(-1)),
    F("CommittedMetadata", KT_STRING, V(0, ANY), NUL(0)));
STRUCT(OffsetCommitRequestTopic,
    F("Name", KT_STRING, V(0, ANY)),
    F("Partitions", KT_ARRAY, ARR(OffsetCommitRequestPartition), V(0, ANY)));
STRUCT(OffsetCommitRequest,
    F("GroupId", KT_STRING, V(0, ANY)),
    F("GenerationIdOrMemberEpoch", KT_INT32, V(1, ANY), DEF(-1)),
    F("MemberId", KT_STRING, V(1, ANY)),
    F("GroupInstanceId", KT_STRING, V(7, ANY), NUL(7), DNULL),
    F("RetentionTimeMs", KT_INT64, V(2, 4), DEF(-1)),
    F("Topics", KT_ARRAY, ARR(OffsetCommitRequestTopic), V(0, ANY)));

STRUCT(OffsetCommitResponsePartition,
    F("PartitionIndex", KT_INT32, V(0, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)));
STRUCT(OffsetCommitResponseTopic,
    F("Name", KT_STRING, V(0, ANY)),
    F("Partitions", KT_ARRAY, ARR(OffsetCommitResponsePartition), V(0, ANY)));
STRUCT(OffsetCommitResponse,
    F("ThrottleTimeMs", KT_INT32, V(3, ANY)),
    F("Topics", KT_ARRAY, ARR(OffsetCommitResponseTopic), V(0, ANY)));

/* ---- OffsetFetch (key 9): one group up to v7, a batch of groups from v8 ---- */

STRUCT(OffsetFetchRequestTopic,
    F("Name", KT_STRING, V(0, 7)),
    F("PartitionIndexes", KT_ARRAY, ARRP(KT_INT32), V(0, 7)));
STRUCT(OffsetFetchRequestTopics,
    F("Name", KT_STRING, V(8, ANY)),
    F("PartitionIndexes", KT_ARRAY, ARRP(KT_INT32), V(8, ANY)));
STRUCT(OffsetFetchRequestGroup,
    F("GroupId", KT_STRING, V(8, ANY)),
    F("MemberId", KT_STRING, V(9, ANY), NUL(9), DNULL),
    F("MemberEpoch", KT_INT32, V(9, ANY), DEF(-1)),
    F("Topics", KT_ARRAY, ARR(OffsetFetchRequestTopics), V(8, ANY), NUL(8)));
STRUCT(OffsetFetchRequest,
    F("GroupId", KT_STRING, V(0, 7)),
    /* v2+: null asks for every committed offset of the group */
    F("Topics", KT_ARRAY, ARR(OffsetFetchRequestTopic), V(0, 7), NUL(2)),
    F("Groups", KT_ARRAY, ARR(OffsetFetchRequestGroup), V(8, ANY)),
    F("RequireStable", KT_BOOL, V(7, ANY)));

STRUCT(OffsetFetchResponsePartition,
    F("PartitionIndex", KT_INT32, V(0, 7)),
    F("CommittedOffset", KT_INT64, V(0, 7)),
    F("CommittedLeaderEpoch", KT_INT32, V(5, 7), DEF(-1)),
    F("Metadata", KT_STRING, V(0, 7), NUL(0)),
    F("ErrorCode", KT_INT16, V(0, 7)));
STRUCT(OffsetFetchResponseTopic,
    F("Name", KT_STRING, V(0, 7)),
    F("Partitions", KT_ARRAY, ARR(OffsetFetchResponsePartition), V(0, 7)));
STRUCT(OffsetFetchResponsePartitions,
    F("PartitionIndex", KT_INT32, V(8, ANY)),
    F("CommittedOffset", KT_INT64, V(8, ANY)),
    F("CommittedLeaderEpoch", KT_INT32, V(8, ANY), DEF(-1)),
    F("Metadata", KT_STRING, V(8, ANY), NUL(8)),
    F("ErrorCode", KT_INT16, V(8, ANY)));
STRUCT(OffsetFetchResponseTopics,
    F("Name", KT_STRING, V(8, ANY)),
    F("Partitions", KT_ARRAY, ARR(OffsetFetchResponsePartitions), V(8, ANY)));
STRUCT(OffsetFetchResponseGroup,
    F("GroupId", KT_STRING, V(8, ANY)),
    F("Topics", KT_ARRAY, ARR(OffsetFetchResponseTopics), V(8, ANY)),
    F("ErrorCode", KT_INT16, V(8, ANY)));
STRUCT(OffsetFetchResponse,
    F("ThrottleTimeMs", KT_INT32, V(3, ANY)),
    F("Topics", KT_ARRAY, ARR(OffsetFetchResponseTopic), V(0, 7)),
    F("ErrorCode", KT_INT16, V(2, 7)),
    F("Groups", KT_ARRAY, ARR(OffsetFetchResponseGroup), V(8, ANY)));

/* ---- DescribeGroups (key 15) ---- */

STRUCT(DescribeGroupsRequest,
    F("Groups", KT_ARRAY, ARRP(KT_STRING), V(0, ANY)),
    F("IncludeAuthorizedOperations", KT_BOOL, V(3, ANY)));

STRUCT(DescribedGroupMember,
    F("MemberId", KT_STRING, V(0, ANY)),
    F("GroupInstanceId", KT_STRING, V(4, ANY), NUL(4), DNULL),
    F("ClientId", KT_STRING, V(0, ANY)),
    F("ClientHost", KT_STRING, V(0, ANY)),
    F("MemberMetadata", KT_BYTES, V(0, ANY)),
    F("MemberAssignment", KT_BYTES, V(0, ANY)));
STRUCT(DescribedGroup,
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("GroupId", KT_STRING, V(0, ANY)),
    F("GroupState", KT_STRING, V(0, ANY)),
    F("ProtocolType", KT_STRING, V(0, ANY)),
    F("ProtocolData", KT_STRING, V(0, ANY)),
    F("Members", KT_ARRAY, ARR(DescribedGroupMember), V(0, ANY)),
    F("AuthorizedOperations", KT_INT32, V(3, ANY), DEF(AUTH_OPS_UNKNOWN)));
STRUCT(DescribeGroupsResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("Groups", KT_ARRAY, ARR(DescribedGroup), V(0, ANY)));

/* ---- ListGroups (key 16) ---- */

STRUCT(ListGroupsRequest,
    F("StatesFilter", KT_ARRAY, ARRP(KT_STRING), V(4, ANY)),
    F("TypesFilter", KT_ARRAY, ARRP(KT_STRING), V(5, ANY)));

STRUCT(ListedGroup,
    F("GroupId", KT_STRING, V(0, ANY)),
    F("ProtocolType", KT_STRING, V(0, ANY)),
    F("GroupState", KT_STRING, V(4, ANY)),
    F("GroupType", KT_STRING, V(5, ANY)));
STRUCT(ListGroupsResponse,
    F("ThrottleTimeMs", KT_INT32, V(1, ANY)),
    F("ErrorCode", KT_INT16, V(0, ANY)),
    F("Groups", KT_ARRAY, ARR(ListedGroup), V(0, ANY)));

/* ---- the API table ----
 * min..max are the versions this codec implements (Kafka 3.9's full ranges
 * for these messages); the broker chooses what it advertises within them. */

#define API(key, name, lo, hi, flex) {key, #name, lo, hi, flex, &name##Request, &name##Response}

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
    API(KAFKA_API_CREATE_PARTITIONS, CreatePartitions, 0, 3, 2),
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
};
const int kafka_napis = (int)(sizeof(kafka_apis) / sizeof(kafka_apis[0]));
