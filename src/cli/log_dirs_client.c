/* log_dirs_client.c -- see log_dirs_client.h. */
#define _GNU_SOURCE
#include "log_dirs_client.h"
#include "base/clock.h"
#include "base/endian.h"
#include "base/net.h"
#include "broker/wire/kafka_messages.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- the exchange: one connection, one deadline ---- */

typedef struct {
    int fd;
    uint64_t deadline;   /* clock_mono_ms */
    const char *host;
    int port;
    char *err;
    size_t errlen;
} exchange_t;

static int fail(exchange_t *x, const char *what, int e)
{
    snprintf(x->err, x->errlen, "%s %s:%d%s%s", what, x->host, x->port, e ? ": " : "", e ? strerror(e) : "");
    return -1;
}

/* Until fd is ready for events, or the deadline. 0, or -1 with err. */
static int wait_ready(exchange_t *x, short events)
{
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= x->deadline)
            return fail(x, events == POLLIN ? "no answer in time from" : "no connection in time to", 0);
        struct pollfd p = {.fd = x->fd, .events = events};
        int rc = poll(&p, 1, (int)(x->deadline - now));
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return fail(x, "cannot wait for", errno);
    }
}

static int connect_to(exchange_t *x)
{
    int connected = 0;
    x->fd = net_connect_tcp(x->host, x->port, &connected, x->err, x->errlen);
    if (x->fd < 0)
        return -1;
    while (!connected) {
        if (wait_ready(x, POLLOUT) < 0)
            return -1;
        int rc = net_connect_result(x->fd);
        if (rc < 0)
            return fail(x, "cannot connect to", errno);
        connected = rc == 0;
    }
    return 0;
}

static int send_all(exchange_t *x, buf_t *out)
{
    for (;;) {
        if (net_write_buffer(x->fd, out) < 0)
            return fail(x, "cannot send to", errno);
        if (buf_unread(out) == 0)
            return 0;
        if (wait_ready(x, POLLOUT) < 0)
            return -1;
    }
}

/* Until in holds want unread bytes. */
static int read_exactly(exchange_t *x, buf_t *in, size_t want)
{
    while (buf_unread(in) < want) {
        ssize_t n = net_read_into(in, x->fd, want - buf_unread(in));
        if (n == 0)
            return fail(x, "connection closed by", 0);
        if (n < 0 && errno != EAGAIN)
            return fail(x, "cannot read from", errno);
        if (n < 0 && wait_ready(x, POLLIN) < 0)
            return -1;
    }
    return 0;
}

/* The answer's frame, its size prefix consumed. */
static int read_frame(exchange_t *x, buf_t *in, size_t *len)
{
    if (read_exactly(x, in, 4) < 0)
        return -1;
    uint32_t size = be32_get(buf_read_ptr(in));
    buf_consume(in, 4);
    if (size > LOG_DIRS_ANSWER_MAX)
        return fail(x, "an answer too large from", 0);
    *len = size;
    return read_exactly(x, in, size);
}

int log_dirs_query(const char *host, int port, int timeout_ms, log_dirs_replica_t *replicas, int n, char *err,
                   size_t errlen)
{
    exchange_t x = {.fd = -1, .deadline = clock_mono_ms() + (uint64_t)timeout_ms, .host = host, .port = port,
                    .err = err, .errlen = errlen};
    const int32_t correlation_id = 1;
    buf_t out, in;
    size_t len = 0;
    buf_init(&out);
    buf_init(&in);
    int rc = log_dirs_request(&out, correlation_id, replicas, n);
    if (rc < 0)
        snprintf(err, errlen, "cannot encode a DescribeLogDirs request");
    if (rc == 0)
        rc = connect_to(&x);
    if (rc == 0)
        rc = send_all(&x, &out);
    if (rc == 0)
        rc = read_frame(&x, &in, &len);
    if (rc == 0)
        rc = log_dirs_answer(buf_read_ptr(&in), len, correlation_id, replicas, n, err, errlen);
    if (x.fd >= 0)
        close(x.fd);
    buf_free(&out);
    buf_free(&in);
    return rc;
}
