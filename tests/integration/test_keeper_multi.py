"""multi (transactions) and multiRead: atomic, per-op results exactly as
Apache ZooKeeper 3.8 returns them."""
import struct

import pytest
from kazoo.exceptions import (BadVersionError, NodeExistsError, NoNodeError, NotEmptyError,
                              RolledBackError, RuntimeInconsistency)
from kazoo.protocol.states import ZnodeStat

from zkwire import (ERR, EV, MODE, OP, Reader, dec_multi, enc_check, enc_create, enc_delete,
                    enc_multi, enc_path_watch, enc_set_data)


def test_transaction_commits_all_ops(zk, base):
    """A successful transaction applies every op and returns one result per op."""
    zk.create(base + "/old", b"o")
    zk.create(base + "/victim")
    t = zk.transaction()
    t.create(base + "/new", b"n")
    t.set_data(base + "/old", b"o2", version=0)
    t.check(base + "/old", 1)
    t.delete(base + "/victim", version=0)
    results = t.commit()
    assert results[0] == base + "/new"
    assert isinstance(results[1], ZnodeStat) and results[1].version == 1
    assert results[2] is True and results[3] is True
    assert len(results) == 4
    assert zk.get(base + "/new")[0] == b"n"
    assert zk.get(base + "/old")[0] == b"o2"
    assert zk.exists(base + "/victim") is None


def test_failing_op_rolls_back_everything(zk, base):
    """A failing op aborts all: earlier ops report RolledBack, it its error, later ones RuntimeInconsistency."""
    zk.create(base + "/keep", b"k")
    t = zk.transaction()
    t.create(base + "/a")
    t.set_data(base + "/keep", b"changed")
    t.check(base + "/keep", 7)                  # wrong version: fails
    t.create(base + "/b")
    t.delete(base + "/keep")
    results = t.commit()
    assert [type(r) for r in results] == [RolledBackError, RolledBackError, BadVersionError,
                                          RuntimeInconsistency, RuntimeInconsistency]
    assert zk.exists(base + "/a") is None
    assert zk.exists(base + "/b") is None
    data, stat = zk.get(base + "/keep")
    assert data == b"k" and stat.version == 0


@pytest.mark.parametrize("failing,exc", [
    ("create-exists", NodeExistsError),
    ("delete-missing", NoNodeError),
    ("delete-not-empty", NotEmptyError),
    ("set-bad-version", BadVersionError),
])
def test_each_kind_of_failure_rolls_back(zk, base, failing, exc):
    """Each kind of failing op aborts the whole transaction with that op's error."""
    zk.create(base + "/p/c", makepath=True)
    t = zk.transaction()
    t.create(base + "/first", b"")
    if failing == "create-exists":
        t.create(base + "/p")
    elif failing == "delete-missing":
        t.delete(base + "/none")
    elif failing == "delete-not-empty":
        t.delete(base + "/p")
    else:
        t.set_data(base + "/p", b"x", version=3)
    results = t.commit()
    assert [type(r) for r in results] == [RolledBackError, exc]
    assert zk.exists(base + "/first") is None
    assert zk.exists(base + "/p/c") is not None


def test_ops_see_earlier_ops_in_the_same_transaction(zk, base):
    """Later ops in a transaction see the effects of earlier ones."""
    t = zk.transaction()
    t.create(base + "/d", b"1")
    t.create(base + "/d/e", b"2")
    t.set_data(base + "/d", b"3", version=0)
    t.check(base + "/d", 1)
    t.delete(base + "/d/e", version=0)
    t.create(base + "/d/e", b"again")
    results = t.commit()
    assert not any(isinstance(r, Exception) for r in results), results
    assert zk.get(base + "/d")[0] == b"3"
    assert zk.get(base + "/d/e")[0] == b"again"


def test_sequential_and_ephemeral_creates_in_transaction(zk, base):
    """Sequential creates in one transaction get consecutive suffixes; ephemerals get the owner."""
    t = zk.transaction()
    t.create(base + "/q-", sequence=True)
    t.create(base + "/q-", sequence=True)
    t.create(base + "/eph", ephemeral=True)
    results = t.commit()
    assert results == [base + "/q-0000000000", base + "/q-0000000001", base + "/eph"]
    assert zk.exists(base + "/eph").ephemeralOwner == zk.client_id[0]


def test_check_fences_a_conditional_write(zk, kazoo_factory, shared_keeper, base):
    """A check+set transaction from a writer holding a stale version fails and writes nothing."""
    zk.create(base + "/leader", b"epoch1")
    other = kazoo_factory(shared_keeper)
    _, seen = zk.get(base + "/leader")
    other.set(base + "/leader", b"epoch2")                      # someone else moves on
    t = zk.transaction()
    t.check(base + "/leader", seen.version)
    t.create(base + "/isr", b"stale")
    results = t.commit()
    assert [type(r) for r in results] == [BadVersionError, RuntimeInconsistency]
    assert zk.exists(base + "/isr") is None
    assert zk.get(base + "/leader")[0] == b"epoch2"


def test_check_on_missing_node_is_no_node(zk, base):
    """A check op on a missing node fails the transaction with NoNode."""
    t = zk.transaction()
    t.check(base + "/missing", 0)
    t.create(base + "/x")
    results = t.commit()
    assert [type(r) for r in results] == [NoNodeError, RuntimeInconsistency]


# ---- the wire format ---------------------------------------------------------------------


def test_multi_success_wire_format(shared_keeper, wire_factory, base):
    """A good multi: err 0, per op MultiHeader(type,false,0)+result (create2 answers as create), one zxid, end marker."""
    c = wire_factory(shared_keeper)
    c.create(base + "/s", b"")
    hdr, body = c.call(OP.MULTI, enc_multi([
        (OP.CREATE, enc_create(base + "/m1", b"a")),
        (OP.CREATE2, enc_create(base + "/m2", b"bb")),
        (OP.SET_DATA, enc_set_data(base + "/s", b"x")),
        (OP.CHECK, enc_check(base + "/s", 1)),
        (OP.DELETE, enc_delete(base + "/m1")),
    ]))
    assert hdr.err == 0
    r = Reader(body)

    def header():
        return r.int(), r.bool(), r.int()

    assert header() == (OP.CREATE, False, 0) and r.string() == base + "/m1"
    assert header() == (OP.CREATE, False, 0) and r.string() == base + "/m2"
    assert header() == (OP.SET_DATA, False, 0)
    st_set = r.stat()
    assert header() == (OP.CHECK, False, 0)
    assert header() == (OP.DELETE, False, 0)
    assert header() == (-1, True, -1)
    assert r.remaining() == 0
    st2 = c.exists(base + "/m2")
    assert st2.czxid == st_set.mzxid == hdr.zxid
    assert st2.dataLength == 2 and st_set.version == 1
    assert c.exists(base + "/m1") is None


def test_multi_failure_wire_format(shared_keeper, wire_factory, base):
    """A failed multi answers err 0 with error results (header -1,false,code + code): 0, the failure, then -2."""
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.MULTI, enc_multi([
        (OP.CREATE, enc_create(base + "/a")),
        (OP.CREATE, enc_create(base + "/a")),
        (OP.DELETE, enc_delete(base + "/zz")),
    ]))
    assert hdr.err == 0
    expected = b"".join(struct.pack("!iBii", -1, 0, code, code)
                        for code in (ERR.OK, ERR.NODEEXISTS, ERR.RUNTIMEINCONSISTENCY))
    expected += struct.pack("!iBi", -1, 1, -1)
    assert body == expected
    assert c.exists(base + "/a") is None


def test_empty_multi_succeeds(shared_keeper, wire_factory):
    """An empty multi answers err 0 with just the end marker."""
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.MULTI, enc_multi([]))
    assert hdr.err == 0 and body == struct.pack("!iBi", -1, 1, -1)


def test_failed_multi_fires_no_watch_successful_one_does(shared_keeper, wire_factory, base):
    """A rolled-back multi triggers no watch; the same multi that succeeds does."""
    c = wire_factory(shared_keeper)
    c.create(base + "/w", b"")
    c.get(base + "/w", watch=True)
    hdr, body = c.call(OP.MULTI, enc_multi([
        (OP.SET_DATA, enc_set_data(base + "/w", b"x")),
        (OP.CHECK, enc_check(base + "/w", 99)),
    ]))
    assert [e for _, e, _ in dec_multi(body)] == [ERR.OK, ERR.BADVERSION]
    assert c.no_event(0.3)
    hdr, body = c.call(OP.MULTI, enc_multi([
        (OP.SET_DATA, enc_set_data(base + "/w", b"x")),
        (OP.CHECK, enc_check(base + "/w", 1)),
    ]))
    assert [t for t, _, _ in dec_multi(body)] == [OP.SET_DATA, OP.CHECK]
    ev = c.wait_event(5)
    assert (ev.type, ev.path) == (EV.NODE_DATA_CHANGED, base + "/w")


def test_multi_read_returns_each_result(shared_keeper, wire_factory, zk, base):
    """multiRead returns each getData/getChildren result in order, an error result for a failing read."""
    zk.create(base + "/r", b"data")
    zk.create(base + "/r/k1")
    zk.create(base + "/r/k2")
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.MULTI_READ, enc_multi([
        (OP.GET_DATA, enc_path_watch(base + "/r")),
        (OP.GET_DATA, enc_path_watch(base + "/missing")),
        (OP.GET_CHILDREN, enc_path_watch(base + "/r")),
    ]))
    assert hdr.err == 0
    res = dec_multi(body)
    assert res[0][0] == OP.GET_DATA and res[0][1] == 0
    data, stat = res[0][2]
    assert data == b"data" and stat == c.exists(base + "/r")
    assert res[1][:2] == (OP.ERROR, ERR.NONODE)
    assert res[2][0] == OP.GET_CHILDREN and sorted(res[2][2]) == ["k1", "k2"]
    assert len(res) == 3


def test_multi_ephemeral_under_ephemeral_fails(shared_keeper, wire_factory, base):
    """Creating a child of an ephemeral created earlier in the same multi fails atomically."""
    c = wire_factory(shared_keeper)
    hdr, body = c.call(OP.MULTI, enc_multi([
        (OP.CREATE, enc_create(base + "/e", flags=MODE.EPHEMERAL)),
        (OP.CREATE, enc_create(base + "/e/c")),
    ]))
    assert [e for _, e, _ in dec_multi(body)] == [ERR.OK, ERR.NOCHILDRENFOREPHEMERALS]
    assert c.exists(base + "/e") is None
