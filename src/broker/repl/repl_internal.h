/* repl_internal.h -- what the files of broker/repl share and nobody else
 * uses: the replication state the broker holds (b->repl), and the calls
 * between leadership.c, isr_sync.c, shutdown.c and the fetcher. */
#ifndef KIPPER_BROKER_REPL_INTERNAL_H
#define KIPPER_BROKER_REPL_INTERNAL_H

#include "broker/core/broker_impl.h"
#include "base/byte_rate.h"
#include "base/ratelimit.h"
#include "broker/repl/fetcher.h"

struct repl {
    fetcher_t *fetcher;
    byte_rate_t leader_throttle, follower_throttle;   /* the move throttle (throttle.c) */
    loop_timer_t *isr_timer;
    uint64_t isr_check_ms;
    uint64_t balance_at;      /* the next auto.leader.rebalance.enable check */
    /* controlled shutdown in progress (shutdown.c) */
    void (*shutdown_done)(broker_t *b);
    loop_timer_t *shutdown_timer;
    uint64_t shutdown_deadline;
    int handovers;            /* leader handovers in flight */
    /* elections planned in this pass of the loop, sent when it ends (election.c) */
    struct election *elections, **elections_tail;
    loop_timer_t *election_timer;
    /* stepping aside when cut off from the coordinator (lease.c) */
    loop_timer_t *lease_timer;   /* armed while the link is lost and the lease holds */
    uint64_t link_lost_at;       /* 0: the link is up */
    int lease_lapsed;            /* most likely deposed: clients are refused */
    ratelimit_t lease_log;
};

/* isr_sync.c */
void repl_check_isr(broker_t *b, replica_t *r);
void repl_isr_check_all(broker_t *b);
void repl_isr_timer_start(broker_t *b);

/* move.c: a partition move's added replicas (RAR), and its completion once
 * they are all in sync (called with the ISR checks). */
void repl_move_rar(const partition_t *p, int32_t *rar, int *nrar);
void repl_move_check(broker_t *b, replica_t *r);

/* throttle.c: its rates from the configuration, at start. */
void repl_throttle_start(broker_t *b);

/* election.c: stand for leader of p if this broker should now (the replica
 * list's order, the ISR, unclean elections); sent with the others planned in
 * the same pass of the loop. repl_elections_stop drops those not sent. */
typedef struct election election_t;
void repl_elect(broker_t *b, partition_t *p, replica_t *r);
void repl_elections_stop(broker_t *b);

/* leadership.c: a write of ours was fenced; stop leading r at once and read
 * its coordinator state again. */
void repl_fenced(broker_t *b, replica_t *r, const char *why);

#endif
