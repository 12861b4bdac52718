#!/usr/bin/env bash
# bench/broker/flood.sh -- another client's produce and fetch p99 while one
# client floods the broker with compression bombs and garbage batches,
# beside the same client's quiet p99 in the same run (issue 11's target:
# within 2x), on loopback, in one command.
#
#   bench/broker/flood.sh        (about 40 s with the defaults)
#
# Builds bench/broker/flood.c (raw Kafka protocol; zlib, snappy, lz4 and
# zstd to build the bombs), starts a kipper keeper and a kipper broker in a
# temporary folder with default settings, creates the topics "quiet" and
# "flood" (1 partition each), and runs flood.c: paced produce + fetch round
# trips on one connection, measured quietly for BENCH_FLOOD_SECONDS and for
# as long while BENCH_FLOOD_CONNS connections send bombs and garbage without
# pause, in alternating slices (flood.c's header lists them). The figures are reported, never
# asserted: the exit status is 0 whenever the benchmark ran. Every process
# started here is stopped on exit, Ctrl-C included. The table goes to
# stdout, progress and the raw key=value line to stderr.
#
# Settings (environment):
#   BENCH_FLOOD_SECONDS=15     measured seconds, quiet and flooded each
#   BENCH_FLOOD_WARMUP=3       seconds of round trips before measuring
#   BENCH_FLOOD_RATE=500       round trips (one produce + one fetch) per second
#   BENCH_FLOOD_CONNS=1        flooding connections (0: the control, slices without a flood)
#   BENCH_FLOOD_MIX=all        what they send: all, bombs, garbage (flood.c's -m)
#   BENCH_FLOOD_CODEC=none     the measured producer's codec: none, gzip, snappy, snappy-xerial, lz4, zstd
#   BENCH_BROKER_PROPS=        extra server.properties lines, space-separated key=value
#   BENCH_DIR=                 work folder (default: a new mktemp -d); BENCH_KEEP=1 keeps it
#   KIPPER_BIN=bin/kipper      the kipper binary (built with `make` if missing)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

for arg in "$@"; do
    case $arg in
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'bench/broker/flood: unknown argument %s (try --help)\n' "$arg" >&2; exit 2 ;;
    esac
done

SECONDS_EACH=${BENCH_FLOOD_SECONDS:-15}
WARMUP=${BENCH_FLOOD_WARMUP:-3}
RATE=${BENCH_FLOOD_RATE:-500}
CONNS=${BENCH_FLOOD_CONNS:-1}
MIX=${BENCH_FLOOD_MIX:-all}
CODEC=${BENCH_FLOOD_CODEC:-none}
KEEP=${BENCH_KEEP:-0}
KIPPER=${KIPPER_BIN:-$ROOT/bin/kipper}

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/broker/flood: $*"; exit 2; }

command -v python3 >/dev/null || die "needs python3 (free ports)"
if [ ! -x "$KIPPER" ]; then
    say "bench/broker/flood: $KIPPER missing, running make"
    make -C "$ROOT" bin/kipper >&2
fi
if [ -n "${BENCH_DIR:-}" ]; then
    WORK=$BENCH_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench-flood.XXXXXX")
fi

# ---- clean-up: every process started here is stopped here ------------------
PIDS=()          # keeper, broker (stopped in reverse order)
RUNPID=          # flood.c while it runs
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
    if [ -n "$RUNPID" ]; then kill "$RUNPID" 2>/dev/null || true; wait "$RUNPID" 2>/dev/null || true; fi
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then rm -rf "$WORK"; else say "bench/broker/flood: work folder kept: $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
FLOOD=$WORK/flood
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -Werror -o "$FLOOD" "$HERE/flood.c" -lz -lsnappy -llz4 -lzstd -lpthread ||
    die "building flood.c failed (needs zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev)"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---- keeper and broker ---------------------------------------------------------
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
EOF
for kv in ${BENCH_BROKER_PROPS:-}; do echo "$kv" >>"$WORK/broker/server.properties"; done

# Each in a session of its own (setsid): Linux's autogroup scheduling shares
# the CPU between sessions first, so the broker, the measured client and the
# flood (flood.c forks it into its own session) share this machine's CPUs
# more as separate machines' processes would.
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
say "bench/broker/flood: keeper pid $ZPID, broker pid $BPID on 127.0.0.1:$BPORT, work folder $WORK"
for t in quiet flood; do
    "$KIPPER" topics --zookeeper "127.0.0.1:$ZPORT" --create --topic "$t" --partitions 1 --replication-factor 1 \
        >>"$WORK/topics.log" 2>&1 || die "creating topic $t failed; see $WORK/topics.log"
done
for ((i = 0; i < 100; i++)); do   # the broker leads both before anything is measured
    [ "$(grep -c 'leading \(quiet\|flood\)-0 at epoch' "$WORK/broker/broker.log" || true)" -ge 2 ] && break
    sleep 0.1
done

# ---- the run ---------------------------------------------------------------------
setsid "$FLOOD" -b "127.0.0.1:$BPORT" -s "$SECONDS_EACH" -w "$WARMUP" -r "$RATE" -c "$CONNS" -m "$MIX" -z "$CODEC" \
    >"$WORK/flood.out" 2>"$WORK/flood.log" &
RUNPID=$!
wait "$RUNPID" || die "flood.c failed; see $WORK/flood.log"
RUNPID=
LINE=$(head -n 1 "$WORK/flood.out")
say "$LINE"
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$LINE" "$LOADAVG_START" "$LOADAVG_END" <<'EOF'
import sys
kv = dict(p.split("=", 1) for p in sys.argv[1].split())
print("Another client's latency (ms) while %s connection(s) flood (%s: %s s each, %s round trips/s, its records %s)"
      % (kv["flood_conns"], {"all": "bombs and garbage"}.get(kv["mix"], kv["mix"]), kv["seconds"], kv["rate"],
         "uncompressed" if kv["codec"] == "none" else kv["codec"]))
print("%-8s %10s %10s %10s %10s %8s" % ("", "quiet p50", "quiet p99", "flood p50", "flood p99", "p99 x"))
for what in ("produce", "fetch"):
    print("%-8s %10s %10s %10s %10s %8s   (target: within 2x)" % (
        what, kv["quiet_%s_p50_ms" % what], kv["quiet_%s_p99_ms" % what], kv["flood_%s_p50_ms" % what],
        kv["flood_%s_p99_ms" % what], kv["%s_p99_ratio" % what]))
print("flood: %s requests (%s MB sent), %s refused, %s accepted; measured client errors: %s; round trips %s"
      % (kv["flood_requests"], kv["flood_mb"], kv["flood_refused"], kv["flood_accepted"], kv["errors"],
         kv["roundtrips"]))
print("load average %s at the start, %s at the end" % (sys.argv[2], sys.argv[3]))
EOF
OK=1
