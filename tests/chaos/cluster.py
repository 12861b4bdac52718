"""A whole cluster on hosts of its own: three keeper members (kipper's, or Apache
ZooKeeper 3.8 as the brokers' coordinator) on hosts k1..k3 and three brokers on
b1..b3, each in its network namespace (net.py), every server started through a
placement that can also carry the disk and clock fault shim.

    c = ChaosCluster(seed=7, target="kipper").start()
    c.net.cut("b1", "k1"); c.kill_broker(2); c.pause_keeper(3) ...
    c.shims["b1"].fsync_fail(); c.disks[2].fill()
    c.recover()        # heal the net, disks and clocks, resume and restart everything, full ISRs
    c.close()

Every server runs with the disk and clock shim preloaded (faults_disk.FaultShim,
unarmed until a schedule arms it), and each broker's log folder is a tmpfs of
its own (faults_disk.FullDisk) that a schedule can fill.
"""
import os
import shutil
import tempfile

from faults_disk import FaultShim, FullDisk
from net import Net
from repl_cluster import ReplCluster

KEEPERS = ("k1", "k2", "k3")
BROKERS = ("b1", "b2", "b3")


def broker_host(i):
    return "b%d" % i


def keeper_host(sid):
    return "k%d" % sid


class ChaosCluster:
    DISK_MB = 256            # each broker's log folder: room for every run of a module

    def __init__(self, seed=0, target="kipper", extra=None, reconfig=False):
        """reconfig: the keepers run with reconfigEnabled (nemesis.RECONFIG_SCHEDULES)."""
        from ensemble import Ensemble
        self.seed = seed
        self.target = target
        self.workdir = tempfile.mkdtemp(prefix="kipper-chaos-")
        self.shims = {h: FaultShim(self.workdir, "%s.ctl" % h) for h in KEEPERS + BROKERS}
        self.disks = {}
        self.net = Net(list(KEEPERS) + list(BROKERS), seed=seed)
        self.ens = Ensemble(3, target=target, placement=lambda sid: self._placement(keeper_host(sid)),
                            reconfig_enabled=reconfig)
        self.repl = ReplCluster(self.ens.hosts(), "/chaos", extra=extra,
                                placement=lambda i: self._placement(broker_host(i)))
        try:
            for i, b in self.repl.brokers.items():
                self.disks[i] = FullDisk(b.log_dir, size_mb=self.DISK_MB)
        except BaseException:
            self.close()
            raise

    def _placement(self, host):
        return self.net.placement(host, self.shims[host].placement_env())

    def start(self):
        try:
            self.ens.start()
            self.repl.start()
        except BaseException:
            self.close()
            raise
        return self

    # -- who is where
    def broker(self, i):
        return self.repl.brokers[i]

    def keeper(self, sid):
        return self.ens.member(sid)

    def leader_of(self, topic, p):
        return self.repl.leader(topic, p)

    def keeper_leader(self):
        """The sid of the member leading the ensemble, or None."""
        for m in self.ens.live():
            try:
                if self.ens.mode(m) == "leader":
                    return m.sid
            except OSError:
                continue
        return None

    # -- process faults
    def kill_broker(self, i):
        self.repl.kill(i)

    def pause_broker(self, i):
        self.repl.pause(i)

    def resume_broker(self, i):
        self.repl.resume(i)

    def kill_keeper(self, sid):
        self.ens.kill(self.keeper(sid))

    def pause_keeper(self, sid):
        self.ens.pause(self.keeper(sid))

    def resume_keeper(self, sid):
        self.ens.resume(self.keeper(sid))

    # -- after a fault
    def recover(self, topics=(), timeout=60):
        """Heal every link, disk and clock, resume paused processes, start the
        ones that died (killed, or stopped on a failed disk), and wait until the
        ensemble serves and every partition of `topics` ({topic: partitions})
        has a full ISR."""
        self.net.heal()
        for shim in self.shims.values():
            shim.heal()
        for disk in self.disks.values():
            disk.heal()
        for m in self.ens:
            if m.paused:
                self.ens.resume(m)
        for m in self.ens:
            if not m.running():
                if m.proc is not None:
                    m.stop()                     # reaped: it exited by itself
                self.ens.start(m, wait=False)
        self.ens.wait_ready(timeout=timeout)
        for i in list(self.repl.paused):
            self.repl.resume(i)
        for i, b in self.repl.brokers.items():
            if not b.alive():
                if b.proc is not None:
                    b.wait_exit()                # reaped: it exited by itself
                self.repl.start_broker(i, timeout=timeout)
        for topic, partitions in dict(topics).items():
            self.repl.wait_isr_full(topic, partitions, timeout=timeout)

    def logs(self):
        return self.repl.logs()

    def close(self, keep=False):
        """Stop every server (brokers first), then the network. Returns the
        brokers' errors (a broker that did not exit 0 on SIGTERM)."""
        errors = []
        try:
            for shim in self.shims.values():
                shim.heal()
            if hasattr(self, "repl"):
                errors = self.repl.close(keep=True)
        finally:
            try:
                if hasattr(self, "ens"):
                    self.ens.close()
            finally:
                for disk in self.disks.values():
                    disk.close()
                if hasattr(self, "net"):
                    self.net.close()
                if not keep and not errors and not os.environ.get("KIPPER_TEST_KEEP"):
                    if hasattr(self, "ens"):
                        self.ens.cleanup()
                    for b in self.repl.brokers.values():
                        shutil.rmtree(b.workdir, ignore_errors=True)
                    shutil.rmtree(self.workdir, ignore_errors=True)
        return errors

