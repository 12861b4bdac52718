"""Migration from Apache ZooKeeper to kipper, member by member, with no downtime (issue 14;
docs/migrating-from-zookeeper.md), run end to end by migration.run_migration:

A 3-member Apache ZooKeeper 3.8 ensemble (a dataLogDir apart from each dataDir, snapCount 400
so that it takes fuzzy snapshots and rolls its logs under the load) serves three kazoo
sessions (each an ephemeral plus conditional setData and creates), a C-client session
(cli_mt, an ephemeral plus creates) and a kipper broker (its coordinator chroot on the
ensemble, an idempotent acks=all producer). The followers, then the leader, are each stopped
and started as `kipper keeper` on the same zoo.cfg, myid, dataDir and dataLogDir; then one
kipper follower goes back to ZooKeeper. Asserted:

- kipper starts from ZooKeeper's own snapshot files (digest section and all), not from the
  logs alone;
- the clients see connection losses (moves) and nothing else: no other kazoo error, no
  SUSPENDED session turning LOST, no C-client error but ZCONNECTIONLOSS;
- every session is kept (the same ids at the end), and so is every ephemeral;
- the history of kazoo writes is explained by one sequential order (ensemble.HistoryChecker):
  every acknowledged write present with the zxid and version it was acknowledged with;
- every member holds the same tree under the test's nodes and the broker's chroot, node for
  node (data and every Stat field);
- every record the broker acknowledged is in its log at its offset.

Skipped when Apache ZooKeeper 3.8 or its C client is not installed. About 30 s on two cores.
`make migrate-demo` runs the same with 5 members and longer load.
"""
import os

import pytest

import apache_zk
from apache_zk import ApacheZooKeeper
import zk_clients
from migration import run_migration

pytestmark = [
    pytest.mark.kipper_only(reason="issue 14: replacing Apache ZooKeeper members by kipper"),
    pytest.mark.skipif(not apache_zk.available() or not zk_clients.cli_mt_available(),
                       reason="Apache ZooKeeper 3.8 and its C client are not installed"),
]


def test_zookeeper_ensemble_migrates_to_kipper_and_back():
    rep = run_migration(3, dwell_s=3.0, clients=3)
    print("\n" + rep.text())
    assert not rep.problems, rep.text()
    assert sum(rep.lost.values()) == 0, rep.text()
    assert rep.counts["add ok"] >= 100 and rep.counts["set ok"] >= 100, rep.text()
    assert rep.cli[0] >= 20 and rep.kafka["acknowledged"] >= 100, rep.text()


@pytest.mark.parametrize("method", ["gz", "snappy"])
def test_keeper_starts_on_zookeeper_data_with_compressed_snapshots(method, tmp_path):
    """A ZooKeeper 3.8 run with zookeeper.snapshot.compression.method=gz or snappy
    writes its snapshots as snapshot.<zxid>.gz or .snappy (SnapStream). kipper
    started on a copy of that data folder loads the newest of them (its log says
    so) and serves every node with its data and version; the snapshot files are
    ZooKeeper's own, not rewritten first."""
    import glob
    import re
    import shutil
    from kazoo.client import KazooClient
    from harness import Keeper

    zk = ApacheZooKeeper(extra={"snapCount": 40},
                         jvm_flags=["-Dzookeeper.snapshot.compression.method=%s" % method])
    written = {}
    try:
        zk.start()
        c = KazooClient(hosts=zk.hosts, timeout=10.0)
        c.start(timeout=15.0)
        c.ensure_path("/compressed")
        for i in range(150):
            path = "/compressed/n%03d" % i
            c.create(path, b"v%d" % i)
            if i % 3 == 0:
                c.set(path, b"set%d" % i)
        for i in range(150):
            data, stat = c.get("/compressed/n%03d" % i)
            written[i] = (data, stat.version, stat.mzxid)
        c.stop()
        c.close()
    finally:
        zk.stop()
    snaps = sorted(glob.glob(os.path.join(zk.data_dir, "version-2", "snapshot.*")))
    suffix = "." + method
    assert snaps and all(s.endswith(suffix) for s in snaps), snaps
    newest = max(snaps, key=lambda s: int(os.path.basename(s).split(".")[1], 16))
    assert int(os.path.basename(newest).split(".")[1], 16) > 0, snaps

    keeper = Keeper(workdir=str(tmp_path))
    shutil.rmtree(keeper.data_dir)
    shutil.copytree(zk.data_dir, keeper.data_dir)
    shutil.rmtree(zk.workdir, ignore_errors=True)
    try:
        keeper.start()
        with open(keeper.log_path, encoding="utf-8", errors="replace") as f:
            log = f.read()
        assert re.search(r"loaded snapshot \S*/%s: " % re.escape(os.path.basename(newest)), log), log
        c = KazooClient(hosts=keeper.hosts, timeout=10.0)
        c.start(timeout=15.0)
        try:
            for i, (data, version, mzxid) in written.items():
                got, stat = c.get("/compressed/n%03d" % i)
                assert (got, stat.version, stat.mzxid) == (data, version, mzxid), i
        finally:
            c.stop()
            c.close()
    finally:
        keeper.stop()
