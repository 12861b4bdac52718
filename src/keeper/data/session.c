/* session.c -- see session.h. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

struct session_tracker {
    session_t **buckets;
    size_t nbuckets;
    size_t count;
    int64_t next_id;
    uint64_t tick_ms;
};

static size_t bucket_of(const session_tracker_t *st, int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (st->nbuckets - 1);
}

session_tracker_t *session_tracker_create(int server_id, int tick_ms, uint64_t wall_ms)
{
    session_tracker_t *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->nbuckets = 1024;
    st->buckets = calloc(st->nbuckets, sizeof(*st->buckets));
    if (!st->buckets) {
        free(st);
        return NULL;
    }
    st->tick_ms = tick_ms > 0 ? (uint64_t)tick_ms : 1;
    /* As ZooKeeper: (time << 24) >>> 8 keeps 40 bits of the clock below the
     * server id byte; the container marker value is never handed out. */
    uint64_t base = (wall_ms << 24) >> 8;
    st->next_id = (int64_t)(base | ((uint64_t)(server_id & 0xff) << 56));
    if (st->next_id == INT64_MIN)
        st->next_id++;
    return st;
}

void session_tracker_destroy(session_tracker_t *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nbuckets; i++) {
        session_t *s = st->buckets[i];
        while (s) {
            session_t *next = s->hash_next;
            free(s);
            s = next;
        }
    }
    free(st->buckets);
    free(st);
}

int64_t session_next_id(session_tracker_t *st)
{
    int64_t id;
    do {
        id = st->next_id++;
    } while (id == 0 || id == INT64_MIN || session_find(st, id));
    return id;
}

static uint64_t expiry_for(const session_tracker_t *st, uint64_t now_ms, int32_t timeout_ms)
{
    uint64_t t = now_ms + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    return (t / st->tick_ms + 1) * st->tick_ms;
}

static void grow(session_tracker_t *st)
{
    size_t n = st->nbuckets * 2;
    session_t **b = calloc(n, sizeof(*b));
    if (!b)
        return;   /* keep the old table: slower, still correct */
    session_t **old = st->buckets;
    size_t oldn = st->nbuckets;
    st->buckets = b;
    st->nbuckets = n;
    for (size_t i = 0; i < oldn; i++) {
        session_t *s = old[i];
        while (s) {
            session_t *next = s->hash_next;
            size_t k = bucket_of(st, s->id);
            s->hash_next = st->buckets[k];
            st->buckets[k] = s;
            s = next;
        }
    }
    free(old);
}

session_t *session_add(session_tracker_t *st, int64_t id, int32_t timeout_ms, uint64_t now_ms)
{
    session_t *s = session_find(st, id);
    if (s) {
        s->timeout_ms = timeout_ms;
        s->expires_at_ms = expiry_for(st, now_ms, timeout_ms);
        return s;
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->id = id;
    s->timeout_ms = timeout_ms;
    s->expires_at_ms = expiry_for(st, now_ms, timeout_ms);
    size_t k = bucket_of(st, id);
    s->hash_next = st->buckets[k];
    st->buckets[k] = s;
    if (++st->count > st->nbuckets)
        grow(st);
    return s;
}

session_t *session_find(const session_tracker_t *st, int64_t id)
{
    for (session_t *s = st->buckets[bucket_of(st, id)]; s; s = s->hash_next)
        if (s->id == id)
            return s;
    return NULL;
}

int session_touch(session_tracker_t *st, int64_t id, uint64_t now_ms)
{
    session_t *s = session_find(st, id);
    if (!s || s->closing)
        return -1;
    uint64_t t = expiry_for(st, now_ms, s->timeout_ms);
    if (t > s->expires_at_ms)
        s->expires_at_ms = t;
    return 0;
}

void session_remove(session_tracker_t *st, int64_t id)
{
    session_t **pp = &st->buckets[bucket_of(st, id)];
    while (*pp) {
        if ((*pp)->id == id) {
            session_t *s = *pp;
            *pp = s->hash_next;
            free(s);
            st->count--;
            return;
        }
        pp = &(*pp)->hash_next;
    }
}

size_t session_count(const session_tracker_t *st)
{
    return st->count;
}

void session_each_expired(session_tracker_t *st, uint64_t now_ms, void (*fn)(session_t *s, void *arg), void *arg)
{
    /* Collect first: fn may remove sessions from the table. */
    size_t n = 0, cap = 0;
    int64_t *ids = NULL;
    for (size_t i = 0; i < st->nbuckets; i++)
        for (session_t *s = st->buckets[i]; s; s = s->hash_next) {
            if (s->closing || s->expires_at_ms > now_ms)
                continue;
            if (n == cap) {
                size_t c = cap ? cap * 2 : 16;
                int64_t *x = realloc(ids, c * sizeof(*x));
                if (!x)
                    goto visit;   /* expire what we have; the rest next tick */
                ids = x;
                cap = c;
            }
            ids[n++] = s->id;
        }
visit:
    for (size_t i = 0; i < n; i++) {
        session_t *s = session_find(st, ids[i]);
        if (s && !s->closing)
            fn(s, arg);
    }
    free(ids);
}

void session_each(session_tracker_t *st, void (*fn)(session_t *s, void *arg), void *arg)
{
    for (size_t i = 0; i < st->nbuckets; i++)
        for (session_t *s = st->buckets[i]; s; s = s->hash_next)
            fn(s, arg);
}

/* java.util.Random: a 48-bit LCG; nextBytes takes nextInt() 4 bytes at a
 * time, least significant first. */
void session_password(int64_t id, uint8_t out[SESSION_PASSWORD_LEN])
{
    const uint64_t multiplier = 0x5DEECE66Dull, mask = (1ull << 48) - 1;
    uint64_t seed = ((uint64_t)id ^ 0xB3415C00ull ^ multiplier) & mask;
    for (int i = 0; i < SESSION_PASSWORD_LEN;) {
        seed = (seed * multiplier + 0xB) & mask;
        uint32_t rnd = (uint32_t)(seed >> 16);
        for (int n = 0; n < 4 && i < SESSION_PASSWORD_LEN; n++, rnd >>= 8)
            out[i++] = (uint8_t)rnd;
    }
}
