"""`kipper console-producer` and `kipper console-consumer`
(kafka-console-producer.sh and kafka-console-consumer.sh without a group)
against one kipper broker: lines piped in read back by confluent-kafka with
their keys, records of confluent-kafka (keys, headers, lz4 and zstd batches)
printed with the print.* properties, an unknown topic and an unreachable
broker refused, and the bin/kafka-console-*.sh shims."""
import os
import subprocess
import time

from confluent_kafka import Consumer, Producer, TopicPartition

from broker_harness import KIPPER, broker, coordinator, make_broker  # noqa: F401

BIN = os.path.dirname(KIPPER)


def tool(broker, name, *args, stdin=None, timeout=30):
    return subprocess.run([KIPPER, name, "--bootstrap-server", broker.bootstrap] + list(args), input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def read_all(broker, topic, partitions, count):
    """Every record of topic's partitions from the start: (partition, key, value)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "reader", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got = []
    deadline = time.monotonic() + 15
    try:
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is not None and not m.error():
                got.append((m.partition(), m.key(), m.value()))
    finally:
        c.close()
    return got


def test_lines_piped_to_the_producer_are_records_with_keys(broker):
    broker.create_topic("lines", partitions=2)
    lines = "".join("k%d:v%d\n" % (i, i) for i in range(250)) + "k-last:no newline"
    out = tool(broker, "console-producer", "--topic", "lines", "--property", "parse.key=true",
               "--property", "key.separator=:", stdin=lines)
    assert out.returncode == 0, out.stderr
    got = read_all(broker, "lines", 2, 251)
    assert sorted((k, v) for _, k, v in got) == sorted(
        [(b"k%d" % i, b"v%d" % i) for i in range(250)] + [(b"k-last", b"no newline")])
    assert {p for p, _, _ in got} == {0, 1}   # round-robin over both partitions
    # One partition, acks=1, values only: the order kept.
    out = tool(broker, "console-producer", "--topic", "lines", "--partition", "1", "--producer-property",
               "acks=1", stdin="a\nb\n\nc\n")
    assert out.returncode == 0, out.stderr
    values = [v for p, _, v in read_all(broker, "lines", 2, 255) if p == 1]
    assert values[-4:] == [b"a", b"b", b"", b"c"]
    # A line without the separator is refused, as LineMessageReader refuses it.
    out = tool(broker, "console-producer", "--topic", "lines", "--property", "parse.key=true", stdin="novalue\n")
    assert out.returncode == 1 and "No key separator found on line number 1" in out.stderr


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


def test_unknown_topics_and_unreachable_brokers_exit_1(broker):
    for name, stdin in (("console-producer", "x\n"), ("console-consumer", None)):
        out = tool(broker, name, "--topic", "missing", stdin=stdin)
        assert out.returncode == 1 and "the topic 'missing' does not exist" in out.stderr, out
        out = subprocess.run([KIPPER, name, "--bootstrap-server", "127.0.0.1:1", "--topic", "t"], input="x\n",
                             capture_output=True, text=True, timeout=30)
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
