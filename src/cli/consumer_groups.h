/* consumer_groups.h -- `kipper consumer-groups`, kafka-consumer-groups.sh of
 * Kafka 3.x: --list, --describe (offsets and lag, --members, --state),
 * --reset-offsets, --delete and --delete-offsets, over the Kafka protocol (group_admin.h).
 * The command-line parsing and the choice of each partition's new offset
 * are pure and declared here for the unit tests. */
#ifndef KIPPER_CLI_CONSUMER_GROUPS_H
#define KIPPER_CLI_CONSUMER_GROUPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "group_admin.h"

#define CG_NAMES_MAX 64          /* --group and --topic options */
#define CG_PARTITIONS_MAX 1024   /* partitions named in one --topic T:p,... */
#define CG_DEFAULT_TIMEOUT_MS 5000   /* kafka-consumer-groups.sh's --timeout default */

typedef enum { CG_NO_ACTION, CG_LIST, CG_DESCRIBE, CG_RESET, CG_DELETE, CG_DELETE_OFFSETS } cg_action_t;
typedef enum { CG_SHOW_OFFSETS, CG_SHOW_MEMBERS, CG_SHOW_STATE } cg_show_t;
typedef enum {
    CG_TO_NONE,
    CG_TO_EARLIEST,
    CG_TO_LATEST,
    CG_TO_CURRENT,
    CG_TO_OFFSET,
    CG_TO_DATETIME,
    CG_SHIFT_BY,
    CG_BY_DURATION,   /* resolved to a time (value) like CG_TO_DATETIME */
    CG_FROM_FILE,
} cg_reset_t;

typedef struct {
    cg_action_t action;
    cg_show_t show;
    const char *bootstrap;
    const char *groups[CG_NAMES_MAX];
    int ngroups, all_groups;
    const char *topics[CG_NAMES_MAX];   /* as given: "T" or "T:0,1" */
    int ntopics, all_topics;
    int state_given;                    /* --state, with or without a list */
    const char *states[8];              /* Kafka's names of the states listed */
    int nstates;
    cg_reset_t reset;
    int64_t value;                      /* --to-offset, --shift-by, --to-datetime and --by-duration (ms) */
    const char *from_file;              /* --from-file's path */
    int dry_run, execute, verbose, export_csv;
    int timeout_ms;
} cg_opts_t;

int consumer_groups_main(int argc, char **argv);

/* The command line (argv[0] is the command's name) into o. 0, 1 for
 * --help, or -1 with err saying what is wrong. */
int cg_parse_args(int argc, char **argv, cg_opts_t *o, char *err, size_t errlen);

/* --to-datetime's YYYY-MM-DDTHH:mm:SS.sss, with an optional zone (Z, +HH,
 * +HH:MM, +HHMM; none: the local zone), as Kafka's Utils.getDateTime takes
 * it, into milliseconds since the epoch. 0 or -1. */
int cg_parse_datetime(const char *s, int64_t *ms);

/* --topic's "T" or "T:0,1,2": the topic into topic[n], the partitions into
 * parts (*nparts 0 for "T": all of them). 0 or -1. */
int cg_parse_topic(const char *arg, char *topic, size_t n, int32_t *parts, int maxparts, int *nparts);

/* --by-duration's ISO-8601 duration as Java's Duration.parse takes it
 * without signs: P[nD][T[nH][nM][n[.fff]S]], letters in either case, at
 * least one part, into milliseconds. 0 or -1. (reset_plan.c) */
int cg_parse_duration(const char *s, int64_t *ms);

/* --from-file's plan: lines of topic,partition,offset (blank lines
 * skipped, "\r\n" taken) into ps, each partition's planned offset set.
 * 0, or -1 with err naming the first bad line ("line 3: ..."); then ps
 * holds part of the plan, to be freed, never applied. */
int cg_parse_reset_plan(const char *text, size_t len, ga_partitions_t *ps, char *err, size_t errlen);

/* --export: the plan as the CSV --from-file reads, then a blank line. */
void cg_export_plan(FILE *f, const ga_partitions_t *ps, const int64_t *offsets);

/* The new offset of p under o's reset: kafka-consumer-groups.sh's rules
 * (to-offset and shift-by held within [earliest, latest], a time with no
 * record at or after it goes to the end, to-current keeps the committed
 * offset or takes the end). 0 with *out (and note, when the offset was held
 * in range, saying so), or -1 with note saying why there is none.
 * --from-file takes p->planned, held in range the same way. */
int cg_new_offset(const cg_opts_t *o, const ga_partition_t *p, int64_t *out, char *note, size_t notelen);

#endif
