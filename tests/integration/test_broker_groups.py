"""The broker's group coordinator with real clients: confluent-kafka
(librdkafka 2.0) consumers with group.id, kcat -G, kafka-python's
KafkaConsumer and admin client, and raw frames where the exact answer
matters.

Every test gets its own chroot on the module's keeper and its own brokers
(small fixture below: server.properties with zookeeper.connect, a free port,
group.initial.rebalance.delay.ms=0 so a group forms at once)."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import uuid

import pytest

from harness import KIPPER, free_port, wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

SESSION = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}


# ---- fixture: brokers on a chroot of the module's keeper ----

class GroupBroker:
    def __init__(self, zk_connect, broker_id=1, extra=None, workdir=None):
        self.broker_id = broker_id
        self.port = free_port()
        self.workdir = workdir or tempfile.mkdtemp(prefix="kipper-groups-")
        self.log_dir = os.path.join(self.workdir, "logs")
        self.config = os.path.join(self.workdir, "server.properties")
        self.log_path = os.path.join(self.workdir, "broker.log")
        self.proc = None
        props = {
            "broker.id": str(broker_id),
            "listeners": "PLAINTEXT://127.0.0.1:%d" % self.port,
            "log.dirs": self.log_dir,
            "zookeeper.connect": zk_connect,
            "group.initial.rebalance.delay.ms": "0",
            "num.partitions": "1",
        }
        props.update(extra or {})
        with open(self.config, "w") as f:
            for k, v in props.items():
                f.write("%s=%s\n" % (k, v))

    @property
    def bootstrap(self):
        return "127.0.0.1:%d" % self.port

    def start(self):
        self._log_from = len(self.log())   # a restart appends to the same log
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([KIPPER, "broker", self.config], stdout=self._log, stderr=self._log)
        wait_until(self._registered, timeout=15, what="broker %d" % self.broker_id)
        return self

    def _registered(self):
        if self.proc.poll() is not None:
            raise AssertionError("broker exited with %s:\n%s" % (self.proc.returncode, self.log()))
        # registered, and listed in its own view of the live brokers
        return "registered as /brokers/ids/" in self.log()[self._log_from:] and self.broker_id in live_brokers(self)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self._log.close()
        return self.proc.returncode if self.proc else None

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""


@pytest.fixture
def cluster(request, shared_keeper):
    """Factory: cluster(n=1, extra={}) starts n brokers (ids 1..n) on a fresh
    chroot; they are stopped after the test (logs kept if it failed)."""
    chroot = "/groups-%s" % uuid.uuid4().hex[:8]
    brokers = []

    class Cluster:
        zk = "%s%s" % (shared_keeper.hosts, chroot)
        root = chroot

        def start(self, n=1, extra=None):
            for i in range(n):
                brokers.append(GroupBroker(self.zk, broker_id=len(brokers) + 1, extra=extra).start())
            wait_until(lambda: all(len(live_brokers(b)) == len(brokers) for b in brokers), timeout=15,
                       what="every broker to see the others")
            return brokers

        @property
        def brokers(self):
            return brokers

        @property
        def bootstrap(self):
            return ",".join(b.bootstrap for b in brokers)

    yield Cluster()
    keep = getattr(request.node, "keeper_failed", False) or os.environ.get("KIPPER_TEST_KEEP")
    for b in brokers:
        rc = b.stop()
        assert rc == 0, "broker exited with %r:\n%s" % (rc, b.log()[-5000:])
        if not keep:
            shutil.rmtree(b.workdir, ignore_errors=True)


# ---- raw frames ----

def frame(api_key, version, corr, body, client_id="groups-test"):
    cid = client_id.encode()
    payload = struct.pack(">hhih", api_key, version, corr, len(cid)) + cid + body
    return struct.pack(">i", len(payload)) + payload


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("closed")
        data += chunk
    return data


def call(broker, api_key, version, body, timeout=15):
    with socket.create_connection(("127.0.0.1", broker.port), timeout=timeout) as s:
        s.sendall(frame(api_key, version, 7, body))
        (size,) = struct.unpack(">i", recv_exact(s, 4))
        data = recv_exact(s, size)
    assert struct.unpack(">i", data[:4])[0] == 7
    return data[4:]


def s16(text):
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


class Rd:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, fmt):
        (v,) = struct.unpack_from(fmt, self.d, self.p)
        self.p += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take(">h")
        if n < 0:
            return None
        v = self.d[self.p:self.p + n].decode()
        self.p += n
        return v

    def bytes_(self):
        n = self.take(">i")
        v = self.d[self.p:self.p + max(n, 0)]
        self.p += max(n, 0)
        return v


def live_brokers(broker):
    """Broker ids in a Metadata v1 answer."""
    r = Rd(call(broker, 3, 1, struct.pack(">i", 0)))
    ids = []
    for _ in range(r.take(">i")):
        ids.append(r.take(">i"))
        r.string()
        r.take(">i")
        r.string()
    return ids


def find_coordinator_v0(broker, group):
    r = Rd(call(broker, 10, 0, s16(group)))
    return r.take(">h"), r.take(">i"), r.string(), r.take(">i")


def java_hash(text):
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def placement_score(group_hash, broker_id):
    """splitmix64's finalizer over (the group's Java hash, the broker id)."""
    m = (1 << 64) - 1
    x = ((group_hash & 0xFFFFFFFF) << 32) | (broker_id & 0xFFFFFFFF)
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & m
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & m
    return x ^ (x >> 31)


def expected_coordinator(group, broker_ids):
    """Rendezvous hashing over the live brokers: the one scoring highest for
    the group (ties to the lower id), as broker/group/group.h describes."""
    h = java_hash(group)
    return max(sorted(broker_ids), key=lambda i: (placement_score(h, i), -i))


# ---- helpers ----

def create_topic(bootstrap, name, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)


def produce(bootstrap, topic, values, partitions, **conf):
    p = Producer(dict({"bootstrap.servers": bootstrap, "linger.ms": 5}, **conf))
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % partitions)
    assert p.flush(30) == 0


def consumer(bootstrap, group, **conf):
    base = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"}
    base.update(SESSION)
    base.update(conf)
    return Consumer(base)


def poll_until(consumers, done, timeout=30):
    """Polls every consumer in turn; returns {consumer index: [messages]}."""
    got = {i: [] for i in range(len(consumers))}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not done(got):
        for i, c in enumerate(consumers):
            m = c.poll(0.1)
            if m is not None and not m.error():
                got[i].append(m)
    return got


def wait_assignments(consumers, sizes, timeout=30):
    """Polls until each consumer holds the given number of partitions."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            m = c.poll(0.1)
            assert m is None or m.error() or False, "no messages expected yet: %r" % (m.value(),)
        if [len(c.assignment()) for c in consumers] == sizes:
            return [sorted(tp.partition for tp in c.assignment()) for c in consumers]
    raise AssertionError("assignments %r, wanted sizes %r" % ([c.assignment() for c in consumers], sizes))


# ---- tests ----

def test_api_versions_advertise_the_group_apis(cluster):
    [b] = cluster.start()
    r = Rd(call(b, 18, 0, b""))
    assert r.take(">h") == 0
    apis = {}
    for _ in range(r.take(">i")):
        k = r.take(">h")
        apis[k] = (r.take(">h"), r.take(">h"))
    assert {k: apis[k] for k in (8, 9, 10, 11, 12, 13, 14, 15, 16)} == {
        8: (0, 8), 9: (0, 8), 10: (0, 5), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5)}


def test_two_consumers_share_a_topic_then_one_takes_over(cluster):
    cluster.start()
    boot = cluster.bootstrap
    create_topic(boot, "shared", 4)
    c1 = consumer(boot, "sharers", **{"enable.auto.commit": True, "auto.commit.interval.ms": 200})
    c2 = consumer(boot, "sharers", **{"enable.auto.commit": True, "auto.commit.interval.ms": 200})
    try:
        c1.subscribe(["shared"])
        c2.subscribe(["shared"])
        parts = wait_assignments([c1, c2], [2, 2])
        assert sorted(parts[0] + parts[1]) == [0, 1, 2, 3]
        produce(boot, "shared", [b"m%d" % i for i in range(200)], 4)
        got = poll_until([c1, c2], lambda g: len(g[0]) + len(g[1]) >= 200)
        values = [m.value() for m in got[0] + got[1]]
        assert sorted(values) == sorted(b"m%d" % i for i in range(200))   # each exactly once
        for i in (0, 1):
            assert {m.partition() for m in got[i]} == set(parts[i])
        time.sleep(0.5)   # an auto-commit round
        c1.close()        # commits and leaves: c2 gets everything
        c1 = None
        assert wait_assignments([c2], [4]) == [[0, 1, 2, 3]]
        produce(boot, "shared", [b"n%d" % i for i in range(40)], 4)
        more = poll_until([c2], lambda g: len(g[0]) >= 40, timeout=20)
        time.sleep(1)
        more[0] += poll_until([c2], lambda g: False, timeout=1)[0]
        assert sorted(m.value() for m in more[0]) == sorted(b"n%d" % i for i in range(40))
    finally:
        if c1:
            c1.close()
        c2.close()


def test_commit_then_restart_resumes(cluster):
    cluster.start()
    boot = cluster.bootstrap
    create_topic(boot, "resume", 2)
    produce(boot, "resume", [b"r%d" % i for i in range(100)], 2)
    c = consumer(boot, "resumers", **{"enable.auto.commit": False})
    c.subscribe(["resume"])
    got = poll_until([c], lambda g: len(g[0]) >= 60)[0][:60]
    # commit exactly what was read of each partition
    last = {}
    for m in got:
        last[m.partition()] = max(last.get(m.partition(), -1), m.offset())
    c.commit(offsets=[TopicPartition("resume", p, o + 1) for p, o in last.items()], asynchronous=False)
    committed = c.committed([TopicPartition("resume", p) for p in (0, 1)], timeout=10)
    assert {tp.partition: tp.offset for tp in committed} == {p: o + 1 for p, o in last.items()}
    c.close()
    c = consumer(boot, "resumers", **{"enable.auto.commit": False})
    c.subscribe(["resume"])
    rest = poll_until([c], lambda g: len(g[0]) >= 40)[0]
    c.close()
    first = {}
    for m in rest:
        first.setdefault(m.partition(), m.offset())
    assert first == {p: o + 1 for p, o in last.items() if o + 1 < 50}   # 50 messages a partition
    assert sorted(m.value() for m in got + rest) == sorted(b"r%d" % i for i in range(100))


def test_offsets_live_in_the_keeper_and_survive_a_broker_restart(cluster, zk):
    [b] = cluster.start()
    create_topic(b.bootstrap, "durable", 1)
    produce(b.bootstrap, "durable", [b"d%d" % i for i in range(10)], 1)
    c = consumer(b.bootstrap, "keepers", **{"enable.auto.commit": False})
    c.assign([TopicPartition("durable", 0, 0)])
    c.commit(offsets=[TopicPartition("durable", 0, 7)], asynchronous=False)
    c.close()
    data, _ = zk.get(cluster.root + "/consumers/keepers/offsets/durable/0")
    assert json.loads(data) == {"offset": 7, "leader_epoch": -1, "metadata": ""}
    assert b.stop() == 0
    b.start()
    c = consumer(b.bootstrap, "keepers")
    [tp] = c.committed([TopicPartition("durable", 0)], timeout=15)
    assert tp.offset == 7
    c.subscribe(["durable"])
    got = poll_until([c], lambda g: len(g[0]) >= 3)[0]
    c.close()
    assert [m.offset() for m in got[:3]] == [7, 8, 9]


def test_static_member_comes_back_without_a_rebalance(cluster):
    [b] = cluster.start()
    create_topic(b.bootstrap, "static", 2)
    conf = {"group.instance.id": "instance-a", "enable.auto.commit": False}
    c = consumer(b.bootstrap, "statics", **conf)
    c.subscribe(["static"])
    assert wait_assignments([c], [2]) == [[0, 1]]
    generations = b.log().count("stabilized group statics")
    c.close()   # a static member does not leave the group on close
    c = consumer(b.bootstrap, "statics", **conf)
    c.subscribe(["static"])
    try:
        assert wait_assignments([c], [2]) == [[0, 1]]
        assert b.log().count("stabilized group statics") == generations   # same generation
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        [g] = [g for g in admin.list_groups(timeout=10) if g.id == "statics"]
        [m] = g.members
        assert g.state == "Stable" and m.id.startswith("instance-a-")
    finally:
        c.close()


def test_kcat_balanced_consumer_reads_everything(cluster):
    if not shutil.which("kcat"):
        pytest.skip("kcat not installed")
    cluster.start()
    boot = cluster.bootstrap
    create_topic(boot, "kc", 3)
    produce(boot, "kc", [b"k%d" % i for i in range(90)], 3)
    out = subprocess.run(["kcat", "-b", boot, "-G", "kcat-group", "-X", "auto.offset.reset=earliest",
                          "-X", "session.timeout.ms=6000", "-c", "90", "-f", "%s\\n", "kc"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.split()) == sorted("k%d" % i for i in range(90))


def test_a_member_that_dies_is_evicted_at_its_session_timeout(cluster):
    if not shutil.which("kcat"):
        pytest.skip("kcat not installed")
    [b] = cluster.start()
    create_topic(b.bootstrap, "expiry", 2)
    kcat = subprocess.Popen(["kcat", "-b", b.bootstrap, "-G", "expirers", "-X", "session.timeout.ms=6000",
                             "-X", "heartbeat.interval.ms=1000", "-q", "expiry"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = consumer(b.bootstrap, "expirers")
    try:
        c.subscribe(["expiry"])
        wait_assignments([c], [1])
        kcat.kill()   # no LeaveGroup: only its session timeout tells
        kcat.wait()
        t0 = time.monotonic()
        assert wait_assignments([c], [2], timeout=20) == [[0, 1]]
        assert time.monotonic() - t0 > 3
        assert "has failed (session timeout)" in b.log()
    finally:
        c.close()
        if kcat.poll() is None:
            kcat.kill()


def test_kafka_python_consumer_group(cluster):
    kafka = pytest.importorskip("kafka")
    from kafka.structs import OffsetAndMetadata
    from kafka.structs import TopicPartition as KTP
    cluster.start()
    boot = cluster.bootstrap
    create_topic(boot, "kp", 2)
    produce(boot, "kp", [b"p%d" % i for i in range(50)], 2)
    kc = kafka.KafkaConsumer(bootstrap_servers=boot, group_id="kp-group", auto_offset_reset="earliest",
                             enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=1000,
                             consumer_timeout_ms=15000)
    kc.subscribe(["kp"])
    got = []
    for m in kc:
        got.append(m)
        if len(got) == 50:
            break
    assert sorted(m.value for m in got) == sorted(b"p%d" % i for i in range(50))
    kc.commit()
    assert {kc.committed(KTP("kp", p)) for p in (0, 1)} == {25}
    # offset.metadata.max.bytes (4096) is enforced
    with pytest.raises(kafka.errors.OffsetMetadataTooLargeError):
        kc.commit({KTP("kp", 0): OffsetAndMetadata(3, "x" * 4097)})
    kc.commit({KTP("kp", 0): OffsetAndMetadata(20, "note")})
    kc.close()
    admin = kafka.KafkaAdminClient(bootstrap_servers=boot)
    try:
        # OffsetFetch with null topics: every committed offset of the group
        offsets = admin.list_consumer_group_offsets("kp-group")
        assert {tp.partition: (om.offset, om.metadata) for tp, om in offsets.items()} == {0: (20, "note"),
                                                                                        1: (25, "")}
        assert ("kp-group", "consumer") in admin.list_consumer_groups()
    finally:
        admin.close()


def test_lz4_from_librdkafka_is_stored_compressed(cluster):
    [b] = cluster.start()
    create_topic(b.bootstrap, "squeezed", 1)
    produce(b.bootstrap, "squeezed", [b"a" * 500] * 20, 1, **{"compression.type": "lz4", "linger.ms": 50})
    seg = os.path.join(b.log_dir, "squeezed-0", "%020d.log" % 0)
    with open(seg, "rb") as f:
        head = f.read(61)
    magic, attributes = head[16], struct.unpack(">h", head[21:23])[0]
    assert magic == 2
    assert attributes & 7 == 3, "batch attributes %#x: not lz4" % attributes
    assert os.path.getsize(seg) < 20 * 500 // 2


def test_describe_and_list_groups(cluster):
    cluster.start()
    boot = cluster.bootstrap
    create_topic(boot, "desc", 2)
    c = consumer(boot, "described", **{"client.id": "desc-client"})
    c.subscribe(["desc"])
    wait_assignments([c], [2])
    try:
        admin = AdminClient({"bootstrap.servers": boot})
        groups = {g.id: g for g in admin.list_groups(timeout=10)}
        g = groups["described"]
        assert (g.state, g.protocol_type, g.protocol) == ("Stable", "consumer", "range")
        [m] = g.members
        assert m.client_id == "desc-client" and m.client_host == "/127.0.0.1"
        assert m.id.startswith("desc-client-")
        assert len(m.assignment) > 0 and len(m.metadata) > 0
        c.commit(offsets=[TopicPartition("desc", 0, 0)], asynchronous=False)
    finally:
        c.close()
    [b] = cluster.brokers
    # A group nobody ever used is Dead (error 0, as Kafka before DescribeGroups v6).
    r = Rd(call(b, 15, 0, struct.pack(">i", 1) + s16("never-seen")))
    assert r.take(">i") == 1
    assert (r.take(">h"), r.string(), r.string()) == (0, "never-seen", "Dead")
    # After a restart the group is known only by its committed offsets: Empty.
    assert b.stop() == 0
    b.start()
    r = Rd(call(b, 16, 0, b""))
    assert r.take(">h") == 0
    listed = {}
    for _ in range(r.take(">i")):
        gid = r.string()
        listed[gid] = r.string()
    assert listed.get("described") == ""
    r = Rd(call(b, 15, 0, struct.pack(">i", 1) + s16("described")))
    r.take(">i")
    assert (r.take(">h"), r.string(), r.string()) == (0, "described", "Empty")


def test_two_brokers_agree_on_the_coordinator(cluster):
    brokers = cluster.start(n=2)
    ids = [1, 2]
    placed = {1: [], 2: []}
    for group in ["g%d" % i for i in range(12)] + ["polygenelubricants", "caf\u00e9"]:
        want = expected_coordinator(group, ids)
        placed[want].append(group)
        for b in brokers:
            error, node, host, port = find_coordinator_v0(b, group)
            assert (error, node, port) == (0, want, brokers[want - 1].port), group
    assert placed[1] and placed[2]
    # The other broker refuses to coordinate: NOT_COORDINATOR (16).
    group = placed[2][0]
    body = s16(group) + struct.pack(">i", 6000) + s16("") + s16("consumer") + struct.pack(">i", 0)
    r = Rd(call(brokers[0], 11, 0, body))
    assert r.take(">h") == 16
    # ... and a consumer finds its way to the right one.
    create_topic(cluster.bootstrap, "placed", 2)
    produce(cluster.bootstrap, "placed", [b"x%d" % i for i in range(20)], 2)
    c = consumer(cluster.bootstrap, group)
    c.subscribe(["placed"])
    got = poll_until([c], lambda g: len(g[0]) >= 20)[0]
    c.close()
    assert len(got) == 20
    assert "stabilized group %s" % group in brokers[1].log()
    assert "stabilized group %s" % group not in brokers[0].log()


def test_find_coordinator_batch_and_key_types(cluster):
    [b] = cluster.start()
    # v4 (flexible): two group keys.
    body = b"\x00" + b"\x03" + b"\x02a" + b"\x02b" + b"\x00"
    data = call(b, 10, 4, b"\x00" + body)   # header tag buffer, then the body
    r = Rd(data[1:])                        # response header v1: tag buffer
    assert r.take(">i") == 0                # throttle
    n = r.d[r.p] - 1
    r.p += 1
    assert n == 2
    # v1 with the transaction key type: refused plainly.
    r = Rd(call(b, 10, 1, s16("txn") + b"\x01"))
    r.take(">i")
    assert r.take(">h") == 53


def test_join_group_errors(cluster):
    [b] = cluster.start()
    # session timeout below group.min.session.timeout.ms
    body = s16("errs") + struct.pack(">i", 1000) + s16("") + s16("consumer") + struct.pack(">i", 1) + \
        s16("range") + struct.pack(">i", 0)
    r = Rd(call(b, 11, 0, body))
    assert r.take(">h") == 26   # INVALID_SESSION_TIMEOUT
    # empty group id
    body = s16("") + struct.pack(">i", 6000) + s16("") + s16("consumer") + struct.pack(">i", 0)
    assert Rd(call(b, 11, 0, body)).take(">h") == 24   # INVALID_GROUP_ID
    # v4: a new member is asked to come back with its id (KIP-394)
    body = s16("errs") + struct.pack(">ii", 6000, 10000) + s16("") + s16("consumer") + struct.pack(">i", 1) + \
        s16("range") + struct.pack(">i", 0)
    r = Rd(call(b, 11, 4, body))
    r.take(">i")
    assert r.take(">h") == 79   # MEMBER_ID_REQUIRED
    assert r.take(">i") == -1
    assert (r.string(), r.string()) == ("", "")
    assert r.string().startswith("groups-test-")
    # Heartbeat of a member the group does not know
    r = Rd(call(b, 12, 0, s16("errs") + struct.pack(">i", 1) + s16("nobody")))
    assert r.take(">h") == 25   # UNKNOWN_MEMBER_ID


# The frames librdkafka 2.0.2 (Debian's) sends for rd_kafka_ListConsumerGroups
# and rd_kafka_ListConsumerGroupOffsets(all topics), as captured on the wire
# (client id "rdkafka"; the correlation id is patched in): ListGroups v4 ends
# with one byte after its body, OffsetFetch v7 with three. Kafka ignores what
# follows a complete request body (src/broker/wire/kafka_codec.c says how).
LIBRDKAFKA_LIST_GROUPS_V4 = bytes.fromhex("0010 0004 00000000 0007 72646b61666b61 00" "01 00" "00")
LIBRDKAFKA_OFFSET_FETCH_V7 = bytes.fromhex("0009 0007 00000000 0007 72646b61666b61 00"
                                           "03 6731 00 00 00" "00 00 00")   # group "g1"


def raw_librdkafka_call(sock, template, corr, group=None):
    """One of the frames above with corr (and group for OffsetFetch) put in;
    the answer's body after its flexible header."""
    payload = bytearray(template)
    payload[4:8] = struct.pack(">i", corr)
    if group is not None:
        g = group.encode()
        at = 4 + 4 + 2 + 7 + 1   # key, version, corr, client id, header tags
        payload[at:at + 3] = bytes([len(g) + 1]) + g
    sock.sendall(struct.pack(">i", len(payload)) + bytes(payload))
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    data = recv_exact(sock, size)
    assert struct.unpack(">i", data[:4])[0] == corr
    from kafka_wire import Reader
    r = Reader(data[4:])
    r.skip_tags()
    return r


def test_admin_clients_list_groups_and_group_offsets(cluster):
    """Issue 15: librdkafka 2.0.2's ListGroups v4 and OffsetFetch v7 (each with
    bytes after the body) are answered, on a connection that stays open; the
    admin calls built on them (librdkafka's own, confluent-kafka's and
    kafka-python's) list the groups and a group's committed offsets."""
    from rdkafka_admin import RdKafkaAdmin
    [b] = cluster.start()
    boot = cluster.bootstrap
    create_topic(boot, "listed-topic", 2)
    c = Consumer({"bootstrap.servers": boot, "group.id": "g1", "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition("listed-topic", 0, 5), TopicPartition("listed-topic", 1, 7)],
                 asynchronous=False)
    finally:
        c.close()
    committed = {("listed-topic", 0): 5, ("listed-topic", 1): 7}

    with socket.create_connection(("127.0.0.1", b.port), timeout=15) as s:
        r = raw_librdkafka_call(s, LIBRDKAFKA_LIST_GROUPS_V4, 1)
        r.take(">i")   # throttle
        assert r.take(">h") == 0
        groups = r.carray(lambda r: (r.cstring(), r.cstring(), r.cstring()))
        r.skip_tags()
        # Committed to, never joined: no protocol type, as in Kafka.
        assert r.done() and ("g1", "", "Empty") in groups, groups
        r = raw_librdkafka_call(s, LIBRDKAFKA_OFFSET_FETCH_V7, 2, group="g1")
        r.take(">i")
        topics = r.carray(lambda r: (r.cstring(), r.carray(
            lambda r: (r.take(">i"), r.take(">q"), r.take(">i"), r.cstring(), r.take(">h")))))
        assert r.take(">h") == 0
        r.skip_tags()
        assert r.done()
        assert {(t, p[0]): p[1] for t, parts in topics for p in parts} == committed
        assert all(p[4] == 0 for _, parts in topics for p in parts)
    assert "malformed request" not in b.log()

    with RdKafkaAdmin(boot) as a:
        assert a.version() == "2.0.2"
        assert a.list_consumer_groups().get("g1") == "Empty"
        assert a.list_consumer_group_offsets("g1") == committed

    admin = AdminClient({"bootstrap.servers": boot})
    assert "g1" in {g.id for g in admin.list_groups(timeout=10)}
    probe = Consumer({"bootstrap.servers": boot, "group.id": "g1"})
    try:
        got = probe.committed([TopicPartition("listed-topic", 0), TopicPartition("listed-topic", 1)], timeout=15)
        assert {(tp.topic, tp.partition): tp.offset for tp in got} == committed
    finally:
        probe.close()

    kafka = pytest.importorskip("kafka")
    kp = kafka.KafkaAdminClient(bootstrap_servers=boot)
    try:
        assert ("g1", "") in kp.list_consumer_groups()
        offsets = kp.list_consumer_group_offsets("g1")
        assert {(tp.topic, tp.partition): om.offset for tp, om in offsets.items()} == committed
    finally:
        kp.close()
