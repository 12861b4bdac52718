"""Hostile record batches (issue 11, items 3 and 4): batches whose records do
not match their header, garbage declared as records, and compression bombs in
every codec Kafka clients use.

What a user relies on: such a Produce is refused with Kafka's error and a
message naming the reason, nothing of it reaches the log (the partition's
next offset does not move), and every other client of the broker is served
while it is being checked."""
import gzip
import random
import struct
import threading

import lz4.frame
import snappy
import zstandard

from broker_harness import broker, coordinator, make_broker  # noqa: F401
from harness import wait_until
from kafka_wire import (API_PRODUCE, BATCH_HEADER, KafkaConn, Reader, Record, crc32c, encode_record, karray, kbytes,
                        kstring, parse_records, record_batch, recv_frame, request_frame)
from test_broker_legacy import gzip_wrapper, legacy

T0 = 1700000000000
CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, INVALID_RECORD = 2, 10, 87
CODECS = {"gzip": 1, "snappy": 2, "snappy-xerial": 2, "lz4": 3, "zstd": 4}


def compress(name, data):
    if name == "gzip":
        return gzip.compress(data, 9)
    if name == "snappy":
        return snappy.compress(data)               # raw, as librdkafka sends it
    if name == "snappy-xerial":                    # framed, as the Java client sends it
        out = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
        for at in range(0, len(data), 32768):
            block = snappy.compress(data[at:at + 32768])
            out += struct.pack(">i", len(block)) + block
        return out
    if name == "lz4":
        return lz4.frame.compress(data)
    return zstandard.ZstdCompressor(level=3).compress(data)


def batch(payload, count, codec=0, last_delta=None):
    """A producer's v2 batch around payload (records, compressed or not)."""
    last_delta = count - 1 if last_delta is None else last_delta
    after_crc = struct.pack(">hiqqqhii", codec, last_delta, T0, T0, -1, -1, -1, count) + payload
    return (struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2) + struct.pack(">I", crc32c(after_crc)) +
            after_crc)


def records(values):
    return b"".join(encode_record(Record(None, v), i) for i, v in enumerate(values))


def compressed_batch(name, values):
    return batch(compress(name, records(values)), len(values), CODECS[name])


def one_record_bomb(name):
    """One record of 8 MiB of zeros: past max.message.bytes as a record."""
    return compressed_batch(name, [bytes(8 << 20)])


def many_records_bomb(name):
    """20 records of 1 000 000 zeros each, every one within max.message.bytes,
    20 MB in all: past the 16 x max.message.bytes a batch may decompress to."""
    return compressed_batch(name, [bytes(1000000)] * 20)


def garbage_records(name=None, seed=1):
    junk = random.Random(seed).randbytes(200)
    return batch(junk, 3) if name is None else batch(compress(name, junk), 3, CODECS[name])


def produce_frame(topic, partition, records_bytes, corr):
    body = (kstring(None) + struct.pack(">hi", -1, 30000) +
            karray([kstring(topic) + karray([struct.pack(">i", partition) + kbytes(records_bytes)])]))
    return request_frame(API_PRODUCE, 8, corr, body)


def produce_answer(frame):
    """(correlation id, error, base offset, error message) of a one-partition Produce v8 answer."""
    r = Reader(frame)
    corr = r.take(">i")
    topics = r.array(lambda r: (r.string(), r.array(lambda r: (
        r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q"), r.take(">q"),
        r.array(lambda r: (r.take(">i"), r.string())), r.string()))))
    _, error, base, _, _, _, message = topics[0][1][0]
    return corr, error, base, message


def log_end(k, topic):
    error, _, offset = k.list_offset(topic, 0, -1)
    assert error == 0
    return offset


def roundtrip(k, topic, tag):
    """Another client's produce and fetch: the record comes back at the offset it was given."""
    r = k.produce(topic, 0, record_batch([Record(b"k", tag)]))
    assert r.error == 0, r
    got = k.fetch_all(topic, 0, r.base_offset, r.base_offset + 1)
    assert [rec.value for _, rec, _ in got] == [tag]
    return r.base_offset


def test_batches_are_checked_record_by_record(broker):
    """Uncompressed batches are walked record by record as compressed ones
    are: a count the records do not fill, garbage declared as records and
    offset deltas out of order are INVALID_RECORD; the partition's next
    offset does not move."""
    broker.create_topic("checked")
    liar = bytearray(batch(records([b"only one"]), 0x7FFFFFFF))
    with broker.conn() as k:
        r = k.produce("checked", 0, bytes(liar))
        assert (r.error, r.base_offset) == (INVALID_RECORD, -1), r
        assert "declares 2147483647 records, the data holds 1" in r.error_message, r
        r = k.produce("checked", 0, garbage_records())
        assert (r.error, r.base_offset) == (INVALID_RECORD, -1), r
        assert r.error_message.startswith("record batch 0: "), r
        skipping = b"".join(encode_record(Record(None, b"v"), d) for d in (0, 2))
        r = k.produce("checked", 0, batch(skipping, 2))
        assert r.error == INVALID_RECORD and "record 1: offset delta 2, expected 1" in r.error_message, r
        for name in CODECS:
            r = k.produce("checked", 0, garbage_records(name))
            assert r.error == INVALID_RECORD, (name, r)
        cut = compress("gzip", records([b"a" * 100] * 3))[:-6]   # the stream ends early
        r = k.produce("checked", 0, batch(cut, 3, 1))
        assert r.error == CORRUPT_MESSAGE and r.error_message.startswith("record batch 0: gzip: "), r
        assert log_end(k, "checked") == 0
        assert roundtrip(k, "checked", b"after") == 0
        assert [rec.value for _, rec, _ in k.fetch_all("checked", 0)] == [b"after"]
    log = broker.log()
    assert "produce to checked-0 refused: error 87: record batch 0: batch declares 2147483647 records" in log


def test_bombs_are_refused_in_every_codec(broker):
    """A record decompressing past max.message.bytes, or a batch past 16 x
    max.message.bytes (the issue's 60 MiB zstd bomb in 2 KB among them):
    MESSAGE_TOO_LARGE, nothing stored."""
    broker.create_topic("bombs")
    with broker.conn() as k:
        sixty = compressed_batch("zstd", [bytes(60 << 20)])
        assert len(sixty) < 4096
        r = k.produce("bombs", 0, sixty)
        assert r.error == MESSAGE_TOO_LARGE and "record 0 is " in r.error_message, r
        for name in CODECS:
            r = k.produce("bombs", 0, one_record_bomb(name))
            # Raw snappy's one block names its size first: more than one
            # record (and its length) can hold, so it is not even decoded.
            limit = "decompress to more than 1048593" if name == "snappy" else "more than 1048588"
            assert r.error == MESSAGE_TOO_LARGE and limit in r.error_message, (name, r)
            r = k.produce("bombs", 0, many_records_bomb(name))
            assert r.error == MESSAGE_TOO_LARGE, (name, r)
            assert "records decompress to more than 16777408 bytes" in r.error_message, (name, r)
        # Within the bounds the same records are taken.
        r = k.produce("bombs", 0, compressed_batch("zstd", [bytes(1000000)] * 3))
        assert (r.error, r.base_offset) == (0, 0), r
        assert log_end(k, "bombs") == 3


def test_crc_is_checked_before_anything_is_decompressed(broker):
    """Produce v2 may carry many batches for a partition: bombs followed by a
    batch whose CRC is wrong are refused for the CRC, and nothing is stored."""
    broker.create_topic("crc")
    bad = bytearray(record_batch([Record(None, b"x")]))
    bad[-1] ^= 1
    bombs = b"".join(many_records_bomb("gzip") for _ in range(5)) + bytes(bad)
    body = struct.pack(">hi", -1, 30000) + karray([kstring("crc") + karray([struct.pack(">i", 0) + kbytes(bombs)])])
    with broker.conn() as k:
        r = k.call(API_PRODUCE, 2, body)
        partitions = r.array(lambda r: (r.string(), r.array(lambda r: (r.take(">i"), r.take(">h"), r.take(">q"),
                                                                       r.take(">q")))))
        assert partitions[0][1][0][1] == CORRUPT_MESSAGE
        assert log_end(k, "crc") == 0
    assert "produce to crc-0 refused: error 2: record batch failed its CRC-32C check" in broker.log()


def test_other_clients_are_served_while_bombs_are_checked(broker):
    """One connection sends bombs of every codec and garbage, pipelined,
    without reading; another client's produce and fetch on its own
    connection complete meanwhile, and the bombs are all refused."""
    broker.create_topic("flood")
    broker.create_topic("quiet")
    flood = []
    for name in CODECS:
        flood += [(one_record_bomb(name), MESSAGE_TOO_LARGE), (many_records_bomb(name), MESSAGE_TOO_LARGE),
                  (garbage_records(name), INVALID_RECORD)]
    flood += [(garbage_records(seed=s), INVALID_RECORD) for s in range(5)]
    answers = {}

    def bomber():
        with KafkaConn(broker.port, timeout=120) as k:
            frames = b"".join(produce_frame("flood", 0, rec, i + 1) for i, (rec, _) in enumerate(flood))
            sender = threading.Thread(target=k.sock.sendall, args=(frames,), daemon=True)
            sender.start()
            for _ in flood:
                corr, error, base, message = produce_answer(recv_frame(k.sock))
                answers[corr] = (error, base, message)
            sender.join()

    t = threading.Thread(target=bomber, daemon=True)
    t.start()
    served = 0
    with broker.conn() as k:
        while t.is_alive() or served < 3:
            assert roundtrip(k, "quiet", b"q%d" % served) == served
            served += 1
    t.join(120)
    assert not t.is_alive()
    assert sorted(answers) == list(range(1, len(flood) + 1))
    for i, (_, want) in enumerate(flood):
        error, base, message = answers[i + 1]
        assert (error, base) == (want, -1), (i, error, message)
    with broker.conn() as k:
        assert log_end(k, "flood") == 0
        assert [rec.value for _, rec, _ in k.fetch_all("quiet", 0)] == [b"q%d" % i for i in range(served)]


def test_small_compressed_produce_does_not_wait_behind_bombs(broker):
    """A producer's small compressed batch is checked at once, not queued
    behind the bombs other connections keep the checking thread busy with
    (there it waited for every one of them, about 100 ms for each of its
    produces): while four connections send 24 bombs that each decompress to
    16 x max.message.bytes, another client completes many compressed
    produces, every one at its offset."""
    broker.create_topic("flood")
    broker.create_topic("quiet")
    bombs = [many_records_bomb("gzip")] * 6
    done = []

    def bomber():
        with KafkaConn(broker.port, timeout=300) as k:
            k.sock.sendall(b"".join(produce_frame("flood", 0, rec, i + 1) for i, rec in enumerate(bombs)))
            done.append([produce_answer(recv_frame(k.sock))[1] for _ in bombs])

    bombers = [threading.Thread(target=bomber, daemon=True) for _ in range(4)]
    for t in bombers:
        t.start()
    served = 0
    with broker.conn() as k:
        while served < 200 and any(t.is_alive() for t in bombers):
            r = k.produce("quiet", 0, compressed_batch("lz4", [b"c%d" % served]), acks=1)
            assert (r.error, r.base_offset) == (0, served), r
            served += 1
        for t in bombers:
            t.join(300)
        assert done == [[MESSAGE_TOO_LARGE] * len(bombs)] * 4
        assert log_end(k, "flood") == 0
        assert log_end(k, "quiet") == served
    assert served == 200, "only %d compressed produces were answered while the bombs were checked" % served
    # A connection whose records needed the thread has its next ones checked
    # there for a while (no more tries on the loop): still answered, in order.
    with broker.conn() as k:
        k.sock.sendall(produce_frame("flood", 0, many_records_bomb("lz4"), 1))
        assert produce_answer(recv_frame(k.sock))[1:3] == (MESSAGE_TOO_LARGE, -1)
        for i in range(3):
            r = k.produce("quiet", 0, compressed_batch("lz4", [b"after %d" % i]), acks=1)
            assert (r.error, r.base_offset) == (0, served + i), r


def pipelined(conn, topic, acks, batches):
    """Send every Produce before reading any answer: [(error, base offset)] in answer order."""
    conn.sock.sendall(b"".join(request_frame(API_PRODUCE, 8, i + 1, kstring(None) + struct.pack(">hi", acks, 30000) +
                                             karray([kstring(topic) + karray([struct.pack(">i", 0) + kbytes(b)])]))
                               for i, b in enumerate(batches)))
    out = []
    for i in range(len(batches)):
        corr, error, base, _ = produce_answer(recv_frame(conn.sock))
        assert corr == i + 1
        out.append((error, base))
    return out


def stored_values(k, topic):
    """Every record value in the partition, lz4 batches decompressed."""
    p = k.fetch(topic, 0, 0)
    assert p.error == 0
    data, pos, out = p.records, 0, []
    while pos < len(data):
        header = BATCH_HEADER.unpack_from(data, pos)
        end = pos + 12 + header[1]
        payload = data[pos + 61:end]
        if header[5] & 7 == 3:
            payload = lz4.frame.decompress(payload)
        out += [rec.value for rec in parse_records(payload, header[12])]
        pos = end
    return out


def mixed_batches(n):
    """Compressed batches (checked on the helper thread) between uncompressed
    ones (checked on the loop at once), 5 records each."""
    out = []
    for i in range(n):
        values = [b"v%d-%d" % (i, j) for j in range(5)]
        out.append(compressed_batch("lz4", values) if i % 2 == 0 else batch(records(values), 5))
    return out


def test_checked_produces_keep_their_order(broker):
    """A Produce whose records wait for the helper thread holds its
    connection's later Produces back: appends run in the order sent."""
    broker.create_topic("order")
    with broker.conn() as k:
        assert pipelined(k, "order", 1, mixed_batches(8)) == [(0, 5 * i) for i in range(8)]
        got = stored_values(k, "order")
    assert got == [b"v%d-%d" % (i, j) for i in range(8) for j in range(5)]


def test_checked_produces_pipeline_behind_replication(make_broker, request):
    """acks=all on a replicated partition: a checked Produce appends, then
    waits for its commitQ while the connection's next Produces go on; all
    are answered in order and nothing is lost or reordered."""
    chroot = "/kt/hostile-" + request.node.name[:50]
    brokers = [make_broker(broker_id=i, chroot=chroot, start=False) for i in (1, 2, 3)]
    for b in brokers:
        b.start(wait=False)
    for b in brokers:
        b.wait_registered()
    out = brokers[0].topics_cli("--create", "--topic", "repl", "--replica-assignment", "1:2:3")
    assert out.returncode == 0, out.stderr

    def full_isr():
        with brokers[0].conn() as c:
            t = c.metadata(["repl"], allow_auto_create=False).topics.get("repl")
        return t and not t.error and t.partitions[0].leader == 1 and sorted(t.partitions[0].isr) == [1, 2, 3]
    wait_until(full_isr, timeout=30, what="partition 0 led by broker 1 with all three in sync")
    with brokers[0].conn() as k:
        assert pipelined(k, "repl", -1, mixed_batches(6)) == [(0, 5 * i) for i in range(6)]
        got = stored_values(k, "repl")
    assert got == [b"v%d-%d" % (i, j) for i in range(6) for j in range(5)]


def produce_shapes(rng):
    """Records a Produce of any version may carry, well-formed or not."""
    good = record_batch([Record(b"k", b"v")])
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 1
    codec = rng.choice(sorted(CODECS))
    return [None, b"", good, good + good, bytes(bad_crc), good[:rng.randint(0, len(good))],
            compressed_batch(codec, [b"x" * rng.randint(0, 300)] * rng.randint(1, 5)),
            compressed_batch("gzip", [b"y" * 10] * 3)[:-4], batch(records([b"a", b"b"]), 2, CODECS["gzip"]),
            garbage_records(), garbage_records(codec, rng.randint(0, 99)), rng.randbytes(rng.randint(0, 80)),
            legacy(1, b"k", b"v", T0), legacy(0, b"k", b"v"), gzip_wrapper(1, legacy(1, b"k", b"v", T0))]


def test_random_produce_shapes_never_stop_the_broker(broker):
    """Produce requests of every version up to 8, a seeded random mix of
    what a request may hold: no topic, several, unknown ones, a topic twice,
    partitions that do not exist, null and empty records beside compressed,
    legacy, truncated, garbage and well-formed ones, every acks value and a
    transactional id. Each is answered, or its connection closed (acks=0
    failures, as Kafka), and the broker never stops; afterwards it serves a
    well-behaved client. (An empty message set beside a refused compressed
    partition once killed it.)"""
    broker.create_topic("shapes", partitions=3)
    rng = random.Random(11)
    kinds = [produce_shapes(rng) for _ in range(8)]
    conns = [KafkaConn(broker.port, timeout=30) for _ in range(3)]
    answered = closed = 0
    for corr in range(1, 2501):
        version = rng.randint(0, 8)
        topics = []
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            parts = [struct.pack(">i", rng.choice([0, 1, 2, 0, 99, -1])) +
                     (struct.pack(">i", -1) if rec is None else kbytes(rec))
                     for rec in (rng.choice(rng.choice(kinds)) for _ in range(rng.choice([0, 1, 1, 2, 3])))]
            topics.append(kstring(rng.choice(["shapes", "shapes", "nosuch", ""])) + karray(parts))
        acks = rng.choice([1, -1, 0, 2])
        body = kstring(rng.choice([None, None, "tx"])) if version >= 3 else b""
        body += struct.pack(">hi", acks, rng.choice([0, 100, 3000])) + karray(topics)
        i = rng.randrange(len(conns))
        try:
            conns[i].sock.sendall(request_frame(API_PRODUCE, version, corr, body))
            if acks != 0:
                recv_frame(conns[i].sock)
            answered += acks != 0
        except (EOFError, OSError):
            closed += 1
            conns[i].close()
            try:
                conns[i] = KafkaConn(broker.port, timeout=30)
            except OSError:
                pass   # refused: the broker is gone, which the next line says
            assert broker.alive(), "the broker stopped after request %d (Produce v%d)" % (corr, version)
    for k in conns:
        k.close()
    assert broker.alive()
    assert answered > 1000 and closed > 0, (answered, closed)
    with broker.conn() as k:
        end = log_end(k, "shapes")
        assert roundtrip(k, "shapes", b"after the shapes") == end
