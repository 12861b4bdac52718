/* console.h -- `kipper console-producer` and `kipper console-consumer`,
 * kafka-console-producer.sh and kafka-console-consumer.sh of Kafka 3.x:
 * lines from stdin become records (console_producer.c), records of a
 * topic's partitions become lines on stdout (console_consumer.c, with
 * --group as a group member: console_group.h). They speak Kafka over kafka_client.h (Metadata and
 * ListOffsets as group_admin.h asks them, Produce, Fetch) with the records
 * of console_records.h. The command-line parsing and the printing of a
 * record are pure and declared here for the unit tests. */
#ifndef KIPPER_CLI_CONSOLE_H
#define KIPPER_CLI_CONSOLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "console_records.h"
#include "group_admin.h"

#define CONSOLE_TIMEOUT_MS 30000   /* each request's answer (Kafka's request.timeout.ms) */
#define CONSOLE_SEPARATOR_MAX 64

typedef struct {
    const char *bootstrap, *topic;
    int partition;                        /* -1: Kafka's partitioner (partitioner.h) */
    /* LineMessageReader's --property settings (console_line.c) */
    int parse_key, parse_headers, ignore_error, has_null_marker;
    char key_separator[CONSOLE_SEPARATOR_MAX];
    char headers_delimiter[CONSOLE_SEPARATOR_MAX], headers_separator[CONSOLE_SEPARATOR_MAX];
    char headers_key_separator[CONSOLE_SEPARATOR_MAX], null_marker[CONSOLE_SEPARATOR_MAX];
    int acks;                             /* -1 (all), 0 or 1 */
    int batch_lines;                      /* records sent at most in one Produce */
} cp_opts_t;

typedef enum { CC_FROM_DEFAULT, CC_FROM_EARLIEST, CC_FROM_LATEST, CC_FROM_OFFSET } cc_from_t;

typedef struct {
    const char *bootstrap, *topic;
    const char *group;                    /* NULL: no group (console_group.h) */
    const char *group_property;           /* --consumer-property group.id=, the same as --group */
    int partition;                        /* -1: every partition */
    cc_from_t from;                       /* where to start; DEFAULT: earliest with --from-beginning, else latest */
    int64_t offset;                       /* CC_FROM_OFFSET */
    int from_beginning;
    int64_t max_messages;                 /* -1: no limit */
    int64_t timeout_ms;                   /* -1: wait for ever */
    int isolation_level;                  /* 0 read_uncommitted, 1 read_committed */
    int skip_message_on_error;            /* accepted: the formatter here cannot fail on a record */
    /* DefaultMessageFormatter's --property settings (console_format.c) */
    int print_key, print_offset, print_partition, print_timestamp, print_headers, print_value;
    char key_separator[CONSOLE_SEPARATOR_MAX], line_separator[CONSOLE_SEPARATOR_MAX];
    char headers_separator[CONSOLE_SEPARATOR_MAX], null_literal[CONSOLE_SEPARATOR_MAX];
} cc_opts_t;

int console_producer_main(int argc, char **argv);
int console_consumer_main(int argc, char **argv);

/* The command lines (argv[0] is the command's name). 0, 1 for --help, or -1
 * with err saying what is wrong. */
int cp_parse_args(int argc, char **argv, cp_opts_t *o, char *err, size_t errlen);
int cc_parse_args(int argc, char **argv, cc_opts_t *o, char *err, size_t errlen);

/* Line line_number of the input (line[0..len), no newline) as the record
 * LineMessageReader makes of it (console_line.c): key and value point into
 * line, the headers are encoded into headers (cleared first) and point
 * there. 0, or -1 with err worded as Kafka's (a delimiter missing without
 * ignore.error, a header key equal to null.marker). */
int cp_line_record(const cp_opts_t *o, const char *line, size_t len, int64_t line_number, cr_input_t *out,
                   buf_t *headers, char *err, size_t errlen);

/* One record as kafka-console-consumer.sh's DefaultMessageFormatter prints
 * it, line.separator included (console_format.c). */
void cc_print_record(FILE *f, const cc_opts_t *o, int32_t partition, const cr_record_t *r);

/* ---- the cluster, for both tools (console_cluster.c) ---- */

void console_sleep_ms(int ms);
/* The cluster's metadata of topic into out (freed first), asked again
 * until each partition used (partition -1: all) has a leader, for a few
 * seconds. 0, or -1 with the reason on stderr (the topic unknown, the
 * bootstrap broker failed). */
int console_metadata(kafka_client_t *boot, const char *topic, int partition, ga_cluster_t *out);
/* The partitions used (partition -1: all) into out, with their leaders. 0,
 * or -1 with the reason on stderr (no such partition). */
int console_partitions(const ga_cluster_t *c, const char *topic, int partition, ga_partitions_t *out);
/* Each partition of ps takes its leader in c (-1 when c lacks it). */
void console_update_leaders(ga_partitions_t *ps, const ga_cluster_t *c);
/* The index in c->brokers of broker id leader, or -1. */
int console_leader_index(const ga_cluster_t *c, int32_t leader);

/* One connection to each broker of a cluster, opened when first used. */
typedef struct {
    kafka_client_t *v;   /* v[i]: to brokers[i]; fd -1: not open */
    int n;
} console_conns_t;

/* The open connection to c->brokers[bi], or NULL (warned about on stderr).
 * A connection that failed is closed by its user (kafka_client_close) and
 * opened again here when next asked for. */
kafka_client_t *console_conn(console_conns_t *cs, const ga_cluster_t *c, int bi, const char *client_id);
void console_conns_close(console_conns_t *cs);

#endif
