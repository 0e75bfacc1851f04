#!/usr/bin/env bash
# System test: wearfleetd as a systemd service, under a real systemd booted as PID 1 in fresh
# namespaces (scripts/systemd-sandbox.sh), with journald, a system bus and bluez-sim owning
# org.bluez on that bus.
#
#   Tests/System/service-test.sh [debug|release]   (root; run by `make system-test` and `make test`)
#
# It checks a package install (`make install-files DESTDIR=…`), boots, starts bluez-sim as the
# gateway's bluetoothd, then follows the README's install on the running system: `make
# install-files INSTALL_CONFIG=debug` (the debug binaries `make build` made; they load the Swift
# runtime from the toolchain, which the sandbox sees where this machine has it; `release` installs
# what `make install-build` made, Swift runtime linked in), daemon-reload, the configuration,
# --check-config, `systemctl enable --now`. Then it reloads, uses wearfleetctl as a member of
# group wearfleet, kills, stops and restarts the service, and checks each step through systemctl,
# journalctl, the state file and bluez-sim's control interface. Every wait has a deadline. On a
# failure it prints the sandbox's `systemctl status` and journal. The sandbox is always torn down.
# Only a machine that cannot make the namespaces (not root, no unshare) skips, and says so.
#
# Artefacts in .build/system-test/: test.log, security.txt (systemd-analyze security),
# journal-sample.json (one device's journal entries), result (passed|skipped).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
install_config=${1:-debug}
[[ $install_config == debug || $install_config == release ]] || { echo "usage: $0 [debug|release]" >&2; exit 2; }
# bluez-sim is a test tool: always the debug build's.
sim_build_dir=$repo/.build/debug
here=$repo/Tests/System
sandbox_tool=$repo/scripts/systemd-sandbox.sh
work=$repo/.build/system-test
stage=$work/stage
sandbox=$work/sandbox

STRAP_1=C4:7A:20:00:00:01
STRAP_2=C4:7A:20:00:00:02
STRAP_3=C4:7A:20:00:00:03
STATE_FILE=/var/lib/wearfleet/known-devices.json
SIM=/usr/local/libexec/wearfleet-test/bluez-sim

mkdir -p "$work"
rm -f "$work/result"
exec > >(tee "$work/test.log") 2>&1

# MARK: - Steps, waits, failure reports

step_number=0
step_started=0
current_step=''

step() {
    step_number=$((step_number + 1))
    current_step=$1
    step_started=$(date +%s%N)
    echo "system-test: [$step_number] $current_step"
}

ok() {
    local elapsed_ms=$((($(date +%s%N) - step_started) / 1000000))
    echo "system-test: [$step_number] ok${1:+: $1} ($((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s)"
}

# A step that waits on a part of the project that is not in this tree yet: said, and counted apart.
steps_not_run=0
not_run() {
    steps_not_run=$((steps_not_run + 1))
    echo "system-test: [$step_number] NOT RUN: $*"
}

fail() {
    echo "system-test: [$step_number] FAILED: $current_step: $*" >&2
    diagnostics >&2
    exit 1
}

# Runs a command inside the sandbox.
sb() { "$sandbox_tool" run "$sandbox" "$@"; }

diagnostics() {
    [[ -s $sandbox/pid ]] || return 0
    echo "----- systemctl status (sandbox) -----"
    sb systemctl status --no-pager --full wearfleetd.service bluez-sim.service 2>&1 || true
    echo "----- journalctl -u wearfleetd -u bluez-sim -u dbus (sandbox, last 300) -----"
    sb journalctl --no-pager -n 300 -u wearfleetd.service -u bluez-sim.service -u dbus.service 2>&1 || true
    echo "----- journalctl -p warning (sandbox) -----"
    sb journalctl --no-pager -p warning -n 50 2>&1 || true
    echo "----- end of sandbox diagnostics -----"
}

teardown() {
    local status=$?
    "$sandbox_tool" stop "$sandbox" || status=1
    rm -rf "$stage" "$work/destdir"
    exit $status
}

# wait_for SECONDS WHAT CMD...: runs CMD until it succeeds, at most SECONDS; fails the step after.
wait_for() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$(($(date +%s%N) + seconds * 1000000000))
    until "$@" > /dev/null 2>&1; do
        (($(date +%s%N) < deadline)) || fail "$what: not within ${seconds}s"
        sleep 0.1
    done
}

# MARK: - What the checks read

status_text() { sb systemctl show --property=StatusText --value wearfleetd.service; }
status_is() { [[ $(status_text) == "$1"* ]]; }

# The journal entries of wearfleetd matching FIELD=VALUE arguments, as JSON lines.
journal() { sb journalctl --no-pager -o json -u wearfleetd.service "$@"; }

journal_has() { [[ -n $(journal "$@") ]]; }

# A point in time, in the journal's microseconds. (journalctl --after-cursor together with field
# matches returns nothing when the cursor's own entry does not match, so entries are selected by
# their __REALTIME_TIMESTAMP instead.)
journal_mark() { date +%s%6N; }

# journal_since MARK FIELD=VALUE...: the matching entries logged after MARK.
journal_since() {
    local mark=$1
    shift
    journal "$@" | jq -c --arg mark "$mark" 'select((.__REALTIME_TIMESTAMP | tonumber) > ($mark | tonumber))'
}

journal_since_has() { [[ -n $(journal_since "$@") ]]; }

# The newest SESSION_ID of a device's entries that reached ready.
ready_session() { journal DEVICE_ADDRESS="$1" DEVICE_STATE=ready | jq -r '.SESSION_ID' | tail -1; }

sim_call() {
    sb busctl --system --json=short call org.wearfleet.Simulator /org/wearfleet/simulator \
        org.wearfleet.Simulator1 "$@"
}

# "true" or "false": whether bluez-sim says the device's link is up (nothing when it cannot say).
sim_link() { sim_call GetDevices | jq -r --arg a "$1" '.data[0][$a].Connected.data | booleans'; }
sim_connected() { [[ $(sim_link "$1") == true ]]; }
sim_disconnected() { [[ $(sim_link "$1") == false ]]; }

# A per-device counter of bluez-sim (ConnectAttempts, LinkDrops, …); 0 when absent.
sim_counter() { sim_call GetCounters | jq -r --arg c "$1" --arg a "$2" '.data[0][$c].data[$a] // 0'; }

service_state() { sb systemctl show --property=ActiveState --property=SubState --value wearfleetd.service | paste -sd/; }

# MARK: - Preconditions

if ! reason=$("$sandbox_tool" check); then
    echo "SKIP: system test: this machine cannot boot a systemd sandbox ($reason)"
    echo skipped > "$work/result"
    exit 0
fi
for tool in jq busctl; do
    command -v "$tool" > /dev/null || { echo "system-test: $tool is missing (make deps installs it)" >&2; exit 1; }
done
[[ -x $repo/.build/$install_config/wearfleetd ]] \
    || { echo "system-test: .build/$install_config/wearfleetd is missing (make build, or make install-build)" >&2; exit 1; }
[[ -x $sim_build_dir/bluez-sim ]] || { echo "system-test: $sim_build_dir/bluez-sim is missing (make build)" >&2; exit 1; }

trap teardown EXIT
"$sandbox_tool" stop "$sandbox" 2> /dev/null || true  # a sandbox a killed run left behind
rm -rf "$stage" "$sandbox"
mkdir -p "$stage" "$sandbox"

# MARK: - Install (package layout)

# A package build (DESTDIR) first: what lands where, and that installing again keeps an operator's
# configuration. This tree is only inspected; the sandbox gets its files from the README's steps.
destdir=$work/destdir
rm -rf "$destdir"
step "make install-files INSTALL_CONFIG=$install_config DESTDIR=<destdir> (PREFIX=/usr/local, the default)"
make -s -C "$repo" install-files "INSTALL_CONFIG=$install_config" "DESTDIR=$destdir" > "$work/install.log" 2>&1 \
    || { cat "$work/install.log"; fail "make install-files failed"; }
unit=$destdir/usr/local/lib/systemd/system/wearfleetd.service
for file in usr/local/bin/wearfleetd usr/local/lib/systemd/system/wearfleetd.service \
    etc/dbus-1/system.d/org.wearfleet.Daemon.conf usr/local/lib/sysusers.d/wearfleet.conf \
    etc/wearfleet/wearfleetd.toml etc/wearfleet/wearfleetd.d; do
    [[ -e $destdir/$file ]] || fail "make install did not install /$file"
done
# ExecStart= and ExecReload='s check name the same binary and the same configuration file.
grep -qx 'Environment=WEARFLEET_CONFIG=/etc/wearfleet/wearfleetd.toml' "$unit" || fail "the unit does not name its configuration"
grep -qx 'ExecStart=/usr/local/bin/wearfleetd --config ${WEARFLEET_CONFIG}' "$unit" \
    || fail "ExecStart= does not run /usr/local/bin/wearfleetd on \${WEARFLEET_CONFIG}"
grep -qx 'ExecReload=/usr/local/bin/wearfleetd --check-config --config ${WEARFLEET_CONFIG}' "$unit" \
    || fail "ExecReload= does not check \${WEARFLEET_CONFIG} with /usr/local/bin/wearfleetd"
# Installing again keeps an operator's configuration.
echo "# edited by the operator" >> "$destdir/etc/wearfleet/wearfleetd.toml"
make -s -C "$repo" install-files "INSTALL_CONFIG=$install_config" "DESTDIR=$destdir" > "$work/install.log" 2>&1 \
    || { cat "$work/install.log"; fail "make install-files (again) failed"; }
grep -q '^# edited by the operator' "$destdir/etc/wearfleet/wearfleetd.toml" || fail "a second install overwrote the configuration"
ok

step "systemd-analyze security --offline=true: exposure at most 2.0"
systemd-analyze security --offline=true --no-pager "$unit" > "$work/security.txt" 2>&1 || true
exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$work/security.txt")
[[ -n $exposure ]] || { cat "$work/security.txt"; fail "no exposure level in systemd-analyze's output"; }
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || { cat "$work/security.txt"; fail "exposure $exposure > 2.0"; }
ok "exposure $exposure"

# The test's own pieces, in place before the boot: bluez-sim (a developer tool, not installed by
# make install), its scenario, the bus policy that lets root own org.bluez inside the sandbox, the
# test's configuration (installed by the "edit the configuration" step) and a shorter watchdog.
# Debian's bluetoothd, where the package is installed, is masked inside: bluez-sim is the sandbox's
# bluetoothd, and the unit's Wants=bluetooth.service must not start the real one beside it.
install -D -m 0755 "$sim_build_dir/bluez-sim" "$stage$SIM"
install -D -m 0644 "$here/ward.json" "$stage/usr/local/share/wearfleet-test/ward.json"
install -D -m 0644 "$here/bluez-sim.conf" "$stage/etc/dbus-1/system.d/wearfleet-test-bluez-sim.conf"
install -D -m 0644 "$here/wearfleetd.toml" "$stage/usr/local/share/wearfleet-test/wearfleetd.toml"
install -D -m 0644 "$here/watchdog.conf" "$stage/etc/systemd/system/wearfleetd.service.d/50-test-watchdog.conf"
ln -s /dev/null "$stage/etc/systemd/system/bluetooth.service"
# The checkout the README's `make install-files` runs in, inside the sandbox: what that target
# reads (this tree may be on a file system the sandbox's overlay of / does not show).
checkout=/usr/local/src/wearfleet
mkdir -p "$stage$checkout/.build/$install_config"
cp -a "$repo/Makefile" "$repo/Package.swift" "$repo/systemd" "$repo/config" "$stage$checkout/"
for program in wearfleetd wearfleetctl; do
    [[ ! -e $repo/.build/$install_config/$program ]] || cp -a "$repo/.build/$install_config/$program" "$stage$checkout/.build/$install_config/"
done
# The README's install is tried as on a machine that never had wearfleetd: on one that has (a
# gateway running it), the sandbox gets account files without its users.
if grep -qE '^(wearfleet|wearfleet-admin|wf-operator|wf-outsider|wf-admin):' /etc/passwd /etc/group; then
    mkdir -p "$stage/etc"
    for file in passwd group shadow gshadow; do
        [[ -e /etc/$file ]] || continue
        cp -a "/etc/$file" "$stage/etc/$file"
        # Their own lines go, and so does their membership in other groups (last field of group
        # and gshadow lines).
        awk -F: -v OFS=: -v file="$file" '
            $1 ~ /^(wearfleet|wearfleet-admin|wf-operator|wf-outsider|wf-admin)$/ { next }
            file == "group" || file == "gshadow" {
                n = split($NF, members, ","); kept = ""
                for (i = 1; i <= n; i++) if (members[i] !~ /^(wearfleet|wearfleet-admin|wf-operator|wf-outsider|wf-admin)$/) kept = kept (kept == "" ? "" : ",") members[i]
                $NF = kept
            }
            { print }' "/etc/$file" > "$stage/etc/$file"
    done
fi

# MARK: - Boot

step "boot systemd as PID 1 in fresh namespaces"
"$sandbox_tool" boot "$sandbox" "$stage" || fail "the sandbox did not boot"
ok "$(sb systemctl --version | sed -n 1p)"

step "bluez-sim owns org.bluez on the system bus (a gateway's bluetoothd, running before the install)"
sb systemd-run --unit=bluez-sim --property=Type=exec \
    "$SIM" --bus unix:path=/run/dbus/system_bus_socket --scenario /usr/local/share/wearfleet-test/ward.json \
    > /dev/null || fail "systemd-run bluez-sim failed"
wait_for 20 "org.bluez and org.wearfleet.Simulator on the system bus" \
    sim_call GetDevices
ok "$(sim_call GetDevices | jq -r '.data[0] | keys | join(" ")')"

# MARK: - The README's install, on the booted system

step "README: sudo make install-files (INSTALL_CONFIG=$install_config), on the running system"
[[ -z $(sb getent passwd wearfleet) ]] || fail "user wearfleet exists before the install"
sb make -s -C "$checkout" install-files "INSTALL_CONFIG=$install_config" > "$work/install-running.log" 2>&1 \
    || { cat "$work/install-running.log"; fail "make install-files on the running system failed"; }
grep -q 'dbus-daemon re-read its policies' "$work/install-running.log" \
    || { cat "$work/install-running.log"; fail "make install-files did not have dbus-daemon re-read its policies"; }
groups=$(sb id -nG wearfleet) || fail "make install-files did not create user wearfleet"
[[ " $groups " == *" wearfleet "* && " $groups " == *" bluetooth "* ]] || fail "wearfleet is in groups: $groups"
ok "user wearfleet in $groups"

step "README: systemctl daemon-reload, edit the configuration, wearfleetd --check-config"
sb systemctl daemon-reload || fail "systemctl daemon-reload failed"
sb install -m 0644 /usr/local/share/wearfleet-test/wearfleetd.toml /etc/wearfleet/wearfleetd.toml
check_output=$(sb wearfleetd --check-config 2>&1) || fail "wearfleetd --check-config: $check_output"
ok

step "systemd-analyze verify wearfleetd.service (inside, as installed)"
verify_output=$(sb systemd-analyze verify /usr/local/lib/systemd/system/wearfleetd.service 2>&1) \
    || { echo "$verify_output"; fail "systemd-analyze verify failed"; }
[[ -z $verify_output ]] || { echo "$verify_output"; fail "systemd-analyze verify printed warnings"; }
ok

# MARK: - Start

step "README: systemctl enable --now wearfleetd: active, READY, 2/2 pinned ready"
sb systemctl enable --now wearfleetd.service || fail "systemctl enable --now failed"
[[ $(service_state) == active/running ]] || fail "state after start: $(service_state)"
wait_for 30 "StatusText '2/2 pinned ready'" status_is "2/2 pinned ready"
ok "$(status_text)"

step "the unit as systemd loaded it: After=/Wants=bluetooth.service (masked here), watchdog, user"
deps=$(sb systemctl show --property=After --property=Wants --value wearfleetd.service | tr '\n' ' ')
[[ $deps == *bluetooth.service* ]] || fail "After=/Wants= lack bluetooth.service: $deps"
bluetooth_state=$(sb systemctl show --property=LoadState --property=ActiveState --value bluetooth.service | paste -sd/)
[[ $bluetooth_state == masked/inactive ]] || fail "bluetooth.service in the sandbox is $bluetooth_state, not masked/inactive"
grep -qx 'WatchdogSec=30s' "$unit" || fail "the installed unit does not say WatchdogSec=30s"
[[ $(sb systemctl show --property=WatchdogUSec --value wearfleetd.service) == 5s ]] \
    || fail "WatchdogUSec is not the test drop-in's 5s"
main_pid=$(sb systemctl show --property=MainPID --value wearfleetd.service)
# The configuration ExecStart= loaded (the daemon's own command line) is the one ExecReload= checks.
[[ $(sb systemctl show --property=Environment --value wearfleetd.service) == *WEARFLEET_CONFIG=/etc/wearfleet/wearfleetd.toml* ]] \
    || fail "the unit's environment lacks WEARFLEET_CONFIG=/etc/wearfleet/wearfleetd.toml"
[[ "$(sb cat "/proc/$main_pid/cmdline" | tr '\0' ' ')" == *"--config /etc/wearfleet/wearfleetd.toml "* ]] \
    || fail "the daemon was not started on /etc/wearfleet/wearfleetd.toml: $(sb cat "/proc/$main_pid/cmdline" | tr '\0' ' ')"
[[ $(sb systemctl show --property=ExecReload --value wearfleetd.service) == *'--check-config --config ${WEARFLEET_CONFIG} ;'* ]] \
    || fail "ExecReload= does not check \${WEARFLEET_CONFIG}: $(sb systemctl show --property=ExecReload --value wearfleetd.service)"
[[ $(sb ps -o user= -p "$main_pid") == wearfleet ]] || fail "the daemon does not run as wearfleet"
# The sandboxing is in force, not just written down: no capabilities, no new privileges, a seccomp
# filter, a user namespace that maps root and wearfleet only.
proc_status=$(sb cat "/proc/$main_pid/status")
for line in 'NoNewPrivs:.1' 'Seccomp:.2' 'CapEff:.0000000000000000' 'CapBnd:.0000000000000000'; do
    grep -q "^$line" <<< "$proc_status" || fail "/proc/$main_pid/status lacks $line"
done
# SupplementaryGroups=bluetooth holds inside the user namespace too (the bus sees the real gids).
bluetooth_gid=$(sb getent group bluetooth | cut -d: -f3)
[[ " $(sed -n 's/^Groups:\t*//p' <<< "$proc_status") " == *" $bluetooth_gid "* ]] \
    || fail "the daemon is not in group bluetooth ($bluetooth_gid): $(grep '^Groups' <<< "$proc_status")"
mapped=$(sb cat "/proc/$main_pid/uid_map" | wc -l)
[[ $mapped == 2 ]] || fail "the daemon's user namespace maps $mapped ranges, not 2 (PrivateUsers=)"
ok "main pid $main_pid runs as wearfleet, sandboxed"

step "journalctl -u wearfleetd -o json: DEVICE_ADDRESS entries reaching ready"
for address in $STRAP_1 $STRAP_2; do
    wait_for 10 "a ready entry for $address" journal_has DEVICE_ADDRESS="$address" DEVICE_STATE=ready
    sim_connected "$address" || fail "bluez-sim says $address is not connected"
done
session_1=$(ready_session $STRAP_1)
session_2=$(ready_session $STRAP_2)
ok "sessions $session_1, $session_2"

step "the watchdog is pinged (WatchdogSec=5s in a test drop-in; pings every 2.5 s)"
watchdog_at() { sb systemctl show --property=WatchdogTimestampMonotonic --value wearfleetd.service; }
first_ping=$(watchdog_at)
watchdog_moved() { [[ $(watchdog_at) != "$first_ping" ]]; }
wait_for 8 "a watchdog ping" watchdog_moved
ok

# MARK: - Reload

step "pin a third strap in a drop-in, systemctl reload: it connects, the others untouched"
attempts_1=$(sim_counter ConnectAttempts $STRAP_1)
attempts_2=$(sim_counter ConnectAttempts $STRAP_2)
mark=$(journal_mark)
sb tee /etc/wearfleet/wearfleetd.d/50-third-strap.toml < "$here/50-third-strap.toml" > /dev/null
sb systemctl reload wearfleetd.service || fail "systemctl reload failed"
wait_for 30 "StatusText '3/3 pinned ready' after the reload" status_is "3/3 pinned ready"
journal_since_has "$mark" EVENT=reloaded || fail "no EVENT=reloaded entry in the journal"
wait_for 10 "a ready entry for $STRAP_3" journal_has DEVICE_ADDRESS="$STRAP_3" DEVICE_STATE=ready
[[ $(service_state) == active/running ]] || fail "state after reload: $(service_state)"
[[ $(sb systemctl show --property=MainPID --value wearfleetd.service) == "$main_pid" ]] \
    || fail "the daemon was restarted, not reloaded"
for address in $STRAP_1 $STRAP_2; do
    changes=$(journal_since "$mark" DEVICE_ADDRESS="$address" | jq -r 'select(.DEVICE_STATE != null) | .DEVICE_STATE')
    [[ -z $changes ]] || fail "$address changed state during the reload: $changes"
    sim_connected "$address" || fail "$address lost its link during the reload"
    [[ $(sim_counter LinkDrops "$address") == 0 ]] || fail "$address had its link dropped"
done
[[ $(sim_counter ConnectAttempts $STRAP_1) == "$attempts_1" && $(sim_counter ConnectAttempts $STRAP_2) == "$attempts_2" ]] \
    || fail "the reload reconnected a strap that stayed pinned"
[[ $(ready_session $STRAP_1) == "$session_1" && $(ready_session $STRAP_2) == "$session_2" ]] || fail "a session changed"
ok "$(status_text)"

step "an invalid configuration: systemctl reload fails, the running one stays"
mark=$(journal_mark)
printf '[fleet]\nmax_connections = "many"\n' | sb tee /etc/wearfleet/wearfleetd.d/90-broken.toml > /dev/null
if sb systemctl reload wearfleetd.service 2> /dev/null; then fail "reload accepted an invalid configuration"; fi
[[ $(service_state) == active/running ]] || fail "state after a rejected reload: $(service_state)"
[[ $(sb systemctl show --property=MainPID --value wearfleetd.service) == "$main_pid" ]] || fail "the daemon restarted"
# ExecReload's --check-config names the file and line, in the unit's journal.
journal_since "$mark" | jq -r '.MESSAGE' | grep -q '90-broken.toml:2' \
    || fail "the journal does not say 90-broken.toml:2 is wrong"
sb rm /etc/wearfleet/wearfleetd.d/90-broken.toml
wait_for 10 "StatusText still '3/3 pinned ready'" status_is "3/3 pinned ready"
ok

# MARK: - Metrics

# Metrics are served once the package has them (FleetMetrics); from then on they must answer on
# loopback through the unit's IPAddressDeny=any / IPAddressAllow=localhost and address families.
scrape() {
    sb bash -c 'exec 3<> /dev/tcp/127.0.0.1/9468 && printf "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 && cat <&3'
}
step "metrics on 127.0.0.1:9468 through IPAddressAllow=localhost"
if grep -q '"FleetMetrics"' "$repo/Package.swift"; then
    wait_for 15 "an answer on 127.0.0.1:9468" scrape
    scraped=$(scrape)
    [[ $scraped == *"HTTP/1."*" 200"* && $scraped == *wearfleet* ]] || fail "no metrics in the answer: ${scraped:0:300}"
    ok "$(grep -c '^wearfleet' <<< "$scraped") samples"
else
    not_run "the package has no FleetMetrics target yet"
fi

# MARK: - wearfleetctl

# Runs once the package declares wearfleetctl (make install installs it from then on).
step "wearfleetctl status: root and group wearfleet may, others are denied"
if grep -q 'name: "wearfleetctl"' "$repo/Package.swift"; then
    users=$(sb systemd-sysusers --inline 'u wf-operator - "Operator"' 'm wf-operator wearfleet' \
        'u wf-outsider - "Outsider"' 2>&1) || fail "could not create the test users: $users"
    root_status=$(sb wearfleetctl status) || fail "wearfleetctl status (root) failed: $root_status"
    [[ $root_status == *$STRAP_3* ]] || fail "wearfleetctl status does not show $STRAP_3: $root_status"
    echo "$root_status"
    json=$(sb wearfleetctl status --json) || fail "wearfleetctl status --json failed"
    jq -e --arg a "$STRAP_3" '.pinnedReady == 3 and ([.devices[] | select(.address == $a) | .state] == ["ready"])' \
        <<< "$json" > /dev/null || fail "wearfleetctl status --json does not show $STRAP_3 ready among 3: $json"
    sb setpriv --reuid=wf-operator --regid=wf-operator --init-groups wearfleetctl status > /dev/null \
        || fail "wearfleetctl status as a member of group wearfleet failed"
    denied_status=0
    denied=$(sb setpriv --reuid=wf-outsider --regid=wf-outsider --init-groups wearfleetctl status 2>&1) || denied_status=$?
    [[ $denied_status == 77 ]] \
        || fail "wearfleetctl status outside group wearfleet: exit $denied_status, not 77 (EX_NOPERM): $denied"
    ok "outsider: exit 77, ${denied%%$'\n'*}"
else
    not_run "the package has no wearfleetctl yet"
fi

# MARK: - Crash

step "the daemon killed (SIGKILL): Restart=on-failure brings it back, devices ready again"
sb systemctl kill --signal=SIGKILL wearfleetd.service
restarted() { [[ $(sb systemctl show --property=NRestarts --value wearfleetd.service) == 1 && $(service_state) == active/running ]]; }
wait_for 30 "a restart after the kill (RestartSec=5s)" restarted
new_pid=$(sb systemctl show --property=MainPID --value wearfleetd.service)
[[ $new_pid != "$main_pid" ]] || fail "the main PID did not change"
wait_for 30 "StatusText '3/3 pinned ready' after the restart" status_is "3/3 pinned ready"
ok "main pid $main_pid → $new_pid, $(status_text)"

# MARK: - Stop and restore

step "systemctl stop: devices disconnected, state file written"
sb systemctl stop wearfleetd.service || fail "systemctl stop failed"
[[ $(service_state) == inactive/dead ]] || fail "state after stop: $(service_state)"
for address in $STRAP_1 $STRAP_2 $STRAP_3; do
    sim_disconnected "$address" || fail "$address is not disconnected after stop (bluez-sim: '$(sim_link "$address")')"
done
sb test -s $STATE_FILE || fail "no $STATE_FILE"
saved=$(sb cat $STATE_FILE | jq -r '[.devices[].address] | sort | join(" ")') || fail "$STATE_FILE is not JSON"
[[ $saved == "$STRAP_1 $STRAP_2 $STRAP_3" ]] || fail "$STATE_FILE holds: $saved"
owner=$(sb stat -c '%U %a' $STATE_FILE)
[[ $owner == "wearfleet 600" ]] || fail "$STATE_FILE is '$owner', not 'wearfleet 600'"
ok "$saved"

step "systemctl start again: 3 known devices loaded, all ready"
mark=$(journal_mark)
sb systemctl start wearfleetd.service || fail "systemctl start (again) failed"
loaded=$(journal_since "$mark" EVENT=state_loaded | jq -r '.KNOWN_DEVICES // .COUNT' | sed -n 1p)
[[ $loaded == 3 ]] || fail "the restarted daemon loaded '$loaded' known devices, not 3"
wait_for 30 "StatusText '3/3 pinned ready' after the restart" status_is "3/3 pinned ready"
for address in $STRAP_1 $STRAP_2 $STRAP_3; do
    wait_for 10 "a ready entry for $address after the restart" \
        journal_since_has "$mark" DEVICE_ADDRESS="$address" DEVICE_STATE=ready
done
ok "$(status_text)"

step "SESSION_ID never names sessions of two runs; value lines name the device fully"
# Three runs so far (start, the restart after SIGKILL, this start): each ready entry of a strap
# has a session id of its own, under its run.
sessions=$(journal DEVICE_ADDRESS=$STRAP_1 DEVICE_STATE=ready | jq -r '.SESSION_ID')
[[ $(wc -l <<< "$sessions") -ge 3 ]] || fail "fewer than 3 ready entries for $STRAP_1: $sessions"
[[ -z $(sort <<< "$sessions" | uniq -d) ]] || fail "a SESSION_ID of $STRAP_1 names two sessions: $(tr '\n' ' ' <<< "$sessions")"
[[ $(cut -d- -f1 <<< "$sessions" | sort -u | wc -l) -ge 3 ]] || fail "the sessions are not under 3 runs: $(tr '\n' ' ' <<< "$sessions")"
values=$(journal DEVICE_ADDRESS=$STRAP_1 EVENT=heart_rate_measurement)
[[ -n $values ]] || fail "no heart-rate value line for $STRAP_1"
jq -e -s 'all(.[]; .DEVICE_NAME == "strap-1" and (.ADAPTER | startswith("hci")) and (.SESSION_ID | test("^[0-9]+-[0-9]+$")))' \
    <<< "$values" > /dev/null || fail "a value line lacks the device's name, adapter or session: $values"
ok "$(tr '\n' ' ' <<< "$sessions")"

# MARK: - Commands (who may change the fleet)

STRAP_4=C4:7A:20:00:00:04
RUNTIME_PINS=/var/lib/wearfleet/runtime-pins.json

step "wearfleetctl pin: a reader and an outsider are denied (exit 77), group wearfleet-admin may"
users=$(sb systemd-sysusers --inline 'u wf-admin - "Administrator"' 'm wf-admin wearfleet-admin' 2>&1) \
    || fail "could not create the administrator: $users"
as_user() { local user=$1; shift; sb setpriv --reuid="$user" --regid="$user" --init-groups "$@"; }
for user in wf-operator wf-outsider; do
    denied_status=0
    denied=$(as_user "$user" wearfleetctl pin $STRAP_4 --class heart-rate 2>&1) || denied_status=$?
    [[ $denied_status == 77 ]] || fail "wearfleetctl pin as $user: exit $denied_status, not 77 (EX_NOPERM): $denied"
    echo "$user: exit 77, $denied"
done
sb test ! -e $RUNTIME_PINS || fail "a denied pin left $RUNTIME_PINS"
pinned=$(as_user wf-admin wearfleetctl pin $STRAP_4 --class heart-rate --name strap-4 2>&1) \
    || fail "wearfleetctl pin as a member of wearfleet-admin failed: $pinned"
echo "wf-admin: exit 0, $pinned"
wait_for 30 "StatusText '4/4 pinned ready' after the runtime pin" status_is "4/4 pinned ready"
sb jq -e --arg a "$STRAP_4" '.format == "wearfleet-runtime-pins" and ([.pins[].device] == [$a])' $RUNTIME_PINS > /dev/null \
    || fail "$RUNTIME_PINS does not hold $STRAP_4: $(sb cat $RUNTIME_PINS)"
ok "$(status_text)"

step "wearfleetctl unpin: a file's pin is refused with its file:line, a runtime pin is undone"
refused_status=0
refused=$(as_user wf-admin wearfleetctl unpin $STRAP_1 2>&1) || refused_status=$?
[[ $refused_status == 1 && $refused == *"/etc/wearfleet/wearfleetd.toml:"* ]] \
    || fail "unpin of a pin of the file: exit $refused_status: $refused"
echo "$refused"
unpinned=$(as_user wf-admin wearfleetctl unpin $STRAP_4 2>&1) || fail "wearfleetctl unpin as wf-admin failed: $unpinned"
wait_for 30 "StatusText '3/3 pinned ready' after the unpin" status_is "3/3 pinned ready"
sb jq -e '.pins == []' $RUNTIME_PINS > /dev/null || fail "$RUNTIME_PINS still holds a pin: $(sb cat $RUNTIME_PINS)"
ok "$unpinned"

step "journal sample for $STRAP_1 (journal-sample.json)"
journal DEVICE_ADDRESS=$STRAP_1 > "$work/journal-sample.json"
jq -c '{MESSAGE, PRIORITY, DEVICE_ADDRESS, DEVICE_NAME, ADAPTER, SESSION_ID, DEVICE_STATE, EVENT, _PID}' \
    "$work/journal-sample.json"
ok "$(wc -l < "$work/journal-sample.json") entries"

step "systemctl stop (final)"
sb systemctl stop wearfleetd.service bluez-sim.service || fail "systemctl stop failed"
ok

echo passed > "$work/result"
echo "system-test: $((step_number - steps_not_run)) steps passed, $steps_not_run not run (exposure $exposure)"
