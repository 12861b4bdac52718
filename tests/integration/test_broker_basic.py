"""`kipper broker`: config, coordinator link at start, framing, ApiVersions and
Metadata, byte by byte.

Every broker runs against the module's kipper keeper, in its own chroot
(broker_harness). Real client: kcat (librdkafka). Raw sockets for the
byte-level answers and for garbage, which must close only the offending
connection."""
import base64
import json
import os
import re
import socket
import struct
import subprocess
import time

import pytest

from broker_harness import (Broker, Reader, broker, coordinator, free_port, is_closed, make_broker,  # noqa: F401
                            parse_api_versions, recv_frame, request_frame)

API_VERSIONS, METADATA = 18, 3
# What the broker advertises: Produce, Fetch, ListOffsets, Metadata, ApiVersions,
# CreateTopics, DeleteTopics, InitProducerId, OffsetForLeaderEpoch,
# DescribeConfigs, CreatePartitions, DescribeCluster.
EXPECTED = {0: (0, 9), 1: (4, 11), 2: (0, 6), 3: (0, 12), 18: (0, 3), 19: (0, 7), 20: (0, 6), 22: (0, 4),
            23: (0, 4), 32: (0, 4), 37: (0, 3), 60: (0, 1),
            # configs and records changed on a running cluster
            21: (0, 2), 33: (0, 2), 35: (0, 4), 44: (0, 1),
            # partition moves and elections: ElectLeaders, AlterPartitionReassignments,
            # ListPartitionReassignments
            43: (0, 2), 45: (0, 0), 46: (0, 0),
            # the group coordinator
            8: (0, 8), 9: (0, 8), 10: (0, 5), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5),
            42: (0, 2), 47: (0, 0)}


def connect(b):
    return socket.create_connection(("127.0.0.1", b.port), timeout=5)


def api_versions(sock, version, corr=1):
    flex = version >= 3
    body = b"\x0ckipper-test\x061.0.0\x00" if flex else b""   # compact strings + empty tags
    sock.sendall(request_frame(API_VERSIONS, version, corr, body, flexible=flex))
    return parse_api_versions(recv_frame(sock), version)


def assert_serving(b):
    with connect(b) as s:
        corr, error, apis, _ = api_versions(s, 0, corr=99)
        assert (corr, error, apis) == (99, 0, EXPECTED)


def zk_get(coordinator, path):
    from kazoo.client import KazooClient
    zk = KazooClient(hosts=coordinator.hosts, timeout=10)
    zk.start(timeout=15)
    try:
        return zk.get(path)[0]
    finally:
        zk.stop()
        zk.close()


def kcat_list(b, *args):
    out = subprocess.run(["kcat", "-L", "-b", b.bootstrap] + list(args), capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return out.stdout


# ---- coordinator link ----

def test_registers_in_its_chroot(broker, coordinator):
    doc = json.loads(zk_get(coordinator, broker.chroot + "/brokers/ids/1"))
    assert doc["host"] == "127.0.0.1" and doc["port"] == broker.port
    assert doc["endpoints"] == ["PLAINTEXT://127.0.0.1:%d" % broker.port]
    cluster = json.loads(zk_get(coordinator, broker.chroot + "/cluster/id"))
    assert cluster["version"] == "1" and re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster["id"])


def test_unreachable_coordinator_fails_start(tmp_path):
    b = Broker("127.0.0.1:%d/kt/nowhere" % free_port(), workdir=str(tmp_path),
               extra={"zookeeper.connection.timeout.ms": "500"})
    t0 = time.monotonic()
    b.start(wait=False)
    try:
        assert b.wait_exit(timeout=20) == 1
    finally:
        b.kill()
    assert time.monotonic() - t0 < 10
    assert "cannot start" in b.log() and "no ZooKeeper session" in b.log(), b.log()


# ---- kcat ----

def test_kcat_lists_one_broker_and_no_topics(broker):
    out = kcat_list(broker)
    assert " 1 brokers:" in out
    assert "broker 1 at 127.0.0.1:%d (controller)" % broker.port in out
    assert " 0 topics:" in out


def test_kcat_lists_topics(broker):
    broker.create_topic("alpha", partitions=3)
    broker.create_topic("beta")
    out = kcat_list(broker)
    assert ' topic "alpha" with 3 partitions:' in out and ' topic "beta" with 1 partitions:' in out
    for p in range(3):
        assert "partition %d, leader 1, replicas: 1, isrs: 1" % p in out


def test_kcat_unknown_topic_without_auto_create(make_broker):
    b = make_broker(extra={"auto.create.topics.enable": "false"})
    out = kcat_list(b, "-t", "nosuch")
    assert 'topic "nosuch" with 0 partitions: Broker: Unknown topic or partition' in out


def test_kcat_invalid_topic_name(broker):
    out = kcat_list(broker, "-t", "bad/name")
    assert 'topic "bad/name" with 0 partitions: Broker: Invalid topic' in out


# ---- ApiVersions ----

@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_api_versions(broker, version):
    with connect(broker) as s:
        corr, error, apis, throttle = api_versions(s, version, corr=7 + version)
    assert (corr, error, apis) == (7 + version, 0, EXPECTED)
    assert throttle == (None if version == 0 else 0)


@pytest.mark.parametrize("version", [4, 99])
def test_api_versions_kip511_fallback(broker, version):
    with connect(broker) as s:
        # An unknown future version: flexible header, a body we cannot know.
        s.sendall(request_frame(API_VERSIONS, version, 42, b"\x00\x00\x00", flexible=True))
        corr, error, apis, _ = parse_api_versions(recv_frame(s), 0)
        assert (corr, error) == (42, 35)
        assert apis == {API_VERSIONS: (0, 3)}   # only its own range, as Kafka answers
        # The same connection goes on with a version we speak.
        assert api_versions(s, 3, corr=43)[:3] == (43, 0, EXPECTED)


def test_api_versions_v3_bad_software_name(broker):
    with connect(broker) as s:
        s.sendall(request_frame(API_VERSIONS, 3, 5, b"\x02-\x061.0.0\x00", flexible=True))
        corr, error, apis, _ = parse_api_versions(recv_frame(s), 3)
    assert (corr, error, apis) == (5, 42, {})


# ---- Metadata ----

def metadata_v0(b, body, corr):
    with connect(b) as s:
        s.sendall(request_frame(METADATA, 0, corr, body))
        r = Reader(recv_frame(s))
    assert r.take(">i") == corr
    assert r.take(">i") == 1
    node, hlen = r.take(">i"), r.take(">h")
    host = r.data[r.pos:r.pos + hlen].decode()
    r.pos += hlen
    assert (node, host, r.take(">i")) == (1, "127.0.0.1", b.port)
    return r


def test_metadata_v0_unknown_topic(make_broker):
    """kafka-python's first request after ApiVersions v0; auto-creation off."""
    b = make_broker(extra={"auto.create.topics.enable": "false"})
    body = struct.pack(">i", 2) + b"\x00\x01a\x00\x01a"    # one topic, twice: answered once
    r = metadata_v0(b, body, 3)
    assert r.take(">i") == 1                                      # topics
    assert (r.take(">h"), r.take(">h")) == (3, 1)                 # UNKNOWN_TOPIC_OR_PARTITION, name length
    r.pos += 1
    assert r.take(">i") == 0 and r.done()                         # no partitions


def test_metadata_v0_auto_creates(broker):
    """v0 always asks for auto-creation: LEADER_NOT_AVAILABLE first, then the topic."""
    body = struct.pack(">i", 1) + b"\x00\x01a"
    r = metadata_v0(broker, body, 4)
    assert r.take(">i") == 1
    assert (r.take(">h"), r.take(">h")) == (5, 1)                 # LEADER_NOT_AVAILABLE: being created
    assert broker.wait_leaders("a") == 1


def parse_metadata_v12(r):
    """The topics of a Metadata v12 response after the header and brokers,
    as {name: (error, topic id, internal, [(error, index, leader, epoch,
    replicas, isr, offline)])}; returns (cluster id, controller, topics)."""
    def cstring():
        n = r.uvarint() - 1
        if n < 0:
            return None
        v = r.data[r.pos:r.pos + n].decode()
        r.pos += n
        return v

    def int32s():
        return [r.take(">i") for _ in range(r.compact_array_len())]

    cid = cstring()
    controller = r.take(">i")
    topics = {}
    for _ in range(r.compact_array_len()):
        error = r.take(">h")
        name = cstring()
        tid = r.data[r.pos:r.pos + 16]
        r.pos += 16
        internal = r.take(">?")
        parts = []
        for _ in range(r.compact_array_len()):
            p = (r.take(">h"), r.take(">i"), r.take(">i"), r.take(">i"), int32s(), int32s(), int32s())
            r.skip_tags()
            parts.append(p)
        assert r.take(">i") == -2147483648                        # topic authorized operations: not asked
        r.skip_tags()
        topics[name] = (error, tid, internal, parts)
    r.skip_tags()
    assert r.done()
    return cid, controller, topics


def metadata_v12(b, topics_field, corr=9):
    with connect(b) as s:
        # Topics, AllowAutoTopicCreation, IncludeTopicAuthorizedOperations, tags.
        s.sendall(request_frame(METADATA, 12, corr, topics_field + b"\x00\x00\x00", flexible=True))
        r = Reader(recv_frame(s))
    assert r.take(">i") == corr
    r.skip_tags()
    assert r.take(">i") == 0                                      # throttle
    assert r.compact_array_len() == 1
    assert r.take(">i") == 1
    n = r.uvarint() - 1
    host = r.data[r.pos:r.pos + n]
    r.pos += n
    assert host == b"127.0.0.1" and r.take(">i") == b.port
    assert r.uvarint() == 0                                       # rack null
    r.skip_tags()
    return parse_metadata_v12(r)


def test_metadata_v12_cluster_id_and_controller(broker, coordinator):
    cid, controller, topics = metadata_v12(broker, b"\x00")   # null: all topics
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cid)
    assert cid == json.loads(zk_get(coordinator, broker.chroot + "/cluster/id"))["id"]
    with open(os.path.join(broker.log_dir, "meta.properties")) as f:
        meta = f.read()
    assert "cluster.id=%s\n" % cid in meta and "broker.id=1\n" in meta and "version=0\n" in meta
    assert controller == 1 and topics == {}


def test_metadata_v12_lists_topics(broker, coordinator):
    broker.create_topic("orders", partitions=2)
    broker.create_topic("audit")
    doc = json.loads(zk_get(coordinator, broker.chroot + "/brokers/topics/orders"))
    want_id = base64.urlsafe_b64decode(doc["topic_id"] + "==")
    _, _, topics = metadata_v12(broker, b"\x00")
    assert sorted(topics) == ["audit", "orders"]
    error, tid, internal, parts = topics["orders"]
    assert (error, tid, internal) == (0, want_id, False)
    assert sorted(parts) == [(0, 0, 1, 0, [1], [1], []), (0, 1, 1, 0, [1], [1], [])]
    # By name: only that one; an unknown one (no auto-creation asked) is UNKNOWN_TOPIC_OR_PARTITION.
    _, _, topics = metadata_v12(broker, b"\x03" + (b"\x00" * 16 + b"\x06audit\x00") +
                                (b"\x00" * 16 + b"\x06nosuc\x00"))
    assert sorted(topics) == ["audit", "nosuc"]
    assert topics["audit"][0] == 0 and len(topics["audit"][3]) == 1
    assert topics["nosuc"][0] == 3 and topics["nosuc"][3] == []


def test_cluster_id_survives_restart(make_broker):
    b = make_broker()
    first = open(os.path.join(b.log_dir, "meta.properties")).read()
    assert b.stop() == 0
    b.start()
    assert open(os.path.join(b.log_dir, "meta.properties")).read() == first
    assert_serving(b)


def test_log_dirs_of_another_cluster_are_refused(make_broker, coordinator, tmp_path):
    b = make_broker(workdir=str(tmp_path))
    assert b.stop() == 0
    # The same log dir, pointed at a fresh chroot: a different /cluster/id.
    other = make_broker(workdir=str(tmp_path), chroot=b.chroot + "-other", start=False)
    other.start(wait=False)
    assert other.wait_exit() == 1
    assert "does not match" in other.log_since_start() and "meta.properties" in other.log_since_start()


# ---- framing and garbage ----

# Fetch below v4 (before magic 2), versions past what is advertised (OffsetFetch v9, FindCoordinator v6
# belong to newer group protocols), and unknown keys.
@pytest.mark.parametrize("key,version", [(0, 10), (1, 3), (1, 12), (3, 13), (9, 9), (10, 6), (999, 0)])
def test_unsupported_api_closes_with_reason(broker, key, version):
    with connect(broker) as s:
        s.sendall(request_frame(key, version, 1, b"\x00" * 16))
        assert is_closed(s)
    assert "unsupported request: api key %d" % key in broker.log()
    assert_serving(broker)


@pytest.mark.parametrize("garbage", [
    os.urandom(4096),
    struct.pack(">i", 0x7FFFFFFF) + b"x" * 100,       # ~2 GiB size prefix
    struct.pack(">i", -5),
    struct.pack(">i", 3) + b"abc",                     # too short for a header
    struct.pack(">i", 40) + struct.pack(">hhih", 3, 1, 1, 30),   # client id longer than the frame
], ids=["random", "2GiB", "negative", "short", "bad-length"])
def test_garbage_closes_only_that_connection(broker, garbage):
    with connect(broker) as bystander, connect(broker) as s:
        s.sendall(garbage)
        # A frame that looks plausible but is cut short (random bytes may be
        # one too) is closed when the peer hangs up in the middle of it.
        s.shutdown(socket.SHUT_WR)
        assert is_closed(s)
        assert api_versions(bystander, 1, corr=5)[:3] == (5, 0, EXPECTED)
    assert_serving(broker)
    if garbage[:4] in (struct.pack(">i", 0x7FFFFFFF), struct.pack(">i", -5)):
        assert "socket.request.max.bytes" in broker.log()


def test_truncated_frame_then_hangup(broker):
    with connect(broker) as s:
        s.sendall(struct.pack(">i", 100) + b"\x00\x12\x00\x00")
    assert_serving(broker)


def test_request_size_limit(make_broker):
    b = make_broker(extra={"socket.request.max.bytes": "64"})
    with connect(b) as s:
        s.sendall(struct.pack(">i", 65) + b"\x00" * 65)
        assert is_closed(s)
    assert "socket.request.max.bytes" in b.log()
    assert_serving(b)


# ---- process and config ----

def test_sigterm_exits_cleanly(broker):
    with connect(broker):
        assert broker.stop() == 0
    assert "shutting down" in broker.log()


def test_sigterm_answers_what_was_sent_before_closing(broker):
    """Requests a client sent before SIGTERM are answered before the connection
    closes (a producer's backlog, and the Metadata request that tells it where the
    partitions went): 6000 pipelined ApiVersions requests, 108 KB the broker reads
    64 KiB at a time, then SIGTERM at once. Every one is answered, in order, then
    the connection closes and the broker exits 0."""
    n = 6000
    burst = b"".join(request_frame(API_VERSIONS, 0, i) for i in range(n))
    s = connect(broker)
    s.settimeout(20)
    s.sendall(burst)
    broker.proc.send_signal(15)
    answered = []
    try:
        while len(answered) < n:
            answered.append(struct.unpack(">i", recv_frame(s)[:4])[0])
    except (EOFError, ConnectionResetError):
        pass
    assert answered == list(range(n)), "%d of %d answered before the close" % (len(answered), n)
    assert is_closed(s, timeout=10)
    s.close()
    assert broker.wait_exit(timeout=20) == 0


def test_unknown_key_warns_and_accepted_key_noted(make_broker):
    b = make_broker(extra={"no.such.key": "1", "num.io.threads": "8"})
    assert_serving(b)
    assert b.stop() == 0
    assert re.search(r"unknown key 'no.such.key'", b.log())
    assert re.search(r"accepted, not acted on: (.*, )?num.io.threads=8(,|$)", b.log(), re.M)


@pytest.mark.parametrize("key,value", [
    ("broker.id", "abc"), ("listeners", "SSL://127.0.0.1:1"), ("num.partitions", "0"),
    ("zookeeper.connect", "nohostport"), ("auto.create.topics.enable", "maybe"),
    ("log.segment.bytes", "10"), ("zookeeper.session.timeout.ms", "5"),
    ("log.message.timestamp.type", "BrokerTime"),
])
def test_bad_value_fails_naming_the_key(make_broker, key, value):
    b = make_broker(extra={key: value}, start=False)
    b.start(wait=False)
    assert b.wait_exit() == 1
    assert key in b.log()


def test_broker_id_must_match_meta_properties(make_broker, tmp_path):
    b = make_broker(workdir=str(tmp_path))
    assert b.stop() == 0
    other = make_broker(broker_id=2, workdir=str(tmp_path), chroot=b.chroot, start=False)
    other.start(wait=False)
    assert other.wait_exit() == 1
    assert "does not match broker.id 1" in other.log()
