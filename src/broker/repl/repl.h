/* repl.h -- replication (the ISR protocol of docs/replication.md, with its
 * fixes): what the rest of the broker calls.
 *
 * The folder's parts:
 * - isr.c, commitq.c, truncation.c: the state machines, without I/O;
 * - leadership.c: leader election through the coordinator, becomeLeader,
 *   becomeFollower, stopping leading (session expiry, a fenced write);
 * - isr_sync.c: the leader's side while leading: followers' fetch positions,
 *   the HW and the commitQ, ISR changes written to the coordinator (fenced);
 * - follow.c and fetcher.c: the follower's side: its log operations, and the
 *   fetcher that drives them over one connection per leader;
 * - move.c and throttle.c: partition moves, and the throttle on their
 *   catch-up traffic;
 * - preferred.c: leadership back to the preferred replica;
 * - read_replica.c: the replica a consumer in a rack should fetch from (KIP-392);
 * - lease.c: a leader cut off from its coordinator steps aside;
 * - shutdown.c: controlled shutdown (leadership handed over before leaving).
 *
 * Threading: everything runs on the broker's loop and owns no thread. */
#ifndef KIPPER_BROKER_REPL_REPL_H
#define KIPPER_BROKER_REPL_REPL_H

#include <stdint.h>

#include "broker/core/broker_impl.h"
#include "broker/repl/commitq.h"

/* read_replica.c: the follower a consumer in client_rack fetching from
 * fetch_offset should read from, or -1 (the leader: this one), when
 * replica.selector.class is Kafka's rack-aware one and r leads. */
int32_t repl_preferred_read_replica(const broker_t *b, const replica_t *r, const char *client_rack,
                                    int64_t fetch_offset);

/* The fetcher and the ISR check timer. 0, or -1 out of memory. */
int repl_start(broker_t *b);
void repl_stop(broker_t *b);

/* ---- the move throttle (throttle.c) ---- */

typedef enum { REPL_LEADER_SIDE, REPL_FOLLOWER_SIDE } repl_side_t;

/* A fetch of p by replica, seen from side, is a move's catch-up traffic
 * (replica is not in p's ISR, and p is being moved or the topic's
 * *.replication.throttled.replicas names p on this broker): the throttle
 * applies to it. */
int repl_move_traffic(const broker_t *b, const partition_t *p, int32_t replica, repl_side_t side);
/* Such traffic may go now (on the leader: answer it; on the follower: ask
 * for it); charged with what went, into debt if need be. */
int repl_throttle_open(broker_t *b, repl_side_t side);
void repl_throttle_charge(broker_t *b, repl_side_t side, int64_t bytes);
uint64_t repl_throttle_open_at(broker_t *b, repl_side_t side);

/* ---- roles (leadership.c) ---- */

/* The coordinator's state of p changed (replicas, leader or ISR node, or the
 * live brokers): stand for election, become leader or follower, or stop
 * leading a replica no longer assigned. */
void repl_reconcile(broker_t *b, partition_t *p);
/* Session expired: every replica stops leading at once (waiting produce
 * requests get NOT_LEADER_OR_FOLLOWER). */
void repl_stop_leading_all(broker_t *b, const char *why);
/* r is about to go (unassigned, deleted, broker stopping): no longer leads
 * or follows. */
void repl_replica_stopping(broker_t *b, replica_t *r);
/* The live brokers changed: the ISRs we lead drop the dead at once; the
 * fetcher reconnects to leaders that moved. */
void repl_brokers_changed(broker_t *b, int32_t id);

/* ---- the coordinator lease (lease.c) ---- */

/* The coordinator link was lost within the session (ZooKeeper's client says
 * CONNECTING): once the session may have expired and the followers of a
 * partition led here went elsewhere, this broker stops serving clients. */
void repl_lease_link_lost(broker_t *b, int session_timeout_ms);
/* The link is back within the session (answer as leader again), or the
 * session is over (its expiry stops the leading). */
void repl_lease_link_back(broker_t *b);
/* The lease lapsed: clients are refused (broker_api.c). */
int repl_lease_lapsed(const broker_t *b);
/* Logs (a few lines a minute at most) that a client's request was refused. */
void repl_lease_client_refused(broker_t *b, const char *ip, int port, const char *api);

/* ---- the leader while leading (isr_sync.c) ---- */

/* api_fetch: follower id fetched r from offset. 0, or the Kafka error to
 * answer that partition with (id is not one of its replicas). */
int16_t repl_follower_fetched(broker_t *b, replica_t *r, int32_t id, int64_t offset);
/* After a leader append: the HW may move (an ISR of this replica alone). */
void repl_leader_appended(broker_t *b, replica_t *r);
/* acks=all before the append: NOT_ENOUGH_REPLICAS when the ISR is smaller
 * than the partition's min.insync.replicas, else 0. */
int16_t repl_acks_all_check(broker_t *b, replica_t *r);
/* acks=all after the append: 1 when the HW already passed offset (error
 * set to the outcome), 0 when w was queued on the commitQ (done runs later,
 * from the loop, never inside this call), -1 when the commitQ is full. */
int repl_await_commit(broker_t *b, replica_t *r, commit_waiter_t *w, int64_t offset, commit_done_fn done,
                      void *arg, int16_t *error);

/* ---- the follower's log (follow.c; the fetcher calls these) ---- */

/* Appends batches the leader sent (offsets and epochs kept). 0, or -1 when
 * they do not continue our log or fail their CRC. */
int replica_append_fetched(broker_t *b, replica_t *r, const uint8_t *batches, size_t len);
/* HW = min(the leader's HW, our LEO); the leader's is kept (r->leader_hw). */
void replica_follower_high_watermark(broker_t *b, replica_t *r, int64_t leader_hw);
/* The leader's log starts at leader_log_start (DeleteRecords, retention):
 * ours moves there too (up to our LEO), as Kafka's follower does. */
void replica_follower_log_start(broker_t *b, replica_t *r, int64_t leader_log_start);
/* becomeFollower's cut: everything from offset on goes. 0 or -1. */
int replica_truncate(broker_t *b, replica_t *r, int64_t offset);
/* The leader's log starts past our end: start over at offset. 0 or -1. */
int replica_restart_at(broker_t *b, replica_t *r, int64_t offset);

/* ---- the preferred replica (preferred.c) ---- */

/* Whether p's preferred replica (the first of its list) could lead instead
 * of its leader: live, in the ISR, not the leader already. */
int repl_preferred_possible(const broker_t *b, const partition_t *p);
/* A preferred election was asked for p: its leader, if it is us, steps
 * down for the preferred replica. */
void repl_preferred_asked(broker_t *b, partition_t *p);
/* auto.leader.rebalance.enable's periodic check. */
void repl_balance_check(broker_t *b);

/* ---- controlled shutdown (shutdown.c) ---- */

/* On SIGTERM: hand each partition we lead to another live ISR member and
 * leave the ISRs of the others, then call done (at once when there is
 * nothing to hand over, or after controlled.shutdown timeouts). */
void repl_controlled_shutdown(broker_t *b, void (*done)(broker_t *b));
/* r leads, and goes (unassigned here, or the broker stopping): one fenced
 * multi writes the ISR without us and deletes our leader node, so the rest
 * of the ISR elects one of themselves at once. r then has no role. */
void repl_hand_over(broker_t *b, replica_t *r);

#endif
