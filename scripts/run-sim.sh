#!/usr/bin/env bash
# Starts a private dbus-daemon and bluez-sim on it (12 wearables unless arguments say otherwise),
# prints the bus address to use with busctl or DBUS_SYSTEM_BUS_ADDRESS, and stops both on exit.
set -euo pipefail
build_dir=${1:-.build/debug}
shift || true
dir=$(mktemp -d "${TMPDIR:-/tmp}/bluez-sim.XXXXXX")
cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus.socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
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
