#!/usr/bin/env bash
# Builds the plain-libdbus baseline of the D-Bus benchmark: OUTDIR/dbus-floor.
# Optimised like the Swift side (release), so the comparison is of code, not of build modes.
set -euo pipefail
out=${1:?usage: build-c-baseline.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# shellcheck disable=SC2046  # pkg-config's flags must split into words
cc -O2 -Wall -Wextra -o "$out/dbus-floor" "$here/Benchmarks/c/dbus-floor.c" $(pkg-config --cflags --libs dbus-1)
