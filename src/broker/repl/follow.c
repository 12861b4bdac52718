/* follow.c -- the follower's log operations (see repl.h), called by the
 * fetcher: appending what the leader sent exactly as it is, the follower's
 * HW, and becomeFollower's truncation. Idempotent producers' state follows
 * the log, so a follower that becomes leader recognises retried batches. */
#define _GNU_SOURCE
#include "repl.h"

#include <inttypes.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/logging.h"
#include "broker/core/conn.h"
#include "broker/core/log_dirs.h"

#include <errno.h>
#include <string.h>

static const char *name_of(const replica_t *r, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%d", r->part->topic->name, (int)r->part->id);
    return buf;
}

int replica_append_fetched(broker_t *b, replica_t *r, const uint8_t *batches, size_t len)
{
    char name[300];
    append_info_t info;
    int rc = partition_log_append_replica(r->log, batches, len, (int64_t)clock_wall_ms(), &info);
    if (rc == PLOG_ERR_IO) {
        char what[sizeof(r->dir) + 128];
        snprintf(what, sizeof(what), "cannot append to %s: %s", r->dir, strerror(errno));
        log_dirs_failed(b, r->log_dir, what);
    }
    if (rc != PLOG_OK) {
        log_warn("%s: cannot append what the leader sent at %" PRId64 ": %s", name_of(r, name, sizeof(name)),
                 partition_log_end_offset(r->log), plog_strerror(rc));
        return -1;
    }
    producer_state_apply_batches(r->producers, batches, len);
    return 0;
}

void replica_follower_high_watermark(broker_t *b, replica_t *r, int64_t leader_hw)
{
    r->leader_hw = leader_hw;   /* DescribeLogDirs' lag */
    int64_t leo = partition_log_end_offset(r->log);
    int64_t before = partition_log_high_watermark(r->log);
    partition_log_set_high_watermark(r->log, leader_hw < leo ? leader_hw : leo);
    if (partition_log_high_watermark(r->log) > before)
        broker_wake_data_waiters(b);   /* consumers fetching here (KIP-392) wait for it */
}

void replica_follower_log_start(broker_t *b, replica_t *r, int64_t leader_log_start)
{
    (void)b;
    char name[300];
    int64_t start = partition_log_start_offset(r->log), leo = partition_log_end_offset(r->log);
    int64_t to = leader_log_start < leo ? leader_log_start : leo;
    if (to <= start)
        return;
    int rc = partition_log_delete_records_before(r->log, to);
    if (rc < 0)
        log_warn("%s: cannot move the log start to %" PRId64 ": %s", name_of(r, name, sizeof(name)), to,
                 plog_strerror(rc));
    else
        log_info("%s: the log starts at %" PRId64 " as the leader's does (%d segment(s) deleted)",
                 name_of(r, name, sizeof(name)), to, rc);
}

/* The producers' state is rebuilt from what is left of the log (Kafka
 * reloads it from its snapshots the same way after a truncation). */
static void rebuild_producers(replica_t *r)
{
    producer_state_t *fresh = producer_state_create(PRODUCER_MAX_PRODUCERS_DEFAULT);
    if (!fresh)
        return;
    producer_state_free(r->producers);
    r->producers = fresh;
    partition_log_scan_batches(r->log, partition_log_start_offset(r->log), producer_state_apply_batch, fresh);
}

int replica_truncate(broker_t *b, replica_t *r, int64_t offset)
{
    (void)b;
    char name[300];
    int64_t leo = partition_log_end_offset(r->log);
    if (offset >= leo)
        return 0;
    int rc = partition_log_truncate_to(r->log, offset);
    if (rc != PLOG_OK) {
        log_error("%s: cannot truncate to %" PRId64 ": %s", name_of(r, name, sizeof(name)), offset, plog_strerror(rc));
        return -1;
    }
    log_info("%s: truncated from %" PRId64 " to %" PRId64 " where its log parts from the leader's",
             name_of(r, name, sizeof(name)), leo, partition_log_end_offset(r->log));
    rebuild_producers(r);
    return 0;
}

int replica_restart_at(broker_t *b, replica_t *r, int64_t offset)
{
    (void)b;
    char name[300];
    int rc = partition_log_restart_at(r->log, offset, (int64_t)clock_wall_ms());
    if (rc != PLOG_OK) {
        log_error("%s: cannot start the log over at %" PRId64 ": %s", name_of(r, name, sizeof(name)), offset,
                  plog_strerror(rc));
        return -1;
    }
    rebuild_producers(r);
    return 0;
}
