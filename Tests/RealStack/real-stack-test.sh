#!/usr/bin/env bash
# The real-stack tier: wearfleetd (the build under test) against Debian's bluetoothd and Linux's
# Bluetooth core, in a qemu guest booted from this machine's own kernel package and root
# filesystem, with virtual adapters and peripherals from bumble (radio.py).
#
#   Tests/RealStack/real-stack-test.sh [debug|release]   (run by `make real-stack-test` and `make test`)
#
# Boots the guest (boot-vm.sh), which runs guest.sh and then scenarios.py; reads the scenarios'
# results back from the results share and prints one line per scenario and every figure.
# Artefacts in .build/real-stack/: results.json, driver.log, wearfleetd.log, bluetoothd-N.log,
# bluez-calls.txt (every call to org.bluez), watch.jsonl, dmesg.log, console.log, summary.txt,
# result (passed|failed|skipped).
# Only a machine where qemu cannot run (no kernel package, no qemu) skips, with a SKIP: line.
# Environment: REALSTACK_SCENARIOS=key,key runs only those (scenarios.py lists the keys);
# REALSTACK_BTMON=1 adds an HCI trace (hci-trace.txt); REALSTACK_RECORD_INPUTS=1 has wearfleetd
# record every machine input in wearfleetd.log (`wearfleetctl replay` re-runs them).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
config=${1:-debug}
[[ $config == debug || $config == release ]] || { echo "usage: $0 [debug|release]" >&2; exit 2; }
here=$repo/Tests/RealStack
work=$repo/.build/real-stack
results=$work/results
venv=$repo/.build-realstack-venv
build_dir=$repo/.build/$config

mkdir -p "$work"
rm -rf "$results"
rm -f "$work/result" "$work/summary.txt"
started=$(date +%s)

for binary in wearfleetd wearfleetctl; do
    [[ -x $build_dir/$binary ]] || { echo "real-stack-test: $build_dir/$binary is missing (make build)" >&2; exit 1; }
done
# Where qemu cannot run, say so before fetching anything.
if ! command -v qemu-system-x86_64 >/dev/null || ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
    echo "SKIP: real-stack tier: qemu cannot run here (no qemu-system-x86_64 or no /boot/vmlinuz-*: make deps installs them)"
    echo skipped > "$work/result"
    exit 0
fi
"$repo/scripts/python-venv.sh" "$venv" "$here/requirements.txt"

echo "real-stack-test: booting the guest (Debian's kernel under qemu, TCG); the scenarios take minutes"
status=0
"$here/boot-vm.sh" "$results" "$here/guest.sh" \
    "REPO=$repo" "BUILD_DIR=$build_dir" "VENV=$venv" \
    "SCENARIOS=${REALSTACK_SCENARIOS:-}" "BTMON=${REALSTACK_BTMON:-0}" \
    "RECORD_INPUTS=${REALSTACK_RECORD_INPUTS:-0}" || status=$?
elapsed=$(($(date +%s) - started))

if ((status == 77)); then
    echo "SKIP: real-stack tier: qemu cannot run here (see the line above)"
    echo skipped > "$work/result"
    exit 0
fi

report() {
    python3 - "$results/results.json" "$elapsed" <<'EOF'
import json, sys
document = json.load(open(sys.argv[1]))
failed = 0
for scenario in document["scenarios"]:
    mark = "ok" if scenario["passed"] else "FAILED"
    failed += not scenario["passed"]
    print(f"real-stack-test: {mark}: {scenario['name']} ({scenario['seconds']} s)")
    for check in scenario["checks"]:
        print(f"    {'ok' if check['passed'] else 'FAILED'}: {check['check']}")
    for key, value in scenario["figures"].items():
        print(f"    {key}: {value}")
    if not scenario["passed"]:
        print(f"    error: {scenario.get('error')}")
        for line in scenario.get("radios", []) + scenario.get("daemon_view", []):
            print(f"    | {line}")
print("real-stack-test: figures (measured under qemu TCG emulation, not on hardware):")
for key, value in document["figures"].items():
    print(f"    {key}: {value}")
print(f"real-stack-test: {len(document['scenarios'])} scenarios, {failed} failed, {sys.argv[2]} s in all")
if not document.get("complete"):
    print("real-stack-test: FAILED: the scenario driver did not finish (see driver.log)")
    failed += 1
sys.exit(1 if failed else 0)
EOF
}

if [[ ! -s $results/results.json ]]; then
    echo "real-stack-test: FAILED: the guest returned no results (qemu exit $status, stage: $(cat "$results/stage" 2>/dev/null))" >&2
    tail -n 40 "$results/console.log" >&2 2>/dev/null || true
    tail -n 40 "$results/driver.log" >&2 2>/dev/null || true
    echo failed > "$work/result"
    exit 1
fi
driver_status=$(cat "$results/driver-status" 2>/dev/null || echo missing)
if report | tee "$work/summary.txt" && ((status == 0)) && [[ $driver_status == 0 ]]; then
    echo passed > "$work/result"
else
    echo "real-stack-test: FAILED (qemu exit $status, driver exit $driver_status); logs in $results" >&2
    tail -n 30 "$results/driver.log" >&2 2>/dev/null || true
    echo failed > "$work/result"
    exit 1
fi
