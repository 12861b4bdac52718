"""Migrating a running Apache ZooKeeper ensemble to kipper, member by member, under load
(issue 14; the procedure is docs/migrating-from-zookeeper.md).

    report = run_migration(3, dwell_s=4.0)     # test_keeper_migration.py
    assert not report.problems

    /usr/bin/python3 tests/integration/migration.py --members 5 --dwell 15   # make migrate-demo

An ensemble of n Apache ZooKeeper 3.8 members (each with a dataLogDir of its own and a small
snapCount, so ZooKeeper takes fuzzy snapshots and rolls its logs while the load runs) serves:

- kazoo clients (one session each, all hosts in their connect string), each holding an
  ephemeral and looping: a conditional setData of its own key pipelined with a create of a
  unique node, every call recorded as an ensemble.Op;
- the C client (cli_mt, libzookeeper-mt), one session with an ephemeral, creating a node
  every 0.2 s;
- a kipper broker whose coordinator is the ensemble (a chroot), with an idempotent acks=all
  producer (repl_cluster.Stream).

Then each member in turn, followers first and the leader last, is stopped (SIGTERM) and
started again as `kipper keeper` on the same zoo.cfg, myid, dataDir and dataLogDir
(Ensemble.replace), and the next waits until it is synced (`srvr` Mode: follower on it, the
leader's `mntr` zk_synced_followers counting every other member) and the load has made
progress. Last, one kipper follower is replaced back by ZooKeeper the same way.

The report says what the clients saw and what the members hold at the end; its `problems`
are: any client error but a connection loss (a move), a session that changed or expired,
an ephemeral gone, a history of writes that no sequential order explains
(ensemble.HistoryChecker: every acknowledged write present with the zxid and version it
was acknowledged with), members whose trees differ in any node's data or Stat, and an
acknowledged Kafka record missing from the broker's log.
"""
import argparse
import collections
import os
import re
import select
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import apache_zk  # noqa: E402
import zk_clients  # noqa: E402
from ensemble import Ensemble, HistoryChecker, Op, await_op, close_client  # noqa: E402

BASE = "/mig"
SNAP_COUNT = 400           # ZooKeeper snapshots every 200..400 transactions: fuzzy ones, under load
PREALLOC_KB = 256          # each log roll preallocates this (64 MiB by default: gigabytes at this snapCount)
SESSION_S = 20.0           # kazoo session timeout (the ensemble allows up to 30 s)
BROKER_SESSION_MS = 10000  # the broker's coordinator session
TOPIC = "migration"
PARTITIONS = 2


# ---- kazoo workers -----------------------------------------------------------------------


STALE_AFTER_UNKNOWN = "BadVersionError after a set of unknown outcome"


class KazooWorker(threading.Thread):
    """One kazoo session: an ephemeral BASE/eph/k<i>, then setData of BASE/keys/k<i> (the
    version it last saw; a get first whenever it does not know it) pipelined with a create
    of BASE/log/k<i>-<n>."""

    def __init__(self, idx, client, record):
        super().__init__(name="kazoo-%d" % idx, daemon=True)
        self.idx, self.client, self.record = idx, client, record
        self.halt = threading.Event()
        self.seq = 0
        self.states = []
        self.session = client.client_id[0]
        self.key = "k%d" % idx
        self.path = "%s/keys/%s" % (BASE, self.key)
        self.ephemeral = "%s/eph/k%d" % (BASE, idx)
        client.add_listener(lambda state: self.states.append(str(state)))

    def op(self, kind, key, expect=None, value=None):
        self.seq += 1
        o = Op(self.idx, self.seq, kind, key, expect, value)
        o.session = self.client.client_id[0] if self.client.client_id else None
        self.record(o)
        return o

    def setup(self):
        self.client.create(self.ephemeral, b"", ephemeral=True)
        o = self.op("create", self.key, value=b"k%d-0" % self.idx)
        await_op(o, self.client.create_async(self.path, o.value, include_data=True), 30)
        assert o.status == "ok", o

    def run(self):
        c = self.client
        version = 0
        # A set whose outcome is unknown (its connection lost) may still commit after the
        # re-read that follows it, on a member that had not applied it yet: the next set then
        # expects a stale version. ZooKeeper answers BadVersion there too; the history check
        # still holds every answer to one order.
        unknown_before = False
        while not self.halt.is_set():
            if version is None:
                g = self.op("get", self.key)
                await_op(g, c.get_async(self.path), 10.0)
                if g.status != "ok":
                    self.halt.wait(0.05)
                    continue
                version = g.version
            s = self.op("set", self.key, expect=version, value=b"k%d-%d" % (self.idx, self.seq + 1))
            a = self.op("add", "%s/log/k%d-%06d" % (BASE, self.idx, self.seq + 1))
            pending = [(s, c.set_async(self.path, s.value, version=version)),
                       (a, c.create_async(a.key, b"", include_data=True))]
            deadline = time.monotonic() + 10.0
            for o, ar in pending:
                await_op(o, ar, max(0.0, deadline - time.monotonic()))
            if s.status == "failed" and s.error == "BadVersionError" and unknown_before:
                s.error = STALE_AFTER_UNKNOWN
            if s.status in ("ok", "unknown"):
                unknown_before = s.status == "unknown"
            version = s.version if s.status == "ok" else None


# ---- the C client ------------------------------------------------------------------------


class CliLoad(threading.Thread):
    """One cli_mt session (libzookeeper-mt) on every member: an ephemeral BASE/eph/cli, then a
    create every 0.2 s; its printed answers are counted by return code. cli_mt prints "Got a
    new session id" whenever its session id changes, so one such line means one session."""

    RC_RE = re.compile(r"^\[(?P<path>[^\]]*)\]: rc = (?P<rc>-?\d+)$", re.M)
    SESSION_RE = re.compile(r"Got a new session id: (0x[0-9a-f]+)")

    def __init__(self, hosts):
        super().__init__(name="cli_mt", daemon=True)
        self.proc = subprocess.Popen([zk_clients.CLI_MT, hosts], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=zk_clients.CLIENT_ENV)
        self.out = ""
        self.halt = threading.Event()
        self.sent = 0
        self._lock = threading.Lock()
        self._read_until(lambda: self.SESSION_RE.search(self.out), 30, "cli_mt's session")
        self.session = int(self.SESSION_RE.search(self.out).group(1), 16)
        self._send("create +e %s/eph/cli" % BASE)
        self._read_until(lambda: self.answers().get("%s/eph/cli" % BASE), 30, "cli_mt's ephemeral")
        assert self.answers()["%s/eph/cli" % BASE] == [0], self.out

    def _send(self, line):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def _pump(self, wait):
        r, _, _ = select.select([self.proc.stdout], [], [], wait)
        if r:
            data = os.read(self.proc.stdout.fileno(), 65536)
            if data:
                with self._lock:
                    self.out += data.decode(errors="replace")
                return True
        return False

    def _read_until(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError("no %s from cli_mt; it printed:\n%s" % (what, self.out[-4000:]))
            self._pump(0.1)

    def answers(self):
        """{path: [rc, ...]} of every answer printed so far."""
        out = collections.defaultdict(list)
        with self._lock:
            text = self.out
        for m in self.RC_RE.finditer(text):
            out[m.group("path")].append(int(m.group("rc")))
        return out

    def sessions(self):
        with self._lock:
            return [int(s, 16) for s in self.SESSION_RE.findall(self.out)]

    def run(self):
        next_at = time.monotonic()
        while not self.halt.is_set():
            if time.monotonic() >= next_at:
                self._send("create %s/cli/n%06d" % (BASE, self.sent))
                self.sent += 1
                next_at += 0.2
            self._pump(0.05)

    def finish(self, timeout=20.0):
        """Stop sending, wait for the answers still due, leave the session open (its
        ephemeral is checked after). Returns {rc: count} of the creates."""
        self.halt.set()
        self.join(10)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            a = self.answers()
            if sum(len(v) for p, v in a.items() if p.startswith(BASE + "/cli/")) >= self.sent:
                break
            self._pump(0.1)
        return collections.Counter(rc for p, v in self.answers().items() if p.startswith(BASE + "/cli/") for rc in v)

    def acked(self):
        return sorted(p for p, v in self.answers().items() if p.startswith(BASE + "/cli/") and 0 in v)

    def close(self):
        if self.proc.poll() is None:
            try:
                self._send("quit")
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()


# ---- reading the members -----------------------------------------------------------------


def dump_tree(client, root):
    """{path: (data, ZnodeStat)} for root and everything under it, read level by level
    with pipelined calls."""
    out = {}
    level = [root]
    while level:
        gets = [(p, client.get_async(p)) for p in level]
        kids = [(p, client.get_children_async(p)) for p in level]
        nxt = []
        for p, ar in gets:
            data, st = ar.get(timeout=30)
            out[p] = (data, st)
        for p, ar in kids:
            nxt += [(p.rstrip("/") + "/" + k) for k in ar.get(timeout=30)]
        level = nxt
    return out


def read_member(e, m, roots):
    """(trees {root: dump}, finals for HistoryChecker, finals_added) as member m holds them,
    after a sync."""
    c = e.client(m)
    try:
        for r in roots:
            c.sync(r)
        trees = {r: dump_tree(c, r) for r in roots}
        mig = trees[BASE]
        keys = {}
        for p, (data, st) in mig.items():
            if p.startswith(BASE + "/keys/"):
                keys[p.rsplit("/", 1)[1]] = (data, st.version, st.mzxid)
        added = {p: st.czxid for p, (_, st) in mig.items() if p.startswith(BASE + "/log/")}
        return trees, keys, added
    finally:
        close_client(c)


# ---- the scenario ------------------------------------------------------------------------


class Report:
    def __init__(self):
        self.steps = []          # (what, seconds, sync mode the leader logged)
        self.counts = collections.Counter()
        self.errors = collections.Counter()
        self.cli = collections.Counter()
        self.kafka = {}
        self.lost = collections.Counter()
        self.problems = []

    def text(self):
        lines = ["steps:"]
        for what, secs, mode in self.steps:
            lines.append("  %-55s %5.1f s  %s" % (what, secs, mode or ""))
        lines.append("kazoo operations: %s" % dict(sorted(self.counts.items())))
        lines.append("kazoo errors by kind: %s" % (dict(self.errors) or "none"))
        lines.append("C client creates by return code: %s" % dict(self.cli))
        lines.append("kafka: %s" % self.kafka)
        lines.append("acknowledged writes lost: %s (total %d)" % (dict(self.lost) or "none", sum(self.lost.values())))
        lines.append("problems: %s" % ("none" if not self.problems else "\n  " + "\n  ".join(self.problems)))
        return "\n".join(lines)


def _modes(e, sid, marks):
    try:
        return ",".join(e.sync_modes(sid, since=marks)) or None
    except Exception:
        return None


def run_migration(n=3, dwell_s=4.0, clients=3, log=print, keep=False):
    """The whole procedure; returns a Report. dwell_s: how long the load runs between two
    steps (at least; each step also waits for progress)."""
    if not apache_zk.available() or not zk_clients.cli_mt_available():
        raise RuntimeError("Apache ZooKeeper 3.8 and its C client are needed")
    from repl_cluster import ReplCluster, Stream, check_stream
    rep = Report()
    e = Ensemble(n, target="zookeeper", data_log_dirs=True, extra={"snapCount": SNAP_COUNT,
                                                                     "preAllocSize": PREALLOC_KB})
    ops, lock = [], threading.Lock()
    workers, cli, cluster, stream = [], None, None, None

    def record(o):
        with lock:
            ops.append(o)

    def acked():
        with lock:
            return sum(1 for o in ops if o.status == "ok" and o.writes())

    def progress(more, what, timeout=60):
        mark = acked()
        e.poll(lambda: acked() >= mark + more, timeout=timeout,
               what=lambda: "%d more acknowledged writes %s (%d so far)" % (more, what, acked() - mark))
        if stream is not None:
            stream.wait_progress(20, timeout=timeout)

    t_start = time.monotonic()
    failure = None
    try:
        t0 = time.monotonic()
        e.start()
        rep.steps.append(("Apache ZooKeeper ensemble of %d up (leader %d)" % (n, e.leader().sid),
                          time.monotonic() - t0, None))
        c0 = e.client(e.leader())
        for p in ("keys", "log", "eph", "cli"):
            c0.create("%s/%s" % (BASE, p), makepath=True)
        close_client(c0)
        # the load
        for i in range(clients):
            c = e.client(e.members[i % n], all_hosts=True, timeout=SESSION_S)
            w = KazooWorker(i, c, record)
            w.setup()
            workers.append(w)
        cli = CliLoad(e.hosts())
        cluster = ReplCluster(e.hosts(), "/kafka-migration", ids=(1,),
                              extra={"zookeeper.session.timeout.ms": BROKER_SESSION_MS,
                                     "default.replication.factor": 1, "min.insync.replicas": 1})
        cluster.start()
        cluster.create_topic(TOPIC, partitions=PARTITIONS, rf=1)
        stream = Stream(cluster.bootstrap, TOPIC, PARTITIONS, rate=200)
        for w in workers:
            w.start()
        cli.start()
        stream.start()
        progress(50, "before the first step")
        time.sleep(dwell_s)      # load runs: ZooKeeper snapshots and rolls its logs meanwhile

        # followers first, the leader last
        leader = e.leader()
        order = sorted((m for m in e.members if m is not leader), key=lambda m: m.sid) + [leader]
        for m in order:
            role = "leader" if m is leader else "follower"
            t0 = time.monotonic()
            e.stop(m)
            if m is leader:
                # the others elect a leader among themselves and serve before it comes back
                e.wait_ready()
            new = e.replace(m, "kipper")
            marks = e.log_marks()
            e.start(new)        # waits: one leader, every member following it and synced, sessions open
            mode = _modes(e, m.sid, marks)
            loaded = re.search(r"loaded snapshot (\S+)", new.server_log())
            if not loaded or "no intact snapshot" in new.server_log():
                rep.problems.append("member %d: kipper did not start from ZooKeeper's snapshot:\n%s"
                                    % (m.sid, "\n".join(new.server_log().splitlines()[:20])))
            rep.steps.append(("member %d (%s) replaced by kipper" % (m.sid, role), time.monotonic() - t0, mode))
            log("member %d (%s) now kipper in %.1f s; leader %d; sync %s"
                % (m.sid, role, time.monotonic() - t0, e.leader().sid, mode))
            progress(50, "after member %d became kipper" % m.sid)
            time.sleep(dwell_s)

        # and one back
        e.wait_ready()
        back = e.followers()[0]
        t0 = time.monotonic()
        e.stop(back)
        new = e.replace(back, "zookeeper")
        marks = e.log_marks()
        e.start(new)
        mode = _modes(e, back.sid, marks)
        rep.steps.append(("member %d (follower) replaced back by ZooKeeper" % back.sid, time.monotonic() - t0, mode))
        log("member %d back to ZooKeeper in %.1f s; sync %s" % (back.sid, time.monotonic() - t0, mode))
        progress(50, "after member %d went back to ZooKeeper" % back.sid)
        time.sleep(dwell_s)
    except BaseException as exc:      # raised below, once the clients and members are stopped
        failure = exc
    finally:
        for w in workers:
            w.halt.set()
        for w in workers:
            w.join(30)
        cli_rcs = cli.finish() if cli is not None else collections.Counter()
        unflushed = stream.stop() if stream is not None else None

    try:
        if failure is not None:
            raise failure
        e.wait_ready()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(o.status is None for o in ops):
            time.sleep(0.05)
        for o in ops:
            if o.status is None:
                o.status, o.error = "unknown", "no answer"
        for o in ops:
            rep.counts["%s %s" % (o.kind, o.status)] += 1
            if o.error:
                rep.errors[o.error] += 1
        rep.cli = cli_rcs
        # clients: only moves
        bad = {k: v for k, v in rep.errors.items() if k not in ("ConnectionLoss", STALE_AFTER_UNKNOWN)}
        if bad:
            rep.problems.append("kazoo errors other than connection loss: %s" % bad)
        for w in workers:
            if w.client.client_id is None or w.client.client_id[0] != w.session:
                rep.problems.append("kazoo client %d: session 0x%x became %s" % (w.idx, w.session, w.client.client_id))
            if "LOST" in w.states:
                rep.problems.append("kazoo client %d lost its session (states %s)" % (w.idx, w.states))
        bad_rc = {rc: k for rc, k in cli_rcs.items() if rc not in (0, -4)}      # -4: ZCONNECTIONLOSS
        if bad_rc:
            rep.problems.append("C client errors other than connection loss: %s" % bad_rc)
        if cli.sessions() != [cli.session]:
            rep.problems.append("C client sessions: %s (expected only 0x%x)" % (cli.sessions(), cli.session))
        if cli.proc.poll() is not None:
            rep.problems.append("cli_mt exited: %s" % cli.out[-2000:])
        # every member: the same trees, the history consistent, ephemerals kept
        roots = [BASE, "/kafka-migration"]
        trees, finals, finals_added = {}, {}, {}
        e.wait_zxids_equal(timeout=30)
        for m in e.members:
            trees[m.sid], finals[m.sid], finals_added[m.sid] = read_member(e, m, roots)
        ref = e.members[0].sid
        for m in e.members[1:]:
            for r in roots:
                a, b = trees[ref][r], trees[m.sid][r]
                if a != b:
                    diff = sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))
                    rep.problems.append("members %d and %d differ under %s at %d nodes, e.g. %s: %s / %s"
                                        % (ref, m.sid, r, len(diff), diff[0], a.get(diff[0]), b.get(diff[0])))
        tree = trees[ref][BASE]
        for w in workers:
            st = tree.get(w.ephemeral)
            if st is None or st[1].ephemeralOwner != w.session:
                rep.problems.append("kazoo client %d's ephemeral %s: %s" % (w.idx, w.ephemeral, st))
        st = tree.get(BASE + "/eph/cli")
        if st is None or st[1].ephemeralOwner != cli.session:
            rep.problems.append("the C client's ephemeral: %s" % (st,))
        for p in cli.acked():
            if p not in tree:
                rep.lost["C client creates"] += 1
        errors = HistoryChecker(ops, finals, finals_added).check()
        if errors:
            rep.problems.append("kazoo history inconsistent (%d problems):\n    %s"
                                % (len(errors), "\n    ".join(errors[:10])))
        rep.lost["kazoo writes"] += sum(1 for x in errors if "lost" in x)
        # kafka
        logs = cluster.read_all(TOPIC, PARTITIONS)
        kprob = check_stream(stream, logs, exactly=False)
        lost = [x for x in kprob if "not at their offsets" in x]
        rep.lost["kafka records"] += int(lost[0].split()[0]) if lost else 0
        rep.kafka = {"acknowledged": len(stream.acked), "delivery errors": len(stream.errors),
                     "unflushed": unflushed, "in the log": sum(len(v) for v in logs.values())}
        if kprob:
            rep.problems.append("kafka: %s" % kprob[:5])
        if stream.errors:
            rep.problems.append("kafka delivery errors: %s" % stream.errors[:5])
        rep.steps.append(("total", time.monotonic() - t_start, None))
        return rep
    finally:
        if cli is not None:
            cli.close()
        if cluster is not None:
            errs = cluster.close(keep=keep)
            if errs:
                rep.problems += errs
        for w in workers:
            close_client(w.client)
        rcs = e.close()
        bad = {sid: rc for sid, rc in rcs.items() if rc not in (0, -15, 143, None)}
        if bad:
            rep.problems.append("members exited with %s" % bad)
        if keep or rep.problems or failure is not None or os.environ.get("KIPPER_TEST_KEEP"):
            log("kept %s" % e.workdir)
        else:
            e.cleanup()


def main(argv=None):
    ap = argparse.ArgumentParser(description="Replace every member of an Apache ZooKeeper ensemble by kipper, "
                                             "under load, then one back (docs/migrating-from-zookeeper.md).")
    ap.add_argument("--members", type=int, default=5)
    ap.add_argument("--dwell", type=float, default=15.0, help="seconds of load between two steps")
    ap.add_argument("--clients", type=int, default=5, help="kazoo sessions")
    ap.add_argument("--keep", action="store_true", help="keep the work folders")
    args = ap.parse_args(argv)
    import logging
    logging.basicConfig(level=logging.ERROR)     # kazoo's connection-drop warnings are the moves counted below
    rep = run_migration(args.members, dwell_s=args.dwell, clients=args.clients, keep=args.keep)
    print(rep.text())
    return 1 if rep.problems or sum(rep.lost.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
