"""A replicated kipper cluster for the replication tests (test_replication*.py).

    ens = keeper_ensemble()                       # 3 keepers (or Apache ZooKeeper 3.8)
    c = ReplCluster(ens.hosts(), "/repl/x").start()   # brokers 1, 2, 3 with short timings
    c.create_topic("t", partitions=6, rf=3, configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, "t", 6).start()       # idempotent acks=all, numbered messages
    ... faults: c.kill(id), c.start_broker(id), c.pause(id), c.resume(id), c.stop(id) ...
    s.stop()
    logs = c.read_all("t", 6)                     # every partition from 0 to its HW
    assert not check_stream(s, logs)
    c.assert_replicas_identical("t", 6)           # segment files byte-identical up to the HW
    c.close()

The coordinator's view is read with kazoo under the cluster's chroot:
/brokers/topics/T/P/{replicas,leader,ISR} as docs/replication.md lists them.
The brokers ask for coordinator sessions of 4 s (zookeeper.session.timeout.ms
4000; the ensembles allow up to 30 s, so a test may ask for longer): that is how
long a SIGKILLed or paused broker keeps its registration and leader nodes.
"""
import glob
import json
import os
import shutil
import struct
import threading
import time

import pytest
from kazoo.exceptions import NoNodeError

from broker_harness import Broker, node_slug
from harness import wait_until

SESSION_MS = 4000            # zookeeper.session.timeout.ms
LAG_MS = 2500                # replica.lag.time.max.ms
BASE_PROPS = {
    "zookeeper.session.timeout.ms": SESSION_MS,
    "replica.lag.time.max.ms": LAG_MS,
    "leader.election.wait.ms": 1000,
    "replica.fetch.backoff.ms": 200,
    "replica.fetch.wait.max.ms": 200,
    "replica.socket.timeout.ms": 2000,
    "controlled.shutdown.timeout.ms": 8000,
    "default.replication.factor": 3,
    "min.insync.replicas": 2,
    "auto.create.topics.enable": "false",
    "num.partitions": 1,
}

ERR_NOT_LEADER_OR_FOLLOWER = 6
ERR_REQUEST_TIMED_OUT = 7
ERR_NOT_ENOUGH_REPLICAS = 19
ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20


def keeper_ensemble(target="kipper"):
    """A started 3-member ensemble (tickTime 200, sessions of 0.4 to 30 s)."""
    from ensemble import Ensemble
    ens = Ensemble(3, target=target)
    try:
        ens.start()
    except BaseException:
        ens.close()
        ens.cleanup()
        raise
    return ens


def retry(fn, timeout, what):
    """fn() until it returns without raising (its value), for at most timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except Exception:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


# ---- segment files ----------------------------------------------------------------------


def segment_batches(partition_dir):
    """Every complete record batch in the partition's segment files, in offset order,
    as (base_offset, last_offset, bytes). A partial batch at a file's end (being
    written) ends that file."""
    out = []
    files = sorted(glob.glob(os.path.join(partition_dir, "*.log")),
                   key=lambda p: int(os.path.basename(p).split(".")[0]))
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + 27 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0 or pos + 12 + length > len(data):
                break
            last_delta = struct.unpack_from(">i", data, pos + 23)[0]
            out.append((base, base + last_delta, data[pos:pos + 12 + length]))
            pos += 12 + length
    return out


def read_checkpoint(path):
    """A Kafka offset checkpoint file: {(topic, partition): offset}."""
    out = {}
    with open(path) as f:
        lines = f.read().split("\n")
    n = int(lines[1])
    for line in lines[2:2 + n]:
        topic, part, off = line.rsplit(" ", 2)
        out[(topic, int(part))] = int(off)
    return out


# ---- the cluster ------------------------------------------------------------------------


class ReplCluster:
    """Brokers (ids 1..n by default) on one coordinator chroot."""

    def __init__(self, hosts, chroot, ids=(1, 2, 3), extra=None, per_broker=None, placement=None):
        """placement: broker id -> harness.Placement (loopback by default)."""
        self.hosts = hosts
        self.chroot = chroot
        props = dict(BASE_PROPS)
        props.update(extra or {})
        self.brokers = {}
        for i in ids:
            p = dict(props)
            p.update((per_broker or {}).get(i, {}))
            self.brokers[i] = Broker(hosts + chroot, broker_id=i, extra=p,
                                     placement=placement(i) if placement else None)
        self.killed = set()        # ids the test SIGKILLed (their exit code is not checked)
        self.paused = set()
        self._zk = None

    # -- life cycle
    def start(self, ids=None, timeout=30):
        ids = list(ids or self.brokers)
        for i in ids:
            self.brokers[i].start(wait=False)
        for i in ids:
            self.brokers[i].wait_registered(timeout=timeout)
        return self

    def start_broker(self, i, wait=True, timeout=30):
        self.brokers[i].start(wait=wait, timeout=timeout)
        return self.brokers[i]

    def kill(self, i):
        self.paused.discard(i)
        self.killed.add(i)
        rc = self.brokers[i].kill()
        assert rc == -9, "broker %d was not running (exit %r):\n%s" % (i, rc, self.brokers[i].log()[-5000:])

    def stop(self, i, timeout=30):
        """SIGTERM and wait: the exit status."""
        if i in self.paused:
            self.resume(i)
        return self.brokers[i].stop(timeout=timeout)

    def pause(self, i):
        self.brokers[i].pause()
        self.paused.add(i)

    def resume(self, i):
        self.brokers[i].resume()
        self.paused.discard(i)

    def stop_all(self):
        """SIGTERM every running broker, one after the other: {id: exit status}."""
        for i in list(self.paused):
            self.resume(i)
        return {i: b.stop(timeout=30) for i, b in self.brokers.items() if b.alive()}

    def live(self):
        return [i for i, b in self.brokers.items() if b.alive() and i not in self.paused]

    def close(self, keep=False):
        """Stop every broker (SIGTERM; paused ones are resumed first). Returns the
        errors: brokers that did not exit 0."""
        errors = []
        if self._zk is not None:
            try:
                self._zk.stop()
                self._zk.close()
            except Exception:
                pass
            self._zk = None
        for i in list(self.paused):
            try:
                self.resume(i)
            except Exception:
                pass
        for i, b in self.brokers.items():
            was = b.alive()
            rc = b.stop(timeout=30)
            if was and rc != 0:
                errors.append("broker %d exited with %r on SIGTERM:\n%s" % (i, rc, b.log()[-8000:]))
        if not keep and not errors and not os.environ.get("KIPPER_TEST_KEEP"):
            for b in self.brokers.values():
                shutil.rmtree(b.workdir, ignore_errors=True)
        return errors

    @property
    def bootstrap(self):
        return ",".join(b.bootstrap for b in self.brokers.values())

    def logs(self, tail=6000):
        """Every broker's log tail, for assertion messages."""
        return "\n".join("==== broker %d\n%s" % (i, b.log()[-tail:]) for i, b in self.brokers.items())

    # -- the coordinator's view
    @property
    def zk(self):
        """The test's kazoo client, synced first: the member it reads from may be a
        follower that has not applied what a broker just wrote through another
        member (ZooKeeper's reads are not linearizable), and every read here is
        meant to see at least what had been written when it was asked."""
        if self._zk is None:
            from kazoo.client import KazooClient
            c = KazooClient(hosts=self.hosts + self.chroot, timeout=10.0,
                            connection_retry=dict(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5))
            c.start(timeout=20)
            self._zk = c
        self._zk.sync("/")
        return self._zk

    def _doc(self, path):
        data, stat = self.zk.get(path)
        return json.loads(data.decode()), stat

    def state(self, topic, p):
        """{'replicas', 'leader', 'epoch', 'isr', 'isr_epoch', 'isr_version'} from the
        coordinator (leader None when there is no leader node), as one snapshot: an
        election writes the leader node and the ISR node in one multi, and two plain
        reads could straddle it (an old ISR beside a new leader), so the ISR is read
        again after the leader and the pair kept only when its version did not move."""
        base = "/brokers/topics/%s/%d/" % (topic, p)
        out = {"replicas": self._doc(base + "replicas")[0]["replicas"]}
        while True:
            isr, st = self._doc(base + "ISR")
            try:
                ld = self._doc(base + "leader")[0]
                out.update(leader=ld["leader"], epoch=ld["leader_epoch"])
            except NoNodeError:
                out.update(leader=None, epoch=None)
            if self.zk.exists(base + "ISR").version == st.version:
                break
        out.update(isr=isr["isr"], isr_epoch=isr["leader_epoch"], isr_version=st.version)
        return out

    def leader(self, topic, p):
        return self.state(topic, p)["leader"]

    def registered(self):
        return sorted(int(x) for x in self.zk.get_children("/brokers/ids"))

    def create_topic(self, topic, partitions=None, rf=None, assignment=None, configs=None, timeout=30):
        """`kipper topics --create`, then wait until every partition has a leader
        with a full ISR. assignment: list of replica lists, one per partition."""
        args = ["--create", "--topic", topic]
        if assignment:
            args += ["--replica-assignment", ",".join(":".join(str(r) for r in a) for a in assignment)]
            partitions = len(assignment)
        else:
            args += ["--partitions", str(partitions), "--replication-factor", str(rf)]
        for k, v in (configs or {}).items():
            args += ["--config", "%s=%s" % (k, v)]
        b = self.brokers[self.live()[0]]
        out = b.topics_cli(*args)
        assert out.returncode == 0, out.stderr + out.stdout
        self.wait_isr_full(topic, partitions, timeout=timeout)
        return partitions

    def isr_full(self, topic, p):
        s = self.state(topic, p)
        return s["leader"] is not None and sorted(s["isr"]) == sorted(s["replicas"]) and s["isr_epoch"] == s["epoch"]

    def wait_isr_full(self, topic, partitions, timeout=40):
        """Until every partition has a leader and every assigned replica is in its
        ISR, in the coordinator and in the leader's Metadata."""
        def full():
            for p in range(partitions):
                if not self.isr_full(topic, p):
                    return False
            md = self.metadata(topic)
            return md is not None and all(
                x.error == 0 and sorted(x.isr) == sorted(x.replicas) for x in md.partitions)
        try:
            wait_until(full, timeout=timeout, interval=0.1, what="a full ISR for every partition of %s" % topic)
        except TimeoutError:
            raise AssertionError("ISRs not full: %s\n%s" % (self.describe(topic, partitions), self.logs()))

    def wait_new_leader(self, topic, p, old_epoch, not_in=(), timeout=30):
        """Until partition p has a leader with an epoch above old_epoch that is not in
        not_in; returns its state."""
        def elected():
            s = self.state(topic, p)
            if s["leader"] is not None and s["epoch"] > old_epoch and s["leader"] not in not_in:
                return s
            return None
        try:
            return wait_until(elected, timeout=timeout, interval=0.05,
                              what="a new leader of %s-%d" % (topic, p))
        except TimeoutError:
            raise AssertionError("no new leader of %s-%d after epoch %d: %s\n%s"
                                 % (topic, p, old_epoch, self.state(topic, p), self.logs()))

    def describe(self, topic, partitions):
        out = []
        for p in range(partitions):
            try:
                out.append((p, self.state(topic, p)))
            except Exception as exc:
                out.append((p, repr(exc)))
        return out

    # -- Kafka's view
    def metadata(self, topic, via=None):
        """The topic's Metadata from one live broker (None if none answers)."""
        ids = [via] if via is not None else self.live()
        for i in ids:
            try:
                with self.brokers[i].conn(timeout=5) as k:
                    return k.metadata([topic], allow_auto_create=False).topics.get(topic)
            except OSError:
                continue
        return None

    def offline_replicas(self, topic):
        """{partition: (leader, isr, offline replicas)} from Metadata v5 of a live broker."""
        import struct
        from kafka_wire import API_METADATA, karray, kstring
        with self.brokers[self.live()[0]].conn(timeout=5) as k:
            r = k.call(API_METADATA, 5, karray([kstring(topic)]) + struct.pack(">?", False))
        r.take(">i")                                               # throttle
        r.array(lambda r: (r.take(">i"), r.string(), r.take(">i"), r.string()))
        r.string()
        r.take(">i")

        def part(r):
            return (r.take(">h"), r.take(">i"), r.take(">i"), r.array(lambda r: r.take(">i")),
                    r.array(lambda r: r.take(">i")), r.array(lambda r: r.take(">i")))
        topics = r.array(lambda r: (r.take(">h"), r.string(), r.take(">?"), r.array(part)))
        assert len(topics) == 1 and topics[0][0] == 0, topics
        return {index: (leader, isr, offline) for _, index, leader, _, isr, offline in topics[0][3]}

    def conn(self, i, **kw):
        return self.brokers[i].conn(**kw)

    def high_watermark(self, topic, p):
        """ListOffsets LATEST at the partition's leader (the HW)."""
        leader = self.leader(topic, p)
        with self.conn(leader) as k:
            err, _, off = k.list_offset(topic, p, -1)
        assert err == 0, "ListOffsets of %s-%d at broker %d: error %d" % (topic, p, leader, err)
        return off

    def read_partition(self, topic, p, timeout=20):
        """[(offset, value)] from 0 to the HW, fetched from the leader (retried while
        the leader is moving)."""
        def read():
            with self.conn(self.leader(topic, p), timeout=10) as k:
                return [(o, rec.value) for o, rec, _ in k.fetch_all(topic, p, 0)]
        return retry(read, timeout, "a read of %s-%d" % (topic, p))

    def read_all(self, topic, partitions):
        """{partition: [(offset, value)]} up to each HW."""
        return {p: self.read_partition(topic, p) for p in range(partitions)}

    # -- replicas on disk
    def replica_batches(self, i, topic, p):
        return segment_batches(os.path.join(self.brokers[i].log_dir, "%s-%d" % (topic, p)))

    def replicas_differ(self, topic, p, hw=None, replicas=None):
        """None when every assigned replica (or those listed) holds the same batches,
        byte for byte, below the HW (the leader's, by default); else what differs."""
        replicas = replicas or self.state(topic, p)["replicas"]
        if hw is None:
            hw = self.high_watermark(topic, p)
        logs = {}
        for i in replicas:
            logs[i] = [b for b in self.replica_batches(i, topic, p) if b[1] < hw]
        ref_id = replicas[0]
        ref = logs[ref_id]
        if ref and ref[-1][1] != hw - 1 and hw > 0:
            return "replica %d's batches below HW %d end at %d" % (ref_id, hw, ref[-1][1])
        if not ref and hw > 0:
            return "replica %d has no batch below HW %d" % (ref_id, hw)
        for i in replicas[1:]:
            other = logs[i]
            if len(other) != len(ref):
                return "%s-%d: replica %d has %d batches below HW %d, replica %d has %d" % (
                    topic, p, ref_id, len(ref), hw, i, len(other))
            for a, b in zip(ref, other):
                if a != b:
                    return "%s-%d: replicas %d and %d differ at batch %d..%d (below HW %d)" % (
                        topic, p, ref_id, i, a[0], a[1], hw)
        return None

    def assert_replicas_identical(self, topic, partitions, timeout=20):
        """Every partition's replicas byte-identical up to its HW (waiting until the
        followers have written what the HW covers)."""
        for p in range(partitions):
            last = []

            def same():
                last[:] = [self.replicas_differ(topic, p)]
                return last[0] is None
            try:
                wait_until(same, timeout=timeout, interval=0.2, what="identical replicas of %s-%d" % (topic, p))
            except TimeoutError:
                raise AssertionError("replicas of %s-%d are not identical up to the HW: %s\n%s"
                                     % (topic, p, last and last[0], self.logs()))


# ---- the producer stream ----------------------------------------------------------------


def value_of(i):
    return b"m%08d" % i


def number_of(value):
    return int(value[1:]) if value[:1] == b"m" and value[1:].isdigit() else None


class Stream:
    """An idempotent acks=all confluent-kafka producer in a thread, sending
    value_of(i) to partition i % partitions at about `rate` messages per second,
    recording every delivery report: acked [(partition, offset, value)], errors
    [(value, error)]."""

    def __init__(self, bootstrap, topic, partitions, rate=400, conf=None, name="stream"):
        from confluent_kafka import Producer
        cfg = {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "message.timeout.ms": 90000,
            "request.timeout.ms": 10000,
            "retry.backoff.ms": 100,
            "reconnect.backoff.ms": 50,
            "reconnect.backoff.max.ms": 500,
            "topic.metadata.refresh.interval.ms": 1000,
            "metadata.max.age.ms": 3000,
        }
        cfg.update(conf or {})
        self.producer = Producer(cfg)
        self.topic = topic
        self.partitions = partitions
        self.rate = rate
        self.name = name
        self.acked = []
        self.errors = []
        self.sent = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.exc = None
        self.unflushed = None

    def _report(self, err, m):
        with self._lock:
            if err is not None:
                self.errors.append((m.value(), err))
            else:
                self.acked.append((m.partition(), m.offset(), m.value()))

    def _run(self):
        try:
            t0 = time.monotonic()
            i = 0
            while not self._stop.is_set():
                due = int((time.monotonic() - t0) * self.rate) + 1
                while i < due and not self._stop.is_set():
                    try:
                        self.producer.produce(self.topic, value=value_of(i), partition=i % self.partitions,
                                              on_delivery=self._report)
                        i += 1
                        self.sent = i
                    except BufferError:
                        self.producer.poll(0.05)
                self.producer.poll(0.01)
        except BaseException as exc:   # reported by stop()
            self.exc = exc

    def start(self):
        self._thread.start()
        return self

    def acked_count(self):
        with self._lock:
            return len(self.acked)

    def wait_acked(self, n, timeout=60):
        """Until at least n messages in all are acknowledged."""
        try:
            wait_until(lambda: self.acked_count() >= n, timeout=timeout, interval=0.05,
                       what="%d acknowledged messages" % n)
        except TimeoutError:
            raise AssertionError("the stream did not reach %d acknowledged messages in %s s: %d acknowledged, "
                                 "%d sent, delivery errors %s" % (n, timeout, self.acked_count(), self.sent,
                                                                  self.errors[:3]))

    def wait_progress(self, more=50, timeout=60):
        """Until `more` further messages are acknowledged."""
        self.wait_acked(self.acked_count() + more, timeout=timeout)

    def stop(self, flush_timeout=120):
        """Stop producing and wait for every delivery report. Returns the number of
        messages without one (0 unless flush timed out)."""
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), "producer thread hung"
        if self.exc:
            raise self.exc
        self.unflushed = self.producer.flush(flush_timeout)
        self.producer = None          # librdkafka's handle goes now, not at garbage collection
        return self.unflushed


def lost_acks(stream, logs):
    """The acknowledged messages [(partition, offset, value)] that `logs`
    ({partition: [(offset, value)]}) does not hold where they were acknowledged.
    librdkafka acknowledges a message without an offset (None here) when a later
    batch of the same producer succeeded after this one's request failed in a way
    that may have stored it -- the broker's sequence check proves it was (its
    "implicit ack"); such a message must be in its partition, at any offset."""
    at = {p: dict(entries) for p, entries in logs.items()}
    held = {p: set(v for _, v in entries) for p, entries in logs.items()}
    return [(p, off, val) for p, off, val in stream.acked
            if (at.get(p, {}).get(off) != val if off is not None else val not in held.get(p, ()))]


def check_stream(stream, logs, exactly=True):
    """Problems (a list of strings) with what `logs` ({partition: [(offset, value)]}
    read from the start of each partition) holds against the stream's reports:
    - every acknowledged message is in the log at the offset it was acknowledged
      with, and no (partition, offset) was acknowledged with two values;
    - every value in the log is one the stream sent, to that partition, at most once;
    - each partition's values are in the order they were sent;
    - the offsets are contiguous from 0 (nothing lost in the middle)."""
    problems = []
    acked_at = {}
    for p, off, val in stream.acked:
        if off is None:       # acknowledged without an offset: see lost_acks
            continue
        prev = acked_at.get((p, off))
        if prev is not None and prev != val:
            problems.append("%d:%d acknowledged twice, with %r and %r" % (p, off, prev, val))
        acked_at[(p, off)] = val
    by_value = {}
    for p, off, val in stream.acked:
        if off is None:
            continue
        if val in by_value and by_value[val] != (p, off):
            problems.append("%r acknowledged twice: at %s and %d:%d" % (val, by_value[val], p, off))
        by_value[val] = (p, off)
    for p, entries in logs.items():
        offsets = [o for o, _ in entries]
        if offsets != list(range(len(entries))):
            problems.append("partition %d: offsets not contiguous from 0 (%s...)" % (p, offsets[:10]))
        seen = {}
        last = -1
        for off, val in entries:
            n = number_of(val or b"")
            if n is None or n >= stream.sent or n % stream.partitions != p:
                problems.append("%d:%d holds %r, which the stream never sent to partition %d" % (p, off, val, p))
                continue
            if val in seen:
                problems.append("%r twice in partition %d: at %d and %d" % (val, p, seen[val], off))
            seen[val] = off
            if n <= last:
                problems.append("partition %d out of order at %d: %r after m%08d" % (p, off, val, last))
            last = max(last, n)
    at = {p: dict(entries) for p, entries in logs.items()}
    lost = lost_acks(stream, logs)
    if lost:
        problems.append("%d acknowledged messages not at their offsets, e.g. %s (log has %s)" % (
            len(lost), lost[:5], [at.get(p, {}).get(o) for p, o, _ in lost[:5]]))
    return problems


# ---- consumers that record what they saw ------------------------------------------------


class ConsumerThread:
    """A confluent-kafka consumer driven by a thread of its own (self._run, until
    self._stop is set); stop() joins the thread and closes the consumer."""

    def __init__(self, consumer):
        self.consumer = consumer
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        raise NotImplementedError

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(30)
        # librdkafka 2.0.2's close has been seen to hang for good in its handle's
        # destruction (the main thread joining a broker thread that never ends),
        # with every broker up and idle: bounded here, so that it fails the test
        # that saw it instead of stopping the whole suite.
        closer = threading.Thread(target=self.consumer.close, daemon=True)
        closer.start()
        closer.join(60)
        if closer.is_alive():
            raise AssertionError("the consumer's close() did not return within 60 s (librdkafka)")
        self.consumer = None


class Recorder(ConsumerThread):
    """A confluent-kafka consumer in a thread recording every (partition, offset,
    value) it is given: assigned to every partition from 0 (group=None), or
    subscribed as a member of `group`."""

    def __init__(self, bootstrap, topic, partitions, group=None):
        from confluent_kafka import Consumer, TopicPartition
        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group or "recorder-plain",
            "enable.auto.commit": group is not None,
            "auto.commit.interval.ms": 500,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100,
            "reconnect.backoff.ms": 50,
            "reconnect.backoff.max.ms": 500,
            "topic.metadata.refresh.interval.ms": 1000,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            # librdkafka 2.0.2 (Debian's) can send its FindCoordinator over the
            # connection to the old coordinator when that is the only one up,
            # then close it for the coordinator change: the request waits there
            # until it times out (socket.timeout.ms, 60 s by default) and the
            # group with it. Seen here when every other broker was down at the
            # moment the coordinator answered NOT_COORDINATOR; librdkafka no
            # longer picks that connection for such queries since 2.10 (its
            # rd_kafka_broker_weight_usable). A shorter time-out bounds the stall.
            "socket.timeout.ms": 10000,
        }
        super().__init__(Consumer(conf))
        if group is None:
            self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        else:
            self.consumer.subscribe([topic])
        self.seen = []
        self.errors = []

    def _run(self):
        while not self._stop.is_set():
            m = self.consumer.poll(0.1)
            if m is None:
                continue
            if m.error():
                self.errors.append(m.error())
                continue
            self.seen.append((m.partition(), m.offset(), m.value()))

    def stop(self):
        super().stop()
        return self.seen

    def positions(self):
        """{partition: the next offset after the last one seen}."""
        out = {}
        for p, off, _ in list(self.seen):
            out[p] = max(out.get(p, 0), off + 1)
        return out


def dirty_reads(seen, logs):
    """What a consumer saw that the final logs do not hold at that offset."""
    at = {p: dict(entries) for p, entries in logs.items()}
    return [(p, off, val, at.get(p, {}).get(off)) for p, off, val in seen if at.get(p, {}).get(off) != val]


def consume_all(bootstrap, topic, partitions, ends, timeout=60, keys=False):
    """[(partition, offset, value)] ((partition, offset, key, value) with keys)
    from offset 0 of every partition to ends[p], with a confluent-kafka consumer
    assigned to them (no group coordination)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
                  "enable.partition.eof": True, "auto.offset.reset": "error", "fetch.wait.max.ms": 50})
    out = []
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        done = {p for p in range(partitions) if ends[p] == 0}
        deadline = time.monotonic() + timeout
        while len(done) < partitions:
            assert time.monotonic() < deadline, "consumed %d, done %s" % (len(out), done)
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                if m.offset() >= ends[m.partition()]:
                    done.add(m.partition())
                continue
            out.append((m.partition(), m.offset(), m.key(), m.value()) if keys else
                       (m.partition(), m.offset(), m.value()))
    finally:
        c.close()
    return out


# ---- fixtures the multi-broker test modules share ----

@pytest.fixture(scope="module")
def ensemble():
    """A 3-member kipper keeper ensemble for the module's clusters (each on a
    chroot of its own); every keeper must exit 0 at the end."""
    ens = keeper_ensemble()
    try:
        yield ens
    finally:
        rcs = ens.close()
        ens.cleanup()
        assert all(rc == 0 for rc in rcs.values()), "keepers exited with %r" % rcs


def cluster_maker(request, ensemble, prefix, default_ids=(1, 2, 3)):
    """The body of a make_cluster fixture (`yield from` it): yields
    make(ids=default_ids, extra={server.properties}, per_broker={id: {...}},
    start=True, ens=None, placement=None), brokers on the chroot /prefix/<test>-<n>. Every
    broker is stopped (SIGTERM) after the test and must exit 0, unless the
    test killed it and left it down."""
    made = []

    def make(ids=default_ids, extra=None, per_broker=None, start=True, ens=None, placement=None):
        chroot = "/%s/%s-%d" % (prefix, node_slug(request)[:60], len(made))
        c = ReplCluster((ens or ensemble).hosts(), chroot, ids=ids, extra=extra, per_broker=per_broker,
                        placement=placement)
        made.append(c)
        if start:
            c.start()
        return c

    yield make
    errors = []
    for c in made:
        errors += c.close(keep=getattr(request.node, "keeper_failed", False))
    assert not errors, "\n".join(errors)
