/* log_dirs_client.c -- see log_dirs_client.h. */
#define _GNU_SOURCE
#include "log_dirs_client.h"
#include "kafka_client.h"
#include "broker/wire/kafka_messages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLIENT_ID "kipper-reassign"

int log_dirs_replica_cmp(const void *a, const void *b)
{
    const log_dirs_replica_t *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* ---- the request ---- */

/* Replicas of the topic starting at replicas[i]: they are next to each other. */
static int topic_run(const log_dirs_replica_t *replicas, int n, int i)
{
    int k = i;
    while (k < n && strcmp(replicas[k].topic, replicas[i].topic) == 0)
        k++;
    return k - i;
}

static int fill_topics(kafka_arena_t *a, kafka_value_t *topics, const log_dirs_replica_t *replicas, int n)
{
    for (int i = 0, t = 0; i < n; t++) {
        int run = topic_run(replicas, n, i);
        kafka_value_t *entry = kv_at(topics, (uint32_t)t);
        KV_SET_STR(a, entry, DescribableLogDirTopic, Topic, replicas[i].topic);
        kafka_value_t *parts = KV_SET_ARRAY(a, entry, DescribableLogDirTopic, Partitions, (uint32_t)run);
        if (!parts)
            return -1;
        for (int k = 0; k < run; k++)
            kv_at(parts, (uint32_t)k)->u.i = replicas[i + k].partition;
        i += run;
    }
    return 0;
}

int log_dirs_request(buf_t *out, int32_t correlation_id, const log_dirs_replica_t *replicas, int n)
{
    uint32_t ntopics = 0;
    for (int i = 0; i < n; i += topic_run(replicas, n, i))
        ntopics++;
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *body = KV_NEW(&a, DescribeLogDirsRequest);
    kafka_value_t *topics = body ? KV_SET_ARRAY(&a, body, DescribeLogDirsRequest, Topics, ntopics) : NULL;
    int rc = topics && fill_topics(&a, topics, replicas, n) == 0 &&
                     kafka_request_encode(out, kafka_api_find(KAFKA_API_DESCRIBE_LOG_DIRS), LOG_DIRS_VERSION,
                                          correlation_id, CLIENT_ID, body) == KAFKA_OK
                 ? 0
                 : -1;
    kafka_arena_free(&a);
    return rc;
}

/* ---- the answer ---- */

static void note_size(log_dirs_replica_t *replicas, int n, const char *topic, const kafka_value_t *part)
{
    if (KV_INT(part, DescribeLogDirsPartition, IsFutureKey))
        return;
    log_dirs_replica_t key = {.topic = topic, .partition = (int32_t)KV_INT(part, DescribeLogDirsPartition, PartitionIndex)};
    log_dirs_replica_t *r = bsearch(&key, replicas, (size_t)n, sizeof(*replicas), log_dirs_replica_cmp);
    if (r)
        r->size = KV_INT(part, DescribeLogDirsPartition, PartitionSize);
}

static void note_dir(log_dirs_replica_t *replicas, int n, const kafka_value_t *dir)
{
    if (KV_INT(dir, DescribeLogDirsResult, ErrorCode) != 0)
        return;
    const kafka_value_t *topics = KV_GET(dir, DescribeLogDirsResult, Topics);
    for (uint32_t t = 0; t < topics->n; t++) {
        const char *name = KV_STR(kv_at(topics, t), DescribeLogDirsTopic, Name);
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), DescribeLogDirsTopic, Partitions);
        for (uint32_t p = 0; name && p < parts->n; p++)
            note_size(replicas, n, name, kv_at(parts, p));
    }
}

int log_dirs_answer(const uint8_t *frame, size_t len, int32_t correlation_id, log_dirs_replica_t *replicas, int n,
                    char *err, size_t errlen)
{
    kafka_arena_t a;
    kafka_value_t *body = NULL;
    int32_t corr = 0;
    kafka_arena_init(&a, kafka_decode_budget(len));
    int rc = kafka_response_decode(frame, len, kafka_api_find(KAFKA_API_DESCRIBE_LOG_DIRS), LOG_DIRS_VERSION, &a,
                                   &corr, &body);
    if (rc != KAFKA_OK || corr != correlation_id) {
        if (rc != KAFKA_OK)
            snprintf(err, errlen, "a malformed DescribeLogDirs answer");
        else
            snprintf(err, errlen, "an answer to another request (correlation id %d)", (int)corr);
        kafka_arena_free(&a);
        return -1;
    }
    for (int i = 0; i < n; i++)
        replicas[i].size = -1;
    const kafka_value_t *dirs = KV_GET(body, DescribeLogDirsResponse, Results);
    for (uint32_t d = 0; d < dirs->n; d++)
        note_dir(replicas, n, kv_at(dirs, d));
    kafka_arena_free(&a);
    return 0;
}

/* ---- the exchange: one connection, one deadline (kafka_client.h) ---- */

int log_dirs_query(const char *host, int port, int timeout_ms, log_dirs_replica_t *replicas, int n, char *err,
                   size_t errlen)
{
    const int32_t correlation_id = 1;
    buf_t out;
    buf_init(&out);
    if (log_dirs_request(&out, correlation_id, replicas, n) < 0) {
        snprintf(err, errlen, "cannot encode a DescribeLogDirs request");
        buf_free(&out);
        return -1;
    }
    kafka_client_t k;
    size_t len = 0;
    int rc = -1;
    if (kafka_client_open(&k, host, port, timeout_ms, CLIENT_ID) < 0 || kafka_client_exchange(&k, &out, &len) < 0)
        snprintf(err, errlen, "%s", k.err);
    else
        rc = log_dirs_answer(buf_read_ptr(&k.in), len, correlation_id, replicas, n, err, errlen);
    kafka_client_close(&k);
    buf_free(&out);
    return rc;
}
