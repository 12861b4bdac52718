"""The keeper workload of the fault suite, and its checkers (tests/README.md, "The keeper
workload"). It knows nothing of how faults are made: run it, do faults, stop it, check.

    wl = KeeperWorkload(ensemble, seed=7, clients=5)     # or "h1:p1,h2:p2,..." / [(host, port)]
    wl.start()
    ...                                                  # faults, by whoever drives the run
    wl.stop()                                            # joins the threads, reads the final state
    res = wl.check()                                     # a KeeperResult
    assert res.passed, res.summary()
    wl.close()                                           # every client and session it opened

`clients` threads, each with its own kazoo client (client i lists member i first, then the
others, so clients are spread over the members and fail over to the rest), pick operations
with a random.Random seeded from (seed, client): the same seed gives the same choices
(`plan()`). Under one base znode of the run (`/chaos-keeper-<seed>-<hex>`):

- a register, `reg`: sync + getData; setData with the version this client last read (a
  compare-and-set); setData with version -1 (unconditional); getData without sync (a
  "local" read). Every value written is unique.
- a set, `set`: create of a unique child (an add); sync + getChildren (a read of the set).

ZooKeeper's writes are linearizable, its plain reads only sequentially consistent: a
member answers from its own state, which may lag the leader's, so a read there may miss a
write another client finished (Apache ZooKeeper 3.8 does, under this workload). Reads in
the linearizability check are therefore preceded by a sync on the same session (pipelined:
the member answers the read once it has caught up to the leader as of the sync); the local
reads are checked for what ZooKeeper does promise: a value some write made, and a session's
reads and acknowledged writes never going back in version.
- ephemerals, `eph`: ephemeral children named after the client and a counter, created in
  the client's session; now and then a client closes its session and opens another.
- sequential nodes, `seq`: persistent sequential children `s-<counter>` holding a unique
  value.
- watches: `watchers` threads with raw connections (zkwire.WireClient) keep a data watch
  on the register armed, re-arming it after each notification, and read it between times.

Every call is recorded (linearizable.Op, monotonic times) and classified with
ensemble.outcome: ok, failed (an error answer: no effect), unknown (no answer, connection
loss, expiry, or no answer within `op_timeout`: it may take effect later, or never).
`stop()` then reads the register and the set from every member that answers (after a sync;
these reads join the history) and checks the ephemerals twice: while the clients' sessions
live, then after they are closed.

check() runs:
- linearizability (linearizable.check) of the register (VersionedRegister, from ("init", 0))
  and of the set (GrowSet): stale reads, lost acknowledged writes, two CAS winning from one
  version, a failed CAS whose version matched, values or elements never written;
- ephemerals: an acknowledged ephemeral of a session alive at the end exists and is owned by
  it (no lost ephemeral); none exists that no call of ours created, or that is owned by a
  session other than the creating one, or that outlives its session once closed or expired
  (no phantom);
- sequential nodes: no counter given twice; a create acknowledged before another began got
  the smaller counter (the parent's counter is linearizable); at the end every
  acknowledged one is there with its value, and nothing else but creates whose answer was
  lost;
- watches: a registration fires at most once; a notification is seen before any read on the
  same connection shows data newer than the read that armed it, and the next read shows
  newer data (a notification for a real change); the data a session reads never goes back
  in zxid order; and when the server puts a zxid in the notification's header (ZooKeeper
  3.9+; kipper and ZooKeeper 3.8 send -1) that zxid lies after the arming read, at or before
  the next read, and grows from one notification to the next.
"""
import binascii
import collections
import os
import random
import socket
import threading
import time

from ensemble import outcome
from linearizable import FAIL, INFO, OK, GrowSet, Op, VersionedRegister
import linearizable

INIT_VALUE = "init"

# Operation kinds and their default weights.
WEIGHTS = {
    "read": 20,          # register sync + getData
    "local_read": 10,    # register getData without sync (sequentially consistent only)
    "cas": 25,           # register setData with the version last read
    "write": 8,          # register setData, version -1
    "add": 15,           # set: create a unique child
    "members": 8,        # set: sync + getChildren
    "ephemeral": 12,     # an ephemeral child in this session
    "sequential": 8,     # a persistent sequential child (the counter of its parent)
    "new_session": 2,    # close this client's session, open another
}


def _members_of(target):
    """[(host, port)] from an Ensemble, a connect string or a list of (host, port) / "host:port"."""
    if hasattr(target, "members"):
        return [(m.placement.host, m.port) for m in target.members]
    if isinstance(target, str):
        target = [h for h in target.split(",") if h]
    out = []
    for h in target:
        if isinstance(h, str):
            host, port = h.rsplit(":", 1)
            out.append((host, int(port)))
        else:
            out.append((h[0], int(h[1])))
    return out


def _hosts(members, first=0):
    order = members[first:] + members[:first]
    return ",".join("%s:%d" % m for m in order)


def _quiet_close(zk, timeout=10.0):
    """Stop and close a kazoo client in a thread (it may hang until the session timeout)."""
    def run():
        for fn in (zk.stop, zk.close):
            try:
                fn()
            except Exception:
                pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    return not t.is_alive()


class KeeperResult:
    """What check() found.

    seed; duration (s); counts {'attempted', 'ok', 'failed', 'unknown'} over the clients'
    calls (final reads and watcher reads not included); by_kind {kind: counts};
    violations [str] (empty: the run passed); inconclusive [str] (checks that could not
    decide, e.g. a linearizability search past its budget); timeline [(seconds since start,
    'ok'|'fail'|'unknown')], one per call at its completion (or when it was given up);
    register and set (linearizable.Result); ephemerals and watches (dicts of figures);
    notes [str]. passed is `not violations`; summary() is a printable report."""

    def __init__(self, seed):
        self.seed = seed
        self.duration = 0.0
        self.counts = dict(attempted=0, ok=0, failed=0, unknown=0)
        self.by_kind = {}
        self.violations = []
        self.inconclusive = []
        self.timeline = []
        self.register = None
        self.set = None
        self.ephemerals = {}
        self.watches = {}
        self.notes = []

    @property
    def passed(self):
        return not self.violations

    def summary(self):
        c = self.counts
        lines = ["keeper workload seed %s: %s in %.1f s; %d calls: %d ok, %d failed, %d unknown"
                 % (self.seed, "PASS" if self.passed else "FAIL (%d violations)" % len(self.violations),
                    self.duration, c["attempted"], c["ok"], c["failed"], c["unknown"])]
        for kind in sorted(self.by_kind):
            k = self.by_kind[kind]
            lines.append("  %-12s %5d calls: %d ok, %d failed, %d unknown"
                         % (kind, k["attempted"], k["ok"], k["failed"], k["unknown"]))
        for res in (self.register, self.set):
            if res is not None:
                lines.append("  " + res.explain().replace("\n", "\n  "))
        lines.append("  ephemerals: %s" % ", ".join("%s %s" % kv for kv in sorted(self.ephemerals.items())))
        lines.append("  watches: %s" % ", ".join("%s %s" % kv for kv in sorted(self.watches.items())))
        for n in self.notes:
            lines.append("  note: %s" % n)
        for i in self.inconclusive:
            lines.append("  inconclusive: %s" % i)
        for v in self.violations:
            lines.append("  VIOLATION: %s" % v)
        return "\n".join(lines)


class _Worker:
    def __init__(self, idx):
        self.idx = idx
        self.zk = None
        self.n = 0                  # counter for unique names
        self.last_version = None    # the register version this client last read
        self.sessions = []          # every session id this client had, in order
        self.closed = set()         # sessions it closed (close answered)
        self.expired = set()        # sessions kazoo reported lost


class _Registration:
    __slots__ = ("conn", "mzxid", "at")

    def __init__(self, conn, mzxid, at):
        self.conn, self.mzxid, self.at = conn, mzxid, at


class KeeperWorkload:
    """See the module's docstring."""

    def __init__(self, target, seed=None, clients=5, watchers=2, op_timeout=3.0, session_timeout=6.0,
                 think=0.004, weights=None, base=None, max_ops=20000):
        """target: an ensemble.Ensemble, a connect string or [(host, port)]. seed: None
        picks one (printed by summary()). op_timeout: seconds before a call without an
        answer is given up as unknown. session_timeout: asked of the server for every
        session. think: mean pause between one client's calls (s). max_ops: a bound on the
        recorded calls (each client stops when it has made its share)."""
        self.members = _members_of(target)
        assert self.members, "no members"
        self.seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
        self.nclients = clients
        self.nwatchers = watchers
        self.op_timeout = op_timeout
        self.session_timeout = session_timeout
        self.think = think
        self.weights = dict(weights or WEIGHTS)
        self.max_ops = max_ops
        self.base = base or "/chaos-keeper-%d-%s" % (self.seed, binascii.hexlify(os.urandom(3)).decode())
        self.reg = self.base + "/reg"
        self.setdir = self.base + "/set"
        self.ephdir = self.base + "/eph"
        self.seqdir = self.base + "/seq"
        self.history = []            # linearizable.Op of the register and set calls, final reads too
        self.eph_ops = []            # ephemeral creates: Op with meta name, sessions
        self.seq_ops = []            # sequential creates: Op, value the data, output the counter
        self.seq_final = None        # {counter: data} read at stop, None if no member answered
        self.other_ops = []          # session changes
        self.timeline = []
        self.violations = []         # found while running (watches) or at stop (ephemerals)
        self.notes = []
        self.eph_figures = collections.Counter()
        self.watch_figures = collections.Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = []
        self._workers = []
        self._extra_clients = []
        self._wire = []
        self.t0 = None
        self.t_end = None
        self.stopped = False

    # ---- op choices ------------------------------------------------------------------------

    def _chooser(self, client):
        rnd = random.Random("%s:%d" % (self.seed, client))
        kinds = sorted(self.weights)
        w = [self.weights[k] for k in kinds]
        while True:
            yield rnd.choices(kinds, w)[0], rnd.expovariate(1.0 / self.think) if self.think > 0 else 0.0

    def plan(self, client, n):
        """The first n (kind, pause) choices of a client: a function of the seed alone."""
        g = self._chooser(client)
        return [next(g) for _ in range(n)]

    # ---- clients -----------------------------------------------------------------------------

    def _kazoo(self, first, hosts=None):
        from kazoo.client import KazooClient
        return KazooClient(hosts=hosts or _hosts(self.members, first % len(self.members)),
                           timeout=self.session_timeout, randomize_hosts=False,
                           connection_retry=dict(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5))

    def _open(self, w):
        """A started client for worker w (None if it could not connect in time)."""
        from kazoo.protocol.states import KazooState
        zk = self._kazoo(w.idx)

        def listener(state, zk=zk, w=w):
            if state == KazooState.LOST:
                with self._lock:
                    if w.sessions:
                        w.expired.add(w.sessions[-1])
        zk.add_listener(listener)
        try:
            zk.start(timeout=max(self.op_timeout, 5.0))
        except Exception:
            _quiet_close(zk)
            return None
        w.zk = zk
        self._note_session(w)
        return zk

    @staticmethod
    def _sid(zk):
        cid = zk.client_id if zk is not None else None
        return cid[0] if cid else None

    def _note_session(self, w):
        sid = self._sid(w.zk)
        with self._lock:
            if sid and (not w.sessions or w.sessions[-1] != sid):
                if w.sessions and w.sessions[-1] not in w.closed:
                    w.expired.add(w.sessions[-1])      # kazoo moved to a new session: the old one expired
                w.sessions.append(sid)
        return sid

    # ---- running ---------------------------------------------------------------------------

    def setup(self):
        zk = self._kazoo(0)
        self._extra_clients.append(zk)
        zk.start(timeout=20)
        deadline = time.monotonic() + 20
        while True:
            try:
                zk.ensure_path(self.base)
                for path, data in ((self.reg, INIT_VALUE.encode()), (self.setdir, b""), (self.ephdir, b""),
                                   (self.seqdir, b"")):
                    if zk.exists(path) is None:
                        zk.create(path, data)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def start(self):
        """Create the znodes, start the client and watcher threads; returns self."""
        self.setup()
        self.t0 = time.monotonic()
        for i in range(self.nclients):
            w = _Worker(i)
            self._workers.append(w)
            if self._open(w) is None:
                raise RuntimeError("client %d could not connect" % i)
        for w in self._workers:
            t = threading.Thread(target=self._client_loop, args=(w,), name="kw-client-%d" % w.idx, daemon=True)
            self._threads.append(t)
        for i in range(self.nwatchers):
            t = threading.Thread(target=self._watch_loop, args=(i,), name="kw-watch-%d" % i, daemon=True)
            self._threads.append(t)
        for t in self._threads:
            t.start()
        return self

    def run(self, duration):
        """start(), run for `duration` seconds, stop(); returns check()."""
        self.start()
        self._stop.wait(duration)
        self.stop()
        return self.check()

    def ops_done(self):
        with self._lock:
            return len(self.history) + len(self.eph_ops)

    def ok_since(self, t):
        """Calls acknowledged after monotonic time t (to wait for the cluster to serve again)."""
        with self._lock:
            return sum(1 for tt, s in self.timeline if s == "ok" and tt + self.t0 > t)

    def _record(self, op, kind):
        st = {OK: "ok", FAIL: "fail", INFO: "unknown"}[op.type]
        end = op.complete if op.complete is not None else time.monotonic()
        op.meta["kind"] = kind
        with self._lock:
            self.timeline.append((end - self.t0, st))
            if kind == "ephemeral":
                self.eph_ops.append(op)
            elif kind == "sequential":
                self.seq_ops.append(op)
            elif kind == "new_session":
                self.other_ops.append(op)
            else:
                self.history.append(op)

    def _call(self, w, kind, f, value, async_call, on_ok):
        """Run one call; returns the recorded Op."""
        invoke = time.monotonic()
        sid0 = self._sid(w.zk)
        try:
            res = async_call().get(timeout=self.op_timeout)
        except Exception as exc:
            how = outcome(exc)
            name = type(exc).__name__
            if how == "failed":
                op = Op(w.idx, f, value, invoke=invoke, complete=time.monotonic(), type=FAIL, error=name)
            else:
                op = Op(w.idx, f, value, invoke=invoke, type=INFO, error=name)
        else:
            op = Op(w.idx, f, value, invoke=invoke, complete=time.monotonic(), type=OK)
            on_ok(op, res)
        op.meta["sessions"] = (sid0, self._note_session(w))
        self._record(op, kind)
        return op

    def _client_loop(self, w):
        share = max(1, self.max_ops // max(1, self.nclients))
        choices = self._chooser(w.idx)
        done = 0
        while not self._stop.is_set() and done < share:
            kind, pause = next(choices)
            if pause and self._stop.wait(min(pause, 1.0)):
                break
            if w.zk is None and self._open(w) is None:
                self._stop.wait(0.2)
                continue
            w.n += 1
            done += 1
            try:
                getattr(self, "_do_" + kind)(w)
            except Exception as exc:        # a bug of ours: keep it, do not hide it
                with self._lock:
                    self.notes.append("client %d: %s raised %r" % (w.idx, kind, exc))

    def _value(self, w):
        return "c%d-%d" % (w.idx, w.n)

    def _do_read(self, w):
        def ok(op, res):
            data, stat = res
            op.output = (data.decode(), stat.version)
            op.meta["mzxid"] = stat.mzxid
            w.last_version = stat.version
        self._call(w, "register", "read", None, lambda: self._synced(w.zk, self.reg, w.zk.get_async), ok)

    @staticmethod
    def _synced(zk, path, read):
        """sync then read, pipelined on the session: ZooKeeper serves a read from the member's
        own state, which may lag (reads are sequentially consistent, not linearizable); after
        a sync on the same session it has caught up with the leader as of the sync."""
        zk.sync_async(path)
        return read(path)

    def _do_local_read(self, w):
        """A plain getData with no sync: not in the linearizability check, but a session's
        reads must not go back, must see its own writes, and show a value some write wrote."""
        def ok(op, res):
            data, stat = res
            op.output = (data.decode(), stat.version)
            op.meta["mzxid"] = stat.mzxid
        self._call(w, "local", "read", None, lambda: w.zk.get_async(self.reg), ok)

    def _wrote(self, op, stat):
        op.output = stat.version
        op.meta["mzxid"] = stat.mzxid

    def _do_cas(self, w):
        if w.last_version is None:
            return self._do_read(w)
        expect, value = w.last_version, self._value(w)

        def ok(op, stat):
            self._wrote(op, stat)
            w.last_version = stat.version
        op = self._call(w, "register", "cas", (expect, value),
                        lambda: w.zk.set_async(self.reg, value.encode(), version=expect), ok)
        if op.type == FAIL and op.error != "BadVersionError":
            op.meta["uninformative"] = True

    def _do_write(self, w):
        value = self._value(w)
        self._call(w, "register", "write", value, lambda: w.zk.set_async(self.reg, value.encode(), version=-1),
                   lambda op, stat: self._wrote(op, stat))

    def _do_add(self, w):
        name = "e-" + self._value(w)
        self._call(w, "set", "add", name, lambda: w.zk.create_async(self.setdir + "/" + name, b""),
                   lambda op, res: None)

    def _do_members(self, w):
        def ok(op, res):
            op.output = frozenset(res)
        self._call(w, "set", "read", None,
                   lambda: self._synced(w.zk, self.setdir, w.zk.get_children_async), ok)

    def _do_ephemeral(self, w):
        name = self._value(w)
        op = self._call(w, "ephemeral", "create", name,
                        lambda: w.zk.create_async(self.ephdir + "/" + name, b"", ephemeral=True),
                        lambda op, res: None)
        return op

    def _do_sequential(self, w):
        def ok(op, path):
            op.output = int(path.rsplit("-", 1)[1])
        self._call(w, "sequential", "create", self._value(w),
                   lambda: w.zk.create_async(self.seqdir + "/s-", self._value(w).encode(), sequence=True), ok)

    def _do_new_session(self, w):
        invoke = time.monotonic()
        sid = self._sid(w.zk)
        zk, w.zk = w.zk, None
        try:
            zk.stop()               # sends closeSession and waits for its answer (or gives up)
            clean = True
        except Exception:
            clean = False
        _quiet_close(zk)
        with self._lock:
            if sid:
                (w.closed if clean else w.expired).add(sid)
        op = Op(w.idx, "close", sid, invoke=invoke, complete=time.monotonic(), type=OK)
        op.meta["sessions"] = (sid, None)
        self._record(op, "new_session")
        self._open(w)

    # ---- watches -----------------------------------------------------------------------------

    def _watch_violation(self, i, msg):
        with self._lock:
            self.violations.append("watcher %d: %s" % (i, msg))

    def _watch_loop(self, i):
        import zkwire
        rnd = random.Random("%s:watch:%d" % (self.seed, i))
        member = i % len(self.members)
        session = None            # (id, passwd) to resume
        conn_no = 0
        while not self._stop.is_set():
            host, port = self.members[member]
            member = (member + 1) % len(self.members)
            c = None
            try:
                c = zkwire.WireClient(port, host=host, timeout=self.op_timeout)
                with self._lock:
                    self._wire.append(c)
                if session:
                    s = c.connect(timeout_ms=int(self.session_timeout * 1000), session_id=session[0],
                                  passwd=session[1], last_zxid=session[2])
                    if s.timeout <= 0 or s.session_id == 0:
                        self.watch_figures["sessions expired"] += 1
                        c.close()
                        session = None
                        continue
                else:
                    s = c.connect(timeout_ms=int(self.session_timeout * 1000))
                    if s.timeout <= 0 or s.session_id == 0:
                        raise zkwire.ConnectionClosed("no session")
                    self.watch_figures["sessions"] += 1
                    last_mzxid = 0
                conn_no += 1
                session = (s.session_id, s.passwd, c.last_zxid)
                last_mzxid = self._watch_connection(i, c, conn_no, last_mzxid, rnd)
                session = (s.session_id, s.passwd, c.last_zxid)
            except Exception as exc:
                if not isinstance(exc, (zkwire.ConnectionClosed, zkwire.ZKError, socket.timeout, OSError)):
                    with self._lock:
                        self.notes.append("watcher %d: %r" % (i, exc))
                if session:
                    session = (session[0], session[1], max(session[2], c.last_zxid if c else 0))
                self._stop.wait(0.05)
            finally:
                if c is not None:
                    if self._stop.is_set() and session:
                        try:
                            c.close_session()
                        except Exception:
                            pass
                    c.close()

    def _watch_connection(self, i, c, conn_no, last_mzxid, rnd):
        """Keep a data watch on the register armed on connection c until stop (or an error
        ends the connection). Returns the newest mzxid read."""
        import zkwire
        armed = None           # the outstanding registration
        unverified = None      # a registration that fired: the next read must show newer data
        last_notified_zxid = None
        state = {"mzxid": last_mzxid}

        def take_events():
            nonlocal armed, unverified, last_notified_zxid
            while c.events:
                ev = c.events.popleft()
                hdr = c.event_headers.pop(0) if c.event_headers else None
                if ev.path != self.reg or ev.type != zkwire.EV.NODE_DATA_CHANGED:
                    self._watch_violation(i, "unexpected notification %r" % (ev,))
                    continue
                self.watch_figures["notifications"] += 1
                if armed is None:
                    self._watch_violation(i, "a notification with no registration outstanding on connection "
                                             "%d (a watch fired twice?)" % conn_no)
                    continue
                if hdr is not None and hdr.zxid not in (-1, 0):
                    self.watch_figures["notifications with a zxid"] += 1
                    if hdr.zxid <= armed.mzxid:
                        self._watch_violation(i, "notification zxid %#x not after the arming read's mzxid %#x"
                                              % (hdr.zxid, armed.mzxid))
                    if last_notified_zxid is not None and hdr.zxid <= last_notified_zxid:
                        self._watch_violation(i, "notification zxids out of order: %#x after %#x"
                                              % (hdr.zxid, last_notified_zxid))
                    last_notified_zxid = hdr.zxid
                unverified, armed = (armed, hdr.zxid if hdr is not None else -1), None

        def saw(stat, what):
            nonlocal unverified
            if stat.mzxid < state["mzxid"]:
                self._watch_violation(i, "%s went back: mzxid %#x after %#x in the same session"
                                      % (what, stat.mzxid, state["mzxid"]))
            state["mzxid"] = max(state["mzxid"], stat.mzxid)
            if unverified is not None:
                reg, nz = unverified
                if stat.mzxid <= reg.mzxid:
                    self._watch_violation(i, "a notification, but the next read shows no newer data "
                                             "(mzxid %#x, armed at %#x)" % (stat.mzxid, reg.mzxid))
                if nz not in (-1, 0, None) and stat.mzxid < nz:
                    self._watch_violation(i, "read after a notification of zxid %#x shows older mzxid %#x"
                                          % (nz, stat.mzxid))
                unverified = None

        while not self._stop.is_set():
            if armed is None:
                _, stat = c.get(self.reg, watch=True)
                take_events()            # notifications that came before this answer
                saw(stat, "the arming read")
                armed = _Registration(conn_no, stat.mzxid, time.monotonic())
                self.watch_figures["registrations"] += 1
                continue
            try:
                # wait_event hands the event back rather than leaving it queued (its header
                # is in event_headers): queue it again for take_events.
                c.events.appendleft(c.wait_event(timeout=0.02 + rnd.random() * 0.1))
            except socket.timeout:
                pass
            if self._stop.is_set():
                break
            _, stat = c.get(self.reg)    # a read between times: the ordering probe
            take_events()
            if armed is not None and stat.mzxid > armed.mzxid:
                self._watch_violation(i, "a read shows mzxid %#x, newer than the arming read's %#x, before "
                                         "the notification of that change" % (stat.mzxid, armed.mzxid))
                armed = None            # counted once
            saw(stat, "a read")
        if armed is not None:
            self.watch_figures["registrations outstanding at the end"] += 1
        return state["mzxid"]

    # ---- the end -----------------------------------------------------------------------------

    def stop(self, timeout=None):
        """Stop the threads, read the final state from every member, check the ephemerals."""
        if self.stopped:
            return
        self.stopped = True
        self._stop.set()
        self.t_end = time.monotonic()
        deadline = time.monotonic() + (timeout or self.op_timeout + 10)
        for t in self._threads:
            t.join(max(0.1, deadline - time.monotonic()))
            if t.is_alive():
                self.notes.append("thread %s still running after stop" % t.name)
        self._final_reads()
        self._read_sequentials()
        self._check_ephemerals()

    def _final_reads(self):
        for idx, (host, port) in enumerate(self.members):
            zk = self._kazoo(0, hosts="%s:%d" % (host, port))
            self._extra_clients.append(zk)
            try:
                zk.start(timeout=5)
            except Exception as exc:
                self.notes.append("member %s:%d gave no final read (%s)" % (host, port, type(exc).__name__))
                continue
            try:
                zk.sync(self.base)
                t = time.monotonic()
                data, stat = zk.get(self.reg)
                op = Op("final-%d" % (idx + 1), "read", output=(data.decode(), stat.version), invoke=t,
                        complete=time.monotonic())
                op.meta.update(kind="register", final=True, mzxid=stat.mzxid)
                self.history.append(op)
                t = time.monotonic()
                kids = zk.get_children(self.setdir)
                op = Op("final-%d" % (idx + 1), "read", output=frozenset(kids), invoke=t,
                        complete=time.monotonic())
                op.meta.update(kind="set", final=True)
                self.history.append(op)
            except Exception as exc:
                self.notes.append("member %s:%d: final read failed (%r)" % (host, port, exc))
            finally:
                _quiet_close(zk)

    def _read_sequentials(self):
        try:
            zk = self._checker_client()
            zk.sync(self.seqdir)
            out = {}
            for name in zk.get_children(self.seqdir):
                data, _ = zk.get(self.seqdir + "/" + name)
                out[int(name.rsplit("-", 1)[1])] = data.decode()
            self.seq_final = out
        except Exception as exc:
            self.notes.append("the sequential nodes could not be read at the end (%r)" % (exc,))

    def _check_sequentials(self):
        """Violations of the sequential nodes' promises (see the module's docstring)."""
        v = []
        acked = sorted((o for o in self.seq_ops if o.type == OK), key=lambda o: o.complete)
        by_counter = {}
        for o in acked:
            if o.output in by_counter:
                v.append("sequential counter %d given twice: %r and %r" % (o.output, by_counter[o.output], o))
            by_counter[o.output] = o
        # Real-time order: B invoked after A completed must get a larger counter. Walk the
        # calls by invocation, keeping the largest counter among those completed before.
        done = 0
        best = None
        for b in sorted(acked, key=lambda o: o.invoke):
            while done < len(acked) and acked[done].complete < b.invoke:
                if best is None or acked[done].output > best.output:
                    best = acked[done]
                done += 1
            if best is not None and b.output <= best.output:
                v.append("sequential create %r got counter %d, not above %d of %r that finished before it began"
                         % (b, b.output, best.output, best))
        if self.seq_final is None:
            return v
        values = {o.value: o for o in self.seq_ops}
        for o in acked:
            if self.seq_final.get(o.output) != o.value:
                v.append("acknowledged sequential node %d (%s) is %r at the end" % (o.output, o.value,
                                                                                   self.seq_final.get(o.output)))
        for counter, data in sorted(self.seq_final.items()):
            o = values.get(data)
            if o is None or o.type == FAIL:
                v.append("sequential node %d holds %r, which no create that could have succeeded wrote (%r)"
                         % (counter, data, o))
        return v

    def _ephemeral_state(self, zk):
        """{name: ephemeralOwner} under eph, after a sync."""
        from kazoo.exceptions import NoNodeError
        zk.sync(self.ephdir)
        out = {}
        for name in zk.get_children(self.ephdir):
            try:
                _, stat = zk.get(self.ephdir + "/" + name)
            except NoNodeError:
                continue
            out[name] = stat.ephemeralOwner
        return out

    def _checker_client(self):
        zk = self._kazoo(0)
        self._extra_clients.append(zk)
        zk.start(timeout=15)
        return zk

    def _sessions_for(self, op):
        """The sessions a create may have landed in: the one its client had when it
        was issued, and the client's later ones. kazoo keeps a request it has not
        sent yet across a reconnection and sends it on whatever session the client
        has then -- a new one if the old expired meanwhile (seen: a create issued
        while the client had no session, owned by its next one)."""
        sessions = self._workers[op.process].sessions
        first = op.meta["sessions"][0]     # None: issued between sessions; any of them, then
        return sessions[sessions.index(first):] if first in sessions else list(sessions)

    def _check_ephemerals(self):
        v = []
        creates = {op.value: op for op in self.eph_ops}
        fig = self.eph_figures
        fig["created ok"] = sum(1 for o in self.eph_ops if o.type == OK)
        fig["unknown"] = sum(1 for o in self.eph_ops if o.type == INFO)
        try:
            zk = self._checker_client()
        except Exception as exc:
            self.violations.append("ephemerals: no client could connect to check them (%r)" % (exc,))
            return
        # 1. While the sessions live. A client's session is alive when it is connected now.
        alive = {}
        for w in self._workers:
            ok = False
            if w.zk is not None:
                end = time.monotonic() + 10
                while time.monotonic() < end and not w.zk.connected:
                    time.sleep(0.05)
                ok = w.zk.connected
            sid = self._sid(w.zk) if ok else None
            if sid:
                self._note_session(w)
                alive[sid] = w.idx
        dead = set()
        for w in self._workers:
            dead |= {s for s in w.sessions if s not in alive}
        fig["sessions alive"] = len(alive)
        fig["sessions ended"] = len(dead)
        ours = alive.keys() | dead

        def phantoms(state):
            out = []
            for name, owner in sorted(state.items()):
                op = creates.get(name)
                if op is None:
                    out.append("ephemeral %s exists (owner %#x) but no call created it" % (name, owner))
                elif owner not in self._sessions_for(op):
                    out.append("ephemeral %s is owned by session %#x, not by the session that created it (%s)"
                               % (name, owner, ", ".join("%#x" % s for s in self._sessions_for(op))))
                elif op.type == FAIL:
                    out.append("ephemeral %s exists although its create failed (%s)" % (name, op.error))
            return out

        state = self._ephemeral_state(zk)
        v += phantoms(state)
        # Nodes of ended sessions go when the session does: a closed one at once, an
        # expired one within its time-out. Wait for that, bounded.
        limit = time.monotonic() + self.session_timeout * 2 + 5
        while any(owner in dead for owner in state.values()) and time.monotonic() < limit:
            time.sleep(0.2)
            state = self._ephemeral_state(zk)
        for name, owner in sorted(state.items()):
            if owner in dead:
                v.append("ephemeral %s outlived its session %#x (ended %.1f s ago or more)"
                         % (name, owner, time.monotonic() - self.t_end))
            elif owner not in ours:
                v.append("ephemeral %s is owned by %#x, no session of this run" % (name, owner))
        present = 0
        for op in self.eph_ops:
            s0, s1 = op.meta["sessions"]
            if op.type != OK or s0 != s1 or s0 not in alive:
                continue
            present += 1
            if op.value not in state:
                v.append("acknowledged ephemeral %s of session %#x (alive) is lost: %r" % (op.value, s0, op))
        fig["checked while alive"] = present
        # 2. After every session is closed, none remains.
        for w in self._workers:
            if w.zk is not None:
                sid = self._sid(w.zk)
                try:
                    w.zk.stop()
                    if sid:
                        w.closed.add(sid)
                except Exception:
                    pass
                _quiet_close(w.zk)
                w.zk = None
        limit = time.monotonic() + self.session_timeout * 2 + 5
        state = self._ephemeral_state(zk)
        while state and time.monotonic() < limit:
            time.sleep(0.2)
            state = self._ephemeral_state(zk)
        for name, owner in sorted(state.items()):
            v.append("ephemeral %s (session %#x) remains after every session was closed" % (name, owner))
        fig["remaining after close"] = len(state)
        self.violations += ["ephemerals: " + x for x in v]

    # ---- checking ----------------------------------------------------------------------------

    def check(self, budget=2000000, time_limit=20.0):
        """Check the recorded history and final state; returns a KeeperResult."""
        assert self.stopped, "stop() first"
        r = KeeperResult(self.seed)
        r.duration = (self.t_end or time.monotonic()) - (self.t0 or 0)
        calls = [o for o in self.history if not o.meta.get("final")] + self.eph_ops + self.seq_ops + self.other_ops
        for o in calls:
            st = {OK: "ok", FAIL: "failed", INFO: "unknown"}[o.type]
            k = r.by_kind.setdefault("%s %s" % (o.meta["kind"], o.f), dict(attempted=0, ok=0, failed=0, unknown=0))
            for d in (r.counts, k):
                d["attempted"] += 1
                d[st] += 1
        r.timeline = sorted(self.timeline)
        r.violations = list(self.violations)
        r.notes = list(self.notes)
        unexpected = [o for o in calls if o.type == FAIL and not (o.f == "cas" and o.error == "BadVersionError")]
        if unexpected:
            r.notes.append("%d calls failed with unexpected errors, e.g. %r" % (len(unexpected), unexpected[0]))

        reg = [o for o in self.history if o.meta["kind"] == "register" and not o.meta.get("uninformative")]
        sets = [o for o in self.history if o.meta["kind"] == "set"]
        for attr, model, ops in (("register", VersionedRegister((INIT_VALUE, 0)), reg), ("set", GrowSet(), sets)):
            res = linearizable.check(model, ops, budget=budget, time_limit=time_limit)
            setattr(r, attr, res)
            if res.valid is False:
                r.violations.append("the %s history is not linearizable:\n%s" % (model.name, res.explain()))
            elif res.valid != True:
                r.inconclusive.append("%s linearizability: %s" % (model.name, res.reason))
        if not any(o.meta.get("final") for o in self.history):
            r.violations.append("no member answered the final reads")
        r.violations += self._check_local_reads()
        r.violations += self._check_sequentials()
        r.ephemerals = dict(self.eph_figures)
        r.watches = dict(self.watch_figures)
        if self.nwatchers and not r.watches.get("notifications"):
            r.notes.append("the watchers saw no notification")
        return r

    def _check_local_reads(self):
        """Reads without sync: each shows a (value, version) some write made, and within one
        session a client's reads and acknowledged writes never go back in version."""
        made = {(INIT_VALUE, 0)}
        for o in self.history:
            if o.meta["kind"] == "register" and o.f in ("write", "cas") and o.type != FAIL:
                data = o.value[1] if o.f == "cas" else o.value
                made.add((data, o.output) if o.output is not None else (data, None))
        loose = {d for d, v in made if v is None}
        out = []
        last = {}                     # (client, session) -> (version, op)
        for o in sorted((o for o in self.history if not o.meta.get("final") and o.type == OK
                         and o.meta["kind"] in ("register", "local")), key=lambda o: o.complete):
            if o.meta["kind"] == "local" and tuple(o.output) not in made and o.output[0] not in loose:
                out.append("a read without sync shows %r, which no write made: %r" % (o.output, o))
            version = o.output[1] if o.f == "read" else o.output
            s0, s1 = o.meta["sessions"]
            if version is None or s0 != s1:
                continue
            prev = last.get((o.process, s0))
            if prev is not None and version < prev[0]:
                out.append("client %s went back from version %d to %d in session %#x: %r then %r"
                           % (o.process, prev[0], version, s0, prev[1], o))
            last[(o.process, s0)] = (version, o)
        return out

    def save(self, path):
        """Pickle what check() reads (seed, calls, figures) to re-check it later with load()."""
        import pickle
        with open(path, "wb") as f:
            pickle.dump({k: getattr(self, k) for k in self._SAVED}, f)

    _SAVED = ("seed", "members", "base", "history", "eph_ops", "seq_ops", "seq_final", "other_ops", "timeline",
              "violations", "notes",
              "eph_figures", "watch_figures", "t0", "t_end", "nwatchers", "stopped")

    @classmethod
    def load(cls, path):
        """A stopped workload from save(), for check() (no client, nothing to close)."""
        import pickle
        with open(path, "rb") as f:
            d = pickle.load(f)
        wl = cls(d["members"], seed=d["seed"])
        for k, v in d.items():
            setattr(wl, k, v)
        return wl

    def close(self):
        """Close every client and connection the workload opened (stop() first if needed)."""
        if not self.stopped:
            self._stop.set()
            for t in self._threads:
                t.join(self.op_timeout + 5)
            self.stopped = True
        for w in self._workers:
            if w.zk is not None:
                _quiet_close(w.zk)
                w.zk = None
        for zk in self._extra_clients:
            _quiet_close(zk)
        self._extra_clients = []
        with self._lock:
            wires, self._wire = self._wire, []
        for c in wires:
            c.close()
