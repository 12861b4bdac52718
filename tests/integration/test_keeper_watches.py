"""Watches: one-shot data/exist/child watches, persistent and recursive watches,
removeWatches/checkWatches, setWatches after a reconnect — with ZooKeeper 3.8's
exact firing rules and event types.

Most tests watch and write on the same raw connection: ZooKeeper sends the
notifications a write triggers before that write's reply, so after the reply
the events list is complete and "no event" needs no waiting."""
import queue
import threading

import pytest
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from zkwire import (ADD_WATCH_MODE, ERR, EV, OP, SET_WATCHES_XID, STATE_SYNC_CONNECTED,
                    WATCH_XID, WATCHER_TYPE, Reader, WatcherEvent, WireClient, enc_path_type,
                    enc_path_watch, enc_set_data, enc_set_watches)


def ev(typ, path):
    return WatcherEvent(typ, STATE_SYNC_CONNECTED, path)


@pytest.fixture
def c(shared_keeper, wire_factory):
    """A raw connection with a session on the shared keeper."""
    return wire_factory(shared_keeper)


# ---- one-shot watches ----------------------------------------------------------------------


def test_data_watch_fires_once_on_change(c, base):
    """A getData watch fires NodeDataChanged once; the next change fires nothing."""
    c.create(base + "/n", b"0")
    c.get(base + "/n", watch=True)
    c.set(base + "/n", b"1")
    assert c.take_events() == [ev(EV.NODE_DATA_CHANGED, base + "/n")]
    c.set(base + "/n", b"2")
    assert c.take_events() == []


def test_notification_header_and_order(c, base):
    """A notification has header (-1, -1, 0) and state SyncConnected, and precedes the reply of the write causing it."""
    c.create(base + "/n", b"")
    c.get(base + "/n", watch=True)
    xid = c.send(OP.SET_DATA, enc_set_data(base + "/n", b"x"))
    first = c.recv_packet()
    r = Reader(first)
    assert (r.int(), r.long(), r.int()) == (WATCH_XID, -1, 0)
    assert (r.int(), r.int(), r.string()) == (EV.NODE_DATA_CHANGED, STATE_SYNC_CONNECTED, base + "/n")
    assert r.remaining() == 0
    hdr, _ = c.read_reply(xid)
    assert hdr.err == 0


def test_exists_watch_on_missing_node_fires_created(c, base):
    """An exists watch on a missing node fires NodeCreated when it is created."""
    assert c.exists(base + "/later", watch=True) is None
    c.create(base + "/later", b"")
    assert c.take_events() == [ev(EV.NODE_CREATED, base + "/later")]


def test_exists_watch_on_existing_node(c, base):
    """An exists watch on an existing node fires NodeDataChanged, then (re-set) NodeDeleted."""
    c.create(base + "/n", b"")
    c.exists(base + "/n", watch=True)
    c.set(base + "/n", b"x")
    assert c.take_events() == [ev(EV.NODE_DATA_CHANGED, base + "/n")]
    c.exists(base + "/n", watch=True)
    c.delete(base + "/n")
    assert c.take_events() == [ev(EV.NODE_DELETED, base + "/n")]


def test_get_data_on_missing_node_sets_no_watch(c, base):
    """getData on a missing node fails with NoNode and leaves no watch behind."""
    assert c.err_of(OP.GET_DATA, enc_path_watch(base + "/none", True)) == ERR.NONODE
    c.create(base + "/none", b"")
    assert c.take_events() == []


def test_child_watch_fires_once_on_child_create_and_delete(c, base):
    """A child watch fires NodeChildrenChanged once per child create/delete, never for a child's data change."""
    c.children(base, watch=True)
    c.create(base + "/k1", b"")
    assert c.take_events() == [ev(EV.NODE_CHILDREN_CHANGED, base)]
    c.create(base + "/k2", b"")
    assert c.take_events() == []
    c.children2(base, watch=True)
    c.set(base + "/k1", b"data")
    assert c.take_events() == []
    c.delete(base + "/k1")
    assert c.take_events() == [ev(EV.NODE_CHILDREN_CHANGED, base)]


def test_creating_a_child_does_not_fire_parent_data_watch(c, base):
    """A child create fires the parent's child watch only, not its data watch."""
    c.get(base, watch=True)
    c.create(base + "/kid", b"")
    assert c.take_events() == []
    c.set(base, b"x")
    assert c.take_events() == [ev(EV.NODE_DATA_CHANGED, base)]


def test_delete_fires_node_deleted_once_per_connection(shared_keeper, wire_factory, c, base):
    """A delete sends one NodeDeleted per watching connection and NodeChildrenChanged to the parent's watcher."""
    c.create(base + "/n", b"")
    c.get(base + "/n", watch=True)
    c.exists(base + "/n", watch=True)
    c.children(base + "/n", watch=True)
    c.children(base, watch=True)
    other = wire_factory(shared_keeper)
    other.children(base + "/n", watch=True)
    c.delete(base + "/n")
    got = c.take_events()
    assert sorted(got) == sorted([ev(EV.NODE_DELETED, base + "/n"),
                                  ev(EV.NODE_CHILDREN_CHANGED, base)])
    assert other.wait_event(5) == ev(EV.NODE_DELETED, base + "/n")
    assert other.no_event(0.2)


def test_watches_on_same_path_are_one_notification(c, base):
    """exists and getData watches on one path by one connection yield one notification."""
    c.create(base + "/n", b"")
    c.exists(base + "/n", watch=True)
    c.get(base + "/n", watch=True)
    c.get(base + "/n", watch=True)
    c.set(base + "/n", b"1")
    assert c.take_events() == [ev(EV.NODE_DATA_CHANGED, base + "/n")]


def test_failed_write_fires_nothing(c, base):
    """A write that fails (bad version) triggers no watch."""
    c.create(base + "/n", b"")
    c.get(base + "/n", watch=True)
    assert c.err_of(OP.SET_DATA, enc_set_data(base + "/n", b"x", 9)) == ERR.BADVERSION
    assert c.take_events() == []
    assert c.no_event(0.2)


def test_other_clients_change_is_notified(shared_keeper, wire_factory, c, base):
    """A watch fires for changes made by another session, and the new data is then readable."""
    c.create(base + "/n", b"old")
    c.get(base + "/n", watch=True)
    w = wire_factory(shared_keeper)
    w.set(base + "/n", b"new")
    assert c.wait_event(5) == ev(EV.NODE_DATA_CHANGED, base + "/n")
    assert c.get(base + "/n")[0] == b"new"


def test_kazoo_watch_callbacks(zk, base):
    """kazoo watch callbacks get CHANGED, CHILD, CREATED and DELETED events with the path."""
    q = queue.Queue()
    zk.create(base + "/n", b"")
    zk.get(base + "/n", watch=q.put)
    zk.get_children(base, watch=q.put)
    zk.exists(base + "/later", watch=q.put)
    zk.set(base + "/n", b"x")
    e = q.get(timeout=5)
    assert (e.type, e.path, e.state) == ("CHANGED", base + "/n", "CONNECTED")
    zk.create(base + "/later")
    got = {(e.type, e.path) for e in (q.get(timeout=5), q.get(timeout=5))}
    assert got == {("CREATED", base + "/later"), ("CHILD", base)}
    zk.exists(base + "/later", watch=q.put)
    zk.delete(base + "/later")
    e = q.get(timeout=5)
    assert (e.type, e.path) == ("DELETED", base + "/later")


def test_kazoo_data_and_children_watch_recipes(zk, shared_keeper, kazoo_factory, base):
    """kazoo's DataWatch and ChildrenWatch recipes follow a series of changes."""
    writer = kazoo_factory(shared_keeper)
    zk.create(base + "/n", b"v0")
    datas, kids = [], []
    changed = threading.Condition()

    def on_data(data, stat):
        with changed:
            datas.append(data)
            changed.notify_all()

    def on_kids(children):
        with changed:
            kids.append(sorted(children))
            changed.notify_all()

    DataWatch(zk, base + "/n", on_data)
    ChildrenWatch(zk, base, on_kids)

    def wait_for(cond):
        with changed:
            assert changed.wait_for(cond, timeout=10), (datas, kids)

    wait_for(lambda: datas == [b"v0"] and kids == [["n"]])
    writer.set(base + "/n", b"v1")
    wait_for(lambda: datas[-1:] == [b"v1"])
    writer.create(base + "/m")
    wait_for(lambda: kids[-1:] == [["m", "n"]])
    writer.delete(base + "/n")
    wait_for(lambda: datas[-1:] == [None] and kids[-1:] == [["m"]])


# ---- persistent watches (addWatch) ---------------------------------------------------------


def test_add_watch_reply_body(c, base):
    """addWatch answers err 0 with a 4-byte zero body, also for a missing path."""
    assert c.add_watch(base, ADD_WATCH_MODE.PERSISTENT) == b"\x00\x00\x00\x00"
    assert c.add_watch(base + "/none", ADD_WATCH_MODE.PERSISTENT_RECURSIVE) == b"\x00\x00\x00\x00"


def test_persistent_watch_fires_repeatedly(c, base):
    """A persistent watch fires on every change, child change, delete and re-create of its node, not grandchildren."""
    p = base + "/pw"
    c.create(p, b"")
    c.add_watch(p, ADD_WATCH_MODE.PERSISTENT)
    c.set(p, b"1")
    c.set(p, b"2")
    assert c.take_events() == [ev(EV.NODE_DATA_CHANGED, p)] * 2
    c.create(p + "/kid", b"")
    assert c.take_events() == [ev(EV.NODE_CHILDREN_CHANGED, p)]
    c.create(p + "/kid/grand", b"")
    c.set(p + "/kid", b"x")
    assert c.take_events() == []
    c.delete(p + "/kid/grand")
    c.delete(p + "/kid")
    assert c.take_events() == [ev(EV.NODE_CHILDREN_CHANGED, p)]
    c.delete(p)
    c.create(p, b"")
    assert c.take_events() == [ev(EV.NODE_DELETED, p), ev(EV.NODE_CREATED, p)]


def test_persistent_recursive_watch_covers_subtree(c, base):
    """A recursive watch reports created/changed/deleted for the whole subtree and never NodeChildrenChanged."""
    r = base + "/rw"
    c.add_watch(r, ADD_WATCH_MODE.PERSISTENT_RECURSIVE)
    c.create(r, b"")
    c.create(r + "/a", b"")
    c.create(r + "/a/b", b"")
    c.set(r + "/a/b", b"x")
    c.delete(r + "/a/b")
    c.set(r, b"y")
    assert c.take_events() == [
        ev(EV.NODE_CREATED, r),
        ev(EV.NODE_CREATED, r + "/a"),
        ev(EV.NODE_CREATED, r + "/a/b"),
        ev(EV.NODE_DATA_CHANGED, r + "/a/b"),
        ev(EV.NODE_DELETED, r + "/a/b"),
        ev(EV.NODE_DATA_CHANGED, r),
    ]
    c.create(base + "/rw-sibling", b"")               # a path that merely shares the prefix
    assert c.take_events() == []


# ---- removeWatches / checkWatches -------------------------------------------------------------


def test_check_watches(c, base):
    """checkWatches answers 0 for a held watch and NoWatcher otherwise, including after a one-shot watch fired."""
    c.create(base + "/n", b"")
    assert c.err_of(OP.CHECK_WATCHES, enc_path_type(base + "/n", WATCHER_TYPE.ANY)) == ERR.NOWATCHER
    c.get(base + "/n", watch=True)
    assert c.err_of(OP.CHECK_WATCHES, enc_path_type(base + "/n", WATCHER_TYPE.DATA)) == 0
    assert c.err_of(OP.CHECK_WATCHES, enc_path_type(base + "/n", WATCHER_TYPE.ANY)) == 0
    assert c.err_of(OP.CHECK_WATCHES, enc_path_type(base + "/n", WATCHER_TYPE.CHILDREN)) == ERR.NOWATCHER
    c.set(base + "/n", b"x")
    assert c.err_of(OP.CHECK_WATCHES, enc_path_type(base + "/n", WATCHER_TYPE.DATA)) == ERR.NOWATCHER


def test_remove_watches_by_type(c, base):
    """removeWatches drops watches of the given type (empty reply), else NoWatcher; removed watches stay silent."""
    n = base + "/n"
    c.create(n, b"")
    c.get(n, watch=True)
    c.children(n, watch=True)
    hdr, body = c.call(OP.REMOVE_WATCHES, enc_path_type(n, WATCHER_TYPE.DATA))
    assert hdr.err == 0 and body == b""
    assert c.err_of(OP.REMOVE_WATCHES, enc_path_type(n, WATCHER_TYPE.DATA)) == ERR.NOWATCHER
    c.set(n, b"x")
    assert c.take_events() == []
    assert c.err_of(OP.REMOVE_WATCHES, enc_path_type(n, WATCHER_TYPE.ANY)) == 0
    c.create(n + "/kid", b"")
    assert c.take_events() == []
    assert c.err_of(OP.REMOVE_WATCHES, enc_path_type(n, WATCHER_TYPE.CHILDREN)) == ERR.NOWATCHER


def test_remove_persistent_watch(c, base):
    """removeWatches with type Any removes a persistent watch; it then stops firing."""
    n = base + "/n"
    c.create(n, b"")
    c.add_watch(n, ADD_WATCH_MODE.PERSISTENT)
    assert c.err_of(OP.CHECK_WATCHES, enc_path_type(n, WATCHER_TYPE.ANY)) == 0
    assert c.err_of(OP.REMOVE_WATCHES, enc_path_type(n, WATCHER_TYPE.ANY)) == 0
    c.set(n, b"x")
    assert c.take_events() == []


def test_remove_watches_leaves_other_connections_alone(shared_keeper, wire_factory, c, base):
    """removeWatches only removes the calling connection's watches."""
    n = base + "/n"
    c.create(n, b"")
    other = wire_factory(shared_keeper)
    other.get(n, watch=True)
    assert c.err_of(OP.REMOVE_WATCHES, enc_path_type(n, WATCHER_TYPE.DATA)) == ERR.NOWATCHER
    c.set(n, b"x")
    assert other.wait_event(5) == ev(EV.NODE_DATA_CHANGED, n)


# ---- setWatches after a reconnect -----------------------------------------------------------


def _reconnect(server, old):
    new = WireClient(server.port)
    s = new.connect(timeout_ms=4000, session_id=old.session.session_id, passwd=old.session.passwd,
                    last_zxid=old.last_zxid)
    assert s.session_id == old.session.session_id and s.timeout > 0
    new.last_zxid = old.last_zxid
    return new


def test_set_watches_delivers_missed_events(shared_keeper, wire_factory, base):
    """After a reconnect setWatches fires at once the events missed meanwhile and re-arms unchanged watches."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    for name in ("changed", "deleted", "same", "kids"):
        a.create(base + "/" + name, b"")
    a.get(base + "/changed", watch=True)
    a.get(base + "/deleted", watch=True)
    a.get(base + "/same", watch=True)
    a.exists(base + "/born", watch=True)
    a.children(base + "/kids", watch=True)
    a.close()                                       # drop the connection, keep the session

    b = wire_factory(shared_keeper)
    b.set(base + "/changed", b"x")
    b.delete(base + "/deleted")
    b.create(base + "/born", b"")
    b.create(base + "/kids/k", b"")

    a2 = _reconnect(shared_keeper, a)
    try:
        hdr, body = a2.call(OP.SET_WATCHES, enc_set_watches(
            a.last_zxid,
            data=[base + "/changed", base + "/deleted", base + "/same"],
            exist=[base + "/born"],
            child=[base + "/kids"]), xid=SET_WATCHES_XID)
        assert hdr.xid == SET_WATCHES_XID and hdr.err == 0 and body == b""
        got = a2.take_events()
        assert sorted(got) == sorted([
            ev(EV.NODE_DATA_CHANGED, base + "/changed"),
            ev(EV.NODE_DELETED, base + "/deleted"),
            ev(EV.NODE_CREATED, base + "/born"),
            ev(EV.NODE_CHILDREN_CHANGED, base + "/kids"),
        ])
        b.set(base + "/same", b"now")               # the re-armed watch still works
        assert a2.wait_event(5) == ev(EV.NODE_DATA_CHANGED, base + "/same")
    finally:
        a2.close()


def test_set_watches2_restores_persistent_watches(shared_keeper, wire_factory, base):
    """setWatches2 re-establishes persistent and recursive watches on a new connection."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    a.create(base + "/p", b"")
    a.create(base + "/r", b"")
    a.close()
    a2 = _reconnect(shared_keeper, a)
    try:
        a2.call(OP.SET_WATCHES2, enc_set_watches(a2.last_zxid, persistent=[base + "/p"],
                                                 recursive=[base + "/r"]), xid=SET_WATCHES_XID)
        assert a2.take_events() == []
        a2.set(base + "/p", b"1")
        a2.set(base + "/p", b"2")
        a2.create(base + "/r/deep", b"")
        assert a2.take_events() == [ev(EV.NODE_DATA_CHANGED, base + "/p")] * 2 + [
            ev(EV.NODE_CREATED, base + "/r/deep")]
    finally:
        a2.close()


def test_watches_do_not_follow_a_closed_connection(shared_keeper, wire_factory, base):
    """Watches belong to the connection: after a reconnect without setWatches none fire."""
    a = wire_factory(shared_keeper, timeout_ms=4000)
    a.create(base + "/n", b"")
    a.get(base + "/n", watch=True)
    a.close()
    a2 = _reconnect(shared_keeper, a)
    try:
        a2.set(base + "/n", b"x")
        assert a2.take_events() == []
    finally:
        a2.close()
