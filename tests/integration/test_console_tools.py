"""`kipper console-producer` and `kipper console-consumer`
(kafka-console-producer.sh and kafka-console-consumer.sh of Kafka 3.x)
against one kipper broker: lines piped in read back by confluent-kafka with
their keys, headers and nulls (LineMessageReader's properties), keyed lines on
the partitions confluent-kafka's murmur2 partitioner picks for the same keys,
keyless lines sticking to one partition, records of confluent-kafka (keys,
headers, nulls, lz4 and zstd batches, LogAppendTime) printed with every
DefaultMessageFormatter property, an unknown topic, an unreachable broker and
formatters other than Kafka's default refused, --group members committing
what they printed, resuming from it and sharing partitions, and the
bin/kafka-console-*.sh shims."""
import os
import subprocess
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME

import harness
from broker_harness import KIPPER, broker, coordinator, make_broker  # noqa: F401

BIN = os.path.dirname(KIPPER)


def tool(broker, name, *args, stdin=None, timeout=30):
    return subprocess.run([KIPPER, name, "--bootstrap-server", broker.bootstrap] + list(args), input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def read_records(broker, topic, partitions, count):
    """Every record of topic's partitions from the start, as confluent-kafka's Messages."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "reader", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got = []
    deadline = time.monotonic() + 15
    try:
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is not None and not m.error():
                got.append(m)
    finally:
        c.close()
    return got


def read_all(broker, topic, partitions, count):
    """Every record of topic's partitions from the start: (partition, key, value)."""
    return [(m.partition(), m.key(), m.value()) for m in read_records(broker, topic, partitions, count)]


def test_lines_piped_to_the_producer_are_records_with_keys(broker):
    broker.create_topic("lines", partitions=2)
    lines = "".join("k%d:v%d\n" % (i, i) for i in range(250)) + "k-last:no newline"
    out = tool(broker, "console-producer", "--topic", "lines", "--property", "parse.key=true",
               "--property", "key.separator=:", stdin=lines)
    assert out.returncode == 0, out.stderr
    got = read_all(broker, "lines", 2, 251)
    assert sorted((k, v) for _, k, v in got) == sorted(
        [(b"k%d" % i, b"v%d" % i) for i in range(250)] + [(b"k-last", b"no newline")])
    assert {p for p, _, _ in got} == {0, 1}   # murmur2 of 251 keys: both partitions
    # One partition, acks=1, values only: the order kept.
    out = tool(broker, "console-producer", "--topic", "lines", "--partition", "1", "--producer-property",
               "acks=1", stdin="a\nb\n\nc\n")
    assert out.returncode == 0, out.stderr
    values = [v for p, _, v in read_all(broker, "lines", 2, 255) if p == 1]
    assert values[-4:] == [b"a", b"b", b"", b"c"]
    # A line without the separator is refused, as LineMessageReader refuses it.
    out = tool(broker, "console-producer", "--topic", "lines", "--property", "parse.key=true", stdin="novalue\n")
    assert out.returncode == 1 and "No key separator found on line number 1: 'novalue'" in out.stderr


def test_headers_and_nulls_round_trip(broker):
    broker.create_topic("hdrs")
    lines = ("trace:abc,n:NULL\tk1|v1\n"       # two headers, one null
             "NULL\tk2|NULL\n"                 # no headers, a null value
             "a:1,,\tNULL|v3\n"                # a trailing empty pair dropped; a null key
             ":\t|\n")                         # an empty header, key and value
    out = tool(broker, "console-producer", "--topic", "hdrs", "--property", "parse.key=true",
               "--property", "key.separator=|", "--property", "parse.headers=true",
               "--property", "null.marker=NULL", stdin=lines)
    assert out.returncode == 0, out.stderr
    got = [(m.headers(), m.key(), m.value()) for m in read_records(broker, "hdrs", 1, 4)]
    assert got == [([("trace", b"abc"), ("n", None)], b"k1", b"v1"),
                   (None, b"k2", None),
                   ([("a", b"1")], None, b"v3"),
                   ([("", b"")], b"", b"")]
    # Read back by the console consumer with print.headers and the rest.
    out = tool(broker, "console-consumer", "--topic", "hdrs", "--from-beginning", "--max-messages", "4",
               "--property", "print.headers=true", "--property", "print.key=true",
               "--property", "null.literal=<null>", "--property", "headers.separator=;")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["trace:abc;n:<null>\tk1\tv1", "NO_HEADERS\tk2\t<null>",
                                       "a:1\t<null>\tv3", ":\t\t"]


def test_malformed_lines_are_refused_or_kept_with_ignore_error(broker):
    broker.create_topic("malformed")
    args = ["--topic", "malformed", "--property", "parse.headers=true", "--property", "parse.key=true"]
    out = tool(broker, "console-producer", *args, stdin="h:1\tk\tv\nno-delimiter\n")
    assert out.returncode == 1
    assert "No headers delimiter found on line number 2: 'no-delimiter'" in out.stderr
    out = tool(broker, "console-producer", *args, stdin="h:1,h2\tk\tv\n")
    assert out.returncode == 1
    assert "No header key separator found in pair 'h2' on line number 1" in out.stderr
    out = tool(broker, "console-producer", *args, "--property", "null.marker=-", stdin="-:1\tk\tv\n")
    assert out.returncode == 1
    assert "Header keys should not be equal to the null marker '-' as they can't be null" in out.stderr
    out = tool(broker, "console-producer", "--topic", "malformed", "--property", "headers.separator=:",
               stdin="x\n")
    assert out.returncode == 2
    assert "headers.separator and headers.key.separator may not be equal" in out.stderr
    # ignore.error: a missing part is absent, the whole line the value; a pair without ':' a null header.
    out = tool(broker, "console-producer", *args, "--property", "ignore.error=true",
               stdin="whole line\nh1:1,h2\tk\tv\n")
    assert out.returncode == 0, out.stderr
    got = [(m.headers(), m.key(), m.value()) for m in read_records(broker, "malformed", 1, 2)]
    assert got == [(None, None, b"whole line"), ([("h1", b"1"), ("h2", None)], b"k", b"v")]


def test_keyed_lines_land_where_kafkas_partitioner_puts_them(broker):
    broker.create_topic("keyed", partitions=5)
    broker.create_topic("keyed-ref", partitions=5)
    keys = [b"user-%d" % i for i in range(60)] + [b"", b"kafka", "ключ".encode()]
    out = tool(broker, "console-producer", "--topic", "keyed", "--property", "parse.key=true",
               stdin=b"".join(k + b"\t" + b"v\n" for k in keys).decode())
    assert out.returncode == 0, out.stderr
    placed = {}
    p = Producer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2_random"})
    for k in keys:
        p.produce("keyed-ref", key=k, value=b"v",
                  on_delivery=lambda err, m: placed.__setitem__(m.key(), m.partition()) if not err else None)
    assert p.flush(30) == 0
    ours = {k: part for part, k, _ in read_all(broker, "keyed", 5, len(keys))}
    assert len(ours) == len(keys) and ours == placed
    assert len(set(placed.values())) == 5   # the keys spread over every partition


def test_keyless_lines_stick_to_one_partition(broker):
    broker.create_topic("sticky", partitions=4)
    out = tool(broker, "console-producer", "--topic", "sticky", stdin="".join("v%d\n" % i for i in range(20)))
    assert out.returncode == 0, out.stderr
    got = read_all(broker, "sticky", 4, 20)
    assert len(got) == 20 and len({part for part, _, _ in got}) == 1   # 20 short records: under 16 KiB
    # Past 16 KiB the partition is drawn again: 40 values of 8 KiB, a new (random) draw every two.
    big = "".join("%s\n" % ("x" * 8192) for _ in range(40))
    out = tool(broker, "console-producer", "--topic", "sticky", "--batch-size", "1", stdin=big)
    assert out.returncode == 0, out.stderr
    got = read_all(broker, "sticky", 4, 60)
    assert len(got) == 60 and len({part for part, _, v in got if len(v) == 8192}) > 1


def test_the_consumer_prints_compressed_records_with_keys_and_headers(broker):
    broker.create_topic("printed", partitions=2)
    for codec, part in (("lz4", 0), ("zstd", 1)):
        p = Producer({"bootstrap.servers": broker.bootstrap, "compression.type": codec, "linger.ms": 50})
        for i in range(3):
            p.produce("printed", key=b"key%d" % i, value=b"%s-%d" % (codec.encode(), i), partition=part,
                      timestamp=1700000000000 + i, headers=[("h", b"x%d" % i), ("n", None)] if i else None)
        assert p.flush(30) == 0
    out = tool(broker, "console-consumer", "--topic", "printed", "--from-beginning", "--max-messages", "6",
               "--property", "print.key=true", "--property", "print.offset=true", "--property",
               "print.partition=true", "--property", "print.timestamp=true", "--property", "print.headers=true")
    assert out.returncode == 0, out.stderr
    assert "Processed a total of 6 messages" in out.stderr
    expected = set()
    for codec, part in (("lz4", 0), ("zstd", 1)):
        for i in range(3):
            headers = "h:x%d,n:null" % i if i else "NO_HEADERS"
            expected.add("CreateTime:%d\tPartition:%d\tOffset:%d\t%s\tkey%d\t%s-%d"
                         % (1700000000000 + i, part, i, headers, i, codec, i))
    assert set(out.stdout.splitlines()) == expected
    # The defaults: values only; --partition with --offset; a separator; --timeout-ms ends it.
    out = tool(broker, "console-consumer", "--topic", "printed", "--partition", "1", "--offset", "1",
               "--property", "print.key=true", "--property", "key.separator= => ", "--timeout-ms", "1500")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["key1 => zstd-1", "key2 => zstd-2"]
    assert "Processed a total of 2 messages" in out.stderr
    out = tool(broker, "console-consumer", "--topic", "printed", "--timeout-ms", "1000")
    assert out.returncode == 0 and out.stdout == "" and "Processed a total of 0 messages" in out.stderr
    # An --offset past the end: out of range, so from the end (auto.offset.reset=latest).
    out = tool(broker, "console-consumer", "--topic", "printed", "--partition", "0", "--offset", "100",
               "--timeout-ms", "1000")
    assert out.returncode == 0 and out.stdout == "" and "Processed a total of 0 messages" in out.stderr


def test_every_formatter_property(broker):
    broker.create_topic("fmt", partitions=2)
    broker.create_topic("fmt-append", configs={"message.timestamp.type": "LogAppendTime"})
    p = Producer({"bootstrap.servers": broker.bootstrap})
    p.produce("fmt", key=b"k0", value=b"v0", partition=1, timestamp=1700000000123, headers=[("a", b"1"), ("b", None)])
    p.produce("fmt", key=None, value=None, partition=1, timestamp=1700000000124)
    p.produce("fmt-append", key=b"k", value=b"v")
    assert p.flush(30) == 0
    base = ["--topic", "fmt", "--partition", "1", "--offset", "earliest", "--max-messages", "2"]

    def printed(*props, args=base):
        cmd = list(args)
        for prop in props:
            cmd += ["--property", prop]
        out = tool(broker, "console-consumer", *cmd)
        assert out.returncode == 0 and "Processed a total of" in out.stderr, out.stderr
        return out.stdout

    assert printed() == "v0\nnull\n"                                       # print.value only, by default
    assert printed("print.key=true") == "k0\tv0\nnull\tnull\n"
    assert printed("print.timestamp=true") == "CreateTime:1700000000123\tv0\nCreateTime:1700000000124\tnull\n"
    assert printed("print.partition=true") == "Partition:1\tv0\nPartition:1\tnull\n"
    assert printed("print.offset=true") == "Offset:0\tv0\nOffset:1\tnull\n"
    assert printed("print.headers=true") == "a:1,b:null\tv0\nNO_HEADERS\tnull\n"
    assert printed("print.headers=true", "headers.separator=|") == "a:1|b:null\tv0\nNO_HEADERS\tnull\n"
    assert printed("print.key=true", "print.value=false") == "k0\nnull\n"
    assert printed("print.value=false") == ""                                # nothing, not even a line end
    assert printed("print.key=true", "key.separator=, ") == "k0, v0\nnull, null\n"
    assert printed("line.separator=;") == "v0;null;"
    assert printed("print.key=true", "null.literal=(none)") == "k0\tv0\n(none)\t(none)\n"
    assert printed("print.timestamp=true", "print.partition=true", "print.offset=true", "print.headers=true",
                   "print.key=true", "print.value=true", "key.separator= ", "line.separator=|\n") == (
        "CreateTime:1700000000123 Partition:1 Offset:0 a:1,b:null k0 v0|\n"
        "CreateTime:1700000000124 Partition:1 Offset:1 NO_HEADERS null null|\n")
    # LogAppendTime: the broker's time, as confluent-kafka reads it.
    m = read_records(broker, "fmt-append", 1, 1)[0]
    assert m.timestamp()[0] == TIMESTAMP_LOG_APPEND_TIME
    assert printed("print.timestamp=true", args=["--topic", "fmt-append", "--from-beginning", "--max-messages", "1"]
                   ) == "LogAppendTime:%d\tv\n" % m.timestamp()[1]
    # --formatter: Kafka's default under both of its names; any other refused.
    for name in ("kafka.tools.DefaultMessageFormatter", "org.apache.kafka.tools.consumer.DefaultMessageFormatter"):
        assert printed(args=base + ["--formatter", name]) == "v0\nnull\n"
    out = tool(broker, "console-consumer", *base, "--formatter", "kafka.tools.LoggingMessageFormatter")
    assert out.returncode == 2 and "--formatter kafka.tools.LoggingMessageFormatter is not available" in out.stderr
    assert printed(args=base + ["--skip-message-on-error", "--isolation-level", "read_committed"]) == "v0\nnull\n"


def group_state(broker, group):
    """(state, member count) of group as `kipper consumer-groups --describe --state` prints them."""
    out = subprocess.run([KIPPER, "consumer-groups", "--bootstrap-server", broker.bootstrap, "--describe",
                          "--group", group, "--state"], capture_output=True, text=True, timeout=30)
    rows = [l.split() for l in out.stdout.splitlines() if l.strip()]
    return (rows[1][-2], int(rows[1][-1])) if out.returncode == 0 and len(rows) == 2 else (None, 0)


def await_group(broker, group, members, timeout=30):
    deadline = time.monotonic() + timeout
    while group_state(broker, group) != ("Stable", members):
        assert time.monotonic() < deadline, group_state(broker, group)
        time.sleep(0.2)


def group_offsets(broker, group, topic, partitions):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        return {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)],
                                                              timeout=10)}
    finally:
        c.close()


def test_a_group_member_commits_and_the_next_resumes(broker):
    broker.create_topic("grp", partitions=2)
    out = tool(broker, "console-producer", "--topic", "grp", "--property", "parse.key=true",
               stdin="".join("k%d\tv%d\n" % (i, i) for i in range(10)))
    assert out.returncode == 0, out.stderr
    first = tool(broker, "console-consumer", "--topic", "grp", "--group", "g1", "--from-beginning",
                 "--max-messages", "6")
    assert first.returncode == 0 and "Processed a total of 6 messages" in first.stderr, first.stderr
    # What was printed is committed, nothing more: the offsets add up to the 6 records.
    offsets = group_offsets(broker, "g1", "grp", 2)
    assert sum(max(o, 0) for o in offsets.values()) == 6, offsets
    assert group_state(broker, "g1") == ("Empty", 0)   # left the group when done
    # The group named as kafka-console-consumer.sh also takes it: group.id in --consumer-property.
    second = tool(broker, "console-consumer", "--topic", "grp", "--consumer-property", "group.id=g1",
                  "--timeout-ms", "3000")
    assert second.returncode == 0 and "Processed a total of 4 messages" in second.stderr, second.stderr
    assert sorted(first.stdout.split() + second.stdout.split()) == sorted("v%d" % i for i in range(10))
    assert group_offsets(broker, "g1", "grp", 2) == {p: n for p, n in enumerate(
        [len([1 for part, _, _ in read_all(broker, "grp", 2, 10) if part == q]) for q in range(2)])}
    out = tool(broker, "console-consumer", "--topic", "grp", "--group", "g1", "--partition", "0")
    assert out.returncode == 2 and "Options group and partition cannot be specified together." in out.stderr


def test_two_group_members_share_the_partitions(broker):
    broker.create_topic("split", partitions=4)
    cmd = [KIPPER, "console-consumer", "--bootstrap-server", broker.bootstrap, "--topic", "split", "--group", "g2",
           "--timeout-ms", "12000", "--property", "print.partition=true"]
    a = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        await_group(broker, "g2", 1)
        b = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            await_group(broker, "g2", 2)
            p = Producer({"bootstrap.servers": broker.bootstrap})
            for i in range(40):
                p.produce("split", value=b"m%d" % i, partition=i % 4)
            assert p.flush(30) == 0
            out_b, err_b = b.communicate(timeout=60)
        finally:
            b.kill()
        out_a, err_a = a.communicate(timeout=60)
    finally:
        a.kill()
    assert a.returncode == 0 and b.returncode == 0, (err_a, err_b)
    got_a = [l.split("\t") for l in out_a.splitlines()]
    got_b = [l.split("\t") for l in out_b.splitlines()]
    # Each member had two partitions (RangeAssignor: 0-1 and 2-3), each record printed once.
    parts_a, parts_b = {p for p, _ in got_a}, {p for p, _ in got_b}
    assert len(parts_a) == 2 and len(parts_b) == 2 and not parts_a & parts_b, (parts_a, parts_b)
    assert sorted(v for _, v in got_a + got_b) == sorted("m%d" % i for i in range(40))


def test_unknown_topics_and_unreachable_brokers_exit_1(broker):
    for name, stdin in (("console-producer", "x\n"), ("console-consumer", None)):
        out = tool(broker, name, "--topic", "missing", stdin=stdin)
        assert out.returncode == 1 and "the topic 'missing' does not exist" in out.stderr, out
        with harness.refused_port() as port:
            out = subprocess.run([KIPPER, name, "--bootstrap-server", "127.0.0.1:%d" % port, "--topic", "t"],
                                 input="x\n", capture_output=True, text=True, timeout=30)
        assert out.returncode == 1 and "cannot reach any broker" in out.stderr, out
        out = subprocess.run([KIPPER, name, "--topic", "t"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and "--bootstrap-server and --topic are required" in out.stderr
    out = tool(broker, "console-consumer", "--topic", "t", "--offset", "3")
    assert out.returncode == 2 and "The partition is required when offset is specified." in out.stderr


def test_the_shims_run_the_console_tools(broker):
    broker.create_topic("shim")
    out = subprocess.run([os.path.join(BIN, "kafka-console-producer.sh"), "--bootstrap-server", broker.bootstrap,
                          "--topic", "shim"], input="one\ntwo\n", capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    out = tool(broker, "console-producer", "--topic", "shim", "--request-required-acks", "0", stdin="three\n")
    assert out.returncode == 0, out.stderr   # acks=0: sent, no answer awaited
    out = subprocess.run([os.path.join(BIN, "kafka-console-consumer.sh"), "--bootstrap-server", broker.bootstrap,
                          "--topic", "shim", "--from-beginning", "--max-messages", "3"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout == "one\ntwo\nthree\n", out
