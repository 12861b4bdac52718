"""Nemesis schedules: the faults the suite puts a running cluster through.

A schedule is a function (nem, target) that injects faults through `nem` and
returns once they are healed; `target` is (topic, partition), the partition
whose leader the schedule aims at (None when no broker workload runs).
SCHEDULES names each with the workloads that run under it: the broker's, the
keeper's, or both at once (faults that hit the keepers are checked from the
brokers' side and from the keeper's own clients in the same run). Fault lengths are the schedule's inputs, in
units of the brokers' coordinator session (nem.session_s): a fault has to last
past the session timeout to make the coordinator act. Every random choice comes
from nem.rng, seeded by the run, so a seed replays the same faults.

Each fault is recorded as (label, start, end) in nem.faults (monotonic times),
for the report's unavailability windows and its plot.
"""
import contextlib
import random
import time

from cluster import BROKERS, KEEPERS, broker_host, keeper_host
from net import TEST


class Nemesis:
    def __init__(self, cluster, seed, session_s, lag_s, scale=1.0):
        """scale stretches every fault (the long runs of `make chaos` use > 1)."""
        self.c = cluster
        self.rng = random.Random(seed)
        self.session_s = session_s
        self.lag_s = lag_s
        self.scale = scale
        self.faults = []

    @contextlib.contextmanager
    def fault(self, label):
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.faults.append((label, t0, time.monotonic()))

    def hold(self, seconds):
        """Let a fault last: the length of a fault is what the schedule sets, not a
        condition to wait for."""
        time.sleep(seconds * self.scale)

    def leader(self, target):
        """The broker id leading the target partition (waiting for one)."""
        deadline = time.monotonic() + 30
        while True:
            ld = self.c.leader_of(*target)
            if ld is not None:
                return ld
            if time.monotonic() > deadline:
                raise AssertionError("no leader of %s-%d" % target)
            time.sleep(0.1)

    def hold_until(self, gone, seconds):
        """Let a fault last until gone() (a process stopped by it), at most `seconds`."""
        deadline = time.monotonic() + seconds * self.scale
        while not gone() and time.monotonic() < deadline:
            time.sleep(0.05)

    def keeper_leader(self):
        deadline = time.monotonic() + 30
        while True:
            sid = self.c.keeper_leader()
            if sid is not None:
                return sid
            if time.monotonic() > deadline:
                raise AssertionError("no keeper leader")
            time.sleep(0.1)


# ---- network ------------------------------------------------------------------------------


def leader_cut_from_coordinator(nem, target):
    """The partition leader loses every keeper but still reaches its followers and
    clients (the case where Kafka 0.8 lost acknowledged writes)."""
    b = broker_host(nem.leader(target))
    with nem.fault("%s cut from the keepers" % b):
        for k in KEEPERS:
            nem.c.net.cut(b, k)
        nem.hold(nem.session_s * 2)
        nem.c.net.heal()


def _leader_from_followers(nem, target, both, label):
    i = nem.leader(target)
    with nem.fault("b%d %s" % (i, label)):
        for j in BROKERS:
            if j != broker_host(i):
                nem.c.net.cut(broker_host(i), j, both=both)
        nem.hold(nem.lag_s * 3)
        nem.c.net.heal()


def leader_cut_from_followers(nem, target):
    """The leader loses its followers but keeps the coordinator and its clients."""
    _leader_from_followers(nem, target, True, "cut from the other brokers")


def leader_one_way(nem, target):
    """What the leader sends to its followers vanishes; what they send arrives."""
    _leader_from_followers(nem, target, False, "-> followers cut one way")


def leader_cut_from_clients(nem, target):
    """The leader loses the clients only (cluster links intact)."""
    b = broker_host(nem.leader(target))
    with nem.fault("%s cut from the clients" % b):
        nem.c.net.cut(b, TEST)
        nem.hold(nem.session_s)
        nem.c.net.heal()


def keeper_split_2_1(nem, target):
    """The keeper leader alone on one side, the other two members on the other;
    brokers reach everyone."""
    sid = nem.keeper_leader()
    rest = [keeper_host(s) for s in (1, 2, 3) if s != sid]
    with nem.fault("keepers split k%d | %s" % (sid, " ".join(rest))):
        nem.c.net.partition([keeper_host(sid)], rest)
        nem.hold(nem.session_s * 2)
        nem.c.net.heal()


def keeper_split_1_1_1(nem, target):
    """No two keeper members reach each other: no quorum anywhere."""
    with nem.fault("keepers split k1 | k2 | k3"):
        nem.c.net.partition(["k1"], ["k2"], ["k3"])
        nem.hold(nem.session_s * 1.5)
        nem.c.net.heal()


def bridge(nem, target):
    """Two halves, {k1, b1} and {k3, b3}, and {k2, b2} seeing both (Jepsen's bridge)."""
    with nem.fault("bridge: k1 b1 | k2 b2 | k3 b3"):
        nem.c.net.partition(["k1", "b1"], ["k3", "b3"])
        nem.hold(nem.session_s * 2)
        nem.c.net.heal()


def slow_network(nem, target):
    """30-50 ms latency and 5 % loss on every link between servers."""
    hosts = list(KEEPERS) + list(BROKERS)
    with nem.fault("every server link: 30-50 ms, 5 % loss"):
        for a in hosts:
            for b in hosts:
                if a < b:
                    nem.c.net.slow(a, b, delay_ms=30, jitter_ms=20, loss=0.05)
        nem.hold(nem.session_s * 1.5)
        nem.c.net.heal()


# ---- processes ----------------------------------------------------------------------------


def pause_leader(nem, target):
    """SIGSTOP the partition leader past its coordinator session, then SIGCONT."""
    i = nem.leader(target)
    with nem.fault("b%d paused" % i):
        nem.c.pause_broker(i)
        nem.hold(nem.session_s * 1.5)
        nem.c.resume_broker(i)


def kill_random(nem, target):
    """kill -9 of a random broker and a random keeper member; restarted after."""
    i = nem.rng.choice([1, 2, 3])
    sid = nem.rng.choice([1, 2, 3])
    with nem.fault("kill -9 b%d and k%d" % (i, sid)):
        nem.c.kill_broker(i)
        nem.c.kill_keeper(sid)
        nem.hold(nem.session_s)
        nem.c.recover()


# ---- disks and clocks ---------------------------------------------------------------------


def leader_disk_fails(nem, target):
    """Every fsync of the partition leader fails (EIO): it must stop rather than go on
    acknowledging what its disk may have dropped; restarted once the disk heals."""
    i = nem.leader(target)
    b = nem.c.broker(i)
    with nem.fault("b%d fsync fails" % i):
        nem.c.shims[broker_host(i)].fsync_fail()
        nem.hold_until(lambda: not b.alive(), nem.session_s * 3)
        nem.c.recover()


def leader_disk_slow(nem, target):
    """Every fsync of the partition leader takes 2 s (a dying disk): acks=all does not
    wait for the leader's fsync, so writes go on; nothing is lost."""
    i = nem.leader(target)
    with nem.fault("b%d fsync takes 2 s" % i):
        nem.c.shims[broker_host(i)].fsync_slow(2000)
        nem.hold(nem.session_s * 2)
        nem.c.shims[broker_host(i)].heal()


def follower_disk_full(nem, target):
    """A follower's log folder fills up (ENOSPC)."""
    leader = nem.leader(target)
    j = nem.rng.choice([i for i in (1, 2, 3) if i != leader])
    b = nem.c.broker(j)
    with nem.fault("b%d disk full" % j):
        nem.c.disks[j].fill()
        nem.hold_until(lambda: not b.alive(), nem.lag_s * 3)
        nem.c.recover()


def keeper_disk_fails(nem, target):
    """Every fsync of the keeper leader fails (EIO)."""
    sid = nem.keeper_leader()
    m = nem.c.keeper(sid)
    with nem.fault("k%d fsync fails" % sid):
        nem.c.shims[keeper_host(sid)].fsync_fail()
        nem.hold_until(lambda: not m.running(), nem.session_s * 2)
        nem.c.recover()


def keeper_disk_slow(nem, target):
    """Every fsync of the keeper leader takes 1 s: writes wait for a quorum's fsync, so
    they slow down; nothing may be lost or reordered."""
    sid = nem.keeper_leader()
    with nem.fault("k%d fsync takes 1 s" % sid):
        nem.c.shims[keeper_host(sid)].fsync_slow(1000)
        nem.hold(nem.session_s * 2)
        nem.c.shims[keeper_host(sid)].heal()


def clock_jumps(nem, target):
    """The wall clocks of the partition leader and of the keeper leader jump an hour
    forward, then an hour back (monotonic clocks go on)."""
    hosts = [broker_host(nem.leader(target)), keeper_host(nem.keeper_leader())]
    with nem.fault("clocks of %s +1 h, then -1 h" % " and ".join(hosts)):
        for offset in (3600 * 1000, -3600 * 1000):
            for h in hosts:
                nem.c.shims[h].clock_offset(offset)
            nem.hold(nem.session_s)
        for h in hosts:
            nem.c.shims[h].heal()


# ---- mixes --------------------------------------------------------------------------------

BROKER, KEEPER, BOTH = ("broker",), ("keeper",), ("broker", "keeper")
BROKER_FAULTS = {
    "leader-cut-from-coordinator": (leader_cut_from_coordinator, BROKER),
    "leader-cut-from-followers": (leader_cut_from_followers, BROKER),
    "leader-one-way": (leader_one_way, BROKER),
    "leader-cut-from-clients": (leader_cut_from_clients, BROKER),
    "keeper-split-2-1": (keeper_split_2_1, BOTH),
    "keeper-split-1-1-1": (keeper_split_1_1_1, BOTH),
    "bridge": (bridge, BOTH),
    "slow-network": (slow_network, BOTH),
    "pause-leader": (pause_leader, BROKER),
    "kill-random": (kill_random, BOTH),
    "leader-disk-fails": (leader_disk_fails, BROKER),
    "leader-disk-slow": (leader_disk_slow, BROKER),
    "follower-disk-full": (follower_disk_full, BROKER),
    "keeper-disk-fails": (keeper_disk_fails, BOTH),
    "keeper-disk-slow": (keeper_disk_slow, BOTH),
    "clock-jumps": (clock_jumps, BOTH),
}


def random_mix(nem, target, faults=3):
    """`faults` of the schedules above drawn at random (by the seed), one after the
    other, with the cluster recovered between them."""
    names = sorted(BROKER_FAULTS)
    for _ in range(faults):
        BROKER_FAULTS[nem.rng.choice(names)][0](nem, target)
        nem.c.recover()


# ---- the keeper ensemble on its own (the keeper workload's schedules) -----------------------


def pause_keeper_leader(nem, target):
    """SIGSTOP the keeper leader past the clients' sessions, then SIGCONT."""
    sid = nem.keeper_leader()
    with nem.fault("k%d paused" % sid):
        nem.c.pause_keeper(sid)
        nem.hold(nem.session_s * 2)
        nem.c.resume_keeper(sid)


def kill_keeper(nem, target):
    """kill -9 of a random member (the leader or not); restarted after."""
    sid = nem.rng.choice([1, 2, 3])
    with nem.fault("kill -9 k%d" % sid):
        nem.c.kill_keeper(sid)
        nem.hold(nem.session_s)
        nem.c.recover()


def keeper_leader_cut_from_clients(nem, target):
    """The keeper leader loses its clients but not its followers."""
    sid = nem.keeper_leader()
    with nem.fault("k%d cut from the clients" % sid):
        nem.c.net.cut(keeper_host(sid), TEST)
        nem.hold(nem.session_s * 1.5)
        nem.c.net.heal()


def keeper_clock_jumps(nem, target):
    """Every member's wall clock an hour forward, then an hour back."""
    with nem.fault("keeper clocks +1 h, then -1 h"):
        for offset in (3600 * 1000, -3600 * 1000):
            for h in KEEPERS:
                nem.c.shims[h].clock_offset(offset)
            nem.hold(nem.session_s)
        for h in KEEPERS:
            nem.c.shims[h].heal()


@contextlib.contextmanager
def _client(ens, via, super_user=False):
    """A kazoo client on member `via` alone (the super user's: it may reconfig),
    stopped and closed on leaving."""
    c = ens.super_client(via) if super_user else ens.client(via)
    try:
        yield c
    finally:
        c.stop()
        c.close()


def _config_ids(ens, via):
    """The voters of /zookeeper/config as `via` reads it after a sync (once it
    serves again); recorded in the ensemble (mark_config), so that its waits
    count the current members."""
    def read():
        try:
            with _client(ens, via) as c:
                c.sync("/")
                return c.get("/zookeeper/config")[0].decode()
        except Exception:       # not serving yet: asked again
            return None
    return ens.mark_config(ens.poll(read, timeout=60, what="/zookeeper/config on k%d" % via.sid))


def reconfig_under_kills(nem, target, rounds=2):
    """A follower removed and added back by reconfig, each time with the keeper
    leader killed (kill -9) a random 0-40 ms after the request went out, through
    the third member: the reconfig dies unproposed, pending (logged by some,
    committed by none) or just committed, while the workload writes on. The
    killed leader is restarted on its files; a reconfig that did not happen is
    asked again. Needs an ensemble with reconfigEnabled (RECONFIG_SCHEDULES)."""
    ens = nem.c.ens
    for _ in range(rounds):
        leader = nem.keeper_leader()
        x = nem.rng.choice([s for s in (1, 2, 3) if s != leader])
        via = next(m for m in ens if m.sid not in (leader, x))
        for joins in (False, True):
            args = (ens.joining(ens.member(x)), None, None) if joins else (None, str(x), None)
            with _client(ens, via, super_user=True) as admin:
                admin.reconfig_async(*args, from_config=-1)
                time.sleep(nem.rng.uniform(0, 0.04))
                with nem.fault("k%d %s by reconfig, k%d killed" % (x, "joins" if joins else "leaves", leader)):
                    nem.c.kill_keeper(leader)
                    nem.hold(nem.session_s)
                    ens.start(nem.c.keeper(leader), wait=False)     # on the files it left
            if (x in _config_ids(ens, via)) != joins:
                with _client(ens, via, super_user=True) as admin:
                    admin.reconfig(*args, from_config=-1)
                assert (x in _config_ids(ens, via)) == joins, "k%d could not %s" % (x, "join" if joins else "leave")
            ens.wait_ready()
            leader = nem.keeper_leader()


KEEPER_FAULTS = {
    "keeper-split-2-1": keeper_split_2_1,
    "keeper-split-1-1-1": keeper_split_1_1_1,
    "bridge": bridge,
    "pause-keeper-leader": pause_keeper_leader,
    "kill-keeper": kill_keeper,
    "keeper-leader-cut-from-clients": keeper_leader_cut_from_clients,
    "keeper-disk-fails": keeper_disk_fails,
    "keeper-disk-slow": keeper_disk_slow,
    "keeper-clock-jumps": keeper_clock_jumps,
}


def keeper_random_mix(nem, target, faults=3):
    """`faults` keeper faults drawn at random, the ensemble recovered between them."""
    names = sorted(KEEPER_FAULTS)
    for _ in range(faults):
        KEEPER_FAULTS[nem.rng.choice(names)](nem, target)
        nem.c.recover()


# name -> (schedule, the workloads that run under it)
SCHEDULES = dict(BROKER_FAULTS)
SCHEDULES["random-mix"] = (random_mix, BOTH)
SCHEDULES.update({
    "pause-keeper-leader": (pause_keeper_leader, KEEPER),
    "kill-keeper": (kill_keeper, KEEPER),
    "keeper-leader-cut-from-clients": (keeper_leader_cut_from_clients, KEEPER),
    "keeper-clock-jumps": (keeper_clock_jumps, KEEPER),
    "keeper-random-mix": (keeper_random_mix, KEEPER),
    "reconfig-under-kills": (reconfig_under_kills, KEEPER),
})
# Schedules that need an ensemble with reconfigEnabled (ChaosCluster(reconfig=True)).
RECONFIG_SCHEDULES = ("reconfig-under-kills",)
