#!/usr/bin/env bash
# Layering check (DESIGN.md "Layers"): fails when an #include crosses a layer the wrong
# way, and prints every offending line. Run by ctest (test `layering`).
#   public headers  include/tenferro/  -> other public headers only
#   src/core        -> no op layer, backend, family or AD header
#   src/ops         -> no backend internals (src/cpu, src/cuda), no family or AD header
#   src/cpu, cuda   -> no family (einsum, linalg, fft) or AD header
#   src/einsum, linalg, fft -> no AD header
#   src/capi (the C ABI) is the top layer: nothing else includes it
#   src/mpi (tenferro::mpi, optional) sits on the public API only: it includes no
#   internal header but its own; <mpi.h> and tenferro/mpi.hpp appear nowhere else
#   than src/mpi, include/tenferro/mpi.hpp and the MPI programs (tests/mpi,
#   examples/mpi_*.cpp, bench/bench_mpi_*.cpp, the install consumer's mpi_main.cpp)
# Also: no CPU type in a public header other than cpu_backend.hpp (and the umbrella), and
# no public op defined outside src/ops except in the files listed below.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
# check DIR FORBIDDEN-REGEX WHY: every `#include "X"` in DIR whose X matches the regex.
check() {
  local dir="$1" re="$2" why="$3" hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"(${re})" "${dir}" --include='*.hpp' --include='*.cpp' --include='*.def' 2>/dev/null)
  if [[ -n "${hits}" ]]; then
    echo "layering: ${dir} ${why}:"
    echo "${hits}" | sed 's/^/  /'
    fail=1
  fi
}

check include/tenferro '(core|ops|cpu|cuda|einsum|linalg|fft|ad|runtime)/' "includes an internal header (public headers include only tenferro/...)"
check src/core '(ops|cpu|cuda|einsum|linalg|fft|ad|runtime)/' "includes an op-layer, backend, family or AD header"
check src/ops '(cpu|cuda|einsum|linalg|fft|ad|runtime)/' "includes a backend internal, family or AD header"
check src/cpu '(einsum|linalg|fft|ad|runtime)/' "includes a family or AD header"
check src/cuda '(einsum|linalg|fft|ad|runtime)/' "includes a family or AD header"
for fam in src/einsum src/linalg src/fft; do
  check "${fam}" '(ad|runtime)/' "includes an AD header"
done
for dir in src/core src/ops src/cpu src/cuda src/einsum src/linalg src/fft src/ad src/runtime; do
  check "${dir}" 'capi/' "includes a C ABI header (src/capi is the top layer)"
done
check include/tenferro 'capi/' "includes a C ABI internal header"
check src/mpi '(core|ops|cpu|cuda|einsum|linalg|fft|ad|runtime|capi)/' "includes a core-library internal header (src/mpi uses the public API)"

# MPI stays in its component: nothing else includes <mpi.h> or tenferro/mpi.hpp.
hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](mpi\.h|tenferro/mpi\.hpp)[>"]' include src tests bench examples python \
         --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.c' --include='*.def' 2>/dev/null |
       grep -vE '^(src/mpi/|include/tenferro/mpi\.hpp:|tests/mpi/|tests/install/consumer/mpi_main\.cpp:|examples/mpi_[^/]*\.cpp:|bench/bench_mpi_[^/]*\.cpp:)')
if [[ -n "${hits}" ]]; then
  echo "layering: <mpi.h> or tenferro/mpi.hpp included outside the MPI component:"
  echo "${hits}" | sed 's/^/  /'
  fail=1
fi

# No CPU type in a public header other than cpu_backend.hpp (the umbrella may include it).
hits=$(grep -nE '\bCpu[A-Z][A-Za-z]*|cpu_backend\.hpp' include/tenferro/*.hpp |
       grep -vE '^include/tenferro/(cpu_backend|tenferro)\.hpp:' |
       grep -vE '^[^:]+:[0-9]+:[[:space:]]*//')  # comments may name the CPU backend
if [[ -n "${hits}" ]]; then
  echo "layering: a public header other than cpu_backend.hpp names a CPU type:"
  echo "${hits}" | sed 's/^/  /'
  fail=1
fi

# Public ops (catalogue names, allocating and _into forms, taking a Session&) are defined
# in src/ops. src/einsum/einsum.cpp is einsum's front end by choice (it parses and plans
# before any op runs, then calls the public ops). A new file defining a public op
# fails, and so does a listed file that no longer does.
front_ends_outside_ops="src/einsum/einsum.cpp"
names=$(sed -n 's/^TENFERRO_OP(\([a-z0-9_]*\),.*/\1/p' include/tenferro/op_catalog.def | paste -sd'|')
defs=$(grep -rnE "^(TENFERRO_API )?[A-Za-z:<>]+ (${names})(_into)?\(Session& " src --include='*.cpp' | grep -v '^src/ops/')
hits=""
while IFS= read -r line; do
  [[ -z "${line}" ]] && continue
  grep -qxF "${line%%:*}" <<<"$(tr ' ' '\n' <<<"${front_ends_outside_ops}")" || hits+="${line}"$'\n'
done <<<"${defs}"
if [[ -n "${hits}" ]]; then
  echo "layering: a public op is defined outside src/ops (define it in src/ops/<family>.cpp):"
  printf '%s' "${hits}" | sed 's/^/  /'
  fail=1
fi
for f in ${front_ends_outside_ops}; do
  if ! grep -q "^${f}:" <<<"${defs}"; then
    echo "layering: ${f} defines no public op any more: drop it from front_ends_outside_ops in scripts/check_layers.sh"
    fail=1
  fi
done

if [[ ${fail} -eq 0 ]]; then echo "layering: ok"; fi
exit ${fail}
