/* kafka_client.h -- a small blocking Kafka client for the command-line
 * tools: one TCP connection to one broker, one request at a time, each
 * answered under a deadline. Requests and answers are encoded and read with
 * the broker's own codec (src/broker/wire/kafka_codec.h, kafka_messages.h),
 * so the tools speak exactly the protocol the broker parses.
 *
 * Threading: none of its own. A client is used by one thread at a time;
 * clients share nothing.
 *
 * Timeouts: the socket is non-blocking and waited on with poll, so every
 * step (connecting, writing, reading) returns by the client's deadline
 * whatever the broker does (refuses, stalls, answers garbage). The deadline
 * is set by kafka_client_open and again by each kafka_client_call, timeout_ms
 * from then; kafka_client_exchange runs under the current one.
 *
 * Used by `kipper reassign --verify` (log_dirs_client.c, DescribeLogDirs),
 * `kipper consumer-groups` (group_admin.c), the console tools
 * (console_producer.c, console_consumer.c), and `kipper topics` and
 * `kipper configs` with --bootstrap-server (topic_admin.c). */
#ifndef KIPPER_CLI_KAFKA_CLIENT_H
#define KIPPER_CLI_KAFKA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "broker/wire/kafka_messages.h"

/* An answer larger than this is refused (the tools ask about groups and
 * partitions: a Metadata answer of 100 000 partitions is a few MiB). */
#define KAFKA_CLIENT_ANSWER_MAX (64u << 20)

typedef struct {
    int fd;                /* -1 when not connected */
    char host[256];
    int port;
    int timeout_ms;
    uint64_t deadline;     /* clock_mono_ms */
    int32_t next_correlation_id;
    const char *client_id;
    buf_t out, in;         /* in holds the last answer's frame: its bytes fields point into it */
    kafka_arena_t arena;   /* the last answer's values */
    kafka_arena_t request; /* for the caller to build the next request's body in; emptied by each call */
    char err[512];         /* what the last failure was */
} kafka_client_t;

/* Connects to host:port within timeout_ms. 0, or -1 with k->err set; either
 * way kafka_client_close frees what it holds. */
int kafka_client_open(kafka_client_t *k, const char *host, int port, int timeout_ms, const char *client_id);
void kafka_client_close(kafka_client_t *k);

/* Sends a whole request frame (size prefix included) and reads one answer
 * frame into k->in, its size prefix consumed: *len bytes at
 * buf_read_ptr(&k->in). Under the current deadline. 0, or -1 with k->err. */
int kafka_client_exchange(kafka_client_t *k, buf_t *request, size_t *len);

/* One request of api_key at version with body (NULL: it could not be built,
 * out of memory), and its answer decoded: 0
 * with *answer (valid until the next call or close), or -1 with k->err (the
 * connection, the deadline, an answer that does not parse or answers
 * another request). */
int kafka_client_call(kafka_client_t *k, int16_t api_key, int16_t version, const kafka_value_t *body,
                      const kafka_value_t **answer);

/* Sends a request whose answer is not read: Produce with acks=0, which
 * brokers do not answer. 0, or -1 with k->err. */
int kafka_client_send(kafka_client_t *k, int16_t api_key, int16_t version, const kafka_value_t *body);

/* Connects to the first broker of servers ("HOST:PORT[,HOST:PORT...]",
 * --bootstrap-server) that takes the connection. 0, or -1 with err saying
 * why (a malformed entry, or none reachable with the last reason); k needs
 * no close then. */
int kafka_client_open_any(kafka_client_t *k, const char *servers, int timeout_ms, const char *client_id,
                          char *err, size_t errlen);

/* --command-config: the client properties file Kafka's admin tools take.
 * kipper's tools act on request.timeout.ms, else default.api.timeout.ms (a
 * positive number of ms: *timeout_ms; left as it was when neither is set),
 * and refuse a security.protocol other than PLAINTEXT, the one protocol
 * kipper speaks; the other keys are another client's and are left alone,
 * as Kafka's admin client leaves keys it does not know. 0, or -1 with err. */
int kafka_client_command_config(const char *path, int *timeout_ms, char *err, size_t errlen);

#endif
