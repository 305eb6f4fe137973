#!/usr/bin/env bash
# Fails when a catalogue op (include/tenferro/op_catalog.def) is not named by any
# forward test under tests/{core,ops,linalg,fft,einsum} (comments do not count). Run by
# ctest (test `op_reference_tests`). This proves an op is exercised by a forward test
# file, not that the test compares it with a reference loop: the family suites do that
# (STYLE 8), and this check catches a new row added without any test at all.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

files=$(find tests/core tests/ops tests/linalg tests/fft tests/einsum -name '*.cpp' -o -name '*.hpp' | sort)
# Test code with // comments removed (a name in a comment is not a test).
code=$(cat ${files} | sed -e 's://.*$::')
missing=()
while read -r op; do
  grep -qE "(^|[^A-Za-z0-9_])${op}([^A-Za-z0-9_]|$)" <<<"${code}" || missing+=("${op}")
done < <(sed -n 's/^TENFERRO_OP(\([a-z0-9_]*\),.*/\1/p' include/tenferro/op_catalog.def)

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "op_reference_tests: catalogue ops with no forward test: ${missing[*]}"
  exit 1
fi
echo "op_reference_tests: every catalogue op is named by a forward test"
