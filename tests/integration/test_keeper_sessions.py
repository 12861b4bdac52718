"""Sessions: connect/negotiation, reconnects with id + password, close, expiry
and what happens to ephemerals and watches."""
import threading
import time

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from harness import wait_until
from tcpproxy import FreezableProxy
from zkwire import EV, MODE, STATE_SYNC_CONNECTED, ConnectionClosed, WatcherEvent, enc_connect

ZERO_PASSWD = b"\x00" * 16


# ---- connect and negotiation ------------------------------------------------------------


@pytest.mark.parametrize("asked,granted", [
    (1, 400), (-5, 400), (399, 400), (400, 400), (1000, 1000), (4000, 4000), (4001, 4000),
    (100000, 4000),
])
def test_timeout_is_clamped_to_2_and_20_ticks(shared_keeper, wire_factory, asked, granted):
    """The negotiated session timeout is the asked one clamped to [2, 20] x tickTime (200 ms)."""
    c = wire_factory(shared_keeper, session=False)
    assert c.connect(timeout_ms=asked).timeout == granted


def test_timeout_clamp_follows_tick_time(make_keeper, wire_factory):
    """With tickTime=100 the bounds are 200 and 2000 ms."""
    server = make_keeper(tick_time=100)
    assert wire_factory(server, session=False).connect(timeout_ms=1).timeout == 200
    assert wire_factory(server, session=False).connect(timeout_ms=60000).timeout == 2000
    assert wire_factory(server, session=False).connect(timeout_ms=1500).timeout == 1500


def test_connect_response_fields(shared_keeper, wire_factory):
    """A new session gets protocol 0, a distinct non-zero id, a 16-byte password and readOnly false."""
    a = wire_factory(shared_keeper, session=False).connect()
    b = wire_factory(shared_keeper, session=False).connect()
    for s in (a, b):
        assert s.protocol_version == 0
        assert s.session_id != 0
        assert len(s.passwd) == 16 and s.passwd != ZERO_PASSWD
        assert s.read_only is False
    assert a.session_id != b.session_id


def test_connect_without_read_only_byte_gets_short_response(shared_keeper, wire_factory):
    """A ConnectRequest without the readOnly byte gets a 36-byte answer without it; with it, 37 bytes."""
    old = wire_factory(shared_keeper, session=False)
    old.send_packet(enc_connect(read_only=None))
    assert len(old.recv_packet()) == 36
    assert old.ping().err == 0
    new = wire_factory(shared_keeper, session=False)
    new.send_packet(enc_connect(read_only=False))
    pkt = new.recv_packet()
    assert len(pkt) == 37 and pkt[-1] == 0


def test_read_only_request_on_standalone_server_is_read_write(shared_keeper, wire_factory, zk, base):
    """Asking a standalone server for read-only mode gets a read-write session (readOnly false) that may write."""
    c = wire_factory(shared_keeper, session=False)
    assert c.connect(read_only=True).read_only is False
    c.create(base + "/by-ro-client", b"")
    assert zk.exists(base + "/by-ro-client") is not None


def test_kazoo_read_only_client_connects_read_write(shared_keeper, base, zk):
    """kazoo with read_only=True reaches CONNECTED (not CONNECTED_RO) and can write."""
    c = KazooClient(hosts=shared_keeper.hosts, read_only=True, timeout=10)
    try:
        c.start(timeout=15)
        c.create(base + "/ro-kazoo")
        assert c.client_state == "CONNECTED"
    finally:
        c.stop()
        c.close()


def test_connect_with_zxid_ahead_is_refused(shared_keeper, wire_factory):
    """A client claiming to have seen a zxid beyond the server's is disconnected with no answer."""
    c = wire_factory(shared_keeper, session=False)
    c.send_packet(enc_connect(last_zxid=1 << 40))
    with pytest.raises(ConnectionClosed):
        c.recv_packet(5)


# ---- close ---------------------------------------------------------------------------------


def test_close_session_reply_then_disconnect(shared_keeper, wire_factory, zk, base):
    """closeSession answers err 0, then the connection is closed, ephemerals are gone and the session is dead."""
    c = wire_factory(shared_keeper)
    c.create(base + "/eph", flags=MODE.EPHEMERAL)
    hdr = c.close_session()
    assert hdr.err == 0
    c.wait_closed(5)
    assert zk.exists(base + "/eph") is None
    # the session is gone: it cannot be resumed
    r = wire_factory(shared_keeper, session=False)
    s = r.connect(session_id=c.session.session_id, passwd=c.session.passwd)
    assert (s.timeout, s.session_id, s.passwd) == (0, 0, ZERO_PASSWD)


def test_ephemerals_vanish_on_close_and_watchers_hear(shared_keeper, kazoo_factory, zk, base):
    """When a kazoo client closes, its ephemerals are deleted at once and watchers get DELETED."""
    owner = kazoo_factory(shared_keeper)
    owner.create(base + "/e1", ephemeral=True)
    owner.create(base + "/seq-", ephemeral=True, sequence=True)
    zk.create(base + "/persist")
    seen = threading.Event()
    events = []

    def watcher(e):
        events.append(e)
        seen.set()

    assert zk.exists(base + "/e1", watch=watcher) is not None
    owner.stop()
    assert zk.exists(base + "/e1") is None
    assert zk.get_children(base) == ["persist"]
    assert seen.wait(5)
    assert (events[0].type, events[0].path) == ("DELETED", base + "/e1")


# ---- expiry -----------------------------------------------------------------------------------


def test_silent_session_expires_and_ephemerals_vanish(shared_keeper, wire_factory, base):
    """A silent session expires: ephemerals deleted (watchers told), connection closed, no resuming."""
    watcher = wire_factory(shared_keeper)
    owner = wire_factory(shared_keeper, timeout_ms=400)
    owner.create(base + "/eph", flags=MODE.EPHEMERAL)
    t0 = time.monotonic()                               # the owner's last word
    assert watcher.exists(base + "/eph", watch=True) is not None
    watcher.children(base, watch=True)
    got = sorted([watcher.wait_event(10), watcher.wait_event(10)])
    assert got == sorted([WatcherEvent(EV.NODE_DELETED, STATE_SYNC_CONNECTED, base + "/eph"),
                          WatcherEvent(EV.NODE_CHILDREN_CHANGED, STATE_SYNC_CONNECTED, base)])
    assert time.monotonic() - t0 >= 0.35                # not before the 400 ms timeout
    owner.wait_closed(10)
    r = wire_factory(shared_keeper, session=False)
    s = r.connect(session_id=owner.session.session_id, passwd=owner.session.passwd)
    assert (s.timeout, s.session_id, s.passwd) == (0, 0, ZERO_PASSWD)
    r.wait_closed(5)


def test_pings_keep_a_session_alive(shared_keeper, wire_factory, zk, base):
    """A session that pings more often than its timeout outlives several timeouts."""
    c = wire_factory(shared_keeper, timeout_ms=400)
    c.create(base + "/eph", flags=MODE.EPHEMERAL)
    deadline = time.monotonic() + 1.6                   # four session timeouts
    while time.monotonic() < deadline:
        assert c.ping().err == 0
        time.sleep(0.1)
    assert zk.exists(base + "/eph").ephemeralOwner == c.session.session_id


def test_kazoo_session_expires_behind_frozen_link(shared_keeper, kazoo_factory, zk, base):
    """A kazoo client behind a frozen link is expired by the server (ephemerals go) and sees LOST on return."""
    proxy = FreezableProxy(shared_keeper.port)
    client = KazooClient(hosts=proxy.hosts, timeout=1.0)
    states = []
    lost = threading.Event()

    def listener(state):
        states.append(state)
        if state == KazooState.LOST:
            lost.set()

    client.add_listener(listener)
    try:
        client.start(timeout=15)
        client.create(base + "/eph", ephemeral=True)
        sid = client.client_id[0]
        assert zk.exists(base + "/eph").ephemeralOwner == sid
        proxy.freeze()
        wait_until(lambda: zk.exists(base + "/eph") is None, timeout=15,
                   what="server to expire the cut-off session")
        proxy.thaw()
        assert lost.wait(20), states
        wait_until(lambda: client.connected, timeout=20, what="kazoo to get a new session")
        assert client.client_id[0] != sid
    finally:
        client.stop()
        client.close()
        proxy.close()


# ---- reconnect ----------------------------------------------------------------------------------


def test_reconnect_with_id_and_password_keeps_session(shared_keeper, wire_factory, zk, base):
    """Resuming with id + password keeps id, password and ephemerals; the timeout is negotiated again."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    a.create(base + "/eph", flags=MODE.EPHEMERAL)
    a.close()
    b = wire_factory(shared_keeper, session=False)
    s = b.connect(timeout_ms=3000, session_id=a.session.session_id, passwd=a.session.passwd)
    assert s.session_id == a.session.session_id
    assert s.passwd == a.session.passwd
    assert s.timeout == 3000
    assert zk.exists(base + "/eph").ephemeralOwner == s.session_id
    b.close_session()
    assert zk.exists(base + "/eph") is None


def test_kazoo_resumes_session_by_client_id(shared_keeper, wire_factory, kazoo_factory, zk, base):
    """kazoo given client_id=(id, password) of a live session resumes it."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    a.create(base + "/eph", flags=MODE.EPHEMERAL)
    a.close()
    k = kazoo_factory(shared_keeper, client_id=(a.session.session_id, a.session.passwd))
    assert k.client_id[0] == a.session.session_id
    k.delete(base + "/eph")
    assert zk.exists(base + "/eph") is None


def test_wrong_password_is_session_expired(shared_keeper, wire_factory, zk, base):
    """Resuming with a wrong password gets the expired answer and a close; the real session lives on."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    a.create(base + "/eph", flags=MODE.EPHEMERAL)
    bad = bytes(b ^ 0xFF for b in a.session.passwd)
    r = wire_factory(shared_keeper, session=False)
    s = r.connect(session_id=a.session.session_id, passwd=bad)
    assert (s.protocol_version, s.timeout, s.session_id, s.passwd) == (0, 0, 0, ZERO_PASSWD)
    r.wait_closed(5)
    assert zk.exists(base + "/eph").ephemeralOwner == a.session.session_id
    a.close()
    good = wire_factory(shared_keeper, session=False)
    assert good.connect(session_id=a.session.session_id, passwd=a.session.passwd).session_id == \
        a.session.session_id
    assert zk.exists(base + "/eph").ephemeralOwner == a.session.session_id


def test_unknown_session_id_is_session_expired(shared_keeper, wire_factory):
    """Reconnecting to a session id the server never issued gets the expired answer."""
    r = wire_factory(shared_keeper, session=False)
    s = r.connect(session_id=0x0123456789ABCDEF, passwd=b"p" * 16)
    assert (s.timeout, s.session_id, s.passwd) == (0, 0, ZERO_PASSWD)
    r.wait_closed(5)


def test_kazoo_with_wrong_password_gets_a_new_session(shared_keeper, wire_factory, kazoo_factory):
    """kazoo offered a bad password for a live session ends up with a new, different session."""
    a = wire_factory(shared_keeper)
    k = KazooClient(hosts=shared_keeper.hosts, timeout=10,
                    client_id=(a.session.session_id, b"\x01" * 16))
    try:
        k.start(timeout=15)
        assert k.client_id[0] not in (0, a.session.session_id)
        assert k.connected
    finally:
        k.stop()
        k.close()


def test_resuming_a_session_closes_its_old_connection(shared_keeper, wire_factory):
    """When a session is resumed on a new connection, the server closes the old one."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    b = wire_factory(shared_keeper, session=False)
    s = b.connect(timeout_ms=4000, session_id=a.session.session_id, passwd=a.session.passwd)
    assert s.session_id == a.session.session_id
    a.wait_closed(5)
    assert b.ping().err == 0


def test_kazoo_reconnects_after_dropped_socket_keeping_session(shared_keeper, kazoo_factory, zk, base):
    """When kazoo's socket is cut it reconnects to the same session and its ephemerals survive."""
    import socket as socketlib
    c = kazoo_factory(shared_keeper)
    states = []
    c.add_listener(states.append)
    c.create(base + "/eph", ephemeral=True)
    sid = c.client_id[0]
    c._connection._socket.shutdown(socketlib.SHUT_RDWR)
    wait_until(lambda: KazooState.SUSPENDED in states and c.connected, timeout=15,
               what="kazoo to notice the cut and reconnect")
    assert states[-1] == KazooState.CONNECTED and KazooState.LOST not in states
    assert c.client_id[0] == sid
    assert zk.exists(base + "/eph").ephemeralOwner == sid
    c.set(base + "/eph", b"still mine")
