"""The fault suite's short version (`make test`): every schedule of nemesis.py
but the random mixes once, at its shortest, on one cluster of three keepers and three brokers, each
server on a host of its own (network namespaces joined by netswitch.py), with
the workloads the schedule names: the broker's (two idempotent acks=all
producers and a consumer group), the keeper's (register, set, ephemerals and
watches), or both at once. One broker schedule (the leader cut from the coordinator) runs again with a 3-member
Apache ZooKeeper 3.8 ensemble as the coordinator. Each run passes when its
checkers find nothing: nothing acknowledged lost, no dirty read, no committed
offset going back, replicas byte-identical up to the HW; the keeper's
histories linearizable, no lost or phantom ephemeral, watches in order. Rows
and plots go to build/chaos/."""
import pytest

import apache_zk
from chaos_run import run_schedule
from cluster import ChaosCluster, broker_host
from harness import wait_until
from nemesis import RECONFIG_SCHEDULES, SCHEDULES

SEED = 1013
ON_ZOOKEEPER = ("leader-cut-from-coordinator",)
# Schedules that blackhole a leader's answers to its followers: a follower
# must give up on the silent fetch connection (replica.socket.timeout.ms,
# repl/fetcher.c) and reconnect, rather than wait out TCP's retransmission
# back-off after the heal (found by this suite; tests/README.md).
FOLLOWER_LINKS_CUT = ("leader-cut-from-followers", "leader-one-way")
GAVE_UP = "no answer within replica.socket.timeout.ms"


def _cluster(target):
    c = ChaosCluster(seed=SEED, target=target).start()
    try:
        yield c
    finally:
        errors = c.close()
        assert not errors, "\n".join(errors)


@pytest.fixture(scope="module")
def kipper_cluster():
    yield from _cluster("kipper")


@pytest.fixture(scope="module")
def zookeeper_cluster():
    if not apache_zk.available():
        pytest.fail("Apache ZooKeeper 3.8 is not installed (scripts/ensure-deps.sh test installs it)")
    yield from _cluster("zookeeper")


def _gave_up_count(cluster):
    return sum(b.log().count(GAVE_UP) for b in cluster.repl.brokers.values())


def _check(cluster, name, keeper=True):
    gave_up = _gave_up_count(cluster)
    run = run_schedule(cluster, name, SEED, keeper=keeper)
    rows = [r for r in (run.broker_row, run.keeper_row) if r]
    assert not run.problems, "%s (seed %d): %s\nrows: %s\n%s" % (
        name, SEED, "\n".join(run.problems[:10]), rows, cluster.logs()[-20000:])
    if run.broker:
        assert run.broker.acked > 0 and run.broker.lost == run.broker.dirty == run.broker.stale == 0, rows
    if run.keeper:
        assert run.keeper.counts["ok"] > 0 and run.keeper.passed, rows
    if name in FOLLOWER_LINKS_CUT:
        assert _gave_up_count(cluster) > gave_up, \
            "no follower gave up on its silent fetch connection to the cut-off leader"


# The random mixes string together faults each run on its own above, and the
# reconfig schedules need an ensemble of their own (reconfigEnabled); they run
# in `make chaos` only, to keep `make test` within its time budget.
LONG_ONLY = ("random-mix", "keeper-random-mix") + RECONFIG_SCHEDULES


@pytest.mark.parametrize("name", sorted(n for n in SCHEDULES if n not in LONG_ONLY))
def test_schedule_on_kipper_keepers(kipper_cluster, name):
    _check(kipper_cluster, name)


@pytest.mark.parametrize("name", ON_ZOOKEEPER)
def test_broker_schedule_on_apache_zookeeper(zookeeper_cluster, name):
    _check(zookeeper_cluster, name, keeper=False)


def test_leader_cut_from_coordinator_steps_aside_within_its_session(kipper_cluster):
    """The coordinator lease (repl/lease.c), found by the leader-cut-from-coordinator
    schedule: a leader cut off from every keeper, still reached by its clients and
    followers, stops serving clients once its session may have expired -- it closes
    their connections as a stopped broker would -- so they move to the leader elected
    meanwhile instead of waiting out their request time-out there. The stream of
    acks=all writes goes on during the cut; once healed, the old leader follows, and
    nothing acknowledged is lost."""
    from repl_cluster import Stream, check_stream
    c = kipper_cluster
    topic = "lease"
    c.repl.create_topic(topic, 1, 3)
    c.repl.wait_isr_full(topic, 1)
    s = Stream(c.repl.bootstrap, topic, 1, rate=300, name="lease").start()
    stopped = False
    try:
        s.wait_acked(100, timeout=30)
        st = c.repl.state(topic, 0)
        old = st["leader"]
        for k in ("k1", "k2", "k3"):
            c.net.cut(broker_host(old), k)
        try:
            def refuses_clients():
                try:
                    with c.repl.conn(old, timeout=5) as k:
                        k.metadata([topic])
                    return False
                except (ConnectionError, EOFError, OSError):
                    return True                     # closed: a client goes to another broker
            wait_until(refuses_clients, timeout=30, interval=0.2,
                       what="broker %d, cut from the keepers, to stop serving clients" % old)
            assert "coordinator lease lapsed" in c.broker(old).log()
            c.repl.wait_new_leader(topic, 0, st["epoch"], not_in=(old,), timeout=30)
            s.wait_progress(50, timeout=30)          # on the new leader, the cut still in place
        finally:
            c.net.heal()
        c.repl.wait_isr_full(topic, 1, timeout=60)
        stopped = True
        assert s.stop(flush_timeout=60) == 0, "messages without a delivery report"
        assert not s.errors, "delivery failed: %s" % s.errors[:5]
        problems = check_stream(s, c.repl.read_all(topic, 1))
        assert not problems, "\n".join(problems)
        c.repl.assert_replicas_identical(topic, 1)
    finally:
        if not stopped:
            s.stop(flush_timeout=5)
        c.recover()
