"""The fault suite's short version (`make test`): every schedule of nemesis.py
once, at its shortest, on one cluster of three keepers and three brokers, each
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
from cluster import ChaosCluster
from nemesis import SCHEDULES

SEED = 1013
ON_ZOOKEEPER = ("leader-cut-from-coordinator",)


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


def _check(cluster, name, keeper=True):
    run = run_schedule(cluster, name, SEED, keeper=keeper)
    rows = [r for r in (run.broker_row, run.keeper_row) if r]
    assert not run.problems, "%s (seed %d): %s\nrows: %s\n%s" % (
        name, SEED, "\n".join(run.problems[:10]), rows, cluster.logs()[-20000:])
    if run.broker:
        assert run.broker.acked > 0 and run.broker.lost == run.broker.dirty == run.broker.stale == 0, rows
    if run.keeper:
        assert run.keeper.counts["ok"] > 0 and run.keeper.passed, rows


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_on_kipper_keepers(kipper_cluster, name):
    _check(kipper_cluster, name)


@pytest.mark.parametrize("name", ON_ZOOKEEPER)
def test_broker_schedule_on_apache_zookeeper(zookeeper_cluster, name):
    _check(zookeeper_cluster, name, keeper=False)
