/* replica.c -- this broker's replicas of the partitions assigned to it:
 * opening their logs (in the log dir that holds them, checked against the
 * topic id), the leader's append path, and stopping. Which role a replica
 * has -- election, leading, following -- is broker/repl's (repl.h): a
 * replica assigned here is handed to repl_reconcile whenever its partition's
 * coordinator state changes. */
#define _GNU_SOURCE
#include "replica.h"
#include "cluster.h"
#include "conn.h"
#include "log_dirs.h"
#include "broker/log/batch_validate.h"
#include "broker/repl/repl.h"
#include "base/alloc.h"
#include "base/fsutil.h"
#include "base/logging.h"
#include "base/endian.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int contains(const int32_t *ids, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

static const char *pname(const partition_t *p, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%d", p->topic->name, (int)p->id);
    return buf;
}

/* ---- opening ---- */

/* partition.metadata holds the topic id (as Kafka's does), so a folder left
 * from a deleted topic of the same name is never taken for the new one. */
static int check_partition_metadata(replica_t *r, const topic_t *t)
{
    char path[sizeof(r->dir) + 32], want[64], have[256];
    char id[23];
    coord_topic_id_format(t->doc.topic_id, id);
    snprintf(path, sizeof(path), "%s/partition.metadata", r->dir);
    int n = snprintf(want, sizeof(want), "version: 0\ntopic_id: %s\n", id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, have, sizeof(have) - 1);
        close(fd);
        if (got == n && memcmp(have, want, (size_t)n) == 0)
            return 0;
        return -1;
    }
    /* Atomic and durable, as Kafka's PartitionMetadataFile: a crash must not
     * leave a torn id, which would set the folder aside as a stray. */
    return fs_write_atomic(path, want, (size_t)n) < 0 ? -2 : 0;
}

/* dir renamed to "<dir>.<ms><suffix>", with the folder's own name cut short
 * when the result would pass NAME_MAX (as Kafka does for its -delete and
 * -stray folders: topic names may be 249 characters). */
static void aside_name(const char *dir, const char *suffix, char *out, size_t n)
{
    char tail[64];
    snprintf(tail, sizeof(tail), ".%" PRIu64 "%s", clock_wall_ms(), suffix);
    const char *slash = strrchr(dir, '/');
    size_t parent = slash ? (size_t)(slash - dir) + 1 : 0;
    size_t base = strlen(dir) - parent, room = NAME_MAX - strlen(tail);
    snprintf(out, n, "%.*s%.*s%s", (int)parent, dir, (int)(base < room ? base : room), dir + parent, tail);
}

static void set_aside_stray(replica_t *r)
{
    char stray[sizeof(r->dir) + 64];
    aside_name(r->dir, "-stray", stray, sizeof(stray));
    if (rename(r->dir, stray) == 0)
        log_warn("%s belongs to an older topic of the same name; moved aside to %s", r->dir, stray);
    else
        log_error("cannot move aside %s: %s", r->dir, strerror(errno));
}

static void replica_open_log(broker_t *b, replica_t *r)
{
    partition_t *p = r->part;
    char err[512];
    if (fs_make_dirs(r->dir) < 0) {
        log_error("cannot create %s: %s; the replica is offline", r->dir, strerror(errno));
        return;
    }
    if (p->topic->have_doc) {
        int m = check_partition_metadata(r, p->topic);
        if (m == -1) {
            set_aside_stray(r);
            if (fs_make_dirs(r->dir) < 0 || check_partition_metadata(r, p->topic) < 0)
                return;
        }
    }
    partition_log_config_t cfg;
    log_dirs_config_for(b, p->topic, &cfg);
    int64_t recovery = log_dirs_recovery_point(b, p->topic->name, p->id);
    int rc = partition_log_open(r->dir, &cfg, recovery, b->clean_shutdown[r->log_dir], (int64_t)clock_wall_ms(),
                                &r->log, err, sizeof(err));
    if (rc != PLOG_OK) {
        log_error("cannot open the log of %s: %s; the replica is offline", r->dir, err);
        r->log = NULL;
        return;
    }
    int64_t hw = log_dirs_high_watermark(b, p->topic->name, p->id);
    partition_log_set_high_watermark(r->log, hw);
    /* Where DeleteRecords (or the leader's) last moved the log start: it is
     * not where the first segment begins, so it was checkpointed. */
    int64_t start = log_dirs_log_start(b, p->topic->name, p->id), leo = partition_log_end_offset(r->log);
    if (start > partition_log_start_offset(r->log))
        partition_log_delete_records_before(r->log, start < leo ? start : leo);
}

void replica_follower_start_seen(broker_t *b, replica_t *r, int32_t id, int64_t log_start)
{
    int k = 0;
    while (k < r->nfollower_starts && r->follower_starts[k].id != id)
        k++;
    if (k == r->nfollower_starts) {
        if (k == COORD_MAX_REPLICAS)
            return;
        r->follower_starts[r->nfollower_starts++].id = id;
        r->follower_starts[k].epoch = -1;
    }
    int raised = r->follower_starts[k].epoch != r->leader_epoch || log_start > r->follower_starts[k].log_start;
    r->follower_starts[k].epoch = r->leader_epoch;
    r->follower_starts[k].log_start = log_start;
    if (raised)   /* a DeleteRecords may be waiting for it */
        broker_wake_data_waiters(b);
}

void replica_apply_config(broker_t *b, replica_t *r)
{
    const topic_t *t = r->part->topic;
    partition_log_config_t cfg;
    log_dirs_config_for(b, t, &cfg);
    if (r->log && partition_log_set_config(r->log, &cfg) != PLOG_OK)
        log_warn("%s: the log refuses its new configs (segment.bytes %lld); keeping the old ones", r->dir,
                 (long long)cfg.segment_bytes);
    const char *ts = topic_config(t, "message.timestamp.type");
    r->log_append_time = ts ? strcmp(ts, "LogAppendTime") == 0 : b->cfg.log_append_time;
}

static replica_t *replica_create(broker_t *b, partition_t *p)
{
    replica_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->part = p;
    r->role = REPLICA_NONE;
    r->leader_epoch = -1;
    r->leader_hw = -1;
    r->producers = producer_state_create(PRODUCER_MAX_PRODUCERS_DEFAULT);
    if (!r->producers) {
        free(r);
        return NULL;
    }
    r->log_dir = log_dirs_pick(b, p->topic->name, p->id);
    snprintf(r->dir, sizeof(r->dir), "%s/%s-%d", b->cfg.log_dirs[r->log_dir], p->topic->name, (int)p->id);
    replica_open_log(b, r);
    replica_apply_config(b, r);
    /* Idempotent producers' sequences are rebuilt from the batch headers. */
    if (r->log && r->producers)
        partition_log_scan_batches(r->log, partition_log_start_offset(r->log), producer_state_apply_batch,
                                   r->producers);
    char name[300];
    log_info("replica of %s started in %s (log end offset %" PRId64 ")", pname(p, name, sizeof(name)), r->dir,
             r->log ? partition_log_end_offset(r->log) : -1);
    return r;
}

static void remove_stray(broker_t *b, partition_t *p);

/* ---- reconcile: the partition's coordinator state changed ---- */

void replica_reconcile(broker_t *b, partition_t *p)
{
    int32_t me = b->cfg.broker_id;
    if (b->stopping)
        return;
    /* A replica here, or one a move asked for here (it bootstraps as a
     * follower and catches up before the move completes). */
    int assigned = p->have_replicas && (contains(p->replicas, p->nreplicas, me) ||
                                        (p->reassigning && contains(p->target, p->ntarget, me)));
    if (!assigned) {
        /* Unassigned (reassigned away, or the topic is being deleted). */
        if (p->replica && p->isr_state != 0)
            replica_stop(b, p, 1);
        else if (!p->replica && p->have_replicas && p->topic->have_doc)
            remove_stray(b, p);
        return;
    }
    if (!p->topic->have_doc || p->topic->config_state == TOPIC_CONFIG_UNREAD)
        return;   /* the topic id is needed for partition.metadata, the configs for the log */
    if (!p->replica && !(p->replica = replica_create(b, p)))
        return;
    repl_reconcile(b, p);
}

/* ---- stopping ---- */

static void remove_tree_job(void *arg)
{
    fs_remove_tree(arg);
}

static void free_job_arg(void *arg)
{
    free(arg);
}

void replica_free(replica_t *r)
{
    if (r->isr) {
        isr_free(r->isr);
        free(r->isr);
    }
    if (r->log)
        partition_log_close(r->log);
    producer_state_free(r->producers);
    free(r);
}

/* Renamed aside at once (so a new topic of the same name starts clean) and
 * removed on the flusher thread. The folder's log must be closed first. */
static void delete_folder(broker_t *b, const char *dir)
{
    size_t n = strlen(dir) + 64;
    char *doomed = xmalloc(n);
    aside_name(dir, "-delete", doomed, n);
    if (rename(dir, doomed) < 0) {
        log_error("cannot rename %s for deletion: %s", dir, strerror(errno));
        free(doomed);
        return;
    }
    if (worker_submit(b->flusher, remove_tree_job, free_job_arg, doomed) < 0) {
        log_warn("%s left for the next start to remove", doomed);
        free(doomed);
    }
}

void replica_stop(broker_t *b, partition_t *p, int delete_log)
{
    replica_t *r = p->replica;
    char name[300];
    if (!r)
        return;
    /* No longer assigned here: leadership goes to the rest of the ISR
     * before the log does (onReplicaChange, docs/replication.md). */
    if (delete_log && r->role == REPLICA_LEADER)
        repl_hand_over(b, r);
    repl_replica_stopping(b, r);
    p->replica = NULL;
    log_info("replica of %s stopped%s", pname(p, name, sizeof(name)), delete_log ? "; deleting its log" : "");
    log_dirs_forget(b, r);   /* a flush in flight finishes without it */
    char dir[sizeof(r->dir)];
    snprintf(dir, sizeof(dir), "%s", r->dir);
    replica_free(r);
    if (delete_log)
        delete_folder(b, dir);
}

/* A folder found at start for a partition of this topic that is not (or no
 * longer) assigned here: a replica moved away while this broker was down. */
static void remove_stray(broker_t *b, partition_t *p)
{
    char name[300], dir[BROKER_PATH_MAX + COORD_TOPIC_NAME_MAX + 16];
    pname(p, name, sizeof(name));
    int d = log_dirs_take_placed(b, name);
    if (d < 0)
        return;
    snprintf(dir, sizeof(dir), "%s/%s", b->cfg.log_dirs[d], name);
    replica_t probe = {.part = p};
    snprintf(probe.dir, sizeof(probe.dir), "%s", dir);
    if (check_partition_metadata(&probe, p->topic) != 0)
        return;   /* another topic's folder (or unreadable): not ours to delete */
    log_info("%s is no longer assigned to this broker; deleting its log %s", name, dir);
    delete_folder(b, dir);
}

/* ---- the leader's append ---- */

/* Bounds on what a producer's records may cost to check (batch_validate.h).
 * Kafka bounds only the compressed batch (max.message.bytes); the bounds on
 * what it decompresses to are kipper's, chosen from what clients build:
 *  - a record: max.message.bytes, the largest record a producer at its
 *    defaults sends (librdkafka's message.max.bytes, the Java client's
 *    max.request.size, both 1 MB, bound each record's uncompressed size), so
 *    a bomb of one huge record is refused after that many bytes;
 *  - a batch: 16 x max.message.bytes decompressed. librdkafka fills a
 *    batch to at most message.max.bytes uncompressed; the Java client closes
 *    one when its estimated compressed size reaches batch.size (16 KiB by
 *    default), so 16 x leaves room for a Java producer tuned to a 1 MiB
 *    batch.size with data that compresses 16:1;
 *  - a request: 64 x message.max.bytes over all its partitions, which is
 *    also what one legacy batch could decompress to before.
 * The larger of the broker's and the topic's max.message.bytes counts, as a
 * topic may raise it. */
#define RECORDS_BATCH_DECOMPRESSED_FACTOR 16
#define RECORDS_REQUEST_DECOMPRESSED_FACTOR 64

void replica_records_limits(const broker_t *b, const topic_t *t, records_limits_t *lim)
{
    partition_log_config_t cfg;
    log_dirs_config_for(b, t, &cfg);
    size_t mmb = (size_t)(cfg.max_batch_bytes > b->cfg.message_max_bytes ? cfg.max_batch_bytes
                                                                          : b->cfg.message_max_bytes);
    lim->max_batch_bytes = cfg.max_batch_bytes;
    lim->max_record = mmb;
    lim->max_batch_decompressed = mmb * RECORDS_BATCH_DECOMPRESSED_FACTOR;
    lim->max_decompressed = (size_t)b->cfg.message_max_bytes * RECORDS_REQUEST_DECOMPRESSED_FACTOR;
}

/* A retried batch of an idempotent producer: the offset it was written at,
 * or -1; an error when its sequence cannot be taken. */
static int16_t check_sequence(replica_t *r, const record_batch_t *h, int64_t *dup_offset)
{
    *dup_offset = -1;
    if (h->producer_id < 0)
        return KERR_NONE;
    producer_dup_t dup;
    int rc = producer_state_check(r->producers, h->producer_id, h->producer_epoch, h->base_sequence,
                                  producer_state_last_seq(h->base_sequence, h->last_offset_delta), &dup);
    if (rc == PRODUCER_DUPLICATE)
        *dup_offset = dup.first_offset;
    return rc < 0 ? (int16_t)-rc : KERR_NONE;
}

/* LogAppendTime: the broker's clock in max timestamp and the attribute; the
 * CRC covers both, so it is recomputed (no records are touched). The
 * client's CRC was checked first, by records_validate. */
static void stamp_append_time(uint8_t *batch, const record_batch_t *h, int64_t now)
{
    be16_put(batch + BATCH_OFF_ATTRIBUTES, (uint16_t)h->attributes | BATCH_ATTR_LOG_APPEND_TIME);
    be64_put(batch + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)now);
    be32_put(batch + BATCH_OFF_CRC, record_batch_compute_crc(batch, (size_t)record_batch_size(h)));
}

static int16_t storage_error(int rc)
{
    switch (rc) {
    case PLOG_ERR_CORRUPT: return KERR_CORRUPT_MESSAGE;
    case PLOG_ERR_TOO_LARGE: return KERR_MESSAGE_TOO_LARGE;
    default: return KERR_KAFKA_STORAGE_ERROR;
    }
}

/* Validated batches: the idempotent producers' sequences, LogAppendTime,
 * then the log. */
static int16_t append_batches(broker_t *b, replica_t *r, uint8_t *records, size_t len, int32_t *err_batch,
                              append_info_t *info, int64_t *append_time, const char **message)
{
    int64_t now = (int64_t)clock_wall_ms();
    int nbatches = 0;
    for (size_t off = 0; off < len; nbatches++) {
        record_batch_t h;
        record_batch_parse_header(records + off, len - off, &h);
        *err_batch = nbatches;
        int64_t dup_offset;
        int16_t error = check_sequence(r, &h, &dup_offset);
        if (error)
            return error;
        if (dup_offset >= 0) {
            /* A retry of a batch already written: answer with its offsets
             * (acks=all still waits for them to be committed). */
            info->first_offset = dup_offset;
            info->last_offset = dup_offset + h.last_offset_delta;
            return len == (size_t)record_batch_size(&h) ? KERR_NONE : KERR_INVALID_RECORD;
        }
        if (r->log_append_time)
            stamp_append_time(records + off, &h, now);
        off += (size_t)record_batch_size(&h);
    }
    *err_batch = -1;
    int rc = partition_log_append(r->log, records, len, r->leader_epoch, now, info);
    if (rc != PLOG_OK) {
        if (rc == PLOG_ERR_IO) {
            char what[sizeof(r->dir) + 128];
            snprintf(what, sizeof(what), "cannot append to %s: %s", r->dir, strerror(errno));
            log_dirs_failed(b, r->log_dir, what);
        }
        *message = plog_strerror(rc);
        return storage_error(rc);
    }
    producer_state_apply_batches(r->producers, records, len);   /* the batches carry their offsets now */
    if (r->log_append_time)
        *append_time = now;
    repl_leader_appended(b, r);
    broker_wake_data_waiters(b);
    return KERR_NONE;
}

int16_t replica_append(broker_t *b, replica_t *r, uint8_t *records, size_t len, const records_verdict_t *v,
                       int32_t *err_batch, append_info_t *info, int64_t *append_time, const char **message)
{
    *append_time = -1;
    *message = NULL;
    *err_batch = -1;
    if (v->error) {
        *err_batch = v->batch;
        *message = v->message;
        return v->error;
    }
    /* Legacy message sets were up-converted to one v2 batch, appended instead. */
    if (v->converted)
        return append_batches(b, r, v->converted, v->converted_len, err_batch, info, append_time, message);
    return append_batches(b, r, records, len, err_batch, info, append_time, message);
}
