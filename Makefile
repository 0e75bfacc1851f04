# Wearfleet. The two commands users need: `make demo` and `make test`.
# Everything else here is a step of those two, or a tool for developers.

SWIFT      ?= swift
CONFIG     ?= debug
BUILD_FLAGS = -c $(CONFIG)

.PHONY: all deps build test unit-tests demo bench fuzz clean

all: build

## deps: install the Debian packages the project needs (only the missing ones)
deps:
	@./scripts/install-deps.sh

## build: compile every target
build: deps
	$(SWIFT) build $(BUILD_FLAGS) --build-tests

## test: deps + build + every test
test: build unit-tests

unit-tests:
	$(SWIFT) test $(BUILD_FLAGS) --skip-build

## demo: the daemon against a simulated fleet
demo: deps
	@echo "make demo: the daemon (wearfleetd) and the BlueZ simulator are not built yet;"
	@echo "this target will run them once they land. Today: 'make test' and 'make bench-dbus'."
	@exit 1

## bench-dbus: D-Bus library figures next to a plain C libdbus baseline (release build)
bench-dbus: deps
	$(SWIFT) build -c release --product dbus-bench
	./scripts/build-c-baseline.sh .build/release
	.build/release/dbus-bench --c-baseline .build/release/dbus-floor

clean:
	rm -rf .build
