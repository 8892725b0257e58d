#!/usr/bin/env bash
# Train MemSkill on ALFWorld with the reference settings (configs/alfworld.toml) and evaluate it
# on valid_seen + valid_unseen. Needs an OpenAI-compatible server (see README.md in this folder).
#   MEMSKILL_URLS='["http://127.0.0.1:8000/v1"]' MEMSKILL_MODEL=meta-llama/Llama-3.3-70B-Instruct scripts/reproduce/alfworld.sh
# WORKERS bridge processes play games in parallel (about one CPU core each; default: nproc).
set -euo pipefail
# a relative MEMSKILL_REFERENCE is the caller's, not the repository root's
if [ -n "${MEMSKILL_REFERENCE:-}" ]; then
  MEMSKILL_REFERENCE="$(cd "$MEMSKILL_REFERENCE" && pwd)" || { echo "MEMSKILL_REFERENCE: no such folder" >&2; exit 1; }
fi
cd "$(dirname "$0")/../.."
URLS="${MEMSKILL_URLS:-[\"http://127.0.0.1:8000/v1\"]}"
MODEL="${MEMSKILL_MODEL:-meta-llama/Llama-3.3-70B-Instruct}"
RUN="${RUN_NAME:-alfworld-$(date +%Y%m%d)}"
WORKERS="${WORKERS:-$(nproc)}"
BIN=target/release/memskill
cargo build --release --bin memskill
scripts/alfworld/setup.sh
scripts/alfworld/unpack.sh
common=(--set "executor.base_urls=$URLS" --set "executor.model=\"$MODEL\"" --set "alfworld.workers=$WORKERS")
# MEMSKILL_REFERENCE=/path/to/MemSkill: train from the reference's initial skills (written from
# that checkout by scripts/fidelity/reference-initial-bank.sh) instead of memskill's seed bank.
train_bank=()
if [ -n "${MEMSKILL_REFERENCE:-}" ]; then
  mkdir -p runs
  scripts/fidelity/reference-initial-bank.sh "$MEMSKILL_REFERENCE" runs/reference-initial.json
  train_bank=(--set "run.skill_bank=\"$PWD/runs/reference-initial.json\"")
fi

# Expert trajectories of all training games, replayed once (cached; later runs skip this).
"$BIN" alfworld trajectories --workers "$WORKERS"
"$BIN" train --config configs/alfworld.toml --run-name "$RUN" "${common[@]}" ${train_bank[@]+"${train_bank[@]}"}
"$BIN" eval --checkpoint "runs/$RUN" --dataset alfworld --actor llm "${common[@]}"
"$BIN" plot "runs/$RUN"
