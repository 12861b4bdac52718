"""The fault suite's network: a userspace IPv4 switch between TUN devices.

Every host of a fault test (a keeper member, a broker, the test itself) has one
TUN device; net.py creates them, moves each into its host's network namespace
and starts this program with their descriptors. Each packet a host sends comes
out of its TUN device here; the switch looks at its source and destination
addresses and, by the rules in force for that link, drops it, holds it back
(latency) or writes it into the destination's TUN device, where the kernel
delivers it as if it had crossed a wire.

Why a switch of our own and not the kernel's qdiscs: this machine's kernel has
no netem (no latency, no loss in tc), and a one-way cut, a blackhole, latency
and loss are each a line here, applied per directed link, all on this machine
and nowhere else (the addresses exist only on these TUN devices).

    netswitch.py CONTROL_SOCKET SEED FD=ADDR [FD=ADDR ...]

Control: one JSON object per line on the UNIX socket, one JSON answer per line.
    {"op": "rules", "rules": [RULE, ...]}   replace every rule (an empty list heals)
    {"op": "stats"}                          {"links": {"SRC>DST": [forwarded, dropped]}}
RULE: {"src": ADDR or null (any), "dst": ADDR or null, "drop": bool,
       "delay_ms": N, "jitter_ms": N, "loss": 0..1}
Every rule that matches a packet applies: any drop wins, delays add, losses
combine. Packets held back stay bounded (MAX_HELD); the switch exits when its
parent does (it never outlives the test) or on SIGTERM.
"""
import ctypes
import heapq
import json
import os
import random
import selectors
import signal
import socket
import sys
import time

MAX_HELD = 200000            # packets held back for latency, at most
PACKET_MAX = 65536
PR_SET_PDEATHSIG = 1


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class Link:
    """What the rules say about one directed link (src -> dst)."""
    __slots__ = ("drop", "delay", "jitter", "loss", "forwarded", "dropped")

    def __init__(self):
        self.drop = False
        self.delay = self.jitter = 0.0
        self.loss = 0.0
        self.forwarded = self.dropped = 0


class Switch:
    def __init__(self, control_path, seed, ports):
        self.rng = random.Random(seed)
        self.ports = ports                      # address bytes -> tun fd
        self.rules = []
        self.links = {}                          # (src, dst) -> Link
        self.held = []                           # heap of (due, n, fd, packet)
        self.held_n = 0
        self.sel = selectors.DefaultSelector()
        for fd in ports.values():
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, ("tun", fd))
        self.ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ctl.bind(control_path)
        self.ctl.listen(4)
        self.sel.register(self.ctl, selectors.EVENT_READ, ("accept", None))

    # -- rules
    def link(self, src, dst):
        key = (src, dst)
        ln = self.links.get(key)
        if ln is None:
            ln = self.links[key] = Link()
            self.apply_rules(key, ln)
        return ln

    def apply_rules(self, key, ln):
        src, dst = key
        ln.drop, ln.delay, ln.jitter, ln.loss = False, 0.0, 0.0, 0.0
        keep = 1.0
        for r in self.rules:
            if r["src"] not in (None, src) or r["dst"] not in (None, dst):
                continue
            ln.drop = ln.drop or r["drop"]
            ln.delay += r["delay"]
            ln.jitter += r["jitter"]
            keep *= 1.0 - r["loss"]
        ln.loss = 1.0 - keep

    def set_rules(self, rules):
        parsed = []
        for r in rules:
            parsed.append({
                "src": socket.inet_aton(r["src"]) if r.get("src") else None,
                "dst": socket.inet_aton(r["dst"]) if r.get("dst") else None,
                "drop": bool(r.get("drop")),
                "delay": float(r.get("delay_ms", 0)) / 1000.0,
                "jitter": float(r.get("jitter_ms", 0)) / 1000.0,
                "loss": min(1.0, max(0.0, float(r.get("loss", 0)))),
            })
        self.rules = parsed
        for key, ln in self.links.items():
            self.apply_rules(key, ln)

    # -- packets
    def forward(self, packet, now):
        if len(packet) < 20 or packet[0] >> 4 != 4:
            return                               # not IPv4: nothing here speaks anything else
        src, dst = packet[12:16], packet[16:20]
        out = self.ports.get(dst)
        if out is None:
            return
        ln = self.link(src, dst)
        if ln.drop or (ln.loss and self.rng.random() < ln.loss):
            ln.dropped += 1
            return
        ln.forwarded += 1
        if ln.delay or ln.jitter:
            if len(self.held) >= MAX_HELD:
                ln.dropped += 1
                return
            due = now + ln.delay + (self.rng.random() * ln.jitter if ln.jitter else 0.0)
            self.held_n += 1
            heapq.heappush(self.held, (due, self.held_n, out, packet))
            return
        self.write(out, packet)

    @staticmethod
    def write(fd, packet):
        try:
            os.write(fd, packet)
        except (BlockingIOError, OSError):
            pass                                 # a full queue loses the packet, as a wire would

    def release(self, now):
        while self.held and self.held[0][0] <= now:
            _, _, fd, packet = heapq.heappop(self.held)
            self.write(fd, packet)

    def read_tun(self, fd):
        now = time.monotonic()
        for _ in range(256):                     # a burst, then the others get their turn
            try:
                packet = os.read(fd, PACKET_MAX)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            self.forward(packet, now)

    # -- control
    def on_control(self, conn, buf):
        while b"\n" in buf[0]:
            line, buf[0] = buf[0].split(b"\n", 1)
            try:
                req = json.loads(line)
                if req["op"] == "rules":
                    self.set_rules(req["rules"])
                    ans = {"ok": True}
                elif req["op"] == "stats":
                    ans = {"ok": True, "links": {"%s>%s" % (socket.inet_ntoa(s), socket.inet_ntoa(d)):
                                                 [ln.forwarded, ln.dropped] for (s, d), ln in self.links.items()}}
                else:
                    ans = {"ok": False, "error": "unknown op"}
            except (ValueError, KeyError, TypeError, OSError) as exc:
                ans = {"ok": False, "error": repr(exc)}
            conn.sendall(json.dumps(ans).encode() + b"\n")

    def run(self):
        while True:
            timeout = None
            if self.held:
                timeout = max(0.0, self.held[0][0] - time.monotonic())
            for key, _ in self.sel.select(timeout):
                kind, arg = key.data
                if kind == "tun":
                    self.read_tun(arg)
                elif kind == "accept":
                    conn, _ = self.ctl.accept()
                    self.sel.register(conn, selectors.EVENT_READ, ("ctl", [b""]))
                else:
                    conn = key.fileobj
                    data = conn.recv(65536)
                    if not data:
                        self.sel.unregister(conn)
                        conn.close()
                        continue
                    arg[0] += data
                    if len(arg[0]) > 1 << 20:
                        self.sel.unregister(conn)
                        conn.close()
                        continue
                    self.on_control(conn, arg)
            if self.held:
                self.release(time.monotonic())


def main(argv):
    die_with_parent()
    control, seed = argv[1], int(argv[2])
    ports = {}
    for spec in argv[3:]:
        fd, addr = spec.split("=", 1)
        ports[socket.inet_aton(addr)] = int(fd)
    sw = Switch(control, seed, ports)

    def stop(*_):
        raise SystemExit(0)                      # out of select() at once
    signal.signal(signal.SIGTERM, stop)
    sw.run()


if __name__ == "__main__":
    main(sys.argv)
