#!/usr/bin/python3
"""make-seeds.py -- rebuild the seed corpora fuzz/corpus/<harness>/ from what
real clients send and what kipper really writes.

It runs kipper processes on loopback ports, each behind a small recording proxy,
drives them with real clients, and cuts what went over the wire and what landed
on disk into inputs of each harness's format (tests/README.md, Fuzzing):

  keepers  a standalone keeper (snapCount 20, so it snapshots as it goes) used
           by kazoo and zkCli.sh, restarted once so that kazoo sends SetWatches:
           client frames after the ConnectRequest -> keeper_request; the
           log.* and snapshot.* files it wrote -> keeper_txnlog, keeper_snapshot.
           A 3-member ensemble whose members reach each other through proxies
           (each member's zoo.cfg names the other members' proxy ports), with
           writes, a follower killed and restarted (DIFF) and a follower wiped
           after a restart of all (SNAP): each direction of every quorum
           connection -> keeper_quorum; what every election dialer sent ->
           keeper_election.
  brokers  two brokers on one keeper, each advertising its proxy, used by kcat,
           confluent-kafka (every codec, idempotence, groups, admin) and
           kafka-python (as a 0.9 and 0.10 client, for magic 0/1 message sets,
           and as itself), with a replicated topic whose leader is killed and
           restarted (the follower's Fetch and OffsetForLeaderEpoch go through
           the leader's proxy): request frames, and one frame per API and
           version from build/fuzz/kafka-seeds -> kafka_request; Fetch v11 and
           OffsetForLeaderEpoch v3 responses -> kafka_response; the batches of
           the segment files -> record_batch and, by codec, codec_*; message
           sets of Produce v0-v2 -> message_set; the checkpoints and
           meta.properties of the log dirs -> checkpoint, broker_meta.

The raw inputs go to build/fuzz/seeds/<harness>/; then each harness (make
fuzz-build first) keeps only those that add coverage (libFuzzer -merge=1) in
fuzz/corpus/<harness>/, at most MAX_FILES of them; inputs named regress-* there
(findings kept as regression tests) are always kept. About two minutes.

    make bin/kipper fuzz-build && fuzz/make-seeds.py [--no-merge | --merge-only] [part ...]

parts: keeper, ensemble, broker (default: all three).
"""
import argparse
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from harness import Keeper, four_letter_word, free_port, wait_until  # noqa: E402

SEEDS = os.path.join(ROOT, "build", "fuzz", "seeds")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
MAX_SEED = 64 * 1024        # bytes per seed: larger inputs only slow the fuzzer down
MAX_FILES = 300             # per harness after the merge
KIPPER = os.path.join(ROOT, "bin", "kipper")


# ---- recording ------------------------------------------------------------------------


class Recorder:
    """A loopback TCP proxy in front of 127.0.0.1:target that keeps, per
    connection, the bytes of each direction ("c2s": towards the target)."""

    def __init__(self, target, port=0):
        self.target = target
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", port))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.conns = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def hosts(self):
        return "127.0.0.1:%d" % self.port

    def _accept(self):
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            rec = {"c2s": bytearray(), "s2c": bytearray()}
            with self._lock:
                self.conns.append(rec)
            for src, dst, key in ((c, u, "c2s"), (u, c, "s2c")):
                threading.Thread(target=self._pump, args=(src, dst, rec[key]), daemon=True).start()

    @staticmethod
    def _pump(src, dst, buf):
        try:
            while True:
                d = src.recv(65536)
                if not d:
                    break
                buf += d
                dst.sendall(d)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def streams(self, key):
        with self._lock:
            return [bytes(r[key]) for r in self.conns]

    def close(self):
        self.lsock.close()


class Seeds:
    """Raw seeds per harness, deduplicated, written under build/fuzz/seeds."""

    def __init__(self):
        self.seen = {}

    def add(self, harness, data, limit=MAX_SEED):
        if not data or len(data) > limit:
            return
        s = self.seen.setdefault(harness, set())
        if data in s:
            return
        s.add(data)
        d = os.path.join(SEEDS, harness)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%05d" % len(s)), "wb") as f:
            f.write(data)

    def counts(self):
        return {h: len(s) for h, s in sorted(self.seen.items())}


def frames(stream, skip=0):
    """The 4-byte-length framed messages of a stream (whole ones), with their prefix."""
    out, off = [], 0
    while len(stream) - off >= 4:
        n = struct.unpack(">i", stream[off:off + 4])[0]
        if n < 0 or len(stream) - off - 4 < n:
            break
        out.append(stream[off:off + 4 + n])
        off += 4 + n
    return out[skip:]


def chunks(items, size):
    for i in range(0, len(items), size):
        yield items[i:i + size]


def files_under(top, pred):
    for d, _, names in os.walk(top):
        for n in sorted(names):
            if pred(n):
                yield os.path.join(d, n)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def trim_zeros(data, keep=16):
    """A preallocated log file without most of its zero tail."""
    end = len(data.rstrip(b"\0"))
    return data[:min(len(data), end + keep)]


# ---- keeper: clients, logs, snapshots ----------------------------------------------------


def kazoo_workload(hosts):
    from kazoo.client import KazooClient
    from kazoo.exceptions import BadVersionError, NoNodeError, NotEmptyError, NoAuthError
    from kazoo.security import make_digest_acl, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

    zk = KazooClient(hosts=hosts, timeout=10)
    zk.start()
    events = []
    zk.ensure_path("/fz/deep/er/path")
    zk.create("/fz/a", b"x" * 100)
    zk.create("/fz/e", b"eph", ephemeral=True)
    for _ in range(3):
        zk.create("/fz/seq-", b"", sequence=True)
        zk.create("/fz/eseq-", b"", sequence=True, ephemeral=True)
    zk.get("/fz/a", watch=events.append)
    zk.exists("/fz/missing", watch=events.append)
    zk.get_children("/fz", watch=events.append, include_data=True)
    zk.set("/fz/a", b"y" * 10)
    zk.set("/fz/a", b"", version=1)
    try:
        zk.set("/fz/a", b"z", version=99)
    except BadVersionError:
        pass
    zk.add_auth("digest", "fuzzer:secret")
    zk.create("/fz/acl", b"guarded", acl=[make_digest_acl("fuzzer", "secret", all=True)])
    zk.get_acls("/fz/acl")
    zk.set_acls("/fz/acl", list(OPEN_ACL_UNSAFE) + list(READ_ACL_UNSAFE))
    t = zk.transaction()
    t.create("/fz/t1", b"1")
    t.set_data("/fz/a", b"multi")
    t.check("/fz/a", 2)
    t.delete("/fz/t1")
    t.commit()
    t = zk.transaction()
    t.create("/fz/t2", b"2")
    t.check("/fz/a", 77)
    t.commit()
    zk.sync("/fz")
    try:
        zk.delete("/fz")
    except NotEmptyError:
        pass
    try:
        zk.get("/fz/none")
    except NoNodeError:
        pass
    zk.get("/zookeeper/config")
    zk.get_children("/zookeeper")
    zk.delete("/fz/deep", recursive=True)
    zk.create("/fz/keep", b"k")
    zk.get("/fz/keep", watch=events.append)
    zk.exists("/fz/later", watch=events.append)
    zk.get_children("/fz/keep", watch=events.append)
    other = KazooClient(hosts=hosts, timeout=10)
    other.start()
    try:
        other.get("/fz/acl")
        other.set("/fz/acl", b"nope")
    except NoAuthError:
        pass
    other.create("/fz/theirs", b"", ephemeral=True)
    other.stop()
    other.close()
    return zk


def zkcli_workload(hosts):
    from zk_clients import run_zkcli, zkcli_available
    if not zkcli_available():
        print("make-seeds: zkCli.sh not found; skipping it", file=sys.stderr)
        return
    run_zkcli(hosts, [
        "create /cli data",
        "create -e /cli/eph e",
        "create -s /cli/seq- s",
        "create -c /cli/container",
        "create /cli/container/child c",
        "create -t 60000 /cli/ttl t",
        "ls -s /cli",
        "ls -R /cli",
        "get -s /cli",
        "get -w /cli",
        "set /cli more",
        "set -v 1 /cli again",
        "stat /cli",
        "stat -w /cli",
        "getAcl /cli",
        "addauth digest cli:pw",
        "setAcl /cli auth:cli:pw:crdwa",
        "getAcl /cli",
        "addWatch /cli",
        "addWatch -m PERSISTENT_RECURSIVE /cli",
        "removewatches /cli -a",
        "whoami",
        "getAllChildrenNumber /",
        "getEphemerals /",
        "getEphemerals",
        "sync /cli",
        "delete /cli/seq-0000000000",
        "deleteall /cli",
        "config",
        "ls /zookeeper",
    ], timeout=60)


def keeper_seeds(seeds):
    k = Keeper(extra={"snapCount": 20, "preAllocSize": 64})
    k.start()
    rec = Recorder(k.port)
    try:
        zk = kazoo_workload(rec.hosts)
        zkcli_workload(rec.hosts)
        # A restart: kazoo reconnects through the proxy and sends SetWatches.
        k.stop()
        k.start()
        wait_until(lambda: zk.connected, timeout=20, what="kazoo to reconnect")
        zk.create("/fz/after", b"restart")
        zk.stop()
        zk.close()
    finally:
        k.stop()
        rec.close()
    for stream in rec.streams("c2s"):
        fs = frames(stream, skip=1)   # the ConnectRequest is server.c's, not request.c's
        for part in chunks(fs, 16):
            seeds.add("keeper_request", b"".join(part))
        for f in fs:
            seeds.add("keeper_request", f)
    keeper_files(seeds, k.data_dir)
    shutil.rmtree(k.workdir, ignore_errors=True)


def keeper_files(seeds, data_dir):
    logs = sorted(files_under(data_dir, lambda n: n.startswith("log.")),
                  key=lambda p: int(os.path.basename(p)[4:], 16))
    for p in logs:
        seeds.add("keeper_txnlog", trim_zeros(read(p)))
    if len(logs) > 1:
        seeds.add("keeper_txnlog", b"".join(trim_zeros(read(p)) for p in logs))
    for p in files_under(data_dir, lambda n: n.startswith("snapshot.") and not n.endswith(".tmp")):
        seeds.add("keeper_snapshot", read(p))


# ---- keeper ensemble: quorum and election streams ------------------------------------------


class Member:
    def __init__(self, sid, root, ports):
        self.sid = sid
        self.client_port, self.quorum_port, self.election_port = ports
        self.workdir = os.path.join(root, "m%d" % sid)
        self.data_dir = os.path.join(self.workdir, "data")
        os.makedirs(self.data_dir, exist_ok=True)
        with open(os.path.join(self.data_dir, "myid"), "w") as f:
            f.write("%d\n" % sid)
        self.proc = None

    def write_config(self, members, proxies):
        lines = {"tickTime": 200, "initLimit": 20, "syncLimit": 10, "dataDir": self.data_dir,
                 "clientPort": self.client_port, "clientPortAddress": "127.0.0.1", "snapCount": 40,
                 "preAllocSize": 64, "4lw.commands.whitelist": "*"}
        for m in members:
            if m is self:
                lines["server.%d" % m.sid] = "127.0.0.1:%d:%d" % (m.quorum_port, m.election_port)
            else:
                q, e = proxies[m.sid]
                lines["server.%d" % m.sid] = "127.0.0.1:%d:%d" % (q.port, e.port)
        with open(os.path.join(self.workdir, "zoo.cfg"), "w") as f:
            for key, v in lines.items():
                f.write("%s=%s\n" % (key, v))

    def start(self):
        log = open(os.path.join(self.workdir, "keeper.log"), "ab")
        self.proc = subprocess.Popen([KIPPER, "keeper", os.path.join(self.workdir, "zoo.cfg")], stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
        self.proc = None

    def mode(self):
        try:
            out = four_letter_word(self.client_port, "srvr", timeout=1.0)
        except OSError:
            return ""
        for line in out.splitlines():
            if line.startswith("Mode: "):
                return line[6:]
        return ""


def wait_serving(members):
    def ok():
        modes = [m.mode() for m in members if m.proc]
        return modes.count("leader") == 1 and all(x in ("leader", "follower") for x in modes)
    wait_until(ok, timeout=60, what="the ensemble to serve")


def write_some(hosts, prefix, n):
    from kazoo.client import KazooClient
    zk = KazooClient(hosts=hosts, timeout=10)
    zk.start()
    zk.ensure_path(prefix)
    for i in range(n):
        zk.create("%s/n%03d" % (prefix, i), b"v%d" % i)
        if i % 3 == 0:
            zk.set("%s/n%03d" % (prefix, i), b"changed")
        if i % 5 == 0:
            zk.delete("%s/n%03d" % (prefix, i))
    zk.create(prefix + "/eph", b"", ephemeral=True)
    zk.sync(prefix)
    zk.stop()
    zk.close()


def split_quorum(stream):
    """A quorum stream cut into whole packets (a SNAP with its snapshot stream,
    up to the "BenWasHere" signature, stays with its packet)."""
    out, off = [], 0
    sig = b"\x00\x00\x00\x0aBenWasHere"
    while len(stream) - off >= 16:
        start = off
        typ, _, dlen = struct.unpack(">iqi", stream[off:off + 16])
        off += 16 + max(dlen, 0)
        if dlen < -1 or off + 4 > len(stream):
            break
        nids = struct.unpack(">i", stream[off:off + 4])[0]
        off += 4
        ok = True
        for _ in range(max(nids, 0) * 2):
            if off + 4 > len(stream):
                ok = False
                break
            n = struct.unpack(">i", stream[off:off + 4])[0]
            off += 4 + max(n, 0)
        if not ok or off > len(stream):
            break
        if typ == 15:   # SNAP
            end = stream.find(sig, off)
            if end < 0:
                break
            off = end + len(sig)
        out.append(stream[start:off])
    return out


def ensemble_seeds(seeds):
    root = tempfile.mkdtemp(prefix="kipper-seeds-ens-")
    ports = {}
    socks = []
    for sid in (1, 2, 3):   # free ports held together so none repeats
        trio = []
        for _ in range(3):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            trio.append(s.getsockname()[1])
        ports[sid] = trio
    for s in socks:
        s.close()
    members = [Member(sid, root, ports[sid]) for sid in (1, 2, 3)]
    proxies = {m.sid: (Recorder(m.quorum_port), Recorder(m.election_port)) for m in members}
    for m in members:
        m.write_config(members, proxies)
    hosts = ",".join("127.0.0.1:%d" % m.client_port for m in members)
    try:
        for m in members:
            m.start()
        wait_serving(members)
        write_some(hosts, "/ens", 30)
        follower = next(m for m in members if m.mode() == "follower")
        follower.stop(signal.SIGKILL)
        write_some(hosts, "/ens2", 20)
        follower.start()
        wait_serving(members)
        write_some(hosts, "/ens3", 10)
        # Everyone restarts (the history then starts at the snapshot), and a
        # wiped follower gets a SNAP.
        for m in members:
            m.stop()
        wiped = members[2]
        for name in os.listdir(wiped.data_dir):
            if name != "myid":
                shutil.rmtree(os.path.join(wiped.data_dir, name), ignore_errors=True)
        for m in members:
            m.start()
        wait_serving(members)
        write_some(hosts, "/ens4", 10)
    finally:
        for m in members:
            m.stop()
        for q, e in proxies.values():
            q.close()
            e.close()
    for q, e in proxies.values():
        for key in ("c2s", "s2c"):
            for stream in q.streams(key):
                packets = split_quorum(stream)
                for part in chunks(packets, 12):
                    seeds.add("keeper_quorum", b"".join(part))
        for stream in e.streams("c2s"):
            seeds.add("keeper_election", stream[:MAX_SEED])
    for m in members:
        keeper_files(seeds, m.data_dir)
    shutil.rmtree(root, ignore_errors=True)


# ---- brokers ----------------------------------------------------------------------------


def kcat(*args, data=None, timeout=60):
    return subprocess.run(["kcat"] + list(args), input=data, capture_output=True, timeout=timeout)


def confluent_workload(bootstrap):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    fs = admin.create_topics([NewTopic("ck-%s" % c, num_partitions=2, replication_factor=1,
                                       config={"retention.ms": "3600000"})
                              for c in ("none", "gzip", "snappy", "lz4", "zstd", "doomed")])
    for f in fs.values():
        f.result(30)
    for f in admin.create_topics([NewTopic("ck-none", 1, 1)]).values():   # TOPIC_ALREADY_EXISTS
        try:
            f.result(30)
        except Exception:
            pass
    time.sleep(1)
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 20,
                      "enable.idempotence": codec in ("lz4", "zstd")})
        for n in (1, 3, 60):   # batches of one record, a few, many
            for i in range(n):
                p.produce("ck-%s" % codec, key=b"k%d" % (i % 7) if i % 3 else None,
                          value=(b"value %d " % i) * (1 + i % 5) if i % 9 else None,
                          headers=[("h", b"v%d" % i), ("h2", None)] if i % 4 == 0 else None, partition=i % 2,
                          timestamp=1700000000000 + i * 1000)
            p.flush(30)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ck-group", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe(["ck-none", "ck-gzip"])
    got = 0
    deadline = time.monotonic() + 30
    while got < 100 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
    c.commit(asynchronous=False)
    c.offsets_for_times([TopicPartition("ck-zstd", 0, 1700000030000), TopicPartition("ck-lz4", 1, 0)], timeout=10)
    c.committed([TopicPartition("ck-none", 0)], timeout=10)
    c.close()
    list(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "ck-none")]).values())[0].result(30)
    list(admin.create_partitions([NewPartitions("ck-none", 3)]).values())[0].result(30)
    admin.list_groups(timeout=10)
    admin.list_topics(timeout=10)
    list(admin.delete_topics(["ck-doomed"]).values())[0].result(30)


def kafka_python_workload(bootstrap):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    for api, codecs in (((0, 9), (None, "gzip", "snappy", "lz4")), ((0, 10), (None, "gzip", "snappy", "lz4")),
                        (None, (None, "gzip", "lz4"))):
        for codec in codecs:
            kw = {"api_version": api} if api else {}
            p = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, linger_ms=10, **kw)
            for i in range(20):
                p.send("kp-topic", key=b"k%d" % i if i % 2 else None, value=b"kafka-python %d" % i)
            p.flush(30)
            p.close()
    c = KafkaConsumer("kp-topic", bootstrap_servers=bootstrap, group_id="kp-group", auto_offset_reset="earliest",
                      consumer_timeout_ms=3000)
    for _ in c:
        pass
    c.commit()
    c.close()
    a = KafkaAdminClient(bootstrap_servers=bootstrap)
    a.create_topics([NewTopic("kp-admin", 2, 1)])
    a.list_consumer_groups()
    a.describe_consumer_groups(["kp-group"])
    a.list_consumer_group_offsets("kp-group")
    a.delete_topics(["kp-admin"])
    a.close()


def kcat_workload(bootstrap):
    kcat("-L", "-b", bootstrap)
    lines = b"".join(b"key%d\tvalue %d\n" % (i, i) for i in range(50))
    kcat("-P", "-b", bootstrap, "-t", "kc-topic", "-K", "\t", "-H", "hdr=1", data=lines)
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        kcat("-P", "-b", bootstrap, "-t", "kc-topic", "-X", "compression.codec=" + codec, data=lines)
    kcat("-C", "-b", bootstrap, "-t", "kc-topic", "-e", "-o", "beginning")
    kcat("-C", "-b", bootstrap, "-t", "kc-topic", "-e", "-o", "-5", "-p", "0")
    try:
        kcat("-b", bootstrap, "-G", "kc-group", "kc-topic", "-e", timeout=20)
    except subprocess.TimeoutExpired:
        pass


def replication_workload(brokers, bootstrap):
    """A replicated topic; its leader killed, written to, restarted: followers
    fetch from the leader's proxy and truncate with OffsetForLeaderEpoch."""
    from confluent_kafka import Producer
    b1 = brokers[0]
    out = b1.topics_cli("--create", "--topic", "rep", "--partitions", "2", "--replication-factor", "2")
    assert out.returncode == 0, out.stderr
    time.sleep(3)

    def produce(n, tag):
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
        for i in range(n):
            p.produce("rep", value=b"%s %d" % (tag, i), partition=i % 2)
        p.flush(30)

    produce(40, b"before")
    time.sleep(2)
    brokers[0].kill()
    time.sleep(8)   # the session expires, broker 2 leads everything
    produce(40, b"during")
    brokers[0].start()
    time.sleep(6)   # broker 1 follows: OffsetForLeaderEpoch, then Fetch
    produce(40, b"after")
    time.sleep(3)


def parse_kafka_streams(seeds, rec):
    """Requests of every connection; the responses of the ones the fetcher reads."""
    for c2s, s2c in zip(rec.streams("c2s"), rec.streams("s2c")):
        asked = {}
        for f in frames(c2s):
            body = f[4:]
            if len(body) < 8:
                continue
            api, ver, corr = struct.unpack(">hhi", body[:8])
            asked[corr] = (api, ver)
            seeds.add("kafka_request", body)
            if api == 0 and ver <= 2:
                for ms in legacy_message_sets(body):
                    seeds.add("message_set", ms)
        for f in frames(s2c):
            body = f[4:]
            if len(body) < 4:
                continue
            api_ver = asked.get(struct.unpack(">i", body[:4])[0])
            if api_ver == (1, 11):
                seeds.add("kafka_response", b"\x00" + body)
            elif api_ver == (23, 3):
                seeds.add("kafka_response", b"\x01" + body)


def legacy_message_sets(body):
    """The records of a Produce v0-v2 request (header v1, no transactional id)."""
    out = []
    try:
        off = 8
        (cid,) = struct.unpack(">h", body[off:off + 2])
        off += 2 + max(cid, 0) + 6   # client id, acks, timeout
        (ntopics,) = struct.unpack(">i", body[off:off + 4])
        off += 4
        for _ in range(ntopics):
            (tlen,) = struct.unpack(">h", body[off:off + 2])
            off += 2 + tlen
            (nparts,) = struct.unpack(">i", body[off:off + 4])
            off += 4
            for _ in range(nparts):
                _, size = struct.unpack(">ii", body[off:off + 8])
                off += 8
                out.append(body[off:off + size])
                off += size
    except struct.error:
        pass
    return out


def batches_of(data):
    out, off = [], 0
    while len(data) - off >= 12:
        blen = struct.unpack(">i", data[off + 8:off + 12])[0]
        if blen < 49 or off + 12 + blen > len(data):
            break
        out.append(data[off:off + 12 + blen])
        off += 12 + blen
    return out


def broker_files(seeds, log_dir):
    codecs = {1: "codec_gzip", 2: "codec_snappy", 3: "codec_lz4", 4: "codec_zstd"}
    for p in files_under(log_dir, lambda n: n.endswith(".log")):
        bs = batches_of(read(p))
        for b in bs:
            seeds.add("record_batch", b)
            codec = b[22] & 7 if len(b) > 22 else 0
            if codec in codecs:
                seeds.add(codecs[codec], b)
        for part in chunks(bs, 4):
            seeds.add("record_batch", b"".join(part))
    for p in files_under(log_dir, lambda n: n.endswith("-checkpoint")):
        seeds.add("checkpoint", read(p))
    for p in files_under(log_dir, lambda n: n == "meta.properties"):
        seeds.add("broker_meta", read(p))


def broker_seeds(seeds):
    from broker_harness import Broker
    k = Keeper()
    k.start()
    brokers, recs = [], []
    try:
        for bid in (1, 2):
            b = Broker(k.hosts + "/seeds", broker_id=bid, extra={
                "num.partitions": 2, "auto.create.topics.enable": "true", "default.replication.factor": 1,
                "log.flush.interval.ms": 1000, "replica.lag.time.max.ms": 4000,
                "leader.election.wait.ms": 1000, "log.segment.bytes": 65536})
            r = Recorder(b.port)
            b.props["advertised.listeners"] = "PLAINTEXT://127.0.0.1:%d" % r.port
            b.write_config()
            b.start()
            brokers.append(b)
            recs.append(r)
        bootstrap = ",".join(r.hosts for r in recs)
        kcat_workload(bootstrap)
        confluent_workload(bootstrap)
        kafka_python_workload(bootstrap)
        replication_workload(brokers, bootstrap)
    finally:
        for b in brokers:
            b.stop()
        k.stop()
        for r in recs:
            r.close()
    for r in recs:
        parse_kafka_streams(seeds, r)
    gen = os.path.join(ROOT, "build", "fuzz", "kafka-seeds")
    if os.access(gen, os.X_OK):   # every API and version, flexible ones included
        d = tempfile.mkdtemp(prefix="kipper-kafka-seeds-")
        subprocess.run([gen, d], check=True, stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(d)):
            seeds.add("kafka_request", read(os.path.join(d, name)))
        shutil.rmtree(d, ignore_errors=True)
    else:
        print("make-seeds: %s is not built (make fuzz-build)" % gen, file=sys.stderr)
    for b in brokers:
        broker_files(seeds, b.log_dir)
        shutil.rmtree(b.workdir, ignore_errors=True)
    shutil.rmtree(k.workdir, ignore_errors=True)


# ---- merging into the committed corpora ---------------------------------------------------


def merge(harness):
    raw = os.path.join(SEEDS, harness)
    binary = os.path.join(ROOT, "build", "fuzz", harness)
    corpus = os.path.join(CORPUS, harness)
    if not os.path.isdir(raw):
        return
    if not os.access(binary, os.X_OK):
        print("make-seeds: %s is not built (make fuzz-build); not merged" % binary, file=sys.stderr)
        return
    os.makedirs(corpus, exist_ok=True)
    fresh = tempfile.mkdtemp(prefix="kipper-merge-")
    log = os.path.join(ROOT, "build", "fuzz", "logs", harness + ".merge.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    crashes = os.path.join(ROOT, "build", "fuzz", "crashes")
    os.makedirs(crashes, exist_ok=True)
    with open(log, "wb") as f:
        subprocess.run([binary, "-merge=1", "-max_len=%d" % MAX_SEED, "-artifact_prefix=%s/%s-seed-" % (crashes, harness),
                        fresh, raw], stdout=f, stderr=f, check=True)
    if "Test unit written" in read(log).decode(errors="replace"):
        # A seed crashed the harness: a finding, to look into before committing.
        print("make-seeds: %s: a seed crashed the harness; see %s and %s" % (harness, log, crashes), file=sys.stderr)
    kept = sorted(os.listdir(fresh), key=lambda n: os.path.getsize(os.path.join(fresh, n)))[:MAX_FILES]
    for name in os.listdir(corpus):
        if not name.startswith("regress-"):
            os.unlink(os.path.join(corpus, name))
    for name in kept:
        shutil.copy(os.path.join(fresh, name), os.path.join(corpus, name))
    shutil.rmtree(fresh, ignore_errors=True)
    print("make-seeds: %-16s %4d raw -> %3d kept" % (harness, len(os.listdir(raw)), len(kept)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-merge", action="store_true", help="leave the raw seeds in build/fuzz/seeds")
    ap.add_argument("--merge-only", action="store_true", help="merge the raw seeds already in build/fuzz/seeds")
    ap.add_argument("parts", nargs="*", default=["keeper", "ensemble", "broker"])
    args = ap.parse_args()
    if args.merge_only:
        for h in sorted(os.listdir(SEEDS)):
            merge(h)
        return
    shutil.rmtree(SEEDS, ignore_errors=True)
    seeds = Seeds()
    for part in args.parts:
        t0 = time.monotonic()
        {"keeper": keeper_seeds, "ensemble": ensemble_seeds, "broker": broker_seeds}[part](seeds)
        print("make-seeds: %s done in %.0f s" % (part, time.monotonic() - t0))
    for h, n in seeds.counts().items():
        print("make-seeds: %-16s %4d raw seeds" % (h, n))
    if not args.no_merge:
        for h in sorted(seeds.counts()):
            merge(h)


if __name__ == "__main__":
    main()
