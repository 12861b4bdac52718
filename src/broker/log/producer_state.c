/* producer_state.c -- see producer_state.h.
 *
 * Entries live in one array, each with its 5 retained batches inline as a
 * ring, so a check touches one entry. A base/hashmap table, whose nodes the
 * entries embed, finds a pid's entry. Entries are also threaded on a list in
 * update order: the head is the eviction victim when the partition is full,
 * in O(1). Entries stay put while the array only grows, so the list and the
 * table can hold them; the array is rebuilt (grown, or shrunk after an
 * expiry freed most of it) by re-inserting in list order into a new array
 * and a new table sized for it. */
#include "producer_state.h"
#include "base/alloc.h"
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define NO_EPOCH (-1)
#define MIN_CAPACITY 16
#define MAX_PRODUCERS_LIMIT (1 << 24)

typedef struct {
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset;
    int64_t max_timestamp;
} batch_meta_t;

typedef struct {
    hmap_node_t node; /* in the index, by pid */
    int64_t pid;
    batch_meta_t batches[PRODUCER_BATCHES_RETAINED]; /* ring; the oldest at `oldest` */
    uint32_t prev, next; /* update order; next also links free entries */
    int16_t epoch;
    uint8_t nbatches, oldest;
} entry_t;

struct producer_state {
    entry_t *entries;
    uint32_t capacity;  /* entries allocated */
    uint32_t used;      /* entries[0, used) were handed out at some point */
    uint32_t free_list; /* entries removed since, to reuse first */
    hmap_t index;       /* pid -> entry; as many buckets as entries allocated */
    uint32_t max_producers;
    uint32_t oldest, newest; /* ends of the update-order list */
};

/* ---- Update-order list ------------------------------------------------------- */

static void list_unlink(producer_state_t *ps, uint32_t i)
{
    entry_t *e = &ps->entries[i];
    if (e->prev != NIL)
        ps->entries[e->prev].next = e->next;
    else
        ps->oldest = e->next;
    if (e->next != NIL)
        ps->entries[e->next].prev = e->prev;
    else
        ps->newest = e->prev;
    e->prev = e->next = NIL;
}

static void list_append(producer_state_t *ps, uint32_t i)
{
    entry_t *e = &ps->entries[i];
    e->prev = ps->newest;
    e->next = NIL;
    if (ps->newest != NIL)
        ps->entries[ps->newest].next = i;
    else
        ps->oldest = i;
    ps->newest = i;
}

/* ---- Index ------------------------------------------------------------------- */

/* Producer ids come from the coordinator in consecutive blocks: mixed, so
 * neighbours do not share buckets. */
static uint64_t pid_hash(int64_t pid)
{
    return hmap_hash_u64((uint64_t)pid);
}

static int pid_matches(const hmap_node_t *n, const void *pid)
{
    return HMAP_ENTRY(n, entry_t, node)->pid == *(const int64_t *)pid;
}

static uint32_t lookup(const producer_state_t *ps, int64_t pid)
{
    hmap_node_t *n = hmap_find(&ps->index, pid_hash(pid), pid_matches, &pid);
    return n ? (uint32_t)(HMAP_ENTRY(n, entry_t, node) - ps->entries) : NIL;
}

/* ---- Growing and shrinking ------------------------------------------------------ */

/* Move every entry, oldest update first, into fresh arrays for capacity
 * entries (>= count): dense again, indexes renumbered, free list empty. */
static void rebuild(producer_state_t *ps, uint32_t capacity)
{
    producer_state_t fresh = {
        .entries = xcalloc(capacity, sizeof(entry_t)),
        .capacity = capacity,
        .free_list = NIL,
        .max_producers = ps->max_producers,
        .oldest = NIL,
        .newest = NIL,
    };
    hmap_init(&fresh.index, capacity);
    for (uint32_t i = ps->oldest; i != NIL; i = ps->entries[i].next) {
        uint32_t j = fresh.used++;
        fresh.entries[j] = ps->entries[i];
        list_append(&fresh, j);
        hmap_insert(&fresh.index, &fresh.entries[j].node, pid_hash(fresh.entries[j].pid));
    }
    free(ps->entries);
    hmap_destroy(&ps->index);
    *ps = fresh;
}

static uint32_t grown_capacity(const producer_state_t *ps)
{
    uint64_t c = ps->capacity ? 2 * (uint64_t)ps->capacity : MIN_CAPACITY;
    return c < ps->max_producers ? (uint32_t)c : ps->max_producers;
}

/* ---- Entries ------------------------------------------------------------------ */

static void entry_remove(producer_state_t *ps, uint32_t i)
{
    hmap_remove(&ps->index, &ps->entries[i].node);
    list_unlink(ps, i);
    ps->entries[i].next = ps->free_list;
    ps->free_list = i;
}

/* A new entry for pid (epoch -1, no batches), evicting the least recently
 * updated producer when the partition holds max_producers already. */
static uint32_t entry_add(producer_state_t *ps, int64_t pid)
{
    if (hmap_count(&ps->index) >= ps->max_producers)
        entry_remove(ps, ps->oldest);
    if (ps->free_list == NIL && ps->used == ps->capacity)
        rebuild(ps, grown_capacity(ps));
    uint32_t i;
    if (ps->free_list != NIL) {
        i = ps->free_list;
        ps->free_list = ps->entries[i].next;
    } else {
        i = ps->used++;
    }
    entry_t *e = &ps->entries[i];
    memset(e, 0, sizeof(*e));
    e->pid = pid;
    e->epoch = NO_EPOCH;
    list_append(ps, i);
    hmap_insert(&ps->index, &e->node, pid_hash(pid));
    return i;
}

static const batch_meta_t *newest_batch(const entry_t *e)
{
    return &e->batches[(e->oldest + e->nbatches - 1) % PRODUCER_BATCHES_RETAINED];
}

/* Keep the batch, dropping the oldest of a full ring. */
static void entry_add_batch(entry_t *e, const batch_meta_t *b)
{
    if (e->nbatches == PRODUCER_BATCHES_RETAINED) {
        e->batches[e->oldest] = *b;
        e->oldest = (uint8_t)((e->oldest + 1) % PRODUCER_BATCHES_RETAINED);
        return;
    }
    e->batches[(e->oldest + e->nbatches) % PRODUCER_BATCHES_RETAINED] = *b;
    e->nbatches++;
}

static const batch_meta_t *find_batch(const entry_t *e, int32_t first_seq, int32_t last_seq)
{
    for (int k = 0; k < e->nbatches; k++) {
        const batch_meta_t *b = &e->batches[(e->oldest + k) % PRODUCER_BATCHES_RETAINED];
        if (b->first_seq == first_seq && b->last_seq == last_seq)
            return b;
    }
    return NULL;
}

/* ---- Public ---------------------------------------------------------------------- */

producer_state_t *producer_state_create(int max_producers)
{
    producer_state_t *ps = xcalloc(1, sizeof(*ps));
    ps->max_producers = max_producers < 1                     ? 1
                        : max_producers > MAX_PRODUCERS_LIMIT ? MAX_PRODUCERS_LIMIT
                                                              : (uint32_t)max_producers;
    ps->free_list = ps->oldest = ps->newest = NIL;
    return ps;
}

void producer_state_free(producer_state_t *ps)
{
    if (!ps)
        return;
    free(ps->entries);
    hmap_destroy(&ps->index);
    free(ps);
}

void producer_state_clear(producer_state_t *ps)
{
    uint32_t max = ps->max_producers;
    free(ps->entries);
    hmap_destroy(&ps->index);
    memset(ps, 0, sizeof(*ps));
    ps->max_producers = max;
    ps->free_list = ps->oldest = ps->newest = NIL;
}

size_t producer_state_count(const producer_state_t *ps)
{
    return hmap_count(&ps->index);
}

static int in_sequence(int32_t last_seq, int32_t next_seq)
{
    return (int64_t)next_seq == (int64_t)last_seq + 1 || (next_seq == 0 && last_seq == INT32_MAX);
}

int producer_state_check(const producer_state_t *ps, int64_t pid, int16_t epoch,
                         int32_t first_seq, int32_t last_seq, producer_dup_t *dup)
{
    if (pid < 0)
        return PRODUCER_APPEND;
    uint32_t i = lookup(ps, pid);
    const entry_t *e = i == NIL ? NULL : &ps->entries[i];
    int16_t current = e ? e->epoch : NO_EPOCH;
    const batch_meta_t *b = e && epoch == current ? find_batch(e, first_seq, last_seq) : NULL;
    if (b) {
        if (dup)
            *dup = (producer_dup_t){b->first_offset, b->last_offset, b->max_timestamp};
        return PRODUCER_DUPLICATE;
    }
    if (epoch < current)
        return PRODUCER_ERR_INVALID_EPOCH; /* a zombie: a newer instance took over */
    if (epoch != current) /* a bumped epoch restarts the sequence */
        return first_seq == 0 || current == NO_EPOCH ? PRODUCER_APPEND
                                                     : PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE;
    if (current == NO_EPOCH) /* unknown producer, or one without an epoch */
        return PRODUCER_APPEND;
    return in_sequence(newest_batch(e)->last_seq, first_seq) ? PRODUCER_APPEND
                                                             : PRODUCER_ERR_OUT_OF_ORDER_SEQUENCE;
}

void producer_state_update(producer_state_t *ps, int64_t pid, int16_t epoch, int32_t first_seq,
                           int32_t last_seq, int64_t first_offset, int64_t last_offset,
                           int64_t max_timestamp)
{
    if (pid < 0)
        return;
    uint32_t i = lookup(ps, pid);
    if (i == NIL)
        i = entry_add(ps, pid);
    else {
        list_unlink(ps, i);
        list_append(ps, i);
    }
    entry_t *e = &ps->entries[i];
    if (e->epoch != epoch) { /* a new epoch's sequences start over */
        e->epoch = epoch;
        e->nbatches = e->oldest = 0;
    }
    batch_meta_t b = {first_seq, last_seq, first_offset, last_offset, max_timestamp};
    entry_add_batch(e, &b);
}

int producer_state_apply_batch(const record_batch_t *batch, void *arg)
{
    if (batch->producer_id < 0 || (batch->attributes & BATCH_ATTR_CONTROL))
        return 0;
    producer_state_update(arg, batch->producer_id, batch->producer_epoch, batch->base_sequence,
                          producer_state_last_seq(batch->base_sequence, batch->last_offset_delta),
                          batch->base_offset, record_batch_last_offset(batch),
                          batch->max_timestamp);
    return 0;
}

void producer_state_apply_batches(producer_state_t *ps, const uint8_t *buf, size_t len)
{
    for (size_t off = 0; off < len;) {
        record_batch_t h;
        if (record_batch_parse_header(buf + off, len - off, &h) != PLOG_OK)
            break;
        producer_state_apply_batch(&h, ps);
        off += (size_t)record_batch_size(&h);
    }
}

/* now - last >= limit, for limit >= 0, without overflowing on odd timestamps. */
static int idle_for(int64_t last, int64_t now, int64_t limit)
{
    return now >= last && (uint64_t)now - (uint64_t)last >= (uint64_t)limit;
}

size_t producer_state_expire(producer_state_t *ps, int64_t now_ms, int64_t expiration_ms)
{
    size_t before = hmap_count(&ps->index);
    int64_t limit = expiration_ms < 0 ? 0 : expiration_ms;
    for (uint32_t i = ps->oldest, next; i != NIL; i = next) {
        next = ps->entries[i].next;
        if (idle_for(newest_batch(&ps->entries[i])->max_timestamp, now_ms, limit))
            entry_remove(ps, i);
    }
    /* Give memory back once most of it is idle; halving leaves room to grow. */
    size_t left = hmap_count(&ps->index);
    if (ps->capacity > MIN_CAPACITY && left < ps->capacity / 4) {
        uint32_t c = (uint32_t)left * 2;
        rebuild(ps, c < MIN_CAPACITY ? MIN_CAPACITY : c);
    }
    return before - left;
}
