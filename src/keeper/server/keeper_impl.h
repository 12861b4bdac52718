/* keeper_impl.h -- the keeper's internal state, shared by the files of
 * keeper/server (server.c: sockets and sessions; request.c: request
 * handling; prep.c: requests to transactions; pipeline.c: requests between
 * prep and reply; persist.c: restore, snapshots, purging; fourlw.c:
 * four-letter words) and keeper/zab (peer.c, leader.c, follower.c: the
 * ensemble roles). The lower folders keeper/data and keeper/disk never
 * include it, and nothing outside src/keeper does (tests/check_layers.py). */
#ifndef KIPPER_KEEPER_IMPL_H
#define KIPPER_KEEPER_IMPL_H

#include <stdint.h>

#include "base/accept_backoff.h"
#include "base/buf.h"
#include "base/hashmap.h"
#include "base/loop.h"
#include "base/ratelimit.h"
#include "base/resolver.h"
#include "keeper/data/acl.h"
#include "keeper/zab/election.h"
#include "keeper/disk/history.h"
#include "changes.h"
#include "keeper_config.h"
#include "keeper/data/session.h"
#include "keeper/data/tree.h"
#include "keeper/data/txn.h"
#include "keeper/disk/txnlog.h"
#include "keeper/data/watch.h"

typedef struct keeper keeper_t;
typedef struct client_conn client_conn_t;
typedef struct leader leader_t;
typedef struct follower follower_t;

/* What this keeper is in its ensemble (STANDALONE without server.N lines).
 * FOLLOWING covers observing too: an observer (cfg.peer_type) learns from
 * the leader through follower.c, only without voting or acknowledging. */
typedef enum { ROLE_STANDALONE, ROLE_LOOKING, ROLE_FOLLOWING, ROLE_LEADING } keeper_role_t;

/* Latency and traffic counters (ZooKeeper's ServerStats / ServerCnxn stats). */
typedef struct {
    uint64_t packets_received, packets_sent;
    uint64_t latency_count, latency_total_ms;
    uint64_t latency_min_ms, latency_max_ms;   /* min is UINT64_MAX until set */
} keeper_stats_t;

/* A client's connection (ZooKeeper's ServerCnxn), served by server.c. */
struct client_conn {
    keeper_t *keeper;
    int fd;
    char ip[64];
    int port;
    char who[72];            /* "ip:port", for log lines */
    buf_t in;                /* bytes read, not yet parsed */
    buf_t out;               /* replies not yet written */
    int connected;           /* ConnectRequest answered: the session is live */
    int connecting;          /* its new session's txn is on the way to the log */
    int with_read_only;      /* its ConnectRequest carried the readOnly byte */
    int closing;             /* close once out is flushed; read nothing more */
    int read_paused;         /* backpressure: over an outstanding bound (server.c) */
    int want_write;          /* LOOP_WRITABLE is being watched */
    int64_t session_id;
    int32_t session_timeout;
    auth_set_t auth;         /* ("ip", address) plus what addAuth proved */
    uint32_t unsent_replies; /* replies in out, counted for the outstanding bound */
    uint32_t in_flight;      /* its requests queued in the pipeline (a read may not overtake them) */
    uint32_t outstanding;    /* its requests in the pipeline, counted for the bounds (pipeline_charge) */
    size_t outstanding_bytes; /* and their charges */
    uint64_t walk_mark;      /* follower: reply walk that found it blocked */
    /* for cons / stat */
    uint64_t established_wall_ms;
    int64_t last_cxid, last_zxid;
    const char *last_op;
    uint64_t last_response_wall_ms, last_latency_ms;
    keeper_stats_t stats;
    int dead;                /* closed; freed by the next before-sleep pass */
    int pending_write;       /* on keeper.pending_writes */
    client_conn_t *next_pending;
    client_conn_t *prev, *next; /* keeper.clients, or keeper.dead_clients once dead */
};

/* A request in the pipeline: prepared (writes) and waiting until its
 * transaction is durable, or (reads) waiting behind writes that are. */
typedef enum {
    PENDING_READ,            /* answer when reached */
    PENDING_WRITE,           /* commit and reply */
    PENDING_CLOSE_SESSION,   /* a client's closeSession: commit, reply, hang up */
    PENDING_CONNECT,         /* createSession for a new connection: commit, ConnectResponse */
    PENDING_SYSTEM,          /* the keeper's own txn (session expiry, container sweep) */
    PENDING_REMOTE,          /* leader: a follower's client request; commit, no reply here */
    PENDING_LEARNER_SYNC,    /* leader: a follower's sync; answer it when reached */
    PENDING_FORWARDED,       /* follower: sent to the leader; done when its commit (or SYNC) arrives */
    PENDING_REVALIDATE,      /* follower: a reopened session asked of the leader; done when it answers */
} pending_kind_t;

typedef struct pending pending_t;
struct pending {
    pending_kind_t kind;
    client_conn_t *client;   /* NULL once the connection is gone */
    int32_t xid, type;
    int has_txn;
    txn_header_t hdr;
    txn_t txn;
    uint8_t *frame;          /* PENDING_READ: a copy of the request */
    size_t frame_len;
    int32_t timeout;         /* PENDING_CONNECT, PENDING_REVALIDATE */
    int64_t learner_sid;     /* PENDING_LEARNER_SYNC */
    int done;                /* PENDING_FORWARDED, PENDING_REVALIDATE: answered by the leader */
    int valid;               /* PENDING_REVALIDATE: the leader's answer */
    txn_result_t result;     /* PENDING_FORWARDED: what applying it gave */
    int has_result;
    int32_t err_override;    /* PENDING_FORWARDED: answer this error whatever the leader made of it (local_sessions.c) */
    uint64_t started_ms;
    size_t charge;           /* bytes counted against the outstanding bounds; 0: not counted */
    pending_t *next;
    pending_t *session_next; /* follower: its session's next entry waiting for a commit (pipeline.c) */
};

struct keeper {
    loop_t *loop;
    keeper_config_t cfg;
    int listen_fd;
    int port;
    accept_backoff_t client_accept; /* the client port's listener, paused when descriptors run out */
    ratelimit_t refusal_log;       /* lines about connections refused (maxClientCnxns) */
    tree_t *tree;
    watch_manager_t *watches;
    session_tracker_t *sessions;
    int64_t next_zxid;             /* zxid the next transaction gets */
    change_list_t changes;         /* prepared, not applied yet (changes.h) */
    client_conn_t *clients;
    size_t nclients;
    size_t outstanding;            /* clients' requests in the pipeline (globalOutstandingLimit) */
    size_t outstanding_bytes;      /* their charges, until they leave it, closed connections' too */
    client_conn_t *pending_writes; /* connections with output to flush */
    client_conn_t *dead_clients;   /* closed, waiting to be freed */
    keeper_stats_t stats;
    uint64_t started_wall_ms;
    loop_timer_t *tick_timer;
    loop_timer_t *container_timer;
    loop_timer_t *purge_timer;
    int stopping;
    int exit_status;               /* keeper_main's: 1 once the log failed in an ensemble */
    /* durability */
    txnlog_t *txnlog;
    char snap_dir[600];            /* dataDir/version-2 */
    char txnlog_dir[600];          /* dataLogDir/version-2 */
    pending_t *pending_head, *pending_tail;
    size_t npending;
    size_t txns_since_snapshot;
    size_t snapshot_threshold;     /* snapCount/2 + a random part, as ZooKeeper */
    int snapshot_pid;              /* the forked child writing a snapshot, or 0 */
    int64_t snapshot_zxid;
    uint64_t txnlog_failures;      /* write batches the disk refused */
    /* the ensemble (quorum.c, peer.c, leader.c, follower.c) */
    keeper_role_t role;
    int serving;                   /* clients are accepted */
    int read_only;                 /* looking, and serving read-only clients (readonly.c) */
    loop_timer_t *read_only_timer; /* the grace period before read_only */
    election_t *election;
    resolver_t *resolver;          /* host names looked up off the loop: the members the election and a
                                      follower dial, this server's own for its quorum port (zab/peer.c) */
    vote_t vote;                   /* the last election's outcome */
    int64_t accepted_epoch, current_epoch;
    int64_t last_logged_zxid;      /* appended to the log, applied or not */
    history_t history;             /* recent logged txns, for DIFF */
    pending_t *unapplied_head, *unapplied_tail;   /* logged, not applied: proposals left by a leader change */
    leader_t *leader;
    follower_t *follower;
    uint64_t syncs_sent[3];        /* leader: DIFF, TRUNC, SNAP syncs done (mntr) */
    uint64_t reply_walks;          /* follower: numbers each pass over the pipeline (client_conn.walk_mark) */
    uint64_t touch_rounds;         /* follower: numbers each round of PINGs (session_t.touch_mark) */
    hmap_t awaiting_commit;        /* follower: session id -> its entries a commit will answer (pipeline.c) */
    int replies_held;              /* follower: inside pipeline_follower_hold */
    int replies_owed;              /* follower: applied while held, not answered yet */
    /* dynamic reconfiguration (membership_files.c; ZooKeeper's quorumVerifier and lastSeenQuorumVerifier) */
    ensemble_config_t config;      /* committed and active membership */
    ensemble_config_t last_seen;   /* newest proposed one; equal to config when no reconfig is pending */
    int reconfig_enabled;          /* reconfigEnabled */
};

/* server.c */
/* Replies are built straight into c->out (reply_begin/reply_finish);
 * client_queued() then counts the reply and schedules the flush. */
void client_queued(client_conn_t *c);
void client_close(client_conn_t *c, const char *why);
void client_close_after_flush(client_conn_t *c);
client_conn_t *keeper_client_of_session(keeper_t *k, int64_t session_id);
/* Does this keeper expire sessions and sweep containers (standalone, or
 * an established leader)? */
int keeper_owns_sessions(const keeper_t *k);
void keeper_stats_record(keeper_t *k, client_conn_t *c, uint64_t latency_ms);

/* request.c: one complete request frame from a connected client. */
void request_handle(keeper_t *k, client_conn_t *c, const uint8_t *frame, size_t len);
int request_is_write(int32_t type);
int request_is_read(int32_t type);
void request_answer_read(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, jute_in_t *in);
/* Queue a request this keeper answers itself behind its connection's
 * requests in the pipeline (answered through request_answer_read). */
void request_queue_behind(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, const uint8_t *frame, size_t len);
void request_reply_write(client_conn_t *c, int32_t xid, int32_t type, const txn_header_t *hdr, const txn_result_t *r);
/* Start a reply frame: length placeholder + ReplyHeader. Returns the offset
 * of the length, to finish with reply_finish(). */
size_t reply_begin(buf_t *b, int32_t xid, int64_t zxid, int32_t err);
void reply_finish(buf_t *b, size_t start);
/* pipeline.c: requests between prep and reply. */
pending_t *pipeline_new(keeper_t *k, pending_kind_t kind, client_conn_t *c, int32_t xid, int32_t type);
void pipeline_keep_frame(pending_t *p, const uint8_t *frame, size_t len);
/* p is a request of its client of frame_len bytes: count it against the
 * connection's and the keeper's outstanding bounds until it leaves the
 * pipeline (answered, refused or abandoned). */
void pipeline_charge(keeper_t *k, pending_t *p, size_t frame_len);
/* Queue p; a prepared txn (p->has_txn set by prep, see pipeline_new) goes to the log. */
void pipeline_submit(keeper_t *k, pending_t *p);
int pipeline_idle(const keeper_t *k);
/* The log's report: commit and answer what is durable, refuse what failed. */
void pipeline_on_durable(void *arg, int64_t durable_zxid, int err, int64_t failed_zxid);
/* A connection closed: its queued requests lose their reply target. */
void pipeline_forget_client(keeper_t *k, client_conn_t *c);
/* Apply committed transactions up to zxid, answering their requests. */
void pipeline_commit_upto(keeper_t *k, int64_t zxid);
/* Follower: a committed txn was applied; answer the local request it belongs to. */
void pipeline_follower_applied(keeper_t *k, const txn_header_t *hdr, const txn_result_t *result);
/* Follower: between hold and release (around one read of the leader's
 * packets) the requests of applied txns are answered in one pass over the
 * pipeline at release, not one pass each; a closeSession's answer still
 * goes at once. send_owed sends what is owed now (before the role ends). */
void pipeline_follower_hold(keeper_t *k);
void pipeline_follower_release(keeper_t *k);
void pipeline_follower_send_owed(keeper_t *k);
/* Follower: the leader answered the oldest forwarded sync. */
void pipeline_follower_synced(keeper_t *k);
/* Follower: the leader answered a REVALIDATE of session_id; -1 if no
 * connection here waits for that answer. */
int pipeline_follower_revalidated(keeper_t *k, int64_t session_id, int valid);
/* Follower: queue a forwarded request or a read behind one. */
void pipeline_follower_queue(keeper_t *k, pending_t *p);
void pipeline_free_entry(pending_t *p);
/* Drop every queued request (the role changed); txns logged but not applied
 * move to k->unapplied. */
void pipeline_abandon(keeper_t *k);
/* Free what indexes the queued requests, once they are freed or abandoned. */
void pipeline_free_index(keeper_t *k);
/* Apply a durable transaction: tree, sessions, change records. */
void keeper_commit(keeper_t *k, const txn_header_t *hdr, const txn_t *txn, txn_result_t *result);
/* Expire a session through a closeSession transaction. */
void keeper_close_session(keeper_t *k, int64_t session_id, const char *why);
/* server.c: the new session of c is durable; answer its ConnectRequest. */
void keeper_finish_connect(keeper_t *k, client_conn_t *c, int64_t session_id, int32_t timeout, int ok);
/* server.c: the leader answered whether the session c reopens is valid
 * (follower); answer its ConnectRequest. */
void keeper_finish_reopen(keeper_t *k, client_conn_t *c, int64_t session_id, int32_t timeout, int valid);
/* server.c: give c the session s (closing a connection that held it). */
void keeper_attach_session(client_conn_t *c, session_t *s, int32_t timeout);
/* server.c: the ConnectResponse; readOnly (for clients that sent the byte)
 * says whether this keeper is read-only. */
void keeper_send_connect_response(client_conn_t *c, int32_t timeout, int64_t session_id, int valid);

/* persist.c: restore at start, snapshots, purging. */
int persist_recover(keeper_t *k, char *err, size_t errlen);
int persist_open_log(keeper_t *k, char *err, size_t errlen);
void persist_after_append(keeper_t *k);   /* count txns; start a snapshot when due */
void persist_tick(keeper_t *k);           /* reap a finished snapshot child */
void persist_purge(keeper_t *k);          /* autopurge: old snapshots and logs */
void persist_shutdown(keeper_t *k);       /* wait for a snapshot still being written */

/* membership_files.c: the membership's files and /zookeeper/config. */
/* At start, after recovery: k->config and k->last_seen from cfg (zoo.cfg, its
 * dynamicConfigFile, zoo.cfg.dynamic.next), last_seen from the log's reconfig
 * when that is newer; zoo.cfg.bak as ZooKeeper writes it; /zookeeper/config's
 * content (the committed configuration, as ZooKeeper sets it at start). */
void keeper_ensemble_start(keeper_t *k);
/* committed=0: zoo.cfg.dynamic.next (a proposal, with its version line);
 * committed=1: zoo.cfg.dynamic.<hex version>, zoo.cfg pointed at it without
 * its server.N lines, the next file removed once nothing newer is proposed.
 * committed=1 also sets /zookeeper/config from c (as ZooKeeper does on every
 * activation). Nothing when reconfigEnabled
 * is off. Written with a rename, no fsync (the log holds the reconfig; see
 * the file's comment). 0 or -1 (logged). */
int keeper_config_store(keeper_t *k, const ensemble_config_t *c, int committed);
/* /zookeeper/config := c's text, version -1, mzxid c->version, as ZooKeeper's
 * initConfigInZKDatabase (at start, and after a learner's sync). */
int keeper_config_node_set(keeper_t *k, const ensemble_config_t *c, int64_t mtime);
/* The configuration a reconfig txn carries, version = its zxid. 0 or -1. */
int keeper_config_from_txn(const txn_header_t *hdr, const txn_t *txn, ensemble_config_t *out);

/* Who a write comes from: a local connection, or a client of another
 * keeper whose request the leader received (session and identities travel
 * with it). who names it in log lines. */
typedef struct {
    int64_t session_id;
    const auth_set_t *auth;
    const char *who;
    int64_t server_id;   /* the member the client is connected to */
} prep_origin_t;

/* prep.c: turn a write request into a transaction (ZooKeeper's
 * PrepRequestProcessor). Always yields a txn: a failed request becomes an
 * OP_ERROR txn (or a multi of errors) that still takes a zxid. */
void prep_write(keeper_t *k, const prep_origin_t *origin, int32_t type, int32_t cxid, jute_in_t *in,
                txn_header_t *hdr, txn_t *txn);
void prep_create_session(keeper_t *k, int64_t session_id, int32_t timeout, txn_header_t *hdr, txn_t *txn);
/* Does this write (type and record) create a session's ephemeral node: a
 * create or create2 with an ephemeral mode, or a multi with one? A
 * malformed record says no (prep answers it). */
int prep_makes_ephemeral(int32_t type, const uint8_t *body, size_t len);
void prep_close_session(keeper_t *k, int64_t session_id, txn_header_t *hdr, txn_t *txn);
void prep_delete_container(keeper_t *k, const char *path, txn_header_t *hdr, txn_t *txn);
/* Forget change records at or below an applied zxid. */
void prep_applied(keeper_t *k, int64_t zxid);
/* A log write failed from zxid on: forget its change records and reuse
 * the zxids, so the log stays gap-free. */
void prep_rollback(keeper_t *k, int64_t zxid);

/* peer.c: the ensemble role. */
int peer_start(keeper_t *k, char *err, size_t errlen);   /* standalone, or start looking */
void peer_look(keeper_t *k, const char *why);            /* back to LOOKING */
void peer_stop(keeper_t *k);
void peer_init_history(keeper_t *k);                     /* before recovery fills it */
void peer_apply_unapplied(keeper_t *k);                  /* apply what k->unapplied holds */
void peer_drop_unapplied(keeper_t *k);
int peer_quorum_size(const keeper_t *k);   /* a majority of the participants */
int peer_is_voter(const keeper_t *k, int64_t sid);   /* a participant, not an observer */
/* A server's line in the active config (else in the last seen one). */
const ensemble_member_t *peer_config(const keeper_t *k, int64_t sid);
/* A reconfig committed: make next the active config (k->config, its
 * zoo.cfg.dynamic.<version> file, /zookeeper/config, the election's voters).
 * designated is the leader the reconfig names (COMMITANDACTIVATE's), -1 for
 * none. 0, or what this keeper must do (from a safe point) with why:
 * PEER_HAND_OFF: lead or follow the designated leader at once, without an
 * election (peer_hand_off); PEER_ELECT: go LOOKING (peer_look): a leader
 * removed or without a vote, a participant<->observer change, a follower
 * whose leader lost its vote. A removed follower follows on without a vote,
 * as ZooKeeper's does. */
enum { PEER_ELECT = 1, PEER_HAND_OFF = 2 };
int peer_activate(keeper_t *k, const ensemble_config_t *next, int64_t designated, char *why, size_t whylen);
/* Leave the role and lead (leader is this server) or follow leader. */
void peer_hand_off(keeper_t *k, int64_t leader, const char *why);
/* What peer_activate asked for: peer_hand_off to leader (PEER_HAND_OFF) or peer_look. */
void peer_leave(keeper_t *k, int mode, int64_t leader, const char *why);
/* A serialized txn (TxnHeader + record, as a PROPOSAL carries it): 1 with
 * *out when it is a reconfig (its SetDataTxn's config, version = its zxid),
 * 0 when it is another txn, -1 for a reconfig whose config does not parse. */
int peer_reconfig_of(const uint8_t *bytes, size_t len, ensemble_config_t *out);

/* leader.c */
int leader_start(keeper_t *k, char *err, size_t errlen);
void leader_stop(keeper_t *k);
void leader_propose(keeper_t *k, const txn_header_t *hdr);
void leader_on_durable(keeper_t *k, int64_t durable_zxid);
void leader_answer_sync(keeper_t *k, int64_t learner_sid);
/* Learners connected (followers and observers) and those synced of each kind. */
void leader_counts(const keeper_t *k, int *learners, int *synced_followers, int *synced_observers);
/* 1 when a majority of next's voters are connected and synced to this
 * leader, itself included when it is one of them (ZooKeeper's check before
 * a reconfig: a new config must be able to commit). 0 otherwise, and when
 * this keeper does not lead. */
int leader_quorum_synced(keeper_t *k, const ensemble_config_t *next);

/* follower.c */
int follower_start(keeper_t *k, int64_t leader_sid, char *err, size_t errlen);
void follower_stop(keeper_t *k);
void follower_on_durable(keeper_t *k, int64_t durable_zxid);
/* Forward a client's write (or sync, closeSession) to the leader; returns
 * its entry in the pipeline. */
pending_t *follower_forward(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, const uint8_t *body, size_t len);
void follower_forward_create_session(keeper_t *k, int64_t session_id, int32_t timeout);
/* Send what was forwarded since the loop last slept (server.c's before-sleep hook). */
void follower_before_sleep(keeper_t *k);
/* Send the proposals and commits queued for the learners since the loop
 * last slept (the same hook). */
void leader_before_sleep(keeper_t *k);
/* c reopens session_id here: ask the leader whether it is valid (and make
 * this keeper its owner there) before answering c's ConnectRequest. */
void follower_revalidate(keeper_t *k, client_conn_t *c, int64_t session_id, int32_t timeout);
void follower_touch(keeper_t *k, int64_t session_id);

/* local_sessions.c: ZooKeeper's local sessions (localSessionsEnabled, and
 * read-only mode's sessions): known to this keeper alone, never logged. */
/* A new local session for c; its ConnectResponse is queued. NULL (and c
 * closed) when out of memory. */
session_t *local_session_open(keeper_t *k, client_conn_t *c, int32_t timeout);
/* Answer c's closeSession (xid) of its local session, end the session, hang up. */
void local_session_close(keeper_t *k, client_conn_t *c, int32_t xid);
/* Expire the local sessions past their timeout (every role: they are this keeper's). */
void local_sessions_expire(keeper_t *k, uint64_t now_ms);
/* Forget every local session and close its connection (the role changed). */
void local_sessions_forget(keeper_t *k);
size_t local_sessions_count(keeper_t *k);
/* What a request of a local session needs (ZooKeeper's checkUpgradeSession). */
typedef enum { LOCAL_AS_USUAL, LOCAL_CLOSE, LOCAL_UPGRADE, LOCAL_REFUSE_EPHEMERAL } local_action_t;
local_action_t local_session_action(int32_t type, int makes_ephemeral, int upgrading_enabled);
/* A request of c's local session s: 1 if taken care of here (answered,
 * queued or forwarded); 0 if it goes on as any request (after an upgrade,
 * when it needed one). */
int local_session_request(keeper_t *k, client_conn_t *c, session_t *s, int32_t xid, int32_t type,
                          const uint8_t *frame, size_t len);

/* readonly.c: ZooKeeper's read-only mode (readonlymode.enabled). A keeper
 * that is LOOKING for longer than the grace period serves clients that allow
 * read-only from its last state, until it joins a quorum again. */
void readonly_on_looking(keeper_t *k);     /* the keeper started looking */
void readonly_stop(keeper_t *k);           /* it leaves LOOKING, or stops */
/* The grace period: ZooKeeper's max(2000, tickTime). */
uint64_t readonly_grace_ms(int tick_ms);
/* Does read-only mode refuse this request type with NOTREADONLY? A
 * closeSession is refused unless its session is local. */
int readonly_refuses(int32_t type, int local_session);
/* A ConnectRequest while read-only: sessions made here are local. */
void readonly_connect(keeper_t *k, client_conn_t *c, int64_t session_id, int passwd_ok, int32_t timeout);
/* A request of a connected client while read-only. */
void readonly_request(keeper_t *k, client_conn_t *c, int32_t xid, int32_t type, jute_in_t *in);

/* fourlw.c: if the first four bytes of a connection are a known command,
 * write its answer into out and return 1; else 0. */
int fourlw_run(keeper_t *k, client_conn_t *c, const uint8_t word[4], buf_t *out);

#endif
