"""Just enough of Kafka's wire protocol, written by hand, to talk to the broker
byte by byte: request framing, record batches v2 (with a table-driven CRC-32C),
and the requests the broker tests send raw (Metadata v1/v4, Produce v8,
Fetch v4 and v11, ListOffsets v1, InitProducerId v1). Nothing here comes from a Kafka
client library, so a test using it checks the broker against the protocol
itself rather than against one client's reading of it.

    conn = KafkaConn(port)
    pid, epoch = conn.init_producer_id()
    batch = record_batch([Record(b"k", b"v")], producer_id=pid, producer_epoch=epoch, base_sequence=0)
    conn.produce("t", 0, batch)          # -> ProducePartition(error, base_offset, ...)
    conn.fetch("t", 0, 0)                # -> FetchPartition(error, high_watermark, records bytes)
    parse_record_batches(records)        # -> [Batch(..., records=[Record(...)])]
"""
import socket
import struct
from collections import namedtuple

# ---- CRC-32C (Castagnoli), table-driven ----

_CRC32C_POLY = 0x82F63B78   # reflected Castagnoli polynomial


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _CRC32C_POLY if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    """CRC-32C of data, as record batches v2 carry it (crc32c(b"123456789") == 0xE3069283)."""
    crc ^= 0xFFFFFFFF
    table = _CRC32C_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

# ---- primitive encoding ----


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(n):
    return uvarint(zigzag(n) & 0xFFFFFFFFFFFFFFFF)


def kstring(s):
    """Kafka STRING / NULLABLE_STRING (int16 length)."""
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">h", len(b)) + b


def kbytes(b):
    """Kafka BYTES / NULLABLE_BYTES (int32 length)."""
    if b is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(b)) + b


def karray(items):
    """Kafka ARRAY of already-encoded items (int32 count); None is a null array."""
    if items is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(items)) + b"".join(items)


def cstring(s):
    """Kafka COMPACT_(NULLABLE_)STRING (uvarint length + 1)."""
    if s is None:
        return b"\x00"
    b = s.encode() if isinstance(s, str) else s
    return uvarint(len(b) + 1) + b


def carray(items):
    """Kafka COMPACT_ARRAY of already-encoded items; None is a null array."""
    if items is None:
        return b"\x00"
    return uvarint(len(items) + 1) + b"".join(items)


NO_TAGS = b"\x00"   # an empty tagged-field buffer


def request_frame(api_key, version, correlation_id, body=b"", client_id="kipper-test", flexible=False):
    """Size prefix + request header (v1, or v2 with an empty tag buffer) + body."""
    cid = client_id.encode()
    hdr = struct.pack(">hhih", api_key, version, correlation_id, len(cid)) + cid
    if flexible:
        hdr += b"\x00"
    payload = hdr + body
    return struct.pack(">i", len(payload)) + payload


def recv_exact(sock, n):
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return bytes(data)


def recv_frame(sock):
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, size)


def is_closed(sock, timeout=5.0):
    """True when the peer closed the connection (EOF or reset) within timeout."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


class Reader:
    """Big-endian reader over a response body, with Kafka's varints."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def raw(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("%d bytes wanted at %d of %d" % (n, self.pos, len(self.data)))
        v = self.data[self.pos:self.pos + n]
        self.pos += n
        return v

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def varint(self):
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    def string(self):
        n = self.take(">h")
        return None if n < 0 else self.raw(n).decode()

    def bytes(self):
        n = self.take(">i")
        return None if n < 0 else self.raw(n)

    def array(self, item):
        n = self.take(">i")
        return None if n < 0 else [item(self) for _ in range(n)]

    def compact_array_len(self):
        return self.uvarint() - 1

    def cstring(self):
        n = self.uvarint() - 1
        return None if n < 0 else self.raw(n).decode()

    def carray(self, item):
        """A compact array whose items each end with a tag buffer."""
        n = self.uvarint() - 1
        if n < 0:
            return None
        out = []
        for _ in range(n):
            out.append(item(self))
            self.skip_tags()
        return out

    def cint32s(self):
        return [self.take(">i") for _ in range(self.uvarint() - 1)]

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()

    def done(self):
        return self.pos == len(self.data)


def parse_api_versions(resp, version):
    """(correlation id, error code, {api key: (min, max)}, throttle ms) of an
    ApiVersions response (header v0 always, KIP-511)."""
    r = Reader(resp)
    corr = r.take(">i")
    error = r.take(">h")
    flex = version >= 3
    n = r.compact_array_len() if flex else r.take(">i")
    apis = {}
    for _ in range(n):
        key, lo, hi = r.take(">h"), r.take(">h"), r.take(">h")
        if flex:
            r.skip_tags()
        apis[key] = (lo, hi)
    throttle = r.take(">i") if version >= 1 else None
    if flex:
        r.skip_tags()
    assert r.done(), "trailing bytes in ApiVersions v%d response" % version
    return corr, error, apis, throttle


# ---- record batches v2 ----

CODEC_NONE = 0
ATTR_LOG_APPEND_TIME = 0x08
BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")   # 61 bytes, up to and including the record count


class Record(namedtuple("Record", "key value headers timestamp_delta offset_delta")):
    """One record; headers is a list of (str key, bytes-or-None value)."""
    __slots__ = ()

    def __new__(cls, key, value, headers=(), timestamp_delta=0, offset_delta=None):
        return super().__new__(cls, key, value, list(headers), timestamp_delta, offset_delta)


Batch = namedtuple("Batch", "base_offset length leader_epoch magic crc attributes last_offset_delta "
                            "base_timestamp max_timestamp producer_id producer_epoch base_sequence records "
                            "crc_ok")


def encode_record(rec, offset_delta):
    def opt(b):
        return varint(-1) if b is None else varint(len(b)) + b
    body = (b"\x00" + varint(rec.timestamp_delta) + varint(offset_delta) + opt(rec.key) + opt(rec.value) +
            varint(len(rec.headers)))
    for hk, hv in rec.headers:
        hk = hk.encode() if isinstance(hk, str) else hk
        body += varint(len(hk)) + hk + opt(hv)
    return varint(len(body)) + body


def record_batch(records, base_timestamp=1700000000000, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                 attributes=0, base_offset=0, leader_epoch=-1, max_timestamp=None):
    """A magic-2 record batch of uncompressed records, with a correct CRC-32C."""
    recs = b"".join(encode_record(r, i if r.offset_delta is None else r.offset_delta)
                    for i, r in enumerate(records))
    last_delta = len(records) - 1
    if max_timestamp is None:
        max_timestamp = base_timestamp + max((r.timestamp_delta for r in records), default=0)
    after_crc = struct.pack(">hiqqqhii", attributes, last_delta, base_timestamp, max_timestamp, producer_id,
                            producer_epoch, base_sequence, len(records)) + recs
    length = 4 + 1 + 4 + len(after_crc)   # leader epoch, magic, crc, the rest
    return (struct.pack(">qiib", base_offset, length, leader_epoch, 2) +
            struct.pack(">I", crc32c(after_crc)) + after_crc)


def parse_records(data, count):
    r = Reader(data)
    out = []
    for _ in range(count):
        length = r.varint()
        end = r.pos + length
        r.take(">b")   # attributes
        ts_delta = r.varint()
        off_delta = r.varint()
        klen = r.varint()
        key = None if klen < 0 else r.raw(klen)
        vlen = r.varint()
        value = None if vlen < 0 else r.raw(vlen)
        headers = []
        for _ in range(r.varint()):
            hk = r.raw(r.varint()).decode()
            hl = r.varint()
            headers.append((hk, None if hl < 0 else r.raw(hl)))
        if r.pos != end:
            raise ValueError("record length %d does not match its fields" % length)
        out.append(Record(key, value, headers, ts_delta, off_delta))
    return out


def parse_record_batches(data):
    """Every whole batch in a Fetch answer's records (a partial last batch is
    skipped, as clients do). Compressed batches keep records=None."""
    out = []
    pos = 0
    while len(data) - pos >= BATCH_HEADER.size:
        (base_offset, length, leader_epoch, magic, crc, attributes, last_delta, base_ts, max_ts, pid, pepoch,
         base_seq, count) = BATCH_HEADER.unpack_from(data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        if magic != 2:
            raise ValueError("magic %d batch at %d" % (magic, pos))
        body = data[pos + 21:end]
        records = parse_records(data[pos + 61:end], count) if attributes & 0x07 == CODEC_NONE else None
        out.append(Batch(base_offset, length, leader_epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
                         pid, pepoch, base_seq, records, crc32c(body) == crc))
        pos = end
    return out


# ---- requests ----

API_PRODUCE, API_FETCH, API_LIST_OFFSETS, API_METADATA = 0, 1, 2, 3
API_API_VERSIONS, API_CREATE_TOPICS, API_DELETE_TOPICS, API_INIT_PRODUCER_ID = 18, 19, 20, 22
API_ELECT_LEADERS, API_ALTER_PARTITION_REASSIGNMENTS, API_LIST_PARTITION_REASSIGNMENTS = 43, 45, 46
API_OFFSET_DELETE = 47

ProducePartition = namedtuple("ProducePartition", "index error base_offset log_append_time log_start_offset "
                                                  "record_errors error_message")
FetchPartition = namedtuple("FetchPartition", "index error high_watermark last_stable_offset log_start_offset "
                                              "records")
MetadataPartition = namedtuple("MetadataPartition", "error index leader replicas isr")
MetadataTopic = namedtuple("MetadataTopic", "error name internal partitions")
Metadata = namedtuple("Metadata", "brokers cluster_id controller topics")


class KafkaConn:
    """One client connection speaking raw Kafka requests (non-flexible versions)."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0, client_id="kipper-test"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.corr = 0
        self.client_id = client_id

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def send(self, api_key, version, body, flexible=False):
        self.corr += 1
        self.sock.sendall(request_frame(api_key, version, self.corr, body, self.client_id, flexible))
        return self.corr

    def call(self, api_key, version, body, flexible=False):
        """Send one request and return a Reader positioned after the response header."""
        corr = self.send(api_key, version, body, flexible)
        resp = recv_frame(self.sock)
        r = Reader(resp)
        got = r.take(">i")
        assert got == corr, "correlation id %d, expected %d" % (got, corr)
        if flexible:
            r.skip_tags()
        return r

    # -- OffsetDelete --
    def offset_delete(self, group, partitions):
        """OffsetDelete v0 of {topic: [partition, ...]}: (group error, throttle ms,
        [(topic, partition, error), ...] in answer order)."""
        body = kstring(group) + karray([kstring(t) + karray([struct.pack(">i", p) for p in ps])
                                        for t, ps in partitions.items()])
        r = self.call(API_OFFSET_DELETE, 0, body)
        error, throttle = r.take(">h"), r.take(">i")
        rows = []
        for _ in range(r.take(">i")):
            topic = r.string()
            rows += [(topic, r.take(">i"), r.take(">h")) for _ in range(r.take(">i"))]
        assert r.done(), "trailing bytes in an OffsetDelete answer"
        return error, throttle, rows

    # -- Metadata --
    def metadata(self, topics=None, version=4, allow_auto_create=True):
        """Metadata v1 or v4; topics None asks for all."""
        body = karray(None if topics is None else [kstring(t) for t in topics])
        if version >= 4:
            body += struct.pack(">?", allow_auto_create)
        r = self.call(API_METADATA, version, body)
        if version >= 3:
            r.take(">i")   # throttle
        brokers = r.array(lambda r: (r.take(">i"), r.string(), r.take(">i"), r.string()))
        cluster_id = r.string() if version >= 2 else None
        controller = r.take(">i")

        def partition(r):
            p = MetadataPartition(r.take(">h"), r.take(">i"), r.take(">i"), r.array(lambda r: r.take(">i")),
                                  r.array(lambda r: r.take(">i")))
            if version >= 5:
                r.array(lambda r: r.take(">i"))
            return p

        topics_out = r.array(lambda r: MetadataTopic(r.take(">h"), r.string(), r.take(">?"), r.array(partition)))
        assert r.done()
        return Metadata(brokers, cluster_id, controller, {t.name: t for t in topics_out})

    # -- Produce v8 --
    def produce(self, topic, partition, records, acks=-1, timeout_ms=10000, transactional_id=None):
        """Produce v8 of one partition's records bytes; the ProducePartition answer (None for acks=0)."""
        body = (kstring(transactional_id) + struct.pack(">hi", acks, timeout_ms) +
                karray([kstring(topic) + karray([struct.pack(">i", partition) + kbytes(records)])]))
        if acks == 0:
            self.send(API_PRODUCE, 8, body)
            return None
        r = self.call(API_PRODUCE, 8, body)
        topics = r.array(lambda r: (r.string(), r.array(lambda r: ProducePartition(
            r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q"), r.take(">q"),
            r.array(lambda r: (r.take(">i"), r.string())), r.string()))))
        r.take(">i")   # throttle
        assert r.done()
        assert len(topics) == 1 and topics[0][0] == topic and len(topics[0][1]) == 1
        return topics[0][1][0]

    # -- Fetch v4 --
    def fetch(self, topic, partition, offset, max_bytes=10 << 20, max_wait_ms=0, min_bytes=0):
        body = (struct.pack(">iiiib", -1, max_wait_ms, min_bytes, max_bytes, 0) +
                karray([kstring(topic) + karray([struct.pack(">iqi", partition, offset, max_bytes)])]))
        r = self.call(API_FETCH, 4, body)
        r.take(">i")   # throttle

        def part(r):
            index, error, hw, lso = r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q")
            r.array(lambda r: (r.take(">q"), r.take(">q")))   # aborted transactions
            return FetchPartition(index, error, hw, lso, None, r.bytes() or b"")

        topics = r.array(lambda r: (r.string(), r.array(part)))
        assert r.done()
        return topics[0][1][0]

    def fetch_v11(self, topic, partition, offset, rack_id="", replica_id=-1, current_leader_epoch=-1,
                  max_wait_ms=0, min_bytes=0, max_bytes=10 << 20):
        """Fetch v11 (KIP-392's rack id): (FetchPartition, preferred read replica)."""
        body = (struct.pack(">iiiibii", replica_id, max_wait_ms, min_bytes, max_bytes, 0, 0, -1) +
                karray([kstring(topic) + karray([struct.pack(">iiqqi", partition, current_leader_epoch, offset, -1,
                                                             max_bytes)])]) +
                karray([]) + kstring(rack_id))
        r = self.call(API_FETCH, 11, body)
        r.take(">i"), r.take(">h"), r.take(">i")   # throttle, error, session id

        def part(r):
            index, error, hw, lso, start = r.take(">i"), r.take(">h"), r.take(">q"), r.take(">q"), r.take(">q")
            r.array(lambda r: (r.take(">q"), r.take(">q")))   # aborted transactions
            preferred = r.take(">i")
            return FetchPartition(index, error, hw, lso, start, r.bytes() or b""), preferred

        topics = r.array(lambda r: (r.string(), r.array(part)))
        assert r.done()
        return topics[0][1][0]

    def fetch_all(self, topic, partition, start=0, end=None):
        """Every record from start up to end (default: the high watermark), as
        (offset, Record, Batch) triples."""
        out = []
        offset = start
        while True:
            p = self.fetch(topic, partition, offset)
            assert p.error == 0, "fetch error %d at offset %d" % (p.error, offset)
            stop = p.high_watermark if end is None else end
            if offset >= stop:
                return out
            batches = parse_record_batches(p.records)
            assert batches, "no batch at offset %d below %d" % (offset, stop)
            for b in batches:
                for rec in b.records:
                    o = b.base_offset + rec.offset_delta
                    if offset <= o < stop:
                        out.append((o, rec, b))
                offset = max(offset, b.base_offset + b.last_offset_delta + 1)

    # -- ListOffsets v1 --
    def list_offset(self, topic, partition, timestamp):
        """(error, timestamp, offset) for a timestamp, -1 latest, -2 earliest."""
        body = struct.pack(">i", -1) + karray([kstring(topic) + karray([struct.pack(">iq", partition, timestamp)])])
        r = self.call(API_LIST_OFFSETS, 1, body)
        topics = r.array(lambda r: (r.string(), r.array(lambda r: (r.take(">i"), r.take(">h"), r.take(">q"),
                                                                   r.take(">q")))))
        assert r.done()
        _, error, ts, offset = topics[0][1][0]
        return error, ts, offset

    # -- InitProducerId v1 --
    def init_producer_id(self, transactional_id=None, timeout_ms=60000):
        """(error, producer id, epoch)."""
        r = self.call(API_INIT_PRODUCER_ID, 1, kstring(transactional_id) + struct.pack(">i", timeout_ms))
        r.take(">i")   # throttle
        out = r.take(">h"), r.take(">q"), r.take(">h")
        assert r.done()
        return out

    # -- ElectLeaders v1 (non-flexible) --
    def elect_leaders(self, partitions, unclean=False, timeout_ms=30000):
        """partitions: {topic: [ids]} or None (all). (error, {(topic, id): (error, message)})."""
        tps = None if partitions is None else [
            kstring(t) + karray([struct.pack(">i", p) for p in ps]) for t, ps in partitions.items()]
        body = struct.pack(">b", 1 if unclean else 0) + karray(tps) + struct.pack(">i", timeout_ms)
        r = self.call(API_ELECT_LEADERS, 1, body)
        r.take(">i")   # throttle
        error = r.take(">h")
        results = {}
        for topic, parts in r.array(lambda r: (r.string(), r.array(lambda r: (r.take(">i"), r.take(">h"),
                                                                             r.string())))):
            for p, err, msg in parts:
                results[(topic, p)] = (err, msg)
        assert r.done()
        return error, results

    # -- AlterPartitionReassignments v0 (flexible) --
    def alter_partition_reassignments(self, moves, timeout_ms=30000):
        """moves: {(topic, id): [replicas] or None (cancel)}. (error, {(topic, id): (error, message)})."""
        by_topic = {}
        for (t, p), reps in moves.items():
            by_topic.setdefault(t, []).append(
                struct.pack(">i", p) + (carray(None) if reps is None else carray([struct.pack(">i", x) for x in reps]))
                + NO_TAGS)
        body = struct.pack(">i", timeout_ms) + carray([cstring(t) + carray(ps) + NO_TAGS
                                                        for t, ps in by_topic.items()]) + NO_TAGS
        r = self.call(API_ALTER_PARTITION_REASSIGNMENTS, 0, body, flexible=True)
        r.take(">i")   # throttle
        error, _message = r.take(">h"), r.cstring()
        results = {}
        for topic, parts in r.carray(lambda r: (r.cstring(), r.carray(lambda r: (r.take(">i"), r.take(">h"),
                                                                                r.cstring())))):
            for p, err, msg in parts:
                results[(topic, p)] = (err, msg)
        r.skip_tags()
        assert r.done()
        return error, results

    # -- ListPartitionReassignments v0 (flexible) --
    def list_partition_reassignments(self, partitions=None, timeout_ms=30000):
        """partitions: {topic: [ids]} or None (all). (error, {(topic, id): (replicas, adding, removing)})."""
        topics = None if partitions is None else [
            cstring(t) + carray([struct.pack(">i", p) for p in ps]) + NO_TAGS for t, ps in partitions.items()]
        r = self.call(API_LIST_PARTITION_REASSIGNMENTS, 0, struct.pack(">i", timeout_ms) + carray(topics) + NO_TAGS,
                      flexible=True)
        r.take(">i")   # throttle
        error, _message = r.take(">h"), r.cstring()
        out = {}
        for topic, parts in r.carray(lambda r: (r.cstring(), r.carray(lambda r: (r.take(">i"), r.cint32s(),
                                                                                r.cint32s(), r.cint32s())))):
            for p, reps, adding, removing in parts:
                out[(topic, p)] = (reps, adding, removing)
        r.skip_tags()
        assert r.done()
        return error, out
