# shellcheck shell=bash
# bench/keeper/ensemble.sh -- the ensemble mode of bench/keeper/run.sh; sourced by
# run.sh (`run.sh --ensemble`), after its settings, clean-up trap and helpers, and
# not meant to be run on its own.
#
# A BENCH_MEMBERS-member (3) kipper ensemble, then a 3-member Apache ZooKeeper
# ensemble, each member with its own dataDir and a zoo.cfg with one
# server.N=127.0.0.1:quorumPort:electionPort line per member (and myid), all on
# loopback. The two ensembles run one after the other, never at the same time:
# the first is stopped completely (members and any forked snapshot writers)
# before the second starts. For each ensemble:
#   1. start the members, wait until one says `Mode: leader` and all the others
#      `Mode: follower` in `srvr` (60 s at most);
#   2. warm it with BENCH_SERVER_WARMUP s of mixed load;
#   3. run every workload, with the load generator's sessions dealt round-robin
#      over the members (load -S: session i talks only to member i mod 3, and every
#      session `sync`s after the nodes are created); the server CPU is the sum over
#      the members (load -P pid,pid,pid), and every run records a per-second
#      timeline (ops, worst latency) for the stall summary;
#   4. sample the members' VmRSS together every 200 ms (peak of the sum kept);
#   5. at the end: each member's mode, zxid, number of leader elections, and the
#      lines of its log that mean trouble, then stop it.
# Same table as the standalone mode, then the per-member figures and ensemble health.

MEMBERS=${BENCH_MEMBERS:-3}
ORDER=${BENCH_ORDER:-kipper zookeeper}
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-120}

RESULTS=$WORK/results.txt
: >"$RESULTS"
LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
MPIDS=()         # the running ensemble's member pids (also in PIDS, for the trap)
MPORTS=()        # their client ports

free_ports() {   # n -> n distinct free loopback ports (held open together)
    python3 - "$1" <<'EOF'
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
EOF
}

srvr_field() {   # port field -> value from `srvr` (empty if not serving)
    four_letter "$1" srvr | sed -n "s/^$2: //p" | head -n 1
}

ens_write_cfgs() {   # name: configs, dataDirs, myid; sets MPORTS
    local name=$1 ports i j mdir
    read -r -a ports <<<"$(free_ports $((3 * MEMBERS)))"
    local servers=()
    for ((j = 1; j <= MEMBERS; j++)); do
        servers+=("server.$j=127.0.0.1:${ports[3 * (j - 1) + 1]}:${ports[3 * (j - 1) + 2]}")
    done
    MPORTS=()
    for ((i = 1; i <= MEMBERS; i++)); do
        mdir=$WORK/$name/m$i
        if [ "$name" = kipper ]; then
            # forceSync left at its default (yes), as in the standalone mode
            write_cfg "$mdir" "${ports[3 * (i - 1)]}" "${servers[@]}"
        else
            write_cfg "$mdir" "${ports[3 * (i - 1)]}" "forceSync=yes" "${servers[@]}"
            zk_prepare "$mdir"
        fi
        echo "$i" >"$mdir/data/myid"
        MPORTS+=("${ports[3 * (i - 1)]}")
    done
}

ens_start() {    # name: launches every member; sets MPIDS
    local name=$1 i mdir
    MPIDS=()
    for ((i = 1; i <= MEMBERS; i++)); do
        mdir=$WORK/$name/m$i
        if [ "$name" = kipper ]; then
            # shellcheck disable=SC2046
            $(server_taskset) "$KIPPER" keeper "$mdir/zoo.cfg" >"$mdir/kipper.log" 2>&1 &
        else
            zk_launch "$mdir"
        fi
        MPIDS+=("$!")
        PIDS+=("$!")
    done
}

member_log() {   # name i -> the member's own log file
    if [ "$1" = kipper ]; then echo "$WORK/$1/m$2/kipper.log"; else echo "$WORK/$1/m$2/zookeeper.log"; fi
}

ens_modes() {    # -> "leader follower follower" (or "-" for a member not serving)
    local i m seen=()
    for ((i = 0; i < MEMBERS; i++)); do
        m=$(srvr_field "${MPORTS[i]}" Mode)
        seen+=("${m:--}")
    done
    echo "${seen[*]}"
}

ens_wait_ready() {   # name: one leader, every other member a follower; sets LEADER (1-based), READY_S
    local name=$1 i t0 modes leaders followers
    t0=$(date +%s.%N)
    for ((t = 0; t < 600; t++)); do
        for ((i = 0; i < MEMBERS; i++)); do
            kill -0 "${MPIDS[i]}" 2>/dev/null || die "$name member $((i + 1)) exited during start-up; see $WORK/$name/m$((i + 1))"
        done
        read -r -a modes <<<"$(ens_modes)"
        leaders=0
        followers=0
        for ((i = 0; i < MEMBERS; i++)); do
            case ${modes[i]} in
                leader) leaders=$((leaders + 1)); LEADER=$((i + 1)) ;;
                follower) followers=$((followers + 1)) ;;
            esac
        done
        if [ "$leaders" = 1 ] && [ "$followers" = $((MEMBERS - 1)) ]; then
            READY_S=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
            return 0
        fi
        sleep 0.1
    done
    die "$name ensemble has no leader with every member serving after 60 s (modes: ${modes[*]}); see $WORK/$name"
}

sample_rss_sum() {   # outfile pid...: "peak of the summed VmRSS, same plus children's private kB, per-member peaks..."
    local out=$1 peak=0 peak_tree=0 sum tree rss k v _ i alive
    shift
    local pids=("$@") peaks=()
    for i in "${!pids[@]}"; do peaks[i]=0; done
    while :; do
        sum=0
        tree=0
        alive=0
        for i in "${!pids[@]}"; do
            rss=0
            if [ -r "/proc/${pids[i]}/status" ]; then
                alive=1
                while read -r k v _; do
                    if [ "$k" = VmRSS: ]; then rss=$v; break; fi
                done 2>/dev/null <"/proc/${pids[i]}/status" || true
            fi
            ((rss > peaks[i])) && peaks[i]=$rss
            sum=$((sum + rss))
            tree=$((tree + rss + $(child_private "${pids[i]}")))
        done
        [ "$alive" = 1 ] || break
        ((sum > peak)) && peak=$sum
        ((tree > peak_tree)) && peak_tree=$tree
        echo "$peak $peak_tree ${peaks[*]}" >"$out"
        sleep 0.2
    done
}

timeline_summary() {   # timeline file -> "tl_seconds=.. tl_median_ops=.. tl_slow_s=.. tl_zero_s=.."
    # seconds of the measured phase (the last, partial, second left out) whose
    # completions fell under a quarter of the run's median second, and with none at all
    local ops med
    ops=$(sed -n 's/^timeline t=[0-9]* ops=\([0-9]*\) .*/\1/p' "$1" | sed '$d')
    if [ -z "$ops" ]; then echo "tl_seconds=0"; return; fi
    med=$(printf '%s\n' "$ops" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    printf '%s\n' "$ops" | awk -v med="$med" '
        {n++; if ($1 < med / 4) slow++; if ($1 == 0) zero++}
        END {printf "tl_seconds=%d tl_median_ops=%d tl_slow_s=%d tl_zero_s=%d", n, med, slow, zero}'
}

ens_run_load() {     # name workload -> one key=value line in $RESULTS
    local name=$1 w=$2 line rc=0 length hosts pids tl started
    case $w in
        create*) length=(-n "$CREATE_OPS" -X "$CREATE_WARMUP_OPS") ;;
        *) length=(-d "$DURATION" -W "$WARMUP") ;;
    esac
    hosts=$(printf '127.0.0.1:%s,' "${MPORTS[@]}")
    pids=$(printf '%s,' "${MPIDS[@]}")
    tl=$WORK/timeline-$name-$w.log
    started=$(date -u +%H:%M:%S)   # to find the run in the members' logs
    # in the background, so that a signal reaches the trap (and the clean-up) at once
    # shellcheck disable=SC2046
    timeout "$RUN_TIMEOUT" $(client_taskset) "$LOAD" -s "${hosts%,}" -S -w "$w" -c "$CONNS" \
        -o "$OUTSTANDING" "${length[@]}" -z "$DATA" -k "$KEYS" -b /kbench -P "${pids%,}" -T "$name" -I \
        >"$WORK/last.out" 2>"$tl" &
    LOADPID=$!
    wait "$LOADPID" || rc=$?
    LOADPID=
    { echo "== $w"; grep -v '^timeline ' "$tl" || true; } >>"$WORK/load-$name.log"
    line=$(head -n 1 "$WORK/last.out")
    if [ -z "$line" ]; then
        line="tag=$name workload=$w valid=0 errors=1 err_LOADEXIT=$rc"
        if [ "$rc" = 124 ]; then line="$line err_TIMEOUT=1"; fi
        say "bench/keeper: load against the $name ensemble ($w) exited $rc; see $WORK/load-$name.log"
    fi
    line="$line started_utc=$started $(timeline_summary "$tl") modes=$(ens_modes | tr ' ' /)"
    echo "$line" >>"$RESULTS"
    say "  $line"
}

ens_stop() {     # every member, and whatever they forked, gone before this returns
    local p kids=() more=()
    for p in "${MPIDS[@]}"; do
        read -r -a more <<<"$(pgrep -P "$p" 2>/dev/null | tr '\n' ' ')"
        kids+=("${more[@]}")
    done
    for p in "${MPIDS[@]}"; do stop_pid "$p"; done
    for p in "${kids[@]}"; do
        if kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
    done
    PIDS=()
    MPIDS=()
}

log_count() {    # file extended-regex -> number of matching lines
    local n
    n=$(grep -Ec "$2" "$1" 2>/dev/null) || true
    echo "${n:-0}"
}

ens_bench() {    # name: the whole run of one ensemble; its summary in $WORK/ensemble-<name>.txt
    local name=$1 i w p info
    info=$WORK/ensemble-$name.txt
    local la0 la1 rss0=0 hwm=0 hwms=() alive=() zx=() elections=() lines
    la0=$(cut -d' ' -f1-3 /proc/loadavg)
    ens_write_cfgs "$name"
    ens_start "$name"
    ens_wait_ready "$name"
    local leader0=$LEADER ready=$READY_S
    say "bench/keeper: $name ensemble ready in ${ready}s: members $(printf '%s ' "${MPIDS[@]}")on ports ${MPORTS[*]}, leader server $leader0"
    if [ "$name" = kipper ]; then
        KIPPER_SRVR_VERSION=$(srvr_field "${MPORTS[0]}" "Zookeeper version")
    else
        ZK_VERSION=$(srvr_field "${MPORTS[0]}" "Zookeeper version" | sed 's/[-,].*//')
    fi
    for p in "${MPIDS[@]}"; do rss0=$((rss0 + $(rss_now "$p"))); done
    echo "0 0" >"$WORK/$name.rss"
    sample_rss_sum "$WORK/$name.rss" "${MPIDS[@]}" &
    SAMPLERS+=("$!")

    if [ "$SERVER_WARMUP" != 0 ]; then
        say "bench/keeper: warming the $name ensemble up (${SERVER_WARMUP}s of mixed load)"
        # shellcheck disable=SC2046
        timeout "$RUN_TIMEOUT" "$LOAD" -s "$(printf '127.0.0.1:%s,' "${MPORTS[@]}" | sed 's/,$//')" -S -w mixed \
            -c "$CONNS" -o "$OUTSTANDING" -d "$SERVER_WARMUP" -z "$DATA" -k "$KEYS" -b /kwarm \
            >"$WORK/warmup-$name.out" 2>>"$WORK/load-$name.log" &
        LOADPID=$!
        wait "$LOADPID" || say "bench/keeper: $name warm-up had errors: $(cat "$WORK/warmup-$name.out")"
        LOADPID=
    fi
    for w in $WORKLOADS; do
        case $w in
            create*) say "bench/keeper: $name ensemble, $w ($CREATE_WARMUP_OPS ops warm-up + $CREATE_OPS ops measured)" ;;
            *) say "bench/keeper: $name ensemble, $w (${WARMUP}s warm-up + ${DURATION}s measured)" ;;
        esac
        ens_run_load "$name" "$w"
    done
    la1=$(cut -d' ' -f1-3 /proc/loadavg)

    # the end state: modes, zxids (given 5 s to converge), memory, logs
    local modes_end
    modes_end=$(ens_modes | tr ' ' /)
    for ((t = 0; t < 50; t++)); do
        zx=()
        for ((i = 0; i < MEMBERS; i++)); do
            v=$(srvr_field "${MPORTS[i]}" Zxid)
            zx+=("${v:--}")
        done
        [ "$(printf '%s\n' "${zx[@]}" | sort -u | wc -l)" = 1 ] && [ "${zx[0]}" != - ] && break
        sleep 0.1
    done
    for ((i = 0; i < MEMBERS; i++)); do
        p=${MPIDS[i]}
        hwms+=("$(vm_field "$p" VmHWM)")
        hwm=$((hwm + hwms[i]))
        if kill -0 "$p" 2>/dev/null; then alive+=(yes); else alive+=(NO); fi
    done
    for p in "${SAMPLERS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    SAMPLERS=()
    local rssline
    rssline=$(cat "$WORK/$name.rss")

    # trouble in the members' logs: leader elections (one each at start-up is normal),
    # a member giving up on its leader or a leader on a follower, warnings and errors
    local looking=0 silent=0 dropping=0 warns=0 errs=0 el
    for ((i = 1; i <= MEMBERS; i++)); do
        lines=$(member_log "$name" "$i")
        if [ "$name" = kipper ]; then
            el=$(log_count "$lines" 'election [0-9]+: new election')
            looking=$((looking + $(log_count "$lines" 'going back to LOOKING')))
            silent=$((silent + $(log_count "$lines" 'silent')))
            dropping=$((dropping + $(log_count "$lines" 'dropping')))
            warns=$((warns + $(log_count "$lines" '^[0-9-]+ [0-9:.]+ W ')))
            errs=$((errs + $(log_count "$lines" '^[0-9-]+ [0-9:.]+ [EF] ')))
        else
            el=$(log_count "$lines" 'New election\. My id')
            looking=$((looking + $(log_count "$lines" 'Peer state changed: looking')))
            silent=$((silent + $(log_count "$lines" 'SocketTimeoutException|Read timed out|timed out')))
            dropping=$((dropping + $(log_count "$lines" 'Exception when following the leader|Shutting down|lost')))
            warns=$((warns + $(log_count "$lines" ' - WARN ')))
            errs=$((errs + $(log_count "$lines" ' - ERROR ')))
        fi
        elections+=("$el")
    done
    local nlogs=0 kb=0
    for ((i = 1; i <= MEMBERS; i++)); do
        nlogs=$((nlogs + $(find "$WORK/$name/m$i/data" -name 'log.*' -type f 2>/dev/null | wc -l)))
        kb=$((kb + $(du -sk "$WORK/$name/m$i/data" 2>/dev/null | cut -f1)))
    done
    {
        echo "ready_s=$ready"
        echo "leader_start=$leader0"
        echo "modes_end=$modes_end"
        echo "zxids_end=$(printf '%s,' "${zx[@]}" | sed 's/,$//')"
        echo "alive=$(printf '%s,' "${alive[@]}" | sed 's/,$//')"
        echo "rss_idle_sum=$rss0"
        echo "rss=$rssline"
        echo "hwm_sum=$hwm"
        echo "hwms=$(printf '%s,' "${hwms[@]}" | sed 's/,$//')"
        echo "elections=$(printf '%s,' "${elections[@]}" | sed 's/,$//')"
        echo "looking=$looking"
        echo "silent=$silent"
        echo "dropping=$dropping"
        echo "warns=$warns"
        echo "errs=$errs"
        echo "txnlogs=$nlogs"
        echo "data_kb=$kb"
        echo "loadavg_start=$la0"
        echo "loadavg_end=$la1"
    } >"$info"
    say "bench/keeper: $name ensemble at the end: modes $modes_end, zxids ${zx[*]}, elections per member ${elections[*]}," \
        "'going back to LOOKING' $looking, 'silent' $silent, 'dropping' $dropping, warnings $warns, errors $errs"
    if [[ " ${alive[*]} " == *" NO "* ]]; then KEEP=1; fi
    ens_stop
    say "bench/keeper: $name ensemble stopped"
}

say "bench/keeper: ensemble mode, $MEMBERS members each, $CONNS sessions dealt round-robin over the members;" \
    "the ensembles run one after the other ($ORDER)"
for name in $ORDER; do
    case $name in kipper | zookeeper) ;; *) die "BENCH_ORDER: unknown server $name" ;; esac
    ens_bench "$name"
done
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg)
if grep -q 'valid=0' "$RESULTS"; then KEEP=1; fi

# ---- the table -------------------------------------------------------------------------
export RESULTS WORK MEMBERS CONNS OUTSTANDING DATA KEYS DURATION WARMUP CREATE_OPS CREATE_WARMUP_OPS ORDER \
    KIPPER LOADAVG_START LOADAVG_END KEEP
export ZK_VERSION=${ZK_VERSION:-3.8} KIPPER_SRVR_VERSION=${KIPPER_SRVR_VERSION:-?}
MACHINE="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), data on $(df -PT "$WORK" | awk 'NR==2 {print $2}')"
export MACHINE
python3 - <<'PYEOF'
import os

E = os.environ
rows, order = {}, []
for line in open(E["RESULTS"]):
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    w = kv.get("workload", "?")
    if w not in rows:
        rows[w] = {}
        order.append(w)
    rows[w][kv.get("tag")] = kv

ens = {}
for name in ("kipper", "zookeeper"):
    d = {}
    try:
        for line in open(os.path.join(E["WORK"], "ensemble-%s.txt" % name)):
            k, _, v = line.rstrip("\n").partition("=")
            d[k] = v
    except OSError:
        pass
    ens[name] = d

def num(kv, k):
    try:
        return float(kv[k])
    except (KeyError, ValueError, TypeError):
        return None

def ratio(a, b):
    return "%.2fx" % (a / b) if a is not None and b else "-"

def lat(kv, a="p50_ms", b="p99_ms", fmt="%.2f/%.2f"):
    x, y = num(kv, a), num(kv, b)
    return fmt % (x, y) if x is not None and y is not None else "-"

def ops(kv):
    v = num(kv, "ops_per_s")
    return "%.0f" % v if v is not None else "-"

def valid(kv):
    return kv.get("valid") == "1"

def table(hdr, body):
    out = [hdr] + body
    widths = [max(len(r[i]) for r in out) for i in range(len(hdr))]
    for i, r in enumerate(out):
        print(" | ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            print("-+-".join("-" * widths[j] for j in range(len(hdr))))

M = int(E["MEMBERS"])
print()
print("kipper keeper vs Apache ZooKeeper %s -- %d-member ensembles on loopback, run one after the other (%s),"
      % (E["ZK_VERSION"], M, E["ORDER"].replace(" ", " first, then ")))
print("  %s sessions dealt round-robin over the members, %s outstanding, %s-byte data, %s nodes,"
      % (E["CONNS"], E["OUTSTANDING"], E["DATA"], E["KEYS"]))
print("  each run %ss after %ss warm-up (create: %s ops after %s), forceSync on everywhere;"
      % (E["DURATION"], E["WARMUP"], E["CREATE_OPS"], E["CREATE_WARMUP_OPS"]))
print("  server CPU and memory are summed over the %d members" % M)
print("targets (reported, not asserted): throughput ratio >= 2x, p99 ratio <= 0.50x, memory ratio <= 0.10x")
print()
hdr = ("workload", "kipper ops/s", "ZK ops/s", "ratio", "kipper p50/p99 ms", "ZK p50/p99 ms", "p99 ratio",
       "server cpu us/op k/ZK", "client cores k/ZK", "note")
body = []
for w in order:
    k = rows[w].get("kipper", {})
    z = rows[w].get("zookeeper", {})
    note = []
    for name, kv in (("kipper", k), ("ZK", z)):
        if not kv:
            note.append("%s not run" % name)
        elif not valid(kv):
            errs = " ".join("%s=%s" % (a[4:], b) for a, b in kv.items() if a.startswith("err_"))
            note.append("%s INVALID (errors=%s %s)" % (name, kv.get("errors", "?"), errs))
    kt, zt = num(k, "ops_per_s"), num(z, "ops_per_s")
    k99, z99 = num(k, "p99_ms"), num(z, "p99_ms")
    tr, pr = ratio(kt, zt), ratio(k99, z99)
    if kt and zt:
        tr += " ok" if kt / zt >= 2 else " <2x"
    if k99 and z99:
        pr += " ok" if k99 / z99 <= 0.5 else " >0.5x"
    kc, zc = num(k, "server_cpu_us_per_op"), num(z, "server_cpu_us_per_op")
    cpu = "%.1f/%.1f" % (kc, zc) if kc is not None and zc is not None else "-"
    def cores(kv):
        c, d = num(kv, "client_cpu_s"), num(kv, "duration_s")
        return "%.2f" % (c / d) if c is not None and d else "-"
    body.append((w, ops(k), ops(z), tr, lat(k), lat(z), pr, cpu, "%s/%s" % (cores(k), cores(z)), "; ".join(note)))
table(hdr, body)

# per member: where the CPU went (L = the leader at start-up), tails, stalls
print()
print("per run: server cpu us/op of each member (L: the leader), p99.9/max ms, seconds under 1/4 of the median rate (of them with no completion at all), members' modes after the run:")
hdr = ("workload", "server", "cpu us/op by member", "p99.9/max ms", "slow s (zero)", "modes after")
body = []
for w in order:
    for name in ("kipper", "zookeeper"):
        kv = rows[w].get(name)
        if not kv:
            continue
        n = num(kv, "ops") or 0
        each = kv.get("server_cpu_s_each", "")
        leader = ens[name].get("leader_start", "")
        parts = []
        for i, c in enumerate(each.split(",") if each else []):
            try:
                parts.append("%s%.1f" % ("L " if str(i + 1) == leader else "", float(c) * 1e6 / n if n else 0))
            except ValueError:
                parts.append("-")
        slow = "%s (%s) of %s" % (kv.get("tl_slow_s", "-"), kv.get("tl_zero_s", "-"), kv.get("tl_seconds", "-"))
        body.append((w, "kipper" if name == "kipper" else "ZK", " / ".join(parts) or "-",
                     lat(kv, "p999_ms", "max_ms", "%.1f/%.1f"), slow, kv.get("modes", "-")))
table(hdr, body)

def ints(s):
    try:
        return [int(x) for x in s.split()]
    except (AttributeError, ValueError):
        return []

print()
k, z = ens["kipper"], ens["zookeeper"]
kr, zr = ints(k.get("rss", "")), ints(z.get("rss", ""))
kp, zp = (kr[0] if kr else 0), (zr[0] if zr else 0)
mr = kp / zp if zp else None
print("memory, summed over the %d members (VmRSS of all sampled together every 200 ms, peak of the sum):" % M)
print("  kipper %.1f MiB | ZK %.1f MiB | ratio %s%s"
      % (kp / 1024, zp / 1024, "%.3fx" % mr if mr is not None else "-",
         (" ok" if mr <= 0.1 else " >0.1x") if mr is not None else ""))
def mib_list(l):
    return "/".join("%.1f" % (x / 1024) for x in l) or "-"
print("  per member peak VmRSS (MiB): kipper %s, ZK %s" % (mib_list(kr[2:]), mib_list(zr[2:])))
print("  sum of the kernel's VmHWM: kipper %.1f MiB, ZK %.1f MiB; summed RSS when idle after start-up: kipper %.1f MiB, ZK %.1f MiB"
      % (int(k.get("hwm_sum", 0) or 0) / 1024, int(z.get("hwm_sum", 0) or 0) / 1024,
         int(k.get("rss_idle_sum", 0) or 0) / 1024, int(z.get("rss_idle_sum", 0) or 0) / 1024))
kt, zt = (kr[1] if len(kr) > 1 else 0), (zr[1] if len(zr) > 1 else 0)
if kt > kp or zt > zp:
    print("  with child processes (forked snapshot writers; their private pages added): peak kipper %.1f MiB,"
          " ZK %.1f MiB, ratio %s" % (kt / 1024, zt / 1024, "%.3fx" % (kt / zt) if zt else "-"))
print()
print("ensembles:")
for name, d in (("kipper", k), ("ZK", z)):
    if not d:
        print("  %s: did not run" % name)
        continue
    modes = d.get("modes_end", "")
    end_leader = [i + 1 for i, m in enumerate(modes.split("/")) if m == "leader"]
    zx = d.get("zxids_end", "").split(",")
    print("  %s: ready (one leader, all serving) %ss after start; leader server %s at start, %s at the end;"
          " modes at the end %s; all alive: %s"
          % (name, d.get("ready_s"), d.get("leader_start"), ",".join(map(str, end_leader)) or "none",
             modes, d.get("alive")))
    print("    zxid at the end: %s; leader elections seen per member: %s (1 each = start-up only)"
          % ((zx[0] + " on every member") if len(set(zx)) == 1 else "DIFFERENT " + " ".join(zx),
             d.get("elections")))
    if name == "kipper":
        print("    log lines: 'going back to LOOKING' %s, 'silent' %s, 'dropping' %s; warnings %s, errors %s"
              % (d.get("looking"), d.get("silent"), d.get("dropping"), d.get("warns"), d.get("errs")))
    else:
        print("    log lines: 'Peer state changed: looking' %s, timeouts %s, follower/leader shut-downs %s;"
              " WARN %s, ERROR %s"
              % (d.get("looking"), d.get("silent"), d.get("dropping"), d.get("warns"), d.get("errs")))
    print("    transaction log files in the dataDirs: %s (%s KiB in the dataDirs); load average during its run: %s -> %s"
          % (d.get("txnlogs"), d.get("data_kb"), d.get("loadavg_start"), d.get("loadavg_end")))
print("kipper: %s (srvr: %s); machine: %s" % (E["KIPPER"], E["KIPPER_SRVR_VERSION"], E["MACHINE"]))
print("load average (1/5/15 min) at start: %s; at end: %s -- other work on the machine shows here and in the tails"
      % (E["LOADAVG_START"], E["LOADAVG_END"]))
print("raw results (key=value, one line per run): %s" % E["RESULTS"]
      + (" (kept)" if E["KEEP"] == "1" else " (deleted; BENCH_KEEP=1 keeps it)"))
PYEOF
