"""Local sessions (localSessionsEnabled, localSessionsUpgradingEnabled; ZooKeeper 3.5's
ZOOKEEPER-1147) on a 3-member ensemble, on its leader and on a follower, and standalone.

- A new session is local to the member the client connects to: its id carries the member's
  id in the top byte, no transaction is logged anywhere (every member's zxid stays), `mntr`
  counts it in zk_local_sessions. Its reads and its persistent writes work (seen on every
  member); closing it is answered and costs no transaction either.
- Without upgrading, its ephemeral create is answered EPHEMERALONLOCALSESSION (-120) and
  creates nothing; a multi with one fails at that op (-120 on the leader; from a follower
  SESSIONEXPIRED, the leader not knowing the session), as ZooKeeper 3.8's do. A write's reply
  header carries its zxid, on a follower too.
- Those answers keep the order of the connection's requests (behind its writes in flight).
- Not pinged, it expires on its member (its connection closes, zk_local_sessions drops).
- Reopened on another member it is unknown there: the ConnectResponse says expired
  (timeout 0, session 0); reopened on its own member it is served.
- With upgrading, a kazoo client's ephemeral create succeeds: the session becomes global (a
  createSession transaction, then the create), the ephemeral belongs to the same session id on
  every member, and when the client's member stops the client moves to another member with its
  session and ephemeral, while a local-only kazoo session on the same member is lost
  (KazooState.LOST), as with ZooKeeper.
- Standalone, the keys work the same (ZooKeeper's standalone server ignores them).
"""
import threading

import pytest
from kazoo.protocol.states import KazooState

import conftest
from harness import four_letter_word, wait_until
from zkwire import ERR, MODE, OP, WireClient, dec_multi, enc_create, enc_multi, enc_set_data

LOCAL = {"localSessionsEnabled": "true"}
UPGRADE = {"localSessionsEnabled": "true", "localSessionsUpgradingEnabled": "true"}


def _mntr(port):
    return dict(line.split("\t", 1) for line in four_letter_word(port, "mntr").splitlines() if "\t" in line)


def _zxids(ens):
    return [ens.zxid(m) for m in ens.live()]


def _settled(ens):
    """Every member's zxid once they agree (ensemble.wait_zxids_equal, but 0 counts)."""
    ens.poll(lambda: len(set(_zxids(ens))) == 1 and None not in _zxids(ens), timeout=20,
             what="identical zxids")
    return _zxids(ens)


@pytest.fixture(scope="module")
def local_ensemble(request):
    yield from conftest.started_ensemble(request, 3, extra=LOCAL)


@pytest.fixture(scope="module")
def upgrade_ensemble(request):
    yield from conftest.started_ensemble(request, 3, extra=UPGRADE)


def _member(ens, role):
    return ens.leader() if role == "leader" else ens.followers()[0]


@pytest.mark.parametrize("role", ["leader", "follower"])
def test_local_session_costs_no_transaction(local_ensemble, role):
    ens = local_ensemble
    m = _member(ens, role)
    before = _zxids(ens)
    with WireClient(m.port) as c:
        s = c.connect(timeout_ms=6000)
        assert s.timeout > 0 and s.session_id >> 56 == m.sid
        assert int(_mntr(m.port)["zk_local_sessions"]) >= 1
        assert c.ping().err == 0
        assert _zxids(ens) == before   # no createSession anywhere
        c.call(OP.CLOSE_SESSION)
        c.wait_closed()
    assert _zxids(ens) == before       # nor a closeSession


@pytest.mark.parametrize("role", ["leader", "follower"])
def test_local_session_writes_but_no_ephemeral(local_ensemble, role):
    ens = local_ensemble
    m = _member(ens, role)
    path = "/local-%s" % role
    with WireClient(m.port) as c:
        c.connect(timeout_ms=6000)
        hdr, _ = c.call(OP.CREATE, enc_create(path, b"persistent"))
        assert hdr.zxid > 0 and _settled(ens)[0] == hdr.zxid   # the reply carries the write's zxid
        for other in ens.members:
            with WireClient(other.port) as r:
                r.connect(timeout_ms=6000)
                assert r.get(path)[0] == b"persistent"
        assert c.err_of(OP.CREATE2, enc_create(path + "/e", flags=MODE.EPHEMERAL)) == ERR.EPHEMERALONLOCALSESSION
        assert c.err_of(OP.CREATE, enc_create(path + "/s", flags=MODE.EPHEMERAL_SEQUENTIAL)) == \
            ERR.EPHEMERALONLOCALSESSION
        _settled(ens)
        assert c.children(path) == []   # neither created on any member (read here after every member agrees)


@pytest.mark.parametrize("role,err", [("leader", ERR.EPHEMERALONLOCALSESSION), ("follower", ERR.SESSIONEXPIRED)])
def test_local_session_multi_with_an_ephemeral_fails(local_ensemble, role, err):
    """A multi's results name the failing op: on the leader its own local session is refused,
    from a follower the leader does not know the session (ZooKeeper's validateCreateRequest)."""
    m = _member(local_ensemble, role)
    path = "/local-multi-%s" % role
    with WireClient(m.port) as c:
        c.connect(timeout_ms=6000)
        multi = enc_multi([(OP.CREATE, enc_create(path)), (OP.CREATE, enc_create(path + "/m", flags=MODE.EPHEMERAL))])
        hdr, body = c.call(OP.MULTI, multi, check=False)
        assert hdr.err == 0
        assert [(op, e) for op, e, _ in dec_multi(body)] == [(-1, 0), (-1, err)]
        assert c.exists(path) is None   # nothing of it applied


@pytest.mark.parametrize("role", ["leader", "follower"])
def test_local_answers_keep_the_order_of_requests(local_ensemble, role):
    """A refused ephemeral and a local close sent right behind writes are answered after them."""
    m = _member(local_ensemble, role)
    path = "/order-%s" % role
    with WireClient(m.port) as c:
        c.connect(timeout_ms=6000)
        xids = [c.send(OP.CREATE, enc_create(path)),
                c.send(OP.CREATE, enc_create(path + "/e", flags=MODE.EPHEMERAL)),
                c.send(OP.SET_DATA, enc_set_data(path, b"after")),
                c.send(OP.CLOSE_SESSION)]
        errs = [c.read_reply(x)[0].err for x in xids]   # read_reply fails on a reply out of order
        assert errs == [0, ERR.EPHEMERALONLOCALSESSION, 0, 0]
        c.wait_closed()
    with WireClient(m.port) as r:
        r.connect(timeout_ms=6000)
        assert r.get(path)[0] == b"after"


def test_local_session_expires_on_its_member(local_ensemble):
    m = local_ensemble.followers()[0]
    with WireClient(m.port) as c:
        s = c.connect(timeout_ms=400)   # the shortest: 2 ticks; never pinged
        wait_until(lambda: c.is_closed(0.1), timeout=10, what="the local session's connection closed")
    local_ensemble.poll(lambda: _mntr(m.port)["zk_local_sessions"] == "0", timeout=10, what="no local session left")
    with WireClient(m.port) as again:
        r = again.connect(timeout_ms=6000, session_id=s.session_id, passwd=s.passwd)
        assert (r.timeout, r.session_id) == (0, 0)


def test_local_session_is_unknown_on_another_member(local_ensemble):
    ens = local_ensemble
    home = ens.followers()[0]
    with WireClient(home.port) as c:
        s = c.connect(timeout_ms=6000)
        for other in ens.members:
            if other is home:
                continue
            with WireClient(other.port) as moved:
                r = moved.connect(timeout_ms=6000, session_id=s.session_id, passwd=s.passwd)
                assert (r.timeout, r.session_id) == (0, 0), "member %d took a local session of %d" % (
                    other.sid, home.sid)
        with WireClient(home.port) as again:   # its own member knows it (and takes it over)
            r = again.connect(timeout_ms=6000, session_id=s.session_id, passwd=s.passwd)
            assert r.session_id == s.session_id and r.timeout > 0
            assert again.ping().err == 0


def test_upgraded_session_keeps_its_ephemeral_and_moves(upgrade_ensemble):
    ens = upgrade_ensemble
    home = ens.followers()[0]
    others = [m for m in ens.members if m is not home]
    upgraded = ens.client(home, all_hosts=True, timeout=8.0)
    local_only = ens.client(home, all_hosts=True, timeout=8.0)
    lost = threading.Event()
    local_only.add_listener(lambda state: state == KazooState.LOST and lost.set())
    sid = upgraded.client_id[0]
    assert sid >> 56 == home.sid
    upgraded.create("/upgraded", b"")
    before = _settled(ens)[0]
    upgraded.create("/upgraded/e", b"mine", ephemeral=True)
    assert _settled(ens)[0] - before == 2   # the upgrade's createSession, then the create
    for m in ens.members:
        with WireClient(m.port) as r:
            r.connect(timeout_ms=6000)
            assert r.exists("/upgraded/e").ephemeralOwner == sid
    ens.stop(home)
    try:
        wait_until(lambda: upgraded.connected and upgraded.client_id[0] == sid, timeout=20,
                   what="the upgraded session reconnected on another member")
        assert upgraded.get("/upgraded/e")[0] == b"mine"
        assert lost.wait(20), "the local-only session survived its member"
    finally:
        ens.start(home)
    upgraded.stop()
    upgraded.close()
    ens.poll(lambda: all(ens.mntr(m).get("zk_ephemerals_count") == "0" for m in others), timeout=20,
             what="the ephemeral removed with its session")


@pytest.mark.kipper_only(reason="ZooKeeper's standalone server ignores localSessionsEnabled")
def test_standalone_local_sessions(make_keeper):
    off = make_keeper(extra=LOCAL)
    with WireClient(off.port) as c:
        z = int(_mntr(off.port)["zk_znode_count"])
        c.connect(timeout_ms=4000)
        assert _mntr(off.port)["zk_local_sessions"] == "1"
        assert c.err_of(OP.CREATE2, enc_create("/e", flags=MODE.EPHEMERAL)) == ERR.EPHEMERALONLOCALSESSION
        assert int(_mntr(off.port)["zk_znode_count"]) == z
    on = make_keeper(extra=UPGRADE)
    with WireClient(on.port) as c:
        s = c.connect(timeout_ms=4000)
        c.create("/e", flags=MODE.EPHEMERAL)
        m = _mntr(on.port)
        assert (m["zk_local_sessions"], m["zk_global_sessions"]) == ("0", "1")
        assert c.exists("/e").ephemeralOwner == s.session_id
        c.call(OP.CLOSE_SESSION)
        c.wait_closed()
    with WireClient(on.port) as r:
        r.connect(timeout_ms=4000)
        assert r.exists("/e") is None
