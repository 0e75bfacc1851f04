#!/usr/bin/env bash
# Installs the Debian packages Wearfleet needs to build and test, only when missing.
# Runs apt-get directly as root, through sudo otherwise. Never prompts (CI has no stdin).
set -euo pipefail

packages=(
    libdbus-1-dev   # CDBus
    libsystemd-dev  # CSystemd
    libmosquitto-dev  # CMosquitto
    mosquitto       # a private broker for the MQTT tests (never the system service)
    mosquitto-clients  # mosquitto_sub/mosquitto_pub: interoperability peers in the MQTT tests
    openssl         # the MQTT TLS test makes its CA and certificates at run time
    pkg-config      # SwiftPM finds both through it
    dbus-daemon     # private buses in tests, demo and benchmarks
    dbus-bin        # dbus-send: an interoperability peer in tests
    systemd         # busctl: an interoperability peer in tests
    libglib2.0-bin  # gdbus: an interoperability peer in tests
    gcc             # the C baseline of the benchmarks
    python3-venv    # the fidelity tests' pinned bleak environment (.build-venv)
    jq              # the system test reads journalctl -o json and busctl --json
    util-linux      # the system test's sandbox: unshare, nsenter, setpriv
    qemu-system-x86 # the real-stack tier: a guest running Linux's Bluetooth core
    linux-image-amd64  # the guest's kernel (with the bluetooth and hci_vhci modules)
    busybox-static  # the guest's initramfs
    bluez           # the guest's bluetoothd 5.66 (Debian's), bluetoothctl and btmon
    kmod            # modprobe in the guest
    procps          # pgrep in the guest's scenarios
)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
    as_root=()
elif command -v sudo >/dev/null; then
    as_root=(sudo -n)
else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
