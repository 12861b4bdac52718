"""Replication across brokers (docs/replication.md; issue 10's Show list).

Three brokers (ids 1-3) on a 3-member kipper keeper ensemble (one ensemble for
the module, one chroot per test; the last test uses Apache ZooKeeper 3.8),
short timings (coordinator sessions of 4 s, replica.lag.time.max.ms 2.5 s,
leader.election.wait.ms 1 s), and an idempotent acks=all confluent-kafka
producer streaming numbered messages over several partitions (repl_cluster.py).

What is checked is what a user relies on: every acknowledged message is in
the log, exactly once, in order, at the offset it was acknowledged with; no
offset is acknowledged with two values; what a consumer saw is what the log
finally holds; the replicas of a partition hold byte-identical batches up to
the high watermark (their segment files are parsed); acks=all is refused when
the ISR is smaller than min.insync.replicas; a rolling restart with SIGTERM
costs no failed delivery.
"""
import json
import os
import re
import shutil
import subprocess
import time

import pytest
from confluent_kafka import KafkaError, Producer
from kazoo.exceptions import NoNodeError

from harness import Placement, wait_until
from kafka_wire import Record, parse_record_batches, record_batch
from repl_cluster import (ERR_NOT_ENOUGH_REPLICAS, ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, ERR_NOT_LEADER_OR_FOLLOWER,
                          ERR_REQUEST_TIMED_OUT, LAG_MS, Recorder, SESSION_MS, Stream, check_stream, cluster_maker,
                          consume_all, dirty_reads, keeper_ensemble, read_checkpoint)


# ---- fixtures ---------------------------------------------------------------------------


@pytest.fixture
def make_cluster(request, ensemble):
    yield from cluster_maker(request, ensemble, "repl", (1, 2, 3))


def timed(label):
    """Print how long phases take (pytest -s shows it)."""
    t0 = time.monotonic()
    return lambda what="": print("[%s] %s %.1f s" % (label, what, time.monotonic() - t0))


def as_logs(triples, partitions):
    logs = {p: [] for p in range(partitions)}
    for p, off, val in triples:
        logs[p].append((off, val))
    return logs


def describe_rows(cluster, topic):
    """`kipper topics --describe` rows: {partition: {'Leader': .., 'Replicas': [..], 'Isr': [..]}}."""
    b = cluster.brokers[cluster.live()[0]]
    out = b.topics_cli("--describe", "--topic", topic)
    assert out.returncode == 0, out.stderr
    rows = {}
    for line in out.stdout.splitlines():
        m = re.search(r"Partition: (\d+)\s+Leader: (-?\d+).*Replicas: ([\d,]+)\s+Isr: ([\d,]*)", line)
        if m:
            rows[int(m.group(1))] = {"Leader": int(m.group(2)),
                                     "Replicas": [int(x) for x in m.group(3).split(",")],
                                     "Isr": [int(x) for x in m.group(4).split(",") if x]}
    return rows, out.stdout


def finish_and_check(c, s, topic, partitions, exact=False):
    """Stop the stream, wait for full ISRs, read every partition from its leader and
    check it against the delivery reports; replicas byte-identical up to the HW.
    Returns the logs."""
    assert s.stop() == 0, "%d messages without a delivery report" % s.unflushed
    c.wait_isr_full(topic, partitions, timeout=30)
    logs = c.read_all(topic, partitions)
    problems = check_stream(s, logs)
    assert not problems, "\n".join(problems[:20])
    if exact:
        assert not s.errors, s.errors[:5]
        assert sum(len(v) for v in logs.values()) == s.sent == len(s.acked)
    c.assert_replicas_identical(topic, partitions)
    return logs


# ---- 1. the basic case ------------------------------------------------------------------


def test_rf3_stream_is_read_back_exactly_once_and_replicas_are_byte_identical(make_cluster):
    """RF=3, min.insync.replicas=2: an idempotent acks=all stream is acknowledged in
    full; confluent-kafka and kcat read it back exactly once, in order; Metadata and
    `kipper topics --describe` show the preferred leaders and ISRs of 3; the three
    replicas' segment files hold the same bytes up to the HW; after a clean stop
    every replica's HW checkpoint covers the whole log."""
    t = timed("basic")
    P = 4
    c = make_cluster()
    c.create_topic("basic", P, 3, configs={"min.insync.replicas": 2})
    t("topic")
    s = Stream(c.bootstrap, "basic", P, rate=2000).start()
    s.wait_acked(4000)
    logs = finish_and_check(c, s, "basic", P, exact=True)
    t("streamed %d" % s.sent)

    md = c.metadata("basic")
    assert md is not None and len(md.partitions) == P
    rows, text = describe_rows(c, "basic")
    for x in md.partitions:
        assert x.error == 0
        assert len(x.replicas) == 3 and sorted(x.isr) == [1, 2, 3], md
        assert x.leader == x.replicas[0], "partition %d not led by its preferred replica: %s" % (x.index, md)
        assert rows[x.index] == {"Leader": x.leader, "Replicas": x.replicas, "Isr": rows[x.index]["Isr"]}, text
        assert sorted(rows[x.index]["Isr"]) == [1, 2, 3], text

    ends = {p: len(logs[p]) for p in range(P)}
    seen = consume_all(c.bootstrap, "basic", P, ends)
    assert as_logs(seen, P) == logs
    if shutil.which("kcat"):
        out = subprocess.run(["kcat", "-C", "-b", c.bootstrap, "-t", "basic", "-e", "-q", "-f", "%p %o %s\\n"],
                             capture_output=True, timeout=60)
        assert out.returncode == 0, out.stderr
        kc = [tuple(line.split(b" ")) for line in out.stdout.splitlines()]
        assert as_logs([(int(p), int(o), v) for p, o, v in kc], P) == logs
    t("consumed")

    rcs = c.stop_all()
    assert all(rc == 0 for rc in rcs.values()), rcs
    for i, b in c.brokers.items():
        hw = read_checkpoint(os.path.join(b.log_dir, "replication-offset-checkpoint"))
        for p in range(P):
            assert hw.get(("basic", p)) == ends[p], "broker %d checkpointed HW %s for basic-%d, log end %d" % (
                i, hw.get(("basic", p)), p, ends[p])
            # ...and its segment files hold every batch up to there, the same bytes as broker 1's
            assert c.replicas_differ("basic", p, hw=ends[p], replicas=[1, 2, 3]) is None
    t("checked")


def test_every_follower_keeps_fetching_every_partition_of_a_new_topic(make_cluster):
    """New topics with 24 partitions each (RF=3): followers start fetching before every
    leader has taken over, so many of their first fetches are answered
    NOT_LEADER_OR_FOLLOWER and retried after replica.fetch.backoff.ms. Every one of
    them must be retried: once the leaders' election wait (leader.election.wait.ms)
    is over, every ISR is still full, and a message produced with acks=all to every
    partition is on all three replicas. (Three topics, as the first fetches' timing
    varies from run to run.)"""
    P = 24
    c = make_cluster()
    for topic in ("wide-a", "wide-b", "wide-c"):
        c.create_topic(topic, P, 3, configs={"min.insync.replicas": 2})
        time.sleep(1.5)     # past leader.election.wait.ms, when a leader drops the replicas that never fetched
        short = [(p, st["isr"]) for p, st in c.describe(topic, P) if sorted(st["isr"]) != [1, 2, 3]]
        assert not short, "%s: partitions whose ISR lost a follower that never fetched them: %s\n%s" % (
            topic, short, "\n".join(line for line in c.logs(30000).splitlines()
                                     if topic in line and ("error" in line or "ISR" in line)))
        for p in range(P):
            r = produce_one(c, c.leader(topic, p), topic, p, b"w%d" % p)
            assert (r.error, r.base_offset) == (0, 0), (topic, p, r)
        for p in range(P):
            for i in (1, 2, 3):
                assert values_on_disk(c, i, topic, p) == [(0, b"w%d" % p)], (topic, p, i)


def test_followers_reach_leaders_advertised_by_host_name(make_cluster):
    """Brokers that listen on, and advertise, the name "localhost": each follower
    looks its leader's name up off the event loop (base/resolver.h), fetches, and
    every ISR stays full; a message produced with acks=all to each partition is
    on both replicas."""
    c = make_cluster(ids=(1, 2), placement=lambda i: Placement(host="localhost"))
    c.create_topic("named", 4, 2, configs={"min.insync.replicas": 2})
    c.wait_isr_full("named", 4, timeout=30)
    for p in range(4):
        r = produce_one(c, c.leader("named", p), "named", p, b"n%d" % p)
        assert (r.error, r.base_offset) == (0, 0), (p, r)
    for p in range(4):
        for i in (1, 2):
            assert values_on_disk(c, i, "named", p) == [(0, b"n%d" % p)], (p, i)


RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def test_consumers_fetch_from_a_follower_in_their_rack(make_cluster):
    """Fetch from follower (KIP-392), brokers in racks r1-r3 and replica.selector.class
    Kafka's rack-aware selector: Metadata names every broker's rack; the leader answers
    a consumer's Fetch v11 from a follower's rack with that follower as its preferred
    read replica and no records, at once (a MaxWaitMs of a minute is not waited out);
    the follower serves that consumer every record up to its HW, but refuses a
    consumer's Fetch older than v11 (NOT_LEADER_OR_FOLLOWER, as Kafka); a consumer in
    the leader's rack, in a rack without replicas, or without a rack reads from the
    leader."""
    racks = {1: "r1", 2: "r2", 3: "r3"}
    c = make_cluster(extra={"replica.selector.class": RACK_AWARE},
                     per_broker={i: {"broker.rack": r} for i, r in racks.items()})
    c.create_topic("racks", assignment=[[1, 2, 3]], configs={"min.insync.replicas": 3})
    leader = c.leader("racks", 0)
    follower = [i for i in (1, 2, 3) if i != leader][0]
    values = [b"rack-%d" % n for n in range(3)]
    for v in values:
        r = produce_one(c, leader, "racks", 0, v)
        assert r.error == 0, r
    with c.conn(leader) as k:
        md = k.metadata(["racks"], allow_auto_create=False)
    assert sorted((b[0], b[3]) for b in md.brokers) == sorted(racks.items())

    with c.conn(leader) as k:
        part, preferred = k.fetch_v11("racks", 0, 0, rack_id=racks[follower], max_wait_ms=60000, min_bytes=1)
        assert (part.error, preferred, part.records, part.high_watermark) == (0, follower, b"", 3), (part, preferred)
        for rack in (racks[leader], "r9", ""):
            part, preferred = k.fetch_v11("racks", 0, 0, rack_id=rack)
            assert (part.error, preferred) == (0, -1), (rack, part)
            assert [r.value for b in parse_record_batches(part.records) for r in b.records] == values, rack

    def served_by_follower():
        with c.conn(follower) as k:
            part, preferred = k.fetch_v11("racks", 0, 0, rack_id=racks[follower])
        assert (part.error, preferred) == (0, -1), part
        got = [r.value for b in parse_record_batches(part.records) for r in b.records]
        return got if part.high_watermark == 3 else None
    assert wait_until(served_by_follower, timeout=20, what="the follower's HW to reach 3") == values
    with c.conn(follower) as k:
        assert k.fetch("racks", 0, 0).error == ERR_NOT_LEADER_OR_FOLLOWER


# ---- 2, 8, 9. leaders SIGKILLed again and again under the stream ---------------------------


def kill_rounds(c, topic, P, plan, s, t):
    """Run the rounds of `plan` while the stream s goes on. Each round waits for full
    ISRs and for the stream to make progress first, then:
      ("restart-at-once", p): SIGKILL p's leader and start it again at once (the new
          process waits for its old session to expire before it registers);
      ("restart-after", p):   SIGKILL p's leader, wait until another is elected, restart it;
      ("twice", p):           SIGKILL p's leader, then the broker elected next as soon as
          the coordinator names it (it has just become leader), wait for the third to
          lead alone, restart both."""
    for n, (kind, p) in enumerate(plan):
        c.wait_isr_full(topic, P, timeout=30)
        s.wait_progress(100, timeout=30)
        st = c.state(topic, p)
        victim = st["leader"]
        c.kill(victim)
        if kind == "restart-at-once":
            c.start_broker(victim, wait=False)
            c.wait_new_leader(topic, p, st["epoch"])
            c.brokers[victim].wait_registered(timeout=30)
        elif kind == "restart-after":
            c.wait_new_leader(topic, p, st["epoch"], not_in=(victim,))
            s.wait_progress(20, timeout=30)      # the stream goes on without it
            # Metadata v5 names the dead broker's replicas offline
            wait_until(lambda: all(victim in offline and victim not in isr and leader != victim
                                   for leader, isr, offline in c.offline_replicas(topic).values()),
                       timeout=10, what="Metadata to show broker %d offline: %s" % (victim, c.offline_replicas(topic)))
            c.start_broker(victim)
        elif kind == "twice":
            st2 = c.wait_new_leader(topic, p, st["epoch"], not_in=(victim,))
            second = st2["leader"]
            c.kill(second)
            st3 = c.wait_new_leader(topic, p, st2["epoch"], not_in=(victim, second))
            # elected in the same multi that wrote the ISR without both dead brokers
            assert st3["isr"] == [st3["leader"]] and st3["isr_epoch"] == st3["epoch"], st3
            c.start_broker(victim)
            c.start_broker(second)
        else:
            raise ValueError(kind)
        t("round %d (%s of %s-%d's leader %d) done, %d acknowledged" % (n + 1, kind, topic, p, victim,
                                                                         s.acked_count()))
    s.wait_progress(100, timeout=30)


def run_kill_rounds(c, topic, P, plan, t, with_consumers=True):
    c.create_topic(topic, P, 3, configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, topic, P, rate=500).start()
    recorders = []
    if with_consumers:
        recorders = [Recorder(c.bootstrap, topic, P).start(), Recorder(c.bootstrap, topic, P, group="g-" + topic).start()]
    try:
        kill_rounds(c, topic, P, plan, s, t)
        logs = finish_and_check(c, s, topic, P)
        t("stream stopped: %d sent, %d acknowledged, %d failed" % (s.sent, len(s.acked), len(s.errors)))
        # The idempotent producer rides every fail-over: each message acknowledged,
        # none failed.
        assert not s.errors, "delivery errors: %s" % s.errors[:5]
        assert len(s.acked) == s.sent
        ends = {p: len(logs[p]) for p in range(P)}
        for r, what in zip(recorders, ("plain consumer", "group consumer")):
            # The consumers kept reading through every fail-over, to the end.
            try:
                wait_until(lambda: all(r.positions().get(p, 0) >= ends[p] for p in range(P)), timeout=30,
                           what="the %s to reach the ends %s" % (what, ends))
            except TimeoutError:
                raise AssertionError("the %s stopped at %s, the ends are %s; its errors: %s\n%s"
                                     % (what, r.positions(), ends, r.errors[-10:], c.logs()))
    finally:
        seen = [r.stop() for r in recorders]
    for r, what in zip(seen, ("plain consumer", "group consumer")):
        bad = dirty_reads(r, logs)
        assert not bad, "the %s saw records the final log does not hold there (partition, offset, " \
                        "seen, final): %s" % (what, bad[:10])
    t("checked")
    return s, logs


def test_leader_sigkill_rounds_lose_no_acknowledged_message(make_cluster):
    """Six rounds of SIGKILL of a partition's leader under an idempotent acks=all stream
    (RF=3, min.insync.replicas=2): a restart at once (before the old session expired),
    restarts after the election, and twice a broker killed right after it became
    leader. Afterwards every partition holds every acknowledged message once, in order,
    at its acknowledged offset (unacknowledged ones at most once), the replicas are
    byte-identical up to the HW, and a plain and a group consumer reading all along
    never saw a record the final log does not hold at that offset (no dirty read)."""
    t = timed("kill rounds")
    c = make_cluster()
    plan = [("restart-at-once", 0), ("twice", 1), ("restart-after", 2), ("restart-after", 3), ("twice", 0),
            ("restart-at-once", 2)]
    s, logs = run_kill_rounds(c, "rounds", 4, plan, t)
    assert len(s.acked) > 1000


# ---- 3, 4. KIP-101's two scenarios -------------------------------------------------------


def produce_one(c, broker, topic, p, value, acks=-1):
    """One record, raw Produce v8 to `broker`: the partition's answer."""
    with c.conn(broker) as k:
        return k.produce(topic, p, record_batch([Record(b"k", value)]), acks=acks)


def values_on_disk(c, broker, topic, p):
    """[(offset, value)] parsed from the replica's segment files (whatever its HW)."""
    out = []
    for _, _, raw in c.replica_batches(broker, topic, p):
        for b in parse_record_batches(raw):
            out += [(b.base_offset + r.offset_delta, r.value) for r in b.records]
    return out


def test_kip101_restart_then_lose_the_leader_keeps_committed_messages(make_cluster):
    """KIP-101 scenario 1. RF=2 on {A=1, B=2}, min.insync.replicas=1, no background
    flush (so B's HW checkpoint lags its log end): 10 messages committed with
    acks=all, then both brokers SIGKILLed. B restarts alone: it must become leader
    (an ISR member, once the old sessions are gone) with all 10 messages -- the
    original design cut its log to the checkpointed HW here and lost them. A
    restarts, follows B and ends with the same bytes."""
    t = timed("kip101-1")
    A, B = 1, 2
    c = make_cluster(ids=(A, B), extra={"log.flush.interval.ms": 3600000, "min.insync.replicas": 1})
    c.create_topic("kip1", assignment=[[A, B]], configs={"min.insync.replicas": 1})
    committed = [b"c%d" % i for i in range(10)]
    for i, v in enumerate(committed):
        r = produce_one(c, A, "kip1", 0, v)
        assert (r.error, r.base_offset) == (0, i), r
    st = c.state("kip1", 0)
    assert st["leader"] == A and sorted(st["isr"]) == [A, B], st
    c.kill(A)
    c.kill(B)
    t("both killed")
    # The scenario's premise: B has every committed message, but its HW checkpoint does not say so.
    assert values_on_disk(c, B, "kip1", 0) == list(enumerate(committed))
    cp = os.path.join(c.brokers[B].log_dir, "replication-offset-checkpoint")
    checkpointed = read_checkpoint(cp).get(("kip1", 0), 0) if os.path.exists(cp) else 0
    assert checkpointed < len(committed), "B's HW checkpoint (%d) does not lag; the scenario needs it to" % checkpointed

    c.start_broker(B)
    st2 = c.wait_new_leader("kip1", 0, st["epoch"], not_in=(A,))
    assert st2["leader"] == B and st2["isr"] == [B], st2
    t("B leads")
    assert c.read_partition("kip1", 0) == list(enumerate(committed)), c.logs()
    r = produce_one(c, B, "kip1", 0, b"c10")
    assert (r.error, r.base_offset) == (0, 10), r

    c.start_broker(A)
    c.wait_isr_full("kip1", 1)
    assert c.leader("kip1", 0) == B
    c.assert_replicas_identical("kip1", 1)
    assert c.read_partition("kip1", 0) == list(enumerate(committed + [b"c10"]))
    assert values_on_disk(c, A, "kip1", 0) == list(enumerate(committed + [b"c10"]))
    t("A converged")


def test_kip101_divergence_after_a_double_failure_converges_on_the_new_leader(make_cluster):
    """KIP-101 scenario 2. RF=2 on {A=1 leader, B=2}, min.insync.replicas=1, a long
    replica.lag.time.max.ms (B stays in the ISR while paused): m0..m4 committed with
    acks=all; B paused; m5 with acks=1 reaches A only; both SIGKILLed. B comes back
    first, leads, and takes m5' at offset 5. When A comes back it must cut its m5
    (by leader epoch, although its HW said to keep it) and fetch m5': both logs end
    byte-identical and a consumer reads m5' at offset 5."""
    t = timed("kip101-2")
    A, B = 1, 2
    c = make_cluster(ids=(A, B), extra={"replica.lag.time.max.ms": 60000, "min.insync.replicas": 1})
    c.create_topic("kip2", assignment=[[A, B]], configs={"min.insync.replicas": 1})
    for i in range(5):
        r = produce_one(c, A, "kip2", 0, b"m%d" % i)
        assert (r.error, r.base_offset) == (0, i), r
    c.pause(B)
    r = produce_one(c, A, "kip2", 0, b"m5", acks=1)
    assert (r.error, r.base_offset) == (0, 5), r
    st = c.state("kip2", 0)
    assert st["leader"] == A and sorted(st["isr"]) == [A, B], st
    c.kill(A)
    c.kill(B)
    t("both killed")
    first = [(i, b"m%d" % i) for i in range(5)]
    assert values_on_disk(c, A, "kip2", 0) == first + [(5, b"m5")]
    assert values_on_disk(c, B, "kip2", 0) == first

    c.start_broker(B)
    st2 = c.wait_new_leader("kip2", 0, st["epoch"], not_in=(A,))
    assert st2["leader"] == B, st2
    r = produce_one(c, B, "kip2", 0, b"m5-prime")
    assert (r.error, r.base_offset) == (0, 5), r
    t("B leads with m5'")

    c.start_broker(A)
    c.wait_isr_full("kip2", 1)
    assert c.leader("kip2", 0) == B
    want = first + [(5, b"m5-prime")]
    c.assert_replicas_identical("kip2", 1)
    assert values_on_disk(c, A, "kip2", 0) == want, "A kept its divergent m5:\n" + c.brokers[A].log()[-4000:]
    assert c.read_partition("kip2", 0) == want
    seen = consume_all(c.bootstrap, "kip2", 1, {0: 6})
    assert [(o, v) for _, o, v in seen] == want
    t("A converged")


def test_acks_all_waiting_when_the_isr_shrinks_below_min_insync_is_answered_after_append(make_cluster):
    """min.insync.replicas=3 on an RF=3 topic, follower 2 SIGSTOPped: an acks=all
    produce is appended and waits for broker 2; when broker 2 leaves the ISR (after
    replica.lag.time.max.ms) the HW passes the record, and the producer is told
    NOT_ENOUGH_REPLICAS_AFTER_APPEND (the record is in the log). The next acks=all
    produce is refused before the append with NOT_ENOUGH_REPLICAS."""
    c = make_cluster(extra={"zookeeper.session.timeout.ms": 12000})
    c.create_topic("after", assignment=[[1, 2, 3]], configs={"min.insync.replicas": 3})
    assert produce_one(c, 1, "after", 0, b"a").error == 0
    c.pause(2)
    t0 = time.monotonic()
    with c.conn(1, timeout=30) as k:
        r = k.produce("after", 0, record_batch([Record(b"k", b"b")]), acks=-1, timeout_ms=20000)
        took = time.monotonic() - t0
        assert r.error == ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, r
        assert LAG_MS / 1000 - 1 <= took < LAG_MS / 1000 + 5, took
        assert sorted(c.state("after", 0)["isr"]) == [1, 3]
        r = k.produce("after", 0, record_batch([Record(b"k", b"c")]), acks=-1, timeout_ms=20000)
        assert r.error == ERR_NOT_ENOUGH_REPLICAS, r
    c.resume(2)
    c.wait_isr_full("after", 1)
    assert c.read_partition("after", 0) == [(0, b"a"), (1, b"b")]
    c.assert_replicas_identical("after", 1)


# ---- 8. no dirty read -----------------------------------------------------------------------


def test_records_above_the_hw_are_never_served_and_a_lost_tail_was_never_seen(make_cluster):
    """Leader 1, followers 2 and 3 SIGSTOPped (a long replica.lag.time.max.ms keeps them
    in the ISR): 20 messages committed before, then 30 with acks=1 that only the leader
    has, and one with acks=all that times out (REQUEST_TIMED_OUT) for want of them. Consumers must not see those 30 -- raw Fetch and ListOffsets LATEST stop at
    the HW, a confluent-kafka consumer and a group member get the 20 only -- because
    they are about to disappear: the leader is SIGKILLed, the followers resume, one
    of them leads without them (but for the few a follower had already been sent) and
    takes new messages at their offsets. Everything the consumers saw is what the
    final log holds at that offset; broker 1 comes back and cuts its tail."""
    c = make_cluster(extra={"replica.lag.time.max.ms": 30000})
    c.create_topic("dirty", assignment=[[1, 2, 3]], configs={"min.insync.replicas": 2})
    for i in range(20):
        assert produce_one(c, 1, "dirty", 0, b"c%d" % i).error == 0
    recorders = [Recorder(c.bootstrap, "dirty", 1).start(), Recorder(c.bootstrap, "dirty", 1, group="g-dirty").start()]
    try:
        for r in recorders:
            wait_until(lambda: r.positions().get(0) == 20, timeout=30, what="the consumers to read the 20")
        c.pause(2)
        c.pause(3)
        for i in range(30):
            r = produce_one(c, 1, "dirty", 0, b"u%d" % i, acks=1)
            assert (r.error, r.base_offset) == (0, 20 + i), r
        # acks=all cannot complete while the ISR members do not fetch: REQUEST_TIMED_OUT
        # after the request's own timeout (the record stays, uncommitted).
        t0 = time.monotonic()
        with c.conn(1) as k:
            r = k.produce("dirty", 0, record_batch([Record(b"k", b"u30")]), acks=-1, timeout_ms=1000)
        assert r.error == ERR_REQUEST_TIMED_OUT, r
        assert 0.9 <= time.monotonic() - t0 < 5
        with c.conn(1) as k:
            f = k.fetch("dirty", 0, 20)
            assert (f.error, f.high_watermark, f.records) == (0, 20, b""), f
            assert k.list_offset("dirty", 0, -1) == (0, -1, 20)
        assert [v for _, v in values_on_disk(c, 1, "dirty", 0)][20:] == [b"u%d" % i for i in range(31)]
        time.sleep(1.0)                          # the consumers poll meanwhile
        before_kill = [list(r.seen) for r in recorders]
        st = c.state("dirty", 0)
        c.kill(1)
        c.resume(2)
        c.resume(3)
        st2 = c.wait_new_leader("dirty", 0, st["epoch"], not_in=(1,))
        # The new leader may hold a few of the 31 (answers to fetches the followers had
        # sent before they stopped), never more than the old leader had.
        r = produce_one(c, st2["leader"], "dirty", 0, b"n0")
        end = r.base_offset
        assert r.error == 0 and 20 <= end <= 51, r
        for i in range(1, 5):
            r = produce_one(c, st2["leader"], "dirty", 0, b"n%d" % i)
            assert (r.error, r.base_offset) == (0, end + i), r
        for r in recorders:
            wait_until(lambda: r.positions().get(0) == end + 5, timeout=30,
                       what="the consumers to read on at the new leader")
    finally:
        seen = [r.stop() for r in recorders]
    final = {0: c.read_partition("dirty", 0)}
    assert [v for _, v in final[0]] == ([b"c%d" % i for i in range(20)] + [b"u%d" % i for i in range(end - 20)] +
                                        [b"n%d" % i for i in range(5)])
    c.start_broker(1)
    c.wait_isr_full("dirty", 1)
    c.assert_replicas_identical("dirty", 1)     # broker 1 cut its tail of u's
    for what, before, after in zip(("plain consumer", "group consumer"), before_kill, seen):
        assert all(off < 20 for _, off, _ in before), "the %s saw past the HW: %s" % (what, before[-5:])
        bad = dirty_reads(after, final)
        assert not bad, "the %s saw records that disappeared: %s" % (what, bad[:10])


# ---- unclean leader election, per topic -------------------------------------------------------


def test_unclean_leader_election_only_where_the_topic_allows_it(make_cluster):
    """Two RF=2 topics on {1, 2} (min.insync.replicas=1), one with the topic setting
    unclean.leader.election.enable=true (the brokers' default is false). Broker 2 is
    paused until it leaves both ISRs, 5 more messages are committed on broker 1
    alone, then broker 1 is SIGKILLed and broker 2 resumes. The default topic stays
    without a leader (its only ISR member is gone); the other one is led by broker 2
    without those 5 messages, as that setting accepts. When broker 1 returns it
    leads the first topic again with all 10 messages, and follows in the other, cutting
    its 5 so that both replicas hold the same bytes."""
    c = make_cluster(ids=(1, 2), extra={"min.insync.replicas": 1}, per_broker={2: {"zookeeper.session.timeout.ms": 12000}})
    c.create_topic("clean", assignment=[[1, 2]])
    c.create_topic("unclean", assignment=[[1, 2]], configs={"unclean.leader.election.enable": "true"})
    for topic in ("clean", "unclean"):
        for i in range(5):
            assert produce_one(c, 1, topic, 0, b"c%d" % i).error == 0
    c.pause(2)
    wait_until(lambda: all(c.state(tp, 0)["isr"] == [1] for tp in ("clean", "unclean")), timeout=LAG_MS / 1000 + 5,
               what="broker 2 to leave the ISRs")
    for topic in ("clean", "unclean"):
        for i in range(5):
            r = produce_one(c, 1, topic, 0, b"u%d" % i)
            assert (r.error, r.base_offset) == (0, 5 + i), r
    before = {tp: c.state(tp, 0) for tp in ("clean", "unclean")}
    c.kill(1)
    c.resume(2)
    st = c.wait_new_leader("unclean", 0, before["unclean"]["epoch"], not_in=(1,))
    assert st["leader"] == 2 and st["isr"] == [2], st
    assert c.read_partition("unclean", 0) == [(i, b"c%d" % i) for i in range(5)]
    r = produce_one(c, 2, "unclean", 0, b"n0")
    assert (r.error, r.base_offset) == (0, 5), r
    # broker 1's session is gone (the other topic was taken over): the default topic
    # would have been by now, too, if it were going to be
    time.sleep(1.0)
    assert c.state("clean", 0)["leader"] is None, c.state("clean", 0)
    md = c.metadata("clean")
    assert md.partitions[0].leader == -1, md

    c.start_broker(1)
    c.wait_isr_full("clean", 1)
    c.wait_isr_full("unclean", 1)
    assert c.leader("clean", 0) == 1 and c.leader("unclean", 0) == 2
    assert c.read_partition("clean", 0) == [(i, v) for i, v in enumerate([b"c%d" % i for i in range(5)] +
                                                                           [b"u%d" % i for i in range(5)])]
    assert c.read_partition("unclean", 0) == [(i, b"c%d" % i) for i in range(5)] + [(5, b"n0")]
    c.assert_replicas_identical("clean", 1)
    c.assert_replicas_identical("unclean", 1)


# ---- 5. a lagging follower leaves the ISR and rejoins ------------------------------------


def test_paused_followers_leave_the_isr_and_acks_all_needs_min_insync(make_cluster):
    """RF=3, min.insync.replicas=2, leader 1, an acks=all stream on partition 0.
    Follower 2 SIGSTOPped: after replica.lag.time.max.ms (not much before, not much
    after) the ISR is {1, 3} in the coordinator and in Metadata, and acks=all goes
    on. Follower 3 SIGSTOPped too: the ISR is {1}; acks=all is refused with
    NOT_ENOUGH_REPLICAS (raw Produce, and confluent-kafka without retries; the
    topic's min.insync.replicas=2 overrides the brokers' 1) while acks=1 still works. SIGCONT both: they catch up and the ISR is 3 again; the
    stream, which retried meanwhile, has every message acknowledged and in the log.
    (Sessions of 12 s here, so that only the lag rule takes the followers out.)"""
    t = timed("lagging")
    # The brokers' default min.insync.replicas is 1: the topic's 2 must be what counts.
    c = make_cluster(extra={"zookeeper.session.timeout.ms": 12000, "min.insync.replicas": 1})
    # partition 0 for the stream, partition 1 for the raw probes; both led by 1
    c.create_topic("lag", assignment=[[1, 2, 3], [1, 2, 3]], configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, "lag", 1, rate=300).start()
    s.wait_acked(200)

    c.pause(2)
    paused_at = time.monotonic()
    wait_until(lambda: sorted(c.state("lag", 0)["isr"]) == [1, 3], timeout=LAG_MS / 1000 + 5, interval=0.05,
               what="broker 2 to leave the ISR")
    left_after = time.monotonic() - paused_at
    t("2 left the ISR after %.2f s" % left_after)
    assert left_after >= LAG_MS / 1000 - 1.0, "broker 2 left the ISR after %.2f s, before the lag time" % left_after
    wait_until(lambda: sorted(c.metadata("lag").partitions[0].isr) == [1, 3], timeout=5,
               what="Metadata to show the ISR {1, 3}")
    # The idle partition 1 loses broker 2 too, and for good: a paused follower does
    # not come back while it fetches nothing.
    wait_until(lambda: sorted(c.state("lag", 1)["isr"]) == [1, 3], timeout=5, interval=0.05,
               what="broker 2 to leave the ISR of the idle partition")
    versions = set()
    for _ in range(20):
        st = c.state("lag", 1)
        versions.add((st["isr_version"], tuple(sorted(st["isr"]))))
        time.sleep(0.05)
    final = c.state("lag", 1)
    assert len(versions) == 1 and final["isr_version"] == min(versions)[0], (
        "the ISR of idle partition lag-1 keeps changing while broker 2 is paused: %d ISR writes in 1 s, "
        "states seen %s" % (final["isr_version"] - min(versions)[0], sorted(versions)[:6]))
    s.wait_progress(200, timeout=20)            # acks=all goes on with 2 in sync
    assert not s.errors, s.errors[:3]

    c.pause(3)
    paused_at = time.monotonic()
    wait_until(lambda: c.state("lag", 0)["isr"] == [1] and c.state("lag", 1)["isr"] == [1],
               timeout=LAG_MS / 1000 + 5, interval=0.05, what="broker 3 to leave the ISRs")
    t("3 left the ISR after %.2f s" % (time.monotonic() - paused_at))
    r = produce_one(c, 1, "lag", 1, b"refused")
    assert r.error == ERR_NOT_ENOUGH_REPLICAS, r
    r = produce_one(c, 1, "lag", 1, b"acks-1", acks=1)
    assert r.error == 0, r
    strict = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "enable.idempotence": False,
                       "message.send.max.retries": 0, "message.timeout.ms": 10000})
    reports = []
    strict.produce("lag", value=b"strict", partition=1, on_delivery=lambda e, m: reports.append(e))
    assert strict.flush(20) == 0
    assert len(reports) == 1 and reports[0] is not None and reports[0].code() == KafkaError.NOT_ENOUGH_REPLICAS, \
        reports
    del strict
    stalled = s.acked_count()
    time.sleep(1.0)                             # the stream keeps trying meanwhile
    assert s.acked_count() <= stalled + 5, "acks=all kept being acknowledged with an ISR of 1"

    c.resume(2)
    c.resume(3)
    c.wait_isr_full("lag", 2, timeout=30)
    t("ISR full again")
    s.wait_progress(200, timeout=30)
    assert s.stop() == 0
    assert not s.errors, s.errors[:3]
    logs = c.read_all("lag", 1)
    problems = check_stream(s, logs)
    assert not problems, "\n".join(problems[:20])
    assert len(logs[0]) == s.sent == len(s.acked)
    c.assert_replicas_identical("lag", 2)
    assert [v for _, v in c.read_partition("lag", 1)] == [b"acks-1"]


# ---- 6. a leader paused past its coordinator session -------------------------------------


def test_leader_paused_past_its_session_is_deposed_and_truncated(make_cluster):
    """Broker 1 leads every partition of an RF=3 topic (min.insync.replicas=2) under an
    acks=all stream and is SIGSTOPped for longer than its 4 s session: brokers 2 and
    3 elect new leaders, which take writes meanwhile (a probe partition). The
    stream's requests in flight to broker 1 wait in its socket; when it resumes it
    reads them while it still believes it leads, and must not acknowledge any. It
    becomes a follower, its log is cut to the new leader's (byte-identical up to the
    HW), and no (partition, offset) was acknowledged with two values: each
    acknowledged one is the value in the final log."""
    t = timed("paused leader")
    c = make_cluster()
    P = 2    # the stream's partitions; partition 2 is for probes
    c.create_topic("deposed", assignment=[[1, 2, 3], [1, 3, 2], [1, 2, 3]], configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, "deposed", P, rate=500).start()
    s.wait_acked(500)
    before = [c.state("deposed", p) for p in range(P + 1)]
    assert all(st["leader"] == 1 for st in before), before
    c.pause(1)
    paused_at = time.monotonic()
    for p in range(P + 1):
        st = c.wait_new_leader("deposed", p, before[p]["epoch"], not_in=(1,), timeout=SESSION_MS / 1000 + 15)
        assert 1 not in st["isr"], st
    moved = time.monotonic() - paused_at
    t("new leaders after %.1f s" % moved)
    # The coordinator expires a session between 2/3 of its timeout and the timeout after
    # its last ping; not before.
    assert moved >= SESSION_MS / 1000 * 2 / 3 - 0.3, "leaders moved %.1f s after broker 1 stopped" % moved
    leader2 = c.leader("deposed", 2)
    wait_until(lambda: produce_one(c, leader2, "deposed", 2, b"probe").error == 0, timeout=10,
               what="an acks=all write at the new leader while broker 1 is paused")
    time.sleep(1.0)                              # the stream's requests pile up at broker 1 meanwhile
    c.resume(1)
    t("resumed")
    s.wait_progress(300, timeout=60)             # the stream goes on at the new leaders
    c.wait_isr_full("deposed", P + 1, timeout=30)
    assert all(c.leader("deposed", p) != 1 for p in range(P + 1))
    finish_and_check(c, s, "deposed", P)
    assert not s.errors, s.errors[:5]
    c.assert_replicas_identical("deposed", P + 1)
    t("checked: %d acknowledged" % len(s.acked))


# ---- 7. rolling restart -------------------------------------------------------------------


def test_rolling_restart_with_sigterm_fails_no_delivery(make_cluster):
    """Each broker in turn is stopped with SIGTERM (controlled shutdown: it hands its
    partitions over and leaves the ISRs first), must exit 0, is started again, and
    the next one goes only once every ISR is full again -- all under an idempotent
    acks=all stream (RF=3, min.insync.replicas=2) with a delivery timeout far above
    the whole restart. Not one delivery fails, and every message is in the log
    exactly once, in order."""
    t = timed("rolling")
    c = make_cluster()
    P = 6
    c.create_topic("rolling", P, 3, configs={"min.insync.replicas": 2})
    s = Stream(c.bootstrap, "rolling", P, rate=500).start()
    s.wait_acked(300)
    for i in (1, 2, 3):
        c.wait_isr_full("rolling", P, timeout=30)
        s.wait_progress(200, timeout=30)
        led = [p for p in range(P) if c.leader("rolling", p) == i]
        assert led, "broker %d leads nothing" % i
        stopped_at = time.monotonic()
        rc = c.stop(i)
        took = time.monotonic() - stopped_at
        assert rc == 0, "broker %d exited with %r:\n%s" % (i, rc, c.brokers[i].log()[-5000:])
        t("broker %d stopped in %.2f s" % (i, took))
        assert took < 5, "controlled shutdown of broker %d took %.1f s" % (i, took)
        for p in led:
            st = c.state("rolling", p)
            assert st["leader"] not in (None, i), (p, st)
        s.wait_progress(100, timeout=30)         # the stream goes on without it
        c.start_broker(i)
    c.wait_isr_full("rolling", P, timeout=30)
    s.wait_progress(200, timeout=30)
    finish_and_check(c, s, "rolling", P, exact=True)
    assert not s.errors, "failed deliveries during the rolling restart: %s" % s.errors[:5]
    t("checked: %d acknowledged" % len(s.acked))


# ---- 10. controlled shutdown --------------------------------------------------------------


def test_controlled_shutdown_hands_over_and_leaves_the_isrs_before_exiting(make_cluster):
    """SIGTERM of broker 1 (controlled.shutdown.enable, the default), which leads
    partition 0 and follows partitions 1 (led by 2) and 2 (led by 3). Broker 3 is
    paused first, so broker 1 cannot leave partition 2's ISR and must wait: while it
    waits (alive), partition 0 already has a new leader, broker 1 is in neither
    partition 0's nor partition 1's ISR, and it is no longer registered. When broker
    3 resumes and drops it from partition 2's ISR, broker 1 exits 0 at once (well
    before controlled.shutdown.timeout.ms)."""
    c = make_cluster(per_broker={1: {"controlled.shutdown.timeout.ms": 20000}})
    c.create_topic("handover", assignment=[[1, 2, 3], [2, 1, 3], [3, 1, 2]], configs={"min.insync.replicas": 2})
    before = c.state("handover", 0)
    c.pause(3)
    b1 = c.brokers[1]
    b1.proc.send_signal(15)
    t0 = time.monotonic()

    def handed_over():
        st0, st1, st2 = (c.state("handover", p) for p in range(3))
        return (st0["leader"] not in (None, 1) and st0["epoch"] > before["epoch"] and 1 not in st0["isr"]
                and 1 not in st1["isr"] and 1 in st2["isr"] and 1 not in c.registered())
    wait_until(handed_over, timeout=10, interval=0.05,
               what="broker 1 to hand partition 0 over and leave partition 1's ISR: %s" % c.describe("handover", 3))
    assert b1.alive(), "broker 1 exited before leaving partition 2's ISR (its leader is paused):\n" + b1.log()[-3000:]
    time.sleep(0.5)
    assert b1.alive(), "broker 1 exited while still in partition 2's ISR:\n" + b1.log()[-3000:]
    c.resume(3)
    rc = b1.wait_exit(timeout=15)
    took = time.monotonic() - t0
    assert rc == 0
    assert 1 not in c.state("handover", 2)["isr"]
    assert took < 10, "broker 1 took %.1f s to stop after broker 3 resumed" % took
    assert all(c.state("handover", p)["leader"] not in (None, 1) for p in range(3))


def test_controlled_shutdown_hands_over_hundreds_of_partitions_and_a_refused_batch_one_by_one(make_cluster):
    """Broker 1 leads 250 partitions, handed over a hundred to a multi, and follows
    one led by broker 3, which is paused so that broker 1 stays alive until it may
    leave that ISR. Broker 1 is paused too while partition 7's ISR node is rewritten
    behind its back (the same document at a newer version), and gets SIGTERM while
    paused: the multi carrying partition 7 is refused whole (its fenced ISR write
    fails), and its partitions are handed over one by one. Every partition but 7 has
    a new leader, elected by broker 2 (its candidates stand together too), while
    broker 1 is still alive; partition 7 moves at the latest when broker 1's session
    goes at its exit."""
    N = 250
    c = make_cluster(per_broker={1: {"controlled.shutdown.timeout.ms": 30000}})
    c.create_topic("many", assignment=[[1, 2, 3]] * N + [[3, 1, 2]], configs={"min.insync.replicas": 2})
    c.wait_isr_full("many", N + 1)
    stale = "/brokers/topics/many/7/ISR"
    c.pause(3)
    c.pause(1)
    data, _ = c.zk.get(stale)
    c.zk.set(stale, data)
    b1 = c.brokers[1]
    b1.proc.send_signal(15)
    c.resume(1)

    def not_moved():
        """The partitions but 7 not yet led by broker 2 at epoch 1 without broker 1
        in their ISR: every node read at once (broker 3's pause must stay well
        within its session timeout)."""
        zk, base = c.zk, "/brokers/topics/many/%d/"
        parts = [p for p in range(N) if p != 7]
        leaders = [zk.get_async(base % p + "leader") for p in parts]
        isrs = [zk.get_async(base % p + "ISR") for p in parts]
        left = []
        for p, ld, isr in zip(parts, leaders, isrs):
            try:
                ld = json.loads(ld.get(timeout=10)[0])
            except NoNodeError:
                left.append(p)
                continue
            if (ld["leader"], ld["leader_epoch"]) != (2, 1) or 1 in json.loads(isr.get(timeout=10)[0])["isr"]:
                left.append(p)
        return left

    try:
        wait_until(lambda: not not_moved(), timeout=20, interval=0.05, what="every partition but 7 handed over")
    except TimeoutError:
        raise AssertionError("not handed over to broker 2: %s\n%s" % (not_moved(), c.logs()))
    assert b1.alive(), "broker 1 exited while in partition %d's ISR:\n%s" % (N, b1.log()[-3000:])
    assert re.search(r"handing over 100 partitions from many-\d+ on in one multi failed \(bad version\)", b1.log()), \
        b1.log()[-3000:]
    c.resume(3)
    assert b1.wait_exit(timeout=30) == 0
    c.wait_new_leader("many", 7, 0, not_in=(1,), timeout=SESSION_MS / 1000 + 10)


def test_an_election_refused_in_a_batch_is_sent_alone_and_stood_for_again_later(make_cluster):
    """Broker 1 leads 150 partitions and is stopped (SIGTERM); broker 2 stands for
    them all, a hundred to a multi. Partition 7's znode lets nobody create a child
    (an ACL without CREATE), so the multi carrying its election is refused whole:
    its elections are sent again one by one, every other partition is led by broker
    2, and partition 7's election fails alone, with a warning. Once the ACL allows
    it again, partition 7 is stood for again (by the ISR timer, not in a loop) and
    gets its leader."""
    from kazoo.security import make_acl
    N = 150
    c = make_cluster()
    c.create_topic("acl", assignment=[[1, 2, 3]] * N, configs={"min.insync.replicas": 2})
    c.wait_isr_full("acl", N)
    node = "/brokers/topics/acl/7"
    open_acl = c.zk.get_acls(node)[0]
    c.zk.set_acls(node, [make_acl("world", "anyone", read=True, write=True, delete=True, admin=True)])
    assert c.stop(1) == 0
    wait_until(lambda: all(c.leader("acl", p) == 2 for p in range(N) if p != 7), timeout=20, interval=0.1,
               what="every partition but 7 led by broker 2")
    log = c.brokers[2].log()
    # Partition 7 goes in a multi with others (they are planned in the same pass
    # of broker 2's loop): without the one-by-one retry they would wait with it.
    assert re.search(r"electing \d+ partitions from acl-\d+ on in one multi failed", log), log[-3000:]
    assert "leader election for acl-7 failed: not authenticated" in log, log[-3000:]
    assert c.leader("acl", 7) is None
    c.zk.set_acls(node, open_acl)
    st = c.wait_new_leader("acl", 7, 0, not_in=(1,), timeout=20)
    assert st["leader"] in (2, 3), st
    # Stood for again at the ISR timer's pace while refused, not in a loop.
    tries = len(re.findall(r"leader election for acl-7 failed", c.brokers[2].log()))
    assert tries < 40, "partition 7 was stood for %d times" % tries


def test_without_controlled_shutdown_the_broker_exits_at_once_and_leadership_moves_with_its_session(make_cluster):
    """controlled.shutdown.enable=false on broker 1: SIGTERM makes it exit at once,
    without handing partition 0 over or waiting to leave the ISR of partition 2,
    whose leader (broker 3) is paused. Its leader node goes with its coordinator
    session, which a clean stop closes: broker 2 takes partition 0 over within a
    session timeout."""
    c = make_cluster(per_broker={1: {"controlled.shutdown.enable": "false"}})
    c.create_topic("abrupt", assignment=[[1, 2, 3], [2, 1, 3], [3, 1, 2]], configs={"min.insync.replicas": 2})
    before = c.state("abrupt", 0)
    c.pause(3)
    t0 = time.monotonic()
    rc = c.stop(1)
    took = time.monotonic() - t0
    assert rc == 0
    assert took < 3, "broker 1 took %.1f s to stop" % took
    # A clean stop closes the coordinator session (only a crash leaves it to expire):
    # broker 2 takes partition 0 over well within a session timeout.
    st = c.wait_new_leader("abrupt", 0, before["epoch"], not_in=(1,), timeout=SESSION_MS / 1000 + 10)
    moved = time.monotonic() - t0
    assert st["leader"] == 2 and 1 not in st["isr"], st
    assert moved < SESSION_MS / 1000, "partition 0 moved %.1f s after broker 1 was stopped" % moved
    c.resume(3)
    c.start_broker(1)
    c.wait_isr_full("abrupt", 3)


# ---- 9. the same with Apache ZooKeeper as the coordinator ----------------------------------


def test_leader_sigkill_rounds_with_apache_zookeeper(make_cluster):
    """Three of the SIGKILL rounds above (a restart at once, a broker killed right after
    it became leader, a restart after the election) with a 3-member Apache ZooKeeper
    3.8 ensemble as the coordinator, with the same checks: every acknowledged message
    once, in order, at its offset; replicas byte-identical; no dirty read."""
    import apache_zk
    if not apache_zk.available():
        pytest.skip("Apache ZooKeeper not installed (need %s and %s)" % (apache_zk.ZK_JAR, apache_zk.JAVA))
    t = timed("zookeeper")
    ens = keeper_ensemble("zookeeper")
    c = None
    try:
        t("ensemble up")
        c = make_cluster(ens=ens)
        plan = [("restart-at-once", 0), ("twice", 1), ("restart-after", 2)]
        run_kill_rounds(c, "zkrounds", 3, plan, t)
        errors = c.close()
        assert not errors, "\n".join(errors)
    finally:
        if c is not None:
            c.close(keep=True)     # the brokers go before their coordinator
        ens.close()
        ens.cleanup()
