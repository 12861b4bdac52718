/* hashmap.h -- the one hash table: chained, intrusive, keyed by its user.
 *
 * A record kept in a table embeds an hmap_node_t. Its owner computes the
 * 64-bit hash of the key and says how keys compare, so the same table serves
 * paths, ids, pointers and composite keys without allocating per entry or
 * copying a key, and the stored hash lets it grow without rehashing keys.
 * Keys chosen by clients (znode paths) are hashed with a keyed hash
 * (hmap_hash_bytes under a random key), so they cannot be crafted to collide.
 *
 * Memory. Buckets are a power of two; an insert that leaves more entries
 * than buckets doubles them (load factor 1), up to HMAP_MAX_BUCKETS. Growing
 * is best effort: if the larger array cannot be had the table keeps its old
 * one (longer chains, still correct), so an insert never fails. The first
 * array, small and of a size fixed by the owner, is allocated at the first
 * insert through xcalloc (base/alloc.h: fatal when memory is that short).
 * Tables never shrink; an owner that wants memory back builds a new table.
 *
 * A zeroed hmap_t is an empty table with 16 first buckets; hmap_init picks
 * another first size. Iteration goes bucket by bucket, newest first within
 * a bucket, and changes order when the table grows. Nothing here is
 * thread-safe or global: a table belongs to whoever holds it. */
#ifndef KIPPER_BASE_HASHMAP_H
#define KIPPER_BASE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hmap_node {
    struct hmap_node *next;
    uint64_t hash;
} hmap_node_t;

typedef struct {
    hmap_node_t **buckets;   /* NULL until the first insert */
    size_t mask;             /* bucket count - 1, once allocated */
    size_t count;
    size_t first;            /* bucket count of the first array; 0: 16 */
} hmap_t;

#define HMAP_MAX_BUCKETS ((size_t)1 << 30)

/* The record that embeds node as its member. */
#define HMAP_ENTRY(node, type, member) ((type *)(void *)((char *)(node) - offsetof(type, member)))

/* An empty table whose first array has at least first_buckets buckets. */
void hmap_init(hmap_t *h, size_t first_buckets);
/* Frees the bucket array; the records stay their owner's (free them first,
 * by iterating). The table is empty and usable again afterwards. */
void hmap_destroy(hmap_t *h);
/* Add node under hash. The caller has made sure its key is not there yet. */
void hmap_insert(hmap_t *h, hmap_node_t *node, uint64_t hash);
/* Take node (which is in h) out. */
void hmap_remove(hmap_t *h, hmap_node_t *node);

static inline size_t hmap_count(const hmap_t *h)
{
    return h->count;
}

/* Does node hold key? Called only for nodes with the hash asked for. */
typedef int (*hmap_match_fn)(const hmap_node_t *node, const void *key);

/* The node under hash that match accepts for key, or NULL. Inline, so a
 * lookup on a hot path compiles to a loop with the comparison inside. */
static inline hmap_node_t *hmap_find(const hmap_t *h, uint64_t hash, hmap_match_fn match, const void *key)
{
    if (!h->buckets)
        return NULL;
    for (hmap_node_t *n = h->buckets[hash & h->mask]; n; n = n->next)
        if (n->hash == hash && match(n, key))
            return n;
    return NULL;
}

/* Every node once: for (hmap_iter_t it = hmap_iter(h); (n = hmap_next(&it));).
 * The node just returned may be removed (and freed) before the next call;
 * nothing else may be inserted or removed meanwhile. */
typedef struct {
    const hmap_t *h;
    size_t bucket;
    hmap_node_t *next;
} hmap_iter_t;

hmap_iter_t hmap_iter(const hmap_t *h);
hmap_node_t *hmap_next(hmap_iter_t *it);

/* ---- hashing ---- */

/* A key for hmap_hash_bytes; any value works, an unpredictable one
 * (hmap_random_key) keeps clients from choosing colliding keys. */
typedef struct {
    uint64_t k0, k1;
} hmap_key_t;

void hmap_random_key(hmap_key_t *key);
/* SipHash-1-3 of n bytes under key. */
uint64_t hmap_hash_bytes(const hmap_key_t *key, const void *p, size_t n);
/* splitmix64's finalizer: ids handed out in runs (session ids, producer
 * ids) spread over every bucket. Also mixes hashes combined by hand. */
uint64_t hmap_hash_u64(uint64_t x);

#endif
