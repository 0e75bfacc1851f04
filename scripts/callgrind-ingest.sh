#!/usr/bin/env bash
# Instructions per D-Bus notification of the daemon and of the C floor (dbus-floor bluez-recv),
# both under callgrind, on fleet-bench's ingest workload: the same bluez-sim scenario and daemon
# configuration, on a private bus of its own.
#
#   scripts/callgrind-ingest.sh BINDIR WORKDIR [OUTDIR]
#
# The daemon is `fleet-bench agent`, wearfleetd's runtime wired as wearfleetd wires it (the
# process fleet-bench measures for ingest): valgrind 3.19 crashes starting wearfleetd itself,
# whose async main hands the main thread to the concurrency runtime.
#
# BINDIR holds fleet-bench, bluez-sim and dbus-floor (release builds); WORKDIR is the --work
# directory of a fleet-bench ingest run, which wrote ingest-N-scenario.json and
# ingest-N-dbus.toml there. Environment: DEVICES (10), RATE (50 Hz), PAYLOAD (20 bytes),
# WINDOW (20 s measured), SETTLE (5 s of streaming before the window).
#
# Both processes run under callgrind from the start; once the stream has settled, their counters
# are zeroed, and dumped WINDOW seconds later. Notifications are counted in the same dumps, as the
# calls to dbus_message_iter_get_fixed_array: each process reads each notification's `ay` with it
# exactly once, and nothing else carries one while the stream runs.
#
# valgrind 3.19 (Debian 12) gives up on the debug information of Swift release binaries
# ("unhandled dwarf2 abbrev form code 0x25"), so it runs copies without it (symbols are kept).
set -euo pipefail
bin=${1:?usage: callgrind-ingest.sh BINDIR WORKDIR [OUTDIR]}
work=${2:?usage: callgrind-ingest.sh BINDIR WORKDIR [OUTDIR]}
out=${3:-.build/callgrind}
devices=${DEVICES:-10} rate=${RATE:-50} payload=${PAYLOAD:-20} window=${WINDOW:-20} settle=${SETTLE:-5}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/private-bus.sh"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/daemon.out* "$out"/floor.out*
dir=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-ingest.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

mkdir "$dir/bin"
objcopy --strip-debug "$bin/fleet-bench" "$dir/bin/fleet-bench"  # dbus-floor is built without debug information

private_bus_config "$dir"
dbus-daemon --config-file="$dir/bus.conf" --nofork --print-address=1 > "$dir/address" &
pids+=($!)
wait_for_line "$dir/address" unix: 10 $!
address=$(head -1 "$dir/address")

"$bin/bluez-sim" --bus "$address" --scenario "$work/ingest-$devices-scenario.json" > "$dir/sim.out" 2> "$out/bluez-sim.log" &
pids+=($!)
wait_for_line "$dir/sim.out" ready 60 $!

mkdir "$dir/state"
valgrind --tool=callgrind --callgrind-out-file="$out/daemon.out" \
    "$dir/bin/fleet-bench" agent --bus "$address" --config "$work/ingest-$devices-dbus.toml" --state-dir "$dir/state" \
    > "$dir/daemon.out" 2> "$out/daemon.log" &
daemon=$!
pids+=("$daemon")
wait_for_line "$dir/daemon.out" "^ready" 300 "$daemon"

valgrind --tool=callgrind --callgrind-out-file="$out/floor.out" "$bin/dbus-floor" bluez-recv "$address" \
    > "$dir/floor.out" 2> "$out/floor.log" &
floor=$!
pids+=("$floor")
wait_for_line "$dir/floor.out" ready 60 "$floor"

busctl --address="$address" call org.wearfleet.Simulator /org/wearfleet/simulator org.wearfleet.Simulator1 \
    SetMotionStream sdu "" "$rate" "$payload" > /dev/null
sleep "$settle"
callgrind_control -z "$daemon" > /dev/null
callgrind_control -z "$floor" > /dev/null
sleep "$window"
callgrind_control -d "$daemon" > /dev/null
callgrind_control -d "$floor" > /dev/null

python3 - "$out" <<'PY'
import glob, re, sys

def figures(path):
    """Total instructions and calls to dbus_message_iter_get_fixed_array in one dump."""
    names, total, calls, pending = {}, 0, 0, False
    with open(path) as dump:
        for line in dump:
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
            elif line.startswith("cfn="):
                match = re.match(r"cfn=\((\d+)\)(?: (.*))?", line.strip())
                if match:
                    name = match.group(2) or names.get(match.group(1), "")
                    if match.group(2): names[match.group(1)] = match.group(2)
                else:
                    name = line[4:].strip()
                pending = name == "dbus_message_iter_get_fixed_array"
            elif line.startswith("calls=") and pending:
                calls += int(line[6:].split()[0])
                pending = False
            elif line.startswith("fn="):
                match = re.match(r"fn=\((\d+)\) (.*)", line.strip())
                if match: names[match.group(1)] = match.group(2)
    return total, calls

for name in ("daemon", "floor"):
    dumps = sorted(glob.glob(f"{sys.argv[1]}/{name}.out.*"))
    if not dumps:
        sys.exit(f"no dump of {name}")
    total, notifications = figures(dumps[-1])
    each = total / notifications if notifications else float("nan")
    print(f"{name}: {total:,} instructions, {notifications:,} notifications, {each:,.0f} per notification")
PY
