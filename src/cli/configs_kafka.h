/* configs_kafka.h -- `kipper configs --bootstrap-server`: --describe and
 * --alter of topic and broker configs through a broker (DescribeConfigs,
 * IncrementalAlterConfigs; topic_admin.h), worded as Kafka 3.x's
 * kafka-configs.sh words them. configs.c parses the command line. */
#ifndef KIPPER_CLI_CONFIGS_KAFKA_H
#define KIPPER_CLI_CONFIGS_KAFKA_H

#include "topic_admin.h"

typedef struct {
    const char *servers;        /* --bootstrap-server */
    int timeout_ms;             /* each request's (--command-config), 0: 15 s */
    int alter;                  /* else --describe */
    int all;                    /* --all: every config, not only the dynamic ones */
    int8_t type;                /* TA_RESOURCE_TOPIC or TA_RESOURCE_BROKER */
    const char *name;           /* NULL: every entity (--describe); "": the brokers' default */
    const ta_alter_op_t *ops;
    int nops;
    const char *args;           /* the command line, for kafka-configs.sh's error line */
} configs_kafka_t;

/* The exit code: 0 done, 1 failed (Kafka's words on stderr). */
int configs_kafka_run(const configs_kafka_t *c);

#endif
