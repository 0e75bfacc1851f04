#!/usr/bin/env bash
# Creates .build-venv with the pinned Python packages the fidelity tests drive the simulator with
# (bleak, a real BlueZ client), when it is missing or its pins changed. Uses python3 from PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.build-venv
requirements=Tests/Fidelity/requirements.txt
stamp=$venv/.requirements

if [[ -x $venv/bin/python ]] && cmp -s "$requirements" "$stamp"; then
    exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "python-venv: python3 cannot create virtual environments (Debian: apt-get install python3-venv)" >&2
    exit 1
fi
echo "python-venv: creating $venv from $requirements"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
