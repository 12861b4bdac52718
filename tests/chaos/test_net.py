"""The fault suite's network (net.py, netswitch.py) does what a schedule relies
on: hosts reach each other and the test through the switch; a cut makes packets
vanish (a connection attempt hangs, it is not refused); a one-way cut stops one
direction only; latency holds packets back by at least what was asked; heal()
restores every link; close() leaves no namespace behind."""
import socket
import subprocess
import time

import pytest

from net import Net

ECHO = ("import socket\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind(('0.0.0.0', 9000)); s.listen()\n"
        "while True:\n"
        "    c, _ = s.accept(); c.sendall(c.recv(100)); c.close()\n")


@pytest.fixture
def net():
    n = Net(["a", "b"], seed=3)
    servers = []
    try:
        for host in ("a", "b"):
            servers.append(subprocess.Popen(["ip", "netns", "exec", n.ns(host), "/usr/bin/python3", "-c", ECHO]))
        yield n
    finally:
        for p in servers:
            p.kill()
            p.wait()
        n.close()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert n.tag not in listed, listed


def echo_from_test(n, host, timeout=3.0):
    with socket.create_connection((n.addr(host), 9000), timeout=timeout) as c:
        c.sendall(b"ping")
        return c.recv(10)


def echo_from(n, src, dst, timeout=2.0):
    """An echo round trip from host src to host dst: the answer, or the error's name."""
    code = ("import socket\n"
            "try:\n"
            "    c = socket.create_connection(('%s', 9000), timeout=%s); c.sendall(b'hi'); print(c.recv(10).decode())\n"
            "except OSError as e:\n"
            "    print(type(e).__name__)\n" % (n.addr(dst), timeout))
    r = subprocess.run(["ip", "netns", "exec", n.ns(src), "/usr/bin/python3", "-c", code],
                       capture_output=True, text=True, timeout=30)
    return r.stdout.strip()


def wait_serving(n, host):
    deadline = time.monotonic() + 10
    while True:
        try:
            return echo_from_test(n, host, timeout=1.0)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_hosts_reach_each_other_and_the_test(net):
    assert wait_serving(net, "a") == b"ping" and wait_serving(net, "b") == b"ping"
    assert echo_from(net, "a", "b") == "hi"
    assert echo_from(net, "b", "a") == "hi"


def test_a_cut_is_a_blackhole_and_heal_restores_it(net):
    wait_serving(net, "b")
    net.cut("test", "b")
    with pytest.raises(socket.timeout):          # not ConnectionRefusedError: the SYN vanished
        echo_from_test(net, "b", timeout=1.0)
    assert echo_from(net, "a", "b") == "hi"       # other links untouched
    dropped = net.stats()[("test", "b")][1]
    assert dropped > 0
    net.heal()
    assert echo_from_test(net, "b") == b"ping"


def test_a_one_way_cut_stops_one_direction_only(net):
    wait_serving(net, "a")
    wait_serving(net, "b")
    net.cut("a", "b", both=False)
    assert echo_from(net, "a", "b") in ("timeout", "TimeoutError")
    forwarded_before = net.stats().get(("b", "a"), (0, 0))[0]
    assert echo_from(net, "b", "a") in ("timeout", "TimeoutError")   # b's SYN arrives, a's answer vanishes
    assert net.stats()[("b", "a")][0] > forwarded_before               # ... so b -> a did carry packets
    net.heal()
    assert echo_from(net, "a", "b") == "hi"


def test_latency_holds_packets_back(net):
    wait_serving(net, "b")
    net.slow("test", "b", delay_ms=150, both=False)
    t = time.monotonic()
    assert echo_from_test(net, "b") == b"ping"
    # connect (SYN), then the data: at least two packets test -> b, each held 150 ms
    assert time.monotonic() - t >= 0.3
    net.heal()
