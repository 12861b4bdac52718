/* lease.c -- a leader cut off from its coordinator steps aside (repl.h).
 *
 * Leadership is an ephemeral node of this broker's coordinator session.
 * When the broker loses its coordinator link, the session lives on at the
 * coordinator for the session timeout after the coordinator last heard
 * from it; then the coordinator expires it and another replica is elected.
 * A leader cut off from its coordinator learns of that expiry only when it
 * reaches the coordinator again -- until then, in ZooKeeper-era Kafka, it
 * still answers as leader: producers keep sending to it and wait out their
 * request time-out there, long after a new leader took over.
 *
 * Here the cut-off broker steps aside once it has both reasons to believe
 * it was deposed:
 * - its session may have expired: ZooKeeper's client declares the link lost
 *   after two thirds of the session timeout without hearing from the server
 *   (or at once, when the connection breaks), so the session can expire no
 *   sooner than the last third of the timeout after the loss is reported;
 * - the followers of some partition it leads all stopped fetching from it
 *   (isr_followers_left): they reach the coordinator and follow the leader
 *   elected there.
 * The second keeps a whole-coordinator outage harmless: no session expires
 * and nobody is elected while no quorum serves, followers keep fetching,
 * and the brokers keep serving as Kafka's do. (A partition whose ISR is
 * this broker alone gives no evidence, and needs none: no other replica
 * may take it over.)
 *
 * Stepping aside: produce requests waiting for acks=all are answered
 * NOT_LEADER_OR_FOLLOWER, and clients are served as a stopped broker would
 * serve them -- their connections close at their next request
 * (broker_api.c) -- so they ask the other brokers, which know the new
 * leaders. (Answering Metadata with no leader would not do: clients ask
 * again the broker they last used, this one.) Followers are still served.
 *
 * Nothing else changes: if the link comes back within the session, the
 * broker was leader all along and serves clients again; if the session
 * expired, the expiry stops its leadership (repl_stop_leading_all) as
 * before. This only ever makes the broker refuse sooner; safety (no
 * acknowledged write lost) does not rest on it, but on the ISR written
 * through the coordinator. */
#include "repl.h"
#include "repl_internal.h"

#include <inttypes.h>

#include "base/logging.h"

#define CHECK_MS 100                     /* how often the evidence is looked at */
#define REFUSED_LOG_INTERVAL_MS 10000
#define FOLLOWERS_QUIET_MIN_MS 1000

/* How long followers must be silent to count as gone: a follower asks again
 * as soon as an answer arrives, and the leader holds a fetch at most
 * replica.fetch.wait.max.ms. */
static uint64_t followers_quiet_ms(const broker_t *b)
{
    uint64_t ms = 3 * (uint64_t)b->cfg.replica_fetch_wait_max_ms;
    return ms > FOLLOWERS_QUIET_MIN_MS ? ms : FOLLOWERS_QUIET_MIN_MS;
}

/* Leader replicas, and whether the followers of any of them all left. */
static int leaders_deserted(const broker_t *b, uint64_t now, int *leading)
{
    int deserted = 0;
    *leading = 0;
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            const partition_t *p = b->topics[i]->parts[k];
            if (!p || !p->replica || p->replica->role != REPLICA_LEADER || !p->replica->isr)
                continue;
            (*leading)++;
            deserted |= isr_followers_left(p->replica->isr, now, followers_quiet_ms(b));
        }
    return deserted;
}

static void fail_waiting_produces(broker_t *b)
{
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (p && p->replica && p->replica->role == REPLICA_LEADER && p->replica->isr)
                commitq_fail_all(&p->replica->commitq, KERR_NOT_LEADER_OR_FOLLOWER);
        }
}

static void on_check(loop_t *loop, void *arg)
{
    broker_t *b = arg;
    struct repl *rp = b->repl;
    uint64_t now = loop_now_ms(loop);
    int leading;
    rp->lease_timer = NULL;
    if (leaders_deserted(b, now, &leading)) {
        rp->lease_lapsed = 1;
        log_warn("coordinator unreachable for %" PRIu64 " ms and the followers of a partition led here went "
                 "elsewhere: another leader was most likely elected; not serving clients (leader of %d "
                 "partition(s)) until the coordinator is reached again", now - rp->link_lost_at, leading);
        fail_waiting_produces(b);
        return;
    }
    rp->lease_timer = loop_timer_add(b->loop, CHECK_MS, on_check, b);
}

void repl_lease_link_lost(broker_t *b, int session_timeout_ms)
{
    struct repl *rp = b->repl;
    if (!rp || rp->link_lost_at)
        return;
    rp->link_lost_at = loop_now_ms(b->loop);
    ratelimit_init(&rp->lease_log, REFUSED_LOG_INTERVAL_MS, 3);
    rp->lease_timer = loop_timer_add(b->loop, (uint64_t)(session_timeout_ms / 3), on_check, b);
}

void repl_lease_link_back(broker_t *b)
{
    struct repl *rp = b->repl;
    if (!rp)
        return;
    if (rp->lease_timer)
        loop_timer_cancel(b->loop, rp->lease_timer);
    rp->lease_timer = NULL;
    rp->link_lost_at = 0;
    if (rp->lease_lapsed)
        log_info("coordinator reached again: serving clients again");
    rp->lease_lapsed = 0;
}

int repl_lease_lapsed(const broker_t *b)
{
    return b->repl && b->repl->lease_lapsed;
}

void repl_lease_client_refused(broker_t *b, const char *ip, int port, const char *api)
{
    uint64_t held = 0;
    if (ratelimit_allow(&b->repl->lease_log, loop_now_ms(b->loop), &held))
        log_info("%s:%d: %s refused, connection closed: coordinator lease lapsed (%" PRIu64 " more not logged)",
                 ip, port, api, held);
}
