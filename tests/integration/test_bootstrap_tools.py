"""`kipper topics` and `kipper configs` with --bootstrap-server, as Kafka 3.x's
kafka-topics.sh and kafka-configs.sh (which have no --zookeeper): every action
through a broker the test starts, its output lines checked against Kafka 3.x's
wording and its effect checked with confluent-kafka; Kafka's errors (exit 1)
and wrong command lines (exit 2); the describe reports on two brokers, one
killed; and a script written for Kafka 3.x's tools run unchanged through
bin/kafka-topics.sh and bin/kafka-configs.sh."""
import json
import os
import re
import socket
import subprocess
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

from broker_harness import KIPPER, broker, coordinator, make_broker  # noqa: F401
from harness import free_port, wait_until

KAFKA_PATH = os.path.dirname(os.path.dirname(KIPPER))   # its bin/ holds the kafka-*.sh shims


def tool(servers, name, *args, timeout=60):
    return subprocess.run([KIPPER, name, "--bootstrap-server", servers] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def topics(b, *args):
    return tool(b.bootstrap, "topics", *args)


def configs(b, *args):
    return tool(b.bootstrap, "configs", *args)


def admin(b):
    return AdminClient({"bootstrap.servers": b.bootstrap})


def partition_counts(b):
    client = admin(b)
    md = client.list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in md.topics.items()}


def topic_configs(b, topic):
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    client = admin(b)   # kept until the answer is in
    entries = client.describe_configs([res])[res].result(timeout=10)
    return {k: e.value for k, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def topic_id_from_coordinator(b, topic):
    """The topic id as the --zookeeper form reads it from the coordinator."""
    out = b.topics_cli("--describe", "--topic", topic)
    assert out.returncode == 0, out.stderr
    return re.search(r"TopicId: (\S+)", out.stdout).group(1)


def ok(out):
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.splitlines()


def test_topics_create_describe_alter_delete(broker):
    assert topics(broker, "--create", "--topic", "orders", "--partitions", "2", "--replication-factor", "1",
                  "--config", "retention.ms=60000", "--config", "cleanup.policy=compact").stdout == \
        "Created topic orders.\n"
    assert partition_counts(broker)["orders"] == 2
    assert topic_configs(broker, "orders") == {"retention.ms": "60000", "cleanup.policy": "compact"}
    # The broker's defaults when --partitions and --replication-factor are left out.
    assert ok(topics(broker, "--create", "--topic", "plain")) == ["Created topic plain."]
    assert partition_counts(broker)["plain"] == 1
    # An explicit assignment, and the warning about '.' and '_' in the name.
    assert ok(topics(broker, "--create", "--topic", "a.b", "--replica-assignment", "1,1,1")) == [
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
        "collide. To avoid issues it is best to use either, but not both.",
        "Created topic a.b."]
    assert partition_counts(broker)["a.b"] == 3

    assert ok(topics(broker, "--list")) == ["a.b", "orders", "plain"]
    tid = topic_id_from_coordinator(broker, "orders")
    assert ok(topics(broker, "--describe", "--topic", "orders")) == [
        "Topic: orders\tTopicId: %s\tPartitionCount: 2\tReplicationFactor: 1\t"
        "Configs: cleanup.policy=compact,retention.ms=60000" % tid,
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1",
        "\tTopic: orders\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1"]
    # Every topic, by name; one whose configs are all defaults shows none.
    lines = ok(topics(broker, "--describe"))
    assert [line.split("\t")[0] for line in lines if not line.startswith("\t")] == \
        ["Topic: a.b", "Topic: orders", "Topic: plain"]
    assert "Topic: plain\tTopicId: %s\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: " \
        % topic_id_from_coordinator(broker, "plain") in lines
    assert ok(topics(broker, "--describe", "--topics-with-overrides")) == \
        [lines[i] for i, line in enumerate(lines) if line.startswith("Topic: orders")]

    # --alter --partitions: nothing printed, the partitions there.
    assert ok(topics(broker, "--alter", "--topic", "orders", "--partitions", "4")) == []
    assert partition_counts(broker)["orders"] == 4
    # --replica-assignment lists every partition; those the topic has are skipped.
    assert ok(topics(broker, "--alter", "--topic", "a.b", "--partitions", "4", "--replica-assignment",
                     "1,1,1,1")) == []
    assert partition_counts(broker)["a.b"] == 4

    # --delete prints nothing either; --topic is a regular expression and
    # commas separate alternatives, as in kafka-topics.sh.
    assert ok(topics(broker, "--delete", "--topic", "orders,pl.*")) == []
    wait_until(lambda: set(partition_counts(broker)) == {"a.b"}, timeout=15, what="topics deleted")
    assert ok(topics(broker, "--list")) == ["a.b"]
    assert ok(topics(broker, "--list", "--topic", "a.*")) == ["a.b"]
    # The whole name must match; an empty listing is one empty line, as kafka-topics.sh prints it.
    assert topics(broker, "--list", "--topic", "a").stdout == "\n"


def test_internal_topics_listed_unless_excluded(broker):
    """kafka-topics.sh knows Kafka's internal topics by name: kipper keeps no group log
    of its own, but a topic of that name is listed, and left out by --exclude-internal."""
    assert ok(topics(broker, "--create", "--topic", "__consumer_offsets"))[-1] == "Created topic __consumer_offsets."
    broker.create_topic("mine")
    assert ok(topics(broker, "--list")) == ["__consumer_offsets", "mine"]
    assert ok(topics(broker, "--list", "--exclude-internal")) == ["mine"]
    described = ok(topics(broker, "--describe", "--exclude-internal"))
    assert [line.split("\t")[0] for line in described] == ["Topic: mine", ""]


def test_topics_errors_in_kafkas_words(broker):
    broker.create_topic("here", partitions=2)
    out = topics(broker, "--create", "--topic", "here")
    assert out.returncode == 1 and out.stderr == \
        "Error while executing topic command : Topic 'here' already exists.\n"
    assert ok(topics(broker, "--create", "--topic", "here", "--if-not-exists")) == []
    for action in (["--describe"], ["--delete"], ["--alter", "--partitions", "5"]):
        out = topics(broker, *action, "--topic", "nope")
        assert out.returncode == 1, action
        assert out.stderr == "Error while executing topic command : Topic 'nope' does not exist as expected\n"
        assert ok(topics(broker, *action, "--topic", "nope", "--if-exists")) == []
    out = topics(broker, "--create", "--topic", "zero", "--partitions", "0")
    assert out.returncode == 1 and "The partitions must be greater than 0" in out.stderr
    out = topics(broker, "--alter", "--topic", "here", "--partitions", "1")
    assert out.returncode == 1
    assert out.stderr.startswith("Error while executing topic command : ") and "increase" in out.stderr
    assert partition_counts(broker)["here"] == 2
    out = topics(broker, "--describe", "--topic", "here(")
    assert out.returncode == 1 and out.stderr == "Error while executing topic command : here( is an invalid regex.\n"
    out = topics(broker, "--create", "--topic", "badcfg", "--config", "retention.ms=soon")
    assert out.returncode == 1 and "retention.ms" in out.stderr
    assert "badcfg" not in partition_counts(broker)


def test_a_broker_that_never_answers(tmp_path):
    """A listener that takes the connection and says nothing: each tool gives up after
    its deadline with exit 1 and says so, instead of hanging: 15 s by default, or what
    --command-config's request.timeout.ms (else default.api.timeout.ms) says."""
    short = tmp_path / "client.properties"
    short.write_text("# a Kafka client's file\nclient.id=ops\ndefault.api.timeout.ms=1000\n")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        servers = "127.0.0.1:%d" % silent.getsockname()[1]
        for name, args, limit in (("topics", ["--list"], 30),
                                  ("configs", ["--broker", "1", "--describe", "--command-config", str(short)], 10)):
            started = time.monotonic()
            out = tool(servers, name, *args, timeout=40)
            assert out.returncode == 1 and "no answer in time from " + servers in out.stderr, out.stderr
            assert time.monotonic() - started < limit


def test_command_config_is_read_as_kafkas_tools_read_it(broker, tmp_path):
    """--command-config takes a Kafka client properties file: PLAINTEXT and keys
    kipper does not act on are fine; another security.protocol, a bad timeout or a
    missing file is refused with exit 1 before anything is asked; it goes only
    with --bootstrap-server."""
    ok_file, ssl, bad = tmp_path / "ok.properties", tmp_path / "ssl.properties", tmp_path / "bad.properties"
    ok_file.write_text("security.protocol=PLAINTEXT\nrequest.timeout.ms=20000\nclient.id=ops\nretries=3\n")
    ssl.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n")
    bad.write_text("request.timeout.ms=soon\n")
    ok(topics(broker, "--create", "--topic", "cc", "--command-config", str(ok_file)))
    assert topics(broker, "--list", "--command-config", str(ok_file)).stdout.splitlines() == ["cc"]
    out = configs(broker, "--topic", "cc", "--describe", "--command-config", str(ok_file))
    assert out.returncode == 0 and out.stdout.startswith("Dynamic configs for topic cc are:"), out.stderr
    for path, words in ((ssl, "security.protocol=SASL_SSL, but kipper speaks PLAINTEXT only"),
                        (bad, "request.timeout.ms must be a number of ms"),
                        (tmp_path / "missing", "cannot read")):
        for name, args in (("topics", ["--delete", "--topic", "cc"]), ("configs", ["--topic", "cc", "--describe"])):
            out = tool(broker.bootstrap, name, *args, "--command-config", str(path))
            assert out.returncode == 1 and words in out.stderr, (name, path, out.stderr)
    assert "cc" in partition_counts(broker)
    for name, args in (("topics", ["--list"]), ("configs", ["--topic", "cc", "--describe"])):
        out = subprocess.run([KIPPER, name, "--zookeeper", broker.zk_connect, "--command-config", str(ok_file)] +
                             args, capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and "--command-config goes with --bootstrap-server" in out.stderr, out.stderr


def test_unreachable_broker_and_wrong_command_lines(broker):
    started = time.monotonic()
    for name, args in (("topics", ["--list"]), ("configs", ["--topic", "x", "--describe"])):
        out = tool("127.0.0.1:%d" % free_port(), name, *args, timeout=30)
        assert out.returncode == 1 and "cannot reach any broker of --bootstrap-server" in out.stderr, out.stderr
    assert time.monotonic() - started < 30
    wrong = [
        ("topics", ["--zookeeper", broker.zk_connect, "--list"]),                 # both forms
        ("topics", ["--alter", "--topic", "x", "--config", "a=b"]),               # configs: kafka-configs.sh's
        ("topics", ["--describe", "--under-replicated-partitions", "--unavailable-partitions"]),
        ("topics", ["--alter", "--topic", "x"]),
        ("configs", ["--zookeeper", broker.zk_connect, "--topic", "x", "--describe"]),
        ("configs", ["--broker", "one", "--describe"]),
        ("configs", ["--topic", "x", "--entity-type", "brokers", "--describe"]),
        ("configs", ["--topic", "x", "--alter"]),
    ]
    for name, args in wrong:
        out = tool(broker.bootstrap, name, *args)
        assert out.returncode == 2 and out.stderr.startswith("kipper %s: " % name), (name, args, out.stderr)
    for name in ("topics", "configs"):
        args = ["--list"] if name == "topics" else ["--topic", "x", "--describe"]
        out = subprocess.run([KIPPER, name] + args, capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and "exactly one of --bootstrap-server" in out.stderr


def test_configs_describe_and_alter(broker):
    broker.create_topic("cfg", configs={"segment.bytes": "100000"})
    assert ok(configs(broker, "--entity-type", "topics", "--entity-name", "cfg", "--describe")) == [
        "Dynamic configs for topic cfg are:",
        "  segment.bytes=100000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=100000, "
        "DEFAULT_CONFIG:log.segment.bytes=1073741824}"]
    assert ok(configs(broker, "--topic", "cfg", "--alter", "--add-config",
                      "cleanup.policy=[compact,delete],segment.ms=3600000")) == \
        ["Completed updating config for topic cfg."]
    assert topic_configs(broker, "cfg") == {"segment.bytes": "100000", "cleanup.policy": "compact,delete",
                                            "segment.ms": "3600000"}
    assert ok(configs(broker, "--topic", "cfg", "--alter", "--delete-config", "segment.bytes")) == \
        ["Completed updating config for topic cfg."]
    assert topic_configs(broker, "cfg") == {"cleanup.policy": "compact,delete", "segment.ms": "3600000"}
    lines = ok(configs(broker, "--topic", "cfg", "--describe"))
    assert lines[0] == "Dynamic configs for topic cfg are:"
    assert [line.split("=")[0] for line in lines[1:]] == ["  cleanup.policy", "  segment.ms"]
    # --all: every config, Kafka's defaults too.
    lines = ok(configs(broker, "--topic", "cfg", "--describe", "--all"))
    assert lines[0] == "All configs for topic cfg are:"
    assert "  min.insync.replicas=1 sensitive=false synonyms={DEFAULT_CONFIG:min.insync.replicas=1}" in lines
    assert "  segment.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.ms=3600000}" in lines
    # Deleting what the topic does not set, an unknown topic, a bad value.
    out = configs(broker, "--topic", "cfg", "--alter", "--delete-config", "segment.bytes,retention.ms")
    assert out.returncode == 1 and out.stderr == "Invalid config(s): segment.bytes,retention.ms\n"
    out = configs(broker, "--topic", "nope", "--describe")
    assert out.returncode == 1 and out.stderr == (
        "Error while executing config command with args '--bootstrap-server %s --topic nope --describe'\n"
        "The topic 'nope' does not exist.\n" % broker.bootstrap)
    out = configs(broker, "--topic", "cfg", "--alter", "--add-config", "retention.ms=soon")
    assert out.returncode == 1 and "retention.ms" in out.stderr
    # Every topic without a name.
    assert ok(configs(broker, "--entity-type", "topics", "--describe"))[0] == "Dynamic configs for topic cfg are:"


def test_broker_configs(broker):
    assert ok(configs(broker, "--entity-type", "brokers", "--describe")) == [
        "Dynamic configs for broker 1 are:", "Default configs for brokers in the cluster are:"]
    assert ok(configs(broker, "--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                      "log.retention.ms=100000")) == \
        ["Completed updating default config for brokers in the cluster."]
    assert ok(configs(broker, "--broker", "1", "--alter", "--add-config", "log.retention.ms=200000")) == \
        ["Completed updating config for broker 1."]
    assert ok(configs(broker, "--entity-type", "brokers", "--describe")) == [
        "Dynamic configs for broker 1 are:",
        "  log.retention.ms=200000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=200000, "
        "DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=100000, DEFAULT_CONFIG:log.retention.hours=168}",
        "Default configs for brokers in the cluster are:",
        "  log.retention.ms=100000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=100000}"]
    assert ok(configs(broker, "--broker-defaults", "--alter", "--delete-config", "log.retention.ms")) == \
        ["Completed updating default config for brokers in the cluster."]
    assert ok(configs(broker, "--broker-defaults", "--describe")) == ["Default configs for brokers in the cluster are:"]


def test_describe_reports_with_a_broker_down(make_broker):
    b1 = make_broker(extra={"replica.lag.time.max.ms": 1000})
    b2 = make_broker(broker_id=2, chroot=b1.chroot, extra={"replica.lag.time.max.ms": 1000})
    assert ok(topics(b1, "--create", "--topic", "both", "--replica-assignment", "1:2",
                     "--config", "min.insync.replicas=2")) == ["Created topic both."]
    assert ok(topics(b1, "--create", "--topic", "on2", "--replica-assignment", "2")) == ["Created topic on2."]
    wait_until(lambda: ok(topics(b1, "--describe", "--topic", "both"))[1].endswith("Isr: 1,2"), timeout=20,
               what="both replicas in sync")
    assert ok(topics(b1, "--describe", "--under-replicated-partitions")) == []
    # At min ISR: both (ISR 2 of min.insync.replicas 2) and on2 (1 of the default 1).
    assert ok(topics(b1, "--describe", "--at-min-isr-partitions")) == [
        "\tTopic: both\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: on2\tPartition: 0\tLeader: 2\tReplicas: 2\tIsr: 2"]
    assert ok(topics(b1, "--describe", "--under-min-isr-partitions")) == []
    assert ok(topics(b1, "--describe", "--unavailable-partitions")) == []
    b2.kill()
    wait_until(lambda: ok(topics(b1, "--describe", "--under-replicated-partitions")) == [
        "\tTopic: both\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1"], timeout=20, what="the ISR shrunk")
    unavailable = wait_until(lambda: [line for line in ok(topics(b1, "--describe", "--unavailable-partitions"))
                                      if "Leader: none" in line], timeout=20, what="on2 without a live leader")
    assert len(unavailable) == 1 and unavailable[0].startswith("\tTopic: on2\tPartition: 0\tLeader: none\t")
    # Under min ISR: both's ISR of 1, and on2 with no leader.
    assert ok(topics(b1, "--describe", "--under-min-isr-partitions")) == [
        "\tTopic: both\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1"] + unavailable


def test_describe_shows_a_move_in_progress(make_broker, tmp_path):
    """A move from [1] to [1, 2] held back by a 10 KB/s throttle: --describe shows every
    replica of the move and those being added, as kafka-topics.sh does from
    ListPartitionReassignments, and the replication factor the partition had before, so
    that it is not under-replicated meanwhile; Metadata lists every replica of the move
    meanwhile, as Kafka's does (KIP-455)."""
    small = {"replica.fetch.max.bytes": 65536, "replica.fetch.response.max.bytes": 65536}
    b1 = make_broker(extra=small)
    make_broker(broker_id=2, chroot=b1.chroot, extra=small)
    assert ok(topics(b1, "--create", "--topic", "moving", "--replica-assignment", "1")) == ["Created topic moving."]
    p = Producer({"bootstrap.servers": b1.bootstrap, "linger.ms": 20})
    for _ in range(60):
        p.produce("moving", value=b"x" * 10000, partition=0)
    assert p.flush(30) == 0
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0,
                                                              "replicas": [1, 2]}]}))
    out = subprocess.run([KIPPER, "reassign", "--zookeeper", b1.zk_connect, "--reassignment-json-file", str(plan),
                          "--execute", "--throttle", "10000"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr

    def moving():
        lines = ok(topics(b1, "--describe", "--topic", "moving"))
        return lines if lines[1].endswith("\tAdding Replicas: 2\tRemoving Replicas: ") else None
    lines = wait_until(moving, timeout=20, what="the move to show")
    assert "\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: " in lines[0], lines
    assert lines[1] == "\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\tAdding Replicas: 2\t" \
        "Removing Replicas: "
    assert ok(topics(b1, "--describe", "--under-replicated-partitions")) == []
    md = admin(b1).list_topics("moving", timeout=10)
    assert md.topics["moving"].partitions[0].replicas == [1, 2]


SCRIPT = """\
set -e
B=$1
$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $B --create --topic events --partitions 1 --replication-factor 1
$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $B --describe --topic events
$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $B --alter --topic events --partitions 3
$KAFKA_PATH/bin/kafka-configs.sh --bootstrap-server $B --entity-type topics --entity-name events --alter \\
    --add-config segment.bytes=100000
$KAFKA_PATH/bin/kafka-configs.sh --bootstrap-server $B --entity-type topics --entity-name events --describe
$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $B --describe --topic events | head -1
$KAFKA_PATH/bin/kafka-configs.sh --bootstrap-server $B --entity-type topics --entity-name events --alter \\
    --delete-config segment.bytes
$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $B --delete --topic events
$KAFKA_PATH/bin/kafka-topics.sh --bootstrap-server $B --list
"""


def test_a_kafka_3_script_runs_through_the_shims(broker, tmp_path):
    script = tmp_path / "topics.sh"
    script.write_text(SCRIPT)
    out = subprocess.run(["sh", str(script), broker.bootstrap], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, KAFKA_PATH=KAFKA_PATH))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    tid = re.search(r"TopicId: (\S+)", lines[1]).group(1)
    assert lines == [
        "Created topic events.",
        "Topic: events\tTopicId: %s\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: " % tid,
        "\tTopic: events\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1",
        "Completed updating config for topic events.",
        "Dynamic configs for topic events are:",
        "  segment.bytes=100000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=100000, "
        "DEFAULT_CONFIG:log.segment.bytes=1073741824}",
        "Topic: events\tTopicId: %s\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: segment.bytes=100000" % tid,
        "Completed updating config for topic events.",
        "",   # the empty listing
    ]
    assert "events" not in partition_counts(broker)
    # The --zookeeper form still goes through the same shim.
    out = subprocess.run([os.path.join(KAFKA_PATH, "bin", "kafka-topics.sh"), "--zookeeper", broker.zk_connect,
                          "--list"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "", out.stderr
