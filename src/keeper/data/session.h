/* session.h -- client sessions: ids, passwords, timeouts and expiry
 * (ZooKeeper's SessionTrackerImpl).
 *
 * Expiry times are rounded up to the next tick boundary, as ZooKeeper's
 * ExpiryQueue does, so one sweep per tick finds every expired session. The
 * sweep is a scan of all sessions: at one sweep per tick that costs less than
 * maintaining a bucket per tick would for the session counts a keeper holds. */
#ifndef KIPPER_KEEPER_SESSION_H
#define KIPPER_KEEPER_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

#define SESSION_PASSWORD_LEN 16

typedef struct session session_t;
struct session {
    int64_t id;
    int32_t timeout_ms;
    uint64_t expires_at_ms;  /* monotonic clock, on a tick boundary */
    int closing;             /* closeSession prepared; no more requests */
    int local;               /* a local session (local_sessions.c): never logged, known here alone */
    void *owner;             /* the connection serving it, or NULL */
    int64_t served_by;       /* a leader's: the member whose client it is (ZooKeeper's session owner),
                                0 until known; a write through another is SESSIONMOVED (prep.c) */
    uint64_t touch_mark;     /* a follower's: the round of PINGs it was last listed for
                                (keeper_t.touch_rounds, zab/follower.c) */
    hmap_node_t node;        /* in the tracker's table, by id */
};

typedef struct session_tracker session_tracker_t;

/* server_id goes in the top byte of every id; ids start from the wall clock
 * so a restarted server does not reuse the ids of its previous life. */
session_tracker_t *session_tracker_create(int server_id, int tick_ms, uint64_t wall_ms);
void session_tracker_destroy(session_tracker_t *st);

int64_t session_next_id(session_tracker_t *st);
/* The server id an id was made by: its top byte (ZooKeeper's
 * LeaderSessionTracker.getServerIdFromSessionId, read unsigned). */
int session_server_id(int64_t id);
/* Track a session (new, or restored). NULL if out of memory. */
session_t *session_add(session_tracker_t *st, int64_t id, int32_t timeout_ms, uint64_t now_ms);
session_t *session_find(const session_tracker_t *st, int64_t id);
/* Push the expiry out by the session's timeout. 0, or -1 if the session is
 * unknown or closing (then it must be treated as expired). */
int session_touch(session_tracker_t *st, int64_t id, uint64_t now_ms);
void session_remove(session_tracker_t *st, int64_t id);
size_t session_count(const session_tracker_t *st);

/* Visit sessions that are past their expiry at now_ms and not closing yet. */
void session_each_expired(session_tracker_t *st, uint64_t now_ms, void (*fn)(session_t *s, void *arg), void *arg);
void session_each(session_tracker_t *st, void (*fn)(session_t *s, void *arg), void *arg);

/* ZooKeeper's password for a session id: 16 bytes from java.util.Random
 * seeded with id ^ 0xB3415C00, so any server of an ensemble (Apache
 * ZooKeeper or kipper) derives the same password without storing it. */
void session_password(int64_t id, uint8_t out[SESSION_PASSWORD_LEN]);

#endif
