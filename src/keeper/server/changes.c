/* changes.c -- see changes.h. */
#include "changes.h"

#include "base/alloc.h"
#include "base/logging.h"

#include <stdlib.h>
#include <string.h>

void changes_init(change_list_t *cl)
{
    memset(cl, 0, sizeof(*cl));
    hmap_random_key(&cl->path_key);
}

static uint64_t path_hash(const change_list_t *cl, const char *path)
{
    return hmap_hash_bytes(&cl->path_key, path, strlen(path));
}

static int path_matches(const hmap_node_t *node, const void *key)
{
    return strcmp(HMAP_ENTRY(node, change_record_t, by_path)->path, key) == 0;
}

static change_record_t *newest_of(const change_list_t *cl, const char *path, uint64_t hash)
{
    hmap_node_t *n = hmap_find(&cl->by_path, hash, path_matches, path);
    return n ? HMAP_ENTRY(n, change_record_t, by_path) : NULL;
}

change_record_t *changes_latest(const change_list_t *cl, const char *path)
{
    return newest_of(cl, path, path_hash(cl, path));
}

change_record_t *changes_add(change_list_t *cl, const char *path, int64_t zxid, int exists, const zstat_t *stat,
                             int32_t child_count, const acl_list_t *acl)
{
    size_t len = strlen(path);
    change_record_t *cr = xcalloc(1, sizeof(*cr) + len + 1);
    memcpy(cr->path, path, len + 1);
    cr->zxid = zxid;
    if (exists) {
        cr->exists = 1;
        cr->stat = *stat;
        cr->child_count = child_count;
        if (acl_list_copy(&cr->acl, acl) < 0) {
            log_error("out of memory recording a prepared change");
            abort();
        }
    }
    /* The path's newest record until now is older than this one. */
    uint64_t hash = path_hash(cl, path);
    change_record_t *previous = newest_of(cl, path, hash);
    if (previous) {
        hmap_remove(&cl->by_path, &previous->by_path);
        previous->newer_same_path = cr;
        cr->older_same_path = previous;
    }
    hmap_insert(&cl->by_path, &cr->by_path, hash);
    cr->older = cl->newest;
    if (cl->newest)
        cl->newest->newer = cr;
    else
        cl->oldest = cr;
    cl->newest = cr;
    cl->count++;
    return cr;
}

static void record_free(change_record_t *cr)
{
    acl_list_free(&cr->acl);
    free(cr);
}

/* The oldest record goes: no record of its path is older, and the newer
 * one, if any, holds the path's place in the index. */
static void drop_oldest(change_list_t *cl)
{
    change_record_t *cr = cl->oldest;
    if (cr->newer_same_path)
        cr->newer_same_path->older_same_path = NULL;
    else
        hmap_remove(&cl->by_path, &cr->by_path);
    cl->oldest = cr->newer;
    if (cl->oldest)
        cl->oldest->older = NULL;
    else
        cl->newest = NULL;
    cl->count--;
    record_free(cr);
}

/* The newest record goes: it is its path's newest, and the path's older
 * record, if any, takes its place in the index again. */
static void drop_newest(change_list_t *cl)
{
    change_record_t *cr = cl->newest;
    hmap_remove(&cl->by_path, &cr->by_path);
    if (cr->older_same_path) {
        change_record_t *previous = cr->older_same_path;
        previous->newer_same_path = NULL;
        hmap_insert(&cl->by_path, &previous->by_path, previous->by_path.hash);
    }
    cl->newest = cr->older;
    if (cl->newest)
        cl->newest->newer = NULL;
    else
        cl->oldest = NULL;
    cl->count--;
    record_free(cr);
}

void changes_applied(change_list_t *cl, int64_t zxid)
{
    while (cl->oldest && cl->oldest->zxid <= zxid)
        drop_oldest(cl);
}

void changes_drop_newest(change_list_t *cl, size_t count)
{
    while (cl->count > count)
        drop_newest(cl);
}

void changes_drop_from_zxid(change_list_t *cl, int64_t zxid)
{
    while (cl->newest && cl->newest->zxid >= zxid)
        drop_newest(cl);
}

void changes_destroy(change_list_t *cl)
{
    while (cl->oldest)
        drop_oldest(cl);
    hmap_destroy(&cl->by_path);
}
