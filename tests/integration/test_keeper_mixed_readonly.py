"""Read-only mode in a mixed ensemble: kipper members 1 and 3, an Apache ZooKeeper 3.8 member 2,
all with readonlymode.enabled (for ZooKeeper the JVM flag -Dreadonlymode.enabled=true, which
is where it reads it) and localSessionsEnabled (ZooKeeper 3.8 serves new read-only sessions
only as local ones).

Data is written while all three serve. Then the two other members stop, once leaving a kipper
member and once a ZooKeeper member alone: the survivor answers `isro` with `ro` and `srvr` with
Mode: read-only; a kazoo read_only client connects to it (CONNECTED_RO), reads the data
written before, and gets NotReadOnlyCallError for create and set, which change nothing. When
the two return the ensemble forms again with the survivor in it, `isro` says `rw`, and the
same kazoo client's write succeeds (on a new session: its read-only one was local) and is
seen on every member.
"""
import threading

import pytest

import apache_zk
import conftest
from ensemble import Ensemble
from harness import four_letter_word, wait_until

pytestmark = [
    pytest.mark.kipper_only(reason="issue 14: kipper and Apache ZooKeeper in one ensemble"),
    pytest.mark.skipif(not apache_zk.available(), reason="Apache ZooKeeper 3.8 is not installed"),
]

KINDS = {1: "kipper", 2: "zookeeper", 3: "kipper"}


def _isro(member):
    try:
        return four_letter_word(member.port, "isro", timeout=2.0)
    except OSError:
        return None


@pytest.fixture(scope="module")
def mixed(request):
    e = Ensemble(3, targets=KINDS, extra={"readonlymode.enabled": "true", "localSessionsEnabled": "true"})
    for m in e.members:
        if m.kind == "zookeeper":
            m.jvm_flags.append("-Dreadonlymode.enabled=true")
    try:
        e.start()
        yield e
    finally:
        conftest.close_ensemble(e, request)


def _read_only_client(ens, survivor):
    from kazoo.protocol.states import KeeperState
    connected_ro = threading.Event()
    client = ens.client(survivor, all_hosts=True, read_only=True, start_timeout=20.0)

    def on_state(_):
        if client.client_state == KeeperState.CONNECTED_RO:
            connected_ro.set()
    client.add_listener(on_state)
    on_state(None)
    assert connected_ro.wait(10.0), "the read-only client is %s" % client.client_state
    return client


@pytest.mark.parametrize("kind", ["kipper", "zookeeper"])
def test_survivor_serves_reads_refuses_writes_and_rejoins(mixed, kind):
    from kazoo.exceptions import NotReadOnlyCallError
    from kazoo.protocol.states import KeeperState

    ens = mixed
    ens.heal()
    survivor = next(m for m in ens.members if m.kind == kind)
    others = [m for m in ens.members if m is not survivor]
    path = "/mixed-ro/" + kind
    ens.client(all_hosts=True).create(path, b"before", makepath=True)
    ens.wait_zxids_equal()
    ens.close_clients()
    assert _isro(survivor) == "rw"
    for m in others:
        ens.stop(m)
    wait_until(lambda: _isro(survivor) == "ro", timeout=30.0, what="the %s survivor answering isro with ro" % kind)
    assert "Mode: read-only" in ens.srvr(survivor)

    client = _read_only_client(ens, survivor)
    ro_session = client.client_id[0]
    assert client.get(path)[0] == b"before"
    assert kind in client.get_children("/mixed-ro")
    with pytest.raises(NotReadOnlyCallError):
        client.create(path + "/new", b"x")
    with pytest.raises(NotReadOnlyCallError):
        client.set(path, b"during")
    assert client.get(path)[0] == b"before"
    assert client.exists(path + "/new") is None

    for m in others:
        ens.start(m, wait=False)
    ens.wait_ready()
    wait_until(lambda: _isro(survivor) == "rw", timeout=30.0, what="the survivor answering isro with rw")
    value = b"after"

    def write_goes_through():
        try:
            client.set(path, value)
            return True
        except Exception:
            return False
    wait_until(write_goes_through, timeout=30.0, what="the read-only client's write once the quorum is back")
    assert client.client_state == KeeperState.CONNECTED
    assert client.client_id[0] != ro_session, "the read-only session was local and cannot survive"
    ens.wait_zxids_equal()
    for m in ens.members:
        reader = ens.client(m)
        assert reader.get(path)[0] == value, "member %d (%s)" % (m.sid, m.kind)
    ens.close_clients()
