"""Drive Apache ZooKeeper's own command-line clients and normalize their transcripts.

- run_zkcli(): the Java shell (Debian's /usr/share/zookeeper/bin/zkCli.sh) reading a
  script on stdin in one JVM. Its commands are synchronous, but watch events are
  printed by the client's event thread at any moment, so they are pulled out of the
  transcript into their own (ordered) list.
- CliMt: the C client's shell (/usr/lib/zookeeper/bin/cli_mt, libzookeeper-mt). It is
  asynchronous: answers are printed by the completion thread. After every command we
  send a sentinel `sync /zookeeper` and wait for its answer; ZooKeeper answers a
  session's requests in order, so everything the command caused is printed before it.
- normalize(): replaces only what legitimately differs between two servers: session
  ids (-> S1, S2, ... in order of first appearance, so equalities are still checked),
  zxids (-> Z1, Z2, ... by rank of their value, so equality and order are still
  checked but not the absolute numbers), timestamps (checked to lie within the
  test's wall-clock window, or be 0 for ZooKeeper's built-in nodes), elapsed times,
  ports and JVM/SLF4J noise, and the order of children in a getChildren answer (ZooKeeper
  returns them in Java HashSet order and documents no order; zkCli sorts `ls` itself, but
  not getEphemerals, and cli_mt prints them as received).
"""
import calendar
import os
import re
import select
import subprocess
import time

ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"
CLI_MT = "/usr/lib/zookeeper/bin/cli_mt"

CLIENT_ENV = dict(os.environ, TZ="UTC", LC_ALL="C", LANG="C",
                  CLIENT_JVMFLAGS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto "
                                  "-Djava.net.preferIPv4Stack=true")


def zkcli_available():
    return os.path.exists(ZKCLI)


def cli_mt_available():
    return os.path.exists(CLI_MT)


# --------------------------------------------------------------------------- zkCli.sh

_ZKCLI_NOISE = (
    re.compile(r"^SLF4J: "),
    re.compile(r"^Welcome to ZooKeeper!$"),
    re.compile(r"^JLine support is disabled$"),
    re.compile(r"^Connecting to "),
)


def run_zkcli(hosts, commands, timeout=30.0):
    """Run one zkCli.sh session feeding `commands` on stdin; returns (rc, main_lines, events, raw).

    main_lines: the output lines in order, without JVM noise and without watch events.
    events: the `WatchedEvent ...` lines in the order the event thread printed them
    (except the final Closed event, which races with the JVM's exit).
    """
    script = "".join(c + "\n" for c in commands) + "quit\n"
    proc = subprocess.run([ZKCLI, "-server", hosts], input=script.encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=CLIENT_ENV, timeout=timeout)
    raw = proc.stdout.decode(errors="replace")
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    main, events = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        # ZooKeeperMain prints watch events as println("\n" + msg): a blank line then
        # "WATCHER::", and a blank line then "WatchedEvent ...". Each println is atomic.
        if line == "" and i + 1 < len(lines) and (lines[i + 1] == "WATCHER::"
                                                  or lines[i + 1].startswith("WatchedEvent ")):
            if lines[i + 1].startswith("WatchedEvent ") and "state:Closed" not in lines[i + 1]:
                events.append(lines[i + 1])
            i += 2
            continue
        if any(p.search(line) for p in _ZKCLI_NOISE):
            i += 1
            continue
        main.append(line)
        i += 1
    return proc.returncode, main, events, raw


def zkcli_transcript(hosts, commands, timeout=30.0):
    """One zkCli.sh session as a list of lines: the output, then the events and exit code."""
    rc, main, events, raw = run_zkcli(hosts, commands, timeout=timeout)
    out = list(main) + ["--- watch events"] + events + ["--- exit code %d" % rc]
    return out, raw


# --------------------------------------------------------------------------- cli_mt

class CliMtError(AssertionError):
    pass


class CliMt:
    """One cli_mt process (one ZooKeeper session) driven command by command."""

    SENTINEL = "sync /zookeeper"
    SENTINEL_OUT = "[/zookeeper]: rc = 0\n\tname = /zookeeper\n"

    # A read-only server refuses sync with NOTREADONLY, in order too: that answer is the sentinel.
    SENTINEL_OUT_READ_ONLY = "[/zookeeper]: rc = -119\n"

    def __init__(self, hosts, timeout=10.0, read_only=False):
        """read_only: cli_mt -r (the C client's ZOO_READONLY), waiting for READONLY_STATE."""
        self.timeout = timeout
        self.buf = ""
        self.transcript = []
        args = [CLI_MT, "-h", hosts, "-r"] if read_only else [CLI_MT, hosts]
        if read_only:
            self.SENTINEL_OUT = self.SENTINEL_OUT_READ_ONLY
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=CLIENT_ENV)
        self._wait_for("state = READONLY_STATE" if read_only else "Got a new session id: ", 0)
        self.transcript.extend(self.buf.rstrip("\n").split("\n"))
        self.pos = len(self.buf)

    def _read_some(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([self.proc.stdout], [], [], left)
        if not r:
            return False
        data = os.read(self.proc.stdout.fileno(), 65536)
        if not data:
            return False
        self.buf += data.decode(errors="replace")
        return True

    def _wait_for(self, text, start):
        deadline = time.monotonic() + self.timeout
        while True:
            i = self.buf.find(text, start)
            # found, and its line complete (a newline follows it)
            if i >= 0 and (text.endswith("\n") or self.buf.find("\n", i) >= 0):
                return i
            if not self._read_some(deadline):
                raise CliMtError("cli_mt: no %r within %.0fs; output so far:\n%s"
                                 % (text, self.timeout, self.buf))

    def run(self, command):
        """Send one command and wait until everything it caused has been printed."""
        start = self.pos
        self.proc.stdin.write((command + "\n" + self.SENTINEL + "\n").encode())
        self.proc.stdin.flush()
        i = self._wait_for(self.SENTINEL_OUT, start)
        out = self.buf[start:i]
        self.pos = i + len(self.SENTINEL_OUT)
        self.transcript.append("> " + command)
        if out:
            self.transcript.extend(out.rstrip("\n").split("\n"))
        return out

    def close(self):
        """quit, wait for exit and return the whole transcript (lines)."""
        try:
            self.proc.stdin.write(b"quit\n")
            self.proc.stdin.flush()
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + self.timeout
        while self._read_some(deadline):
            pass
        try:
            rc = self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise CliMtError("cli_mt did not exit after quit; output:\n%s" % self.buf)
        rest = self.buf[self.pos:]
        self.transcript.append("> quit")
        if rest:
            self.transcript.extend(rest.rstrip("\n").split("\n"))
        self.transcript.append("--- exit code %d" % rc)
        return self.transcript

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------- normalizing

# zxid fields: zkCli "cZxid = 0x2", "mZxid = 0x4", "pZxid = 0x7";
# cli_mt "\tczxid=d", "\tmzxid=13" (hex without 0x).
_ZXID_RE = re.compile(r"(?P<key>\b[cmp][Zz]xid\s*=\s*)(?P<val>(?:0x)?[0-9a-fA-F]+)\b")
# session ids: zkCli "ephemeralOwner = 0x10000074ef90001", cli_mt "\tephemeralOwner = 10000074ef90001",
# cli_mt "Got a new session id: 0x10000074ef90001", zkCli getEphemerals owners aren't printed.
_SESSION_RE = re.compile(r"(?P<key>(?:ephemeralOwner = |Got a new session id: |session Id = ))"
                         r"(?P<val>(?:0x)?[0-9a-fA-F]+)\b")
# zkCli: "ctime = Sun Nov 29 23:58:20 UTC 2026"; cli_mt: "ctime = Sun Nov 29 23:58:32 2026"
_JAVA_DATE_RE = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                           r" [ 0-9]\d \d\d:\d\d:\d\d(?: UTC)? \d{4}\b")
_ELAPSED_RE = re.compile(r"^time = -?\d+ msec$")
_PORT_RE = re.compile(r"127\.0\.0\.1:\d+")


def _parse_date(text):
    fmt = "%a %b %d %H:%M:%S UTC %Y" if " UTC " in text else "%a %b %d %H:%M:%S %Y"
    return calendar.timegm(time.strptime(re.sub(r"  +", " ", text), fmt))


_LIST_RE = re.compile(r"^\[(.*)\]$")
_CHILD_LINE_RE = re.compile(r"^\t[^=\t]*$")


def _sort_child_lists(lines):
    """Sort zkCli's "[a, b]" lists and runs of cli_mt's tab-indented child names."""
    out, run = [], []
    for line in list(lines) + [None]:
        if line is not None and _CHILD_LINE_RE.match(line):
            run.append(line)
            continue
        out.extend(sorted(run))
        run = []
        if line is None:
            break
        m = _LIST_RE.match(line)
        if m and m.group(1):
            line = "[" + ", ".join(sorted(m.group(1).split(", "))) + "]"
        out.append(line)
    return out


def normalize(lines, t_start=None, t_end=None):
    """Return (normalized lines, problems): problems lists timestamps outside [t_start, t_end]."""
    problems = []
    # zxids by rank of value over the whole transcript
    values = set()
    for line in lines:
        for m in _ZXID_RE.finditer(line):
            values.add(int(m.group("val"), 16))
    rank = {v: i for i, v in enumerate(sorted(values))}
    sessions = {}

    def zxid_sub(m):
        v = int(m.group("val"), 16)
        return m.group("key") + ("Z0" if v == 0 else "Z%d" % (rank[v] + (0 if 0 in rank else 1)))

    def session_sub(m):
        v = int(m.group("val"), 16)
        if v == 0:
            return m.group("key") + "0"
        if v not in sessions:
            sessions[v] = "S%d" % (len(sessions) + 1)
        return m.group("key") + sessions[v]

    def date_sub(m):
        t = _parse_date(m.group(0))
        if t != 0 and t_start is not None and not (t_start - 2 <= t <= t_end + 2):
            problems.append("timestamp %r outside the test's window" % m.group(0))
        return "<epoch-0>" if t == 0 else "<time>"

    out = []
    for line in _sort_child_lists(lines):
        line = _ZXID_RE.sub(zxid_sub, line)
        line = _SESSION_RE.sub(session_sub, line)
        line = _JAVA_DATE_RE.sub(date_sub, line)
        line = _PORT_RE.sub("127.0.0.1:<port>", line)
        if _ELAPSED_RE.match(line):
            line = "time = <n> msec"
        out.append(line)
    return out, problems
