"""`kipper dev` (what `make run` starts): three keepers and a broker on their
fixed loopback ports, the bootstrap string printed, a kcat round trip through
it, and Ctrl-C stopping every process it started.

The ports are fixed by design (2181-2183, 2888-2890, 3888-3890, 9092), so the
test is skipped, saying why, when another program holds one of them."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile

import pytest

from harness import KIPPER, wait_until

DEV_PORTS = [2181, 2182, 2183, 2888, 2889, 2890, 3888, 3889, 3890, 9092]


def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def children_of(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


@pytest.fixture
def dev_cluster():
    busy = [p for p in DEV_PORTS if not port_free(p)]
    if busy:
        pytest.skip("kipper dev needs loopback ports %s, in use here" % busy)
    work = tempfile.mkdtemp(prefix="kipper-dev-")
    out = open(os.path.join(work, "dev.log"), "w+b")
    proc = subprocess.Popen([KIPPER, "dev", os.path.join(work, "data")], stdout=out, stderr=subprocess.STDOUT)
    yield proc, out
    if proc.poll() is None:
        for child in children_of(proc.pid):
            os.kill(child, signal.SIGKILL)
        proc.kill()
        proc.wait()
    out.close()
    shutil.rmtree(work, ignore_errors=True)


def text_of(out):
    out.flush()
    out.seek(0)
    return out.read().decode(errors="replace")


@pytest.mark.skipif(not shutil.which("kcat"), reason="kcat not installed")
def test_dev_cluster_serves_and_stops_on_ctrl_c(dev_cluster):
    proc, out = dev_cluster
    wait_until(lambda: "bootstrap servers:     127.0.0.1:9092" in text_of(out), timeout=20, what="the banner")
    banner = text_of(out)
    assert "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183" in banner
    assert "kcat" in banner
    children = children_of(proc.pid)
    assert len(children) == 4, banner   # three keepers and one broker

    def produced():
        p = subprocess.run(["kcat", "-P", "-b", "127.0.0.1:9092", "-t", "devdemo", "-m", "10"],
                           input=b"hello from dev\n", capture_output=True, timeout=30)
        return p.returncode == 0
    wait_until(produced, timeout=60, what="a produce through kipper dev")

    def consumed():
        c = subprocess.run(["kcat", "-C", "-b", "127.0.0.1:9092", "-t", "devdemo", "-e", "-q", "-m", "10"],
                           capture_output=True, timeout=30)
        return c.stdout.decode().splitlines()
    assert "hello from dev" in wait_until(consumed, timeout=30, what="consuming it back")

    # Nothing was created that the user did not ask for: only the demo topic.
    topics = subprocess.run([KIPPER, "topics", "--zookeeper", "127.0.0.1:2181", "--list"], capture_output=True,
                            text=True, timeout=30)
    assert topics.stdout.split() == ["devdemo"], topics

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0
    for child in children:
        assert not os.path.exists("/proc/%d" % child) or open("/proc/%d/stat" % child).read().split()[2] == "Z"
    log = text_of(out)
    assert "[broker.1] stopped" in log
    assert log.count("] stopped") == 4, log
