"""Limits: maxClientCnxns per IP, jute.maxbuffer on request size, pipelined
requests — and that the server keeps serving everyone else."""
import socket

import pytest

from harness import four_letter_word, wait_until
from zkwire import (OP, ConnectionClosed, Reader, WireClient, Writer, enc_connect,
                    enc_path_watch, enc_set_data)

MAXBUFFER = 0xFFFFF   # jute.maxbuffer default (1 MiB - 1): the largest packet accepted


def refused(port):
    """True if a new connection gets no session: the server closes (or resets) it at once."""
    try:
        c = WireClient(port, timeout=5)
    except (ConnectionError, OSError):
        return True
    try:
        c.send_packet(enc_connect())
        c.recv_packet(5)
        return False
    except (ConnectionClosed, ConnectionError):
        return True
    finally:
        c.close()


def word_refused(port):
    """True if a four-letter word gets no answer (connection closed or reset)."""
    try:
        return four_letter_word(port, "ruok") == ""
    except ConnectionError:
        return True


def test_max_client_cnxns_per_ip(make_keeper, wire_factory):
    """With maxClientCnxns=3 the 4th connection (even a 4lw) from 127.0.0.1 is closed; a slot frees when one leaves."""
    server = make_keeper(extra={"maxClientCnxns": 3})
    conns = [wire_factory(server) for _ in range(3)]
    assert refused(server.port)
    assert word_refused(server.port)
    for c in conns:
        assert c.ping().err == 0
    conns[0].close()
    wait_until(lambda: not refused(server.port), timeout=10, what="a connection slot to free up")
    for c in conns[1:]:
        assert c.ping().err == 0


def test_fifty_concurrent_sessions(shared_keeper, wire_factory, zk, base):
    """Fifty simultaneous sessions from one IP (below ZooKeeper's default limit of 60) all work."""
    conns = [wire_factory(shared_keeper) for _ in range(50)]
    for i, c in enumerate(conns):
        c.create("%s/n%02d" % (base, i), b"")
    assert len(zk.get_children(base)) == 50
    assert len({c.session.session_id for c in conns}) == 50


def _set_packet(path, n):
    """A setData packet for `path` with n data bytes, and its size."""
    payload = Writer().int(1).int(OP.SET_DATA).raw(enc_set_data(path, b"d" * n)).bytes()
    return payload


def test_request_of_exactly_maxbuffer_is_accepted(shared_keeper, wire_factory, zk, base):
    """A request packet of exactly jute.maxbuffer (1048575) bytes is served."""
    path = base + "/big"
    zk.create(path)
    fixed = len(_set_packet(path, 0))
    c = wire_factory(shared_keeper)
    pkt = _set_packet(path, MAXBUFFER - fixed)
    assert len(pkt) == MAXBUFFER
    c.send_packet(pkt)
    hdr, body = c.read_reply(1, timeout=15)
    assert hdr.err == 0
    assert Reader(body).stat().dataLength == MAXBUFFER - fixed
    assert zk.exists(path).dataLength == MAXBUFFER - fixed


def test_request_over_maxbuffer_closes_only_that_connection(shared_keeper, wire_factory, zk, base):
    """A packet 1 byte over jute.maxbuffer closes that connection unanswered; session, data and others are fine."""
    path = base + "/big"
    zk.create(path, b"old")
    fixed = len(_set_packet(path, 0))
    c = wire_factory(shared_keeper)
    pkt = _set_packet(path, MAXBUFFER + 1 - fixed)
    assert len(pkt) == MAXBUFFER + 1
    try:
        c.send_packet(pkt)
    except (BrokenPipeError, ConnectionResetError):
        pass                       # the server may close before reading it all
    with pytest.raises((ConnectionClosed, ConnectionResetError)):
        c.recv_packet(10)
    assert zk.get(path)[0] == b"old"
    again = wire_factory(shared_keeper, session=False)
    s = again.connect(session_id=c.session.session_id, passwd=c.session.passwd)
    assert s.session_id == c.session.session_id


def test_length_prefix_alone_over_maxbuffer_is_refused(shared_keeper, wire_factory, zk):
    """A length prefix above jute.maxbuffer is refused as soon as it is read (no need to send the body)."""
    c = wire_factory(shared_keeper)
    c.send_raw((MAXBUFFER + 1).to_bytes(4, "big"))
    c.wait_closed(10)
    assert zk.exists("/") is not None


def test_pipelined_requests_are_answered_in_order(shared_keeper, wire_factory, zk, base):
    """A thousand requests sent without waiting are all answered, in order."""
    zk.create(base + "/n", b"v")
    c = wire_factory(shared_keeper)
    body = enc_path_watch(base + "/n")
    n = 1000
    blob = b"".join(len(p).to_bytes(4, "big") + p
                    for p in (Writer().int(xid).int(OP.GET_DATA).raw(body).bytes()
                              for xid in range(1, n + 1)))
    c.sock.sendall(blob)
    for xid in range(1, n + 1):
        hdr, rest = c.read_reply(xid, timeout=20)
        assert hdr.err == 0 and Reader(rest).buffer() == b"v"
    c.xid = n
    assert c.ping().err == 0


def test_many_short_connections(shared_keeper, zk):
    """Two hundred connect/close cycles (half with a session) leave the server healthy."""
    for i in range(200):
        try:
            s = socket.create_connection(("127.0.0.1", shared_keeper.port), timeout=5)
            if i % 2:
                s.sendall(len(enc_connect()).to_bytes(4, "big") + enc_connect())
            s.close()
        except ConnectionError:
            pass   # over maxClientCnxns while the server reaps closed connections: refused, fine
    wait_until(lambda: four_letter_word(shared_keeper.port, "ruok") == "imok", timeout=10,
               what="the server to answer ruok after the churn")
    assert zk.exists("/") is not None


def test_pipelined_writes_and_reads_keep_order_under_other_writers(shared_keeper, wire_factory, zk, base):
    """Writes and reads pipelined on one connection, while another connection writes too,
    are answered in request order and every read sees the write sent just before it."""
    zk.create(base + "/mine", b"0")
    zk.create(base + "/theirs", b"0")
    mine = wire_factory(shared_keeper)
    theirs = wire_factory(shared_keeper)
    rounds = 300
    # The other connection keeps writes in flight the whole time.
    other = b"".join(len(p).to_bytes(4, "big") + p
                     for p in (Writer().int(xid).int(OP.SET_DATA).raw(enc_set_data(base + "/theirs", b"%d" % xid)).bytes()
                               for xid in range(1, 2 * rounds + 1)))
    theirs.sock.sendall(other)
    packets = []
    for i in range(1, rounds + 1):
        packets.append(Writer().int(2 * i - 1).int(OP.SET_DATA).raw(enc_set_data(base + "/mine", b"%d" % i)).bytes())
        packets.append(Writer().int(2 * i).int(OP.GET_DATA).raw(enc_path_watch(base + "/mine")).bytes())
    mine.sock.sendall(b"".join(len(p).to_bytes(4, "big") + p for p in packets))
    for i in range(1, rounds + 1):
        hdr, _ = mine.read_reply(2 * i - 1, timeout=20)   # raises if a reply overtook another
        assert hdr.err == 0
        hdr, rest = mine.read_reply(2 * i, timeout=20)
        assert hdr.err == 0 and Reader(rest).buffer() == b"%d" % i
    for xid in range(1, 2 * rounds + 1):
        hdr, _ = theirs.read_reply(xid, timeout=20)
        assert hdr.err == 0


def test_replies_stay_in_order_with_many_clients_keeping_requests_in_flight(shared_keeper, wire_factory, zk, base):
    """Four connections each keep 16 mixed reads and writes in flight: every reply comes back in
    request order, and each read sees its own connection's latest write."""
    import random
    import threading
    clients = [wire_factory(shared_keeper) for _ in range(4)]
    for i in range(len(clients)):
        zk.create("%s/k%d" % (base, i), b"0")
    failures = []

    def run(i, c, seed):
        rnd = random.Random(seed)
        path = "%s/k%d" % (base, i)
        total, window, last_written = 1500, 16, 0
        expect = []   # (xid, value the reply must show, or None for a write)
        sent = 0

        def send_one():
            nonlocal sent, last_written
            sent += 1
            if rnd.random() < 0.3:
                last_written = sent
                c.send(OP.SET_DATA, enc_set_data(path, b"%d" % sent), xid=sent)
                expect.append((sent, None))
            else:
                c.send(OP.GET_DATA, enc_path_watch(path), xid=sent)
                expect.append((sent, b"%d" % last_written if last_written else b"0"))
        try:
            while sent < window:
                send_one()
            done = 0
            while done < total:
                xid, want = expect.pop(0)
                hdr, rest = c.read_reply(xid, timeout=20)   # AssertionError if a reply overtook
                assert hdr.err == 0, hdr
                if want is not None:
                    assert Reader(rest).buffer() == want, (xid, want)
                done += 1
                if sent < total:
                    send_one()
        except Exception as exc:   # reported by the main thread
            failures.append("client %d: %r" % (i, exc))

    threads = [threading.Thread(target=run, args=(i, c, 1000 + i)) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not failures, failures
