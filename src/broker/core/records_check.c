/* records_check.c -- see records_check.h. The service is the helper thread,
 * what is in flight on it, and the requests waiting for room. */
#define _GNU_SOURCE   /* syscall(SYS_gettid) */
#include "records_check.h"

#include "conn.h"
#include "base/alloc.h"
#include "base/endian.h"
#include "base/logging.h"
#include "broker/log/record_batch.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* nice(1) steps below the loop's. */
#define RECORDS_CHECK_NICE 10

typedef struct {
    uint64_t conn_id, request_id;
} waiter_t;

struct records_check_service {
    worker_t *thread;
    int jobs;                 /* submitted, done callback not run yet */
    size_t bytes;             /* their copies */
    waiter_t *waiters;        /* requests that found it full, in order */
    size_t nwaiters, waiters_cap;
};

typedef struct {
    int added;
    const uint8_t *records;   /* in mem, or in copy */
    shared_bytes_t *mem;
    uint8_t *copy;
    size_t len;
    records_limits_t lim;
    records_verdict_t verdict;
} check_item_t;

struct records_check {
    broker_t *b;
    uint64_t conn_id, request_id;
    atomic_int released;      /* the request no longer wants it (set on the loop) */
    int submitted;            /* loop: handed to the thread */
    int finished;             /* loop: the thread is done with it */
    size_t budget, bytes;
    int n;
    check_item_t items[];
};

/* The thread's first job: a lower priority than the loop's, so that when
 * both want a CPU (a flood of bombs on a busy machine) the loop, woken by a
 * client, runs first and the checks take what is left. Linux keeps a nice
 * value per thread. */
static void lower_priority(void *arg)
{
    (void)arg;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), RECORDS_CHECK_NICE) < 0)
        log_warn("records-check: cannot lower the thread's priority: %s", strerror(errno));
}

int records_check_start(broker_t *b)
{
    struct records_check_service *s = xcalloc(1, sizeof(*s));
    s->thread = worker_create(b->loop, "records-check", RECORDS_CHECK_MAX_JOBS);
    if (!s->thread || worker_submit(s->thread, lower_priority, NULL, NULL) < 0) {
        worker_destroy(s->thread);
        free(s);
        return -1;
    }
    b->rcheck = s;
    return 0;
}

void records_check_stop(broker_t *b)
{
    struct records_check_service *s = b->rcheck;
    if (!s)
        return;
    worker_destroy(s->thread);   /* the done callbacks left run, and free their jobs */
    free(s->waiters);
    free(s);
    b->rcheck = NULL;
}

/* Legacy entries: offset, size, crc, magic, attributes (codec in bits 0-2). */
static int legacy_compressed(const uint8_t *p, size_t len)
{
    for (size_t off = 0; len - off > 17;) {
        if (p[off + 17] & 0x07)
            return 1;
        size_t size = be32_get(p + off + 8);
        if (size > len - off - 12)
            return 0;
        off += 12 + size;
    }
    return 0;
}

int records_check_wanted(const uint8_t *p, size_t len)
{
    if (len > BATCH_OFF_MAGIC && p[BATCH_OFF_MAGIC] < 2)
        return legacy_compressed(p, len);
    /* Batches that do not split whole are refused before any decompression
     * (batch_validate.c's first pass), so a broken walk can stop here. */
    for (size_t off = 0; len - off >= BATCH_HEADER_LEN;) {
        if (p[off + BATCH_OFF_ATTRIBUTES + 1] & BATCH_ATTR_COMPRESSION_MASK)
            return 1;
        int32_t blen = (int32_t)be32_get(p + off + BATCH_OFF_LENGTH);
        if (blen < 0 || (size_t)blen > len - off - BATCH_LOG_OVERHEAD)
            return 0;
        off += (size_t)blen + BATCH_LOG_OVERHEAD;
    }
    return 0;
}

records_check_t *records_check_new(int n)
{
    records_check_t *j = xcalloc(1, sizeof(*j) + sizeof(check_item_t) * (size_t)(n > 0 ? n : 1));
    j->n = n;
    j->budget = SIZE_MAX;
    atomic_init(&j->released, 0);
    return j;
}

void records_check_add(records_check_t *j, int slot, const uint8_t *p, size_t len, const records_limits_t *lim,
                       shared_bytes_t *mem)
{
    check_item_t *it = &j->items[slot];
    it->added = 1;
    if (mem) {
        it->mem = shared_bytes_hold(mem);
        it->records = p;
    } else {
        it->copy = xmalloc(len ? len : 1);
        memcpy(it->copy, p, len);
        it->records = it->copy;
    }
    it->len = len;
    it->lim = *lim;
    j->bytes += len;
    /* One budget for the request: the partitions share it. */
    if (lim->max_decompressed < j->budget)
        j->budget = lim->max_decompressed;
}

static void job_free(records_check_t *j)
{
    for (int i = 0; i < j->n; i++) {
        free(j->items[i].copy);
        shared_bytes_drop(j->items[i].mem);
        records_verdict_release(&j->items[i].verdict);
    }
    free(j);
}

static size_t smaller(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Each partition in request order, all charged to the request's one budget
 * and to share, the most the caller lets it decompress (SIZE_MAX: no
 * more than the budget). 0 when a batch was refused as too large only
 * because of share; the job's verdicts are then not to be used. A job
 * whose request went is skipped. */
static int check_items(records_check_t *j, size_t share)
{
    size_t used = 0;
    for (int i = 0; i < j->n && !atomic_load(&j->released); i++) {
        check_item_t *it = &j->items[i];
        if (!it->added)
            continue;
        records_limits_t lim = it->lim;
        lim.max_decompressed = smaller(lim.max_decompressed, j->budget - used);
        size_t here = share > used ? share - used : 0;
        int cut = here < lim.max_decompressed || here < lim.max_batch_decompressed;
        lim.max_decompressed = smaller(lim.max_decompressed, here);
        lim.max_batch_decompressed = smaller(lim.max_batch_decompressed, here);
        records_validate(it->records, it->len, &lim, &it->verdict);
        if (cut && it->verdict.error == KERR_MESSAGE_TOO_LARGE)
            return 0;
        used += it->verdict.decompressed;
    }
    return 1;
}

/* The thread. */
static void job_run(void *arg)
{
    check_items(arg, SIZE_MAX);
}

static void verdicts_drop(records_check_t *j)
{
    for (int i = 0; i < j->n; i++) {
        records_verdict_release(&j->items[i].verdict);
        memset(&j->items[i].verdict, 0, sizeof(j->items[i].verdict));
    }
}

/* As the thread, within the loop's share: a batch refused as too large
 * only because of it sends the whole job to the thread. */
int records_check_try_here(records_check_t *j)
{
    if (j->bytes > RECORDS_CHECK_INLINE_BYTES)
        return 0;
    if (!check_items(j, RECORDS_CHECK_INLINE_DECOMPRESSED)) {
        verdicts_drop(j);
        return 0;
    }
    j->finished = 1;
    return 1;
}

/* Room again: the waiting requests try again, in the order they came. */
static void wake_waiters(broker_t *b, struct records_check_service *s)
{
    for (size_t i = 0; i < s->nwaiters; i++)
        broker_wake_later(b, s->waiters[i].conn_id, s->waiters[i].request_id);
    s->nwaiters = 0;
}

/* The loop, after job_run. */
static void job_done(void *arg)
{
    records_check_t *j = arg;
    broker_t *b = j->b;
    struct records_check_service *s = b->rcheck;
    s->jobs--;
    s->bytes -= j->bytes;
    wake_waiters(b, s);
    j->finished = 1;
    if (atomic_load(&j->released))
        job_free(j);
    else
        broker_wake_later(b, j->conn_id, j->request_id);
}

static void wait_for_room(struct records_check_service *s, uint64_t conn_id, uint64_t request_id)
{
    for (size_t i = 0; i < s->nwaiters; i++)
        if (s->waiters[i].conn_id == conn_id && s->waiters[i].request_id == request_id)
            return;
    if (s->nwaiters == s->waiters_cap) {
        s->waiters_cap = s->waiters_cap ? s->waiters_cap * 2 : 16;
        s->waiters = xrealloc(s->waiters, s->waiters_cap * sizeof(*s->waiters));
    }
    s->waiters[s->nwaiters++] = (waiter_t){conn_id, request_id};
}

int records_check_submit(broker_t *b, records_check_t *j, uint64_t conn_id, uint64_t request_id)
{
    struct records_check_service *s = b->rcheck;
    /* Requests already waiting go first; one job is always let in. */
    int room = s->jobs == 0 || (s->nwaiters == 0 && s->jobs < RECORDS_CHECK_MAX_JOBS &&
                                s->bytes + j->bytes <= RECORDS_CHECK_MAX_BYTES);
    if (!room) {
        job_free(j);
        wait_for_room(s, conn_id, request_id);
        return 0;
    }
    j->b = b;
    j->conn_id = conn_id;
    j->request_id = request_id;
    if (worker_submit(s->thread, job_run, job_done, j) < 0) {
        job_free(j);
        return -1;
    }
    j->submitted = 1;
    s->jobs++;
    s->bytes += j->bytes;
    return 1;
}

int records_check_finished(const records_check_t *j)
{
    return j->finished;
}

records_verdict_t *records_check_verdict(records_check_t *j, int slot)
{
    return j && slot < j->n && j->items[slot].added ? &j->items[slot].verdict : NULL;
}

void records_check_release(records_check_t *j)
{
    if (!j)
        return;
    if (!j->submitted || j->finished) {
        job_free(j);
        return;
    }
    atomic_store(&j->released, 1);   /* job_done frees it */
}
