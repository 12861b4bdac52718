/* broker_api.c -- one request in, one answer out: the API dispatch of the
 * broker and the handlers of the APIs it advertises.
 *
 * Only APIs implemented in full at every advertised version are advertised.
 * Anything else is handled as Kafka's SocketServer handles it: an unknown or
 * disabled API key, an unsupported version (except ApiVersions, KIP-511) or a
 * request that does not parse closes the connection, with a log line. */
#define _GNU_SOURCE
#include "api.h"
#include "api_handlers.h"
#include "broker/core/conn.h"
#include "broker/repl/repl.h"
#include "broker/wire/kafka_codec.h"
#include "broker/wire/kafka_messages.h"
#include "base/logging.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What this broker advertises (within what the codec implements), and who
 * answers. Fetch starts at v4, the first to carry record batches v2 (magic
 * 2), the only format kipper stores; Produce starts at v0 because
 * librdkafka enables gzip, snappy and lz4 only when it does. Produce v0-v2
 * may carry message sets of magic 0 or 1 (Kafka 0.8-0.10 clients): they are
 * up-converted to one v2 batch before the append, as Kafka's LogValidator
 * does (message_convert.h); v3 and later must carry magic 2. The group APIs stop below the versions
 * made for KIP-848's consumer protocol (OffsetCommit/OffsetFetch v9) and
 * share groups (FindCoordinator v6); static membership (KIP-345) and
 * KIP-814's SkipAssignment are implemented, so JoinGroup goes to v9. */
typedef req_status_t (*api_handler_t)(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
static req_status_t api_api_versions(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra);
static const struct {
    int16_t key, min, max;
    api_handler_t handler;
} advertised[] = {
    {KAFKA_API_PRODUCE, 0, 9, api_produce},
    {KAFKA_API_FETCH, 4, 11, api_fetch},
    {KAFKA_API_LIST_OFFSETS, 0, 6, api_list_offsets},
    {KAFKA_API_METADATA, 0, 12, api_metadata},
    {KAFKA_API_API_VERSIONS, 0, 3, api_api_versions},
    {KAFKA_API_CREATE_TOPICS, 0, 7, api_create_topics},
    {KAFKA_API_DELETE_TOPICS, 0, 6, api_delete_topics},
    {KAFKA_API_INIT_PRODUCER_ID, 0, 4, api_init_producer_id},
    {KAFKA_API_OFFSET_FOR_LEADER_EPOCH, 0, 4, api_offset_for_leader_epoch},
    {KAFKA_API_DESCRIBE_CONFIGS, 0, 4, api_describe_configs},
    {KAFKA_API_ALTER_CONFIGS, 0, 2, api_alter_configs},
    {KAFKA_API_INCREMENTAL_ALTER_CONFIGS, 0, 1, api_incremental_alter_configs},
    {KAFKA_API_DELETE_RECORDS, 0, 2, api_delete_records},
    {KAFKA_API_DESCRIBE_LOG_DIRS, 0, 4, api_describe_log_dirs},
    {KAFKA_API_CREATE_PARTITIONS, 0, 3, api_create_partitions},
    {KAFKA_API_ELECT_LEADERS, 0, 2, api_elect_leaders},
    {KAFKA_API_ALTER_PARTITION_REASSIGNMENTS, 0, 0, api_alter_partition_reassignments},
    {KAFKA_API_LIST_PARTITION_REASSIGNMENTS, 0, 0, api_list_partition_reassignments},
    {KAFKA_API_DESCRIBE_CLUSTER, 0, 1, api_describe_cluster},
    {KAFKA_API_OFFSET_COMMIT, 0, 8, api_offset_commit},
    {KAFKA_API_OFFSET_FETCH, 0, 8, api_offset_fetch},
    {KAFKA_API_FIND_COORDINATOR, 0, 5, api_find_coordinator},
    {KAFKA_API_JOIN_GROUP, 0, 9, api_join_group},
    {KAFKA_API_HEARTBEAT, 0, 4, api_heartbeat},
    {KAFKA_API_LEAVE_GROUP, 0, 5, api_leave_group},
    {KAFKA_API_SYNC_GROUP, 0, 5, api_sync_group},
    {KAFKA_API_DESCRIBE_GROUPS, 0, 5, api_describe_groups},
    {KAFKA_API_LIST_GROUPS, 0, 5, api_list_groups},
    {KAFKA_API_DELETE_GROUPS, 0, 2, api_delete_groups},
    {KAFKA_API_OFFSET_DELETE, 0, 0, api_offset_delete},
};
#define N_ADVERTISED ((int)(sizeof(advertised) / sizeof(advertised[0])))

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
    broker_request_t r = {.api = api, .api_version = version, .correlation_id = corr};
    return broker_reply(c, &r, body);
}

/* ---- ApiVersions ---- */

static kafka_value_t *api_versions_body(kafka_arena_t *a, int16_t error)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_API_VERSIONS);
    kafka_value_t *r = kv_new_struct(a, api->response);
    if (!r)
        return NULL;
    KV_SET_INT(r, ApiVersionsResponse, ErrorCode, error);
    if (error && error != KERR_UNSUPPORTED_VERSION)
        return r;   /* Kafka lists no APIs with other errors */
    /* KIP-511's fallback lists only ApiVersions' own range, as Kafka's
     * ApiVersionsRequest.getErrorResponse does: enough to retry with. */
    kafka_value_t *keys = KV_SET_ARRAY(a, r, ApiVersionsResponse, ApiKeys, error ? 1u : (uint32_t)N_ADVERTISED);
    if (!keys)
        return NULL;
    uint32_t n = 0;
    for (int i = 0; i < N_ADVERTISED; i++) {
        if (error && advertised[i].key != KAFKA_API_API_VERSIONS)
            continue;
        KV_SET_INT(kv_at(keys, n), ApiVersion, ApiKey, advertised[i].key);
        KV_SET_INT(kv_at(keys, n), ApiVersion, MinVersion, advertised[i].min);
        KV_SET_INT(kv_at(keys, n), ApiVersion, MaxVersion, advertised[i].max);
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

static req_status_t api_api_versions(broker_t *b, conn_t *c, broker_request_t *req, kafka_arena_t *ra)
{
    (void)b;
    int16_t error = 0;
    if (req->api_version >= 3 && (!valid_software_field(KV_STR(req->body, ApiVersionsRequest, ClientSoftwareName)) ||
                                  !valid_software_field(KV_STR(req->body, ApiVersionsRequest, ClientSoftwareVersion))))
        error = KERR_INVALID_REQUEST;
    return reply(c, req->api, req->api_version, req->correlation_id, api_versions_body(ra, error)) < 0 ? REQ_CLOSE
                                                                                                         : REQ_DONE;
}

/* KIP-511: a version we do not support gets a v0 answer saying so, with the
 * ranges we do support, so the client can retry with a version we speak. */
static int api_versions_fallback(conn_t *c, int16_t version, int32_t corr, kafka_arena_t *ra)
{
    log_info("%s:%d asked for ApiVersions v%d; answering v0 with UNSUPPORTED_VERSION", c->ip, c->port, version);
    return reply(c, kafka_api_find(KAFKA_API_API_VERSIONS), 0, corr,
                 api_versions_body(ra, KERR_UNSUPPORTED_VERSION));
}

/* ---- dispatch ---- */

/* A follower's replication requests (ReplicaId set), which a broker whose
 * coordinator lease lapsed still serves. */
static int from_follower(const broker_request_t *r)
{
    if (r->api_key == KAFKA_API_FETCH)
        return KV_INT(r->body, FetchRequest, ReplicaId) >= 0;
    if (r->api_key == KAFKA_API_OFFSET_FOR_LEADER_EPOCH)
        return r->api_version >= 3 && KV_INT(r->body, OffsetForLeaderEpochRequest, ReplicaId) >= 0;
    return 0;
}

/* While the coordinator lease is lapsed (repl/lease.c) this broker may no
 * longer lead what it led, and cannot learn who does: clients are served
 * as a stopped broker would serve them -- their connections close at their
 * next request (ApiVersions aside) -- so they turn to the brokers that know
 * the new leaders. An answer naming no leader would not do: clients ask the
 * broker they last used for metadata again, this one. */
static int lease_refuses(broker_t *b, conn_t *c, const broker_request_t *r)
{
    if (!repl_lease_lapsed(b) || r->api_key == KAFKA_API_API_VERSIONS || from_follower(r))
        return 0;
    repl_lease_client_refused(b, c->ip, c->port, r->api->name);
    return 1;
}

req_status_t broker_dispatch(broker_t *b, conn_t *c, broker_request_t *r, kafka_arena_t *ra)
{
    if (lease_refuses(b, c, r))
        return REQ_CLOSE;
    int i = advertised_index(r->api_key, r->api_version);
    req_status_t st = i < 0 ? REQ_CLOSE : advertised[i].handler(b, c, r, ra);
    /* A handler out of arena may have built (and queued) a partial answer:
     * the connection is closed before any of it is sent. */
    if (ra->exhausted) {
        log_warn("%s:%d: the answer to %s v%d needs more than %zu bytes to build", c->ip, c->port, r->api->name,
                 r->api_version, ra->limit);
        st = REQ_CLOSE;
    }
    return st;
}

/* Kafka: an unknown key or unsupported version is an invalid request, and
 * an API the listener does not enable is refused; both close the
 * connection, with a log line saying which. */
static int refuse(broker_t *b, conn_t *c, const kafka_request_t *req, int rc, size_t n)
{
    char why[256];
    if (advertised_index(req->api_key, req->api_version) < 0)
        snprintf(why, sizeof(why), "unsupported request: api key %d (%s) v%d, correlation id %d", req->api_key,
                 req->api ? req->api->name : "unknown", req->api_version, req->correlation_id);
    else if (rc == KAFKA_EBUDGET)
        snprintf(why, sizeof(why), "%s v%d request of %zu bytes needs more than %zu bytes to decode",
                 req->api->name, req->api_version, n, kafka_decode_budget(n));
    else
        snprintf(why, sizeof(why), "malformed request (%zu bytes, api key %d v%d, codec error %d)", n,
                 req->api_key, req->api_version, rc);
    broker_conn_close(b, c, why);
    return -1;
}

int broker_handle_frame(broker_t *b, conn_t *c, uint8_t *p, size_t n, shared_bytes_t *mem)
{
    kafka_arena_t da, ra;
    kafka_request_t req;
    kafka_arena_init(&da, kafka_decode_budget(n));
    api_response_arena_init(&ra);
    int rc = kafka_request_decode(p, n, &da, &req);
    int out = 0;
    if (n >= 8 && req.api_key == KAFKA_API_API_VERSIONS && advertised_index(req.api_key, req.api_version) < 0) {
        out = api_versions_fallback(c, req.api_version, req.correlation_id, &ra);
    } else if (n < 8 || rc != KAFKA_OK || advertised_index(req.api_key, req.api_version) < 0) {
        out = refuse(b, c, &req, rc, n);
    } else {
        broker_request_t r = {.id = ++b->next_request_id, .api_key = req.api_key, .api_version = req.api_version,
                              .correlation_id = req.correlation_id, .client_id = req.client_id, .api = req.api,
                              .body = req.body, .frame_mem = mem};
        req_status_t st = broker_dispatch(b, c, &r, &ra);
        if (st == REQ_WAIT && broker_request_detach(b, c, &r, p, n) < 0)
            st = REQ_CLOSE;
        /* State a handler made is the detached request's now, or done with. */
        if (st != REQ_WAIT && r.state && r.state_free)
            r.state_free(r.state);
        if (st == REQ_CLOSE) {
            char why[128];
            snprintf(why, sizeof(why), "cannot answer %s v%d", req.api->name, req.api_version);
            broker_conn_close(b, c, why);
            out = -1;
        }
    }
    kafka_arena_free(&da);
    kafka_arena_free(&ra);
    return out;
}
