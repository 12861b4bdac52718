# kipper -- `make` builds bin/kipper; `make test` runs every test (of librdkafka's own suite, the
# passing entries; `make librdkafka-suite` runs all of it); `make run` starts a local development cluster.
# Missing Debian packages are installed first (scripts/ensure-deps.sh).

CC ?= cc
CFLAGS_COMMON = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow \
                -Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers -Isrc -MMD -MP
CFLAGS ?= -O2 -g
LDLIBS = -lzookeeper_mt -ljansson -lsnappy -llz4 -lzstd -lisal -lcrypto -lz -lpthread

SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

SRC := $(sort $(shell find src -name '*.c'))
LIB_SRC := $(filter-out src/cli/main.c,$(SRC))
UNIT_SRC := $(wildcard tests/unit/*.c)

OBJ := $(SRC:%.c=build/obj/%.o)
SAN_OBJ := $(LIB_SRC:%.c=build/san/%.o) $(UNIT_SRC:%.c=build/san/%.o)
# kipper itself built with UBSan, for `make integration-ubsan`.
UBSAN_FLAGS = -O1 -g -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
UBSAN_OBJ := $(SRC:%.c=build/ubsan/%.o)

# The libFuzzer harnesses (fuzz/<name>.c; the rules are near the end).
FUZZ_CC ?= clang-14
FUZZ_SAN = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES := $(sort $(basename $(notdir $(wildcard fuzz/*.c))))
FUZZ_BIN := $(FUZZ_HARNESSES:%=build/fuzz/%)
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o)

.PHONY: all deps test-deps bench-deps fuzz-deps test librdkafka-suite unit check-layers integration integration-ubsan run chaos migrate-demo clean bench-keeper bench-keeper-ensemble bench-broker bench-broker-failover bench-broker-move fuzz fuzz-build fuzz-replay

all: deps bin/kipper

deps:
	@./scripts/ensure-deps.sh build

test-deps:
	@./scripts/ensure-deps.sh test

bench-deps:
	@./scripts/ensure-deps.sh bench

fuzz-deps:
	@./scripts/ensure-deps.sh fuzz

# `make V=1` shows full compiler command lines.
Q = $(if $(V),,@)

# Kafka's tool names beside kipper (scripts/kafka-shim.sh), for scripts that
# call $KAFKA_PATH/bin/kafka-*.sh.
SHIMS := bin/kafka-consumer-groups.sh bin/kafka-topics.sh bin/kafka-configs.sh bin/kafka-console-producer.sh \
         bin/kafka-console-consumer.sh

bin/kipper: $(OBJ) | $(SHIMS)
	@mkdir -p bin
	@echo "  LINK $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $(OBJ) $(LDLIBS)

bin/kafka-%.sh: scripts/kafka-shim.sh
	@mkdir -p bin
	$(Q)install -m 755 $< $@

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC   $<"
	$(Q)$(CC) $(CFLAGS_COMMON) $(CFLAGS) -c -o $@ $<

build/san/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC   $< (sanitizers)"
	$(Q)$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -c -o $@ $<

build/ubsan/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC   $< (UBSan)"
	$(Q)$(CC) $(CFLAGS_COMMON) $(UBSAN_FLAGS) -c -o $@ $<

# Named kipper beside its own kafka-*.sh shims, which run the kipper next to them.
build/ubsan/bin/kipper: $(UBSAN_OBJ) | $(SHIMS:bin/%=build/ubsan/bin/%)
	@echo "  LINK $@"
	$(Q)$(CC) $(UBSAN_FLAGS) -o $@ $(UBSAN_OBJ) $(LDLIBS)

build/ubsan/bin/kafka-%.sh: scripts/kafka-shim.sh
	@mkdir -p $(dir $@)
	$(Q)install -m 755 $< $@

build/unit-tests: $(SAN_OBJ)
	@echo "  LINK $@"
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $(SAN_OBJ) $(LDLIBS)

unit: deps build/unit-tests
	./build/unit-tests

# The include rules between folders (tests/check_layers.py); make test runs it too.
check-layers:
	/usr/bin/python3 tests/check_layers.py

# The fault suite's disk and clock shim (tests/chaos/kfault.c), preloaded into servers.
build/libkfault.so: tests/chaos/kfault.c
	@mkdir -p build
	@echo "  CC   $< (shared)"
	$(Q)$(CC) -shared -fPIC -O2 -Wall -Wextra -Werror -o $@ $< -ldl

integration: test-deps bin/kipper build/libkfault.so
	./tests/run-integration.sh

# The same suite with every server a kipper built with UBSan, which stops at its first undefined
# behaviour (the test that reached it fails, the report in the server's log). Not part of `make test`
# (the unit tests and fuzzers run sanitized there); about 15 minutes.
integration-ubsan: test-deps bin/kipper build/ubsan/bin/kipper build/libkfault.so
	KIPPER_BIN=$(CURDIR)/build/ubsan/bin/kipper ./tests/run-integration.sh

# The packages first, then everything the tests need built on every CPU (`make test` is what CI runs,
# without -j).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

test: test-deps
	$(MAKE) --no-print-directory -j$(JOBS) bin/kipper build/unit-tests build/libkfault.so $(FUZZ_BIN)
	./tests/run-all.sh

# librdkafka 2.0.2's own suite, every broker-facing test (tests/README.md, "librdkafka's test suite"): one
# runner per test, full mode, each killed after TEST_TIMEOUT (default 300 s); about 20 minutes. `make test`
# runs only the passing ones (tests/librdkafka/passing.list). LIBRDKAFKA_TESTS="0045 0113" runs some.
librdkafka-suite: test-deps bin/kipper
	./tests/librdkafka/run-suite.sh $(or $(LIBRDKAFKA_TESTS),@all)

run: deps bin/kipper
	./bin/kipper dev

# The fault suite's long version (tests/README.md, "Faults"): every schedule, several seeds, faults three
# times longer, on kipper keepers and on Apache ZooKeeper 3.8; prints the report. About 15 minutes per seed.
# CHAOS_ARGS="--seeds 1 --only bridge --seed-base 42" replays one run.
chaos: test-deps bin/kipper build/libkfault.so
	/usr/bin/python3 tests/chaos/chaos_run.py $(CHAOS_ARGS)

# docs/migrating-from-zookeeper.md, shown: a 5-member Apache ZooKeeper 3.8 ensemble under load (kazoo, the C
# client, a kipper broker) has each member replaced by kipper in place, then one back; prints the operations,
# the errors by kind and the acknowledged writes lost (must be 0). Not part of `make test`; about 3 minutes.
# MIGRATE_ARGS="--members 3 --dwell 5 --keep" changes it.
migrate-demo: test-deps bin/kipper
	/usr/bin/python3 tests/integration/migration.py $(MIGRATE_ARGS)

# kipper's keeper vs Apache ZooKeeper 3.8, side by side (bench/README.md); about 2 minutes.
bench-keeper: test-deps bin/kipper
	./bench/keeper/run.sh

# 3-member kipper ensemble vs 3-member Apache ZooKeeper ensemble, one after the other; about 3 minutes.
bench-keeper-ensemble: test-deps bin/kipper
	./bench/keeper/run.sh --ensemble

# kipper's broker on librdkafka: throughput and latency beside the machine's loopback TCP and disk
# write limits, replication factor 1 and 3 on 3 brokers, measured in the same run (bench/README.md); about 3 minutes.
bench-broker: bench-deps bin/kipper build/bench-broker-load
	BENCH_LOAD=build/bench-broker-load ./bench/broker/run.sh

# failover time: a leader of 1, 100 and 1000 partitions killed (SIGTERM, SIGKILL) to the next acks=all
# acknowledgement of every partition, 3 brokers on loopback (bench/README.md); about 2 minutes.
bench-broker-failover: bench-deps bin/kipper build/bench-broker-load
	BENCH_LOAD=build/bench-broker-load ./bench/broker/failover.sh

# moving a 1 GiB partition to a new broker, unthrottled and throttled: time, MB/s, the throttle's achieved
# rate, and a producer's p99 during each move beside its p99 without one (bench/README.md); about 2.5 minutes.
bench-broker-move: bench-deps bin/kipper build/bench-broker-load
	BENCH_LOAD=build/bench-broker-load ./bench/broker/move.sh

build/bench-broker-load: bench/broker/load.c
	@mkdir -p build
	@echo "  CC   $<"
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror $$(pkg-config --cflags rdkafka) -o $@ $< \
		$$(pkg-config --libs rdkafka) -lpthread

# ---- fuzzing (tests/README.md, Fuzzing) ----
# One libFuzzer harness per decoder of untrusted bytes, fuzz/<name>.c, built with clang's libFuzzer,
# AddressSanitizer and UBSan against the same sources as bin/kipper (build/fuzz/libkipper.a, compiled
# with coverage instrumentation). `make fuzz` runs each for FUZZ_SECONDS, one at a time, from its
# committed corpus (fuzz/corpus/<name>) into a scratch one (build/fuzz/corpus/<name>); `make test`
# replays every committed corpus (fuzz/replay.sh).

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC   $< (fuzzing)"
	$(Q)$(FUZZ_CC) $(CFLAGS_COMMON) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/libkipper.a: $(FUZZ_OBJ)
	@echo "  AR   $@"
	$(Q)rm -f $@ && ar rcs $@ $(FUZZ_OBJ)

$(FUZZ_BIN): build/fuzz/%: fuzz/%.c build/fuzz/libkipper.a
	@echo "  CC   $< (libFuzzer)"
	$(Q)$(FUZZ_CC) $(CFLAGS_COMMON) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< build/fuzz/libkipper.a $(LDLIBS)

fuzz-build: fuzz-deps $(FUZZ_BIN) build/fuzz/kafka-seeds

# A request frame per Kafka API and version, for fuzz/make-seeds.py.
build/fuzz/kafka-seeds: fuzz/tools/kafka_seeds.c build/fuzz/libkipper.a
	@echo "  CC   $<"
	$(Q)$(FUZZ_CC) $(CFLAGS_COMMON) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -o $@ $< build/fuzz/libkipper.a $(LDLIBS)

# Each harness for FUZZ_SECONDS (default 60), one after the other; a summary line per harness.
fuzz: fuzz-deps $(FUZZ_BIN)
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh $(FUZZ_ONLY)

# Every committed corpus through its harness once (what make test runs).
fuzz-replay: fuzz-deps $(FUZZ_BIN)
	./fuzz/replay.sh

clean:
	rm -rf build bin

-include $(OBJ:.o=.d) $(SAN_OBJ:.o=.d) $(UBSAN_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d) build/fuzz/kafka-seeds.d
