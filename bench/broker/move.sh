#!/usr/bin/env bash
# bench/broker/move.sh -- kipper's broker: moving a partition to a new broker.
# How long does moving a 1 GiB partition take, at what rate, unthrottled and
# with the move throttle (leader.replication.throttled.rate and
# follower.replication.throttled.rate), does the throttle hold the catch-up
# traffic to its rate, and what does a move do to a producer's p99 on the
# same brokers? On loopback, in one command.
#
#   bench/broker/move.sh        (or: make bench-broker-move; about 2-2.5 minutes)
#
# First the machine's own limits for the bytes a move carries: loopback TCP
# (one connection, write and sendfile) and a sequential write of
# BENCH_DISK_MIB + fdatasync to the log dirs' file system. Then, for each run
# of BENCH_MOVE_RUNS (unthrottled, throttled), on a fresh cluster (a keeper
# ensemble and 4 brokers, started for that run alone and removed after it;
# the throttled run's brokers have both throttle rates set to
# BENCH_MOVE_RATE_MB in their server.properties, the unthrottled run's have
# none):
#   1. topic "move", one partition on brokers 1,2,3 (broker 1 leads), filled
#      with BENCH_MOVE_GIB GiB of record values (BENCH_MOVE_FILL_SIZE-byte
#      records, acks=1) and waited for until brokers 2 and 3 hold all of it;
#      broker 4 is up and holds nothing: it is the new broker. Topic
#      "latency", one partition on brokers 1,2,3, min.insync.replicas 2.
#      Then `sync -f` of the work folder, so that the fill's writeback does
#      not land in what follows;
#   2. without a move: one producer (bench/broker/load.c, mode latency)
#      sends BENCH_MOVE_PRODUCER_SIZE-byte records to "latency" at
#      BENCH_MOVE_PRODUCER_RATE records/s, acks=all, linger.ms 0, open loop,
#      for BENCH_MOVE_BASELINE_SECONDS after a warm-up: ack p50/p99/p99.9
#      from each record's due time (and end-to-end, by a consumer in the same
#      process);
#   3. the move: the same producer again, and once its warm-up is over,
#      `kipper reassign --execute` of {"partitions":[{"topic":"move",
#      "partition":0,"replicas":[1,2,4]}]} (broker 1 stays the leader; broker
#      4 catches up from it; broker 3's replica goes at the end), then
#      `kipper reassign --verify` every BENCH_MOVE_POLL_MS until it says done
#      (at most BENCH_MOVE_WAIT seconds). The producer stops at that moment,
#      so its figures cover the move. Move time = from --execute to the
#      --verify that said done; MB/s = the partition's bytes (the leader's
#      segment files) / the move time; throttled: the ratio of that rate to
#      the configured one. Broker 4's segment files are sampled at each
#      poll: when they began and stopped growing (the copy), and the rate in
#      each whole second of the copy;
#   4. afterwards: broker 4's segment files compared byte for byte with
#      broker 1's, the partition's replicas and ISR, and whether broker 3
#      deleted its copy (within 30 s).
# Targets from the issue are printed beside the figures, never asserted: the
# exit status is 0 whenever the benchmark ran. Every process started here is
# stopped on exit, Ctrl-C included. The tables go to stdout, progress and the
# raw per-run lines to stderr.
#
# Settings (environment):
#   BENCH_MOVE_RUNS="unthrottled throttled"   the runs, in this order
#   BENCH_MOVE_GIB=1              GiB of record values in the moved partition
#   BENCH_MOVE_FILL_SIZE=16384    bytes per record when filling it (acks=1, linger.ms 5, 1 MiB batches)
#   BENCH_MOVE_RATE_MB=30         the throttled run's leader.replication.throttled.rate and
#                                 follower.replication.throttled.rate, in MB/s (10^6 bytes); well
#                                 below what the unthrottled move reaches here (60-95 MB/s on a
#                                 busy 2-core VM), so that the throttle, not the machine, sets the pace
#   BENCH_MOVE_PRODUCER_RATE=20000  the producer's records/s (0: no producer, no latency figures)
#   BENCH_MOVE_PRODUCER_SIZE=100  its record size, bytes
#   BENCH_MOVE_BASELINE_SECONDS=10  measured seconds of the producer without a move
#   BENCH_LATENCY_WARMUP=2        the producer's warm-up, seconds, not counted (each run)
#   BENCH_MOVE_WAIT=300           longest wait for a move, seconds
#   BENCH_MOVE_POLL_MS=50         pause between two --verify calls
#   BENCH_DISK_MIB=1024           MiB written for the disk limit
#   BENCH_TCP_SECONDS=2           seconds per loopback TCP test
#   BENCH_KEEPERS=3               keeper members: 3 (an ensemble) or 1
#   BENCH_TICK_MS=2000 / BENCH_SESSION_MS=18000   the keepers' tickTime, the brokers'
#                                 zookeeper.session.timeout.ms (as run.sh)
#   BENCH_BROKER_PROPS=           extra server.properties lines of every broker, space-separated
#                                 key=value (e.g. "replica.fetch.max.bytes=4194304")
#   BENCH_LOAD_ARGS=              extra arguments for the producer (e.g.
#                                 "-X producer.max.in.flight.requests.per.connection=5")
#   BENCH_TIMELINE=0              1: the producer's per-second timeline (records, worst latency,
#                                 records over 3 ms) into each run's load.log (implies BENCH_KEEP=1)
#   BENCH_DIR=                    work folder (default: a new mktemp -d under $TMPDIR or /tmp);
#                                 the log dirs live there (BENCH_MOVE_GIB x 4 at most at a time)
#   BENCH_KEEP=0                  1: keep the work folder (configs, logs, data, raw results);
#                                 after a failure or an interruption it is kept anyway, without
#                                 the partitions' data
#   BENCH_LOAD=                   a prebuilt load generator (make passes build/bench-broker-load)
#   KIPPER_BIN=bin/kipper         the kipper binary (built with `make` if missing)
#   BENCH_SERVER_CPUS=            optional taskset CPU list for the servers
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

for arg in "$@"; do
    case $arg in
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'bench/broker/move: unknown argument %s (try --help)\n' "$arg" >&2; exit 2 ;;
    esac
done

RUNS=${BENCH_MOVE_RUNS:-unthrottled throttled}
GIB=${BENCH_MOVE_GIB:-1}
FILL_SIZE=${BENCH_MOVE_FILL_SIZE:-16384}
RATE_MB=${BENCH_MOVE_RATE_MB:-30}
PROD_RATE=${BENCH_MOVE_PRODUCER_RATE:-20000}
PROD_SIZE=${BENCH_MOVE_PRODUCER_SIZE:-100}
BASE_SECONDS=${BENCH_MOVE_BASELINE_SECONDS:-10}
LAT_WARMUP=${BENCH_LATENCY_WARMUP:-2}
MOVE_WAIT=${BENCH_MOVE_WAIT:-300}
POLL_MS=${BENCH_MOVE_POLL_MS:-50}
DISK_MIB=${BENCH_DISK_MIB:-1024}
TCP_SECONDS=${BENCH_TCP_SECONDS:-2}
KEEP=${BENCH_KEEP:-0}
TIMELINE=()
if [ "${BENCH_TIMELINE:-0}" = 1 ]; then TIMELINE=(-T); KEEP=1; fi
KIPPER=${KIPPER_BIN:-$ROOT/bin/kipper}
# shellcheck disable=SC2206
EXTRA=(${BENCH_LOAD_ARGS:-})

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/broker/move: $*"; exit 2; }

for r in $RUNS; do
    case $r in unthrottled | throttled) ;; *) die "BENCH_MOVE_RUNS: $r is neither unthrottled nor throttled" ;; esac
done
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0 and float(sys.argv[2]) > 0 else 1)" "$GIB" "$RATE_MB" 2>/dev/null ||
    die "BENCH_MOVE_GIB and BENCH_MOVE_RATE_MB must be numbers above 0"

# ---- prerequisites --------------------------------------------------------
command -v python3 >/dev/null || die "needs python3 (free ports, the move's poller, the tables)"
if [ -z "${BENCH_LOAD:-}" ]; then
    pkg-config --exists rdkafka 2>/dev/null ||
        die "needs librdkafka's headers: apt-get install librdkafka-dev pkg-config (or: ./scripts/ensure-deps.sh bench)"
fi
if [ ! -x "$KIPPER" ]; then
    say "bench/broker/move: $KIPPER missing, running make"
    make -C "$ROOT" bin/kipper >&2
fi
case $KIPPER in /*) ;; *) KIPPER=$PWD/$KIPPER ;; esac

if [ -n "${BENCH_DIR:-}" ]; then
    TOP=$BENCH_DIR
    mkdir -p "$TOP"
else
    TOP=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench-move.XXXXXX")
fi
WORK=$TOP   # cluster.sh works in $WORK; each run gets its own below

CL_KEEPERS=3 CL_TICK=2000 CL_SESSION=18000
# shellcheck source=bench/broker/cluster.sh disable=SC1091
. "$HERE/cluster.sh"

# ---- clean-up: every process started here is stopped here ------------------
LOADPID=     # a running load generator
MOVERPID=    # the running move poller
OK=0
cleanup() {
    if [ -n "$MOVERPID" ]; then kill "$MOVERPID" 2>/dev/null || true; wait "$MOVERPID" 2>/dev/null || true; fi
    if [ -n "$LOADPID" ]; then kill "$LOADPID" 2>/dev/null || true; wait "$LOADPID" 2>/dev/null || true; fi
    cl_stop_all
    rm -f "$TOP"/kipper-bench-disk.*
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$TOP"
    elif [ "${BENCH_KEEP:-0}" != 1 ]; then
        # kept for its logs and results, without the gigabytes of records
        rm -rf "$TOP"/run-*/broker*/logs "$TOP"/run-*/keeper*/data
        say "bench/broker/move: work folder kept (the partitions' and the keepers' data removed; BENCH_KEEP=1 keeps them): $TOP"
    else
        say "bench/broker/move: work folder kept: $TOP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
T_START=$(date +%s)

# ---- the load generator -----------------------------------------------------
if [ -n "${BENCH_LOAD:-}" ]; then
    LOAD=$BENCH_LOAD
    case $LOAD in /*) ;; *) LOAD=$PWD/$LOAD ;; esac
else
    LOAD=$TOP/load
    # shellcheck disable=SC2046
    ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -o "$LOAD" "$HERE/load.c" $(pkg-config --cflags --libs rdkafka) -lpthread ||
        die "building load.c failed"
fi
CLIENT_VERSION=$("$LOAD" version)
RESULTS=$TOP/results.txt
: >"$RESULTS"

# ---- helpers ----------------------------------------------------------------------
# run the load generator in the background of this shell (not in a $(...)
# subshell: so that a signal reaches the trap at once, and the clean-up
# knows the pid) and wait; LAST = its key=value line, or one saying it failed
LAST=
run_load() {   # out-file log-file mode args...
    local out=$1 log=$2 rc=0
    shift 2
    "$LOAD" "$@" >"$out" 2>>"$log" &
    LOADPID=$!
    wait "$LOADPID" || rc=$?
    LOADPID=
    LAST=$(head -n 1 "$out")
    [ -n "$LAST" ] || LAST="mode=$1 valid=0 errors=1 err_LOADEXIT=$rc"
}
log_bytes() {   # broker topic -> bytes in partition 0's segment files on that broker
    local sum=0 f sz
    for f in "$WORK/broker$1/logs/$2-0"/*.log; do
        [ -e "$f" ] || continue
        sz=$(stat -c %s "$f")
        sum=$((sum + sz))
    done
    echo "$sum"
}
describe_p0() {   # topic -> "replicas=... isr=... leader=..." of partition 0
    cl_topics --describe --topic "$1" 2>/dev/null | python3 -c '
import sys
for line in sys.stdin:
    toks = line.split()
    kv = {toks[i][:-1]: toks[i + 1] for i in range(len(toks) - 1) if toks[i].endswith(":")}
    if kv.get("Partition") == "0":
        print("replicas=%s isr=%s leader=%s" % (kv.get("Replicas", "-"), kv.get("Isr", "-"), kv.get("Leader", "-")))
        break'
}
# the partition's segment files on brokers a and b, byte for byte: "same",
# or what differs
compare_logs() {   # topic a b
    local t=$1 a=$2 b=$3 fa fb name out=same
    for fa in "$WORK/broker$a/logs/$t-0"/*.log; do
        [ -e "$fa" ] || { echo "none-on-$a"; return; }
        name=${fa##*/}
        fb=$WORK/broker$b/logs/$t-0/$name
        if [ ! -e "$fb" ]; then out="$name-missing-on-$b"; break; fi
        if ! cmp -s "$fa" "$fb"; then out="$name-differs"; break; fi
    done
    if [ "$out" = same ]; then
        for fb in "$WORK/broker$b/logs/$t-0"/*.log; do
            [ -e "$fb" ] || break
            [ -e "$WORK/broker$a/logs/$t-0/${fb##*/}" ] || { out="${fb##*/}-only-on-$b"; break; }
        done
    fi
    echo "$out"
}

# The move: --execute, then --verify every POLL_MS until done (at most
# MOVE_WAIT s), sampling broker 4's segment files at each poll; SIGUSR1 to
# the producer (pid, if not 0) once done, or given up. One key=value line.
# A file of its own, so that it runs as a child of this shell, with its own
# pid for the clean-up (a shell function put in the background would be a
# subshell, and killing that would leave python running).
# args: kipper zookeeper.connect plan producer-pid dir-of-the-new-replica limit-s poll-ms log
MOVER=$TOP/mover.py
cat >"$MOVER" <<'PYEOF'
import glob, os, signal, subprocess, sys, time
# SIGTERM (the script's clean-up), SIGINT: leave through SystemExit, which makes
# subprocess.run() kill a running kipper reassign first
signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
signal.signal(signal.SIGINT, lambda *a: sys.exit(130))
kipper, zc, plan, pid, newdir, limit, poll_ms, logf = sys.argv[1:9]
pid, limit, poll = int(pid), float(limit), float(poll_ms) / 1000
log = open(logf, "a")
def reassign(what):
    t = time.time()
    rc = subprocess.run([kipper, "reassign", "--zookeeper", zc, what, "--reassignment-json-file", plan],
                        stdout=log, stderr=log).returncode
    return rc, time.time() - t
def size():
    n = 0
    for f in glob.glob(newdir + "/*.log"):
        try:
            n += os.path.getsize(f)
        except OSError:
            pass
    return n
out = {}
t0 = time.time()
rc, dt = reassign("--execute")
out["execute_rc"] = rc
out["execute_s"] = "%.3f" % dt
samples = [(t0, 0)]
done = None
verifies = 0
vmax = 0.0
if rc == 0:
    while True:
        samples.append((time.time(), size()))
        rc, dt = reassign("--verify")
        verifies += 1
        vmax = max(vmax, dt)
        if rc == 0:
            done = time.time()
            break
        if time.time() - t0 > limit:
            break
        time.sleep(poll)
if pid:
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        pass
end = done or time.time()
samples.append((end, size()))
out["done"] = 1 if done else 0
out["end_unix"] = "%.3f" % end
out["move_s"] = "%.3f" % (end - t0)
out["verifies"] = verifies
out["verify_max_s"] = "%.3f" % vmax
final = samples[-1][1]
out["new_replica_bytes"] = final
first = next((t for t, n in samples if n > 0), None)
full = next((t for t, n in samples if n >= final and n > 0), None)
if first is not None and full is not None:
    # the sample before the first with bytes: the copy began in between
    before = max(t for t, n in samples if t < first)
    out["copy_first_s"] = "%.3f" % (first - t0)
    out["copy_begin_s"] = "%.3f" % (before - t0)
    out["copy_full_s"] = "%.3f" % (full - t0)
    # bytes per whole second of the copy, from the first sample with bytes
    # (linear between samples)
    def at(t):
        for (ta, na), (tb, nb) in zip(samples, samples[1:]):
            if ta <= t <= tb:
                return na + (nb - na) * ((t - ta) / (tb - ta) if tb > ta else 1)
        return samples[-1][1]
    secs = []
    t = first
    while t + 1 <= full:
        secs.append(at(t + 1) - at(t))
        t += 1
    if secs:
        out["copy_secs"] = len(secs)
        out["copy_sec_min_mb"] = "%.1f" % (min(secs) / 1e6)
        out["copy_sec_max_mb"] = "%.1f" % (max(secs) / 1e6)
        out["copy_sec_each_mb"] = ",".join("%.0f" % (s / 1e6) for s in secs)
out["samples"] = len(samples)
print(" ".join("%s=%s" % kv for kv in out.items()))
PYEOF

B=()   # the producer's broker arguments, per run
producer() {   # out log seconds -> LAST
    run_load "$1" "$2" latency "${B[@]}" -t latency -s "$PROD_SIZE" -a all -r "$PROD_RATE" -d "$3" \
        -W "$LAT_WARMUP" "${TIMELINE[@]}" "${EXTRA[@]}"
}
prefix() {   # prefix -> each key of the line on stdin prefixed
    sed -e "s/\([^ =]*\)=/$1\1=/g"
}

# ---- the machine's limits -------------------------------------------------------
say "bench/broker/move: loopback TCP (${TCP_SECONDS}s write, ${TCP_SECONDS}s sendfile), disk (${DISK_MIB} MiB)"
run_load "$TOP/tcp.out" "$TOP/load.log" tcp -d "$TCP_SECONDS" -D "$TOP"
echo "tag=tcp $LAST" >>"$RESULTS"
run_load "$TOP/disk.out" "$TOP/load.log" disk -D "$TOP" -S "$DISK_MIB"
echo "tag=disk $LAST" >>"$RESULTS"
tail -n 2 "$RESULTS" | sed 's/^/  /' >&2

# ---- one run ----------------------------------------------------------------------
FILL_N=$(python3 -c "import math, sys; print(math.ceil(float(sys.argv[1]) * 2**30 / int(sys.argv[2])))" "$GIB" "$FILL_SIZE")
RATE_B=$(python3 -c "import sys; print(int(float(sys.argv[1]) * 1e6))" "$RATE_MB")

run_one() {   # unthrottled | throttled
    local kind=$1 run line fill isr bytes cmpres after deleted i t0 base mv prod extra_props=
    run=$TOP/run-$kind
    mkdir -p "$run"
    [ "$kind" = throttled ] &&
        extra_props="leader.replication.throttled.rate=$RATE_B follower.replication.throttled.rate=$RATE_B"
    # shellcheck disable=SC2034  # cluster.sh's
    WORK=$run BSTARTS=() CL_BROKER_PROPS=$extra_props
    say "bench/broker/move: $kind: starting a cluster in $run${extra_props:+ ($extra_props)}"
    cl_start_keepers
    cl_start_brokers 4
    B=(-b "$BROKERS" -P "$(cl_broker_pids)")
    cl_create_topic move 1:2:3
    cl_wait_topic_ready move 1 60 || say "  topic move: not led by broker 1 with 1,2,3 in its ISR after 60 s"
    cl_create_topic latency 1:2:3 --config min.insync.replicas=2
    cl_wait_topic_ready latency 1 60 || say "  topic latency: not led by broker 1 with 1,2,3 in its ISR after 60 s"

    say "  filling partition move-0: $FILL_N records of $FILL_SIZE bytes, acks=1"
    run_load "$run/fill.out" "$run/load.log" produce -b "$BROKERS" -t move -s "$FILL_SIZE" -a 1 -n "$FILL_N"
    fill=$LAST
    bytes=$(log_bytes 1 move)
    t0=$(date +%s.%N)
    for ((i = 0; i < 600; i++)); do   # the followers hold all of it (at most 60 s)
        [ "$(log_bytes 2 move)" = "$bytes" ] && [ "$(log_bytes 3 move)" = "$bytes" ] && break
        sleep 0.1
    done
    isr=$(describe_p0 move)
    local caught sync_s
    caught=$(python3 -c "import sys, time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$t0")
    t0=$(date +%s.%N)
    sync -f "$run/broker1/logs"
    sync_s=$(python3 -c "import sys, time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$t0")
    line="tag=$kind kind=$kind rate_b=$([ "$kind" = throttled ] && echo "$RATE_B" || echo 0) bytes=$bytes"
    line+=" followers_bytes=$(log_bytes 2 move)/$(log_bytes 3 move) followers_caught_up_s=$caught sync_s=$sync_s"
    line+=" before_$(printf '%s' "$isr" | sed 's/ / before_/g')"
    line+=" $(printf '%s\n' "$fill" | prefix fill_)"
    say "  $line"

    base=
    if [ "$PROD_RATE" != 0 ]; then
        say "  producer without a move: ${PROD_RATE}/s of ${PROD_SIZE} bytes, acks=all, ${BASE_SECONDS}s after ${LAT_WARMUP}s"
        echo "== $kind: without a move" >>"$run/load.log"
        producer "$run/base.out" "$run/load.log" "$BASE_SECONDS"
        base=$(printf '%s\n' "$LAST" | prefix base_)
        say "  $base"
    fi

    # the move, with the producer running through it
    printf '{"version":1,"partitions":[{"topic":"move","partition":0,"replicas":[1,2,4]}]}\n' >"$run/plan.json"
    local ppid=0
    if [ "$PROD_RATE" != 0 ]; then
        "$LOAD" latency "${B[@]}" -t latency -s "$PROD_SIZE" -a all -r "$PROD_RATE" \
            -d $((MOVE_WAIT + 60)) -W "$LAT_WARMUP" "${TIMELINE[@]}" "${EXTRA[@]}" \
            >"$run/during.out" 2>"$run/during.log" &
        LOADPID=$!
        ppid=$LOADPID
        # its warm-up over (at most 60 s)
        for ((i = 0; i < 1200; i++)); do
            grep -q 'load: latency: measuring' "$run/during.log" 2>/dev/null && break
            [ "$(cl_proc_state "$LOADPID")" = running ] || break
            sleep 0.05
        done
    fi
    say "  moving move-0 from [1,2,3] to [1,2,4]${extra_props:+ (throttled to $RATE_MB MB/s)}"
    python3 "$MOVER" "$KIPPER" "$ZCONNECT" "$run/plan.json" "$ppid" "$run/broker4/logs/move-0" "$MOVE_WAIT" \
        "$POLL_MS" "$run/reassign.log" >"$run/move.out" &
    MOVERPID=$!
    wait "$MOVERPID" || true
    MOVERPID=
    mv=$(head -n 1 "$run/move.out")
    [ -n "$mv" ] || mv="done=0 mover_failed=1"
    prod=
    if [ "$ppid" != 0 ]; then
        local rc=0
        kill -USR1 "$LOADPID" 2>/dev/null || true   # the mover did; unless it failed
        wait "$LOADPID" || rc=$?
        LOADPID=
        prod=$(head -n 1 "$run/during.out")
        [ -n "$prod" ] || prod="mode=latency valid=0 errors=1 err_LOADEXIT=$rc"
        prod=$(printf '%s\n' "$prod" | prefix during_)
    fi
    say "  $mv"
    [ -n "$prod" ] && say "  $prod"

    # afterwards: the partition's state, broker 3's copy (seconds after the
    # move's end), the new replica's bytes
    after=$(describe_p0 move)
    deleted=-1
    t0=$(printf '%s\n' "$mv" | tr ' ' '\n' | sed -n 's/^end_unix=//p')
    [ -n "$t0" ] || t0=$(date +%s.%N)
    for ((i = 0; i < 300; i++)); do   # broker 3 deletes its copy (at most 30 s)
        if [ ! -e "$run/broker3/logs/move-0" ]; then
            deleted=$(python3 -c "import sys, time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$t0")
            break
        fi
        sleep 0.1
    done
    for ((i = 0; i < 100; i++)); do   # the new replica's files as the leader's (at most 10 s)
        [ "$(log_bytes 4 move)" = "$(log_bytes 1 move)" ] && break
        sleep 0.1
    done
    cmpres=$(compare_logs move 1 4)
    # the ISRs the leader wrote for the partition once the move was made
    # (none expected: the move's own write makes it 1,2,4)
    local isr_writes
    isr_writes=$(sed -n '/move-0 moved to its new replicas/,$p' "$run"/broker1/broker.1.log |
        sed -n 's/.*ISR of move-0 is now \[\([0-9,]*\)\].*/\1/p' | paste -sd/ -)
    local b_err b_warn alive=yes id
    for id in 1 2 3 4; do [ "$(cl_proc_state "${BPID[$id]}")" = running ] || alive="no:$id"; done
    b_err=$(cat "$run"/broker*/broker.*.log | grep -c ' E \[' || true)
    b_warn=$(cat "$run"/broker*/broker.*.log | grep -c ' W \[' || true)
    line+=" $mv after_$(printf '%s' "$after" | sed 's/ / after_/g') new_replica_final_bytes=$(log_bytes 4 move)"
    line+=" isr_writes_after_move=${isr_writes:--} compare_1_4=$cmpres broker3_deleted_s=$deleted brokers_alive=$alive broker_errors=$b_err broker_warnings=$b_warn"
    line+=" ${base} ${prod}"
    echo "$line" >>"$RESULTS"
    say "  after: $after isr_writes_after_move=${isr_writes:--} compare_1_4=$cmpres broker3_deleted_s=$deleted brokers_alive=$alive errors=$b_err warnings=$b_warn"
    cl_stop_all
    # shellcheck disable=SC2034  # cluster.sh's
    BPORT=() BPID=() KPID=() KPORT=()
    # bounded disk use: this run's partitions go now (its logs stay until the
    # end), unless BENCH_KEEP=1 asks for them
    if [ "${BENCH_KEEP:-0}" != 1 ]; then rm -rf "$run"/broker*/logs "$run"/keeper*/data; fi
}

for r in $RUNS; do run_one "$r"; done
# shellcheck disable=SC2034  # cluster.sh's
WORK=$TOP

# ---- the tables ---------------------------------------------------------------------
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(($(date +%s) - T_START))
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
src_commit=$(git -C "$ROOT" log -1 --format=%h -- src 2>/dev/null || echo '?')
commit="$commit, src/ as of $src_commit"
git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || commit="$commit + uncommitted changes in src/"
[ "$KIPPER" -ef "$ROOT/bin/kipper" ] || commit="not this tree's bin/kipper; this tree: $commit"
fs=$(df -PT "$TOP" | awk 'NR==2 {print $2}')
if grep -q 'valid=0\|done=0\|brokers_alive=no\|isr_writes_after_move=[0-9]' "$RESULTS" ||
    grep -q 'compare_1_4=[^s]' "$RESULTS" ||
    ! grep -q 'broker_errors=0' "$RESULTS"; then
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

def table(hdr, rows):
    widths = [max(len(r[i]) for r in [hdr] + rows) for i in range(len(hdr))]
    for i, r in enumerate([hdr] + rows):
        print(" | ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            print("-+-".join("-" * widths[j] for j in range(len(hdr))))

def invalid(kv, p):
    if kv.get(p + "valid") == "1":
        return ""
    errs = " ".join("%s=%s" % (a[len(p) + 4:], b) for a, b in kv.items() if a.startswith(p + "err_"))
    return "producer %s: INVALID (errors=%s %s)" % (p.rstrip("_"), kv.get(p + "errors", "?"), errs)

tcp, disk = runs.get("tcp", {}), runs.get("disk", {})
keepers = "a ${CL_KEEPERS}-member ensemble" if ${CL_KEEPERS} > 1 else "one member"
print()
print("kipper broker, moving a partition -- ${CLIENT_VERSION}; per run a fresh cluster: 4 brokers (keeper: %s," % keepers)
print("  tickTime ${CL_TICK}, session timeout ${CL_SESSION} ms), loopback; partition move-0 on brokers 1,2,3 (broker 1 leads),")
print("  ${GIB} GiB of record values (${FILL_SIZE}-byte records), moved to 1,2,4: broker 4 copies it from broker 1, broker 3 drops it;")
print("  throttled: leader.replication.throttled.rate = follower.replication.throttled.rate = ${RATE_MB} MB/s on every broker")
print("machine limits measured in this run (MB = 10^6 bytes):")
print("  loopback TCP, 1 connection, ${TCP_SECONDS}s each: write() %s MB/s, sendfile() from a page-cached file %s MB/s"
      % (f(num(tcp, "write_mb_per_s"), "%.0f"), f(num(tcp, "sendfile_mb_per_s"), "%.0f")))
print("  disk: ${DISK_MIB} MiB sequential write() + fdatasync %s MB/s (%.2fs + %.2fs); the writes alone (page cache) %s MB/s"
      % (f(num(disk, "durable_mb_per_s"), "%.0f"), num(disk, "write_s") or 0, num(disk, "fdatasync_s") or 0,
         f(num(disk, "pagecache_mb_per_s"), "%.0f")))
print()
print("move: from --execute to the --verify that said done (polled every ${POLL_MS} ms); MB = the partition's bytes (its segment")
print("  files on the leader) / 10^6; MB/s = MB / move s; copy = while broker 4's segment files grew (sampled at each poll),")
print("  1-s MB/s = the rate in each whole second of the copy (min/max)")
rows = []
order = [r for r in "${RUNS}".split() if r in runs]
for r in order:
    kv = runs[r]
    rate = num(kv, "rate_b")
    mb = (num(kv, "bytes") or 0) / 1e6
    secs = num(kv, "move_s")
    done = kv.get("done") == "1"
    mbs = mb / secs if done and secs else None
    ratio = "-"
    if rate and mbs:
        ratio = "%.2f %s" % (mbs * 1e6 / rate, "ok" if abs(mbs * 1e6 / rate - 1) <= 0.2 else "off by more than 20 %")
    c0, c1 = num(kv, "copy_begin_s"), num(kv, "copy_full_s")
    copy_s = c1 - c0 if c0 is not None and c1 is not None else None
    copy_mbs = mb / copy_s if copy_s else None
    notes = []
    if not done:
        notes.append("NOT DONE after %s s (execute exit %s)" % (kv.get("move_s", "?"), kv.get("execute_rc", "?")))
    if kv.get("compare_1_4") != "same":
        notes.append("broker 4's segment files vs broker 1's: %s" % kv.get("compare_1_4"))
    if kv.get("after_replicas") != "1,2,4" or sorted((kv.get("after_isr") or "").split(",")) != ["1", "2", "4"]:
        notes.append("after: replicas %s ISR %s" % (kv.get("after_replicas"), kv.get("after_isr")))
    iw = kv.get("isr_writes_after_move", "-")
    if iw != "-":
        notes.append("the leader wrote the ISR again after the move: [%s]" % "] then [".join(iw.split("/")))
    if kv.get("broker3_deleted_s") == "-1":
        notes.append("broker 3 kept its copy (30 s)")
    if kv.get("brokers_alive") != "yes":
        notes.append("broker exited: %s" % kv.get("brokers_alive"))
    if kv.get("broker_errors", "0") != "0":
        notes.append("%s error lines in the brokers' logs" % kv["broker_errors"])
    rows.append((r, f(rate / 1e6, "%.0f") if rate else "-", "%.0f" % mb, f(secs, "%.2f") if done else "-",
                 f(mbs, "%.1f"), ratio, f(c0, "%.2f"), f(copy_s, "%.2f"), f(copy_mbs, "%.1f"),
                 "%s/%s" % (kv.get("copy_sec_min_mb", "-"), kv.get("copy_sec_max_mb", "-")),
                 kv.get("broker3_deleted_s", "-") if kv.get("broker3_deleted_s") != "-1" else "no",
                 "; ".join(notes)))
table(("run", "throttle MB/s", "MB", "move s", "MB/s", "achieved / throttle", "copy began s", "copy s",
       "copy MB/s", "1-s MB/s min/max", "broker 3's copy gone s after", "note"), rows)

if ${PROD_RATE} > 0:
    print()
    print("producer: ${PROD_SIZE}-byte records to topic latency (brokers 1,2,3, broker 1 leads, min.insync.replicas 2) at ${PROD_RATE}/s,")
    print("  acks=all, linger.ms 0, open loop, from each record's due time, after ${LAT_WARMUP}s of warm-up; without: ${BASE_SECONDS}s on the")
    print("  same cluster just before the move; during: from the end of the warm-up (then --execute) to the move's end;")
    print("  e2e = received by a consumer in the same process; broker cores = the 4 brokers' CPU, summed")
    rows = []
    for r in order:
        kv = runs[r]
        for p, label in (("base_", "without a move"), ("during_", "during the move")):
            if p + "mode" not in kv:
                continue
            def pct(what):
                return "/".join(f(num(kv, "%s%s_%s_ms" % (p, what, q)), "%.2f") for q in ("p50", "p99", "p999"))
            note = invalid(kv, p)
            rows.append((r, label, f(num(kv, p + "duration_s"), "%.1f"), f(num(kv, p + "ack_n"), "%.0f"), pct("ack"),
                         f(num(kv, p + "ack_max_ms"), "%.1f"), pct("e2e"), f(num(kv, p + "behind_max_ms"), "%.1f"),
                         f(num(kv, p + "server_cores"), "%.2f"), f(num(kv, p + "client_cores"), "%.2f"), note))
    table(("run", "", "s", "records", "ack p50/p99/p99.9 ms", "ack max ms", "e2e p50/p99/p99.9 ms",
           "sender late max ms", "broker cores", "client cores", "note"), rows)

print()
print("summary: MB/s beside the machine's limit for the same bytes: they are written once (broker 4, which fsyncs")
print("  every log.flush.interval.ms) after crossing loopback TCP, so the limit is the smaller of the disk's write +")
print("  fdatasync rate and sendfile() over TCP; producer p99 = ack p99 (acks=all)")
lim = [x for x in (num(disk, "durable_mb_per_s"), num(tcp, "sendfile_mb_per_s")) if x]
lim = min(lim) if lim else None
rows = []
for r in order:
    kv = runs[r]
    rate = num(kv, "rate_b")
    mb = (num(kv, "bytes") or 0) / 1e6
    secs = num(kv, "move_s") if kv.get("done") == "1" else None
    mbs = mb / secs if secs else None
    b99, d99 = num(kv, "base_ack_p99_ms"), num(kv, "during_ack_p99_ms")
    rows.append((r, f(secs, "%.2f"), f(mbs, "%.1f"), "%.2fx" % (mbs / lim) if mbs and lim else "-",
                 "%.2f" % (mbs * 1e6 / rate) if rate and mbs else "-",
                 f(b99, "%.2f"), f(d99, "%.2f"), "%.2fx" % (d99 / b99) if b99 and d99 is not None else "-"))
table(("move", "time s", "MB/s", "MB/s / limit %s" % f(lim, "%.0f"), "achieved / throttle (target 0.8-1.2)",
       "producer p99 without ms", "p99 during ms", "p99 during / without"), rows)
print()
tgt = []
th = runs.get("throttled")
if th and th.get("done") == "1" and num(th, "move_s"):
    q = (num(th, "bytes") or 0) / num(th, "move_s") / num(th, "rate_b")
    tgt.append("the throttle holds catch-up traffic to its rate, within 20 %% (over the move): %.2f of %s MB/s %s"
               % (q, "${RATE_MB}", "ok" if abs(q - 1) <= 0.2 else "off"))
elif th:
    tgt.append("the throttle holds catch-up traffic to its rate: the throttled move did not complete")
un = runs.get("unthrottled")
if th and un and un.get("done") == "1" and num(un, "move_s") and num(th, "rate_b"):
    u = (num(un, "bytes") or 0) / num(un, "move_s")
    if u < 1.5 * num(th, "rate_b"):
        tgt.append("note: the unthrottled move ran at %.1f MB/s, less than 1.5x the throttle: the machine may have set"
                   " the throttled move's pace as much as the throttle did" % (u / 1e6))
if tgt:
    print("targets (reported, not asserted): " + ";\n  ".join(tgt))
print("kipper: ${KIPPER} (commit ${commit}); machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), "
      "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), log dirs on ${fs}")
print("load average (1/5/15 min) at start: ${LOADAVG_START}; at end: ${LOADAVG_END}; ${ELAPSED} s in all"
      " -- brokers, client and any other work share the machine's CPUs and disk")
print("raw results (key=value, one line per run): ${RESULTS}" + (" (kept)" if "${KEEP}" == "1" else " (deleted; BENCH_KEEP=1 keeps it)"))
PYEOF
OK=1
