#!/usr/bin/env bash
# bench/broker/run.sh -- kipper's broker: producer and consumer throughput and
# produce / end-to-end latency, with replication factor 1 and 3, printed
# beside the machine's own limits measured in the same run (sequential writes
# to the log dirs' file system, loopback TCP), on loopback, in one command.
#
#   bench/broker/run.sh        (or: make bench-broker; about 3 minutes)
#
# Builds bench/broker/load.c (on librdkafka), starts a 3-member kipper keeper
# ensemble and 3 kipper brokers in a temporary folder (bench/broker/cluster.sh),
# creates one topic per measurement (1 partition; replication factor 1 on
# broker 1, or 3 with --replica-assignment 1:2:3: broker 1 leads, 2 and 3
# follow), and for each record size:
#   1. disk: writes BENCH_DISK_MIB to the log dirs' file system and fdatasyncs
#      (the limit the produce runs are set beside, measured just before them;
#      the file stays until the end, so that memory it would free cannot speed
#      up the brokers' page-cache writes, see bench/README.md);
#   2. produce, one after the other: RF=1 acks=BENCH_ACKS (all), RF=3 acks=1,
#      RF=3 acks=all; one producer each, for BENCH_PRODUCE_SECONDS (capped at
#      BENCH_PRODUCE_MAX_MB of records): records/s, MB/s, ack p50/p99, and the
#      CPU of the 3 brokers per record (summed, and each); then the RF=3
#      replicas' logs are compared with the leader's;
#   3. consume: one consumer reads the RF=1 topic and the RF=3 acks=all topic
#      back from offset 0 and checks each record (offset, size, the sequence
#      number the producer wrote);
#   4. latency: at each rate of BENCH_RATES (RF=1) and BENCH_RF3_RATES (RF=3),
#      produce with acks=all and linger.ms=0 while a consumer in the same
#      process tails the partition: acknowledgement and end-to-end latency
#      percentiles (from each record's due time, open loop). A rate above 80%
#      of the size's measured produce throughput (for that replication factor)
#      is skipped.
# The loopback TCP limit (1 connection, write and sendfile) is measured once
# before the runs. Ratios RF=3 / RF=1 are printed for both acks. Targets from
# the issues are printed beside the figures; they are reported, never
# asserted: the exit status is 0 whenever the benchmark ran, whatever the
# numbers. Everything runs on 127.0.0.1; every process started here is
# stopped on exit, Ctrl-C included. The table goes to stdout, progress and
# the raw per-run lines to stderr.
#
# Settings (environment):
#   BENCH_SIZES="100 1024"        record sizes (bytes of value; no key)
#   BENCH_ACKS=all                acks of the RF=1 produce and latency runs (0, 1, all); the RF=3
#                                 runs are acks=1 and acks=all whatever this says
#   BENCH_RF3=1                   0: replication factor 1 only (the RF=3 runs are left out)
#   BENCH_PRODUCE_SECONDS=5       produce run length (at most)
#   BENCH_PRODUCE_MAX_MB=3000     and at most this many MB of records per size
#   BENCH_RATES="10000 100000 1000000"   latency runs, records/s (RF=1)
#   BENCH_RF3_RATES="100000"      latency runs with RF=3, acks=all, records/s ("" for none)
#   BENCH_RF3_INFLIGHT="default 5"  each RF=3 latency rate is run with librdkafka's default
#                                 max.in.flight.requests.per.connection (1000000) and with these values
#   BENCH_LATENCY_SECONDS=10      measured seconds per latency run
#   BENCH_LATENCY_WARMUP=2        seconds before those, not counted
#   BENCH_LINGER_MS=              linger.ms for the produce runs (load.c's default 5)
#   BENCH_DISK_MIB=2048           MiB written for the disk limit
#   BENCH_TCP_SECONDS=2           seconds per loopback TCP test
#   BENCH_WARMUP_SECONDS=1        produce into a warm-up topic first (0: none)
#   BENCH_BROKER_PROPS=           extra server.properties lines of every broker, space-separated
#                                 key=value (e.g. "log.flush.interval.ms=60000 replica.fetch.max.bytes=4194304")
#   BENCH_KEEPERS=3               keeper members: 3 (an ensemble) or 1
#   BENCH_TICK_MS=2000 / BENCH_SESSION_MS=18000   the keepers' tickTime, the brokers'
#                                 zookeeper.session.timeout.ms (Kafka's default; failover.sh uses 500/6000)
#   BENCH_LOAD_ARGS=              extra arguments for every load run (e.g. "-I" for idempotence,
#                                 "-X producer.batch.num.messages=10000")
#   BENCH_TIMELINE=0              1: per-second timeline of each latency run (records, worst latency,
#                                 records over 3 ms) into the work folder's load.log (implies BENCH_KEEP=1)
#   BENCH_PERF=0                  1: `perf record -g` of the 3 brokers during each run, reports
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
RF3=${BENCH_RF3:-1}
PRODUCE_SECONDS=${BENCH_PRODUCE_SECONDS:-5}
PRODUCE_MAX_MB=${BENCH_PRODUCE_MAX_MB:-3000}
RATES=${BENCH_RATES:-10000 100000 1000000}
RF3_RATES=${BENCH_RF3_RATES-100000}
RF3_INFLIGHT=${BENCH_RF3_INFLIGHT:-default 5}
[ "$RF3" = 1 ] || RF3_RATES=
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
case $KIPPER in /*) ;; *) KIPPER=$PWD/$KIPPER ;; esac

if [ -n "${BENCH_DIR:-}" ]; then
    WORK=$BENCH_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench-broker.XXXXXX")
fi

# the keeper ensemble and the brokers (cluster.sh); Kafka's session timeout
# here (the failover benchmark is where it matters)
CL_KEEPERS=3 CL_TICK=2000 CL_SESSION=18000
# shellcheck source=bench/broker/cluster.sh disable=SC1091
. "$HERE/cluster.sh"
ELECTION_WAIT=3000   # leader.election.wait.ms, the broker's default unless BENCH_BROKER_PROPS sets it
FETCH_BACKOFF=1000   # replica.fetch.backoff.ms, likewise
for kv in ${BENCH_BROKER_PROPS:-}; do
    case $kv in
        leader.election.wait.ms=*) ELECTION_WAIT=${kv#*=} ;;
        replica.fetch.backoff.ms=*) FETCH_BACKOFF=${kv#*=} ;;
    esac
done

# ---- clean-up: every process started here is stopped here ------------------
LOADPID=         # a running load generator
PERFPID=         # a running perf record
OK=0
cleanup() {
    if [ -n "$LOADPID" ]; then kill "$LOADPID" 2>/dev/null || true; wait "$LOADPID" 2>/dev/null || true; fi
    if [ -n "$PERFPID" ]; then kill -INT "$PERFPID" 2>/dev/null || true; wait "$PERFPID" 2>/dev/null || true; fi
    cl_stop_all
    rm -f "$WORK"/kipper-bench-disk.*   # the disk limit's files (BENCH_DISK_MIB each), kept or not
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$WORK"
    elif [ "${BENCH_KEEP:-0}" != 1 ]; then
        # kept for its logs and results, without the gigabytes of records
        rm -rf "$WORK"/broker*/logs "$WORK"/keeper*/data
        say "bench/broker: work folder kept (the partitions' and the keepers' data removed; BENCH_KEEP=1 keeps them): $WORK"
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
client_taskset() { if [ -n "$CLIENT_CPUS" ]; then echo taskset -c "$CLIENT_CPUS"; fi; }

# ---- keepers and brokers ----------------------------------------------------------
cl_start_keepers
cl_start_brokers 3
SERVER_PIDS=$(cl_broker_pids)
say "bench/broker: keepers on $ZCONNECT, brokers (pids $SERVER_PIDS) on $BROKERS, work folder $WORK"

# RF=1 topics on broker 1; RF=3 topics led by broker 1 and followed by 2
# and 3. The RF=3 topics are created one at a time, each once the previous
# one's followers are fetching and their error backoff (replica.fetch.backoff.ms,
# after fetching from a leader that had not taken over yet) is over: see
# bench/README.md ("a follower that stops fetching") for why.
topics_rf1=()
[ "$WARMUP_SECONDS" != 0 ] && topics_rf1+=(warmup)
topics_rf3=()
for s in $SIZES; do
    topics_rf1+=("bench-$s" "latency-$s")
    [ "$RF3" = 1 ] && topics_rf3+=("bench-rf3-acks1-$s" "bench-rf3-$s")
    [ -n "$RF3_RATES" ] && topics_rf3+=("latency-rf3-$s")
done
for t in "${topics_rf1[@]}"; do cl_create_topic "$t" 1; done
for t in "${topics_rf3[@]}"; do
    cl_create_topic "$t" 1:2:3 --config min.insync.replicas=2
    cl_wait_topic_ready "$t" 1 60 || die "topic $t: not led by broker 1 with replicas 1,2,3 in its ISR after 60 s"
    sleep "$(python3 -c "print(($FETCH_BACKOFF + 200) / 1000)")"
done
T_TOPICS=$(date +%s.%N)

# ---- the runs -------------------------------------------------------------------
RESULTS=$WORK/results.txt
: >"$RESULTS"
perf_start() {   # tag (the brokers' runs only)
    [ "$PERF" = 1 ] || return 0
    case $1 in produce-* | consume-* | latency-*) ;; *) return 0 ;; esac
    perf record -F 499 -g -p "$SERVER_PIDS" -o "$WORK/perf-$1.data" >/dev/null 2>>"$WORK/perf.log" &
    PERFPID=$!
}
perf_stop() {    # tag
    [ -n "$PERFPID" ] || return 0
    kill -INT "$PERFPID" 2>/dev/null || true
    wait "$PERFPID" 2>/dev/null || true
    PERFPID=
    perf report -i "$WORK/perf-$1.data" --no-children --sort pid,dso,sym --percent-limit 1 --stdio \
        >"$WORK/perf-$1.txt" 2>/dev/null || true
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
append() {       # key=value... -> appended to the last line of $RESULTS
    local last
    last=$(tail -n 1 "$RESULTS")
    sed -i '$d' "$RESULTS"
    printf '%s %s\n' "$last" "$*" >>"$RESULTS"
}
log_bytes() {    # broker topic -> bytes in the partition's segment files on that broker
    local sum=0 f sz
    for f in "$WORK/broker$1/logs/$2-0"/*.log; do
        [ -e "$f" ] || continue
        sz=$(stat -c %s "$f")
        sum=$((sum + sz))
    done
    echo "$sum"
}
field() {        # key -> its value in $WORK/last.out's line
    tr ' ' '\n' <"$WORK/last.out" | sed -n "s/^$1=//p" | head -n 1
}
isr_of() {       # topic -> its partition 0's ISR, e.g. 1,2,3
    cl_topics --describe --topic "$1" 2>/dev/null | sed -n 's/.*Partition: 0[[:space:]].*Isr: \([0-9,]*\).*/\1/p'
}
# after an RF=3 produce run: the followers' segment bytes equal to the
# leader's (within 10 s), and the ISR
check_replicas() {   # topic
    local t=$1 lb b2 b3 i
    lb=$(log_bytes 1 "$t")
    for ((i = 0; i < 100; i++)); do
        b2=$(log_bytes 2 "$t") b3=$(log_bytes 3 "$t")
        [ "$b2" = "$lb" ] && [ "$b3" = "$lb" ] && break
        sleep 0.1
    done
    append "log_bytes=$lb replica_bytes=$lb/$b2/$b3 isr_after=$(isr_of "$t")"
}

B=(-b "$BROKERS" -P "$SERVER_PIDS" "${EXTRA[@]}")
LINGER_ARGS=()
[ -n "$LINGER" ] && LINGER_ARGS=(-l "$LINGER")

say "bench/broker: loopback TCP (${TCP_SECONDS}s write, ${TCP_SECONDS}s sendfile)"
run_load tcp tcp -d "$TCP_SECONDS" -D "$WORK"
if [ "$WARMUP_SECONDS" != 0 ]; then
    say "bench/broker: warm-up (${WARMUP_SECONDS}s of produce)"
    run_load warmup produce "${B[@]}" -t warmup -s 100 -a "$ACKS" -d "$WARMUP_SECONDS" "${LINGER_ARGS[@]}"
fi
# a new leader settles its ISR leader.election.wait.ms after taking over: the
# RF=3 runs start after that
sleep "$(python3 -c "import time; print(max(0.0, $T_TOPICS + ($ELECTION_WAIT + 500) / 1000 - time.time()))")"
latency_runs() {   # size topic rf rates produce_mb/s [in-flight: default or a number]
    local s=$1 t=$2 rf=$3 rates=$4 mbs=$5 inflight=${6:-default} r tag more=()
    for r in $rates; do
        tag=latency-$s-$r
        if [ "$rf" = 3 ]; then tag=latency-rf3-$s-$r; fi
        if [ "$inflight" != default ]; then
            tag=$tag-inflight$inflight
            more=(-X "producer.max.in.flight.requests.per.connection=$inflight")
        fi
        if [ -n "$mbs" ] &&
            python3 -c "import sys; sys.exit(0 if $r * $s / 1e6 > 0.8 * $mbs else 1)"; then
            say "  $tag: skipped ($r records/s of $s bytes is above 80% of the $mbs MB/s produced)"
            echo "tag=$tag mode=latency size=$s rate=$r rf=$rf skipped=1" >>"$RESULTS"
            continue
        fi
        local acks=$ACKS isr=
        if [ "$rf" = 3 ]; then acks=all; isr=$(isr_of "$t"); fi
        run_load "$tag" latency "${B[@]}" -t "$t" -s "$s" -a "$acks" -r "$r" \
            -d "$LAT_SECONDS" -W "$LAT_WARMUP" "${TIMELINE[@]}" "${more[@]}"
        append "rf=$rf inflight=$inflight"
        if [ "$rf" = 3 ]; then append "isr_before=$isr isr_after=$(isr_of "$t")"; fi
    done
}
for s in $SIZES; do
    say "bench/broker: ${s}-byte records"
    run_load "disk-$s" disk -D "$WORK" -S "$DISK_MIB" -K
    max=$((PRODUCE_MAX_MB * 1000000 / s))
    # RF=1
    run_load "produce-$s" produce "${B[@]}" -t "bench-$s" -s "$s" -a "$ACKS" -d "$PRODUCE_SECONDS" -n "$max" \
        "${LINGER_ARGS[@]}"
    n1=$(field records)
    mbs1=$(field mb_per_s)
    lb=$(log_bytes 1 "bench-$s")
    append "rf=1 log_bytes=$lb"
    # RF=3, acks=1 then acks=all
    n3=
    mbs3=
    if [ "$RF3" = 1 ]; then
        for a in 1 all; do
            t=bench-rf3-$s
            if [ "$a" = 1 ]; then t=bench-rf3-acks1-$s; fi
            isr=$(isr_of "$t")
            run_load "produce-rf3-acks$a-$s" produce "${B[@]}" -t "$t" -s "$s" -a "$a" -d "$PRODUCE_SECONDS" \
                -n "$max" "${LINGER_ARGS[@]}"
            if [ "$a" = all ]; then n3=$(field records); mbs3=$(field mb_per_s); fi
            append "rf=3 isr_before=$isr"
            check_replicas "$t"
        done
    fi
    # read back what was acknowledged
    if [ -n "$n1" ] && [ "$n1" -gt 0 ]; then
        run_load "consume-$s" consume "${B[@]}" -t "bench-$s" -s "$s" -n "$n1"
        append "rf=1 log_bytes=$lb"
    fi
    if [ -n "$n3" ] && [ "$n3" -gt 0 ]; then
        run_load "consume-rf3-$s" consume "${B[@]}" -t "bench-rf3-$s" -s "$s" -n "$n3"
        append "rf=3 log_bytes=$(log_bytes 1 "bench-rf3-$s")"
    fi
    latency_runs "$s" "latency-$s" 1 "$RATES" "$mbs1"
    for inflight in $RF3_INFLIGHT; do
        latency_runs "$s" "latency-rf3-$s" 3 "$RF3_RATES" "$mbs3" "$inflight"
    done
done

# ---- after the runs ------------------------------------------------------------
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)
alive=
hwm=
for id in 1 2 3; do
    a=yes
    [ "$(cl_proc_state "${BPID[$id]}")" = running ] || a="NO (exited during the run)"
    alive+="${alive:+, }$id $a"
    hwm+="${hwm:+/}$(awk '/^VmHWM:/ {printf "%.1f", $2/1024}' "/proc/${BPID[$id]}/status" 2>/dev/null || echo '?')"
done
alive_k=yes
for ((k = 1; k <= CL_KEEPERS; k++)); do
    [ "$(cl_proc_state "${KPID[$k]}")" = running ] || alive_k="NO (member $k exited during the run)"
done
b_warn=$(cat "$WORK"/broker*/broker.*.log | grep -c ' W \[' || true)
b_err=$(cat "$WORK"/broker*/broker.*.log | grep -c ' E \[' || true)
granted=$(cl_session_granted)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
src_commit=$(git -C "$ROOT" log -1 --format=%h -- src 2>/dev/null || echo '?')
commit="$commit, src/ as of $src_commit"
git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || commit="$commit + uncommitted changes in src/"
[ "$KIPPER" -ef "$ROOT/bin/kipper" ] || commit="not this tree's bin/kipper; this tree: $commit"
fs=$(df -PT "$WORK/broker1/logs" | awk 'NR==2 {print $2}')
case $alive in *NO*) KEEP=1 ;; esac
if grep -q 'valid=0' "$RESULTS" || [ "$b_err" != 0 ]; then
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

def isr_notes(kv):
    notes = []
    for k in ("isr_before", "isr_after"):
        v = kv.get(k)
        if v is not None and sorted(v.split(",")) != ["1", "2", "3"]:
            notes.append("ISR %s the run: [%s]" % (k[4:], v))
    rb = kv.get("replica_bytes")
    if rb and len(set(rb.split("/"))) != 1:
        notes.append("replicas' log bytes differ (leader/2/3): %s" % rb)
    return notes

sizes = "${SIZES}".split()
rf3 = "${RF3}" == "1"
tcp = runs.get("tcp", {})
tcp_w, tcp_s = num(tcp, "write_mb_per_s"), num(tcp, "sendfile_mb_per_s")
keepers = "a ${CL_KEEPERS}-member ensemble" if ${CL_KEEPERS} > 1 else "one member"
print()
print("kipper broker -- ${CLIENT_VERSION}; 3 brokers (keeper: %s, tickTime ${CL_TICK}, session timeout ${CL_SESSION} ms),"
      % keepers)
print("  1 partition per topic, compression none, loopback; RF=1: the topic on broker 1; RF=3: replicas 1,2,3, broker 1")
print("  leads, min.insync.replicas 2; produce: one producer for up to ${PRODUCE_SECONDS}s (at most ${PRODUCE_MAX_MB} MB) per run, the runs")
print("  one after the other; consume: one consumer reads a produce run's topic back from offset 0")
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
print("throughput: MB/s counts record values; log MB/s the bytes of one replica's segment files (batches as on the wire);")
print("  written MB/s those of all replicas (all on this machine's disk), which is what the limit beside it is about;")
print("  ratio = written MB/s / limit (consume: log MB/s / limit); broker CPU summed over the 3 brokers, and each's per record")
print("  (broker 1 = the leader); ack p50/p99 = delivery reports under a saturating load (linger.ms %s), mostly client-side queueing"
      % (runs.get("produce-%s" % sizes[0], {}).get("linger_ms", "5") if sizes else "5"))
rows = []
def tput_row(tag, label, what, s):
    kv = runs.get(tag)
    if kv is None:
        return
    rf = int(kv.get("rf", "1"))
    dur, lb = num(kv, "duration_s"), num(kv, "log_bytes")
    lmbs = lb / dur / 1e6 if lb and dur else None
    if what == "produce":
        wmbs = lmbs * rf if lmbs else None
        lim = num(runs.get("disk-%s" % s, {}), "durable_mb_per_s")
        limname = "disk %s" % f(lim, "%.0f")
        ratio = "%.2fx" % (wmbs / lim) if wmbs and lim else "-"
        acks = "%s/%s" % (f(num(kv, "ack_p50_ms"), "%.1f"), f(num(kv, "ack_p99_ms"), "%.1f"))
    else:
        wmbs = None
        lim = tcp_s
        limname = "TCP sendfile %s" % f(lim, "%.0f")
        ratio = "%.2fx" % (lmbs / lim) if lmbs and lim else "-"
        acks = "-"
    note = [invalid(kv)] if invalid(kv) else []
    if what == "consume" and num(kv, "seq_mismatch"):
        note.append("seq_mismatch=%s" % kv["seq_mismatch"])
    note += isr_notes(kv)
    each = kv.get("server_cpu_us_per_record_each", "-")
    rows.append((label, f(num(kv, "records"), "%.0f"), f(num(kv, "records_per_s"), "%.0f"),
                 f(num(kv, "mb_per_s"), "%.1f"), acks, f(lmbs, "%.1f"), f(wmbs, "%.1f"), limname, ratio,
                 f(num(kv, "server_cores"), "%.2f"), f(num(kv, "server_cpu_us_per_record"), "%.3f"),
                 each.replace("/", " / "), f(num(kv, "client_cores"), "%.2f"), "; ".join(note)))
for s in sizes:
    tput_row("produce-%s" % s, "produce %sB RF=1 acks=%s" % (s, "${ACKS}"), "produce", s)
    tput_row("produce-rf3-acks1-%s" % s, "produce %sB RF=3 acks=1" % s, "produce", s)
    tput_row("produce-rf3-acksall-%s" % s, "produce %sB RF=3 acks=all" % s, "produce", s)
    tput_row("consume-%s" % s, "consume %sB RF=1" % s, "consume", s)
    tput_row("consume-rf3-%s" % s, "consume %sB RF=3 acks=all" % s, "consume", s)
table(("run", "records", "records/s", "MB/s", "ack p50/p99 ms", "log MB/s", "written MB/s", "limit MB/s", "ratio",
       "broker cores", "broker us/rec", "us/rec broker 1 / 2 / 3", "client cores", "note"), rows)

if rf3:
    print()
    print("replication factor 3 beside 1 (same run, same size, one after the other): records/s ratio RF=3 / RF=1, and the")
    print("  brokers' CPU per record (summed over the 3)")
    rows = []
    base_acks = "${ACKS}"
    for s in sizes:
        one = runs.get("produce-%s" % s, {})
        for a in ("1", "all"):
            three = runs.get("produce-rf3-acks%s-%s" % (a, s), {})
            r1, r3 = num(one, "records_per_s"), num(three, "records_per_s")
            c1, c3 = num(one, "server_cpu_us_per_record"), num(three, "server_cpu_us_per_record")
            ratio = r3 / r1 if r1 and r3 else None
            tgt = ""
            if s == "100" and a == "all":
                ok1 = r3 is not None and r3 >= 1e6
                ok2 = ratio is not None and ratio >= 0.6
                tgt = ">= 1,000,000/s %s; >= 0.6 of RF=1 %s" % ("ok" if ok1 else "below", "ok" if ok2 else "below")
            rows.append(("%sB" % s, "RF=1 acks=%s vs RF=3 acks=%s" % (base_acks, a), f(r1, "%.0f"), f(r3, "%.0f"),
                         f(ratio, "%.2fx"), f(c1, "%.3f"), f(c3, "%.3f"),
                         f(c3 / c1 if c1 and c3 else None, "%.1fx"), tgt))
    table(("size", "runs", "RF=1 records/s", "RF=3 records/s", "ratio", "RF=1 broker us/rec", "RF=3 broker us/rec",
           "CPU ratio", "target (100 B, acks=all)"), rows)

print()
print("latency: acks=all (RF=1: acks=${ACKS}), linger.ms 0, fixed rate (open loop) for ${LAT_SECONDS}s after ${LAT_WARMUP}s, from each record's due time;")
print("  e2e = received by a consumer in the same process; broker cores summed over the 3 brokers; in flight = the")
print("  producer's max.in.flight.requests.per.connection (librdkafka's default: 1000000)")
rows = []
variants = [("1", "${RATES}", "default")] + [("3", "${RF3_RATES}", i) for i in "${RF3_INFLIGHT}".split()]
for s in sizes:
    for rf, rates, inflight in variants:
        for r in rates.split():
            tag = ("latency-%s-%s" if rf == "1" else "latency-rf3-%s-%s") % (s, r)
            if inflight != "default":
                tag += "-inflight" + inflight
            kv = runs.get(tag)
            if kv is None:
                continue
            infl = "default" if inflight == "default" else inflight
            if kv.get("skipped") == "1":
                rows.append(("%sB" % s, rf, infl, r, "-", "-", "-", "-", "-", "-",
                             "skipped: above 80% of produce throughput"))
                continue
            def pct(p):
                v = [num(kv, "%s_%s_ms" % (p, q)) for q in ("p50", "p99", "p999")]
                return "/".join(f(x, "%.2f") for x in v)
            note = [invalid(kv)] if invalid(kv) else []
            note += isr_notes(kv)
            rows.append(("%sB" % s, rf, infl, r, pct("ack"), pct("e2e"), f(num(kv, "e2e_max_ms"), "%.1f"),
                         f(num(kv, "behind_max_ms"), "%.1f"), f(num(kv, "server_cores"), "%.2f"),
                         f(num(kv, "client_cores"), "%.2f"), "; ".join(note)))
table(("size", "RF", "in flight", "rate/s", "ack p50/p99/p99.9 ms", "e2e p50/p99/p99.9 ms", "e2e max ms",
       "sender late max ms", "broker cores", "client cores", "note"), rows)

print()
tgt = []
p = runs.get("produce-100")
if p:
    rps = num(p, "records_per_s") or 0
    tgt.append("produce 100 B RF=1 acks=${ACKS} >= 1,000,000 records/s: %.2f M %s" % (rps / 1e6, "ok" if rps >= 1e6 else "below"))
p3 = runs.get("produce-rf3-acksall-100")
if p3:
    rps3 = num(p3, "records_per_s") or 0
    ratio = rps3 / num(p, "records_per_s") if p and num(p, "records_per_s") else None
    tgt.append("RF=3 acks=all >= 1,000,000 records/s and >= 0.6 of RF=1: %.2f M %s, %s of RF=1 %s"
               % (rps3 / 1e6, "ok" if rps3 >= 1e6 else "below", f(ratio, "%.3fx"),
                  "ok" if ratio is not None and ratio >= 0.6 else "below"))
lat = [runs[t] for t in runs if t and t.startswith("latency-100-") and runs[t].get("skipped") != "1"]
if lat:
    best = max(lat, key=lambda kv: num(kv, "rate") or 0)
    e99 = num(best, "e2e_p99_ms")
    tgt.append("end-to-end p99 < 3 ms (100 B RF=1 at %s/s): %s ms %s" % (best.get("rate"), f(e99, "%.2f"),
               "ok" if e99 is not None and e99 < 3 else "above"))
for inflight in "${RF3_INFLIGHT}".split():
    tag = "latency-rf3-100-100000" + ("" if inflight == "default" else "-inflight" + inflight)
    l3 = runs.get(tag)
    if l3 and l3.get("skipped") != "1":
        e99 = num(l3, "e2e_p99_ms")
        tgt.append("end-to-end p99 < 3 ms (100 B RF=3 acks=all at 100000/s, in flight %s): %s ms %s"
                   % (inflight, f(e99, "%.2f"), "ok" if e99 is not None and e99 < 3 else "above"))
print("targets (reported, not asserted): " + ";\n  ".join(tgt))
print("brokers alive at the end: ${alive} (keepers: ${alive_k}); log lines: ${b_warn} warnings, ${b_err} errors;"
      " peak RSS (VmHWM) of brokers 1/2/3: ${hwm} MiB; session timeout granted: ${granted:-?} ms")
print("kipper: ${KIPPER} (commit ${commit}); machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), "
      "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), log dirs on ${fs}")
print("load average (1/5/15 min) at start: ${LOADAVG_START}; at end: ${LOADAVG_END}"
      " -- client and brokers share the machine's CPUs, and so does any other work")
print("raw results (key=value, one line per run): ${RESULTS}" + (" (kept)" if "${KEEP}" == "1" else " (deleted; BENCH_KEEP=1 keeps it)"))
PYEOF
OK=1
