/* test_repl.c -- the replication state machines driven by scripted events:
 * the leader's ISR and high watermark (isr.c), the commitQ (commitq.c) and
 * becomeFollower's truncation by leader epoch (truncation.c), including
 * KIP-101's two scenarios where truncating to the HW loses committed data. */
#include <stdlib.h>
#include <string.h>

#include "broker/repl/commitq.h"
#include "broker/repl/isr.h"
#include "broker/repl/read_replica.h"
#include "broker/repl/truncation.h"
#include "broker/wire/kafka_errors.h"
#include "suites.h"
#include "unit.h"

/* ---- ISR and HW ---- */

#define LAG 10000
#define WAIT 3000

typedef struct {
    int32_t dead[8];
    int ndead;
} liveness_t;

static int is_live(void *arg, int32_t id)
{
    liveness_t *l = arg;
    return !isr_contains(l->dead, l->ndead, id);
}

static int members_are(const int32_t *got, int n, const int32_t *want, int nwant)
{
    if (n != nwant)
        return 0;
    for (int i = 0; i < nwant; i++)
        if (!isr_contains(got, n, want[i]))
            return 0;
    return 1;
}

/* Broker 1 leads at epoch 5 with replicas 1,2,3 all in the ISR, log at 100. */
static void lead3(isr_t *s, uint64_t now, uint64_t wait)
{
    static const int32_t ar[] = {1, 2, 3};
    isr_init(s, 1, 5, ar, 3, ar, 3, 100, 90, now, wait);
}

static void test_isr_hw_waits_for_every_member(void)
{
    isr_t s;
    lead3(&s, 1000, 0);
    CHECK_EQ(s.hw, 90);
    CHECK_EQ(isr_appended(&s, 120), 0);   /* followers unknown in this epoch: HW holds */
    CHECK_EQ(isr_fetched(&s, 2, 110, 1001), 0);
    CHECK_EQ(s.hw, 90);                   /* 3 still unknown */
    CHECK_EQ(isr_fetched(&s, 3, 105, 1002), 1);
    CHECK_EQ(s.hw, 105);                  /* min(120, 110, 105) */
    CHECK_EQ(isr_fetched(&s, 3, 120, 1003), 1);
    CHECK_EQ(s.hw, 110);
    CHECK_EQ(isr_fetched(&s, 9, 120, 1003), -1);   /* not a replica */
    isr_free(&s);
}

static void test_isr_hw_never_moves_back(void)
{
    isr_t s;
    lead3(&s, 1000, 0);
    isr_appended(&s, 200);
    isr_fetched(&s, 2, 200, 1001);
    isr_fetched(&s, 3, 200, 1001);
    CHECK_EQ(s.hw, 200);
    /* A follower that restarted and lost its unflushed tail reports less. */
    CHECK_EQ(isr_fetched(&s, 3, 150, 1002), 0);
    CHECK_EQ(s.hw, 200);
    /* ... and leaves the ISR at once: it no longer has what was committed. */
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    CHECK(isr_plan(&s, 1003, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));
    /* A fetch from beyond our log end (it has not truncated yet) counts for nothing. */
    CHECK_EQ(isr_fetched(&s, 2, 300, 1004), 0);
    CHECK_EQ(isr_follower(&s, 2)->leo, 200);
    isr_free(&s);
}

static void test_isr_leader_alone(void)
{
    static const int32_t ar[] = {1, 2, 3};
    static const int32_t me[] = {1};
    isr_t s;
    isr_init(&s, 1, 0, ar, 3, me, 1, 0, 0, 0, 0);
    CHECK_EQ(isr_size_for_acks(&s), 1);
    CHECK_EQ(isr_appended(&s, 10), 1);    /* the only member: HW follows the log end */
    CHECK_EQ(s.hw, 10);
    isr_free(&s);
}

/* The evidence a leader cut off from its coordinator goes by (repl/lease.c):
 * every other ISR member silent for the quiet time; one still fetching, or
 * an ISR of the leader alone, is no evidence. */
static void test_isr_followers_left(void)
{
    isr_t s;
    lead3(&s, 1000, 0);
    CHECK_EQ(isr_followers_left(&s, 1500, 1000), 1);   /* neither fetched this epoch */
    isr_fetched(&s, 2, 100, 1100);
    isr_fetched(&s, 3, 100, 1200);
    CHECK_EQ(isr_followers_left(&s, 2000, 1000), 0);
    CHECK_EQ(isr_followers_left(&s, 2150, 1000), 0);   /* 3 fetched 950 ms ago */
    CHECK_EQ(isr_followers_left(&s, 2200, 1000), 1);
    isr_fetched(&s, 3, 100, 2300);
    CHECK_EQ(isr_followers_left(&s, 2400, 1000), 0);   /* one came back */
    isr_free(&s);

    static const int32_t ar[] = {1, 2, 3};
    static const int32_t me[] = {1};
    isr_init(&s, 1, 0, ar, 3, me, 1, 0, 0, 0, 0);
    CHECK_EQ(isr_followers_left(&s, 99999, 1000), 0);  /* no follower in the ISR: no evidence */
    isr_free(&s);
}

static void test_isr_shrinks_after_lag(void)
{
    isr_t s;
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 1000, 0);
    isr_appended(&s, 100);
    isr_fetched(&s, 2, 100, 1000);
    isr_fetched(&s, 3, 100, 1000);
    /* 2 keeps fetching and keeps up; 3 goes quiet. */
    for (uint64_t t = 2000; t <= 1000 + LAG; t += 1000) {
        isr_appended(&s, s.leo + 10);
        isr_fetched(&s, 2, s.leo, t);
        CHECK(!isr_plan(&s, t, LAG, is_live, &live, out, &n));
    }
    CHECK(!isr_plan(&s, 1000 + LAG, LAG, is_live, &live, out, &n));   /* exactly the lag: still in */
    CHECK(isr_plan(&s, 1001 + LAG, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));
    CHECK_EQ(out[0], 1);
    /* The HW counts 3 until the shrink is written. */
    int64_t hw = s.hw;
    isr_write_started(&s, out, n);
    CHECK_EQ(s.hw, hw);
    CHECK_EQ(isr_size_for_acks(&s), 3);
    CHECK(!isr_plan(&s, 1002 + LAG, LAG, is_live, &live, out, &n));   /* one write at a time */
    CHECK_EQ(isr_write_done(&s, 1), 1);   /* now the HW moves to 2's LEO */
    CHECK_EQ(s.hw, s.leo);
    CHECK_EQ(s.nisr, 2);
    CHECK_EQ(isr_size_for_acks(&s), 2);
    isr_free(&s);
}

static void test_isr_stopped_follower_stays_out(void)
{
    /* A quiet partition: a follower that stopped fetching leaves after the
     * lag, and its last position (still the HW) does not bring it back. */
    isr_t s;
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 0, 0);
    isr_fetched(&s, 2, 100, 0);
    isr_fetched(&s, 3, 100, 0);
    for (uint64_t t = 500; t <= 2 * LAG; t += 500)
        isr_fetched(&s, 2, 100, t);
    CHECK(isr_plan(&s, 2 * LAG, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));
    isr_write_started(&s, out, n);
    isr_write_done(&s, 1);
    CHECK(!isr_plan(&s, 2 * LAG + 1, LAG, is_live, &live, out, &n));
    /* It fetches again: it joins. */
    isr_fetched(&s, 3, 100, 2 * LAG + 2);
    CHECK(isr_plan(&s, 2 * LAG + 3, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2, 3}, 3));
    isr_free(&s);
}

static void test_isr_caught_up_at_previous_fetch(void)
{
    /* A follower that always fetches what we had at its previous fetch is in
     * sync even if new data arrives between every two of its fetches. */
    isr_t s;
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 0, 0);
    int64_t leo = 100;
    isr_appended(&s, leo);
    isr_fetched(&s, 3, leo, 0);
    for (uint64_t t = 500; t < 5 * LAG; t += 500) {
        int64_t had = s.leo;
        isr_appended(&s, had + 50);
        isr_fetched(&s, 2, had, t);   /* reaches what we had at its last fetch */
        isr_fetched(&s, 3, s.leo, t);
    }
    CHECK(!isr_plan(&s, 5 * LAG, LAG, is_live, &live, out, &n));
    isr_free(&s);
}

static void test_isr_dead_broker_leaves_at_once(void)
{
    isr_t s;
    liveness_t live = {.dead = {3}, .ndead = 1};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 1000, 0);
    isr_fetched(&s, 2, 100, 1000);
    isr_fetched(&s, 3, 100, 1000);
    CHECK(isr_plan(&s, 1001, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));
    isr_free(&s);
}

static void test_isr_expands_when_caught_up(void)
{
    static const int32_t ar[] = {1, 2, 3};
    static const int32_t isr[] = {1, 2};
    isr_t s;
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    isr_init(&s, 1, 7, ar, 3, isr, 2, 500, 500, 0, 0);
    isr_fetched(&s, 2, 500, 1);
    isr_appended(&s, 600);
    isr_fetched(&s, 2, 600, 2);
    CHECK_EQ(s.hw, 600);
    isr_fetched(&s, 3, 450, 3);            /* behind the epoch's start and the HW */
    CHECK(!isr_plan(&s, 4, LAG, is_live, &live, out, &n));
    isr_fetched(&s, 3, 550, 5);            /* past the epoch start, still below the HW */
    CHECK(!isr_plan(&s, 6, LAG, is_live, &live, out, &n));
    isr_fetched(&s, 3, 600, 7);
    CHECK(isr_plan(&s, 8, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2, 3}, 3));
    isr_write_started(&s, out, n);
    /* Counted at once: the HW now waits for 3 as well. */
    CHECK_EQ(isr_size_for_acks(&s), 3);
    isr_appended(&s, 700);
    isr_fetched(&s, 2, 700, 9);
    CHECK_EQ(s.hw, 600);
    isr_fetched(&s, 3, 700, 9);
    CHECK_EQ(s.hw, 700);
    CHECK_EQ(isr_write_done(&s, 1), 0);
    CHECK_EQ(s.nisr, 3);
    /* A dead CUR replica never joins. */
    isr_free(&s);
    isr_init(&s, 1, 7, ar, 3, isr, 2, 500, 500, 0, 0);
    isr_fetched(&s, 2, 500, 1);
    isr_fetched(&s, 3, 500, 1);
    liveness_t dead3 = {.dead = {3}, .ndead = 1};
    CHECK(!isr_plan(&s, 2, LAG, is_live, &dead3, out, &n));
    isr_free(&s);
}

static void test_isr_fenced_write(void)
{
    isr_t s;
    liveness_t live = {.dead = {3}, .ndead = 1};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 0, 0);
    isr_fetched(&s, 2, 100, 0);
    CHECK(isr_plan(&s, 1, LAG, is_live, &live, out, &n));
    isr_write_started(&s, out, n);
    CHECK_EQ(isr_write_done(&s, 0), 0);   /* refused: the ISR stays as it was */
    CHECK_EQ(s.nisr, 3);
    CHECK(!s.changing);
    isr_free(&s);
}

static void test_isr_settle_wait(void)
{
    /* becomeLeader waits for the live replicas; then ISR = those synced. */
    isr_t s;
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 1000, WAIT);
    isr_fetched(&s, 2, 100, 1100);
    CHECK(!isr_plan(&s, 1200, LAG, is_live, &live, out, &n));   /* 3 not synced, wait not over */
    CHECK(!s.settled);
    CHECK(isr_plan(&s, 1000 + WAIT, LAG, is_live, &live, out, &n));
    CHECK(s.settled);
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));
    isr_free(&s);

    /* Everyone synced early: settled before the wait ends, nothing to write. */
    lead3(&s, 1000, WAIT);
    isr_fetched(&s, 2, 100, 1100);
    isr_fetched(&s, 3, 100, 1150);
    CHECK(!isr_plan(&s, 1200, LAG, is_live, &live, out, &n));
    CHECK(s.settled);
    isr_free(&s);

    /* A dead replica is not waited for. */
    liveness_t dead3 = {.dead = {3}, .ndead = 1};
    lead3(&s, 1000, WAIT);
    isr_fetched(&s, 2, 100, 1100);
    CHECK(isr_plan(&s, 1200, LAG, is_live, &dead3, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));
    isr_free(&s);
}

static void test_isr_unassigned_member_leaves(void)
{
    isr_t s;
    liveness_t live = {.ndead = 0};
    int32_t out[ISR_MAX];
    int n;
    lead3(&s, 0, 0);
    isr_fetched(&s, 2, 100, 0);
    isr_fetched(&s, 3, 100, 0);
    static const int32_t ar2[] = {1, 2};
    static const int32_t rar[] = {4};
    isr_set_replicas(&s, ar2, 2, rar, 1, 1);
    CHECK_EQ(isr_follower(&s, 2)->leo, 100);    /* progress kept */
    CHECK(isr_follower(&s, 3) == NULL);
    CHECK(isr_follower(&s, 4) != NULL);
    CHECK(isr_plan(&s, 2, LAG, is_live, &live, out, &n));
    CHECK(members_are(out, n, (int32_t[]){1, 2}, 2));   /* RAR does not join the ISR */
    isr_free(&s);
}

/* ---- commitQ ---- */

typedef struct {
    int calls;
    int16_t error;
} outcome_t;

static void record(commit_waiter_t *w, int16_t error, void *arg)
{
    (void)w;
    outcome_t *o = arg;
    o->calls++;
    o->error = error;
}

/* KIP-392, Kafka's RackAwareReplicaSelector: the leader when the client
 * gives no rack, is in the leader's rack, or has no candidate in its own;
 * else the candidate of its rack with the largest log end, then the most
 * recently caught up. */
static void test_read_replica_select(void)
{
    const read_replica_view_t f[] = {
        {2, "b", 100, 5000}, {3, "c", 90, 9000}, {4, "c", 100, 7000}, {5, "c", 100, 8000}, {6, "", 100, 9999},
    };
    CHECK_EQ(read_replica_select("a", f, 5, ""), -1);
    CHECK_EQ(read_replica_select("a", f, 5, NULL), -1);
    CHECK_EQ(read_replica_select("a", f, 5, "a"), -1);    /* the leader's rack */
    CHECK_EQ(read_replica_select("a", f, 5, "d"), -1);    /* no replica there */
    CHECK_EQ(read_replica_select("a", f, 5, "b"), 2);
    CHECK_EQ(read_replica_select("a", f, 5, "c"), 5);     /* 100 beats 90; of 4 and 5, 5 caught up last */
    CHECK_EQ(read_replica_select("a", f, 2, "c"), 3);     /* only 3 of rack c among the candidates */
    CHECK_EQ(read_replica_select("c", f, 5, "c"), -1);    /* the leader is in c itself */
    CHECK_EQ(read_replica_select("", f, 5, "b"), 2);      /* a leader without a rack */
    CHECK_EQ(read_replica_select("a", f, 0, "b"), -1);
}

static void test_commitq(void)
{
    commitq_t q;
    commit_waiter_t w[4];
    outcome_t o[4];
    memset(o, 0, sizeof(o));
    commitq_init(&q, 3);
    CHECK_EQ(commitq_push(&q, &w[0], 10, record, &o[0]), 0);
    CHECK_EQ(commitq_push(&q, &w[1], 20, record, &o[1]), 0);
    CHECK_EQ(commitq_push(&q, &w[2], 30, record, &o[2]), 0);
    CHECK_EQ(commitq_push(&q, &w[3], 40, record, &o[3]), -1);   /* bounded */
    commitq_advance(&q, 9, 0);
    CHECK_EQ(o[0].calls, 0);
    commitq_advance(&q, 20, 0);
    CHECK_EQ(o[0].calls, 1);
    CHECK_EQ(o[1].calls, 1);
    CHECK_EQ(o[2].calls, 0);
    CHECK_EQ(commitq_len(&q), 1);
    commitq_remove(&w[2]);   /* its request timed out */
    commitq_remove(&w[2]);   /* twice is harmless */
    CHECK_EQ(commitq_len(&q), 0);
    CHECK_EQ(commitq_push(&q, &w[3], 40, record, &o[3]), 0);
    commitq_advance(&q, 40, KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    CHECK_EQ(o[3].error, KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    CHECK_EQ(o[2].calls, 0);
    /* A retried batch already in the log waits at its own, lower offset. */
    commitq_push(&q, &w[0], 70, record, &o[0]);
    commitq_push(&q, &w[1], 60, record, &o[1]);
    commitq_advance(&q, 65, 0);
    CHECK_EQ(o[1].calls, 2);
    CHECK_EQ(o[0].calls, 1);
    commitq_push(&q, &w[1], 80, record, &o[1]);
    commitq_fail_all(&q, KERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ(o[0].calls, 2);
    CHECK_EQ(o[0].error, KERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ(o[1].error, KERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ(commitq_len(&q), 0);
    CHECK(w[0].queue == NULL);
}

/* ---- truncation ---- */

/* Runs becomeFollower's exchange between a follower and a leader cache; the
 * offset the follower cuts at, or -1 when it just fetches. */
static int64_t truncate_against(const epoch_entry_t *mine, size_t n, int64_t leo, const epoch_entry_t *leader,
                                size_t ln, int64_t leader_leo)
{
    trunc_step_t st = truncation_start(mine, n);
    for (int rounds = 0; rounds < 10 && st.action == TRUNC_ASK; rounds++) {
        int32_t le;
        int64_t lend;
        epoch_cache_end_offset(leader, ln, leader_leo, st.epoch, &le, &lend);
        st = truncation_next(mine, n, leo, st.epoch, le, lend);
    }
    if (st.action == TRUNC_CUT)
        return st.offset;
    return st.action == TRUNC_FETCH ? -1 : -2;
}

static void test_truncation_kip101_restart(void)
{
    /* KIP-101 scenario 1: follower B has m0 m1 (LEO 2) but its HW is 1 when
     * it restarts. Truncating to the HW would drop m1, which leader A had
     * committed; A then dies and B leads without it. By epoch, B keeps
     * both: A has epoch 0 up to offset 2. */
    static const epoch_entry_t a[] = {{0, 0}}, b[] = {{0, 0}};
    CHECK_EQ(truncate_against(b, 1, 2, a, 1, 2), 2);
}

static void test_truncation_kip101_divergence(void)
{
    /* KIP-101 scenario 2: A (leader, epoch 0) has m0 m1; B has m0. Both crash;
     * B comes back first, leads at epoch 1 and writes m2 at offset 1. A comes
     * back and follows: by HW it would keep its m1 at offset 1, diverging
     * from B forever. By epoch it cuts at 1, where epoch 1 began on B. */
    static const epoch_entry_t a[] = {{0, 0}}, b[] = {{0, 0}, {1, 1}};
    CHECK_EQ(truncate_against(a, 1, 2, b, 2, 2), 1);
}

static void test_truncation_cases(void)
{
    /* Same history: nothing to cut (the cut is at our own end). */
    static const epoch_entry_t same[] = {{0, 0}, {3, 40}};
    CHECK_EQ(truncate_against(same, 2, 90, same, 2, 120), 90);
    /* An empty log fetches straight away. */
    CHECK_EQ(truncate_against(NULL, 0, 0, same, 2, 120), -1);
    /* We led epoch 4 briefly (offsets 90..99) and were deposed; the new
     * leader at epoch 5 never had epoch 4, and its epoch 3 runs to 95: the
     * logs part where our epoch 3 ended. */
    static const epoch_entry_t f[] = {{0, 0}, {3, 40}, {4, 90}};
    static const epoch_entry_t l[] = {{0, 0}, {3, 40}, {5, 95}};
    CHECK_EQ(truncate_against(f, 3, 100, l, 3, 130), 90);
    /* The same, when our epoch-3 part is shorter than the leader's. */
    static const epoch_entry_t f2[] = {{0, 0}, {3, 40}, {4, 60}};
    CHECK_EQ(truncate_against(f2, 3, 100, l, 3, 130), 60);
    /* We know an epoch the leader never had, and the leader an epoch we
     * never had, both between shared ones: several rounds. */
    static const epoch_entry_t f3[] = {{0, 0}, {2, 10}, {6, 50}};
    static const epoch_entry_t l3[] = {{0, 0}, {4, 30}, {7, 60}};
    CHECK_EQ(truncate_against(f3, 3, 80, l3, 3, 90), 10);
    /* The leader's log is empty but it assigned its epoch: cut everything. */
    static const epoch_entry_t empty_leader[] = {{5, 0}};
    static const epoch_entry_t old[] = {{2, 0}};
    CHECK_EQ(truncate_against(old, 1, 50, empty_leader, 1, 0), 0);
    /* Our latest epoch is newer than anything the leader knows (it has not
     * taken over yet): ask again later. */
    static const epoch_entry_t newer[] = {{0, 0}, {9, 10}};
    trunc_step_t st = truncation_next(newer, 2, 20, 9, -1, -1);
    CHECK_EQ(st.action, TRUNC_RETRY);
}

void suite_repl(void)
{
    RUN(test_isr_hw_waits_for_every_member);
    RUN(test_isr_hw_never_moves_back);
    RUN(test_isr_leader_alone);
    RUN(test_isr_shrinks_after_lag);
    RUN(test_isr_caught_up_at_previous_fetch);
    RUN(test_isr_stopped_follower_stays_out);
    RUN(test_isr_dead_broker_leaves_at_once);
    RUN(test_isr_expands_when_caught_up);
    RUN(test_isr_fenced_write);
    RUN(test_isr_followers_left);
    RUN(test_isr_settle_wait);
    RUN(test_isr_unassigned_member_leaves);
    RUN(test_read_replica_select);
    RUN(test_commitq);
    RUN(test_truncation_kip101_restart);
    RUN(test_truncation_kip101_divergence);
    RUN(test_truncation_cases);
}
