/* log_dirs.c -- the broker's log dirs: which dir holds which partition, the
 * per-dir checkpoints (recovery points, and the high watermarks: the HW
 * checkpoint of docs/replication.md), the clean-shutdown marker, and the
 * background work: periodic fsync of every log on the flusher thread
 * followed by the checkpoints, and retention.
 *
 * The marker `.kafka_cleanshutdown` is written last at a clean stop and
 * removed at start, so a crash at any point after start means the next
 * start scans every log from its recovery point. */
#define _GNU_SOURCE
#include "log_dirs.h"
#include "cluster.h"
#include "conn.h"
#include "replica.h"
#include "base/fsutil.h"
#include "base/logging.h"
#include "base/clock.h"
#include "broker/coord/coord_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLEAN_MARKER ".kafka_cleanshutdown"
#define RECOVERY_FILE "recovery-point-offset-checkpoint"
#define HW_FILE "replication-offset-checkpoint"
#define LOG_START_FILE "log-start-offset-checkpoint"

/* ---- where partitions live ---- */

static int placed_find(const broker_t *b, const char *name)
{
    for (size_t i = 0; i < b->nplaced; i++)
        if (strcmp(b->placed[i].name, name) == 0)
            return b->placed[i].dir;
    return -1;
}

/* A folder renamed for deletion: "<anything>.<digits>-delete" (replica.c).
 * Only that exact shape: a topic may well be called "x-delete". */
static int is_deleted_folder(const char *name)
{
    size_t n = strlen(name), suffix = strlen("-delete");
    if (n <= suffix || strcmp(name + n - suffix, "-delete") != 0)
        return 0;
    size_t i = n - suffix;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    return i < n - suffix && i > 1 && name[i - 1] == '.';
}

/* "name-<digits>" with a valid topic name. */
static int is_partition_folder(const char *name)
{
    const char *dash = strrchr(name, '-');
    if (!dash || dash == name || !dash[1])
        return 0;
    for (const char *p = dash + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static void scan_dir(broker_t *b, int d)
{
    DIR *dir = opendir(b->cfg.log_dirs[d]);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(b->placed[0].name))
            continue;
        if (is_deleted_folder(e->d_name)) {
            char path[BROKER_PATH_MAX + 300];
            snprintf(path, sizeof(path), "%s/%s", b->cfg.log_dirs[d], e->d_name);
            if (fs_remove_tree(path) < 0)
                log_warn("cannot remove %s: %s", path, strerror(errno));
            continue;
        }
        if (!is_partition_folder(e->d_name))
            continue;
        placed_t *grown = realloc(b->placed, sizeof(*grown) * (b->nplaced + 1));
        if (!grown)
            break;
        b->placed = grown;
        snprintf(grown[b->nplaced].name, sizeof(grown[b->nplaced].name), "%s", e->d_name);
        grown[b->nplaced].dir = d;
        b->nplaced++;
    }
    closedir(dir);
}

int log_dirs_take_placed(broker_t *b, const char *name)
{
    for (size_t i = 0; i < b->nplaced; i++)
        if (strcmp(b->placed[i].name, name) == 0) {
            int d = b->placed[i].dir;
            b->placed[i] = b->placed[--b->nplaced];
            return d;
        }
    return -1;
}

int log_dirs_pick(broker_t *b, const char *topic, int32_t partition)
{
    char name[COORD_TOPIC_NAME_MAX + 16];
    snprintf(name, sizeof(name), "%s-%d", topic, (int)partition);
    int d = placed_find(b, name);
    if (d >= 0)
        return d;
    /* A new partition goes to the dir with the fewest, as in Kafka. */
    int count[BROKER_MAX_LOG_DIRS] = {0}, best = 0;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++)
            if (b->topics[i]->parts[k] && b->topics[i]->parts[k]->replica)
                count[b->topics[i]->parts[k]->replica->log_dir]++;
    for (int i = 1; i < b->cfg.n_log_dirs; i++)
        if (count[i] < count[best])
            best = i;
    return best;
}

/* ---- checkpoints ---- */

static int64_t checkpoint_lookup(const offset_checkpoint_entry_t *e, size_t n, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < n; i++)
        if (e[i].partition == partition && strcmp(e[i].topic, topic) == 0)
            return e[i].offset;
    return 0;
}

int64_t log_dirs_recovery_point(broker_t *b, const char *topic, int32_t partition)
{
    return checkpoint_lookup(b->recovery_points, b->nrecovery_points, topic, partition);
}

int64_t log_dirs_high_watermark(broker_t *b, const char *topic, int32_t partition)
{
    return checkpoint_lookup(b->high_watermarks, b->nhigh_watermarks, topic, partition);
}

int64_t log_dirs_log_start(broker_t *b, const char *topic, int32_t partition)
{
    return checkpoint_lookup(b->log_starts, b->nlog_starts, topic, partition);
}

/* Appends the entries of one checkpoint file to *all. */
static void load_checkpoint(const char *dir, const char *file, offset_checkpoint_entry_t **all, size_t *n)
{
    char path[BROKER_PATH_MAX + 64], err[256];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    offset_checkpoint_entry_t *e = NULL;
    size_t count = 0;
    int rc = offset_checkpoint_read(path, &e, &count, err, sizeof(err));
    if (rc == PLOG_ERR_NOT_FOUND)
        return;
    if (rc != PLOG_OK) {
        log_warn("%s: %s; treating every partition in %s as unflushed", path, err, dir);
        return;
    }
    offset_checkpoint_entry_t *grown = realloc(*all, sizeof(*grown) * (*n + count + 1));
    if (grown) {
        if (count)   /* e is NULL for an empty checkpoint */
            memcpy(grown + *n, e, sizeof(*e) * count);
        *all = grown;
        *n += count;
    }
    free(e);
}

/* What a checkpoint round writes: per dir, both files. */
typedef struct {
    broker_t *b;
    int ndirs;
    char dirs[BROKER_MAX_LOG_DIRS][BROKER_PATH_MAX];
    offset_checkpoint_entry_t *recovery[BROKER_MAX_LOG_DIRS], *hw[BROKER_MAX_LOG_DIRS], *start[BROKER_MAX_LOG_DIRS];
    size_t n[BROKER_MAX_LOG_DIRS];
} checkpoint_job_t;

static checkpoint_job_t *checkpoint_capture(broker_t *b)
{
    checkpoint_job_t *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->b = b;
    j->ndirs = b->cfg.n_log_dirs;
    size_t total = 0;
    for (int i = 0; i < b->ntopics; i++)
        total += (size_t)b->topics[i]->nparts;
    for (int d = 0; d < j->ndirs; d++) {
        snprintf(j->dirs[d], sizeof(j->dirs[d]), "%s", b->cfg.log_dirs[d]);
        j->recovery[d] = calloc(total + 1, sizeof(offset_checkpoint_entry_t));
        j->hw[d] = calloc(total + 1, sizeof(offset_checkpoint_entry_t));
        j->start[d] = calloc(total + 1, sizeof(offset_checkpoint_entry_t));
    }
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            replica_t *r = p ? p->replica : NULL;
            int d = r ? r->log_dir : 0;
            if (!r || !r->log || !j->recovery[d] || !j->hw[d] || !j->start[d])
                continue;
            size_t at = j->n[d]++;
            offset_checkpoint_entry_t *re = &j->recovery[d][at], *he = &j->hw[d][at], *se = &j->start[d][at];
            snprintf(re->topic, sizeof(re->topic), "%s", p->topic->name);
            re->partition = p->id;
            *he = *se = *re;
            re->offset = partition_log_recovery_point(r->log);
            he->offset = partition_log_high_watermark(r->log);
            se->offset = partition_log_start_offset(r->log);
        }
    return j;
}

static void checkpoint_write(void *arg)
{
    checkpoint_job_t *j = arg;
    char path[BROKER_PATH_MAX + 64];
    for (int d = 0; d < j->ndirs; d++) {
        if (!j->recovery[d] || !j->hw[d] || !j->start[d])
            continue;
        snprintf(path, sizeof(path), "%s/%s", j->dirs[d], RECOVERY_FILE);
        if (offset_checkpoint_write(path, j->recovery[d], j->n[d]) != PLOG_OK)
            log_error("cannot write %s: %s", path, strerror(errno));
        snprintf(path, sizeof(path), "%s/%s", j->dirs[d], HW_FILE);
        if (offset_checkpoint_write(path, j->hw[d], j->n[d]) != PLOG_OK)
            log_error("cannot write %s: %s", path, strerror(errno));
        snprintf(path, sizeof(path), "%s/%s", j->dirs[d], LOG_START_FILE);
        if (offset_checkpoint_write(path, j->start[d], j->n[d]) != PLOG_OK)
            log_error("cannot write %s: %s", path, strerror(errno));
    }
}

static void checkpoint_free(void *arg)
{
    checkpoint_job_t *j = arg;
    for (int d = 0; d < j->ndirs; d++) {
        free(j->recovery[d]);
        free(j->hw[d]);
        free(j->start[d]);
    }
    free(j);
}

/* ---- background flush ---- */

struct flush_job {
    broker_t *b;
    replica_t *r;      /* NULL once the replica is gone */
    plog_flush_t job;
};

static void flush_run(void *arg)
{
    partition_log_flush_run(&((flush_job_t *)arg)->job);
}

static void flush_done(void *arg)
{
    flush_job_t *f = arg;
    broker_t *b = f->b;
    for (size_t i = 0; i < b->nflushes; i++)
        if (b->flushes[i] == f) {
            b->flushes[i] = b->flushes[--b->nflushes];
            break;
        }
    if (f->r) {
        f->r->flushing = 0;
        if (partition_log_flush_end(f->r->log, &f->job) != PLOG_OK) {
            char what[sizeof(f->r->dir) + 128];
            snprintf(what, sizeof(what), "cannot flush %s: %s", f->r->dir, strerror(errno));
            log_dirs_failed(b, f->r->log_dir, what);
        }
    } else {
        partition_log_flush_release(&f->job);
    }
    free(f);
}

static void stop_on_failed_dir(loop_t *loop, void *arg)
{
    (void)loop;
    broker_stop_on_fault(arg);
}

void log_dirs_failed(broker_t *b, int dir, const char *what)
{
    if (dir < 0 || dir >= b->cfg.n_log_dirs || b->dir_failed[dir])
        return;
    b->dir_failed[dir] = 1;
    log_error("log dir %s failed (%s): stopping the broker; its partitions go to their in-sync replicas "
              "(restart it once the disk is healthy: its logs are recovered at start)",
              b->cfg.log_dirs[dir], what);
    /* From the loop, not inside the append or flush that failed. */
    if (!loop_timer_add(b->loop, 0, stop_on_failed_dir, b))
        broker_stop_on_fault(b);
}

void log_dirs_forget(broker_t *b, replica_t *r)
{
    for (size_t i = 0; i < b->nflushes; i++)
        if (b->flushes[i]->r == r)
            b->flushes[i]->r = NULL;
}

static void flush_replica(broker_t *b, replica_t *r)
{
    if (!r->log || r->flushing)
        return;
    flush_job_t *f = calloc(1, sizeof(*f));
    flush_job_t **grown = f ? realloc(b->flushes, sizeof(*grown) * (b->nflushes + 1)) : NULL;
    if (!grown) {
        free(f);
        return;
    }
    b->flushes = grown;
    f->b = b;
    f->r = r;
    if (partition_log_flush_begin(r->log, &f->job) != PLOG_OK) {
        partition_log_flush_release(&f->job);
        free(f);
        return;
    }
    if (worker_submit(b->flusher, flush_run, flush_done, f) < 0) {
        partition_log_flush_release(&f->job);
        free(f);
        return;   /* the queue is full: next round */
    }
    b->flushes[b->nflushes++] = f;
    r->flushing = 1;
}

static void on_flush_timer(loop_t *loop, void *arg)
{
    broker_t *b = arg;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++)
            if (b->topics[i]->parts[k] && b->topics[i]->parts[k]->replica)
                flush_replica(b, b->topics[i]->parts[k]->replica);
    /* Queued behind the flushes: records the recovery points they reached
     * as of the previous round (this round's land next time). */
    checkpoint_job_t *j = checkpoint_capture(b);
    if (j && worker_submit(b->flusher, checkpoint_write, checkpoint_free, j) < 0)
        checkpoint_free(j);
    b->flush_timer = loop_timer_add(loop, (uint64_t)b->cfg.log_flush_interval_ms, on_flush_timer, b);
}

static void on_retention_timer(loop_t *loop, void *arg)
{
    broker_t *b = arg;
    int64_t now = (int64_t)clock_wall_ms();
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (!p || !p->replica || !p->replica->log)
                continue;
            int n = partition_log_apply_retention(p->replica->log, now);
            if (n > 0)
                log_info("retention deleted %d old segment(s) of %s", n, p->replica->dir);
            producer_state_expire(p->replica->producers, now, b->cfg.producer_id_expiration_ms);
        }
    b->retention_timer = loop_timer_add(loop, (uint64_t)b->cfg.log_retention_check_ms, on_retention_timer, b);
}

/* ---- configuration of one partition's log ---- */

static int64_t config_long(const topic_t *t, const char *key, int64_t def)
{
    const char *v = t ? topic_config(t, key) : NULL;
    if (!v)
        return def;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    return errno || *end || end == v ? def : (int64_t)x;
}

void log_dirs_config_for(const broker_t *b, const topic_t *t, partition_log_config_t *cfg)
{
    partition_log_config_default(cfg);
    cfg->segment_bytes = config_long(t, "segment.bytes", b->cfg.log_segment_bytes);
    cfg->segment_ms = config_long(t, "segment.ms", b->cfg.log_roll_ms);
    cfg->retention_ms = config_long(t, "retention.ms", b->cfg.log_retention_ms);
    cfg->retention_bytes = config_long(t, "retention.bytes", b->cfg.log_retention_bytes);
    /* Old segments go by time and size only under cleanup.policy "delete",
     * as in Kafka; kipper never compacts, so a compacted topic keeps them all. */
    if (t && !coord_cleanup_deletes(topic_config(t, "cleanup.policy")))
        cfg->retention_ms = cfg->retention_bytes = -1;
    cfg->max_batch_bytes = (int32_t)config_long(t, "max.message.bytes", b->cfg.message_max_bytes);
    cfg->index_interval_bytes = b->cfg.log_index_interval_bytes;
    cfg->index_max_bytes = b->cfg.log_index_max_bytes;
}

/* ---- start and stop ---- */

static void take_clean_marker(broker_t *b, int d)
{
    char path[BROKER_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", b->cfg.log_dirs[d], CLEAN_MARKER);
    b->clean_shutdown[d] = access(path, F_OK) == 0;
    /* Gone before anything is written, so a crash from now on is seen. */
    if (b->clean_shutdown[d] && (unlink(path) < 0 || fs_sync_dir(b->cfg.log_dirs[d]) < 0))
        b->clean_shutdown[d] = 0;
    log_info("log dir %s: %s shutdown last time", b->cfg.log_dirs[d], b->clean_shutdown[d] ? "clean" : "no clean");
}

/* The dir's absolute path, as Kafka's DescribeLogDirs names it; resolved
 * once here, where the loop does not run yet. */
static void absolute_dir(broker_t *b, int d)
{
    char *abs = realpath(b->cfg.log_dirs[d], NULL);
    snprintf(b->log_dirs_abs[d], sizeof(b->log_dirs_abs[d]), "%s", abs ? abs : b->cfg.log_dirs[d]);
    free(abs);
}

int log_dirs_start(broker_t *b, char *err, size_t errlen)
{
    for (int d = 0; d < b->cfg.n_log_dirs; d++) {
        take_clean_marker(b, d);
        load_checkpoint(b->cfg.log_dirs[d], RECOVERY_FILE, &b->recovery_points, &b->nrecovery_points);
        load_checkpoint(b->cfg.log_dirs[d], HW_FILE, &b->high_watermarks, &b->nhigh_watermarks);
        load_checkpoint(b->cfg.log_dirs[d], LOG_START_FILE, &b->log_starts, &b->nlog_starts);
        absolute_dir(b, d);
        scan_dir(b, d);
    }
    b->flusher = worker_create(b->loop, "flusher", 4096);
    if (!b->flusher) {
        snprintf(err, errlen, "cannot start the flusher thread");
        return -1;
    }
    b->flush_timer = loop_timer_add(b->loop, (uint64_t)b->cfg.log_flush_interval_ms, on_flush_timer, b);
    b->retention_timer = loop_timer_add(b->loop, (uint64_t)b->cfg.log_retention_check_ms, on_retention_timer, b);
    return 0;
}

static void write_clean_marker(const char *dir)
{
    char path[BROKER_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, CLEAN_MARKER);
    if (fs_write_atomic(path, "", 0) < 0)
        log_error("cannot write %s: %s", path, strerror(errno));
}

void log_dirs_stop(broker_t *b)
{
    if (!b->flusher)
        return;   /* never started (a stop during start-up): nothing was opened */
    if (b->flush_timer)
        loop_timer_cancel(b->loop, b->flush_timer);
    if (b->retention_timer)
        loop_timer_cancel(b->loop, b->retention_timer);
    b->flush_timer = b->retention_timer = NULL;
    /* Jobs in flight finish (and their done callbacks run) first. */
    worker_destroy(b->flusher);
    b->flusher = NULL;
    int all_flushed = 1;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->replica->log && partition_log_flush(p->replica->log) != PLOG_OK) {
                log_error("cannot flush %s at shutdown: %s", p->replica->dir, strerror(errno));
                all_flushed = 0;
            }
        }
    checkpoint_job_t *j = checkpoint_capture(b);
    if (j) {
        checkpoint_write(j);
        checkpoint_free(j);
    }
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica) {
                replica_free(p->replica);
                p->replica = NULL;
            }
        }
    if (all_flushed && b->loop)
        for (int d = 0; d < b->cfg.n_log_dirs; d++)
            if (!b->dir_failed[d])
                write_clean_marker(b->cfg.log_dirs[d]);
    free(b->recovery_points);
    free(b->high_watermarks);
    free(b->log_starts);
    b->recovery_points = b->high_watermarks = b->log_starts = NULL;
    free(b->placed);
    b->placed = NULL;
    b->nplaced = 0;
    free(b->flushes);
    b->flushes = NULL;
    b->nflushes = 0;
}
