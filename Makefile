# Wearfleet. The two commands users need: `make demo` and `make test`.
# Everything else here is a step of those two, or a tool for developers.

SHELL      := /bin/bash
SWIFT      ?= swift
CONFIG     ?= debug
BUILD_FLAGS = -c $(CONFIG)
SWIFT_BUILD_DIR = .build/$(CONFIG)

.PHONY: all deps build test unit-tests fidelity-tests python-venv sim demo bench fuzz clean

all: build

## deps: install the Debian packages the project needs (only the missing ones)
deps:
	@./scripts/install-deps.sh

## build: compile every target
build: deps
	$(SWIFT) build $(BUILD_FLAGS) --build-tests

## test: deps + build + every test (the bleak fidelity suite must run, not skip) + fuzz smoke
test: build python-venv
	@set -o pipefail; WEARFLEET_REQUIRE_FIDELITY=1 $(SWIFT) test $(BUILD_FLAGS) --skip-build 2>&1 | tee .build/test-output.log
	$(MAKE) fuzz-smoke
	@passed=$$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} in .* passed after.*/\1/p' .build/test-output.log | tail -1); \
		if [ -n "$$passed" ]; then echo "tests: $$passed passed, 0 failed"; fi

## unit-tests: every Swift test (the bleak fidelity suite included when .build-venv exists)
unit-tests:
	$(SWIFT) test $(BUILD_FLAGS) --skip-build

## python-venv: the pinned Python packages of the fidelity tests (bleak), in .build-venv
python-venv: deps
	@./scripts/python-venv.sh

## fidelity-tests: bleak, a real BlueZ client, drives bluez-sim end to end (fails, not skips, without .build-venv)
fidelity-tests: python-venv
	WEARFLEET_REQUIRE_FIDELITY=1 $(SWIFT) test $(BUILD_FLAGS) --skip-build --filter BleakFidelityTests

## sim: bluez-sim with 12 wearables on a private bus (prints the bus address; Ctrl-C stops both)
sim: deps
	$(SWIFT) build $(BUILD_FLAGS) --product bluez-sim
	./scripts/run-sim.sh $(SWIFT_BUILD_DIR)

## demo: wearfleetd keeping a simulated fleet (12 wearables, 2 adapters, scripted faults) connected,
## with a live fleet view until Ctrl-C (DEMO_SECONDS=N stops it after N seconds)
demo: deps
	$(SWIFT) build $(BUILD_FLAGS) --product wearfleetd
	$(SWIFT) build $(BUILD_FLAGS) --product wearfleetctl
	$(SWIFT) build $(BUILD_FLAGS) --product bluez-sim
	./scripts/demo.sh $(SWIFT_BUILD_DIR)

## bench-dbus: D-Bus library figures next to a plain C libdbus baseline (release build);
## the table on stdout, the same figures in .build/dbus-bench.json
bench-dbus: deps
	$(SWIFT) build -c release --product dbus-bench
	./scripts/build-c-baseline.sh .build/release
	.build/release/dbus-bench --c-baseline .build/release/dbus-floor --json .build/dbus-bench.json

## fuzz: every GATT decoder under libFuzzer (+ASan) for FUZZ_SECONDS each; crashes in .build-fuzz/crashes
## fuzz-smoke: every GATT decoder in one short libFuzzer run (FUZZ_SMOKE_SECONDS), part of make test
FUZZ_SECONDS       ?= 30
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_SCRATCH        = .build-fuzz
FUZZ_BIN            = $(FUZZ_SCRATCH)/debug/gatt-fuzz
FUZZ_BUILD          = $(SWIFT) build --scratch-path $(FUZZ_SCRATCH) --product gatt-fuzz \
                      -Xswiftc -sanitize=fuzzer,address -Xswiftc -D -Xswiftc GATT_FUZZING -Xlinker --export-dynamic
FUZZ_RUN            = SWIFT_BACKTRACE=enable=no $(FUZZ_BIN) -max_len=256 -artifact_prefix=$(FUZZ_SCRATCH)/crashes/

.PHONY: fuzz-smoke

fuzz:
	$(FUZZ_BUILD)
	@mkdir -p $(FUZZ_SCRATCH)/crashes
	@total=0; for uuid in $$(GATT_FUZZ_DECODER=list $(FUZZ_BIN)); do \
		mkdir -p $(FUZZ_SCRATCH)/corpus/$$uuid; \
		GATT_FUZZ_DECODER=$$uuid $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_SCRATCH)/corpus/$$uuid \
			> $(FUZZ_SCRATCH)/fuzz-$$uuid.log 2>&1 || { tail -40 $(FUZZ_SCRATCH)/fuzz-$$uuid.log; exit 1; }; \
		runs=$$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' $(FUZZ_SCRATCH)/fuzz-$$uuid.log); \
		echo "fuzz $$uuid: $$runs runs, no crash"; total=$$((total + runs)); \
	done; echo "fuzz: $$total runs in total without a crash"

fuzz-smoke:
	$(FUZZ_BUILD)
	@mkdir -p $(FUZZ_SCRATCH)/crashes $(FUZZ_SCRATCH)/corpus/all
	@$(FUZZ_RUN) -max_total_time=$(FUZZ_SMOKE_SECONDS) $(FUZZ_SCRATCH)/corpus/all > $(FUZZ_SCRATCH)/fuzz-smoke.log 2>&1 \
		|| { tail -40 $(FUZZ_SCRATCH)/fuzz-smoke.log; exit 1; }
	@echo "fuzz-smoke: $$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' $(FUZZ_SCRATCH)/fuzz-smoke.log) runs over all GATT decoders, no crash"

clean:
	rm -rf .build
