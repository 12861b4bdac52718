"""`kipper dev` (what `make run` starts): three keepers and three brokers on
their fixed loopback ports; the banner last, once all of them serve; the
servers' logs in files under the data folder (or on the terminal with
--verbose); a kcat round trip through it; Ctrl-C stopping the brokers, then
the keepers, and every process it started.

The ports are fixed by design (2181-2183, 2888-2890, 3888-3890, 9092-9094),
so the tests are skipped, saying why, when another program holds one of them.
dev is started in a session of its own and Ctrl-C is sent to its whole
process group, as a terminal does."""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile

import pytest

from harness import KIPPER, four_letter_word, wait_until

BROKER_PORTS = [9092, 9093, 9094]
DEV_PORTS = [2181, 2182, 2183, 2888, 2889, 2890, 3888, 3889, 3890] + BROKER_PORTS
BOOTSTRAP = ",".join("127.0.0.1:%d" % p for p in BROKER_PORTS)
KEEPERS = "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"
BANNER_END = "Ctrl-C stops them all.\n"
SERVERS = ["keeper1", "keeper2", "keeper3", "broker1", "broker2", "broker3"]
# A line a keeper or a broker logs ("... I [broker.2] ..."); dev's own say [dev].
SERVER_LINE = re.compile(r"\[(keeper|broker)\.\d\]")
PROBLEM_LINE = re.compile(r"^\S+ \S+ [WE] ", re.M)

needs_kcat = pytest.mark.skipif(not shutil.which("kcat"), reason="kcat not installed")


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


def command_of(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read().split(b"\0")[:2]


def gone(pid):
    """Exited: no such process, or a zombie (reaped by init once dev is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


class Dev:
    """One `kipper dev` run: the process, its output (stdout and stderr in
    one file, as a terminal shows them) and its data folder."""

    def __init__(self, work, run, *args):
        self.data = os.path.join(work, "data")
        self.out = open(os.path.join(work, "dev-%d.out" % run), "w+b")
        self.proc = subprocess.Popen([KIPPER, "dev"] + list(args) + [self.data], stdout=self.out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.children = []

    def text(self):
        self.out.flush()
        self.out.seek(0)
        return self.out.read().decode(errors="replace")

    def wait_for_banner(self):
        # dev gives up by itself after 60 s; this bound is only a backstop.
        wait_until(lambda: BANNER_END in self.text() or self.proc.poll() is not None, timeout=90,
                   what="the banner")
        assert BANNER_END in self.text(), self.text()
        self.children = children_of(self.proc.pid)
        return self.text()

    def log(self, server):
        with open(os.path.join(self.data, "logs", server + ".log"), errors="replace") as f:
            return f.read()

    def ctrl_c(self, timeout=90):
        """Ctrl-C as a terminal sends it (to the whole foreground process
        group); dev's exit code."""
        os.killpg(self.proc.pid, signal.SIGINT)
        return self.proc.wait(timeout=timeout)

    def kill(self):
        """Whatever is left after a failed test."""
        if self.proc.poll() is None:
            self.children = self.children or children_of(self.proc.pid)
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for child in self.children:
            if not gone(child):
                os.kill(child, signal.SIGKILL)
        self.out.close()


@pytest.fixture
def dev_run():
    """Starts `kipper dev` runs (in one work folder, so a later run reuses
    the data of an earlier one); every process is stopped at the end."""
    busy = [p for p in DEV_PORTS if not port_free(p)]
    if busy:
        pytest.skip("kipper dev needs loopback ports %s, in use here" % busy)
    work = tempfile.mkdtemp(prefix="kipper-dev-")
    runs = []

    def start(*args):
        runs.append(Dev(work, len(runs), *args))
        return runs[-1]
    yield start
    for run in runs:
        run.kill()
    shutil.rmtree(work, ignore_errors=True)


def metadata_brokers(port):
    """Broker ids a broker lists in its Metadata, asked with no retry."""
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": "127.0.0.1:%d" % port})
    return sorted(admin.list_topics(timeout=10).brokers)


def test_banner_comes_last_once_everything_serves(dev_run):
    dev = dev_run()
    banner = dev.wait_for_banner()
    # What the banner promises holds the moment it appears: no waiting here.
    modes = [four_letter_word(port, "srvr") for port in (2181, 2182, 2183)]
    assert sum("Mode: leader" in m for m in modes) == 1, modes
    for port in BROKER_PORTS:
        assert metadata_brokers(port) == [1, 2, 3]

    assert "bootstrap servers:     " + BOOTSTRAP in banner
    assert KEEPERS in banner and "kcat" in banner
    assert os.path.join(dev.data, "logs") in banner
    # Six servers, each its own process.
    commands = sorted(command_of(pid) for pid in dev.children)
    assert commands == [[b"kipper", b"broker"]] * 3 + [[b"kipper", b"keeper"]] * 3, commands
    # Their logs are in files; dev's own output ends with the banner and has
    # no server line in it.
    for server in SERVERS:
        assert "[%s.%s]" % (server[:-1], server[-1]) in dev.log(server)
    assert dev.text().endswith(BANNER_END)
    assert not SERVER_LINE.search(dev.text()), dev.text()
    assert dev.ctrl_c() == 0


@needs_kcat
def test_kcat_round_trip(dev_run):
    dev = dev_run()
    dev.wait_for_banner()

    # acks=all (kcat's default, made explicit): answered once every ISR member
    # of the three replicas has the record.
    def produced():
        p = subprocess.run(["kcat", "-P", "-b", BOOTSTRAP, "-t", "devdemo", "-X", "acks=all", "-m", "10"],
                           input=b"hello from dev\n", capture_output=True, timeout=30)
        return p.returncode == 0
    wait_until(produced, timeout=60, what="a produce through kipper dev")

    # The first produce created the topic with the brokers' defaults: three
    # replicas, and a leader elected. Nothing else was created.
    described = subprocess.run([KIPPER, "topics", "--zookeeper", KEEPERS, "--describe"], capture_output=True,
                               text=True, timeout=30)
    assert described.stdout.startswith("Topic: devdemo\t") and "ReplicationFactor: 3" in described.stdout
    assert re.search(r"\tLeader: [123]\t", described.stdout), described.stdout

    def consumed():
        c = subprocess.run(["kcat", "-C", "-b", BOOTSTRAP, "-t", "devdemo", "-e", "-q", "-m", "10"],
                           capture_output=True, timeout=30)
        return c.stdout.decode().splitlines()
    lines = wait_until(consumed, timeout=30, what="consuming it back")
    assert "hello from dev" in lines
    assert not SERVER_LINE.search(dev.text())
    assert dev.ctrl_c() == 0


def last_stop_time(log):
    """When a server logged that it stopped (its log's timestamp text)."""
    stops = [line[:23] for line in log.splitlines() if line.endswith("] stopped")]
    assert stops, log[-2000:]
    return stops[-1]


def test_ctrl_c_stops_brokers_then_keepers(dev_run):
    dev = dev_run()
    dev.wait_for_banner()
    assert len(dev.children) == 6
    assert dev.ctrl_c() == 0
    for child in dev.children:
        assert gone(child), command_of(child)
    # Quietly: dev says what it does, and no warning or error.
    after = dev.text().split(BANNER_END, 1)[1]
    assert "stopping broker" in after and "all stopped" in after, after
    assert not PROBLEM_LINE.search(dev.text()), dev.text()
    # The brokers were gone before any keeper stopped: their clean stop
    # needs the coordinator.
    broker_stops = [last_stop_time(dev.log(s)) for s in SERVERS[3:]]
    keeper_stops = [last_stop_time(dev.log(s)) for s in SERVERS[:3]]
    assert max(broker_stops) <= min(keeper_stops), (broker_stops, keeper_stops)


def test_second_ctrl_c_kills_everything_at_once(dev_run):
    dev = dev_run()
    dev.wait_for_banner()
    os.killpg(dev.proc.pid, signal.SIGINT)
    # The second one once dev has taken the first (signals do not queue).
    wait_until(lambda: "stopping the cluster" in dev.text(), what="dev taking the first Ctrl-C")
    assert dev.ctrl_c() == 0
    assert "killing every server at once" in dev.text()
    for child in dev.children:
        assert gone(child), command_of(child)


def test_restart_keeps_data_and_appends_logs(dev_run):
    first = dev_run()
    first.wait_for_banner()
    created = subprocess.run([KIPPER, "topics", "--zookeeper", KEEPERS, "--create", "--topic", "kept"],
                             capture_output=True, text=True, timeout=30)
    assert created.returncode == 0, created.stderr
    assert first.ctrl_c() == 0

    second = dev_run()
    second.wait_for_banner()
    listed = subprocess.run([KIPPER, "topics", "--zookeeper", KEEPERS, "--list"], capture_output=True, text=True,
                            timeout=30)
    assert listed.stdout == "kept\n"
    for server in SERVERS[3:]:
        assert second.log(server).count("serving Kafka clients") == 2
    assert second.ctrl_c() == 0


def test_verbose_streams_the_logs(dev_run):
    dev = dev_run("--verbose")
    text = dev.wait_for_banner()
    assert SERVER_LINE.search(text.split("kipper dev: 3 keepers")[0])
    assert "logs: on this terminal" in text
    assert os.listdir(os.path.join(dev.data, "logs")) == []
    assert dev.ctrl_c() == 0
    assert "[broker.1] stopped" in dev.text()


def test_refuses_to_start_when_a_port_is_taken(dev_run):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 9094))
        taken.listen()
        dev = dev_run()
        assert dev.proc.wait(timeout=30) == 1
    assert "127.0.0.1:9094: Address already in use" in dev.text(), dev.text()
    assert os.listdir(os.path.join(dev.data, "logs")) == []   # no server was started


def test_bad_command_line():
    for args in (["--bogus"], ["a", "b"]):
        result = subprocess.run([KIPPER, "dev"] + args, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2 and "usage: kipper dev" in result.stderr, result
    assert "--verbose" in subprocess.run([KIPPER, "dev", "--help"], capture_output=True, text=True,
                                         timeout=30).stdout
