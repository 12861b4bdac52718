"""Run a real standalone Apache ZooKeeper 3.8 (Debian's `zookeeper` package) for tests.

ApacheZooKeeper has the same interface as harness.Keeper, so a test can run the
same scenario against kipper's keeper and against the reference server:

    zk = ApacheZooKeeper(tick_time=200, extra={"maxClientCnxns": 10}).start()
    try:
        ... zk.hosts / zk.port ...
    finally:
        zk.stop()

The server runs in the foreground as a child process
(java ... org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg, like
`zkServer.sh start-foreground`) on a free 127.0.0.1 port with its own temporary
dataDir, TTL nodes enabled (zookeeper.extendedTypesEnabled), all four-letter
words whitelisted and the admin server off. Its log goes to zookeeper.log in
workdir (log4j 1.2 through slf4j-log4j12); stdout/stderr go to console.log.
Readiness is awaited by polling `ruok` until the answer is `imok` and `srvr` until the
server says it is serving requests. `extra` keys go to zoo.cfg (ZooKeeper turns unknown
keys into system properties); `jvm_flags` adds JVM options (e.g. -Dznode.container.checkIntervalMs=100).
Start takes about 0.5 s, stop about 0.4 s.
start() after stop() or kill() (SIGKILL) restarts the server on the same workdir,
dataDir and port, so a test can crash it and check what it recovers.
"""
import os
import shutil
import signal
import subprocess
import tempfile

from harness import LOOPBACK, crash, four_letter_word, free_port, terminate, wait_until

JAVA = shutil.which("java") or "/usr/bin/java"
JAVA_DIR = "/usr/share/java"
ZK_JAR = os.path.join(JAVA_DIR, "zookeeper.jar")
# zookeeper.jar's manifest Class-Path names its own dependencies (jute, netty,
# slf4j-api, ...); we add an slf4j binding and log4j so the server logs to a file.
LOG_JARS = [os.path.join(JAVA_DIR, j) for j in ("slf4j-log4j12.jar", "log4j-1.2.jar")]
MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

LOG4J_PROPERTIES = """\
log4j.rootLogger=INFO, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=%(log)s
log4j.appender.FILE.Append=true
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%%d{ISO8601} - %%-5p [%%t:%%C{1}@%%L] - %%m%%n
"""


def available():
    """True when Debian's zookeeper package and a JVM are installed."""
    return os.path.exists(ZK_JAR) and os.path.exists(JAVA)


def classpath(workdir=None):
    parts = [workdir] if workdir else []
    parts += [ZK_JAR] + [j for j in LOG_JARS if os.path.exists(j)]
    return ":".join(parts)


class ApacheZooKeeper:
    """One standalone Apache ZooKeeper 3.8 server on a free loopback port."""

    def __init__(self, tick_time=200, extra=None, workdir=None, jvm_flags=None, placement=None):
        self.placement = placement or LOOPBACK
        self.port = free_port()
        self.tick_time = tick_time
        self.workdir = workdir or tempfile.mkdtemp(prefix="apache-zk-")
        self.data_dir = os.path.join(self.workdir, "data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.cfg_path = os.path.join(self.workdir, "zoo.cfg")
        self.log_path = os.path.join(self.workdir, "zookeeper.log")
        self.console_path = os.path.join(self.workdir, "console.log")
        self.log4j_path = os.path.join(self.workdir, "log4j.properties")
        self.extra = dict(extra or {})
        self.jvm_flags = list(jvm_flags or [])
        self.proc = None
        self._console = None

    @property
    def hosts(self):
        return "%s:%d" % (self.placement.host, self.port)

    def write_config(self):
        cfg = {
            "tickTime": str(self.tick_time),
            "initLimit": "10",
            "syncLimit": "5",
            "dataDir": self.data_dir,
            "clientPort": str(self.port),
            "clientPortAddress": self.placement.host,
            "4lw.commands.whitelist": "*",
            "admin.enableServer": "false",
            "maxClientCnxns": "0",
            "standaloneEnabled": "true",
        }
        cfg.update({k: str(v) for k, v in self.extra.items()})
        with open(self.cfg_path, "w") as f:
            for k, v in cfg.items():
                f.write("%s=%s\n" % (k, v))
        with open(self.log4j_path, "w") as f:
            f.write(LOG4J_PROPERTIES % {"log": self.log_path})

    def command(self):
        return [
            JAVA,
            "-Xms64m", "-Xmx512m",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
            "-Djava.net.preferIPv4Stack=true",
            "-Dfile.encoding=UTF-8",      # digest auth decodes with the default charset
            "-Dzookeeper.extendedTypesEnabled=true",
            "-Dzookeeper.admin.enableServer=false",
            "-Dzookeeper.4lw.commands.whitelist=*",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-Dlog4j.configuration=file:" + self.log4j_path,
            "-Dzookeeper.log.dir=" + self.workdir,
            "-Dzookeeper.root.logger=INFO,FILE",
        ] + self.jvm_flags + [
            "-cp", classpath(),
            MAIN, self.cfg_path,
        ]

    def start(self, timeout=30.0):
        if not available():
            raise RuntimeError("Apache ZooKeeper not installed (need %s and %s)" % (ZK_JAR, JAVA))
        self.write_config()
        self._console = open(self.console_path, "ab")
        self.proc = self.placement.popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._console,
                                         stderr=subprocess.STDOUT, cwd=self.workdir)
        try:
            wait_until(self._ready, timeout=timeout, interval=0.05,
                       what="Apache ZooKeeper on port %d" % self.port)
        except BaseException:
            self.kill()
            raise
        return self

    def _ready(self):
        if self.proc.poll() is not None:
            raise RuntimeError("ZooKeeper exited with %s; log:\n%s" % (self.proc.returncode, self.log()))
        # `ruok` says imok as soon as the port listens, a moment before the server accepts
        # sessions (early connections are closed: "ZooKeeperServer not running"); `srvr`
        # says "not currently serving requests" until then.
        host = self.placement.host
        return (four_letter_word(self.port, "ruok", timeout=1.0, host=host) == "imok"
                and four_letter_word(self.port, "srvr", timeout=1.0, host=host).startswith("Zookeeper version:"))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log(self):
        out = []
        for path in (self.log_path, self.console_path):
            try:
                with open(path, "r", errors="replace") as f:
                    out.append(f.read())
            except OSError:
                pass
        return "".join(out)

    def stop(self, timeout=10.0):
        """SIGTERM and wait (SIGKILL after timeout); returns the exit status."""
        if self.proc is None:
            return None
        terminate(self.proc, timeout)
        return self._reap()

    def kill(self):
        """SIGKILL and wait."""
        if self.proc is None:
            return None
        crash(self.proc)
        return self._reap()

    def _reap(self):
        if self._console is not None:
            self._console.close()
            self._console = None
        rc = self.proc.returncode
        self.proc = None
        # The JVM exits 143 (128+SIGTERM) on SIGTERM; report it like a signalled process.
        return -signal.SIGTERM if rc == 128 + signal.SIGTERM else rc

    def __enter__(self):
        return self.start() if self.proc is None else self

    def __exit__(self, *exc):
        self.stop()
        return False

    def cleanup(self):
        """Remove workdir (only after stop)."""
        shutil.rmtree(self.workdir, ignore_errors=True)
