#!/usr/bin/env bash
# make demo-multi: three gateways sharing one fleet of 30 straps through one broker ([cluster]).
# Each gateway is a private dbus-daemon, a bluez-sim playing its bluetoothd in one shared world
# (scenarios/demo-multi.json: each strap heard by two or three gateways, one link per strap in the
# whole world) and a wearfleetd pinning all 30; one private mosquitto on a free loopback port.
# Shows a live table of who owns what until Ctrl-C (or for DEMO_SECONDS). At DEMO_KILL_AT seconds
# (default 45) the gateway owning the most straps loses power (its wearfleetd and bluetoothd are
# SIGKILLed) and its straps go to the others; at DEMO_RESTART_AT (default 90) it comes back, and
# the straps the others now hold stay there (linked, a strap stops advertising: it hears nothing to
# bid on). Logs in .build/demo-multi/.
#
# usage: scripts/demo-multi.sh BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/private-bus.sh"
build_dir=${1:?usage: demo-multi.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
run=$root/.build/demo-multi
world=$root/scenarios/demo-multi.json
gateways=(gw1 gw2 gw3)
rm -rf "$run"
mkdir -p "$run/world"

declare -A gateway_pids
other_pids=()
stop_pid() {
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
    trap - EXIT INT TERM
    # Each gateway's wearfleetd first (it disconnects its straps), then its bluetoothd and bus.
    for gateway in "${gateways[@]}"; do
        for pid in ${gateway_pids[$gateway]:-}; do stop_pid "$pid"; done
    done
    for pid in "${other_pids[@]}"; do stop_pid "$pid"; done
    wait 2>/dev/null || true
    printf '\nstopped the three gateways and mosquitto. Logs: %s\n' "${run#"$root"/}"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

start_private_broker "$run"
other_pids+=("$broker_pid")
wait_for_line "$run/mosquitto.log" ' running' 10
# What the table is made of: claims, states, heartbeats, bids and each gateway's status.
mosquitto_sub -h 127.0.0.1 -p "$mqtt_port" -v -t 'wearfleet/device/+/owner' -t 'wearfleet/device/+/state' \
    -t 'wearfleet/gateway/+/alive' -t 'wearfleet/gateway/+/bids' -t 'wearfleet/gateway/+/status' > "$run/ownership.log" 2>&1 &
other_pids+=($!)

# Pins every strap of the world; [cluster] on, with the defaults a site would use.
pins=$(python3 - "$world" <<'EOF'
import json, sys
for device in json.load(open(sys.argv[1]))["devices"]:
    print(f'[[pinned]]\naddress = "{device["address"]}"\nname = "{device["name"]}"\nclass = "strap"\n')
EOF
)

start_gateway() {
    local gateway=$1 dir=$run/$1
    rm -rf "$dir/bus.socket" "$dir/bus.address"
    mkdir -p "$dir/state"
    private_bus_config "$dir"
    dbus-daemon --config-file="$dir/bus.conf" --nofork --print-address=1 > "$dir/bus.address" 2>> "$dir/dbus-daemon.log" &
    local bus_pid=$!
    wait_for_line "$dir/bus.address" unix: 10
    local bus
    bus=$(head -1 "$dir/bus.address")
    # (A restarted gateway appends to its logs: its new bluetoothd is ready at the next 'ready'.)
    local readies
    readies=$(grep -c '^ready' "$dir/bluez-sim.log" 2>/dev/null || true)
    "$build_dir/bluez-sim" --bus "$bus" --world "$world" --gateway "$gateway" --world-dir "$run/world" >> "$dir/bluez-sim.log" 2>&1 &
    local sim_pid=$!
    wait_for_line "$dir/bluez-sim.log" '^ready' 20 "$sim_pid" "$((${readies:-0} + 1))"
    cat > "$dir/wearfleetd.toml" <<TOML
[fleet]
adapters = ["hci0"]
adapter_slots = { hci0 = 20 }
max_connections = 20

[classes.strap]
subscribe = ["2A37"]

[metrics]
enabled = false

[mqtt]
enabled = true
url = "mqtt://127.0.0.1:$mqtt_port"
gateway_id = "$gateway"
allow_commands = ["read", "reconnect"]

[cluster]
enabled = true

$pins
TOML
    "$build_dir/wearfleetd" --config "$dir/wearfleetd.toml" --state-dir "$dir/state" --bus "$bus" --log-format console \
        >> "$dir/wearfleetd.log" 2>&1 &
    # The daemon first: cleanup stops it before its bluetoothd.
    gateway_pids[$gateway]="$! $sim_pid $bus_pid"
    echo "$bus" > "$dir/bus"
}

# Power lost: the gateway's processes end at once, links and all.
kill_gateway() {
    for pid in ${gateway_pids[$1]}; do kill -KILL "$pid" 2>/dev/null || true; done
    gateway_pids[$1]=""
}

for gateway in "${gateways[@]}"; do start_gateway "$gateway"; done
start_ns=$(date +%s%N)
kill_at=${DEMO_KILL_AT:-45}
restart_at=${DEMO_RESTART_AT:-90}
killed=""
story="every gateway is up"

interactive=0
[[ -t 1 ]] && interactive=1
deadline=$((SECONDS + ${DEMO_SECONDS:-1000000000}))
while ((SECONDS < deadline)); do
    elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
    if [[ -z $killed ]] && ((elapsed_ms >= kill_at * 1000)); then
        # The gateway that owns the most straps (the retained claims name it).
        killed=$(python3 - "$run/ownership.log" <<'EOF'
import collections, json, sys
owners = {}
for line in open(sys.argv[1], errors="replace"):
    topic, _, payload = line.rstrip("\n").partition(" ")
    if topic.endswith("/owner"):
        try:
            owners[topic] = (json.loads(payload) or {}).get("gw") if payload else None
        except ValueError:
            pass
counts = collections.Counter(owner for owner in owners.values() if owner)
print(counts.most_common(1)[0][0] if counts else "gw1")
EOF
)
        kill_gateway "$killed"
        story="${killed} lost power at ${kill_at}s (its wearfleetd and bluetoothd SIGKILLed): its straps go to the others"
    elif [[ -n $killed && -z ${gateway_pids[$killed]} ]] && ((elapsed_ms >= restart_at * 1000)); then
        start_gateway "$killed"
        story="${killed} lost power at ${kill_at}s and came back at ${restart_at}s: the straps others hold stay (linked, they stop advertising, so it hears them no more)"
    fi
    for gateway in "${gateways[@]}"; do
        pids=(${gateway_pids[$gateway]})
        if ((${#pids[@]} > 0)) && ! kill -0 "${pids[0]}" 2>/dev/null; then
            echo "demo-multi: $gateway's wearfleetd exited:" >&2
            tail -20 "$run/$gateway/wearfleetd.log" >&2
            exit 1
        fi
    done
    view=$(python3 "$root/scripts/demo-multi-view.py" "$run" "$((elapsed_ms / 1000))" 2>&1 || true)
    if ((interactive)); then printf '\033[H\033[2J'; fi
    printf 'Wearfleet demo-multi: 3 gateways, 30 straps, one broker, %d.%ds after start. %s.\n' \
        $((elapsed_ms / 1000)) $((elapsed_ms % 1000 / 100)) "$story"
    printf "MQTT: mosquitto_sub -h 127.0.0.1 -p %s -v -t 'wearfleet/device/+/owner'    A gateway: wearfleetctl status --bus \$(cat %s/gw1/bus)\n\n" \
        "$mqtt_port" "${run#"$root"/}"
    printf '%s\n' "$view"
    if ((interactive)); then printf '\nCtrl-C stops the demo and everything it started.\n'; fi
    sleep 1
done
