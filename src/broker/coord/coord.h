/* coord.h -- the broker's link to its coordinator (ZooKeeper or the kipper
 * keeper), through Apache ZooKeeper's C client (libzookeeper-mt).
 *
 * The C client runs its own I/O and completion threads; every completion and
 * watch event is copied and posted to the broker's loop through a mailbox,
 * so callbacks below always run on the loop thread and may touch broker
 * state. Calls never block the loop (the client queues them). */
#ifndef KIPPER_BROKER_COORD_H
#define KIPPER_BROKER_COORD_H

#include <stddef.h>
#include <stdint.h>
/* The synchronous calls (used on helper threads) exist only in the
 * multi-threaded client's header mode. */
#ifndef THREADED
#define THREADED
#endif
#include <zookeeper/zookeeper.h>

#include "base/loop.h"

typedef struct coord coord_t;

typedef struct {
    int rc;                 /* ZOK or a ZooKeeper error (ZNONODE, ZCLOSING, ...) */
    const char *data;       /* get: the node's data (not NUL-terminated) */
    int len;
    int32_t version;        /* get/exists/set: the node's version */
    int64_t ephemeral_owner;/* get/exists: session owning an ephemeral, else 0 */
    char **children;        /* children: names */
    int nchildren;
} coord_result_t;

/* The result lives until the callback returns. */
typedef void (*coord_cb)(coord_t *co, const coord_result_t *res, void *arg);
/* Watch events: type is ZOO_CREATED_EVENT, ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT
 * or ZOO_CHILD_EVENT; session state changes come as ZOO_SESSION_EVENT with
 * state ZOO_CONNECTED_STATE, ZOO_CONNECTING_STATE or ZOO_EXPIRED_SESSION_STATE. */
typedef void (*coord_event_cb)(coord_t *co, int type, int state, const char *path, void *arg);

/* connect as in server.properties (hosts[/chroot]). The session is being
 * established when this returns; the event callback says when it is up. */
coord_t *coord_open(loop_t *loop, const char *connect, int session_timeout_ms, coord_event_cb on_event,
                    void *arg, char *err, size_t errlen);
/* Closes the session (its ephemerals go at once). Pending callbacks run
 * with rc ZCLOSING before this returns. Not from inside a coord callback. */
void coord_close(coord_t *co);
int64_t coord_session_id(const coord_t *co);
/* The session timeout the coordinator granted (what was asked for until
 * the session is up). */
int coord_session_timeout_ms(const coord_t *co);
/* For synchronous calls from a helper thread (coord_admin.h). */
zhandle_t *coord_handle(coord_t *co);

/* Each returns 0, or -1 when the request could not be queued (then cb is
 * not called). watch: leave a one-shot watch reported to on_event. cb may
 * be NULL when only the watch matters. */
int coord_get(coord_t *co, const char *path, int watch, coord_cb cb, void *arg);
int coord_exists(coord_t *co, const char *path, int watch, coord_cb cb, void *arg);
int coord_children(coord_t *co, const char *path, int watch, coord_cb cb, void *arg);
int coord_create(coord_t *co, const char *path, const char *data, int len, int flags, coord_cb cb, void *arg);
int coord_set(coord_t *co, const char *path, const char *data, int len, int version, coord_cb cb, void *arg);
int coord_delete(coord_t *co, const char *path, int version, coord_cb cb, void *arg);

/* Deletes path and every node below it, without blocking: the children are
 * listed, each subtree deleted, then the node itself; a child created
 * meanwhile (ZNOTEMPTY) makes it list again, a few times. cb gets rc ZOK
 * once nothing is left (a path that was not there counts as deleted), else
 * the first error met. 0, or -1 when nothing could be queued (then cb is
 * not called). */
int coord_delete_tree(coord_t *co, const char *path, coord_cb cb, void *arg);

/* Multi: all or nothing. Strings are copied. */
typedef struct {
    enum { COORD_OP_CREATE, COORD_OP_SET, COORD_OP_DELETE, COORD_OP_CHECK } type;
    const char *path;
    const char *data;
    int len;
    int flags;      /* create: ZOO_EPHEMERAL, ... */
    int version;    /* set/delete/check: expected version, -1 any */
} coord_op_t;
/* Operations in one multi: a controlled shutdown hands over up to a hundred
 * partitions in one (two operations each), far below the coordinator's
 * request size limit (jute.maxbuffer, 1 MiB by default) at the longest
 * topic names. */
#define COORD_MULTI_MAX 256
int coord_multi(coord_t *co, const coord_op_t *ops, int n, coord_cb cb, void *arg);

#endif
