/* log_dirs_client.h -- the size of some replicas on one broker, asked with
 * Kafka's DescribeLogDirs (answered by src/broker/api/api_records.c), for
 * `kipper reassign --verify` (reassign_progress.c).
 *
 * Threading: none of its own. Each call runs on the caller's thread, keeps
 * no state between calls and shares nothing, so calls on different threads
 * do not interfere.
 *
 * Timeouts: log_dirs_query opens one TCP connection, sends one request,
 * reads one answer and closes the connection, all within timeout_ms: the
 * connect, the write and the read share one deadline (kafka_client.h). To
 * the caller it is one blocking call that returns by the deadline, whatever
 * the broker does (refuses, stalls, answers garbage).
 *
 * The request and the answer are encoded and read apart from the socket
 * (log_dirs_request, log_dirs_answer: pure), so the unit tests drive them
 * with frames the broker's codec makes (src/broker/wire/kafka_codec.h). */
#ifndef KIPPER_CLI_LOG_DIRS_CLIENT_H
#define KIPPER_CLI_LOG_DIRS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* DescribeLogDirs v1: every Kafka broker since 1.0 answers it, and the later
 * versions add nothing read here (the totals of a log dir, error codes in
 * other places). */
#define LOG_DIRS_VERSION 1

typedef struct {
    const char *topic;   /* the caller's */
    int32_t partition;
    int64_t size;        /* filled in: bytes of the broker's replica, -1 when it has none */
} log_dirs_replica_t;

/* Orders replicas by topic, then partition (for qsort). The functions below
 * take replicas[0..n) so ordered, each (topic, partition) once. */
int log_dirs_replica_cmp(const void *a, const void *b);

/* Appends the request frame (size prefix, header, body) asking about
 * replicas[0..n), one entry per topic. 0, or -1 if it cannot be encoded. */
int log_dirs_request(buf_t *out, int32_t correlation_id, const log_dirs_replica_t *replicas, int n);

/* An answer frame (without its size prefix) to the request of that
 * correlation id: each replica's size (-1 for one the broker does not list;
 * a log dir answering with an error, or a future replica, counts as none).
 * 0, or -1 with err (malformed, or another request's answer). */
int log_dirs_answer(const uint8_t *frame, size_t len, int32_t correlation_id, log_dirs_replica_t *replicas, int n,
                    char *err, size_t errlen);

/* The exchange with the broker at host:port, bounded by timeout_ms (see
 * above). 0 with the sizes filled in, or -1 with err saying what failed:
 * the connection, the deadline, or the answer. */
int log_dirs_query(const char *host, int port, int timeout_ms, log_dirs_replica_t *replicas, int n, char *err,
                   size_t errlen);

#endif
