/* session.c -- see session.h. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

struct session_tracker {
    hmap_t sessions;   /* by id */
    int64_t next_id;
    uint64_t tick_ms;
};

/* Fibonacci hashing: ids are handed out consecutively, and the high half of
 * the product spreads consecutive ids apart. */
static uint64_t id_hash(int64_t id)
{
    return (uint64_t)id * 0x9E3779B97F4A7C15ull >> 32;
}

static int session_has_id(const hmap_node_t *n, const void *id)
{
    return HMAP_ENTRY(n, session_t, node)->id == *(const int64_t *)id;
}

session_tracker_t *session_tracker_create(int server_id, int tick_ms, uint64_t wall_ms)
{
    session_tracker_t *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    hmap_init(&st->sessions, 1024);
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
    hmap_iter_t it = hmap_iter(&st->sessions);
    for (hmap_node_t *n; (n = hmap_next(&it));)
        free(HMAP_ENTRY(n, session_t, node));
    hmap_destroy(&st->sessions);
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

int session_server_id(int64_t id)
{
    return (int)((uint64_t)id >> 56);
}

static uint64_t expiry_for(const session_tracker_t *st, uint64_t now_ms, int32_t timeout_ms)
{
    uint64_t t = now_ms + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    return (t / st->tick_ms + 1) * st->tick_ms;
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
    hmap_insert(&st->sessions, &s->node, id_hash(id));
    return s;
}

session_t *session_find(const session_tracker_t *st, int64_t id)
{
    hmap_node_t *n = hmap_find(&st->sessions, id_hash(id), session_has_id, &id);
    return n ? HMAP_ENTRY(n, session_t, node) : NULL;
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
    session_t *s = session_find(st, id);
    if (s) {
        hmap_remove(&st->sessions, &s->node);
        free(s);
    }
}

size_t session_count(const session_tracker_t *st)
{
    return hmap_count(&st->sessions);
}

void session_each_expired(session_tracker_t *st, uint64_t now_ms, void (*fn)(session_t *s, void *arg), void *arg)
{
    /* Collect first: fn may remove sessions from the table. */
    size_t n = 0, cap = 0;
    int64_t *ids = NULL;
    hmap_iter_t it = hmap_iter(&st->sessions);
    for (hmap_node_t *node; (node = hmap_next(&it));) {
        const session_t *s = HMAP_ENTRY(node, session_t, node);
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
    hmap_iter_t it = hmap_iter(&st->sessions);
    for (hmap_node_t *n; (n = hmap_next(&it));)
        fn(HMAP_ENTRY(n, session_t, node), arg);
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
