"""Start and drive an N-member keeper ensemble on loopback for integration tests.

    ens = Ensemble(3).start()          # every member up, one leader, all serving
    try:
        c = ens.client(ens.followers()[0])      # a kazoo client on that member only
        ens.kill(ens.leader())                  # SIGKILL; start(member) restarts it
        ens.wait_ready()
    finally:
        ens.close()

Each member has its own work folder (zoo.cfg, dataDir with myid, log), a free
127.0.0.1 client port, quorum port and election port, and a zoo.cfg with one
`server.N=127.0.0.1:quorumPort:electionPort` line per member. The members are
`bin/kipper keeper zoo.cfg` (KIPPER_BIN honoured, as harness.py does) or, with
KIPPER_TEST_TARGET=zookeeper, real Apache ZooKeeper 3.8 (QuorumPeerMain, with
apache_zk.py's JVM and class path; LearnerHandler logs at DEBUG so every sync
decision is in the leader's log). `targets` mixes them in one ensemble:

    Ensemble(3, targets={1: "kipper", 2: "kipper", 3: "zookeeper"})

(or a list, one name per member in id order); each member's `kind` says which it is.
observers={4} makes those members observers (`:observer` on their server.N lines, and
`peerType=observer` in their own zoo.cfg): the quorum counts the others only, and
wait_ready wants them in `Mode: observer`, counted by the leader's zk_synced_observers.
replace(m, kind) swaps a stopped member for the other kind on the same zoo.cfg, myid and
data folders (a migration in place); data_log_dirs=True gives each member a dataLogDir.

reconfig_enabled=True: reconfigEnabled=true and the super digest of kazoo's harness (SUPER_AUTH,
super_client()) on every member, server lines as ZooKeeper rewrites them
(host:quorum:election:participant;host:client); a member restarts on the zoo.cfg it rewrote
(dynamicConfigFile) and config_files() reads its zoo.cfg* files. add_member() starts a new member
whose zoo.cfg lists the current configuration and itself, joining(m) is the reconfig string adding
it, mark_config(text) records a reconfig's result in config_ids; live(), quorum(), start(), heal(),
wait_ready() and hosts() count only the current configuration's members.

Faults: kill(m) (SIGKILL, for kipper with its forked snapshot writers), stop(m)
(SIGTERM), start(m) (same dataDir and ports), pause(m)/resume(m) (SIGSTOP/SIGCONT:
a member cut off from everyone, clients included), wipe(m) (a stopped member's
dataDir emptied but for myid). heal() undoes them all and waits until the ensemble
serves again; close() stops everything.

sync_events()/sync_modes() read which sync (DIFF, SNAP, TRUNC) a leader chose for a
learner from the leaders' logs (both ZooKeeper's own lines and kipper's
`sync with follower N: MODE` line, `observer` for an observer). HistoryChecker verifies a recorded history of
creates, reads and conditional setData against one sequential order.
"""
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import harness
from harness import free_port, four_letter_word, wait_until

TARGET = (os.environ.get("KIPPER_TEST_TARGET", "kipper").strip().lower() or "kipper")

TICK_MS = 200
INIT_LIMIT = 20            # ticks a follower may take to connect and sync (4 s)
SYNC_LIMIT = 10            # ticks without an answer before leader and follower give up on each other (2 s)
MAX_SESSION_MS = 30000     # so that test clients may ask for sessions that outlive a fail-over
# reconfig_enabled=True: the super user of kazoo's own test harness (super:test), whose
# digest is base64(sha1("super:test")); only it may reconfig.
SUPER_AUTH = ("digest", "super:test")
SUPER_DIGEST = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="



class MemberDied(RuntimeError):
    """A member's process exited although no test stopped it."""


def _tail(text, lines=60):
    return "\n".join(text.splitlines()[-lines:])


# ---- members ---------------------------------------------------------------------------


def _free_ports(n):
    """n distinct free loopback ports (harness.free_port says from where)."""
    return [free_port() for _ in range(n)]


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        for c in harness.child_pids(todo.pop()):
            if c not in out:
                out.append(c)
                todo.append(c)
    return out


def _proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


class _MemberMixin:
    """What a kipper member and a ZooKeeper member share (mixed into their classes)."""

    def _init_member(self, ensemble, sid, ports):
        self.ensemble = ensemble
        self.sid = sid
        self.port, self.quorum_port, self.election_port = ports
        self.paused = False
        self.reuse_config = False      # Ensemble.replace: start on the zoo.cfg another kind wrote
        self.launched_once = False
        with open(os.path.join(self.data_dir, "myid"), "w") as f:
            f.write("%d\n" % sid)

    def __repr__(self):
        return "<member %d port %d%s>" % (self.sid, self.port, " paused" if self.paused else "")

    def ensemble_config(self):
        cfg = {
            "tickTime": str(self.tick_time),
            "initLimit": str(self.ensemble.init_limit),
            "syncLimit": str(self.ensemble.sync_limit),
            "dataDir": self.data_dir,
            "clientPort": str(self.port),
            "clientPortAddress": self.placement.host,
            "maxSessionTimeout": str(self.ensemble.max_session_ms),
            "4lw.commands.whitelist": "*",
        }
        for m in self.ensemble.members:
            if m is not self and m.sid not in self.ensemble.config_ids:
                continue            # removed by a reconfig (or not yet joined): not in this member's file
            cfg["server.%d" % m.sid] = m.server_line()
        if self.sid in self.ensemble.observers:
            cfg["peerType"] = "observer"
        if self.ensemble.reconfig_enabled:
            cfg["reconfigEnabled"] = "true"
            cfg["DigestAuthenticationProvider.superDigest"] = SUPER_DIGEST
        return cfg

    def server_line(self):
        """This member's server.N value: host:quorum:election[:observer], and with reconfig
        the ';client' part (what a reconfig's joining string names too)."""
        obs = self.sid in self.ensemble.observers
        line = "%s:%d:%d" % (self.placement.host, self.quorum_port, self.election_port)
        if not self.ensemble.reconfig_enabled:
            return line + (":observer" if obs else "")
        return "%s:%s;%s:%d" % (line, "observer" if obs else "participant", self.placement.host, self.port)

    def config_files(self):
        """{file name: text} for zoo.cfg and every zoo.cfg.* file (zoo.cfg.bak, zoo.cfg.dynamic.N,
        zoo.cfg.dynamic.next) in the member's work folder, as they are now."""
        out = {}
        for name in sorted(os.listdir(self.workdir)):
            if name == "zoo.cfg" or name.startswith("zoo.cfg."):
                with open(os.path.join(self.workdir, name), errors="replace") as f:
                    out[name] = f.read()
        return out

    def _keep_own_config(self):
        """With reconfig the member rewrites its own zoo.cfg (dynamicConfigFile): after the
        first start it restarts on the files as it left them, as an operator's would."""
        return self.reuse_config or (self.ensemble.reconfig_enabled and self.launched_once)

    @staticmethod
    def _write_cfg(path, cfg):
        with open(path, "w") as f:
            for k, v in cfg.items():
                f.write("%s=%s\n" % (k, v))

    def _ready(self):
        """The process runs and its client port answers (an ensemble member answers
        `ruok` while it is still looking for a leader)."""
        if self.proc.poll() is not None:
            raise RuntimeError("member %d exited with %s; log:\n%s"
                               % (self.sid, self.proc.returncode, self.server_log()[-20000:]))
        return four_letter_word(self.port, "ruok", timeout=1.0, host=self.placement.host) == "imok"

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def pids(self):
        return [self.proc.pid] + _descendants(self.proc.pid) if self.running() else []

    def server_log_size(self):
        try:
            return os.path.getsize(self.log_path)
        except OSError:
            return 0

    def server_log(self, since=0):
        """The member's own log (for ZooKeeper zookeeper.log, not the console) from byte `since`."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(since)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def txn_log_bytes(self):
        """The newest transaction log file's bytes (dataDir/version-2/log.<zxid>; a
        dataLogDir when configured), b"" when there is none."""
        d = os.path.join(self.extra.get("dataLogDir") or self.data_dir, "version-2")
        logs = []
        for name in os.listdir(d) if os.path.isdir(d) else []:
            m = re.fullmatch(r"log\.([0-9a-fA-F]+)", name)
            if m:
                logs.append((int(m.group(1), 16), name))
        if not logs:
            return b""
        try:
            with open(os.path.join(d, max(logs)[1]), "rb") as f:
                return f.read()
        except OSError:
            return b""


class KipperMember(_MemberMixin, harness.Keeper):
    """One `bin/kipper keeper zoo.cfg` member."""

    kind = "kipper"

    def __init__(self, ensemble, sid, ports, workdir):
        harness.Keeper.__init__(self, tick_time=ensemble.tick_time, extra=ensemble.extra, workdir=workdir,
                                placement=ensemble.placement_of(sid))
        self._init_member(ensemble, sid, ports)

    def write_config(self):
        cfg = self.ensemble_config()
        cfg.update({k: str(v) for k, v in self.extra.items()})
        self._write_cfg(self.cfg_path, cfg)

    def launch(self):
        """Start the process without waiting for anything (on the zoo.cfg already there
        when this member replaced a ZooKeeper one: Ensemble.replace)."""
        if not (self._keep_own_config() and os.path.exists(self.cfg_path)):
            self.write_config()
        self.launched_once = True
        self._log = open(self.log_path, "ab")
        self.proc = self.placement.popen([harness.KIPPER, "keeper", self.cfg_path], stdin=subprocess.DEVNULL,
                                         stdout=self._log, stderr=subprocess.STDOUT, cwd=self.workdir)


def _zk_member_class():
    import apache_zk

    class ZooKeeperMember(_MemberMixin, apache_zk.ApacheZooKeeper):
        """One Apache ZooKeeper 3.8 QuorumPeerMain member."""

        kind = "zookeeper"

        def __init__(self, ensemble, sid, ports, workdir):
            apache_zk.ApacheZooKeeper.__init__(self, tick_time=ensemble.tick_time, extra=ensemble.extra,
                                               workdir=workdir, placement=ensemble.placement_of(sid))
            self._init_member(ensemble, sid, ports)

        def write_config(self):
            cfg = self.ensemble_config()
            cfg.update({"admin.enableServer": "false", "maxClientCnxns": "0", "standaloneEnabled": "false",
                        "reconfigEnabled": "false"})
            if self.ensemble.reconfig_enabled:
                cfg["reconfigEnabled"] = "true"
            cfg.update({k: str(v) for k, v in self.extra.items()})
            self._write_cfg(self.cfg_path, cfg)
            self.write_log_config()

        def write_log_config(self):
            with open(self.log4j_path, "w") as f:
                f.write(apache_zk.LOG4J_PROPERTIES % {"log": self.log_path})
                # "Sending TRUNC to follower zxidToSend=..." is a DEBUG line in 3.8.
                f.write("log4j.logger.org.apache.zookeeper.server.quorum.LearnerHandler=DEBUG\n")

        def launch(self):
            if not apache_zk.available():
                raise RuntimeError("Apache ZooKeeper not installed (need %s and %s)"
                                   % (apache_zk.ZK_JAR, apache_zk.JAVA))
            if self._keep_own_config() and os.path.exists(self.cfg_path):
                self.write_log_config()
            else:
                self.write_config()
            self.launched_once = True
            self._console = open(self.console_path, "ab")
            self.proc = self.placement.popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._console,
                                             stderr=subprocess.STDOUT, cwd=self.workdir)

    return ZooKeeperMember


# ---- the ensemble ----------------------------------------------------------------------


class Ensemble:
    """N members on loopback; see the module's docstring."""

    def __init__(self, n, tick_time=TICK_MS, init_limit=INIT_LIMIT, sync_limit=SYNC_LIMIT,
                 max_session_ms=MAX_SESSION_MS, extra=None, target=None, placement=None, targets=None,
                 data_log_dirs=False, observers=(), reconfig_enabled=False):
        """placement: member id -> harness.Placement (where it runs; loopback by default).
        data_log_dirs: each member gets a dataLogDir of its own, beside its dataDir.
        target: what every member is ('kipper' or 'zookeeper'; KIPPER_TEST_TARGET by default);
        targets: per member instead, {member id: target} (ids missing take `target`) or a list
        in id order; self.target is then 'mixed' unless they all agree."""
        default = target or TARGET
        if isinstance(targets, (list, tuple)):
            assert len(targets) == n, "targets names %d members, the ensemble has %d" % (len(targets), n)
            targets = {sid: t for sid, t in enumerate(targets, 1)}
        self.targets = {sid: (targets or {}).get(sid, default) for sid in range(1, n + 1)}
        self.observers = set(observers)
        self.reconfig_enabled = reconfig_enabled
        self.config_ids = set(self.targets)     # the members of the current configuration
        self.data_log_dirs = data_log_dirs
        assert self.observers <= set(self.targets) and len(self.observers) < n, "observers must be members"
        for sid, t in self.targets.items():
            if t not in ("kipper", "zookeeper"):
                raise ValueError("member %d: target must be 'kipper' or 'zookeeper', not %r" % (sid, t))
        kinds = set(self.targets.values())
        self.target = kinds.pop() if len(kinds) == 1 else "mixed"
        self.placement_of = placement or (lambda sid: harness.LOOPBACK)
        self.tick_time = tick_time
        self.init_limit = init_limit
        self.sync_limit = sync_limit
        self.max_session_ms = max_session_ms
        self.extra = dict(extra or {})
        self.workdir = tempfile.mkdtemp(prefix="kipper-ensemble%d-" % n)
        ports = _free_ports(3 * n)
        self.members_spec = [(sid, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2])
                             for i, sid in enumerate(range(1, n + 1))]
        zk_cls = _zk_member_class() if "zookeeper" in self.targets.values() else None
        self.members = []
        for sid, cport, qport, eport in self.members_spec:
            wd = os.path.join(self.workdir, "m%d" % sid)
            os.makedirs(wd, exist_ok=True)
            cls = zk_cls if self.targets[sid] == "zookeeper" else KipperMember
            m = cls(self, sid, (cport, qport, eport), wd)
            if data_log_dirs:
                m.extra["dataLogDir"] = os.path.join(wd, "datalog")
                os.makedirs(m.extra["dataLogDir"], exist_ok=True)
            self.members.append(m)
        self._clients = []
        self._lock = threading.Lock()

    # -- naming
    def __iter__(self):
        return iter(self.members)

    def __len__(self):
        return len(self.members)

    def member(self, sid):
        return self.members[sid - 1]

    def participants(self):
        """The members of the current configuration that vote (all but the observers)."""
        return [m for m in self.in_config() if m.sid not in self.observers]

    def in_config(self):
        """The members of the current configuration (all but those a reconfig removed or
        that add_member started and no reconfig has added yet)."""
        return [m for m in self.members if m.sid in self.config_ids]

    def quorum(self):
        return len(self.participants()) // 2 + 1

    def hosts(self, first=None, members=None):
        """A connect string of members (all by default), `first` first."""
        ms = list(members or self.in_config())
        if first is not None and first in ms:
            ms.remove(first)
            ms.insert(0, first)
        return ",".join("%s:%d" % (m.placement.host, m.port) for m in ms)

    def live(self):
        """Members of the current configuration whose process runs and is not paused."""
        return [m for m in self.in_config() if m.running() and not m.paused]

    # -- dynamic reconfiguration (reconfig_enabled=True)
    def add_member(self, kind=None, observer=False, start=True):
        """A new member (the next id, free ports, kind: 'kipper' or 'zookeeper', the
        ensemble's target by default) whose zoo.cfg lists the current configuration's members
        and itself, as a server joining by reconfig needs (with reconfig its own line says
        participant or observer). Started (client port answering) but not in config_ids:
        joining(member) is the reconfig string that adds it; mark_config() records the result."""
        kind = kind or (self.target if self.target != "mixed" else TARGET)
        sid = len(self.members) + 1
        cport, qport, eport = _free_ports(3)
        wd = os.path.join(self.workdir, "m%d" % sid)
        os.makedirs(wd, exist_ok=True)
        cls = _zk_member_class() if kind == "zookeeper" else KipperMember
        self.targets[sid] = kind
        if observer:
            self.observers.add(sid)
        m = cls(self, sid, (cport, qport, eport), wd)
        if self.data_log_dirs:
            m.extra["dataLogDir"] = os.path.join(wd, "datalog")
            os.makedirs(m.extra["dataLogDir"], exist_ok=True)
        self.members.append(m)
        kinds = set(self.targets.values())
        self.target = kinds.pop() if len(kinds) == 1 else "mixed"
        if start:
            m.launch()
            self.poll(m._ready, timeout=60.0, what="member %d's client port" % sid)
        return m

    def joining(self, member):
        """The reconfig `joining` string that adds member: server.N=<its server line>."""
        return "server.%d=%s" % (member.sid, member.server_line())

    def mark_config(self, config_text):
        """Record the membership of a configuration's text (/zookeeper/config, a reconfig's
        answer): config_ids and observers follow it."""
        ids, obs = set(), set()
        for line in config_text.splitlines():
            mm = re.match(r"server\.(\d+)=([^;]*)", line.strip())
            if mm:
                sid = int(mm.group(1))
                ids.add(sid)
                if mm.group(2).endswith(":observer"):
                    obs.add(sid)
        self.config_ids = ids
        self.observers = {s for s in self.observers if s not in ids} | obs
        return ids

    def super_client(self, member=None, **kw):
        """A kazoo client authenticated as the super user (who may reconfig)."""
        return self.client(member, auth_data=[SUPER_AUTH], **kw)

    # -- life cycle
    def start(self, member=None, wait=True, timeout=90.0):
        """Start every member (member=None) or one (same dataDir and ports); with wait,
        wait until the live members have one leader and all serve."""
        targets = self.in_config() if member is None else [member]
        for m in targets:
            if not m.running():
                m.paused = False
                m.launch()
        for m in targets:
            self.poll(m._ready, timeout=60.0, what="member %d's client port" % m.sid)
        if wait:
            self.wait_ready(timeout=timeout)
        return self

    def stop(self, member):
        """SIGTERM (a paused member is resumed first) and wait; returns the exit status."""
        if member.paused:
            self.resume(member)
        return member.stop()

    def kill(self, member):
        """SIGKILL (paused or not) and wait; returns the exit status."""
        rc = member.kill()
        member.paused = False
        return rc

    def pause(self, member):
        """SIGSTOP the member and everything it forked: it neither answers nor sends."""
        assert member.running(), "member %d is not running" % member.sid
        pids = member.pids()
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        member.paused = True
        wait_until(lambda: _proc_state(member.proc.pid) == "T", timeout=10.0,
                   what="member %d to stop" % member.sid)

    def resume(self, member):
        for p in member.pids():
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:
                pass
        member.paused = False

    def wipe(self, member):
        """Empty a stopped member's dataDir (and dataLogDir) but for myid."""
        assert not member.running(), "wipe a stopped member"
        dirs = {member.data_dir, member.extra.get("dataLogDir") or member.data_dir}
        for d in dirs:
            for name in os.listdir(d):
                if d == member.data_dir and name == "myid":
                    continue
                p = os.path.join(d, name)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p)
                else:
                    os.unlink(p)

    def replace(self, member, kind):
        """Swap a stopped member for one of `kind` ('kipper' or 'zookeeper') on the same
        work folder: the same zoo.cfg (a kipper member starts on the file as it is), myid,
        dataDir, dataLogDir and ports, as an operator migrating a member in place does.
        Each kind keeps its own log file there. Returns the new member."""
        assert not member.running(), "replace a stopped member"
        if kind == "zookeeper":
            cls = _zk_member_class()
        elif kind == "kipper":
            cls = KipperMember
        else:
            raise ValueError("kind must be 'kipper' or 'zookeeper', not %r" % kind)
        new = cls(self, member.sid, (member.port, member.quorum_port, member.election_port), member.workdir)
        new.extra = dict(member.extra)
        new.reuse_config = kind == "kipper"
        self.members[member.sid - 1] = new
        self.targets[member.sid] = kind
        kinds = set(self.targets.values())
        self.target = kinds.pop() if len(kinds) == 1 else "mixed"
        return new

    def heal(self, timeout=90.0):
        """Resume paused members, start the stopped members of the current configuration,
        wait until they all serve."""
        for m in self.members:
            if m.paused:
                self.resume(m)
        stopped = [m for m in self.in_config() if not m.running()]
        for m in stopped:
            m.launch()
        for m in stopped:
            self.poll(m._ready, timeout=60.0, what="member %d's client port" % m.sid)
        self.wait_ready(timeout=timeout)

    def close(self):
        """Close every client, then stop every member (SIGKILL after 10 s). Returns the
        members' exit statuses."""
        for m in self.members:
            if m.paused:
                self.resume(m)
        self.close_clients()
        rcs = {}
        for m in self.members:
            try:
                rcs[m.sid] = m.stop()
            except Exception as exc:      # never leave a process behind
                m.kill()
                rcs[m.sid] = exc
        return rcs

    def cleanup(self):
        shutil.rmtree(self.workdir, ignore_errors=True)

    # -- state
    def srvr(self, member, timeout=2.0):
        return four_letter_word(member.port, "srvr", timeout=timeout, host=member.placement.host)

    def mode(self, member):
        """'leader', 'follower', ... as `srvr` says, or None when the member does not
        serve (down, paused, looking for a leader)."""
        if not member.running() or member.paused:
            return None
        try:
            m = re.search(r"^Mode: (\w+)", self.srvr(member, timeout=1.0), re.M)
        except OSError:
            return None
        return m.group(1) if m else None

    def zxid(self, member):
        """The member's last processed zxid (`srvr` Zxid:), or None."""
        try:
            m = re.search(r"^Zxid: (0x[0-9a-fA-F]+|\d+)", self.srvr(member), re.M)
        except OSError:
            return None
        return int(m.group(1), 0) if m else None

    def mntr(self, member):
        out = {}
        for line in four_letter_word(member.port, "mntr", timeout=2.0, host=member.placement.host).splitlines():
            if "\t" in line:
                k, v = line.split("\t", 1)
                out[k.strip()] = v.strip()
        return out

    def serves_session(self, member):
        """True when a client session can be opened on the member."""
        from zkwire import WireClient
        try:
            with WireClient(member.port, host=member.placement.host, timeout=2.0) as c:
                s = c.connect(timeout_ms=4000)
                if s.timeout <= 0 or s.session_id == 0:
                    return False
                c.close_session()
            return True
        except Exception:
            return False

    def check_alive(self):
        """Raise at once if a member that should run has exited on its own."""
        for m in self.members:
            if m.proc is not None and m.proc.poll() is not None:
                raise MemberDied("member %d exited with %s; its log ends:\n%s"
                                 % (m.sid, m.proc.returncode, _tail(m.server_log(), 60)))

    def poll(self, predicate, timeout, what, interval=0.05):
        """harness.wait_until, but failing at once when a member dies."""
        def pred():
            self.check_alive()
            return predicate()
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                v = pred()
                if v:
                    return v
            except MemberDied:
                raise
            except Exception as exc:
                last = exc
            time.sleep(interval)
        raise TimeoutError("timed out after %.0f s waiting for %s (last error: %r)" % (timeout, what(), last)
                           if callable(what) else
                           "timed out after %.0f s waiting for %s (last error: %r)" % (timeout, what, last))

    def _ready_state(self, sessions):
        live = self.live()
        voting = [m for m in live if m.sid not in self.observers]
        if len(voting) < self.quorum():
            raise AssertionError("only %d of %d participants live: no quorum to wait for"
                                 % (len(voting), len(self.participants())))
        modes = {m.sid: self.mode(m) for m in live}
        leaders = [sid for sid, md in modes.items() if md == "leader"]
        if len(leaders) != 1 or any(md != ("observer" if sid in self.observers else "follower")
                                    for sid, md in modes.items() if sid not in leaders):
            return None
        leader = self.member(leaders[0])
        stats = self.mntr(leader)
        synced = stats.get("zk_synced_followers")
        if synced is None or int(synced) < len(voting) - 1:
            return None
        if int(stats.get("zk_synced_observers", 0)) < len(live) - len(voting):
            return None
        if sessions and not all(self.serves_session(m) for m in live):
            return None
        return leader

    def wait_ready(self, timeout=90.0, sessions=True):
        """Wait until the live members have exactly one leader, every other live member
        follows it (observers observe it), the leader counts them all as synced (`mntr`
        zk_synced_followers, zk_synced_observers) and (sessions=True) each live member opens a client session
        (each one a transaction: pass sessions=False where none may happen). Returns the leader."""
        return self.poll(lambda: self._ready_state(sessions), timeout=timeout, interval=0.1,
                         what=lambda: "a leader and %d serving members (modes now %s)"
                         % (len(self.live()), {m.sid: self.mode(m) for m in self.live()}))

    def leader(self):
        ls = [m for m in self.live() if self.mode(m) == "leader"]
        assert len(ls) == 1, "expected one leader, got %s" % ls
        return ls[0]

    def followers(self):
        return [m for m in self.live() if self.mode(m) == "follower"]

    def observing(self):
        """Live members in `Mode: observer`."""
        return [m for m in self.live() if self.mode(m) == "observer"]

    def wait_zxids_equal(self, members=None, timeout=20.0):
        """Wait until the members' `srvr` zxids are identical; returns it."""
        ms = list(members or self.live())

        def same():
            zs = {self.zxid(m) for m in ms}
            return zs.pop() if len(zs) == 1 and None not in zs else None
        return self.poll(same, timeout=timeout,
                         what=lambda: "identical zxids on members: %s" % {m.sid: self.zxid(m) for m in ms})

    # -- clients
    def client(self, member=None, all_hosts=False, timeout=10.0, start_timeout=20.0, **kw):
        """A started kazoo client: on `member` only, or (all_hosts) on every member with
        `member` first; it retries connecting every 0.05..0.5 s. Closed by
        close_clients()/close()."""
        from kazoo.client import KazooClient
        kw.setdefault("connection_retry", dict(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5))
        if all_hosts or member is None:
            hosts = self.hosts(first=member)
        else:
            hosts = "%s:%d" % (member.placement.host, member.port)
        c = KazooClient(hosts=hosts, timeout=timeout, randomize_hosts=False, **kw)
        with self._lock:
            self._clients.append(c)
        c.start(timeout=start_timeout)
        return c

    def close_clients(self):
        with self._lock:
            clients, self._clients = self._clients, []
        for c in clients:
            close_client(c)

    # -- logs
    def log_marks(self):
        """Each member's log size now: pass to sync_modes(since=) to read only later lines."""
        return {m.sid: m.server_log_size() for m in self.members}

    def sync_modes(self, sid, since=None):
        """The sync modes (DIFF, SNAP, TRUNC) that leaders logged for learner `sid` after
        the marks `since`, oldest first (each leader's log in order; normally one leader)."""
        modes = []
        for m in self.members:
            text = m.server_log((since or {}).get(m.sid, 0))
            modes += [mode for s, mode in sync_events(text) if s == sid]
        return modes


def close_client(c, timeout=10.0):
    """Stop and close a kazoo client without hanging the test (a client whose server is
    gone may take the session timeout to give up)."""
    t = threading.Thread(target=lambda: (_quiet(c.stop), _quiet(c.close)), daemon=True)
    t.start()
    t.join(timeout)


def _quiet(fn):
    try:
        fn()
    except Exception:
        pass


# ---- sync modes from the leader's log ---------------------------------------------------

# kipper (the line the keeper's leader logs when it picks a learner's sync):
#   sync with follower 3: DIFF ...      sync with follower 2: SNAP ...      sync with follower 1: TRUNC ...
KIPPER_SYNC_RE = re.compile(r"sync with (?:follower|observer) (\d+): (DIFF|SNAP|TRUNC)\b")

# Apache ZooKeeper 3.8, LearnerHandler on the leader. Lines carry the thread name
# ("[LearnerHandler-/127.0.0.1:53412:LearnerHandler@…]"); the first names the learner:
#   Synchronizing with Learner sid: 3 maxCommittedLog=0x… minCommittedLog=0x… lastProcessedZxid=0x… peerLastZxid=0x…
# then, on the same thread, the decision:
#   Sending DIFF zxid=0x… for peer sid: 3                        -> DIFF
#   Sending TRUNC to follower zxidToSend=0x… for peer sid:3      -> TRUNC (a DEBUG line)
#   Sending TRUNC zxid=0x…  for peer sid: 3                      -> TRUNC
#   Sending snapshot last zxid of peer is 0x…, zxid of leader …  -> SNAP
#     (after "Cannot send TRUNC to peer sid: 3 peer zxid is from different epoch", or a
#      peer older than the leader's logs)
_ZK_LINE_RE = re.compile(r"\[(?P<thread>.+):(?P<cls>[\w$]+)@\d+\] - (?P<msg>.*)$")
_ZK_START_RE = re.compile(r"Synchronizing with Learner sid: (\d+) ")
_ZK_DECISIONS = (
    (re.compile(r"^Sending DIFF zxid=0x[0-9a-f]+ +for peer sid: ?(\d+)"), "DIFF"),
    (re.compile(r"^Sending TRUNC to follower zxidToSend=0x[0-9a-f]+ for peer sid: ?(\d+)"), "TRUNC"),
    (re.compile(r"^Sending TRUNC zxid=0x[0-9a-f]+ +for peer sid: ?(\d+)"), "TRUNC"),
    (re.compile(r"^Sending snapshot last zxid of peer is"), "SNAP"),
)


def sync_events(text):
    """[(learner sid, 'DIFF'|'SNAP'|'TRUNC')] in the order a leader's log records its
    sync decisions; understands kipper's `sync with follower N: MODE` and ZooKeeper 3.8's
    LearnerHandler lines."""
    events = []
    pending = {}          # ZooKeeper thread -> learner sid whose decision is still to come
    for line in text.splitlines():
        m = KIPPER_SYNC_RE.search(line)
        if m:
            events.append((int(m.group(1)), m.group(2)))
            continue
        z = _ZK_LINE_RE.search(line)
        if not z:
            continue
        thread, msg = z.group("thread"), z.group("msg")
        s = _ZK_START_RE.search(msg)
        if s:
            pending[thread] = int(s.group(1))
            continue
        if thread not in pending:
            continue
        for rx, mode in _ZK_DECISIONS:
            d = rx.search(msg)
            if d:
                sid = pending.pop(thread)
                if d.groups():
                    assert int(d.group(1)) == sid, line
                events.append((sid, mode))
                break
    return events


# ---- outcomes of client calls -------------------------------------------------------------


def outcome(exc):
    """Classify a kazoo exception: 'failed' (the server answered with an error, so the
    call had no effect) or 'unknown' (connection loss, expiry, time-out: it may or may
    not have taken effect)."""
    from kazoo import exceptions as ke
    if isinstance(exc, (ke.ConnectionLoss, ke.SessionExpiredError, ke.ConnectionClosedError,
                        ke.OperationTimeoutError, ke.SessionMovedError)):
        return "unknown"
    if type(exc).__name__ in ("TimeoutError", "timeout") or isinstance(exc, (TimeoutError, socket.timeout)):
        return "unknown"
    if isinstance(exc, ke.ZookeeperError):
        return "failed"
    return "unknown"


# ---- history checking -------------------------------------------------------------------


class Op:
    """One recorded invocation.

    kind: 'create' (a key node, value unique, version 0 on success), 'set' (setData of a
    key with expected version `expect`, value unique), 'get' (a read of a key), 'add'
    (a create of a unique path that must exist exactly when acknowledged).
    status: 'ok', 'failed' (a definite error answer), 'unknown' (no answer, or connection
    loss / expiry), or None while in flight. zxid/version/data come from the answer's
    Stat (mzxid) and data."""
    __slots__ = ("client", "seq", "kind", "key", "expect", "value", "start", "end", "status", "error",
                 "version", "zxid", "data", "session")

    def __init__(self, client, seq, kind, key, expect=None, value=None):
        self.client, self.seq, self.kind, self.key = client, seq, kind, key
        self.expect, self.value = expect, value
        self.start = time.monotonic()
        self.end = None
        self.status = None
        self.error = None
        self.version = self.zxid = self.data = None
        self.session = None     # the client's session id when the op was issued

    def __repr__(self):
        return ("<c%d#%d %s %s%s%s -> %s%s v=%s zxid=%s data=%r [%.3f..%s]>"
                % (self.client, self.seq, self.kind, self.key,
                   "" if self.expect is None else " expect=%d" % self.expect,
                   "" if self.value is None else " value=%r" % self.value,
                   self.status, "(%s)" % self.error if self.error else "", self.version,
                   None if self.zxid is None else hex(self.zxid), self.data, self.start,
                   "%.3f" % self.end if self.end else None))

    def writes(self):
        return self.kind in ("create", "set", "add")


def finish_op(op, ar):
    """Record a kazoo async result into op (in whichever thread sees it first)."""
    if op.status is not None:
        return
    end = time.monotonic()
    if ar.successful():
        v = ar.value
        if op.kind in ("create", "add"):
            _, st = v
            op.version, op.zxid = st.version, st.mzxid
        elif op.kind == "set":
            op.version, op.zxid = v.version, v.mzxid
        elif op.kind == "get":
            data, st = v
            op.data, op.version, op.zxid = data, st.version, st.mzxid
        op.end, op.status = end, "ok"
    else:
        exc = ar.exception
        op.end, op.error, op.status = end, type(exc).__name__, outcome(exc)


def await_op(op, ar, timeout):
    """Wait up to timeout for ar; a late answer is still recorded when it comes."""
    if ar.wait(timeout):
        finish_op(op, ar)
    else:
        ar.rawlink(lambda a: finish_op(op, a))


class HistoryChecker:
    """Checks a history of Ops plus the final state read from every member against one
    sequential order of the writes: the order of their zxids.

    finals: {member sid: {key: (data, version, mzxid) or None}} for the keys and
    {member sid: {add path: czxid or None}} in finals_added.
    Returns a list of violations (empty when the history is consistent)."""

    def __init__(self, ops, finals, finals_added):
        self.ops = list(ops)
        self.finals = finals
        self.finals_added = finals_added
        self.errors = []

    def fail(self, msg, *ops):
        self.errors.append(msg + "".join("\n    %r" % o for o in ops))

    def check(self):
        ops = self.ops
        keyed = [o for o in ops if o.kind in ("create", "set")]
        by_value = {}
        for o in keyed:
            if o.value in by_value:
                self.fail("two writes of the same value (history bug)", o, by_value[o.value])
            by_value[o.value] = o

        # 1. Acknowledged writes carry what they claim.
        for o in ops:
            if o.status != "ok" or not o.writes():
                continue
            want = 0 if o.kind in ("create", "add") else o.expect + 1
            if o.version != want:
                self.fail("acknowledged %s answered version %s, expected %d" % (o.kind, o.version, want), o)
            if not o.zxid:
                self.fail("acknowledged write without a zxid", o)

        # 2. The final state is the same on every member.
        sids = sorted(self.finals)
        keys = sorted({k for f in self.finals.values() for k in f})
        final = {}
        for k in keys:
            states = {sid: self.finals[sid].get(k) for sid in sids}
            if len(set(states.values())) != 1:
                self.fail("members disagree on %s: %s" % (k, states))
            final[k] = states[sids[0]]
        added = sorted({p for f in self.finals_added.values() for p in f})
        final_added = {}
        for p in added:
            states = {sid: self.finals_added[sid].get(p) for sid in sids}
            if len(set(states.values())) != 1:
                self.fail("members disagree on %s: %s" % (p, states))
            final_added[p] = states[sids[0]]

        # 3. Every observation (acked answers, reads, final state) of a key names the write
        #    that produced it: (data, version, mzxid) must agree with that write.
        observed_zxid = {}       # write op -> zxid observed for it
        observations = []
        for o in ops:
            if o.status == "ok" and o.kind == "get":
                observations.append((o.key, o.data, o.version, o.zxid, "read", o))
        for k, st in final.items():
            if st is not None:
                observations.append((k, st[0], st[1], st[2], "final state", None))
        for key, data, version, zxid, what, src in observations:
            w = by_value.get(data)
            if w is None or w.key != key:
                self.fail("%s of %s shows %r, which no write of %s wrote" % (what, key, data, key),
                          *([src] if src else []))
                continue
            if w.status == "failed":
                self.fail("%s of %s shows the value of a write that failed (%s)" % (what, key, w.error), w,
                          *([src] if src else []))
            want = 0 if w.kind == "create" else w.expect + 1
            if version != want:
                self.fail("%s of %s: version %d, but its value was written as version %d"
                          % (what, key, version, want), w, *([src] if src else []))
            if w.status == "ok" and w.zxid != zxid:
                self.fail("%s of %s: mzxid %#x, but the write was acknowledged with zxid %#x"
                          % (what, key, zxid, w.zxid), w, *([src] if src else []))
            prev = observed_zxid.get(id(w))
            if prev is not None and prev != zxid:
                self.fail("the same write seen with two zxids %#x and %#x" % (prev, zxid), w)
            observed_zxid[id(w)] = zxid

        # 4. The effective writes, in zxid order, form one history per key: each version
        #    produced by exactly one write; versions skipped over in the observations are
        #    accounted for by distinct unacknowledged writes.
        effective = []
        for o in keyed:
            z = o.zxid if o.status == "ok" else observed_zxid.get(id(o))
            if z is not None:
                effective.append((z, o))
        adds = {}
        for o in ops:
            if o.kind == "add":
                adds.setdefault(o.key, []).append(o)
        for path, lst in adds.items():
            czxid = final_added.get(path)
            acked = [o for o in lst if o.status == "ok"]
            if len(acked) > 1:
                self.fail("a unique path created twice", *acked)
            for o in lst:
                if o.status == "ok":
                    if czxid is None:
                        self.fail("acknowledged create of %s is lost" % path, o)
                    elif czxid != o.zxid:
                        self.fail("%s exists with czxid %#x, acknowledged with %#x" % (path, czxid, o.zxid), o)
                    effective.append((o.zxid, o))
                elif o.status == "failed" and czxid is not None and not acked:
                    self.fail("%s exists although its create failed (%s)" % (path, o.error), o)
                elif o.status != "ok" and czxid is not None and not acked:
                    effective.append((czxid, o))
        zs = collections.Counter(z for z, _ in effective)
        for z, n in zs.items():
            if n > 1:
                self.fail("zxid %#x claimed by %d writes" % (z, n), *[o for zz, o in effective if zz == z])
        effective.sort(key=lambda t: t[0])
        unobserved = collections.defaultdict(list)   # (key, produced version) -> unknown writes never seen
        for o in keyed:
            if o.status == "unknown" and id(o) not in observed_zxid:
                unobserved[(o.key, 0 if o.kind == "create" else o.expect + 1)].append(o)
        version = {}
        for z, o in effective:
            if o.kind == "add":
                continue
            cur = version.get(o.key)
            want_prev = None if o.kind == "create" else o.expect
            if o.kind == "create":
                if cur is not None:
                    self.fail("create of %s at zxid %#x but it already exists (version %d)" % (o.key, z, cur), o)
                version[o.key] = 0
                continue
            if cur is None:
                self.fail("setData of %s at zxid %#x before any create" % (o.key, z), o)
                continue
            # versions cur+1 .. expect must come from unseen unknown writes
            for v in range(cur + 1, want_prev + 1):
                if not unobserved.get((o.key, v)):
                    self.fail("%s reached version %d without any write producing it (before zxid %#x)"
                              % (o.key, v, z), o)
                    break
                unobserved[(o.key, v)].pop()
            if cur > want_prev:
                self.fail("setData of %s expecting version %d applied at zxid %#x, but version %d "
                          "was already reached" % (o.key, want_prev, z, cur), o)
            version[o.key] = max(cur, want_prev + 1)
        for k, st in final.items():
            have = version.get(k)
            if st is None:
                if have is not None:
                    self.fail("%s is gone, but writes to it took effect (version %d)" % (k, have))
                continue
            if have != st[1]:
                self.fail("%s: final version %d, the writes in zxid order produce %s" % (k, st[1], have))
        for o in keyed:
            if o.status == "ok" and final.get(o.key) is not None and o.version > final[o.key][1]:
                self.fail("acknowledged write of version %d is lost (final version %d)"
                          % (o.version, final[o.key][1]), o)
            if o.status == "ok" and final.get(o.key) is None:
                self.fail("acknowledged write to %s is lost (the key does not exist)" % o.key, o)

        # 5. Linearizable writes: an acknowledged write that finished before another began
        #    has the smaller zxid.
        acked = sorted((o for o in ops if o.status == "ok" and o.writes() and o.zxid), key=lambda o: o.end)
        by_start = sorted(acked, key=lambda o: o.start)
        i, best = 0, None
        for b in by_start:
            while i < len(acked) and acked[i].end < b.start:
                if best is None or acked[i].zxid > best.zxid:
                    best = acked[i]
                i += 1
            if best is not None and best.zxid > b.zxid:
                self.fail("real-time order violated: a write acknowledged before another began has the "
                          "larger zxid", best, b)

        # 6. Per-client FIFO: within one session, a client's acknowledged writes have
        #    increasing zxids in issue order, and the versions it sees of a key never go back.
        per_client = collections.defaultdict(list)
        for o in ops:
            per_client[(o.client, o.session)].append(o)
        for (c, _), lst in per_client.items():
            lst.sort(key=lambda o: o.seq)
            last = None
            seen = {}
            for o in lst:
                if o.status != "ok":
                    continue
                if o.writes() and o.zxid:
                    if last is not None and o.zxid <= last.zxid:
                        self.fail("client %d: FIFO order violated" % c, last, o)
                    last = o
                if o.kind in ("create", "set", "get") and o.version is not None:
                    prev = seen.get(o.key)
                    if prev is not None and o.version < prev.version:
                        self.fail("client %d saw %s go back from version %d to %d"
                                  % (c, o.key, prev.version, o.version), prev, o)
                    seen[o.key] = o
        return self.errors
