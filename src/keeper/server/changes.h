/* changes.h -- the changes prepared but not applied yet (ZooKeeper's
 * outstandingChanges with outstandingChangesForPath). prep.c checks every
 * write against the tree as these records say it will be; each record says
 * what one path will be after one transaction (or that it will be gone).
 *
 * The records are a list by zxid, oldest first: applying takes them off the
 * front, a rollback (a failed multi, a failed log write) off the back. A
 * hash index finds the newest record of a path, and each record links the
 * older and newer records of the same path, so looking up, adding, applying
 * and rolling back each cost the same however many writes are in flight
 * (thousands on a busy leader; a scan of them per write, and moving the
 * array per applied transaction, took a third of the keeper's CPU at 960
 * requests outstanding). A record stays where it was allocated until it is
 * freed, so pointers into it (its ACL) stay valid until then.
 *
 * Memory: one allocation per record, its path inside it. Loop thread only. */
#ifndef KIPPER_KEEPER_SERVER_CHANGES_H
#define KIPPER_KEEPER_SERVER_CHANGES_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "keeper/data/proto.h"

typedef struct change_record {
    hmap_node_t by_path;                    /* in the index while its path's newest */
    struct change_record *older, *newer;    /* every record, by zxid */
    struct change_record *older_same_path, *newer_same_path;
    int64_t zxid;
    int exists;                             /* 0: the path will not exist */
    zstat_t stat;                           /* when exists */
    int32_t child_count;
    acl_list_t acl;
    char path[];
} change_record_t;

typedef struct {
    change_record_t *oldest, *newest;
    size_t count;
    hmap_t by_path;
    hmap_key_t path_key;
} change_list_t;

/* A zeroed change_list_t is empty and usable, its hash key zero;
 * changes_init gives it an unpredictable one (hashmap.h). */
void changes_init(change_list_t *cl);
/* Frees every record and the index. */
void changes_destroy(change_list_t *cl);

/* The newest record of path, or NULL when no prepared change touches it. */
change_record_t *changes_latest(const change_list_t *cl, const char *path);
/* A record for path at zxid (not before the newest's), after every other:
 * with stat, child_count and a copy of acl when exists. Out of memory is
 * fatal (base/alloc.h's policy). */
change_record_t *changes_add(change_list_t *cl, const char *path, int64_t zxid, int exists, const zstat_t *stat,
                             int32_t child_count, const acl_list_t *acl);
/* Free the records with zxid <= zxid, oldest first (they are applied). */
void changes_applied(change_list_t *cl, int64_t zxid);
/* Free the newest records until count are left. */
void changes_drop_newest(change_list_t *cl, size_t count);
/* Free the records with zxid >= zxid (they will not be applied). */
void changes_drop_from_zxid(change_list_t *cl, int64_t zxid);

#endif
