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
# encoder_qwen3 needs the Qwen tokenizer asset (npm); fetched here when missing. A generator
# that writes no fixture (a missing asset) is listed after the table as skipped, with its reason:
# a row never drops out silently.
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
if [ -z "${MEMSKILL_QWEN3_TOKENIZER:-}" ] && [ ! -f "$CACHE/assets/qwen3-tokenizer/tokenizer.json" ]; then
  "$root/scripts/fetch-assets.sh" qwen3-tokenizer >&2 \
    || echo "warning: could not fetch the Qwen tokenizer (encoder_qwen3 will be skipped)" >&2
fi
skipped=()
for gen in "$root"/scripts/fidelity/gen_*.py; do
  name="$(basename "$gen" .py)"; name="${name#gen_}"
  echo "generating: $name" >&2
  st=0
  "$PY" "$gen" --reference "$REF" --out "$out" 2>"$out/.stderr" || st=$?
  cat "$out/.stderr" >&2
  [ "$st" = 0 ] || { echo "error: $name's generator failed (exit $st)" >&2; exit "$st"; }
  if ! ls "$out/$name"*.json >/dev/null 2>&1; then
    why="$(grep -h 'skipped' "$out/.stderr" | tail -1)"
    skipped+=("$name: skipped: ${why:-its generator wrote no fixture}")
  fi
done
rm -f "$out/.stderr"
cd "$root"
# The binary of the test build (`cargo test --workspace --no-run` builds it with the same
# features as the tests, so nothing is compiled twice); MEMSKILL_BIN overrides.
BIN="${MEMSKILL_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/memskill}"
if [ -z "${MEMSKILL_BIN:-}" ]; then
  cargo test --workspace --no-run --quiet >&2
fi
rc=0
"$BIN" fidelity check "$out" || rc=$?
for row in "${skipped[@]}"; do
  echo "$row"
done
if [ "$UPDATE" = "--update" ]; then
  cp "$out"/*.json "$root/trainer/tests/fixtures/fidelity/"
  echo "fixtures updated in trainer/tests/fixtures/fidelity" >&2
fi
exit "$rc"
