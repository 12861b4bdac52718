#!/bin/sh
# run.sh [HARNESS...] -- what `make fuzz` runs: each harness (all of fuzz/*.c
# by default) for FUZZ_SECONDS (default 60), one at a time, starting from its
# committed corpus fuzz/corpus/<harness> (read only) and writing the inputs
# it finds interesting to the scratch corpus build/fuzz/corpus/<harness>.
# A crash, leak, sanitizer report, timeout (-timeout, 30 s) or out-of-memory
# (-rss_limit_mb, libFuzzer's 2 GiB) stops that harness and leaves the input
# in build/fuzz/crashes/; the log of each run is build/fuzz/logs/<harness>.log.
# Prints one line per harness (executions, coverage, features, corpus
# size) and exits non-zero if any harness failed. FUZZ_ARGS adds libFuzzer
# options (e.g. FUZZ_ARGS=-jobs=2).
set -u
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
if [ $# -gt 0 ]; then
    harnesses="$*"
else
    harnesses=$(ls fuzz/*.c | sed 's|^fuzz/||; s|\.c$||')
fi
mkdir -p build/fuzz/corpus build/fuzz/logs build/fuzz/crashes
failed=0
printf '%-16s %10s %8s %8s %7s %7s  %s\n' harness execs exec/s cov ft corpus result
for h in $harnesses; do
    bin=build/fuzz/$h
    log=build/fuzz/logs/$h.log
    scratch=build/fuzz/corpus/$h
    mkdir -p "$scratch"
    if [ ! -x "$bin" ]; then
        printf '%-16s not built (make fuzz-build)\n' "$h"
        failed=$((failed + 1))
        continue
    fi
    seeds=
    [ -d "fuzz/corpus/$h" ] && seeds=fuzz/corpus/$h
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$secs" -timeout=30 -print_final_stats=1 \
        -artifact_prefix="build/fuzz/crashes/$h-" ${FUZZ_ARGS:-} "$scratch" $seeds >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -a -E '^#[0-9]+' "$log" | tail -1)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
    if [ "$rc" -eq 0 ]; then
        result=ok
    else
        result="FAILED (exit $rc; $log)"
        failed=$((failed + 1))
    fi
    printf '%-16s %10s %8s %8s %7s %7s  %s\n' "$h" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}" "$result"
    if [ "$rc" -ne 0 ]; then
        grep -a -E 'ERROR: |SUMMARY: |fuzz check failed|Test unit written' "$log" | head -5 | sed 's/^/    /'
    fi
done
[ "$failed" -eq 0 ] || echo "fuzz: $failed harness(es) failed"
[ "$failed" -eq 0 ]
