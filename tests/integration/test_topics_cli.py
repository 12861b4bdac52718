"""`kipper topics`: topic administration straight in the coordinator, in the
manner of the ZooKeeper-based kafka-topics.sh.

Brokers are faked: a kazoo client registers ephemeral /brokers/ids/N with the
broker document, and kazoo reads back what the tool wrote (the nodes of
src/broker/coord/coord_data.h: /brokers/topics/[topic]/[partition]/replicas,
leader, ISR). Each test works
in its own chroot of the module's shared server, so the chroot handling of the
connect string is exercised everywhere; one test uses none. Runs against
kipper's keeper and, with KIPPER_TEST_TARGET=zookeeper, Apache ZooKeeper."""
import json
import re
import subprocess
import threading

import pytest
from kazoo.exceptions import NodeExistsError, NoNodeError

from harness import KIPPER

USAGE = "usage: kipper topics"
TOPIC_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")


def run_topics(connect, *args, timeout=60):
    """bin/kipper topics --zookeeper connect args...; the process is killed if
    it outlives timeout (subprocess.run does that)."""
    return subprocess.run([KIPPER, "topics", "--zookeeper", connect] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def broker_doc(broker_id):
    return json.dumps({"version": 4, "host": "127.0.0.1", "port": 9090 + broker_id,
                       "endpoints": ["PLAINTEXT://127.0.0.1:%d" % (9090 + broker_id)],
                       "timestamp": "1700000000000"}).encode()


def kafka_assignment(brokers, count, rf, start, shift, first=0):
    """Kafka's AdminUtils.assignReplicasToBrokersRackUnaware, as the reference."""
    n, out = len(brokers), {}
    for p in range(first, first + count):
        if p > 0 and p % n == 0:
            shift += 1
        f = (p + start) % n
        out[p] = [brokers[f]] + [brokers[(f + 1 + (shift + j) % (n - 1)) % n] for j in range(rf - 1)]
    return out


class Cluster:
    """One test's corner of the shared server: the chroot `root`, the connect
    string with it, and kazoo helpers on paths below it."""

    def __init__(self, server, zk, root):
        self.server, self.zk, self.root = server, zk, root
        self.connect = server.hosts + root

    def topics(self, *args, **kw):
        return run_topics(self.connect, *args, **kw)

    def register_brokers(self, *ids):
        for i in ids:
            self.zk.create(self.root + "/brokers/ids/%d" % i, broker_doc(i), ephemeral=True, makepath=True)

    def exists(self, path):
        return self.zk.exists(self.root + path) is not None

    def doc(self, path):
        return json.loads(self.zk.get(self.root + path)[0])

    def children(self, path):
        return sorted(self.zk.get_children(self.root + path))

    def assignment(self, topic):
        parts = [int(p) for p in self.children("/brokers/topics/" + topic)]
        return {p: self.doc("/brokers/topics/%s/%d/replicas" % (topic, p))["replicas"] for p in sorted(parts)}


@pytest.fixture
def cluster(request, shared_keeper, zk):
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:80]
    root = "/topics_cli/" + name
    if zk.exists(root):
        zk.delete(root, recursive=True)
    return Cluster(shared_keeper, zk, root)


def ok(result, stdout=None):
    assert result.returncode == 0, "exit %d, stderr: %s" % (result.returncode, result.stderr)
    assert "ZOO_" not in result.stderr, "the ZooKeeper client's log is not silenced: " + result.stderr
    if stdout is not None:
        assert result.stdout == stdout
    return result


def error(result, message):
    """The tool failed (exit 1) with kafka-topics.sh's error line naming the problem."""
    assert result.returncode == 1, "exit %d, stdout: %s, stderr: %s" % (result.returncode, result.stdout,
                                                                         result.stderr)
    assert result.stderr.startswith("Error while executing topic command : "), result.stderr
    assert message in result.stderr, result.stderr
    assert USAGE not in result.stderr
    return result


# ---- create ----

def test_create_with_automatic_assignment(cluster):
    cluster.register_brokers(1, 2, 3)
    ok(cluster.topics("--create", "--topic", "orders", "--partitions", "6", "--replication-factor", "2"),
       "Created topic orders.\n")
    topic = cluster.doc("/brokers/topics/orders")
    assert topic["version"] == 1 and topic["config"] == {}
    assert TOPIC_ID.match(topic["topic_id"]) and topic["topic_id"] != "A" * 22
    assignment = cluster.assignment("orders")
    # Exactly Kafka's assignment for one of the random (start, shift) pairs ...
    candidates = [kafka_assignment([1, 2, 3], 6, 2, s, h) for s in range(3) for h in range(3)]
    assert assignment in candidates, assignment
    # ... so every broker leads two partitions and no partition has a broker twice.
    leaders = [replicas[0] for replicas in assignment.values()]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3]
    assert all(len(set(r)) == 2 for r in assignment.values())
    # A partition node holds no data; leader and ISR are the brokers' to write.
    assert cluster.children("/brokers/topics/orders/0") == ["replicas"]


def test_replication_factor_larger_than_live_brokers(cluster):
    cluster.register_brokers(1)
    error(cluster.topics("--create", "--topic", "t", "--partitions", "2", "--replication-factor", "3"),
          "Replication factor: 3 larger than available brokers: 1.")
    assert not cluster.exists("/brokers/topics/t")
    # No broker at all: even the default replication factor of 1 cannot be placed.
    cluster.zk.delete(cluster.root + "/brokers/ids/1")
    error(cluster.topics("--create", "--topic", "t"), "Replication factor: 1 larger than available brokers: 0.")


def test_create_defaults_to_one_partition_one_replica(cluster):
    cluster.register_brokers(7)
    ok(cluster.topics("--create", "--topic", "t"), "Created topic t.\n")
    assert cluster.assignment("t") == {0: [7]}


def test_explicit_assignment(cluster):
    # Brokers need not be live for an explicit assignment (as kafka-topics.sh).
    ok(cluster.topics("--create", "--topic", "t", "--replica-assignment", "3:1,1:2,2:3,5:4"),
       "Created topic t.\n")
    assert cluster.assignment("t") == {0: [3, 1], 1: [1, 2], 2: [2, 3], 3: [5, 4]}


@pytest.mark.parametrize("assignment,message", [
    ("1:2,3", "Partition 1 has different replication factor"),
    ("1:1,2:3", "Partition replica lists may not contain duplicate entries: 1"),
    ("-1:2", "Invalid broker id -1 in the replica assignment of partition 0."),
])
def test_bad_explicit_assignment(cluster, assignment, message):
    error(cluster.topics("--create", "--topic", "t", "--replica-assignment", assignment), message)
    assert not cluster.exists("/brokers/topics/t")


def test_valid_configs(cluster):
    cluster.register_brokers(1)
    ok(cluster.topics("--create", "--topic", "t", "--config", "retention.ms=1000", "--config",
                      "cleanup.policy=delete", "--config", "max.message.bytes=2000", "--config",
                      "retention.ms=5000", "--config", "unclean.leader.election.enable=TRUE", "--config",
                      "compression.type=zstd", "--config", "message.timestamp.type=LogAppendTime"))
    # A name given twice keeps its last value, as kafka-topics.sh's Properties. The
    # overrides are in /config/topics/t, Kafka's place; the topic document's "config"
    # stays, empty, for older brokers to parse.
    assert cluster.doc("/brokers/topics/t")["config"] == {}
    assert cluster.doc("/config/topics/t") == {"version": 1, "config": {
        "retention.ms": "5000", "cleanup.policy": "delete", "max.message.bytes": "2000",
        "unclean.leader.election.enable": "TRUE", "compression.type": "zstd",
        "message.timestamp.type": "LogAppendTime"}}


def test_configs_kipper_does_not_act_on_are_stored_and_named(cluster):
    """Any of Kafka 3.x's topic configs is taken; those kipper does not act on are
    stored all the same and named in one log line (issue 15)."""
    cluster.register_brokers(1)
    given = {"cleanup.policy": "compact", "delete.retention.ms": "3600000", "min.cleanable.dirty.ratio": "0.2",
             "message.format.version": "2.8", "retention.ms": "5000"}
    out = ok(cluster.topics("--create", "--topic", "t", *[a for k, v in given.items() for a in ("--config",
                                                                                               "%s=%s" % (k, v))]))
    assert cluster.doc("/config/topics/t") == {"version": 1, "config": given}
    lines = [line for line in out.stderr.splitlines() if "not acted on" in line]
    assert len(lines) == 1 and "topic 't': delete.retention.ms, min.cleanable.dirty.ratio, message.format.version " \
        "accepted and stored, not acted on by kipper" in lines[0], out.stderr
    out = ok(cluster.topics("--alter", "--topic", "t", "--config", "preallocate=true", "--config", "retention.ms=6000"))
    assert cluster.doc("/config/topics/t")["config"]["preallocate"] == "true"
    assert "topic 't': preallocate accepted and stored, not acted on by kipper" in out.stderr, out.stderr


@pytest.mark.parametrize("config,message", [
    ("cleanup.policy=compact,none", "Invalid value none for configuration cleanup.policy: String must be one of: "
                                    "compact, delete"),
    ("cleanup.policy=bogus", "Invalid value bogus for configuration cleanup.policy: String must be one of: "
                             "compact, delete"),
    ("retention.ms=-2", "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
    ("retention.bytes=lots", "Invalid value lots for configuration retention.bytes: Not a number of type LONG"),
    ("segment.bytes=13", "Invalid value 13 for configuration segment.bytes: Value must be at least 14"),
    ("segment.bytes=2147483648", "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"),
    ("segment.ms=0", "Invalid value 0 for configuration segment.ms: Value must be at least 1"),
    ("min.insync.replicas=0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ("message.timestamp.type=createtime", "String must be one of: CreateTime, LogAppendTime"),
    ("unclean.leader.election.enable=yes", "Expected value to be either true or false"),
    ("compression.type=brotli", "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("no.such.config=1", "Unknown topic config name: no.such.config"),
    ("delete.retention.ms=-1", "Invalid value -1 for configuration delete.retention.ms: Value must be at least 0"),
    ("min.cleanable.dirty.ratio=2", "Invalid value 2 for configuration min.cleanable.dirty.ratio: Value must be no "
                                    "more than 1"),
    ("message.format.version=2.9", "Invalid value 2.9 for configuration message.format.version: Version 2.9 is not "
                                   "a valid version"),
    ("preallocate=maybe", "Invalid value maybe for configuration preallocate: Expected value to be either true or "
                          "false"),
    ("compression.gzip.level=10", "Value must be between 1 and 9 or equal to -1"),
])
def test_invalid_configs(cluster, config, message):
    cluster.register_brokers(1)
    error(cluster.topics("--create", "--topic", "t", "--config", config), message)
    assert not cluster.exists("/brokers/topics/t")


def test_duplicate_create_and_if_not_exists(cluster):
    cluster.register_brokers(1)
    ok(cluster.topics("--create", "--topic", "t", "--partitions", "2"))
    before = cluster.doc("/brokers/topics/t")
    error(cluster.topics("--create", "--topic", "t", "--partitions", "5"), "Topic 't' already exists.")
    ok(cluster.topics("--create", "--topic", "t", "--partitions", "5", "--if-not-exists"), "")
    assert cluster.doc("/brokers/topics/t") == before
    assert sorted(cluster.assignment("t")) == [0, 1]


def test_invalid_topic_names(cluster):
    cluster.register_brokers(1)
    error(cluster.topics("--create", "--topic", "a/b"),
          "Topic name \"a/b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'")
    error(cluster.topics("--create", "--topic", ".."), "Topic name cannot be \".\" or \"..\"")
    error(cluster.topics("--create", "--topic", "x" * 250), "it can't be longer than 249 characters")
    ok(cluster.topics("--create", "--topic", "x" * 249))


def test_many_partitions_in_one_transaction(cluster):
    cluster.register_brokers(1, 2)
    ok(cluster.topics("--create", "--topic", "big", "--partitions", "1000", "--replication-factor", "2"))
    assert len(cluster.children("/brokers/topics/big")) == 1000
    # More than one ZooKeeper request can carry is refused up front, with nothing written.
    error(cluster.topics("--create", "--topic", "huge", "--partitions", "10000"),
          "10000 partitions of topic 'huge' do not fit in one ZooKeeper transaction")
    assert not cluster.exists("/brokers/topics/huge")
    error(cluster.topics("--create", "--topic", "huge", "--partitions", "10001"),
          "Number of partitions 10001 is larger than kipper's limit of 10000.")
    # kafka-topics.sh's own checks of the counts come first.
    error(cluster.topics("--create", "--topic", "huge", "--partitions", "0"), "The partitions must be greater than 0")
    error(cluster.topics("--create", "--topic", "huge", "--partitions", "-1"), "The partitions must be greater than 0")
    error(cluster.topics("--alter", "--topic", "big", "--partitions", "-1"), "The partitions must be greater than 0")
    error(cluster.topics("--create", "--topic", "huge", "--replication-factor", "0"),
          "The replication factor must be between 1 and 32767")
    error(cluster.topics("--create", "--topic", "huge", "--replication-factor", "32768"),
          "The replication factor must be between 1 and 32767")
    error(cluster.topics("--create", "--topic", "huge", "--replication-factor", "65"),
          "Replication factor 65 is larger than kipper's limit of 64.")


# ---- list and describe ----

def test_list(cluster):
    ok(cluster.topics("--list"), "")
    for name in ("zeta", "alpha", "mid.dle"):
        ok(cluster.topics("--create", "--topic", name, "--replica-assignment", "1"))
    ok(cluster.topics("--list"), "alpha\nmid.dle\nzeta\n")
    ok(cluster.topics("--list", "--topic", "zeta"), "zeta\n")


def test_describe(cluster):
    cluster.register_brokers(1, 2, 3)
    ok(cluster.topics("--create", "--topic", "t", "--replica-assignment", "2:1,3:2", "--config", "retention.ms=1000"))
    topic_id = cluster.doc("/brokers/topics/t")["topic_id"]
    # What a leader would write: its ephemeral leader node and the ISR.
    cluster.zk.create(cluster.root + "/brokers/topics/t/0/leader", b'{"leader":2,"leader_epoch":3}', ephemeral=True)
    cluster.zk.create(cluster.root + "/brokers/topics/t/0/ISR", b'{"isr":[2,1],"leader_epoch":3}')
    expected = ("Topic: t\tTopicId: %s\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: retention.ms=1000\n"
                "\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 2,1\tIsr: 2,1\tLeaderEpoch: 3\n"
                "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 3,2\tIsr: \tLeaderEpoch: none\n" % topic_id)
    ok(cluster.topics("--describe", "--topic", "t"), expected)
    ok(cluster.topics("--create", "--topic", "u", "--replica-assignment", "1"))
    u_id = cluster.doc("/brokers/topics/u")["topic_id"]
    ok(cluster.topics("--describe"), expected + (
        "Topic: u\tTopicId: %s\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
        "\tTopic: u\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: \tLeaderEpoch: none\n" % u_id))


def partition_line(partition, leader, replicas, isr, epoch, topic="t"):
    return "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s\tLeaderEpoch: %s\n" % (
        topic, partition, leader, replicas, isr, epoch)


def test_describe_filters(cluster):
    """--under-replicated-partitions and --unavailable-partitions, as
    kafka-topics.sh: only the partitions that match (either, with both), and
    no topic line. Leader and ISR nodes are written as brokers write them."""
    cluster.register_brokers(1, 2)   # 3 is not registered
    ok(cluster.topics("--create", "--topic", "t", "--replica-assignment", "1:2:3,2:3:1,3:1:2,1:2:3,2:3:1"))
    base = cluster.root + "/brokers/topics/t/%d/"
    states = {   # partition: (leader node, ISR node); None = no node
        0: ({"leader": 1, "leader_epoch": 4}, {"isr": [1, 2, 3], "leader_epoch": 4}),   # healthy
        1: ({"leader": 2, "leader_epoch": 2}, {"isr": [2], "leader_epoch": 2}),         # under-replicated
        2: ({"leader": 3, "leader_epoch": 5}, {"isr": [3, 1, 2], "leader_epoch": 5}),   # leader not registered
        3: (None, {"isr": [1], "leader_epoch": 7}),                                      # leader gone
        4: (None, None),                                                                 # never led
    }
    for p, (leader, isr) in states.items():
        if leader:
            cluster.zk.create(base % p + "leader", json.dumps(leader).encode(), ephemeral=True)
        if isr:
            cluster.zk.create(base % p + "ISR", json.dumps(isr).encode())
    lines = [partition_line(0, 1, "1,2,3", "1,2,3", 4), partition_line(1, 2, "2,3,1", "2", 2),
             partition_line(2, 3, "3,1,2", "3,1,2", 5), partition_line(3, "none", "1,2,3", "1", 7),
             partition_line(4, "none", "2,3,1", "", "none")]
    full = ok(cluster.topics("--describe", "--topic", "t")).stdout
    assert full.startswith("Topic: t\tTopicId: ") and full.endswith("".join(lines))
    under = "".join(lines[i] for i in (1, 3, 4))
    unavailable = "".join(lines[i] for i in (2, 3, 4))
    ok(cluster.topics("--describe", "--under-replicated-partitions"), under)
    ok(cluster.topics("--describe", "--topic", "t", "--unavailable-partitions"), unavailable)
    ok(cluster.topics("--describe", "--unavailable-partitions", "--under-replicated-partitions"),
       "".join(lines[1:]))
    # Liveness is read from /brokers/ids: once broker 3 registers, its partition is available.
    cluster.register_brokers(3)
    ok(cluster.topics("--describe", "--unavailable-partitions"), "".join(lines[i] for i in (3, 4)))
    # A healthy topic shows nothing at all with a filter.
    ok(cluster.topics("--create", "--topic", "u", "--replica-assignment", "1"))
    cluster.zk.create(cluster.root + "/brokers/topics/u/0/leader", b'{"leader":1,"leader_epoch":0}', ephemeral=True)
    cluster.zk.create(cluster.root + "/brokers/topics/u/0/ISR", b'{"isr":[1],"leader_epoch":0}')
    ok(cluster.topics("--describe", "--topic", "u", "--under-replicated-partitions", "--unavailable-partitions"), "")


def test_describe_missing_topic(cluster):
    error(cluster.topics("--describe", "--topic", "nope"), "Topic 'nope' does not exist as expected")
    ok(cluster.topics("--describe", "--topic", "nope", "--if-exists"), "")


@pytest.mark.parametrize("path,data", [
    ("/brokers/topics/t/0/replicas", b"not json"),
    ("/brokers/topics/t/0/replicas", b'{"replicas":[1,1]}'),
    ("/brokers/topics/t/0/leader", b'{"leader":-5,"leader_epoch":0}'),
    ("/brokers/topics/t/0/ISR", b'{"isr":"1","leader_epoch":0}'),
    ("/brokers/topics/t", b'{"version":1,"topic_id":"short","config":{}}'),
    ("/brokers/topics/t", b"x" * 70000),
])
def test_describe_malformed_documents(cluster, path, data):
    ok(cluster.topics("--create", "--topic", "t", "--replica-assignment", "1"))
    full = cluster.root + path
    if cluster.zk.exists(full):
        cluster.zk.set(full, data)
    else:
        cluster.zk.create(full, data)
    error(cluster.topics("--describe", "--topic", "t"), path)


# ---- alter ----

def test_alter_grows_partitions_continuing_kafkas_pattern(cluster):
    cluster.register_brokers(1, 2, 3)
    ok(cluster.topics("--create", "--topic", "t", "--partitions", "2", "--replication-factor", "3"))
    before = cluster.assignment("t")
    out = ok(cluster.topics("--alter", "--topic", "t", "--partitions", "5")).stdout
    assert out.endswith("Adding partitions succeeded!\n")
    after = cluster.assignment("t")
    assert sorted(after) == [0, 1, 2, 3, 4]
    assert {p: after[p] for p in (0, 1)} == before
    # Kafka's AdminZkClient: start (and shift) = the index of partition 0's preferred replica.
    start = [1, 2, 3].index(before[0][0])
    assert {p: after[p] for p in (2, 3, 4)} == kafka_assignment([1, 2, 3], 3, 3, start, start, first=2)


def test_alter_cannot_shrink(cluster):
    cluster.register_brokers(1)
    ok(cluster.topics("--create", "--topic", "t", "--partitions", "3"))
    error(cluster.topics("--alter", "--topic", "t", "--partitions", "2"),
          "The number of partitions for a topic can only be increased. Topic t currently has 3 partitions, "
          "2 would not be an increase.")
    error(cluster.topics("--alter", "--topic", "t", "--partitions", "3"), "3 would not be an increase.")
    assert sorted(cluster.assignment("t")) == [0, 1, 2]


def test_alter_with_explicit_assignment(cluster):
    cluster.register_brokers(1, 2, 3)
    ok(cluster.topics("--create", "--topic", "t", "--replica-assignment", "1:2"))
    # As kafka-topics.sh: the list covers every partition; existing ones are skipped.
    ok(cluster.topics("--alter", "--topic", "t", "--partitions", "3", "--replica-assignment", "9:8,2:3,3:1"))
    assert cluster.assignment("t") == {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    error(cluster.topics("--alter", "--topic", "t", "--partitions", "4", "--replica-assignment", "1:2,1:2,1:2,1:5"),
          "Unknown broker(s) in replica assignment: 5.")
    error(cluster.topics("--alter", "--topic", "t", "--partitions", "4", "--replica-assignment", "1,1,1,1"),
          "Inconsistent replication factor between partitions")
    assert sorted(cluster.assignment("t")) == [0, 1, 2]


def test_alter_missing_topic(cluster):
    error(cluster.topics("--alter", "--topic", "nope", "--partitions", "2"), "Topic 'nope' does not exist as expected")
    ok(cluster.topics("--alter", "--topic", "nope", "--partitions", "2", "--if-exists"), "")


# ---- delete ----

def test_delete_removes_the_subtree(cluster):
    ok(cluster.topics("--create", "--topic", "gone", "--replica-assignment", "1:2,2:1"))
    ok(cluster.topics("--create", "--topic", "kept", "--replica-assignment", "1"))
    cluster.zk.create(cluster.root + "/brokers/topics/gone/1/ISR", b'{"isr":[2],"leader_epoch":0}')
    ok(cluster.topics("--delete", "--topic", "gone"), "Deleted topic gone.\n")
    assert not cluster.exists("/brokers/topics/gone")
    assert cluster.children("/brokers/topics") == ["kept"]
    ok(cluster.topics("--list"), "kept\n")
    error(cluster.topics("--delete", "--topic", "gone"), "Topic 'gone' does not exist as expected")
    ok(cluster.topics("--delete", "--topic", "gone", "--if-exists"), "")


def test_delete_while_a_broker_keeps_recreating_leaders(cluster, shared_keeper, kazoo_factory):
    """A broker that has not yet noticed the deletion keeps re-creating its
    ephemeral leader and the ISR under the partitions; the delete re-lists and
    still removes everything."""
    partitions = 4
    ok(cluster.topics("--create", "--topic", "t", "--replica-assignment", ",".join(["1"] * partitions)))
    broker = kazoo_factory(shared_keeper)
    base = cluster.root + "/brokers/topics/t/%d/"
    stop, started = threading.Event(), threading.Event()
    recreated = [0]

    def leader_loop():
        # Every round (pipelined, one round trip) hands leadership over: the
        # leader node is deleted and created again, and missing ISR nodes are
        # re-created, so the tool's listing of a partition is often stale by
        # the time it deletes.
        while not stop.is_set():
            pending = []
            for p in range(partitions):
                pending.append(broker.delete_async(base % p + "leader"))
                pending.append(broker.create_async(base % p + "leader", b'{"leader":1,"leader_epoch":0}',
                                                   ephemeral=True))
                pending.append(broker.create_async(base % p + "ISR", b'{"isr":[1],"leader_epoch":0}'))
            partitions_gone = 0
            for i, request in enumerate(pending):
                try:
                    request.get(timeout=10)
                    recreated[0] += i % 3 != 0
                except NodeExistsError:
                    pass
                except NoNodeError:
                    partitions_gone += i % 3 == 1   # creating the leader: the partition node is gone
            started.set()
            if partitions_gone == partitions:
                return
    thread = threading.Thread(target=leader_loop, daemon=True)
    thread.start()
    try:
        assert started.wait(10)
        ok(cluster.topics("--delete", "--topic", "t"), "Deleted topic t.\n")
        thread.join(20)
        assert not thread.is_alive()
    finally:
        stop.set()
        thread.join(20)
    assert not cluster.exists("/brokers/topics/t")
    print("the broker re-created leader/ISR nodes %d times" % recreated[0])


# ---- connect strings ----

def test_chroot_is_created_and_used(cluster):
    deep = cluster.root + "/a/b/c"
    assert not cluster.zk.exists(deep)
    cluster.zk.create(deep + "/brokers/ids/4", broker_doc(4), ephemeral=True, makepath=True)
    ok(run_topics(cluster.server.hosts + deep, "--create", "--topic", "t"), "Created topic t.\n")
    assert json.loads(cluster.zk.get(deep + "/brokers/topics/t/0/replicas")[0]) == {"replicas": [4]}
    assert not cluster.zk.exists("/brokers/topics/t")
    assert cluster.zk.exists(deep + "/brokers/partitions_reassigned")
    # A chroot that does not exist yet is created, even just to list.
    ok(run_topics(cluster.server.hosts + cluster.root + "/fresh", "--list"), "")
    assert cluster.zk.exists(cluster.root + "/fresh")


def test_without_chroot(keeper, kazoo_factory):
    zk = kazoo_factory(keeper)
    zk.create("/brokers/ids/1", broker_doc(1), ephemeral=True, makepath=True)
    ok(run_topics(keeper.hosts, "--create", "--topic", "t", "--partitions", "2"), "Created topic t.\n")
    assert sorted(zk.get_children("/brokers/topics/t")) == ["0", "1"]
    ok(run_topics(keeper.hosts, "--list"), "t\n")


def test_unreachable_coordinator():
    from harness import free_port
    result = run_topics("127.0.0.1:%d" % free_port(), "--list", timeout=60)
    assert result.returncode == 1
    assert "no ZooKeeper session" in result.stderr and "ZOO_" not in result.stderr


# ---- the command line ----

@pytest.mark.parametrize("args", [
    [],
    ["--create"],
    ["--list", "--delete"],
    ["--create", "--topic"],
    ["--create", "--topic", "t", "--partitions", "x"],
    ["--create", "--topic", "t", "--replication-factor", "1.5"],
    ["--create", "--topic", "t", "--partitions", "99999999999"],
    ["--bogus"],
    ["--list", "extra"],
    ["--alter", "--topic", "t"],
    ["--delete"],
    ["--delete", "--topic", "t", "--partitions", "3"],
    ["--list", "--config", "a=b"],
    ["--describe", "--if-not-exists"],
    ["--under-replicated-partitions"],
    ["--list", "--under-replicated-partitions"],
    ["--list", "--unavailable-partitions"],
    ["--create", "--topic", "t", "--unavailable-partitions"],
    ["--delete", "--topic", "t", "--under-replicated-partitions"],
    ["--alter", "--topic", "t", "--partitions", "2", "--unavailable-partitions"],
    ["--create", "--topic", "t", "--if-exists"],
    ["--create", "--topic", "t", "--replica-assignment", "1:2", "--partitions", "1"],
    ["--create", "--topic", "t", "--replica-assignment", "1,,2"],
    ["--create", "--topic", "t", "--replica-assignment", "1:x"],
    ["--create", "--topic", "t", "--replica-assignment", ""],
    ["--create", "--topic", "t", "--config", "noequals"],
    ["--create", "--topic", "t", "--config", "=v"],
    ["--create", "--topic", "t", "--config", "k=" + "v" * 2000],
])
def test_bad_usage(cluster, args):
    result = cluster.topics(*args)
    assert result.returncode == 2, (args, result.returncode, result.stderr)
    assert USAGE in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("connect", ["127.0.0.1:2181/bad/", "127.0.0.1:2181//x", "no-port", "h:1:2", ""])
def test_bad_connect_string(connect):
    result = run_topics(connect, "--list")
    assert result.returncode == 2 and "--zookeeper" in result.stderr, result.stderr


def test_help():
    result = subprocess.run([KIPPER, "topics", "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stdout.startswith(USAGE)
    main_help = subprocess.run([KIPPER, "help"], capture_output=True, text=True, timeout=30)
    assert "topics" in main_help.stdout
