"""Observers (issue 14): members with `peerType=observer` and `server.N=...:observer` lines.

An observer learns every committed transaction from the leader (INFORM), serves reads and
sessions itself and forwards writes to the leader, but counts in no quorum: not in the
election, not in acknowledging proposals, not in the leader's liveness.

- A kipper ensemble of 3 participants and 1 observer (member 4): writes through the observer
  reach every member and are read back on it; killing the observer changes nothing for the
  quorum (no election, writes go on) and it catches up when back; killing 2 of the 3
  participants leaves no quorum although the observer is up; a SIGKILLed leader is replaced
  and the observer follows the new one with every acknowledged write kept.
- Mixed: an Apache ZooKeeper 3.8 observer following a kipper leader, and a kipper observer
  following a ZooKeeper leader, each serving reads and forwarding writes, and following the
  next leader of the other kind when the leader is killed, with nothing lost (skipped when
  ZooKeeper is not installed).
"""
import time

import pytest

import apache_zk
import conftest
from ensemble import Ensemble
from harness import four_letter_word
from test_keeper_mixed import Writers, _assert_all_present, check_move

pytestmark = pytest.mark.kipper_only(reason="issue 14: kipper's observers")

OBSERVER = 4


def _start(request, targets=None):
    yield from conftest.started_ensemble(request, 4, observers={OBSERVER}, targets=targets)


@pytest.fixture(scope="module")
def ensemble(request):
    yield from _start(request)


@pytest.fixture
def ens(ensemble):
    """Before each test: every member running, one leader, the observer observing."""
    ensemble.heal()
    ensemble.close_clients()
    try:
        yield ensemble
    finally:
        ensemble.close_clients()


def _roles(e):
    return {m.sid: e.mode(m) for m in e.members}


def _check_serves_and_forwards(e, observer):
    """A client on the observer only: its writes (a session, an ephemeral, creates, a
    setData) reach every member, and what a participant's client writes is read back on
    the observer after a sync; a session moves between the leader and the observer."""
    leader = e.leader()
    base = "/obs-%d" % int(time.time() * 1000)
    c = e.client(observer)
    c.create(base)
    c.create(base + "/eph", b"mine", ephemeral=True)
    for i in range(20):
        c.create("%s/n%02d" % (base, i), b"%d" % i)
    c.set(base, b"changed")
    sid = c.client_id[0]
    e.wait_zxids_equal()
    for m in e.members:
        other = e.client(m)
        other.sync(base)
        assert other.get(base)[0] == b"changed", "member %d" % m.sid
        assert len(other.get_children(base)) == 21, "member %d" % m.sid
        assert other.get(base + "/eph")[1].ephemeralOwner == sid, "member %d" % m.sid
    e.client(leader).create(base + "/from-leader", b"L")
    c.sync(base)
    assert c.get(base + "/from-leader")[0] == b"L"
    # A session moves from the leader to the observer and back (REVALIDATE both ways),
    # keeping its ephemerals and writing through each with no SESSIONMOVED.
    check_move(e, leader.sid, observer.sid)
    check_move(e, observer.sid, leader.sid)
    return base


def test_observer_serves_reads_and_forwards_writes(ens):
    observer = ens.member(OBSERVER)
    assert _roles(ens)[OBSERVER] == "observer"
    leader = ens.leader()
    stats = ens.mntr(leader)
    assert (stats["zk_synced_followers"], stats["zk_synced_observers"]) == ("2", "1"), stats
    assert "Mode: observer" in ens.srvr(observer)
    assert "Mode: observer" in four_letter_word(observer.port, "stat")
    assert ens.mntr(observer)["zk_server_state"] == "observer"
    _check_serves_and_forwards(ens, observer)
    # The observer's session is global: the leader tracks it, so it stays alive while the
    # client keeps writing through the observer well past its timeout.
    c = ens.client(observer, timeout=2.0)
    path = "/obs-session-%x" % c.client_id[0]
    c.create(path, b"", ephemeral=True)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        c.exists(path)
        time.sleep(0.2)
    lc = ens.client(leader)
    assert lc.exists(path) is not None, "the leader expired a session the observer kept alive"


def test_killing_the_observer_leaves_the_quorum_alone(ens):
    leader = ens.leader()
    observer = ens.member(OBSERVER)
    marks = ens.log_marks()
    ens.kill(observer)
    base = "/without-observer-%d" % int(time.time() * 1000)
    c = ens.client(leader)
    c.create(base)
    for i in range(50):
        c.create("%s/n%02d" % (base, i))
    # syncLimit (2 s) passes: the leader would have noticed a lost quorum by now.
    ens.poll(lambda: int(ens.mntr(leader)["zk_synced_observers"]) == 0, timeout=10,
             what="the leader to drop the observer")
    time.sleep(ens.sync_limit * ens.tick_time / 1000.0)
    assert ens.leader() is leader
    assert int(ens.mntr(leader)["zk_synced_followers"]) == 2
    assert "going back to LOOKING" not in "".join(m.server_log(marks[m.sid]) for m in ens.participants())
    # The quorum is 2 of the 3 participants: one follower more may go (were the observer
    # counted, 2 of 4 would not be a quorum).
    follower = next(m for m in ens.participants() if m is not leader)
    ens.kill(follower)
    c.create(base + "/one-follower-left")
    time.sleep(ens.sync_limit * ens.tick_time / 1000.0)
    assert ens.leader() is leader
    c.create(base + "/still-leading")
    ens.start(observer, wait=False)
    ens.start(follower)
    assert ens.mode(observer) == "observer"
    oc = ens.client(observer)
    oc.sync(base)
    assert len(oc.get_children(base)) == 52


def test_observer_does_not_vote(ens):
    """2 participants and the observer make 3 of 4 servers but not a quorum of voters."""
    leader = ens.leader()
    observer = ens.member(OBSERVER)
    others = [m for m in ens.participants() if m is not leader]
    for m in others:
        ens.kill(m)
    ens.poll(lambda: ens.mode(leader) != "leader", timeout=15, what="the leader to give up without a quorum")
    # Neither the lone participant nor the observer serve while the participants are down.
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        assert ens.mode(leader) not in ("leader", "follower"), _roles(ens)
        assert ens.mode(observer) != "observer", _roles(ens)
        time.sleep(0.2)
    assert not ens.serves_session(observer)
    for m in others:
        ens.start(m, wait=False)
    ens.wait_ready()
    assert _roles(ens)[OBSERVER] == "observer"


def test_observers_are_no_quorum(request):
    """2 participants and 2 observers: one participant down leaves no quorum, though 3 of
    the 4 servers run (were observers counted, 3 of 4 would be one); it comes back, and
    the observers observe again. Observer 1 has a smaller id than the participants, so
    their election connections are the ones the participants dial back."""
    e = Ensemble(4, observers={1, 4})
    try:
        e.start()
        leader = e.leader()
        follower = next(m for m in e.participants() if m is not leader)
        e.kill(follower)
        e.poll(lambda: e.mode(leader) != "leader", timeout=15, what="the leader to give up without a quorum")
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            assert e.mode(leader) not in ("leader", "follower"), _roles(e)
            assert not e.observing(), _roles(e)
            time.sleep(0.2)
        e.start(follower)
        assert [m.sid for m in e.observing()] == [1, 4]
    finally:
        conftest.close_ensemble(e, request)


def _check_leader_kill(e, observer, n=300):
    """A stream of creates through the observer; the leader SIGKILLed; the observer observes
    the new leader and the stream goes on; every acknowledged create is on every member."""
    leader = e.leader()
    base = "/failover-%d" % int(time.time() * 1000)
    e.client(leader).create(base)
    w = Writers([e.client(observer)], base, batch=20).start()
    try:
        e.poll(lambda: w.count() >= n, timeout=60, what="%d creates through the observer" % n)
        e.kill(leader)
        new = e.poll(lambda: next((m for m in e.participants() if e.mode(m) == "leader"), None),
                     timeout=30, what="a new leader")
        assert new is not leader
        e.poll(lambda: e.mode(observer) == "observer", timeout=30, what="the observer to observe again")
        after = w.count()
        e.poll(lambda: w.count() >= after + n, timeout=60, what="%d creates under the new leader" % n)
    finally:
        w.stop()
    e.start(leader)
    _assert_all_present(e, base, w.acked)


def test_observer_follows_a_new_leader_with_nothing_lost(ens):
    _check_leader_kill(ens, ens.member(OBSERVER))
    assert ens.sync_modes(OBSERVER), "no sync of the observer in the leaders' logs"


# ---- mixed with Apache ZooKeeper 3.8 ------------------------------------------------------

needs_zk = pytest.mark.skipif(not apache_zk.available(), reason="Apache ZooKeeper 3.8 is not installed")


@pytest.fixture
def zk_observes(request):
    """kipper participants 1-3, an Apache ZooKeeper observer 4."""
    yield from _start(request, targets={1: "kipper", 2: "kipper", 3: "kipper", 4: "zookeeper"})


@pytest.fixture
def kipper_observes(request):
    """Apache ZooKeeper participants 1-3, a kipper observer 4."""
    yield from _start(request, targets={1: "zookeeper", 2: "zookeeper", 3: "zookeeper", 4: "kipper"})


@needs_zk
def test_zookeeper_observer_of_a_kipper_leader(zk_observes):
    e = zk_observes
    observer = e.member(OBSERVER)
    assert "Mode: observer" in e.srvr(observer)
    assert e.mntr(e.leader())["zk_synced_observers"] == "1"
    _check_serves_and_forwards(e, observer)
    _check_leader_kill(e, observer)


@needs_zk
def test_kipper_observer_of_a_zookeeper_leader(kipper_observes):
    e = kipper_observes
    observer = e.member(OBSERVER)
    assert "Mode: observer" in e.srvr(observer)
    assert e.mntr(e.leader())["zk_synced_observers"] == "1"
    _check_serves_and_forwards(e, observer)
    _check_leader_kill(e, observer)
