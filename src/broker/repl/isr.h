/* isr.h -- the leader's view of one partition it leads (docs/replication.md):
 * AR (assigned replicas), ISR (in sync), CUR (catching up: AR minus ISR), RAR
 * (being reassigned in), each follower's LEO and when it last caught up, and
 * the high watermark. A pure state machine: no I/O, the clock is a parameter,
 * the coordinator is reached by the caller (repl/leadership.c).
 *
 * The rules (docs/replication.md says why each is safe):
 * - HW = the smallest LEO over the ISR, this replica's own included; it never
 *   moves backwards. A follower whose LEO is not known yet in this epoch (it
 *   has not fetched since we became leader) holds the HW where it is.
 * - A follower's fetch offset is its LEO. It is caught up when that reaches
 *   our LEO; it was caught up at its previous fetch when it reaches what our
 *   LEO was then (Kafka's lastCaughtUpTime).
 * - The ISR the HW is computed over is the coordinator's, plus members being
 *   added by a write in flight. A member being removed still counts until the
 *   write succeeds: a shrink takes effect only once fenced in the coordinator,
 *   so a deposed leader can never commit with a smaller ISR than the real one.
 * - becomeLeader waits (LeaderElectionWaitTime) for the live replicas to catch
 *   up to where this epoch began; then, and from then on, an ISR member that
 *   has not caught up for KeepInSyncTime or whose broker is gone leaves, and a
 *   live AR replica with LEO >= HW and >= the epoch's start joins. */
#ifndef KIPPER_BROKER_REPL_ISR_H
#define KIPPER_BROKER_REPL_ISR_H

#include <stdint.h>

#include "broker/coord/coord_data.h"

#define ISR_MAX COORD_MAX_REPLICAS

typedef struct {
    int32_t id;
    int64_t leo;              /* its last fetch offset; -1 until it fetches in this epoch */
    uint64_t caught_up_ms;    /* last time it had everything we had (0: not in this epoch) */
    int64_t prev_leader_leo;  /* our LEO at its previous fetch */
    uint64_t prev_fetch_ms;   /* when that was */
} isr_follower_t;

typedef struct {
    int32_t me;
    int32_t epoch;
    int64_t epoch_start;      /* our LEO when this epoch began */
    int64_t leo;              /* ours */
    int64_t hw;
    int32_t ar[ISR_MAX];      /* assigned replicas, preferred first */
    int nar;
    int32_t isr[ISR_MAX];     /* as the coordinator holds it */
    int nisr;
    int32_t rar[ISR_MAX];     /* reassignment targets not in AR yet */
    int nrar;
    isr_follower_t *followers;   /* AR and RAR, without me (owned) */
    int nfollowers;
    uint64_t settle_at_ms;    /* becomeLeader's wait for the live replicas ends */
    int settled;
    int changing;             /* an ISR write is in flight: pending is what it writes */
    int32_t pending[ISR_MAX];
    int npending;
} isr_t;

/* becomeLeader at epoch with our log at leo and our HW (as follower) at hw;
 * isr as the election wrote it. ISR members count as caught up now; the wait
 * for the others ends at now + wait_ms (0: settled at once). */
void isr_init(isr_t *s, int32_t me, int32_t epoch, const int32_t *ar, int nar, const int32_t *isr, int nisr,
              int64_t leo, int64_t hw, uint64_t now_ms, uint64_t wait_ms);
void isr_free(isr_t *s);
/* The replica lists changed while leading (reassignment): progress of the
 * replicas that stay is kept. */
void isr_set_replicas(isr_t *s, const int32_t *ar, int nar, const int32_t *rar, int nrar, uint64_t now_ms);

/* Our log grew to leo. 1 when the HW advanced. */
int isr_appended(isr_t *s, int64_t leo);
/* A follower fetched from fetch_offset (its LEO). 1 when the HW advanced,
 * 0 when not, -1 when id is not one of our followers. */
int isr_fetched(isr_t *s, int32_t id, int64_t fetch_offset, uint64_t now_ms);

/* Whether the broker of a replica is alive (registered in the coordinator). */
typedef int (*isr_live_fn)(void *arg, int32_t id);
/* The ISR the coordinator should hold now (out, *nout; this replica first),
 * by the rules above: 1 when it differs from the current one and no write is
 * in flight, else 0. Never returns an ISR without this replica. */
int isr_plan(isr_t *s, uint64_t now_ms, uint64_t lag_ms, isr_live_fn live, void *arg, int32_t *out, int *nout);
/* The caller is writing isr (fenced). Members added count towards the HW at
 * once; members removed only when the write is done. */
void isr_write_started(isr_t *s, const int32_t *isr, int n);
/* The write finished: ok, the coordinator holds it (1 when the HW advanced);
 * not ok, it was not written (a fenced leader stops leading; other failures
 * may be retried). */
int isr_write_done(isr_t *s, int ok);

/* Whether replica id (of AR or RAR) is in sync now: this replica itself,
 * or a live follower that has everything this epoch began with and the HW
 * and was caught up within lag_ms. A move completes when its whole target
 * set is (repl/move.c). */
int isr_in_sync(const isr_t *s, int32_t id, uint64_t now_ms, uint64_t lag_ms, isr_live_fn live, void *arg);

/* Whether every other member of the coordinator's ISR stopped fetching:
 * there is at least one, and none fetched within quiet_ms before now (or at
 * all this epoch). Followers leave a leader they still count as such only
 * by dying; when all of them leave at once, another was most likely
 * elected (repl/lease.c). */
int isr_followers_left(const isr_t *s, uint64_t now_ms, uint64_t quiet_ms);

/* Members the HW counts (the coordinator's ISR plus members being added). */
int isr_size_for_acks(const isr_t *s);
int isr_contains(const int32_t *ids, int n, int32_t id);
const isr_follower_t *isr_follower(const isr_t *s, int32_t id);

#endif
