"""pytest fixtures shared by the integration tests.

The server under test is chosen by the environment variable KIPPER_TEST_TARGET:
  kipper     (default) bin/kipper keeper zoo.cfg        (harness.Keeper)
  zookeeper  real Apache ZooKeeper 3.8 from Debian      (apache_zk.ApacheZooKeeper)
Both classes share one interface: Cls(tick_time=200, extra={zoo.cfg keys}),
.start() .stop() .kill() .port .hosts .log(); start() again after stop() or kill()
restarts a server on the same data and port.
"""
import os
import re

import pytest

from harness import Keeper, wait_until
# The multi-broker modules' keeper ensemble, a fixture shared by name.
from repl_cluster import ensemble  # noqa: F401

TARGET = os.environ.get("KIPPER_TEST_TARGET", "kipper").strip().lower() or "kipper"
if TARGET not in ("kipper", "zookeeper"):
    raise pytest.UsageError("KIPPER_TEST_TARGET must be 'kipper' or 'zookeeper', not %r" % TARGET)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "kipper_only(reason): behaviour only kipper promises; skipped when "
                   "KIPPER_TEST_TARGET=zookeeper")


_FAILED_MODULES = set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        item.keeper_failed = True
        _FAILED_MODULES.add(item.module.__name__)


def _cleanup(server, keep):
    """Remove a stopped server's work folder unless a test failed (then its log stays)."""
    import shutil
    if not keep and not os.environ.get("KIPPER_TEST_KEEP"):
        shutil.rmtree(server.workdir, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    if TARGET != "zookeeper":
        return
    for item in items:
        m = item.get_closest_marker("kipper_only")
        if m is not None:
            why = m.kwargs.get("reason") or (m.args[0] if m.args else "kipper-only behaviour")
            item.add_marker(pytest.mark.skip(reason="kipper only: %s" % why))


def server_class():
    """The server class for the selected target."""
    if TARGET == "zookeeper":
        from apache_zk import ApacheZooKeeper
        return ApacheZooKeeper
    return Keeper


def _serving(server):
    """True once the server accepts a client session (a 4lw answer alone is not
    enough: ZooKeeper answers ruok before it serves requests)."""
    from zkwire import WireClient
    with WireClient(server.port, timeout=2.0) as c:
        s = c.connect(timeout_ms=4000)
        if s.timeout <= 0 or s.session_id == 0:
            return False
        c.close_session()
    return True


def start_server(tick_time=200, extra=None, container_check_ms=None):
    """Start one server of the selected target and wait until it serves sessions.

    container_check_ms shortens how often container and TTL nodes are reaped
    (ZooKeeper: system property znode.container.checkIntervalMs; kipper: the
    same name as a zoo.cfg key)."""
    cls = server_class()
    extra = dict(extra or {})
    # TTL nodes need ZooKeeper's extended types; as a zoo.cfg key ZooKeeper turns it
    # into the system property zookeeper.extendedTypesEnabled.
    extra.setdefault("extendedTypesEnabled", "true")
    kwargs = {}
    if container_check_ms is not None:
        if TARGET == "zookeeper":
            kwargs["jvm_flags"] = ["-Dznode.container.checkIntervalMs=%d" % container_check_ms]
        else:
            extra["znode.container.checkIntervalMs"] = container_check_ms
    server = cls(tick_time=tick_time, extra=extra, **kwargs)
    server.start()
    try:
        wait_until(lambda: _serving(server), timeout=20.0, what="server on port %d to serve sessions" % server.port)
    except BaseException:
        server.kill()
        raise
    return server


def clean_exit_codes(server):
    """What a clean stop may return: kipper exits 0 on SIGTERM after shutting down;
    the JVM of Apache ZooKeeper dies of the signal."""
    return (0, None) if isinstance(server, Keeper) else (0, -15, 143, None)


def _stop_checked(server):
    rc = server.stop()
    # A keeper must never die on its own during a test, and must stop cleanly.
    assert rc in clean_exit_codes(server), "server exited with %r; log:\n%s" % (rc, server.log()[-20000:])


@pytest.fixture
def target():
    """The name of the target under test: 'kipper' or 'zookeeper'."""
    return TARGET


@pytest.fixture
def keeper(request):
    """A fresh standalone keeper for one test; stopped afterwards."""
    k = start_server()
    try:
        yield k
    finally:
        _stop_checked(k)
        _cleanup(k, getattr(request.node, "keeper_failed", False))


@pytest.fixture(scope="module")
def shared_keeper(request):
    """One keeper for a whole test module (tests must use their own paths)."""
    k = start_server()
    try:
        yield k
    finally:
        _stop_checked(k)
        _cleanup(k, request.module.__name__ in _FAILED_MODULES)


@pytest.fixture
def make_keeper(request):
    """Factory: make_keeper(tick_time=200, extra={...}, container_check_ms=None)
    starts a server with its own zoo.cfg keys; all are stopped after the test."""
    started = []

    def make(tick_time=200, extra=None, container_check_ms=None):
        s = start_server(tick_time=tick_time, extra=extra, container_check_ms=container_check_ms)
        started.append(s)
        return s

    try:
        yield make
    finally:
        errors = []
        for s in started:
            try:
                _stop_checked(s)
            except AssertionError as e:
                errors.append(str(e))
            _cleanup(s, errors or getattr(request.node, "keeper_failed", False))
        assert not errors, "\n".join(errors)


@pytest.fixture
def kazoo_factory():
    """Factory for started KazooClients (default: the module's shared keeper);
    every client is stopped and closed after the test."""
    from kazoo.client import KazooClient
    clients = []

    def make(server, timeout=10.0, **kw):
        c = KazooClient(hosts=server.hosts, timeout=timeout, **kw)
        clients.append(c)
        c.start(timeout=15)
        return c

    try:
        yield make
    finally:
        for c in clients:
            try:
                c.stop()
                c.close()
            except Exception:
                pass


@pytest.fixture
def zk(shared_keeper, kazoo_factory):
    """A connected KazooClient on the module's shared keeper."""
    return kazoo_factory(shared_keeper)


@pytest.fixture
def base(request, zk):
    """A fresh persistent node, unique to this test, under which it works."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:80]
    path = "/" + name
    if zk.exists(path):
        zk.delete(path, recursive=True)
    zk.create(path)
    return path


@pytest.fixture
def wire_factory():
    """Factory for raw zkwire.WireClient connections (with a session unless
    session=False); all are closed after the test."""
    from zkwire import WireClient
    conns = []

    def make(server, session=True, timeout_ms=10000, **kw):
        c = WireClient(server.port)
        conns.append(c)
        if session:
            c.connect(timeout_ms=timeout_ms, **kw)
        return c

    try:
        yield make
    finally:
        for c in conns:
            c.close()


def started_ensemble(request, *args, **kwargs):
    """A module fixture's body: `yield from conftest.started_ensemble(request, 3, extra=...)`
    starts an ensemble.Ensemble(*args, **kwargs), yields it, and closes it (close_ensemble)."""
    from ensemble import Ensemble
    e = Ensemble(*args, **kwargs)
    try:
        e.start()
        yield e
    finally:
        close_ensemble(e, request)


def close_ensemble(e, request):
    """A module fixture's teardown of an ensemble.Ensemble: stop every member,
    keep its folders when a test of the module failed (or KIPPER_TEST_KEEP is
    set), and fail if a member exited other than by the stop (SIGTERM)."""
    rcs = e.close()
    if request.module.__name__ in _FAILED_MODULES or os.environ.get("KIPPER_TEST_KEEP"):
        print("kept %s" % e.workdir)
    else:
        e.cleanup()
    bad = {sid: rc for sid, rc in rcs.items() if rc not in (0, -15, 143, None)}
    assert not bad, "members exited with %s" % bad
