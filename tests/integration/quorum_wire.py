"""ZooKeeper's peer-to-peer wire for tests that speak it to a keeper themselves: the
quorum port's QuorumPackets (LearnerHandler, Learner) and the election port's
connection handshake and notifications (QuorumCnxManager, FastLeaderElection)."""
import struct

REQUEST, PROPOSAL, ACK, COMMIT, PING, NEWLEADER, FOLLOWERINFO, UPTODATE, DIFF = 1, 2, 3, 4, 5, 10, 11, 12, 13
LEADERINFO, ACKEPOCH = 17, 18
LOOKING, FOLLOWING, LEADING = 0, 1, 2
PROTOCOL_VERSION = 0x10000


def packet(ptype, zxid, data=None):
    """A QuorumPacket {type, zxid, data, authinfo (none)} as ZooKeeper writes it on the
    quorum port: a bare jute record, no length before it."""
    body = struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data
    return struct.pack(">iq", ptype, zxid) + body + struct.pack(">i", -1)


class PacketReader:
    """QuorumPackets from a socket, one at a time."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _take(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the kipper member closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _int(self):
        return struct.unpack(">i", self._take(4))[0]

    def next(self):
        ptype, zxid = struct.unpack(">iq", self._take(12))
        n = self._int()
        data = self._take(n) if n >= 0 else None
        for _ in range(max(self._int(), 0)):   # authinfo: {scheme, id} strings
            self._take(self._int())
            self._take(self._int())
        return ptype, zxid, data


def initial_message(sid, port):
    """QuorumCnxManager's InitialMessage (protocol version V1) naming server sid."""
    addr = b"127.0.0.1:%d" % port
    return struct.pack(">qqi", -65536, sid, len(addr)) + addr


def notification(state, leader, zxid, round_, peer_epoch):
    """A FastLeaderElection notification, version 2 with an empty config, framed."""
    body = struct.pack(">iqqqqii", state, leader, zxid, round_, peer_epoch, 2, 0)
    return struct.pack(">i", len(body)) + body
