#!/usr/bin/env bash
# Runs every libFuzzer target of the `fuzz` preset for a bounded time (CI stage
# fuzz-run; docs/reliability.md, "Fuzzing"). Each target starts from its corpus in
# tests/fuzz/corpus/<target>/ (read only: new inputs go to a scratch directory under
# build/fuzz/), stops after SECONDS seconds, and fails the run on the first crash,
# sanitizer report, broken invariant, or an input running longer than TIMEOUT seconds
# (a hang). A crashing input is written to build/fuzz/artifacts/<target>-crash-<sha1>:
# fix the bug, then copy the input to tests/fuzz/corpus/<target>/crash-<what>, where the
# replay tests (ctest -L fuzz) keep it.
# The mutation sequence is fixed (-seed=FUZZ_SEED, default 1), so a run repeats what an
# earlier run of the same length did on the same corpus: CI explores what was checked
# before landing; set FUZZ_SEED=0 (a time-based seed) to explore afresh.
#   scripts/fuzz_run.sh [SECONDS [TARGET...]]   (default: 60 s, every target)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=(fuzz_einsum fuzz_views fuzz_external fuzz_ops)
TIMEOUT="${FUZZ_TIMEOUT:-10}"
BIN=build/fuzz/tests/fuzz
# ASan's leak check stays on (libFuzzer runs it at exit and on suspected leaks).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

mkdir -p build/fuzz/artifacts
fail=0
summary=()
for t in "${TARGETS[@]}"; do
  if [[ ! -x "${BIN}/${t}" ]]; then
    echo "fuzz_run: ${BIN}/${t} is missing (cmake --preset fuzz && cmake --build --preset fuzz --target ${t})"
    fail=1
    continue
  fi
  scratch="build/fuzz/corpus/${t}"
  mkdir -p "${scratch}"
  log="build/fuzz/${t}.log"
  echo "=== ${t}: ${SECONDS_EACH} s"
  "${BIN}/${t}" "${scratch}" "tests/fuzz/corpus/${t}" -max_total_time="${SECONDS_EACH}" -timeout="${TIMEOUT}" -seed="${FUZZ_SEED:-1}" \
    -rss_limit_mb=2048 -max_len=512 -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/${t}-" >"${log}" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "${log}" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "${log}" | tail -1)
  corpus=$(find "${scratch}" "tests/fuzz/corpus/${t}" -type f | wc -l)
  if [[ ${rc} -ne 0 ]]; then
    echo "--- ${t} FAILED (rc=${rc}); the end of ${log}:"
    tail -60 "${log}"
    fail=1
    summary+=("${t}=FAILED")
  else
    summary+=("${t}=ok(${runs:-?}execs,${cov:-cov: ?},corpus=${corpus})")
  fi
done
echo "fuzz_run: ${summary[*]}"
exit ${fail}
