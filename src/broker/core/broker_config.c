/* broker_config.c -- server.properties read as Kafka's KafkaConfig reads it:
 * Kafka's property names, Kafka's defaults, and a clear error naming the key
 * for a bad value. */
#define _GNU_SOURCE
#include "broker_config.h"
#include "broker_config_defs.h"
#include "broker/coord/coord_config.h"
#include "broker/coord/coord_connect.h"
#include "base/logging.h"
#include "base/net.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int get_num(config_t *cfg, const char *key, long def, long min, long max, long *out, char *err,
                   size_t errlen)
{
    if (config_get_long(cfg, key, def, min, max, out) < 0) {
        snprintf(err, errlen, "%s", cfg->error);
        return -1;
    }
    return 0;
}

static int get_int(config_t *cfg, const char *key, long def, long min, long max, int *out, char *err,
                   size_t errlen)
{
    long v;
    if (get_num(cfg, key, def, min, max, &v, err, errlen) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

int broker_parse_listener(const char *key, const char *v, broker_endpoint_t *ep, char *err, size_t errlen)
{
    if (strchr(v, ',')) {
        snprintf(err, errlen, "%s: only one listener is supported for now, got '%.200s'", key, v);
        return -1;
    }
    const char *sep = strstr(v, "://");
    if (!sep) {
        snprintf(err, errlen, "%s must look like PLAINTEXT://host:port, got '%.200s'", key, v);
        return -1;
    }
    if ((size_t)(sep - v) != strlen("PLAINTEXT") || strncasecmp(v, "PLAINTEXT", 9) != 0) {
        snprintf(err, errlen, "%s: only the PLAINTEXT listener is supported, got '%.200s'", key, v);
        return -1;
    }
    if (net_parse_host_port(sep + 3, ep->host, sizeof(ep->host), &ep->port, 0) < 0) {
        snprintf(err, errlen, "%s must look like PLAINTEXT://host:port (port 0-65535), got '%.200s'", key, v);
        return -1;
    }
    return 0;
}

static int read_log_dirs(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    const char *key = "log.dirs";
    const char *v = config_get(cfg, key);
    const char *single = config_get(cfg, "log.dir");   /* Kafka's fallback when log.dirs is absent */
    if (!v) {
        key = "log.dir";
        v = single ? single : "/tmp/kafka-logs";
    }
    bc->n_log_dirs = 0;
    for (const char *p = v;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (bc->n_log_dirs == BROKER_MAX_LOG_DIRS) {
            snprintf(err, errlen, "%s: at most %d log dirs", key, BROKER_MAX_LOG_DIRS);
            return -1;
        }
        char *dir = bc->log_dirs[bc->n_log_dirs];
        if (config_copy_trimmed(p, n, dir, BROKER_PATH_MAX) < 0 || !dir[0]) {
            snprintf(err, errlen, "%s: empty or too long path in '%.200s'", key, v);
            return -1;
        }
        bc->n_log_dirs++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

/* log.retention.ms wins over .minutes, which wins over .hours (Kafka's rule). */
static int read_retention(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    long ms, minutes, hours;
    if (get_num(cfg, "log.retention.hours", 168, -1, INT_MAX, &hours, err, errlen) < 0 ||
        get_num(cfg, "log.retention.minutes", -2, -1, INT_MAX, &minutes, err, errlen) < 0 ||
        get_num(cfg, "log.retention.ms", -2, -1, LONG_MAX, &ms, err, errlen) < 0)
        return -1;
    if (ms != -2)
        bc->log_retention_ms = ms;
    else if (minutes != -2)
        bc->log_retention_ms = minutes < 0 ? -1 : (int64_t)minutes * 60000;
    else
        bc->log_retention_ms = hours < 0 ? -1 : (int64_t)hours * 3600000;
    long bytes;
    if (get_num(cfg, "log.retention.bytes", -1, -1, LONG_MAX, &bytes, err, errlen) < 0)
        return -1;
    bc->log_retention_bytes = bytes;
    return 0;
}

static int read_listeners(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    const char *l = config_get(cfg, "listeners");
    if (broker_parse_listener("listeners", l ? l : "PLAINTEXT://:9092", &bc->listener, err, errlen) < 0)
        return -1;
    const char *a = config_get(cfg, "advertised.listeners");
    bc->advertised_set = a != NULL;
    if (!a) {
        bc->advertised = bc->listener;
        return 0;
    }
    if (broker_parse_listener("advertised.listeners", a, &bc->advertised, err, errlen) < 0)
        return -1;
    if (!bc->advertised.host[0] || bc->advertised.port == 0) {
        snprintf(err, errlen, "advertised.listeners needs a host and a port, got '%.200s'", a);
        return -1;
    }
    return 0;
}

static int read_zk(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    const char *zk = config_get(cfg, "zookeeper.connect");
    if (!zk || !*zk) {
        snprintf(err, errlen, "%s: zookeeper.connect is required", cfg->path);
        return -1;
    }
    if (strlen(zk) >= sizeof(bc->zk_connect)) {
        snprintf(err, errlen, "zookeeper.connect is longer than %zu bytes", sizeof(bc->zk_connect) - 1);
        return -1;
    }
    snprintf(bc->zk_connect, sizeof(bc->zk_connect), "%s", zk);
    return coord_parse_connect(zk, bc->zk_chroot, sizeof(bc->zk_chroot), err, errlen);
}

static int read_numbers(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    long seg, max_req;
    if (get_int(cfg, "num.partitions", 1, 1, INT32_MAX, &bc->num_partitions, err, errlen) < 0 ||
        get_int(cfg, "default.replication.factor", 1, 1, INT16_MAX, &bc->default_replication_factor, err,
                errlen) < 0 ||
        get_int(cfg, "min.insync.replicas", 1, 1, INT16_MAX, &bc->min_insync_replicas, err, errlen) < 0 ||
        get_num(cfg, "log.segment.bytes", 1073741824L, 14, INT32_MAX, &seg, err, errlen) < 0 ||
        get_num(cfg, "socket.request.max.bytes", 104857600L, 1, INT32_MAX, &max_req, err, errlen) < 0)
        return -1;
    bc->log_segment_bytes = seg;
    bc->socket_request_max_bytes = (int32_t)max_req;
    if (config_get_bool(cfg, "auto.create.topics.enable", 1, &bc->auto_create_topics) < 0 ||
        config_get_bool(cfg, "unclean.leader.election.enable", 0, &bc->unclean_leader_election) < 0) {
        snprintf(err, errlen, "%s", cfg->error);
        return -1;
    }
    return 0;
}

/* Timing and sizing keys, with Kafka's defaults (log.flush.interval.ms is
 * kipper's background fsync period; Kafka's default leaves it to the OS). */
static int read_log_settings(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    long lag, session, conn, roll_ms, roll_hours, check, flush, max_msg, idx_int, idx_max, expire;
    if (get_num(cfg, "replica.lag.time.max.ms", 30000, 1, LONG_MAX, &lag, err, errlen) < 0 ||
        get_num(cfg, "zookeeper.session.timeout.ms", 18000, 1000, INT_MAX, &session, err, errlen) < 0 ||
        get_num(cfg, "zookeeper.connection.timeout.ms", session, 100, INT_MAX, &conn, err, errlen) < 0 ||
        get_num(cfg, "log.roll.hours", 168, 1, INT_MAX, &roll_hours, err, errlen) < 0 ||
        get_num(cfg, "log.roll.ms", roll_hours * 3600000L, 1, LONG_MAX, &roll_ms, err, errlen) < 0 ||
        get_num(cfg, "log.retention.check.interval.ms", 300000, 1, LONG_MAX, &check, err, errlen) < 0 ||
        get_num(cfg, "log.flush.interval.ms", 5000, 1, LONG_MAX, &flush, err, errlen) < 0 ||
        get_num(cfg, "message.max.bytes", 1048588, 0, INT32_MAX, &max_msg, err, errlen) < 0 ||
        get_num(cfg, "log.index.interval.bytes", 4096, 0, INT32_MAX, &idx_int, err, errlen) < 0 ||
        get_num(cfg, "log.index.size.max.bytes", 10485760, 4, INT32_MAX, &idx_max, err, errlen) < 0 ||
        get_num(cfg, "producer.id.expiration.ms", 86400000, 1, LONG_MAX, &expire, err, errlen) < 0)
        return -1;
    bc->replica_lag_time_max_ms = lag;
    bc->zk_session_timeout_ms = (int)session;
    bc->zk_connection_timeout_ms = (int)conn;
    bc->log_roll_ms = roll_ms;
    bc->log_retention_check_ms = check;
    bc->log_flush_interval_ms = flush;
    bc->message_max_bytes = (int32_t)max_msg;
    bc->log_index_interval_bytes = (int32_t)idx_int;
    bc->log_index_max_bytes = (int32_t)idx_max;
    bc->producer_id_expiration_ms = expire;
    const char *ts = config_get(cfg, "log.message.timestamp.type");
    if (ts && strcmp(ts, "CreateTime") != 0 && strcmp(ts, "LogAppendTime") != 0) {
        snprintf(err, errlen, "log.message.timestamp.type must be CreateTime or LogAppendTime, got '%.100s'", ts);
        return -1;
    }
    bc->log_append_time = ts && strcmp(ts, "LogAppendTime") == 0;
    return 0;
}

/* Replication: Kafka's names and defaults, and two of kipper's own:
 * leader.election.wait.ms (LeaderElectionWaitTime in docs/replication.md:
 * how long a new leader waits for the live replicas before settling its ISR)
 * and controlled.shutdown.timeout.ms (how long a SIGTERM waits for
 * leadership to move; Kafka bounds it by retries of a controller request
 * instead). */
#define RACK_AWARE_SELECTOR "org.apache.kafka.common.replica.RackAwareReplicaSelector"

static int read_replication_settings(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    long wait, min_bytes, max_bytes, resp_max, backoff, election_wait, shutdown_timeout, socket_timeout;
    if (get_num(cfg, "replica.fetch.wait.max.ms", 500, 0, INT32_MAX, &wait, err, errlen) < 0 ||
        get_num(cfg, "replica.socket.timeout.ms", 30000, 1, INT32_MAX, &socket_timeout, err, errlen) < 0 ||
        get_num(cfg, "replica.fetch.min.bytes", 1, 1, INT32_MAX, &min_bytes, err, errlen) < 0 ||
        get_num(cfg, "replica.fetch.max.bytes", 1048576, 0, INT32_MAX, &max_bytes, err, errlen) < 0 ||
        get_num(cfg, "replica.fetch.response.max.bytes", 10485760, 0, INT32_MAX, &resp_max, err, errlen) < 0 ||
        get_num(cfg, "replica.fetch.backoff.ms", 1000, 0, INT32_MAX, &backoff, err, errlen) < 0 ||
        get_num(cfg, "leader.election.wait.ms", 3000, 0, INT32_MAX, &election_wait, err, errlen) < 0 ||
        get_num(cfg, "controlled.shutdown.timeout.ms", 15000, 0, INT32_MAX, &shutdown_timeout, err, errlen) < 0)
        return -1;
    if (wait > bc->replica_lag_time_max_ms) {
        /* A follower waiting that long for data would be dropped from the ISR. */
        snprintf(err, errlen, "replica.fetch.wait.max.ms (%ld) must not be larger than replica.lag.time.max.ms (%lld)",
                 wait, (long long)bc->replica_lag_time_max_ms);
        return -1;
    }
    if (socket_timeout < wait) {
        /* Every long-polled fetch would be taken for a dead connection. */
        snprintf(err, errlen, "replica.socket.timeout.ms (%ld) must not be smaller than replica.fetch.wait.max.ms (%ld)",
                 socket_timeout, wait);
        return -1;
    }
    /* KIP-392: consumers fetch from a replica in their rack. Kafka loads the
     * class named; kipper has the one selector Kafka ships, and refuses any
     * other rather than run without the reads it asks for. */
    const char *selector = config_get(cfg, "replica.selector.class");
    if (selector && *selector && strcmp(selector, RACK_AWARE_SELECTOR) != 0) {
        snprintf(err, errlen, "replica.selector.class=%s: kipper has only %s (or none: the leader serves every fetch)",
                 selector, RACK_AWARE_SELECTOR);
        return -1;
    }
    bc->rack_aware_reads = selector && *selector;
    bc->replica_fetch_wait_max_ms = (int32_t)wait;
    bc->replica_socket_timeout_ms = (int32_t)socket_timeout;
    bc->replica_fetch_min_bytes = (int32_t)min_bytes;
    bc->replica_fetch_max_bytes = (int32_t)max_bytes;
    bc->replica_fetch_response_max_bytes = (int32_t)resp_max;
    bc->replica_fetch_backoff_ms = (int32_t)backoff;
    bc->leader_election_wait_ms = (int32_t)election_wait;
    bc->controlled_shutdown_timeout_ms = (int32_t)shutdown_timeout;
    long interval, pct;
    if (config_get_bool(cfg, "controlled.shutdown.enable", 1, &bc->controlled_shutdown) < 0 ||
        config_get_bool(cfg, "auto.leader.rebalance.enable", 1, &bc->auto_leader_rebalance) < 0) {
        snprintf(err, errlen, "%s", cfg->error);
        return -1;
    }
    if (get_num(cfg, "leader.imbalance.check.interval.seconds", 300, 1, INT32_MAX / 1000, &interval, err, errlen) < 0 ||
        get_num(cfg, "leader.imbalance.per.broker.percentage", 10, 0, 100, &pct, err, errlen) < 0)
        return -1;
    bc->leader_imbalance_check_interval_s = (int32_t)interval;
    bc->leader_imbalance_per_broker_percentage = (int32_t)pct;
    long leader_rate, follower_rate;
    if (get_num(cfg, "leader.replication.throttled.rate", LONG_MAX, 1, LONG_MAX, &leader_rate, err, errlen) < 0 ||
        get_num(cfg, "follower.replication.throttled.rate", LONG_MAX, 1, LONG_MAX, &follower_rate, err, errlen) < 0)
        return -1;
    bc->leader_replication_throttled_rate = leader_rate;
    bc->follower_replication_throttled_rate = follower_rate;
    return 0;
}

/* The group coordinator's keys, with Kafka's defaults, and one of kipper's
 * own: group.max.memory.bytes, what the members of every group may hold
 * together (group.h). A consumer member is typically a few KB (ids, its
 * subscription in one to three protocols, its assignment; Kafka itself keeps
 * a whole group's within message.max.bytes, 1 MiB), so the default of 32 MiB
 * holds some ten thousand members while no client can make the broker hold
 * more. */
static int read_group_settings(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    long min_session, max_session, delay, max_size, md_max, commit_timeout, max_memory;
    if (get_num(cfg, "group.min.session.timeout.ms", 6000, 0, INT32_MAX, &min_session, err, errlen) < 0 ||
        get_num(cfg, "group.max.session.timeout.ms", 1800000, 0, INT32_MAX, &max_session, err, errlen) < 0 ||
        get_num(cfg, "group.initial.rebalance.delay.ms", 3000, 0, INT32_MAX, &delay, err, errlen) < 0 ||
        get_num(cfg, "group.max.size", INT32_MAX, 1, INT32_MAX, &max_size, err, errlen) < 0 ||
        get_num(cfg, "offset.metadata.max.bytes", 4096, 0, INT32_MAX, &md_max, err, errlen) < 0 ||
        get_num(cfg, "offsets.commit.timeout.ms", 5000, 1, INT32_MAX, &commit_timeout, err, errlen) < 0 ||
        get_num(cfg, "group.max.memory.bytes", 32L << 20, 65536, LONG_MAX, &max_memory, err, errlen) < 0)
        return -1;
    if (min_session > max_session) {
        snprintf(err, errlen, "group.min.session.timeout.ms (%ld) is larger than group.max.session.timeout.ms (%ld)",
                 min_session, max_session);
        return -1;
    }
    bc->group_min_session_timeout_ms = (int32_t)min_session;
    bc->group_max_session_timeout_ms = (int32_t)max_session;
    bc->group_initial_rebalance_delay_ms = (int32_t)delay;
    bc->group_max_size = (int32_t)max_size;
    bc->offset_metadata_max_bytes = (int32_t)md_max;
    bc->offsets_commit_timeout_ms = (int32_t)commit_timeout;
    bc->group_max_memory_bytes = max_memory;
    return 0;
}

/* What clients may take: the listener's limits (listener.c says why
 * max.connections has a default of its own; max.connections.per.ip.overrides
 * is not read, the per-address limit applies to every address alike) and
 * queued.max.request.bytes, whose default is socket.request.max.bytes's
 * (Kafka's, -1, is unbounded; -1 is accepted). */
static int read_connection_limits(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    long total, per_ip, queued;
    if (get_num(cfg, "max.connections", 0, 1, INT32_MAX, &total, err, errlen) < 0 ||
        get_num(cfg, "max.connections.per.ip", INT32_MAX, 1, INT32_MAX, &per_ip, err, errlen) < 0 ||
        get_num(cfg, "queued.max.request.bytes", 104857600L, -1, LONG_MAX, &queued, err, errlen) < 0)
        return -1;
    if (queued == 0) {
        snprintf(err, errlen, "queued.max.request.bytes must be -1 (unbounded) or positive, got 0");
        return -1;
    }
    bc->max_connections = (int32_t)total;
    bc->max_connections_per_ip = (int32_t)per_ip;
    bc->queued_max_request_bytes = queued;
    return 0;
}

/* Keeps the text of one Kafka key the file sets (a password's as ""). */
static int keep_static(config_t *cfg, broker_config_t *bc, const coord_config_def_t *d, const char *v, char *err,
                       size_t errlen)
{
    const char *text = d->type == COORD_CFG_PASSWORD ? "" : v;
    size_t len = strlen(text) + 1;
    if (bc->nstatics == BROKER_STATICS_MAX || len > sizeof(bc->static_text) - bc->static_used) {
        snprintf(err, errlen, "%s: the Kafka keys it sets hold more than %zu bytes together (at %s)", cfg->path,
                 sizeof(bc->static_text), d->name);
        return -1;
    }
    bc->statics[bc->nstatics].name = d->name;
    bc->statics[bc->nstatics].at = bc->static_used;
    memcpy(bc->static_text + bc->static_used, text, len);
    bc->static_used += (uint32_t)len;
    bc->nstatics++;
    return 0;
}

/* Appends "key=value" to the list of keys kipper does not act on (a
 * password as [hidden], as Kafka logs it). */
static void note_unacted(const coord_config_def_t *d, const char *v, char *list, size_t cap)
{
    size_t used = strlen(list);
    if (used < cap)
        snprintf(list + used, cap - used, "%s%s=%.200s", used ? ", " : "", d->name,
                 d->type == COORD_CFG_PASSWORD ? "[hidden]" : v);
}

/* Every Kafka broker key the file sets: the keys kipper reads were checked
 * by the readers above with kipper's rules (the throttle rates also with
 * Kafka's here, as before); the others are checked here with Kafka's type and
 * range (coord_config_check never prints a password: only ANY checks them),
 * kept, and named in one info line. 0, or -1 with err. */
static int keep_statics(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    const coord_config_def_t *d;
    char why[512], unacted[2048] = "";
    bc->nstatics = 0;
    bc->static_used = 0;
    for (size_t i = 0; (d = broker_config_def_at(i)) != NULL; i++) {
        const char *v = config_get(cfg, d->name);
        if (!v)
            continue;
        int check = !d->acted_on || strstr(d->name, ".throttled.rate") != NULL;
        if (check && coord_config_check(d, v, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "%s: %s", cfg->path, why);
            return -1;
        }
        if (keep_static(cfg, bc, d, v, err, errlen) < 0)
            return -1;
        if (!d->acted_on)
            note_unacted(d, v, unacted, sizeof(unacted));
    }
    if (unacted[0])
        log_info("%s: accepted, not acted on: %s", cfg->path, unacted);
    return 0;
}

const char *broker_config_static_value(const broker_config_t *bc, const char *name)
{
    for (int i = 0; i < bc->nstatics; i++)
        if (strcmp(bc->statics[i].name, name) == 0)
            return bc->static_text + bc->statics[i].at;
    return NULL;
}

int broker_config_read(config_t *cfg, broker_config_t *bc, char *err, size_t errlen)
{
    memset(bc, 0, sizeof(*bc));
    const char *id = config_get(cfg, "broker.id");
    if (!id) {
        snprintf(err, errlen, "%s: broker.id is required", cfg->path);
        return -1;
    }
    int bid;
    if (get_int(cfg, "broker.id", 0, 0, INT32_MAX, &bid, err, errlen) < 0)
        return -1;
    bc->broker_id = bid;
    const char *rack = config_get(cfg, "broker.rack");
    if (rack && (strlen(rack) == 0 || strlen(rack) >= sizeof(bc->broker_rack))) {
        snprintf(err, errlen, "broker.rack must be 1..%zu characters", sizeof(bc->broker_rack) - 1);
        return -1;
    }
    snprintf(bc->broker_rack, sizeof(bc->broker_rack), "%s", rack ? rack : "");
    if (read_listeners(cfg, bc, err, errlen) < 0 || read_log_dirs(cfg, bc, err, errlen) < 0 ||
        read_zk(cfg, bc, err, errlen) < 0 || read_numbers(cfg, bc, err, errlen) < 0 ||
        read_retention(cfg, bc, err, errlen) < 0 || read_log_settings(cfg, bc, err, errlen) < 0 ||
        read_replication_settings(cfg, bc, err, errlen) < 0 || read_group_settings(cfg, bc, err, errlen) < 0 ||
        read_connection_limits(cfg, bc, err, errlen) < 0)
        return -1;
    if (keep_statics(cfg, bc, err, errlen) < 0)
        return -1;
    config_warn_unknown(cfg);
    return 0;
}

int broker_config_load(broker_config_t *bc, const char *path, char *err, size_t errlen)
{
    config_t cfg;
    if (config_load(&cfg, path) < 0) {
        snprintf(err, errlen, "%s", cfg.error);
        return -1;
    }
    int rc = broker_config_read(&cfg, bc, err, errlen);
    config_free(&cfg);
    return rc;
}
