"""Hosts for the fault suite: each server in a network namespace of its own,
joined to the others and to the test by netswitch.py, with faults on any
directed link.

    net = Net(["k1", "k2", "k3", "b1", "b2", "b3"], seed=7)
    net.placement("b1")             # harness.Placement: runs a server on host b1
    net.addr("b1")                  # its address (10.213.X.n)
    net.cut("b1", "k1")             # b1 -> k1 and k1 -> b1: packets vanish
    net.cut("b1", "k1", both=False) # only b1 -> k1
    net.partition(["b1"], ["k1", "k2", "k3"])
    net.slow("b1", "b2", delay_ms=50, jitter_ms=10, loss=0.05)
    net.heal()                      # every link as it was
    net.close()

"test" names the test process's own host (the host namespace, where the
clients of the workloads run): net.cut("b1", "test") cuts b1 from its clients.
The addresses live only on these TUN devices; the test's device is removed
with the switch (a TUN device goes with the last descriptor on it), and close()
deletes the namespaces. Every rule set is one message to the switch, applied
before net's call returns.
"""
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

from harness import Placement

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SWITCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netswitch.py")
TEST = "test"


def ip(*args, check=True):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=20)
    if check and r.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    except OSError:
        os.close(fd)
        raise
    return fd


def free_subnet():
    """A 10.213.X.0/24 that no interface or route of this machine uses."""
    used = ip("-4", "route", "show", "table", "all").stdout + ip("-4", "addr").stdout
    start = os.getpid() + Net.made
    for k in range(200):
        x = 20 + (start + k) % 200
        if "10.213.%d." % x not in used:
            return "10.213.%d" % x
    raise RuntimeError("no free 10.213.X.0/24 subnet")


class Net:
    made = 0                  # Nets this process made: each gets a tag of its own

    def __init__(self, names, seed=0):
        Net.made += 1
        self.tag = "kc%d%s" % (os.getpid() % 100000, "abcdefghijklmnopqrstuvwxyz"[Net.made % 26])
        self.names = list(names)
        self.subnet = free_subnet()
        self.addrs = {n: "%s.%d" % (self.subnet, i + 1) for i, n in enumerate(self.names)}
        self.addrs[TEST] = "%s.254" % self.subnet
        self.namespaces = []
        self.rules = []
        self.switch = None
        self.tmp = tempfile.mkdtemp(prefix="kipper-net-")
        fds = {}
        try:
            for i, n in enumerate(self.names):
                ns = self.ns(n)
                ip("netns", "del", ns, check=False)     # left by a killed run of the same pid
                ip("netns", "add", ns)
                self.namespaces.append(ns)
                dev = "%s-%d" % (self.tag, i)
                fds[n] = open_tun(dev)
                ip("link", "set", dev, "netns", ns)
                ip("-n", ns, "link", "set", dev, "name", "eth0")
                ip("-n", ns, "addr", "add", self.addrs[n] + "/24", "dev", "eth0")
                ip("-n", ns, "link", "set", "eth0", "up")
                ip("-n", ns, "link", "set", "lo", "up")
            dev = "%s-t" % self.tag
            fds[TEST] = open_tun(dev)
            ip("addr", "add", self.addrs[TEST] + "/24", "dev", dev)
            ip("link", "set", dev, "up")
            self.control = os.path.join(self.tmp, "switch.sock")
            args = [sys.executable, SWITCH, self.control, str(seed)]
            args += ["%d=%s" % (fd, self.addrs[n]) for n, fd in fds.items()]
            self.switch = subprocess.Popen(args, pass_fds=list(fds.values()), stdin=subprocess.DEVNULL)
        except BaseException:
            for fd in fds.values():
                os.close(fd)
            self.close()
            raise
        for fd in fds.values():
            os.close(fd)                         # the switch holds them now
        self._sock = self._connect()

    def ns(self, name):
        return "%s-%s" % (self.tag, name)

    def addr(self, name):
        return self.addrs[name]

    def placement(self, name, env=None):
        return Placement(host=self.addrs[name], prefix=["ip", "netns", "exec", self.ns(name)], env=env)

    # -- the switch's control socket
    def _connect(self, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            if self.switch.poll() is not None:
                raise RuntimeError("netswitch exited with %s" % self.switch.returncode)
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.control)
                s.settimeout(10)
                return s
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _call(self, req):
        self._sock.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            data = self._sock.recv(1 << 20)
            if not data:
                raise RuntimeError("netswitch closed its control socket")
            buf += data
        ans = json.loads(buf)
        if not ans.get("ok"):
            raise RuntimeError("netswitch: %s" % ans.get("error"))
        return ans

    def _push(self):
        self._call({"op": "rules", "rules": self.rules})

    def stats(self):
        """{(src name, dst name): (packets forwarded, packets dropped)}."""
        by_addr = {a: n for n, a in self.addrs.items()}
        out = {}
        for key, (fw, dr) in self._call({"op": "stats"})["links"].items():
            s, d = key.split(">")
            out[(by_addr.get(s, s), by_addr.get(d, d))] = (fw, dr)
        return out

    # -- faults
    def _rule(self, src, dst, **kw):
        r = {"src": self.addrs[src] if src else None, "dst": self.addrs[dst] if dst else None}
        r.update(kw)
        return r

    def cut(self, a, b, both=True):
        """Packets from a to b (and b to a unless both=False) vanish: no reset, no
        refusal; a connection across the cut hangs until its own time-outs."""
        self.rules.append(self._rule(a, b, drop=True))
        if both:
            self.rules.append(self._rule(b, a, drop=True))
        self._push()

    def isolate(self, a, others=None):
        """Cut a from every other host (the test included unless others says)."""
        for b in others if others is not None else [n for n in self.addrs if n != a]:
            self.rules.append(self._rule(a, b, drop=True))
            self.rules.append(self._rule(b, a, drop=True))
        self._push()

    def partition(self, *groups):
        """No packet between hosts of different groups (hosts in no group, and the
        test, keep every link)."""
        for i, g in enumerate(groups):
            for h in groups[i + 1:]:
                for a in g:
                    for b in h:
                        self.rules.append(self._rule(a, b, drop=True))
                        self.rules.append(self._rule(b, a, drop=True))
        self._push()

    def slow(self, a, b, delay_ms=0, jitter_ms=0, loss=0.0, both=True):
        """Latency (plus up to jitter_ms more) and packet loss on a -> b (and back)."""
        self.rules.append(self._rule(a, b, delay_ms=delay_ms, jitter_ms=jitter_ms, loss=loss))
        if both:
            self.rules.append(self._rule(b, a, delay_ms=delay_ms, jitter_ms=jitter_ms, loss=loss))
        self._push()

    def heal(self):
        self.rules = []
        self._push()

    def close(self):
        """Stop the switch (its TUN devices go with it) and delete the namespaces.
        Processes placed on the hosts must have been stopped first."""
        if getattr(self, "_sock", None) is not None:
            self._sock.close()
            self._sock = None
        if self.switch is not None:
            self.switch.terminate()
            try:
                self.switch.wait(10)
            except subprocess.TimeoutExpired:
                self.switch.kill()
                self.switch.wait()
            self.switch = None
        for ns in self.namespaces:
            ip("netns", "del", ns, check=False)
        self.namespaces = []
        try:
            os.unlink(os.path.join(self.tmp, "switch.sock"))
            os.rmdir(self.tmp)
        except OSError:
            pass
