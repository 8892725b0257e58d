#!/usr/bin/env bash
# Differential checks against the reference implementation (MemSkill, commit cda41f3).
# Runs the reference's own functions (from REFERENCE_CHECKOUT) on generated inputs, writes the
# fixtures, then runs ours on the same inputs and prints one table:
#   component | cases | agreeing | max abs difference
# Usage: scripts/fidelity/diff.sh REFERENCE_CHECKOUT [--update]
#   --update   also copy the fresh fixtures over the committed ones (trainer/tests/fixtures/fidelity)
# Needs: the venv from scripts/fidelity/setup.sh (made on first use), cargo.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
REF="${1:?usage: scripts/fidelity/diff.sh REFERENCE_CHECKOUT [--update]}"
REF="$(cd "$REF" && pwd)"
UPDATE="${2:-}"
[ -f "$REF/src/controller.py" ] || { echo "error: $REF does not look like a MemSkill checkout (no src/controller.py)" >&2; exit 2; }
PY="$("$root/scripts/fidelity/setup.sh" | tail -1)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# The PPO-update fixture carries whole weight sets: the committed one has 26 cases, a check
# run uses 300 (an --update run keeps the committed size).
if [ "$UPDATE" != "--update" ]; then
  export FIDELITY_PPO_CASES="${FIDELITY_PPO_CASES:-300}"
fi
for gen in "$root"/scripts/fidelity/gen_*.py; do
  echo "generating: $(basename "$gen")" >&2
  "$PY" "$gen" --reference "$REF" --out "$out"
done
cd "$root"
# The binary of the test build (`cargo test --workspace --no-run` builds it with the same
# features as the tests, so nothing is compiled twice); MEMSKILL_BIN overrides.
BIN="${MEMSKILL_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/memskill}"
if [ -z "${MEMSKILL_BIN:-}" ]; then
  cargo test --workspace --no-run --quiet >&2
fi
"$BIN" fidelity check "$out"
if [ "$UPDATE" = "--update" ]; then
  cp "$out"/*.json "$root/trainer/tests/fixtures/fidelity/"
  echo "fixtures updated in trainer/tests/fixtures/fidelity" >&2
fi
