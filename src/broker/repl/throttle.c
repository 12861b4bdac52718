/* throttle.c -- the move throttle (docs/replication.md, Reassignment): a
 * move's catch-up traffic, fetches of a moving partition by a replica
 * outside its ISR, is held to leader.replication.throttled.rate on the
 * leader (what it sends) and follower.replication.throttled.rate on the
 * follower (what it asks for), so moving a large partition does not take
 * the bandwidth producers and in-sync followers need. In-sync replicas are
 * never throttled. Kafka's tools mark the replicas to hold in the topic's
 * leader.replication.throttled.replicas / follower.replication.throttled.
 * replicas instead; a replica named there is held as a moving one is.
 *
 * The rates are read from b->cfg at each use, so a dynamic change
 * (dynamic_config.c) applies to the next fetch. */
#include "repl.h"
#include "repl_internal.h"
#include "isr.h"
#include "broker/core/dynamic_config.h"

int repl_move_traffic(const broker_t *b, const partition_t *p, int32_t replica, repl_side_t side)
{
    if (isr_contains(p->isr, p->nisr, replica))
        return 0;
    int listed_side = side == REPL_LEADER_SIDE ? THROTTLE_LEADER : THROTTLE_FOLLOWER;
    return p->reassigning || config_replica_throttled(p->topic, listed_side, p->id, b->cfg.broker_id);
}

static byte_rate_t *side_limit(broker_t *b, repl_side_t side)
{
    byte_rate_t *r = side == REPL_LEADER_SIDE ? &b->repl->leader_throttle : &b->repl->follower_throttle;
    int64_t rate = side == REPL_LEADER_SIDE ? b->cfg.leader_replication_throttled_rate
                                            : b->cfg.follower_replication_throttled_rate;
    if (r->rate != rate)
        byte_rate_set_rate(r, rate, loop_now_ms(b->loop));
    return r;
}

void repl_throttle_start(broker_t *b)
{
    uint64_t now = loop_now_ms(b->loop);
    byte_rate_init(&b->repl->leader_throttle, b->cfg.leader_replication_throttled_rate, now);
    byte_rate_init(&b->repl->follower_throttle, b->cfg.follower_replication_throttled_rate, now);
}

int repl_throttle_open(broker_t *b, repl_side_t side)
{
    return byte_rate_open(side_limit(b, side), loop_now_ms(b->loop));
}

void repl_throttle_charge(broker_t *b, repl_side_t side, int64_t bytes)
{
    byte_rate_charge(side_limit(b, side), bytes, loop_now_ms(b->loop));
}

uint64_t repl_throttle_open_at(broker_t *b, repl_side_t side)
{
    return byte_rate_open_at(side_limit(b, side), loop_now_ms(b->loop));
}
