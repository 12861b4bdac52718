/* test_producer_state.c -- idempotent producer checks per partition: order,
 * duplicates of the last 5 batches, gaps, epochs, sequence wrap, unknown
 * producers, the eviction cap, expiry, the table against a simple model, and
 * a rebuild from a real partition log answering exactly as before. */
#include "base/crc32c.h"
#include "base/endian.h"
#include "broker/log/partition_log.h"
#include "broker/log/producer_state.h"
#include "suites.h"
#include "unit.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define T0 1700000000000LL
#define DAY 86400000LL

/* ---- Helpers ------------------------------------------------------------------ */

/* A producer as the test drives it: where its next batch starts. */
typedef struct {
    int64_t pid;
    int16_t epoch;
    int32_t next_seq;
} producer_t;

typedef struct {
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset, ts;
} sent_t;

static int64_t next_offset;

/* Check, then record, one batch of n records; the batch is returned. */
static sent_t send_batch(producer_state_t *ps, producer_t *p, int n, int64_t ts)
{
    sent_t s = {p->next_seq, producer_state_last_seq(p->next_seq, n - 1), next_offset,
                next_offset + n - 1, ts};
    CHECK_EQ(producer_state_check(ps, p->pid, p->epoch, s.first_seq, s.last_seq, NULL),
             PRODUCER_APPEND);
    producer_state_update(ps, p->pid, p->epoch, s.first_seq, s.last_seq, s.first_offset,
                          s.last_offset, ts);
    next_offset += n;
    p->next_seq = producer_state_last_seq(s.last_seq, 1);
    return s;
}

static int check(const producer_state_t *ps, const producer_t *p, int16_t epoch, int32_t first,
                 int32_t last)
{
    producer_dup_t dup;
    return producer_state_check(ps, p->pid, epoch, first, last, &dup);
}

static void expect_duplicate(const producer_state_t *ps, const producer_t *p, const sent_t *s)
{
    producer_dup_t dup = {-9, -9, -9};
    CHECK_EQ(producer_state_check(ps, p->pid, p->epoch, s->first_seq, s->last_seq, &dup),
             PRODUCER_DUPLICATE);
    CHECK_EQ(dup.first_offset, s->first_offset);
    CHECK_EQ(dup.last_offset, s->last_offset);
    CHECK_EQ(dup.max_timestamp, s->ts);
}

/* ---- Sequences ------------------------------------------------------------------- */

static void test_producer_state_in_order(void)
{
    producer_state_t *ps = producer_state_create(PRODUCER_MAX_PRODUCERS_DEFAULT);
    producer_t p = {1000, 0, 0};
    next_offset = 0;
    for (int i = 0; i < 50; i++)
        send_batch(ps, &p, 1 + i % 7, T0 + i);
    CHECK_EQ(producer_state_count(ps), 1);
    /* Non-idempotent batches are not checked nor recorded. */
    CHECK_EQ(producer_state_check(ps, -1, -1, -1, -1, NULL), PRODUCER_APPEND);
    producer_state_update(ps, -1, -1, -1, -1, 0, 0, T0);
    CHECK_EQ(producer_state_count(ps), 1);
    /* Two producers keep separate sequences. */
    producer_t q = {1001, 0, 0};
    send_batch(ps, &q, 3, T0);
    send_batch(ps, &p, 3, T0);
    send_batch(ps, &q, 3, T0);
    CHECK_EQ(producer_state_count(ps), 2);
    producer_state_free(ps);
}

static void test_producer_state_duplicates(void)
{
    producer_state_t *ps = producer_state_create(16);
    producer_t p = {42, 3, 0};
    sent_t sent[7];
    next_offset = 500;
    for (int i = 0; i < 7; i++)
        sent[i] = send_batch(ps, &p, 1 + i, T0 + 100 * i);
    /* Each of the last 5, with its original offsets and timestamp. */
    for (int i = 2; i < 7; i++)
        expect_duplicate(ps, &p, &sent[i]);
    /* Older ones are forgotten: just out of order now. */
    CHECK_EQ(check(ps, &p, p.epoch, sent[1].first_seq, sent[1].last_seq),
             PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p, p.epoch, sent[0].first_seq, sent[0].last_seq),
             PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    /* Same first sequence, other length: not the same batch. */
    CHECK_EQ(check(ps, &p, p.epoch, sent[4].first_seq, sent[4].last_seq + 1),
             PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    /* A duplicate changes nothing: the next batch still follows the last. */
    CHECK_EQ(check(ps, &p, p.epoch, p.next_seq, p.next_seq), PRODUCER_APPEND);
    sent_t more = send_batch(ps, &p, 2, T0 + 1000);
    expect_duplicate(ps, &p, &more);
    expect_duplicate(ps, &p, &sent[3]);
    CHECK_EQ(check(ps, &p, p.epoch, sent[2].first_seq, sent[2].last_seq),
             PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    producer_state_free(ps);
}

static void test_producer_state_gaps(void)
{
    producer_state_t *ps = producer_state_create(16);
    producer_t p = {7, 0, 0};
    next_offset = 0;
    send_batch(ps, &p, 5, T0); /* 0..4 */
    send_batch(ps, &p, 5, T0); /* 5..9 */
    CHECK_EQ(check(ps, &p, 0, 11, 11), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE); /* a gap */
    CHECK_EQ(check(ps, &p, 0, 100, 104), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p, 0, 9, 9), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);  /* overlaps */
    CHECK_EQ(check(ps, &p, 0, 3, 7), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p, 0, 0, 0), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);  /* same epoch, 0 */
    CHECK_EQ(check(ps, &p, 0, 10, 12), PRODUCER_APPEND);
    producer_state_free(ps);
}

static void test_producer_state_epochs(void)
{
    producer_state_t *ps = producer_state_create(16);
    producer_t p = {9, 4, 0};
    next_offset = 0;
    send_batch(ps, &p, 3, T0); /* 0..2 */
    sent_t b = send_batch(ps, &p, 3, T0); /* 3..5 */
    /* A new epoch starts at 0, and may jump. */
    CHECK_EQ(check(ps, &p, 5, 0, 2), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &p, 9, 0, 0), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &p, 5, 6, 8), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p, 5, 1, 1), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    /* Older epochs are fenced, whatever the sequence. */
    CHECK_EQ(check(ps, &p, 3, 6, 6), PRODUCER_ERR_INVALID_EPOCH);
    CHECK_EQ(check(ps, &p, 3, 0, 0), PRODUCER_ERR_INVALID_EPOCH);
    CHECK_EQ(check(ps, &p, -1, 6, 6), PRODUCER_ERR_INVALID_EPOCH);
    /* Bumped: the old epoch's batches are gone, and it is fenced. */
    p.epoch = 5;
    p.next_seq = 0;
    sent_t c = send_batch(ps, &p, 3, T0); /* 0..2 in epoch 5 */
    expect_duplicate(ps, &p, &c);
    CHECK_EQ(check(ps, &p, 4, b.first_seq, b.last_seq), PRODUCER_ERR_INVALID_EPOCH);
    CHECK_EQ(check(ps, &p, 5, b.first_seq, b.last_seq), PRODUCER_APPEND); /* 3..5 follows 2 */
    /* A producer recorded without an epoch (-1) takes any sequence. */
    producer_t q = {10, -1, 17};
    send_batch(ps, &q, 2, T0);
    CHECK_EQ(check(ps, &q, -1, 500, 500), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &q, 0, 500, 500), PRODUCER_APPEND);
    producer_state_free(ps);
}

static void test_producer_state_sequence_wrap(void)
{
    CHECK_EQ(producer_state_last_seq(0, 4), 4);
    CHECK_EQ(producer_state_last_seq(INT32_MAX - 1, 1), INT32_MAX);
    CHECK_EQ(producer_state_last_seq(INT32_MAX - 1, 2), 0);
    CHECK_EQ(producer_state_last_seq(INT32_MAX - 1, 3), 1);
    CHECK_EQ(producer_state_last_seq(INT32_MAX, 0), INT32_MAX);
    CHECK_EQ(producer_state_last_seq(-1, 5), -1);
    producer_state_t *ps = producer_state_create(16);
    next_offset = 0;
    /* Up to INT32_MAX exactly, then 0. */
    producer_t p = {11, 2, INT32_MAX - 4};
    send_batch(ps, &p, 5, T0);
    CHECK_EQ(p.next_seq, 0);
    CHECK_EQ(check(ps, &p, 2, INT32_MAX, INT32_MAX), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p, 2, 1, 1), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    send_batch(ps, &p, 2, T0);
    /* A batch across the wrap: INT32_MAX-1, INT32_MAX, 0, 1. */
    producer_t q = {12, 0, INT32_MAX - 1};
    sent_t w = send_batch(ps, &q, 4, T0);
    CHECK_EQ(w.last_seq, 1);
    CHECK_EQ(q.next_seq, 2);
    expect_duplicate(ps, &q, &w);
    CHECK_EQ(check(ps, &q, 0, 0, 0), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &q, 0, 2, 2), PRODUCER_APPEND);
    producer_state_free(ps);
}

static void test_producer_state_unknown_pid(void)
{
    producer_state_t *ps = producer_state_create(16);
    next_offset = 0;
    producer_t p = {77, 6, 1234};
    /* Any epoch and sequence for a producer never seen (KIP-360)... */
    CHECK_EQ(check(ps, &p, 6, 1234, 1240), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &p, 0, 0, 0), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &p, -1, 99, 99), PRODUCER_APPEND);
    /* ...except an epoch below "none", as in Kafka. */
    CHECK_EQ(check(ps, &p, -2, 0, 0), PRODUCER_ERR_INVALID_EPOCH);
    CHECK_EQ(producer_state_count(ps), 0);
    /* Once recorded, it is held to its sequence. */
    send_batch(ps, &p, 7, T0);
    CHECK_EQ(check(ps, &p, 6, 1234, 1240), PRODUCER_DUPLICATE);
    CHECK_EQ(check(ps, &p, 6, 1242, 1242), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p, 6, 1241, 1241), PRODUCER_APPEND);
    /* Producer id 0 is a producer like any other. */
    producer_t z = {0, 0, 5};
    send_batch(ps, &z, 1, T0);
    CHECK_EQ(check(ps, &z, 0, 7, 7), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    producer_state_free(ps);
}

/* ---- Bounds: the cap and expiry --------------------------------------------------- */

static void test_producer_state_eviction(void)
{
    producer_state_t *ps = producer_state_create(3);
    next_offset = 0;
    producer_t p[5] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}, {5, 0, 0}};
    send_batch(ps, &p[0], 1, T0);
    send_batch(ps, &p[1], 1, T0);
    send_batch(ps, &p[2], 1, T0);
    send_batch(ps, &p[0], 1, T0); /* 1 is now more recent than 2 */
    send_batch(ps, &p[3], 1, T0); /* full: evicts 2, the least recently updated */
    CHECK_EQ(producer_state_count(ps), 3);
    CHECK_EQ(check(ps, &p[1], 0, 50, 50), PRODUCER_APPEND); /* unknown again */
    CHECK_EQ(check(ps, &p[0], 0, 50, 50), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p[2], 0, 50, 50), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(check(ps, &p[3], 0, 50, 50), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    send_batch(ps, &p[4], 1, T0); /* evicts 3 */
    CHECK_EQ(check(ps, &p[2], 0, 50, 50), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &p[0], 0, 50, 50), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    producer_state_free(ps);
    /* Many producers through a small cap: exactly the newest stay known. */
    ps = producer_state_create(1000);
    for (int64_t pid = 0; pid < 5000; pid++) {
        producer_t q = {pid * 1000, 0, 0};
        send_batch(ps, &q, 2, T0);
    }
    CHECK_EQ(producer_state_count(ps), 1000);
    for (int64_t pid = 0; pid < 5000; pid++) {
        producer_t q = {pid * 1000, 0, 0};
        CHECK_EQ(check(ps, &q, 0, 9, 9),
                 pid >= 4000 ? PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE : PRODUCER_APPEND);
    }
    producer_state_free(ps);
    /* The cap is at least 1. */
    ps = producer_state_create(0);
    send_batch(ps, &p[0], 1, T0);
    send_batch(ps, &p[1], 1, T0);
    CHECK_EQ(producer_state_count(ps), 1);
    producer_state_free(ps);
}

static void test_producer_state_expiry(void)
{
    producer_state_t *ps = producer_state_create(PRODUCER_MAX_PRODUCERS_DEFAULT);
    next_offset = 0;
    producer_t a = {1, 0, 0}, b = {2, 0, 0}, c = {3, 0, 0};
    send_batch(ps, &a, 1, T0);
    send_batch(ps, &a, 1, T0 + 5000); /* its last batch's timestamp counts */
    send_batch(ps, &b, 1, T0 + 1000);
    send_batch(ps, &c, 1, -1);        /* no timestamp: expires at the first sweep */
    CHECK_EQ(producer_state_expire(ps, T0 + 1000, DAY), 1);
    CHECK_EQ(check(ps, &c, 0, 9, 9), PRODUCER_APPEND);
    CHECK_EQ(producer_state_expire(ps, T0 + 1000 + DAY - 1, DAY), 0);
    CHECK_EQ(producer_state_expire(ps, T0 + 1000 + DAY, DAY), 1); /* idle exactly the limit */
    CHECK_EQ(check(ps, &b, 0, 9, 9), PRODUCER_APPEND);
    CHECK_EQ(check(ps, &a, 0, 9, 9), PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE);
    CHECK_EQ(producer_state_count(ps), 1);
    /* A timestamp in the future keeps a producer; a negative limit is 0. */
    CHECK_EQ(producer_state_expire(ps, T0, -5), 0);
    CHECK_EQ(producer_state_expire(ps, T0 + 5000, -5), 1);
    CHECK_EQ(producer_state_count(ps), 0);
    /* Thousands expire, the rest still answer (the table shrinks under them). */
    for (int64_t pid = 0; pid < 3000; pid++) {
        producer_t q = {pid, 0, 0};
        send_batch(ps, &q, 1, pid % 10 == 0 ? T0 + DAY : T0);
    }
    CHECK_EQ(producer_state_expire(ps, T0 + DAY, DAY), 2700);
    CHECK_EQ(producer_state_count(ps), 300);
    for (int64_t pid = 0; pid < 3000; pid++) {
        producer_t q = {pid, 0, 0};
        CHECK_EQ(check(ps, &q, 0, 5, 5),
                 pid % 10 == 0 ? PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE : PRODUCER_APPEND);
    }
    producer_state_expire(ps, INT64_MAX, 0);
    CHECK_EQ(producer_state_count(ps), 0);
    producer_state_clear(ps);
    CHECK_EQ(producer_state_count(ps), 0);
    producer_state_free(ps);
}

/* ---- The table against a model ------------------------------------------------------ */

#define MODEL_PIDS 400

typedef struct {
    int known;
    int32_t last_seq;
    int64_t ts;
    uint64_t touched; /* update order */
} model_t;

static unsigned rnd_state = 2463534242u;
static unsigned rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 17;
    rnd_state ^= rnd_state << 5;
    return rnd_state;
}

static void model_evict_oldest(model_t *m, size_t *count)
{
    int victim = -1;
    for (int k = 0; k < MODEL_PIDS; k++)
        if (m[k].known && (victim < 0 || m[k].touched < m[victim].touched))
            victim = k;
    m[victim].known = 0;
    (*count)--;
}

/* Random updates, expiries and clears on clustered pids (probe runs wrap and
 * collide); every pid's answer must match what the model remembers. */
static void test_producer_state_model(void)
{
    producer_state_t *ps = producer_state_create(150);
    model_t m[MODEL_PIDS] = {{0}};
    size_t count = 0;
    uint64_t clock = 0;
    for (int step = 0; step < 60000; step++) {
        unsigned r = rnd() % 1000;
        if (r < 2) {
            int64_t now = T0 + (int64_t)(rnd() % 1000);
            size_t gone = 0;
            for (int k = 0; k < MODEL_PIDS; k++)
                if (m[k].known && now - m[k].ts >= 300) {
                    m[k].known = 0;
                    gone++;
                }
            CHECK_EQ(producer_state_expire(ps, now, 300), gone);
            count -= gone;
        } else if (r < 3) {
            producer_state_clear(ps);
            memset(m, 0, sizeof(m));
            count = 0;
        } else {
            int k = (int)(rnd() % MODEL_PIDS);
            if (!m[k].known && count == 150)
                model_evict_oldest(m, &count);
            if (!m[k].known)
                count++;
            int32_t first = m[k].known ? m[k].last_seq + 1 : (int32_t)(rnd() % 100);
            m[k] = (model_t){1, first + 2, T0 + (int64_t)(rnd() % 1000), ++clock};
            producer_state_update(ps, (int64_t)k << 40 | 5, 0, first, first + 2, 0, 2, m[k].ts);
        }
        CHECK_EQ(producer_state_count(ps), count);
    }
    for (int k = 0; k < MODEL_PIDS; k++) {
        int64_t pid = (int64_t)k << 40 | 5;
        int32_t next = m[k].known ? m[k].last_seq + 1 : 0;
        CHECK_EQ(producer_state_check(ps, pid, 0, next + 1, next + 1, NULL),
                 m[k].known ? PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE : PRODUCER_APPEND);
        CHECK_EQ(producer_state_check(ps, pid, 0, next, next, NULL), PRODUCER_APPEND);
    }
    producer_state_free(ps);
}

/* ---- Rebuild from a partition log ------------------------------------------------------ */

static char root[256], pdir[300];

/* The partition folder holds files only. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char p[600];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* One uncompressed v2 batch of n small records from a producer, as a
 * client builds it (base offset 0, leader epoch -1); returns its size. */
static size_t make_producer_batch(uint8_t *out, int n, int64_t pid, int16_t epoch, int32_t seq,
                                  int64_t ts, int control)
{
    uint8_t *p = out + BATCH_HEADER_LEN;
    for (int i = 0; i < n; i++) {
        /* length 7: attributes, ts delta i, offset delta i, key -1 (null),
         * value length 1, the value, 0 headers; zigzag varints, all one byte. */
        const uint8_t rec[] = {14, 0, (uint8_t)(2 * i), (uint8_t)(2 * i), 1, 2, (uint8_t)i, 0};
        memcpy(p, rec, sizeof(rec));
        p += sizeof(rec);
    }
    size_t size = (size_t)(p - out);
    memset(out, 0, BATCH_HEADER_LEN);
    be32_put(out + BATCH_OFF_LENGTH, (uint32_t)(size - BATCH_LOG_OVERHEAD));
    be32_put(out + BATCH_OFF_LEADER_EPOCH, (uint32_t)-1);
    out[BATCH_OFF_MAGIC] = 2;
    out[BATCH_OFF_ATTRIBUTES + 1] = control ? BATCH_ATTR_CONTROL : 0;
    be32_put(out + BATCH_OFF_LAST_OFFSET_DELTA, (uint32_t)(n - 1));
    be64_put(out + BATCH_OFF_FIRST_TIMESTAMP, (uint64_t)ts);
    be64_put(out + BATCH_OFF_MAX_TIMESTAMP, (uint64_t)(ts + n - 1));
    be64_put(out + BATCH_OFF_PRODUCER_ID, (uint64_t)pid);
    be16_put(out + BATCH_OFF_PRODUCER_EPOCH, (uint16_t)epoch);
    be32_put(out + BATCH_OFF_BASE_SEQUENCE, (uint32_t)seq);
    be32_put(out + BATCH_OFF_RECORD_COUNT, (uint32_t)n);
    be32_put(out + BATCH_OFF_CRC,
                  crc32c(0, out + BATCH_OFF_ATTRIBUTES, size - BATCH_OFF_ATTRIBUTES));
    return size;
}

#define LOG_PRODUCERS 12
#define PROBE_SEQS 80
#define HISTORY_MAX 100

/* Every idempotent batch the leader appended, as it was recorded. */
typedef struct {
    int64_t pid;
    int16_t epoch;
    sent_t batch;
} recorded_t;

static recorded_t history[HISTORY_MAX];
static size_t nhistory;

/* A leader's produce path: check, append, record the written header. */
static void produce(partition_log_t *log, producer_state_t *ps, producer_t *p, int n, int64_t ts)
{
    uint8_t b[4096];
    size_t len = make_producer_batch(b, n, p->pid, p->epoch, p->next_seq, ts, 0);
    CHECK_EQ(producer_state_check(ps, p->pid, p->epoch, p->next_seq,
                                  producer_state_last_seq(p->next_seq, n - 1), NULL),
             PRODUCER_APPEND);
    CHECK_EQ(partition_log_append(log, b, len, 0, T0, NULL), PLOG_OK);
    record_batch_t h;
    CHECK_EQ(record_batch_parse_header(b, len, &h), PLOG_OK);
    producer_state_apply_batch(&h, ps);
    if (nhistory < HISTORY_MAX)
        history[nhistory++] = (recorded_t){p->pid, p->epoch,
                                           {p->next_seq, p->next_seq + n - 1, h.base_offset,
                                            record_batch_last_offset(&h), ts + n - 1}};
    p->next_seq += n;
}

static void append_plain(partition_log_t *log, int64_t pid, int control)
{
    uint8_t b[4096];
    size_t len = make_producer_batch(b, 2, pid, 9, -1, T0, control);
    CHECK_EQ(partition_log_append(log, b, len, 0, T0, NULL), PLOG_OK);
}

/* The state the leader had when its log ended at end: its updates, replayed. */
static producer_state_t *replay_history(int cap, int64_t end)
{
    producer_state_t *ps = producer_state_create(cap);
    for (size_t i = 0; i < nhistory && history[i].batch.last_offset < end; i++) {
        const sent_t *b = &history[i].batch;
        producer_state_update(ps, history[i].pid, history[i].epoch, b->first_seq, b->last_seq,
                              b->first_offset, b->last_offset, b->ts);
    }
    return ps;
}

/* Every probe answers the same, duplicates with the same offsets. */
static void check_same_answers(const producer_state_t *a, const producer_state_t *b)
{
    CHECK_EQ(producer_state_count(a), producer_state_count(b));
    int differ = 0, duplicates = 0;
    for (int64_t pid = 100; pid < 100 + LOG_PRODUCERS + 2; pid++)
        for (int16_t epoch = -1; epoch < 4; epoch++)
            for (int32_t first = 0; first < PROBE_SEQS; first++)
                for (int32_t len = 0; len < 4; len++) {
                    producer_dup_t da = {0}, db = {0};
                    int ra = producer_state_check(a, pid, epoch, first, first + len, &da);
                    int rb = producer_state_check(b, pid, epoch, first, first + len, &db);
                    duplicates += ra == PRODUCER_DUPLICATE;
                    if (ra != rb || (ra == PRODUCER_DUPLICATE &&
                                     (da.first_offset != db.first_offset ||
                                      da.last_offset != db.last_offset ||
                                      da.max_timestamp != db.max_timestamp)))
                        differ++;
                }
    CHECK_EQ(differ, 0);
    CHECK(producer_state_count(a) == 0 || duplicates > 0); /* the probes reach real batches */
}

static producer_state_t *rebuild_from(partition_log_t *log, int cap)
{
    producer_state_t *ps = producer_state_create(cap);
    CHECK_EQ(partition_log_scan_batches(log, partition_log_start_offset(log),
                                        producer_state_apply_batch, ps),
             PLOG_OK);
    return ps;
}

static partition_log_t *open_small_log(void)
{
    partition_log_config_t cfg;
    partition_log_config_default(&cfg);
    cfg.segment_bytes = 1024;
    cfg.index_interval_bytes = 256;
    partition_log_t *log = NULL;
    char err[256] = "";
    /* Unclean from offset 0: the log itself is rescanned as after a crash. */
    CHECK_EQ(partition_log_open(pdir, &cfg, 0, 0, T0, &log, err, sizeof(err)), PLOG_OK);
    return log;
}

/* Interleaved producers (one bumps its epoch), non-idempotent and control
 * batches, over several segments; more producers than the cap. */
static void fill_log(partition_log_t *log, producer_state_t *live)
{
    producer_t p[LOG_PRODUCERS];
    for (int k = 0; k < LOG_PRODUCERS; k++)
        p[k] = (producer_t){100 + k, (int16_t)(k % 3), 0};
    nhistory = 0;
    for (int round = 0; round < 60; round++) {
        if (round == 30) {
            p[1].epoch++;
            p[1].next_seq = 0;
        }
        produce(log, live, &p[(round * 7) % LOG_PRODUCERS], 1 + round % 4, T0 + round);
        if (round % 9 == 0)
            append_plain(log, -1, 0);
        if (round == 57) /* late, so the cap would not hide it */
            append_plain(log, 100 + LOG_PRODUCERS, 1);
    }
}

static void test_producer_state_rebuild(void)
{
    snprintf(root, sizeof(root), "/tmp/kipper-pstate-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    snprintf(pdir, sizeof(pdir), "%s/events-0", root);
    int cap = LOG_PRODUCERS - 3; /* the cap evicts during the rebuild in the same order */
    partition_log_t *log = open_small_log();
    producer_state_t *live = producer_state_create(cap);
    fill_log(log, live);
    CHECK(partition_log_segment_count(log) > 3);
    producer_state_t *replayed = replay_history(cap, INT64_MAX);
    check_same_answers(live, replayed);
    producer_state_free(replayed);
    /* A restart: the state scanned from the log answers as the live one. */
    partition_log_close(log);
    log = open_small_log();
    producer_state_t *scanned = rebuild_from(log, cap);
    check_same_answers(live, scanned);
    /* And expires the same producers (timestamps come from the batches). */
    size_t gone = producer_state_expire(live, T0 + DAY + 55, DAY);
    CHECK(gone > 0 && gone < producer_state_count(scanned));
    CHECK_EQ(producer_state_expire(scanned, T0 + DAY + 55, DAY), gone);
    check_same_answers(live, scanned);
    producer_state_free(scanned);
    producer_state_free(live);
    /* A follower truncating: cleared and rescanned, the state is the one the
     * leader had when its log ended at the cut. */
    int64_t cut = history[nhistory / 2].batch.first_offset + 1; /* inside a batch */
    live = rebuild_from(log, cap);
    CHECK_EQ(partition_log_truncate_to(log, cut), PLOG_OK);
    producer_state_clear(live);
    CHECK_EQ(producer_state_count(live), 0);
    CHECK_EQ(partition_log_scan_batches(log, 0, producer_state_apply_batch, live), PLOG_OK);
    replayed = replay_history(cap, partition_log_end_offset(log));
    check_same_answers(live, replayed);
    producer_state_free(replayed);
    producer_state_free(live);
    partition_log_close(log);
    remove_dir(pdir);
    rmdir(root);
}

void suite_producer_state(void)
{
    RUN(test_producer_state_in_order);
    RUN(test_producer_state_duplicates);
    RUN(test_producer_state_gaps);
    RUN(test_producer_state_epochs);
    RUN(test_producer_state_sequence_wrap);
    RUN(test_producer_state_unknown_pid);
    RUN(test_producer_state_eviction);
    RUN(test_producer_state_expiry);
    RUN(test_producer_state_model);
    RUN(test_producer_state_rebuild);
}
