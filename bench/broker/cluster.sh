# shellcheck shell=bash
# bench/broker/cluster.sh -- sourced by bench/broker/run.sh, failover.sh and
# move.sh: a kipper keeper (one member or a 3-member ensemble) and kipper
# brokers 1..n on 127.0.0.1 (run.sh and failover.sh: 3; move.sh: 4), in the
# caller's work folder, and their clean-up.
#
# The caller sets, before sourcing: WORK (work folder), KIPPER (binary), and
# defines say() and die(). Settings (environment), with the caller's defaults:
#   BENCH_KEEPERS      1 or 3 keeper members            (CL_KEEPERS, default 3)
#   BENCH_TICK_MS      the keepers' tickTime            (CL_TICK, default 500)
#   BENCH_SESSION_MS   zookeeper.session.timeout.ms     (CL_SESSION, default 6000)
#   BENCH_BROKER_PROPS extra server.properties lines, space-separated key=value
#   BENCH_SERVER_CPUS  taskset CPU list for the servers
# CL_BROKER_PROPS (the caller's, not the user's): more key=value lines for
# the brokers written from then on, before BENCH_BROKER_PROPS (which wins
# where both set a key: the broker reads the last line of a key).
#
# What it sets: ZCONNECT (zookeeper.connect), BPORT[id], BPID[id] (0 when
# stopped), KPID[id], BROKERS ("127.0.0.1:p1,...").

CL_KEEPERS=${BENCH_KEEPERS:-${CL_KEEPERS:-3}}
CL_TICK=${BENCH_TICK_MS:-${CL_TICK:-500}}
CL_SESSION=${BENCH_SESSION_MS:-${CL_SESSION:-6000}}
case $CL_KEEPERS in 1 | 3) ;; *) die "BENCH_KEEPERS must be 1 or 3" ;; esac

declare -a BPORT=() BPID=() KPID=() KPORT=() BSTARTS=()
ZCONNECT=
BROKERS=

cl_taskset() { if [ -n "${BENCH_SERVER_CPUS:-}" ]; then echo taskset -c "$BENCH_SERVER_CPUS"; fi; }

# n free loopback ports, all bound at once so that none is handed out twice
cl_free_ports() {
    python3 -c '
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# SIGTERM, wait up to $2 s (default 30: a broker's controlled shutdown may
# take controlled.shutdown.timeout.ms, 15 s), then SIGKILL; always reaped.
cl_stop_pid() {
    local pid=$1 limit=${2:-30} i
    [ -n "$pid" ] && [ "$pid" != 0 ] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < limit * 20; i++)); do
            [ "$(cl_proc_state "$pid")" = gone ] && break
            sleep 0.05
        done
        if [ "$(cl_proc_state "$pid")" != gone ]; then
            say "bench/broker: pid $pid did not stop within ${limit}s of SIGTERM; SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    wait "$pid" 2>/dev/null || true
}

# running | gone (exited: a zombie not yet reaped counts as gone)
cl_proc_state() {
    local s
    s=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null || true)
    case $s in '' | Z | X) echo gone ;; *) echo running ;; esac
}

cl_ruok() {   # port -> 0 when the keeper there answers imok
    # shellcheck disable=SC2016
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf ruok >&3 && cat <&3' _ "$1" 2>/dev/null | grep -q imok
}
cl_4lw() {    # port word -> the answer
    # shellcheck disable=SC2016
    timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "%s" "$2" >&3 && cat <&3' _ "$1" "$2" 2>/dev/null || true
}

cl_start_keepers() {
    local ports i n=$CL_KEEPERS cfg servers="" mode
    # shellcheck disable=SC2207
    ports=($(cl_free_ports $((3 * n))))
    for ((i = 1; i <= n; i++)); do
        KPORT[i]=${ports[$((3 * (i - 1)))]}
        if ((n > 1)); then
            servers+="server.$i=127.0.0.1:${ports[$((3 * (i - 1) + 1))]}:${ports[$((3 * (i - 1) + 2))]}"$'\n'
        fi
    done
    ZCONNECT=
    for ((i = 1; i <= n; i++)); do
        mkdir -p "$WORK/keeper$i/data"
        echo "$i" >"$WORK/keeper$i/data/myid"
        cfg=$WORK/keeper$i/zoo.cfg
        # syncLimit/initLimit count ticks: 10 s / 20 s whatever the tick, so
        # that a short tick (for a short session timeout) does not make a
        # busy machine drop members.
        cat >"$cfg" <<EOF
tickTime=$CL_TICK
initLimit=$(( (20000 + CL_TICK - 1) / CL_TICK ))
syncLimit=$(( (10000 + CL_TICK - 1) / CL_TICK ))
dataDir=$WORK/keeper$i/data
clientPort=${KPORT[$i]}
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
$servers
EOF
        # shellcheck disable=SC2046
        $(cl_taskset) "$KIPPER" keeper "$cfg" >"$WORK/keeper$i/keeper.log" 2>&1 &
        KPID[i]=$!
        ZCONNECT+="${ZCONNECT:+,}127.0.0.1:${KPORT[$i]}"
    done
    # ready: every member answers ruok and (ensemble) one of them leads
    for ((i = 0; i < 600; i++)); do
        local all=1 leaders=0 k
        for ((k = 1; k <= n; k++)); do
            [ "$(cl_proc_state "${KPID[$k]}")" = running ] ||
                die "keeper $k exited during start-up; see $WORK/keeper$k/keeper.log"
            cl_ruok "${KPORT[$k]}" || { all=0; break; }
            if ((n > 1)); then
                mode=$(cl_4lw "${KPORT[$k]}" srvr | sed -n 's/^Mode: //p')
                [ "$mode" = leader ] && leaders=$((leaders + 1))
                [ "$mode" = leader ] || [ "$mode" = follower ] || all=0
            fi
        done
        if ((all)) && { ((n == 1)) || ((leaders == 1)); }; then break; fi
        sleep 0.1
    done
    ((i < 600)) || die "the keeper ensemble is not serving after 60 s; see $WORK/keeper*/keeper.log"
}

cl_write_broker() {   # id
    local id=$1 f=$WORK/broker$1/server.properties kv
    mkdir -p "$WORK/broker$id/logs"
    cat >"$f" <<EOF
broker.id=$id
listeners=PLAINTEXT://127.0.0.1:${BPORT[$id]}
log.dirs=$WORK/broker$id/logs
zookeeper.connect=$ZCONNECT
zookeeper.session.timeout.ms=$CL_SESSION
num.partitions=1
default.replication.factor=1
EOF
    for kv in ${CL_BROKER_PROPS:-} ${BENCH_BROKER_PROPS:-}; do echo "$kv" >>"$f"; done
}

# start broker id (written first by cl_start_brokers); returns when it has
# registered (its own "broker ID is live" line in this start's log)
cl_start_broker() {
    local id=$1 i log
    BSTARTS[id]=$((${BSTARTS[$id]:-0} + 1))
    log=$WORK/broker$id/broker.${BSTARTS[$id]}.log
    # shellcheck disable=SC2046
    $(cl_taskset) "$KIPPER" broker "$WORK/broker$id/server.properties" >"$log" 2>&1 &
    BPID[id]=$!
    for ((i = 0; i < 600; i++)); do
        [ "$(cl_proc_state "${BPID[$id]}")" = running ] || die "broker $id exited during start-up; see $log"
        grep -q "broker $id is live at" "$log" 2>/dev/null && return 0
        sleep 0.05
    done
    die "broker $id did not register within 30 s; see $log"
}

cl_start_brokers() {   # n
    local n=$1 ports id
    # shellcheck disable=SC2207
    ports=($(cl_free_ports "$n"))
    BROKERS=
    for ((id = 1; id <= n; id++)); do
        BPORT[id]=${ports[$((id - 1))]}
        BROKERS+="${BROKERS:+,}127.0.0.1:${BPORT[$id]}"
        cl_write_broker "$id"
    done
    for ((id = 1; id <= n; id++)); do cl_start_broker "$id"; done
}

cl_broker_pids() {   # the running brokers' pids, comma-separated (load -P)
    local id out=
    for id in "${!BPID[@]}"; do
        [ "${BPID[$id]}" != 0 ] && out+="${out:+,}${BPID[$id]}"
    done
    echo "$out"
}

# the session timeout the keeper granted the brokers (cons: to=), e.g. "6000"
# (several values comma-separated if they differ); empty if unknown
cl_session_granted() {
    local k
    for ((k = 1; k <= CL_KEEPERS; k++)); do cl_4lw "${KPORT[$k]}" cons; done |
        sed -n 's/.*[(,]to=\([0-9]*\).*/\1/p' | sort -un | paste -sd, -
}

cl_topics() { "$KIPPER" topics --zookeeper "$ZCONNECT" "$@"; }

# create topic T with replica assignment A (e.g. "1:2:3,1:2:3"), extra args
# (e.g. --config min.insync.replicas=2) after it
cl_create_topic() {
    local t=$1 a=$2
    shift 2
    cl_topics --create --topic "$t" --replica-assignment "$a" "$@" >>"$WORK/topics.log" 2>&1 ||
        die "creating topic $t failed; see $WORK/topics.log"
}

# wait until every partition of topic T is led by broker L and has its whole
# replica list in the ISR (at most $3 s, default 60); 0 when so
cl_wait_topic_ready() {
    local t=$1 want=$2 limit=${3:-60} i out
    for ((i = 0; i < limit * 5; i++)); do
        out=$(cl_topics --describe --topic "$t" 2>/dev/null || true)
        if [ -n "$out" ] && printf '%s\n' "$out" | python3 -c '
import sys
want = sys.argv[1]
parts = 0
for line in sys.stdin:
    kv = {}
    toks = line.split()
    for i, tok in enumerate(toks):
        if tok.endswith(":") and i + 1 < len(toks):
            kv[tok[:-1]] = toks[i + 1]
    if "Partition" not in kv:
        continue
    parts += 1
    if kv.get("Leader") != want or sorted(kv.get("Isr", "").split(",")) != sorted(kv.get("Replicas", "-").split(",")):
        sys.exit(1)
sys.exit(0 if parts else 1)' "$want"; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

# stop every broker (the highest id first, each a controlled shutdown), then
# the keepers
cl_stop_all() {
    local id k
    for ((id = ${#BPORT[@]}; id >= 1; id--)); do
        cl_stop_pid "${BPID[$id]:-0}" 30
        BPID[id]=0
    done
    for ((k = ${#KPORT[@]}; k >= 1; k--)); do
        cl_stop_pid "${KPID[$k]:-0}" 10
        KPID[k]=0
    done
}
