/* isr.c -- see isr.h. */
#include "isr.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/logging.h"

int isr_contains(const int32_t *ids, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

static isr_follower_t *find(const isr_t *s, int32_t id)
{
    for (int i = 0; i < s->nfollowers; i++)
        if (s->followers[i].id == id)
            return &s->followers[i];
    return NULL;
}

const isr_follower_t *isr_follower(const isr_t *s, int32_t id)
{
    return find(s, id);
}

/* Followers for ar and rar (without me), keeping the progress of those in
 * old. */
static void build_followers(isr_t *s, const isr_follower_t *old, int nold, uint64_t now_ms, int fresh_in_isr)
{
    s->followers = xcalloc((size_t)(s->nar + s->nrar) + 1, sizeof(*s->followers));
    s->nfollowers = 0;
    for (int pass = 0; pass < 2; pass++) {
        const int32_t *ids = pass == 0 ? s->ar : s->rar;
        int n = pass == 0 ? s->nar : s->nrar;
        for (int i = 0; i < n; i++) {
            if (ids[i] == s->me || find(s, ids[i]))
                continue;
            isr_follower_t *f = &s->followers[s->nfollowers++];
            const isr_follower_t *was = NULL;
            for (int k = 0; k < nold; k++)
                if (old[k].id == ids[i])
                    was = &old[k];
            if (was) {
                *f = *was;
                continue;
            }
            *f = (isr_follower_t){.id = ids[i], .leo = -1, .prev_leader_leo = -1};
            /* An ISR member of the election gets KeepInSyncTime from now. */
            if (fresh_in_isr && isr_contains(s->isr, s->nisr, ids[i]))
                f->caught_up_ms = now_ms;
        }
    }
}

void isr_init(isr_t *s, int32_t me, int32_t epoch, const int32_t *ar, int nar, const int32_t *isr, int nisr,
              int64_t leo, int64_t hw, uint64_t now_ms, uint64_t wait_ms)
{
    memset(s, 0, sizeof(*s));
    s->me = me;
    s->epoch = epoch;
    s->leo = leo;
    s->epoch_start = leo;
    s->hw = hw < leo ? hw : leo;
    s->nar = nar < ISR_MAX ? nar : ISR_MAX;
    memcpy(s->ar, ar, sizeof(*ar) * (size_t)s->nar);
    s->isr[s->nisr++] = me;
    for (int i = 0; i < nisr && s->nisr < ISR_MAX; i++)
        if (isr[i] != me)
            s->isr[s->nisr++] = isr[i];
    build_followers(s, NULL, 0, now_ms, 1);
    s->settle_at_ms = now_ms + wait_ms;
    s->settled = wait_ms == 0;
}

void isr_free(isr_t *s)
{
    free(s->followers);
    s->followers = NULL;
    s->nfollowers = 0;
}

void isr_set_replicas(isr_t *s, const int32_t *ar, int nar, const int32_t *rar, int nrar, uint64_t now_ms)
{
    isr_follower_t *old = s->followers;
    int nold = s->nfollowers;
    s->nar = nar < ISR_MAX ? nar : ISR_MAX;
    memmove(s->ar, ar, sizeof(*ar) * (size_t)s->nar);   /* the caller may pass our own lists */
    s->nrar = nrar < ISR_MAX ? nrar : ISR_MAX;
    memmove(s->rar, rar, sizeof(*rar) * (size_t)s->nrar);
    build_followers(s, old, nold, now_ms, 0);
    free(old);
}

/* The members the HW counts: the coordinator's ISR, and while a write is in
 * flight, the members it adds. Calls fn for each but me. 0 to stop. */
static int each_counted(const isr_t *s, int (*fn)(const isr_t *s, int32_t id, void *arg), void *arg)
{
    for (int i = 0; i < s->nisr; i++)
        if (s->isr[i] != s->me && !fn(s, s->isr[i], arg))
            return 0;
    if (s->changing)
        for (int i = 0; i < s->npending; i++)
            if (s->pending[i] != s->me && !isr_contains(s->isr, s->nisr, s->pending[i]) &&
                !fn(s, s->pending[i], arg))
                return 0;
    return 1;
}

static int lower_to_leo(const isr_t *s, int32_t id, void *arg)
{
    int64_t *min = arg;
    const isr_follower_t *f = find(s, id);
    if (!f || f->leo < 0)
        return 0;   /* not known in this epoch: the HW waits for it */
    if (f->leo < *min)
        *min = f->leo;
    return 1;
}

static int recompute_hw(isr_t *s)
{
    int64_t min = s->leo;
    if (!each_counted(s, lower_to_leo, &min))
        return 0;
    if (min <= s->hw)
        return 0;
    s->hw = min;
    return 1;
}

static int count_one(const isr_t *s, int32_t id, void *arg)
{
    (void)s;
    (void)id;
    (*(int *)arg)++;
    return 1;
}

int isr_followers_left(const isr_t *s, uint64_t now_ms, uint64_t quiet_ms)
{
    int others = 0;
    for (int i = 0; i < s->nisr; i++) {
        if (s->isr[i] == s->me)
            continue;
        others++;
        const isr_follower_t *f = find(s, s->isr[i]);
        if (f && f->prev_fetch_ms && f->prev_fetch_ms + quiet_ms > now_ms)
            return 0;
    }
    return others > 0;
}

int isr_size_for_acks(const isr_t *s)
{
    int n = 1;
    each_counted(s, count_one, &n);
    return n;
}

int isr_appended(isr_t *s, int64_t leo)
{
    if (leo > s->leo)
        s->leo = leo;
    return recompute_hw(s);
}

int isr_fetched(isr_t *s, int32_t id, int64_t fetch_offset, uint64_t now_ms)
{
    isr_follower_t *f = find(s, id);
    if (!f)
        return -1;
    if (fetch_offset > s->leo)
        return 0;   /* ahead of us: it must truncate first; nothing it says counts */
    if (fetch_offset >= s->leo)
        f->caught_up_ms = now_ms;
    else if (f->prev_fetch_ms && fetch_offset >= f->prev_leader_leo && f->prev_fetch_ms > f->caught_up_ms)
        f->caught_up_ms = f->prev_fetch_ms;
    f->prev_leader_leo = s->leo;
    f->prev_fetch_ms = now_ms;
    f->leo = fetch_offset;
    return recompute_hw(s);
}

/* Has everything this epoch began with. */
static int synced(const isr_t *s, const isr_follower_t *f)
{
    return f && f->leo >= 0 && f->leo >= s->epoch_start;
}

static int all_live_synced(const isr_t *s, isr_live_fn live, void *arg)
{
    for (int i = 0; i < s->nar; i++)
        if (s->ar[i] != s->me && live(arg, s->ar[i]) && !synced(s, find(s, s->ar[i])))
            return 0;
    return 1;
}

/* Whether ISR member id stays: settling, only if it synced in the wait;
 * afterwards, unless it lagged for lag_ms. Never a replica whose broker is
 * gone, that is no longer assigned, or whose LEO fell below the HW (it lost
 * what it had: a restart with an unflushed tail). */
static int stays(const isr_t *s, int32_t id, int settling, uint64_t now_ms, uint64_t lag_ms, isr_live_fn live,
                 void *arg)
{
    const isr_follower_t *f = find(s, id);
    if (!f || !live(arg, id) || !isr_contains(s->ar, s->nar, id))
        return 0;
    if (f->leo >= 0 && f->leo < s->hw)
        return 0;
    if (settling)
        return synced(s, f);
    return now_ms <= f->caught_up_ms + lag_ms;
}

/* A CUR replica joins when it is live, has everything this epoch began
 * with and the HW, and has been caught up within lag_ms: only a follower
 * that keeps fetching, not one whose last position merely still equals the
 * HW of a quiet partition (it would flap in and out at every check). */
static int joins(const isr_t *s, const isr_follower_t *f, uint64_t now_ms, uint64_t lag_ms, isr_live_fn live,
                 void *arg)
{
    return isr_contains(s->ar, s->nar, f->id) && live(arg, f->id) && synced(s, f) && f->leo >= s->hw &&
           f->caught_up_ms && now_ms <= f->caught_up_ms + lag_ms;
}

int isr_in_sync(const isr_t *s, int32_t id, uint64_t now_ms, uint64_t lag_ms, isr_live_fn live, void *arg)
{
    if (id == s->me)
        return 1;
    const isr_follower_t *f = find(s, id);
    return f && live(arg, id) && synced(s, f) && f->leo >= s->hw && f->caught_up_ms &&
           now_ms <= f->caught_up_ms + lag_ms;
}

static int same_members(const int32_t *a, int na, const int32_t *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++)
        if (!isr_contains(b, nb, a[i]))
            return 0;
    return 1;
}

int isr_plan(isr_t *s, uint64_t now_ms, uint64_t lag_ms, isr_live_fn live, void *arg, int32_t *out, int *nout)
{
    *nout = 0;
    if (s->changing)
        return 0;
    int settling = 0;
    if (!s->settled) {
        if (now_ms < s->settle_at_ms && !all_live_synced(s, live, arg))
            return 0;
        settling = 1;
        s->settled = 1;
    }
    int n = 0;
    out[n++] = s->me;
    for (int i = 0; i < s->nisr; i++)
        if (s->isr[i] != s->me && stays(s, s->isr[i], settling, now_ms, lag_ms, live, arg))
            out[n++] = s->isr[i];
    for (int i = 0; i < s->nfollowers && n < ISR_MAX; i++) {
        const isr_follower_t *f = &s->followers[i];
        if (!isr_contains(s->isr, s->nisr, f->id) && joins(s, f, now_ms, lag_ms, live, arg))
            out[n++] = f->id;
    }
    *nout = n;
    return !same_members(out, n, s->isr, s->nisr);
}

void isr_write_started(isr_t *s, const int32_t *isr, int n)
{
    s->changing = 1;
    s->npending = n < ISR_MAX ? n : ISR_MAX;
    memcpy(s->pending, isr, sizeof(*isr) * (size_t)s->npending);
}

int isr_write_done(isr_t *s, int ok)
{
    if (!s->changing)
        return 0;
    s->changing = 0;
    if (!ok)
        return 0;
    memcpy(s->isr, s->pending, sizeof(*s->pending) * (size_t)s->npending);
    s->nisr = s->npending;
    return recompute_hw(s);
}
