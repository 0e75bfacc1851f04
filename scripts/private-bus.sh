# Sourced by the scripts that start a private dbus-daemon (make sim, make demo).
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
