/* coord_config_defs.c -- the one table of the configs kipper knows, as data:
 * every topic config of Kafka 3.x (its LogConfig, up to 3.9) and the
 * dynamic broker configs kipper applies, each with Kafka's type, range,
 * default and synonyms, and whether kipper acts on it (see coord_config.h).
 * coord_config.c checks values against these rows. */
#include "coord_config.h"

#include <string.h>

#define LONG_MAX_TEXT "9223372036854775807"
#define WEEK_MS_TEXT "604800000"
#define NO_MAX COORD_CFG_NO_MAX
#define ACTED 1
#define STORED 0   /* accepted, stored and reported; kipper does not act on it */

/* Topic configs, in name order. Kafka's numbers (LogConfig's defaults and
 * ServerLogConfigs' for the broker-side ones); the synonyms are Kafka's
 * ServerTopicConfigSynonyms. cleanup.policy is acted on as far as retention
 * goes (only "delete" deletes by time and size, as in Kafka); kipper never
 * compacts, so a compacted topic keeps every record. */
static const coord_config_def_t TOPIC_DEFS[] = {
    {"cleanup.policy", COORD_CFG_LIST, COORD_CHECK_CHOICE_LIST, 0, NO_MAX, "compact, delete", "delete", ACTED,
     {"log.cleanup.policy"}},
    {"compression.gzip.level", COORD_CFG_INT, COORD_CHECK_GZIP_LEVEL, 1, 9, NULL, "-1", STORED,
     {"compression.gzip.level"}},
    {"compression.lz4.level", COORD_CFG_INT, COORD_CHECK_NUMBER, 1, 17, NULL, "9", STORED, {"compression.lz4.level"}},
    {"compression.type", COORD_CFG_STRING, COORD_CHECK_CHOICE, 0, NO_MAX,
     "uncompressed, zstd, lz4, snappy, gzip, producer", "producer", STORED, {"compression.type"}},
    {"compression.zstd.level", COORD_CFG_INT, COORD_CHECK_NUMBER, -131072, 22, NULL, "3", STORED,
     {"compression.zstd.level"}},
    {"delete.retention.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "86400000", STORED,
     {"log.cleaner.delete.retention.ms"}},
    {"file.delete.delay.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "60000", STORED,
     {"log.segment.delete.delay.ms"}},
    {"flush.messages", COORD_CFG_LONG, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, LONG_MAX_TEXT, STORED,
     {"log.flush.interval.messages"}},
    {"flush.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, LONG_MAX_TEXT, STORED,
     {"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}},
    {"follower.replication.throttled.replicas", COORD_CFG_LIST, COORD_CHECK_THROTTLED, 0, NO_MAX, NULL, "", ACTED,
     {NULL}},
    {"index.interval.bytes", COORD_CFG_INT, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "4096", STORED,
     {"log.index.interval.bytes"}},
    {"leader.replication.throttled.replicas", COORD_CFG_LIST, COORD_CHECK_THROTTLED, 0, NO_MAX, NULL, "", ACTED,
     {NULL}},
    {"local.retention.bytes", COORD_CFG_LONG, COORD_CHECK_NUMBER, -2, NO_MAX, NULL, "-2", STORED,
     {"log.local.retention.bytes"}},
    {"local.retention.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, -2, NO_MAX, NULL, "-2", STORED,
     {"log.local.retention.ms"}},
    {"max.compaction.lag.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, LONG_MAX_TEXT, STORED,
     {"log.cleaner.max.compaction.lag.ms"}},
    {"max.message.bytes", COORD_CFG_INT, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "1048588", ACTED, {"message.max.bytes"}},
    {"message.downconversion.enable", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "true", STORED,
     {"log.message.downconversion.enable"}},
    {"message.format.version", COORD_CFG_STRING, COORD_CHECK_VERSION, 0, NO_MAX, NULL, "3.0-IV1", STORED,
     {"log.message.format.version"}},
    {"message.timestamp.after.max.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, LONG_MAX_TEXT, STORED,
     {"log.message.timestamp.after.max.ms"}},
    {"message.timestamp.before.max.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, LONG_MAX_TEXT, STORED,
     {"log.message.timestamp.before.max.ms"}},
    {"message.timestamp.difference.max.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, LONG_MAX_TEXT,
     STORED, {"log.message.timestamp.difference.max.ms"}},
    {"message.timestamp.type", COORD_CFG_STRING, COORD_CHECK_CHOICE, 0, NO_MAX, "CreateTime, LogAppendTime",
     "CreateTime", ACTED, {"log.message.timestamp.type"}},
    {"min.cleanable.dirty.ratio", COORD_CFG_DOUBLE, COORD_CHECK_DOUBLE, 0, 1, NULL, "0.5", STORED,
     {"log.cleaner.min.cleanable.ratio"}},
    {"min.compaction.lag.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "0", STORED,
     {"log.cleaner.min.compaction.lag.ms"}},
    {"min.insync.replicas", COORD_CFG_INT, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, "1", ACTED, {"min.insync.replicas"}},
    {"preallocate", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "false", STORED, {"log.preallocate"}},
    {"remote.log.copy.disable", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "false", STORED, {NULL}},
    {"remote.log.delete.on.disable", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "false", STORED,
     {NULL}},
    {"remote.storage.enable", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "false", STORED, {NULL}},
    {"retention.bytes", COORD_CFG_LONG, COORD_CHECK_NUMBER, INT64_MIN, NO_MAX, NULL, "-1", ACTED,
     {"log.retention.bytes"}},
    {"retention.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, -1, NO_MAX, NULL, WEEK_MS_TEXT, ACTED,
     {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}},
    {"segment.bytes", COORD_CFG_INT, COORD_CHECK_NUMBER, 14, NO_MAX, NULL, "1073741824", ACTED, {"log.segment.bytes"}},
    {"segment.index.bytes", COORD_CFG_INT, COORD_CHECK_NUMBER, 4, NO_MAX, NULL, "10485760", STORED,
     {"log.index.size.max.bytes"}},
    {"segment.jitter.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "0", STORED,
     {"log.roll.jitter.ms", "log.roll.jitter.hours"}},
    {"segment.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, WEEK_MS_TEXT, ACTED,
     {"log.roll.ms", "log.roll.hours"}},
    {"unclean.leader.election.enable", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "false", ACTED,
     {"unclean.leader.election.enable"}},
};

/* The broker configs kipper applies on a running broker (Kafka's dynamic
 * ones it acts on), in name order. The throttle rates exist only here, as in
 * Kafka's DynamicConfig.Broker. */
static const coord_config_def_t BROKER_DEFS[] = {
    {"follower.replication.throttled.rate", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, LONG_MAX_TEXT, ACTED,
     {"follower.replication.throttled.rate"}},
    {"leader.replication.throttled.rate", COORD_CFG_LONG, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, LONG_MAX_TEXT, ACTED,
     {"leader.replication.throttled.rate"}},
    {"log.message.timestamp.type", COORD_CFG_STRING, COORD_CHECK_CHOICE, 0, NO_MAX, "CreateTime, LogAppendTime",
     "CreateTime", ACTED, {"log.message.timestamp.type"}},
    {"log.retention.bytes", COORD_CFG_LONG, COORD_CHECK_NUMBER, -1, NO_MAX, NULL, "-1", ACTED,
     {"log.retention.bytes"}},
    {"log.retention.hours", COORD_CFG_INT, COORD_CHECK_NUMBER, -1, NO_MAX, NULL, "168", ACTED, {"log.retention.hours"}},
    {"log.retention.minutes", COORD_CFG_INT, COORD_CHECK_NUMBER, -1, NO_MAX, NULL, NULL, ACTED,
     {"log.retention.minutes", "log.retention.hours"}},
    {"log.retention.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, -1, NO_MAX, NULL, NULL, ACTED,
     {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}},
    {"log.roll.hours", COORD_CFG_INT, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, "168", ACTED, {"log.roll.hours"}},
    {"log.roll.ms", COORD_CFG_LONG, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, NULL, ACTED,
     {"log.roll.ms", "log.roll.hours"}},
    {"log.segment.bytes", COORD_CFG_INT, COORD_CHECK_NUMBER, 14, NO_MAX, NULL, "1073741824", ACTED,
     {"log.segment.bytes"}},
    {"message.max.bytes", COORD_CFG_INT, COORD_CHECK_NUMBER, 0, NO_MAX, NULL, "1048588", ACTED, {"message.max.bytes"}},
    {"min.insync.replicas", COORD_CFG_INT, COORD_CHECK_NUMBER, 1, NO_MAX, NULL, "1", ACTED, {"min.insync.replicas"}},
    {"unclean.leader.election.enable", COORD_CFG_BOOLEAN, COORD_CHECK_BOOLEAN, 0, NO_MAX, NULL, "false", ACTED,
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
