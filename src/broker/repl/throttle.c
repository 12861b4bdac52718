/* throttle.c -- the move throttle (docs/replication.md, Reassignment): a
 * move's catch-up traffic, fetches of a moving partition by a replica
 * outside its ISR, is held to leader.replication.throttled.rate on the
 * leader (what it sends) and follower.replication.throttled.rate on the
 * follower (what it asks for), so moving a large partition does not take
 * the bandwidth producers and in-sync followers need. In-sync replicas and
 * partitions not being moved are never throttled. */
#include "repl.h"
#include "repl_internal.h"
#include "isr.h"

int repl_move_traffic(const partition_t *p, int32_t replica)
{
    return p->reassigning && !isr_contains(p->isr, p->nisr, replica);
}

static byte_rate_t *side_limit(broker_t *b, repl_side_t side)
{
    return side == REPL_LEADER_SIDE ? &b->repl->leader_throttle : &b->repl->follower_throttle;
}

void repl_throttle_start(broker_t *b)
{
    uint64_t now = loop_now_ms(b->loop);
    byte_rate_init(&b->repl->leader_throttle, b->cfg.leader_replication_throttled_rate, now);
    byte_rate_init(&b->repl->follower_throttle, b->cfg.follower_replication_throttled_rate, now);
}

void repl_throttle_set_rate(broker_t *b, repl_side_t side, int64_t rate)
{
    byte_rate_set_rate(side_limit(b, side), rate, loop_now_ms(b->loop));
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
