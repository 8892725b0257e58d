#!/usr/bin/env bash
# Train MemSkill on LoCoMo with the paper's hyper-parameters and evaluate it, including the
# transfer evaluations. Needs an OpenAI-compatible server (see README.md in this folder).
#   MEMSKILL_URLS='["http://127.0.0.1:8000/v1"]' MEMSKILL_MODEL=meta-llama/Llama-3.3-70B-Instruct scripts/reproduce/locomo.sh
set -euo pipefail
# a relative MEMSKILL_REFERENCE is the caller's, not the repository root's
if [ -n "${MEMSKILL_REFERENCE:-}" ]; then
  MEMSKILL_REFERENCE="$(cd "$MEMSKILL_REFERENCE" && pwd)" || { echo "MEMSKILL_REFERENCE: no such folder" >&2; exit 1; }
fi
cd "$(dirname "$0")/../.."
URLS="${MEMSKILL_URLS:-[\"http://127.0.0.1:8000/v1\"]}"
MODEL="${MEMSKILL_MODEL:-meta-llama/Llama-3.3-70B-Instruct}"
RUN="${RUN_NAME:-locomo-$(date +%Y%m%d)}"
BIN=target/release/memskill
cargo build --release --bin memskill
common=(--set "executor.base_urls=$URLS" --set "executor.model=\"$MODEL\"")
# MEMSKILL_REFERENCE=/path/to/MemSkill: train from the reference's initial skills (written from
# that checkout by scripts/fidelity/reference-initial-bank.sh) instead of memskill's seed bank.
train_bank=()
if [ -n "${MEMSKILL_REFERENCE:-}" ]; then
  mkdir -p runs
  scripts/fidelity/reference-initial-bank.sh "$MEMSKILL_REFERENCE" runs/reference-initial.json
  train_bank=(--set "run.skill_bank=\"$PWD/runs/reference-initial.json\"")
fi

"$BIN" train --config configs/locomo.toml --run-name "$RUN" "${common[@]}" ${train_bank[@]+"${train_bank[@]}"}
"$BIN" eval --checkpoint "runs/$RUN" --dataset locomo --split test "${common[@]}"
# Transfer evaluations, when scripts/fetch-data.sh has put the files into the cache.
DATA="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/data"
# LongMemEval-S (cleaned): the 105 test questions of MemSkill's splits file, `_abs` skipped.
if [ -f "$DATA/longmemeval/longmemeval_s_cleaned.json" ]; then
  "$BIN" eval --checkpoint "runs/$RUN" --dataset longmemeval --split test "${common[@]}" \
    --set data.path=\"longmemeval/longmemeval_s_cleaned.json\" \
    --set data.splits_path=\"longmemeval/longmemeval_s_splits.json\" --set eval.top_k=5
fi
# HotpotQA-Modified eval_200 (Table) and eval_100 / eval_50 (Figure 3, context length).
for n in 200 100 50; do
  if [ -f "$DATA/hotpotqa/eval_$n.json" ]; then
    "$BIN" eval --checkpoint "runs/$RUN" --dataset hotpotqa --split all "${common[@]}" \
      --set data.path=\"hotpotqa/eval_$n.json\" --set eval.top_k=7
  fi
done
"$BIN" compare "runs/$RUN"
"$BIN" plot "runs/$RUN"
