/* fetcher.h -- the follower side of replication (docs/replication.md,
 * "Followers fetch"; Kafka's ReplicaFetcher), on the broker's loop.
 *
 * One link (TCP connection) per leader broker carries every partition this
 * broker follows from that leader. On a link, one request is out at a time:
 * OffsetForLeaderEpoch for the partitions that just started following
 * (becomeFollower's truncation, repl/truncation.h), else one long-polled
 * Fetch (ReplicaId = this broker, MaxWaitMs/MinBytes) for all the others, each
 * from its log end. The leader answers from its segment files with sendfile;
 * the follower appends the batches as they are (offsets and leader epochs
 * kept, CRC checked), moves its HW to min(leader HW, its LEO), and asks again.
 *
 * Errors are per partition and never stop the link: a partition whose leader
 * fenced it or is not the leader any more waits (replica.fetch.backoff.ms) and
 * has its coordinator state read again; OFFSET_OUT_OF_RANGE below the
 * leader's log start starts the log over there.
 *
 * Ownership: the fetcher belongs to the broker's loop; a followed replica
 * points at its fetch_part_t (r->fetch) and the fetcher at the replica, and
 * fetcher_unfollow breaks both before the replica goes. */
#ifndef KIPPER_BROKER_REPL_FETCHER_H
#define KIPPER_BROKER_REPL_FETCHER_H

#include <stdint.h>

#include "broker/core/broker_impl.h"

typedef struct fetcher fetcher_t;
typedef struct fetch_part fetch_part_t;

fetcher_t *fetcher_create(broker_t *b);
/* Closes every link (the replicas stay, no longer following). */
void fetcher_destroy(fetcher_t *f);
/* becomeFollower: r follows leader at epoch; a replica already following
 * someone else (or at another epoch) starts over with truncation. */
void fetcher_follow(fetcher_t *f, replica_t *r, int32_t leader, int32_t epoch);
/* r no longer follows (it leads now, or it is stopping). */
void fetcher_unfollow(fetcher_t *f, replica_t *r);
/* A broker's address may have changed: links to it reconnect. */
void fetcher_broker_changed(fetcher_t *f, int32_t id);
/* Whether r is in sync with its leader as far as this follower knows (its
 * last fetch returned no error): for tests and tools. */
int fetcher_following(const replica_t *r);

#endif
