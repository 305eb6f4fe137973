#!/usr/bin/env bash
# Installs the dependencies, builds the release preset and runs the quickstart examples
# (C++, then Python).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install_deps.sh

JOBS="$(nproc)"
cmake --preset release
cmake --build --preset release --parallel "${JOBS}"

echo "=== running build/release/examples/quickstart"
./build/release/examples/quickstart

echo "=== running examples/quickstart.py"
PYTHONPATH=build/release/python /usr/bin/python3 examples/quickstart.py
