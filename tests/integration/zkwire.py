"""A small, synchronous, raw-socket ZooKeeper (jute) client for tests.

kazoo 2.8 lacks several ZooKeeper 3.8 operations (TTL and container nodes,
addWatch, removeWatches/checkWatches, multiRead, getEphemerals,
getAllChildrenNumber, setWatches after reconnect) and hides the wire details
(xids, zxids in reply headers, exact error codes).  WireClient speaks the
protocol byte for byte so tests can assert exactly what the server sends.

One WireClient is one TCP connection.  Requests are answered in order; watch
notifications (xid -1) that arrive in between are kept in `events`.

    c = WireClient(port)
    c.connect()
    hdr, body = c.call(OP.CREATE, enc_create("/a", b"x", OPEN_ACL, 0))
    path = Reader(body).string()
"""
import collections
import select
import socket
import struct
import time

# ---- constants (ZooDefs.OpCode, KeeperException.Code, Watcher.Event) --------


class OP:
    NOTIFICATION = 0
    CREATE = 1
    DELETE = 2
    EXISTS = 3
    GET_DATA = 4
    SET_DATA = 5
    GET_ACL = 6
    SET_ACL = 7
    GET_CHILDREN = 8
    SYNC = 9
    PING = 11
    GET_CHILDREN2 = 12
    CHECK = 13
    MULTI = 14
    CREATE2 = 15
    RECONFIG = 16
    CHECK_WATCHES = 17
    REMOVE_WATCHES = 18
    CREATE_CONTAINER = 19
    DELETE_CONTAINER = 20
    CREATE_TTL = 21
    MULTI_READ = 22
    AUTH = 100
    SET_WATCHES = 101
    SASL = 102
    GET_EPHEMERALS = 103
    GET_ALL_CHILDREN_NUMBER = 104
    SET_WATCHES2 = 105
    ADD_WATCH = 106
    CREATE_SESSION = -10
    CLOSE_SESSION = -11
    ERROR = -1


class ERR:
    OK = 0
    SYSTEMERROR = -1
    RUNTIMEINCONSISTENCY = -2
    DATAINCONSISTENCY = -3
    CONNECTIONLOSS = -4
    MARSHALLINGERROR = -5
    UNIMPLEMENTED = -6
    OPERATIONTIMEOUT = -7
    BADARGUMENTS = -8
    APIERROR = -100
    NONODE = -101
    NOAUTH = -102
    BADVERSION = -103
    NOCHILDRENFOREPHEMERALS = -108
    NODEEXISTS = -110
    NOTEMPTY = -111
    SESSIONEXPIRED = -112
    INVALIDCALLBACK = -113
    INVALIDACL = -114
    AUTHFAILED = -115
    SESSIONMOVED = -118
    NOTREADONLY = -119
    EPHEMERALONLOCALSESSION = -120
    NOWATCHER = -121


class EV:
    NONE = -1
    NODE_CREATED = 1
    NODE_DELETED = 2
    NODE_DATA_CHANGED = 3
    NODE_CHILDREN_CHANGED = 4


class MODE:
    """CreateMode flags."""
    PERSISTENT = 0
    EPHEMERAL = 1
    PERSISTENT_SEQUENTIAL = 2
    EPHEMERAL_SEQUENTIAL = 3
    CONTAINER = 4
    PERSISTENT_WITH_TTL = 5
    PERSISTENT_SEQUENTIAL_WITH_TTL = 6


class WATCHER_TYPE:
    CHILDREN = 1
    DATA = 2
    ANY = 3


class ADD_WATCH_MODE:
    PERSISTENT = 0
    PERSISTENT_RECURSIVE = 1


STATE_SYNC_CONNECTED = 3
WATCH_XID = -1
PING_XID = -2
AUTH_XID = -4
SET_WATCHES_XID = -8

PERM_READ, PERM_WRITE, PERM_CREATE, PERM_DELETE, PERM_ADMIN = 1, 2, 4, 8, 16
PERM_ALL = 31
OPEN_ACL = [(PERM_ALL, "world", "anyone")]

Stat = collections.namedtuple(
    "Stat", "czxid mzxid ctime mtime version cversion aversion ephemeralOwner "
            "dataLength numChildren pzxid")
ReplyHeader = collections.namedtuple("ReplyHeader", "xid zxid err")
ConnectResponse = collections.namedtuple(
    "ConnectResponse", "protocol_version timeout session_id passwd read_only")
WatcherEvent = collections.namedtuple("WatcherEvent", "type state path")
STAT_STRUCT = struct.Struct("!qqqqiiiqiiq")


class ZKError(Exception):
    """A reply header with a non-zero err."""

    def __init__(self, code, header=None):
        super().__init__("ZooKeeper error %d" % code)
        self.code = code
        self.header = header


class ConnectionClosed(Exception):
    """The server closed the connection."""


# ---- jute encoding ------------------------------------------------------------


class Writer:
    def __init__(self):
        self.b = bytearray()

    def int(self, v):
        self.b += struct.pack("!i", v)
        return self

    def long(self, v):
        self.b += struct.pack("!q", v)
        return self

    def bool(self, v):
        self.b += b"\x01" if v else b"\x00"
        return self

    def buffer(self, v):
        if v is None:
            return self.int(-1)
        self.int(len(v))
        self.b += v
        return self

    def string(self, v):
        if v is None:
            return self.int(-1)
        return self.buffer(v.encode("utf-8"))

    def strings(self, vs):
        self.int(len(vs))
        for v in vs:
            self.string(v)
        return self

    def acls(self, acls):
        self.int(len(acls))
        for perms, scheme, ident in acls:
            self.int(perms).string(scheme).string(ident)
        return self

    def raw(self, data):
        self.b += data
        return self

    def bytes(self):
        return bytes(self.b)


class Reader:
    def __init__(self, data, offset=0):
        self.data = data
        self.off = offset

    def _take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.off)[0]
        self.off += struct.calcsize(fmt)
        return v

    def int(self):
        return self._take("!i")

    def long(self):
        return self._take("!q")

    def bool(self):
        return self._take("!B") != 0

    def buffer(self):
        n = self.int()
        if n < 0:
            return None
        if self.off + n > len(self.data):
            raise ValueError("buffer runs past the end of the packet")
        v = bytes(self.data[self.off:self.off + n])
        self.off += n
        return v

    def string(self):
        v = self.buffer()
        return None if v is None else v.decode("utf-8")

    def strings(self):
        n = self.int()
        return [self.string() for _ in range(max(n, 0))]

    def stat(self):
        v = Stat._make(STAT_STRUCT.unpack_from(self.data, self.off))
        self.off += STAT_STRUCT.size
        return v

    def acls(self):
        n = self.int()
        return [(self.int(), self.string(), self.string()) for _ in range(max(n, 0))]

    def remaining(self):
        return len(self.data) - self.off


def enc_path_watch(path, watch=False):
    return Writer().string(path).bool(watch).bytes()


def enc_path(path):
    return Writer().string(path).bytes()


def enc_create(path, data=b"", acl=OPEN_ACL, flags=0, ttl=None):
    w = Writer().string(path).buffer(data).acls(acl).int(flags)
    if ttl is not None:
        w.long(ttl)
    return w.bytes()


def enc_delete(path, version=-1):
    return Writer().string(path).int(version).bytes()


def enc_set_data(path, data, version=-1):
    return Writer().string(path).buffer(data).int(version).bytes()


def enc_check(path, version):
    return Writer().string(path).int(version).bytes()


def enc_set_acl(path, acl, version=-1):
    return Writer().string(path).acls(acl).int(version).bytes()


def enc_path_type(path, typ):
    """CheckWatchesRequest / RemoveWatchesRequest / AddWatchRequest."""
    return Writer().string(path).int(typ).bytes()


def enc_multi(ops):
    """ops: list of (opcode, encoded request body)."""
    w = Writer()
    for opcode, body in ops:
        w.int(opcode).bool(False).int(-1).raw(body)
    w.int(-1).bool(True).int(-1)
    return w.bytes()


def dec_multi(body):
    """Decode a MultiResponse into a list of (opcode, err, Reader-at-payload-or-value)."""
    r = Reader(body)
    out = []
    while True:
        typ, done, err = r.int(), r.bool(), r.int()
        if done:
            break
        if typ == OP.ERROR:
            out.append((typ, r.int(), None))
        elif typ == OP.CREATE:
            out.append((typ, err, r.string()))
        elif typ in (OP.CREATE2, OP.CREATE_TTL, OP.CREATE_CONTAINER):
            out.append((typ, err, (r.string(), r.stat())))
        elif typ in (OP.DELETE, OP.DELETE_CONTAINER, OP.CHECK):
            out.append((typ, err, None))
        elif typ == OP.SET_DATA:
            out.append((typ, err, r.stat()))
        elif typ == OP.GET_CHILDREN:
            out.append((typ, err, r.strings()))
        elif typ == OP.GET_DATA:
            out.append((typ, err, (r.buffer(), r.stat())))
        else:
            raise ValueError("unknown multi result type %d" % typ)
    return out


def enc_set_watches(relative_zxid, data=(), exist=(), child=(), persistent=None, recursive=None):
    w = Writer().long(relative_zxid).strings(list(data)).strings(list(exist)).strings(list(child))
    if persistent is not None or recursive is not None:
        w.strings(list(persistent or ())).strings(list(recursive or ()))
    return w.bytes()


def enc_connect(timeout_ms=10000, session_id=0, passwd=b"\x00" * 16, last_zxid=0,
                read_only=False, protocol_version=0):
    w = Writer().int(protocol_version).long(last_zxid).int(timeout_ms).long(session_id).buffer(passwd)
    if read_only is not None:
        w.bool(read_only)
    return w.bytes()


def frame(payload):
    return struct.pack("!i", len(payload)) + payload


# ---- the client ---------------------------------------------------------------


class WireClient:
    """One raw connection to a ZooKeeper-protocol server on 127.0.0.1."""

    def __init__(self, port, host="127.0.0.1", timeout=5.0):
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.xid = 0
        self.events = collections.deque()
        self.event_headers = []          # ReplyHeader of every notification seen
        self.session = None
        self.last_zxid = 0

    # -- framing
    def send_raw(self, data):
        self.sock.sendall(data)

    def send_packet(self, payload):
        self.sock.sendall(frame(payload))

    def _fill(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("timed out waiting for %d bytes" % n)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise ConnectionClosed("server closed the connection")
            self.buf += chunk

    def recv_packet(self, timeout=None):
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        self._fill(4, deadline)
        (n,) = struct.unpack("!i", self.buf[:4])
        if n < 0 or n > 64 * 1024 * 1024:
            raise ValueError("bad frame length %d from server" % n)
        self._fill(4 + n, deadline)
        pkt, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
        return pkt

    def wait_closed(self, timeout=None):
        """Wait until the server closes the connection (after draining any data).

        Returns the packets read before the close."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("server did not close the connection")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return True
            except socket.timeout:
                raise AssertionError("server did not close the connection")
            if not chunk:
                return True
            self.buf += chunk

    def is_closed(self, timeout=0.0):
        """True when the server has closed the socket (EOF/RST readable)."""
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            return False
        try:
            chunk = self.sock.recv(65536, socket.MSG_PEEK)
        except (ConnectionResetError, BlockingIOError):
            return True
        return chunk == b""

    # -- session
    def connect(self, timeout_ms=10000, session_id=0, passwd=b"\x00" * 16, last_zxid=0,
                read_only=False):
        self.send_packet(enc_connect(timeout_ms, session_id, passwd, last_zxid, read_only))
        r = Reader(self.recv_packet())
        proto, to, sid, pw = r.int(), r.int(), r.long(), r.buffer()
        ro = r.bool() if r.remaining() >= 1 else None
        self.session = ConnectResponse(proto, to, sid, pw, ro)
        return self.session

    def next_xid(self):
        self.xid += 1
        return self.xid

    def send(self, opcode, body=b"", xid=None):
        if xid is None:
            xid = self.next_xid()
        self.send_packet(Writer().int(xid).int(opcode).raw(body).bytes())
        return xid

    def read_reply(self, xid, timeout=None):
        """Read packets until the reply for xid; queue notifications."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            pkt = self.recv_packet(max(deadline - time.monotonic(), 0.001))
            r = Reader(pkt)
            hdr = ReplyHeader(r.int(), r.long(), r.int())
            if hdr.xid == WATCH_XID:
                self.event_headers.append(hdr)
                self.events.append(WatcherEvent(r.int(), r.int(), r.string()))
                continue
            if hdr.zxid > 0:
                self.last_zxid = max(self.last_zxid, hdr.zxid)
            if hdr.xid != xid:
                raise AssertionError("reply xid %d, expected %d" % (hdr.xid, xid))
            return hdr, pkt[r.off:]

    def call(self, opcode, body=b"", check=True, xid=None, timeout=None):
        """Send one request, return (ReplyHeader, body bytes); ZKError on err if check."""
        xid = self.send(opcode, body, xid)
        hdr, rest = self.read_reply(xid, timeout)
        if check and hdr.err != 0:
            raise ZKError(hdr.err, hdr)
        return hdr, rest

    def err_of(self, opcode, body=b""):
        """Send one request and return only the reply's err code."""
        return self.call(opcode, body, check=False)[0].err

    def wait_event(self, timeout=None):
        """Return the next watch notification (waiting up to timeout)."""
        if self.events:
            return self.events.popleft()
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            pkt = self.recv_packet(max(deadline - time.monotonic(), 0.001))
            r = Reader(pkt)
            hdr = ReplyHeader(r.int(), r.long(), r.int())
            if hdr.xid == WATCH_XID:
                self.event_headers.append(hdr)
                return WatcherEvent(r.int(), r.int(), r.string())
            raise AssertionError("unexpected packet while waiting for an event: %r" % (hdr,))

    def take_events(self):
        """Return and forget the notifications received so far."""
        out = list(self.events)
        self.events.clear()
        return out

    def no_event(self, within=0.3):
        """True if no notification arrives within `within` seconds (a ping round trip
        first, so anything the server already queued is seen)."""
        self.ping()
        if self.events:
            return False
        try:
            ev = self.wait_event(within)
        except socket.timeout:
            return True
        self.events.appendleft(ev)
        return False

    # -- convenience operations
    def ping(self):
        self.send(OP.PING, xid=PING_XID)
        return self.read_reply(PING_XID)[0]

    def create(self, path, data=b"", acl=OPEN_ACL, flags=0, ttl=None, opcode=None):
        if opcode is None:
            opcode = OP.CREATE_TTL if ttl is not None else OP.CREATE2
        hdr, body = self.call(opcode, enc_create(path, data, acl, flags, ttl))
        r = Reader(body)
        name = r.string()
        if opcode == OP.CREATE:
            return name
        return name, r.stat()

    def exists(self, path, watch=False):
        hdr, body = self.call(OP.EXISTS, enc_path_watch(path, watch), check=False)
        if hdr.err == ERR.NONODE:
            return None
        if hdr.err:
            raise ZKError(hdr.err, hdr)
        return Reader(body).stat()

    def get(self, path, watch=False):
        r = Reader(self.call(OP.GET_DATA, enc_path_watch(path, watch))[1])
        return r.buffer(), r.stat()

    def set(self, path, data, version=-1):
        return Reader(self.call(OP.SET_DATA, enc_set_data(path, data, version))[1]).stat()

    def delete(self, path, version=-1):
        self.call(OP.DELETE, enc_delete(path, version))

    def children(self, path, watch=False):
        return Reader(self.call(OP.GET_CHILDREN, enc_path_watch(path, watch))[1]).strings()

    def children2(self, path, watch=False):
        r = Reader(self.call(OP.GET_CHILDREN2, enc_path_watch(path, watch))[1])
        return r.strings(), r.stat()

    def add_watch(self, path, mode):
        hdr, body = self.call(OP.ADD_WATCH, enc_path_type(path, mode))
        return body

    def add_auth(self, scheme, auth):
        self.send(OP.AUTH, Writer().int(0).string(scheme).buffer(auth).bytes(), xid=AUTH_XID)
        hdr, _ = self.read_reply(AUTH_XID)
        if hdr.err:
            raise ZKError(hdr.err, hdr)
        return hdr

    def close_session(self):
        hdr, _ = self.call(OP.CLOSE_SESSION)
        return hdr

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def random_bytes(n, seed):
    """Deterministic pseudo-random bytes (tests must be reproducible)."""
    import random
    rnd = random.Random(seed)
    return bytes(rnd.getrandbits(8) for _ in range(n))


def session_client(port, timeout_ms=10000, **kw):
    """A WireClient with an established session."""
    c = WireClient(port)
    c.connect(timeout_ms=timeout_ms, **kw)
    return c

