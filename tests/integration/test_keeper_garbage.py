"""Garbage on the client port: random bytes, absurd length prefixes, truncated
requests, unknown opcodes, malformed connect requests and request bodies.
The bad connection is closed (or answered with ZooKeeper's error), the server
stays up and everyone else is served as before; kipper also logs the bad
connection."""
import re
import socket
import struct

import pytest

from harness import four_letter_word, wait_until
from zkwire import ERR, OP, WireClient, Writer, enc_connect, enc_create, random_bytes


@pytest.fixture
def bystander(shared_keeper, kazoo_factory):
    """A kazoo client connected before the garbage; it must not notice anything."""
    c = kazoo_factory(shared_keeper)
    states = []
    c.add_listener(states.append)
    sid = c.client_id[0]
    yield c
    assert c.connected and c.client_id[0] == sid
    assert states == [], "bystander saw state changes %r" % states


@pytest.fixture
def healthy(shared_keeper, kazoo_factory, bystander, base):
    """After the test: the server is alive, answers ruok, serves a brand-new kazoo
    client and the bystander."""
    yield
    assert shared_keeper.alive()
    assert four_letter_word(shared_keeper.port, "ruok") == "imok"
    fresh = kazoo_factory(shared_keeper)
    fresh.create(base + "/after", b"ok")
    assert bystander.get(base + "/after")[0] == b"ok"


def raw(server):
    return WireClient(server.port, timeout=5)


def assert_logged(server, target, local_port):
    """kipper only: some log line names the bad connection (its client port)."""
    if target != "kipper":
        return
    pat = re.compile(r"(?<![0-9])%d(?![0-9])" % local_port)
    wait_until(lambda: any(pat.search(l) for l in server.log().splitlines()), timeout=5,
               what="a log line about the connection from port %d" % local_port)


def push(c, data):
    """Send garbage; the server may already have closed the connection (EPIPE/RST)."""
    try:
        c.send_raw(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def closes(c, timeout=5):
    c.wait_closed(timeout)
    return True


# ---- before a session -------------------------------------------------------------------


def test_random_bytes_close_the_connection(shared_keeper, healthy, target):
    """4 KiB of random bytes as the first data gets the connection closed."""
    data = random_bytes(4096, seed=20240601)
    (length,) = struct.unpack("!i", data[:4])
    assert length < 0 or length > 0xFFFFF              # this seed starts with an impossible length
    c = raw(shared_keeper)
    port = c.sock.getsockname()[1]
    push(c, data)
    assert closes(c)
    assert_logged(shared_keeper, target, port)


@pytest.mark.parametrize("prefix", [0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x40000000],
                         ids=["2GiB-1", "2GiB(negative)", "minus-1", "1GiB"])
def test_huge_length_prefix_closes_the_connection(shared_keeper, healthy, target, prefix):
    """A length prefix of ~2 GiB (or negative) gets the connection closed without allocating it."""
    c = raw(shared_keeper)
    port = c.sock.getsockname()[1]
    push(c, struct.pack("!I", prefix) + b"\x00" * 64)
    assert closes(c)
    assert_logged(shared_keeper, target, port)


def test_zero_length_connect_closes(shared_keeper, healthy, target):
    """An empty first packet (length 0) gets the connection closed."""
    c = raw(shared_keeper)
    port = c.sock.getsockname()[1]
    push(c, b"\x00\x00\x00\x00")
    assert closes(c)
    assert_logged(shared_keeper, target, port)


@pytest.mark.parametrize("kind", ["short", "passwd-too-long", "passwd-negative", "random-fields"])
def test_malformed_connect_request_closes(shared_keeper, healthy, target, kind):
    """A connect request with garbage fields is closed (after at most an expired answer) and yields no session."""
    if kind == "short":
        payload = b"\x00\x00\x00"
    elif kind == "passwd-too-long":
        payload = Writer().int(0).long(0).int(4000).long(0).int(100000).raw(b"abc").bytes()
    elif kind == "passwd-negative":
        payload = Writer().int(0).long(0).int(4000).long(0).int(-7).bytes()
    else:
        payload = random_bytes(200, seed=7)
    c = raw(shared_keeper)
    port = c.sock.getsockname()[1]
    push(c, struct.pack("!i", len(payload)) + payload)
    assert closes(c)
    assert_logged(shared_keeper, target, port)


def test_truncated_connect_then_close(shared_keeper, healthy):
    """A connect request cut short before the client hangs up leaves the server healthy."""
    c = raw(shared_keeper)
    payload = enc_connect()
    push(c, struct.pack("!i", len(payload)) + payload[:10])
    c.close()


def test_half_a_length_prefix_then_close(shared_keeper, healthy):
    """Two bytes of a length prefix and a hang-up leave the server healthy."""
    c = raw(shared_keeper)
    push(c, b"\x00\x00")
    c.close()


# ---- after a session ---------------------------------------------------------------------


def test_truncated_request_then_close(shared_keeper, healthy, zk, base):
    """A request whose body never fully arrives, then a hang-up, changes nothing."""
    c = WireClient(shared_keeper.port)
    c.connect()
    body = Writer().int(1).int(OP.CREATE).raw(enc_create(base + "/half", b"x" * 100)).bytes()
    push(c, struct.pack("!i", len(body)) + body[:30])
    c.close()
    assert zk.exists(base + "/half") is None


@pytest.mark.parametrize("opcode", [999, 0, -50, 10, 23, 108],
                         ids=["999", "notification(0)", "-50", "10", "23", "108"])
def test_unknown_opcode_is_unimplemented_and_closes(shared_keeper, healthy, target, opcode):
    """An unknown opcode gets reply (xid echoed, zxid -1, err UNIMPLEMENTED) then a close; the session survives."""
    c = WireClient(shared_keeper.port)
    s = c.connect()
    port = c.sock.getsockname()[1]
    hdr, body = c.call(opcode, b"\x00" * 8, check=False, xid=42)
    assert (hdr.xid, hdr.zxid, hdr.err) == (42, -1, ERR.UNIMPLEMENTED)
    assert body == b""
    assert closes(c)
    assert_logged(shared_keeper, target, port)
    again = WireClient(shared_keeper.port)
    try:
        assert again.connect(session_id=s.session_id, passwd=s.passwd).session_id == s.session_id
        again.close_session()
    finally:
        again.close()


@pytest.mark.parametrize("body", [
    b"",                                                   # no path at all
    struct.pack("!i", 0x7FFFFFFF) + b"/abc",               # path length past the packet
    struct.pack("!i", -2) + b"\x00",                       # negative path length
], ids=["empty", "long-string", "negative-string"])
def test_malformed_request_body_is_marshalling_error(shared_keeper, healthy, body):
    """A getData whose body cannot be decoded gets MARSHALLINGERROR (-5) and the connection stays usable."""
    c = WireClient(shared_keeper.port)
    try:
        c.connect()
        hdr, rest = c.call(OP.GET_DATA, body, check=False)
        assert hdr.err == ERR.MARSHALLINGERROR and rest == b""
        assert c.ping().err == 0
        assert c.exists("/") is not None
    finally:
        c.close()


def test_truncated_create_body_creates_nothing(shared_keeper, healthy, zk, base):
    """A create whose body stops after the path is a MARSHALLINGERROR and creates nothing."""
    c = WireClient(shared_keeper.port)
    try:
        c.connect()
        hdr, _ = c.call(OP.CREATE, Writer().string(base + "/trunc").bytes(), check=False)
        assert hdr.err == ERR.MARSHALLINGERROR
        assert zk.exists(base + "/trunc") is None
    finally:
        c.close()


def test_random_bytes_after_connect_close_the_connection(shared_keeper, healthy, target):
    """Random bytes after a valid session set-up get the connection closed."""
    c = WireClient(shared_keeper.port)
    c.connect()
    port = c.sock.getsockname()[1]
    data = random_bytes(2048, seed=99)
    (length,) = struct.unpack("!i", data[:4])
    assert length < 0 or length > 0xFFFFF
    push(c, data)
    assert closes(c)
    assert_logged(shared_keeper, target, port)


def test_garbage_storm(shared_keeper, healthy):
    """Forty connections of assorted garbage in a row leave the server healthy."""
    for i in range(40):
        s = socket.create_connection(("127.0.0.1", shared_keeper.port), timeout=5)
        try:
            s.sendall(random_bytes(64 + i * 13, seed=1000 + i))
        except OSError:
            pass
        s.close()
