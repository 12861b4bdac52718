/* configs.c -- `kipper configs`, in the manner of kafka-configs.sh. With
 * --zookeeper, as its ZooKeeper mode, it reads and writes /config/topics and
 * /config/brokers in the coordinator directly (coord_admin.h), so it works
 * with no broker running; running brokers apply a change when their watches
 * fire. With --bootstrap-server, as Kafka 3.x's, it asks a broker
 * (configs_kafka.c).
 *
 *   kipper configs (--bootstrap-server B | --zookeeper Z) --entity-type topics|brokers
 *                  (--entity-name N | --entity-default) --describe
 *   kipper configs ... --alter --add-config k=v,k2=[a,b] --delete-config k,k2
 *
 * Output follows kafka-configs.sh (with --zookeeper: "Configs for topic 't'
 * are k=v,...", "Completed Updating config for entity: topic 't'."). Exit
 * codes: 0 done, 1 the operation failed, 2 the command line is wrong. */
#define _GNU_SOURCE
#include "configs.h"
#include "broker/coord/coord_admin.h"
#include "broker/coord/coord_connect.h"
#include "configs_kafka.h"
#include "kafka_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_MS 15000

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct {
    int describe, alter, entity_default, all, broker_defaults;
    const char *zookeeper, *bootstrap, *entity_type, *entity_name, *add, *del;
    const char *topic, *broker;      /* the shorthands --topic T, --broker B */
    const char *command_config;      /* --command-config (with --bootstrap-server) */
    coord_entity_t type;
    coord_config_op_t ops[COORD_MAX_TOPIC_CONFIGS];
    int nops;
    char args[1024];                 /* the command line, for kafka-configs.sh's error line */
} configs_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper configs (--bootstrap-server host:port[,host:port...] |\n"
            "                       --zookeeper host:port[,host:port...][/chroot])\n"
            "                      --entity-type topics|brokers [--entity-name N | --entity-default]\n"
            "                      (--describe [--all] | --alter [--add-config k=v,...] [--delete-config k,...])\n"
            "       --topic T, --broker B and --broker-defaults stand for the --entity-type forms\n"
            "\n"
            "  --bootstrap-server  brokers to ask, as Kafka 3.x's kafka-configs.sh (DescribeConfigs,\n"
            "                   IncrementalAlterConfigs): --describe prints each config the entity sets with\n"
            "                   its synonyms, --all every config\n"
            "  --command-config (--bootstrap-server) a client properties file: request.timeout.ms (or\n"
            "                   default.api.timeout.ms) bounds each request (default 15000);\n"
            "                   security.protocol must be PLAINTEXT; other keys are ignored\n"
            "  --zookeeper      the coordinator, as zookeeper.connect in server.properties: configs are read\n"
            "                   and written there, with no broker needed\n"
            "  --entity-name    a topic, or a broker id; --entity-default: every broker's dynamic default\n"
            "                   (/config/brokers/<default>); --describe without either lists every entity\n"
            "  --add-config     configs to set, k=v separated by commas; a list value in square brackets:\n"
            "                   leader.replication.throttled.replicas=[0:1,1:2]\n"
            "  --delete-config  names of configs to remove, separated by commas\n"
            "\n"
            "Topic configs: every one of Kafka 3.x (those kipper does not act on are stored and named in a\n"
            "log line; docs/configuration.md lists the ones it acts on).\n"
            "Broker configs: log.retention.ms (.minutes, .hours), log.retention.bytes, log.segment.bytes, log.roll.ms\n"
            "(.hours), message.max.bytes, log.message.timestamp.type, min.insync.replicas,\n"
            "unclean.leader.election.enable, leader.replication.throttled.rate, follower.replication.throttled.rate.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kipper configs: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return EXIT_USAGE;
}

static int failed(const configs_opts_t *o, const char *message)
{
    fprintf(stderr, "Error while executing config command with args '%s'\n%s\n", o->args, message);
    return EXIT_FAILED;
}

/* ---- the command line ---- */

/* --add-config's "k=v,k2=[a,b]": commas inside square brackets belong to
 * the value, whose brackets go (kafka-configs.sh's rule). */
static int parse_add(configs_opts_t *o, const char *s)
{
    while (*s) {
        size_t n = 0;
        int depth = 0;
        while (s[n] && (s[n] != ',' || depth > 0)) {
            depth += s[n] == '[' ? 1 : s[n] == ']' ? -1 : 0;
            n++;
        }
        const char *eq = memchr(s, '=', n);
        if (!eq || eq == s || o->nops == COORD_MAX_TOPIC_CONFIGS)
            return usage_error("--add-config takes k=v pairs separated by commas, got '%s'", s);
        coord_config_op_t *op = &o->ops[o->nops++];
        size_t klen = (size_t)(eq - s), vlen = n - klen - 1;
        const char *v = eq + 1;
        if (vlen >= 2 && v[0] == '[' && v[vlen - 1] == ']')
            v++, vlen -= 2;
        if (klen >= sizeof(op->key) || vlen >= sizeof(op->value))
            return usage_error("--add-config: '%.200s' is too long", s);
        memcpy(op->key, s, klen);
        memcpy(op->value, v, vlen);
        op->op = COORD_CFG_SET;
        s += n + (s[n] ? 1 : 0);
    }
    return 0;
}

static int parse_delete(configs_opts_t *o, const char *s)
{
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof(o->ops[0].key) || o->nops == COORD_MAX_TOPIC_CONFIGS)
            return usage_error("--delete-config takes names separated by commas, got '%s'", s);
        coord_config_op_t *op = &o->ops[o->nops++];
        memcpy(op->key, s, n);
        op->op = COORD_CFG_DELETE;
        s += n + (s[n] ? 1 : 0);
    }
    return 0;
}

static int parse_arg(configs_opts_t *o, int argc, char **argv, int *i)
{
    static const char *const valued[] = {"--zookeeper",  "--bootstrap-server", "--entity-type", "--entity-name",
                                         "--add-config", "--delete-config",    "--topic",       "--broker",
                                         "--command-config"};
    const char **slots[] = {&o->zookeeper, &o->bootstrap, &o->entity_type, &o->entity_name,
                            &o->add,       &o->del,       &o->topic,       &o->broker,
                            &o->command_config};
    const struct {
        const char *name;
        int *flag;
    } flags[] = {{"--describe", &o->describe},
                 {"--alter", &o->alter},
                 {"--entity-default", &o->entity_default},
                 {"--all", &o->all},
                 {"--broker-defaults", &o->broker_defaults}};
    const char *arg = argv[*i];
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        if (strcmp(arg, flags[k].name) == 0) {
            *flags[k].flag = 1;
            return 0;
        }
    }
    for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
        size_t n = strlen(valued[k]);
        if (strncmp(arg, valued[k], n) != 0 || (arg[n] && arg[n] != '='))
            continue;
        if (!arg[n] && *i + 1 >= argc)
            return usage_error("%s needs a value", valued[k]);
        *slots[k] = arg[n] ? arg + n + 1 : argv[++*i];
        return 0;
    }
    return usage_error("unknown option '%s'", arg);
}

/* kafka-configs.sh's shorthands: --topic T is --entity-type topics
 * --entity-name T, --broker B and --broker-defaults the same for brokers. */
static int apply_shorthands(configs_opts_t *o)
{
    int shorthands = !!o->topic + !!o->broker + o->broker_defaults;
    if (shorthands == 0)
        return 0;
    if (shorthands > 1 || o->entity_type || o->entity_name || o->entity_default)
        return usage_error("%s", "give one of --topic, --broker, --broker-defaults, or --entity-type with "
                                 "--entity-name or --entity-default");
    o->entity_type = o->topic ? "topics" : "brokers";
    o->entity_name = o->topic ? o->topic : o->broker;
    o->entity_default = o->broker_defaults;
    return 0;
}

/* Exactly one of --bootstrap-server and --zookeeper; --all and the broker
 * ids Kafka checks go with the first. */
static int check_mode(const configs_opts_t *o)
{
    if (!o->bootstrap == !o->zookeeper)
        return usage_error("%s", "give exactly one of --bootstrap-server (the brokers) and --zookeeper "
                                 "(the coordinator)");
    if (o->all && (!o->bootstrap || !o->describe))
        return usage_error("%s", "--all goes with --bootstrap-server and --describe");
    if (o->command_config && !o->bootstrap)
        return usage_error("%s", "--command-config goes with --bootstrap-server");
    if (o->bootstrap && o->type == COORD_ENTITY_BROKER && o->entity_name) {
        const char *p = o->entity_name;
        while (*p >= '0' && *p <= '9')
            p++;
        if (!o->entity_name[0] || *p || p - o->entity_name > 9)
            return usage_error("The entity name for brokers must be a valid integer broker id, but it is: %s",
                               o->entity_name);
    }
    return 0;
}

static int check_options(configs_opts_t *o)
{
    if (o->describe == o->alter)
        return usage_error("%s", "give one of --describe, --alter");
    if (apply_shorthands(o) != 0)
        return EXIT_USAGE;
    if (!o->entity_type)
        return usage_error("%s", "--entity-type is required (topics or brokers)");
    if (strcmp(o->entity_type, "topics") != 0 && strcmp(o->entity_type, "brokers") != 0)
        return usage_error("--entity-type must be topics or brokers, got '%s'", o->entity_type);
    o->type = o->entity_type[0] == 't' ? COORD_ENTITY_TOPIC : COORD_ENTITY_BROKER;
    if (o->entity_default && (o->entity_name || o->type == COORD_ENTITY_TOPIC))
        return usage_error("%s", "--entity-default goes with --entity-type brokers alone, without --entity-name");
    if (o->alter && !o->entity_name && !o->entity_default)
        return usage_error("%s", "--alter needs --entity-name or --entity-default");
    if (o->alter && !o->add && !o->del)
        return usage_error("%s", "--alter needs --add-config or --delete-config");
    if (o->describe && (o->add || o->del))
        return usage_error("%s", "--add-config and --delete-config go with --alter");
    if ((o->add && parse_add(o, o->add)) || (o->del && parse_delete(o, o->del)) || check_mode(o))
        return EXIT_USAGE;
    char chroot[COORD_CHROOT_MAX], err[300];
    if (o->zookeeper && coord_parse_connect(o->zookeeper, chroot, sizeof(chroot), err, sizeof(err)) < 0)
        return usage_error("--zookeeper: %s", err);
    return 0;
}

/* ---- the actions ---- */

/* kafka-configs.sh's names of an entity: "topic 't'", "brokers '1'",
 * "default brokers". */
static void entity_label(coord_entity_t type, const char *name, char *out, size_t n)
{
    if (type == COORD_ENTITY_BROKER && strcmp(name, COORD_CONFIG_DEFAULT) == 0)
        snprintf(out, n, "default brokers");
    else
        snprintf(out, n, "%s '%s'", type == COORD_ENTITY_TOPIC ? "topic" : "brokers", name);
}

static int describe_one(zhandle_t *zh, const configs_opts_t *o, const char *name)
{
    coord_config_entry_t *e = calloc(COORD_MAX_TOPIC_CONFIGS, sizeof(*e));
    coord_admin_result_t res;
    int n = 0;
    char label[300];
    if (!e)
        return failed(o, "out of memory");
    int rc = coord_admin_read_configs(zh, o->type, name, e, &n, NULL, &res);
    if (rc == 0) {
        entity_label(o->type, name, label, sizeof(label));
        printf("Configs for %s are ", label);
        for (int i = 0; i < n; i++)
            printf("%s%s=%s", i ? "," : "", e[i].key, e[i].value);
        printf("\n");
    }
    free(e);
    return rc == 0 ? EXIT_OK : failed(o, res.message);
}

/* Every topic, or every broker with a config node. */
static int describe_all(zhandle_t *zh, const configs_opts_t *o)
{
    char err[256], **names = NULL;
    int n = 0, rc = EXIT_OK;
    if (o->type == COORD_ENTITY_TOPIC) {
        if (coord_admin_list_topics(zh, &names, &n, err, sizeof(err)) < 0)
            return failed(o, err);
    } else {
        struct String_vector kids = {0, NULL};
        int zrc = zoo_get_children(zh, COORD_CONFIG_BROKERS, 0, &kids);
        if (zrc != ZOK && zrc != ZNONODE)
            return failed(o, zerror(zrc));
        names = calloc((size_t)kids.count + 1, sizeof(char *));
        for (int i = 0; names && i < kids.count; i++)
            names[n++] = strdup(kids.data[i]);
        deallocate_String_vector(&kids);
    }
    for (int i = 0; i < n && rc == EXIT_OK; i++)
        if (names[i])
            rc = describe_one(zh, o, names[i]);
    coord_admin_names_free(names, n);
    return rc;
}

/* kafka-configs.sh's ZooKeeper mode refuses to delete what is not there. */
static int check_deletes(zhandle_t *zh, const configs_opts_t *o, const char *name)
{
    coord_config_entry_t *e = calloc(COORD_MAX_TOPIC_CONFIGS, sizeof(*e));
    coord_admin_result_t res;
    char missing[512] = "";
    int n = 0;
    if (!e)
        return failed(o, "out of memory");
    int rc = coord_admin_read_configs(zh, o->type, name, e, &n, NULL, &res);
    for (int k = 0; rc == 0 && k < o->nops; k++) {
        int found = o->ops[k].op != COORD_CFG_DELETE;
        for (int i = 0; i < n && !found; i++)
            found = strcmp(e[i].key, o->ops[k].key) == 0;
        if (!found)
            snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s", missing[0] ? "," : "",
                     o->ops[k].key);
    }
    free(e);
    if (rc < 0)
        return failed(o, res.message);
    if (missing[0]) {
        char message[600];
        snprintf(message, sizeof(message), "Invalid config(s): %s", missing);
        return failed(o, message);
    }
    return EXIT_OK;
}

static int alter(zhandle_t *zh, const configs_opts_t *o)
{
    const char *name = o->entity_default ? COORD_CONFIG_DEFAULT : o->entity_name;
    coord_admin_result_t res;
    char label[300];
    int rc = check_deletes(zh, o, name);
    if (rc != EXIT_OK)
        return rc;
    if (coord_admin_alter_configs(zh, o->type, name, o->ops, o->nops, 0, 0, &res) < 0)
        return failed(o, res.message);
    entity_label(o->type, name, label, sizeof(label));
    printf("Completed Updating config for entity: %s.\n", label);
    return EXIT_OK;
}

static void keep_args(configs_opts_t *o, int argc, char **argv)
{
    size_t at = 0;
    for (int i = 1; i < argc && at < sizeof(o->args); i++)
        at += (size_t)snprintf(o->args + at, sizeof(o->args) - at, "%s%s", i > 1 ? " " : "", argv[i]);
}

/* --bootstrap-server: the request handed to configs_kafka.c. */
static int run_through_broker(const configs_opts_t *o)
{
    ta_alter_op_t ops[COORD_MAX_TOPIC_CONFIGS];
    for (int i = 0; i < o->nops; i++)
        ops[i] = (ta_alter_op_t){o->ops[i].key, o->ops[i].value,
                                 o->ops[i].op == COORD_CFG_DELETE ? TA_OP_DELETE : TA_OP_SET};
    configs_kafka_t c = {.servers = o->bootstrap, .alter = o->alter, .all = o->all,
                         .type = o->type == COORD_ENTITY_TOPIC ? TA_RESOURCE_TOPIC : TA_RESOURCE_BROKER,
                         .name = o->entity_default ? "" : o->entity_name, .ops = ops, .nops = o->nops,
                         .args = o->args};
    char err[600];
    if (o->command_config && kafka_client_command_config(o->command_config, &c.timeout_ms, err, sizeof(err)) < 0) {
        fprintf(stderr, "kipper configs: %s\n", err);
        return EXIT_FAILED;
    }
    return configs_kafka_run(&c);
}

int configs_main(int argc, char **argv)
{
    configs_opts_t *o = calloc(1, sizeof(*o));   /* 64 operations: about 74 KiB */
    char err[512];
    if (!o)
        return EXIT_FAILED;
    keep_args(o, argc, argv);
    int rc = EXIT_OK;
    for (int i = 1; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            free(o);
            return EXIT_OK;
        }
        rc = parse_arg(o, argc, argv, &i);
    }
    if (rc == EXIT_OK)
        rc = check_options(o);
    if (rc == EXIT_OK && o->bootstrap) {
        rc = run_through_broker(o);
        free(o);
        return rc;
    }
    zhandle_t *zh = rc == EXIT_OK ? coord_admin_connect(o->zookeeper, CONNECT_TIMEOUT_MS, err, sizeof(err)) : NULL;
    if (rc == EXIT_OK && !zh)
        rc = failed(o, err);
    if (zh) {
        const char *name = o->entity_default ? COORD_CONFIG_DEFAULT : o->entity_name;
        rc = o->alter ? alter(zh, o) : name ? describe_one(zh, o, name) : describe_all(zh, o);
        fflush(stdout);
        zookeeper_close(zh);
    }
    free(o);
    return rc;
}
