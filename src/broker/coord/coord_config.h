/* coord_config.h -- the configs an operator may change on a running cluster,
 * kept in the coordinator in Kafka's ZooKeeper-mode layout (the documents
 * are coord_data.h's):
 *   /config/topics/[topic]      a topic's overrides
 *   /config/brokers/[id]        one broker's dynamic configs
 *   /config/brokers/<default>   every broker's dynamic configs
 *   /config/changes/config_change_NNNNNNNNNN   a change notification
 *
 * It knows every topic config name of Kafka 3.x and the dynamic broker
 * configs kipper applies, with Kafka's types, ranges, defaults and synonyms
 * (what DescribeConfigs reports) and whether kipper acts on each (one table,
 * coord_config_defs.c); checks values with Kafka's messages; and computes
 * what AlterConfigs (the whole set replaced) and IncrementalAlterConfigs
 * (SET, DELETE, APPEND, SUBTRACT) make of a set. A topic config kipper does
 * not act on is accepted, stored and reported all the same. Pure: no I/O. */
#ifndef KIPPER_BROKER_COORD_CONFIG_H
#define KIPPER_BROKER_COORD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "coord_data.h"

/* Kafka's ConfigType ids (DescribeConfigs v3+). */
enum {
    COORD_CFG_BOOLEAN = 1,
    COORD_CFG_STRING = 2,
    COORD_CFG_INT = 3,
    COORD_CFG_SHORT = 4,
    COORD_CFG_LONG = 5,
    COORD_CFG_DOUBLE = 6,
    COORD_CFG_LIST = 7,
    COORD_CFG_CLASS = 8,
    COORD_CFG_PASSWORD = 9   /* sensitive: its value is never printed nor reported */
};

/* How a value is checked (coord_config_check). */
enum {
    COORD_CHECK_NUMBER,          /* a SHORT, INT or LONG within [min, max] */
    COORD_CHECK_DOUBLE,          /* a DOUBLE within [min, max] (max COORD_CFG_NO_MAX: none) */
    COORD_CHECK_BOOLEAN,         /* true or false, in any case */
    COORD_CHECK_CHOICE,          /* one of choices */
    COORD_CHECK_CHOICE_LIST,     /* a list of choices' items */
    COORD_CHECK_THROTTLED,       /* "*" or partition:broker pairs */
    COORD_CHECK_GZIP_LEVEL,      /* within [min, max] or -1 (gzip's default level) */
    COORD_CHECK_VERSION,         /* a Kafka release or inter-broker protocol version */
    COORD_CHECK_ANY,             /* any text (a STRING, LIST or PASSWORD Kafka does not check) */
    COORD_CHECK_CLASS,           /* a Java class name (Kafka loads it; kipper checks its form) */
};

/* How Kafka lets a broker config change (its DynamicBrokerConfig): only in
 * server.properties, per broker, or for every broker at once. */
enum { COORD_MODE_READ_ONLY = 0, COORD_MODE_PER_BROKER = 1, COORD_MODE_CLUSTER_WIDE = 2 };

typedef enum { COORD_ENTITY_TOPIC, COORD_ENTITY_BROKER } coord_entity_t;

#define COORD_SYNONYMS_MAX 3
#define COORD_CFG_NO_MAX INT64_MAX

typedef struct {
    const char *name;
    int type;                 /* COORD_CFG_* */
    int check;                /* COORD_CHECK_* */
    long long min, max;       /* numbers: the range allowed (max COORD_CFG_NO_MAX: none) */
    const char *choices;      /* strings and lists: ", "-separated, as Kafka prints them */
    const char *dflt;         /* Kafka's default as DescribeConfigs prints it; NULL: none */
    int acted_on;             /* 0: accepted, stored and reported, but kipper does not act on it */
    /* A topic config: the broker configs behind it, first one first (Kafka's
     * TopicConfigSynonyms). A broker config: itself, then the lower-priority
     * names of the same setting (log.retention.ms, .minutes, .hours). */
    const char *synonyms[COORD_SYNONYMS_MAX];
    int update_mode;          /* a broker config: COORD_MODE_*; topic configs leave it 0 */
} coord_config_def_t;

/* The definitions (coord_config_defs.c), in name order: NULL past the end. */
const coord_config_def_t *coord_config_def_at(coord_entity_t type, size_t i);
/* The definition of name, NULL when kipper does not know it: for brokers,
 * only the keys that may change on a running broker. */
const coord_config_def_t *coord_config_def(coord_entity_t type, const char *name);

/* Kafka's rules for one value of d, with Kafka's ConfigException text
 * ("Invalid value V for configuration K: why"). 0, or -1 with err. */
int coord_config_check(const coord_config_def_t *d, const char *value, char *err, size_t errlen);
/* A name and value: unknown names get Kafka's messages ("Unknown topic
 * config name: K"; for brokers "Cannot update these configs dynamically:
 * Set(K)"). 0, or -1 with err. */
int coord_config_valid(coord_entity_t type, const char *key, const char *value, char *err, size_t errlen);
/* What Kafka checks across a whole set once each value is valid:
 * min.compaction.lag.ms not above max.compaction.lag.ms (absent ones at
 * their defaults). 0, or -1 with Kafka's message in err. */
int coord_config_check_set(coord_entity_t type, const coord_config_entry_t *entries, int n, char *err, size_t errlen);
/* Appends key to list (", "-separated, at most cap bytes) when it is a
 * config of type kipper accepts but does not act on: callers name them in
 * one log line when a topic is created or its configs change. */
void coord_config_note_unacted(coord_entity_t type, const char *key, char *list, size_t cap);
/* Booleans in lower case, as Java prints a parsed Boolean ("TRUE" is valid):
 * the broker compares the values it reads without caring how they were typed. */
void coord_config_normalize(coord_entity_t type, coord_config_entry_t *entries, int n);

/* IncrementalAlterConfigs' operations, with Kafka's ids. */
enum { COORD_CFG_SET = 0, COORD_CFG_DELETE = 1, COORD_CFG_APPEND = 2, COORD_CFG_SUBTRACT = 3 };

typedef struct {
    char key[128];
    int op;                   /* COORD_OP_*; AlterConfigs' entries are SET */
    int null_value;           /* the request's value was null */
    char value[1024];
} coord_config_op_t;

/* What the request makes of the entity's configs cur[0..*n) (at most
 * COORD_MAX_TOPIC_CONFIGS), in place: replace (AlterConfigs) makes them
 * exactly the ops, each a SET with a value; otherwise each op changes cur
 * (APPEND and SUBTRACT only for lists, whose absent value is the default).
 * Every resulting value is checked. 0, or -1 with *error (INVALID_REQUEST:
 * a key twice, a null value, an unknown operation; INVALID_CONFIG: an
 * unknown name, a bad value, APPEND/SUBTRACT on a non-list, too many) and
 * Kafka's message in err; cur is then half changed (work on a copy). */
int coord_config_apply(coord_entity_t type, coord_config_entry_t *cur, int *n, const coord_config_op_t *ops, int nops,
                       int replace, int16_t *error, char *err, size_t errlen);

/* leader.replication.throttled.replicas and its follower twin: "*" throttles
 * every replica, otherwise "partition:broker" pairs separated by commas
 * (spaces around each allowed, as Kafka trims them). 1 when value names
 * (partition, broker), else 0. */
int coord_throttled_replica(const char *value, int32_t partition, int32_t broker);

/* Whether a cleanup.policy value (NULL: the default, "delete") deletes old
 * segments by time and size: only when "delete" is one of its items, as in
 * Kafka; a compact-only topic keeps its records (kipper never compacts). */
int coord_cleanup_deletes(const char *value);

#endif
