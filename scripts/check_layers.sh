#!/usr/bin/env bash
# Layering check (DESIGN.md "Layers"): fails when an #include crosses a layer the wrong
# way, and prints every offending line. Run by ctest (test `layering`).
#   public headers  include/tenferro/  -> other public headers only
#   src/core        -> no op layer, backend, family or AD header
#   src/ops         -> no backend internals (src/cpu, src/cuda), no family or AD header
#   src/cpu, cuda   -> no family (einsum, linalg, fft) or AD header
#   src/einsum, linalg, fft -> no AD header
# Also: no CPU type in a public header other than cpu_backend.hpp (and the umbrella).
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

# No CPU type in a public header other than cpu_backend.hpp (the umbrella may include it).
hits=$(grep -nE '\bCpu[A-Z][A-Za-z]*|cpu_backend\.hpp' include/tenferro/*.hpp |
       grep -vE '^include/tenferro/(cpu_backend|tenferro)\.hpp:' |
       grep -vE '^[^:]+:[0-9]+:[[:space:]]*//')  # comments may name the CPU backend
if [[ -n "${hits}" ]]; then
  echo "layering: a public header other than cpu_backend.hpp names a CPU type:"
  echo "${hits}" | sed 's/^/  /'
  fail=1
fi

if [[ ${fail} -eq 0 ]]; then echo "layering: ok"; fi
exit ${fail}
