# Sourced by the scripts that start a private dbus-daemon (make sim, make demo,
# scripts/callgrind-ingest.sh).
# private_bus_config DIR: writes DIR/bus.conf, a bus on DIR/bus.socket where anyone may own any
# name (the simulated bluetoothd owns org.bluez there).
private_bus_config() {
    cat > "$1/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$1/bus.socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
}

# wait_for_line FILE PATTERN SECONDS [PID [COUNT]]: returns once FILE has COUNT (default 1) lines
# matching PATTERN. Gives up (exit 1, showing the end of FILE) after SECONDS, or as soon as PID,
# when given, is no longer running.
wait_for_line() {
    local deadline=$((SECONDS + $3))
    local matches
    # (No file yet: grep prints nothing, which counts as none.)
    until matches=$(grep -c -- "$2" "$1" 2>/dev/null || true); ((${matches:-0} >= ${5:-1})); do
        if ((SECONDS >= deadline)) || { [[ -n ${4:-} ]] && ! kill -0 "$4" 2>/dev/null; }; then
            echo "gave up waiting for '$2' in $1" >&2
            tail -20 "$1" >&2 || true
            exit 1
        fi
        sleep 0.1
    done
}
