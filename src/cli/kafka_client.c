/* kafka_client.c -- see kafka_client.h. */
#define _GNU_SOURCE
#include "kafka_client.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/endian.h"
#include "base/net.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int fail(kafka_client_t *k, const char *what, int e)
{
    snprintf(k->err, sizeof(k->err), "%s %s:%d%s%s", what, k->host, k->port, e ? ": " : "", e ? strerror(e) : "");
    return -1;
}

/* Until the socket is ready for events, or the deadline. */
static int wait_ready(kafka_client_t *k, short events)
{
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= k->deadline)
            return fail(k, events == POLLIN ? "no answer in time from" : "no connection in time to", 0);
        struct pollfd p = {.fd = k->fd, .events = events};
        int rc = poll(&p, 1, (int)(k->deadline - now));
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return fail(k, "cannot wait for", errno);
    }
}

int kafka_client_open(kafka_client_t *k, const char *host, int port, int timeout_ms, const char *client_id)
{
    memset(k, 0, sizeof(*k));
    k->fd = -1;
    snprintf(k->host, sizeof(k->host), "%s", host);
    k->port = port;
    k->timeout_ms = timeout_ms;
    k->deadline = clock_mono_ms() + (uint64_t)timeout_ms;
    k->next_correlation_id = 1;
    k->client_id = client_id;
    buf_init(&k->out);
    buf_init(&k->in);
    kafka_arena_init(&k->arena, 0);
    kafka_arena_init(&k->request, 0);
    int connected = 0;
    k->fd = net_connect_tcp(k->host, port, &connected, k->err, sizeof(k->err));
    if (k->fd < 0)
        return -1;
    while (!connected) {
        if (wait_ready(k, POLLOUT) < 0)
            return -1;
        int rc = net_connect_result(k->fd);
        if (rc < 0)
            return fail(k, "cannot connect to", errno);
        connected = rc == 0;
    }
    return 0;
}

void kafka_client_close(kafka_client_t *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
    buf_free(&k->out);
    buf_free(&k->in);
    kafka_arena_free(&k->arena);
    kafka_arena_free(&k->request);
}

static int send_all(kafka_client_t *k, buf_t *out)
{
    for (;;) {
        if (net_write_buffer(k->fd, out) < 0)
            return fail(k, "cannot send to", errno);
        if (buf_unread(out) == 0)
            return 0;
        if (wait_ready(k, POLLOUT) < 0)
            return -1;
    }
}

/* Until in holds want unread bytes. */
static int read_exactly(kafka_client_t *k, size_t want)
{
    while (buf_unread(&k->in) < want) {
        ssize_t n = net_read_into(&k->in, k->fd, want - buf_unread(&k->in));
        if (n == 0)
            return fail(k, "connection closed by", 0);
        if (n < 0 && errno != EAGAIN)
            return fail(k, "cannot read from", errno);
        if (n < 0 && wait_ready(k, POLLIN) < 0)
            return -1;
    }
    return 0;
}

int kafka_client_exchange(kafka_client_t *k, buf_t *request, size_t *len)
{
    if (k->fd < 0)
        return fail(k, "not connected to", 0);
    buf_consume(&k->in, buf_unread(&k->in));
    if (send_all(k, request) < 0 || read_exactly(k, 4) < 0)
        return -1;
    uint32_t size = be32_get(buf_read_ptr(&k->in));
    buf_consume(&k->in, 4);
    if (size > KAFKA_CLIENT_ANSWER_MAX)
        return fail(k, "an answer too large from", 0);
    *len = size;
    return read_exactly(k, size);
}

/* The request into k->out under a new correlation id (*corr), and a new
 * deadline. 0, or -1 with k->err. */
static int encode_request(kafka_client_t *k, const kafka_api_t *api, int16_t version, const kafka_value_t *body,
                          int32_t *corr)
{
    *corr = k->next_correlation_id++;
    buf_consume(&k->out, buf_unread(&k->out));
    int encoded = api && body && kafka_request_encode(&k->out, api, version, *corr, k->client_id, body) == KAFKA_OK;
    kafka_arena_free(&k->request);
    kafka_arena_init(&k->request, 0);
    if (!encoded) {
        snprintf(k->err, sizeof(k->err), "cannot encode a %s request", api ? api->name : "Kafka");
        return -1;
    }
    k->deadline = clock_mono_ms() + (uint64_t)k->timeout_ms;
    return 0;
}

int kafka_client_send(kafka_client_t *k, int16_t api_key, int16_t version, const kafka_value_t *body)
{
    int32_t corr;
    if (encode_request(k, kafka_api_find(api_key), version, body, &corr) < 0)
        return -1;
    return k->fd < 0 ? fail(k, "not connected to", 0) : send_all(k, &k->out);
}

int kafka_client_call(kafka_client_t *k, int16_t api_key, int16_t version, const kafka_value_t *body,
                      const kafka_value_t **answer)
{
    const kafka_api_t *api = kafka_api_find(api_key);
    int32_t corr;
    size_t len = 0;
    if (encode_request(k, api, version, body, &corr) < 0 || kafka_client_exchange(k, &k->out, &len) < 0)
        return -1;
    kafka_arena_free(&k->arena);
    kafka_arena_init(&k->arena, kafka_answer_decode_budget(len));
    int32_t got = 0;
    kafka_value_t *body_out = NULL;
    if (kafka_response_decode(buf_read_ptr(&k->in), len, api, version, &k->arena, &got, &body_out) != KAFKA_OK) {
        snprintf(k->err, sizeof(k->err), "a malformed %s answer from %s:%d", api->name, k->host, k->port);
        return -1;
    }
    if (got != corr) {
        snprintf(k->err, sizeof(k->err), "an answer to another request (correlation id %d) from %s:%d", (int)got,
                 k->host, k->port);
        return -1;
    }
    *answer = body_out;
    return 0;
}

int kafka_client_open_any(kafka_client_t *k, const char *servers, int timeout_ms, const char *client_id,
                          char *err, size_t errlen)
{
    char last[600] = "no broker given";
    for (const char *p = servers; *p;) {
        size_t n = strcspn(p, ",");
        char one[300], host[256];
        int port;
        snprintf(one, sizeof(one), "%.*s", (int)(n < 299 ? n : 299), p);
        if (net_parse_host_port(one, host, sizeof(host), &port, 1) < 0) {
            snprintf(err, errlen, "--bootstrap-server: '%s' is not HOST:PORT", one);
            return -1;
        }
        if (kafka_client_open(k, host, port, timeout_ms, client_id) == 0)
            return 0;
        snprintf(last, sizeof(last), "%s", k->err);
        kafka_client_close(k);
        p += n + (p[n] ? 1 : 0);
    }
    snprintf(err, errlen, "cannot reach any broker of --bootstrap-server %s (%s)", servers, last);
    return -1;
}

int kafka_client_command_config(const char *path, int *timeout_ms, char *err, size_t errlen)
{
    config_t cfg;
    if (config_load(&cfg, path) < 0) {
        snprintf(err, errlen, "--command-config: %s", cfg.error);
        return -1;
    }
    int rc = 0;
    const char *protocol = config_get(&cfg, "security.protocol");
    static const char *const timeouts[] = {"request.timeout.ms", "default.api.timeout.ms"};
    if (protocol && strcasecmp(protocol, "PLAINTEXT") != 0) {
        snprintf(err, errlen, "--command-config %s: security.protocol=%s, but kipper speaks PLAINTEXT only", path,
                 protocol);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
        long ms;
        if (!config_get(&cfg, timeouts[i]))
            continue;
        if (config_get_long(&cfg, timeouts[i], 0, 1, INT32_MAX, &ms) < 0) {
            snprintf(err, errlen, "--command-config %s: %s must be a number of ms from 1 to %d, got '%s'", path,
                     timeouts[i], INT32_MAX, config_get(&cfg, timeouts[i]));
            rc = -1;
        } else {
            *timeout_ms = (int)ms;
            break;
        }
    }
    config_free(&cfg);
    return rc;
}
