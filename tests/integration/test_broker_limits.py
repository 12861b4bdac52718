"""The broker under exhausted resources and hostile sizes: out of file
descriptors with a fetch waiting, connection limits, clients that never
read, thousands of idle connections, maximum-size frames, and requests made
to multiply memory (decoding, DescribeGroups, group membership). Each test
asserts that the broker stays up, keeps serving a well-behaved client, and
(where memory is the point) that its peak RSS (VmHWM) stays under a bound.

Raw Kafka frames from kafka_wire.py throughout: the point is what a client
can send, not what a library would."""
import base64
import os
import resource
import socket
import struct

from broker_harness import coordinator, make_broker  # noqa: F401
from harness import wait_until
from kafka_wire import is_closed, recv_frame, request_frame  # noqa: F401
from kafka_wire import API_FETCH, Reader, Record, karray, kbytes, kstring, record_batch, uvarint

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


def admitted(make_conn, check, timeout=10):
    """A connection the broker serves (check passes on it), retried while the
    slots of connections just closed (the harness's own probes) are still being
    given back."""
    def attempt():
        c = make_conn()
        try:
            if check(c):
                return c
        except (OSError, EOFError):
            pass
        c.close()
        return None
    return wait_until(attempt, timeout=timeout, what="a connection slot")


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


def test_accept_out_of_descriptors_neither_spins_nor_floods_the_log(make_broker):
    """Out of descriptors, connections the broker cannot take are closed at once
    (not left hanging in the backlog while accept fails in a loop), the log says
    so a couple of times rather than thousands, and clients are served again
    once descriptors free up."""
    b = make_broker(extra={"max.connections": 100000})
    pid = b.proc.pid
    before = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    limit = fd_count(pid) + 4
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, before[1]))
    flood = []
    try:
        flood = connect_many(b.port, 200)
        # The first few took the last descriptors; the rest were shed.
        for s in flood[-3:]:
            assert is_closed(s, timeout=5)
        assert b.alive()
        lines = [ln for ln in b.log_since_start().splitlines() if "Too many open files" in ln]
        assert 1 <= len(lines) <= 3, lines[:10]
    finally:
        close_all(flood)
        if b.alive():
            resource.prlimit(pid, resource.RLIMIT_NOFILE, before)
    wait_until(lambda: served(b), timeout=10, what="a new client to be served")


def test_max_connections_closes_the_ones_over_it(make_broker):
    """max.connections=8: eight clients are served, the ninth and later are closed
    at once with one log line for the lot; when one leaves, a newcomer is served."""
    b = make_broker(extra={"max.connections": 8})
    conns = [admitted(b.conn, served_on)]
    while len(conns) < 8:
        conns.append(b.conn())
        assert served_on(conns[-1])
    over = connect_many(b.port, 50)
    for s in over:
        assert is_closed(s, timeout=5)
    lines = [ln for ln in b.log_since_start().splitlines() if "max.connections (8) reached" in ln]
    assert 1 <= len(lines) <= 2, lines
    for c in conns:
        assert served_on(c)
    conns.pop().close()
    wait_until(lambda: served(b), timeout=10, what="a slot to free up")
    close_all(over)
    for c in conns:
        c.close()


def served_on(conn):
    return bool(conn.metadata([], version=1).brokers)


def connect_from(port, source_ip):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.bind((source_ip, 0))
    s.connect(("127.0.0.1", port))
    return s


def answered(sock):
    """An ApiVersions v0 round trip on a raw socket."""
    sock.sendall(request_frame(18, 0, 7))
    return len(recv_frame(sock)) > 0


def test_max_connections_per_ip(make_broker):
    """max.connections.per.ip=3 counts each address alone: a fourth connection
    from 127.0.0.1 is closed, one from 127.0.0.2 is served, and 127.0.0.1 gets a
    slot back when one of its connections leaves."""
    b = make_broker(extra={"max.connections.per.ip": 3})
    mine = [admitted(lambda: connect_from(b.port, "127.0.0.1"), answered)]
    while len(mine) < 3:
        mine.append(connect_from(b.port, "127.0.0.1"))
        assert answered(mine[-1])
    fourth = connect_from(b.port, "127.0.0.1")
    assert is_closed(fourth, timeout=5)
    other = connect_from(b.port, "127.0.0.2")
    assert answered(other)
    assert "max.connections.per.ip (3)" in b.log_since_start()
    mine.pop().close()
    mine.append(admitted(lambda: connect_from(b.port, "127.0.0.1"), answered))
    close_all(mine + [fourth, other])


def raise_own_nofile(want):
    """This test process needs a descriptor per connection it holds."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))


def test_thousands_of_idle_connections(make_broker):
    """max.connections=3000 taken by 2999 idle connections (a third asked one thing
    first) and one well-behaved client: the client produces and fetches, the next
    connection is refused cleanly, the idle ones still get answers, and the
    broker's peak memory stays small."""
    raise_own_nofile(8000)
    b = make_broker(extra={"max.connections": 3000})
    b.create_topic("idle")
    client = admitted(b.conn, served_on)   # every earlier probe is closed by now (see admitted)
    idle = connect_many(b.port, 2999)
    for s in idle[::3]:
        assert answered(s)
    assert client.produce("idle", 0, record_batch([Record(b"k", b"v")]), acks=1).error == 0
    assert client.fetch("idle", 0, 0).error == 0
    over = connect_many(b.port, 5)
    for s in over:
        assert is_closed(s, timeout=5)
    for s in idle[1::100]:
        assert answered(s)   # never-asking ones too: they were let in
    # The largest Fetch that decodes dominates (about 60 MiB): 16 MiB of decoded partitions and their
    # answers, each a struct of every field FetchPartitionData has in any version.
    assert peak_rss(b.proc.pid) < 80 * MiB, "peak RSS %d MiB" % (peak_rss(b.proc.pid) // MiB)
    close_all(idle + over)
    client.close()


# ---- request memory ----

def test_metadata_of_empty_names_is_refused_within_its_budget(make_broker):
    """8 MiB of empty topic names (4 million of them) would take 48 bytes of
    decoded nodes per byte; the request is refused over its decode budget (the
    connection closed with a log line, as Kafka closes on an invalid request),
    the broker's peak memory stays within tens of MB, and others are served."""
    b = make_broker()
    n = (8 * MiB - 64) // 2
    body = struct.pack(">i", n) + b"\x00\x00" * n
    with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
        s.sendall(request_frame(3, 1, 1, body))
        assert is_closed(s, timeout=30)
    assert "needs more than" in b.log_since_start()
    assert served(b)
    assert peak_rss(b.proc.pid) < 48 * MiB, "peak RSS %d MiB" % (peak_rss(b.proc.pid) // MiB)


def topic_id(broker, topic):
    """The 16 bytes of a topic's id, from its partition 0's partition.metadata."""
    with open(os.path.join(broker.log_dir, topic + "-0", "partition.metadata")) as f:
        text = f.read().split("topic_id:")[1].strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_metadata_answers_each_topic_once(make_broker):
    """Metadata v12 naming one topic of 50 partitions by its id 10,000 times is
    answered with that topic once (Kafka reads the ids into a set), not with
    10,000 copies of its partitions."""
    b = make_broker()
    b.create_topic("ids", partitions=50)
    item = topic_id(b, "ids") + uvarint(0) + uvarint(0)   # the id, a null name, no tags
    body = uvarint(10001) + item * 10000 + b"\x00\x00" + uvarint(0)
    with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
        s.sendall(request_frame(3, 12, 1, body, flexible=True))
        answer = recv_frame(s)
    assert 1000 < len(answer) < 20000, len(answer)
    assert served(b)


def push(sock, data, sent):
    """Send what the non-blocking socket takes of data[sent:]; the new count."""
    try:
        while sent < len(data):
            n = sock.send(data[sent:sent + 262144])
            if n <= 0:
                break
            sent += n
    except (BlockingIOError, InterruptedError):
        pass
    return sent


def test_large_frames_wait_for_request_memory(make_broker):
    """queued.max.request.bytes=16 MiB with 8 MiB frames: of sixteen clients each
    sending all but the last byte of one, two are read and the others wait
    unread, so the broker holds about 16 MiB of them, not 128; small requests
    are still served meanwhile; when the two leave, two waiting ones are read."""
    b = make_broker(extra={"socket.request.max.bytes": 8 * MiB, "queued.max.request.bytes": 16 * MiB})
    header = len(request_frame(3, 1, 1, b"")) - 4
    frame = request_frame(3, 1, 1, b"\x00" * (8 * MiB - header))
    assert len(frame) - 4 == 8 * MiB   # two of them fill the 16 MiB exactly
    data = frame[:-1]
    hogs = []
    for _ in range(16):
        s = socket.create_connection(("127.0.0.1", b.port), timeout=5)
        s.setblocking(False)
        hogs.append([s, 0])

    def pushed(want_done):
        for h in hogs:
            if h[0] is not None:
                h[1] = push(h[0], data, h[1])
        return sum(1 for s, n in hogs if s is not None and n == len(data)) >= want_done

    wait_until(lambda: pushed(2) and "queued.max.request.bytes (16777216) reached" in b.log_since_start(),
               timeout=30, what="two frames read and the others waiting")
    assert served(b)
    assert peak_rss(b.proc.pid) < 48 * MiB, "peak RSS %d MiB" % (peak_rss(b.proc.pid) // MiB)
    assert sum(1 for s, n in hogs if n == len(data)) == 2
    for h in hogs:
        if h[1] == len(data):
            h[0].close()
            h[0] = None
    wait_until(lambda: pushed(2), timeout=30, what="two waiting frames read once memory freed")
    assert served(b)
    close_all(h[0] for h in hogs if h[0] is not None)


# ---- clients that never read ----

def slow_reader(port):
    """A client whose kernel buffers take a lot of requests but few answers."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * MiB)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    return s


def test_clients_that_never_read(make_broker):
    """One client pipelines 6 MB of ApiVersions requests (80 MB of answers) and
    another 2000 Fetches of file data, and neither reads: the broker stops
    reading each once its output backs up, so its memory and descriptors stay
    bounded, and a well-behaved client is served throughout."""
    b = make_broker()
    b.create_topic("slow")
    with b.conn() as c:
        assert c.produce("slow", 0, record_batch([Record(b"k", b"x" * 65536)]), acks=1).error == 0
    pid = b.proc.pid
    fds_before = fd_count(pid)
    answers = slow_reader(b.port)
    one = request_frame(18, 0, 1)
    answers.sendall(one * (6 * MiB // len(one)))
    fetches = slow_reader(b.port)
    fetch = request_frame(API_FETCH, 4, 2, fetch_body("slow", 0, 0, max_wait_ms=0, min_bytes=0))
    fetches.sendall(fetch * 2000)
    for _ in range(3):
        assert served(b)
    assert fd_count(pid) < fds_before + 100, "%d descriptors, %d before" % (fd_count(pid), fds_before)
    assert peak_rss(pid) < 48 * MiB, "peak RSS %d MiB" % (peak_rss(pid) // MiB)
    answers.close()
    fetches.close()
    assert served(b)


# ---- groups ----

API_JOIN_GROUP, API_SYNC_GROUP, API_DESCRIBE_GROUPS = 11, 14, 15
GROUP_MAX_SIZE_REACHED, UNKNOWN_SERVER_ERROR, COORDINATOR_LOAD_IN_PROGRESS = 81, -1, 14
UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 25, 27


def join_frame(group, metadata, corr=1, rebalance_ms=3000, member=""):
    """JoinGroup v3 (members are added at once: no KIP-394 round trip)."""
    body = (kstring(group) + struct.pack(">ii", 6000, rebalance_ms) + kstring(member) + kstring("consumer") +
            karray([kstring("range") + kbytes(metadata)]))
    return request_frame(API_JOIN_GROUP, 3, corr, body)


def join_answer(frame):
    """(error, generation, member id, leader, [(member, metadata)]) of a JoinGroup v3 answer."""
    r = Reader(frame)
    r.take(">i")   # correlation id
    r.take(">i")   # throttle
    error, generation = r.take(">h"), r.take(">i")
    r.string()     # protocol
    leader, member = r.string(), r.string()
    members = r.array(lambda r: (r.string(), r.bytes()))
    return error, generation, member, leader, members


def join(sock, group, metadata, corr=1):
    sock.sendall(join_frame(group, metadata, corr))
    return join_answer(recv_frame(sock))


def sync(sock, group, generation, member, assignments, corr=2):
    """SyncGroup v1: (error, assignment)."""
    body = (kstring(group) + struct.pack(">i", generation) + kstring(member) +
            karray([kstring(m) + kbytes(a) for m, a in assignments]))
    sock.sendall(request_frame(API_SYNC_GROUP, 1, corr, body))
    r = Reader(recv_frame(sock))
    r.take(">i")
    r.take(">i")
    return r.take(">h"), r.bytes()


def describe_frame(groups, corr=3):
    return request_frame(API_DESCRIBE_GROUPS, 0, corr, karray([kstring(g) for g in groups]))


def describe(sock, groups):
    """DescribeGroups v0: [(error, group, state, [(member, metadata, assignment)])]."""
    sock.sendall(describe_frame(groups))
    r = Reader(recv_frame(sock))
    r.take(">i")
    out = r.array(lambda r: (r.take(">h"), r.string(), r.string(), r.string(), r.string(),
                             r.array(lambda r: (r.string(), r.string(), r.string(), r.bytes(), r.bytes()))))
    return [(e, g, st, [(m[0], m[3], m[4]) for m in ms]) for e, g, st, _, _, ms in out]


def stable_group(sock, group, metadata, assignment):
    """A group of one member (initial delay 0), synced: the member id."""
    error, generation, member, leader, _ = join(sock, group, metadata)
    assert error == 0 and leader == member
    assert sync(sock, group, generation, member, [(member, assignment)]) == (0, assignment)
    return member


def test_describe_groups_answers_each_group_once_within_a_budget(make_broker):
    """A group holding 2 MiB (metadata and assignment) named 100 times in one
    DescribeGroups is described once, so a client that never reads its answer
    costs the broker one copy, not a hundred; past 4 MiB of members' bytes in
    one answer further groups are COORDINATOR_LOAD_IN_PROGRESS (asked alone
    they are described whole); and a member's assignment over 1 MiB is refused
    as Kafka refuses a group too large to store."""
    b = make_broker(extra={"group.initial.rebalance.delay.ms": 0})
    big = b"m" * MiB
    with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
        for g in ("fat1", "fat2", "fat3"):
            stable_group(s, g, big, big)
        described = describe(s, ["fat1", "fat1", "fat2", "fat3"])
        assert [(e, g) for e, g, _, _ in described] == [
            (0, "fat1"), (COORDINATOR_LOAD_IN_PROGRESS, "fat2"), (COORDINATOR_LOAD_IN_PROGRESS, "fat3")]
        [(e, g, state, members)] = describe(s, ["fat2"])
        assert (e, g, state) == (0, "fat2", "Stable") and members[0][1:] == (big, big)
        error, generation, member, _, _ = join(s, "overweight", b"small")
        assert sync(s, "overweight", generation, member, [(member, b"a" * (MiB + 1))])[0] == UNKNOWN_SERVER_ERROR
    never_reads = slow_reader(b.port)
    never_reads.sendall(describe_frame(["fat1"] * 100))
    assert served(b)
    assert served(b)
    assert peak_rss(b.proc.pid) < 48 * MiB, "peak RSS %d MiB" % (peak_rss(b.proc.pid) // MiB)
    never_reads.close()


def test_group_members_are_bounded_by_group_memory(make_broker):
    """group.max.memory.bytes=8 MiB: of a hundred members joining one group with
    1 MiB of metadata each, a handful get in and the rest are
    GROUP_MAX_SIZE_REACHED at once; those in rebalance (the leader learning
    everyone's metadata) with the broker's peak memory in tens of MB; two
    thousand small groups fit, and once the big members are gone (they never
    sync), a big member fits again."""
    # queued.max.request.bytes bounds the join frames being read at once (the default, 100 MiB, would
    # let all hundred arrive together when the broker is slower than the sender).
    b = make_broker(extra={"group.initial.rebalance.delay.ms": 0, "group.max.memory.bytes": 8 * MiB,
                           "queued.max.request.bytes": 16 * MiB})
    raise_own_nofile(4000)
    big = b"m" * MiB
    hogs = []
    for i in range(100):
        s = socket.create_connection(("127.0.0.1", b.port), timeout=30)
        s.sendall(join_frame("crowd", big, corr=i))
        hogs.append(s)
    answered_by = {}

    def answers():
        for s in hogs:
            if s not in answered_by:
                s.setblocking(False)
                try:
                    head = s.recv(4, socket.MSG_PEEK)
                except BlockingIOError:
                    head = b""
                s.setblocking(True)
                if len(head) == 4:
                    answered_by[s] = join_answer(recv_frame(s))
        return True

    # Most are answered_by at once; those that got in are answered when their rebalance completes (3 s),
    # the leader with everyone's metadata. Members that never sync are dropped, so a few more may
    # get in later, but never more at once than the budget holds.
    wait_until(lambda: answers() and len(answered_by) == 100, timeout=60, what="every join to be answered")
    errors = [a[0] for a in answered_by.values()]
    assert set(errors) <= {0, GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS}, set(errors)
    assert errors.count(GROUP_MAX_SIZE_REACHED) >= 80 and errors.count(0) >= 2
    assert max(len(a[4]) for a in answered_by.values()) < 8   # a leader's view: what 8 MiB holds
    assert "group.max.memory.bytes" in b.log_since_start()
    assert peak_rss(b.proc.pid) < 48 * MiB, "peak RSS %d MiB" % (peak_rss(b.proc.pid) // MiB)
    close_all(hogs)
    with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
        for i in range(2000):
            assert join(s, "small-%04d" % i, b"s" * 64, corr=i)[0] == 0
        described = describe(s, ["small-%04d" % i for i in range(2000)])
        assert len(described) == 2000 and all(e == 0 and st == "CompletingRebalance" for e, _, st, _ in described)
    # The crowd's members never sync: dropped after the rebalance timeout, their memory is free again.
    with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
        wait_until(lambda: join(s, "after", big)[0] == 0, timeout=30, interval=0.5,
                   what="room for a big member again")
    assert served(b)


# ---- maximum-size frames ----

def outcome(port, frame):
    """'answered' or 'closed': what the broker did with one frame."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        try:
            s.sendall(frame)   # the broker may close before it has all of it
            recv_frame(s)
            return "answered"
        except (EOFError, ConnectionResetError, BrokenPipeError):
            return "closed"


def fill(api, version, head, item, tail=b"", limit=4 * MiB):
    """A request frame of head, an array of as many copies of item as fit in limit, and tail."""
    empty = len(request_frame(api, version, 1, head + struct.pack(">i", 0) + tail)) - 4
    n = (limit - empty) // len(item)
    return request_frame(api, version, 1, head + struct.pack(">i", n) + item * n + tail)


def test_maximum_size_frames(make_broker):
    """socket.request.max.bytes=4 MiB, and frames of that size made of the
    smallest elements each request has (Metadata names, Fetch and OffsetCommit
    partitions, DescribeGroups ids), a Produce of one 4 MiB partition, the
    largest Fetch that decodes (1 MiB of partitions, each answered), and a frame
    one byte over: the broker refuses or answers each, stays up, serves a
    well-behaved client after each, and its peak memory stays in tens of MB."""
    limit = 4 * MiB
    b = make_broker(extra={"socket.request.max.bytes": limit, "auto.create.topics.enable": "false"})
    b.create_topic("real")
    partition = struct.pack(">iqi", 0, 0, 1 << 20)
    fetch_head = struct.pack(">iiiib", -1, 0, 0, 1 << 20, 0) + struct.pack(">i", 1) + kstring("nope")
    commit_head = kstring("g") + struct.pack(">i", -1) + kstring("") + struct.pack(">q", -1) + \
        struct.pack(">i", 1) + kstring("real")
    produce = request_frame(0, 3, 1, kstring(None) + struct.pack(">hi", 1, 10000) + karray([
        kstring("real") + karray([struct.pack(">i", 0) + kbytes(b"\x01" * (limit - 200))])]))
    cases = {
        "metadata of empty names": (fill(3, 1, b"", kstring("")), "closed"),
        "metadata of distinct names": (request_frame(3, 1, 1, karray([kstring("t%06d" % i)
                                                                      for i in range((limit - 64) // 9)])),
                                       "closed"),
        "fetch of partitions": (fill(API_FETCH, 4, fetch_head, partition), "closed"),
        "offset commit of partitions": (fill(8, 2, commit_head, struct.pack(">iq", 0, 0) + kstring("")), "closed"),
        "describe groups of ids": (fill(API_DESCRIBE_GROUPS, 0, b"", kstring("g")), "closed"),
        "produce of one partition": (produce, None),
        "largest fetch that decodes": (fill(API_FETCH, 4, fetch_head, partition, limit=MiB), "answered"),
    }
    for name, (frame, expected) in cases.items():
        assert len(frame) - 4 <= limit, name
        got = outcome(b.port, frame)
        assert expected is None or got == expected, "%s: %s" % (name, got)
        assert served(b), name
    header = len(request_frame(3, 1, 1, b"")) - 4
    over = request_frame(3, 1, 1, b"\x00" * (limit + 1 - header))
    assert len(over) - 4 == limit + 1
    assert outcome(b.port, over) == "closed"
    assert "socket.request.max.bytes" in b.log_since_start()
    assert served(b)
    # The largest Fetch that decodes dominates (about 60 MiB): 16 MiB of decoded partitions and their
    # answers, each a struct of every field FetchPartitionData has in any version.
    assert peak_rss(b.proc.pid) < 80 * MiB, "peak RSS %d MiB" % (peak_rss(b.proc.pid) // MiB)
