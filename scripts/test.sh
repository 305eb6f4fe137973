#!/usr/bin/env bash
# Installs the dependencies, builds the release preset and runs the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install_deps.sh

JOBS="$(nproc)"
cmake --preset release
cmake --build --preset release --parallel "${JOBS}"
ctest --preset release --parallel "${JOBS}" --output-on-failure --timeout 600
