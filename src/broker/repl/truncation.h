/* truncation.h -- where a follower cuts its log when it starts following a
 * leader (becomeFollower), by leader epochs (KIP-101 and KIP-279), never by
 * the checkpointed high watermark: docs/replication.md shows the two ways the
 * HW rule loses committed data and how epochs avoid them.
 *
 * The follower asks the leader (OffsetForLeaderEpoch) for the end offset of
 * its own latest epoch. The leader answers with the largest epoch it has that
 * is not newer, and where that epoch ends in its log. If the leader has the
 * follower's epoch, the logs agree up to that end; otherwise the follower
 * looks up the leader's epoch in its own cache: if it has it too, the logs
 * agree up to the smaller of the two ends; if not, it asks again with its own
 * next older epoch. Epochs only go down, so this ends. Pure: the caller sends
 * the requests and cuts the log. */
#ifndef KIPPER_BROKER_REPL_TRUNCATION_H
#define KIPPER_BROKER_REPL_TRUNCATION_H

#include <stddef.h>
#include <stdint.h>

#include "broker/log/partition_log.h"

typedef enum {
    TRUNC_FETCH,       /* nothing to ask: fetch from the log end */
    TRUNC_ASK,         /* send OffsetForLeaderEpoch for .epoch */
    TRUNC_CUT,         /* cut the log at .offset (if below its end), then fetch */
    TRUNC_RETRY,       /* the leader could not say (it knows no such epoch yet): ask again later */
} trunc_action_t;

typedef struct {
    trunc_action_t action;
    int32_t epoch;     /* TRUNC_ASK */
    int64_t offset;    /* TRUNC_CUT */
} trunc_step_t;

/* The first step of becomeFollower, for a log whose epoch cache is e[0..n). */
trunc_step_t truncation_start(const epoch_entry_t *e, size_t n);
/* The next step, after the leader answered (leader_epoch, leader_end) to a
 * request for asked. */
trunc_step_t truncation_next(const epoch_entry_t *e, size_t n, int64_t leo, int32_t asked, int32_t leader_epoch,
                             int64_t leader_end);

#endif
