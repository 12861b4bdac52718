"""The broker with real Kafka clients: kcat, confluent-kafka (librdkafka) and
kafka-python, plus raw requests (kafka_wire) where a client hides the bytes
(idempotent producer retries, produce answers).

Every test runs its own broker in its own chroot of the module's kipper keeper;
one runs against Apache ZooKeeper 3.8 instead."""
import json
import os
import random
import subprocess
import time

import pytest
from confluent_kafka import (TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, Consumer, KafkaError, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

from broker_harness import apache_coordinator, broker, coordinator, kafka, make_broker  # noqa: F401
from harness import wait_until
from kafka_wire import Record, parse_record_batches, record_batch

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
BASE_TS = 1700000000000      # explicit CreateTime timestamps: far in the past, so never the broker's clock


# ---- helpers ----

def messages(n, partitions, seed=1):
    """n messages spread over partitions: dicts with partition, key, value,
    headers and an explicit, per-partition increasing timestamp."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        # Random bytes and text that compresses (librdkafka sends a batch
        # uncompressed when compressing does not make it smaller).
        value = rng.randbytes(rng.randint(0, 30)) + b"payload %d " % i * rng.randint(0, 20)
        if i % 7 == 0:
            value = b"\x00binary\xff" + value
        headers = [("seq", str(i).encode()), ("empty", b""), ("dup", b"1"), ("dup", b"2")]
        if i % 5 == 0:
            headers.append(("null", None))
        out.append({"partition": i % partitions, "key": b"key-%d" % i, "value": value, "headers": headers,
                    "timestamp": BASE_TS + i * 10})
    return out


def expected_by_partition(msgs):
    """{partition: [message, ...]} in production order (= offset order)."""
    out = {}
    for m in msgs:
        out.setdefault(m["partition"], []).append(m)
    return out


def confluent_producer(b, **conf):
    c = {"bootstrap.servers": b.bootstrap, "linger.ms": 20, "acks": "all", "enable.idempotence": False}
    c.update(conf)
    return Producer(c)


def confluent_produce(b, topic, msgs, **conf):
    """Produce msgs (in order, partition given) and return [(partition, offset, timestamp)] per message."""
    p = confluent_producer(b, **conf)
    results = [None] * len(msgs)

    def report(i):
        def cb(err, m):
            results[i] = err or (m.partition(), m.offset(), m.timestamp())
        return cb

    for i, m in enumerate(msgs):
        p.produce(topic, value=m["value"], key=m["key"], headers=m["headers"], partition=m["partition"],
                  timestamp=m["timestamp"], on_delivery=report(i))
        p.poll(0)
    assert p.flush(30) == 0, "messages left undelivered"
    errors = [r for r in results if isinstance(r, KafkaError)]
    assert not errors, errors[:5]
    return results


def confluent_consumer(b, **conf):
    c = {"bootstrap.servers": b.bootstrap, "group.id": "kipper-test", "enable.auto.commit": False,
         "enable.partition.eof": True, "auto.offset.reset": "error", "fetch.wait.max.ms": 20}
    c.update(conf)
    return Consumer(c)


def confluent_consume(b, topic, starts, timeout=30):
    """Every message from {partition: start offset} up to each partition's end,
    assigned by offset (no group coordination): {partition: [Message]}."""
    c = confluent_consumer(b)
    try:
        c.assign([TopicPartition(topic, p, o) for p, o in starts.items()])
        got = {p: [] for p in starts}
        at_end = set()
        deadline = time.monotonic() + timeout
        while len(at_end) < len(starts):
            assert time.monotonic() < deadline, "consumed %s" % {p: len(v) for p, v in got.items()}
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                at_end.add(m.partition())
                continue
            got[m.partition()].append(m)
        return got
    finally:
        c.close()


def kp_headers(headers):
    """kafka-python 2.0 cannot send a null header value: those are left out."""
    return [(k, v) for k, v in headers if v is not None]


def check_consumed(got, want, partition_start=0):
    """confluent-kafka messages against the expected dicts, offset by offset."""
    assert len(got) == len(want), (len(got), len(want))
    for i, (m, w) in enumerate(zip(got, want)):
        assert m.offset() == partition_start + i
        assert (m.key(), m.value()) == (w["key"], w["value"]), "offset %d" % m.offset()
        assert m.headers() == w["headers"], "offset %d" % m.offset()
        assert m.timestamp() == (TIMESTAMP_CREATE_TIME, w["timestamp"]), "offset %d" % m.offset()


def batch_bases(b, topic, partition):
    """Base offsets and record counts of the partition's batches, read raw."""
    with b.conn() as c:
        out, offset = [], 0
        while True:
            p = c.fetch(topic, partition, offset)
            assert p.error == 0
            batches = parse_record_batches(p.records)
            if not batches:
                return out
            for bt in batches:
                out.append((bt.base_offset, bt.last_offset_delta + 1, bt.attributes & 7))
            offset = batches[-1].base_offset + batches[-1].last_offset_delta + 1


# ---- kcat: 100k messages byte for byte ----

KCAT_HEADERS = [("trace", "t-1"), ("empty", ""), ("dup", "1"), ("dup", "2")]


def test_kcat_100k_messages_roundtrip(broker, tmp_path):
    """kcat produces 100k keyed messages with headers from a file and consumes
    them back: keys, headers, payloads and offsets byte-identical, timestamps
    the producer's (kcat 1.7 cannot set one per message: librdkafka stamps
    CreateTime at produce)."""
    n = 100_000
    broker.create_topic("kcat")
    rng = random.Random(100)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.;:=+-_/\\\"'{}[]éß✓"
    keys, values = [], []
    for i in range(n):
        keys.append("k%06d" % i)
        values.append("v%d|" % i + "".join(rng.choices(alphabet, k=rng.randint(0, 60))))
    src = tmp_path / "in.txt"
    src.write_text("".join("%s:%s\n" % kv for kv in zip(keys, values)), encoding="utf-8")
    hargs = sum((["-H", "%s=%s" % h] for h in KCAT_HEADERS), [])
    t0 = int(time.time() * 1000)
    out = subprocess.run(["kcat", "-P", "-b", broker.bootstrap, "-t", "kcat", "-p", "0", "-K:", "-l"] + hargs +
                         ["-X", "linger.ms=20", str(src)], capture_output=True, timeout=120)
    t1 = int(time.time() * 1000)
    assert out.returncode == 0, out.stderr
    fmt = r"%k\t%h\t%T\t%o\t%s\n"
    out = subprocess.run(["kcat", "-C", "-b", broker.bootstrap, "-t", "kcat", "-p", "0", "-o", "beginning", "-e",
                          "-q", "-f", fmt], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode("utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == n + 1, len(lines)
    hdr = ",".join("%s=%s" % h for h in KCAT_HEADERS)
    stamps = []
    for i, line in enumerate(lines[:-1]):
        k, h, ts, off, v = line.split("\t", 4)
        assert (k, h, off, v) == (keys[i], hdr, str(i), values[i]), "offset %d" % i
        stamps.append(int(ts))
    assert t0 - 1000 <= stamps[0] and stamps[-1] <= t1 + 1000
    assert stamps == sorted(stamps)
    # The stored timestamps are CreateTime (the producer's), as a JSON envelope says.
    out = subprocess.run(["kcat", "-C", "-b", broker.bootstrap, "-t", "kcat", "-p", "0", "-o", "-3", "-e", "-q",
                          "-J"], capture_output=True, timeout=60)
    tail = [json.loads(x) for x in out.stdout.decode().splitlines()]
    assert [(m["offset"], m["tstype"], m["ts"], m["key"], m["payload"]) for m in tail] == [
        (n - 3 + i, "create", stamps[n - 3 + i], keys[n - 3 + i], values[n - 3 + i]) for i in range(3)]


# ---- confluent-kafka and kafka-python: every codec ----

@pytest.mark.parametrize("codec", CODECS)
def test_confluent_produce_consume(broker, codec):
    topic = "cf-" + codec
    broker.create_topic(topic, partitions=2)
    msgs = messages(400, 2, seed=CODECS.index(codec))
    results = confluent_produce(broker, topic, msgs, **{"compression.type": codec})
    want = expected_by_partition(msgs)
    # Offsets: consecutive from 0 per partition, in production order.
    for p, ms in want.items():
        idx = [i for i, m in enumerate(msgs) if m["partition"] == p]
        assert [results[i][:2] for i in idx] == [(p, k) for k in range(len(ms))]
        assert all(results[i][2] == (TIMESTAMP_CREATE_TIME, msgs[i]["timestamp"]) for i in idx)
    # Everything back, by offset from the start and from the middle.
    got = confluent_consume(broker, topic, {0: 0, 1: 0})
    for p in (0, 1):
        check_consumed(got[p], want[p])
    got = confluent_consume(broker, topic, {1: 150})
    check_consumed(got[1], want[1][150:], partition_start=150)
    # By timestamp: a batch's first record, and past the end.
    first_of_batch = batch_bases(broker, topic, 1)[-1][0]
    c = confluent_consumer(broker)
    try:
        tps = c.offsets_for_times([TopicPartition(topic, 1, want[1][first_of_batch]["timestamp"]),
                                   TopicPartition(topic, 0, BASE_TS + 10_000_000)], timeout=10)
        assert [(t.partition, t.offset) for t in tps] == [(1, first_of_batch), (0, -1)]
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert (lo, hi) == (0, len(want[0]))
    finally:
        c.close()


def kafka_python_produce(b, topic, msgs, codec, linger_ms=20):
    from kafka import KafkaProducer
    p = KafkaProducer(bootstrap_servers=b.bootstrap, compression_type=None if codec == "none" else codec,
                      linger_ms=linger_ms, acks="all")
    try:
        futures = [p.send(topic, value=m["value"], key=m["key"], headers=kp_headers(m["headers"]),
                          partition=m["partition"], timestamp_ms=m["timestamp"]) for m in msgs]
        p.flush(30)
        return [(f.get(10).partition, f.get(10).offset, f.get(10).timestamp) for f in futures]
    finally:
        p.close(10)


def kafka_python_consume(b, topic, partition, start, count):
    from kafka import KafkaConsumer, TopicPartition as KTP
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False, group_id=None)
    try:
        tp = KTP(topic, partition)
        c.assign([tp])
        c.seek(tp, start)
        got = []
        deadline = time.monotonic() + 30
        while len(got) < count:
            assert time.monotonic() < deadline, "consumed %d of %d" % (len(got), count)
            for recs in c.poll(timeout_ms=500).values():
                got += recs
        return got
    finally:
        c.close()


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_produce_consume(broker, codec):
    from kafka import KafkaConsumer, TopicPartition as KTP
    topic = "kp-" + codec
    broker.create_topic(topic, partitions=2)
    msgs = messages(300, 2, seed=7 + len(codec))
    results = kafka_python_produce(broker, topic, msgs, codec)
    want = expected_by_partition(msgs)
    for p, ms in want.items():
        idx = [i for i, m in enumerate(msgs) if m["partition"] == p]
        assert [results[i][:2] for i in idx] == [(p, k) for k in range(len(ms))]
        assert [results[i][2] for i in idx] == [m["timestamp"] for m in ms]
    assert {c for _, _, c in batch_bases(broker, topic, 1)} == {CODEC_IDS[codec]}   # really compressed so
    for p, start in ((0, 0), (1, 0), (1, 77)):
        got = kafka_python_consume(broker, topic, p, start, len(want[p]) - start)
        assert len(got) == len(want[p]) - start
        for r, w in zip(got, want[p][start:]):
            assert (r.key, r.value, r.timestamp, r.timestamp_type) == (w["key"], w["value"], w["timestamp"], 0)
            assert r.headers == kp_headers(w["headers"])
        assert [r.offset for r in got] == list(range(start, len(want[p])))
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False, group_id=None)
    try:
        first_of_batch = batch_bases(broker, topic, 0)[-1][0]
        tp0, tp1 = KTP(topic, 0), KTP(topic, 1)
        found = c.offsets_for_times({tp0: want[0][first_of_batch]["timestamp"], tp1: BASE_TS + 10_000_000})
        assert found[tp0].offset == first_of_batch
        if codec == "none":     # compressed: see test_offsets_for_times_inside_a_batch
            assert found[tp0].timestamp == want[0][first_of_batch]["timestamp"]
        assert found[tp1] is None
        assert c.end_offsets([tp0, tp1]) == {tp0: len(want[0]), tp1: len(want[1])}
        assert c.beginning_offsets([tp0]) == {tp0: 0}
    finally:
        c.close()




@pytest.mark.parametrize("codec", CODECS)
def test_confluent_batches_use_the_codec(broker, codec):
    """What confluent-kafka writes is compressed with the codec asked for."""
    topic = "cfc-" + codec
    broker.create_topic(topic)
    confluent_produce(broker, topic, messages(200, 1, seed=4), **{"compression.type": codec})
    # librdkafka sends a batch uncompressed when compressing does not make it smaller.
    codecs = {c for _, _, c in batch_bases(broker, topic, 0)}
    assert CODEC_IDS[codec] in codecs and codecs <= {0, CODEC_IDS[codec]}, codecs




@pytest.mark.parametrize("codec", CODECS)
def test_offsets_for_times_inside_a_batch(broker, codec):
    """The first record at or after a timestamp, when that record sits in the
    middle of a batch (as Kafka's FileRecords.searchForTimestamp finds it)."""
    topic = "ts-" + codec
    broker.create_topic(topic)
    msgs = messages(50, 1, seed=3)
    kafka_python_produce(broker, topic, msgs, codec, linger_ms=200)
    batches = batch_bases(broker, topic, 0)
    assert {c for _, _, c in batches} == {CODEC_IDS[codec]}
    base, count, _ = max(batches, key=lambda x: x[1])
    assert count >= 3, batches
    target = base + count // 2           # not a batch's first record
    c = confluent_consumer(broker)
    try:
        [tp] = c.offsets_for_times([TopicPartition(topic, 0, msgs[target]["timestamp"] - 5)], timeout=10)
    finally:
        c.close()
    assert tp.offset == target
    with broker.conn() as k:
        assert k.list_offset(topic, 0, msgs[target]["timestamp"]) == (0, msgs[target]["timestamp"], target)


# ---- admin clients ----

def wait_futures(fs, timeout=30):
    out = {}
    for k, f in fs.items():
        try:
            f.result(timeout)
            out[k] = None
        except Exception as e:      # the KafkaException of that item
            out[k] = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else e
    return out


def test_confluent_admin(broker):
    a = AdminClient({"bootstrap.servers": broker.bootstrap})
    res = wait_futures(a.create_topics([
        NewTopic("adm-a", num_partitions=3, replication_factor=1,
                 config={"retention.ms": "3600000", "cleanup.policy": "delete", "max.message.bytes": "20000"}),
        NewTopic("adm-b", num_partitions=1, replication_factor=1),
    ], operation_timeout=20))
    assert res == {"adm-a": None, "adm-b": None}
    md = a.list_topics(timeout=10)
    assert {"adm-a", "adm-b"} <= set(md.topics)
    assert sorted(md.topics["adm-a"].partitions) == [0, 1, 2]
    assert all(p.leader == 1 and p.replicas == [1] and p.isrs == [1] for p in md.topics["adm-a"].partitions.values())
    assert md.cluster_id and md.controller_id == 1 and list(md.brokers) == [1]
    # describe_configs: the overrides, and the broker's values for the rest.
    [cfgs] = wait_futures_values(a.describe_configs([ConfigResource("topic", "adm-a")]))
    assert cfgs["retention.ms"].value == "3600000" and not cfgs["retention.ms"].is_default
    assert cfgs["max.message.bytes"].value == "20000"
    assert cfgs["cleanup.policy"].value == "delete"
    assert cfgs["message.timestamp.type"].value == "CreateTime"
    assert cfgs["segment.bytes"].value == "1073741824"
    # Partitions added.
    assert wait_futures(a.create_partitions([NewPartitions("adm-b", 4)], operation_timeout=20)) == {"adm-b": None}
    assert sorted(a.list_topics("adm-b", timeout=10).topics["adm-b"].partitions) == [0, 1, 2, 3]
    assert broker.wait_leaders("adm-b", 4) == 4
    # Errors, each for its own topic.
    res = wait_futures(a.create_topics([
        NewTopic("adm-a", num_partitions=1, replication_factor=1),                  # exists
        NewTopic("bad/name", num_partitions=1, replication_factor=1),               # illegal character
        NewTopic("adm-cfg", num_partitions=1, replication_factor=1, config={"retention.ms": "soon"}),
        NewTopic("adm-cfg2", num_partitions=1, replication_factor=1, config={"no.such.config": "1"}),
        NewTopic("adm-rf", num_partitions=1, replication_factor=3),                 # one broker only
        NewTopic("adm-zero", num_partitions=0, replication_factor=1),
    ], operation_timeout=20))
    codes = {k: v.code() for k, v in res.items()}
    assert codes == {"adm-a": KafkaError.TOPIC_ALREADY_EXISTS, "bad/name": KafkaError.TOPIC_EXCEPTION,
                     "adm-cfg": KafkaError.INVALID_CONFIG,
                     "adm-cfg2": KafkaError.INVALID_CONFIG, "adm-rf": KafkaError.INVALID_REPLICATION_FACTOR,
                     "adm-zero": KafkaError.INVALID_PARTITIONS}
    assert "Replication factor: 3 larger than available brokers: 1." in res["adm-rf"].str()
    assert "adm-cfg" not in a.list_topics(timeout=10).topics
    # Shrinking is refused; an unknown topic cannot grow.
    res = wait_futures(a.create_partitions([NewPartitions("adm-a", 2), NewPartitions("nosuch", 2)]))
    assert res["adm-a"].code() == KafkaError.INVALID_PARTITIONS
    assert res["nosuch"].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    # validate_only changes nothing.
    assert wait_futures(a.create_topics([NewTopic("adm-dry", 2, 1)], validate_only=True)) == {"adm-dry": None}
    assert "adm-dry" not in a.list_topics(timeout=10).topics
    # Delete.
    assert wait_futures(a.delete_topics(["adm-a", "adm-b"], operation_timeout=20)) == {"adm-a": None, "adm-b": None}
    assert not {"adm-a", "adm-b"} & set(a.list_topics(timeout=10).topics)
    res = wait_futures(a.delete_topics(["adm-a"], operation_timeout=20))
    assert res["adm-a"].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def wait_futures_values(fs, timeout=30):
    return [f.result(timeout) for f in fs.values()]


def test_kafka_python_admin(broker):
    from kafka.admin import ConfigResource as KCR, ConfigResourceType, KafkaAdminClient, NewPartitions as KNP
    from kafka.admin import NewTopic as KNT
    from kafka.errors import (InvalidConfigurationError, InvalidPartitionsError, InvalidReplicationFactorError,
                              InvalidTopicError, TopicAlreadyExistsError, UnknownTopicOrPartitionError)
    a = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=20000)
    try:
        r = a.create_topics([KNT("kpa", 2, 1, topic_configs={"retention.bytes": "1048576"}),
                             KNT("kpb", 1, 1)], timeout_ms=20000)
        assert [(t[0], t[1]) for t in r.topic_errors] == [("kpa", 0), ("kpb", 0)]
        assert {"kpa", "kpb"} <= set(a.list_topics())
        [resp] = a.describe_configs([KCR(ConfigResourceType.TOPIC, "kpa", configs={"retention.bytes": None,
                                                                                   "retention.ms": None})])
        [(error, _, rtype, name, entries)] = resp.resources
        assert (error, rtype, name) == (0, 2, "kpa")
        values = {e[0]: (e[1], e[3]) for e in entries}     # name: (value, config source)
        # retention.ms is set nowhere: Kafka's default (DEFAULT_CONFIG, as Kafka reports it).
        assert values == {"retention.bytes": ("1048576", 1), "retention.ms": ("604800000", 5)}
        desc = {t["topic"]: t for t in a.describe_topics(["kpa"])}
        assert sorted(p["partition"] for p in desc["kpa"]["partitions"]) == [0, 1]
        assert all(p["leader"] == 1 and p["replicas"] == [1] for p in desc["kpa"]["partitions"])
        cluster = a.describe_cluster()
        assert cluster["controller_id"] == 1 and [b["node_id"] for b in cluster["brokers"]] == [1]
        r = a.create_partitions({"kpb": KNP(3)}, timeout_ms=20000)
        assert [(t[0], t[1]) for t in r.topic_errors] == [("kpb", 0)]
        assert broker.wait_leaders("kpb", 3) == 3
        for topic, err in [(KNT("kpa", 1, 1), TopicAlreadyExistsError), (KNT("a b", 1, 1), InvalidTopicError),
                           (KNT("kpc", 1, 2), InvalidReplicationFactorError),
                           (KNT("kpd", 1, 1, topic_configs={"cleanup.policy": "sometimes"}),
                            InvalidConfigurationError),
                           (KNT("kpe", -5, 1), InvalidPartitionsError)]:
            with pytest.raises(err):
                a.create_topics([topic], timeout_ms=20000)
        with pytest.raises(InvalidPartitionsError):
            a.create_partitions({"kpa": KNP(1)}, timeout_ms=20000)
        r = a.delete_topics(["kpa", "kpb"], timeout_ms=20000)
        assert sorted((t[0], t[1]) for t in r.topic_error_codes) == [("kpa", 0), ("kpb", 0)]
        assert not {"kpa", "kpb"} & set(a.list_topics())
        with pytest.raises(UnknownTopicOrPartitionError):
            a.delete_topics(["kpa"], timeout_ms=20000)
    finally:
        a.close()


# ---- idempotent producer, raw ----

def records(first, n, tag=b""):
    return [Record(b"k%d" % i, tag + b"v%d" % i, [("seq", b"%d" % i)], timestamp_delta=i)
            for i in range(first, first + n)]


def test_idempotent_retry_is_written_once(broker, kafka):
    broker.create_topic("idem")
    error, pid, epoch = kafka.init_producer_id()
    assert error == 0 and pid >= 0 and epoch == 0
    error2, pid2, _ = kafka.init_producer_id()
    assert error2 == 0 and pid2 != pid                       # each producer its own id
    first = record_batch(records(0, 5), producer_id=pid, producer_epoch=epoch, base_sequence=0)
    second = record_batch(records(5, 3), producer_id=pid, producer_epoch=epoch, base_sequence=5)
    a = kafka.produce("idem", 0, first)
    assert (a.error, a.base_offset) == (0, 0)
    # The producer never saw the answer and sends the same batch again: same
    # answer, nothing appended.
    again = kafka.produce("idem", 0, first)
    assert (again.error, again.base_offset) == (0, 0)
    b = kafka.produce("idem", 0, second)
    assert (b.error, b.base_offset) == (0, 5)
    # A retry from another connection (the producer reconnected), of an older batch.
    with broker.conn() as other:
        late = other.produce("idem", 0, first)
        assert (late.error, late.base_offset) == (0, 0)
        late = other.produce("idem", 0, second)
        assert (late.error, late.base_offset) == (0, 5)
    # Sequence gaps and repeats that are not retries are refused.
    for seq in (9, 20, 6):
        bad = kafka.produce("idem", 0, record_batch(records(100, 2), producer_id=pid, producer_epoch=epoch,
                                                    base_sequence=seq))
        assert bad.error == 45, (seq, bad)                   # OUT_OF_ORDER_SEQUENCE_NUMBER
    # The log holds each record once, at the offsets answered.
    got = kafka.fetch_all("idem", 0)
    assert [(o, r.key, r.value) for o, r, _ in got] == [(i, b"k%d" % i, b"v%d" % i) for i in range(8)]
    assert {(bt.producer_id, bt.producer_epoch, bt.base_sequence) for _, _, bt in got} == {
        (pid, 0, 0), (pid, 0, 5)}
    # The next in sequence goes on at offset 8; another producer is independent.
    c = kafka.produce("idem", 0, record_batch(records(8, 1), producer_id=pid, producer_epoch=epoch, base_sequence=8))
    assert (c.error, c.base_offset) == (0, 8)
    d = kafka.produce("idem", 0, record_batch(records(0, 1, b"p2"), producer_id=pid2, producer_epoch=0,
                                              base_sequence=0))
    assert (d.error, d.base_offset) == (0, 9)


def test_idempotent_state_survives_restart(make_broker):
    """The producers' sequences are rebuilt from the log at start: a retry after
    a restart is still recognised."""
    b = make_broker()
    b.create_topic("idem")
    with b.conn() as k:
        _, pid, epoch = k.init_producer_id()
        batch = record_batch(records(0, 4), producer_id=pid, producer_epoch=epoch, base_sequence=0)
        assert k.produce("idem", 0, batch).base_offset == 0
    assert b.stop() == 0
    b.start()
    b.wait_leaders("idem", 1)
    with b.conn() as k:
        r = k.produce("idem", 0, batch)
        assert (r.error, r.base_offset) == (0, 0)
        r = k.produce("idem", 0, record_batch(records(4, 1), producer_id=pid, producer_epoch=epoch, base_sequence=7))
        assert r.error == 45
        assert len(k.fetch_all("idem", 0)) == 4


def test_transactional_id_refused(broker, kafka):
    assert kafka.init_producer_id("txn-1")[0] == 53          # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    broker.create_topic("t")
    r = kafka.produce("t", 0, record_batch(records(0, 1)), transactional_id="txn-1")
    assert r.error == 53


def test_confluent_idempotent_producer(broker):
    broker.create_topic("idem-cf", partitions=2)
    msgs = messages(500, 2, seed=11)
    results = confluent_produce(broker, "idem-cf", msgs, **{"enable.idempotence": True, "acks": "all"})
    got = confluent_consume(broker, "idem-cf", {0: 0, 1: 0})
    want = expected_by_partition(msgs)
    for p in (0, 1):
        check_consumed(got[p], want[p])
    assert len({r[:2] for r in results}) == len(msgs)


# ---- auto-creation ----

def test_auto_create_on_metadata(make_broker):
    b = make_broker(extra={"num.partitions": "3"})
    with b.conn() as k:
        md = k.metadata(["auto-md"], allow_auto_create=False)
        assert md.topics["auto-md"].error == 3                # not asked to create: unknown
        md = k.metadata(["auto-md"], allow_auto_create=True)
        assert md.topics["auto-md"].error == 5                # LEADER_NOT_AVAILABLE while it is created
    assert b.wait_leaders("auto-md") == 3                     # num.partitions
    assert "auto-creating topic auto-md" in b.log()


def test_auto_create_on_produce(broker):
    """A client producing to a topic that does not exist gets it created (its
    Metadata request asks for that) and its messages written."""
    msgs = [{"partition": 0, "key": b"k", "value": b"first", "headers": [], "timestamp": BASE_TS}]
    results = confluent_produce(broker, "auto-produce", msgs, **{"linger.ms": 0})
    assert results[0][:2] == (0, 0)
    got = confluent_consume(broker, "auto-produce", {0: 0})
    assert [m.value() for m in got[0]] == [b"first"]


def test_auto_create_disabled(make_broker):
    b = make_broker(extra={"auto.create.topics.enable": "false"})
    with b.conn() as k:
        assert k.metadata(["auto-off"], allow_auto_create=True).topics["auto-off"].error == 3
        assert k.metadata(["auto-off"], version=1).topics["auto-off"].error == 3
        r = k.produce("auto-off", 0, record_batch(records(0, 1)))
        assert r.error == 3                                   # UNKNOWN_TOPIC_OR_PARTITION
    p = confluent_producer(b, **{"topic.metadata.propagation.max.ms": 100, "message.timeout.ms": 5000})
    errors = []
    p.produce("auto-off", b"x", on_delivery=lambda err, m: errors.append(err))
    p.flush(15)
    assert len(errors) == 1 and errors[0] is not None
    assert errors[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC), errors[0]
    assert "auto-off" not in b.topics_cli("--list").stdout.split()
    assert "auto-creating" not in b.log()


# ---- LogAppendTime ----

def test_log_append_time_topic(broker):
    broker.create_topic("lat", configs={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    msgs = [{"partition": 0, "key": b"k%d" % i, "value": b"v%d" % i, "headers": [("h", b"1")],
             "timestamp": BASE_TS + i} for i in range(20)]
    results = confluent_produce(broker, "lat", msgs)
    after = int(time.time() * 1000)
    # The producer is told the broker's time ...
    for r in results:
        assert r[2][0] == TIMESTAMP_LOG_APPEND_TIME and before <= r[2][1] <= after, r
    # ... and consumers read it, with the LogAppendTime type.
    got = confluent_consume(broker, "lat", {0: 0})[0]
    assert [m.value() for m in got] == [m["value"] for m in msgs]
    for m in got:
        kind, ts = m.timestamp()
        assert kind == TIMESTAMP_LOG_APPEND_TIME and before <= ts <= after
    stamps = {m.timestamp()[1] for m in got}
    assert stamps == {r[2][1] for r in results}
    # Raw: the batch carries the attribute and the broker's clock as max timestamp.
    with broker.conn() as k:
        p = k.produce("lat", 0, record_batch(records(0, 2), base_timestamp=BASE_TS))
        assert p.error == 0 and before <= p.log_append_time and p.base_offset == 20
        last = parse_record_batches(k.fetch("lat", 0, 20).records)[-1]
        assert last.attributes & 0x08 and last.max_timestamp == p.log_append_time and last.crc_ok
        # By timestamp: the append time finds the first record of that batch.
        assert k.list_offset("lat", 0, p.log_append_time) == (0, p.log_append_time, 20)
    kp = kafka_python_consume(broker, "lat", 0, 20, 2)
    assert [(r.timestamp, r.timestamp_type) for r in kp] == [(p.log_append_time, 1)] * 2
    a = AdminClient({"bootstrap.servers": broker.bootstrap})
    [cfgs] = wait_futures_values(a.describe_configs([ConfigResource("topic", "lat")]))
    assert cfgs["message.timestamp.type"].value == "LogAppendTime"


def test_log_append_time_broker_default(make_broker):
    """log.message.timestamp.type=LogAppendTime in server.properties applies to
    topics without their own setting."""
    b = make_broker(extra={"log.message.timestamp.type": "LogAppendTime"})
    b.create_topic("lat")
    with b.conn() as k:
        before = int(time.time() * 1000)
        p = k.produce("lat", 0, record_batch(records(0, 3), base_timestamp=BASE_TS))
        assert p.error == 0 and p.log_append_time >= before
        [bt] = parse_record_batches(k.fetch("lat", 0, 0).records)
        assert bt.attributes & 0x08 and bt.max_timestamp == p.log_append_time and bt.crc_ok
        assert [r.value for r in bt.records] == [b"v0", b"v1", b"v2"]


# ---- delete and re-create ----

def test_delete_topic_removes_its_log_and_recreation_starts_at_zero(broker):
    broker.create_topic("gone", partitions=2)
    msgs = messages(40, 2, seed=5)
    confluent_produce(broker, "gone", msgs)
    folders = [os.path.join(broker.log_dir, "gone-%d" % p) for p in (0, 1)]
    assert all(os.path.isdir(f) for f in folders)
    a = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert wait_futures(a.delete_topics(["gone"], operation_timeout=20)) == {"gone": None}
    # Once DeleteTopics has answered, every path answers as Kafka's does for a
    # topic it neither hosts nor knows (what a consumer of it sees: the
    # deleted-topic entries of librdkafka's suite, tests/README.md): Metadata
    # names it with UNKNOWN_TOPIC_OR_PARTITION and no partitions, ListOffsets
    # and Fetch answer UNKNOWN_TOPIC_OR_PARTITION.
    with broker.conn() as k:
        md = k.metadata(["gone"], allow_auto_create=False).topics["gone"]
        assert (md.error, md.partitions) == (3, [])
        assert k.list_offset("gone", 0, -1)[0] == 3
        assert k.fetch("gone", 1, 0).error == 3

    def no_trace():
        names = os.listdir(broker.log_dir)
        return not [n for n in names if n.startswith("gone-")]
    wait_until(no_trace, timeout=20, what="the log folders of topic gone to be removed")
    with broker.conn() as k:
        assert k.metadata(["gone"], allow_auto_create=False).topics["gone"].error == 3
    assert "topic gone was deleted" in broker.log()
    # Same name again: a new topic, empty, from offset 0.
    assert wait_futures(a.create_topics([NewTopic("gone", 1, 1)], operation_timeout=20)) == {"gone": None}
    broker.wait_leaders("gone", 1)
    results = confluent_produce(broker, "gone", [{"partition": 0, "key": b"new", "value": b"again", "headers": [],
                                                  "timestamp": BASE_TS}])
    assert results[0][:2] == (0, 0)
    got = confluent_consume(broker, "gone", {0: 0})[0]
    assert [(m.offset(), m.key(), m.value()) for m in got] == [(0, b"new", b"again")]
    with open(os.path.join(folders[0], "partition.metadata")) as f:
        meta = f.read()
    md = a.list_topics("gone", timeout=10)
    assert meta.startswith("version: 0\ntopic_id: ") and md.topics["gone"].error is None




def test_topic_names_longer_than_249_are_refused(broker):
    from kafka.admin import KafkaAdminClient, NewTopic as KNT
    from kafka.errors import InvalidTopicError
    keep = "y" * 249                      # the longest legal name
    broker.create_topic(keep)
    a = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=20000)
    try:
        with pytest.raises(InvalidTopicError):
            a.create_topics([KNT("x" * 250, 1, 1)], timeout_ms=10000)
        assert "x" * 249 not in a.list_topics()
        from kafka.errors import UnknownTopicOrPartitionError
        with pytest.raises((InvalidTopicError, UnknownTopicOrPartitionError)):
            a.delete_topics(["y" * 250], timeout_ms=10000)
    finally:
        a.close()
    assert keep in broker.topics_cli("--list").stdout.split()




def test_delete_topic_with_the_longest_name(broker):
    name = "z" * 249
    broker.create_topic(name)
    confluent_produce(broker, name, [{"partition": 0, "key": b"k", "value": b"old", "headers": [],
                                      "timestamp": BASE_TS}])
    a = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert wait_futures(a.delete_topics([name], operation_timeout=20)) == {name: None}
    # The folder is renamed for deletion before the answer: no folder of that name.
    assert not os.path.exists(os.path.join(broker.log_dir, name + "-0"))
    res = wait_futures(a.create_topics([NewTopic(name, 1, 1)], operation_timeout=3))
    assert res == {name: None}
    results = confluent_produce(broker, name, [{"partition": 0, "key": b"k", "value": b"new", "headers": [],
                                               "timestamp": BASE_TS}])
    assert results[0][:2] == (0, 0)


# ---- Apache ZooKeeper 3.8 as the coordinator ----

def test_with_apache_zookeeper(make_broker, apache_coordinator):
    """The same produce/consume against a real Apache ZooKeeper 3.8, whose
    znodes then hold what src/broker/coord/coord_data.h says."""
    from kazoo.client import KazooClient
    b = make_broker(coordinator=apache_coordinator)
    a = AdminClient({"bootstrap.servers": b.bootstrap})
    assert wait_futures(a.create_topics([NewTopic("zk", 2, 1, config={"retention.ms": "86400000"})],
                                        operation_timeout=20)) == {"zk": None}
    b.wait_leaders("zk", 2)
    msgs = messages(300, 2, seed=9)
    confluent_produce(b, "zk", msgs, **{"compression.type": "lz4"})
    got = confluent_consume(b, "zk", {0: 0, 1: 0})
    want = expected_by_partition(msgs)
    for p in (0, 1):
        check_consumed(got[p], want[p])
    zk = KazooClient(hosts=apache_coordinator.hosts + b.chroot, timeout=10)
    zk.start(timeout=15)
    try:
        reg = json.loads(zk.get("/brokers/ids/1")[0])
        assert reg["port"] == b.port and zk.get("/brokers/ids/1")[1].ephemeralOwner != 0
        assert json.loads(zk.get("/config/topics/zk")[0])["config"] == {"retention.ms": "86400000"}
        for p in (0, 1):
            assert json.loads(zk.get("/brokers/topics/zk/%d/replicas" % p)[0]) == {"replicas": [1]}
            assert json.loads(zk.get("/brokers/topics/zk/%d/leader" % p)[0]) == {"leader": 1, "leader_epoch": 0}
            assert json.loads(zk.get("/brokers/topics/zk/%d/ISR" % p)[0]) == {"isr": [1], "leader_epoch": 0}
        assert zk.exists("/cluster/id")
    finally:
        zk.stop()
        zk.close()
    # A clean restart: the session's nodes go and come back; the data stays.
    assert b.stop() == 0
    b.start()
    b.wait_leaders("zk", 2)
    got = confluent_consume(b, "zk", {0: 100})
    check_consumed(got[0], want[0][100:], partition_start=100)
