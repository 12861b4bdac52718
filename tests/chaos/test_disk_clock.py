"""Disk faults and clock jumps under kipper's servers (tests/README.md, "Disk and clock faults").

Each server runs with the fault shim preloaded (faults_disk.FaultShim: fsync and
write failures, slow fsync, a wall-clock offset, flipped while it runs) or with its
data folder on a small tmpfs that the test fills (faults_disk.FullDisk). What a user
relies on is checked:

- keeper: a member whose transaction log fails stops (exit status 1, a log line
  saying why) rather than acknowledging anything it could not log; the other two
  go on, every acknowledged write is there, and the member restarted on a healed
  disk rejoins with the same data;
- broker: with replication factor 3 and acks=all, a leader whose fsync or writes
  fail, or whose disk is full, loses no acknowledged record (check_stream);
  a follower with a full disk leaves the ISR and acks=all goes on with the others;
- clock: a broker leader's and the keeper leader's wall clock jumping an hour
  forward then back costs no session, no election and no record (timers run on
  the monotonic clock; wall time only stamps data).
"""
import os
import shutil
import tempfile
import time

import pytest

from harness import Placement, wait_until
from faults_disk import FaultShim, FullDisk
from repl_cluster import ReplCluster, Stream, check_stream, keeper_ensemble, SESSION_MS

HOUR_MS = 3600 * 1000


@pytest.fixture
def shim_dir():
    d = tempfile.mkdtemp(prefix="kipper-kfault-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def shims_for(shim_dir, ids, what):
    return {i: FaultShim(shim_dir, "%s%d.ctl" % (what, i)) for i in ids}


# ---- keeper ---------------------------------------------------------------------------------


@pytest.fixture
def faulty_ensemble(shim_dir):
    """A 3-member kipper ensemble, every member with a shim of its own: (ens, {sid: shim})."""
    from ensemble import Ensemble
    shims = shims_for(shim_dir, (1, 2, 3), "keeper")
    ens = Ensemble(3, target="kipper", placement=lambda sid: Placement(env=shims[sid].placement_env()))
    try:
        ens.start()
        yield ens, shims
    finally:
        for s in shims.values():
            s.heal()
        ens.close()
        ens.cleanup()


class Writer:
    """Sets /w/<i> to i, one after the other, through a client on every member;
    remembers which sets were acknowledged."""

    def __init__(self, client):
        self.client = client
        self.acked = []
        self.failed = 0
        self.n = 0
        client.ensure_path("/w")

    def write(self):
        i = self.n
        self.n += 1
        try:
            self.client.create("/w/%d" % i, str(i).encode())
            self.acked.append(i)
            return True
        except Exception:
            self.failed += 1
            return False

    def write_until(self, pred, timeout):
        deadline = time.monotonic() + timeout
        while not pred():
            assert time.monotonic() < deadline, "writes went on for %s s without the condition" % timeout
            self.write()


@pytest.mark.parametrize("role", ["leader", "follower"])
@pytest.mark.parametrize("fault", ["fsync", "write"])
def test_keeper_member_whose_log_fails_stops_and_rejoins_healed(faulty_ensemble, role, fault):
    """A member whose log sync or write fails stops with exit status 1 and a log line;
    the other two carry on; every acknowledged create is on every member; restarted on
    a healed disk it rejoins with the same tree (ZooKeeper's member leaves its role too;
    kipper's stops, see docs/ARCHITECTURE.md, pipeline.c)."""
    ens, shims = faulty_ensemble
    victim = ens.leader() if role == "leader" else ens.followers()[0]
    shim = shims[victim.sid]
    w = Writer(ens.client(all_hosts=True, timeout=6.0))
    w.write_until(lambda: len(w.acked) >= 20, timeout=10)
    if fault == "fsync":
        shim.fsync_fail()
    else:
        shim.write_fail(prefix=victim.data_dir)
    w.write_until(lambda: victim.proc.poll() is not None, timeout=15)
    assert victim.proc.returncode == 1, "member %d exited with %r" % (victim.sid, victim.proc.returncode)
    log = victim.server_log()
    assert "the transaction log failed in an ensemble: stopping this member" in log, log[-3000:]
    assert shim.get("fsyncs_failed" if fault == "fsync" else "writes_failed") >= 1
    victim.proc = None
    # The two others serve writes.
    before = len(w.acked)
    w.write_until(lambda: len(w.acked) >= before + 20, timeout=20)
    shim.heal()
    ens.start(victim)
    ens.wait_zxids_equal(timeout=20)
    for m in ens.members:
        c = ens.client(m)
        have = set(int(x) for x in c.get_children("/w"))
        lost = [i for i in w.acked if i not in have]
        assert not lost, "member %d lacks acknowledged creates %s" % (m.sid, lost[:10])
        for i in w.acked[-5:]:
            assert c.get("/w/%d" % i)[0] == str(i).encode()


def test_keeper_slow_fsync_on_a_follower_does_not_stop_writes(faulty_ensemble):
    """A follower whose every fsync takes 1 s (below syncLimit): the leader commits
    with the other follower, writes go on, the slow one keeps up once healed."""
    ens, shims = faulty_ensemble
    victim = ens.followers()[0]
    w = Writer(ens.client(ens.leader(), timeout=6.0))
    shims[victim.sid].fsync_slow(1000)
    t0 = time.monotonic()
    w.write_until(lambda: len(w.acked) >= 100, timeout=20)
    assert shims[victim.sid].get("fsyncs_delayed") >= 1
    assert w.failed == 0
    assert time.monotonic() - t0 < 15
    shims[victim.sid].heal()
    assert victim.running()
    ens.wait_zxids_equal(timeout=20)
