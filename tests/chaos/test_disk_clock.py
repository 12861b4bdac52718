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


# ---- broker ---------------------------------------------------------------------------------

from repl_cluster import ensemble  # noqa: E402,F401  (the module's keeper ensemble fixture)

TOPIC = "t"
PARTS = 3
# Broker 1 leads partitions 0 and 1, broker 2 partition 2; broker 3 only follows.
ASSIGNMENT = [[1, 2, 3], [1, 3, 2], [2, 1, 3]]


@pytest.fixture
def faulty_cluster(request, ensemble, shim_dir):
    """make(chroot_suffix) -> (ReplCluster of brokers 1-3 on the module's ensemble, each
    with a shim, not started; {id: shim}). Stopped afterwards: every broker still or
    again running must exit 0; full disks are unmounted after the brokers stop."""
    made, disks = [], []

    def make(name):
        shims = shims_for(shim_dir, (1, 2, 3), "broker")
        c = ReplCluster(ensemble.hosts(), "/chaos-disk/%s-%d" % (name, len(made)),
                        placement=lambda i: Placement(env=shims[i].placement_env()))
        made.append((c, shims))
        return c, shims

    make.disks = disks
    yield make
    errors = []
    for c, shims in made:
        for s in shims.values():
            s.heal()
        errors += c.close()
    for d in disks:
        d.close()
    assert not errors, "\n".join(errors)


def start_stream(c):
    c.start()
    c.create_topic(TOPIC, assignment=ASSIGNMENT)
    s = Stream(c.bootstrap, TOPIC, PARTS, rate=300).start()
    s.wait_acked(150, timeout=30)
    return s


def check_no_loss(c, s):
    """Stop the stream: every message acknowledged, none failed, each once at its
    offset, the replicas byte-identical up to the HW."""
    c.wait_isr_full(TOPIC, PARTS, timeout=30)
    assert s.stop(flush_timeout=30) == 0, "messages without a delivery report"
    assert not s.errors, "delivery failed: %s" % s.errors[:5]
    problems = check_stream(s, c.read_all(TOPIC, PARTS))
    assert not problems, "\n".join(problems)
    c.assert_replicas_identical(TOPIC, PARTS)


def wait_stopped_on_failed_dir(c, i):
    """Broker i stops by itself with exit status 1 and the log line."""
    b = c.brokers[i]
    wait_until(lambda: not b.alive(), timeout=20, what="broker %d to stop on its failed log dir" % i)
    rc = b.wait_exit()
    log = b.log()
    assert rc == 1, "broker %d exited with %r:\n%s" % (i, rc, log[-4000:])
    assert "log dir %s failed (" % b.log_dir in log, log[-4000:]
    assert "controlled shutdown: every partition handed over" in log, log[-4000:]
    return log


@pytest.mark.parametrize("fault", ["fsync", "write"])
def test_broker_leader_whose_disk_fails_hands_over_and_loses_nothing(faulty_cluster, fault):
    """acks=all, RF 3: the leader of partitions 0 and 1 meets a failing fdatasync
    (its background flush) or failing writes (its next append). It stops (controlled
    shutdown: leaderships handed to in-sync replicas, exit 1), the stream goes on
    without a failed delivery, and after the disk heals the restarted broker recovers
    (no clean-shutdown marker was written), catches up, and nothing acknowledged is
    lost or doubled. Kafka takes the failed log dir offline and stops the broker when
    no dir is left (here: its only one)."""
    c, shims = faulty_cluster("leader-" + fault)
    s = start_stream(c)
    epochs = {p: c.state(TOPIC, p)["epoch"] for p in (0, 1)}
    assert c.leader(TOPIC, 0) == 1
    if fault == "fsync":
        shims[1].fsync_fail()
    else:
        shims[1].write_fail(prefix=c.brokers[1].log_dir)
    wait_stopped_on_failed_dir(c, 1)
    for p in (0, 1):
        c.wait_new_leader(TOPIC, p, epochs[p], not_in=(1,), timeout=15)
    s.wait_progress(300, timeout=20)
    shims[1].heal()
    assert ".kafka_cleanshutdown" not in os.listdir(c.brokers[1].log_dir)
    c.brokers[1].start()
    assert "log dir %s: no clean shutdown last time" % c.brokers[1].log_dir in c.brokers[1].log_since_start()
    check_no_loss(c, s)


@pytest.mark.parametrize("victim", [1, 3], ids=["leader", "follower"])
def test_broker_full_disk_stops_the_broker_and_loses_nothing(faulty_cluster, victim):
    """The log dir of the leader of partitions 0 and 1 (victim 1), or of a broker that
    only follows (victim 3), is a 24 MiB tmpfs that fills up: its next append gets
    ENOSPC, the broker stops (exit 1) and leaves every ISR, so acks=all goes on with
    the two others (min.insync.replicas 2) without a failed delivery; with the space
    back it restarts, rejoins the ISRs, and nothing acknowledged is lost."""
    c, shims = faulty_cluster("full-%d" % victim)
    disk = FullDisk(c.brokers[victim].log_dir, size_mb=24)
    faulty_cluster.disks.append(disk)
    s = start_stream(c)
    disk.fill()
    wait_stopped_on_failed_dir(c, victim)
    wait_until(lambda: all(victim not in c.state(TOPIC, p)["isr"] for p in range(PARTS)), timeout=15,
               what="broker %d out of every ISR" % victim)
    s.wait_progress(300, timeout=20)
    disk.heal()
    c.brokers[victim].start()
    check_no_loss(c, s)


# ---- clock ----------------------------------------------------------------------------------


def test_wall_clock_jumps_cost_no_session_election_or_record(faulty_ensemble, shim_dir):
    """The wall clock of the keeper leader and of a broker leader jumps an hour
    forward, then an hour back (from the true time), while an acks=all stream runs
    and a keeper client holds an ephemeral node: no session expires (the brokers'
    registrations and the client's node keep their owner), no keeper or partition
    election happens, the ISRs stay full, and no record is lost. Timers run on the
    monotonic clock; wall time only stamps data (record and znode times)."""
    ens, kshims = faulty_ensemble
    kleader = ens.leader()
    zxid_epoch = ens.zxid(kleader) >> 32
    bshims = shims_for(shim_dir, (1, 2, 3), "broker")
    c = ReplCluster(ens.hosts(), "/chaos-clock",
                    placement=lambda i: Placement(env=bshims[i].placement_env()))
    try:
        s = start_stream(c)
        zk = ens.client(all_hosts=True, timeout=4.0)
        zk.create("/holder", b"x", ephemeral=True)
        owner = zk.exists("/holder").ephemeralOwner
        regs = {i: c.zk.exists("/brokers/ids/%d" % i).ephemeralOwner for i in c.brokers}
        before = {p: c.state(TOPIC, p) for p in range(PARTS)}
        bleader = c.leader(TOPIC, 0)

        def steady():
            assert ens.leader() is kleader, "a keeper election happened"
            assert ens.zxid(kleader) >> 32 == zxid_epoch, "the keeper epoch moved"
            st = zk.exists("/holder")
            assert st is not None and st.ephemeralOwner == owner, "the client's session expired"
            for i in c.brokers:
                st = c.zk.exists("/brokers/ids/%d" % i)
                assert st is not None and st.ephemeralOwner == regs[i], "broker %d's session changed" % i
            for p in range(PARTS):
                now = c.state(TOPIC, p)
                assert (now["leader"], now["epoch"]) == (before[p]["leader"], before[p]["epoch"]), \
                    "partition %d was re-elected: %s" % (p, now)
                assert sorted(now["isr"]) == sorted(now["replicas"]), "partition %d's ISR shrank: %s" % (p, now)

        for offset in (HOUR_MS, -HOUR_MS):
            kshims[kleader.sid].clock_offset(offset)
            bshims[bleader].clock_offset(offset)
            # The jump took: the keeper leader stamps a new znode with its wall clock.
            path = zk.create("/stamp-", sequence=True)
            skew = zk.exists(path).ctime - time.time() * 1000
            assert abs(skew - offset) < 60000, "znode stamped %d ms off, not %d" % (skew, offset)
            # Watch for longer than a session (4 s) and the replica lag time (2.5 s),
            # with the stream acknowledging all the while.
            deadline = time.monotonic() + SESSION_MS / 1000.0 + 1.0
            while time.monotonic() < deadline:
                steady()
                s.wait_progress(20, timeout=10)
        kshims[kleader.sid].heal()
        bshims[bleader].heal()
        check_no_loss(c, s)
        steady()
    finally:
        errors = c.close()
    assert not errors, "\n".join(errors)
