/* topics.c -- `kipper topics`, in the manner of kafka-topics.sh. With
 * --zookeeper, as the ZooKeeper-based kafka-topics.sh, it talks to the
 * coordinator directly (coord_admin.h), so it works with no broker running,
 * and the brokers pick the changes up from their watches. With
 * --bootstrap-server, as Kafka 3.x's kafka-topics.sh (which has no
 * --zookeeper), every action goes through a broker (topics_kafka.c).
 *
 * Output follows kafka-topics.sh ("Created topic T.", its describe lines,
 * "Error while executing topic command : ..." on failure). Exit codes: 0 done,
 * 1 the operation failed, 2 the command line is wrong. */
#define _GNU_SOURCE
#include "topics.h"
#include "broker/coord/coord_connect.h"
#include "broker/coord/coord_admin.h"
#include "broker/coord/coord_reassign.h"
#include "kafka_client.h"
#include "topics_kafka.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_MS 15000
#define DEFAULT_PARTITIONS 1            /* Kafka's num.partitions default */
#define DEFAULT_REPLICATION_FACTOR 1    /* Kafka's default.replication.factor default */

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef enum { NO_ACTION, CREATE, LIST, DESCRIBE, DELETE, ALTER } action_t;

/* Options, as bits, to check which ones an action accepts. */
enum {
    OPT_TOPIC = 1 << 0,
    OPT_PARTITIONS = 1 << 1,
    OPT_REPLICATION_FACTOR = 1 << 2,
    OPT_REPLICA_ASSIGNMENT = 1 << 3,
    OPT_CONFIG = 1 << 4,
    OPT_IF_NOT_EXISTS = 1 << 5,
    OPT_IF_EXISTS = 1 << 6,
    OPT_UNDER_REPLICATED = 1 << 7,
    OPT_UNAVAILABLE = 1 << 8,
    OPT_DELETE_CONFIG = 1 << 9,
    OPT_EXCLUDE_INTERNAL = 1 << 10,
    OPT_UNDER_MIN_ISR = 1 << 11,
    OPT_AT_MIN_ISR = 1 << 12,
    OPT_WITH_OVERRIDES = 1 << 13,
    OPT_COMMAND_CONFIG = 1 << 14,
    OPT_LAST = OPT_COMMAND_CONFIG,
};

/* What only --bootstrap-server takes (kafka-topics.sh's options that its
 * ZooKeeper form lacked in kipper). */
#define BOOTSTRAP_ONLY \
    (OPT_EXCLUDE_INTERNAL | OPT_UNDER_MIN_ISR | OPT_AT_MIN_ISR | OPT_WITH_OVERRIDES | OPT_COMMAND_CONFIG)

/* --describe's filters: only the partitions that match either one given. */
#define DESCRIBE_FILTERS (OPT_UNDER_REPLICATED | OPT_UNAVAILABLE)
/* --describe's reports of kafka-topics.sh, one at a time with --bootstrap-server. */
#define DESCRIBE_REPORTS (DESCRIBE_FILTERS | OPT_UNDER_MIN_ISR | OPT_AT_MIN_ISR | OPT_WITH_OVERRIDES)

typedef struct {
    action_t action;
    unsigned given;                  /* OPT_* bits seen */
    const char *zookeeper;           /* exactly one of these two */
    const char *bootstrap;
    const char *command_config;      /* --command-config */
    const char *topic;
    int partitions;                  /* -1: not given */
    int replication_factor;          /* -1: not given */
    const char *replica_assignment;  /* as given; parsed into assignment */
    int32_t *assignment;             /* malloc'd, npartitions_assigned * assigned_rf */
    int npartitions_assigned, assigned_rf;
    coord_config_entry_t configs[COORD_MAX_TOPIC_CONFIGS];
    int nconfigs;
    char deleted[COORD_MAX_TOPIC_CONFIGS][128];   /* --alter --delete-config names */
    int ndeleted;
} topics_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper topics (--bootstrap-server host:port[,host:port...] |\n"
            "                      --zookeeper host:port[,host:port...][/chroot])\n"
            "                     (--create | --list | --describe | --delete | --alter) [options]\n"
            "\n"
            "  --create --topic T [--partitions N] [--replication-factor R] [--config k=v]... [--if-not-exists]\n"
            "  --create --topic T --replica-assignment 1:2,2:3,... [--config k=v]... [--if-not-exists]\n"
            "  --list [--topic T] [--exclude-internal]\n"
            "  --describe [--topic T] [--if-exists] [--exclude-internal] [--under-replicated-partitions]\n"
            "             [--unavailable-partitions] [--under-min-isr-partitions] [--at-min-isr-partitions]\n"
            "             [--topics-with-overrides]\n"
            "  --alter --topic T --partitions N [--replica-assignment ...] [--if-exists]\n"
            "  --alter --topic T [--config k=v]... [--delete-config k]... (kafka-topics.sh's old form, with\n"
            "                    --zookeeper only; kipper configs does the same with either)\n"
            "  --delete --topic T [--if-exists]\n"
            "\n"
            "  --bootstrap-server    brokers to ask, as Kafka 3.x's kafka-topics.sh: every action goes\n"
            "                        through the Kafka protocol; --topic is then a regular expression\n"
            "                        (but for --create) and --delete and --alter print nothing\n"
            "  --command-config      (--bootstrap-server) a client properties file: request.timeout.ms\n"
            "                        (or default.api.timeout.ms) bounds each request (default 15000);\n"
            "                        security.protocol must be PLAINTEXT; other keys are ignored\n"
            "  --zookeeper           the coordinator, as zookeeper.connect in server.properties: the\n"
            "                        topics are read and written there, with no broker needed\n"
            "  --partitions          partitions of a new topic (default %d, or the broker's\n"
            "                        num.partitions with --bootstrap-server), or the new total for --alter\n"
            "  --replication-factor  replicas of each partition (default %d, or the broker's\n"
            "                        default.replication.factor with --bootstrap-server)\n"
            "  --replica-assignment  broker ids: partitions separated by commas, replicas by colons, the\n"
            "                        first replica preferred; with --alter it lists every partition and\n"
            "                        the existing ones are skipped, as in kafka-topics.sh\n"
            "  --config              a topic config k=v, any of Kafka 3.x's (those kipper does not act\n"
            "                        on are stored and named in a log line); repeatable\n"
            "  --if-not-exists       --create does nothing if the topic exists\n"
            "  --if-exists           --alter, --delete and --describe do nothing if it does not\n"
            "  --exclude-internal    --list and --describe leave out __consumer_offsets and the like\n"
            "  --under-replicated-partitions\n"
            "                        --describe shows only the partitions whose ISR is smaller than their\n"
            "                        replica list (and no topic line), as kafka-topics.sh\n"
            "  --unavailable-partitions\n"
            "                        --describe shows only the partitions without a leader, or whose\n"
            "                        leader is not a live broker; with --zookeeper and both, either kind\n"
            "  --under-min-isr-partitions, --at-min-isr-partitions\n"
            "                        (--bootstrap-server) only the partitions whose ISR is smaller than,\n"
            "                        or equal to, the topic's min.insync.replicas\n"
            "  --topics-with-overrides\n"
            "                        (--bootstrap-server) only the topic lines of topics with configs\n"
            "                        that are not the defaults\n"
            "\n"
            "KIPPER_ZK_DEBUG=1 shows the ZooKeeper client's own log.\n",
            DEFAULT_PARTITIONS, DEFAULT_REPLICATION_FACTOR);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kipper topics: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return -1;
}

static int failed(const char *message)
{
    fprintf(stderr, "Error while executing topic command : %s\n", message);
    return EXIT_FAILED;
}

/* ---- the command line ---- */

/* A decimal int (optional '-'), the whole string. */
static int parse_int(const char *s, int *out)
{
    char *end;
    if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static int count_char(const char *s, size_t n, char c)
{
    int count = 0;
    for (size_t i = 0; i < n; i++)
        count += s[i] == c;
    return count;
}

/* One partition's "a:b:c" (len bytes at p) into replicas[rf]. 0, EXIT_USAGE
 * for bad syntax, or EXIT_FAILED with kafka-topics.sh's messages for another
 * replica count or a broker listed twice. */
static int parse_partition_replicas(const char *p, size_t len, int partition, int rf, int32_t *replicas)
{
    if (count_char(p, len, ':') + 1 != rf) {
        fprintf(stderr, "Error while executing topic command : Partition %d has different replication factor: %.*s\n",
                partition, (int)len, p);
        return EXIT_FAILED;
    }
    for (int r = 0; r < rf; r++) {
        char id[16];
        size_t idlen = strcspn(p, ":,");
        int value;
        if (idlen == 0 || idlen >= sizeof(id))
            return EXIT_USAGE;
        memcpy(id, p, idlen);
        id[idlen] = 0;
        if (parse_int(id, &value) < 0)
            return EXIT_USAGE;
        for (int q = 0; q < r; q++) {
            if (replicas[q] == value) {
                fprintf(stderr, "Error while executing topic command : Partition replica lists may not contain "
                                "duplicate entries: %d\n",
                        value);
                return EXIT_FAILED;
            }
        }
        replicas[r] = value;
        p += idlen + (p[idlen] ? 1 : 0);
    }
    return 0;
}

/* --replica-assignment "1:2,2:3": partitions separated by commas, replicas
 * by colons. 0, or the exit code. */
static int parse_assignment(topics_opts_t *o)
{
    const char *s = o->replica_assignment;
    int partitions = count_char(s, strlen(s), ',') + 1;
    int rf = count_char(s, strcspn(s, ","), ':') + 1;
    if (partitions > COORD_MAX_PARTITIONS || rf > COORD_MAX_REPLICAS) {
        usage_error("--replica-assignment: too many partitions or replicas in '%.200s'", s);
        return EXIT_USAGE;
    }
    o->assignment = malloc(sizeof(int32_t) * (size_t)partitions * (size_t)rf);
    if (!o->assignment)
        return failed("out of memory");
    const char *p = s;
    for (int i = 0; i < partitions; i++) {
        size_t len = strcspn(p, ",");
        int rc = parse_partition_replicas(p, len, i, rf, o->assignment + (size_t)i * (size_t)rf);
        if (rc == EXIT_USAGE)
            usage_error("--replica-assignment: bad broker id list '%.200s'", s);
        if (rc != 0)
            return rc;
        p += len + (p[len] ? 1 : 0);
    }
    o->npartitions_assigned = partitions;
    o->assigned_rf = rf;
    return 0;
}

/* "k=v"; a name given twice keeps the last value, as kafka-topics.sh's
 * Properties do. */
static int add_config(topics_opts_t *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return usage_error("--config must be key=value, got '%s'", arg);
    size_t keylen = (size_t)(eq - arg);
    coord_config_entry_t entry;
    if (keylen >= sizeof(entry.key) || strlen(eq + 1) >= sizeof(entry.value))
        return usage_error("--config '%.200s' is too long", arg);
    memcpy(entry.key, arg, keylen);
    entry.key[keylen] = 0;
    strcpy(entry.value, eq + 1);
    for (int i = 0; i < o->nconfigs; i++) {
        if (strcmp(o->configs[i].key, entry.key) == 0) {
            o->configs[i] = entry;
            return 0;
        }
    }
    if (o->nconfigs == COORD_MAX_TOPIC_CONFIGS)
        return usage_error("too many --config names at '%s' (at most 64)", arg);
    o->configs[o->nconfigs++] = entry;
    return 0;
}

/* "--name value" or "--name=value": 1 if arg is option name (value set,
 * consuming the next argument if needed), 0 if not, -1 if the value is missing. */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != 0)
        return 0;
    if (*i + 1 >= argc) {
        usage_error("%s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

static int set_action(topics_opts_t *o, action_t action, const char *arg)
{
    if (o->action != NO_ACTION)
        return usage_error("give only one of --create, --list, --describe, --delete, --alter (also got %s)", arg);
    o->action = action;
    return 0;
}

static int parse_number(const char *name, const char *v, int *out)
{
    if (parse_int(v, out) == 0)
        return 0;
    char fmt[96];
    snprintf(fmt, sizeof(fmt), "%s must be a number, got '%%s'", name);
    return usage_error(fmt, v);
}

/* Stores the value of the option name. 0, or -1 after a usage error. */
static int apply_valued(topics_opts_t *o, const char *name, const char *v)
{
    if (strcmp(name, "--zookeeper") == 0) {
        o->zookeeper = v;
    } else if (strcmp(name, "--bootstrap-server") == 0) {
        o->bootstrap = v;
    } else if (strcmp(name, "--command-config") == 0) {
        o->command_config = v;
        o->given |= OPT_COMMAND_CONFIG;
    } else if (strcmp(name, "--topic") == 0) {
        o->topic = v;
        o->given |= OPT_TOPIC;
    } else if (strcmp(name, "--partitions") == 0) {
        o->given |= OPT_PARTITIONS;
        return parse_number(name, v, &o->partitions);
    } else if (strcmp(name, "--replication-factor") == 0) {
        o->given |= OPT_REPLICATION_FACTOR;
        return parse_number(name, v, &o->replication_factor);
    } else if (strcmp(name, "--replica-assignment") == 0) {
        o->replica_assignment = v;
        o->given |= OPT_REPLICA_ASSIGNMENT;
    } else if (strcmp(name, "--delete-config") == 0) {
        o->given |= OPT_DELETE_CONFIG;
        if (o->ndeleted == COORD_MAX_TOPIC_CONFIGS || strlen(v) >= sizeof(o->deleted[0]) || !v[0])
            return usage_error("--delete-config '%.200s': an empty or too long name, or too many", v);
        snprintf(o->deleted[o->ndeleted++], sizeof(o->deleted[0]), "%s", v);
    } else {
        o->given |= OPT_CONFIG;
        return add_config(o, v);
    }
    return 0;
}

static int parse_arg(topics_opts_t *o, int argc, char **argv, int *i)
{
    static const struct {
        const char *name;
        action_t action;
    } actions[] = {{"--create", CREATE}, {"--list", LIST}, {"--describe", DESCRIBE}, {"--delete", DELETE},
                   {"--alter", ALTER}};
    static const char *const valued[] = {"--zookeeper",          "--bootstrap-server", "--topic",
                                         "--partitions",         "--replication-factor", "--replica-assignment",
                                         "--config",             "--delete-config",      "--command-config"};
    static const struct {
        const char *name;
        unsigned bit;
    } flags[] = {{"--if-not-exists", OPT_IF_NOT_EXISTS},
                 {"--if-exists", OPT_IF_EXISTS},
                 {"--under-replicated-partitions", OPT_UNDER_REPLICATED},
                 {"--unavailable-partitions", OPT_UNAVAILABLE},
                 {"--exclude-internal", OPT_EXCLUDE_INTERNAL},
                 {"--under-min-isr-partitions", OPT_UNDER_MIN_ISR},
                 {"--at-min-isr-partitions", OPT_AT_MIN_ISR},
                 {"--topics-with-overrides", OPT_WITH_OVERRIDES}};
    const char *arg = argv[*i];
    for (size_t k = 0; k < sizeof(actions) / sizeof(actions[0]); k++)
        if (strcmp(arg, actions[k].name) == 0)
            return set_action(o, actions[k].action, arg);
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        if (strcmp(arg, flags[k].name) == 0) {
            o->given |= flags[k].bit;
            return 0;
        }
    }
    for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
        const char *v;
        int found = option_value(argc, argv, i, valued[k], &v);
        if (found != 0)
            return found < 0 ? -1 : apply_valued(o, valued[k], v);
    }
    return usage_error("unknown option '%s'", arg);
}

static const char *option_name(unsigned bit)
{
    switch (bit) {
    case OPT_TOPIC: return "--topic";
    case OPT_PARTITIONS: return "--partitions";
    case OPT_REPLICATION_FACTOR: return "--replication-factor";
    case OPT_REPLICA_ASSIGNMENT: return "--replica-assignment";
    case OPT_CONFIG: return "--config";
    case OPT_IF_NOT_EXISTS: return "--if-not-exists";
    case OPT_IF_EXISTS: return "--if-exists";
    case OPT_UNDER_REPLICATED: return "--under-replicated-partitions";
    case OPT_DELETE_CONFIG: return "--delete-config";
    case OPT_EXCLUDE_INTERNAL: return "--exclude-internal";
    case OPT_UNDER_MIN_ISR: return "--under-min-isr-partitions";
    case OPT_AT_MIN_ISR: return "--at-min-isr-partitions";
    case OPT_WITH_OVERRIDES: return "--topics-with-overrides";
    case OPT_COMMAND_CONFIG: return "--command-config";
    default: return "--unavailable-partitions";
    }
}

static int count_bits(unsigned v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* --bootstrap-server or --zookeeper, and what each form takes: Kafka 3.x's
 * kafka-topics.sh changes configs only with --create (kafka-configs.sh does
 * the rest) and takes one --describe report at a time. */
static int check_mode(const topics_opts_t *o)
{
    if (!o->bootstrap == !o->zookeeper)
        return usage_error("%s", "give exactly one of --bootstrap-server (the brokers) and --zookeeper "
                                 "(the coordinator)");
    if (!o->bootstrap) {
        for (unsigned bit = 1; bit <= OPT_LAST; bit <<= 1)
            if (o->given & bit & BOOTSTRAP_ONLY)
                return usage_error("%s goes with --bootstrap-server", option_name(bit));
        return 0;
    }
    if (o->action == ALTER && (o->given & (OPT_CONFIG | OPT_DELETE_CONFIG)))
        return usage_error("%s", "--alter with --bootstrap-server changes partitions only; change configs "
                                 "with kipper configs --alter (kafka-configs.sh)");
    if (count_bits(o->given & DESCRIBE_REPORTS) > 1)
        return usage_error("%s", "give only one of --under-replicated-partitions, --unavailable-partitions, "
                                 "--under-min-isr-partitions, --at-min-isr-partitions, --topics-with-overrides");
    return 0;
}

/* Which options each action takes and needs, as kafka-topics.sh checks them. */
static int check_combination(const topics_opts_t *o)
{
    static const struct {
        action_t action;
        const char *name;
        unsigned allowed, required;
    } rules[] = {
        {CREATE, "--create",
         OPT_TOPIC | OPT_PARTITIONS | OPT_REPLICATION_FACTOR | OPT_REPLICA_ASSIGNMENT | OPT_CONFIG | OPT_IF_NOT_EXISTS,
         OPT_TOPIC},
        {LIST, "--list", OPT_TOPIC | OPT_EXCLUDE_INTERNAL, 0},
        {DESCRIBE, "--describe", OPT_TOPIC | OPT_IF_EXISTS | OPT_EXCLUDE_INTERNAL | DESCRIBE_REPORTS, 0},
        {DELETE, "--delete", OPT_TOPIC | OPT_IF_EXISTS, OPT_TOPIC},
        {ALTER, "--alter",
         OPT_TOPIC | OPT_PARTITIONS | OPT_REPLICA_ASSIGNMENT | OPT_IF_EXISTS | OPT_CONFIG | OPT_DELETE_CONFIG,
         OPT_TOPIC},
    };
    if (o->action == NO_ACTION)
        return usage_error("%s", "give one of --create, --list, --describe, --delete, --alter");
    for (size_t k = 0; k < sizeof(rules) / sizeof(rules[0]); k++) {
        if (rules[k].action != o->action)
            continue;
        unsigned allowed = rules[k].allowed | OPT_COMMAND_CONFIG;   /* every action's */
        for (unsigned bit = 1; bit <= OPT_LAST; bit <<= 1) {
            char what[96];
            snprintf(what, sizeof(what), "%s %s", rules[k].name, option_name(bit));
            if ((o->given & bit) && !(allowed & bit))
                return usage_error("%s: that option does not go with this action", what);
            if (!(o->given & bit) && (rules[k].required & bit))
                return usage_error("%s: this action needs that option", what);
        }
    }
    if (o->action == ALTER && !(o->given & (OPT_PARTITIONS | OPT_CONFIG | OPT_DELETE_CONFIG)))
        return usage_error("%s", "--alter needs --partitions, --config or --delete-config");
    if (o->action == ALTER && (o->given & OPT_REPLICA_ASSIGNMENT) && !(o->given & OPT_PARTITIONS))
        return usage_error("%s", "--alter --replica-assignment goes with --partitions");
    if (o->action == CREATE && (o->given & OPT_REPLICA_ASSIGNMENT) &&
        (o->given & (OPT_PARTITIONS | OPT_REPLICATION_FACTOR)))
        return usage_error("%s", "--replica-assignment gives the partitions and replicas; "
                                 "leave out --partitions and --replication-factor");
    return check_mode(o);
}

/* 0 to go on, -1 after --help, or the exit code to return. */
static int parse_command_line(topics_opts_t *o, int argc, char **argv)
{
    o->partitions = -1;
    o->replication_factor = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return -1;
        }
        if (parse_arg(o, argc, argv, &i) < 0)
            return EXIT_USAGE;
    }
    if (check_combination(o) < 0)
        return EXIT_USAGE;
    char chroot[COORD_CHROOT_MAX], err[300];
    if (o->zookeeper && coord_parse_connect(o->zookeeper, chroot, sizeof(chroot), err, sizeof(err)) < 0) {
        usage_error("--zookeeper: %s", err);
        return EXIT_USAGE;
    }
    return o->replica_assignment ? parse_assignment(o) : 0;
}

/* ---- the actions ---- */

static int create_topic(zhandle_t *zh, const topics_opts_t *o)
{
    char err[256];
    coord_admin_result_t res;
    if (coord_admin_ensure_paths(zh, err, sizeof(err)) < 0)
        return failed(err);
    int partitions = o->assignment ? o->npartitions_assigned : o->partitions;
    int rf = o->assignment ? o->assigned_rf : o->replication_factor;
    if (coord_admin_create_topic(zh, o->topic, partitions, rf, o->assignment, DEFAULT_PARTITIONS,
                                 DEFAULT_REPLICATION_FACTOR, o->configs, o->nconfigs, 0, NULL, &res) == 0) {
        printf("Created topic %s.\n", o->topic);
        return EXIT_OK;
    }
    if (res.error == KERR_TOPIC_ALREADY_EXISTS && (o->given & OPT_IF_NOT_EXISTS))
        return EXIT_OK;
    return failed(res.message);
}

static int list_topics(zhandle_t *zh, const topics_opts_t *o)
{
    char err[256], **names;
    int n;
    if (coord_admin_list_topics(zh, &names, &n, err, sizeof(err)) < 0)
        return failed(err);
    for (int i = 0; i < n; i++)
        if (!o->topic || strcmp(o->topic, names[i]) == 0)
            printf("%s\n", names[i]);
    coord_admin_names_free(names, n);
    return EXIT_OK;
}

static void print_ids(const char *label, const int32_t *ids, int n)
{
    printf("\t%s: ", label);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? "," : "", (int)ids[i]);
}

/* What --describe needs besides the options: the registered brokers, for
 * --unavailable-partitions. */
typedef struct {
    unsigned filters;   /* the DESCRIBE_FILTERS given */
    int32_t *live;      /* sorted; read only for --unavailable-partitions */
    int nlive;
} describe_ctx_t;

static int compare_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* kafka-topics.sh's rules: every partition without a filter; with them,
 * those under-replicated (ISR smaller than the replica list) or unavailable
 * (no leader, or a leader that is not registered), as given. */
static int partition_shown(const describe_ctx_t *c, const coord_partition_desc_t *p)
{
    if (!c->filters)
        return 1;
    if ((c->filters & OPT_UNDER_REPLICATED) && p->nisr < p->nreplicas)
        return 1;
    return (c->filters & OPT_UNAVAILABLE) &&
           (p->leader < 0 || !bsearch(&p->leader, c->live, (size_t)c->nlive, sizeof(int32_t), compare_int32));
}

/* A partition being moved shows as kafka-topics.sh shows it: the replicas
 * are the target and those still to go, then which are added and removed. */
static void print_partition(zhandle_t *zh, const char *topic, const coord_partition_desc_t *p)
{
    int32_t target[COORD_MAX_REPLICAS];
    int ntarget = 0;
    char err[256];
    int moving = coord_move_read(zh, topic, p->partition, target, &ntarget, err, sizeof(err));
    if (moving < 0)
        fprintf(stderr, "kipper topics: %s\n", err);
    coord_move_sets_t m;
    coord_move_sets(p->replicas, p->nreplicas, target, ntarget, &m);
    printf("\tTopic: %s\tPartition: %d\t", topic, (int)p->partition);
    if (p->leader >= 0)
        printf("Leader: %d", (int)p->leader);
    else
        printf("Leader: none");
    if (moving > 0)
        print_ids("Replicas", m.replicas, m.nreplicas);
    else
        print_ids("Replicas", p->replicas, p->nreplicas);
    print_ids("Isr", p->isr, p->nisr);
    if (moving > 0) {
        print_ids("Adding Replicas", m.adding, m.nadding);
        print_ids("Removing Replicas", m.removing, m.nremoving);
    }
    /* After Isr and the moves, where kafka-topics.sh puts its own later
     * fields (Elr), so scripts that read its fields by position still do. */
    if (p->leader_epoch >= 0)
        printf("\tLeaderEpoch: %d\n", (int)p->leader_epoch);
    else
        printf("\tLeaderEpoch: none\n");
}

/* kafka-topics.sh --describe's lines for one topic: the topic line (left
 * out with a filter, as kafka-topics.sh does), then its partitions. */
static void print_topic(zhandle_t *zh, const coord_topic_desc_t *d, const describe_ctx_t *c)
{
    char id[23];
    if (!c->filters) {
        coord_topic_id_format(d->topic.topic_id, id);
        printf("Topic: %s\tTopicId: %s\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: ", d->name, id,
               d->npartitions, d->npartitions > 0 ? d->partitions[0].nreplicas : 0);
        for (int i = 0; i < d->topic.nconfigs; i++)
            printf("%s%s=%s", i ? "," : "", d->topic.configs[i].key, d->topic.configs[i].value);
        printf("\n");
    }
    for (int i = 0; i < d->npartitions; i++)
        if (partition_shown(c, &d->partitions[i]))
            print_partition(zh, d->name, &d->partitions[i]);
}

static int not_found(const topics_opts_t *o)
{
    if (o->given & OPT_IF_EXISTS)
        return EXIT_OK;
    char message[320];
    snprintf(message, sizeof(message), "Topic '%s' does not exist as expected", o->topic);
    return failed(message);
}

/* Describes one topic; a topic listed but deleted since is skipped. */
static int describe_one(zhandle_t *zh, const char *name, const topics_opts_t *o, const describe_ctx_t *c)
{
    coord_topic_desc_t d;
    coord_admin_result_t res;
    if (coord_admin_describe_topic(zh, name, &d, &res) == 0) {
        print_topic(zh, &d, c);
        coord_admin_topic_desc_free(&d);
        return EXIT_OK;
    }
    if (res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION)
        return o->topic ? not_found(o) : EXIT_OK;
    return failed(res.message);
}

static int describe_listed(zhandle_t *zh, const topics_opts_t *o, const describe_ctx_t *c)
{
    if (o->topic)
        return describe_one(zh, o->topic, o, c);
    char err[256], **names;
    int n, rc = EXIT_OK;
    if (coord_admin_list_topics(zh, &names, &n, err, sizeof(err)) < 0)
        return failed(err);
    for (int i = 0; i < n && rc == EXIT_OK; i++)
        rc = describe_one(zh, names[i], o, c);
    coord_admin_names_free(names, n);
    return rc;
}

static int describe_topics(zhandle_t *zh, const topics_opts_t *o)
{
    describe_ctx_t c = {.filters = o->given & DESCRIBE_FILTERS};
    char err[256];
    if (o->given & OPT_UNAVAILABLE) {
        if (!(c.live = malloc(sizeof(int32_t) * COORD_ADMIN_MAX_BROKERS)))
            return failed("out of memory");
        if (coord_admin_live_brokers(zh, c.live, COORD_ADMIN_MAX_BROKERS, &c.nlive, err, sizeof(err)) < 0) {
            free(c.live);
            return failed(err);
        }
    }
    int rc = describe_listed(zh, o, &c);
    free(c.live);
    return rc;
}

static int delete_topic(zhandle_t *zh, const topics_opts_t *o)
{
    coord_admin_result_t res;
    if (coord_admin_delete_topic(zh, o->topic, &res) == 0) {
        printf("Deleted topic %s.\n", o->topic);
        return EXIT_OK;
    }
    if (res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION)
        return not_found(o);
    return failed(res.message);
}

/* Current partition count, -1 when the topic does not exist, -2 on error
 * (already reported). */
static int partition_count(zhandle_t *zh, const char *topic)
{
    coord_topic_desc_t d;
    coord_admin_result_t res;
    if (coord_admin_describe_topic(zh, topic, &d, &res) < 0) {
        if (res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION)
            return -1;
        failed(res.message);
        return -2;
    }
    int n = d.npartitions;
    coord_admin_topic_desc_free(&d);
    return n;
}

/* kafka-topics.sh's old --alter --config / --delete-config: one change of
 * the topic's configs, as `kipper configs --alter` makes it. */
static int alter_configs(zhandle_t *zh, const topics_opts_t *o)
{
    int n = o->nconfigs + o->ndeleted;
    coord_config_op_t *ops = calloc((size_t)n, sizeof(*ops));
    coord_admin_result_t res;
    if (!ops)
        return failed("out of memory");
    for (int i = 0; i < o->nconfigs; i++) {
        snprintf(ops[i].key, sizeof(ops[i].key), "%s", o->configs[i].key);
        snprintf(ops[i].value, sizeof(ops[i].value), "%s", o->configs[i].value);
        ops[i].op = COORD_CFG_SET;
    }
    for (int i = 0; i < o->ndeleted; i++) {
        snprintf(ops[o->nconfigs + i].key, sizeof(ops[0].key), "%s", o->deleted[i]);
        ops[o->nconfigs + i].op = COORD_CFG_DELETE;
    }
    int rc = coord_admin_alter_configs(zh, COORD_ENTITY_TOPIC, o->topic, ops, n, 0, 0, &res);
    free(ops);
    if (rc < 0)
        return res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION ? not_found(o) : failed(res.message);
    printf("WARNING: Altering topic configuration from this script has been deprecated and may be removed in "
           "future releases.\n         Going forward, please use kafka-configs.sh for this functionality\n"
           "Updated config for topic \"%s\".\n",
           o->topic);
    return EXIT_OK;
}

/* As kafka-topics.sh: --replica-assignment lists every partition; the ones
 * the topic already has are skipped. */
static int alter_topic(zhandle_t *zh, const topics_opts_t *o)
{
    if (o->given & (OPT_CONFIG | OPT_DELETE_CONFIG)) {
        int rc = alter_configs(zh, o);
        if (rc != EXIT_OK || !(o->given & OPT_PARTITIONS))
            return rc;
    }
    coord_admin_result_t res;
    const int32_t *added = NULL;
    int current = partition_count(zh, o->topic);
    if (current == -1)
        return not_found(o);
    if (current < 0)
        return EXIT_FAILED;
    if (o->assignment && o->npartitions_assigned != o->partitions) {
        char message[160];
        snprintf(message, sizeof(message), "--replica-assignment lists %d partitions but --partitions is %d",
                 o->npartitions_assigned, o->partitions);
        return failed(message);
    }
    if (o->assignment && current < o->npartitions_assigned)
        added = o->assignment + (size_t)current * (size_t)o->assigned_rf;
    if (coord_admin_add_partitions(zh, o->topic, o->partitions, added, o->assigned_rf, 0, &res) < 0)
        return res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION ? not_found(o) : failed(res.message);
    printf("WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of "
           "the messages will be affected\nAdding partitions succeeded!\n");
    return EXIT_OK;
}

/* kafka-topics.sh's own checks of the counts (TopicCommand), before anything
 * is asked of the coordinator; -1 would otherwise mean "the default". */
static int check_counts(const topics_opts_t *o)
{
    if ((o->given & OPT_PARTITIONS) && o->partitions < 1)
        return failed("The partitions must be greater than 0");
    if ((o->given & OPT_REPLICATION_FACTOR) && (o->replication_factor < 1 || o->replication_factor > 32767))
        return failed("The replication factor must be between 1 and 32767");
    return EXIT_OK;
}

/* --bootstrap-server: the request handed to topics_kafka.c. */
static int run_through_broker(const topics_opts_t *o)
{
    static const struct {
        unsigned opt, report;
    } reports[] = {{OPT_UNDER_REPLICATED, TK_UNDER_REPLICATED},
                   {OPT_UNAVAILABLE, TK_UNAVAILABLE},
                   {OPT_UNDER_MIN_ISR, TK_UNDER_MIN_ISR},
                   {OPT_AT_MIN_ISR, TK_AT_MIN_ISR},
                   {OPT_WITH_OVERRIDES, TK_WITH_OVERRIDES}};
    static const topics_kafka_action_t actions[] = {[CREATE] = TK_CREATE, [LIST] = TK_LIST,
                                                    [DESCRIBE] = TK_DESCRIBE, [DELETE] = TK_DELETE,
                                                    [ALTER] = TK_ALTER};
    ta_kv_t configs[COORD_MAX_TOPIC_CONFIGS];
    for (int i = 0; i < o->nconfigs; i++)
        configs[i] = (ta_kv_t){o->configs[i].key, o->configs[i].value};
    topics_kafka_t t = {.servers = o->bootstrap, .action = actions[o->action], .topic = o->topic,
                        .partitions = o->partitions, .rf = o->replication_factor, .assignment = o->assignment,
                        .nassigned = o->npartitions_assigned, .assigned_rf = o->assigned_rf, .configs = configs,
                        .nconfigs = o->nconfigs, .if_not_exists = (o->given & OPT_IF_NOT_EXISTS) != 0,
                        .if_exists = (o->given & OPT_IF_EXISTS) != 0,
                        .exclude_internal = (o->given & OPT_EXCLUDE_INTERNAL) != 0};
    for (size_t k = 0; k < sizeof(reports) / sizeof(reports[0]); k++)
        if (o->given & reports[k].opt)
            t.reports |= reports[k].report;
    char err[600];
    if (o->command_config && kafka_client_command_config(o->command_config, &t.timeout_ms, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper topics: %s\n", err);
        return EXIT_FAILED;
    }
    return topics_kafka_run(&t);
}

static int run_action(const topics_opts_t *o)
{
    char err[512];
    if (check_counts(o) != EXIT_OK)
        return EXIT_FAILED;
    if (o->bootstrap)
        return run_through_broker(o);
    zhandle_t *zh = coord_admin_connect(o->zookeeper, CONNECT_TIMEOUT_MS, err, sizeof(err));
    if (!zh)
        return failed(err);
    int rc = EXIT_FAILED;
    switch (o->action) {
    case CREATE: rc = create_topic(zh, o); break;
    case LIST: rc = list_topics(zh, o); break;
    case DESCRIBE: rc = describe_topics(zh, o); break;
    case DELETE: rc = delete_topic(zh, o); break;
    case ALTER: rc = alter_topic(zh, o); break;
    case NO_ACTION: break;
    }
    fflush(stdout);
    zookeeper_close(zh);
    return rc;
}

int topics_main(int argc, char **argv)
{
    topics_opts_t *o = calloc(1, sizeof(*o));   /* 64 configs: about 74 KiB */
    if (!o)
        return failed("out of memory");
    int rc = parse_command_line(o, argc, argv);
    if (rc == 0)
        rc = run_action(o);
    else if (rc < 0)
        rc = EXIT_OK;   /* --help */
    free(o->assignment);
    free(o);
    return rc;
}
