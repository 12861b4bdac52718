/* read_replica.h -- the replica a consumer should fetch from (KIP-392), as
 * Kafka's RackAwareReplicaSelector chooses it on the leader when
 * replica.selector.class names it: a consumer that gives its rack
 * (client.rack, Fetch v11's RackId) reads from the leader when the leader
 * is in that rack; else from the most caught-up follower in it (the largest
 * log end, then the most recently caught up); else from the leader. The
 * leader answers a fetch with the chosen follower as PreferredReadReplica
 * and no records, and the consumer fetches from it from then on.
 *
 * As Kafka 3.x, only followers in the ISR whose log end has reached the
 * fetch offset are candidates (a lagging follower would keep the consumer
 * behind the producers for as long as it lags). Pure: no I/O. */
#ifndef KIPPER_BROKER_REPL_READ_REPLICA_H
#define KIPPER_BROKER_REPL_READ_REPLICA_H

#include <stdint.h>

typedef struct {
    int32_t id;
    const char *rack;         /* its broker's broker.rack; "" when none */
    int64_t leo;              /* its log end, as its last fetch told the leader */
    uint64_t caught_up_ms;    /* when it last had everything the leader had */
} read_replica_view_t;

/* The follower of candidates[0..n) that a consumer in client_rack should
 * read from, or -1 for the leader (in leader_rack). */
int32_t read_replica_select(const char *leader_rack, const read_replica_view_t *candidates, int n,
                            const char *client_rack);

#endif
