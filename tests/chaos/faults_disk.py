"""Disk and clock faults for one server process (tests/README.md, "Disk and clock faults").

    shim = FaultShim(workdir)                 # writes workdir/kfault.ctl, unarmed
    Placement(env=shim.placement_env())       # the server runs with build/libkfault.so preloaded
    shim.fsync_fail(); shim.fsync_slow(2000); shim.write_fail(prefix=data_dir); shim.clock_offset(3600_000)
    shim.wait_hits("fsyncs_failed")           # until the process has met the fault
    shim.heal()

    disk = FullDisk(data_dir, size_mb=16)     # a tmpfs of 16 MiB mounted on the (empty) folder
    disk.fill(); disk.heal(); disk.close()

FaultShim mirrors the control file of tests/chaos/kfault.c (its header comment is
the reference): the shim maps the file shared, so a rewrite here reaches the
process at its next call.
"""
import errno
import os
import struct
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LIBKFAULT = os.path.join(ROOT, "build", "libkfault.so")

MAGIC = 0x544C464B
CTL_SIZE = 512
PREFIX_LEN = 256
# field -> (offset, struct format), as in kfault.c
FIELDS = {
    "magic": (0, "<I"),
    "fsync_mode": (4, "<I"),
    "fsync_delay_ms": (8, "<I"),
    "fsync_errno": (12, "<I"),
    "write_mode": (16, "<I"),
    "write_errno": (20, "<I"),
    "clock_offset_ms": (24, "<q"),
    "fsyncs_failed": (32, "<Q"),
    "fsyncs_delayed": (40, "<Q"),
    "writes_failed": (48, "<Q"),
}
PREFIX_OFF = 64
PASS, FAIL, DELAY = 0, 1, 2


class FaultShim:
    """The control file of one process's shim (one FaultShim per server)."""

    def __init__(self, workdir, name="kfault.ctl"):
        if not os.path.exists(LIBKFAULT):
            raise RuntimeError("%s is missing: make build/libkfault.so" % LIBKFAULT)
        os.makedirs(workdir, exist_ok=True)
        self.path = os.path.join(workdir, name)
        with open(self.path, "wb") as f:
            f.write(struct.pack("<I", MAGIC) + bytes(CTL_SIZE - 4))

    def placement_env(self):
        """The environment a harness.Placement adds to the server's."""
        return {"LD_PRELOAD": LIBKFAULT, "KFAULT_CTL": self.path}

    # -- the file
    def _put(self, field, value):
        off, fmt = FIELDS[field]
        with open(self.path, "r+b") as f:
            f.seek(off)
            f.write(struct.pack(fmt, value))

    def get(self, field):
        off, fmt = FIELDS[field]
        with open(self.path, "rb") as f:
            f.seek(off)
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

    def _prefix(self, prefix):
        raw = (prefix or "").encode()
        assert len(raw) < PREFIX_LEN, "prefix too long"
        with open(self.path, "r+b") as f:
            f.seek(PREFIX_OFF)
            f.write(raw + bytes(PREFIX_LEN - len(raw)))

    # -- faults
    def fsync_fail(self, prefix=None, err=errno.EIO):
        """fsync, fdatasync and sync_file_range on regular files (under prefix) fail with err."""
        self._prefix(prefix)
        self._put("fsync_errno", err)
        self._put("fsync_mode", FAIL)

    def fsync_slow(self, ms, prefix=None):
        """Each sync of a regular file (under prefix) sleeps ms first, then succeeds."""
        self._prefix(prefix)
        self._put("fsync_delay_ms", ms)
        self._put("fsync_mode", DELAY)

    def write_fail(self, prefix=None, err=errno.EIO):
        """write, pwrite, writev, pwritev, fallocate, ftruncate on regular files under
        prefix (every regular file when None, the server's own log included) fail with err."""
        self._prefix(prefix)
        self._put("write_errno", err)
        self._put("write_mode", FAIL)

    def clock_offset(self, ms):
        """The process's wall clock reads ms later (earlier when negative) than the machine's."""
        self._put("clock_offset_ms", int(ms))

    def heal(self):
        """Every fault off (the counters stay)."""
        self._put("fsync_mode", PASS)
        self._put("write_mode", PASS)
        self._put("clock_offset_ms", 0)
        self._prefix(None)

    def wait_hits(self, counter, at_least=1, timeout=20.0):
        """Until the shim's counter (fsyncs_failed, fsyncs_delayed, writes_failed) reaches
        at_least; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.get(counter)
            if v >= at_least:
                return v
            if time.monotonic() >= deadline:
                raise TimeoutError("%s stayed at %d (wanted %d) for %s s" % (counter, v, at_least, timeout))
            time.sleep(0.05)


class FullDisk:
    """A size-limited tmpfs mounted on a server's data folder (needs root), so the
    server's writes meet a real ENOSPC: fill() adds a filler file until the
    file system is full, heal() removes it, close() unmounts. The folder must be
    empty when mounted over (whatever the server needs is created after)."""

    def __init__(self, path, size_mb=16):
        self.path = path
        self.filler = os.path.join(path, ".kfault-filler")
        os.makedirs(path, exist_ok=True)
        assert not os.listdir(path), "%s is not empty" % path
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % size_mb, "kfault", path], check=True)
        self.mounted = True

    def free_bytes(self):
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize

    def fill(self):
        """Write the filler until ENOSPC: the file system is full."""
        chunk = b"\0" * (1 << 20)
        with open(self.filler, "ab", buffering=0) as f:
            while True:
                try:
                    f.write(chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    return self

    def heal(self):
        try:
            os.unlink(self.filler)
        except FileNotFoundError:
            pass

    def close(self):
        """Unmount (the data on it goes with it). Idempotent."""
        if self.mounted:
            subprocess.run(["umount", "-l", self.path], check=False)
            self.mounted = False
