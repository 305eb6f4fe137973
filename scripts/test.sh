#!/usr/bin/env bash
# Installs the dependencies (Open MPI included, for tenferro::mpi and its mpirun tests),
# builds the release preset and runs the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install_deps.sh --mpi

JOBS="$(nproc)"
cmake --preset release
cmake --build --preset release --parallel "${JOBS}"
ctest --preset release --parallel "${JOBS}" --output-on-failure --timeout 600
