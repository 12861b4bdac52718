/* topics_kafka.h -- `kipper topics --bootstrap-server`: every action of
 * kafka-topics.sh done through a broker with the Kafka protocol
 * (topic_admin.h), worded as Kafka 3.x's kafka-topics.sh words it. topics.c
 * parses the command line and hands the request here. */
#ifndef KIPPER_CLI_TOPICS_KAFKA_H
#define KIPPER_CLI_TOPICS_KAFKA_H

#include <stdint.h>

#include "topic_admin.h"

typedef enum { TK_CREATE, TK_LIST, TK_DESCRIBE, TK_DELETE, TK_ALTER } topics_kafka_action_t;

/* --describe's reports, as bits; kafka-topics.sh takes one at a time. */
enum {
    TK_UNDER_REPLICATED = 1 << 0,
    TK_UNAVAILABLE = 1 << 1,
    TK_UNDER_MIN_ISR = 1 << 2,
    TK_AT_MIN_ISR = 1 << 3,
    TK_WITH_OVERRIDES = 1 << 4,
};

typedef struct {
    const char *servers;          /* --bootstrap-server */
    int timeout_ms;               /* each request's (--command-config), 0: 15 s */
    topics_kafka_action_t action;
    const char *topic;            /* NULL: every topic; a regular expression but for --create */
    int partitions, rf;           /* -1: not given */
    const int32_t *assignment;    /* --replica-assignment, nassigned partitions of assigned_rf */
    int nassigned, assigned_rf;
    const ta_kv_t *configs;
    int nconfigs;
    int if_not_exists, if_exists, exclude_internal;
    unsigned reports;             /* TK_* */
} topics_kafka_t;

/* Runs the action. The exit code: 0 done, 1 failed (Kafka's words on stderr). */
int topics_kafka_run(const topics_kafka_t *t);

#endif
