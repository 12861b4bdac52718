"""Mixed ensembles: kipper keepers and Apache ZooKeeper 3.8 servers in one ensemble (issue 14).

Two 3-member ensembles, each started once per class:

- ZooKeeper leading: members 1 and 2 are kipper, member 3 (the leader) is ZooKeeper;
- kipper leading: members 1 and 2 are ZooKeeper, member 3 (the leader) is kipper.

The member of the other kind has the highest id and starts first, so the election makes it
the leader; a test that finds another leader bounces that one until member 3 leads again.

For each: DIFF, SNAP and TRUNC of a learner of the other kind (check_sync); idle for a few seconds, the ensemble keeps its roles and no learner syncs again
(kipper once sent PINGs with null data, on which ZooKeeper's LearnerHandler throws); under a
stream of writes no learner syncs again and ZooKeeper logs no "ACK for ... received before
ACK for" warning and closes no learner for a transaction timeout (kipper once skipped the
ACK of a proposal whose COMMIT came before its own fsync); a kazoo session with an
ephemeral moves between members of either kind and keeps its session, its ephemeral and
its writes (kipper as leader once ignored a ZooKeeper follower's REVALIDATE, and as
follower never sent one, so ZooKeeper's leader answered SESSIONMOVED); and a SIGKILLed
leader, mid-stream, loses no acknowledged write on any member when the other kind takes
over.

Needs kipper and Apache ZooKeeper both (skipped for KIPPER_TEST_TARGET=zookeeper, which
runs ZooKeeper alone). Waits are on conditions; the idle check watches the logs for
IDLE_S seconds, long enough for the bug it guards against to have shown some 40 times.
"""
import re
import socket
import threading
import time

import pytest

import apache_zk
import conftest
from ensemble import Ensemble, close_client
from migration import dump_tree
from test_keeper_ensemble import check_diff, check_trunc

pytestmark = [
    pytest.mark.kipper_only(reason="issue 14: kipper and Apache ZooKeeper in one ensemble"),
    pytest.mark.skipif(not apache_zk.available(), reason="Apache ZooKeeper 3.8 is not installed"),
]

LEADER_SID = 3
IDLE_S = 4.0

# Lines in ZooKeeper's log that say it fell out with a kipper peer.
ZK_ACK_ORDER = "received before ACK for"
ZK_TXN_TIMEOUT = "transaction timeout"
# An exception on ZooKeeper's side of a quorum connection (LearnerHandler's NPE on a null
# PING, a follower's "Exception when following the leader"), or its stack trace.
ZK_QUORUM_EXCEPTION = re.compile(r":(LearnerHandler|Learner|Follower|Leader|LearnerSender|QuorumPeer)@\d+\] - .*"
                                 r"[Ee]xception|^java\.lang\.\w+(Exception|Error)")
# A learner's (re)join, in its own log: kipper's FOLLOWING line, ZooKeeper's UPTODATE line.
JOIN_RE = re.compile(r"FOLLOWING leader \d+ in epoch|Learner received UPTODATE message")
# Any role change: kipper's "elected:" line, ZooKeeper's peer state line.
ELECTION_RE = re.compile(r"elected: (LEADING|FOLLOWING)|Peer state changed: looking")


# ---- fixtures -----------------------------------------------------------------------------


def _start(kinds, request):
    """An ensemble of these kinds (member id -> kipper|zookeeper), member LEADER_SID started
    first so it leads."""
    e = Ensemble(3, targets=kinds)
    try:
        t0 = time.monotonic()
        order = sorted(e.members, key=lambda m: m.sid != LEADER_SID)
        for m in order:
            e.start(m, wait=False)
        e.wait_ready()
        _make_leader(e)
        print("\nmixed ensemble %s up in %.1f s (leader %d)"
              % (kinds, time.monotonic() - t0, e.leader().sid))
        yield e
    finally:
        conftest.close_ensemble(e, request)


def _make_leader(e, sid=LEADER_SID, rounds=4):
    """Bounce the leader until member sid leads: with every member at the same zxid the
    election picks the largest id."""
    for _ in range(rounds):
        leader = e.wait_ready()
        if leader.sid == sid:
            return leader
        e.wait_zxids_equal()
        e.stop(leader)
        e.wait_ready()
        e.start(leader)
    raise AssertionError("member %d does not lead after %d bounces" % (sid, rounds))


@pytest.fixture(scope="class")
def zk_leads(request):
    """ZooKeeper leading two kipper followers."""
    yield from _start({1: "kipper", 2: "kipper", 3: "zookeeper"}, request)


@pytest.fixture(scope="class")
def kipper_leads(request):
    """kipper leading two ZooKeeper followers."""
    yield from _start({1: "zookeeper", 2: "zookeeper", 3: "kipper"}, request)


@pytest.fixture
def zk_ready(zk_leads):
    yield from _ready(zk_leads)


@pytest.fixture
def kipper_ready(kipper_leads):
    yield from _ready(kipper_leads)


def _ready(e):
    """Before each test: every member running and serving, member LEADER_SID leading."""
    e.heal()
    _make_leader(e)
    e.close_clients()
    try:
        yield e
    finally:
        e.close_clients()


# ---- what the logs say --------------------------------------------------------------------


def _lines(e, marks, pattern, kinds=("kipper", "zookeeper")):
    """{member id: [lines matching pattern]} of the members of these kinds since marks."""
    rx = re.compile(pattern) if isinstance(pattern, str) else pattern
    out = {}
    for m in e.members:
        if m.kind in kinds:
            hits = [ln for ln in m.server_log(marks.get(m.sid, 0)).splitlines() if rx.search(ln)]
            if hits:
                out[m.sid] = hits
    return out


def _assert_calm(e, marks, leader):
    """Since marks: the same leader, no election, no learner joined or synced again, and
    ZooKeeper logged no exception, no ACK out of order and no transaction-timeout close."""
    assert e.leader() is leader
    assert all(e.mode(m) == "follower" for m in e.members if m is not leader)
    problems = {
        "elections": _lines(e, marks, ELECTION_RE),
        "learner joins": _lines(e, marks, JOIN_RE),
        "syncs": {m.sid: e.sync_modes(m.sid, since=marks) for m in e.members if e.sync_modes(m.sid, since=marks)},
        "ZooKeeper quorum exceptions": _lines(e, marks, ZK_QUORUM_EXCEPTION, kinds=("zookeeper",)),
        "ACKs out of order": _lines(e, marks, re.escape(ZK_ACK_ORDER), kinds=("zookeeper",)),
        "transaction timeouts": _lines(e, marks, ZK_TXN_TIMEOUT, kinds=("zookeeper",)),
    }
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, "\n".join("%s: %s" % (k, _short(v)) for k, v in problems.items())
    assert int(e.mntr(leader)["zk_synced_followers"]) == 2


def _short(v, n=5):
    if isinstance(v, dict):
        return {k: (lst[:n] + ["... %d more" % (len(lst) - n)] if len(lst) > n else lst) for k, lst in v.items()}
    return v


# ---- writers ------------------------------------------------------------------------------


class Writers:
    """One thread per client creating unique nodes under base in pipelined batches; every
    create acknowledged is recorded. stop() ends them; failures (connection loss during
    a kill) are counted, not raised."""

    def __init__(self, clients, base, batch=50):
        self.clients, self.base, self.batch = clients, base, batch
        self.acked = set()
        self.errors = []
        self.batches = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(i, c), daemon=True)
                         for i, c in enumerate(clients)]

    def start(self):
        for t in self._threads:
            t.start()
        return self

    def _run(self, i, c):
        n = 0
        while not self._stop.is_set():
            batch = []
            for _ in range(self.batch):
                path = "%s/w%d-%06d" % (self.base, i, n)
                n += 1
                batch.append((path, c.create_async(path, b"x")))
            for path, r in batch:
                try:
                    r.get(timeout=30)
                    with self._lock:
                        self.acked.add(path.rsplit("/", 1)[1])
                except Exception as exc:
                    with self._lock:
                        self.errors.append(repr(exc))
            with self._lock:
                self.batches += 1

    def count(self):
        with self._lock:
            return len(self.acked)

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(60)
        assert not any(t.is_alive() for t in self._threads), "a writer is stuck"


def _assert_all_present(e, base, acked):
    """Every member holds every acknowledged node (after a sync on that member)."""
    e.wait_zxids_equal(timeout=30)
    for m in e.members:
        c = e.client(m)
        c.sync(base)
        have = set(c.get_children(base))
        lost = acked - have
        assert not lost, "member %d (%s) lost %d acknowledged creates, e.g. %s" % (
            m.sid, m.kind, len(lost), sorted(lost)[:5])


# ---- the checks, run on each ensemble ------------------------------------------------------


def check_idle(e):
    leader = e.leader()
    marks = e.log_marks()
    t0 = time.monotonic()
    # Ping rounds run every half tick: IDLE_S holds 2 * IDLE_S / tickTime of them.
    while time.monotonic() - t0 < IDLE_S:
        e.check_alive()
        time.sleep(0.2)
    _assert_calm(e, marks, leader)


def check_writes(e, n=3000):
    leader = e.leader()
    base = "/writes-%d" % int(time.time() * 1000)
    e.client(leader).create(base)
    marks = e.log_marks()
    w = Writers([e.client(m) for m in e.members], base).start()
    try:
        e.poll(lambda: w.count() >= n, timeout=90, what=lambda: "%d creates (%d so far)" % (n, w.count()))
    finally:
        w.stop()
    assert not w.errors, "writes failed: %s" % w.errors[:5]
    _assert_all_present(e, base, w.acked)
    _assert_calm(e, marks, leader)


def check_move(e, src, dst):
    a, b = e.member(src), e.member(dst)
    c = e.client(a)
    sid, _ = c.client_id
    path = "/moving-%x" % sid
    c.create(path, b"before", ephemeral=True)
    # Move: point the client at b alone and break its connection to a; kazoo reconnects
    # with its session id and password.
    c.set_hosts("%s:%d" % (b.placement.host, b.port))
    old = c._connection._socket
    old.shutdown(socket.SHUT_RDWR)
    e.poll(lambda: c.connected and c._connection._socket not in (None, old),
           timeout=30, what="the session to reopen on member %d (%s)" % (dst, b.kind))
    assert c.client_id[0] == sid, "a new session instead of 0x%x" % sid
    # It writes through its new member with no SESSIONMOVED, and keeps its ephemeral.
    c.set(path, b"after")
    c.create(path + "-2", b"", ephemeral=True)
    data, stat = c.get(path)
    assert data == b"after" and stat.ephemeralOwner == sid
    e.wait_zxids_equal()
    for m in e.members:
        other = e.client(m)
        other.sync(path)
        d, st = other.get(path)
        assert d == b"after" and st.ephemeralOwner == sid, "member %d" % m.sid
        assert other.exists(path + "-2") is not None, "member %d" % m.sid


def check_leader_kill(e):
    """SIGKILL the leader while clients on the followers create nodes; the other kind takes
    over; once the old leader is back every member holds every acknowledged create."""
    leader = e.leader()
    base = "/kill-%d" % int(time.time() * 1000)
    e.client(leader).create(base)
    clients = [e.client(m, all_hosts=True) for m in e.members if m is not leader]
    w = Writers(clients, base, batch=20).start()
    try:
        e.poll(lambda: w.count() >= 500, timeout=60, what="500 creates before the kill")
        before = w.count()
        e.kill(leader)
        e.wait_ready(sessions=False)
        e.poll(lambda: w.count() >= before + 500, timeout=60,
               what=lambda: "500 creates after the kill (%d so far)" % (w.count() - before))
    finally:
        w.stop()
    new = e.leader()
    print("\nkilled %s leader %d; member %d (%s) leads; %d creates acknowledged, %d failed"
          % (leader.kind, leader.sid, new.sid, new.kind, len(w.acked), len(w.errors)))
    e.start(leader)
    _assert_all_present(e, base, w.acked)
    assert new.kind != leader.kind


def _assert_trees_identical(e, base):
    """Every member holds the same nodes under base, with the same data and every Stat field."""
    e.wait_zxids_equal(timeout=30)
    trees = {}
    for m in e.members:
        c = e.client(m)
        c.sync(base)
        trees[m.sid] = dump_tree(c, base)
    ref = trees[e.members[0].sid]
    for sid, t in trees.items():
        diff = sorted(p for p in set(t) | set(ref) if t.get(p) != ref.get(p))
        assert not diff, "member %d differs from member %d at %d nodes, e.g. %s: %s / %s" % (
            sid, e.members[0].sid, len(diff), diff[0], t.get(diff[0]), ref.get(diff[0]))


def check_sync(e, mode):
    """One learner of the other kind than the leader synced by `mode`, as the leader's log
    says (DIFF: down for 300 writes, test_keeper_ensemble's check_diff; SNAP: its data folder
    wiped, with writes streaming while it syncs, so that ZooKeeper's leader serializes a
    tree that has moved past the proposals it forwards; TRUNC: an old leader holding a
    proposal nobody else logged, then a new leader of the other kind, check_trunc); then
    every member's tree is identical, data and every Stat field."""
    base = "/sync-%s-%d" % (mode.lower(), int(time.time() * 1000))
    c = e.client(e.leader())
    c.create(base)
    close_client(c)
    if mode == "DIFF":
        check_diff(e, base)
    elif mode == "SNAP":
        follower = e.followers()[-1]
        e.kill(follower)
        e.wipe(follower)
        w = Writers([e.client(e.leader())], base, batch=20).start()
        try:
            e.poll(lambda: w.count() >= 200, timeout=30, what="writes before the SNAP")
            marks = e.log_marks()
            e.start(follower)
            before = w.count()
            e.poll(lambda: w.count() >= before + 200, timeout=30, what="writes after the SNAP")
        finally:
            w.stop()
        assert not w.errors, "writes failed: %s" % w.errors[:5]
        modes = e.sync_modes(follower.sid, since=marks)
        # One SNAP and no second sync: a kipper follower used to answer a PING before
        # its ACK of NEWLEADER, and a kipper leader to send COMMITs between NEWLEADER
        # and UPTODATE, and ZooKeeper's side dropped the connection for either
        # (test_keeper_scripted_peer.py holds both to the order).
        assert modes == ["SNAP"], \
            "member %d with an empty data folder synced with %s, not one SNAP" % (follower.sid, modes)
        _assert_all_present(e, base, w.acked)
    else:
        e.close_clients()
        check_trunc(e, base)
    _assert_trees_identical(e, base)


# ---- tests ---------------------------------------------------------------------------------


class TestZooKeeperLeadsKipper:
    """Member 3, Apache ZooKeeper, leads members 1 and 2, kipper."""

    def test_idle_keeps_roles_and_never_resyncs(self, zk_ready):
        check_idle(zk_ready)

    def test_writes_keep_acks_in_order(self, zk_ready):
        check_writes(zk_ready)

    @pytest.mark.parametrize("src,dst", [
        (3, 1),   # ZooKeeper leader -> kipper follower: kipper revalidates with ZooKeeper
        (1, 3),   # kipper follower -> ZooKeeper leader
        (1, 2),   # kipper follower -> kipper follower: ZooKeeper must learn the new owner
    ])
    def test_session_moves_with_its_ephemeral(self, zk_ready, src, dst):
        check_move(zk_ready, src, dst)

    def test_leader_killed_kipper_takes_over(self, zk_ready):
        check_leader_kill(zk_ready)

    @pytest.mark.parametrize("mode", ["DIFF", "SNAP", "TRUNC"])
    def test_sync(self, zk_ready, mode):
        """DIFF and SNAP: a kipper follower from the ZooKeeper leader. TRUNC: the ZooKeeper
        leader's uncommitted proposal cut by a kipper leader (then the reverse, or a SNAP
        across epochs, as test_keeper_ensemble's check_trunc allows)."""
        check_sync(zk_ready, mode)


class TestKipperLeadsZooKeeper:
    """Member 3, kipper, leads members 1 and 2, Apache ZooKeeper."""

    def test_idle_keeps_roles_and_never_resyncs(self, kipper_ready):
        check_idle(kipper_ready)

    def test_writes_keep_acks_in_order(self, kipper_ready):
        check_writes(kipper_ready)

    @pytest.mark.parametrize("src,dst", [
        (1, 3),   # ZooKeeper follower -> kipper leader
        (3, 1),   # kipper leader -> ZooKeeper follower: kipper answers its REVALIDATE
        (1, 2),   # ZooKeeper follower -> ZooKeeper follower, revalidated with kipper
    ])
    def test_session_moves_with_its_ephemeral(self, kipper_ready, src, dst):
        check_move(kipper_ready, src, dst)

    def test_leader_killed_zookeeper_takes_over(self, kipper_ready):
        check_leader_kill(kipper_ready)

    @pytest.mark.parametrize("mode", ["DIFF", "SNAP", "TRUNC"])
    def test_sync(self, kipper_ready, mode):
        """DIFF and SNAP: a ZooKeeper follower from the kipper leader. TRUNC: the kipper
        leader's uncommitted proposal cut by a ZooKeeper leader (then the reverse)."""
        check_sync(kipper_ready, mode)
