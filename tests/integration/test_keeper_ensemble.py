"""Keeper ensembles (ZAB): 3 and 5 members on loopback, kazoo clients spread over them.

Replication (writes on any member visible on all after sync, identical zxids), a leader
crash during a stream of writes (no acknowledged write lost, sessions and ephemerals
kept, the time from the kill to the first successful write printed), the three ways a
learner syncs (DIFF after missing writes, SNAP after losing its data folder, TRUNC of a
proposal that never committed, asserted from the leader's log), a minority that must
not commit while the majority serves, and a history of concurrent conditional writes
through crash-and-restart rounds checked against one sequential order.

Run against Apache ZooKeeper 3.8 with KIPPER_TEST_TARGET=zookeeper. Each ensemble is
started once per class and healed (every member running and serving) before each test.
Random choices come from one seed per test, printed; KIPPER_TEST_SEED=<n> replays it.
"""
import os
import random
import re
import threading
import time

import pytest

import conftest
import harness
import zkwire
from ensemble import Ensemble, HistoryChecker, Op, await_op, close_client

PARTITION_LIMIT_S = 30.0     # longest a lone member may take to notice it lost the quorum


# ---- fixtures -----------------------------------------------------------------------------


@pytest.fixture
def seed(request):
    """The test's seed: KIPPER_TEST_SEED or a fresh one, printed for replay."""
    env = os.environ.get("KIPPER_TEST_SEED", "").strip()
    s = int(env) if env else random.SystemRandom().randrange(1 << 31)
    print("\n%s: KIPPER_TEST_SEED=%d (target %s)" % (request.node.name, s, conftest.TARGET))
    request.node.user_properties.append(("seed", s))
    return s


def _ensemble_fixture(n, request):
    e = Ensemble(n)
    try:
        t0 = time.monotonic()
        e.start()
        print("\n%d-member %s ensemble up in %.1f s (leader %d)"
              % (n, e.target, time.monotonic() - t0, e.leader().sid))
        yield e
    finally:
        conftest.close_ensemble(e, request)


@pytest.fixture(scope="class")
def ensemble3(request):
    yield from _ensemble_fixture(3, request)


@pytest.fixture(scope="class")
def ensemble5(request):
    yield from _ensemble_fixture(5, request)


def _ready(e):
    e.heal()            # a test before may have left a member down or paused
    e.close_clients()
    try:
        yield e
    finally:
        e.close_clients()


@pytest.fixture
def ens3(ensemble3):
    yield from _ready(ensemble3)


@pytest.fixture
def ens5(ensemble5):
    yield from _ready(ensemble5)


def make_base(e, request):
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:80]
    path = "/" + name
    c = e.client(e.leader())
    if c.exists(path):
        c.delete(path, recursive=True)
    c.create(path)
    close_client(c)
    return path


# ---- helpers ---------------------------------------------------------------------------------


def read_children(e, member, parent, stats=False):
    """{child: (data, Stat)} (or a set of names) of parent as `member` sees it after a sync."""
    c = e.client(member)
    try:
        c.sync(parent)
        names = c.get_children(parent)
        if not stats:
            return set(names)
        pending = [(n, c.get_async(parent + "/" + n)) for n in names]
        return {n: ar.get(timeout=30) for n, ar in pending}
    finally:
        close_client(c)


def assert_same_everywhere(e, parent, must_have=(), must_not_have=()):
    """Every member holds the same children of parent, with the same data and Stat;
    returns them."""
    views = {m.sid: read_children(e, m, parent, stats=True) for m in e.members}
    first = views[e.members[0].sid]
    for sid, v in views.items():
        assert set(v) == set(first), "member %d has children %s, member %d %s" % (
            sid, sorted(set(v) ^ set(first)), e.members[0].sid, "differs")
        for n, (data, st) in v.items():
            d0, s0 = first[n]
            assert (data, st.czxid, st.mzxid, st.version) == (d0, s0.czxid, s0.mzxid, s0.version), \
                "%s/%s differs: member %d %r, member %d %r" % (parent, n, sid, (data, st), e.members[0].sid, (d0, s0))
    missing = set(must_have) - set(first)
    assert not missing, "acknowledged writes missing on every member: %s" % sorted(missing)[:20]
    present = set(must_not_have) & set(first)
    assert not present, "nodes that must not exist: %s" % sorted(present)
    return first


def assert_zxids_equal(e):
    z = e.wait_zxids_equal()
    counts = {m.sid: e.mntr(m).get("zk_znode_count") for m in e.members}
    assert len(set(counts.values())) == 1 and None not in counts.values(), "znode counts differ: %s" % counts
    return z


def pipelined_creates(c, parent, prefix, n, value=b"x"):
    """Create parent/prefix-00000.. n nodes, pipelined; all must succeed. Returns the names."""
    names = ["%s-%05d" % (prefix, i) for i in range(n)]
    pending = [c.create_async(parent + "/" + name, value) for name in names]
    for ar in pending:
        ar.get(timeout=30)
    return names


class StreamWriter(threading.Thread):
    """Creates parent/tag-N one after another through one client, waiting at most
    `wait` s for each (then moving on, the create still pending); every attempt is
    an Op whose result arrives whenever it does."""

    def __init__(self, client, parent, tag, wait=5.0, max_pending=20):
        super().__init__(name="writer-%s" % tag, daemon=True)
        self.client, self.parent, self.tag, self.wait_s, self.max_pending = client, parent, tag, wait, max_pending
        self.ops = []
        self.halt = threading.Event()

    def run(self):
        n = 0
        pending = []
        while not self.halt.is_set():
            pending = [o for o in pending if o.status is None]
            if len(pending) >= self.max_pending:
                self.halt.wait(0.05)
                continue
            n += 1
            op = Op(0, n, "add", "%s-%06d" % (self.tag, n))
            self.ops.append(op)
            pending.append(op)
            ar = self.client.create_async(self.parent + "/" + op.key, op.key.encode(), include_data=True)
            await_op(op, ar, self.wait_s)

    def stop(self):
        self.halt.set()
        self.join(30)
        assert not self.is_alive(), "writer %s did not stop" % self.tag

    def acked(self):
        return [o for o in self.ops if o.status == "ok"]


def drain(ops, timeout=30.0):
    """Wait (bounded) for pending ops to be answered; the rest stay unknown."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(o.status is None for o in ops):
        time.sleep(0.05)
    for o in ops:
        if o.status is None:
            o.status, o.error = "unknown", "no answer"


# ---- 1. replication -------------------------------------------------------------------------


def check_writes_visible(e, base, seed):
    rng = random.Random(seed)
    clients = {m.sid: e.client(m) for m in e.members}
    written = {}
    for i in range(30):
        writer = rng.choice(e.members)
        c = clients[writer.sid]
        path = "%s/n%03d" % (base, i)
        data = ("w%d-%d" % (writer.sid, i)).encode()
        _, st = c.create(path, data, include_data=True)
        if rng.random() < 0.5:        # a conditional update through another member
            other = rng.choice(e.members)
            data = data + (b"-set-by-%d" % other.sid)
            st = clients[other.sid].set(path, data, version=0)
            assert st.version == 1
        written[path] = (data, st)
        # visible on every member right after a sync there
        for m in e.members:
            cm = clients[m.sid]
            cm.sync(path)
            d, s = cm.get(path)
            assert (d, s.mzxid, s.version) == (data, st.mzxid, st.version), \
                "member %d after sync: %r, written %r" % (m.sid, (d, s), (data, st))
    views = assert_same_everywhere(e, base, must_have=[p.rsplit("/", 1)[1] for p in written])
    assert len(views) == len(written)
    z = assert_zxids_equal(e)
    last = max(st.mzxid for _, st in written.values())
    assert z >= last, "members' zxid %#x is behind the last write's %#x" % (z, last)
    print("%d writes through %d members, zxid %#x on all" % (len(written), len(e), z))


# ---- 2. leader crash --------------------------------------------------------------------------


def check_leader_crash(e, base):
    from kazoo.protocol.states import KazooState
    leader = e.leader()
    survivors = [m for m in e.members if m is not leader]
    c0 = e.client(leader)
    c0.create(base + "/w")
    close_client(c0)
    writers, sessions, states = [], [], []
    for i, m in enumerate(survivors):
        c = e.client(m, all_hosts=True, timeout=10.0)    # its member first, then the others
        st = []
        c.add_listener(lambda s, st=st: st.append(s))
        c.create("%s/eph-%d" % (base, i), b"", ephemeral=True)
        sessions.append(c.client_id[0])
        states.append(st)
        writers.append(StreamWriter(c, base + "/w", "c%d" % i, wait=15.0))
    for w in writers:
        w.start()
    try:
        e.poll(lambda: sum(len(w.acked()) for w in writers) >= 20 * len(writers), timeout=30,
               what="writes before the crash")
        t_kill = time.monotonic()
        e.kill(leader)

        def after_kill(w):
            return [o for o in w.acked() if o.start > t_kill]
        e.poll(lambda: all(len(after_kill(w)) >= 50 for w in writers), timeout=60,
               what="every writer to commit 50 writes after the leader's crash")
    finally:
        for w in writers:
            w.stop()
    first_ok = min(o.end for w in writers for o in after_kill(w))
    new_leader = e.leader()
    lost_conn = sum(1 for w in writers for o in w.ops if o.status == "unknown")
    print("leader %d killed; member %d leads; kill to first successful write: %.3f s "
          "(%d writes acknowledged, %d with unknown outcome)"
          % (leader.sid, new_leader.sid, first_ok - t_kill, sum(len(w.acked()) for w in writers), lost_conn))
    assert new_leader is not leader

    e.start(leader)            # the old leader rejoins as a follower
    assert e.mode(leader) == "follower"
    for w in writers:
        drain(w.ops)
    acked = [o.key for w in writers for o in w.acked()]
    assert_same_everywhere(e, base + "/w", must_have=acked)
    views = assert_same_everywhere(e, base)
    for i, w in enumerate(writers):
        assert w.client.connected, "client %d is not connected" % i
        assert w.client.client_id[0] == sessions[i], "client %d got a new session" % i
        assert KazooState.LOST not in states[i], "client %d lost its session: %s" % (i, states[i])
        eph = views.get("eph-%d" % i)
        assert eph is not None, "ephemeral of client %d is gone" % i
        assert eph[1].ephemeralOwner == sessions[i]
    assert_zxids_equal(e)


# ---- 3. sync modes ------------------------------------------------------------------------------


def describe_sync(e, sid, marks):
    modes = e.sync_modes(sid, marks)
    print("member %d synced with %s" % (sid, modes))
    return modes


def check_diff(e, base):
    follower = e.followers()[0]
    e.kill(follower)
    c = e.client(e.leader())
    names = pipelined_creates(c, base, "d", 300)
    marks = e.log_marks()
    e.start(follower)
    modes = describe_sync(e, follower.sid, marks)
    assert modes and set(modes) == {"DIFF"}, "member %d down for 300 writes synced with %s, not DIFF" % (
        follower.sid, modes)
    assert_same_everywhere(e, base, must_have=names)
    assert_zxids_equal(e)


def check_snap(e, base):
    follower = e.followers()[-1]
    c = e.client(e.leader())
    before = pipelined_creates(c, base, "s0", 20)
    e.kill(follower)
    e.wipe(follower)
    after = pipelined_creates(c, base, "s1", 50)
    marks = e.log_marks()
    e.start(follower)
    modes = describe_sync(e, follower.sid, marks)
    assert modes and modes[0] == "SNAP" and set(modes) == {"SNAP"}, \
        "member %d with an empty data folder synced with %s, not SNAP" % (follower.sid, modes)
    assert os.path.exists(os.path.join(follower.data_dir, "myid"))
    assert_same_everywhere(e, base, must_have=before + after)
    assert_zxids_equal(e)


def uncommitted_proposal(e, base, tag):
    """Leave the leader with a proposal no follower ever saw, then crash all three:
    pause both followers (their processes stop reading), send a create to the leader,
    wait until the leader has written it to its transaction log, SIGKILL the leader,
    then SIGKILL the still-paused followers (the proposal dies unread in their socket
    buffers). Returns (old leader, the other members, the uncommitted path, the client
    that sent it: close it once the old leader serves again, so that its session ends
    by a close rather than by an expiry)."""
    assert len(e) == 3
    leader = e.leader()
    others = [m for m in e.members if m is not leader]
    # No session may outlive this: an expiry would be a transaction of the next epoch.
    e.close_clients()
    e.poll(lambda: e.mntr(leader).get("zk_global_sessions") == "0", timeout=40,
           what="sessions of earlier clients to end")
    c = e.client(leader, timeout=30.0)      # outlives the whole round
    c.create("%s/%s-committed" % (base, tag))
    e.wait_zxids_equal()
    for m in others:
        e.pause(m)
    path = "%s/%s-uncommitted" % (base, tag)
    op = Op(0, 0, "add", path)
    ar = c.create_async(path, b"must never commit", include_data=True)
    e.poll(lambda: path.encode() in leader.txn_log_bytes(), timeout=10,
           what="the leader to log the proposal of %s" % path)
    e.kill(leader)
    for m in others:
        e.kill(m)
    await_op(op, ar, 10)
    assert op.status in ("unknown", "failed"), "a write the followers never saw was answered: %r" % op
    return leader, others, path, c


def check_trunc(e, base):
    # a. The old leader returns before the new epoch has any transaction: ZooKeeper's
    #    leader answers TRUNC (back to the last committed zxid).
    old, others, path_a, ca = uncommitted_proposal(e, base, "a")
    e.start(others[0], wait=False)
    e.start(others[1], wait=False)
    e.wait_ready(sessions=False)           # opening a session would be a transaction
    new = e.leader()
    marks = e.log_marks()
    e.start(old, wait=False)
    e.wait_ready(sessions=False)
    modes = describe_sync(e, old.sid, marks)
    assert modes and modes[0] == "TRUNC", \
        "old leader %d holding an uncommitted proposal synced with %s, not TRUNC" % (old.sid, modes)
    e.poll(lambda: ca.connected, timeout=30, what="the client of the old leader to reconnect")
    close_client(ca)             # its session ends now, not by an expiry in the next round
    c = e.client(new)
    after_a = pipelined_creates(c, base, "after-a", 10)
    close_client(c)
    assert_same_everywhere(e, base, must_have=after_a + ["a-committed"],
                           must_not_have=[path_a.rsplit("/", 1)[1]])
    # the drop is durable: crashed and restarted, it does not bring the proposal back
    e.kill(old)
    e.start(old)
    assert_same_everywhere(e, base, must_have=after_a + ["a-committed"],
                           must_not_have=[path_a.rsplit("/", 1)[1]])

    # b. The survivors elect a leader and commit more writes (a new epoch) before the old
    #    leader returns; it must drop its uncommitted proposal (docs/zab.md, TRUNC) and get
    #    the new writes. ZooKeeper 3.8 cannot TRUNC across an epoch and sends a SNAP instead.
    old, others, path_b, cb = uncommitted_proposal(e, base, "b")
    e.start(others[0], wait=False)
    e.start(others[1], wait=False)
    e.wait_ready()
    new = e.leader()
    c = e.client(new)
    after_b = pipelined_creates(c, base, "after-b", 20)
    close_client(c)
    marks = e.log_marks()
    e.start(old)
    e.poll(lambda: cb.connected, timeout=30, what="the client of the old leader to reconnect")
    close_client(cb)
    modes = describe_sync(e, old.sid, marks)
    assert modes and modes[0] in ("TRUNC", "SNAP"), \
        "old leader %d (proposal of an older epoch) synced with %s" % (old.sid, modes)
    assert_same_everywhere(e, base, must_have=after_b + ["b-committed"],
                           must_not_have=[path_a.rsplit("/", 1)[1], path_b.rsplit("/", 1)[1]])
    assert_zxids_equal(e)


# ---- 4. partitions --------------------------------------------------------------------------------


def isolate(e, base, alone, tag):
    """Pause every member but `alone` (a minority); writes through `alone` must never
    succeed while it is cut off, and its clients must get errors. Then heal."""
    parent = "%s/%s" % (base, tag)
    c0 = e.client(e.leader())
    c0.create(parent)
    close_client(c0)
    writers = [StreamWriter(e.client(m, timeout=10.0), parent, "m%d" % m.sid, wait=3.0) for m in alone]
    for w in writers:
        w.start()
    try:
        e.poll(lambda: all(len(w.acked()) >= 5 for w in writers), timeout=30, what="writes before the partition")
        cut = [m for m in e.members if m not in alone]
        for m in cut:
            e.pause(m)
        t_cut = time.monotonic()       # every member of `cut` is stopped from here on
        # A leader without a quorum steps down, a follower without a leader looks for one:
        # neither serves.
        e.poll(lambda: all(e.mode(m) not in ("leader", "follower") for m in alone), timeout=PARTITION_LIMIT_S,
               what="the minority %s to stop serving" % [m.sid for m in alone])
        e.poll(lambda: all(any(o.end is not None and o.end >= t_cut and o.status in ("unknown", "failed")
                               for o in w.ops) for w in writers),
               timeout=PARTITION_LIMIT_S, what="the minority's clients to get errors")
        for m in alone:
            assert not e.serves_session(m), "member %d, cut off, opened a session" % m.sid
        t_heal = time.monotonic()
        for m in cut:
            e.resume(m)
    finally:
        for w in writers:
            w.stop()
    e.wait_ready()
    for w in writers:
        drain(w.ops)
        stale = [o for o in w.ops if o.start >= t_cut and o.status == "ok" and o.end < t_heal]
        assert not stale, "writes through cut-off member(s) %s succeeded: %s" % ([m.sid for m in alone], stale[:5])
        errors = [o for o in w.ops if o.end and t_cut <= o.end < t_heal and o.status != "ok"]
        print("cut off %s for %.1f s: %d errors (%s), no success"
              % ([m.sid for m in alone], t_heal - t_cut, len(errors),
                 sorted({str(o.error) for o in errors})))
    acked = [o.key for w in writers for o in w.acked()]
    assert_same_everywhere(e, parent, must_have=acked)
    assert_zxids_equal(e)


def majority_serves(e, base, cut):
    """Pause `cut` (a minority): once the leader has dropped them, writes through the
    others keep committing; the cut-off members' clients get errors and no success."""
    parent = base + "/majority"
    leader = e.leader()
    assert leader not in cut
    c0 = e.client(leader)
    c0.create(parent)
    close_client(c0)
    rest = [m for m in e.members if m not in cut]
    w_rest = [StreamWriter(e.client(m, timeout=10.0), parent, "m%d" % m.sid, wait=10.0) for m in rest]
    # a short session: the client gives up on a silent server after 2/3 of it
    w_cut = [StreamWriter(e.client(m, timeout=3.0), parent, "m%d" % m.sid, wait=3.0) for m in cut]
    for w in w_rest + w_cut:
        w.start()
    try:
        e.poll(lambda: all(len(w.acked()) >= 5 for w in w_rest + w_cut), timeout=30,
               what="writes before the partition")
        for m in cut:
            e.pause(m)
        t_cut = time.monotonic()       # every member of `cut` is stopped from here on
        e.poll(lambda: int(e.mntr(leader)["zk_synced_followers"]) == len(rest) - 1, timeout=PARTITION_LIMIT_S,
               what="leader %d to drop the cut-off followers (mntr zk_synced_followers)" % leader.sid)
        t_dropped = time.monotonic()
        e.poll(lambda: all(sum(1 for o in w.acked() if o.start > t_dropped) >= 20 for w in w_rest), timeout=30,
               what="the majority %s to keep committing" % [m.sid for m in rest])
        e.poll(lambda: all(any(o.end is not None and o.end >= t_cut and o.status in ("unknown", "failed")
                               for o in w.ops) for w in w_cut),
               timeout=PARTITION_LIMIT_S, what="the cut-off members' clients to get errors")
        t_heal = time.monotonic()
        for m in cut:
            e.resume(m)
    finally:
        for w in w_rest + w_cut:
            w.stop()
    e.wait_ready()
    for w in w_rest + w_cut:
        drain(w.ops)
    stale = [o for w in w_cut for o in w.ops if o.start >= t_cut and o.status == "ok" and o.end < t_heal]
    assert not stale, "writes through paused members succeeded: %s" % stale[:5]
    n = sum(1 for w in w_rest for o in w.acked() if t_cut < o.start and o.end < t_heal)
    errors = sorted({o.error for w in w_cut for o in w.ops if o.end and t_cut <= o.end < t_heal and o.error})
    print("majority %s committed %d writes in %.1f s while %s were cut off (leader noticed after %.1f s); "
          "their clients got %s" % ([m.sid for m in rest], n, t_heal - t_cut, [m.sid for m in cut],
                                    t_dropped - t_cut, errors))
    acked = [o.key for w in w_rest + w_cut for o in w.acked()]
    assert_same_everywhere(e, parent, must_have=acked)
    assert_zxids_equal(e)


# ---- 5. history -------------------------------------------------------------------------------------

HISTORY_CLIENTS = 4
HISTORY_KEYS = 3
HISTORY_ROUNDS = 4         # at least 3


class HistoryWorker(threading.Thread):
    """One client's loop: read a key (create it when missing), then pipeline a setData
    with the version read, sometimes a create of a unique node, sometimes a second
    setData expecting the first one's version."""

    def __init__(self, idx, client, base, rng, record):
        super().__init__(name="history-%d" % idx, daemon=True)
        self.idx, self.client, self.base, self.rng, self.record = idx, client, base, rng, record
        self.halt = threading.Event()
        self.seq = 0

    def op(self, kind, key, expect=None, value=None):
        self.seq += 1
        o = Op(self.idx, self.seq, kind, key, expect, value)
        o.session = self.client._session_id
        self.record(o)
        return o

    def value(self):
        return ("c%d-%d" % (self.idx, self.seq + 1)).encode()

    def run(self):
        c = self.client
        while not self.halt.is_set():
            key = "k%d" % self.rng.randrange(HISTORY_KEYS)
            path = "%s/keys/%s" % (self.base, key)
            g = self.op("get", key)
            ar = c.get_async(path)
            await_op(g, ar, 10.0)
            if g.status is None or g.status == "unknown":
                self.halt.wait(0.05)
                continue
            if g.status == "failed":          # NoNode: try to create it
                o = self.op("create", key, value=self.value())
                await_op(o, c.create_async(path, o.value, include_data=True), 10.0)
                continue
            batch = []
            o = self.op("set", key, expect=g.version, value=self.value())
            batch.append((o, c.set_async(path, o.value, version=o.expect)))
            if self.rng.random() < 0.3:
                a = self.op("add", "%s/log/c%d-%d" % (self.base, self.idx, self.seq + 1))
                batch.append((a, c.create_async(a.key, b"", include_data=True)))
            if self.rng.random() < 0.3:
                o2 = self.op("set", key, expect=g.version + 1, value=self.value())
                batch.append((o2, c.set_async(path, o2.value, version=o2.expect)))
            deadline = time.monotonic() + 10.0
            for o, ar in batch:
                await_op(o, ar, max(0.0, deadline - time.monotonic()))


def read_final(e, base):
    finals, finals_added = {}, {}
    for m in e.members:
        c = e.client(m)
        try:
            c.sync(base)
            keys = {}
            for i in range(HISTORY_KEYS):
                key = "k%d" % i
                st = c.exists("%s/keys/%s" % (base, key))
                if st is None:
                    keys[key] = None
                else:
                    data, st = c.get("%s/keys/%s" % (base, key))
                    keys[key] = (data, st.version, st.mzxid)
            finals[m.sid] = keys
            names = c.get_children(base + "/log")
            pending = [("%s/log/%s" % (base, n), c.exists_async("%s/log/%s" % (base, n))) for n in names]
            finals_added[m.sid] = {p: ar.get(timeout=30).czxid for p, ar in pending}
        finally:
            close_client(c)
    return finals, finals_added


def check_history(e, base, seed):
    rng = random.Random(seed)
    c0 = e.client(e.leader())
    c0.create(base + "/keys")
    c0.create(base + "/log")
    close_client(c0)
    ops, lock = [], threading.Lock()

    def record(o):
        with lock:
            ops.append(o)

    def acked_writes():
        with lock:
            return sum(1 for o in ops if o.status == "ok" and o.writes())

    workers = []
    for i in range(HISTORY_CLIENTS):
        member = e.members[i % len(e)]
        c = e.client(member, all_hosts=True, timeout=10.0)
        workers.append(HistoryWorker(i, c, base, random.Random(rng.randrange(1 << 30)), record))
    for w in workers:
        w.start()
    # Every fault hits a leader and a follower at least once each: kill -9, SIGTERM, SIGSTOP.
    actions = rng.sample(["kill", "stop", "pause"], 3)
    actions += [rng.choice(actions) for _ in range(HISTORY_ROUNDS - 3)]
    roles = ["leader", "follower"] * (HISTORY_ROUNDS // 2) + ["leader"] * (HISTORY_ROUNDS % 2)
    rng.shuffle(roles)
    rounds = []
    try:
        for r in range(HISTORY_ROUNDS):
            mark = acked_writes()
            e.poll(lambda: acked_writes() >= mark + 30, timeout=60, what="progress before round %d" % r)
            action, role = actions[r], roles[r]
            victim = e.leader() if role == "leader" else rng.choice(e.followers())
            rounds.append("%s %d (%s)" % (action, victim.sid, role))
            print("round %d: %s member %d (%s)" % (r, action, victim.sid, role))
            {"kill": e.kill, "stop": e.stop, "pause": e.pause}[action](victim)
            mark = acked_writes()
            e.poll(lambda: acked_writes() >= mark + 20, timeout=60,
                   what="the other members to commit writes without member %d" % victim.sid)
            e.heal()
        mark = acked_writes()
        e.poll(lambda: acked_writes() >= mark + 30, timeout=60, what="progress after the last round")
    finally:
        for w in workers:
            w.halt.set()
        for w in workers:
            w.join(30)
        assert not any(w.is_alive() for w in workers), "history workers did not stop"
    e.heal()
    drain(ops)
    finals, finals_added = read_final(e, base)
    counts = {}
    for o in ops:
        counts[(o.kind, o.status)] = counts.get((o.kind, o.status), 0) + 1
    print("history: %d ops %s; rounds: %s" % (len(ops), dict(sorted(counts.items())), "; ".join(rounds)))
    errors = HistoryChecker(ops, finals, finals_added).check()
    assert not errors, "history inconsistent (%d problems):\n%s" % (len(errors), "\n".join(errors[:20]))
    assert counts.get(("set", "ok"), 0) > 0 and counts.get(("add", "ok"), 0) > 0
    assert_zxids_equal(e)


# ---- the tests ----------------------------------------------------------------------------------------


class TestThreeMembers:
    def test_writes_visible_everywhere(self, ens3, request, seed):
        """Writes through any of 3 members are visible on all after sync, with identical zxids."""
        check_writes_visible(ens3, make_base(ens3, request), seed)

    def test_leader_crash_during_writes(self, ens3, request):
        """Leader SIGKILLed mid-stream: a new leader forms, no acked write lost, sessions kept."""
        check_leader_crash(ens3, make_base(ens3, request))

    def test_follower_rejoins_with_diff(self, ens3, request):
        """A follower down for 300 writes rejoins with a DIFF and catches up."""
        check_diff(ens3, make_base(ens3, request))

    def test_wiped_follower_rejoins_with_snap(self, ens3, request):
        """A follower whose data folder was wiped rejoins with a SNAP and has everything."""
        check_snap(ens3, make_base(ens3, request))

    def test_old_leader_truncates_uncommitted_proposal(self, ens3, request):
        """A crashed leader's proposal that no follower saw is truncated (TRUNC) when it rejoins."""
        check_trunc(ens3, make_base(ens3, request))

    def test_lone_member_cannot_commit(self, ens3, request):
        """One member cut off from the other two (as follower, then as leader) never commits a write."""
        base = make_base(ens3, request)
        isolate(ens3, base, [ens3.followers()[0]], "lone-follower")
        isolate(ens3, base, [ens3.leader()], "lone-leader")

    def test_moved_session_writes_nothing_through_its_old_member(self, ens3):
        """A session reopened on another member belongs to that member from then
        on: a write still sent on its old connection (a request in flight when the
        client moved, ZOOKEEPER-710) is refused with SESSIONMOVED (-118) and
        changes nothing, whichever members hold the two connections, while writes
        through the new one succeed (ZooKeeper's session owner, checked by the
        leader's PrepRequestProcessor)."""
        e = ens3
        leader = e.leader()
        members = [leader] + e.followers()
        for n, (old, new) in enumerate([(members[1], members[2]), (members[2], leader), (leader, members[1])]):
            first = zkwire.WireClient(old.port)
            second = zkwire.WireClient(new.port)
            try:
                s = first.connect(timeout_ms=6000)
                assert second.connect(timeout_ms=6000, session_id=s.session_id, passwd=s.passwd).session_id == \
                    s.session_id
                path = "/moved-%d" % n
                try:
                    err = first.err_of(zkwire.OP.CREATE, zkwire.enc_create(path, b"old"))
                except zkwire.ConnectionClosed:
                    err = "closed"   # the old member saw the move and let the connection go
                assert err in (zkwire.ERR.SESSIONMOVED, "closed"), (old, new, err)
                assert second.err_of(zkwire.OP.EXISTS, zkwire.enc_path_watch(path)) == zkwire.ERR.NONODE, (old, new)
                assert second.err_of(zkwire.OP.CREATE, zkwire.enc_create(path, b"new")) == zkwire.ERR.OK, (old, new)
            finally:
                first.close()
                second.close()

    def test_history_is_linearizable(self, ens3, request, seed):
        """Concurrent conditional writes through kill/stop/pause rounds fit one sequential order."""
        check_history(ens3, make_base(ens3, request), seed)


class TestFiveMembers:
    def test_writes_visible_everywhere(self, ens5, request, seed):
        """Writes through any of 5 members are visible on all after sync, with identical zxids."""
        check_writes_visible(ens5, make_base(ens5, request), seed)

    def test_leader_crash_during_writes(self, ens5, request):
        """Leader of 5 SIGKILLed mid-stream: no acked write lost, sessions kept."""
        check_leader_crash(ens5, make_base(ens5, request))

    def test_minority_cannot_commit_majority_serves(self, ens5, request):
        """Two members cut off never commit; two cut-off followers do not stop the other three."""
        base = make_base(ens5, request)
        isolate(ens5, base, ens5.followers()[:2], "two-followers")
        majority_serves(ens5, base, ens5.followers()[:2])


def test_history_checker_catches_violations():
    """The history checker flags lost, duplicated, stale and reordered writes (no servers)."""
    def op(client, seq, kind, key, expect=None, value=None, status="ok", version=None, zxid=None,
           start=0.0, end=1.0, data=None, error=None):
        o = Op(client, seq, kind, key, expect, value)
        o.status, o.version, o.zxid, o.start, o.end, o.data, o.error = status, version, zxid, start, end, data, error
        return o

    def run(ops, final, added=None):
        return HistoryChecker(ops, {1: final, 2: dict(final)}, {1: dict(added or {}), 2: dict(added or {})}).check()

    good = [op(0, 1, "create", "k0", value=b"a", version=0, zxid=10, start=0, end=1),
            op(0, 2, "set", "k0", 0, b"b", version=1, zxid=11, start=2, end=3),
            op(1, 1, "set", "k0", 0, b"c", status="failed", error="BadVersionError", start=2, end=3),
            op(1, 2, "set", "k0", 1, b"d", status="unknown", start=4, end=5),
            op(1, 3, "get", "k0", data=b"d", version=2, zxid=12, start=6, end=7),
            op(1, 4, "set", "k0", 2, b"e", status="unknown", start=8, end=9),
            op(0, 3, "set", "k0", 3, b"f", version=4, zxid=14, start=10, end=11),
            op(0, 4, "add", "/l/x", version=0, zxid=15, start=12, end=13)]
    assert run(good, {"k0": (b"f", 4, 14)}, {"/l/x": 15}) == []
    # an acknowledged write lost
    assert run(good, {"k0": (b"d", 2, 12)}, {"/l/x": 15})
    # an acknowledged unique create missing
    assert run(good, {"k0": (b"f", 4, 14)}, {})
    # two acknowledged writes claim the same version
    dup = good + [op(2, 1, "set", "k0", 0, b"g", version=1, zxid=16, start=2, end=3)]
    assert run(dup, {"k0": (b"f", 4, 14)}, {"/l/x": 15})
    # a read shows a value that failed
    bad_read = good + [op(2, 1, "get", "k0", data=b"c", version=1, zxid=11, start=4, end=5)]
    assert run(bad_read, {"k0": (b"f", 4, 14)}, {"/l/x": 15})
    # real-time order: a write acknowledged before another started has a larger zxid
    rt = [op(0, 1, "add", "/l/a", version=0, zxid=20, start=0, end=1),
          op(1, 1, "add", "/l/b", version=0, zxid=19, start=2, end=3)]
    assert run(rt, {}, {"/l/a": 20, "/l/b": 19})
    # members disagree
    assert HistoryChecker(good, {1: {"k0": (b"f", 4, 14)}, 2: {"k0": (b"d", 2, 12)}},
                          {1: {"/l/x": 15}, 2: {"/l/x": 15}}).check()
    # a version reached with no write producing it
    gap = [op(0, 1, "create", "k0", value=b"a", version=0, zxid=10),
           op(0, 2, "set", "k0", 2, b"b", version=3, zxid=12, start=2, end=3)]
    assert run(gap, {"k0": (b"b", 3, 12)})


@pytest.fixture
def named_ensemble(request):
    yield from conftest.started_ensemble(request, 3, target="kipper",
                                         placement=lambda sid: harness.Placement(host="localhost"))


def test_members_named_by_host_name(named_ensemble):
    """An ensemble whose server.N lines name "localhost" instead of an address:
    each follower looks its leader's name up off the event loop
    (base/resolver.h), syncs, and a write through one member is read on
    every other."""
    e = named_ensemble
    leader = e.leader()
    assert len(e.followers()) == 2
    writer = e.client(leader)
    writer.create("/named", b"by-name")
    e.wait_zxids_equal()
    for m in e.followers():
        reader = e.client(m)
        reader.sync("/named")
        assert reader.get("/named")[0] == b"by-name", m.sid


def test_member_whose_name_does_not_resolve(request):
    """A server.N line naming a host that does not resolve (yet: a DNS record
    that comes later, as on Kubernetes) does not keep the other members from
    starting, as it does not in ZooKeeper: they look the name up each time they
    dial it, off the event loop, and the two that resolve elect a leader and
    serve a write."""
    e = Ensemble(3, target="kipper",
                 placement=lambda sid: harness.Placement(host="nosuchhost.invalid") if sid == 2
                 else harness.LOOPBACK)
    try:
        e.start(e.member(1), wait=False)
        e.start(e.member(3))
        assert sorted(m.sid for m in e.live()) == [1, 3]
        leader = e.leader()
        assert [m.sid for m in e.followers()] == [1 if leader.sid == 3 else 3]
        e.client(leader).create("/without-2", b"quorum of two")
        follower = e.followers()[0]
        reader = e.client(follower)
        reader.sync("/without-2")
        assert reader.get("/without-2")[0] == b"quorum of two"
    finally:
        conftest.close_ensemble(e, request)
