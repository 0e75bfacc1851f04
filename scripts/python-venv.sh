#!/usr/bin/env bash
# Creates a virtual environment with pinned Python packages when it is missing or its pins
# changed. Uses python3 from PATH.
#   python-venv.sh [VENV REQUIREMENTS]
# Without arguments: .build-venv with the packages the fidelity tests drive the simulator with
# (bleak, a real BlueZ client), from Tests/Fidelity/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${1:-.build-venv}
requirements=${2:-Tests/Fidelity/requirements.txt}
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
