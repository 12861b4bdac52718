/* configs_kafka.c -- see configs_kafka.h. What Kafka 3.x's kafka-configs.sh
 * (ConfigCommand) does with --bootstrap-server:
 * - --describe names each entity ("Dynamic configs for topic T are:",
 *   "Dynamic configs for broker 1 are:", "Default configs for brokers in
 *   the cluster are:"; "All configs ..." with --all), then one line per
 *   config of that entity's own level (all of them with --all), sorted:
 *   "  k=v sensitive=false synonyms={SOURCE:k=v, ...}". Without a name it
 *   describes every topic (internal ones too), or every broker and then the
 *   default.
 * - --alter refuses to delete a config the entity does not set itself
 *   ("Invalid config(s): k" alone on stderr, as the tool's own refusals
 *   are), then sends one IncrementalAlterConfigs and
 *   prints "Completed updating config for topic T." (or "... for broker 1.",
 *   "Completed updating default config for brokers in the cluster.").
 * Failures the broker answers: "Error while executing config command with
 * args '...'" and the reason on the next line (where Kafka's tool prints the
 * exception and its stack), exit 1. */
#define _GNU_SOURCE
#include "configs_kafka.h"
#include "broker/wire/kafka_errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK_TIMEOUT_MS 15000
#define CK_CLIENT_ID "kipper-configs"

enum { EXIT_OK = 0, EXIT_FAILED = 1 };

static int failed(const configs_kafka_t *c, const char *message)
{
    fprintf(stderr, "Error while executing config command with args '%s'\n%s\n", c->args, message);
    return EXIT_FAILED;
}

/* The source of the configs an entity sets itself. */
static int8_t own_source(int8_t type, const char *name)
{
    if (type == TA_RESOURCE_TOPIC)
        return TA_SOURCE_DYNAMIC_TOPIC;
    return name[0] ? TA_SOURCE_DYNAMIC_BROKER : TA_SOURCE_DYNAMIC_DEFAULT_BROKER;
}

static const char *nullable(const char *s)
{
    return s ? s : "null";
}

static void print_config(const ta_config_t *e)
{
    printf("  %s=%s sensitive=%s synonyms={", e->name, nullable(e->value), e->sensitive ? "true" : "false");
    for (int s = 0; s < e->nsynonyms; s++)
        printf("%s%s:%s=%s", s ? ", " : "", ta_source_name(e->synonyms[s].source), e->synonyms[s].name,
               nullable(e->synonyms[s].value));
    printf("}\n");
}

static int describe_one(kafka_client_t *k, const configs_kafka_t *c, const char *name)
{
    ta_configs_t cs;
    ta_result_t res;
    if (ta_describe_configs(k, c->type, name, &cs, &res) < 0)
        return failed(c, k->err);
    if (res.error != KERR_NONE)
        return failed(c, res.message);
    if (c->type == TA_RESOURCE_BROKER && !name[0])
        printf("Default configs for brokers in the cluster are:\n");
    else
        printf("%s configs for %s %s are:\n", c->all ? "All" : "Dynamic",
               c->type == TA_RESOURCE_TOPIC ? "topic" : "broker", name);
    int8_t own = own_source(c->type, name);
    for (int i = 0; i < cs.n; i++)
        if (c->all || cs.v[i].source == own)
            print_config(&cs.v[i]);
    ta_configs_free(&cs);
    return EXIT_OK;
}

/* Every topic, or every broker and then the brokers' default. */
static int describe_all(kafka_client_t *k, const configs_kafka_t *c)
{
    ta_metadata_t m;
    char id[16];
    int rc = EXIT_OK;
    if (ta_metadata(k, &m) < 0)
        return failed(c, k->err);
    if (c->type == TA_RESOURCE_TOPIC) {
        for (int i = 0; i < m.ntopics && rc == EXIT_OK; i++)
            rc = describe_one(k, c, m.topics[i].name);
    } else {
        for (int i = 0; i < m.nbrokers && rc == EXIT_OK; i++) {
            snprintf(id, sizeof(id), "%d", (int)m.brokers[i]);
            rc = describe_one(k, c, id);
        }
        if (rc == EXIT_OK)
            rc = describe_one(k, c, "");
    }
    ta_metadata_free(&m);
    return rc;
}

/* kafka-configs.sh deletes only what the entity sets itself. */
static int check_deletes(kafka_client_t *k, const configs_kafka_t *c)
{
    ta_configs_t cs;
    ta_result_t res;
    char missing[512] = "";
    if (ta_describe_configs(k, c->type, c->name, &cs, &res) < 0)
        return failed(c, k->err);
    if (res.error != KERR_NONE)
        return failed(c, res.message);
    int8_t own = own_source(c->type, c->name);
    for (int i = 0; i < c->nops; i++) {
        const ta_config_t *e = ta_configs_find(&cs, c->ops[i].name);
        if (c->ops[i].op == TA_OP_DELETE && (!e || e->source != own)) {
            size_t at = strlen(missing);
            snprintf(missing + at, sizeof(missing) - at, "%s%s", at ? "," : "", c->ops[i].name);
        }
    }
    ta_configs_free(&cs);
    if (!missing[0])
        return EXIT_OK;
    /* kafka-configs.sh prints its own refusals (InvalidConfigurationException)
     * alone, without the line naming the command. */
    fprintf(stderr, "Invalid config(s): %s\n", missing);
    return EXIT_FAILED;
}

static int alter(kafka_client_t *k, const configs_kafka_t *c)
{
    ta_result_t res;
    int rc = check_deletes(k, c);
    if (rc != EXIT_OK)
        return rc;
    if (ta_alter_configs(k, c->type, c->name, c->ops, c->nops, &res) < 0)
        return failed(c, k->err);
    if (res.error != KERR_NONE)
        return failed(c, res.message);
    if (c->type == TA_RESOURCE_BROKER && !c->name[0])
        printf("Completed updating default config for brokers in the cluster.\n");
    else
        printf("Completed updating config for %s %s.\n", c->type == TA_RESOURCE_TOPIC ? "topic" : "broker", c->name);
    return EXIT_OK;
}

int configs_kafka_run(const configs_kafka_t *c)
{
    kafka_client_t k;
    char err[1024];
    int timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : CK_TIMEOUT_MS;
    if (kafka_client_open_any(&k, c->servers, timeout_ms, CK_CLIENT_ID, err, sizeof(err)) < 0)
        return failed(c, err);
    int rc = c->alter ? alter(&k, c) : c->name ? describe_one(&k, c, c->name) : describe_all(&k, c);
    fflush(stdout);
    kafka_client_close(&k);
    return rc;
}
