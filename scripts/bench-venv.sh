#!/usr/bin/env bash
# Creates .build-bench-venv with fleet-bench's pinned Python packages (bleak with
# bleak-retry-connector, matplotlib for the plot) when it is missing or its pins changed.
# Separate from the fidelity tests' .build-venv, so neither set of pins constrains the other.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.build-bench-venv
requirements=Benchmarks/python/requirements.txt
stamp=$venv/.requirements

if [[ -x $venv/bin/python ]] && cmp -s "$requirements" "$stamp"; then
    exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "bench-venv: python3 cannot create virtual environments (Debian: apt-get install python3-venv)" >&2
    exit 1
fi
echo "bench-venv: creating $venv from $requirements"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
