"""The broker under exhausted resources and hostile sizes: out of file
descriptors with a fetch waiting, connection limits, clients that never
read, thousands of idle connections, maximum-size frames, and requests made
to multiply memory (decoding, DescribeGroups, group membership). Each test
asserts that the broker stays up, keeps serving a well-behaved client, and
(where memory is the point) that its peak RSS (VmHWM) stays under a bound.

Raw Kafka frames from kafka_wire.py throughout: the point is what a client
can send, not what a library would."""
import os
import resource
import socket
import struct

from broker_harness import coordinator, make_broker  # noqa: F401
from harness import wait_until
from kafka_wire import is_closed, recv_frame, request_frame  # noqa: F401
from kafka_wire import API_FETCH, Record, karray, kstring, record_batch

MiB = 1 << 20


# ---- helpers ----

def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def peak_rss(pid):
    """The process's peak resident set (VmHWM), in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM for pid %d" % pid)


def fetch_body(topic, partition, offset, max_wait_ms, min_bytes, max_bytes=1 << 20):
    """Fetch v4: one partition."""
    return (struct.pack(">iiiib", -1, max_wait_ms, min_bytes, max_bytes, 0) +
            karray([kstring(topic) + karray([struct.pack(">iqi", partition, offset, max_bytes)])]))


def served(broker):
    """A fresh well-behaved client gets Metadata answered."""
    with broker.conn(timeout=5) as c:
        return c.metadata([], version=1).brokers


def connect_many(port, n):
    """n raw connections (the kernel completes them whether or not the broker accepts)."""
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        out.append(s)
    return out


def close_all(socks):
    for s in socks:
        s.close()


# ---- descriptors ----

def test_fetch_woken_while_out_of_descriptors(make_broker):
    """A waiting Fetch woken by an append when the broker has no descriptor left
    (its answer needs one) costs that client its connection, not the broker its
    life; once descriptors free up, new clients are served and the data is there."""
    b = make_broker(extra={"max.connections": 100000})   # descriptors, not the connection limit, run out
    b.create_topic("fdx")
    producer = b.conn()
    waiter = b.conn()
    corr = waiter.send(API_FETCH, 4, fetch_body("fdx", 0, 0, max_wait_ms=60000, min_bytes=1))
    producer.metadata([], version=1)   # a round trip: the fetch is parked by now
    pid = b.proc.pid
    before = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    limit = fd_count(pid) + 8
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, before[1]))
    flood = []
    try:
        flood = connect_many(b.port, 32)
        wait_until(lambda: "Too many open files" in b.log_since_start(), timeout=10,
                   what="the broker to run out of descriptors")
        p = producer.produce("fdx", 0, record_batch([Record(b"k", b"v")]), acks=1)
        assert p.error == 0
        # The woken fetch could not be answered: its connection is closed.
        assert is_closed(waiter.sock, timeout=10)
        assert producer.metadata([], version=1).brokers   # and the broker lived through it
        assert b.alive()
    finally:
        close_all(flood)
        if b.alive():
            resource.prlimit(pid, resource.RLIMIT_NOFILE, before)
    wait_until(lambda: served(b), timeout=10, what="a new client to be served")
    with b.conn() as c:
        got = c.fetch_all("fdx", 0)
    assert [r.value for _, r, _ in got] == [b"v"]
    assert corr == 1
    waiter.close()
    producer.close()
