/* watch.c -- the server's watch tables. See watch.h.
 *
 * Layout. Each table (data, child) maps a path to the watches on it; every
 * watcher has one record holding, per table, the list of its watches. A watch
 * is one (watcher, path) registration with its mode and sits on both lists,
 * and in a hash keyed by (path entry, watcher record), so adding, firing,
 * removing one watch and dropping a whole connection each cost only the
 * watches involved.
 *
 * ZooKeeper bookkeeping kept on purpose, because wchs prints it: a watcher
 * stays "listed" in a table (ZooKeeper's watch2Paths entry) from its first
 * watch there until its connection goes, even once all its watches fired.
 *
 * At most once per trigger: every trigger gets a new round number and a
 * watcher record is stamped with the round when it is collected. A delete's
 * child-table NodeDeleted runs in the same round as its data-table trigger,
 * which is exactly ZooKeeper's "supress" set. */
#include "watch.h"

#include "base/hashmap.h"
#include "base/logging.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

/* ---- hashing (the tables are base/hashmap.h) ---- */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

/* ---- the records ---- */

struct watcher_rec;
struct watched_path;

typedef struct watch {
    hmap_node_t node;   /* in wm->pairs */
    struct watched_path *path;
    struct watcher_rec *owner;
    watch_mode_t mode;
    struct watch *path_prev, *path_next;     /* the path's watches */
    struct watch *owner_prev, *owner_next;   /* the watcher's watches in this table */
} watch_t;

typedef struct watched_path {
    hmap_node_t node;   /* in table->paths */
    watch_t *watches;
    size_t len;
    char path[];    /* NUL-terminated copy */
} watched_path_t;

typedef struct watcher_rec {
    hmap_node_t node;   /* in wm->watchers */
    void *watcher;
    struct {
        watch_t *watches;
        int listed;   /* ZooKeeper's watch2Paths has an entry, maybe empty */
    } in[2];
    uint64_t round;   /* last trigger round that collected this watcher */
} watcher_rec_t;

typedef struct {
    hmap_t paths;
    size_t listed_watchers;   /* watch2Paths.size() */
    size_t watch_count;       /* (watcher, path) pairs */
    size_t recursive_count;   /* pairs in recursive mode: walk ancestors only if > 0 */
} table_t;

struct watch_manager {
    watch_notify_fn notify;
    void *ctx;
    table_t tables[2];
    hmap_t watchers;   /* watcher pointer -> watcher_rec_t */
    hmap_t pairs;      /* (path entry, watcher record) -> watch_t */
    uint64_t round;
};

static uint64_t pair_hash(const watched_path_t *wp, const watcher_rec_t *rec)
{
    return hash_ptr(wp) ^ (hash_ptr(rec) * 31);
}

typedef struct {
    const char *path;
    size_t len;
} path_key_t;

static int path_matches(const hmap_node_t *n, const void *key)
{
    const watched_path_t *wp = HMAP_ENTRY(n, watched_path_t, node);
    const path_key_t *k = key;
    return wp->len == k->len && memcmp(wp->path, k->path, k->len) == 0;
}

static watched_path_t *find_path(const table_t *t, const char *path, size_t len)
{
    path_key_t k = {path, len};
    hmap_node_t *n = hmap_find(&t->paths, hash_bytes(path, len), path_matches, &k);
    return n ? HMAP_ENTRY(n, watched_path_t, node) : NULL;
}

static int watcher_matches(const hmap_node_t *n, const void *watcher)
{
    return HMAP_ENTRY(n, watcher_rec_t, node)->watcher == watcher;
}

static watcher_rec_t *find_watcher(const watch_manager_t *wm, const void *watcher)
{
    hmap_node_t *n = hmap_find(&wm->watchers, hash_ptr(watcher), watcher_matches, watcher);
    return n ? HMAP_ENTRY(n, watcher_rec_t, node) : NULL;
}

typedef struct {
    const watched_path_t *path;
    const watcher_rec_t *owner;
} pair_key_t;

static int pair_matches(const hmap_node_t *n, const void *key)
{
    const watch_t *w = HMAP_ENTRY(n, watch_t, node);
    const pair_key_t *k = key;
    return w->path == k->path && w->owner == k->owner;
}

static watch_t *find_pair(const watch_manager_t *wm, const watched_path_t *wp, const watcher_rec_t *rec)
{
    pair_key_t k = {wp, rec};
    hmap_node_t *n = hmap_find(&wm->pairs, pair_hash(wp, rec), pair_matches, &k);
    return n ? HMAP_ENTRY(n, watch_t, node) : NULL;
}

static int valid_table(int table)
{
    return table == WATCH_TABLE_DATA || table == WATCH_TABLE_CHILD;
}

watch_manager_t *watch_manager_create(watch_notify_fn notify, void *ctx)
{
    watch_manager_t *wm = calloc(1, sizeof(*wm));
    if (!wm)
        return NULL;
    wm->notify = notify;
    wm->ctx = ctx;
    return wm;
}

/* Free every record of h (each kind of record is one allocation). */
static void free_records(hmap_t *h, size_t node_offset)
{
    hmap_iter_t it = hmap_iter(h);
    for (hmap_node_t *n; (n = hmap_next(&it));)
        free((char *)n - node_offset);
    hmap_destroy(h);
}

void watch_manager_destroy(watch_manager_t *wm)
{
    if (!wm)
        return;
    free_records(&wm->pairs, offsetof(watch_t, node));
    free_records(&wm->tables[WATCH_TABLE_DATA].paths, offsetof(watched_path_t, node));
    free_records(&wm->tables[WATCH_TABLE_CHILD].paths, offsetof(watched_path_t, node));
    free_records(&wm->watchers, offsetof(watcher_rec_t, node));
    free(wm);
}

/* ---- unlinking ---- */

/* Remove one watch from every list and count; leaves its path entry and
 * watcher record in place (callers drop an emptied path entry). */
static void unlink_watch(watch_manager_t *wm, watch_table_t table, watch_t *w)
{
    table_t *t = &wm->tables[table];
    if (w->path_prev)
        w->path_prev->path_next = w->path_next;
    else
        w->path->watches = w->path_next;
    if (w->path_next)
        w->path_next->path_prev = w->path_prev;
    if (w->owner_prev)
        w->owner_prev->owner_next = w->owner_next;
    else
        w->owner->in[table].watches = w->owner_next;
    if (w->owner_next)
        w->owner_next->owner_prev = w->owner_prev;
    hmap_remove(&wm->pairs, &w->node);
    if (w->mode == WATCH_MODE_PERSISTENT_RECURSIVE)
        t->recursive_count--;
    t->watch_count--;
    free(w);
}

/* ZooKeeper drops a path from its table as soon as no one watches it. */
static void drop_path_if_empty(table_t *t, watched_path_t *wp)
{
    if (wp->watches)
        return;
    hmap_remove(&t->paths, &wp->node);
    free(wp);
}

static void drop_watcher_rec(watch_manager_t *wm, watcher_rec_t *rec)
{
    hmap_remove(&wm->watchers, &rec->node);
    free(rec);
}

/* ---- adding ---- */

static watched_path_t *get_watched_path(table_t *t, const char *path, size_t len)
{
    watched_path_t *wp = find_path(t, path, len);
    if (wp)
        return wp;
    if (len > SIZE_MAX - sizeof(*wp) - 1)
        return NULL;
    wp = calloc(1, sizeof(*wp) + len + 1);
    if (!wp)
        return NULL;
    memcpy(wp->path, path, len);
    wp->len = len;
    hmap_insert(&t->paths, &wp->node, hash_bytes(path, len));
    return wp;
}

static watcher_rec_t *get_watcher(watch_manager_t *wm, void *watcher)
{
    watcher_rec_t *rec = find_watcher(wm, watcher);
    if (rec)
        return rec;
    rec = calloc(1, sizeof(*rec));
    if (!rec)
        return NULL;
    rec->watcher = watcher;
    hmap_insert(&wm->watchers, &rec->node, hash_ptr(watcher));
    return rec;
}

static watch_t *new_watch(watch_manager_t *wm, watch_table_t table, watched_path_t *wp, watcher_rec_t *rec)
{
    watch_t *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->path = wp;
    w->owner = rec;
    w->mode = WATCH_MODE_STANDARD;
    hmap_insert(&wm->pairs, &w->node, pair_hash(wp, rec));
    w->path_next = wp->watches;
    if (wp->watches)
        wp->watches->path_prev = w;
    wp->watches = w;
    w->owner_next = rec->in[table].watches;
    if (rec->in[table].watches)
        rec->in[table].watches->owner_prev = w;
    rec->in[table].watches = w;
    wm->tables[table].watch_count++;
    return w;
}

/* As ZooKeeper 3.8's WatcherModeManager: the latest add decides the mode, so
 * a one-shot registration replaces a persistent one on the same path. */
static void set_mode(table_t *t, watch_t *w, watch_mode_t mode)
{
    int was_recursive = w->mode == WATCH_MODE_PERSISTENT_RECURSIVE;
    int is_recursive = mode == WATCH_MODE_PERSISTENT_RECURSIVE;
    if (was_recursive && !is_recursive)
        t->recursive_count--;
    else if (!was_recursive && is_recursive)
        t->recursive_count++;
    w->mode = mode;
}

int watch_add(watch_manager_t *wm, watch_table_t table, const char *path, void *watcher, watch_mode_t mode)
{
    if (!wm || !path || !valid_table((int)table) ||
        (mode != WATCH_MODE_STANDARD && mode != WATCH_MODE_PERSISTENT && mode != WATCH_MODE_PERSISTENT_RECURSIVE))
        return -1;
    table_t *t = &wm->tables[table];
    watcher_rec_t *rec = get_watcher(wm, watcher);
    if (!rec)
        return -1;
    watched_path_t *wp = get_watched_path(t, path, strlen(path));
    watch_t *w = wp ? find_pair(wm, wp, rec) : NULL;
    if (wp && !w)
        w = new_watch(wm, table, wp, rec);
    if (!w) {   /* out of memory: undo what this call created */
        if (wp)
            drop_path_if_empty(t, wp);
        if (!rec->in[0].listed && !rec->in[1].listed)
            drop_watcher_rec(wm, rec);
        return -1;
    }
    set_mode(t, w, mode);
    if (!rec->in[table].listed) {
        rec->in[table].listed = 1;
        t->listed_watchers++;
    }
    return 0;
}

/* ---- firing ---- */

/* Watchers collected by one trigger, notified after the tables are updated
 * so a callback may change the tables (e.g. drop a dead connection). */
typedef struct {
    void **items;
    size_t count, cap;
    void *inline_items[32];
} notify_list_t;

static void notify_list_init(notify_list_t *l)
{
    l->items = l->inline_items;
    l->count = 0;
    l->cap = sizeof(l->inline_items) / sizeof(l->inline_items[0]);
}

static void notify_list_free(notify_list_t *l)
{
    if (l->items != l->inline_items)
        free(l->items);
}

static void notify_list_push(notify_list_t *l, void *watcher)
{
    if (l->count == l->cap) {
        size_t cap = l->cap * 2;
        void **items = cap < l->cap || cap > SIZE_MAX / sizeof(void *) ? NULL
                       : l->items == l->inline_items ? malloc(cap * sizeof(void *))
                                                     : realloc(l->items, cap * sizeof(void *));
        if (!items) {
            log_error("watch: out of memory; a watch notification is lost");
            return;
        }
        if (l->items == l->inline_items)
            memcpy(items, l->inline_items, l->count * sizeof(void *));
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = watcher;
}

static void collect(notify_list_t *l, watcher_rec_t *rec, uint64_t round)
{
    if (rec->round == round)
        return;   /* already notified (or suppressed) in this round */
    rec->round = round;
    notify_list_push(l, rec->watcher);
}

/* ZooKeeper's rule per watch found while walking from the event's path up:
 * recursive watches take every event but NodeChildrenChanged; others only
 * events at their own path; standard ones are used up by firing. */
static void collect_path(watch_manager_t *wm, watch_table_t table, watched_path_t *wp, int32_t type,
                         int at_parent, uint64_t round, notify_list_t *l)
{
    for (watch_t *w = wp->watches, *next; w; w = next) {
        next = w->path_next;
        if (w->mode == WATCH_MODE_PERSISTENT_RECURSIVE) {
            if (type != EVENT_NODE_CHILDREN_CHANGED)
                collect(l, w->owner, round);
        } else if (!at_parent) {
            collect(l, w->owner, round);
            if (w->mode == WATCH_MODE_STANDARD)
                unlink_watch(wm, table, w);
        }
    }
    drop_path_if_empty(&wm->tables[table], wp);
}

/* The parent of path[0..*len) as ZooKeeper's PathParentIterator walks it:
 * "/a/b" -> "/a" -> "/" -> stop. Returns 0 when there is no parent. */
static int parent_len(const char *path, size_t *len)
{
    if (*len == 1 && path[0] == '/')
        return 0;
    size_t i = *len;
    while (i > 0 && path[i - 1] != '/')
        i--;
    if (i == 0)
        return 0;   /* no slash at all: not a path */
    *len = i - 1 > 0 ? i - 1 : 1;
    return 1;
}

static void trigger_round(watch_manager_t *wm, watch_table_t table, const char *path, int32_t type,
                          uint64_t round)
{
    table_t *t = &wm->tables[table];
    size_t len = strlen(path);
    int walk_up = t->recursive_count > 0;
    notify_list_t l;
    notify_list_init(&l);
    for (int at_parent = 0; len > 0; at_parent = 1) {
        watched_path_t *wp = find_path(t, path, len);
        if (wp)
            collect_path(wm, table, wp, type, at_parent, round, &l);
        if (!walk_up || !parent_len(path, &len))
            break;
    }
    for (size_t i = 0; i < l.count; i++) {
        /* Skip a watcher that an earlier callback of this loop removed. */
        watcher_rec_t *rec = find_watcher(wm, l.items[i]);
        if (rec && rec->round == round && wm->notify)
            wm->notify(l.items[i], type, path, wm->ctx);
    }
    notify_list_free(&l);
}

void watch_trigger(watch_manager_t *wm, watch_table_t table, const char *path, int32_t event_type)
{
    if (!wm || !path || !valid_table((int)table))
        return;
    trigger_round(wm, table, path, event_type, ++wm->round);
}

/* NodeChildrenChanged goes to the parent ("/" for a top-level node). */
static void trigger_parent_changed(watch_manager_t *wm, const char *path)
{
    size_t len = strlen(path);
    if (!parent_len(path, &len))
        return;
    char small[256];
    char *parent = len < sizeof(small) ? small : malloc(len + 1);
    if (!parent) {
        log_error("watch: out of memory; NodeChildrenChanged for the parent of %s is lost", path);
        return;
    }
    memcpy(parent, path, len);
    parent[len] = 0;
    trigger_round(wm, WATCH_TABLE_CHILD, parent, EVENT_NODE_CHILDREN_CHANGED, ++wm->round);
    if (parent != small)
        free(parent);
}

void watch_fire_created(watch_manager_t *wm, const char *path)
{
    if (!wm || !path)
        return;
    trigger_round(wm, WATCH_TABLE_DATA, path, EVENT_NODE_CREATED, ++wm->round);
    trigger_parent_changed(wm, path);
}

void watch_fire_deleted(watch_manager_t *wm, const char *path)
{
    if (!wm || !path)
        return;
    /* One round for both tables: the child table's NodeDeleted skips whoever
     * the data table already told. */
    uint64_t round = ++wm->round;
    trigger_round(wm, WATCH_TABLE_DATA, path, EVENT_NODE_DELETED, round);
    trigger_round(wm, WATCH_TABLE_CHILD, path, EVENT_NODE_DELETED, round);
    trigger_parent_changed(wm, path);
}

void watch_fire_data_changed(watch_manager_t *wm, const char *path)
{
    if (!wm || !path)
        return;
    trigger_round(wm, WATCH_TABLE_DATA, path, EVENT_NODE_DATA_CHANGED, ++wm->round);
}

void watch_notify_one(watch_manager_t *wm, void *watcher, int32_t event_type, const char *path)
{
    if (wm && wm->notify)
        wm->notify(watcher, event_type, path, wm->ctx);
}

/* ---- checkWatches, removeWatches, disconnect ---- */

/* ZooKeeper 3.8's WatchManager.containsWatcher answers whether the path has
 * any watch in the table: it never looks the watcher up (the recursive-mode
 * test it adds implies a watch at the path too). Reproduced as is, so
 * checkWatches answers as Apache ZooKeeper does. */
static int table_contains(const watch_manager_t *wm, watch_table_t table, const char *path)
{
    return find_path(&wm->tables[table], path, strlen(path)) != NULL;
}

int watch_contains(watch_manager_t *wm, const char *path, void *watcher, int type)
{
    (void)watcher;
    if (!wm || !path)
        return 0;
    switch (type) {
    case WATCHER_TYPE_CHILDREN:
        return table_contains(wm, WATCH_TABLE_CHILD, path);
    case WATCHER_TYPE_DATA:
        return table_contains(wm, WATCH_TABLE_DATA, path);
    case WATCHER_TYPE_ANY:
        return table_contains(wm, WATCH_TABLE_CHILD, path) || table_contains(wm, WATCH_TABLE_DATA, path);
    default:
        return 0;
    }
}

/* ZooKeeper's removeWatcher(path, watcher) on one table, whatever the mode.
 * The watcher stays listed in the table (wchs still counts it). */
static int table_remove(watch_manager_t *wm, watch_table_t table, const char *path, void *watcher)
{
    watcher_rec_t *rec = find_watcher(wm, watcher);
    watched_path_t *wp = rec ? find_path(&wm->tables[table], path, strlen(path)) : NULL;
    watch_t *w = wp ? find_pair(wm, wp, rec) : NULL;
    if (!w)
        return 0;
    unlink_watch(wm, table, w);
    drop_path_if_empty(&wm->tables[table], wp);
    return 1;
}

int watch_remove(watch_manager_t *wm, const char *path, void *watcher, int type)
{
    if (!wm || !path)
        return 0;
    switch (type) {
    case WATCHER_TYPE_CHILDREN:
        return table_remove(wm, WATCH_TABLE_CHILD, path, watcher);
    case WATCHER_TYPE_DATA:
        return table_remove(wm, WATCH_TABLE_DATA, path, watcher);
    case WATCHER_TYPE_ANY: {
        int removed_child = table_remove(wm, WATCH_TABLE_CHILD, path, watcher);
        int removed_data = table_remove(wm, WATCH_TABLE_DATA, path, watcher);
        return removed_child || removed_data;
    }
    default:
        return 0;
    }
}

void watch_remove_watcher(watch_manager_t *wm, void *watcher)
{
    watcher_rec_t *rec = wm ? find_watcher(wm, watcher) : NULL;
    if (!rec)
        return;
    for (int table = 0; table < 2; table++) {
        table_t *t = &wm->tables[table];
        while (rec->in[table].watches) {
            watch_t *w = rec->in[table].watches;
            watched_path_t *wp = w->path;
            unlink_watch(wm, (watch_table_t)table, w);
            drop_path_if_empty(t, wp);
        }
        if (rec->in[table].listed)
            t->listed_watchers--;
    }
    drop_watcher_rec(wm, rec);
}

void watch_stats(watch_manager_t *wm, watch_stats_t *out)
{
    const table_t *data = &wm->tables[WATCH_TABLE_DATA];
    const table_t *child = &wm->tables[WATCH_TABLE_CHILD];
    out->watchers = data->listed_watchers;
    out->paths = hmap_count(&data->paths);
    out->total = data->watch_count;
    out->watch_count = data->watch_count + child->watch_count;
}

/* ---- dumps for the wchc / wchp four-letter words ---- */

void watch_dump_by_path(watch_manager_t *wm, watch_table_t table, watch_dump_fn fn, void *arg)
{
    hmap_iter_t it = hmap_iter(&wm->tables[table].paths);
    for (hmap_node_t *n; (n = hmap_next(&it));) {
        const watched_path_t *wp = HMAP_ENTRY(n, watched_path_t, node);
        int first = 1;
        for (const watch_t *w = wp->watches; w; w = w->path_next, first = 0)
            fn(wp->path, w->owner->watcher, first, arg);
    }
}

void watch_dump_by_watcher(watch_manager_t *wm, watch_table_t table, watch_dump_fn fn, void *arg)
{
    hmap_iter_t it = hmap_iter(&wm->watchers);
    for (hmap_node_t *n; (n = hmap_next(&it));) {
        const watcher_rec_t *rec = HMAP_ENTRY(n, watcher_rec_t, node);
        int first = 1;
        for (const watch_t *w = rec->in[table].watches; w; w = w->owner_next, first = 0)
            fn(w->path->path, rec->watcher, first, arg);
    }
}
