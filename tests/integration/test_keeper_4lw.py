"""Four-letter words: ruok stat srvr conf cons mntr wchs envi, their formats and
values, and gating by 4lw.commands.whitelist — as Apache ZooKeeper 3.8 answers."""
import re

from harness import four_letter_word, wait_until
from zkwire import MODE, OP, enc_create, enc_path_watch

MNTR_KEYS = [
    "zk_version", "zk_avg_latency", "zk_max_latency", "zk_min_latency", "zk_packets_received",
    "zk_packets_sent", "zk_num_alive_connections", "zk_outstanding_requests", "zk_server_state",
    "zk_znode_count", "zk_watch_count", "zk_ephemerals_count", "zk_approximate_data_size",
    "zk_open_file_descriptor_count", "zk_max_file_descriptor_count", "zk_uptime",
    "zk_global_sessions",
]
FRESH_ZNODE_COUNT = 5   # ZooKeeper counts "", "/", /zookeeper, /zookeeper/quota, /zookeeper/config


def word(server, w):
    return four_letter_word(server.port, w)


def mntr(server):
    out = word(server, "mntr")
    assert out.endswith("\n")
    values = {}
    for line in out.splitlines():
        key, sep, value = line.partition("\t")
        assert sep == "\t" and key.startswith("zk_"), "bad mntr line %r" % line
        values[key] = value
    return values


def srvr_fields(text):
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields[key] = value
    return fields


def test_ruok(shared_keeper):
    """ruok answers exactly 'imok'."""
    assert word(shared_keeper, "ruok") == "imok"


def test_srvr_format(keeper, wire_factory):
    """srvr lists version, latency, counters, the last zxid, standalone mode and node count."""
    c = wire_factory(keeper)
    hdr, _ = c.call(OP.CREATE, enc_create("/srvr", b""))
    out = word(keeper, "srvr")
    lines = out.splitlines()
    assert [l.split(":")[0] for l in lines] == [
        "Zookeeper version", "Latency min/avg/max", "Received", "Sent", "Connections",
        "Outstanding", "Zxid", "Mode", "Node count"]
    f = srvr_fields(out)
    assert re.fullmatch(r"\d+/\d+(\.\d+)?/\d+", f["Latency min/avg/max"])
    assert int(f["Received"]) >= 2 and int(f["Sent"]) >= 2
    assert int(f["Connections"]) == 2                     # our client and this 4lw connection
    assert f["Outstanding"] == "0"
    assert f["Zxid"] == "0x%x" % hdr.zxid
    assert f["Mode"] == "standalone"
    assert int(f["Node count"]) == FRESH_ZNODE_COUNT + 1
    assert out.endswith("\n")


def test_stat_lists_clients(keeper, wire_factory):
    """stat is srvr plus a Clients section with one line per connection."""
    c = wire_factory(keeper)
    c.ping()
    local_port = c.sock.getsockname()[1]
    out = word(keeper, "stat")
    lines = out.splitlines()
    assert lines[0].startswith("Zookeeper version: ")
    assert lines[1] == "Clients:"
    ours = [l for l in lines if l.startswith(" /127.0.0.1:%d[" % local_port)]
    assert len(ours) == 1
    assert re.fullmatch(r" /127\.0\.0\.1:%d\[1\]\(queued=\d+,recved=\d+,sent=\d+\)" % local_port, ours[0])
    f = srvr_fields(out)
    assert f["Mode"] == "standalone" and int(f["Node count"]) == FRESH_ZNODE_COUNT


def test_conf_reports_configuration(make_keeper):
    """conf reports clientPort, tickTime, maxClientCnxns and the session timeout bounds."""
    server = make_keeper(tick_time=150, extra={"maxClientCnxns": 17})
    conf = dict(l.split("=", 1) for l in word(server, "conf").splitlines() if "=" in l)
    assert conf["clientPort"] == str(server.port)
    assert conf["tickTime"] == "150"
    assert conf["maxClientCnxns"] == "17"
    assert conf["minSessionTimeout"] == "300"
    assert conf["maxSessionTimeout"] == "3000"
    assert conf["dataDir"].startswith(server.data_dir)
    assert conf["serverId"] == "0"


def test_cons_lists_session_details(keeper, wire_factory):
    """cons shows our connection with its session id, timeout, last op, last cxid and zxid."""
    c = wire_factory(keeper, timeout_ms=3000)
    c.create("/cons", b"")
    c.call(OP.EXISTS, enc_path_watch("/cons"))
    local_port = c.sock.getsockname()[1]
    out = word(keeper, "cons")
    ours = [l for l in out.splitlines() if l.startswith(" /127.0.0.1:%d[" % local_port)]
    assert len(ours) == 1, out
    line = ours[0]
    assert "sid=0x%x," % c.session.session_id in line
    assert ",to=3000," in line
    assert ",lop=EXIS," in line
    assert ",lcxid=0x2," in line
    assert ",lzxid=0x%x," % c.last_zxid in line
    assert re.match(r" /127\.0\.0\.1:\d+\[1\]\(queued=\d+,recved=\d+,sent=\d+,sid=0x[0-9a-f]+,"
                    r"lop=\w+,est=\d+,to=\d+,lcxid=0x[0-9a-f]+,lzxid=0x[0-9a-f]+,lresp=\d+,"
                    r"llat=\d+,minlat=\d+,avglat=\d+,maxlat=\d+\)$", line), line


def test_mntr_has_zookeepers_keys(shared_keeper):
    """mntr is tab-separated key/value lines with ZooKeeper's key names."""
    m = mntr(shared_keeper)
    missing = [k for k in MNTR_KEYS if k not in m]
    assert not missing, "mntr lacks %s" % missing
    assert m["zk_server_state"] == "standalone"
    assert m["zk_outstanding_requests"] == "0"
    for k in MNTR_KEYS:
        if k not in ("zk_version", "zk_server_state"):
            float(m[k])
    assert int(m["zk_max_file_descriptor_count"]) >= int(m["zk_open_file_descriptor_count"]) > 0
    assert int(m["zk_min_latency"]) <= float(m["zk_avg_latency"]) <= int(m["zk_max_latency"])


def test_mntr_counts_follow_the_tree(keeper, wire_factory):
    """mntr's znode, ephemeral, watch, data size, session and connection counts track changes."""
    # the start-up probe's connection may still be closing: wait for it to go
    m0 = wait_until(lambda: (lambda m: m if m["zk_num_alive_connections"] == "1" else None)(mntr(keeper)),
                    timeout=5, what="only the 4lw connection to be alive")
    assert int(m0["zk_znode_count"]) == FRESH_ZNODE_COUNT
    assert m0["zk_ephemerals_count"] == "0" and m0["zk_watch_count"] == "0"
    assert m0["zk_num_alive_connections"] == "1"                # just this 4lw connection
    size0 = int(m0["zk_approximate_data_size"])

    a = wire_factory(keeper)
    b = wire_factory(keeper)
    a.create("/p1", b"12345")
    a.create("/p1/e1", b"ab", flags=MODE.EPHEMERAL)
    b.create("/e2", b"", flags=MODE.EPHEMERAL)
    a.get("/p1", watch=True)
    b.exists("/p1", watch=True)
    a.children("/", watch=True)
    m1 = mntr(keeper)
    assert int(m1["zk_znode_count"]) == FRESH_ZNODE_COUNT + 3
    assert m1["zk_ephemerals_count"] == "2"
    assert m1["zk_watch_count"] == "3"
    assert m1["zk_global_sessions"] == "2"
    assert m1["zk_num_alive_connections"] == "3"
    # data size = sum of path lengths and data lengths
    assert int(m1["zk_approximate_data_size"]) - size0 == (3 + 5) + (6 + 2) + (3 + 0)
    assert int(m1["zk_packets_received"]) - int(m0["zk_packets_received"]) >= 8
    assert int(m1["zk_packets_sent"]) - int(m0["zk_packets_sent"]) >= 8

    b.close_session()
    b.wait_closed(5)
    # b's watch goes with its connection; deleting b's ephemeral /e2 fires a's child watch on /
    assert a.wait_event(5).path == "/"
    m2 = wait_until(lambda: (lambda m: m if m["zk_watch_count"] == "1" else None)(mntr(keeper)),
                    timeout=5, what="the closed session's watch to be dropped")
    assert m2["zk_ephemerals_count"] == "1"
    assert int(m2["zk_znode_count"]) == FRESH_ZNODE_COUNT + 2
    assert m2["zk_global_sessions"] == "1"


def test_wchs_counts_data_watches(keeper, wire_factory):
    """wchs summarises (data) watches: connections, paths and total; fired watches go away."""
    assert word(keeper, "wchs") == "0 connections watching 0 paths\nTotal watches:0\n"
    a = wire_factory(keeper)
    b = wire_factory(keeper)
    a.create("/w1", b"")
    a.create("/w2", b"")
    a.get("/w1", watch=True)
    a.exists("/w2", watch=True)
    b.get("/w1", watch=True)
    assert word(keeper, "wchs") == "2 connections watching 2 paths\nTotal watches:3\n"
    a.set("/w1", b"x")
    assert b.wait_event(5).path == "/w1"
    # (ZooKeeper may still count a connection whose watches all fired)
    assert re.fullmatch(r"[12] connections watching 1 paths\nTotal watches:1\n", word(keeper, "wchs"))


def test_envi_reports_a_38_version(shared_keeper, zk):
    """envi starts with 'Environment:' and names a 3.8 zookeeper.version, which kazoo parses."""
    out = word(shared_keeper, "envi")
    assert out.splitlines()[0] == "Environment:"
    versions = [l for l in out.splitlines() if l.startswith("zookeeper.version=")]
    assert len(versions) == 1 and versions[0].startswith("zookeeper.version=3.8.")
    assert zk.server_version()[:2] == (3, 8)


def test_mntr_version_matches_srvr(shared_keeper):
    """mntr's zk_version equals the version srvr reports."""
    version = srvr_fields(word(shared_keeper, "srvr"))["Zookeeper version"]
    assert mntr(shared_keeper)["zk_version"] == version
    assert version.startswith("3.8.")


def test_whitelist_gates_words(make_keeper):
    """Words outside 4lw.commands.whitelist get ZooKeeper's refusal; srvr is always allowed."""
    server = make_keeper(extra={"4lw.commands.whitelist": "ruok, mntr"})
    assert word(server, "ruok") == "imok"
    assert "zk_server_state\tstandalone" in word(server, "mntr")
    assert word(server, "srvr").startswith("Zookeeper version: ")
    for w in ("stat", "conf", "cons", "wchs", "envi", "dump", "wchc"):
        assert word(server, w) == "%s is not executed because it is not in the whitelist.\n" % w


def test_unknown_word_is_dropped(shared_keeper, zk):
    """An unknown four-letter word gets no answer (the connection is closed); the server lives on."""
    assert word(shared_keeper, "xyzw") == ""
    assert word(shared_keeper, "ruok") == "imok"
    assert zk.exists("/") is not None
