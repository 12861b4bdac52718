/* api_util.h -- small helpers the request handlers (api_*.c) share. */
#ifndef KIPPER_BROKER_API_UTIL_H
#define KIPPER_BROKER_API_UTIL_H

#include "broker/core/broker_impl.h"
#include "broker/core/cluster.h"
#include "broker/core/conn.h"
#include "broker/wire/kafka_messages.h"

/* Sets the int32 array field F of S to v[0..n). 0, or -1 out of arena. */
#define API_SET_INT32_ARRAY(ra, st, S, F, v, n) api_fill_int32(KV_SET_ARRAY(ra, st, S, F, (uint32_t)(n)), (v), (n))
/* arr (NULL: out of arena) = v[0..n). 0, or -1. */
int api_fill_int32(kafka_value_t *arr, const int32_t *v, int n);
/* Encode and queue body as the answer to r: REQ_DONE, or REQ_CLOSE. */
req_status_t api_answer(conn_t *c, const broker_request_t *r, const kafka_value_t *body);
/* The partition's local replica when this broker leads it at the client's
 * idea of the leader epoch (current_leader_epoch, -1: not given), else NULL
 * with *error set (UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
 * KAFKA_STORAGE_ERROR, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH). */
replica_t *api_leader_replica(broker_t *b, const char *topic, int32_t partition, int32_t current_leader_epoch,
                              int16_t *error);
/* The same, a follower too (at the epoch it follows): where a consumer may
 * read (KIP-392; api_fetch.c). */
replica_t *api_readable_replica(broker_t *b, const char *topic, int32_t partition, int32_t current_leader_epoch,
                                int16_t *error);

/* The fields of a request's topic/partition tree and of the answer's
 * (KV_REF(Struct, Field) each). */
typedef struct {
    kv_ref_t topics;              /* request: array of topics */
    kv_ref_t topic_name;          /* request topic: its name */
    kv_ref_t partitions;          /* request topic: array of partitions */
    kv_ref_t out_topics, out_topic_name, out_partitions;   /* the same in the response */
} api_tree_t;

typedef void (*api_partition_fn)(void *ctx, const char *topic, const kafka_value_t *in, kafka_value_t *out);
/* Builds the response's topic/partition arrays in request order and calls fn
 * for each partition. 0, or -1 out of arena. */
int api_each_partition(kafka_arena_t *ra, const kafka_value_t *req_body, kafka_value_t *resp, const api_tree_t *tree,
                       api_partition_fn fn, void *ctx);

#endif
