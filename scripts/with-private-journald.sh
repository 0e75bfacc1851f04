#!/bin/sh
# Runs a command next to a journald of its own, so tests that send through sd_journal_sendv
# (whose socket path, /run/systemd/journal/socket, is fixed) can read their entries back with
# journalctl without touching the machine's /run or journal. Needs root (a private mount
# namespace with a tmpfs on /run).
#
#   sudo scripts/with-private-journald.sh swift test --skip-build --filter JournaldLogHandlerTests
set -eu
if [ "${WEARFLEET_IN_PRIVATE_RUN:-}" != 1 ]; then
    WEARFLEET_IN_PRIVATE_RUN=1 exec unshare --mount "$0" "$@"
fi
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/journal /run/log/journal
/lib/systemd/systemd-journald &
journald=$!
trap 'kill $journald 2>/dev/null || true' EXIT
# journald creates its socket after start-up; wait for it (bounded).
tries=0
until [ -S /run/systemd/journal/socket ]; do
    tries=$((tries + 1))
    if [ $tries -gt 100 ]; then echo "journald did not start" >&2; exit 1; fi
    sleep 0.05
done
"$@"
