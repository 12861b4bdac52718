"""Every client operation of ZooKeeper 3.8 against the keeper, driven by kazoo
(and by the raw zkwire client where kazoo 2.8 lacks the operation or hides
the exact answer).  Expected values are Apache ZooKeeper 3.8's."""
import time

import pytest
from kazoo.exceptions import (BadVersionError, ConnectionLoss,
                              NoChildrenForEphemeralsError, NodeExistsError, NoNodeError,
                              NotEmptyError)

from harness import wait_until
from zkwire import (ERR, MODE, OP, Reader, enc_create, enc_delete, enc_path,
                    enc_path_watch, enc_set_data)

MAXBUFFER = 0xFFFFF  # jute.maxbuffer default: 1 MiB - 1


def now_ms():
    return int(time.time() * 1000)


# ---- create ---------------------------------------------------------------------


def test_create_persistent_returns_path_and_stores_data(zk, base):
    """create() returns the path; the node holds the data with a fresh Stat."""
    path = zk.create(base + "/n", b"hello")
    assert path == base + "/n"
    data, stat = zk.get(path)
    assert data == b"hello"
    assert stat.version == 0 and stat.cversion == 0 and stat.aversion == 0
    assert stat.ephemeralOwner == 0
    assert stat.dataLength == 5
    assert stat.numChildren == 0
    assert stat.czxid == stat.mzxid == stat.pzxid


def test_create_empty_data_has_zero_length(zk, base):
    """A node created without data has dataLength 0 and returns b''."""
    zk.create(base + "/empty")
    data, stat = zk.get(base + "/empty")
    assert data == b"" and stat.dataLength == 0


def test_create_existing_node_is_node_exists(zk, base):
    """Creating an existing path fails with NodeExists and leaves data alone."""
    zk.create(base + "/dup", b"one")
    with pytest.raises(NodeExistsError):
        zk.create(base + "/dup", b"two")
    assert zk.get(base + "/dup")[0] == b"one"


def test_create_without_parent_is_no_node(zk, base):
    """Creating under a missing parent fails with NoNode; makepath creates parents."""
    with pytest.raises(NoNodeError):
        zk.create(base + "/missing/child")
    assert zk.create(base + "/missing/child", b"x", makepath=True) == base + "/missing/child"
    assert zk.exists(base + "/missing") is not None


def test_create2_returns_stat_equal_to_exists(zk, base):
    """create(include_data=True) (create2) returns the same Stat exists() reports."""
    path, stat = zk.create(base + "/c2", b"abc", include_data=True)
    assert path == base + "/c2"
    assert stat == zk.exists(path)
    assert stat.dataLength == 3 and stat.version == 0


def test_create_root_is_node_exists_and_wire_codes(shared_keeper, wire_factory):
    """create('/') is NodeExists; the create op's reply body is just the path."""
    c = wire_factory(shared_keeper)
    assert c.err_of(OP.CREATE, enc_create("/")) == ERR.NODEEXISTS
    hdr, body = c.call(OP.CREATE, enc_create("/wire_create_plain", b"d"))
    r = Reader(body)
    assert r.string() == "/wire_create_plain" and r.remaining() == 0
    c.delete("/wire_create_plain")


def test_sequential_suffix_is_ten_digits_from_parent_cversion(zk, base):
    """Sequential suffix = parent's count of child creations (10 digits); the Stat's cversion also counts deletes."""
    zk.create(base + "/a")                                     # creations 1
    first = zk.create(base + "/s-", sequence=True)             # suffix 1, creations 2
    assert first == base + "/s-0000000001"
    zk.delete(base + "/a")                                     # creations stay 2
    assert zk.exists(base).cversion == 3                       # 2 creates + 1 delete
    second = zk.create(base + "/s-", sequence=True)
    assert second == base + "/s-0000000002"
    assert zk.get_children(base, include_data=True)[1].cversion == 4
    third = zk.create(base + "/other", sequence=True)
    assert third == base + "/other0000000003"


def test_sequential_name_may_be_just_the_suffix(shared_keeper, wire_factory, zk, base):
    """A sequential create of 'parent/' names the child by its suffix alone."""
    c = wire_factory(shared_keeper)
    name, stat = c.create(base + "/", flags=MODE.PERSISTENT_SEQUENTIAL)
    assert name == base + "/0000000000"
    assert zk.get_children(base) == ["0000000000"]


def test_ephemeral_owner_is_session_id(zk, base):
    """An ephemeral node's ephemeralOwner is the creating session's id."""
    zk.create(base + "/eph", ephemeral=True)
    stat = zk.exists(base + "/eph")
    assert stat.ephemeralOwner == zk.client_id[0] != 0


def test_ephemeral_sequential(zk, base):
    """Ephemeral-sequential nodes get the suffix and the session as owner."""
    p1 = zk.create(base + "/lock-", ephemeral=True, sequence=True)
    p2 = zk.create(base + "/lock-", ephemeral=True, sequence=True)
    assert (p1, p2) == (base + "/lock-0000000000", base + "/lock-0000000001")
    assert zk.exists(p2).ephemeralOwner == zk.client_id[0]


def test_ephemeral_cannot_have_children(zk, base):
    """Creating a child of an ephemeral node fails with NoChildrenForEphemerals."""
    zk.create(base + "/eph", ephemeral=True)
    with pytest.raises(NoChildrenForEphemeralsError):
        zk.create(base + "/eph/child")
    with pytest.raises(NoChildrenForEphemeralsError):
        zk.create(base + "/eph/child", ephemeral=True)


def test_container_node_create(shared_keeper, wire_factory, zk, base):
    """createContainer makes a node whose Stat shows ephemeralOwner 0 and which can have children."""
    c = wire_factory(shared_keeper)
    name, stat = c.create(base + "/box", b"c", flags=MODE.CONTAINER, opcode=OP.CREATE_CONTAINER)
    assert name == base + "/box"
    assert stat.ephemeralOwner == 0 and stat.dataLength == 1
    assert zk.exists(base + "/box") == stat
    zk.create(base + "/box/item", b"")
    assert zk.get_children(base + "/box") == ["item"]


def test_ttl_node_create(shared_keeper, wire_factory, zk, base):
    """createTTL makes a persistent node (ephemeralOwner 0), sequential TTL gets a suffix."""
    c = wire_factory(shared_keeper)
    name, stat = c.create(base + "/ttl", b"t", flags=MODE.PERSISTENT_WITH_TTL, ttl=60000)
    assert name == base + "/ttl"
    assert stat.ephemeralOwner == 0
    assert zk.get(base + "/ttl")[0] == b"t"
    name, stat = c.create(base + "/tseq-", flags=MODE.PERSISTENT_SEQUENTIAL_WITH_TTL, ttl=60000)
    assert name == base + "/tseq-0000000001"


@pytest.mark.parametrize("opcode,flags,ttl", [
    (OP.CREATE_TTL, MODE.PERSISTENT_WITH_TTL, 0),            # ttl must be > 0
    (OP.CREATE_TTL, MODE.PERSISTENT_WITH_TTL, -5),
    (OP.CREATE_TTL, MODE.PERSISTENT_WITH_TTL, 1 << 40),      # beyond the max TTL
    (OP.CREATE_TTL, MODE.EPHEMERAL, 1000),                   # ttl with a non-TTL mode
    (OP.CREATE_TTL, MODE.PERSISTENT, 1000),
    (OP.CREATE, MODE.PERSISTENT_WITH_TTL, None),             # TTL mode without createTTL
    (OP.CREATE2, MODE.PERSISTENT_SEQUENTIAL_WITH_TTL, None),
    (OP.CREATE, 99, None),                                   # unknown create mode
])
def test_bad_ttl_or_mode_is_bad_arguments(shared_keeper, wire_factory, zk, base, opcode, flags, ttl):
    """Invalid TTLs and create-mode/opcode mismatches fail with BadArguments and create nothing."""
    c = wire_factory(shared_keeper)
    assert c.err_of(opcode, enc_create(base + "/bad", b"", flags=flags, ttl=ttl)) == ERR.BADARGUMENTS
    assert zk.exists(base + "/bad") is None


def test_container_and_ttl_nodes_are_reaped(make_keeper, wire_factory, kazoo_factory):
    """Emptied containers and expired childless TTL nodes are reaped; never-used containers and TTL parents stay."""
    server = make_keeper(container_check_ms=100)
    c = wire_factory(server)
    zk = kazoo_factory(server)
    c.create("/box", flags=MODE.CONTAINER, opcode=OP.CREATE_CONTAINER)
    c.create("/never", flags=MODE.CONTAINER, opcode=OP.CREATE_CONTAINER)
    zk.create("/box/x")
    c.create("/ttl", flags=MODE.PERSISTENT_WITH_TTL, ttl=300)
    c.create("/ttlp", flags=MODE.PERSISTENT_WITH_TTL, ttl=300)
    zk.create("/ttlp/child")
    zk.delete("/box/x")
    wait_until(lambda: zk.exists("/box") is None, timeout=10, what="emptied container to be reaped")
    wait_until(lambda: zk.exists("/ttl") is None, timeout=10, what="expired TTL node to be reaped")
    # Two more reaper rounds: the kept nodes are still there.
    c.create("/probe", flags=MODE.PERSISTENT_WITH_TTL, ttl=1)
    wait_until(lambda: zk.exists("/probe") is None, timeout=10, what="probe TTL node to be reaped")
    assert zk.exists("/never") is not None
    assert zk.exists("/ttlp") is not None


# ---- delete -----------------------------------------------------------------------


def test_delete_checks_version(zk, base):
    """delete with a wrong version is BadVersion; with the right one (or -1) it deletes."""
    zk.create(base + "/v", b"")
    zk.set(base + "/v", b"1")
    with pytest.raises(BadVersionError):
        zk.delete(base + "/v", version=0)
    zk.delete(base + "/v", version=1)
    assert zk.exists(base + "/v") is None
    zk.create(base + "/w")
    zk.delete(base + "/w", version=-1)
    assert zk.exists(base + "/w") is None


def test_delete_missing_is_no_node(zk, base):
    """Deleting a missing node fails with NoNode."""
    with pytest.raises(NoNodeError):
        zk.delete(base + "/nothing")


def test_delete_with_children_is_not_empty(zk, base):
    """Deleting a node that has children fails with NotEmpty and deletes nothing."""
    zk.create(base + "/p/c", makepath=True)
    with pytest.raises(NotEmptyError):
        zk.delete(base + "/p")
    assert zk.exists(base + "/p/c") is not None


def test_delete_root_and_zookeeper_are_bad_arguments(shared_keeper, wire_factory):
    """Deleting '/' or '/zookeeper' fails with BadArguments."""
    c = wire_factory(shared_keeper)
    assert c.err_of(OP.DELETE, enc_delete("/")) == ERR.BADARGUMENTS
    assert c.err_of(OP.DELETE, enc_delete("/zookeeper")) == ERR.BADARGUMENTS
    assert c.exists("/zookeeper") is not None


# ---- exists / get / set ----------------------------------------------------------------


def test_exists_with_and_without_node(zk, base):
    """exists() returns None for a missing node and the node's Stat otherwise."""
    assert zk.exists(base + "/x") is None
    zk.create(base + "/x", b"12")
    stat = zk.exists(base + "/x")
    assert stat is not None and stat.dataLength == 2
    assert stat == zk.get(base + "/x")[1]


def test_exists_missing_is_nonode_on_the_wire(shared_keeper, wire_factory, base, zk):
    """exists on a missing node answers err NoNode with an empty body."""
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.EXISTS, enc_path_watch(base + "/nope"), check=False)
    assert hdr.err == ERR.NONODE and body == b""


def test_get_missing_is_no_node(zk, base):
    """get() of a missing node fails with NoNode."""
    with pytest.raises(NoNodeError):
        zk.get(base + "/nope")


def test_set_increments_version_and_checks_it(zk, base):
    """set() bumps version and mzxid; a stale version is BadVersion and changes nothing."""
    zk.create(base + "/s", b"a")
    s0 = zk.exists(base + "/s")
    s1 = zk.set(base + "/s", b"bb", version=0)
    assert s1.version == 1 and s1.dataLength == 2
    assert s1.mzxid > s0.mzxid and s1.czxid == s0.czxid
    s2 = zk.set(base + "/s", b"ccc")
    assert s2.version == 2
    with pytest.raises(BadVersionError):
        zk.set(base + "/s", b"zz", version=1)
    data, stat = zk.get(base + "/s")
    assert data == b"ccc" and stat == s2


def test_set_missing_is_no_node(zk, base):
    """set() of a missing node fails with NoNode."""
    with pytest.raises(NoNodeError):
        zk.set(base + "/nope", b"x")


def test_data_roundtrips_binary_bytes(zk, base):
    """Arbitrary binary data (all 256 byte values) is stored unchanged."""
    blob = bytes(range(256)) * 3
    zk.create(base + "/bin", blob)
    assert zk.get(base + "/bin")[0] == blob
    zk.set(base + "/bin", b"\x00")
    assert zk.get(base + "/bin")[0] == b"\x00"


def test_large_data_near_one_mebibyte_works(zk, base):
    """Data of 1 MiB minus 1 KiB is stored and read back intact."""
    blob = bytes((i * 7) & 0xFF for i in range(1024 * 1024 - 1024))
    zk.create(base + "/big", blob)
    data, stat = zk.get(base + "/big")
    assert data == blob and stat.dataLength == len(blob)


def test_data_over_maxbuffer_fails_and_session_survives(zk, base):
    """A set() over jute.maxbuffer drops the connection; kazoo resumes the same session and the old data is intact."""
    zk.create(base + "/big", b"old")
    sid = zk.client_id[0]
    with pytest.raises(ConnectionLoss):
        zk.set(base + "/big", b"x" * (1024 * 1024 + 1))
    wait_until(lambda: zk.connected, timeout=15, what="kazoo to reconnect")
    assert zk.get(base + "/big")[0] == b"old"
    assert zk.client_id[0] == sid


# ---- children ---------------------------------------------------------------------------


def test_get_children_lists_direct_children_only(zk, base):
    """get_children returns the direct children's names (no order promised)."""
    for name in ("b", "a", "c"):
        zk.create(base + "/" + name)
    zk.create(base + "/a/deep")
    assert sorted(zk.get_children(base)) == ["a", "b", "c"]
    assert zk.get_children(base + "/b") == []


def test_get_children2_returns_parent_stat(zk, base):
    """get_children(include_data=True) (getChildren2) returns the parent's Stat too."""
    zk.create(base + "/x")
    zk.create(base + "/y")
    children, stat = zk.get_children(base, include_data=True)
    assert sorted(children) == ["x", "y"]
    assert stat.numChildren == 2 and stat.cversion == 2
    assert stat == zk.exists(base)


def test_get_children_missing_is_no_node(zk, base):
    """get_children of a missing node fails with NoNode."""
    with pytest.raises(NoNodeError):
        zk.get_children(base + "/nope")


def test_get_all_children_number(shared_keeper, wire_factory, zk, base):
    """getAllChildrenNumber counts all descendants (not the node itself)."""
    zk.create(base + "/a/x/y", makepath=True)
    zk.create(base + "/b")
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.GET_ALL_CHILDREN_NUMBER, enc_path(base))
    assert Reader(body).int() == 4
    hdr, body = c.call(OP.GET_ALL_CHILDREN_NUMBER, enc_path(base + "/b"))
    assert Reader(body).int() == 0
    assert c.err_of(OP.GET_ALL_CHILDREN_NUMBER, enc_path(base + "/nope")) == ERR.NONODE


def test_get_ephemerals_lists_own_session_by_prefix(shared_keeper, wire_factory, zk, base):
    """getEphemerals returns the session's own ephemerals whose path starts with the prefix."""
    zk.create(base + "/sub")
    zk.create(base + "/persistent")
    a = wire_factory(shared_keeper)
    b = wire_factory(shared_keeper)
    a.create(base + "/e1", flags=MODE.EPHEMERAL)
    a.create(base + "/sub/e2", flags=MODE.EPHEMERAL)
    b.create(base + "/e3", flags=MODE.EPHEMERAL)

    def ephemerals(c, prefix):
        return sorted(Reader(c.call(OP.GET_EPHEMERALS, enc_path(prefix))[1]).strings())

    assert ephemerals(a, base) == [base + "/e1", base + "/sub/e2"]
    assert ephemerals(a, base + "/sub") == [base + "/sub/e2"]
    assert ephemerals(a, base + "/e") == [base + "/e1"]          # a string prefix, not a path
    assert ephemerals(a, base + "/nomatch") == []
    assert ephemerals(b, base) == [base + "/e3"]
    assert base + "/e1" in ephemerals(a, "/")


def test_sync_returns_path(zk, base):
    """sync(path) succeeds and echoes the path (even for a missing node)."""
    assert zk.sync(base) == base
    assert zk.sync(base + "/not-there") == base + "/not-there"


# ---- paths ------------------------------------------------------------------------------

# (path, create, setData, delete, getData, exists, getChildren) -> error codes of ZooKeeper 3.8.
# The node <base> exists; the rest of each path does not.
BAD_PATHS = [
    ("a", ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}/", ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}//x", ERR.NONODE, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}/./x", ERR.NONODE, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}/../x", ERR.NONODE, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}/.", ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}/..", ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
    ("{b}/a\x00b", ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.NONODE,
     ERR.BADARGUMENTS, ERR.NONODE),
    ("{b}/ctl\x01", ERR.BADARGUMENTS, ERR.BADARGUMENTS, ERR.NONODE, ERR.NONODE, ERR.NONODE, ERR.NONODE),
]


@pytest.mark.parametrize("row", BAD_PATHS, ids=[repr(r[0]) for r in BAD_PATHS])
def test_bad_paths_get_zookeepers_error_codes(shared_keeper, wire_factory, base, row):
    """Malformed paths get exactly ZooKeeper's error code for each operation."""
    path = row[0].replace("{b}", base)
    create, setd, delete, getd, exists, children = row[1:]
    c = wire_factory(shared_keeper)
    assert c.err_of(OP.CREATE, enc_create(path)) == create
    assert c.err_of(OP.SET_DATA, enc_set_data(path, b"")) == setd
    assert c.err_of(OP.DELETE, enc_delete(path)) == delete
    assert c.err_of(OP.GET_DATA, enc_path_watch(path)) == getd
    assert c.err_of(OP.EXISTS, enc_path_watch(path)) == exists
    assert c.err_of(OP.GET_CHILDREN, enc_path_watch(path)) == children


def test_invalid_utf8_path_is_bad_arguments(shared_keeper, wire_factory, zk, base):
    """A create whose path bytes are not valid UTF-8 fails with BadArguments."""
    from zkwire import OPEN_ACL, Writer
    c = wire_factory(shared_keeper)
    body = Writer().buffer(base.encode() + b"/\xff\xfe").buffer(b"").acls(OPEN_ACL).int(0).bytes()
    assert c.err_of(OP.CREATE, body) == ERR.BADARGUMENTS
    assert zk.get_children(base) == []


def test_unicode_names_roundtrip(zk, base):
    """Non-ASCII node names are stored and listed unchanged."""
    zk.create(base + "/h\u00e9llo-\u65e5\u672c")
    assert zk.get_children(base) == ["h\u00e9llo-\u65e5\u672c"]


# ---- Stat fields and zxids -----------------------------------------------------------------


def test_stat_fields_track_changes(zk, base):
    """czxid/mzxid/pzxid, versions, times, numChildren and dataLength follow ZooKeeper's rules."""
    t0 = now_ms()
    p = zk.create(base + "/p", b"abc")
    s0 = zk.exists(p)
    assert t0 - 5000 <= s0.ctime <= now_ms() + 5000
    assert s0.ctime == s0.mtime
    assert s0.czxid == s0.mzxid == s0.pzxid

    zk.create(p + "/c1")                       # child create: cversion, pzxid, numChildren
    s1 = zk.exists(p)
    c1 = zk.exists(p + "/c1")
    assert s1.cversion == 1 and s1.numChildren == 1
    assert s1.pzxid == c1.czxid > s0.pzxid
    assert (s1.mzxid, s1.version, s1.mtime, s1.dataLength) == (s0.mzxid, 0, s0.mtime, 3)

    s2 = zk.set(p, b"abcdef")                  # data change: version, mzxid, mtime, dataLength
    assert s2.version == 1 and s2.dataLength == 6
    assert s2.mzxid > s1.pzxid
    assert s2.mtime >= s2.ctime == s0.ctime
    assert (s2.czxid, s2.pzxid, s2.cversion) == (s0.czxid, s1.pzxid, 1)

    zk.set(p + "/c1", b"x")                    # a child's data change does not touch the parent
    assert zk.exists(p) == s2

    zk.delete(p + "/c1")                       # child delete: cversion and pzxid move again
    s3 = zk.exists(p)
    assert s3.cversion == 2 and s3.numChildren == 0
    assert s3.pzxid > s2.mzxid
    assert (s3.mzxid, s3.version) == (s2.mzxid, 1)

    s4 = zk.set_acls(p, zk.get_acls(p)[0])     # ACL change: aversion only
    assert s4.aversion == 1
    assert (s4.version, s4.mzxid, s4.cversion, s4.pzxid) == (1, s3.mzxid, 2, s3.pzxid)


def test_write_reply_zxid_matches_stat(shared_keeper, wire_factory, base):
    """A write's reply header carries its zxid (== the Stat's mzxid); later replies never go back."""
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.CREATE2, enc_create(base + "/z", b"1"))
    r = Reader(body)
    r.string()
    st = r.stat()
    assert hdr.zxid == st.czxid == st.mzxid
    hdr2, body2 = c.call(OP.SET_DATA, enc_set_data(base + "/z", b"2"))
    st2 = Reader(body2).stat()
    assert hdr2.zxid == st2.mzxid > hdr.zxid
    hdr3, _ = c.call(OP.GET_DATA, enc_path_watch(base + "/z"))
    assert hdr3.zxid >= hdr2.zxid
    hdr4, _ = c.call(OP.DELETE, enc_delete(base + "/z"))
    assert hdr4.zxid > hdr2.zxid
    ping = c.ping()
    assert ping.xid == -2 and ping.err == 0 and ping.zxid >= hdr4.zxid


def test_xids_are_echoed(shared_keeper, wire_factory, base):
    """Each reply echoes its request's xid, including unusual values."""
    c = wire_factory(shared_keeper)
    for xid in (1, 7, 0x7FFFFFF0, 123456):
        hdr, _ = c.call(OP.EXISTS, enc_path_watch(base), xid=xid)
        assert hdr.xid == xid and hdr.err == 0
