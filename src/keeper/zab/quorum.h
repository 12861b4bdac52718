/* quorum.h -- what keepers of an ensemble say to each other on the quorum
 * port (ZooKeeper's QuorumPacket and its packet types), and the epoch files.
 *
 * A QuorumPacket is the jute record {int type, long zxid, buffer data,
 * vector<Id> authinfo} written back to back on the stream with no outer
 * length, as ZooKeeper's Learner and LearnerHandler write it. */
#ifndef KIPPER_KEEPER_QUORUM_H
#define KIPPER_KEEPER_QUORUM_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "keeper/data/acl.h"
#include "keeper/server/keeper_config.h"
#include "ensemble_config.h"

enum {
    QP_REQUEST = 1,
    QP_PROPOSAL = 2,
    QP_ACK = 3,
    QP_COMMIT = 4,
    QP_PING = 5,
    QP_REVALIDATE = 6,
    QP_SYNC = 7,
    QP_INFORM = 8,
    QP_COMMITANDACTIVATE = 9,   /* a reconfig's COMMIT: data = the designated leader's id (8 bytes) */
    QP_NEWLEADER = 10,
    QP_FOLLOWERINFO = 11,
    QP_UPTODATE = 12,
    QP_DIFF = 13,
    QP_TRUNC = 14,
    QP_SNAP = 15,
    QP_OBSERVERINFO = 16,
    QP_LEADERINFO = 17,
    QP_ACKEPOCH = 18,
    QP_INFORMANDACTIVATE = 19,  /* an observer's INFORM of a reconfig: designated leader, then the txn */
};

#define QUORUM_PROTOCOL_VERSION 0x10000

/* The largest data a packet may carry: a SNAP carries the whole tree. */
#define QUORUM_MAX_DATA (512u << 20)

typedef struct {
    int32_t type;
    int64_t zxid;
    const uint8_t *data;   /* view into the stream buffer; NULL for null data */
    int32_t data_len;      /* -1 for null */
    auth_set_t auth;       /* owned; empty unless a REQUEST carries the client's identities */
    int auth_null;         /* the authinfo vector was null (count -1), as ZooKeeper sends it on every
                              packet but a client's REQUEST */
} quorum_packet_t;

/* Parse one packet from the front of in. Returns the bytes it used, 0 if
 * more bytes are needed, -1 if malformed (the connection must be dropped).
 * On success the caller frees p->auth with auth_set_free. */
long quorum_packet_parse(const uint8_t *in, size_t len, quorum_packet_t *p);

/* Append one packet. auth NULL writes a null authinfo vector (count -1), as
 * ZooKeeper's QuorumPacket does for every packet built without one (all but
 * a client's REQUEST); an empty set writes count 0. */
void quorum_packet_write(buf_t *out, int32_t type, int64_t zxid, const void *data, int32_t data_len,
                         const auth_set_t *auth);

const char *quorum_packet_name(int32_t type);

/* The last epoch a leader may start: ZooKeeper reads a zxid as a signed
 * long whose high half is the epoch, so 0x7fffffff is the last epoch whose
 * zxids are positive. */
#define QUORUM_EPOCH_MAX 0x7fffffffLL

/* May a learner that reports accepted_epoch (the high half of its
 * FOLLOWERINFO's zxid) take part in choosing the next epoch, which must be
 * larger and still an epoch? A forged 0xffffffff would otherwise make the
 * next epoch 2^32: zxid 0, an acceptedEpoch file no leader can follow. */
static inline int quorum_epoch_can_follow(int64_t accepted_epoch)
{
    return accepted_epoch >= 0 && accepted_epoch < QUORUM_EPOCH_MAX;
}

/* ZooKeeper's StateSummary.isMoreRecentThan: is (epoch, zxid) - a current
 * epoch and the last logged zxid - more recent than (than_epoch, than_zxid)? */
static inline int quorum_summary_more_recent(int64_t epoch, int64_t zxid, int64_t than_epoch, int64_t than_zxid)
{
    return epoch > than_epoch || (epoch == than_epoch && zxid > than_zxid);
}

static inline int64_t zxid_make(int64_t epoch, int64_t counter) { return (int64_t)((uint64_t)epoch << 32 | (uint64_t)(counter & 0xffffffffLL)); }
static inline int64_t zxid_epoch(int64_t zxid) { return (int64_t)((uint64_t)zxid >> 32); }

/* Quorum counting (ZooKeeper's QuorumMaj): only participants count, in
 * the election, in the new epoch's agreement, in acknowledging proposals
 * and in the leader's liveness; observers are left out of all of them. */
int quorum_voter_count(const keeper_peer_t *peers, int npeers);
/* How many voters make a quorum: more than half. */
static inline int quorum_majority(int voters) { return voters / 2 + 1; }
/* The highest zxid at least `majority` voters hold durably, given each
 * voter's durable zxid in acks (n of them, reordered here); -1 when fewer
 * than `majority` voters are counted. */
int64_t quorum_commit_point(int64_t *acks, int n, int majority);

/* Dynamic reconfiguration (ZooKeeper's QuorumMaj per configuration and a
 * Proposal's qvAcksetPairs). An acknowledgement: server sid holds every
 * proposal up to zxid durably (a follower ACKs in order). */
typedef struct {
    int64_t sid;
    int64_t zxid;
} quorum_ack_t;
/* The highest zxid a majority of c's voters hold, counting only the acks of
 * c's participants (a learner outside c, an observer: nothing); -1 when
 * fewer than a majority of them have acknowledged anything. */
int64_t quorum_config_commit_point(const ensemble_config_t *c, const quorum_ack_t *acks, int n);
/* The commit point while a reconfig (to next, proposed at reconfig_zxid) is
 * pending: a proposal before it needs a majority of cur's voters, the
 * reconfig and every proposal after it a majority of cur's voters AND one of
 * next's. next NULL: none pending, cur's majority alone. -1: nothing. */
int64_t quorum_reconfig_commit_point(const ensemble_config_t *cur, const ensemble_config_t *next, int64_t reconfig_zxid,
                                     const quorum_ack_t *acks, int n);
/* Do the n servers in sids include a majority of c's voters? */
int quorum_config_has_majority(const ensemble_config_t *c, const int64_t *sids, int n);
/* Is sid a participant of c? */
int quorum_config_is_voter(const ensemble_config_t *c, int64_t sid);
/* Who leads once the reconfig to next at reconfig_zxid commits (ZooKeeper's
 * Leader.getDesignatedLeader): the leader itself while it is a voter of
 * next; else the voter of next with the smallest id among those that
 * acknowledged the reconfig. -1 when none did (cannot happen once next's
 * majority acknowledged it). */
int64_t quorum_designated_leader(const ensemble_config_t *next, int64_t leader_sid, int64_t reconfig_zxid,
                                 const quorum_ack_t *acks, int n);

/* What a member does when a reconfig's config next (replacing prev)
 * becomes active, as ZooKeeper's QuorumPeer.processReconfig decides it.
 * role: 'L' leading, 'F' following (observing too), else neither; leader:
 * the one it follows (itself when leading); designated: the reconfig's
 * designated leader, -1 when none was named (NEWLEADER's config, a COMMIT
 * in a sync). QUORUM_HAND_OFF: lead or follow `designated` at once, without
 * an election (updateVote); QUORUM_ELECT: go LOOKING (a leader removed or
 * without a vote, a participant<->observer change, a follower's leader
 * without a vote or, with no designated leader, at another quorum
 * address); QUORUM_STAY: nothing changes (a removed follower follows
 * on without a vote, as ZooKeeper 3.8's does). */
enum { QUORUM_STAY = 0, QUORUM_ELECT = 1, QUORUM_HAND_OFF = 2 };
int quorum_reconfig_action(char role, int64_t self, int64_t leader, const ensemble_config_t *prev,
                           const ensemble_config_t *next, int64_t designated);

/* Where a SNAP's snapshot stream ends. A leader sends the SNAP packet,
 * then the snapshot (sessions, ACL cache, nodes up to the path "/") with no
 * length in front, then the string "BenWasHere". The scan resumes where it
 * stopped as more bytes arrive: 1 when the signature has been read (the
 * snapshot is the first body_len bytes, the whole thing pos bytes), 0 for
 * more bytes, -1 if the stream cannot be a snapshot. */
typedef struct {
    int phase;
    int32_t outer, inner;
    size_t pos;
    size_t body_len;
} snap_scan_t;
int snap_scan(snap_scan_t *s, const uint8_t *p, size_t len);

/* acceptedEpoch and currentEpoch: one decimal number each, replaced
 * atomically, in dataDir/version-2 (snap_dir) where ZooKeeper keeps them, so
 * that a member moves between ZooKeeper and kipper on the same folder
 * (docs/migrating-from-zookeeper.md). Earlier kipper kept them in dataDir
 * itself (legacy_dir): read falls back there when snap_dir has none, write
 * removes the old file once the new one is in place. read returns the value,
 * or `missing` if neither file exists; -2 if one exists but is not a number. */
int64_t quorum_read_epoch(const char *snap_dir, const char *legacy_dir, const char *name, int64_t missing);
int quorum_write_epoch(const char *snap_dir, const char *legacy_dir, const char *name, int64_t epoch);

#endif
