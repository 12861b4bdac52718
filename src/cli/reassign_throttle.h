/* reassign_throttle.h -- `kipper reassign --throttle`: the move throttle's
 * two broker configs, leader.replication.throttled.rate and
 * follower.replication.throttled.rate (src/broker/repl/throttle.c reads
 * them), set as dynamic configs in /config/brokers/[id] before a plan's
 * moves start, and removed once none of them is in progress, as
 * kafka-reassign-partitions.sh does in ZooKeeper mode. Running brokers pick
 * a change up from their watches (src/broker/core/dynamic_config.c).
 *
 * Synchronous, on the caller's ZooKeeper handle (coord_admin.h). */
#ifndef KIPPER_CLI_REASSIGN_THROTTLE_H
#define KIPPER_CLI_REASSIGN_THROTTLE_H

#include <stddef.h>
#include <stdint.h>

#include "broker/coord/coord_reassign.h"

#define REASSIGN_LEADER_RATE "leader.replication.throttled.rate"
#define REASSIGN_FOLLOWER_RATE "follower.replication.throttled.rate"

/* --throttle's value: bytes per second, a positive decimal integer that fits
 * Kafka's long (no sign, no spaces, no unit). 0, or -1 when s is not one.
 * Pure. */
int reassign_parse_rate(const char *s, int64_t *rate);

/* Both rates set to rate (one incremental SET per broker) on every broker
 * that holds a replica of a moved partition now (current: the plan's
 * partitions as assigned now) or in the plan's target. Stops at the first
 * failure, with err naming the broker; the brokers before it keep the
 * rate. 0 or -1. */
int reassign_throttle_set(zhandle_t *zh, const coord_plan_t *plan, const coord_plan_t *current, int64_t rate,
                          char *err, size_t errlen);

/* Both rates deleted (incremental DELETE) from every registered broker and
 * every broker the plan names, wherever either is set; a broker without
 * them is not written. 1 when some broker had one, 0 when none had, -1
 * with err. */
int reassign_throttle_remove(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen);

#endif
