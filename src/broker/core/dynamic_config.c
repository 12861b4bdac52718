/* dynamic_config.c -- configs changed on a running cluster (see
 * dynamic_config.h): /config/topics/[topic] and /config/brokers/{<default>,
 * [our id]} read with watches; a change reaches every replica's log config at
 * once and b->cfg's dynamic settings are recomputed. */
#define _GNU_SOURCE
#include "dynamic_config.h"
#include "cluster.h"
#include "replica.h"
#include "broker/coord/coord_config.h"
#include "base/alloc.h"
#include "base/logging.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    coord_config_entry_t *entries;   /* malloc'd, checked, booleans in lower case */
    int n;
} level_t;

struct dynamic_config {
    broker_config_t statics;    /* b->cfg as server.properties made it */
    level_t levels[2];          /* DYNAMIC_BROKER (ours), DYNAMIC_DEFAULT */
};

int dynamic_config_start(broker_t *b)
{
    b->dyn = calloc(1, sizeof(*b->dyn));
    if (!b->dyn)
        return -1;
    b->dyn->statics = b->cfg;
    return 0;
}

void dynamic_config_stop(broker_t *b)
{
    if (!b->dyn)
        return;
    free(b->dyn->levels[0].entries);
    free(b->dyn->levels[1].entries);
    free(b->dyn);
    b->dyn = NULL;
}

const broker_config_t *dynamic_config_static(const broker_t *b)
{
    return &b->dyn->statics;
}

static const char *level_value(const level_t *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->entries[i].key, name) == 0)
            return l->entries[i].value;
    return NULL;
}

const char *dynamic_config_value(const broker_t *b, int level, const char *name)
{
    return level_value(&b->dyn->levels[level], name);
}

int dynamic_config_entries(const broker_t *b, int level, const coord_config_entry_t **entries)
{
    *entries = b->dyn->levels[level].entries;
    return b->dyn->levels[level].n;
}

/* ---- the broker's settings: server.properties under the coordinator's ---- */

/* Kafka's merged properties: ours over the default over server.properties. */
static const char *merged(const broker_t *b, const char *name)
{
    const char *v = dynamic_config_value(b, DYNAMIC_BROKER, name);
    if (!v)
        v = dynamic_config_value(b, DYNAMIC_DEFAULT, name);
    return v ? v : broker_config_static_value(&b->dyn->statics, name);
}

static int dynamic_set(const broker_t *b, const char *name)
{
    return dynamic_config_value(b, DYNAMIC_BROKER, name) || dynamic_config_value(b, DYNAMIC_DEFAULT, name);
}

static int64_t number(const char *v)
{
    return strtoll(v, NULL, 10);   /* checked when read */
}

/* A setting with several names, the first found winning (log.retention.ms
 * over .minutes over .hours), each a multiple of milliseconds; a negative
 * value means forever. Unchanged from server.properties unless one of the
 * names is set dynamically; then Kafka's rule over the merged properties,
 * so a static log.retention.ms still beats a dynamic log.retention.hours. */
static int64_t millis(const broker_t *b, const char *const *names, const int64_t *unit, int n, int64_t statics)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= dynamic_set(b, names[i]);
    if (!any)
        return statics;
    for (int i = 0; i < n; i++) {
        const char *v = merged(b, names[i]);
        if (v)
            return number(v) < 0 ? -1 : number(v) * unit[i];
    }
    return statics;
}

static int64_t single(const broker_t *b, const char *name, int64_t statics)
{
    const char *v = dynamic_set(b, name) ? merged(b, name) : NULL;
    return v ? number(v) : statics;
}

static int flag(const broker_t *b, const char *name, int statics, const char *yes)
{
    const char *v = dynamic_set(b, name) ? merged(b, name) : NULL;
    return v ? strcasecmp(v, yes) == 0 : statics;
}

/* Field by field: a helper thread reads other fields of b->cfg (admin.c). */
static void recompute(broker_t *b)
{
    const broker_config_t *s = &b->dyn->statics;
    broker_config_t *c = &b->cfg;
    static const char *const retention[] = {"log.retention.ms", "log.retention.minutes", "log.retention.hours"};
    static const int64_t retention_unit[] = {1, 60000, 3600000};
    static const char *const roll[] = {"log.roll.ms", "log.roll.hours"};
    static const int64_t roll_unit[] = {1, 3600000};
    c->log_retention_ms = millis(b, retention, retention_unit, 3, s->log_retention_ms);
    c->log_roll_ms = millis(b, roll, roll_unit, 2, s->log_roll_ms);
    c->log_retention_bytes = single(b, "log.retention.bytes", s->log_retention_bytes);
    c->log_segment_bytes = single(b, "log.segment.bytes", s->log_segment_bytes);
    c->message_max_bytes = (int32_t)single(b, "message.max.bytes", s->message_max_bytes);
    c->min_insync_replicas = (int)single(b, "min.insync.replicas", s->min_insync_replicas);
    c->unclean_leader_election = flag(b, "unclean.leader.election.enable", s->unclean_leader_election, "true");
    c->log_append_time = flag(b, "log.message.timestamp.type", s->log_append_time, "LogAppendTime");
    c->leader_replication_throttled_rate =
        single(b, "leader.replication.throttled.rate", s->leader_replication_throttled_rate);
    c->follower_replication_throttled_rate =
        single(b, "follower.replication.throttled.rate", s->follower_replication_throttled_rate);
}

static void apply_topic(broker_t *b, topic_t *t)
{
    for (int k = 0; k < t->nparts; k++)
        if (t->parts[k] && t->parts[k]->replica)
            replica_apply_config(b, t->parts[k]->replica);
}

static void apply_all(broker_t *b)
{
    recompute(b);
    for (int i = 0; i < b->ntopics; i++)
        apply_topic(b, b->topics[i]);
}

/* ---- reading config nodes ---- */

/* The entries of a config document worth keeping: each checked (a value
 * written by hand that kipper would not accept is left out, with a line).
 * NULL with *n = 0 when there are none. */
static coord_config_entry_t *load_entries(coord_entity_t type, const char *path, const coord_result_t *res, int *n)
{
    char err[300];
    coord_config_entry_t *all = xmalloc(sizeof(*all) * COORD_MAX_TOPIC_CONFIGS);
    int count = 0, kept = 0;
    *n = 0;
    if (coord_entity_config_parse(res->data, (size_t)res->len, all, &count, err, sizeof(err)) < 0) {
        log_warn("%s: %s; its configs are ignored", path, err);
        count = 0;
    }
    for (int i = 0; i < count; i++) {
        if (coord_config_valid(type, all[i].key, all[i].value, err, sizeof(err)) < 0) {
            log_warn("%s: %s; ignored", path, err);
            continue;
        }
        all[kept++] = all[i];
    }
    coord_config_normalize(type, all, kept);
    if (kept == 0) {
        free(all);
        return NULL;
    }
    *n = kept;
    return xrealloc(all, sizeof(*all) * (size_t)kept);
}

static void describe_entries(const coord_config_entry_t *e, int n, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s=%s", i ? "," : "", e[i].key, e[i].value);
}

typedef struct {
    broker_t *b;
    coord_entity_t type;
    char name[COORD_TOPIC_NAME_MAX + 1];   /* topic, or for brokers the node's name */
    int level;                             /* brokers: DYNAMIC_BROKER or DYNAMIC_DEFAULT */
} node_read_t;

static void read_node(broker_t *b, node_read_t *nr);

static void node_path(const node_read_t *nr, char *path, size_t n)
{
    if (nr->type == COORD_ENTITY_TOPIC)
        coord_path_topic_config(path, n, nr->name);
    else
        coord_path_broker_config(path, n, nr->name);
}

static void topic_node_read(broker_t *b, const node_read_t *nr, const coord_result_t *res, const char *path)
{
    topic_t *t = cluster_topic(b, nr->name);
    if (!t)
        return;
    int first = t->config_state == TOPIC_CONFIG_UNREAD;
    free(t->overrides);
    t->overrides = NULL;
    t->noverrides = 0;
    t->config_state = res->rc == ZOK ? TOPIC_CONFIG_PRESENT : TOPIC_CONFIG_ABSENT;
    if (res->rc == ZOK)
        t->overrides = load_entries(COORD_ENTITY_TOPIC, path, res, &t->noverrides);
    char text[1024];
    describe_entries(t->overrides, t->noverrides, text, sizeof(text));
    if (!first)
        log_info("topic %s: configs now {%s}", t->name, text);
    apply_topic(b, t);
    if (first)   /* replicas waited for this before opening */
        for (int k = 0; k < t->nparts; k++)
            if (t->parts[k])
                replica_reconcile(b, t->parts[k]);
}

static void broker_node_read(broker_t *b, const node_read_t *nr, const coord_result_t *res, const char *path)
{
    level_t *l = &b->dyn->levels[nr->level];
    free(l->entries);
    l->entries = NULL;
    l->n = 0;
    if (res->rc == ZOK)
        l->entries = load_entries(COORD_ENTITY_BROKER, path, res, &l->n);
    char text[1024];
    describe_entries(l->entries, l->n, text, sizeof(text));
    log_info("%s: dynamic broker configs {%s}", path, text);
    apply_all(b);
}

static void node_exists(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    node_read_t *nr = arg;
    if (res->rc == ZOK)   /* created between our get and this exists */
        read_node(nr->b, nr);
    else
        free(nr);
}

static void node_read(coord_t *co, const coord_result_t *res, void *arg)
{
    node_read_t *nr = arg;
    broker_t *b = nr->b;
    char path[COORD_TOPIC_NAME_MAX + 64];
    node_path(nr, path, sizeof(path));
    if (res->rc != ZOK && res->rc != ZNONODE) {
        if (res->rc != ZCLOSING)
            log_warn("cannot read %s: %s", path, zerror(res->rc));
        free(nr);
        return;
    }
    if (nr->type == COORD_ENTITY_TOPIC)
        topic_node_read(b, nr, res, path);
    else if (b->dyn)
        broker_node_read(b, nr, res, path);
    /* getData leaves no watch on a missing node; exists does. */
    if (res->rc == ZNONODE && coord_exists(co, path, 1, node_exists, nr) == 0)
        return;
    free(nr);
}

/* Reads (and watches) the node nr names; nr is the read's. */
static void read_node(broker_t *b, node_read_t *nr)
{
    char path[COORD_TOPIC_NAME_MAX + 64];
    node_path(nr, path, sizeof(path));
    if (!b->coord || coord_get(b->coord, path, 1, node_read, nr) < 0)
        free(nr);
}

static node_read_t *new_read(broker_t *b, coord_entity_t type, const char *name, int level)
{
    node_read_t *nr = xcalloc(1, sizeof(*nr));
    nr->b = b;
    nr->type = type;
    nr->level = level;
    snprintf(nr->name, sizeof(nr->name), "%s", name);
    return nr;
}

static void read_broker_nodes(broker_t *b)
{
    char id[16];
    snprintf(id, sizeof(id), "%d", (int)b->cfg.broker_id);
    read_node(b, new_read(b, COORD_ENTITY_BROKER, COORD_CONFIG_DEFAULT, DYNAMIC_DEFAULT));
    read_node(b, new_read(b, COORD_ENTITY_BROKER, id, DYNAMIC_BROKER));
}

void dynamic_config_read_topic(broker_t *b, topic_t *t)
{
    read_node(b, new_read(b, COORD_ENTITY_TOPIC, t->name, 0));
}

void dynamic_config_read_all(broker_t *b)
{
    read_broker_nodes(b);
    for (int i = 0; i < b->ntopics; i++)
        dynamic_config_read_topic(b, b->topics[i]);
}

void dynamic_config_topic_doc_changed(broker_t *b, topic_t *t)
{
    coord_config_normalize(COORD_ENTITY_TOPIC, t->doc.configs, t->doc.nconfigs);
    if (t->config_state == TOPIC_CONFIG_ABSENT)
        apply_topic(b, t);
}

int dynamic_config_event(broker_t *b, int type, const char *path)
{
    static const char topics[] = COORD_CONFIG_TOPICS "/", brokers[] = COORD_CONFIG_BROKERS "/";
    (void)type;
    if (strncmp(path, topics, sizeof(topics) - 1) == 0) {
        topic_t *t = cluster_topic(b, path + sizeof(topics) - 1);
        if (t)
            dynamic_config_read_topic(b, t);
        return 1;
    }
    if (strncmp(path, brokers, sizeof(brokers) - 1) != 0)
        return 0;
    const char *name = path + sizeof(brokers) - 1;
    char id[16];
    snprintf(id, sizeof(id), "%d", (int)b->cfg.broker_id);
    if (strcmp(name, COORD_CONFIG_DEFAULT) == 0)
        read_node(b, new_read(b, COORD_ENTITY_BROKER, name, DYNAMIC_DEFAULT));
    else if (strcmp(name, id) == 0)
        read_node(b, new_read(b, COORD_ENTITY_BROKER, name, DYNAMIC_BROKER));
    return 1;
}

/* ---- the throttle's settings ---- */

int config_replica_throttled(const topic_t *t, int side, int32_t partition, int32_t broker)
{
    const char *key = side == THROTTLE_FOLLOWER ? "follower.replication.throttled.replicas"
                                                : "leader.replication.throttled.replicas";
    return coord_throttled_replica(topic_config(t, key), partition, broker);
}
