/* console_args.c -- the command lines of `kipper console-producer` and
 * `kipper console-consumer` (console.h): the options of Kafka 3.x's
 * kafka-console-producer.sh and kafka-console-consumer.sh that work without
 * a group, with the --property names of LineMessageReader and
 * DefaultMessageFormatter and the checks their configure() makes. */
#define _GNU_SOURCE
#include "cli_args.h"
#include "console.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int bad(char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return -1;
}

/* "true" or "false" (any case), as Kafka's property parsing. */
static int parse_bool(const char *name, const char *v, int *out, char *err, size_t errlen)
{
    if (strcasecmp(v, "true") != 0 && strcasecmp(v, "false") != 0)
        return bad(err, errlen, "property %s must be true or false", name);
    *out = strcasecmp(v, "true") == 0;
    return 0;
}

/* A --property's "name=value": the name into name[namelen], *value after
 * the first '='. */
static int split_property(const char *arg, char *name, size_t namelen, const char **value, char *err,
                          size_t errlen)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= namelen)
        return bad(err, errlen, "a property must be NAME=VALUE, got '%s'", arg);
    snprintf(name, namelen, "%.*s", (int)(eq - arg), arg);
    *value = eq + 1;
    return 0;
}

/* A text property (a separator, a marker) into dst; empty only when
 * may_be_empty. */
static int set_text(const char *name, char *dst, const char *v, int may_be_empty, char *err, size_t errlen)
{
    if ((!*v && !may_be_empty) || strlen(v) >= CONSOLE_SEPARATOR_MAX) {
        snprintf(err, errlen, "property %s must be %d to %d bytes, got '%s'", name, !may_be_empty,
                 CONSOLE_SEPARATOR_MAX - 1, v);
        return -1;
    }
    snprintf(dst, CONSOLE_SEPARATOR_MAX, "%s", v);
    return 0;
}

static int parse_partition(const char *v, int *out, char *err, size_t errlen)
{
    int64_t n;
    if (cli_parse_i64(v, &n) < 0 || n < 0 || n > INT32_MAX)
        return bad(err, errlen, "--partition must be a partition number, got '%s'", v);
    *out = (int)n;
    return 0;
}

typedef int (*apply_fn)(void *o, int k, const char *v, char *err, size_t errlen);

/* The options without a value: flags[i] sets *set[i]. */
typedef struct {
    const char *const *flags;
    int *const *set;
    int n;
} flags_t;

static int is_flag(const flags_t *f, const char *arg)
{
    for (int i = 0; f && i < f->n; i++)
        if (strcmp(arg, f->flags[i]) == 0) {
            *f->set[i] = 1;
            return 1;
        }
    return 0;
}

/* Each argument: --help (1), one of the flags, or one of names[0..n) with
 * its value, handed to apply with its index. 0, 1, or -1 with err. */
static int parse_loop(int argc, char **argv, const char *const *names, int n, const flags_t *flags,
                      apply_fn apply, void *o, char *err, size_t errlen)
{
    err[0] = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
        if (is_flag(flags, argv[i]))
            continue;
        int k = n, rc = 0;
        const char *v = NULL;
        for (int j = 0; j < n && rc == 0; j++)
            if ((rc = cli_option_value(argc, argv, &i, names[j], &v, err, errlen)) > 0)
                k = j;
        if (rc < 0 || (k == n && bad(err, errlen, "unknown option '%s'", argv[i]) < 0) ||
            apply(o, k, v, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* ---- console-producer ---- */

static int cp_acks(cp_opts_t *o, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "all") == 0 || strcmp(v, "-1") == 0)
        o->acks = -1;
    else if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
        o->acks = v[0] - '0';
    else
        return bad(err, errlen, "acks must be all, -1, 0 or 1, got '%s'", v);
    return 0;
}

/* LineMessageReader's text properties: name, and where it goes. */
static char *cp_text_field(cp_opts_t *o, const char *name)
{
    static const char *const names[] = {"key.separator", "headers.delimiter", "headers.separator",
                                        "headers.key.separator", "null.marker"};
    char *fields[] = {o->key_separator, o->headers_delimiter, o->headers_separator, o->headers_key_separator,
                      o->null_marker};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (strcmp(name, names[k]) == 0)
            return fields[k];
    return NULL;
}

static int cp_property(cp_opts_t *o, const char *arg, int producer, char *err, size_t errlen)
{
    char name[128];
    const char *v;
    if (split_property(arg, name, sizeof(name), &v, err, errlen) < 0)
        return -1;
    if (producer)
        return strcmp(name, "acks") == 0 ? cp_acks(o, v, err, errlen) : 0;   /* the others: the Java client's */
    if (strcmp(name, "parse.key") == 0)
        return parse_bool(name, v, &o->parse_key, err, errlen);
    if (strcmp(name, "parse.headers") == 0)
        return parse_bool(name, v, &o->parse_headers, err, errlen);
    if (strcmp(name, "ignore.error") == 0)
        return parse_bool(name, v, &o->ignore_error, err, errlen);
    char *field = cp_text_field(o, name);
    if (field && strcmp(name, "null.marker") == 0)
        o->has_null_marker = 1;
    /* headers.separator is split at literally (console_line.c): never empty */
    return field ? set_text(name, field, v, strcmp(name, "headers.separator") != 0, err, errlen)
                 : 0;   /* as LineMessageReader, properties it does not know are ignored */
}

/* The settings LineMessageReader.configure refuses, in its order and words. */
static int cp_check_reader(const cp_opts_t *o, char *err, size_t errlen)
{
    static const char *const names[] = {"key.separator", "headers.delimiter", "headers.separator",
                                        "headers.key.separator"};
    const char *values[] = {o->key_separator, o->headers_delimiter, o->headers_separator, o->headers_key_separator};
    static const int pairs[][2] = {{1, 2}, {1, 3}, {2, 3}};
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++)
        if (strcmp(values[pairs[k][0]], values[pairs[k][1]]) == 0) {
            snprintf(err, errlen, "%s and %s may not be equal", names[pairs[k][0]], names[pairs[k][1]]);
            return -1;
        }
    static const int marker_order[] = {0, 2, 1, 3};
    for (size_t k = 0; o->has_null_marker && k < 4; k++)
        if (strcmp(o->null_marker, values[marker_order[k]]) == 0)
            return bad(err, errlen, "null.marker and %s may not be equal", names[marker_order[k]]);
    return 0;
}

static int cp_option(void *opts, int k, const char *v, char *err, size_t errlen)
{
    cp_opts_t *o = opts;
    int64_t n;
    switch (k) {
    case 0: o->bootstrap = v; return 0;
    case 1: o->topic = v; return 0;
    case 2: return cp_property(o, v, 0, err, errlen);
    case 3: return cp_property(o, v, 1, err, errlen);
    case 4: return cp_acks(o, v, err, errlen);
    case 5: return parse_partition(v, &o->partition, err, errlen);
    default:
        if (cli_parse_i64(v, &n) < 0 || n < 1 || n > 100000)
            return bad(err, errlen, "--batch-size must be between 1 and 100000 records, got '%s'", v);
        o->batch_lines = (int)n;
        return 0;
    }
}

int cp_parse_args(int argc, char **argv, cp_opts_t *o, char *err, size_t errlen)
{
    static const char *const names[] = {"--bootstrap-server", "--topic", "--property", "--producer-property",
                                        "--request-required-acks", "--partition", "--batch-size"};
    const int n = (int)(sizeof(names) / sizeof(names[0]));
    *o = (cp_opts_t){.partition = -1,
                     .acks = -1,
                     .batch_lines = 100,
                     .key_separator = "\t",
                     .headers_delimiter = "\t",
                     .headers_separator = ",",
                     .headers_key_separator = ":"};
    int rc = parse_loop(argc, argv, names, n, NULL, cp_option, o, err, errlen);
    if (rc != 0)
        return rc;
    if (!o->bootstrap || !o->topic)
        return bad(err, errlen, "%s", "--bootstrap-server and --topic are required");
    return cp_check_reader(o, err, errlen);
}

/* ---- console-consumer ---- */

/* DefaultMessageFormatter's properties: its flags, then its texts. */
static int cc_property(cc_opts_t *o, const char *arg, char *err, size_t errlen)
{
    static const char *const flags[] = {"print.key",       "print.offset",  "print.partition",
                                        "print.timestamp", "print.headers", "print.value"};
    int *fields[] = {&o->print_key,       &o->print_offset,  &o->print_partition,
                     &o->print_timestamp, &o->print_headers, &o->print_value};
    static const char *const texts[] = {"key.separator", "line.separator", "headers.separator", "null.literal"};
    char *text_fields[] = {o->key_separator, o->line_separator, o->headers_separator, o->null_literal};
    char name[128];
    const char *v;
    if (split_property(arg, name, sizeof(name), &v, err, errlen) < 0)
        return -1;
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
        if (strcmp(name, flags[k]) == 0)
            return parse_bool(name, v, fields[k], err, errlen);
    for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
        if (strcmp(name, texts[k]) == 0)
            return set_text(name, text_fields[k], v, 1, err, errlen);
    return 0;   /* as DefaultMessageFormatter, properties it does not know (deserializers) are ignored */
}

static int cc_offset(cc_opts_t *o, const char *v, char *err, size_t errlen)
{
    if (strcasecmp(v, "earliest") == 0)
        o->from = CC_FROM_EARLIEST;
    else if (strcasecmp(v, "latest") == 0)
        o->from = CC_FROM_LATEST;
    else if (cli_parse_i64(v, &o->offset) == 0 && o->offset >= 0)
        o->from = CC_FROM_OFFSET;
    else
        return bad(err, errlen,
                   "The provided offset value '%s' is incorrect. Valid values are 'earliest', 'latest', or a "
                   "non-negative long.",
                   v);
    return 0;
}

/* --consumer-property: group.id is a group as --group is; the others are
 * the Java client's settings. */
static int cc_consumer_property(cc_opts_t *o, const char *arg, char *err, size_t errlen)
{
    char name[128];
    const char *v;
    if (split_property(arg, name, sizeof(name), &v, err, errlen) < 0)
        return -1;
    if (strcmp(name, "group.id") == 0 && *v)
        o->group_property = v;
    return 0;
}

/* --formatter: Kafka 3.x's default formatter under either of its names. */
static int cc_formatter(const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "kafka.tools.DefaultMessageFormatter") == 0 ||
        strcmp(v, "org.apache.kafka.tools.consumer.DefaultMessageFormatter") == 0)
        return 0;
    return bad(err, errlen,
               "--formatter %s is not available: kipper console-consumer has only kafka.tools.DefaultMessageFormatter",
               v);
}

static int cc_isolation(cc_opts_t *o, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "read_committed") != 0 && strcmp(v, "read_uncommitted") != 0)
        return bad(err, errlen,
                   "Invalid value %s for configuration isolation.level: String must be one of: read_committed, "
                   "read_uncommitted",
                   v);
    o->isolation_level = strcmp(v, "read_committed") == 0;
    return 0;
}

static int cc_option(void *opts, int k, const char *v, char *err, size_t errlen)
{
    cc_opts_t *o = opts;
    switch (k) {
    case 0: o->bootstrap = v; return 0;
    case 1: o->topic = v; return 0;
    case 2: return cc_property(o, v, err, errlen);
    case 3: return parse_partition(v, &o->partition, err, errlen);
    case 4: return cc_offset(o, v, err, errlen);
    case 5:
        if (cli_parse_i64(v, &o->max_messages) < 0 || o->max_messages < 1)
            return bad(err, errlen, "--max-messages must be a positive number, got '%s'", v);
        return 0;
    case 6:
        if (cli_parse_i64(v, &o->timeout_ms) < 0)
            return bad(err, errlen, "--timeout-ms must be milliseconds, got '%s'", v);
        o->timeout_ms = o->timeout_ms < 0 ? -1 : o->timeout_ms;   /* Kafka: negative is no timeout */
        return 0;
    case 7: return cc_formatter(v, err, errlen);
    case 8: return cc_isolation(o, v, err, errlen);
    case 9:
        if (!*v)
            return bad(err, errlen, "%s", "--group needs a group id");
        o->group = v;
        return 0;
    default:
        return cc_consumer_property(o, v, err, errlen);
    }
}

/* The combinations kafka-console-consumer.sh refuses. */
static int cc_check(const cc_opts_t *o, char *err, size_t errlen)
{
    if (!o->bootstrap || !o->topic)
        return bad(err, errlen, "%s", "--bootstrap-server and --topic are required");
    if (o->from != CC_FROM_DEFAULT && o->partition < 0)
        return bad(err, errlen, "%s", "The partition is required when offset is specified.");
    if (o->from != CC_FROM_DEFAULT && o->from_beginning)
        return bad(err, errlen, "%s", "Options from-beginning and offset cannot be specified together.");
    if (o->group && o->group_property && strcmp(o->group, o->group_property) != 0) {
        snprintf(err, errlen,
                 "The group ids provided in different places (directly using '--group', via '--consumer-property', "
                 "or via '--consumer.config') do not match. Detected group ids: '%s', '%s'",
                 o->group, o->group_property);
        return -1;
    }
    if ((o->group || o->group_property) && o->partition >= 0)
        return bad(err, errlen, "%s", "Options group and partition cannot be specified together.");
    return 0;
}

int cc_parse_args(int argc, char **argv, cc_opts_t *o, char *err, size_t errlen)
{
    static const char *const names[] = {"--bootstrap-server", "--topic",           "--property",
                                        "--partition",        "--offset",          "--max-messages",
                                        "--timeout-ms",       "--formatter",       "--isolation-level",
                                        "--group",            "--consumer-property"};
    const int n = (int)(sizeof(names) / sizeof(names[0]));
    *o = (cc_opts_t){.partition = -1,
                     .max_messages = -1,
                     .timeout_ms = -1,
                     .print_value = 1,
                     .key_separator = "\t",
                     .line_separator = "\n",
                     .headers_separator = ",",
                     .null_literal = "null"};
    static const char *const flag_names[] = {"--from-beginning", "--skip-message-on-error"};
    int *const set[] = {&o->from_beginning, &o->skip_message_on_error};
    const flags_t flags = {flag_names, set, 2};
    int rc = parse_loop(argc, argv, names, n, &flags, cc_option, o, err, errlen);
    if (rc != 0)
        return rc;
    rc = cc_check(o, err, errlen);
    if (rc == 0 && !o->group)
        o->group = o->group_property;
    return rc;
}
