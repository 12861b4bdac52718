"""Start and stop kipper processes for integration tests.

Every server a test needs is started here, on a free loopback port, with its
own data folder, and stopped by the test that started it (the fixtures in
conftest.py guarantee that even when a test fails).
"""
import contextlib
import os
import random
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KIPPER = os.environ.get("KIPPER_BIN") or os.path.join(ROOT, "bin", "kipper")


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_EPHEMERAL_LOW = _ephemeral_low()
_handed_out = set()


@contextlib.contextmanager
def refused_port():
    """A loopback port that refuses connections while the block runs: bound, never
    listened on, so no other process can take it (a fixed port such as 1 may be
    someone's listener on a shared machine)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def _port_range():
    low, high = 10000, _EPHEMERAL_LOW - 1
    given = os.environ.get("KIPPER_TEST_PORTS", "")
    if given:
        try:
            a, b = (int(x) for x in given.split("-"))
        except ValueError:
            raise RuntimeError("KIPPER_TEST_PORTS=%r is not LOW-HIGH" % given)
        low, high = max(low, a), min(high, b)
    if low > high:
        raise RuntimeError("no loopback port range left for tests (%d-%d)" % (low, high))
    return low, high


def free_port():
    """A loopback port to listen on later, from below the kernel's ephemeral
    range: a port the kernel picked for bind(0) is in that range, and an
    outgoing connection of a server already running (to its keeper, say)
    can take it as its source port before the server that was given it
    binds, which then fails with EADDRINUSE. Never the same port twice in a
    run. KIPPER_TEST_PORTS=LOW-HIGH narrows the range, so that test runs at the
    same time (tests/run-integration.sh) never hand out the same port."""
    low, high = _port_range()
    rng = random.Random()
    for _ in range(1000):
        port = rng.randint(low, high)
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free loopback port in %d-%d" % (low, high))


def four_letter_word(port, word, timeout=5.0, host="127.0.0.1"):
    """Send a four-letter word and return the whole answer as text."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(word.encode())
        chunks = []
        while True:
            data = s.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


def wait_until(predicate, timeout=10.0, interval=0.02, what="condition"):
    """Poll predicate until it returns a truthy value; fail after timeout."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # the server may not be up yet
            last_exc = exc
        time.sleep(interval)
    raise TimeoutError("timed out waiting for %s (last error: %r)" % (what, last_exc))


def terminate(proc, timeout=10.0):
    """SIGTERM a running process and wait for it; SIGKILL if it has not exited after timeout."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def crash(proc):
    """SIGKILL a running process (a crash) and wait for it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


class Placement:
    """Where a server process runs: the address it listens on and is reached at,
    a command prefix that puts it somewhere (`ip netns exec NS` for the fault
    suite's hosts, tests/chaos/net.py), and environment added to the test's own
    (LD_PRELOAD of the fault shim). The default is this machine's loopback."""

    def __init__(self, host="127.0.0.1", prefix=(), env=None):
        self.host = host
        self.prefix = list(prefix)
        self.env = dict(env or {})

    def popen(self, argv, **kw):
        env = None
        if self.env:
            env = dict(os.environ)
            env.update(self.env)
        return subprocess.Popen(self.prefix + list(argv), env=env, **kw)


LOOPBACK = Placement()


class Keeper:
    """One `bin/kipper keeper zoo.cfg` process on a free port (loopback unless placed)."""

    def __init__(self, tick_time=200, extra=None, workdir=None, placement=None):
        self.placement = placement or LOOPBACK
        self.port = free_port()
        self.tick_time = tick_time
        self.workdir = workdir or tempfile.mkdtemp(prefix="kipper-keeper-")
        self.data_dir = os.path.join(self.workdir, "data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.cfg_path = os.path.join(self.workdir, "zoo.cfg")
        self.log_path = os.path.join(self.workdir, "keeper.log")
        self.extra = dict(extra or {})
        self.proc = None
        self._log = None

    @property
    def hosts(self):
        return "%s:%d" % (self.placement.host, self.port)

    def write_config(self):
        cfg = {
            "tickTime": str(self.tick_time),
            "dataDir": self.data_dir,
            "clientPort": str(self.port),
            "clientPortAddress": self.placement.host,
            "4lw.commands.whitelist": "*",
        }
        cfg.update({k: str(v) for k, v in self.extra.items()})
        with open(self.cfg_path, "w") as f:
            for k, v in cfg.items():
                f.write("%s=%s\n" % (k, v))

    def start(self, timeout=10.0):
        """Start the keeper (again after stop() or kill(): same workdir, data and port)."""
        self.write_config()
        self._log = open(self.log_path, "ab")
        self.proc = self.placement.popen([KIPPER, "keeper", self.cfg_path], stdout=self._log,
                                         stderr=subprocess.STDOUT, cwd=self.workdir)
        wait_until(self._ready, timeout=timeout, what="keeper on port %d" % self.port)
        return self

    def _ready(self):
        if self.proc.poll() is not None:
            raise RuntimeError("keeper exited with %s; log:\n%s" % (self.proc.returncode, self.log()))
        return four_letter_word(self.port, "ruok", timeout=1.0, host=self.placement.host) == "imok"

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log(self):
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, timeout=10.0):
        if self.proc is None:
            return None
        terminate(self.proc, timeout)
        return self._reap()

    def child_pids(self):
        """Pids of the processes the keeper forked (snapshot writers) that are still running."""
        return child_pids(self.proc.pid) if self.alive() else []

    def kill(self):
        """Crash the keeper: SIGKILL it and every process it forked (a snapshot writer
        dies with the machine too), then wait. Returns the exit status; start() again
        restarts it on the same workdir, data and port."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            kill_tree(self.proc.pid)
            self.proc.wait()
        return self._reap()

    def _reap(self):
        if self._log is not None:
            self._log.close()
            self._log = None
        rc = self.proc.returncode
        self.proc = None
        return rc


def child_pids(pid):
    """The pids whose parent is pid (from /proc/<pid>/task/*/children)."""
    out = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def kill_tree(pid):
    """SIGKILL pid and its children at one instant, as a crash would: stop them all
    first so none can fork, finish a file or answer a client in between."""
    victims = [pid]
    for _ in range(3):   # a stopped process forks no more
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            break
        new = [c for c in child_pids(pid) if c not in victims]
        for c in new:
            try:
                os.kill(c, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        victims += new
        if not new:
            break
    for v in victims:
        try:
            os.kill(v, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # The children are not ours to reap, but they must be dead before a restart: until
    # they are, they hold the keeper's listening socket and client connections.
    children = victims[1:]
    wait_until(lambda: all(not pid_running(c) for c in children), timeout=10.0,
               what="the keeper's children %s to die" % children)


def pid_running(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
