#!/usr/bin/env bash
# bench/keeper/run.sh -- kipper's keeper against Apache ZooKeeper 3.8 (Debian's
# `zookeeper` package), side by side, in one run, on loopback.
#
#   bench/keeper/run.sh            (or: make bench-keeper)
#   bench/keeper/run.sh --ensemble (or: BENCH_MODE=ensemble, make bench-keeper-ensemble)
#
# Builds bench/keeper/load.c (Apache ZooKeeper's C client, asynchronous API),
# starts a standalone kipper keeper and a standalone Apache ZooKeeper (each
# with its own dataDir on the same filesystem, forceSync on), warms both up,
# then runs every workload against kipper and then against ZooKeeper with the
# same parameters, and prints a table of throughput and latency with their
# ratios, and each server's peak resident memory. The issue's targets are
# printed beside the ratios; they are reported, never asserted: the exit status
# is 0 whenever the benchmark ran, whatever the numbers.
#
# --ensemble: a 3-member kipper ensemble against a 3-member Apache ZooKeeper
# ensemble instead (server.N lines and myid, on loopback), one ensemble after
# the other, never both at once; the sessions are dealt round-robin over the
# members; same workloads, same table, CPU and memory summed over the members.
# See bench/keeper/ensemble.sh (sourced from here) for what differs.
#
# Settings (environment):
#   BENCH_DURATION=10        measured seconds per workload and server
#   BENCH_WARMUP=3           untimed seconds of the same workload just before each measurement
#   BENCH_SERVER_WARMUP=5    seconds of mixed load on each server after start-up
#   BENCH_CONNS=4            client sessions (ensemble mode: 3, one per member)
#   BENCH_OUTSTANDING=64     requests outstanding in total
#   BENCH_DATA=100           bytes of data per node
#   BENCH_KEYS=1000          nodes for set/get/mixed
#   BENCH_WORKLOADS="create set get mixed"   (also: create-seq)
#   BENCH_CREATE_OPS=200000  create workloads run a fixed op count, not BENCH_DURATION, so
#   BENCH_CREATE_WARMUP_OPS=20000   both servers end up holding the same nodes (fair memory figures)
#   BENCH_DIR=               work folder (default: a new mktemp -d under $TMPDIR or /tmp)
#   BENCH_KEEP=0             1: keep the work folder (configs, data, server logs, raw results)
#   KIPPER_BIN=bin/kipper    the kipper binary (built with `make` if missing)
#   ZK_JVMFLAGS=             extra JVM flags for ZooKeeper; default none, as Debian's
#                            zkServer.sh (no -Xmx: the JVM's own heap sizing)
#   BENCH_TIMELINE=0         1: per-second ops and max latency of every run into the work
#                            folder's load-<server>.log (implies BENCH_KEEP=1)
#   BENCH_CLIENT_CPUS= / BENCH_SERVER_CPUS=   optional taskset CPU lists (e.g. 0 and 1)
#   BENCH_MODE=standalone    or ensemble (the same as --ensemble)
# Ensemble mode only:
#   BENCH_MEMBERS=3          members per ensemble
#   BENCH_ORDER="kipper zookeeper"   which ensemble runs first
#   BENCH_RUN_TIMEOUT=120    seconds after which one load run is stopped (and counted invalid)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

MODE=${BENCH_MODE:-standalone}
for arg in "$@"; do
    case $arg in
        --ensemble) MODE=ensemble ;;
        --standalone) MODE=standalone ;;
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'bench/keeper: unknown argument %s (try --help)\n' "$arg" >&2; exit 2 ;;
    esac
done
case $MODE in
    standalone | ensemble) ;;
    *) printf 'bench/keeper: BENCH_MODE must be standalone or ensemble, not %s\n' "$MODE" >&2; exit 2 ;;
esac

DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-3}
SERVER_WARMUP=${BENCH_SERVER_WARMUP:-5}
if [ "$MODE" = ensemble ]; then CONNS=${BENCH_CONNS:-3}; else CONNS=${BENCH_CONNS:-4}; fi
OUTSTANDING=${BENCH_OUTSTANDING:-64}
DATA=${BENCH_DATA:-100}
KEYS=${BENCH_KEYS:-1000}
WORKLOADS=${BENCH_WORKLOADS:-create set get mixed}
CREATE_OPS=${BENCH_CREATE_OPS:-200000}
CREATE_WARMUP_OPS=${BENCH_CREATE_WARMUP_OPS:-20000}
KEEP=${BENCH_KEEP:-0}
TIMELINE=()
if [ "${BENCH_TIMELINE:-0}" = 1 ]; then TIMELINE=(-I); KEEP=1; fi
KIPPER=${KIPPER_BIN:-$ROOT/bin/kipper}
ZK_JVMFLAGS=${ZK_JVMFLAGS:-}
CLIENT_CPUS=${BENCH_CLIENT_CPUS:-}
SERVER_CPUS=${BENCH_SERVER_CPUS:-}

JAVA=$(command -v java || echo /usr/bin/java)
JAVA_DIR=/usr/share/java
ZK_JAR=$JAVA_DIR/zookeeper.jar
ZK_MAIN=org.apache.zookeeper.server.quorum.QuorumPeerMain

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/keeper: $*"; exit 2; }

# ---- prerequisites --------------------------------------------------------
[ -r /usr/include/zookeeper/zookeeper.h ] ||
    die "needs Apache ZooKeeper's C client headers: apt-get install libzookeeper-mt-dev"
if [ ! -r "$ZK_JAR" ] || [ ! -x "$JAVA" ]; then
    die "needs Apache ZooKeeper 3.8 and a JVM: apt-get install zookeeper default-jre-headless"
fi
command -v python3 >/dev/null || die "needs python3 (to pick free ports)"
if [ ! -x "$KIPPER" ]; then
    say "bench/keeper: $KIPPER missing, running make"
    make -C "$ROOT" >&2
fi

if [ -n "${BENCH_DIR:-}" ]; then
    WORK=$BENCH_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench.XXXXXX")
fi

# ---- clean-up: every process started here is stopped here ------------------
PIDS=()          # servers
LOADPID=         # a running load generator
SAMPLERS=()      # memory samplers
OK=0
stop_pid() {     # SIGTERM, wait up to 10 s, then SIGKILL
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local p
    if [ -n "$LOADPID" ]; then kill "$LOADPID" 2>/dev/null || true; wait "$LOADPID" 2>/dev/null || true; fi
    for p in "${SAMPLERS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do stop_pid "$p"; done
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$WORK"
    else
        say "bench/keeper: work folder kept: $WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the load generator -----------------------------------------------------
LOAD=$WORK/load
${CC:-cc} -O2 -g -std=c11 -Wall -Wextra -o "$LOAD" "$HERE/load.c" -lzookeeper_mt -lpthread ||
    die "building load.c failed"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

four_letter() {  # port word -> answer (bounded)
    # shellcheck disable=SC2016
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf %s "$2" >&3 && cat <&3' _ "$1" "$2" 2>/dev/null || true
}

wait_ready() {   # name pid port
    local name=$1 pid=$2 port=$3 i
    for ((i = 0; i < 600; i++)); do
        kill -0 "$pid" 2>/dev/null || die "$name exited during start-up; see $WORK/$name"
        if four_letter "$port" srvr | grep -q '^Zookeeper version:'; then
            return 0
        fi
        sleep 0.1
    done
    die "$name not serving on 127.0.0.1:$port after 60 s; see $WORK/$name"
}

server_taskset() { if [ -n "$SERVER_CPUS" ]; then echo taskset -c "$SERVER_CPUS"; fi; }
client_taskset() { if [ -n "$CLIENT_CPUS" ]; then echo taskset -c "$CLIENT_CPUS"; fi; }

write_cfg() {    # dir port extra-lines...
    local dir=$1 port=$2
    shift 2
    mkdir -p "$dir/data"
    {
        echo "tickTime=2000"
        echo "initLimit=10"
        echo "syncLimit=5"
        echo "dataDir=$dir/data"
        echo "clientPort=$port"
        echo "clientPortAddress=127.0.0.1"
        echo "maxClientCnxns=0"
        echo "admin.enableServer=false"
        echo "4lw.commands.whitelist=*"
        local l
        for l in "$@"; do echo "$l"; done
    } >"$dir/zoo.cfg"
}

# ---- resident memory: VmRSS every 200 ms, peak kept in a file -------------------
rss_now() {      # pid -> VmRSS in kB (0 if gone)
    local k v _
    while read -r k v _; do
        if [ "$k" = VmRSS: ]; then echo "$v"; return; fi
    done 2>/dev/null <"/proc/$1/status"
    echo 0
}
vm_field() {     # pid field -> kB
    local k v _
    while read -r k v _; do
        if [ "$k" = "$2:" ]; then echo "$v"; return; fi
    done 2>/dev/null <"/proc/$1/status"
    echo 0
}
child_private() {  # pid -> kB private to its child processes (e.g. a forked snapshot writer)
    local c k v _ sum=0
    for c in $(pgrep -P "$1" 2>/dev/null); do
        while read -r k v _; do
            case $k in Private_Clean: | Private_Dirty:) sum=$((sum + v)) ;; esac
        done 2>/dev/null <"/proc/$c/smaps_rollup" || true
    done
    echo "$sum"
}
sample_rss() {   # pid outfile: "peak VmRSS, peak VmRSS + children's private kB"
    local pid=$1 out=$2 peak=0 peak_tree=0 rss k v _ kids
    while [ -r "/proc/$pid/status" ]; do
        rss=0
        while read -r k v _; do
            if [ "$k" = VmRSS: ]; then rss=$v; break; fi
        done 2>/dev/null <"/proc/$pid/status" || break
        kids=$(child_private "$pid")
        if ((rss > peak || rss + kids > peak_tree)); then
            ((rss > peak)) && peak=$rss
            ((rss + kids > peak_tree)) && peak_tree=$((rss + kids))
            echo "$peak $peak_tree" >"$out"
        fi
        sleep 0.2
    done
}
# ---- Apache ZooKeeper: how a server (standalone or ensemble member) is started ----
# Classpath as tests/integration/apache_zk.py: zookeeper.jar (its manifest names
# its dependencies) plus an slf4j binding and log4j so the server logs to a file.
ZK_CP=$ZK_JAR
for j in slf4j-log4j12.jar log4j-1.2.jar; do
    [ -e "$JAVA_DIR/$j" ] && ZK_CP=$ZK_CP:$JAVA_DIR/$j
done
zk_prepare() {   # dir: a log4j file appender at INFO into dir/zookeeper.log
    cat >"$1/log4j.properties" <<EOF
log4j.rootLogger=INFO, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=$1/zookeeper.log
log4j.appender.FILE.Append=true
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n
EOF
}
zk_launch() {    # dir: java ... QuorumPeerMain dir/zoo.cfg in the background; its pid in $!
    local dir=$1
    # JVM flags as Debian's zkServer.sh start-foreground passes them (JMX local, the
    # OOM flags, no heap size), plus the log set-up; ZK_JVMFLAGS is appended.
    # shellcheck disable=SC2086,SC2046
    (cd "$dir" && exec $(server_taskset) "$JAVA" \
        "-Dzookeeper.log.dir=$dir" "-Dzookeeper.log.file=zookeeper.log" \
        -XX:+HeapDumpOnOutOfMemoryError "-XX:OnOutOfMemoryError=kill -9 %p" \
        "-Dlog4j.configuration=file:$dir/log4j.properties" -Dzookeeper.root.logger=INFO,FILE \
        -Djava.net.preferIPv4Stack=true \
        -cp "$ZK_CP" $ZK_JVMFLAGS \
        -Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.local.only=true \
        $ZK_MAIN "$dir/zoo.cfg" >"$dir/console.log" 2>&1) &
}

# ---- ensemble mode: bench/keeper/ensemble.sh does the rest ---------------------------
if [ "$MODE" = ensemble ]; then
    # shellcheck source=bench/keeper/ensemble.sh
    . "$HERE/ensemble.sh"
    OK=1
    exit 0
fi

# ---- kipper -----------------------------------------------------------------
KDIR=$WORK/kipper
KPORT=$(free_port)
# forceSync is left at its default (yes): durable writes, as ZooKeeper's are
write_cfg "$KDIR" "$KPORT"
# shellcheck disable=SC2046
$(server_taskset) "$KIPPER" keeper "$KDIR/zoo.cfg" >"$KDIR/kipper.log" 2>&1 &
KPID=$!
PIDS+=("$KPID")

# ---- Apache ZooKeeper ---------------------------------------------------------
ZDIR=$WORK/zookeeper
ZPORT=$(free_port)
write_cfg "$ZDIR" "$ZPORT" "forceSync=yes"
zk_prepare "$ZDIR"
zk_launch "$ZDIR"
ZPID=$!
PIDS+=("$ZPID")

wait_ready kipper "$KPID" "$KPORT"
wait_ready zookeeper "$ZPID" "$ZPORT"
ZK_VERSION=$(four_letter "$ZPORT" srvr | sed -n 's/^Zookeeper version: \([^-,]*\).*/\1/p')
KIPPER_SRVR_VERSION=$(four_letter "$KPORT" srvr | sed -n 's/^Zookeeper version: \(.*\)/\1/p')

K_RSS_START=$(rss_now "$KPID")
Z_RSS_START=$(rss_now "$ZPID")
echo 0 0 >"$WORK/kipper.rss"
echo 0 0 >"$WORK/zookeeper.rss"
sample_rss "$KPID" "$WORK/kipper.rss" &
SAMPLERS+=("$!")
sample_rss "$ZPID" "$WORK/zookeeper.rss" &
SAMPLERS+=("$!")

# ---- the runs ----------------------------------------------------------------------
RESULTS=$WORK/results.txt
: >"$RESULTS"
run_load() {     # name port pid workload -> one key=value line in $RESULTS
    local name=$1 port=$2 pid=$3 w=$4 line rc=0 length
    case $w in
        create*) length=(-n "$CREATE_OPS" -X "$CREATE_WARMUP_OPS") ;;
        *) length=(-d "$DURATION" -W "$WARMUP") ;;
    esac
    # in the background, so that a signal reaches the trap (and the clean-up) at once
    # shellcheck disable=SC2046
    $(client_taskset) "$LOAD" -s "127.0.0.1:$port" -w "$w" -c "$CONNS" -o "$OUTSTANDING" \
        "${length[@]}" -z "$DATA" -k "$KEYS" -b /kbench -P "$pid" -T "$name" "${TIMELINE[@]}" \
        >"$WORK/last.out" 2>>"$WORK/load-$name.log" &
    LOADPID=$!
    echo "== $w" >>"$WORK/load-$name.log"
    wait "$LOADPID" || rc=$?
    LOADPID=
    line=$(head -n 1 "$WORK/last.out")
    if [ -z "$line" ]; then
        line="tag=$name workload=$w valid=0 errors=1 err_LOADEXIT=$rc"
        say "bench/keeper: load against $name ($w) exited $rc; see $WORK/load-$name.log"
    fi
    echo "$line" >>"$RESULTS"
    say "  $line"
}

say "bench/keeper: kipper pid $KPID on 127.0.0.1:$KPORT, ZooKeeper ${ZK_VERSION:-?} pid $ZPID on 127.0.0.1:$ZPORT"
say "bench/keeper: warming up (${SERVER_WARMUP}s of mixed load each)"
if [ "$SERVER_WARMUP" != 0 ]; then
    for pair in "kipper:$KPORT" "zookeeper:$ZPORT"; do
        name=${pair%%:*}
        port=${pair##*:}
        "$LOAD" -s "127.0.0.1:$port" -w mixed -c "$CONNS" -o "$OUTSTANDING" -d "$SERVER_WARMUP" -z "$DATA" \
            -k "$KEYS" -b /kwarm >"$WORK/warmup-$name.out" 2>>"$WORK/load-$name.log" &
        LOADPID=$!
        wait "$LOADPID" || say "bench/keeper: $name warm-up had errors: $(cat "$WORK/warmup-$name.out")"
        LOADPID=
    done
fi
for w in $WORKLOADS; do
    case $w in
        create*) say "bench/keeper: $w ($CREATE_WARMUP_OPS ops warm-up + $CREATE_OPS ops measured, each server)" ;;
        *) say "bench/keeper: $w (${WARMUP}s warm-up + ${DURATION}s measured, each server)" ;;
    esac
    run_load kipper "$KPORT" "$KPID" "$w"
    run_load zookeeper "$ZPORT" "$ZPID" "$w"
done

# memory: the sampled peak, and the kernel's own high-water mark (VmHWM)
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)
K_HWM=$(vm_field "$KPID" VmHWM)
Z_HWM=$(vm_field "$ZPID" VmHWM)
for p in "${SAMPLERS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
SAMPLERS=()
read -r K_RSS_PEAK K_TREE_PEAK <"$WORK/kipper.rss"
read -r Z_RSS_PEAK Z_TREE_PEAK <"$WORK/zookeeper.rss"
alive_k=yes; kill -0 "$KPID" 2>/dev/null || alive_k="NO (exited during the run)"
alive_z=yes; kill -0 "$ZPID" 2>/dev/null || alive_z="NO (exited during the run)"

# Does kipper keep a transaction log yet? (ZooKeeper writes dataDir/version-2/log.*)
klogs=$(find "$KDIR/data" -name 'log.*' -type f 2>/dev/null | wc -l)
zlogs=$(find "$ZDIR/data" -name 'log.*' -type f 2>/dev/null | wc -l)
kbytes=$(du -sk "$KDIR/data" 2>/dev/null | cut -f1)
zbytes=$(du -sk "$ZDIR/data" 2>/dev/null | cut -f1)

if grep -q 'valid=0' "$RESULTS" || [ "$alive_k" != yes ] || [ "$alive_z" != yes ]; then
    KEEP=1   # something went wrong: keep the logs (the path is printed on exit)
fi

# ---- the table ---------------------------------------------------------------------------
python3 - "$RESULTS" <<PYEOF
import sys
rows = {}
order = []
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    key = kv.get("workload", "?")
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key][kv.get("tag")] = kv

def num(kv, k):
    try:
        return float(kv[k])
    except (KeyError, ValueError, TypeError):
        return None

def ratio(a, b):
    return "%.2fx" % (a / b) if a is not None and b else "-"

def lat(kv):
    p50, p99 = num(kv, "p50_ms"), num(kv, "p99_ms")
    return "%.2f/%.2f" % (p50, p99) if p50 is not None and p99 is not None else "-"

def ops(kv):
    v = num(kv, "ops_per_s")
    return "%.0f" % v if v is not None else "-"

def valid(kv):
    return kv.get("valid") == "1"

print()
print("kipper keeper vs Apache ZooKeeper ${ZK_VERSION:-3.8} -- ${CONNS} sessions, ${OUTSTANDING} outstanding, "
      "${DATA}-byte data, ${KEYS} nodes,")
print("  each run ${DURATION}s after ${WARMUP}s warm-up (create: ${CREATE_OPS} ops after ${CREATE_WARMUP_OPS}), both forceSync on")
print("targets (reported, not asserted): throughput ratio >= 2x, p99 ratio <= 0.50x, memory ratio <= 0.10x")
print()
hdr = ("workload", "kipper ops/s", "ZK ops/s", "ratio", "kipper p50/p99 ms", "ZK p50/p99 ms", "p99 ratio",
       "server cpu us/op k/ZK", "client cores k/ZK", "note")
out = [hdr]
for w in order:
    k = rows[w].get("kipper", {})
    z = rows[w].get("zookeeper", {})
    note = []
    for name, kv in (("kipper", k), ("ZK", z)):
        if not valid(kv):
            errs = " ".join("%s=%s" % (a[4:], b) for a, b in kv.items() if a.startswith("err_"))
            note.append("%s INVALID (errors=%s %s)" % (name, kv.get("errors", "?"), errs))
    kt, zt = num(k, "ops_per_s"), num(z, "ops_per_s")
    k99, z99 = num(k, "p99_ms"), num(z, "p99_ms")
    tr = ratio(kt, zt)
    pr = ratio(k99, z99)
    if kt and zt:
        tr += " ok" if kt / zt >= 2 else " <2x"
    if k99 and z99:
        pr += " ok" if k99 / z99 <= 0.5 else " >0.5x"
    kc, zc = num(k, "server_cpu_us_per_op"), num(z, "server_cpu_us_per_op")
    cpu = "%.1f/%.1f" % (kc, zc) if kc is not None and zc is not None else "-"
    def cores(kv):
        c, d = num(kv, "client_cpu_s"), num(kv, "duration_s")
        return "%.2f" % (c / d) if c is not None and d else "-"
    out.append((w, ops(k), ops(z), tr, lat(k), lat(z), pr, cpu, "%s/%s" % (cores(k), cores(z)), "; ".join(note)))
widths = [max(len(r[i]) for r in out) for i in range(len(hdr))]
for i, r in enumerate(out):
    print(" | ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        print("-+-".join("-" * widths[j] for j in range(len(hdr))))

kp, zp = int("${K_RSS_PEAK}" or 0), int("${Z_RSS_PEAK}" or 0)
kh, zh = int("${K_HWM}" or 0), int("${Z_HWM}" or 0)
ks, zs = int("${K_RSS_START}" or 0), int("${Z_RSS_START}" or 0)
mr = kp / zp if zp else None
print()
print("memory (peak VmRSS sampled every 200 ms): kipper %.1f MiB | ZK %.1f MiB | ratio %s%s"
      % (kp / 1024, zp / 1024, "%.3fx" % mr if mr is not None else "-",
         (" ok" if mr <= 0.1 else " >0.1x") if mr is not None else ""))
print("  kernel VmHWM: kipper %.1f MiB, ZK %.1f MiB; RSS when idle after start-up: kipper %.1f MiB, ZK %.1f MiB"
      % (kh / 1024, zh / 1024, ks / 1024, zs / 1024))
kt, zt = int("${K_TREE_PEAK}" or 0), int("${Z_TREE_PEAK}" or 0)
if kt > kp or zt > zp:
    print("  with child processes (e.g. a forked snapshot writer; their private pages added): peak kipper %.1f MiB,"
          " ZK %.1f MiB, ratio %s" % (kt / 1024, zt / 1024, "%.3fx" % (kt / zt) if zt else "-"))
print("servers alive at the end: kipper ${alive_k}, ZK ${alive_z}")
print("transaction log files in dataDir: kipper ${klogs} (${kbytes} KiB in dataDir), ZK ${zlogs} (${zbytes} KiB in dataDir)")
if int("${klogs}" or 0) == 0:
    print("NOTE: kipper wrote no transaction log: its writes were NOT made durable in this run, so its write")
    print("      figures (create, set, mixed) are not comparable with ZooKeeper's fsynced ones.")
print("kipper: ${KIPPER} (srvr: ${KIPPER_SRVR_VERSION}); machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), "
      "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), data on $(df -PT "$WORK" | awk 'NR==2 {print $2}')")
print("load average (1/5/15 min) at start: ${LOADAVG_START}; at end: ${LOADAVG_END}"
      " -- other work on the machine shows here and in the tails (p99/max)")
print("raw results (key=value, one line per run): ${RESULTS}" + (" (kept)" if "${KEEP}" == "1" else " (deleted; BENCH_KEEP=1 keeps it)"))
PYEOF
OK=1
