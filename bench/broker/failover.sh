#!/usr/bin/env bash
# bench/broker/failover.sh -- kipper's broker: failover time. How long after
# the leader of N partitions is killed (SIGTERM: controlled shutdown;
# SIGKILL: its coordinator session has to expire) does every partition take
# acks=all writes again? On loopback, in one command.
#
#   bench/broker/failover.sh        (or: make bench-broker-failover; about 2 minutes)
#
# For each partition count N of BENCH_FAILOVER_PARTITIONS and each signal of
# BENCH_FAILOVER_SIGNALS, on a fresh cluster (a keeper ensemble and 3
# brokers, started for that run alone):
#   1. a topic of N partitions, 3 replicas each, all led by broker 1
#      (--replica-assignment 1:2:3,1:2:3,...), min.insync.replicas=2;
#   2. once every partition is led by broker 1 with all 3 replicas in its ISR
#      (checked again after leader.election.wait.ms, when a new leader settles
#      its ISR), one librdkafka producer (bench/broker/load.c, mode failover)
#      sends 100-byte records, acks=all, linger.ms 0, round-robin over the N
#      partitions at BENCH_FAILOVER_RATE records/s in total;
#   3. once every partition has had a record acknowledged by broker 1, the
#      producer sends the signal to broker 1 itself and notes the time; from
#      then on, for each partition, the time until a record of it is
#      acknowledged (acks=all) by another broker (the delivery report names
#      the broker). It stops when every partition has, or after
#      BENCH_FAILOVER_WAIT seconds;
#   4. from the brokers' logs, in the same clock: when the survivors saw
#      broker 1's registration go (SIGKILL: its session expired) and when they
#      had elected the new leaders (first and last partition);
#   5. broker 1 is started again and the time until it is back in every ISR
#      is measured (at most BENCH_FAILOVER_REJOIN seconds); then the cluster is
#      stopped and removed.
# Targets from the issue are printed beside the figures, never asserted: the
# exit status is 0 whenever the benchmark ran. Every process started here is
# stopped on exit, Ctrl-C included. The table goes to stdout, progress and
# the raw per-run lines to stderr.
#
# Settings (environment):
#   BENCH_FAILOVER_PARTITIONS="1 100 1000"   partition counts
#   BENCH_FAILOVER_SIGNALS="TERM KILL"       signals (TERM, KILL)
#   BENCH_FAILOVER_RATE=20000     records/s in total, round-robin over the partitions
#   BENCH_FAILOVER_WARMUP=2       seconds of produce before the kill (at least; until every
#                                 partition has been acknowledged by broker 1)
#   BENCH_FAILOVER_WAIT=30        longest wait for the partitions after the kill, seconds
#   BENCH_FAILOVER_REJOIN=30      longest wait for the restarted broker 1 to be back in every ISR
#   BENCH_MIN_INSYNC=2            the topic's min.insync.replicas
#   BENCH_KEEPERS=3               keeper members: 3 (an ensemble) or 1
#   BENCH_TICK_MS=500             the keepers' tickTime (sessions may last 2 to 20 ticks)
#   BENCH_SESSION_MS=6000         the brokers' zookeeper.session.timeout.ms
#   BENCH_BROKER_PROPS=           extra server.properties lines, space-separated key=value
#                                 (e.g. "leader.election.wait.ms=1000 replica.fetch.backoff.ms=100")
#   BENCH_LOAD_ARGS=              extra arguments for the producer (e.g.
#                                 "-X topic.metadata.refresh.fast.interval.ms=50", or "-I")
#   BENCH_DIR=                    work folder (default: a new mktemp -d under $TMPDIR or /tmp)
#   BENCH_KEEP=0                  1: keep the work folder (configs, logs, raw results)
#   BENCH_LOAD=                   a prebuilt load generator (make passes build/bench-broker-load)
#   KIPPER_BIN=bin/kipper         the kipper binary (built with `make` if missing)
#   BENCH_SERVER_CPUS=            optional taskset CPU list for the servers
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

for arg in "$@"; do
    case $arg in
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'bench/broker/failover: unknown argument %s (try --help)\n' "$arg" >&2; exit 2 ;;
    esac
done

PARTS=${BENCH_FAILOVER_PARTITIONS:-1 100 1000}
SIGNALS=${BENCH_FAILOVER_SIGNALS:-TERM KILL}
RATE=${BENCH_FAILOVER_RATE:-20000}
WARMUP=${BENCH_FAILOVER_WARMUP:-2}
WAIT=${BENCH_FAILOVER_WAIT:-30}
REJOIN=${BENCH_FAILOVER_REJOIN:-30}
MIN_INSYNC=${BENCH_MIN_INSYNC:-2}
KEEP=${BENCH_KEEP:-0}
KIPPER=${KIPPER_BIN:-$ROOT/bin/kipper}
# shellcheck disable=SC2206
EXTRA=(${BENCH_LOAD_ARGS:-})
for s in $SIGNALS; do case $s in TERM | KILL) ;; *) echo "bench/broker/failover: signal $s: TERM or KILL" >&2; exit 2 ;; esac; done

say() { printf '%s\n' "$*" >&2; }
die() { say "bench/broker/failover: $*"; exit 2; }

command -v python3 >/dev/null || die "needs python3"
if [ -z "${BENCH_LOAD:-}" ]; then
    pkg-config --exists rdkafka 2>/dev/null ||
        die "needs librdkafka's headers: apt-get install librdkafka-dev pkg-config (or: ./scripts/ensure-deps.sh bench)"
fi
if [ ! -x "$KIPPER" ]; then
    say "bench/broker/failover: $KIPPER missing, running make"
    make -C "$ROOT" bin/kipper >&2
fi
case $KIPPER in /*) ;; *) KIPPER=$PWD/$KIPPER ;; esac

if [ -n "${BENCH_DIR:-}" ]; then
    TOP=$BENCH_DIR
    mkdir -p "$TOP"
else
    TOP=$(mktemp -d "${TMPDIR:-/tmp}/kipper-bench-failover.XXXXXX")
fi
WORK=$TOP   # cluster.sh works in $WORK; each run gets its own below

CL_KEEPERS=3 CL_TICK=500 CL_SESSION=6000
# shellcheck source=bench/broker/cluster.sh disable=SC1091
. "$HERE/cluster.sh"
ELECTION_WAIT=3000   # leader.election.wait.ms, the broker's default unless BENCH_BROKER_PROPS sets it
for kv in ${BENCH_BROKER_PROPS:-}; do
    case $kv in leader.election.wait.ms=*) ELECTION_WAIT=${kv#*=} ;; esac
done

LOADPID=
OK=0
cleanup() {
    if [ -n "$LOADPID" ]; then kill "$LOADPID" 2>/dev/null || true; wait "$LOADPID" 2>/dev/null || true; fi
    cl_stop_all
    if [ "$OK" = 1 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$TOP"
    elif [ "${BENCH_KEEP:-0}" != 1 ]; then
        # kept for its logs and results, without the records
        rm -rf "$TOP"/run-*/broker*/logs "$TOP"/run-*/keeper*/data
        say "bench/broker/failover: work folder kept (the partitions' and the keepers' data removed; BENCH_KEEP=1 keeps them): $TOP"
    else
        say "bench/broker/failover: work folder kept: $TOP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
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

# partitions whose ISR lacks one of its replicas, or not led by broker 1
count_not_full() {   # topic -> count
    cl_topics --describe --topic "$1" 2>/dev/null | python3 -c '
import sys
bad = parts = 0
for line in sys.stdin:
    toks = line.split()
    kv = {toks[i][:-1]: toks[i + 1] for i in range(len(toks) - 1) if toks[i].endswith(":")}
    if "Partition" not in kv:
        continue
    parts += 1
    if kv.get("Leader") != "1" or sorted(kv.get("Isr", "").split(",")) != sorted(kv.get("Replicas", "-").split(",")):
        bad += 1
print(bad if parts else -1)'
}

# from the survivors' logs, in ms after the kill: when they saw broker 1's
# registration go, and when the first and the last partition of the topic
# had a new leader ("elected leader of T-p"); key=value
log_times() {   # run-dir topic kill_unix_ms
    python3 - "$@" <<'PYEOF'
import datetime, glob, re, sys
run, topic, kill_ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
def ms(line):
    try:
        t = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f")
    except ValueError:
        return None
    return t.timestamp() * 1000 - kill_ms
gone, elected = [], {}
for f in sorted(glob.glob(run + "/broker[23]/broker.1.log")):
    for line in open(f, errors="replace"):
        m = ms(line)
        if m is None or m < -50:
            continue
        if "broker 1 is gone" in line or "broker 1's registration changed" in line:
            gone.append(m)
        r = re.search(r"elected leader of (\S+)-(\d+) at epoch", line)
        if r and r.group(1) == topic:
            p = int(r.group(2))
            elected[p] = min(elected.get(p, m), m)
out = []
if gone:
    out.append("gone_seen_ms=%.0f" % min(gone))
if elected:
    v = sorted(elected.values())
    out.append("elected_n=%d elected_first_ms=%.0f elected_last_ms=%.0f" % (len(v), v[0], v[-1]))
print(" ".join(out))
PYEOF
}

run_one() {   # partitions signal
    local n=$1 sig=$2 run topic assign rc=0 line notfull notfull2 granted t0 t1 rejoin lt
    run=$TOP/run-$n-$sig
    topic=failover-$n
    mkdir -p "$run"
    # shellcheck disable=SC2034  # cluster.sh's
    WORK=$run BSTARTS=()
    say "bench/broker/failover: $n partition(s), SIG$sig: starting a cluster in $run"
    cl_start_keepers
    cl_start_brokers 3
    granted=$(cl_session_granted)
    assign=$(python3 -c "import sys; print(','.join(['1:2:3'] * int(sys.argv[1])))" "$n")
    t0=$(date +%s.%N)
    cl_create_topic "$topic" "$assign" --config "min.insync.replicas=$MIN_INSYNC"
    cl_wait_topic_ready "$topic" 1 120 || say "  not every partition led by broker 1 with a full ISR after 120 s"
    t1=$(date +%s.%N)
    # a new leader settles its ISR leader.election.wait.ms after taking over:
    # look again once that has passed
    sleep "$(python3 -c "print(max(0.0, ($ELECTION_WAIT + 1000) / 1000 - ($t1 - $t0)))")"
    notfull=$(count_not_full "$topic")
    say "  topic ready in $(python3 -c "print('%.1f' % ($t1 - $t0))") s; partitions not led by 1 with a full ISR: $notfull"
    "$LOAD" failover -b "$BROKERS" -t "$topic" -p "$n" -s 100 -r "$RATE" -W "$WARMUP" -d "$WAIT" \
        -V "${BPID[1]}" -E 1 -k "$sig" -P "${BPID[2]},${BPID[3]}" "${EXTRA[@]}" >"$run/load.out" 2>>"$run/load.log" &
    LOADPID=$!
    wait "$LOADPID" || rc=$?
    LOADPID=
    # broker 1: killed by the load generator (unless it never got that far)
    if [ "$(cl_proc_state "${BPID[1]}")" = running ] && ! grep -q 'kill_unix_ms=[1-9]' "$run/load.out"; then
        say "  the producer did not kill broker 1 (see $run/load.log); stopping it"
        kill -KILL "${BPID[1]}" 2>/dev/null || true
    fi
    cl_stop_pid "${BPID[1]}" 30 2>/dev/null
    BPID[1]=0
    line=$(head -n 1 "$run/load.out")
    [ -n "$line" ] || line="mode=failover partitions=$n signal=$sig valid=0 errors=1 err_LOADEXIT=$rc"
    lt=
    kill_ms=$(printf '%s\n' "$line" | tr ' ' '\n' | sed -n 's/^kill_unix_ms=//p')
    if [ -n "$kill_ms" ] && [ "${kill_ms%%.*}" != 0 ]; then lt=$(log_times "$run" "$topic" "$kill_ms"); fi
    # broker 1 again: how long until it is back in every ISR
    rejoin=-1
    cl_start_broker 1
    t0=$(date +%s.%N)
    while :; do
        if [ -z "$(cl_topics --describe --topic "$topic" --under-replicated-partitions 2>/dev/null)" ]; then
            rejoin=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")
            break
        fi
        if python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) > $REJOIN else 1)" "$t0" "$(date +%s.%N)"; then
            break
        fi
        sleep 0.2
    done
    notfull2=$(cl_topics --describe --topic "$topic" --under-replicated-partitions 2>/dev/null | grep -c Partition || true)
    line="tag=$n-$sig $line not_full_before=$notfull session_granted_ms=${granted:-?} $lt rejoin_s=$rejoin under_replicated_after_rejoin=$notfull2"
    echo "$line" >>"$RESULTS"
    say "  $line"
    b_err=$(cat "$run"/broker*/broker.*.log | grep -c ' E \[' || true)
    b_warn=$(cat "$run"/broker*/broker.*.log | grep -c ' W \[' || true)
    sed -i '$ s/$/ broker_errors='"$b_err"' broker_warnings='"$b_warn"'/' "$RESULTS"
    cl_stop_all
    # shellcheck disable=SC2034  # cluster.sh's
    BPORT=() BPID=() KPID=() KPORT=()
}

for n in $PARTS; do
    for sig in $SIGNALS; do run_one "$n" "$sig"; done
done
# shellcheck disable=SC2034  # cluster.sh's
WORK=$TOP

LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
src_commit=$(git -C "$ROOT" log -1 --format=%h -- src 2>/dev/null || echo '?')
commit="$commit, src/ as of $src_commit"
git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || commit="$commit + uncommitted changes in src/"
[ "$KIPPER" -ef "$ROOT/bin/kipper" ] || commit="not this tree's bin/kipper; this tree: $commit"
grep -q 'valid=0' "$RESULTS" && KEEP=1

python3 - "$RESULTS" <<PYEOF
import sys
runs = []
for line in open(sys.argv[1]):
    runs.append(dict(f.split("=", 1) for f in line.split() if "=" in f))

def num(kv, k):
    try:
        v = float(kv[k])
    except (KeyError, ValueError, TypeError):
        return None
    return v

def f(v, fmt):
    return fmt % v if v is not None else "-"

def table(hdr, rows):
    widths = [max(len(r[i]) for r in [hdr] + rows) for i in range(len(hdr))]
    for i, r in enumerate([hdr] + rows):
        print(" | ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            print("-+-".join("-" * widths[j] for j in range(len(hdr))))

session = int("${CL_SESSION}")
granted = sorted({r.get("session_granted_ms", "?") for r in runs})
print()
print("kipper broker failover -- ${CLIENT_VERSION}; per run a fresh cluster: ${CL_KEEPERS} keeper member(s) (tickTime ${CL_TICK} ms),")
print("  3 brokers; one topic of N partitions x 3 replicas, all led by broker 1, min.insync.replicas ${MIN_INSYNC};")
print("  one producer, acks=all, linger.ms 0, 100-byte records round-robin over the partitions at ${RATE}/s in total;")
print("  broker 1 killed once every partition has been acked by it; times in ms from the kill")
print("coordinator session timeout: zookeeper.session.timeout.ms ${CL_SESSION}, granted by the keeper %s ms; leader.election.wait.ms ${ELECTION_WAIT}"
      % "/".join(granted))
r0 = runs[0] if runs else {}
print("client (librdkafka defaults unless BENCH_LOAD_ARGS): topic.metadata.refresh.fast.interval.ms %s, retry.backoff.ms %s, reconnect.backoff.ms %s"
      % (r0.get("client_topic.metadata.refresh.fast.interval.ms", "?"), r0.get("client_retry.backoff.ms", "?"),
         r0.get("client_reconnect.backoff.ms", "?")))
print()
print("ack by new leader: per partition, the first record acknowledged (acks=all) by a broker other than broker 1 after the kill;")
print("  first / p50 / all = the first partition, the median one, the last one. Leaders elected: from the survivors' logs.")
rows = []
for r in runs:
    n, sig = r.get("partitions", "?"), r.get("signal", "?")
    allms = num(r, "all_ms")
    rec = "%s/%s" % (r.get("recovered", "0"), n)
    if sig == "KILL":
        tgt_ms = (num(r, "session_granted_ms") or session) + 1000
        tgt = "<= %.0f (session + 1 s)" % tgt_ms
    else:
        tgt_ms = 1000
        tgt = "< 1000" + (" (target at 1000 partitions)" if n != "1000" else "")
    notes = []
    if allms is not None and allms >= 0:
        verdict = "ok" if (allms <= tgt_ms if sig == "KILL" else allms < tgt_ms) else "above"
    elif "err_NOT_WARM" in r:
        verdict = "NOT MEASURED"
        rec = "-"
        notes.append("no kill: only %s of %s partitions were acked by broker 1 in the %.0f s before it"
                     % (r.get("warm", "?"), n, ${WARMUP} + 30))
    else:
        verdict = "NOT RECOVERED"
    nf = r.get("not_full_before")
    if nf not in (None, "0"):
        notes.append("%s partition(s) without a full ISR before the kill" % nf)
    if r.get("valid") != "1":
        errs = " ".join("%s=%s" % (a[4:], b) for a, b in r.items() if a.startswith("err_"))
        notes.append("errors: " + errs)
    if num(r, "victim_acks_after_kill"):
        notes.append("%s acks by broker 1 after the signal" % r["victim_acks_after_kill"])
    if r.get("broker_errors", "0") != "0":
        notes.append("%s error lines in the brokers' logs" % r["broker_errors"])
    elected = "-"
    if "elected_first_ms" in r:
        elected = "%s/%s (%s)" % (r["elected_first_ms"], r["elected_last_ms"], r.get("elected_n"))
    rejoin = num(r, "rejoin_s")
    rows.append((n, "SIG" + sig, rec, f(num(r, "first_ms"), "%.0f"), f(num(r, "p50_ms"), "%.0f"),
                 f(allms if allms is not None and allms >= 0 else None, "%.0f"), tgt + " " + verdict,
                 r.get("gone_seen_ms", "-"), elected, f(num(r, "victim_exit_ms"), "%.0f"),
                 f(rejoin, "%.1f") if rejoin is not None and rejoin >= 0 else "not in %s s (%s under-replicated)" % ("${REJOIN}", r.get("under_replicated_after_rejoin", "?")),
                 "; ".join(notes)))
table(("partitions", "signal", "recovered", "first ms", "p50 ms", "all ms", "target (all)", "broker 1 gone seen ms",
       "leaders elected first/last ms (n)", "broker 1 exited ms", "restarted broker 1 in every ISR s", "note"), rows)
print()
print("targets (reported, not asserted): SIGTERM, 1000 partitions: every partition acked again within 1 s;"
      " SIGKILL: within the session timeout + 1 s")
print("kipper: ${KIPPER} (commit ${commit}); machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), "
      "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)")
print("load average (1/5/15 min) at start: ${LOADAVG_START}; at end: ${LOADAVG_END} -- other work on the machine shows in these times")
print("raw results (key=value, one line per run): ${RESULTS}" + (" (kept)" if "${KEEP}" == "1" else " (deleted; BENCH_KEEP=1 keeps it)"))
PYEOF
OK=1
