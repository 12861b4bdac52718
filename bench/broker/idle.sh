#!/usr/bin/env bash
# bench/broker/idle.sh -- what idle connections cost a busy broker: one
# producer's records/s and the broker's CPU per record with no other client,
# beside the same with BENCH_IDLE_CONNS connections open that send nothing,
# in one run, on loopback, in one command.
#
#   bench/broker/idle.sh        (about 40 s with the defaults)
#
# Starts a kipper keeper and a kipper broker in a temporary folder (their
# connection limits raised above BENCH_IDLE_CONNS), creates one topic of one
# partition per run, and runs bench/broker/load.c's produce (100-byte
# records, acks=1, linger.ms 5) for BENCH_IDLE_SECONDS per run, BENCH_IDLE_RUNS
# times each way, alternating: no idle connection, then BENCH_IDLE_CONNS
# opened and held by a helper that reads nothing and sends nothing. The
# figures are reported, never asserted: the exit status is 0 whenever the
# benchmark ran. Every process started here is stopped on exit, Ctrl-C
# included. The table goes to stdout, progress to stderr.
#
# Settings (environment):
#   BENCH_IDLE_CONNS=8000     idle connections (the descriptor limit is raised to fit)
#   BENCH_IDLE_SECONDS=4      produce seconds per run
#   BENCH_IDLE_RUNS=3         runs each way
#   BENCH_DIR=                work folder (default: a new mktemp -d); BENCH_KEEP=1 keeps it
#   KIPPER_BIN=bin/kipper     the kipper binary (built with `make` if missing)
#   BENCH_LOAD=               a prebuilt bench/broker/load.c (default: built here)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

for arg in "$@"; do
    case $arg in
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'bench/broker/idle: unknown argument %s (try --help)\n' "$arg" >&2; exit 2 ;;
    esac
done

IDLE=${BENCH_IDLE_CONNS:-8000}
SECS=${BENCH_IDLE_SECONDS:-4}
RUNS=${BENCH_IDLE_RUNS:-3}
KEEP=${BENCH_KEEP:-0}
KIPPER=${KIPPER_BIN:-$ROOT/bin/kipper}

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/broker/idle: $*"; exit 2; }

command -v python3 >/dev/null || die "needs python3 (free ports, the idle connections)"
ulimit -n $((IDLE + 1024)) 2>/dev/null || die "cannot raise the descriptor limit to $((IDLE + 1024))"
if [ ! -x "$KIPPER" ]; then
    say "bench/broker/idle: $KIPPER missing, running make"
    make -C "$ROOT" bin/kipper >&2
fi
if [ -n "${BENCH_DIR:-}" ]; then
    WORK=$BENCH_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench-idle.XXXXXX")
fi

PIDS=()          # keeper, broker (stopped in reverse order)
HOLDER=          # the idle connections' holder while it runs
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
    if [ -n "$HOLDER" ]; then kill "$HOLDER" 2>/dev/null || true; wait "$HOLDER" 2>/dev/null || true; fi
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then rm -rf "$WORK"; else say "bench/broker/idle: work folder kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if [ -n "${BENCH_LOAD:-}" ]; then
    LOAD=$BENCH_LOAD
else
    LOAD=$WORK/load
    ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -o "$LOAD" "$HERE/load.c" $(pkg-config --cflags --libs rdkafka) -lpthread ||
        die "building load.c failed (needs librdkafka-dev)"
fi

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
ZPORT=$(free_port)
BPORT=$(free_port)
mkdir -p "$WORK/keeper/data" "$WORK/broker/logs"
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
log.dirs=$WORK/broker/logs
zookeeper.connect=127.0.0.1:$ZPORT
max.connections=$((IDLE + 100))
max.connections.per.ip=$((IDLE + 100))
EOF

setsid "$KIPPER" keeper "$WORK/keeper/zoo.cfg" >"$WORK/keeper/keeper.log" 2>&1 &
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
setsid "$KIPPER" broker "$WORK/broker/server.properties" >"$WORK/broker/broker.log" 2>&1 &
BPID=$!
PIDS+=("$BPID")
for ((i = 0; i < 300; i++)); do
    kill -0 "$BPID" 2>/dev/null || die "the broker exited during start-up; see $WORK/broker/broker.log"
    grep -q 'is live at' "$WORK/broker/broker.log" 2>/dev/null && break
    sleep 0.1
done
((i < 300)) || die "the broker did not register within 30 s; see $WORK/broker/broker.log"
say "bench/broker/idle: keeper pid $ZPID, broker pid $BPID on 127.0.0.1:$BPORT, work folder $WORK"

# Opens n connections, says "open" once all are accepted, then holds them until killed.
hold_idle() {
    python3 -c '
import socket, sys, time
n, port = int(sys.argv[1]), int(sys.argv[2])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
print("open", flush=True)
while True:
    time.sleep(3600)' "$IDLE" "$BPORT" >"$WORK/holder.out" 2>"$WORK/holder.log" &
    HOLDER=$!
    for ((i = 0; i < 600; i++)); do
        grep -q open "$WORK/holder.out" 2>/dev/null && return 0
        kill -0 "$HOLDER" 2>/dev/null || die "the idle connections' holder failed; see $WORK/holder.log"
        sleep 0.1
    done
    die "$IDLE connections not open after 60 s"
}
release_idle() {
    kill "$HOLDER" 2>/dev/null || true
    wait "$HOLDER" 2>/dev/null || true
    HOLDER=
}

RESULTS=$WORK/results.txt
: >"$RESULTS"
produce() {      # tag -> one line "tag <load's key=value line>"
    local tag=$1 topic="idle-$1-$2"
    "$KIPPER" topics --zookeeper "127.0.0.1:$ZPORT" --create --topic "$topic" --partitions 1 \
        --replication-factor 1 >>"$WORK/topics.log" 2>&1 || die "creating topic $topic failed"
    local line
    line=$("$LOAD" produce -b "127.0.0.1:$BPORT" -t "$topic" -s 100 -a 1 -d "$SECS" -P "$BPID" 2>>"$WORK/load.log" |
        tail -n 1) || die "load.c failed; see $WORK/load.log"
    say "$tag: $line"
    echo "$tag $line" >>"$RESULTS"
}

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
produce warmup 0
for ((r = 1; r <= RUNS; r++)); do
    produce none "$r"
    hold_idle
    produce idle "$r"
    release_idle
done
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$RESULTS" "$IDLE" "$LOADAVG_START" "$LOADAVG_END" <<'EOF'
import sys
runs = {"none": [], "idle": []}
for line in open(sys.argv[1]):
    tag, rest = line.split(" ", 1)
    if tag in runs:
        kv = dict(p.split("=", 1) for p in rest.split() if "=" in p)
        runs[tag].append((float(kv["records_per_s"]), float(kv["server_cpu_us_per_record"])))
print("One producer, 100-byte records, acks=1, RF=1; with no other client and with %s idle connections" % sys.argv[2])
print("%-30s %s" % ("", "  ".join("%9s" % ("run %d" % (i + 1)) for i in range(len(runs["none"])))))
for tag, label in (("none", "no idle connection"), ("idle", "%s idle" % sys.argv[2])):
    print("%-30s %s" % (label + ", records/s", "  ".join("%9.0f" % r for r, _ in runs[tag])))
    print("%-30s %s" % (label + ", broker us/rec", "  ".join("%9.3f" % c for _, c in runs[tag])))
med = lambda xs: sorted(xs)[len(xs) // 2]
r0, r1 = med([r for r, _ in runs["none"]]), med([r for r, _ in runs["idle"]])
c0, c1 = med([c for _, c in runs["none"]]), med([c for _, c in runs["idle"]])
print("medians: idle / none: records/s %.2fx, broker CPU per record %.2fx" % (r1 / r0, c1 / c0))
print("load average %s at the start, %s at the end" % (sys.argv[3], sys.argv[4]))
EOF
OK=1
