/* test_coord_config.c -- configs in the coordinator: the /config documents
 * (coord_data.c), the names kipper knows with Kafka's checks and messages,
 * and what AlterConfigs and IncrementalAlterConfigs make of a set of
 * configs (coord_config.c). The coordinator side is covered by
 * tests/integration/test_configs.py. */
#include "suites.h"
#include "unit.h"

#include "broker/coord/coord_config.h"
#include "broker/wire/kafka_errors.h"

#include <stdio.h>
#include <stdlib.h>

static char err[512];

#define DOC(s) (s), strlen(s)

static void test_config_paths_and_documents(void)
{
    char out[COORD_DOC_MAX];
    CHECK(coord_path_topic_config(out, sizeof(out), "t1") > 0);
    CHECK_STR(out, "/config/topics/t1");
    CHECK(coord_path_broker_config(out, sizeof(out), COORD_CONFIG_DEFAULT) > 0);
    CHECK_STR(out, "/config/brokers/<default>");
    coord_config_entry_t e[COORD_MAX_TOPIC_CONFIGS] = {{"retention.ms", "1000"}, {"segment.bytes", "2000"}};
    CHECK(coord_entity_config_write(out, sizeof(out), e, 2) > 0);
    CHECK_STR(out, "{\"version\":1,\"config\":{\"retention.ms\":\"1000\",\"segment.bytes\":\"2000\"}}");
    coord_config_entry_t back[COORD_MAX_TOPIC_CONFIGS];
    int n = -1;
    CHECK_EQ(coord_entity_config_parse(DOC(out), back, &n, err, sizeof(err)), 0);
    CHECK_EQ(n, 2);
    CHECK_STR(back[1].key, "segment.bytes");
    CHECK_STR(back[1].value, "2000");
    CHECK(coord_entity_config_write(out, sizeof(out), e, 0) > 0);
    CHECK_STR(out, "{\"version\":1,\"config\":{}}");
    /* A name twice would leave which value counts to chance. */
    coord_config_entry_t twice[2] = {{"a", "1"}, {"a", "2"}};
    CHECK_EQ(coord_entity_config_write(out, sizeof(out), twice, 2), -1);
    const char *bad[] = {
        "{\"config\":{}}", "{\"version\":1}", "{\"version\":1,\"config\":[]}",
        "{\"version\":1,\"config\":{\"a\":1}}", "{\"version\":0,\"config\":{}}",
        "{\"version\":1,\"config\":{\"a\":\"1\",\"a\":\"2\"}}", "[]", "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        CHECK_EQ(coord_entity_config_parse(DOC(bad[i]), back, &n, err, sizeof(err)), -1);
        CHECK(err[0] != 0);
    }
    char path[COORD_ENTITY_PATH_MAX];
    CHECK(coord_config_change_write(out, sizeof(out), "topics/foo") > 0);
    CHECK_STR(out, "{\"version\":2,\"entity_path\":\"topics/foo\"}");
    CHECK_EQ(coord_config_change_parse(DOC(out), path, sizeof(path), err, sizeof(err)), 0);
    CHECK_STR(path, "topics/foo");
    CHECK_EQ(coord_config_change_parse(DOC("{\"version\":1,\"entity_path\":\"x\"}"), path, sizeof(path), err,
                                       sizeof(err)),
             -1);
}

static void check_invalid(coord_entity_t type, const char *key, const char *value, const char *message)
{
    err[0] = 0;
    CHECK_EQ(coord_config_valid(type, key, value, err, sizeof(err)), -1);
    CHECK_STR(err, message);
    if (strcmp(err, message) != 0)
        fprintf(stderr, "  got: %s\n", err);
}

static void test_config_names_and_checks(void)
{
    const char *good_topic[][2] = {
        {"leader.replication.throttled.replicas", "*"},
        {"leader.replication.throttled.replicas", " * "},
        {"follower.replication.throttled.replicas", "0:1,1:2"},
        {"follower.replication.throttled.replicas", " 0:1 , 12:3"},
        {"follower.replication.throttled.replicas", ""},
        {"retention.ms", "1000"},
    };
    for (size_t i = 0; i < sizeof(good_topic) / sizeof(good_topic[0]); i++)
        CHECK_EQ(coord_config_valid(COORD_ENTITY_TOPIC, good_topic[i][0], good_topic[i][1], err, sizeof(err)), 0);
    check_invalid(COORD_ENTITY_TOPIC, "leader.replication.throttled.replicas", "0:a",
                  "Invalid value 0:a for configuration leader.replication.throttled.replicas: "
                  "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the "
                  "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
    check_invalid(COORD_ENTITY_TOPIC, "follower.replication.throttled.replicas", "*,0:1",
                  "Invalid value *,0:1 for configuration follower.replication.throttled.replicas: "
                  "follower.replication.throttled.replicas must be the literal '*' or a list of replicas in the "
                  "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
    const char *good_broker[][2] = {
        {"log.retention.ms", "-1"}, {"log.retention.hours", "1"}, {"log.segment.bytes", "1048576"},
        {"leader.replication.throttled.rate", "0"}, {"follower.replication.throttled.rate", "9223372036854775807"},
        {"min.insync.replicas", "2"}, {"unclean.leader.election.enable", "True"},
        {"log.message.timestamp.type", "LogAppendTime"}, {"message.max.bytes", "100"}, {"log.roll.ms", "1"},
    };
    for (size_t i = 0; i < sizeof(good_broker) / sizeof(good_broker[0]); i++)
        CHECK_EQ(coord_config_valid(COORD_ENTITY_BROKER, good_broker[i][0], good_broker[i][1], err, sizeof(err)), 0);
    check_invalid(COORD_ENTITY_BROKER, "broker.id", "3", "Cannot update these configs dynamically: Set(broker.id)");
    check_invalid(COORD_ENTITY_BROKER, "retention.ms", "3",
                  "Cannot update these configs dynamically: Set(retention.ms)");
    check_invalid(COORD_ENTITY_BROKER, "leader.replication.throttled.rate", "-1",
                  "Invalid value -1 for configuration leader.replication.throttled.rate: Value must be at least 0");
    check_invalid(COORD_ENTITY_BROKER, "log.segment.bytes", "13",
                  "Invalid value 13 for configuration log.segment.bytes: Value must be at least 14");
    check_invalid(COORD_ENTITY_TOPIC, "log.retention.ms", "3", "Unknown topic config name: log.retention.ms");
    /* The definitions DescribeConfigs reports from. */
    const coord_config_def_t *d = coord_config_def(COORD_ENTITY_TOPIC, "retention.ms");
    CHECK(d != NULL && d->type == COORD_CFG_LONG && strcmp(d->synonyms[2], "log.retention.hours") == 0);
    CHECK(coord_config_def(COORD_ENTITY_BROKER, "log.retention.hours") != NULL);
    for (size_t i = 1; coord_config_def_at(COORD_ENTITY_TOPIC, i); i++)   /* in name order */
        CHECK(strcmp(coord_config_def_at(COORD_ENTITY_TOPIC, i - 1)->name,
                     coord_config_def_at(COORD_ENTITY_TOPIC, i)->name) < 0);
    for (size_t i = 1; coord_config_def_at(COORD_ENTITY_BROKER, i); i++)
        CHECK(strcmp(coord_config_def_at(COORD_ENTITY_BROKER, i - 1)->name,
                     coord_config_def_at(COORD_ENTITY_BROKER, i)->name) < 0);
    coord_config_entry_t e[2] = {{"unclean.leader.election.enable", "TRUE"}, {"retention.ms", "5"}};
    coord_config_normalize(COORD_ENTITY_TOPIC, e, 2);
    CHECK_STR(e[0].value, "true");
    CHECK(coord_throttled_replica("*", 3, 9));
    CHECK(coord_throttled_replica("0:1, 3:9", 3, 9));
    CHECK(!coord_throttled_replica("0:1,3:8", 3, 9));
    CHECK(!coord_throttled_replica("", 0, 0));
    CHECK(!coord_throttled_replica(NULL, 0, 0));
}

static coord_config_op_t op(const char *key, int kind, const char *value)
{
    coord_config_op_t o = {.op = kind, .null_value = value == NULL};
    snprintf(o.key, sizeof(o.key), "%s", key);
    snprintf(o.value, sizeof(o.value), "%s", value ? value : "");
    return o;
}

static const char *value_of(const coord_config_entry_t *e, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].key, key) == 0)
            return e[i].value;
    return NULL;
}

static void test_config_apply_incremental(void)
{
    static coord_config_entry_t cur[COORD_MAX_TOPIC_CONFIGS] = {{"retention.ms", "1000"}, {"no.such.config", "5"}};
    int n = 2;
    int16_t error;
    coord_config_op_t ops[] = {
        op("segment.bytes", COORD_CFG_SET, "20000"),
        op("retention.ms", COORD_CFG_DELETE, NULL),
        op("leader.replication.throttled.replicas", COORD_CFG_APPEND, "0:1,1:2"),
    };
    /* A name kipper does not know, left alone, does not block the change. */
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, ops, 3, 0, &error, err, sizeof(err)), 0);
    CHECK_EQ(n, 3);
    CHECK(value_of(cur, n, "retention.ms") == NULL);
    CHECK_STR(value_of(cur, n, "segment.bytes"), "20000");
    CHECK_STR(value_of(cur, n, "no.such.config"), "5");
    CHECK_STR(value_of(cur, n, "leader.replication.throttled.replicas"), "0:1,1:2");
    coord_config_op_t more[] = {op("leader.replication.throttled.replicas", COORD_CFG_APPEND, "1:2,2:3")};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, more, 1, 0, &error, err, sizeof(err)), 0);
    CHECK_STR(value_of(cur, n, "leader.replication.throttled.replicas"), "0:1,1:2,2:3");
    coord_config_op_t less[] = {op("leader.replication.throttled.replicas", COORD_CFG_SUBTRACT, "0:1,2:3,7:7")};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, less, 1, 0, &error, err, sizeof(err)), 0);
    CHECK_STR(value_of(cur, n, "leader.replication.throttled.replicas"), "1:2");
    /* Deleting what is not there is no error (Kafka's incremental DELETE). */
    coord_config_op_t gone[] = {op("segment.ms", COORD_CFG_DELETE, NULL)};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, gone, 1, 0, &error, err, sizeof(err)), 0);
    CHECK_EQ(n, 3);
}

static void check_refused(const coord_config_op_t *ops, int nops, int replace, int16_t code, const char *message)
{
    coord_config_entry_t cur[COORD_MAX_TOPIC_CONFIGS] = {{"retention.ms", "1000"}};
    int n = 1;
    int16_t error = 0;
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, ops, nops, replace, &error, err, sizeof(err)), -1);
    CHECK_EQ(error, code);
    CHECK_STR(err, message);
}

static void test_config_apply_refusals(void)
{
    coord_config_op_t append_long[] = {op("retention.ms", COORD_CFG_APPEND, "5")};
    check_refused(append_long, 1, 0, KERR_INVALID_CONFIG, "Config value append is not allowed for config key: retention.ms");
    coord_config_op_t subtract_long[] = {op("segment.ms", COORD_CFG_SUBTRACT, "5")};
    check_refused(subtract_long, 1, 0, KERR_INVALID_CONFIG,
                  "Config value subtract is not allowed for config key: segment.ms");
    coord_config_op_t twice[] = {op("retention.ms", COORD_CFG_SET, "5"), op("retention.ms", COORD_CFG_DELETE, NULL)};
    check_refused(twice, 2, 0, KERR_INVALID_REQUEST, "Error due to duplicate config keys");
    coord_config_op_t null_set[] = {op("retention.ms", COORD_CFG_SET, NULL)};
    check_refused(null_set, 1, 1, KERR_INVALID_REQUEST, "Null value not supported for : retention.ms");
    coord_config_op_t unknown_op[] = {op("retention.ms", 7, "5")};
    check_refused(unknown_op, 1, 0, KERR_INVALID_REQUEST, "Unknown config operation 7");
    coord_config_op_t bad_value[] = {op("retention.ms", COORD_CFG_SET, "soon")};
    check_refused(bad_value, 1, 0, KERR_INVALID_CONFIG,
                  "Invalid value soon for configuration retention.ms: Not a number of type LONG");
    coord_config_op_t unknown[] = {op("retention.hours", COORD_CFG_SET, "1")};
    check_refused(unknown, 1, 1, KERR_INVALID_CONFIG, "Unknown topic config name: retention.hours");
}

/* AlterConfigs replaces the whole set: what it leaves out goes; a key given
 * twice takes its last value (IncrementalAlterConfigs refuses that). */
static void test_config_apply_replace(void)
{
    coord_config_entry_t cur[COORD_MAX_TOPIC_CONFIGS] = {{"retention.ms", "1000"}, {"segment.bytes", "20000"}};
    int n = 2;
    int16_t error;
    coord_config_op_t ops[] = {op("retention.bytes", COORD_CFG_SET, "100")};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, ops, 1, 1, &error, err, sizeof(err)), 0);
    CHECK_EQ(n, 1);
    CHECK_STR(value_of(cur, n, "retention.bytes"), "100");
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, ops, 0, 1, &error, err, sizeof(err)), 0);
    CHECK_EQ(n, 0);
    coord_config_op_t broker[] = {op("log.retention.ms", COORD_CFG_SET, "60000")};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_BROKER, cur, &n, broker, 1, 1, &error, err, sizeof(err)), 0);
    CHECK_STR(value_of(cur, n, "log.retention.ms"), "60000");
    coord_config_op_t twice[] = {op("retention.ms", COORD_CFG_SET, "5"), op("retention.ms", COORD_CFG_SET, "7")};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, cur, &n, twice, 2, 1, &error, err, sizeof(err)), 0);
    CHECK_EQ(n, 1);
    CHECK_STR(value_of(cur, n, "retention.ms"), "7");
}

/* Every topic config of Kafka 3.x's LogConfig (up to 3.9), with a valid
 * value other than its default: all known, each default valid, and only the
 * ones kipper acts on marked so. */
static const struct {
    const char *name, *value;
    int acted_on;
} kafka_topic_configs[] = {
    {"cleanup.policy", "compact,delete", 1},
    {"compression.gzip.level", "6", 0},
    {"compression.lz4.level", "12", 0},
    {"compression.type", "zstd", 0},
    {"compression.zstd.level", "-5", 0},
    {"delete.retention.ms", "3600000", 0},
    {"file.delete.delay.ms", "30000", 0},
    {"flush.messages", "1000", 0},
    {"flush.ms", "1000", 0},
    {"follower.replication.throttled.replicas", "0:1", 1},
    {"index.interval.bytes", "8192", 0},
    {"leader.replication.throttled.replicas", "*", 1},
    {"local.retention.bytes", "1048576", 0},
    {"local.retention.ms", "60000", 0},
    {"max.compaction.lag.ms", "86400000", 0},
    {"max.message.bytes", "2000000", 1},
    {"message.downconversion.enable", "false", 0},
    {"message.format.version", "2.8", 0},
    {"message.timestamp.after.max.ms", "3600000", 0},
    {"message.timestamp.before.max.ms", "3600000", 0},
    {"message.timestamp.difference.max.ms", "3600000", 0},
    {"message.timestamp.type", "LogAppendTime", 1},
    {"min.cleanable.dirty.ratio", "0.25", 0},
    {"min.compaction.lag.ms", "1000", 0},
    {"min.insync.replicas", "2", 1},
    {"preallocate", "true", 0},
    {"remote.log.copy.disable", "true", 0},
    {"remote.log.delete.on.disable", "true", 0},
    {"remote.storage.enable", "true", 0},
    {"retention.bytes", "1073741824", 1},
    {"retention.ms", "86400000", 1},
    {"segment.bytes", "104857600", 1},
    {"segment.index.bytes", "1048576", 0},
    {"segment.jitter.ms", "1000", 0},
    {"segment.ms", "3600000", 1},
    {"unclean.leader.election.enable", "true", 1},
};
#define N_KAFKA_TOPIC_CONFIGS (sizeof(kafka_topic_configs) / sizeof(kafka_topic_configs[0]))

static void test_every_kafka_topic_config(void)
{
    size_t known = 0;
    for (size_t i = 0; coord_config_def_at(COORD_ENTITY_TOPIC, i); i++)
        known++;
    CHECK_EQ(known, N_KAFKA_TOPIC_CONFIGS);
    for (size_t i = 0; i < N_KAFKA_TOPIC_CONFIGS; i++) {
        const coord_config_def_t *d = coord_config_def(COORD_ENTITY_TOPIC, kafka_topic_configs[i].name);
        CHECK(d != NULL);
        if (!d)
            continue;
        CHECK_EQ(coord_config_check(d, kafka_topic_configs[i].value, err, sizeof(err)), 0);
        CHECK(d->dflt != NULL && strcmp(d->dflt, kafka_topic_configs[i].value) != 0);
        CHECK_EQ(coord_config_check(d, d->dflt, err, sizeof(err)), 0);
        CHECK_EQ(d->acted_on, kafka_topic_configs[i].acted_on);
        if (d->acted_on != kafka_topic_configs[i].acted_on)
            fprintf(stderr, "  %s: acted_on %d\n", d->name, d->acted_on);
    }
}

/* Kafka's ranges and messages for the types the configs kipper does not
 * act on bring in. */
static void test_topic_config_types_and_ranges(void)
{
    const char *good[][2] = {
        {"min.cleanable.dirty.ratio", "0"}, {"min.cleanable.dirty.ratio", "1"}, {"min.cleanable.dirty.ratio", "1e-1"},
        {"min.cleanable.dirty.ratio", " 0.5 "}, {"compression.gzip.level", "-1"}, {"compression.gzip.level", "9"},
        {"compression.zstd.level", "-131072"}, {"compression.zstd.level", "22"}, {"compression.lz4.level", "1"},
        {"message.format.version", "0.10.2"}, {"message.format.version", "0.10.2.1"},
        {"message.format.version", "2.8.1"}, {"message.format.version", "3.0-IV1"},
        {"message.format.version", "0.8.0"}, {"message.format.version", "3.9"},
        {"local.retention.ms", "-2"}, {"local.retention.bytes", "-1"}, {"preallocate", "TRUE"},
        {"flush.messages", "9223372036854775807"}, {"segment.index.bytes", "4"},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        CHECK_EQ(coord_config_valid(COORD_ENTITY_TOPIC, good[i][0], good[i][1], err, sizeof(err)), 0);
        if (coord_config_valid(COORD_ENTITY_TOPIC, good[i][0], good[i][1], err, sizeof(err)) != 0)
            fprintf(stderr, "  refused: %s\n", err);
    }
    check_invalid(COORD_ENTITY_TOPIC, "min.cleanable.dirty.ratio", "1.5",
                  "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1");
    check_invalid(COORD_ENTITY_TOPIC, "min.cleanable.dirty.ratio", "-0.1",
                  "Invalid value -0.1 for configuration min.cleanable.dirty.ratio: Value must be at least 0");
    check_invalid(COORD_ENTITY_TOPIC, "min.cleanable.dirty.ratio", "half",
                  "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE");
    check_invalid(COORD_ENTITY_TOPIC, "min.cleanable.dirty.ratio", "nan",
                  "Invalid value nan for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE");
    check_invalid(COORD_ENTITY_TOPIC, "compression.gzip.level", "0",
                  "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal "
                  "to -1");
    check_invalid(COORD_ENTITY_TOPIC, "compression.lz4.level", "18",
                  "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17");
    check_invalid(COORD_ENTITY_TOPIC, "compression.zstd.level", "-131073",
                  "Invalid value -131073 for configuration compression.zstd.level: Value must be at least -131072");
    check_invalid(COORD_ENTITY_TOPIC, "message.format.version", "2.9",
                  "Invalid value 2.9 for configuration message.format.version: Version 2.9 is not a valid version");
    check_invalid(COORD_ENTITY_TOPIC, "message.format.version", "3",
                  "Invalid value 3 for configuration message.format.version: Version 3 is not a valid version");
    check_invalid(COORD_ENTITY_TOPIC, "local.retention.ms", "-3",
                  "Invalid value -3 for configuration local.retention.ms: Value must be at least -2");
    check_invalid(COORD_ENTITY_TOPIC, "delete.retention.ms", "-1",
                  "Invalid value -1 for configuration delete.retention.ms: Value must be at least 0");
    check_invalid(COORD_ENTITY_TOPIC, "segment.index.bytes", "3",
                  "Invalid value 3 for configuration segment.index.bytes: Value must be at least 4");
    check_invalid(COORD_ENTITY_TOPIC, "index.interval.bytes", "4096x",
                  "Invalid value 4096x for configuration index.interval.bytes: Not a number of type INT");
    check_invalid(COORD_ENTITY_TOPIC, "remote.storage.enable", "yes",
                  "Invalid value yes for configuration remote.storage.enable: Expected value to be either true or "
                  "false");
    check_invalid(COORD_ENTITY_TOPIC, "max.compaction.lag.ms", "0",
                  "Invalid value 0 for configuration max.compaction.lag.ms: Value must be at least 1");
}

/* What Kafka checks across the set, what is noted as not acted on, and
 * which cleanup policies delete. */
static void test_topic_config_set_rules(void)
{
    coord_config_entry_t e[2] = {{"min.compaction.lag.ms", "5000"}, {"max.compaction.lag.ms", "4000"}};
    CHECK_EQ(coord_config_check_set(COORD_ENTITY_TOPIC, e, 2, err, sizeof(err)), -1);
    CHECK_STR(err, "conflict topic config setting min.compaction.lag.ms (5000) > max.compaction.lag.ms (4000)");
    CHECK_EQ(coord_config_check_set(COORD_ENTITY_TOPIC, e, 1, err, sizeof(err)), 0);   /* max at its default */
    int16_t error;
    int n = 1;
    coord_config_op_t lower[] = {op("max.compaction.lag.ms", COORD_CFG_SET, "10")};
    CHECK_EQ(coord_config_apply(COORD_ENTITY_TOPIC, e, &n, lower, 1, 0, &error, err, sizeof(err)), -1);
    CHECK_EQ(error, KERR_INVALID_CONFIG);
    char list[64] = "";
    coord_config_note_unacted(COORD_ENTITY_TOPIC, "retention.ms", list, sizeof(list));
    coord_config_note_unacted(COORD_ENTITY_TOPIC, "delete.retention.ms", list, sizeof(list));
    coord_config_note_unacted(COORD_ENTITY_TOPIC, "no.such.config", list, sizeof(list));
    coord_config_note_unacted(COORD_ENTITY_TOPIC, "preallocate", list, sizeof(list));
    CHECK_STR(list, "delete.retention.ms, preallocate");
    CHECK(coord_cleanup_deletes(NULL));
    CHECK(coord_cleanup_deletes("delete"));
    CHECK(coord_cleanup_deletes("compact, delete"));
    CHECK(!coord_cleanup_deletes("compact"));
    CHECK(!coord_cleanup_deletes(""));
}

void suite_coord_config(void)
{
    RUN(test_every_kafka_topic_config);
    RUN(test_topic_config_types_and_ranges);
    RUN(test_topic_config_set_rules);
    RUN(test_config_paths_and_documents);
    RUN(test_config_names_and_checks);
    RUN(test_config_apply_incremental);
    RUN(test_config_apply_refusals);
    RUN(test_config_apply_replace);
}
