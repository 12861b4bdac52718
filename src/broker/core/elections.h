/* elections.h -- the leader elections asked for in the coordinator
 * (broker/coord/coord_elect.h): /admin/preferred_replica_election makes the
 * leader of each listed partition step down for its preferred replica
 * (repl_preferred_asked); /admin/unclean_leader_election lets each listed
 * partition with no live ISR member elect another replica. Both are watched
 * from the start of each coordinator session. Loop thread only. */
#ifndef KIPPER_BROKER_CORE_ELECTIONS_H
#define KIPPER_BROKER_CORE_ELECTIONS_H

#include "broker_impl.h"

void elections_read(broker_t *b);
/* A watch fired on path: 1 when it was one of ours (and is handled). */
int elections_event(broker_t *b, int type, const char *path);

#endif
