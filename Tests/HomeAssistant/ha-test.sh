#!/usr/bin/env bash
# The Home Assistant tier: a real Home Assistant Core (headless, pinned in requirements.txt) on a
# private mosquitto, with wearfleetd and bluez-sim (four heart-rate straps, scenario.json) on a
# private D-Bus bus; asserts through Home Assistant's REST and websocket APIs what a user of the
# MQTT integration would see (ha_test.py has the run and every check).
#
#   Tests/HomeAssistant/ha-test.sh [debug|release]    (run by `make home-assistant-test`)
#
# Creates .build-ha-venv at the repo root (pip, from PyPI) unless it exists with the same
# requirements (stamp: their sha256). Everything else stays under .build/home-assistant/:
# results.json (figures + checks), home-assistant.log (every Home Assistant run of the test, in
# order), wearfleetd.log (JSON lines), mqtt.log (every message the broker carried), ha-config/.
# Exit 0 passed, 1 failed, 77 skipped (only where it cannot run: no mosquitto, dbus-daemon or a
# Python Home Assistant 2024.3 supports).
# Environment: HA_TEST_TIMEOUT (seconds, default 360; a run takes ~2½ min) bounds the run
# after the venv exists; timeout(1) stops it 90 s later should it overrun anyway.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
config=${1:-debug}
[[ $config == debug || $config == release ]] || { echo "usage: $0 [debug|release]" >&2; exit 2; }
here=$repo/Tests/HomeAssistant
build_dir=$repo/.build/$config
venv=$repo/.build-ha-venv
requirements=$here/requirements.txt
stamp=$venv/.requirements.sha256
work=$repo/.build/home-assistant

skip() {
    echo "SKIP: home-assistant tier: $*"
    mkdir -p "$work"
    echo skipped > "$work/result"
    exit 77
}

for binary in wearfleetd bluez-sim wearfleetctl; do
    [[ -x $build_dir/$binary ]] || { echo "ha-test: $build_dir/$binary is missing (make build)" >&2; exit 1; }
done
for tool in mosquitto dbus-daemon busctl ss; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (make deps)"
done
python3 -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 12) else 1)' 2>/dev/null \
    || skip "Home Assistant 2024.3 needs Python 3.11 or 3.12 (python3 is $(python3 -V 2>&1))"
python3 -m venv --help >/dev/null 2>&1 || skip "python3 cannot create virtual environments (apt-get install python3-venv)"

hash=$(sha256sum "$requirements" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || $(cat "$stamp" 2>/dev/null) != "$hash" ]]; then
    echo "ha-test: creating $(basename "$venv") from Tests/HomeAssistant/requirements.txt (pip, a few minutes)"
    started=$SECONDS
    rm -rf "$venv"
    python3 -m venv "$venv"
    if ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"; then
        echo "ha-test: pip install failed; $(basename "$venv") is left without its stamp and is made again next time" >&2
        exit 1
    fi
    echo "$hash" > "$stamp"
    echo "ha-test: venv ready in $((SECONDS - started)) s"
fi

mkdir -p "$work"
rm -f "$work/result"
status=0
# The script bounds itself (HA_TEST_TIMEOUT); timeout(1) is the backstop should it hang anyway.
limit=${HA_TEST_TIMEOUT:-360}
timeout --kill-after=20 $((limit + 90)) \
    "$venv/bin/python" "$here/ha_test.py" --build-dir "$build_dir" --work "$work" --timeout "$limit" || status=$?
case $status in
    0) echo passed > "$work/result" ;;
    77) echo skipped > "$work/result" ;;
    124 | 137) echo "ha-test: the run overran its bound and was killed (results in ${work#"$repo"/})" >&2
        echo failed > "$work/result"; status=1 ;;
    *) echo failed > "$work/result"; status=1 ;;
esac
exit $status
