"""The broker workload of the fault suite and its checker.

Two idempotent acks=all producers (confluent-kafka), each numbering its messages
on a topic of its own (RF=3, min.insync.replicas=2), and a consumer group of two
members reading the first topic with automatic commits, while a third consumer
of that group's id watches the committed offsets. Everything is recorded with
monotonic times; check() then reads every partition back from its leader and
says what broke:

- lost: an acknowledged message that is not in the final log at the offset it
  was acknowledged with (also: acknowledged twice, out of order, duplicated,
  offsets not contiguous -- check_stream's list);
- dirty reads: a consumer was given a (partition, offset, value) that the final
  log does not hold there;
- a committed offset of the group that went backwards, or past the log's end;
- replicas that are not byte-identical up to the HW.
"""
import time

from harness import wait_until
from repl_cluster import ConsumerThread, Recorder, Stream, check_stream, dirty_reads, lost_acks

PARTITIONS = 3


class TimedStream(Stream):
    """A Stream that also keeps when each delivery report came: events
    [(t, ok, (topic, partition))]."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.events = []

    def _report(self, err, m):
        super()._report(err, m)
        self.events.append((time.monotonic(), err is None, (self.topic, m.partition())))


class CommitWatcher(ConsumerThread):
    """Reads the group's committed offsets every `interval` seconds: history
    {partition: [(t, offset)]} of the values seen (unanswered reads are skipped)."""

    def __init__(self, bootstrap, group, topic, partitions, interval=0.5):
        from confluent_kafka import Consumer, TopicPartition
        super().__init__(Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                                   "reconnect.backoff.max.ms": 500}))
        self.tps = [TopicPartition(topic, p) for p in range(partitions)]
        self.interval = interval
        self.history = {p: [] for p in range(partitions)}

    def _run(self):
        while not self._stop.wait(self.interval):
            try:
                got = self.consumer.committed(self.tps, timeout=2)
            except Exception:          # coordinator moving: this read has no answer
                continue
            now = time.monotonic()
            for tp in got:
                if tp.error is None and tp.offset >= 0:
                    self.history[tp.partition].append((now, tp.offset))

    def regressions(self, ends):
        """Committed offsets that went backwards or past the partition's end."""
        out = []
        for p, hist in self.history.items():
            last = -1
            for t, off in hist:
                if off < last:
                    out.append("partition %d: committed offset went back from %d to %d" % (p, last, off))
                if off > ends.get(p, 0):
                    out.append("partition %d: committed offset %d is past the log's end %d" % (p, off, ends.get(p, 0)))
                last = max(last, off)
        return out


class BrokerWorkload:
    def __init__(self, cluster, name, rate=300, partitions=PARTITIONS):
        self.c = cluster
        self.topics = ["%s-a" % name, "%s-b" % name]
        self.partitions = partitions
        self.rate = rate
        self.group = "%s-group" % name
        self.streams = []
        self.consumers = []
        self.watcher = None
        self.started = None

    def topic_partitions(self):
        return {t: self.partitions for t in self.topics}

    def start(self):
        repl = self.c.repl
        for t in self.topics:
            repl.create_topic(t, self.partitions, 3, configs={"min.insync.replicas": 2})
        self.started = time.monotonic()
        self.streams = [TimedStream(repl.bootstrap, t, self.partitions, rate=self.rate, name=t).start()
                        for t in self.topics]
        self.consumers = [Recorder(repl.bootstrap, self.topics[0], self.partitions, group=self.group).start()
                          for _ in range(2)]
        self.watcher = CommitWatcher(repl.bootstrap, self.group, self.topics[0], self.partitions).start()
        for s in self.streams:
            s.wait_acked(50, timeout=30)
        return self

    def acked_count(self):
        return sum(s.acked_count() for s in self.streams)

    def wait_progress(self, more=50, timeout=60):
        """Until every producer has `more` further acknowledgements."""
        for s in self.streams:
            s.wait_progress(more, timeout=timeout)

    def events(self):
        return sorted(e for s in self.streams for e in s.events)

    def stop_and_check(self):
        """Stop producing (waiting for every delivery report), let the consumers catch
        up, and check. Returns a Result."""
        r = Result()
        for s in self.streams:
            s.stop(flush_timeout=120)
            r.attempted += s.sent
            r.acked += len(s.acked)
            r.failed += len(s.errors)
            r.unknown += s.unflushed or 0
        repl = self.c.repl
        logs = {}
        for s in self.streams:
            repl.wait_isr_full(s.topic, self.partitions, timeout=60)
            logs[s.topic] = repl.read_all(s.topic, self.partitions)
            problems = check_stream(s, logs[s.topic])
            r.lost += len(lost_acks(s, logs[s.topic]))
            r.problems += ["%s: %s" % (s.topic, x) for x in problems]
        first = logs[self.topics[0]]
        ends = {p: len(entries) for p, entries in first.items()}
        try:
            wait_until(lambda: all(_positions(self.consumers).get(p, 0) >= ends[p] for p in ends),
                       timeout=60, interval=0.2, what="the group to read every record")
        except TimeoutError:
            r.problems.append("the group did not read the whole log: positions %s, ends %s"
                              % (_positions(self.consumers), ends))
        for rec in self.consumers:
            seen = rec.stop()
            dirty = dirty_reads(seen, first)
            r.dirty += len(dirty)
            if dirty:
                r.problems.append("%d dirty reads, e.g. %s" % (len(dirty), dirty[:5]))
        self.watcher.stop()
        regressions = self.watcher.regressions(ends)
        r.stale = len(regressions)
        r.problems += regressions[:10]
        for t in self.topics:
            try:
                repl.assert_replicas_identical(t, self.partitions, timeout=30)
            except AssertionError as exc:
                r.problems.append(str(exc)[:2000])
        r.events = self.events()
        return r


def _positions(consumers):
    """{partition: next offset after the last one any of the consumers was given}."""
    out = {}
    for rec in consumers:
        for p, off, _ in list(rec.seen):
            out[p] = max(out.get(p, 0), off + 1)
    return out


class Result:
    """What one run did and what its checker found (problems empty = it passed)."""

    def __init__(self):
        self.attempted = self.acked = self.failed = self.unknown = 0
        self.lost = self.dirty = 0
        self.stale = 0             # committed offsets seen going backwards
        self.problems = []
        self.events = []
