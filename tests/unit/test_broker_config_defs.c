/* test_broker_config_defs.c -- the table of Kafka's broker configs
 * (broker_config_defs.c): its rows agree with themselves and with the
 * coordinator's tables, bad values get Kafka's messages, and
 * server.properties keeps and checks every key of it. */
#include <stdio.h>
#include <string.h>

#include "broker/core/broker_config.h"
#include "broker/core/broker_config_defs.h"
#include "broker_config_text.h"
#include "suites.h"
#include "unit.h"

static void test_rows_are_sound(void)
{
    const coord_config_def_t *d, *prev = NULL;
    char err[512];
    size_t n = 0;
    for (size_t i = 0; (d = broker_config_def_at(i)) != NULL; i++, prev = d, n++) {
        CHECK(prev == NULL || strcmp(prev->name, d->name) < 0);   /* name order, each once */
        CHECK(broker_config_def(d->name) == d);
        if (d->dflt && coord_config_check(d, d->dflt, err, sizeof(err)) < 0) {
            fprintf(stderr, "default of %s refused: %s\n", d->name, err);
            CHECK(0);
        }
        if (d->type == COORD_CFG_PASSWORD)
            CHECK(d->dflt == NULL && !d->acted_on);
        CHECK(d->update_mode >= COORD_MODE_READ_ONLY && d->update_mode <= COORD_MODE_CLUSTER_WIDE);
    }
    CHECK(n > 200 && n <= BROKER_STATICS_MAX);
    CHECK(broker_config_def("no.such.key") == NULL);
}

/* The configs kipper changes on a running broker are rows of the table with
 * the same type, default and synonyms; Kafka lets each change, or the first
 * of its names (log.retention.ms for log.retention.hours). */
static void test_dynamic_rows_agree(void)
{
    const coord_config_def_t *d;
    for (size_t i = 0; (d = coord_config_def_at(COORD_ENTITY_BROKER, i)) != NULL; i++) {
        const coord_config_def_t *full = broker_config_def(d->name);
        CHECK(full != NULL);
        if (!full)
            continue;
        CHECK(full->type == d->type && full->acted_on);
        CHECK(full->update_mode != COORD_MODE_READ_ONLY || strstr(d->name, ".hours") || strstr(d->name, ".minutes"));
        CHECK((full->dflt == NULL && d->dflt == NULL) || (full->dflt && d->dflt && strcmp(full->dflt, d->dflt) == 0));
        for (int k = 1; k < COORD_SYNONYMS_MAX; k++)
            CHECK((full->synonyms[k] == NULL && d->synonyms[k] == NULL) ||
                  (full->synonyms[k] && d->synonyms[k] && strcmp(full->synonyms[k], d->synonyms[k]) == 0));
    }
    /* Every broker config behind a topic config is a key of the table. */
    for (size_t i = 0; (d = coord_config_def_at(COORD_ENTITY_TOPIC, i)) != NULL; i++)
        for (int k = 0; k < COORD_SYNONYMS_MAX && d->synonyms[k]; k++)
            CHECK(broker_config_def(d->synonyms[k]) != NULL);
}

static void check_refused(const char *key, const char *value, const char *message)
{
    char err[512] = "";
    const coord_config_def_t *d = broker_config_def(key);
    CHECK(d != NULL);
    if (!d)
        return;
    CHECK_EQ(coord_config_check(d, value, err, sizeof(err)), -1);
    if (strcmp(err, message) != 0) {
        fprintf(stderr, "%s=%s: got '%s', want '%s'\n", key, value, err, message);
        CHECK(0);
    }
}

static void test_bad_values(void)
{
    check_refused("num.network.threads", "abc", "Invalid value abc for configuration num.network.threads: "
                                                "Not a number of type INT");
    check_refused("num.io.threads", "0", "Invalid value 0 for configuration num.io.threads: Value must be at least 1");
    check_refused("offsets.topic.replication.factor", "40000", "Invalid value 40000 for configuration "
                                                                "offsets.topic.replication.factor: Not a number of type SHORT");
    check_refused("log.cleaner.dedupe.buffer.size", "1.5", "Invalid value 1.5 for configuration "
                                                            "log.cleaner.dedupe.buffer.size: Not a number of type LONG");
    check_refused("ssl.client.auth", "maybe", "Invalid value maybe for configuration ssl.client.auth: "
                                              "String must be one of: required, requested, none");
    check_refused("log.cleaner.min.cleanable.ratio", "1.5", "Invalid value 1.5 for configuration "
                                                             "log.cleaner.min.cleanable.ratio: Value must be no more than 1");
    check_refused("process.roles", "broker,leader", "Invalid value leader for configuration process.roles: "
                                                    "String must be one of: broker, controller");
    check_refused("delete.topic.enable", "yes", "Invalid value yes for configuration delete.topic.enable: "
                                               "Expected value to be either true or false");
    check_refused("principal.builder.class", "my builder", "Invalid value my builder for configuration "
                                                          "principal.builder.class: Class my builder could not be "
                                                          "found (not a Java class name)");
    check_refused("inter.broker.protocol.version", "9.9", "Invalid value 9.9 for configuration "
                                                          "inter.broker.protocol.version: Version 9.9 is not a valid version");
    char err[256];
    const coord_config_def_t *d = broker_config_def("create.topic.policy.class.name");
    CHECK_EQ(coord_config_check(d, "com.example.Policy$Inner", err, sizeof(err)), 0);
    d = broker_config_def("log.cleaner.io.max.bytes.per.second");
    CHECK_EQ(coord_config_check(d, "1e9", err, sizeof(err)), 0);
}

#define parse unit_broker_config_parse

static void test_server_properties_keeps_every_key(void)
{
    static broker_config_t bc;   /* large: kept off the stack */
    char err[1024] = "";
    CHECK_EQ(parse("broker.id=0\nzookeeper.connect=z:1\nnum.io.threads=4\nsasl.jaas.config=secret\n"
                   "log.cleaner.delete.retention.ms=1000\nnum.partitions=2\nlog.retention.ms=5\n",
                   &bc, err, sizeof(err)), 0);
    CHECK_STR(broker_config_static_value(&bc, "num.io.threads"), "4");
    CHECK_STR(broker_config_static_value(&bc, "sasl.jaas.config"), "");   /* set, its text not kept */
    CHECK_STR(broker_config_static_value(&bc, "log.cleaner.delete.retention.ms"), "1000");
    CHECK_STR(broker_config_static_value(&bc, "num.partitions"), "2");
    CHECK_STR(broker_config_static_value(&bc, "log.retention.ms"), "5");
    CHECK(broker_config_static_value(&bc, "num.network.threads") == NULL);
    CHECK(broker_config_static_value(&bc, "broker.id") != NULL);
    /* A key kipper does not act on is checked with Kafka's rules... */
    CHECK_EQ(parse("broker.id=0\nzookeeper.connect=z:1\nnum.network.threads=abc\n", &bc, err, sizeof(err)), -1);
    CHECK(strstr(err, "Invalid value abc for configuration num.network.threads: Not a number of type INT") != NULL);
    CHECK_EQ(parse("broker.id=0\nzookeeper.connect=z:1\nbackground.threads=0\n", &bc, err, sizeof(err)), -1);
    CHECK(strstr(err, "background.threads: Value must be at least 1") != NULL);
    /* ... one kipper reads keeps kipper's reading ("yes" is true there). */
    CHECK_EQ(parse("broker.id=0\nzookeeper.connect=z:1\nauto.create.topics.enable=yes\n", &bc, err, sizeof(err)), 0);
    CHECK_EQ(bc.auto_create_topics, 1);
}

/* The server.properties Kafka 3.x ships (config/server.properties, comments
 * left out) starts a broker. */
static void test_kafka_stock_file(void)
{
    static broker_config_t bc;
    char err[1024] = "";
    const char *stock = "broker.id=0\nnum.network.threads=3\nnum.io.threads=8\nsocket.send.buffer.bytes=102400\n"
                        "socket.receive.buffer.bytes=102400\nsocket.request.max.bytes=104857600\n"
                        "log.dirs=/tmp/kafka-logs\nnum.partitions=1\nnum.recovery.threads.per.data.dir=1\n"
                        "offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n"
                        "transaction.state.log.min.isr=1\nlog.retention.hours=168\n"
                        "log.retention.check.interval.ms=300000\nzookeeper.connect=localhost:2181\n"
                        "zookeeper.connection.timeout.ms=18000\ngroup.initial.rebalance.delay.ms=0\n";
    CHECK_EQ(parse(stock, &bc, err, sizeof(err)), 0);
    CHECK_STR(broker_config_static_value(&bc, "transaction.state.log.min.isr"), "1");
    CHECK_EQ(bc.group_initial_rebalance_delay_ms, 0);
}

void suite_broker_config_defs(void)
{
    RUN(test_kafka_stock_file);
    RUN(test_rows_are_sound);
    RUN(test_dynamic_rows_agree);
    RUN(test_bad_values);
    RUN(test_server_properties_keeps_every_key);
}
