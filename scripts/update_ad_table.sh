#!/usr/bin/env bash
# Regenerates the support table in docs/ad.md from the catalogue and the rule table
# (the table ad_rules_test prints and checks). Usage: scripts/update_ad_table.sh [build dir]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build/release}"
table=$(TENFERRO_PRINT_AD_TABLE=1 "${build}/tests/ad_rules_test" --gtest_filter='AdSupport.*' | grep '^|' || true)
[[ -n "${table}" ]] || { echo "update_ad_table: ${build}/tests/ad_rules_test printed no table" >&2; exit 1; }
TABLE="${table}" python3 - <<'PY'
import os
path = "docs/ad.md"
lines = open(path).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("| op | JVP | VJP |"))
end = start
while end < len(lines) and lines[end].startswith("|"):
    end += 1
lines[start:end] = os.environ["TABLE"].split("\n")
open(path, "w").write("\n".join(lines))
PY
echo "update_ad_table: docs/ad.md updated"
