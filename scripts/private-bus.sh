# Sourced by the scripts that start a private dbus-daemon or broker (make sim, make demo,
# make demo-multi, scripts/callgrind-ingest.sh).
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

# start_private_broker DIR: starts a mosquitto of the caller's own (never the system's service)
# on a loopback port nothing uses, its log in DIR/mosquitto.log; sets mqtt_port and broker_pid.
# The caller records broker_pid for its cleanup, then waits for it:
#   wait_for_line DIR/mosquitto.log ' running' 10
start_private_broker() {
    mqtt_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat > "$1/mosquitto.conf" <<CONF
listener $mqtt_port 127.0.0.1
allow_anonymous true
persistence false
log_dest stderr
CONF
    # (Its log on stderr, which is unbuffered: redirected stdout holds it until exit.)
    mosquitto -c "$1/mosquitto.conf" 2> "$1/mosquitto.log" &
    broker_pid=$!
}
