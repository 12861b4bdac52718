#!/bin/sh
# run-integration.sh -- the pytest integration suite against bin/kipper, then
# the fault suite's short version (tests/chaos; its report table is printed).
# Writes the pass/fail counts to build/integration.{passed,failed}.
# Extra arguments go to pytest (e.g. -k watches).
set -u
cd "$(dirname "$0")/.."
mkdir -p build
xml=build/integration.xml
rm -f "$xml"
rm -rf build/chaos
/usr/bin/python3 -m pytest -p no:cacheprovider -q --junitxml="$xml" tests/integration tests/chaos "$@"
rc=$?
if [ -f build/chaos/report.md ]; then
    echo "fault suite (short version; plots in build/chaos):"
    cat build/chaos/report.md
fi
/usr/bin/python3 - "$xml" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    passed, failed = 0, 1
else:
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    passed = total - failed - skipped
open("build/integration.passed", "w").write(str(passed))
open("build/integration.failed", "w").write(str(failed))
PY
exit $rc
