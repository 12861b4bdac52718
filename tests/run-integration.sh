#!/bin/sh
# run-integration.sh -- the pytest integration suite against bin/kipper, then
# the fault suite's short version (tests/chaos; its report tables are printed).
# Two pytest runs: each folder has its own conftest.py, and the integration
# modules import theirs by name. kazoo's own suite (test_kazoo_suite.py, about
# 2.5 minutes of mostly waiting on its servers) runs in a third pytest at the
# same time as the rest of tests/integration, to keep `make test` within its
# budget; its output is printed after theirs. Writes the pass/fail counts over
# all to build/integration.{passed,failed}. Extra arguments go to every pytest
# run (e.g. -k watches).
set -u
cd "$(dirname "$0")/.."
mkdir -p build
rm -f build/integration.xml build/kazoo.xml build/kazoo.out build/chaos.xml
rm -rf build/chaos
kazoo=tests/integration/test_kazoo_suite.py
# (each with ports of its own: harness.free_port)
KIPPER_TEST_PORTS=10000-13999 /usr/bin/python3 -m pytest -p no:cacheprovider -q --junitxml=build/kazoo.xml \
    "$kazoo" "$@" > build/kazoo.out 2>&1 &
kazoo_pid=$!
KIPPER_TEST_PORTS=14000-65535 /usr/bin/python3 -m pytest -p no:cacheprovider -q \
    --junitxml=build/integration.xml --ignore="$kazoo" tests/integration "$@"
rc=$?
wait "$kazoo_pid"
kazoo_rc=$?
echo "kazoo's suite ($kazoo, run alongside):"
cat build/kazoo.out
[ "$kazoo_rc" -eq 5 ] && kazoo_rc=0      # -k selected nothing there
[ "$rc" -eq 5 ] && rc=0
[ "$rc" -eq 0 ] && rc=$kazoo_rc
/usr/bin/python3 -m pytest -p no:cacheprovider -q --junitxml=build/chaos.xml tests/chaos "$@"
chaos_rc=$?
[ "$chaos_rc" -eq 5 ] && chaos_rc=0      # -k selected nothing there
[ "$rc" -eq 0 ] && rc=$chaos_rc
for table in build/chaos/report.md build/chaos/keeper-report.md; do
    if [ -f "$table" ]; then
        echo "fault suite, short version ($table; plots in build/chaos):"
        cat "$table"
    fi
done
/usr/bin/python3 - build/integration.xml build/kazoo.xml build/chaos.xml <<'PY'
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
