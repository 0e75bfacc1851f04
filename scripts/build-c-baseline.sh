#!/usr/bin/env bash
# Builds the C baselines of the benchmarks: OUTDIR/dbus-floor (plain libdbus) and OUTDIR/fd-floor
# (plain epoll + recv on the simulator's notify sockets, tapped over libdbus) and OUTDIR/mqtt-floor
# (a plain libmosquitto publisher, and the subscriber that times values end to end).
# Optimised like the Swift side (release), so the comparison is of code, not of build modes.
set -euo pipefail
out=${1:?usage: build-c-baseline.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# shellcheck disable=SC2046  # pkg-config's flags must split into words
cc -O2 -Wall -Wextra -o "$out/dbus-floor" "$here/Benchmarks/c/dbus-floor.c" $(pkg-config --cflags --libs dbus-1)
cc -O2 -Wall -Wextra -o "$out/fd-floor" "$here/Benchmarks/c/fd-floor.c" $(pkg-config --cflags --libs dbus-1)
cc -O2 -Wall -Wextra -o "$out/mqtt-floor" "$here/Benchmarks/c/mqtt-floor.c" $(pkg-config --cflags --libs libmosquitto)
