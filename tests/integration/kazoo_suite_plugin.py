"""pytest plugin: run kazoo's own test suite (kazoo.tests, shipped in Debian's python3-kazoo)
against an already running ZooKeeper-protocol server instead of the Java ensemble that
kazoo's harness would start from ZOOKEEPER_PATH.

Use (test_kazoo_suite.py does this):

    KAZOO_SUITE_HOSTS=127.0.0.1:2181 PYTHONPATH=tests/integration \
        python3 -m pytest -p kazoo_suite_plugin --pyargs kazoo.tests

or, for the tests that stop and restart members (and TestReconfig), against a 3-member kipper
ensemble that the plugin starts and owns itself (ensemble.py), with kazoo's harness settings
(tickTime 2000, initLimit 4, syncLimit 2, maxClientCnxns 0) and readonlymode.enabled, as kazoo's
harness starts ZooKeeper with -Dreadonlymode.enabled=true:

    KAZOO_SUITE_ENSEMBLE=3 PYTHONPATH=tests/integration \
        python3 -m pytest -p kazoo_suite_plugin --pyargs kazoo.tests -k "TestReadOnlyMode or test_update_host_list"

What it does with KAZOO_SUITE_ENSEMBLE: cluster[i] is member i+1; stop() stops it (SIGTERM,
data kept), run() starts it again and waits for its client port; the tests in
ENSEMBLE_TESTS are not skipped. Only those (and their eventlet and gevent copies, which
pass too) have been run this way so far. The members also have reconfigEnabled=true and
the superDigest of kazoo's harness (super:test, what TestReconfig authenticates as), as kazoo's
harness gives its ensemble. KAZOO_SUITE_ENSEMBLE_TARGET=zookeeper makes them Apache ZooKeeper 3.8
members instead of kipper keepers (test_kazoo_suite.py runs TestReconfig on both).

What it does with KAZOO_SUITE_HOSTS:
- replaces kazoo.testing.harness.get_global_cluster with a fake one-member "cluster" whose
  member is the server at KAZOO_SUITE_HOSTS. kazoo's harness only needs `.address`,
  `.running`, `start()`; tests that stop or restart members (cluster[0..2].stop()/run())
  cannot run against a server we do not own: they are skipped below, and as a safety net
  any stop()/run() call skips the calling test;
- marks the tests in SKIPS as skipped, each with its reason;
- bounds every test phase (setup, call, teardown) by KAZOO_SUITE_TEST_TIMEOUT seconds
  (default 60): on expiry it dumps all threads' stacks and raises in the test, so one hung
  test fails instead of hanging the run;
- supplies `mock` (= unittest.mock) and a minimal `objgraph.count` when those packages
  (python3-mock, python3-objgraph) are not installed: kazoo's tests import them.
"""
import faulthandler
import gc
import os
import signal
import sys
import types
import unittest.mock

import pytest

# ---------------------------------------------------------------- import shims
try:  # python3-mock; unittest.mock has the same API
    import mock  # noqa: F401
except ImportError:
    sys.modules["mock"] = unittest.mock

try:  # python3-objgraph; kazoo's test_cache only uses objgraph.count(typename)
    import objgraph  # noqa: F401
except ImportError:
    _objgraph = types.ModuleType("objgraph")

    def _count(typename, objects=None):
        objs = gc.get_objects() if objects is None else objects
        return sum(1 for o in objs if type(o).__name__ == typename)

    _objgraph.count = _count
    sys.modules["objgraph"] = _objgraph


# ---------------------------------------------------------------- skip list
# node id (relative to kazoo/tests) -> reason. A node id ending in "::" skips a whole class.
NEEDS_OWN_SERVER = ("stops and restarts ensemble members (kazoo harness cluster[i].stop()/run()); "
                    "we point kazoo at a server we do not own")
OWN_ENSEMBLE = " (KAZOO_SUITE_ENSEMBLE=3 gives it one; test_kazoo_suite.py runs it so)"
SKIPS = {
    "test_client.py::TestClient::test_update_host_list":
        "stops cluster[0] and expects the client to stay connected to cluster[1..2]: needs a 3-node "
        "ensemble owned by the harness" + OWN_ENSEMBLE,
    "test_client.py::TestClient::test_request_queuing_session_recovered": NEEDS_OWN_SERVER + OWN_ENSEMBLE,
    "test_client.py::TestClient::test_request_queuing_session_expired": NEEDS_OWN_SERVER + OWN_ENSEMBLE,
    "test_connection.py::TestReadOnlyMode::test_read_only":
        "stops cluster[1] and cluster[2] so cluster[0] goes read-only: needs a 3-node ensemble "
        "with readonlymode.enabled, which KAZOO_SUITE_ENSEMBLE=3 gives it (test_kazoo_suite.py runs it so)",
    "test_client.py::TestReconfig::":
        "dynamic reconfiguration needs a quorum ensemble with reconfigEnabled=true and the harness's "
        "superDigest. A standalone ZooKeeper 3.8 answers every reconfig with error -123 "
        "(RECONFIGDISABLED), which kazoo 2.8 cannot map (RuntimeError in its reader thread), so the "
        "call never returns and the test hangs" + OWN_ENSEMBLE,
    "test_sasl.py::TestLegacySASLDigestAuthentication::test_connect_sasl_auth":
        "needs a server with a JAAS login config (DigestLoginModule, user jaasuser), which kazoo's "
        "harness sets up via ZOOKEEPER_JAAS_AUTH; SASL is not among the keeper's auth schemes "
        "(world, auth, digest, ip). The test_invalid_sasl_auth tests still run",
    "test_sasl.py::TestSASLDigestAuthentication::test_connect_sasl_auth":
        "needs a server with a JAAS login config (DigestLoginModule, user jaasuser), which kazoo's "
        "harness sets up via ZOOKEEPER_JAAS_AUTH; SASL is not among the keeper's auth schemes "
        "(world, auth, digest, ip). The test_invalid_sasl_auth tests still run",
}
# Skipped against one external server, run against the plugin's own ensemble.
# A node id ending in "::" names a whole class.
ENSEMBLE_TESTS = ("test_connection.py::TestReadOnlyMode::test_read_only",
                  "test_client.py::TestClient::test_update_host_list",
                  "test_client.py::TestClient::test_request_queuing_session_recovered",
                  "test_client.py::TestClient::test_request_queuing_session_expired",
                  "test_client.py::TestReconfig::")
# Tests that skip themselves here (not listed above): test_build.py (runs only on Travis),
# test_sasl.py TestGSSAPISASLAuthentication (needs a Kerberos KDC), gevent/eventlet handler
# tests when those packages are missing.


class _ExternalMember:
    """The already running server, as kazoo's ManagedZooKeeper is seen by the tests."""

    def __init__(self, address, index):
        self.address = address
        self.index = index
        self.running = True
        host, _, port = address.rpartition(":")
        self.client_port = int(port)
        self.host = host

    def run(self):
        pytest.skip("kazoo test tried to (re)start cluster[%d]: %s" % (self.index, NEEDS_OWN_SERVER))

    def stop(self):
        pytest.skip("kazoo test tried to stop cluster[%d]: %s" % (self.index, NEEDS_OWN_SERVER))

    def reset(self):
        pytest.skip("kazoo test tried to reset cluster[%d]: %s" % (self.index, NEEDS_OWN_SERVER))

    destroy = reset


class _ExternalCluster:
    """Looks like kazoo.testing.common.ZookeeperCluster with one member (the external server)."""

    def __init__(self, hosts):
        self.hosts = hosts
        self._member = _ExternalMember(hosts, 0)

    def __getitem__(self, k):
        if k == 0:
            return self._member
        # cluster[1], cluster[2]: only used to stop/restart members of a 3-node ensemble
        return _ExternalMember(self.hosts, k)

    def __iter__(self):
        return iter([self._member])

    def __len__(self):
        return 1

    def start(self):
        pass

    def stop(self):
        pass

    def terminate(self):
        pass

    def reset(self):
        pass


class _OwnedMember:
    """An ensemble.py member, as kazoo's ManagedZooKeeper is seen by the tests."""

    def __init__(self, ensemble, member):
        self._ensemble = ensemble
        self._member = member
        self.host = member.placement.host
        self.client_port = member.port
        self.address = "%s:%d" % (self.host, self.client_port)

    @property
    def running(self):
        return self._member.running()

    def run(self):
        if not self.running:
            self._ensemble.start(self._member, wait=False)

    def stop(self):
        if self.running:
            self._ensemble.stop(self._member)


class _OwnedCluster:
    """Looks like kazoo.testing.common.ZookeeperCluster over a kipper ensemble started here."""

    def __init__(self, n, target="kipper"):
        from ensemble import Ensemble
        self._ensemble = Ensemble(n, tick_time=2000, init_limit=4, sync_limit=2,
                                  extra={"maxClientCnxns": "0", "readonlymode.enabled": "true"},
                                  target=target, reconfig_enabled=True)
        self._members = [_OwnedMember(self._ensemble, m) for m in self._ensemble.members]
        self._ensemble.start()

    def __getitem__(self, k):
        return self._members[k]

    def __iter__(self):
        return iter(self._members)

    def __len__(self):
        return len(self._members)

    def start(self):
        for m in self._members:
            m.run()
        self._ensemble.wait_ready()

    def stop(self):
        pass   # kept running between tests, as kazoo's own cluster is

    def terminate(self):
        self._ensemble.close()

    def reset(self):
        pass


_OWNED = []


def pytest_configure(config):
    hosts = os.environ.get("KAZOO_SUITE_HOSTS")
    members = os.environ.get("KAZOO_SUITE_ENSEMBLE")
    if not hosts and not members:
        raise pytest.UsageError("kazoo_suite_plugin: set KAZOO_SUITE_HOSTS=host:port of the server to test, "
                                "or KAZOO_SUITE_ENSEMBLE=<members> for an ensemble of its own")
    import kazoo.testing.harness as harness

    if members:
        cluster = _OwnedCluster(int(members), os.environ.get("KAZOO_SUITE_ENSEMBLE_TARGET") or "kipper")
        _OWNED.append(cluster)
    else:
        cluster = _ExternalCluster(hosts)
    harness.get_global_cluster = lambda: cluster
    harness.CLUSTER = cluster


def pytest_unconfigure(config):
    while _OWNED:
        _OWNED.pop().terminate()


def pytest_collection_modifyitems(config, items):
    owned = bool(os.environ.get("KAZOO_SUITE_ENSEMBLE"))
    for item in items:
        nodeid = item.nodeid
        if owned and any(nodeid.endswith(t) or (t.endswith("::") and t in nodeid) for t in ENSEMBLE_TESTS):
            continue
        # --pyargs gives node ids relative to rootdir or absolute; match on the tail
        for key, reason in SKIPS.items():
            if nodeid.endswith(key) or (key.endswith("::") and key in nodeid):
                item.add_marker(pytest.mark.skip(reason=reason))


# ---------------------------------------------------------------- per-phase time bound
class KazooTestTimeout(Exception):
    pass


def _bounded(phase, item):
    limit = float(os.environ.get("KAZOO_SUITE_TEST_TIMEOUT", "60"))

    def on_alarm(signum, frame):
        faulthandler.dump_traceback(all_threads=True)
        raise KazooTestTimeout("%s of %s exceeded %.0fs" % (phase, item.nodeid, limit))

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    return old


def _unbound(old):
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    old = _bounded("setup", item)
    try:
        yield
    finally:
        _unbound(old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    old = _bounded("call", item)
    try:
        yield
    finally:
        _unbound(old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    old = _bounded("teardown", item)
    try:
        yield
    finally:
        _unbound(old)
