"""Leader elections an operator asks for, and the periodic balance check:
`kipper elect --preferred` hands leadership back to the first replica of a
partition's list when it is live and in sync (a leader steps down, nothing
acknowledged is lost), auto.leader.rebalance.enable does the same by itself,
and `kipper elect --unclean` lets a partition whose ISR is gone elect the
out-of-sync replica that is left."""
import subprocess

import pytest

from harness import KIPPER, wait_until
from repl_cluster import LAG_MS, Stream, check_stream, cluster_maker


@pytest.fixture
def make_cluster(request, ensemble):
    yield from cluster_maker(request, ensemble, "elect", (1, 2, 3))


def elect(c, *args):
    return subprocess.run([KIPPER, "elect", "--zookeeper", c.hosts + c.chroot] + list(args), capture_output=True,
                          text=True, timeout=60)


def move_leadership_away(c, topic, partitions):
    """Broker 1 (every partition's preferred replica) stops and comes back: the
    others lead, and broker 1 is in every ISR again."""
    assert c.stop(1) == 0
    wait_until(lambda: all(c.leader(topic, p) not in (None, 1) for p in range(partitions)), timeout=30,
               what="new leaders")
    c.start_broker(1)
    c.wait_isr_full(topic, partitions)


def test_preferred_election_hands_leadership_back(make_cluster):
    c = make_cluster(extra={"auto.leader.rebalance.enable": "false"})
    c.create_topic("p", assignment=[[1, 2, 3], [1, 3, 2]], configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, "p", 2).start()
    s.wait_acked(200)
    move_leadership_away(c, "p", 2)
    out = elect(c, "--preferred", "--topic", "p")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Successfully completed leader election (PREFERRED) for partitions p-0, p-1" in out.stdout
    assert all(c.leader("p", p) == 1 for p in range(2))
    assert not c.zk.exists("/admin/preferred_replica_election")
    again = elect(c, "--preferred", "--all")
    assert again.returncode == 0 and "Valid replica already elected for partitions p-0, p-1" in again.stdout
    s.wait_progress(100)
    s.stop()
    assert not check_stream(s, c.read_all("p", 2))
    assert not s.errors, s.errors[:5]


def test_preferred_election_needs_the_preferred_replica_in_sync(make_cluster):
    c = make_cluster(extra={"auto.leader.rebalance.enable": "false"})
    c.create_topic("q", assignment=[[1, 2, 3]])
    move_leadership_away(c, "q", 1)
    before = c.leader("q", 0)
    c.pause(1)
    wait_until(lambda: 1 not in c.state("q", 0)["isr"], timeout=LAG_MS / 1000 + 15, what="broker 1 out of the ISR")
    out = elect(c, "--preferred", "--topic", "q", "--partition", "0")
    assert out.returncode == 1 and "Election not possible" in out.stdout and "q-0" in out.stdout
    assert c.leader("q", 0) == before
    c.resume(1)


def test_auto_rebalance_moves_leadership_back(make_cluster):
    c = make_cluster(extra={"leader.imbalance.check.interval.seconds": 1})
    c.create_topic("a", assignment=[[1, 2, 3], [1, 3, 2], [2, 3, 1]])
    move_leadership_away(c, "a", 3)
    wait_until(lambda: [c.leader("a", p) for p in range(3)] == [1, 1, 2], timeout=30,
               what="every partition led by its preferred replica again")


def test_unclean_election_of_a_named_partition(make_cluster):
    """The ISR is {1} alone (2 fell behind), then 1 dies: the partition stays
    offline, as unclean.leader.election.enable is false, until an operator
    names it; then broker 2 leads with what it has."""
    c = make_cluster(ids=(1, 2), extra={"unclean.leader.election.enable": "false", "min.insync.replicas": 1})
    c.create_topic("u", assignment=[[1, 2]])
    c.pause(2)
    wait_until(lambda: c.state("u", 0)["isr"] == [1], timeout=LAG_MS / 1000 + 15, what="broker 2 out of the ISR")
    c.kill(1)
    c.resume(2)
    wait_until(lambda: c.leader("u", 0) is None, timeout=15, what="broker 1's leadership to expire")
    refused = elect(c, "--unclean", "--topic", "u")
    assert refused.returncode == 2     # --unclean names one partition
    out = elect(c, "--unclean", "--topic", "u", "--partition", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Successfully completed leader election (UNCLEAN) for partitions u-0" in out.stdout
    assert c.leader("u", 0) == 2 and c.state("u", 0)["isr"] == [2]
    assert not c.zk.exists("/admin/unclean_leader_election")
    c.start_broker(1)


def test_an_unclean_election_ends_with_its_asker(make_cluster):
    """`kipper elect --unclean` dies while it waits (its partition has no live
    replica): its request goes with its coordinator session, so the out-of-sync
    replica that comes back afterwards does not lead on it, and the ISR member
    leads again when it returns."""
    c = make_cluster(ids=(1, 2), extra={"unclean.leader.election.enable": "false", "min.insync.replicas": 1})
    c.create_topic("w", assignment=[[1, 2]])
    c.pause(2)
    wait_until(lambda: c.state("w", 0)["isr"] == [1], timeout=LAG_MS / 1000 + 15, what="broker 2 out of the ISR")
    c.kill(2)
    c.kill(1)
    wait_until(lambda: c.leader("w", 0) is None, timeout=15, what="broker 1's leadership to expire")
    asker = subprocess.Popen([KIPPER, "elect", "--zookeeper", c.hosts + c.chroot, "--unclean", "--topic", "w",
                              "--partition", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: c.zk.exists("/admin/unclean_leader_election"), timeout=15, what="the election request")
    finally:
        asker.kill()
        asker.wait()
    wait_until(lambda: not c.zk.exists("/admin/unclean_leader_election"), timeout=40,
               what="the request to go with the dead asker's session")
    c.start_broker(2)
    wait_until(lambda: "replica of w-0 started" in c.brokers[2].log_since_start(), timeout=30,
               what="broker 2 to open its replica of w-0")
    c.start_broker(1)
    wait_until(lambda: c.leader("w", 0) == 1, timeout=30, what="broker 1, the ISR member, to lead again")
    assert "no replica of the ISR is alive" not in c.brokers[2].log_since_start()
