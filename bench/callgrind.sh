#!/usr/bin/env bash
# Instructions per call of the fixed-cost cases, counted by callgrind (stable on a
# noisy machine). Runs each case at N=2000 and N=4000 and prints the difference / 2000.
# Usage: bench/callgrind.sh [build dir, default build/release]
set -euo pipefail
build="${1:-build/release}"
driver="${build}/bench/fixed_cost_driver"
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "${driver}" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
cases="${CASES:-entry/scoped_empty entry/held_open_close entry/in_scope add/held_into/2x2_f64 add/held/2x2_f64 reduce_sum/held/len1_f64 dot/held/into/2 einsum/held/binary_2x2 einsum/prepared/binary_2x2 graph/run_into/chain8_2x2}"
for c in ${cases}; do
  a=$(count "$c" 2000)
  b=$(count "$c" 4000)
  awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%-28s %8.1f instructions/call\n", c, (b - a) / 2000 }'
done
