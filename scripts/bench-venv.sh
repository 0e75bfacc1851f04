#!/usr/bin/env bash
# Creates .build-bench-venv with fleet-bench's pinned Python packages (bleak with
# bleak-retry-connector, matplotlib for the plot) when it is missing or its pins changed.
# Separate from the fidelity tests' .build-venv, so neither set of pins constrains the other.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/python-venv.sh" .build-bench-venv Benchmarks/python/requirements.txt
