#!/bin/sh
# run-integration.sh -- the pytest integration suite against bin/kipper, and
# the fault suite's short version (tests/chaos; its report tables are printed).
# Separate pytest runs: each folder has its own conftest.py, and the
# integration modules import theirs by name. Two streams at once, to keep
# `make test` within its budget: the rest of tests/integration (about 9
# minutes) in one, and in the other kazoo's own suite (test_kazoo_suite.py,
# about 2.5 minutes of mostly waiting on its servers), the fault suite
# (about 4.5 minutes; its servers are in network namespaces of their own),
# then test_replication.py (about 2 minutes, the longest module: here the
# two streams take about as long).
# Each pytest run has loopback ports of its own (harness.free_port); the
# second stream's output is printed after the first's. Writes the pass/fail
# counts over all to build/integration.{passed,failed}. Extra arguments go to
# every pytest run (e.g. -k watches).
set -u
cd "$(dirname "$0")/.."
mkdir -p build
second_runs="kazoo chaos replication"
for name in integration $second_runs; do
    rm -f "build/$name.xml" "build/$name.out" "build/$name.rc"
done
rm -rf build/chaos
kazoo=tests/integration/test_kazoo_suite.py
replication=tests/integration/test_replication.py

# $1: the output's name in build/; the rest: the pytest arguments. Its exit
# status goes to build/$1.rc, 0 when -k selected nothing there (status 5).
pytest_into() {
    name=$1
    shift
    /usr/bin/python3 -m pytest -p no:cacheprovider -q --junitxml="build/$name.xml" "$@" > "build/$name.out" 2>&1
    status=$?
    [ "$status" -eq 5 ] && status=0
    echo "$status" > "build/$name.rc"
}

(
    KIPPER_TEST_PORTS=10000-11999 pytest_into kazoo "$kazoo" "$@"
    KIPPER_TEST_PORTS=12000-13999 pytest_into chaos tests/chaos "$@"
    KIPPER_TEST_PORTS=14000-15999 pytest_into replication "$replication" "$@"
) &
second=$!
KIPPER_TEST_PORTS=16000-65535 /usr/bin/python3 -m pytest -p no:cacheprovider -q \
    --junitxml=build/integration.xml --ignore="$kazoo" --ignore="$replication" tests/integration "$@"
rc=$?
[ "$rc" -eq 5 ] && rc=0
wait "$second"
echo "kazoo's suite ($kazoo, run alongside):"
cat build/kazoo.out
echo "the fault suite's short version (tests/chaos, run alongside after kazoo's):"
cat build/chaos.out
echo "replication across brokers ($replication, run alongside after the fault suite):"
cat build/replication.out
for name in $second_runs; do
    status=$(cat "build/$name.rc" 2>/dev/null || echo 1)
    [ "$rc" -eq 0 ] && rc=$status
done
for table in build/chaos/report.md build/chaos/keeper-report.md; do
    if [ -f "$table" ]; then
        echo "fault suite, short version ($table; plots in build/chaos):"
        cat "$table"
    fi
done
/usr/bin/python3 - build/integration.xml build/kazoo.xml build/chaos.xml build/replication.xml <<'PY'
import sys, xml.etree.ElementTree as ET
passed = failed = 0
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except Exception:
        failed += 1
        continue
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    passed += total - bad - skipped
    failed += bad
open("build/integration.passed", "w").write(str(passed))
open("build/integration.failed", "w").write(str(failed))
PY
exit $rc
