#!/bin/sh
# run-all.sh -- every test: the C unit tests (built with ASan and UBSan), the
# layering check, the fuzzing corpora replayed through their libFuzzer
# harnesses (ASan and UBSan too, one test per harness), the librdkafka 2.0.2
# suite's tests that pass against kipper (tests/librdkafka/passing.list, one
# test per entry of librdkafka's table), then the integration tests (pytest,
# real clients against real processes). Ends with one
# "N passed, N failed" line over all of them; exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."

unit_out=build/unit-tests.out
./build/unit-tests > "$unit_out" 2>&1
unit_rc=$?
cat "$unit_out"
unit_passed=$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$unit_out")
unit_failed=$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$unit_out")
if [ -z "$unit_passed" ]; then   # crashed before its summary
    unit_passed=0
    unit_failed=1
fi
[ "$unit_rc" -ne 0 ] && [ "$unit_failed" -eq 0 ] && unit_failed=1

# The include rules that keep src/ layered (docs/ARCHITECTURE.md): one test.
if /usr/bin/python3 tests/check_layers.py; then
    layers_passed=1 layers_failed=0
else
    layers_passed=0 layers_failed=1
fi

# Every committed corpus (fuzz/corpus/<harness>) through its harness (tests/README.md, Fuzzing): a test per harness.
rm -f build/fuzz/replay.passed build/fuzz/replay.failed
./fuzz/replay.sh
fuzz_rc=$?
fuzz_passed=$(cat build/fuzz/replay.passed 2>/dev/null || echo 0)
fuzz_failed=$(cat build/fuzz/replay.failed 2>/dev/null || echo 1)
[ "$fuzz_rc" -ne 0 ] && [ "$fuzz_failed" -eq 0 ] && fuzz_failed=1

# librdkafka's own suite, the tests that pass (tests/README.md, "librdkafka's test suite"): several at a
# time in one runner, in the suite's quick mode, the whole run killed after 5 minutes.
rm -f build/librdkafka.counts
TEST_TIMEOUT=300 ./tests/librdkafka/run-suite.sh -j "${LIBRDKAFKA_JOBS:-4}" -Q -o build/librdkafka.counts @passing
rdk_rc=$?
rdk_passed=0 rdk_failed=1
[ -f build/librdkafka.counts ] && read -r rdk_passed rdk_failed < build/librdkafka.counts
[ "$rdk_rc" -ne 0 ] && [ "$rdk_failed" -eq 0 ] && rdk_failed=1

./tests/run-integration.sh
int_rc=$?
int_passed=$(cat build/integration.passed 2>/dev/null || echo 0)
int_failed=$(cat build/integration.failed 2>/dev/null || echo 1)
[ "$int_rc" -ne 0 ] && [ "$int_failed" -eq 0 ] && int_failed=1

passed=$((unit_passed + layers_passed + fuzz_passed + rdk_passed + int_passed))
failed=$((unit_failed + layers_failed + fuzz_failed + rdk_failed + int_failed))
echo
echo "unit: $unit_passed passed, $unit_failed failed; layers: $layers_passed passed, $layers_failed failed;" \
     "fuzz replay: $fuzz_passed passed, $fuzz_failed failed;" \
     "librdkafka: $rdk_passed passed, $rdk_failed failed;" \
     "integration: $int_passed passed, $int_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
