"""The order of the packets around NEWLEADER, held to what Apache ZooKeeper 3.8.0's own
learner and leader require of a peer. A scripted peer speaks ZooKeeper's quorum
protocol to one kipper member:

- as a leader, to a kipper follower: a PING sent right after NEWLEADER, while the
  follower's ACK of NEWLEADER waits for a proposal to reach its disk, is not answered
  before that ACK (ZooKeeper's LearnerHandler drops a learner whose first packet after
  NEWLEADER is anything else; its Learner ignores PINGs until UPTODATE);
- as a follower, to a kipper leader: the transactions committed while it has not
  acknowledged NEWLEADER reach it as COMMITs after UPTODATE, in order, never between
  NEWLEADER and UPTODATE (ZooKeeper 3.8.0's Learner fails on a COMMIT there once it
  has logged the sync's proposals, and syncs again).

Both were seen in test_keeper_mixed.py as a second sync right after a SNAP."""
import socket
import struct

import pytest

from ensemble import Ensemble, close_client
from harness import wait_until
from quorum_wire import (ACK, ACKEPOCH, COMMIT, DIFF, FOLLOWERINFO, FOLLOWING, LEADERINFO, LEADING, NEWLEADER,
                         PING, PROPOSAL, PROTOCOL_VERSION, UPTODATE, PacketReader, initial_message, notification,
                         packet)

pytestmark = pytest.mark.kipper_only(reason="the packet order of kipper's own follower and leader")


def create_txn(zxid, path):
    """A PROPOSAL's data: TxnHeader {clientId, cxid, zxid, time, type create} and a
    CreateTxn {path, data, acl world:anyone ALL, ephemeral false, parentCVersion 1}."""
    def string(s):
        return struct.pack(">i", len(s)) + s
    header = struct.pack(">qiqqi", 0, 1, zxid, 0, 1)
    acl = struct.pack(">ii", 1, 31) + string(b"world") + string(b"anyone")
    return header + string(path) + string(b"x") + acl + struct.pack(">?i", False, 1)


def test_follower_acks_newleader_before_it_answers_a_ping():
    """Server 1 alone, told by forged votes that server 3 leads (server 2 following it),
    follows the scripted server 3: LEADERINFO, then a DIFF with one proposal, NEWLEADER
    and a PING in one write. The proposal must reach server 1's disk before it may ACK
    NEWLEADER, so the PING is read first; the first packet server 1 sends after its
    ACKEPOCH is still the ACK of NEWLEADER, and the PING is not answered before
    UPTODATE; once committed, the proposal is applied."""
    e = Ensemble(3)
    socks = []
    try:
        m1, m2, m3 = e.member(1), e.member(2), e.member(3)
        lsock = socket.socket()
        socks.append(lsock)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("127.0.0.1", m3.quorum_port))
        lsock.listen(1)
        e.start(m1, wait=False)
        for sid, state in ((3, LEADING), (2, FOLLOWING)):
            el = wait_until(lambda: socket.create_connection(("127.0.0.1", m1.election_port), timeout=2),
                            timeout=20, what="server 1's election port")
            socks.append(el)
            peer = e.member(sid)
            el.sendall(initial_message(sid, peer.election_port) + notification(state, 3, 0, 1, 0))
        lsock.settimeout(20)
        q, _ = lsock.accept()
        socks.append(q)
        q.settimeout(20)
        r = PacketReader(q)
        ptype, _, _ = r.next()
        assert ptype == FOLLOWERINFO, "server 1 began with packet type %d" % ptype
        epoch = 1
        newleader_zxid = epoch << 32
        q.sendall(packet(LEADERINFO, newleader_zxid, struct.pack(">i", PROTOCOL_VERSION)))
        ptype, _, _ = r.next()
        assert ptype == ACKEPOCH, "server 1 answered LEADERINFO with packet type %d" % ptype
        zxid = newleader_zxid | 1
        q.sendall(packet(DIFF, zxid) + packet(PROPOSAL, zxid, create_txn(zxid, b"/sync-order")) +
                  packet(NEWLEADER, newleader_zxid) + packet(PING, zxid))
        ptype, got, _ = r.next()
        assert (ptype, got) == (ACK, newleader_zxid), \
            "server 1's first packet after NEWLEADER was type %d zxid %#x, not the ACK of NEWLEADER" % (ptype, got)
        q.sendall(packet(UPTODATE, -1) + packet(COMMIT, zxid) + packet(PING, zxid))
        seen = []
        while PING not in seen:
            ptype, got, _ = r.next()
            seen.append(ptype)
        assert seen.count(PING) == 1, "server 1 answered %d PINGs for the one sent after UPTODATE: %s" % (
            seen.count(PING), seen)
        assert ACK in seen, "server 1 never acknowledged the proposal or UPTODATE: %s" % seen
        wait_until(lambda: e.zxid(m1) == zxid, timeout=20, what="server 1 to apply the committed proposal")
    finally:
        for s in socks:
            s.close()
        e.close()
        e.cleanup()


def test_leader_sends_commits_held_for_a_syncing_follower_after_uptodate():
    """Servers 1 and 2 form the ensemble; the scripted server 3 joins the leader, is
    synced by DIFF and does not acknowledge NEWLEADER while a client commits ten creates
    through the other two. Between NEWLEADER and UPTODATE it gets their PROPOSALs and
    no COMMIT; after UPTODATE a COMMIT for each, in order."""
    e = Ensemble(3)
    q = None
    try:
        m1, m2, m3 = e.member(1), e.member(2), e.member(3)
        e.start(m1, wait=False)
        e.start(m2, wait=False)
        e.wait_ready(timeout=60)
        leader = e.leader()
        last = e.zxid(leader)
        epoch = last >> 32
        q = socket.create_connection(("127.0.0.1", leader.quorum_port), timeout=20)
        info = struct.pack(">qiq", 3, PROTOCOL_VERSION, 0)
        q.sendall(packet(FOLLOWERINFO, epoch << 32, info))
        r = PacketReader(q)
        ptype, leaderinfo_zxid, _ = r.next()
        assert ptype == LEADERINFO, "the leader answered FOLLOWERINFO with packet type %d" % ptype
        assert leaderinfo_zxid >> 32 == epoch
        q.sendall(packet(ACKEPOCH, last, struct.pack(">i", -1)))
        sync = []
        while not sync or sync[-1][0] != NEWLEADER:
            sync.append(r.next()[:2])
        assert sync[0][0] == DIFF, "the leader synced server 3 with packet type %d" % sync[0][0]
        c = e.client(leader)
        for i in range(10):
            c.create("/held-%d" % i, b"")   # committed by the leader and the other follower
        close_client(c)
        q.sendall(packet(ACK, epoch << 32))
        before = []
        while True:
            ptype, zxid, _ = r.next()
            if ptype == UPTODATE:
                break
            before.append((ptype, zxid))
        assert not [p for p in before if p[0] == COMMIT], \
            "COMMITs between NEWLEADER and UPTODATE: %s" % [hex(z) for t, z in before if t == COMMIT]
        proposed = [z for t, z in before if t == PROPOSAL]
        assert len(proposed) >= 10, "server 3 got %d proposals after NEWLEADER" % len(proposed)
        committed = []
        while len(committed) < len(proposed):
            ptype, zxid, _ = r.next()
            if ptype == COMMIT:
                committed.append(zxid)
        assert committed == proposed, "commits %s after proposals %s" % (
            [hex(z) for z in committed], [hex(z) for z in proposed])
    finally:
        if q:
            q.close()
        e.close()
        e.cleanup()
