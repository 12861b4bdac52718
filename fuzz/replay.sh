#!/bin/sh
# replay.sh -- every committed corpus (fuzz/corpus/<harness>) through its
# harness once (libFuzzer -runs=0: the inputs, no mutation), with ASan,
# UBSan and leak checking on: the fuzzing regression tests `make test` runs.
# One line per harness; writes the counts to build/fuzz/replay.{passed,failed}
# for tests/run-all.sh and exits non-zero if any harness failed.
set -u
cd "$(dirname "$0")/.."
mkdir -p build/fuzz/logs build/fuzz/crashes
passed=0
failed=0
for src in fuzz/*.c; do
    h=$(basename "$src" .c)
    bin=build/fuzz/$h
    log=build/fuzz/logs/$h.replay.log
    dir=fuzz/corpus/$h
    n=$(ls "$dir" 2>/dev/null | wc -l)
    if [ ! -x "$bin" ] || [ "$n" -eq 0 ]; then
        echo "fuzz replay $h: FAILED (${bin} not built, or no corpus in $dir)"
        failed=$((failed + 1))
        continue
    fi
    if "$bin" -runs=0 -timeout=30 -artifact_prefix="build/fuzz/crashes/$h-replay-" "$dir" >"$log" 2>&1; then
        echo "fuzz replay $h: $n inputs ok"
        passed=$((passed + 1))
    else
        echo "fuzz replay $h: FAILED ($log)"
        grep -E 'ERROR: |SUMMARY: |fuzz check failed|Test unit written' "$log" | head -5 | sed 's/^/    /'
        failed=$((failed + 1))
    fi
done
echo "$passed" > build/fuzz/replay.passed
echo "$failed" > build/fuzz/replay.failed
echo "fuzz replay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
