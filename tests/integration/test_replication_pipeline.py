"""Produce requests on one connection while acks=all ones wait for
replication: kipper takes the connection's next Produce frames meanwhile (up
to 64 in flight and 8 MiB of frames), appends them
in order, and answers every request in the order it was sent -- which is all
a Kafka client relies on (it matches answers to requests by order and
correlation id). Any other request waits until the Produces ahead of it are
answered."""
import struct

import pytest

from broker_harness import coordinator, make_broker  # noqa: F401
from harness import wait_until
from kafka_wire import (API_METADATA, API_PRODUCE, Reader, Record, karray, kbytes, kstring, recv_frame, record_batch,
                        request_frame)

TOPIC = "pipe"


@pytest.fixture
def cluster(request, make_broker):
    chroot = "/kt/pipeline-" + request.node.name[:60]
    brokers = [make_broker(broker_id=i, chroot=chroot, start=False) for i in (1, 2, 3)]
    for b in brokers:
        b.start(wait=False)
    for b in brokers:
        b.wait_registered()
    out = brokers[0].topics_cli("--create", "--topic", TOPIC, "--replica-assignment", "1:2:3")
    assert out.returncode == 0, out.stderr

    def full_isr():
        with brokers[0].conn() as c:
            t = c.metadata([TOPIC], allow_auto_create=False).topics.get(TOPIC)
        return t and not t.error and t.partitions[0].leader == 1 and sorted(t.partitions[0].isr) == [1, 2, 3]
    wait_until(full_isr, timeout=30, what="partition 0 led by broker 1 with all three in sync")
    return brokers


def produce_body(acks, records):
    return (kstring(None) + struct.pack(">hi", acks, 10000) +
            karray([kstring(TOPIC) + karray([struct.pack(">i", 0) + kbytes(records)])]))


def read_produce_answer(frame):
    r = Reader(frame)
    corr = r.take(">i")
    topics = r.array(lambda r: (r.string(), r.array(lambda r: (
        r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q"), r.take(">q"),
        r.array(lambda r: (r.take(">i"), r.string())), r.string()))))
    r.take(">i")
    assert r.done()
    index, error, base = topics[0][1][0][:3]
    return corr, error, base


def test_pipelined_produces_are_answered_in_order(cluster):
    leader = cluster[0]
    batches = [record_batch([Record(b"k%d" % i, b"v%d-%d" % (n, i)) for i in range(10)]) for n in range(6)]
    with leader.conn() as c:
        frames = b""
        # Five acks=all, then one acks=1 (answered at once by itself), then a
        # Metadata: all sent before reading anything.
        for n in range(5):
            frames += request_frame(API_PRODUCE, 8, n + 1, produce_body(-1, batches[n]))
        frames += request_frame(API_PRODUCE, 8, 6, produce_body(1, batches[5]))
        frames += request_frame(API_METADATA, 1, 7, karray([kstring(TOPIC)]))
        c.sock.sendall(frames)
        answers = [read_produce_answer(recv_frame(c.sock)) for _ in range(6)]
        assert [a[0] for a in answers] == [1, 2, 3, 4, 5, 6]
        assert [a[1] for a in answers] == [0] * 6
        assert [a[2] for a in answers] == [0, 10, 20, 30, 40, 50]   # appended in the order sent
        meta = Reader(recv_frame(c.sock))
        assert meta.take(">i") == 7

    # Everything acknowledged is there, in that order, on the leader.
    with leader.conn() as c:
        got = c.fetch_all(TOPIC, 0)
    assert [rec.value for _, rec, _ in got] == [b"v%d-%d" % (n, i) for n in range(6) for i in range(10)]
