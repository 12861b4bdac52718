#!/usr/bin/env bash
# bench/broker/run.sh -- kipper's broker: producer and consumer throughput and
# produce / end-to-end latency, printed beside the machine's own limits
# measured in the same run (sequential writes to the log dir's file system,
# loopback TCP), on loopback, in one command.
#
#   bench/broker/run.sh        (or: make bench-broker; about 2 minutes)
#
# Builds bench/broker/load.c (on librdkafka), starts a kipper keeper and a
# kipper broker in a temporary folder, creates one topic per measurement (1
# partition, replication factor 1), and for each record size:
#   1. disk: writes BENCH_DISK_MIB to the log dir's file system and fdatasyncs
#      (the limit the produce run is set beside, measured just before it; the
#      file stays until the end, so that memory it would free cannot speed up
#      the broker's page-cache writes, see bench/README.md);
#   2. produce: one producer, acks=all, for BENCH_PRODUCE_SECONDS (capped at
#      BENCH_PRODUCE_MAX_MB of records), records/s and MB/s;
#   3. consume: one consumer reads those records back from offset 0 and checks
#      each (offset, size, the sequence number the producer wrote);
#   4. latency: at each rate of BENCH_RATES, produce with acks=all and
#      linger.ms=0 while a consumer in the same process tails the partition:
#      acknowledgement and end-to-end latency percentiles (from each record's
#      due time, open loop). A rate above 80% of the size's measured produce
#      throughput is skipped.
# The loopback TCP limit (1 connection, write and sendfile) is measured once
# before the runs. Targets from the issue are printed beside the figures;
# they are reported, never asserted: the exit status is 0 whenever the
# benchmark ran, whatever the numbers. Everything runs on 127.0.0.1; every
# process started here is stopped on exit, Ctrl-C included. The table goes to
# stdout, progress and the raw per-run lines to stderr.
#
# Settings (environment):
#   BENCH_SIZES="100 1024"        record sizes (bytes of value; no key)
#   BENCH_ACKS=all                acks for every produce (0, 1, all)
#   BENCH_PRODUCE_SECONDS=5       produce run length (at most)
#   BENCH_PRODUCE_MAX_MB=3000     and at most this many MB of records per size
#   BENCH_RATES="10000 100000 1000000"   latency runs, records/s
#   BENCH_LATENCY_SECONDS=10      measured seconds per latency run
#   BENCH_LATENCY_WARMUP=2        seconds before those, not counted
#   BENCH_LINGER_MS=              linger.ms for the produce runs (load.c's default 5)
#   BENCH_DISK_MIB=2048           MiB written for the disk limit
#   BENCH_TCP_SECONDS=2           seconds per loopback TCP test
#   BENCH_WARMUP_SECONDS=1        produce into a warm-up topic first (0: none)
#   BENCH_BROKER_PROPS=           extra server.properties lines, space-separated key=value
#                                 (e.g. "log.flush.interval.ms=60000")
#   BENCH_LOAD_ARGS=              extra arguments for every load run (e.g. "-I" for idempotence,
#                                 "-X producer.batch.num.messages=10000")
#   BENCH_TIMELINE=0              1: per-second timeline of each latency run (records, worst latency,
#                                 records over 3 ms) into the work folder's load.log (implies BENCH_KEEP=1)
#   BENCH_PERF=0                  1: `perf record -g` of the broker during each run, reports
#                                 in the work folder (implies BENCH_KEEP=1)
#   BENCH_DIR=                    work folder (default: a new mktemp -d under $TMPDIR or /tmp);
#                                 the log dir lives there, so this picks the disk measured
#   BENCH_KEEP=0                  1: keep the work folder (configs, logs, data, raw results);
#                                 after a failure or an interruption it is kept anyway, without
#                                 the partitions' data
#   BENCH_LOAD=                   a prebuilt load generator (make bench-broker passes
#                                 build/bench-broker-load); default: built into the work folder
#   KIPPER_BIN=bin/kipper         the kipper binary (built with `make` if missing)
#   BENCH_CLIENT_CPUS= / BENCH_SERVER_CPUS=   optional taskset CPU lists
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

for arg in "$@"; do
    case $arg in
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'bench/broker: unknown argument %s (try --help)\n' "$arg" >&2; exit 2 ;;
    esac
done

SIZES=${BENCH_SIZES:-100 1024}
ACKS=${BENCH_ACKS:-all}
PRODUCE_SECONDS=${BENCH_PRODUCE_SECONDS:-5}
PRODUCE_MAX_MB=${BENCH_PRODUCE_MAX_MB:-3000}
RATES=${BENCH_RATES:-10000 100000 1000000}
LAT_SECONDS=${BENCH_LATENCY_SECONDS:-10}
LAT_WARMUP=${BENCH_LATENCY_WARMUP:-2}
LINGER=${BENCH_LINGER_MS:-}
DISK_MIB=${BENCH_DISK_MIB:-2048}
TCP_SECONDS=${BENCH_TCP_SECONDS:-2}
WARMUP_SECONDS=${BENCH_WARMUP_SECONDS:-1}
# shellcheck disable=SC2206
EXTRA=(${BENCH_LOAD_ARGS:-})
PERF=${BENCH_PERF:-0}
KEEP=${BENCH_KEEP:-0}
[ "$PERF" = 1 ] && KEEP=1
TIMELINE=()
if [ "${BENCH_TIMELINE:-0}" = 1 ]; then TIMELINE=(-T); KEEP=1; fi
KIPPER=${KIPPER_BIN:-$ROOT/bin/kipper}
CLIENT_CPUS=${BENCH_CLIENT_CPUS:-}
SERVER_CPUS=${BENCH_SERVER_CPUS:-}

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/broker: $*"; exit 2; }

# ---- prerequisites --------------------------------------------------------
command -v python3 >/dev/null || die "needs python3 (free ports, the table)"
if [ -z "${BENCH_LOAD:-}" ]; then
    pkg-config --exists rdkafka 2>/dev/null ||
        die "needs librdkafka's headers: apt-get install librdkafka-dev pkg-config (or: ./scripts/ensure-deps.sh bench)"
fi
if [ "$PERF" = 1 ]; then command -v perf >/dev/null || die "BENCH_PERF=1 needs perf (apt-get install linux-perf)"; fi
if [ ! -x "$KIPPER" ]; then
    say "bench/broker: $KIPPER missing, running make"
    make -C "$ROOT" bin/kipper >&2
fi

if [ -n "${BENCH_DIR:-}" ]; then
    WORK=$BENCH_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench-broker.XXXXXX")
fi

# ---- clean-up: every process started here is stopped here ------------------
PIDS=()          # keeper, broker (stopped in reverse order)
LOADPID=         # a running load generator
PERFPID=         # a running perf record
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
    local i
    if [ -n "$LOADPID" ]; then kill "$LOADPID" 2>/dev/null || true; wait "$LOADPID" 2>/dev/null || true; fi
    if [ -n "$PERFPID" ]; then kill -INT "$PERFPID" 2>/dev/null || true; wait "$PERFPID" 2>/dev/null || true; fi
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
    rm -f "$WORK"/broker/kipper-bench-disk.*   # the disk limit's files (BENCH_DISK_MIB each), kept or not
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$WORK"
    elif [ "${BENCH_KEEP:-0}" != 1 ] && [ -n "${LOGS:-}" ]; then
        # kept for its logs and results, without the gigabytes of records
        rm -rf "$LOGS" "$WORK/keeper/data"
        say "bench/broker: work folder kept (the partitions' and the keeper's data removed; BENCH_KEEP=1 keeps them): $WORK"
    else
        say "bench/broker: work folder kept: $WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the load generator -----------------------------------------------------
if [ -n "${BENCH_LOAD:-}" ]; then
    LOAD=$BENCH_LOAD
    case $LOAD in /*) ;; *) LOAD=$PWD/$LOAD ;; esac
else
    LOAD=$WORK/load
    # shellcheck disable=SC2046
    ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -o "$LOAD" "$HERE/load.c" $(pkg-config --cflags --libs rdkafka) -lpthread ||
        die "building load.c failed"
fi
CLIENT_VERSION=$("$LOAD" version)

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
server_taskset() { if [ -n "$SERVER_CPUS" ]; then echo taskset -c "$SERVER_CPUS"; fi; }
client_taskset() { if [ -n "$CLIENT_CPUS" ]; then echo taskset -c "$CLIENT_CPUS"; fi; }

# ---- keeper and broker ---------------------------------------------------------
ZPORT=$(free_port)
BPORT=$(free_port)
mkdir -p "$WORK/keeper/data" "$WORK/broker/logs"
LOGS=$WORK/broker/logs
cat >"$WORK/keeper/zoo.cfg" <<EOF
tickTime=2000
dataDir=$WORK/keeper/data
clientPort=$ZPORT
clientPortAddress=127.0.0.1
4lw.commands.whitelist=*
EOF
cat >"$WORK/broker/server.properties" <<EOF
broker.id=1
listeners=PLAINTEXT://127.0.0.1:$BPORT
log.dirs=$LOGS
zookeeper.connect=127.0.0.1:$ZPORT
num.partitions=1
default.replication.factor=1
EOF
for kv in ${BENCH_BROKER_PROPS:-}; do echo "$kv" >>"$WORK/broker/server.properties"; done

# shellcheck disable=SC2046
$(server_taskset) "$KIPPER" keeper "$WORK/keeper/zoo.cfg" >"$WORK/keeper/keeper.log" 2>&1 &
ZPID=$!
PIDS+=("$ZPID")
for ((i = 0; i < 300; i++)); do
    kill -0 "$ZPID" 2>/dev/null || die "the keeper exited during start-up; see $WORK/keeper/keeper.log"
    # shellcheck disable=SC2016
    if timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf ruok >&3 && cat <&3' _ "$ZPORT" 2>/dev/null |
        grep -q imok; then
        break
    fi
    sleep 0.1
done
((i < 300)) || die "the keeper is not serving on 127.0.0.1:$ZPORT after 30 s"

# shellcheck disable=SC2046
$(server_taskset) "$KIPPER" broker "$WORK/broker/server.properties" >"$WORK/broker/broker.log" 2>&1 &
BPID=$!
PIDS+=("$BPID")
for ((i = 0; i < 300; i++)); do
    kill -0 "$BPID" 2>/dev/null || die "the broker exited during start-up; see $WORK/broker/broker.log"
    grep -q 'is live at' "$WORK/broker/broker.log" 2>/dev/null && break
    sleep 0.1
done
((i < 300)) || die "the broker did not register within 30 s; see $WORK/broker/broker.log"
say "bench/broker: keeper pid $ZPID on 127.0.0.1:$ZPORT, broker pid $BPID on 127.0.0.1:$BPORT, work folder $WORK"

create_topic() {
    "$KIPPER" topics --zookeeper "127.0.0.1:$ZPORT" --create --topic "$1" --partitions 1 \
        --replication-factor 1 >>"$WORK/topics.log" 2>&1 || die "creating topic $1 failed; see $WORK/topics.log"
}
topics=()
[ "$WARMUP_SECONDS" != 0 ] && topics+=(warmup)
for s in $SIZES; do topics+=("bench-$s" "latency-$s"); done
for t in "${topics[@]}"; do create_topic "$t"; done

# ---- the runs -------------------------------------------------------------------
RESULTS=$WORK/results.txt
: >"$RESULTS"
perf_start() {   # tag (the broker's runs only)
    [ "$PERF" = 1 ] || return 0
    case $1 in produce-* | consume-* | latency-*) ;; *) return 0 ;; esac
    perf record -F 499 -g -p "$BPID" -o "$WORK/perf-$1.data" >/dev/null 2>>"$WORK/perf.log" &
    PERFPID=$!
}
perf_stop() {    # tag
    [ -n "$PERFPID" ] || return 0
    kill -INT "$PERFPID" 2>/dev/null || true
    wait "$PERFPID" 2>/dev/null || true
    PERFPID=
    perf report -i "$WORK/perf-$1.data" --no-children --percent-limit 1 --stdio >"$WORK/perf-$1.txt" 2>/dev/null || true
}
run_load() {     # tag mode args... -> one line "tag=... <load's key=value line>" in $RESULTS
    local tag=$1 rc=0 line
    shift
    perf_start "$tag"
    # in the background, so that a signal reaches the trap (and the clean-up) at once
    # shellcheck disable=SC2046
    $(client_taskset) "$LOAD" "$@" >"$WORK/last.out" 2>>"$WORK/load.log" &
    LOADPID=$!
    echo "== $tag: $*" >>"$WORK/load.log"
    wait "$LOADPID" || rc=$?
    LOADPID=
    perf_stop "$tag"
    line=$(head -n 1 "$WORK/last.out")
    if [ -z "$line" ]; then
        line="mode=$1 valid=0 errors=1 err_LOADEXIT=$rc"
        say "bench/broker: load $tag exited $rc; see $WORK/load.log"
    fi
    line="tag=$tag $line"
    echo "$line" >>"$RESULTS"
    say "  $line"
}
log_bytes() {    # topic -> bytes in its partition's segment files
    local sum=0 f sz
    for f in "$LOGS/$1-0"/*.log; do
        [ -e "$f" ] || continue
        sz=$(stat -c %s "$f")
        sum=$((sum + sz))
    done
    echo "$sum"
}
field() {        # key -> its value in $WORK/last.out's line
    tr ' ' '\n' <"$WORK/last.out" | sed -n "s/^$1=//p" | head -n 1
}

B=(-b "127.0.0.1:$BPORT" -P "$BPID" "${EXTRA[@]}")
LINGER_ARGS=()
[ -n "$LINGER" ] && LINGER_ARGS=(-l "$LINGER")

say "bench/broker: loopback TCP (${TCP_SECONDS}s write, ${TCP_SECONDS}s sendfile)"
run_load tcp tcp -d "$TCP_SECONDS" -D "$WORK/broker"
if [ "$WARMUP_SECONDS" != 0 ]; then
    say "bench/broker: warm-up (${WARMUP_SECONDS}s of produce)"
    run_load warmup produce "${B[@]}" -t warmup -s 100 -a "$ACKS" -d "$WARMUP_SECONDS" "${LINGER_ARGS[@]}"
fi
for s in $SIZES; do
    say "bench/broker: ${s}-byte records"
    run_load "disk-$s" disk -D "$WORK/broker" -S "$DISK_MIB" -K
    max=$((PRODUCE_MAX_MB * 1000000 / s))
    run_load "produce-$s" produce "${B[@]}" -t "bench-$s" -s "$s" -a "$ACKS" -d "$PRODUCE_SECONDS" -n "$max" \
        "${LINGER_ARGS[@]}"
    n=$(field records)
    produce_mbs=$(field mb_per_s)
    lb=$(log_bytes "bench-$s")
    sed -i '$ s/$/ log_bytes='"$lb"'/' "$RESULTS"
    if [ -n "$n" ] && [ "$n" -gt 0 ]; then
        run_load "consume-$s" consume "${B[@]}" -t "bench-$s" -s "$s" -n "$n"
        sed -i '$ s/$/ log_bytes='"$lb"'/' "$RESULTS"
    fi
    for r in $RATES; do
        if [ -n "$produce_mbs" ] &&
            python3 -c "import sys; sys.exit(0 if $r * $s / 1e6 > 0.8 * $produce_mbs else 1)"; then
            say "  latency-$s-$r: skipped ($r records/s of $s bytes is above 80% of the $produce_mbs MB/s produced)"
            echo "tag=latency-$s-$r mode=latency size=$s rate=$r skipped=1" >>"$RESULTS"
            continue
        fi
        run_load "latency-$s-$r" latency "${B[@]}" -t "latency-$s" -s "$s" -a "$ACKS" -r "$r" \
            -d "$LAT_SECONDS" -W "$LAT_WARMUP" "${TIMELINE[@]}"
    done
done

# ---- after the runs ------------------------------------------------------------
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)
alive_b=yes; kill -0 "$BPID" 2>/dev/null || alive_b="NO (exited during the run)"
alive_z=yes; kill -0 "$ZPID" 2>/dev/null || alive_z="NO (exited during the run)"
b_warn=$(grep -c ' W \[' "$WORK/broker/broker.log" || true)
b_err=$(grep -c ' E \[' "$WORK/broker/broker.log" || true)
b_hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$BPID/status" 2>/dev/null || echo 0)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
src_commit=$(git -C "$ROOT" log -1 --format=%h -- src 2>/dev/null || echo '?')
commit="$commit, src/ as of $src_commit"
git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || commit="$commit + uncommitted changes in src/"
fs=$(df -PT "$LOGS" | awk 'NR==2 {print $2}')
if grep -q 'valid=0' "$RESULTS" || [ "$alive_b" != yes ] || [ "$b_err" != 0 ]; then
    KEEP=1   # something went wrong: keep the logs (the path is printed on exit)
fi

python3 - "$RESULTS" <<PYEOF
import sys
runs = {}
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    runs[kv.get("tag")] = kv

def num(kv, k):
    try:
        return float(kv[k])
    except (KeyError, ValueError, TypeError):
        return None

def f(v, fmt):
    return fmt % v if v is not None else "-"

def invalid(kv):
    if kv.get("valid") == "1":
        return ""
    errs = " ".join("%s=%s" % (a[4:], b) for a, b in kv.items() if a.startswith("err_"))
    return "INVALID (errors=%s %s)" % (kv.get("errors", "?"), errs)

def table(hdr, rows):
    widths = [max(len(r[i]) for r in [hdr] + rows) for i in range(len(hdr))]
    for i, r in enumerate([hdr] + rows):
        print(" | ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            print("-+-".join("-" * widths[j] for j in range(len(hdr))))

sizes = "${SIZES}".split()
tcp = runs.get("tcp", {})
tcp_w, tcp_s = num(tcp, "write_mb_per_s"), num(tcp, "sendfile_mb_per_s")
print()
print("kipper broker -- ${CLIENT_VERSION}, 1 partition, replication factor 1, acks=${ACKS}, compression none, loopback;")
print("  produce: one producer for up to ${PRODUCE_SECONDS}s (at most ${PRODUCE_MAX_MB} MB); consume: one consumer reads it back from offset 0")
print("machine limits measured in this run (MB = 10^6 bytes):")
print("  loopback TCP, 1 connection, ${TCP_SECONDS}s each: write() %s MB/s, sendfile() from a page-cached file %s MB/s"
      % (f(tcp_w, "%.0f"), f(tcp_s, "%.0f")))
for s in sizes:
    d = runs.get("disk-%s" % s, {})
    print("  disk, just before produce-%s: ${DISK_MIB} MiB sequential write() + fdatasync %s MB/s (%.2fs + %.2fs);"
          " the writes alone %s MB/s (first half %s, second half %s)"
          % (s, f(num(d, "durable_mb_per_s"), "%.0f"), num(d, "write_s") or 0, num(d, "fdatasync_s") or 0,
             f(num(d, "pagecache_mb_per_s"), "%.0f"), f(num(d, "pagecache_first_half_mb_per_s"), "%.0f"),
             f(num(d, "pagecache_second_half_mb_per_s"), "%.0f")))
print()
print("throughput: MB/s counts record values; log MB/s counts the bytes of the segment files (batches as on the wire),")
print("  which is what the limit beside it is about; ratio = log MB/s / limit")
rows = []
for s in sizes:
    for what in ("produce", "consume"):
        kv = runs.get("%s-%s" % (what, s))
        if kv is None:
            continue
        dur, lb = num(kv, "duration_s"), num(kv, "log_bytes")
        lmbs = lb / dur / 1e6 if lb and dur else None
        if what == "produce":
            lim = num(runs.get("disk-%s" % s, {}), "durable_mb_per_s")
            limname = "disk %s" % f(lim, "%.0f")
        else:
            lim = tcp_s
            limname = "TCP sendfile %s" % f(lim, "%.0f")
        ratio = "%.2fx" % (lmbs / lim) if lmbs and lim else "-"
        bpr = "%.1f" % (lb / num(kv, "records")) if lb and num(kv, "records") else "-"
        note = invalid(kv)
        if what == "consume" and num(kv, "seq_mismatch"):
            note = (note + " " if note else "") + "seq_mismatch=%s" % kv["seq_mismatch"]
        rows.append(("%s %sB" % (what, s), f(num(kv, "records"), "%.0f"), f(num(kv, "records_per_s"), "%.0f"),
                     f(num(kv, "mb_per_s"), "%.1f"), f(lmbs, "%.1f"), bpr, limname, ratio,
                     f(num(kv, "server_cores"), "%.2f"), f(num(kv, "server_cpu_us_per_record"), "%.3f"),
                     f(num(kv, "client_cores"), "%.2f"), note))
table(("run", "records", "records/s", "MB/s", "log MB/s", "log B/rec", "limit MB/s", "ratio", "broker cores",
       "broker us/rec", "client cores", "note"), rows)
for s in sizes:
    kv = runs.get("produce-%s" % s)
    if kv:
        print("  produce-%s: acks %s after %s ms p50, %s ms p99 -- client-side queueing under a saturating load (linger.ms %s)"
              % (s, kv.get("acks"), f(num(kv, "ack_p50_ms"), "%.1f"), f(num(kv, "ack_p99_ms"), "%.1f"), kv.get("linger_ms")))

print()
print("latency: acks=${ACKS}, linger.ms 0, fixed rate (open loop) for ${LAT_SECONDS}s after ${LAT_WARMUP}s, from each record's due time;")
print("  e2e = received by a consumer in the same process")
rows = []
for s in sizes:
    for r in "${RATES}".split():
        kv = runs.get("latency-%s-%s" % (s, r))
        if kv is None:
            continue
        if kv.get("skipped") == "1":
            rows.append(("%sB" % s, r, "-", "-", "-", "-", "-", "-", "skipped: above 80% of produce throughput"))
            continue
        def pct(p):
            v = [num(kv, "%s_%s_ms" % (p, q)) for q in ("p50", "p99", "p999")]
            return "/".join(f(x, "%.2f") for x in v)
        rows.append(("%sB" % s, r, pct("ack"), pct("e2e"), f(num(kv, "e2e_max_ms"), "%.1f"),
                     f(num(kv, "behind_max_ms"), "%.1f"), f(num(kv, "server_cores"), "%.2f"),
                     f(num(kv, "client_cores"), "%.2f"), invalid(kv)))
table(("size", "rate/s", "ack p50/p99/p99.9 ms", "e2e p50/p99/p99.9 ms", "e2e max ms", "sender late max ms",
       "broker cores", "client cores", "note"), rows)

print()
p = runs.get("produce-100")
lat = [runs[t] for t in runs if t.startswith("latency-100-") and runs[t].get("skipped") != "1"]
tgt = []
if p:
    rps = num(p, "records_per_s") or 0
    tgt.append("produce 100 B acks=${ACKS} >= 1,000,000 records/s: %.2f M %s" % (rps / 1e6, "ok" if rps >= 1e6 else "below"))
if lat:
    best = max(lat, key=lambda kv: num(kv, "rate") or 0)
    e99 = num(best, "e2e_p99_ms")
    tgt.append("end-to-end p99 < 3 ms (100 B at %s/s): %s ms %s" % (best.get("rate"), f(e99, "%.2f"),
               "ok" if e99 is not None and e99 < 3 else "above"))
print("targets (reported, not asserted): " + "; ".join(tgt))
print("broker: alive at the end ${alive_b} (keeper ${alive_z}); log lines: ${b_warn} warnings, ${b_err} errors; peak RSS (VmHWM) %.1f MiB"
      % (int("${b_hwm}" or 0) / 1024))
print("kipper: ${KIPPER} (commit ${commit}); machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), "
      "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), log dir on ${fs}")
print("load average (1/5/15 min) at start: ${LOADAVG_START}; at end: ${LOADAVG_END}"
      " -- client and broker share the machine's CPUs, and so does any other work")
print("raw results (key=value, one line per run): ${RESULTS}" + (" (kept)" if "${KEEP}" == "1" else " (deleted; BENCH_KEEP=1 keeps it)"))
PYEOF
OK=1
