"""kazoo's own test suite passes against kipper's keeper with no failure that Apache ZooKeeper 3.8 lacks.

The suite is the one shipped inside Debian's python3-kazoo (kazoo.tests). Its harness would
start a Java ensemble; kazoo_suite_plugin.py points it at an already running server instead
and holds the list of skipped tests, each with its reason. This test runs the suite twice
at the same time, against a real standalone Apache ZooKeeper 3.8 (the baseline, which tells
which tests fail there too) and against a standalone kipper keeper, both with kazoo's harness
settings (tickTime=2000, maxClientCnxns=0, all four-letter words), and fails when kipper
fails a test that ZooKeeper passes. Each run takes about 1.5 minutes; they share nothing but
the CPUs (the suite mostly waits on its servers), so together they take about as long. A second test runs
kazoo's tests that stop members (TestReadOnlyMode, and TestClient's test_update_host_list and
test_request_queuing_session_recovered/_expired) against a 3-member kipper ensemble with
readonlymode.enabled that the plugin starts itself (KAZOO_SUITE_ENSEMBLE=3; about 25 s). It has
no ZooKeeper baseline: ZooKeeper 3.8 fails it under kazoo's harness settings, since without
localSessionsEnabled it answers a new read-only session with a bare NOTREADONLY reply header and
disconnects a session of the ensemble reconnecting read-only (docs/migrating-from-zookeeper.md);
the TestClient ones pass on a ZooKeeper ensemble too. A third runs kazoo's TestReconfig on a
3-member ensemble of the plugin's with reconfigEnabled and the harness's super digest, of ZooKeeper
and of the target at once (about 15 s).

Run by hand against any server:
    /usr/bin/python3 tests/integration/test_kazoo_suite.py zookeeper|kipper|HOST:PORT [pytest args]

Environment: KIPPER_TEST_TARGET=zookeeper runs the "kipper" side on ZooKeeper too (checks
the harness itself); KAZOO_SUITE_K=<pytest -k expression> runs a subset; KIPPER_TEST_KEEP=1
keeps the work folders (suite output, server logs), which are otherwise removed after a pass.
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from apache_zk import ApacheZooKeeper, available as zookeeper_available  # noqa: E402
from harness import Keeper  # noqa: E402

PYTHON = "/usr/bin/python3"
TARGET = os.environ.get("KIPPER_TEST_TARGET", "kipper").strip().lower() or "kipper"
# kazoo's own harness (kazoo/testing/common.py) runs ZooKeeper with these
SERVER_SETTINGS = dict(tick_time=2000, extra={"maxClientCnxns": "0"})
SUITE_TIMEOUT = 600          # whole run, seconds
TEST_TIMEOUT = 30            # each test phase (the slowest legitimate one takes ~10 s)


def kazoo_suite_available():
    try:
        import kazoo.tests  # noqa: F401
        import kazoo.testing.harness  # noqa: F401
    except ImportError:
        return False
    return True


def run_kazoo_suite(hosts, workdir, extra_args=(), timeout=SUITE_TIMEOUT, ensemble_members=None,
                    ensemble_target="kipper"):
    """Run kazoo.tests against hosts, or (ensemble_members=N) against an N-member ensemble
    (of ensemble_target: kipper or zookeeper) the plugin starts itself; returns
    ({test id: (outcome, message)}, output path)."""
    junit = os.path.join(workdir, "kazoo-suite.xml")
    out_path = os.path.join(workdir, "kazoo-suite.out")
    env = dict(os.environ, PYTHONPATH=HERE, PYTHONDONTWRITEBYTECODE="1",
               KAZOO_SUITE_TEST_TIMEOUT=str(TEST_TIMEOUT))
    if ensemble_members:
        env["KAZOO_SUITE_ENSEMBLE"] = str(ensemble_members)
        env["KAZOO_SUITE_ENSEMBLE_TARGET"] = ensemble_target
        env.pop("KAZOO_SUITE_HOSTS", None)
    else:
        env["KAZOO_SUITE_HOSTS"] = hosts
    env.pop("ZOOKEEPER_PATH", None)
    cmd = [PYTHON, "-m", "pytest", "-p", "kazoo_suite_plugin", "-p", "no:cacheprovider",
           "--rootdir", workdir, "-o", "junit_family=xunit1", "--junitxml", junit,
           "-q", "-rfEs", "--pyargs", "kazoo.tests"]
    k = os.environ.get("KAZOO_SUITE_K")
    if k:
        cmd += ["-k", k]
    cmd += list(extra_args)
    with open(out_path, "wb") as out:
        proc = subprocess.run(cmd, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.STDOUT, timeout=timeout)
    if not os.path.exists(junit):
        raise AssertionError("kazoo suite produced no report (exit %d); output in %s"
                             % (proc.returncode, out_path))
    return parse_junit(junit), out_path


def parse_junit(path):
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        # "kazoo.tests.test_client.TestClient" (or a path-like prefix) -> "test_client.TestClient"
        tail = classname.split("kazoo.tests.")[-1]
        test_id = "%s::%s" % (tail, case.get("name"))
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or "").splitlines()[0:1]
                message = message[0] if message else child.tag
                break
            if child.tag == "skipped":
                outcome, message = "skipped", child.get("message") or ""
        results[test_id] = (outcome, message)
    return results


def _failed(results):
    return {t: m for t, (o, m) in results.items() if o == "failed"}


def _run_against(server_cls, name, workdirs):
    server = server_cls(**SERVER_SETTINGS)
    workdir = tempfile.mkdtemp(prefix="kazoo-suite-%s-" % name)
    workdirs += [workdir, server.workdir]
    server.start()
    try:
        results, out = run_kazoo_suite(server.hosts, workdir)
        alive = server.alive()
    finally:
        server.stop()
    assert alive, "%s died during kazoo's suite; log:\n%s" % (name, server.log()[-5000:])
    return results, out


@pytest.fixture
def workdirs(request):
    """Work folders to remove after the test unless it failed (or KIPPER_TEST_KEEP is set)."""
    dirs = []
    yield dirs
    if not getattr(request.node, "keeper_failed", False) and not os.environ.get("KIPPER_TEST_KEEP"):
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(not kazoo_suite_available(), reason="python3-kazoo's test suite not installed")
@pytest.mark.skipif(not zookeeper_available(), reason="Debian package zookeeper not installed")
def test_kazoo_suite_no_failure_that_zookeeper_does_not_have(workdirs):
    """kazoo's own tests fail on the keeper only where they also fail on standalone Apache ZooKeeper 3.8."""
    target_cls = ApacheZooKeeper if TARGET == "zookeeper" else Keeper
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        on_zookeeper = pool.submit(_run_against, ApacheZooKeeper, "zookeeper", workdirs)
        on_target = pool.submit(_run_against, target_cls, TARGET, workdirs)
        baseline, zk_out = on_zookeeper.result()
        results, out = on_target.result()
    assert len(baseline) > 400, "kazoo suite ran only %d tests on ZooKeeper; output in %s" % (len(baseline), zk_out)

    zk_failed = _failed(baseline)
    new = {t: m for t, m in _failed(results).items() if t not in zk_failed}
    missing = sorted(t for t, (o, _) in baseline.items() if o == "passed" and t not in results)
    summary = "zookeeper: %d passed, %d failed (%s); %s: %d passed, %d failed (output in %s)" % (
        sum(o == "passed" for o, _ in baseline.values()), len(zk_failed), zk_out,
        TARGET, sum(o == "passed" for o, _ in results.values()), len(_failed(results)), out)
    print(summary)
    if zk_failed:
        print("failing on ZooKeeper too (tolerated):\n  " + "\n  ".join(
            "%s: %s" % kv for kv in sorted(zk_failed.items())))
    assert not new and not missing, "%s\n%d kazoo tests fail on %s but pass on ZooKeeper:\n  %s%s" % (
        summary, len(new), TARGET, "\n  ".join("%s: %s" % kv for kv in sorted(new.items())),
        ("\nnot run on %s: %s" % (TARGET, missing)) if missing else "")


# kazoo_suite_plugin.ENSEMBLE_TESTS, as parse_junit names them. The eventlet and gevent copies
# of the TestClient ones are left out: the same tests on other handlers, 15 s more.
ENSEMBLE_TESTS = ("test_connection.TestReadOnlyMode::test_read_only",
                  "test_client.TestClient::test_update_host_list",
                  "test_client.TestClient::test_request_queuing_session_recovered",
                  "test_client.TestClient::test_request_queuing_session_expired")
ENSEMBLE_SELECTION = "TestReadOnlyMode or (TestClient and (test_update_host_list or test_request_queuing_session))"


@pytest.mark.skipif(not kazoo_suite_available(), reason="python3-kazoo's test suite not installed")
@pytest.mark.skipif(TARGET != "kipper", reason="the plugin's own ensemble is made of kipper keepers")
def test_kazoo_ensemble_tests_on_a_kipper_ensemble(workdirs):
    """kazoo's tests that stop and start members, skipped against one server, pass against a
    3-member kipper ensemble with readonlymode.enabled that the plugin owns: TestReadOnlyMode
    (two members stopped), and TestClient's test_update_host_list (its only member stopped, the
    client moves to the others) and test_request_queuing_session_recovered/_expired (requests
    queued while the member is down, sent once it is back, or failed with its session)."""
    workdir = tempfile.mkdtemp(prefix="kazoo-suite-ensemble-")
    workdirs.append(workdir)
    results, out = run_kazoo_suite(None, workdir, ["-k", ENSEMBLE_SELECTION], timeout=180, ensemble_members=3)
    outcomes = {t: results.get(t, ("not run", "")) for t in ENSEMBLE_TESTS}
    bad = {t: o for t, o in outcomes.items() if o[0] != "passed"}
    assert not bad, "%s (output in %s)" % ("; ".join("%s: %s %s" % (t, o[0], o[1]) for t, o in bad.items()), out)


# kazoo's TestReconfig (test_no_super_auth, test_add_remove_observer, test_bad_input), as
# parse_junit names them
RECONFIG_TESTS = ("test_client.TestReconfig::test_no_super_auth",
                  "test_client.TestReconfig::test_add_remove_observer",
                  "test_client.TestReconfig::test_bad_input")


def _reconfig_tests_on(target, workdirs):
    workdir = tempfile.mkdtemp(prefix="kazoo-suite-reconfig-%s-" % target)
    workdirs.append(workdir)
    results, out = run_kazoo_suite(None, workdir, ["-k", "TestReconfig"], timeout=180, ensemble_members=3,
                                   ensemble_target=target)
    outcomes = {t: results.get(t, ("not run", "")) for t in RECONFIG_TESTS}
    return {t: o for t, o in outcomes.items() if o[0] != "passed"}, out


@pytest.mark.skipif(not kazoo_suite_available(), reason="python3-kazoo's test suite not installed")
@pytest.mark.skipif(not zookeeper_available(), reason="Debian package zookeeper not installed")
def test_kazoo_reconfig_tests_on_an_ensemble(workdirs):
    """kazoo's TestReconfig, skipped against one server, passes against a 3-member ensemble with
    reconfigEnabled and the super digest of kazoo's harness that the plugin owns, of Apache
    ZooKeeper 3.8 (the baseline) and of the target (both at once): a reconfig without the super
    user is refused, an observer nobody runs is added and removed, a from_config in the future
    is BADVERSION, a malformed joining string BADARGUMENTS."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = {t: pool.submit(_reconfig_tests_on, t, workdirs) for t in dict.fromkeys(("zookeeper", TARGET))}
        results = {t: f.result() for t, f in runs.items()}
    msgs = ["%s: %s (output in %s)" % (t, "; ".join("%s: %s %s" % (n, o[0], o[1]) for n, o in bad.items()), out)
            for t, (bad, out) in results.items() if bad]
    assert not msgs, "\n".join(msgs)


if __name__ == "__main__":
    # Manual run: test_kazoo_suite.py zookeeper|kipper|HOST:PORT [pytest args...]
    which = sys.argv[1] if len(sys.argv) > 1 else "kipper"
    args = sys.argv[2:]
    wd = tempfile.mkdtemp(prefix="kazoo-suite-manual-")
    if which in ("zookeeper", "kipper"):
        srv = (ApacheZooKeeper if which == "zookeeper" else Keeper)(**SERVER_SETTINGS).start()
        try:
            res, output = run_kazoo_suite(srv.hosts, wd, args)
        finally:
            srv.stop()
    else:
        res, output = run_kazoo_suite(which, wd, args)
    for test, msg in sorted(_failed(res).items()):
        print("FAILED %s: %s" % (test, msg))
    print("%d passed, %d failed, %d skipped; output in %s" % (
        sum(o == "passed" for o, _ in res.values()), len(_failed(res)),
        sum(o == "skipped" for o, _ in res.values()), output))
