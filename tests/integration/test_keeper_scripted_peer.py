"""kipper members against a scripted peer speaking ZooKeeper's quorum protocol
(`quorum_wire.py`), held to what Apache ZooKeeper 3.8.0's own learner and leader
require of a peer:

- as a leader, to a kipper follower: a PING sent right after NEWLEADER, while the
  follower's ACK of NEWLEADER waits for a proposal to reach its disk, is not answered
  before that ACK (ZooKeeper's LearnerHandler drops a learner whose first packet after
  NEWLEADER is anything else; its Learner ignores PINGs until UPTODATE);
- as a follower, to a kipper leader: the transactions committed while it has not
  acknowledged NEWLEADER reach it as COMMITs after UPTODATE, in order, never between
  NEWLEADER and UPTODATE (ZooKeeper 3.8.0's Learner fails on a COMMIT there once it
  has logged the sync's proposals, and syncs again). Both were seen in
  test_keeper_mixed.py as a second sync right after a SNAP;
- as a leader again: a follower's answer to each PING lists every session its
  clients used since the previous one, once, and no other (the leader keeps them
  alive by it)."""
import socket
import struct
import threading

import pytest

from ensemble import Ensemble, close_client
from harness import wait_until
from quorum_wire import (ACK, ACKEPOCH, COMMIT, DIFF, FOLLOWERINFO, FOLLOWING, LEADERINFO, LEADING, NEWLEADER,
                         PING, PROPOSAL, PROTOCOL_VERSION, REQUEST, UPTODATE, PacketReader, initial_message,
                         notification, packet)
from zkwire import WireClient

pytestmark = pytest.mark.kipper_only(reason="what kipper's own follower and leader send")

OP_CREATE_SESSION = -10
EPOCH = 1                      # the scripted leader's
NEWLEADER_ZXID = EPOCH << 32


def create_txn(zxid, path):
    """A PROPOSAL's data: TxnHeader {clientId, cxid, zxid, time, type create} and a
    CreateTxn {path, data, acl world:anyone ALL, ephemeral false, parentCVersion 1}."""
    def string(s):
        return struct.pack(">i", len(s)) + s
    header = struct.pack(">qiqqi", 0, 1, zxid, 0, 1)
    acl = struct.pack(">ii", 1, 31) + string(b"world") + string(b"anyone")
    return header + string(path) + string(b"x") + acl + struct.pack(">?i", False, 1)


def follow_scripted_leader(e, socks):
    """Server 1 alone, told by forged votes that server 3 leads (server 2 following it),
    connects to the scripted server 3 on server 3's quorum port: FOLLOWERINFO, LEADERINFO
    for epoch 1, ACKEPOCH. Returns the connection and its PacketReader; every socket
    opened goes into socks."""
    m1, m3 = e.member(1), e.member(3)
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
        el.sendall(initial_message(sid, e.member(sid).election_port) + notification(state, 3, 0, 1, 0))
    lsock.settimeout(20)
    q, _ = lsock.accept()
    socks.append(q)
    q.settimeout(20)
    r = PacketReader(q)
    ptype, _, _ = r.next()
    assert ptype == FOLLOWERINFO, "server 1 began with packet type %d" % ptype
    q.sendall(packet(LEADERINFO, EPOCH << 32, struct.pack(">i", PROTOCOL_VERSION)))
    ptype, _, _ = r.next()
    assert ptype == ACKEPOCH, "server 1 answered LEADERINFO with packet type %d" % ptype
    return q, r


def test_follower_acks_newleader_before_it_answers_a_ping():
    """Server 1 follows the scripted server 3 (follow_scripted_leader), which sends a
    DIFF with one proposal, NEWLEADER and a PING in one write. The proposal must reach
    server 1's disk before it may ACK NEWLEADER, so the PING is read first; the first
    packet server 1 sends after its ACKEPOCH is still the ACK of NEWLEADER, and the
    PING is not answered before UPTODATE; once committed, the proposal is applied."""
    e = Ensemble(3)
    socks = []
    try:
        m1 = e.member(1)
        q, r = follow_scripted_leader(e, socks)
        newleader_zxid = NEWLEADER_ZXID
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
        m1, m2 = e.member(1), e.member(2)
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


def ping_sessions(q, r, zxid):
    """Send PING; the follower's answer, as the list of (session id, timeout) it carries."""
    q.sendall(packet(PING, zxid))
    while True:
        ptype, _, data = r.next()
        if ptype == PING:
            break
    assert data is not None and len(data) % 12 == 0, "a PING answer carrying %r" % data
    return [struct.unpack_from(">qi", data, i) for i in range(0, len(data), 12)]


def test_follower_ping_lists_each_session_used_since_the_last_once():
    """Server 1 follows the scripted server 3 and is synced with nothing to log. A raw
    client connects to server 1: its createSession comes to the leader as a REQUEST and
    is committed. Then, at each PING: after three requests on the session, the answer
    lists it once; after none, it lists nothing; after one more, it lists it once again
    (a session's mark from an earlier round does not hide it in the next)."""
    e = Ensemble(3)
    socks = []
    c = None
    try:
        m1 = e.member(1)
        q, r = follow_scripted_leader(e, socks)
        q.sendall(packet(DIFF, 0) + packet(NEWLEADER, NEWLEADER_ZXID))
        assert r.next()[:2] == (ACK, NEWLEADER_ZXID)
        q.sendall(packet(UPTODATE, -1))
        e.poll(lambda: e.mode(m1) == "follower", timeout=20, what="server 1 to serve")
        c = WireClient(m1.port)
        connected = []
        t = threading.Thread(target=lambda: connected.append(c.connect(timeout_ms=6000)), daemon=True)
        t.start()
        while True:
            ptype, _, data = r.next()
            if ptype == REQUEST:
                break
        sid, _, optype = struct.unpack_from(">qii", data)
        assert optype == OP_CREATE_SESSION, "server 1 forwarded request type %d" % optype
        timeout = struct.unpack_from(">i", data, 16)[0]
        zxid = NEWLEADER_ZXID | 1
        txn = struct.pack(">qiqqi", sid, 0, zxid, 0, OP_CREATE_SESSION) + struct.pack(">i", timeout)
        q.sendall(packet(PROPOSAL, zxid, txn) + packet(COMMIT, zxid))
        t.join(20)
        assert c.session is not None and c.session.session_id == sid, "the client's session is not %#x" % sid
        for _ in range(3):
            c.exists("/")
        assert ping_sessions(q, r, zxid) == [(sid, timeout)]
        assert ping_sessions(q, r, zxid) == []
        c.exists("/")
        assert ping_sessions(q, r, zxid) == [(sid, timeout)]
    finally:
        if c:
            c.sock.close()
        for s in socks:
            s.close()
        e.close()
        e.cleanup()
