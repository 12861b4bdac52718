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
import pytest

import apache_zk
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
