"""autopurge: old snapshots and the logs only they needed are removed, and the keeper
still restores everything from what is left."""
import glob
import os

import pytest

from harness import wait_until


def _snapshots(server):
    return sorted(glob.glob(os.path.join(server.data_dir, "version-2", "snapshot.*")))


def _logs(server):
    return sorted(glob.glob(os.path.join(server.data_dir, "version-2", "log.*")))


@pytest.mark.kipper_only
def test_autopurge_keeps_snap_retain_count_and_restores(make_keeper, kazoo_factory):
    """With autopurge on, at most snapRetainCount snapshots remain, and a restart still has every write."""
    s = make_keeper(extra={"snapCount": 40, "autopurge.snapRetainCount": 3, "autopurge.purgeInterval": 1,
                           "preAllocSize": 64})
    zk = kazoo_factory(s)
    for i in range(600):
        zk.create("/p%04d" % i, b"%d" % i)
    # Snapshots are written by a child process: wait for several to exist.
    wait_until(lambda: len(_snapshots(s)) > 3, timeout=20, what="more than 3 snapshots")
    logs_before = set(_logs(s))
    zk.stop()
    zk.close()
    assert s.stop() == 0
    # The purge runs a second after start, then every purgeInterval hours.
    s.start()
    wait_until(lambda: len(_snapshots(s)) <= 3, timeout=20, what="the purge to leave 3 snapshots")
    assert "purged" in s.log()
    # the restart itself starts a new log: compare the files, not their number
    assert not logs_before <= set(_logs(s)), "logs only the purged snapshots needed must go too"
    zk = kazoo_factory(s)
    children = zk.get_children("/")
    assert len([c for c in children if c.startswith("p")]) == 600
    assert zk.get("/p0599")[0] == b"599"
    # And the remaining files alone restore the same state.
    zk.stop()
    zk.close()
    assert s.stop() == 0
    s.start()
    zk = kazoo_factory(s)
    assert len([c for c in zk.get_children("/") if c.startswith("p")]) == 600
    zk.stop()
    zk.close()
