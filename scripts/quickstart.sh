#!/usr/bin/env bash
# The memskill main job in one command: fetch the model assets if missing, train on the
# quickstart config (LoCoMo cut down, local SmolLM2 executor, MiniLM encoder), evaluate the
# result on the quickstart test split, export the skill bank, print the results table.
# Uses the dev profile (dependencies built as in release; core, controller and executor
# optimised), sharing target/ with the tests: after scripts/test.sh nothing of burn or candle
# is compiled again (Cargo.toml's [profile.dev.build-override] keeps the binary's and the
# tests' dependency builds equal). No `-C target-cpu=native` is needed: the local backend
# decodes from SmolLM2's own Q4_1 blocks (local/src/qdot.rs), and the SIMD
# kernels (ours and candle's) are chosen at run time.
#   scripts/quickstart.sh [extra --set KEY=VALUE ...]
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
if [ ! -f "$CACHE/assets/all-MiniLM-L6-v2/model.safetensors" ] || \
   [ ! -f "$CACHE/assets/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  echo "== fetching model assets into $CACHE/assets"
  scripts/fetch-assets.sh
fi

if [ ! -s "$CACHE/data/locomo/locomo10.json" ]; then
  echo "== fetching LoCoMo into $CACHE/data"
  from=()
  # A checkout with the project's shared data folder beside it copies from there.
  [ -d ../shared/data/locomo ] && from=(--from ../shared/data)
  scripts/fetch-data.sh "${from[@]}" locomo
fi

RUNS="${RUNS_DIR:-runs}"
NAME="${RUN_NAME:-quickstart-$(date +%Y%m%d-%H%M%S)}"
sets=()
for s in "$@"; do sets+=(--set "$s"); done

echo "== building memskill (dev profile)"
cargo build --quiet --bin memskill
BIN="${CARGO_TARGET_DIR:-target}/debug/memskill"

echo "== training run $NAME (configs/quickstart.toml)"
"$BIN" train --config configs/quickstart.toml --run-name "$NAME" --runs-dir "$RUNS" "${sets[@]}"

echo "== evaluating the best checkpoint on the quickstart test split"
"$BIN" eval --checkpoint "$RUNS/$NAME" --split test "${sets[@]}"

"$BIN" plot "$RUNS/$NAME" > /dev/null || echo "(plots skipped)"
echo
echo "== done"
echo "skill bank exported to: $RUNS/$NAME/skills"
echo "evolution table:        $RUNS/$NAME/skills.md"
echo "metrics:                $RUNS/$NAME/metrics.jsonl (plots in $RUNS/$NAME/plots)"
# what the numbers above mean: the executor here is a 135M-parameter model that rarely writes
# the executor's action format, so few memories are written and F1 stays near 0 by design
python3 - "$RUNS/$NAME/metrics.jsonl" <<'PY' || true
import json, sys
ups = [json.loads(l) for l in open(sys.argv[1]) if '"type":"update"' in l.replace(" ", "")]
problems = sum(u.get("parse_problems", 0) for u in ups)
calls = sum(u.get("llm", {}).get("executor", {}).get("calls", 0) for u in ups)
print()
print(f"note: the executor was SmolLM2-135M (a test-sized local model); {problems} of its "
      f"{calls} executor replies had parse problems, so scores near 0 measure the plumbing, not the method.")
print("      For real numbers point the executor at a capable model: --set 'executor.backend=\"openai\"' "
      "--set 'executor.base_urls=[\"http://host:8000/v1\"]' --set 'executor.model=\"NAME\"' (docs/reproducing.md).")
PY
