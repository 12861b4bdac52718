/* coord_elect.h -- leader elections asked for through the coordinator:
 * Kafka's ZooKeeper-mode /admin/preferred_replica_election (the preferred
 * replica of each listed partition should lead) and kipper's own
 * /admin/unclean_leader_election (each listed partition may elect a replica
 * outside its ISR once, kipper elect --unclean). Both hold
 * {"version":1,"partitions":[{"topic":"t","partition":0},...]}; the tool that
 * writes one deletes it when the elections are done (the unclean one is
 * ephemeral too, so it goes with its writer's session should the writer die). The documents, and the
 * synchronous calls `kipper elect` and the admin thread use. */
#ifndef KIPPER_BROKER_COORD_ELECT_H
#define KIPPER_BROKER_COORD_ELECT_H

#include <stddef.h>
#include <stdint.h>

#include "coord_admin.h"

#define COORD_PREFERRED_ELECTION "/admin/preferred_replica_election"
#define COORD_UNCLEAN_ELECTION "/admin/unclean_leader_election"
#define COORD_ELECT_MAX_PARTITIONS 100000

typedef struct {
    char topic[COORD_TOPIC_NAME_MAX + 1];
    int32_t partition;
} coord_tp_t;

/* *out malloc'd (free it); a partition named twice, a bad topic name or a
 * malformed document is refused. 0, or -1 with err. */
int coord_tp_list_parse(const char *data, size_t len, coord_tp_t **out, int *n, char *err, size_t errlen);
/* malloc'd, NUL-terminated; NULL out of memory. */
char *coord_tp_list_format(const coord_tp_t *tps, int n);

/* Creates path with the list (and /admin if missing). 0; 1 when an
 * election of that kind is in progress (the node exists), err saying so;
 * -1 with err. */
int coord_elect_request(zhandle_t *zh, const char *path, const coord_tp_t *tps, int n, char *err, size_t errlen);
/* Deletes path (gone already is fine). */
int coord_elect_done(zhandle_t *zh, const char *path, char *err, size_t errlen);

#endif
