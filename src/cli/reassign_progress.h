/* reassign_progress.h -- how far the moves still in progress have got, for
 * `kipper reassign --verify`: for each replica a move adds, the bytes it
 * still lacks behind the partition's leader and the rate it catches up at,
 * from the brokers' own DescribeLogDirs answers (log_dirs_client.h).
 *
 * Synchronous, on the caller's thread and ZooKeeper handle; it blocks for
 * about REASSIGN_PROGRESS_GAP_MS plus the brokers' answers, each bounded by
 * REASSIGN_PROGRESS_TIMEOUT_MS. */
#ifndef KIPPER_CLI_REASSIGN_PROGRESS_H
#define KIPPER_CLI_REASSIGN_PROGRESS_H

#include <stdint.h>

#include "broker/coord/coord_reassign.h"

#define REASSIGN_PROGRESS_TIMEOUT_MS 2000   /* one broker's answer, connection included */
#define REASSIGN_PROGRESS_GAP_MS 1000       /* between a broker's two readings */

/* For each move plan->moves[i] with moving[i] set, one line
 *   "Reassignment of partition t-0 is still in progress: replica 4 has
 *    734003200 bytes left, catching up at 10485760 B/s"
 * (one such clause per replica being added, separated by "; "), or saying
 * why it cannot tell: no leader now, a broker that cannot be reached (the
 * others are still read), a state that cannot be read. Every broker
 * concerned (the partitions' leaders and the replicas being added) is read
 * twice, REASSIGN_PROGRESS_GAP_MS apart. A move found over meanwhile gets
 * no line. Progress is informational: nothing is returned. */
void reassign_progress_print(zhandle_t *zh, const coord_plan_t *plan, const unsigned char *moving);

/* leader_size - replica_size, never below 0; a replica_size of -1 (no log
 * there yet) is nothing copied. Pure. */
int64_t reassign_bytes_left(int64_t leader_size, int64_t replica_size);
/* Bytes per second from two sizes elapsed_ms apart (-1: no log yet, 0
 * bytes), never below 0 (a log cut meanwhile); -1 when elapsed_ms is 0.
 * Pure. */
int64_t reassign_catch_up_rate(int64_t before, int64_t after, uint64_t elapsed_ms);

#endif
