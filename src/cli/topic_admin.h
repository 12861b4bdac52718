/* topic_admin.h -- what `kipper topics` and `kipper configs` ask a broker
 * when given --bootstrap-server, as Kafka 3.x's kafka-topics.sh and
 * kafka-configs.sh ask it through the admin client: the cluster and its
 * topics (Metadata), CreateTopics, DeleteTopics, CreatePartitions,
 * DescribeConfigs and IncrementalAlterConfigs.
 *
 * As in group_admin.h, each request is built and each answer read by a pure
 * function over the broker's codec values (ta_*_request, ta_*_answer), and
 * the blocking calls send them over kafka_client.h under its deadline.
 * Results are plain C structs owning their strings (freed by *_free); their
 * sizes come from answers the codec has bounded (KAFKA_CLIENT_ANSWER_MAX). */
#ifndef KIPPER_CLI_TOPIC_ADMIN_H
#define KIPPER_CLI_TOPIC_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_client.h"

/* Metadata v10 is the first with topic ids, which --describe prints. */
#define TA_METADATA_VERSION 10
#define TA_CREATE_TOPICS_VERSION 4
#define TA_DELETE_TOPICS_VERSION 5
#define TA_CREATE_PARTITIONS_VERSION 2
#define TA_DESCRIBE_CONFIGS_VERSION 1
#define TA_INCREMENTAL_ALTER_CONFIGS_VERSION 0
#define TA_LIST_REASSIGNMENTS_VERSION 0

#define TA_TIMEOUT_MS 30000   /* what the tools give the broker for a change */

/* DescribeConfigs' and IncrementalAlterConfigs' resource types. */
enum { TA_RESOURCE_TOPIC = 2, TA_RESOURCE_BROKER = 4 };
/* IncrementalAlterConfigs' operations. */
enum { TA_OP_SET = 0, TA_OP_DELETE = 1 };
/* DescribeConfigs v1+'s sources. */
enum {
    TA_SOURCE_UNKNOWN = 0,
    TA_SOURCE_DYNAMIC_TOPIC = 1,
    TA_SOURCE_DYNAMIC_BROKER = 2,
    TA_SOURCE_DYNAMIC_DEFAULT_BROKER = 3,
    TA_SOURCE_STATIC_BROKER = 4,
    TA_SOURCE_DEFAULT = 5,
    TA_SOURCE_DYNAMIC_BROKER_LOGGER = 6,
};

/* A Kafka error of one topic or resource and its message (the broker's, or
 * the one Kafka's client gives that error). */
typedef struct {
    int16_t error;
    char message[512];
} ta_result_t;

typedef struct {
    int32_t partition, leader;   /* leader -1: none */
    int32_t *replicas, *isr;
    int nreplicas, nisr;
    /* A move in progress (ListPartitionReassignments): every replica of
     * the move (those staying, being added and being removed), and the
     * replicas being added and removed. */
    int moving;
    int32_t *all, *adding, *removing;
    int nall, nadding, nremoving;
} ta_partition_t;

typedef struct {
    char *name;
    uint8_t id[16];
    int internal;
    ta_partition_t *parts;   /* sorted by partition */
    int nparts;
} ta_topic_t;

typedef struct {
    int32_t *brokers;        /* the live brokers' ids */
    int nbrokers;
    ta_topic_t *topics;      /* every topic the answer had without error, sorted by name */
    int ntopics;
} ta_metadata_t;

void ta_metadata_free(ta_metadata_t *m);
const ta_topic_t *ta_metadata_topic(const ta_metadata_t *m, const char *name);
int ta_broker_live(const ta_metadata_t *m, int32_t id);

typedef struct {
    char *name, *value;   /* value NULL: null */
    int8_t source;
} ta_synonym_t;

typedef struct {
    char *name, *value;   /* value NULL: null (a sensitive config) */
    int8_t source;
    int sensitive;
    ta_synonym_t *synonyms;
    int nsynonyms;
} ta_config_t;

typedef struct {
    ta_config_t *v;       /* sorted by name */
    int n;
} ta_configs_t;

void ta_configs_free(ta_configs_t *c);
const ta_config_t *ta_configs_find(const ta_configs_t *c, const char *name);
/* Kafka's name of a source ("DYNAMIC_TOPIC_CONFIG"). */
const char *ta_source_name(int8_t source);

typedef struct {
    const char *name, *value;
} ta_kv_t;

typedef struct {
    const char *name, *value;   /* value unused for TA_OP_DELETE */
    int8_t op;
} ta_alter_op_t;

/* A new topic: partitions and rf -1 for the broker's defaults, or an
 * assignment of nassigned partitions of assigned_rf replicas each. */
typedef struct {
    const char *name;
    int partitions, rf;
    const int32_t *assignment;
    int nassigned, assigned_rf;
    const ta_kv_t *configs;
    int nconfigs;
} ta_new_topic_t;

/* ---- pure: requests built, answers read ---- */

kafka_value_t *ta_metadata_request(kafka_arena_t *a);
int ta_metadata_answer(const kafka_value_t *answer, ta_metadata_t *out);

kafka_value_t *ta_list_reassignments_request(kafka_arena_t *a);
/* Each move of the answer onto its partition of m (moves of partitions m
 * does not have are left out); Kafka's error in res. */
void ta_list_reassignments_answer(const kafka_value_t *answer, ta_metadata_t *m, ta_result_t *res);
/* The replication factor kafka-topics.sh shows: while a move is under way,
 * the one the partition had before it, else its replica count. */
int ta_replication_factor(const ta_partition_t *p);
/* The replicas kafka-topics.sh shows: while a move is under way, every one
 * of the move (Kafka's Metadata lists them all then). */
const int32_t *ta_shown_replicas(const ta_partition_t *p, int *n);

kafka_value_t *ta_create_topic_request(kafka_arena_t *a, const ta_new_topic_t *t);
void ta_create_topic_answer(const kafka_value_t *answer, const char *name, ta_result_t *res);

kafka_value_t *ta_delete_topics_request(kafka_arena_t *a, char *const *names, int n);
/* The first topic's error (KERR_NONE when every one went). */
void ta_delete_topics_answer(const kafka_value_t *answer, ta_result_t *res);

/* The topic grown to count partitions; assignment: the new partitions'
 * replicas (nnew of rf each), or NULL for the broker's choice. */
kafka_value_t *ta_create_partitions_request(kafka_arena_t *a, const char *name, int count,
                                            const int32_t *assignment, int nnew, int rf);
void ta_create_partitions_answer(const kafka_value_t *answer, const char *name, ta_result_t *res);

/* Every config of the resource, with synonyms. */
kafka_value_t *ta_describe_configs_request(kafka_arena_t *a, int8_t type, const char *name);
int ta_describe_configs_answer(const kafka_value_t *answer, ta_configs_t *out, ta_result_t *res);

kafka_value_t *ta_alter_configs_request(kafka_arena_t *a, int8_t type, const char *name, const ta_alter_op_t *ops,
                                        int n);
void ta_alter_configs_answer(const kafka_value_t *answer, ta_result_t *res);

/* ---- blocking: over one client ---- */

/* Each: 0 (Kafka's error, if any, in res), or -1 with k->err. */
int ta_metadata(kafka_client_t *k, ta_metadata_t *out);
int ta_list_reassignments(kafka_client_t *k, ta_metadata_t *m, ta_result_t *res);
int ta_create_topic(kafka_client_t *k, const ta_new_topic_t *t, ta_result_t *res);
int ta_delete_topics(kafka_client_t *k, char *const *names, int n, ta_result_t *res);
int ta_create_partitions(kafka_client_t *k, const char *name, int count, const int32_t *assignment, int nnew,
                         int rf, ta_result_t *res);
int ta_describe_configs(kafka_client_t *k, int8_t type, const char *name, ta_configs_t *out, ta_result_t *res);
int ta_alter_configs(kafka_client_t *k, int8_t type, const char *name, const ta_alter_op_t *ops, int n,
                     ta_result_t *res);

#endif
