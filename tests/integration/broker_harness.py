"""Start and stop `bin/kipper broker` for integration tests, with the
coordinator it needs.

The broker connects to `zookeeper.connect` at start, so every broker here runs
against a coordinator: by default the module's kipper keeper (harness.Keeper),
or an Apache ZooKeeper 3.8 (apache_zk.ApacheZooKeeper). Each broker gets its
own chroot on it (/kt/<test name>[-n]), so tests sharing one coordinator are
separate clusters.

    b = Broker(coordinator.hosts + "/kt/x", extra={...}).start()   # waits until registered
    b.kill(); b.start()        # crash and restart on the same data and port
    b.stop()                   # SIGTERM; returns the exit code

Fixtures: `coordinator` (one kipper keeper per module), `apache_coordinator`
(one Apache ZooKeeper per module), `make_broker(extra=..., coordinator=...,
chroot=..., start=True)` (every broker started is stopped after the test, and
must have exited cleanly unless the test killed it), `broker` (one broker with
default settings), `kafka` (a KafkaConn on `broker`). The raw protocol lives in
kafka_wire.py; its names are re-exported here.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile

import pytest

from harness import KIPPER, LOOPBACK, Keeper, crash, free_port, terminate, wait_until
from kafka_wire import (KafkaConn, Reader, is_closed, parse_api_versions, recv_exact, recv_frame,  # noqa: F401
                        request_frame)

SESSION_TIMEOUT_MS = 6000   # the keeper (tickTime 200) negotiates it down to its maximum, 4 s


class Broker:
    """One `bin/kipper broker server.properties` process on a fixed port (loopback
    unless placed: harness.Placement)."""

    def __init__(self, zk_connect, broker_id=1, extra=None, workdir=None, placement=None):
        self.placement = placement or LOOPBACK
        self.host = self.placement.host
        self.broker_id = broker_id
        self.zk_connect = zk_connect
        self.port = free_port()
        self.workdir = workdir or tempfile.mkdtemp(prefix="kipper-broker-")
        self.log_dir = os.path.join(self.workdir, "logs")
        self.config = os.path.join(self.workdir, "server.properties")
        self.stderr_path = os.path.join(self.workdir, "broker.log")
        self.proc = None
        self._err = None
        self._mark = 0            # size of the log when this process started
        self.props = {
            "broker.id": str(broker_id),
            "listeners": "PLAINTEXT://%s:%d" % (self.host, self.port),
            "log.dirs": self.log_dir,
            "zookeeper.connect": zk_connect,
            "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "zookeeper.connection.timeout.ms": "10000",
        }
        self.props.update({k: str(v) for k, v in (extra or {}).items()})
        self.write_config()

    @property
    def bootstrap(self):
        return "%s:%d" % (self.host, self.port)

    @property
    def chroot(self):
        i = self.zk_connect.find("/")
        return self.zk_connect[i:] if i >= 0 else ""

    def write_config(self):
        with open(self.config, "w") as f:
            for k, v in self.props.items():
                f.write("%s=%s\n" % (k, v))

    def start(self, wait=True, timeout=20):
        """Start (again after stop() or kill(): same config, data and port). With
        wait, returns once this process registered itself in the coordinator."""
        assert self.proc is None, "broker already running"
        self._mark = os.path.getsize(self.stderr_path) if os.path.exists(self.stderr_path) else 0
        self._err = open(self.stderr_path, "ab")
        self.proc = self.placement.popen([KIPPER, "broker", self.config], stdout=self._err, stderr=self._err,
                                         stdin=subprocess.DEVNULL)
        if wait:
            self.wait_registered(timeout=timeout)
        return self

    def _check_alive(self):
        if self.proc is None or self.proc.poll() is not None:
            raise AssertionError("broker exited with %s:\n%s" % (self.proc and self.proc.returncode,
                                                                 self.log()[-20000:]))

    def wait_registered(self, timeout=20):
        """Until this process holds /brokers/ids/[id] (after a kill -9 that waits
        for the old session to expire) and answers on its port."""
        def ready():
            self._check_alive()
            return "registered as /brokers/ids/%d" % self.broker_id in self.log_since_start() and self.serving()
        wait_until(ready, timeout=timeout, what="broker %d on port %d to register" % (self.broker_id, self.port))

    def serving(self):
        with socket.create_connection((self.host, self.port), timeout=2) as s:
            s.settimeout(2)
            s.sendall(request_frame(18, 0, 1))
            return len(recv_frame(s)) > 0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout=20):
        rc = self.proc.wait(timeout=timeout)
        self._reap()
        return rc

    def stop(self, timeout=20):
        """SIGTERM and wait; the exit code (None if not running)."""
        if self.proc is None:
            return None
        terminate(self.proc, timeout)
        return self._reap()

    def kill(self):
        """SIGKILL (a crash) and wait; start() restarts on the same data and port."""
        if self.proc is None:
            return None
        crash(self.proc)
        return self._reap()

    def pause(self):
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def _reap(self):
        rc = self.proc.returncode
        self.proc = None
        if self._err:
            self._err.close()
            self._err = None
        return rc

    def log(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_since_start(self):
        """What the current (or last) process wrote."""
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(self._mark)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # -- conveniences --

    def conn(self, **kw):
        return KafkaConn(self.port, host=self.host, **kw)

    def topics_cli(self, *args, timeout=60):
        """bin/kipper topics --zookeeper <this broker's connect string> args..."""
        return subprocess.run([KIPPER, "topics", "--zookeeper", self.zk_connect] + list(args),
                              capture_output=True, text=True, timeout=timeout)

    def create_topic(self, name, partitions=1, configs=None):
        """Create with `kipper topics` (replication factor 1) and wait until
        every partition has a leader in this broker's Metadata."""
        args = ["--create", "--topic", name, "--partitions", str(partitions), "--replication-factor", "1"]
        for k, v in (configs or {}).items():
            args += ["--config", "%s=%s" % (k, v)]
        out = self.topics_cli(*args)
        assert out.returncode == 0, out.stderr
        self.wait_leaders(name, partitions)

    def wait_leaders(self, name, partitions=None, timeout=20):
        """Until Metadata shows topic `name` with (at least `partitions`)
        partitions, each led by this broker. Returns the partition count."""
        def led():
            with self.conn() as c:
                t = c.metadata([name], allow_auto_create=False).topics.get(name)
            if t is None or t.error or not t.partitions:
                return False
            if partitions is not None and len(t.partitions) < partitions:
                return False
            return all(p.error == 0 and p.leader == self.broker_id for p in t.partitions) and len(t.partitions)
        return wait_until(led, timeout=timeout, what="leaders for topic %s" % name)


def node_slug(request):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:100]


def _start_keeper():
    k = Keeper(tick_time=200)
    k.start()
    return k


def _start_coordinator():
    """The coordinator for the selected KIPPER_TEST_TARGET: kipper's keeper
    (default) or, with KIPPER_TEST_TARGET=zookeeper, Apache ZooKeeper 3.8."""
    if os.environ.get("KIPPER_TEST_TARGET", "").strip().lower() == "zookeeper":
        from apache_zk import ApacheZooKeeper
        return ApacheZooKeeper(tick_time=200).start()
    return _start_keeper()


@pytest.fixture(scope="module")
def coordinator(request):
    """One coordinator for the module (kipper's keeper, or Apache ZooKeeper with
    KIPPER_TEST_TARGET=zookeeper); each broker works in its own chroot."""
    k = _start_coordinator()
    try:
        yield k
    finally:
        rc = k.stop()
        assert rc in ((0,) if isinstance(k, Keeper) else (0, -15, 143)), \
            "coordinator exited with %r:\n%s" % (rc, k.log()[-20000:])
        shutil.rmtree(k.workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def apache_coordinator():
    """One Apache ZooKeeper 3.8 (Debian's) for the module."""
    from apache_zk import ApacheZooKeeper
    zk = ApacheZooKeeper(tick_time=200)
    zk.start()
    try:
        yield zk
    finally:
        zk.stop()
        zk.cleanup()


@pytest.fixture
def make_broker(request, coordinator):
    """Factory: make_broker(extra={server.properties keys}, coordinator=None
    (the module's keeper), chroot=None (one per test), broker_id=1, start=True,
    workdir=None). Every broker is stopped after the test and must exit 0 (a
    broker the test killed and left down is fine); its folder is removed unless
    the test failed."""
    brokers = []

    def make(extra=None, coordinator=None, chroot=None, broker_id=1, start=True, workdir=None):
        server = coordinator or request.getfixturevalue("coordinator")
        if chroot is None:
            chroot = "/kt/" + node_slug(request) + ("" if not brokers else "-%d" % len(brokers))
        b = Broker(server.hosts + chroot, broker_id=broker_id, extra=extra, workdir=workdir)
        brokers.append(b)
        if start:
            b.start()
        return b

    yield make
    errors = []
    for b in brokers:
        was_running = b.alive()
        rc = b.stop()
        if was_running and rc != 0:
            errors.append("broker %d exited with %r on SIGTERM:\n%s" % (b.broker_id, rc, b.log()[-20000:]))
    failed = getattr(request.node, "keeper_failed", False)
    for b in brokers:
        if not failed and not errors and not os.environ.get("KIPPER_TEST_KEEP"):
            shutil.rmtree(b.workdir, ignore_errors=True)
    assert not errors, "\n".join(errors)


@pytest.fixture
def broker(make_broker):
    """One broker (default settings) in its own chroot of the module's keeper."""
    return make_broker()


@pytest.fixture
def kafka(broker):
    """A raw KafkaConn on `broker`."""
    c = broker.conn()
    try:
        yield c
    finally:
        c.close()
