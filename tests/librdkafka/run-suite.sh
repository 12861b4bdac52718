#!/usr/bin/env bash
# run-suite.sh -- librdkafka's own test suite (tag v2.0.2, the version of
# Debian's librdkafka) against kipper: one keeper and one broker on free
# loopback ports, the test runner built from librdkafka's tests/ and linked
# against the system library (librdkafka-dev, librdkafka++), one runner
# invocation per test, and a PASS/FAIL/SKIP line per test at the end.
#
# usage: tests/librdkafka/run-suite.sh LIBRDKAFKA_SRC [TESTNUM...]
#
#   LIBRDKAFKA_SRC  an unpacked librdkafka v2.0.2 source tree (it is only
#                   read), e.g.
#                     git clone https://github.com/confluentinc/librdkafka
#                     mkdir -p /work/librdkafka-2.0.2
#                     git -C librdkafka archive v2.0.2 | tar -x -C /work/librdkafka-2.0.2
#   TESTNUM...      test numbers to run (default: DEFAULT_TESTS below, the
#                   plain produce/consume tests)
#
# environment:
#   KIPPER               the binary (default bin/kipper)
#   BUILD_DIR            where the runner is built (default build/librdkafka-tests)
#   TEST_TIMEOUT         seconds per test before it is killed (default 300)
#   TEST_KAFKA_VERSION   the broker version the tests assume (default 3.1.0,
#                        KAFKA_VERSION in librdkafka 2.0.2's tests/Makefile)
#   TEST_LEVEL, TEST_DEBUG  passed on to the runner (verbosity, librdkafka debug)
#   RUNNER_ARGS          extra test-runner options, e.g. -P (idempotent producer)
#   KEEP=1               keep the temporary folder (configs, data and logs of
#                        the keeper and the broker)
#
# Every test's output goes to BUILD_DIR/results/NNNN.log and the broker's log
# to BUILD_DIR/results/broker.log. Exits non-zero if any test failed.
set -u

DEFAULT_TESTS="0001 0002 0003 0004 0005 0006 0007 0008 0011 0012 0013 0014 0015 0016 0017
0021 0022 0029 0031 0034 0035 0036 0041 0042 0048 0067 0070 0073 0085 0086 0110 0114 0125"

if [ $# -lt 1 ] || [ ! -f "$1/tests/test.c" ]; then
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
fi
SRC=$(cd "$1" && pwd)
shift
TESTS_LIST=${*:-$DEFAULT_TESTS}

cd "$(dirname "$0")/../.."
ROOT=$(pwd)
KIPPER=${KIPPER:-$ROOT/bin/kipper}
BUILD=${BUILD_DIR:-$ROOT/build/librdkafka-tests}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
export TEST_KAFKA_VERSION=${TEST_KAFKA_VERSION:-3.1.0}

[ -x "$KIPPER" ] || { echo "run-suite: $KIPPER missing (make bin/kipper)" >&2; exit 2; }
pkg-config --exists rdkafka rdkafka++ || { echo "run-suite: needs librdkafka-dev (pkg-config rdkafka, rdkafka++)" >&2; exit 2; }

# ---- build the runner ----
# test.h includes librdkafka's private headers (../src/rd.h and what it
# pulls in, generated ../config.h); the runner also links a few private
# helpers (tinycthread_extra.c, rdlist.c). Those come from the source tree,
# copied into BUILD/src; the public headers (rdkafka.h, rdkafka_mock.h,
# rdkafkacpp.h) and the library itself come from the system package.
# config.h matches Debian's build: C11 threads from glibc (the library uses
# glibc's thrd_*/mtx_*, so tinycthread.c compiles to nothing), __atomic.
build_runner() {
    local inc
    inc=$(pkg-config --variable=includedir rdkafka)/librdkafka
    [ -f "$inc/rdkafka.h" ] || { echo "run-suite: no $inc/rdkafka.h" >&2; return 1; }
    mkdir -p "$BUILD/src" "$BUILD/tests" "$BUILD/obj"
    local f
    for f in "$SRC"/src/*.h "$SRC"/src/tinycthread.c "$SRC"/src/tinycthread_extra.c "$SRC"/src/rdlist.c; do
        case "${f##*/}" in rdkafka.h | rdkafka_mock.h) continue ;; esac
        cmp -s "$f" "$BUILD/src/${f##*/}" || cp "$f" "$BUILD/src/"
    done
    for f in "$SRC"/tests/*.[ch] "$SRC"/tests/*.cpp "$SRC"/tests/*.h; do
        cmp -s "$f" "$BUILD/tests/${f##*/}" || cp "$f" "$BUILD/tests/"
    done
    cat > "$BUILD/config.h.new" <<'EOF'
/* written by kipper's tests/librdkafka/run-suite.sh (librdkafka's configure is not run) */
#ifndef _CONFIG_H_
#define _CONFIG_H_
#define ARCH "x86_64"
#define WITH_C11THREADS 1
#define HAVE_GETRUSAGE 1
#define HAVE_STRNDUP 1
#define HAVE_STRERROR_R 1
#define HAVE_STRCASESTR 1
#define HAVE_PTHREAD_SETNAME_GNU 1
#define HAVE_ATOMICS_32 1
#define HAVE_ATOMICS_32_ATOMIC 1
#define ATOMIC_OP32(OP1,OP2,PTR,VAL) __atomic_ ## OP1 ## _ ## OP2(PTR, VAL, __ATOMIC_SEQ_CST)
#define HAVE_ATOMICS_64 1
#define HAVE_ATOMICS_64_ATOMIC 1
#define ATOMIC_OP64(OP1,OP2,PTR,VAL) __atomic_ ## OP1 ## _ ## OP2(PTR, VAL, __ATOMIC_SEQ_CST)
#define WITH_SOCKEM 1
EOF
    # The tests' feature switches as the system library was built (its
    # builtin.features), so that e.g. 0017 tests every codec it has.
    cat > "$BUILD/features.c" <<'EOF'
#include <stdio.h>
#include <librdkafka/rdkafka.h>
int main(void) {
    char b[512];
    size_t n = sizeof(b);
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (rd_kafka_conf_get(c, "builtin.features", b, &n) != RD_KAFKA_CONF_OK)
        return 1;
    puts(b);
    return 0;
}
EOF
    ${CC:-cc} -o "$BUILD/features" "$BUILD/features.c" $(pkg-config --cflags --libs rdkafka) || return 1
    local feat feats
    feats=$("$BUILD/features") || return 1
    for feat in $(echo "$feats" | tr ',' ' '); do
        case $feat in
        gzip) echo '#define WITH_ZLIB 1' ;;
        snappy) echo '#define WITH_SNAPPY 1' ;;
        zstd) echo '#define WITH_ZSTD 1' ;;
        lz4) echo '#define WITH_LZ4_EXT 1' ;;
        ssl) echo '#define WITH_SSL 1' ;;
        sasl) echo '#define WITH_SASL 1' ;;
        sasl_gssapi) echo '#define WITH_SASL_CYRUS 1' ;;
        sasl_scram) echo '#define WITH_SASL_SCRAM 1' ;;
        sasl_oauthbearer) echo '#define WITH_SASL_OAUTHBEARER 1' ;;
        oidc) echo '#define WITH_OAUTHBEARER_OIDC 1' ;;
        plugins) echo '#define WITH_PLUGINS 1' ;;
        esac
    done >> "$BUILD/config.h.new"
    # 0110 reads the statistics JSON with RapidJSON (Debian: rapidjson-dev).
    if echo '#include <rapidjson/document.h>' | ${CXX:-c++} -E -x c++ - > /dev/null 2>&1; then
        echo '#define WITH_RAPIDJSON 1' >> "$BUILD/config.h.new"
    else
        echo "run-suite: no RapidJSON headers (apt-get install rapidjson-dev): 0110 will skip" >&2
    fi
    echo '#endif' >> "$BUILD/config.h.new"
    cmp -s "$BUILD/config.h.new" "$BUILD/config.h" && rm "$BUILD/config.h.new" || mv "$BUILD/config.h.new" "$BUILD/config.h"

    # Only the tests to run are compiled; every other entry of test.c's
    # table gets a stub that skips, so the table links.
    local srcs="" n t names defined
    for n in $TESTS_LIST; do
        for t in "$BUILD"/tests/"$n"-*.c "$BUILD"/tests/"$n"-*.cpp; do
            [ -f "$t" ] && srcs="$srcs ${t##*/}"
        done
    done
    defined=$(cd "$BUILD/tests" && cat $srcs /dev/null | grep -oE 'int main_[0-9]{4}_[A-Za-z0-9_]+ *\(' |
              sed 's/^int main_//; s/ *($//' | sort -u)
    names=$(sed -n 's/^_TEST_DECL(\([0-9A-Za-z_]*\));/\1/p' "$BUILD/tests/test.c" | sort -u)
    {
        echo '/* written by run-suite.sh: tests not built in this runner */'
        echo '#include "test.h"'
        for t in $(comm -23 <(echo "$names") <(echo "$defined")); do
            echo "int main_$t(int argc, char **argv) { TEST_SKIP(\"not built by kipper's run-suite.sh\\n\"); return 0; }"
        done
    } > "$BUILD/tests/stubs.c.new"
    cmp -s "$BUILD/tests/stubs.c.new" "$BUILD/tests/stubs.c" && rm "$BUILD/tests/stubs.c.new" ||
        mv "$BUILD/tests/stubs.c.new" "$BUILD/tests/stubs.c"

    local objs=""
    for f in $srcs test.c rusage.c sockem.c sockem_ctrl.c testcpp.cpp stubs.c; do
        objs="$objs obj/${f%.*}.o"
    done
    for f in tinycthread.c tinycthread_extra.c rdlist.c; do
        objs="$objs obj/src_${f%.c}.o"
    done
    cat > "$BUILD/Makefile" <<EOF
# written by kipper's tests/librdkafka/run-suite.sh
# Tests name topics after __FILE__, which must stay "0114-....cpp" as in
# librdkafka's own build ("tests/0114-..." is not a legal topic name).
CPPFLAGS = -I$inc -Isrc -fmacro-prefix-map=tests/= -fmacro-prefix-map=src/=
CFLAGS = -O1 -g -Wno-deprecated-declarations
CXXFLAGS = -O1 -g -Wno-deprecated-declarations
LIBS = $(pkg-config --libs rdkafka++ rdkafka) -lpthread -ldl -lm
test-runner:$objs
	\$(CXX) -rdynamic -o \$@ $objs \$(LIBS)
obj/src_%.o: src/%.c config.h
	\$(CC) \$(CPPFLAGS) \$(CFLAGS) -c -o \$@ \$<
obj/%.o: tests/%.c config.h
	\$(CC) \$(CPPFLAGS) \$(CFLAGS) -c -o \$@ \$<
obj/%.o: tests/%.cpp config.h
	\$(CXX) \$(CPPFLAGS) \$(CXXFLAGS) -c -o \$@ \$<
EOF
    make -s -C "$BUILD" -j2 test-runner
}

echo "run-suite: building the test runner in $BUILD (librdkafka $(pkg-config --modversion rdkafka), tests from $SRC)"
build_runner || { echo "run-suite: the test runner did not build" >&2; exit 2; }

# ---- start a keeper and a broker ----
TMP=$(mktemp -d /tmp/kipper-librdkafka.XXXXXX)
KEEPER_PID=""
BROKER_PID=""
stop_all() {
    local p
    for p in $BROKER_PID $KEEPER_PID; do
        kill -TERM "$p" 2>/dev/null || continue
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    BROKER_PID="" KEEPER_PID=""
    if [ "${KEEP:-0}" = 1 ]; then echo "run-suite: kept $TMP"; else rm -rf "$TMP"; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_log() {   # file pattern seconds pid
    local i
    for i in $(seq $(($3 * 5))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        kill -0 "$4" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

ZK_PORT=$(free_port)
KAFKA_PORT=$(free_port)
mkdir -p "$TMP/keeper" "$TMP/broker"
cat > "$TMP/zoo.cfg" <<EOF
tickTime=2000
dataDir=$TMP/keeper
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
EOF
# The tests' default scenario (tests/scenarios/default.json): auto-created
# topics with 4 partitions; one broker, so one replica.
cat > "$TMP/server.properties" <<EOF
broker.id=1
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
log.dirs=$TMP/broker
zookeeper.connect=127.0.0.1:$ZK_PORT/kipper
auto.create.topics.enable=true
num.partitions=4
default.replication.factor=1
EOF
"$KIPPER" keeper "$TMP/zoo.cfg" > "$TMP/keeper.log" 2>&1 &
KEEPER_PID=$!
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT") 2>/dev/null && break
    sleep 0.2
done
"$KIPPER" broker "$TMP/server.properties" > "$TMP/broker.log" 2>&1 &
BROKER_PID=$!
if ! wait_log "$TMP/broker.log" "serving Kafka clients" 20 "$BROKER_PID"; then
    echo "run-suite: the broker did not start:" >&2
    cat "$TMP/keeper.log" "$TMP/broker.log" >&2
    exit 2
fi
echo "run-suite: keeper on 127.0.0.1:$ZK_PORT, broker on 127.0.0.1:$KAFKA_PORT (logs in $TMP)"

# ---- run the tests, one runner per test ----
cat > "$BUILD/tests/test.conf" <<EOF
# written by kipper's tests/librdkafka/run-suite.sh
metadata.broker.list=127.0.0.1:$KAFKA_PORT
EOF
RESULTS=$BUILD/results
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
export BROKERS=127.0.0.1:$KAFKA_PORT ZK_ADDRESS=127.0.0.1:$ZK_PORT/kipper
summary=""
failed=0 passed=0 skipped=0
rm -f "$BUILD"/tests/stats_*.json
for n in $TESTS_LIST; do
    log=$RESULTS/$n.log
    start=$(date +%s)
    (cd "$BUILD/tests" && TESTS=$n RDKAFKA_TEST_CONF=test.conf \
        timeout -k 10 "$TEST_TIMEOUT" ../test-runner -p1 ${RUNNER_ARGS:-} > "$log" 2>&1)
    rc=$?
    secs=$(($(date +%s) - start))
    # The runner's summary table: "| <name> | PASSED | ..." per test entry.
    states=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n "s/^| *\($n[A-Za-z0-9_]*\) *| *\([A-Z]*\) *|.*/\1=\2/p" | sort -u | tr '\n' ' ')
    # The first failure the runner reported (the line after its "### Test").
    why=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -A1 -m1 '^### Test ' | sed -n 2p | cut -c1-160)
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && [ "$secs" -ge "$TEST_TIMEOUT" ]; then
        result=FAIL why="killed after ${TEST_TIMEOUT}s${why:+; $why}"
    elif [ "$rc" -ne 0 ] || echo "$states" | grep -q FAILED; then
        result=FAIL why="exit $rc${why:+; $why}"
    elif echo "$states" | grep -q PASSED; then
        result=PASS why=""
    else
        result=SKIP why=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n 's/.*SKIPPING TEST: //p' | head -1)
    fi
    case $result in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
    esac
    line=$(printf '%-5s %-4s %4ss  %s%s' "$n" "$result" "$secs" "$states" "${why:+ ($why)}")
    echo "$line"
    summary="$summary$line
"
    if ! kill -0 "$BROKER_PID" 2>/dev/null; then
        echo "run-suite: the broker exited during $n" >&2
        break
    fi
done
cp "$TMP/broker.log" "$TMP/keeper.log" "$RESULTS/" 2>/dev/null

echo
echo "librdkafka $(pkg-config --modversion rdkafka) test suite against kipper (TEST_KAFKA_VERSION=$TEST_KAFKA_VERSION${RUNNER_ARGS:+, $RUNNER_ARGS}):"
printf '%s' "$summary"
echo "$passed passed, $failed failed, $skipped skipped (logs in $RESULTS)"
[ "$failed" -eq 0 ]
