/* api_util.c -- see api_util.h. */
#include "api_util.h"

int api_fill_int32(kafka_value_t *arr, const int32_t *v, int n)
{
    if (!arr)
        return -1;
    for (int i = 0; i < n; i++)
        kv_at(arr, (uint32_t)i)->u.i = v[i];
    return 0;
}

req_status_t api_answer(conn_t *c, const broker_request_t *r, const kafka_value_t *body)
{
    return broker_reply(c, r, body) < 0 ? REQ_CLOSE : REQ_DONE;
}

/* The local replica of a partition that leads it, or (followers_too) that
 * leads or follows it, at the client's epoch. */
static replica_t *local_replica(broker_t *b, const char *topic, int32_t partition, int32_t current_leader_epoch,
                                int followers_too, int16_t *error)
{
    partition_t *p = topic ? cluster_partition(b, topic, partition) : NULL;
    if (!p || !p->have_replicas) {
        *error = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return NULL;
    }
    replica_t *r = p->replica;
    /* A client (or follower) that knows of a newer leader epoch than we
     * lead at, or have heard of, is ahead of us: an election we have not
     * taken in yet. Kafka says UNKNOWN_LEADER_EPOCH then (retry soon), not
     * NOT_LEADER_OR_FOLLOWER (look elsewhere). */
    int32_t known = r && r->role == REPLICA_LEADER ? r->leader_epoch : p->leader_epoch;
    if (current_leader_epoch >= 0 && current_leader_epoch > known) {
        *error = KERR_UNKNOWN_LEADER_EPOCH;
        return NULL;
    }
    if (!r || !(r->role == REPLICA_LEADER || (followers_too && r->role == REPLICA_FOLLOWER))) {
        *error = KERR_NOT_LEADER_OR_FOLLOWER;
        return NULL;
    }
    if (!r->log) {
        *error = KERR_KAFKA_STORAGE_ERROR;
        return NULL;
    }
    if (current_leader_epoch >= 0 && current_leader_epoch != r->leader_epoch) {
        *error = current_leader_epoch < r->leader_epoch ? KERR_FENCED_LEADER_EPOCH : KERR_UNKNOWN_LEADER_EPOCH;
        return NULL;
    }
    *error = KERR_NONE;
    return r;
}

replica_t *api_leader_replica(broker_t *b, const char *topic, int32_t partition, int32_t current_leader_epoch,
                              int16_t *error)
{
    return local_replica(b, topic, partition, current_leader_epoch, 0, error);
}

replica_t *api_readable_replica(broker_t *b, const char *topic, int32_t partition, int32_t current_leader_epoch,
                                int16_t *error)
{
    return local_replica(b, topic, partition, current_leader_epoch, 1, error);
}

int api_each_partition(kafka_arena_t *ra, const kafka_value_t *req_body, kafka_value_t *resp, const api_tree_t *tree,
                       api_partition_fn fn, void *ctx)
{
    const kafka_value_t *topics = KV_REF_GET(req_body, tree->topics);
    kafka_value_t *rtopics = KV_REF_SET_ARRAY(ra, resp, tree->out_topics, topics->n);
    if (!rtopics)
        return -1;
    for (uint32_t i = 0; i < topics->n; i++) {
        const kafka_value_t *t = kv_at(topics, i);
        const kafka_value_t *parts = KV_REF_GET(t, tree->partitions);
        const char *name = KV_REF_STR(t, tree->topic_name);
        KV_REF_SET_STR(ra, kv_at(rtopics, i), tree->out_topic_name, name);
        kafka_value_t *rparts = KV_REF_SET_ARRAY(ra, kv_at(rtopics, i), tree->out_partitions, parts->n);
        if (!rparts)
            return -1;
        for (uint32_t k = 0; k < parts->n; k++)
            fn(ctx, name, kv_at(parts, k), kv_at(rparts, k));
    }
    return 0;
}
