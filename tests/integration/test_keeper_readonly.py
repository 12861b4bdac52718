"""Read-only mode (readonlymode.enabled, ZooKeeper's ReadOnlyZooKeeperServer): a member cut
off from its quorum serves clients that allow read-only from its last state.

- With readonlymode.enabled, a 3-member ensemble loses two members: the survivor, after its
  grace period, answers `isro` with `ro` and `srvr` with Mode: read-only; a kazoo client with
  read_only=True connects (CONNECTED_RO), reads what was written before, sets a watch (seen in
  `wchc`), and gets NotReadOnlyCallError on create, set, delete and sync; a client that does
  not allow read-only is refused (the connection closes, no ConnectResponse); the C client's
  shell (cli_mt -r) reads too and gets -119 on create. When the two
  members return, `isro` says `rw` and the same kazoo client moves to a read-write member by
  itself (it polls with `isro`) and its writes succeed; its read-only session was local to
  the survivor, so it gets a new one.
- Without readonlymode.enabled the survivor serves no client at all: `isro` says `null` and
  a read-only client is refused, past the grace period.
"""
import threading
import time

import pytest

from ensemble import Ensemble
from harness import four_letter_word, wait_until
from zk_clients import CliMt
from zkwire import (OP, OPEN_ACL, ConnectionClosed, WireClient, enc_check, enc_create, enc_delete, enc_multi,
                    enc_path, enc_set_acl)

NOTREADONLY = -119

# ZooKeeper 3.8 reads the switch only as a JVM flag, not from zoo.cfg, and without
# localSessionsEnabled answers a new read-only session with a bare NOTREADONLY header
# (docs/migrating-from-zookeeper.md): these are kipper's promises.
pytestmark = pytest.mark.kipper_only(reason="readonlymode.enabled from zoo.cfg, read-only sessions always local")

GRACE_S = 2.0   # ZooKeeper's grace period: max(2000 ms, tickTime); the ensemble's tick is 200 ms


def _isro(member):
    try:
        return four_letter_word(member.port, "isro", timeout=2.0)
    except OSError:
        return None


def _refused(member, read_only):
    """Does the member close a new connection at its ConnectRequest (no answer)?"""
    with WireClient(member.port, timeout=5.0) as c:
        try:
            c.connect(timeout_ms=4000, read_only=read_only)
        except ConnectionClosed:
            return True
        return False


@pytest.fixture
def ro_ensemble():
    e = Ensemble(3, extra={"readonlymode.enabled": "true"})
    try:
        e.start()
        yield e
    finally:
        e.close()


def test_survivor_serves_read_only_clients_then_hands_them_back(ro_ensemble):
    from kazoo.exceptions import NotReadOnlyCallError
    from kazoo.protocol.states import KeeperState

    ens = ro_ensemble
    writer = ens.client(all_hosts=True)
    writer.create("/ro/data", b"before", makepath=True)
    writer.create("/ro/gone", b"x")
    ens.wait_zxids_equal()
    survivor, others = ens.members[0], ens.members[1:]
    assert _isro(survivor) == "rw"

    for m in others:
        ens.stop(m)
    wait_until(lambda: _isro(survivor) == "ro", timeout=30.0, what="the survivor answering isro with ro")
    assert "Mode: read-only" in ens.srvr(survivor)
    assert _refused(survivor, read_only=False), "a client that did not allow read-only was served"

    connected_ro = threading.Event()
    client = ens.client(survivor, all_hosts=True, read_only=True, start_timeout=20.0)

    def on_state(_):
        if client.client_state == KeeperState.CONNECTED_RO:
            connected_ro.set()
    client.add_listener(on_state)
    on_state(None)
    assert connected_ro.wait(10.0), "the read-only client is %s" % client.client_state
    ro_session = client.client_id[0]

    assert client.get("/ro/data")[0] == b"before"
    assert sorted(client.get_children("/ro")) == ["data", "gone"]
    watched = threading.Event()
    client.get("/ro/data", watch=lambda ev: watched.set())
    assert "/ro/data" in four_letter_word(survivor.port, "wchp")

    with pytest.raises(NotReadOnlyCallError):
        client.create("/ro/new", b"x")
    with pytest.raises(NotReadOnlyCallError):
        client.set("/ro/data", b"after")
    with pytest.raises(NotReadOnlyCallError):
        client.delete("/ro/gone")
    with pytest.raises(NotReadOnlyCallError):
        client.sync("/ro")
    assert client.get("/ro/data")[0] == b"before", "a refused write changed the data"
    assert client.exists("/ro/gone") is not None

    cli = CliMt("127.0.0.1:%d" % survivor.port, read_only=True)   # the C client, ZOO_READONLY
    try:
        assert "before" in cli.run("get /ro/data")
        assert "rc = -119" in cli.run("create /ro/from-c x")
    finally:
        cli.close()

    for m in others:
        ens.start(m, wait=False)
    ens.wait_ready()
    wait_until(lambda: _isro(survivor) == "rw", timeout=30.0, what="the survivor answering isro with rw")

    def write_goes_through():
        try:
            client.set("/ro/data", b"after")
            return True
        except Exception:
            return False
    wait_until(write_goes_through, timeout=30.0, what="the read-only client's write after the quorum is back")
    assert client.client_state == KeeperState.CONNECTED
    assert client.client_id[0] != ro_session, "the read-only session was local and cannot survive"
    assert writer.get("/ro/data")[0] == b"after"


def test_zookeeper_prefixed_key_turns_it_on_too():
    """zoo.cfg's zookeeper.readonlymode.enabled (the system property ZooKeeper makes of a
    zoo.cfg key) works as readonlymode.enabled does; a read-only client is served."""
    ens = Ensemble(3, extra={"zookeeper.readonlymode.enabled": "true"})
    try:
        ens.start()
        survivor = ens.members[0]
        for m in ens.members[1:]:
            ens.stop(m)
        wait_until(lambda: _isro(survivor) == "ro", timeout=30.0, what="the survivor answering isro with ro")
        with WireClient(survivor.port, timeout=5.0) as c:
            s = c.connect(timeout_ms=4000, read_only=True)
            assert s.read_only is True and s.timeout > 0 and s.session_id != 0
            # every write type and sync, ReadOnlyRequestProcessor's list, is refused
            writes = {OP.CHECK: enc_check("/", 0), OP.MULTI: enc_multi([]), OP.SET_ACL: enc_set_acl("/", OPEN_ACL),
                      OP.SYNC: enc_path("/"), OP.CREATE: enc_create("/x"), OP.DELETE: enc_delete("/zookeeper")}
            for op, body in writes.items():
                assert c.err_of(op, body) == NOTREADONLY, "op %d was not refused" % op
            # a local session ends here: answered, then the connection closes
            assert c.close_session().err == 0
            c.wait_closed()
        with WireClient(survivor.port, timeout=5.0) as idle:
            # a local session that is not pinged expires here (the shortest timeout: 2 ticks)
            s2 = idle.connect(timeout_ms=1, read_only=True)
            assert s2.read_only is True and s2.timeout == 2 * ens.tick_time
            idle.wait_closed(timeout=10.0)
        with WireClient(survivor.port, timeout=5.0) as c:
            with pytest.raises(ConnectionClosed):   # gone, so not reopened
                c.connect(timeout_ms=4000, session_id=s.session_id, passwd=s.passwd, read_only=True)
    finally:
        ens.close()


def test_without_read_only_mode_the_survivor_serves_nobody():
    ens = Ensemble(3)
    try:
        ens.start()
        survivor, others = ens.members[0], ens.members[1:]
        for m in others:
            ens.stop(m)
        wait_until(lambda: ens.mode(survivor) is None, timeout=30.0, what="the survivor to lose its quorum")
        # Read-only mode would begin after the grace period: check well past it.
        until = time.monotonic() + GRACE_S + 1.5
        while time.monotonic() < until:
            assert _isro(survivor) == "null"
            assert _refused(survivor, read_only=True)
            assert _refused(survivor, read_only=False)
            time.sleep(0.25)   # sample the state a few times a second
    finally:
        ens.close()
