/* coord_config.c -- the configs kipper lets an operator change, their checks
 * and the changes AlterConfigs and IncrementalAlterConfigs make (see
 * coord_config.h). The checks and messages are Kafka's (ConfigDef, LogConfig,
 * DynamicBrokerConfig, ThrottledReplicaListValidator, ZkAdminManager). */
#define _GNU_SOURCE
#include "coord_config.h"
#include "broker/wire/kafka_errors.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { CHECK_NUMBER, CHECK_BOOLEAN, CHECK_CHOICE, CHECK_CLEANUP_POLICY, CHECK_THROTTLED };

#define LONG_MAX_TEXT "9223372036854775807"
#define WEEK_MS_TEXT "604800000"

/* Topic configs, in name order. cleanup.policy takes only "delete": kipper
 * has no compaction. */
static const coord_config_def_t TOPIC_DEFS[] = {
    {"cleanup.policy", COORD_CFG_LIST, CHECK_CLEANUP_POLICY, 0, NULL, "delete", {"log.cleanup.policy"}},
    {"compression.type", COORD_CFG_STRING, CHECK_CHOICE, 0, "uncompressed, zstd, lz4, snappy, gzip, producer",
     "producer", {"compression.type"}},
    {"follower.replication.throttled.replicas", COORD_CFG_LIST, CHECK_THROTTLED, 0, NULL, "", {NULL}},
    {"leader.replication.throttled.replicas", COORD_CFG_LIST, CHECK_THROTTLED, 0, NULL, "", {NULL}},
    {"max.message.bytes", COORD_CFG_INT, CHECK_NUMBER, 0, NULL, "1048588", {"message.max.bytes"}},
    {"message.timestamp.type", COORD_CFG_STRING, CHECK_CHOICE, 0, "CreateTime, LogAppendTime", "CreateTime",
     {"log.message.timestamp.type"}},
    {"min.insync.replicas", COORD_CFG_INT, CHECK_NUMBER, 1, NULL, "1", {"min.insync.replicas"}},
    {"retention.bytes", COORD_CFG_LONG, CHECK_NUMBER, -1, NULL, "-1", {"log.retention.bytes"}},
    {"retention.ms", COORD_CFG_LONG, CHECK_NUMBER, -1, NULL, WEEK_MS_TEXT,
     {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}},
    {"segment.bytes", COORD_CFG_INT, CHECK_NUMBER, 14, NULL, "1073741824", {"log.segment.bytes"}},
    {"segment.ms", COORD_CFG_LONG, CHECK_NUMBER, 1, NULL, WEEK_MS_TEXT, {"log.roll.ms", "log.roll.hours"}},
    {"unclean.leader.election.enable", COORD_CFG_BOOLEAN, CHECK_BOOLEAN, 0, NULL, "false",
     {"unclean.leader.election.enable"}},
};

/* The broker configs kipper applies on a running broker (Kafka's dynamic
 * ones it acts on), in name order. The throttle rates exist only here, as in
 * Kafka's DynamicConfig.Broker. */
static const coord_config_def_t BROKER_DEFS[] = {
    {"follower.replication.throttled.rate", COORD_CFG_LONG, CHECK_NUMBER, 0, NULL, LONG_MAX_TEXT,
     {"follower.replication.throttled.rate"}},
    {"leader.replication.throttled.rate", COORD_CFG_LONG, CHECK_NUMBER, 0, NULL, LONG_MAX_TEXT,
     {"leader.replication.throttled.rate"}},
    {"log.message.timestamp.type", COORD_CFG_STRING, CHECK_CHOICE, 0, "CreateTime, LogAppendTime", "CreateTime",
     {"log.message.timestamp.type"}},
    {"log.retention.bytes", COORD_CFG_LONG, CHECK_NUMBER, -1, NULL, "-1", {"log.retention.bytes"}},
    {"log.retention.hours", COORD_CFG_INT, CHECK_NUMBER, -1, NULL, "168", {"log.retention.hours"}},
    {"log.retention.minutes", COORD_CFG_INT, CHECK_NUMBER, -1, NULL, NULL,
     {"log.retention.minutes", "log.retention.hours"}},
    {"log.retention.ms", COORD_CFG_LONG, CHECK_NUMBER, -1, NULL, NULL,
     {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}},
    {"log.roll.hours", COORD_CFG_INT, CHECK_NUMBER, 1, NULL, "168", {"log.roll.hours"}},
    {"log.roll.ms", COORD_CFG_LONG, CHECK_NUMBER, 1, NULL, NULL, {"log.roll.ms", "log.roll.hours"}},
    {"log.segment.bytes", COORD_CFG_INT, CHECK_NUMBER, 14, NULL, "1073741824", {"log.segment.bytes"}},
    {"message.max.bytes", COORD_CFG_INT, CHECK_NUMBER, 0, NULL, "1048588", {"message.max.bytes"}},
    {"min.insync.replicas", COORD_CFG_INT, CHECK_NUMBER, 1, NULL, "1", {"min.insync.replicas"}},
    {"unclean.leader.election.enable", COORD_CFG_BOOLEAN, CHECK_BOOLEAN, 0, NULL, "false",
     {"unclean.leader.election.enable"}},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const coord_config_def_t *coord_config_def_at(coord_entity_t type, size_t i)
{
    if (type == COORD_ENTITY_TOPIC)
        return i < COUNT(TOPIC_DEFS) ? &TOPIC_DEFS[i] : NULL;
    return i < COUNT(BROKER_DEFS) ? &BROKER_DEFS[i] : NULL;
}

const coord_config_def_t *coord_config_def(coord_entity_t type, const char *name)
{
    const coord_config_def_t *d;
    for (size_t i = 0; (d = coord_config_def_at(type, i)) != NULL; i++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

/* ---- checking one value ---- */

/* Java's Long.parseLong: an optional sign and decimal digits, in range. */
static int parse_java_long(const char *s, long long *out)
{
    int negative = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return -1;
    unsigned long long v = 0, limit = negative ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (limit - (unsigned long long)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (unsigned long long)(*s - '0');
    }
    if (!negative)
        *out = (long long)v;
    else
        *out = v == limit ? INT64_MIN : -(long long)v;
    return 0;
}

static int one_of(const char *value, const char *choices)
{
    size_t len = strlen(value);
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, ",");
        if (n == len && strncmp(c, value, n) == 0)
            return 1;
        c += n;
        c += strspn(c, ", ");
    }
    return 0;
}

/* Kafka's ConfigException text: "Invalid value V for configuration K: why". */
static int invalid_value(const char *key, const char *value, char *err, size_t errlen, const char *why)
{
    snprintf(err, errlen, "Invalid value %s for configuration %s: %s", value, key, why);
    return -1;
}

static int check_number(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    long long v;
    int is_int = d->type == COORD_CFG_INT;
    if (parse_java_long(value, &v) < 0 || (is_int && (v < INT32_MIN || v > INT32_MAX)))
        return invalid_value(d->name, value, err, errlen,
                             is_int ? "Not a number of type INT" : "Not a number of type LONG");
    if (v < d->min) {
        char why[64];
        snprintf(why, sizeof(why), "Value must be at least %lld", d->min);
        return invalid_value(d->name, value, err, errlen, why);
    }
    return 0;
}

static int check_cleanup_policy(const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "delete") == 0)
        return 0;
    if (strstr(value, "compact"))
        return invalid_value("cleanup.policy", value, err, errlen,
                             "compacted topics are not supported by kipper (only delete)");
    return invalid_value("cleanup.policy", value, err, errlen, "String must be one of: compact, delete");
}

/* One "partition:broker" entry of a throttled-replica list, spaces around it
 * allowed; an empty entry too (Kafka's pattern "([0-9]+:[0-9]+)?"). On
 * success the partition and broker are set, both -1 for an empty entry. */
static int parse_replica_entry(const char *s, size_t n, long long *partition, long long *broker)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    *partition = *broker = -1;
    if (n == 0)
        return 0;
    long long *into = partition;
    int digits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ':' && into == partition && digits > 0) {
            into = broker;
            digits = 0;
            *broker = 0;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || digits >= 10)
            return -1;
        *into = (digits++ ? *into * 10 : 0) + (s[i] - '0');
    }
    return into == broker && digits > 0 ? 0 : -1;
}

static int is_wildcard(const char *value)
{
    size_t skip = strspn(value, " \t");
    return value[skip] == '*' && value[skip + 1 + strspn(value + skip + 1, " \t")] == 0;
}

static int check_throttled(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    if (is_wildcard(value))
        return 0;
    for (const char *p = value;;) {
        size_t n = strcspn(p, ",");
        long long part, broker;
        if (parse_replica_entry(p, n, &part, &broker) < 0) {
            char why[256];
            snprintf(why, sizeof(why),
                     "%s must be the literal '*' or a list of replicas in the following format: "
                     "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
                     d->name);
            return invalid_value(d->name, value, err, errlen, why);
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

int coord_config_check(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= sizeof(((coord_config_entry_t *)0)->value))
        return invalid_value(d->name, "(too long)", err, errlen, "longer than 1023 bytes");
    switch (d->check) {
    case CHECK_NUMBER:
        return check_number(d, value, err, errlen);
    case CHECK_BOOLEAN:
        if (strcasecmp(value, "true") == 0 || strcasecmp(value, "false") == 0)
            return 0;
        return invalid_value(d->name, value, err, errlen, "Expected value to be either true or false");
    case CHECK_CHOICE: {
        if (one_of(value, d->choices))
            return 0;
        char why[128];
        snprintf(why, sizeof(why), "String must be one of: %s", d->choices);
        return invalid_value(d->name, value, err, errlen, why);
    }
    case CHECK_CLEANUP_POLICY:
        return check_cleanup_policy(value, err, errlen);
    default:
        return check_throttled(d, value, err, errlen);
    }
}

int coord_config_valid(coord_entity_t type, const char *key, const char *value, char *err, size_t errlen)
{
    const coord_config_def_t *d = coord_config_def(type, key);
    if (d)
        return coord_config_check(d, value, err, errlen);
    if (type == COORD_ENTITY_TOPIC)
        snprintf(err, errlen, "Unknown topic config name: %s", key);
    else
        snprintf(err, errlen, "Cannot update these configs dynamically: Set(%s)", key);
    return -1;
}

void coord_config_normalize(coord_entity_t type, coord_config_entry_t *entries, int n)
{
    for (int i = 0; i < n; i++) {
        const coord_config_def_t *d = coord_config_def(type, entries[i].key);
        if (d && d->type == COORD_CFG_BOOLEAN)
            for (char *c = entries[i].value; *c; c++)
                *c = (char)tolower((unsigned char)*c);
    }
}

int coord_throttled_replica(const char *value, int32_t partition, int32_t broker)
{
    if (!value)
        return 0;
    if (is_wildcard(value))
        return 1;
    for (const char *p = value;;) {
        size_t n = strcspn(p, ",");
        long long part, id;
        if (parse_replica_entry(p, n, &part, &id) == 0 && part == partition && id == broker)
            return 1;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

/* ---- applying a request's changes ---- */

static int fail(int16_t *error, int16_t code, char *err, size_t errlen, const char *fmt, const char *arg)
{
    *error = code;
    snprintf(err, errlen, fmt, arg);
    return -1;
}

static int find_entry(const coord_config_entry_t *e, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].key, key) == 0)
            return i;
    return -1;
}

static void remove_entry(coord_config_entry_t *e, int *n, int i)
{
    memmove(&e[i], &e[i + 1], sizeof(*e) * (size_t)(*n - i - 1));
    (*n)--;
}

static int set_entry(coord_config_entry_t *e, int *n, const char *key, const char *value)
{
    int i = find_entry(e, *n, key);
    if (i < 0) {
        if (*n == COORD_MAX_TOPIC_CONFIGS)
            return -1;
        i = (*n)++;
        snprintf(e[i].key, sizeof(e[i].key), "%s", key);
    }
    snprintf(e[i].value, sizeof(e[i].value), "%s", value);
    return 0;
}

/* Whether item (len bytes) is one of list's comma-separated items. */
static int list_has(const char *list, const char *item, size_t len)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, item, len) == 0)
            return 1;
        p += n + (p[n] ? 1 : 0);
    }
    return 0;
}

/* Kafka's APPEND (items of add not in the list yet, at the end) and SUBTRACT
 * (every item of add taken out), on comma-separated lists. -1 when the
 * result does not fit in cap bytes. */
static int list_edit(const char *list, const char *add, int subtract, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *src = pass == 0 ? list : add;
        if (pass == 1 && subtract)
            break;
        for (const char *p = src; *p;) {
            size_t n = strcspn(p, ",");
            int keep = pass == 0 ? !(subtract && list_has(add, p, n)) : !list_has(out, p, n);
            if (n > 0 && keep) {
                if (used + n + 2 > cap)
                    return -1;
                used += (size_t)snprintf(out + used, cap - used, "%s%.*s", used ? "," : "", (int)n, p);
            }
            p += n + (p[n] ? 1 : 0);
        }
    }
    return 0;
}

/* APPEND or SUBTRACT: lists only; an absent value is the default. */
static int apply_list_op(coord_entity_t type, coord_config_entry_t *cur, int *n, const coord_config_op_t *op,
                         int16_t *error, char *err, size_t errlen)
{
    const coord_config_def_t *d = coord_config_def(type, op->key);
    const char *verb = op->op == COORD_CFG_APPEND ? "append" : "subtract";
    char fmt[96];
    snprintf(fmt, sizeof(fmt), "Config value %s is not allowed for config key: %%s", verb);
    if (!d || d->type != COORD_CFG_LIST)
        return fail(error, KERR_INVALID_CONFIG, err, errlen, fmt, op->key);
    int i = find_entry(cur, *n, op->key);
    const char *old = i >= 0 ? cur[i].value : (d->dflt ? d->dflt : "");
    char merged[sizeof(cur[0].value)];
    if (list_edit(old, op->value, op->op == COORD_CFG_SUBTRACT, merged, sizeof(merged)) < 0 ||
        set_entry(cur, n, op->key, merged) < 0)
        return fail(error, KERR_INVALID_CONFIG, err, errlen, "The value of %s would be too long", op->key);
    return 0;
}

static int apply_op(coord_entity_t type, coord_config_entry_t *cur, int *n, const coord_config_op_t *op,
                    int16_t *error, char *err, size_t errlen)
{
    if (op->op == COORD_CFG_DELETE) {
        int i = find_entry(cur, *n, op->key);
        if (i >= 0)
            remove_entry(cur, n, i);
        return 0;
    }
    if (op->null_value)
        return fail(error, KERR_INVALID_REQUEST, err, errlen, "Null value not supported for : %s", op->key);
    if (op->op == COORD_CFG_APPEND || op->op == COORD_CFG_SUBTRACT)
        return apply_list_op(type, cur, n, op, error, err, errlen);
    if (set_entry(cur, n, op->key, op->value) < 0)
        return fail(error, KERR_INVALID_CONFIG, err, errlen, "More than 64 configs, with %s", op->key);
    return 0;
}

/* The request as a whole: known operations, no key twice (Kafka's "Error due
 * to duplicate config keys"). */
static int check_ops(const coord_config_op_t *ops, int nops, int16_t *error, char *err, size_t errlen)
{
    char opname[16];
    for (int i = 0; i < nops; i++) {
        if (ops[i].op < COORD_CFG_SET || ops[i].op > COORD_CFG_SUBTRACT) {
            snprintf(opname, sizeof(opname), "%d", ops[i].op);
            return fail(error, KERR_INVALID_REQUEST, err, errlen, "Unknown config operation %s", opname);
        }
        for (int j = 0; j < i; j++)
            if (strcmp(ops[i].key, ops[j].key) == 0)
                return fail(error, KERR_INVALID_REQUEST, err, errlen, "Error due to duplicate config keys%s", "");
    }
    return 0;
}

int coord_config_apply(coord_entity_t type, coord_config_entry_t *cur, int *n, const coord_config_op_t *ops, int nops,
                       int replace, int16_t *error, char *err, size_t errlen)
{
    *error = KERR_NONE;
    err[0] = 0;
    if (check_ops(ops, nops, error, err, errlen) < 0)
        return -1;
    if (replace) {
        for (int i = 0; i < nops; i++)
            if (ops[i].null_value)
                return fail(error, KERR_INVALID_REQUEST, err, errlen, "Null value not supported for : %s",
                            ops[i].key);
        *n = 0;
    }
    for (int i = 0; i < nops; i++)
        if (apply_op(type, cur, n, &ops[i], error, err, errlen) < 0)
            return -1;
    /* What the request set is checked; names it left alone stay as they are
     * (a key kipper does not know, written by another tool, does not block
     * changing the others). */
    for (int i = 0; i < nops; i++) {
        int k = find_entry(cur, *n, ops[i].key);
        if (k >= 0 && coord_config_valid(type, cur[k].key, cur[k].value, err, errlen) < 0) {
            *error = KERR_INVALID_CONFIG;
            return -1;
        }
    }
    return 0;
}
