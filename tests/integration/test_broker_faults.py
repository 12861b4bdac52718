"""The broker under faults: kill -9 mid-produce, clean stop and restart, a torn
log tail, garbage on the Kafka port, and its coordinator session expiring.

What is checked is what a user relies on: every acknowledged message is still
there at the offset it was acknowledged with; a bad client is cut off (or told
CORRUPT_MESSAGE) while every other client goes on; the broker says in its log
what it recovered."""
import os
import random
import re
import socket
import struct
import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from broker_harness import broker, coordinator, make_broker  # noqa: F401
from harness import wait_until
from kafka_wire import (API_PRODUCE, KafkaConn, Record, crc32c, is_closed, karray, kbytes, kstring, record_batch,
                        request_frame)


def records(first, n, tag=b"v"):
    return [Record(b"k%d" % i, tag + b"%d" % i, [("n", b"%d" % i)], timestamp_delta=i) for i in range(first, first + n)]


def produce_batches(b, topic, partition, nbatches, per_batch, start=0):
    """Raw produce of nbatches batches; returns the base offsets answered."""
    bases = []
    with b.conn() as k:
        for i in range(nbatches):
            r = k.produce(topic, partition, record_batch(records(start + i * per_batch, per_batch)))
            assert r.error == 0, r
            bases.append(r.base_offset)
    return bases


def log_values(b, topic, partition, start=0):
    with b.conn() as k:
        return [(o, r.value) for o, r, _ in k.fetch_all(topic, partition, start)]


# ---- kill -9 mid-produce ----

def new_consumer(b):
    return Consumer({"bootstrap.servers": b.bootstrap, "group.id": "faults", "enable.auto.commit": False,
                     "enable.partition.eof": True, "auto.offset.reset": "error", "fetch.wait.max.ms": 20,
                     "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 300})


def poll_to_end(c, timeout=30, until=None):
    """(offset, value) until the partition's end (and, with until, until that offset is reached)."""
    out = []
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "consumed %d" % len(out)
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
            if until is None or m.offset() >= until:
                return out
            continue
        out.append((m.offset(), m.value()))


def consume_range(b, topic, partition, start, timeout=30):
    """(offset, value) from start to the partition's end, with confluent-kafka
    assigned at start (a position the test remembers; no group coordination)."""
    c = new_consumer(b)
    try:
        c.assign([TopicPartition(topic, partition, start)])
        return poll_to_end(c, timeout)
    finally:
        c.close()


class Coordinator:
    """A kazoo client on a broker's chroot."""

    def __init__(self, server, chroot):
        from kazoo.client import KazooClient
        self.zk = KazooClient(hosts=server.hosts + chroot, timeout=10)
        self.zk.start(timeout=15)

    def close(self):
        self.zk.stop()
        self.zk.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def exists(self, path):
        return self.zk.exists(path) is not None

    def wait_gone(self, *paths, timeout=30):
        wait_until(lambda: not any(self.exists(p) for p in paths), timeout=timeout,
                   what="%s to be removed by the coordinator" % (paths,))


def test_kill9_mid_produce_keeps_every_acknowledged_message(make_broker, coordinator):
    """acks=1, a partitioned topic created up front, SIGKILL while the
    producer streams; the broker comes back once the coordinator has expired
    its old session (see test_restart_before_the_old_session_expired for a
    quicker return)."""
    b = make_broker()
    b.create_topic("crash", partitions=2)
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": 1, "linger.ms": 2, "enable.idempotence": False,
                  "message.timeout.ms": 60000, "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 300,
                  "retry.backoff.ms": 50})
    acked, failed = [], []
    lock = threading.Lock()

    def report(err, m):
        with lock:
            (failed if err else acked).append(err or (m.partition(), m.offset(), m.value()))

    total, kill_at = 20000, 6000
    consumed_before = None
    killed = False
    live = new_consumer(b)          # a consumer of partition 1 that lives through the crash
    live.assign([TopicPartition("crash", 1, 0)])
    for i in range(total):
        while True:
            try:
                p.produce("crash", value=b"msg-%06d" % i, key=b"%d" % i, partition=i % 2, on_delivery=report)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
        if not killed and i >= kill_at:
            # Mid-stream: at least kill_at acknowledged, total - i not even produced yet.
            deadline = time.monotonic() + 30
            while len(acked) < kill_at:
                assert time.monotonic() < deadline, "only %d acknowledged" % len(acked)
                p.poll(0.05)
            # A consumer read partition 0 this far and remembers where it stopped.
            consumed_before = consume_range(b, "crash", 0, 0)
            live_before = poll_to_end(live)
            assert b.kill() == -9                   # in the middle of the stream
            killed = True
    acked_at_kill = len(acked)
    with Coordinator(coordinator, b.chroot) as zk:
        zk.wait_gone("/brokers/ids/1", "/brokers/topics/crash/0/leader", "/brokers/topics/crash/1/leader")
    b.start()
    b.wait_leaders("crash", 2)
    log = b.log_since_start()
    assert re.search(r"log dir \S+: no clean shutdown last time", log), log
    assert p.flush(60) == 0
    assert not failed, failed[:5]
    assert len(acked) == total and len(acked) > acked_at_kill
    # The recovered logs start where the acknowledgements say.
    for part in (0, 1):
        m = re.search(r"replica of crash-%d started in \S+ \(log end offset (\d+)\)" % part, log)
        assert m, log
        assert int(m.group(1)) >= 1 + max(o for pp, o, _ in acked[:acked_at_kill] if pp == part)
    # Every acknowledged message is where it was acknowledged.
    logs = {}
    for part in (0, 1):
        logs[part] = dict(log_values(b, "crash", part))
    for part, offset, value in acked:
        assert logs[part].get(offset) == value, (part, offset, value)
    # The consumer resumes from the position it remembered: no gap, nothing twice.
    resume = consumed_before[-1][0] + 1
    rest = consume_range(b, "crash", 0, resume)
    assert [o for o, _ in consumed_before + rest] == list(range(len(logs[0])))
    assert dict(consumed_before + rest) == logs[0]
    # The consumer that lived through it (reconnecting meanwhile) goes on where it
    # was, to the new end.
    try:
        live_after = poll_to_end(live, until=len(logs[1]))
    finally:
        live.close()
    assert [o for o, _ in live_before + live_after] == list(range(len(logs[1])))
    assert dict(live_before + live_after) == logs[1]




def test_restart_before_the_old_session_expired(make_broker, coordinator):
    """kill -9 and restart at once: the old session still holds the
    registration and the leader node; once it expires the new process must
    register and lead again."""
    b = make_broker(extra={"zookeeper.session.timeout.ms": "2000"})
    b.create_topic("quick")
    assert produce_batches(b, "quick", 0, 2, 5) == [0, 5]
    b.kill()
    b.start(wait=False)
    b.wait_registered(timeout=20)       # after the old session expired
    assert "broker id 1 is registered by another session" in b.log_since_start()
    b.wait_leaders("quick", 1, timeout=5)
    assert produce_batches(b, "quick", 0, 1, 5, start=10) == [10]
    assert [v for _, v in log_values(b, "quick", 0)] == [b"v%d" % i for i in range(15)]


# ---- clean stop ----

def checkpoint(path):
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2, lines
    return sorted(tuple(x.split(" ")) for x in lines[2:])


def test_clean_stop_marks_the_log_dirs_and_restart_clears_it(make_broker):
    b = make_broker()
    b.create_topic("cs", partitions=2)
    produce_batches(b, "cs", 0, 5, 10)
    produce_batches(b, "cs", 1, 3, 10)
    marker = os.path.join(b.log_dir, ".kafka_cleanshutdown")
    assert not os.path.exists(marker)
    assert b.stop() == 0
    assert os.path.exists(marker)
    want = [("cs", "0", "50"), ("cs", "1", "30")]
    assert checkpoint(os.path.join(b.log_dir, "recovery-point-offset-checkpoint")) == want
    assert checkpoint(os.path.join(b.log_dir, "replication-offset-checkpoint")) == want
    assert os.path.exists(os.path.join(b.log_dir, "cs-0", "00000000000000000000.log"))
    assert os.path.exists(os.path.join(b.log_dir, "cs-0", "leader-epoch-checkpoint"))
    b.start()
    assert "log dir %s: clean shutdown last time" % b.log_dir in b.log_since_start()
    assert not os.path.exists(marker)           # a crash from now on must be noticed
    b.wait_leaders("cs", 2)
    assert produce_batches(b, "cs", 0, 1, 10, start=50) == [50]
    assert [v for _, v in log_values(b, "cs", 0)] == [b"v%d" % i for i in range(60)]
    assert [v for _, v in log_values(b, "cs", 1)] == [b"v%d" % i for i in range(30)]


# ---- torn tail ----

@pytest.mark.parametrize("garbage,clean", [("half-batch", False), ("random", False), ("random", True)],
                         ids=["half-batch-after-crash", "random-after-crash", "random-after-clean-stop"])
def test_torn_tail_is_cut_at_restart(make_broker, garbage, clean):
    """Garbage after the last whole batch of the active segment: a torn write
    (half a batch) or random bytes. "after-crash" removes the clean-shutdown
    marker, as a crash leaves the dir, so recovery scans from the recovery
    point; "after-clean-stop" keeps it, so the segment is trusted but must
    still not be taken as it is."""
    b = make_broker()
    b.create_topic("torn")
    assert produce_batches(b, "torn", 0, 10, 5) == list(range(0, 50, 5))
    assert b.stop() == 0
    segment = os.path.join(b.log_dir, "torn-0", "00000000000000000000.log")
    size = os.path.getsize(segment)
    if garbage == "half-batch":
        whole = record_batch(records(50, 5), base_offset=50, leader_epoch=0)
        tail = whole[:len(whole) // 2]
    else:
        tail = random.Random(5).randbytes(300)
    with open(segment, "ab") as f:
        f.write(tail)
    if not clean:
        os.unlink(os.path.join(b.log_dir, ".kafka_cleanshutdown"))
    b.start()
    b.wait_leaders("torn", 1)
    log = b.log_since_start()
    assert re.search(r"partition log \S+/torn-0: segment 0: cut %d bytes of torn or corrupt batches at position %d"
                     % (len(tail), size), log), log
    assert os.path.getsize(segment) == size
    assert [v for _, v in log_values(b, "torn", 0)] == [b"v%d" % i for i in range(50)]
    assert produce_batches(b, "torn", 0, 2, 5, start=50) == [50, 55]
    assert [v for _, v in log_values(b, "torn", 0)] == [b"v%d" % i for i in range(60)]


# ---- garbage on the Kafka port ----

def produce_request(topic, partition, records_bytes, corr, acks=-1):
    body = (kstring(None) + struct.pack(">hi", acks, 10000) +
            karray([kstring(topic) + karray([struct.pack(">i", partition) + kbytes(records_bytes)])]))
    return request_frame(API_PRODUCE, 8, corr, body)


def bad_crc():
    batch = bytearray(record_batch(records(0, 3)))
    batch[-1] ^= 0xFF                           # a flipped bit in the last record
    return bytes(batch)


def length_too_long():
    batch = bytearray(record_batch(records(0, 3)))
    struct.pack_into(">i", batch, 8, struct.unpack_from(">i", batch, 8)[0] + 40)
    return bytes(batch)


def length_too_short():
    batch = bytearray(record_batch(records(0, 3)))
    struct.pack_into(">i", batch, 8, struct.unpack_from(">i", batch, 8)[0] - 7)
    return bytes(batch)


def record_count_lies():
    """A batch whose CRC is right but whose header claims more records than it holds."""
    good = record_batch(records(0, 3))
    body = bytearray(good[21:])
    struct.pack_into(">i", body, 57 - 21, 5)     # records count
    return good[:17] + struct.pack(">I", crc32c(bytes(body))) + bytes(body)


def magic_1():
    batch = bytearray(record_batch(records(0, 1)))
    batch[16] = 1
    return bytes(batch)


# (name, bytes to send, what happens to that connection)
CLOSING = [
    ("random-bytes", lambda: random.Random(1).randbytes(4096), "closed"),
    ("huge-size-prefix", lambda: struct.pack(">i", 0x7FFFFFF0) + b"\x00" * 64, "closed"),
    ("truncated-frame", lambda: request_frame(18, 0, 1)[:9], "closed"),
    ("unknown-api-key", lambda: request_frame(77, 0, 1, b"\x00" * 8), "closed"),
]
# Produce requests whose records are bad: answered with an error, connection usable.
BAD_RECORDS = [
    ("bad-crc", bad_crc, (2,)),                        # CORRUPT_MESSAGE
    ("batch-length-too-long", length_too_long, (2,)),
    ("batch-length-too-short", length_too_short, (2,)),
    ("record-count-lies", record_count_lies, (2, 87)),  # CORRUPT_MESSAGE or INVALID_RECORD
    ("magic-1", magic_1, (2, 43, 87)),                 # INVALID_RECORD in Produce v3+
    ("not-a-batch", lambda: b"\x00" * 10, (2,)),
]


def roundtrip_works(b, k, topic, expect_offset):
    """Another client: produce one batch, read it back."""
    r = k.produce(topic, 0, record_batch([Record(b"ok", b"ok-%d" % expect_offset)]))
    assert (r.error, r.base_offset) == (0, expect_offset), r
    got = k.fetch_all(topic, 0, expect_offset)
    assert [(o, rec.value) for o, rec, _ in got] == [(expect_offset, b"ok-%d" % expect_offset)]


def test_garbage_closes_only_the_offending_connection(broker):
    broker.create_topic("g")
    with broker.conn() as bystander:
        offset = 0
        roundtrip_works(broker, bystander, "g", offset)
        for name, make, _ in CLOSING:
            s = socket.create_connection(("127.0.0.1", broker.port), timeout=5)
            try:
                s.sendall(make())
                if name == "truncated-frame":
                    s.shutdown(socket.SHUT_WR)      # the client gives up half way
                assert is_closed(s, timeout=5), name
            finally:
                s.close()
            offset += 1
            roundtrip_works(broker, bystander, "g", offset)
    log = broker.log()
    assert "socket.request.max.bytes" in log
    assert "peer closed in the middle of a request" in log
    assert "unsupported request: api key 77" in log


def test_bad_records_get_an_error_and_the_connection_goes_on(broker):
    broker.create_topic("g")
    with broker.conn() as bystander, broker.conn() as k:
        offset = 0
        for name, make, errors in BAD_RECORDS:
            r = k.produce("g", 0, make())
            assert r.error in errors, (name, r)
            assert r.base_offset == -1, (name, r)
            # The same connection is still usable, and so is everyone else's.
            roundtrip_works(broker, k, "g", offset)
            offset += 1
            roundtrip_works(broker, bystander, "g", offset)
            offset += 1
        # Nothing of the bad batches reached the log.
        assert [rec.value for _, rec, _ in k.fetch_all("g", 0)] == [b"ok-%d" % i for i in range(offset)]
    assert re.search(r"produce to g-0 refused: error 2: record batch failed its CRC-32C check", broker.log())


def test_produce_refusals_and_acks_0(broker):
    """Requests a client may get wrong are answered with Kafka's errors; acks=0
    gets no answer at all, and the next answer on the connection is the next
    request's."""
    broker.create_topic("r", partitions=1)
    with broker.conn() as k:
        assert k.produce("r", 0, record_batch(records(0, 1)), acks=0) is None
        assert k.list_offset("r", 0, -1) == (0, -1, 1)             # answered, and the record is there
        r = k.produce("r", 0, record_batch(records(1, 1)) + record_batch(records(2, 1)))
        assert r.error == 87                                        # INVALID_RECORD: one batch per partition
        assert k.produce("r", 0, record_batch(records(1, 1)), acks=2).error == 21   # INVALID_REQUIRED_ACKS
        assert k.produce("r", 7, record_batch(records(1, 1))).error == 3           # no such partition
        big = record_batch([Record(b"k", b"x" * 1_100_000)])       # over message.max.bytes
        assert k.produce("r", 0, big).error == 10                  # MESSAGE_TOO_LARGE
        assert k.fetch("r", 0, 1000).error == 1                    # OFFSET_OUT_OF_RANGE
        assert k.produce("r", 0, record_batch(records(1, 1))).base_offset == 1
        assert [rec.value for _, rec, _ in k.fetch_all("r", 0)] == [b"v0", b"v1"]


def test_garbage_while_another_client_produces(broker):
    """A confluent-kafka producer keeps producing while raw clients send garbage:
    none of its messages is lost or refused."""
    broker.create_topic("busy")
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 1})
    acked, failed = [], []
    stop = threading.Event()

    def garbage():
        i = 0
        while not stop.is_set():
            name, make, _ = CLOSING[i % len(CLOSING)]
            with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as s:
                s.sendall(make())
                s.shutdown(socket.SHUT_WR)
                is_closed(s, timeout=5)
            with KafkaConn(broker.port) as k:
                k.produce("busy", 0, BAD_RECORDS[i % len(BAD_RECORDS)][1]())
            i += 1

    t = threading.Thread(target=garbage, daemon=True)
    t.start()
    try:
        for i in range(3000):
            p.produce("busy", b"m%d" % i, partition=0,
                      on_delivery=lambda e, m: (failed if e else acked).append(e or m.offset()))
            p.poll(0)
        assert p.flush(30) == 0
    finally:
        stop.set()
        t.join(10)
    assert not failed and sorted(acked) == list(range(3000))
    assert [v for _, v in log_values(broker, "busy", 0)] == [b"m%d" % i for i in range(3000)]


# ---- coordinator session expiry ----

def test_session_expiry_then_the_broker_leads_again(make_broker, coordinator):
    """The broker is frozen (SIGSTOP) until its coordinator session expires and
    the keeper removes its registration and leader nodes; thawed, it notices,
    registers again, wins a new leader epoch and serves on from where it was."""
    b = make_broker(extra={"zookeeper.session.timeout.ms": "2000"})
    b.create_topic("exp")
    assert produce_batches(b, "exp", 0, 2, 5) == [0, 5]
    with Coordinator(coordinator, b.chroot) as zk:
        assert zk.exists("/brokers/ids/1") and zk.exists("/brokers/topics/exp/0/leader")
        b.pause()
        try:
            zk.wait_gone("/brokers/ids/1", "/brokers/topics/exp/0/leader")
        finally:
            b.resume()
        wait_until(lambda: zk.exists("/brokers/ids/1") and zk.exists("/brokers/topics/exp/0/leader"), timeout=5,
                   what="the broker to register and lead again")
        assert '"leader_epoch":1' in zk.zk.get("/brokers/topics/exp/0/ISR")[0].decode()
    log = b.log()
    assert re.search(r"coordinator session 0x[0-9a-f]+ expired", log), log
    assert log.count("registered as /brokers/ids/1") == 2
    assert "leading exp-0 at epoch 1" in log
    b.wait_leaders("exp", 1)
    assert produce_batches(b, "exp", 0, 1, 5, start=10) == [10]
    assert [v for _, v in log_values(b, "exp", 0)] == [b"v%d" % i for i in range(15)]
