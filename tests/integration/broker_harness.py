"""Start and stop `bin/kipper broker` for integration tests, and speak just
enough raw Kafka protocol to check its answers byte by byte.

Broker(extra={...}) writes a server.properties on a free loopback port with
its own log dir; start() waits until the port accepts connections; stop()
sends SIGTERM and returns the exit code.
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from harness import KIPPER, free_port, wait_until


class Broker:
    def __init__(self, broker_id=1, extra=None, workdir=None):
        self.broker_id = broker_id
        self.port = free_port()
        self.workdir = workdir or tempfile.mkdtemp(prefix="kipper-broker-")
        self.log_dir = os.path.join(self.workdir, "logs")
        self.config = os.path.join(self.workdir, "server.properties")
        self.stderr_path = os.path.join(self.workdir, "broker.log")
        self.proc = None
        props = {
            "broker.id": str(broker_id),
            "listeners": "PLAINTEXT://127.0.0.1:%d" % self.port,
            "log.dirs": self.log_dir,
            # Read and logged only: the coordinator link comes in the next step.
            "zookeeper.connect": "127.0.0.1:2181/kipper-test",
        }
        props.update(extra or {})
        with open(self.config, "w") as f:
            for k, v in props.items():
                f.write("%s=%s\n" % (k, v))

    def start(self, wait=True):
        self._err = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen([KIPPER, "broker", self.config], stdout=self._err, stderr=self._err)
        if wait:
            wait_until(self._accepting, timeout=10, what="broker on port %d" % self.port)
        return self

    def _accepting(self):
        if self.proc.poll() is not None:
            raise AssertionError("broker exited with %s:\n%s" % (self.proc.returncode, self.log()))
        with socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True

    def wait_exit(self, timeout=10):
        return self.proc.wait(timeout=timeout)

    def stop(self, timeout=10):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self._err.close()
        return self.proc.returncode if self.proc else None

    def log(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture
def broker():
    b = Broker().start()
    yield b
    b.cleanup()


# ---- raw Kafka protocol ----

def request_frame(api_key, version, correlation_id, body=b"", client_id="kipper-test", flexible=False):
    """Size prefix + request header (v1, or v2 with an empty tag buffer) + body."""
    cid = client_id.encode()
    hdr = struct.pack(">hhih", api_key, version, correlation_id, len(cid)) + cid
    if flexible:
        hdr += b"\x00"
    payload = hdr + body
    return struct.pack(">i", len(payload)) + payload


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def recv_frame(sock):
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, size)


def is_closed(sock, timeout=5.0):
    """True when the peer closed the connection (EOF or reset) within timeout."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


class Reader:
    """Big-endian reader over a response body, with Kafka's varints."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def compact_array_len(self):
        return self.uvarint() - 1

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()

    def done(self):
        return self.pos == len(self.data)


def parse_api_versions(resp, version):
    """(correlation id, error code, {api key: (min, max)}, throttle ms) of an
    ApiVersions response (header v0 always, KIP-511)."""
    r = Reader(resp)
    corr = r.take(">i")
    error = r.take(">h")
    flex = version >= 3
    n = r.compact_array_len() if flex else r.take(">i")
    apis = {}
    for _ in range(n):
        key, lo, hi = r.take(">h"), r.take(">h"), r.take(">h")
        if flex:
            r.skip_tags()
        apis[key] = (lo, hi)
    throttle = r.take(">i") if version >= 1 else None
    if flex:
        r.skip_tags()
    assert r.done(), "trailing bytes in ApiVersions v%d response" % version
    return corr, error, apis, throttle
