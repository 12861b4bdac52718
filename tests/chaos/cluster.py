"""A whole cluster on hosts of its own: three keeper members (kipper's, or Apache
ZooKeeper 3.8 as the brokers' coordinator) on hosts k1..k3 and three brokers on
b1..b3, each in its network namespace (net.py), every server started through a
placement that can also carry the disk and clock fault shim.

    c = ChaosCluster(seed=7, target="kipper").start()
    c.net.cut("b1", "k1"); c.kill_broker(2); c.pause_keeper(3) ...
    c.recover()        # heal the net, resume and restart everything, full ISRs
    c.close()
"""
import os

from net import Net
from repl_cluster import ReplCluster

KEEPERS = ("k1", "k2", "k3")
BROKERS = ("b1", "b2", "b3")


def broker_host(i):
    return "b%d" % i


def keeper_host(sid):
    return "k%d" % sid


class ChaosCluster:
    def __init__(self, seed=0, target="kipper", extra=None, env_of=None):
        """env_of: host name -> environment for its server (the fault shim's), or None."""
        from ensemble import Ensemble
        self.seed = seed
        self.target = target
        self.net = Net(list(KEEPERS) + list(BROKERS), seed=seed)
        env_of = env_of or (lambda host: None)
        self.ens = Ensemble(3, target=target,
                            placement=lambda sid: self.net.placement(keeper_host(sid), env_of(keeper_host(sid))))
        self.repl = ReplCluster(self.ens.hosts(), "/chaos", extra=extra,
                                placement=lambda i: self.net.placement(broker_host(i), env_of(broker_host(i))))
        self.killed_keepers = set()

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
        self.killed_keepers.add(sid)

    def pause_keeper(self, sid):
        self.ens.pause(self.keeper(sid))

    def resume_keeper(self, sid):
        self.ens.resume(self.keeper(sid))

    # -- after a fault
    def recover(self, topics=(), timeout=60):
        """Heal every link, resume paused processes, start killed ones, and wait
        until the ensemble serves and every partition of `topics` ({topic:
        partitions}) has a full ISR."""
        self.net.heal()
        for m in self.ens:
            if m.paused:
                self.ens.resume(m)
        for m in self.ens:
            if not m.running():
                self.ens.start(m, wait=False)
        self.killed_keepers.clear()
        self.ens.wait_ready(timeout=timeout)
        for i in list(self.repl.paused):
            self.repl.resume(i)
        for i, b in self.repl.brokers.items():
            if not b.alive():
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
            errors = self.repl.close(keep=keep)
        finally:
            try:
                self.ens.close()
            finally:
                if not keep and not errors and not os.environ.get("KIPPER_TEST_KEEP"):
                    self.ens.cleanup()
                self.net.close()
        return errors

