/* watch.h -- the server's watch tables (ZooKeeper's WatchManager).
 *
 * Two tables, as in ZooKeeper: data watches (getData/exists and persistent
 * watches) and child watches (getChildren and persistent watches). A watcher
 * is an opaque pointer (the client connection). A watcher has one mode per
 * (table, path): standard one-shot, persistent, or persistent-recursive;
 * addWatch installs a persistent mode in both tables.
 *
 * Firing rules are ZooKeeper 3.8's: an event at path P is looked up at P and,
 * when any recursive watch exists, at every ancestor of P. Recursive watchers
 * get every event but NodeChildrenChanged, at P or below; non-recursive
 * watchers only at P itself; standard watches are removed when they fire.
 * Each watcher is notified at most once per trigger. */
#ifndef KIPPER_KEEPER_WATCH_H
#define KIPPER_KEEPER_WATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct watch_manager watch_manager_t;

typedef enum { WATCH_TABLE_DATA, WATCH_TABLE_CHILD } watch_table_t;
typedef enum { WATCH_MODE_STANDARD, WATCH_MODE_PERSISTENT, WATCH_MODE_PERSISTENT_RECURSIVE } watch_mode_t;

/* Called for each watcher an event reaches: event_type is an EVENT_* code,
 * path the znode the event is about. Called after the tables are updated, so
 * it may add or remove watches (e.g. drop a dead connection's watcher), but
 * it must not fire events itself. */
typedef void (*watch_notify_fn)(void *watcher, int32_t event_type, const char *path, void *ctx);

watch_manager_t *watch_manager_create(watch_notify_fn notify, void *ctx);
void watch_manager_destroy(watch_manager_t *wm);

/* Add (or change the mode of) watcher's watch on path in a table. As in
 * ZooKeeper 3.8 the latest call sets the mode: a getData watch on a path the
 * same connection watches persistently makes that data-table watch one-shot.
 * 0, or -1 (bad table or mode, out of memory). */
int watch_add(watch_manager_t *wm, watch_table_t table, const char *path, void *watcher, watch_mode_t mode);

/* The events of one tree change, with ZooKeeper's DataTree call sequence:
 *  created: DATA NodeCreated at path; CHILD NodeChildrenChanged at parent.
 *  deleted: DATA NodeDeleted at path; CHILD NodeDeleted at path (skipping
 *           watchers the data trigger already notified); CHILD
 *           NodeChildrenChanged at parent.
 *  data changed: DATA NodeDataChanged at path. */
void watch_fire_created(watch_manager_t *wm, const char *path);
void watch_fire_deleted(watch_manager_t *wm, const char *path);
void watch_fire_data_changed(watch_manager_t *wm, const char *path);

/* One table's trigger, for callers that need a single step. */
void watch_trigger(watch_manager_t *wm, watch_table_t table, const char *path, int32_t event_type);

/* checkWatches / removeWatches for one watcher. type is WATCHER_TYPE_CHILDREN,
 * _DATA or _ANY (anything else: 0). watch_contains: 1 if that table (either,
 * for ANY) has a watch at path -- ZooKeeper 3.8's containsWatcher never looks
 * at which watcher holds it, and checkWatches answers accordingly.
 * watch_remove: removes the watcher's watch at path from that table (both for
 * ANY), whatever its mode, so a persistent watch removed as DATA still fires
 * from the child table; returns 1 if something was removed, else 0. */
int watch_contains(watch_manager_t *wm, const char *path, void *watcher, int type);
int watch_remove(watch_manager_t *wm, const char *path, void *watcher, int type);

/* Notify one watcher directly (setWatches reporting a missed change). */
void watch_notify_one(watch_manager_t *wm, void *watcher, int32_t event_type, const char *path);

/* Forget every watch of a watcher (its connection closed). */
void watch_remove_watcher(watch_manager_t *wm, void *watcher);

/* Counts as ZooKeeper 3.8 reports them. wchs ("%zu connections watching %zu
 * paths\nTotal watches:%zu") prints the DATA table only: watchers that have
 * set a data watch (they stay counted after their watches fire or are
 * removed, until watch_remove_watcher), paths with a data watch,
 * and (watcher, path) data watches. mntr's zk_watch_count is watch_count:
 * the watches of both tables. */
typedef struct {
    size_t watchers;
    size_t paths;
    size_t total;
    size_t watch_count;
} watch_stats_t;
void watch_stats(watch_manager_t *wm, watch_stats_t *out);

/* Walk one table for the wchc/wchp dumps: by path (fn called once per
 * watcher of each path) or by watcher (once per path of each watcher).
 * first is set on the first call of each group. */
typedef void (*watch_dump_fn)(const char *path, void *watcher, int first, void *arg);
void watch_dump_by_path(watch_manager_t *wm, watch_table_t table, watch_dump_fn fn, void *arg);
void watch_dump_by_watcher(watch_manager_t *wm, watch_table_t table, watch_dump_fn fn, void *arg);

#endif
