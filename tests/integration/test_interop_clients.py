"""Apache ZooKeeper's own clients get the same answers from kipper's keeper as from ZooKeeper 3.8.

Each test starts a fresh kipper keeper and a fresh real Apache ZooKeeper (Debian's
package, see apache_zk.py), runs the same scripted client session against both and
compares the normalized transcripts (zk_clients.normalize: session ids, zxids, times,
ports and JVM noise are symbolized; everything else must match byte for byte).

The server under test is kipper (bin/kipper) unless KIPPER_TEST_TARGET=zookeeper (as for
the other integration tests), which compares ZooKeeper with itself (a check of the tests).
On a mismatch the test fails with a unified diff (zookeeper -> kipper) and keeps the raw
transcripts in the target server's workdir (KIPPER_TEST_KEEP=1 keeps them always).
"""
import difflib
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from apache_zk import ApacheZooKeeper, available as zookeeper_available
from harness import Keeper
import zk_clients
from zk_clients import CliMt, normalize, zkcli_transcript

TARGET = os.environ.get("KIPPER_TEST_TARGET", "kipper").strip().lower() or "kipper"
HERE = os.path.dirname(os.path.abspath(__file__))

# digest of "u:p": base64(sha1("u:p")), as in DigestAuthenticationProvider.generateDigest
DIGEST_UP = "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="

pytestmark = [
    pytest.mark.skipif(not zookeeper_available(), reason="Debian package zookeeper not installed"),
]


def _target_class():
    return ApacheZooKeeper if TARGET == "zookeeper" else Keeper


@pytest.fixture
def servers(request):
    """(reference Apache ZooKeeper, server under test), both fresh, both stopped afterwards."""
    ref = ApacheZooKeeper(tick_time=200)
    target = _target_class()(tick_time=200)
    try:
        ref.start()
        target.start()
        yield ref, target
    finally:
        target_alive = target.alive()
        target.stop()
        ref.stop()
        shutil.rmtree(ref.workdir, ignore_errors=True)
        # conftest.py marks failed tests; keep the target's workdir (log, transcripts) then
        if not getattr(request.node, "keeper_failed", False) and not os.environ.get("KIPPER_TEST_KEEP"):
            shutil.rmtree(target.workdir, ignore_errors=True)
    assert target_alive, "server under test died during the test; log:\n%s" % target.log()


def _compare(name, ref_lines, target_lines, ref_raw, target_raw, target, t0, t1):
    ref_norm, ref_problems = normalize(ref_lines, t0, t1)
    tgt_norm, tgt_problems = normalize(target_lines, t0, t1)
    with open(os.path.join(target.workdir, name + ".zookeeper.txt"), "w") as f:
        f.write(ref_raw)
    with open(os.path.join(target.workdir, name + "." + TARGET + ".txt"), "w") as f:
        f.write(target_raw)
    assert not ref_problems, "reference ZooKeeper transcript: %s" % ref_problems
    if ref_norm != tgt_norm or tgt_problems:
        diff = "\n".join(difflib.unified_diff(ref_norm, tgt_norm, "zookeeper", TARGET, lineterm="", n=4))
        pytest.fail("%s: %s transcript differs from Apache ZooKeeper's (raw transcripts in %s)\n%s\n%s"
                    % (name, TARGET, target.workdir, "\n".join(tgt_problems), diff), pytrace=False)


# --------------------------------------------------------------------------- zkCli.sh

ZKCLI_SESSION_1 = [
    # persistent nodes, data, versions
    "create /it",
    "create /it/p hello",
    "create /it/p again",                      # NODEEXISTS
    "get /it/p",
    "get -s /it/p",
    "set /it/p v1",
    "set -v 1 /it/p v2",
    "set -v 1 /it/p v3",                       # BADVERSION
    "set -s /it/p v4",
    "stat /it/p",
    # NONODE in every shape
    "stat /it/nope",
    "get /it/nope",
    "set /it/nope x",
    "delete /it/nope",
    "ls /it/nope",
    "getAcl /it/nope",
    "create /it/nope/child x",
    # node kinds
    "create -e /it/eph e",
    "create -e /it/eph/child x",               # NOCHILDRENFOREPHEMERALS
    "create -s /it/seq- a",
    "create -s /it/seq- b",
    "create -s -e /it/eseq- c",
    "create -c /it/cont",
    "create -t 60000 /it/ttl t",
    "create -s -t 60000 /it/ttlseq- t",
    "create /it/empty",
    "get -s /it/empty",
    "get -s /it/eph",
    "ls /it",
    "ls -s /it",
    "ls -R /it",
    "ls /",
    "ls -s /zookeeper",
    "get -s /zookeeper",
    "stat /zookeeper/config",
    "stat /zookeeper/quota",
    # deletes
    "delete /it",                              # NOTEMPTY
    "delete -v 5 /it/p",                       # BADVERSION
    "delete /it/seq-0000000003",
    "delete -v 0 /it/seq-0000000004",
    "ls -s /it",
    # ACLs
    "getAcl /it/eph",
    "getAcl -s /it/eph",
    "create /it/secret s digest:%s:cdrwa" % DIGEST_UP,
    "getAcl /it/secret",
    "get /it/secret",                          # NOAUTH
    "set /it/secret x",                        # NOAUTH
    "create /it/secret/c x",                   # NOAUTH
    "ls /it/secret",                           # NOAUTH
    "setAcl /it/p world:anyone:r",
    "set /it/p x",                             # NOAUTH
    "getAcl -s /it/p",
    "setAcl -v 0 /it/p world:anyone:cdrwa",    # BADVERSION (aclVersion is 1)
    "setAcl /it/p world:anyone:cdrwa",         # NOAUTH (no ADMIN)
    "create /it/ro x world:anyone:r",
    "delete /it/ro",                           # allowed: DELETE is checked on the parent
    "create /it/nodel x world:anyone:cdrwa",
    "setAcl /it/nodel world:anyone:rwa",
    "create /it/nodel/kid x",                  # NOAUTH (no CREATE)
    "addauth digest u:wrong",
    "get /it/secret",                          # still NOAUTH
    "addauth digest u:p",
    "get /it/secret",
    "set -s /it/secret s2",
    "create /it/mine m auth::cdrwa",
    "getAcl /it/mine",
    "create /it/ipn x ip:127.0.0.1:cdrwa",
    "get /it/ipn",
    "getAcl /it/ipn",
    "create /it/ipx x ip:10.9.9.9:cdrwa",
    "get /it/ipx",                             # NOAUTH
    # watches (events are compared as their own ordered list)
    "get -w /it/p",
    "setAcl /it/p world:anyone:cdrwa",         # NOAUTH still (ACL is r): no event
    "stat -w /it/later",
    "create /it/later x",
    "get -w /it/later",
    "set /it/later y",
    "set /it/later z",                         # one-shot: no second event
    "ls -w /it",
    "create /it/kid x",
    "delete /it/kid",
    "stat -w /it/later",
    "delete /it/later",
    "sync /it",
    "stat /it",
]

ZKCLI_SESSION_2 = [
    "ls /it",                                  # the first session's ephemerals are gone
    "get /it/secret",                          # NOAUTH: auth is per session
    "get /it/ipn",
    "get -s /it/ttl",
    "getAcl /it/mine",
    "ls -s /it",
    "delete /it/ipx",                          # allowed: DELETE is checked on the parent
    "delete /it/secret",
    "deleteall /it",                           # NOAUTH listing /it/mine, the one unreadable child
    "addauth digest u:p",
    "setAcl /it/nodel world:anyone:cdrwa",
    "deleteall /it",
    "ls /",
    "stat /",
]


@pytest.mark.skipif(not zk_clients.zkcli_available(), reason="zkCli.sh not installed")
def test_zkcli_sessions_match_zookeeper(servers):
    """zkCli.sh (Java client) gets the same answers and watch events from the keeper as from ZooKeeper."""
    ref, target = servers
    t0 = time.time()
    results = {}
    for name, server in (("zookeeper", ref), (TARGET, target)):
        lines1, raw1 = zkcli_transcript(server.hosts, ZKCLI_SESSION_1)
        lines2, raw2 = zkcli_transcript(server.hosts, ZKCLI_SESSION_2)
        results[name] = (lines1 + ["=== session 2"] + lines2, raw1 + "=== session 2\n" + raw2)
    t1 = time.time()
    _compare("zkcli", results["zookeeper"][0], results[TARGET][0],
             results["zookeeper"][1], results[TARGET][1], target, t0, t1)


ZKCLI_NEWER_OPS = [
    "create /nw",
    "create -e /nw/e1 x",
    "create -e /nw/e2 x",
    "create /nw/p x",
    "create /nw/p/q x",
    "getEphemerals /nw",
    "getEphemerals /",
    "getAllChildrenNumber /nw",
    "getAllChildrenNumber /",
    "addWatch /nw/p",                          # persistent
    "set /nw/p 1",
    "set /nw/p 2",                             # persistent: fires again
    "addWatch -m PERSISTENT_RECURSIVE /nw",
    "set /nw/p/q 1",
    "create /nw/p/q/r x",
    "delete /nw/p/q/r",
    "removewatches /nw/p",
    "set /nw/p 3",
    "get -w /nw/p",
    "removewatches /nw/p -d",
    "removewatches /nw/none",                  # NOWATCHER
    "config",
    "whoami",
    "addauth digest u:p",
    "whoami",
    "delete /nw/e2",                           # recursive watch: NodeDeleted
    "delete /nw/e1",
    "sync /nw",
    "ls -R /nw",
]


@pytest.mark.skipif(not zk_clients.zkcli_available(), reason="zkCli.sh not installed")
def test_zkcli_newer_operations_match_zookeeper(servers):
    """zkCli.sh's 3.5+ commands (getEphemerals, getAllChildrenNumber, addWatch, removewatches, config, whoami) match ZooKeeper."""
    ref, target = servers
    t0 = time.time()
    results = {}
    for name, server in (("zookeeper", ref), (TARGET, target)):
        results[name] = zkcli_transcript(server.hosts, ZKCLI_NEWER_OPS)
    t1 = time.time()
    _compare("zkcli-newer", results["zookeeper"][0], results[TARGET][0],
             results["zookeeper"][1], results[TARGET][1], target, t0, t1)


# --------------------------------------------------------------------------- cli_mt

CLI_MT_SESSION = [
    "create /cm",
    "create /cm",                              # NODEEXISTS (-110)
    "create2 /cm/a",
    "create +e /cm/e",
    "create +s /cm/s",
    "create +es /cm/s",
    "create +c /cm/c",
    "create +t=60000 /cm/t",
    "create2 +st=60000 /cm/ts",
    "create2 +e /cm/e/child",                  # NOCHILDRENFOREPHEMERALS (-108)
    "create /cm/none/x",                       # NONODE (-101)
    "get /cm",                                 # sets a data watch
    "set /cm hello",                           # fires it, before the reply
    "get /cm",
    "ls /cm",                                  # sets a child watch
    "ls2 /cm",
    "exists /cm/nope",                         # synchronous in cli_mt: Error -101
    "wexists /cm/w",
    "create /cm/w",                            # CREATED_EVENT
    "delete /cm",                              # NOTEMPTY (-111)
    "delete /cm/none",
    "set /cm/none x",
    "get /cm2/secret",                         # NOAUTH (-102)
    "ls /cm2/secret",
    "addauth digest u:wrong",
    "get /cm2/secret",
    "addauth digest u:p",
    "get /cm2/secret",
    "delete /cm/a",
    "sync /cm",
    "config",
    "get /zookeeper",
    "ls /zookeeper",
    "ls2 /",
    "get /nope",
]


def _prepare_cli_mt(hosts):
    """Create /cm2/secret, readable only by digest u:p, with zkCli (cli_mt cannot set ACLs)."""
    lines, raw = zkcli_transcript(hosts, ["create /cm2 x", "create /cm2/secret s digest:%s:cdrwa" % DIGEST_UP])
    assert "Created /cm2/secret" in raw, raw


def _cli_mt_transcript(hosts, commands):
    cli = CliMt(hosts)
    try:
        for c in commands:
            cli.run(c)
        lines = cli.close()
    finally:
        cli.kill()
    return lines, "\n".join(lines) + "\n"


@pytest.mark.skipif(not zk_clients.cli_mt_available(), reason="zookeeper-bin (cli_mt) not installed")
def test_cli_mt_session_matches_zookeeper(servers):
    """cli_mt (ZooKeeper C client) gets the same answers and watch events from the keeper as from ZooKeeper."""
    ref, target = servers
    commands = CLI_MT_SESSION
    t0 = time.time()
    results = {}
    for name, server in (("zookeeper", ref), (TARGET, target)):
        _prepare_cli_mt(server.hosts)
        results[name] = _cli_mt_transcript(server.hosts, commands)
    t1 = time.time()
    _compare("cli_mt", results["zookeeper"][0], results[TARGET][0],
             results["zookeeper"][1], results[TARGET][1], target, t0, t1)


# --------------------------------------------------------------------------- libzookeeper-mt

@pytest.fixture(scope="module")
def watch_fires_binary():
    """tests/integration/c/watch_fires.c compiled against libzookeeper-mt."""
    if not os.path.exists("/usr/include/zookeeper/zookeeper.h") or not shutil.which("gcc"):
        pytest.skip("libzookeeper-mt-dev or gcc not installed")
    out_dir = tempfile.mkdtemp(prefix="kipper-cclient-")
    exe = os.path.join(out_dir, "watch_fires")
    try:
        subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-O1", "-o", exe,
                        os.path.join(HERE, "c", "watch_fires.c"), "-lzookeeper_mt"],
                       check=True, timeout=60, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        yield exe
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def test_c_library_watch_fires(servers, watch_fires_binary):
    """A libzookeeper-mt program's data/child/exists watches fire and multi is atomic on the keeper, as on ZooKeeper."""
    ref, target = servers
    outputs = {}
    for name, server in (("zookeeper", ref), (TARGET, target)):
        proc = subprocess.run([watch_fires_binary, server.hosts, "/cw"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=60)
        outputs[name] = (proc.returncode, proc.stdout.decode(errors="replace"),
                         proc.stderr.decode(errors="replace"))
    assert outputs["zookeeper"][0] == 0, "reference run failed:\n%s\n%s" % outputs["zookeeper"][1:]
    if outputs[TARGET][:2] != outputs["zookeeper"][:2]:
        diff = "\n".join(difflib.unified_diff(outputs["zookeeper"][1].splitlines(),
                                              outputs[TARGET][1].splitlines(),
                                              "zookeeper", TARGET, lineterm=""))
        pytest.fail("libzookeeper-mt program: exit %d on %s (zookeeper: 0)\n%s\nclient library log:\n%s"
                    % (outputs[TARGET][0], TARGET, diff, outputs[TARGET][2]), pytrace=False)
