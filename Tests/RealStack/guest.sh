#!/bin/bash
# Stage 2 of the real-stack tier, run in the guest as its first process after switch_root
# (initramfs-init): a fresh system bus, Linux's Bluetooth core with the virtual-HCI driver, then
# the scenario driver (scenarios.py), which starts bluetoothd, the radios and wearfleetd itself.
# Everything writable lives on tmpfs; what the host needs is copied to the results share at the
# end (a guest logging straight to 9p falls behind by tens of seconds).
set -uo pipefail
results=/realstack-results
# job.env holds KEY=VALUE lines; read, not sourced, so a path with spaces or '$' is data.
while IFS= read -r line; do
    [[ $line == *=* ]] && printf -v "${line%%=*}" '%s' "${line#*=}"
done < "$results/job.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
stage() { echo "$1" > "$results/stage"; echo "guest: $1" > /dev/console; }

# Fresh and empty where state lives: the host's /run (its bus socket), /var/lib/bluetooth (its
# bonds, if any) and logs must not leak into the guest. /tmp stays the overlay's, on tmpfs
# already: the repository under test may itself be under the host's /tmp.
for dir in /run /var/lib/bluetooth /var/log /dev/shm; do
    mkdir -p "$dir" && mount -t tmpfs -o mode=0755 tmpfs "$dir"
done
chmod 1777 /dev/shm
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
ln -sf /proc/self/fd /dev/fd
hostname realstack-guest
ip link set lo up 2>/dev/null || busybox ip link set lo up

stage booted
# The system bus as Debian configures it (system.conf, bluez's bluetooth.conf, Debian's
# org.bluez activation file), plus the daemon's own policy file as a package installs it.
install -D -m 0644 "$REPO/systemd/org.wearfleet.Daemon.conf" /usr/share/dbus-1/system.d/org.wearfleet.Daemon.conf
# Debian's org.bluez.service asks systemd to start bluetooth.service; there is no systemd here,
# so its Exec= (/bin/false) would make an auto-start fail quietly. Pointing Exec= at bluetoothd
# itself does what systemd would: a call that auto-starts org.bluez starts a bluetoothd, which
# the "stopped" scenario would see.
sed -i 's#^Exec=.*#Exec=/usr/libexec/bluetooth/bluetoothd -n#' /usr/share/dbus-1/system-services/org.bluez.service
mkdir -p /run/dbus
dbus-daemon --system --fork --nopidfile || { stage dbus-failed; exit 1; }

stage modules
modprobe bluetooth && modprobe hci_vhci || { stage modules-failed; exit 1; }

stage driver
mkdir -p /run/realstack
# BTMON=1 in job.env: an HCI trace of every adapter, as text (btmon 5.66 crashes reading back
# the binary traces of these runs), for a developer chasing a behaviour; it costs CPU.
if [[ ${BTMON:-0} == 1 ]]; then
    btmon -T > /run/realstack/hci-trace.txt 2>&1 &
fi
"$VENV/bin/python" "$REPO/Tests/RealStack/scenarios.py" --work /run/realstack --results "$results" \
    > /run/realstack/driver.log 2>&1
status=$?
echo "$status" > /run/realstack/driver-status
cp -r /run/realstack/. "$results/" 2>/dev/null
dmesg > "$results/dmesg.log" 2>/dev/null
stage "finished $status"
sync
