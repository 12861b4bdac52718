"""The fault suite's short version (`make test`): every broker schedule of
nemesis.py once, at its shortest, on one cluster of three keepers and three
brokers, each server on a host of its own (network namespaces joined by
netswitch.py); a few schedules again with a 3-member Apache ZooKeeper 3.8
ensemble as the coordinator. Each run: two idempotent acks=all producers and a
consumer group, the faults, recovery, then the checker -- nothing acknowledged
lost, no dirty read, no committed offset going back, replicas byte-identical up
to the HW. Rows and plots go to build/chaos/ (report.md)."""
import pytest

import apache_zk
from chaos_run import OUT, run_broker_schedule
from cluster import ChaosCluster
from nemesis import SCHEDULES

SEED = 1013
ON_ZOOKEEPER = ("leader-cut-from-coordinator", "keeper-split-2-1", "kill-random")


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


def _check(cluster, name):
    row, result = run_broker_schedule(cluster, name, SEED, out=OUT)
    assert not result.problems, "%s (seed %d): %s\nrow: %s\n%s" % (
        name, SEED, "\n".join(result.problems[:10]), row, cluster.logs()[-20000:])
    assert result.lost == 0 and result.dirty == 0 and result.stale == 0, row
    assert result.acked > 0, row


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_on_kipper_keepers(kipper_cluster, name):
    _check(kipper_cluster, name)


@pytest.mark.parametrize("name", ON_ZOOKEEPER)
def test_schedule_on_apache_zookeeper(zookeeper_cluster, name):
    _check(zookeeper_cluster, name)
