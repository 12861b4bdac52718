"""A loopback TCP proxy that a test can freeze (stop forwarding in both
directions while keeping every socket open), to make a real client's session
go silent without closing it."""
import select
import socket
import threading

from harness import free_port


class FreezableProxy:
    def __init__(self, target_port, target_host="127.0.0.1"):
        self.target = (target_host, target_port)
        self.port = free_port()
        self.frozen = threading.Event()
        self._stop = threading.Event()
        self._lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._lsock.bind(("127.0.0.1", self.port))
        self._lsock.listen(16)
        self._pairs = {}            # socket -> peer socket
        self._thread = threading.Thread(target=self._run, name="freezable-proxy", daemon=True)
        self._thread.start()

    @property
    def hosts(self):
        return "127.0.0.1:%d" % self.port

    def freeze(self):
        self.frozen.set()

    def thaw(self):
        self.frozen.clear()

    def _close_pair(self, s):
        peer = self._pairs.pop(s, None)
        if peer is not None:
            self._pairs.pop(peer, None)
            peer.close()
        s.close()

    def _run(self):
        while not self._stop.is_set():
            watch = [self._lsock] + ([] if self.frozen.is_set() else list(self._pairs))
            try:
                readable, _, _ = select.select(watch, [], [], 0.05)
            except (OSError, ValueError):
                continue
            for s in readable:
                if s is self._lsock:
                    try:
                        client, _ = self._lsock.accept()
                        upstream = socket.create_connection(self.target, timeout=5)
                    except OSError:
                        continue
                    self._pairs[client] = upstream
                    self._pairs[upstream] = client
                    continue
                if s not in self._pairs:
                    continue
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self._close_pair(s)
                    continue
                try:
                    self._pairs[s].sendall(data)
                except OSError:
                    self._close_pair(s)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        for s in list(self._pairs):
            try:
                s.close()
            except OSError:
                pass
        self._pairs.clear()
        self._lsock.close()
