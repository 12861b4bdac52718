"""`kipper broker` first step: config, framing, ApiVersions and Metadata.

Real client: kcat (librdkafka). Raw sockets for the byte-level answers and for
garbage, which must close only the offending connection."""
import os
import re
import shutil
import socket
import struct
import subprocess

import pytest

from broker_harness import (Broker, Reader, broker, is_closed, parse_api_versions, recv_frame,  # noqa: F401
                            request_frame)

API_VERSIONS, METADATA = 18, 3
EXPECTED = {API_VERSIONS: (0, 3), METADATA: (0, 12)}


def connect(b):
    return socket.create_connection(("127.0.0.1", b.port), timeout=5)


def api_versions(sock, version, corr=1):
    flex = version >= 3
    body = b"\x0ckipper-test\x061.0.0\x00" if flex else b""   # compact strings + empty tags
    sock.sendall(request_frame(API_VERSIONS, version, corr, body, flexible=flex))
    return parse_api_versions(recv_frame(sock), version)


def assert_serving(b):
    with connect(b) as s:
        corr, error, apis, _ = api_versions(s, 0, corr=99)
        assert (corr, error, apis) == (99, 0, EXPECTED)


@pytest.mark.skipif(not shutil.which("kcat"), reason="kcat not installed")
def test_kcat_lists_one_broker_and_no_topics(broker):
    out = subprocess.run(["kcat", "-L", "-b", "127.0.0.1:%d" % broker.port], capture_output=True, text=True,
                         timeout=20)
    assert out.returncode == 0, out.stderr
    assert " 1 brokers:" in out.stdout
    assert "broker 1 at 127.0.0.1:%d (controller)" % broker.port in out.stdout
    assert " 0 topics:" in out.stdout


@pytest.mark.skipif(not shutil.which("kcat"), reason="kcat not installed")
def test_kcat_unknown_topic(broker):
    out = subprocess.run(["kcat", "-L", "-b", "127.0.0.1:%d" % broker.port, "-t", "nosuch"], capture_output=True,
                         text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    assert 'topic "nosuch" with 0 partitions: Broker: Unknown topic or partition' in out.stdout


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_api_versions(broker, version):
    with connect(broker) as s:
        corr, error, apis, throttle = api_versions(s, version, corr=7 + version)
    assert (corr, error, apis) == (7 + version, 0, EXPECTED)
    assert throttle == (None if version == 0 else 0)


@pytest.mark.parametrize("version", [4, 99])
def test_api_versions_kip511_fallback(broker, version):
    with connect(broker) as s:
        # An unknown future version: flexible header, a body we cannot know.
        s.sendall(request_frame(API_VERSIONS, version, 42, b"\x00\x00\x00", flexible=True))
        corr, error, apis, _ = parse_api_versions(recv_frame(s), 0)
        assert (corr, error) == (42, 35)
        assert apis == {API_VERSIONS: (0, 3)}   # only its own range, as Kafka answers
        # The same connection goes on with a version we speak.
        assert api_versions(s, 3, corr=43)[:3] == (43, 0, EXPECTED)


def test_api_versions_v3_bad_software_name(broker):
    with connect(broker) as s:
        s.sendall(request_frame(API_VERSIONS, 3, 5, b"\x02-\x061.0.0\x00", flexible=True))
        corr, error, apis, _ = parse_api_versions(recv_frame(s), 3)
    assert (corr, error, apis) == (5, 42, {})


def test_metadata_v0_unknown_topic(broker):
    """kafka-python's first request after ApiVersions v0."""
    with connect(broker) as s:
        body = struct.pack(">i", 2) + b"\x00\x01a\x00\x01a"    # one topic, twice: answered once
        s.sendall(request_frame(METADATA, 0, 3, body))
        r = Reader(recv_frame(s))
    assert r.take(">i") == 3
    assert r.take(">i") == 1
    node, hlen = r.take(">i"), r.take(">h")
    host = r.data[r.pos:r.pos + hlen].decode()
    r.pos += hlen
    assert (node, host, r.take(">i")) == (1, "127.0.0.1", broker.port)
    assert r.take(">i") == 1                                      # topics
    assert (r.take(">h"), r.take(">h")) == (3, 1)                 # UNKNOWN_TOPIC_OR_PARTITION, name length
    r.pos += 1
    assert r.take(">i") == 0 and r.done()                         # no partitions


def test_metadata_v12_cluster_id_and_controller(broker):
    with connect(broker) as s:
        # Topics null (all), AllowAutoTopicCreation, IncludeTopicAuthorizedOperations, tags.
        s.sendall(request_frame(METADATA, 12, 9, b"\x00\x01\x00\x00", flexible=True))
        r = Reader(recv_frame(s))
    assert r.take(">i") == 9
    r.skip_tags()
    assert r.take(">i") == 0                                      # throttle
    assert r.compact_array_len() == 1
    assert r.take(">i") == 1
    n = r.uvarint() - 1
    host = r.data[r.pos:r.pos + n]
    r.pos += n
    assert host == b"127.0.0.1" and r.take(">i") == broker.port
    assert r.uvarint() == 0                                       # rack null
    r.skip_tags()
    n = r.uvarint() - 1
    cid = r.data[r.pos:r.pos + n].decode()
    r.pos += n
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cid)
    with open(os.path.join(broker.log_dir, "meta.properties")) as f:
        meta = f.read()
    assert "cluster.id=%s\n" % cid in meta and "broker.id=1\n" in meta and "version=0\n" in meta
    assert r.take(">i") == 1                                      # controller
    assert r.compact_array_len() == 0                             # topics
    r.skip_tags()
    assert r.done()


def test_cluster_id_survives_restart(tmp_path):
    b = Broker(workdir=str(tmp_path)).start()
    try:
        first = open(os.path.join(b.log_dir, "meta.properties")).read()
        assert b.stop() == 0
        b.start()
        assert open(os.path.join(b.log_dir, "meta.properties")).read() == first
        assert_serving(b)
    finally:
        b.stop()


@pytest.mark.parametrize("key,version", [(0, 9), (1, 12), (3, 13), (999, 0)])
def test_unsupported_api_closes_with_reason(broker, key, version):
    with connect(broker) as s:
        s.sendall(request_frame(key, version, 1, b"\x00" * 16))
        assert is_closed(s)
    assert "unsupported request: api key %d" % key in broker.log()
    assert_serving(broker)


@pytest.mark.parametrize("garbage", [
    os.urandom(4096),
    struct.pack(">i", 0x7FFFFFFF) + b"x" * 100,       # ~2 GiB size prefix
    struct.pack(">i", -5),
    struct.pack(">i", 3) + b"abc",                     # too short for a header
    struct.pack(">i", 40) + struct.pack(">hhih", 3, 1, 1, 30),   # client id longer than the frame
], ids=["random", "2GiB", "negative", "short", "bad-length"])
def test_garbage_closes_only_that_connection(broker, garbage):
    with connect(broker) as bystander, connect(broker) as s:
        s.sendall(garbage)
        # A frame that looks plausible but is cut short (random bytes may be
        # one too) is closed when the peer hangs up in the middle of it.
        s.shutdown(socket.SHUT_WR)
        assert is_closed(s)
        assert api_versions(bystander, 1, corr=5)[:3] == (5, 0, EXPECTED)
    assert_serving(broker)
    if garbage[:4] in (struct.pack(">i", 0x7FFFFFFF), struct.pack(">i", -5)):
        assert "socket.request.max.bytes" in broker.log()


def test_truncated_frame_then_hangup(broker):
    with connect(broker) as s:
        s.sendall(struct.pack(">i", 100) + b"\x00\x12\x00\x00")
    assert_serving(broker)


def test_request_size_limit(tmp_path):
    b = Broker(workdir=str(tmp_path), extra={"socket.request.max.bytes": "64"}).start()
    try:
        with connect(b) as s:
            s.sendall(struct.pack(">i", 65) + b"\x00" * 65)
            assert is_closed(s)
        assert "socket.request.max.bytes" in b.log()
        assert_serving(b)
    finally:
        b.stop()


def test_sigterm_exits_cleanly(broker):
    with connect(broker):
        assert broker.stop() == 0
    assert "shutting down" in broker.log()


def test_unknown_key_warns_and_accepted_key_noted(tmp_path):
    b = Broker(workdir=str(tmp_path), extra={"no.such.key": "1", "num.io.threads": "8"}).start()
    try:
        assert_serving(b)
    finally:
        assert b.stop() == 0
    assert re.search(r"unknown key 'no.such.key'", b.log())
    assert "num.io.threads=8 accepted, not acted on yet" in b.log()


@pytest.mark.parametrize("key,value", [
    ("broker.id", "abc"), ("listeners", "SSL://127.0.0.1:1"), ("num.partitions", "0"),
    ("zookeeper.connect", "nohostport"), ("auto.create.topics.enable", "maybe"),
    ("log.segment.bytes", "10"),
])
def test_bad_value_fails_naming_the_key(tmp_path, key, value):
    b = Broker(workdir=str(tmp_path), extra={key: value}).start(wait=False)
    assert b.wait_exit() == 1
    assert key in b.log()
    b.stop()


def test_broker_id_must_match_meta_properties(tmp_path):
    b = Broker(workdir=str(tmp_path)).start()
    assert b.stop() == 0
    other = Broker(broker_id=2, workdir=str(tmp_path))
    other.start(wait=False)
    assert other.wait_exit() == 1
    assert "does not match broker.id 1" in other.log()
    other.stop()
