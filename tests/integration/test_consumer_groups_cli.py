"""`kipper consumer-groups` (kafka-consumer-groups.sh over the Kafka protocol)
and the broker's DeleteGroups, against one kipper broker: a stopped group's
offsets and lag, --reset-offsets in every scenario and a consumer resuming
from the new offsets, the refusals while a member is active, --delete, and
the bin/kafka-*.sh shim running a script written for Kafka's tools."""
import os
import struct
import subprocess
import textwrap
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

import harness
from broker_harness import KIPPER, broker, coordinator, make_broker, wait_until  # noqa: F401
from kafka_wire import karray, kbytes, kstring
from rdkafka_admin import RdKafkaAdmin

BIN = os.path.dirname(KIPPER)
NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND = 68, 69


def cg(broker, *args, timeout=60):
    return subprocess.run([KIPPER, "consumer-groups", "--bootstrap-server", broker.bootstrap] + list(args),
                          capture_output=True, text=True, timeout=timeout)


def produce(broker, topic, per_partition, partitions=2, timestamps=None):
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for part in range(partitions):
        for i in range(per_partition):
            kw = {"timestamp": timestamps[i]} if timestamps else {}
            p.produce(topic, value=b"%d-%d" % (part, i), partition=part, **kw)
    assert p.flush(30) == 0


def commit(broker, group, offsets):
    """Commits {(topic, partition): offset} as a consumer outside any
    membership (a stopped group's last commit)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        c.close()


def committed(broker, group):
    with RdKafkaAdmin(broker.bootstrap) as a:
        return a.list_consumer_group_offsets(group)


def table(stdout):
    """kafka-consumer-groups.sh's table: a list of dicts by column name."""
    lines = [l.split() for l in stdout.splitlines() if l.strip()]
    lines = [l for l in lines if not l[0].startswith(("WARN", "New"))]
    head = lines[0]
    return [dict(zip(head, l)) for l in lines[1:]]


@pytest.fixture
def stopped(broker):
    """Topic t (2 partitions, 5 records each) and group g stopped at offsets 3 and 2."""
    broker.create_topic("t", partitions=2)
    produce(broker, "t", 5)
    commit(broker, "g", {("t", 0): 3, ("t", 1): 2})
    return broker


def active_member(broker, group, topic):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "client.id": "active-one",
                  "session.timeout.ms": 6000, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    wait_until(lambda: c.poll(0.2) is not None or c.assignment(), timeout=30, what="an assignment")
    return c


def test_describe_and_list_a_stopped_group(stopped):
    out = cg(stopped, "--describe", "--group", "g")
    assert out.returncode == 0, out.stderr
    assert "Consumer group 'g' has no active members." in out.stderr
    rows = table(out.stdout)
    assert [(r["TOPIC"], r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"], r["CONSUMER-ID"],
             r["HOST"], r["CLIENT-ID"]) for r in rows] == [
        ("t", "0", "3", "5", "2", "-", "-", "-"), ("t", "1", "2", "5", "3", "-", "-", "-")]
    out = cg(stopped, "--list")
    assert out.returncode == 0 and out.stdout.split() == ["g"], out
    out = cg(stopped, "--list", "--state")
    assert table(out.stdout) == [{"GROUP": "g", "STATE": "Empty"}]
    out = cg(stopped, "--list", "--state", "Stable")
    assert out.returncode == 0 and out.stdout.split() == ["GROUP", "STATE"], out


def test_reset_to_earliest_and_the_group_resumes_there(stopped):
    out = cg(stopped, "--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--execute")
    assert out.returncode == 0, out.stderr
    assert [(r["GROUP"], r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in table(out.stdout)] == [
        ("g", "t", "0", "0"), ("g", "t", "1", "0")]
    assert committed(stopped, "g") == {("t", 0): 0, ("t", 1): 0}
    # A consumer of the group reads every record again, from offset 0.
    c = Consumer({"bootstrap.servers": stopped.bootstrap, "group.id": "g", "auto.offset.reset": "latest"})
    c.subscribe(["t"])
    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < 10 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            seen.append((m.partition(), m.offset()))
    c.close()
    assert sorted(seen) == [(p, o) for p in range(2) for o in range(5)]


def test_reset_scenarios(broker):
    now = int(time.time() * 1000)
    broker.create_topic("t", partitions=2)
    produce(broker, "t", 5, timestamps=[now - 50000 + 10000 * i for i in range(5)])
    commit(broker, "g", {("t", 0): 3, ("t", 1): 2})

    def new_offsets(*args):
        out = cg(broker, "--reset-offsets", "--group", "g", *args)
        assert out.returncode == 0, out.stderr
        return {(r["TOPIC"], int(r["PARTITION"])): int(r["NEW-OFFSET"]) for r in table(out.stdout)}

    assert new_offsets("--all-topics", "--to-latest", "--dry-run") == {("t", 0): 5, ("t", 1): 5}
    assert committed(broker, "g") == {("t", 0): 3, ("t", 1): 2}   # a dry run changes nothing
    out = cg(broker, "--reset-offsets", "--group", "g", "--all-topics", "--to-latest")
    assert "--execute option is missing" in out.stderr and committed(broker, "g")[("t", 0)] == 3
    out = cg(broker, "--reset-offsets", "--group", "g", "--all-topics", "--to-latest", "--export")
    assert plan(out.stdout) == {("t", 0): 5, ("t", 1): 5} and committed(broker, "g")[("t", 0)] == 3
    assert new_offsets("--topic", "t:1", "--shift-by", "-1", "--execute") == {("t", 1): 1}
    out = cg(broker, "--reset-offsets", "--group", "g", "--topic", "t:0", "--to-offset", "99", "--execute")
    assert "New offset (99) is higher than latest offset for topic partition t-0. Value will be set to 5" in out.stdout
    assert committed(broker, "g") == {("t", 0): 5, ("t", 1): 1}
    # the third record's time (ms since the epoch, written in UTC)
    third = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((now - 30000) // 1000)) + ".%03dZ" % ((now - 30000) % 1000)
    assert new_offsets("--all-topics", "--to-datetime", third, "--execute") == {("t", 0): 2, ("t", 1): 2}
    assert committed(broker, "g") == {("t", 0): 2, ("t", 1): 2}


def test_an_active_group_is_neither_reset_nor_deleted(broker):
    broker.create_topic("t", partitions=2)
    produce(broker, "t", 2)
    c = active_member(broker, "live", "t")
    try:
        out = cg(broker, "--reset-offsets", "--group", "live", "--all-topics", "--to-earliest", "--execute")
        assert out.returncode == 1
        assert "Assignments can only be reset if the group 'live' is inactive, but the current state is Stable." \
            in out.stderr
        out = cg(broker, "--delete", "--group", "live")
        assert out.returncode == 1
        assert "* Group 'live' could not be deleted due to: NON_EMPTY_GROUP" in out.stdout
        with RdKafkaAdmin(broker.bootstrap) as a:
            assert a.delete_consumer_groups(["live"]) == {"live": NON_EMPTY_GROUP}
        out = cg(broker, "--describe", "--group", "live")
        assert out.returncode == 0, out.stderr
        rows = table(out.stdout)
        assert sorted((r["PARTITION"], r["CLIENT-ID"]) for r in rows) == [("0", "active-one"), ("1", "active-one")]
        assert all(r["CONSUMER-ID"].startswith("active-one-") and r["HOST"].startswith("/127.0.0.1")
                   for r in rows)
        out = cg(broker, "--describe", "--group", "live", "--members")
        assert [(r["CLIENT-ID"], r["#PARTITIONS"]) for r in table(out.stdout)] == [("active-one", "2")]
        out = cg(broker, "--describe", "--group", "live", "--state")
        head, row = [l.split() for l in out.stdout.splitlines() if l.strip()]
        assert head == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        assert row == ["live", "%s" % broker.bootstrap, "(1)", "range", "Stable", "1"]
    finally:
        c.close()


def test_delete_a_stopped_group(stopped):
    commit(stopped, "other", {("t", 0): 1})
    out = cg(stopped, "--delete", "--group", "g")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Deletion of requested consumer groups ('g') was successful."
    assert committed(stopped, "g") == {}
    out = cg(stopped, "--describe", "--group", "g")
    assert out.returncode == 1 and "Error: Consumer group 'g' does not exist." in out.stderr
    assert cg(stopped, "--list").stdout.split() == ["other"]
    with RdKafkaAdmin(stopped.bootstrap) as a:
        assert a.delete_consumer_groups(["other", "never"]) == {"other": 0, "never": GROUP_ID_NOT_FOUND}
    assert committed(stopped, "other") == {}
    assert cg(stopped, "--list").stdout.split() == []
    out = cg(stopped, "--delete", "--group", "g")
    assert out.returncode == 1 and "* Group 'g' could not be deleted due to: GROUP_ID_NOT_FOUND" in out.stdout


def test_a_script_for_kafkas_tools_runs_through_the_shim(stopped, tmp_path):
    script = tmp_path / "lag.sh"
    script.write_text(textwrap.dedent("""\
        #!/bin/sh
        set -e
        "$KAFKA_PATH/bin/kafka-topics.sh" --zookeeper "$ZK" --create --topic more --partitions 1 \\
            --replication-factor 1
        "$KAFKA_PATH/bin/kafka-consumer-groups.sh" --bootstrap-server "$BROKERS" --list
        "$KAFKA_PATH/bin/kafka-consumer-groups.sh" --bootstrap-server "$BROKERS" --describe --group g
        "$KAFKA_PATH/bin/kafka-consumer-groups.sh" --bootstrap-server "$BROKERS" --reset-offsets --group g \\
            --topic t --to-latest --execute
        """))
    env = dict(os.environ, KAFKA_PATH=os.path.dirname(BIN), ZK=stopped.zk_connect, BROKERS=stopped.bootstrap)
    out = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert "Created topic more." in out.stdout
    assert committed(stopped, "g") == {("t", 0): 5, ("t", 1): 5}


def test_bad_arguments_and_unreachable_brokers(broker, tmp_path):
    for args in (["--list", "--group", "g"], ["--describe"], ["--reset-offsets", "--group", "g", "--topic", "t"],
                 ["--reset-offsets", "--group", "g", "--all-topics", "--to-datetime", "yesterday"],
                 ["--reset-offsets", "--group", "g", "--topic", "t:x", "--to-earliest"], ["--bogus"]):
        out = cg(broker, *args)
        assert out.returncode == 2 and "usage: kipper consumer-groups" in out.stderr, (args, out)
    out = subprocess.run([KIPPER, "consumer-groups", "--list"], capture_output=True, text=True)
    assert out.returncode == 2 and "--bootstrap-server is required" in out.stderr
    with harness.refused_port() as port:
        out = subprocess.run([KIPPER, "consumer-groups", "--bootstrap-server", "127.0.0.1:%d" % port, "--list"],
                             capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "cannot reach any broker" in out.stderr
    out = cg(broker, "--describe", "--group", "nobody")
    assert out.returncode == 1 and "Consumer group 'nobody' does not exist." in out.stderr
    out = cg(broker, "--reset-offsets", "--group", "g", "--topic", "missing", "--to-earliest")
    assert out.returncode == 1 and "Topic 'missing' does not exist" in out.stderr


# ---- the rest of kafka-consumer-groups.sh: --by-duration, --from-file, --export, --delete-offsets ----

INVALID_GROUP_ID, UNKNOWN_TOPIC_OR_PARTITION, GROUP_SUBSCRIBED_TO_TOPIC, NOT_COORDINATOR = 24, 3, 86, 16


def resumed_at(broker, group, topic, partitions=2, records=5):
    """The first offset a new consumer of the group reads in each partition
    (its committed offsets; auto.offset.reset latest would read none)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "latest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    first = {}
    deadline = time.monotonic() + 30
    while len(first) < partitions and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            first.setdefault(m.partition(), m.offset())
    c.close()
    return first


def plan(stdout):
    """--export's CSV: {(topic, partition): offset}."""
    rows = [l.split(",") for l in stdout.splitlines() if l.strip()]
    assert all(len(r) == 3 for r in rows), stdout
    return {(t, int(p)): int(o) for t, p, o in rows}


def status_rows(stdout):
    """--delete-offsets' table: [(topic, partition, status)], the header first."""
    rows = [tuple(c.strip() for c in l.split(None, 2)) for l in stdout.splitlines() if l.strip()]
    return rows[[r[0] for r in rows].index("TOPIC"):]


def test_reset_by_duration_and_the_group_resumes_there(broker):
    now = int(time.time() * 1000)
    broker.create_topic("t", partitions=2)
    # records 50, 40, 30, 20 and 10 seconds old
    produce(broker, "t", 5, timestamps=[now - 50000 + 10000 * i for i in range(5)])
    commit(broker, "g", {("t", 0): 4, ("t", 1): 4})
    out = cg(broker, "--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "PT35S", "--execute")
    assert out.returncode == 0, out.stderr
    assert [(r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in table(out.stdout)] == [
        ("t", "0", "2"), ("t", "1", "2")]
    assert committed(broker, "g") == {("t", 0): 2, ("t", 1): 2}
    assert resumed_at(broker, "g", "t") == {0: 2, 1: 2}
    # Longer ago than any record: the log start; P1D is a day.
    out = cg(broker, "--reset-offsets", "--group", "g", "--topic", "t:0", "--by-duration", "P1DT0.5S", "--dry-run")
    assert [r["NEW-OFFSET"] for r in table(out.stdout)] == ["0"], out


def test_reset_from_a_file_and_export_round_trip(stopped, tmp_path):
    # --export prints the plan as CSV, which --from-file reads back.
    out = cg(stopped, "--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--dry-run", "--export")
    assert out.returncode == 0, out.stderr
    assert plan(out.stdout) == {("t", 0): 0, ("t", 1): 0}
    assert committed(stopped, "g") == {("t", 0): 3, ("t", 1): 2}
    exported = tmp_path / "earliest.csv"
    exported.write_text(out.stdout)
    out = cg(stopped, "--reset-offsets", "--group", "g", "--from-file", str(exported), "--execute")
    assert out.returncode == 0, out.stderr
    assert committed(stopped, "g") == {("t", 0): 0, ("t", 1): 0}
    # A hand-written plan, CRLF and all, with --export after --execute.
    mine = tmp_path / "plan.csv"
    mine.write_bytes(b"t,0,1\r\nt,1,4\r\n")
    out = cg(stopped, "--reset-offsets", "--group", "g", "--from-file", str(mine), "--execute", "--export")
    assert out.returncode == 0, out.stderr
    assert plan(out.stdout) == {("t", 0): 1, ("t", 1): 4}
    assert committed(stopped, "g") == {("t", 0): 1, ("t", 1): 4}
    assert resumed_at(stopped, "g", "t") == {0: 1, 1: 4}


def test_a_bad_reset_file_is_refused_with_its_line_and_nothing_applied(stopped, tmp_path):
    for text, line in ((b"t,0,1\nt,x,2\n", 2), (b"t,0,1\n\nt,1\n", 3), (b"t,0,-1\n", 1), (b"t,0,1\nt,0,2\n", 2)):
        bad = tmp_path / "bad.csv"
        bad.write_bytes(text)
        out = cg(stopped, "--reset-offsets", "--group", "g", "--from-file", str(bad), "--execute")
        assert out.returncode == 1, out
        assert "is not valid: line %d:" % line in out.stderr and "no offset was reset" in out.stderr, out.stderr
        assert committed(stopped, "g") == {("t", 0): 3, ("t", 1): 2}
    out = cg(stopped, "--reset-offsets", "--group", "g", "--from-file", str(tmp_path / "none.csv"), "--execute")
    assert out.returncode == 1 and "cannot read the reset plan" in out.stderr


def test_delete_offsets_of_a_stopped_group_stay_deleted_after_a_restart(stopped):
    out = cg(stopped, "--delete-offsets", "--group", "g", "--topic", "t:0", "--topic", "nope")
    assert out.returncode == 1, out
    assert "Request succeed for deleting offsets with topic t:0, nope group g" in out.stdout
    rows = status_rows(out.stdout)
    assert rows[0] == ("TOPIC", "PARTITION", "STATUS")
    assert rows[1][:2] == ("nope", "Not") and \
        rows[1][2].split()[:3] == ["Provided", "Error:", "UNKNOWN_TOPIC_OR_PARTITION"]
    assert rows[2:] == [("t", "0", "Successful")]
    assert committed(stopped, "g") == {("t", 1): 2}
    stopped.stop()
    stopped.start()
    assert committed(stopped, "g") == {("t", 1): 2}
    out = cg(stopped, "--delete-offsets", "--group", "g", "--topic", "t")
    assert out.returncode == 0, out
    assert status_rows(out.stdout)[1:] == [("t", "0", "Successful"), ("t", "1", "Successful")]
    assert committed(stopped, "g") == {}
    # With its last offset gone the group is gone, as Kafka drops it, also after a restart.
    assert cg(stopped, "--list").stdout.split() == []
    stopped.stop()
    stopped.start()
    assert cg(stopped, "--list").stdout.split() == []
    out = cg(stopped, "--delete-offsets", "--group", "g", "--topic", "t")
    assert out.returncode == 1 and "Error: 'g' does not exist." in out.stderr, out
    out = cg(stopped, "--delete-offsets", "--group", "never", "--topic", "t")
    assert out.returncode == 1 and "Error: 'never' does not exist." in out.stderr, out


def test_delete_offsets_of_an_active_group_spares_its_subscribed_topics(broker):
    broker.create_topic("t", partitions=2)
    broker.create_topic("other")
    produce(broker, "t", 2)
    c = active_member(broker, "live", "t")
    try:
        out = cg(broker, "--delete-offsets", "--group", "live", "--topic", "t", "--topic", "other")
        assert out.returncode == 1, out
        assert "Encounter some partition level error, see the follow-up details:" in out.stderr
        statuses = {(r[0], r[1]): r[2] for r in status_rows(out.stdout)[1:]}
        assert statuses == {("other", "0"): "Successful",
                            ("t", "0"): "Error: GROUP_SUBSCRIBED_TO_TOPIC (the consumer group is actively "
                                        "subscribed to the topic)",
                            ("t", "1"): "Error: GROUP_SUBSCRIBED_TO_TOPIC (the consumer group is actively "
                                        "subscribed to the topic)"}
    finally:
        c.close()


def test_offset_delete_on_the_wire(stopped):
    with stopped.conn() as k:
        assert k.offset_delete("g", {"t": [1, 7], "nope": [0]}) == (0, 0, [
            ("t", 1, 0), ("t", 7, UNKNOWN_TOPIC_OR_PARTITION), ("nope", 0, UNKNOWN_TOPIC_OR_PARTITION)])
        assert k.offset_delete("never", {"t": [0]}) == (GROUP_ID_NOT_FOUND, 0, [])
        assert k.offset_delete("", {"t": [0]}) == (INVALID_GROUP_ID, 0, [])
    assert committed(stopped, "g") == {("t", 0): 3}


def test_offset_delete_of_an_active_group_that_is_not_a_consumer_group(broker):
    """A member of another protocol type ("connect"): its subscriptions cannot
    be told, so Kafka refuses the whole request with NON_EMPTY_GROUP."""
    broker.create_topic("t")
    join = kstring("workers") + struct.pack(">i", 30000) + kstring("") + kstring("connect") + \
        karray([kstring("default") + kbytes(b"\x00")])
    with broker.conn() as member, broker.conn() as admin:
        member.send(11, 0, join)   # JoinGroup v0, answered after the initial rebalance delay
        assert wait_until(lambda: admin.offset_delete("workers", {"t": [0]})[0] == NON_EMPTY_GROUP, timeout=10,
                          what="the group to have its member")
        assert admin.offset_delete("workers", {"t": [0]}) == (NON_EMPTY_GROUP, 0, [])


def test_new_options_refused_where_they_do_not_belong(broker):
    for args in (["--delete-offsets", "--group", "g"], ["--delete-offsets", "--topic", "t"],
                 ["--delete-offsets", "--group", "a", "--group", "b", "--topic", "t"],
                 ["--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "1 hour"],
                 ["--reset-offsets", "--group", "g", "--all-topics", "--by-duration", "PT"],
                 ["--describe", "--group", "g", "--export"],
                 ["--reset-offsets", "--group", "g", "--from-file", "f", "--to-earliest"]):
        out = cg(broker, *args)
        assert out.returncode == 2 and "usage: kipper consumer-groups" in out.stderr, (args, out)


def test_offset_delete_is_answered_only_by_the_coordinator(make_broker):
    chroot = "/kt/offset-delete-%d" % os.getpid()
    brokers = [make_broker(chroot=chroot), make_broker(chroot=chroot, broker_id=2)]
    groups = ["g%d" % i for i in range(16)]

    def answers():
        """{group: (broker 1's group error, broker 2's)}, once both brokers see
        both (until then each may think it coordinates every group)."""
        got = {}
        for g in groups:
            errs = []
            for b in brokers:
                with b.conn() as k:
                    errs.append(k.offset_delete(g, {})[0])
            got[g] = tuple(errs)
        return got if all(set(e) == {GROUP_ID_NOT_FOUND, NOT_COORDINATOR} for e in got.values()) else None

    got = wait_until(answers, timeout=30, interval=0.2, what="each group answered by exactly one coordinator")
    # the placement spreads the groups: each broker coordinates some
    assert {e.index(GROUP_ID_NOT_FOUND) for e in got.values()} == {0, 1}
