"""Kafka's admin APIs for moves and leaders, spoken byte by byte from the
protocol (kafka_wire.py): AlterPartitionReassignments starts and cancels
moves, ListPartitionReassignments shows them in progress with their adding and
removing replicas, ElectLeaders hands leadership to the preferred replica or
lets a leaderless partition elect outside its ISR. Every request goes to any
broker, which writes the same coordinator nodes `kipper reassign` and
`kipper elect` write."""
import pytest

from harness import wait_until
from kafka_wire import KafkaConn
from repl_cluster import LAG_MS, Stream, check_stream, cluster_maker
from test_reassignment import wait_folders, wait_moved

NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT, INVALID_REQUEST = 0, 3, 39, 42
PREFERRED_LEADER_NOT_AVAILABLE, ELECTION_NOT_NEEDED, NO_REASSIGNMENT_IN_PROGRESS = 80, 84, 85


@pytest.fixture
def make_cluster(request, ensemble):
    yield from cluster_maker(request, ensemble, "admin-api", (1, 2, 3, 4))


def test_a_move_through_the_api_under_traffic(make_cluster):
    c = make_cluster()
    c.create_topic("m", assignment=[[1, 2, 3]], configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, "m", 1).start()
    s.wait_acked(200)
    with c.conn(4) as conn:     # any broker takes it, here one the partition is not on
        error, results = conn.alter_partition_reassignments({("m", 0): [2, 3, 4]})
    assert error == NONE and results == {("m", 0): (NONE, None)}
    wait_moved(c, "m", 0, [2, 3, 4])
    with c.conn(1) as conn:
        assert conn.list_partition_reassignments() == (NONE, {})
    wait_folders(c, "m", 0, {2, 3, 4})
    s.wait_progress(100)
    s.stop()
    assert not check_stream(s, c.read_all("m", 1))
    assert not s.errors, s.errors[:5]


def test_a_move_in_progress_is_listed_and_cancelled(make_cluster):
    c = make_cluster()
    c.create_topic("w", assignment=[[1, 2, 3], [2, 3, 1]])
    c.pause(4)     # registered still, but it cannot catch up: the move waits for it
    with c.conn(1) as conn:
        error, results = conn.alter_partition_reassignments({("w", 0): [4, 2, 3]})
        assert error == NONE and results == {("w", 0): (NONE, None)}
        assert conn.list_partition_reassignments() == (NONE, {("w", 0): ([4, 2, 3, 1], [4], [1])})
        assert conn.list_partition_reassignments({"w": [0, 1], "other": [0]}) == (
            NONE, {("w", 0): ([4, 2, 3, 1], [4], [1])})
        assert conn.list_partition_reassignments({"w": [1]}) == (NONE, {})
        assert c.zk.exists("/brokers/partitions_reassigned/w/0")
        described = c.brokers[1].topics_cli("--describe", "--topic", "w").stdout
        line = [x for x in described.splitlines() if "Partition: 0\t" in x][0]
        assert "\tReplicas: 4,2,3,1\tIsr: 1,2,3\tAdding Replicas: 4\tRemoving Replicas: 1\t" in line, described
        assert "Adding" not in [x for x in described.splitlines() if "Partition: 1\t" in x][0]
        error, results = conn.alter_partition_reassignments({("w", 0): None, ("w", 1): None})
        assert error == NONE
        assert results[("w", 0)] == (NONE, None)
        assert results[("w", 1)][0] == NO_REASSIGNMENT_IN_PROGRESS
        assert conn.list_partition_reassignments() == (NONE, {})
    assert not c.zk.exists("/brokers/partitions_reassigned/w/0")
    c.resume(4)
    assert c.state("w", 0)["replicas"] == [1, 2, 3]
    wait_folders(c, "w", 0, {1, 2, 3})   # broker 4 drops the replica it had started


def test_a_new_target_replaces_a_move_and_the_current_list_ends_it(make_cluster):
    c = make_cluster()
    c.create_topic("r", assignment=[[1, 2, 3]])
    c.pause(4)
    with c.conn(2) as conn:
        assert conn.alter_partition_reassignments({("r", 0): [1, 2, 4]})[1][("r", 0)][0] == NONE
        assert conn.list_partition_reassignments()[1][("r", 0)] == ([1, 2, 4, 3], [4], [3])
        # Asking for the list the partition has is asking for no move.
        assert conn.alter_partition_reassignments({("r", 0): [1, 2, 3]})[1][("r", 0)][0] == NONE
        assert conn.list_partition_reassignments() == (NONE, {})
        # A new order of the same brokers is a move too: the preferred leader changes.
        c.resume(4)
        assert conn.alter_partition_reassignments({("r", 0): [3, 1, 2]})[1][("r", 0)][0] == NONE
    wait_moved(c, "r", 0, [3, 1, 2])


def test_bad_moves_are_refused_and_change_nothing(make_cluster):
    c = make_cluster(ids=(1, 2, 3))
    c.create_topic("b", assignment=[[1, 2], [2, 3]])
    with c.conn(1) as conn:
        error, results = conn.alter_partition_reassignments({
            ("b", 0): [1, 1],          # a broker twice
            ("b", 1): [2, 9],          # a broker that is not registered
            ("b", 7): [1, 2],          # no such partition
            ("nope", 0): [1, 2],       # no such topic
        })
        assert error == NONE
        assert {k: e for k, (e, _) in results.items()} == {
            ("b", 0): INVALID_REPLICA_ASSIGNMENT, ("b", 1): INVALID_REPLICA_ASSIGNMENT,
            ("b", 7): UNKNOWN_TOPIC_OR_PARTITION, ("nope", 0): UNKNOWN_TOPIC_OR_PARTITION}
        assert all(msg for _, msg in results.values())
        assert conn.alter_partition_reassignments({("b", 0): []})[1][("b", 0)][0] == INVALID_REPLICA_ASSIGNMENT
    assert not c.zk.exists("/brokers/partitions_reassigned/b/0")
    assert [c.state("b", p)["replicas"] for p in range(2)] == [[1, 2], [2, 3]]


def move_leadership_away(c, topic, partitions):
    assert c.stop(1) == 0
    wait_until(lambda: all(c.leader(topic, p) not in (None, 1) for p in range(partitions)), timeout=30,
               what="new leaders")
    c.start_broker(1)
    c.wait_isr_full(topic, partitions)


def test_preferred_election_through_the_api(make_cluster):
    c = make_cluster(ids=(1, 2, 3), extra={"auto.leader.rebalance.enable": "false"})
    c.create_topic("e", assignment=[[1, 2, 3], [1, 3, 2], [2, 3, 1]])
    s = Stream(c.bootstrap, "e", 3).start()
    s.wait_acked(200)
    move_leadership_away(c, "e", 3)
    with c.conn(3) as conn:
        error, results = conn.elect_leaders({"e": [0, 1, 1, 2], "gone": [0]})
        assert error == NONE
        assert {k: e for k, (e, _) in results.items()} == {
            ("e", 0): NONE, ("e", 1): NONE, ("e", 2): ELECTION_NOT_NEEDED, ("gone", 0): UNKNOWN_TOPIC_OR_PARTITION}
        assert [c.leader("e", p) for p in range(3)] == [1, 1, 2]
        assert conn.elect_leaders(None) == (NONE, {})   # all: nothing left to elect
    wait_until(lambda: not c.zk.exists("/admin/preferred_replica_election"), timeout=10,
               what="the election's node deleted")
    s.wait_progress(100)
    s.stop()
    assert not check_stream(s, c.read_all("e", 3))
    assert not s.errors, s.errors[:5]


def test_preferred_election_needs_the_preferred_replica_in_sync(make_cluster):
    c = make_cluster(ids=(1, 2, 3), extra={"auto.leader.rebalance.enable": "false"})
    c.create_topic("f", assignment=[[1, 2, 3]])
    move_leadership_away(c, "f", 1)
    before = c.leader("f", 0)
    c.pause(1)
    wait_until(lambda: 1 not in c.state("f", 0)["isr"], timeout=LAG_MS / 1000 + 15, what="broker 1 out of the ISR")
    with c.conn(before) as conn:
        error, results = conn.elect_leaders({"f": [0]})
    assert error == NONE and results[("f", 0)][0] == PREFERRED_LEADER_NOT_AVAILABLE
    assert c.leader("f", 0) == before
    c.resume(1)


def test_unclean_election_through_the_api(make_cluster):
    c = make_cluster(ids=(1, 2), extra={"unclean.leader.election.enable": "false", "min.insync.replicas": 1})
    c.create_topic("u", assignment=[[1, 2]])
    c.pause(2)
    wait_until(lambda: c.state("u", 0)["isr"] == [1], timeout=LAG_MS / 1000 + 15, what="broker 2 out of the ISR")
    c.kill(1)
    c.resume(2)
    wait_until(lambda: c.leader("u", 0) is None, timeout=15, what="broker 1's leadership to expire")
    with c.conn(2) as conn:
        assert conn.elect_leaders({"u": [0]}, unclean=True) == (NONE, {("u", 0): (NONE, None)})
        assert c.leader("u", 0) == 2 and c.state("u", 0)["isr"] == [2]
        error, results = conn.elect_leaders({"u": [0]}, unclean=True)
        assert results[("u", 0)][0] == ELECTION_NOT_NEEDED
    wait_until(lambda: not c.zk.exists("/admin/unclean_leader_election"), timeout=10,
               what="the election's node deleted")
    c.start_broker(1)
