"""The keeper workload (keeper_workload.py) on a 3-member ensemble (kipper, or Apache
ZooKeeper 3.8 with KIPPER_TEST_TARGET=zookeeper): it passes with no fault and through a
SIGKILL of the leader and its restart, and its checkers catch a doctored history."""
import time

import pytest

from ensemble import Ensemble
from keeper_workload import KeeperWorkload
from linearizable import OK


@pytest.fixture(scope="module")
def ens():
    e = Ensemble(3).start()
    try:
        yield e
    finally:
        e.close()
        e.cleanup()


@pytest.fixture
def workload(ens):
    made = []

    def make(**kw):
        kw.setdefault("seed", 1000 + len(made))
        wl = KeeperWorkload(ens, **kw)
        made.append(wl)
        return wl
    yield make
    for wl in made:
        wl.close()


def _wait(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))


def test_same_seed_same_choices():
    a = KeeperWorkload("127.0.0.1:1", seed=42)
    b = KeeperWorkload("127.0.0.1:1", seed=42)
    c = KeeperWorkload("127.0.0.1:1", seed=43)
    assert a.plan(0, 50) == b.plan(0, 50) and a.plan(3, 50) == b.plan(3, 50)
    assert a.plan(0, 50) != c.plan(0, 50)
    assert a.plan(0, 50) != a.plan(1, 50)
    assert str(a.seed) in a.base


def test_no_faults(workload):
    wl = workload(clients=5, op_timeout=10.0).start()     # with no fault, an unknown call is a hang
    _wait(lambda: wl.ops_done() >= 1500, 10, "1500 calls")
    wl.stop()
    res = wl.check()
    print(res.summary())
    assert res.passed, res.summary()
    assert not res.inconclusive, res.summary()
    assert res.register.valid is True and res.set.valid is True
    assert res.counts["unknown"] == 0 and res.counts["ok"] > 1000, res.counts
    # every member gave its final reads, and they are in the checked history
    assert sum(1 for o in wl.history if o.meta.get("final")) == 2 * len(wl.members)
    assert res.ephemerals["created ok"] > 0 and res.ephemerals["checked while alive"] > 0
    assert res.ephemerals["sessions ended"] > 0 and res.ephemerals["remaining after close"] == 0
    assert res.watches["notifications"] > 10 and res.watches["registrations"] >= res.watches["notifications"]
    assert len(res.timeline) == res.counts["attempted"]
    assert all(s in ("ok", "fail", "unknown") for _, s in res.timeline)
    acked = [o for o in wl.seq_ops if o.type == OK]
    assert acked and wl.seq_final is not None and len(wl.seq_final) == len(wl.seq_ops), (len(acked), wl.seq_final)


def test_leader_sigkill_and_restart(ens, workload):
    """Two rounds: SIGKILL the leader, the other two serve, restart it, all three serve."""
    wl = workload(clients=5).start()
    _wait(lambda: wl.ok_since(0) >= 300, 10, "300 acknowledged calls")
    killed = []
    for _ in range(2):
        leader = ens.leader()
        killed.append(leader.sid)
        t_kill = time.monotonic()
        ens.kill(leader)
        _wait(lambda: wl.ok_since(t_kill + 0.5) >= 100, 20, "100 calls acknowledged after the kill")
        ens.start(leader)                   # waits until the three serve again
        t_back = time.monotonic()
        _wait(lambda: wl.ok_since(t_back) >= 200, 20, "200 calls acknowledged with the old leader back")
    wl.stop()
    res = wl.check()
    print("killed members %s; %s" % (killed, res.summary()))
    assert res.passed, res.summary()
    assert res.register.valid is True and res.set.valid is True, res.summary()
    # The old leaders rejoined with their data: their final reads are in the history.
    assert sum(1 for o in wl.history if o.meta.get("final")) == 2 * len(wl.members), res.notes


def test_checker_catches_doctored_histories(workload, tmp_path):
    wl = workload(clients=3).start()
    _wait(lambda: wl.ops_done() >= 400, 10, "400 calls")
    wl.stop()
    first = wl.check()
    assert first.passed
    # save() / load() keep a run for checking again later.
    wl.save(str(tmp_path / "run.pickle"))
    again = KeeperWorkload.load(str(tmp_path / "run.pickle")).check()
    assert again.passed and again.counts == first.counts and again.seed == wl.seed

    # A lost acknowledged write: the final reads show the value of an older acknowledged write.
    finals = [o for o in wl.history if o.meta.get("final") and o.meta["kind"] == "register"]
    writes = [o for o in wl.history if o.meta["kind"] == "register" and o.f != "read" and o.type == OK]
    assert writes and finals
    kept = [o.output for o in finals]
    older = writes[len(writes) // 2]
    for o in finals:
        o.output = (older.value if older.f == "write" else older.value[1], older.output)
    res = wl.check()
    assert not res.passed and res.register.valid is False
    assert "versioned register history" in res.violations[0] and "cannot linearize" in res.violations[0]
    for o, out in zip(finals, kept):
        o.output = out

    # A set read missing an acknowledged add.
    sfinals = [o for o in wl.history if o.meta.get("final") and o.meta["kind"] == "set"]
    adds = [o for o in wl.history if o.meta["kind"] == "set" and o.f == "add" and o.type == OK]
    gone = adds[0].value
    for o in sfinals:
        o.output = o.output - {gone}
    res = wl.check()
    assert not res.passed and res.set.valid is False and res.register.valid is True
    assert gone not in res.set.op.output

    # A read of a value nobody wrote, in the middle of the run.
    reads = [o for o in wl.history if o.meta["kind"] == "register" and o.f == "read" and o.type == OK]
    reads[len(reads) // 2].output = ("ghost", reads[len(reads) // 2].output[1])
    res = wl.check()
    assert res.register.valid is False and res.register.op.output[0] == "ghost"

    # Sequential nodes: a counter given twice; a later create with a smaller counter; one
    # acknowledged but missing at the end.
    seqs = sorted((o for o in wl.seq_ops if o.type == OK), key=lambda o: o.invoke)
    assert len(seqs) >= 3, len(seqs)
    first_out, last_out = seqs[0].output, seqs[-1].output
    seqs[-1].output = first_out
    assert any("given twice" in v for v in wl.check().violations)
    assert any("not above" in v for v in wl.check().violations)
    seqs[-1].output = last_out
    del wl.seq_final[last_out]
    assert any("acknowledged sequential node %d" % last_out in v for v in wl.check().violations)

    # A read without sync (outside the linearizability check) of a value nobody wrote.
    local = [o for o in wl.history if o.meta["kind"] == "local" and o.type == OK]
    local[0].output = ("phantom", 1)
    assert any("phantom" in v and "no write made" in v for v in wl.check().violations)
