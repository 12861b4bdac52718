/* coord_config.c -- the checks of the configs an operator may change (the
 * table is coord_config_defs.c) and the changes AlterConfigs and
 * IncrementalAlterConfigs make (see coord_config.h). The checks and messages
 * are Kafka's (ConfigDef, LogConfig, DynamicBrokerConfig,
 * ThrottledReplicaListValidator, MetadataVersionValidator, the compression
 * level validators, ZkAdminManager). */
#define _GNU_SOURCE
#include "coord_config.h"
#include "broker/wire/kafka_errors.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* Whether the len bytes at item are one of choices (", "-separated). */
static int one_of(const char *item, size_t len, const char *choices)
{
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, ",");
        if (n == len && strncmp(c, item, n) == 0)
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

static int out_of_range(const coord_config_def_t *d, const char *value, int below, char *err, size_t errlen)
{
    char why[64];
    if (below)
        snprintf(why, sizeof(why), "Value must be at least %lld", d->min);
    else
        snprintf(why, sizeof(why), "Value must be no more than %lld", d->max);
    return invalid_value(d->name, value, err, errlen, why);
}

static int check_number(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    long long v;
    long long lo = d->type == COORD_CFG_SHORT ? INT16_MIN : d->type == COORD_CFG_INT ? INT32_MIN : INT64_MIN;
    long long hi = d->type == COORD_CFG_SHORT ? INT16_MAX : d->type == COORD_CFG_INT ? INT32_MAX : INT64_MAX;
    if (parse_java_long(value, &v) < 0 || v < lo || v > hi)
        return invalid_value(d->name, value, err, errlen,
                             d->type == COORD_CFG_SHORT ? "Not a number of type SHORT"
                             : d->type == COORD_CFG_INT ? "Not a number of type INT"
                                                        : "Not a number of type LONG");
    if (v < d->min || v > d->max)
        return out_of_range(d, value, v < d->min, err, errlen);
    return 0;
}

/* Java's Double.parseDouble in its decimal forms (Kafka trims the value
 * first). NaN and the infinities are refused here; Kafka's range check lets
 * NaN through, and no use of these configs wants it. */
static int check_double(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    const char *s = value + strspn(value, " \t");
    char *end = NULL;
    double v = strchr(s, 'x') || strchr(s, 'X') ? NAN : strtod(s, &end);
    if (isnan(v) || isinf(v) || end == s || end[strspn(end, " \t")] != 0)
        return invalid_value(d->name, value, err, errlen, "Not a number of type DOUBLE");
    int above = d->max != COORD_CFG_NO_MAX && v > (double)d->max;
    if (v < (double)d->min || above)
        return out_of_range(d, value, !above, err, errlen);
    return 0;
}

/* Java's class names: dot-separated identifiers ('$' for nested classes).
 * Kafka loads the class and refuses one it cannot find; kipper runs no Java,
 * so it checks the form only. */
static int check_class(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    const char *s = value + strspn(value, " \t");
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    int at_start = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.' && !at_start) {
            at_start = 1;
            continue;
        }
        if (!(isalpha(c) || c == '_' || c == '$' || (!at_start && isdigit(c)))) {
            at_start = -1;
            break;
        }
        at_start = 0;
    }
    if (n == 0 || at_start != 0) {
        char why[320];
        snprintf(why, sizeof(why), "Class %.250s could not be found (not a Java class name)", value);
        return invalid_value(d->name, value, err, errlen, why);
    }
    return 0;
}

/* Kafka's gzip level: from min to max, or -1 (Deflater's default). */
static int check_gzip_level(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    long long v;
    if (parse_java_long(value, &v) < 0 || v < INT32_MIN || v > INT32_MAX)
        return invalid_value(d->name, value, err, errlen, "Not a number of type INT");
    if ((v < d->min || v > d->max) && v != -1) {
        char why[80];
        snprintf(why, sizeof(why), "Value must be between %lld and %lld or equal to -1", d->min, d->max);
        return invalid_value(d->name, value, err, errlen, why);
    }
    return 0;
}

/* Kafka 3.x's versions (MetadataVersion up to 3.9's last production one):
 * each release, and each inter-broker protocol version of it. */
static const char KAFKA_VERSIONS[] =
    "0.8.0, 0.8.1, 0.8.2, 0.9.0, 0.10.0-IV0, 0.10.0-IV1, 0.10.1-IV0, 0.10.1-IV1, 0.10.1-IV2, 0.10.2-IV0, "
    "0.11.0-IV0, 0.11.0-IV1, 0.11.0-IV2, 1.0-IV0, 1.1-IV0, 2.0-IV0, 2.0-IV1, 2.1-IV0, 2.1-IV1, 2.1-IV2, 2.2-IV0, "
    "2.2-IV1, 2.3-IV0, 2.3-IV1, 2.4-IV0, 2.4-IV1, 2.5-IV0, 2.6-IV0, 2.7-IV0, 2.7-IV1, 2.7-IV2, 2.8-IV0, 2.8-IV1, "
    "3.0-IV0, 3.0-IV1, 3.1-IV0, 3.2-IV0, 3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, "
    "3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0";

/* MetadataVersion.fromVersionString: the first three dot-separated parts of
 * a 0.x version, the first two of a later one ("2.8.1" is 2.8), must name a
 * release ("2.8") or one of its protocol versions ("2.8-IV1"). */
static int check_version(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    size_t len = 0;
    for (int dots = 0, keep = strncmp(value, "0.", 2) == 0 ? 3 : 2; value[len]; len++)
        if (value[len] == '.' && ++dots == keep)
            break;
    for (const char *c = KAFKA_VERSIONS; *c;) {
        size_t n = strcspn(c, ","), release = strcspn(c, ",-");
        if (len > 0 && ((n == len && strncmp(c, value, n) == 0) || (release == len && strncmp(c, value, len) == 0)))
            return 0;
        c += n;
        c += strspn(c, ", ");
    }
    char why[300];
    snprintf(why, sizeof(why), "Version %.250s is not a valid version", value);
    return invalid_value(d->name, value, err, errlen, why);
}

/* Kafka's LIST with ValidList.in(choices) (cleanup.policy, process.roles):
 * comma-separated, each item trimmed and one of the choices (an empty list
 * is valid). */
static int check_choice_list(const coord_config_def_t *d, const char *value, char *err, size_t errlen)
{
    for (const char *p = value + strspn(value, " \t"); *p;) {
        size_t n = strcspn(p, ","), len = n;
        while (len > 0 && isspace((unsigned char)p[len - 1]))
            len--;
        if (!one_of(p, len, d->choices)) {
            char item[256], why[128];
            snprintf(item, sizeof(item), "%.*s", (int)(len < 250 ? len : 250), p);
            snprintf(why, sizeof(why), "String must be one of: %s", d->choices);
            return invalid_value(d->name, item, err, errlen, why);
        }
        p += n + (p[n] ? 1 : 0);
        p += strspn(p, " \t");
    }
    return 0;
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
    case COORD_CHECK_NUMBER:
        return check_number(d, value, err, errlen);
    case COORD_CHECK_DOUBLE:
        return check_double(d, value, err, errlen);
    case COORD_CHECK_BOOLEAN:
        if (strcasecmp(value, "true") == 0 || strcasecmp(value, "false") == 0)
            return 0;
        return invalid_value(d->name, value, err, errlen, "Expected value to be either true or false");
    case COORD_CHECK_CHOICE: {
        if (one_of(value, strlen(value), d->choices))
            return 0;
        char why[128];
        snprintf(why, sizeof(why), "String must be one of: %s", d->choices);
        return invalid_value(d->name, value, err, errlen, why);
    }
    case COORD_CHECK_CHOICE_LIST:
        return check_choice_list(d, value, err, errlen);
    case COORD_CHECK_GZIP_LEVEL:
        return check_gzip_level(d, value, err, errlen);
    case COORD_CHECK_VERSION:
        return check_version(d, value, err, errlen);
    case COORD_CHECK_ANY:
        return 0;
    case COORD_CHECK_CLASS:
        return check_class(d, value, err, errlen);
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

/* A LONG of the set (known valid), or its default. */
static long long set_long(coord_entity_t type, const coord_config_entry_t *e, int n, const char *key)
{
    const char *v = coord_config_def(type, key)->dflt;
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].key, key) == 0)
            v = e[i].value;
    long long x = 0;
    parse_java_long(v, &x);
    return x;
}

int coord_config_check_set(coord_entity_t type, const coord_config_entry_t *entries, int n, char *err, size_t errlen)
{
    if (type != COORD_ENTITY_TOPIC)
        return 0;
    /* LogConfig.validateValues */
    long long min_lag = set_long(type, entries, n, "min.compaction.lag.ms");
    long long max_lag = set_long(type, entries, n, "max.compaction.lag.ms");
    if (min_lag > max_lag) {
        snprintf(err, errlen, "conflict topic config setting min.compaction.lag.ms (%lld) > max.compaction.lag.ms (%lld)",
                 min_lag, max_lag);
        return -1;
    }
    return 0;
}

void coord_config_note_unacted(coord_entity_t type, const char *key, char *list, size_t cap)
{
    const coord_config_def_t *d = coord_config_def(type, key);
    size_t used = strlen(list);
    if (d && !d->acted_on && used < cap)
        snprintf(list + used, cap - used, "%s%s", used ? ", " : "", key);
}

int coord_cleanup_deletes(const char *value)
{
    if (!value)
        return 1;
    for (const char *p = value;;) {
        p += strspn(p, " \t");
        size_t n = strcspn(p, ","), len = n;
        while (len > 0 && isspace((unsigned char)p[len - 1]))
            len--;
        if (len == 6 && strncmp(p, "delete", 6) == 0)
            return 1;
        if (!p[n])
            return 0;
        p += n + 1;
    }
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

/* The request as a whole: known operations, and in IncrementalAlterConfigs
 * no key twice (Kafka's "Error due to duplicate config keys"). AlterConfigs
 * takes a key twice, the last value winning, as Kafka reads that request
 * into a Properties (librdkafka's test 0092 sends one so). */
static int check_ops(const coord_config_op_t *ops, int nops, int replace, int16_t *error, char *err, size_t errlen)
{
    char opname[16];
    for (int i = 0; i < nops; i++) {
        if (ops[i].op < COORD_CFG_SET || ops[i].op > COORD_CFG_SUBTRACT) {
            snprintf(opname, sizeof(opname), "%d", ops[i].op);
            return fail(error, KERR_INVALID_REQUEST, err, errlen, "Unknown config operation %s", opname);
        }
        for (int j = 0; j < i && !replace; j++)
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
    if (check_ops(ops, nops, replace, error, err, errlen) < 0)
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
    if (nops > 0 && coord_config_check_set(type, cur, *n, err, errlen) < 0) {
        *error = KERR_INVALID_CONFIG;
        return -1;
    }
    return 0;
}
