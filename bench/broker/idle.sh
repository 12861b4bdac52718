#!/usr/bin/env bash
# bench/broker/idle.sh -- what idle connections cost a busy broker: one
# producer's records/s and the broker's CPU per record with no other client,
# beside the same with BENCH_IDLE_CONNS connections open that send nothing,
# in one run, on loopback, in one command.
#
#   bench/broker/idle.sh        (about 40 s with the defaults)
#
# Starts a kipper keeper and a kipper broker in a temporary folder
# (bench/broker/cluster.sh; the broker's connection limits raised above
# BENCH_IDLE_CONNS), creates one topic of one
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

# One keeper member and one broker (cluster.sh), their connection limits above IDLE.
# shellcheck disable=SC2034  # cluster.sh's
CL_KEEPERS=1 CL_TICK=2000 CL_SESSION=18000
# shellcheck disable=SC2034  # cluster.sh's
CL_BROKER_PROPS="max.connections=$((IDLE + 100)) max.connections.per.ip=$((IDLE + 100))"
# shellcheck source=bench/broker/cluster.sh disable=SC1091
. "$HERE/cluster.sh"

HOLDER=          # the idle connections' holder while it runs
OK=0
cleanup() {
    if [ -n "$HOLDER" ]; then kill "$HOLDER" 2>/dev/null || true; wait "$HOLDER" 2>/dev/null || true; fi
    cl_stop_all
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then rm -rf "$WORK"; else say "bench/broker/idle: work folder kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if [ -n "${BENCH_LOAD:-}" ]; then
    LOAD=$BENCH_LOAD
else
    LOAD=$WORK/load
    # shellcheck disable=SC2046
    ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -o "$LOAD" "$HERE/load.c" $(pkg-config --cflags --libs rdkafka) -lpthread ||
        die "building load.c failed (needs librdkafka-dev)"
fi
cl_start_keepers
cl_start_brokers 1
# shellcheck disable=SC2153  # cluster.sh's
BPORT1=${BPORT[1]}
# shellcheck disable=SC2153  # cluster.sh's
BPID1=${BPID[1]}
say "bench/broker/idle: broker pid $BPID1 on 127.0.0.1:$BPORT1, work folder $WORK"

# Opens n connections, says "open" once all are accepted, then holds them until killed.
hold_idle() {
    python3 -c '
import socket, sys, time
n, port = int(sys.argv[1]), int(sys.argv[2])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
print("open", flush=True)
while True:
    time.sleep(3600)' "$IDLE" "$BPORT1" >"$WORK/holder.out" 2>"$WORK/holder.log" &
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
    cl_create_topic "$topic" 1
    local line
    line=$("$LOAD" produce -b "127.0.0.1:$BPORT1" -t "$topic" -s 100 -a 1 -d "$SECS" -P "$BPID1" 2>>"$WORK/load.log" |
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
