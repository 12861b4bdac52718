/* hashmap.c -- see hashmap.h. */
#define _GNU_SOURCE
#include "hashmap.h"

#include "alloc.h"
#include "clock.h"

#include <stdlib.h>
#include <sys/random.h>

enum { DEFAULT_FIRST_BUCKETS = 16, MIN_FIRST_BUCKETS = 8 };

void hmap_init(hmap_t *h, size_t first_buckets)
{
    size_t n = MIN_FIRST_BUCKETS;
    while (n < first_buckets && n < HMAP_MAX_BUCKETS)
        n *= 2;
    *h = (hmap_t){.first = n};
}

void hmap_destroy(hmap_t *h)
{
    free(h->buckets);
    *h = (hmap_t){.first = h->first};
}

/* Double the buckets if memory allows. Chains are relinked bucket by bucket
 * from their heads, so the order stays a function of what was inserted. */
static void grow_buckets(hmap_t *h)
{
    size_t old = h->mask + 1, n = old * 2;
    if (n > HMAP_MAX_BUCKETS)
        return;
    hmap_node_t **b = calloc(n, sizeof(*b));
    if (!b)
        return;   /* keep the old array: longer chains, still correct */
    for (size_t i = 0; i < old; i++) {
        for (hmap_node_t *e = h->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(h->buckets);
    h->buckets = b;
    h->mask = n - 1;
}

void hmap_insert(hmap_t *h, hmap_node_t *node, uint64_t hash)
{
    if (!h->buckets) {
        size_t n = h->first ? h->first : DEFAULT_FIRST_BUCKETS;
        h->buckets = xcalloc(n, sizeof(*h->buckets));
        h->mask = n - 1;
    }
    hmap_node_t **slot = &h->buckets[hash & h->mask];
    node->hash = hash;
    node->next = *slot;
    *slot = node;
    if (++h->count > h->mask + 1)
        grow_buckets(h);
}

void hmap_remove(hmap_t *h, hmap_node_t *node)
{
    if (!h->buckets)
        return;
    for (hmap_node_t **p = &h->buckets[node->hash & h->mask]; *p; p = &(*p)->next) {
        if (*p == node) {
            *p = node->next;
            node->next = NULL;
            h->count--;
            return;
        }
    }
}

hmap_iter_t hmap_iter(const hmap_t *h)
{
    return (hmap_iter_t){.h = h};
}

hmap_node_t *hmap_next(hmap_iter_t *it)
{
    while (!it->next) {
        if (!it->h->buckets || it->bucket > it->h->mask)
            return NULL;
        it->next = it->h->buckets[it->bucket++];
    }
    hmap_node_t *n = it->next;
    it->next = n->next;
    return n;
}

/* ---- hashing ---- */

uint64_t hmap_hash_u64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* getrandom never blocks once the kernel's pool is seeded, which it is long
 * before a server starts; should it fail anyway, clocks are still unknown
 * to a client. */
void hmap_random_key(hmap_key_t *key)
{
    if (getrandom(key, sizeof(*key), GRND_NONBLOCK) == (ssize_t)sizeof(*key))
        return;
    key->k0 = hmap_hash_u64(clock_wall_ms() ^ (uint64_t)(uintptr_t)key);
    key->k1 = hmap_hash_u64(clock_mono_ms() ^ key->k0);
}

static uint64_t rotl(uint64_t x, int b)
{
    return x << b | x >> (64 - b);
}

typedef struct {
    uint64_t v0, v1, v2, v3;
} sip_state_t;

static void sip_round(sip_state_t *s)
{
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13) ^ s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16) ^ s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21) ^ s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17) ^ s->v2;
    s->v2 = rotl(s->v2, 32);
}

/* SipHash reads its message as little-endian words; n < 8 for the tail. */
static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void sip_absorb(sip_state_t *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);   /* SipHash-1-3: one round per word */
    s->v0 ^= m;
}

uint64_t hmap_hash_bytes(const hmap_key_t *key, const void *data, size_t n)
{
    const uint8_t *p = data;
    sip_state_t s = {key->k0 ^ 0x736f6d6570736575ULL, key->k1 ^ 0x646f72616e646f6dULL,
                     key->k0 ^ 0x6c7967656e657261ULL, key->k1 ^ 0x7465646279746573ULL};
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8)
        sip_absorb(&s, load_le(p + i, 8));
    sip_absorb(&s, (uint64_t)n << 56 | load_le(p + whole, n - whole));
    s.v2 ^= 0xff;
    for (int i = 0; i < 3; i++)   /* and three to finish */
        sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
