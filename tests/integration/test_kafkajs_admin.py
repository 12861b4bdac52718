"""Partition moves the way an admin client's user makes them: KafkaJS's admin
client (js/admin.js, KafkaJS 2.2.4 from the npm registry) on four brokers and
three keepers. alterPartitionReassignments moves a partition and every record
produced before (acks=all, confluent-kafka) is read back from the new replicas;
a target naming a broker that does not exist is refused with Kafka's error as
KafkaJS reports it, and nothing changes; listPartitionReassignments shows a
move waiting for a dead broker, the one it adds or one of the partition's own
that it keeps, and sending the partition's replicas ends it (KafkaJS cannot
send Kafka's cancel, a null replica list).

KafkaJS 2.2.4 has no ElectLeaders (its request table marks the API not
implemented and its admin client has no election method): elections are tested
over raw frames only (test_partition_admin_api.py)."""
import json
import os
import subprocess

import pytest

from harness import wait_until
from repl_cluster import SESSION_MS, cluster_maker, consume_all
from test_reassignment import wait_folders

JS_ADMIN = os.path.join(os.path.dirname(__file__), "js", "admin.js")


@pytest.fixture
def make_cluster(request, ensemble):
    yield from cluster_maker(request, ensemble, "kafkajs-admin", (1, 2, 3, 4))


# ---- KafkaJS ----

class KafkaJSFailed(Exception):
    """A KafkaJS admin call that failed; error is admin.js's description of it:
    {name, message, type, code, topic, partition, errors}."""

    def __init__(self, error):
        super().__init__(json.dumps(error))
        self.error = error


def kafkajs(c, method, arg, via=None):
    """KafkaJS's admin.<method>(arg) bootstrapped from the brokers in via (every
    broker by default): the result, or KafkaJSFailed."""
    brokers = via or list(c.brokers)
    bootstrap = ",".join(c.brokers[i].bootstrap for i in brokers)
    out = subprocess.run(["node", JS_ADMIN, bootstrap, method, json.dumps(arg)], capture_output=True, text=True,
                         timeout=90)
    if out.returncode != 0:
        try:
            error = json.loads(out.stderr.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise AssertionError("KafkaJS %s failed: %s" % (method, out.stderr))
        raise KafkaJSFailed(error)
    return json.loads(out.stdout)


def alter_reassignments(c, moves, via=None):
    """admin.alterPartitionReassignments: moves {(topic, partition): replicas}."""
    topics = {}
    for (topic, p), replicas in moves.items():
        topics.setdefault(topic, []).append({"partition": p, "replicas": replicas})
    return kafkajs(c, "alterPartitionReassignments",
                   {"topics": [{"topic": t, "partitionAssignment": a} for t, a in topics.items()]}, via)


def list_reassignments(c, partitions=None, via=None):
    """admin.listPartitionReassignments of {topic: [partitions]} (all when None):
    {(topic, partition): (replicas, adding, removing)}."""
    arg = {} if partitions is None else {"topics": [{"topic": t, "partitions": ps} for t, ps in partitions.items()]}
    got = kafkajs(c, "listPartitionReassignments", arg, via)
    return {(t["name"], p["partition"]): (p["replicas"], p["addingReplicas"], p["removingReplicas"])
            for t in got["topics"] for p in t["partitions"]}


def refused(error):
    """The partitions a KafkaJSAggregateError holds: [(name, type, code, topic, partition)]."""
    assert error["name"] == "KafkaJSAggregateError", error
    return [(e["name"], e["type"], e["code"], e["topic"], e["partition"]) for e in error["errors"]]


# ---- records ----

def produce(c, topic, partitions, n):
    """n records, round robin over the partitions, from an acks=all confluent-kafka
    producer: {(partition, offset): (key, value)} from the delivery reports."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 5})
    acked, errors = {}, []

    def report(err, m):
        if err is not None:
            errors.append(err)
        else:
            acked[(m.partition(), m.offset())] = (m.key(), m.value())
    for i in range(n):
        p.produce(topic, key=b"k%d" % i, value=b"record %d of %s" % (i, topic.encode()), partition=i % partitions,
                  on_delivery=report)
    assert p.flush(30) == 0
    assert not errors and len(acked) == n, errors[:5]
    return acked


def consume(c, topic, partitions, ends, timeout=30):
    """Every record of the partitions from offset 0 to ends[partition]:
    {(partition, offset): (key, value)}."""
    return {(p, o): (key, value) for p, o, key, value in consume_all(c.bootstrap, topic, partitions, ends,
                                                                         timeout=timeout, keys=True)}


def ends_of(records, partitions):
    return {p: 1 + max((o for q, o in records if q == p), default=-1) for p in range(partitions)}


def moving(topic, p):
    return "/brokers/partitions_reassigned/%s/%d" % (topic, p)


# ---- the tests ----

def test_a_move_through_kafkajs_keeps_every_record(make_cluster):
    c = make_cluster()
    c.create_topic("moved", assignment=[[1, 2, 3], [2, 3, 1]])
    produced = produce(c, "moved", 2, 200)
    # A few KiB to copy: the move would be over before KafkaJS lists it, unless
    # broker 4 waits a moment (paused, well within its session).
    c.pause(4)
    assert alter_reassignments(c, {("moved", 0): [1, 2, 4]}, via=[1]) is None
    assert list_reassignments(c, via=[1]) == {("moved", 0): ([1, 2, 4, 3], [4], [3])}
    c.resume(4)

    def moved():
        st = c.state("moved", 0)
        return st["replicas"] == [1, 2, 4] and sorted(st["isr"]) == [1, 2, 4] and not c.zk.exists(moving("moved", 0))
    wait_until(moved, timeout=40, what="moved-0 on [1, 2, 4] and its move node gone")
    wait_until(lambda: list_reassignments(c) == {}, timeout=20, what="KafkaJS to list no move")
    assert c.state("moved", 1)["replicas"] == [2, 3, 1]
    wait_folders(c, "moved", 0, {1, 2, 4})       # broker 3 deleted the replica it no longer has
    c.assert_replicas_identical("moved", 2)      # broker 4 holds what brokers 1 and 2 hold
    assert consume(c, "moved", 2, ends_of(produced, 2)) == produced


def test_kafkajs_gets_invalid_replica_assignment_for_a_broker_that_does_not_exist(make_cluster):
    c = make_cluster()
    c.create_topic("bad", assignment=[[1, 2, 3], [2, 3, 1]])
    produced = produce(c, "bad", 2, 20)
    with pytest.raises(KafkaJSFailed) as e:
        alter_reassignments(c, {("bad", 0): [1, 2, 9]})
    # Kafka's controller answers INVALID_REPLICA_ASSIGNMENT (39) for a target
    # adding a broker that is not alive; so does api_partition_admin.c.
    assert refused(e.value.error) == [
        ("KafkaJSAlterPartitionReassignmentsError", "INVALID_REPLICA_ASSIGNMENT", 39, "bad", 0)]
    assert list_reassignments(c) == {}
    assert not c.zk.exists("/brokers/partitions_reassigned/bad")
    assert [c.state("bad", p)["replicas"] for p in range(2)] == [[1, 2, 3], [2, 3, 1]]
    assert consume(c, "bad", 2, ends_of(produced, 2)) == produced


def test_a_move_waiting_for_a_dead_broker_is_listed_and_reverted_with_kafkajs(make_cluster):
    c = make_cluster()
    c.create_topic("wait", assignment=[[1, 2, 3], [2, 3, 1]])
    produced = produce(c, "wait", 2, 100)
    # Every KafkaJS call through broker 2: what one broker answers, the next
    # request to it sees (another broker's view may be a moment behind).
    via = [2]
    c.pause(4)          # registered, so the target is accepted, but it never catches up
    assert alter_reassignments(c, {("wait", 0): [1, 2, 4]}, via=via) is None
    c.kill(4)
    wait_until(lambda: 4 not in c.registered(), timeout=SESSION_MS / 1000 + 10,
               what="broker 4's registration to expire")
    in_progress = {("wait", 0): ([1, 2, 4, 3], [4], [3])}
    assert list_reassignments(c, via=via) == in_progress
    assert list_reassignments(c, {"wait": [0, 1], "other": [0]}, via=via) == in_progress
    assert list_reassignments(c, {"wait": [1]}, via=via) == {}
    assert c.state("wait", 0)["replicas"] == [1, 2, 3] and c.zk.exists(moving("wait", 0))

    # Kafka's cancel is a null replica list: KafkaJS 2.2.4 refuses to send one.
    with pytest.raises(KafkaJSFailed) as e:
        alter_reassignments(c, {("wait", 0): None}, via=via)
    assert e.value.error["name"] == "KafkaJSNonRetriableError", e.value.error
    assert e.value.error["message"].startswith("Invalid replica assignment: null"), e.value.error
    # An empty list is no cancel either: Kafka refuses it, and the move goes on.
    with pytest.raises(KafkaJSFailed) as e:
        alter_reassignments(c, {("wait", 0): []}, via=via)
    assert refused(e.value.error) == [
        ("KafkaJSAlterPartitionReassignmentsError", "INVALID_REPLICA_ASSIGNMENT", 39, "wait", 0)]
    assert list_reassignments(c, via=via) == in_progress

    # What a KafkaJS user can send: the replicas the partition had. Kafka's
    # controller cancels a move that way (a move back to the original
    # replicas), and kipper ends the move (docs/replication.md, Reassignment).
    assert alter_reassignments(c, {("wait", 0): [1, 2, 3]}, via=via) is None
    assert list_reassignments(c, via=via) == {}
    assert not c.zk.exists(moving("wait", 0))
    st = c.state("wait", 0)
    assert st["replicas"] == [1, 2, 3] and sorted(st["isr"]) == [1, 2, 3], st
    c.start_broker(4)
    wait_folders(c, "wait", 0, {1, 2, 3})
    assert consume(c, "wait", 2, ends_of(produced, 2)) == produced


def test_a_move_keeping_a_dead_replica_waits_for_it_and_is_reverted_with_kafkajs(make_cluster):
    """Kafka's controller asks only the brokers a target adds to be alive; the
    partition's own replicas may be down. A move that keeps one waits for it,
    and a KafkaJS user reverts the move by sending the replicas the partition
    has (kipper refused both while it asked every broker named to be live)."""
    c = make_cluster()
    c.create_topic("kept", assignment=[[1, 2, 3], [3, 1, 4]])
    produced = produce(c, "kept", 2, 100)
    c.kill(2)
    wait_until(lambda: 2 not in c.registered() and 2 not in c.state("kept", 0)["isr"],
               timeout=SESSION_MS / 1000 + 10, what="broker 2 gone from the cluster and the ISR")
    via = [1]
    assert alter_reassignments(c, {("kept", 0): [1, 2, 4]}, via=via) is None
    in_progress = {("kept", 0): ([1, 2, 4, 3], [4], [3])}
    assert list_reassignments(c, via=via) == in_progress
    # Adding a broker that is down is refused still, and changes nothing.
    with pytest.raises(KafkaJSFailed) as e:
        alter_reassignments(c, {("kept", 1): [3, 1, 2]}, via=via)
    assert refused(e.value.error) == [
        ("KafkaJSAlterPartitionReassignmentsError", "INVALID_REPLICA_ASSIGNMENT", 39, "kept", 1)]
    assert list_reassignments(c, via=via) == in_progress
    assert c.state("kept", 1)["replicas"] == [3, 1, 4]

    assert alter_reassignments(c, {("kept", 0): [1, 2, 3]}, via=via) is None
    assert list_reassignments(c, via=via) == {}
    assert not c.zk.exists(moving("kept", 0))
    assert c.state("kept", 0)["replicas"] == [1, 2, 3]
    c.start_broker(2)
    c.wait_isr_full("kept", 2)
    wait_folders(c, "kept", 0, {1, 2, 3})       # broker 4 dropped the replica it had started
    assert consume(c, "kept", 2, ends_of(produced, 2)) == produced
