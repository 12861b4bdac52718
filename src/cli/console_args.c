/* console_args.c -- the command lines of `kipper console-producer` and
 * `kipper console-consumer` (console.h): the options of
 * kafka-console-producer.sh and kafka-console-consumer.sh that work without
 * a group, with their --property names. */
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

static int set_separator(char *sep, const char *v, char *err, size_t errlen)
{
    if (!*v || strlen(v) >= CONSOLE_SEPARATOR_MAX)
        return bad(err, errlen, "key.separator must be 1 to 63 bytes, got '%s'", v);
    snprintf(sep, CONSOLE_SEPARATOR_MAX, "%s", v);
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

/* Each argument: --help (1), the flag `flag` (NULL: none; *flag_set), or
 * one of names[0..n) with its value, handed to apply with its index. 0, 1,
 * or -1 with err. */
static int parse_loop(int argc, char **argv, const char *const *names, int n, const char *flag, int *flag_set,
                      apply_fn apply, void *o, char *err, size_t errlen)
{
    err[0] = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
        if (flag && strcmp(argv[i], flag) == 0) {
            *flag_set = 1;
            continue;
        }
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
    if (strcmp(name, "key.separator") == 0)
        return set_separator(o->key_separator, v, err, errlen);
    return 0;   /* as LineMessageReader, properties it does not know are ignored */
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
    *o = (cp_opts_t){.partition = -1, .acks = -1, .batch_lines = 100, .key_separator = "\t"};
    int rc = parse_loop(argc, argv, names, n, NULL, NULL, cp_option, o, err, errlen);
    if (rc != 0)
        return rc;
    if (!o->bootstrap || !o->topic)
        return bad(err, errlen, "%s", "--bootstrap-server and --topic are required");
    return 0;
}

int cp_line_record(const cp_opts_t *o, const char *line, size_t len, cr_input_t *out)
{
    *out = (cr_input_t){.value = line, .value_len = len};
    if (!o->parse_key)
        return 0;
    const char *sep = memmem(line, len, o->key_separator, strlen(o->key_separator));
    if (!sep)
        return -1;
    out->key = line;
    out->key_len = (size_t)(sep - line);
    out->value = sep + strlen(o->key_separator);
    out->value_len = len - out->key_len - strlen(o->key_separator);
    return 0;
}

/* ---- console-consumer ---- */

static int cc_property(cc_opts_t *o, const char *arg, char *err, size_t errlen)
{
    static const char *const flags[] = {"print.key",       "print.offset",  "print.partition",
                                        "print.timestamp", "print.headers", "print.value"};
    int *fields[] = {&o->print_key,       &o->print_offset,  &o->print_partition,
                     &o->print_timestamp, &o->print_headers, &o->print_value};
    char name[128];
    const char *v;
    if (split_property(arg, name, sizeof(name), &v, err, errlen) < 0)
        return -1;
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
        if (strcmp(name, flags[k]) == 0)
            return parse_bool(name, v, fields[k], err, errlen);
    if (strcmp(name, "key.separator") == 0)
        return set_separator(o->key_separator, v, err, errlen);
    return 0;   /* as DefaultMessageFormatter, properties it does not know are ignored */
}

static int cc_offset(cc_opts_t *o, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "earliest") == 0)
        o->from = CC_FROM_EARLIEST;
    else if (strcmp(v, "latest") == 0)
        o->from = CC_FROM_LATEST;
    else if (cli_parse_i64(v, &o->offset) == 0 && o->offset >= 0)
        o->from = CC_FROM_OFFSET;
    else
        return bad(err, errlen, "--offset must be earliest, latest or an offset, got '%s'", v);
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
        if (cli_parse_i64(v, &o->timeout_ms) < 0 || o->timeout_ms < 0)
            return bad(err, errlen, "--timeout-ms must be milliseconds, got '%s'", v);
        return 0;
    default:
        return 0;   /* --consumer-property: the Java client's settings */
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
    return 0;
}

int cc_parse_args(int argc, char **argv, cc_opts_t *o, char *err, size_t errlen)
{
    static const char *const names[] = {"--bootstrap-server", "--topic",       "--property",         "--partition",
                                        "--offset",           "--max-messages", "--timeout-ms", "--consumer-property"};
    const int n = (int)(sizeof(names) / sizeof(names[0]));
    *o = (cc_opts_t){.partition = -1, .max_messages = -1, .timeout_ms = -1, .print_value = 1, .key_separator = "\t"};
    int rc = parse_loop(argc, argv, names, n, "--from-beginning", &o->from_beginning, cc_option, o, err, errlen);
    if (rc != 0)
        return rc;
    return cc_check(o, err, errlen);
}
