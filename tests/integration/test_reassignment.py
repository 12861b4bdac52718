"""Partition moves (reassignment, docs/replication.md): a move written to
/brokers/partitions_reassigned, by `kipper reassign` or by hand, is carried out
by the partition's leader under a running acks=all producer and a consumer,
with nothing acknowledged lost and the old replicas' logs deleted; plans are
generated (rack-aware), verified, cancelled; a broker is drained; bad plans are
refused before anything is written; --throttle sets the move throttle on the
brokers concerned, --verify shows a move's bytes left and rate and removes the
throttle when the moves are done."""
import json
import os
import re
import subprocess
import tempfile
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness import KIPPER, wait_until
from kafka_wire import Record, record_batch
from repl_cluster import Recorder, Stream, check_stream, cluster_maker, dirty_reads


@pytest.fixture
def make_cluster(request, ensemble):
    yield from cluster_maker(request, ensemble, "move", (1, 2, 3, 4))


def reassign(c, *args, plan=None):
    """`kipper reassign --zookeeper <cluster> args` (with plan written to a file
    given as --reassignment-json-file); the CompletedProcess."""
    extra = []
    if plan is not None:
        fd, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            f.write(plan if isinstance(plan, str) else json.dumps(plan))
        extra = ["--reassignment-json-file", path]
    try:
        return subprocess.run([KIPPER, "reassign", "--zookeeper", c.hosts + c.chroot] + list(args) + extra,
                              capture_output=True, text=True, timeout=60)
    finally:
        if extra:
            os.unlink(extra[1])


def plan_of(moves):
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves]}


def wait_moved(c, topic, p, replicas, timeout=40):
    """Until the move is done: no move node, the replicas and the ISR are the target."""
    def done():
        if c.zk.exists("/brokers/partitions_reassigned/%s/%d" % (topic, p)):
            return False
        st = c.state(topic, p)
        return st["replicas"] == replicas and sorted(st["isr"]) == sorted(replicas) and st["leader"] in replicas
    wait_until(done, timeout=timeout, what="%s-%d to move to %s\n%s" % (topic, p, replicas, c.logs(3000)))


def wait_folders(c, topic, p, holders, timeout=20):
    """Until exactly the brokers in holders keep a folder for the partition."""
    name = "%s-%d" % (topic, p)

    def have():
        return sorted(i for i, b in c.brokers.items() if os.path.isdir(os.path.join(b.log_dir, name)))
    wait_until(lambda: have() == sorted(holders), timeout=timeout,
               what="%s only on brokers %s (now on %s)" % (name, holders, have()))


def isr_writes_outside_the_move(c, topic, p):
    """ISR writes a leader made after completing a move that name a replica
    outside that move's target (the removed replica taken back, say): each
    broker's log, in order, from each "moved to its new replicas" line."""
    name = "%s-%d" % (topic, p)
    moving = re.compile(re.escape(name) + r" is to move to replicas \[([0-9,]*)\]")
    written = re.compile(r"ISR of " + re.escape(name) + r" is now \[([0-9,]*)\]")
    bad = []
    for i, b in c.brokers.items():
        target, moved = None, False
        for line in b.log().splitlines():
            m = moving.search(line)
            if m:
                target, moved = {int(x) for x in m.group(1).split(",") if x}, False
            elif name + " moved to its new replicas" in line:
                moved = True
            elif moved and target is not None:
                w = written.search(line)
                if w and not {int(x) for x in w.group(1).split(",") if x} <= target:
                    bad.append((i, line))
    return bad


def test_moves_under_a_stream_lose_nothing(make_cluster):
    """{1,2,3} -> {2,3,4} -> {4} -> {4,1,2} -> {1,2,3} (the leader not in the
    target at that step) -> the leader, one follower and 4 (a follower removed
    under a leader that stays, which must not take it back into the ISR), each while an idempotent acks=all stream and a
    group consumer run: every acknowledged message is read back once, in order,
    at its offset; nothing a consumer saw disappears; the replicas left behind
    are deleted."""
    c = make_cluster()
    c.create_topic("m", assignment=[[1, 2, 3], [2, 3, 1]], configs={"min.insync.replicas": 1})
    s = Stream(c.bootstrap, "m", 2).start()
    rec = Recorder(c.bootstrap, "m", 2, group="movers").start()
    s.wait_acked(200)
    for target in ([2, 3, 4], [4], [4, 1, 2], [1, 2, 3], "keep the leader, swap a follower for 4"):
        if isinstance(target, str):
            st = c.state("m", 0)
            target = [st["leader"]] + [r for r in st["replicas"] if r != st["leader"]][:1] + [4]
        out = reassign(c, "--execute", plan=plan_of([("m", 0, target)]))
        assert out.returncode == 0, out.stderr
        assert "Successfully started partition reassignments for m-0" in out.stdout
        assert '"replicas"' in out.stdout      # the current assignment, for a rollback
        wait_moved(c, "m", 0, target)
        wait_folders(c, "m", 0, target)
        s.wait_progress(100)
        verified = reassign(c, "--verify", plan=plan_of([("m", 0, target)]))
        assert verified.returncode == 0 and "Reassignment of partition m-0 is completed." in verified.stdout
    s.stop()
    seen = rec.stop()
    logs = c.read_all("m", 2)
    assert not check_stream(s, logs)
    assert not dirty_reads(seen, logs)
    assert not s.errors, s.errors[:10]
    c.assert_replicas_identical("m", 2)
    assert not isr_writes_outside_the_move(c, "m", 0)


def test_a_move_survives_the_new_broker_and_the_leader_dying(make_cluster):
    """Kill the broker being added in the middle of the move and restart it: the
    move completes. Kill the partition's leader in the middle of another: it
    completes under the new leader."""
    c = make_cluster(extra={"replica.fetch.max.bytes": 4096, "replica.fetch.response.max.bytes": 4096})
    c.create_topic("k", assignment=[[1, 2, 3]], configs={"min.insync.replicas": 1})
    s = Stream(c.bootstrap, "k", 1, rate=2000).start()
    s.wait_acked(3000)          # enough that catching up 4 KiB at a time takes a while
    c.pause(4)                  # the new replica cannot catch up while paused
    assert reassign(c, "--execute", plan=plan_of([("k", 0, [2, 3, 4])])).returncode == 0
    c.kill(4)
    c.start_broker(4)
    wait_moved(c, "k", 0, [2, 3, 4])
    # Now to the other three brokers, killing the leader (not in the target)
    # before the added replica caught up: the new leader carries the move out.
    leader = c.leader("k", 0)
    target = [i for i in (1, 2, 3, 4) if i != leader]
    c.pause(1)
    assert reassign(c, "--execute", plan=plan_of([("k", 0, target)])).returncode == 0
    c.kill(leader)
    c.resume(1)
    wait_moved(c, "k", 0, target)
    c.start_broker(leader)
    wait_folders(c, "k", 0, target)
    s.stop()
    assert not check_stream(s, c.read_all("k", 1))


def test_cancel_restores_the_replicas(make_cluster):
    """A move cancelled before it completes: the partition keeps its replicas, the
    replica added for it is deleted, and the throttle set for it goes with it
    (kept with --preserve-throttles)."""
    c = make_cluster()
    c.create_topic("c", assignment=[[1, 2, 3]])
    c.pause(4)                  # the added replica never catches up
    plan = plan_of([("c", 0, [1, 2, 4])])
    assert reassign(c, "--execute", "--throttle", "1000000", plan=plan).returncode == 0
    assert broker_configs(c, 1) == {k: "1000000" for k in RATE_KEYS}
    wait_until(lambda: c.state("c", 0)["replicas"] == [1, 2, 3] and
               c.zk.exists("/brokers/partitions_reassigned/c/0"), timeout=10, what="the move to be in progress")
    st = reassign(c, "--verify", plan=plan)
    assert st.returncode == 1 and "is still in progress" in st.stdout
    # The added replica's broker does not answer (paused; or no longer
    # registered, should its session have expired meanwhile): said, and
    # --verify goes on.
    assert "Reassignment of partition c-0 is still in progress: replica 4 cannot be reached" in st.stdout, st.stdout
    kept = reassign(c, "--cancel", "--preserve-throttles", plan=plan)
    assert kept.returncode == 0 and "Throttle was removed." not in kept.stdout
    assert broker_configs(c, 1) == {k: "1000000" for k in RATE_KEYS}
    out = reassign(c, "--cancel", plan=plan)
    assert out.returncode == 0 and "Successfully cancelled partition reassignments for: c-0" in out.stdout
    assert "Throttle was removed." in out.stdout and broker_configs(c, 1) == {}
    c.resume(4)
    wait_folders(c, "c", 0, [1, 2, 3])
    assert c.state("c", 0)["replicas"] == [1, 2, 3]
    st = reassign(c, "--verify", plan=plan)
    assert st.returncode == 1 and "not done" in st.stdout


def test_add_a_broker_with_a_generated_plan_then_drain_one(make_cluster):
    """A fifth broker joins: --generate spreads the topic over 1..5, --execute and
    --verify carry it out (the new broker gets its share of replicas and leaders);
    then --drain 1 moves everything off broker 1, which stops with nothing lost
    and nothing under-replicated."""
    c = make_cluster(ids=(1, 2, 3, 4, 5))
    c.stop(5)                   # "a broker that was not there yet"
    c.create_topic("g", partitions=10, rf=3)
    c.start_broker(5)
    s = Stream(c.bootstrap, "g", 10).start()
    s.wait_acked(300)
    fd, topics = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"version": 1, "topics": [{"topic": "g"}]}, f)
    gen = reassign(c, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3,4,5")
    os.unlink(topics)
    assert gen.returncode == 0, gen.stderr
    proposed = json.loads(gen.stdout.split("Proposed partition reassignment configuration")[1].strip())
    placed = [p["replicas"] for p in proposed["partitions"]]
    assert sum(r.count(5) for r in placed) == 6 and sum(r[0] == 5 for r in placed) == 2   # its share, 30 of 150%
    assert reassign(c, "--execute", plan=proposed).returncode == 0
    wait_until(lambda: reassign(c, "--verify", plan=proposed).returncode == 0, timeout=60, what="the plan to complete")
    drained = reassign(c, "--drain", "1", "--execute", "--throttle", "50000000")   # 50 MB/s: holds nothing back here
    assert drained.returncode == 0, drained.stderr
    assert "The inter-broker throttle limit was set to 50000000 B/s" in drained.stdout
    assert broker_configs(c, 1) == {k: "50000000" for k in RATE_KEYS}   # it holds replicas that move
    # The plan it started is printed first, to be kept for --verify.
    started = json.loads(drained.stdout.split("Proposed partition reassignment configuration")[1]
                         .split("Current partition replica assignment")[0].strip())
    assert started["partitions"] and all(1 not in p["replicas"] for p in started["partitions"])
    wait_until(lambda: reassign(c, "--verify", plan=started).returncode == 0, timeout=60, what="the drain to complete")
    for p in range(10):
        assert 1 not in c.state("g", p)["replicas"]
        assert not c.zk.exists("/brokers/partitions_reassigned/g/%d" % p)
    assert broker_configs(c, 1) == {}        # the last --verify removed the throttle
    assert c.stop(1) == 0
    s.wait_progress(100)
    s.stop()
    under = c.brokers[2].topics_cli("--describe", "--under-replicated-partitions")
    assert under.returncode == 0 and under.stdout.strip() == "", under.stdout
    assert not check_stream(s, c.read_all("g", 10))
    assert not s.errors, s.errors[:10]


def test_racks_never_share_a_partition(make_cluster):
    """With broker.rack on three racks, topics created by `kipper topics --create`,
    by CreateTopics (an admin client) and by auto-creation (a producer's first
    record), and generated plans, put no two replicas of a partition on one rack."""
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    c = make_cluster(ids=tuple(racks),
                     extra={"auto.create.topics.enable": "true", "num.partitions": 6, "default.replication.factor": 3},
                     per_broker={i: {"broker.rack": r} for i, r in racks.items()})
    c.create_topic("r", partitions=12, rf=3)
    admin = AdminClient({"bootstrap.servers": c.bootstrap})   # kept: its futures fail once it is gone
    admin.create_topics([NewTopic("r-api", 12, 3)])["r-api"].result(60)
    producer, delivered = Producer({"bootstrap.servers": c.bootstrap}), []
    producer.produce("r-auto", b"first", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(60) == 0 and delivered == [None], delivered
    for topic, partitions in (("r", 12), ("r-api", 12), ("r-auto", 6)):
        for p in range(partitions):
            reps = wait_until(lambda: c.state(topic, p)["replicas"], timeout=30,
                              what="%s-%d's replicas node" % (topic, p))
            assert len({racks[i] for i in reps}) == 3, (topic, p, reps)
    fd, topics = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"version": 1, "topics": [{"topic": "r"}]}, f)
    gen = reassign(c, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3,4,5,6")
    os.unlink(topics)
    assert gen.returncode == 0, gen.stderr
    proposed = json.loads(gen.stdout.split("Proposed partition reassignment configuration")[1].strip())
    for entry in proposed["partitions"]:
        assert len({racks[i] for i in entry["replicas"]}) == 3, entry


@pytest.mark.parametrize("plan,message", [
    (plan_of([("nope", 0, [1, 2])]), "topic nope does not exist"),
    (plan_of([("bad", 7, [1, 2])]), "topic bad has no partition 7"),
    (plan_of([("bad", 0, [1, 9])]), "broker 9 is not registered"),
    (plan_of([("bad", 0, [1, 1])]), "broker 1 is listed twice"),
    (plan_of([("bad", 0, [])]), "must list 1 to"),
    (plan_of([("bad", 0, [1]), ("bad", 0, [2])]), "bad-0 is named twice"),
    ('{"version":1,"partitions":[{"topic":"bad",', "not valid JSON"),
])
def test_bad_plans_are_refused_and_change_nothing(make_cluster, plan, message):
    c = make_cluster(ids=(1, 2, 3))
    c.create_topic("bad", assignment=[[1, 2, 3]])
    out = reassign(c, "--execute", plan=plan)
    assert out.returncode != 0 and message in out.stderr, out.stderr
    assert not c.zk.exists("/brokers/partitions_reassigned/bad")
    assert c.state("bad", 0)["replicas"] == [1, 2, 3]


def folder_bytes(c, i, topic, p):
    d = os.path.join(c.brokers[i].log_dir, "%s-%d" % (topic, p))
    try:
        return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".log"))
    except OSError:
        return 0


def test_the_throttle_holds_a_moves_catch_up_traffic(make_cluster):
    """With leader.replication.throttled.rate and follower.replication.throttled.rate
    at 1 MB/s, a replica a move adds never holds more than the rate allows for
    the time it has been copying (plus one fetch), while an in-sync follower of
    another partition keeps up at full speed; the move still completes."""
    rate = 1 << 20
    c = make_cluster(ids=(1, 2), extra={"leader.replication.throttled.rate": rate,
                                        "follower.replication.throttled.rate": rate})
    c.create_topic("big", assignment=[[1]])
    c.create_topic("live", assignment=[[1, 2]], configs={"min.insync.replicas": 2})
    value = b"x" * 10000
    with c.conn(1) as conn:
        for _ in range(5):      # 4.5 MB
            part = conn.produce("big", 0, record_batch([Record(None, value)] * 90), acks=1)
            assert part.error == 0
    total = folder_bytes(c, 1, "big", 0)
    started = time.monotonic()
    assert reassign(c, "--execute", plan=plan_of([("big", 0, [1, 2])])).returncode == 0
    samples = 0
    while folder_bytes(c, 2, "big", 0) < total:
        elapsed = time.monotonic() - started
        # The rate, plus one fetch's worth (replica.fetch.max.bytes) ahead of it.
        assert folder_bytes(c, 2, "big", 0) <= rate * elapsed + (1 << 20) + 100000, (elapsed, samples)
        with c.conn(1) as conn:   # in sync, not throttled: acks=all answers at once
            part = conn.produce("live", 0, record_batch([Record(None, value)] * 50), acks=-1, timeout_ms=30000)
            assert part.error == 0
        samples += 1
        assert elapsed < 60, "the move does not progress"
        time.sleep(0.2)
    wait_moved(c, "big", 0, [1, 2])
    assert samples >= 5   # it took seconds: the rate held it back
    c.assert_replicas_identical("live", 1)


RATE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def broker_configs(c, i):
    """/config/brokers/[i]'s configs ({} when there is no node)."""
    if not c.zk.exists("/config/brokers/%d" % i):
        return {}
    return json.loads(c.zk.get("/config/brokers/%d" % i)[0].decode())["config"]


def test_execute_with_a_throttle_then_verify_until_it_is_removed(make_cluster):
    """--execute --throttle 200 KB/s: both rates land in /config/brokers/[id] of the
    partition's brokers before and after (1 and 2), not of broker 3; the added
    replica never holds more than the rate allows for the time since the move
    started (plus a fetch), so the move takes at least its size over the rate;
    --verify meanwhile says how many bytes replica 2 lacks and at what rate it
    catches up, and keeps the throttle; --verify after the move removes it."""
    rate = 200 * 1024
    fetch = 64 * 1024
    c = make_cluster(ids=(1, 2, 3), extra={"replica.fetch.max.bytes": fetch,
                                           "replica.fetch.response.max.bytes": fetch})
    c.create_topic("slow", assignment=[[1]])
    value = b"x" * 10000
    with c.conn(1) as conn:
        for _ in range(28):     # about 1.7 MB, in batches smaller than a fetch
            assert conn.produce("slow", 0, record_batch([Record(None, value)] * 6), acks=1).error == 0
    total = folder_bytes(c, 1, "slow", 0)
    plan = plan_of([("slow", 0, [1, 2])])
    started = time.monotonic()
    out = reassign(c, "--execute", "--throttle", str(rate), plan=plan)
    assert out.returncode == 0, out.stderr
    assert "The inter-broker throttle limit was set to %d B/s" % rate in out.stdout, out.stdout
    assert "Successfully started partition reassignments for slow-0" in out.stdout
    for i in (1, 2):
        assert broker_configs(c, i) == {k: str(rate) for k in RATE_KEYS}
    assert not c.zk.exists("/config/brokers/3")

    verified = reassign(c, "--verify", plan=plan)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert "Reassignment of partition slow-0 is still in progress." in verified.stdout
    line = re.search(r"Reassignment of partition slow-0 is still in progress: replica 2 has (\d+) bytes left, "
                     r"catching up at (\d+) B/s", verified.stdout)
    assert line, verified.stdout
    left, catching_up = int(line.group(1)), int(line.group(2))
    assert 0 < left <= total, (left, total)
    # Over the second between the readings: the rate, plus the bucket and a fetch.
    assert catching_up <= 2 * rate, catching_up
    assert "Throttle was removed." not in verified.stdout
    assert broker_configs(c, 2) == {k: str(rate) for k in RATE_KEYS}

    samples = []

    def copied():
        samples.append((time.monotonic() - started, folder_bytes(c, 2, "slow", 0)))
        return samples[-1][1] >= total
    wait_until(copied, timeout=120, interval=0.2, what="the added replica to hold the whole log")
    wait_moved(c, "slow", 0, [1, 2], timeout=60)
    # The rate, plus one fetch, the bucket (a tenth of a second) and batch framing ahead of it.
    slack = fetch + rate // 10 + 100000
    over = [(t, n) for t, n in samples if n > rate * t + slack]
    assert not over, over[:5]
    assert samples[-1][0] >= (total - slack) / rate, (samples[-1], total)

    verified = reassign(c, "--verify", plan=plan)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "Reassignment of partition slow-0 is completed." in verified.stdout
    assert "Throttle was removed." in verified.stdout
    for i in (1, 2, 3):
        assert not set(RATE_KEYS) & set(broker_configs(c, i)), (i, broker_configs(c, i))
    again = reassign(c, "--verify", plan=plan)
    assert again.returncode == 0 and "Throttle was removed." not in again.stdout


def test_throttle_usage_errors(make_cluster):
    """A rate that is not a positive integer, or --throttle with another action
    than --execute, is a usage error (exit 2), and nothing is written."""
    c = make_cluster(ids=(1, 2))
    c.create_topic("u", assignment=[[1]])
    plan = plan_of([("u", 0, [2])])
    cases = [
        (["--execute", "--throttle", "abc"], plan, "--throttle takes a rate in bytes/second"),
        (["--execute", "--throttle", "0"], plan, "--throttle takes a rate in bytes/second"),
        (["--execute", "--throttle", "-100"], plan, "--throttle takes a rate in bytes/second"),
        (["--execute", "--throttle", "10MB"], plan, "--throttle takes a rate in bytes/second"),
        (["--verify", "--throttle", "1000"], plan, "--throttle goes only with --execute"),
        (["--cancel", "--throttle", "1000"], plan, "--throttle goes only with --execute"),
        (["--drain", "1", "--throttle", "1000"], None, "--throttle goes only with --execute"),
        (["--execute", "--preserve-throttles"], plan, "--preserve-throttles goes only with --cancel"),
    ]
    for args, p, message in cases:
        out = reassign(c, *args, plan=p)
        assert out.returncode == 2 and message in out.stderr, (args, out.returncode, out.stderr)
        assert "usage: kipper reassign" in out.stderr
    assert not c.zk.exists("/brokers/partitions_reassigned/u")
    assert not c.zk.get_children("/config/brokers")
    assert c.state("u", 0)["replicas"] == [1]
