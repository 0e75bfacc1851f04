#!/usr/bin/env bash
# make demo: a private dbus-daemon, bluez-sim with a mixed fleet of 12 wearables over 2 adapters
# (scenarios/demo.json: mild faults, then a link that goes out of range, an adapter power cycle and
# a bluetoothd restart), a private mosquitto broker on a free loopback port, and wearfleetd with
# the example configuration publishing to that broker; shows a live fleet view until Ctrl-C (or
# for DEMO_SECONDS), then stops every process it started. Everything the broker carried is kept
# in .build/demo/mqtt.log (mosquitto_sub -v -t '#').
#
# usage: scripts/demo.sh BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/private-bus.sh"
build_dir=${1:?usage: demo.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
run=$root/.build/demo
rm -rf "$run"
mkdir -p "$run/wearfleetd.d" "$run/state"

pids=()
cleanup() {
    trap - EXIT INT TERM
    # wearfleetd first (it disconnects its devices), then the simulator, then the bus.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        pid=${pids[i]}
        kill -TERM "$pid" 2>/dev/null || continue
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    printf '\nstopped wearfleetd, bluez-sim, the private dbus-daemon and mosquitto. Logs: %s\n' "${run#"$root"/}"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# A broker of the demo's own, on a port nothing uses.
start_private_broker "$run"
pids+=("$broker_pid")
wait_for_line "$run/mosquitto.log" ' running' 10
mosquitto_sub -h 127.0.0.1 -p "$mqtt_port" -v -t '#' > "$run/mqtt.log" 2>&1 &
pids+=($!)

private_bus_config "$run"
dbus-daemon --config-file="$run/bus.conf" --nofork --print-address=1 > "$run/bus.address" 2> "$run/dbus-daemon.log" &
pids+=($!)
wait_for_line "$run/bus.address" unix: 10
bus=$(head -1 "$run/bus.address")

"$build_dir/bluez-sim" --bus "$bus" --scenario "$root/scenarios/demo.json" > "$run/bluez-sim.log" 2>&1 &
pids+=($!)
wait_for_line "$run/bluez-sim.log" '^ready' 20

# The example configuration as installed, but for its [mqtt] section (a TLS broker elsewhere: the
# demo's broker replaces it), plus drop-ins for this machine: both simulated adapters, their real
# slot counts, a metrics port of the demo's own and its broker.
awk '/^\[/ { skip = ($0 == "[mqtt]") } !skip' "$root/config/wearfleetd.toml" > "$run/wearfleetd.toml"
cat > "$run/wearfleetd.d/10-demo.toml" <<'TOML'
# The demo's gateway has two adapters.
[fleet]
adapters = ["hci0", "hci1"]
adapter_slots = { hci0 = 5, hci1 = 4 }
max_connections = 9

[daemon]
state_debounce = "500ms"

[metrics]
listen = "127.0.0.1:9469"
TOML
# The demo's broker: plain MQTT on loopback, Home Assistant discovery on.
cat > "$run/wearfleetd.d/20-demo-mqtt.toml" <<TOML
[mqtt]
enabled = true
url = "mqtt://127.0.0.1:$mqtt_port"
gateway_id = "demo"
allow_commands = ["read", "reconnect"]
TOML
start_ns=$(date +%s%N)
"$build_dir/wearfleetd" --config "$run/wearfleetd.toml" --state-dir "$run/state" --bus "$bus" --log-format console \
    > "$run/wearfleetd.log" 2>&1 &
pids+=($!)
daemon_pid=$!

interactive=0
[[ -t 1 ]] && interactive=1
deadline=$((SECONDS + ${DEMO_SECONDS:-1000000000}))
while ((SECONDS < deadline)); do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
        echo "demo: wearfleetd exited:" >&2
        tail -20 "$run/wearfleetd.log" >&2
        exit 1
    fi
    view=$("$build_dir/wearfleetctl" status --bus "$bus" 2>&1 || true)
    elapsed=$((($(date +%s%N) - start_ns) / 1000000))
    events=$(grep -E ' (notice|warning|error) ' "$run/wearfleetd.log" | tail -8 | cut -c12-23,25- | cut -c1-150 || true)
    if ((interactive)); then printf '\033[H\033[2J'; fi
    printf 'Wearfleet demo: wearfleetd + bluez-sim (12 wearables, hci0 5 slots + hci1 4 slots), %d.%ds after start\n' \
        $((elapsed / 1000)) $((elapsed % 1000 / 100))
    printf 'Scripted faults: 25s a pool strap leaves range (back at 40s), 55s hci1 off (on at 60s), 80s bluetoothd restarts.\n'
    printf 'Metrics: curl -s http://127.0.0.1:9469/metrics    Bus: %s\n' "$bus"
    printf "MQTT: mosquitto_sub -h 127.0.0.1 -p %s -v -t 'wearfleet/#'    (%s messages so far)\n\n" "$mqtt_port" "$(wc -l < "$run/mqtt.log")"
    printf '%s\n\nRecent events (wearfleetd.log):\n%s\n' "$view" "$events"
    if ((interactive)); then printf '\nCtrl-C stops the demo and everything it started.\n'; fi
    sleep 1
done
