"""Dynamic reconfiguration (issue 14): `reconfigEnabled`, the reconfig request, /zookeeper/config,
zoo.cfg.dynamic.<version> files, as Apache ZooKeeper 3.8 does them.

The expected behaviour was read off ZooKeeper 3.8 (tests/integration/zk_reconfig_facts.py prints
it): every test but the mixed ones runs against KIPPER_TEST_TARGET (kipper by default, or
zookeeper). Members have reconfigEnabled=true and the super digest of kazoo's harness
(super:test), their zoo.cfg names each member `server.N=host:quorum:election:participant;host:client`.

- /zookeeper/config: the members' lines and `version=<hex>`, its Stat (mzxid = version, version and
  aversion -1), read-only to clients; every member's zoo.cfg rewritten to `dynamicConfigFile=` a
  zoo.cfg.dynamic.<version> file (its server and clientPort lines moved there), the original kept as
  zoo.cfg.bak;
- errors: no auth (NOAUTH), bad strings (BADARGUMENTS; MARSHALLINGERROR where ZooKeeper fails parsing
  a number), a stale from_config (BADVERSION), a new configuration whose synced voters are no
  quorum (NEWCONFIGNOQUORUM), a second reconfig while one is pending (RECONFIGINPROGRESS),
  reconfigEnabled=false (RECONFIGDISABLED, on an ensemble and standalone);
- an observer that is not running added and removed (kazoo's own test); a 4th participant started
  with the current members and itself in its zoo.cfg, added and removed under a writer counting
  acknowledged creates (none lost, only connection moves seen); the leader removed (another member
  leads, the old one stays as a non-voting follower) and added back; a restart of every member
  keeps the membership (they start on their rewritten zoo.cfg);
- zkCli's `config` and `reconfig -add/-remove/-members`;
- mixed (kipper only, needs ZooKeeper): a kipper leader with ZooKeeper followers applying a
  reconfig, and a ZooKeeper leader with kipper followers.
"""
import os
import re
import time

import pytest

import apache_zk
import conftest
import ensemble as ensmod
import zk_clients
from ensemble import Ensemble
from harness import four_letter_word, free_port, wait_until
from test_keeper_mixed import Writers
from zkwire import ERR, OP, WireClient, Writer

from kazoo import exceptions as ke

RECONFIGDISABLED = -123
NEWCONFIGNOQUORUM = -13
RECONFIGINPROGRESS = -14


# ---- helpers ---------------------------------------------------------------------------


def parse_config(data):
    """/zookeeper/config's text -> ({sid: server line value}, version int)."""
    text = data.decode() if isinstance(data, bytes) else data
    lines, version = {}, None
    for line in text.split("\n"):
        m = re.fullmatch(r"server\.(\d+)=(.*)", line)
        if m:
            lines[int(m.group(1))] = m.group(2)
        elif line.startswith("version="):
            version = int(line.split("=", 1)[1], 16)
        else:
            raise AssertionError("unexpected line %r in %r" % (line, text))
    return lines, version


def expected_lines(e):
    return {m.sid: m.server_line() for m in e.in_config()}


def check_config_bytes(data, stat, e):
    """data/stat of /zookeeper/config (or a reconfig's answer) as ZooKeeper 3.8 makes them."""
    lines, version = parse_config(data)
    assert lines == expected_lines(e)
    want = "\n".join("server.%d=%s" % (sid, lines[sid]) for sid in sorted(lines))
    want += "\nversion=%x" % version
    assert data == want.encode(), "ids below 8 come in ascending order, no trailing newline"
    assert stat.mzxid == version
    assert (stat.czxid, stat.ctime, stat.version, stat.cversion, stat.aversion, stat.ephemeralOwner,
            stat.numChildren, stat.pzxid) == (0, 0, -1, 0, -1, 0, 0, 0), stat
    assert stat.dataLength == len(data)
    return version


def reconfig(client, joining=None, leaving=None, new_members=None, from_config=-1, timeout=15):
    """kazoo's client.reconfig, bounded: kazoo 2.8 never returns from a call answered with an
    error code it does not know (-123), so a server answering RECONFIGDISABLED fails the test
    instead of hanging it."""
    return client.reconfig_async(joining, leaving, new_members, from_config).get(timeout=timeout)


def reconfig_raw(member, joining=None, leaving=None, new_members=None, from_config=-1, auth=True):
    """A reconfig through the raw client (kazoo 2.8 cannot map -123); returns (err, body)."""
    with WireClient(member.port, host=member.placement.host) as c:
        c.connect()
        if auth:
            c.add_auth("digest", b"super:test")
        body = Writer().string(joining).string(leaving).string(new_members).long(from_config).bytes()
        hdr, rest = c.call(OP.RECONFIG, body, check=False)
        return hdr.err, rest


def wait_files(e, member, version):
    """Wait until member's zoo.cfg points at zoo.cfg.dynamic.<version> and check the files."""
    name = "zoo.cfg.dynamic.%x" % version

    def points():
        f = member.config_files()
        return (name in f and "zoo.cfg.dynamic.next" not in f
                and ("dynamicConfigFile=%s\n" % os.path.join(member.workdir, name)) in f["zoo.cfg"])
    e.poll(points, timeout=20, what=lambda: "member %d's zoo.cfg naming %s: %s"
           % (member.sid, name, member.config_files()))
    files = member.config_files()
    cfg = files["zoo.cfg"]
    assert not re.search(r"^(server\.\d+|clientPort|clientPortAddress)=", cfg, re.M), cfg
    assert cfg.endswith("\n")
    return files


def check_dynamic_file(files, version, lines):
    """zoo.cfg.dynamic.<version>: the server lines sorted by id, no version line, no trailing newline."""
    text = files["zoo.cfg.dynamic.%x" % version]
    assert text == "\n".join("server.%d=%s" % (sid, lines[sid]) for sid in sorted(lines)), text


def get_config(e, member=None):
    c = e.client(member or e.leader())
    c.sync("/zookeeper/config")
    return c.get("/zookeeper/config")


def free_ports(n):
    return [free_port() for _ in range(n)]


def dead_line(role="participant"):
    """A server line whose ports nobody listens on (connects are refused at once)."""
    q, el, cp = free_ports(3)
    return "127.0.0.1:%d:%d:%s;127.0.0.1:%d" % (q, el, role, cp)


# ---- the shared ensemble ----------------------------------------------------------------


@pytest.fixture(scope="module")
def ensemble(request):
    yield from conftest.started_ensemble(request, 3, reconfig_enabled=True)


@pytest.fixture
def ens(ensemble):
    """Before each test: the configuration's members running, one leader; afterwards the
    members a test added and removed again are stopped."""
    ensemble.heal()
    ensemble.close_clients()
    try:
        yield ensemble
    finally:
        ensemble.close_clients()
        for m in ensemble.members:
            if m.sid not in ensemble.config_ids and m.running():
                ensemble.stop(m)


def test_config_node_and_files(ens):
    leader = ens.leader()
    c = ens.client(leader)
    data, stat = c.get("/zookeeper/config")
    version = check_config_bytes(data, stat, ens)
    assert version >> 32 >= 1, "the first leader's epoch names the first dynamic configuration"
    assert sorted(c.get_children("/zookeeper")) == ["config", "quota"]
    acl, _ = c.get_acls("/zookeeper/config")
    assert [(a.perms, a.id.scheme, a.id.id) for a in acl] == [(1, "world", "anyone")]
    with pytest.raises(ke.NoAuthError):
        c.set("/zookeeper/config", b"server.1=x")
    for m in ens.in_config():
        other = ens.client(m)
        other.sync("/zookeeper/config")
        d2, s2 = other.get("/zookeeper/config")
        assert d2 == data and s2.mzxid == stat.mzxid, "member %d" % m.sid
        files = wait_files(ens, m, version)
        check_dynamic_file(files, version, expected_lines(ens))
        bak = files["zoo.cfg.bak"]
        assert re.search(r"^server\.%d=%s$" % (m.sid, re.escape(m.server_line())), bak, re.M), bak
        kept = {l for l in bak.splitlines() if l and not re.match(r"(server\.\d+|clientPort|clientPortAddress)=", l)}
        now = set(files["zoo.cfg"].splitlines())
        assert now == kept | {"dynamicConfigFile=%s" % os.path.join(m.workdir, "zoo.cfg.dynamic.%x" % version)}


def test_conf_lists_membership(ens):
    """`conf` on a member of an ensemble ends with its quorum settings and its membership:
    `membership: ` and the text of /zookeeper/config (no newline after it)."""
    data, _ = get_config(ens)
    for m in ens.in_config():
        out = four_letter_word(m.port, "conf", host=m.placement.host)
        tail = ("\nserverId=%d\ninitLimit=%d\nsyncLimit=%d\nelectionAlg=3\nelectionPort=%d\nquorumPort=%d\n"
                "peerType=%d\nmembership: \n%s" % (m.sid, ens.init_limit, ens.sync_limit, m.election_port,
                                                    m.quorum_port, 1 if m.sid in ens.observers else 0,
                                                    data.decode()))
        assert out.endswith(tail), "member %d: %r" % (m.sid, out[-400:])


def test_no_auth(ens):
    c = ens.client(ens.leader())
    before = c.get("/zookeeper/config")[0]
    with pytest.raises(ke.NoAuthError):
        reconfig(c, joining="server.6=" + dead_line("observer"), leaving=None, new_members=None)
    # a digest that is not the super user's is no better
    c.add_auth("digest", "someone:else")
    with pytest.raises(ke.NoAuthError):
        reconfig(c, joining=None, leaving="3", new_members=None)
    assert get_config(ens)[0] == before


@pytest.mark.parametrize("joining,leaving,err", [
    ("some thing", None, ERR.BADARGUMENTS),                       # kazoo's test_bad_input
    ("server.6=127.0.0.1", None, ERR.BADARGUMENTS),
    ("server.6=127.0.0.1:1:2:bogus", None, ERR.BADARGUMENTS),
    ("server.6=127.0.0.1:1:2;", None, ERR.BADARGUMENTS),
    ("server.6=127.0.0.1:1:2;abc", None, ERR.BADARGUMENTS),
    # ZooKeeper fails parsing the id as a number inside its request processor and answers
    # MARSHALLINGERROR: the request has no effect either way.
    ("server.x=127.0.0.1:1:2", None, ERR.MARSHALLINGERROR),
    (None, "abc", ERR.MARSHALLINGERROR),
])
def test_bad_input(ens, joining, leaving, err):
    """The same answer with or without the super user: the strings are checked before the caller."""
    before = parse_config(get_config(ens)[0])[0]
    for member in (ens.leader(), ens.followers()[0]):
        for auth in (True, False):
            got, _ = reconfig_raw(member, joining=joining, leaving=leaving, auth=auth)
            assert got == err, (member, auth)
    assert parse_config(get_config(ens)[0])[0] == before


def test_order_of_checks(ens):
    """ZooKeeper checks from_config, then the strings, then the new quorum, and the caller's
    right last: an unauthenticated client learns of a stale version or a dead quorum."""
    data, _ = get_config(ens)
    version = parse_config(data)[1]
    dead = ",".join("server.%d=%s" % (sid, dead_line()) for sid in (5, 6, 7))
    leader = ens.leader()
    for auth in (False, True):
        assert reconfig_raw(leader, joining="some thing", from_config=version + 5, auth=auth)[0] == ERR.BADVERSION
        assert reconfig_raw(leader, joining=dead, from_config=version + 5, auth=auth)[0] == ERR.BADVERSION
        assert reconfig_raw(leader, joining=dead, auth=auth)[0] == NEWCONFIGNOQUORUM
    assert reconfig_raw(leader, leaving="6", auth=False)[0] == ERR.NOAUTH
    # the answer to a good one: GetDataResponse, the new text and /zookeeper/config's Stat
    err, body = reconfig_raw(leader, leaving="6")
    assert err == 0
    n = int.from_bytes(body[:4], "big", signed=True)
    text = body[4:4 + n]
    assert parse_config(text)[0] == expected_lines(ens) and len(body) == 4 + n + 68
    assert get_config(ens)[0] == text


@pytest.mark.kipper_only(reason="kipper's bound on server ids; ZooKeeper takes any long")
def test_server_id_bound_comes_after_the_callers_right(ens):
    """kipper refuses a member it could not restart with (ids 1 to 255), but only after all of
    ZooKeeper's checks: without the right, the answer is ZooKeeper's (kazoo's test_no_super_auth
    joins server.999)."""
    before = get_config(ens)[0]
    joining = "server.999=" + dead_line("observer")
    assert reconfig_raw(ens.leader(), joining=joining, auth=False)[0] == ERR.NOAUTH
    assert reconfig_raw(ens.leader(), joining=joining, auth=True)[0] == ERR.BADARGUMENTS
    assert get_config(ens)[0] == before


def test_bad_input_kazoo(ens):
    """kazoo's TestReconfig.test_bad_input, with the super user (the error is the string's)."""
    c = ens.super_client(ens.leader())
    with pytest.raises(ke.BadArgumentsError):
        reconfig(c, joining="some thing", leaving=None, new_members=None)


def test_stale_from_config(ens):
    c = ens.super_client(ens.leader())
    data, stat = c.get("/zookeeper/config")
    _, version = parse_config(data)
    for wrong in (version + 1, version - 1):
        with pytest.raises(ke.BadVersionError):
            reconfig(c, joining=None, leaving="6", new_members=None, from_config=wrong)
    assert c.get("/zookeeper/config")[0] == data
    # the right one goes through
    d2, s2 = reconfig(c, joining=None, leaving="6", new_members=None, from_config=version)
    assert parse_config(d2)[1] > version


def test_empty_reconfig_is_a_new_version(ens):
    """No change (nothing named, or a leaving id that is no member) still commits a new version."""
    c = ens.super_client(ens.leader())
    data, stat = c.get("/zookeeper/config")
    lines, version = parse_config(data)
    d1, s1 = reconfig(c, joining=None, leaving=None, new_members=None)
    v1 = check_config_bytes(d1, s1, ens)
    d2, s2 = reconfig(c, joining=None, leaving="6", new_members=None)
    v2 = check_config_bytes(d2, s2, ens)
    assert version < v1 < v2
    for m in ens.in_config():
        check_dynamic_file(wait_files(ens, m, v2), v2, lines)


def test_new_config_without_quorum(ens):
    """Three participants that do not run, added to three: 6 voters, 3 synced, no quorum (and a
    new configuration of one member and two that do not run)."""
    c = ens.super_client(ens.leader())
    before = c.get("/zookeeper/config")[0]
    joining = ",".join("server.%d=%s" % (sid, dead_line()) for sid in (5, 6, 7))
    with pytest.raises(ke.NewConfigNoQuorumError):
        reconfig(c, joining=joining, leaving=None, new_members=None)
    # non-incremental: one member and two that do not run
    keep = min(m.sid for m in ens.in_config())
    members = "server.%d=%s,server.6=%s,server.7=%s" % (keep, ens.member(keep).server_line(), dead_line(),
                                                         dead_line())
    with pytest.raises(ke.NewConfigNoQuorumError):
        reconfig(c, joining=None, leaving=None, new_members=members)
    assert get_config(ens)[0] == before
    # one participant that does not run, added to three, is allowed: 3 of 4 synced is a quorum
    data, _ = reconfig(c, joining="server.6=" + dead_line(), leaving=None, new_members=None)
    assert set(parse_config(data)[0]) == set(ens.config_ids) | {6}
    data, _ = reconfig(c, joining=None, leaving="6", new_members=None)
    assert parse_config(data)[0] == expected_lines(ens)


def test_reconfig_in_progress(ens):
    """A second reconfig while the first is proposed and not yet committed."""
    c = ens.super_client(ens.leader())
    first = c.reconfig_async(joining=None, leaving="6", new_members=None, from_config=-1)
    second = c.reconfig_async(joining=None, leaving="7", new_members=None, from_config=-1)
    data, _ = first.get(timeout=20)
    with pytest.raises(ke.ReconfigInProcessError):
        second.get(timeout=20)
    assert parse_config(data)[0] == expected_lines(ens)


def test_add_remove_observer(ens):
    """kazoo's TestReconfig.test_add_remove_observer: an observer nobody runs can be added (it
    counts in no quorum) and removed; a from_config in the future is refused."""
    c = ens.super_client(ens.followers()[0])
    joining = "server.6=" + dead_line("observer")
    data, stat = reconfig(c, joining=joining, leaving=None, new_members=None)
    assert joining.encode() in data
    lines, v1 = parse_config(data)
    assert stat.mzxid == v1 and 6 in lines
    for m in ens.in_config():
        other = ens.client(m)
        other.sync("/zookeeper/config")
        assert other.get("/zookeeper/config")[0] == data, "member %d" % m.sid
        check_dynamic_file(wait_files(ens, m, v1), v1, lines)
    data, _ = reconfig(c, joining=None, leaving="6", new_members=None)
    assert joining.encode() not in data
    assert parse_config(data)[0] == expected_lines(ens)
    curver = parse_config(data)[1]
    with pytest.raises(ke.BadVersionError):
        reconfig(c, joining=joining, leaving=None, new_members=None, from_config=curver + 1)
    # the old files stay, the newest is the one in use
    for m in ens.in_config():
        files = wait_files(ens, m, curver)
        assert "zoo.cfg.dynamic.%x" % v1 in files


def test_running_observer_added_promoted_removed(ens):
    """A running observer (peerType=observer, its own line :observer) joins by reconfig and
    serves; joining its id again as a participant makes it vote (a 4th voter: quorum 3); then
    it is removed."""
    admin = ens.super_client(ens.leader())
    base = "/rc-observer-%d" % int(time.time() * 1000)
    admin.create(base)
    obs = ens.add_member(observer=True)
    data, stat = reconfig(admin, joining=ens.joining(obs), leaving=None, new_members=None)
    ens.mark_config(data.decode())
    assert obs.sid in ens.observers and ens.quorum() == 2
    check_config_bytes(data, stat, ens)
    ens.wait_ready()
    assert ens.mode(obs) == "observer"
    c = ens.client(obs)
    c.create(base + "/via-observer")
    admin.sync(base)
    assert admin.exists(base + "/via-observer")
    ens.observers.discard(obs.sid)            # its line now says participant
    data, stat = reconfig(admin, joining=ens.joining(obs), leaving=None, new_members=None)
    ens.mark_config(data.decode())
    assert obs.sid not in ens.observers and ens.quorum() == 3
    version = check_config_bytes(data, stat, ens)
    ens.wait_ready()
    assert ens.mode(obs) == "follower"
    for m in ens.in_config():
        check_dynamic_file(wait_files(ens, m, version), version, expected_lines(ens))
    c = ens.client(obs)
    c.create(base + "/via-participant")
    data, stat = reconfig(admin, joining=None, leaving=str(obs.sid), new_members=None)
    ens.mark_config(data.decode())
    assert ens.quorum() == 2
    ens.wait_ready()
    admin.sync(base)
    assert sorted(admin.get_children(base)) == ["via-observer", "via-participant"]


def _check_members_hold(e, base, acked):
    e.wait_zxids_equal(members=e.live(), timeout=30)
    for m in e.live():
        c = e.client(m)
        c.sync(base)
        lost = acked - set(c.get_children(base))
        assert not lost, "member %d (%s) lost %d acknowledged creates, e.g. %s" % (
            m.sid, m.kind, len(lost), sorted(lost)[:5])


def _grows(w, by):
    n0 = w.count()
    wait_until(lambda: w.count() >= n0 + by, timeout=30, what="%d more acknowledged creates" % by)


def _connection_moves_only(errors):
    bad = [x for x in errors if not x.startswith(("ConnectionLoss", "SessionMovedError"))]
    assert not bad, "the writer saw errors other than connection moves: %s" % bad[:5]


def test_add_and_remove_participant_under_load(ens):
    base = "/rc-load-%d" % int(time.time() * 1000)
    admin = ens.super_client(ens.followers()[0])
    admin.create(base)
    writer = Writers([ens.client(ens.followers()[-1], all_hosts=True)], base, batch=20).start()
    try:
        _grows(writer, 100)
        m4 = ens.add_member()          # zoo.cfg: the three members and itself
        data, stat = reconfig(admin, joining=ens.joining(m4), leaving=None, new_members=None)
        ens.mark_config(data.decode())
        assert ens.config_ids == {1, 2, 3, m4.sid}
        version = check_config_bytes(data, stat, ens)
        ens.wait_ready()
        assert ens.quorum() == 3
        _grows(writer, 100)
        # member 4 serves: a client on it alone reads what the writer wrote
        c4 = ens.client(m4)
        c4.sync(base)
        assert len(c4.get_children(base)) >= 100
        for m in ens.in_config():
            check_dynamic_file(wait_files(ens, m, version), version, expected_lines(ens))
        data, stat = reconfig(admin, joining=None, leaving=str(m4.sid), new_members=None)
        ens.mark_config(data.decode())
        assert ens.config_ids == {1, 2, 3}
        version = check_config_bytes(data, stat, ens)
        ens.wait_ready()
        _grows(writer, 100)
    finally:
        writer.stop()
    _connection_moves_only(writer.errors)
    _check_members_hold(ens, base, writer.acked)
    for m in ens.in_config():
        check_dynamic_file(wait_files(ens, m, version), version, expected_lines(ens))
    # the removed member runs on as a follower that does not vote, and still learns the commits
    assert ens.mode(m4) == "follower"
    admin.create(base + "-after")
    c4 = ens.client(m4)
    c4.sync(base + "-after")
    assert c4.exists(base + "-after")
    check_dynamic_file(wait_files(ens, m4, version), version, expected_lines(ens))


def test_remove_and_readd_leader(ens):
    old = ens.leader()
    members = set(ens.config_ids)
    others = [m for m in ens.in_config() if m is not old]
    admin = ens.super_client(old, all_hosts=True)
    base = "/rc-leader-%d" % int(time.time() * 1000)
    admin.create(base)
    try:
        data, stat = reconfig(admin, joining=None, leaving=str(old.sid), new_members=None)
    except ke.ConnectionLoss:
        # the leader gives up leading once the reconfig commits; the answer can be lost with
        # the connection (a client of a follower loses it for certain): read the outcome.
        def removed():
            d = ens.client(others[0]).get("/zookeeper/config")[0]
            return d if old.sid not in parse_config(d)[0] else None
        data = ens.poll(removed, timeout=30, what="the configuration without member %d" % old.sid)
    ens.mark_config(data.decode())
    assert old.sid not in parse_config(data)[0]
    new = ens.wait_ready()
    assert new is not old and new in others
    admin.create(base + "/after-removal")
    # the removed leader keeps running as a follower that does not vote
    ens.poll(lambda: ens.mode(old) == "follower", timeout=30, what="the old leader to follow")
    # and comes back
    data, stat = reconfig(admin, joining=ens.joining(old), leaving=None, new_members=None)
    ens.mark_config(data.decode())
    assert ens.config_ids == members
    ens.wait_ready()
    c = ens.client(old)
    c.create(base + "/through-old-leader")
    c.sync(base)
    assert sorted(c.get_children(base)) == ["after-removal", "through-old-leader"]


def test_restart_keeps_membership(ens):
    """Every member stopped and started again on the zoo.cfg it rewrote: same configuration."""
    admin = ens.super_client(ens.leader())
    joining = "server.6=" + dead_line("observer")
    data, stat = reconfig(admin, joining=joining, leaving=None, new_members=None)
    ens.mark_config(data.decode())
    lines, version = parse_config(data)
    for m in ens.in_config():
        wait_files(ens, m, version)
    ens.close_clients()
    for m in ens.in_config():
        ens.stop(m)
    ens.start()
    for m in ens.in_config():
        c = ens.client(m)
        c.sync("/zookeeper/config")
        d, s = c.get("/zookeeper/config")
        assert d == data and s.mzxid == version, "member %d" % m.sid
        files = wait_files(ens, m, version)
        check_dynamic_file(files, version, lines)
    data, _ = reconfig(ens.super_client(ens.leader()), joining=None, leaving="6", new_members=None)
    ens.mark_config(data.decode())


def test_removed_member_refuses_to_restart(ens):
    """A removed member started again on the zoo.cfg its removal rewrote (its own line gone)
    exits with an error naming its id, as ZooKeeper 3.8 does ("My id N not in the peer list"):
    it is no member any more; to serve again it is added back with a zoo.cfg listing itself."""
    m4 = ens.add_member()
    data, _ = reconfig(ens.super_client(ens.leader()), joining=ens.joining(m4), leaving=None, new_members=None)
    ens.mark_config(data.decode())
    ens.wait_ready()
    data, _ = reconfig(ens.super_client(ens.leader()), joining=None, leaving=str(m4.sid), new_members=None)
    ens.mark_config(data.decode())
    lines, version = parse_config(data)
    wait_files(ens, m4, version)
    ens.stop(m4)
    since = m4.server_log_size()
    m4.launch()
    wait_until(lambda: not m4.running(), timeout=60, what="the removed member to exit")
    assert m4.stop() not in (0, None)           # reaped: the exit is the one expected
    log = m4.server_log(since)
    assert ("id %d has no server.%d line" % (m4.sid, m4.sid) in log
            or "My id %d not in the peer list" % m4.sid in log), log[-3000:]


@pytest.mark.skipif(not zk_clients.zkcli_available(), reason="zkCli.sh not installed")
def test_zkcli_reconfig_and_config(ens):
    hosts = ens.hosts(first=ens.leader())
    before, _ = parse_config(get_config(ens)[0])
    obs = dead_line("observer")
    members = ",".join("server.%d=%s" % (sid, line) for sid, line in sorted(before.items()))
    rc, out, _, raw = zk_clients.run_zkcli(hosts, [
        "config",
        "addauth digest super:test",
        "reconfig -add server.6=" + obs,
        "reconfig -remove 6",
        "reconfig -members " + members,
        "config",
    ])
    assert rc == 0, raw
    text = "\n".join(out)
    assert "Committed new configuration:" in text, raw
    blocks = re.findall(r"((?:server\.\d+=\S+\n)+version=[0-9a-f]+)", text + "\n")
    # config, -add, -remove, -members, config
    assert len(blocks) == 5, raw
    added = parse_config(blocks[1])[0]
    assert added.get(6) == obs and {k: v for k, v in added.items() if k != 6} == before
    for b in (blocks[0], blocks[2], blocks[3], blocks[4]):
        assert parse_config(b)[0] == before
    versions = [parse_config(b)[1] for b in blocks]
    assert versions[0] < versions[1] < versions[2] < versions[3] == versions[4]


# ---- reconfigEnabled=false ------------------------------------------------------------


def test_reconfig_disabled_ensemble(request):
    """Without reconfigEnabled even the super user gets RECONFIGDISABLED; /zookeeper/config
    shows the static lines (no client part where zoo.cfg's lines had none), version 0."""
    e = Ensemble(3)
    try:
        e.start()
        err, _ = reconfig_raw(e.leader(), leaving="3")
        assert err == RECONFIGDISABLED
        err, _ = reconfig_raw(e.followers()[0], joining="server.6=" + dead_line("observer"))
        assert err == RECONFIGDISABLED
        data, stat = e.client(e.leader()).get("/zookeeper/config")
        want = "\n".join("server.%d=%s:participant" % (m.sid, m.server_line()) for m in e.members)
        assert data == (want + "\nversion=0").encode()
        assert (stat.mzxid, stat.version, stat.aversion) == (0, -1, -1)
        for m in e.members:
            assert sorted(m.config_files()) == ["zoo.cfg"]
    finally:
        conftest.close_ensemble(e, request)


def test_reconfig_standalone(make_keeper):
    """A standalone server answers RECONFIGDISABLED without reconfigEnabled and UNIMPLEMENTED
    with it (ZooKeeper 3.8: reconfig is not supported in standalone mode), super user or not."""
    for extra, want in (({}, RECONFIGDISABLED),
                        ({"reconfigEnabled": "true", "DigestAuthenticationProvider.superDigest": ensmod.SUPER_DIGEST},
                         ERR.UNIMPLEMENTED)):
        k = make_keeper(extra=extra)
        for auth in (False, True):
            with WireClient(k.port) as c:
                c.connect()
                if auth:
                    c.add_auth("digest", b"super:test")
                body = Writer().string(None).string("1").string(None).long(-1).bytes()
                assert c.call(OP.RECONFIG, body, check=False)[0].err == want, (extra, auth)


# ---- mixed ensembles --------------------------------------------------------------------


def _mixed(request, targets):
    if not apache_zk.available():
        pytest.skip("Apache ZooKeeper not installed")
    e = Ensemble(3, targets=targets, reconfig_enabled=True)
    try:
        # member 3 first: both kinds' elections then pick it (the largest id, all zxids 0),
        # where kipper members, up long before a JVM, would elect one of themselves
        e.start(e.member(3), wait=False)
        e.start()
        # ZooKeeper's first notifications may go out before the kipper members listen, and
        # they then elect among themselves; stopping their leader hands it to member 3 (all
        # synced, so the largest id wins), which both kinds' elections must then agree on
        for _ in range(3):
            leader = e.wait_ready()
            if leader.sid == 3:
                break
            e.stop(leader)
            e.wait_ready()
            e.start(leader)
        yield e
    finally:
        conftest.close_ensemble(e, request)


@pytest.fixture(params=[("zookeeper", "zookeeper", "kipper"), ("kipper", "kipper", "zookeeper")],
                ids=["kipper-leads", "zookeeper-leads"])
def mixed(request):
    yield from _mixed(request, list(request.param))


@pytest.mark.kipper_only(reason="issue 14: kipper and ZooKeeper members in one ensemble")
def test_mixed_reconfig(mixed):
    """Member 3 (the one of the other kind) leads; a 4th participant of the followers' kind is
    added under a writer and removed, then an observer nobody runs; every member's
    /zookeeper/config and files agree, nothing acknowledged is lost. Then the leader is removed:
    a follower (the other kind) leads, the old leader follows it without a vote and is added back."""
    e = mixed
    leader = e.wait_ready()
    assert leader.sid == 3, "member 3 started first and should lead"
    follower_kind = e.member(1).kind
    assert leader.kind != follower_kind
    base = "/rc-mixed-%d" % int(time.time() * 1000)
    admin = e.super_client(e.member(1))
    admin.create(base)
    writer = Writers([e.client(e.member(2), all_hosts=True)], base, batch=20).start()
    try:
        _grows(writer, 100)
        m4 = e.add_member(kind=follower_kind)
        data, stat = reconfig(admin, joining=e.joining(m4), leaving=None, new_members=None)
        e.mark_config(data.decode())
        version = check_config_bytes(data, stat, e)
        e.wait_ready()
        _grows(writer, 100)
        for m in e.in_config():
            c = e.client(m)
            c.sync("/zookeeper/config")
            d, s = c.get("/zookeeper/config")
            assert d == data and s.mzxid == version, "member %d (%s)" % (m.sid, m.kind)
            check_dynamic_file(wait_files(e, m, version), version, expected_lines(e))
        data, stat = reconfig(admin, joining=None, leaving=str(m4.sid), new_members=None)
        e.mark_config(data.decode())
        e.wait_ready()
        _grows(writer, 100)
    finally:
        writer.stop()
    _connection_moves_only(writer.errors)
    _check_members_hold(e, base, writer.acked)
    joining = "server.6=" + dead_line("observer")
    data, _ = reconfig(admin, joining=joining, leaving=None, new_members=None)
    lines, version = parse_config(data)
    data, _ = reconfig(admin, joining=None, leaving="6", new_members=None)
    e.mark_config(data.decode())
    lines, version = parse_config(data)
    for m in e.in_config():
        check_dynamic_file(wait_files(e, m, version), version, lines)
    # the leader (the other kind) removed: a follower takes over, the old leader follows it
    # without a vote, and is added back
    try:
        data, _ = reconfig(admin, joining=None, leaving="3", new_members=None)
    except ke.ConnectionLoss:
        data = e.poll(lambda: (lambda d: d if 3 not in parse_config(d)[0] else None)(
            e.client(e.member(2)).get("/zookeeper/config")[0]), timeout=30, what="member 3 removed")
    e.mark_config(data.decode())
    new = e.wait_ready()
    assert new.kind == follower_kind
    e.poll(lambda: e.mode(leader) == "follower", timeout=30, what="the old leader to follow")
    admin.create(base + "-without-3")
    data, _ = reconfig(admin, joining=e.joining(leader), leaving=None, new_members=None)
    e.mark_config(data.decode())
    assert e.config_ids == {1, 2, 3}
    e.wait_ready()
    c3 = e.client(leader)
    c3.sync(base + "-without-3")
    assert c3.exists(base + "-without-3")
    lines, version = parse_config(data)
    for m in e.in_config():
        check_dynamic_file(wait_files(e, m, version), version, lines)
