/* test_watch.c -- the watch tables and ZooKeeper 3.8's firing rules. */
#include <stdio.h>
#include <string.h>

#include "keeper/data/proto.h"
#include "keeper/data/watch.h"
#include "suites.h"
#include "unit.h"

/* ---- an event recorder ---- */

typedef struct {
    void *watcher;
    int32_t type;
    char path[64];
} event_t;

typedef struct {
    event_t events[4096];
    int count;
    watch_manager_t *wm;
    void *remove_on_notify;   /* when set: every callback drops this watcher */
} recorder_t;

static void record(void *watcher, int32_t type, const char *path, void *ctx)
{
    recorder_t *r = ctx;
    if (r->count < (int)(sizeof(r->events) / sizeof(r->events[0]))) {
        event_t *e = &r->events[r->count];
        e->watcher = watcher;
        e->type = type;
        snprintf(e->path, sizeof(e->path), "%s", path);
    }
    r->count++;
    if (r->remove_on_notify)
        watch_remove_watcher(r->wm, r->remove_on_notify);
}

/* How many recorded events went to watcher with this type and path. */
static int got(const recorder_t *r, void *watcher, int32_t type, const char *path)
{
    int n = 0;
    for (int i = 0; i < r->count && i < 4096; i++)
        if (r->events[i].watcher == watcher && r->events[i].type == type && strcmp(r->events[i].path, path) == 0)
            n++;
    return n;
}

static recorder_t rec;
static int w1, w2, w3;   /* their addresses are the watchers */
#define W1 ((void *)&w1)
#define W2 ((void *)&w2)
#define W3 ((void *)&w3)

static watch_manager_t *fresh(void)
{
    memset(&rec, 0, sizeof(rec));
    rec.wm = watch_manager_create(record, &rec);
    return rec.wm;
}

/* addWatch: a persistent mode in both tables. */
static void add_persistent(watch_manager_t *wm, const char *path, void *w, watch_mode_t mode)
{
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, path, w, mode), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, path, w, mode), 0);
}

static void test_watch_one_shot_fires_once(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, WATCH_MODE_STANDARD), 0);
    watch_fire_data_changed(wm, "/a");
    CHECK_EQ(rec.count, 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DATA_CHANGED, "/a"), 1);
    watch_fire_data_changed(wm, "/a");
    watch_fire_deleted(wm, "/a");
    CHECK_EQ(rec.count, 1);

    /* exists() on a missing node: NodeCreated, once */
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/b", W1, WATCH_MODE_STANDARD), 0);
    watch_fire_created(wm, "/b");
    watch_fire_created(wm, "/b");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CREATED, "/b"), 1);

    /* getChildren: NodeChildrenChanged at the parent, once */
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/b", W2, WATCH_MODE_STANDARD), 0);
    watch_fire_created(wm, "/b/c");
    watch_fire_deleted(wm, "/b/c");
    CHECK_EQ(got(&rec, W2, EVENT_NODE_CHILDREN_CHANGED, "/b"), 1);
    CHECK_EQ(rec.count, 3);
    watch_manager_destroy(wm);
}

static void test_watch_root_parent(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/", W1, WATCH_MODE_STANDARD), 0);
    watch_fire_created(wm, "/x");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CHILDREN_CHANGED, "/"), 1);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/", W1, WATCH_MODE_STANDARD), 0);
    watch_fire_deleted(wm, "/x");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CHILDREN_CHANGED, "/"), 2);
    CHECK_EQ(rec.count, 2);
    watch_manager_destroy(wm);
}

static void test_watch_persistent_fires_repeatedly(void)
{
    watch_manager_t *wm = fresh();
    add_persistent(wm, "/a", W1, WATCH_MODE_PERSISTENT);
    watch_fire_created(wm, "/a");
    watch_fire_data_changed(wm, "/a");
    watch_fire_data_changed(wm, "/a");
    watch_fire_created(wm, "/a/b");   /* children changed at /a: persistent gets it */
    watch_fire_created(wm, "/a/b/c"); /* below /a: not for a non-recursive watch */
    watch_fire_data_changed(wm, "/a/b");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CREATED, "/a"), 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DATA_CHANGED, "/a"), 2);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CHILDREN_CHANGED, "/a"), 1);
    CHECK_EQ(rec.count, 4);
    watch_fire_deleted(wm, "/a");   /* data and child tables both match: told once */
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DELETED, "/a"), 1);
    CHECK_EQ(rec.count, 5);
    watch_fire_created(wm, "/a");   /* still there after the delete */
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CREATED, "/a"), 2);
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK_EQ(st.watch_count, 2);
    watch_manager_destroy(wm);
}

static void test_watch_recursive(void)
{
    watch_manager_t *wm = fresh();
    add_persistent(wm, "/a", W1, WATCH_MODE_PERSISTENT_RECURSIVE);
    watch_fire_created(wm, "/a/b");     /* NodeCreated /a/b; children-changed at /a is not sent */
    watch_fire_created(wm, "/a/b/c");
    watch_fire_data_changed(wm, "/a/b");
    watch_fire_data_changed(wm, "/a");
    watch_fire_deleted(wm, "/a/b/c");   /* once, though both tables match */
    watch_fire_created(wm, "/ab");      /* a sibling with the same prefix */
    watch_fire_created(wm, "/x/a");
    watch_trigger(wm, WATCH_TABLE_CHILD, "/a", EVENT_NODE_CHILDREN_CHANGED);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CREATED, "/a/b"), 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CREATED, "/a/b/c"), 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DATA_CHANGED, "/a/b"), 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DATA_CHANGED, "/a"), 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DELETED, "/a/b/c"), 1);
    CHECK_EQ(rec.count, 5);
    watch_fire_deleted(wm, "/a");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DELETED, "/a"), 1);
    CHECK_EQ(rec.count, 6);

    /* recursive at the root sees everything but children-changed */
    add_persistent(wm, "/", W2, WATCH_MODE_PERSISTENT_RECURSIVE);
    watch_fire_created(wm, "/q/r/s");
    watch_fire_created(wm, "/q");
    CHECK_EQ(got(&rec, W2, EVENT_NODE_CREATED, "/q/r/s"), 1);
    CHECK_EQ(got(&rec, W2, EVENT_NODE_CREATED, "/q"), 1);
    CHECK_EQ(rec.count, 8);
    watch_manager_destroy(wm);
}

/* The ancestor walk must neither fire nor consume non-recursive watches above the event. */
static void test_watch_ancestors_only_for_recursive(void)
{
    watch_manager_t *wm = fresh();
    add_persistent(wm, "/a", W1, WATCH_MODE_PERSISTENT);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W2, WATCH_MODE_STANDARD), 0);
    add_persistent(wm, "/z", W3, WATCH_MODE_PERSISTENT_RECURSIVE);   /* makes triggers walk up */
    watch_fire_data_changed(wm, "/a/b");
    watch_fire_created(wm, "/a/b/c");
    watch_fire_deleted(wm, "/a/b");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CHILDREN_CHANGED, "/a"), 1);   /* /a/b deleted: /a's child */
    CHECK_EQ(rec.count, 1);
    watch_fire_data_changed(wm, "/a");   /* W2's one-shot was not used up by the walk */
    CHECK_EQ(got(&rec, W2, EVENT_NODE_DATA_CHANGED, "/a"), 1);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DATA_CHANGED, "/a"), 1);
    CHECK_EQ(rec.count, 3);
    watch_manager_destroy(wm);
}

static void test_watch_delete_suppression(void)
{
    watch_manager_t *wm = fresh();
    /* W1: getData and getChildren on /a; W2: getChildren on /a; W3: getChildren on / */
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/a", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/a", W2, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/", W3, WATCH_MODE_STANDARD), 0);
    watch_fire_deleted(wm, "/a");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DELETED, "/a"), 1);
    CHECK_EQ(got(&rec, W2, EVENT_NODE_DELETED, "/a"), 1);
    CHECK_EQ(got(&rec, W3, EVENT_NODE_CHILDREN_CHANGED, "/"), 1);
    CHECK_EQ(rec.count, 3);
    /* W1's suppressed child watch was used up all the same */
    CHECK_EQ(watch_contains(wm, "/a", W1, WATCHER_TYPE_ANY), 0);
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK_EQ(st.watch_count, 0);
    watch_manager_destroy(wm);
}

static void test_watch_at_most_once_per_trigger(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a/b", W1, WATCH_MODE_STANDARD), 0);
    add_persistent(wm, "/a", W1, WATCH_MODE_PERSISTENT_RECURSIVE);
    add_persistent(wm, "/", W1, WATCH_MODE_PERSISTENT_RECURSIVE);
    watch_fire_data_changed(wm, "/a/b");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DATA_CHANGED, "/a/b"), 1);
    CHECK_EQ(rec.count, 1);
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK_EQ(st.total, 2);   /* the one-shot at /a/b fired and went */
    watch_fire_data_changed(wm, "/a/b");
    CHECK_EQ(rec.count, 2);

    /* a standard exists watch plus recursive ones: one NodeCreated */
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a/c", W1, WATCH_MODE_STANDARD), 0);
    watch_fire_created(wm, "/a/c");
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CREATED, "/a/c"), 1);
    CHECK_EQ(rec.count, 3);
    watch_manager_destroy(wm);
}

/* ZooKeeper 3.8: the latest registration decides the mode of (watcher, path). */
static void test_watch_mode_replaced(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, WATCH_MODE_PERSISTENT_RECURSIVE), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, WATCH_MODE_STANDARD), 0);
    watch_fire_data_changed(wm, "/a/b");   /* no longer recursive */
    CHECK_EQ(rec.count, 0);
    watch_fire_data_changed(wm, "/a");
    watch_fire_data_changed(wm, "/a");     /* one-shot now */
    CHECK_EQ(rec.count, 1);
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK_EQ(st.total, 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, (watch_mode_t)7), -1);
    CHECK_EQ(watch_add(wm, (watch_table_t)5, "/a", W1, WATCH_MODE_STANDARD), -1);
    watch_manager_destroy(wm);
}

static void test_watch_remove_by_type(void)
{
    watch_manager_t *wm = fresh();
    add_persistent(wm, "/a", W1, WATCH_MODE_PERSISTENT);
    CHECK_EQ(watch_remove(wm, "/a", W1, WATCHER_TYPE_DATA), 1);
    CHECK_EQ(watch_remove(wm, "/a", W1, WATCHER_TYPE_DATA), 0);
    watch_fire_data_changed(wm, "/a");
    CHECK_EQ(rec.count, 0);
    watch_fire_created(wm, "/a/b");   /* the child-table half still fires */
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CHILDREN_CHANGED, "/a"), 1);
    watch_fire_deleted(wm, "/a");     /* ... NodeDeleted too, from the child table */
    CHECK_EQ(got(&rec, W1, EVENT_NODE_DELETED, "/a"), 1);
    CHECK_EQ(watch_remove(wm, "/a", W1, WATCHER_TYPE_ANY), 1);
    CHECK_EQ(watch_remove(wm, "/a", W1, WATCHER_TYPE_ANY), 0);
    watch_fire_created(wm, "/a/c");
    CHECK_EQ(rec.count, 2);

    /* a recursive watch removed as CHILDREN keeps firing from the data table */
    add_persistent(wm, "/r", W2, WATCH_MODE_PERSISTENT_RECURSIVE);
    CHECK_EQ(watch_remove(wm, "/r", W2, WATCHER_TYPE_CHILDREN), 1);
    watch_fire_data_changed(wm, "/r/x");
    CHECK_EQ(got(&rec, W2, EVENT_NODE_DATA_CHANGED, "/r/x"), 1);
    CHECK_EQ(watch_remove(wm, "/r", W2, WATCHER_TYPE_DATA), 1);
    watch_fire_data_changed(wm, "/r/x");
    CHECK_EQ(rec.count, 3);

    /* wrong table, wrong watcher, bad type */
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/d", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_remove(wm, "/d", W1, WATCHER_TYPE_CHILDREN), 0);
    CHECK_EQ(watch_remove(wm, "/d", W2, WATCHER_TYPE_ANY), 0);
    CHECK_EQ(watch_remove(wm, "/d", W1, 0), 0);
    CHECK_EQ(watch_remove(wm, "/d", W1, 4), 0);
    CHECK_EQ(watch_remove(wm, "/d", W1, WATCHER_TYPE_DATA), 1);
    watch_fire_data_changed(wm, "/d");
    CHECK_EQ(rec.count, 3);
    watch_manager_destroy(wm);
}

static void test_watch_contains_by_type(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/d", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/c", W1, WATCH_MODE_STANDARD), 0);
    add_persistent(wm, "/p", W1, WATCH_MODE_PERSISTENT_RECURSIVE);
    CHECK_EQ(watch_contains(wm, "/d", W1, WATCHER_TYPE_DATA), 1);
    CHECK_EQ(watch_contains(wm, "/d", W1, WATCHER_TYPE_CHILDREN), 0);
    CHECK_EQ(watch_contains(wm, "/d", W1, WATCHER_TYPE_ANY), 1);
    CHECK_EQ(watch_contains(wm, "/c", W1, WATCHER_TYPE_DATA), 0);
    CHECK_EQ(watch_contains(wm, "/c", W1, WATCHER_TYPE_CHILDREN), 1);
    CHECK_EQ(watch_contains(wm, "/c", W1, WATCHER_TYPE_ANY), 1);
    CHECK_EQ(watch_contains(wm, "/p", W1, WATCHER_TYPE_DATA), 1);
    CHECK_EQ(watch_contains(wm, "/p", W1, WATCHER_TYPE_CHILDREN), 1);
    CHECK_EQ(watch_contains(wm, "/p/below", W1, WATCHER_TYPE_ANY), 0);   /* only the path itself */
    CHECK_EQ(watch_contains(wm, "/x", W1, WATCHER_TYPE_ANY), 0);
    CHECK_EQ(watch_contains(wm, "/d", W1, 9), 0);
    /* ZooKeeper 3.8 answers for the path, not the watcher (containsWatcher never looks it up) */
    CHECK_EQ(watch_contains(wm, "/d", W2, WATCHER_TYPE_DATA), 1);
    watch_fire_data_changed(wm, "/d");
    CHECK_EQ(watch_contains(wm, "/d", W1, WATCHER_TYPE_DATA), 0);
    watch_manager_destroy(wm);
}

static void test_watch_remove_watcher(void)
{
    watch_manager_t *wm = fresh();
    add_persistent(wm, "/a", W1, WATCH_MODE_PERSISTENT_RECURSIVE);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/b", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/b", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/b", W2, WATCH_MODE_STANDARD), 0);
    watch_remove_watcher(wm, W1);
    watch_remove_watcher(wm, W1);   /* twice is harmless */
    watch_remove_watcher(wm, W3);   /* never seen */
    watch_fire_created(wm, "/a/x");
    watch_fire_deleted(wm, "/b");
    CHECK_EQ(rec.count, 1);
    CHECK_EQ(got(&rec, W2, EVENT_NODE_DELETED, "/b"), 1);
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK_EQ(st.watchers, 1);   /* W2 stays listed with no watches, as in ZooKeeper */
    CHECK_EQ(st.paths, 0);
    CHECK_EQ(st.total, 0);
    CHECK_EQ(st.watch_count, 0);
    watch_remove_watcher(wm, W2);
    watch_stats(wm, &st);
    CHECK_EQ(st.watchers, 0);
    watch_manager_destroy(wm);
}

/* wchs counts the data table only; mntr's watch_count both. */
static void test_watch_stats(void)
{
    watch_manager_t *wm = fresh();
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK(st.watchers == 0 && st.paths == 0 && st.total == 0 && st.watch_count == 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/b", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W2, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W2, WATCH_MODE_STANDARD), 0);   /* again: no change */
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/c", W3, WATCH_MODE_STANDARD), 0);
    watch_stats(wm, &st);
    CHECK_EQ(st.watchers, 2);
    CHECK_EQ(st.paths, 2);
    CHECK_EQ(st.total, 3);
    CHECK_EQ(st.watch_count, 4);
    watch_fire_data_changed(wm, "/a");
    watch_stats(wm, &st);
    CHECK_EQ(st.watchers, 2);   /* W2 has no watch left but is still listed */
    CHECK_EQ(st.paths, 1);
    CHECK_EQ(st.total, 1);
    CHECK_EQ(st.watch_count, 2);
    CHECK_EQ(watch_remove(wm, "/b", W1, WATCHER_TYPE_DATA), 1);
    watch_stats(wm, &st);
    CHECK(st.watchers == 2 && st.paths == 0 && st.total == 0 && st.watch_count == 1);
    watch_remove_watcher(wm, W1);
    watch_remove_watcher(wm, W3);
    watch_stats(wm, &st);
    CHECK(st.watchers == 1 && st.paths == 0 && st.total == 0 && st.watch_count == 0);
    watch_manager_destroy(wm);
}

static void test_watch_trigger_and_notify_one(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, "/a", W1, WATCH_MODE_STANDARD), 0);
    watch_trigger(wm, WATCH_TABLE_DATA, "/a", EVENT_NODE_DATA_CHANGED);   /* other table */
    CHECK_EQ(rec.count, 0);
    watch_trigger(wm, WATCH_TABLE_CHILD, "/a", EVENT_NODE_CHILDREN_CHANGED);
    watch_trigger(wm, WATCH_TABLE_CHILD, "/a", EVENT_NODE_CHILDREN_CHANGED);
    CHECK_EQ(got(&rec, W1, EVENT_NODE_CHILDREN_CHANGED, "/a"), 1);
    watch_notify_one(wm, W2, EVENT_NODE_DELETED, "/gone");
    CHECK_EQ(got(&rec, W2, EVENT_NODE_DELETED, "/gone"), 1);
    watch_trigger(wm, WATCH_TABLE_DATA, "", EVENT_NODE_DATA_CHANGED);      /* not a path: nothing */
    watch_fire_created(wm, "nonsense");
    CHECK_EQ(rec.count, 2);
    watch_manager_destroy(wm);
}

/* A callback may drop a connection; a dropped watcher gets nothing more. */
static void test_watch_callback_removes_watcher(void)
{
    watch_manager_t *wm = fresh();
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W1, WATCH_MODE_STANDARD), 0);
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/a", W2, WATCH_MODE_STANDARD), 0);
    add_persistent(wm, "/a", W3, WATCH_MODE_PERSISTENT);
    rec.remove_on_notify = W2;   /* whoever is told first drops W2 */
    watch_fire_data_changed(wm, "/a");
    int w2_told = got(&rec, W2, EVENT_NODE_DATA_CHANGED, "/a");
    CHECK(rec.count == 2 || (rec.count == 3 && w2_told == 1 && rec.events[0].watcher == W2));
    rec.remove_on_notify = W3;
    watch_fire_deleted(wm, "/a");   /* W3 is dropped between the data and child triggers */
    CHECK_EQ(got(&rec, W3, EVENT_NODE_DELETED, "/a"), 1);
    watch_manager_destroy(wm);
}

/* Enough watchers and paths to grow every table and the notify list. */
static void test_watch_many(void)
{
    static char watchers[2000];
    char path[32];
    watch_manager_t *wm = fresh();
    for (int i = 0; i < 2000; i++) {
        CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/hot", &watchers[i], WATCH_MODE_STANDARD), 0);
        snprintf(path, sizeof(path), "/n/%d", i);
        CHECK_EQ(watch_add(wm, WATCH_TABLE_CHILD, path, &watchers[i], WATCH_MODE_STANDARD), 0);
    }
    watch_stats_t st;
    watch_stats(wm, &st);
    CHECK(st.watchers == 2000 && st.paths == 1 && st.total == 2000 && st.watch_count == 4000);
    watch_fire_data_changed(wm, "/hot");
    CHECK_EQ(rec.count, 2000);
    int each_once = 1;
    for (int i = 0; i < 2000; i++)
        each_once &= got(&rec, &watchers[i], EVENT_NODE_DATA_CHANGED, "/hot") == 1;
    CHECK(each_once);
    for (int i = 0; i < 2000; i += 2)
        watch_remove_watcher(wm, &watchers[i]);
    for (int i = 0; i < 2000; i++) {
        snprintf(path, sizeof(path), "/n/%d/x", i);
        watch_fire_created(wm, path);
    }
    CHECK_EQ(rec.count, 3000);
    watch_stats(wm, &st);
    CHECK(st.watchers == 1000 && st.watch_count == 0);
    watch_manager_destroy(wm);   /* leaves the listed records to the destructor */
}

void suite_watch(void)
{
    RUN(test_watch_one_shot_fires_once);
    RUN(test_watch_root_parent);
    RUN(test_watch_persistent_fires_repeatedly);
    RUN(test_watch_recursive);
    RUN(test_watch_ancestors_only_for_recursive);
    RUN(test_watch_delete_suppression);
    RUN(test_watch_at_most_once_per_trigger);
    RUN(test_watch_mode_replaced);
    RUN(test_watch_remove_by_type);
    RUN(test_watch_contains_by_type);
    RUN(test_watch_remove_watcher);
    RUN(test_watch_stats);
    RUN(test_watch_trigger_and_notify_one);
    RUN(test_watch_callback_removes_watcher);
    RUN(test_watch_many);
}
