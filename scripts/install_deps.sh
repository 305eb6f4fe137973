#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build, test and benchmark tenferro.
# Set TENFERRO_SKIP_APT=1 to skip (e.g. when the packages are provided otherwise).
set -euo pipefail

PACKAGES=(
  build-essential
  cmake
  g++
  pkg-config
  libopenblas-dev
  liblapacke-dev
  libtbb-dev
  libfftw3-dev
  libgtest-dev
  libgmock-dev
  googletest
  libbenchmark-dev
  # The Python package (python/) and its tests: Debian's interpreter, NumPy, pybind11,
  # the DLPack header, pytest, and PyTorch for the DLPack exchange tests.
  python3-dev
  python3-numpy
  pybind11-dev
  libdlpack-dev
  python3-pytest
  python3-torch
)

# --tsan: also the clang toolchain for the ThreadSanitizer preset (.ci/run's TSan stage).
# --mpi: also Open MPI for the distributed einsum (tenferro::mpi, .ci/run's MPI stage).
for flag in "$@"; do
  case "${flag}" in
    --tsan) PACKAGES+=(clang libclang-rt-14-dev) ;;
    --mpi) PACKAGES+=(libopenmpi-dev openmpi-bin) ;;
    *) echo "install_deps: unknown flag ${flag} (known: --tsan --mpi)" >&2; exit 2 ;;
  esac
done

if [[ "${TENFERRO_SKIP_APT:-0}" == "1" ]]; then
  echo "install_deps: TENFERRO_SKIP_APT=1, skipping apt-get"
  exit 0
fi

# Nothing to do when every package is already installed (no network needed).
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install_deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "install_deps: installing: ${missing[*]}"

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install_deps: must run as root (or have sudo) to install packages" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${PACKAGES[@]}"
