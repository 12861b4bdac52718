"""Kafka's broker configs in server.properties (issue 15): every key of Kafka
3.x is accepted and checked with Kafka's type and range, the ones kipper does
not act on are named once at start, and DescribeConfigs for the broker (here
through confluent-kafka's AdminClient) answers every key with its value and
source -- STATIC_BROKER_CONFIG when server.properties sets it, Kafka's
default as DEFAULT_CONFIG otherwise, a password as sensitive without its
value -- and a topic's configs name the static broker keys behind them."""
import re

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

from broker_harness import coordinator, make_broker  # noqa: F401

STATIC = ConfigSource.STATIC_BROKER_CONFIG.value
DEFAULT = ConfigSource.DEFAULT_CONFIG.value
SECRET = "hunter2-not-printed"

# Keys kipper does not act on, one of each kind Kafka has.
UNACTED = {
    "ssl.keystore.type": "PKCS12",                          # a string
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",       # a list
    "ssl.keystore.password": SECRET,                        # a password
    "principal.builder.class": "com.example.PrincipalBuilder",  # a class
    "log.cleaner.dedupe.buffer.size": "268435456",          # a long
    "num.network.threads": "5",                             # an int
    "log.cleaner.delete.retention.ms": "1000",              # behind topic config delete.retention.ms
}
# Kafka's defaults of keys the file leaves alone.
DEFAULTS = {"num.io.threads": "8", "delete.topic.enable": "true", "log.cleaner.threads": "1",
            "ssl.protocol": "TLSv1.3", "offsets.topic.replication.factor": "3"}


def synonyms(b, rtype, name):
    """{config: [(synonym, value, source)]} as kafka-python's AdminClient reads
    them (DescribeConfigs v1 with include_synonyms; confluent-kafka asks none)."""
    from kafka.admin import ConfigResource as KafkaResource, KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=b.bootstrap)
    try:
        response = admin.describe_configs([KafkaResource(rtype, name)], include_synonyms=True)[0]
    finally:
        admin.close()
    (error, _, _, _, entries), = response.resources
    assert error == 0
    return {e[0]: [tuple(s) for s in e[5]] for e in entries}


def describe(b, rtype, name):
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    fs = admin.describe_configs([ConfigResource(rtype, name)])
    return list(fs.values())[0].result(timeout=30)


def test_unacted_keys_start_logged_once_and_reported(make_broker):
    b = make_broker(extra=dict(UNACTED, **{"log.retention.ms": "3600000", "log.retention.hours": "2"}))
    lines = [line for line in b.log().splitlines() if "accepted, not acted on:" in line]
    assert len(lines) == 1, lines
    for key, value in UNACTED.items():
        shown = "[hidden]" if key == "ssl.keystore.password" else value
        assert "%s=%s" % (key, shown) in lines[0], lines[0]
    assert "log.retention" not in lines[0]   # kipper acts on them
    assert SECRET not in b.log()

    entries = describe(b, "broker", "1")
    for key, value in UNACTED.items():
        e = entries[key]
        assert e.source == STATIC, (key, e)
        if key == "ssl.keystore.password":
            assert e.is_sensitive and e.value is None, e
        else:
            assert e.value == value and not e.is_sensitive, (key, e)
    for key, value in DEFAULTS.items():
        assert (entries[key].value, entries[key].source) == (value, DEFAULT), (key, entries[key])
    # Keys whose default is kipper's own report the value in force (docs/configuration.md).
    assert (entries["queued.max.request.bytes"].value, entries["queued.max.request.bytes"].source) == \
        ("104857600", DEFAULT)
    unset_password = entries["ssl.truststore.password"]
    assert unset_password.is_sensitive and unset_password.value is None and unset_password.source == DEFAULT
    assert entries["broker.id"].is_read_only and entries["broker.id"].value == "1"
    assert not entries["num.network.threads"].is_read_only        # cluster-wide in Kafka
    assert entries["ssl.keystore.type"].is_read_only is False      # per-broker in Kafka
    assert entries["log.cleaner.enable"].is_read_only
    # Kafka's synonyms: the setting's names in priority order, each at its level.
    syn = synonyms(b, "BROKER", "1")
    assert syn["log.retention.ms"] == [("log.retention.ms", "3600000", STATIC), ("log.retention.hours", "2", STATIC),
                                       ("log.retention.hours", "168", DEFAULT)], syn["log.retention.ms"]
    assert syn["ssl.keystore.password"] == [("ssl.keystore.password", None, STATIC)]
    assert syn["num.io.threads"] == [("num.io.threads", "8", DEFAULT)]

    # A topic config without an override has the static broker key's value.
    b.create_topic("plain")
    topic = describe(b, "topic", "plain")
    delete_retention = topic["delete.retention.ms"]
    assert (delete_retention.value, delete_retention.source) == ("1000", STATIC), delete_retention
    assert (topic["retention.ms"].value, topic["retention.ms"].source) == ("3600000", STATIC), topic["retention.ms"]
    syn = synonyms(b, "TOPIC", "plain")
    assert syn["delete.retention.ms"] == [("log.cleaner.delete.retention.ms", "1000", STATIC),
                                          ("log.cleaner.delete.retention.ms", "86400000", DEFAULT)]
    assert syn["retention.ms"] == [("log.retention.ms", "3600000", STATIC), ("log.retention.hours", "2", STATIC),
                                   ("log.retention.hours", "168", DEFAULT)], syn["retention.ms"]
    assert syn["flush.messages"] == [("log.flush.interval.messages", "9223372036854775807", DEFAULT)]


@pytest.mark.parametrize("key,value,allowed", [
    ("num.network.threads", "abc", "Not a number of type INT"),
    ("background.threads", "0", "Value must be at least 1"),
    ("offsets.topic.replication.factor", "70000", "Not a number of type SHORT"),
    ("ssl.client.auth", "maybe", "String must be one of: required, requested, none"),
    ("delete.topic.enable", "sometimes", "Expected value to be either true or false"),
    ("principal.builder.class", "not a class", "could not be found"),
])
def test_bad_value_of_an_unacted_key_stops_the_broker(make_broker, key, value, allowed):
    b = make_broker(extra={key: value}, start=False)
    b.start(wait=False)
    assert b.wait_exit() == 1
    assert re.search(r"Invalid value %s for configuration %s: .*%s" % (re.escape(value), re.escape(key),
                                                                         re.escape(allowed)), b.log()), b.log()
