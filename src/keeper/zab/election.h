/* election.h -- ZooKeeper's fast leader election on the election port
 * (FastLeaderElection over QuorumCnxManager), wire-compatible with Apache
 * ZooKeeper 3.8 so a mixed ensemble can elect a leader.
 *
 * One TCP connection per pair of peers; when both dial, the connection
 * started by the peer with the larger id wins (ZooKeeper's rule). Each
 * connection opens with ZooKeeper's InitialMessage (protocol version,
 * server id, election address); then every message is an int length and a
 * notification {int state, long leader, long zxid, long electionEpoch,
 * long peerEpoch, int version 2, int config length, config bytes}.
 * Everything runs on the keeper's event loop: no blocking connects, reads
 * or writes, no host name lookups (base/resolver.h) but the start-up bind,
 * bounded message sizes, reconnects with backoff. */
#ifndef KIPPER_KEEPER_ELECTION_H
#define KIPPER_KEEPER_ELECTION_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/loop.h"
#include "base/resolver.h"
#include "keeper/server/keeper_config.h"
#include "ensemble_config.h"

typedef enum { PEER_LOOKING = 0, PEER_FOLLOWING = 1, PEER_LEADING = 2, PEER_OBSERVING = 3 } peer_state_t;

typedef struct {
    int64_t leader;           /* proposed or elected leader's server id */
    int64_t zxid;             /* that leader's last logged zxid */
    int64_t election_epoch;   /* the round (logical clock) */
    int64_t peer_epoch;       /* that leader's current epoch */
} vote_t;

typedef struct election election_t;

/* The election decided: this server is state (LEADING or FOLLOWING) under
 * vote->leader. Called once per election_look(). */
typedef void (*election_done_fn)(void *arg, peer_state_t state, const vote_t *vote);

/* A LOOKING notification carried config c, newer than ours: the election
 * has taken it (its voters count from now on) and restarts its round; the
 * keeper makes it its committed config (ZooKeeper's processReconfig). */
typedef void (*election_config_fn)(void *arg, const ensemble_config_t *c);

/* Listen on this server's election port (its member of ens, the active
 * configuration, with id == cfg->server_id) and keep connections to the
 * other members. NULL with err when the port cannot be bound or the server
 * has no member line. Its own host is resolved here, to bind (getaddrinfo
 * may block: create the election at start-up); the other members' names
 * are looked up by resolver, off the loop, each time they are dialled, so
 * a member whose name does not resolve yet is tried again with backoff.
 * resolver outlives the election. The state is LOOKING until the first
 * election_look decides. */
election_t *election_create(loop_t *loop, resolver_t *resolver, const keeper_config_t *cfg,
                            const ensemble_config_t *ens, election_config_fn on_config, void *arg, char *err,
                            size_t errlen);
/* A new active configuration (a reconfig committed): members added are
 * dialled when there is something to tell them, members gone no longer
 * vote, and notifications carry c from now on. A round in progress goes on
 * (the caller starts another when its role changes). */
void election_set_config(election_t *el, const ensemble_config_t *c);
/* The configuration of a reconfig this server has logged and not seen
 * committed (the keeper's last seen one), or NULL. While it is newer than
 * the active one, a vote decides only with a quorum of its voters too, and
 * its voters outside the active configuration take part (ZooKeeper's
 * lastSeenQuorumVerifier in FastLeaderElection); setting a newer active
 * configuration ends it. */
void election_set_next_config(election_t *el, const ensemble_config_t *next);
int64_t election_config_version(const election_t *el);
void election_destroy(election_t *el);

/* Start a round (LOOKING) with this server's last logged zxid and current
 * epoch; done is called when a leader is decided: a quorum of votes agrees
 * (then ZooKeeper's finalize wait of 200 ms for a better vote), or a quorum
 * of peers already FOLLOWING/LEADING names the same leader and that leader
 * itself says LEADING. done runs from a loop timer, never inside an
 * election call, so it may call election_look or election_destroy. The
 * decision itself already makes us answer LOOKING peers with that state and
 * vote, as ZooKeeper does. Calling election_look again starts a new round
 * (the logical clock moves on) and drops a decision not yet delivered. */
void election_look(election_t *el, int64_t last_zxid, int64_t current_epoch, election_done_fn done, void *arg);

/* Outside a round, answer peers' notifications with this state and vote
 * (so a restarted peer learns who leads). Call it once the quorum protocol
 * has settled the new epoch, with vote->peer_epoch set to it (ZooKeeper's
 * updateElectionVote): a late joiner compares leader and peer epoch. A
 * FOLLOWING/LEADING state during a round abandons the round (done is not
 * called). LOOKING (vote may be NULL) outside a round makes peers'
 * notifications wait for the next election_look, as ZooKeeper queues them;
 * during a round it does nothing. */
void election_set_state(election_t *el, peer_state_t state, const vote_t *vote);

/* The total order of votes (ZooKeeper's totalOrderPredicate): does
 * (id, zxid, epoch) beat (cur_id, cur_zxid, cur_epoch)? */
int election_vote_beats(int64_t id, int64_t zxid, int64_t epoch, int64_t cur_id, int64_t cur_zxid,
                        int64_t cur_epoch);

/* This server's state now (LOOKING until a round decides) and the logical
 * clock (the current or last round), for logs and the four-letter words. */
peer_state_t election_state(const election_t *el);
int64_t election_logical_clock(const election_t *el);
/* "LOOKING", "FOLLOWING", "LEADING", "OBSERVING" (ZooKeeper's ServerState names). */
const char *election_state_name(peer_state_t state);

/* ---- the wire format, exposed for the unit tests ---- */

/* Largest message a peer may send (QuorumCnxManager.PACKETMAXSIZE). */
#define ELECTION_MAX_MESSAGE (512 * 1024)

typedef struct {
    peer_state_t state;       /* the sender's state */
    vote_t vote;              /* the sender's vote (election_epoch = its round) */
    int32_t version;          /* message format: 0 for the 28- and 40-byte forms, 2 now */
    const uint8_t *config;    /* decoded: the sender's config text (version 2), a view into the
                                 message; NULL when none. Ignored by the encoder. */
    int32_t config_len;
} election_notification_t;

/* Append a notification in the current format (version 2 with the config
 * text) to out, without the length prefix. */
void election_encode_notification(buf_t *out, const election_notification_t *n, const char *config,
                                  size_t config_len);
/* Decode one message (the bytes after the length prefix) as ZooKeeper 3.8
 * does, accepting the 28- and 40-byte formats of older servers. 0, or -1
 * with *why set for a short, truncated or otherwise malformed message. */
int election_decode_notification(const uint8_t *msg, size_t len, election_notification_t *n,
                                 const char **why);
/* The first bytes of an accepted connection: ZooKeeper's InitialMessage
 * (protocol version V1 or V2, server id, "host:port" addresses) or, from
 * servers before 3.5, just the server id. 1 with *sid and *consumed, 0 when
 * more bytes are needed, -1 with *why for garbage. */
int election_parse_initial_message(const uint8_t *p, size_t len, int64_t *sid, size_t *consumed,
                                   const char **why);

#endif
