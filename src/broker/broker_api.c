/* broker_api.c -- one request in, one answer out: the API dispatch of the
 * broker and the handlers of the APIs it advertises.
 *
 * Only APIs implemented in full at every advertised version are advertised.
 * Anything else is handled as Kafka's SocketServer handles it: an unknown or
 * disabled API key, an unsupported version (except ApiVersions, KIP-511) or a
 * request that does not parse closes the connection, with a log line. */
#define _GNU_SOURCE
#include "broker_impl.h"
#include "kafka_codec.h"
#include "../base/log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_UNKNOWN_TOPIC_OR_PARTITION 3
#define ERR_INVALID_REQUEST 42
#define ERR_UNKNOWN_TOPIC_ID 100

/* What this broker advertises (within what the codec implements). */
static const struct {
    int16_t key, min, max;
} advertised[] = {
    {KAFKA_API_METADATA, 0, 12},
    {KAFKA_API_API_VERSIONS, 0, 3},
};
#define N_ADVERTISED ((int)(sizeof(advertised) / sizeof(advertised[0])))

/* Kafka's bit field of the operations allowed on the cluster resource
 * (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
 * IDEMPOTENT_WRITE); with no authorizer every supported one is allowed. */
#define CLUSTER_AUTHORIZED_OPS 0x1FA0

static int advertised_index(int16_t key, int16_t version)
{
    for (int i = 0; i < N_ADVERTISED; i++)
        if (advertised[i].key == key && version >= advertised[i].min && version <= advertised[i].max)
            return i;
    return -1;
}

/* Appends the encoded answer; -1 (connection closed) if it cannot be built. */
static int reply(conn_t *c, const kafka_api_t *api, int16_t version, int32_t corr, const kafka_value_t *body)
{
    if (!body || kafka_response_encode(&c->out, api, version, corr, body) != KAFKA_OK) {
        log_error("cannot encode %s v%d response for %s:%d", api->name, version, c->ip, c->port);
        return -1;
    }
    return 0;
}

/* ---- ApiVersions ---- */

static kafka_value_t *api_versions_body(kafka_arena_t *a, int16_t error)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_API_VERSIONS);
    kafka_value_t *r = kv_new_struct(a, api->response);
    if (!r)
        return NULL;
    kv_set_int(r, "ErrorCode", error);
    if (error && error != KAFKA_ERR_UNSUPPORTED_VERSION)
        return r;   /* Kafka lists no APIs with other errors */
    /* KIP-511's fallback lists only ApiVersions' own range, as Kafka's
     * ApiVersionsRequest.getErrorResponse does: enough to retry with. */
    kafka_value_t *keys = kv_set_array(a, r, "ApiKeys", error ? 1u : (uint32_t)N_ADVERTISED);
    if (!keys)
        return NULL;
    uint32_t n = 0;
    for (int i = 0; i < N_ADVERTISED; i++) {
        if (error && advertised[i].key != KAFKA_API_API_VERSIONS)
            continue;
        kv_set_int(kv_at(keys, n), "ApiKey", advertised[i].key);
        kv_set_int(kv_at(keys, n), "MinVersion", advertised[i].min);
        kv_set_int(kv_at(keys, n), "MaxVersion", advertised[i].max);
        n++;
    }
    return r;
}

/* ApiVersionsRequest.isValid: the client software name and version match
 * [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?  */
static int valid_software_field(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.')
            return 0;
    return 1;
}

static int handle_api_versions(conn_t *c, const kafka_request_t *req, kafka_arena_t *ra)
{
    int16_t error = 0;
    if (req->api_version >= 3 && (!valid_software_field(kv_str(req->body, "ClientSoftwareName")) ||
                                  !valid_software_field(kv_str(req->body, "ClientSoftwareVersion"))))
        error = ERR_INVALID_REQUEST;
    return reply(c, req->api, req->api_version, req->correlation_id, api_versions_body(ra, error));
}

/* KIP-511: a version we do not support gets a v0 answer saying so, with the
 * ranges we do support, so the client can retry with a version we speak. */
static int api_versions_fallback(conn_t *c, int16_t version, int32_t corr, kafka_arena_t *ra)
{
    log_info("%s:%d asked for ApiVersions v%d; answering v0 with UNSUPPORTED_VERSION", c->ip, c->port, version);
    return reply(c, kafka_api_find(KAFKA_API_API_VERSIONS), 0, corr,
                 api_versions_body(ra, KAFKA_ERR_UNSUPPORTED_VERSION));
}

/* ---- Metadata ---- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int is_zero_uuid(const uint8_t *u)
{
    static const uint8_t zero[16];
    return memcmp(u, zero, 16) == 0;
}

/* Fills one topic of the answer. name NULL: asked for by id (v10+). */
static void metadata_topic(kafka_arena_t *ra, kafka_value_t *t, int16_t version, const char *name, const uint8_t *id)
{
    int16_t error = ERR_UNKNOWN_TOPIC_OR_PARTITION;
    /* Topic ids in requests are honoured from v12 on; Kafka rejects them
     * (and null names) in v10 and v11. */
    if (version < 12 && (!name || (id && !is_zero_uuid(id))))
        error = ERR_INVALID_REQUEST;
    else if (!name)
        error = ERR_UNKNOWN_TOPIC_ID;
    kv_set_int(t, "ErrorCode", error);
    kv_set_str(ra, t, "Name", name ? name : version >= 12 ? NULL : "");
    if (id)
        memcpy(kv_get(t, "TopicId")->u.uuid, id, 16);
    /* No topic exists yet: every named topic is unknown. Auto-creation
     * (auto.create.topics.enable) needs the coordinator link. */
}

/* The requested topics, each name once (Kafka reads them into a set). */
static int metadata_topics(kafka_arena_t *ra, kafka_value_t *resp, const kafka_value_t *req_topics,
                           int16_t version)
{
    uint32_t n = req_topics->is_null ? 0 : req_topics->n, nn = 0, out = 0;
    const char **names = n ? kafka_arena_alloc(ra, n * sizeof(*names)) : NULL;
    if (n && !names)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        if (kv_str(kv_at(req_topics, i), "Name"))
            names[nn++] = kv_str(kv_at(req_topics, i), "Name");
    qsort(names, nn, sizeof(*names), cmp_str);
    uint32_t unique = 0;
    for (uint32_t i = 0; i < nn; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            names[unique++] = names[i];
    kafka_value_t *topics = kv_set_array(ra, resp, "Topics", unique + (n - nn));
    if (!topics)
        return -1;
    for (uint32_t i = 0; i < unique; i++)
        metadata_topic(ra, kv_at(topics, out++), version, names[i], NULL);
    for (uint32_t i = 0; i < n; i++) {
        const kafka_value_t *t = kv_at(req_topics, i);
        if (!kv_str(t, "Name"))
            metadata_topic(ra, kv_at(topics, out++), version, NULL, kv_get(t, "TopicId")->u.uuid);
    }
    return 0;
}

static int handle_metadata(broker_t *b, conn_t *c, const kafka_request_t *req, kafka_arena_t *ra)
{
    int16_t v = req->api_version;
    kafka_value_t *r = kv_new_struct(ra, req->api->response);
    kafka_value_t *brokers = r ? kv_set_array(ra, r, "Brokers", 1) : NULL;
    if (!brokers)
        return reply(c, req->api, v, req->correlation_id, NULL);
    kafka_value_t *me = kv_at(brokers, 0);
    kv_set_int(me, "NodeId", b->cfg.broker_id);
    kv_set_str(ra, me, "Host", b->adv_host);
    kv_set_int(me, "Port", b->adv_port);
    kv_set_str(ra, r, "ClusterId", b->cluster_id);
    /* A live broker must be named controller: clients send admin requests
     * there. This broker is the only one it knows. */
    kv_set_int(r, "ControllerId", b->cfg.broker_id);
    if (v >= 8 && v <= 10 && kv_int(req->body, "IncludeClusterAuthorizedOperations"))
        kv_set_int(r, "ClusterAuthorizedOperations", CLUSTER_AUTHORIZED_OPS);
    /* v0: an empty list means every topic; v1+: null does. Both are none yet. */
    const kafka_value_t *topics = kv_get(req->body, "Topics");
    if (metadata_topics(ra, r, topics, v) < 0)
        r = NULL;
    return reply(c, req->api, v, req->correlation_id, r);
}

/* ---- dispatch ---- */

static int dispatch(broker_t *b, conn_t *c, const kafka_request_t *req, kafka_arena_t *ra)
{
    switch (req->api_key) {
    case KAFKA_API_API_VERSIONS: return handle_api_versions(c, req, ra);
    case KAFKA_API_METADATA: return handle_metadata(b, c, req, ra);
    default: return -1;
    }
}

int broker_handle_frame(broker_t *b, conn_t *c, const uint8_t *p, size_t n)
{
    kafka_arena_t da, ra;
    kafka_request_t req;
    char why[256] = "";
    kafka_arena_init(&da, kafka_decode_budget(n));
    kafka_arena_init(&ra, 0);
    int rc = kafka_request_decode(p, n, &da, &req);
    int out;
    if (n >= 8 && req.api_key == KAFKA_API_API_VERSIONS && advertised_index(req.api_key, req.api_version) < 0) {
        out = api_versions_fallback(c, req.api_version, req.correlation_id, &ra);
    } else if (n >= 8 && advertised_index(req.api_key, req.api_version) < 0) {
        /* Kafka: an unknown key or unsupported version is an invalid
         * request, and an API the listener does not enable is refused;
         * both close the connection. */
        snprintf(why, sizeof(why), "unsupported request: api key %d (%s) v%d, correlation id %d", req.api_key,
                 req.api ? req.api->name : "unknown", req.api_version, req.correlation_id);
        out = -1;
    } else if (rc != KAFKA_OK) {
        snprintf(why, sizeof(why), "malformed request (%zu bytes, api key %d v%d)", n, req.api_key,
                 req.api_version);
        out = -1;
    } else {
        out = dispatch(b, c, &req, &ra);
        if (out < 0)
            snprintf(why, sizeof(why), "cannot answer %s v%d", req.api->name, req.api_version);
    }
    kafka_arena_free(&da);
    kafka_arena_free(&ra);
    if (out < 0) {
        broker_conn_close(b, c, why[0] ? why : "cannot answer");
        return -1;
    }
    return 0;
}
