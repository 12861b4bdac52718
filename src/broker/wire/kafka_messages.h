/* kafka_messages.h -- the fields of every message the broker speaks, each
 * struct described once, and typed access to them.
 *
 * The rows are transcribed from Apache Kafka's message definitions
 * (clients/src/main/resources/common/message/<Name>.json). Each struct is
 * an X-macro list, KAFKA_FIELDS_<Struct>(F, S), of rows
 *
 *   F(S, Name, type, attributes...)
 *
 * in wire order (tagged fields in ascending tag order). The attributes are
 * expanded only in kafka_messages.c, which builds the codec's tables from
 * these lists: V(min, max) the versions the field exists in (ANY: no upper
 * bound), NUL(v) nullable from version v on, TAG(t) a tagged field, DEF(x)
 * the default of a number, DNULL a string/bytes/array whose default is null,
 * ARR(Struct) / ARRP(type) the elements of an array, SUB(Struct) a nested
 * struct, NOFLEX never compact.
 *
 * From the same lists (every struct is named in KAFKA_STRUCTS, at the end)
 * this header gives, per struct:
 *   - kafka_struct_<Struct>, its table (kafka_struct_t);
 *   - an enum of field indices, <Struct>_<Field>, and <Struct>_nfields;
 *   - an enum of field types, <Struct>_<Field>_type, for the checks below.
 *
 * Typed access: a field is named by its struct and its name, so a typo does
 * not compile, reading a string as a number does not compile either, and no
 * name is looked up at run time:
 *
 *   int16_t acks = (int16_t)KV_INT(req->body, ProduceRequest, Acks);
 *   KV_SET_INT(out, PartitionProduceResponse, ErrorCode, error);
 *   kafka_value_t *parts = KV_SET_ARRAY(ra, topic, TopicProduceResponse, PartitionResponses, n);
 *
 * The value must be a struct of the type named: anything else is a
 * programming error, checked at run time (two compares) and fatal
 * (kv_field). Code that picks a field at run time (the same walk over
 * several messages) holds a kv_ref_t made with KV_REF(Struct, Field). */
#ifndef KIPPER_BROKER_KAFKA_MESSAGES_H
#define KIPPER_BROKER_KAFKA_MESSAGES_H

#include "kafka_codec.h"

/* ---- headers (RequestHeader.json, ResponseHeader.json) ---- */

#define KAFKA_FIELDS_RequestHeader(F, S) \
    F(S, RequestApiKey, KT_INT16, V(0, ANY)) \
    F(S, RequestApiVersion, KT_INT16, V(0, ANY)) \
    F(S, CorrelationId, KT_INT32, V(0, ANY)) \
    /* Always a classic int16-length string, so that an old broker can read \
     * the header of any ApiVersions request. */ \
    F(S, ClientId, KT_STRING, V(1, ANY), NUL(1), NOFLEX)

#define KAFKA_FIELDS_ResponseHeader(F, S) \
    F(S, CorrelationId, KT_INT32, V(0, ANY))

/* ---- ApiVersions (key 18) ---- */

#define KAFKA_FIELDS_ApiVersionsRequest(F, S) \
    F(S, ClientSoftwareName, KT_STRING, V(3, ANY)) \
    F(S, ClientSoftwareVersion, KT_STRING, V(3, ANY))

#define KAFKA_FIELDS_ApiVersion(F, S) \
    F(S, ApiKey, KT_INT16, V(0, ANY)) \
    F(S, MinVersion, KT_INT16, V(0, ANY)) \
    F(S, MaxVersion, KT_INT16, V(0, ANY))

#define KAFKA_FIELDS_SupportedFeatureKey(F, S) \
    F(S, Name, KT_STRING, V(3, ANY)) \
    F(S, MinVersion, KT_INT16, V(3, ANY)) \
    F(S, MaxVersion, KT_INT16, V(3, ANY))

#define KAFKA_FIELDS_FinalizedFeatureKey(F, S) \
    F(S, Name, KT_STRING, V(3, ANY)) \
    F(S, MaxVersionLevel, KT_INT16, V(3, ANY)) \
    F(S, MinVersionLevel, KT_INT16, V(3, ANY))

#define KAFKA_FIELDS_ApiVersionsResponse(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ApiKeys, KT_ARRAY, ARR(ApiVersion), V(0, ANY)) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, SupportedFeatures, KT_ARRAY, ARR(SupportedFeatureKey), V(3, ANY), TAG(0)) \
    F(S, FinalizedFeaturesEpoch, KT_INT64, V(3, ANY), TAG(1), DEF(-1)) \
    F(S, FinalizedFeatures, KT_ARRAY, ARR(FinalizedFeatureKey), V(3, ANY), TAG(2)) \
    F(S, ZkMigrationReady, KT_BOOL, V(3, ANY), TAG(3))

/* ---- Metadata (key 3) ---- */

#define KAFKA_FIELDS_MetadataRequestTopic(F, S) \
    F(S, TopicId, KT_UUID, V(10, ANY)) \
    F(S, Name, KT_STRING, V(0, ANY), NUL(10))

#define KAFKA_FIELDS_MetadataRequest(F, S) \
    /* v0: an empty array means all topics; v1+: null does. */ \
    F(S, Topics, KT_ARRAY, ARR(MetadataRequestTopic), V(0, ANY), NUL(1)) \
    F(S, AllowAutoTopicCreation, KT_BOOL, V(4, ANY), DEF(1)) \
    F(S, IncludeClusterAuthorizedOperations, KT_BOOL, V(8, 10)) \
    F(S, IncludeTopicAuthorizedOperations, KT_BOOL, V(8, ANY))

#define KAFKA_FIELDS_MetadataResponseBroker(F, S) \
    F(S, NodeId, KT_INT32, V(0, ANY)) \
    F(S, Host, KT_STRING, V(0, ANY)) \
    F(S, Port, KT_INT32, V(0, ANY)) \
    F(S, Rack, KT_STRING, V(1, ANY), NUL(1), DNULL)

#define KAFKA_FIELDS_MetadataResponsePartition(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, LeaderId, KT_INT32, V(0, ANY)) \
    F(S, LeaderEpoch, KT_INT32, V(7, ANY), DEF(-1)) \
    F(S, ReplicaNodes, KT_ARRAY, ARRP(KT_INT32), V(0, ANY)) \
    F(S, IsrNodes, KT_ARRAY, ARRP(KT_INT32), V(0, ANY)) \
    F(S, OfflineReplicas, KT_ARRAY, ARRP(KT_INT32), V(5, ANY))

#define KAFKA_FIELDS_MetadataResponseTopic(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, Name, KT_STRING, V(0, ANY), NUL(12)) \
    F(S, TopicId, KT_UUID, V(10, ANY)) \
    F(S, IsInternal, KT_BOOL, V(1, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(MetadataResponsePartition), V(0, ANY)) \
    F(S, TopicAuthorizedOperations, KT_INT32, V(8, ANY), DEF(AUTH_OPS_UNKNOWN))

#define KAFKA_FIELDS_MetadataResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(3, ANY)) \
    F(S, Brokers, KT_ARRAY, ARR(MetadataResponseBroker), V(0, ANY)) \
    F(S, ClusterId, KT_STRING, V(2, ANY), NUL(2), DNULL) \
    F(S, ControllerId, KT_INT32, V(1, ANY), DEF(-1)) \
    F(S, Topics, KT_ARRAY, ARR(MetadataResponseTopic), V(0, ANY)) \
    F(S, ClusterAuthorizedOperations, KT_INT32, V(8, 10), DEF(AUTH_OPS_UNKNOWN))

/* ---- Produce (key 0) ---- */

#define KAFKA_FIELDS_PartitionProduceData(F, S) \
    F(S, Index, KT_INT32, V(0, ANY)) \
    F(S, Records, KT_RECORDS, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_TopicProduceData(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, PartitionData, KT_ARRAY, ARR(PartitionProduceData), V(0, ANY))

#define KAFKA_FIELDS_ProduceRequest(F, S) \
    F(S, TransactionalId, KT_STRING, V(3, ANY), NUL(3), DNULL) \
    F(S, Acks, KT_INT16, V(0, ANY)) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY)) \
    F(S, TopicData, KT_ARRAY, ARR(TopicProduceData), V(0, ANY))

#define KAFKA_FIELDS_BatchIndexAndErrorMessage(F, S) \
    F(S, BatchIndex, KT_INT32, V(8, ANY)) \
    F(S, BatchIndexErrorMessage, KT_STRING, V(8, ANY), NUL(8), DNULL)

#define KAFKA_FIELDS_ProduceLeaderIdAndEpoch(F, S) \
    F(S, LeaderId, KT_INT32, V(10, ANY), DEF(-1)) \
    F(S, LeaderEpoch, KT_INT32, V(10, ANY), DEF(-1))

#define KAFKA_FIELDS_PartitionProduceResponse(F, S) \
    F(S, Index, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, BaseOffset, KT_INT64, V(0, ANY)) \
    F(S, LogAppendTimeMs, KT_INT64, V(2, ANY), DEF(-1)) \
    F(S, LogStartOffset, KT_INT64, V(5, ANY), DEF(-1)) \
    F(S, RecordErrors, KT_ARRAY, ARR(BatchIndexAndErrorMessage), V(8, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(8, ANY), NUL(8), DNULL) \
    F(S, CurrentLeader, KT_STRUCT, SUB(ProduceLeaderIdAndEpoch), V(10, ANY), TAG(0))

#define KAFKA_FIELDS_TopicProduceResponse(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, PartitionResponses, KT_ARRAY, ARR(PartitionProduceResponse), V(0, ANY))

#define KAFKA_FIELDS_ProduceNodeEndpoint(F, S) \
    F(S, NodeId, KT_INT32, V(10, ANY)) \
    F(S, Host, KT_STRING, V(10, ANY)) \
    F(S, Port, KT_INT32, V(10, ANY)) \
    F(S, Rack, KT_STRING, V(10, ANY), NUL(10), DNULL)

#define KAFKA_FIELDS_ProduceResponse(F, S) \
    F(S, Responses, KT_ARRAY, ARR(TopicProduceResponse), V(0, ANY)) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, NodeEndpoints, KT_ARRAY, ARR(ProduceNodeEndpoint), V(10, ANY), TAG(0))

/* ---- Fetch (key 1) ---- */

#define KAFKA_FIELDS_ReplicaState(F, S) \
    F(S, ReplicaId, KT_INT32, V(15, ANY), DEF(-1)) \
    F(S, ReplicaEpoch, KT_INT64, V(15, ANY), DEF(-1))

#define KAFKA_FIELDS_FetchPartition(F, S) \
    F(S, Partition, KT_INT32, V(0, ANY)) \
    F(S, CurrentLeaderEpoch, KT_INT32, V(9, ANY), DEF(-1)) \
    F(S, FetchOffset, KT_INT64, V(0, ANY)) \
    F(S, LastFetchedEpoch, KT_INT32, V(12, ANY), DEF(-1)) \
    F(S, LogStartOffset, KT_INT64, V(5, ANY), DEF(-1)) \
    F(S, PartitionMaxBytes, KT_INT32, V(0, ANY)) \
    F(S, ReplicaDirectoryId, KT_UUID, V(17, ANY), TAG(0))

#define KAFKA_FIELDS_FetchTopic(F, S) \
    F(S, Topic, KT_STRING, V(0, 12)) \
    F(S, TopicId, KT_UUID, V(13, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(FetchPartition), V(0, ANY))

#define KAFKA_FIELDS_ForgottenTopic(F, S) \
    F(S, Topic, KT_STRING, V(7, 12)) \
    F(S, TopicId, KT_UUID, V(13, ANY)) \
    F(S, Partitions, KT_ARRAY, ARRP(KT_INT32), V(7, ANY))

#define KAFKA_FIELDS_FetchRequest(F, S) \
    F(S, ClusterId, KT_STRING, V(12, ANY), NUL(12), TAG(0), DNULL) \
    F(S, ReplicaId, KT_INT32, V(0, 14), DEF(-1)) \
    F(S, ReplicaState, KT_STRUCT, SUB(ReplicaState), V(15, ANY), TAG(1)) \
    F(S, MaxWaitMs, KT_INT32, V(0, ANY)) \
    F(S, MinBytes, KT_INT32, V(0, ANY)) \
    F(S, MaxBytes, KT_INT32, V(3, ANY), DEF(0x7fffffff)) \
    F(S, IsolationLevel, KT_INT8, V(4, ANY)) \
    F(S, SessionId, KT_INT32, V(7, ANY)) \
    F(S, SessionEpoch, KT_INT32, V(7, ANY), DEF(-1)) \
    F(S, Topics, KT_ARRAY, ARR(FetchTopic), V(0, ANY)) \
    F(S, ForgottenTopicsData, KT_ARRAY, ARR(ForgottenTopic), V(7, ANY)) \
    F(S, RackId, KT_STRING, V(11, ANY))

#define KAFKA_FIELDS_EpochEndOffset(F, S) \
    F(S, Epoch, KT_INT32, V(12, ANY), DEF(-1)) \
    F(S, EndOffset, KT_INT64, V(12, ANY), DEF(-1))

#define KAFKA_FIELDS_FetchLeaderIdAndEpoch(F, S) \
    F(S, LeaderId, KT_INT32, V(12, ANY), DEF(-1)) \
    F(S, LeaderEpoch, KT_INT32, V(12, ANY), DEF(-1))

#define KAFKA_FIELDS_SnapshotId(F, S) \
    F(S, EndOffset, KT_INT64, V(0, ANY), DEF(-1)) \
    F(S, Epoch, KT_INT32, V(0, ANY), DEF(-1))

#define KAFKA_FIELDS_AbortedTransaction(F, S) \
    F(S, ProducerId, KT_INT64, V(4, ANY)) \
    F(S, FirstOffset, KT_INT64, V(4, ANY))

#define KAFKA_FIELDS_FetchPartitionData(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, HighWatermark, KT_INT64, V(0, ANY)) \
    F(S, LastStableOffset, KT_INT64, V(4, ANY), DEF(-1)) \
    F(S, LogStartOffset, KT_INT64, V(5, ANY), DEF(-1)) \
    F(S, DivergingEpoch, KT_STRUCT, SUB(EpochEndOffset), V(12, ANY), TAG(0)) \
    F(S, CurrentLeader, KT_STRUCT, SUB(FetchLeaderIdAndEpoch), V(12, ANY), TAG(1)) \
    F(S, SnapshotId, KT_STRUCT, SUB(SnapshotId), V(12, ANY), TAG(2)) \
    F(S, AbortedTransactions, KT_ARRAY, ARR(AbortedTransaction), V(4, ANY), NUL(4)) \
    F(S, PreferredReadReplica, KT_INT32, V(11, ANY), DEF(-1)) \
    F(S, Records, KT_RECORDS, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_FetchableTopicResponse(F, S) \
    F(S, Topic, KT_STRING, V(0, 12)) \
    F(S, TopicId, KT_UUID, V(13, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(FetchPartitionData), V(0, ANY))

#define KAFKA_FIELDS_FetchNodeEndpoint(F, S) \
    F(S, NodeId, KT_INT32, V(16, ANY)) \
    F(S, Host, KT_STRING, V(16, ANY)) \
    F(S, Port, KT_INT32, V(16, ANY)) \
    F(S, Rack, KT_STRING, V(16, ANY), NUL(16), DNULL)

#define KAFKA_FIELDS_FetchResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, ErrorCode, KT_INT16, V(7, ANY)) \
    F(S, SessionId, KT_INT32, V(7, ANY)) \
    F(S, Responses, KT_ARRAY, ARR(FetchableTopicResponse), V(0, ANY)) \
    F(S, NodeEndpoints, KT_ARRAY, ARR(FetchNodeEndpoint), V(16, ANY), TAG(0))

/* ---- ListOffsets (key 2) ---- */

#define KAFKA_FIELDS_ListOffsetsPartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, CurrentLeaderEpoch, KT_INT32, V(4, ANY), DEF(-1)) \
    F(S, Timestamp, KT_INT64, V(0, ANY)) \
    F(S, MaxNumOffsets, KT_INT32, V(0, 0), DEF(1))

#define KAFKA_FIELDS_ListOffsetsTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(ListOffsetsPartition), V(0, ANY))

#define KAFKA_FIELDS_ListOffsetsRequest(F, S) \
    F(S, ReplicaId, KT_INT32, V(0, ANY)) \
    F(S, IsolationLevel, KT_INT8, V(2, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(ListOffsetsTopic), V(0, ANY)) \
    F(S, TimeoutMs, KT_INT32, V(10, ANY))

#define KAFKA_FIELDS_ListOffsetsPartitionResponse(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, OldStyleOffsets, KT_ARRAY, ARRP(KT_INT64), V(0, 0)) \
    F(S, Timestamp, KT_INT64, V(1, ANY), DEF(-1)) \
    F(S, Offset, KT_INT64, V(1, ANY), DEF(-1)) \
    F(S, LeaderEpoch, KT_INT32, V(4, ANY), DEF(-1))

#define KAFKA_FIELDS_ListOffsetsTopicResponse(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(ListOffsetsPartitionResponse), V(0, ANY))

#define KAFKA_FIELDS_ListOffsetsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(2, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(ListOffsetsTopicResponse), V(0, ANY))

/* ---- CreateTopics (key 19) ---- */

#define KAFKA_FIELDS_CreatableReplicaAssignment(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, BrokerIds, KT_ARRAY, ARRP(KT_INT32), V(0, ANY))

#define KAFKA_FIELDS_CreatableTopicConfig(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Value, KT_STRING, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_CreatableTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, NumPartitions, KT_INT32, V(0, ANY)) \
    F(S, ReplicationFactor, KT_INT16, V(0, ANY)) \
    F(S, Assignments, KT_ARRAY, ARR(CreatableReplicaAssignment), V(0, ANY)) \
    F(S, Configs, KT_ARRAY, ARR(CreatableTopicConfig), V(0, ANY))

#define KAFKA_FIELDS_CreateTopicsRequest(F, S) \
    F(S, Topics, KT_ARRAY, ARR(CreatableTopic), V(0, ANY)) \
    F(S, timeoutMs, KT_INT32, V(0, ANY), DEF(60000)) \
    F(S, validateOnly, KT_BOOL, V(1, ANY))

#define KAFKA_FIELDS_CreatableTopicConfigs(F, S) \
    F(S, Name, KT_STRING, V(5, ANY)) \
    F(S, Value, KT_STRING, V(5, ANY), NUL(5)) \
    F(S, ReadOnly, KT_BOOL, V(5, ANY)) \
    F(S, ConfigSource, KT_INT8, V(5, ANY), DEF(-1)) \
    F(S, IsSensitive, KT_BOOL, V(5, ANY))

#define KAFKA_FIELDS_CreatableTopicResult(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, TopicId, KT_UUID, V(7, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(1, ANY), NUL(0)) \
    F(S, TopicConfigErrorCode, KT_INT16, V(5, ANY), TAG(0)) \
    F(S, NumPartitions, KT_INT32, V(5, ANY), DEF(-1)) \
    F(S, ReplicationFactor, KT_INT16, V(5, ANY), DEF(-1)) \
    F(S, Configs, KT_ARRAY, ARR(CreatableTopicConfigs), V(5, ANY), NUL(5))

#define KAFKA_FIELDS_CreateTopicsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(2, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(CreatableTopicResult), V(0, ANY))

/* ---- DeleteTopics (key 20) ---- */

#define KAFKA_FIELDS_DeleteTopicState(F, S) \
    F(S, Name, KT_STRING, V(6, ANY), NUL(6), DNULL) \
    F(S, TopicId, KT_UUID, V(6, ANY))

#define KAFKA_FIELDS_DeleteTopicsRequest(F, S) \
    F(S, Topics, KT_ARRAY, ARR(DeleteTopicState), V(6, ANY)) \
    F(S, TopicNames, KT_ARRAY, ARRP(KT_STRING), V(0, 5)) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY))

#define KAFKA_FIELDS_DeletableTopicResult(F, S) \
    F(S, Name, KT_STRING, V(0, ANY), NUL(6)) \
    F(S, TopicId, KT_UUID, V(6, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(5, ANY), NUL(5), DNULL)

#define KAFKA_FIELDS_DeleteTopicsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, Responses, KT_ARRAY, ARR(DeletableTopicResult), V(0, ANY))

/* ---- CreatePartitions (key 37) ---- */

#define KAFKA_FIELDS_CreatePartitionsAssignment(F, S) \
    F(S, BrokerIds, KT_ARRAY, ARRP(KT_INT32), V(0, ANY))

#define KAFKA_FIELDS_CreatePartitionsTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Count, KT_INT32, V(0, ANY)) \
    F(S, Assignments, KT_ARRAY, ARR(CreatePartitionsAssignment), V(0, ANY), NUL(0))

#define KAFKA_FIELDS_CreatePartitionsRequest(F, S) \
    F(S, Topics, KT_ARRAY, ARR(CreatePartitionsTopic), V(0, ANY)) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY)) \
    F(S, ValidateOnly, KT_BOOL, V(0, ANY))

#define KAFKA_FIELDS_CreatePartitionsTopicResult(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0), DNULL)

#define KAFKA_FIELDS_CreatePartitionsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Results, KT_ARRAY, ARR(CreatePartitionsTopicResult), V(0, ANY))

/* ---- ElectLeaders (key 43) ---- */

#define KAFKA_FIELDS_ElectLeadersTopicPartitions(F, S) \
    F(S, Topic, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARRP(KT_INT32), V(0, ANY))

#define KAFKA_FIELDS_ElectLeadersRequest(F, S) \
    F(S, ElectionType, KT_INT8, V(1, ANY)) \
    F(S, TopicPartitions, KT_ARRAY, ARR(ElectLeadersTopicPartitions), V(0, ANY), NUL(0)) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY), DEF(60000))

#define KAFKA_FIELDS_ElectLeadersPartitionResult(F, S) \
    F(S, PartitionId, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_ReplicaElectionResult(F, S) \
    F(S, Topic, KT_STRING, V(0, ANY)) \
    F(S, PartitionResult, KT_ARRAY, ARR(ElectLeadersPartitionResult), V(0, ANY))

#define KAFKA_FIELDS_ElectLeadersResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(1, ANY)) \
    F(S, ReplicaElectionResults, KT_ARRAY, ARR(ReplicaElectionResult), V(0, ANY))

/* ---- AlterPartitionReassignments (key 45) ---- */

#define KAFKA_FIELDS_ReassignablePartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    /* null: cancel the partition's move */ \
    F(S, Replicas, KT_ARRAY, ARRP(KT_INT32), V(0, ANY), NUL(0), DNULL)

#define KAFKA_FIELDS_ReassignableTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(ReassignablePartition), V(0, ANY))

#define KAFKA_FIELDS_AlterPartitionReassignmentsRequest(F, S) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY), DEF(60000)) \
    F(S, Topics, KT_ARRAY, ARR(ReassignableTopic), V(0, ANY))

#define KAFKA_FIELDS_ReassignablePartitionResponse(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_ReassignableTopicResponse(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(ReassignablePartitionResponse), V(0, ANY))

#define KAFKA_FIELDS_AlterPartitionReassignmentsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0)) \
    F(S, Responses, KT_ARRAY, ARR(ReassignableTopicResponse), V(0, ANY))

/* ---- ListPartitionReassignments (key 46) ---- */

#define KAFKA_FIELDS_ListPartitionReassignmentsTopics(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, PartitionIndexes, KT_ARRAY, ARRP(KT_INT32), V(0, ANY))

#define KAFKA_FIELDS_ListPartitionReassignmentsRequest(F, S) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY), DEF(60000)) \
    /* null: every partition being moved */ \
    F(S, Topics, KT_ARRAY, ARR(ListPartitionReassignmentsTopics), V(0, ANY), NUL(0), DNULL)

#define KAFKA_FIELDS_OngoingPartitionReassignment(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, Replicas, KT_ARRAY, ARRP(KT_INT32), V(0, ANY)) \
    F(S, AddingReplicas, KT_ARRAY, ARRP(KT_INT32), V(0, ANY)) \
    F(S, RemovingReplicas, KT_ARRAY, ARRP(KT_INT32), V(0, ANY))

#define KAFKA_FIELDS_OngoingTopicReassignment(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OngoingPartitionReassignment), V(0, ANY))

#define KAFKA_FIELDS_ListPartitionReassignmentsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0)) \
    F(S, Topics, KT_ARRAY, ARR(OngoingTopicReassignment), V(0, ANY))

/* ---- DescribeConfigs (key 32) ---- */

#define KAFKA_FIELDS_DescribeConfigsResource(F, S) \
    F(S, ResourceType, KT_INT8, V(0, ANY)) \
    F(S, ResourceName, KT_STRING, V(0, ANY)) \
    F(S, ConfigurationKeys, KT_ARRAY, ARRP(KT_STRING), V(0, ANY), NUL(0))

#define KAFKA_FIELDS_DescribeConfigsRequest(F, S) \
    F(S, Resources, KT_ARRAY, ARR(DescribeConfigsResource), V(0, ANY)) \
    F(S, IncludeSynonyms, KT_BOOL, V(1, ANY)) \
    F(S, IncludeDocumentation, KT_BOOL, V(3, ANY))

#define KAFKA_FIELDS_DescribeConfigsSynonym(F, S) \
    F(S, Name, KT_STRING, V(1, ANY)) \
    F(S, Value, KT_STRING, V(1, ANY), NUL(0)) \
    F(S, Source, KT_INT8, V(1, ANY))

#define KAFKA_FIELDS_DescribeConfigsResourceResult(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Value, KT_STRING, V(0, ANY), NUL(0)) \
    F(S, ReadOnly, KT_BOOL, V(0, ANY)) \
    F(S, IsDefault, KT_BOOL, V(0, 0)) \
    F(S, ConfigSource, KT_INT8, V(1, ANY), DEF(-1)) \
    F(S, IsSensitive, KT_BOOL, V(0, ANY)) \
    F(S, Synonyms, KT_ARRAY, ARR(DescribeConfigsSynonym), V(1, ANY)) \
    F(S, ConfigType, KT_INT8, V(3, ANY)) \
    F(S, Documentation, KT_STRING, V(3, ANY), NUL(0))

#define KAFKA_FIELDS_DescribeConfigsResult(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0)) \
    F(S, ResourceType, KT_INT8, V(0, ANY)) \
    F(S, ResourceName, KT_STRING, V(0, ANY)) \
    F(S, Configs, KT_ARRAY, ARR(DescribeConfigsResourceResult), V(0, ANY))

#define KAFKA_FIELDS_DescribeConfigsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Results, KT_ARRAY, ARR(DescribeConfigsResult), V(0, ANY))

/* ---- AlterConfigs (key 33; flexible from v2) ---- */

#define KAFKA_FIELDS_AlterableConfig(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Value, KT_STRING, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_AlterConfigsResource(F, S) \
    F(S, ResourceType, KT_INT8, V(0, ANY)) \
    F(S, ResourceName, KT_STRING, V(0, ANY)) \
    F(S, Configs, KT_ARRAY, ARR(AlterableConfig), V(0, ANY))

#define KAFKA_FIELDS_AlterConfigsRequest(F, S) \
    F(S, Resources, KT_ARRAY, ARR(AlterConfigsResource), V(0, ANY)) \
    F(S, ValidateOnly, KT_BOOL, V(0, ANY))

/* Also IncrementalAlterConfigs' (the same fields in Kafka's two files). */
#define KAFKA_FIELDS_AlterConfigsResourceResponse(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0)) \
    F(S, ResourceType, KT_INT8, V(0, ANY)) \
    F(S, ResourceName, KT_STRING, V(0, ANY))

#define KAFKA_FIELDS_AlterConfigsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Responses, KT_ARRAY, ARR(AlterConfigsResourceResponse), V(0, ANY))

/* ---- IncrementalAlterConfigs (key 44; flexible from v1) ---- */

#define KAFKA_FIELDS_IncrementalAlterableConfig(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, ConfigOperation, KT_INT8, V(0, ANY)) \
    F(S, Value, KT_STRING, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_IncrementalAlterConfigsResource(F, S) \
    F(S, ResourceType, KT_INT8, V(0, ANY)) \
    F(S, ResourceName, KT_STRING, V(0, ANY)) \
    F(S, Configs, KT_ARRAY, ARR(IncrementalAlterableConfig), V(0, ANY))

#define KAFKA_FIELDS_IncrementalAlterConfigsRequest(F, S) \
    F(S, Resources, KT_ARRAY, ARR(IncrementalAlterConfigsResource), V(0, ANY)) \
    F(S, ValidateOnly, KT_BOOL, V(0, ANY))

#define KAFKA_FIELDS_IncrementalAlterConfigsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Responses, KT_ARRAY, ARR(AlterConfigsResourceResponse), V(0, ANY))

/* ---- DeleteRecords (key 21; flexible from v2) ---- */

#define KAFKA_FIELDS_DeleteRecordsPartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, Offset, KT_INT64, V(0, ANY))

#define KAFKA_FIELDS_DeleteRecordsTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(DeleteRecordsPartition), V(0, ANY))

#define KAFKA_FIELDS_DeleteRecordsRequest(F, S) \
    F(S, Topics, KT_ARRAY, ARR(DeleteRecordsTopic), V(0, ANY)) \
    F(S, TimeoutMs, KT_INT32, V(0, ANY))

#define KAFKA_FIELDS_DeleteRecordsPartitionResult(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, LowWatermark, KT_INT64, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY))

#define KAFKA_FIELDS_DeleteRecordsTopicResult(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(DeleteRecordsPartitionResult), V(0, ANY))

#define KAFKA_FIELDS_DeleteRecordsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(DeleteRecordsTopicResult), V(0, ANY))

/* ---- DescribeLogDirs (key 35; flexible from v2) ---- */

#define KAFKA_FIELDS_DescribableLogDirTopic(F, S) \
    F(S, Topic, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARRP(KT_INT32), V(0, ANY))

#define KAFKA_FIELDS_DescribeLogDirsRequest(F, S) \
    /* null: every topic */ \
    F(S, Topics, KT_ARRAY, ARR(DescribableLogDirTopic), V(0, ANY), NUL(0))

#define KAFKA_FIELDS_DescribeLogDirsPartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, PartitionSize, KT_INT64, V(0, ANY)) \
    F(S, OffsetLag, KT_INT64, V(0, ANY)) \
    F(S, IsFutureKey, KT_BOOL, V(0, ANY))

#define KAFKA_FIELDS_DescribeLogDirsTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(DescribeLogDirsPartition), V(0, ANY))

#define KAFKA_FIELDS_DescribeLogDirsResult(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, LogDir, KT_STRING, V(0, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(DescribeLogDirsTopic), V(0, ANY)) \
    F(S, TotalBytes, KT_INT64, V(4, ANY), DEF(-1)) \
    F(S, UsableBytes, KT_INT64, V(4, ANY), DEF(-1))

#define KAFKA_FIELDS_DescribeLogDirsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(3, ANY)) \
    F(S, Results, KT_ARRAY, ARR(DescribeLogDirsResult), V(0, ANY))

/* ---- DescribeCluster (key 60; flexible from v0) ---- */

#define KAFKA_FIELDS_DescribeClusterRequest(F, S) \
    F(S, IncludeClusterAuthorizedOperations, KT_BOOL, V(0, ANY)) \
    F(S, EndpointType, KT_INT8, V(1, ANY), DEF(1))

#define KAFKA_FIELDS_DescribeClusterBroker(F, S) \
    F(S, BrokerId, KT_INT32, V(0, ANY)) \
    F(S, Host, KT_STRING, V(0, ANY)) \
    F(S, Port, KT_INT32, V(0, ANY)) \
    F(S, Rack, KT_STRING, V(0, ANY), NUL(0), DNULL)

#define KAFKA_FIELDS_DescribeClusterResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(0, ANY), NUL(0), DNULL) \
    F(S, EndpointType, KT_INT8, V(1, ANY), DEF(1)) \
    F(S, ClusterId, KT_STRING, V(0, ANY)) \
    F(S, ControllerId, KT_INT32, V(0, ANY), DEF(-1)) \
    F(S, Brokers, KT_ARRAY, ARR(DescribeClusterBroker), V(0, ANY)) \
    F(S, ClusterAuthorizedOperations, KT_INT32, V(0, ANY), DEF(AUTH_OPS_UNKNOWN))

/* ---- InitProducerId (key 22) ---- */

#define KAFKA_FIELDS_InitProducerIdRequest(F, S) \
    F(S, TransactionalId, KT_STRING, V(0, ANY), NUL(0)) \
    F(S, TransactionTimeoutMs, KT_INT32, V(0, ANY)) \
    F(S, ProducerId, KT_INT64, V(3, ANY), DEF(-1)) \
    F(S, ProducerEpoch, KT_INT16, V(3, ANY), DEF(-1))

#define KAFKA_FIELDS_InitProducerIdResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ProducerId, KT_INT64, V(0, ANY), DEF(-1)) \
    F(S, ProducerEpoch, KT_INT16, V(0, ANY))

/* ---- OffsetForLeaderEpoch (key 23) ---- */

#define KAFKA_FIELDS_OffsetForLeaderPartition(F, S) \
    F(S, Partition, KT_INT32, V(0, ANY)) \
    F(S, CurrentLeaderEpoch, KT_INT32, V(2, ANY), DEF(-1)) \
    F(S, LeaderEpoch, KT_INT32, V(0, ANY))

#define KAFKA_FIELDS_OffsetForLeaderTopic(F, S) \
    F(S, Topic, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetForLeaderPartition), V(0, ANY))

#define KAFKA_FIELDS_OffsetForLeaderEpochRequest(F, S) \
    /* -2: a consumer (debug id); -1 would be an ordinary consumer in v3+. */ \
    F(S, ReplicaId, KT_INT32, V(3, ANY), DEF(-2)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetForLeaderTopic), V(0, ANY))

#define KAFKA_FIELDS_OffsetForLeaderEpochEndOffset(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, Partition, KT_INT32, V(0, ANY)) \
    F(S, LeaderEpoch, KT_INT32, V(1, ANY), DEF(-1)) \
    F(S, EndOffset, KT_INT64, V(0, ANY), DEF(-1))

#define KAFKA_FIELDS_OffsetForLeaderTopicResult(F, S) \
    F(S, Topic, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetForLeaderEpochEndOffset), V(0, ANY))

#define KAFKA_FIELDS_OffsetForLeaderEpochResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(2, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetForLeaderTopicResult), V(0, ANY))

/* ---- FindCoordinator (key 10) ---- */

#define KAFKA_FIELDS_FindCoordinatorRequest(F, S) \
    F(S, Key, KT_STRING, V(0, 3)) \
    F(S, KeyType, KT_INT8, V(1, ANY)) \
    F(S, CoordinatorKeys, KT_ARRAY, ARRP(KT_STRING), V(4, ANY))

#define KAFKA_FIELDS_Coordinator(F, S) \
    F(S, Key, KT_STRING, V(4, ANY)) \
    F(S, NodeId, KT_INT32, V(4, ANY)) \
    F(S, Host, KT_STRING, V(4, ANY)) \
    F(S, Port, KT_INT32, V(4, ANY)) \
    F(S, ErrorCode, KT_INT16, V(4, ANY)) \
    F(S, ErrorMessage, KT_STRING, V(4, ANY), NUL(4))

#define KAFKA_FIELDS_FindCoordinatorResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, 3)) \
    F(S, ErrorMessage, KT_STRING, V(1, 3), NUL(1)) \
    F(S, NodeId, KT_INT32, V(0, 3)) \
    F(S, Host, KT_STRING, V(0, 3)) \
    F(S, Port, KT_INT32, V(0, 3)) \
    F(S, Coordinators, KT_ARRAY, ARR(Coordinator), V(4, ANY))

/* ---- JoinGroup (key 11) ---- */

#define KAFKA_FIELDS_JoinGroupRequestProtocol(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Metadata, KT_BYTES, V(0, ANY))

#define KAFKA_FIELDS_JoinGroupRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, SessionTimeoutMs, KT_INT32, V(0, ANY)) \
    /* absent in v0, where the session timeout is used instead */ \
    F(S, RebalanceTimeoutMs, KT_INT32, V(1, ANY), DEF(-1)) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(5, ANY), NUL(5), DNULL) \
    F(S, ProtocolType, KT_STRING, V(0, ANY)) \
    F(S, Protocols, KT_ARRAY, ARR(JoinGroupRequestProtocol), V(0, ANY)) \
    F(S, Reason, KT_STRING, V(8, ANY), NUL(8), DNULL)

#define KAFKA_FIELDS_JoinGroupResponseMember(F, S) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(5, ANY), NUL(5), DNULL) \
    F(S, Metadata, KT_BYTES, V(0, ANY))

#define KAFKA_FIELDS_JoinGroupResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(2, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, GenerationId, KT_INT32, V(0, ANY), DEF(-1)) \
    F(S, ProtocolType, KT_STRING, V(7, ANY), NUL(7), DNULL) \
    F(S, ProtocolName, KT_STRING, V(0, ANY), NUL(7)) \
    F(S, Leader, KT_STRING, V(0, ANY)) \
    F(S, SkipAssignment, KT_BOOL, V(9, ANY)) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, Members, KT_ARRAY, ARR(JoinGroupResponseMember), V(0, ANY))

/* ---- Heartbeat (key 12) ---- */

#define KAFKA_FIELDS_HeartbeatRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, GenerationId, KT_INT32, V(0, ANY)) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(3, ANY), NUL(3), DNULL)

#define KAFKA_FIELDS_HeartbeatResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY))

/* ---- LeaveGroup (key 13) ---- */

#define KAFKA_FIELDS_MemberIdentity(F, S) \
    F(S, MemberId, KT_STRING, V(3, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(3, ANY), NUL(3), DNULL) \
    F(S, Reason, KT_STRING, V(5, ANY), NUL(5), DNULL)

#define KAFKA_FIELDS_LeaveGroupRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, MemberId, KT_STRING, V(0, 2)) \
    F(S, Members, KT_ARRAY, ARR(MemberIdentity), V(3, ANY))

#define KAFKA_FIELDS_MemberResponse(F, S) \
    F(S, MemberId, KT_STRING, V(3, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(3, ANY), NUL(3)) \
    F(S, ErrorCode, KT_INT16, V(3, ANY))

#define KAFKA_FIELDS_LeaveGroupResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, Members, KT_ARRAY, ARR(MemberResponse), V(3, ANY))

/* ---- SyncGroup (key 14) ---- */

#define KAFKA_FIELDS_SyncGroupRequestAssignment(F, S) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, Assignment, KT_BYTES, V(0, ANY))

#define KAFKA_FIELDS_SyncGroupRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, GenerationId, KT_INT32, V(0, ANY)) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(3, ANY), NUL(3), DNULL) \
    F(S, ProtocolType, KT_STRING, V(5, ANY), NUL(5), DNULL) \
    F(S, ProtocolName, KT_STRING, V(5, ANY), NUL(5), DNULL) \
    F(S, Assignments, KT_ARRAY, ARR(SyncGroupRequestAssignment), V(0, ANY))

#define KAFKA_FIELDS_SyncGroupResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ProtocolType, KT_STRING, V(5, ANY), NUL(5), DNULL) \
    F(S, ProtocolName, KT_STRING, V(5, ANY), NUL(5), DNULL) \
    F(S, Assignment, KT_BYTES, V(0, ANY))

/* ---- OffsetCommit (key 8) ---- */

#define KAFKA_FIELDS_OffsetCommitRequestPartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, CommittedOffset, KT_INT64, V(0, ANY)) \
    F(S, CommittedLeaderEpoch, KT_INT32, V(6, ANY), DEF(-1)) \
    F(S, CommitTimestamp, KT_INT64, V(1, 1), DEF(-1)) \
    F(S, CommittedMetadata, KT_STRING, V(0, ANY), NUL(0))

#define KAFKA_FIELDS_OffsetCommitRequestTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetCommitRequestPartition), V(0, ANY))

#define KAFKA_FIELDS_OffsetCommitRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, GenerationIdOrMemberEpoch, KT_INT32, V(1, ANY), DEF(-1)) \
    F(S, MemberId, KT_STRING, V(1, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(7, ANY), NUL(7), DNULL) \
    F(S, RetentionTimeMs, KT_INT64, V(2, 4), DEF(-1)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetCommitRequestTopic), V(0, ANY))

#define KAFKA_FIELDS_OffsetCommitResponsePartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY))

#define KAFKA_FIELDS_OffsetCommitResponseTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetCommitResponsePartition), V(0, ANY))

#define KAFKA_FIELDS_OffsetCommitResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(3, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetCommitResponseTopic), V(0, ANY))

/* ---- OffsetFetch (key 9): one group up to v7, a batch of groups from v8 ---- */

#define KAFKA_FIELDS_OffsetFetchRequestTopic(F, S) \
    F(S, Name, KT_STRING, V(0, 7)) \
    F(S, PartitionIndexes, KT_ARRAY, ARRP(KT_INT32), V(0, 7))

#define KAFKA_FIELDS_OffsetFetchRequestTopics(F, S) \
    F(S, Name, KT_STRING, V(8, ANY)) \
    F(S, PartitionIndexes, KT_ARRAY, ARRP(KT_INT32), V(8, ANY))

#define KAFKA_FIELDS_OffsetFetchRequestGroup(F, S) \
    F(S, GroupId, KT_STRING, V(8, ANY)) \
    F(S, MemberId, KT_STRING, V(9, ANY), NUL(9), DNULL) \
    F(S, MemberEpoch, KT_INT32, V(9, ANY), DEF(-1)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetFetchRequestTopics), V(8, ANY), NUL(8))

#define KAFKA_FIELDS_OffsetFetchRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, 7)) \
    /* v2+: null asks for every committed offset of the group */ \
    F(S, Topics, KT_ARRAY, ARR(OffsetFetchRequestTopic), V(0, 7), NUL(2)) \
    F(S, Groups, KT_ARRAY, ARR(OffsetFetchRequestGroup), V(8, ANY)) \
    F(S, RequireStable, KT_BOOL, V(7, ANY))

#define KAFKA_FIELDS_OffsetFetchResponsePartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, 7)) \
    F(S, CommittedOffset, KT_INT64, V(0, 7)) \
    F(S, CommittedLeaderEpoch, KT_INT32, V(5, 7), DEF(-1)) \
    F(S, Metadata, KT_STRING, V(0, 7), NUL(0)) \
    F(S, ErrorCode, KT_INT16, V(0, 7))

#define KAFKA_FIELDS_OffsetFetchResponseTopic(F, S) \
    F(S, Name, KT_STRING, V(0, 7)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetFetchResponsePartition), V(0, 7))

#define KAFKA_FIELDS_OffsetFetchResponsePartitions(F, S) \
    F(S, PartitionIndex, KT_INT32, V(8, ANY)) \
    F(S, CommittedOffset, KT_INT64, V(8, ANY)) \
    F(S, CommittedLeaderEpoch, KT_INT32, V(8, ANY), DEF(-1)) \
    F(S, Metadata, KT_STRING, V(8, ANY), NUL(8)) \
    F(S, ErrorCode, KT_INT16, V(8, ANY))

#define KAFKA_FIELDS_OffsetFetchResponseTopics(F, S) \
    F(S, Name, KT_STRING, V(8, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetFetchResponsePartitions), V(8, ANY))

#define KAFKA_FIELDS_OffsetFetchResponseGroup(F, S) \
    F(S, GroupId, KT_STRING, V(8, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetFetchResponseTopics), V(8, ANY)) \
    F(S, ErrorCode, KT_INT16, V(8, ANY))

#define KAFKA_FIELDS_OffsetFetchResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(3, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetFetchResponseTopic), V(0, 7)) \
    F(S, ErrorCode, KT_INT16, V(2, 7)) \
    F(S, Groups, KT_ARRAY, ARR(OffsetFetchResponseGroup), V(8, ANY))

/* ---- DescribeGroups (key 15) ---- */

#define KAFKA_FIELDS_DescribeGroupsRequest(F, S) \
    F(S, Groups, KT_ARRAY, ARRP(KT_STRING), V(0, ANY)) \
    F(S, IncludeAuthorizedOperations, KT_BOOL, V(3, ANY))

#define KAFKA_FIELDS_DescribedGroupMember(F, S) \
    F(S, MemberId, KT_STRING, V(0, ANY)) \
    F(S, GroupInstanceId, KT_STRING, V(4, ANY), NUL(4), DNULL) \
    F(S, ClientId, KT_STRING, V(0, ANY)) \
    F(S, ClientHost, KT_STRING, V(0, ANY)) \
    F(S, MemberMetadata, KT_BYTES, V(0, ANY)) \
    F(S, MemberAssignment, KT_BYTES, V(0, ANY))

#define KAFKA_FIELDS_DescribedGroup(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, GroupState, KT_STRING, V(0, ANY)) \
    F(S, ProtocolType, KT_STRING, V(0, ANY)) \
    F(S, ProtocolData, KT_STRING, V(0, ANY)) \
    F(S, Members, KT_ARRAY, ARR(DescribedGroupMember), V(0, ANY)) \
    F(S, AuthorizedOperations, KT_INT32, V(3, ANY), DEF(AUTH_OPS_UNKNOWN))

#define KAFKA_FIELDS_DescribeGroupsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, Groups, KT_ARRAY, ARR(DescribedGroup), V(0, ANY))

/* ---- ListGroups (key 16) ---- */

#define KAFKA_FIELDS_ListGroupsRequest(F, S) \
    F(S, StatesFilter, KT_ARRAY, ARRP(KT_STRING), V(4, ANY)) \
    F(S, TypesFilter, KT_ARRAY, ARRP(KT_STRING), V(5, ANY))

#define KAFKA_FIELDS_ListedGroup(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, ProtocolType, KT_STRING, V(0, ANY)) \
    F(S, GroupState, KT_STRING, V(4, ANY)) \
    F(S, GroupType, KT_STRING, V(5, ANY))

#define KAFKA_FIELDS_ListGroupsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(1, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, Groups, KT_ARRAY, ARR(ListedGroup), V(0, ANY))

/* ---- DeleteGroups (key 42; flexible from v2) ---- */

#define KAFKA_FIELDS_DeleteGroupsRequest(F, S) \
    F(S, GroupsNames, KT_ARRAY, ARRP(KT_STRING), V(0, ANY))

#define KAFKA_FIELDS_DeletableGroupResult(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY))

#define KAFKA_FIELDS_DeleteGroupsResponse(F, S) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Results, KT_ARRAY, ARR(DeletableGroupResult), V(0, ANY))

/* ---- OffsetDelete (key 47; v0 only, never flexible) ---- */

#define KAFKA_FIELDS_OffsetDeleteRequestPartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY))

#define KAFKA_FIELDS_OffsetDeleteRequestTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetDeleteRequestPartition), V(0, ANY))

#define KAFKA_FIELDS_OffsetDeleteRequest(F, S) \
    F(S, GroupId, KT_STRING, V(0, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetDeleteRequestTopic), V(0, ANY))

#define KAFKA_FIELDS_OffsetDeleteResponsePartition(F, S) \
    F(S, PartitionIndex, KT_INT32, V(0, ANY)) \
    F(S, ErrorCode, KT_INT16, V(0, ANY))

#define KAFKA_FIELDS_OffsetDeleteResponseTopic(F, S) \
    F(S, Name, KT_STRING, V(0, ANY)) \
    F(S, Partitions, KT_ARRAY, ARR(OffsetDeleteResponsePartition), V(0, ANY))

#define KAFKA_FIELDS_OffsetDeleteResponse(F, S) \
    F(S, ErrorCode, KT_INT16, V(0, ANY)) \
    F(S, ThrottleTimeMs, KT_INT32, V(0, ANY)) \
    F(S, Topics, KT_ARRAY, ARR(OffsetDeleteResponseTopic), V(0, ANY))

/* ---- every struct ---- */

#define KAFKA_STRUCTS(X) \
    X(RequestHeader) X(ResponseHeader) \
    X(ApiVersionsRequest) X(ApiVersion) X(SupportedFeatureKey) X(FinalizedFeatureKey) X(ApiVersionsResponse) \
    X(MetadataRequestTopic) X(MetadataRequest) X(MetadataResponseBroker) X(MetadataResponsePartition) \
    X(MetadataResponseTopic) X(MetadataResponse) \
    X(PartitionProduceData) X(TopicProduceData) X(ProduceRequest) X(BatchIndexAndErrorMessage) \
    X(ProduceLeaderIdAndEpoch) X(PartitionProduceResponse) X(TopicProduceResponse) X(ProduceNodeEndpoint) \
    X(ProduceResponse) \
    X(ReplicaState) X(FetchPartition) X(FetchTopic) X(ForgottenTopic) X(FetchRequest) X(EpochEndOffset) \
    X(FetchLeaderIdAndEpoch) X(SnapshotId) X(AbortedTransaction) X(FetchPartitionData) \
    X(FetchableTopicResponse) X(FetchNodeEndpoint) X(FetchResponse) \
    X(ListOffsetsPartition) X(ListOffsetsTopic) X(ListOffsetsRequest) X(ListOffsetsPartitionResponse) \
    X(ListOffsetsTopicResponse) X(ListOffsetsResponse) \
    X(CreatableReplicaAssignment) X(CreatableTopicConfig) X(CreatableTopic) X(CreateTopicsRequest) \
    X(CreatableTopicConfigs) X(CreatableTopicResult) X(CreateTopicsResponse) \
    X(DeleteTopicState) X(DeleteTopicsRequest) X(DeletableTopicResult) X(DeleteTopicsResponse) \
    X(CreatePartitionsAssignment) X(CreatePartitionsTopic) X(CreatePartitionsRequest) \
    X(CreatePartitionsTopicResult) X(CreatePartitionsResponse) \
    X(ElectLeadersTopicPartitions) X(ElectLeadersRequest) X(ElectLeadersPartitionResult) \
    X(ReplicaElectionResult) X(ElectLeadersResponse) \
    X(ReassignablePartition) X(ReassignableTopic) X(AlterPartitionReassignmentsRequest) \
    X(ReassignablePartitionResponse) X(ReassignableTopicResponse) X(AlterPartitionReassignmentsResponse) \
    X(ListPartitionReassignmentsTopics) X(ListPartitionReassignmentsRequest) X(OngoingPartitionReassignment) \
    X(OngoingTopicReassignment) X(ListPartitionReassignmentsResponse) \
    X(DescribeConfigsResource) X(DescribeConfigsRequest) X(DescribeConfigsSynonym) \
    X(DescribeConfigsResourceResult) X(DescribeConfigsResult) X(DescribeConfigsResponse) \
    X(AlterableConfig) X(AlterConfigsResource) X(AlterConfigsRequest) X(AlterConfigsResourceResponse) \
    X(AlterConfigsResponse) X(IncrementalAlterableConfig) X(IncrementalAlterConfigsResource) \
    X(IncrementalAlterConfigsRequest) X(IncrementalAlterConfigsResponse) \
    X(DeleteRecordsPartition) X(DeleteRecordsTopic) X(DeleteRecordsRequest) X(DeleteRecordsPartitionResult) \
    X(DeleteRecordsTopicResult) X(DeleteRecordsResponse) \
    X(DescribableLogDirTopic) X(DescribeLogDirsRequest) X(DescribeLogDirsPartition) X(DescribeLogDirsTopic) \
    X(DescribeLogDirsResult) X(DescribeLogDirsResponse) \
    X(DescribeClusterRequest) X(DescribeClusterBroker) X(DescribeClusterResponse) \
    X(InitProducerIdRequest) X(InitProducerIdResponse) \
    X(OffsetForLeaderPartition) X(OffsetForLeaderTopic) X(OffsetForLeaderEpochRequest) \
    X(OffsetForLeaderEpochEndOffset) X(OffsetForLeaderTopicResult) X(OffsetForLeaderEpochResponse) \
    X(FindCoordinatorRequest) X(Coordinator) X(FindCoordinatorResponse) \
    X(JoinGroupRequestProtocol) X(JoinGroupRequest) X(JoinGroupResponseMember) X(JoinGroupResponse) \
    X(HeartbeatRequest) X(HeartbeatResponse) \
    X(MemberIdentity) X(LeaveGroupRequest) X(MemberResponse) X(LeaveGroupResponse) \
    X(SyncGroupRequestAssignment) X(SyncGroupRequest) X(SyncGroupResponse) \
    X(OffsetCommitRequestPartition) X(OffsetCommitRequestTopic) X(OffsetCommitRequest) \
    X(OffsetCommitResponsePartition) X(OffsetCommitResponseTopic) X(OffsetCommitResponse) \
    X(OffsetFetchRequestTopic) X(OffsetFetchRequestTopics) X(OffsetFetchRequestGroup) X(OffsetFetchRequest) \
    X(OffsetFetchResponsePartition) X(OffsetFetchResponseTopic) X(OffsetFetchResponsePartitions) \
    X(OffsetFetchResponseTopics) X(OffsetFetchResponseGroup) X(OffsetFetchResponse) \
    X(DescribeGroupsRequest) X(DescribedGroupMember) X(DescribedGroup) X(DescribeGroupsResponse) \
    X(ListGroupsRequest) X(ListedGroup) X(ListGroupsResponse) \
    X(DeleteGroupsRequest) X(DeletableGroupResult) X(DeleteGroupsResponse) \
    X(OffsetDeleteRequestPartition) X(OffsetDeleteRequestTopic) X(OffsetDeleteRequest) \
    X(OffsetDeleteResponsePartition) X(OffsetDeleteResponseTopic) X(OffsetDeleteResponse)

/* ---- what the lists declare ---- */

#define KAFKA_FIELD_INDEX_(S, F, ...) S##_##F,
#define KAFKA_FIELD_TYPE_(S, F, type, ...) S##_##F##_type = (type),
#define KAFKA_STRUCT_DECLARE_(S)                                  \
    enum { KAFKA_FIELDS_##S(KAFKA_FIELD_INDEX_, S) S##_nfields }; \
    enum { KAFKA_FIELDS_##S(KAFKA_FIELD_TYPE_, S) };              \
    extern const kafka_struct_t kafka_struct_##S;
KAFKA_STRUCTS(KAFKA_STRUCT_DECLARE_)

/* ---- typed access ---- */

/* Compile-time check that field F of S is of one of the kinds (a bit per
 * kafka_type_t) an accessor handles. */
#define KV_KIND_(S, F, kinds, what)                                                              \
    ((void)sizeof(struct {                                                                       \
        _Static_assert(((1u << (int)S##_##F##_type) & (kinds)) != 0, #S "." #F " is not " what); \
        char c_;                                                                                 \
    }))
#define KV_NUMBERS_                                                                                   \
    ((1u << KT_BOOL) | (1u << KT_INT8) | (1u << KT_INT16) | (1u << KT_UINT16) | (1u << KT_INT32) | \
     (1u << KT_INT64) | (1u << KT_VARINT) | (1u << KT_VARLONG))
#define KV_STRING_ (1u << KT_STRING)
#define KV_BLOB_ ((1u << KT_BYTES) | (1u << KT_RECORDS))

/* The field's value, of any type (an array's elements are kv_at). */
#define KV_GET(v, S, F) kv_field((v), &kafka_struct_##S, S##_##F)
#define KV_INT(v, S, F) \
    (KV_KIND_(S, F, KV_NUMBERS_, "a number"), kv_int_at((v), &kafka_struct_##S, S##_##F))
/* NULL when null. */
#define KV_STR(v, S, F) \
    (KV_KIND_(S, F, KV_STRING_, "a string"), kv_str_at((v), &kafka_struct_##S, S##_##F))
#define KV_UUID(v, S, F) \
    (KV_KIND_(S, F, 1u << KT_UUID, "a uuid"), KV_GET(v, S, F)->u.uuid)

#define KV_SET_INT(v, S, F, x) \
    (KV_KIND_(S, F, KV_NUMBERS_, "a number"), kv_set_int_at((v), &kafka_struct_##S, S##_##F, (x)))
#define KV_SET_STR(a, v, S, F, s) \
    (KV_KIND_(S, F, KV_STRING_, "a string"), kv_set_str_at((a), (v), &kafka_struct_##S, S##_##F, (s)))
#define KV_SET_BYTES(v, S, F, p, len) \
    (KV_KIND_(S, F, KV_BLOB_, "bytes"), kv_set_bytes_at((v), &kafka_struct_##S, S##_##F, (p), (len)))
#define KV_SET_EXTERNAL_RECORDS(v, S, F, ext) \
    (KV_KIND_(S, F, 1u << KT_RECORDS, "records"), kv_set_external_records_at((v), &kafka_struct_##S, S##_##F, (ext)))
#define KV_SET_ARRAY(a, v, S, F, n) \
    (KV_KIND_(S, F, 1u << KT_ARRAY, "an array"), kv_set_array_at((a), (v), &kafka_struct_##S, S##_##F, (n)))

/* A struct of S with every field at its default. */
#define KV_NEW(a, S) kv_new_struct((a), &kafka_struct_##S)
/* A kv_ref_t initializer naming field F of S. */
#define KV_REF(S, F) {&kafka_struct_##S, S##_##F}

#endif
