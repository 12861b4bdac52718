"""Changing a running cluster's settings and data (issue 12, item 7), on three
brokers and three keepers: topic configs and dynamic broker configs kept in
/config (Kafka's ZooKeeper layout) and applied by every broker without a
restart -- a retention change deletes old segments on every replica, whether
made with `kipper configs`, `kipper topics --alter --config`, confluent-kafka,
kafka-python or KafkaJS; DescribeConfigs reports where each value comes from;
IncrementalAlterConfigs; DeleteRecords moves the log start on the leader and
the followers; DescribeLogDirs reports what the folders hold."""
import glob
import json
import os
import struct
import subprocess
import time

import pytest

from harness import KIPPER, wait_until
from kafka_wire import KafkaConn, Reader, Record, karray, kstring, record_batch
from repl_cluster import ReplCluster, read_checkpoint

JS_ADMIN = os.path.join(os.path.dirname(__file__), "js", "admin.js")

# Retention is applied every 200 ms and checkpoints written every 300 ms, so a
# change shows on disk soon; segments of 1 KiB roll every two or three batches.
EXTRA = {"log.retention.check.interval.ms": 200, "log.flush.interval.ms": 300}
SMALL = {"segment.bytes": 1024}

ERR_OFFSET_OUT_OF_RANGE = 1
ERR_NOT_ENOUGH_REPLICAS = 19
ERR_INVALID_CONFIG = 40
ERR_INVALID_REQUEST = 42
SRC_TOPIC, SRC_DYNAMIC_BROKER, SRC_DYNAMIC_DEFAULT, SRC_STATIC, SRC_DEFAULT = 1, 2, 3, 4, 5


@pytest.fixture
def cluster(request, ensemble):
    chroot = "/configs/%s" % request.node.name[:60]
    c = ReplCluster(ensemble.hosts(), chroot, extra=EXTRA).start()
    yield c
    errors = c.close()
    assert not errors, "\n".join(errors)


def kipper(c, tool, *args):
    return subprocess.run([KIPPER, tool, "--zookeeper", c.hosts + c.chroot] + list(args),
                          capture_output=True, text=True, timeout=60)


# What a client retries after reading the metadata again: the coordinator can
# name a new leader a moment before that broker has taken over.
RETRIABLE = {5: "LEADER_NOT_AVAILABLE", 6: "NOT_LEADER_OR_FOLLOWER"}


def produce(c, topic, batches, size=300):
    """batches one-record batches of `size` bytes at the partition's leader, acks=all,
    stamped now (so time-based retention keeps them until told otherwise)."""
    for i in range(batches):
        def sent():
            with c.conn(c.leader(topic, 0)) as k:
                now = int(time.time() * 1000)
                p = k.produce(topic, 0, record_batch([Record(None, b"%06d" % i + b"x" * size)], base_timestamp=now))
            if p.error in RETRIABLE:
                return None
            assert p.error == 0, p
            return p
        wait_until(sent, timeout=30, what="record %d of %s acknowledged by its leader" % (i, topic))


def segments(c, i, topic):
    """Base offsets of the partition's segment files on broker i, sorted."""
    folder = os.path.join(c.brokers[i].log_dir, "%s-0" % topic)
    return sorted(int(os.path.basename(p).split(".")[0]) for p in glob.glob(os.path.join(folder, "*.log")))


def wait_segments(c, topic, ok, what, timeout=30):
    """Until ok(segment bases) holds on every broker."""
    last = {}

    def every():
        last.update({i: segments(c, i, topic) for i in c.brokers})
        return all(ok(s) for s in last.values())
    try:
        wait_until(every, timeout=timeout, interval=0.1, what=what)
    except TimeoutError:
        raise AssertionError("%s: segments per broker %s\n%s" % (what, last, c.logs(3000)))


def populated(c, topic, batches=30):
    """A topic of one partition on all three brokers with many closed segments."""
    c.create_topic(topic, partitions=1, rf=3, configs=SMALL)
    produce(c, topic, batches)
    wait_segments(c, topic, lambda s: len(s) >= 5, "several segments of %s on every replica" % topic)


def wait_retention_applied(c, topic):
    """Every replica down to its active segment, the log start past 0 on the leader."""
    wait_segments(c, topic, lambda s: len(s) == 1 and s[0] > 0,
                  "old segments of %s deleted on every replica" % topic)
    with c.conn(c.leader(topic, 0)) as k:
        err, _, earliest = k.list_offset(topic, 0, -2)
    assert err == 0 and earliest > 0


def zk_json(c, path):
    return json.loads(c.zk.get(path)[0].decode())


# ---- raw requests the clients here do not send ----

def describe_configs(k, rtype, name, keys=None):
    """DescribeConfigs v1 with synonyms: (error, {name: (value, source, [(name, value, source)])})."""
    body = karray([struct.pack(">b", rtype) + kstring(name) +
                   karray(None if keys is None else [kstring(x) for x in keys])]) + struct.pack(">?", True)
    r = k.call(32, 1, body)
    r.take(">i")

    def entry(r):
        name, value, _, source, _ = r.string(), r.string(), r.take(">?"), r.take(">b"), r.take(">?")
        syn = r.array(lambda r: (r.string(), r.string(), r.take(">b")))
        return name, (value, source, syn)
    results = r.array(lambda r: (r.take(">h"), r.string(), r.take(">b"), r.string(), r.array(entry)))
    assert r.done()
    err, _, _, _, entries = results[0]
    return err, dict(entries)


def incremental_alter(k, rtype, name, ops, validate_only=False):
    """IncrementalAlterConfigs v0: ops [(name, op, value)]; (error, message)."""
    body = karray([struct.pack(">b", rtype) + kstring(name) +
                   karray([kstring(n) + struct.pack(">b", op) + kstring(v) for n, op, v in ops])])
    r = k.call(44, 0, body + struct.pack(">?", validate_only))
    r.take(">i")
    out = r.array(lambda r: (r.take(">h"), r.string(), r.take(">b"), r.string()))
    assert r.done()
    return out[0][0], out[0][1]


def delete_records(k, topic, offset, timeout_ms=15000):
    """DeleteRecords v1 of partition 0: (error, low watermark)."""
    body = karray([kstring(topic) + karray([struct.pack(">iq", 0, offset)])]) + struct.pack(">i", timeout_ms)
    r = k.call(21, 1, body)
    r.take(">i")
    topics = r.array(lambda r: (r.string(), r.array(lambda r: (r.take(">i"), r.take(">q"), r.take(">h")))))
    assert r.done()
    _, low, err = topics[0][1][0]
    return err, low


def describe_log_dirs(k):
    """DescribeLogDirs v1 of every topic: {dir: {(topic, partition): (size, lag)}}."""
    r = k.call(35, 1, karray(None))
    r.take(">i")

    def topic(r):
        name = r.string()
        return name, r.array(lambda r: (r.take(">i"), r.take(">q"), r.take(">q"), r.take(">?")))
    dirs = r.array(lambda r: (r.take(">h"), r.string(), r.array(topic)))
    assert r.done()
    out = {}
    for err, path, topics in dirs:
        assert err == 0
        out[path] = {(t, p): (size, lag) for t, parts in topics for p, size, lag, future in parts}
    return out


def js_admin(c, method, arg):
    out = subprocess.run(["node", JS_ADMIN, c.bootstrap, method, json.dumps(arg)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, "KafkaJS %s failed: %s" % (method, out.stderr)
    return json.loads(out.stdout)


# ---- the tests ----

def test_retention_changed_with_kipper_configs_reaches_every_replica(cluster):
    c = cluster
    populated(c, "ret")
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "ret", "--alter",
                 "--add-config", "retention.ms=1")
    assert out.returncode == 0 and out.stdout == "Completed Updating config for entity: topic 'ret'.\n", out
    wait_retention_applied(c, "ret")
    assert zk_json(c, "/config/topics/ret") == {"version": 1, "config": {"segment.bytes": "1024", "retention.ms": "1"}}
    changes = [zk_json(c, "/config/changes/" + n) for n in c.zk.get_children("/config/changes")]
    assert {"version": 2, "entity_path": "topics/ret"} in changes
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "ret", "--describe")
    assert out.stdout == "Configs for topic 'ret' are segment.bytes=1024,retention.ms=1\n", out
    # kafka-configs.sh's ZooKeeper mode refuses to delete what is not set.
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "ret", "--alter",
                 "--delete-config", "retention.bytes")
    assert out.returncode == 1 and "Invalid config(s): retention.bytes" in out.stderr, out
    # kafka-topics.sh's old form changes the same node.
    out = kipper(c, "topics", "--alter", "--topic", "ret", "--delete-config", "retention.ms", "--config",
                 "retention.bytes=5000")
    assert out.returncode == 0 and 'Updated config for topic "ret".' in out.stdout, out
    assert zk_json(c, "/config/topics/ret")["config"] == {"segment.bytes": "1024", "retention.bytes": "5000"}
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "ret", "--alter",
                 "--add-config", "retention.ms=soon")
    assert out.returncode == 1 and "Invalid value soon for configuration retention.ms: Not a number of type LONG" \
        in out.stderr, out


def test_retention_changed_by_admin_clients_reaches_every_replica(cluster):
    from confluent_kafka.admin import AdminClient, ConfigResource
    from kafka.admin import ConfigResource as KpResource, ConfigResourceType, KafkaAdminClient
    c = cluster
    for t in ("by-confluent", "by-kafka-python", "by-kafkajs"):
        populated(c, t, batches=20)
    wanted = {"segment.bytes": "1024", "retention.ms": "1"}
    admin = AdminClient({"bootstrap.servers": c.bootstrap})   # kept: its futures fail once it is gone
    fs = admin.alter_configs([ConfigResource("topic", "by-confluent", set_config=wanted)])
    for f in fs.values():
        f.result(timeout=30)
    kp = KafkaAdminClient(bootstrap_servers=c.bootstrap, request_timeout_ms=30000)
    try:
        resp = kp.alter_configs([KpResource(ConfigResourceType.TOPIC, "by-kafka-python", configs=wanted)])
        assert [r[0] for r in resp.resources] == [0], resp
    finally:
        kp.close()
    js_admin(c, "alterConfigs", {"resources": [{"type": 2, "name": "by-kafkajs", "configEntries": [
        {"name": k, "value": v} for k, v in wanted.items()]}]})
    for t in ("by-confluent", "by-kafka-python", "by-kafkajs"):
        wait_retention_applied(c, t)
        assert zk_json(c, "/config/topics/" + t)["config"] == wanted
    # A bad value is refused with Kafka's error and message, and nothing changes.
    fs = admin.alter_configs([ConfigResource("topic", "by-confluent", set_config={"retention.ms": "abc"})])
    with pytest.raises(Exception) as e:
        for f in fs.values():
            f.result(timeout=30)
    assert "Invalid value abc for configuration retention.ms" in str(e.value)
    assert zk_json(c, "/config/topics/by-confluent")["config"] == wanted
    # KafkaJS reads them back with their source.
    got = js_admin(c, "describeConfigs", {"includeSynonyms": False, "resources": [
        {"type": 2, "name": "by-kafkajs", "configNames": ["retention.ms"]}]})
    entry = got["resources"][0]["configEntries"][0]
    assert entry["configName"] == "retention.ms" and entry["configValue"] == "1", got


def test_dynamic_broker_configs_and_their_sources(cluster):
    c = cluster
    populated(c, "dflt")
    out = kipper(c, "configs", "--entity-type", "brokers", "--entity-default", "--alter",
                 "--add-config", "log.retention.ms=1")
    assert out.returncode == 0 and out.stdout == "Completed Updating config for entity: default brokers.\n", out
    wait_retention_applied(c, "dflt")
    assert zk_json(c, "/config/brokers/<default>") == {"version": 1, "config": {"log.retention.ms": "1"}}
    out = kipper(c, "configs", "--entity-type", "brokers", "--entity-name", "1", "--alter",
                 "--add-config", "log.retention.ms=2,leader.replication.throttled.rate=1000000")
    assert out.returncode == 0, out

    def sources():
        with c.conn(1) as k:
            err, got = describe_configs(k, 2, "dflt")
        assert err == 0
        return got
    got = wait_until(lambda: sources()["retention.ms"][0] == "2" and sources(), timeout=20,
                     what="broker 1's own log.retention.ms")
    assert got["retention.ms"][1] == SRC_DYNAMIC_BROKER
    assert got["retention.ms"][2][:2] == [("log.retention.ms", "2", SRC_DYNAMIC_BROKER),
                                          ("log.retention.ms", "1", SRC_DYNAMIC_DEFAULT)]
    assert got["segment.bytes"][:2] == ("1024", SRC_TOPIC)
    assert got["min.insync.replicas"][:2] == ("2", SRC_STATIC)      # server.properties (repl_cluster)
    assert got["compression.type"][:2] == ("producer", SRC_DEFAULT)
    with c.conn(2) as k:   # broker 2 has no override of its own
        err, other = describe_configs(k, 2, "dflt", keys=["retention.ms"])
    assert err == 0 and list(other) == ["retention.ms"] and other["retention.ms"][:2] == ("1", SRC_DYNAMIC_DEFAULT)
    with c.conn(1) as k:
        err, mine = describe_configs(k, 4, "1")
        assert err == 0
        assert mine["log.retention.ms"][:2] == ("2", SRC_DYNAMIC_BROKER)
        assert mine["leader.replication.throttled.rate"][:2] == ("1000000", SRC_DYNAMIC_BROKER)
        assert mine["follower.replication.throttled.rate"][:2] == ("9223372036854775807", SRC_DEFAULT)
        assert mine["broker.id"][:2] == ("1", SRC_STATIC)
        err, shared = describe_configs(k, 4, "")
        assert err == 0 and {n: v[:2] for n, v in shared.items()} == {"log.retention.ms": ("1", SRC_DYNAMIC_DEFAULT)}
        err, _ = describe_configs(k, 4, "2")
        assert err == ERR_INVALID_REQUEST
    # confluent-kafka reads the same sources.
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    fs = admin.describe_configs([ConfigResource("topic", "dflt")])
    entries = list(fs.values())[0].result(timeout=30)
    assert entries["segment.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["compression.type"].source == ConfigSource.DEFAULT_CONFIG.value
    # A setting that cannot change on a running broker is refused.
    out = kipper(c, "configs", "--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                 "num.partitions=3")
    assert out.returncode == 1 and "Cannot update these configs dynamically: Set(num.partitions)" in out.stderr


def test_incremental_alter_configs(cluster):
    c = cluster
    c.create_topic("inc", partitions=1, rf=3)
    with c.conn(2) as k:
        assert incremental_alter(k, 2, "inc", [("leader.replication.throttled.replicas", 2, "0:1,0:2")]) == (0, None)
        assert incremental_alter(k, 2, "inc", [("leader.replication.throttled.replicas", 2, "0:2,0:3"),
                                                ("retention.ms", 0, "60000")]) == (0, None)
        assert zk_json(c, "/config/topics/inc")["config"] == {
            "leader.replication.throttled.replicas": "0:1,0:2,0:3", "retention.ms": "60000"}
        assert incremental_alter(k, 2, "inc", [("leader.replication.throttled.replicas", 3, "0:1"),
                                                ("retention.ms", 1, None)]) == (0, None)
        # validateOnly checks and writes nothing.
        assert incremental_alter(k, 2, "inc", [("retention.ms", 0, "5")], validate_only=True) == (0, None)
        assert zk_json(c, "/config/topics/inc")["config"] == {"leader.replication.throttled.replicas": "0:2,0:3"}
        assert incremental_alter(k, 2, "inc", [("retention.ms", 2, "5")]) == (
            ERR_INVALID_CONFIG, "Config value append is not allowed for config key: retention.ms")
        assert incremental_alter(k, 2, "inc", [("follower.replication.throttled.replicas", 0, "0:x")])[0] == \
            ERR_INVALID_CONFIG
        assert incremental_alter(k, 2, "nosuch", [("retention.ms", 0, "5")])[0] == 3
        assert incremental_alter(k, 4, "", [("leader.replication.throttled.rate", 0, "-1")]) == (
            ERR_INVALID_CONFIG,
            "Invalid value -1 for configuration leader.replication.throttled.rate: Value must be at least 0")


# Every topic config of Kafka 3.x (LogConfig up to 3.9) with a valid value other
# than its default (tests/unit/test_coord_config.c holds the same list), and
# Kafka's default of each that kipper stores without acting on.
KAFKA_TOPIC_CONFIGS = {
    "cleanup.policy": "compact,delete", "compression.gzip.level": "6", "compression.lz4.level": "12",
    "compression.type": "zstd", "compression.zstd.level": "-5", "delete.retention.ms": "3600000",
    "file.delete.delay.ms": "30000", "flush.messages": "1000", "flush.ms": "1000",
    "follower.replication.throttled.replicas": "0:1", "index.interval.bytes": "8192",
    "leader.replication.throttled.replicas": "*", "local.retention.bytes": "1048576", "local.retention.ms": "60000",
    "max.compaction.lag.ms": "86400000", "max.message.bytes": "2000000", "message.downconversion.enable": "false",
    "message.format.version": "2.8", "message.timestamp.after.max.ms": "3600000",
    "message.timestamp.before.max.ms": "3600000", "message.timestamp.difference.max.ms": "3600000",
    "message.timestamp.type": "LogAppendTime", "min.cleanable.dirty.ratio": "0.25", "min.compaction.lag.ms": "1000",
    "min.insync.replicas": "2", "preallocate": "true", "remote.log.copy.disable": "true",
    "remote.log.delete.on.disable": "true", "remote.storage.enable": "true", "retention.bytes": "1073741824",
    "retention.ms": "86400000", "segment.bytes": "104857600", "segment.index.bytes": "1048576",
    "segment.jitter.ms": "1000", "segment.ms": "3600000", "unclean.leader.election.enable": "true",
}
KAFKA_DEFAULTS_NOT_ACTED_ON = {
    "compression.gzip.level": "-1", "compression.lz4.level": "9", "compression.type": "producer",
    "compression.zstd.level": "3", "delete.retention.ms": "86400000", "file.delete.delay.ms": "60000",
    "flush.messages": "9223372036854775807", "flush.ms": "9223372036854775807", "index.interval.bytes": "4096",
    "local.retention.bytes": "-2", "local.retention.ms": "-2", "max.compaction.lag.ms": "9223372036854775807",
    "message.downconversion.enable": "true", "message.format.version": "3.0-IV1",
    "message.timestamp.after.max.ms": "9223372036854775807", "message.timestamp.before.max.ms": "9223372036854775807",
    "message.timestamp.difference.max.ms": "9223372036854775807", "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0", "preallocate": "false", "remote.log.copy.disable": "false",
    "remote.log.delete.on.disable": "false", "remote.storage.enable": "false", "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
}


def test_every_kafka_topic_config_round_trips(cluster):
    """Issue 15: a topic created with each of Kafka 3.x's topic configs reads them
    back through DescribeConfigs as DYNAMIC_TOPIC_CONFIG; a topic without them
    gets Kafka's defaults as DEFAULT_CONFIG; the ones kipper does not act on are
    named in the broker's log; bad values are INVALID_CONFIG naming the key and why."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic
    c = cluster
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    for f in admin.create_topics([NewTopic("every", 1, 3, config=KAFKA_TOPIC_CONFIGS),
                                  NewTopic("plain", 1, 3)]).values():
        f.result(timeout=30)
    assert zk_json(c, "/config/topics/every")["config"] == KAFKA_TOPIC_CONFIGS

    def described(topic):
        return list(admin.describe_configs([ConfigResource("topic", topic)]).values())[0].result(timeout=30)
    got = described("every")
    assert {k: got[k].value for k in KAFKA_TOPIC_CONFIGS} == KAFKA_TOPIC_CONFIGS
    assert {k for k in KAFKA_TOPIC_CONFIGS if got[k].source != ConfigSource.DYNAMIC_TOPIC_CONFIG.value} == set()
    plain = described("plain")
    # flush.ms is the broker's log.flush.interval.ms, which server.properties sets (EXTRA), as in Kafka.
    static = {"flush.ms": str(EXTRA["log.flush.interval.ms"])}
    assert {k: plain[k].value for k in KAFKA_DEFAULTS_NOT_ACTED_ON} == dict(KAFKA_DEFAULTS_NOT_ACTED_ON, **static)
    assert {k for k in KAFKA_DEFAULTS_NOT_ACTED_ON if plain[k].source != ConfigSource.DEFAULT_CONFIG.value} == \
        set(static)
    assert plain["flush.ms"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert set(plain) == set(KAFKA_TOPIC_CONFIGS)   # every one reported, nothing else
    unacted = ", ".join(sorted(KAFKA_DEFAULTS_NOT_ACTED_ON))
    wait_until(lambda: any("topic 'every': %s accepted and stored, not acted on by kipper" % unacted in b.log()
                           for b in c.brokers.values()), timeout=10, what="the log line naming them")

    bad = {"min.cleanable.dirty.ratio": ("1.5", "Value must be no more than 1"),
           "delete.retention.ms": ("-1", "Value must be at least 0"),
           "preallocate": ("maybe", "Expected value to be either true or false"),
           "message.format.version": ("9.9", "Version 9.9 is not a valid version"),
           "compression.lz4.level": ("x", "Not a number of type INT"),
           "cleanup.policy": ("compact,tidy", "String must be one of: compact, delete")}
    for key, (value, why) in bad.items():
        [f] = admin.create_topics([NewTopic("bad", 1, 3, config={key: value})]).values()
        with pytest.raises(KafkaException) as e:
            f.result(timeout=30)
        assert e.value.args[0].code() == KafkaError.INVALID_CONFIG, (key, e.value)
        assert "for configuration %s: %s" % (key, why) in str(e.value), (key, e.value)
        [f] = admin.alter_configs([ConfigResource("topic", "every", set_config={key: value})]).values()
        with pytest.raises(KafkaException) as e:
            f.result(timeout=30)
        assert e.value.args[0].code() == KafkaError.INVALID_CONFIG, (key, e.value)
    assert zk_json(c, "/config/topics/every")["config"] == KAFKA_TOPIC_CONFIGS
    with c.conn(1) as k:
        # Kafka's check across the set, and IncrementalAlterConfigs of one kipper stores only.
        assert incremental_alter(k, 2, "every", [("min.compaction.lag.ms", 0, "90000000")]) == (
            ERR_INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms (90000000) > "
                                "max.compaction.lag.ms (86400000)")
        assert incremental_alter(k, 2, "plain", [("delete.retention.ms", 0, "1000")]) == (0, None)
    assert zk_json(c, "/config/topics/plain")["config"] == {"delete.retention.ms": "1000"}
    # kipper configs (kafka-configs.sh) likewise, naming them on its stderr.
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "plain", "--alter",
                 "--add-config", "flush.ms=5,cleanup.policy=[compact,delete]")
    assert out.returncode == 0 and "topic 'plain': flush.ms accepted and stored, not acted on by kipper" in out.stderr
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "plain", "--describe")
    assert out.stdout == "Configs for topic 'plain' are delete.retention.ms=1000,flush.ms=5,cleanup.policy=compact,delete\n", out
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "plain", "--alter",
                 "--add-config", "segment.jitter.ms=-1")
    assert out.returncode == 1 and "Invalid value -1 for configuration segment.jitter.ms: Value must be at least 0" \
        in out.stderr, out


def test_a_compacted_topic_keeps_its_records(cluster):
    """cleanup.policy=compact is accepted; as in Kafka only "delete" deletes by
    time and size, and kipper never compacts, so such a topic keeps every record
    until its policy says delete again."""
    c = cluster
    populated(c, "kept")
    populated(c, "cut")
    for topic, policy in (("kept", "compact"), ("cut", "delete")):
        out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", topic, "--alter",
                     "--add-config", "cleanup.policy=%s,retention.ms=1" % policy)
        assert out.returncode == 0, out
    # Each retention pass goes over every topic: once "cut" is cut, "kept" was looked at too.
    wait_retention_applied(c, "cut")
    assert all(len(segments(c, i, "kept")) >= 5 and segments(c, i, "kept")[0] == 0 for i in c.brokers)
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "kept", "--alter",
                 "--add-config", "cleanup.policy=[compact,delete]")
    assert out.returncode == 0, out
    wait_retention_applied(c, "kept")


def test_min_insync_and_log_append_time_apply_at_once(cluster):
    """min.insync.replicas and message.timestamp.type are read at use: the next
    produce sees a change."""
    c = cluster
    c.create_topic("live", partitions=1, rf=3)
    leader = c.leader("live", 0)
    with c.conn(leader) as k:
        assert incremental_alter(k, 2, "live", [("min.insync.replicas", 0, "4"),
                                                 ("message.timestamp.type", 0, "LogAppendTime")]) == (0, None)

        def refused():
            return k.produce("live", 0, record_batch([Record(None, b"v")])).error == ERR_NOT_ENOUGH_REPLICAS
        wait_until(refused, timeout=20, what="acks=all refused under min.insync.replicas 4")
        assert incremental_alter(k, 2, "live", [("min.insync.replicas", 1, None)]) == (0, None)
        wait_until(lambda: not refused(), timeout=20, what="acks=all accepted again")
        hw = c.high_watermark("live", 0)
        batch = [b for _, _, b in k.fetch_all("live", 0, hw - 1)][0]
        assert batch.attributes & 0x08 and batch.max_timestamp > 1700000000000 + 10 ** 9   # stamped by the broker


def test_topic_of_an_older_kipper_moves_to_config_topics(cluster):
    """A topic whose configs are in its document (no /config/topics node, as an older
    kipper wrote it) is read from there; the first change writes the new node and
    empties the document's copy."""
    c = cluster
    populated(c, "legacy")
    doc = zk_json(c, "/brokers/topics/legacy")
    doc["config"] = {"segment.bytes": "1024", "retention.ms": "1"}
    c.zk.delete("/config/topics/legacy")
    c.zk.set("/brokers/topics/legacy", json.dumps(doc).encode())
    wait_retention_applied(c, "legacy")
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "legacy", "--describe")
    assert out.stdout == "Configs for topic 'legacy' are segment.bytes=1024,retention.ms=1\n", out
    out = kipper(c, "configs", "--entity-type", "topics", "--entity-name", "legacy", "--alter",
                 "--add-config", "retention.bytes=100000")
    assert out.returncode == 0, out
    assert zk_json(c, "/config/topics/legacy")["config"] == {"segment.bytes": "1024", "retention.ms": "1",
                                                            "retention.bytes": "100000"}
    assert zk_json(c, "/brokers/topics/legacy")["config"] == {}
    assert zk_json(c, "/brokers/topics/legacy")["topic_id"] == doc["topic_id"]


def test_delete_records_moves_every_replicas_log_start(cluster):
    c = cluster
    populated(c, "del", batches=40)
    c.assert_replicas_identical("del", 1)
    leader = c.leader("del", 0)
    base_of_17 = max(s for s in segments(c, leader, "del") if s <= 17)
    with c.conn(leader) as k:
        assert delete_records(k, "del", 17) == (0, 17)
        assert k.list_offset("del", 0, -2)[2] == 17
        assert k.fetch("del", 0, 16).error == ERR_OFFSET_OUT_OF_RANGE
        assert k.fetch("del", 0, 17).error == 0
        assert delete_records(k, "del", 41) == (ERR_OFFSET_OUT_OF_RANGE, -1)   # past the HW
    # Whole segments below the new start are gone on every replica, followers too,
    # and each checkpointed the new start.
    wait_segments(c, "del", lambda s: s[0] == base_of_17, "segments below offset 17 deleted everywhere")

    def checkpointed(offset):
        for b in c.brokers.values():
            path = os.path.join(b.log_dir, "log-start-offset-checkpoint")
            if not os.path.exists(path) or read_checkpoint(path).get(("del", 0)) != offset:
                return False
        return True
    wait_until(lambda: checkpointed(17), timeout=20, what="log start 17 checkpointed on every broker")
    # KafkaJS's deleteTopicRecords goes the same way.
    js_admin(c, "deleteTopicRecords", {"topic": "del", "partitions": [{"partition": 0, "offset": "25"}]})
    wait_until(lambda: checkpointed(25), timeout=20, what="log start 25 checkpointed on every broker")
    # A follower restarted keeps its log start.
    follower = next(i for i in c.brokers if i != c.leader("del", 0))
    assert c.stop(follower) == 0
    c.start_broker(follower)
    c.wait_isr_full("del", 1)
    with c.conn(leader) as k:
        assert delete_records(k, "del", -1) == (0, 40)   # up to the HW


def test_describe_log_dirs_matches_the_folders(cluster):
    c = cluster
    populated(c, "dirs", batches=25)
    c.create_topic("other", partitions=2, rf=3)
    produce(c, "other", 3)
    c.assert_replicas_identical("dirs", 1)
    c.assert_replicas_identical("other", 2)
    for i, b in c.brokers.items():
        with c.conn(i) as k:
            dirs = describe_log_dirs(k)
        path = os.path.realpath(b.log_dir)
        assert list(dirs) == [path]
        parts = dirs[path]
        assert set(parts) == {("dirs", 0), ("other", 0), ("other", 1)}
        for (t, p), (size, lag) in parts.items():
            folder = os.path.join(b.log_dir, "%s-%d" % (t, p))
            on_disk = sum(os.path.getsize(f) for f in glob.glob(os.path.join(folder, "*.log")))
            assert size == on_disk, (i, t, p, size, on_disk)
            assert lag == 0
        assert parts[("dirs", 0)][0] > 25 * 300
