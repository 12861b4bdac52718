"""Message sets of magic 0 and 1 (Kafka 0.8-0.10 clients, Produce v0-v2) are
up-converted by the broker to one record batch v2, as Kafka's LogValidator
does: raw Produce v2 requests carrying LegacyRecord entries (plain and inside
a gzip wrapper), kafka-python speaking as a 0.9 / 0.10 client (magic 0 / 1)
through every codec, and the refusals (Produce v3+, a bad CRC, nested
compression). Consumers see ordinary v2 batches: offsets assigned by the log,
keys, values and, under magic 1, the producers' timestamps."""
import gzip
import struct
import time
import zlib

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer, TopicPartition

from broker_harness import broker, coordinator, make_broker  # noqa: F401
from kafka_wire import API_PRODUCE, karray, kbytes, kstring, record_batch, Record

T0 = 1700000000000


def legacy(magic, key, value, ts=-1, attrs=0, offset=0):
    """One LegacyRecord entry: offset, size, CRC-32 (magic..end), body."""
    def opt(b):
        return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b
    body = struct.pack(">bb", magic, attrs) + (struct.pack(">q", ts) if magic == 1 else b"") + opt(key) + opt(value)
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def gzip_wrapper(magic, inner, ts=-1):
    return legacy(magic, None, gzip.compress(inner), ts=ts, attrs=1)


def produce_v(k, version, topic, partition, records, acks=-1):
    """Produce v0-v2 (or v3 with a null transactional id): (error, base offset)."""
    body = b""
    if version >= 3:
        body += kstring(None)
    body += struct.pack(">hi", acks, 10000) + karray([kstring(topic) + karray([struct.pack(">i", partition) +
                                                                               kbytes(records)])])
    r = k.call(API_PRODUCE, version, body)
    topics = r.array(lambda r: (r.string(), r.array(lambda r: (
        r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q") if version >= 2 else None,
        r.take(">q") if version >= 5 else None))))
    if version >= 1:
        r.take(">i")   # throttle
    assert r.done()
    _, error, base, _, _ = topics[0][1][0]
    return error, base


MSGS = [(b"k0", b"v0", T0 + 5), (None, b"no key", T0 + 20), (b"no value", None, T0 + 10)]


def test_raw_produce_v2_magic_1_and_magic_0(broker):
    broker.create_topic("legacy")
    with broker.conn() as k:
        plain = b"".join(legacy(1, key, value, ts, offset=i) for i, (key, value, ts) in enumerate(MSGS))
        assert produce_v(k, 2, "legacy", 0, plain) == (0, 0)
        inner = b"".join(legacy(1, key, value, ts, offset=i) for i, (key, value, ts) in enumerate(MSGS))
        assert produce_v(k, 2, "legacy", 0, gzip_wrapper(1, inner, T0 + 99)) == (0, 3)
        # A plain message, a gzip wrapper and another plain one in one set.
        mixed = legacy(1, b"a", b"A", T0 + 1) + gzip_wrapper(1, legacy(1, b"b", b"B", T0 + 2)) + \
            legacy(1, b"c", b"C", T0 + 3)
        assert produce_v(k, 1, "legacy", 0, mixed) == (0, 6)
        m0 = legacy(0, b"z0", b"Z0") + gzip_wrapper(0, legacy(0, b"z1", b"Z1") + legacy(0, None, b"Z2"))
        assert produce_v(k, 0, "legacy", 0, m0) == (0, 9)
        got = k.fetch_all("legacy", 0)
    want = [(key, value, ts) for key, value, ts in MSGS] * 2 + \
        [(b"a", b"A", T0 + 1), (b"b", b"B", T0 + 2), (b"c", b"C", T0 + 3),
         (b"z0", b"Z0", -1), (b"z1", b"Z1", -1), (None, b"Z2", -1)]
    assert [o for o, _, _ in got] == list(range(len(want)))
    assert [(rec.key, rec.value, b.base_timestamp + rec.timestamp_delta) for _, rec, b in got] == want
    # One batch per produce request, uncompressed, no producer id, CRC-32C right.
    batches = {b.base_offset: b for _, _, b in got}
    assert sorted(batches) == [0, 3, 6, 9]
    for b in batches.values():
        assert b.magic == 2 and b.attributes == 0 and b.producer_id == -1 and b.crc_ok
    assert (batches[0].base_timestamp, batches[0].max_timestamp) == (T0 + 5, T0 + 20)
    assert (batches[9].base_timestamp, batches[9].max_timestamp) == (-1, -1)

    # A librdkafka consumer reads them with their timestamps.
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "legacy", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition("legacy", 0, 0)])
        out = []
        deadline = time.monotonic() + 30
        while len(out) < 6 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                out.append(m)
        assert [(m.key(), m.value(), m.timestamp()) for m in out[:6]] == \
            [(key, value, (TIMESTAMP_CREATE_TIME, ts)) for key, value, ts in want[:6]]
    finally:
        c.close()


def test_legacy_refusals(broker):
    broker.create_topic("refused")
    with broker.conn() as k:
        good = legacy(1, b"k", b"v", T0)
        # Produce v3 and later must carry record batches v2.
        assert produce_v(k, 3, "refused", 0, good) == (87, -1)
        assert k.produce("refused", 0, good).error == 87
        # A wrong CRC-32: CORRUPT_MESSAGE.
        bad = bytearray(good)
        bad[-1] ^= 1
        assert produce_v(k, 2, "refused", 0, bytes(bad)) == (2, -1)
        # Nested compression and a wrapper whose inner magic differs: INVALID_RECORD.
        nested = gzip_wrapper(1, gzip_wrapper(1, good, T0), T0)
        assert produce_v(k, 2, "refused", 0, nested) == (87, -1)
        assert produce_v(k, 2, "refused", 0, gzip_wrapper(1, legacy(0, b"k", b"v"), T0)) == (87, -1)
        # A truncated set, and a v2 batch after a legacy message.
        assert produce_v(k, 2, "refused", 0, good[:-3])[0] == 2
        assert produce_v(k, 2, "refused", 0, good + record_batch([Record(b"k", b"v")])) == (87, -1)
        # v2 batches in Produce v2 still work, and nothing refused reached the log.
        assert produce_v(k, 2, "refused", 0, record_batch([Record(b"k", b"v2")])) == (0, 0)
        assert produce_v(k, 2, "refused", 0, good) == (0, 1)
        assert [(rec.key, rec.value) for _, rec, _ in k.fetch_all("refused", 0)] == [(b"k", b"v2"), (b"k", b"v")]


def test_refused_compressed_partition_beside_an_empty_one(broker):
    """A Produce v0-v2 may carry an empty message set. Beside a partition
    whose compressed records are refused before they are checked (here one
    the topic does not have), the empty one is answered too, and the broker
    lives on (it crashed here: the empty partition looked for a check that
    was never made)."""
    broker.create_topic("emptyset")
    wrapped = gzip_wrapper(1, legacy(1, b"k", b"v", T0), T0)
    with broker.conn() as k:
        for acks in (1, -1):
            body = struct.pack(">hi", acks, 10000) + karray([kstring("emptyset") + karray([
                struct.pack(">i", 99) + kbytes(wrapped), struct.pack(">i", 0) + kbytes(b"")])])
            r = k.call(API_PRODUCE, 2, body)
            topics = r.array(lambda r: (r.string(), r.array(lambda r: (
                r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q")))))
            r.take(">i")
            assert r.done()
            assert [(p, err) for p, err, _, _ in topics[0][1]] == [(99, 3), (0, 0)], acks
        assert broker.alive()
        assert produce_v(k, 2, "emptyset", 0, wrapped) == (0, 0)
        assert [(rec.key, rec.value) for _, rec, _ in k.fetch_all("emptyset", 0)] == [(b"k", b"v")]


def xxh32(data, seed=0):
    """XXH32, for the LZ4 frame header checksum (its second byte)."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    m = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m

    def rnd(acc, v):
        return (rotl((acc + v * p2) & m, 13) * p1) & m
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed, (seed - p1) & m]
        while n - i >= 16:
            v = [rnd(v[j], struct.unpack_from("<I", data, i + 4 * j)[0]) for j in range(4)]
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while n - i >= 4:
        h = (rotl((h + struct.unpack_from("<I", data, i)[0] * p3) & m, 17) * p4) & m
        i += 4
    while i < n:
        h = (rotl((h + data[i] * p5) & m, 11) * p1) & m
        i += 1
    h ^= h >> 15
    h = (h * p2) & m
    h ^= h >> 13
    h = (h * p3) & m
    return h ^ (h >> 16)


def kafka08_lz4(data):
    """An LZ4 frame as Kafka 0.8 (KafkaLZ4BlockOutputStream before KAFKA-3160)
    wrote it: the header checksum hashed the magic number too."""
    import lz4.frame
    frame = bytearray(lz4.frame.compress(data, block_linked=False, content_checksum=False,
                                         store_size=False))
    assert frame[4] & 0x08 == 0
    assert frame[6] == (xxh32(bytes(frame[4:6])) >> 8) & 0xFF       # liblz4's own, right checksum
    frame[6] = (xxh32(bytes(frame[0:6])) >> 8) & 0xFF
    return bytes(frame)


def test_raw_lz4_magic_0_wrong_header_checksum(broker):
    broker.create_topic("lz4-0")
    inner0 = legacy(0, b"a", b"A" * 100) + legacy(0, None, b"B" * 50)
    inner1 = legacy(1, b"a", b"A" * 100, T0) + legacy(1, None, b"B" * 50, T0 + 1)
    with broker.conn() as k:
        # Magic 0: Kafka's broken checksum is accepted, as KafkaLZ4BlockInputStream does.
        assert produce_v(k, 0, "lz4-0", 0, legacy(0, None, kafka08_lz4(inner0), attrs=3)) == (0, 0)
        # Magic 1 needs the right one.
        assert produce_v(k, 2, "lz4-0", 0, legacy(1, None, kafka08_lz4(inner1), ts=T0, attrs=3)) == (2, -1)
        import lz4.frame
        right = lz4.frame.compress(inner1, block_linked=False, content_checksum=False, store_size=False)
        assert produce_v(k, 2, "lz4-0", 0, legacy(1, None, right, ts=T0, attrs=3)) == (0, 2)
        got = k.fetch_all("lz4-0", 0)
    assert [(o, rec.key, rec.value, b.base_timestamp + rec.timestamp_delta) for o, rec, b in got] == [
        (0, b"a", b"A" * 100, -1), (1, None, b"B" * 50, -1), (2, b"a", b"A" * 100, T0), (3, None, b"B" * 50, T0 + 1)]


CODECS = ["none", "gzip", "snappy", "lz4"]


@pytest.mark.parametrize("api_version", [(0, 9), (0, 10)], ids=["magic0", "magic1"])
@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_as_an_old_client(broker, api_version, codec):
    """kafka-python told it speaks to a 0.9 / 0.10 broker produces magic 0 / 1
    message sets with Produce v1 / v2 (lz4 under magic 0 with Kafka 0.8's
    wrong frame header checksum)."""
    from kafka import KafkaProducer
    if codec == "lz4" and api_version == (0, 9):
        pytest.importorskip("xxhash", reason="kafka-python needs xxhash for magic-0 lz4 "
                                             "(test_raw_lz4_magic_0_wrong_header_checksum covers it)")
    topic = "kp-%s-%d" % (codec, api_version[1])
    broker.create_topic(topic)
    p = KafkaProducer(bootstrap_servers=broker.bootstrap, api_version=api_version, acks=1, linger_ms=50,
                      compression_type=None if codec == "none" else codec)
    try:
        futures = [p.send(topic, key=b"key-%d" % i if i % 3 else None, value=b"value-%d " % i * 20,
                          partition=0, timestamp_ms=T0 + 1000 * i) for i in range(20)]
        p.flush(30)
        offsets = [f.get(10).offset for f in futures]
    finally:
        p.close(10)
    assert offsets == list(range(20))
    with broker.conn() as k:
        got = k.fetch_all(topic, 0)
    assert [o for o, _, _ in got] == list(range(20))
    for i, (_, rec, b) in enumerate(got):
        assert rec.key == (b"key-%d" % i if i % 3 else None)
        assert rec.value == b"value-%d " % i * 20
        assert b.base_timestamp + rec.timestamp_delta == (T0 + 1000 * i if api_version >= (0, 10) else -1)
        assert b.magic == 2 and b.attributes & 7 == 0 and b.crc_ok
