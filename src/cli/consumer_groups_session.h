/* consumer_groups_session.h -- what the parts of `kipper consumer-groups`
 * share (consumer_groups.c: the command line, the connections, --list,
 * --describe, --delete and --delete-offsets; consumer_groups_reset.c:
 * --reset-offsets): the session over the bootstrap broker, finding a
 * group's coordinator, the partitions' offsets from their leaders, and the
 * output's conventions. Not used outside the tool. */
#ifndef KIPPER_CLI_CONSUMER_GROUPS_SESSION_H
#define KIPPER_CLI_CONSUMER_GROUPS_SESSION_H

#include "consumer_groups.h"

#define CG_CLIENT_ID "kipper-consumer-groups"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct {
    const cg_opts_t *o;
    kafka_client_t boot;
    int boot_open;
} cg_session_t;

/* "Error: " and fmt (with two string arguments) on stderr. */
void cg_error(const char *fmt, const char *a, const char *b);
/* A connection to the group's coordinator, found through the bootstrap
 * broker; one that is not ready yet is asked again until --timeout. 0, or
 * -1 said on stderr (k needs no close then). */
int cg_open_coordinator(cg_session_t *s, const char *group, kafka_client_t *k, ga_broker_t *node);
/* Leaders of every partition of ps from the cluster's metadata, then the
 * offsets at each timestamp asked (stamps[0..nstamps)). 0 or -1. */
int cg_fill_offsets(cg_session_t *s, ga_partitions_t *ps, const int64_t *stamps, int nstamps);
/* One line of a table as kafka-consumer-groups.sh prints it: a newline
 * first, then each cell left-aligned in its width, one space between. */
void cg_print_row(const int *widths, const char *const *cells, int n);
/* v in buf, or "-" when negative (unknown). */
const char *cg_num(char *buf, size_t n, int64_t v);

/* --reset-offsets (consumer_groups_reset.c): an exit status. */
int cg_do_reset(cg_session_t *s);

#endif
