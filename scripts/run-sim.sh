#!/usr/bin/env bash
# Starts a private dbus-daemon and bluez-sim on it (12 wearables unless arguments say otherwise),
# prints the bus address to use with busctl or DBUS_SYSTEM_BUS_ADDRESS, and stops both on exit.
set -euo pipefail
. "$(dirname "$0")/private-bus.sh"
build_dir=${1:-.build/debug}
shift || true
dir=$(mktemp -d "${TMPDIR:-/tmp}/bluez-sim.XXXXXX")
private_bus_config "$dir"
dbus-daemon --config-file="$dir/bus.conf" --nofork --print-address=1 > "$dir/address" &
bus_pid=$!
trap 'kill $bus_pid 2>/dev/null; rm -rf "$dir"' EXIT
until [[ -s $dir/address ]]; do sleep 0.05; done
address=$(head -1 "$dir/address")
echo "bus: $address"
echo "try: busctl --address='$address' tree org.bluez"
echo "     DBUS_SYSTEM_BUS_ADDRESS='$address' bluetoothctl"
if (($# == 0)); then set -- --devices 12; fi
"$build_dir/bluez-sim" --bus "$address" "$@"
